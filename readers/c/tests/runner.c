/* Helpers of the C test programs (runner.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "runner.h"

int failures;

const pk_json *member(const pk_json *object, const char *key) {
    bool repeated;
    if (object == NULL || object->kind != PK_JSON_OBJECT) return NULL;
    return pk_json_member_named(object, key, &repeated);
}

const char *string_member(const pk_json *object, const char *key) {
    const pk_json *value = member(object, key);
    return value != NULL && value->kind == PK_JSON_STRING ? value->text : NULL;
}

static void write_string(pk_text *out, const char *bytes, size_t length) {
    pk_text_byte(out, '"');
    for (size_t index = 0; index < length; index++) {
        unsigned char c = (unsigned char)bytes[index];
        char escape[8];
        if (c == '"' || c == '\\') {
            pk_text_byte(out, '\\');
            pk_text_byte(out, (char)c);
        } else if (c < 0x20) {
            snprintf(escape, sizeof escape, "\\u%04x", c);
            pk_text_append(out, escape, 6);
        } else {
            pk_text_byte(out, (char)c);
        }
    }
    pk_text_byte(out, '"');
}

void write_json(pk_text *out, const pk_json *value) {
    switch (value->kind) {
    case PK_JSON_NULL: pk_text_append(out, "null", 4); break;
    case PK_JSON_TRUE: pk_text_append(out, "true", 4); break;
    case PK_JSON_FALSE: pk_text_append(out, "false", 5); break;
    case PK_JSON_NUMBER: pk_text_append(out, value->text, value->length); break;
    case PK_JSON_STRING: write_string(out, value->text, value->length); break;
    case PK_JSON_ARRAY:
        pk_text_byte(out, '[');
        for (size_t index = 0; index < value->count; index++) {
            if (index) pk_text_byte(out, ',');
            write_json(out, value->items[index]);
        }
        pk_text_byte(out, ']');
        break;
    case PK_JSON_OBJECT:
        pk_text_byte(out, '{');
        for (size_t index = 0; index < value->count; index++) {
            if (index) pk_text_byte(out, ',');
            write_string(out, value->members[index].key, value->members[index].key_length);
            pk_text_byte(out, ':');
            write_json(out, value->members[index].value);
        }
        pk_text_byte(out, '}');
        break;
    }
}

char *slurp(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        perror(path);
        exit(2);
    }
    pk_text text = {0};
    char buffer[65536];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, file)) > 0) pk_text_append(&text, buffer, got);
    fclose(file);
    *length = text.length;
    return text.bytes;
}

void publish(const char *dir, const char *name, const void *bytes, size_t length, unsigned mode) {
    char temporary[4096], final[4096];
    snprintf(temporary, sizeof temporary, "%s/.%s.tmp", dir, name);
    snprintf(final, sizeof final, "%s/%s", dir, name);
    int descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (descriptor < 0 || write(descriptor, bytes, length) != (ssize_t)length || fchmod(descriptor, mode) != 0) {
        perror(temporary);
        exit(2);
    }
    close(descriptor);
    if (rename(temporary, final) != 0) {
        perror(final);
        exit(2);
    }
}

static void decode_base64(const char *text, pk_text *out) {
    size_t length = strlen(text);
    unsigned char *bytes = malloc(length + 4);
    int decoded = EVP_DecodeBlock(bytes, (const unsigned char *)text, (int)length);
    size_t size = decoded < 0 ? 0 : (size_t)decoded;
    while (length > 0 && text[length - 1] == '=' && size > 0) length--, size--; /* DecodeBlock keeps padding */
    pk_text_append(out, bytes, size);
    free(bytes);
}

bool file_bytes(const pk_json *object, const char *prefix, pk_text *out) {
    char key[64];
    const pk_json *value = member(object, prefix);
    if (value != NULL) {
        write_json(out, value);
        return true;
    }
    snprintf(key, sizeof key, "%s_text", prefix);
    if ((value = member(object, key)) != NULL) {
        pk_text_append(out, value->text, value->length);
        return true;
    }
    snprintf(key, sizeof key, "%s_base64", prefix);
    if ((value = member(object, key)) != NULL) {
        decode_base64(value->text, out);
        return true;
    }
    return false;
}
