/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of what the Debugger sees beyond a kernel's own statements: helper call frames in
 * the site table (source order through call chains, reads that stand for a caller's variable,
 * malformed frames), the coverage account, record kinds 4 (atomic) and 5 (descriptor), the
 * findings across frames from the check slots the device filled (NaN born in a helper and what
 * descends from it, NaN from infinite inputs, an atomic out of bounds), tensor descriptors
 * reaching outside their tensor (host, from the launch JSON, and made on the device), the
 * reports' coverage/frames/chain members, and out-of-memory sweeps.
 */
#define _GNU_SOURCE 1 /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <flagprism/alloc.h>
#include <flagprism/debug.h>

#include "test.h"
#include "test-debug.h"

/*
 * kernel: line 18 `x = ...` (site 1), line 20 `x = helper(x)` (site 8, calls frame 1), line 25
 * `tl.store(out + o, x)` (site 9 store, site 10 value). Frame 1 (helper at h.py): line 6 `r = x /
 * d` (site 2, reads x of frame 0), line 7 `t = inner(r)` (site 3, calls frame 2), line 8 `w =
 * tl.atomic_add(p + o, t)` (site 4 atomic, site 5 value). Frame 2 (inner, also h.py): line 3
 * `q = r * 2` (site 6, reads r of frame 1), line 4 `m = tl.zeros(...) - float("-inf")` (site 7,
 * an infinity literal).
 */
static const char FRAME_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"file\": \"/u/k.py\", \"level\": 1, \"addr_level\": 1,"
	" \"frames\": ["
	"  {\"id\": 1, \"function\": \"helper\", \"file\": \"/u/h.py\", \"parent\": 0,"
	"   \"call\": {\"file\": \"/u/k.py\", \"line\": 20, \"col\": 4, \"source\": \"x = helper(x)\"}},"
	"  {\"id\": 2, \"function\": \"inner\", \"file\": \"/u/h.py\", \"parent\": 1,"
	"   \"call\": {\"file\": \"/u/h.py\", \"line\": 7, \"col\": 4, \"source\": \"t = inner(r)\"}}],"
	" \"statements\": ["
	"  {\"id\": 0, \"line\": 18, \"col\": 4, \"source\": \"x = a + 1\"},"
	"  {\"id\": 1, \"line\": 20, \"col\": 4, \"source\": \"x = helper(x)\"},"
	"  {\"id\": 2, \"line\": 25, \"col\": 4, \"source\": \"tl.store(out + o, x)\"},"
	"  {\"id\": 3, \"line\": 6, \"col\": 4, \"frame\": 1, \"source\": \"r = x / d\"},"
	"  {\"id\": 4, \"line\": 7, \"col\": 4, \"frame\": 1, \"source\": \"t = inner(r)\"},"
	"  {\"id\": 5, \"line\": 8, \"col\": 4, \"frame\": 1, \"source\": \"w = tl.atomic_add(p + o, t)\"},"
	"  {\"id\": 6, \"line\": 3, \"col\": 4, \"frame\": 2, \"source\": \"q = r * 2\"},"
	"  {\"id\": 7, \"line\": 4, \"col\": 4, \"frame\": 2, \"source\": \"m = tl.zeros([4]) - 1e300 * 1e300\"}],"
	" \"sites\": ["
	"  {\"id\": 1, \"statement\": 0, \"kind\": \"value\", \"name\": \"x\"},"
	"  {\"id\": 2, \"statement\": 3, \"kind\": \"value\", \"name\": \"r\","
	"   \"reads\": [{\"name\": \"x\", \"frame\": 0, \"var\": \"x\"}]},"
	"  {\"id\": 3, \"statement\": 4, \"kind\": \"value\", \"name\": \"t\", \"reads\": [\"r\"]},"
	"  {\"id\": 4, \"statement\": 5, \"kind\": \"atomic\", \"name\": \"p + o\", \"op\": \"add\","
	"   \"base_params\": [\"p\"]},"
	"  {\"id\": 5, \"statement\": 5, \"kind\": \"value\", \"name\": \"t\"},"
	"  {\"id\": 6, \"statement\": 6, \"kind\": \"value\", \"name\": \"q\","
	"   \"reads\": [{\"name\": \"r\", \"frame\": 1, \"var\": \"r\"}]},"
	"  {\"id\": 7, \"statement\": 7, \"kind\": \"value\", \"name\": \"m\", \"inf_literal\": true},"
	"  {\"id\": 8, \"statement\": 1, \"kind\": \"value\", \"name\": \"x\", \"reads\": [\"x\"]},"
	"  {\"id\": 9, \"statement\": 2, \"kind\": \"store\", \"name\": \"out + o\","
	"   \"base_params\": [\"out\"], \"reads\": [\"x\"]},"
	"  {\"id\": 10, \"statement\": 2, \"kind\": \"value\", \"name\": \"x\", \"reads\": [\"x\"]}],"
	" \"unobserved\": ["
	"  {\"what\": \"memory\", \"line\": 30, \"col\": 4, \"source\": \"tl.load(n)\", \"reason\": \"no line\"},"
	"  {\"what\": \"statement\", \"line\": 9, \"frame\": 1, \"source\": \"f(x)\", \"reason\": \"no source\"}]}";

#define NSITES 10

static struct fp_dbg_run *decode_sites(struct dbgb *b, const char *sites)
{
	struct fp_dbg_run *run = NULL;
	struct fp_diag d;

	fp_diag_clear(&d);
	if (fp_dbg_decode(b->w, dbgb_bytes(b), sites, strlen(sites), &run, &d))
		fprintf(stderr, "decode: %s\n", d.msg);
	ASSERT_NOT_NULL(run);
	return run;
}

static const struct fp_dbg_site *site_by_id(const struct fp_dbg_run *run, uint32_t id)
{
	return fp_dbg_run_site(run, id - 1);
}

TEST(debug_frames_site_table)
{
	static const uint32_t want_line[] = {18, 20, 6, 7, 3, 4, 8, 25};
	static const uint32_t want_frame[] = {0, 0, 1, 1, 2, 2, 1, 0};
	const struct fp_dbg_frame *f;
	struct fp_dbg_run *run;
	struct dbgb b;
	size_t i;

	dbgb_init(&b, 0, 1, NSITES, false, 0);
	run = decode_sites(&b, FRAME_SITES);
	/* a helper's statements follow the statement that calls it, nested ones theirs */
	ASSERT_EQ(fp_dbg_run_statement_count(run), 8);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(fp_dbg_run_statement(run, i)->line, want_line[i]);
		ASSERT_EQ(fp_dbg_run_statement(run, i)->frame, want_frame[i]);
	}
	ASSERT_EQ(fp_dbg_run_frame_count(run), 2);
	ASSERT_NULL(fp_dbg_run_frame(run, 0));
	ASSERT_NULL(fp_dbg_run_frame(run, 3));
	f = fp_dbg_run_frame(run, 2);
	ASSERT_STREQ(f->function, "inner");
	ASSERT_EQ(f->parent, 1);
	ASSERT_EQ(f->depth, 2);
	ASSERT_EQ(f->call_line, 7);
	ASSERT_STREQ(f->call_file, "/u/h.py");
	/* a helper's read of its parameter resolves to the caller's variable before the call */
	ASSERT_EQ(site_by_id(run, 2)->frame, 1);
	ASSERT_EQ(site_by_id(run, 2)->reads[0].frame, 0);
	ASSERT_STREQ(site_by_id(run, 2)->reads[0].var, "x");
	ASSERT_EQ(fp_dbg_run_statement(run, site_by_id(run, 2)->reads[0].statement)->line, 18);
	ASSERT_EQ(fp_dbg_run_statement(run, site_by_id(run, 6)->reads[0].statement)->line, 6);
	ASSERT_EQ(fp_dbg_run_statement(run, site_by_id(run, 3)->reads[0].statement)->line, 6);
	/* after the call, the caller's own result */
	ASSERT_EQ(fp_dbg_run_statement(run, site_by_id(run, 9)->reads[0].statement)->line, 20);
	ASSERT_EQ(site_by_id(run, 4)->kind, FP_DBG_KIND_ATOMIC);
	ASSERT_STREQ(site_by_id(run, 4)->op, "add");
	ASSERT(site_by_id(run, 7)->inf_literal);
	ASSERT_EQ(fp_dbg_run_unobserved_count(run), 2);
	ASSERT_EQ(fp_dbg_run_unobserved(run, 1)->what, FP_DBG_UNOBSERVED_STATEMENT);
	ASSERT_EQ(fp_dbg_run_unobserved(run, 1)->frame, 1);
	ASSERT_NULL(fp_dbg_run_unobserved(run, 2));
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* The site table with `from` replaced by `to` must be refused with `st` and `needle`. */
static void bad_table(const char *from, const char *to, int st, const char *needle)
{
	const char *at = strstr(FRAME_SITES, from);
	char *t;
	struct dbgb b;
	struct fp_dbg_run *run = NULL;
	struct fp_diag d;
	size_t pre;

	ASSERT_NOT_NULL(at);
	pre = (size_t)(at - FRAME_SITES);
	t = malloc(strlen(FRAME_SITES) + strlen(to) + 1);
	ASSERT_NOT_NULL(t);
	memcpy(t, FRAME_SITES, pre);
	strcpy(t + pre, to);
	strcat(t, at + strlen(from));
	dbgb_init(&b, 0, 1, NSITES, false, 0);
	ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), t, strlen(t), &run, &d), st);
	ASSERT_NULL(run);
	if (!strstr(d.msg, needle))
		fprintf(stderr, "message: %s\n", d.msg);
	ASSERT(strstr(d.msg, needle));
	ASSERT(!strncmp(d.msg, "site table: ", 12));
	dbgb_free(&b);
	free(t);
}

TEST(debug_frames_bad_tables)
{
	bad_table("\"id\": 2, \"function\"", "\"id\": 3, \"function\"", FP_EFORMAT,
		  "1..n in order");
	bad_table("\"parent\": 1,", "\"parent\": 2,", FP_EFORMAT, "parent");
	bad_table("\"frame\": 2, \"source\": \"q", "\"frame\": 3, \"source\": \"q", FP_EFORMAT,
		  "frame");
	bad_table("{\"name\": \"x\", \"frame\": 0, \"var\": \"x\"}",
		  "{\"name\": \"x\", \"frame\": 0}", FP_EFORMAT, "var");
	bad_table("{\"name\": \"x\", \"frame\": 0, \"var\": \"x\"}", "7", FP_EFORMAT,
		  "a string or an object");
	bad_table("\"what\": \"memory\"", "\"what\": \"lunch\"", FP_EFORMAT, "\"memory\" or");
	bad_table("\"kind\": \"atomic\"", "\"kind\": \"atom\"", FP_EFORMAT, "\"atomic\"");
	bad_table("\"inf_literal\": true", "\"inf_literal\": 1", FP_EFORMAT, "boolean");
	bad_table("\"call\": {\"file\": \"/u/k.py\", \"line\": 20,",
		  "\"call\": {\"file\": 1, \"line\": 20,", FP_EFORMAT, "call.file");
	bad_table(" \"frames\": [", " \"frames\": 3, \"x\": [", FP_EFORMAT,
		  "\"frames\" must be an array");
}

/* A chain of 40 nested frames: deeper than the site table allows. */
TEST(debug_frames_too_deep)
{
	char *t = malloc(16384), *p;
	struct dbgb b;
	struct fp_dbg_run *run = NULL;
	struct fp_diag d;
	int i;

	ASSERT_NOT_NULL(t);
	p = t + sprintf(t, "{\"version\": 1, \"statements\": [], \"sites\": [], \"frames\": [");
	for (i = 1; i <= 40; i++)
		p += sprintf(
			p,
			"%s{\"id\": %d, \"function\": \"f\", \"parent\": %d, \"call\": {\"line\": 1}}",
			i > 1 ? "," : "", i, i - 1);
	strcpy(p, "]}");
	dbgb_init(&b, 0, 1, 0, false, 0);
	ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), t, strlen(t), &run, &d), FP_ELIMIT);
	ASSERT(strstr(d.msg, "nested deeper than 32"));
	dbgb_free(&b);
	free(t);
}

static const uint64_t S4[1] = {4};

/*
 * The check slots _checkgen.py gives FRAME_SITES's kernel (parameters a, d, p, out): NaN/Inf
 * of every value, the divisor of `r = x / d`, the atomic's and the store's bounds.
 */
static const char FRAME_CHECKS[] =
	", \"params\": [\"a\", \"d\", \"p\", \"out\"], \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"nan\", \"statement\": 0, \"subject\": \"x\", \"site\": 1,"
	"  \"reads\": [\"a\"]},"
	" {\"slot\": 1, \"rule\": \"nan\", \"statement\": 3, \"subject\": \"r\", \"site\": 2,"
	"  \"reads\": [\"x\", \"d\"]},"
	" {\"slot\": 2, \"rule\": \"division_by_zero\", \"statement\": 3, \"subject\": \"d\"},"
	" {\"slot\": 3, \"rule\": \"nan\", \"statement\": 4, \"subject\": \"t\", \"site\": 3,"
	"  \"reads\": [\"r\"]},"
	" {\"slot\": 4, \"rule\": \"bounds\", \"statement\": 5, \"subject\": \"p + o\","
	"  \"site\": 4, \"access\": \"atomic\", \"op\": \"add\", \"cands\": [\"p\"]},"
	" {\"slot\": 5, \"rule\": \"nan\", \"statement\": 6, \"subject\": \"q\", \"site\": 6,"
	"  \"reads\": [\"r\"]},"
	" {\"slot\": 6, \"rule\": \"inf\", \"statement\": 7, \"subject\": \"m\", \"site\": 7},"
	" {\"slot\": 7, \"rule\": \"nan\", \"statement\": 1, \"subject\": \"x\", \"site\": 8,"
	"  \"reads\": [\"x\"]},"
	" {\"slot\": 8, \"rule\": \"bounds\", \"statement\": 2, \"subject\": \"out + o\","
	"  \"site\": 9, \"access\": \"store\", \"cands\": [\"out\"]}]";

#define FRAME_NP 4
#define FRAME_NC 9

/* FRAME_SITES with its check slots; free() it. */
static char *frame_sites(void)
{
	return dbgb_sites_with(FRAME_SITES, FRAME_CHECKS);
}

/*
 * One program: x (site 1), r (2, NaN at lane 1: 0/0), t (3), q (6), m (7, -inf: a literal), the
 * atomic (4) and its value (5), x (8, NaN), the store (9) and its value (10). p is 3 floats at
 * 0x2000 in a 256-byte allocation (the atomic's lane 3 is past it), out 4 floats at 0x3000.
 * With `nan`, slot 1 (r) fired where r was born (its record, slot 1); t, q and the caller's x
 * held it because what they read did (words 10/11); m's -inf is the statement's own literal,
 * so slot 6 never fired.
 */
static void frame_run(struct dbgb *b, bool nan)
{
	static const double fin[4] = {1, 2, 3, 4};
	double r[4] = {1, 2, 3, 4}, inf4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
	uint64_t a[4] = {0x2000, 0x2004, 0x2008, 0x200c}, s[4] = {0x3000, 0x3004, 0x3008, 0x300c};
	unsigned k = 0;

	if (nan)
		r[1] = NAN;
	dbgb_init_checks(b, 10, 1, NSITES, false, 0, FRAME_NP, FRAME_NC, false);
	dbgb_table(b, 2, 0x2000, 0x200c, 0x2000, 0x2100);
	dbgb_table(b, 3, 0x3000, 0x3010, 0x3000, 0x3010);
	dbgb_value(b, 0, k++, 1, FP_DTYPE_FLOAT32, S4, 1, fin, false);
	dbgb_value(b, 0, k++, 2, FP_DTYPE_FLOAT32, S4, 1, r, false);
	dbgb_value(b, 0, k++, 3, FP_DTYPE_FLOAT32, S4, 1, r, false);
	dbgb_value(b, 0, k++, 6, FP_DTYPE_FLOAT32, S4, 1, r, false);
	dbgb_value(b, 0, k++, 7, FP_DTYPE_FLOAT32, S4, 1, inf4, false);
	dbgb_addr(b, 0, k++, 4, FP_DBG_KIND_ATOMIC, FP_DTYPE_FLOAT32, S4, 1, a, NULL, false);
	dbgb_value(b, 0, k++, 5, FP_DTYPE_FLOAT32, S4, 1, r, false);
	dbgb_value(b, 0, k++, 8, FP_DTYPE_FLOAT32, S4, 1, r, false);
	dbgb_addr(b, 0, k++, 9, FP_DBG_KIND_STORE, FP_DTYPE_FLOAT32, S4, 1, s, NULL, false);
	dbgb_value(b, 0, k++, 10, FP_DTYPE_FLOAT32, S4, 1, r, false);
	if (nan) {
		dbgb_fire_value(b, 1, 0, 1, 1, 1, NAN, 0);
		dbgb_descend(b, 3, 1);
		dbgb_descend(b, 5, 1);
		dbgb_descend(b, 7, 1);
	}
}

TEST(debug_frames_nan_origin_in_helper)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	char *sites = frame_sites();

	frame_run(&b, true);
	run = decode_sites(&b, sites);
	ASSERT_OK(fp_dbg_findings_new(run, NULL, 0, &fs, NULL));
	/* the NaN is born in the helper (r = x / d): neither t, q nor the caller's x is an origin
	 * (they descend from it); the -inf of the literal is meant */
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT_STREQ(f->subject, "r");
	ASSERT(site_by_id(run, 2) == fp_dbg_run_site(run, f->site));
	ASSERT_EQ(fp_dbg_run_statement(run, f->statement)->frame, 1);
	ASSERT_EQ(fp_dbg_run_statement(run, f->statement)->line, 6);
	ASSERT_EQ(f->execution, 0); /* r's record is the one at the first instance's slot */
	ASSERT_UEQ(f->count, 1);
	ASSERT_UEQ(f->descendants, 3);
	ASSERT(!f->from_memory);
	ASSERT(strstr(f->message, "while no value the statement reads (x, d) held NaN"));
	ASSERT(strstr(f->message, "; 3 later values or loads descend from it."));
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	free(sites);
}

/* q = r - r where r holds -inf (its statement's literal) and q NaN: a NaN born from
 * infinities is an origin; the -inf is not. */
static const char INF_SITES[] =
	"{\"version\": 1, \"statements\": ["
	"  {\"id\": 0, \"line\": 1, \"source\": \"r = a - b\"},"
	"  {\"id\": 1, \"line\": 2, \"source\": \"q = r - r\"}],"
	" \"sites\": ["
	"  {\"id\": 1, \"statement\": 0, \"kind\": \"value\", \"name\": \"r\", \"inf_literal\": true},"
	"  {\"id\": 2, \"statement\": 1, \"kind\": \"value\", \"name\": \"q\", \"reads\": [\"r\"]}],"
	" \"params\": [\"a\", \"b\"], \"check_slots\": ["
	"  {\"slot\": 0, \"rule\": \"nan\", \"statement\": 0, \"subject\": \"r\", \"site\": 1,"
	"   \"reads\": [\"a\", \"b\"]},"
	"  {\"slot\": 1, \"rule\": \"inf\", \"statement\": 0, \"subject\": \"r\", \"site\": 1,"
	"   \"reads\": [\"a\", \"b\"]},"
	"  {\"slot\": 2, \"rule\": \"nan\", \"statement\": 1, \"subject\": \"q\", \"site\": 2,"
	"   \"reads\": [\"r\"]},"
	"  {\"slot\": 3, \"rule\": \"inf\", \"statement\": 1, \"subject\": \"q\", \"site\": 2,"
	"   \"reads\": [\"r\"]}]}";

TEST(debug_frames_nan_from_infinities)
{
	double r[4] = {1, -INFINITY, 3, 4}, q[4] = {0, NAN, 0, 0};
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	dbgb_init_checks(&b, 2, 1, 2, false, 0, 2, 4, false);
	dbgb_value(&b, 0, 0, 1, FP_DTYPE_FLOAT32, S4, 1, r, false);
	dbgb_value(&b, 0, 1, 2, FP_DTYPE_FLOAT32, S4, 1, q, false);
	dbgb_fire_value(&b, 2, 0, 1, 1, 1, NAN, 0); /* r held no NaN: q's is born */
	run = decode_sites(&b, INF_SITES);
	ASSERT_OK(fp_dbg_findings_new(run, NULL, 0, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 1); /* no inf_origin at r: a literal */
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT_STREQ(f->subject, "q");
	ASSERT_EQ(f->execution, 0);
	ASSERT_UEQ(f->descendants, 0);
	ASSERT_STREQ(f->message,
		     "`q` holds NaN (1 element where it was born) while no value the statement "
		     "reads (r) held NaN (infinities it reads make NaN in inf - inf, 0 * inf and "
		     "inf / inf): the NaN is produced here.");
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

TEST(debug_frames_atomic_out_of_bounds)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	char *sites = frame_sites();

	frame_run(&b, false);
	/* lane 3 of the atomic (slot 5 of the program) at 0x200c: p holds 3 floats */
	dbgb_fire(&b, 4, 0, 5, 1, 3, 0x200c, 0x200c, 0x2010, 0);
	run = decode_sites(&b, sites);
	ASSERT_OK(fp_dbg_findings_new(run, NULL, 0, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_OUT_OF_BOUNDS);
	ASSERT_STREQ(f->param, "p");
	ASSERT(f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_UEQ(f->bytes_past, 4);
	ASSERT_UEQ(f->address, 0x200c);
	ASSERT_UEQ(f->lanes_out, 1);
	ASSERT_EQ(f->execution, 0);
	ASSERT_EQ(fp_dbg_run_statement(run, f->statement)->frame, 1);
	ASSERT_STREQ(f->message,
		     "tl.atomic_add on `p + o` reads and writes up to 4 bytes past the end of the "
		     "tensor `p` (a view of 12 bytes). It stays inside the same allocation (256 "
		     "bytes), so it silently overwrites neighbouring data that is not part of the "
		     "view (first offending address 0x200c, 1 active lane outside the view).");
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	free(sites);
}

/*
 * Coverage: 2 memory sites (atomic, store) + 1 unobserved memory entry; 8 statements + 2: the
 * unobserved statement, and line 30, whose only access (a header's load) is not observed.
 */
TEST(debug_frames_coverage)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_coverage c;
	char *sites = frame_sites();

	frame_run(&b, false);
	run = decode_sites(&b, sites);
	fp_dbg_run_coverage(run, &c);
	ASSERT_UEQ(c.memory_sites, 3);
	ASSERT_UEQ(c.memory_sites_observed, 2);
	ASSERT_UEQ(c.statements, 10);
	ASSERT_UEQ(c.statements_observed, 8);
	ASSERT_EQ(fp_dbg_run_site_unobservable(run, 3), FP_DBG_ADDR_COMPLETE);
	ASSERT_EQ(fp_dbg_run_site_unobservable(run, 0), FP_DBG_ADDR_COMPLETE); /* a value site */
	ASSERT(strstr(fp_dbg_addr_status_reason(FP_DBG_ADDR_BLOCK_POINTER), "block pointer"));
	fp_dbg_run_free(run);
	dbgb_free(&b);
	free(sites);
}

/*
 * A statement whose accesses alone are unobserved counts once as a statement not observed: an
 * `elif` header's load (line 30), two loads under `and` in one statement (line 31); an access
 * not observed in an observed statement (line 18) and the accesses of a helper left as written
 * (its lines are the helper's; the call, line 40, is the statement) add no statement.
 */
TEST(debug_frames_coverage_statements_of_unobserved_accesses)
{
	static const char list[] =
		"[{\"what\": \"memory\", \"line\": 30, \"source\": \"tl.load(p)\", \"reason\": \"elif\"},"
		" {\"what\": \"memory\", \"line\": 31, \"source\": \"tl.load(p)\", \"reason\": \"boolop\"},"
		" {\"what\": \"memory\", \"line\": 31, \"source\": \"tl.load(q)\", \"reason\": \"boolop\"},"
		" {\"what\": \"memory\", \"line\": 18, \"source\": \"tl.load(r)\", \"reason\": \"cond\"},"
		" {\"what\": \"statement\", \"line\": 40, \"source\": \"g(x)\", \"reason\": \"helper g\"},"
		" {\"what\": \"memory\", \"line\": 3, \"source\": \"tl.load(s)\", \"reason\": \"helper g\"}]";
	const char *at = strstr(FRAME_SITES, "\"unobserved\"");
	size_t n = (size_t)(at - FRAME_SITES);
	char *base, *sites;
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_coverage c;

	base = malloc(n + sizeof(list) + 32);
	ASSERT_NOT_NULL(base);
	memcpy(base, FRAME_SITES, n);
	snprintf(base + n, sizeof(list) + 32, "\"unobserved\": %s}", list);
	sites = dbgb_sites_with(base, FRAME_CHECKS);
	frame_run(&b, false);
	run = decode_sites(&b, sites);
	fp_dbg_run_coverage(run, &c);
	ASSERT_UEQ(c.memory_sites, 2 + 5);
	ASSERT_UEQ(c.memory_sites_observed, 2);
	ASSERT_UEQ(c.statements, 8 + 3);
	ASSERT_UEQ(c.statements_observed, 8);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	free(sites);
	free(base);
}

/*
 * A block-pointer load the rewriter could not follow (status 1), a descriptor made on the
 * device from `a` (a record of kind 5 and a `descriptor_extent` slot), and a load through a host
 * descriptor built from `h` (`desc_param`).
 */
static const char FORM_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	"  {\"id\": 0, \"line\": 3, \"source\": \"t = tl.load(bp)\"},"
	"  {\"id\": 1, \"line\": 2, \"source\": \"d = tl.make_tensor_descriptor(a, ...)\"},"
	"  {\"id\": 2, \"line\": 4, \"source\": \"u = d.load([0, 0])\"}],"
	" \"sites\": ["
	"  {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"bp\", \"form\": \"block_pointer\"},"
	"  {\"id\": 2, \"statement\": 1, \"kind\": \"descriptor\", \"name\": \"a\", \"base_params\": [\"a\"],"
	"   \"form\": \"tensor_descriptor\"},"
	"  {\"id\": 3, \"statement\": 2, \"kind\": \"load\", \"name\": \"d\", \"form\": \"tensor_descriptor\","
	"   \"padding\": \"zero\", \"desc_param\": \"h\", \"base_params\": [\"h\"]}],"
	" \"params\": [\"a\", \"h\"], \"check_slots\": ["
	"  {\"slot\": 0, \"rule\": \"bounds\", \"statement\": 0, \"subject\": \"bp\", \"site\": 1,"
	"   \"cands\": [\"a\"], \"form\": \"block_pointer\"},"
	"  {\"slot\": 1, \"rule\": \"descriptor_extent\", \"statement\": 1, \"subject\": \"a\","
	"   \"site\": 2, \"cands\": [\"a\"], \"form\": \"tensor_descriptor\"},"
	"  {\"slot\": 2, \"rule\": \"bounds\", \"statement\": 2, \"subject\": \"d\", \"site\": 3,"
	"   \"cands\": [\"h\"], \"access\": \"load\", \"form\": \"tensor_descriptor\"}]}";

/* The descriptor record: base 0x1000, shape 8 x 4 floats (row stride 4): 32 elements. */
static void desc_record(struct dbgb *b, uint64_t p, uint64_t k, uint64_t base, uint64_t elems)
{
	uint64_t *w = dbgb_slot(b, p, k);
	uint64_t bs[2] = {4, 4};
	uint64_t last = base + (elems - 1) * 4;

	w[0] = 2 | (uint64_t)5 << 16 | (uint64_t)FP_DTYPE_FLOAT32 << 24 | (uint64_t)2 << 32 |
	       k << 40;
	w[1] = bs[0] | bs[1] << 21;
	w[2] = elems;
	w[3] = base;
	w[4] = last;
	w[5] = base;
	w[6] = last;
	w[7] = UINT64_MAX;
}

static const char FORM_LAUNCH[] =
	"{\"args\": [{\"name\": \"a\", \"kind\": \"tensor\", \"data_ptr\": 4096, \"element_size\": 4,"
	" \"shape\": [16], \"strides\": [1]},"
	" {\"name\": \"h\", \"kind\": \"tensor\", \"data_ptr\": 8192, \"element_size\": 4,"
	" \"shape\": [4, 4], \"strides\": [4, 1], \"storage_ptr\": 8192, \"storage_nbytes\": 256,"
	" \"descriptor\": {\"shape\": [6, 4], \"strides\": [4, 1], \"block_shape\": [4, 4]}}]}";

/* Both descriptor findings: the device's (at the descriptor's creation), the host's (at the
 * first access through it). */
static void expect_descriptor_findings(const struct fp_dbg_run *run, bool records)
{
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	struct fp_diag d;

	ASSERT_OK(fp_dbg_findings_from_launch(run, FORM_LAUNCH, strlen(FORM_LAUNCH), &fs, &d));
	ASSERT_EQ(fp_dbg_findings_count(fs), 2);
	f = fp_dbg_findings_at(fs, 0); /* the device descriptor, at its creation */
	ASSERT_EQ(f->kind, FP_DBG_FINDING_DESCRIPTOR_EXTENT);
	ASSERT_EQ(fp_dbg_run_site(run, f->site)->id, 2);
	ASSERT_STREQ(f->param, "a");
	ASSERT(f->param_known);
	ASSERT_UEQ(f->bytes_past, 64);
	ASSERT_UEQ(f->instance_count, 1);
	ASSERT_EQ(f->execution, records ? 0 : FP_DBG_EXECUTION_UNKNOWN);
	ASSERT(strstr(f->message, "the tensor descriptor made from `a` addresses up to 64 bytes "
				  "past the end of the tensor `a` it was built from (a view of 64 "
				  "bytes)"));
	f = fp_dbg_findings_at(fs, 1); /* the host descriptor, at its first access */
	ASSERT_EQ(f->kind, FP_DBG_FINDING_DESCRIPTOR_EXTENT);
	ASSERT_EQ(fp_dbg_run_site(run, f->site)->id, 3);
	ASSERT_STREQ(f->param, "h");
	ASSERT_UEQ(f->bytes_past, 32);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN);
	ASSERT(strstr(f->message, "shape [6, 4], strides [4, 1]"));
	fp_dbg_findings_free(fs);
}

TEST(debug_frames_forms_and_descriptors)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_coverage c;
	uint64_t bs[2] = {4, 4}, addrs[16];
	struct fp_diag d;
	int i;

	for (i = 0; i < 16; i++)
		addrs[i] = 8192 + 4 * (uint64_t)i;
	dbgb_init_checks(&b, 3, 1, 3, false, 0, 2, 3, false);
	dbgb_table(&b, 0, 4096, 4096 + 64, 4096, 4096 + 64);
	dbgb_table(&b, 1, 8192, 8192 + 64, 8192, 8192 + 256);
	/* status 1: a block pointer not followed (no addresses) */
	dbgb_slot(&b, 0, 0)[0] =
		1 | (uint64_t)2 << 16 | (uint64_t)FP_DTYPE_FLOAT32 << 24 | (uint64_t)2 << 32;
	dbgb_slot(&b, 0, 0)[1] = bs[0] | bs[1] << 21;
	dbgb_slot(&b, 0, 0)[2] = (uint64_t)1 << 32;
	dbgb_slot(&b, 0, 0)[7] = UINT64_MAX;
	desc_record(&b, 0, 1, 4096, 32); /* 32 elements: 16 past a's view; active > numel (16) */
	dbgb_addr(&b, 0, 2, 3, FP_DBG_KIND_LOAD, FP_DTYPE_FLOAT32, bs, 2, addrs, NULL, false);
	/* the device checked the descriptor it made, just before its record (slot 1): the bytes
	 * from its base to the end of its last element */
	dbgb_fire(&b, 1, 0, 1, 1, 0, 4096, 4096, 4096 + 32 * 4, 0);
	run = decode_sites(&b, FORM_SITES);
	fp_dbg_run_coverage(run, &c);
	ASSERT_UEQ(c.memory_sites, 2); /* the descriptor's extent is not an access */
	ASSERT_UEQ(c.memory_sites_observed, 1);
	ASSERT_EQ(fp_dbg_run_site_unobservable(run, 0), FP_DBG_ADDR_BLOCK_POINTER);
	expect_descriptor_findings(run, true);
	fp_dbg_run_free(run);
	/* an ordinary load may not claim more active lanes than its shape has */
	dbgb_slot(&b, 0, 1)[0] = (dbgb_slot(&b, 0, 1)[0] & ~((uint64_t)0xff << 16)) | (uint64_t)2
											      << 16;
	{
		char *s2 = dbgb_sites_with(
			"{\"version\": 1, \"statements\": [{\"id\": 0, \"line\": 1, \"source\": \"s\"}],"
			" \"sites\": [{\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"a\"},"
			" {\"id\": 2, \"statement\": 0, \"kind\": \"load\", \"name\": \"b\"},"
			" {\"id\": 3, \"statement\": 0, \"kind\": \"load\", \"name\": \"c\"}]}",
			", \"params\": [\"a\", \"h\"], \"check_slots\": ["
			"{\"slot\": 0, \"rule\": \"nan\", \"statement\": 0},"
			"{\"slot\": 1, \"rule\": \"nan\", \"statement\": 0},"
			"{\"slot\": 2, \"rule\": \"nan\", \"statement\": 0}]");

		run = NULL;
		ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), s2, strlen(s2), &run, &d), FP_EFORMAT);
		ASSERT(strstr(d.msg, "exceeds numel"));
		free(s2);
	}
	dbgb_free(&b);

	/* check mode (no records): the same two findings, no execution for either */
	dbgb_init_checks(&b, 0, 1, 3, false, 0, 2, 3, true);
	dbgb_table(&b, 0, 4096, 4096 + 64, 4096, 4096 + 64);
	dbgb_table(&b, 1, 8192, 8192 + 64, 8192, 8192 + 256);
	dbgb_fire(&b, 1, 0, 0, 1, 0, 4096, 4096, 4096 + 32 * 4, 0);
	run = decode_sites(&b, FORM_SITES);
	expect_descriptor_findings(run, false);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* The JSON and text reports carry the coverage, the frames and each statement's chain. */
TEST(debug_frames_reports)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs = NULL;
	struct fp_dbg_launch *l;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	char *sites = frame_sites();
	static const char lj[] =
		"{\"output_dir\": \"/tmp\", \"grid\": [1], \"source_file\": \"/u/k.py\"}";

	frame_run(&b, true);
	run = decode_sites(&b, sites);
	ASSERT_OK(fp_dbg_launch_parse(run, lj, strlen(lj), &l, NULL));
	ASSERT_OK(fp_dbg_launch_findings(run, l, &fs, NULL));
	f = open_memstream(&buf, &len);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_dbg_write_format(run, l, fs, "json", f, NULL));
	fclose(f);
	ASSERT(strstr(buf, "\"coverage\": {"));
	ASSERT(strstr(buf, "\"memory_sites\": 3"));
	ASSERT(strstr(buf, "\"memory_sites_observed\": 2"));
	ASSERT(strstr(buf, "\"reason\": \"no source\""));
	ASSERT(strstr(buf, "\"function\": \"inner\""));
	ASSERT(strstr(buf, "\"access\": \"atomic\""));
	ASSERT(strstr(buf, "\"op\": \"add\""));
	/* the finding: born in the helper, its descendants, where it was first */
	ASSERT(strstr(buf, "\"kind\": \"nan_origin\""));
	ASSERT(strstr(buf, "\"descendants\": 3"));
	ASSERT(strstr(buf, "\"execution\": 0"));
	ASSERT(strstr(buf, "\"iteration\": null"));
	ASSERT(strstr(buf, "\"programs_more\": false"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_dbg_write_format(run, l, fs, "txt", f, NULL));
	fclose(f);
	ASSERT(strstr(buf, "COVERAGE: 2 of 3 memory sites, 8 of 10 statements observed"));
	ASSERT(strstr(buf, "\nk.py:20 helper -> h.py:7 inner -> h.py:3:4  q = r * 2\n"));
	ASSERT(strstr(buf, "nan_origin at k.py:20 helper -> h.py:6: r = x / d"));
	ASSERT(strstr(buf, "not observed (statement) at k.py:20 helper -> h.py:9: f(x)"));
	ASSERT(strstr(buf, "[atomic_add on p + o]"));
	ASSERT(strstr(buf, "     first: program 0, execution 0\n"));
	free(buf);
	fp_dbg_findings_free(fs);
	fp_dbg_launch_free(l);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	free(sites);
}

struct frames_case {
	struct dbgb b;
	char *sites;
};

static int frames_scenario(void *arg)
{
	struct frames_case *c = arg;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_findings *fs = NULL;
	int st;

	st = fp_dbg_decode(c->b.w, dbgb_bytes(&c->b), c->sites, strlen(c->sites), &run, NULL);
	if (st)
		return st;
	st = fp_dbg_findings_new(run, NULL, 0, &fs, NULL);
	if (!st && fp_dbg_findings_count(fs) != 2)
		st = FP_EINVAL; /* a finding lost to a failed allocation would show here */
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	return st;
}

/* Decode + findings of the frames kernel with its check area, each allocation failing. */
TEST(debug_frames_oom)
{
	struct frames_case c;

	frame_run(&c.b, true);
	dbgb_fire(&c.b, 4, 0, 5, 1, 3, 0x200c, 0x200c, 0x2010, 0); /* and the atomic's bounds */
	c.sites = frame_sites();
	ASSERT_GT(fpt_oom_sweep(frames_scenario, &c, 0, 5, NULL), 5);
	dbgb_free(&c.b);
	free(c.sites);
}
