/* Test fixture, loaded into the real daemon with LD_PRELOAD: a stalled disk.
 * While the file named by $PINKEEPER_TEST_FSYNC_GATE exists, fsync(2) of a regular file
 * hangs (directories pass), blocking the calling thread exactly as a stuck device does.
 * Each stall appends "+" to <gate>.log when it starts and "-" when it ends, so a test can
 * tell how many publishes hung at once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void note(const char *gate, const char *mark) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s.log", gate) >= (int)sizeof path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    (void)write(fd, mark, 1);
    close(fd);
}

int fsync(int fd) {
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    const char *gate = getenv("PINKEEPER_TEST_FSYNC_GATE");
    struct stat info;
    if (gate && fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && access(gate, F_OK) == 0) {
        note(gate, "+");
        while (access(gate, F_OK) == 0) usleep(5000);
        note(gate, "-");
    }
    return real(fd);
}
