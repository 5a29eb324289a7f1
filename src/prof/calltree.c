/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The calling-context tree core: node storage, child lookup, metric registry and cells,
 * inclusive propagation, and the device table. Files (Hatchet in and out) and whole-tree
 * operations (merge, diff, equality) live in their own files on top of this one.
 */
#include "fp-setup.h"

#include <math.h>

#include "prof/calltree-internal.h"

/* ---- small shared helpers ------------------------------------------------------------------ */

int fp__prof_strcmp_n(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n ? memcmp(a, b, n) : 0;

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

static void sift_down(uint32_t *ids, size_t start, size_t end,
		      int (*cmp)(const void *, uint32_t, uint32_t), const void *ctx)
{
	size_t root = start;

	while (2 * root + 1 < end) {
		size_t child = 2 * root + 1, swap = root;
		uint32_t tmp;

		if (cmp(ctx, ids[swap], ids[child]) < 0)
			swap = child;
		if (child + 1 < end && cmp(ctx, ids[swap], ids[child + 1]) < 0)
			swap = child + 1;
		if (swap == root)
			return;
		tmp = ids[root];
		ids[root] = ids[swap];
		ids[swap] = tmp;
		root = swap;
	}
}

void fp__prof_sort_ids(uint32_t *ids, size_t n, int (*cmp)(const void *ctx, uint32_t a, uint32_t b),
		       const void *ctx)
{
	size_t i;

	if (n < 2)
		return;
	/* Insertion sort is faster for the usual handful of siblings. */
	if (n <= 16) {
		for (i = 1; i < n; i++) {
			uint32_t v = ids[i];
			size_t j = i;

			while (j > 0 && cmp(ctx, ids[j - 1], v) > 0) {
				ids[j] = ids[j - 1];
				j--;
			}
			ids[j] = v;
		}
		return;
	}
	for (i = n / 2; i-- > 0;)
		sift_down(ids, i, n, cmp, ctx);
	for (i = n - 1; i > 0; i--) {
		uint32_t tmp = ids[0];

		ids[0] = ids[i];
		ids[i] = tmp;
		sift_down(ids, 0, i, cmp, ctx);
	}
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

static int new_node(struct fp_calltree *t, uint32_t parent, uint32_t frame, uint32_t depth,
		    uint32_t *id)
{
	struct fp__ct_node *n;
	size_t chunk = t->count >> FP__CT_CHUNK_SHIFT;

	if (t->count >= t->lim.max_nodes || t->count >= (size_t)UINT32_MAX - 1)
		return FP_ELIMIT;
	if (chunk == t->nchunks) {
		struct fp__ct_node *block;

		if (t->nchunks == t->chunks_alloc) {
			size_t na = t->chunks_alloc ? t->chunks_alloc * 2 : 16;
			struct fp__ct_node **c = fp_reallocarray(t->chunks, na, sizeof(*c));

			if (!c)
				return FP_ENOMEM;
			t->chunks = c;
			t->chunks_alloc = na;
		}
		block = fp_arena_alloc(&t->arena, FP__CT_CHUNK * sizeof(*block));
		if (!block)
			return fp_arena_last_error(&t->arena) ? fp_arena_last_error(&t->arena) :
								FP_ENOMEM;
		t->chunks[t->nchunks++] = block;
	}
	n = &t->chunks[chunk][t->count & (FP__CT_CHUNK - 1)];
	n->parent = parent;
	n->frame = frame;
	n->first_child = FP_CALLTREE_NONE;
	n->last_child = FP_CALLTREE_NONE;
	n->next_sibling = FP_CALLTREE_NONE;
	n->nchildren = 0;
	n->depth = depth;
	n->cells = NULL;
	*id = (uint32_t)t->count++;
	return FP_OK;
}

struct fp_calltree *fp_calltree_new(const struct fp_calltree_limits *lim)
{
	struct fp_calltree *t = fp_calloc(1, sizeof(*t));
	uint32_t root_frame, root;

	if (!t)
		return NULL;
	if (lim)
		t->lim = *lim;
	if (!t->lim.max_nodes)
		t->lim.max_nodes = FP_CALLTREE_DEFAULT_MAX_NODES;
	if (!t->lim.max_depth)
		t->lim.max_depth = FP_CALLTREE_DEFAULT_MAX_DEPTH;
	if (!t->lim.max_metrics)
		t->lim.max_metrics = FP_CALLTREE_DEFAULT_MAX_METRICS;
	fp_arena_init(&t->arena, 0, t->lim.max_bytes);
	fp_hashmap_init(&t->children);
	t->names = fp_intern_new_capped(t->lim.max_bytes);
	if (!t->names)
		goto fail_names;
	t->metrics = fp_intern_new();
	if (!t->metrics)
		goto fail_metrics;
	if (fp_intern_add(t->names, "ROOT", 4, &root_frame))
		goto fail_root;
	if (new_node(t, FP_CALLTREE_NONE, root_frame, 0, &root))
		goto fail_root;
	t->finalized = true;
	return t;

fail_root:
	fp_intern_free(t->metrics);
fail_metrics:
	fp_intern_free(t->names);
fail_names:
	fp_free(t->chunks);
	fp_arena_release(&t->arena);
	fp_free(t);
	return NULL;
}

void fp_calltree_free(struct fp_calltree *t)
{
	if (!t)
		return;
	fp_hashmap_release(&t->children);
	fp_intern_free(t->names);
	fp_intern_free(t->metrics);
	fp_free(t->kinds);
	fp_free(t->chunks);
	fp_free(t->devices);
	fp_arena_release(&t->arena);
	fp_free(t);
}

int fp_calltree_set_root_name(struct fp_calltree *t, const char *name, size_t len)
{
	uint32_t frame;
	int rc;

	if (!t || (!name && len))
		return FP_EINVAL;
	rc = fp_intern_add(t->names, name, len, &frame);
	if (rc)
		return rc;
	fp__ct_node(t, FP_CALLTREE_ROOT)->frame = frame;
	return FP_OK;
}

/* ---- frames and nodes ---------------------------------------------------------------------- */

int fp_calltree_intern(struct fp_calltree *t, const char *name, size_t len, uint32_t *frame)
{
	if (!t || (!name && len))
		return FP_EINVAL;
	return fp_intern_add(t->names, name, len, frame);
}

const char *fp_calltree_frame_name(const struct fp_calltree *t, uint32_t frame, size_t *len)
{
	return t ? fp_intern_str(t->names, frame, len) : NULL;
}

static uint64_t child_key(uint32_t parent, uint32_t frame)
{
	return (uint64_t)parent << 32 | frame;
}

int fp_calltree_child_find(const struct fp_calltree *t, uint32_t parent, uint32_t frame,
			   uint32_t *node)
{
	uint64_t v;

	if (!t || !fp_hashmap_get(&t->children, child_key(parent, frame), &v))
		return FP_ENOENT;
	if (node)
		*node = (uint32_t)v;
	return FP_OK;
}

int fp_calltree_child(struct fp_calltree *t, uint32_t parent, uint32_t frame, uint32_t *node)
{
	struct fp__ct_node *p, *c;
	uint64_t v;
	uint32_t id;
	int rc;

	if (!t)
		return FP_EINVAL;
	if (fp_hashmap_get(&t->children, child_key(parent, frame), &v)) {
		if (node)
			*node = (uint32_t)v;
		return FP_OK;
	}
	p = fp__ct_node(t, parent);
	if (!p || frame >= fp_intern_count(t->names))
		return FP_EINVAL;
	if (p->depth >= t->lim.max_depth)
		return FP_ELIMIT;
	/* Reserve the map entry first: a node without its map entry would be unreachable. */
	rc = fp_hashmap_put(&t->children, child_key(parent, frame), (uint64_t)t->count);
	if (rc)
		return rc;
	rc = new_node(t, parent, frame, p->depth + 1, &id);
	if (rc) {
		fp_hashmap_remove(&t->children, child_key(parent, frame));
		return rc;
	}
	p = fp__ct_node(t, parent); /* chunks may have moved */
	c = fp__ct_node(t, id);
	if (p->last_child == FP_CALLTREE_NONE)
		p->first_child = id;
	else
		fp__ct_node(t, p->last_child)->next_sibling = id;
	p->last_child = id;
	p->nchildren++;
	(void)c;
	t->finalized = false;
	if (node)
		*node = id;
	return FP_OK;
}

int fp_calltree_add_path(struct fp_calltree *t, const uint32_t *frames, size_t n, uint32_t *node)
{
	uint32_t cur = FP_CALLTREE_ROOT;
	size_t i;
	int rc;

	if (!t || (!frames && n))
		return FP_EINVAL;
	for (i = 0; i < n; i++) {
		rc = fp_calltree_child(t, cur, frames[i], &cur);
		if (rc)
			return rc;
	}
	if (node)
		*node = cur;
	return FP_OK;
}

size_t fp_calltree_node_count(const struct fp_calltree *t)
{
	return t ? t->count : 0;
}

uint32_t fp_calltree_node_parent(const struct fp_calltree *t, uint32_t node)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? n->parent : FP_CALLTREE_NONE;
}

uint32_t fp_calltree_node_frame(const struct fp_calltree *t, uint32_t node)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? n->frame : FP_CALLTREE_NONE;
}

const char *fp_calltree_node_name(const struct fp_calltree *t, uint32_t node, size_t *len)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? fp_intern_str(t->names, n->frame, len) : NULL;
}

uint32_t fp_calltree_node_depth(const struct fp_calltree *t, uint32_t node)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? n->depth : 0;
}

size_t fp_calltree_node_child_count(const struct fp_calltree *t, uint32_t node)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? n->nchildren : 0;
}

uint32_t fp_calltree_node_first_child(const struct fp_calltree *t, uint32_t node)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? n->first_child : FP_CALLTREE_NONE;
}

uint32_t fp_calltree_node_next_sibling(const struct fp_calltree *t, uint32_t node)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;

	return n ? n->next_sibling : FP_CALLTREE_NONE;
}

static int node_name_cmp(const void *ctx, uint32_t a, uint32_t b)
{
	const struct fp_calltree *t = ctx;
	size_t alen, blen;
	const char *as = fp_calltree_node_name(t, a, &alen);
	const char *bs = fp_calltree_node_name(t, b, &blen);

	return fp__prof_strcmp_n(as, alen, bs, blen);
}

size_t fp_calltree_sorted_children(const struct fp_calltree *t, uint32_t node, uint32_t *out,
				   size_t cap)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;
	uint32_t c;
	size_t i = 0;

	if (!n)
		return 0;
	if (n->nchildren > cap)
		return n->nchildren;
	for (c = n->first_child; c != FP_CALLTREE_NONE; c = fp__ct_node(t, c)->next_sibling)
		out[i++] = c;
	fp__prof_sort_ids(out, i, node_name_cmp, t);
	return i;
}

/* ---- metrics ------------------------------------------------------------------------------- */

static bool has_suffix(const char *name, size_t len, const char *suffix)
{
	size_t sl = strlen(suffix);

	return len >= sl && memcmp(name + len - sl, suffix, sl) == 0;
}

enum fp_metric_kind fp_calltree_metric_kind_from_name(const char *name, size_t len)
{
	if (!name)
		return FP_METRIC_INCLUSIVE;
	while (len > 0 && name[len - 1] == ' ')
		len--;
	if (has_suffix(name, len, "(exc)"))
		return FP_METRIC_EXCLUSIVE;
	if (has_suffix(name, len, "(pty)"))
		return FP_METRIC_PROPERTY;
	if (has_suffix(name, len, "(min)"))
		return FP_METRIC_MIN;
	if (has_suffix(name, len, "(max)"))
		return FP_METRIC_MAX;
	if ((len == 9 && !memcmp(name, "device_id", 9)) ||
	    (len == 11 && !memcmp(name, "device_type", 11)))
		return FP_METRIC_PROPERTY;
	return FP_METRIC_INCLUSIVE;
}

int fp_calltree_metric(struct fp_calltree *t, const char *name, size_t len,
		       enum fp_metric_kind kind, uint32_t *metric)
{
	uint32_t id, count;
	int rc;

	if (!t || (!name && len) || (unsigned)kind > FP_METRIC_MAX)
		return FP_EINVAL;
	if (fp_intern_find(t->metrics, name, len, &id) == FP_OK) {
		if (t->kinds[id] != (uint8_t)kind)
			return FP_EINVAL;
		if (metric)
			*metric = id;
		return FP_OK;
	}
	count = fp_intern_count(t->metrics);
	if (count >= t->lim.max_metrics)
		return FP_ELIMIT;
	if (count == t->kinds_alloc) {
		uint32_t na = t->kinds_alloc ? t->kinds_alloc * 2 : 16;
		uint8_t *k = fp_reallocarray(t->kinds, na, 1);

		if (!k)
			return FP_ENOMEM;
		t->kinds = k;
		t->kinds_alloc = na;
	}
	rc = fp_intern_add(t->metrics, name, len, &id);
	if (rc)
		return rc;
	t->kinds[id] = (uint8_t)kind;
	if (metric)
		*metric = id;
	return FP_OK;
}

int fp_calltree_metric_auto(struct fp_calltree *t, const char *name, size_t len, uint32_t *metric)
{
	uint32_t id;

	if (t && fp_intern_find(t->metrics, name, len, &id) == FP_OK) {
		if (metric)
			*metric = id;
		return FP_OK;
	}
	return fp_calltree_metric(t, name, len, fp_calltree_metric_kind_from_name(name, len),
				  metric);
}

int fp_calltree_metric_find(const struct fp_calltree *t, const char *name, size_t len,
			    uint32_t *metric)
{
	if (!t)
		return FP_EINVAL;
	return fp_intern_find(t->metrics, name, len, metric);
}

uint32_t fp_calltree_metric_count(const struct fp_calltree *t)
{
	return t ? fp_intern_count(t->metrics) : 0;
}

const char *fp_calltree_metric_name(const struct fp_calltree *t, uint32_t metric, size_t *len,
				    enum fp_metric_kind *kind)
{
	const char *s = t ? fp_intern_str(t->metrics, metric, len) : NULL;

	if (s && kind)
		*kind = (enum fp_metric_kind)t->kinds[metric];
	return s;
}

int fp__calltree_metric_cmp(const void *ctx, uint32_t a, uint32_t b)
{
	const struct fp_calltree *t = ctx;
	size_t alen, blen;
	const char *as = fp_intern_str(t->metrics, a, &alen);
	const char *bs = fp_intern_str(t->metrics, b, &blen);

	return fp__prof_strcmp_n(as, alen, bs, blen);
}

struct fp__ct_cell *fp__calltree_cell(const struct fp_calltree *t, uint32_t node, uint32_t metric)
{
	const struct fp__ct_node *n = fp__ct_node(t, node);
	struct fp__ct_cell *c;

	for (c = n ? n->cells : NULL; c; c = c->next)
		if (c->metric == metric)
			return c;
	return NULL;
}

int fp__calltree_cell_get(struct fp_calltree *t, uint32_t node, uint32_t metric,
			  struct fp__ct_cell **out)
{
	struct fp__ct_node *n = fp__ct_node(t, node);
	struct fp__ct_cell *c;

	if (!n || metric >= fp_intern_count(t->metrics))
		return FP_EINVAL;
	for (c = n->cells; c; c = c->next) {
		if (c->metric == metric) {
			*out = c;
			return FP_OK;
		}
	}
	c = fp_arena_alloc(&t->arena, sizeof(*c));
	if (!c)
		return fp_arena_last_error(&t->arena) ? fp_arena_last_error(&t->arena) : FP_ENOMEM;
	c->metric = metric;
	c->flags = 0;
	c->str = 0;
	c->self = 0;
	c->total = 0;
	c->next = n->cells;
	n->cells = c;
	*out = c;
	return FP_OK;
}

int fp_calltree_add_metric(struct fp_calltree *t, uint32_t node, uint32_t metric, double value)
{
	struct fp__ct_cell *c = NULL; /* NULL: gcc -O3 cannot see cell_get() set it on success */
	int rc;

	if (!t)
		return FP_EINVAL;
	rc = fp__calltree_cell_get(t, node, metric, &c);
	if (rc)
		return rc;
	switch ((enum fp_metric_kind)t->kinds[metric]) {
	case FP_METRIC_INCLUSIVE:
	case FP_METRIC_EXCLUSIVE:
		c->self += value;
		break;
	case FP_METRIC_PROPERTY:
		c->self = value;
		c->flags &= ~FP__CELL_STRING;
		break;
	case FP_METRIC_MIN:
		if (!(c->flags & FP__CELL_SELF) || value < c->self)
			c->self = value;
		break;
	case FP_METRIC_MAX:
		if (!(c->flags & FP__CELL_SELF) || value > c->self)
			c->self = value;
		break;
	}
	c->flags |= FP__CELL_SELF;
	c->total = c->self;
	t->finalized = false;
	return FP_OK;
}

int fp_calltree_set_string(struct fp_calltree *t, uint32_t node, uint32_t metric, const char *s,
			   size_t len)
{
	struct fp__ct_cell *c;
	uint32_t sid;
	int rc;

	if (!t || (!s && len) || metric >= fp_intern_count(t->metrics) ||
	    t->kinds[metric] != FP_METRIC_PROPERTY || !fp__ct_node(t, node))
		return FP_EINVAL;
	rc = fp_intern_add(t->names, s, len, &sid);
	if (rc)
		return rc;
	rc = fp__calltree_cell_get(t, node, metric, &c);
	if (rc)
		return rc;
	c->flags |= FP__CELL_SELF | FP__CELL_STRING;
	c->str = sid;
	c->self = c->total = 0;
	return FP_OK;
}

int fp_calltree_finalize(struct fp_calltree *t)
{
	size_t i;

	if (!t)
		return FP_EINVAL;
	if (t->finalized)
		return FP_OK;
	for (i = 0; i < t->count; i++) {
		struct fp__ct_cell *c;

		for (c = fp__ct_node(t, (uint32_t)i)->cells; c; c = c->next)
			c->total = c->self;
	}
	/* Children have larger ids than their parents: one backward pass sees every child's
	 * final total before its parent is visited. */
	for (i = t->count; i-- > 1;) {
		const struct fp__ct_node *n = fp__ct_node(t, (uint32_t)i);
		struct fp__ct_cell *c;

		for (c = n->cells; c; c = c->next) {
			struct fp__ct_cell *pc;
			int rc;

			if (t->kinds[c->metric] != FP_METRIC_INCLUSIVE || c->total == 0)
				continue;
			rc = fp__calltree_cell_get(t, n->parent, c->metric, &pc);
			if (rc)
				return rc;
			pc->total += c->total;
		}
	}
	t->finalized = true;
	return FP_OK;
}

bool fp_calltree_is_finalized(const struct fp_calltree *t)
{
	return t && t->finalized;
}

static void fill_value(const struct fp_calltree *t, const struct fp__ct_cell *c,
		       struct fp_calltree_value *out)
{
	out->metric = c->metric;
	out->kind = (enum fp_metric_kind)t->kinds[c->metric];
	out->is_string = (c->flags & FP__CELL_STRING) != 0;
	out->self = c->self;
	out->total = c->total;
	out->str = out->is_string ? fp_intern_str(t->names, c->str, &out->str_len) : NULL;
	if (!out->is_string)
		out->str_len = 0;
}

int fp_calltree_get(const struct fp_calltree *t, uint32_t node, uint32_t metric,
		    struct fp_calltree_value *out)
{
	const struct fp__ct_cell *c;

	if (!t || !fp__ct_node(t, node) || metric >= fp_intern_count(t->metrics))
		return FP_EINVAL;
	c = fp__calltree_cell(t, node, metric);
	if (!c)
		return FP_ENOENT;
	if (out)
		fill_value(t, c, out);
	return FP_OK;
}

size_t fp_calltree_node_metrics(const struct fp_calltree *t, uint32_t node,
				struct fp_calltree_value *out, size_t cap)
{
	const struct fp__ct_node *n = t ? fp__ct_node(t, node) : NULL;
	const struct fp__ct_cell *c;
	size_t count = 0, i, j;

	if (!n)
		return 0;
	for (c = n->cells; c; c = c->next)
		count++;
	if (count > cap)
		return count;
	i = 0;
	for (c = n->cells; c; c = c->next)
		fill_value(t, c, &out[i++]);
	/* Few cells per node: insertion sort by metric name. */
	for (i = 1; i < count; i++) {
		struct fp_calltree_value v = out[i];

		for (j = i; j > 0 && fp__calltree_metric_cmp(t, out[j - 1].metric, v.metric) > 0;
		     j--)
			out[j] = out[j - 1];
		out[j] = v;
	}
	return count;
}

/* ---- device table -------------------------------------------------------------------------- */

static bool all_digits(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Device indices "2" < "10": compare decimal strings as numbers, others bytewise. */
static int index_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	if (all_digits(a, alen) && all_digits(b, blen)) {
		while (alen > 1 && *a == '0')
			a++, alen--;
		while (blen > 1 && *b == '0')
			b++, blen--;
		if (alen != blen)
			return alen < blen ? -1 : 1;
	}
	return fp__prof_strcmp_n(a, alen, b, blen);
}

static int device_cmp(const struct fp_calltree *t, const struct fp__ct_device *x,
		      const struct fp__ct_device *y)
{
	size_t al, bl;
	const char *as, *bs;
	int c;

	as = fp_intern_str(t->names, x->type, &al);
	bs = fp_intern_str(t->names, y->type, &bl);
	c = fp__prof_strcmp_n(as, al, bs, bl);
	if (c)
		return c;
	as = fp_intern_str(t->names, x->index, &al);
	bs = fp_intern_str(t->names, y->index, &bl);
	c = index_cmp(as, al, bs, bl);
	if (c)
		return c;
	as = fp_intern_str(t->names, x->key, &al);
	bs = fp_intern_str(t->names, y->key, &bl);
	return fp__prof_strcmp_n(as, al, bs, bl);
}

#define FP__CT_MAX_DEVICE_ATTRS 65536

int fp__calltree_device_set_n(struct fp_calltree *t, const char *type, size_t tlen,
			      const char *index, size_t ilen, const char *key, size_t klen,
			      bool is_string, double value, const char *str, size_t slen)
{
	struct fp__ct_device d = {0};
	size_t lo, hi;
	int rc;

	if ((rc = fp_intern_add(t->names, type, tlen, &d.type)) ||
	    (rc = fp_intern_add(t->names, index, ilen, &d.index)) ||
	    (rc = fp_intern_add(t->names, key, klen, &d.key)))
		return rc;
	d.is_string = is_string;
	d.value = is_string ? 0 : value;
	if (is_string && (rc = fp_intern_add(t->names, str, slen, &d.str)))
		return rc;
	/* Binary search for the slot; replace an equal key. */
	lo = 0;
	hi = t->ndevices;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = device_cmp(t, &t->devices[mid], &d);

		if (c == 0) {
			t->devices[mid] = d;
			return FP_OK;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (t->ndevices >= FP__CT_MAX_DEVICE_ATTRS)
		return FP_ELIMIT;
	if (t->ndevices == t->devices_alloc) {
		size_t na = t->devices_alloc ? t->devices_alloc * 2 : 8;
		struct fp__ct_device *nd = fp_reallocarray(t->devices, na, sizeof(*nd));

		if (!nd)
			return FP_ENOMEM;
		t->devices = nd;
		t->devices_alloc = na;
	}
	memmove(&t->devices[lo + 1], &t->devices[lo], (t->ndevices - lo) * sizeof(d));
	t->devices[lo] = d;
	t->ndevices++;
	return FP_OK;
}

int fp_calltree_device_set(struct fp_calltree *t, const char *type, const char *index,
			   const char *key, double value)
{
	if (!t || !type || !index || !key)
		return FP_EINVAL;
	return fp__calltree_device_set_n(t, type, strlen(type), index, strlen(index), key,
					 strlen(key), false, value, NULL, 0);
}

int fp_calltree_device_set_str(struct fp_calltree *t, const char *type, const char *index,
			       const char *key, const char *value)
{
	if (!t || !type || !index || !key || !value)
		return FP_EINVAL;
	return fp__calltree_device_set_n(t, type, strlen(type), index, strlen(index), key,
					 strlen(key), true, 0, value, strlen(value));
}

size_t fp_calltree_device_count(const struct fp_calltree *t)
{
	return t ? t->ndevices : 0;
}

int fp_calltree_device_at(const struct fp_calltree *t, size_t i,
			  struct fp_calltree_device_attr *out)
{
	const struct fp__ct_device *d;

	if (!t || i >= t->ndevices)
		return FP_ENOENT;
	d = &t->devices[i];
	out->type = fp_intern_str(t->names, d->type, NULL);
	out->index = fp_intern_str(t->names, d->index, NULL);
	out->key = fp_intern_str(t->names, d->key, NULL);
	out->is_string = d->is_string;
	out->value = d->value;
	out->str = d->is_string ? fp_intern_str(t->names, d->str, NULL) : NULL;
	return FP_OK;
}
