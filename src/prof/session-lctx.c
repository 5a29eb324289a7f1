/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Launch contexts: what the calling thread has open in every session (innermost scope node and
 * state frame per session), interned process-wide to one id so that a launch hook carries one
 * integer and a kernel event that arrives later (graph replays, device activity) is filed where
 * it was launched. Not the scopes themselves (session-scope.c).
 */
#include "fp-setup.h"

#include <stdatomic.h>

#include "core/seqtab-internal.h"
#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

/* ---- launch contexts ------------------------------------------------------------------------- */

/*
 * A launch context is what one thread has open in every session, as triples (session id,
 * innermost scope node or ROOT, state frame or FP_CALLTREE_NONE), interned process-wide so that
 * an activity source's launch callback remembers it by reading one thread-local integer instead
 * of visiting the sessions under their locks. The scope and state functions refresh the calling
 * thread's id after every change (a scope change costs one more pass over the sessions); events
 * that carry ids are resolved under the session lock. Lock order: registry, session, then
 * lctx_lock, which is a leaf. The table only grows, up to FP_PROF_MAX_LCTX entries, until
 * fp_prof_shutdown(); the epoch makes ids that threads still hold from before a shutdown read
 * as "none".
 */

#define LCTX_WORDS 3u /* per session: id, node, state frame */
#define LCTX_MAX_TOTAL_WORDS ((size_t)1 << 26)

static pthread_mutex_t lctx_lock = PTHREAD_MUTEX_INITIALIZER;
/* the contexts (core's sequence table); id FP_SINK_LCTX_NONE is the empty context */
static struct fp__seqtab lctx = {.max_count = FP_PROF_MAX_LCTX, .max_words = LCTX_MAX_TOTAL_WORDS};
static atomic_uint lctx_epoch = 1;
static _Thread_local uint32_t thread_lctx;
static _Thread_local unsigned thread_lctx_epoch; /* 0: never refreshed */

uint32_t fp_prof_launch_context(void)
{
	if (thread_lctx_epoch != atomic_load_explicit(&lctx_epoch, memory_order_relaxed))
		return FP_SINK_LCTX_NONE;
	return thread_lctx;
}

/* lctx_lock held. */
static int lctx_intern_locked(const uint32_t *w, uint32_t n, uint32_t *id)
{
	uint32_t none;
	int rc;

	if (!fp__seqtab_count(&lctx)) {
		rc = fp__seqtab_add(&lctx, NULL, 0, 0, &none); /* FP_SINK_LCTX_NONE */
		if (rc)
			return rc;
	}
	return fp__seqtab_add(&lctx, w, n, 0, id);
}

struct lctx_collect {
	uint32_t w[LCTX_WORDS * FP_PROF_MAX_SESSIONS];
	uint32_t n;
};

static int lctx_collect_fn(struct fp_prof_session *s, void *argp)
{
	struct lctx_collect *c = argp;
	struct fp__prof_thread *th = fp__prof_thread_find(s);

	if (!th || (!th->depth && th->state_frame == FP_CALLTREE_NONE))
		return FP_OK;
	if (c->n + LCTX_WORDS > FP_ARRAY_SIZE(c->w))
		return FP_OK; /* one triple per open session: cannot happen */
	c->w[c->n++] = (uint32_t)s->id;
	c->w[c->n++] = th->depth ? th->stack[th->depth - 1].node : FP_CALLTREE_ROOT;
	c->w[c->n++] = th->state_frame;
	return FP_OK;
}

/* After a scope or state change on the calling thread: re-intern its launch context. */
void fp__prof_lctx_refresh(void)
{
	struct lctx_collect c;
	uint32_t id = FP_SINK_LCTX_NONE;
	unsigned epoch;

	c.n = 0;
	fp__prof_for_sessions(FP_PROF_ALL, lctx_collect_fn, &c);
	pthread_mutex_lock(&lctx_lock);
	epoch = atomic_load(&lctx_epoch);
	if (c.n && lctx_intern_locked(c.w, c.n, &id))
		id = FP_SINK_LCTX_LOST;
	pthread_mutex_unlock(&lctx_lock);
	thread_lctx = id;
	thread_lctx_epoch = epoch;
}

void fp__prof_lctx_release(void)
{
	pthread_mutex_lock(&lctx_lock);
	fp__seqtab_release(&lctx);
	atomic_fetch_add(&lctx_epoch, 1);
	pthread_mutex_unlock(&lctx_lock);
}

/* Session `sid`'s innermost scope node and state frame in context `id`; false: none there. */
static bool lctx_get(uint32_t id, int sid, uint32_t *node, uint32_t *state)
{
	const uint32_t *w;
	bool found = false;
	uint32_t i, n = 0;

	if (id == FP_SINK_LCTX_NONE || id == FP_SINK_LCTX_LOST)
		return false;
	pthread_mutex_lock(&lctx_lock);
	w = fp__seqtab_get(&lctx, id, &n, NULL);
	if (w) {
		for (i = 0; i + LCTX_WORDS <= n; i += LCTX_WORDS) {
			if (w[i] == (uint32_t)sid) {
				*node = w[i + 1];
				*state = w[i + 2];
				found = true;
				break;
			}
		}
	}
	pthread_mutex_unlock(&lctx_lock);
	return found;
}

struct lctx_frames {
	uint32_t small[64];
	uint32_t *v;
	size_t n;
};

/* The frames of ROOT / ... / node (ROOT excluded), then `state` if set. */
static int lctx_frames_of(struct fp_prof_session *s, uint32_t node, uint32_t state,
			  struct lctx_frames *f)
{
	uint32_t depth = fp_calltree_node_depth(s->tree, node), i, cur = node;

	f->v = f->small;
	f->n = 0;
	if ((size_t)depth + 1 > FP_ARRAY_SIZE(f->small)) {
		f->v = fp_reallocarray(NULL, (size_t)depth + 1, sizeof(*f->v));
		if (!f->v) {
			f->v = f->small;
			return FP_ENOMEM;
		}
	}
	for (i = depth; i-- > 0;) {
		f->v[i] = fp_calltree_node_frame(s->tree, cur);
		cur = fp_calltree_node_parent(s->tree, cur);
	}
	f->n = depth;
	if (state != FP_CALLTREE_NONE)
		f->v[f->n++] = state;
	return FP_OK;
}

static void lctx_frames_release(struct lctx_frames *f)
{
	if (f->v != f->small)
		fp_free(f->v);
	f->v = f->small;
}

/* Session lock held: the node of a kernel launched in `inner` inside `outer`. */
static int lctx_node(struct fp_prof_session *s, const struct fp_sink_event *ev, uint32_t outer,
		     uint32_t inner, uint32_t *out)
{
	uint32_t on = FP_CALLTREE_ROOT, ost = FP_CALLTREE_NONE;
	uint32_t in = FP_CALLTREE_ROOT, ist = FP_CALLTREE_NONE;
	uint32_t cur = FP_CALLTREE_ROOT;
	struct lctx_frames fo, fi;
	bool has_outer;
	size_t i, skip = 0;
	int rc = FP_OK;

	if (outer == FP_SINK_LCTX_LOST || inner == FP_SINK_LCTX_LOST)
		s->st.unmatched++;
	has_outer = lctx_get(outer, s->id, &on, &ost);
	lctx_get(inner, s->id, &in, &ist);
	if (!has_outer) {
		/* The common case: the innermost scope's node already is the path. */
		cur = in;
	} else {
		rc = lctx_frames_of(s, on, ost, &fo);
		if (!rc) {
			rc = lctx_frames_of(s, in, FP_CALLTREE_NONE, &fi);
			for (i = 0; !rc && i < fo.n; i++)
				rc = fp_calltree_child(s->tree, cur, fo.v[i], &cur);
			/* A graph captured and replayed in the same scopes shows them once. */
			while (!rc && skip < fo.n && skip < fi.n && fo.v[skip] == fi.v[skip])
				skip++;
			for (i = skip; !rc && i < fi.n; i++)
				rc = fp_calltree_child(s->tree, cur, fi.v[i], &cur);
			lctx_frames_release(&fi);
		}
		lctx_frames_release(&fo);
	}
	if (!rc && s->opt.context == FP_PROF_CONTEXT_PYTHON && ev->callpath != FP_PROF_NO_CALLPATH)
		rc = fp__prof_callpath_node(s, cur, ev->callpath, &cur);
	if (!rc && ist != FP_CALLTREE_NONE) /* the state right above the kernel */
		rc = fp_calltree_child(s->tree, cur, ist, &cur);
	if (!rc)
		rc = fp__prof_kernel_base(s, ev->kernel, cur, &cur);
	if (!rc)
		rc = fp__prof_kernel_node(s, cur, ev->kernel, out);
	return rc;
}

int fp_prof_session_kernel_lctx_node(struct fp_prof_session *s, const struct fp_sink_event *ev,
				     uint32_t outer, uint32_t inner, uint32_t *filed)
{
	uint32_t node = FP_CALLTREE_NONE;

	if (filed)
		*filed = FP_CALLTREE_NONE;
	if (!s || !fp__prof_event_ok(ev))
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	if (!s->active)
		s->st.ignored_inactive++;
	else if (lctx_node(s, ev, outer, inner, &node) ||
		 fp__prof_record_kernel(s, node, ev, &ev->md))
		s->st.failed++;
	else if (filed)
		*filed = node;
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

int fp_prof_session_kernel_launched(struct fp_prof_session *s, const struct fp_sink_event *ev,
				    uint32_t outer, uint32_t inner,
				    const struct fp_sink_launch_state *ls, uint32_t *filed)
{
	uint32_t node = FP_CALLTREE_NONE;
	bool active;

	if (!ls || !ls->known)
		return fp_prof_session_kernel_lctx_node(s, ev, outer, inner, filed);
	if (filed)
		*filed = FP_CALLTREE_NONE;
	if (!s || !fp__prof_event_ok(ev))
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	/* The session's state when the kernel was launched decides, not its state now. */
	active = (ls->active >> s->slot) & 1;
	if (!active)
		s->st.ignored_inactive++;
	else if (ls->internal)
		s->st.internal++;
	else if (lctx_node(s, ev, outer, inner, &node) ||
		 fp__prof_record_kernel(s, node, ev, &ev->md))
		s->st.failed++;
	else if (filed)
		*filed = node;
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

int fp_prof_session_kernel_lctx(struct fp_prof_session *s, const struct fp_sink_event *ev,
				uint32_t outer, uint32_t inner)
{
	return fp_prof_session_kernel_lctx_node(s, ev, outer, inner, NULL);
}
