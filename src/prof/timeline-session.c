/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Intra-kernel timelines in profiling sessions, a feature of the session (its row,
 * fp__prof_feature_timeline, is called by the core: prof-internal.h): a decoded launch
 * (timeline.c) becomes scope nodes under its kernel's node with per-scope statistics, and, for
 * trace sessions, one slice per interval on a per-SM (or per-program) track of the kernel's
 * device. Device timestamps (%globaltimer, or AMD's s_memrealtime which the decoder has
 * converted to ns) are moved onto the host clock when the trace is written, by matching the
 * launch with its kernel event (the backend's device start, or the host launch time);
 * host-clock buffers (the interpreter) are already there. Cycles (%clock64, s_memtime) are filed
 * for every device clock. The "intra_kernel" object of the metadata file is written here too.
 * Not here: the decoder, the writers' own layout (chrome-trace.c, meta.c).
 */
#include "fp-setup.h"

#include <flagprism/json.h>
#include <flagprism/timeline.h>

#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"

#define TL_MAX_WARNINGS 32
#define TL_MAX_LAUNCHES ((size_t)1 << 20)

struct tl_launch {
	uint32_t kernel_node;
	uint32_t clock;
	uint64_t host_begin, host_end, t_min;
	bool applied;
};

struct tl_state {
	struct tl_launch *v;
	size_t n, alloc;
	uint64_t launches, intervals, overflow, overflowed_programs, missing, unclosed, truncated;
	uint64_t backwards, untracked_launches, failed, aligned_kernel, aligned_host;
	uint64_t program_tracks;
	char *warnings[TL_MAX_WARNINGS];
	size_t nwarn;
	uint64_t more_warnings;
};

static void tl_release(void *state)
{
	struct tl_state *tl = state;
	size_t i;

	for (i = 0; i < tl->nwarn; i++)
		fp_free(tl->warnings[i]);
	fp_free(tl->v);
	fp_free(tl);
}

static int metric_add(struct fp_prof_session *s, uint32_t node, const char *name, double v)
{
	uint32_t m;
	int rc = fp_calltree_metric_auto(s->tree, name, strlen(name), &m);

	return rc ? rc : fp_calltree_add_metric(s->tree, node, m, v);
}

static double metric_self(struct fp_prof_session *s, uint32_t node, const char *name)
{
	struct fp_calltree_value v;
	uint32_t m;

	if (fp_calltree_metric_find(s->tree, name, strlen(name), &m) ||
	    fp_calltree_get(s->tree, node, m, &v))
		return 0;
	return v.self;
}

static void note_warning(struct tl_state *tl, const char *kernel, size_t klen,
			 const struct fp_prof_tl_scope *sc)
{
	struct fp_strbuf sb;
	size_t i;

	fp_strbuf_init(&sb, 1024);
	if (fp_strbuf_addf(
		    &sb,
		    "%.*s / %.*s: inside or around a loop the compiler may software-pipeline; "
		    "work may have moved across this scope's boundaries",
		    (int)FP_MIN(klen, 200), kernel, (int)FP_MIN(sc->len, 200), sc->name)) {
		fp_strbuf_release(&sb);
		return;
	}
	for (i = 0; i < tl->nwarn; i++)
		if (!strcmp(tl->warnings[i], sb.buf)) {
			fp_strbuf_release(&sb);
			return;
		}
	if (tl->nwarn == TL_MAX_WARNINGS) {
		tl->more_warnings++;
		fp_strbuf_release(&sb);
		return;
	}
	tl->warnings[tl->nwarn] = fp_strbuf_detach(&sb, NULL);
	if (tl->warnings[tl->nwarn])
		tl->nwarn++;
}

struct add_arg {
	const struct fp_sink_launch *l;
	const struct fp_timeline *t;
	const struct fp_prof_tl_scope *scopes;
	size_t nscopes;
	uint64_t hb, he;
	unsigned flags;
};

/* The node of scope `sc` under the kernel's node (parents first); nodes[] caches them. */
static int scope_node(struct fp_prof_session *s, const struct add_arg *a, uint32_t kernel,
		      uint32_t sc, uint32_t *nodes, uint32_t level)
{
	struct fp_timeline_scope_stats st;
	uint32_t parent = kernel, frame;
	int rc;

	if (nodes[sc] != FP_CALLTREE_NONE)
		return FP_OK;
	if (level > FP_TIMELINE_MAX_DEPTH)
		return FP_ELIMIT;
	fp_timeline_scope_stats(a->t, sc, &st);
	if (st.parent && st.parent != sc) {
		rc = scope_node(s, a, kernel, st.parent, nodes, level + 1);
		if (rc)
			return rc;
		parent = nodes[st.parent];
	}
	rc = fp_calltree_intern(s->tree, a->scopes[sc - 1].name, a->scopes[sc - 1].len, &frame);
	if (!rc)
		rc = fp_calltree_child(s->tree, parent, frame, &nodes[sc]);
	return rc;
}

static int tl_state(struct fp_prof_session *s)
{
	if (!s->feature_state[FP__PROF_F_TIMELINE]) {
		s->feature_state[FP__PROF_F_TIMELINE] = fp_calloc(1, sizeof(struct tl_state));
		if (!s->feature_state[FP__PROF_F_TIMELINE])
			return FP_ENOMEM;
	}
	return FP_OK;
}

static int add_fn(struct fp_prof_session *s, void *argp)
{
	const struct add_arg *a = argp;
	const struct fp_timeline_info *info = fp_timeline_get_info(a->t);
	const struct fp_timeline_interval *iv;
	struct tl_state *tl;
	uint32_t kernel, *nodes = NULL, sc;
	size_t niv, i, klen = 0;
	const char *kname;
	double span;
	int rc;

	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	rc = tl_state(s);
	if (rc) {
		s->st.failed++;
		return FP_OK;
	}
	tl = s->feature_state[FP__PROF_F_TIMELINE];
	tl->launches++;
	tl->overflow += info->overflow;
	tl->overflowed_programs += info->overflowed_programs;
	tl->missing += info->missing;
	tl->unclosed += info->unclosed;
	tl->truncated += info->truncated;
	tl->backwards += info->backwards;
	rc = fp__prof_launch_node(s, a->l, &kernel);
	if (rc)
		goto fail_add;
	kname = fp_prof_name_str(a->l->kernel, &klen);
	nodes = fp_reallocarray(NULL, a->nscopes + 1, sizeof(*nodes));
	if (!nodes)
		goto fail_add;
	for (sc = 0; sc <= a->nscopes; sc++)
		nodes[sc] = FP_CALLTREE_NONE;
	span = info->span_sum;
	rc = metric_add(s, kernel, "program_span (ns)(exc)", span);
	if (!rc)
		rc = metric_add(s, kernel, "timeline_launches(exc)", 1);
	if (!rc && info->overflow)
		rc = metric_add(s, kernel, "timeline_overflow(exc)", (double)info->overflow);
	span = metric_self(s, kernel, "program_span (ns)(exc)");
	for (sc = 1; !rc && sc <= a->nscopes; sc++) {
		struct fp_timeline_scope_stats st;
		double tsum, progs;

		fp_timeline_scope_stats(a->t, sc, &st);
		if (!st.programs)
			continue;
		rc = scope_node(s, a, kernel, sc, nodes, 0);
		if (rc)
			break;
		rc = metric_add(s, nodes[sc], "scope_time (ns)(exc)", st.time_sum);
		if (!rc)
			rc = metric_add(s, nodes[sc], "scope_programs(exc)", (double)st.programs);
		if (!rc)
			rc = metric_add(s, nodes[sc], "scope_count(exc)", (double)st.intervals);
		if (!rc)
			rc = metric_add(s, nodes[sc], "scope_time (ns) (min)", st.time_min);
		if (!rc)
			rc = metric_add(s, nodes[sc], "scope_time (ns) (max)", st.time_max);
		if (!rc && info->clock != FP_TIMELINE_CLOCK_HOST) {
			rc = metric_add(s, nodes[sc], "scope_cycles(exc)", st.cycles_sum);
			if (!rc)
				rc = metric_add(s, nodes[sc], "scope_cycles (min)", st.cycles_min);
			if (!rc)
				rc = metric_add(s, nodes[sc], "scope_cycles (max)", st.cycles_max);
		}
		if (rc)
			break;
		tsum = metric_self(s, nodes[sc], "scope_time (ns)(exc)");
		progs = metric_self(s, nodes[sc], "scope_programs(exc)");
		rc = metric_add(s, nodes[sc], "scope_time_mean (ns) (pty)",
				progs > 0 ? tsum / progs : 0);
		if (!rc && info->clock != FP_TIMELINE_CLOCK_HOST)
			rc = metric_add(s, nodes[sc], "scope_cycles_mean (pty)",
					progs > 0 ? metric_self(s, nodes[sc], "scope_cycles(exc)") /
							    progs :
						    0);
		if (!rc)
			rc = metric_add(s, nodes[sc], "scope_share (pty)",
					span > 0 ? tsum / span : 0);
		if (!rc && (a->scopes[sc - 1].flags & FP_PROF_TL_PIPELINED)) {
			uint32_t m;

			rc = fp_calltree_metric_auto(s->tree, "warning (pty)", 13, &m);
			if (!rc)
				rc = fp_calltree_set_string(s->tree, nodes[sc], m,
							    "may be software-pipelined", 25);
			note_warning(tl, kname ? kname : "kernel", klen, &a->scopes[sc - 1]);
		}
	}
	if (rc)
		goto fail_add;

	niv = fp_timeline_intervals(a->t, &iv);
	tl->intervals += niv;
	if (s->opt.data == FP_PROF_DATA_TRACE && niv) {
		struct tl_launch *L;

		if (tl->n == TL_MAX_LAUNCHES) {
			tl->untracked_launches++;
			goto done;
		}
		if (tl->n == tl->alloc) {
			size_t na = tl->alloc ? tl->alloc * 2 : 16;
			struct tl_launch *nv = fp_reallocarray(tl->v, na, sizeof(*nv));

			if (!nv)
				goto fail_add;
			tl->v = nv;
			tl->alloc = na;
		}
		L = &tl->v[tl->n];
		L->kernel_node = kernel;
		L->clock = info->clock;
		L->host_begin = a->hb;
		L->host_end = a->he;
		L->t_min = info->t_min;
		L->applied = false;
		if (a->flags & FP_PROF_TL_PROGRAM_TRACKS)
			tl->program_tracks++;
		for (i = 0; i < niv; i++) {
			struct fp__trace_rec r;

			memset(&r, 0, sizeof(r));
			r.begin = iv[i].begin_ns;
			r.end = iv[i].end_ns;
			r.stream = tl->n;
			r.correlation =
				(a->flags & FP_PROF_TL_PROGRAM_TRACKS) ?
					FP__TL_TRACK_PROGRAM + (iv[i].program & FP__TL_TRACK_MASK) :
					FP__TL_TRACK_SM + (iv[i].smid & FP__TL_TRACK_MASK);
			r.node = nodes[iv[i].scope] != FP_CALLTREE_NONE ? nodes[iv[i].scope] :
									  kernel;
			r.kind = FP__TRACE_ISCOPE;
			r.device_id = a->l->device_id;
			r.device_type = FP_PROF_NO_NAME;
			r.tid = iv[i].program;
			r.grid[0] = iv[i].program;
			r.grid[1] = iv[i].smid;
			r.grid[2] = iv[i].depth;
			rc = fp__prof_trace_add(s, &r);
			if (rc)
				goto fail_add;
		}
		tl->n++;
	}
done:
	fp_free(nodes);
	return FP_OK;
fail_add:
	fp_free(nodes);
	tl->failed++;
	s->st.failed++;
	return FP_OK;
}

int fp_prof_timeline_add(int session, const struct fp_sink_launch *l, const struct fp_timeline *t,
			 const struct fp_prof_tl_scope *scopes, size_t nscopes,
			 uint64_t host_begin_ns, uint64_t host_end_ns, unsigned flags)
{
	struct add_arg a = {l, t, scopes, nscopes, host_begin_ns, host_end_ns, flags};
	size_t i;

	if (!l || !t || (nscopes && !scopes) || nscopes != fp_timeline_get_info(t)->nscopes)
		return FP_EINVAL;
	for (i = 0; i < nscopes; i++)
		if (!scopes[i].name || !scopes[i].len)
			return FP_EINVAL;
	return fp__prof_for_sessions(session, add_fn, &a);
}

/* The kernel event of launch L: on its node, starting inside the host window around it. */
static bool find_kernel(struct fp_prof_session *s, const struct tl_launch *L, uint64_t *begin)
{
	size_t i;
	bool found = false;

	for (i = 0; i < s->ntrace; i++) {
		const struct fp__trace_rec *r = fp__trace_at(s, i);

		if (r->kind != FP__TRACE_KERNEL || r->node != L->kernel_node)
			continue;
		if (r->begin + 1000 < L->host_begin || r->begin > L->host_end)
			continue;
		if (!found || r->begin > *begin)
			*begin = r->begin; /* the latest one in the window: this launch's */
		found = true;
	}
	return found;
}

/* Move device-clock slices onto the host clock (once per launch): before the trace is written. */
static void tl_align(struct fp_prof_session *s)
{
	struct tl_state *tl = s->feature_state[FP__PROF_F_TIMELINE];
	int64_t *shift;
	size_t i, k;

	if (!tl || !tl->n)
		return;
	shift = fp_reallocarray(NULL, tl->n, sizeof(*shift));
	if (!shift)
		return;
	for (k = 0; k < tl->n; k++) {
		struct tl_launch *L = &tl->v[k];
		uint64_t base = 0;

		shift[k] = 0;
		if (L->applied)
			continue;
		if (L->clock == FP_TIMELINE_CLOCK_HOST) {
			tl->aligned_host++; /* already on the host clock */
		} else if (find_kernel(s, L, &base)) {
			shift[k] = (int64_t)(base - L->t_min);
			tl->aligned_kernel++;
		} else {
			shift[k] = (int64_t)(L->host_begin - L->t_min);
			tl->aligned_host++;
		}
	}
	for (i = 0; i < s->ntrace; i++) {
		struct fp__trace_rec *r = fp__trace_at(s, i);

		if (r->kind != FP__TRACE_ISCOPE || r->stream >= tl->n || tl->v[r->stream].applied)
			continue;
		r->begin = (uint64_t)((int64_t)r->begin + shift[r->stream]);
		r->end = (uint64_t)((int64_t)r->end + shift[r->stream]);
	}
	for (k = 0; k < tl->n; k++)
		tl->v[k].applied = true;
	fp_free(shift);
}

/* The metadata's "intra_kernel" member (nothing without timelines). */
static int tl_write_meta(struct fp_prof_session *s, struct fp_jsonw *w)
{
	struct tl_state *tl = s->feature_state[FP__PROF_F_TIMELINE];
	size_t i;

	if (!tl)
		return FP_OK;
	fp_jsonw_key(w, "intra_kernel");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "launches", tl->launches);
	fp_jsonw_kv_uint(w, "intervals", tl->intervals);
	fp_jsonw_kv_uint(w, "overflow_records", tl->overflow);
	fp_jsonw_kv_uint(w, "overflowed_programs", tl->overflowed_programs);
	fp_jsonw_kv_uint(w, "programs_without_records", tl->missing);
	fp_jsonw_kv_uint(w, "unclosed_scopes", tl->unclosed);
	fp_jsonw_kv_uint(w, "truncated_scopes", tl->truncated);
	fp_jsonw_kv_uint(w, "backwards_intervals", tl->backwards);
	fp_jsonw_kv_uint(w, "failed_launches", tl->failed);
	fp_jsonw_kv_uint(w, "launches_not_traced", tl->untracked_launches);
	fp_jsonw_kv_uint(w, "aligned_to_kernel_event", tl->aligned_kernel);
	fp_jsonw_kv_uint(w, "aligned_to_host_clock", tl->aligned_host);
	fp_jsonw_kv_string(w, "tracks", tl->program_tracks ? "program" : "sm");
	fp_jsonw_key(w, "warnings");
	fp_jsonw_array_begin(w);
	for (i = 0; i < tl->nwarn; i++)
		fp_jsonw_string(w, tl->warnings[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "warnings_not_listed", tl->more_warnings);
	return fp_jsonw_object_end(w);
}

const struct fp__prof_feature fp__prof_feature_timeline = {
	.name = "timeline",
	.release = tl_release,
	.write_meta = tl_write_meta,
	.trace_begin = tl_align,
};
