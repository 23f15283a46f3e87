// libssl (OpenSSL 3) for the daemon library's TLS client (probes and `pinkeeper validate
// --connect`): a real TLS handshake whose verified chain is checked against the pins. The
// PinKeeper reader library stays on libcrypto alone.
#ifndef PINKEEPER_CLIBSSL_SHIM_H
#define PINKEEPER_CLIBSSL_SHIM_H
#include <openssl/opensslv.h>
#if OPENSSL_VERSION_MAJOR < 3
#error "pinkeeper needs OpenSSL >= 3"
#endif
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// Swift does not import function-like macros; these expand to SSL_ctrl/SSL_CTX_ctrl calls.
// One typed wrapper each.
static inline int pinkeeper_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline int pinkeeper_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long pinkeeper_SSL_CTX_set_max_cert_list(SSL_CTX *ctx, long bytes) {
    return SSL_CTX_set_max_cert_list(ctx, bytes);
}
#endif
