/* Reading a cache or fallback file: a regular file only, never waited on, never too large, and
 * never one that another local user could have written (they must not be able to plant pins). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The file being read names itself in messages: "cache file" or "fallback file". */
static __thread const char *file_kind = "file";

static pk_error *file_error(pk_error_code code, const char *path, const char *reason, int number) {
    char *escaped = pk_escaped(path, strlen(path));
    pk_error *error = pk_error_new(code, "%s %s %s%s%s; %s", file_kind, escaped ? escaped : "?", reason, number ? ": " : "",
                                   number ? strerror(number) : "", pk_error_advice(code));
    free(escaped);
    return error;
}

/* World-writable and not sticky: another user could replace the file inside. Group-writable is
 * the operator's choice (a group of administrators). */
static bool others_may_replace(mode_t mode) { return (mode & S_IWOTH) && !(mode & S_ISVTX); }

static pk_error *check_directory(const char *path) {
    char *copy = strdup(path);
    if (copy == NULL) return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
    struct stat directory;
    int result = stat(dirname(copy), &directory);
    int number = errno;
    free(copy);
    if (result != 0) return file_error(PK_ERROR_IO, path, "has a directory that cannot be examined", number);
    if (others_may_replace(directory.st_mode))
        return file_error(PK_ERROR_INSECURE_PERMISSIONS, path, "is in a directory that every user may write (and not sticky)", 0);
    return NULL;
}

static pk_error *open_error(const char *path, bool follow_links, int number) {
    struct stat link;
    if (number == ENOENT) return file_error(PK_ERROR_MISSING, path, "does not exist", 0);
    if ((number == ELOOP || number == EMLINK) && !follow_links && lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
        return file_error(PK_ERROR_SYMLINK, path, "is a symlink, which is never followed", 0);
    if (number == ENXIO || number == ENODEV) return file_error(PK_ERROR_NOT_REGULAR_FILE, path, "is not a regular file", 0);
    return file_error(PK_ERROR_IO, path, "cannot be opened", number);
}

static pk_error *check_opened(const char *path, const struct stat *status) {
    if (!S_ISREG(status->st_mode))
        return file_error(PK_ERROR_NOT_REGULAR_FILE, path, "is not a regular file (a FIFO, device or directory?)", 0);
    if (status->st_mode & S_IWOTH) return file_error(PK_ERROR_INSECURE_PERMISSIONS, path, "may be written by every user", 0);
    if (status->st_size > (off_t)PK_MAXIMUM_FILE_SIZE)
        return file_error(PK_ERROR_TOO_LARGE, path, "is larger than 64 MiB, which no cache file is", 0);
    return check_directory(path);
}

static pk_error *read_all(int descriptor, const char *path, char **bytes, size_t *length) {
    size_t capacity = 65536, used = 0;
    char *buffer = malloc(capacity);
    for (;;) {
        if (buffer == NULL) return pk_error_new(PK_ERROR_OUT_OF_MEMORY, "out of memory");
        if (used == capacity) {
            char *grown = capacity > PK_MAXIMUM_FILE_SIZE ? NULL : realloc(buffer, capacity * 2);
            if (grown == NULL) free(buffer);
            if (capacity > PK_MAXIMUM_FILE_SIZE) return file_error(PK_ERROR_TOO_LARGE, path, "is larger than 64 MiB", 0);
            buffer = grown, capacity *= 2;
            continue;
        }
        ssize_t got = read(descriptor, buffer + used, capacity - used);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int number = errno;
            free(buffer);
            return file_error(PK_ERROR_IO, path, "cannot be read", number);
        }
        if (got == 0) break;
        used += (size_t)got;
    }
    if (used > PK_MAXIMUM_FILE_SIZE) {
        free(buffer);
        return file_error(PK_ERROR_TOO_LARGE, path, "is larger than 64 MiB", 0);
    }
    *bytes = buffer, *length = used;
    return NULL;
}

/* O_NONBLOCK: a FIFO planted at the path is refused at once rather than waited on. O_NOFOLLOW
 * unless follow_links (the operator's fallback file only): whoever may write the cache directory
 * cannot point the reader elsewhere. The identity comes from the open descriptor, so that a
 * replacement racing with the read is noticed at the next question. */
pk_error *pk_read_file(const char *kind, const char *path, bool follow_links, char **bytes, size_t *length, pk_identity *identity,
                       int *kept) {
    file_kind = kind;
    if (kept != NULL) *kept = -1;
    int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow_links ? 0 : O_NOFOLLOW);
    int descriptor;
    do {
        descriptor = open(path, flags);
    } while (descriptor < 0 && errno == EINTR);
    if (descriptor < 0) return open_error(path, follow_links, errno);
    struct stat status;
    pk_error *error = NULL;
    if (fstat(descriptor, &status) != 0) error = file_error(PK_ERROR_IO, path, "cannot be examined", errno);
    if (error == NULL) error = check_opened(path, &status);
    if (error == NULL) error = read_all(descriptor, path, bytes, length);
    if (error == NULL) *identity = pk_identity_of(&status);
    if (error == NULL && kept != NULL) *kept = descriptor;
    else close(descriptor);
    return error;
}
