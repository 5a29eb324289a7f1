/* SPDX-License-Identifier: Apache-2.0 */
/*
 * String interning: each distinct byte string gets a small dense id (0, 1, 2, ... in order of
 * first insertion) that never changes, so the rest of FlagPrism stores and compares names as
 * uint32_t ids instead of strings (kernel names, source paths, frame labels). The strings are
 * copied into an arena owned by the table. This is not a general map (no values, no removal) and
 * it is not thread-safe.
 *
 * Cost: add and find are expected O(len) (one hash, about one probe); growth rehashes in O(count)
 * without touching the strings. Memory is the string bytes plus about 30 bytes per string.
 */
#ifndef FP_CORE_INTERN_H
#define FP_CORE_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* Hard limit on the number of strings in one table (ids are below it). */
#define FP_INTERN_MAX_COUNT ((uint32_t)1 << 31)

/*
 * Opaque heap object: owns a copy of every string added. Invariants: ids are exactly
 * 0..count-1; id i maps to the i-th distinct string added; no two ids have equal strings.
 */
struct fp_intern;

/**
 * New empty table with the default cap on string storage (FP_ARENA_DEFAULT_CAP bytes). NULL on
 * out-of-memory. Free with fp_intern_free().
 */
struct fp_intern *fp_intern_new(void);

/** Same, with string storage capped at `max_bytes` (0: default). NULL on out-of-memory. */
struct fp_intern *fp_intern_new_capped(size_t max_bytes);

/** Free the table and every string it holds. NULL is a no-op. */
void fp_intern_free(struct fp_intern *in);

/**
 * Intern the `len` bytes at `s` (any bytes, NULs included; `s` may be NULL when len is 0).
 * Sets *id (if `id` is not NULL) to the string's id, new or existing. Returns FP_OK, FP_ENOMEM,
 * FP_ELIMIT (FP_INTERN_MAX_COUNT strings or the byte cap reached) or FP_EINVAL (NULL table, or
 * NULL `s` with len > 0). On failure the table is unchanged and *id is not written.
 */
int fp_intern_add(struct fp_intern *in, const char *s, size_t len, uint32_t *id);

/** fp_intern_add() for a NUL-terminated string. */
int fp_intern_add_str(struct fp_intern *in, const char *s, uint32_t *id);

/**
 * Look a string up without adding it. Returns FP_OK and sets *id (if not NULL), FP_ENOENT if
 * absent, or FP_EINVAL as fp_intern_add().
 */
int fp_intern_find(const struct fp_intern *in, const char *s, size_t len, uint32_t *id);

/**
 * The string of an id: NUL-terminated (the terminator is not counted in *len), borrowed, valid
 * until fp_intern_free() (adding more strings never moves it). Sets *len if `len` is not NULL.
 * NULL if `id` is out of range or `in` is NULL.
 */
const char *fp_intern_str(const struct fp_intern *in, uint32_t id, size_t *len);

/** Number of distinct strings (= the next id); 0 for NULL. */
uint32_t fp_intern_count(const struct fp_intern *in);

/** Bytes of memory the table holds (strings, id array and hash table). */
size_t fp_intern_memory(const struct fp_intern *in);

#endif /* FP_CORE_INTERN_H */
