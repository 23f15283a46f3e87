/* A cache file is a list plus its "pinkeeper" metadata; a fallback file is a list alone. Here the
 * metadata is checked, a static file reduced to what its signatures cover, and the reasons put in
 * messages that name the file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CACHE_FORMAT 1

static bool base64_digit(unsigned char c, unsigned *value) {
    if (c >= 'A' && c <= 'Z') *value = c - 'A';
    else if (c >= 'a' && c <= 'z') *value = c - 'a' + 26;
    else if (c >= '0' && c <= '9') *value = c - '0' + 52;
    else if (c == '+') *value = 62;
    else if (c == '/') *value = 63;
    else return false;
    return true;
}

bool pk_decode_fingerprint(const char *text, size_t length, unsigned char digest[32]) {
    if (length != 44 || text[43] != '=') return false;
    uint32_t accumulator = 0;
    unsigned bits = 0;
    size_t written = 0;
    for (size_t index = 0; index < 43; index++) {
        unsigned value;
        if (!base64_digit((unsigned char)text[index], &value)) return false;
        accumulator = (accumulator << 6) | value;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            digest[written++] = (unsigned char)(accumulator >> bits);
            accumulator &= (1u << bits) - 1;
        }
    }
    return written == 32; /* the last two bits are left over, unused */
}

/* A message naming the file: "<what> <path>: <reason>; <advice>", the reason's error freed. */
static pk_error *about_file(pk_error *reason, const char *what, const char *path) {
    if (reason->code == PK_ERROR_OUT_OF_MEMORY) return reason;
    char *escaped = pk_escaped(path, strlen(path));
    pk_error *error = pk_error_new(reason->code, "%s %s: %s; %s", what, escaped ? escaped : "?", reason->message,
                                   pk_error_advice(reason->code));
    free(escaped);
    pk_error_free(reason);
    return error;
}

static pk_error *parse_document(const char *bytes, size_t length, pk_json_document **document) {
    const char *reason;
    *document = pk_json_parse(bytes, length, &reason);
    if (*document != NULL) return NULL;
    if (strcmp(reason, "out of memory") == 0) return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
    return pk_error_new(PK_ERROR_NOT_JSON, "is not strict JSON (%s)", reason);
}

typedef struct metadata {
    int64_t format;
    const pk_json *store, *mode; /* strings; mode NULL when absent or null */
} metadata;

static pk_error *member_of_type(const pk_json *object, const char *key, pk_json_kind kind, const pk_json **value) {
    bool repeated;
    *value = pk_json_member_named(object, key, &repeated);
    if (repeated) return pk_error_new(PK_ERROR_INVALID_CONTENT, "has pinkeeper.%s more than once", key);
    if (*value != NULL && (*value)->kind == PK_JSON_NULL) *value = NULL;
    if (*value == NULL) return pk_error_new(PK_ERROR_INVALID_CONTENT, "lacks pinkeeper.%s", key);
    if ((*value)->kind != kind) return pk_error_new(PK_ERROR_INVALID_CONTENT, "has a pinkeeper.%s of the wrong type", key);
    return NULL;
}

static pk_error *integer_of(const pk_json *object, const char *key, int64_t *integer) {
    const pk_json *value;
    pk_error *error = member_of_type(object, key, PK_JSON_NUMBER, &value);
    if (error != NULL) return error;
    int64_t parsed = 0;
    bool integral = pk_json_integer(value, &parsed);
    if (!integral) return pk_error_new(PK_ERROR_INVALID_CONTENT, "has a pinkeeper.%s that is not a 64-bit integer", key);
    if (integer != NULL) *integer = parsed;
    return NULL;
}

static pk_error *read_metadata(const pk_json *root, metadata *found) {
    bool repeated;
    const pk_json *object = pk_json_member_named(root, "pinkeeper", &repeated);
    if (repeated) return pk_error_new(PK_ERROR_INVALID_CONTENT, "has the \"pinkeeper\" object more than once");
    if (object == NULL || object->kind == PK_JSON_NULL)
        return pk_error_new(PK_ERROR_MISSING_METADATA, "lacks the \"pinkeeper\" metadata object (not written by the daemon)");
    if (object->kind != PK_JSON_OBJECT) return pk_error_new(PK_ERROR_INVALID_CONTENT, "has a \"pinkeeper\" that is not an object");
    const pk_json *source;
    pk_error *error = integer_of(object, "format", &found->format);
    if (error == NULL) error = member_of_type(object, "store", PK_JSON_STRING, &found->store);
    if (error == NULL) error = member_of_type(object, "source", PK_JSON_STRING, &source);
    if (error == NULL) error = integer_of(object, "updated", NULL);
    if (error == NULL) error = integer_of(object, "nextUpdate", NULL);
    if (error != NULL) return error;
    found->mode = pk_json_member_named(object, "mode", &repeated);
    if (repeated) return pk_error_new(PK_ERROR_INVALID_CONTENT, "has pinkeeper.mode more than once");
    if (found->mode != NULL && found->mode->kind == PK_JSON_NULL) found->mode = NULL;
    if (found->mode != NULL && found->mode->kind != PK_JSON_STRING)
        return pk_error_new(PK_ERROR_INVALID_CONTENT, "has a pinkeeper.mode that is not a string");
    return NULL;
}

static bool mode_is(const pk_json *mode, const char *word) {
    return mode->length == strlen(word) && memcmp(mode->text, word, mode->length) == 0;
}

/* The format and mode this reader reads, and the store it was asked about. A mode it does not know
 * is a format it does not read: never read as static, never as challenge. */
static pk_error *check_metadata(const metadata *found, const char *store) {
    if (found->format != CACHE_FORMAT)
        return pk_error_new(PK_ERROR_UNSUPPORTED_FORMAT, "has pinkeeper.format %lld, and this reader reads format %d only",
                            (long long)found->format, CACHE_FORMAT);
    if (found->mode != NULL && !mode_is(found->mode, "static") && !mode_is(found->mode, "challenge")) {
        char *mode = pk_escaped(found->mode->text, found->mode->length);
        pk_error *error = pk_error_new(PK_ERROR_UNSUPPORTED_FORMAT, "has pinkeeper.mode '%s', which this reader does not know",
                                       mode ? mode : "?");
        free(mode);
        return error;
    }
    if (found->store->length != strlen(store) || memcmp(found->store->text, store, found->store->length) != 0) {
        char *other = pk_escaped(found->store->text, found->store->length);
        pk_error *error = pk_error_new(PK_ERROR_WRONG_STORE, "belongs to store '%s', not '%s'", other ? other : "?", store);
        free(other);
        return error;
    }
    return NULL;
}

/* A static list's signatures cover name, fingerprint and expires only: whoever could alter it in
 * transit could have set depths and domainsConfig, so they are dropped. */
static void keep_signed_only(pk_list *list) {
    size_t kept = 0;
    for (size_t index = 0; index < list->pin_count; index++) {
        if (list->pins[index].depth == 0) {
            list->pins[kept++] = list->pins[index];
        } else {
            free(list->pins[index].key);
        }
    }
    list->pin_count = kept;
    for (size_t index = 0; index < list->domain_count; index++) free(list->domains[index].key);
    free(list->domains);
    list->domains = NULL, list->domain_count = 0, list->has_domains = false;
}

static pk_error *cache_content(const pk_json *root, const char *store, pk_list *list) {
    pk_error *error = pk_parse_list(root, list);
    if (error != NULL) return error;
    metadata found = {0};
    error = read_metadata(root, &found);
    if (error == NULL) error = check_metadata(&found, store);
    if (error == NULL && found.mode != NULL && mode_is(found.mode, "static")) keep_signed_only(list);
    return error;
}

pk_error *pk_parse_cache_file(const char *bytes, size_t length, const char *path, const char *store, pk_list *list) {
    pk_json_document *document;
    *list = (pk_list){0};
    pk_error *error = parse_document(bytes, length, &document);
    if (error == NULL) {
        error = cache_content(pk_json_root(document), store, list);
        pk_json_free(document);
    }
    if (error == NULL) return NULL;
    pk_list_free(list);
    return about_file(error, "cache file", path);
}

/* A Wultra list the operator bundled: its domainsConfig is checked but not used, as the mobile
 * clients ignore it in fallback data. */
pk_error *pk_parse_fallback_file(const char *bytes, size_t length, const char *path, pk_list *list) {
    pk_json_document *document;
    *list = (pk_list){0};
    pk_error *error = parse_document(bytes, length, &document);
    if (error == NULL) {
        error = pk_parse_list(pk_json_root(document), list);
        pk_json_free(document);
    }
    if (error != NULL) {
        pk_list_free(list);
        return about_file(error, "fallback file", path);
    }
    for (size_t index = 0; index < list->domain_count; index++) free(list->domains[index].key);
    free(list->domains);
    list->domains = NULL, list->domain_count = 0, list->has_domains = false;
    return NULL;
}

static bool hex_pairs(const char *text, size_t length, bool colons, unsigned char digest[32]) {
    if (length != (colons ? 95u : 64u)) return false;
    for (size_t byte = 0; byte < 32; byte++) {
        const char *pair = text + byte * (colons ? 3 : 2);
        if (colons && byte < 31 && pair[2] != ':') return false;
        unsigned value = 0;
        for (int half = 0; half < 2; half++) {
            char c = pair[half];
            int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (digit < 0) return false;
            value = value << 4 | (unsigned)digit;
        }
        digest[byte] = (unsigned char)value;
    }
    return true;
}

PK_EXPORT int pk_parse_fingerprint(const char *text, unsigned char sha256[32]) {
    if (text == NULL) return 0;
    size_t length = strlen(text);
    unsigned char digest[32];
    bool parsed = pk_decode_fingerprint(text, length, digest) || hex_pairs(text, length, false, digest) ||
                  hex_pairs(text, length, true, digest);
    if (parsed) memcpy(sha256, digest, 32);
    return parsed;
}
