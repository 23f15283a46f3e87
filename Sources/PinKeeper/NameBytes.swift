/// Names compared by their UTF-8 bytes, which is the order of their Unicode scalars (not
/// `String`'s canonical equivalence), with one `memcmp` over the strings' storage instead of a
/// walk through two UTF-8 views: checking the order of a 100,000-entry list compares as many names.
enum NameBytes {
    /// Negative, zero or positive as `a` sorts before, with or after `b`.
    static func compare(_ a: String, _ b: String) -> Int {
        RawBytes.withUTF8(a) { x in
            RawBytes.withUTF8(b) { y in
                // One storage (a name the decoder shared between entries): equal without reading it.
                x.baseAddress == y.baseAddress && x.count == y.count ? 0 : RawBytes.order(x, y)
            }
        }
    }

    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && compare(a, b) == 0
    }
}
