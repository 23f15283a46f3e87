/* N, the leaf certificate's most specific common name: the last CN in the subject's DER order, as
 * Android's reader takes it. Its holder chose it: it only adds pins to compare. */
#include <stdlib.h>
#include <string.h>

#include <openssl/x509.h>

#include "internal.h"

/* NULL when there is none, or it is not text without NUL (it then adds nothing). */
char *pk_common_name(const X509 *certificate) {
    const X509_NAME *subject = X509_get_subject_name(certificate);
    int last = -1;
    for (int index = -1; (index = X509_NAME_get_index_by_NID(subject, NID_commonName, index)) >= 0;) last = index;
    if (last < 0) return NULL;
    const ASN1_STRING *data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, last));
    unsigned char *utf8 = NULL;
    int length = ASN1_STRING_to_UTF8(&utf8, data);
    if (length < 0) return NULL;
    char *copy = NULL;
    if (memchr(utf8, '\0', (size_t)length) == NULL) {
        copy = malloc((size_t)length + 1);
        if (copy != NULL) {
            memcpy(copy, utf8, (size_t)length);
            copy[length] = '\0';
        }
    }
    OPENSSL_free(utf8);
    return copy;
}

PK_EXPORT char *pk_certificate_common_name(const struct x509_st *certificate) {
    return certificate ? pk_common_name(certificate) : NULL;
}

PK_EXPORT const char *pk_version(void) { return "0.1.0"; }
