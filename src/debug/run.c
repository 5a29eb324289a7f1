/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Read access to a decoded run: statements, sites, records, dumps, and the summaries derived
 * from a record's words (mean, l2 norm, address span...). Everything here is pure and
 * allocation-free; decoding and validation live in decode.c, the site table in sites.c.
 */
#include "fp-setup.h"

#include <math.h>

#include "debug/debug-internal.h"

void fp_dbg_run_free(struct fp_dbg_run *run)
{
	if (!run)
		return;
	fp_free(run->records);
	fp_free(run->site_first);
	fp_free(run->dump);
	fp_arena_release(&run->arena);
	fp_free(run);
}

const struct fp_dbg_run_info *fp_dbg_run_info(const struct fp_dbg_run *run)
{
	return &run->info;
}

size_t fp_dbg_run_statement_count(const struct fp_dbg_run *run)
{
	return run->nstmts;
}

const struct fp_dbg_statement *fp_dbg_run_statement(const struct fp_dbg_run *run, size_t i)
{
	return i < run->nstmts ? &run->stmts[i] : NULL;
}

const struct fp_dbg_check_slot *fp_dbg_run_checks(const struct fp_dbg_run *run, size_t *n)
{
	*n = run ? run->nchecks : 0;
	return run && run->nchecks ? run->checks : NULL;
}

size_t fp_dbg_run_params(const struct fp_dbg_run *run, const char *const **names,
			 const struct fp_dbg_table_entry **table)
{
	if (names)
		*names = run ? (const char *const *)run->params : NULL;
	if (table)
		*table = run ? run->table : NULL;
	return run ? run->nparams : 0;
}

size_t fp_dbg_run_frame_count(const struct fp_dbg_run *run)
{
	return run->nframes;
}

const struct fp_dbg_frame *fp_dbg_run_frame(const struct fp_dbg_run *run, uint32_t id)
{
	return id >= 1 && id <= run->nframes ? &run->frames[id - 1] : NULL;
}

size_t fp_dbg_run_unobserved_count(const struct fp_dbg_run *run)
{
	return run->nunobserved;
}

const struct fp_dbg_unobserved *fp_dbg_run_unobserved(const struct fp_dbg_run *run, size_t i)
{
	return i < run->nunobserved ? &run->unobserved[i] : NULL;
}

uint32_t fp_dbg_run_site_unobservable(const struct fp_dbg_run *run, size_t i)
{
	const struct fp_dbg_record *r;
	uint32_t status = FP_DBG_ADDR_COMPLETE;
	size_t n, k;

	if (i >= run->nsites || !FP_DBG_KIND_IS_ADDR(run->sites[i].kind) ||
	    run->sites[i].kind == FP_DBG_KIND_DESCRIPTOR)
		return FP_DBG_ADDR_COMPLETE;
	/* the site's bounds check saw a block pointer it does not follow (check mode keeps no
	 * records to say so) */
	for (k = 0; k < run->nchecks; k++)
		if (run->checks[k].site == i && run->checks[k].unobservable)
			return FP_DBG_ADDR_BLOCK_POINTER;
	r = fp_dbg_run_records(run, i, &n);
	for (k = 0; k < n; k++) {
		uint32_t s = (uint32_t)(r[k].words[2] >> 32);

		if (s == FP_DBG_ADDR_COMPLETE)
			return FP_DBG_ADDR_COMPLETE;
		status = s;
	}
	return status;
}

const char *fp_dbg_addr_status_reason(uint32_t status)
{
	switch (status) {
	case FP_DBG_ADDR_BLOCK_POINTER:
		return "a block pointer whose shape, strides and offsets the rewriter cannot follow (not "
		       "made by tl.make_block_ptr and moved by tl.advance in its sight: returned by a call, "
		       "kept in a tuple or chosen by a conditional expression)";
	case FP_DBG_ADDR_TENSOR_DESCRIPTOR:
		return "a tensor descriptor whose base the rewriter does not know (neither made by "
		       "tl.make_tensor_descriptor in its sight nor a TensorDescriptor argument)";
	case FP_DBG_ADDR_UNSUPPORTED:
		return "a pointer the record helpers cannot summarise";
	default:
		return "addresses observed";
	}
}

/*
 * Whether unobserved memory entry `i` is an access of a statement counted already: an observed
 * statement at its line, an unobserved statement entry at its line or with its reason (a helper
 * left as written: its accesses are lines of the helper, the statement is the call), or an
 * earlier memory entry at its line.
 */
static bool statement_counted(const struct fp_dbg_run *run, size_t i)
{
	const struct fp_dbg_unobserved *m = &run->unobserved[i];
	size_t j;

	for (j = 0; j < run->nstmts; j++) {
		const struct fp_dbg_statement *st = &run->stmts[j];

		if (st->frame == m->frame && m->line >= st->line && m->line <= st->end_line)
			return true;
	}
	for (j = 0; j < run->nunobserved; j++) {
		const struct fp_dbg_unobserved *u = &run->unobserved[j];

		if (u->frame != m->frame)
			continue;
		if (u->what == FP_DBG_UNOBSERVED_STATEMENT &&
		    (u->line == m->line ||
		     (u->reason && m->reason && !strcmp(u->reason, m->reason))))
			return true;
		if (u->what == FP_DBG_UNOBSERVED_MEMORY && j < i && u->line == m->line)
			return true;
	}
	return false;
}

/*
 * Statements count those with an observed site and those listed unobserved; a statement whose
 * only unobserved part is its accesses (a load in an `elif` header or under `and`/`or`) is listed
 * by its accesses alone, and counts once as a statement not observed all the same (at level 0 a
 * statement is one with a memory access: docs/guide/debugger.md, "Coverage").
 */
void fp_dbg_run_coverage(const struct fp_dbg_run *run, struct fp_dbg_coverage *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < run->nsites; i++) {
		enum fp_dbg_kind k = run->sites[i].kind;

		if (k != FP_DBG_KIND_LOAD && k != FP_DBG_KIND_STORE && k != FP_DBG_KIND_ATOMIC)
			continue;
		out->memory_sites++;
		if (!fp_dbg_run_site_unobservable(run, i))
			out->memory_sites_observed++;
	}
	out->statements_observed = run->nstmts;
	out->statements = out->statements_observed;
	for (i = 0; i < run->nunobserved; i++) {
		if (run->unobserved[i].what != FP_DBG_UNOBSERVED_MEMORY) {
			out->statements++;
			continue;
		}
		out->memory_sites++;
		if (!statement_counted(run, i))
			out->statements++;
	}
}

size_t fp_dbg_run_site_count(const struct fp_dbg_run *run)
{
	return run->nsites;
}

const struct fp_dbg_site *fp_dbg_run_site(const struct fp_dbg_run *run, size_t i)
{
	return i < run->nsites ? &run->sites[i] : NULL;
}

const struct fp_dbg_record *fp_dbg_run_records(const struct fp_dbg_run *run, size_t i, size_t *n)
{
	size_t a, b;

	*n = 0;
	if (i >= run->nsites || !run->site_first)
		return NULL;
	a = run->site_first[i];
	b = run->site_first[i + 1];
	if (a == b)
		return NULL;
	*n = b - a;
	return &run->records[a];
}

const struct fp_dbg_record *fp_dbg_run_find(const struct fp_dbg_run *run, size_t i,
					    uint64_t program, uint32_t execution)
{
	const struct fp_dbg_record *r;
	size_t n, lo = 0, hi;

	r = fp_dbg_run_records(run, i, &n);
	hi = n;
	while (lo < hi) { /* first record with (program, execution) >= the key */
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].program < program ||
		    (r[mid].program == program && r[mid].execution < execution))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && r[lo].program == program && r[lo].execution == execution)
		return &r[lo];
	return NULL;
}

const uint64_t *fp_dbg_run_dump(const struct fp_dbg_run *run, const struct fp_dbg_record *rec,
				size_t *nwords)
{
	uint64_t off = fp_dbg_record_dump_offset(rec);

	*nwords = 0;
	/* decode checked off + numel <= dump_words; check again for hand-made records */
	if (off == FP_DBG_NO_DUMP || off > run->dump_words || rec->numel > run->dump_words - off)
		return NULL;
	*nwords = (size_t)rec->numel;
	return run->dump + off;
}

enum fp_dbg_kind fp_dbg_record_kind(const struct fp_dbg_record *rec)
{
	return (enum fp_dbg_kind)((rec->words[0] >> 16) & 0xff);
}

enum fp_dtype fp_dbg_record_dtype(const struct fp_dbg_record *rec)
{
	return (enum fp_dtype)((rec->words[0] >> 24) & 0xff);
}

unsigned fp_dbg_record_shape(const struct fp_dbg_record *rec, uint64_t dims[3], bool *flattened,
			     unsigned *ndim)
{
	unsigned nd = (unsigned)(rec->words[0] >> 32) & 0xf, i;
	bool flat = (rec->words[0] >> 36) & FP_DBG_SHAPE_FLATTENED;

	if (flattened)
		*flattened = flat;
	if (ndim)
		*ndim = nd;
	if (flat) {
		dims[0] = rec->words[1] & ~(UINT64_C(1) << 63);
		return 1;
	}
	if (nd > 3)
		nd = 3;
	for (i = 0; i < nd; i++)
		dims[i] = (rec->words[1] >> (21 * i)) & ((UINT64_C(1) << 21) - 1);
	return nd;
}

static double f64(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

void fp_dbg_record_value_summary(const struct fp_dbg_record *rec, struct fp_dbg_value_summary *out)
{
	const uint64_t *w = rec->words;
	enum fp_dtype dt = fp_dbg_record_dtype(rec);

	memset(out, 0, sizeof(*out));
	if (fp_dbg_record_kind(rec) != FP_DBG_KIND_VALUE)
		return;
	out->element_count = rec->numel;
	out->nan_count = w[2] & 0xffffffffu;
	out->inf_count = w[2] >> 32;
	out->zero_count = w[3] & 0xffffffffu;
	out->finite_count = out->nan_count + out->inf_count <= rec->numel ?
				    rec->numel - out->nan_count - out->inf_count :
				    0;
	out->sum = f64(w[4]);
	out->sumsq = f64(w[5]);
	out->l2_norm = sqrt(out->sumsq);
	out->is_float = fp_dtype_is_float(dt);
	out->is_unsigned = dt == FP_DTYPE_UINT64;
	if (out->is_float) {
		out->min = f64(w[6]);
		out->max = f64(w[7]);
	} else {
		out->imin = (int64_t)w[6];
		out->imax = (int64_t)w[7];
		out->min = out->is_unsigned ? (double)w[6] : (double)out->imin;
		out->max = out->is_unsigned ? (double)w[7] : (double)out->imax;
	}
	out->mean = out->finite_count ? out->sum / (double)out->finite_count : NAN;
	if (!out->finite_count) {
		out->min = NAN;
		out->max = NAN;
	}
	if ((w[0] >> 36) & FP_DBG_REC_COUNTS) {
		out->counts_only = true;
		out->zero_count = 0;
		out->sum = out->sumsq = out->l2_norm = 0;
		out->mean = out->min = out->max = NAN;
	}
}

void fp_dbg_record_addr_summary(const struct fp_dbg_record *rec, struct fp_dbg_addr_summary *out)
{
	const uint64_t *w = rec->words;
	uint64_t esize = fp_dtype_size(fp_dbg_record_dtype(rec));

	memset(out, 0, sizeof(*out));
	if (!FP_DBG_KIND_IS_ADDR(fp_dbg_record_kind(rec)))
		return;
	out->lanes = rec->numel;
	out->active_lane_count = w[2] & 0xffffffffu;
	out->status = (uint32_t)(w[2] >> 32);
	out->has_addresses = out->active_lane_count > 0;
	if (!out->has_addresses)
		return;
	out->first_addr = w[3];
	out->last_addr = w[4];
	out->min_addr = w[5];
	out->max_addr = w[6];
	out->address_span_bytes = w[6] - w[5] + esize;
}

uint64_t fp_dbg_record_dump_offset(const struct fp_dbg_record *rec)
{
	if (fp_dbg_record_kind(rec) == FP_DBG_KIND_VALUE) {
		uint64_t off = rec->words[3] >> 32;

		return off == UINT64_C(0xffffffff) ? FP_DBG_NO_DUMP : off;
	}
	return rec->words[7];
}

const char *fp_dbg_kind_name(enum fp_dbg_kind kind)
{
	switch (kind) {
	case FP_DBG_KIND_VALUE:
		return "value";
	case FP_DBG_KIND_LOAD:
		return "load";
	case FP_DBG_KIND_STORE:
		return "store";
	case FP_DBG_KIND_ATOMIC:
		return "atomic";
	case FP_DBG_KIND_DESCRIPTOR:
		return "descriptor";
	}
	return "unknown";
}

const char *fp_dbg_addr_status_name(uint32_t status)
{
	static const char *const names[] = {"complete", "block_pointer", "tensor_descriptor",
					    "unsupported"};

	return status < FP_ARRAY_SIZE(names) ? names[status] : "unknown";
}
