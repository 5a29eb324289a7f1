/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scopes and states of a profiling session: the per-thread scope stacks that user code opens
 * and closes (fp_prof_scope_enter/exit, and the scopes a feature owns, such as collectives,
 * which its row's hooks complete), metrics recorded on a scope, and the state frame a thread is
 * in. Each change refreshes the thread's launch context (session-lctx.c). Not event intake
 * (session-event.c).
 */
#include "fp-setup.h"

#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

/* ---- scopes and states ------------------------------------------------------------------------ */

struct scope_arg {
	const char *name;
	size_t len;
	unsigned flags;
	uint64_t now;
	struct fp_diag *diag;
	bool diag_set;
	double value;
	const struct fp__prof_feature *feature; /* entering: its owner; exiting: only its scope */
	const void *feature_arg;                /* entering: for feature->scope_opened() */
	int dropped;                            /* entering: sessions where it was too deep */
};

static int scope_enter_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th;
	uint32_t frame, node, parent;
	int rc;

	rc = fp__prof_thread_get(s, &th);
	if (rc)
		return rc;
	if (th->dropped || th->depth >= s->opt.max_scope_depth) {
		/* Too deep: counted and dropped, never an error in the user's code. */
		th->dropped++;
		s->st.scopes_too_deep++;
		a->dropped++;
		return FP_OK;
	}
	if (th->depth == th->alloc) {
		uint32_t na = th->alloc ? th->alloc * 2 : 8;
		struct fp__prof_scope *ns = fp_reallocarray(th->stack, na, sizeof(*ns));

		if (!ns)
			return FP_ENOMEM;
		th->stack = ns;
		th->alloc = na;
	}
	rc = fp_calltree_intern(s->tree, a->name, a->len, &frame);
	if (rc)
		return rc;
	parent = th->depth ? th->stack[th->depth - 1].node : FP_CALLTREE_ROOT;
	rc = fp_calltree_child(s->tree, parent, frame, &node);
	if (rc)
		return rc;
	memset(&th->stack[th->depth], 0, sizeof(th->stack[th->depth]));
	th->stack[th->depth].frame = frame;
	th->stack[th->depth].node = node;
	th->stack[th->depth].begin = a->now;
	th->stack[th->depth].flags = a->flags;
	th->stack[th->depth].feature = a->feature;
	th->depth++;
	if (a->feature && a->feature->scope_opened) {
		rc = a->feature->scope_opened(s, &th->stack[th->depth - 1], a->feature_arg);
		if (rc)
			th->depth--;
	}
	return rc;
}

int fp_prof_scope_enter(int session, const char *name, size_t len, unsigned flags)
{
	struct scope_arg a = {.name = name, .len = len, .flags = flags & FP_PROF_SCOPE_CPU_TIME};
	int rc;

	if (!name && len)
		return FP_EINVAL;
	a.now = fp_prof_clock_ns();
	rc = fp__prof_for_sessions(session, scope_enter_fn, &a);
	fp__prof_lctx_refresh();
	return rc ? rc : a.dropped;
}

int fp__prof_scope_enter_feature(int session, const char *name, size_t len,
				 const struct fp__prof_feature *f, const void *arg)
{
	struct scope_arg a = {.name = name, .len = len, .feature = f, .feature_arg = arg};
	int rc;

	if (!f || (!name && len))
		return FP_EINVAL;
	a.now = fp_prof_clock_ns();
	rc = fp__prof_for_sessions(session, scope_enter_fn, &a);
	fp__prof_lctx_refresh();
	return rc; /* a feature's scope too deep is counted like any scope */
}

static int scope_exit_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th = fp__prof_thread_find(s);
	struct fp__prof_scope top;
	int rc = FP_OK;

	if (th && th->dropped) {
		th->dropped--; /* a scope dropped for its depth: nothing to close */
		return FP_OK;
	}
	if (!th || th->depth == 0) {
		s->st.exits_without_enter++;
		return FP_OK;
	}
	top = th->stack[th->depth - 1];
	if (a->feature && top.feature != a->feature) {
		size_t tlen;
		const char *tname = fp_calltree_frame_name(s->tree, top.frame, &tlen);
		const char *noun = a->feature->scope_noun ? a->feature->scope_noun : "feature";

		if (!a->diag_set) {
			a->diag_set = true;
			fp_diag_set(a->diag, FP_ESTATE, 0,
				    "%s exit: the innermost open scope '%.*s' is not a %s", noun,
				    (int)FP_MIN(tlen, 100), tname, noun);
		}
		return FP_ESTATE;
	}
	if (a->name) {
		size_t tlen;
		const char *tname = fp_calltree_frame_name(s->tree, top.frame, &tlen);

		if (fp__prof_strcmp_n(tname, tlen, a->name, a->len) != 0) {
			if (!a->diag_set) {
				a->diag_set = true;
				fp_diag_set(a->diag, FP_ESTATE, 0,
					    "scope exit '%.*s' does not match the innermost open "
					    "scope '%.*s'",
					    (int)FP_MIN(a->len, 100), a->name,
					    (int)FP_MIN(tlen, 100), tname);
			}
			return FP_ESTATE;
		}
	}
	th->depth--;
	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	s->st.scopes++;
	if (top.feature && top.feature->scope_closed) {
		if (top.feature->scope_closed(s, th->tid, &top, a->now))
			s->st.failed++;
		return FP_OK;
	}
	if (top.flags & FP_PROF_SCOPE_CPU_TIME)
		rc = fp__prof_add_slot(s, top.node, FP__M_CPU_TIME,
				       a->now >= top.begin ? (double)(a->now - top.begin) : 0);
	if (!rc && s->opt.data == FP_PROF_DATA_TRACE) {
		struct fp__trace_rec r = {
			.begin = top.begin,
			.end = a->now >= top.begin ? a->now : top.begin,
			.node = top.node,
			.kind = FP__TRACE_SCOPE,
			.device_type = FP_PROF_NO_NAME,
			.tid = th->tid,
		};

		rc = fp__prof_trace_add(s, &r);
	}
	if (rc)
		s->st.failed++;
	return FP_OK;
}

int fp_prof_scope_exit(int session, const char *name, size_t len, struct fp_diag *diag)
{
	struct scope_arg a = {.name = name, .len = len, .diag = diag};
	int rc;

	if (!name && len)
		return FP_EINVAL;
	a.now = fp_prof_clock_ns();
	rc = fp__prof_for_sessions(session, scope_exit_fn, &a);
	fp__prof_lctx_refresh();
	return rc;
}

int fp__prof_scope_exit_feature(int session, const struct fp__prof_feature *f, struct fp_diag *diag)
{
	struct scope_arg a = {.diag = diag, .feature = f};
	int rc;

	if (!f)
		return FP_EINVAL;
	a.now = fp_prof_clock_ns();
	rc = fp__prof_for_sessions(session, scope_exit_fn, &a);
	fp__prof_lctx_refresh();
	return rc;
}

static int scope_metric_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th = fp__prof_thread_find(s);
	uint32_t node = th && th->depth ? th->stack[th->depth - 1].node : FP_CALLTREE_ROOT;
	uint32_t m;
	int rc;

	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	if (th && th->dropped)
		return FP_OK; /* the innermost scope was dropped for its depth, and its metrics */
	rc = fp_calltree_metric_auto(s->tree, a->name, a->len, &m);
	if (!rc)
		rc = fp_calltree_add_metric(s->tree, node, m, a->value);
	if (rc == FP_EINVAL)
		return rc; /* a property metric fed a number is fine; a kind clash is the caller's */
	if (rc)
		s->st.failed++;
	return FP_OK;
}

int fp_prof_scope_metric(int session, const char *name, size_t len, double value)
{
	struct scope_arg a = {.name = name, .len = len, .value = value};

	if (!name)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, scope_metric_fn, &a);
}

static int state_enter_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th;
	uint32_t frame;
	int rc = fp__prof_thread_get(s, &th);

	if (!rc)
		rc = fp_calltree_intern(s->tree, a->name, a->len, &frame);
	if (!rc)
		th->state_frame = frame;
	return rc;
}

int fp_prof_state_enter(int session, const char *name, size_t len)
{
	struct scope_arg a = {.name = name, .len = len};
	int rc;

	if (!name && len)
		return FP_EINVAL;
	rc = fp__prof_for_sessions(session, state_enter_fn, &a);
	fp__prof_lctx_refresh();
	return rc;
}

static int state_exit_fn(struct fp_prof_session *s, void *argp)
{
	struct fp__prof_thread *th = fp__prof_thread_find(s);

	(void)argp;
	if (th)
		th->state_frame = FP_CALLTREE_NONE;
	return FP_OK;
}

int fp_prof_state_exit(int session)
{
	int rc = fp__prof_for_sessions(session, state_exit_fn, NULL);

	fp__prof_lctx_refresh();
	return rc;
}

static int depth_fn(struct fp_prof_session *s, void *argp)
{
	struct fp__prof_thread *th = fp__prof_thread_find(s);

	*(uint32_t *)argp = th ? th->depth + th->dropped : 0;
	return FP_OK;
}

int fp_prof_scope_depth(int session, uint32_t *depth)
{
	if (session == FP_PROF_ALL || !depth)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, depth_fn, depth);
}
