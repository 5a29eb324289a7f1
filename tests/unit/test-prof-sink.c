/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profiler's sink (include/flagprism/sink.h, src/prof/sink.c): the aggregation rules of
 * per-launch metric values on a bare tree (sum vs time-weighted mean, per node), and every call
 * a backend makes through a null-backend session's sink: kernel events and the nodes they give,
 * metric values, PC samples, node paths, the device table and metadata, the process-wide calls,
 * and the registry's copy of the sink that the host backend delivers through.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/prof.h>
#include <flagprism/sink.h>

#include "prof/prof-internal.h"
#include "test.h"

/* fp__prof_attach_ranges() with the old argument order, so the rules read as a table. */
static int attach(struct fp_calltree *t, const char *const *names, const enum fp_sink_agg *agg,
		  size_t nm, const struct fp_sink_range *r, size_t n,
		  struct fp_sink_metrics_stats *st)
{
	struct fp_sink_metrics m = {names, agg, nm, "hw:launches", r, n};

	return fp__prof_attach_ranges(t, &m, st);
}

/* ---- metric values: the aggregation rules on a bare tree -------------------------------------- */

static double get(struct fp_calltree *t, uint32_t node, const char *m, bool total)
{
	struct fp_calltree_value v;
	uint32_t id;

	if (fp_calltree_metric_find(t, m, strlen(m), &id) || fp_calltree_get(t, node, id, &v))
		return -1;
	return total ? v.total : v.self;
}

static struct fp_calltree *two_kernels(uint32_t *a, uint32_t *b)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t fs, fa, fb, s;

	ASSERT_NOT_NULL(t);
	ASSERT_OK(fp_calltree_intern(t, "scope", 5, &fs));
	ASSERT_OK(fp_calltree_intern(t, "add", 3, &fa));
	ASSERT_OK(fp_calltree_intern(t, "mm", 2, &fb));
	ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, fs, &s));
	ASSERT_OK(fp_calltree_child(t, s, fa, a));
	ASSERT_OK(fp_calltree_child(t, s, fb, b));
	return t;
}

TEST(prof_sink_attach_sum_and_weighted_mean)
{
	static const char *const names[] = {"hw:dram__bytes_read.sum",
					    "hw:sm__throughput.avg.pct (pty)"};
	static const enum fp_sink_agg agg[] = {FP_SINK_AGG_SUM, FP_SINK_AGG_MEAN};
	struct fp_sink_metrics_stats st;
	struct fp_calltree *t;
	uint32_t a, b;
	double v0[] = {100, 10}, v1[] = {300, 50}, v2[] = {7, NAN}, v3[] = {1, 99};
	struct fp_sink_range r[4];

	t = two_kernels(&a, &b);
	/* add: two launches, 1 us at 10% and 3 us at 50% -> time-weighted 40%, bytes 400. */
	r[0] = (struct fp_sink_range){a, 1000, v0};
	r[1] = (struct fp_sink_range){a, 3000, v1};
	r[2] = (struct fp_sink_range){b, 500, v2};               /* mm: one value missing */
	r[3] = (struct fp_sink_range){FP_SINK_NO_NODE, 100, v3}; /* not filed */
	ASSERT_OK(attach(t, names, agg, 2, r, 4, &st));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(get(t, a, "hw:dram__bytes_read.sum", false), 400);
	ASSERT_NEAR(get(t, a, "hw:sm__throughput.avg.pct (pty)", false), 40, 1e-12);
	ASSERT_DEQ(get(t, a, "hw:launches", false), 2);
	ASSERT_DEQ(get(t, b, "hw:dram__bytes_read.sum", false), 7);
	ASSERT_DEQ(get(t, b, "hw:sm__throughput.avg.pct (pty)", false), -1);
	/* Sums propagate to the scope and the root; means do not. */
	ASSERT_DEQ(get(t, FP_CALLTREE_ROOT, "hw:dram__bytes_read.sum", true), 407);
	ASSERT_DEQ(get(t, FP_CALLTREE_ROOT, "hw:launches", true), 3);
	ASSERT_DEQ(get(t, fp_calltree_node_parent(t, a), "hw:sm__throughput.avg.pct (pty)", false),
		   -1);
	ASSERT_UEQ(st.ranges, 4);
	ASSERT_UEQ(st.attached, 3);
	ASSERT_UEQ(st.skipped, 1);
	ASSERT_UEQ(st.nodes, 2);
	ASSERT_UEQ(st.values, 5);
	ASSERT_UEQ(st.missing, 1);
	/* Twice would double the sums. */
	ASSERT_EQ(attach(t, names, agg, 2, r, 4, NULL), FP_ESTATE);
	fp_calltree_free(t);
}

TEST(prof_sink_attach_zero_time_and_errors)
{
	static const char *const names[] = {"hw:x.pct (pty)"};
	static const enum fp_sink_agg agg[] = {FP_SINK_AGG_MEAN};
	struct fp_calltree *t;
	uint32_t a, b;
	double v0[] = {10}, v1[] = {30};
	struct fp_sink_range r[2];

	t = two_kernels(&a, &b);
	/* No durations: every launch weighs the same. */
	r[0] = (struct fp_sink_range){a, 0, v0};
	r[1] = (struct fp_sink_range){a, 0, v1};
	ASSERT_OK(attach(t, names, agg, 1, r, 2, NULL));
	ASSERT_DEQ(get(t, a, "hw:x.pct (pty)", false), 20);
	fp_calltree_free(t);

	t = two_kernels(&a, &b);
	r[1].node = 999; /* no such node */
	ASSERT_EQ(attach(t, names, agg, 1, r, 2, NULL), FP_EINVAL);
	ASSERT_EQ(attach(NULL, names, agg, 1, r, 2, NULL), FP_EINVAL);
	ASSERT_EQ(fp__prof_attach_ranges(t, NULL, NULL), FP_EINVAL);
	ASSERT_EQ(attach(t, NULL, agg, 1, r, 2, NULL), FP_EINVAL);
	ASSERT_OK(attach(t, names, agg, 1, NULL, 0, NULL));
	fp_calltree_free(t);
}

/* Build a two-kernel tree and attach to it, all under the test allocator. */
static int oom_case(void *unused)
{
	static const char *const names[] = {"hw:a.sum", "hw:b.pct (pty)"};
	static const enum fp_sink_agg agg[] = {FP_SINK_AGG_SUM, FP_SINK_AGG_MEAN};
	double v[] = {1, 2};
	struct fp_sink_range r[2];
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t fa, fb, a, b;
	int rc;

	if (!t)
		return FP_ENOMEM;
	rc = fp_calltree_intern(t, "a", 1, &fa);
	if (!rc)
		rc = fp_calltree_intern(t, "b", 1, &fb);
	if (!rc)
		rc = fp_calltree_child(t, FP_CALLTREE_ROOT, fa, &a);
	if (!rc)
		rc = fp_calltree_child(t, FP_CALLTREE_ROOT, fb, &b);
	if (!rc) {
		r[0] = (struct fp_sink_range){a, 1, v};
		r[1] = (struct fp_sink_range){b, 1, v};
		rc = attach(t, names, agg, 2, r, 2, NULL);
	}
	fp_calltree_free(t);
	return rc;
}

TEST(prof_sink_attach_oom)
{
	long ok = 0, total = fpt_oom_sweep(oom_case, NULL, 0, 1, &ok);

	ASSERT_LT(ok, total);
}

/* ---- through a session's sink ------------------------------------------------------------------ */

static struct fp_prof_session *start_null(const char *name, int *id)
{
	struct fp_prof_options o = {0};
	struct fp_diag d;

	o.name = fpt_tmp_path(name);
	o.backend = "null";
	fp_diag_clear(&d);
	if (fp_prof_start(&o, id, &d))
		fpt_fail(__FILE__, __LINE__, "start: %s", d.msg);
	return fp_prof_session_get(*id);
}

/*
 * A kernel event of `kernel` delivered through the sink as a launch callback would: the launch
 * context captured now, handed back with the event. Returns the node it was filed to.
 */
static uint32_t deliver(struct fp_sink_session *h, const char *kernel, uint64_t begin, uint64_t end)
{
	const struct fp_sink *k = h->sink;
	struct fp_sink_capture cap;
	struct fp_sink_event ev;
	uint32_t node = 0;

	k->capture(&cap);
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.device_type = FP_SINK_NO_NAME;
	ev.callpath = FP_SINK_NO_CALLPATH;
	ASSERT_OK(k->name_intern(kernel, strlen(kernel), &ev.kernel));
	ev.begin_ns = begin;
	ev.end_ns = end;
	ASSERT_OK(k->kernel(h, &ev, FP_SINK_LCTX_NONE, cap.lctx, &cap.state, &node));
	return node;
}

TEST(prof_sink_session_handles)
{
	struct fp_prof_session *s;
	struct fp_sink_session *h;
	int id;

	ASSERT_NULL(fp_prof_session_sink(NULL));
	s = start_null("handles", &id);
	h = fp_prof_session_sink(s);
	ASSERT_NOT_NULL(h);
	ASSERT(h->sink == fp_prof_sink());
	/* the host backend finds the sink in the registry once a session started */
	ASSERT(fp_backend_sink() == fp_prof_sink());
	ASSERT(fp_prof_session_backend(s) == fp_backend_null());
	ASSERT_STREQ(h->sink->output_name(h), fpt_tmp_path("handles"));
	ASSERT(h->sink->active(h));
	ASSERT_OK(fp_prof_deactivate(id));
	ASSERT(!h->sink->active(h));
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	fpt_tmp_cleanup();
}

TEST(prof_sink_process_calls)
{
	const struct fp_sink *k = fp_prof_sink();
	struct fp_sink_capture cap;
	uint32_t a, b, joined, frames[4];
	uint64_t c1, c2, t0, t1;
	size_t len = 0;

	t0 = k->clock_ns();
	t1 = fp_prof_clock_ns();
	ASSERT_LE(t0, t1);
	ASSERT_OK(k->name_intern("kern", 4, &a));
	ASSERT_STREQ(k->name_str(a, &len), "kern");
	ASSERT_UEQ(len, 4);
	ASSERT_NULL(k->name_str(UINT32_MAX - 1, NULL));
	c1 = k->correlation_next();
	c2 = k->correlation_next();
	ASSERT_GT(c2, c1);
	ASSERT_GT(k->thread_index(), 0);
	ASSERT_EQ(k->thread_index(), k->thread_index());
	/* a join of two paths: the outer's frames, then the inner's */
	ASSERT_OK(fp_prof_callpath_intern_ids(&a, 1, &a));
	ASSERT_OK(k->name_intern("inner", 5, &b));
	ASSERT_OK(fp_prof_callpath_intern_ids(&b, 1, &b));
	ASSERT_OK(k->callpath_join(a, b, &joined));
	ASSERT_UEQ(fp_prof_callpath_frames(joined, frames, 4), 2);
	ASSERT_OK(k->callpath_join(FP_SINK_NO_CALLPATH, b, &joined));
	ASSERT_EQ(joined, b);
	/* capture: nothing open, the program's own work, no override */
	k->capture(&cap);
	ASSERT_EQ(cap.lctx, FP_SINK_LCTX_NONE);
	ASSERT_EQ(cap.callpath, FP_SINK_NO_CALLPATH);
	ASSERT_EQ(cap.state.known, 1);
	ASSERT_EQ(cap.state.internal, 0);
	ASSERT_EQ(fp_prof_internal_mark(1), 1);
	fp_prof_callpath_override_set(b);
	k->capture(&cap);
	ASSERT_EQ(cap.state.internal, 1);
	ASSERT_EQ(cap.callpath, b);
	fp_prof_callpath_override_set(FP_SINK_NO_CALLPATH);
	ASSERT_EQ(fp_prof_internal_mark(-1), 0);
	ASSERT_EQ(k->launch_timed(0, NULL, NULL), FP_EINVAL);
}

TEST(prof_sink_kernels_metrics_and_paths)
{
	static const char *const names[] = {"hw:x.sum", "hw:y.pct (pty)"};
	static const enum fp_sink_agg agg[] = {FP_SINK_AGG_SUM, FP_SINK_AGG_MEAN};
	struct fp_sink_metrics_stats st;
	struct fp_prof_session *s;
	struct fp_sink_session *h;
	struct fp_sink_range r[3];
	struct fp_sink_metrics m;
	struct fp_calltree *t;
	double v0[] = {1, 10}, v1[] = {2, 30};
	char path[64];
	uint32_t na, nb;
	int id;

	s = start_null("metrics", &id);
	h = fp_prof_session_sink(s);
	ASSERT_OK(fp_prof_scope_enter(id, "step", 4, 0));
	na = deliver(h, "add", 10, 20);
	ASSERT_OK(fp_prof_scope_exit(id, "step", 4, NULL));
	nb = deliver(h, "mm", 30, 40);
	ASSERT_NE(na, FP_SINK_NO_NODE);
	ASSERT_NE(nb, FP_SINK_NO_NODE);
	ASSERT_EQ(h->sink->node_path(h, na, path, sizeof(path)), 8);
	ASSERT_STREQ(path, "step/add");
	ASSERT_EQ(h->sink->node_path(h, nb, path, sizeof(path)), 2);
	ASSERT_STREQ(path, "mm");
	/* a frame that does not fit ends the path */
	ASSERT_EQ(h->sink->node_path(h, na, path, 6), 4);
	ASSERT_STREQ(path, "step");
	ASSERT_EQ(h->sink->node_path(h, FP_SINK_NO_NODE, path, sizeof(path)), 0);
	ASSERT_STREQ(path, "");
	ASSERT_EQ(h->sink->node_path(h, 12345, path, sizeof(path)), FP_EINVAL);

	r[0] = (struct fp_sink_range){na, 1, v0};
	r[1] = (struct fp_sink_range){na, 3, v1};
	r[2] = (struct fp_sink_range){FP_SINK_NO_NODE, 1, v1};
	memset(&m, 0, sizeof(m));
	m.names = names;
	m.agg = agg;
	m.nmetrics = 2;
	m.launches = "hw:launches";
	m.ranges = r;
	m.nranges = 3;
	ASSERT_OK(h->sink->metrics(h, &m, &st));
	ASSERT_UEQ(st.attached, 2);
	ASSERT_UEQ(st.skipped, 1);
	ASSERT_UEQ(st.nodes, 1);
	ASSERT_EQ(h->sink->metrics(h, &m, NULL), FP_ESTATE);
	t = fp_prof_session_tree(s);
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(get(t, na, "hw:x.sum", false), 3);
	ASSERT_DEQ(get(t, na, "hw:y.pct (pty)", false), 25);
	ASSERT_DEQ(get(t, na, "hw:launches", false), 2);
	ASSERT_DEQ(get(t, na, "count", false), 1);
	ASSERT_DEQ(get(t, nb, "hw:x.sum", false), -1);

	/* the device table, the metadata and losses: read back from the files */
	ASSERT_OK(h->sink->set_device(h, "CUDA", "0", "num_sms", 132));
	ASSERT_OK(h->sink->set_device_str(h, "CUDA", "0", "arch", "90"));
	ASSERT_OK(h->sink->set_meta(h, "sink_test", "yes"));
	ASSERT_OK(h->sink->dropped(h, 3, "sink test drops"));
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	{
		struct fp_json_doc *doc;
		const struct fp_json_value *root, *v;
		struct fp_diag d;

		ASSERT_OK(fp_json_parse_file(fpt_tmp_path("metrics.meta.json"), NULL, &doc, &d));
		root = fp_json_root(doc);
		v = fp_json_get(fp_json_get(root, "environment"), "sink_test");
		ASSERT_STREQ(fp_json_string(v, NULL), "yes");
		v = fp_json_get(fp_json_get(root, "lost"), "dropped_by_backend");
		ASSERT_NOT_NULL(v);
		{
			int64_t n = 0;

			ASSERT(fp_json_int64(v, &n));
			ASSERT_EQ(n, 3);
		}
		fp_json_doc_free(doc);
		ASSERT_OK(fp_calltree_read_hatchet(fpt_tmp_path("metrics.hatchet"), NULL, &t, NULL,
						   &d));
		ASSERT_EQ(fp_calltree_device_count(t), 2); /* two keys of device CUDA/0 */
		fp_calltree_free(t);
	}
	fpt_tmp_cleanup();
}

static uint32_t child_named(struct fp_calltree *t, uint32_t parent, const char *name)
{
	uint32_t frame, node;

	ASSERT_OK(fp_calltree_intern(t, name, strlen(name), &frame));
	ASSERT_OK(fp_calltree_child_find(t, parent, frame, &node));
	return node;
}

TEST(prof_sink_pc_samples)
{
	static const char *const reasons[] = {"stalled_wait", "stalled_selected",
					      "stalled_wait_not_issued"};
	struct fp_sink_pc_sample v;
	struct fp_prof_session *s;
	struct fp_sink_session *h;
	struct fp_calltree *t;
	uint32_t k, line, nl, fn;
	int id;

	s = start_null("pcs", &id);
	h = fp_prof_session_sink(s);
	k = deliver(h, "kern", 1, 2);
	ASSERT_OK(h->sink->pc_reasons(h, reasons, 3));
	memset(&v, 0, sizeof(v));
	v.node = k;
	v.place = "k.py:12";
	v.reason = "stalled_wait";
	v.samples = 4;
	ASSERT_OK(h->sink->pc_sample(h, &v));
	v.reason = "stalled_selected";
	v.flags = FP_SINK_PC_ISSUED;
	v.samples = 2;
	ASSERT_OK(h->sink->pc_sample(h, &v));
	v.reason = "stalled_wait_not_issued";
	v.flags = FP_SINK_PC_LATENCY;
	v.samples = 7;
	ASSERT_OK(h->sink->pc_sample(h, &v));
	/* no launch: ROOT / <pc samples without a launch> / function / place */
	v.node = FP_SINK_NO_NODE;
	v.function = "lost_fn";
	v.place = "<no line info>";
	v.reason = "stalled_wait";
	v.flags = 0;
	v.samples = 1.5;
	ASSERT_OK(h->sink->pc_sample(h, &v));
	v.place = NULL;
	ASSERT_EQ(h->sink->pc_sample(h, &v), FP_EINVAL);
	v.place = "x";
	v.node = 99999;
	ASSERT_EQ(h->sink->pc_sample(h, &v), FP_EINVAL);

	t = fp_prof_session_tree(s);
	/* metrics registered in the declared order, after the two counts */
	{
		uint32_t a, b, c;

		ASSERT_OK(fp_calltree_metric_find(t, "num_samples", 11, &a));
		ASSERT_OK(fp_calltree_metric_find(t, "num_stalled_samples", 19, &b));
		ASSERT_OK(fp_calltree_metric_find(t, "stalled_wait_not_issued", 23, &c));
		ASSERT_LT(a, b);
		ASSERT_LT(b, c);
	}
	ASSERT_OK(fp_calltree_finalize(t));
	line = child_named(t, k, "k.py:12");
	ASSERT_DEQ(get(t, line, "stalled_wait", false), 4);
	ASSERT_DEQ(get(t, line, "stalled_selected", false), 2);
	ASSERT_DEQ(get(t, line, "stalled_wait_not_issued", false), 7);
	ASSERT_DEQ(get(t, line, "num_samples", false), 6);
	ASSERT_DEQ(get(t, line, "num_stalled_samples", false), 4);
	nl = child_named(t, FP_CALLTREE_ROOT, FP_SINK_PC_NO_LAUNCH);
	fn = child_named(t, nl, "lost_fn");
	line = child_named(t, fn, "<no line info>");
	ASSERT_DEQ(get(t, line, "num_samples", false), 1.5);
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	fpt_tmp_cleanup();
}

TEST(prof_sink_host_launch_without_session)
{
	struct fp_sink_launch l;

	memset(&l, 0, sizeof(l));
	l.callpath = FP_SINK_NO_CALLPATH;
	/* a fresh process (the runner forks per test) has no sink yet: no session to record in */
	if (fp_backend_sink() == NULL) {
		ASSERT_EQ(fp_host_launch(0, &l, 1, 2), FP_ENOENT);
		ASSERT_OK(fp_host_launch(FP_SINK_ALL, &l, 1, 2));
	}
	ASSERT_EQ(fp_host_launch(FP_SINK_ALL, &l, 2, 1), FP_EINVAL);
	ASSERT_EQ(fp_host_launch(FP_SINK_ALL, NULL, 1, 2), FP_EINVAL);
}
