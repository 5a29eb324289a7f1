/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of <flagprism/debug-keys.h>, the member names the Debugger's writers and the HTML
 * report's reader share. The Debugger's outputs are written for real from the checks fixture
 * (test-debug.h): a statement report with level-2 dumps, an out-of-bounds finding and a
 * flattened site, its tensor_index.json, the run's summary, and that summary merged across ranks
 * and across pytest-xdist workers. Every key of FP_DBG_KEYS() must be found at its place in
 * them, and no key of FP_DBG_KEYS_UNWRITTEN(); every definition of the header must be in one of
 * the two lists; and html-debug.c / html-dumps.c must ask for no member by a literal name. So a
 * member the reader reads is one the writers write. Finally the HTML report reads the outputs
 * back and finds the launch, its statements, sites, findings and dumps.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/debug-keys.h>
#include <flagprism/debug-summary.h>
#include <flagprism/debug.h>
#include <flagprism/html.h>
#include <flagprism/json.h>
#include <flagprism/ranks.h>
#include <flagprism/strbuf.h>

#include "test.h"
#include "test-debug.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the lists -------------------------------------------------------------------------------- */

struct key {
	const char *object, *name, *key;
};

#define KEY(o, n) {#o, #n, FP_DBG_KEY_##o##_##n},
static const struct key written[] = {FP_DBG_KEYS(KEY)};
static const struct key unwritten[] = {FP_DBG_KEYS_UNWRITTEN(KEY)};
#undef KEY

enum doc {
	DOC_REPORT,  /* <stem>.json */
	DOC_INDEX,   /* tensor_index.json */
	DOC_SUMMARY, /* summary.json: of one process, merged across ranks, across workers */
	NDOCS
};

/*
 * Where each object of the lists is, as a path of members from the document's root: "a.b" is
 * member b of member a, "a[]" every element of array a. A key must be in at least one object at
 * one of its object's places (a site's "access" is only in "memory", an instance's "summary"
 * only in "results").
 */
#define STMTS FP_DBG_KEY_REPORT_STATEMENTS "[]."
#define RESULTS STMTS FP_DBG_KEY_STATEMENT_RESULTS "[]"
#define MEMORY STMTS FP_DBG_KEY_STATEMENT_MEMORY "[]"
#define FINDINGS FP_DBG_KEY_REPORT_FINDINGS "[]"
#define ARGS FP_DBG_KEY_REPORT_ARGS "[]"
static const struct place {
	const char *object;
	enum doc doc;
	const char *path;
} places[] = {
	{"REPORT", DOC_REPORT, ""},
	{"KERNEL", DOC_REPORT, FP_DBG_KEY_REPORT_KERNEL},
	{"CONFIG", DOC_REPORT, FP_DBG_KEY_REPORT_CONFIG},
	{"ARTIFACTS", DOC_REPORT, FP_DBG_KEY_REPORT_ARTIFACTS},
	{"ARG", DOC_REPORT, ARGS},
	{"RANGE", DOC_REPORT, ARGS "." FP_DBG_KEY_ARG_VIEW},
	{"RANGE", DOC_REPORT, ARGS "." FP_DBG_KEY_ARG_STORAGE},
	{"RANGE", DOC_REPORT, FINDINGS "." FP_DBG_KEY_FINDING_VIEW},
	{"RANGE", DOC_REPORT, FINDINGS "." FP_DBG_KEY_FINDING_STORAGE},
	{"STATEMENT", DOC_REPORT, FP_DBG_KEY_REPORT_STATEMENTS "[]"},
	{"READ", DOC_REPORT, STMTS FP_DBG_KEY_STATEMENT_READS "[]"},
	{"SITE", DOC_REPORT, RESULTS},
	{"SITE", DOC_REPORT, MEMORY},
	{"INSTANCE", DOC_REPORT, RESULTS "." FP_DBG_KEY_SITE_INSTANCES "[]"},
	{"INSTANCE", DOC_REPORT, MEMORY "." FP_DBG_KEY_SITE_INSTANCES "[]"},
	{"VALUE", DOC_REPORT,
	 RESULTS "." FP_DBG_KEY_SITE_INSTANCES "[]." FP_DBG_KEY_INSTANCE_SUMMARY},
	{"ADDRESS", DOC_REPORT,
	 MEMORY "." FP_DBG_KEY_SITE_INSTANCES "[]." FP_DBG_KEY_INSTANCE_ADDRESS_SUMMARY},
	{"FINDING", DOC_REPORT, FINDINGS},
	{"INDEX", DOC_INDEX, ""},
	{"DUMP", DOC_INDEX, FP_DBG_KEY_INDEX_ARTIFACTS "[]"},
	{"SUMMARY", DOC_SUMMARY, ""},
	{"SUMMARY_FINDING", DOC_SUMMARY, FP_DBG_KEY_SUMMARY_FINDINGS "[]"},
	{"MERGE", DOC_SUMMARY, FP_DBG_KEY_SUMMARY_RANKS},
	{"MERGE", DOC_SUMMARY, FP_DBG_KEY_SUMMARY_WORKERS},
	{"MERGE_INPUT", DOC_SUMMARY, FP_DBG_KEY_SUMMARY_RANKS "." FP_DBG_KEY_MERGE_INPUTS "[]"},
	{"MERGE_INPUT", DOC_SUMMARY, FP_DBG_KEY_SUMMARY_WORKERS "." FP_DBG_KEY_MERGE_INPUTS "[]"},
	{"SUMMARY_LAUNCH", DOC_SUMMARY, FP_DBG_KEY_SUMMARY_LAUNCHES "[]"},
};

/*
 * The objects at `path` below `v` (see places[]): *objects counts them, *hits those with member
 * `key` (any value, null included). A path through a missing member or a non-object finds none.
 */
static void visit(const struct fp_json_value *v, const char *path, const char *key, size_t *objects,
		  size_t *hits)
{
	char name[64];
	size_t n = strcspn(path, "."), len, i;
	bool each;

	if (!path[0]) {
		if (fp_json_type(v) != FP_JSON_OBJECT)
			return;
		(*objects)++;
		*hits += fp_json_get(v, key) != NULL;
		return;
	}
	each = n >= 2 && !memcmp(path + n - 2, "[]", 2);
	len = each ? n - 2 : n;
	ASSERT(len < sizeof(name));
	memcpy(name, path, len);
	name[len] = '\0';
	v = fp_json_get(v, name);
	path += n + (path[n] == '.');
	if (!each) {
		visit(v, path, key, objects, hits);
		return;
	}
	for (i = 0; fp_json_type(v) == FP_JSON_ARRAY && i < fp_json_len(v); i++)
		visit(fp_json_at(v, i), path, key, objects, hits);
}

/* ---- the outputs ------------------------------------------------------------------------------ */

#define NSUMMARIES 3

struct outputs {
	char dir[256];
	char summary[NSUMMARIES][512]; /* one process's, merged by rank, merged by worker */
	struct fp_dbg_outputs out;     /* the launch's report and dumps */
	size_t nfindings;
};

static void make_dir(const char *dir, const char *sub, char *out, size_t cap)
{
	ASSERT((size_t)snprintf(out, cap, "%s/%s", dir, sub) < cap);
	ASSERT(mkdir(out, 0700) == 0);
}

static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	ASSERT_NOT_NULL(f);
	ASSERT_EQ(fwrite(text, 1, len, f), len);
	ASSERT_EQ(fclose(f), 0);
}

/* summary.json of `s` as text (free()). */
static char *summary_text(struct fp_dbg_summary *s, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_dbg_summary_write_format(s, "json", f, NULL));
	ASSERT_EQ(fclose(f), 0);
	return text;
}

/*
 * One launch of the checks fixture with every output a reader reads: level-2 dumps (the arena),
 * a store past y's end (an out-of-bounds finding with its view and storage) beside the NaN read
 * from memory, and y's records flattened from rank 5 (the site's "rank"). Its report goes to
 * `dir`/out, the summary to `dir`/one, `dir`/ranks (two ranks, merged) and `dir`/workers (one
 * worker's part, merged under an empty controlling summary).
 */
static void write_outputs(struct outputs *o)
{
	static const char *const rank_names[] = {"d/rank0/summary.json", "d/rank1/summary.json"};
	char launch[1024], sub[384], part[512];
	const char *texts[2];
	size_t lens[2], len;
	struct fp_dbg_summary *s, *base;
	struct fp_dbg_summary_parts_report prep;
	struct fp_ranks_summary_report rrep;
	struct fp_dbg_run *run = NULL;
	struct fp_diag d;
	struct dbgb b;
	const char *partp;
	char *text, *merged = NULL;
	FILE *f;
	uint64_t p;

	memset(o, 0, sizeof(*o));
	snprintf(o->dir, sizeof(o->dir), "/tmp/fp-test-keys-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(o->dir));
	dbgb_fixture_checks(&b, true, 64);
	dbgb_fire(&b, 3, 2, 3, 1, 2, DBGB_Y + 48, DBGB_Y + 48, DBGB_Y + 52, 0);
	for (p = 0; p < DBGB_NP; p++) /* rank 5 in word 0's ndim, the flattened flag */
		*dbgb_slot(&b, p, 2) = (*dbgb_slot(&b, p, 2) & ~(UINT64_C(0xff) << 32)) |
				       (UINT64_C(5) << 32) | (UINT64_C(1) << 36);
	ASSERT_OK(fp_dbg_decode(b.w, dbgb_bytes(&b), DBGB_SITES_CHECKS, strlen(DBGB_SITES_CHECKS),
				&run, &d));
	/* x_ptr: 48 bytes in 4 KiB, y_ptr: 48 bytes of its own (as the check area's tensor table) */
	snprintf(launch, sizeof(launch),
		 "{\"version\": 1, \"output_dir\": \"%s/out\", \"script\": \"demo\","
		 " \"kernel\": \"add_kernel\", \"timestamp\": \"t\", \"run\": 0, \"grid\": [3],"
		 " \"backend\": \"interpreter\", \"source_file\": \"/u/add.py\", \"args\": ["
		 "{\"name\": \"x_ptr\", \"kind\": \"tensor\", \"shape\": [12], \"strides\": [1],"
		 " \"element_size\": 4, \"data_ptr\": %" PRIu64 ", \"storage_ptr\": %" PRIu64 ","
		 " \"storage_nbytes\": 4096},"
		 "{\"name\": \"y_ptr\", \"kind\": \"tensor\", \"shape\": [12], \"strides\": [1],"
		 " \"element_size\": 4, \"data_ptr\": %" PRIu64 ", \"storage_ptr\": %" PRIu64 ","
		 " \"storage_nbytes\": 48}]}",
		 o->dir, DBGB_X, DBGB_X, DBGB_Y, DBGB_Y);
	ASSERT_OK(fp_dbg_summary_new(&s));
	fp_dbg_outputs_init(&o->out);
	fp_diag_clear(&d);
	if (fp_dbg_report(run, launch, strlen(launch), s, 0, 0, &o->out, &o->nfindings, &d))
		fpt_fail(__FILE__, __LINE__, "fp_dbg_report: %s", d.msg);
	ASSERT_NOT_NULL(o->out.json);
	ASSERT_NOT_NULL(o->out.tensor_index);
	ASSERT_EQ(o->nfindings, 2); /* the NaN read from memory, the store out of bounds */

	/* one process */
	make_dir(o->dir, "one", sub, sizeof(sub));
	ASSERT_OK(fp_dbg_summary_write(s, sub, NULL));
	snprintf(o->summary[0], sizeof(o->summary[0]), "%s/summary.json", sub);

	/* two ranks: the same summary twice, ranked by path */
	texts[0] = texts[1] = text = summary_text(s, &len);
	lens[0] = lens[1] = len;
	make_dir(o->dir, "ranks", sub, sizeof(sub));
	snprintf(o->summary[1], sizeof(o->summary[1]), "%s/summary.json", sub);
	f = open_memstream(&merged, &len);
	ASSERT_NOT_NULL(f);
	fp_diag_clear(&d);
	if (fp_ranks_merge_summary_texts(texts, lens, rank_names, 2, f, NULL, &rrep, &d))
		fpt_fail(__FILE__, __LINE__, "rank merge: %s", d.msg);
	ASSERT_EQ(fclose(f), 0);
	write_text(o->summary[1], merged, len);
	free(merged);
	free(text);

	/* a test session: worker gw0's part, merged under the controlling process's summary */
	make_dir(o->dir, "workers", sub, sizeof(sub));
	make_dir(sub, "gw0", part, sizeof(part));
	ASSERT_OK(fp_dbg_summary_set(s, "worker", "gw0"));
	ASSERT_OK(fp_dbg_summary_write(s, part, NULL));
	ASSERT_OK(fp_dbg_summary_new(&base));
	partp = part;
	fp_diag_clear(&d);
	if (fp_dbg_summary_write_parts(base, sub, &partp, 1, NULL, 0, &prep, &d))
		fpt_fail(__FILE__, __LINE__, "worker merge: %s", d.msg);
	snprintf(o->summary[2], sizeof(o->summary[2]), "%s/summary.json", sub);

	fp_dbg_summary_free(base);
	fp_dbg_summary_free(s);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

static void outputs_release(struct outputs *o)
{
	char cmd[600];

	fp_dbg_outputs_release(&o->out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", o->dir);
	ASSERT_EQ(system(cmd), 0);
}

/* ---- the tests -------------------------------------------------------------------------------- */

/* Objects and hits of `k` over every place of its object in `docs`. */
static void find(const struct key *k, struct fp_json_doc *docs[][NSUMMARIES], size_t *objects,
		 size_t *hits)
{
	size_t i, j, places_found = 0;

	*objects = *hits = 0;
	for (i = 0; i < LEN(places); i++) {
		if (strcmp(places[i].object, k->object))
			continue;
		places_found++;
		for (j = 0; j < NSUMMARIES && docs[places[i].doc][j]; j++)
			visit(fp_json_root(docs[places[i].doc][j]), places[i].path, k->key, objects,
			      hits);
	}
	if (!places_found)
		fpt_fail(__FILE__, __LINE__, "object %s has no place in places[]", k->object);
}

TEST(debug_keys_written_where_read)
{
	struct fp_json_doc *docs[NDOCS][NSUMMARIES] = {{NULL}};
	struct outputs o;
	size_t i, j, objects, hits;

	write_outputs(&o);
	docs[DOC_REPORT][0] = fpt_json_file(o.out.json);
	docs[DOC_INDEX][0] = fpt_json_file(o.out.tensor_index);
	for (i = 0; i < NSUMMARIES; i++)
		docs[DOC_SUMMARY][i] = fpt_json_file(o.summary[i]);

	for (i = 0; i < LEN(written); i++) {
		find(&written[i], docs, &objects, &hits);
		if (!objects)
			fpt_fail(__FILE__, __LINE__, "no %s object in the outputs (for %s)",
				 written[i].object, written[i].key);
		if (!hits)
			fpt_fail(__FILE__, __LINE__,
				 "FP_DBG_KEY_%s_%s (\"%s\") is read but no writer wrote it (%zu %s "
				 "objects)",
				 written[i].object, written[i].name, written[i].key, objects,
				 written[i].object);
	}
	for (i = 0; i < LEN(unwritten); i++) {
		find(&unwritten[i], docs, &objects, &hits);
		if (hits)
			fpt_fail(
				__FILE__, __LINE__,
				"FP_DBG_KEY_%s_%s (\"%s\") is written now: move it to FP_DBG_KEYS()",
				unwritten[i].object, unwritten[i].name, unwritten[i].key);
	}
	/* every place with a written key's object is in the outputs (no stale path) */
	for (i = 0; i < LEN(places); i++) {
		bool used = false;

		for (j = 0; j < LEN(written) && !used; j++)
			used = !strcmp(written[j].object, places[i].object);
		objects = hits = 0;
		for (j = 0; j < NSUMMARIES && docs[places[i].doc][j]; j++)
			visit(fp_json_root(docs[places[i].doc][j]), places[i].path, "", &objects,
			      &hits);
		if (used && !objects)
			fpt_fail(__FILE__, __LINE__, "nothing at %s", places[i].path);
	}
	for (i = 0; i < NDOCS; i++)
		for (j = 0; j < NSUMMARIES; j++)
			fp_json_doc_free(docs[i][j]);
	outputs_release(&o);
}

static char *source(const char *path)
{
	struct fp_strbuf sb;

	fp_strbuf_init(&sb, 0);
	if (fp_strbuf_read_file(&sb, path, NULL))
		fpt_fail(__FILE__, __LINE__, "cannot read %s", path);
	return fp_strbuf_detach(&sb, NULL);
}

/* Every "#define FP_DBG_KEY_<OBJECT>_<NAME>" of the header is in exactly one of the lists. */
TEST(debug_keys_lists_are_whole)
{
	char *text = source(FP_TEST_SOURCE_DIR "/include/flagprism/debug-keys.h"), *s, name[128];
	static const char def[] = "\n#define FP_DBG_KEY_";
	size_t defines = 0, i, n, found;
	const struct key *k;

	for (s = strstr(text, def); s; s = strstr(s + 1, def)) {
		n = strcspn(s + 1 + strlen("#define "), " \t\n");
		ASSERT(n < sizeof(name));
		memcpy(name, s + 1 + strlen("#define "), n);
		name[n] = '\0';
		defines++;
		found = 0;
		for (i = 0; i < LEN(written) + LEN(unwritten); i++) {
			char full[128];

			k = i < LEN(written) ? &written[i] : &unwritten[i - LEN(written)];
			snprintf(full, sizeof(full), "FP_DBG_KEY_%s_%s", k->object, k->name);
			found += !strcmp(full, name);
		}
		if (found != 1)
			fpt_fail(
				__FILE__, __LINE__,
				"%s is in %zu entries of FP_DBG_KEYS() and FP_DBG_KEYS_UNWRITTEN() "
				"(one expected)",
				name, found);
	}
	ASSERT_EQ(defines, LEN(written) + LEN(unwritten));
	fp_free(text);
}

/*
 * The HTML report's readers of the Debugger's outputs ask for members only through the header:
 * no get(obj, "literal") or fp_json_get(obj, "literal") in html-debug.c and html-dumps.c.
 */
TEST(debug_keys_html_reads_no_literal_member)
{
	static const char *const files[] = {FP_TEST_SOURCE_DIR "/src/html/html-debug.c",
					    FP_TEST_SOURCE_DIR "/src/html/html-dumps.c"};
	size_t i, calls;

	for (i = 0; i < LEN(files); i++) {
		char *text = source(files[i]), *s, *c;
		int depth;

		calls = 0;
		for (s = strstr(text, "get("); s; s = strstr(s + 1, "get(")) {
			if (s > text && (s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z')) &&
			    !(s - text >= 8 && !memcmp(s - 8, "fp_json_", 8)))
				continue; /* another name ending in "get" */
			/* the second argument: after the first comma outside parentheses */
			for (c = s + 4, depth = 0; *c && !(depth == 0 && (*c == ',' || *c == ')'));
			     c++)
				depth += (*c == '(') - (*c == ')');
			if (*c != ',')
				continue; /* a declaration or a one-argument call */
			calls++;
			c += 1 + strspn(c + 1, " \t\n");
			if (*c == '"') {
				int line = 1;
				const char *t;

				for (t = text; t < s; t++)
					line += *t == '\n';
				fpt_fail(__FILE__, __LINE__,
					 "%s:%d: a member named by a literal: use "
					 "<flagprism/debug-keys.h>",
					 files[i], line);
			}
		}
		ASSERT_GT(calls, 0); /* the scan sees the reads */
		fp_free(text);
	}
}

/* The HTML report reads what was written: the launch the summary names, with its dumps. */
TEST(debug_keys_html_reads_the_outputs)
{
	struct fp_html_page *page;
	struct fp_html_stats st;
	struct outputs o;
	struct fp_diag d;
	size_t i;

	write_outputs(&o);
	ASSERT_OK(fp_html_page_new(FP_HTML_DEBUGGER, NULL, &page));
	fp_diag_clear(&d);
	if (fp_html_debug_read(page, o.summary[0], &d))
		fpt_fail(__FILE__, __LINE__, "report: %s", d.msg);
	fp_html_page_stats(page, &st);
	for (i = 0; i < fp_html_page_note_count(page); i++)
		fprintf(stderr, "note: %s\n", fp_html_page_note_at(page, i));
	ASSERT_EQ(st.launches, 1);
	ASSERT_EQ(st.statements, 3);
	ASSERT_EQ(st.sites, 4);
	ASSERT_EQ(st.findings, o.nfindings);
	ASSERT_GT(st.dumps, 0);
	ASSERT_EQ(st.notes, 0);
	fp_html_page_free(page);
	outputs_release(&o);
}
