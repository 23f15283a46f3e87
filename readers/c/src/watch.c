/* The version of the cache file a reader last read, held open, so that a question can learn with
 * one fstat of its descriptor that no other version has taken the path: a lookup of the path costs
 * more than twice as much, and was most of a question's cost.
 *
 * Why that is enough: renaming a new version over the name takes a link from the old one and sets
 * its change time; so does removing it; linking it elsewhere adds a link, renaming it away sets
 * its change time; an edit in place moves its size or times. So while the
 * held version's identity, link count and change time are as they were when it was read, the name
 * mostly still leads to it. Not always: within the clock tick of the version's own last change (a
 * second on file systems with whole-second times, a jiffy before Linux 6.13) a change keeps the
 * change time; XFS swaps two files (RENAME_EXCHANGE) without touching either; times clamped at a
 * file system's limit (2038 without 64-bit times) stop moving; a clock set back can repeat one.
 *
 * So the held version is relied on only for a second after a lookup of the path found it there,
 * and only when that lookup began a second or more after the version's change time (git's index
 * calls a file changed within its own tick "racily clean"). The daemon's rename over the name is
 * seen at the next question whatever the clocks do (the link count drops); anything else within a
 * second, by the next lookup of the path (another directory put at the path too), except what no
 * lookup shows either: an edit in place that keeps the size, in the clock tick of the version's
 * last change (a limit of every reader's check; the daemon never edits in place).
 *
 * Only on the local file systems listed below. On any other nothing is held and every question
 * looks at the name: NFS renames a replaced file that is still open instead of removing it (its
 * link count stays), an overlay leaves the lower layer's file untouched. */
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* How long a lookup of the name vouches for the held version. */
#define PK_RELIED_NANOSECONDS 1000000000LL

struct pk_watch {
    atomic_size_t references;
    atomic_int_least64_t relied_until; /* CLOCK_MONOTONIC_COARSE ns; 0: no lookup vouched for it yet */
    int descriptor;
    pk_identity identity;
};

static int64_t nanoseconds(const struct timespec *time) { return (int64_t)time->tv_sec * 1000000000LL + time->tv_nsec; }

pk_moment pk_moment_now(void) {
    struct timespec wall, steady;
    clock_gettime(CLOCK_REALTIME_COARSE, &wall);
    clock_gettime(CLOCK_MONOTONIC_COARSE, &steady);
    return (pk_moment){wall, nanoseconds(&steady)};
}

pk_identity pk_identity_of(const struct stat *status) {
    return (pk_identity){(uint64_t)status->st_dev,       (uint64_t)status->st_ino,        (int64_t)status->st_size,
                         (int64_t)status->st_mtim.tv_sec, (int64_t)status->st_mtim.tv_nsec, (uint64_t)status->st_nlink,
                         (int64_t)status->st_ctim.tv_sec, (int64_t)status->st_ctim.tv_nsec};
}

bool pk_same_identity(const pk_identity *a, const pk_identity *b) {
    return a->device == b->device && a->inode == b->inode && a->size == b->size && a->seconds == b->seconds &&
           a->nanoseconds == b->nanoseconds && a->links == b->links && a->change_seconds == b->change_seconds &&
           a->change_nanoseconds == b->change_nanoseconds;
}

bool pk_replacement_takes_a_link(int descriptor) {
    struct statfs system;
    if (fstatfs(descriptor, &system) != 0) return false;
    switch ((unsigned long)system.f_type) {
    case EXT4_SUPER_MAGIC: /* also ext2 and ext3 */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
        return true;
    default:
        return false;
    }
}

pk_watch *pk_watch_new(int descriptor, const pk_identity *identity) {
    pk_watch *watch = pk_replacement_takes_a_link(descriptor) ? malloc(sizeof *watch) : NULL;
    if (watch == NULL) {
        close(descriptor);
        return NULL;
    }
    atomic_init(&watch->references, 1);
    atomic_init(&watch->relied_until, 0);
    watch->descriptor = descriptor;
    watch->identity = *identity;
    return watch;
}

bool pk_watch_settled(const pk_watch *watch, const pk_identity *found, const pk_moment *looked) {
    if (!pk_same_identity(found, &watch->identity)) return false;
    int64_t margin = watch->identity.change_seconds + 1;
    return looked->wall.tv_sec > margin || (looked->wall.tv_sec == margin && looked->wall.tv_nsec >= watch->identity.change_nanoseconds);
}

void pk_watch_rely(pk_watch *watch, const pk_moment *looked) {
    atomic_store_explicit(&watch->relied_until, looked->monotonic + PK_RELIED_NANOSECONDS, memory_order_relaxed);
}

bool pk_watch_unchanged(const pk_watch *watch) {
    struct timespec steady;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &steady);
    if (nanoseconds(&steady) >= atomic_load_explicit(&watch->relied_until, memory_order_relaxed)) return false;
    struct stat status;
    if (fstat(watch->descriptor, &status) != 0) return false;
    pk_identity now = pk_identity_of(&status);
    return pk_same_identity(&now, &watch->identity);
}

void pk_watch_retain(pk_watch *watch) { atomic_fetch_add_explicit(&watch->references, 1, memory_order_relaxed); }

void pk_watch_release(pk_watch *watch) {
    if (watch == NULL || atomic_fetch_sub_explicit(&watch->references, 1, memory_order_acq_rel) != 1) return;
    close(watch->descriptor);
    free(watch);
}
