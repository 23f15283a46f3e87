import CLibssl

/// A client `SSL_CTX` for one trust setting: `caFile` alone, or OpenSSL's default trust. Loading
/// a trust store is most of a handshake's cost (Debian's 140 CA certificates take about 30 ms
/// of CPU), so one context serves every handshake that trusts the same CAs, on any thread:
/// OpenSSL 3 lets threads create `SSL` objects from a context that is no longer changed, and
/// its trust store locks itself.
public final class TLSClientContext: @unchecked Sendable {  // the SSL_CTX is never changed after init
    let context: OpaquePointer

    public init(caFile: String?) throws(TLSConnectError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSConnect.setupError("SSL_CTX_new") }
        guard pinkeeper_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            SSL_CTX_free(context)
            throw TLSConnect.setupError("SSL_CTX_set_min_proto_version")
        }
        _ = pinkeeper_SSL_CTX_set_max_cert_list(context, TLSConnect.maxCertificateListBytes)
        SSL_CTX_set_verify_depth(context, TLSConnect.maxChainDepth)
        if let caFile {
            guard SSL_CTX_load_verify_file(context, caFile) == 1 else {
                SSL_CTX_free(context)
                throw TLSConnectError(
                    kind: .caFile, description: "the CA file \(caFile) holds no usable CA certificate\(TLSConnect.drainErrors())")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                SSL_CTX_free(context)
                throw TLSConnect.setupError("SSL_CTX_set_default_verify_paths")
            }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)  // verified after the handshake, with the chain in hand
        self.context = context
    }

    deinit { SSL_CTX_free(context) }
}
