/* Declarations shared by the library's files; nothing here is exported (-fvisibility=hidden). */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "pinkeeper.h"

#define PK_EXPORT __attribute__((visibility("default")))

/* A cache file is a few hundred bytes per pin; anything this large is not one. */
#define PK_MAXIMUM_FILE_SIZE (64u << 20)
/* Deeper nesting than this is not JSON a reader accepts (every reader draws the line here). */
#define PK_MAXIMUM_DEPTH 512

/* ---- errors.c ---- */
struct pk_error {
    pk_error_code code;
    char *message;
};
/* A new error with a printf-style message; never NULL (a static out-of-memory error instead). */
pk_error *pk_error_new(pk_error_code code, const char *format, ...) __attribute__((format(printf, 2, 3)));
pk_error *pk_error_copy(const pk_error *error);
/* The code's line for a message: what to do about it. */
const char *pk_error_advice(pk_error_code code);

/* ---- text.c: growable byte strings, folding, escaping ---- */
typedef struct pk_text {
    char *bytes;
    size_t length, capacity;
    bool failed;   /* memory ran out: the text is incomplete and must not be used */
    bool borrowed; /* bytes is the caller's buffer (of capacity bytes), never freed or reallocated */
} pk_text;
/* A text that starts in the caller's buffer: no allocation for what fits. */
#define PK_TEXT_IN(buffer) ((pk_text){.bytes = (buffer), .capacity = sizeof(buffer), .borrowed = true})
void pk_text_append(pk_text *text, const void *bytes, size_t length);
void pk_text_byte(pk_text *text, char byte);
void pk_text_free(pk_text *text);
/* A NUL-terminated copy of bytes[0..length) with A-Z folded to a-z; NULL when memory ran out. */
char *pk_folded_copy(const char *bytes, size_t length);
bool pk_same_folded(const char *a, size_t a_length, const char *b, size_t b_length);
/* Text safe in one line of a message: controls, bidirectional marks and backslashes escaped. */
char *pk_escaped(const char *bytes, size_t length);
/* Length of a valid UTF-8 sequence at bytes (at most length bytes), its scalar in *scalar; 0 if
 * the bytes are not valid UTF-8 (overlong, surrogate, beyond U+10FFFF, truncated). */
size_t pk_utf8_decode(const unsigned char *bytes, size_t length, uint32_t *scalar);
void pk_utf8_encode(pk_text *text, uint32_t scalar);

/* ---- json.c: a strict JSON parser into a tree ---- */
typedef enum { PK_JSON_NULL, PK_JSON_FALSE, PK_JSON_TRUE, PK_JSON_NUMBER, PK_JSON_STRING, PK_JSON_ARRAY, PK_JSON_OBJECT } pk_json_kind;

typedef struct pk_json pk_json;
typedef struct pk_json_member {
    const char *key;
    size_t key_length;
    pk_json *value;
} pk_json_member;

struct pk_json {
    pk_json_kind kind;
    size_t count;            /* items or members */
    const char *text;        /* a string's decoded bytes (may hold NUL), a number's text */
    size_t length;
    pk_json **items;         /* an array's */
    pk_json_member *members; /* an object's, in document order (a key may repeat) */
};

typedef struct pk_json_document pk_json_document;
/* The document's root, or NULL with *reason set (a static string) when bytes are not strict JSON:
 * UTF-8 only (no byte order mark), no lone surrogate escape, no trailing data, at most
 * PK_MAXIMUM_DEPTH levels of nesting. */
pk_json_document *pk_json_parse(const char *bytes, size_t length, const char **reason);
pk_json *pk_json_root(pk_json_document *document);
void pk_json_free(pk_json_document *document);
/* The member named key (length key_length), NULL when absent; *repeated when given twice or more. */
pk_json *pk_json_member_named(const pk_json *object, const char *key, bool *repeated);

/* ---- pins: what a file holds, parsed (cachefile.c) ---- */
typedef struct pk_pin {
    char *key; /* the name, folded */
    size_t key_length;
    unsigned char fingerprint[32];
    int64_t expires;
    int64_t depth;
} pk_pin;

typedef struct pk_domain {
    char *key; /* folded */
    size_t key_length;
    bool required;
} pk_domain;

typedef struct pk_list {
    pk_pin *pins;
    size_t pin_count;
    bool has_domains;
    bool required_for_unlisted;
    pk_domain *domains;
    size_t domain_count;
} pk_list;

void pk_list_free(pk_list *list);
/* A Wultra list ({"fingerprints": [...], "domainsConfig": {...}}); NULL on success, else the
 * code and reason. Every known member is type-checked and must appear at most once. */
pk_error *pk_parse_list(const pk_json *root, pk_list *list);
/* A cache file: a list plus the "pinkeeper" metadata of store; a static (signed-only) file keeps
 * only its depth-0 pins and no domainsConfig. path names the file in messages. */
pk_error *pk_parse_cache_file(const char *bytes, size_t length, const char *path, const char *store, pk_list *list);
pk_error *pk_parse_fallback_file(const char *bytes, size_t length, const char *path, pk_list *list);
/* An integer written without fraction or exponent that fits 64 bits ("-0" is 0). */
bool pk_json_integer(const pk_json *value, int64_t *integer);
/* 32 bytes from exactly 43 standard base64 characters and '=' (the unused low bits ignored). */
bool pk_decode_fingerprint(const char *text, size_t length, unsigned char digest[32]);

/* ---- files.c ---- */
typedef struct pk_identity {
    uint64_t device, inode;
    int64_t size, seconds, nanoseconds; /* modification time */
    uint64_t links;
    int64_t change_seconds, change_nanoseconds;
} pk_identity;
/* The whole regular file at path (*bytes to free), its identity from the open descriptor.
 * kind ("cache file", "fallback file") names it in messages. follow_links only for the operator's
 * fallback file. *kept (when not NULL) receives the descriptor of a file read whole, to close, and
 * is -1 otherwise. Returns NULL or the refusal. */
pk_error *pk_read_file(const char *kind, const char *path, bool follow_links, char **bytes, size_t *length, pk_identity *identity,
                       int *kept);

/* ---- watch.c: the version last read, held open ---- */
struct stat;
typedef struct pk_watch pk_watch;
pk_identity pk_identity_of(const struct stat *status);
bool pk_same_identity(const pk_identity *a, const pk_identity *b);
/* Whether the file system of descriptor is one where replacing or removing a file takes a link
 * from it (the local ones it lists). */
bool pk_replacement_takes_a_link(int descriptor);
/* Holds descriptor (taken: closed when released) of the version read with identity; NULL, the
 * descriptor closed, on a file system not listed or when memory ran out. */
pk_watch *pk_watch_new(int descriptor, const pk_identity *identity);
/* When a lookup of the name began: the wall clock (compared with change times) and the monotonic
 * one (nanoseconds), both coarse. */
typedef struct pk_moment {
    struct timespec wall;
    int64_t monotonic;
} pk_moment;
pk_moment pk_moment_now(void);
/* The lookup begun at looked found the held version, a second or more after its change time. */
bool pk_watch_settled(const pk_watch *watch, const pk_identity *found, const pk_moment *looked);
/* The held version may answer without a lookup for a second from looked. */
void pk_watch_rely(pk_watch *watch, const pk_moment *looked);
/* One fstat: the held version is relied on and still has the identity, link count and change
 * time it was read with. */
bool pk_watch_unchanged(const pk_watch *watch);
void pk_watch_retain(pk_watch *watch);
void pk_watch_release(pk_watch *watch);

/* ---- snapshot.c: pins indexed by folded name ---- */
typedef struct pk_bucket {
    const char *key;
    size_t key_length;
    uint64_t hash;
    size_t first, count; /* a run of pk_snapshot.pins */
} pk_bucket;

typedef struct pk_snapshot {
    atomic_size_t references;
    pk_pin *pins; /* grouped by key; keys point into the lists below */
    size_t pin_count;
    pk_bucket *buckets;
    size_t bucket_mask;
    pk_list cache; /* owned; no pins when no cache file is in force */
    bool has_cache;
} pk_snapshot;

/* The cache's pins in force and the fallback pins (borrowed: the reader keeps them) indexed. Takes
 * ownership of cache (NULL: none). NULL when memory ran out. */
pk_snapshot *pk_snapshot_new(pk_list *cache, const pk_list *fallback);
void pk_snapshot_retain(pk_snapshot *snapshot);
void pk_snapshot_release(pk_snapshot *snapshot);
/* The pins under a folded key: *count of them from the returned pointer. */
const pk_pin *pk_snapshot_pins(const pk_snapshot *snapshot, const char *key, size_t key_length, size_t *count);
uint64_t pk_hash(const char *bytes, size_t length);

/* ---- host.c ---- */
/* H's one form into out (appended); false when the spelling is refused. */
bool pk_host_one_form(const char *spelling, size_t length, pk_text *out);
bool pk_ip_one_form(const char *text, size_t length, pk_text *out, bool bracketed);
bool pk_punycode(const uint32_t *scalars, size_t count, pk_text *out);

/* ---- verdict.c ---- */
typedef struct pk_names {
    const char *keys[2]; /* folded H, then N when it is another name */
    size_t lengths[2];
    size_t count;        /* 0: no usable H */
} pk_names;

typedef struct pk_question {
    const unsigned char *fingerprint; /* one certificate at depth, or */
    uint64_t depth;
    const unsigned char (*chain)[32]; /* a verified chain's digests, leaf first */
    size_t chain_length;
} pk_question;

pk_verdict pk_decide(const pk_snapshot *snapshot, const pk_names *names, const char *const *expected,
                     const size_t *expected_lengths, size_t expected_count, bool has_expected,
                     const pk_question *question, int64_t now);
bool pk_admits(const pk_names *names, const char *const *expected, const size_t *expected_lengths,
               size_t expected_count, bool has_expected);

/* ---- reader.c ---- */
/* The snapshot to answer from, retained (release it), after one fstat of the held version or an
 * lstat of the path (watch.c). */
pk_snapshot *pk_reader_current(pk_reader *reader);
const char *pk_reader_store(const pk_reader *reader);
/* For the tests: a question now would answer from the held version after one fstat. */
bool pk_reader_relies_on_held(pk_reader *reader);
void pk_reader_expected(const pk_reader *reader, const char *const **names, const size_t **lengths, size_t *count, bool *given);

/* ---- certificates.c ---- */
/* The most specific (last) common name of the certificate's subject as UTF-8, or NULL. */
char *pk_common_name(const struct x509_st *certificate);

#endif
