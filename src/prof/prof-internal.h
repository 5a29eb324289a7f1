/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profiler session's private layout and the helpers its files share (session*.c, names.c,
 * the writers, the features), with the two tables the session core is extended through: the
 * writer table (one row per profile format) and the feature table (one row per feature that
 * adds to a session: collectives, ranks, intra-kernel timelines). Not a public header: clients
 * see include/flagprism/prof.h.
 */
#ifndef FP_PROF_INTERNAL_H
#define FP_PROF_INTERNAL_H

#include <pthread.h>

#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/prof.h>

#include "core/hashmap-internal.h"

struct fp_jsonw;

/* ---- names.c: process-wide names and call paths -------------------------------------------- */

/* Frames of a call path: *n = its length, up to `cap` copied to out. FP_EINVAL: unknown id. */
int fp__prof_callpath_get(uint32_t id, uint32_t *out, size_t cap, size_t *n);
/*
 * The name a kernel's node gets: the full demangled form of a mangled C++ name (interned; cached
 * per name), else the name itself. The node keeps the mangled one as its "mangled_name".
 */
uint32_t fp__prof_kernel_display(uint32_t kernel);
/* The name id of a call path's note, FP_PROF_NO_NAME for none or an unknown id. */
uint32_t fp__prof_callpath_note_id(uint32_t id);
/* Free the process-wide tables (fp_prof_shutdown). */
void fp__prof_names_release(void);

/* ---- session*.c: the session (session-internal.h has what only those files share) ------- */

struct fp__prof_feature;

struct fp__prof_scope {
	uint32_t frame; /* tree frame id */
	uint32_t node;  /* ROOT / scopes... up to this one */
	uint64_t begin;
	unsigned flags;                         /* FP_PROF_SCOPE_CPU_TIME */
	const struct fp__prof_feature *feature; /* the feature that opened it, or NULL */
	uint64_t data[2];                       /* what that feature keeps with it */
};

struct fp__prof_thread {
	uint32_t tid; /* process-wide thread index, 1-based */
	uint32_t depth, alloc;
	uint32_t dropped; /* scopes open past max_scope_depth: counted, not in the tree */
	struct fp__prof_scope *stack;
	uint32_t state_frame; /* FP_CALLTREE_NONE: no state */
};

enum fp__trace_kind {
	FP__TRACE_KERNEL = 1,
	FP__TRACE_SCOPE = 2,
	FP__TRACE_ISCOPE = 3, /* intra-kernel scope slice (timeline-session.c): stream = timeline
			       * launch index, correlation = track id, grid = program, smid, depth */
	FP__TRACE_COMM = 4    /* collective scope (comm.c): tid = thread, correlation = bytes,
			       * grid[0] = communicator size, grid[1] = 1 for async calls */
};

/* The trace writer's track of a thread's collectives and of a stream's collective kernels:
 * this bit added to the thread index or stream id (below the overlap lanes' bits). */
#define FP__TRACK_COMM ((uint64_t)1 << 30)

/* Track ids of intra-kernel slices (the trace writer names them "SM n" / "program n"). */
#define FP__TL_TRACK_SM ((uint64_t)1 << 28)
#define FP__TL_TRACK_PROGRAM ((uint64_t)1 << 29)
#define FP__TL_TRACK_MASK (((uint64_t)1 << 28) - 1)

struct fp__trace_rec {
	uint64_t begin, end; /* ns, host monotonic clock */
	uint64_t stream;     /* kernel: stream; scope: 0 */
	uint64_t correlation;
	uint32_t node;
	uint32_t kind;
	uint32_t device_id;
	uint32_t device_type; /* global name id */
	uint32_t tid;         /* scope: thread index */
	uint32_t grid[3];
};

#define FP__TRACE_CHUNK_SHIFT 12
#define FP__TRACE_CHUNK ((size_t)1 << FP__TRACE_CHUNK_SHIFT)

struct fp__pending {
	uint32_t node;
	uint32_t used;
	struct fp_sink_metadata md;
};

/* Metric slots a session registers lazily. */
enum {
	FP__M_TIME,
	FP__M_COUNT,
	FP__M_DEVICE_ID,
	FP__M_DEVICE_TYPE,
	FP__M_FLOPS8,
	FP__M_FLOPS16,
	FP__M_FLOPS32,
	FP__M_FLOPS64,
	FP__M_BYTES,
	FP__M_EST_BYTES,
	FP__M_EST_FLOPS,
	FP__M_CPU_TIME,
	FP__M_COUNT_SLOTS
};

#define FP__MAX_DROP_REASONS 8
#define FP__MAX_ENV 64
#define FP__INCOMPLETE_LEN 320

/* ---- the writer table: one row per profile format -------------------------------------------- */

/*
 * X(name, suffix, writer, when) for each format a session writes, in the order of the writer
 * table (fp_prof_writer_at(), made in session-write.c). A session keeps room for one output of
 * each (FP__PROF_NWRITERS), so a new format is its writer's file and one row here. `when`:
 * FP__PROF_OUT_DEFAULT is written when no format is named, FP__PROF_OUT_TRACE also when the
 * session records a trace, FP__PROF_OUT_META always, first and last (it lists the others), and
 * is never named.
 */
#define FP__PROF_WRITERS(X)                                                                      \
	X("hatchet", ".hatchet", fp__prof_write_hatchet, FP__PROF_OUT_DEFAULT)                   \
	X("chrome_trace", ".chrome_trace.json", fp__prof_write_chrome_trace, FP__PROF_OUT_TRACE) \
	X("meta", ".meta.json", fp__prof_write_meta, FP__PROF_OUT_META)

enum {
	FP__PROF_OUT_DEFAULT = 1,
	FP__PROF_OUT_TRACE,
	FP__PROF_OUT_META
};

#define FP__PROF_WRITER_ONE(name, suffix, writer, when) 1 +
#define FP__PROF_NWRITERS (FP__PROF_WRITERS(FP__PROF_WRITER_ONE) 0)

#define FP__PROF_WRITER_DECL(name, suffix, writer, when) \
	int writer(struct fp_prof_session *s, struct fp_jsonw *w);
FP__PROF_WRITERS(FP__PROF_WRITER_DECL)
#undef FP__PROF_WRITER_DECL

/* ---- the feature table: what collectives, ranks and timelines add to a session --------------- */

/*
 * X(ID, name) for each feature, in the order the core calls them (the order of the members they
 * write): its row is fp__prof_feature_<name>, defined in its own file, and its state is
 * s->feature_state[FP__PROF_F_<ID>]. The core calls features only through their rows, so a
 * new feature is its file and one row here.
 */
#define FP__PROF_FEATURES(X)                            \
	X(TIMELINE, timeline) /* timeline-session.c */  \
	X(COMM, comm)         /* comm.c: collectives */ \
	X(RANKS, ranks)       /* ranks.c: the rank's identity */

enum {
#define FP__PROF_FEATURE_ID(id, name) FP__PROF_F_##id,
	FP__PROF_FEATURES(FP__PROF_FEATURE_ID)
#undef FP__PROF_FEATURE_ID
	FP__PROF_NFEATURES
};

/*
 * One feature's row: what the session core calls at fixed points of a session's life, always
 * with the session's lock held or the session its caller's alone (finalize). Every member may
 * be NULL. The state a feature keeps per session is its own (s->feature_state[]); the core only
 * hands it to release().
 */
struct fp__prof_feature {
	const char *name; /* "timeline", "comm", "ranks" */
	/* Free the feature's state (the session is being freed). */
	void (*release)(void *state);
	/*
	 * Where a kernel (process-wide name id) is filed: given the node `base` its launch context
	 * gives, the node it goes under (`base`, or a node below it). Called for every kernel filed.
	 */
	int (*kernel_base)(struct fp_prof_session *s, uint32_t kernel, uint32_t base,
			   uint32_t *out);
	/*
	 * A scope the feature opened (fp__prof_scope_enter_feature(), whose `arg` this is) was just
	 * pushed: `sc` is its stack entry, its data[] the feature's. An error pops it again.
	 */
	int (*scope_opened)(struct fp_prof_session *s, struct fp__prof_scope *sc, const void *arg);
	/* Such a scope was popped on thread `tid` at `now` in an active session: its metrics and
	 * trace slice, instead of a plain scope's. An error is counted as failed. */
	int (*scope_closed)(struct fp_prof_session *s, uint32_t tid,
			    const struct fp__prof_scope *sc, uint64_t now);
	const char *scope_noun; /* what its scopes are called in messages: "collective" */
	/* Members of the metadata file's top-level object (meta.c). */
	int (*write_meta)(struct fp_prof_session *s, struct fp_jsonw *w);
	/* Before the trace writer reads the trace records (chrome-trace.c), once per file. */
	void (*trace_begin)(struct fp_prof_session *s);
	/* Members of the trace's "otherData" object. */
	int (*trace_other_data)(struct fp_prof_session *s, struct fp_jsonw *w);
	/* Bits added to the track of a kernel slice filed on `node` (FP__TRACK_COMM), or 0. */
	uint64_t (*trace_kernel_track)(struct fp_prof_session *s, uint32_t node);
};

#define FP__PROF_FEATURE_DECL(id, name) \
	extern const struct fp__prof_feature fp__prof_feature_##name;
FP__PROF_FEATURES(FP__PROF_FEATURE_DECL)
#undef FP__PROF_FEATURE_DECL

struct fp_prof_session {
	pthread_mutex_t lock;
	int id;
	int slot; /* registry slot: its bit in fp_prof_active_mask() */
	bool active;
	bool finalizing;
	char *name;
	char *hook;
	struct fp_prof_options opt; /* strings point to the copies above */
	const struct fp_backend_ops *backend;
	struct fp_sink_session sink; /* what the backend's calls get (sink.c: fp__prof_of_sink) */
	uint64_t origin_ns;          /* fp_prof_clock_ns() at start */
	uint64_t origin_unix_ns;     /* CLOCK_REALTIME at start */
	uint64_t end_unix_ns;        /* at finalize */

	struct fp_calltree *tree;
	uint32_t metric[FP__M_COUNT_SLOTS]; /* FP_CALLTREE_NONE until first use */
	struct fp_hashmap name_map;         /* global name id -> tree frame id */
	struct fp_hashmap callpath_map;     /* (base node, call-path id) -> tree node */
	struct fp_hashmap note_map;         /* kernel node -> note name id last applied */
	struct fp_hashmap thread_map;       /* thread index -> position in threads */
	struct fp__prof_thread **threads;
	size_t nthreads, threads_alloc;

	struct fp_hashmap pending_map; /* correlation -> position in pending */
	struct fp__pending *pending;
	size_t npending_slots, pending_alloc;
	uint32_t *pending_free; /* free list of slots */
	size_t nfree, free_alloc;

	struct fp__trace_rec **trace_chunks;
	size_t ntrace, trace_chunks_alloc;

	struct fp_prof_stats st;
	uint64_t trace_moved; /* slices the trace writer moved to overlap tracks */
	char *drop_reasons[FP__MAX_DROP_REASONS];
	size_t ndrop_reasons;
	char *env_keys[FP__MAX_ENV];
	char *env_values[FP__MAX_ENV];
	size_t nenv;
	char incomplete[8][FP__INCOMPLETE_LEN]; /* why the session did not end cleanly */
	size_t nincomplete;
	char *written[FP__PROF_NWRITERS];    /* writer names written successfully (static) */
	char *written_at[FP__PROF_NWRITERS]; /* where each went: name + suffix, or a rescue path */
	size_t nwritten;
	char *path;       /* the name with its directory resolved at start: what is written */
	char *lock_path;  /* the advisory lock on the name across processes (session.c) */
	int lock_fd;      /* -1: no lock held */
	char *rescue_dir; /* where outputs that could not be written went, or NULL */
	const struct fp__prof_feature *const
		*features;                       /* FP__PROF_NFEATURES rows (session-start.c) */
	void *feature_state[FP__PROF_NFEATURES]; /* each feature's own, NULL until it makes one */
};

/* The session of a sink handle (sink.c), NULL for NULL. */
static inline struct fp_prof_session *fp__prof_of_sink(struct fp_sink_session *h)
{
	return h ? (struct fp_prof_session *)(void *)((char *)h -
						      offsetof(struct fp_prof_session, sink)) :
		   NULL;
}

static inline struct fp__trace_rec *fp__trace_at(const struct fp_prof_session *s, size_t i)
{
	return &s->trace_chunks[i >> FP__TRACE_CHUNK_SHIFT][i & (FP__TRACE_CHUNK - 1)];
}

/* The thread index of the calling thread (1-based, assigned on first use). */
uint32_t fp__prof_thread_index(void);

/* The sink's launch_timed() (sink.c, for the host backend): register the launch's context and
 * record its event in one visit per targeted active session, on the launching thread. */
int fp__prof_host_record(int session, const struct fp_sink_launch *l,
			 const struct fp_sink_event *ev);

/* For timeline-session.c and the session files: the node a launch on the calling thread lands
 * on and adding a trace record (session-event.c), and visiting one or every session (each
 * under its lock, FP_ENOENT for an unknown id, else the first error fn returned: session.c). */
int fp__prof_launch_node(struct fp_prof_session *s, const struct fp_sink_launch *l, uint32_t *node);
int fp__prof_trace_add(struct fp_prof_session *s, const struct fp__trace_rec *r);
int fp__prof_for_sessions(int id, int (*fn)(struct fp_prof_session *s, void *arg), void *arg);

/* ---- sink.c: what backends deliver ---------------------------------------------------------- */

/*
 * The sink's metrics(): per-launch values onto the nodes of `t` (session lock held), per node
 * summed (FP_SINK_AGG_SUM) or weight-averaged (FP_SINK_AGG_MEAN, a property; equal weights when
 * every weight is 0), plus m->launches; include/flagprism/sink.h has the statuses. `st` may be
 * NULL. Unit tests call it on a bare tree.
 */
int fp__prof_attach_ranges(struct fp_calltree *t, const struct fp_sink_metrics *m,
			   struct fp_sink_metrics_stats *st);

/* The sink's pc_reasons() and pc_sample() on `t` (session lock held; unit tests: a bare tree):
 * register num_samples, num_stalled_samples and the reasons in that order; file one count. */
int fp__prof_pc_reasons(struct fp_calltree *t, const char *const *reasons, size_t n);
int fp__prof_pc_file(struct fp_calltree *t, const struct fp_sink_pc_sample *v);

/* ---- features (session-scope.c) ----------------------------------------------------------- */

/*
 * Open a scope that feature `f` owns, named `name` (f->scope_opened() runs on each targeted
 * session with `arg`), and close the innermost scope only if `f` owns it (FP_ESTATE otherwise,
 * diag naming the scope). The scope is counted and nested like any other.
 */
int fp__prof_scope_enter_feature(int session, const char *name, size_t len,
				 const struct fp__prof_feature *f, const void *arg);
int fp__prof_scope_exit_feature(int session, const struct fp__prof_feature *f,
				struct fp_diag *diag);

/* ---- writers -------------------------------------------------------------------------------- */

/* Integral doubles within 2^53 as JSON integers, others as doubles. */
int fp__prof_write_number(struct fp_jsonw *w, double v);

/* Write a JSON file through fp_outfile (temporary file and rename, or written through); fn
 * writes the document. flags: fp_jsonw flags and FP__SAVE_DASH_STDOUT. */
#define FP__SAVE_DASH_STDOUT FP_CALLTREE_SAVE_DASH_STDOUT
int fp__prof_save_json(const char *path, unsigned flags, int (*fn)(void *arg, struct fp_jsonw *w),
		       void *arg, struct fp_diag *diag);

/* Write "<us>.<3-digit ns>" for a duration in ns, exact (no double rounding). */
int fp__prof_write_us(struct fp_jsonw *w, uint64_t ns);

#endif /* FP_PROF_INTERNAL_H */
