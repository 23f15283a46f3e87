/* The decision every pinkeeper reader makes (docs/protocol.md, "the host decides"), in order:
 *  1. no usable H: untrusted, whatever N is;
 *  2. expected names, when set: untrusted unless H or N is one of them;
 *  3. domainsConfig (challenge mode only): trusted without pins only when it exempts H and N;
 *  4. every live pin under H or N is compared at its depth: a match is trusted;
 *  5. otherwise untrusted when some pin was compared, else empty (no pins at all included). */
#include <string.h>

#include "internal.h"

bool pk_admits(const pk_names *names, const char *const *expected, const size_t *expected_lengths,
               size_t expected_count, bool has_expected) {
    if (names->count == 0) return false;
    if (!has_expected) return true;
    for (size_t name = 0; name < names->count; name++)
        for (size_t index = 0; index < expected_count; index++)
            if (pk_same_folded(names->keys[name], names->lengths[name], expected[index], expected_lengths[index])) return true;
    return false;
}

/* The first entry listing the name decides; other names take sslPinningRequiredForUnlisted. */
static bool pinning_required(const pk_list *list, const char *key, size_t length) {
    for (size_t index = 0; index < list->domain_count; index++)
        if (pk_same_folded(list->domains[index].key, list->domains[index].key_length, key, length))
            return list->domains[index].required;
    return list->required_for_unlisted;
}

static bool exempts_every_name(const pk_snapshot *snapshot, const pk_names *names) {
    if (!snapshot->has_cache || !snapshot->cache.has_domains) return false;
    for (size_t name = 0; name < names->count; name++)
        if (pinning_required(&snapshot->cache, names->keys[name], names->lengths[name])) return false;
    return true;
}

/* Whether the pin applies to what was presented (its depth is there) and whether it matches. */
static void compare(const pk_pin *pin, const pk_question *question, bool *applies, bool *matched) {
    const unsigned char *presented = NULL;
    if (question->fingerprint != NULL) {
        if ((uint64_t)pin->depth == question->depth) presented = question->fingerprint;
    } else if ((uint64_t)pin->depth < question->chain_length) {
        presented = question->chain[pin->depth];
    }
    *applies = presented != NULL;
    *matched = presented != NULL && memcmp(presented, pin->fingerprint, 32) == 0;
}

pk_verdict pk_decide(const pk_snapshot *snapshot, const pk_names *names, const char *const *expected,
                     const size_t *expected_lengths, size_t expected_count, bool has_expected,
                     const pk_question *question, int64_t now) {
    if (!pk_admits(names, expected, expected_lengths, expected_count, has_expected)) return PK_UNTRUSTED;
    if (exempts_every_name(snapshot, names)) return PK_TRUSTED;
    size_t attempts = 0;
    for (size_t name = 0; name < names->count; name++) {
        size_t count;
        const pk_pin *pins = pk_snapshot_pins(snapshot, names->keys[name], names->lengths[name], &count);
        for (size_t index = 0; index < count; index++) {
            if (pins[index].expires < now) continue; /* expired once its second lies in the past */
            bool applies, matched;
            compare(&pins[index], question, &applies, &matched);
            if (matched) return PK_TRUSTED;
            if (applies) attempts++;
        }
    }
    return attempts > 0 ? PK_UNTRUSTED : PK_EMPTY;
}

PK_EXPORT const char *pk_verdict_name(pk_verdict verdict) {
    switch (verdict) {
    case PK_TRUSTED: return "trusted";
    case PK_UNTRUSTED: return "untrusted";
    case PK_EMPTY: return "empty";
    default: return NULL;
    }
}
