// libcrypto (OpenSSL 3) headers for signature verification, hashing and X.509 parsing.
#ifndef PINKEEPER_CLIBCRYPTO_SHIM_H
#define PINKEEPER_CLIBCRYPTO_SHIM_H
#include <openssl/opensslv.h>
#if OPENSSL_VERSION_MAJOR < 3
#error "pinkeeper needs OpenSSL >= 3"
#endif
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#endif
