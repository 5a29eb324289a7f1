/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The calling-context tree's private layout, shared by calltree.c (core), calltree-ops.c (merge,
 * diff, equality) and the Hatchet reader and writer. Nothing outside src/prof/ includes it; the
 * public view is include/flagprism/calltree.h.
 */
#ifndef FP_PROF_CALLTREE_INTERNAL_H
#define FP_PROF_CALLTREE_INTERNAL_H

#include <flagprism/calltree.h>

#include "core/arena-internal.h"
#include "core/hashmap-internal.h"
#include "core/intern-internal.h"

/* Nodes live in fixed-size chunks carved from the arena, so ids index them without a realloc. */
#define FP__CT_CHUNK_SHIFT 12
#define FP__CT_CHUNK ((size_t)1 << FP__CT_CHUNK_SHIFT)

#define FP__CELL_SELF 0x1u   /* a value was added to this node (written to files) */
#define FP__CELL_STRING 0x2u /* `str` holds an interned string id */

struct fp__ct_cell {
	struct fp__ct_cell *next;
	uint32_t metric;
	uint32_t flags;
	uint32_t str; /* id in names (string properties) */
	double self;
	double total;
};

struct fp__ct_node {
	uint32_t parent;
	uint32_t frame;
	uint32_t first_child;
	uint32_t last_child;
	uint32_t next_sibling;
	uint32_t nchildren;
	uint32_t depth;
	struct fp__ct_cell *cells; /* unordered; few per node */
};

struct fp__ct_device {
	uint32_t type, index, key; /* ids in names */
	bool is_string;
	uint32_t str;
	double value;
};

struct fp_calltree {
	struct fp_arena arena;
	struct fp_intern *names;   /* frames and string values */
	struct fp_intern *metrics; /* metric names */
	uint8_t *kinds;            /* by metric id */
	uint32_t kinds_alloc;
	struct fp__ct_node **chunks;
	size_t nchunks, chunks_alloc;
	size_t count;                  /* nodes */
	struct fp_hashmap children;    /* parent << 32 | frame -> child id */
	struct fp__ct_device *devices; /* kept sorted (see ct_device_cmp) */
	size_t ndevices, devices_alloc;
	struct fp_calltree_limits lim;
	bool finalized;
};

static inline struct fp__ct_node *fp__ct_node(const struct fp_calltree *t, uint32_t id)
{
	if ((size_t)id >= t->count)
		return NULL;
	return &t->chunks[id >> FP__CT_CHUNK_SHIFT][id & (FP__CT_CHUNK - 1)];
}

/* The cell of `metric` at `node`, or NULL. */
struct fp__ct_cell *fp__calltree_cell(const struct fp_calltree *t, uint32_t node, uint32_t metric);

/* The cell, created (self 0, no flags) if absent. FP_OK, FP_ENOMEM, FP_ELIMIT. */
int fp__calltree_cell_get(struct fp_calltree *t, uint32_t node, uint32_t metric,
			  struct fp__ct_cell **out);

/* Device attribute with explicit lengths (the reader's keys may hold NULs). */
int fp__calltree_device_set_n(struct fp_calltree *t, const char *type, size_t tlen,
			      const char *index, size_t ilen, const char *key, size_t klen,
			      bool is_string, double value, const char *str, size_t slen);

/* The device table as a JSON object {type: {index: {key: value}}}. */
struct fp_jsonw;
int fp__calltree_write_devices(const struct fp_calltree *t, struct fp_jsonw *w);

/* Sort `n` ids with cmp(ctx, a, b) < 0 meaning a first; no allocation (heapsort). */
void fp__prof_sort_ids(uint32_t *ids, size_t n, int (*cmp)(const void *ctx, uint32_t a, uint32_t b),
		       const void *ctx);

/* Bytewise comparison of two counted strings; a proper prefix sorts first. */
int fp__prof_strcmp_n(const char *a, size_t alen, const char *b, size_t blen);

/* Compare two metric ids of `t` by name. */
int fp__calltree_metric_cmp(const void *ctx, uint32_t a, uint32_t b);

/* ---- hatchet-scan.c: the Hatchet reader's fast path ----------------------------------------- */

/* fp__hatchet_scan(): "this input is not for the streaming reader" (never returned to callers). */
#define FP__HATCHET_FALLBACK 1

/*
 * Build a finalized tree from Hatchet text the streaming scanner fully understands: FP_OK and
 * *out (info filled), FP__HATCHET_FALLBACK (anything else, every error included: the DOM reader
 * decides), or FP_ENOMEM. `flags`: FP_HATCHET_NO_THREAD, FP_HATCHET_THREADED.
 */
int fp__hatchet_scan(const char *text, size_t len, const struct fp_calltree_limits *lim,
		     unsigned flags, struct fp_calltree **out, struct fp_hatchet_info *info);

#endif /* FP_PROF_CALLTREE_INTERNAL_H */
