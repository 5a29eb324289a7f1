/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The allocator hook. Every allocation the library makes goes through these three functions,
 * so an embedding program can route memory to its own allocator and the tests can fail the
 * N-th allocation on purpose (the out-of-memory sweep). Not thread-safe to change while the
 * library is in use: set it once, before anything else.
 */
#ifndef FLAGPRISM_ALLOC_H
#define FLAGPRISM_ALLOC_H

#include <stddef.h>

#include <flagprism/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void *(*fp_malloc_fn)(size_t size);
typedef void *(*fp_realloc_fn)(void *ptr, size_t size);
typedef void (*fp_free_fn)(void *ptr);

/**
 * Replace the allocator. All three must be given, or all three NULL to restore libc's.
 * Returns FP_OK or FP_EINVAL (a mix of NULL and non-NULL).
 */
FP_EXTERN int fp_set_allocator(fp_malloc_fn m, fp_realloc_fn r, fp_free_fn f);

/* Library-wide wrappers, for clients that hand memory to or take memory from the library. */
FP_EXTERN void *fp_malloc(size_t size);
FP_EXTERN void *fp_calloc(size_t n, size_t size); /* overflow-checked; zeroed */
FP_EXTERN void *fp_realloc(void *ptr, size_t size);
FP_EXTERN void fp_free(void *ptr); /* NULL is a no-op */
/** Array growth helper: realloc to n * size bytes, NULL (ptr untouched) on overflow or OOM. */
FP_EXTERN void *fp_reallocarray(void *ptr, size_t n, size_t size);
/** Copy of a NUL-terminated string, or NULL on OOM. */
FP_EXTERN char *fp_strdup(const char *s);
/** Copy of n bytes plus a terminating NUL, or NULL on OOM. */
FP_EXTERN char *fp_strndup(const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_ALLOC_H */
