/* SPDX-License-Identifier: Apache-2.0 */
/*
 * String interning. Strings live in an arena (never moved, never freed one by one); `entries`
 * maps an id to its string; `slots` is an open-addressing (linear probing) table whose 64-bit
 * slots hold `hash32 << 32 | (id + 1)`, 0 meaning empty. Keeping the hash in the slot lets a
 * probe skip non-matching strings without touching them, and lets growth rehash from the table
 * alone. There is no removal, so no tombstones.
 */
#include "fp-setup.h"

#include "core/arena-internal.h"
#include "core/hashmap-internal.h"
#include "core/intern-internal.h"

struct entry {
	const char *s; /* NUL-terminated copy in the arena */
	size_t len;
};

struct fp_intern {
	struct fp_arena arena;
	struct entry *entries; /* by id */
	uint32_t count;
	uint32_t entries_alloc;
	uint64_t *slots; /* NULL until the first add */
	size_t mask;     /* slot count - 1; slot count is a power of two */
};

#define MIN_SLOTS ((size_t)16)

struct fp_intern *fp_intern_new_capped(size_t max_bytes)
{
	struct fp_intern *in = fp_calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	fp_arena_init(&in->arena, 0, max_bytes);
	return in;
}

struct fp_intern *fp_intern_new(void)
{
	return fp_intern_new_capped(0);
}

void fp_intern_free(struct fp_intern *in)
{
	if (!in)
		return;
	fp_arena_release(&in->arena);
	fp_free(in->entries);
	fp_free(in->slots);
	fp_free(in);
}

/* The slot check value: 32 bits of the hash, whose low bits also pick the home slot. */
static uint32_t hash32(const char *s, size_t len)
{
	uint64_t h = fp_hash_bytes(s, len);

	return (uint32_t)(h ^ (h >> 32));
}

/* Slot index holding the string, or of the empty slot where it would go. */
static size_t probe(const struct fp_intern *in, const char *s, size_t len, uint32_t h)
{
	size_t i = h & in->mask;

	for (;; i = (i + 1) & in->mask) {
		uint64_t v = in->slots[i];
		const struct entry *e;

		if (v == 0)
			return i;
		if ((uint32_t)(v >> 32) != h)
			continue;
		e = &in->entries[(uint32_t)v - 1];
		if (e->len == len && (len == 0 || memcmp(e->s, s, len) == 0))
			return i;
	}
}

/* Double the slot table (or create it). Rehashing reads only the old slots. */
static int grow_slots(struct fp_intern *in)
{
	size_t n = in->slots ? (in->mask + 1) * 2 : MIN_SLOTS, i, j;
	uint64_t *slots;

	if (n > SIZE_MAX / sizeof(*slots) / 2)
		return FP_ELIMIT;
	slots = fp_calloc(n, sizeof(*slots));
	if (!slots)
		return FP_ENOMEM;
	if (in->slots) {
		for (i = 0; i <= in->mask; i++) {
			uint64_t v = in->slots[i];

			if (!v)
				continue;
			for (j = (uint32_t)(v >> 32) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
				;
			slots[j] = v;
		}
		fp_free(in->slots);
	}
	in->slots = slots;
	in->mask = n - 1;
	return FP_OK;
}

static int grow_entries(struct fp_intern *in)
{
	uint64_t n = in->entries_alloc ? (uint64_t)in->entries_alloc * 2 : 16;
	struct entry *e;

	if (n > FP_INTERN_MAX_COUNT)
		n = FP_INTERN_MAX_COUNT;
	e = fp_reallocarray(in->entries, (size_t)n, sizeof(*e));
	if (!e)
		return FP_ENOMEM;
	in->entries = e;
	in->entries_alloc = (uint32_t)n;
	return FP_OK;
}

int fp_intern_add(struct fp_intern *in, const char *s, size_t len, uint32_t *id)
{
	uint32_t h;
	size_t i;
	char *copy;
	int rc;

	if (!in || (!s && len))
		return FP_EINVAL;
	h = hash32(s, len);
	if (in->slots) {
		i = probe(in, s, len, h);
		if (in->slots[i]) {
			if (id)
				*id = (uint32_t)in->slots[i] - 1;
			return FP_OK;
		}
	}

	/* A new string. Make all room first so that a failure leaves no trace. */
	if (in->count >= FP_INTERN_MAX_COUNT)
		return FP_ELIMIT;
	/* Keep the load factor at or below 3/4: short linear probe runs. */
	if (!in->slots || (size_t)in->count + 1 > (in->mask + 1) / 4 * 3) {
		rc = grow_slots(in);
		if (rc)
			return rc;
	}
	if (in->count == in->entries_alloc) {
		rc = grow_entries(in);
		if (rc)
			return rc;
	}
	copy = fp_arena_strndup(&in->arena, s ? s : "", len);
	if (!copy)
		return fp_arena_last_error(&in->arena);

	i = probe(in, s, len, h);
	in->entries[in->count].s = copy;
	in->entries[in->count].len = len;
	in->slots[i] = (uint64_t)h << 32 | (in->count + 1);
	if (id)
		*id = in->count;
	in->count++;
	return FP_OK;
}

int fp_intern_add_str(struct fp_intern *in, const char *s, uint32_t *id)
{
	if (!s)
		return FP_EINVAL;
	return fp_intern_add(in, s, strlen(s), id);
}

int fp_intern_find(const struct fp_intern *in, const char *s, size_t len, uint32_t *id)
{
	size_t i;

	if (!in || (!s && len))
		return FP_EINVAL;
	if (!in->slots)
		return FP_ENOENT;
	i = probe(in, s, len, hash32(s, len));
	if (!in->slots[i])
		return FP_ENOENT;
	if (id)
		*id = (uint32_t)in->slots[i] - 1;
	return FP_OK;
}

const char *fp_intern_str(const struct fp_intern *in, uint32_t id, size_t *len)
{
	if (!in || id >= in->count)
		return NULL;
	if (len)
		*len = in->entries[id].len;
	return in->entries[id].s;
}

uint32_t fp_intern_count(const struct fp_intern *in)
{
	return in ? in->count : 0;
}

size_t fp_intern_memory(const struct fp_intern *in)
{
	if (!in)
		return 0;
	return sizeof(*in) + fp_arena_reserved(&in->arena) +
	       (size_t)in->entries_alloc * sizeof(struct entry) +
	       (in->slots ? (in->mask + 1) * sizeof(uint64_t) : 0);
}
