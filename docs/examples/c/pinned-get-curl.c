/* pinned-get-curl: an HTTPS GET with libcurl (OpenSSL backend) and the pins of a pinkeeper store
 * checked in its handshake.
 *
 *   pinned-get-curl --cache-directory DIR --store ID [--cacert FILE] https://HOST[:PORT]/PATH
 *
 * Prints the response body and exits 0; prints one line saying why and exits 1 when the
 * connection is refused, before the request is sent. HOST must be a name: libcurl sends no SNI
 * for an address, and the pins then have no host to decide by.
 * Build: cc pinned-get-curl.c $(pkg-config --cflags --libs pinkeeper libcurl) */
#include <curl/curl.h>
#include <pinkeeper.h>

#include "url.h"

typedef struct body {
    char *bytes;
    size_t length;
} body;

static size_t keep(char *data, size_t size, size_t count, void *argument) {
    body *received = argument;
    char *grown = realloc(received->bytes, received->length + size * count + 1);
    if (grown == NULL) return 0;
    memcpy(grown + received->length, data, size * count);
    received->bytes = grown, received->length += size * count;
    grown[received->length] = '\0';
    return size * count;
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
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *curl = curl_easy_init();
    char why[CURL_ERROR_SIZE] = "";
    body received = {0};
    curl_easy_setopt(curl, CURLOPT_URL, wanted.url);
    if (wanted.cacert) curl_easy_setopt(curl, CURLOPT_CAINFO, wanted.cacert);
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, pk_curl_ssl_ctx_function);
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, pins);
    curl_easy_setopt(curl, CURLOPT_SSL_SESSIONID_CACHE, 0L); /* every connection checked against the pins */
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &received);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, why);
    CURLcode result = curl_easy_perform(curl);
    if (result == CURLE_OK && received.bytes) fputs(received.bytes, stdout);
    else if (result != CURLE_OK) printf("refused: %s\n", why[0] ? why : curl_easy_strerror(result));
    free(received.bytes);
    curl_easy_cleanup(curl);
    curl_global_cleanup();
    pk_reader_close(pins);
    return result == CURLE_OK ? 0 : 1;
}
