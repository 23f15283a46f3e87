/* Error objects: a code every pinkeeper reader reports with the same string, and one line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const code_names[] = {
    [PK_ERROR_MISSING] = "missing",
    [PK_ERROR_SYMLINK] = "symlink",
    [PK_ERROR_NOT_REGULAR_FILE] = "not-regular-file",
    [PK_ERROR_IO] = "io-error",
    [PK_ERROR_INSECURE_PERMISSIONS] = "insecure-permissions",
    [PK_ERROR_TOO_LARGE] = "too-large",
    [PK_ERROR_NOT_JSON] = "not-json",
    [PK_ERROR_INVALID_CONTENT] = "invalid-content",
    [PK_ERROR_MISSING_METADATA] = "missing-metadata",
    [PK_ERROR_UNSUPPORTED_FORMAT] = "unsupported-format",
    [PK_ERROR_WRONG_STORE] = "wrong-store",
    [PK_ERROR_INVALID_ARGUMENT] = "invalid-argument",
    [PK_ERROR_OUT_OF_MEMORY] = "out-of-memory",
};

PK_EXPORT const char *pk_error_code_name(pk_error_code code) {
    if ((int)code < PK_ERROR_MISSING || (int)code > PK_ERROR_OUT_OF_MEMORY) return NULL;
    return code_names[code];
}

PK_EXPORT pk_error_code pk_error_get_code(const pk_error *error) { return error->code; }

PK_EXPORT const char *pk_error_message(const pk_error *error) { return error->message; }

/* What sits at the path, its permissions and I/O make a file unreadable (EX_IOERR); everything
 * else is data that cannot be used (EX_DATAERR). */
PK_EXPORT int pk_error_exit_status(const pk_error *error) {
    switch (error->code) {
    case PK_ERROR_MISSING:
    case PK_ERROR_SYMLINK:
    case PK_ERROR_NOT_REGULAR_FILE:
    case PK_ERROR_IO:
    case PK_ERROR_INSECURE_PERMISSIONS:
        return 74;
    default:
        return 65;
    }
}

/* Memory running out leaves no room for a message: one static error stands for it, never freed,
 * so that no refusal is ever lost (a NULL error would read as success). */
static pk_error out_of_memory = {PK_ERROR_OUT_OF_MEMORY, (char *)"out of memory"};

PK_EXPORT void pk_error_free(pk_error *error) {
    if (error == NULL || error == &out_of_memory) return;
    free(error->message);
    free(error);
}

pk_error *pk_error_new(pk_error_code code, const char *format, ...) {
    pk_error *error = malloc(sizeof *error);
    if (error == NULL) return &out_of_memory;
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(NULL, 0, format, arguments);
    va_end(arguments);
    error->code = code;
    error->message = length < 0 ? NULL : malloc((size_t)length + 1);
    if (error->message == NULL) {
        free(error);
        return &out_of_memory;
    }
    va_start(arguments, format);
    vsnprintf(error->message, (size_t)length + 1, format, arguments);
    va_end(arguments);
    return error;
}

pk_error *pk_error_copy(const pk_error *error) {
    pk_error *copy = malloc(sizeof *copy);
    if (copy == NULL) return &out_of_memory;
    copy->code = error->code;
    copy->message = strdup(error->message);
    if (copy->message == NULL) {
        free(copy);
        return &out_of_memory;
    }
    return copy;
}

const char *pk_error_advice(pk_error_code code) {
    switch (code) {
    case PK_ERROR_SYMLINK:
    case PK_ERROR_NOT_REGULAR_FILE:
        return "only the daemon should write there; remove it and run `pinkeeper update`";
    case PK_ERROR_INSECURE_PERMISSIONS:
        return "make it and its directory writable by its owner only (or the directory sticky)";
    case PK_ERROR_MISSING:
        return "check the path in the store's configuration";
    case PK_ERROR_IO:
        return "check the file system and the permissions of the reading user";
    default:
        return "the last good version stays in use; run `pinkeeper update` to publish a new one";
    }
}
