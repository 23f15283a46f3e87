// libcurl, loaded with dlopen on the first fetch rather than linked: Debian's libcurl pulls in
// some 30 shared objects (LDAP, RTMP, SSH, gnutls...) that every command would otherwise load and
// relocate at start, though only `run`, `update` and `import` ever fetch. Once loaded it stays
// for the life of the process: a daemon running for months would otherwise unload and reload a
// TLS stack thousands of times to save a few MiB of clean, shared file pages.
// libcurl's own headers give the types and constants; the functions are pk_curl_* here, each
// calling libcurl through a pointer resolved by pk_curl_load. The setopt/getinfo functions are
// variadic, which Swift cannot call: one typed function per argument kind.
#ifndef PINKEEPER_CCURL_H
#define PINKEEPER_CCURL_H
#include <curl/curl.h>

#if LIBCURL_VERSION_NUM < 0x075500
#error "pinkeeper needs libcurl >= 7.85 (CURLOPT_PROTOCOLS_STR)"
#endif

// Loads libcurl.so.4, resolves every function below and runs curl_global_init, unless it is
// loaded already (thread-safe). NULL on success, else why it failed (the dynamic loader's message);
// after a failure, the next call tries again. Every other function may be called only after
// success, and aborts, naming itself, when libcurl is not loaded.
const char *pk_curl_load(void);

const char *pk_curl_easy_strerror(CURLcode code);
CURL *pk_curl_easy_init(void);
void pk_curl_easy_cleanup(CURL *easy);
struct curl_slist *pk_curl_slist_append(struct curl_slist *list, const char *string);
void pk_curl_slist_free_all(struct curl_slist *list);
CURLM *pk_curl_multi_init(void);
CURLMcode pk_curl_multi_cleanup(CURLM *multi);
CURLMcode pk_curl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode pk_curl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode pk_curl_multi_perform(CURLM *multi, int *running);
CURLMcode pk_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned extra_count, int timeout_ms, int *ready);
CURLMcode pk_curl_multi_wakeup(CURLM *multi);
CURLMsg *pk_curl_multi_info_read(CURLM *multi, int *queued);
CURLSH *pk_curl_share_init(void);
CURLSHcode pk_curl_share_cleanup(CURLSH *share);

typedef size_t (*pk_curl_data_cb)(char *, size_t, size_t, void *);

CURLcode pk_curl_set_long(CURL *h, CURLoption o, long v);
CURLcode pk_curl_set_string(CURL *h, CURLoption o, const char *v);
CURLcode pk_curl_set_pointer(CURL *h, CURLoption o, void *v);
CURLcode pk_curl_set_data_cb(CURL *h, CURLoption o, pk_curl_data_cb v);
CURLcode pk_curl_get_long(CURL *h, CURLINFO i, long *v);
CURLcode pk_curl_get_string(CURL *h, CURLINFO i, char **v);
CURLMcode pk_curl_multi_set_long(CURLM *m, CURLMoption o, long v);
CURLSHcode pk_curl_share_data(CURLSH *s, curl_lock_data d);
#endif
