/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Hatchet JSON writer for call trees: `[root, device_info]`, the literal form that
 * llnl-hatchet's GraphFrame.from_literal(data[:1]) and Triton's proton-viewer read. Output is
 * deterministic: children and metrics in bytewise name order, devices sorted, integral values
 * written as integers. Each node carries its own ("self") values, because Hatchet readers sum
 * subtrees themselves; the root lists every summable metric (0 when it has none) since Hatchet
 * classifies metrics by the root's keys. Reading is hatchet-read.c's job.
 */
#include "fp-setup.h"

#include <errno.h>
#include <math.h>
#include <unistd.h>

#include <flagprism/json.h>
#include <flagprism/outfile.h>

#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"

/* Integral values within 2^53 as integers ("count": 3), keeping files small and Proton-like. */
int fp__prof_write_number(struct fp_jsonw *w, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) <= 9007199254740992.0 &&
	    !(v == 0 && signbit(v)))
		return fp_jsonw_int(w, (int64_t)v);
	return fp_jsonw_double(w, v);
}

struct hw_level {
	size_t start; /* this level's children in ids[start, start + count) */
	size_t count;
	size_t pos;
};

struct hw_ctx {
	struct fp_calltree *t;
	struct fp_jsonw *w;
	uint32_t *rank; /* metric id -> position in name order */
	uint32_t *ids;  /* children of every open level, stacked */
	size_t nids, ids_alloc;
	struct hw_level *levels;
	size_t nlevels, levels_alloc;
	struct fp__ct_cell **cells; /* scratch for one node's cells */
	size_t cells_alloc;
};

static int rank_cmp(const void *ctx, uint32_t a, uint32_t b)
{
	return fp__calltree_metric_cmp(ctx, a, b);
}

/* One "name": value member; a NULL cell writes 0. */
static void write_value(struct hw_ctx *c, const struct fp_calltree *t, uint32_t metric,
			const struct fp__ct_cell *cell)
{
	size_t len;
	const char *name = fp_intern_str(t->metrics, metric, &len);

	fp_jsonw_key_n(c->w, name, len);
	if (cell && (cell->flags & FP__CELL_STRING)) {
		const char *s = fp_intern_str(t->names, cell->str, &len);

		fp_jsonw_string_n(c->w, s, len);
	} else {
		fp__prof_write_number(c->w, cell ? cell->self : 0);
	}
}

static int write_metrics(struct hw_ctx *c, uint32_t node)
{
	struct fp_calltree *t = c->t;
	const struct fp__ct_node *n = fp__ct_node(t, node);
	struct fp__ct_cell *cell;
	size_t count = 0, i, j;

	for (cell = n->cells; cell; cell = cell->next)
		if (cell->flags & FP__CELL_SELF)
			count++;
	if (count > c->cells_alloc) {
		struct fp__ct_cell **nc = fp_reallocarray(c->cells, count, sizeof(*nc));

		if (!nc)
			return FP_ENOMEM;
		c->cells = nc;
		c->cells_alloc = count;
	}
	i = 0;
	for (cell = n->cells; cell; cell = cell->next)
		if (cell->flags & FP__CELL_SELF)
			c->cells[i++] = cell;
	for (i = 1; i < count; i++) {
		struct fp__ct_cell *v = c->cells[i];

		for (j = i; j > 0 && c->rank[c->cells[j - 1]->metric] > c->rank[v->metric]; j--)
			c->cells[j] = c->cells[j - 1];
		c->cells[j] = v;
	}

	fp_jsonw_key(c->w, "metrics");
	fp_jsonw_object_begin(c->w);
	if (node == FP_CALLTREE_ROOT) {
		/* Every registered metric in name order: summable ones always (the root's own
		 * value or 0: Hatchet registers metrics by the root's keys), others only where
		 * the root has a value (a 0 would be a real min, max or property). */
		uint32_t m, nm = fp_calltree_metric_count(t);
		uint32_t *order = fp_reallocarray(NULL, nm ? nm : 1, sizeof(*order));

		if (!order)
			return FP_ENOMEM;
		for (m = 0; m < nm; m++)
			order[c->rank[m]] = m;
		for (m = 0; m < nm; m++) {
			uint32_t id = order[m];

			cell = fp__calltree_cell(t, node, id);
			if (cell && !(cell->flags & FP__CELL_SELF))
				cell = NULL;
			if (!cell && t->kinds[id] != FP_METRIC_INCLUSIVE &&
			    t->kinds[id] != FP_METRIC_EXCLUSIVE)
				continue;
			write_value(c, t, id, cell);
		}
		fp_free(order);
		return fp_jsonw_object_end(c->w);
	}
	for (i = 0; i < count; i++)
		write_value(c, t, c->cells[i]->metric, c->cells[i]);
	return fp_jsonw_object_end(c->w);
}

/* Open a node: frame, metrics, and the "children" array, then stack its sorted children. */
static int open_node(struct hw_ctx *c, uint32_t node)
{
	size_t len, nchild = fp_calltree_node_child_count(c->t, node);
	const char *name = fp_calltree_node_name(c->t, node, &len);
	struct hw_level *lv;
	int rc;

	fp_jsonw_object_begin(c->w);
	fp_jsonw_key(c->w, "frame");
	fp_jsonw_object_begin(c->w);
	fp_jsonw_key(c->w, "name");
	fp_jsonw_string_n(c->w, name, len);
	fp_jsonw_kv_string(c->w, "type", "function");
	fp_jsonw_object_end(c->w);
	rc = write_metrics(c, node);
	if (rc)
		return rc;
	fp_jsonw_key(c->w, "children");
	rc = fp_jsonw_array_begin(c->w);
	if (rc)
		return rc;

	if (c->nids + nchild > c->ids_alloc) {
		size_t na = c->ids_alloc ? c->ids_alloc : 64;
		uint32_t *ni;

		while (na < c->nids + nchild)
			na *= 2;
		ni = fp_reallocarray(c->ids, na, sizeof(*ni));
		if (!ni)
			return FP_ENOMEM;
		c->ids = ni;
		c->ids_alloc = na;
	}
	if (c->nlevels == c->levels_alloc) {
		size_t na = c->levels_alloc ? c->levels_alloc * 2 : 32;
		struct hw_level *nl = fp_reallocarray(c->levels, na, sizeof(*nl));

		if (!nl)
			return FP_ENOMEM;
		c->levels = nl;
		c->levels_alloc = na;
	}
	lv = &c->levels[c->nlevels++];
	lv->start = c->nids;
	lv->count = nchild ? fp_calltree_sorted_children(c->t, node, c->ids + c->nids, nchild) : 0;
	lv->pos = 0;
	c->nids += lv->count;
	return FP_OK;
}

int fp__calltree_write_devices(const struct fp_calltree *t, struct fp_jsonw *w)
{
	size_t i;
	uint32_t last_type = UINT32_MAX, last_index = UINT32_MAX;

	fp_jsonw_object_begin(w);
	for (i = 0; i < t->ndevices; i++) {
		const struct fp__ct_device *d = &t->devices[i];
		size_t len;
		const char *s;

		if (d->type != last_type) {
			if (last_type != UINT32_MAX) {
				fp_jsonw_object_end(w); /* index */
				fp_jsonw_object_end(w); /* type */
			}
			s = fp_intern_str(t->names, d->type, &len);
			fp_jsonw_key_n(w, s, len);
			fp_jsonw_object_begin(w);
			last_type = d->type;
			last_index = UINT32_MAX;
		}
		if (d->index != last_index) {
			if (last_index != UINT32_MAX)
				fp_jsonw_object_end(w);
			s = fp_intern_str(t->names, d->index, &len);
			fp_jsonw_key_n(w, s, len);
			fp_jsonw_object_begin(w);
			last_index = d->index;
		}
		s = fp_intern_str(t->names, d->key, &len);
		fp_jsonw_key_n(w, s, len);
		if (d->is_string) {
			s = fp_intern_str(t->names, d->str, &len);
			fp_jsonw_string_n(w, s, len);
		} else {
			fp__prof_write_number(w, d->value);
		}
	}
	if (last_type != UINT32_MAX) {
		fp_jsonw_object_end(w);
		fp_jsonw_object_end(w);
	}
	return fp_jsonw_object_end(w);
}

int fp_calltree_write_hatchet(struct fp_calltree *t, struct fp_jsonw *w)
{
	struct hw_ctx c = {0};
	uint32_t nm, m, *order = NULL;
	int rc;

	if (!t || !w)
		return FP_EINVAL;
	rc = fp_calltree_finalize(t);
	if (rc)
		return rc;
	c.t = t;
	c.w = w;
	nm = fp_calltree_metric_count(t);
	c.rank = fp_reallocarray(NULL, nm ? nm : 1, sizeof(*c.rank));
	order = fp_reallocarray(NULL, nm ? nm : 1, sizeof(*order));
	if (!c.rank || !order) {
		rc = FP_ENOMEM;
		goto out;
	}
	for (m = 0; m < nm; m++)
		order[m] = m;
	fp__prof_sort_ids(order, nm, rank_cmp, t);
	for (m = 0; m < nm; m++)
		c.rank[order[m]] = m;

	fp_jsonw_array_begin(w);
	rc = open_node(&c, FP_CALLTREE_ROOT);
	while (!rc && c.nlevels > 0) {
		struct hw_level *lv = &c.levels[c.nlevels - 1];

		if (lv->pos < lv->count) {
			uint32_t child = c.ids[lv->start + lv->pos++];

			rc = open_node(&c, child);
			continue;
		}
		c.nids = lv->start;
		c.nlevels--;
		fp_jsonw_array_end(w);
		rc = fp_jsonw_object_end(w);
	}
	if (rc)
		goto out;
	rc = fp__calltree_write_devices(t, w);
	if (rc)
		goto out;
	rc = fp_jsonw_array_end(w);
out:
	fp_free(order);
	fp_free(c.rank);
	fp_free(c.ids);
	fp_free(c.levels);
	fp_free(c.cells);
	return rc;
}

int fp__prof_save_json(const char *path, unsigned flags, int (*fn)(void *arg, struct fp_jsonw *w),
		       void *arg, struct fp_diag *diag)
{
	struct fp_outfile of;
	struct fp_jsonw *w;
	int rc;

	rc = fp_outfile_open(&of, path, flags & FP__SAVE_DASH_STDOUT ? FP_OUTFILE_DASH_STDOUT : 0,
			     diag);
	if (rc)
		return rc;
	w = fp_jsonw_new_file(of.f, flags & ~FP__SAVE_DASH_STDOUT);
	if (!w) {
		fp_outfile_abort(&of);
		return fp_diag_set(diag, FP_ENOMEM, 0, "%s: out of memory", path);
	}
	rc = fn(arg, w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!rc && fputc('\n', of.f) == EOF)
		rc = FP_EIO;
	if (rc)
		fp_diag_set(diag, rc, 0, "%s: %s", path, fp_strerror(rc));
	/* A failed write is reported by the finish with its errno. */
	return fp_outfile_finish(&of, rc, diag);
}

static int save_tree(void *arg, struct fp_jsonw *w)
{
	return fp_calltree_write_hatchet(arg, w);
}

int fp_calltree_save_hatchet(struct fp_calltree *t, const char *path, unsigned flags,
			     struct fp_diag *diag)
{
	if (!t || !path)
		return FP_EINVAL;
	return fp__prof_save_json(path, flags, save_tree, t, diag);
}

int fp__prof_write_hatchet(struct fp_prof_session *s, struct fp_jsonw *w)
{
	return fp_calltree_write_hatchet(s->tree, w);
}
