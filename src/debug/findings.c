/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's findings: verdicts drawn from a decoded run and the extents of the launch's
 * tensor arguments. Out of bounds: every address summary against the view (and storage) of the
 * argument its pointer derives from. NaN/Inf origin: per program, in execution order, the first
 * statement whose result holds NaN (Inf) although every value it reads was finite. Precision:
 * narrowing casts that overflow or flush to zero, division by zero or by subnormal values,
 * sqrt/log of negative values. The rules, and which of them are exact and which are bounds, are
 * documented in docs/guide/debugger.md ("Findings"). This file only reads the run; the report writers
 * print what it found. Not here: decoding (decode.c), the site table (sites.c).
 */
#include "fp-setup.h"

#include <float.h>
#include <math.h>

#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "core/hashmap-internal.h"
#include "core/intern-internal.h"
#include "debug/debug-internal.h"

#define MAX_ARGS 4096u             /* tensor arguments of one launch */
#define MAX_FINDINGS 65536u        /* distinct findings of one run */
#define MAX_ORDER_SLOTS (1u << 30) /* programs x slots indexed by the NaN/Inf walk */

/* A finding while it is being aggregated: the public part plus what aggregation needs. */
struct agg {
	struct fp_dbg_finding f;
	uint64_t last_program;
	uint32_t sub;       /* the rule's outcome (overflow, underflow...), part of the key */
	uint32_t ref;       /* argument index for out_of_bounds, UINT32_MAX if none */
	uint32_t other;     /* other argument (FP_DBG_OOB_OTHER_STORAGE), UINT32_MAX if none */
	size_t order;       /* creation order: the last sort key */
	const char *inputs; /* nan/inf origin: what the statement read, as text */
	enum fp_dtype operand_dtype; /* numerical rules: the dtype of the checked operand */
	bool lower_exact;            /* underflow: every instance was exact */
};

struct fp_dbg_findings {
	struct fp_arena arena; /* strings */
	struct agg *items;
	size_t n, cap;
	struct fp_dbg_finding *out; /* the public array, built at the end */
	struct fp_dbg_arg *args;
	size_t nargs;
};

struct ctx {
	const struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	struct fp_hashmap index; /* key -> items index */
	struct fp_diag *diag;
	int err;
};

/* Sub-outcomes of the numerical rules (part of the aggregation key and of the message). */
enum {
	SUB_OVERFLOW = 1,
	SUB_FLUSH = 2,
	SUB_SUBNORMAL = 3,
	SUB_ZERO = 4,
	SUB_TINY = 5,
	SUB_SQRT = 6,
	SUB_LOG = 7,
};

const char *fp_dbg_finding_kind_name(enum fp_dbg_finding_kind kind)
{
	switch (kind) {
	case FP_DBG_FINDING_OUT_OF_BOUNDS:
		return "out_of_bounds";
	case FP_DBG_FINDING_NAN_ORIGIN:
		return "nan_origin";
	case FP_DBG_FINDING_INF_ORIGIN:
		return "inf_origin";
	case FP_DBG_FINDING_DIVISION_BY_ZERO:
		return "division_by_zero";
	case FP_DBG_FINDING_INVALID_DOMAIN:
		return "invalid_domain";
	case FP_DBG_FINDING_PRECISION_LOSS:
		return "precision_loss";
	case FP_DBG_FINDING_DESCRIPTOR_EXTENT:
		return "descriptor_extent";
	}
	return "unknown";
}

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

/* ---- aggregation ---------------------------------------------------------------------------- */

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

/*
 * The aggregate for (kind, site, sub, ref, other, check) with `rec` counted in it, or NULL on
 * failure (x->err set). New aggregates start from `rec`'s program and execution.
 */
static struct agg *aggregate(struct ctx *x, enum fp_dbg_finding_kind kind, uint32_t site,
			     uint32_t sub, uint32_t ref, uint32_t other, uint32_t check,
			     const struct fp_dbg_record *rec)
{
	struct fp_dbg_findings *fs = x->fs;
	uint64_t key, idx;
	struct agg *a;

	if (x->err)
		return NULL;
	/* site: 16 bits, kind: 3, sub: 4, ref/other: 12 each (+1: none), check: 16 */
	key = (uint64_t)site | (uint64_t)kind << 16 | (uint64_t)sub << 19 |
	      (uint64_t)((ref + 1) & 0xfff) << 23 | (uint64_t)((other + 1) & 0xfff) << 35 |
	      (uint64_t)(check & 0xffff) << 47;
	if (fp_hashmap_get(&x->index, key, &idx)) {
		a = &fs->items[idx];
	} else {
		if (fs->n == MAX_FINDINGS) {
			x->err = fp_diag_set(x->diag, FP_ELIMIT, 0,
					     "findings: more than %u distinct findings",
					     MAX_FINDINGS);
			return NULL;
		}
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
		if (fp_hashmap_put(&x->index, key, fs->n)) {
			nomem(x);
			return NULL;
		}
		a = &fs->items[fs->n];
		memset(a, 0, sizeof(*a));
		a->order = fs->n++;
		a->f.kind = kind;
		a->f.site = site;
		a->f.statement = x->run->sites[site].statement;
		a->f.program = rec->program;
		a->f.execution = rec->execution;
		a->f.subject = "";
		a->sub = sub;
		a->ref = ref;
		a->other = other;
		a->lower_exact = true;
		a->f.lanes_known = true;
		a->last_program = rec->program;
		a->f.programs[a->f.nprograms++] = rec->program;
		a->f.program_count = 1;
		a->f.instance_count = 1;
		return a;
	}
	a->f.instance_count++;
	if (rec->program != a->last_program) {
		/* records of one site come by program; checks by reference come by program too */
		a->last_program = rec->program;
		a->f.program_count++;
		if (a->f.nprograms < FP_DBG_FINDING_MAX_PROGRAMS)
			a->f.programs[a->f.nprograms++] = rec->program;
	}
	return a;
}

/* ---- out of bounds -------------------------------------------------------------------------- */

/* The single tensor argument the site's pointer derives from, or UINT32_MAX. */
static uint32_t base_arg(const struct fp_dbg_findings *fs, const struct fp_dbg_site *s)
{
	uint32_t found = UINT32_MAX;
	size_t i, j;

	for (i = 0; i < s->nbase_params; i++) {
		for (j = 0; j < fs->nargs; j++) {
			if (strcmp(fs->args[j].name, s->base_params[i]))
				continue;
			if (found != UINT32_MAX && found != j)
				return UINT32_MAX; /* two tensor arguments: ambiguous */
			found = (uint32_t)j;
		}
	}
	return found;
}

/* Distance of [lo, hi) from the view of `a` (0 when inside). */
static uint64_t view_distance(const struct fp_dbg_arg *a, uint64_t lo, uint64_t hi)
{
	uint64_t before = lo < a->view_lo ? a->view_lo - lo : 0;
	uint64_t past = hi > a->view_hi ? hi - a->view_hi : 0;

	return FP_MAX(before, past);
}

/* Level-2 detail: lanes outside [vlo, vhi) and the first of them (row-major lane order). */
static bool lanes_out(const struct fp_dbg_run *run, const struct fp_dbg_record *rec, uint64_t esize,
		      uint64_t vlo, uint64_t vhi, uint64_t *count, uint64_t *first)
{
	const uint64_t *d;
	size_t n, i;
	bool seen = false;

	d = fp_dbg_run_dump(run, rec, &n);
	if (!d)
		return false;
	*count = 0;
	for (i = 0; i < n; i++) {
		uint64_t a = d[i];

		if (a >> 63) /* masked off: never counts */
			continue;
		if (a < vlo || a > UINT64_MAX - esize || a + esize > vhi) {
			if (!seen)
				*first = a;
			seen = true;
			(*count)++;
		}
	}
	return true;
}

static void oob_record(struct ctx *x, size_t si, uint32_t base, uint64_t esize,
		       const struct fp_dbg_record *rec, enum fp_dbg_finding_kind kind)
{
	const struct fp_dbg_findings *fs = x->fs;
	struct fp_dbg_addr_summary a;
	uint32_t ref = base, other = UINT32_MAX;
	enum fp_dbg_oob_where where;
	uint64_t lo, hi, slo, shi, before, past, addr, nout = 0, first = 0;
	const struct fp_dbg_arg *r;
	struct agg *g;
	bool lanes;
	size_t j;

	fp_dbg_record_addr_summary(rec, &a);
	if (a.status != FP_DBG_ADDR_COMPLETE || !a.has_addresses)
		return;
	lo = a.min_addr;
	hi = a.max_addr > UINT64_MAX - esize ? UINT64_MAX : a.max_addr + esize;
	if (base != UINT32_MAX && inside(fs->args[base].view_lo, fs->args[base].view_hi, lo, hi))
		return;
	/* Pointer arithmetic that moved to another argument's view is that argument's access. */
	for (j = 0; j < fs->nargs; j++)
		if (inside(fs->args[j].view_lo, fs->args[j].view_hi, lo, hi))
			return;
	if (base != UINT32_MAX) {
		storage_of(&fs->args[base], &slo, &shi);
		where = FP_DBG_OOB_OUTSIDE;
		if (inside(slo, shi, lo, hi)) {
			where = FP_DBG_OOB_INSIDE_STORAGE;
		} else {
			for (j = 0; j < fs->nargs && where == FP_DBG_OOB_OUTSIDE; j++) {
				storage_of(&fs->args[j], &slo, &shi);
				if (j != base && inside(slo, shi, lo, hi)) {
					where = FP_DBG_OOB_OTHER_STORAGE;
					other = (uint32_t)j;
				}
			}
		}
	} else {
		/* Base unknown: the allocation that holds the access, else the nearest view. */
		where = FP_DBG_OOB_OUTSIDE;
		for (j = 0; j < fs->nargs; j++) {
			storage_of(&fs->args[j], &slo, &shi);
			if (inside(slo, shi, lo, hi)) {
				ref = (uint32_t)j;
				where = FP_DBG_OOB_INSIDE_STORAGE;
				break;
			}
		}
		if (ref == UINT32_MAX) {
			uint64_t best = UINT64_MAX;

			for (j = 0; j < fs->nargs; j++) {
				uint64_t dist = view_distance(&fs->args[j], lo, hi);

				if (fs->args[j].view_lo < fs->args[j].view_hi && dist < best) {
					best = dist;
					ref = (uint32_t)j;
				}
			}
		}
	}
	if (ref == UINT32_MAX)
		return; /* no argument with a non-empty view: nothing to compare with */
	r = &fs->args[ref];
	before = lo < r->view_lo ? r->view_lo - lo : 0;
	past = hi > r->view_hi ? hi - r->view_hi : 0;
	lanes = lanes_out(x->run, rec, esize, r->view_lo, r->view_hi, &nout, &first);
	if (lanes && nout) {
		addr = first;
	} else if (a.first_addr < r->view_lo || a.first_addr + esize > r->view_hi) {
		addr = a.first_addr;
	} else if (a.last_addr < r->view_lo || a.last_addr + esize > r->view_hi) {
		addr = a.last_addr;
	} else {
		addr = past ? a.max_addr : a.min_addr;
	}
	g = aggregate(x, kind, (uint32_t)si, 0, ref, other, 0, rec);
	if (!g)
		return;
	if (g->f.instance_count == 1) {
		g->f.address = addr;
		g->f.param = r->name;
		g->f.param_known = base != UINT32_MAX;
		g->f.other_param = other != UINT32_MAX ? fs->args[other].name : NULL;
		g->f.where = where;
		g->f.view_lo = r->view_lo;
		g->f.view_hi = r->view_hi;
		storage_of(r, &g->f.storage_lo, &g->f.storage_hi);
		g->f.subject = x->run->sites[si].name;
	}
	g->f.bytes_before = FP_MAX(g->f.bytes_before, before);
	g->f.bytes_past = FP_MAX(g->f.bytes_past, past);
	if (lanes)
		g->f.lanes_out += nout;
	else
		g->f.lanes_known = false;
}

/*
 * Host tensor descriptors, checked at launch: the bytes a descriptor's shape and strides address
 * against its base tensor's view. The finding is attached to the first observed access through
 * it (site table `desc_param`), at its first record; without one there is nowhere to show it.
 */
static void check_host_descriptors(struct ctx *x)
{
	const struct fp_dbg_run *run = x->run;
	const struct fp_dbg_findings *fs = x->fs;
	size_t j, k, si;

	for (j = 0; j < fs->nargs && !x->err; j++) {
		const struct fp_dbg_arg *a = &fs->args[j];
		const struct fp_dbg_record *r = NULL;
		uint64_t slo, shi, before, past;
		struct agg *g;
		size_t n;

		if (!a->descriptor || inside(a->view_lo, a->view_hi, a->desc_lo, a->desc_hi) ||
		    a->desc_lo == a->desc_hi)
			continue;
		si = SIZE_MAX;
		for (k = 0; k < run->nstmts && si == SIZE_MAX; k++) {
			const struct fp_dbg_statement *st = &run->stmts[k];
			size_t m;

			for (m = 0; m < st->nsites; m++) {
				const struct fp_dbg_site *s = &run->sites[st->sites[m]];

				if (s->desc_param && !strcmp(s->desc_param, a->name) &&
				    (r = fp_dbg_run_records(run, st->sites[m], &n))) {
					si = st->sites[m];
					break;
				}
			}
		}
		if (si == SIZE_MAX)
			continue;
		before = a->desc_lo < a->view_lo ? a->view_lo - a->desc_lo : 0;
		past = a->desc_hi > a->view_hi ? a->desc_hi - a->view_hi : 0;
		g = aggregate(x, FP_DBG_FINDING_DESCRIPTOR_EXTENT, (uint32_t)si, 1, (uint32_t)j,
			      UINT32_MAX, 0, r);
		if (!g)
			return;
		storage_of(a, &slo, &shi);
		g->f.param = a->name;
		g->f.param_known = true;
		g->f.where = inside(slo, shi, a->desc_lo, a->desc_hi) ? FP_DBG_OOB_INSIDE_STORAGE :
									FP_DBG_OOB_OUTSIDE;
		g->f.view_lo = a->view_lo;
		g->f.view_hi = a->view_hi;
		g->f.storage_lo = slo;
		g->f.storage_hi = shi;
		g->f.address = past ? a->desc_hi - 1 : a->desc_lo;
		g->f.bytes_before = before;
		g->f.bytes_past = past;
		g->f.lanes_known = false;
		g->f.subject = a->name;
		g->inputs = a->desc_text ? a->desc_text : "";
	}
}

static void check_bounds(struct ctx *x)
{
	const struct fp_dbg_run *run = x->run;
	size_t si, i, n;

	if (!x->fs->nargs)
		return;
	for (si = 0; si < run->nsites && !x->err; si++) {
		const struct fp_dbg_site *s = &run->sites[si];
		const struct fp_dbg_record *r;
		uint64_t esize;
		uint32_t base;

		if (!FP_DBG_KIND_IS_ADDR(s->kind))
			continue;
		r = fp_dbg_run_records(run, si, &n);
		esize = fp_dtype_size(s->dtype);
		if (!esize)
			esize = 1;
		base = base_arg(x->fs, s);
		for (i = 0; i < n && !x->err; i++)
			oob_record(x, si, base, esize, &r[i],
				   s->kind == FP_DBG_KIND_DESCRIPTOR ?
					   FP_DBG_FINDING_DESCRIPTOR_EXTENT :
					   FP_DBG_FINDING_OUT_OF_BOUNDS);
	}
	check_host_descriptors(x);
}

/* ---- numerical rules ------------------------------------------------------------------------ */

/* Range facts of the narrow float types a cast may target. */
struct frange {
	enum fp_dtype t;
	double max_finite; /* largest finite value */
	double overflow;   /* |x| >= this rounds to inf (or NaN/saturation for e4m3fn) */
	double min_normal;
	double min_sub; /* smallest subnormal: |x| <= min_sub / 2 rounds to zero */
};

static const struct frange franges[] = {
	{FP_DTYPE_FLOAT16, 65504.0, 65520.0, 0x1p-14, 0x1p-24},
	{FP_DTYPE_BFLOAT16, 0x1.fep127, 0x1.ffp127, 0x1p-126, 0x1p-133},
	{FP_DTYPE_FLOAT8E4NV, 448.0, 464.0, 0x1p-6, 0x1p-9},
	{FP_DTYPE_FLOAT8E5, 57344.0, 61440.0, 0x1p-14, 0x1p-16},
};

static const struct frange *frange_of(enum fp_dtype t)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(franges); i++)
		if (franges[i].t == t)
			return &franges[i];
	return NULL;
}

/* Smallest normal of a float dtype (the "tiny divisor" threshold); 0 for other dtypes. */
static double tiny_of(enum fp_dtype t)
{
	switch (t) {
	case FP_DTYPE_FLOAT16:
	case FP_DTYPE_FLOAT8E5:
		return 0x1p-14;
	case FP_DTYPE_FLOAT8E4NV:
		return 0x1p-6;
	case FP_DTYPE_BFLOAT16:
	case FP_DTYPE_FLOAT32:
		return (double)FLT_MIN;
	case FP_DTYPE_FLOAT64:
		return DBL_MIN;
	default:
		return 0;
	}
}

/*
 * A lower bound on the nonzero finite elements with |x| <= t, from the summary alone: elements
 * with |x| > t contribute more than t^2 each to the sum of squares, so there are at most
 * floor(sumsq / t^2) of them. `*exact` when every nonzero element is at most t (max |x| <= t).
 */
static uint64_t small_lower_bound(const struct fp_dbg_value_summary *v, double amax, double t,
				  bool *exact)
{
	uint64_t nonzero = v->finite_count - FP_MIN(v->zero_count, v->finite_count);
	double big;

	*exact = amax <= t;
	if (*exact)
		return nonzero;
	/* a little slack for the rounding of the device's float64 sum of squares */
	big = ceil(v->sumsq / (t * t) * (1.0 + 1e-9));
	if (!(big < (double)nonzero)) /* also when big is inf or NaN */
		return 0;
	return nonzero - (uint64_t)big;
}

/*
 * Apply the rule of `role` to the value record `val`; the finding is filed under `site` (the
 * operand site, or the site that carries the check) with `host`'s program and execution.
 */
static void apply_rule(struct ctx *x, enum fp_dbg_role role, enum fp_dtype target,
		       const struct fp_dbg_record *val, uint32_t site, uint32_t check,
		       const char *subject, const struct fp_dbg_record *host)
{
	struct fp_dbg_value_summary v;
	enum fp_dtype src = fp_dbg_record_dtype(val);
	struct agg *g = NULL;
	double amax;

	fp_dbg_record_value_summary(val, &v);
	if (fp_dbg_record_kind(val) != FP_DBG_KIND_VALUE || src == FP_DTYPE_POINTER)
		return;
	/* a counts-only record (check mode, nan/inf only) has nothing these rules read */
	if (v.counts_only)
		return;
	amax = v.finite_count ? FP_MAX(fabs(v.min), fabs(v.max)) : 0;
	switch (role) {
	case FP_DBG_ROLE_CAST_SRC: {
		const struct frange *fr = frange_of(target);
		uint64_t nonzero, lb;
		bool exact;

		if (!fr || src == target || !v.finite_count)
			return;
		if (amax >= fr->overflow) {
			g = aggregate(x, FP_DBG_FINDING_PRECISION_LOSS, site, SUB_OVERFLOW,
				      UINT32_MAX, UINT32_MAX, check, host);
			if (g && (g->f.instance_count == 1 || amax > g->f.value))
				g->f.value = amax;
			break;
		}
		nonzero = v.finite_count - FP_MIN(v.zero_count, v.finite_count);
		if (!nonzero || !fp_dtype_is_float(src))
			return; /* integers are 0 or at least 1: they never underflow */
		lb = small_lower_bound(&v, amax, fr->min_sub / 2, &exact);
		if (lb && 2 * lb >= nonzero) {
			g = aggregate(x, FP_DBG_FINDING_PRECISION_LOSS, site, SUB_FLUSH, UINT32_MAX,
				      UINT32_MAX, check, host);
		} else {
			lb = small_lower_bound(&v, amax, fr->min_normal, &exact);
			if (!lb || 2 * lb < nonzero)
				return;
			g = aggregate(x, FP_DBG_FINDING_PRECISION_LOSS, site, SUB_SUBNORMAL,
				      UINT32_MAX, UINT32_MAX, check, host);
		}
		if (g) {
			g->f.count += lb;
			g->lower_exact &= exact;
			g->f.count_is_lower_bound = !g->lower_exact;
			if (g->f.instance_count == 1 || amax > g->f.value)
				g->f.value = amax;
		}
		break;
	}
	case FP_DBG_ROLE_DIVISOR: {
		double amin, tiny = tiny_of(src);

		if (v.zero_count) {
			g = aggregate(x, FP_DBG_FINDING_DIVISION_BY_ZERO, site, SUB_ZERO,
				      UINT32_MAX, UINT32_MAX, check, host);
			if (g)
				g->f.count += v.zero_count;
			break;
		}
		if (!v.finite_count || !v.is_float || !(tiny > 0))
			return;
		/* the smallest |x| is known only when every element has the same sign */
		if (v.min > 0)
			amin = v.min;
		else if (v.max < 0)
			amin = -v.max;
		else
			return;
		if (!(amin < tiny))
			return;
		g = aggregate(x, FP_DBG_FINDING_DIVISION_BY_ZERO, site, SUB_TINY, UINT32_MAX,
			      UINT32_MAX, check, host);
		if (g && (g->f.instance_count == 1 || amin < g->f.value))
			g->f.value = amin;
		break;
	}
	case FP_DBG_ROLE_SQRT_ARG:
	case FP_DBG_ROLE_LOG_ARG:
		if (!v.finite_count || !(v.min < 0))
			return;
		g = aggregate(x, FP_DBG_FINDING_INVALID_DOMAIN, site,
			      role == FP_DBG_ROLE_SQRT_ARG ? SUB_SQRT : SUB_LOG, UINT32_MAX,
			      UINT32_MAX, check, host);
		if (g && (g->f.instance_count == 1 || v.min < g->f.value))
			g->f.value = v.min;
		break;
	case FP_DBG_ROLE_NONE:
	case FP_DBG_ROLE_LOADED:
		return;
	}
	if (g) {
		g->f.target_dtype = role == FP_DBG_ROLE_CAST_SRC ? target : FP_DTYPE_UNKNOWN;
		g->f.subject = subject;
		g->operand_dtype = src;
	}
}

/* Rules on operand sites: each record is the operand itself. */
static void check_operands(struct ctx *x)
{
	const struct fp_dbg_run *run = x->run;
	size_t si, i, n;

	for (si = 0; si < run->nsites && !x->err; si++) {
		const struct fp_dbg_site *s = &run->sites[si];
		const struct fp_dbg_record *r;

		if (s->kind != FP_DBG_KIND_VALUE || s->role == FP_DBG_ROLE_NONE ||
		    s->role == FP_DBG_ROLE_LOADED)
			continue;
		r = fp_dbg_run_records(run, si, &n);
		for (i = 0; i < n && !x->err; i++)
			apply_rule(x, s->role, s->target_dtype, &r[i], (uint32_t)si, 0, s->name,
				   &r[i]);
	}
}

/* ---- NaN/Inf origin and checks by reference: one walk per program in execution order ------- */

struct walk {
	uint32_t *name_of;  /* per site: tracked variable id, or UINT32_MAX */
	uint32_t *read_ids; /* all sites' reads, flattened */
	size_t *read_first; /* site i's reads: read_ids[read_first[i] .. read_first[i+1]) */
	uint32_t *check_ids;
	size_t *check_first;
	uint32_t *stamp;  /* per variable: program walk that last set it */
	uint32_t *latest; /* per variable: its latest record (index into run->records) */
	uint32_t *order;  /* per (program, slot): record index + 1, 0 when unused */
	uint32_t nnames;
};

static void walk_release(struct walk *w)
{
	fp_free(w->name_of);
	fp_free(w->read_ids);
	fp_free(w->read_first);
	fp_free(w->check_ids);
	fp_free(w->check_first);
	fp_free(w->stamp);
	fp_free(w->latest);
	fp_free(w->order);
}

/* Does the walk have anything to do? (NaN/Inf in some value record, or a check.) */
static bool walk_needed(const struct fp_dbg_run *run)
{
	size_t i;

	for (i = 0; i < run->nsites; i++)
		if (run->sites[i].nchecks)
			return true;
	for (i = 0; i < run->nrecords; i++) {
		const struct fp_dbg_record *r = &run->records[i];

		if (fp_dbg_record_kind(r) == FP_DBG_KIND_VALUE && r->words[2])
			return true;
	}
	return false;
}

static bool tracked(const struct fp_dbg_site *s)
{
	return s->kind == FP_DBG_KIND_VALUE &&
	       (s->role == FP_DBG_ROLE_NONE || s->role == FP_DBG_ROLE_LOADED);
}

static int walk_init(struct ctx *x, struct walk *w)
{
	const struct fp_dbg_run *run = x->run;
	const struct fp_dbg_run_info *in = &run->info;
	struct fp_intern *names = fp_intern_new();
	size_t i, k, nreads = 0, nchecks = 0, ns = run->nsites;
	uint64_t slots;
	uint32_t id;
	int st = FP_OK;

	memset(w, 0, sizeof(*w));
	if (!names)
		return nomem(x);
	if (in->programs && in->slots_per_program > MAX_ORDER_SLOTS / in->programs) {
		fp_intern_free(names);
		return x->err = fp_diag_set(x->diag, FP_ELIMIT, 0,
					    "findings: %" PRIu64 " programs x %" PRIu64
					    " slots are too many to order",
					    in->programs, in->slots_per_program);
	}
	slots = in->programs * in->slots_per_program;
	for (i = 0; i < ns; i++) {
		nreads += run->sites[i].nreads;
		nchecks += run->sites[i].nchecks;
	}
	w->name_of = fp_calloc(ns + 1, sizeof(*w->name_of));
	w->read_first = fp_calloc(ns + 1, sizeof(*w->read_first));
	w->read_ids = fp_calloc(nreads + 1, sizeof(*w->read_ids));
	w->check_first = fp_calloc(ns + 1, sizeof(*w->check_first));
	w->check_ids = fp_calloc(nchecks + 1, sizeof(*w->check_ids));
	w->order = fp_calloc(slots + 1, sizeof(*w->order));
	if (!w->name_of || !w->read_first || !w->read_ids || !w->check_first || !w->check_ids ||
	    !w->order)
		goto fail_nomem;
	/* variables: the names of tracked value sites */
	for (i = 0; i < ns; i++) {
		w->name_of[i] = UINT32_MAX;
		if (!tracked(&run->sites[i]))
			continue;
		if ((st = fp__dbg_var_key(names, run->sites[i].frame, run->sites[i].name, true,
					  &id)))
			goto fail_st;
		w->name_of[i] = id;
	}
	w->nnames = fp_intern_count(names);
	for (i = 0, nreads = 0, nchecks = 0; i < ns; i++) {
		const struct fp_dbg_site *s = &run->sites[i];

		w->read_first[i] = nreads;
		for (k = 0; k < s->nreads; k++) {
			const struct fp_dbg_read *r = &s->reads[k];

			w->read_ids[nreads++] =
				fp__dbg_var_key(names, r->frame, r->var, false, &id) ? UINT32_MAX :
										       id;
		}
		w->check_first[i] = nchecks;
		for (k = 0; k < s->nchecks; k++) {
			const struct fp_dbg_check *ck = &s->checks[k];

			w->check_ids[nchecks++] =
				fp__dbg_var_key(names, ck->frame, ck->var, false, &id) ?
					UINT32_MAX :
					id;
		}
	}
	w->read_first[ns] = nreads;
	w->check_first[ns] = nchecks;
	w->stamp = fp_calloc(w->nnames + 1, sizeof(*w->stamp));
	w->latest = fp_calloc(w->nnames + 1, sizeof(*w->latest));
	if (!w->stamp || !w->latest)
		goto fail_nomem;
	for (i = 0; i < run->nrecords; i++) {
		const struct fp_dbg_record *r = &run->records[i];

		if (r->program < in->programs && r->slot < in->slots_per_program && i < UINT32_MAX)
			w->order[r->program * in->slots_per_program + r->slot] = (uint32_t)i + 1;
	}
	fp_intern_free(names);
	return FP_OK;

fail_nomem:
	st = FP_ENOMEM;
fail_st:
	fp_intern_free(names);
	walk_release(w);
	if (st == FP_ENOMEM)
		return nomem(x);
	return x->err = fp_diag_set(x->diag, st, 0, "findings: cannot index variable names");
}

/* The latest record of variable `id` in the program being walked, or NULL. */
static const struct fp_dbg_record *latest(const struct ctx *x, const struct walk *w, uint32_t id,
					  uint32_t gen)
{
	if (id == UINT32_MAX || w->stamp[id] != gen)
		return NULL;
	return &x->run->records[w->latest[id]];
}

/* "a, b (finite); c (not observed)": what the statement read, for the message. */
static const char *inputs_text(struct ctx *x, const struct walk *w, size_t si, uint32_t gen)
{
	const struct fp_dbg_site *s = &x->run->sites[si];
	struct fp_strbuf fin, unk;
	const char *out = "";
	size_t k, j;

	fp_strbuf_init(&fin, 4096);
	fp_strbuf_init(&unk, 4096);
	for (k = 0; k < s->nreads; k++) {
		const char *nm = s->reads[k].name;
		bool dup = false;

		for (j = 0; j < k && !dup; j++)
			dup = !strcmp(s->reads[j].name, nm);
		if (dup)
			continue;
		if (latest(x, w, w->read_ids[w->read_first[si] + k], gen))
			fp_strbuf_addf(&fin, "%s%s", fin.len ? ", " : "", nm);
		else
			fp_strbuf_addf(&unk, "%s%s", unk.len ? ", " : "", nm);
	}
	if (fin.len || unk.len) {
		struct fp_strbuf all;

		fp_strbuf_init(&all, 8192);
		if (fin.len)
			fp_strbuf_addf(&all, "finite inputs: %s", fin.buf);
		if (unk.len)
			fp_strbuf_addf(&all, "%sinputs not observed in this program: %s",
				       fin.len ? "; " : "", unk.buf);
		out = keep(x, all.buf ? all.buf : "");
		fp_strbuf_release(&all);
	}
	fp_strbuf_release(&fin);
	fp_strbuf_release(&unk);
	return out ? out : "";
}

/*
 * NaN (or Inf) counts of a value record that are certainly not the padding of masked-off load
 * lanes. `nonfinite` is the record's count, `padding_kind` the `other` value that would produce
 * them. *lower says the result is a lower bound.
 */
static uint64_t from_memory(const struct ctx *x, const struct fp_dbg_site *s,
			    const struct fp_dbg_record *rec, uint64_t nonfinite,
			    enum fp_dbg_other padding_kind, bool *lower)
{
	const struct fp_dbg_record *ld;
	struct fp_dbg_addr_summary a;
	uint64_t padding;

	*lower = false;
	if (s->other != padding_kind && s->other != FP_DBG_OTHER_UNKNOWN)
		return nonfinite; /* masked-off lanes hold something else */
	ld = s->load_site == UINT32_MAX ?
		     NULL :
		     fp_dbg_run_find(x->run, s->load_site, rec->program, rec->execution);
	if (!ld)
		return 0; /* cannot tell padding from data: say nothing */
	fp_dbg_record_addr_summary(ld, &a);
	padding = a.lanes - FP_MIN(a.active_lane_count, a.lanes);
	*lower = padding > 0;
	return nonfinite > padding ? nonfinite - padding : 0;
}

static void origin(struct ctx *x, const struct walk *w, size_t si, const struct fp_dbg_record *rec,
		   uint32_t gen, bool *found_nan, bool *found_inf)
{
	const struct fp_dbg_site *s = &x->run->sites[si];
	struct fp_dbg_value_summary v;
	bool nan_reads = false, inf_reads = false, lower_nan = false, lower_inf = false;
	uint64_t nan, inf;
	size_t k;
	int pass;

	fp_dbg_record_value_summary(rec, &v);
	nan = *found_nan ? 0 : v.nan_count;
	/* an infinity written as a literal in the statement (-inf padding, a running max's start)
	 * is meant: not an origin */
	inf = *found_inf || s->inf_literal ? 0 : v.inf_count;
	if (!nan && !inf)
		return;
	if (s->role == FP_DBG_ROLE_LOADED) {
		nan = from_memory(x, s, rec, nan, FP_DBG_OTHER_NAN, &lower_nan);
		inf = from_memory(x, s, rec, inf, FP_DBG_OTHER_INF, &lower_inf);
	} else {
		/* a NaN is born here when nothing read held NaN (inf - inf makes one); an Inf when
		 * everything read was finite */
		for (k = 0; k < s->nreads; k++) {
			const struct fp_dbg_record *r =
				latest(x, w, w->read_ids[w->read_first[si] + k], gen);

			if (!r || fp_dbg_record_kind(r) != FP_DBG_KIND_VALUE)
				continue;
			if (r->words[2] & 0xffffffffu)
				nan_reads = true;
			if (r->words[2] >> 32)
				inf_reads = true;
		}
		if (nan_reads)
			nan = 0;
		if (nan_reads || inf_reads)
			inf = 0;
		if (!nan && !inf)
			return;
	}
	for (pass = 0; pass < 2; pass++) {
		uint64_t cnt = pass ? inf : nan;
		struct agg *g;

		if (!cnt)
			continue;
		g = aggregate(x, pass ? FP_DBG_FINDING_INF_ORIGIN : FP_DBG_FINDING_NAN_ORIGIN,
			      (uint32_t)si, 0, UINT32_MAX, UINT32_MAX, 0, rec);
		if (!g)
			return;
		if (g->f.instance_count == 1) {
			g->f.subject = s->name;
			g->f.from_memory = s->role == FP_DBG_ROLE_LOADED;
			g->inputs = g->f.from_memory ? "" : inputs_text(x, w, si, gen);
			g->sub = !pass && inf_reads; /* NaN from infinite inputs */
		}
		g->f.count += cnt;
		g->f.count_is_lower_bound |= pass ? lower_inf : lower_nan;
		*(pass ? found_inf : found_nan) = true;
	}
}

static void check_walk(struct ctx *x)
{
	const struct fp_dbg_run *run = x->run;
	const struct fp_dbg_run_info *in = &run->info;
	struct walk w;
	uint64_t p, k, S = in->slots_per_program;
	uint32_t gen = 0;

	if (!walk_needed(run) || walk_init(x, &w))
		return;
	for (p = 0; p < in->programs && !x->err; p++) {
		bool found_nan = false, found_inf = false;

		if (++gen == 0) { /* wrapped: forget every stamp */
			memset(w.stamp, 0, (w.nnames + 1) * sizeof(*w.stamp));
			gen = 1;
		}
		for (k = 0; k < S && !x->err; k++) {
			uint32_t ri = w.order[p * S + k];
			const struct fp_dbg_record *rec;
			const struct fp_dbg_site *s;
			size_t c, si;

			if (!ri)
				break; /* slots are used densely from 0 */
			rec = &run->records[ri - 1];
			si = rec->site;
			s = &run->sites[si];
			if (s->kind != FP_DBG_KIND_VALUE)
				continue;
			/* checks read the values before this statement's results replace them */
			for (c = 0; c < s->nchecks; c++) {
				const struct fp_dbg_record *val =
					latest(x, &w, w.check_ids[w.check_first[si] + c], gen);

				if (val)
					apply_rule(x, s->checks[c].role, s->checks[c].target_dtype,
						   val, (uint32_t)si, (uint32_t)c + 1,
						   s->checks[c].name, rec);
			}
			if (!tracked(s))
				continue;
			origin(x, &w, si, rec, gen, &found_nan, &found_inf);
			if (w.name_of[si] != UINT32_MAX) {
				w.stamp[w.name_of[si]] = gen;
				w.latest[w.name_of[si]] = ri - 1;
			}
		}
	}
	walk_release(&w);
}

/* ---- messages ------------------------------------------------------------------------------- */

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

/* A tensor descriptor that reaches outside the tensor it was built from. */
static void desc_message(const struct fp_dbg_run *run, const struct agg *g, struct fp_strbuf *sb)
{
	const struct fp_dbg_finding *f = &g->f;
	const struct fp_dbg_site *s = &run->sites[f->site];
	uint64_t vbytes = f->view_hi - f->view_lo;
	bool host = g->sub == 1;

	if (host)
		fp_strbuf_addf(sb, "the tensor descriptor `%s` (%s) addresses ", f->param,
			       g->inputs && g->inputs[0] ? g->inputs : "its shape and strides");
	else
		fp_strbuf_addf(sb, "the tensor descriptor made from `%s` addresses ", s->name);
	if (f->bytes_before && f->bytes_past)
		fp_strbuf_addf(sb,
			       "up to %" PRIu64 " bytes before the start and %" PRIu64
			       " bytes past the end of ",
			       f->bytes_before, f->bytes_past);
	else if (f->bytes_before)
		fp_strbuf_addf(sb, "up to %" PRIu64 " bytes before the start of ", f->bytes_before);
	else
		fp_strbuf_addf(sb, "up to %" PRIu64 " bytes past the end of ", f->bytes_past);
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
	const struct fp_dbg_site *s = &run->sites[f->site];
	bool store = s->kind == FP_DBG_KIND_STORE || s->kind == FP_DBG_KIND_ATOMIC;
	uint64_t vbytes = f->view_hi - f->view_lo, sbytes = f->storage_hi - f->storage_lo;
	const char *verb;

	access_words(s, sb, &verb);
	fp_strbuf_addf(sb, " `%s` %s ", s->name, verb);
	if (f->bytes_before && f->bytes_past)
		fp_strbuf_addf(sb,
			       "up to %" PRIu64 " bytes before the start and %" PRIu64
			       " bytes past the end of ",
			       f->bytes_before, f->bytes_past);
	else if (f->bytes_before)
		fp_strbuf_addf(sb, "up to %" PRIu64 " bytes before the start of ", f->bytes_before);
	else
		fp_strbuf_addf(sb, "up to %" PRIu64 " bytes past the end of ", f->bytes_past);
	if (f->param_known)
		fp_strbuf_addf(sb, "the tensor `%s` (a view of %" PRIu64 " bytes)", f->param,
			       vbytes);
	else
		fp_strbuf_addf(sb,
			       "every tensor argument's view (the pointer's base is not known; "
			       "nearest: `%s`, a view of %" PRIu64 " bytes)",
			       f->param, vbytes);
	switch (f->where) {
	case FP_DBG_OOB_INSIDE_STORAGE:
		fp_strbuf_addf(sb,
			       ". It stays inside the same allocation (%" PRIu64
			       " bytes), so it silently %s neighbouring data that is not part of "
			       "the view",
			       sbytes, store ? "overwrites" : "reads");
		break;
	case FP_DBG_OOB_OTHER_STORAGE:
		fp_strbuf_addf(sb,
			       ". It lands in the allocation of `%s`, another argument, so it "
			       "silently %s that tensor's data",
			       f->other_param ? f->other_param : "?",
			       store ? "overwrites" : "reads");
		break;
	default:
		fp_strbuf_addf(sb,
			       ". It leaves every allocation the launch knows of: on a GPU it %s "
			       "memory that belongs to something else, or faults",
			       store ? "corrupts" : "reads");
		break;
	}
	fp_strbuf_addf(sb, " (first offending address 0x%" PRIx64, f->address);
	if (f->lanes_known)
		fp_strbuf_addf(sb, ", %" PRIu64 " active lane%s outside the view", f->lanes_out,
			       f->lanes_out == 1 ? "" : "s");
	fp_strbuf_addstr(sb, ").");
}

/* Does the statement load from memory? */
static bool loads(const struct fp_dbg_run *run, uint32_t stmt)
{
	const struct fp_dbg_statement *st = &run->stmts[stmt];
	size_t i;

	for (i = 0; i < st->nsites; i++)
		if (run->sites[st->sites[i]].kind == FP_DBG_KIND_LOAD ||
		    run->sites[st->sites[i]].kind == FP_DBG_KIND_ATOMIC)
			return true;
	return false;
}

static void num_message(const struct fp_dbg_run *run, const struct agg *g, struct fp_strbuf *sb)
{
	const struct fp_dbg_finding *f = &g->f;
	const char *tn = fp_dtype_name(f->target_dtype);
	const struct frange *fr = frange_of(f->target_dtype);
	const char *lb = f->count_is_lower_bound ? "at least " : "";

	switch (f->kind) {
	case FP_DBG_FINDING_NAN_ORIGIN:
	case FP_DBG_FINDING_INF_ORIGIN: {
		const char *what = f->kind == FP_DBG_FINDING_NAN_ORIGIN ? "NaN" : "Inf";

		if (f->from_memory)
			fp_strbuf_addf(
				sb,
				"`%s` holds %s%" PRIu64 " %s value%s loaded from memory: the "
				"input data already contains %s (it is not computed here)",
				f->subject, lb, f->count, what, f->count == 1 ? "" : "s", what);
		else
			fp_strbuf_addf(
				sb,
				"`%s` is the first value holding %s (%" PRIu64
				" element%s) while %s: the %s is produced here%s%s%s",
				f->subject, what, f->count, f->count == 1 ? "" : "s",
				g->sub ? "no value the statement reads held NaN (some held "
					 "infinities: inf - inf, 0 * inf and inf / inf make NaN)" :
					 "every value the statement reads was finite",
				what, g->inputs && g->inputs[0] ? "; " : "",
				g->inputs ? g->inputs : "",
				loads(run, f->statement) ?
					" (the statement also loads from memory: the data may "
					"already hold it)" :
					"");
		break;
	}
	case FP_DBG_FINDING_DIVISION_BY_ZERO:
		if (g->sub == SUB_ZERO)
			fp_strbuf_addf(sb,
				       "divides by zero: the divisor `%s` holds %" PRIu64
				       " zero element%s (x/0 gives inf, 0/0 gives NaN)",
				       f->subject, f->count, f->count == 1 ? "" : "s");
		else
			fp_strbuf_addf(
				sb,
				"divides by values within %.3g of zero: the smallest |%s| is "
				"%.6g, below the smallest normal %s value",
				tiny_of(g->operand_dtype), f->subject, f->value,
				fp_dtype_name(g->operand_dtype));
		break;
	case FP_DBG_FINDING_INVALID_DOMAIN:
		fp_strbuf_addf(sb,
			       "takes the %s of negative values: `%s` goes down to %.6g (the "
			       "result is NaN there)",
			       g->sub == SUB_SQRT ? "square root" : "logarithm", f->subject,
			       f->value);
		break;
	case FP_DBG_FINDING_PRECISION_LOSS:
		if (g->sub == SUB_OVERFLOW)
			fp_strbuf_addf(
				sb,
				"converts `%s` to %s although |%s| reaches %.6g, beyond %s's "
				"largest finite value %.6g: those elements become %s",
				f->subject, tn, f->subject, f->value, tn, fr ? fr->max_finite : 0.0,
				f->target_dtype == FP_DTYPE_FLOAT8E4NV ? "NaN (or saturate)" :
									 "inf");
		else if (g->sub == SUB_FLUSH)
			fp_strbuf_addf(
				sb,
				"converts `%s` to %s and %s%" PRIu64
				" of its nonzero values are below %s's smallest subnormal "
				"(%.3g) by half or more: they flush to zero (largest |%s| is "
				"%.6g)",
				f->subject, tn, lb, f->count, tn, fr ? fr->min_sub : 0.0,
				f->subject, f->value);
		else
			fp_strbuf_addf(
				sb,
				"converts `%s` to %s and %s%" PRIu64
				" of its nonzero values are below %s's smallest normal (%.3g): "
				"they keep only a few significant bits (largest |%s| is %.6g)",
				f->subject, tn, lb, f->count, tn, fr ? fr->min_normal : 0.0,
				f->subject, f->value);
		break;
	case FP_DBG_FINDING_OUT_OF_BOUNDS:
	case FP_DBG_FINDING_DESCRIPTOR_EXTENT:
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

		fp_strbuf_reset(&sb);
		if (g->f.kind == FP_DBG_FINDING_OUT_OF_BOUNDS)
			oob_message(x->run, g, &sb);
		else if (g->f.kind == FP_DBG_FINDING_DESCRIPTOR_EXTENT)
			desc_message(x->run, g, &sb);
		else
			num_message(x->run, g, &sb);
		g->f.message = keep(x, sb.buf ? sb.buf : "");
		if (!g->f.message)
			break;
		fs->out[i] = g->f;
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
	fp_hashmap_init(&x.index);
	if (!copy_args(&x, args, nargs)) {
		check_bounds(&x);
		check_operands(&x);
		check_walk(&x);
		if (!x.err)
			finish(&x);
	}
	fp_hashmap_release(&x.index);
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
	for (i = 0; i < f->n; i++)
		if (kinds & (1u << f->out[i].kind))
			f->out[n++] = f->out[i];
	f->n = n;
}

size_t fp_dbg_findings_count(const struct fp_dbg_findings *f)
{
	return f && f->out ? f->n : 0;
}

const struct fp_dbg_finding *fp_dbg_findings_at(const struct fp_dbg_findings *f, size_t i)
{
	return f && f->out && i < f->n ? &f->out[i] : NULL;
}

const struct fp_dbg_arg *fp_dbg_findings_args(const struct fp_dbg_findings *f, size_t *n)
{
	*n = f ? f->nargs : 0;
	return f ? f->args : NULL;
}
