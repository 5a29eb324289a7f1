/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's findings: verdicts drawn from a decoded run's check slots. The rules are
 * evaluated on the device by the instrumented twin, once per instance (python/flagprism/_checks.py),
 * and folded into one check slot per place and rule; this file turns each slot that fired into
 * a finding and says in plain words what happened: for an access out of bounds, which tensor it
 * derives from, how far it reached and where its first offending address lies (the same
 * allocation, another argument's view or allocation, nothing the launch knows of); for NaN and
 * Inf, where they were born (a load from memory that already held one descends from the origin
 * that wrote it); for the numerical rules, the first offending value. Host tensor descriptors
 * are checked here, at launch, against their base tensor. The rules are documented in
 * docs/guide/debugger.md ("Findings"). This file only reads the run; the report writers print
 * what it found. Not here: decoding (decode.c), the site table (sites.c).
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "debug/debug-internal.h"
#include "debug/report-internal.h"

#define MAX_ARGS 4096u /* tensor arguments of one launch */

/* A finding while it is being made: the public part plus what its message needs. */
struct agg {
	struct fp_dbg_finding f;
	enum fp_dbg_rule rule;    /* the slot's rule (FP_DBG_RULE_UNKNOWN: a host descriptor) */
	const char *inputs;       /* host descriptors: their shape and strides, as text */
	const char *const *reads; /* nan/inf: what the statement reads */
	size_t nreads;
	size_t order; /* creation order: the last sort key */
	uint32_t seq; /* the first instance's sequence (fp_dbg_check_slot.first_seq) */
	bool dropped; /* folded into another finding (a load descending from an origin) */
};

struct fp_dbg_findings {
	struct fp_arena arena; /* strings */
	struct agg *items;
	size_t n, cap;
	struct fp_dbg_finding *out; /* the public array, built at the end */
	size_t nout;
	struct fp_dbg_arg *args;
	size_t nargs;
};

struct ctx {
	const struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	struct fp_diag *diag;
	int err;
	/* the run's parameters and tensor table (fp_dbg_run_params()) */
	const char *const *pnames;
	const struct fp_dbg_table_entry *table;
	size_t np;
};

const char *fp_dbg_oob_where_name(enum fp_dbg_oob_where where)
{
	switch (where) {
	case FP_DBG_OOB_INSIDE_STORAGE:
		return "inside_storage";
	case FP_DBG_OOB_OTHER_STORAGE:
		return "other_storage";
	case FP_DBG_OOB_OUTSIDE:
		return "outside_allocations";
	case FP_DBG_OOB_NONE:
		break;
	}
	return "none";
}

/* ---- tensor argument extents ---------------------------------------------------------------- */

int fp_dbg_arg_set_view(struct fp_dbg_arg *arg, uint64_t data_ptr, uint32_t element_size,
			size_t ndim, const int64_t *shape, const int64_t *strides)
{
	uint64_t below = 0, above = 0, lo, hi;
	bool empty = false;
	size_t d;

	if (!arg || !element_size || (ndim && (!shape || !strides)))
		return FP_EINVAL;
	for (d = 0; d < ndim; d++) {
		uint64_t n, s, reach;

		if (shape[d] < 0)
			return FP_EINVAL;
		if (shape[d] == 0) {
			empty = true;
			continue;
		}
		n = (uint64_t)shape[d] - 1;
		s = strides[d] < 0 ? (uint64_t)0 - (uint64_t)strides[d] : (uint64_t)strides[d];
		if (s && n > UINT64_MAX / s)
			return FP_ELIMIT;
		reach = n * s;
		if (strides[d] < 0) {
			if (below > UINT64_MAX - reach)
				return FP_ELIMIT;
			below += reach;
		} else {
			if (above > UINT64_MAX - reach)
				return FP_ELIMIT;
			above += reach;
		}
	}
	if (empty) {
		lo = hi = data_ptr;
	} else {
		/* elements -> bytes, then around data_ptr; the last element adds one element */
		if (below > UINT64_MAX / element_size || above >= UINT64_MAX / element_size)
			return FP_ELIMIT;
		below *= element_size;
		above = above * element_size + element_size;
		if (below > data_ptr || above > UINT64_MAX - data_ptr)
			return FP_ELIMIT;
		lo = data_ptr - below;
		hi = data_ptr + above;
	}
	arg->data_ptr = data_ptr;
	arg->element_size = element_size;
	arg->view_lo = lo;
	arg->view_hi = hi;
	return FP_OK;
}

/* [lo, hi) inside the non-empty range [rlo, rhi)? */
static bool inside(uint64_t rlo, uint64_t rhi, uint64_t lo, uint64_t hi)
{
	return rlo < rhi && lo >= rlo && hi <= rhi;
}

static void storage_of(const struct fp_dbg_arg *a, uint64_t *lo, uint64_t *hi)
{
	if (a->storage_lo < a->storage_hi) {
		*lo = a->storage_lo;
		*hi = a->storage_hi;
	} else { /* unknown: the view is all we know of the allocation */
		*lo = a->view_lo;
		*hi = a->view_hi;
	}
}

/* The storage of a tensor-table entry (its view when the storage is not known). */
static void entry_storage(const struct fp_dbg_table_entry *e, uint64_t *lo, uint64_t *hi)
{
	if (e->storage_lo < e->storage_hi) {
		*lo = e->storage_lo;
		*hi = e->storage_hi;
	} else {
		*lo = e->view_lo;
		*hi = e->view_hi;
	}
}

/* ---- making findings ---------------------------------------------------------------------- */

static int nomem(struct ctx *x)
{
	if (!x->err)
		x->err = fp_diag_set(x->diag, FP_ENOMEM, 0, "findings: out of memory");
	return x->err;
}

static char *keep(struct ctx *x, const char *s)
{
	char *p = fp_arena_strndup(&x->fs->arena, s, strlen(s));

	if (!p)
		nomem(x);
	return p;
}

/* A new finding of `kind` at statement `stmt` (site index `site` or UINT32_MAX), or NULL. */
static struct agg *add(struct ctx *x, enum fp_dbg_finding_kind kind, uint32_t stmt, uint32_t site)
{
	struct fp_dbg_findings *fs = x->fs;
	struct agg *a;

	if (x->err)
		return NULL;
	if (fs->n == fs->cap) {
		size_t nc = fs->cap ? fs->cap * 2 : 16;
		struct agg *ni = fp_reallocarray(fs->items, nc, sizeof(*ni));

		if (!ni) {
			nomem(x);
			return NULL;
		}
		fs->items = ni;
		fs->cap = nc;
	}
	a = &fs->items[fs->n];
	memset(a, 0, sizeof(*a));
	a->order = fs->n++;
	a->f.kind = kind;
	a->f.statement = stmt;
	a->f.site = site;
	a->f.subject = "";
	a->f.execution = FP_DBG_EXECUTION_UNKNOWN;
	return a;
}

/*
 * The execution of the slot's first instance: in a marker-mode run the check runs just before
 * its site's record, so the program's record counter it saw (first_seq) is that record's slot.
 */
static uint32_t execution_of(const struct fp_dbg_run *run, const struct fp_dbg_check_slot *k)
{
	const struct fp_dbg_record *r;
	size_t n, i;

	if (k->site == UINT32_MAX || !(r = fp_dbg_run_records(run, k->site, &n)))
		return FP_DBG_EXECUTION_UNKNOWN;
	for (i = 0; i < n; i++)
		if (r[i].program == k->first_program && r[i].slot == k->first_seq)
			return r[i].execution;
	return FP_DBG_EXECUTION_UNKNOWN;
}

/* What every finding made from a slot says of its instances. */
static void instances(struct ctx *x, struct agg *a, const struct fp_dbg_check_slot *k)
{
	size_t i;

	a->rule = k->rule;
	a->seq = k->first_seq;
	a->reads = k->reads;
	a->nreads = k->nreads;
	a->f.program = k->first_program;
	a->f.execution = execution_of(x->run, k);
	a->f.loop_var = k->loop_var;
	a->f.loop_line = k->loop_line;
	a->f.loop_value = k->first_iter;
	a->f.instance_count = k->fired;
	for (i = 0; i < k->nprograms; i++)
		a->f.programs[i] = k->programs[i];
	a->f.nprograms = k->nprograms;
	a->f.programs_more = k->programs_more;
	a->f.program_count = k->nprograms;
	a->f.subject = k->subject ? k->subject : "";
}

/* Index of parameter `name` in the run's parameters, or SIZE_MAX. */
static size_t param_index(const struct ctx *x, const char *name)
{
	size_t i;

	for (i = 0; i < x->np; i++)
		if (!strcmp(x->pnames[i], name))
			return i;
	return SIZE_MAX;
}

static bool has_view(const struct fp_dbg_table_entry *e)
{
	return e->view_lo < e->view_hi;
}

/* Distance of address a from the view of e (0 inside). */
static uint64_t view_distance(const struct fp_dbg_table_entry *e, uint64_t a)
{
	if (a < e->view_lo)
		return e->view_lo - a;
	return a >= e->view_hi ? a - e->view_hi + 1 : 0;
}

/*
 * An access that left the view of the tensor it derives from: which tensor (the candidate
 * tensors' nearest, or with none known the nearest tensor of the launch), how far, and where its
 * first offending address lies.
 */
/*
 * Where address `a` lies for an access through parameter `ref` (its allocation [slo, shi)):
 * inside that allocation; else in another parameter's view, then (outside the reference's own
 * allocation only) another's allocation, which slices of one buffer share; else outside every
 * allocation the launch knows. *other: that other parameter's index, or SIZE_MAX.
 */
static enum fp_dbg_oob_where locate(const struct ctx *x, size_t ref, uint64_t slo, uint64_t shi,
				    uint64_t a, size_t *other)
{
	enum fp_dbg_oob_where where =
		a >= slo && a < shi ? FP_DBG_OOB_INSIDE_STORAGE : FP_DBG_OOB_OUTSIDE;
	size_t i, j;

	*other = SIZE_MAX;
	for (j = 0;
	     x->table && j < (where == FP_DBG_OOB_INSIDE_STORAGE ? 1u : 2u) && *other == SIZE_MAX;
	     j++)
		for (i = 0; i < x->np && *other == SIZE_MAX; i++) {
			uint64_t lo, hi;

			if (i == ref || !has_view(&x->table[i]))
				continue;
			if (j == 0) {
				lo = x->table[i].view_lo;
				hi = x->table[i].view_hi;
			} else {
				entry_storage(&x->table[i], &lo, &hi);
			}
			if (a >= lo && a < hi)
				*other = i;
		}
	if (where != FP_DBG_OOB_INSIDE_STORAGE && *other != SIZE_MAX)
		where = FP_DBG_OOB_OTHER_STORAGE;
	return where;
}

static void bounds_finding(struct ctx *x, const struct fp_dbg_check_slot *k)
{
	const struct fp_dbg_run *run = x->run;
	size_t ref = SIZE_MAX, other = SIZE_MAX, i;
	uint64_t best = UINT64_MAX, a = k->first_value, slo, shi;
	enum fp_dbg_oob_where where;
	const struct fp_dbg_table_entry *r;
	bool known = false;
	struct agg *g;

	for (i = 0; i < k->ncands; i++) {
		size_t p = param_index(x, k->cands[i]);

		if (p == SIZE_MAX || !has_view(&x->table[p]))
			continue;
		known = true;
		if (view_distance(&x->table[p], a) < best) {
			best = view_distance(&x->table[p], a);
			ref = p;
		}
	}
	if (!known) /* checked against every tensor: the nearest names it */
		for (i = 0; i < x->np; i++)
			if (has_view(&x->table[i]) && view_distance(&x->table[i], a) < best) {
				best = view_distance(&x->table[i], a);
				ref = i;
			}
	if (ref == SIZE_MAX)
		return; /* no tensor to compare with: the device found nothing to check against */
	r = &x->table[ref];
	entry_storage(r, &slo, &shi);
	if (k->rule == FP_DBG_RULE_DESCRIPTOR_EXTENT && k->has_range)
		/* the slot holds the descriptor's range (its first value is its base, inside the
		 * view): the address that matters is its first byte outside the view */
		a = k->hi > r->view_hi ? FP_MAX(r->view_hi, k->lo) : k->lo;
	where = locate(x, ref, slo, shi, a, &other);
	g = add(x,
		k->rule == FP_DBG_RULE_DESCRIPTOR_EXTENT ? FP_DBG_FINDING_DESCRIPTOR_EXTENT :
							   FP_DBG_FINDING_OUT_OF_BOUNDS,
		k->statement, k->site);
	if (!g)
		return;
	instances(x, g, k);
	g->f.param = x->pnames[ref];
	g->f.param_known = known;
	g->f.other_param = other != SIZE_MAX ? x->pnames[other] : NULL;
	g->f.where = where;
	g->f.address = a;
	g->f.view_lo = r->view_lo;
	g->f.view_hi = r->view_hi;
	g->f.storage_lo = slo;
	g->f.storage_hi = shi;
	if (k->has_range) {
		g->f.bytes_before = k->lo < r->view_lo ? r->view_lo - k->lo : 0;
		g->f.bytes_past = k->hi > r->view_hi ? k->hi - r->view_hi : 0;
	}
	g->f.lanes_known = true;
	g->f.lanes_out = k->count;
	g->f.suppressed =
		run->info.suppress && k->suppressed && k->rule == FP_DBG_RULE_BOUNDS ? k->count : 0;
}

static double bits_double(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

static void value_finding(struct ctx *x, const struct fp_dbg_check_slot *k)
{
	enum fp_dbg_finding_kind kind;
	struct agg *g;

	kind = fp_dbg_rule_kind(k->rule); /* the registry's (checks.c) */
	g = add(x, kind, k->statement, k->site);
	if (!g)
		return;
	instances(x, g, k);
	g->f.count = k->count;
	g->f.value = bits_double(k->first_value);
	g->f.target_dtype = k->target_dtype;
	g->f.from_memory = k->rule == FP_DBG_RULE_NAN_MEM || k->rule == FP_DBG_RULE_INF_MEM;
	if (g->f.from_memory) {
		g->f.cands = k->cands;
		g->f.ncands = k->ncands;
	}
}

size_t fp__dbg_param_storages(const struct fp_dbg_run *run, const char *const *names, size_t n,
			      struct fp__dbg_range *out, size_t cap)
{
	const char *const *pnames;
	const struct fp_dbg_table_entry *table;
	size_t np = fp_dbg_run_params(run, &pnames, &table), i, j, k, got = 0;

	for (i = 0; table && i < n; i++)
		for (j = 0; j < np; j++) {
			const struct fp_dbg_table_entry *e = &table[j];

			if (strcmp(pnames[j], names[i]) || e->storage_lo >= e->storage_hi)
				continue;
			for (k = 0; k < got; k++)
				if (out[k].lo == e->storage_lo && out[k].hi == e->storage_hi)
					break;
			if (k == got && got < cap)
				out[got++] = (struct fp__dbg_range){e->storage_lo, e->storage_hi};
		}
	return got;
}

size_t fp__dbg_written(const struct fp_dbg_run *run, bool inf, struct fp__dbg_range *out,
		       size_t cap)
{
	size_t nk, i, got = 0;
	const struct fp_dbg_check_slot *ks = fp_dbg_run_checks(run, &nk);
	enum fp_dbg_rule rule = inf ? FP_DBG_RULE_INF : FP_DBG_RULE_NAN;

	for (i = 0; i < nk && got < cap; i++)
		if (ks[i].rule == rule && ks[i].nstores && (ks[i].fired || ks[i].descended))
			got += fp__dbg_param_storages(run, ks[i].stores, ks[i].nstores, out + got,
						      cap - got);
	return got;
}

bool fp__dbg_overlap(const struct fp__dbg_range *a, size_t na, const struct fp__dbg_range *b,
		     size_t nb)
{
	size_t i, j;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if (a[i].lo < b[j].hi && b[j].lo < a[i].hi)
				return true;
	return false;
}

/*
 * NaN/Inf descent inside the launch: values that held one because a read did are counted on
 * the slot that saw them (descended); a load from memory that held one where this launch wrote
 * one before (a store of it into the same allocation, read back) descends from the launch's
 * origin: counted there, not a finding of its own. A load of memory the launch wrote no NaN
 * into (the data already held it) stays a finding (docs/guide/debugger.md, "NaN and Inf
 * origin").
 */
static void descent(struct ctx *x)
{
	struct fp_dbg_findings *fs = x->fs;
	size_t i, j, nk, kind, nw;
	const struct fp_dbg_check_slot *ks = fp_dbg_run_checks(x->run, &nk);
	struct fp__dbg_range wrote[FP__DBG_MAX_RANGES];

	for (kind = 0; kind < 2; kind++) {
		enum fp_dbg_finding_kind fk =
			kind ? FP_DBG_FINDING_INF_ORIGIN : FP_DBG_FINDING_NAN_ORIGIN;
		enum fp_dbg_rule rule = kind ? FP_DBG_RULE_INF : FP_DBG_RULE_NAN;
		struct agg *o = NULL;

		/* the first origin made here, by (program, sequence) of its first instance */
		for (i = 0; i < fs->n; i++) {
			struct agg *g = &fs->items[i];

			if (g->f.kind != fk || g->f.from_memory)
				continue;
			if (!o || g->f.program < o->f.program ||
			    (g->f.program == o->f.program && g->seq < o->seq))
				o = g;
		}
		if (!o)
			continue;
		for (j = 0; j < nk; j++)
			if (ks[j].rule == rule)
				o->f.descendants += ks[j].descended;
		nw = fp__dbg_written(x->run, kind != 0, wrote, FP__DBG_MAX_RANGES);
		for (j = 0; j < fs->n; j++) {
			struct agg *m = &fs->items[j];
			struct fp__dbg_range from[FP__DBG_MAX_RANGES];
			size_t nf;

			if (m->dropped || !m->f.from_memory || m->f.kind != fk)
				continue;
			nf = fp__dbg_param_storages(x->run, m->f.cands, m->f.ncands, from,
						    FP__DBG_MAX_RANGES);
			if (!fp__dbg_overlap(from, nf, wrote, nw))
				continue;
			m->dropped = true;
			o->f.descendants += m->f.instance_count;
		}
	}
}

static void check_slots(struct ctx *x)
{
	const struct fp_dbg_check_slot *ks;
	size_t i, nk;

	ks = fp_dbg_run_checks(x->run, &nk);
	for (i = 0; i < nk && !x->err; i++) {
		const struct fp_dbg_check_slot *k = &ks[i];

		if (!k->fired || !k->has_first)
			continue;
		if (k->rule == FP_DBG_RULE_BOUNDS || k->rule == FP_DBG_RULE_DESCRIPTOR_EXTENT) {
			if (x->table)
				bounds_finding(x, k);
		} else {
			value_finding(x, k);
		}
	}
	if (!x->err)
		descent(x);
}

/*
 * Host tensor descriptors, checked at launch: the bytes a descriptor's shape and strides address
 * against its base tensor's view. The finding is attached to the first access through it (site
 * table `desc_param`); without one there is nowhere to show it.
 */
static void check_host_descriptors(struct ctx *x)
{
	const struct fp_dbg_run *run = x->run;
	const struct fp_dbg_findings *fs = x->fs;
	size_t j, k;

	for (j = 0; j < fs->nargs && !x->err; j++) {
		const struct fp_dbg_arg *a = &fs->args[j];
		uint64_t slo, shi, before, past, addr;
		size_t si = SIZE_MAX, ref, other;
		struct agg *g;

		if (!a->descriptor || inside(a->view_lo, a->view_hi, a->desc_lo, a->desc_hi) ||
		    a->desc_lo == a->desc_hi)
			continue;
		for (k = 0; k < run->nstmts && si == SIZE_MAX; k++) {
			const struct fp_dbg_statement *st = &run->stmts[k];
			size_t m;

			for (m = 0; m < st->nsites; m++) {
				const struct fp_dbg_site *s = &run->sites[st->sites[m]];

				if (s->desc_param && !strcmp(s->desc_param, a->name)) {
					si = st->sites[m];
					break;
				}
			}
		}
		if (si == SIZE_MAX)
			continue;
		before = a->desc_lo < a->view_lo ? a->view_lo - a->desc_lo : 0;
		past = a->desc_hi > a->view_hi ? a->desc_hi - a->view_hi : 0;
		g = add(x, FP_DBG_FINDING_DESCRIPTOR_EXTENT, run->sites[si].statement,
			(uint32_t)si);
		if (!g)
			return;
		storage_of(a, &slo, &shi);
		/* the first byte outside the view (past its end, else before its start) */
		addr = past ? FP_MAX(a->view_hi, a->desc_lo) : a->desc_lo;
		g->f.program = 0;
		g->f.instance_count = 1;
		g->f.programs[0] = 0; /* checked once, at launch: shown at the first program */
		g->f.nprograms = 1;
		g->f.program_count = 1;
		g->f.param = a->name;
		g->f.param_known = true;
		ref = param_index(x, a->name);
		g->f.where = locate(x, ref, slo, shi, addr, &other);
		g->f.other_param = other != SIZE_MAX ? x->pnames[other] : NULL;
		g->f.view_lo = a->view_lo;
		g->f.view_hi = a->view_hi;
		g->f.storage_lo = slo;
		g->f.storage_hi = shi;
		g->f.address = addr;
		g->f.bytes_before = before;
		g->f.bytes_past = past;
		g->f.subject = a->name;
		g->inputs = a->desc_text ? a->desc_text : "";
	}
}

/* ---- messages ------------------------------------------------------------------------------- */

/* Range facts of the narrow float types a cast may target. */
struct frange {
	enum fp_dtype t;
	double max_finite; /* largest finite value */
	double min_normal;
	double min_sub; /* smallest subnormal: |x| <= min_sub / 2 rounds to zero */
};

static const struct frange franges[] = {
	{FP_DTYPE_FLOAT16, 65504.0, 0x1p-14, 0x1p-24},
	{FP_DTYPE_BFLOAT16, 0x1.fep127, 0x1p-126, 0x1p-133},
	{FP_DTYPE_FLOAT8E4NV, 448.0, 0x1p-6, 0x1p-9},
	{FP_DTYPE_FLOAT8E5, 57344.0, 0x1p-14, 0x1p-16},
};

static const struct frange *frange_of(enum fp_dtype t)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(franges); i++)
		if (franges[i].t == t)
			return &franges[i];
	return NULL;
}

/* "tl.load from", "reads"... for a memory site's message. */
static void access_words(const struct fp_dbg_site *s, struct fp_strbuf *sb, const char **verb)
{
	bool desc = s->form && !strcmp(s->form, "tensor_descriptor");
	bool bp = s->form && !strcmp(s->form, "block_pointer");

	switch (s->kind) {
	case FP_DBG_KIND_STORE:
		fp_strbuf_addstr(sb, desc ? "the descriptor store to" :
				     bp   ? "tl.store through the block pointer" :
					    "tl.store to");
		*verb = "writes";
		break;
	case FP_DBG_KIND_ATOMIC:
		fp_strbuf_addf(sb, "tl.atomic_%s on", s->op && s->op[0] ? s->op : "rmw");
		*verb = "reads and writes";
		break;
	default:
		fp_strbuf_addstr(sb, desc ? "the descriptor load from" :
				     bp   ? "tl.load through the block pointer" :
					    "tl.load from");
		*verb = "reads";
		break;
	}
}

/* "up to N bytes before the start of " / "... past the end of " */
static void reach_words(const struct fp_dbg_finding *f, struct fp_strbuf *sb)
{
	if (f->bytes_before && f->bytes_past)
		fp_strbuf_addf(sb,
			       "up to %" PRIu64 " bytes before the start and %" PRIu64
			       " bytes past the end of ",
			       f->bytes_before, f->bytes_past);
	else if (f->bytes_before)
		fp_strbuf_addf(sb, "up to %" PRIu64 " bytes before the start of ", f->bytes_before);
	else
		fp_strbuf_addf(sb, "up to %" PRIu64 " bytes past the end of ", f->bytes_past);
}

/* A tensor descriptor that reaches outside the tensor it was built from. */
static void desc_message(const struct agg *g, struct fp_strbuf *sb)
{
	const struct fp_dbg_finding *f = &g->f;
	uint64_t vbytes = f->view_hi - f->view_lo;
	bool host = g->rule == FP_DBG_RULE_UNKNOWN;

	if (host)
		fp_strbuf_addf(sb, "the tensor descriptor `%s` (%s) addresses ", f->param,
			       g->inputs && g->inputs[0] ? g->inputs : "its shape and strides");
	else
		fp_strbuf_addf(sb, "the tensor descriptor made from `%s` addresses ", f->subject);
	reach_words(f, sb);
	if (host)
		fp_strbuf_addf(
			sb, "the tensor it was built from (its base, a view of %" PRIu64 " bytes)",
			vbytes);
	else
		fp_strbuf_addf(sb,
			       "the tensor `%s` it was built from (a view of %" PRIu64 " bytes)",
			       f->param, vbytes);
	fp_strbuf_addf(
		sb,
		": its shape and strides are larger than the tensor, and a TMA load or "
		"store inside the descriptor's shape is not checked against the tensor, so "
		"it %s (first address outside 0x%" PRIx64 ").",
		f->where == FP_DBG_OOB_INSIDE_STORAGE ?
			"silently reads or overwrites neighbouring data of the same allocation" :
			"reads or writes memory outside every allocation the launch knows of",
		f->address);
}

static void oob_message(const struct fp_dbg_run *run, const struct agg *g, struct fp_strbuf *sb)
{
	const struct fp_dbg_finding *f = &g->f;
	const struct fp_dbg_site *s = fp_dbg_run_site(run, f->site);
	bool store = s && (s->kind == FP_DBG_KIND_STORE || s->kind == FP_DBG_KIND_ATOMIC);
	uint64_t vbytes = f->view_hi - f->view_lo, sbytes = f->storage_hi - f->storage_lo;
	const char *verb = "reaches";

	if (s)
		access_words(s, sb, &verb);
	else
		fp_strbuf_addstr(sb, "the access through");
	fp_strbuf_addf(sb, " `%s` %s ", f->subject, verb);
	reach_words(f, sb);
	if (f->param_known)
		fp_strbuf_addf(sb, "the tensor `%s` (a view of %" PRIu64 " bytes)", f->param,
			       vbytes);
	else
		fp_strbuf_addf(sb,
			       "every tensor argument's view (the pointer's base is not known, so "
			       "it was checked against every tensor of the launch; nearest: `%s`, "
			       "a view of %" PRIu64 " bytes)",
			       f->param, vbytes);
	if (f->other_param && f->where == FP_DBG_OOB_INSIDE_STORAGE)
		fp_strbuf_addf(sb,
			       ". Its first offending address lies inside `%s`, another tensor of "
			       "the launch in the same allocation (%" PRIu64
			       " bytes): it silently %s that tensor's data",
			       f->other_param, sbytes, store ? "overwrites" : "reads");
	else if (f->where == FP_DBG_OOB_INSIDE_STORAGE)
		fp_strbuf_addf(sb,
			       ". It stays inside the same allocation (%" PRIu64
			       " bytes), so it silently %s neighbouring data that is not part of "
			       "the view",
			       sbytes, store ? "overwrites" : "reads");
	else if (f->where == FP_DBG_OOB_OTHER_STORAGE)
		fp_strbuf_addf(sb,
			       ". Its first offending address lies inside `%s`, another argument "
			       "(the allocator put it next to `%s`): it silently %s that "
			       "tensor's data",
			       f->other_param ? f->other_param : "?", f->param,
			       store ? "overwrites" : "reads");
	else
		fp_strbuf_addf(sb,
			       ". It leaves every allocation the launch knows of: on a GPU it %s "
			       "memory that belongs to something else, or faults",
			       store ? "corrupts" : "reads");
	fp_strbuf_addf(sb,
		       " (first offending address 0x%" PRIx64 ", %" PRIu64
		       " active lane%s outside the view",
		       f->address, f->lanes_out, f->lanes_out == 1 ? "" : "s");
	if (f->suppressed)
		fp_strbuf_addf(sb, ", not performed: %s",
			       store ? "the check dropped them" : "the check gave them `other`");
	fp_strbuf_addstr(sb, ").");
}

static void num_message(const struct agg *g, struct fp_strbuf *sb)
{
	const struct fp_dbg_finding *f = &g->f;
	const char *tn = fp_dtype_name(f->target_dtype);
	const struct frange *fr = frange_of(f->target_dtype);

	switch (g->rule) {
	case FP_DBG_RULE_NAN:
	case FP_DBG_RULE_INF: {
		const char *what = g->rule == FP_DBG_RULE_NAN ? "NaN" : "Inf";

		fp_strbuf_addf(sb, "`%s` holds %s (%" PRIu64 " element%s where it was born) while ",
			       f->subject, what, f->count, f->count == 1 ? "" : "s");
		if (g->nreads) {
			size_t i;

			fp_strbuf_addstr(sb, "no value the statement reads (");
			for (i = 0; i < g->nreads; i++)
				fp_strbuf_addf(sb, "%s%s", i ? ", " : "", g->reads[i]);
			fp_strbuf_addstr(sb, ")");
		} else {
			fp_strbuf_addstr(sb, "nothing the statement reads");
		}
		fp_strbuf_addf(
			sb, "%s: the %s is produced here",
			g->rule == FP_DBG_RULE_NAN ?
				" held NaN (infinities it reads make NaN in inf - inf, "
				"0 * inf and inf / inf)" :
				" held an infinity of that sign, and it writes none itself (an "
				"overflow, a division by zero or a narrowing cast)",
			what);
		if (f->descendants)
			fp_strbuf_addf(
				sb, "; %" PRIu64 " later value%s or load%s descend%s from it",
				f->descendants, f->descendants == 1 ? "" : "s",
				f->descendants == 1 ? "" : "s", f->descendants == 1 ? "s" : "");
		break;
	}
	case FP_DBG_RULE_NAN_MEM:
	case FP_DBG_RULE_INF_MEM: {
		const char *what = g->rule == FP_DBG_RULE_NAN_MEM ? "NaN" : "Inf";

		fp_strbuf_addf(sb,
			       "`%s` holds %" PRIu64
			       " %s value%s loaded from memory (in the lanes the "
			       "load read): the input data already contains %s (it is not computed "
			       "by this launch)",
			       f->subject, f->count, what, f->count == 1 ? "" : "s", what);
		break;
	}
	case FP_DBG_RULE_DIV_ZERO:
		fp_strbuf_addf(sb,
			       "divides by zero: the divisor `%s` holds %" PRIu64
			       " zero element%s (x/0 gives inf, 0/0 gives NaN)",
			       f->subject, f->count, f->count == 1 ? "" : "s");
		break;
	case FP_DBG_RULE_DIV_TINY:
		fp_strbuf_addf(sb,
			       "divides by values within the smallest normal of zero: the divisor "
			       "`%s` holds %" PRIu64 " such element%s (first: %.6g)",
			       f->subject, f->count, f->count == 1 ? "" : "s", f->value);
		break;
	case FP_DBG_RULE_SQRT_NEGATIVE:
	case FP_DBG_RULE_LOG_NEGATIVE:
		fp_strbuf_addf(sb,
			       "takes the %s of negative values: `%s` holds %" PRIu64
			       " negative element%s (first: %.6g; the result is NaN there)",
			       g->rule == FP_DBG_RULE_SQRT_NEGATIVE ? "square root" : "logarithm",
			       f->subject, f->count, f->count == 1 ? "" : "s", f->value);
		break;
	case FP_DBG_RULE_CAST_OVERFLOW:
		fp_strbuf_addf(sb,
			       "converts `%s` to %s although %" PRIu64
			       " of its finite values are beyond %s's largest finite value %.6g "
			       "(first: %.6g): those elements become %s",
			       f->subject, tn, f->count, tn, fr ? fr->max_finite : 0.0, f->value,
			       f->target_dtype == FP_DTYPE_FLOAT8E4NV ? "NaN (or saturate)" :
									"inf");
		break;
	case FP_DBG_RULE_CAST_FLUSH:
		fp_strbuf_addf(sb,
			       "converts `%s` to %s and %" PRIu64
			       " of its nonzero values (at least half) are below %s's smallest "
			       "subnormal (%.3g) by half or more: they flush to zero",
			       f->subject, tn, f->count, tn, fr ? fr->min_sub : 0.0);
		break;
	default:
		fp_strbuf_addf(sb,
			       "converts `%s` to %s and %" PRIu64
			       " of its nonzero values (at least half) are below %s's smallest "
			       "normal (%.3g): they keep only a few significant bits",
			       f->subject, tn, f->count, tn, fr ? fr->min_normal : 0.0);
		break;
	}
	fp_strbuf_addch(sb, '.');
}

/* ---- driver --------------------------------------------------------------------------------- */

static int cmp_agg(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->f.kind != y->f.kind)
		return x->f.kind < y->f.kind ? -1 : 1;
	if (x->f.statement != y->f.statement)
		return x->f.statement < y->f.statement ? -1 : 1;
	if (x->f.site != y->f.site)
		return x->f.site < y->f.site ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int finish(struct ctx *x)
{
	struct fp_dbg_findings *fs = x->fs;
	struct fp_strbuf sb;
	size_t i;

	if (!fs->n)
		return FP_OK;
	qsort(fs->items, fs->n, sizeof(*fs->items), cmp_agg);
	fs->out = fp_calloc(fs->n, sizeof(*fs->out));
	if (!fs->out)
		return nomem(x);
	fp_strbuf_init(&sb, 1 << 16);
	for (i = 0; i < fs->n; i++) {
		struct agg *g = &fs->items[i];

		if (g->dropped)
			continue;
		fp_strbuf_reset(&sb);
		if (g->f.kind == FP_DBG_FINDING_OUT_OF_BOUNDS)
			oob_message(x->run, g, &sb);
		else if (g->f.kind == FP_DBG_FINDING_DESCRIPTOR_EXTENT)
			desc_message(g, &sb);
		else
			num_message(g, &sb);
		g->f.message = keep(x, sb.buf ? sb.buf : "");
		if (!g->f.message)
			break;
		fs->out[fs->nout++] = g->f;
	}
	fp_strbuf_release(&sb);
	return x->err;
}

static int copy_args(struct ctx *x, const struct fp_dbg_arg *args, size_t nargs)
{
	struct fp_dbg_findings *fs = x->fs;
	size_t i;

	if (nargs > MAX_ARGS)
		return x->err = fp_diag_set(x->diag, FP_ELIMIT, 0,
					    "findings: more than %u tensor arguments", MAX_ARGS);
	if (!nargs)
		return FP_OK;
	fs->args = fp_calloc(nargs, sizeof(*fs->args));
	if (!fs->args)
		return nomem(x);
	for (i = 0; i < nargs; i++) {
		fs->args[i] = args[i];
		fs->args[i].name = keep(x, args[i].name ? args[i].name : "?");
		if (!fs->args[i].name)
			return x->err;
		if (args[i].desc_text && !(fs->args[i].desc_text = keep(x, args[i].desc_text)))
			return x->err;
	}
	fs->nargs = nargs;
	return FP_OK;
}

int fp_dbg_findings_new(const struct fp_dbg_run *run, const struct fp_dbg_arg *args, size_t nargs,
			struct fp_dbg_findings **out, struct fp_diag *diag)
{
	struct ctx x = {.run = run, .diag = diag};

	if (!run || !out || (nargs && !args))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_findings_new: NULL argument");
	*out = NULL;
	x.fs = fp_calloc(1, sizeof(*x.fs));
	if (!x.fs)
		return fp_diag_set(diag, FP_ENOMEM, 0, "findings: out of memory");
	fp_arena_init(&x.fs->arena, 0, 0);
	x.np = fp_dbg_run_params(run, &x.pnames, &x.table);
	if (!copy_args(&x, args, nargs)) {
		check_slots(&x);
		check_host_descriptors(&x);
		if (!x.err)
			finish(&x);
	}
	if (x.err) {
		fp_dbg_findings_free(x.fs);
		return x.err;
	}
	*out = x.fs;
	return FP_OK;
}

void fp_dbg_findings_free(struct fp_dbg_findings *f)
{
	if (!f)
		return;
	fp_free(f->items);
	fp_free(f->out);
	fp_free(f->args);
	fp_arena_release(&f->arena);
	fp_free(f);
}

void fp_dbg_findings_keep(struct fp_dbg_findings *f, unsigned kinds)
{
	size_t i, n = 0;

	if (!f || !f->out)
		return;
	for (i = 0; i < f->nout; i++)
		if (kinds & (1u << f->out[i].kind))
			f->out[n++] = f->out[i];
	f->nout = n;
}

void fp__dbg_findings_remove(struct fp_dbg_findings *f, size_t i)
{
	if (!f || !f->out || i >= f->nout)
		return;
	memmove(&f->out[i], &f->out[i + 1], (f->nout - i - 1) * sizeof(*f->out));
	f->nout--;
}

size_t fp_dbg_findings_count(const struct fp_dbg_findings *f)
{
	return f && f->out ? f->nout : 0;
}

const struct fp_dbg_finding *fp_dbg_findings_at(const struct fp_dbg_findings *f, size_t i)
{
	return f && f->out && i < f->nout ? &f->out[i] : NULL;
}

const struct fp_dbg_arg *fp_dbg_findings_args(const struct fp_dbg_findings *f, size_t *n)
{
	*n = f ? f->nargs : 0;
	return f ? f->args : NULL;
}
