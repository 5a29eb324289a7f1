/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profiler's calling-context tree: nodes named by interned frames, each carrying a small set
 * of metrics, plus the device table that Hatchet files carry next to the tree. Sessions build one
 * while a program runs; the Hatchet reader builds one from a file (ours or Proton's); merge and
 * diff build one from others; the Hatchet writer and the viewer read one. It is not the timeline
 * (sessions keep trace records themselves) and it does not know about Python or devices' clocks.
 *
 * Model. Node 0 is the root (frame "ROOT" unless a file says otherwise). Every other node has a
 * parent and a frame id; a parent has at most one child per frame id, found in O(1) through a
 * hash map keyed by (parent id, frame id), so adding a path is one lookup per level. Node ids are
 * dense, stable, and every child's id is larger than its parent's. Nodes and per-node metric
 * cells live in one arena and are freed together.
 *
 * Metrics. A metric is an interned name with a kind fixed at its first registration:
 *  - FP_METRIC_INCLUSIVE: values added to a node are summed into the node's own ("self") value;
 *    fp_calltree_finalize() computes each node's total = self + the totals of its children.
 *    Default for names without a type suffix ("time (ns)", "count", "flops16", "bytes").
 *  - FP_METRIC_EXCLUSIVE: summed per node, never propagated ("cpu_time (ns)(exc)").
 *  - FP_METRIC_PROPERTY: the last value set wins; numbers or strings ("device_id", "x (pty)").
 *  - FP_METRIC_MIN / FP_METRIC_MAX: the smallest / largest value added ("time (ns) (min)").
 * fp_calltree_metric_kind_from_name() states the naming rule once for everybody.
 *
 * Not thread-safe: a session serialises access with its own lock.
 */
#ifndef FLAGPRISM_CALLTREE_H
#define FLAGPRISM_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fp_jsonw;

/** The root's node id, and the "no node" value returned by iteration helpers. */
#define FP_CALLTREE_ROOT 0u
#define FP_CALLTREE_NONE UINT32_MAX

/* Defaults applied when a field of struct fp_calltree_limits is 0. */
#define FP_CALLTREE_DEFAULT_MAX_NODES ((size_t)1 << 26)
#define FP_CALLTREE_DEFAULT_MAX_DEPTH 1024u
#define FP_CALLTREE_DEFAULT_MAX_METRICS 4096u

enum fp_metric_kind {
	FP_METRIC_INCLUSIVE = 0,
	FP_METRIC_EXCLUSIVE = 1,
	FP_METRIC_PROPERTY = 2,
	FP_METRIC_MIN = 3,
	FP_METRIC_MAX = 4,
};

/** Caps on one tree. A 0 field means its default. Exceeding one gives FP_ELIMIT. */
struct fp_calltree_limits {
	size_t max_nodes;     /* nodes, root included (default 64 Mi) */
	size_t max_bytes;     /* arena bytes: nodes, cells, strings (default: the arena default) */
	uint32_t max_depth;   /* frames below the root on one path (default 1024) */
	uint32_t max_metrics; /* distinct metric names (default 4096) */
};

/** Opaque heap object; see the top of this file. */
struct fp_calltree;

/** One metric value of a node, as returned by fp_calltree_node_metrics(). */
struct fp_calltree_value {
	uint32_t metric;          /* metric id */
	enum fp_metric_kind kind; /* the metric's kind */
	bool is_string;           /* a string property: `str` is set and the numbers are 0 */
	double self;              /* the node's own value */
	double total;    /* inclusive metrics: self + children (after finalize); else self */
	const char *str; /* string value (borrowed from the tree) or NULL */
	size_t str_len;
};

/* ---- lifecycle ------------------------------------------------------------------------------ */

/** New tree holding only the root ("ROOT"). `lim` may be NULL. NULL on out-of-memory. */
FP_EXTERN struct fp_calltree *fp_calltree_new(const struct fp_calltree_limits *lim);

/** Free the tree and everything it owns. NULL is a no-op. */
FP_EXTERN void fp_calltree_free(struct fp_calltree *t);

/** Rename the root (Hatchet files may name it). FP_OK, FP_ENOMEM, FP_ELIMIT. */
FP_EXTERN int fp_calltree_set_root_name(struct fp_calltree *t, const char *name, size_t len);

/* ---- frames and nodes ---------------------------------------------------------------------- */

/** Intern a frame name (any bytes) and store its id in *frame. FP_OK, FP_ENOMEM, FP_ELIMIT. */
FP_EXTERN int fp_calltree_intern(struct fp_calltree *t, const char *name, size_t len,
				 uint32_t *frame);

/** Name of a frame id (NUL-terminated, borrowed until the tree is freed); NULL if unknown. */
FP_EXTERN const char *fp_calltree_frame_name(const struct fp_calltree *t, uint32_t frame,
					     size_t *len);

/**
 * The child of `parent` with frame `frame`, created if absent; its id goes to *node.
 * FP_OK, FP_EINVAL (unknown parent or frame), FP_ENOMEM, FP_ELIMIT (node or depth cap).
 * On failure the tree is unchanged.
 */
FP_EXTERN int fp_calltree_child(struct fp_calltree *t, uint32_t parent, uint32_t frame,
				uint32_t *node);

/** Look a child up without creating it: FP_OK or FP_ENOENT. */
FP_EXTERN int fp_calltree_child_find(const struct fp_calltree *t, uint32_t parent, uint32_t frame,
				     uint32_t *node);

/**
 * Walk (creating as needed) the path root -> frames[0] -> ... -> frames[n-1] and store the last
 * node in *node (the root when n is 0). Returns as fp_calltree_child(); on failure the nodes
 * already created stay (they are valid, empty nodes).
 */
FP_EXTERN int fp_calltree_add_path(struct fp_calltree *t, const uint32_t *frames, size_t n,
				   uint32_t *node);

/** Number of nodes, root included. */
FP_EXTERN size_t fp_calltree_node_count(const struct fp_calltree *t);

/** Parent of a node (FP_CALLTREE_NONE for the root or an unknown id). */
FP_EXTERN uint32_t fp_calltree_node_parent(const struct fp_calltree *t, uint32_t node);

/** Frame id of a node (FP_CALLTREE_NONE for an unknown id). */
FP_EXTERN uint32_t fp_calltree_node_frame(const struct fp_calltree *t, uint32_t node);

/** Frame name of a node (borrowed) or NULL for an unknown id. */
FP_EXTERN const char *fp_calltree_node_name(const struct fp_calltree *t, uint32_t node,
					    size_t *len);

/** Depth of a node: 0 for the root. 0 for unknown ids too. */
FP_EXTERN uint32_t fp_calltree_node_depth(const struct fp_calltree *t, uint32_t node);

/** Number of children of a node (0 for unknown ids). */
FP_EXTERN size_t fp_calltree_node_child_count(const struct fp_calltree *t, uint32_t node);

/**
 * Children in creation order: the first child, then each next sibling; FP_CALLTREE_NONE ends.
 * Writers sort by name themselves (see fp_calltree_sorted_children()).
 */
FP_EXTERN uint32_t fp_calltree_node_first_child(const struct fp_calltree *t, uint32_t node);
FP_EXTERN uint32_t fp_calltree_node_next_sibling(const struct fp_calltree *t, uint32_t node);

/**
 * The children of `node` sorted by frame name (bytewise, shorter first on a common prefix), the
 * order every writer uses. Stores up to `cap` ids in `out` and returns the number of children
 * (which may exceed `cap`: call again with a larger array). Never fails.
 */
FP_EXTERN size_t fp_calltree_sorted_children(const struct fp_calltree *t, uint32_t node,
					     uint32_t *out, size_t cap);

/**
 * The name a person reads for a node. A C++ kernel, i.e. a node with a string property
 * "mangled_name" (sessions file mangled kernels under their full demangled name and keep the
 * mangled one there) or a frame that is itself a mangled name (older profiles, other tools),
 * gets the short form of include/flagprism/demangle.h (`at::native::foo<...>`), or with `full`
 * the full demangled name. Any other node gets its frame name. Writes into `buf` (always
 * NUL-terminated when `cap` > 0, cut to fit) and stores the untruncated length in *len (may be
 * NULL). Returns true when the name was a C++ name shown demangled, false otherwise.
 */
FP_EXTERN bool fp_calltree_node_display(const struct fp_calltree *t, uint32_t node, bool full,
					char *buf, size_t cap, size_t *len);

/* ---- metrics --------------------------------------------------------------------------------- */

/**
 * The kind a metric name implies: a trailing "(exc)" -> EXCLUSIVE, "(pty)" -> PROPERTY, "(min)"
 * -> MIN, "(max)" -> MAX (each optionally preceded by spaces); the names "device_id" and
 * "device_type" -> PROPERTY (Proton's kernel properties); anything else -> INCLUSIVE.
 */
FP_EXTERN enum fp_metric_kind fp_calltree_metric_kind_from_name(const char *name, size_t len);

/**
 * Register (or find) a metric and store its id in *metric. The first registration fixes the
 * kind; registering the same name with another kind returns FP_EINVAL. FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_calltree_metric(struct fp_calltree *t, const char *name, size_t len,
				 enum fp_metric_kind kind, uint32_t *metric);

/** fp_calltree_metric() with the kind taken from the name. */
FP_EXTERN int fp_calltree_metric_auto(struct fp_calltree *t, const char *name, size_t len,
				      uint32_t *metric);

/** Find a metric by name: FP_OK or FP_ENOENT. */
FP_EXTERN int fp_calltree_metric_find(const struct fp_calltree *t, const char *name, size_t len,
				      uint32_t *metric);

/** Number of registered metrics (ids are 0..count-1, in registration order). */
FP_EXTERN uint32_t fp_calltree_metric_count(const struct fp_calltree *t);

/** Name (borrowed) and kind of a metric id; NULL if unknown. */
FP_EXTERN const char *fp_calltree_metric_name(const struct fp_calltree *t, uint32_t metric,
					      size_t *len, enum fp_metric_kind *kind);

/**
 * Add `value` to a node's metric per the metric's kind (sum, min, max, or set for properties).
 * FP_OK, FP_EINVAL (unknown node or metric), FP_ENOMEM/FP_ELIMIT (a new cell). Marks the
 * tree's totals stale until the next fp_calltree_finalize().
 */
FP_EXTERN int fp_calltree_add_metric(struct fp_calltree *t, uint32_t node, uint32_t metric,
				     double value);

/** Set a string value (a property: the last one wins). Errors as fp_calltree_add_metric(). */
FP_EXTERN int fp_calltree_set_string(struct fp_calltree *t, uint32_t node, uint32_t metric,
				     const char *s, size_t len);

/**
 * Compute inclusive totals: for every inclusive metric, total = self + children's totals, for
 * every node (an ancestor gets a cell even if nothing was added to it directly). Idempotent; O(nodes
 * + cells). FP_OK, FP_ENOMEM, FP_ELIMIT (the tree keeps its self values; totals stay stale).
 */
FP_EXTERN int fp_calltree_finalize(struct fp_calltree *t);

/** True when totals reflect every value added (finalize ran after the last change). */
FP_EXTERN bool fp_calltree_is_finalized(const struct fp_calltree *t);

/**
 * One metric of one node. FP_OK and fills *out; FP_ENOENT if the node has no value for it;
 * FP_EINVAL for unknown ids.
 */
FP_EXTERN int fp_calltree_get(const struct fp_calltree *t, uint32_t node, uint32_t metric,
			      struct fp_calltree_value *out);

/**
 * All metric values of a node, ordered by metric name (bytewise). Stores up to `cap` of them
 * and returns how many the node has (call again with more room if larger than `cap`).
 */
FP_EXTERN size_t fp_calltree_node_metrics(const struct fp_calltree *t, uint32_t node,
					  struct fp_calltree_value *out, size_t cap);

/* ---- device table (Hatchet element [1]: {type: {index: {key: value}}}) ------------------------ */

/** Set a numeric device attribute, e.g. ("CUDA", "0", "num_sms", 132). Replaces an older value. */
FP_EXTERN int fp_calltree_device_set(struct fp_calltree *t, const char *type, const char *index,
				     const char *key, double value);
/** Set a string device attribute, e.g. ("CPU", "0", "arch", "interpreter"). */
FP_EXTERN int fp_calltree_device_set_str(struct fp_calltree *t, const char *type, const char *index,
					 const char *key, const char *value);

/** One device attribute as returned by fp_calltree_device_at(). Strings are borrowed. */
struct fp_calltree_device_attr {
	const char *type;
	const char *index;
	const char *key;
	bool is_string;
	double value;
	const char *str;
};

/** Number of device attributes. */
FP_EXTERN size_t fp_calltree_device_count(const struct fp_calltree *t);
/** Attribute `i` in the written order (type, then index, then key; indices compared as numbers
 *  when both are decimal). FP_OK or FP_ENOENT. */
FP_EXTERN int fp_calltree_device_at(const struct fp_calltree *t, size_t i,
				    struct fp_calltree_device_attr *out);

/* ---- Hatchet JSON ------------------------------------------------------------------------------ */

/**
 * Write the tree as a Hatchet literal: `[root, device_info]` (see docs/formats/profiler-formats.md).
 * Children sorted by name, metrics sorted by name, each node's own ("self") values; the root
 * lists every summable metric (0 when it has none) so Hatchet registers them. Finalizes the
 * tree first if needed. Returns FP_OK or the writer's error; FP_ENOMEM.
 */
FP_EXTERN int fp_calltree_write_hatchet(struct fp_calltree *t, struct fp_jsonw *w);

/* With the fp_jsonw flags of the save functions: the path "-" means standard output. */
#define FP_CALLTREE_SAVE_DASH_STDOUT (1u << 16)

/**
 * Write the Hatchet file at `path` as include/flagprism/outfile.h writes files (a temporary
 * file renamed onto a regular file; a device, FIFO or /dev/stdout written through; a symbolic
 * link's target written). `flags` are fp_jsonw flags (FP_JSONW_PRETTY), plus
 * FP_CALLTREE_SAVE_DASH_STDOUT. FP_OK, FP_EIO (diag names the path and the errno), FP_EINVAL
 * (a destination that is refused: a directory...), FP_ENOMEM.
 */
FP_EXTERN int fp_calltree_save_hatchet(struct fp_calltree *t, const char *path, unsigned flags,
				       struct fp_diag *diag);

/** What the Hatchet reader saw besides the tree. Caller-owned; zero it or let the reader do so. */
struct fp_hatchet_info {
	uint64_t nodes; /* node objects read (duplicates merged into one tree node count) */
	uint64_t merged_siblings; /* nodes merged into an earlier sibling with the same name */
	uint64_t skipped_metrics; /* metric values that were neither numbers nor strings */
	bool has_device_info;     /* the file had element [1] */
	bool fast_path;           /* the streaming fast path built the tree */
	bool truncated;           /* the text ends inside the document (a writer that stopped) */
};

/*
 * Flags of fp_calltree_parse_hatchet(). For inputs of 8 MB or more the streaming fast path scans
 * on a second thread while the calling thread builds the tree, so an allocator installed with
 * fp_set_allocator() must then be thread-safe (or pass FP_HATCHET_NO_THREAD).
 */
#define FP_HATCHET_STRICT (1u << 0)    /* skip the fast path: always the DOM reader */
#define FP_HATCHET_FAST_ONLY (1u << 1) /* never fall back: FP_ENOTSUP instead (tests, benchmarks) */
#define FP_HATCHET_NO_THREAD (1u << 2) /* scan and build on the calling thread only */
#define FP_HATCHET_THREADED (1u << 3)  /* use the scanner thread whatever the size (tests) */

/**
 * Parse a Hatchet literal into a new, finalized tree (*out, caller frees). Accepts our files and
 * Proton's: a top-level array whose element 0 is the root node and whose optional next element
 * is the device table. Node rules: an object; "frame" an object with a string "name" (or the
 * node's own string "name"); "metrics" an object; "children", if present, an array of nodes.
 * Numbers become numeric values and strings string properties; other metric values (null, bools,
 * arrays, objects) and the special "_hatchet_nid" are skipped and counted. Sibling nodes with
 * the same name are merged. Unknown node keys are ignored.
 *
 * One reader, two paths: a streaming fast path handles the common case (plain ASCII names, no
 * escapes, structure as Proton or FlagPrism write it, in any key order) without building a JSON
 * document; anything else, including every error, goes to the DOM reader, so the tree, the info
 * counters and the error messages are always the DOM reader's. `flags`: FP_HATCHET_*.
 *
 * Errors: FP_EFORMAT with diag naming the place ("node at line 3 col 14: 'frame' must be an
 * object"; an error at the very end sets info->truncated), FP_ELIMIT (tree caps, JSON depth),
 * FP_ENOMEM, FP_ENOTSUP (only with FP_HATCHET_FAST_ONLY), FP_EIO (file). `lim`, `info` and
 * `diag` may be NULL. *out is untouched on failure. fp_calltree_read_hatchet() reads a file with
 * the DOM reader (fp_view_read_profile() reads a profile file with both paths, and its meta
 * file).
 */
FP_EXTERN int fp_calltree_parse_hatchet(const char *text, size_t len,
					const struct fp_calltree_limits *lim, unsigned flags,
					struct fp_calltree **out, struct fp_hatchet_info *info,
					struct fp_diag *diag);
FP_EXTERN int fp_calltree_read_hatchet(const char *path, const struct fp_calltree_limits *lim,
				       struct fp_calltree **out, struct fp_hatchet_info *info,
				       struct fp_diag *diag);

/* ---- comparison, merge, diff ------------------------------------------------------------------ */

/**
 * Structural equality by names: same root name, same children by name, same metric names with
 * equal kinds and self values (|a - b| <= tol * max(1, |a|, |b|)), same device table. A summed
 * (inclusive or exclusive) value of 0 counts as no value, as it does in a Hatchet file. On a
 * difference returns false and, when `why` is given, fills why->msg with the first difference
 * and its path ("ROOT/a/k: metric 'count' 1 vs 2").
 */
FP_EXTERN bool fp_calltree_equal(const struct fp_calltree *a, const struct fp_calltree *b,
				 double tol, struct fp_diag *why);

/**
 * Merge `n` trees (n >= 1) into a new tree over the union of their paths. For every summed
 * metric M (inclusive or exclusive) the result has M = the mean of the inputs' self values (a
 * node missing from an input counts as 0, so the means of totals stay consistent), plus
 * "M (min)" and "M (max)", the smallest and largest per-input value, taken over inclusive totals
 * for inclusive metrics and over self values otherwise. Min/max metrics combine as min/max;
 * properties come from the first input that has them; the device table is the union (first
 * wins). Inputs are finalized first (hence not const). FP_OK, FP_EINVAL, FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_calltree_merge(struct fp_calltree *const *in, size_t n, struct fp_calltree **out);

/** How fp_calltree_merge_op() combines the inputs' summed metrics. */
enum fp_merge_op {
	FP_MERGE_MEAN = 0, /* the mean over the inputs: a typical rank or run */
	FP_MERGE_SUM = 1,  /* the sum: the whole job (every rank's time and counts together) */
};

/**
 * fp_calltree_merge() with a choice of M: the mean (as fp_calltree_merge()) or the sum of the
 * inputs' self values; "M (min)" and "M (max)" and the other kinds are the same either way.
 * The root gets a string property "merged" saying which ("sum of 4 profiles"). FP_EINVAL for
 * an unknown `op`, else as fp_calltree_merge().
 */
FP_EXTERN int fp_calltree_merge_op(struct fp_calltree *const *in, size_t n, enum fp_merge_op op,
				   struct fp_calltree **out);

/**
 * Difference `b - a` over the union of paths: every numeric metric keeps its kind and gets
 * self(b) - self(a) (missing = 0), so inclusive totals are total(b) - total(a); properties come
 * from b, else a; the device table is b's, completed by a's. FP_OK, FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_calltree_diff(struct fp_calltree *a, struct fp_calltree *b,
			       struct fp_calltree **out);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_CALLTREE_H */
