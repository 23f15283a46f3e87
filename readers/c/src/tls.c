/* The pins enforced inside OpenSSL's handshake: once OpenSSL has verified the chain and the host,
 * the verified chain must be pinned for that host, or the handshake fails before any application
 * data. The host is the one the stack verified (SSL_set1_host, or the IP address of the
 * X509_VERIFY_PARAM), never a name the certificate chose. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "internal.h"

typedef struct binding {
    pk_reader *reader;
    bool host_from_sni;               /* libcurl: it checks the SNI name itself after the handshake */
    SSL_verify_cb previous_callback;  /* pk_ssl_enforce: the application's own, still consulted */
} binding;

static int ctx_binding_index = -1, ssl_binding_index = -1, refusal_index = -1;
static pthread_once_t indices_once = PTHREAD_ONCE_INIT;

static void free_data(void *parent, void *data, CRYPTO_EX_DATA *ad, int index, long argl, void *argp) {
    (void)parent, (void)ad, (void)index, (void)argl, (void)argp;
    free(data);
}

static void make_indices(void) {
    ctx_binding_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_data);
    ssl_binding_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, free_data);
    refusal_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, free_data);
}

static bool indices_ready(void) {
    pthread_once(&indices_once, make_indices);
    return ctx_binding_index >= 0 && ssl_binding_index >= 0 && refusal_index >= 0;
}

/* Why the pins refused this SSL's handshake, kept for pk_ssl_refusal. host NULL: none verified. */
static void record_refusal(SSL *ssl, pk_verdict verdict, const char *store, const char *verified) {
    char text[1024];
    /* The host came from the application, maybe from a URL: escaped, it cannot forge a log line. */
    char *host = verified ? pk_escaped(verified, strlen(verified)) : NULL;
    if (verified != NULL && host == NULL) return;
    if (host == NULL)
        snprintf(text, sizeof text, "refused: store '%s': no host (or several) was verified; set one with SSL_set1_host or "
                                    "X509_VERIFY_PARAM_set1_ip_asc", store);
    else if (verdict == PK_EMPTY)
        snprintf(text, sizeof text, "empty: store '%s' has no valid pin for '%s'; run `pinkeeper update --store %s`", store, host, store);
    else
        snprintf(text, sizeof text, "untrusted: store '%s' does not pin this verified chain for '%s'", store, host);
    free(host);
    free(SSL_get_ex_data(ssl, refusal_index));
    SSL_set_ex_data(ssl, refusal_index, strdup(text));
}

/* The host OpenSSL verified the certificate for, as text (free it with OPENSSL_free); NULL when
 * none, or when several names were set (which one matched is not known). */
static char *verified_host(X509_STORE_CTX *store, SSL *ssl, bool host_from_sni) {
    X509_VERIFY_PARAM *parameters = X509_STORE_CTX_get0_param(store);
    const char *name = X509_VERIFY_PARAM_get0_host(parameters, 0);
    char *address = X509_VERIFY_PARAM_get1_ip_asc(parameters);
    if (X509_VERIFY_PARAM_get0_host(parameters, 1) != NULL || (name != NULL && address != NULL)) {
        OPENSSL_free(address);
        return NULL;
    }
    if (address != NULL) return address;
    if (name != NULL) return OPENSSL_strdup(name);
    const char *server_name = host_from_sni ? SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) : NULL;
    return server_name ? OPENSSL_strdup(server_name) : NULL;
}

/* Whether the verified chain in store is pinned for the host it was verified for; a refusal is
 * recorded on the SSL and set as the store's error. */
static bool pinned(X509_STORE_CTX *store, SSL *ssl, const binding *bound) {
    const char *store_id = pk_reader_store(bound->reader);
    char *host = verified_host(store, ssl, bound->host_from_sni);
    pk_verdict verdict = PK_UNTRUSTED;
    if (host == NULL) {
        record_refusal(ssl, verdict, store_id, NULL);
    } else {
        verdict = pk_verdict_chain(bound->reader, host, X509_STORE_CTX_get0_chain(store), (int64_t)time(NULL));
        if (verdict != PK_TRUSTED) record_refusal(ssl, verdict, store_id, host);
        OPENSSL_free(host);
    }
    if (verdict == PK_TRUSTED) return true;
    X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
    /* OpenSSL ignores a failed verification under SSL_VERIFY_NONE: the pins are not optional. */
    SSL_set_verify(ssl, SSL_get_verify_mode(ssl) | SSL_VERIFY_PEER, SSL_get_verify_callback(ssl));
    return false;
}

/* A chain accepted despite an error is no verified chain: the pins refuse it. */
static int unverified(X509_STORE_CTX *store, SSL *ssl, const binding *bound) {
    char text[512];
    snprintf(text, sizeof text, "refused: store '%s': the chain was accepted with an error (%s), so it was not verified",
             pk_reader_store(bound->reader), X509_verify_cert_error_string(X509_STORE_CTX_get_error(store)));
    free(SSL_get_ex_data(ssl, refusal_index));
    SSL_set_ex_data(ssl, refusal_index, strdup(text));
    SSL_set_verify(ssl, SSL_get_verify_mode(ssl) | SSL_VERIFY_PEER, SSL_get_verify_callback(ssl));
    return 0;
}

static SSL *ssl_of(X509_STORE_CTX *store) { return X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()); }

/* SSL_CTX's whole verification: OpenSSL's own first, then the pins. */
static int verify_then_pin(X509_STORE_CTX *store, void *argument) {
    (void)argument;
    SSL *ssl = ssl_of(store);
    const binding *bound = ssl ? SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ctx_binding_index) : NULL;
    int verified = X509_verify_cert(store);
    if (verified <= 0 || bound == NULL) return bound == NULL ? 0 : verified;
    /* An application's verify callback may have let an error pass: that chain was not verified. */
    if (X509_STORE_CTX_get_error(store) != X509_V_OK) return unverified(store, ssl, bound);
    return pinned(store, ssl, bound) ? verified : 0;
}

/* Turns resumption off: a resumed session skips verification, and with it the pins in force now. */
static void no_resumption(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

static int enforce_on_ctx(SSL_CTX *ctx, pk_reader *reader, bool host_from_sni) {
    if (ctx == NULL || reader == NULL || !indices_ready()) return 0;
    binding *bound = calloc(1, sizeof *bound);
    if (bound == NULL) return 0;
    bound->reader = reader, bound->host_from_sni = host_from_sni;
    free(SSL_CTX_get_ex_data(ctx, ctx_binding_index)); /* enforced twice: the last reader counts */
    if (!SSL_CTX_set_ex_data(ctx, ctx_binding_index, bound)) {
        free(bound);
        return 0;
    }
    SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx) | SSL_VERIFY_PEER, SSL_CTX_get_verify_callback(ctx));
    SSL_CTX_set_cert_verify_callback(ctx, verify_then_pin, NULL);
    no_resumption(ctx);
    return 1;
}

PK_EXPORT int pk_ssl_ctx_enforce(struct ssl_ctx_st *ctx, pk_reader *reader) { return enforce_on_ctx(ctx, reader, false); }

int pk_ssl_ctx_enforce_by_sni(SSL_CTX *ctx, pk_reader *reader) { return enforce_on_ctx(ctx, reader, true); }

/* An SSL's verify callback: the application's own (or OpenSSL's verdict) for each certificate,
 * then the pins at the leaf, which OpenSSL checks last, once the chain and the host are verified. */
static int verify_callback_then_pin(int preverified, X509_STORE_CTX *store) {
    SSL *ssl = ssl_of(store);
    const binding *bound = ssl ? SSL_get_ex_data(ssl, ssl_binding_index) : NULL;
    if (bound == NULL) return 0;
    int verdict = bound->previous_callback ? bound->previous_callback(preverified, store) : preverified;
    if (verdict <= 0 || X509_STORE_CTX_get_error_depth(store) != 0) return verdict;
    /* The application's callback may have let an error pass: that chain was not verified. */
    if (X509_STORE_CTX_get_error(store) != X509_V_OK) return unverified(store, ssl, bound);
    return pinned(store, ssl, bound) ? verdict : 0;
}

PK_EXPORT int pk_ssl_enforce(struct ssl_st *ssl, pk_reader *reader) {
    if (ssl == NULL || reader == NULL || !indices_ready()) return 0;
    binding *bound = calloc(1, sizeof *bound);
    if (bound == NULL) return 0;
    bound->reader = reader;
    bound->previous_callback = SSL_get_verify_callback(ssl);
    if (bound->previous_callback == verify_callback_then_pin) bound->previous_callback = NULL;
    free(SSL_get_ex_data(ssl, ssl_binding_index));
    if (!SSL_set_ex_data(ssl, ssl_binding_index, bound)) {
        free(bound);
        return 0;
    }
    SSL_set_verify(ssl, SSL_get_verify_mode(ssl) | SSL_VERIFY_PEER, verify_callback_then_pin);
    SSL_set_options(ssl, SSL_OP_NO_TICKET);
    return 1;
}

PK_EXPORT const char *pk_ssl_refusal(const struct ssl_st *ssl) {
    if (ssl == NULL || !indices_ready()) return NULL;
    return SSL_get_ex_data(ssl, refusal_index);
}
