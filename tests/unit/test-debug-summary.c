/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the Debugger's whole-program summary (src/debug/summary.c) and of
 * fp_dbg_report(), which feeds it: launches per status and reason, reserved indices, findings
 * deduplicated across launches (a NaN a later launch loads counted under the origin that made
 * it), reports written only for launches with findings, the JSON read
 * back field by field, the text form, caps counted, bad arguments, an out-of-memory sweep; and
 * <flagprism/devmem.h> against the fake driver (host memory standing in for device memory).
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/debug-summary.h>
#include <flagprism/debug.h>
#include <flagprism/devmem.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "fake-cupti/fake-bind.h"
#include "test.h"
#include "test-debug.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/fp-test-summary-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(tmpdir));
}

static void remove_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}

static char *launch_json(int run, const char *extra)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"output_dir\": \"%s/out\", \"script\": \"demo\","
		 " \"kernel\": \"add_kernel\", \"timestamp\": \"t\", \"run\": %d,"
		 " \"grid\": [3], \"backend\": \"interpreter\", \"source_file\": \"/u/add.py\"%s}",
		 tmpdir, run, extra);
	return buf;
}

static struct fp_json_doc *read_json(const char *path)
{
	struct fp_json_doc *doc = NULL;

	ASSERT_OK(fp_json_parse_file(path, NULL, &doc, NULL));
	return doc;
}

static uint64_t u64(const struct fp_json_value *o, const char *key)
{
	uint64_t v = 0;

	ASSERT(fp_json_uint64(fp_json_get(o, key), &v));
	return v;
}

static const char *jstr(const struct fp_json_value *o, const char *key)
{
	const char *s = fp_json_string(fp_json_get(o, key), NULL);

	ASSERT_NOT_NULL(s);
	return s;
}

TEST(debug_summary_launches_and_reasons)
{
	struct fp_dbg_summary *s;
	struct fp_dbg_summary_totals t;
	uint64_t ix = 99, r;

	ASSERT_OK(fp_dbg_summary_new(&s));
	ASSERT_OK(fp_dbg_summary_launch(s, "a", "/x.py", FP_DBG_LAUNCH_INSTRUMENTED, NULL, 2,
					FP_DBG_SUMMARY_NEW_INDEX, &ix));
	ASSERT_EQ(ix, 0);
	r = fp_dbg_summary_reserve(s);
	ASSERT_EQ(r, 2);
	ASSERT_OK(fp_dbg_summary_launch(s, "b", "", FP_DBG_LAUNCH_UNOBSERVABLE, "graph replay", 3,
					FP_DBG_SUMMARY_NEW_INDEX, &ix));
	ASSERT_EQ(ix, 3);
	ASSERT_OK(fp_dbg_summary_launch(s, "b", "", FP_DBG_LAUNCH_UNOBSERVABLE, "graph replay", 1,
					FP_DBG_SUMMARY_NEW_INDEX, NULL));
	ASSERT_OK(fp_dbg_summary_launch(s, "a", "/x.py", FP_DBG_LAUNCH_FAILED, "boom", 1, r, &ix));
	ASSERT_EQ(ix, 2);
	/* an index never reserved, a count with an index, a bad status */
	ASSERT_EQ(fp_dbg_summary_launch(s, "a", "", FP_DBG_LAUNCH_FAILED, "x", 1, 100, NULL),
		  FP_EINVAL);
	ASSERT_EQ(fp_dbg_summary_launch(s, "a", "", FP_DBG_LAUNCH_FAILED, "x", 2, 0, NULL),
		  FP_EINVAL);
	ASSERT_EQ(fp_dbg_summary_launch(s, "a", "", (enum fp_dbg_launch_status)9, "x", 1,
					FP_DBG_SUMMARY_NEW_INDEX, NULL),
		  FP_EINVAL);
	ASSERT_EQ(fp_dbg_summary_launch(s, NULL, "", FP_DBG_LAUNCH_FAILED, "x", 1,
					FP_DBG_SUMMARY_NEW_INDEX, NULL),
		  FP_EINVAL);
	fp_dbg_summary_totals(s, &t);
	ASSERT_EQ(t.kernels, 2);
	ASSERT_EQ(t.launches, 7);
	ASSERT_EQ(t.by_status[FP_DBG_LAUNCH_INSTRUMENTED], 2);
	ASSERT_EQ(t.by_status[FP_DBG_LAUNCH_UNOBSERVABLE], 4);
	ASSERT_EQ(t.by_status[FP_DBG_LAUNCH_FAILED], 1);
	ASSERT_EQ(fp_dbg_summary_set(s, "mode", "sanitize"), FP_OK);
	ASSERT_EQ(fp_dbg_summary_set(s, "nope", "x"), FP_EINVAL);
	ASSERT_EQ(fp_dbg_summary_set_int(s, "exit_status", 3), FP_OK);
	ASSERT_EQ(fp_dbg_summary_set_int(s, "nope", 3), FP_EINVAL);

	make_tmpdir();
	ASSERT_OK(fp_dbg_summary_write(s, tmpdir, NULL));
	{
		char path[512];
		struct fp_json_doc *doc;
		const struct fp_json_value *root, *k, *nr;
		char *txt;
		size_t len;

		snprintf(path, sizeof(path), "%s/summary.json", tmpdir);
		doc = read_json(path);
		root = fp_json_root(doc);
		ASSERT_STREQ(jstr(root, "schema"), "flagprism.debug.summary");
		ASSERT_STREQ(jstr(root, "mode"), "sanitize");
		ASSERT_EQ(u64(root, "exit_status"), 3);
		ASSERT_EQ(u64(fp_json_get(root, "totals"), "launches"), 7);
		ASSERT_EQ(u64(fp_json_get(root, "totals"), "unobservable"), 4);
		ASSERT_EQ(fp_json_len(fp_json_get(root, "kernels")), 2);
		k = fp_json_at(fp_json_get(root, "kernels"), 1);
		ASSERT_STREQ(jstr(k, "name"), "b");
		ASSERT_EQ(fp_json_type(fp_json_get(k, "source_file")), FP_JSON_NULL);
		ASSERT_EQ(u64(k, "launches"), 4);
		ASSERT_EQ(u64(k, "instrumented"), 0);
		nr = fp_json_get(k, "not_instrumented");
		ASSERT_EQ(fp_json_len(nr), 1); /* the same reason twice is one entry */
		ASSERT_STREQ(jstr(fp_json_at(nr, 0), "reason"), "graph replay");
		ASSERT_STREQ(jstr(fp_json_at(nr, 0), "status"), "unobservable");
		ASSERT_EQ(u64(fp_json_at(nr, 0), "launches"), 4);
		ASSERT_EQ(u64(fp_json_at(nr, 0), "first_launch"), 3);
		fp_json_doc_free(doc);
		snprintf(path, sizeof(path), "%s/summary.txt", tmpdir);
		txt = fpt_slurp(path, &len);
		ASSERT_NOT_NULL(strstr(txt, "2 kernels, 7 launches: 2 instrumented, 5 not"));
		ASSERT_NOT_NULL(strstr(txt, "b: 4 launches unobservable: graph replay"));
		ASSERT_NOT_NULL(strstr(txt, "a: 1 launch failed: boom"));
		free(txt);
		/* no temporary file left behind */
		snprintf(path, sizeof(path), "ls %s | grep -c tmp", tmpdir);
		ASSERT_NE(system(path), 0);
	}
	remove_tree(tmpdir);
	fp_dbg_summary_clear(s);
	fp_dbg_summary_totals(s, &t);
	ASSERT_EQ(t.launches, 0);
	ASSERT_EQ(t.kernels, 0);
	fp_dbg_summary_free(s);
	fp_dbg_summary_free(NULL);
}

/* A kernel's name (or a reason) with ESC, BEL or a newline is shown with '?' for each in the
 * text summary, so that printing it cannot drive the terminal or forge a line; the JSON keeps
 * the name exactly. */
TEST(debug_summary_text_cleans_control_characters)
{
	static const char hostile[] = "k\x1b[31mred\x07\nflagprism debug: no findings";
	struct fp_dbg_summary *s;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_OK(fp_dbg_summary_new(&s));
	ASSERT_OK(fp_dbg_summary_launch(s, hostile, "/x.py", FP_DBG_LAUNCH_FAILED, "bad\rreason", 1,
					FP_DBG_SUMMARY_NEW_INDEX, NULL));
	f = open_memstream(&text, &len);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_dbg_summary_write_format(s, "txt", f, NULL));
	fclose(f);
	ASSERT(strchr(text, '\x1b') == NULL);
	ASSERT(strchr(text, '\x07') == NULL);
	ASSERT(strchr(text, '\r') == NULL);
	ASSERT_NOT_NULL(strstr(text, "k?[31mred??flagprism debug: no findings"));
	ASSERT_NOT_NULL(strstr(text, "bad?reason"));
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	ASSERT_OK(fp_dbg_summary_write_format(s, "json", f, NULL));
	fclose(f);
	ASSERT_NOT_NULL(strstr(text, "k\\u001b[31mred\\u0007\\nflagprism"));
	free(text);
	fp_dbg_summary_free(s);
}

/*
 * Two launches of the checks fixture (NaN loaded into x) into one summary: one finding in two
 * launches.
 */
TEST(debug_summary_findings_dedup_and_findings_only)
{
	struct dbgb b;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_summary *s;
	struct fp_dbg_outputs out;
	struct fp_dbg_summary_totals t;
	struct fp_json_doc *doc;
	const struct fp_json_value *fs, *f0;
	char path[512];
	size_t nf = 0;
	int i;

	make_tmpdir();
	dbgb_fixture_checks(&b, false, 0);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS),
				&run, NULL));
	ASSERT_OK(fp_dbg_summary_new(&s));
	for (i = 0; i < 2; i++) {
		const char *lj =
			launch_json(i, i ? ", \"test\": \"t.py::test_x\", \"stack\": "
					   "[\"/u/main.py:3 main\", \"/u/add.py:20 run\"]" :
					   "");

		fp_dbg_outputs_init(&out);
		ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), s, (uint64_t)i + 5,
					FP_DBG_REPORT_FINDINGS_ONLY, &out, &nf, NULL));
		ASSERT_EQ(nf, 1);
		ASSERT_NOT_NULL(out.txt); /* findings: the reports are written */
		fp_dbg_outputs_release(&out);
	}
	fp_dbg_summary_totals(s, &t);
	ASSERT_EQ(t.finding_launches, 2);
	ASSERT_EQ(t.reports, 2);
	ASSERT_OK(fp_dbg_summary_write(s, tmpdir, NULL));
	snprintf(path, sizeof(path), "%s/summary.json", tmpdir);
	doc = read_json(path);
	fs = fp_json_get(fp_json_root(doc), "findings");
	ASSERT_EQ((int64_t)fp_json_len(fs), (int64_t)nf);
	f0 = fp_json_at(fs, 0);
	ASSERT_EQ(u64(f0, "launches"), 2);
	ASSERT_EQ(u64(f0, "launch"), 5);
	ASSERT_STREQ(jstr(f0, "kind"), "nan_origin");
	ASSERT_EQ(u64(f0, "line"), 12);
	ASSERT_EQ(u64(f0, "program"), 0);
	ASSERT_EQ(u64(f0, "programs"), 4);  /* 2 per launch */
	ASSERT_EQ(u64(f0, "instances"), 4); /* the slot's fired count, 2 per launch */
	ASSERT(fp_json_type(fp_json_get(f0, "from_memory")) == FP_JSON_TRUE);
	ASSERT_STREQ(jstr(f0, "kernel"), "add_kernel");
	ASSERT_STREQ(jstr(f0, "file"), "/u/add.py");
	ASSERT_GT(u64(f0, "line"), 0);
	/* the first launch (no test, no stack) described the finding */
	ASSERT_EQ(fp_json_type(fp_json_get(f0, "test")), FP_JSON_NULL);
	fp_json_doc_free(doc);
	fp_dbg_summary_free(s);

	/* a launch without findings writes nothing under FP_DBG_REPORT_FINDINGS_ONLY: a run whose
	 * check slots never fired, and with no records */
	{
		struct dbgb e;
		struct fp_dbg_run *er = NULL;
		const char *lj = launch_json(9, "");

		dbgb_init_checks(&e, DBGB_NS, DBGB_NP, 4, false, 0, DBGB_NPARAMS, DBGB_NCHECKS,
				 false);
		ASSERT_OK(fp_dbg_decode(e.w, dbgb_bytes(&e), DBGB_SITES_CHECKS,
					strlen(DBGB_SITES_CHECKS), &er, NULL));
		ASSERT_OK(fp_dbg_summary_new(&s));
		fp_dbg_outputs_init(&out);
		ASSERT_OK(fp_dbg_report(er, lj, strlen(lj), s, 0, FP_DBG_REPORT_FINDINGS_ONLY, &out,
					&nf, NULL));
		ASSERT_EQ(nf, 0);
		ASSERT_NULL(out.txt);
		ASSERT_NULL(out.json);
		fp_dbg_outputs_release(&out);
		/* without the flag they are written */
		ASSERT_OK(fp_dbg_report(er, lj, strlen(lj), s, 0, 0, &out, &nf, NULL));
		ASSERT_NOT_NULL(out.json);
		fp_dbg_outputs_release(&out);
		fp_dbg_summary_totals(s, &t);
		ASSERT_EQ(t.reports, 1);
		fp_dbg_summary_free(s);
		fp_dbg_run_free(er);
		dbgb_free(&e);
	}
	fp_dbg_run_free(run);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/* A launch that raised: the report says partial and why. */
TEST(debug_report_partial_after_error)
{
	struct dbgb b;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *root;
	bool complete = true;
	const char *lj;
	char *txt;
	size_t len;

	make_tmpdir();
	dbgb_fixture(&b, false, 0);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES, strlen(DBGB_SITES), &run, NULL));
	lj = launch_json(0, ", \"error\": \"ValueError('shape mismatch')\", \"launch_path\": "
			    "\"JITFunction.run\", \"autotune\": {\"role\": \"chosen\", \"config\": "
			    "\"BLOCK: 64\"}");
	fp_dbg_outputs_init(&out);
	ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), NULL, 0, 0, &out, NULL, NULL));
	ASSERT(!out.complete);
	doc = read_json(out.json);
	root = fp_json_root(doc);
	ASSERT(fp_json_bool(fp_json_get(root, "complete"), &complete));
	ASSERT(!complete);
	ASSERT_NOT_NULL(strstr(jstr(root, "partial_reason"), "shape mismatch"));
	ASSERT_STREQ(jstr(fp_json_get(root, "origin"), "launch_path"), "JITFunction.run");
	ASSERT_STREQ(jstr(fp_json_get(fp_json_get(root, "origin"), "autotune"), "role"), "chosen");
	fp_json_doc_free(doc);
	txt = fpt_slurp(out.txt, &len);
	ASSERT_NOT_NULL(strstr(txt, "status:          INCOMPLETE"));
	ASSERT_NOT_NULL(strstr(txt, "the launch raised"));
	ASSERT_NOT_NULL(strstr(txt, "autotune:        chosen config BLOCK: 64"));
	free(txt);
	fp_dbg_outputs_release(&out);
	/* a bad autotune role and a bad stack are positioned errors */
	lj = launch_json(0, ", \"autotune\": {\"role\": \"other\"}");
	ASSERT_EQ(fp_dbg_report(run, lj, strlen(lj), NULL, 0, 0, &out, NULL, NULL), FP_EFORMAT);
	fp_dbg_outputs_release(&out);
	lj = launch_json(0, ", \"stack\": [1]");
	ASSERT_EQ(fp_dbg_report(run, lj, strlen(lj), NULL, 0, 0, &out, NULL, NULL), FP_EFORMAT);
	fp_dbg_outputs_release(&out);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_summary_write_errors)
{
	struct fp_dbg_summary *s;
	struct fp_diag d;

	ASSERT_OK(fp_dbg_summary_new(&s));
	ASSERT_EQ(fp_dbg_summary_write(s, "/proc/flagprism-no-such/dir", &d), FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "cannot create directory"));
	ASSERT_EQ(fp_dbg_summary_write_format(s, "xml", stdout, &d), FP_ENOENT);
	ASSERT_EQ(fp_dbg_summary_write(s, "", &d), FP_EINVAL);
	fp_dbg_summary_free(s);
}

static int oom_run(void *arg)
{
	struct fp_dbg_summary *s = NULL;
	FILE *f;
	int st;

	(void)arg;
	if ((st = fp_dbg_summary_new(&s)))
		return st;
	if ((st = fp_dbg_summary_launch(s, "k", "f.py", FP_DBG_LAUNCH_FAILED, "why", 2,
					FP_DBG_SUMMARY_NEW_INDEX, NULL)) ||
	    (st = fp_dbg_summary_set(s, "mode", "markers")))
		goto out;
	f = fopen("/dev/null", "w");
	if (!f) {
		st = FP_EIO;
		goto out;
	}
	st = fp_dbg_summary_write_format(s, "json", f, NULL);
	if (!st)
		st = fp_dbg_summary_write_format(s, "txt", f, NULL);
	fclose(f);
out:
	fp_dbg_summary_free(s);
	return st;
}

TEST(debug_summary_oom_sweep)
{
	fpt_oom_sweep(oom_run, NULL, 0, 3, NULL);
}

/* ---- devmem against the fake driver --------------------------------------------------------- */

/* Which driver calls a devmem call makes around its work: the context is made current only
 * where the thread has another (none, here: fake_devmem_set_current(0)), a span's context is
 * looked up once, and an event given back is recorded again rather than made anew. */
static void devmem_contexts(void *h, uint64_t *buf, size_t size)
{
	void (*set_current)(int);
	long (*pushes)(void), (*queries)(void), (*events_live)(void);
	struct fp_devmem_event *ev = NULL, *first;
	uint64_t dptr = (uint64_t)(uintptr_t)buf;
	uint64_t back[2];
	struct fp_diag d;
	long p0, q0, e0;

	FAKE_BIND(h, set_current, "fake_devmem_set_current");
	FAKE_BIND(h, pushes, "fake_devmem_pushes");
	FAKE_BIND(h, queries, "fake_devmem_ctx_queries");
	FAKE_BIND(h, events_live, "fake_devmem_events_live");
	/* the framework's context is current: nothing pushed, the pointer asked about once */
	p0 = pushes();
	q0 = queries();
	ASSERT_OK(fp_devmem_zero(dptr, size, 0, NULL));
	ASSERT_EQ(pushes(), p0);
	ASSERT_EQ(queries(), q0 + 1);
	/* a thread without it: pushed (and popped: the next call pushes again) */
	set_current(0);
	ASSERT_OK(fp_devmem_zero(dptr, size, 0, NULL));
	ASSERT_OK(fp_devmem_zero(dptr, size, 0, NULL));
	ASSERT_EQ(pushes(), p0 + 2);
	set_current(1);
	/* a span: calls inside it do not ask the driver again, calls outside do */
	ASSERT_EQ(fp_devmem_span_add(0, 8, &d), FP_EINVAL);
	ASSERT_OK(fp_devmem_span_add(dptr, size, NULL));
	q0 = queries();
	ASSERT_OK(fp_devmem_zero(dptr + 8, size - 8, 0, NULL));
	ASSERT_OK(fp_devmem_write(dptr + size - 8, back, 8, 0, NULL));
	ASSERT_EQ(queries(), q0);
	/* an event recorded again is the same event; its wait still works */
	e0 = events_live();
	ASSERT_OK(fp_devmem_read_async(back, dptr, sizeof(back), 0, &ev, NULL));
	ASSERT_NOT_NULL(ev);
	first = ev;
	ASSERT_OK(fp_devmem_event_wait(ev, NULL));
	ASSERT_OK(fp_devmem_read_async(back, dptr, sizeof(back), 0, &ev, NULL));
	ASSERT(ev == first);
	ASSERT_EQ(events_live(), e0 + 1);
	ASSERT_OK(fp_devmem_event_wait(ev, NULL));
	ASSERT_EQ(queries(), q0);
	fp_devmem_span_remove(dptr);
	ASSERT_OK(fp_devmem_zero(dptr, size, 0, NULL));
	ASSERT_EQ(queries(), q0 + 1);
	fp_devmem_span_remove(dptr); /* unknown now: a no-op */
	fp_devmem_event_free(ev);
	ASSERT_EQ(events_live(), e0);
}

TEST(devmem_fake_driver)
{
	const char *path = FP_FAKE_CUPTI_PATH;
	void (*fail_next)(int);
	void *h;
	uint64_t buf[8], back[8];
	struct fp_diag d;
	int i;

	ASSERT_NOT_NULL(path);
	/* the library is loaded once per process: this test's fork sets the path first */
	ASSERT_OK(setenv("FLAGPRISM_CUDA_DRIVER_PATH", path, 1));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NOT_NULL(h);
	FAKE_BIND(h, fail_next, "fake_devmem_fail_next");
	ASSERT_OK(fp_devmem_open(NULL));
	for (i = 0; i < 8; i++)
		buf[i] = 0x1111111111111111ull * (uint64_t)(i + 1);
	ASSERT_OK(fp_devmem_zero((uint64_t)(uintptr_t)buf, sizeof(buf), 0, NULL));
	for (i = 0; i < 8; i++)
		ASSERT_UEQ(buf[i], 0);
	back[0] = 42;
	back[1] = 7;
	ASSERT_OK(fp_devmem_write((uint64_t)(uintptr_t)buf, back, 2 * sizeof(uint64_t), 0, NULL));
	memset(back, 0xff, sizeof(back));
	ASSERT_OK(fp_devmem_read(back, (uint64_t)(uintptr_t)buf, sizeof(buf), 0, NULL));
	ASSERT_UEQ(back[0], 42);
	ASSERT_UEQ(back[1], 7);
	ASSERT_UEQ(back[7], 0);
	/* a device error is named */
	fail_next(700);
	ASSERT_EQ(fp_devmem_read(back, (uint64_t)(uintptr_t)buf, 8, 0, &d), FP_EVENDOR);
	ASSERT_NOT_NULL(strstr(d.msg, "CUDA_ERROR_ILLEGAL_ADDRESS"));
	/* not device memory */
	ASSERT_EQ(fp_devmem_zero(0, 8, 0, &d), FP_EINVAL);
	ASSERT_OK(fp_devmem_zero(0, 0, 0, NULL)); /* nothing to do */
	ASSERT_EQ(fp_devmem_write((uint64_t)(uintptr_t)buf, NULL, 8, 0, &d), FP_EINVAL);
	devmem_contexts(h, buf, sizeof(buf));
	dlclose(h);
}

TEST(devmem_no_driver)
{
	struct fp_diag d;

	ASSERT_OK(setenv("FLAGPRISM_CUDA_DRIVER_PATH", "/nonexistent/libcuda.so.1", 1));
	ASSERT_EQ(fp_devmem_open(&d), FP_ENOTSUP);
	ASSERT_NOT_NULL(strstr(d.msg, "no CUDA driver"));
	ASSERT_EQ(fp_devmem_zero(0x1000, 8, 0, &d), FP_ENOTSUP);
}

/* ---- the launch pipeline ------------------------------------------------------------------ */

#include <flagprism/debug-pipe.h>

/* Submit the checks fixture (NaN loaded into x) n times through a host-only pipeline of `pool` bytes. */
static void pipe_run(struct fp_dbg_pipe *p, struct fp_dbg_summary *s, struct dbgb *b, int n,
		     unsigned first_run)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t off = 0, bytes = dbgb_bytes(b);
		uint64_t index = fp_dbg_summary_reserve(s);
		const char *lj = launch_json((int)(first_run + (unsigned)i), "");
		struct fp_dbg_pipe_job job = {
			.kernel = "add_kernel",
			.source_file = "/u/add.py",
			.site_table = DBGB_SITES_CHECKS,
			.site_len = strlen(DBGB_SITES_CHECKS),
			.launch_json = lj,
			.launch_len = strlen(lj),
			.launch_index = index,
		};

		ASSERT_OK(fp_dbg_pipe_reserve(p, bytes, &off, NULL));
		/* the host writes the header, the extended header and the tensor table ... */
		ASSERT_OK(fp_dbg_pipe_prepare(p, off, bytes, b->w, (16 + 4 * b->np) * 8, 0, NULL));
		/* ... the "device" its check slots and records */
		memcpy(fp_dbg_pipe_host(p, off), b->w, bytes);
		ASSERT_OK(fp_dbg_pipe_submit(p, off, bytes, 0, &job, NULL));
	}
}

TEST(debug_pipe_host_launches_reported_in_order)
{
	struct fp_dbg_pipe_options opt = {
		.pool_bytes = 8192, .report_flags = FP_DBG_REPORT_FINDINGS_ONLY, .max_reports = 3};
	struct fp_dbg_summary *s;
	struct fp_dbg_pipe *p;
	struct fp_dbg_pipe_result *r;
	struct fp_dbg_pipe_stats st;
	struct fp_dbg_summary_totals t;
	struct dbgb b;
	size_t n, i;

	make_tmpdir();
	dbgb_fixture_checks(&b, false, 0);
	ASSERT_LE((int64_t)dbgb_bytes(&b), 4096); /* two buffers fit the pool at once, not three */
	ASSERT_OK(fp_dbg_summary_new(&s));
	ASSERT_OK(fp_dbg_pipe_new(&p, s, &opt, NULL));
	pipe_run(p, s, &b, 10, 0);
	fp_dbg_pipe_drain(p);
	n = fp_dbg_pipe_take(p, &r);
	ASSERT_EQ(n, 10);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(r[i].launch_index, i);
		ASSERT_EQ(r[i].status, FP_OK);
		ASSERT_EQ(r[i].nfindings, 1);
		if (i < 3)
			ASSERT_NOT_NULL(r[i].out.txt);
		else
			ASSERT_NULL(
				r[i].out.txt); /* over max_reports: findings only in the summary */
	}
	fp_dbg_pipe_results_free(r, n);
	fp_dbg_pipe_stats(p, &st);
	ASSERT_EQ(st.submitted, 10);
	ASSERT_EQ(st.done, 10);
	ASSERT_EQ(st.reports_suppressed, 7);
	ASSERT_EQ(st.in_flight_bytes, 0);
	fp_dbg_summary_totals(s, &t);
	ASSERT_EQ(t.launches, 10);
	ASSERT_EQ(t.by_status[FP_DBG_LAUNCH_INSTRUMENTED], 10);
	ASSERT_EQ(t.finding_launches, 10);
	ASSERT_EQ(t.reports, 3);
	/* a buffer larger than the pool is the caller's to run synchronously */
	{
		size_t off;

		ASSERT_EQ(fp_dbg_pipe_reserve(p, 9000, &off, NULL), FP_ELIMIT);
		ASSERT_OK(fp_dbg_pipe_reserve(p, 100, &off, NULL));
		fp_dbg_pipe_unreserve(p, off);
		fp_dbg_pipe_stats(p, &st);
		ASSERT_EQ(st.in_flight_bytes, 0);
	}
	fp_dbg_pipe_free(p);
	fp_dbg_summary_free(s);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

TEST(debug_pipe_corrupt_buffer_fails_that_launch_only)
{
	struct fp_dbg_pipe_options opt = {.pool_bytes = 1 << 16};
	struct fp_dbg_summary *s;
	struct fp_dbg_pipe *p;
	struct fp_dbg_pipe_result *r;
	struct fp_dbg_summary_totals t;
	struct dbgb b;
	size_t n, off, bytes;
	const char *lj;

	make_tmpdir();
	dbgb_fixture_checks(&b, false, 0);
	bytes = dbgb_bytes(&b);
	ASSERT_OK(fp_dbg_summary_new(&s));
	ASSERT_OK(fp_dbg_pipe_new(&p, s, &opt, NULL));
	pipe_run(p, s, &b, 1, 0);
	/* the second launch's magic is wrong */
	lj = launch_json(1, "");
	{
		struct fp_dbg_pipe_job job = {
			.kernel = "add_kernel",
			.source_file = "/u/add.py",
			.site_table = DBGB_SITES_CHECKS,
			.site_len = strlen(DBGB_SITES_CHECKS),
			.launch_json = lj,
			.launch_len = strlen(lj),
			.launch_index = fp_dbg_summary_reserve(s),
		};

		ASSERT_OK(fp_dbg_pipe_reserve(p, bytes, &off, NULL));
		memcpy(fp_dbg_pipe_host(p, off), b.w, bytes);
		((unsigned char *)fp_dbg_pipe_host(p, off))[0] ^= 0xff;
		ASSERT_OK(fp_dbg_pipe_submit(p, off, bytes, 0, &job, NULL));
	}
	pipe_run(p, s, &b, 1, 2);
	fp_dbg_pipe_drain(p);
	n = fp_dbg_pipe_take(p, &r);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(r[0].status, FP_OK);
	ASSERT_EQ(r[1].status, FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(r[1].message, "decoding the records failed"));
	ASSERT_EQ(r[2].status, FP_OK);
	fp_dbg_pipe_results_free(r, n);
	fp_dbg_summary_totals(s, &t);
	ASSERT_EQ(t.by_status[FP_DBG_LAUNCH_INSTRUMENTED], 2);
	ASSERT_EQ(t.by_status[FP_DBG_LAUNCH_FAILED], 1);
	/* submitting an unreserved slice is refused */
	{
		struct fp_dbg_pipe_job job = {
			.kernel = "k", .site_table = "{}", .launch_json = "{}"};

		ASSERT_EQ(fp_dbg_pipe_submit(p, 12345, 8, 0, &job, NULL), FP_EINVAL);
	}
	fp_dbg_pipe_free(p);
	fp_dbg_summary_free(s);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/* The device path against the fake driver: the read back is queued, a device error fails the
 * launch with the driver's name for it, events are freed. */
TEST(debug_pipe_device_fake_driver)
{
	const char *path = FP_FAKE_CUPTI_PATH;
	void (*fail_event)(int);
	long (*events_live)(void);
	long (*host_allocs)(void);
	long (*ctx_queries)(void);
	long queries;
	struct fp_dbg_summary *s;
	struct fp_dbg_pipe *p;
	struct fp_dbg_pipe_result *r;
	struct dbgb b;
	void *h, *pool;
	size_t n, off, bytes, hdr;
	int i;

	ASSERT_OK(setenv("FLAGPRISM_CUDA_DRIVER_PATH", path, 1));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NOT_NULL(h);
	FAKE_BIND(h, fail_event, "fake_devmem_fail_event");
	FAKE_BIND(h, events_live, "fake_devmem_events_live");
	make_tmpdir();
	dbgb_fixture_checks(&b, false, 0);
	bytes = dbgb_bytes(&b);
	hdr = (16 + 4 * DBGB_NPARAMS) * 8;
	pool = calloc(1, 1 << 16); /* the "device" pool: host memory for the fake */
	ASSERT_NOT_NULL(pool);
	ASSERT_OK(fp_dbg_summary_new(&s));
	{
		struct fp_dbg_pipe_options opt = {.pool_bytes = 1 << 16,
						  .device_pool = (uint64_t)(uintptr_t)pool};

		ASSERT_OK(fp_dbg_pipe_new(&p, s, &opt, NULL));
	}
	FAKE_BIND(h, ctx_queries, "fake_devmem_ctx_queries");
	queries = ctx_queries();
	for (i = 0; i < 2; i++) {
		const char *lj = launch_json(i, "");
		struct fp_dbg_pipe_job job = {
			.kernel = "add_kernel",
			.source_file = "/u/add.py",
			.site_table = DBGB_SITES_CHECKS,
			.site_len = strlen(DBGB_SITES_CHECKS),
			.launch_json = lj,
			.launch_len = strlen(lj),
			.launch_index = fp_dbg_summary_reserve(s),
		};

		ASSERT_OK(fp_dbg_pipe_reserve(p, bytes, &off, NULL));
		/* the host writes the header, the extended header and the tensor table; the device
		 * slice is zeroed around them */
		ASSERT_OK(fp_dbg_pipe_prepare(p, off, bytes, b.w, hdr, 0, NULL));
		/* the twin writes its check slots and records into the device slice */
		memcpy((char *)pool + off + hdr, (char *)b.w + hdr, bytes - hdr);
		if (i == 1)
			fail_event(700);
		ASSERT_OK(fp_dbg_pipe_submit(p, off, bytes, 0, &job, NULL));
		fp_dbg_pipe_drain(p);
		/* the read back's event is kept for the next launch, and recorded again there */
		ASSERT_EQ(events_live(), 1);
	}
	/* the pool is a span: no launch asked the driver whose memory it is */
	ASSERT_EQ(ctx_queries(), queries);
	n = fp_dbg_pipe_take(p, &r);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(r[0].status, FP_OK);
	ASSERT_EQ(r[0].nfindings, 1);
	ASSERT_EQ(r[1].status, FP_EVENDOR);
	ASSERT_NOT_NULL(strstr(r[1].message, "CUDA_ERROR_ILLEGAL_ADDRESS"));
	fp_dbg_pipe_results_free(r, n);
	fp_dbg_pipe_free(p);
	ASSERT_EQ(events_live(), 0);
	/* the page-locked pool outlives the pipeline as the spare; the next pipeline that fits in
	 * it takes it instead of page-locking again, a larger one allocates its own */
	FAKE_BIND(h, host_allocs, "fake_devmem_host_allocs");
	ASSERT_EQ(host_allocs(), 1);
	{
		struct fp_dbg_pipe_options opt = {.pool_bytes = 1 << 15,
						  .device_pool = (uint64_t)(uintptr_t)pool};

		ASSERT_OK(fp_dbg_pipe_new(&p, s, &opt, NULL));
		ASSERT_EQ(host_allocs(), 1);
		fp_dbg_pipe_free(p);
		opt.pool_bytes = 1 << 17;
		ASSERT_OK(fp_dbg_pipe_new(&p, s, &opt, NULL));
		ASSERT_EQ(host_allocs(), 2);
		fp_dbg_pipe_free(p); /* the larger pool becomes the spare, the smaller is freed */
	}
	ASSERT_EQ(fp_dbg_pipe_release_spare(), (size_t)1 << 17);
	ASSERT_EQ(fp_dbg_pipe_release_spare(), 0);
	fp_dbg_summary_free(s);
	free(pool);
	dbgb_free(&b);
	remove_tree(tmpdir);
	dlclose(h);
}

/* ---- counts-only records, the findings kept by check, NaN descendants ----------------------- */

/* Turn value record `k` of every program into a counts-only record (as check mode writes them). */
static void make_counts_only(struct dbgb *b, uint64_t k)
{
	uint64_t p;
	unsigned i;

	for (p = 0; p < b->P; p++) {
		uint64_t *w = dbgb_slot(b, p, k);

		w[0] |= (uint64_t)FP_DBG_REC_COUNTS << 36;
		w[3] = UINT64_C(0xffffffff00000000);
		for (i = 4; i < 8; i++)
			w[i] = 0;
	}
}

TEST(debug_counts_only_records)
{
	struct dbgb b;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_value_summary v;
	const struct fp_dbg_record *r;
	struct fp_diag d;
	size_t n;

	dbgb_fixture(&b, false, 0);
	make_counts_only(&b, 1); /* x: lane 3 NaN */
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES, strlen(DBGB_SITES), &run, NULL));
	r = fp_dbg_run_records(run, 1, &n);
	ASSERT_EQ(n, DBGB_NP);
	fp_dbg_record_value_summary(&r[0], &v);
	ASSERT(v.counts_only);
	ASSERT_EQ(v.nan_count, 1);
	ASSERT(isnan(v.min) && isnan(v.max) && isnan(v.mean));
	ASSERT_EQ(v.zero_count, 0);
	fp_dbg_run_free(run);
	/* a counts-only record with a sum, or with a dump, is rejected */
	dbgb_slot(&b, 0, 1)[5] = 1;
	ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES, strlen(DBGB_SITES), &run, &d),
		  FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "counts-only record must have word 5 = 0"));
	dbgb_slot(&b, 0, 1)[5] = 0;
	dbgb_slot(&b, 0, 1)[3] = 0;
	ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES, strlen(DBGB_SITES), &run, &d),
		  FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "word 3 = no dump"));
	dbgb_free(&b);
	/* the flag on an address record is rejected */
	dbgb_fixture(&b, false, 0);
	dbgb_slot(&b, 0, 0)[0] |= (uint64_t)FP_DBG_REC_COUNTS << 36;
	ASSERT_EQ(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES, strlen(DBGB_SITES), &run, &d),
		  FP_EFORMAT);
	ASSERT_NOT_NULL(strstr(d.msg, "not a plain value record"));
	dbgb_free(&b);
}

TEST(debug_findings_kept_by_checks)
{
	struct dbgb b;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *fs;
	const char *lj;
	size_t nf = 0, i;

	make_tmpdir();
	dbgb_fixture_checks(&b, false, 0);
	/* and a store past y's end in program 2: lane 2 of 0x..3020, whose lanes end at +48 */
	dbgb_fire(&b, 3, 2, 3, 1, 2, DBGB_Y + 48, DBGB_Y + 48, DBGB_Y + 52, 0);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS),
				&run, NULL));
	/* no "checks": everything found is reported */
	lj = launch_json(3, "");
	fp_dbg_outputs_init(&out);
	ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), NULL, 3, 0, &out, &nf, NULL));
	ASSERT_EQ(nf, 2);
	fp_dbg_outputs_release(&out);
	/* "checks": ["bounds"]: only the store out of bounds */
	lj = launch_json(0, ", \"checks\": [\"bounds\"]");
	ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), NULL, 0, 0, &out, &nf, NULL));
	ASSERT_EQ(nf, 1);
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	fs = fp_json_get(fp_json_root(doc), "findings");
	ASSERT_EQ(fp_json_len(fs), 1);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(fs, 0), "kind"), NULL), "out_of_bounds");
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(fs, 0), "access"), NULL), "store");
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	/* ["nan"]: only the NaN loaded into x */
	lj = launch_json(1, ", \"checks\": [\"nan\"]");
	ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), NULL, 1, 0, &out, &nf, NULL));
	ASSERT_EQ(nf, 1);
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	fs = fp_json_get(fp_json_root(doc), "findings");
	for (i = 0; i < fp_json_len(fs); i++)
		ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(fs, i), "kind"), NULL),
			     "nan_origin");
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	/* ["inf", "precision"]: nothing */
	lj = launch_json(4, ", \"checks\": [\"inf\", \"precision\"]");
	ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), NULL, 4, 0, &out, &nf, NULL));
	ASSERT_EQ(nf, 0);
	fp_dbg_outputs_release(&out);
	lj = launch_json(2, ", \"checks\": [\"nans\"]");
	ASSERT_EQ(fp_dbg_report(run, lj, strlen(lj), NULL, 2, 0, &out, &nf, NULL), FP_EFORMAT);
	fp_dbg_outputs_release(&out);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	remove_tree(tmpdir);
}

/*
 * NaN descent across launches goes through memory: launch 0 makes a NaN (y = x * 2) and stores
 * it into y_ptr's allocation; launch 1 loads x from that allocation: its from-memory NaN is
 * counted under launch 0's origin (summary `descendants`), listed nowhere, in its own report
 * neither; launch 2 loads a NaN from another allocation, which no launch wrote one into: a
 * finding of its own, although an origin came before. Within one launch the same rule holds
 * (findings.c).
 */
static const char DESCENT_SITES[] =
	"{\"version\": 1, \"kernel\": \"add_kernel\", \"statements\": ["
	" {\"id\": 0, \"line\": 12, \"source\": \"x = tl.load(x_ptr + offs)\"},"
	" {\"id\": 1, \"line\": 14, \"source\": \"y = x * 2\"},"
	" {\"id\": 2, \"line\": 15, \"source\": \"tl.store(y_ptr + offs, y)\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"value\", \"name\": \"x\"},"
	" {\"id\": 2, \"statement\": 1, \"kind\": \"value\", \"name\": \"y\", \"reads\": [\"x\"]},"
	" {\"id\": 3, \"statement\": 2, \"kind\": \"value\", \"name\": \"y\", \"reads\": [\"y\"]}],"
	" \"params\": [\"x_ptr\", \"y_ptr\"], \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"nan_mem\", \"statement\": 0, \"subject\": \"x\", \"site\": 1,"
	"  \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 1, \"rule\": \"nan\", \"statement\": 1, \"subject\": \"y\", \"site\": 2,"
	"  \"reads\": [\"x\"]},"
	" {\"slot\": 2, \"rule\": \"nan\", \"statement\": 2, \"subject\": \"y\", \"site\": 3,"
	"  \"reads\": [\"y\"], \"stores\": [\"y_ptr\"]}]}";

/* A launch of DESCENT_SITES with x_ptr in allocation [x_lo, x_lo + 4096); `origin`: y = x * 2
 * makes a NaN, stored into y_ptr's allocation (0x80000); else x's load finds one. */
static struct fp_dbg_run *descent_run(struct dbgb *b, uint64_t x_lo, bool origin)
{
	struct fp_dbg_run *run = NULL;

	dbgb_init_checks(b, 0, 3, 3, false, 0, 2, 3, false);
	dbgb_table(b, 0, x_lo, x_lo + 64, x_lo, x_lo + 4096);
	dbgb_table(b, 1, 0x80000, 0x80040, 0x80000, 0x81000);
	if (origin) {
		dbgb_fire_value(b, 1, 1, 2, 1, 3, NAN, 0);
		dbgb_descend(b, 2, 1);
	} else {
		dbgb_fire_value(b, 0, 0, 1, 1, 3, NAN, 0);
	}
	ASSERT_OK(fp_dbg_decode(b->w, dbgb_bytes(b), DESCENT_SITES, strlen(DESCENT_SITES), &run,
				NULL));
	return run;
}

TEST(debug_summary_descendants_across_launches)
{
	struct dbgb a, b, c;
	struct fp_dbg_run *ra, *rb, *rc;
	struct fp_dbg_summary *s;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *fs, *f0, *f1;
	char path[512];
	size_t nf = 0;
	const char *lj;

	make_tmpdir();
	ra = descent_run(&a, 0x10000, true);
	rb = descent_run(&b, 0x80000, false); /* reads what launch 0 stored */
	rc = descent_run(&c, 0x40000, false); /* memory nobody wrote NaN into */
	ASSERT_OK(fp_dbg_summary_new(&s));
	lj = launch_json(0, "");
	fp_dbg_outputs_init(&out);
	ASSERT_OK(fp_dbg_report(ra, lj, strlen(lj), s, 0, 0, &out, &nf, NULL));
	ASSERT_EQ(nf, 1);
	fp_dbg_outputs_release(&out);
	lj = launch_json(1, "");
	ASSERT_OK(fp_dbg_report(rb, lj, strlen(lj), s, 1, 0, &out, &nf, NULL));
	ASSERT_EQ(nf, 0); /* its report (written: every report asked for) lists no finding */
	ASSERT_NOT_NULL(out.json);
	doc = read_json(out.json);
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_root(doc), "findings")), 0);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	lj = launch_json(2, "");
	ASSERT_OK(fp_dbg_report(rc, lj, strlen(lj), s, 2, FP_DBG_REPORT_FINDINGS_ONLY, &out, &nf,
				NULL));
	ASSERT_EQ(nf, 1);
	ASSERT_NOT_NULL(out.json);
	fp_dbg_outputs_release(&out);
	ASSERT_OK(fp_dbg_summary_write(s, tmpdir, NULL));
	snprintf(path, sizeof(path), "%s/summary.json", tmpdir);
	doc = read_json(path);
	fs = fp_json_get(fp_json_root(doc), "findings");
	ASSERT_EQ(fp_json_len(fs), 2);
	f0 = fp_json_at(fs, 0);
	ASSERT_STREQ(jstr(f0, "kind"), "nan_origin");
	ASSERT_EQ(u64(f0, "line"), 14);
	ASSERT_EQ(u64(f0, "launch"), 0);
	ASSERT(fp_json_type(fp_json_get(f0, "from_memory")) == FP_JSON_FALSE);
	ASSERT_EQ(u64(f0, "descendants"), 1);
	f1 = fp_json_at(fs, 1);
	ASSERT_EQ(u64(f1, "line"), 12);
	ASSERT_EQ(u64(f1, "launch"), 2);
	ASSERT(fp_json_type(fp_json_get(f1, "from_memory")) == FP_JSON_TRUE);
	ASSERT_EQ(u64(f1, "descendants"), 0);
	ASSERT_EQ(u64(fp_json_get(fp_json_root(doc), "dropped"), "nan_links"), 0);
	fp_json_doc_free(doc);
	fp_dbg_summary_free(s);
	fp_dbg_run_free(ra);
	fp_dbg_run_free(rb);
	fp_dbg_run_free(rc);
	dbgb_free(&a);
	dbgb_free(&b);
	dbgb_free(&c);
	remove_tree(tmpdir);
}
