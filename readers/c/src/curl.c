/* libcurl's CURLOPT_SSL_CTX_FUNCTION. Only libcurl's header is used: the library does not link
 * libcurl, and a program that uses this already does. */
#include <curl/curl.h>
#include <openssl/ssl.h>

#include "internal.h"

int pk_ssl_ctx_enforce_by_sni(SSL_CTX *ctx, pk_reader *reader);

/* libcurl verifies the host name itself after the handshake (it sets none in OpenSSL's
 * parameters), against the host it also sends as SNI: that name is H. It sends no SNI for an IP
 * address, so such a connection has no H and is refused. */
PK_EXPORT CURLcode pk_curl_ssl_ctx_function(CURL *curl, void *ssl_ctx, void *reader) {
    (void)curl;
    return pk_ssl_ctx_enforce_by_sni(ssl_ctx, reader) ? CURLE_OK : CURLE_SSL_CERTPROBLEM;
}
