// See CCurl.h: libcurl resolved on first use with dlopen/dlsym.
#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

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

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure;
static char failure_text[512];

static void load(void) {
    // RTLD_LAZY: each library binds as it was built to (as when it was linked at start);
    // RTLD_NOW would resolve every symbol of its ~30 dependencies before the first transfer.
    void *library = dlopen(PK_CURL_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure_text, sizeof failure_text, "%s", dlerror());
        failure = failure_text;
        return;
    }
#define PK_RESOLVE(name) \
    if ((p_##name = (__typeof__(&name))dlsym(library, #name)) == NULL) { \
        snprintf(failure_text, sizeof failure_text, "%s has no %s", PK_CURL_SONAME, #name); \
        failure = failure_text; \
        return; \
    }
    PK_CURL_FUNCTIONS(PK_RESOLVE)
    // Never dlclose: the handles libcurl gives out live as long as the process.
}

const char *pk_curl_load(void) {
    pthread_once(&once, load);
    return failure;
}

CURLcode pk_curl_global_init(long flags) { return p_curl_global_init(flags); }
const char *pk_curl_easy_strerror(CURLcode code) { return p_curl_easy_strerror(code); }
CURL *pk_curl_easy_init(void) { return p_curl_easy_init(); }
void pk_curl_easy_cleanup(CURL *easy) { p_curl_easy_cleanup(easy); }
struct curl_slist *pk_curl_slist_append(struct curl_slist *list, const char *string) { return p_curl_slist_append(list, string); }
void pk_curl_slist_free_all(struct curl_slist *list) { p_curl_slist_free_all(list); }
CURLM *pk_curl_multi_init(void) { return p_curl_multi_init(); }
CURLMcode pk_curl_multi_cleanup(CURLM *multi) { return p_curl_multi_cleanup(multi); }
CURLMcode pk_curl_multi_add_handle(CURLM *multi, CURL *easy) { return p_curl_multi_add_handle(multi, easy); }
CURLMcode pk_curl_multi_remove_handle(CURLM *multi, CURL *easy) { return p_curl_multi_remove_handle(multi, easy); }
CURLMcode pk_curl_multi_perform(CURLM *multi, int *running) { return p_curl_multi_perform(multi, running); }
CURLMcode pk_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned extra_count, int timeout_ms, int *ready) {
    return p_curl_multi_poll(multi, extra, extra_count, timeout_ms, ready);
}
CURLMcode pk_curl_multi_wakeup(CURLM *multi) { return p_curl_multi_wakeup(multi); }
CURLMsg *pk_curl_multi_info_read(CURLM *multi, int *queued) { return p_curl_multi_info_read(multi, queued); }
CURLSH *pk_curl_share_init(void) { return p_curl_share_init(); }
CURLSHcode pk_curl_share_cleanup(CURLSH *share) { return p_curl_share_cleanup(share); }

// libcurl reads `long` options as long, pointers as pointers: each wrapper passes exactly one.
CURLcode pk_curl_set_long(CURL *h, CURLoption o, long v) { return p_curl_easy_setopt(h, o, v); }
CURLcode pk_curl_set_string(CURL *h, CURLoption o, const char *v) { return p_curl_easy_setopt(h, o, v); }
CURLcode pk_curl_set_pointer(CURL *h, CURLoption o, void *v) { return p_curl_easy_setopt(h, o, v); }
CURLcode pk_curl_set_data_cb(CURL *h, CURLoption o, pk_curl_data_cb v) { return p_curl_easy_setopt(h, o, v); }
CURLcode pk_curl_get_long(CURL *h, CURLINFO i, long *v) { return p_curl_easy_getinfo(h, i, v); }
CURLcode pk_curl_get_string(CURL *h, CURLINFO i, char **v) { return p_curl_easy_getinfo(h, i, v); }
CURLMcode pk_curl_multi_set_long(CURLM *m, CURLMoption o, long v) { return p_curl_multi_setopt(m, o, v); }
CURLSHcode pk_curl_share_data(CURLSH *s, curl_lock_data d) { return p_curl_share_setopt(s, CURLSHOPT_SHARE, d); }
