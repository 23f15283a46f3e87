/* The conformance table (Tests/Conformance/cases.json, format 2) played against the library:
 * every host spelling, every case's verdict, and the error an explicit re-read reports. Run under
 * AddressSanitizer and UndefinedBehaviorSanitizer by `make test-c`. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "runner.h"

static void play_spellings(const pk_json *rows) {
    for (size_t index = 0; index < rows->count; index++) {
        const pk_json *row = rows->items[index];
        const char *expected = string_member(row, "host");
        char *host = pk_canonical_host(string_member(row, "spelling"));
        bool agrees = expected == NULL ? host == NULL : host != NULL && strcmp(host, expected) == 0;
        CHECK(agrees, "host_spellings %s: got %s, want %s", string_member(row, "id"), host ? host : "(refused)",
              expected ? expected : "(refused)");
        pk_free(host);
    }
}

/* Every code of the table is one of the library's, with the same exit status. */
static void play_error_codes(const pk_json *codes) {
    for (size_t index = 0; index < codes->count; index++) {
        const char *name = codes->members[index].key;
        int64_t status = 0;
        pk_json_integer(member(codes->members[index].value, "status"), &status);
        bool known = false;
        for (int code = PK_ERROR_MISSING; code <= PK_ERROR_OUT_OF_MEMORY; code++) {
            if (strcmp(pk_error_code_name((pk_error_code)code), name) != 0) continue;
            pk_error error = {(pk_error_code)code, (char *)""};
            CHECK(pk_error_exit_status(&error) == status, "error code %s: status %d, want %lld", name, pk_error_exit_status(&error),
                  (long long)status);
            known = true;
        }
        CHECK(known, "error code %s is not one of the library's", name);
    }
}

static unsigned octal_member(const pk_json *object, const char *key, unsigned otherwise) {
    const char *text = string_member(object, key);
    return text ? (unsigned)strtoul(text, NULL, 8) : otherwise;
}

static void digest_of(const char *base64, unsigned char digest[32]) {
    if (!pk_decode_fingerprint(base64, strlen(base64), digest)) memset(digest, 0, 32);
}

static pk_verdict ask_pem(pk_reader *reader, const char *host, const char *pem, int64_t now) {
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *certificate = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    unsigned char *der = NULL;
    int length = certificate ? i2d_X509(certificate, &der) : -1;
    X509_free(certificate);
    if (length <= 0) return (pk_verdict)-1;
    const unsigned char *list[1] = {der};
    size_t lengths[1] = {(size_t)length};
    pk_verdict verdict = pk_verdict_der_chain(reader, host, list, lengths, 1, now);
    OPENSSL_free(der);
    return verdict;
}

static pk_verdict ask(pk_reader *reader, const pk_json *question, int64_t now) {
    const char *host = string_member(question, "name");
    const char *common_name = string_member(question, "common_name");
    const pk_json *chain = member(question, "verified_chain");
    if (string_member(question, "certificate_pem") != NULL) return ask_pem(reader, host, string_member(question, "certificate_pem"), now);
    if (chain != NULL) {
        unsigned char (*digests)[32] = calloc(chain->count + 1, 32);
        for (size_t index = 0; index < chain->count; index++) digest_of(chain->items[index]->text, digests[index]);
        pk_verdict verdict = pk_verdict_digests(reader, host, common_name, (const unsigned char (*)[32])digests, chain->count, now);
        free(digests);
        return verdict;
    }
    unsigned char digest[32];
    digest_of(string_member(question, "fingerprint"), digest);
    const pk_json *depth_value = member(question, "depth");
    int64_t depth = 0;
    if (depth_value != NULL) pk_json_integer(depth_value, &depth);
    if (common_name != NULL) return pk_verdict_digests(reader, host, common_name, (const unsigned char (*)[32])digest, 1, now);
    return pk_verdict_fingerprint(reader, host, digest, (uint64_t)depth, now);
}

/* The store's expected names: NULL without the member; otherwise its strings (maybe none). */
static const char **expected_names(const pk_json *test, size_t *count) {
    const pk_json *names = member(test, "expected_common_names");
    *count = 0;
    if (names == NULL) return NULL;
    const char **list = calloc(names->count + 1, sizeof *list);
    for (size_t index = 0; index < names->count; index++) list[index] = names->items[index]->text;
    *count = names->count;
    return list;
}

typedef struct scene {
    char dir[256], fallback[300];
    bool has_fallback;
    const char **expected;
    size_t expected_count;
    int64_t now;
} scene;

static void set_scene(scene *stage, const pk_json *test) {
    const char *temporary = getenv("TMPDIR");
    snprintf(stage->dir, sizeof stage->dir, "%s/pk-c-case-XXXXXX", temporary ? temporary : "/tmp");
    if (mkdtemp(stage->dir) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
    chmod(stage->dir, octal_member(test, "directory_mode", 0755));
    pk_text fallback = {0};
    stage->has_fallback = file_bytes(test, "fallback", &fallback) || member(test, "fallback_missing") != NULL;
    snprintf(stage->fallback, sizeof stage->fallback, "%s/%s", stage->dir,
             member(test, "fallback_missing") ? "no-such-fallback.json" : "fallback.json");
    unsigned fallback_mode = octal_member(test, "fallback_mode", 0644);
    if (fallback.bytes != NULL) publish(stage->dir, "fallback.json", fallback.bytes, fallback.length, fallback_mode);
    pk_text_free(&fallback);
    stage->expected = expected_names(test, &stage->expected_count);
    pk_json_integer(member(test, "now"), &stage->now);
}

static void clear_scene(scene *stage) {
    char path[400];
    chmod(stage->dir, 0755);
    const char *names[] = {"banking.json", "fallback.json"};
    for (size_t index = 0; index < 2; index++) {
        snprintf(path, sizeof path, "%s/%s", stage->dir, names[index]);
        unlink(path);
    }
    rmdir(stage->dir);
    free(stage->expected);
}

static void check_error(const char *id, const char *when, const pk_error *error, const char *expected) {
    const char *got = error ? pk_error_code_name(pk_error_get_code(error)) : NULL;
    bool agrees = expected == NULL ? got == NULL : got != NULL && strcmp(got, expected) == 0;
    CHECK(agrees, "%s: %s reports %s (%s), want %s", id, when, got ? got : "nothing", error ? pk_error_message(error) : "",
          expected ? expected : "nothing");
}

/* A hard link to the cache file, as a backup tool that links files makes (previous_cache_linked). */
static void link_cache(const char *dir) {
    char cache[400], backup[400];
    snprintf(cache, sizeof cache, "%s/banking.json", dir);
    snprintf(backup, sizeof backup, "%s/banking-backup.json", dir);
    CHECK(link(cache, backup) == 0, "cannot link %s", backup);
}

/* Plays one case as the table's README says: with previous_cache, that version is read first;
 * without, the reader is opened before the file is written. */
static void play_case(const pk_json *test) {
    const char *id = string_member(test, "id"), *expected = string_member(test, "expected");
    const char *expected_error = string_member(test, "expected_error");
    scene stage;
    set_scene(&stage, test);
    pk_text cache = {0}, previous = {0};
    bool has_cache = file_bytes(test, "cache", &cache), has_previous = file_bytes(test, "previous_cache", &previous);
    unsigned cache_mode = octal_member(test, "cache_mode", 0644);
    const pk_json *question = member(test, "question");
    if (has_previous) publish(stage.dir, "banking.json", previous.bytes, previous.length, 0644);
    const pk_json *linked = member(test, "previous_cache_linked");
    if (has_previous && linked != NULL && linked->kind == PK_JSON_TRUE) link_cache(stage.dir);
    pk_error *error = NULL;
    pk_reader *reader = pk_reader_open(stage.dir, "banking", stage.has_fallback ? stage.fallback : NULL, stage.expected,
                                       stage.expected_count, &error);
    if (strcmp(expected, "error") == 0) {
        CHECK(reader == NULL, "%s: the reader opened, want an error", id);
        check_error(id, "opening", error, expected_error);
    } else if (reader == NULL) {
        CHECK(false, "%s: the reader did not open: %s", id, pk_error_message(error));
    } else {
        if (has_previous) ask(reader, question, stage.now);
        char path[400];
        snprintf(path, sizeof path, "%s/banking.json", stage.dir);
        if (has_cache) publish(stage.dir, "banking.json", cache.bytes, cache.length, cache_mode);
        else unlink(path);
        pk_verdict verdict = ask(reader, question, stage.now);
        const char *got = pk_verdict_name(verdict);
        CHECK(got != NULL && strcmp(got, expected) == 0, "%s: verdict %s, want %s", id, got ? got : "(none)", expected);
        pk_error *problem = pk_reader_refresh(reader);
        check_error(id, "re-reading", problem, expected_error);
        pk_error_free(problem);
    }
    pk_error_free(error);
    pk_reader_close(reader);
    pk_text_free(&cache);
    pk_text_free(&previous);
    clear_scene(&stage);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: conformance CASES.json\n");
        return 64;
    }
    size_t length;
    char *bytes = slurp(argv[1], &length);
    const char *reason;
    pk_json_document *document = pk_json_parse(bytes, length, &reason);
    if (document == NULL) {
        fprintf(stderr, "%s: %s\n", argv[1], reason);
        return 2;
    }
    const pk_json *table = pk_json_root(document), *cases = member(table, "cases");
    int64_t format = 0;
    pk_json_integer(member(table, "format"), &format);
    CHECK(format == 2, "the table is of format %lld; this runner plays format 2", (long long)format);
    play_error_codes(member(table, "error_codes"));
    play_spellings(member(table, "host_spellings"));
    for (size_t index = 0; index < cases->count; index++) play_case(cases->items[index]);
    printf("conformance: %zu host spellings, %zu cases, %d failures\n", member(table, "host_spellings")->count, cases->count, failures);
    pk_json_free(document);
    free(bytes);
    return failures ? 1 : 0;
}
