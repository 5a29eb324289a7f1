/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the Debugger's record buffer decoder (fp_dbg_decode): valid buffers decode into
 * the expected statements, sites, records and summaries; every kind of corruption is rejected
 * with FP_EFORMAT/FP_EVERSION and the byte offset of the offending word; an out-of-memory sweep.
 * Also holds the synthetic buffer builder declared in test-debug.h.
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
	return b->w + 8 + (p * b->S + k) * 8;
}

uint64_t dbgb_off(const struct dbgb *b, uint64_t p, uint64_t k, unsigned i)
{
	return (8 + (p * b->S + k) * 8 + i) * 8;
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
				b->w[8 + b->S * b->P * 8 + off + i] =
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
				b->w[8 + b->S * b->P * 8 + off + i] =
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
const char DBGB_SITES[] =
	"{\"version\": 1, \"kernel\": \"add_kernel\", \"file\": \"/u/add.py\", \"level\": 1,"
	" \"addr_level\": 1, \"statements\": ["
	"  {\"id\": 0, \"line\": 12, \"col\": 4, \"source\": \"x = tl.load(x_ptr + offs)\"},"
	"  {\"id\": 2, \"line\": 15, \"col\": 4, \"source\": \"tl.store(y_ptr + offs, y)\"},"
	"  {\"id\": 1, \"line\": 14, \"col\": 4, \"end_line\": 14, \"source\": \"y = x * 2\"}],"
	" \"sites\": ["
	"  {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"x_ptr + offs\"},"
	"  {\"id\": 2, \"statement\": 0, \"kind\": \"value\", \"name\": \"x\"},"
	"  {\"id\": 3, \"statement\": 1, \"kind\": \"value\", \"name\": \"y\", \"reads\": [\"x\"]},"
	"  {\"id\": 4, \"statement\": 2, \"kind\": \"store\", \"name\": \"y_ptr + offs\","
	"   \"reads\": [\"y\", \"offs\"]}]}";

void dbgb_fixture(struct dbgb *b, bool arena, uint64_t cap)
{
	uint64_t shape[1] = {4}, p, addrs[4];
	double x[4], y[4];
	bool mask[4] = {true, true, true, false};
	int i;

	dbgb_init(b, DBGB_NS, DBGB_NP, 4, arena, cap);
	for (p = 0; p < DBGB_NP; p++) {
		for (i = 0; i < 4; i++) {
			addrs[i] = 0x7f0000001000 + (p * 4 + i) * 4;
			x[i] = (double)(p * 4 + i) - 2.0;
			y[i] = 2 * x[i];
		}
		x[3] = NAN; /* the masked lane reads "other" = nan */
		y[3] = NAN;
		dbgb_addr(b, p, 0, 1, 2, FP_DTYPE_FLOAT32, shape, 1, addrs, p == 2 ? mask : NULL,
			  arena);
		dbgb_value(b, p, 1, 2, FP_DTYPE_FLOAT32, shape, 1, x, arena);
		dbgb_value(b, p, 2, 3, FP_DTYPE_FLOAT32, shape, 1, y, arena);
		dbgb_addr(b, p, 3, 4, 3, FP_DTYPE_FLOAT32, shape, 1, addrs, mask, arena);
	}
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
