/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whole-tree operations on call trees: structural equality (tests, round trips), merge of
 * several runs into per-node mean/min/max, and difference of two runs. All match nodes by the
 * path of frame *names*, never by ids, so trees read from different files combine. Viewing and
 * printing are the CLI's business.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/demangle.h>

#include "prof/calltree-internal.h"

/* ---- names people read --------------------------------------------------------------------- */

static size_t copy_name(const char *s, size_t n, char *buf, size_t cap)
{
	if (cap) {
		size_t k = FP_MIN(n, cap - 1);

		memcpy(buf, s, k);
		buf[k] = '\0';
	}
	return n;
}

bool fp_calltree_node_display(const struct fp_calltree *t, uint32_t node, bool full, char *buf,
			      size_t cap, size_t *len)
{
	struct fp_calltree_value v;
	const char *name, *src = NULL;
	size_t nlen = 0, slen = 0, out;
	uint32_t m;

	name = fp_calltree_node_name(t, node, &nlen);
	if (!name)
		name = "", nlen = 0;
	if (fp_calltree_metric_find(t, "mangled_name", 12, &m) == FP_OK &&
	    fp_calltree_get(t, node, m, &v) == FP_OK && v.is_string && v.str_len)
		src = v.str, slen = v.str_len;
	else if (fp_demangle_is_mangled(name, nlen))
		src = name, slen = nlen;
	if (src && full && src != name) {
		out = copy_name(name, nlen, buf, cap); /* the frame is the full form already */
	} else if (src && cap &&
		   fp_demangle(src, slen, full ? FP_DEMANGLE_FULL : FP_DEMANGLE_SHORT, buf, cap,
			       &out) == FP_OK) {
		/* demangled in place */
	} else {
		if (len)
			*len = copy_name(name, nlen, buf, cap);
		else
			copy_name(name, nlen, buf, cap);
		return false;
	}
	if (len)
		*len = out;
	return true;
}

/* ---- equality ------------------------------------------------------------------------------ */

/* "ROOT/a/b" for messages (truncated to fit). */
static void path_of(const struct fp_calltree *t, uint32_t node, char *buf, size_t size)
{
	uint32_t chain[64];
	size_t n = 0, used = 0;

	while (node != FP_CALLTREE_NONE && n < FP_ARRAY_SIZE(chain)) {
		chain[n++] = node;
		node = fp_calltree_node_parent(t, node);
	}
	buf[0] = '\0';
	while (n-- > 0 && used + 1 < size) {
		size_t len;
		const char *name = fp_calltree_node_name(t, chain[n], &len);
		int k = snprintf(buf + used, size - used, "%s%.*s", used ? "/" : "",
				 (int)FP_MIN(len, 60), name);

		if (k < 0)
			break;
		used += (size_t)k;
	}
}

struct cellv {
	const char *name;
	size_t len;
	const struct fp__ct_cell *c;
	uint8_t kind;
};

static size_t self_cells(const struct fp_calltree *t, uint32_t node, struct cellv *out, size_t cap)
{
	const struct fp__ct_cell *c;
	size_t n = 0, i, j;

	for (c = fp__ct_node(t, node)->cells; c; c = c->next) {
		uint8_t kind = t->kinds[c->metric];

		if (!(c->flags & FP__CELL_SELF))
			continue;
		/* For sums an explicit 0 and no value are the same thing (the Hatchet root
		 * lists every summable metric with 0). */
		if ((kind == FP_METRIC_INCLUSIVE || kind == FP_METRIC_EXCLUSIVE) && c->self == 0)
			continue;
		if (n < cap) {
			out[n].name = fp_intern_str(t->metrics, c->metric, &out[n].len);
			out[n].c = c;
			out[n].kind = t->kinds[c->metric];
		}
		n++;
	}
	for (i = 1; i < FP_MIN(n, cap); i++) {
		struct cellv v = out[i];

		for (j = i;
		     j > 0 && fp__prof_strcmp_n(out[j - 1].name, out[j - 1].len, v.name, v.len) > 0;
		     j--)
			out[j] = out[j - 1];
		out[j] = v;
	}
	return n;
}

static bool near(double a, double b, double tol)
{
	double scale = FP_MAX(1.0, FP_MAX(fabs(a), fabs(b)));

	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return fabs(a - b) <= tol * scale;
}

static bool differ(const struct fp_calltree *t, uint32_t node, struct fp_diag *why, const char *fmt,
		   ...) FP_PRINTF(4, 5);

static bool differ(const struct fp_calltree *t, uint32_t node, struct fp_diag *why, const char *fmt,
		   ...)
{
	char path[160], msg[160];
	va_list ap;

	if (!why)
		return false;
	path_of(t, node, path, sizeof(path));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fp_diag_set(why, FP_EINVAL, 0, "%s: %s", path, msg);
	return false;
}

#define EQ_MAX_CELLS 256

static bool node_metrics_equal(const struct fp_calltree *a, uint32_t na,
			       const struct fp_calltree *b, uint32_t nb, double tol,
			       struct fp_diag *why)
{
	struct cellv ca[EQ_MAX_CELLS], cb[EQ_MAX_CELLS];
	size_t n = self_cells(a, na, ca, EQ_MAX_CELLS), m = self_cells(b, nb, cb, EQ_MAX_CELLS), i;

	if (n > EQ_MAX_CELLS || m > EQ_MAX_CELLS)
		return differ(a, na, why, "more than %d metrics on one node", EQ_MAX_CELLS);
	for (i = 0; i < n || i < m; i++) {
		const struct cellv *x = i < n ? &ca[i] : NULL, *y = i < m ? &cb[i] : NULL;
		int c = !x ? 1 : !y ? -1 : fp__prof_strcmp_n(x->name, x->len, y->name, y->len);

		if (c < 0)
			return differ(a, na, why, "metric '%.*s' only in the first tree",
				      (int)FP_MIN(x->len, 60), x->name);
		if (c > 0)
			return differ(a, na, why, "metric '%.*s' only in the second tree",
				      (int)FP_MIN(y->len, 60), y->name);
		if (x->kind != y->kind)
			return differ(a, na, why, "metric '%.*s' has kinds %u and %u",
				      (int)FP_MIN(x->len, 60), x->name, x->kind, y->kind);
		if ((x->c->flags ^ y->c->flags) & FP__CELL_STRING)
			return differ(a, na, why, "metric '%.*s' is a string in one tree only",
				      (int)FP_MIN(x->len, 60), x->name);
		if (x->c->flags & FP__CELL_STRING) {
			size_t xl, yl;
			const char *xs = fp_intern_str(a->names, x->c->str, &xl);
			const char *ys = fp_intern_str(b->names, y->c->str, &yl);

			if (fp__prof_strcmp_n(xs, xl, ys, yl))
				return differ(a, na, why, "metric '%.*s' \"%.*s\" vs \"%.*s\"",
					      (int)FP_MIN(x->len, 60), x->name, (int)FP_MIN(xl, 40),
					      xs, (int)FP_MIN(yl, 40), ys);
		} else if (!near(x->c->self, y->c->self, tol)) {
			return differ(a, na, why, "metric '%.*s' %.17g vs %.17g",
				      (int)FP_MIN(x->len, 60), x->name, x->c->self, y->c->self);
		}
	}
	return true;
}

static bool devices_equal(const struct fp_calltree *a, const struct fp_calltree *b,
			  struct fp_diag *why)
{
	size_t i;

	if (a->ndevices != b->ndevices) {
		if (why)
			fp_diag_set(why, FP_EINVAL, 0, "device tables have %zu and %zu entries",
				    a->ndevices, b->ndevices);
		return false;
	}
	for (i = 0; i < a->ndevices; i++) {
		struct fp_calltree_device_attr x, y;

		fp_calltree_device_at(a, i, &x);
		fp_calltree_device_at(b, i, &y);
		if (strcmp(x.type, y.type) || strcmp(x.index, y.index) || strcmp(x.key, y.key) ||
		    x.is_string != y.is_string || (x.is_string && strcmp(x.str, y.str)) ||
		    (!x.is_string && x.value != y.value)) {
			if (why)
				fp_diag_set(why, FP_EINVAL, 0, "device entry %s/%s/%s differs",
					    x.type, x.index, x.key);
			return false;
		}
	}
	return true;
}

bool fp_calltree_equal(const struct fp_calltree *a, const struct fp_calltree *b, double tol,
		       struct fp_diag *why)
{
	uint32_t *pairs = NULL, *ca = NULL, *cb = NULL;
	size_t npairs = 0, alloc = 0, calloc_n = 0;
	size_t alen, blen;
	const char *an, *bn;
	bool eq = true;

	if (!a || !b) {
		if (why)
			fp_diag_set(why, FP_EINVAL, 0, "NULL tree");
		return false;
	}
	an = fp_calltree_node_name(a, FP_CALLTREE_ROOT, &alen);
	bn = fp_calltree_node_name(b, FP_CALLTREE_ROOT, &blen);
	if (fp__prof_strcmp_n(an, alen, bn, blen))
		return differ(a, FP_CALLTREE_ROOT, why, "root names differ");
	if (!devices_equal(a, b, why))
		return false;

	/* Depth-first over pairs of matching nodes; the pair stack grows on the heap. */
	alloc = 64;
	pairs = fp_reallocarray(NULL, alloc, 2 * sizeof(*pairs));
	if (!pairs)
		goto fail_nomem;
	pairs[0] = FP_CALLTREE_ROOT;
	pairs[1] = FP_CALLTREE_ROOT;
	npairs = 1;
	while (eq && npairs > 0) {
		uint32_t x, y;
		size_t n, m, i;

		npairs--;
		x = pairs[2 * npairs];
		y = pairs[2 * npairs + 1];
		if (!node_metrics_equal(a, x, b, y, tol, why)) {
			eq = false;
			break;
		}
		n = fp_calltree_node_child_count(a, x);
		m = fp_calltree_node_child_count(b, y);
		if (n != m) {
			eq = differ(a, x, why, "%zu children vs %zu", n, m);
			break;
		}
		if (n > calloc_n) {
			uint32_t *na_ = fp_reallocarray(ca, n, sizeof(*ca));
			uint32_t *nb_ = na_ ? fp_reallocarray(cb, n, sizeof(*cb)) : NULL;

			if (na_)
				ca = na_;
			if (!na_ || !nb_)
				goto fail_nomem;
			cb = nb_;
			calloc_n = n;
		}
		fp_calltree_sorted_children(a, x, ca, n);
		fp_calltree_sorted_children(b, y, cb, n);
		if (npairs + n > alloc) {
			size_t nalloc = alloc;
			uint32_t *np;

			while (nalloc < npairs + n)
				nalloc *= 2;
			np = fp_reallocarray(pairs, nalloc, 2 * sizeof(*np));
			if (!np)
				goto fail_nomem;
			pairs = np;
			alloc = nalloc;
		}
		for (i = 0; i < n; i++) {
			an = fp_calltree_node_name(a, ca[i], &alen);
			bn = fp_calltree_node_name(b, cb[i], &blen);
			if (fp__prof_strcmp_n(an, alen, bn, blen)) {
				eq = differ(a, x, why, "child '%.*s' vs '%.*s'",
					    (int)FP_MIN(alen, 60), an, (int)FP_MIN(blen, 60), bn);
				break;
			}
			pairs[2 * npairs] = ca[i];
			pairs[2 * npairs + 1] = cb[i];
			npairs++;
		}
	}
	fp_free(pairs);
	fp_free(ca);
	fp_free(cb);
	return eq;
fail_nomem:
	fp_free(pairs);
	fp_free(ca);
	fp_free(cb);
	if (why)
		fp_diag_set(why, FP_ENOMEM, 0, "out of memory while comparing");
	return false;
}

/* ---- merge and diff ----------------------------------------------------------------------- */

/* map[i] = the node of `out` with the same name path as node i of `in` (created). */
static int map_nodes(struct fp_calltree *out, const struct fp_calltree *in, uint32_t **map,
		     size_t *alloc)
{
	size_t i;
	int rc;

	if (in->count > *alloc) {
		uint32_t *nm = fp_reallocarray(*map, in->count, sizeof(*nm));

		if (!nm)
			return FP_ENOMEM;
		*map = nm;
		*alloc = in->count;
	}
	(*map)[0] = FP_CALLTREE_ROOT;
	for (i = 1; i < in->count; i++) {
		const struct fp__ct_node *n = fp__ct_node(in, (uint32_t)i);
		size_t len;
		const char *name = fp_intern_str(in->names, n->frame, &len);
		uint32_t frame;

		rc = fp_calltree_intern(out, name, len, &frame);
		if (!rc)
			rc = fp_calltree_child(out, (*map)[n->parent], frame, &(*map)[i]);
		if (rc)
			return rc;
	}
	return FP_OK;
}

/* Copy every device attribute of `in` into `out` (replacing). */
static int copy_devices(struct fp_calltree *out, const struct fp_calltree *in)
{
	size_t i;
	int rc;

	for (i = 0; i < in->ndevices; i++) {
		const struct fp__ct_device *d = &in->devices[i];
		size_t tl, il, kl, sl = 0;
		const char *ts = fp_intern_str(in->names, d->type, &tl);
		const char *is = fp_intern_str(in->names, d->index, &il);
		const char *ks = fp_intern_str(in->names, d->key, &kl);
		const char *ss = d->is_string ? fp_intern_str(in->names, d->str, &sl) : NULL;

		rc = fp__calltree_device_set_n(out, ts, tl, is, il, ks, kl, d->is_string, d->value,
					       ss, sl);
		if (rc)
			return rc;
	}
	return FP_OK;
}

/* Set a property on `out` unless it already has one (first wins). */
static int copy_property(struct fp_calltree *out, uint32_t node, uint32_t m,
			 const struct fp_calltree *in, const struct fp__ct_cell *c)
{
	const struct fp__ct_cell *have = fp__calltree_cell(out, node, m);

	if (have && (have->flags & FP__CELL_SELF))
		return FP_OK;
	if (c->flags & FP__CELL_STRING) {
		size_t len;
		const char *s = fp_intern_str(in->names, c->str, &len);

		return fp_calltree_set_string(out, node, m, s, len);
	}
	return fp_calltree_add_metric(out, node, m, c->self);
}

/* Register `name` + suffix in `out` with `kind` (any length the tree's names allow). */
static int metric_suffixed(struct fp_calltree *out, const char *name, size_t len,
			   const char *suffix, enum fp_metric_kind kind, uint32_t *id)
{
	char small[512], *buf = small;
	size_t sl = strlen(suffix);
	int rc;

	if (len > SIZE_MAX - sl)
		return FP_ELIMIT;
	if (len + sl > sizeof(small)) {
		buf = fp_malloc(len + sl);
		if (!buf)
			return FP_ENOMEM;
	}
	memcpy(buf, name, len);
	memcpy(buf + len, suffix, sl);
	rc = fp_calltree_metric(out, buf, len + sl, kind, id);
	if (buf != small)
		fp_free(buf);
	return rc;
}

struct merge_ids {
	uint32_t *mean, *min, *max; /* by input metric id */
	uint32_t *max_of;           /* by output metric id: the max partner of a min metric */
	size_t alloc, max_of_alloc;
};

static int grow_ids(uint32_t **p, size_t n)
{
	uint32_t *np = fp_reallocarray(*p, n ? n : 1, sizeof(*np));

	if (!np)
		return FP_ENOMEM;
	*p = np;
	return FP_OK;
}

static int merge_register(struct fp_calltree *out, const struct fp_calltree *in,
			  struct merge_ids *ids)
{
	uint32_t m, nm = fp_calltree_metric_count(in);
	int rc;

	if (nm > ids->alloc) {
		if ((rc = grow_ids(&ids->mean, nm)) || (rc = grow_ids(&ids->min, nm)) ||
		    (rc = grow_ids(&ids->max, nm)))
			return rc;
		ids->alloc = nm;
	}
	for (m = 0; m < nm; m++) {
		size_t len;
		enum fp_metric_kind kind;
		const char *name = fp_calltree_metric_name(in, m, &len, &kind);

		rc = fp_calltree_metric(out, name, len, kind, &ids->mean[m]);
		if (rc)
			return rc;
		ids->min[m] = ids->max[m] = FP_CALLTREE_NONE;
		if (kind != FP_METRIC_INCLUSIVE && kind != FP_METRIC_EXCLUSIVE)
			continue;
		if ((rc = metric_suffixed(out, name, len, " (min)", FP_METRIC_MIN, &ids->min[m])) ||
		    (rc = metric_suffixed(out, name, len, " (max)", FP_METRIC_MAX, &ids->max[m])))
			return rc;
		if (ids->min[m] >= ids->max_of_alloc) {
			size_t na = (size_t)ids->min[m] + 64, i;

			if ((rc = grow_ids(&ids->max_of, na)))
				return rc;
			for (i = ids->max_of_alloc; i < na; i++)
				ids->max_of[i] = FP_CALLTREE_NONE;
			ids->max_of_alloc = na;
		}
		ids->max_of[ids->min[m]] = ids->max[m];
	}
	return FP_OK;
}

static int merge_one(struct fp_calltree *out, struct fp_calltree *in, double div,
		     const uint32_t *map, const struct merge_ids *ids, struct fp_hashmap *obs)
{
	size_t i;
	int rc;

	for (i = 0; i < in->count; i++) {
		const struct fp__ct_cell *c;
		uint32_t o = map[i];

		for (c = fp__ct_node(in, (uint32_t)i)->cells; c; c = c->next) {
			enum fp_metric_kind kind = (enum fp_metric_kind)in->kinds[c->metric];
			bool self = (c->flags & FP__CELL_SELF) != 0;
			double v;
			uint64_t key, cnt = 0;

			switch (kind) {
			case FP_METRIC_INCLUSIVE:
			case FP_METRIC_EXCLUSIVE:
				if (self) {
					rc = fp_calltree_add_metric(out, o, ids->mean[c->metric],
								    c->self / div);
					if (rc)
						return rc;
				}
				if (kind == FP_METRIC_EXCLUSIVE && !self)
					break;
				v = kind == FP_METRIC_INCLUSIVE ? c->total : c->self;
				if ((rc = fp_calltree_add_metric(out, o, ids->min[c->metric], v)) ||
				    (rc = fp_calltree_add_metric(out, o, ids->max[c->metric], v)))
					return rc;
				key = (uint64_t)o << 32 | ids->min[c->metric];
				fp_hashmap_get(obs, key, &cnt);
				rc = fp_hashmap_put(obs, key, cnt + 1);
				if (rc)
					return rc;
				break;
			case FP_METRIC_MIN:
			case FP_METRIC_MAX:
				if (self) {
					rc = fp_calltree_add_metric(out, o, ids->mean[c->metric],
								    c->self);
					if (rc)
						return rc;
				}
				break;
			case FP_METRIC_PROPERTY:
				if (self) {
					rc = copy_property(out, o, ids->mean[c->metric], in, c);
					if (rc)
						return rc;
				}
				break;
			}
		}
	}
	return FP_OK;
}

int fp_calltree_merge(struct fp_calltree *const *in, size_t n, struct fp_calltree **out)
{
	return fp_calltree_merge_op(in, n, FP_MERGE_MEAN, out);
}

int fp_calltree_merge_op(struct fp_calltree *const *in, size_t n, enum fp_merge_op op,
			 struct fp_calltree **out)
{
	struct merge_ids ids = {0};
	struct fp_hashmap obs;
	struct fp_calltree *o;
	uint32_t *map = NULL;
	size_t k, alloc = 0, iter = 0;
	uint64_t key, cnt;
	int rc;

	if (!in || n == 0 || !out || (op != FP_MERGE_MEAN && op != FP_MERGE_SUM))
		return FP_EINVAL;
	for (k = 0; k < n; k++) {
		if (!in[k])
			return FP_EINVAL;
		rc = fp_calltree_finalize(in[k]);
		if (rc)
			return rc;
	}
	o = fp_calltree_new(&in[0]->lim);
	if (!o)
		return FP_ENOMEM;
	fp_hashmap_init(&obs);
	{
		size_t len;
		const char *root = fp_calltree_node_name(in[0], FP_CALLTREE_ROOT, &len);

		rc = fp_calltree_set_root_name(o, root, len);
	}
	for (k = 0; !rc && k < n; k++) {
		rc = merge_register(o, in[k], &ids);
		if (!rc)
			rc = map_nodes(o, in[k], &map, &alloc);
		if (!rc)
			rc = merge_one(o, in[k], op == FP_MERGE_SUM ? 1.0 : (double)n, map, &ids,
				       &obs);
	}
	/* A node an input lacks (or has no value for) counts as 0 in min and max. */
	while (!rc && fp_hashmap_next(&obs, &iter, &key, &cnt)) {
		uint32_t node = (uint32_t)(key >> 32), mn = (uint32_t)key;

		if (cnt >= n)
			continue;
		rc = fp_calltree_add_metric(o, node, mn, 0);
		if (!rc)
			rc = fp_calltree_add_metric(o, node, ids.max_of[mn], 0);
	}
	for (k = n; !rc && k-- > 0;)
		rc = copy_devices(o, in[k]); /* backwards: the first input wins */
	if (!rc) {
		/* what the numbers are: a property of the root ("mean of 4 profiles") */
		char what[64];
		uint32_t m;
		int len = snprintf(what, sizeof(what), "%s of %zu profile%s",
				   op == FP_MERGE_SUM ? "sum" : "mean", n, n == 1 ? "" : "s");

		rc = fp_calltree_metric(o, "merged", 6, FP_METRIC_PROPERTY, &m);
		if (!rc)
			rc = fp_calltree_set_string(o, FP_CALLTREE_ROOT, m, what, (size_t)len);
	}
	if (!rc)
		rc = fp_calltree_finalize(o);
	fp_hashmap_release(&obs);
	fp_free(map);
	fp_free(ids.mean);
	fp_free(ids.min);
	fp_free(ids.max);
	fp_free(ids.max_of);
	if (rc) {
		fp_calltree_free(o);
		return rc;
	}
	*out = o;
	return FP_OK;
}

static int diff_one(struct fp_calltree *o, struct fp_calltree *in, double sign, uint32_t **map,
		    size_t *alloc, uint32_t **mids, size_t *mids_alloc)
{
	uint32_t m, nm = fp_calltree_metric_count(in);
	size_t i;
	int rc;

	if (nm > *mids_alloc) {
		rc = grow_ids(mids, nm);
		if (rc)
			return rc;
		*mids_alloc = nm;
	}
	for (m = 0; m < nm; m++) {
		size_t len;
		enum fp_metric_kind kind;
		const char *name = fp_calltree_metric_name(in, m, &len, &kind);

		rc = fp_calltree_metric(o, name, len, kind, &(*mids)[m]);
		if (rc)
			return rc;
	}
	rc = map_nodes(o, in, map, alloc);
	if (rc)
		return rc;
	for (i = 0; i < in->count; i++) {
		const struct fp__ct_cell *c;

		for (c = fp__ct_node(in, (uint32_t)i)->cells; c; c = c->next) {
			struct fp__ct_cell *oc;

			if (!(c->flags & FP__CELL_SELF))
				continue;
			if (in->kinds[c->metric] == FP_METRIC_PROPERTY) {
				rc = copy_property(o, (*map)[i], (*mids)[c->metric], in, c);
			} else {
				/* Plain subtraction whatever the kind: min/max differences too. */
				rc = fp__calltree_cell_get(o, (*map)[i], (*mids)[c->metric], &oc);
				if (!rc) {
					oc->self += sign * c->self;
					oc->flags |= FP__CELL_SELF;
				}
			}
			if (rc)
				return rc;
		}
	}
	o->finalized = false;
	return FP_OK;
}

int fp_calltree_diff(struct fp_calltree *a, struct fp_calltree *b, struct fp_calltree **out)
{
	struct fp_calltree *o;
	uint32_t *map = NULL, *mids = NULL;
	size_t alloc = 0, mids_alloc = 0, len;
	const char *root;
	int rc;

	if (!a || !b || !out)
		return FP_EINVAL;
	if ((rc = fp_calltree_finalize(a)) || (rc = fp_calltree_finalize(b)))
		return rc;
	o = fp_calltree_new(&b->lim);
	if (!o)
		return FP_ENOMEM;
	root = fp_calltree_node_name(b, FP_CALLTREE_ROOT, &len);
	rc = fp_calltree_set_root_name(o, root, len);
	/* b first, so that its properties win. */
	if (!rc)
		rc = diff_one(o, b, 1.0, &map, &alloc, &mids, &mids_alloc);
	if (!rc)
		rc = diff_one(o, a, -1.0, &map, &alloc, &mids, &mids_alloc);
	if (!rc)
		rc = copy_devices(o, a);
	if (!rc)
		rc = copy_devices(o, b);
	if (!rc)
		rc = fp_calltree_finalize(o);
	fp_free(map);
	fp_free(mids);
	if (rc) {
		fp_calltree_free(o);
		return rc;
	}
	*out = o;
	return FP_OK;
}
