/* The questions a program asks: H put in its one form, N folded, then the decision against the
 * snapshot in force after one stat of the file. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "internal.h"

/* H and N as keys. H's one form is already folded (lower-case ASCII only). */
typedef struct asked {
    char buffer[256]; /* most hosts' one form fits: no allocation */
    pk_text host;
    char *common_name;
    pk_names names;
} asked;

static void ask_about(asked *question, const char *host, const char *common_name) {
    question->host = PK_TEXT_IN(question->buffer);
    question->common_name = NULL;
    question->names = (pk_names){0};
    if (host == NULL || !pk_host_one_form(host, strlen(host), &question->host) || question->host.failed) return;
    question->names.keys[0] = question->host.bytes;
    question->names.lengths[0] = question->host.length;
    question->names.count = 1;
    if (common_name == NULL) return;
    size_t length = strlen(common_name);
    question->common_name = pk_folded_copy(common_name, length);
    if (question->common_name == NULL) {
        question->names.count = 0; /* no memory: nothing decided, untrusted */
        return;
    }
    if (pk_same_folded(question->common_name, length, question->host.bytes, question->host.length)) return;
    question->names.keys[1] = question->common_name;
    question->names.lengths[1] = length;
    question->names.count = 2;
}

static void forget(asked *question) {
    pk_text_free(&question->host);
    free(question->common_name);
}

static pk_verdict answer(pk_reader *reader, const char *host, const char *common_name, const pk_question *question, int64_t now) {
    asked names;
    ask_about(&names, host, common_name);
    pk_verdict verdict = PK_UNTRUSTED; /* a refused or empty H is never looked up */
    if (names.names.count > 0) {
        const char *const *expected;
        const size_t *lengths;
        size_t count;
        bool given;
        pk_reader_expected(reader, &expected, &lengths, &count, &given);
        pk_snapshot *snapshot = pk_reader_current(reader);
        verdict = pk_decide(snapshot, &names.names, expected, lengths, count, given, question, now);
        pk_snapshot_release(snapshot);
    }
    forget(&names);
    return verdict;
}

PK_EXPORT pk_verdict pk_verdict_fingerprint(pk_reader *reader, const char *host, const unsigned char sha256[32], uint64_t depth,
                                            int64_t now) {
    pk_question question = {.fingerprint = sha256, .depth = depth};
    return answer(reader, host, NULL, &question, now);
}

PK_EXPORT pk_verdict pk_verdict_digests(pk_reader *reader, const char *host, const char *common_name,
                                        const unsigned char (*digests)[32], size_t count, int64_t now) {
    pk_question question = {.chain = digests, .chain_length = count};
    return answer(reader, host, common_name, &question, now);
}

PK_EXPORT int pk_reader_admits(pk_reader *reader, const char *host, const char *common_name) {
    asked names;
    ask_about(&names, host, common_name);
    const char *const *expected;
    const size_t *lengths;
    size_t count;
    bool given;
    pk_reader_expected(reader, &expected, &lengths, &count, &given);
    bool admitted = pk_admits(&names.names, expected, lengths, count, given);
    forget(&names);
    return admitted;
}

/* The digests of a chain and its leaf's common name; false when a certificate cannot be encoded. */
static bool chain_digests(STACK_OF(X509) *chain, unsigned char (**digests)[32], char **common_name) {
    int count = chain ? sk_X509_num(chain) : 0;
    *digests = calloc(count > 0 ? (size_t)count : 1, 32);
    *common_name = NULL;
    if (*digests == NULL) return false;
    for (int index = 0; index < count; index++) {
        unsigned int size = 32;
        if (X509_digest(sk_X509_value(chain, index), EVP_sha256(), (*digests)[index], &size) != 1 || size != 32) return false;
    }
    if (count > 0) *common_name = pk_common_name(sk_X509_value(chain, 0));
    return true;
}

PK_EXPORT pk_verdict pk_verdict_chain(pk_reader *reader, const char *host, struct stack_st_X509 *verified_chain, int64_t now) {
    unsigned char (*digests)[32];
    char *common_name;
    pk_verdict verdict = PK_UNTRUSTED;
    if (chain_digests(verified_chain, &digests, &common_name))
        verdict = pk_verdict_digests(reader, host, common_name, digests, (size_t)sk_X509_num(verified_chain), now);
    free(digests);
    free(common_name);
    return verdict;
}

PK_EXPORT pk_verdict pk_verdict_der_chain(pk_reader *reader, const char *host, const unsigned char *const *der,
                                          const size_t *lengths, size_t count, int64_t now) {
    STACK_OF(X509) *chain = sk_X509_new_null();
    bool parsed = chain != NULL && count > 0;
    for (size_t index = 0; parsed && index < count; index++) {
        const unsigned char *cursor = der[index];
        X509 *certificate = d2i_X509(NULL, &cursor, (long)lengths[index]);
        parsed = certificate != NULL && cursor == der[index] + lengths[index] && sk_X509_push(chain, certificate) > 0;
        if (!parsed) X509_free(certificate);
    }
    pk_verdict verdict = parsed ? pk_verdict_chain(reader, host, chain, now) : PK_UNTRUSTED;
    sk_X509_pop_free(chain, X509_free);
    return verdict;
}
