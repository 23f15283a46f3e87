/* The version of the cache file a reader last read, held open, so that a question can learn with
 * one fstat of its descriptor that no other version has taken the name: a lookup of the name costs
 * about twice as much, and was most of a question's cost.
 *
 * Why that is enough: renaming a new version over the name takes a link from the old one and sets
 * its change time; so does removing it, renaming it away or linking it elsewhere; an edit in place
 * moves its size or times. So while the held version's identity, link count and change time are
 * as they were when it was read, the name still leads to it — provided a change cannot leave the
 * change time as it was. It can, within the clock tick of the version's last change (a second on
 * ext2/3 or 128-byte inodes; a jiffy before Linux 6.13): renamed away and replaced in that tick,
 * the held version would look unchanged for good. So a version is held but not relied on until a
 * lookup of the name, begun at least a second after its change time, has found it there (the
 * "racily clean" rule of git's index): every change after that lookup stamps a later time. Until
 * then, and whenever it moved, a question looks at the name. A wall clock set back by more than
 * the margin could defeat the rule; nothing else known does.
 *
 * This holds for the local file systems listed below. On any other nothing is held and every
 * question looks at the name: NFS renames a replaced file that is still open instead of removing
 * it (its link count stays), an overlay leaves the lower layer's file untouched. */
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"

struct pk_watch {
    atomic_size_t references;
    atomic_bool settled; /* a lookup of the name begun a second after its change time found it */
    int descriptor;
    pk_identity identity;
};

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
    atomic_init(&watch->settled, false);
    watch->descriptor = descriptor;
    watch->identity = *identity;
    return watch;
}

void pk_watch_found(pk_watch *watch, const pk_identity *found, const struct timespec *looked) {
    if (!pk_same_identity(found, &watch->identity)) return;
    int64_t margin = watch->identity.change_seconds + 1;
    if (looked->tv_sec > margin || (looked->tv_sec == margin && looked->tv_nsec >= watch->identity.change_nanoseconds))
        atomic_store_explicit(&watch->settled, true, memory_order_release);
}

bool pk_watch_unchanged(const pk_watch *watch) {
    if (!atomic_load_explicit(&watch->settled, memory_order_acquire)) return false;
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
