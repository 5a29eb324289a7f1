/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the CUPTI backend shared by its files and its unit tests: the bounds-checked
 * activity-record reader (cupti-records.c), the lock-free launch tables, the CUDA-graph node
 * table and the activity-buffer pool (cupti-tables.c), and the test hooks of the runtime
 * (cupti.c). Nothing here knows a CUPTI header; the ABI facts are in cupti-abi.h. Not a public
 * header: clients see include/flagprism/cupti.h.
 */
#ifndef FP_CUPTI_INTERNAL_H
#define FP_CUPTI_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <flagprism/cupti.h>
#include <flagprism/sink.h>

#include "backend/backend-internal.h" /* FP__LSAN_DISABLE/ENABLE */
#include "backend/cuda/cupti-abi.h"

/* ---- cupti-records.c: activity records ------------------------------------------------------ */

/* CUPTI API versions: 13.0 and later say xxyyzz (130001), older ones count (26 = 12.8). */
#define FP__CUPTI_API_13_0 130000u
#define FP__CUPTI_API_MIN 18u /* CUDA 11.8: the oldest record layout we read */

/* The record layout of one library version. */
struct fp__cupti_layout {
	uint32_t api_version;
	uint32_t kernel_size; /* bytes of a KERNEL / CONCURRENT_KERNEL record */
};

/**
 * The layout of the library that reports `api_version`. FP_OK, or FP_ENOTSUP for versions older
 * than FP__CUPTI_API_MIN.
 */
int fp__cupti_layout_init(struct fp__cupti_layout *l, uint32_t api_version);

/** Bytes of a record of `kind` in layout `l`; 0 for kinds this reader does not know. */
size_t fp__cupti_record_size(const struct fp__cupti_layout *l, uint32_t kind);

/**
 * Decode the kernel record at `rec`, of which `avail` bytes belong to it. Reads only inside
 * [rec, rec + FP__CUPTI_K_MIN_SIZE) and does not need `rec` to be aligned. FP_OK, or FP_EFORMAT
 * (not a kernel kind, or fewer than FP__CUPTI_K_MIN_SIZE bytes).
 */
int fp__cupti_kernel_decode(const uint8_t *rec, size_t avail, struct fp_cupti_kernel_record *out);

struct fp__cupti_walk_stats {
	uint64_t records; /* records walked */
	uint64_t kernels; /* of which kernel records handed to the callback */
	size_t consumed;  /* bytes walked, <= valid */
};

/**
 * Walk a raw activity buffer of `valid` bytes with our own reader (not CUPTI's): at each 8-byte
 * aligned position read the record kind, look its size up in `l`, check that it fits, decode
 * kernel records and call `fn`. Stops at the first record it cannot size or that does not fit:
 * FP_EFORMAT with diag naming the offset. FP_OK at the end of the buffer, or fn's first error.
 * `st` (may be NULL) says how far it got either way.
 */
int fp__cupti_walk(const uint8_t *buf, size_t valid, const struct fp__cupti_layout *l,
		   fp_cupti_record_fn fn, void *arg, struct fp__cupti_walk_stats *st,
		   struct fp_diag *diag);

/* ---- cupti-tables.c: the sink ---------------------------------------------------------------- */

/*
 * The profiler's sink (include/flagprism/sink.h), kept by cupti.c's first start (it is one table
 * per process): the launch and resource callbacks capture the launch context through it, names
 * are interned through it, and records are timed on its clock. NULL before the first start; set
 * once, before any callback is registered. Defined with the tables, below every file that reads
 * it.
 */
extern const struct fp_sink *fp__cupti_sink;

/* ---- cupti-tables.c: correlation table (lock-free) ------------------------------------------ */

/* What the launching thread knew when it entered a launch call. */
struct fp__cupti_launch {
	uint32_t lctx;     /* the sink's capture(): the launch context */
	uint32_t callpath; /* the one-shot call path the Python hook set, or FP_SINK_NO_CALLPATH */
	uint64_t md;       /* ticket into the metadata ring, 0: none */
	uint64_t active;   /* capture()'s state at launch: the sessions that file it */
	uint32_t internal; /* capture()'s state at launch: FlagPrism's own when non-zero */
};

struct fp__cupti_corr_slot {
	_Atomic uint64_t key; /* correlation id; 0 empty, FP__CUPTI_CORR_BUSY while written */
	_Atomic uint32_t lctx;
	_Atomic uint32_t callpath;
	_Atomic uint64_t md;
	_Atomic uint64_t active;
	_Atomic uint32_t internal;
};

#define FP__CUPTI_CORR_BUSY UINT64_MAX

/*
 * Correlation id -> launch, direct-mapped by id modulo a power of two: CUPTI hands out ids in
 * increasing order, so an entry is only overwritten after `mask + 1` newer launches, which a
 * reader then sees as a miss. Writers claim a slot with one compare-and-swap and publish the key
 * last; readers check the key before and after copying (a seqlock). No lock, no allocation.
 */
struct fp__cupti_corr {
	struct fp__cupti_corr_slot *slots;
	uint64_t mask;
	atomic_uint_fast64_t collisions; /* puts that found their slot being written */
};

/** Allocate `nslots` (a power of two >= 2) empty slots. FP_OK, FP_EINVAL, FP_ENOMEM. */
int fp__cupti_corr_init(struct fp__cupti_corr *t, size_t nslots);
void fp__cupti_corr_release(struct fp__cupti_corr *t);
/** Forget every entry (no writer may run concurrently). */
void fp__cupti_corr_clear(struct fp__cupti_corr *t);
/** Remember `l` under `corr` (non-zero). False when the slot was busy: the entry is dropped. */
bool fp__cupti_corr_put(struct fp__cupti_corr *t, uint32_t corr, const struct fp__cupti_launch *l);
/** The launch remembered under `corr`, if it is still there. Entries are not consumed. */
bool fp__cupti_corr_get(struct fp__cupti_corr *t, uint32_t corr, struct fp__cupti_launch *out);

/* ---- cupti-tables.c: launch metadata ring (lock-free) --------------------------------------- */

#define FP__CUPTI_MD_WORDS (sizeof(struct fp_sink_metadata) / sizeof(uint64_t))

struct fp__cupti_md_entry {
	_Atomic uint64_t seq; /* the ticket stored here; 0 while written */
	_Atomic uint64_t w[FP__CUPTI_MD_WORDS];
};

/*
 * Launch metadata (Triton's launch_metadata FLOPs and bytes, estimates) of launches waiting for
 * their records: a ring of copies addressed by tickets 1, 2, ... An entry is overwritten after
 * `mask + 1` newer ones; a reader holding an old ticket then gets nothing (counted as lost).
 */
struct fp__cupti_mdring {
	struct fp__cupti_md_entry *e;
	uint64_t mask;
	atomic_uint_fast64_t head;
};

int fp__cupti_md_init(struct fp__cupti_mdring *r, size_t n);
void fp__cupti_md_release(struct fp__cupti_mdring *r);
/** Copy `md` into the ring; returns its ticket (>= 1). */
uint64_t fp__cupti_md_put(struct fp__cupti_mdring *r, const struct fp_sink_metadata *md);
/** The metadata of `ticket`, if not overwritten since. */
bool fp__cupti_md_get(struct fp__cupti_mdring *r, uint64_t ticket, struct fp_sink_metadata *out);

/* ---- cupti-tables.c: CUDA-graph nodes (mutex) ----------------------------------------------- */

/* Owner tags of a node entry: the graph or the executable graph it belongs to. */
#define FP__CUPTI_OWNER_GRAPH ((uint64_t)1 << 32)
#define FP__CUPTI_OWNER_EXEC ((uint64_t)2 << 32)

struct fp__cupti_gnode {
	uint64_t id;    /* cuptiGetGraphNodeId(); 0 marks a free slot */
	uint64_t owner; /* FP__CUPTI_OWNER_* | graph or exec id; 0: unknown */
	uint32_t lctx;  /* the launch context at capture (or node creation) */
	uint32_t callpath;
	bool has_md;
	struct fp_sink_metadata md;
};

/*
 * Graph node id -> where its kernel was captured. Open addressing with linear probing and
 * backward-shift deletion, fixed capacity; written by resource callbacks (capture,
 * instantiation, destruction: not the launch path) and read by the record reader.
 */
struct fp__cupti_graphs {
	pthread_mutex_t lock;
	struct fp__cupti_gnode *e;
	size_t cap; /* power of two */
	size_t n, max;
	uint64_t untracked; /* nodes not stored: table full */
};

int fp__cupti_graphs_init(struct fp__cupti_graphs *g, size_t max_nodes);
void fp__cupti_graphs_release(struct fp__cupti_graphs *g);
void fp__cupti_graphs_clear(struct fp__cupti_graphs *g);
/** Add or replace. FP_OK, FP_EINVAL (id 0), FP_ELIMIT (full: counted in `untracked`). */
int fp__cupti_graphs_put(struct fp__cupti_graphs *g, const struct fp__cupti_gnode *n);
/** Copy node `from`'s entry to `to` with owner `owner`. FP_OK, FP_ENOENT, FP_ELIMIT. */
int fp__cupti_graphs_clone(struct fp__cupti_graphs *g, uint64_t from, uint64_t to, uint64_t owner);
bool fp__cupti_graphs_get(struct fp__cupti_graphs *g, uint64_t id, struct fp__cupti_gnode *out);
/** Remove one node; true if it was there. */
bool fp__cupti_graphs_remove(struct fp__cupti_graphs *g, uint64_t id);
/** Remove every node of `owner`; returns how many. */
size_t fp__cupti_graphs_remove_owner(struct fp__cupti_graphs *g, uint64_t owner);
size_t fp__cupti_graphs_count(struct fp__cupti_graphs *g);

/* ---- cupti-tables.c: activity-buffer pool (lock-free) --------------------------------------- */

#define FP__CUPTI_POOL_MAX 64u

/*
 * Activity buffers allocated once (one zeroed arena) and handed out by CUPTI's buffer-request
 * callback: a 64-bit free mask taken with compare-and-swap, no allocation there. An empty pool
 * makes the request return no buffer (CUPTI then drops records and counts them).
 */
struct fp__cupti_pool {
	uint8_t *arena;
	size_t size; /* bytes per buffer, multiple of 8 */
	unsigned n;
	_Atomic uint64_t free_mask;
	atomic_uint_fast64_t denied; /* requests that found the pool empty */
};

int fp__cupti_pool_init(struct fp__cupti_pool *p, unsigned n, size_t size);
void fp__cupti_pool_release(struct fp__cupti_pool *p);
/** A free buffer, or NULL (pool empty: counted in `denied`). */
uint8_t *fp__cupti_pool_get(struct fp__cupti_pool *p);
/** Give a buffer back. FP_OK, FP_EINVAL (not one of ours or already free). */
int fp__cupti_pool_put(struct fp__cupti_pool *p, uint8_t *buf);
unsigned fp__cupti_pool_free_count(struct fp__cupti_pool *p);

/* ---- cupti.c: test hooks --------------------------------------------------------------------- */

/**
 * Put the process back as if the backend had never started: every session must be finalized.
 * Disables everything, unsubscribes, closes the libraries and frees the tables. For tests (and a
 * last resort): the real CUPTI keeps its single-subscriber slot taken after an unsubscribe.
 */
void fp__cupti_reset(void);

#endif /* FP_CUPTI_INTERNAL_H */
