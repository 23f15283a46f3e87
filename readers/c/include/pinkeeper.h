/* libpinkeeper: the pinkeeper reader for C programs that link OpenSSL 3 (or libcurl built on it).
 *
 * A reader follows one store's cache file, published by the pinkeeper daemon as
 * <cache_dir>/<store>.json, plus the store's fallback pins and expected names, and answers
 * "may I trust this TLS peer?" as every pinkeeper reader does (docs/cache-format.md,
 * docs/protocol.md). Each question stats the file once and parses it again only when it changed;
 * a version that cannot be used leaves the last good one in force. Every function is safe to call
 * from several threads at once on one reader. The question that finds a new version parses it in
 * its own thread, which needs about 100 KiB of stack for a file nested 512 levels deep.
 *
 * The ABI is stable within soname libpinkeeper.so.0: opaque types, plain integers and strings.
 * OpenSSL types appear only as incomplete structs, so this header needs no OpenSSL header. */
#ifndef PINKEEPER_H
#define PINKEEPER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PK_VERSION_MAJOR 0
#define PK_VERSION_MINOR 1
#define PK_VERSION_PATCH 0

/* "0.1.0": the version of the library loaded at run time (the macros are the compiled-in one). */
const char *pk_version(void);

typedef struct pk_reader pk_reader;
typedef struct pk_error pk_error;

/* OpenSSL's own structs (X509, STACK_OF(X509), SSL, SSL_CTX), declared without its headers. */
struct x509_st;
struct stack_st_X509;
struct ssl_st;
struct ssl_ctx_st;

/* The answer to a question. Refuse the connection on both PK_UNTRUSTED and PK_EMPTY. */
typedef enum pk_verdict {
    PK_TRUSTED = 0,
    PK_UNTRUSTED = 1,
    PK_EMPTY = 2 /* no live pin for the names: refuse, and the store needs an update */
} pk_verdict;

/* "trusted", "untrusted" or "empty"; NULL for a value that is none of them. */
const char *pk_verdict_name(pk_verdict verdict);

/* Why a file cannot be used. Each has the code string all pinkeeper readers report
 * (pk_error_code_name) and a kind: unreadable (exit status 74) or invalid content (65). */
typedef enum pk_error_code {
    PK_ERROR_MISSING = 1,
    PK_ERROR_SYMLINK,
    PK_ERROR_NOT_REGULAR_FILE,
    PK_ERROR_IO,
    PK_ERROR_INSECURE_PERMISSIONS,
    PK_ERROR_TOO_LARGE,
    PK_ERROR_NOT_JSON,
    PK_ERROR_INVALID_CONTENT,
    PK_ERROR_MISSING_METADATA,
    PK_ERROR_UNSUPPORTED_FORMAT,
    PK_ERROR_WRONG_STORE,
    PK_ERROR_INVALID_ARGUMENT, /* a call's argument (e.g. a store id that is not one) */
    PK_ERROR_OUT_OF_MEMORY
} pk_error_code;

/* "missing", "symlink", "not-regular-file", "io-error", "insecure-permissions", "too-large",
 * "not-json", "invalid-content", "missing-metadata", "unsupported-format", "wrong-store",
 * "invalid-argument", "out-of-memory"; NULL for another value. */
const char *pk_error_code_name(pk_error_code code);
pk_error_code pk_error_get_code(const pk_error *error);
/* One line naming the store, the file and what to do; valid until pk_error_free. */
const char *pk_error_message(const pk_error *error);
/* 74 for an unreadable file, 65 for invalid content or an argument (sysexits.h). */
int pk_error_exit_status(const pk_error *error);
void pk_error_free(pk_error *error);

/* Opens a store's reader. cache_dir: NULL for /var/cache/pinkeeper. store: the store id
 * ([A-Za-z0-9][A-Za-z0-9._-]{0,63}). fallback_file: the store's fallback list, or NULL; it is
 * read now, and an unusable one fails the open. expected_names: NULL admits any name; otherwise
 * the count names listed (a non-NULL array with count 0 admits none). A missing cache file is no
 * error (every answer is empty unless fallback pins apply); an unusable one is not one either: it
 * is reported by pk_reader_refresh. Returns NULL and sets *error (when error is not NULL). */
pk_reader *pk_reader_open(const char *cache_dir, const char *store, const char *fallback_file,
                          const char *const *expected_names, size_t count, pk_error **error);
void pk_reader_close(pk_reader *reader);

/* Looks at the cache file now (reading it again) and returns why its current version cannot be
 * used (free it with pk_error_free), or NULL when it is in use or absent. */
pk_error *pk_reader_refresh(pk_reader *reader);

/* The cache file the reader follows; valid until pk_reader_close. */
const char *pk_reader_path(const pk_reader *reader);

/* Questions. host is H, the host the client connected to and had its TLS stack verify the
 * certificate for (put in its one form, pk_canonical_host; an empty or refused spelling is
 * answered PK_UNTRUSTED). now is the Unix time in seconds. */

/* One certificate's SHA-256 (of its DER bytes) presented at depth (0: the leaf) of the verified
 * chain; H alone decides. */
pk_verdict pk_verdict_fingerprint(pk_reader *reader, const char *host, const unsigned char sha256[32],
                                  uint64_t depth, int64_t now);

/* The chain the TLS stack verified, leaf first (never the certificates a server merely sent):
 * each pin is compared with the certificate at its depth. The leaf's most specific common name is
 * N, which can add pins to compare but never lift a requirement H has. */
pk_verdict pk_verdict_chain(pk_reader *reader, const char *host, struct stack_st_X509 *verified_chain, int64_t now);

/* The same from DER certificates, leaf first. */
pk_verdict pk_verdict_der_chain(pk_reader *reader, const char *host, const unsigned char *const *der,
                                const size_t *lengths, size_t count, int64_t now);

/* The same from SHA-256 digests, leaf first, with N given (or NULL: none known). */
pk_verdict pk_verdict_digests(pk_reader *reader, const char *host, const char *common_name,
                              const unsigned char (*digests)[32], size_t count, int64_t now);

/* N of a certificate: its subject's most specific (last) common name as UTF-8, to free with
 * pk_free; NULL when it has none (or one holding NUL). */
char *pk_certificate_common_name(const struct x509_st *certificate);

/* 1 when the store's expected names (if any) admit H or N, else 0: tells a refusal by the
 * expected names from a pin mismatch. 0 without a usable H. */
int pk_reader_admits(pk_reader *reader, const char *host, const char *common_name);

/* A SHA-256 fingerprint as people write it: padded standard base64 (44 characters), or 64 hex
 * digits, plain or as 32 colon-separated pairs (`openssl x509 -fingerprint -sha256`). Returns 1 and
 * fills sha256, or 0 for any other text. */
int pk_parse_fingerprint(const char *text, unsigned char sha256[32]);

/* H in its one form (docs/protocol.md): an IP literal as its canonical text, a DNS name without
 * one trailing dot, ASCII lower case, non-ASCII labels as Punycode A-labels. Returns a string to
 * free with pk_free, or NULL when the spelling is refused (or memory ran out). */
char *pk_canonical_host(const char *spelling);
void pk_free(void *memory);

/* TLS. These make a handshake fail, before any application data, unless the chain OpenSSL
 * verified is pinned for the host it verified it for: the name set with SSL_set1_host or the IP
 * address set in the X509_VERIFY_PARAM (put in its one form). Without such a host the handshake
 * fails: set one, and keep SSL_VERIFY_PEER. A resumed session skips verification, and with it
 * the pins: pk_ssl_ctx_enforce turns resumption off on the context; with pk_ssl_enforce, never
 * hand the SSL a saved session. The reader must outlive every SSL using it.
 * Return 1 on success, 0 on failure (OpenSSL's convention). */
int pk_ssl_ctx_enforce(struct ssl_ctx_st *ctx, pk_reader *reader);
int pk_ssl_enforce(struct ssl_st *ssl, pk_reader *reader);

/* Why the last handshake of ssl was refused by the pins: a verdict name and the host, e.g.
 * "untrusted: store 'banking' pins 'api.example.com', but not this certificate"; NULL when the
 * pins refused nothing on it. Valid while ssl lives. */
const char *pk_ssl_refusal(const struct ssl_st *ssl);

/* For libcurl (OpenSSL backend): curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION,
 * pk_curl_ssl_ctx_function) and CURLOPT_SSL_CTX_DATA set to the reader (include <curl/curl.h>
 * first, or <pinkeeper_curl.h>). libcurl checks the host name itself after the handshake, so the
 * host here is the SNI name libcurl sends: a DNS name. libcurl sends none for an IP address, and
 * such a connection is refused. The library uses libcurl's header only and does not link it. */
#ifdef CURLINC_CURL_H
CURLcode pk_curl_ssl_ctx_function(CURL *curl, void *ssl_ctx, void *reader);
#endif

#ifdef __cplusplus
}
#endif

#endif
