/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the Debugger's record buffer decoder (fp_dbg_decode): valid buffers decode into
 * the expected statements, sites, records and summaries; every kind of corruption is rejected
 * with FP_EFORMAT/FP_EVERSION and the byte offset of the offending word; the check area (its
 * extended header, tensor table and check slots, in marker and check mode, each validation with
 * its word, and the site table's `params` and `check_slots`); out-of-memory sweeps. Also holds
 * the synthetic buffer builder declared in test-debug.h.
 */
#include <math.h>

#include <flagprism/alloc.h>
#include <flagprism/debug.h>

#include "test.h"
#include "test-debug.h"

/* ---- the builder (test-debug.h) ------------------------------------------------------------ */

void dbgb_init(struct dbgb *b, uint64_t S, uint64_t P, uint64_t nsites, bool arena, uint64_t cap)
{
	b->S = S;
	b->P = P;
	b->cap = arena ? cap : 0;
	b->cursor = 0;
	b->rec = 8;
	b->np = b->nc = 0;
	b->nwords = 8 + S * P * 8 + b->cap;
	b->w = calloc(b->nwords, 8);
	if (!b->w)
		abort();
	b->w[0] = UINT64_C(0x0031764742445046);
	b->w[1] = 1 | (uint64_t)8 << 16 | (uint64_t)8 << 32 | (uint64_t)(arena ? 1 : 0) << 48;
	b->w[2] = S;
	b->w[3] = P;
	b->w[6] = b->cap;
	b->w[7] = nsites;
}

void dbgb_init_checks(struct dbgb *b, uint64_t S, uint64_t P, uint64_t nsites, bool arena,
		      uint64_t cap, uint64_t nparams, uint64_t nchecks, bool suppress)
{
	/* "Check area": ext. header at word 8, the tensor table at 16, the slots after it */
	uint64_t R = 16 + 4 * nparams + 32 * nchecks;

	b->S = S;
	b->P = P;
	b->cap = arena ? cap : 0;
	b->cursor = 0;
	b->rec = R;
	b->np = nparams;
	b->nc = nchecks;
	b->nwords = R + S * P * 8 + b->cap;
	b->w = calloc(b->nwords, 8);
	if (!b->w)
		abort();
	b->w[0] = UINT64_C(0x0031764742445046);
	b->w[1] = 1 | (uint64_t)8 << 16 | (uint64_t)8 << 32 | (uint64_t)((arena ? 1 : 0) | 2) << 48;
	b->w[2] = S;
	b->w[3] = P;
	b->w[6] = b->cap;
	b->w[7] = nsites;
	b->w[8] = nparams;
	b->w[9] = nchecks;
	b->w[10] = suppress ? 1 : 0;
	b->w[11] = R;
}

void dbgb_free(struct dbgb *b)
{
	free(b->w);
	b->w = NULL;
}

size_t dbgb_bytes(const struct dbgb *b)
{
	return b->nwords * 8;
}

uint64_t *dbgb_slot(struct dbgb *b, uint64_t p, uint64_t k)
{
	return b->w + b->rec + (p * b->S + k) * 8;
}

uint64_t dbgb_off(const struct dbgb *b, uint64_t p, uint64_t k, unsigned i)
{
	return (b->rec + (p * b->S + k) * 8 + i) * 8;
}

void dbgb_table(struct dbgb *b, uint64_t i, uint64_t view_lo, uint64_t view_hi, uint64_t storage_lo,
		uint64_t storage_hi)
{
	uint64_t *e = b->w + 16 + 4 * i;

	if (i >= b->np)
		abort();
	e[0] = view_lo;
	e[1] = view_hi;
	e[2] = storage_lo;
	e[3] = storage_hi;
}

uint64_t *dbgb_check(struct dbgb *b, uint64_t c)
{
	if (c >= b->nc)
		abort();
	return b->w + 16 + 4 * b->np + 32 * c;
}

uint64_t dbgb_check_off(const struct dbgb *b, uint64_t c, unsigned w)
{
	return (16 + 4 * b->np + 32 * c + w) * 8;
}

void dbgb_fire(struct dbgb *b, uint64_t c, uint64_t program, uint64_t seq, uint64_t count,
	       uint64_t lane, uint64_t value, uint64_t lo, uint64_t hi, int64_t iter)
{
	uint64_t *w = dbgb_check(b, c);
	uint64_t key = ((program << 32) | (seq & 0xffffffff)) + 1, me = program + 1, top = 0;
	/* the device's atomic_max on int64: INT64_MAX - lo wraps for a "negative" lo */
	int64_t cand = (int64_t)((uint64_t)INT64_MAX - lo);
	unsigned k, free_at = 8, top_at = 8;
	bool listed = false;

	w[1] += 1;
	w[2] += count;
	if (cand > (int64_t)w[3])
		w[3] = (uint64_t)cand;
	if ((int64_t)hi > (int64_t)w[4])
		w[4] = hi;
	if (!w[5] || (int64_t)key < (int64_t)w[5]) {
		w[5] = key;
		w[6] = lane;
		w[7] = value;
		w[8] = (uint64_t)iter;
	}
	for (k = 0; k < 8; k++) {
		uint64_t p = w[16 + k];

		listed |= p == me;
		if (!p && free_at == 8)
			free_at = k;
		if (p > top)
			top = p;
	}
	for (k = 0; k < 8 && top_at == 8; k++)
		if (w[16 + k] == top)
			top_at = k;
	if (listed)
		return;
	/* not listed: an empty entry, else replace the highest when lower; counted when full */
	if (free_at < 8) {
		w[16 + free_at] = me;
		return;
	}
	if (me < top)
		w[16 + top_at] = me;
	w[12] += 1;
}

static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static uint64_t word0(unsigned site, unsigned kind, enum fp_dtype dt, unsigned ndim, uint64_t k)
{
	return site | (uint64_t)kind << 16 | (uint64_t)dt << 24 | (uint64_t)ndim << 32 |
	       (k & 0xffffff) << 40;
}

static uint64_t shape_word(const uint64_t *shape, unsigned ndim, uint64_t *numel)
{
	uint64_t w = 0, n = 1;
	unsigned i;

	for (i = 0; i < ndim; i++) {
		w |= shape[i] << (21 * i);
		n *= shape[i];
	}
	*numel = n;
	return w;
}

void dbgb_fire_value(struct dbgb *b, uint64_t c, uint64_t program, uint64_t seq, uint64_t count,
		     uint64_t lane, double value, int64_t iter)
{
	uint64_t v = bits(value);

	dbgb_fire(b, c, program, seq, count, lane, v, v, v, iter);
}

void dbgb_descend(struct dbgb *b, uint64_t c, uint64_t elems)
{
	uint64_t *w = dbgb_check(b, c);

	w[10] += 1;
	w[11] += elems;
}

char *dbgb_sites_with(const char *sites, const char *members)
{
	const char *end = strrchr(sites, '}');
	size_t pre, n;
	char *t;

	if (!end)
		abort();
	pre = (size_t)(end - sites);
	n = pre + strlen(members) + strlen(end) + 1;
	t = malloc(n);
	if (!t)
		abort();
	memcpy(t, sites, pre);
	snprintf(t + pre, n - pre, "%s%s", members, end);
	return t;
}

static uint64_t take_dump(struct dbgb *b, uint64_t n)
{
	uint64_t off = b->cursor;

	b->cursor += n;
	b->w[5] = b->cursor;
	if (off + n > b->cap)
		return DBGB_NO_DUMP;
	return off;
}

uint64_t dbgb_value(struct dbgb *b, uint64_t p, uint64_t k, unsigned site, enum fp_dtype dt,
		    const uint64_t *shape, unsigned ndim, const double *vals, bool dump)
{
	uint64_t *w = dbgb_slot(b, p, k), numel, nan = 0, inf = 0, zero = 0, i, off = DBGB_NO_DUMP;
	double sum = 0, sumsq = 0, mn = INFINITY, mx = -INFINITY;
	bool is_float = fp_dtype_is_float(dt);
	int64_t imn = INT64_MAX, imx = INT64_MIN;

	w[1] = shape_word(shape, ndim, &numel);
	for (i = 0; i < numel; i++) {
		double v = vals[i];

		if (isnan(v)) {
			nan++;
			continue;
		}
		if (isinf(v)) {
			inf++;
			continue;
		}
		zero += v == 0;
		sum += v;
		sumsq += v * v;
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
		imn = (int64_t)v < imn ? (int64_t)v : imn;
		imx = (int64_t)v > imx ? (int64_t)v : imx;
	}
	if (dump) {
		off = take_dump(b, numel);
		if (off != DBGB_NO_DUMP)
			for (i = 0; i < numel; i++)
				b->w[b->rec + b->S * b->P * 8 + off + i] =
					is_float ? bits(vals[i]) : (uint64_t)(int64_t)vals[i];
	}
	w[0] = word0(site, 1, dt, ndim, k);
	w[2] = nan | inf << 32;
	w[3] = zero | (off == DBGB_NO_DUMP ? UINT64_C(0xffffffff) : off) << 32;
	w[4] = bits(sum);
	w[5] = bits(sumsq);
	w[6] = is_float ? bits(mn) : (uint64_t)imn;
	w[7] = is_float ? bits(mx) : (uint64_t)imx;
	return off;
}

uint64_t dbgb_addr(struct dbgb *b, uint64_t p, uint64_t k, unsigned site, unsigned kind,
		   enum fp_dtype pointee, const uint64_t *shape, unsigned ndim,
		   const uint64_t *addrs, const bool *mask, bool dump)
{
	uint64_t *w = dbgb_slot(b, p, k), numel, i, active = 0, first = 0, last = 0;
	uint64_t mn = UINT64_MAX, mx = 0, off = DBGB_NO_DUMP;

	w[1] = shape_word(shape, ndim, &numel);
	for (i = 0; i < numel; i++) {
		if (mask && !mask[i])
			continue;
		if (!active)
			first = addrs[i];
		last = addrs[i];
		active++;
		mn = addrs[i] < mn ? addrs[i] : mn;
		mx = addrs[i] > mx ? addrs[i] : mx;
	}
	if (dump) {
		off = take_dump(b, numel);
		if (off != DBGB_NO_DUMP)
			for (i = 0; i < numel; i++)
				b->w[b->rec + b->S * b->P * 8 + off + i] =
					addrs[i] | (mask && !mask[i] ? UINT64_C(1) << 63 : 0);
	}
	w[0] = word0(site, kind, pointee, ndim, k);
	w[2] = active;
	w[3] = active ? first : 0;
	w[4] = active ? last : 0;
	w[5] = active ? mn : 0;
	w[6] = active ? mx : 0;
	w[7] = off;
	return off;
}

/* ---- the add_kernel fixture (test-debug.h) ------------------------------------------------------ */

/*
 * add_kernel-like: statement 0 (line 12) loads x (site 1 load, site 2 value x), statement 1
 * (line 14) computes y = x * 2 (site 3 value, reads x), statement 2 (line 15) stores y (site 4).
 */
#define ADD_SITES_BODY                                                                               \
	"{\"version\": 1, \"kernel\": \"add_kernel\", \"file\": \"/u/add.py\", \"level\": 1,"        \
	" \"addr_level\": 1, \"statements\": ["                                                      \
	"  {\"id\": 0, \"line\": 12, \"col\": 4, \"source\": \"x = tl.load(x_ptr + offs)\"},"        \
	"  {\"id\": 2, \"line\": 15, \"col\": 4, \"source\": \"tl.store(y_ptr + offs, y)\"},"        \
	"  {\"id\": 1, \"line\": 14, \"col\": 4, \"end_line\": 14, \"source\": \"y = x * 2\"}],"     \
	" \"sites\": ["                                                                              \
	"  {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"x_ptr + offs\"},"           \
	"  {\"id\": 2, \"statement\": 0, \"kind\": \"value\", \"name\": \"x\"},"                     \
	"  {\"id\": 3, \"statement\": 1, \"kind\": \"value\", \"name\": \"y\", \"reads\": [\"x\"]}," \
	"  {\"id\": 4, \"statement\": 2, \"kind\": \"store\", \"name\": \"y_ptr + offs\","           \
	"   \"reads\": [\"y\", \"offs\"]}]"

const char DBGB_SITES[] = ADD_SITES_BODY "}";

/* What _checkgen.py lists for the same kernel when every check is on (test-debug.h). */
const char DBGB_SITES_CHECKS[] = ADD_SITES_BODY
	", \"params\": [\"x_ptr\", \"y_ptr\", \"n\", \"BLOCK\"], \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"bounds\", \"statement\": 0, \"subject\": \"x_ptr + offs\","
	"  \"site\": 1, \"access\": \"load\", \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 1, \"rule\": \"nan_mem\", \"statement\": 0, \"subject\": \"x\", \"site\": 2},"
	" {\"slot\": 2, \"rule\": \"nan\", \"statement\": 1, \"subject\": \"y\", \"site\": 3,"
	"  \"reads\": [\"x\"]},"
	" {\"slot\": 3, \"rule\": \"bounds\", \"statement\": 2, \"subject\": \"y_ptr + offs\","
	"  \"site\": 4, \"access\": \"store\", \"cands\": [\"y_ptr\"]}]}";

/* The fixture's records, its stores at `store_at` (DBGB_X in the old layout, DBGB_Y with checks). */
static void fixture_records(struct dbgb *b, bool arena, uint64_t store_at)
{
	uint64_t shape[1] = {4}, p, addrs[4], st[4];
	double x[4], y[4];
	bool mask[4] = {true, true, true, false};
	int i;

	for (p = 0; p < DBGB_NP; p++) {
		for (i = 0; i < 4; i++) {
			addrs[i] = DBGB_X + (p * 4 + (uint64_t)i) * 4;
			st[i] = store_at + (p * 4 + (uint64_t)i) * 4;
			x[i] = (double)(p * 4 + (uint64_t)i) - 2.0;
			y[i] = 2 * x[i];
		}
		x[3] = NAN; /* the masked lane reads "other" = nan */
		y[3] = NAN;
		dbgb_addr(b, p, 0, 1, 2, FP_DTYPE_FLOAT32, shape, 1, addrs, p == 2 ? mask : NULL,
			  arena);
		dbgb_value(b, p, 1, 2, FP_DTYPE_FLOAT32, shape, 1, x, arena);
		dbgb_value(b, p, 2, 3, FP_DTYPE_FLOAT32, shape, 1, y, arena);
		dbgb_addr(b, p, 3, 4, 3, FP_DTYPE_FLOAT32, shape, 1, st, mask, arena);
	}
}

void dbgb_fixture(struct dbgb *b, bool arena, uint64_t cap)
{
	dbgb_init(b, DBGB_NS, DBGB_NP, 4, arena, cap);
	fixture_records(b, arena, DBGB_X);
}

void dbgb_fixture_checks(struct dbgb *b, bool arena, uint64_t cap)
{
	uint64_t p;

	dbgb_init_checks(b, DBGB_NS, DBGB_NP, 4, arena, cap, DBGB_NPARAMS, DBGB_NCHECKS, false);
	dbgb_table(b, 0, DBGB_X, DBGB_X + 48, DBGB_X, DBGB_X + 4096);
	dbgb_table(b, 1, DBGB_Y, DBGB_Y + 48, DBGB_Y, DBGB_Y + 48);
	fixture_records(b, arena, DBGB_Y);
	/* programs 0 and 1 read a NaN from memory in lane 3 (program 2's lane 3 is masked off,
	 * padding); the check ran just before the x record, slot 1 */
	for (p = 0; p < 2; p++)
		dbgb_fire_value(b, 1, p, 1, 1, 3, NAN, 0);
	/* y = x * 2 holds the NaN because x does: never an origin */
	for (p = 0; p < DBGB_NP; p++)
		dbgb_descend(b, 2, 1);
}

#define SITES DBGB_SITES
#define NP DBGB_NP
#define NS DBGB_NS
#define fixture dbgb_fixture

static int decode(struct dbgb *b, struct fp_dbg_run **run, struct fp_diag *d)
{
	return fp_dbg_decode(b->w, dbgb_bytes(b), SITES, strlen(SITES), run, d);
}

/* Expect `st` with the diagnostic at byte offset `off`. */
static void expect_fail(struct dbgb *b, int st, uint64_t off, const char *needle)
{
	struct fp_dbg_run *run = (struct fp_dbg_run *)1;
	struct fp_diag d;

	ASSERT_EQ(decode(b, &run, &d), st);
	ASSERT_NULL(run);
	ASSERT_EQ(d.status, st);
	if (d.offset != off)
		fprintf(stderr, "diag: %s\n", d.msg);
	ASSERT_UEQ(d.offset, off);
	if (needle && !strstr(d.msg, needle)) {
		fprintf(stderr, "diag: %s (expected \"%s\")\n", d.msg, needle);
		ASSERT(0);
	}
}

/* ---- valid buffers --------------------------------------------------------------------------------- */

TEST(debug_decode_valid)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	const struct fp_dbg_run_info *in;
	const struct fp_dbg_statement *st;
	const struct fp_dbg_site *s;
	const struct fp_dbg_record *r;
	struct fp_dbg_value_summary v;
	struct fp_dbg_addr_summary a;
	struct fp_diag d;
	size_t n;

	fixture(&b, false, 0);
	ASSERT_OK(decode(&b, &run, &d));
	in = fp_dbg_run_info(run);
	ASSERT_UEQ(in->programs, NP);
	ASSERT_UEQ(in->slots_per_program, NS);
	ASSERT_UEQ(in->record_count, 4 * NP);
	ASSERT(in->complete);
	ASSERT_STREQ(in->kernel, "add_kernel");
	ASSERT_STREQ(in->file, "/u/add.py");
	ASSERT_EQ(in->level, 1);

	/* statements in source order: lines 12, 14, 15 */
	ASSERT_EQ(fp_dbg_run_statement_count(run), 3);
	ASSERT_EQ(fp_dbg_run_statement(run, 0)->line, 12);
	ASSERT_EQ(fp_dbg_run_statement(run, 1)->line, 14);
	ASSERT_EQ(fp_dbg_run_statement(run, 2)->line, 15);
	ASSERT_NULL(fp_dbg_run_statement(run, 3));
	st = fp_dbg_run_statement(run, 0);
	ASSERT_EQ(st->nsites, 2);
	ASSERT_EQ(st->sites[0], 0);
	ASSERT_EQ(st->sites[1], 1);

	/* reads resolve to the defining statement */
	s = fp_dbg_run_site(run, 2);
	ASSERT_EQ(s->id, 3);
	ASSERT_EQ(s->nreads, 1);
	ASSERT_STREQ(s->reads[0].name, "x");
	ASSERT_EQ(s->reads[0].statement, 0);
	s = fp_dbg_run_site(run, 3);
	ASSERT_EQ(s->reads[0].statement, 1);          /* y */
	ASSERT_EQ(s->reads[1].statement, UINT32_MAX); /* offs: not observed */

	/* value site x: ordered by program, summaries derived */
	s = fp_dbg_run_site(run, 1);
	ASSERT_EQ(s->kind, FP_DBG_KIND_VALUE);
	ASSERT_EQ(s->dtype, FP_DTYPE_FLOAT32);
	ASSERT_EQ(s->ndim, 1);
	ASSERT_UEQ(s->shape[0], 4);
	ASSERT_UEQ(s->numel, 4);
	r = fp_dbg_run_records(run, 1, &n);
	ASSERT_EQ(n, NP);
	ASSERT_UEQ(r[0].program, 0);
	ASSERT_UEQ(r[2].program, 2);
	ASSERT_EQ(r[1].execution, 0);
	ASSERT_EQ(r[1].slot, 1);
	fp_dbg_record_value_summary(&r[1], &v); /* program 1: x = 2, 3, 4, nan */
	ASSERT_UEQ(v.element_count, 4);
	ASSERT_UEQ(v.nan_count, 1);
	ASSERT_UEQ(v.finite_count, 3);
	ASSERT_DEQ(v.mean, 3.0);
	ASSERT_DEQ(v.min, 2.0);
	ASSERT_DEQ(v.max, 4.0);
	ASSERT_NEAR(v.l2_norm, sqrt(29.0), 1e-12);
	fp_dbg_record_value_summary(&r[0], &v); /* program 0: -2, -1, 0, nan */
	ASSERT_UEQ(v.zero_count, 1);

	/* address site: program 2 is masked */
	r = fp_dbg_run_records(run, 0, &n);
	fp_dbg_record_addr_summary(&r[2], &a);
	ASSERT_UEQ(a.active_lane_count, 3);
	ASSERT_UEQ(a.first_addr, 0x7f0000001000 + 8 * 4);
	ASSERT_UEQ(a.last_addr, 0x7f0000001000 + 10 * 4);
	ASSERT_UEQ(a.address_span_bytes, 12);
	ASSERT_EQ(a.status, FP_DBG_ADDR_COMPLETE);
	ASSERT(fp_dbg_run_find(run, 0, 2, 0) == &r[2]);
	ASSERT_NULL(fp_dbg_run_find(run, 0, 2, 1));
	ASSERT_NULL(fp_dbg_run_find(run, 0, 3, 0));
	ASSERT_NULL(fp_dbg_run_records(run, 99, &n));
	ASSERT_EQ(n, 0);
	ASSERT_STREQ(fp_dbg_kind_name(FP_DBG_KIND_STORE), "store");
	ASSERT_STREQ(fp_dbg_addr_status_name(2), "tensor_descriptor");
	ASSERT_STREQ(fp_dbg_addr_status_name(9), "unknown");
	fp_dbg_run_free(run);
	fp_dbg_run_free(NULL);
	dbgb_free(&b);
}

TEST(debug_decode_executions)
{
	/* a site in a loop: executions count per program in slot order */
	static const char sites[] =
		"{\"version\":1,\"statements\":[{\"id\":0,\"line\":3,\"source\":\"acc += x\","
		"\"loop_depth\":1}],\"sites\":[{\"id\":1,\"statement\":0,\"kind\":\"value\","
		"\"name\":\"acc\"},{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"i\"}]}";
	struct dbgb b;
	struct fp_dbg_run *run;
	const struct fp_dbg_record *r;
	uint64_t shape[1] = {2};
	double vals[2] = {1, 2};
	size_t n;
	unsigned k;

	dbgb_init(&b, 5, 2, 2, false, 0);
	for (k = 0; k < 5; k++)
		dbgb_value(&b, 1, k, k == 2 ? 2 : 1, FP_DTYPE_INT32, shape, 1, vals, false);
	for (k = 0; k < 2; k++)
		dbgb_value(&b, 0, k, 1, FP_DTYPE_INT32, shape, 1, vals, false);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), sites, strlen(sites), &run, NULL));
	r = fp_dbg_run_records(run, 0, &n);
	ASSERT_EQ(n, 6);
	ASSERT_UEQ(r[0].program, 0);
	ASSERT_EQ(r[1].execution, 1);
	ASSERT_UEQ(r[2].program, 1);
	ASSERT_EQ(r[2].execution, 0);
	ASSERT_EQ(r[5].execution, 3);
	ASSERT_EQ(r[5].slot, 4);
	ASSERT(fp_dbg_run_find(run, 0, 1, 3) == &r[5]);
	r = fp_dbg_run_records(run, 1, &n);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(r[0].execution, 0);
	ASSERT_EQ(fp_dbg_run_statement(run, 0)->loop_depth, 1);
	{
		struct fp_dbg_value_summary v;

		fp_dbg_record_value_summary(&r[0], &v);
		ASSERT(!v.is_float);
		ASSERT_EQ(v.imin, 1);
		ASSERT_EQ(v.imax, 2);
	}
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

TEST(debug_decode_overflow_and_dumps)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	const struct fp_dbg_record *r;
	const uint64_t *dump;
	size_t n, nw;
	double f;

	fixture(&b, true, 40); /* 12 records x 4 words = 48: the last two dumps do not fit */
	b.w[4] = 0;
	ASSERT_OK(decode(&b, &run, NULL));
	ASSERT_UEQ(fp_dbg_run_info(run)->dump_cursor, 48);
	ASSERT_UEQ(fp_dbg_run_info(run)->dump_overflow, 8);
	ASSERT_UEQ(fp_dbg_run_info(run)->dump_count, 10);
	ASSERT(!fp_dbg_run_info(run)->complete);
	r = fp_dbg_run_records(run, 1, &n);
	dump = fp_dbg_run_dump(run, &r[1], &nw);
	ASSERT_NOT_NULL(dump);
	ASSERT_EQ(nw, 4);
	memcpy(&f, &dump[0], 8);
	ASSERT_DEQ(f, 2.0);
	r = fp_dbg_run_records(run, 3, &n); /* the last store site did not fit in program 2 */
	ASSERT_NULL(fp_dbg_run_dump(run, &r[2], &nw));
	ASSERT_EQ(nw, 0);
	ASSERT(fp_dbg_run_dump(run, &r[1], &nw) != NULL);
	ASSERT_UEQ(dump[0] >> 63, 0);
	fp_dbg_run_free(run);
	dbgb_free(&b);

	/* record overflow: program 1 filled its slots, 5 more records did not fit */
	fixture(&b, false, 0);
	dbgb_value(&b, 1, 4, 2, FP_DTYPE_FLOAT32, (uint64_t[]){1}, 1, (double[]){1}, false);
	dbgb_value(&b, 1, 5, 2, FP_DTYPE_FLOAT32, (uint64_t[]){1}, 1, (double[]){1}, false);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 4, 1), "dtype/shape differ");
	dbgb_value(&b, 1, 4, 2, FP_DTYPE_FLOAT32, (uint64_t[]){4}, 1, (double[]){1, 2, 3, 4},
		   false);
	dbgb_value(&b, 1, 5, 2, FP_DTYPE_FLOAT32, (uint64_t[]){4}, 1, (double[]){1, 2, 3, 4},
		   false);
	b.w[4] = 5;
	ASSERT_OK(decode(&b, &run, NULL));
	ASSERT_UEQ(fp_dbg_run_info(run)->overflow_count, 5);
	ASSERT(!fp_dbg_run_info(run)->complete);
	ASSERT(fp_dbg_run_find(run, 1, 1, 2) != NULL);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

TEST(debug_decode_shapes)
{
	static const char sites[] =
		"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"s\"}],"
		"\"sites\":[{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"a\"},"
		"{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"b\"},"
		"{\"id\":3,\"statement\":0,\"kind\":\"value\",\"name\":\"c\"}]}";
	struct dbgb b;
	struct fp_dbg_run *run;
	const struct fp_dbg_site *s;
	uint64_t dims[3], shape3[3] = {2, 3, 4};
	double vals[24] = {0};
	bool flat;
	unsigned nd, ndim;
	size_t n;

	dbgb_init(&b, 3, 1, 3, false, 0);
	dbgb_value(&b, 0, 0, 1, FP_DTYPE_FLOAT16, shape3, 3, vals, false);
	dbgb_value(&b, 0, 1, 2, FP_DTYPE_BOOL, NULL, 0, vals, false); /* scalar */
	/* rank 5 tensor of 64 elements: flattened */
	dbgb_value(&b, 0, 2, 3, FP_DTYPE_INT8, (uint64_t[]){24}, 1, vals, false);
	*dbgb_slot(&b, 0, 2) = (*dbgb_slot(&b, 0, 2) & ~(UINT64_C(0xff) << 32)) |
			       (UINT64_C(5) << 32) | (UINT64_C(1) << 36);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), sites, strlen(sites), &run, NULL));
	s = fp_dbg_run_site(run, 0);
	ASSERT_UEQ(s->numel, 24);
	ASSERT_EQ(s->ndim, 3);
	ASSERT_UEQ(s->shape[2], 4);
	s = fp_dbg_run_site(run, 1);
	ASSERT_UEQ(s->numel, 1);
	ASSERT_EQ(s->ndim, 0);
	s = fp_dbg_run_site(run, 2);
	ASSERT(s->flattened);
	ASSERT_EQ(s->ndim, 5);
	ASSERT_UEQ(s->numel, 24);
	nd = fp_dbg_record_shape(fp_dbg_run_records(run, 2, &n), dims, &flat, &ndim);
	ASSERT_EQ(nd, 1);
	ASSERT(flat);
	ASSERT_EQ(ndim, 5);
	ASSERT_UEQ(dims[0], 24);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* ---- corruption -------------------------------------------------------------------------------- */

TEST(debug_decode_bad_header)
{
	struct dbgb b;

	fixture(&b, false, 0);
	b.w[0] ^= 1;
	expect_fail(&b, FP_EFORMAT, 0, "magic");
	b.w[0] ^= 1;
	b.w[1] = (b.w[1] & ~UINT64_C(0xffff)) | 2;
	expect_fail(&b, FP_EVERSION, 8, "version 2");
	b.w[1] = (b.w[1] & ~UINT64_C(0xffff)) | 1;
	b.w[1] = (b.w[1] & ~(UINT64_C(0xffff) << 16)) | (UINT64_C(7) << 16);
	expect_fail(&b, FP_EFORMAT, 8, "record words");
	b.w[1] = (b.w[1] & ~(UINT64_C(0xffff) << 16)) | (UINT64_C(8) << 16);
	b.w[1] |= UINT64_C(4) << 48;
	expect_fail(&b, FP_EFORMAT, 8, "flags");
	b.w[1] &= ~(UINT64_C(0xffff) << 48);
	b.w[7] = 5;
	expect_fail(&b, FP_EFORMAT, 56, "nsites");
	b.w[7] = 4;
	b.w[6] = 3; /* capacity without the arena flag */
	expect_fail(&b, FP_EFORMAT, 48, "no dump arena");
	b.w[6] = 0;
	b.w[5] = 3;
	expect_fail(&b, FP_EFORMAT, 40, "dump cursor");
	b.w[5] = 0;
	b.w[2] = UINT64_C(0xffffffff); /* S*P*64 overflows */
	b.w[3] = UINT64_C(1) << 40;
	expect_fail(&b, FP_EFORMAT, 16, "overflows");
	b.w[2] = UINT64_C(1) << 33;
	b.w[3] = 1;
	expect_fail(&b, FP_EFORMAT, 16, "32-bit");
	b.w[2] = NS;
	b.w[3] = NP + 1; /* length no longer matches: truncated */
	expect_fail(&b, FP_EFORMAT, dbgb_bytes(&b), "truncated");
	b.w[3] = NP - 1; /* trailing bytes */
	expect_fail(&b, FP_EFORMAT, dbgb_bytes(&b) - NS * 64, "trailing");
	b.w[3] = NP;
	b.w[4] = 1; /* overflow count but no program filled its slots */
	expect_fail(&b, FP_EFORMAT, 32, "overflow");
	b.w[4] = 0;
	dbgb_free(&b);
}

TEST(debug_decode_truncated)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_diag d;
	size_t len, full;

	fixture(&b, true, 64);
	full = dbgb_bytes(&b);
	for (len = 0; len < full; len += (len < 80 ? 1 : 7)) {
		run = (struct fp_dbg_run *)1;
		ASSERT_EQ(fp_dbg_decode(b.w, len, SITES, strlen(SITES), &run, &d), FP_EFORMAT);
		ASSERT_NULL(run);
		ASSERT_UEQ(d.offset, len);
	}
	ASSERT_EQ(fp_dbg_decode(b.w, full + 3, SITES, strlen(SITES), &run, &d), FP_EFORMAT);
	ASSERT_UEQ(d.offset, full);
	ASSERT_OK(fp_dbg_decode(b.w, full, SITES, strlen(SITES), &run, &d));
	fp_dbg_run_free(run);
	ASSERT_EQ(fp_dbg_decode(NULL, 0, SITES, strlen(SITES), &run, &d), FP_EFORMAT);
	ASSERT_EQ(fp_dbg_decode(NULL, 8, SITES, strlen(SITES), &run, &d), FP_EINVAL);
	ASSERT_EQ(fp_dbg_decode(b.w, full, NULL, 0, &run, &d), FP_EINVAL);
	ASSERT_EQ(fp_dbg_decode(b.w, full, SITES, strlen(SITES), NULL, &d), FP_EINVAL);
	dbgb_free(&b);
}

TEST(debug_decode_bad_records)
{
	struct dbgb b;
	uint64_t *w, save[8];

	fixture(&b, false, 0);
	/* program 1, slot 2 (site 3, value y) and slot 0 (site 1, load) */
	w = dbgb_slot(&b, 1, 2);
	memcpy(save, w, sizeof(save));
#define RESTORE() memcpy(w, save, sizeof(save))
	w[0] = (w[0] & ~UINT64_C(0xffff)) | 9;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "site id 9 out of range");
	RESTORE();
	w[0] = (w[0] & ~UINT64_C(0xffff)); /* site 0 with a non-zero word 0 */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "site id 0");
	RESTORE();
	w[0] = (w[0] & ~(UINT64_C(0xff) << 16)) | (UINT64_C(2) << 16);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "kind 2");
	RESTORE();
	w[0] = (w[0] & ~(UINT64_C(0xff) << 24)) | (UINT64_C(17) << 24);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "dtype code 17");
	RESTORE();
	w[0] &= ~(UINT64_C(0xff) << 24);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "dtype code 0");
	RESTORE();
	w[0] = (w[0] & ~(UINT64_C(0xf) << 32)) | (UINT64_C(4) << 32);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "ndim 4");
	RESTORE();
	w[0] |= UINT64_C(8) << 36; /* bit 3: unknown (bit 2 is the counts-only flag) */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "flags");
	RESTORE();
	w[0] |= UINT64_C(3) << 36; /* closed form with a flattened shape */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "closed-form");
	RESTORE();
	w[0] ^= UINT64_C(1) << 41;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 0), "sequence");
	RESTORE();
	w[1] |= UINT64_C(3) << 21; /* a second dim with ndim 1 */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 1), "ndim");
	RESTORE();
	w[1] |= UINT64_C(1) << 63;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 1), "bit 63");
	RESTORE();
	w[2] = 3 | UINT64_C(2) << 32; /* nan 3 + inf 2 > 4 */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 2), "exceeds numel");
	RESTORE();
	w[3] = (w[3] & ~UINT64_C(0xffffffff)) | 4; /* zero 4 > 3 finite */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 3), "zero_count");
	RESTORE();
	w[3] = (w[3] & UINT64_C(0xffffffff)) | (UINT64_C(0) << 32); /* dump offset 0, no arena */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 3), "no dump arena");
	RESTORE();
	{
		double m = 100;

		memcpy(&w[6], &m, 8); /* min > max */
		expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 6), "min");
		RESTORE();
		m = INFINITY;
		memcpy(&w[7], &m, 8);
		expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 7), "max");
		RESTORE();
		m = -1;
		memcpy(&w[5], &m, 8);
		expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 2, 5), "sum of squares");
		RESTORE();
	}
	/* address record of site 1 */
	w = dbgb_slot(&b, 1, 0);
	memcpy(save, w, sizeof(save));
	w[2] = 5;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 2), "active_lane_count 5");
	RESTORE();
	w[2] = 4 | UINT64_C(4) << 32;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 2), "status 4");
	RESTORE();
	w[5] = w[6] + 4;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 5), "min_addr");
	RESTORE();
	w[3] = w[6] + 4;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 3), "first_addr");
	RESTORE();
	w[2] = 0; /* no active lane but addresses */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 3), "no active lane");
	RESTORE();
	w[7] = 0;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 7), "no dump arena");
	RESTORE();
	/* an unused slot with garbage, and a used slot after an unused one */
	dbgb_slot(&b, 1, 4)[3] = 1;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 4, 3), "unused slot");
	dbgb_slot(&b, 1, 4)[3] = 0;
	memcpy(dbgb_slot(&b, 1, 5), save, sizeof(save));
	dbgb_slot(&b, 1, 5)[0] = (save[0] & ~(UINT64_C(0xffffff) << 40)) | (UINT64_C(5) << 40);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 5, 0), "after an unused slot");
	memset(dbgb_slot(&b, 1, 5), 0, 64);
	/* wrong kind for the site: a value record at a load site */
	w[0] = (w[0] & ~(UINT64_C(0xff) << 16)) | (UINT64_C(1) << 16);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 1, 0, 0), "site table says load");
	RESTORE();
#undef RESTORE
	dbgb_free(&b);
}

TEST(debug_decode_bad_dumps)
{
	struct dbgb b;
	uint64_t *w;

	fixture(&b, true, 64);
	w = dbgb_slot(&b, 2, 1); /* value x of program 2, dump at some offset */
	w[3] = (w[3] & UINT64_C(0xffffffff)) | (UINT64_C(62) << 32); /* 62 + 4 > 48 used */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 2, 1, 3), "outside the used dump arena");
	w[3] = (w[3] & UINT64_C(0xffffffff)) | (UINT64_C(0xfffffffe) << 32);
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 2, 1, 3), "outside");
	w = dbgb_slot(&b, 2, 3);
	w[7] = UINT64_C(1) << 62;
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 2, 1, 3), NULL); /* first error wins */
	dbgb_free(&b);
	fixture(&b, true, 64);
	w = dbgb_slot(&b, 2, 3);
	w[7] = 46; /* 46 + 4 > 48 */
	expect_fail(&b, FP_EFORMAT, dbgb_off(&b, 2, 3, 7), "outside");
	dbgb_free(&b);
}

TEST(debug_decode_bad_site_table)
{
	static const struct {
		const char *json;
		int status;
		const char *needle;
	} cases[] = {
		{"{", FP_EFORMAT, "site table"},
		{"[]", FP_EFORMAT, "object"},
		{"{\"version\":2,\"statements\":[],\"sites\":[]}", FP_EVERSION, "version 2"},
		{"{\"statements\":[],\"sites\":[]}", FP_EFORMAT, "version"},
		{"{\"version\":1,\"sites\":[]}", FP_EFORMAT, "statements"},
		{"{\"version\":1,\"statements\":[],\"sites\":{}}", FP_EFORMAT, "array"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":0,\"source\":\"\"}],\"sites\":[]}",
		 FP_EFORMAT, "line"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1}],\"sites\":[]}", FP_EFORMAT,
		 "source"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"\"},"
		 "{\"id\":0,\"line\":2,\"source\":\"\"}],\"sites\":[]}",
		 FP_EFORMAT, "duplicate statement"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"\"}],\"sites\":["
		 "{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"x\"}]}",
		 FP_EFORMAT, "dense"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"\"}],\"sites\":["
		 "{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"x\"},"
		 "{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"x\"}]}",
		 FP_EFORMAT, "duplicate site"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"\"}],\"sites\":["
		 "{\"id\":1,\"statement\":7,\"kind\":\"value\",\"name\":\"x\"}]}",
		 FP_EFORMAT, "no statement with id 7"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"\"}],\"sites\":["
		 "{\"id\":1,\"statement\":0,\"kind\":\"atomix\",\"name\":\"x\"}]}",
		 FP_EFORMAT, "kind"},
		{"{\"version\":1,\"statements\":[{\"id\":0,\"line\":1,\"source\":\"\"}],\"sites\":["
		 "{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"x\",\"reads\":[1]}]}",
		 FP_EFORMAT, "reads[0]"},
		{"{\"version\":1,\"level\":3,\"statements\":[],\"sites\":[]}", FP_EFORMAT, "level"},
	};
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_diag d;
	size_t i;

	dbgb_init(&b, 1, 1, 1, false, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = fp_dbg_decode(b.w, dbgb_bytes(&b), cases[i].json, strlen(cases[i].json),
				       &run, &d);

		if (st != cases[i].status || !strstr(d.msg, cases[i].needle))
			fprintf(stderr, "case %zu: %d %s\n", i, st, d.msg);
		ASSERT_EQ(st, cases[i].status);
		ASSERT(strstr(d.msg, cases[i].needle) != NULL);
		ASSERT(!strncmp(d.msg, "site table: ", 12));
		ASSERT_NULL(run);
	}
	/* the position is reported for site table errors */
	ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), cases[12].json, strlen(cases[12].json), &run,
				&d),
		  FP_EFORMAT);
	ASSERT_EQ(d.line, 1);
	ASSERT_GT(d.col, 1);
	dbgb_free(&b);
}

TEST(debug_decode_oom)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	long fail_at;
	int st = -1;

	fixture(&b, true, 64);
	for (fail_at = 0; fail_at < 1000; fail_at++) {
		fpt_oom_install(fail_at);
		st = decode(&b, &run, NULL);
		if (!st) {
			fp_dbg_run_free(run);
			ASSERT_EQ(fpt_oom_live(), 0);
			fpt_oom_uninstall();
			break;
		}
		ASSERT_EQ(st, FP_ENOMEM);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
	}
	ASSERT_OK(st);
	ASSERT_GT(fail_at, 3);
	dbgb_free(&b);
}

/* ---- the check area ------------------------------------------------------------------------ */

static int decode_checks(struct dbgb *b, struct fp_dbg_run **run, struct fp_diag *d)
{
	return fp_dbg_decode(b->w, dbgb_bytes(b), DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS), run,
			     d);
}

/* Expect the checks fixture `b` (DBGB_SITES_CHECKS) to be refused at byte `off`. */
static void expect_checks_fail(struct dbgb *b, int st, uint64_t off, const char *needle)
{
	struct fp_dbg_run *run = (struct fp_dbg_run *)1;
	struct fp_diag d;

	fp_diag_clear(&d);
	ASSERT_EQ(decode_checks(b, &run, &d), st);
	ASSERT_NULL(run);
	ASSERT_EQ(d.status, st);
	if (d.offset != off || (needle && !strstr(d.msg, needle)))
		fprintf(stderr, "diag at %" PRIu64 ": %s (expected \"%s\" at %" PRIu64 ")\n",
			(uint64_t)d.offset, d.msg, needle ? needle : "", off);
	ASSERT_UEQ(d.offset, off);
	ASSERT(!needle || strstr(d.msg, needle));
}

TEST(debug_decode_checks_valid)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	const struct fp_dbg_run_info *in;
	const struct fp_dbg_check_slot *k;
	const struct fp_dbg_table_entry *tab;
	const char *const *names;
	const struct fp_dbg_record *r;
	struct fp_dbg_value_summary v;
	const uint64_t *dump;
	size_t n, nw;
	double f;

	/* the records after the check area decode as they do without one, dumps included */
	dbgb_fixture_checks(&b, true, 64);
	ASSERT_OK(decode_checks(&b, &run, NULL));
	in = fp_dbg_run_info(run);
	ASSERT(in->has_checks);
	ASSERT(!in->suppress);
	ASSERT_UEQ(in->records_at, 16 + 4 * DBGB_NPARAMS + 32 * DBGB_NCHECKS);
	ASSERT_UEQ(in->record_count, 4 * DBGB_NP);
	ASSERT_UEQ(in->dump_count, 4 * DBGB_NP);
	ASSERT_EQ(in->flags, FP_DBG_FLAG_DUMP_ARENA | FP_DBG_FLAG_CHECKS);
	r = fp_dbg_run_records(run, 1, &n);
	ASSERT_EQ(n, DBGB_NP);
	fp_dbg_record_value_summary(&r[1], &v);
	ASSERT_DEQ(v.mean, 3.0);
	dump = fp_dbg_run_dump(run, &r[1], &nw);
	ASSERT_NOT_NULL(dump);
	memcpy(&f, &dump[0], 8);
	ASSERT_DEQ(f, 2.0);
	r = fp_dbg_run_records(run, 3, &n); /* the stores, in y's view */
	{
		struct fp_dbg_addr_summary a;

		fp_dbg_record_addr_summary(&r[0], &a);
		ASSERT_UEQ(a.first_addr, DBGB_Y);
	}

	/* the tensor table, in the site table's parameter order */
	ASSERT_EQ(fp_dbg_run_params(run, &names, &tab), DBGB_NPARAMS);
	ASSERT_STREQ(names[0], "x_ptr");
	ASSERT_STREQ(names[3], "BLOCK");
	ASSERT_UEQ(tab[0].view_lo, DBGB_X);
	ASSERT_UEQ(tab[0].view_hi, DBGB_X + 48);
	ASSERT_UEQ(tab[0].storage_hi, DBGB_X + 4096);
	ASSERT_UEQ(tab[1].storage_lo, DBGB_Y);
	ASSERT_UEQ(tab[2].view_hi, 0); /* n: not a tensor */
	ASSERT_EQ(fp_dbg_run_params(run, NULL, NULL), DBGB_NPARAMS);

	/* the slots: what the site table says, then the device's words */
	k = fp_dbg_run_checks(run, &n);
	ASSERT_EQ(n, DBGB_NCHECKS);
	ASSERT_EQ(k[0].rule, FP_DBG_RULE_BOUNDS);
	ASSERT_EQ(k[0].statement, 0);
	ASSERT_EQ(k[0].site, 0);
	ASSERT_STREQ(k[0].subject, "x_ptr + offs");
	ASSERT_EQ(k[0].ncands, 1);
	ASSERT_STREQ(k[0].cands[0], "x_ptr");
	ASSERT_UEQ(k[0].fired, 0);
	ASSERT(!k[0].has_first && !k[0].has_range);
	ASSERT_EQ(k[0].nprograms, 0);
	ASSERT_NULL(k[0].loop_var);
	ASSERT_EQ(k[1].rule, FP_DBG_RULE_NAN_MEM);
	ASSERT_UEQ(k[1].fired, 2);
	ASSERT_UEQ(k[1].count, 2);
	ASSERT(k[1].has_first);
	ASSERT_UEQ(k[1].first_program, 0);
	ASSERT_EQ(k[1].first_seq, 1);
	ASSERT_UEQ(k[1].first_lane, 3);
	memcpy(&f, &k[1].first_value, 8);
	ASSERT(isnan(f));
	ASSERT_EQ(k[1].nprograms, 2);
	ASSERT_UEQ(k[1].programs[1], 1);
	ASSERT(!k[1].programs_more);
	ASSERT_EQ(k[2].rule, FP_DBG_RULE_NAN);
	ASSERT_EQ(k[2].statement, 1); /* an index in source order: line 14 */
	ASSERT_EQ(k[2].nreads, 1);
	ASSERT_STREQ(k[2].reads[0], "x");
	ASSERT_UEQ(k[2].fired, 0); /* it only held what it read */
	ASSERT_UEQ(k[2].descended, DBGB_NP);
	ASSERT_UEQ(k[2].descended_elems, DBGB_NP);
	ASSERT_EQ(k[3].statement, 2);
	ASSERT_EQ(k[3].site, 3);
	fp_dbg_run_free(run);
	dbgb_free(&b);

	/* the old layout: no check area, no table, no slots */
	dbgb_fixture(&b, false, 0);
	ASSERT_OK(decode(&b, &run, NULL));
	in = fp_dbg_run_info(run);
	ASSERT(!in->has_checks);
	ASSERT_UEQ(in->records_at, 8);
	ASSERT_NULL(fp_dbg_run_checks(run, &n));
	ASSERT_EQ(n, 0);
	ASSERT_EQ(fp_dbg_run_params(run, &names, &tab), 0);
	ASSERT_NULL(tab);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	ASSERT_NULL(fp_dbg_run_checks(NULL, &n));
	ASSERT_EQ(n, 0);

	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_BOUNDS), "bounds");
	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_DESCRIPTOR_EXTENT), "descriptor_extent");
	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_INF_MEM), "inf_mem");
	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_DIV_TINY), "division_by_tiny");
	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_CAST_SUBNORMAL), "cast_subnormal");
	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_UNKNOWN), "unknown");
	ASSERT_STREQ(fp_dbg_rule_name((enum fp_dbg_rule)99), "unknown");
}

/*
 * Check mode: no records (S = 0), a suppressing run, one slot per member the site table may
 * give a slot (loop, target dtype, no site), and the device's program list, which it keeps
 * unordered: the decoder sorts it.
 */
static const char CHECK_MODE_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 4, \"line\": 9, \"source\": \"h = g.to(tl.float8e5)\", \"loop_depth\": 1}],"
	" \"sites\": [{\"id\": 1, \"statement\": 4, \"kind\": \"value\", \"name\": \"h\"}],"
	" \"params\": [\"g_ptr\"],"
	" \"check_slots\": ["
	"  {\"slot\": 0, \"rule\": \"cast_overflow\", \"statement\": 4, \"subject\": \"g\","
	"   \"target_dtype\": \"float8e5\", \"loop\": {\"var\": \"kk\", \"line\": 7}},"
	"  {\"slot\": 1, \"rule\": \"inf\", \"statement\": 4, \"subject\": \"h\", \"site\": 1,"
	"   \"reads\": [], \"loop\": {\"var\": \"kk\"}},"
	"  {\"slot\": 2, \"rule\": \"descriptor_extent\", \"statement\": 4, \"subject\": \"d\","
	"   \"cands\": null, \"unknown_member\": [1, 2]}]}";

TEST(debug_decode_checks_mode)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	const struct fp_dbg_check_slot *k;
	size_t n;
	uint64_t p;

	dbgb_init_checks(&b, 0, 32, 1, false, 0, 1, 3, true);
	ASSERT_UEQ(dbgb_bytes(&b), (16 + 4 + 96) * 8); /* nothing after the check area */
	dbgb_table(&b, 0, 0x1000, 0x2000, 0x1000, 0x2000);
	dbgb_fire_value(&b, 0, 9, 0, 1, 6, 70000.0, -4);
	dbgb_fire_value(&b, 0, 2, 0, 2, 1, 65600.0, 3);
	dbgb_fire_value(&b, 0, 7, 0, 1, 0, 99999.0, 5);
	/* 12 programs, the highest first: the list keeps the lowest 8, 4 did not fit */
	for (p = 31; p >= 20; p--)
		dbgb_fire_value(&b, 1, p, 0, 1, 0, INFINITY, 0);
	b.w[12] = UINT64_C(0xdeadbeef); /* the sink of suppressed compare-and-swaps: any value */
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), CHECK_MODE_SITES, strlen(CHECK_MODE_SITES),
				&run, NULL));
	ASSERT(fp_dbg_run_info(run)->has_checks);
	ASSERT(fp_dbg_run_info(run)->suppress);
	ASSERT_UEQ(fp_dbg_run_info(run)->record_count, 0);
	ASSERT_UEQ(fp_dbg_run_info(run)->records_at, 16 + 4 + 96);
	k = fp_dbg_run_checks(run, &n);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(k[0].rule, FP_DBG_RULE_CAST_OVERFLOW);
	ASSERT_EQ(k[0].target_dtype, FP_DTYPE_FLOAT8E5);
	ASSERT_EQ(k[0].site, UINT32_MAX);
	ASSERT_STREQ(k[0].loop_var, "kk");
	ASSERT_EQ(k[0].loop_line, 7);
	ASSERT_UEQ(k[0].fired, 3);
	ASSERT_UEQ(k[0].count, 4);
	ASSERT_UEQ(k[0].first_program, 2); /* the lowest (program, sequence), not the first fired */
	ASSERT_UEQ(k[0].first_lane, 1);
	ASSERT_EQ(k[0].first_iter, 3);
	ASSERT_EQ(k[0].nprograms, 3);
	ASSERT_UEQ(k[0].programs[0], 2);
	ASSERT_UEQ(k[0].programs[1], 7);
	ASSERT_UEQ(k[0].programs[2], 9);
	ASSERT(k[0].has_range); /* lo/hi: the values' bits, the lowest 65600 and highest 99999 */
	{
		double lo, hi;

		memcpy(&lo, &k[0].lo, 8);
		memcpy(&hi, &k[0].hi, 8);
		ASSERT_DEQ(lo, 65600.0);
		ASSERT_DEQ(hi, 99999.0);
	}
	ASSERT_EQ(k[1].rule, FP_DBG_RULE_INF);
	ASSERT_EQ(k[1].site, 0);
	ASSERT_EQ(k[1].nreads, 0);
	ASSERT_STREQ(k[1].loop_var, "kk");
	ASSERT_EQ(k[1].loop_line, 0);
	ASSERT_UEQ(k[1].fired, 12);
	ASSERT_EQ(k[1].nprograms, FP_DBG_SLOT_PROGRAMS);
	ASSERT_UEQ(k[1].programs[0], 20);
	ASSERT_UEQ(k[1].programs[7], 27);
	ASSERT(k[1].programs_more);
	ASSERT_UEQ(k[1].first_program, 20);
	ASSERT_EQ(k[2].rule, FP_DBG_RULE_DESCRIPTOR_EXTENT);
	ASSERT_EQ(k[2].ncands, 0);
	ASSERT_EQ(k[2].target_dtype, FP_DTYPE_UNKNOWN);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* Every check of the extended header (header()), each naming the word's byte offset. */
TEST(debug_decode_checks_bad_header)
{
	struct dbgb b, o;
	struct fp_dbg_run *run;
	struct fp_diag d;
	size_t len;
	unsigned w;

	dbgb_fixture_checks(&b, false, 0);
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	b.w[1] |= UINT64_C(4) << 48; /* flags bit 2: unknown */
	expect_checks_fail(&b, FP_EFORMAT, 8, "unknown flags 0x0006");
	b.w[1] &= ~(UINT64_C(4) << 48);
	/* a header that says there is a check area but ends before its extended header */
	for (len = 64; len < 128; len += 8) {
		run = (struct fp_dbg_run *)1;
		ASSERT_EQ(fp_dbg_decode(b.w, len, DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS),
					&run, &d),
			  FP_EFORMAT);
		ASSERT_NULL(run);
		ASSERT_UEQ(d.offset, len);
		ASSERT(strstr(d.msg, "truncated extended header"));
	}
	b.w[8] = FP_DBG_MAX_PARAMS + 1;
	expect_checks_fail(&b, FP_EFORMAT, 64, "word 8 (tensor-table entries) 4097 exceeds 4096");
	b.w[8] = DBGB_NPARAMS;
	b.w[9] = FP_DBG_MAX_CHECKS + 1;
	expect_checks_fail(&b, FP_EFORMAT, 72, "word 9 (check slots) 65537 exceeds 65536");
	b.w[9] = DBGB_NCHECKS;
	b.w[10] = 2; /* only bit 0 (suppress) is defined */
	expect_checks_fail(&b, FP_EFORMAT, 80, "word 10 (flags) is 0x2, expected 0 or 1");
	b.w[10] = 0;
	b.w[11] += 1;
	expect_checks_fail(&b, FP_EFORMAT, 88, "word 11 (records at) is 161");
	b.w[11] = 8; /* records where they are without a check area */
	expect_checks_fail(&b, FP_EFORMAT, 88, "end at word 160");
	b.w[11] = 160;
	for (w = 13; w < 16; w++) {
		b.w[w] = 1;
		expect_checks_fail(&b, FP_EFORMAT, 8 * w, "reserved");
		b.w[w] = 0;
	}
	b.w[12] = UINT64_MAX; /* the sink: any value */
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	dbgb_free(&b);

	/* the area's size must be the site table's: parameters, then slots */
	dbgb_init_checks(&o, DBGB_NS, DBGB_NP, 4, false, 0, DBGB_NPARAMS - 1, DBGB_NCHECKS, false);
	expect_checks_fail(&o, FP_EFORMAT, 64,
			   "says 3 parameters and 4 check slots, the site "
			   "table 4 and 4");
	dbgb_free(&o);
	dbgb_init_checks(&o, DBGB_NS, DBGB_NP, 4, false, 0, DBGB_NPARAMS, DBGB_NCHECKS + 1, false);
	expect_checks_fail(&o, FP_EFORMAT, 72, "says 4 parameters and 5 check slots");
	dbgb_free(&o);
	/* a site table with check slots needs a buffer with a check area */
	dbgb_fixture(&o, false, 0);
	expect_checks_fail(&o, FP_EFORMAT, 8, "has no check area but the site table has 4 check");
	dbgb_free(&o);
	/* parameters alone (no slot) go with any buffer: the table is then unknown */
	{
		char *t = dbgb_sites_with(DBGB_SITES, ", \"params\": [\"x_ptr\"]");
		const struct fp_dbg_table_entry *tab = (const void *)1;
		const char *const *names;

		dbgb_fixture(&o, false, 0);
		ASSERT_OK(fp_dbg_decode(o.w, dbgb_bytes(&o), t, strlen(t), &run, NULL));
		ASSERT_EQ(fp_dbg_run_params(run, &names, &tab), 1);
		ASSERT_STREQ(names[0], "x_ptr");
		ASSERT_NULL(tab);
		fp_dbg_run_free(run);
		dbgb_free(&o);
		free(t);
	}
}

/* Truncated anywhere, or with bytes after it: the offset is the length. */
TEST(debug_decode_checks_truncated)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_diag d;
	size_t len, full;

	dbgb_fixture_checks(&b, true, 64);
	full = dbgb_bytes(&b);
	for (len = 0; len < full; len += 8) {
		run = (struct fp_dbg_run *)1;
		ASSERT_EQ(fp_dbg_decode(b.w, len, DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS),
					&run, &d),
			  FP_EFORMAT);
		ASSERT_NULL(run);
		ASSERT_UEQ(d.offset, len);
	}
	ASSERT_EQ(fp_dbg_decode(b.w, full + 8, DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS), &run,
				&d),
		  FP_EFORMAT);
	ASSERT_UEQ(d.offset, full);
	ASSERT(strstr(d.msg, "trailing"));
	dbgb_free(&b);
}

/* Every check of the tensor table and the slots (check_area()), each naming its word. */
TEST(debug_decode_checks_bad_slots)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	uint64_t *e, *k, save[32];
	unsigned w;

	dbgb_fixture_checks(&b, false, 0);
	/* tensor table entry 1 (y_ptr): words 20-23 */
	e = b.w + 16 + 4;
	e[0] = e[1] + 1;
	expect_checks_fail(&b, FP_EFORMAT, 20 * 8, "tensor table entry 1 (`y_ptr`): a range ends");
	e[0] = DBGB_Y;
	e[2] = e[3] + 8;
	expect_checks_fail(&b, FP_EFORMAT, 22 * 8, "entry 1 (`y_ptr`)");
	e[2] = DBGB_Y;
	e[0] = e[1]; /* an empty view is not an error: a tensor of no element */
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	e[0] = DBGB_Y;

	/* slot 0 never fired: none of what a firing writes may be there */
	k = dbgb_check(&b, 0);
	for (w = 2; w <= 12; w++) {
		if (w > 5 && w < 12)
			continue;
		k[w] = 1;
		expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 0, 1),
				   "check slot 0 (bounds, word 1): never fired but holds");
		k[w] = 0;
	}
	/* ... but the words a firing writes under the lock, and the descended counts, may be */
	k[6] = 5;
	k[7] = 0x1234;
	k[8] = 9;
	k[10] = 2;
	k[11] = 3;
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	memset(k, 0, 32 * 8);

	/* slot 1 fired (nan_mem, programs 0 and 1, first instance at program 0) */
	k = dbgb_check(&b, 1);
	memcpy(save, k, sizeof(save));
#define RESTORE() memcpy(k, save, sizeof(save))
	k[3] = (uint64_t)INT64_MAX + 1; /* INT64_MAX - lo for a negative lo: never written */
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 3),
			   "check slot 1 (nan_mem, word 3): the lowest value lies above");
	RESTORE();
	k[3] = (uint64_t)INT64_MAX - 100; /* lo = 100 */
	k[4] = 50;
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 3), "lies above the highest");
	k[4] = 100; /* lo == hi: one value */
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	RESTORE();
	k[5] = ((uint64_t)DBGB_NP << 32) + 1;
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 5),
			   "check slot 1 (nan_mem, word 5): first program 3 of 3");
	RESTORE();
	k[6] = UINT64_C(1) << 31;
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 6), "first lane 2147483648");
	k[6] = (UINT64_C(1) << 31) - 1;
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	RESTORE();
	k[17] = DBGB_NP + 1; /* program 3 of a grid of 3 */
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 17),
			   "check slot 1 (nan_mem, word 17): program 3 of 3 in its list");
	RESTORE();
	k[23] = DBGB_NP + 7;
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 23), "in its list");
	RESTORE();
	k[20] = k[16]; /* program 0 twice, apart in the unordered list */
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 16), "program 0 listed twice");
	RESTORE();
	k[5] = 0;
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 5),
			   "check slot 1 (nan_mem, word 5): fired but has no first instance");
	RESTORE();
	memset(k + 16, 0, 8 * 8);
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 1, 16), "fired but lists no program");
	RESTORE();
	k[16] = 0; /* an empty entry before a listed one: the list is unordered */
	k[22] = 1;
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	RESTORE();
	k[16] = DBGB_NP; /* the last program, P - 1 */
	ASSERT_OK(decode_checks(&b, &run, NULL));
	fp_dbg_run_free(run);
	RESTORE();
#undef RESTORE
	/* the check area is validated before the records: the first error is the slot's */
	dbgb_check(&b, 3)[1] = 0;
	dbgb_check(&b, 3)[12] = 1;
	dbgb_slot(&b, 0, 0)[0] ^= 1;
	expect_checks_fail(&b, FP_EFORMAT, dbgb_check_off(&b, 3, 1), "check slot 3 (bounds");
	dbgb_free(&b);
}

/* The site table's `params` and `check_slots` (sites.c, parse_check_slots()). */
TEST(debug_decode_checks_bad_site_table)
{
#define ST_HEAD                                                                                   \
	"{\"version\": 1, \"statements\": [{\"id\": 3, \"line\": 1, \"source\": \"y = x / d\"}]," \
	" \"sites\": [{\"id\": 1, \"statement\": 3, \"kind\": \"value\", \"name\": \"y\"}]"
#define ONE_SLOT(members) ST_HEAD ", \"params\": [\"x\"], \"check_slots\": [" members "]}"
	static const struct {
		const char *json;
		int status;
		const char *needle;
	} cases[] = {
		{ST_HEAD ", \"params\": 3}", FP_EFORMAT, "\"params\" must be an array of strings"},
		{ST_HEAD ", \"params\": [\"x\", 1]}", FP_EFORMAT, "params[1]: expected a string"},
		{ST_HEAD ", \"params\": [], \"check_slots\": {}}", FP_EFORMAT,
		 "\"check_slots\" must be an array"},
		{ONE_SLOT("7"), FP_EFORMAT, "check_slots[0]: expected an object"},
		{ONE_SLOT("{\"rule\": \"nan\", \"statement\": 3}"), FP_EFORMAT,
		 "check_slots[0]: missing member \"slot\""},
		{ONE_SLOT("{\"slot\": 1, \"rule\": \"nan\", \"statement\": 3}"), FP_EFORMAT,
		 "slots must be numbered 0..n-1 in order"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3},"
			  "{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3}"),
		 FP_EFORMAT, "check_slots[1].slot: slots must be numbered"},
		{ONE_SLOT("{\"slot\": \"0\", \"rule\": \"nan\", \"statement\": 3}"), FP_EFORMAT,
		 "check_slots[0].slot: expected an integer"},
		{ONE_SLOT("{\"slot\": -1, \"rule\": \"nan\", \"statement\": 3}"), FP_EFORMAT,
		 "check_slots[0].slot: expected an integer"},
		{ONE_SLOT("{\"slot\": 0, \"statement\": 3}"), FP_EFORMAT,
		 "missing member \"rule\""},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nans\", \"statement\": 3}"), FP_EFORMAT,
		 "check_slots[0].rule: unknown rule \"nans\""},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"\", \"statement\": 3}"), FP_EFORMAT,
		 "unknown rule \"\""},
		{ONE_SLOT("{\"slot\": 0, \"rule\": 3, \"statement\": 3}"), FP_EFORMAT,
		 "check_slots[0].rule: expected a string"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\"}"), FP_EFORMAT,
		 "missing member \"statement\""},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 0}"), FP_EFORMAT,
		 "check_slots[0].statement: no statement with id 0"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": \"3\"}"), FP_EFORMAT,
		 "check_slots[0].statement: expected an integer"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3, \"site\": 2}"),
		 FP_EFORMAT, "check_slots[0].site: expected an integer in 0..1"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3, \"site\": null}"),
		 FP_EFORMAT, "check_slots[0].site: expected an integer"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3, \"subject\": 1}"),
		 FP_EFORMAT, "check_slots[0].subject: expected a string"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"cast_flush\", \"statement\": 3,"
			  " \"target_dtype\": 16}"),
		 FP_EFORMAT, "check_slots[0].target_dtype: expected a string"},
		{ONE_SLOT(
			 "{\"slot\": 0, \"rule\": \"bounds\", \"statement\": 3, \"cands\": \"x\"}"),
		 FP_EFORMAT, "check_slots[0]: expected an array of strings"},
		{ONE_SLOT(
			 "{\"slot\": 0, \"rule\": \"bounds\", \"statement\": 3, \"cands\": [\"x\", 0]}"),
		 FP_EFORMAT, "check_slots[0][1]: expected a string"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3, \"reads\": [null]}"),
		 FP_EFORMAT, "check_slots[0][0]: expected a string"},
		{ONE_SLOT(
			 "{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3, \"loop\": {\"line\": 2}}"),
		 FP_EFORMAT, "check_slots[0]: missing member \"var\""},
		{ONE_SLOT(
			 "{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3, \"loop\": {\"var\": 1}}"),
		 FP_EFORMAT, "check_slots[0].var: expected a string"},
		{ONE_SLOT("{\"slot\": 0, \"rule\": \"nan\", \"statement\": 3,"
			  " \"loop\": {\"var\": \"i\", \"line\": -1}}"),
		 FP_EFORMAT, "check_slots[0].line: expected an integer"},
	};
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_diag d;
	size_t i;

	/* one parameter and one slot that never fired: what every case's table would describe */
	dbgb_init_checks(&b, 0, 1, 1, false, 0, 1, 1, false);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st;

		run = (struct fp_dbg_run *)1;
		fp_diag_clear(&d);
		st = fp_dbg_decode(b.w, dbgb_bytes(&b), cases[i].json, strlen(cases[i].json), &run,
				   &d);
		if (st != cases[i].status || !strstr(d.msg, cases[i].needle))
			fprintf(stderr, "case %zu: %d %s\n", i, st, d.msg);
		ASSERT_EQ(st, cases[i].status);
		ASSERT(strstr(d.msg, cases[i].needle) != NULL);
		ASSERT(!strncmp(d.msg, "site table: ", 12));
		ASSERT_EQ(d.line, 1); /* positioned in the JSON */
		ASSERT_GT(d.col, 1);
		ASSERT_NULL(run);
	}
	/* the good one of the same shape decodes */
	{
		static const char good[] = ONE_SLOT(
			"{\"slot\": 0, \"rule\": \"division_by_zero\", \"statement\": 3, \"site\": 0,"
			" \"subject\": \"d\", \"loop\": 5, \"access\": \"load\", \"op\": \"add\","
			" \"form\": \"pointer\"}");
		const struct fp_dbg_check_slot *k;
		size_t n;

		ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), good, strlen(good), &run, &d));
		k = fp_dbg_run_checks(run, &n);
		ASSERT_EQ(n, 1);
		ASSERT_EQ(k[0].site, UINT32_MAX); /* site 0: none (site ids start at 1) */
		ASSERT_NULL(k[0].loop_var);       /* a loop that is not an object is none */
		fp_dbg_run_free(run);
	}
	dbgb_free(&b);
	/* more parameters than a tensor table may hold */
	{
		size_t cap = 64 + 6 * (FP_DBG_MAX_PARAMS + 1), len;
		char *t = malloc(cap + sizeof(ST_HEAD));

		ASSERT_NOT_NULL(t);
		len = (size_t)sprintf(t, "%s, \"params\": [", ST_HEAD);
		for (i = 0; i <= FP_DBG_MAX_PARAMS; i++)
			len += (size_t)sprintf(t + len, "%s\"p\"", i ? "," : "");
		strcpy(t + len, "]}");
		dbgb_init(&b, 0, 1, 1, false, 0);
		ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), t, strlen(t), &run, &d), FP_ELIMIT);
		ASSERT(strstr(d.msg, "params: more than 4096 entries"));
		dbgb_free(&b);
		free(t);
	}
#undef ONE_SLOT
#undef ST_HEAD
}

static int decode_checks_scenario(void *arg)
{
	struct fp_dbg_run *run = NULL;
	int st = decode_checks(arg, &run, NULL);

	fp_dbg_run_free(run);
	return st;
}

TEST(debug_decode_checks_oom)
{
	struct dbgb b;

	dbgb_fixture_checks(&b, true, 64);
	ASSERT_GT(fpt_oom_sweep(decode_checks_scenario, &b, 0, 4, NULL), 4);
	dbgb_free(&b);
}
