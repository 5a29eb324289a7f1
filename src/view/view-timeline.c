/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The viewer's intra-kernel section: for every kernel node of a call tree that carries
 * intra-kernel timelines (metric "timeline_launches(exc)", docs/guide/intra-kernel.md), a table of its
 * scope nodes with per-program mean/min/max time, cycles, share of the programs' span and
 * warnings. It reads the tree only (ours, or one read back from a .hatchet file); it does not
 * aggregate anything that the session did not already store.
 */
#include "fp-setup.h"

#include <flagprism/timeline.h>
#include <flagprism/view.h>

#include <limits.h>

struct tl_metrics {
	uint32_t launches, span, time, programs, count, tmin, tmax, cycles, cmin, cmax, share, warn;
};

static uint32_t find(const struct fp_calltree *t, const char *name)
{
	uint32_t m;

	return fp_calltree_metric_find(t, name, strlen(name), &m) ? FP_CALLTREE_NONE : m;
}

static bool get(const struct fp_calltree *t, uint32_t node, uint32_t m, double *v)
{
	struct fp_calltree_value cv;

	if (m == FP_CALLTREE_NONE || fp_calltree_get(t, node, m, &cv) || cv.is_string)
		return false;
	*v = cv.self;
	return true;
}

struct row_key {
	long line; /* an automatic scope's line ("L12 ..."), LONG_MAX for other names */
	size_t idx;
	uint32_t node;
};

static int key_cmp(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Children in name order, automatic scopes by their line (source order). */
static void order_rows(const struct fp_calltree *t, uint32_t *kids, size_t n)
{
	struct row_key small[64], *k = n <= FP_ARRAY_SIZE(small) ? small : NULL;
	size_t i;

	if (!k)
		k = fp_reallocarray(NULL, n, sizeof(*k));
	if (!k)
		return; /* name order then */
	for (i = 0; i < n; i++) {
		const char *name = fp_calltree_node_name(t, kids[i], NULL);

		k[i].line = LONG_MAX;
		if (name && name[0] == 'L' && name[1] >= '0' && name[1] <= '9')
			k[i].line = strtol(name + 1, NULL, 10);
		k[i].idx = i;
		k[i].node = kids[i];
	}
	qsort(k, n, sizeof(*k), key_cmp);
	for (i = 0; i < n; i++)
		kids[i] = k[i].node;
	if (k != small)
		fp_free(k);
}

static int scope_rows(const struct fp_calltree *t, const struct tl_metrics *M, uint32_t node,
		      double span, unsigned depth, FILE *f)
{
	uint32_t small[64], *kids = small;
	size_t n, i;
	int rc = FP_OK;

	n = fp_calltree_sorted_children(t, node, small, FP_ARRAY_SIZE(small));
	if (n > FP_ARRAY_SIZE(small)) {
		kids = fp_reallocarray(NULL, n, sizeof(*kids));
		if (!kids)
			return FP_ENOMEM;
		fp_calltree_sorted_children(t, node, kids, n);
	}
	order_rows(t, kids, n);
	for (i = 0; i < n && !rc; i++) {
		double tsum, progs = 0, tmin = 0, tmax = 0, cyc = 0, share = 0;
		struct fp_calltree_value wv;
		const char *name;
		size_t len;
		bool warn;
		int width;

		if (!get(t, kids[i], M->time, &tsum))
			continue;
		get(t, kids[i], M->programs, &progs);
		get(t, kids[i], M->tmin, &tmin);
		get(t, kids[i], M->tmax, &tmax);
		share = span > 0 ? tsum / span : 0;
		name = fp_calltree_node_name(t, kids[i], &len);
		warn = M->warn != FP_CALLTREE_NONE &&
		       fp_calltree_get(t, kids[i], M->warn, &wv) == 0;
		width = FP_MAX(8, 40 - 2 * (int)depth);
		fprintf(f, "  %*s%-*.*s %9.0f %12.3f %12.3f %12.3f", (int)(2 * depth), "", width,
			(int)FP_MIN(len, (size_t)width), name, progs,
			progs > 0 ? tsum / progs / 1e3 : 0, tmin / 1e3, tmax / 1e3);
		if (get(t, kids[i], M->cycles, &cyc))
			fprintf(f, " %12.0f", progs > 0 ? cyc / progs : 0);
		else
			fprintf(f, " %12s", "-");
		fprintf(f, " %6.1f%%%s\n", 100 * share,
			warn ? "  (!) may be software-pipelined" : "");
		rc = scope_rows(t, M, kids[i], span, depth + 1, f);
	}
	if (kids != small)
		fp_free(kids);
	return rc;
}

int fp_view_timeline_summary(const struct fp_calltree *t, FILE *f)
{
	struct tl_metrics M;
	size_t n, node;
	bool any = false;
	int rc = FP_OK;

	if (!t || !f)
		return FP_EINVAL;
	M.launches = find(t, "timeline_launches(exc)");
	if (M.launches == FP_CALLTREE_NONE)
		return FP_OK;
	M.span = find(t, "program_span (ns)(exc)");
	M.time = find(t, "scope_time (ns)(exc)");
	M.programs = find(t, "scope_programs(exc)");
	M.count = find(t, "scope_count(exc)");
	M.tmin = find(t, "scope_time (ns) (min)");
	M.tmax = find(t, "scope_time (ns) (max)");
	M.cycles = find(t, "scope_cycles(exc)");
	M.cmin = find(t, "scope_cycles (min)");
	M.cmax = find(t, "scope_cycles (max)");
	M.share = find(t, "scope_share (pty)");
	M.warn = find(t, "warning (pty)");
	n = fp_calltree_node_count(t);
	for (node = 0; node < n && !rc; node++) {
		double launches, span = 0;
		const char *name;
		size_t len;

		if (!get(t, (uint32_t)node, M.launches, &launches) || launches <= 0)
			continue;
		get(t, (uint32_t)node, M.span, &span);
		if (!any)
			fprintf(f,
				"\nintra-kernel scopes (per program; share = scope time / programs' "
				"instrumented span; docs/guide/intra-kernel.md)\n");
		any = true;
		name = fp_calltree_node_name(t, (uint32_t)node, &len);
		fprintf(f, "kernel %.*s: %.0f instrumented launch%s\n", (int)FP_MIN(len, 200), name,
			launches, launches == 1 ? "" : "es");
		fprintf(f, "  %-40s %9s %12s %12s %12s %12s %7s\n", "scope", "programs", "mean us",
			"min us", "max us", "mean cycles", "share");
		rc = scope_rows(t, &M, (uint32_t)node, span, 0, f);
	}
	if (ferror(f))
		return FP_EIO;
	return rc;
}
