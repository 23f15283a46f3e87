/// A static list's validators (`ETag`, `Last-Modified`: RFC 9110 §8.8) come from the server and,
/// through the state file, go back to it as `If-None-Match` and `If-Modified-Since`. libcurl sends
/// request headers as given, so a CR, LF or other control character in one would add headers of
/// the server's (or a state file editor's) choosing to the next request. Each is therefore checked
/// twice: before it is kept, and before it is sent (the state file may come from an older
/// pinkeeper, or have been edited by hand).
enum ValidatorFields {
    /// `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE`, `etagc = %x21 / %x23-7E / obs-text`: checked
    /// by bytes, so no control character, space, DEL or inner quote gets through, whatever Unicode
    /// makes of the text.
    static func isValidETag(_ value: String) -> Bool {
        var bytes = Array(value.utf8)[...]
        if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form RFC 9110 lets a server
    /// send, in exactly its shape: `HTTPDate` alone also takes extra spaces and signed numbers.
    /// An obsolete date form is not kept: the next request is then not conditional on the date,
    /// which costs a download (or, for the same bytes, the digest's comparison), never a wrong list.
    static func isValidLastModified(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == fixdateShape.count, HTTPDate.parse(value) != nil else { return false }
        return zip(bytes, fixdateShape).allSatisfy { byte, shape in
            switch shape {
            case UInt8(ascii: "0"): (0x30...0x39).contains(byte)
            case UInt8(ascii: "a"): true  // the day and month names, which HTTPDate checked
            default: byte == shape
            }
        }
    }

    private static let fixdateShape = Array("aaa, 00 aaa 0000 00:00:00 GMT".utf8)
}
