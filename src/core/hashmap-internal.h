/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A map from uint64_t keys to uint64_t values (open addressing, linear probing, backward-shift
 * deletion: no tombstones, so lookups stay fast after many removals), and the hash functions the
 * rest of the library uses. Keys are whatever the caller packs into 64 bits: an id pair
 * `(parent_id << 32 | frame_id)`, an address, an interned id. For string keys use fp_intern
 * and key on the id. Not thread-safe.
 */
#ifndef FP_CORE_HASHMAP_H
#define FP_CORE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default maximum number of entries (see fp_hashmap_set_limit()). */
#if SIZE_MAX > 0xffffffffu
#define FP_HASHMAP_DEFAULT_MAX ((size_t)1 << 32)
#else
#define FP_HASHMAP_DEFAULT_MAX ((size_t)1 << 24)
#endif

struct fp__hashmap_slot; /* private: {key, value}, key 0 = empty */

/*
 * Caller-owned map. Fields are read-only outside hashmap.c. Invariants: the slot count is a
 * power of two (or 0 before the first insertion); at most 3/4 of the slots are used; key 0 never
 * occupies a slot (it is kept in `zero_value` / `has_zero`, since 0 marks empty slots);
 * `count <= max_count`.
 */
struct fp_hashmap {
	struct fp__hashmap_slot *slots; /* NULL until the first insertion */
	size_t mask;                    /* slot count - 1 (0 while slots is NULL) */
	size_t count;                   /* entries, key 0 included */
	size_t max_count;               /* inserting beyond this fails with FP_ELIMIT */
	uint64_t zero_value;            /* value of key 0 when has_zero */
	bool has_zero;
};

/** Initialise an empty map (allocates nothing) with max_count FP_HASHMAP_DEFAULT_MAX. */
void fp_hashmap_init(struct fp_hashmap *m);

/** Free the slots; the map is left empty and initialised (limit kept). NULL is a no-op. */
void fp_hashmap_release(struct fp_hashmap *m);

/** Remove every entry, keeping the memory. */
void fp_hashmap_clear(struct fp_hashmap *m);

/** Set the maximum number of entries (0: FP_HASHMAP_DEFAULT_MAX). Existing entries stay. */
void fp_hashmap_set_limit(struct fp_hashmap *m, size_t max_count);

/**
 * Make room for `n` entries in total, so that inserting up to that many allocates nothing.
 * Returns FP_OK, FP_ENOMEM or FP_ELIMIT (n above the limit). The map is unchanged on failure.
 */
int fp_hashmap_reserve(struct fp_hashmap *m, size_t n);

/**
 * Insert `key` with `value`, or replace the value of an existing key. Returns FP_OK, FP_ENOMEM
 * (growth failed) or FP_ELIMIT (map full per its limit); on failure the map is unchanged.
 * Replacing never allocates and never fails.
 */
int fp_hashmap_put(struct fp_hashmap *m, uint64_t key, uint64_t value);

/** True if `key` is present; then *value (if not NULL) is set to its value. */
bool fp_hashmap_get(const struct fp_hashmap *m, uint64_t key, uint64_t *value);

/** Remove `key`; true if it was present. Never allocates. */
bool fp_hashmap_remove(struct fp_hashmap *m, uint64_t key);

/** Number of entries. */
size_t fp_hashmap_count(const struct fp_hashmap *m);

/**
 * Iterate: set `*iter = 0`, then call until it returns false; each true return gives one entry.
 * Order is unspecified. The map must not be modified during iteration, except by replacing
 * values of existing keys with fp_hashmap_put().
 */
bool fp_hashmap_next(const struct fp_hashmap *m, size_t *iter, uint64_t *key, uint64_t *value);

/**
 * 64-bit hash of `n` bytes (data may be NULL when n is 0). Fast, well distributed,
 * deterministic within one build; not cryptographic and not seeded, and not stable across
 * versions or byte orders: never persist it.
 */
uint64_t fp_hash_bytes(const void *data, size_t n);

/** Bijective 64-bit mixer: distinct inputs give distinct outputs; every input bit affects
 *  every output bit. Suitable for masking to a table index. */
uint64_t fp_hash_u64(uint64_t x);

#endif /* FP_CORE_HASHMAP_H */
