/* A strict JSON parser (RFC 8259 and nothing more) into a tree held by one arena. Every reader
 * classifies a file the same way: what this refuses is "not-json"; what it accepts is then
 * type-checked by cachefile.c ("invalid-content"). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct block {
    struct block *next;
    size_t used, size;
    _Alignas(max_align_t) unsigned char bytes[];
} block;

struct pk_json_document {
    block *blocks;
    pk_json *root;
};

typedef struct parser {
    const unsigned char *cursor, *end;
    pk_json_document *document;
    const char *reason; /* set on the first refusal */
    unsigned depth;
} parser;

static void *arena_alloc(parser *state, size_t size) {
    size = (size + 15) & ~(size_t)15;
    block *current = state->document->blocks;
    if (current == NULL || current->size - current->used < size) {
        size_t capacity = size > 65536 ? size : 65536;
        block *fresh = malloc(sizeof(block) + capacity);
        if (fresh == NULL) {
            state->reason = "out of memory";
            return NULL;
        }
        fresh->next = current, fresh->used = 0, fresh->size = capacity;
        state->document->blocks = current = fresh;
    }
    void *memory = current->bytes + current->used;
    current->used += size;
    return memory;
}

static bool refuse(parser *state, const char *reason) {
    if (state->reason == NULL) state->reason = reason;
    return false;
}

static void skip_whitespace(parser *state) {
    while (state->cursor < state->end) {
        unsigned char c = *state->cursor;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        state->cursor++;
    }
}

static bool literal(parser *state, const char *word, pk_json *value, pk_json_kind kind) {
    size_t length = strlen(word);
    if ((size_t)(state->end - state->cursor) < length || memcmp(state->cursor, word, length) != 0)
        return refuse(state, "an unexpected character");
    state->cursor += length;
    value->kind = kind;
    return true;
}

static bool digits(parser *state) {
    const unsigned char *start = state->cursor;
    while (state->cursor < state->end && *state->cursor >= '0' && *state->cursor <= '9') state->cursor++;
    return state->cursor > start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text: cachefile.c decides integers. */
static bool number(parser *state, pk_json *value) {
    const unsigned char *start = state->cursor;
    if (*state->cursor == '-') state->cursor++;
    if (state->cursor < state->end && *state->cursor == '0') {
        state->cursor++;
    } else if (!digits(state)) {
        return refuse(state, "a malformed number");
    }
    if (state->cursor < state->end && *state->cursor == '.') {
        state->cursor++;
        if (!digits(state)) return refuse(state, "a malformed number");
    }
    if (state->cursor < state->end && (*state->cursor == 'e' || *state->cursor == 'E')) {
        state->cursor++;
        if (state->cursor < state->end && (*state->cursor == '+' || *state->cursor == '-')) state->cursor++;
        if (!digits(state)) return refuse(state, "a malformed number");
    }
    if (state->cursor < state->end && *state->cursor >= '0' && *state->cursor <= '9')
        return refuse(state, "a number with a leading zero");
    value->kind = PK_JSON_NUMBER;
    value->text = (const char *)start;
    value->length = (size_t)(state->cursor - start);
    return true;
}

static int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex4(parser *state, uint32_t *unit) {
    if (state->end - state->cursor < 4) return refuse(state, "a truncated \\u escape");
    *unit = 0;
    for (int index = 0; index < 4; index++) {
        int digit = hex_value(state->cursor[index]);
        if (digit < 0) return refuse(state, "a malformed \\u escape");
        *unit = (*unit << 4) | (uint32_t)digit;
    }
    state->cursor += 4;
    return true;
}

/* After "\u": one scalar, from a surrogate pair when it is one; a lone surrogate is refused. */
static bool unicode_escape(parser *state, pk_text *out) {
    uint32_t unit;
    if (!hex4(state, &unit)) return false;
    if (unit >= 0xDC00 && unit <= 0xDFFF) return refuse(state, "a lone low surrogate escape");
    if (unit >= 0xD800 && unit <= 0xDBFF) {
        uint32_t low;
        if (state->end - state->cursor < 2 || state->cursor[0] != '\\' || state->cursor[1] != 'u')
            return refuse(state, "a lone high surrogate escape");
        state->cursor += 2;
        if (!hex4(state, &low)) return false;
        if (low < 0xDC00 || low > 0xDFFF) return refuse(state, "a high surrogate escape without its low half");
        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    }
    pk_utf8_encode(out, unit);
    return true;
}

static bool escape(parser *state, pk_text *out) {
    if (state->cursor >= state->end) return refuse(state, "an unterminated string");
    unsigned char c = *state->cursor++;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *found = c ? memchr(from, c, sizeof from - 1) : NULL;
    if (found != NULL) {
        pk_text_byte(out, to[found - from]);
        return true;
    }
    if (c == 'u') return unicode_escape(state, out);
    return refuse(state, "an invalid escape");
}

/* The decoded bytes of a string whose opening quote was consumed. */
static bool string_bytes(parser *state, pk_text *out) {
    while (state->cursor < state->end) {
        unsigned char c = *state->cursor;
        if (c == '"') {
            state->cursor++;
            return true;
        }
        if (c < 0x20) return refuse(state, "a raw control character in a string");
        if (c == '\\') {
            state->cursor++;
            if (!escape(state, out)) return false;
            continue;
        }
        uint32_t scalar;
        size_t size = pk_utf8_decode(state->cursor, (size_t)(state->end - state->cursor), &scalar);
        if (size == 0) return refuse(state, "invalid UTF-8");
        pk_text_append(out, state->cursor, size);
        state->cursor += size;
    }
    return refuse(state, "an unterminated string");
}

/* A string into the arena: *bytes and *length. */
static bool string_value(parser *state, const char **bytes, size_t *length) {
    pk_text decoded = {0};
    state->cursor++; /* the quote */
    bool parsed = string_bytes(state, &decoded);
    if (parsed && decoded.failed) parsed = refuse(state, "out of memory");
    char *copy = parsed ? arena_alloc(state, decoded.length + 1) : NULL;
    if (copy != NULL) {
        if (decoded.length) memcpy(copy, decoded.bytes, decoded.length);
        copy[decoded.length] = '\0';
        *bytes = copy, *length = decoded.length;
    }
    pk_text_free(&decoded);
    return copy != NULL;
}

static bool value(parser *state, pk_json *into);

/* Growable arrays of items or members, copied into the arena once complete. */
typedef struct collection {
    void *elements;
    size_t count, capacity, size;
} collection;

static bool collect(parser *state, collection *list, const void *element) {
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 8;
        void *grown = realloc(list->elements, capacity * list->size);
        if (grown == NULL) return refuse(state, "out of memory");
        list->elements = grown, list->capacity = capacity;
    }
    memcpy((unsigned char *)list->elements + list->count * list->size, element, list->size);
    list->count++;
    return true;
}

static void *settle(parser *state, collection *list) {
    void *copy = list->count ? arena_alloc(state, list->count * list->size) : NULL;
    if (copy != NULL) memcpy(copy, list->elements, list->count * list->size);
    free(list->elements);
    return copy;
}

/* After '[' or '{': the elements up to the closing bracket, separated by commas. element
 * parses one (skipping the whitespace before it). */
static bool elements(parser *state, unsigned char closing, collection *list, bool (*element)(parser *, collection *)) {
    skip_whitespace(state);
    if (state->cursor < state->end && *state->cursor == closing) {
        state->cursor++;
        return true;
    }
    for (;;) {
        if (!element(state, list)) return false;
        skip_whitespace(state);
        if (state->cursor >= state->end) return refuse(state, "an unterminated array or object");
        unsigned char c = *state->cursor++;
        if (c == closing) return true;
        if (c != ',') return refuse(state, "a missing comma");
        skip_whitespace(state);
        if (state->cursor < state->end && *state->cursor == closing) return refuse(state, "a trailing comma");
    }
}

static bool array_item(parser *state, collection *list) {
    pk_json *item = arena_alloc(state, sizeof *item);
    if (item == NULL || !value(state, item)) return false;
    return collect(state, list, &item);
}

static bool object_member(parser *state, collection *list) {
    pk_json_member member;
    skip_whitespace(state);
    if (state->cursor >= state->end || *state->cursor != '"') return refuse(state, "a member name that is not a string");
    if (!string_value(state, &member.key, &member.key_length)) return false;
    skip_whitespace(state);
    if (state->cursor >= state->end || *state->cursor != ':') return refuse(state, "a missing colon");
    state->cursor++;
    member.value = arena_alloc(state, sizeof *member.value);
    if (member.value == NULL || !value(state, member.value)) return false;
    return collect(state, list, &member);
}

static bool container(parser *state, pk_json *into, bool is_object) {
    if (++state->depth > PK_MAXIMUM_DEPTH) return refuse(state, "nesting deeper than 512 levels");
    state->cursor++;
    collection list = {.size = is_object ? sizeof(pk_json_member) : sizeof(pk_json *)};
    bool parsed = elements(state, is_object ? '}' : ']', &list, is_object ? object_member : array_item);
    if (!parsed) {
        free(list.elements);
        return false;
    }
    into->kind = is_object ? PK_JSON_OBJECT : PK_JSON_ARRAY;
    into->count = list.count;
    void *settled = settle(state, &list);
    if (list.count && settled == NULL) return false;
    if (is_object) into->members = settled; else into->items = settled;
    state->depth--;
    return true;
}

static bool value(parser *state, pk_json *into) {
    *into = (pk_json){0};
    skip_whitespace(state);
    if (state->cursor >= state->end) return refuse(state, "a missing value");
    switch (*state->cursor) {
    case '{': return container(state, into, true);
    case '[': return container(state, into, false);
    case '"': into->kind = PK_JSON_STRING; return string_value(state, &into->text, &into->length);
    case 't': return literal(state, "true", into, PK_JSON_TRUE);
    case 'f': return literal(state, "false", into, PK_JSON_FALSE);
    case 'n': return literal(state, "null", into, PK_JSON_NULL);
    default: break;
    }
    if (*state->cursor == '-' || (*state->cursor >= '0' && *state->cursor <= '9')) return number(state, into);
    return refuse(state, "an unexpected character");
}

pk_json_document *pk_json_parse(const char *bytes, size_t length, const char **reason) {
    pk_json_document *document = calloc(1, sizeof *document);
    if (document == NULL) {
        *reason = "out of memory";
        return NULL;
    }
    parser state = {(const unsigned char *)bytes, (const unsigned char *)bytes + length, document, NULL, 0};
    document->root = arena_alloc(&state, sizeof *document->root);
    bool parsed = document->root != NULL && value(&state, document->root);
    if (parsed) {
        skip_whitespace(&state);
        if (state.cursor != state.end) parsed = refuse(&state, "data after the document");
    }
    if (!parsed) {
        *reason = state.reason ? state.reason : "a syntax error";
        pk_json_free(document);
        return NULL;
    }
    return document;
}

pk_json *pk_json_root(pk_json_document *document) { return document->root; }

void pk_json_free(pk_json_document *document) {
    if (document == NULL) return;
    for (block *current = document->blocks, *next; current != NULL; current = next) {
        next = current->next;
        free(current);
    }
    free(document);
}

pk_json *pk_json_member_named(const pk_json *object, const char *key, bool *repeated) {
    size_t key_length = strlen(key);
    pk_json *found = NULL;
    *repeated = false;
    for (size_t index = 0; index < object->count; index++) {
        const pk_json_member *member = &object->members[index];
        if (member->key_length != key_length || memcmp(member->key, key, key_length) != 0) continue;
        if (found != NULL) *repeated = true;
        found = member->value;
    }
    return found;
}
