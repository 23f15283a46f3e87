// See CCurl.h: libcurl resolved with dlopen/dlsym on first use, and kept for the life of the process.
#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

// The soname pinkeeper was built against (libcurl4 on Debian, the OpenSSL flavour).
#define PK_CURL_SONAME "libcurl.so.4"

// One pointer per libcurl function used, typed from libcurl's own declarations.
#define PK_CURL_FUNCTIONS(X) \
    X(curl_global_init) X(curl_easy_strerror) X(curl_easy_init) X(curl_easy_cleanup) \
    X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_slist_append) X(curl_slist_free_all) \
    X(curl_multi_init) X(curl_multi_cleanup) X(curl_multi_add_handle) X(curl_multi_remove_handle) \
    X(curl_multi_perform) X(curl_multi_poll) X(curl_multi_wakeup) X(curl_multi_info_read) \
    X(curl_multi_setopt) X(curl_share_init) X(curl_share_cleanup) X(curl_share_setopt)

#define PK_DECLARE(name) static __typeof__(&name) p_##name;
PK_CURL_FUNCTIONS(PK_DECLARE)

// Guards `library`, the pointers and failure_text while a load runs: two first fetches at once
// load it once. Once loaded, it stays: the pointers never change again, and callers read them
// without the lock (each caller's own successful pk_curl_load ordered the writes before its reads).
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *library;
static char failure_text[512];

// Every pointer back to NULL after a failed load, so a later fetch tries again (libcurl4 may have
// been installed meanwhile) and a stray call aborts in `not_loaded` naming the function.
static void forget_functions(void) {
#define PK_FORGET(name) p_##name = NULL;
    PK_CURL_FUNCTIONS(PK_FORGET)
}

static const char *fail(const char *text) {
    snprintf(failure_text, sizeof failure_text, "%s", text);
    return failure_text;
}

const char *pk_curl_load(void) {
    pthread_mutex_lock(&lock);
    const char *failure = NULL;
    if (library == NULL) {
        // RTLD_LAZY: each library binds as it was built to (as when it was linked at start);
        // RTLD_NOW would resolve every symbol of its ~30 dependencies before the first transfer.
        library = dlopen(PK_CURL_SONAME, RTLD_LAZY | RTLD_LOCAL);
        if (library == NULL) {
            const char *reason = dlerror();  // once: the call clears it
            failure = fail(reason != NULL ? reason : "dlopen failed");
        }
#define PK_RESOLVE(name) \
        if (failure == NULL && (p_##name = (__typeof__(&name))dlsym(library, #name)) == NULL) { \
            snprintf(failure_text, sizeof failure_text, "%s has no %s", PK_CURL_SONAME, #name); \
            failure = failure_text; \
        }
        PK_CURL_FUNCTIONS(PK_RESOLVE)
        // curl_global_init is not thread-safe before 7.84: it runs here, under the lock, once per
        // process (the library is never unloaded, so curl_global_cleanup is never needed), before
        // any handle exists and so while no thread is in libcurl.
        if (failure == NULL && p_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) failure = fail("curl_global_init failed");
        if (failure != NULL && library != NULL) {
            dlclose(library);
            library = NULL;
        }
        if (failure != NULL) forget_functions();
    }
    pthread_mutex_unlock(&lock);
    return failure;
}

__attribute__((noreturn)) static void not_loaded(const char *name) {
    fprintf(stderr, "pinkeeper: %s called before libcurl was loaded\n", name);
    abort();
}

// The function's pointer, or abort naming it (a call without a successful pk_curl_load is a bug):
// every wrapper calls through this.
#define PK_FN(name) (p_##name != NULL ? p_##name : (not_loaded(#name), p_##name))

const char *pk_curl_easy_strerror(CURLcode code) { return PK_FN(curl_easy_strerror)(code); }
CURL *pk_curl_easy_init(void) { return PK_FN(curl_easy_init)(); }
void pk_curl_easy_cleanup(CURL *easy) { PK_FN(curl_easy_cleanup)(easy); }
struct curl_slist *pk_curl_slist_append(struct curl_slist *list, const char *string) { return PK_FN(curl_slist_append)(list, string); }
void pk_curl_slist_free_all(struct curl_slist *list) { PK_FN(curl_slist_free_all)(list); }
CURLM *pk_curl_multi_init(void) { return PK_FN(curl_multi_init)(); }
CURLMcode pk_curl_multi_cleanup(CURLM *multi) { return PK_FN(curl_multi_cleanup)(multi); }
CURLMcode pk_curl_multi_add_handle(CURLM *multi, CURL *easy) { return PK_FN(curl_multi_add_handle)(multi, easy); }
CURLMcode pk_curl_multi_remove_handle(CURLM *multi, CURL *easy) { return PK_FN(curl_multi_remove_handle)(multi, easy); }
CURLMcode pk_curl_multi_perform(CURLM *multi, int *running) { return PK_FN(curl_multi_perform)(multi, running); }
CURLMcode pk_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned extra_count, int timeout_ms, int *ready) {
    return PK_FN(curl_multi_poll)(multi, extra, extra_count, timeout_ms, ready);
}
CURLMcode pk_curl_multi_wakeup(CURLM *multi) { return PK_FN(curl_multi_wakeup)(multi); }
CURLMsg *pk_curl_multi_info_read(CURLM *multi, int *queued) { return PK_FN(curl_multi_info_read)(multi, queued); }
CURLSH *pk_curl_share_init(void) { return PK_FN(curl_share_init)(); }
CURLSHcode pk_curl_share_cleanup(CURLSH *share) { return PK_FN(curl_share_cleanup)(share); }

// libcurl reads `long` options as long, pointers as pointers: each wrapper passes exactly one.
CURLcode pk_curl_set_long(CURL *h, CURLoption o, long v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_set_string(CURL *h, CURLoption o, const char *v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_set_pointer(CURL *h, CURLoption o, void *v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_set_data_cb(CURL *h, CURLoption o, pk_curl_data_cb v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_get_long(CURL *h, CURLINFO i, long *v) { return PK_FN(curl_easy_getinfo)(h, i, v); }
CURLcode pk_curl_get_string(CURL *h, CURLINFO i, char **v) { return PK_FN(curl_easy_getinfo)(h, i, v); }
CURLMcode pk_curl_multi_set_long(CURLM *m, CURLMoption o, long v) { return PK_FN(curl_multi_setopt)(m, o, v); }
CURLSHcode pk_curl_share_data(CURLSH *s, curl_lock_data d) { return PK_FN(curl_share_setopt)(s, CURLSHOPT_SHARE, d); }
