/* The reader beyond the table: versions noticed by identity (a new inode, an edit in place, a new
 * modification time), what sits at the path (symlink, FIFO, directory, a file too large), the
 * arguments, and questions from several threads while the file is replaced. Run under ASan and
 * UBSan, and again under ThreadSanitizer. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

#define NOW 1763770000
static const char *const pinned_a = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
static const char *const pinned_b = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";

static char directory[256], cache_path[300];

/* A cache file pinning fingerprint for api.example.com; padding makes versions of other sizes. */
static void cache_text(pk_text *out, const char *fingerprint, size_t padding) {
    char text[1024];
    int length = snprintf(text, sizeof text,
                          "{\"fingerprints\":[{\"name\":\"api.example.com\",\"fingerprint\":\"%s\",\"expires\":1766362000}],"
                          "\"pinkeeper\":{\"format\":1,\"store\":\"banking\",\"source\":\"https://pins.example.com/\","
                          "\"updated\":1,\"nextUpdate\":2},\"note\":\"%*s\"}",
                          fingerprint, (int)padding, "");
    *out = (pk_text){0};
    pk_text_append(out, text, (size_t)length);
}

static void replace_with(const char *fingerprint, size_t padding) {
    pk_text text;
    cache_text(&text, fingerprint, padding);
    publish(directory, "banking.json", text.bytes, text.length, 0644);
    pk_text_free(&text);
}

/* Rewrites the file in place: the same inode, as an editor that does not rename would. */
static void edit_in_place(const char *fingerprint, size_t padding, const struct timespec *modified) {
    pk_text text;
    cache_text(&text, fingerprint, padding);
    int descriptor = open(cache_path, O_WRONLY | O_TRUNC);
    CHECK(descriptor >= 0 && write(descriptor, text.bytes, text.length) == (ssize_t)text.length, "cannot edit %s", cache_path);
    if (modified != NULL) {
        struct timespec times[2] = {*modified, *modified};
        futimens(descriptor, times);
    }
    close(descriptor);
    pk_text_free(&text);
}

static pk_verdict ask(pk_reader *reader, const char *fingerprint) {
    unsigned char digest[32];
    pk_parse_fingerprint(fingerprint, digest);
    return pk_verdict_fingerprint(reader, "api.example.com", digest, 0, NOW);
}

static void expect_problem(pk_reader *reader, pk_error_code code, const char *label) {
    pk_error *problem = pk_reader_refresh(reader);
    CHECK(problem != NULL && pk_error_get_code(problem) == code, "%s: refresh reports %s, want %s", label,
          problem ? pk_error_message(problem) : "nothing", pk_error_code_name(code));
    CHECK(problem == NULL || strstr(pk_error_message(problem), "store 'banking'") != NULL, "%s: the message names no store", label);
    pk_error_free(problem);
}

static void versions_are_noticed(void) {
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    replace_with(pinned_a, 0);
    CHECK(ask(reader, pinned_a) == PK_TRUSTED, "the first version is read");
    replace_with(pinned_b, 0);
    CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "a renamed version of the same size is read (new inode)");
    edit_in_place(pinned_a, 3, NULL);
    CHECK(ask(reader, pinned_a) == PK_TRUSTED, "an edit in place of another size is read");
    struct timespec later = {.tv_sec = 2000000000, .tv_nsec = 5};
    edit_in_place(pinned_b, 3, &later);
    CHECK(ask(reader, pinned_b) == PK_TRUSTED, "an edit in place of the same size with a new mtime is read");
    unlink(cache_path);
    CHECK(ask(reader, pinned_b) == PK_EMPTY, "a removed file means no cached pins");
    pk_reader_close(reader);
}

static void what_sits_at_the_path(void) {
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    replace_with(pinned_a, 0);
    CHECK(ask(reader, pinned_a) == PK_TRUSTED, "the good version is read");
    char target[400];
    snprintf(target, sizeof target, "%s/elsewhere.json", directory);
    rename(cache_path, target);
    CHECK(symlink(target, cache_path) == 0, "cannot make a symlink");
    CHECK(ask(reader, pinned_a) == PK_TRUSTED, "a symlink leaves the last good version");
    expect_problem(reader, PK_ERROR_SYMLINK, "symlink");
    unlink(cache_path);
    CHECK(mkfifo(cache_path, 0644) == 0, "cannot make a FIFO");
    expect_problem(reader, PK_ERROR_NOT_REGULAR_FILE, "a FIFO (refused at once, not waited on)");
    unlink(cache_path);
    CHECK(mkdir(cache_path, 0755) == 0, "cannot make a directory");
    expect_problem(reader, PK_ERROR_NOT_REGULAR_FILE, "a directory");
    rmdir(cache_path);
    int descriptor = open(cache_path, O_WRONLY | O_CREAT, 0644);
    CHECK(descriptor >= 0 && ftruncate(descriptor, (off_t)PK_MAXIMUM_FILE_SIZE + 1) == 0, "cannot make a large file");
    close(descriptor);
    expect_problem(reader, PK_ERROR_TOO_LARGE, "a file over 64 MiB");
    CHECK(ask(reader, pinned_a) == PK_TRUSTED, "the last good version stays through every refusal");
    unlink(cache_path);
    unlink(target);
    pk_reader_close(reader);
}

static void arguments(void) {
    pk_error *error = NULL;
    CHECK(pk_reader_open(directory, "../etc/passwd", NULL, NULL, 0, &error) == NULL && error != NULL &&
              pk_error_get_code(error) == PK_ERROR_INVALID_ARGUMENT, "a store id that is a path is refused");
    pk_error_free(error);
    replace_with(pinned_a, 0);
    const char *none[1] = {NULL};
    pk_reader *admits_none = pk_reader_open(directory, "banking", NULL, none, 0, NULL);
    pk_reader *admits_any = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    CHECK(ask(admits_none, pinned_a) == PK_UNTRUSTED, "an empty list of expected names admits no name");
    CHECK(ask(admits_any, pinned_a) == PK_TRUSTED, "no list of expected names admits any name");
    unsigned char digest[32];
    pk_parse_fingerprint(pinned_a, digest);
    CHECK(pk_verdict_fingerprint(admits_any, NULL, digest, 0, NOW) == PK_UNTRUSTED, "no host is untrusted");
    CHECK(pk_verdict_fingerprint(admits_any, "", digest, 0, NOW) == PK_UNTRUSTED, "an empty host is untrusted");
    CHECK(pk_verdict_fingerprint(admits_any, "API.example.com.", digest, 0, NOW) == PK_TRUSTED, "the host is put in its one form");
    CHECK(strcmp(pk_version(), "0.1.0") == 0, "pk_version is %s", pk_version());
    pk_reader_close(admits_none);
    pk_reader_close(admits_any);
}

/* Threads ask while the file is replaced between two versions that both pin pinned_a: every
 * answer must be trusted, whatever version a question meets. */
static atomic_int replacing = 1;

static void *asker(void *argument) {
    pk_reader *reader = argument;
    int wrong = 0;
    for (int round = 0; round < 20000 || atomic_load(&replacing); round++)
        if (ask(reader, pinned_a) != PK_TRUSTED) wrong++;
    return (void *)(intptr_t)wrong;
}

static void concurrent_questions(void) {
    replace_with(pinned_a, 0);
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    pthread_t threads[4];
    for (int index = 0; index < 4; index++) pthread_create(&threads[index], NULL, asker, reader);
    for (int version = 0; version < 300; version++) replace_with(pinned_a, (size_t)(version % 7));
    atomic_store(&replacing, 0);
    for (int index = 0; index < 4; index++) {
        void *wrong;
        pthread_join(threads[index], &wrong);
        CHECK(wrong == NULL, "thread %d got %ld answers other than trusted", index, (long)(intptr_t)wrong);
    }
    pk_reader_close(reader);
    unlink(cache_path);
}

int main(void) {
    const char *temporary = getenv("TMPDIR");
    snprintf(directory, sizeof directory, "%s/pk-c-reader-XXXXXX", temporary ? temporary : "/tmp");
    if (mkdtemp(directory) == NULL) return 2;
    chmod(directory, 0755);
    snprintf(cache_path, sizeof cache_path, "%s/banking.json", directory);
    versions_are_noticed();
    what_sits_at_the_path();
    arguments();
    concurrent_questions();
    rmdir(directory);
    printf("reader: %d failures\n", failures);
    return failures ? 1 : 0;
}
