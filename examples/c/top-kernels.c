/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top-kernels: an example of a C program built against an installed libflagprism. It reads a
 * profile (a .hatchet file written by `flagprism profile`, or Proton's), walks its call tree,
 * adds up the time of every kernel node by kernel name over all call paths, and prints the
 * kernels that took longest. It uses only the public API (the headers <flagprism/NAME.h>);
 * examples/c/CMakeLists.txt builds it with find_package(FlagPrism), and docs/guide/c-library.md shows
 * the pkg-config way.
 * It is an example, not a tool: `flagprism view` is the real viewer.
 *
 *   top-kernels PROFILE.hatchet [N]     (N kernels, default 10)
 *
 * Exit status: 0 printed, 1 the file could not be read, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/calltree.h>
#include <flagprism/status.h>
#include <flagprism/version.h>

/* One kernel name, its time summed over all the nodes that carry it. */
struct kernel {
	const char *name; /* borrowed from the tree */
	size_t name_len;
	double time_ns;
	double count;
};

struct kernels {
	struct kernel *k;
	size_t n, cap;
};

/* The value of a node's metric (its inclusive total), or 0 when the node has none. */
static double metric_total(const struct fp_calltree *t, uint32_t node, uint32_t metric, int have)
{
	struct fp_calltree_value v;

	if (!have || fp_calltree_get(t, node, metric, &v) != FP_OK || v.is_string)
		return 0;
	return v.total;
}

static int add_kernel(struct kernels *ks, const char *name, size_t len, double time_ns,
		      double count)
{
	size_t i;

	for (i = 0; i < ks->n; i++) {
		if (ks->k[i].name_len == len && memcmp(ks->k[i].name, name, len) == 0) {
			ks->k[i].time_ns += time_ns;
			ks->k[i].count += count;
			return 0;
		}
	}
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? 2 * ks->cap : 16;
		struct kernel *k = realloc(ks->k, cap * sizeof(*k));

		if (!k)
			return -1;
		ks->k = k;
		ks->cap = cap;
	}
	ks->k[ks->n++] = (struct kernel){name, len, time_ns, count};
	return 0;
}

/* What the walk needs: the metric ids (have_* say whether the file has them) and the result. */
struct walk {
	uint32_t time_m, count_m, dev_m;
	int have_time, have_count, have_dev;
	struct kernels ks;
	double total_ns;
};

/*
 * Visit `node` and everything below it, children in creation order. A kernel node is one with
 * Proton's kernel property "device_type" (FlagPrism writes it too); its subtree (PC-sampling
 * lines, intra-kernel scopes) belongs to it and is not searched for more kernels. The depth of
 * the recursion is bounded by the tree's depth cap (struct fp_calltree_limits).
 */
static int walk(const struct fp_calltree *t, uint32_t node, struct walk *w)
{
	struct fp_calltree_value v;
	uint32_t child;

	if (node != FP_CALLTREE_ROOT && w->have_dev &&
	    fp_calltree_get(t, node, w->dev_m, &v) == FP_OK) {
		double time_ns = metric_total(t, node, w->time_m, w->have_time);
		size_t len;
		const char *name = fp_calltree_node_name(t, node, &len);

		w->total_ns += time_ns;
		return add_kernel(&w->ks, name, len, time_ns,
				  metric_total(t, node, w->count_m, w->have_count));
	}
	for (child = fp_calltree_node_first_child(t, node); child != FP_CALLTREE_NONE;
	     child = fp_calltree_node_next_sibling(t, child))
		if (walk(t, child, w))
			return -1;
	return 0;
}

static int by_time_desc(const void *a, const void *b)
{
	const struct kernel *x = a, *y = b;

	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	c = memcmp(x->name, y->name, n);
	return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

int main(int argc, char **argv)
{
	struct fp_calltree *tree = NULL;
	struct fp_hatchet_info info;
	struct fp_diag diag;
	struct walk w = {0};
	long top = 10;
	int rc;
	size_t i;

	if (argc < 2 || argc > 3 || (argc == 3 && (top = strtol(argv[2], NULL, 10)) <= 0)) {
		fprintf(stderr, "usage: %s PROFILE.hatchet [N]\n", argv[0]);
		return 2;
	}
	rc = fp_calltree_read_hatchet(argv[1], NULL, &tree, &info, &diag);
	if (rc != FP_OK) {
		fprintf(stderr, "top-kernels: %s: %s%s%s\n", argv[1], fp_strerror(rc),
			diag.msg[0] ? ": " : "", diag.msg);
		return 1;
	}
	w.have_time = fp_calltree_metric_find(tree, "time (ns)", 9, &w.time_m) == FP_OK;
	w.have_count = fp_calltree_metric_find(tree, "count", 5, &w.count_m) == FP_OK;
	w.have_dev = fp_calltree_metric_find(tree, "device_type", 11, &w.dev_m) == FP_OK;

	if (walk(tree, FP_CALLTREE_ROOT, &w)) {
		fprintf(stderr, "top-kernels: out of memory\n");
		free(w.ks.k);
		fp_calltree_free(tree);
		return 1;
	}
	qsort(w.ks.k, w.ks.n, sizeof(*w.ks.k), by_time_desc);

	printf("%s: %zu kernel%s, %.3f ms in kernels (libflagprism %s)\n", argv[1], w.ks.n,
	       w.ks.n == 1 ? "" : "s", w.total_ns / 1e6, fp_version_string());
	if (w.ks.n)
		printf("%10s %7s %7s  %s\n", "time/ms", "share", "count", "kernel");
	for (i = 0; i < w.ks.n && i < (size_t)top; i++) {
		const struct kernel *k = &w.ks.k[i];

		printf("%10.3f %6.1f%% %7.0f  %.*s\n", k->time_ns / 1e6,
		       w.total_ns > 0 ? 100.0 * k->time_ns / w.total_ns : 0.0, k->count,
		       (int)k->name_len, k->name);
	}
	free(w.ks.k);
	fp_calltree_free(tree);
	return 0;
}
