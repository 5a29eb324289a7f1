/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profiler's side of the sink (include/flagprism/sink.h): the one table of calls through
 * which backends deliver launches, kernel events, metric values and PC samples, and the
 * attribution of each to the session's call tree. Everything a backend hands over lands in the
 * tree here or in session-event.c, under the session's lock; a backend only ever holds opaque node ids.
 * Not here: where events come from (src/backend/), the session registry and the launch-context
 * bookkeeping (session.c, session-lctx.c), names and call paths (names.c).
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/backend.h>

#include "prof/prof-internal.h"

#define UNKNOWN_FUNCTION "<unknown function>"

/* ---- process-wide ------------------------------------------------------------------------------ */

/* The launch callback's whole view of the profiler: thread-local and relaxed atomic reads. */
static void sink_capture(struct fp_sink_capture *out)
{
	out->lctx = fp_prof_launch_context();
	out->callpath = fp_prof_callpath_override();
	fp_prof_launch_state_now(&out->state);
}

static int sink_launch_timed(int session, const struct fp_sink_launch *l,
			     const struct fp_sink_event *ev)
{
	if (!l || !ev)
		return FP_EINVAL;
	return fp__prof_host_record(session, l, ev);
}

/* ---- one session --------------------------------------------------------------------------------- */

static int sink_set_device(struct fp_sink_session *h, const char *type, const char *index,
			   const char *key, double value)
{
	return fp_prof_session_set_device(fp__prof_of_sink(h), type, index, key, value);
}

static int sink_set_device_str(struct fp_sink_session *h, const char *type, const char *index,
			       const char *key, const char *value)
{
	return fp_prof_session_set_device_str(fp__prof_of_sink(h), type, index, key, value);
}

static int sink_set_meta(struct fp_sink_session *h, const char *key, const char *value)
{
	struct fp_prof_session *s = fp__prof_of_sink(h);

	return s ? fp_prof_set_meta(s->id, key, value) : FP_EINVAL;
}

/* The resolved name (directory made absolute at start), so that a backend's file beside the
 * outputs goes where they go even after the program changed directory. */
static const char *sink_output_name(const struct fp_sink_session *h)
{
	const struct fp_prof_session *s = fp__prof_of_sink((struct fp_sink_session *)h);

	return s ? (s->path ? s->path : s->name) : NULL;
}

static bool sink_active(const struct fp_sink_session *h)
{
	return fp_prof_session_active(fp__prof_of_sink((struct fp_sink_session *)h));
}

static int sink_kernel(struct fp_sink_session *h, const struct fp_sink_event *ev, uint32_t outer,
		       uint32_t inner, const struct fp_sink_launch_state *ls, uint32_t *node)
{
	return fp_prof_session_kernel_launched(fp__prof_of_sink(h), ev, outer, inner, ls, node);
}

static int sink_dropped(struct fp_sink_session *h, uint64_t n, const char *reason)
{
	return fp_prof_session_note_dropped(fp__prof_of_sink(h), n, reason);
}

/* ---- metric values per launch ------------------------------------------------------------------ */

/* One node's accumulators: per metric, sum, weight sum, count and unweighted sum. */
struct acc {
	uint32_t node;
	uint64_t launches;
	double *sum, *wsum, *cnt, *usum;
};

static int find_acc(const struct acc *a, size_t na, uint32_t node)
{
	size_t i;

	for (i = 0; i < na; i++)
		if (a[i].node == node)
			return (int)i;
	return -1;
}

static bool has_metric(const struct fp_calltree *t, const char *name)
{
	uint32_t id;

	return name && fp_calltree_metric_find(t, name, strlen(name), &id) == FP_OK;
}

int fp__prof_attach_ranges(struct fp_calltree *t, const struct fp_sink_metrics *m,
			   struct fp_sink_metrics_stats *st)
{
	uint32_t *ids = NULL, launches_id = FP_CALLTREE_NONE, i32;
	struct fp_sink_metrics_stats local;
	const struct fp_sink_range *r;
	struct acc *a = NULL;
	double *cells = NULL;
	size_t na = 0, i, j, nnodes, ncells, nm, n;
	int rc = FP_OK;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (!t || !m || (m->nmetrics && (!m->names || !m->agg)) || (m->nranges && !m->ranges))
		return FP_EINVAL;
	for (j = 0; j < m->nmetrics; j++)
		if (!m->names[j] || !m->names[j][0])
			return FP_EINVAL;
	nm = m->nmetrics;
	n = m->nranges;
	r = m->ranges;
	nnodes = fp_calltree_node_count(t);
	if (has_metric(t, m->launches))
		return FP_ESTATE;
	for (j = 0; j < nm; j++)
		if (has_metric(t, m->names[j]))
			return FP_ESTATE;
	for (i = 0; i < n; i++)
		if (r[i].node != FP_SINK_NO_NODE &&
		    ((size_t)r[i].node >= nnodes || (nm && !r[i].values)))
			return FP_EINVAL;
	st->ranges = n;
	/* Accumulate: one entry per distinct node, in first-seen order. */
	a = fp_calloc(n ? n : 1, sizeof(*a));
	ncells = (n ? n : 1) * (nm ? nm : 1) * 4;
	cells = fp_calloc(ncells, sizeof(*cells));
	ids = fp_calloc(nm ? nm : 1, sizeof(*ids));
	if (!a || !cells || !ids) {
		rc = FP_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct acc *x;
		int k;
		double w;

		if (r[i].node == FP_SINK_NO_NODE) {
			st->skipped++;
			continue;
		}
		k = find_acc(a, na, r[i].node);
		if (k < 0) {
			x = &a[na];
			x->node = r[i].node;
			x->sum = cells + na * nm * 4;
			x->wsum = x->sum + nm;
			x->cnt = x->wsum + nm;
			x->usum = x->cnt + nm;
			na++;
		} else {
			x = &a[k];
		}
		st->attached++;
		x->launches += 1;
		w = r[i].weight > 0 && isfinite(r[i].weight) ? r[i].weight : 0;
		for (j = 0; j < nm; j++) {
			double v = r[i].values[j];

			if (!isfinite(v)) {
				st->missing++;
				continue;
			}
			st->values++;
			x->cnt[j] += 1;
			x->usum[j] += v;
			if (m->agg[j] == FP_SINK_AGG_SUM) {
				x->sum[j] += v;
			} else {
				x->sum[j] += v * w;
				x->wsum[j] += w;
			}
		}
	}
	/* Register the metrics, then write each node's values. */
	if (m->launches)
		rc = fp_calltree_metric(t, m->launches, strlen(m->launches), FP_METRIC_INCLUSIVE,
					&launches_id);
	for (j = 0; !rc && j < nm; j++) {
		rc = fp_calltree_metric(t, m->names[j], strlen(m->names[j]),
					m->agg[j] == FP_SINK_AGG_SUM ? FP_METRIC_INCLUSIVE :
								       FP_METRIC_PROPERTY,
					&i32);
		ids[j] = i32;
	}
	for (i = 0; !rc && i < na; i++) {
		const struct acc *x = &a[i];

		if (m->launches)
			rc = fp_calltree_add_metric(t, x->node, launches_id, (double)x->launches);
		for (j = 0; !rc && j < nm; j++) {
			double v;

			if (!x->cnt[j])
				continue;
			if (m->agg[j] == FP_SINK_AGG_SUM)
				v = x->sum[j];
			else if (x->wsum[j] > 0)
				v = x->sum[j] / x->wsum[j];
			else
				v = x->usum[j] / x->cnt[j];
			rc = fp_calltree_add_metric(t, x->node, ids[j], v);
		}
	}
	st->nodes = na;
out:
	fp_free(a);
	fp_free(cells);
	fp_free(ids);
	return rc;
}

static int sink_metrics(struct fp_sink_session *h, const struct fp_sink_metrics *m,
			struct fp_sink_metrics_stats *st)
{
	struct fp_prof_session *s = fp__prof_of_sink(h);
	int rc;

	if (!s) {
		if (st)
			memset(st, 0, sizeof(*st));
		return FP_EINVAL;
	}
	pthread_mutex_lock(&s->lock);
	rc = fp__prof_attach_ranges(s->tree, m, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- PC samples ---------------------------------------------------------------------------------- */

static int child(struct fp_calltree *t, uint32_t parent, const char *name, uint32_t *node)
{
	uint32_t frame;
	int rc = fp_calltree_intern(t, name, strlen(name), &frame);

	return rc ? rc : fp_calltree_child(t, parent, frame, node);
}

static int metric_id(struct fp_calltree *t, const char *name, uint32_t *id)
{
	return fp_calltree_metric_auto(t, name, strlen(name), id);
}

int fp__prof_pc_reasons(struct fp_calltree *t, const char *const *reasons, size_t n)
{
	uint32_t id;
	size_t i;
	int rc;

	if (!t || (n && !reasons))
		return FP_EINVAL;
	rc = metric_id(t, "num_samples", &id);
	if (!rc)
		rc = metric_id(t, "num_stalled_samples", &id);
	for (i = 0; !rc && i < n; i++)
		rc = reasons[i] ? metric_id(t, reasons[i], &id) : FP_EINVAL;
	return rc;
}

static int sink_pc_reasons(struct fp_sink_session *h, const char *const *reasons, size_t n)
{
	struct fp_prof_session *s = fp__prof_of_sink(h);
	int rc;

	if (!s)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = fp__prof_pc_reasons(s->tree, reasons, n);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int fp__prof_pc_file(struct fp_calltree *t, const struct fp_sink_pc_sample *v)
{
	uint32_t kernel, line, reason, num, stalled;
	int rc;

	if (!t || !v || !v->place || !v->reason)
		return FP_EINVAL;
	kernel = v->node;
	if (kernel == FP_SINK_NO_NODE) {
		rc = child(t, FP_CALLTREE_ROOT, FP_SINK_PC_NO_LAUNCH, &kernel);
		if (!rc)
			rc = child(t, kernel, v->function ? v->function : UNKNOWN_FUNCTION,
				   &kernel);
		if (rc)
			return rc;
	} else if ((size_t)kernel >= fp_calltree_node_count(t)) {
		return FP_EINVAL;
	}
	rc = child(t, kernel, v->place, &line);
	if (!rc)
		rc = metric_id(t, v->reason, &reason);
	if (!rc)
		rc = fp_calltree_add_metric(t, line, reason, v->samples);
	if (rc || (v->flags & FP_SINK_PC_LATENCY))
		return rc;
	rc = metric_id(t, "num_samples", &num);
	if (!rc)
		rc = fp_calltree_add_metric(t, line, num, v->samples);
	if (!rc && !(v->flags & FP_SINK_PC_ISSUED)) {
		rc = metric_id(t, "num_stalled_samples", &stalled);
		if (!rc)
			rc = fp_calltree_add_metric(t, line, stalled, v->samples);
	}
	return rc;
}

static int sink_pc_sample(struct fp_sink_session *h, const struct fp_sink_pc_sample *v)
{
	struct fp_prof_session *s = fp__prof_of_sink(h);
	int rc;

	if (!s)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = fp__prof_pc_file(s->tree, v);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- node paths ---------------------------------------------------------------------------------- */

static int sink_node_path(struct fp_sink_session *h, uint32_t node, char *buf, size_t size)
{
	struct fp_prof_session *s = fp__prof_of_sink(h);
	uint32_t chain[FP_CALLTREE_DEFAULT_MAX_DEPTH];
	const struct fp_calltree *t;
	size_t n = 0, off = 0, len;

	if (!s || (size && !buf))
		return FP_EINVAL;
	if (size)
		buf[0] = '\0';
	if (node == FP_SINK_NO_NODE || !size)
		return 0;
	pthread_mutex_lock(&s->lock);
	t = s->tree;
	if ((size_t)node >= fp_calltree_node_count(t)) {
		pthread_mutex_unlock(&s->lock);
		return FP_EINVAL;
	}
	for (; node != FP_CALLTREE_ROOT && node != FP_CALLTREE_NONE && n < FP_ARRAY_SIZE(chain);
	     node = fp_calltree_node_parent(t, node))
		chain[n++] = node;
	/* whole frames only: a frame that does not fit ends the path */
	while (n--) {
		const char *name = fp_calltree_node_name(t, chain[n], &len);
		int k = snprintf(buf + off, size - off, "%s%.*s", off ? "/" : "",
				 (int)FP_MIN(len, size), name ? name : "?");

		if (k < 0 || (size_t)k >= size - off) {
			buf[off] = '\0';
			break;
		}
		off += (size_t)k;
	}
	pthread_mutex_unlock(&s->lock);
	return (int)FP_MIN(off, (size_t)INT32_MAX);
}

/* ---- the table ----------------------------------------------------------------------------------- */

static const struct fp_sink prof_sink = {
	.clock_ns = fp_prof_clock_ns,
	.name_intern = fp_prof_name_intern,
	.name_str = fp_prof_name_str,
	.callpath_join = fp_prof_callpath_join,
	.correlation_next = fp_prof_correlation_next,
	.thread_index = fp__prof_thread_index,
	.capture = sink_capture,
	.launch_timed = sink_launch_timed,
	.set_device = sink_set_device,
	.set_device_str = sink_set_device_str,
	.set_meta = sink_set_meta,
	.output_name = sink_output_name,
	.active = sink_active,
	.kernel = sink_kernel,
	.dropped = sink_dropped,
	.metrics = sink_metrics,
	.pc_reasons = sink_pc_reasons,
	.pc_sample = sink_pc_sample,
	.node_path = sink_node_path,
};

const struct fp_sink *fp_prof_sink(void)
{
	return &prof_sink;
}
