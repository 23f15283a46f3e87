/* A reader: one store's cache file followed through its versions. Each question makes one fstat
 * of the version it last read, held open (watch.c), and looks at the path when that version
 * changed, is not relied on (a second at most after a lookup found it) or none is held; only the
 * question that finds a new version reads it, outside the lock, while the others answer from the
 * last good snapshot. A version that cannot be used leaves the last good one in force and is not
 * read again until it changes; a missing file means no cached pins. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

enum observed_kind { OBSERVED_NOTHING_YET, OBSERVED_MISSING, OBSERVED_FILE, OBSERVED_FAILURE };

typedef struct observation {
    enum observed_kind kind;
    pk_identity identity;
    int number; /* errno of a failure */
} observation;

struct pk_reader {
    char *path, *store;
    pk_list fallback;
    char **expected; /* folded */
    size_t *expected_lengths, expected_count;
    bool has_expected;
    pthread_mutex_t lock;
    pthread_cond_t settled; /* signalled when a refreshing thread is done */
    observation observed;   /* guarded by lock, as are the four below */
    pk_watch *watch;        /* the version observed, held open; NULL when none is */
    pk_snapshot *current;
    pk_error *problem;
    bool refreshing;
};

/* A lookup of the path, as every reader makes it: another directory put at the cache
 * directory's path is followed as readily as another file. */
static observation observe(pk_reader *reader) {
    struct stat status;
    if (lstat(reader->path, &status) == 0) return (observation){OBSERVED_FILE, pk_identity_of(&status), 0};
    if (errno == ENOENT || errno == ENOTDIR) return (observation){OBSERVED_MISSING, {0}, 0};
    return (observation){OBSERVED_FAILURE, {0}, errno};
}

static bool same_observation(const observation *a, const observation *b) {
    return a->kind == b->kind && a->number == b->number && pk_same_identity(&a->identity, &b->identity);
}

/* Every refusal names the store. */
static pk_error *for_store(const char *store, pk_error *error) {
    if (error == NULL || error->code == PK_ERROR_OUT_OF_MEMORY) return error;
    pk_error *named = pk_error_new(error->code, "store '%s': %s", store, error->message);
    pk_error_free(error);
    return named;
}

typedef struct state {
    observation observed;
    pk_snapshot *snapshot; /* retained */
    pk_error *problem;
    pk_watch *watch;
} state;

/* The state after reading the version seen; base (retained) is kept when it cannot be used. */
static state refreshed(pk_reader *reader, pk_snapshot *base, observation seen) {
    state next = {seen, base, NULL, NULL};
    if (seen.kind == OBSERVED_FAILURE) {
        next.problem = pk_error_new(PK_ERROR_IO, "store '%s': cache file %s cannot be examined: %s; %s", reader->store,
                                    reader->path, strerror(seen.number), pk_error_advice(PK_ERROR_IO));
        return next;
    }
    char *bytes = NULL;
    size_t length = 0;
    pk_identity identity = {0};
    int kept = -1;
    pk_error *error = seen.kind == OBSERVED_MISSING ? NULL
                                                    : pk_read_file("cache file", reader->path, false, &bytes, &length, &identity, &kept);
    if (kept >= 0) {
        /* What was read, usable or not, is the version a question compares with from now on. */
        next.observed = (observation){OBSERVED_FILE, identity, 0};
        next.watch = pk_watch_new(kept, &identity);
    }
    pk_list cache = {0};
    if (seen.kind == OBSERVED_FILE && error == NULL) error = pk_parse_cache_file(bytes, length, reader->path, reader->store, &cache);
    free(bytes);
    bool gone = seen.kind == OBSERVED_MISSING || (error != NULL && error->code == PK_ERROR_MISSING);
    if (error != NULL && !gone) {
        next.problem = for_store(reader->store, error);
        return next;
    }
    pk_error_free(error);
    pk_snapshot *fresh = pk_snapshot_new(gone ? NULL : &cache, &reader->fallback);
    if (fresh == NULL) {
        next.problem = pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
        return next;
    }
    pk_snapshot_release(base);
    next.snapshot = fresh;
    if (gone) next.observed = (observation){OBSERVED_MISSING, {0}, 0};
    return next;
}

static void install(pk_reader *reader, state next) {
    pk_snapshot_release(reader->current);
    pk_error_free(reader->problem);
    reader->current = next.snapshot;
    reader->problem = next.problem;
    reader->observed = next.observed;
    pk_watch_release(reader->watch);
    reader->watch = next.watch;
    reader->refreshing = false;
    pthread_cond_broadcast(&reader->settled);
}

/* Called with the lock held and refreshing set; returns with the lock held. */
static void read_version(pk_reader *reader, observation seen) {
    pk_snapshot *base = reader->current;
    pk_snapshot_retain(base);
    pthread_mutex_unlock(&reader->lock);
    state next = refreshed(reader, base, seen);
    pthread_mutex_lock(&reader->lock);
    install(reader, next);
}

/* The snapshot in force, retained, when the version last read is held and unchanged; else NULL. */
static pk_snapshot *current_if_unchanged(pk_reader *reader) {
    pthread_mutex_lock(&reader->lock);
    pk_watch *watch = reader->watch;
    if (watch == NULL) {
        pthread_mutex_unlock(&reader->lock);
        return NULL;
    }
    pk_watch_retain(watch);
    pk_snapshot *snapshot = reader->current;
    pk_snapshot_retain(snapshot);
    pthread_mutex_unlock(&reader->lock);
    bool unchanged = pk_watch_unchanged(watch);
    pk_watch_release(watch);
    if (unchanged) return snapshot;
    pk_snapshot_release(snapshot);
    return NULL;
}

pk_snapshot *pk_reader_current(pk_reader *reader) {
    pk_snapshot *unchanged = current_if_unchanged(reader);
    if (unchanged != NULL) return unchanged;
    pk_moment looked = pk_moment_now(); /* before the lookup: what it finds was there then or later */
    observation seen = observe(reader);
    pthread_mutex_lock(&reader->lock);
    if (reader->watch != NULL && seen.kind == OBSERVED_FILE && pk_watch_settled(reader->watch, &seen.identity, &looked))
        pk_watch_rely(reader->watch, &looked);
    if (!reader->refreshing && !same_observation(&seen, &reader->observed)) {
        reader->refreshing = true;
        read_version(reader, seen);
    }
    pk_snapshot *snapshot = reader->current;
    pk_snapshot_retain(snapshot);
    pthread_mutex_unlock(&reader->lock);
    return snapshot;
}

PK_EXPORT pk_error *pk_reader_refresh(pk_reader *reader) {
    observation seen = observe(reader);
    pthread_mutex_lock(&reader->lock);
    while (reader->refreshing) pthread_cond_wait(&reader->settled, &reader->lock);
    reader->refreshing = true;
    read_version(reader, seen);
    pk_error *problem = reader->problem ? pk_error_copy(reader->problem) : NULL;
    pthread_mutex_unlock(&reader->lock);
    return problem;
}

/* A store id as the daemon's configuration allows it: it names a file in the directory, never a
 * path. */
static bool valid_store_id(const char *store) {
    size_t length = strlen(store);
    if (length == 0 || length > 64) return false;
    for (size_t index = 0; index < length; index++) {
        char c = store[index];
        bool alphanumeric = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alphanumeric && (index == 0 || (c != '.' && c != '_' && c != '-'))) return false;
    }
    return true;
}

static bool keep_expected(pk_reader *reader, const char *const *names, size_t count) {
    reader->has_expected = names != NULL;
    if (names == NULL) return true;
    reader->expected = calloc(count ? count : 1, sizeof *reader->expected);
    reader->expected_lengths = calloc(count ? count : 1, sizeof *reader->expected_lengths);
    if (reader->expected == NULL || reader->expected_lengths == NULL) return false;
    for (size_t index = 0; index < count; index++) {
        size_t length = names[index] ? strlen(names[index]) : 0;
        reader->expected[index] = pk_folded_copy(names[index] ? names[index] : "", length);
        if (reader->expected[index] == NULL) return false;
        reader->expected_lengths[index] = length;
        reader->expected_count++;
    }
    return true;
}

static pk_error *read_fallback(pk_reader *reader, const char *path) {
    char *bytes = NULL;
    size_t length = 0;
    pk_identity identity;
    pk_error *error = pk_read_file("fallback file", path, true, &bytes, &length, &identity, NULL);
    if (error == NULL) error = pk_parse_fallback_file(bytes, length, path, &reader->fallback);
    free(bytes);
    return error;
}

static pk_error *set_up(pk_reader *reader, const char *cache_dir, const char *store, const char *fallback_file,
                        const char *const *expected_names, size_t count) {
    if (store == NULL || !valid_store_id(store))
        return pk_error_new(PK_ERROR_INVALID_ARGUMENT, "a store id is [A-Za-z0-9][A-Za-z0-9._-]{0,63}; check the store given");
    const char *directory = cache_dir ? cache_dir : "/var/cache/pinkeeper";
    size_t size = strlen(directory) + strlen(store) + 7;
    reader->path = malloc(size);
    reader->store = strdup(store);
    if (reader->path == NULL || reader->store == NULL || !keep_expected(reader, expected_names, count))
        return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
    snprintf(reader->path, size, "%s/%s.json", directory, store);
    if (fallback_file != NULL) {
        pk_error *error = read_fallback(reader, fallback_file);
        if (error != NULL) return error;
    }
    reader->current = pk_snapshot_new(NULL, &reader->fallback);
    if (reader->current == NULL) return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
    return NULL;
}

PK_EXPORT pk_reader *pk_reader_open(const char *cache_dir, const char *store, const char *fallback_file,
                                    const char *const *expected_names, size_t count, pk_error **error) {
    pk_reader *reader = calloc(1, sizeof *reader);
    if (reader == NULL) {
        if (error) *error = pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&reader->lock, NULL);
    pthread_cond_init(&reader->settled, NULL);
    pk_error *failure = set_up(reader, cache_dir, store, fallback_file, expected_names, count);
    if (failure != NULL) {
        if (failure->code != PK_ERROR_INVALID_ARGUMENT) failure = for_store(store, failure);
        if (error) *error = failure; else pk_error_free(failure);
        pk_reader_close(reader);
        return NULL;
    }
    /* The first version is read now: otherwise questions asked while the first of them reads it
     * would answer from no version at all. Why it cannot be used is kept for pk_reader_refresh. */
    pk_error_free(pk_reader_refresh(reader));
    if (error) *error = NULL;
    return reader;
}

PK_EXPORT void pk_reader_close(pk_reader *reader) {
    if (reader == NULL) return;
    pk_snapshot_release(reader->current);
    pk_watch_release(reader->watch);
    pk_error_free(reader->problem);
    pk_list_free(&reader->fallback);
    for (size_t index = 0; index < reader->expected_count; index++) free(reader->expected[index]);
    free(reader->expected);
    free(reader->expected_lengths);
    free(reader->path);
    free(reader->store);
    pthread_mutex_destroy(&reader->lock);
    pthread_cond_destroy(&reader->settled);
    free(reader);
}

PK_EXPORT const char *pk_reader_path(const pk_reader *reader) { return reader->path; }

const char *pk_reader_store(const pk_reader *reader) { return reader->store; }

bool pk_reader_relies_on_held(pk_reader *reader) {
    pk_snapshot *snapshot = current_if_unchanged(reader);
    pk_snapshot_release(snapshot);
    return snapshot != NULL;
}

/* The expected names, for verdict.c. */
void pk_reader_expected(const pk_reader *reader, const char *const **names, const size_t **lengths, size_t *count, bool *given) {
    *names = (const char *const *)reader->expected;
    *lengths = reader->expected_lengths;
    *count = reader->expected_count;
    *given = reader->has_expected;
}
