/* The version of the cache file a reader last read, held open, so that a question can learn with
 * one fstat of its descriptor that no other version has taken the name: a lookup of the name costs
 * about twice as much, and was most of a question's cost.
 *
 * Why that is enough: renaming a new version over the name takes a link from the old one and sets
 * its change time; so does removing it; an edit in place moves its size or times. So while the
 * held version's identity, link count and change time are as they were when it was read, the name
 * still leads to it. The one change this misses is a hard link made to it and the version replaced
 * within the clock tick of its own last change, with no question in between; only its owner or
 * root can make that link (protected_hardlinks), and they can write the pins anyway.
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
    watch->descriptor = descriptor;
    watch->identity = *identity;
    return watch;
}

bool pk_watch_unchanged(const pk_watch *watch) {
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
