/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sink: how a backend (a vendor adapter: CUPTI, the host timer, a new accelerator's tracer)
 * hands what it observed to the profiler. A backend gets a session's sink with each call of its
 * ops table (include/flagprism/backend.h) and delivers through it launches, kernel activity,
 * metric values and PC samples, tied together by correlation ids and launch contexts; the
 * profiler core (src/prof/) implements the sink and alone decides where in the call tree a
 * delivery lands. A backend never sees the tree: a node is an opaque id a kernel delivery gave
 * back, which the backend may hand back with later values of the same launch.
 * docs/internals/backend-adaptation.md walks through an adapter for a new accelerator.
 *
 * Not here: the registry of backends and their ops (backend.h); sessions, scopes and files
 * (prof.h). This header declares no function: everything is reached through `struct fp_sink`.
 */
#ifndef FLAGPRISM_SINK_H
#define FLAGPRISM_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP_SINK_ALL (-1)               /* launch_timed(): every active session */
#define FP_SINK_NO_NAME UINT32_MAX     /* an unset name id */
#define FP_SINK_NO_CALLPATH UINT32_MAX /* a launch without a call path */
#define FP_SINK_NO_NODE UINT32_MAX     /* a delivery that was not filed to any node */
#define FP_SINK_MAX_SESSIONS 64        /* sessions open at once: bits of a launch state */

/* Launch contexts (capture()): nothing open on the launching thread, or a context the profiler
 * could not keep (treated as none and counted as unmatched). */
#define FP_SINK_LCTX_NONE 0u
#define FP_SINK_LCTX_LOST UINT32_MAX

/* ---- what a launch carries ------------------------------------------------------------------- */

/* Bits of fp_sink_metadata.flags: which fields hold a value. */
#define FP_SINK_MD_FLOPS8 (1u << 0)
#define FP_SINK_MD_FLOPS16 (1u << 1)
#define FP_SINK_MD_FLOPS32 (1u << 2)
#define FP_SINK_MD_FLOPS64 (1u << 3)
#define FP_SINK_MD_BYTES (1u << 4)
#define FP_SINK_MD_EST_BYTES (1u << 5)
#define FP_SINK_MD_EST_FLOPS (1u << 6)

/**
 * Launch metadata: Triton's launch_metadata values (flops8..64, bytes, written as metrics of
 * those names) and FlagPrism's own estimates ("est_bytes", "est_flops"). Unflagged fields are
 * ignored. `reserved` is the backend's own to use until it delivers (zero it then).
 */
struct fp_sink_metadata {
	uint32_t flags;
	uint32_t reserved;
	double flops8, flops16, flops32, flops64;
	double bytes;
	double est_bytes, est_flops;
};

/** What the launching thread knows about a launch. */
struct fp_sink_launch {
	uint32_t kernel;   /* name id (name_intern()) */
	uint32_t callpath; /* call-path id or FP_SINK_NO_CALLPATH */
	uint32_t grid[3];
	uint32_t device_id;
	struct fp_sink_metadata md;
};

enum fp_sink_event_kind {
	FP_SINK_EVENT_KERNEL = 1,
};

/**
 * One device activity, fixed size (128 bytes), copied by value. Timestamps are ns on the sink's
 * clock (clock_ns()); a backend whose device clock differs converts before delivering.
 * `correlation` ties the event to its launch (0: none).
 */
struct fp_sink_event {
	uint32_t kind; /* enum fp_sink_event_kind */
	uint32_t device_id;
	uint32_t device_type; /* name id: "CUDA", "HIP", "CPU"...; FP_SINK_NO_NAME: unknown */
	uint32_t kernel;      /* name id of the kernel */
	uint32_t callpath;    /* call-path id or FP_SINK_NO_CALLPATH */
	uint32_t grid[3];
	uint64_t begin_ns;
	uint64_t end_ns;
	uint64_t stream;
	uint64_t correlation;
	struct fp_sink_metadata md; /* merged with a registered launch's (the event wins) */
};

/** Which sessions file a launch, decided when it was made (exact deactivation). */
struct fp_sink_launch_state {
	uint64_t active;   /* bit i: the session in registry slot i was active at launch */
	uint32_t internal; /* non-zero: FlagPrism launched it for itself (dropped and counted) */
	uint32_t known;    /* 0: unknown (the record had no launch): the sessions' state now */
};

/** What a launch callback keeps with a launch: capture() fills it on the launching thread. */
struct fp_sink_capture {
	uint32_t lctx;     /* the thread's launch context: scopes and state open in every session */
	uint32_t callpath; /* the call path a framework's launch wrapper set for the thread, or
			    * FP_SINK_NO_CALLPATH */
	struct fp_sink_launch_state state; /* known = 1 */
};

/* ---- metric values per launch ----------------------------------------------------------------- */

/** How the values of the launches filed to one node combine. */
enum fp_sink_agg {
	FP_SINK_AGG_SUM = 0,  /* counters: summed */
	FP_SINK_AGG_MEAN = 1, /* ratios, percentages, rates: weighted mean (a property) */
};

/** One measured launch: the node its kernel was filed to (FP_SINK_NO_NODE: skipped), its weight
 *  (kernel time in ns) and one value per metric (NaN: none). */
struct fp_sink_range {
	uint32_t node;
	double weight;
	const double *values;
};

/** Metric values of many launches (hardware counters). Everything is borrowed for the call. */
struct fp_sink_metrics {
	const char *const *names;    /* the tree's metric names, one per column of values */
	const enum fp_sink_agg *agg; /* one per metric */
	size_t nmetrics;
	const char *launches; /* name of a per-node count of the ranges attached, or NULL */
	const struct fp_sink_range *ranges;
	size_t nranges;
};

struct fp_sink_metrics_stats {
	uint64_t ranges;   /* ranges given */
	uint64_t attached; /* ranges whose values reached a node */
	uint64_t skipped;  /* ranges without a node */
	uint64_t nodes;    /* distinct nodes that received values */
	uint64_t values;   /* numeric values attached */
	uint64_t missing;  /* NaN values (metric not evaluated for that range) */
};

/* ---- PC samples -------------------------------------------------------------------------------- */

/* The node samples without a known launch are filed under: ROOT / this / <function>. */
#define FP_SINK_PC_NO_LAUNCH "<pc samples without a launch>"

/* Bits of fp_sink_pc_sample.flags. */
#define FP_SINK_PC_LATENCY (1u << 0) /* a latency view of another reason: not in num_samples */
#define FP_SINK_PC_ISSUED (1u << 1)  /* the warp issued: not in num_stalled_samples */

/**
 * `samples` PC samples of stall reason `reason` (a metric name declared with pc_reasons()) at
 * `place` (a child of the kernel's node: "file:line", or a name saying why there is no line)
 * of the launch filed to `node`, or, with FP_SINK_NO_NODE, under
 * ROOT / FP_SINK_PC_NO_LAUNCH / `function`. They count in "num_samples" unless
 * FP_SINK_PC_LATENCY, and in "num_stalled_samples" unless either flag is set.
 */
struct fp_sink_pc_sample {
	uint32_t node;
	uint32_t flags;
	const char *function;
	const char *place;
	const char *reason;
	double samples;
};

/* ---- the sink ---------------------------------------------------------------------------------- */

struct fp_sink;

/**
 * One profiling session as a backend sees it. Owned by the profiler: valid from the backend's
 * start until its stop returns; compared by address, never copied.
 */
struct fp_sink_session {
	const struct fp_sink *sink;
};

/**
 * The calls a backend delivers through. The profiler has one table per process; every session
 * carries a pointer to it. All calls are thread-safe. Process-wide calls need no session;
 * capture() is the only one meant for a launch path that must not lock or allocate. Statuses
 * are FP_OK or a negative FP_E* (include/flagprism/status.h).
 */
struct fp_sink {
	/* ---- process-wide ---- */
	/* The host monotonic clock of every timestamp (scopes use it too), in ns. */
	uint64_t (*clock_ns)(void);
	/* Intern a name (kernel, device type): dense ids, stable for the process. */
	int (*name_intern)(const char *s, size_t len, uint32_t *id);
	/* The string of a name id (borrowed, stable), or NULL. */
	const char *(*name_str)(uint32_t id, size_t *len);
	/* Call path `outer` then `inner` (a CUDA graph's kernel replayed from `outer`, captured at
	 * `inner`); either FP_SINK_NO_CALLPATH gives the other. */
	int (*callpath_join)(uint32_t outer, uint32_t inner, uint32_t *id);
	/* A process-wide correlation id for a backend that has none of its own (1, 2, ...). */
	uint64_t (*correlation_next)(void);
	/* The calling thread's index (1-based, dense): a track per launching thread. */
	uint32_t (*thread_index)(void);
	/* On the launching thread: its launch context and state now. Thread-local reads only. */
	void (*capture)(struct fp_sink_capture *out);
	/*
	 * On the launching thread, for a launch timed there (the host backend): in session
	 * `session` (FP_SINK_ALL: every active one) file the launch under the thread's context now
	 * and record `ev` for it. FP_OK, FP_EINVAL, FP_ENOENT (no such session).
	 */
	int (*launch_timed)(int session, const struct fp_sink_launch *l,
			    const struct fp_sink_event *ev);

	/* ---- one session ---- */
	/* The device table (written into the profile): a number or a string per key. */
	int (*set_device)(struct fp_sink_session *s, const char *type, const char *index,
			  const char *key, double value);
	int (*set_device_str)(struct fp_sink_session *s, const char *type, const char *index,
			      const char *key, const char *value);
	/* A string in the metadata file's "environment" object. */
	int (*set_meta)(struct fp_sink_session *s, const char *key, const char *value);
	/* The session's output path without suffix, its directory resolved at start (for a
	 * backend's own file beside the outputs). */
	const char *(*output_name)(const struct fp_sink_session *s);
	/* Whether the session is active now. */
	bool (*active)(const struct fp_sink_session *s);
	/*
	 * A kernel event, launched in context `inner` (capture().lctx) inside context `outer`
	 * (FP_SINK_LCTX_NONE for none; a CUDA graph's replay: the replaying context, the capturing
	 * one inside). `ls` (NULL or unknown: the session's state now) says whether the session
	 * files it. *node (may be NULL) gets the node it was filed to, or FP_SINK_NO_NODE.
	 * Failures (memory, caps) are counted in the session. FP_OK or FP_EINVAL.
	 */
	int (*kernel)(struct fp_sink_session *s, const struct fp_sink_event *ev, uint32_t outer,
		      uint32_t inner, const struct fp_sink_launch_state *ls, uint32_t *node);
	/* `n` events the backend lost, with the reason (kept, the first 8). */
	int (*dropped)(struct fp_sink_session *s, uint64_t n, const char *reason);
	/*
	 * Metric values per launch onto the nodes kernel() gave: per node, sums for
	 * FP_SINK_AGG_SUM metrics and weight-averaged means for FP_SINK_AGG_MEAN ones, plus the
	 * `launches` count. FP_OK; FP_EINVAL (bad arguments, unknown node); FP_ESTATE when the
	 * session already has one of these metrics (attaching twice would double the sums);
	 * FP_ENOMEM/FP_ELIMIT (part of the values may be in). `st` may be NULL.
	 */
	int (*metrics)(struct fp_sink_session *s, const struct fp_sink_metrics *m,
		       struct fp_sink_metrics_stats *st);
	/* Declare, before any PC sample, the stall-reason metrics samples will name, in the order
	 * they appear in the profile (after "num_samples" and "num_stalled_samples"). */
	int (*pc_reasons)(struct fp_sink_session *s, const char *const *reasons, size_t n);
	/* File one PC-sample count (see struct fp_sink_pc_sample). */
	int (*pc_sample)(struct fp_sink_session *s, const struct fp_sink_pc_sample *v);
	/*
	 * The path of a node kernel() gave, "scope/.../kernel" below ROOT, into buf (truncated at a
	 * frame boundary to fit; NUL-terminated when size > 0). Returns its length, 0 for
	 * FP_SINK_NO_NODE, or FP_EINVAL.
	 */
	int (*node_path)(struct fp_sink_session *s, uint32_t node, char *buf, size_t size);
};

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_SINK_H */
