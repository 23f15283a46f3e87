/* libFuzzer target: any bytes as a cache file, a fallback file and a host spelling. The parser must
 * refuse or accept without a fault (the sanitizers watch), and what it accepts must hold only
 * checked values: 32-byte digests, depths of 0 or more, names and keys of the length stated. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void check_list(const pk_list *list) {
    for (size_t index = 0; index < list->pin_count; index++) {
        if (list->pins[index].depth < 0 || strlen(list->pins[index].key) > list->pins[index].key_length) abort();
    }
    for (size_t index = 0; index < list->domain_count; index++)
        if (list->domains[index].key == NULL) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pk_list list;
    pk_error *error = pk_parse_cache_file((const char *)data, size, "fuzz.json", "banking", &list);
    if (error == NULL) {
        check_list(&list);
        pk_list_free(&list);
    }
    pk_error_free(error);
    error = pk_parse_fallback_file((const char *)data, size, "fuzz-fallback.json", &list);
    if (error == NULL) pk_list_free(&list);
    pk_error_free(error);
    char *spelling = malloc(size + 1);
    if (spelling == NULL) return 0;
    memcpy(spelling, data, size);
    spelling[size] = '\0';
    char *host = pk_canonical_host(spelling);
    /* The one form is a fixed point: it is its own one form. */
    if (host != NULL) {
        char *again = pk_canonical_host(host);
        if (again == NULL || strcmp(again, host) != 0) abort();
        pk_free(again);
    }
    pk_free(host);
    free(spelling);
    return 0;
}
