/* pinned-get-openssl: an HTTPS GET over OpenSSL with the pins of a pinkeeper store enforced.
 *
 *   pinned-get-openssl --cache-directory DIR --store ID [--cacert FILE] https://HOST[:PORT]/PATH
 *
 * Prints the response body and exits 0; prints one line saying why and exits 1 when the
 * connection is refused (by the chain, the host name or the pins), before anything is sent.
 * Build: cc pinned-get-openssl.c $(pkg-config --cflags --libs pinkeeper) -lssl -lcrypto */
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <pinkeeper.h>

#include "url.h"

static int connect_to(const request *wanted) {
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *found;
    if (getaddrinfo(wanted->host, wanted->port, &hints, &found) != 0) return -1;
    int descriptor = -1;
    for (struct addrinfo *address = found; address != NULL && descriptor < 0; address = address->ai_next) {
        descriptor = socket(address->ai_family, address->ai_socktype, address->ai_protocol);
        if (descriptor >= 0 && connect(descriptor, address->ai_addr, address->ai_addrlen) != 0) {
            close(descriptor);
            descriptor = -1;
        }
    }
    freeaddrinfo(found);
    return descriptor;
}

/* The host OpenSSL must verify: an IP address as an address, a name as a name (and its SNI). */
static int set_host(SSL *ssl, const char *host) {
    unsigned char address[16];
    if (inet_pton(AF_INET, host, address) == 1 || inet_pton(AF_INET6, host, address) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
    return SSL_set1_host(ssl, host) && SSL_set_tlsext_host_name(ssl, host);
}

static int fail(const char *why, SSL *ssl) {
    const char *refusal = ssl ? pk_ssl_refusal(ssl) : NULL;
    unsigned long error = ERR_peek_last_error();
    printf("refused: %s\n", refusal ? refusal : error ? ERR_reason_error_string(error) : why);
    return 1;
}

/* Sends the request and prints the body of the response. */
static int fetch(SSL *ssl, const request *wanted) {
    char head[1400], buffer[16384];
    int length = snprintf(head, sizeof head, "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n", wanted->path, wanted->host);
    if (SSL_write(ssl, head, length) != length) return fail("the request could not be sent", NULL);
    size_t used = 0;
    int got;
    char *response = NULL;
    while ((got = SSL_read(ssl, buffer, sizeof buffer)) > 0) {
        response = realloc(response, used + (size_t)got + 1);
        memcpy(response + used, buffer, (size_t)got);
        used += (size_t)got;
        response[used] = '\0';
    }
    char *body = response ? strstr(response, "\r\n\r\n") : NULL;
    if (body != NULL) fputs(body + 4, stdout);
    free(response);
    return body ? 0 : fail("no HTTP response", NULL);
}

int main(int argc, char **argv) {
    request wanted;
    if (!parse_arguments(argc, argv, &wanted)) return usage(argv[0]);
    pk_error *error = NULL;
    pk_reader *pins = pk_reader_open(wanted.cache_directory, wanted.store, NULL, NULL, 0, &error);
    if (pins == NULL) {
        printf("refused: %s\n", pk_error_message(error));
        pk_error_free(error);
        return 1;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    int loaded = wanted.cacert ? SSL_CTX_load_verify_file(ctx, wanted.cacert) : SSL_CTX_set_default_verify_paths(ctx);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (!loaded || !pk_ssl_ctx_enforce(ctx, pins)) return fail("the trust anchors or the pins could not be set up", NULL);
    int descriptor = connect_to(&wanted);
    if (descriptor < 0) return fail("no connection to the server", NULL);
    SSL *ssl = SSL_new(ctx);
    int status = !set_host(ssl, wanted.host) || !SSL_set_fd(ssl, descriptor) ? fail("the host could not be set", ssl)
                 : SSL_connect(ssl) != 1                                        ? fail("the handshake failed", ssl)
                                                                                : fetch(ssl, &wanted);
    SSL_free(ssl);
    close(descriptor);
    SSL_CTX_free(ctx);
    pk_reader_close(pins);
    return status;
}
