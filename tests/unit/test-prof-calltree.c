/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the call tree core: paths, metric kinds, inclusive propagation, limits, devices,
 * and the out-of-memory sweep over building and writing a tree. */
#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "test.h"

static uint32_t frame(struct fp_calltree *t, const char *name)
{
	uint32_t f;

	ASSERT_OK(fp_calltree_intern(t, name, strlen(name), &f));
	return f;
}

static uint32_t path(struct fp_calltree *t, const char *a, const char *b, const char *c)
{
	uint32_t fr[3], node;
	size_t n = 0;

	if (a)
		fr[n++] = frame(t, a);
	if (b)
		fr[n++] = frame(t, b);
	if (c)
		fr[n++] = frame(t, c);
	ASSERT_OK(fp_calltree_add_path(t, fr, n, &node));
	return node;
}

static uint32_t metric(struct fp_calltree *t, const char *name)
{
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_auto(t, name, strlen(name), &m));
	return m;
}

static double total(struct fp_calltree *t, uint32_t node, uint32_t m)
{
	struct fp_calltree_value v;

	ASSERT_OK(fp_calltree_get(t, node, m, &v));
	return v.total;
}

static double self(struct fp_calltree *t, uint32_t node, uint32_t m)
{
	struct fp_calltree_value v;

	ASSERT_OK(fp_calltree_get(t, node, m, &v));
	return v.self;
}

TEST(prof_calltree_paths)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t ab, abc, ab2, b, kids[4], fb;
	size_t len;

	ASSERT_NOT_NULL(t);
	ASSERT_EQ(fp_calltree_node_count(t), 1);
	ASSERT_STREQ(fp_calltree_node_name(t, FP_CALLTREE_ROOT, &len), "ROOT");
	ASSERT_EQ(fp_calltree_node_parent(t, FP_CALLTREE_ROOT), FP_CALLTREE_NONE);

	ab = path(t, "a", "b", NULL);
	abc = path(t, "a", "b", "c");
	ab2 = path(t, "a", "b", NULL);
	ASSERT_EQ(ab, ab2);
	ASSERT_EQ(fp_calltree_node_parent(t, abc), ab);
	ASSERT_EQ(fp_calltree_node_depth(t, abc), 3);
	ASSERT_EQ(fp_calltree_node_count(t), 4);
	/* Children have larger ids than parents. */
	ASSERT_GT(abc, ab);

	/* Creation order vs sorted order. */
	path(t, "z", NULL, NULL);
	b = path(t, "b", NULL, NULL);
	path(t, "ab", NULL, NULL);
	ASSERT_EQ(fp_calltree_node_child_count(t, FP_CALLTREE_ROOT), 4);
	ASSERT_EQ(fp_calltree_sorted_children(t, FP_CALLTREE_ROOT, kids, 2), 4); /* too small */
	ASSERT_EQ(fp_calltree_sorted_children(t, FP_CALLTREE_ROOT, kids, 4), 4);
	ASSERT_STREQ(fp_calltree_node_name(t, kids[0], NULL), "a");
	ASSERT_STREQ(fp_calltree_node_name(t, kids[1], NULL), "ab");
	ASSERT_STREQ(fp_calltree_node_name(t, kids[2], NULL), "b");
	ASSERT_STREQ(fp_calltree_node_name(t, kids[3], NULL), "z");
	ASSERT_STREQ(
		fp_calltree_node_name(t, fp_calltree_node_first_child(t, FP_CALLTREE_ROOT), NULL),
		"a");
	ASSERT_EQ(fp_calltree_node_next_sibling(t, b), kids[1]);

	fb = frame(t, "b");
	ASSERT_OK(fp_calltree_child_find(t, FP_CALLTREE_ROOT, fb, &b));
	ASSERT_EQ(fp_calltree_child_find(t, abc, fb, NULL), FP_ENOENT);
	ASSERT_EQ(fp_calltree_child(t, 999, fb, NULL), FP_EINVAL);
	ASSERT_EQ(fp_calltree_child(t, FP_CALLTREE_ROOT, 999, NULL), FP_EINVAL);
	ASSERT_EQ(fp_calltree_node_frame(t, 999), FP_CALLTREE_NONE);
	ASSERT_NULL(fp_calltree_node_name(t, 999, NULL));

	/* Any bytes are a name, NULs included. */
	{
		uint32_t f1, f2, n1, n2;

		ASSERT_OK(fp_calltree_intern(t, "x\0y", 3, &f1));
		ASSERT_OK(fp_calltree_intern(t, "x", 1, &f2));
		ASSERT_NE(f1, f2);
		ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, f1, &n1));
		ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, f2, &n2));
		ASSERT_NE(n1, n2);
		ASSERT_OK(fp_calltree_set_root_name(t, "top", 3));
		ASSERT_STREQ(fp_calltree_node_name(t, FP_CALLTREE_ROOT, NULL), "top");
	}
	fp_calltree_free(t);
	fp_calltree_free(NULL);
}

TEST(prof_calltree_inclusive)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t time, count, ab, abc, abd, e;

	ab = path(t, "a", "b", NULL);
	abc = path(t, "a", "b", "c");
	abd = path(t, "a", "b", "d");
	e = path(t, "e", NULL, NULL);
	time = metric(t, "time (ns)");
	count = metric(t, "count");

	ASSERT_OK(fp_calltree_add_metric(t, abc, time, 100));
	ASSERT_OK(fp_calltree_add_metric(t, abc, time, 50));
	ASSERT_OK(fp_calltree_add_metric(t, abd, time, 25));
	ASSERT_OK(fp_calltree_add_metric(t, ab, time, 5)); /* a scope's own time */
	ASSERT_OK(fp_calltree_add_metric(t, e, time, 1000));
	ASSERT_OK(fp_calltree_add_metric(t, abc, count, 2));
	ASSERT(!fp_calltree_is_finalized(t));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT(fp_calltree_is_finalized(t));

	ASSERT_DEQ(self(t, abc, time), 150);
	ASSERT_DEQ(total(t, abc, time), 150);
	ASSERT_DEQ(self(t, ab, time), 5);
	ASSERT_DEQ(total(t, ab, time), 180);
	ASSERT_DEQ(total(t, path(t, "a", NULL, NULL), time), 180);
	ASSERT_DEQ(total(t, FP_CALLTREE_ROOT, time), 1180);
	ASSERT_DEQ(self(t, FP_CALLTREE_ROOT, time), 0);
	ASSERT_DEQ(total(t, FP_CALLTREE_ROOT, count), 2);

	/* Finalize again: idempotent. More values: totals follow. */
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(total(t, FP_CALLTREE_ROOT, time), 1180);
	ASSERT_OK(fp_calltree_add_metric(t, abd, time, 20));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(total(t, FP_CALLTREE_ROOT, time), 1200);
	ASSERT_DEQ(total(t, ab, time), 200);
	fp_calltree_free(t);
}

TEST(prof_calltree_kinds)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t exc, pty, mn, mx, dev, typ, a, ab, m;
	struct fp_calltree_value v[8];
	size_t n;

	ASSERT_EQ(fp_calltree_metric_kind_from_name("time (ns)", 9), FP_METRIC_INCLUSIVE);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("cpu_time (ns)(exc)", 18), FP_METRIC_EXCLUSIVE);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("x (pty) ", 8), FP_METRIC_PROPERTY);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("t (ns) (min)", 12), FP_METRIC_MIN);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("t (ns) (max)", 12), FP_METRIC_MAX);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("device_id", 9), FP_METRIC_PROPERTY);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("device_type", 11), FP_METRIC_PROPERTY);
	ASSERT_EQ(fp_calltree_metric_kind_from_name("device_ids", 10), FP_METRIC_INCLUSIVE);

	a = path(t, "a", NULL, NULL);
	ab = path(t, "a", "b", NULL);
	exc = metric(t, "cpu_time (ns)(exc)");
	pty = metric(t, "note (pty)");
	mn = metric(t, "lat (min)");
	mx = metric(t, "lat (max)");
	dev = metric(t, "device_id");
	typ = metric(t, "device_type");

	ASSERT_OK(fp_calltree_add_metric(t, ab, exc, 7));
	ASSERT_OK(fp_calltree_add_metric(t, ab, exc, 3));
	ASSERT_OK(fp_calltree_add_metric(t, ab, pty, 1));
	ASSERT_OK(fp_calltree_add_metric(t, ab, pty, 2));
	ASSERT_OK(fp_calltree_add_metric(t, ab, mn, 5));
	ASSERT_OK(fp_calltree_add_metric(t, ab, mn, -2));
	ASSERT_OK(fp_calltree_add_metric(t, ab, mn, 9));
	ASSERT_OK(fp_calltree_add_metric(t, ab, mx, 5));
	ASSERT_OK(fp_calltree_add_metric(t, ab, mx, 9));
	ASSERT_OK(fp_calltree_add_metric(t, ab, mx, -2));
	ASSERT_OK(fp_calltree_set_string(t, ab, dev, "0", 1));
	ASSERT_OK(fp_calltree_set_string(t, ab, dev, "1", 1));
	ASSERT_OK(fp_calltree_set_string(t, ab, typ, "CUDA", 4));
	ASSERT_OK(fp_calltree_finalize(t));

	ASSERT_DEQ(self(t, ab, exc), 10);
	ASSERT_EQ(fp_calltree_get(t, a, exc, NULL), FP_ENOENT); /* exclusive: not propagated */
	ASSERT_EQ(fp_calltree_get(t, a, pty, NULL), FP_ENOENT);
	ASSERT_EQ(fp_calltree_get(t, a, mn, NULL), FP_ENOENT);
	ASSERT_DEQ(self(t, ab, pty), 2);
	ASSERT_DEQ(self(t, ab, mn), -2);
	ASSERT_DEQ(self(t, ab, mx), 9);

	/* Metrics come back sorted by name. */
	n = fp_calltree_node_metrics(t, ab, v, 8);
	ASSERT_EQ(n, 6);
	ASSERT_STREQ(fp_calltree_metric_name(t, v[0].metric, NULL, NULL), "cpu_time (ns)(exc)");
	ASSERT_STREQ(fp_calltree_metric_name(t, v[1].metric, NULL, NULL), "device_id");
	ASSERT(v[1].is_string);
	ASSERT_STREQ(v[1].str, "1");
	ASSERT_STREQ(v[2].str, "CUDA");
	ASSERT_STREQ(fp_calltree_metric_name(t, v[3].metric, NULL, NULL), "lat (max)");
	ASSERT_STREQ(fp_calltree_metric_name(t, v[5].metric, NULL, NULL), "note (pty)");
	ASSERT_EQ(fp_calltree_node_metrics(t, ab, v, 2), 6);

	/* Kind is fixed by the first registration; strings only for properties. */
	ASSERT_EQ(fp_calltree_metric(t, "lat (min)", 9, FP_METRIC_INCLUSIVE, &m), FP_EINVAL);
	ASSERT_OK(fp_calltree_metric(t, "lat (min)", 9, FP_METRIC_MIN, &m));
	ASSERT_EQ(m, mn);
	ASSERT_EQ(fp_calltree_set_string(t, ab, exc, "x", 1), FP_EINVAL);
	ASSERT_EQ(fp_calltree_add_metric(t, ab, 999, 1), FP_EINVAL);
	ASSERT_EQ(fp_calltree_add_metric(t, 999, exc, 1), FP_EINVAL);
	ASSERT_EQ(fp_calltree_metric_find(t, "nope", 4, &m), FP_ENOENT);
	ASSERT_EQ(fp_calltree_metric_count(t), 6);
	fp_calltree_free(t);
}

TEST(prof_calltree_limits)
{
	struct fp_calltree_limits lim = {.max_nodes = 4, .max_depth = 2, .max_metrics = 2};
	struct fp_calltree *t = fp_calltree_new(&lim);
	uint32_t fr[3], node, m;

	fr[0] = frame(t, "a");
	fr[1] = frame(t, "b");
	fr[2] = frame(t, "c");
	ASSERT_OK(fp_calltree_add_path(t, fr, 2, &node));
	ASSERT_EQ(fp_calltree_add_path(t, fr, 3, &node), FP_ELIMIT); /* depth */
	ASSERT_EQ(fp_calltree_node_count(t), 3);
	ASSERT_OK(fp_calltree_add_path(t, &fr[2], 1, &node));
	ASSERT_EQ(fp_calltree_add_path(t, &fr[1], 1, &node), FP_ELIMIT); /* nodes */
	ASSERT_EQ(fp_calltree_node_count(t), 4);
	/* The failed child left no half-made entry behind. */
	ASSERT_EQ(fp_calltree_child_find(t, FP_CALLTREE_ROOT, fr[1], NULL), FP_ENOENT);
	ASSERT_OK(fp_calltree_metric_auto(t, "x", 1, &m));
	ASSERT_OK(fp_calltree_metric_auto(t, "y", 1, &m));
	ASSERT_EQ(fp_calltree_metric_auto(t, "z", 1, &m), FP_ELIMIT);
	fp_calltree_free(t);
}

TEST(prof_calltree_devices)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp_calltree_device_attr d;

	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "10", "num_sms", 132));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "2", "num_sms", 114));
	ASSERT_OK(fp_calltree_device_set_str(t, "CUDA", "2", "arch", "90"));
	ASSERT_OK(fp_calltree_device_set_str(t, "CPU", "0", "arch", "interpreter"));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "2", "num_sms", 132)); /* replaces */
	ASSERT_EQ(fp_calltree_device_count(t), 4);
	ASSERT_OK(fp_calltree_device_at(t, 0, &d));
	ASSERT_STREQ(d.type, "CPU");
	ASSERT_STREQ(d.str, "interpreter");
	ASSERT_OK(fp_calltree_device_at(t, 1, &d));
	ASSERT_STREQ(d.index, "2"); /* numeric order: 2 before 10 */
	ASSERT_STREQ(d.key, "arch");
	ASSERT_OK(fp_calltree_device_at(t, 2, &d));
	ASSERT_STREQ(d.key, "num_sms");
	ASSERT_DEQ(d.value, 132);
	ASSERT_OK(fp_calltree_device_at(t, 3, &d));
	ASSERT_STREQ(d.index, "10");
	ASSERT_EQ(fp_calltree_device_at(t, 4, &d), FP_ENOENT);
	ASSERT_EQ(fp_calltree_device_set(t, NULL, "0", "k", 1), FP_EINVAL);
	fp_calltree_free(t);
}

/* Build, finalize, write: every allocation on the way may fail. */
static int build_and_write(void *unused)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	uint32_t fr[4], node, time, dev;
	int rc = FP_OK, i;
	char name[16];

	(void)unused;
	if (!t)
		return FP_ENOMEM;
	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 40 && !rc; i++) {
		int k = snprintf(name, sizeof(name), "f%d", i % 7);

		rc = fp_calltree_intern(t, name, (size_t)k, &fr[i % 4]);
		if (!rc && i % 4 == 3)
			rc = fp_calltree_add_path(t, fr, 4, &node);
		if (!rc && i % 4 == 3)
			rc = fp_calltree_metric_auto(t, "time (ns)", 9, &time);
		if (!rc && i % 4 == 3)
			rc = fp_calltree_add_metric(t, node, time, i);
		if (!rc && i % 8 == 7)
			rc = fp_calltree_metric_auto(t, "device_id", 9, &dev);
		if (!rc && i % 8 == 7)
			rc = fp_calltree_set_string(t, node, dev, "0", 1);
	}
	if (!rc)
		rc = fp_calltree_device_set_str(t, "CPU", "0", "arch", "interpreter");
	if (!rc)
		rc = fp_calltree_finalize(t);
	if (!rc) {
		w = fp_jsonw_new_strbuf(&sb, 0);
		if (!w) {
			rc = FP_ENOMEM;
		} else {
			rc = fp_calltree_write_hatchet(t, w);
			if (!rc)
				rc = fp_jsonw_finish(w);
			fp_jsonw_free(w);
		}
	}
	fp_strbuf_release(&sb);
	fp_calltree_free(t);
	return rc;
}

TEST(prof_calltree_oom)
{
	long ok, total = fpt_oom_sweep(build_and_write, NULL, 0, 6, &ok);

	ASSERT_LT(ok, total);
}
