// glibc's allocator interface (mallopt, mallinfo2), which the Glibc module does not import: part
// of libc, nothing to link.
#ifndef PINKEEPER_CMALLOC_SHIM_H
#define PINKEEPER_CMALLOC_SHIM_H
#include <malloc.h>
#endif
