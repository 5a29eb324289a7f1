/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bump allocator for data that lives and dies together (a profile's tree nodes, interned
 * strings, a parsed document). Memory comes in blocks chained from the arena; single objects are
 * never freed, the whole arena is released at once. Every arena has a cap on the bytes it takes
 * from the allocator, so hostile input cannot make it grow without bound. Not thread-safe: one
 * arena per owner, or external locking.
 */
#ifndef FP_CORE_ARENA_H
#define FP_CORE_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* Defaults used when fp_arena_init() is given 0. */
#define FP_ARENA_DEFAULT_BLOCK ((size_t)64 << 10) /* first block: 64 KiB */
#if SIZE_MAX > 0xffffffffu
#define FP_ARENA_DEFAULT_CAP ((size_t)1 << 36) /* 64 GiB */
#else
#define FP_ARENA_DEFAULT_CAP ((size_t)1 << 30) /* 1 GiB */
#endif
/* Regular blocks double in size up to this (or block_size, if larger). */
#define FP_ARENA_MAX_BLOCK ((size_t)1 << 20)

struct fp__arena_block; /* private */

/*
 * Caller-owned arena. Invariants: `ptr <= end`, both inside the head block (or both NULL before
 * the first allocation); `reserved <= cap`. Treat the fields as read-only outside arena.c; they
 * are public only so that the struct can live on the stack or inside other structs.
 */
struct fp_arena {
	struct fp__arena_block *head; /* block being carved; older blocks chained behind it */
	char *ptr;                    /* next free byte in the head block */
	char *end;                    /* one past the last usable byte of the head block */
	size_t block_size;            /* size of the first regular block */
	size_t next_block;            /* size of the next regular block (doubles, bounded) */
	size_t cap;                   /* maximum of `reserved` */
	size_t reserved;              /* bytes obtained from the allocator, headers included */
	size_t used;                  /* bytes handed out, alignment padding included */
	int last_error;               /* status of the most recent failed allocation, or 0 */
};

/**
 * Initialise an empty arena; allocates nothing (the first block comes with the first
 * allocation). `block_size` 0 means FP_ARENA_DEFAULT_BLOCK, `cap` 0 means FP_ARENA_DEFAULT_CAP.
 * `cap` bounds everything the arena takes from the allocator, block headers included.
 */
void fp_arena_init(struct fp_arena *a, size_t block_size, size_t cap);

/**
 * Free every block; all pointers the arena handed out become invalid. The arena is left
 * initialised and empty (same block size and cap), ready for reuse. NULL is a no-op.
 */
void fp_arena_release(struct fp_arena *a);

/**
 * `size` bytes aligned to 16, uninitialised, valid until fp_arena_release(). `size` 0 gives a
 * valid unique pointer. NULL on out-of-memory or when the cap would be exceeded; then
 * fp_arena_last_error() says which (FP_ENOMEM or FP_ELIMIT) and the arena is unchanged.
 */
void *fp_arena_alloc(struct fp_arena *a, size_t size);

/**
 * Like fp_arena_alloc() with an explicit alignment: `align` must be a power of two no larger
 * than 4096 (else NULL with FP_EINVAL). Use 1 for byte data such as strings.
 */
void *fp_arena_alloc_align(struct fp_arena *a, size_t size, size_t align);

/** Zeroed array of `n` elements of `size` bytes, 16-aligned; NULL also when n * size overflows. */
void *fp_arena_calloc(struct fp_arena *a, size_t n, size_t size);

/**
 * Copy of the `n` bytes at `s` followed by a NUL (so `s` need not be NUL-terminated and may
 * contain NULs). The copy is byte-aligned. NULL on failure as fp_arena_alloc().
 */
char *fp_arena_strndup(struct fp_arena *a, const char *s, size_t n);

/** Bytes handed out so far (each allocation counts its size plus its alignment padding). */
size_t fp_arena_used(const struct fp_arena *a);

/** Bytes taken from the allocator so far (what the cap applies to). */
size_t fp_arena_reserved(const struct fp_arena *a);

/** Status of the most recent failed allocation (FP_ENOMEM, FP_ELIMIT, FP_EINVAL), or 0. */
int fp_arena_last_error(const struct fp_arena *a);

#endif /* FP_CORE_ARENA_H */
