/* The examples' shared parts: their command line and the URL they fetch. */
#ifndef PINNED_GET_URL_H
#define PINNED_GET_URL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct request {
    const char *cache_directory, *store, *cacert, *url;
    char host[256], port[8], path[1024]; /* host without brackets */
} request;

static int usage(const char *program) {
    fprintf(stderr, "usage: %s --cache-directory DIR --store ID [--cacert FILE] https://HOST[:PORT]/PATH\n", program);
    return 2;
}

/* https://HOST[:PORT][/PATH], HOST a name, an IPv4 address or [an IPv6 address]. */
static bool parse_url(request *wanted) {
    const char *cursor = wanted->url, *end;
    if (strncmp(cursor, "https://", 8) != 0) return false;
    cursor += 8;
    size_t length;
    if (*cursor == '[') {
        end = strchr(cursor, ']');
        if (end == NULL) return false;
        length = (size_t)(end - cursor - 1), cursor++, end++;
    } else {
        end = cursor + strcspn(cursor, ":/");
        length = (size_t)(end - cursor);
    }
    if (length == 0 || length >= sizeof wanted->host) return false;
    memcpy(wanted->host, cursor, length);
    wanted->host[length] = '\0';
    size_t port_length = *end == ':' ? strcspn(end + 1, "/") : 0;
    if (port_length >= sizeof wanted->port) return false;
    snprintf(wanted->port, sizeof wanted->port, "%.*s", (int)(port_length ? port_length : 3), port_length ? end + 1 : "443");
    const char *path = end + (*end == ':' ? 1 + port_length : 0);
    snprintf(wanted->path, sizeof wanted->path, "%s", *path == '/' ? path : "/");
    return *path == '/' || *path == '\0';
}

static bool parse_arguments(int argc, char **argv, request *wanted) {
    memset(wanted, 0, sizeof *wanted);
    for (int index = 1; index < argc; index++) {
        const char **slot = strcmp(argv[index], "--cache-directory") == 0 ? &wanted->cache_directory
                            : strcmp(argv[index], "--store") == 0       ? &wanted->store
                            : strcmp(argv[index], "--cacert") == 0      ? &wanted->cacert
                                                                        : NULL;
        if (slot != NULL && index + 1 < argc) *slot = argv[++index];
        else if (slot == NULL && wanted->url == NULL) wanted->url = argv[index];
        else return false;
    }
    return wanted->cache_directory && wanted->store && wanted->url && parse_url(wanted);
}

#endif
