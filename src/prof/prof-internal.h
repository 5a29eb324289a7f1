/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profiler session's private layout and the helpers its files share (session*.c, names.c,
 * the writers). Not a public header: clients see include/flagprism/prof.h.
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

struct fp__prof_scope {
	uint32_t frame; /* tree frame id */
	uint32_t node;  /* ROOT / scopes... up to this one */
	uint64_t begin;
	unsigned flags;
	uint32_t comm_group; /* collective scopes (comm.c): communicator size */
	uint64_t comm_bytes; /* collective scopes: the call's bytes */
};

/* fp__prof_scope.flags bit of a collective scope (comm.c); beside FP_PROF_SCOPE_CPU_TIME. */
#define FP__PROF_SCOPE_COMM (1u << 30)
#define FP__PROF_SCOPE_COMM_ASYNC (1u << 29)

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
	char *written[4];    /* writer names written successfully (static strings) */
	char *written_at[4]; /* where each went: name + suffix, or a rescue path (owned) */
	size_t nwritten;
	char *path;       /* the name with its directory resolved at start: what is written */
	char *lock_path;  /* the advisory lock on the name across processes (session.c) */
	int lock_fd;      /* -1: no lock held */
	char *rescue_dir; /* where outputs that could not be written went, or NULL */
	struct fp__tl_state *tl;     /* intra-kernel timelines (timeline-session.c), NULL if none */
	struct fp__comm_state *comm; /* collective kernels and scopes (comm.c), NULL if none */
	struct fp__rank_state *rank; /* the rank's identity (ranks.c), NULL outside a job */
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

/* ---- timeline-session.c --------------------------------------------------------------------- */

struct fp__tl_state;
void fp__prof_tl_release(struct fp_prof_session *s);
/* Move device-clock slices onto the host clock (once per launch); before writing the trace. */
void fp__prof_tl_align(struct fp_prof_session *s);
/* The metadata's "intra_kernel" member (nothing without timelines). */
int fp__prof_tl_write_meta(struct fp_prof_session *s, struct fp_jsonw *w);

/* ---- comm.c: collectives -------------------------------------------------------------------- */

struct fp__comm_state;
struct fp_comm_call;
void fp__prof_comm_release(struct fp_prof_session *s);
/* The node a kernel (process-wide name id) is filed under, given the node `base` its launch
 * context gives: `base` itself, or for a collective library's kernel launched outside a
 * collective scope, its group "nccl:<Kind>" below `base`. Session lock held. */
int fp__prof_comm_base(struct fp_prof_session *s, uint32_t kernel, uint32_t base, uint32_t *out);
/* A collective scope was just pushed (sc is its stack entry): metrics of its node. */
int fp__prof_comm_opened(struct fp_prof_session *s, struct fp__prof_scope *sc,
			 const struct fp_comm_call *c);
/* A collective scope was just popped on thread `tid` at `now`: its time and trace slice. */
int fp__prof_comm_closed(struct fp_prof_session *s, uint32_t tid, const struct fp__prof_scope *sc,
			 uint64_t now);
/* True when a trace record's node is a collective library's kernel (the trace writer). */
bool fp__prof_comm_kernel_node(struct fp_prof_session *s, uint32_t node);

/* session-scope.c, for comm.c: open a collective scope named `name` (fp__prof_comm_opened() runs on
 * each targeted session), and close the innermost scope only if it is one. */
int fp__prof_scope_enter_comm(int session, const char *name, size_t len,
			      const struct fp_comm_call *c);
int fp__prof_scope_exit_comm(int session, struct fp_diag *diag);

/* ---- ranks.c: the rank's identity ------------------------------------------------------------ */

struct fp__rank_state;
void fp__prof_rank_release(struct fp_prof_session *s);
/* The metadata's "distributed" member (nothing outside a job). */
int fp__prof_rank_write_meta(struct fp_prof_session *s, struct fp_jsonw *w);
/* The trace's otherData members for the trace merger (nothing outside a job). */
int fp__prof_rank_write_trace(struct fp_prof_session *s, struct fp_jsonw *w);

/* ---- writers -------------------------------------------------------------------------------- */

/* Integral doubles within 2^53 as JSON integers, others as doubles. */
int fp__prof_write_number(struct fp_jsonw *w, double v);

/* Write a JSON file through fp_outfile (temporary file and rename, or written through); fn
 * writes the document. flags: fp_jsonw flags and FP__SAVE_DASH_STDOUT. */
#define FP__SAVE_DASH_STDOUT FP_CALLTREE_SAVE_DASH_STDOUT
int fp__prof_save_json(const char *path, unsigned flags, int (*fn)(void *arg, struct fp_jsonw *w),
		       void *arg, struct fp_diag *diag);

int fp__prof_write_hatchet(struct fp_prof_session *s, struct fp_jsonw *w);
int fp__prof_write_chrome_trace(struct fp_prof_session *s, struct fp_jsonw *w);
int fp__prof_write_meta(struct fp_prof_session *s, struct fp_jsonw *w);

/* Write "<us>.<3-digit ns>" for a duration in ns, exact (no double rounding). */
int fp__prof_write_us(struct fp_jsonw *w, uint64_t ns);

#endif /* FP_PROF_INTERNAL_H */
