/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The imbalance view of a profile merged across ranks (fp_ranks_view_render(), `flagprism view
 * --ranks`): per node the mean, min and max of one metric over the ranks, max/mean and the rank
 * of the max, then the job's straggler and the most imbalanced nodes. Rows, their order and the
 * filters are the ordinary viewer's (fp_view_new() on the mean); this file only picks the
 * per-rank metrics fp_ranks_merge() wrote and lays them out. It reads nothing from files.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/ranks.h>
#include <flagprism/view.h>

#define TOP_IMBALANCED 5
/* Nodes whose max is under this share of the root's max are left out of the "most imbalanced"
 * list: a kernel that takes nothing anywhere is not worth a line. */
#define TOP_MIN_SHARE 0.01

struct ids {
	uint32_t mean, min, max, rank;
};

static int find(const struct fp_calltree *t, const char *base, const char *suffix, uint32_t *id)
{
	char buf[600];
	int k = snprintf(buf, sizeof(buf), "%s%s", base, suffix);

	if (k < 0 || (size_t)k >= sizeof(buf))
		return FP_ELIMIT;
	return fp_calltree_metric_find(t, buf, (size_t)k, id);
}

/* The value of a metric at a node: inclusive total, own value otherwise; NaN when absent. */
static double value(const struct fp_calltree *t, uint32_t node, uint32_t m)
{
	struct fp_calltree_value v;

	if (m == FP_CALLTREE_NONE || fp_calltree_get(t, node, m, &v) != FP_OK || v.is_string)
		return NAN;
	return v.kind == FP_METRIC_INCLUSIVE ? v.total : v.self;
}

static const char *root_str(const struct fp_calltree *t, const char *metric, char *buf, size_t cap)
{
	struct fp_calltree_value v;
	uint32_t m;

	buf[0] = '\0';
	if (fp_calltree_metric_find(t, metric, strlen(metric), &m) != FP_OK ||
	    fp_calltree_get(t, FP_CALLTREE_ROOT, m, &v) != FP_OK)
		return NULL;
	if (v.is_string)
		snprintf(buf, cap, "%.*s", (int)FP_MIN(v.str_len, cap - 1), v.str);
	else
		snprintf(buf, cap, "%.0f", v.self);
	return buf;
}

struct row {
	double mean, min, max, ratio, rank;
	uint32_t node, depth;
	bool last;
	const char *name;
	size_t name_len;
};

static void fmt(double v, double scale, char *buf)
{
	fp_view_format_number(isnan(v) ? v : v * scale, buf, 32);
}

static int cmp_ratio(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;

	if (x->ratio != y->ratio)
		return x->ratio > y->ratio ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * The straggler by compute time (fp_ranks_merge(): kernel time outside collective kernels, in
 * which the other ranks wait for it): the rank of the max of the root's "compute_time (ns)".
 * False (and nothing printed) when the profile has none.
 */
static bool compute_straggler(const struct fp_calltree *t, FILE *f)
{
	uint32_t mmean, mmax, mrank;
	char a[32], b[32], c[32];
	double mean, max, rank;

	if (fp_calltree_metric_find(t, "compute_time (ns)", 17, &mmean) != FP_OK ||
	    find(t, "compute_time (ns)", " (max)", &mmax) != FP_OK ||
	    find(t, "compute_time (ns)", " (max rank) (pty)", &mrank) != FP_OK)
		return false;
	mean = value(t, FP_CALLTREE_ROOT, mmean);
	max = value(t, FP_CALLTREE_ROOT, mmax);
	rank = value(t, FP_CALLTREE_ROOT, mrank);
	if (isnan(mean) || isnan(max) || isnan(rank))
		return false;
	fmt(max, 1e-6, a);
	fmt(mean, 1e-6, b);
	fmt(mean > 0 ? max / mean : NAN, 1, c);
	fprintf(f,
		"straggler: rank %.0f (compute time/ms %s, the kernel time outside collectives; "
		"mean %s, max/mean %s)\n",
		rank, a, b, c);
	return true;
}

static void put_tree_name(FILE *f, const struct row *r, uint8_t *last, int format)
{
	char name[512];
	uint32_t d;

	for (d = 1; d < r->depth; d++)
		fputs(last[d] ? "   " : "\u2502  ", f);
	if (r->depth > 0)
		fputs(r->last ? "\u2514\u2500 " : "\u251c\u2500 ", f);
	last[r->depth] = r->last;
	fp_view_format_name(r->name, r->name_len, (enum fp_view_format)format, name, sizeof(name));
	fputs(name, f);
	fputc('\n', f);
}

int fp_ranks_view_render(struct fp_calltree *t, const struct fp_ranks_view_options *o, FILE *f,
			 struct fp_diag *diag)
{
	static const struct fp_ranks_view_options defaults;
	const char *metric;
	struct fp_view_options vo;
	struct fp_view *v = NULL;
	struct row *rows = NULL, **top = NULL;
	uint8_t *last = NULL;
	struct ids id;
	char buf[6][32], ranks[256], world[32], missing[256], label[64];
	size_t i, n, w[5] = {0}, ntop = 0, mlen;
	double scale = 1, root_max = NAN;
	uint32_t maxd = 0;
	bool said;
	int rc;

	if (!t || !f)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_ranks_view_render: NULL argument");
	if (!o)
		o = &defaults;
	metric = o->metric && o->metric[0] ? o->metric : "time (ns)";
	if (fp_calltree_metric_find(t, metric, strlen(metric), &id.mean) != FP_OK)
		return fp_diag_set(diag, FP_EINVAL, 0, "the profile has no metric '%s'", metric);
	if (find(t, metric, " (max)", &id.max) != FP_OK)
		return fp_diag_set(diag, FP_ENOENT, 0,
				   "the profile has no '%s (max)': it is not a profile merged "
				   "across ranks (flagprism merge RANK-PROFILES... -o OUT)",
				   metric);
	if (find(t, metric, " (min)", &id.min) != FP_OK)
		id.min = FP_CALLTREE_NONE;
	if (find(t, metric, " (max rank) (pty)", &id.rank) != FP_OK)
		id.rank = FP_CALLTREE_NONE;
	mlen = strlen(metric);
	if (mlen >= 4 && !strcmp(metric + mlen - 4, "(ns)"))
		scale = 1e-6;
	snprintf(label, sizeof(label), "%.*s", (int)FP_MIN(mlen, 40), metric);
	if (scale != 1) {
		size_t k = mlen - 4;

		while (k > 0 && metric[k - 1] == ' ')
			k--;
		snprintf(label, sizeof(label), "%.*s/ms", (int)FP_MIN(k, 40), metric);
	}

	fp_view_options_init(&vo);
	vo.metrics = metric;
	if (o->max_depth)
		vo.max_depth = o->max_depth;
	vo.threshold = o->threshold;
	vo.include = o->include;
	vo.exclude = o->exclude;
	vo.format = (enum fp_view_format)o->format;
	vo.sort = o->sort_by_name ? FP_VIEW_SORT_NAME : FP_VIEW_SORT_VALUE;
	rc = fp_view_new(t, NULL, &vo, &v, diag);
	if (rc)
		return rc;
	n = fp_view_row_count(v);
	rows = fp_calloc(n ? n : 1, sizeof(*rows));
	top = fp_calloc(n ? n : 1, sizeof(*top));
	if (!rows || !top) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct fp_view_row vr;
		struct row *r = &rows[i];

		fp_view_row(v, i, &vr);
		r->node = vr.node;
		r->depth = vr.depth;
		r->name = vr.name;
		r->name_len = vr.name_len;
		r->mean = value(t, vr.node, id.mean);
		r->min = value(t, vr.node, id.min);
		r->max = value(t, vr.node, id.max);
		r->rank = value(t, vr.node, id.rank);
		if (isnan(r->mean))
			r->mean = 0; /* a summed metric without a value is 0 on every rank */
		if (r->mean == 0 && isnan(r->max))
			r->min = r->max = 0; /* no rank had a value: all 0, no max rank */
		r->ratio = r->mean > 0 && !isnan(r->max) ? r->max / r->mean : NAN;
		maxd = FP_MAX(maxd, r->depth);
		if (vr.node == FP_CALLTREE_ROOT)
			root_max = r->max;
	}
	/* A row is the last of its siblings when no later row of its depth comes before one
	 * shallower. */
	for (i = 0; i < n; i++) {
		size_t k;

		rows[i].last = true;
		for (k = i + 1; k < n && rows[k].depth >= rows[i].depth; k++) {
			if (rows[k].depth == rows[i].depth) {
				rows[i].last = false;
				break;
			}
		}
	}
	last = fp_calloc((size_t)maxd + 2, 1);
	if (!last) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto out;
	}

	root_str(t, "ranks (pty)", ranks, sizeof(ranks));
	root_str(t, "world_size (pty)", world, sizeof(world));
	root_str(t, "missing_ranks (pty)", missing, sizeof(missing));
	if (ranks[0])
		fprintf(f, "ranks: %s of world size %s; missing: %s\n", ranks,
			world[0] ? world : "?", missing[0] ? missing : "none");
	else
		fprintf(f, "ranks: not recorded (a profile merged without rank information: the "
			   "max rank column counts inputs from 0)\n");
	fprintf(f, "per rank: %s (mean, min and max over ranks; max/mean 1 is balanced)\n", metric);

	/* widths of mean, min, max, max/mean, max rank */
	{
		static const char *const heads[5] = {"mean", "min", "max", "max/mean", "max rank"};
		char head[5][72];

		snprintf(head[0], sizeof(head[0]), "%s %s", heads[0], label);
		snprintf(head[1], sizeof(head[1]), "%s", heads[1]);
		snprintf(head[2], sizeof(head[2]), "%s", heads[2]);
		snprintf(head[3], sizeof(head[3]), "%s", heads[3]);
		snprintf(head[4], sizeof(head[4]), "%s", heads[4]);
		for (i = 0; i < 5; i++)
			w[i] = strlen(head[i]);
		for (i = 0; i < n; i++) {
			fmt(rows[i].mean, scale, buf[0]);
			fmt(rows[i].min, scale, buf[1]);
			fmt(rows[i].max, scale, buf[2]);
			fmt(rows[i].ratio, 1, buf[3]);
			fmt(rows[i].rank, 1, buf[4]);
			w[0] = FP_MAX(w[0], strlen(buf[0]));
			w[1] = FP_MAX(w[1], strlen(buf[1]));
			w[2] = FP_MAX(w[2], strlen(buf[2]));
			w[3] = FP_MAX(w[3], strlen(buf[3]));
			w[4] = FP_MAX(w[4], strlen(buf[4]));
		}
		for (i = 0; i < 5; i++)
			fprintf(f, "%*s  ", (int)w[i], head[i]);
		fputs("name\n", f);
	}
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fmt(r->mean, scale, buf[0]);
		fmt(r->min, scale, buf[1]);
		fmt(r->max, scale, buf[2]);
		fmt(r->ratio, 1, buf[3]);
		fmt(r->rank, 1, buf[4]);
		fprintf(f, "%*s  %*s  %*s  %*s  %*s  ", (int)w[0], buf[0], (int)w[1], buf[1],
			(int)w[2], buf[2], (int)w[3], buf[3], (int)w[4], buf[4]);
		put_tree_name(f, r, last, o->format);
		if (r->node != FP_CALLTREE_ROOT && !isnan(r->ratio) &&
		    (isnan(root_max) || r->max >= TOP_MIN_SHARE * root_max))
			top[ntop++] = &rows[i];
	}
	said = !strcmp(metric, "time (ns)") && compute_straggler(t, f);
	for (i = 0; !said && i < n; i++) {
		const struct row *r = &rows[i];

		if (r->node != FP_CALLTREE_ROOT)
			continue;
		fmt(r->max, scale, buf[0]);
		fmt(r->mean, scale, buf[1]);
		fmt(r->ratio, 1, buf[2]);
		if (isnan(r->rank))
			fprintf(f, "straggler: unknown (no rank of the max recorded)\n");
		else
			fprintf(f, "straggler: rank %.0f (%s %s; mean %s, max/mean %s)\n", r->rank,
				label, buf[0], buf[1], buf[2]);
	}
	qsort(top, ntop, sizeof(*top), cmp_ratio);
	if (ntop)
		fprintf(f, "most imbalanced (max/mean, rank of the max, node):\n");
	for (i = 0; i < ntop && i < TOP_IMBALANCED; i++) {
		char name[512];

		fmt(top[i]->ratio, 1, buf[0]);
		fmt(top[i]->rank, 1, buf[1]);
		fmt(top[i]->max, scale, buf[2]);
		fmt(top[i]->mean, scale, buf[3]);
		fp_view_format_name(top[i]->name, top[i]->name_len, (enum fp_view_format)o->format,
				    name, sizeof(name));
		fprintf(f, "  %6s  rank %-4s  %s (max %s, mean %s)\n", buf[0], buf[1], name, buf[2],
			buf[3]);
	}
	if (ferror(f))
		rc = fp_diag_set(diag, FP_EIO, 0, "write error");
out:
	fp_free(last);
	fp_free(top);
	fp_free(rows);
	fp_view_free(v);
	return rc;
}
