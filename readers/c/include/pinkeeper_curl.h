/* libpinkeeper with libcurl: pk_curl_ssl_ctx_function typed as CURLOPT_SSL_CTX_FUNCTION wants. */
#ifndef PINKEEPER_CURL_H
#define PINKEEPER_CURL_H

#include <curl/curl.h>
#include <pinkeeper.h>

#endif
