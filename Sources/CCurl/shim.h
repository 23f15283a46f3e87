// libcurl's curl_easy_setopt/curl_easy_getinfo/curl_multi_setopt/curl_share_setopt are variadic, which Swift cannot call.
// One typed inline wrapper per argument kind; libcurl reads `long` options as long.
#ifndef PINKEEPER_CCURL_SHIM_H
#define PINKEEPER_CCURL_SHIM_H
#include <curl/curl.h>

#if LIBCURL_VERSION_NUM < 0x075500
#error "pinkeeper needs libcurl >= 7.85 (CURLOPT_PROTOCOLS_STR)"
#endif

typedef size_t (*pk_curl_data_cb)(char *, size_t, size_t, void *);
typedef int (*pk_curl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);

static inline CURLcode pk_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_data_cb(CURL *h, CURLoption o, pk_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_xferinfo_cb(CURL *h, pk_curl_xferinfo_cb v) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }
static inline CURLcode pk_curl_get_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode pk_curl_get_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode pk_curl_multi_set_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLSHcode pk_curl_share_data(CURLSH *s, curl_lock_data d) { return curl_share_setopt(s, CURLSHOPT_SHARE, d); }
#endif
