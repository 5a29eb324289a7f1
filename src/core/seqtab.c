/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uint32-sequence interning table of seqtab.h: a hash map from probe keys to ids (a sequence
 * hashing to h is looked for under the keys of h's probe sequence, collisions moving on to the
 * next key), entries pointing into one word array. Not the string interning table (intern.c).
 */
#include "fp-setup.h"

#include "core/core-internal.h"
#include "core/seqtab-internal.h"

/* The key of the i-th probe for a sequence hashing to h. */
static uint64_t probe_key(uint64_t h, uint32_t i)
{
	return fp_hash_u64(h + (uint64_t)i * 0x9e3779b97f4a7c15ull);
}

void fp__seqtab_init(struct fp__seqtab *t, size_t max_count, size_t max_words)
{
	memset(t, 0, sizeof(*t));
	fp_hashmap_init(&t->map);
	t->max_count = max_count;
	t->max_words = max_words;
	t->ready = 1;
}

void fp__seqtab_release(struct fp__seqtab *t)
{
	size_t max_count = t->max_count, max_words = t->max_words;

	if (t->ready)
		fp_hashmap_release(&t->map);
	fp_free(t->e);
	fp_free(t->words);
	fp__seqtab_init(t, max_count, max_words);
}

int fp__seqtab_add(struct fp__seqtab *t, const uint32_t *w, size_t n, uint32_t tag, uint32_t *id)
{
	uint64_t h, v;
	uint32_t i;
	int rc;

	if ((!w && n) || n > UINT32_MAX)
		return FP_EINVAL;
	if (!t->ready)
		fp__seqtab_init(t, t->max_count, t->max_words);
	h = fp_hash_bytes(w, n * sizeof(*w)) ^ fp_hash_u64((uint64_t)tag + 1);
	for (i = 0;; i++) {
		const struct fp__seqtab_entry *e;

		if (!fp_hashmap_get(&t->map, probe_key(h, i), &v))
			break;
		e = &t->e[v];
		if (e->len == n && e->tag == tag &&
		    (n == 0 || memcmp(&t->words[e->off], w, n * sizeof(*w)) == 0)) {
			*id = (uint32_t)v;
			return FP_OK;
		}
	}
	if (t->n >= t->max_count || t->n >= UINT32_MAX || t->nwords + n > t->max_words)
		return FP_ELIMIT;
	rc = fp__grow((void **)&t->e, &t->alloc, t->n + 1, sizeof(*t->e), t->max_count);
	if (!rc)
		rc = fp__grow((void **)&t->words, &t->words_alloc, t->nwords + n + 1,
			      sizeof(*t->words), t->max_words + 1);
	if (!rc)
		rc = fp_hashmap_put(&t->map, probe_key(h, i), t->n);
	if (rc)
		return rc;
	if (n)
		memcpy(&t->words[t->nwords], w, n * sizeof(*w));
	t->e[t->n].off = t->nwords;
	t->e[t->n].len = (uint32_t)n;
	t->e[t->n].tag = tag;
	t->nwords += n;
	*id = (uint32_t)t->n++;
	return FP_OK;
}

const uint32_t *fp__seqtab_get(const struct fp__seqtab *t, uint32_t id, uint32_t *n, uint32_t *tag)
{
	if (id >= t->n)
		return NULL;
	if (n)
		*n = t->e[id].len;
	if (tag)
		*tag = t->e[id].tag;
	return t->words + t->e[id].off;
}
