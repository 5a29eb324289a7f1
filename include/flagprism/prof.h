/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profiler core: sessions, user scopes and states, Python call paths, kernel launch events,
 * and the files a session writes when it finalizes (`<name>.hatchet`, `<name>.chrome_trace.json`,
 * `<name>.meta.json`, see docs/formats/profiler-formats.md). The Python package only forwards calls here;
 * every aggregation happens in C. Where events come from is the backends' business
 * (include/flagprism/backend.h); the tree these functions fill is include/flagprism/calltree.h.
 *
 * Sessions. fp_prof_start() creates, starts and activates a session and returns a small integer
 * id. Several sessions may be open at once; every function taking a `session` id also accepts
 * FP_PROF_ALL, meaning every open session (and, for events, every *active* one). A deactivated
 * session keeps its scope stacks in step (so a later activation does not see mismatched exits)
 * but ignores events and metrics. fp_prof_finalize() stops the backend, flushes it, writes the
 * files and frees the session; the id is never reused in the process. Two open sessions never
 * share a name (fp_prof_start() refuses the second): their files would overwrite each other.
 *
 * Context. Each session keeps a scope stack per thread. With context "shadow" a kernel's node is
 * ROOT / scopes... / [state] / kernel. With context "python" it is ROOT / scopes... / call-path
 * frames... / [state] / kernel, where the call path is the one given with the launch. Scope
 * metrics go to the innermost scope's node (ROOT / scopes...), or to ROOT outside any scope: in
 * both contexts above the kernels launched inside the scope.
 *
 * Names and call paths are process-wide (shared by all sessions, kept until fp_prof_shutdown()),
 * so the Python extension can cache a call-path id per code location once.
 *
 * Threads. Every function here may be called from any thread. Kernel events may arrive
 * concurrently from many threads (vendor callback threads, launch threads). Scope and state
 * calls act on the calling thread's stack.
 */
#ifndef FLAGPRISM_PROF_H
#define FLAGPRISM_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/calltree.h>
#include <flagprism/export.h>
#include <flagprism/sink.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fp_backend_ops;
struct fp_jsonw;

/* The sink's values (include/flagprism/sink.h), under the profiler's names. */
#define FP_PROF_ALL FP_SINK_ALL                   /* every open (or active) session */
#define FP_PROF_NO_CALLPATH FP_SINK_NO_CALLPATH   /* a launch without a Python call path */
#define FP_PROF_NO_NAME FP_SINK_NO_NAME           /* an unset name id */
#define FP_PROF_MAX_SESSIONS FP_SINK_MAX_SESSIONS /* open at once */

/* Defaults applied when an option is 0. */
#define FP_PROF_DEFAULT_NAME "flagprism"
#define FP_PROF_DEFAULT_MAX_TRACE ((uint64_t)1 << 22)   /* trace records per session */
#define FP_PROF_DEFAULT_MAX_PENDING ((uint64_t)1 << 20) /* launches awaiting their event */
#define FP_PROF_DEFAULT_MAX_SCOPE_DEPTH 256u
#define FP_PROF_DEFAULT_MAX_THREADS 4096u

enum fp_prof_context {
	FP_PROF_CONTEXT_SHADOW = 0, /* explicit scopes only */
	FP_PROF_CONTEXT_PYTHON = 1, /* the launch's Python call path, then scopes */
};

enum fp_prof_data {
	FP_PROF_DATA_TREE = 0,  /* aggregated call tree: <name>.hatchet */
	FP_PROF_DATA_TRACE = 1, /* tree plus a timeline: <name>.chrome_trace.json */
};

/*
 * The names users write for a context, a kind of data and a launch hook ("shadow", "tree",
 * "triton"), by enum value (hooks: 0, 1, ...); NULL past the last. Static storage. The one list
 * the CLI, the extension and the Python API read (src/prof/choices.c).
 */
FP_EXTERN const char *fp_prof_context_name(unsigned i);
FP_EXTERN const char *fp_prof_data_name(unsigned i);
FP_EXTERN const char *fp_prof_hook_name(unsigned i);

/** Session options. Zero-initialise, then set what you need; strings are copied at start. */
struct fp_prof_options {
	const char *name; /* output path without suffix; NULL or "" -> FP_PROF_DEFAULT_NAME */
	enum fp_prof_context context;
	enum fp_prof_data data;
	const char *backend; /* backend registry name; NULL -> "host" */
	const char *hook;    /* launch hook name the Python layer installed ("triton") or NULL;
			      * recorded in the metadata */
	uint64_t max_trace_events;     /* timeline records kept; the rest are counted as dropped */
	uint64_t max_pending_launches; /* registered launches awaiting their event */
	uint32_t max_scope_depth;      /* open scopes per thread */
	uint32_t max_threads;          /* threads with scope state per session */
	struct fp_calltree_limits tree;
};

/* ---- clock, names and call paths ------------------------------------------------------------ */

/** Host monotonic clock (CLOCK_MONOTONIC) in ns: the clock of scopes and of the host backend. */
FP_EXTERN uint64_t fp_prof_clock_ns(void);

/**
 * Intern a name (kernel, device type, frame) in the process-wide table: FP_OK and *id,
 * FP_ENOMEM, FP_ELIMIT, FP_EINVAL. Ids are dense from 0 and stable until fp_prof_shutdown().
 */
FP_EXTERN int fp_prof_name_intern(const char *s, size_t len, uint32_t *id);

/** The string of a name id (borrowed, valid until fp_prof_shutdown()), or NULL. */
FP_EXTERN const char *fp_prof_name_str(uint32_t id, size_t *len);

/** One Python frame as the extension reads it from a code object and a line number. */
struct fp_prof_frame {
	const char *file; /* co_filename */
	size_t file_len;
	const char *func; /* co_name */
	size_t func_len;
	uint32_t line;
};

/**
 * Intern a call path, outermost frame first. Each frame becomes the name "file:func@line"
 * (the convention proton-viewer's -f formats split on). Equal paths get equal ids; FP_OK and
 * *id, FP_ENOMEM, FP_ELIMIT, FP_EINVAL. The extension should cache ids by code identities and
 * call this only on a miss: it hashes and compares every frame.
 */
FP_EXTERN int fp_prof_callpath_intern(const struct fp_prof_frame *frames, size_t n, uint32_t *id);

/** Intern a call path from name ids (fp_prof_name_intern()), outermost first. */
FP_EXTERN int fp_prof_callpath_intern_ids(const uint32_t *names, size_t n, uint32_t *id);

/** The number of frames of a call path in *n: FP_OK, or FP_EINVAL for an unknown id. */
FP_EXTERN int fp_prof_callpath_length(uint32_t id, size_t *n);

#define FP_PROF_MAX_NOTE 4096u /* bytes of a call path's note */

/**
 * Intern a call path from name ids that carries a *note*: what the launch's kernel node should
 * say about where the kernel came from (for an Inductor kernel, the model source lines and ATen
 * ops it was generated from). The note is lines "key\tvalue" separated by '\n' (at most
 * FP_PROF_MAX_NOTE bytes); each becomes a string property `key` of the kernel nodes of the
 * launches made with this path, in every context (shadow sessions ignore the frames, not the
 * note). The note is part of the path's identity. FP_OK, FP_EINVAL, FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_prof_callpath_intern_noted(const uint32_t *names, size_t n, const char *note,
					    size_t note_len, uint32_t *id);

/** The note of a call path (borrowed until fp_prof_shutdown()), or NULL if it has none. */
FP_EXTERN const char *fp_prof_callpath_note(uint32_t id, size_t *len);

/**
 * The call path `outer`'s frames followed by `inner`'s minus the leading frames the two share,
 * with `inner`'s note (else `outer`'s): a CUDA graph's kernel replayed from `outer` and captured
 * at `inner`. Either FP_PROF_NO_CALLPATH gives the other. FP_OK, FP_EINVAL, FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_prof_callpath_join(uint32_t outer, uint32_t inner, uint32_t *id);

/**
 * A call path for every launch the calling thread makes until it is replaced (thread-local):
 * the Python extension's call-path reader returns it instead of reading the frames, and the
 * CUPTI launch callback uses it for a launch nobody handed a call path to (PyTorch's static
 * CUDA launcher calls no Triton hook). For a framework's launch wrapper (Inductor's
 * CachingAutotuner.run, a CUDA graph's replay) that knows the path better than the frames
 * below it. Returns the previous one, to be restored; FP_PROF_NO_CALLPATH: none.
 */
FP_EXTERN uint32_t fp_prof_callpath_override_set(uint32_t id);
FP_EXTERN uint32_t fp_prof_callpath_override(void);

/**
 * The name ids of a call path, outermost first: stores up to `cap` of them and returns the
 * path's length (0 for an unknown id or FP_PROF_NO_CALLPATH).
 */
FP_EXTERN size_t fp_prof_callpath_frames(uint32_t id, uint32_t *out, size_t cap);

/* ---- events (what backends deliver: include/flagprism/sink.h) ------------------------------ */

/** A process-wide correlation id (1, 2, ...) for backends that have none of their own. */
FP_EXTERN uint64_t fp_prof_correlation_next(void);

/**
 * On the launching thread: remember, for each targeted active session, the node the launch
 * belongs to (its context right now) and its metadata, under `correlation` (non-zero). The
 * event carrying that correlation later lands on that node. FP_OK, FP_EINVAL, FP_ENOENT (no
 * such session); capacity overflows are counted as dropped launches, not errors.
 */
FP_EXTERN int fp_prof_launch_register(int session, uint64_t correlation,
				      const struct fp_sink_launch *launch);

/**
 * Deliver one event to every targeted active session. Thread-safe. FP_OK, FP_EINVAL (bad event),
 * FP_ENOENT (no such session). Per-session failures (OOM, caps) are counted, not returned.
 */
FP_EXTERN int fp_prof_kernel(int session, const struct fp_sink_event *ev);

/* ---- sessions ---------------------------------------------------------------------------------- */

/** Opaque session; owned by the registry between fp_prof_start() and fp_prof_finalize(). */
struct fp_prof_session;

/**
 * Create a session with `opt` (NULL: all defaults), start its backend and activate it; store
 * its id in *session. The name's directory is resolved now (symbolic links and "..", against
 * the working directory of this moment), so a program that changes directory later does not
 * move or lose its outputs, and two names for one place are one name. Before anything starts,
 * the output location is checked (its directory takes a new file and the longest output name
 * fits the file system: fp_outfile_check()), so a run is not wasted on outputs that cannot be
 * written, and the name is locked against other processes: an advisory lock (flock) on
 * `<dir>/.<base>.flagprism.lock`, held until finalize, which removes the file. FP_OK,
 * FP_EINVAL (bad option, or an output name that is too long; diag says which), FP_EIO (the
 * directory is missing, read-only or not ours: diag names the errno), FP_EBUSY (an open
 * session of this process or another process already writes this name: their files would
 * overwrite each other's), FP_ENOENT (unknown backend), FP_ELIMIT (FP_PROF_MAX_SESSIONS open),
 * FP_ENOMEM, or the backend's start error.
 */
FP_EXTERN int fp_prof_start(const struct fp_prof_options *opt, int *session, struct fp_diag *diag);

/**
 * Record why a session (or FP_PROF_ALL) will not be whole: the metadata file says
 * "incomplete": true with `reason` (copied; at most 8 reasons of 319 bytes are kept, the same
 * reason once). For what the library cannot see itself: a signal that ended the program,
 * launches still running at finalize. FP_OK, FP_EINVAL (empty reason), FP_ENOENT.
 */
FP_EXTERN int fp_prof_mark_incomplete(int session, const char *reason);

/** (De)activate a session or FP_PROF_ALL. FP_OK or FP_ENOENT. */
FP_EXTERN int fp_prof_activate(int session);
FP_EXTERN int fp_prof_deactivate(int session);

/**
 * Stop and flush the backend, write the outputs and free the session (or every open session).
 * The metadata file is written first marked incomplete ("finalize did not finish"), then the
 * data files, then the metadata again: a process killed while writing leaves files marked
 * incomplete, never a set that looks whole. A data file that cannot be written (a full disk, a
 * directory gone) is written instead into a new private directory under $TMPDIR (or /tmp),
 * `flagprism-rescue-XXXXXX`, and the metadata says where and why; when the metadata itself
 * cannot be written, the first one is removed (it would give the wrong reason) and the metadata
 * goes where it fits, the rescue directory last. After fp_outfile_interrupt()'s deadline
 * nothing more is written or rescued: what was complete stays, the first metadata says the
 * rest is missing.
 * `format`: NULL or "" writes the data option's files ("hatchet", plus "chrome_trace" for
 * trace data); otherwise a comma list of writer names ("hatchet", "chrome_trace"). The
 * metadata file is always written, last. Returns FP_OK or the first error (the session is freed
 * in any case; diag names the failing file, its errno, and the rescue directory if one took
 * it).
 */
FP_EXTERN int fp_prof_finalize(int session, const char *format, struct fp_diag *diag);

/**
 * Called for each file a finalize wrote: the writer's name ("hatchet", "chrome_trace", "meta")
 * and the file's path (borrowed for the call): the session's name as given at start plus the
 * writer's suffix, or the file's absolute path in a rescue directory.
 */
typedef void (*fp_prof_output_fn)(void *arg, const char *writer, const char *path);

/** fp_prof_finalize() that also reports each file written to `fn` (may be NULL), data files
 *  first, the metadata last, after all of them were written. */
FP_EXTERN int fp_prof_finalize_each(int session, const char *format, fp_prof_output_fn fn,
				    void *arg, struct fp_diag *diag);

/**
 * Finalize every open session as abandoned (files written, metadata "incomplete": true with
 * reason "shutdown"), then free the process-wide names and call paths. For process exit and
 * tests. Sessions must not be used concurrently with it.
 */
FP_EXTERN void fp_prof_shutdown(void);

/** The session with this id (borrowed until it is finalized), or NULL. */
FP_EXTERN struct fp_prof_session *fp_prof_session_get(int session);
/** Its id, name (output path base) and options as given at start (strings borrowed). */
FP_EXTERN int fp_prof_session_id(const struct fp_prof_session *s);
FP_EXTERN const char *fp_prof_session_name(const struct fp_prof_session *s);
FP_EXTERN bool fp_prof_session_active(const struct fp_prof_session *s);
/** The backend the session was started with (include/flagprism/backend.h). */
FP_EXTERN const struct fp_backend_ops *fp_prof_session_backend(const struct fp_prof_session *s);

/**
 * The profiler's sink (include/flagprism/sink.h): the one table of calls every backend delivers
 * through, and a session's handle in it (borrowed until the session is finalized; NULL for
 * NULL). For tests and tools that drive a backend's ops or deliver as a backend would.
 */
FP_EXTERN const struct fp_sink *fp_prof_sink(void);
FP_EXTERN struct fp_sink_session *fp_prof_session_sink(struct fp_prof_session *s);
/** Number of open sessions. */
FP_EXTERN size_t fp_prof_session_count(void);

/** Deliver an event to this session only (the backend contract's intake; thread-safe). */
FP_EXTERN int fp_prof_session_kernel(struct fp_prof_session *s, const struct fp_sink_event *ev);

/* ---- launch contexts (for activity sources that must not lock on the launch path) ----------- */

/* FP_SINK_LCTX_NONE: no scope and no state open in any session; FP_SINK_LCTX_LOST: the context
 * could not be kept (table full, memory). */
#define FP_PROF_MAX_LCTX ((uint32_t)1 << 20) /* distinct launch contexts per process */

/**
 * The calling thread's launch context, read from a thread-local variable: no lock, no call into
 * the sessions. It is a process-wide id for what the thread has open right now in every session
 * (innermost scope and state), which the scope and state functions re-intern after each change
 * on that thread. A vendor launch callback stores it next to its correlation id and hands it
 * back with the device record (fp_prof_session_kernel_lctx()). Equal contexts get equal ids;
 * ids stay valid until fp_prof_shutdown(). FP_SINK_LCTX_NONE when nothing is open.
 */
FP_EXTERN uint32_t fp_prof_launch_context(void);

/**
 * Deliver `ev` to session `s` as launched in context `inner` (from fp_prof_launch_context()),
 * itself inside context `outer` (FP_SINK_LCTX_NONE for none; a CUDA graph replay passes the
 * replaying thread's context as `outer` and the capturing thread's as `inner`). The kernel lands
 * on ROOT / outer's scopes / [outer's state] / inner's scopes after dropping the leading frames
 * they share with outer's / [ev->callpath, context "python" only] / [inner's state] / kernel.
 * ev->correlation is written to the timeline but not matched against registered launches. A
 * context FP_SINK_LCTX_LOST is treated as none and counted as `unmatched`. Thread-safe.
 * FP_OK or FP_EINVAL (bad event).
 */
FP_EXTERN int fp_prof_session_kernel_lctx(struct fp_prof_session *s, const struct fp_sink_event *ev,
					  uint32_t outer, uint32_t inner);

/** fp_prof_session_kernel_lctx() that also stores the kernel node the event was filed to in
 *  *filed (FP_CALLTREE_NONE when it was not: inactive session, tree caps). `filed` may be NULL.
 *  Used by collectors that attach more values to the same node later (hardware metrics). */
FP_EXTERN int fp_prof_session_kernel_lctx_node(struct fp_prof_session *s,
					       const struct fp_sink_event *ev, uint32_t outer,
					       uint32_t inner, uint32_t *filed);

/* ---- the state at launch (exact deactivation, FlagPrism's own launches) --------------------- */

/*
 * A device record arrives long after its launch (CUPTI hands buffers back when they fill, at the
 * latest at finalize), so whether a session was active when the record arrives says nothing
 * about the launch. An activity source takes fp_prof_launch_state_now() in its launch callback
 * (two thread-local or relaxed atomic reads: no lock) and hands it back with the record: the
 * kernel is filed in exactly the sessions that were active when it was launched, whatever they
 * are when its record comes, and a launch FlagPrism made for itself is dropped and counted.
 */

/**
 * Bit i is set while the session in registry slot i (fp_prof_session_slot()) is open and
 * active. Slots are handed out round robin, so a slot is reused only after the 63 others were.
 */
FP_EXTERN uint64_t fp_prof_active_mask(void);

/** The session's registry slot (0..FP_PROF_MAX_SESSIONS-1), -1 for NULL. */
FP_EXTERN int fp_prof_session_slot(const struct fp_prof_session *s);

/**
 * Mark FlagPrism's own work on the calling thread (a thread-local depth; nestable): `delta` +1
 * on entry, -1 on exit. Launches made while the depth is above 0 (record buffers, read-backs)
 * are not recorded by any backend: the host backend and the CUPTI launch callback drop them
 * and count them in the sessions that were active (stats `internal`, metadata
 * "lost.flagprism_internal_launches"). Returns the new depth, or FP_EINVAL (nothing changed)
 * if it would go below 0 or above 2^20.
 */
FP_EXTERN int fp_prof_internal_mark(int delta);
/** The calling thread's internal depth (0: the program's own work). */
FP_EXTERN uint32_t fp_prof_internal_depth(void);

/** The calling thread's launch state now (known = 1). */
FP_EXTERN void fp_prof_launch_state_now(struct fp_sink_launch_state *out);

/**
 * fp_prof_session_kernel_lctx_node() for a launch whose state was taken at launch: with `ls`
 * known, the kernel is filed if the session was active then (even if it is deactivated now),
 * counted as ignored if it was not, and counted as FlagPrism's own (stats `internal`) if the
 * launch was made under the internal mark while the session was active. `ls` NULL or unknown:
 * the session's state now decides, as fp_prof_session_kernel_lctx_node() does.
 */
FP_EXTERN int fp_prof_session_kernel_launched(struct fp_prof_session *s,
					      const struct fp_sink_event *ev, uint32_t outer,
					      uint32_t inner, const struct fp_sink_launch_state *ls,
					      uint32_t *filed);

/** A backend reports `n` events it lost (buffer overflow...); `reason` is kept (first 8). */
FP_EXTERN int fp_prof_session_note_dropped(struct fp_prof_session *s, uint64_t n,
					   const char *reason);

/** Attach a string to the metadata file's "environment" object (Python, Triton versions...). */
FP_EXTERN int fp_prof_set_meta(int session, const char *key, const char *value);

/** Device table entries written as the Hatchet file's element [1] (see calltree.h). */
FP_EXTERN int fp_prof_set_device(int session, const char *type, const char *index, const char *key,
				 double value);
FP_EXTERN int fp_prof_set_device_str(int session, const char *type, const char *index,
				     const char *key, const char *value);

/** The same, on a session pointer (what a backend's start callback has). */
FP_EXTERN int fp_prof_session_set_device(struct fp_prof_session *s, const char *type,
					 const char *index, const char *key, double value);
FP_EXTERN int fp_prof_session_set_device_str(struct fp_prof_session *s, const char *type,
					     const char *index, const char *key, const char *value);

/** Counters of one session: what was recorded and what was lost. */
struct fp_prof_stats {
	uint64_t kernels;             /* kernel events aggregated */
	uint64_t scopes;              /* scope exits recorded */
	uint64_t trace_records;       /* timeline records kept */
	uint64_t dropped_trace;       /* timeline records over max_trace_events */
	uint64_t dropped_launches;    /* launch registrations over max_pending_launches */
	uint64_t dropped_backend;     /* reported by the backend */
	uint64_t unmatched;           /* events whose correlation had no registered launch */
	uint64_t pending;             /* registered launches still waiting for their event */
	uint64_t ignored_inactive;    /* events and metrics while deactivated */
	uint64_t exits_without_enter; /* exits of scopes opened before the session started */
	uint64_t clamped_timestamps;  /* times before the session origin, written as 0 */
	uint64_t failed;              /* events or metrics lost to errors (memory, tree caps) */
	uint64_t open_scopes;         /* scopes open now, all threads */
	uint64_t nodes;               /* call-tree nodes */
	uint64_t internal;        /* launches FlagPrism made for itself (internal mark), dropped */
	uint64_t scopes_too_deep; /* scopes entered past max_scope_depth, dropped */
};

/** Fill *out (locks the session briefly). FP_OK or FP_EINVAL. */
FP_EXTERN int fp_prof_session_stats(struct fp_prof_session *s, struct fp_prof_stats *out);

/**
 * The session's tree (borrowed). Only for single-threaded inspection (tests, benchmarks) while
 * nothing else feeds the session; finalize it before reading totals.
 */
FP_EXTERN struct fp_calltree *fp_prof_session_tree(struct fp_prof_session *s);

/* ---- scopes, states, scope metrics ------------------------------------------------------------ */

#define FP_PROF_SCOPE_CPU_TIME (1u << 0) /* at exit add "cpu_time (ns)(exc)" to the scope node */

/**
 * Open a scope named `name` on the calling thread. FP_OK; a positive count of the sessions where
 * the scope was deeper than their max_scope_depth: there it is counted (scopes_too_deep, the
 * metadata's lost.scopes_too_deep) and dropped, its launches filed under the deepest scope kept
 * and its exit paired without a name check; FP_ENOENT, FP_ENOMEM.
 */
FP_EXTERN int fp_prof_scope_enter(int session, const char *name, size_t len, unsigned flags);

/**
 * Close the calling thread's innermost scope. With a name, it must match the innermost open
 * scope: otherwise FP_ESTATE, the stack is left as it was and diag says "scope exit 'b' does
 * not match the innermost open scope 'a'". A NULL name closes whatever is innermost. Closing
 * with no scope open in a session that started inside the scope is counted, not an error.
 */
FP_EXTERN int fp_prof_scope_exit(int session, const char *name, size_t len, struct fp_diag *diag);

/** Add `value` to metric `name` (kind from its suffix) of the innermost scope's node. */
FP_EXTERN int fp_prof_scope_metric(int session, const char *name, size_t len, double value);

/** Tag the calling thread's launches with a state node until fp_prof_state_exit(). A state is
 *  not nested: entering another one replaces it. */
FP_EXTERN int fp_prof_state_enter(int session, const char *name, size_t len);
FP_EXTERN int fp_prof_state_exit(int session);

/** Open scopes on the calling thread in `session` (not FP_PROF_ALL). FP_OK or FP_ENOENT. */
FP_EXTERN int fp_prof_scope_depth(int session, uint32_t *depth);

/* ---- writers ----------------------------------------------------------------------------------- */

/** One output format of a session: a row of the writer table (one file per format). */
struct fp_writer_ops {
	const char *name;   /* "hatchet", "chrome_trace", "meta" */
	const char *suffix; /* appended to the session name: ".hatchet", ... */
	/* Write the whole document; returns FP_OK or the writer's error. */
	int (*write)(struct fp_prof_session *s, struct fp_jsonw *w);
};

/** Row `i` of the writer table, or NULL past the end. */
FP_EXTERN const struct fp_writer_ops *fp_prof_writer_at(size_t i);
/** The writer named `name`, or NULL. */
FP_EXTERN const struct fp_writer_ops *fp_prof_writer_find(const char *name);

/**
 * Write one format of a (not yet finalized) session to `path` with a writer from the table.
 * Used by finalize and by tests. FP_OK, FP_EIO (diag names the path), FP_ENOMEM.
 */
FP_EXTERN int fp_prof_session_write(struct fp_prof_session *s, const struct fp_writer_ops *wr,
				    const char *path, struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_PROF_H */
