/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the Debugger's report writers: fp_dbg_write_reports() into a temporary
 * directory, then the JSON report read back with the JSON reader and checked field by field, key
 * lines of the text reports, the op log (with and without TTIR), raw records, level-2 .npy
 * artifacts (values converted back to their dtype) and the refusal of artifacts from an
 * overflowed run; bad launch JSON; an out-of-memory sweep of the writers.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/debug.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "debug/report-internal.h"
#include "test.h"
#include "test-debug.h"

#define SITES1 DBGB_SITES
#define fixture dbgb_fixture

static char tmpdir[256];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/fp-test-debug-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(tmpdir));
}

static void remove_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}

/* Launch JSON for the fixture; `extra` is spliced in (",\"k\": v" or ""). */
static char *launch(const char *extra)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"output_dir\": \"%s/out\", \"script\": \"demo\","
		 " \"kernel\": \"add_kernel\", \"timestamp\": \"20261130-101500\", \"run\": 1,"
		 " \"grid\": [3], \"backend\": \"interpreter\", \"source_file\": \"/u/add.py\","
		 " \"ttir\": null, \"ttir_unavailable_reason\": \"interpreter: no TTIR\"%s}",
		 tmpdir, extra);
	return buf;
}

static char *slurp(const char *path)
{
	struct fp_strbuf sb;

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_read_file(&sb, path, NULL));
	return fp_strbuf_detach(&sb, NULL);
}

static void expect_text(const char *text, const char *needle)
{
	if (!strstr(text, needle)) {
		fprintf(stderr, "missing \"%s\" in:\n%s\n", needle, text);
		ASSERT(0);
	}
}

static const struct fp_json_value *path(const struct fp_json_value *v, const char *p)
{
	char key[64];

	while (*p && v) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (key[0] >= '0' && key[0] <= '9')
			v = fp_json_at(v, (size_t)strtoul(key, NULL, 10));
		else
			v = fp_json_get(v, key);
		p += n + (p[n] == '.');
	}
	if (!v)
		fprintf(stderr, "no value at %s\n", p);
	return v;
}

static int64_t jint(const struct fp_json_value *root, const char *p)
{
	int64_t x = -12345;

	ASSERT(fp_json_int64(path(root, p), &x));
	return x;
}

static double jnum(const struct fp_json_value *root, const char *p)
{
	double x = -12345;

	ASSERT(fp_json_number(path(root, p), &x));
	return x;
}

static const char *jstr(const struct fp_json_value *root, const char *p)
{
	const char *s = fp_json_string(path(root, p), NULL);

	ASSERT_NOT_NULL(s);
	return s;
}

static int write_reports(struct dbgb *b, const char *sites, const char *launch_json,
			 struct fp_dbg_outputs *out, struct fp_diag *d)
{
	struct fp_dbg_run *run;
	int st;

	ASSERT_OK(fp_dbg_decode(b->w, dbgb_bytes(b), sites, strlen(sites), &run, d));
	fp_dbg_outputs_init(out);
	st = fp_dbg_write_reports(run, launch_json, strlen(launch_json), out, d);
	fp_dbg_run_free(run);
	return st;
}

TEST(debug_report_basic)
{
	struct dbgb b;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *root;
	struct fp_diag d;
	char *text, expect[512];

	make_tmpdir();
	/* the fixture as a run with checks writes it: findings come from its check area */
	dbgb_fixture_checks(&b, false, 0);
	ASSERT_OK(write_reports(&b, DBGB_SITES_CHECKS, launch(", \"export_raw_records\": true"),
				&out, &d));
	snprintf(expect, sizeof(expect), "%s/out/demo_add_kernel_20261130-101500_run1.txt", tmpdir);
	ASSERT_STREQ(out.txt, expect);
	ASSERT_NOT_NULL(out.json);
	ASSERT_NOT_NULL(out.op_log_txt);
	ASSERT_NOT_NULL(out.op_log_json);
	ASSERT_NOT_NULL(out.raw);
	ASSERT_NULL(out.artifacts_dir);
	ASSERT(out.complete);
	ASSERT_UEQ(out.overflow_count, 0);

	/* JSON structure */
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT_EQ(jint(root, "schema_version"), FP_DBG_SCHEMA_VERSION);
	ASSERT_STREQ(jstr(root, "kernel.name"), "add_kernel");
	ASSERT_EQ(jint(root, "kernel.grid.0"), 3);
	ASSERT_EQ(jint(root, "kernel.grid.2"), 1);
	ASSERT_STREQ(jstr(root, "kernel.backend"), "interpreter");
	ASSERT_EQ(jint(root, "config.level"), 1);
	ASSERT_EQ(jint(root, "config.addr_level"), 1);
	ASSERT_EQ(jint(root, "overflow_count"), 0);
	ASSERT(fp_json_type(path(root, "complete")) == FP_JSON_TRUE);
	ASSERT_EQ(fp_json_len(path(root, "statements")), 3);
	/* lane 3 of the loaded x is NaN in programs 0 and 1 (program 2's is masked off): one
	 * NaN-origin finding from memory, its check slot's (findings.c) */
	ASSERT_EQ(fp_json_len(path(root, "findings")), 1);
	ASSERT(fp_json_type(path(root, "findings")) == FP_JSON_ARRAY);
	ASSERT_STREQ(jstr(root, "findings.0.kind"), "nan_origin");
	ASSERT_EQ(jint(root, "findings.0.line"), 12);
	ASSERT_EQ(jint(root, "findings.0.site"), 2);
	ASSERT_STREQ(jstr(root, "findings.0.subject"), "x");
	ASSERT_EQ(jint(root, "findings.0.program.0"), 0);
	ASSERT_EQ(jint(root, "findings.0.execution"), 0); /* x's record in program 0, slot 1 */
	ASSERT(fp_json_type(path(root, "findings.0.iteration")) == FP_JSON_NULL);
	ASSERT_EQ(fp_json_len(path(root, "findings.0.programs")), 2);
	ASSERT_EQ(jint(root, "findings.0.programs.1.0"), 1);
	ASSERT_EQ(jint(root, "findings.0.program_count"), 2);
	ASSERT(fp_json_type(path(root, "findings.0.programs_more")) == FP_JSON_FALSE);
	ASSERT_EQ(jint(root, "findings.0.instance_count"), 2);
	ASSERT_EQ(jint(root, "findings.0.count"), 2);
	ASSERT(fp_json_type(path(root, "findings.0.count_is_lower_bound")) == FP_JSON_FALSE);
	ASSERT(fp_json_type(path(root, "findings.0.from_memory")) == FP_JSON_TRUE);
	ASSERT_EQ(jint(root, "findings.0.descendants"), 0);
	ASSERT_EQ(jint(root, "statements.0.line"), 12);
	ASSERT_EQ(jint(root, "statements.0.col"), 4);
	ASSERT_STREQ(jstr(root, "statements.0.source"), "x = tl.load(x_ptr + offs)");
	ASSERT_STREQ(jstr(root, "statements.0.results.0.name"), "x");
	ASSERT_STREQ(jstr(root, "statements.0.results.0.dtype"), "float32");
	ASSERT_EQ(jint(root, "statements.0.results.0.shape.0"), 4);
	ASSERT_EQ(fp_json_len(path(root, "statements.0.results.0.instances")), 3);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.1.program.0"), 1);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.1.program.1"), 0);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.1.execution"), 0);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.1.summary.element_count"), 4);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.1.summary.nan_count"), 1);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.1.summary.inf_count"), 0);
	ASSERT_EQ(jint(root, "statements.0.results.0.instances.0.summary.zero_count"), 1);
	ASSERT_DEQ(jnum(root, "statements.0.results.0.instances.1.summary.mean"), 3.0);
	ASSERT_DEQ(jnum(root, "statements.0.results.0.instances.1.summary.min"), 2.0);
	ASSERT_DEQ(jnum(root, "statements.0.results.0.instances.1.summary.max"), 4.0);
	ASSERT_NEAR(jnum(root, "statements.0.results.0.instances.1.summary.l2_norm"), sqrt(29.0),
		    1e-12);
	ASSERT_STREQ(jstr(root, "statements.0.memory.0.access"), "load");
	ASSERT_STREQ(jstr(root, "statements.0.memory.0.name"), "x_ptr + offs");
	ASSERT_EQ(jint(root, "statements.0.memory.0.instances.2.address_summary.first_addr"),
		  0x7f0000001020);
	ASSERT_EQ(jint(root, "statements.0.memory.0.instances.2.address_summary.max_addr"),
		  0x7f0000001028);
	ASSERT_EQ(jint(root, "statements.0.memory.0.instances.2.address_summary.active_lane_count"),
		  3);
	ASSERT_EQ(
		jint(root, "statements.0.memory.0.instances.2.address_summary.address_span_bytes"),
		12);
	ASSERT_STREQ(jstr(root, "statements.0.memory.0.instances.2.address_summary.status"),
		     "complete");
	ASSERT_EQ(fp_json_len(path(root, "statements.1.memory")), 0);
	ASSERT_STREQ(jstr(root, "statements.2.memory.0.access"), "store");
	ASSERT_STREQ(jstr(root, "statements.2.reads.0.name"), "y");
	ASSERT_EQ(jint(root, "statements.2.reads.0.line"), 14);
	ASSERT(fp_json_type(path(root, "statements.2.reads.1.line")) == FP_JSON_NULL);
	fp_json_doc_free(doc);

	/* text report */
	text = slurp(out.txt);
	expect_text(text, "kernel:          add_kernel\n");
	expect_text(text, "grid:            [3, 1, 1] (3 programs)\n");
	expect_text(text, "backend:         interpreter\n");
	expect_text(text, "level:           1\n");
	expect_text(text, "overflow:        0\n");
	expect_text(text, "status:          complete\n");
	expect_text(text, "\nline 14:4  y = x * 2\n  reads: x (see line 12)\n");
	expect_text(text, "reads: y (see line 14), offs\n");
	expect_text(text, "[load from x_ptr + offs]");
	expect_text(text, "[store to y_ptr + offs]");
	expect_text(text, "[result x]  float32[4]");
	expect_text(text, "0x00007f0000001020 0x00007f0000001028");
	expect_text(text, "instances: 3\n");
	expect_text(text, "\nFINDINGS: 1\n  1. nan_origin at line 12: x = tl.load(x_ptr + offs)\n"
			  "     `x` holds 2 NaN values loaded from memory");
	expect_text(text, "     programs 0, 1 (2 programs, 2 instances)\n"
			  "     first: program 0, execution 0\n");
	ASSERT_NULL(strstr(text, "INCOMPLETE"));
	fp_free(text);

	/* op log without TTIR */
	text = slurp(out.op_log_txt);
	expect_text(text, "op log unavailable: interpreter: no TTIR\n");
	fp_free(text);
	ASSERT_OK(fp_json_parse_file(out.op_log_json, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT(fp_json_type(path(root, "available")) == FP_JSON_FALSE);
	ASSERT_STREQ(jstr(root, "unavailable_reason"), "interpreter: no TTIR");
	fp_json_doc_free(doc);

	/* raw records */
	text = slurp(out.raw);
	expect_text(text, "header word 0  0x0031764742445046  magic=");
	expect_text(text, "header word 2  0x0000000000000006  slots_per_program=6\n");
	expect_text(text, "program=2 slot=3 | w0=");
	expect_text(text, "kind=store dtype=float32 ndim=1 flags=0x0 seq=3");
	expect_text(text, "nan=1 inf=0");
	fp_free(text);

	fp_dbg_outputs_release(&out);
	fp_dbg_outputs_release(NULL);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/*
 * One launch's reports with `extra` in the launch JSON: the report JSON (parsed, *doc) and the
 * text (*text); the caller frees both.
 */
static void twin_reports(struct dbgb *b, const char *extra, struct fp_json_doc **doc, char **text)
{
	struct fp_dbg_outputs out;
	struct fp_diag d;

	ASSERT_OK(write_reports(b, SITES1, launch(extra), &out, &d));
	ASSERT_OK(fp_json_parse_file(out.json, NULL, doc, NULL));
	*text = slurp(out.txt);
	fp_dbg_outputs_release(&out);
}

/* The twin's warp and register decisions: in the JSON kernel object and the text header; null
 * and no line when absent. */
TEST(debug_report_twin_decisions)
{
	struct dbgb b;
	struct fp_json_doc *doc;
	const struct fp_json_value *root;
	char *text;

	make_tmpdir();
	fixture(&b, false, 0);
	twin_reports(&b,
		     ", \"num_warps\": {\"kernel\": 4, \"twin\": 1, \"reason\": \"element-wise\"},"
		     " \"registers\": {\"cap\": 168, \"uncapped\": 197,"
		     " \"reason\": \"12 programs per SM instead of 8\"}",
		     &doc, &text);
	root = fp_json_root(doc);
	ASSERT_EQ(jint(root, "kernel.num_warps.kernel"), 4);
	ASSERT_EQ(jint(root, "kernel.num_warps.twin"), 1);
	ASSERT_STREQ(jstr(root, "kernel.num_warps.reason"), "element-wise");
	ASSERT_EQ(jint(root, "kernel.registers.cap"), 168);
	ASSERT_EQ(jint(root, "kernel.registers.uncapped"), 197);
	ASSERT_STREQ(jstr(root, "kernel.registers.reason"), "12 programs per SM instead of 8");
	expect_text(text, "\nnum_warps:       kernel 4, twin 1 (element-wise)\n");
	expect_text(text,
		    "\nregisters:       twin capped at 168 per thread, 197 per thread without a "
		    "cap (12 programs per SM instead of 8)\n");
	fp_json_doc_free(doc);
	fp_free(text);

	/* no cap, uncapped count known */
	twin_reports(&b, ", \"registers\": {\"cap\": null, \"uncapped\": 64, \"reason\": null}",
		     &doc, &text);
	root = fp_json_root(doc);
	ASSERT(fp_json_type(path(root, "kernel.registers.cap")) == FP_JSON_NULL);
	ASSERT_EQ(jint(root, "kernel.registers.uncapped"), 64);
	ASSERT(fp_json_type(path(root, "kernel.registers.reason")) == FP_JSON_NULL);
	expect_text(text, "\nregisters:       twin not capped, 64 per thread without a cap\n");
	fp_json_doc_free(doc);
	fp_free(text);

	twin_reports(&b, "", &doc, &text);
	root = fp_json_root(doc);
	ASSERT(fp_json_type(path(root, "kernel.num_warps")) == FP_JSON_NULL);
	ASSERT(fp_json_type(path(root, "kernel.registers")) == FP_JSON_NULL);
	ASSERT_NULL(strstr(text, "num_warps:"));
	ASSERT_NULL(strstr(text, "registers:"));
	fp_json_doc_free(doc);
	fp_free(text);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_report_overflow)
{
	struct dbgb b;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	struct fp_diag d;
	char *text;

	make_tmpdir();
	fixture(&b, false, 0);
	dbgb_value(&b, 1, 4, 2, FP_DTYPE_FLOAT32, (uint64_t[]){4}, 1, (double[]){1, 2, 3, 4},
		   false);
	dbgb_value(&b, 1, 5, 2, FP_DTYPE_FLOAT32, (uint64_t[]){4}, 1, (double[]){1, 2, 3, 4},
		   false);
	b.w[4] = 5;
	ASSERT_OK(write_reports(&b, SITES1, launch(""), &out, &d));
	ASSERT(!out.complete);
	ASSERT_UEQ(out.overflow_count, 5);
	ASSERT_NULL(out.raw);
	text = slurp(out.txt);
	expect_text(text, "overflow:        5\n");
	expect_text(text, "INCOMPLETE: 5 records did not fit (record_capacity=6)\n");
	/* site x: 3 programs, program 1 three times; the dropped ones are not attributed */
	expect_text(text, "instances: 5, maybe more: records dropped (overflow): 5 in this run\n");
	fp_free(text);
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	ASSERT(fp_json_type(path(fp_json_root(doc), "complete")) == FP_JSON_FALSE);
	ASSERT_EQ(jint(fp_json_root(doc), "overflow_count"), 5);
	ASSERT_EQ(jint(fp_json_root(doc), "statements.0.results.0.instances.3.execution"), 2);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/*
 * Sites whose records were all dropped: the report says "records dropped (overflow)" with the
 * run's count, not "not executed", and the JSON says why the site has no instances.
 */
TEST(debug_report_sites_dropped_by_overflow)
{
	uint64_t shape[1] = {4},
		 addrs[4] = {0x7f0000001000, 0x7f0000001004, 0x7f0000001008, 0x7f000000100c};
	double x[4] = {1, 2, 3, 4};
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	struct fp_diag d;
	struct dbgb b;
	uint64_t p;
	char *text;

	make_tmpdir();
	/* 2 slots per program: the load and x fit, y and the store (sites 3, 4) never do */
	dbgb_init(&b, 2, DBGB_NP, 4, false, 0);
	for (p = 0; p < DBGB_NP; p++) {
		dbgb_addr(&b, p, 0, 1, 2, FP_DTYPE_FLOAT32, shape, 1, addrs, NULL, false);
		dbgb_value(&b, p, 1, 2, FP_DTYPE_FLOAT32, shape, 1, x, false);
	}
	b.w[4] = 2 * DBGB_NP;
	ASSERT_OK(write_reports(&b, SITES1, launch(""), &out, &d));
	text = slurp(out.txt);
	expect_text(text, "no records stored: records dropped (overflow): 6 records of this run "
			  "were dropped after 3 of its 3 programs filled their 2 slots");
	ASSERT_NULL(strstr(text, "not executed in any program"));
	fp_free(text);
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	ASSERT_EQ(jint(fp_json_root(doc), "full_programs"), 3);
	ASSERT_STREQ(
		fp_json_string(path(fp_json_root(doc), "statements.1.results.0.no_records"), NULL),
		"records dropped (overflow)");
	ASSERT(fp_json_type(path(fp_json_root(doc), "statements.0.results.0.instances_complete")) ==
	       FP_JSON_FALSE);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/* Data of an .npy file (version 1.0) and its header text. */
static const unsigned char *npy_data(const char *file, char **hdr, size_t *n)
{
	static char *buf;
	struct fp_strbuf sb;
	size_t hlen;

	free(buf);
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_read_file(&sb, file, NULL));
	ASSERT(sb.len > 10 && !memcmp(sb.buf, "\x93NUMPY\x01\x00", 8));
	hlen = (unsigned char)sb.buf[8] | (size_t)(unsigned char)sb.buf[9] << 8;
	buf = malloc(sb.len + 1);
	memcpy(buf, sb.buf, sb.len + 1);
	*hdr = buf + 10;
	buf[10 + hlen - 1] = '\0';
	*n = sb.len - 10 - hlen;
	fp_strbuf_release(&sb);
	return (const unsigned char *)buf + 10 + hlen;
}

TEST(debug_report_level2)
{
	struct dbgb b;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *root;
	struct fp_diag d;
	char file[600], *hdr;
	const unsigned char *data;
	size_t n;
	float f[4];

	make_tmpdir();
	fixture(&b, true, 64);
	ASSERT_OK(write_reports(&b, SITES1, launch(""), &out, &d));
	ASSERT_NOT_NULL(out.artifacts_dir);
	ASSERT_NOT_NULL(out.tensor_index);
	ASSERT_EQ(out.artifact_count, 18); /* 6 value dumps, 6 address dumps x (addr, mask) */
	ASSERT_OK(fp_json_parse_file(out.tensor_index, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT_EQ(fp_json_len(path(root, "artifacts")), 18);
	ASSERT_STREQ(jstr(root, "artifacts.0.file"), "site1_line12_p0_e0_addr.npy");
	ASSERT_STREQ(jstr(root, "artifacts.0.kind"), "address");
	ASSERT_STREQ(jstr(root, "artifacts.0.access"), "load");
	ASSERT_STREQ(jstr(root, "artifacts.0.dtype"), "int64");
	ASSERT_STREQ(jstr(root, "artifacts.1.kind"), "mask");
	ASSERT_STREQ(jstr(root, "artifacts.6.file"), "site2_line12_p0_e0_value.npy");
	ASSERT_STREQ(jstr(root, "artifacts.6.dtype"), "float32");
	ASSERT_EQ(jint(root, "artifacts.6.statement_line"), 12);
	ASSERT_EQ(jint(root, "artifacts.7.program.0"), 1);
	ASSERT_EQ(jint(root, "artifacts.7.shape.0"), 4);
	fp_json_doc_free(doc);

	snprintf(file, sizeof(file), "%s/site2_line12_p1_e0_value.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	expect_text(hdr, "'descr': '<f4'");
	expect_text(hdr, "'shape': (4,)");
	ASSERT_EQ(n, 16);
	memcpy(f, data, 16);
	ASSERT_DEQ(f[0], 2.0);
	ASSERT_DEQ(f[2], 4.0);
	ASSERT(isnan(f[3]));
	snprintf(file, sizeof(file), "%s/site4_line15_p2_e0_mask.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	expect_text(hdr, "'descr': '|b1'");
	ASSERT_EQ(n, 4);
	ASSERT(data[0] == 1 && data[2] == 1 && data[3] == 0);
	snprintf(file, sizeof(file), "%s/site4_line15_p2_e0_addr.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	{
		uint64_t a[4];

		memcpy(a, data, 32);
		ASSERT_UEQ(a[3], 0x7f0000001000 + 11 * 4); /* masked lane: bit 63 cleared */
	}

	/* the JSON report links each instance to its artifact */
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT_STREQ(jstr(root, "statements.0.results.0.instances.1.artifact"),
		     "site2_line12_p1_e0_value.npy");
	ASSERT_STREQ(jstr(root, "statements.0.memory.0.instances.0.mask_artifact"),
		     "site1_line12_p0_e0_mask.npy");
	ASSERT(fp_json_type(path(root, "artifacts.written")) == FP_JSON_TRUE);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_report_level2_overflow)
{
	struct dbgb b;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	struct fp_diag d;
	char *text;

	make_tmpdir();
	fixture(&b, true, 40);
	ASSERT_EQ(write_reports(&b, SITES1, launch(""), &out, &d), FP_EOVERFLOW);
	expect_text(d.msg, "level-2 artifacts refused");
	ASSERT_NOT_NULL(out.txt);
	ASSERT_NOT_NULL(out.json);
	ASSERT_NULL(out.artifacts_dir);
	ASSERT_UEQ(out.dump_overflow, 8);
	ASSERT(!out.complete);
	text = slurp(out.txt);
	expect_text(text, "INCOMPLETE: 8 dump words did not fit (dump capacity=40 words)\n");
	expect_text(text, "level-2 artifacts: refused");
	fp_free(text);
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	ASSERT(fp_json_type(path(fp_json_root(doc), "artifacts.refused")) == FP_JSON_STRING);
	ASSERT(fp_json_type(path(fp_json_root(doc), "complete")) == FP_JSON_FALSE);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_report_dtypes)
{
	static const char sites[] =
		"{\"version\":1,\"level\":2,\"statements\":[{\"id\":0,\"line\":3,\"source\":\"s\"}],"
		"\"sites\":[{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"h\"},"
		"{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"b\"},"
		"{\"id\":3,\"statement\":0,\"kind\":\"value\",\"name\":\"i\"},"
		"{\"id\":4,\"statement\":0,\"kind\":\"value\",\"name\":\"m\"}]}";
	double h[6] = {1.5, -0.0, 65504.0, 5.960464477539063e-08, INFINITY, NAN};
	double bf[2] = {3.140625, -2.0};
	double iv[3] = {-7, 0, 127};
	double bv[2] = {1, 0};
	static const uint16_t h_bits[6] = {0x3e00, 0x8000, 0x7bff, 0x0001, 0x7c00, 0x7e00};
	char lj[1024], file[700], *hdr, *text;
	const unsigned char *data;
	struct fp_dbg_outputs out;
	struct fp_diag d;
	struct dbgb b;
	size_t n;
	int i;

	make_tmpdir();
	dbgb_init(&b, 4, 2, 4, true, 64);
	dbgb_value(&b, 1, 0, 1, FP_DTYPE_FLOAT16, (uint64_t[]){2, 3}, 2, h, true);
	dbgb_value(&b, 1, 1, 2, FP_DTYPE_BFLOAT16, (uint64_t[]){2}, 1, bf, true);
	dbgb_value(&b, 1, 2, 3, FP_DTYPE_INT8, (uint64_t[]){3}, 1, iv, true);
	dbgb_value(&b, 1, 3, 4, FP_DTYPE_BOOL, (uint64_t[]){2}, 1, bv, true);
	snprintf(lj, sizeof(lj),
		 "{\"output_dir\":\"%s\",\"stem\":\"t/x\",\"grid\":[1,2],\"ttir\":null}", tmpdir);
	ASSERT_OK(write_reports(&b, sites, lj, &out, &d));
	ASSERT_EQ(out.artifact_count, 4);
	snprintf(file, sizeof(file), "%s/t_x.txt", tmpdir); /* stem sanitised */
	ASSERT_STREQ(out.txt, file);
	snprintf(file, sizeof(file), "%s/site1_line3_p0-1-0_e0_value.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	expect_text(hdr, "'descr': '<f2'");
	expect_text(hdr, "'shape': (2, 3)");
	ASSERT_EQ(n, 12);
	for (i = 0; i < 6; i++) {
		uint16_t v;

		memcpy(&v, data + 2 * i, 2);
		ASSERT_EQ(v, h_bits[i]);
	}
	snprintf(file, sizeof(file), "%s/site2_line3_p0-1-0_e0_value.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	expect_text(hdr, "'descr': '<f4'"); /* bfloat16 widened */
	{
		float f[2];

		memcpy(f, data, 8);
		ASSERT_DEQ(f[0], 3.140625);
		ASSERT_DEQ(f[1], -2.0);
	}
	snprintf(file, sizeof(file), "%s/site3_line3_p0-1-0_e0_value.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	expect_text(hdr, "'descr': '|i1'");
	ASSERT_EQ(n, 3);
	ASSERT_EQ((int8_t)data[0], -7);
	ASSERT_EQ((int8_t)data[2], 127);
	snprintf(file, sizeof(file), "%s/site4_line3_p0-1-0_e0_value.npy", out.artifacts_dir);
	data = npy_data(file, &hdr, &n);
	expect_text(hdr, "'descr': '|b1'");
	ASSERT(data[0] == 1 && data[1] == 0);
	text = slurp(out.txt);
	expect_text(text, "grid:            [1, 2, 1] (2 programs)\n");
	expect_text(text, "[result i]  int8[3]");
	expect_text(text, "       -7           127"); /* integer min/max exact */
	expect_text(text, "\n        0,1    0");      /* 2-D program label */
	fp_free(text);
	fp_dbg_outputs_release(&out);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_report_bad_launch)
{
	static const struct {
		const char *json;
		int status;
		const char *needle;
	} cases[] = {
		{"{", FP_EFORMAT, "launch:"},
		{"{\"grid\":[3]}", FP_EFORMAT, "output_dir"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[4]}", FP_EFORMAT, "does not match"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[1,1,1,3]}", FP_EFORMAT, "grid"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[0]}", FP_EFORMAT, "grid[0]"},
		{"{\"output_dir\":\"/tmp\"}", FP_EFORMAT, "grid"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"version\":2}", FP_EVERSION, "version"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"ttir\":5}", FP_EFORMAT, "ttir"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"export_raw_records\":1}", FP_EFORMAT,
		 "export_raw_records"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[4294967295,4294967295,4294967295]}",
		 FP_EFORMAT, "does not match"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"num_warps\":4}", FP_EFORMAT,
		 "\"num_warps\" must be"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"num_warps\":{\"kernel\":4}}", FP_EFORMAT,
		 "num_warps.twin"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"num_warps\":{\"kernel\":0,\"twin\":1}}",
		 FP_EFORMAT, "num_warps.kernel"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"num_warps\":{\"kernel\":4,\"twin\":1,"
		 "\"reason\":7}}",
		 FP_EFORMAT, "reason"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"registers\":168}", FP_EFORMAT,
		 "\"registers\" must be"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"registers\":{\"cap\":256}}", FP_EFORMAT,
		 "registers.cap"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"registers\":{\"uncapped\":\"x\"}}",
		 FP_EFORMAT, "registers.uncapped"},
		{"{\"output_dir\":\"/tmp\",\"grid\":[3],\"registers\":{\"reason\":[]}}", FP_EFORMAT,
		 "reason"},
	};
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_outputs out;
	struct fp_dbg_findings *fs = NULL;
	struct fp_dbg_launch *l;
	struct fp_diag d;
	size_t i;

	fixture(&b, false, 0);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), SITES1, strlen(SITES1), &run, NULL));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fp_dbg_outputs_init(&out);
		ASSERT_EQ(fp_dbg_write_reports(run, cases[i].json, strlen(cases[i].json), &out, &d),
			  cases[i].status);
		if (!strstr(d.msg, cases[i].needle))
			fprintf(stderr, "case %zu: %s\n", i, d.msg);
		ASSERT(strstr(d.msg, cases[i].needle) != NULL);
		ASSERT_NULL(out.txt);
		fp_dbg_outputs_release(&out);
	}
	ASSERT_EQ(fp_dbg_write_reports(run, "{}", 2, NULL, &d), FP_EINVAL);
	/* one format to a stream; unknown format */
	{
		static const char lj[] = "{\"output_dir\":\"x\",\"grid\":[3]}";

		ASSERT_OK(fp_dbg_launch_parse(run, lj, strlen(lj), &l, &d));
	}
	{
		FILE *f = tmpfile();

		ASSERT_NOT_NULL(f);
		ASSERT_OK(fp_dbg_launch_findings(run, l, &fs, &d));
		ASSERT_OK(fp_dbg_write_format(run, l, fs, "json", f, &d));
		ASSERT_OK(fp_dbg_write_format(run, l, fs, "raw", f, &d));
		ASSERT_OK(fp_dbg_write_format(run, l, NULL, "txt", f, &d)); /* no findings */
		ASSERT_EQ(fp_dbg_write_format(run, l, fs, "html", f, &d), FP_ENOENT);
		ASSERT_EQ(fp_dbg_launch_findings(run, NULL, &fs, &d), FP_EINVAL);
		fclose(f);
	}
	fp_dbg_findings_free(fs);
	fp_dbg_launch_free(l);
	fp_dbg_launch_free(NULL);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* TTIR of a twin: user ops at lines 12-15 of the twin, helper ops inlined from _records.py. */
static const char TTIR[] =
	"#loc = loc(\"/cache/twin_add.py\":10:0)\n"
	"module {\n"
	"  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> loc(\"x_ptr\"(#loc)), %ctx: !tt.ptr<i64> "
	"loc(\"ctx\"(#loc))) attributes {noinline = false} {\n"
	"    %offs = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32> loc(#loc2)\n"
	"    %0 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>> loc(#loc3)\n"
	"    %1 = tt.addptr %0, %offs : tensor<4x!tt.ptr<f32>>, tensor<4xi32> loc(#loc3)\n"
	"    %x = tt.load %1 : tensor<4x!tt.ptr<f32>> loc(#loc4)\n"
	"    %2 = tt.ptr_to_int %1 : tensor<4x!tt.ptr<f32>> -> tensor<4xi64> loc(#loc7)\n"
	"    %3 = \"tt.reduce\"(%2) <{axis = 0 : i32}> ({\n"
	"    ^bb0(%a: i64 loc(unknown), %b: i64 loc(unknown)):\n"
	"      %4 = arith.minsi %a, %b : i64 loc(#loc9)\n"
	"      tt.reduce.return %4 : i64 loc(#loc9)\n"
	"    }) : (tensor<4xi64>) -> i64 loc(#loc8)\n"
	"    %y = arith.addf %x, %x : tensor<4xf32> loc(#loc10)\n"
	"    tt.return loc(#loc11)\n"
	"  } loc(#loc)\n"
	"} loc(#loc)\n"
	"#loc2 = loc(\"/cache/twin_add.py\":11:24)\n"
	"#loc3 = loc(\"/cache/twin_add.py\":12:20)\n"
	"#loc4 = loc(\"/cache/twin_add.py\":12:8)\n"
	"#loc5 = loc(\"/site/flagprism/_records.py\":300:8)\n"
	"#loc6 = loc(\"/cache/twin_add.py\":12:40)\n"
	"#loc7 = loc(callsite(#loc5 at #loc6))\n"
	"#loc12 = loc(\"/triton/language/standard.py\":180:11)\n"
	"#loc8 = loc(callsite(#loc12 at #loc6))\n"
	"#loc9 = loc(callsite(#loc12 at #loc6))\n"
	"#loc10 = loc(\"/cache/twin_add.py\":14:8)\n"
	"#loc11 = loc(\"/cache/twin_add.py\":16:4)\n";

TEST(debug_report_op_log)
{
	struct dbgb b;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *root;
	struct fp_strbuf lj;
	struct fp_diag d;
	char *text;
	const char *p;
	int64_t i64 = 0;

	make_tmpdir();
	fixture(&b, false, 0);
	fp_strbuf_init(&lj, 0);
	ASSERT_OK(
		fp_strbuf_addf(&lj,
			       "{\"output_dir\":\"%s\",\"grid\":[3],\"source_file\":\"/u/add.py\","
			       "\"twin_file\":\"/cache/twin_add.py\",\"ttir\":\"",
			       tmpdir));
	for (p = TTIR; *p; p++) { /* JSON-escape the TTIR */
		if (*p == '"' || *p == '\\')
			fp_strbuf_addch(&lj, '\\');
		if (*p == '\n')
			fp_strbuf_addstr(&lj, "\\n");
		else
			fp_strbuf_addch(&lj, *p);
	}
	fp_strbuf_addstr(&lj, "\"}");
	ASSERT_OK(write_reports(&b, SITES1, lj.buf, &out, &d));
	fp_strbuf_release(&lj);
	text = slurp(out.op_log_txt);
	expect_text(text, "twin:    /cache/twin_add.py");
	expect_text(text, "6 user ops listed below, 4 instrumentation ops");
	expect_text(text, "12:8       L12    tt.load  %x: tensor<4xf32>\n");
	expect_text(text, "14:8       L14    arith.addf");
	expect_text(text, "outside observed statements: 2 user ops, 0 instrumentation\n");
	expect_text(text, "ops: 3 user, 4 instrumentation\n");
	expect_text(text, "records: 6 (site 1 load x_ptr + offs: 3; site 2 value x: 3)\n");
	ASSERT_NULL(strstr(text, "tt.reduce"));
	ASSERT_NULL(strstr(text, "op log unavailable"));
	fp_free(text);
	ASSERT_OK(fp_json_parse_file(out.op_log_json, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT(fp_json_type(path(root, "available")) == FP_JSON_TRUE);
	ASSERT_EQ(jint(root, "op_count"), 10);
	ASSERT_EQ(jint(root, "instrumentation_op_count"), 4);
	ASSERT_STREQ(jstr(root, "ops.3.op"), "tt.load");
	ASSERT_STREQ(jstr(root, "ops.3.loc.file"), "/u/add.py");
	ASSERT_EQ(jint(root, "ops.3.loc.line"), 12);
	ASSERT_EQ(jint(root, "ops.3.statement.line"), 12);
	ASSERT_EQ(jint(root, "ops.3.sites.1.records"), 3);
	ASSERT_EQ(jint(root, "ops.3.results.0.shape.0"), 4);
	ASSERT_STREQ(jstr(root, "ops.3.results.0.elem"), "f32");
	ASSERT_EQ(jint(root, "instrumentation.0.statement_line"), 12);
	ASSERT(fp_json_int64(fp_json_get(path(root, "instrumentation.0.ops"), "tt.reduce"), &i64));
	ASSERT_EQ(i64, 1);
	ASSERT_EQ(jint(root, "statements.0.user_ops.2"), 3);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_report_oom)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_outputs out;
	struct fp_diag d;
	const char *lj;
	long fail_at;
	int st = -1;

	make_tmpdir();
	/* with a check area and two findings (the loaded NaN, a store out of bounds), so that the
	 * finding writers of both reports fail too */
	dbgb_fixture_checks(&b, true, 64);
	dbgb_fire(&b, 3, 2, 3, 1, 2, DBGB_Y + 48, DBGB_Y + 48, DBGB_Y + 52, 0);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS),
				&run, NULL));
	lj = launch(", \"export_raw_records\": true");
	for (fail_at = 0; fail_at < 5000; fail_at++) {
		fp_dbg_outputs_init(&out);
		fpt_oom_install(fail_at);
		st = fp_dbg_write_reports(run, lj, strlen(lj), &out, &d);
		fp_dbg_outputs_release(&out);
		if (fpt_oom_live() != 0)
			fprintf(stderr, "leak at fail_at %ld: %s\n", fail_at, d.msg);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (!st)
			break;
		if (st != FP_ENOMEM)
			fprintf(stderr, "fail_at %ld: %d %s\n", fail_at, st, d.msg);
		ASSERT_EQ(st, FP_ENOMEM);
	}
	ASSERT_OK(st);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/* Edge values for the number formatter: exponent boundaries of %g, powers of ten, extremes. */
static const double fmt_edges[] = {
	1e15,
	1e16,
	1e17,
	9.999999999999999e14,
	1e-4,
	1e-5,
	9.9999e-5,
	0.1,
	0.3,
	1.0 / 3,
	2.0 / 3,
	123456.5,
	999999.5,
	9999995,
	1e21,
	1e22,
	1e23,
	1.7976931348623157e308,
	2.2250738585072014e-308,
	5e-324,
	1e-310,
	0.5,
	1.5,
	-0.0,
	0.0,
	4.35,
	2.675,
	1e300,
	1.23e-300,
	5e-5,
	-7.5e-7,
	65504.0,
	1.0000005,
	100000.5,
	1e6,
	999999.0,
	0.000123456789,
	1e100,
	3e-7,
	12345678901234567.0,
};

static uint64_t fmt_rng = 0x2545f4914f6cdd1du;

static uint64_t fmt_next(void)
{
	fmt_rng ^= fmt_rng << 13;
	fmt_rng ^= fmt_rng >> 7;
	fmt_rng ^= fmt_rng << 17;
	return fmt_rng;
}

static void fmt_check(double v)
{
	char a[64], b[64];
	int na, nb;

	if (isfinite(v)) {
		na = fp__dbg_fmt_json(v, a, sizeof(a));
		nb = fp_json_format_double(v, b, sizeof(b));
		if (na != nb || strcmp(a, b))
			fprintf(stderr, "json %.17g: fast \"%s\" slow \"%s\"\n", v, a, b);
		ASSERT_EQ(na, nb);
		ASSERT_STREQ(a, b);
	}
	na = fp__dbg_fmt_g6(v, a, sizeof(a));
	nb = snprintf(b, sizeof(b), "%.6g", v);
	if (na != nb || strcmp(a, b))
		fprintf(stderr, "g6 %.17g: fast \"%s\" slow \"%s\"\n", v, a, b);
	ASSERT_EQ(na, nb);
	ASSERT_STREQ(a, b);
}

/* The fast formatters of report-num.c give exactly the slow paths' text. */
TEST(debug_report_number_format)
{
	size_t i;

	for (i = 0; i < sizeof(fmt_edges) / sizeof(fmt_edges[0]); i++) {
		fmt_check(fmt_edges[i]);
		fmt_check(-fmt_edges[i]);
		fmt_check(nextafter(fmt_edges[i], 0));
		fmt_check(nextafter(fmt_edges[i], INFINITY));
	}
	fmt_check(NAN);
	fmt_check(INFINITY);
	for (i = 0; i < 300000; i++) {
		uint64_t u = fmt_next();
		double v;

		switch (i % 5) {
		case 0: /* any bit pattern */
			memcpy(&v, &u, sizeof(v));
			break;
		case 1: /* float32 values, as min/max of float32 tensors are */
			v = (double)(float)((double)(u >> 11) / 9007199254740992.0 * 8 - 4);
			break;
		case 2: /* sums and means */
			v = (double)(u >> 11) / 9007199254740992.0 * 2e6 - 1e6;
			break;
		case 3: /* few significant digits */
			v = (double)(int64_t)(u % 2000001 - 1000000) / 1000.0;
			break;
		default: /* wide exponents */
			v = ldexp((double)(u >> 11), (int)(u % 1800) - 1000);
			break;
		}
		fmt_check(v);
	}
}
