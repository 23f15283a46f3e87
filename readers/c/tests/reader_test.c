/* The reader beyond the table: versions noticed by identity (a new inode, an edit in place, a new
 * modification time, a held version linked elsewhere or renamed away), the second a held version
 * is relied on, another directory at the path, what sits at the path (symlink, FIFO, directory, a
 * file too large), the descriptors it holds, the file systems where it holds one (mounted as
 * root), the arguments, and questions from several threads while the file is replaced. Run under
 * ASan and UBSan, and again under ThreadSanitizer. */
#define _GNU_SOURCE /* unshare, renameat2 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* Uses the directory given from now on (this process only). */
static void move_to(const char *path) {
    snprintf(directory, sizeof directory, "%s", path);
    snprintf(cache_path, sizeof cache_path, "%s/banking.json", directory);
}

static void make_directory(const char *path) { CHECK(mkdir(path, 0755) == 0, "cannot make %s", path); }

static void pause_for(long milliseconds) {
    nanosleep(&(struct timespec){.tv_sec = milliseconds / 1000, .tv_nsec = (milliseconds % 1000) * 1000000}, NULL);
}

/* Waits past the current version's settling second, then asks: the first question reads the
 * version if the reader has not yet, the lookup of the next lets it rely on the version it holds
 * for a second (watch.c). Whether it does, asked at once (again, should this thread have stalled
 * for that second). */
static bool settle(pk_reader *reader, const char *fingerprint) {
    pause_for(1100);
    bool relied = false;
    for (int question = 0; question < 4 && !relied; question++) {
        CHECK(ask(reader, fingerprint) == PK_TRUSTED, "the settled version answers");
        relied = question > 0 && pk_reader_relies_on_held(reader);
    }
    return relied;
}

/* Whether the test directory's file system is one where a reader holds versions. */
static bool holds_here(void) {
    int here = open(directory, O_RDONLY | O_DIRECTORY);
    bool holds = pk_replacement_takes_a_link(here);
    close(here);
    return holds;
}

/* A lookup vouches for a held version for a second: without questions, it lapses. */
static void reliance_lapses(void) {
    replace_with(pinned_a, 0);
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    CHECK(!pk_reader_relies_on_held(reader), "a version just read is not relied on");
    CHECK(settle(reader, pinned_a) == holds_here(), "a settled version is relied on where versions are held");
    pause_for(1100);
    CHECK(!pk_reader_relies_on_held(reader), "a second without a lookup, and it is not");
    pk_reader_close(reader);
    unlink(cache_path);
}

/* A settled version is relied on while its links and change time stay. A hard link made to it
 * and a replacement, or a rename away and a new version, with no question between, leave its
 * link count as it was; its change time tells. A version linked elsewhere before it was read (the
 * table's previous_cache_linked, whose versions are too young to be relied on) loses a link. */
static void moved_then_replaced(void) {
    const char *moves[] = {"renamed away", "linked elsewhere", "linked before it was read"};
    char elsewhere[400];
    snprintf(elsewhere, sizeof elsewhere, "%s/banking-backup.json", directory);
    for (int move = 0; move < 3; move++) {
        replace_with(pinned_a, 0);
        if (move == 2) CHECK(link(cache_path, elsewhere) == 0, "cannot link %s", cache_path);
        pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
        CHECK(settle(reader, pinned_a) == holds_here(), "a settled version is relied on where versions are held");
        if (move < 2) CHECK((move ? link(cache_path, elsewhere) : rename(cache_path, elsewhere)) == 0, "cannot move %s", cache_path);
        replace_with(pinned_b, 0);
        CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "a settled version %s, then replaced, is seen replaced", moves[move]);
        CHECK(ask(reader, pinned_b) == PK_TRUSTED, "%s: the new version is read", moves[move]);
        unlink(elsewhere);
        pk_reader_close(reader);
        unlink(cache_path);
    }
}

/* Another directory put at the path is followed, as another file is: within the second a held
 * version is relied on, whether the reader was opened before the directory existed, with a file in
 * it, or with none yet. */
static void directory_replaced(int when) {
    const char *labels[] = {"opened before the directory", "opened with a file", "opened with no file yet"};
    char path[sizeof directory + 16], old[sizeof directory + 16], saved[sizeof directory];
    snprintf(path, sizeof path, "%s/later", directory);
    snprintf(old, sizeof old, "%s/later.old", directory);
    snprintf(saved, sizeof saved, "%s", directory);
    pk_reader *reader = when == 0 ? pk_reader_open(path, "banking", NULL, NULL, 0, NULL) : NULL;
    make_directory(path);
    move_to(path);
    if (when == 2) reader = pk_reader_open(path, "banking", NULL, NULL, 0, NULL);
    replace_with(pinned_a, 0);
    if (when == 1) reader = pk_reader_open(path, "banking", NULL, NULL, 0, NULL);
    if (when != 2) settle(reader, pinned_a);
    CHECK(rename(path, old) == 0 && mkdir(path, 0755) == 0, "cannot put another directory at %s", path);
    replace_with(pinned_b, 0);
    pause_for(1100);
    CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "%s: another directory at the path is followed", labels[when]);
    CHECK(ask(reader, pinned_b) == PK_TRUSTED, "%s: its version is read", labels[when]);
    pk_reader_close(reader);
    move_to(saved);
    char remove[2 * sizeof path + 16];
    snprintf(remove, sizeof remove, "rm -rf '%s' '%s'", path, old);
    CHECK(system(remove) == 0, "cannot remove %s", path);
}

static int open_descriptors(void) {
    DIR *listing = opendir("/proc/self/fd");
    int count = 0;
    while (listing != NULL && readdir(listing) != NULL) count++;
    if (listing != NULL) closedir(listing);
    return count;
}

/* One descriptor, the version in force's: every replaced version's is closed once a question has
 * seen the replacement, none is held without a file, and none after the reader is closed. */
static void descriptors_held(void) {
    int before = open_descriptors();
    replace_with(pinned_a, 0);
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    CHECK(ask(reader, pinned_a) == PK_TRUSTED, "the first version is read");
    int reading = open_descriptors();
    CHECK(reading == before + holds_here(), "an open reader holds %d descriptors, want %d", reading - before, holds_here());
    for (int version = 0; version < 50; version++) {
        replace_with(version % 2 ? pinned_a : pinned_b, 0);
        ask(reader, pinned_a);
    }
    CHECK(open_descriptors() == reading, "after 50 versions the reader holds %d descriptors", open_descriptors() - before);
    unlink(cache_path);
    CHECK(ask(reader, pinned_a) == PK_EMPTY, "a removed file means no cached pins");
    CHECK(open_descriptors() == before, "with no file the reader holds nothing");
    pk_reader_close(reader);
    CHECK(open_descriptors() == before, "a closed reader holds %d descriptors", open_descriptors() - before);
}

/* A replacement of a settled version, and how many descriptors the reader holds: 1 where the
 * version read is held, none where every question looks at the name. */
static void follows_replacement(const char *label, int held) {
    int before = open_descriptors();
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    CHECK(settle(reader, pinned_a) == (held == 1), "%s: the settled version is relied on only where it is held", label);
    CHECK(open_descriptors() - before == held, "%s: the reader holds %d descriptors, want %d", label, open_descriptors() - before, held);
    replace_with(pinned_b, 0);
    CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "%s: a replaced version is seen replaced", label);
    CHECK(ask(reader, pinned_b) == PK_TRUSTED, "%s: the new version is read", label);
    pk_reader_close(reader);
}

static void on_tmpfs(const char *base) {
    char path[sizeof directory + 16];
    snprintf(path, sizeof path, "%s/tmpfs", base);
    make_directory(path);
    CHECK(mount("pinkeeper-test", path, "tmpfs", 0, "mode=0755") == 0, "cannot mount tmpfs on %s", path);
    move_to(path);
    replace_with(pinned_a, 0);
    follows_replacement("tmpfs", 1);
}

/* An overlay whose first version sits in the lower layer: replacing it leaves that file as it was
 * (its links and change time), so nothing may be held there. */
static void on_overlay(const char *base) {
    char path[sizeof directory + 16], options[1200];
    const char *layers[] = {"lower", "upper", "work", "merged"};
    for (int index = 0; index < 4; index++) {
        snprintf(path, sizeof path, "%s/%s", base, layers[index]);
        make_directory(path);
    }
    snprintf(options, sizeof options, "lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", base, base, base);
    snprintf(path, sizeof path, "%s/lower", base);
    move_to(path);
    replace_with(pinned_a, 0);
    snprintf(path, sizeof path, "%s/merged", base);
    CHECK(mount("pinkeeper-test", path, "overlay", 0, options) == 0, "cannot mount an overlay on %s", path);
    move_to(path);
    follows_replacement("overlay, first version in the lower layer", 0);
}

/* A file system made in an image on a loop device and mounted at base/name; the test directory
 * moves there. False, with one line, where that cannot be done. */
static bool mount_image(const char *base, const char *name, const char *make) {
    char image[sizeof directory + 32], path[sizeof directory + 32], command[6 * sizeof path + 200];
    snprintf(image, sizeof image, "%s/%s.img", base, name);
    snprintf(path, sizeof path, "%s/%s", base, name);
    make_directory(path);
    snprintf(command, sizeof command, "truncate -s 320M '%s' && %s '%s' >/dev/null 2>&1 && mount -o loop '%s' '%s' && chmod 0755 '%s'",
             image, make, image, image, path, path);
    bool mounted = system(command) == 0;
    CHECK(mounted, "cannot make and mount %s (%s) at %s", name, make, path);
    if (mounted) move_to(path);
    return mounted;
}

/* ext2 with 128-byte inodes stamps whole seconds: a version renamed away and replaced within the
 * second it was written keeps its change time and links. Not yet settled, it is not relied on:
 * the new version is seen, and so is every later one. Tried again when the steps straddled a
 * second (the rename then stamps another time, and the case is not the one meant). */
static void on_whole_seconds(const char *base) {
    if (!mount_image(base, "ext2", "mkfs.ext2 -q -F -I 128")) return;
    char away[sizeof cache_path + 8];
    snprintf(away, sizeof away, "%s/away.json", directory);
    bool within_one_second = false;
    for (int attempt = 0; attempt < 3 && !within_one_second; attempt++) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        pause_for((1000000000 - now.tv_nsec) / 1000000 + 20); /* what follows, within one second */
        replace_with(pinned_a, 0);
        struct stat written, moved;
        pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
        for (int question = 0; question < 2; question++) CHECK(ask(reader, pinned_a) == PK_TRUSTED, "ext2: the first version is read");
        CHECK(stat(cache_path, &written) == 0 && rename(cache_path, away) == 0 && stat(away, &moved) == 0, "cannot rename %s", cache_path);
        replace_with(pinned_b, 0);
        within_one_second = written.st_ctim.tv_sec == moved.st_ctim.tv_sec;
        if (within_one_second) {
            CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "ext2: a version renamed away and replaced within its second is seen replaced");
            pause_for(1100);
            replace_with(pinned_b, 3);
            CHECK(ask(reader, pinned_a) == PK_UNTRUSTED && ask(reader, pinned_b) == PK_TRUSTED, "ext2: the version after it is read");
        }
        pk_reader_close(reader);
        unlink(away);
    }
    CHECK(within_one_second, "ext2: three attempts straddled a second");
}

/* XFS swaps two files (RENAME_EXCHANGE) without touching their times or links: a settled version
 * swapped out looks as it was, and is seen replaced once its second of reliance is over. */
static void on_xfs(const char *base) {
    if (!mount_image(base, "xfs", "mkfs.xfs -q -f")) return;
    replace_with(pinned_a, 0);
    pk_reader *reader = pk_reader_open(directory, "banking", NULL, NULL, 0, NULL);
    CHECK(settle(reader, pinned_a), "xfs: the settled version is relied on");
    pk_text text;
    cache_text(&text, pinned_b, 0);
    publish(directory, "swapped.json", text.bytes, text.length, 0644);
    pk_text_free(&text);
    char swapped[sizeof cache_path + 16];
    snprintf(swapped, sizeof swapped, "%s/swapped.json", directory);
    CHECK(renameat2(AT_FDCWD, swapped, AT_FDCWD, cache_path, RENAME_EXCHANGE) == 0, "cannot swap %s in", swapped);
    pause_for(1100);
    CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "xfs: a version swapped in is seen within a second");
    pk_reader_close(reader);
}

/* In a mount namespace of its own, which ends with this child. Returns the failures it found. */
static int mounted_file_systems(const char *base) {
    int before = failures;
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        perror("reader_test: a mount namespace of its own (root with CAP_SYS_ADMIN)");
        return 1;
    }
    on_tmpfs(base);
    on_overlay(base);
    if (system("losetup -f >/dev/null 2>&1") != 0) {
        printf("reader: SKIPPED ext2 and XFS: no free loop device\n");
        return failures - before;
    }
    on_whole_seconds(base);
    on_xfs(base);
    return failures - before;
}

static void file_systems(void) {
    if (geteuid() != 0) {
        printf("reader: SKIPPED the file systems: mounting tmpfs, an overlay, ext2 and XFS needs root\n");
        return;
    }
    char base[sizeof directory + 8];
    snprintf(base, sizeof base, "%s/mounts", directory);
    make_directory(base);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) _exit(mounted_file_systems(base) ? 1 : 0);
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the file systems' checks failed (status %d)", status);
    char remove[400];
    snprintf(remove, sizeof remove, "rm -rf '%s'", base);
    CHECK(system(remove) == 0, "cannot remove %s", base);
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
    replace_with(pinned_b, 0);
    CHECK(ask(reader, pinned_a) == PK_UNTRUSTED, "after the threads, the last version is read");
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
    reliance_lapses();
    moved_then_replaced();
    for (int when = 0; when < 3; when++) directory_replaced(when);
    descriptors_held();
    file_systems();
    what_sits_at_the_path();
    arguments();
    concurrent_questions();
    rmdir(directory);
    printf("reader: %d failures\n", failures);
    return failures ? 1 : 0;
}
