/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TTIR parser's string map: open addressing from a string (borrowed: the key pointer is kept
 * as given, so keys live in the module's arena or the input) to a uint32 value and its slot, used
 * for interning, #loc aliases, types, function names and the estimator's constants. The module's
 * memory is core's arena (ttir.c). Not a general-purpose container: core's intern and hash map
 * copy keys or take integer keys; this one keeps a pointer and an updatable slot.
 */
#include "fp-setup.h"

#include "ir/ttir-internal.h"

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
