/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for putting Nsight Compute launches on profile nodes (fp_ncu_attach): launch
 * order from a trace or from node counts, grid checks, unmatched and surplus launches, base
 * names, per-node sums and weighted means, refusing a second import, the vendor file read back
 * with the JSON reader, the ncu command line, and the OOM sweep. Inputs: tests/data/ncu and
 * tests/data/profiles/ncu-demo.* (synthetic, see tests/data/ncu/README.md). */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/ncu.h>
#include <flagprism/strbuf.h>

#include "test.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static struct fp_calltree *demo_tree(void)
{
	struct fp_calltree *t = NULL;
	struct fp_diag d;

	if (fp_calltree_read_hatchet(fpt_data_path("profiles/ncu-demo.hatchet"), NULL, &t, NULL,
				     &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "ncu-demo.hatchet: %s", d.msg);
	return t;
}

static struct fp_ncu_order *demo_order(struct fp_calltree *t)
{
	struct fp_ncu_order *o = NULL;
	struct fp_diag d;

	if (fp_ncu_order_read_trace(t, fpt_data_path("profiles/ncu-demo.chrome_trace.json"), &o,
				    &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "ncu-demo trace: %s", d.msg);
	return o;
}

static struct fp_ncu_report *report(const char *name)
{
	struct fp_ncu_report *r = NULL;
	struct fp_diag d;

	if (fp_ncu_read(fpt_data_path(name), NULL, &r, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "%s: %s", name, d.msg);
	return r;
}

static struct fp_ncu_report *report_str(const char *text)
{
	struct fp_ncu_report *r = NULL;
	struct fp_diag d;

	ASSERT_OK(fp_ncu_parse(text, strlen(text), NULL, &r, &d));
	return r;
}

static uint32_t node(struct fp_calltree *t, const char *a, const char *b)
{
	uint32_t fa, fb, n;

	ASSERT_OK(fp_calltree_intern(t, a, strlen(a), &fa));
	ASSERT_OK(fp_calltree_child_find(t, FP_CALLTREE_ROOT, fa, &n));
	if (!b)
		return n;
	ASSERT_OK(fp_calltree_intern(t, b, strlen(b), &fb));
	ASSERT_OK(fp_calltree_child_find(t, n, fb, &n));
	return n;
}

/* A node's value of a metric (self, or total when `total`); NAN when it has none. */
static double val(struct fp_calltree *t, uint32_t n, const char *metric, bool total)
{
	struct fp_calltree_value v;
	uint32_t m;

	if (fp_calltree_metric_find(t, metric, strlen(metric), &m) != FP_OK)
		return NAN;
	if (fp_calltree_get(t, n, m, &v) != FP_OK)
		return NAN;
	return total ? v.total : v.self;
}

#define READ "ncu:dram__bytes_read.sum (byte)"
#define TIME "ncu:gpu__time_duration.sum (nsecond)"
#define SM "ncu:sm__throughput.avg.pct_of_peak_sustained_elapsed (%) (pty)"
#define REGS "ncu:launch__registers_per_thread (register/thread) (pty)"

TEST(ncu_attach_with_trace_order)
{
	struct fp_calltree *t = demo_tree();
	struct fp_ncu_order *o = demo_order(t);
	struct fp_ncu_report *r = report("ncu/raw-base.csv");
	struct fp_ncu_attach_stats st;
	struct fp_diag d;
	uint32_t run_add, tail_add, run_mm;

	ASSERT_EQ(fp_ncu_order_count(o), 5);
	ASSERT_EQ(fp_ncu_order_unresolved(o), 0);
	ASSERT_OK(fp_ncu_attach(r, t, o, &st, &d));
	ASSERT(st.used_trace);
	ASSERT_STREQ(st.order_note, "");
	ASSERT_UEQ(st.launches, 7);
	ASSERT_UEQ(st.matched, 5);
	ASSERT_UEQ(st.unmatched, 2);
	ASSERT_UEQ(st.nodes, 3);
	ASSERT_UEQ(st.metrics, 6);
	ASSERT_UEQ(st.summed, 4);
	ASSERT_UEQ(st.values, 25);
	ASSERT_UEQ(st.values_missing, 0);
	ASSERT_UEQ(st.profile_launches, 5);
	ASSERT_UEQ(st.profile_unmatched, 0);
	ASSERT_UEQ(st.split_kernels, 0);
	ASSERT_UEQ(st.by_base_name, 0);

	run_add = node(t, "main.py:run@10", "add_kernel");
	tail_add = node(t, "main.py:tail@20", "add_kernel");
	run_mm = node(t, "main.py:run@10", "matmul_kernel");
	ASSERT_EQ(fp_ncu_report_launch(r, 0)->node, run_add);
	ASSERT_EQ(fp_ncu_report_launch(r, 1)->node, tail_add);
	ASSERT_EQ(fp_ncu_report_launch(r, 3)->node, run_add);
	ASSERT_DEQ(val(t, run_add, READ, false), 2 * 16777216.0);
	ASSERT_DEQ(val(t, run_add, TIME, false), 22000);
	ASSERT_DEQ(val(t, run_add, "ncu:launches", false), 2);
	ASSERT_NEAR(val(t, run_add, SM, false), (20 * 10000.0 + 30 * 12000.0) / 22000, 1e-12);
	ASSERT_DEQ(val(t, run_add, REGS, false), 16);
	ASSERT_DEQ(val(t, tail_add, READ, false), 65536);
	ASSERT_DEQ(val(t, tail_add, SM, false), 5);
	ASSERT_DEQ(val(t, run_mm, READ, false), 2 * 1048576.0);
	ASSERT_NEAR(val(t, run_mm, SM, false), 72.5, 1e-12);
	ASSERT_DEQ(val(t, run_mm, REGS, false), 168);
	/* The profile's own metrics are untouched, and sums propagate to parents. */
	ASSERT_DEQ(val(t, run_add, "count", false), 2);
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(val(t, FP_CALLTREE_ROOT, READ, true), 2 * 16777216.0 + 65536 + 2 * 1048576.0);
	ASSERT_DEQ(val(t, FP_CALLTREE_ROOT, "ncu:launches", true), 5);
	ASSERT(isnan(val(t, FP_CALLTREE_ROOT, SM, false))); /* means stay on kernel nodes */

	ASSERT_NOT_NULL(fp_ncu_report_launch(r, 5)->unmatched);
	ASSERT(strstr(fp_ncu_report_launch(r, 5)->unmatched, "no kernel node named 'void at::") !=
	       NULL);
	ASSERT_EQ(fp_ncu_report_launch(r, 5)->node, FP_CALLTREE_NONE);
	ASSERT_STREQ(fp_ncu_report_launch(r, 6)->unmatched,
		     "surplus launch: the profile has 2 launches of 'matmul_kernel', all already "
		     "matched");
	/* A second import would double every sum: refused. */
	ASSERT_EQ(fp_ncu_attach(r, t, o, &st, &d), FP_ESTATE);
	fp_ncu_report_free(r);
	r = report("ncu/raw-base.csv");
	ASSERT_EQ(fp_ncu_attach(r, t, NULL, &st, &d), FP_ESTATE);
	ASSERT(strstr(d.msg, "already has Nsight Compute metrics") != NULL);
	fp_ncu_report_free(r);
	fp_ncu_order_free(o);
	fp_calltree_free(t);
}

TEST(ncu_attach_by_counts_without_trace)
{
	struct fp_calltree *t = demo_tree();
	struct fp_ncu_report *r = report("ncu/raw-base.csv");
	struct fp_ncu_attach_stats st;
	struct fp_diag d;
	uint32_t run_add, tail_add;

	ASSERT_OK(fp_ncu_attach(r, t, NULL, &st, &d));
	ASSERT(!st.used_trace);
	ASSERT_UEQ(st.matched, 5);
	ASSERT_UEQ(st.split_kernels, 1); /* add_kernel has two call sites */
	run_add = node(t, "main.py:run@10", "add_kernel");
	tail_add = node(t, "main.py:tail@20", "add_kernel");
	/* Tree order: run@10 before tail@20; run's add takes the first two add launches. */
	ASSERT_EQ(fp_ncu_report_launch(r, 1)->node, run_add);
	ASSERT_EQ(fp_ncu_report_launch(r, 3)->node, tail_add);
	ASSERT_DEQ(val(t, run_add, READ, false), 16777216.0 + 65536);
	ASSERT_DEQ(val(t, run_add, TIME, false), 12000);
	ASSERT_NEAR(val(t, run_add, SM, false), (20 * 10000.0 + 5 * 2000.0) / 12000, 1e-12);
	ASSERT_DEQ(val(t, tail_add, SM, false), 30);
	fp_ncu_report_free(r);
	fp_calltree_free(t);
}

TEST(ncu_attach_grid_check_with_trace)
{
	/* Trace order of add_kernel: run (4096), tail (16), run (4096). */
	struct fp_calltree *t = demo_tree();
	struct fp_ncu_order *o = demo_order(t);
	struct fp_ncu_report *r =
		report_str("\"ID\",\"Kernel Name\",\"Grid Size\",\"gpu__time_duration.sum\"\n"
			   "\"\",\"\",\"\",\"nsecond\"\n"
			   "\"0\",\"add_kernel\",\"(8, 1, 1)\",\"1\"\n"
			   "\"1\",\"add_kernel\",\"(16, 1, 1)\",\"2\"\n"
			   "\"2\",\"add_kernel\",\"(4096, 1, 1)\",\"4\"\n"
			   "\"3\",\"add_kernel\",\"(4096, 1, 1)\",\"8\"\n");
	struct fp_ncu_attach_stats st;
	struct fp_diag d;
	uint32_t run_add = node(t, "main.py:run@10", "add_kernel");
	uint32_t tail_add = node(t, "main.py:tail@20", "add_kernel");

	ASSERT_OK(fp_ncu_attach(r, t, o, &st, &d));
	ASSERT_STREQ(fp_ncu_report_launch(r, 0)->unmatched,
		     "grid (8, 1, 1) matches none of the 3 remaining profile launches of "
		     "'add_kernel'");
	/* The 16-block launch skips the first run/add launch, which then gets no ncu data. */
	ASSERT_EQ(fp_ncu_report_launch(r, 1)->node, tail_add);
	ASSERT_EQ(fp_ncu_report_launch(r, 2)->node, run_add);
	ASSERT_STREQ(fp_ncu_report_launch(r, 3)->unmatched,
		     "surplus launch: the profile has 3 launches of 'add_kernel', all already "
		     "matched");
	ASSERT_UEQ(st.matched, 2);
	ASSERT_UEQ(st.profile_unmatched, 3); /* run/add once, both matmul launches */
	ASSERT_DEQ(val(t, run_add, TIME, false), 4);
	ASSERT_DEQ(val(t, tail_add, TIME, false), 2);
	fp_ncu_report_free(r);
	fp_ncu_order_free(o);
	fp_calltree_free(t);
}

TEST(ncu_attach_unusable_trace_falls_back)
{
	struct fp_calltree *t = demo_tree();
	struct fp_ncu_order *o = NULL;
	struct fp_ncu_report *r = report("ncu/raw-base.csv");
	struct fp_ncu_attach_stats st;
	struct fp_diag d;
	static const char dropped[] = "{\"otherData\":{\"dropped_records\":3},\"traceEvents\":[]}";
	static const char short_trace[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"add_kernel\","
		"\"ts\":1,\"args\":{\"call_stack\":[\"main.py:run@10\"]}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gone\",\"ts\":2,"
		"\"args\":{\"call_stack\":[]}},"
		"{\"ph\":\"X\",\"cat\":\"scope\",\"name\":\"s\",\"ts\":2,\"args\":{}}]}";

	ASSERT_OK(fp_ncu_order_from_trace(t, dropped, sizeof(dropped) - 1, &o, &d));
	ASSERT_OK(fp_ncu_attach(r, t, o, &st, &d));
	ASSERT(!st.used_trace);
	ASSERT_STREQ(st.order_note, "the trace dropped 3 records");
	fp_ncu_order_free(o);
	fp_ncu_report_free(r);
	fp_calltree_free(t);

	t = demo_tree();
	r = report("ncu/raw-base.csv");
	ASSERT_OK(fp_ncu_order_from_trace(t, short_trace, sizeof(short_trace) - 1, &o, &d));
	ASSERT_EQ(fp_ncu_order_count(o), 1);
	ASSERT_EQ(fp_ncu_order_unresolved(o), 1);
	ASSERT_OK(fp_ncu_attach(r, t, o, &st, &d));
	ASSERT(!st.used_trace);
	ASSERT_STREQ(st.order_note, "1 trace kernel events are not in the profile");
	fp_ncu_order_free(o);
	fp_ncu_report_free(r);
	fp_calltree_free(t);

	t = demo_tree();
	ASSERT_EQ(fp_ncu_order_from_trace(t, "[1,2]x", 6, &o, &d), FP_EFORMAT);
	ASSERT_EQ(fp_ncu_order_from_trace(t, "{\"a\":1}", 7, &o, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "traceEvents") != NULL);
	fp_calltree_free(t);
}

TEST(ncu_attach_base_names_and_no_kernels)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp_ncu_report *r;
	struct fp_ncu_attach_stats st;
	struct fp_diag d;
	uint32_t f, n, cnt;
	static const char *const names[] = {"my_kernel", "twin(int)", "twin(float)"};
	size_t i;

	ASSERT_OK(fp_calltree_metric_auto(t, "count", 5, &cnt));
	for (i = 0; i < 3; i++) {
		ASSERT_OK(fp_calltree_intern(t, names[i], strlen(names[i]), &f));
		ASSERT_OK(fp_calltree_add_path(t, &f, 1, &n));
		ASSERT_OK(fp_calltree_add_metric(t, n, cnt, 1));
	}
	r = report_str("\"ID\",\"Kernel Name\",\"x__y.sum\"\n"
		       "\"0\",\"void my_kernel(float*, int)\",\"1\"\n"
		       "\"1\",\"void twin(double)\",\"1\"\n"
		       "\"2\",\"twin(int)\",\"1\"\n");
	ASSERT_OK(fp_ncu_attach(r, t, NULL, &st, &d));
	ASSERT_UEQ(st.by_base_name, 1);
	ASSERT_UEQ(st.matched, 2);
	ASSERT_STREQ(fp_ncu_report_launch(r, 1)->unmatched,
		     "no kernel node named 'void twin(double)' in the profile");
	ASSERT_DEQ(val(t, 1, "ncu:x__y.sum", false), 1);
	fp_ncu_report_free(r);
	fp_calltree_free(t);

	/* A tree without any "count" has no kernel node. */
	t = fp_calltree_new(NULL);
	r = report_str("\"ID\",\"Kernel Name\"\n\"0\",\"k\"\n");
	ASSERT_OK(fp_ncu_attach(r, t, NULL, &st, &d));
	ASSERT_UEQ(st.unmatched, 1);
	ASSERT_UEQ(st.metrics, 0);
	fp_ncu_report_free(r);
	fp_calltree_free(t);
}

TEST(ncu_attach_means_without_durations)
{
	/* No duration column: means weigh each launch equally; a merged (fractional) count is
	 * rounded. */
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp_ncu_report *r = report_str(
		"\"ID\",\"Kernel Name\",\"a__hit.pct\",\"b__ops.sum\"\n"
		"\"\",\"\",\"%\",\"\"\n"
		"\"0\",\"k\",\"10\",\"1\"\n\"1\",\"k\",\"40\",\"n/a\"\n\"2\",\"k\",\"n/a\",\"5\"\n");
	struct fp_ncu_attach_stats st;
	struct fp_diag d;
	uint32_t f, n, cnt;

	ASSERT_OK(fp_calltree_metric_auto(t, "count", 5, &cnt));
	ASSERT_OK(fp_calltree_intern(t, "k", 1, &f));
	ASSERT_OK(fp_calltree_add_path(t, &f, 1, &n));
	ASSERT_OK(fp_calltree_add_metric(t, n, cnt, 2.6));
	ASSERT_OK(fp_ncu_attach(r, t, NULL, &st, &d));
	ASSERT_UEQ(st.matched, 3);
	ASSERT_UEQ(st.values, 4);
	ASSERT_UEQ(st.values_missing, 2);
	ASSERT_DEQ(val(t, n, "ncu:a__hit.pct (%) (pty)", false), 25);
	ASSERT_DEQ(val(t, n, "ncu:b__ops.sum", false), 6);
	fp_ncu_report_free(r);
	fp_calltree_free(t);
}

/* Write the vendor document to memory and parse it back. */
static struct fp_json_doc *vendor_doc(const struct fp_ncu_report *r, const struct fp_calltree *t,
				      const struct fp_ncu_vendor_info *info)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, FP_JSONW_PRETTY);
	ASSERT_NOT_NULL(w);
	ASSERT_OK(fp_ncu_write_vendor(r, t, info, w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	if (fp_json_parse(sb.buf, sb.len, NULL, &doc, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "vendor JSON does not parse: %s", d.msg);
	fp_strbuf_release(&sb);
	return doc;
}

static const char *str(const struct fp_json_value *v)
{
	const char *s = fp_json_string(v, NULL);

	return s ? s : "(not a string)";
}

static int64_t num(const struct fp_json_value *v)
{
	int64_t i = -999;

	fp_json_int64(v, &i);
	return i;
}

TEST(ncu_attach_vendor_json)
{
	struct fp_calltree *t = demo_tree();
	struct fp_ncu_order *o = demo_order(t);
	struct fp_ncu_report *r = report("ncu/raw-base.csv");
	struct fp_ncu_vendor_info info = {"raw-base.csv", "out.hatchet", "ncu-demo.trace"};
	const struct fp_json_value *root, *v, *m;
	struct fp_json_doc *doc;
	struct fp_diag d;
	char path[64];
	size_t i;
	bool seen_sum = false, seen_mean = false;

	ASSERT_OK(fp_ncu_attach(r, t, o, NULL, &d));
	doc = vendor_doc(r, t, &info);
	root = fp_json_root(doc);
	ASSERT_STREQ(str(fp_json_get(root, "format")), "flagprism-vendor");
	ASSERT_EQ(num(fp_json_get(root, "format_version")), 1);
	ASSERT_STREQ(str(fp_json_get(root, "vendor")), "nvidia-ncu");
	ASSERT_STREQ(str(fp_json_get(root, "source")), "raw-base.csv");
	ASSERT_STREQ(str(fp_json_get(root, "profile")), "out.hatchet");
	ASSERT_STREQ(str(fp_json_get(root, "trace")), "ncu-demo.trace");
	ASSERT_STREQ(str(fp_json_get(root, "page")), "raw");
	v = fp_json_get(root, "matching");
	ASSERT_STREQ(str(fp_json_get(v, "order")), "trace");
	ASSERT_EQ(num(fp_json_get(v, "matched")), 5);
	ASSERT_EQ(num(fp_json_get(v, "unmatched")), 2);

	/* Records: every CSV row, verbatim. */
	v = fp_json_get(root, "records");
	ASSERT_EQ(fp_json_len(v), 9);
	ASSERT_STREQ(str(fp_json_get(fp_json_at(v, 0), "kind")), "header");
	ASSERT_STREQ(str(fp_json_at(fp_json_get(fp_json_at(v, 0), "fields"), 4)), "Kernel Name");
	ASSERT_STREQ(str(fp_json_get(fp_json_at(v, 1), "kind")), "units");
	m = fp_json_get(fp_json_at(v, 2), "values");
	ASSERT_STREQ(str(fp_json_get(m, "Kernel Name")), "add_kernel");
	ASSERT_STREQ(str(fp_json_get(m, "dram__bytes_read.sum")), "16,777,216");
	ASSERT_STREQ(str(fp_json_get(m, "Grid Size")), "(4096, 1, 1)");
	ASSERT_EQ(num(fp_json_get(fp_json_at(v, 2), "launch")), 0);
	ASSERT_EQ(num(fp_json_get(fp_json_at(v, 2), "line")), 12);

	/* Unmatched launches with their record and reason. */
	v = fp_json_get(root, "unmatched");
	ASSERT_EQ(fp_json_len(v), 2);
	ASSERT_EQ(num(fp_json_get(fp_json_at(v, 0), "launch")), 5);
	ASSERT_EQ(num(fp_json_get(fp_json_at(v, 0), "record")), 7);
	ASSERT(strstr(str(fp_json_get(fp_json_at(v, 0), "reason")), "no kernel node") != NULL);
	ASSERT(strstr(str(fp_json_get(fp_json_at(v, 1), "reason")), "surplus") != NULL);
	ASSERT_EQ(fp_json_len(fp_json_get(root, "profile_launches_without_record")), 0);

	/* Launches carry their node path below ROOT. */
	v = fp_json_at(fp_json_get(root, "launches"), 1);
	ASSERT_STREQ(str(fp_json_at(fp_json_get(v, "node"), 0)), "main.py:tail@20");
	ASSERT_STREQ(str(fp_json_at(fp_json_get(v, "node"), 1)), "add_kernel");
	ASSERT_EQ(num(fp_json_at(fp_json_get(v, "grid"), 0)), 16);
	ASSERT_EQ(num(fp_json_get(v, "duration_ns")), 2000);
	ASSERT_EQ(fp_json_type(fp_json_get(fp_json_at(fp_json_get(root, "launches"), 5), "node")),
		  FP_JSON_NULL);

	/* How each tree metric was aggregated. */
	v = fp_json_get(root, "metrics");
	ASSERT_EQ(fp_json_len(v), 6);
	for (i = 0; i < fp_json_len(v); i++) {
		m = fp_json_at(v, i);
		if (strcmp(str(fp_json_get(m, "tree_name")), READ) == 0) {
			ASSERT_STREQ(str(fp_json_get(m, "aggregation")), "sum");
			ASSERT_EQ(fp_json_type(fp_json_get(m, "weight")), FP_JSON_NULL);
			ASSERT_EQ(num(fp_json_get(m, "values")), 5);
			seen_sum = true;
		}
		if (strcmp(str(fp_json_get(m, "tree_name")), SM) == 0) {
			ASSERT_STREQ(str(fp_json_get(m, "aggregation")), "mean");
			ASSERT_STREQ(str(fp_json_get(m, "weight")), "duration");
			seen_mean = true;
		}
	}
	ASSERT(seen_sum && seen_mean);

	v = fp_json_get(root, "degradation_reasons");
	ASSERT_EQ(fp_json_len(v), 1);
	ASSERT_STREQ(str(fp_json_get(fp_json_at(v, 0), "kind")), "metric_not_available");
	ASSERT_EQ(num(fp_json_get(fp_json_at(v, 0), "record")), 7);
	ASSERT_EQ(fp_json_len(fp_json_get(root, "messages")), 9);
	ASSERT_EQ(num(fp_json_get(root, "messages_seen")), 9);
	fp_json_doc_free(doc);

	/* The same through a file. */
	snprintf(path, sizeof(path), "/tmp/fp-ncu-test-%ld.vendor.json", (long)getpid());
	ASSERT_OK(fp_ncu_save_vendor(r, t, &info, path, 0, &d));
	ASSERT_OK(fp_json_parse_file(path, NULL, &doc, &d));
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_root(doc), "records")), 9);
	fp_json_doc_free(doc);
	remove(path);
	ASSERT_EQ(fp_ncu_save_vendor(r, t, &info, "/nonexistent/dir/x.json", 0, &d), FP_EIO);

	fp_ncu_report_free(r);
	fp_ncu_order_free(o);
	fp_calltree_free(t);
}

TEST(ncu_attach_vendor_json_unattached_report)
{
	/* Nothing collected: the vendor file still says why, and bad rows come as lists. */
	struct fp_ncu_report *r = report("ncu/no-permission.csv");
	struct fp_json_doc *doc = vendor_doc(r, NULL, NULL);
	const struct fp_json_value *root = fp_json_root(doc), *v;

	ASSERT_EQ(fp_json_type(fp_json_get(root, "matching")), FP_JSON_NULL);
	ASSERT_EQ(fp_json_type(fp_json_get(root, "source")), FP_JSON_NULL);
	ASSERT_STREQ(str(fp_json_get(root, "page")), "none");
	v = fp_json_get(root, "degradation_reasons");
	ASSERT_STREQ(str(fp_json_get(fp_json_at(v, 0), "kind")), "counter_permission");
	ASSERT_EQ(fp_json_len(fp_json_get(root, "records")), 0);
	fp_json_doc_free(doc);
	fp_ncu_report_free(r);

	r = report_str("\"x\"\n\"ID\",\"Kernel Name\",\"a__b.sum\"\n\"0\",\"k\"\n");
	doc = vendor_doc(r, NULL, NULL);
	v = fp_json_get(fp_json_root(doc), "records");
	ASSERT_STREQ(str(fp_json_get(fp_json_at(v, 0), "kind")), "other");
	ASSERT_STREQ(str(fp_json_at(fp_json_get(fp_json_at(v, 0), "fields"), 0)), "x");
	ASSERT_STREQ(str(fp_json_get(fp_json_at(v, 2), "kind")), "bad");
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_at(v, 2), "fields")), 2);
	fp_json_doc_free(doc);
	fp_ncu_report_free(r);
}

TEST(ncu_attach_hatchet_round_trip)
{
	/* The attached tree writes and reads back with the same kinds and values. */
	struct fp_calltree *t = demo_tree(), *t2 = NULL;
	struct fp_ncu_report *r = report("ncu/details.csv");
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	struct fp_diag d;
	enum fp_metric_kind kind;
	uint32_t m, run_add;

	ASSERT_OK(fp_ncu_attach(r, t, NULL, NULL, &d));
	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_calltree_write_hatchet(t, w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	ASSERT_OK(fp_calltree_parse_hatchet(sb.buf, sb.len, NULL, 0, &t2, NULL, &d));
	ASSERT(fp_calltree_equal(t, t2, 0, &d));
	run_add = node(t2, "main.py:run@10", "add_kernel");
	ASSERT_NEAR(val(t2, run_add, "ncu:GPU Speed Of Light Throughput:Duration (nsecond)", false),
		    10020, 1e-6);
	ASSERT_DEQ(val(t2, run_add, "ncu:GPU Speed Of Light Throughput:DRAM Throughput (%) (pty)",
		       false),
		   87.45);
	ASSERT_OK(fp_calltree_metric_find(t2, "ncu:dram__bytes_read.sum (byte)", 31, &m));
	fp_calltree_metric_name(t2, m, NULL, &kind);
	ASSERT_EQ(kind, FP_METRIC_INCLUSIVE);
	ASSERT_OK(fp_calltree_metric_find(
		t2, "ncu:GPU Speed Of Light Throughput:L1-TEX Cache Throughput (%) (pty)", 67, &m));
	fp_calltree_metric_name(t2, m, NULL, &kind);
	ASSERT_EQ(kind, FP_METRIC_PROPERTY);
	fp_strbuf_release(&sb);
	fp_calltree_free(t2);
	fp_ncu_report_free(r);
	fp_calltree_free(t);
}

TEST(ncu_attach_command_argv)
{
	static const char *const target[] = {"python3", "-c", "print(1)"};
	struct fp_ncu_command c;
	char **argv = NULL;
	size_t argc = 0, i;
	static const char *const want[] = {"ncu",
					   "--csv",
					   "--page",
					   "raw",
					   "--print-units",
					   "base",
					   "--clock-control",
					   "none",
					   "--target-processes",
					   "all",
					   "--metrics",
					   FP_NCU_DEFAULT_METRICS,
					   "--log-file",
					   "out.csv",
					   "python3",
					   "-c",
					   "print(1)"};
	static const char *const want2[] = {"/opt/ncu",
					    "--csv",
					    "--page",
					    "details",
					    "--print-units",
					    "base",
					    "--clock-control",
					    "base",
					    "--target-processes",
					    "all",
					    "--section",
					    "SpeedOfLight",
					    "--section",
					    "Occupancy",
					    "--set",
					    "basic",
					    "--kernel-name",
					    "regex:add",
					    "--launch-skip",
					    "3",
					    "--launch-count",
					    "10",
					    "--replay-mode",
					    "application",
					    "--print-kernel-base",
					    "function",
					    "--log-file",
					    "o.csv",
					    "python3",
					    "-c",
					    "print(1)"};

	memset(&c, 0, sizeof(c));
	c.log_file = "out.csv";
	ASSERT_OK(fp_ncu_command_argv(&c, target, 3, &argv, &argc));
	ASSERT_EQ(argc, N_OF(want));
	for (i = 0; i < argc; i++)
		ASSERT_STREQ(argv[i], want[i]);
	ASSERT_NULL(argv[argc]);
	fp_free(argv);

	c.ncu = "/opt/ncu";
	c.log_file = "o.csv";
	c.metrics = "";
	c.sections = "SpeedOfLight,,Occupancy";
	c.set = "basic";
	c.kernel_name = "regex:add";
	c.launch_skip = 3;
	c.launch_count = 10;
	c.replay_mode = "application";
	c.clock_control = "base";
	c.print_kernel_base = "function";
	c.details_page = true;
	ASSERT_OK(fp_ncu_command_argv(&c, target, 3, &argv, &argc));
	ASSERT_EQ(argc, N_OF(want2));
	for (i = 0; i < argc; i++)
		ASSERT_STREQ(argv[i], want2[i]);
	fp_free(argv);

	c.log_file = NULL;
	ASSERT_EQ(fp_ncu_command_argv(&c, target, 3, &argv, &argc), FP_EINVAL);
	c.log_file = "x";
	ASSERT_EQ(fp_ncu_command_argv(&c, target, 0, &argv, &argc), FP_EINVAL);
	{
		static const char *const dash[] = {"--version"};

		ASSERT_EQ(fp_ncu_command_argv(&c, dash, 1, &argv, &argc), FP_EINVAL);
	}
}

TEST(ncu_attach_oom_sweep)
{
	long fail_at;

	for (fail_at = 0;; fail_at++) {
		struct fp_calltree *t;
		struct fp_ncu_order *o;
		struct fp_ncu_report *r;
		struct fp_strbuf sb;
		struct fp_jsonw *w;
		struct fp_diag d;
		int rc;

		/* Inputs come from the counting allocator too (blocks must not change hands). */
		fpt_oom_install(-1);
		t = demo_tree();
		o = demo_order(t);
		r = report("ncu/raw-base.csv");
		fp_strbuf_init(&sb, 0);
		fpt_oom_install(fail_at);
		rc = fp_ncu_attach(r, t, o, NULL, &d);
		if (rc == FP_OK) {
			w = fp_jsonw_new_strbuf(&sb, 0);
			rc = w ? fp_ncu_write_vendor(r, t, NULL, w) : FP_ENOMEM;
			if (rc == FP_OK)
				rc = fp_jsonw_finish(w);
			fp_jsonw_free(w);
		}
		fp_strbuf_release(&sb);
		fp_ncu_report_free(r);
		fp_ncu_order_free(o);
		fp_calltree_free(t);
		fpt_oom_uninstall();
		if (rc == FP_OK)
			break;
		ASSERT_EQ(rc, FP_ENOMEM);
	}
	ASSERT_GT(fail_at, 10);
}
