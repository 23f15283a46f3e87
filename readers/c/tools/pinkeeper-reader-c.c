/* pinkeeper-reader-c: `pinkeeper validate` answered by libpinkeeper.
 *
 *   pinkeeper-reader-c validate [--cache-directory DIR] --store ID --name HOST
 *       (--fingerprint B64 [--depth N] | --certificate FILE) [--fallback-file FILE]
 *       [--expected-common-name CN]...
 *
 * Prints trusted, untrusted: … or empty: … and exits 0, 1 or 2; on standard error
 * "pinkeeper: <code>: …" and 65 (invalid content) or 74 (unreadable file), 66 for a certificate
 * file that cannot be read, "pinkeeper: usage: …" and 64 for a command line it does not take.
 * It reads no configuration, so the pins and domainsConfig of a signing key removed from the
 * daemon's configuration decide until the daemon drops them from the file; --help says so. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "pinkeeper.h"

static const char usage_text[] =
    "usage: pinkeeper-reader-c validate [--cache-directory DIR] --store ID --name HOST\n"
    "           (--fingerprint B64 [--depth N] | --certificate FILE)\n"
    "           [--fallback-file FILE] [--expected-common-name CN]...\n";

/* What --help prints after the usage. What the daemon drops when a signing key leaves its
 * configuration cannot be told from the file: it names the key that verified each pin and
 * domainsConfig, not the keys still configured. */
static const char help_text[] =
    "\n"
    "Answers trusted, untrusted or empty for a certificate of a host from the published cache, as\n"
    "pinkeeper validate does. Reads no configuration: after a signing key is removed from the daemon's\n"
    "configuration, its pins and its domainsConfig still decide here until the daemon drops them from\n"
    "the file (when it starts or reloads, or at `pinkeeper update`); the file names the key that\n"
    "verified each, not the keys still configured. `pinkeeper validate` without --cache-directory\n"
    "counts only what the configured keys vouch for.\n"
    "Exit status: 0 trusted; 1 untrusted; 2 empty (reject, and update the store); 64 usage error;\n"
    "65 bad data; 66 certificate file missing or unreadable; 74 cache or fallback file unreadable.\n";

static int help(void) {
    fputs(usage_text, stdout);
    fputs(help_text, stdout);
    return 0;
}

typedef struct options {
    const char *cache_directory, *store, *name, *fingerprint, *depth, *certificate, *fallback_file;
    const char **expected;
    size_t expected_count;
    bool expected_given, help;
} options;

static int usage(const char *problem) {
    fprintf(stderr, "pinkeeper: usage: %s\n%s", problem, usage_text);
    return 64;
}

/* Stores the value of a known option; false for one this command does not know. */
static bool take(options *given, const char *option, const char *value) {
    static const char *const names[] = {"--cache-directory", "--store", "--name", "--fingerprint", "--depth", "--certificate",
                                        "--fallback-file"};
    const char **slots[] = {&given->cache_directory, &given->store, &given->name, &given->fingerprint, &given->depth,
                            &given->certificate, &given->fallback_file};
    for (size_t index = 0; index < sizeof names / sizeof *names; index++) {
        if (strcmp(option, names[index]) == 0) {
            *slots[index] = value;
            return true;
        }
    }
    if (strcmp(option, "--expected-common-name") != 0) return false;
    given->expected_given = true;
    if (*value != '\0') given->expected[given->expected_count++] = value; /* "": the empty list */
    return true;
}

/* Options as --option VALUE or --option=VALUE; 0, or the usage status. */
static int parse(int argc, char **argv, options *given) {
    given->expected = calloc((size_t)argc + 1, sizeof *given->expected);
    for (int index = 0; index < argc; index++) {
        char option[64];
        const char *value = NULL, *equals = strchr(argv[index], '=');
        if (strcmp(argv[index], "--help") == 0 || strcmp(argv[index], "-h") == 0) {
            given->help = true;
            return 0;
        }
        size_t length = equals && strncmp(argv[index], "--", 2) == 0 ? (size_t)(equals - argv[index]) : strlen(argv[index]);
        if (length >= sizeof option) return usage("unknown option");
        memcpy(option, argv[index], length);
        option[length] = '\0';
        if (argv[index][length] == '=') {
            value = argv[index] + length + 1;
        } else if (index + 1 < argc) {
            value = argv[++index];
        } else {
            fprintf(stderr, "pinkeeper: usage: missing value for %s\n%s", option, usage_text);
            return 64;
        }
        if (!take(given, option, value)) return usage("unknown option (see below)");
    }
    return 0;
}

/* One to nine ASCII digits: no sign, space, separator or other script's digits. */
static bool valid_depth(const char *text) {
    size_t length = strlen(text);
    if (length == 0 || length > 9) return false;
    for (size_t index = 0; index < length; index++)
        if (text[index] < '0' || text[index] > '9') return false;
    return true;
}

/* The checks of a complete command line; 0 or the usage status. */
static int check(const options *given) {
    if (given->store == NULL) return usage("missing --store");
    if (given->name == NULL) return usage("missing --name");
    if (*given->name == '\0') return usage("--name must be the host a client connects to, not empty");
    if ((given->fingerprint == NULL) == (given->certificate == NULL)) return usage("give exactly one of --fingerprint or --certificate");
    if (given->depth != NULL && given->fingerprint == NULL)
        return usage("--depth goes with --fingerprint (a chain's depths are its positions)");
    if (given->depth != NULL && !valid_depth(given->depth)) return usage("--depth must be one to nine ASCII digits");
    unsigned char digest[32];
    if (given->fingerprint != NULL && !pk_parse_fingerprint(given->fingerprint, digest))
        return usage("--fingerprint must be the padded base64 or the hex of a 32-byte SHA-256 digest");
    return 0;
}

static int report(const pk_error *error) {
    fprintf(stderr, "pinkeeper: %s: %s\n", pk_error_code_name(pk_error_get_code(error)), pk_error_message(error));
    return pk_error_exit_status(error);
}

/* The certificates of a PEM file, leaf first; NULL after a message (*status set). */
static STACK_OF(X509) *read_chain(const char *path, int *status) {
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        fprintf(stderr, "pinkeeper: missing: certificate file %s cannot be read; give a PEM file of the chain, leaf first\n", path);
        *status = 66;
        return NULL;
    }
    STACK_OF(X509) *chain = sk_X509_new_null();
    X509 *certificate;
    while ((certificate = PEM_read_X509(file, NULL, NULL, NULL)) != NULL) sk_X509_push(chain, certificate);
    fclose(file);
    if (sk_X509_num(chain) == 0) {
        fprintf(stderr, "pinkeeper: invalid-content: certificate file %s holds no PEM certificate\n", path);
        sk_X509_free(chain);
        *status = 65;
        return NULL;
    }
    return chain;
}

/* Text safe in one line: controls and bidirectional marks written as \u{…} (a host may come from
 * anywhere); NULL stays NULL. */
static char *escaped(const char *text) {
    if (text == NULL) return NULL;
    size_t length = strlen(text);
    char *out = malloc(length * 8 + 1), *cursor = out;
    for (size_t index = 0; out != NULL && index < length; index++) {
        unsigned char c = (unsigned char)text[index];
        bool plain = c >= 0x20 && c != 0x7f && c != '\\';
        cursor += plain ? sprintf(cursor, "%c", c) : sprintf(cursor, "\\u{%x}", c);
    }
    if (out != NULL) *cursor = '\0';
    return out;
}

static void describe(pk_reader *reader, const options *given, pk_verdict verdict, const char *common_name) {
    char *one_form = pk_canonical_host(given->name), *host = escaped(one_form), *spelling = escaped(given->name);
    const char *store = given->store;
    if (verdict == PK_TRUSTED) {
        printf("trusted\n");
    } else if (host == NULL) {
        printf("untrusted: '%s' is no host name or address in one spelling; connect by its one form\n", spelling);
    } else if (verdict == PK_UNTRUSTED && !pk_reader_admits(reader, given->name, common_name)) {
        printf("untrusted: '%s' is not among the expected_common_names of store '%s'\n", host, store);
    } else if (verdict == PK_UNTRUSTED) {
        printf("untrusted: store '%s' pins '%s', but not this certificate\n", store, host);
    } else {
        printf("empty: store '%s' has no valid pin for '%s'; reject, and run `pinkeeper update --store %s`\n", store, host, store);
    }
    pk_free(one_form);
    free(host);
    free(spelling);
}

static int answer(pk_reader *reader, const options *given) {
    int64_t now = (int64_t)time(NULL);
    pk_verdict verdict;
    char *common_name = NULL;
    if (given->fingerprint != NULL) {
        unsigned char digest[32];
        pk_parse_fingerprint(given->fingerprint, digest);
        verdict = pk_verdict_fingerprint(reader, given->name, digest, given->depth ? strtoull(given->depth, NULL, 10) : 0, now);
    } else {
        int status = 65;
        STACK_OF(X509) *chain = read_chain(given->certificate, &status);
        if (chain == NULL) return status;
        verdict = pk_verdict_chain(reader, given->name, chain, now);
        common_name = pk_certificate_common_name(sk_X509_value(chain, 0));
        sk_X509_pop_free(chain, X509_free);
    }
    describe(reader, given, verdict, common_name);
    pk_free(common_name);
    return (int)verdict;
}

static int validate(const options *given) {
    pk_error *error = NULL;
    pk_reader *reader = pk_reader_open(given->cache_directory, given->store, given->fallback_file,
                                       given->expected_given ? given->expected : NULL, given->expected_count, &error);
    if (reader == NULL) {
        int status = pk_error_get_code(error) == PK_ERROR_INVALID_ARGUMENT ? usage(pk_error_message(error)) : report(error);
        pk_error_free(error);
        return status;
    }
    pk_error *problem = pk_reader_refresh(reader);
    int status = problem ? report(problem) : answer(reader, given);
    pk_error_free(problem);
    pk_reader_close(reader);
    return status;
}

int main(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return help();
    if (argc < 2 || strcmp(argv[1], "validate") != 0) return usage("the only command is 'validate'");
    options given = {0};
    int status = parse(argc - 2, argv + 2, &given);
    if (status == 0 && given.help) status = help();
    else if (status == 0 && (status = check(&given)) == 0) status = validate(&given);
    free(given.expected);
    return status;
}
