/* What a cache or fallback file holds, type-checked: every member a reader knows has its one type
 * and appears once (whether or not this reader uses it); members no reader knows are ignored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The reason a document's content is refused, naming its member: an invalid-content error. */
#define INVALID(...) pk_error_new(PK_ERROR_INVALID_CONTENT, __VA_ARGS__)

typedef struct field {
    const pk_json *value; /* NULL when absent or null */
    pk_error *error;
} field;

/* The member key of object, absent when missing or null; an error when given twice. */
static field optional_member(const pk_json *object, const char *key, const char *path) {
    bool repeated;
    pk_json *value = pk_json_member_named(object, key, &repeated);
    if (repeated) return (field){NULL, INVALID("%s appears more than once", path)};
    if (value == NULL || value->kind == PK_JSON_NULL) return (field){NULL, NULL};
    return (field){value, NULL};
}

static field required_member(const pk_json *object, const char *key, const char *path, pk_json_kind kind) {
    field found = optional_member(object, key, path);
    if (found.error == NULL && found.value == NULL) found.error = INVALID("%s is missing", path);
    if (found.error == NULL && found.value->kind != kind && !(kind == PK_JSON_TRUE && found.value->kind == PK_JSON_FALSE))
        found.error = INVALID("%s is not %s", path,
                              kind == PK_JSON_STRING ? "a string" : kind == PK_JSON_ARRAY ? "an array"
                              : kind == PK_JSON_OBJECT ? "an object" : kind == PK_JSON_NUMBER ? "an integer" : "a boolean");
    return found;
}

/* An integer written without fraction or exponent that fits 64 bits ("-0" is 0). */
bool pk_json_integer(const pk_json *value, int64_t *integer) {
    if (value->kind != PK_JSON_NUMBER || memchr(value->text, '.', value->length) != NULL ||
        memchr(value->text, 'e', value->length) != NULL || memchr(value->text, 'E', value->length) != NULL)
        return false;
    char text[32];
    if (value->length >= sizeof text) return false;
    memcpy(text, value->text, value->length);
    text[value->length] = '\0';
    errno = 0;
    char *end;
    long long parsed = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *integer = parsed;
    return true;
}

static pk_error *integer_member(const pk_json *object, const char *key, const char *path, int64_t *integer) {
    field found = required_member(object, key, path, PK_JSON_NUMBER);
    if (found.error != NULL) return found.error;
    if (!pk_json_integer(found.value, integer)) return INVALID("%s is not a 64-bit integer", path);
    return NULL;
}

static pk_error *optional_string(const pk_json *object, const char *key, const char *path) {
    field found = optional_member(object, key, path);
    if (found.error == NULL && found.value != NULL && found.value->kind != PK_JSON_STRING)
        found.error = INVALID("%s is not a string", path);
    return found.error;
}

static pk_error *pin_depth(const pk_json *entry, const char *path, int64_t *depth) {
    char member_path[64];
    snprintf(member_path, sizeof member_path, "%s.depth", path);
    field found = optional_member(entry, "depth", member_path);
    *depth = 0;
    if (found.error != NULL || found.value == NULL) return found.error;
    if (!pk_json_integer(found.value, depth)) return INVALID("%s is not a 64-bit integer", member_path);
    if (*depth < 0) return INVALID("%s is negative", member_path);
    return NULL;
}

/* One entry of "fingerprints": name, fingerprint and expires required; depth, signature and key
 * optional. */
static pk_error *pin_entry(const pk_json *entry, size_t index, pk_pin *pin) {
    char path[48], member[64];
    snprintf(path, sizeof path, "fingerprints[%zu]", index);
    if (entry->kind != PK_JSON_OBJECT) return INVALID("%s is not an object", path);
    snprintf(member, sizeof member, "%s.name", path);
    field name = required_member(entry, "name", member, PK_JSON_STRING);
    if (name.error != NULL) return name.error;
    snprintf(member, sizeof member, "%s.fingerprint", path);
    field fingerprint = required_member(entry, "fingerprint", member, PK_JSON_STRING);
    if (fingerprint.error != NULL) return fingerprint.error;
    if (!pk_decode_fingerprint(fingerprint.value->text, fingerprint.value->length, pin->fingerprint))
        return INVALID("%s is not the standard base64 of a 32-byte SHA-256 digest", member);
    snprintf(member, sizeof member, "%s.expires", path);
    pk_error *error = integer_member(entry, "expires", member, &pin->expires);
    if (error == NULL) error = pin_depth(entry, path, &pin->depth);
    snprintf(member, sizeof member, "%s.signature", path);
    if (error == NULL) error = optional_string(entry, "signature", member);
    snprintf(member, sizeof member, "%s.key", path);
    if (error == NULL) error = optional_string(entry, "key", member);
    if (error != NULL) return error;
    pin->key = pk_folded_copy(name.value->text, name.value->length);
    pin->key_length = name.value->length;
    return pin->key ? NULL : pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
}

static pk_error *domain_entry(const pk_json *entry, size_t index, pk_domain *domain) {
    char path[64], member[96];
    snprintf(path, sizeof path, "domainsConfig.domains[%zu]", index);
    if (entry->kind != PK_JSON_OBJECT) return INVALID("%s is not an object", path);
    snprintf(member, sizeof member, "%s.name", path);
    field name = required_member(entry, "name", member, PK_JSON_STRING);
    if (name.error != NULL) return name.error;
    snprintf(member, sizeof member, "%s.sslPinningRequired", path);
    field required = required_member(entry, "sslPinningRequired", member, PK_JSON_TRUE);
    if (required.error != NULL) return required.error;
    domain->required = required.value->kind == PK_JSON_TRUE;
    domain->key = pk_folded_copy(name.value->text, name.value->length);
    domain->key_length = name.value->length;
    return domain->key ? NULL : pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
}

static pk_error *domains_config(const pk_json *config, pk_list *list) {
    if (config->kind != PK_JSON_OBJECT) return INVALID("domainsConfig is not an object");
    const char *flag_path = "domainsConfig.sslPinningRequiredForUnlisted";
    field flag = required_member(config, "sslPinningRequiredForUnlisted", flag_path, PK_JSON_TRUE);
    if (flag.error != NULL) return flag.error;
    field domains = required_member(config, "domains", "domainsConfig.domains", PK_JSON_ARRAY);
    if (domains.error != NULL) return domains.error;
    pk_error *error = optional_string(config, "key", "domainsConfig.key");
    if (error != NULL) return error;
    list->has_domains = true;
    list->required_for_unlisted = flag.value->kind == PK_JSON_TRUE;
    list->domains = calloc(domains.value->count ? domains.value->count : 1, sizeof *list->domains);
    if (list->domains == NULL) return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
    for (size_t index = 0; index < domains.value->count; index++) {
        error = domain_entry(domains.value->items[index], index, &list->domains[index]);
        if (error != NULL) return error;
        list->domain_count++;
    }
    return NULL;
}

pk_error *pk_parse_list(const pk_json *root, pk_list *list) {
    *list = (pk_list){0};
    if (root->kind != PK_JSON_OBJECT) return INVALID("the document is not an object");
    field entries = required_member(root, "fingerprints", "fingerprints", PK_JSON_ARRAY);
    if (entries.error != NULL) return entries.error;
    list->pins = calloc(entries.value->count ? entries.value->count : 1, sizeof *list->pins);
    if (list->pins == NULL) return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
    for (size_t index = 0; index < entries.value->count; index++) {
        pk_error *error = pin_entry(entries.value->items[index], index, &list->pins[index]);
        if (error != NULL) return error;
        list->pin_count++;
    }
    field config = optional_member(root, "domainsConfig", "domainsConfig");
    if (config.error != NULL || config.value == NULL) return config.error;
    return domains_config(config.value, list);
}

void pk_list_free(pk_list *list) {
    for (size_t index = 0; index < list->pin_count; index++) free(list->pins[index].key);
    for (size_t index = 0; index < list->domain_count; index++) free(list->domains[index].key);
    free(list->pins);
    free(list->domains);
    *list = (pk_list){0};
}
