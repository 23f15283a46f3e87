// See CCurl.h: libcurl resolved with dlopen/dlsym on first use, and released by pk_curl_unload.
#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

// The soname pinkeeper was built against (libcurl4 on Debian, the OpenSSL flavour).
#define PK_CURL_SONAME "libcurl.so.4"

// One pointer per libcurl function used, typed from libcurl's own declarations.
#define PK_CURL_FUNCTIONS(X) \
    X(curl_global_init) X(curl_global_cleanup) X(curl_version_info) X(curl_easy_strerror) \
    X(curl_easy_init) X(curl_easy_cleanup) \
    X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_slist_append) X(curl_slist_free_all) \
    X(curl_multi_init) X(curl_multi_cleanup) X(curl_multi_add_handle) X(curl_multi_remove_handle) \
    X(curl_multi_perform) X(curl_multi_poll) X(curl_multi_wakeup) X(curl_multi_info_read) \
    X(curl_multi_setopt) X(curl_share_init) X(curl_share_cleanup) X(curl_share_setopt)

#define PK_DECLARE(name) static __typeof__(&name) p_##name;
PK_CURL_FUNCTIONS(PK_DECLARE)

// Guards `library`, the pointers' transitions and failure_text: loading and unloading never overlap.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *library;
static char failure_text[512];
// Easy, multi and share handles alive: libcurl's code and data stay mapped while one exists.
static atomic_long live_handles;

// Every pointer back to NULL: a call after pk_curl_unload aborts in `unloaded` with the function's
// name instead of jumping into code that is no longer mapped.
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
        // curl_global_init is not thread-safe before 7.84: it runs here, under the lock, only on
        // the way from unloaded to loaded, when no handle exists and so no thread is in libcurl.
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

const char *pk_curl_unload(void) {
    pthread_mutex_lock(&lock);
    const char *refusal = NULL;
    long handles = atomic_load(&live_handles);
    if (library == NULL) {
        // Not loaded: nothing to do.
    } else if (handles > 0) {
        snprintf(failure_text, sizeof failure_text, "%ld libcurl handle%s still open", handles, handles == 1 ? "" : "s");
        refusal = failure_text;
    } else if (p_curl_version_info(CURLVERSION_NOW)->version_num < 0x075700) {
        // Before 7.87 (CURLOPT_QUICK_EXIT), a transfer abandoned while resolving could leave
        // libcurl's resolver thread running after its handle was gone.
        refusal = fail("libcurl before 7.87 may still run a resolver thread");
    } else {
        // The pairing's other half, under the same lock and with no handle left: no thread is in
        // libcurl. Since OpenSSL 1.1 it does not clean up OpenSSL, which the daemon keeps using.
        p_curl_global_cleanup();
        forget_functions();
        dlclose(library);
        library = NULL;
    }
    pthread_mutex_unlock(&lock);
    return refusal;
}

long pk_curl_open_handles(void) { return atomic_load(&live_handles); }

__attribute__((noreturn)) static void unloaded(const char *name) {
    fprintf(stderr, "pinkeeper: %s called while libcurl is not loaded\n", name);
    abort();
}

// The function's pointer, or abort: every wrapper calls through this.
#define PK_FN(name) (p_##name != NULL ? p_##name : (unloaded(#name), p_##name))

// Counts a handle libcurl gave out (NULL: none).
static void *counted(void *handle) {
    if (handle != NULL) atomic_fetch_add(&live_handles, 1);
    return handle;
}

static void released(void) { atomic_fetch_sub(&live_handles, 1); }

const char *pk_curl_easy_strerror(CURLcode code) { return PK_FN(curl_easy_strerror)(code); }
CURL *pk_curl_easy_init(void) { return counted(PK_FN(curl_easy_init)()); }
void pk_curl_easy_cleanup(CURL *easy) {
    if (easy == NULL) return;
    PK_FN(curl_easy_cleanup)(easy);
    released();
}
struct curl_slist *pk_curl_slist_append(struct curl_slist *list, const char *string) { return PK_FN(curl_slist_append)(list, string); }
void pk_curl_slist_free_all(struct curl_slist *list) { PK_FN(curl_slist_free_all)(list); }
CURLM *pk_curl_multi_init(void) { return counted(PK_FN(curl_multi_init)()); }
CURLMcode pk_curl_multi_cleanup(CURLM *multi) {
    CURLMcode code = PK_FN(curl_multi_cleanup)(multi);
    if (multi != NULL && code == CURLM_OK) released();
    return code;
}
CURLMcode pk_curl_multi_add_handle(CURLM *multi, CURL *easy) { return PK_FN(curl_multi_add_handle)(multi, easy); }
CURLMcode pk_curl_multi_remove_handle(CURLM *multi, CURL *easy) { return PK_FN(curl_multi_remove_handle)(multi, easy); }
CURLMcode pk_curl_multi_perform(CURLM *multi, int *running) { return PK_FN(curl_multi_perform)(multi, running); }
CURLMcode pk_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned extra_count, int timeout_ms, int *ready) {
    return PK_FN(curl_multi_poll)(multi, extra, extra_count, timeout_ms, ready);
}
CURLMcode pk_curl_multi_wakeup(CURLM *multi) { return PK_FN(curl_multi_wakeup)(multi); }
CURLMsg *pk_curl_multi_info_read(CURLM *multi, int *queued) { return PK_FN(curl_multi_info_read)(multi, queued); }
CURLSH *pk_curl_share_init(void) { return counted(PK_FN(curl_share_init)()); }
CURLSHcode pk_curl_share_cleanup(CURLSH *share) {
    CURLSHcode code = PK_FN(curl_share_cleanup)(share);
    if (share != NULL && code == CURLSHE_OK) released();
    return code;
}

// libcurl reads `long` options as long, pointers as pointers: each wrapper passes exactly one.
CURLcode pk_curl_set_long(CURL *h, CURLoption o, long v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_set_string(CURL *h, CURLoption o, const char *v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_set_pointer(CURL *h, CURLoption o, void *v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_set_data_cb(CURL *h, CURLoption o, pk_curl_data_cb v) { return PK_FN(curl_easy_setopt)(h, o, v); }
CURLcode pk_curl_get_long(CURL *h, CURLINFO i, long *v) { return PK_FN(curl_easy_getinfo)(h, i, v); }
CURLcode pk_curl_get_string(CURL *h, CURLINFO i, char **v) { return PK_FN(curl_easy_getinfo)(h, i, v); }
CURLMcode pk_curl_multi_set_long(CURLM *m, CURLMoption o, long v) { return PK_FN(curl_multi_setopt)(m, o, v); }
CURLSHcode pk_curl_share_data(CURLSH *s, curl_lock_data d) { return PK_FN(curl_share_setopt)(s, CURLSHOPT_SHARE, d); }
