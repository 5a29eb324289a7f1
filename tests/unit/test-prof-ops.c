/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for whole-tree operations: merge (mean/min/max), diff (b - a), equality messages,
 * and the OOM sweep over merge and diff. */
#include <flagprism/alloc.h>
#include <flagprism/calltree.h>

#include "test.h"

static uint32_t at(struct fp_calltree *t, const char *a, const char *b)
{
	uint32_t fr[2], node;
	size_t n = 0;

	if (a)
		ASSERT_OK(fp_calltree_intern(t, a, strlen(a), &fr[n++]));
	if (b)
		ASSERT_OK(fp_calltree_intern(t, b, strlen(b), &fr[n++]));
	ASSERT_OK(fp_calltree_add_path(t, fr, n, &node));
	return node;
}

static void put(struct fp_calltree *t, const char *a, const char *b, const char *metric, double v)
{
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_auto(t, metric, strlen(metric), &m));
	ASSERT_OK(fp_calltree_add_metric(t, at(t, a, b), m, v));
}

/* Value of `metric` at a/b; `want_total` picks the inclusive total. NAN if absent. */
static double val(struct fp_calltree *t, const char *a, const char *b, const char *metric,
		  int want_total)
{
	struct fp_calltree_value v;
	uint32_t m, fr[2], node = FP_CALLTREE_ROOT;

	if (fp_calltree_metric_find(t, metric, strlen(metric), &m))
		return -12345;
	if (a) {
		ASSERT_OK(fp_calltree_intern(t, a, strlen(a), &fr[0]));
		if (fp_calltree_child_find(t, node, fr[0], &node))
			return -12345;
	}
	if (b) {
		ASSERT_OK(fp_calltree_intern(t, b, strlen(b), &fr[1]));
		if (fp_calltree_child_find(t, node, fr[1], &node))
			return -12345;
	}
	if (fp_calltree_get(t, node, m, &v))
		return -12345;
	return want_total ? v.total : v.self;
}

static void make_runs(struct fp_calltree **a, struct fp_calltree **b)
{
	uint32_t m;

	*a = fp_calltree_new(NULL);
	*b = fp_calltree_new(NULL);
	put(*a, "s", "k1", "time (ns)", 100);
	put(*a, "s", "k2", "time (ns)", 10);
	put(*a, "s", NULL, "cpu_time (ns)(exc)", 4);
	put(*a, "only_a", NULL, "time (ns)", 6);
	put(*b, "s", "k1", "time (ns)", 300);
	put(*b, "s", NULL, "cpu_time (ns)(exc)", 8);
	put(*b, "only_b", NULL, "time (ns)", 2);
	ASSERT_OK(fp_calltree_metric_auto(*a, "device_type", 11, &m));
	ASSERT_OK(fp_calltree_set_string(*a, at(*a, "s", "k1"), m, "CUDA", 4));
	ASSERT_OK(fp_calltree_metric_auto(*b, "device_type", 11, &m));
	ASSERT_OK(fp_calltree_set_string(*b, at(*b, "s", "k1"), m, "HIP", 3));
	ASSERT_OK(fp_calltree_device_set_str(*a, "CUDA", "0", "arch", "90"));
	ASSERT_OK(fp_calltree_device_set_str(*b, "CUDA", "0", "arch", "80"));
	ASSERT_OK(fp_calltree_device_set(*b, "CUDA", "1", "num_sms", 8));
}

TEST(prof_merge_basic)
{
	struct fp_calltree *a, *b, *o = NULL, *in[2];
	struct fp_calltree_value v;
	struct fp_calltree_device_attr d;
	uint32_t m;

	make_runs(&a, &b);
	in[0] = a;
	in[1] = b;
	ASSERT_OK(fp_calltree_merge(in, 2, &o));

	/* Mean of self values; totals follow. */
	ASSERT_DEQ(val(o, "s", "k1", "time (ns)", 0), 200);
	ASSERT_DEQ(val(o, "s", "k2", "time (ns)", 0), 5);
	ASSERT_DEQ(val(o, "s", NULL, "time (ns)", 1), 205);
	ASSERT_DEQ(val(o, NULL, NULL, "time (ns)", 1), 209);
	/* Min/max of inclusive totals, a missing node counting as 0. */
	ASSERT_DEQ(val(o, "s", "k1", "time (ns) (min)", 0), 100);
	ASSERT_DEQ(val(o, "s", "k1", "time (ns) (max)", 0), 300);
	ASSERT_DEQ(val(o, "s", "k2", "time (ns) (min)", 0), 0);
	ASSERT_DEQ(val(o, "s", "k2", "time (ns) (max)", 0), 10);
	ASSERT_DEQ(val(o, "s", NULL, "time (ns) (min)", 0), 110);
	ASSERT_DEQ(val(o, "s", NULL, "time (ns) (max)", 0), 300);
	ASSERT_DEQ(val(o, NULL, NULL, "time (ns) (max)", 0), 302);
	ASSERT_DEQ(val(o, "only_b", NULL, "time (ns) (min)", 0), 0);
	/* min/max are per node: not propagated. */
	ASSERT_OK(fp_calltree_metric_find(o, "time (ns) (min)", 15, &m));
	ASSERT_OK(fp_calltree_get(o, FP_CALLTREE_ROOT, m, &v));
	ASSERT_EQ(v.kind, FP_METRIC_MIN);
	ASSERT_DEQ(v.self, v.total);
	/* Exclusive: mean and min/max of self values. */
	ASSERT_DEQ(val(o, "s", NULL, "cpu_time (ns)(exc)", 0), 6);
	ASSERT_DEQ(val(o, "s", NULL, "cpu_time (ns)(exc) (min)", 0), 4);
	ASSERT_DEQ(val(o, "s", NULL, "cpu_time (ns)(exc) (max)", 0), 8);
	ASSERT_DEQ(val(o, NULL, NULL, "cpu_time (ns)(exc)", 1), -12345);
	/* Properties: first input wins; devices: union, first wins. */
	ASSERT_OK(fp_calltree_metric_find(o, "device_type", 11, &m));
	ASSERT_OK(fp_calltree_get(o, at(o, "s", "k1"), m, &v));
	ASSERT_STREQ(v.str, "CUDA");
	ASSERT_EQ(fp_calltree_device_count(o), 2);
	ASSERT_OK(fp_calltree_device_at(o, 0, &d));
	ASSERT_STREQ(d.str, "90");
	fp_calltree_free(o);

	/* --op sum: the whole job; min/max unchanged; the root says which */
	ASSERT_OK(fp_calltree_merge_op(in, 2, FP_MERGE_SUM, &o));
	ASSERT_DEQ(val(o, "s", "k1", "time (ns)", 0), 400);
	ASSERT_DEQ(val(o, NULL, NULL, "time (ns)", 1), 418);
	ASSERT_DEQ(val(o, "s", NULL, "cpu_time (ns)(exc)", 0), 12);
	ASSERT_DEQ(val(o, "s", "k1", "time (ns) (max)", 0), 300);
	ASSERT_OK(fp_calltree_metric_find(o, "merged", 6, &m));
	ASSERT_OK(fp_calltree_get(o, FP_CALLTREE_ROOT, m, &v));
	ASSERT_STREQ(v.str, "sum of 2 profiles");
	fp_calltree_free(o);
	ASSERT_EQ(fp_calltree_merge_op(in, 2, (enum fp_merge_op)9, &o), FP_EINVAL);

	/* Merging one tree gives the same tree plus min = max = its values. */
	ASSERT_OK(fp_calltree_merge(in, 1, &o));
	ASSERT_DEQ(val(o, "s", NULL, "time (ns)", 1), 110);
	ASSERT_DEQ(val(o, "s", NULL, "time (ns) (min)", 0), 110);
	fp_calltree_free(o);
	ASSERT_EQ(fp_calltree_merge(in, 0, &o), FP_EINVAL);

	/* A kind clash between inputs is refused. */
	put(b, "x", NULL, "lat (min)", 1);
	{
		struct fp_calltree *c = fp_calltree_new(NULL);
		uint32_t mm;

		ASSERT_OK(fp_calltree_metric(c, "lat (min)", 9, FP_METRIC_INCLUSIVE, &mm));
		in[0] = c;
		ASSERT_EQ(fp_calltree_merge(in, 2, &o), FP_EINVAL);
		fp_calltree_free(c);
	}
	fp_calltree_free(a);
	fp_calltree_free(b);
}

TEST(prof_diff_basic)
{
	struct fp_calltree *a, *b, *o = NULL;
	struct fp_calltree_value v;
	uint32_t m;

	make_runs(&a, &b);
	ASSERT_OK(fp_calltree_diff(a, b, &o));
	ASSERT_DEQ(val(o, "s", "k1", "time (ns)", 0), 200);
	ASSERT_DEQ(val(o, "s", "k2", "time (ns)", 0), -10);
	ASSERT_DEQ(val(o, "s", NULL, "time (ns)", 1), 190);
	ASSERT_DEQ(val(o, "only_a", NULL, "time (ns)", 0), -6);
	ASSERT_DEQ(val(o, "only_b", NULL, "time (ns)", 0), 2);
	/* total(b) - total(a) at the root: 302 - 116. */
	ASSERT_DEQ(val(o, NULL, NULL, "time (ns)", 1), 186);
	ASSERT_DEQ(val(o, "s", NULL, "cpu_time (ns)(exc)", 0), 4);
	ASSERT_OK(fp_calltree_metric_find(o, "device_type", 11, &m));
	ASSERT_OK(fp_calltree_get(o, at(o, "s", "k1"), m, &v));
	ASSERT_STREQ(v.str, "HIP");
	ASSERT_EQ(fp_calltree_device_count(o), 2);
	fp_calltree_free(o);

	/* a - a is all zeros over the same shape. */
	ASSERT_OK(fp_calltree_diff(a, a, &o));
	ASSERT_DEQ(val(o, "s", "k1", "time (ns)", 0), 0);
	ASSERT_EQ(fp_calltree_node_count(o), fp_calltree_node_count(a));
	fp_calltree_free(o);
	fp_calltree_free(a);
	fp_calltree_free(b);
}

TEST(prof_equal_messages)
{
	struct fp_calltree *a, *b;
	struct fp_diag why;

	make_runs(&a, &b);
	ASSERT(fp_calltree_equal(a, a, 0, NULL));
	ASSERT(!fp_calltree_equal(a, b, 0, &why));
	ASSERT(strstr(why.msg, "device") != NULL);
	fp_calltree_free(b);

	b = fp_calltree_new(NULL);
	ASSERT_OK(fp_calltree_device_set_str(b, "CUDA", "0", "arch", "90"));
	put(b, "s", "k1", "time (ns)", 100);
	put(b, "s", "k2", "time (ns)", 10);
	put(b, "s", NULL, "cpu_time (ns)(exc)", 4);
	put(b, "only_a", NULL, "time (ns)", 6);
	{
		uint32_t m;

		ASSERT_OK(fp_calltree_metric_auto(b, "device_type", 11, &m));
		ASSERT_OK(fp_calltree_set_string(b, at(b, "s", "k1"), m, "CUDA", 4));
	}
	ASSERT(fp_calltree_equal(a, b, 0, &why));
	put(b, "s", "k2", "time (ns)", 1e-9);
	ASSERT(fp_calltree_equal(a, b, 1e-9, NULL));
	ASSERT(!fp_calltree_equal(a, b, 0, &why));
	ASSERT(strstr(why.msg, "ROOT/s/k2: metric 'time (ns)' 10 vs") != NULL);
	put(b, "s", "k3", "time (ns)", 1);
	ASSERT(!fp_calltree_equal(a, b, 1, &why));
	ASSERT(strstr(why.msg, "ROOT/s: 2 children vs 3") != NULL);
	fp_calltree_free(a);
	fp_calltree_free(b);
}

/* ab: the two trees, struct fp_calltree *[2]. */
static int merge_and_diff(void *ab)
{
	struct fp_calltree **in = ab, *o = NULL, *d = NULL;
	int rc = fp_calltree_merge(in, 2, &o);

	if (!rc)
		rc = fp_calltree_diff(in[0], in[1], &d);
	fp_calltree_free(o);
	fp_calltree_free(d);
	return rc;
}

/* A metric name longer than any fixed buffer still gets its " (min)" and " (max)" partners. */
TEST(prof_merge_long_metric_name)
{
	struct fp_calltree *in[2], *o = NULL;
	struct fp_calltree_value v;
	char name[3000];
	uint32_t m, i;

	memset(name, 'm', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (i = 0; i < 2; i++) {
		in[i] = fp_calltree_new(NULL);
		ASSERT_NOT_NULL(in[i]);
		ASSERT_OK(fp_calltree_metric(in[i], name, strlen(name), FP_METRIC_INCLUSIVE, &m));
		ASSERT_OK(fp_calltree_add_metric(in[i], FP_CALLTREE_ROOT, m, 10.0 * (i + 1)));
	}
	ASSERT_OK(fp_calltree_merge(in, 2, &o));
	{
		char withmax[3010];

		snprintf(withmax, sizeof(withmax), "%s (max)", name);
		ASSERT_OK(fp_calltree_metric_find(o, withmax, strlen(withmax), &m));
		ASSERT_OK(fp_calltree_get(o, FP_CALLTREE_ROOT, m, &v));
		ASSERT_DEQ(v.self, 20);
	}
	fp_calltree_free(o);
	fp_calltree_free(in[0]);
	fp_calltree_free(in[1]);
}

TEST(prof_merge_oom)
{
	struct fp_calltree *ab[2];

	make_runs(&ab[0], &ab[1]);
	ASSERT_OK(fp_calltree_finalize(ab[0]));
	ASSERT_OK(fp_calltree_finalize(ab[1]));
	fpt_oom_sweep(merge_and_diff, ab, 0, 0, NULL);
	fp_calltree_free(ab[0]);
	fp_calltree_free(ab[1]);
}
