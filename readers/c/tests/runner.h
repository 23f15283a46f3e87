/* What the C test programs share: reading the conformance table with the library's own strict
 * parser, writing files as the daemon does, and reporting. */
#ifndef PK_TEST_RUNNER_H
#define PK_TEST_RUNNER_H

#include <stdbool.h>
#include <stdio.h>

#include "internal.h"

extern int failures;

#define CHECK(condition, ...)                                                                      \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The member, or NULL. */
const pk_json *member(const pk_json *object, const char *key);
/* A string member as a NUL-terminated string (its bytes may hold no NUL), or NULL. */
const char *string_member(const pk_json *object, const char *key);
/* A JSON value written back as text (to write a case's cache object as a file). */
void write_json(pk_text *out, const pk_json *value);
/* Reads a whole file; exits on failure. */
char *slurp(const char *path, size_t *length);
/* Writes bytes to dir/name as the daemon publishes: a temporary file with its mode, renamed. */
void publish(const char *dir, const char *name, const void *bytes, size_t length, unsigned mode);
/* The bytes of a case's file given as cache (object), cache_text or cache_base64 members named
 * prefix, prefix_text, prefix_base64; false when the case has none. */
bool file_bytes(const pk_json *object, const char *prefix, pk_text *out);

#endif
