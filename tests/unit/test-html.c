/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the HTML report (include/flagprism/html.h): the JSON escaping for script
 * elements, the page template and assets, the Debugger's aggregation (per-cell heatmaps, binning,
 * per-execution series, argument matching, findings, errors with positions, rollback on
 * failure, directories and summaries, level-2 dump histograms), the profile's rows (cut to the
 * heaviest, kinds, comparison), the trace's timeline, the .npy reader, and OOM sweeps. */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/calltree.h>
#include <flagprism/html.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "core/npy-internal.h"
#include "html/html-internal.h"
#include "test-tree.h"
#include "test.h"

/* ---- helpers ------------------------------------------------------------------------------ */

#define INJECT "</script><img src=x onerror=alert(1)>"

/* A 4x2 grid; site 2 (x, in a loop: program 0 runs twice), site 1 (a load of x_ptr). */
static const char REPORT[] =
	"{\"schema_version\":1,\"kernel\":{\"name\":\"k" INJECT "\",\"grid\":[4,2],"
	"\"programs\":8,\"backend\":\"interpreter\",\"source_file\":\"/nonexistent/k.py\"},"
	"\"config\":{\"level\":1,\"addr_level\":1,\"sanitize\":false},\"complete\":true,"
	"\"args\":[{\"name\":\"x_ptr\",\"element_size\":4,"
	"\"view\":{\"start\":1000,\"end\":1400,\"bytes\":400},\"storage\":null}],"
	"\"statements\":[{\"id\":0,\"line\":3,\"col\":4,\"end_line\":3,\"loop_depth\":1,"
	"\"source\":\"x = tl.load(x_ptr + offs)  # " INJECT "\",\"reads\":[],"
	"\"results\":[{\"site\":2,\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[4],"
	"\"instance_count\":3,\"instances\":["
	"{\"program\":[0,0,0],\"execution\":0,\"summary\":{\"element_count\":4,\"nan_count\":1,"
	"\"inf_count\":0,\"zero_count\":0,\"mean\":2.0,\"min\":1.0,\"max\":3.0}},"
	"{\"program\":[0,0,0],\"execution\":1,\"summary\":{\"element_count\":4,\"nan_count\":0,"
	"\"inf_count\":0,\"zero_count\":0,\"mean\":4.0,\"min\":4.0,\"max\":4.0}},"
	"{\"program\":[3,1,0],\"execution\":0,\"summary\":{\"element_count\":4,\"nan_count\":0,"
	"\"inf_count\":0,\"zero_count\":1,\"mean\":2.0,\"min\":-1.0,\"max\":5.0}}]}],"
	"\"memory\":[{\"site\":1,\"access\":\"load\",\"name\":\"x_ptr + offs\",\"dtype\":\"float32\","
	"\"shape\":[4],\"instance_count\":2,\"instances\":["
	"{\"program\":[0,0,0],\"execution\":0,\"address_summary\":{\"first_addr\":1000,"
	"\"last_addr\":1012,\"min_addr\":1000,\"max_addr\":1012,\"active_lane_count\":4,"
	"\"lane_count\":4,\"address_span_bytes\":16,\"status\":\"complete\"}},"
	"{\"program\":[3,1,0],\"execution\":0,\"address_summary\":{\"first_addr\":1396,"
	"\"last_addr\":1408,\"min_addr\":1396,\"max_addr\":1408,\"active_lane_count\":3,"
	"\"lane_count\":4,\"address_span_bytes\":16,\"status\":\"complete\"}}]}]}],"
	"\"findings\":[{\"kind\":\"out_of_bounds\",\"statement\":\"x = tl.load(x_ptr + offs)\","
	"\"statement_id\":0,\"line\":3,\"site\":1,\"subject\":\"x_ptr + offs\",\"param\":\"x_ptr\","
	"\"program\":[3,1,0],\"execution\":0,\"program_count\":1,\"instance_count\":1,"
	"\"message\":\"reads past the end " INJECT "\"}]}";

static struct fp_html_page *page_new(enum fp_html_kind kind, size_t max_cells, size_t max_nodes)
{
	struct fp_html_options o;
	struct fp_html_page *p = NULL;

	fp_html_options_init(&o);
	o.max_cells = max_cells;
	o.max_nodes = max_nodes;
	ASSERT_OK(fp_html_page_new(kind, &o, &p));
	return p;
}

/* The whole page as text (malloc'd). */
static char *page_text(const struct fp_html_page *p, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_html_page_write(p, f));
	ASSERT_EQ(fclose(f), 0);
	if (len)
		*len = n;
	return buf;
}

/* The JSON of the script element with id `id`, parsed. */
static struct fp_json_doc *block_doc(const char *page, const char *id)
{
	char open[64];
	const char *s, *e;
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;

	snprintf(open, sizeof(open), "id=\"%s\">", id);
	s = strstr(page, open);
	ASSERT_NOT_NULL(s);
	s += strlen(open);
	e = strstr(s, "</script>");
	ASSERT_NOT_NULL(e);
	memset(&d, 0, sizeof(d));
	if (fp_json_parse(s, (size_t)(e - s), NULL, &doc, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "block %s: %s", id, d.msg);
	return doc;
}

static const struct fp_json_value *at(const struct fp_json_value *v, const char *k)
{
	const struct fp_json_value *x = fp_json_get(v, k);

	if (!x)
		fpt_fail(__FILE__, __LINE__, "no member '%s'", k);
	return x;
}

static double num(const struct fp_json_value *v)
{
	double d = NAN;

	if (fp_json_type(v) != FP_JSON_NULL && !fp_json_number(v, &d))
		fpt_fail(__FILE__, __LINE__, "not a number");
	return d;
}

static double num_at(const struct fp_json_value *arr, size_t i)
{
	return num(fp_json_at(arr, i));
}

/* The block of the first site of the first statement whose kind is `kind`. */
static const struct fp_json_value *site_of(const struct fp_json_value *launch, const char *kind)
{
	const struct fp_json_value *sites = at(fp_json_at(at(launch, "statements"), 0), "sites");
	size_t i;

	for (i = 0; i < fp_json_len(sites); i++)
		if (strcmp(fp_json_string(at(fp_json_at(sites, i), "kind"), NULL), kind) == 0)
			return fp_json_at(sites, i);
	fpt_fail(__FILE__, __LINE__, "no %s site", kind);
	return NULL;
}

/* ---- escaping and assets -------------------------------------------------------------------- */

TEST(html_escape_json)
{
	struct fp_strbuf sb;
	static const char in[] = "{\"a\":\"</script>&\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xa7\"}";

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_html_escape_json(&sb, in, strlen(in)));
	ASSERT_STREQ(sb.buf, "{\"a\":\"\\u003c/script\\u003e\\u0026\\u2028\\u2029\xe2\x80\xa7\"}");
	fp_strbuf_release(&sb);
	ASSERT_EQ(fp_html_escape_json(&sb, NULL, 1), FP_EINVAL);
}

TEST(html_assets_are_whole)
{
	const char *html = (const char *)fp__html_page_html, *js = (const char *)fp__html_page_js;
	const char *css = (const char *)fp__html_page_css;

	ASSERT_EQ(strlen(html), fp__html_page_html_len);
	ASSERT_EQ(strlen(js), fp__html_page_js_len);
	ASSERT_EQ(strlen(css), fp__html_page_css_len);
	/* the markers, in order, once each */
	ASSERT_NOT_NULL(strstr(html, FP__HTML_MARK_CSP));
	ASSERT(strstr(html, FP__HTML_MARK_CSP) < strstr(html, FP__HTML_MARK_STYLE));
	ASSERT(strstr(html, FP__HTML_MARK_STYLE) < strstr(html, FP__HTML_MARK_DATA));
	ASSERT(strstr(html, FP__HTML_MARK_DATA) < strstr(html, FP__HTML_MARK_SCRIPT));
	/* the script and the style cannot end their elements early */
	ASSERT_NULL(strcasestr(js, "</script"));
	ASSERT_NULL(strcasestr(js, "<!--"));
	ASSERT_NULL(strcasestr(css, "</style"));
	/* the script is the whole of its element, so its hash names it in the policy */
	ASSERT_NOT_NULL(strstr(html, "<script>" FP__HTML_MARK_SCRIPT "</script>"));
	ASSERT_EQ(strlen(fp__html_page_js_sha256), 64);
	ASSERT_NULL(strchr(js, '\r'));
	/* the page fetches nothing: a policy forbids it, and the script never asks */
	ASSERT_NOT_NULL(strstr(html, "default-src 'none'"));
	ASSERT_NULL(strstr(html, "script-src 'unsafe-inline'"));
	ASSERT_NULL(strstr(js, "fetch("));
	ASSERT_NULL(strstr(js, "XMLHttpRequest"));
	ASSERT_NULL(strstr(js, "innerHTML"));
	ASSERT_NULL(strstr(js, "outerHTML"));
	ASSERT_NULL(strstr(js, "insertAdjacentHTML"));
	ASSERT_NULL(strstr(js, "document.write"));
	ASSERT_NULL(strstr(css, "url("));
	ASSERT_NULL(strstr(css, "@import"));
}

/* ---- Debugger ------------------------------------------------------------------------------- */

TEST(html_debug_report_aggregates)
{
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	const struct fp_json_value *main, *launch, *x, *ld, *hb, *c, *ser, *f;
	struct fp_json_doc *md, *ldoc, *xdoc, *adoc;
	struct fp_html_stats st;
	struct fp_diag d;
	char *page;

	memset(&d, 0, sizeof(d));
	ASSERT_OK(fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, &d));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.launches, 1);
	ASSERT_EQ(st.statements, 1);
	ASSERT_EQ(st.sites, 2);
	ASSERT_EQ(st.findings, 1);
	page = page_text(p, NULL);
	/* only the page's own script may run: it is named by its hash */
	ASSERT_NOT_NULL(strstr(page, "script-src 'sha256-"));
	ASSERT_NULL(strstr(page, "/*fp:"));
	/* injected names never reach the document as markup */
	ASSERT_NULL(strstr(page, "<img"));
	ASSERT_NOT_NULL(
		strstr(page, "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"));

	md = block_doc(page, "fp-data");
	main = fp_json_root(md);
	ASSERT_STREQ(fp_json_string(at(main, "kind"), NULL), "debugger");
	ASSERT_STREQ(fp_json_string(at(main, "title"), NULL), "k" INJECT ": FlagPrism Debugger");
	f = fp_json_at(at(main, "findings"), 0);
	ASSERT_STREQ(fp_json_string(at(f, "kind"), NULL), "out_of_bounds");
	ASSERT_EQ(num(at(f, "launch")), 0);
	/* no source file: the statement's own text stands for the line */
	ASSERT_STREQ(fp_json_string(at(f, "source_line"), NULL), "x = tl.load(x_ptr + offs)");
	ldoc = block_doc(page,
			 fp_json_string(at(fp_json_at(at(main, "launches"), 0), "block"), NULL));
	launch = fp_json_root(ldoc);
	ASSERT_EQ(num(at(at(launch, "cells"), "nx")), 4);
	ASSERT_EQ(num(at(at(launch, "cells"), "ny")), 2);
	ASSERT_EQ(num(at(at(launch, "cells"), "bx")), 1);
	ASSERT_EQ(fp_json_type(at(at(launch, "source"), "available")), FP_JSON_FALSE);
	ASSERT_EQ(num_at(at(fp_json_at(at(launch, "statements"), 0), "findings"), 0), 0);

	x = site_of(launch, "value");
	ASSERT_EQ(num(at(at(x, "agg"), "elements")), 12);
	ASSERT_EQ(num(at(at(x, "agg"), "nan")), 1);
	ASSERT_EQ(num(at(at(x, "agg"), "min")), -1);
	ASSERT_EQ(num(at(at(x, "agg"), "max")), 5);
	/* mean over finite elements: (2*3 + 4*4 + 2*4) / 11 */
	ASSERT_NEAR(num(at(at(x, "agg"), "mean")), 30.0 / 11, 1e-12);
	ASSERT_EQ(num(at(x, "executions")), 2);
	ASSERT_EQ(num(at(x, "series")), 2);
	xdoc = block_doc(page, fp_json_string(at(x, "block"), NULL));
	hb = fp_json_root(xdoc);
	c = at(hb, "cells");
	ASSERT_EQ(fp_json_len(at(c, "count")), 8);
	ASSERT_EQ(num_at(at(c, "count"), 0), 2); /* program (0,0): two executions */
	ASSERT_EQ(num_at(at(c, "count"), 7), 1); /* program (3,1) */
	ASSERT_EQ(num_at(at(c, "count"), 1), 0);
	ASSERT(isnan(num_at(at(c, "min"), 1))); /* no instance: null */
	ASSERT_EQ(num_at(at(c, "min"), 0), 1);
	ASSERT_EQ(num_at(at(c, "max"), 0), 4);
	ASSERT_NEAR(num_at(at(c, "mean"), 0), 22.0 / 7, 1e-5);
	ASSERT_EQ(num_at(at(c, "nan"), 0), 1);
	ASSERT_EQ(num_at(at(c, "zero"), 7), 1);
	ser = at(hb, "series");
	ASSERT_EQ(num_at(at(ser, "count"), 0), 2);
	ASSERT_EQ(num_at(at(ser, "count"), 1), 1);
	ASSERT_EQ(num_at(at(ser, "min"), 0), -1);
	ASSERT_EQ(num_at(at(ser, "max"), 1), 4);

	ld = site_of(launch, "load");
	ASSERT_STREQ(fp_json_string(at(ld, "param"), NULL), "x_ptr");
	ASSERT_STREQ(fp_json_string(at(ld, "param_how"), NULL), "finding");
	ASSERT_EQ(num(at(at(ld, "agg"), "lo")), 1000);
	ASSERT_EQ(num(at(at(ld, "agg"), "hi")), 1408);
	ASSERT_EQ(num(at(at(ld, "agg"), "active")), 7);
	ASSERT_EQ(num(at(at(ld, "agg"), "element_size")), 4);
	ASSERT_EQ(num(at(ld, "series")), 0);
	adoc = block_doc(page, fp_json_string(at(ld, "block"), NULL));
	c = at(at(fp_json_root(adoc), "cells"), "hi");
	ASSERT_EQ(num_at(c, 7), 1408);
	ASSERT_EQ(fp_json_type(at(fp_json_root(adoc), "series")), FP_JSON_NULL);
	ASSERT_STREQ(fp_json_string(at(fp_json_at(at(launch, "args"), 0), "name"), NULL), "x_ptr");

	fp_json_doc_free(adoc);
	fp_json_doc_free(xdoc);
	fp_json_doc_free(ldoc);
	fp_json_doc_free(md);
	free(page);
	fp_html_page_free(p);
}

TEST(html_debug_bins_large_grids)
{
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 2, 0);
	struct fp_json_doc *md, *ld, *xd;
	const struct fp_json_value *launch, *c;
	char *page;

	ASSERT_OK(fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, NULL));
	ASSERT_EQ(fp_html_page_note_count(p), 1);
	ASSERT_NOT_NULL(strstr(fp_html_page_note_at(p, 0), "aggregates 2x2 programs"));
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	ld = block_doc(
		page,
		fp_json_string(at(fp_json_at(at(fp_json_root(md), "launches"), 0), "block"), NULL));
	launch = fp_json_root(ld);
	/* 4x2 programs in at most 2 cells: square bins of 2x2 */
	ASSERT_EQ(num(at(at(launch, "cells"), "nx")), 2);
	ASSERT_EQ(num(at(at(launch, "cells"), "ny")), 1);
	ASSERT_EQ(num(at(at(launch, "cells"), "bx")), 2);
	ASSERT_EQ(num(at(at(launch, "cells"), "by")), 2);
	xd = block_doc(page, fp_json_string(at(site_of(launch, "value"), "block"), NULL));
	c = at(fp_json_root(xd), "cells");
	ASSERT_EQ(fp_json_len(at(c, "count")), 2);
	ASSERT_EQ(num_at(at(c, "count"), 0), 2); /* x 0-1: program (0,0) twice */
	ASSERT_EQ(num_at(at(c, "count"), 1), 1); /* x 2-3: program (3,1) */
	ASSERT_EQ(num_at(at(c, "max"), 1), 5);
	fp_json_doc_free(xd);
	fp_json_doc_free(ld);
	fp_json_doc_free(md);
	free(page);
	fp_html_page_free(p);
}

TEST(html_debug_bins_huge_grids_quickly)
{
	/* a 2-D grid of 2^32-1 x 2^32-1 programs (no instance): bins found without stepping */
	static const char huge[] =
		"{\"schema_version\":1,\"kernel\":{\"name\":\"k\",\"grid\":[4294967295,4294967295,"
		"3]},\"statements\":[],\"findings\":[]}";
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	struct fp_json_doc *md, *ld;
	const struct fp_json_value *cells;
	char *page;

	ASSERT_OK(fp_html_debug_add_report(p, huge, strlen(huge), NULL, NULL));
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	ld = block_doc(
		page,
		fp_json_string(at(fp_json_at(at(fp_json_root(md), "launches"), 0), "block"), NULL));
	cells = at(fp_json_root(ld), "cells");
	ASSERT_LE(num(at(cells, "nx")) * num(at(cells, "ny")), FP_HTML_DEFAULT_MAX_CELLS);
	ASSERT_GE(num(at(cells, "nx")) * num(at(cells, "ny")), FP_HTML_DEFAULT_MAX_CELLS / 2);
	fp_json_doc_free(ld);
	fp_json_doc_free(md);
	free(page);
	fp_html_page_free(p);
}

/* `text` with the first `from` replaced by `to` (malloc'd). */
static char *patched(const char *text, const char *from, const char *to)
{
	const char *at_ = strstr(text, from);
	char *out;

	ASSERT_NOT_NULL(at_);
	out = malloc(strlen(text) + strlen(to) + 1);
	ASSERT_NOT_NULL(out);
	memcpy(out, text, (size_t)(at_ - text));
	strcpy(out + (at_ - text), to);
	strcat(out, at_ + strlen(from));
	return out;
}

static void expect_bad(const char *from, const char *to, int status, const char *msg)
{
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	char *text = patched(REPORT, from, to);
	struct fp_html_stats st;
	struct fp_diag d;
	FILE *f;

	memset(&d, 0, sizeof(d));
	ASSERT_EQ(fp_html_debug_add_report(p, text, strlen(text), "r.json", &d), status);
	if (!strstr(d.msg, msg))
		fpt_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", d.msg, msg);
	ASSERT_EQ(strncmp(d.msg, "r.json:", 7), 0);
	if (status == FP_EFORMAT)
		ASSERT_GT(d.line, 0);
	/* nothing of the failed report stays in the page */
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.launches, 0);
	ASSERT_EQ(st.findings, 0);
	ASSERT_EQ(fp_html_page_note_count(p), 0);
	f = fopen("/dev/null", "w");
	ASSERT_EQ(fp_html_page_write(p, f), FP_EINVAL);
	fclose(f);
	free(text);
	fp_html_page_free(p);
}

TEST(html_debug_rejects_bad_reports)
{
	expect_bad(
		"\"program\":[3,1,0],\"execution\":0,\"summary\"",
		"\"program\":[4,1,0],\"execution\":0,\"summary\"", FP_EFORMAT,
		"statements[0].results[0].instances[2]: program id 0 is not an integer in [0, 4)");
	expect_bad("\"nan_count\":1,", "\"nan_count\":9,", FP_EFORMAT,
		   "statements[0].results[0].instances[0]: 'summary' needs");
	expect_bad("\"min_addr\":1396", "\"min_addr\":null", FP_EFORMAT,
		   "statements[0].memory[0].instances[1]: 'address_summary' needs");
	expect_bad("\"schema_version\":1", "\"schema_version\":2", FP_EVERSION,
		   "schema_version 2 is not supported");
	expect_bad("\"grid\":[4,2]", "\"grid\":[4,0]", FP_EFORMAT, "kernel.grid[1]");
	expect_bad("\"statements\":[", "\"statement\":[", FP_EFORMAT, "no 'statements' array");
	expect_bad("\"execution\":1,", "\"execution\":-1,", FP_EFORMAT, "'execution'");
	expect_bad("\"message\":\"reads", "\"mess\":\"reads", FP_EFORMAT,
		   "findings[0]: needs strings 'kind' and 'message'");
	expect_bad("\"view\":{\"start\":1000", "\"view\":{\"start\":2000", FP_EFORMAT,
		   "args[0]: 'view' needs");
	expect_bad("{\"schema_version\"", "[{\"schema_version\"", FP_EFORMAT, "");
}

TEST(html_debug_keeps_earlier_launches)
{
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	char *bad = patched(REPORT, "[4,2]", "[4,\"x\"]");
	struct fp_html_stats st;

	ASSERT_OK(fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, NULL));
	ASSERT_EQ(fp_html_debug_add_report(p, bad, strlen(bad), NULL, NULL), FP_EFORMAT);
	ASSERT_OK(fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, NULL));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.launches, 2);
	ASSERT_EQ(st.findings, 2);
	ASSERT_EQ(st.findings_total, 2);
	free(bad);
	fp_html_page_free(p);
}

TEST(html_debug_caps_findings)
{
	struct fp_html_options o;
	struct fp_html_page *p = NULL;
	struct fp_html_stats st;
	struct fp_json_doc *md;
	char *page;

	fp_html_options_init(&o);
	o.max_findings = 1;
	ASSERT_OK(fp_html_page_new(FP_HTML_DEBUGGER, &o, &p));
	ASSERT_OK(fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, NULL));
	ASSERT_OK(fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, NULL));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.findings, 1);
	ASSERT_EQ(st.findings_total, 2);
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	ASSERT_EQ(fp_json_len(at(fp_json_root(md), "findings")), 1);
	ASSERT_EQ(num(at(fp_json_root(md), "findings_total")), 2);
	fp_json_doc_free(md);
	free(page);
	fp_html_page_free(p);
}

/* dir/name in a static buffer (one at a time). */
static const char *path_in(const char *dir, const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ASSERT_NOT_NULL(f);
	fputs(text, f);
	ASSERT_EQ(fclose(f), 0);
}

static void rm_tree(const char *dir)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}

TEST(html_debug_reads_directories)
{
	char dir[] = "/tmp/fp-html-test-XXXXXX";
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	struct fp_html_stats st;
	struct fp_diag d;
	size_t i;
	bool skipped = false;

	ASSERT_NOT_NULL(mkdtemp(dir));
	memset(&d, 0, sizeof(d));
	ASSERT_EQ(fp_html_debug_read(p, dir, &d), FP_ENOENT);
	ASSERT_NOT_NULL(strstr(d.msg, "no Debugger report"));
	write_file(dir, "s_k_1_run0.json", REPORT);
	write_file(dir, "s_k_1_run1.json", REPORT);
	write_file(dir, "s_k_1_run0_op_log.json", "{\"schema_version\":1}");
	write_file(dir, "other.json", "{\"hello\":1}");
	write_file(dir, "notes.txt", "not json");
	ASSERT_OK(fp_html_debug_read(p, dir, &d));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.launches, 2);
	for (i = 0; i < fp_html_page_note_count(p); i++)
		skipped |= strstr(fp_html_page_note_at(p, i),
				  "other.json: not a Debugger report") != NULL;
	ASSERT(skipped);
	fp_html_page_free(p);

	/* a summary.json: its content is kept as is, the reports beside it are the launches */
	p = page_new(FP_HTML_DEBUGGER, 0, 0);
	write_file(
		dir, "summary.json",
		"{\"schema\":\"flagprism.debug.summary\",\"version\":1,\"kernels\":[{\"name\":\"k\","
		"\"launches\":3,\"instrumented\":2,\"not_instrumented\":[{\"status\":\"excluded\","
		"\"reason\":\"no markers\",\"launches\":1}]}],\"findings\":[]}");
	memset(&d, 0, sizeof(d));
	ASSERT_OK(fp_html_debug_read(p, path_in(dir, "summary.json"), &d));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.launches, 2);
	fp_html_page_free(p);

	/* a report that does not parse is an error naming the file and the place */
	p = page_new(FP_HTML_DEBUGGER, 0, 0);
	write_file(dir, "s_k_1_run2.json", "{\"schema_version\":1,\n \"statements\": [}");
	ASSERT_EQ(fp_html_debug_read(p, path_in(dir, "s_k_1_run2.json"), &d), FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "s_k_1_run2.json:2:"));
	fp_html_page_free(p);
	rm_tree(dir);
}

TEST(html_debug_histograms_dumps)
{
	char dir[] = "/tmp/fp-html-test-XXXXXX", adir[256], path[512];
	static const float v[6] = {0.0f, 1.0f, 2.0f, 3.0f, NAN, INFINITY};
	uint64_t shape[1] = {6};
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	struct fp_json_doc *md, *ld;
	const struct fp_json_value *dumps, *d0, *bins;
	char *report, *page;
	double sum = 0;
	size_t i;

	ASSERT_NOT_NULL(mkdtemp(dir));
	snprintf(adir, sizeof(adir), "%s/r_artifacts", dir);
	ASSERT_EQ(mkdir(adir, 0777), 0);
	snprintf(path, sizeof(path), "%s/site2_v.npy", adir);
	ASSERT_OK(fp_npy_write_file(path, FP_DTYPE_FLOAT32, shape, 1, v, sizeof(v), NULL));
	write_file(adir, "bad.npy", "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'}");
	write_file(
		adir, "tensor_index.json",
		"{\"artifacts\":[{\"file\":\"site2_v.npy\",\"site\":2,\"statement_line\":3,"
		"\"name\":\"x\",\"kind\":\"value\",\"program\":[0,0,0],\"execution\":0,"
		"\"dtype\":\"float32\"},{\"file\":\"m.npy\",\"kind\":\"mask\"},"
		"{\"file\":\"bad.npy\",\"kind\":\"value\"},{\"file\":\"../x.npy\",\"kind\":\"value\"}]}");
	report = patched(
		REPORT, "\"complete\":true,",
		"\"complete\":true,\"artifacts\":{\"written\":true,\"dir\":\"r_artifacts\"},");
	write_file(dir, "r.json", report);
	snprintf(path, sizeof(path), "%s/r.json", dir);
	ASSERT_OK(fp_html_debug_read(p, path, NULL));
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	ld = block_doc(
		page,
		fp_json_string(at(fp_json_at(at(fp_json_root(md), "launches"), 0), "block"), NULL));
	dumps = at(fp_json_root(ld), "dumps");
	ASSERT_EQ(fp_json_len(dumps), 3); /* the mask is not a histogram of its own */
	d0 = fp_json_at(dumps, 0);
	ASSERT_EQ(num(at(d0, "n")), 6);
	ASSERT_EQ(num(at(d0, "nan")), 1);
	ASSERT_EQ(num(at(d0, "inf")), 1);
	ASSERT_EQ(num(at(d0, "lo")), 0);
	ASSERT_EQ(num(at(d0, "hi")), 3);
	bins = at(d0, "bins");
	ASSERT_EQ(fp_json_len(bins), FP_HTML_HIST_BINS);
	for (i = 0; i < fp_json_len(bins); i++)
		sum += num_at(bins, i);
	ASSERT_EQ(sum, 4);
	ASSERT_EQ(num_at(bins, FP_HTML_HIST_BINS - 1), 1);
	ASSERT_NOT_NULL(fp_json_string(at(fp_json_at(dumps, 1), "error"), NULL));
	ASSERT_NOT_NULL(strstr(fp_json_string(at(fp_json_at(dumps, 2), "error"), NULL),
			       "no plain file name"));
	fp_json_doc_free(ld);
	fp_json_doc_free(md);
	free(page);
	free(report);
	fp_html_page_free(p);
	rm_tree(dir);
}

TEST(html_debug_shows_source)
{
	char dir[] = "/tmp/fp-html-test-XXXXXX", path[512];
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	struct fp_json_doc *md, *ld;
	const struct fp_json_value *src, *f;
	char *report, *page;

	ASSERT_NOT_NULL(mkdtemp(dir));
	write_file(dir, "k.py",
		   "import triton\n@triton.jit\ndef k" INJECT "(x_ptr):\n    x = tl.load(x_ptr + "
		   "offs)\n\n    return\ndef other():\n    pass\n");
	/* the statement is on line 4 of k.py */
	report = patched(REPORT, "\"line\":3,\"col\":4,\"end_line\":3",
			 "\"line\":4,\"col\":4,\"end_line\":4");
	{
		char *r2 = patched(report, "/nonexistent/k.py", "k.py");
		char *r3 = patched(r2, "\"statement_id\":0,\"line\":3",
				   "\"statement_id\":0,\"line\":4");

		free(report);
		free(r2);
		report = r3;
	}
	write_file(dir, "r.json", report);
	snprintf(path, sizeof(path), "%s/r.json", dir);
	ASSERT_OK(fp_html_debug_read(p, path, NULL));
	page = page_text(p, NULL);
	ASSERT_NULL(strstr(page, "<img"));
	md = block_doc(page, "fp-data");
	f = fp_json_at(at(fp_json_root(md), "findings"), 0);
	ASSERT_STREQ(fp_json_string(at(f, "source_line"), NULL), "x = tl.load(x_ptr + offs)");
	ld = block_doc(
		page,
		fp_json_string(at(fp_json_at(at(fp_json_root(md), "launches"), 0), "block"), NULL));
	src = at(fp_json_root(ld), "source");
	ASSERT_EQ(fp_json_type(at(src, "available")), FP_JSON_TRUE);
	/* from the decorator to the end of the body, without the trailing blank line */
	ASSERT_EQ(num(at(src, "first_line")), 2);
	ASSERT_EQ(fp_json_len(at(src, "lines")), 5);
	ASSERT_STREQ(fp_json_string(fp_json_at(at(src, "lines"), 4), NULL), "    return");
	fp_json_doc_free(ld);
	fp_json_doc_free(md);
	free(page);
	free(report);
	fp_html_page_free(p);

	/* without --no-source only .py files are read */
	p = page_new(FP_HTML_DEBUGGER, 0, 0);
	report = patched(REPORT, "/nonexistent/k.py", "/etc/passwd");
	ASSERT_OK(fp_html_debug_add_report(p, report, strlen(report), path, NULL));
	page = page_text(p, NULL);
	ASSERT_NULL(strstr(page, "root:"));
	ASSERT_NOT_NULL(strstr(page, "only .py files are read"));
	free(page);
	free(report);
	fp_html_page_free(p);
	rm_tree(dir);
}

TEST(html_debug_summary_must_be_object)
{
	struct fp_html_page *p = page_new(FP_HTML_DEBUGGER, 0, 0);
	struct fp_diag d;

	memset(&d, 0, sizeof(d));
	ASSERT_EQ(fp_html_debug_add_summary(p, "[1]", 3, "summary.json", &d), FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "summary.json:1:1: a run summary is a JSON object"));
	ASSERT_OK(fp_html_debug_add_summary(p, "{\"kernels\":[]}", 14, NULL, &d));
	fp_html_page_free(p);
}

/* ---- profiles -------------------------------------------------------------------------------- */

static void kernel(struct fp_calltree *t, uint32_t node, double ns)
{
	fpt_tree_add(t, node, "time (ns)", ns);
	fpt_tree_add(t, node, "count", 1);
	fpt_tree_str(t, node, "device_id", "0");
	fpt_tree_str(t, node, "device_type", "CPU");
}

/* ROOT / main.py:run@3 / step / kern (+ loads inside it), and n small kernels under step. */
static struct fp_calltree *sample_tree(size_t n, double scale)
{
	static const char *const k1[] = {"main.py:run@3", "step", "kern"};
	static const char *const k2[] = {"main.py:run@3", "step", "kern", "loads"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	char name[32];
	size_t i;

	ASSERT_NOT_NULL(t);
	kernel(t, fpt_tree_path(t, k1, 3), 1000 * scale);
	fpt_tree_add(t, fpt_tree_path(t, k2, 4), "scope_time (ns)(exc)", 400);
	for (i = 0; i < n; i++) {
		const char *p[3] = {"main.py:run@3", "step", name};

		snprintf(name, sizeof(name), "small_%03zu", i);
		kernel(t, fpt_tree_path(t, p, 3), 1 + (double)i);
	}
	return t;
}

TEST(html_profile_rows_and_kinds)
{
	struct fp_html_page *p = page_new(FP_HTML_PROFILE, 0, 0);
	struct fp_calltree *t = sample_tree(2, 1);
	struct fp_json_doc *md, *td;
	const struct fp_json_value *prof, *tree;
	struct fp_diag d;
	char *page;

	memset(&d, 0, sizeof(d));
	ASSERT_OK(fp_html_profile_set(p, t, "x.hatchet", NULL, NULL, NULL, NULL, &d));
	ASSERT_EQ(fp_html_profile_set(p, t, "x.hatchet", NULL, NULL, NULL, NULL, &d), FP_EINVAL);
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	prof = at(fp_json_root(md), "profile");
	ASSERT_EQ(num(at(prof, "rows")), 7);
	ASSERT_EQ(num(at(prof, "other_rows")), 0);
	ASSERT_STREQ(fp_json_string(at(fp_json_at(at(prof, "columns"), 0), "label"), NULL),
		     "time/ms");
	td = block_doc(page, fp_json_string(at(prof, "tree"), NULL));
	tree = fp_json_root(td);
	/* depth first, heaviest child first: ROOT, run, step, kern, loads, small_001, small_000 */
	ASSERT_STREQ(fp_json_string(at(tree, "kind"), NULL), "rpskikk");
	ASSERT_STREQ(fp_json_string(fp_json_at(at(tree, "name"), 5), NULL), "small_001");
	ASSERT_NEAR(num_at(fp_json_at(at(tree, "a"), 0), 0), (1000 + 1 + 2) * 1e-6, 1e-12);
	ASSERT_EQ(fp_json_type(at(tree, "b")), FP_JSON_NULL);
	ASSERT_EQ(fp_json_len(at(at(prof, "roofline"), "points")), 0);
	fp_json_doc_free(td);
	fp_json_doc_free(md);
	free(page);
	fp_calltree_free(t);
	fp_html_page_free(p);
}

TEST(html_profile_cuts_to_the_heaviest)
{
	struct fp_html_page *p = page_new(FP_HTML_PROFILE, 0, 6);
	struct fp_calltree *t = sample_tree(100, 1);
	struct fp_json_doc *md, *td;
	const struct fp_json_value *prof, *tree;
	struct fp_html_stats st;
	char *page;
	size_t n;

	ASSERT_OK(fp_html_profile_set(p, t, "x.hatchet", NULL, NULL, NULL, NULL, NULL));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.rows, 6);
	ASSERT_EQ(st.rows_total, 105);
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	prof = at(fp_json_root(md), "profile");
	td = block_doc(page, fp_json_string(at(prof, "tree"), NULL));
	tree = fp_json_root(td);
	n = (size_t)num(at(tree, "n"));
	/* ROOT run step kern small_099 small_098 are the heaviest; `loads` (no time) is cut under
	 * kern, small_000..097 under step, each cut summarised by one row */
	ASSERT_EQ(n, 8);
	ASSERT_STREQ(fp_json_string(at(tree, "kind"), NULL), "rpskokko");
	ASSERT_EQ(num_at(at(tree, "more"), 4), 1);
	ASSERT_EQ(num_at(at(tree, "depth"), 4), 4);
	ASSERT_EQ(num_at(at(tree, "more"), 7), 98);
	ASSERT_EQ(num_at(at(tree, "depth"), 7), 3);
	/* the cut row weighs what its rows weighed: 1 + 2 + ... + 98 ns */
	ASSERT_NEAR(num_at(fp_json_at(at(tree, "a"), 0), 7), 4851 * 1e-6, 1e-9);
	ASSERT_EQ(num(at(prof, "other_rows")), 2);
	ASSERT(fp_html_page_note_count(p) >= 1);
	fp_json_doc_free(td);
	fp_json_doc_free(md);
	free(page);
	fp_calltree_free(t);
	fp_html_page_free(p);
}

TEST(html_profile_compares)
{
	struct fp_html_page *p = page_new(FP_HTML_PROFILE, 0, 0);
	struct fp_calltree *a = sample_tree(1, 1), *b = sample_tree(2, 2);
	struct fp_json_doc *md, *td;
	const struct fp_json_value *prof, *tree, *cola, *colb;
	char *page;
	size_t i, n;
	bool found = false;

	ASSERT_OK(fp_html_profile_set(p, a, "a.hatchet", NULL, b, "b.hatchet", NULL, NULL));
	page = page_text(p, NULL);
	md = block_doc(page, "fp-data");
	prof = at(fp_json_root(md), "profile");
	ASSERT_EQ(fp_json_type(at(prof, "diff")), FP_JSON_TRUE);
	ASSERT_STREQ(fp_json_string(at(fp_json_root(md), "title"), NULL),
		     "a.hatchet vs b.hatchet: FlagPrism profile");
	td = block_doc(page, fp_json_string(at(prof, "tree"), NULL));
	tree = fp_json_root(td);
	n = (size_t)num(at(tree, "n"));
	ASSERT_EQ(n, 7); /* the union: small_001 is only in b */
	cola = fp_json_at(at(tree, "a"), 0);
	colb = fp_json_at(at(tree, "b"), 0);
	for (i = 0; i < n; i++) {
		const char *name = fp_json_string(fp_json_at(at(tree, "name"), i), NULL);

		if (strcmp(name, "kern") == 0) {
			ASSERT_NEAR(num_at(cola, i), 1000e-6, 1e-12);
			ASSERT_NEAR(num_at(colb, i), 2000e-6, 1e-12);
		}
		if (strcmp(name, "small_001") == 0) {
			found = true;
			ASSERT(isnan(num_at(cola, i)));
			ASSERT_NEAR(num_at(colb, i), 2e-6, 1e-12);
		}
	}
	ASSERT(found);
	fp_json_doc_free(td);
	fp_json_doc_free(md);
	free(page);
	fp_calltree_free(a);
	fp_calltree_free(b);
	fp_html_page_free(p);
}

TEST(html_profile_rejects_bad_metrics)
{
	struct fp_html_options o;
	struct fp_html_page *p = NULL;
	struct fp_calltree *t = sample_tree(1, 1);
	struct fp_diag d;

	fp_html_options_init(&o);
	o.metrics = "time/ms,no_such_metric";
	ASSERT_OK(fp_html_page_new(FP_HTML_PROFILE, &o, &p));
	memset(&d, 0, sizeof(d));
	ASSERT_EQ(fp_html_profile_set(p, t, "x", NULL, NULL, NULL, NULL, &d), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(d.msg, "no_such_metric"));
	ASSERT_EQ(p->nblocks, 0);
	fp_calltree_free(t);
	fp_html_page_free(p);
}

/* ---- traces --------------------------------------------------------------------------------- */

static const char TRACE[] =
	"{\"traceEvents\":["
	"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1000,\"args\":{\"name\":\"CPU 0\"}},"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1000,\"tid\":268435461,\"args\":{\"name\":\"SM 5\"}},"
	"{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":1000,\"tid\":1,\"ts\":10.5,\"dur\":100},"
	"{\"ph\":\"X\",\"name\":\"loads\",\"cat\":\"kernel_scope\",\"pid\":1000,\"tid\":268435461,"
	"\"ts\":20,\"dur\":50,\"args\":{\"program\":3,\"depth\":0}},"
	"{\"ph\":\"X\",\"name\":\"one" INJECT "\",\"cat\":\"kernel_scope\",\"pid\":1000,"
	"\"tid\":268435461,\"ts\":25,\"dur\":10,\"args\":{\"program\":3,\"depth\":1}},"
	"{\"ph\":\"i\",\"name\":\"ignored\",\"pid\":1,\"tid\":1,\"ts\":1}]}";

TEST(html_trace_tracks_and_depths)
{
	struct fp_html_page *p = page_new(FP_HTML_PROFILE, 0, 0);
	struct fp_calltree *t = sample_tree(0, 1);
	struct fp_json_doc *md, *tl;
	const struct fp_json_value *v, *tracks;
	char *page;

	ASSERT_OK(fp_html_profile_set(p, t, "x.hatchet", NULL, NULL, NULL, NULL, NULL));
	ASSERT_OK(fp_html_profile_add_trace(p, TRACE, strlen(TRACE), "x.chrome_trace.json", NULL));
	page = page_text(p, NULL);
	ASSERT_NULL(strstr(page, "<img"));
	md = block_doc(page, "fp-data");
	tl = block_doc(page, fp_json_string(at(fp_json_root(md), "timeline"), NULL));
	v = fp_json_root(tl);
	ASSERT_EQ(num(at(v, "total")), 3);
	ASSERT_EQ(num(at(v, "kept")), 3);
	ASSERT_EQ(num(at(v, "t0")), 10.5);
	ASSERT_EQ(num(at(v, "span")), 100);
	tracks = at(v, "tracks");
	ASSERT_EQ(fp_json_len(tracks), 2);
	ASSERT_STREQ(fp_json_string(at(fp_json_at(tracks, 0), "name"), NULL), "thread 1");
	ASSERT_STREQ(fp_json_string(at(fp_json_at(tracks, 1), "name"), NULL), "SM 5");
	ASSERT_STREQ(fp_json_string(at(fp_json_at(tracks, 1), "process"), NULL), "CPU 0");
	/* by track, then start: k; loads (depth 0), one... (depth 1, inside loads) */
	ASSERT_EQ(num_at(at(v, "depth"), 2), 1);
	ASSERT_EQ(num_at(at(v, "program"), 1), 3);
	ASSERT_EQ(num_at(at(v, "ts"), 1), 9.5);
	ASSERT_EQ(num_at(at(v, "program"), 0), -1);
	fp_json_doc_free(tl);
	fp_json_doc_free(md);
	free(page);
	fp_calltree_free(t);
	fp_html_page_free(p);
}

TEST(html_trace_caps_and_errors)
{
	struct fp_html_options o;
	struct fp_html_page *p = NULL;
	struct fp_html_stats st;
	struct fp_diag d;
	char *bad;

	fp_html_options_init(&o);
	o.max_slices = 2;
	ASSERT_OK(fp_html_page_new(FP_HTML_PROFILE, &o, &p));
	ASSERT_OK(fp_html_profile_add_trace(p, TRACE, strlen(TRACE), NULL, NULL));
	fp_html_page_stats(p, &st);
	ASSERT_EQ(st.slices, 2);
	ASSERT_EQ(st.slices_total, 3);
	ASSERT_NOT_NULL(strstr(fp_html_page_note_at(p, 0), "first 2 of 3 slices"));
	fp_html_page_free(p);

	ASSERT_OK(fp_html_page_new(FP_HTML_PROFILE, NULL, &p));
	bad = patched(TRACE, "\"pid\":1000,\"tid\":1,", "\"pid\":1000,");
	memset(&d, 0, sizeof(d));
	ASSERT_EQ(fp_html_profile_add_trace(p, bad, strlen(bad), "t.json", &d), FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "t.json:1:"));
	ASSERT_NOT_NULL(strstr(d.msg, "traceEvents[2]: an X event needs"));
	ASSERT_EQ(fp_html_profile_add_trace(p, "{}", 2, "t.json", &d), FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "no 'traceEvents' array"));
	free(bad);
	fp_html_page_free(p);
}

/* ---- .npy ------------------------------------------------------------------------------------ */

TEST(npy_parse_round_trip)
{
	static const int16_t v[6] = {1, -2, 3, -4, 5, -6};
	uint64_t shape[2] = {2, 3};
	struct fp_npy_view a;
	struct fp_strbuf sb;

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_INT16, shape, 2, v, sizeof(v)));
	ASSERT_OK(fp_npy_parse(sb.buf, sb.len, &a, NULL));
	ASSERT_EQ(a.dtype, FP_DTYPE_INT16);
	ASSERT_EQ(a.ndim, 2);
	ASSERT_EQ(a.shape[1], 3);
	ASSERT_EQ(a.numel, 6);
	ASSERT(!a.fortran_order);
	ASSERT_DEQ(fp_npy_get(&a, 3), -4);
	ASSERT_DEQ(fp_npy_get(&a, 6), 0);
	fp_strbuf_release(&sb);
}

static int npy_status(const char *header, size_t data, struct fp_diag *d)
{
	char buf[512];
	size_t hl = strlen(header), n;
	struct fp_npy_view a;

	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)(hl & 0xff);
	buf[9] = (char)(hl >> 8);
	memcpy(buf + 10, header, hl);
	n = 10 + hl;
	memset(buf + n, 0, data);
	memset(d, 0, sizeof(*d));
	return fp_npy_parse(buf, n + data, &a, d);
}

TEST(npy_parse_rejects)
{
	struct fp_diag d;
	struct fp_npy_view a;

	ASSERT_OK(npy_status("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, &d));
	ASSERT_OK(
		npy_status("{\"shape\": (), \"descr\": \"|b1\", \"fortran_order\": True}", 1, &d));
	ASSERT_EQ(npy_status("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 7, &d),
		  FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "need 8 bytes of data, the file has 7"));
	ASSERT_EQ(npy_status("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", 8, &d),
		  FP_ENOTSUP);
	ASSERT_EQ(npy_status("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", 16, &d),
		  FP_ENOTSUP);
	ASSERT_EQ(npy_status("{'descr': '<f4', 'fortran_order': False}", 0, &d), FP_EFORMAT);
	ASSERT_EQ(npy_status("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4, &d),
		  FP_EFORMAT);
	ASSERT_EQ(npy_status("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4,
			     &d),
		  FP_EFORMAT);
	ASSERT_EQ(npy_status("{'descr': '<f4', 'fortran_order': False, "
			     "'shape': (4294967296, 4294967296, 4294967296)}",
			     0, &d),
		  FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "overflows"));
	ASSERT_EQ(npy_status("{'descr': '<f4", 0, &d), FP_EFORMAT);
	ASSERT_EQ(fp_npy_parse("\x93NUMPY\x01\x00\xff\xff{", 11, &a, &d), FP_EFORMAT);
	ASSERT_EQ(fp_npy_parse("NUMPY", 5, &a, &d), FP_EFORMAT);
	ASSERT_EQ(fp_npy_parse("\x93NUMPY\x09\x00\x00\x00", 10, &a, &d), FP_EFORMAT);
	ASSERT_EQ(fp_npy_parse(NULL, 0, NULL, &d), FP_EINVAL);
}

/* ---- out of memory ------------------------------------------------------------------------- */

static int oom_debug(void *arg)
{
	struct fp_html_page *p = NULL;
	FILE *f;
	int rc;

	(void)arg;
	rc = fp_html_page_new(FP_HTML_DEBUGGER, NULL, &p);
	if (!rc)
		rc = fp_html_debug_add_report(p, REPORT, strlen(REPORT), NULL, NULL);
	if (!rc) {
		f = fopen("/dev/null", "w");
		rc = fp_html_page_write(p, f);
		fclose(f);
	}
	fp_html_page_free(p);
	return rc;
}

TEST(html_oom_debug)
{
	fpt_oom_sweep(oom_debug, NULL, 0, 20, NULL);
}

static int oom_profile(void *arg)
{
	struct fp_calltree *t = arg;
	struct fp_html_page *p = NULL;
	int rc;

	rc = fp_html_page_new(FP_HTML_PROFILE, NULL, &p);
	if (!rc)
		rc = fp_html_profile_set(p, t, "x.hatchet", NULL, t, "y.hatchet", NULL, NULL);
	if (!rc)
		rc = fp_html_profile_add_trace(p, TRACE, strlen(TRACE), "t", NULL);
	fp_html_page_free(p);
	return rc;
}

TEST(html_oom_profile)
{
	struct fp_calltree *t = sample_tree(3, 1);

	ASSERT_OK(fp_calltree_finalize(t));
	fpt_oom_sweep(oom_profile, t, 0, 20, NULL);
	fp_calltree_free(t);
}

/* Numbers in the page's data: integers as integers, the rest in %.6g, non-finite as null; a
 * value outside int64_t's range is never converted to it (found by fuzz-html-report: 1e112). */
TEST(html_num_formats_any_double)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0, "0"},        {-3, "-3"},         {2.5, "2.5"},        {1e14, "100000000000000"},
		{1e15, "1e+15"}, {1e112, "1e+112"},  {-1e300, "-1e+300"}, {9.3e18, "9.3e+18"},
		{NAN, "null"},   {INFINITY, "null"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fp_strbuf sb;

		fp_strbuf_init(&sb, 64);
		ASSERT_OK(fp__html_num(&sb, cases[i].v));
		ASSERT_STREQ(sb.buf, cases[i].want);
		fp_strbuf_release(&sb);
	}
}
