/* The cost of one question against a store of 2,000 pins (2,000 names), as a program asks it:
 * pk_verdict_fingerprint, with the fstat of the held version that every question makes. Prints
 * nanoseconds per question for a pinned host, an unpinned certificate and an unknown host, and
 * beside them what the system charges for that fstat and for an lstat of the file's path (what a
 * question costs when no version can be held, as on NFS). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pinkeeper.h"

#define PINS 2000
#define QUESTIONS 1000000

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void write_store(const char *directory) {
    char path[512];
    snprintf(path, sizeof path, "%s/bench.json", directory);
    FILE *file = fopen(path, "w");
    fputs("{\"fingerprints\":[", file);
    for (int index = 0; index < PINS; index++)
        fprintf(file, "%s{\"name\":\"host%d.example.com\",\"fingerprint\":\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBA%02d=\","
                      "\"expires\":4102444800}", index ? "," : "", index, index % 100);
    fputs("],\"pinkeeper\":{\"format\":1,\"store\":\"bench\",\"source\":\"x\",\"updated\":1,\"nextUpdate\":2}}", file);
    fclose(file);
}

static double per_question(pk_reader *reader, const char *host, const unsigned char digest[32]) {
    double start = seconds();
    int trusted = 0;
    for (int index = 0; index < QUESTIONS; index++) trusted += pk_verdict_fingerprint(reader, host, digest, 0, 1763770000) == PK_TRUSTED;
    double elapsed = seconds() - start;
    if (trusted < 0) abort();
    return elapsed / QUESTIONS * 1e9;
}

/* One fstat of an open file, alone, or (by_path) one lstat of its path. */
static double per_stat(const char *directory, bool by_path) {
    char path[512];
    struct stat status;
    snprintf(path, sizeof path, "%s/bench.json", directory);
    int file = open(path, O_RDONLY);
    double start = seconds();
    for (int index = 0; index < QUESTIONS; index++) {
        if (by_path) lstat(path, &status);
        else fstat(file, &status);
    }
    double elapsed = seconds() - start;
    close(file);
    return elapsed / QUESTIONS * 1e9;
}

int main(void) {
    char directory[] = "/tmp/pk-c-bench-XXXXXX";
    if (mkdtemp(directory) == NULL) return 1;
    chmod(directory, 0755);
    write_store(directory);
    pk_error *error = NULL;
    pk_reader *reader = pk_reader_open(directory, "bench", NULL, NULL, 0, &error);
    pk_error *problem = reader ? pk_reader_refresh(reader) : error;
    if (problem != NULL) {
        fprintf(stderr, "%s\n", pk_error_message(problem));
        return 1;
    }
    /* A version is relied on once a lookup a second after it was written found it (watch.c), as
     * nearly every question meets the daemon's file: wait, and let one question look. */
    sleep(2);
    unsigned char settling[32] = {0};
    pk_verdict_fingerprint(reader, "host1.example.com", settling, 0, 1763770000);
    unsigned char pinned[32], other[32];
    pk_parse_fingerprint("AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBA00=", pinned);
    memset(other, 7, sizeof other);
    double stat_cost = per_stat(directory, false);
    printf("pins: %d; one fstat alone: %.0f ns; an lstat of the path: %.0f ns\n", PINS, stat_cost, per_stat(directory, true));
    const char *labels[] = {"pinned host, pinned certificate", "pinned host, unpinned certificate", "unknown host"};
    const char *hosts[] = {"host1000.example.com", "HOST1000.example.com.", "nowhere.example.com"};
    for (int index = 0; index < 3; index++) {
        double cost = per_question(reader, hosts[index], index == 0 ? pinned : other);
        printf("%-34s %5.0f ns per question, %5.0f ns without the fstat\n", labels[index], cost, cost - stat_cost);
    }
    pk_reader_close(reader);
    char path[512];
    snprintf(path, sizeof path, "%s/bench.json", directory);
    unlink(path);
    rmdir(directory);
    return 0;
}
