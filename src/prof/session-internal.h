/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of a profiling session share among themselves: session.c (registry,
 * lifecycle, finalize and shutdown), session-event.c (event intake and tree helpers),
 * session-scope.c (scopes and states), session-meta.c (metadata, devices, stats),
 * session-write.c (writer table, outputs, finalize of one session) and session-lctx.c (launch
 * contexts). The session struct itself and what other prof/ files use are in prof-internal.h.
 * Not for any file outside this list.
 */
#ifndef FP_PROF_SESSION_INTERNAL_H
#define FP_PROF_SESSION_INTERNAL_H

#include "prof/prof-internal.h"

/* ---- session.c ------------------------------------------------------------------------------ */

/* Free a session that is out of the registry (a failed start, or the end of finalize). */
void fp__prof_session_free(struct fp_prof_session *s);

/*
 * Take a claimed session (finalizing set) out of the registry: inactive and its end time
 * taken; it is the caller's alone from here.
 */
void fp__prof_unregister(struct fp_prof_session *s);

/* ---- session-event.c (session lock held) ---------------------------------------------------- */

/* The tree's metric id of slot FP__M_* (registered on first use). */
int fp__prof_sess_metric(struct fp_prof_session *s, int slot, uint32_t *id);

/*
 * The node base / call-path frames (base: ROOT, or the innermost scope in context "python",
 * where a launch is filed under ROOT / scopes... / call path... / [state] / kernel, so that a
 * scope's own metrics sit above the kernels launched inside it). Cached per (base, call path).
 */
int fp__prof_callpath_node(struct fp_prof_session *s, uint32_t base, uint32_t callpath,
			   uint32_t *node);

/* The calling thread's scope stack in `s`: NULL when it has none (find), or created (get). */
struct fp__prof_thread *fp__prof_thread_find(struct fp_prof_session *s);
int fp__prof_thread_get(struct fp_prof_session *s, struct fp__prof_thread **out);

/* The kernel node below `base` (a mangled name filed under its demangled form). */
int fp__prof_kernel_node(struct fp_prof_session *s, uint32_t base, uint32_t kernel, uint32_t *node);

/* Add `v` to metric slot `slot` of `node`. */
int fp__prof_add_slot(struct fp_prof_session *s, uint32_t node, int slot, double v);

/* File a kernel event with metadata `md` on `node`: metrics, notes, its trace record. */
int fp__prof_record_kernel(struct fp_prof_session *s, uint32_t node, const struct fp_sink_event *ev,
			   const struct fp_sink_metadata *md);

/* Whether an event from a backend is well formed enough to file. */
bool fp__prof_event_ok(const struct fp_sink_event *ev);

/* ---- session-meta.c ------------------------------------------------------------------------- */

/* The session's counters (session lock held, or the session is ours alone). */
void fp__prof_stats_locked(struct fp_prof_session *s, struct fp_prof_stats *out);

/* ---- session-write.c ------------------------------------------------------------------------ */

/*
 * Session lock held, or the session is ours alone (finalize). A reason is kept once; the ones
 * past the eighth, or past FP__INCOMPLETE_LEN bytes, are cut.
 */
void fp__prof_note_incomplete(struct fp_prof_session *s, const char *why);

/* Finalize a claimed session: backend stop, out of the registry, its files (each reported to
 * `fn` when not NULL); frees it. */
int fp__prof_finalize_session(struct fp_prof_session *s, const char *format, fp_prof_output_fn fn,
			      void *arg, struct fp_diag *diag);

/* ---- session-lctx.c ------------------------------------------------------------------------- */

/* After a scope or state change on the calling thread: re-intern its launch context. */
void fp__prof_lctx_refresh(void);
/* Free the contexts (fp_prof_shutdown); ids threads still hold read as "none". */
void fp__prof_lctx_release(void);

#endif /* FP_PROF_SESSION_INTERNAL_H */
