/* tls_probe: one TLS connection with pk_ssl_enforce (the per-SSL helper), for tls.py.
 *
 *   tls_probe ADDRESS PORT CACERT CACHE_DIR STORE (name HOST | lenient HOST | ip ADDRESS | none)
 *
 * name: SSL_set1_host (and SNI); lenient: the same with an application verify callback that lets
 * every error pass; ip: X509_VERIFY_PARAM_set1_ip_asc; none: no host at all. Sends
 * "GET / HTTP/1.0" after the handshake and prints "answered: <first line>"; prints "refused: …"
 * and exits 1 when the handshake fails. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "pinkeeper.h"

static int connected(const char *address, const char *port) {
    struct sockaddr_in6 six = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(port))};
    struct sockaddr_in four = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    bool is_six = inet_pton(AF_INET6, address, &six.sin6_addr) == 1;
    if (!is_six && inet_pton(AF_INET, address, &four.sin_addr) != 1) return -1;
    int descriptor = socket(is_six ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    int result = is_six ? connect(descriptor, (struct sockaddr *)&six, sizeof six)
                        : connect(descriptor, (struct sockaddr *)&four, sizeof four);
    return result == 0 ? descriptor : -1;
}

/* An application callback that lets every error pass, as some do for self-signed servers. */
static int accept_everything(int preverified, X509_STORE_CTX *store) {
    (void)preverified, (void)store;
    return 1;
}

static bool set_host(SSL *ssl, const char *mode, const char *host) {
    if (strcmp(mode, "lenient") == 0) SSL_set_verify(ssl, SSL_VERIFY_PEER, accept_everything);
    if (strcmp(mode, "name") == 0 || strcmp(mode, "lenient") == 0) return SSL_set1_host(ssl, host) && SSL_set_tlsext_host_name(ssl, host);
    if (strcmp(mode, "ip") == 0) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
    return strcmp(mode, "none") == 0;
}

static int exchange(SSL *ssl) {
    const char request[] = "GET / HTTP/1.0\r\nConnection: close\r\n\r\n";
    char answer[512] = "";
    if (SSL_write(ssl, request, (int)strlen(request)) <= 0) return 1;
    int got = SSL_read(ssl, answer, sizeof answer - 1);
    answer[got > 0 ? got : 0] = '\0';
    answer[strcspn(answer, "\r\n")] = '\0';
    printf("answered: %s\n", answer);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 7 || argc > 8) {
        fprintf(stderr, "usage: tls_probe ADDRESS PORT CACERT CACHE_DIR STORE (name HOST | lenient HOST | ip ADDRESS | none)\n");
        return 64;
    }
    pk_error *error = NULL;
    pk_reader *pins = pk_reader_open(argv[4], argv[5], NULL, NULL, 0, &error);
    if (pins == NULL) {
        printf("refused: %s\n", pk_error_message(error));
        pk_error_free(error);
        return 1;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_file(ctx, argv[3]);
    SSL *ssl = SSL_new(ctx);
    int descriptor = connected(argv[1], argv[2]);
    int status = 1;
    if (descriptor < 0 || !set_host(ssl, argv[6], argc == 8 ? argv[7] : "") || !pk_ssl_enforce(ssl, pins) || !SSL_set_fd(ssl, descriptor)) {
        printf("refused: the probe could not be set up\n");
    } else if (SSL_connect(ssl) != 1) {
        const char *refusal = pk_ssl_refusal(ssl);
        printf("refused: %s\n", refusal ? refusal : ERR_reason_error_string(ERR_peek_last_error()));
    } else {
        status = exchange(ssl);
    }
    SSL_free(ssl);
    if (descriptor >= 0) close(descriptor);
    SSL_CTX_free(ctx);
    pk_reader_close(pins);
    return status;
}
