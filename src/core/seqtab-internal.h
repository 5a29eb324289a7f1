/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interning of uint32 sequences: each distinct (sequence, tag) pair gets a dense id (0, 1, 2, ...
 * in order of first insertion) that never changes, and the words live in one growable array.
 * For the profiler's call paths (frame name ids, tagged with a note) and launch contexts (what
 * a thread has open in every session). Capped in entries and words, so hostile input cannot make
 * it grow without bound. Not thread-safe (its owner locks) and not a map with values: an owner
 * that needs more per id keeps a parallel array.
 */
#ifndef FP_CORE_SEQTAB_H
#define FP_CORE_SEQTAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/hashmap-internal.h"

struct fp__seqtab_entry {
	size_t off;   /* first word in words[] */
	uint32_t len; /* words */
	uint32_t tag; /* part of the identity (a call path's note) */
};

/* Caller-owned; zero-initialise or fp__seqtab_init(). Fields are read-only outside seqtab.c. */
struct fp__seqtab {
	struct fp_hashmap map; /* probe key -> id */
	struct fp__seqtab_entry *e;
	size_t n, alloc;
	uint32_t *words;
	size_t nwords, words_alloc;
	size_t max_count, max_words;
	int ready;
};

/* An empty table holding at most `max_count` sequences of `max_words` words in all. */
void fp__seqtab_init(struct fp__seqtab *t, size_t max_count, size_t max_words);

/* Free everything; the table is left empty and initialised (same caps). */
void fp__seqtab_release(struct fp__seqtab *t);

/*
 * The id of `w[0..n)` with `tag`, added when new. FP_OK, FP_ELIMIT (a cap), FP_ENOMEM; on failure
 * the table is unchanged.
 */
int fp__seqtab_add(struct fp__seqtab *t, const uint32_t *w, size_t n, uint32_t tag, uint32_t *id);

/* The words of `id` (borrowed until the next add; NULL for an unknown id), *n its length and
 * *tag its tag (either may be NULL). */
const uint32_t *fp__seqtab_get(const struct fp__seqtab *t, uint32_t id, uint32_t *n, uint32_t *tag);

static inline size_t fp__seqtab_count(const struct fp__seqtab *t)
{
	return t->n;
}

#endif /* FP_CORE_SEQTAB_H */
