/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of a profiling session share among themselves, listed from the bottom up: each
 * calls only files listed before it, and none calls a feature by name (only through its row).
 * session.c (the registry, a session's allocation, the visit of sessions), session-event.c
 * (event intake and tree helpers), session-lctx.c (launch contexts), session-scope.c (scopes
 * and states), session-meta.c (metadata, devices, stats), session-write.c (writer table,
 * outputs, finalize and shutdown) and session-start.c (start, and the feature table). The
 * session struct itself and what other prof/ files use are in prof-internal.h. Not for any file
 * outside this list.
 */
#ifndef FP_PROF_SESSION_INTERNAL_H
#define FP_PROF_SESSION_INTERNAL_H

#include "prof/prof-internal.h"

/* ---- session.c ------------------------------------------------------------------------------ */

/*
 * A new session (not registered) with options `opt` (NULL: the defaults) checked and copied,
 * delivering through `sink`, with the feature table `features` (FP__PROF_NFEATURES rows).
 * FP_OK, FP_EINVAL (an unknown context or data kind), FP_ENOENT (an unknown backend), FP_ENOMEM.
 */
int fp__prof_session_new(const struct fp_prof_options *opt, const struct fp_sink *sink,
			 const struct fp__prof_feature *const *features,
			 struct fp_prof_session **out, struct fp_diag *diag);

/* Free a session that is out of the registry (a failed start, or the end of finalize). */
void fp__prof_session_free(struct fp_prof_session *s);

/*
 * Put a new session (its path resolved) in the registry, claimed and inactive, so that its
 * backend's start can already address it by id while FP_PROF_ALL callers pass it by: its id
 * and slot given, its name locked across processes. FP_OK, or FP_EBUSY (another session of this
 * process, or another process, writes that name), FP_ELIMIT (FP_PROF_MAX_SESSIONS open),
 * FP_EIO, FP_ENOMEM with diag saying why; the session stays the caller's.
 */
int fp__prof_register(struct fp_prof_session *s, struct fp_diag *diag);

/* After the backend's start returned `rc`: FP_OK makes the session active and visible to every
 * caller; any other takes it out of the registry again (the caller frees it). */
void fp__prof_register_end(struct fp_prof_session *s, int rc);

/*
 * Claim session `id` for finalize (finalizing set, inactive from now on): the first caller wins,
 * the others get NULL with *rc FP_ESTATE (FP_ENOENT: no such session).
 */
struct fp_prof_session *fp__prof_claim(int id, int *rc);

/* The ids of the sessions not being finalized (ids: FP_PROF_MAX_SESSIONS); returns how many. */
int fp__prof_open_ids(int *ids);

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

/* The node a kernel is filed under, given the node `base` of its context: each feature's
 * kernel_base() in turn (collectives: a group node below `base`). */
int fp__prof_kernel_base(struct fp_prof_session *s, uint32_t kernel, uint32_t base, uint32_t *out);

/* ---- session-meta.c ------------------------------------------------------------------------- */

/* The session's counters (session lock held, or the session is ours alone). */
void fp__prof_stats_locked(struct fp_prof_session *s, struct fp_prof_stats *out);

/* ---- session-write.c ------------------------------------------------------------------------ */

/*
 * Session lock held, or the session is ours alone (finalize). A reason is kept once; the ones
 * past the eighth, or past FP__INCOMPLETE_LEN bytes, are cut.
 */
void fp__prof_note_incomplete(struct fp_prof_session *s, const char *why);

/* ---- session-lctx.c ------------------------------------------------------------------------- */

/* After a scope or state change on the calling thread: re-intern its launch context. */
void fp__prof_lctx_refresh(void);
/* Free the contexts (fp_prof_shutdown); ids threads still hold read as "none". */
void fp__prof_lctx_release(void);

#endif /* FP_PROF_SESSION_INTERNAL_H */
