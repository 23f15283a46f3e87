import CLibcrypto

/// OpenSSL without its clean-up at exit. By default its first use registers `OPENSSL_cleanup`
/// with `atexit`, and `exit` then runs it on the main thread while other threads may still be in
/// libcrypto: a probe's handshake that SIGTERM cancelled, a download driver closing its connections
/// (libcurl stays loaded and its driver outlives a pass by 10 s), `pinkeeper update` exiting
/// while a driver lingers. It frees the locks they are taking: `ProbeDaemonTests` saw the daemon
/// crash at stop in 5 of 15 runs, a pool thread in `pthread_rwlock_wrlock` on a freed lock while
/// the main thread was freeing OpenSSL's state. The kernel takes back the memory of an ending
/// process anyway.
public enum OpenSSLAtExit {
    /// Call first thing in `main`: only OpenSSL's first initialisation decides.
    public static func skipCleanup() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
