import CLibcrypto

/// OpenSSL frees its global state in an `atexit` handler unless told not to. The daemon's
/// threads (a libcurl driver idling until its next pass, a probe's handshake) may still be in
/// OpenSSL when `exit` runs that handler, and the exit the service manager waits for would then
/// crash (SIGSEGV instead of status 0). Process exit frees the memory anyway.
public enum OpenSSLExit {
    /// Call before anything else initialises OpenSSL: only the first initialisation takes options.
    public static func skipCleanup() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
