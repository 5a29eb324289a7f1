/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The u64 -> u64 hash map and the library's hash functions. Slots are {key, value} pairs in one
 * array; key 0 marks an empty slot, so the real key 0 lives beside the array. Deletion shifts
 * later members of the probe run back instead of leaving tombstones, which keeps every probe run
 * as short as if the removed keys had never been inserted.
 */
#include "fp-setup.h"

#include "core/hashmap-internal.h"

struct fp__hashmap_slot {
	uint64_t key;
	uint64_t value;
};

#define MIN_SLOTS ((size_t)16)

/* ---- hashing ----------------------------------------------------------------------------- */

/* Fractional parts of sqrt(2), sqrt(3), sqrt(5), sqrt(7): arbitrary odd-ish constants with
 * balanced bits and nothing up the sleeve. */
#define H_S0 0x6a09e667f3bcc909ull
#define H_S1 0xbb67ae8584caa73bull
#define H_S2 0x3c6ef372fe94f82bull
#define H_S3 0xa54ff53a5f1d36f1ull

uint64_t fp_hash_u64(uint64_t x)
{
	/* Offset, then xor-shift/multiply rounds: each step is invertible, so the whole is. */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* 64x64 -> 128 multiply folded to 64 bits: one instruction pair that mixes every input bit. */
static inline uint64_t fold_mul(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
	__extension__ typedef unsigned __int128 u128;
	u128 r = (u128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
	uint64_t lo = (ll & 0xffffffffu) | mid << 32;
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	return lo ^ hi;
#endif
}

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

uint64_t fp_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t left = n;
	uint64_t h = H_S0, a, b;

	/*
	 * 16-byte blocks: the state is rotated and multiplied (a bijection, so no block can erase
	 * what came before) and combined with the folded product of the block.
	 */
	while (left > 16) {
		h = (rotl(h, 29) * H_S3) ^ fold_mul(rd64(p) ^ H_S1, rd64(p + 8) ^ H_S2);
		p += 16;
		left -= 16;
	}
	/* The last 1..16 bytes, read as two possibly overlapping words (no byte loop). */
	if (left > 8) {
		a = rd64(p);
		b = rd64(p + left - 8);
	} else if (left >= 4) {
		a = rd32(p);
		b = rd32(p + left - 4);
	} else if (left > 0) {
		a = (uint64_t)p[0] << 16 | (uint64_t)p[left / 2] << 8 | p[left - 1];
		b = 0;
	} else {
		a = b = 0;
	}
	h = (rotl(h, 29) * H_S3) ^ fold_mul(a ^ H_S1, b ^ H_S2 ^ (uint64_t)n);
	return fp_hash_u64(h ^ (uint64_t)n * H_S0);
}

/* ---- the map ------------------------------------------------------------------------------ */

void fp_hashmap_init(struct fp_hashmap *m)
{
	memset(m, 0, sizeof(*m));
	m->max_count = FP_HASHMAP_DEFAULT_MAX;
}

void fp_hashmap_release(struct fp_hashmap *m)
{
	size_t max_count;

	if (!m)
		return;
	max_count = m->max_count;
	fp_free(m->slots);
	fp_hashmap_init(m);
	m->max_count = max_count;
}

void fp_hashmap_clear(struct fp_hashmap *m)
{
	if (m->slots)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
	m->has_zero = false;
	m->zero_value = 0;
}

void fp_hashmap_set_limit(struct fp_hashmap *m, size_t max_count)
{
	m->max_count = max_count ? max_count : FP_HASHMAP_DEFAULT_MAX;
}

size_t fp_hashmap_count(const struct fp_hashmap *m)
{
	return m->count;
}

static size_t nslots(const struct fp_hashmap *m)
{
	return m->slots ? m->mask + 1 : 0;
}

/* Entries that live in slots (all but key 0). */
static size_t slot_count(const struct fp_hashmap *m)
{
	return m->count - (m->has_zero ? 1 : 0);
}

/* Index of `key`'s slot, or of the empty slot ending its probe run. Needs slots. */
static size_t find_slot(const struct fp_hashmap *m, uint64_t key)
{
	size_t i = (size_t)fp_hash_u64(key) & m->mask;

	while (m->slots[i].key != key && m->slots[i].key != 0)
		i = (i + 1) & m->mask;
	return i;
}

static int resize(struct fp_hashmap *m, size_t n)
{
	struct fp__hashmap_slot *slots;
	size_t i, j;

	slots = fp_calloc(n, sizeof(*slots));
	if (!slots)
		return FP_ENOMEM;
	for (i = 0; i < nslots(m); i++) {
		uint64_t k = m->slots[i].key;

		if (!k)
			continue;
		for (j = (size_t)fp_hash_u64(k) & (n - 1); slots[j].key; j = (j + 1) & (n - 1))
			;
		slots[j] = m->slots[i];
	}
	fp_free(m->slots);
	m->slots = slots;
	m->mask = n - 1;
	return FP_OK;
}

/* Grow the slot array so that `want` slot entries fit under the 3/4 load factor. */
static int ensure_slots(struct fp_hashmap *m, size_t want)
{
	size_t n = nslots(m) ? nslots(m) : MIN_SLOTS;

	while (want > n / 4 * 3) {
		if (n > SIZE_MAX / sizeof(struct fp__hashmap_slot) / 2)
			return FP_ELIMIT;
		n *= 2;
	}
	if (n == nslots(m))
		return FP_OK;
	return resize(m, n);
}

int fp_hashmap_reserve(struct fp_hashmap *m, size_t n)
{
	if (n > m->max_count)
		return FP_ELIMIT;
	return ensure_slots(m, n);
}

int fp_hashmap_put(struct fp_hashmap *m, uint64_t key, uint64_t value)
{
	size_t i;
	int rc;

	if (key == 0) {
		if (!m->has_zero) {
			if (m->count >= m->max_count)
				return FP_ELIMIT;
			m->has_zero = true;
			m->count++;
		}
		m->zero_value = value;
		return FP_OK;
	}
	if (m->slots) {
		i = find_slot(m, key);
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return FP_OK;
		}
	}
	if (m->count >= m->max_count)
		return FP_ELIMIT;
	rc = ensure_slots(m, slot_count(m) + 1);
	if (rc)
		return rc;
	i = find_slot(m, key);
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->count++;
	return FP_OK;
}

bool fp_hashmap_get(const struct fp_hashmap *m, uint64_t key, uint64_t *value)
{
	size_t i;

	if (key == 0) {
		if (m->has_zero && value)
			*value = m->zero_value;
		return m->has_zero;
	}
	if (!m->slots)
		return false;
	i = find_slot(m, key);
	if (m->slots[i].key != key)
		return false;
	if (value)
		*value = m->slots[i].value;
	return true;
}

bool fp_hashmap_remove(struct fp_hashmap *m, uint64_t key)
{
	size_t i, j;

	if (key == 0) {
		if (!m->has_zero)
			return false;
		m->has_zero = false;
		m->zero_value = 0;
		m->count--;
		return true;
	}
	if (!m->slots)
		return false;
	i = find_slot(m, key);
	if (m->slots[i].key != key)
		return false;
	/*
	 * Backward shift: walk the rest of the run; an entry may move into the hole at i if the
	 * hole lies between its home slot and where it sits now (cyclically), i.e. if it is at
	 * least as far from home as from the hole.
	 */
	for (j = (i + 1) & m->mask; m->slots[j].key; j = (j + 1) & m->mask) {
		size_t home = (size_t)fp_hash_u64(m->slots[j].key) & m->mask;

		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->slots[i].value = 0;
	m->count--;
	return true;
}

bool fp_hashmap_next(const struct fp_hashmap *m, size_t *iter, uint64_t *key, uint64_t *value)
{
	/* Position 0 is key 0; position p > 0 is slot p - 1. */
	if (*iter == 0) {
		*iter = 1;
		if (m->has_zero) {
			if (key)
				*key = 0;
			if (value)
				*value = m->zero_value;
			return true;
		}
	}
	for (; *iter <= nslots(m); (*iter)++) {
		const struct fp__hashmap_slot *s = &m->slots[*iter - 1];

		if (s->key) {
			(*iter)++;
			if (key)
				*key = s->key;
			if (value)
				*value = s->value;
			return true;
		}
	}
	return false;
}
