/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rules about the whole run, and the trace they read: launch-bound kernels (shorter than
 * the gaps between their launches), time outside Triton kernels on the Python lines that cause
 * it, and stragglers among the ranks of a merged profile. The trace is the profile's Chrome
 * trace (docs/formats/profiler-formats.md): its kernel slices per track, in time order, each
 * with the idle time before it on its track. docs/guide/advise.md documents the rules.
 */
#include "fp-setup.h"

#include "advise/advise-internal.h"

#define MAX_TRACE_EVENTS ((size_t)1 << 26)

/* ---- the trace ------------------------------------------------------------------------------- */

static int by_track(const void *x, const void *y)
{
	const struct fp__adv_event *p = x, *q = y;

	if (p->stream != q->stream)
		return p->stream < q->stream ? -1 : 1;
	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	return (p->dur > q->dur) - (p->dur < q->dur);
}

/* One key per track from the event's pid and tid (numbers as the trace writes them; any
 * others get a key of their bits, never a conversion out of range). */
static uint64_t track_key(double pid, double tid)
{
	uint64_t p, t;

	memcpy(&p, &pid, sizeof(p));
	memcpy(&t, &tid, sizeof(t));
	return p * 0x9e3779b97f4a7c15ull ^ t;
}

int fp__adv_read_trace(struct fp_advice *a, struct fp_diag *diag)
{
	const struct fp_json_value *root = fp_json_root(a->src[0].trace), *evs;
	size_t n, i, k = 0;
	double t0 = INFINITY, t1 = -INFINITY;

	evs = fp_json_get(root, "traceEvents");
	if (fp_json_type(evs) != FP_JSON_ARRAY) {
		fp__adv_note(a, "%s has no traceEvents array: not read", a->src[0].trace_name);
		return FP_OK;
	}
	n = fp_json_len(evs);
	if (n > MAX_TRACE_EVENTS)
		return fp_diag_set(diag, FP_ELIMIT, 0, "the trace has %zu events (at most %zu)", n,
				   MAX_TRACE_EVENTS);
	a->events = fp_arena_calloc(&a->arena, n ? n : 1, sizeof(*a->events));
	if (!a->events)
		return fp_diag_set(diag, fp_arena_last_error(&a->arena), 0, "out of memory");
	for (i = 0; i < n; i++) {
		const struct fp_json_value *e = fp_json_at(evs, i), *args, *g;
		const char *ph = fp_json_string(fp_json_get(e, "ph"), NULL);
		const char *cat = fp_json_string(fp_json_get(e, "cat"), NULL);
		struct fp__adv_event *ev = &a->events[k];
		double pid = 0, tid = 0, prod = 1, x;
		size_t j;

		if (!ph || strcmp(ph, "X") || !cat || strcmp(cat, "kernel"))
			continue;
		ev->name = fp_json_string(fp_json_get(e, "name"), NULL);
		if (!ev->name || !fp_json_number(fp_json_get(e, "ts"), &ev->ts) ||
		    !fp_json_number(fp_json_get(e, "dur"), &ev->dur) || !isfinite(ev->ts) ||
		    !isfinite(ev->dur) || ev->dur < 0) {
			uint32_t line = 0, col = 0;

			fp_json_position(a->src[0].trace, fp_json_offset(e), &line, &col);
			return fp_diag_set_pos(diag, FP_EFORMAT, fp_json_offset(e), line, col,
					       "%s:%u:%u: a kernel event needs a name, a ts and a "
					       "dur >= 0",
					       a->src[0].trace_name, line, col);
		}
		fp_json_number(fp_json_get(e, "pid"), &pid);
		fp_json_number(fp_json_get(e, "tid"), &tid);
		ev->stream = track_key(pid, tid);
		args = fp_json_get(e, "args");
		ev->stack = fp_json_get(args, "call_stack");
		if (fp_json_type(ev->stack) != FP_JSON_ARRAY)
			ev->stack = NULL;
		ev->programs = NAN;
		g = fp_json_get(args, "grid");
		if (fp_json_type(g) == FP_JSON_ARRAY && fp_json_len(g) >= 1) {
			for (j = 0; j < fp_json_len(g) && j < 3; j++)
				prod *= fp_json_number(fp_json_at(g, j), &x) && x >= 0 ? x : NAN;
			ev->programs = prod;
		}
		t0 = FP_MIN(t0, ev->ts);
		t1 = FP_MAX(t1, ev->ts + ev->dur);
		k++;
	}
	a->nevents = k;
	qsort(a->events, k, sizeof(*a->events), by_track);
	for (i = 0; i < k; i++) {
		struct fp__adv_event *e = &a->events[i];

		e->gap = i && e[-1].stream == e->stream ?
				 FP_MAX(0.0, e->ts - (e[-1].ts + e[-1].dur)) :
				 NAN;
	}
	a->span_us = k ? t1 - t0 : 0;
	if (!k)
		fp__adv_note(a, "%s has no kernel events", a->src[0].trace_name);
	return FP_OK;
}

bool fp__adv_event_is(const struct fp_advice *a, const struct fp__adv_event *e,
		      const struct fp__adv_kernel *k)
{
	const struct fp_calltree *t = a->src[0].t;
	size_t n = e->stack ? fp_json_len(e->stack) : 0, len, slen;
	uint32_t x;

	if (strcmp(e->name, k->name))
		return false;
	/* the call path, innermost first against the node's ancestors */
	for (x = fp_calltree_node_parent(t, k->node);
	     x != FP_CALLTREE_ROOT && x != FP_CALLTREE_NONE; x = fp_calltree_node_parent(t, x)) {
		const char *name = fp_calltree_node_name(t, x, &len), *s;

		if (!n)
			return false;
		s = fp_json_string(fp_json_at(e->stack, --n), &slen);
		if (!s || slen != len || memcmp(s, name, len))
			return false;
	}
	return n == 0;
}

/* The innermost Python frame of a launch ("file:function@line"), or NULL. */
static const char *site_of(const struct fp__adv_event *e, size_t *len)
{
	size_t n = e->stack ? fp_json_len(e->stack) : 0;

	while (n--) {
		const char *s = fp_json_string(fp_json_at(e->stack, n), len);

		if (s && memchr(s, '@', *len))
			return s;
	}
	*len = 0;
	return NULL;
}

static int cmp_str(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, FP_MIN(al, bl));

	return c ? c : (al > bl) - (al < bl);
}

/* ---- launch-bound ------------------------------------------------------------------------------ */

struct group {
	const char *name, *site;
	size_t site_len;
	size_t first, n; /* into the sorted items */
	double saving;
};

/* An event with its sort keys, so that sorting needs no context. */
struct item {
	const char *name, *site;
	size_t site_len, i;
};

static int by_name_site(const void *x, const void *y)
{
	const struct item *p = x, *q = y;
	int c = strcmp(p->name, q->name);

	if (c)
		return c;
	c = cmp_str(p->site ? p->site : "", p->site_len, q->site ? q->site : "", q->site_len);
	if (c)
		return c;
	return p->i < q->i ? -1 : p->i > q->i;
}

static int by_site_name(const void *x, const void *y)
{
	const struct item *p = x, *q = y;
	int c = cmp_str(p->site ? p->site : "", p->site_len, q->site ? q->site : "", q->site_len);

	if (c)
		return c;
	return p->i < q->i ? -1 : p->i > q->i;
}

static int by_saving(const void *x, const void *y)
{
	const struct group *p = x, *q = y;

	if (p->saving != q->saving)
		return p->saving > q->saving ? -1 : 1;
	return p->first < q->first ? -1 : p->first > q->first;
}

static double median(double *v, size_t n)
{
	size_t i, j;

	if (!n)
		return NAN;
	for (i = 1; i < n; i++) /* insertion sort: groups are sorted once, and small or sorted */
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The advised kernel whose node the group's events belong to, or SIZE_MAX. */
static size_t group_kernel(const struct fp_advice *a, const struct item *it, const struct group *g)
{
	size_t i;

	for (i = 0; i < a->nkernels; i++)
		if (fp__adv_event_is(a, &a->events[it[g->first].i], &a->kernels[i]))
			return i;
	return SIZE_MAX;
}

static struct item *sorted_items(struct fp_advice *a, int (*cmp)(const void *, const void *))
{
	struct item *it = fp_malloc(a->nevents * sizeof(*it));
	size_t i;

	if (!it) {
		if (!a->rc)
			a->rc = FP_ENOMEM;
		return NULL;
	}
	for (i = 0; i < a->nevents; i++) {
		it[i].name = a->events[i].name;
		it[i].site = site_of(&a->events[i], &it[i].site_len);
		it[i].i = i;
	}
	qsort(it, a->nevents, sizeof(*it), cmp);
	return it;
}

void fp__adv_launch_bound(struct fp_advice *a, size_t rule)
{
	struct group *groups = NULL;
	struct item *it = NULL;
	size_t ng = 0, i, j, max_n = 0;
	double *dur = NULL, *gap = NULL;

	if (!a->nevents) {
		fp__adv_skip(a, rule, FP__NEED_TRACE, 0,
			     "no kernel events: the profile has no trace (-d trace)");
		return;
	}
	fp__adv_ran(a, rule);
	it = sorted_items(a, by_name_site);
	groups = fp_calloc(a->nevents, sizeof(*groups));
	if (!it || !groups)
		goto fail_alloc;
	for (i = 0; i < a->nevents; i++) {
		const char *s = it[i].site;
		size_t sl = it[i].site_len;

		if (!ng || strcmp(groups[ng - 1].name, it[i].name) ||
		    cmp_str(groups[ng - 1].site ? groups[ng - 1].site : "", groups[ng - 1].site_len,
			    s ? s : "", sl)) {
			groups[ng].name = it[i].name;
			groups[ng].site = s;
			groups[ng].site_len = sl;
			groups[ng++].first = i;
		}
		groups[ng - 1].n++;
		max_n = FP_MAX(max_n, groups[ng - 1].n);
	}
	dur = fp_malloc(max_n * sizeof(*dur));
	gap = fp_malloc(max_n * sizeof(*gap));
	if (!dur || !gap)
		goto fail_alloc;
	for (i = 0; i < ng; i++) {
		struct group *g = &groups[i];
		double md, mg;
		size_t ngap = 0;

		g->saving = -1;
		if (g->n < FP__ADV_LAUNCHES)
			continue;
		for (j = 0; j < g->n; j++) {
			const struct fp__adv_event *e = &a->events[it[g->first + j].i];

			dur[j] = e->dur;
			if (!isnan(e->gap))
				gap[ngap++] = e->gap;
		}
		md = median(dur, g->n);
		mg = median(gap, ngap);
		if (!(mg >= md) || mg * 1e3 <= FP__ADV_GRAPH_NS)
			continue;
		/* the typical gap, not their sum: a gap that holds a compilation or a
		 * synchronisation before one launch is not the loop's */
		g->saving = (double)ngap * (mg * 1e3 - FP__ADV_GRAPH_NS);
	}
	qsort(groups, ng, sizeof(*groups), by_saving);
	for (i = 0; i < ng && i < FP__ADV_MAX_SITES && groups[i].saving >= 0; i++) {
		struct group *g = &groups[i];
		size_t ki = group_kernel(a, it, g), ngap = 0;
		const char *file, *shown = ki < a->nkernels ? a->kernels[ki].shown : g->name;
		double md, mg, busy = 0, idle = 0;
		struct fp__adv_finding *f;
		char b1[32], b2[32];
		uint32_t line;

		for (j = 0; j < g->n; j++) {
			const struct fp__adv_event *e = &a->events[it[g->first + j].i];

			dur[j] = e->dur;
			busy += e->dur;
			if (!isnan(e->gap)) {
				gap[ngap++] = e->gap;
				idle += e->gap;
			}
		}
		md = median(dur, g->n);
		mg = median(gap, ngap);
		fp__adv_fmt_ns(md * 1e3, b1, sizeof(b1));
		fp__adv_fmt_ns(mg * 1e3, b2, sizeof(b2));
		f = fp__adv_find(
			a, rule, ki, FP__ADV_CAUSE,
			fp__adv_str(a,
				    "launch-bound: %zu launches of %s take %s each with %s "
				    "idle before each",
				    g->n, shown, b1, b2));
		if (!f)
			break;
		if (a->nlb < FP_ARRAY_SIZE(a->lb)) {
			a->lb[a->nlb].name = g->name;
			a->lb[a->nlb].site = g->site;
			a->lb[a->nlb++].site_len = g->site_len;
		}
		if (g->site && fp__adv_split_frame(a, g->site, g->site_len, &file, &line))
			fp__adv_at(f, file, line, "call path: the launching line");
		fp__adv_ev_num(a, "launches", (double)g->n, "", "trace");
		fp__adv_ev_num(a, "median kernel time", md * 1e3, "ns", "trace");
		fp__adv_ev_num(a, "median gap before a launch", mg * 1e3, "ns", "trace");
		fp__adv_ev_num(a, "idle share over these launches", 100 * idle / (idle + busy), "%",
			       "trace");
		fp__adv_saving(
			a, f, g->saving,
			"the median gap before a launch, less 2 us (what a CUDA graph or a "
			"fused loop still spends per kernel), times the launches that follow "
			"another on their stream");
		f->suggestion =
			"launch less often: fuse the loop into one kernel (a loop inside the kernel "
			"over the items, or a larger grid covering all of them), batch the inputs, "
			"or capture the loop in a CUDA graph (torch.cuda.CUDAGraph, "
			"torch.compile(mode=\"reduce-overhead\")); move host work (tensor creation, "
			".item(), prints) out of the loop.";
	}
	goto out;
fail_alloc:
	if (!a->rc)
		a->rc = FP_ENOMEM;
out:
	fp_free(dur);
	fp_free(gap);
	fp_free(groups);
	fp_free(it);
}

/* ---- outside Triton kernels ------------------------------------------------------------------- */

struct site {
	const char *site;
	size_t len;
	double other_us, idle_us, idle_save_ns;
	size_t launches;
	const char *other_names[3];
	size_t nother;
};

static int by_site_time(const void *x, const void *y)
{
	const struct site *p = x, *q = y;
	double tp = p->other_us + p->idle_us, tq = q->other_us + q->idle_us;

	if (tp != tq)
		return tp > tq ? -1 : 1;
	return cmp_str(p->site ? p->site : "", p->len, q->site ? q->site : "", q->len);
}

/* Whether a trace kernel is Triton's: the meta file has its estimate note (every Triton launch
 * of a session with estimates gets one), or it came from Inductor. Without any estimate note in
 * the meta file, only C++ (mangled) kernels count as not Triton's. */
static bool is_triton(const struct fp_advice *a, const struct fp__adv_event *e)
{
	char key[1024];

	if (a->src[0].env &&
	    snprintf(key, sizeof(key), "estimate:%s", e->name) < (int)sizeof(key) &&
	    fp_json_get(a->src[0].env, key))
		return true;
	return !a->src[0].notes && !fp__adv_cxx_name(e->name);
}

void fp__adv_outside(struct fp_advice *a, size_t rule)
{
	struct site *sites = NULL;
	struct item *it = NULL;
	size_t ns = 0, i, j;

	if (!a->nevents) {
		fp__adv_skip(a, rule, FP__NEED_TRACE | FP__NEED_PYTHON, 0,
			     "no kernel events: the profile has no trace (-d trace -c python)");
		return;
	}
	fp__adv_ran(a, rule);
	it = sorted_items(a, by_site_name);
	sites = fp_calloc(a->nevents, sizeof(*sites));
	if (!it || !sites) {
		if (!a->rc)
			a->rc = FP_ENOMEM;
		goto out;
	}
	for (i = 0; i < a->nevents; i++) {
		const struct fp__adv_event *e = &a->events[it[i].i];
		size_t sl = it[i].site_len;
		const char *s = it[i].site;
		struct site *st;

		if (!ns || cmp_str(sites[ns - 1].site ? sites[ns - 1].site : "", sites[ns - 1].len,
				   s ? s : "", sl)) {
			sites[ns].site = s;
			sites[ns++].len = sl;
		}
		st = &sites[ns - 1];
		st->launches++;
		for (j = 0; j < a->nlb; j++) /* launch_bound has these gaps */
			if (!strcmp(a->lb[j].name, e->name) && a->lb[j].site_len == sl &&
			    (!sl || !memcmp(a->lb[j].site, s, sl)))
				break;
		if (!isnan(e->gap) && j == a->nlb) {
			st->idle_us += e->gap;
			st->idle_save_ns += FP_MAX(0.0, e->gap * 1e3 - FP__ADV_GRAPH_NS);
		}
		if (!is_triton(a, e)) {
			st->other_us += e->dur;
			for (j = 0; j < st->nother && strcmp(st->other_names[j], e->name); j++)
				;
			if (j == st->nother && st->nother < FP_ARRAY_SIZE(st->other_names))
				st->other_names[st->nother++] = e->name;
		}
	}
	qsort(sites, ns, sizeof(*sites), by_site_time);
	for (i = 0; i < ns && i < FP__ADV_MAX_SITES; i++) {
		struct site *st = &sites[i];
		double t = st->other_us + st->idle_us;
		struct fp__adv_finding *f;
		const char *file, *names = "";
		char b1[32], b2[32], b3[32];
		uint32_t line;

		if (!st->site || t < FP__ADV_OUTSIDE * a->span_us || a->span_us <= 0)
			continue;
		fp__adv_fmt_ns(t * 1e3, b1, sizeof(b1));
		fp__adv_fmt_ns(st->other_us * 1e3, b2, sizeof(b2));
		fp__adv_fmt_ns(st->idle_us * 1e3, b3, sizeof(b3));
		f = fp__adv_find(
			a, rule, SIZE_MAX, FP__ADV_CAUSE,
			fp__adv_str(a,
				    "%s outside Triton kernels (%.3g%% of the traced span) "
				    "at %.*s: %s in other kernels, %s of idle time on the device "
				    "before its launches",
				    b1, 100 * t / a->span_us, (int)st->len, st->site, b2, b3));
		if (!f)
			break;
		if (fp__adv_split_frame(a, st->site, st->len, &file, &line))
			fp__adv_at(f, file, line, "call path: the launching line");
		fp__adv_ev_num(a, "launches from the line", (double)st->launches, "", "trace");
		fp__adv_ev_num(a, "time in other kernels", st->other_us * 1e3, "ns", "trace");
		fp__adv_ev_num(a, "device idle before its launches", st->idle_us * 1e3, "ns",
			       "trace");
		fp__adv_ev_num(a, "traced span", a->span_us * 1e3, "ns", "trace");
		for (j = 0; j < st->nother; j++)
			names = fp__adv_str(a, "%s%s%s", names, j ? ", " : "", st->other_names[j]);
		if (st->nother)
			fp__adv_ev_text(a, "other kernels", names, "trace");
		fp__adv_saving(
			a, f, st->idle_save_ns > 0 ? st->idle_save_ns : NAN,
			st->idle_save_ns > 0 ?
				"the device's idle time before the line's launches, less 2 us per "
				"launch; time in other kernels is not counted (fusing them "
				"saves part of it)" :
				"not estimated: time in other kernels (fusing them saves part "
				"of it)");
		f->suggestion =
			st->other_us >= st->idle_us ?
				"the line runs PyTorch or library kernels: fuse elementwise work "
				"and conversions into the Triton kernel (load the original tensor, "
				"convert with .to() inside), drop .contiguous()/.to()/.clone() "
				"copies, allocate outputs once outside the loop." :
				"the device waits before this line's launches: host work or a "
				"synchronisation (.item(), .cpu(), .tolist(), print of a tensor, "
				"torch.cuda.synchronize()) sits in the loop: move it out, batch the "
				"launches, or capture the loop in a CUDA graph.";
	}
out:
	fp_free(sites);
	fp_free(it);
}

/* ---- ranks ------------------------------------------------------------------------------------- */

static const char *str_metric(const struct fp_calltree *t, const char *name, uint32_t node)
{
	struct fp_calltree_value v;
	uint32_t m;

	if (fp_calltree_metric_find(t, name, strlen(name), &m) ||
	    fp_calltree_get(t, node, m, &v) != FP_OK || !v.is_string)
		return NULL;
	return v.str;
}

void fp__adv_ranks(struct fp_advice *a, size_t rule)
{
	const struct fp__adv_src *s = &a->src[0];
	const char *ws = str_metric(s->t, "world_size (pty)", FP_CALLTREE_ROOT);
	size_t i;

	if (!a->merged)
		return; /* one process: nothing to compare (neither ran nor skipped) */
	if (s->m_time_max == FP_CALLTREE_NONE) {
		fp__adv_skip(a, rule, 0, 0, "the merged profile has no per-rank maxima");
		return;
	}
	fp__adv_ran(a, rule);
	for (i = 0; i < a->nkernels; i++) {
		struct fp__adv_kernel *k = &a->kernels[i];
		struct fp_calltree_value v;
		const char *rank = s->m_time_rank != FP_CALLTREE_NONE &&
						   fp_calltree_get(s->t, k->node, s->m_time_rank,
								   &v) == FP_OK &&
						   v.is_string ?
					   v.str :
					   NULL;
		double mx = NAN, mean = k->ns;
		struct fp__adv_finding *f;
		char b1[32], b2[32];

		if (fp_calltree_get(s->t, k->node, s->m_time_max, &v) == FP_OK && !v.is_string)
			mx = v.self;
		if (isnan(mx) || mean <= 0 || mx < FP__ADV_IMBALANCE * mean)
			continue;
		fp__adv_fmt_ns(mx, b1, sizeof(b1));
		fp__adv_fmt_ns(mean, b2, sizeof(b2));
		f = fp__adv_find(
			a, rule, i, FP__ADV_CAUSE,
			fp__adv_str(a,
				    "rank %s is the straggler on %s: %s against a mean of %s "
				    "(%.2fx)",
				    rank ? rank : "?", k->shown, b1, b2, mx / mean));
		if (!f)
			return;
		if (k->site_file)
			fp__adv_at(f, k->site_file, k->site_line, "call path: the launch");
		fp__adv_ev_num(a, "slowest rank's time", mx, "ns", "tree");
		fp__adv_ev_num(a, "mean over ranks", mean, "ns", "tree");
		if (rank)
			fp__adv_ev_text(a, "slowest rank", rank, "tree");
		if (ws)
			fp__adv_ev_text(a, "world size", ws, "tree");
		fp__adv_saving(a, f, mx - mean,
			       "the slowest rank's time less the mean: the others wait for it at "
			       "the next collective");
		f->suggestion = fp__adv_str(
			a,
			"look at rank %s's own profile (flagprism advise on its .rank%s file): a "
			"larger share of the data (sequence lengths, padding, an uneven split), "
			"another GPU clock or a different config; balance the work across ranks.",
			rank ? rank : "N", rank ? rank : "N");
	}
}
