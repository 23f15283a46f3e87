/* Byte strings that grow, names folded as pinkeeper compares them, UTF-8, and text made safe for
 * one line of a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void pk_text_append(pk_text *text, const void *bytes, size_t length) {
    if (text->failed) return;
    if (text->length + length + 1 > text->capacity) {
        size_t capacity = text->capacity ? text->capacity : 64;
        while (capacity < text->length + length + 1) capacity *= 2;
        char *grown = text->borrowed ? malloc(capacity) : realloc(text->bytes, capacity);
        if (grown == NULL) {
            text->failed = true;
            return;
        }
        if (text->borrowed && text->length) memcpy(grown, text->bytes, text->length);
        text->bytes = grown;
        text->borrowed = false;
        text->capacity = capacity;
    }
    if (length) memcpy(text->bytes + text->length, bytes, length);
    text->length += length;
    text->bytes[text->length] = '\0';
}

void pk_text_byte(pk_text *text, char byte) { pk_text_append(text, &byte, 1); }

void pk_text_free(pk_text *text) {
    if (!text->borrowed) free(text->bytes);
    *text = (pk_text){0};
}

/* Only A-Z fold (DNS's rule): not the Kelvin sign, not the long s, no normalisation. UTF-8 never
 * uses an ASCII byte inside a longer sequence, so folding bytes is folding scalars. */
static char fold(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c | 0x20) : c; }

char *pk_folded_copy(const char *bytes, size_t length) {
    char *copy = malloc(length + 1);
    if (copy == NULL) return NULL;
    for (size_t index = 0; index < length; index++) copy[index] = fold(bytes[index]);
    copy[length] = '\0';
    return copy;
}

bool pk_same_folded(const char *a, size_t a_length, const char *b, size_t b_length) {
    return a_length == b_length && memcmp(a, b, a_length) == 0;
}

size_t pk_utf8_decode(const unsigned char *bytes, size_t length, uint32_t *scalar) {
    unsigned char lead = bytes[0];
    size_t size;
    uint32_t value, minimum;
    if (lead < 0x80) {
        *scalar = lead;
        return 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
        size = 2, value = lead & 0x1F, minimum = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        size = 3, value = lead & 0x0F, minimum = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        size = 4, value = lead & 0x07, minimum = 0x10000;
    } else {
        return 0;
    }
    if (length < size) return 0;
    for (size_t index = 1; index < size; index++) {
        if ((bytes[index] & 0xC0) != 0x80) return 0;
        value = (value << 6) | (bytes[index] & 0x3F);
    }
    if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
    *scalar = value;
    return size;
}

void pk_utf8_encode(pk_text *text, uint32_t scalar) {
    char bytes[4];
    size_t size;
    if (scalar < 0x80) {
        bytes[0] = (char)scalar, size = 1;
    } else if (scalar < 0x800) {
        bytes[0] = (char)(0xC0 | (scalar >> 6)), bytes[1] = (char)(0x80 | (scalar & 0x3F)), size = 2;
    } else if (scalar < 0x10000) {
        bytes[0] = (char)(0xE0 | (scalar >> 12)), bytes[1] = (char)(0x80 | ((scalar >> 6) & 0x3F));
        bytes[2] = (char)(0x80 | (scalar & 0x3F)), size = 3;
    } else {
        bytes[0] = (char)(0xF0 | (scalar >> 18)), bytes[1] = (char)(0x80 | ((scalar >> 12) & 0x3F));
        bytes[2] = (char)(0x80 | ((scalar >> 6) & 0x3F)), bytes[3] = (char)(0x80 | (scalar & 0x3F)), size = 4;
    }
    pk_text_append(text, bytes, size);
}

/* Scalars that could forge or hide text in a log line: C0 and C1 controls, DEL, the line and
 * paragraph separators and the bidirectional marks, embeddings, overrides and isolates. */
static bool needs_escape(uint32_t scalar) {
    return scalar <= 0x1F || scalar == '\\' || (scalar >= 0x7F && scalar <= 0x9F) || scalar == 0x061C ||
           scalar == 0x200E || scalar == 0x200F || scalar == 0x2028 || scalar == 0x2029 ||
           (scalar >= 0x202A && scalar <= 0x202E) || (scalar >= 0x2066 && scalar <= 0x2069);
}

static void append_escaped(pk_text *out, uint32_t scalar) {
    char escape[16];
    switch (scalar) {
    case '\\': pk_text_append(out, "\\\\", 2); return;
    case '\n': pk_text_append(out, "\\n", 2); return;
    case '\r': pk_text_append(out, "\\r", 2); return;
    case '\t': pk_text_append(out, "\\t", 2); return;
    default: break;
    }
    int written = snprintf(escape, sizeof escape, "\\u{%x}", (unsigned)scalar);
    pk_text_append(out, escape, (size_t)written);
}

/* Invalid UTF-8 is written as U+FFFD, one per byte. */
char *pk_escaped(const char *bytes, size_t length) {
    pk_text out = {0};
    const unsigned char *cursor = (const unsigned char *)bytes;
    size_t left = length;
    pk_text_append(&out, "", 0);
    while (left > 0) {
        uint32_t scalar;
        size_t size = pk_utf8_decode(cursor, left, &scalar);
        if (size == 0) {
            scalar = 0xFFFD, size = 1;
            pk_utf8_encode(&out, scalar);
        } else if (needs_escape(scalar)) {
            append_escaped(&out, scalar);
        } else {
            pk_text_append(&out, cursor, size);
        }
        cursor += size, left -= size;
    }
    if (out.failed) {
        pk_text_free(&out);
        return NULL;
    }
    return out.bytes;
}
