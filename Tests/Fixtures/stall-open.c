/* Test fixture, loaded into the real daemon with LD_PRELOAD: a file whose open hangs, as an
 * open on a hung network mount or a stalled disk does. While the file named by
 * $PINKEEPER_TEST_OPEN_GATE exists, open(2) of the path $PINKEEPER_TEST_OPEN_PATH (exactly as
 * the program spells it) blocks the calling thread; other paths pass. Each stall appends "+"
 * to <gate>.log when it starts and "-" when it ends, so a test knows the open was reached.
 * With $PINKEEPER_TEST_OPEN_COUNT set, every open of that path, gated or not, appends "o" to
 * the file it names, so a test can count how often the program opens it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends `mark` to the file `path` names itself (not "<path>.log"). */
static void append(const char *path, const char *mark) {
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    int fd = real(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    (void)write(fd, mark, 1);
    close(fd);
}

static void note(const char *gate, const char *mark) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s.log", gate) >= (int)sizeof path) return;
    append(path, mark);
}

static void stall_if_gated(const char *path) {
    const char *target = getenv("PINKEEPER_TEST_OPEN_PATH");
    const char *gate = getenv("PINKEEPER_TEST_OPEN_GATE");
    const char *count = getenv("PINKEEPER_TEST_OPEN_COUNT");
    if (!target || !path || strcmp(path, target) != 0) return;
    if (count) append(count, "o");
    if (!gate || access(gate, F_OK) != 0) return;
    note(gate, "+");
    while (access(gate, F_OK) == 0) usleep(5000);
    note(gate, "-");
}

/* The mode argument is there only when the flags create a file. */
static mode_t mode_of(int flags, va_list arguments) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(arguments, int) : 0;
}

#define WRAP_OPEN(name)                                                                       \
    int name(const char *path, int flags, ...) {                                              \
        va_list arguments;                                                                    \
        va_start(arguments, flags);                                                           \
        mode_t mode = mode_of(flags, arguments);                                              \
        va_end(arguments);                                                                    \
        stall_if_gated(path);                                                                 \
        int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        return real(path, flags, mode);                                                       \
    }

#define WRAP_OPENAT(name)                                                                     \
    int name(int directory, const char *path, int flags, ...) {                               \
        va_list arguments;                                                                    \
        va_start(arguments, flags);                                                           \
        mode_t mode = mode_of(flags, arguments);                                              \
        va_end(arguments);                                                                    \
        stall_if_gated(path);                                                                 \
        int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        return real(directory, path, flags, mode);                                            \
    }

WRAP_OPEN(open)
WRAP_OPEN(open64)
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)
