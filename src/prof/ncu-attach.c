/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Putting Nsight Compute launches on profile nodes (fp_ncu_attach) and the launch order a
 * Chrome trace gives (fp_ncu_order_*). Matching is by kernel name and order, with the grid as
 * a check when the trace has it; aggregation is per node: counters summed, ratios averaged
 * (weighted by launch duration when every launch has one). The rules are written out in
 * docs/formats/profiler-formats.md ("Nsight Compute import"); this file implements them and nothing
 * else (no parsing, no file writing).
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/demangle.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "core/hashmap-internal.h"
#include "prof/ncu-internal.h"

/* ---- launch order from a Chrome trace ------------------------------------------------------ */

struct order_event {
	uint32_t node;
	bool has_grid;
	uint32_t grid[3];
	uint64_t correlation;
	double ts;
	size_t seq;
};

struct fp_ncu_order {
	struct order_event *ev;
	size_t n;
	size_t unresolved;
	uint64_t dropped; /* otherData.dropped_records */
};

static int cmp_corr(const void *a, const void *b)
{
	const struct order_event *x = a, *y = b;

	if (x->correlation != y->correlation)
		return x->correlation < y->correlation ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct order_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The node at ROOT / call_stack... / name, or FP_CALLTREE_NONE. */
static int resolve(struct fp_calltree *t, const struct fp_json_value *stack, const char *name,
		   size_t nlen, uint32_t *node)
{
	uint32_t cur = FP_CALLTREE_ROOT, frame;
	size_t i, n = fp_json_len(stack), len;
	int rc;

	*node = FP_CALLTREE_NONE;
	for (i = 0; i <= n; i++) {
		const char *s = i < n ? fp_json_string(fp_json_at(stack, i), &len) : name;

		if (i == n)
			len = nlen;
		if (!s)
			return FP_OK;
		rc = fp_calltree_intern(t, s, len, &frame);
		if (rc)
			return rc;
		if (fp_calltree_child_find(t, cur, frame, &cur) != FP_OK)
			return FP_OK;
	}
	*node = cur;
	return FP_OK;
}

int fp_ncu_order_from_trace(struct fp_calltree *t, const char *text, size_t len,
			    struct fp_ncu_order **out, struct fp_diag *diag)
{
	const struct fp_json_value *root, *events, *e, *args, *grid;
	struct fp_json_doc *doc = NULL;
	struct fp_ncu_order *o;
	bool all_corr = true;
	size_t i, n, cap = 0, nlen;
	const char *name, *ph, *cat;
	double d;
	int rc;

	fp_diag_clear(diag);
	if (!t || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "no tree or no output");
	rc = fp_json_parse(text, len, NULL, &doc, diag);
	if (rc)
		return rc;
	root = fp_json_root(doc);
	events = fp_json_type(root) == FP_JSON_ARRAY ? root : fp_json_get(root, "traceEvents");
	if (fp_json_type(events) != FP_JSON_ARRAY) {
		rc = fp_diag_set(diag, FP_EFORMAT, fp_json_offset(root),
				 "not a Chrome trace: no 'traceEvents' array");
		goto fail_doc;
	}
	o = fp_calloc(1, sizeof(*o));
	if (!o) {
		rc = FP_ENOMEM;
		goto fail_doc;
	}
	fp_json_uint64(fp_json_get(fp_json_get(root, "otherData"), "dropped_records"), &o->dropped);
	n = fp_json_len(events);
	for (i = 0; i < n; i++) {
		struct order_event ev;

		e = fp_json_at(events, i);
		ph = fp_json_string(fp_json_get(e, "ph"), NULL);
		cat = fp_json_string(fp_json_get(e, "cat"), NULL);
		name = fp_json_string(fp_json_get(e, "name"), &nlen);
		if (!ph || strcmp(ph, "X") != 0 || !cat || strcmp(cat, "kernel") != 0 || !name)
			continue;
		memset(&ev, 0, sizeof(ev));
		args = fp_json_get(e, "args");
		rc = resolve(t, fp_json_get(args, "call_stack"), name, nlen, &ev.node);
		if (rc)
			goto fail_order;
		if (ev.node == FP_CALLTREE_NONE) {
			o->unresolved++;
			continue;
		}
		grid = fp_json_get(args, "grid");
		if (fp_json_len(grid) == 3) {
			size_t k;
			uint64_t g;

			ev.has_grid = true;
			for (k = 0; k < 3; k++) {
				if (!fp_json_uint64(fp_json_at(grid, k), &g) || g > UINT32_MAX)
					ev.has_grid = false;
				else
					ev.grid[k] = (uint32_t)g;
			}
		}
		if (!fp_json_uint64(fp_json_get(args, "correlation"), &ev.correlation) ||
		    ev.correlation == 0)
			all_corr = false;
		ev.ts = fp_json_number(fp_json_get(e, "ts"), &d) ? d : 0;
		ev.seq = o->n;
		if (o->n == cap) {
			struct order_event *p;

			cap = cap ? cap * 2 : 256;
			p = fp_reallocarray(o->ev, cap, sizeof(*p));
			if (!p) {
				rc = FP_ENOMEM;
				goto fail_order;
			}
			o->ev = p;
		}
		o->ev[o->n++] = ev;
	}
	/* The host assigns correlation ids in launch order; timestamps are the fallback. */
	if (o->n)
		qsort(o->ev, o->n, sizeof(*o->ev), all_corr ? cmp_corr : cmp_ts);
	fp_json_doc_free(doc);
	*out = o;
	return FP_OK;

fail_order:
	fp_ncu_order_free(o);
fail_doc:
	fp_json_doc_free(doc);
	if (rc == FP_ENOMEM || rc == FP_ELIMIT)
		fp_diag_set(diag, rc, 0, "%s reading the trace", fp_strerror(rc));
	return rc;
}

int fp_ncu_order_read_trace(struct fp_calltree *t, const char *path, struct fp_ncu_order **out,
			    struct fp_diag *diag)
{
	struct fp_strbuf sb;
	int rc;

	fp_diag_clear(diag);
	if (!path)
		return fp_diag_set(diag, FP_EINVAL, 0, "no path");
	fp_strbuf_init(&sb, 0);
	rc = fp_strbuf_read_path(&sb, path, FP_STRBUF_READ_REGULAR, diag);
	if (!rc) {
		rc = fp_ncu_order_from_trace(t, sb.buf, sb.len, out, diag);
		if (rc && diag) {
			char msg[sizeof(diag->msg)];

			snprintf(msg, sizeof(msg), "%s", diag->msg);
			fp_diag_set_pos(diag, rc, diag->offset, diag->line, diag->col, "%s: %s",
					path, msg);
		}
	}
	fp_strbuf_release(&sb);
	return rc;
}

void fp_ncu_order_free(struct fp_ncu_order *o)
{
	if (!o)
		return;
	fp_free(o->ev);
	fp_free(o);
}

size_t fp_ncu_order_count(const struct fp_ncu_order *o)
{
	return o ? o->n : 0;
}

size_t fp_ncu_order_unresolved(const struct fp_ncu_order *o)
{
	return o ? o->unresolved : 0;
}

/* ---- the profile's launch slots ------------------------------------------------------------ */

/* A run of profile launches of one kernel on one node: n launches (1 with a trace). */
struct slot {
	uint32_t node;
	bool has_grid;
	uint32_t grid[3];
	uint64_t n, used;
};

/* One kernel name of the profile: its slots in launch order, and the matching cursor. */
struct kernel {
	uint32_t frame;
	size_t first, count; /* slots[first .. first + count) */
	size_t cursor;
	size_t fill; /* while building */
	bool several_nodes;
	bool hit;
};

/* (node, metric) accumulator. */
struct acc {
	uint32_t node;
	uint32_t tm;          /* index into r->tmetrics */
	double sum;           /* SUM: the sum; MEAN: sum of values */
	double tw_sum, t_sum; /* MEAN: sum of value * duration, of durations */
	uint64_t n;
	bool all_timed;
};

struct actx {
	struct fp_ncu_report *r;
	struct fp_calltree *t;
	struct fp_diag *diag;
	uint32_t count_metric;
	bool has_count;
	struct slot *slots;
	size_t nslots;
	struct kernel *kernels;
	size_t nkernels, alloc_kernels;
	struct fp_hashmap kernel_of_frame; /* frame + 1 -> kernel index */
	struct fp_intern *ncu_names;       /* ncu kernel name -> id */
	size_t *resolved; /* id -> kernel index + 1, 0: not resolved, SIZE_MAX: none */
	size_t nresolved;
	struct fp_hashmap acc_of; /* (node + 1) << 32 | tm -> acc index */
	struct acc *accs;
	size_t naccs, alloc_accs;
	struct fp_hashmap tm_of_id; /* tree metric id + 1 -> tmetrics index */
	size_t alloc_tm;
	struct fp_hashmap nodes; /* distinct nodes that got metrics */
	char *demangled;         /* FP_DEMANGLE_MAX + 1: a mangled ncu name, demangled */
};

static uint64_t node_count(struct actx *c, uint32_t node)
{
	struct fp_calltree_value v;
	double n;

	if (!c->has_count || fp_calltree_get(c->t, node, c->count_metric, &v) != FP_OK ||
	    v.is_string)
		return 0;
	n = v.self;
	/* Merged profiles hold mean counts: round them. */
	if (!isfinite(n) || n < 0.5)
		return 0;
	return n > 1e15 ? (uint64_t)1e15 : (uint64_t)llround(n);
}

/* Kernel nodes in tree order: depth first, children by name. Calls fn for each. */
static int walk_kernels(struct actx *c, int (*fn)(struct actx *, uint32_t node, uint64_t n))
{
	uint32_t *stack = NULL, *kids = NULL;
	size_t sp = 0, salloc = 0, kalloc = 0, k, nk;
	uint32_t node;
	uint64_t n;
	int rc = FP_OK;

	if (!(stack = fp_reallocarray(NULL, salloc = 64, sizeof(*stack))))
		return FP_ENOMEM;
	stack[sp++] = FP_CALLTREE_ROOT;
	while (sp) {
		node = stack[--sp];
		n = node_count(c, node);
		if (n) {
			rc = fn(c, node, n);
			if (rc)
				break;
		}
		nk = fp_calltree_node_child_count(c->t, node);
		if (nk > kalloc) {
			uint32_t *p = fp_reallocarray(kids, nk, sizeof(*kids));

			if (!p) {
				rc = FP_ENOMEM;
				break;
			}
			kids = p;
			kalloc = nk;
		}
		nk = fp_calltree_sorted_children(c->t, node, kids, kalloc);
		if (sp + nk > salloc) {
			size_t want = FP_MAX(salloc * 2, sp + nk);
			uint32_t *p = fp_reallocarray(stack, want, sizeof(*stack));

			if (!p) {
				rc = FP_ENOMEM;
				break;
			}
			stack = p;
			salloc = want;
		}
		/* Push in reverse so the first child by name is visited first. */
		for (k = nk; k > 0; k--)
			stack[sp++] = kids[k - 1];
	}
	fp_free(stack);
	fp_free(kids);
	return rc;
}

static int kernel_of(struct actx *c, uint32_t frame, bool create, size_t *out)
{
	uint64_t v;
	int rc;

	if (fp_hashmap_get(&c->kernel_of_frame, (uint64_t)frame + 1, &v)) {
		*out = (size_t)v;
		return FP_OK;
	}
	if (!create)
		return FP_ENOENT;
	if (c->nkernels == c->alloc_kernels) {
		size_t want = c->alloc_kernels ? c->alloc_kernels * 2 : 16;
		struct kernel *p = fp_reallocarray(c->kernels, want, sizeof(*p));

		if (!p)
			return FP_ENOMEM;
		c->kernels = p;
		c->alloc_kernels = want;
	}
	memset(&c->kernels[c->nkernels], 0, sizeof(c->kernels[0]));
	c->kernels[c->nkernels].frame = frame;
	rc = fp_hashmap_put(&c->kernel_of_frame, (uint64_t)frame + 1, c->nkernels);
	if (rc)
		return rc;
	*out = c->nkernels++;
	return FP_OK;
}

/* Pass 1 of the count order: how many slots each kernel has. */
static int count_runs(struct actx *c, uint32_t node, uint64_t n)
{
	size_t k;
	int rc = kernel_of(c, fp_calltree_node_frame(c->t, node), true, &k);

	(void)n;
	if (rc)
		return rc;
	if (c->kernels[k].count)
		c->kernels[k].several_nodes = true;
	c->kernels[k].count++;
	return FP_OK;
}

/* Pass 2: fill them in tree order. */
static int fill_runs(struct actx *c, uint32_t node, uint64_t n)
{
	size_t k;
	struct slot *s;
	int rc = kernel_of(c, fp_calltree_node_frame(c->t, node), false, &k);

	if (rc)
		return rc;
	s = &c->slots[c->kernels[k].first + c->kernels[k].fill++];
	memset(s, 0, sizeof(*s));
	s->node = node;
	s->n = n;
	return FP_OK;
}

static int alloc_slots(struct actx *c)
{
	size_t k, total = 0;

	for (k = 0; k < c->nkernels; k++) {
		c->kernels[k].first = total;
		total += c->kernels[k].count;
	}
	c->nslots = total;
	c->slots = fp_calloc(total ? total : 1, sizeof(*c->slots));
	return c->slots ? FP_OK : FP_ENOMEM;
}

/* Whether the trace holds exactly the launches the tree counts; if not, why. */
static int order_usable(struct actx *c, const struct fp_ncu_order *o, bool *ok)
{
	struct fp_hashmap per_node;
	struct fp_ncu_attach_stats *st = &c->r->stats;
	uint64_t v, total = 0;
	size_t i;
	int rc = FP_OK;

	*ok = false;
	if (o->dropped) {
		snprintf(st->order_note, sizeof(st->order_note),
			 "the trace dropped %" PRIu64 " records", o->dropped);
		return FP_OK;
	}
	if (o->unresolved) {
		snprintf(st->order_note, sizeof(st->order_note),
			 "%zu trace kernel events are not in the profile", o->unresolved);
		return FP_OK;
	}
	fp_hashmap_init(&per_node);
	for (i = 0; i < o->n; i++) {
		uint64_t key = (uint64_t)o->ev[i].node + 1;

		v = 0;
		fp_hashmap_get(&per_node, key, &v);
		rc = fp_hashmap_put(&per_node, key, v + 1);
		if (rc)
			goto out;
	}
	for (i = 0; i < c->nslots; i++) {
		v = 0;
		fp_hashmap_get(&per_node, (uint64_t)c->slots[i].node + 1, &v);
		total += c->slots[i].n;
		if (v != c->slots[i].n) {
			const char *name = fp_calltree_node_name(c->t, c->slots[i].node, NULL);

			snprintf(st->order_note, sizeof(st->order_note),
				 "the trace has %" PRIu64
				 " launches of a '%.100s' node, the profile %" PRIu64,
				 v, name ? name : "?", c->slots[i].n);
			goto out;
		}
	}
	if (total != o->n) {
		snprintf(st->order_note, sizeof(st->order_note),
			 "the trace has %zu kernel launches, the profile's kernel nodes %" PRIu64,
			 o->n, total);
		goto out;
	}
	*ok = true;
out:
	fp_hashmap_release(&per_node);
	return rc;
}

/* Replace the count runs with one slot per traced launch, in launch order. */
static int trace_slots(struct actx *c, const struct fp_ncu_order *o)
{
	struct slot *slots;
	size_t i, k;

	slots = fp_calloc(o->n ? o->n : 1, sizeof(*slots));
	if (!slots)
		return FP_ENOMEM;
	for (k = 0; k < c->nkernels; k++) {
		c->kernels[k].count = 0;
		c->kernels[k].fill = 0;
	}
	for (i = 0; i < o->n; i++) {
		if (kernel_of(c, fp_calltree_node_frame(c->t, o->ev[i].node), false, &k) == FP_OK)
			c->kernels[k].count++;
	}
	for (i = 0, k = 0; k < c->nkernels; k++) {
		c->kernels[k].first = i;
		i += c->kernels[k].count;
	}
	for (i = 0; i < o->n; i++) {
		struct slot *s;

		if (kernel_of(c, fp_calltree_node_frame(c->t, o->ev[i].node), false, &k) != FP_OK)
			continue;
		s = &slots[c->kernels[k].first + c->kernels[k].fill++];
		s->node = o->ev[i].node;
		s->has_grid = o->ev[i].has_grid;
		memcpy(s->grid, o->ev[i].grid, sizeof(s->grid));
		s->n = 1;
	}
	fp_free(c->slots);
	c->slots = slots;
	c->nslots = o->n;
	return FP_OK;
}

/* The profile kernel a ncu kernel name goes to: exact name, else a unique base-name match. */
static int resolve_kernel(struct actx *c, const char *name, size_t *k, bool *by_base)
{
	char a[512], b[512];
	uint32_t id, frame;
	size_t i, found = SIZE_MAX;
	int rc;

	*by_base = false;
	rc = fp_intern_add_str(c->ncu_names, name, &id);
	if (rc)
		return rc;
	if (id >= c->nresolved) {
		size_t want = FP_MAX((size_t)id + 1, c->nresolved * 2);
		size_t *p = fp_reallocarray(c->resolved, want, sizeof(*p));

		if (!p)
			return FP_ENOMEM;
		memset(p + c->nresolved, 0, (want - c->nresolved) * sizeof(*p));
		c->resolved = p;
		c->nresolved = want;
	}
	if (c->resolved[id]) {
		if (c->resolved[id] == SIZE_MAX)
			return FP_ENOENT;
		*k = (c->resolved[id] - 1) & ~((size_t)1 << (sizeof(size_t) * 8 - 1));
		*by_base = (c->resolved[id] - 1) >> (sizeof(size_t) * 8 - 1);
		return FP_OK;
	}
	if (fp_demangle_is_mangled(name, strlen(name)) &&
	    fp_demangle(name, strlen(name), FP_DEMANGLE_FULL, c->demangled, FP_DEMANGLE_MAX + 1,
			NULL) == FP_OK)
		name = c->demangled; /* profiles file C++ kernels under their demangled names */
	rc = fp_calltree_intern(c->t, name, strlen(name), &frame);
	if (rc)
		return rc;
	if (kernel_of(c, frame, false, k) == FP_OK) {
		c->resolved[id] = *k + 1;
		return FP_OK;
	}
	fp__ncu_base_name(name, a, sizeof(a));
	for (i = 0; *a && i < c->nkernels; i++) {
		fp__ncu_base_name(fp_calltree_frame_name(c->t, c->kernels[i].frame, NULL), b,
				  sizeof(b));
		if (strcmp(a, b) != 0)
			continue;
		if (found != SIZE_MAX) { /* two candidates: refuse to guess */
			found = SIZE_MAX;
			break;
		}
		found = i;
	}
	if (found == SIZE_MAX) {
		c->resolved[id] = SIZE_MAX;
		return FP_ENOENT;
	}
	*k = found;
	*by_base = true;
	/* The top bit remembers "by base name". */
	c->resolved[id] = (found | ((size_t)1 << (sizeof(size_t) * 8 - 1))) + 1;
	return FP_OK;
}

static int set_reason(struct actx *c, struct fp_ncu_launch *l, const char *fmt, ...)
	FP_PRINTF(3, 4);

static int set_reason(struct actx *c, struct fp_ncu_launch *l, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	l->unmatched = fp_arena_strndup(&c->r->arena, buf, strlen(buf));
	return l->unmatched ? FP_OK : fp_arena_last_error(&c->r->arena);
}

static bool same_grid(const struct slot *s, const struct fp_ncu_launch *l)
{
	return s->grid[0] == l->grid[0] && s->grid[1] == l->grid[1] && s->grid[2] == l->grid[2];
}

/* Find the node for launch `l`; on failure l->unmatched says why. */
static int match(struct actx *c, struct fp_ncu_launch *l, size_t index)
{
	struct kernel *k;
	size_t ki, s, end;
	uint64_t total = 0;
	bool by_base;
	int rc;

	rc = resolve_kernel(c, l->kernel, &ki, &by_base);
	if (rc == FP_ENOENT)
		return set_reason(c, l, "no kernel node named '%s' in the profile", l->kernel);
	if (rc)
		return rc;
	k = &c->kernels[ki];
	end = k->first + k->count;
	for (s = k->first; s < end; s++)
		total += c->slots[s].n;
	s = k->first + k->cursor;
	while (s < end && c->slots[s].used == c->slots[s].n)
		s++;
	if (s == end)
		return set_reason(c, l,
				  "surplus launch: the profile has %" PRIu64
				  " launches of '%s', all already matched",
				  total, fp_calltree_frame_name(c->t, k->frame, NULL));
	if (c->r->stats.used_trace && l->has_grid) {
		size_t g = s;

		while (g < end && !(c->slots[g].has_grid && same_grid(&c->slots[g], l)) &&
		       c->slots[g].has_grid)
			g++;
		if (g == end)
			return set_reason(c, l,
					  "grid (%u, %u, %u) matches none of the %zu remaining "
					  "profile launches of '%s'",
					  (unsigned)l->grid[0], (unsigned)l->grid[1],
					  (unsigned)l->grid[2], end - s,
					  fp_calltree_frame_name(c->t, k->frame, NULL));
		s = g; /* the profile launches skipped stay without ncu data */
	}
	c->slots[s].used++;
	k->cursor = s - k->first;
	k->hit = true;
	l->node = c->slots[s].node;
	if (by_base)
		c->r->stats.by_base_name++;
	(void)index;
	return FP_OK;
}

/* The tree metric for a launch metric, registered on first use. */
static int tree_metric(struct actx *c, const struct fp_ncu_metric *m, size_t *tm)
{
	struct fp_ncu_report *r = c->r;
	struct fp__ncu_tree_metric *d;
	char name[768];
	uint32_t id;
	uint64_t v;
	int n, rc;

	n = fp_ncu_tree_metric_name(m, name, sizeof(name));
	if (n < 0)
		return n;
	rc = fp_calltree_metric(c->t, name, (size_t)n,
				m->agg == FP_NCU_AGG_SUM ? FP_METRIC_INCLUSIVE : FP_METRIC_PROPERTY,
				&id);
	if (rc)
		return fp_diag_set(c->diag, rc, 0, "cannot add metric '%s' to the profile", name);
	if (fp_hashmap_get(&c->tm_of_id, (uint64_t)id + 1, &v)) {
		*tm = (size_t)v;
		return FP_OK;
	}
	if (r->ntmetrics == c->alloc_tm) {
		size_t want = c->alloc_tm ? c->alloc_tm * 2 : 32;
		struct fp__ncu_tree_metric *p = fp_reallocarray(r->tmetrics, want, sizeof(*p));

		if (!p)
			return FP_ENOMEM;
		r->tmetrics = p;
		c->alloc_tm = want;
	}
	d = &r->tmetrics[r->ntmetrics];
	memset(d, 0, sizeof(*d));
	/* A copy: the vendor file may be written after the tree is gone. */
	d->tree_name = fp_arena_strndup(&r->arena, name, (size_t)n);
	if (!d->tree_name)
		return fp_arena_last_error(&r->arena);
	d->section = m->section;
	d->name = m->name;
	d->base_unit = m->base_unit;
	d->agg = m->agg;
	d->id = id;
	rc = fp_hashmap_put(&c->tm_of_id, (uint64_t)id + 1, r->ntmetrics);
	if (rc)
		return rc;
	*tm = r->ntmetrics++;
	return FP_OK;
}

static int accumulate(struct actx *c, uint32_t node, size_t tm, double v, double dur)
{
	uint64_t key = ((uint64_t)node + 1) << 32 | (uint64_t)tm, idx;
	struct acc *a;
	int rc;

	if (!fp_hashmap_get(&c->acc_of, key, &idx)) {
		if (c->naccs == c->alloc_accs) {
			size_t want = c->alloc_accs ? c->alloc_accs * 2 : 256;
			struct acc *p = fp_reallocarray(c->accs, want, sizeof(*p));

			if (!p)
				return FP_ENOMEM;
			c->accs = p;
			c->alloc_accs = want;
		}
		idx = c->naccs;
		rc = fp_hashmap_put(&c->acc_of, key, idx);
		if (rc)
			return rc;
		a = &c->accs[c->naccs++];
		memset(a, 0, sizeof(*a));
		a->node = node;
		a->tm = (uint32_t)tm;
		a->all_timed = true;
	}
	a = &c->accs[idx];
	a->sum += v;
	a->n++;
	if (dur > 0) {
		a->tw_sum += v * dur;
		a->t_sum += dur;
	} else {
		a->all_timed = false;
	}
	c->r->tmetrics[tm].values++;
	return FP_OK;
}

static int add_launch_metrics(struct actx *c, const struct fp_ncu_launch *l)
{
	static const struct fp_ncu_metric launches = {"",   "launches",     "",         "", "", 1,
						      true, FP_NCU_AGG_SUM, FP_NCU_NONE};
	size_t i, tm;
	int rc;

	rc = fp_hashmap_put(&c->nodes, (uint64_t)l->node + 1, 1);
	if (!rc)
		rc = tree_metric(c, &launches, &tm);
	if (!rc)
		rc = accumulate(c, l->node, tm, 1, l->duration_ns);
	for (i = 0; !rc && i < l->nmetrics; i++) {
		const struct fp_ncu_metric *m = &l->metrics[i];

		if (!m->has_value) {
			c->r->stats.values_missing++;
			continue;
		}
		rc = tree_metric(c, m, &tm);
		if (!rc)
			rc = accumulate(c, l->node, tm, m->value, l->duration_ns);
		c->r->stats.values++;
	}
	return rc;
}

static int apply(struct actx *c)
{
	struct fp_ncu_report *r = c->r;
	size_t i;
	int rc;

	for (i = 0; i < c->naccs; i++) {
		const struct acc *a = &c->accs[i];
		struct fp__ncu_tree_metric *d = &r->tmetrics[a->tm];
		double v = a->sum;

		if (d->agg == FP_NCU_AGG_MEAN) {
			if (a->all_timed && a->t_sum > 0) {
				v = a->tw_sum / a->t_sum;
				d->weighted_by_time = true;
			} else {
				v = a->sum / (double)a->n;
				d->weighted_by_launches = true;
			}
		}
		rc = fp_calltree_add_metric(c->t, a->node, d->id, v);
		if (rc)
			return rc;
	}
	for (i = 0; i < r->ntmetrics; i++)
		if (r->tmetrics[i].agg == FP_NCU_AGG_SUM)
			r->stats.summed++;
	r->stats.metrics = r->ntmetrics;
	r->stats.nodes = fp_hashmap_count(&c->nodes);
	return FP_OK;
}

/* Profile launches that got no ncu launch, per node, for the vendor file. */
static int collect_missing(struct actx *c)
{
	struct fp_ncu_report *r = c->r;
	struct fp_hashmap at;
	size_t i;
	uint64_t v;
	int rc = FP_OK;

	fp_hashmap_init(&at);
	for (i = 0; i < c->nslots; i++) {
		const struct slot *s = &c->slots[i];
		uint64_t left = s->n - s->used;

		r->stats.profile_launches += s->n;
		if (!left)
			continue;
		r->stats.profile_unmatched += left;
		if (fp_hashmap_get(&at, (uint64_t)s->node + 1, &v)) {
			r->missing[v].count += left;
			continue;
		}
		if (!r->missing) {
			r->missing = fp_calloc(c->nslots, sizeof(*r->missing));
			if (!r->missing) {
				rc = FP_ENOMEM;
				break;
			}
		}
		rc = fp_hashmap_put(&at, (uint64_t)s->node + 1, r->nmissing);
		if (rc)
			break;
		r->missing[r->nmissing].node = s->node;
		r->missing[r->nmissing].count = left;
		r->nmissing++;
	}
	fp_hashmap_release(&at);
	return rc;
}

static bool has_ncu_metrics(const struct fp_calltree *t, const char **which)
{
	uint32_t i, n = fp_calltree_metric_count(t);

	for (i = 0; i < n; i++) {
		const char *name = fp_calltree_metric_name(t, i, NULL, NULL);

		if (name && strncmp(name, "ncu:", 4) == 0) {
			*which = name;
			return true;
		}
	}
	return false;
}

int fp_ncu_attach(struct fp_ncu_report *r, struct fp_calltree *t, const struct fp_ncu_order *order,
		  struct fp_ncu_attach_stats *st, struct fp_diag *diag)
{
	struct actx c;
	const char *which;
	bool usable = false;
	size_t i, k;
	int rc;

	fp_diag_clear(diag);
	if (!r || !t)
		return fp_diag_set(diag, FP_EINVAL, 0, "no report or no profile");
	if (r->attached)
		return fp_diag_set(diag, FP_ESTATE, 0, "this report was already attached");
	if (has_ncu_metrics(t, &which))
		return fp_diag_set(diag, FP_ESTATE, 0,
				   "the profile already has Nsight Compute metrics ('%s'): import "
				   "into the profile as it was written",
				   which);
	memset(&c, 0, sizeof(c));
	c.r = r;
	c.t = t;
	c.diag = diag;
	/* What a failed attempt may have left. */
	memset(&r->stats, 0, sizeof(r->stats));
	fp_free(r->tmetrics);
	fp_free(r->missing);
	r->tmetrics = NULL;
	r->missing = NULL;
	r->ntmetrics = 0;
	r->nmissing = 0;
	r->stats.launches = r->nlaunches;
	fp_hashmap_init(&c.kernel_of_frame);
	fp_hashmap_init(&c.acc_of);
	fp_hashmap_init(&c.tm_of_id);
	fp_hashmap_init(&c.nodes);
	c.ncu_names = fp_intern_new();
	c.demangled = fp_malloc(FP_DEMANGLE_MAX + 1);
	if (!c.ncu_names || !c.demangled) {
		rc = FP_ENOMEM;
		goto out;
	}
	c.has_count = fp_calltree_metric_find(t, "count", 5, &c.count_metric) == FP_OK;
	rc = walk_kernels(&c, count_runs);
	if (!rc)
		rc = alloc_slots(&c);
	if (!rc)
		rc = walk_kernels(&c, fill_runs);
	if (!rc && order) {
		rc = order_usable(&c, order, &usable);
		if (!rc && usable) {
			rc = trace_slots(&c, order);
			r->stats.used_trace = true;
		}
	}
	if (rc)
		goto out;
	for (i = 0; i < r->nlaunches; i++) {
		struct fp_ncu_launch *l = &r->launches[i];

		l->node = FP_CALLTREE_NONE;
		l->unmatched = NULL;
		rc = match(&c, l, i);
		if (rc)
			goto out;
		if (l->node == FP_CALLTREE_NONE) {
			r->stats.unmatched++;
			continue;
		}
		r->stats.matched++;
		rc = add_launch_metrics(&c, l);
		if (rc)
			goto out;
	}
	rc = apply(&c);
	if (!rc)
		rc = collect_missing(&c);
	if (rc)
		goto out;
	if (!r->stats.used_trace)
		for (k = 0; k < c.nkernels; k++)
			if (c.kernels[k].several_nodes && c.kernels[k].hit)
				r->stats.split_kernels++;
	r->attached = true;
out:
	if (rc && diag && !diag->status)
		fp_diag_set(diag, rc, 0, "%s attaching Nsight Compute data", fp_strerror(rc));
	if (st)
		*st = r->stats;
	fp_hashmap_release(&c.kernel_of_frame);
	fp_hashmap_release(&c.acc_of);
	fp_hashmap_release(&c.tm_of_id);
	fp_hashmap_release(&c.nodes);
	fp_intern_free(c.ncu_names);
	fp_free(c.demangled);
	fp_free(c.resolved);
	fp_free(c.slots);
	fp_free(c.kernels);
	fp_free(c.accs);
	return rc;
}
