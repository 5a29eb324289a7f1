/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory for the TTIR parser: a capped bump allocator that owns everything a parsed module hands
 * out (freed in one call), and an open-addressing string map used for interning, #loc aliases and
 * function names. Small and private on purpose: the module must not depend on anything but libc
 * and the allocator hook. Not a general-purpose container.
 */
#include "fp-setup.h"

#include "ir/ttir-internal.h"

struct fp__ttir_chunk {
	struct fp__ttir_chunk *next;
	size_t size;
	size_t used;
	/* data follows, 16-byte aligned by the header size */
};

#define CHUNK_HDR ((sizeof(struct fp__ttir_chunk) + 15) & ~(size_t)15)
#define CHUNK_MIN ((size_t)64 << 10)

void fp__ttir_arena_release(struct fp__ttir_arena *a)
{
	struct fp__ttir_chunk *c = a->head, *next;

	while (c) {
		next = c->next;
		fp_free(c);
		c = next;
	}
	a->head = NULL;
	a->total = 0;
}

void *fp__ttir_arena_alloc(struct fp__ttir_arena *a, size_t n)
{
	struct fp__ttir_chunk *c = a->head;
	size_t need = (n + 7) & ~(size_t)7, size, total;
	char *mem;

	if (n == 0)
		need = 8;
	if (need < n)
		return NULL;
	if (!c || c->size - c->used < need) {
		size = need > CHUNK_MIN ? need : CHUNK_MIN;
		if (!fp__add_ok(size, CHUNK_HDR, &total) || !fp__add_ok(a->total, total, &total) ||
		    total > a->cap)
			return NULL;
		c = fp_malloc(CHUNK_HDR + size);
		if (!c)
			return NULL;
		c->next = a->head;
		c->size = size;
		c->used = 0;
		a->head = c;
		a->total = total;
	}
	mem = (char *)c + CHUNK_HDR + c->used;
	c->used += need;
	memset(mem, 0, need);
	return mem;
}

char *fp__ttir_arena_strndup(struct fp__ttir_arena *a, const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX)
		return NULL;
	d = fp__ttir_arena_alloc(a, n + 1);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* FNV-1a with a final avalanche, so the low bits used for the bucket are well mixed. */
uint64_t fp__ttir_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

void fp__ttir_strmap_release(struct fp__ttir_strmap *m)
{
	fp_free(m->slots);
	m->slots = NULL;
	m->mask = 0;
	m->count = 0;
}

static struct fp__ttir_slot *probe(struct fp__ttir_slot *slots, size_t mask, const char *s,
				   size_t n, uint64_t h)
{
	size_t i = (size_t)h & mask;

	for (;;) {
		struct fp__ttir_slot *sl = &slots[i];

		if (!sl->key)
			return sl;
		if (sl->hash == h && sl->len == n && memcmp(sl->key, s, n) == 0)
			return sl;
		i = (i + 1) & mask;
	}
}

const struct fp__ttir_slot *fp__ttir_strmap_get(const struct fp__ttir_strmap *m, const char *s,
						size_t n)
{
	struct fp__ttir_slot *sl;

	if (!m->slots || n > UINT32_MAX)
		return NULL;
	sl = probe(m->slots, m->mask, s, n, fp__ttir_hash(s, n));
	return sl->key ? sl : NULL;
}

static int rehash(struct fp__ttir_strmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : 64, i;
	struct fp__ttir_slot *slots;

	if (cap > SIZE_MAX / 2 / sizeof(*slots))
		return FP_ENOMEM;
	slots = fp_calloc(cap, sizeof(*slots));
	if (!slots)
		return FP_ENOMEM;
	if (m->slots) {
		for (i = 0; i <= m->mask; i++) {
			struct fp__ttir_slot *old = &m->slots[i];

			if (old->key)
				*probe(slots, cap - 1, old->key, old->len, old->hash) = *old;
		}
		fp_free(m->slots);
	}
	m->slots = slots;
	m->mask = cap - 1;
	return FP_OK;
}

int fp__ttir_strmap_put(struct fp__ttir_strmap *m, const char *s, size_t n, uint32_t value,
			struct fp__ttir_slot **slot, bool *added)
{
	struct fp__ttir_slot *sl;
	uint64_t h;
	int rc;

	if (n > UINT32_MAX)
		return FP_ELIMIT;
	/* keep the load factor at or below 1/2 so probes stay short */
	if (!m->slots || (m->count + 1) * 2 > m->mask + 1) {
		rc = rehash(m);
		if (rc)
			return rc;
	}
	h = fp__ttir_hash(s, n);
	sl = probe(m->slots, m->mask, s, n, h);
	*added = !sl->key;
	if (!sl->key) {
		sl->key = s;
		sl->len = (uint32_t)n;
		sl->hash = h;
		sl->value = value;
		m->count++;
	}
	*slot = sl;
	return FP_OK;
}
