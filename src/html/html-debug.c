/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's side of the HTML report: reads per-launch reports (<stem>.json, schema in
 * docs/formats/debugger-report-schema.md), a run's summary.json, or a whole output directory, and turns
 * each launch into what the page shows. Per statement and site it aggregates every instance
 * (counts, min, max, mean; lanes and address ranges), per program cell of the grid (binned when
 * the grid has more programs than the page's cell budget) for the heatmaps, and per execution for
 * statements in loops; it places each memory access against the tensor argument it addresses,
 * finds the kernel's source lines, copies findings and coverage. Heatmaps and series go into
 * their own lazily parsed blocks. It asks for the reports' members only by the names the
 * writers use (<flagprism/debug-keys.h>). It does not decode record buffers (the reports are
 * its input) and it does not render (the page's script does).
 */
#include "fp-setup.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include <flagprism/debug-keys.h>
#include <flagprism/dtype.h>
#include <flagprism/json.h>

#include "html/html-internal.h"

#define SOURCE_MAX_BYTES ((size_t)16 << 20)
#define COPY_DEPTH 8
#define COPY_ITEMS 1000
#define COPY_STR 4096
#define MAX_ARGS 64
#define MAX_OOB_SITES 256
#define MAX_STMT_FINDINGS 4096
#define CONTEXT_LINES 3
#define DEF_SEARCH 200 /* lines searched above the first statement for the kernel's `def` */

struct arg {
	char name[128];
	double view_lo, view_hi, st_lo, st_hi; /* bytes, half-open; st_* 0 when unknown */
	double esize;
};

struct srcline {
	size_t off, len;
};

/* A finding's statement, for the statements' lists. */
struct sf {
	int64_t statement_id;
	size_t index; /* in the page's findings */
};

struct oob {
	int64_t site;
	char param[128];
};

/* One report being read. */
struct rep {
	struct fp_html_page *p;
	const struct fp_json_doc *doc;
	const struct fp_json_value *root;
	const char *path; /* may be NULL */
	char dir[4096];   /* of path */
	struct fp_diag *diag;
	const char *kernel;
	uint64_t grid[3], programs;
	uint64_t bx, by, nx, ny; /* cells */
	size_t launch;
	struct arg args[MAX_ARGS];
	size_t nargs;
	bool args_from_report;
	/* source */
	struct fp_strbuf src;
	struct srcline *lines;
	size_t nlines;
	char src_reason[512];
	uint64_t win_first, win_last; /* lines shown, 1-based inclusive; 0 when none */
	int64_t stmt_first, stmt_last;
	/* findings */
	struct sf *sfs;
	size_t nsfs;
	struct oob oobs[MAX_OOB_SITES];
	size_t noobs;
	size_t nfindings;
	size_t nsites, nstatements;
	uint64_t cut; /* copied values left out */
};

/* ---- small readers ----------------------------------------------------------------------- */

static const struct fp_json_value *get(const struct fp_json_value *o, const char *k)
{
	return fp_json_get(o, k);
}

static const char *str_or(const struct fp_json_value *v, const char *dflt)
{
	const char *s = fp_json_string(v, NULL);

	return s ? s : dflt;
}

static bool u64_of(const struct fp_json_value *v, uint64_t *out)
{
	return fp_json_uint64(v, out);
}

/* A number or null: *present false for null. false for anything else. */
static bool num_or_null(const struct fp_json_value *v, double *out, bool *present)
{
	if (fp_json_type(v) == FP_JSON_NULL) {
		*present = false;
		return true;
	}
	*present = true;
	return fp_json_number(v, out);
}

static int bad(struct rep *r, const struct fp_json_value *v, const char *fmt, ...) FP_PRINTF(3, 4);

static int bad(struct rep *r, const struct fp_json_value *v, const char *fmt, ...)
{
	char msg[sizeof(r->diag->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fp__html_bad(r->diag, r->doc, v ? v : r->root, r->path, "%s", msg);
}

/* ---- the kernel's source ------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static int load_source(struct rep *r, const char *file)
{
	char full[4096];
	struct fp_diag d;
	size_t i, start, cap = 0;
	int rc;

	if (!r->p->o.read_sources) {
		snprintf(r->src_reason, sizeof(r->src_reason), "source files were not read");
		return FP_OK;
	}
	if (!file || !file[0]) {
		snprintf(r->src_reason, sizeof(r->src_reason), "the report names no source file");
		return FP_OK;
	}
	if (!ends_with(file, ".py")) {
		snprintf(r->src_reason, sizeof(r->src_reason),
			 "only .py files are read as kernel sources, not '%.400s'", file);
		return FP_OK;
	}
	if (!r->path && file[0] != '/') {
		snprintf(r->src_reason, sizeof(r->src_reason), "relative source path '%.400s'",
			 file);
		return FP_OK;
	}
	if (!fp__html_join(r->dir, file, full, sizeof(full))) {
		snprintf(r->src_reason, sizeof(r->src_reason), "source path too long");
		return FP_OK;
	}
	fp_strbuf_init(&r->src, SOURCE_MAX_BYTES);
	memset(&d, 0, sizeof(d));
	rc = fp_strbuf_read_path(&r->src, full, FP_STRBUF_READ_REGULAR, &d);
	if (rc == FP_ENOMEM)
		return rc;
	if (rc) {
		snprintf(r->src_reason, sizeof(r->src_reason), "%s",
			 rc == FP_ELIMIT ? "the source file is larger than 16 MB" : d.msg);
		fp_strbuf_release(&r->src);
		return FP_OK;
	}
	for (i = 0, start = 0; i <= r->src.len; i++) {
		if (i < r->src.len && r->src.buf[i] != '\n')
			continue;
		if (i == r->src.len && start == i)
			break;
		if (r->nlines == cap) {
			struct srcline *l;

			cap = cap ? cap * 2 : 256;
			l = fp_reallocarray(r->lines, cap, sizeof(*l));
			if (!l)
				return FP_ENOMEM;
			r->lines = l;
		}
		r->lines[r->nlines].off = start;
		r->lines[r->nlines].len = i - start;
		if (r->lines[r->nlines].len && r->src.buf[i - 1] == '\r')
			r->lines[r->nlines].len--;
		r->nlines++;
		start = i + 1;
	}
	return FP_OK;
}

static const char *line_text(const struct rep *r, uint64_t line, size_t *len)
{
	*len = 0;
	if (line < 1 || line > r->nlines)
		return NULL;
	*len = r->lines[line - 1].len;
	return r->src.buf + r->lines[line - 1].off;
}

static size_t indent_of(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

static bool blank(const char *s, size_t n)
{
	return indent_of(s, n) == n;
}

/*
 * The lines to show: from the kernel's `def` (and its decorators) above the first statement to
 * the end of its body below the last, at most max_source_lines; without a `def` nearby, the
 * statements with a few lines of context.
 */
static void source_window(struct rep *r)
{
	uint64_t first, last, l, max = r->p->o.max_source_lines;
	char pat[160];
	size_t len, ind, dind = 0, plen;
	const char *s;
	bool found = false;

	if (!r->nlines || r->stmt_first < 1)
		return;
	first = (uint64_t)r->stmt_first;
	last = (uint64_t)r->stmt_last;
	if (first > r->nlines)
		return;
	if (last > r->nlines)
		last = r->nlines;
	plen = (size_t)snprintf(pat, sizeof(pat), "def %s(", r->kernel ? r->kernel : "");
	for (l = first; l >= 1 && first - l <= DEF_SEARCH; l--) {
		s = line_text(r, l, &len);
		ind = indent_of(s, len);
		if (r->kernel && len - ind >= plen && memcmp(s + ind, pat, plen) == 0) {
			found = true;
			dind = ind;
			first = l;
			break;
		}
	}
	if (found) {
		while (first > 1) { /* decorators */
			s = line_text(r, first - 1, &len);
			ind = indent_of(s, len);
			if (ind < len && s[ind] == '@')
				first--;
			else
				break;
		}
		/* the body: lines indented deeper than the def, or blank */
		for (l = last + 1; l <= r->nlines; l++) {
			s = line_text(r, l, &len);
			if (!blank(s, len) && indent_of(s, len) <= dind)
				break;
			last = l;
		}
		while (last > first && (s = line_text(r, last, &len)) && blank(s, len))
			last--;
	} else {
		first = first > CONTEXT_LINES ? first - CONTEXT_LINES : 1;
		last = last + CONTEXT_LINES <= r->nlines ? last + CONTEXT_LINES : r->nlines;
	}
	if (last - first + 1 > max) {
		fp_html_page_note(r->p,
				  "%s: source lines %" PRIu64 "-%" PRIu64 " shown of %" PRIu64
				  "-%" PRIu64 " (at most %" PRIu64 " lines)",
				  r->kernel ? r->kernel : "kernel", first, first + max - 1, first,
				  last, max);
		last = first + max - 1;
	}
	r->win_first = first;
	r->win_last = last;
}

static void write_source(struct rep *r, struct fp_jsonw *w, const char *file)
{
	uint64_t l;
	size_t len;
	const char *s;

	fp_jsonw_key(w, "source");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "file", file);
	fp_jsonw_kv_bool(w, "available", r->win_first != 0);
	fp_jsonw_key(w, "reason");
	if (r->win_first)
		fp_jsonw_null(w);
	else
		fp_jsonw_string(w, r->src_reason[0] ? r->src_reason :
						      "the statements' lines are not in the file");
	fp_jsonw_kv_uint(w, "first_line", r->win_first);
	fp_jsonw_key(w, "lines");
	fp_jsonw_array_begin(w);
	for (l = r->win_first; l && l <= r->win_last; l++) {
		s = line_text(r, l, &len);
		fp_jsonw_string_n(w, s, len);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

/* ---- tensor arguments ---------------------------------------------------------------------- */

static bool range_of(const struct fp_json_value *o, double *lo, double *hi)
{
	return fp_json_number(get(o, FP_DBG_KEY_RANGE_START), lo) &&
	       fp_json_number(get(o, FP_DBG_KEY_RANGE_END), hi) && *lo <= *hi;
}

static struct arg *arg_find(struct rep *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nargs; i++)
		if (strcmp(r->args[i].name, name) == 0)
			return &r->args[i];
	return NULL;
}

/* From the report's "args" (written since format 1 with this member), else from the views and
 * storages out-of-bounds findings name. */
static int read_args(struct rep *r)
{
	const struct fp_json_value *args = get(r->root, FP_DBG_KEY_REPORT_ARGS), *a, *f;
	const struct fp_json_value *findings = get(r->root, FP_DBG_KEY_REPORT_FINDINGS);
	size_t i, n;
	struct arg *x;
	const char *name;

	if (fp_json_type(args) == FP_JSON_ARRAY) {
		r->args_from_report = true;
		n = fp_json_len(args);
		for (i = 0; i < n; i++) {
			a = fp_json_at(args, i);
			name = fp_json_string(get(a, FP_DBG_KEY_ARG_NAME), NULL);
			if (!name)
				return bad(r, a, "args[%zu]: no 'name' string", i);
			if (r->nargs == MAX_ARGS) {
				r->cut++;
				continue;
			}
			x = &r->args[r->nargs];
			memset(x, 0, sizeof(*x));
			snprintf(x->name, sizeof(x->name), "%s", name);
			if (!range_of(get(a, FP_DBG_KEY_ARG_VIEW), &x->view_lo, &x->view_hi))
				return bad(r, a, "args[%zu]: 'view' needs numbers 'start' <= 'end'",
					   i);
			if (fp_json_type(get(a, FP_DBG_KEY_ARG_STORAGE)) != FP_JSON_NULL &&
			    !range_of(get(a, FP_DBG_KEY_ARG_STORAGE), &x->st_lo, &x->st_hi))
				return bad(r, a,
					   "args[%zu]: 'storage' needs numbers 'start' <= 'end' or "
					   "null",
					   i);
			fp_json_number(get(a, FP_DBG_KEY_ARG_ELEMENT_SIZE), &x->esize);
			r->nargs++;
		}
		return FP_OK;
	}
	n = fp_json_len(findings);
	for (i = 0; i < n && r->nargs < MAX_ARGS; i++) {
		f = fp_json_at(findings, i);
		name = fp_json_string(get(f, FP_DBG_KEY_FINDING_PARAM), NULL);
		if (!name || arg_find(r, name) ||
		    strcmp(str_or(get(f, FP_DBG_KEY_FINDING_KIND), ""), "out_of_bounds") != 0)
			continue;
		x = &r->args[r->nargs];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", name);
		if (!range_of(get(f, FP_DBG_KEY_FINDING_VIEW), &x->view_lo, &x->view_hi))
			continue;
		range_of(get(f, FP_DBG_KEY_FINDING_STORAGE), &x->st_lo, &x->st_hi);
		r->nargs++;
	}
	return FP_OK;
}

static void write_args(struct rep *r, struct fp_jsonw *w)
{
	size_t i;

	fp_jsonw_key(w, "args");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->nargs; i++) {
		const struct arg *a = &r->args[i];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", a->name);
		fp_jsonw_key(w, "view");
		fp_jsonw_array_begin(w);
		fp_jsonw_double(w, a->view_lo);
		fp_jsonw_double(w, a->view_hi);
		fp_jsonw_array_end(w);
		fp_jsonw_key(w, "storage");
		if (a->st_hi > a->st_lo) {
			fp_jsonw_array_begin(w);
			fp_jsonw_double(w, a->st_lo);
			fp_jsonw_double(w, a->st_hi);
			fp_jsonw_array_end(w);
		} else {
			fp_jsonw_null(w);
		}
		fp_jsonw_key(w, "element_size");
		if (a->esize > 0)
			fp_jsonw_double(w, a->esize);
		else
			fp_jsonw_null(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_kv_string(w, "args_from",
			   r->args_from_report ? "report" :
			   r->nargs            ? "findings" :
						 "none");
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/*
 * The argument an access addresses: the one an out-of-bounds finding names; else the one whose
 * view (then storage) holds the whole range; else the one the pointer expression starts with;
 * else the nearest view. *how says which.
 */
static const struct arg *arg_of_access(struct rep *r, int64_t site, const char *name, double lo,
				       double hi, bool have, const char **how)
{
	const struct arg *best = NULL;
	double d, bd = INFINITY;
	size_t i, n;

	for (i = 0; i < r->noobs; i++)
		if (r->oobs[i].site == site) {
			best = arg_find(r, r->oobs[i].param);
			if (best) {
				*how = "finding";
				return best;
			}
		}
	if (have) {
		for (i = 0; i < r->nargs; i++)
			if (lo >= r->args[i].view_lo && hi <= r->args[i].view_hi) {
				*how = "view";
				return &r->args[i];
			}
		for (i = 0; i < r->nargs; i++)
			if (r->args[i].st_hi > r->args[i].st_lo && lo >= r->args[i].st_lo &&
			    hi <= r->args[i].st_hi) {
				*how = "storage";
				return &r->args[i];
			}
	}
	for (i = 0; name && i < r->nargs; i++) {
		n = strlen(r->args[i].name);
		if (strncmp(name, r->args[i].name, n) == 0 && !ident_char(name[n])) {
			*how = "name";
			return &r->args[i];
		}
	}
	for (i = 0; have && i < r->nargs; i++) {
		d = lo >= r->args[i].view_hi ? lo - r->args[i].view_hi :
		    hi <= r->args[i].view_lo ? r->args[i].view_lo - hi :
					       0;
		if (d < bd) {
			bd = d;
			best = &r->args[i];
		}
	}
	*how = best ? "nearest" : NULL;
	return best;
}

/* ---- findings ------------------------------------------------------------------------------ */

static int write_finding(struct rep *r, const struct fp_json_value *f)
{
	struct fp_html_page *p = r->p;
	const struct fp_json_value *m;
	struct fp_jsonw *w;
	const char *s, *key;
	size_t j, len, klen;
	int64_t line = 0;
	int rc;

	/* one comma-separated list over all launches (main_data() wraps it in an array) */
	if (p->findings.len && (rc = fp_strbuf_addch(&p->findings, ',')) != FP_OK)
		return rc;
	w = fp_jsonw_new_strbuf(&p->findings, 0);
	if (!w)
		return FP_ENOMEM;
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "launch", r->launch);
	fp_jsonw_kv_string(w, "kernel", r->kernel);
	for (j = 0; j < fp_json_len(f); j++) {
		m = fp_json_member(f, j, &key, &klen);
		if ((klen == 6 && memcmp(key, "launch", 6) == 0) ||
		    (klen == 6 && memcmp(key, "kernel", 6) == 0) ||
		    (klen == 11 && memcmp(key, "source_line", 11) == 0))
			continue;
		fp_jsonw_key_n(w, key, klen);
		fp__html_copy_json(w, m, 3, 64, COPY_STR, &r->cut);
	}
	/* the line of the kernel's file, else the statement's own text */
	fp_jsonw_key(w, "source_line");
	fp_json_int64(get(f, FP_DBG_KEY_FINDING_LINE), &line);
	s = line > 0 ? line_text(r, (uint64_t)line, &len) : NULL;
	if (s)
		fp_jsonw_string_n(w, s + indent_of(s, len), len - indent_of(s, len));
	else
		fp__html_copy_json(w, get(f, FP_DBG_KEY_FINDING_STATEMENT), 0, 0, COPY_STR,
				   &r->cut);
	fp_jsonw_object_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	return rc;
}

static int read_findings(struct rep *r)
{
	const struct fp_json_value *fs = get(r->root, FP_DBG_KEY_REPORT_FINDINGS), *f;
	struct fp_html_page *p = r->p;
	size_t i, n;
	int64_t sid, site;
	const char *s, *kind;
	int rc;

	if (fp_json_type(fs) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(fs) != FP_JSON_ARRAY)
		return bad(r, fs, "'findings' must be an array");
	n = fp_json_len(fs);
	for (i = 0; i < n; i++) {
		f = fp_json_at(fs, i);
		kind = fp_json_string(get(f, FP_DBG_KEY_FINDING_KIND), NULL);
		if (fp_json_type(f) != FP_JSON_OBJECT || !kind ||
		    !fp_json_string(get(f, FP_DBG_KEY_FINDING_MESSAGE), NULL))
			return bad(r, f, "findings[%zu]: needs strings 'kind' and 'message'", i);
		p->st.findings_total++;
		r->nfindings++;
		site = -1;
		fp_json_int64(get(f, FP_DBG_KEY_FINDING_SITE), &site);
		s = fp_json_string(get(f, FP_DBG_KEY_FINDING_PARAM), NULL);
		if (s && strcmp(kind, "out_of_bounds") == 0 && r->noobs < MAX_OOB_SITES) {
			r->oobs[r->noobs].site = site;
			snprintf(r->oobs[r->noobs].param, sizeof(r->oobs[0].param), "%s", s);
			r->noobs++;
		}
		if (p->st.findings >= p->o.max_findings)
			continue; /* counted in findings_total; the page says how many it shows */
		rc = write_finding(r, f);
		if (rc)
			return rc;
		if (fp_json_int64(get(f, FP_DBG_KEY_FINDING_STATEMENT_ID), &sid) &&
		    r->nsfs < MAX_STMT_FINDINGS) {
			struct sf *x = fp_reallocarray(r->sfs, r->nsfs + 1, sizeof(*x));

			if (!x)
				return FP_ENOMEM;
			r->sfs = x;
			x[r->nsfs].statement_id = sid;
			x[r->nsfs].index = p->st.findings;
			r->nsfs++;
		}
		p->st.findings++;
	}
	return FP_OK;
}

/* ---- sites --------------------------------------------------------------------------------- */

enum {
	V_MIN,
	V_MAX,
	V_SUM,
	V_FIN,
	V_NAN,
	V_INF,
	V_ZERO,
	V_N
};
enum {
	A_ACTIVE,
	A_LANES,
	A_SPAN,
	A_LO,
	A_HI,
	A_N
};

struct agg {
	size_t n;
	uint32_t *cnt;
	double *v[V_N];
};

static void agg_release(struct agg *a)
{
	size_t i;

	fp_free(a->cnt);
	for (i = 0; i < V_N; i++)
		fp_free(a->v[i]);
	memset(a, 0, sizeof(*a));
}

static int agg_init(struct agg *a, size_t n, size_t k)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	a->n = n;
	a->cnt = fp_calloc(n ? n : 1, sizeof(*a->cnt));
	if (!a->cnt)
		return FP_ENOMEM;
	for (i = 0; i < k; i++) {
		a->v[i] = fp_calloc(n ? n : 1, sizeof(double));
		if (!a->v[i]) {
			agg_release(a);
			return FP_ENOMEM;
		}
	}
	return FP_OK;
}

/* Fold one instance's numbers x[] (k of them; NaN = absent) into slot i. */
static void fold_value(struct agg *a, size_t i, const double *x)
{
	bool first = a->cnt[i]++ == 0;

	if (first) {
		a->v[V_MIN][i] = x[V_MIN];
		a->v[V_MAX][i] = x[V_MAX];
	} else {
		if (!isnan(x[V_MIN]) && !(x[V_MIN] >= a->v[V_MIN][i]))
			a->v[V_MIN][i] = x[V_MIN];
		if (!isnan(x[V_MAX]) && !(x[V_MAX] <= a->v[V_MAX][i]))
			a->v[V_MAX][i] = x[V_MAX];
	}
	if (!isnan(x[V_SUM])) {
		a->v[V_SUM][i] += x[V_SUM];
		a->v[V_FIN][i] += x[V_FIN];
	}
	a->v[V_NAN][i] += x[V_NAN];
	a->v[V_INF][i] += x[V_INF];
	a->v[V_ZERO][i] += x[V_ZERO];
}

static void fold_addr(struct agg *a, size_t i, const double *x)
{
	bool first = a->cnt[i]++ == 0;

	a->v[A_ACTIVE][i] += x[A_ACTIVE];
	a->v[A_LANES][i] += x[A_LANES];
	if (first || x[A_SPAN] > a->v[A_SPAN][i])
		a->v[A_SPAN][i] = x[A_SPAN];
	if (first) {
		a->v[A_LO][i] = x[A_LO];
		a->v[A_HI][i] = x[A_HI];
	} else {
		if (!isnan(x[A_LO]) && !(x[A_LO] >= a->v[A_LO][i]))
			a->v[A_LO][i] = x[A_LO];
		if (!isnan(x[A_HI]) && !(x[A_HI] <= a->v[A_HI][i]))
			a->v[A_HI][i] = x[A_HI];
	}
}

struct site_in {
	const struct fp_json_value *obj;
	size_t si, ri; /* statement index, result/memory index */
	const char *list;
	bool access;
	int64_t line; /* the statement's */
};

/* Read instance `k` of a site into x[] and its program/execution. */
static int read_instance(struct rep *r, const struct site_in *s, const struct fp_json_value *inst,
			 size_t k, uint64_t xyz[3], uint64_t *exec, double *x)
{
	const struct fp_json_value *prog = get(inst, FP_DBG_KEY_INSTANCE_PROGRAM), *sm;
	uint64_t el, nan, inf, zero, act, lanes;
	double lo, hi, span, mean;
	bool pl, ph, pm;
	size_t d;

	if (fp_json_type(inst) != FP_JSON_OBJECT || fp_json_len(prog) != 3)
		return bad(r, inst,
			   "statements[%zu].%s[%zu].instances[%zu]: needs 'program' [x, y, z]",
			   s->si, s->list, s->ri, k);
	for (d = 0; d < 3; d++)
		if (!u64_of(fp_json_at(prog, d), &xyz[d]) || xyz[d] >= r->grid[d])
			return bad(r, prog,
				   "statements[%zu].%s[%zu].instances[%zu]: program id %zu is not "
				   "an integer in [0, %" PRIu64 ") (the grid)",
				   s->si, s->list, s->ri, k, d, r->grid[d]);
	if (!u64_of(get(inst, FP_DBG_KEY_INSTANCE_EXECUTION), exec) || *exec > UINT32_MAX)
		return bad(r, inst,
			   "statements[%zu].%s[%zu].instances[%zu]: 'execution' must be an "
			   "integer >= 0",
			   s->si, s->list, s->ri, k);
	if (s->access) {
		sm = get(inst, FP_DBG_KEY_INSTANCE_ADDRESS_SUMMARY);
		if (!u64_of(get(sm, FP_DBG_KEY_ADDRESS_ACTIVE_LANE_COUNT), &act) ||
		    !u64_of(get(sm, FP_DBG_KEY_ADDRESS_LANE_COUNT), &lanes) ||
		    !fp_json_number(get(sm, FP_DBG_KEY_ADDRESS_SPAN_BYTES), &span) ||
		    !num_or_null(get(sm, FP_DBG_KEY_ADDRESS_MIN_ADDR), &lo, &pl) ||
		    !num_or_null(get(sm, FP_DBG_KEY_ADDRESS_MAX_ADDR), &hi, &ph) || act > lanes ||
		    pl != ph || (pl && lo > hi) || span < 0)
			return bad(
				r, sm ? sm : inst,
				"statements[%zu].%s[%zu].instances[%zu]: 'address_summary' needs "
				"active_lane_count <= lane_count, address_span_bytes >= 0 and "
				"min_addr <= max_addr (numbers, or both null)",
				s->si, s->list, s->ri, k);
		x[A_ACTIVE] = (double)act;
		x[A_LANES] = (double)lanes;
		x[A_SPAN] = span;
		x[A_LO] = pl ? lo : NAN;
		x[A_HI] = ph ? hi : NAN;
		return FP_OK;
	}
	sm = get(inst, FP_DBG_KEY_INSTANCE_SUMMARY);
	if (!u64_of(get(sm, FP_DBG_KEY_VALUE_ELEMENT_COUNT), &el) ||
	    !u64_of(get(sm, FP_DBG_KEY_VALUE_NAN_COUNT), &nan) ||
	    !u64_of(get(sm, FP_DBG_KEY_VALUE_INF_COUNT), &inf) ||
	    !u64_of(get(sm, FP_DBG_KEY_VALUE_ZERO_COUNT), &zero) || nan > el || inf > el - nan ||
	    zero > el - nan - inf || !num_or_null(get(sm, FP_DBG_KEY_VALUE_MIN), &x[V_MIN], &pl) ||
	    !num_or_null(get(sm, FP_DBG_KEY_VALUE_MAX), &x[V_MAX], &ph) ||
	    !num_or_null(get(sm, FP_DBG_KEY_VALUE_MEAN), &mean, &pm) || pl != ph ||
	    (pl && x[V_MIN] > x[V_MAX]))
		return bad(r, sm ? sm : inst,
			   "statements[%zu].%s[%zu].instances[%zu]: 'summary' needs element, nan, "
			   "inf and zero counts (nan + inf + zero <= elements) and min <= max "
			   "(numbers, or both null)",
			   s->si, s->list, s->ri, k);
	if (!pl)
		x[V_MIN] = x[V_MAX] = NAN;
	x[V_FIN] = (double)(el - nan - inf);
	x[V_SUM] = pm ? mean * x[V_FIN] : NAN;
	x[V_NAN] = (double)nan;
	x[V_INF] = (double)inf;
	x[V_ZERO] = (double)zero;
	return FP_OK;
}

static int cells_json(struct fp_strbuf *sb, const struct agg *a, bool access)
{
	static const char *const vnames[] = {"min", "max", "mean", "nan", "inf", "zero"};
	static const char *const anames[] = {"active", "lanes", "span", "lo", "hi"};
	size_t i, m, nm = access ? A_N : 6;
	double x;
	int rc = fp_strbuf_addstr(sb, "\"count\":[");

	for (i = 0; i < a->n && !rc; i++)
		rc = fp_strbuf_addf(sb, i ? ",%" PRIu32 : "%" PRIu32, a->cnt[i]);
	rc = rc ? rc : fp_strbuf_addch(sb, ']');
	for (m = 0; m < nm && !rc; m++) {
		rc = fp_strbuf_addf(sb, ",\"%s\":[", access ? anames[m] : vnames[m]);
		for (i = 0; i < a->n && !rc; i++) {
			if (i)
				rc = fp_strbuf_addch(sb, ',');
			if (!a->cnt[i]) {
				rc = rc ? rc : fp_strbuf_add(sb, "null", 4);
				continue;
			}
			if (access)
				x = a->v[m][i];
			else if (m == 2)
				x = a->v[V_FIN][i] > 0 ? a->v[V_SUM][i] / a->v[V_FIN][i] : NAN;
			else
				x = a->v[m < 2 ? m : m + 1][i];
			rc = rc ? rc : fp__html_num(sb, x);
		}
		rc = rc ? rc : fp_strbuf_addch(sb, ']');
	}
	return rc;
}

/* Write one site: its aggregate inline, its cells and series into a block. */
static int site(struct rep *r, struct fp_jsonw *w, const struct site_in *s)
{
	const struct fp_json_value *o = s->obj, *insts = get(o, FP_DBG_KEY_SITE_INSTANCES), *inst;
	size_t k, n = fp_json_len(insts), nser = 0, cell;
	uint64_t xyz[3], exec, maxexec = 0, sid, ic;
	struct agg cells, ser, all;
	double x[V_N]; /* holds A_N values for accesses (A_N < V_N) */
	const char *dtype, *name, *how = NULL, *access;
	const struct arg *arg;
	struct fp_strbuf sb;
	char id[FP__HTML_BLOCK_ID];
	size_t block;
	int rc;

	if (fp_json_type(o) != FP_JSON_OBJECT || !u64_of(get(o, FP_DBG_KEY_SITE_ID), &sid))
		return bad(r, o, "statements[%zu].%s[%zu]: needs an integer 'site'", s->si, s->list,
			   s->ri);
	if (fp_json_type(insts) != FP_JSON_ARRAY && fp_json_type(insts) != FP_JSON_NULL)
		return bad(r, insts, "statements[%zu].%s[%zu]: 'instances' must be an array", s->si,
			   s->list, s->ri);
	name = fp_json_string(get(o, FP_DBG_KEY_SITE_NAME), NULL);
	dtype = fp_json_string(get(o, FP_DBG_KEY_SITE_DTYPE), NULL);
	access = fp_json_string(get(o, FP_DBG_KEY_SITE_ACCESS), NULL);
	/* pass 1: check every instance, find the executions */
	for (k = 0; k < n; k++) {
		rc = read_instance(r, s, fp_json_at(insts, k), k, xyz, &exec, x);
		if (rc)
			return rc;
		if (exec > maxexec)
			maxexec = exec;
	}
	if (n && maxexec > 0) {
		nser = maxexec + 1 > r->p->o.max_series ? r->p->o.max_series : maxexec + 1;
		if (maxexec + 1 > nser)
			fp_html_page_note(r->p,
					  "%s line %" PRId64 ": executions %zu to %" PRIu64
					  " of site %" PRIu64
					  " are not in its series (--max-series)",
					  r->kernel, s->line, nser, maxexec, sid);
	}
	rc = agg_init(&cells, (size_t)(r->nx * r->ny), s->access ? A_N : V_N);
	if (rc)
		return rc;
	rc = agg_init(&ser, nser, s->access ? A_N : V_N);
	if (rc)
		goto fail_cells;
	rc = agg_init(&all, 1, s->access ? A_N : V_N);
	if (rc)
		goto fail_ser;
	for (k = 0; k < n; k++) {
		inst = fp_json_at(insts, k);
		read_instance(r, s, inst, k, xyz, &exec, x);
		cell = (size_t)(xyz[0] / r->bx + (xyz[1] / r->by) * r->nx);
		if (s->access) {
			fold_addr(&cells, cell, x);
			fold_addr(&all, 0, x);
			if (exec < nser)
				fold_addr(&ser, (size_t)exec, x);
		} else {
			fold_value(&cells, cell, x);
			fold_value(&all, 0, x);
			if (exec < nser)
				fold_value(&ser, (size_t)exec, x);
		}
	}
	/* the heatmap and series block */
	fp_strbuf_init(&sb, 0);
	rc = fp_strbuf_addf(&sb, "{\"cells\":{\"nx\":%" PRIu64 ",\"ny\":%" PRIu64 ",", r->nx,
			    r->ny);
	rc = rc ? rc : cells_json(&sb, &cells, s->access);
	rc = rc ? rc : fp_strbuf_addstr(&sb, "},\"series\":");
	if (!rc && nser) {
		rc = fp_strbuf_addch(&sb, '{');
		rc = rc ? rc : cells_json(&sb, &ser, s->access);
		rc = rc ? rc : fp_strbuf_addch(&sb, '}');
	} else if (!rc) {
		rc = fp_strbuf_addstr(&sb, "null");
	}
	rc = rc ? rc : fp_strbuf_addch(&sb, '}');
	if (rc) {
		fp_strbuf_release(&sb);
		goto fail_all;
	}
	rc = fp__html_block_add(r->p, &sb, &block);
	if (rc)
		goto fail_all;
	fp__html_block_id(block, id);

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "site", sid);
	fp_jsonw_kv_string(w, "kind", s->access ? (access ? access : "access") : "value");
	fp_jsonw_kv_string(w, "name", name);
	fp_jsonw_kv_string(w, "dtype", dtype);
	fp_jsonw_key(w, "shape");
	fp__html_copy_json(w, get(o, FP_DBG_KEY_SITE_SHAPE), 1, 8, 64, &r->cut);
	if (get(o, FP_DBG_KEY_SITE_RANK)) {
		fp_jsonw_key(w, "rank");
		fp__html_copy_json(w, get(o, FP_DBG_KEY_SITE_RANK), 0, 0, 64, &r->cut);
	}
	fp_jsonw_kv_uint(w, "instance_count",
			 u64_of(get(o, FP_DBG_KEY_SITE_INSTANCE_COUNT), &ic) ? ic : (uint64_t)n);
	fp_jsonw_kv_uint(w, "instances", n);
	fp_jsonw_kv_uint(w, "executions", n ? maxexec + 1 : 0);
	fp_jsonw_kv_uint(w, "series", nser);
	fp_jsonw_kv_string(w, "block", id);
	fp_jsonw_key(w, "agg");
	fp_jsonw_object_begin(w);
	if (s->access) {
		double lo = all.v[A_LO][0], hi = all.v[A_HI][0];
		bool have = n && !isnan(lo) && !isnan(hi);
		enum fp_dtype dt;
		double es = dtype && fp_dtype_from_name(dtype, &dt) == FP_OK ?
				    (double)fp_dtype_size(dt) :
				    0;

		fp_jsonw_kv_double(w, "active", all.v[A_ACTIVE][0]);
		fp_jsonw_kv_double(w, "lanes", all.v[A_LANES][0]);
		fp_jsonw_kv_double(w, "span", n ? all.v[A_SPAN][0] : 0);
		fp_jsonw_kv_double(w, "lo", have ? lo : NAN);
		fp_jsonw_kv_double(w, "hi", have ? hi : NAN);
		fp_jsonw_key(w, "element_size");
		if (es > 0)
			fp_jsonw_double(w, es);
		else
			fp_jsonw_null(w);
		fp_jsonw_object_end(w);
		arg = arg_of_access(r, (int64_t)sid, name, lo, hi + (es > 0 ? es : 1), have, &how);
		fp_jsonw_kv_string(w, "param", arg ? arg->name : NULL);
		fp_jsonw_kv_string(w, "param_how", how);
	} else {
		fp_jsonw_kv_double(w, "elements",
				   all.v[V_FIN][0] + all.v[V_NAN][0] + all.v[V_INF][0]);
		fp_jsonw_kv_double(w, "nan", all.v[V_NAN][0]);
		fp_jsonw_kv_double(w, "inf", all.v[V_INF][0]);
		fp_jsonw_kv_double(w, "zero", all.v[V_ZERO][0]);
		fp_jsonw_kv_double(w, "mean",
				   all.v[V_FIN][0] > 0 && n ? all.v[V_SUM][0] / all.v[V_FIN][0] :
							      NAN);
		fp_jsonw_kv_double(w, "min", n ? all.v[V_MIN][0] : NAN);
		fp_jsonw_kv_double(w, "max", n ? all.v[V_MAX][0] : NAN);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_object_end(w);
	r->nsites++;
	rc = FP_OK;
fail_all:
	agg_release(&all);
fail_ser:
	agg_release(&ser);
fail_cells:
	agg_release(&cells);
	return rc;
}

static int statement(struct rep *r, struct fp_jsonw *w, const struct fp_json_value *st, size_t si)
{
	const struct fp_json_value *lists[2], *rd;
	static const char *const lname[2] = {"results", "memory"};
	int64_t id = -1, line = 0;
	size_t i, j, n;
	int rc;

	if (fp_json_type(st) != FP_JSON_OBJECT ||
	    !fp_json_int64(get(st, FP_DBG_KEY_STATEMENT_LINE), &line) || line < 1 ||
	    !fp_json_string(get(st, FP_DBG_KEY_STATEMENT_SOURCE), NULL))
		return bad(r, st, "statements[%zu]: needs 'line' (>= 1) and 'source'", si);
	fp_json_int64(get(st, FP_DBG_KEY_STATEMENT_ID), &id);
	lists[0] = get(st, FP_DBG_KEY_STATEMENT_RESULTS);
	lists[1] = get(st, FP_DBG_KEY_STATEMENT_MEMORY);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "id", id);
	fp_jsonw_kv_int(w, "line", line);
	for (i = 0; i < 3; i++) {
		static const struct fp__html_member keys[] = {
			{"col", FP_DBG_KEY_STATEMENT_COL},
			{"end_line", FP_DBG_KEY_STATEMENT_END_LINE},
			{"loop_depth", FP_DBG_KEY_STATEMENT_LOOP_DEPTH}};

		fp_jsonw_key(w, keys[i].page);
		fp__html_copy_json(w, get(st, keys[i].input), 0, 0, 64, &r->cut);
	}
	fp_jsonw_key(w, "source");
	fp__html_copy_json(w, get(st, FP_DBG_KEY_STATEMENT_SOURCE), 0, 0, COPY_STR, &r->cut);
	fp_jsonw_key(w, "reads");
	fp_jsonw_array_begin(w);
	rd = get(st, FP_DBG_KEY_STATEMENT_READS);
	for (i = 0; i < fp_json_len(rd) && i < 64; i++) {
		const char *nm = fp_json_string(get(fp_json_at(rd, i), FP_DBG_KEY_READ_NAME), NULL);

		/* each site lists what it reads: a name read by two sites is shown once */
		for (j = 0; nm && j < i; j++) {
			const char *prev =
				fp_json_string(get(fp_json_at(rd, j), FP_DBG_KEY_READ_NAME), NULL);

			if (prev && strcmp(prev, nm) == 0)
				break;
		}
		if (nm && j < i)
			continue;
		fp_jsonw_object_begin(w);
		fp_jsonw_key(w, "name");
		fp__html_copy_json(w, get(fp_json_at(rd, i), FP_DBG_KEY_READ_NAME), 0, 0, 256,
				   &r->cut);
		fp_jsonw_key(w, "line");
		fp__html_copy_json(w, get(fp_json_at(rd, i), FP_DBG_KEY_READ_LINE), 0, 0, 64,
				   &r->cut);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "findings");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->nsfs; i++)
		if (r->sfs[i].statement_id == id)
			fp_jsonw_uint(w, r->sfs[i].index);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "sites");
	fp_jsonw_array_begin(w);
	for (j = 0; j < 2; j++) {
		if (fp_json_type(lists[j]) != FP_JSON_ARRAY &&
		    fp_json_type(lists[j]) != FP_JSON_NULL)
			return bad(r, lists[j], "statements[%zu]: '%s' must be an array", si,
				   lname[j]);
		n = fp_json_len(lists[j]);
		for (i = 0; i < n; i++) {
			struct site_in s = {fp_json_at(lists[j], i), si, i, lname[j], j == 1, line};

			rc = site(r, w, &s);
			if (rc)
				return rc;
		}
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	r->nstatements++;
	return FP_OK;
}

/* ---- the grid's cells ---------------------------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Cells of at most max_cells: bins of bx x by programs (and every z). */
static void plan_cells(struct rep *r)
{
	uint64_t max = r->p->o.max_cells, X = r->grid[0], Y = r->grid[1];

	r->bx = r->by = 1;
	if (Y == 1) {
		r->bx = ceil_div(X, max);
	} else {
		if ((double)X * (double)Y > (double)max) {
			/* start near square bins, then grow the side with more cells */
			double f = floor(sqrt((double)X * (double)Y / (double)max));

			r->bx = f > (double)X ? X : f < 1 ? 1 : (uint64_t)f;
			r->by = f > (double)Y ? Y : f < 1 ? 1 : (uint64_t)f;
		}
		while (ceil_div(X, r->bx) * ceil_div(Y, r->by) > max) {
			if (ceil_div(X, r->bx) >= ceil_div(Y, r->by))
				r->bx++;
			else
				r->by++;
		}
	}
	r->nx = ceil_div(X, r->bx);
	r->ny = ceil_div(Y, r->by);
}

/* ---- one report ---------------------------------------------------------------------------- */

static void write_launch_summary(struct rep *r, struct fp_jsonw *w, size_t block)
{
	const struct fp_json_value *k = get(r->root, FP_DBG_KEY_REPORT_KERNEL),
				   *run = get(r->root, FP_DBG_KEY_REPORT_RUN);
	char id[FP__HTML_BLOCK_ID];
	size_t i;

	fp__html_block_id(block, id);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "index", r->launch);
	fp_jsonw_kv_string(w, "kernel", r->kernel);
	fp_jsonw_key(w, "grid");
	fp_jsonw_array_begin(w);
	for (i = 0; i < 3; i++)
		fp_jsonw_uint(w, r->grid[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "programs", r->programs);
	fp_jsonw_key(w, "backend");
	fp__html_copy_json(w, get(k, FP_DBG_KEY_KERNEL_BACKEND), 0, 0, 64, &r->cut);
	fp_jsonw_kv_string(w, "file", r->path ? fp__html_basename(r->path) : NULL);
	fp_jsonw_key(w, "run");
	fp__html_copy_json(w, run, 1, 16, 512, &r->cut);
	fp_jsonw_key(w, "complete");
	fp__html_copy_json(w, get(r->root, FP_DBG_KEY_REPORT_COMPLETE), 0, 0, 0, &r->cut);
	fp_jsonw_key(w, "sanitize");
	fp__html_copy_json(w,
			   get(get(r->root, FP_DBG_KEY_REPORT_CONFIG), FP_DBG_KEY_CONFIG_SANITIZE),
			   0, 0, 0, &r->cut);
	fp_jsonw_kv_uint(w, "findings", r->nfindings);
	fp_jsonw_kv_uint(w, "statements", r->nstatements);
	fp_jsonw_kv_uint(w, "sites", r->nsites);
	fp_jsonw_kv_string(w, "block", id);
	fp_jsonw_object_end(w);
}

static int launch_block(struct rep *r, struct fp_strbuf *sb)
{
	static const struct fp__html_member copied[] = {
		{"kernel", FP_DBG_KEY_REPORT_KERNEL},
		{"config", FP_DBG_KEY_REPORT_CONFIG},
		{"run", FP_DBG_KEY_REPORT_RUN},
		{"complete", FP_DBG_KEY_REPORT_COMPLETE},
		{"overflow_count", FP_DBG_KEY_REPORT_OVERFLOW_COUNT},
		{"dump_overflow_words", FP_DBG_KEY_REPORT_DUMP_OVERFLOW_WORDS},
		{"record_count", FP_DBG_KEY_REPORT_RECORD_COUNT},
		{"dump_count", FP_DBG_KEY_REPORT_DUMP_COUNT},
		{"artifacts", FP_DBG_KEY_REPORT_ARTIFACTS},
		{"coverage", FP_DBG_KEY_REPORT_COVERAGE}};
	const struct fp_json_value *sts = get(r->root, FP_DBG_KEY_REPORT_STATEMENTS), *art;
	struct fp_jsonw *w = fp_jsonw_new_strbuf(sb, 0);
	char adir[4096];
	size_t i, n;
	int rc = FP_OK;

	if (!w)
		return FP_ENOMEM;
	fp_jsonw_object_begin(w);
	for (i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		fp_jsonw_key(w, copied[i].page);
		fp__html_copy_json(w, get(r->root, copied[i].input), COPY_DEPTH, COPY_ITEMS,
				   COPY_STR, &r->cut);
	}
	write_args(r, w);
	fp_jsonw_key(w, "cells");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "nx", r->nx);
	fp_jsonw_kv_uint(w, "ny", r->ny);
	fp_jsonw_kv_uint(w, "bx", r->bx);
	fp_jsonw_kv_uint(w, "by", r->by);
	fp_jsonw_object_end(w);
	write_source(
		r, w,
		str_or(get(get(r->root, FP_DBG_KEY_REPORT_KERNEL), FP_DBG_KEY_KERNEL_SOURCE_FILE),
		       NULL));
	fp_jsonw_key(w, "statements");
	fp_jsonw_array_begin(w);
	n = fp_json_len(sts);
	for (i = 0; i < n && !rc; i++)
		rc = statement(r, w, fp_json_at(sts, i), i);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "dumps");
	art = get(r->root, FP_DBG_KEY_REPORT_ARTIFACTS);
	{
		const char *d = fp_json_string(get(art, FP_DBG_KEY_ARTIFACTS_DIR), NULL);
		bool written = false;

		fp_json_bool(get(art, FP_DBG_KEY_ARTIFACTS_WRITTEN), &written);
		if (!rc && written && d && r->path && fp__html_join(r->dir, d, adir, sizeof(adir)))
			rc = fp__html_dumps(r->p, w, adir, r->kernel);
		else
			fp_jsonw_null(w);
	}
	fp_jsonw_object_end(w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	return rc;
}

/* Where a failed report leaves the page: everything it added is taken back. */
struct checkpoint {
	size_t nblocks, findings_len, launches_len, nnotes;
	uint64_t notes_dropped;
	struct fp_html_stats st;
};

static void checkpoint_take(const struct fp_html_page *p, struct checkpoint *c)
{
	c->nblocks = p->nblocks;
	c->findings_len = p->findings.len;
	c->launches_len = p->launches.len;
	c->nnotes = p->nnotes;
	c->notes_dropped = p->notes_dropped;
	c->st = p->st;
}

static void checkpoint_restore(struct fp_html_page *p, const struct checkpoint *c)
{
	while (p->nblocks > c->nblocks)
		fp_strbuf_release(&p->blocks[--p->nblocks].json);
	p->findings.len = c->findings_len;
	if (p->findings.alloc)
		p->findings.buf[p->findings.len] = '\0';
	p->launches.len = c->launches_len;
	if (p->launches.alloc)
		p->launches.buf[p->launches.len] = '\0';
	while (p->nnotes > c->nnotes)
		fp_free(p->notes[--p->nnotes]);
	p->notes_dropped = c->notes_dropped;
	p->st = c->st;
}

static int check_root(struct rep *r)
{
	const struct fp_json_value *k, *g, *sts;
	int64_t ver;
	size_t i, n;

	if (fp_json_type(r->root) != FP_JSON_OBJECT)
		return bad(r, r->root, "a Debugger report is a JSON object");
	if (!fp_json_int64(get(r->root, FP_DBG_KEY_REPORT_SCHEMA_VERSION), &ver))
		return bad(r, r->root, "not a Debugger report: no integer 'schema_version'");
	if (ver != 1) {
		bad(r, get(r->root, FP_DBG_KEY_REPORT_SCHEMA_VERSION),
		    "schema_version %" PRId64 " is not supported (this version reads 1)", ver);
		if (r->diag)
			r->diag->status = FP_EVERSION;
		return FP_EVERSION;
	}
	sts = get(r->root, FP_DBG_KEY_REPORT_STATEMENTS);
	if (fp_json_type(sts) != FP_JSON_ARRAY)
		return bad(r, r->root, "not a Debugger report: no 'statements' array");
	k = get(r->root, FP_DBG_KEY_REPORT_KERNEL);
	r->kernel = fp_json_string(get(k, FP_DBG_KEY_KERNEL_NAME), NULL);
	if (fp_json_type(k) != FP_JSON_OBJECT || !r->kernel)
		return bad(r, k, "'kernel' must be an object with a 'name' string");
	g = get(k, FP_DBG_KEY_KERNEL_GRID);
	n = fp_json_len(g);
	if (fp_json_type(g) != FP_JSON_ARRAY || n < 1 || n > 3)
		return bad(r, g ? g : k, "kernel.grid must be an array of 1 to 3 integers");
	r->programs = 1;
	for (i = 0; i < 3; i++) {
		r->grid[i] = 1;
		if (i < n && (!u64_of(fp_json_at(g, i), &r->grid[i]) || r->grid[i] < 1 ||
			      r->grid[i] > UINT32_MAX))
			return bad(r, fp_json_at(g, i), "kernel.grid[%zu] must be an integer >= 1",
				   i);
		/* saturated: only shown (each dimension is checked on its own) */
		r->programs = r->programs > UINT64_MAX / r->grid[i] ? UINT64_MAX :
								      r->programs * r->grid[i];
	}
	/* statement lines for the source window */
	r->stmt_first = r->stmt_last = -1;
	n = fp_json_len(sts);
	for (i = 0; i < n; i++) {
		int64_t l = 0, e = 0;
		const struct fp_json_value *st = fp_json_at(sts, i);

		if (!fp_json_int64(get(st, FP_DBG_KEY_STATEMENT_LINE), &l) || l < 1)
			continue;
		if (!fp_json_int64(get(st, FP_DBG_KEY_STATEMENT_END_LINE), &e) || e < l)
			e = l;
		if (r->stmt_first < 0 || l < r->stmt_first)
			r->stmt_first = l;
		if (e > r->stmt_last)
			r->stmt_last = e;
	}
	return FP_OK;
}

static int add_doc(struct fp_html_page *p, const struct fp_json_doc *doc, const char *path,
		   struct fp_diag *diag)
{
	struct checkpoint cp;
	struct rep *r;
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	size_t block;
	int rc;

	if (p->st.launches >= p->o.max_launches)
		return fp_diag_set(diag, FP_ELIMIT, 0, "more than %zu launches (--max-launches)",
				   p->o.max_launches);
	r = fp_calloc(1, sizeof(*r));
	if (!r)
		return FP_ENOMEM;
	r->p = p;
	r->doc = doc;
	r->root = fp_json_root(doc);
	r->path = path;
	r->diag = diag;
	r->launch = p->st.launches;
	if (path && !fp__html_dirname(path, r->dir, sizeof(r->dir))) {
		rc = fp_diag_set(diag, FP_EINVAL, 0, "path too long: %s", path);
		goto fail_r;
	}
	checkpoint_take(p, &cp);
	rc = check_root(r);
	if (rc)
		goto fail_r;
	plan_cells(r);
	rc = load_source(r, str_or(get(get(r->root, FP_DBG_KEY_REPORT_KERNEL),
				       FP_DBG_KEY_KERNEL_SOURCE_FILE),
				   NULL));
	if (rc)
		goto fail_restore;
	source_window(r);
	rc = read_args(r);
	if (rc)
		goto fail_restore;
	rc = read_findings(r);
	if (rc)
		goto fail_restore;
	fp_strbuf_init(&sb, 0);
	rc = launch_block(r, &sb);
	if (rc) {
		fp_strbuf_release(&sb);
		goto fail_restore;
	}
	rc = fp__html_block_add(p, &sb, &block);
	if (rc)
		goto fail_restore;
	if (p->launches.len && (rc = fp_strbuf_addch(&p->launches, ',')) != FP_OK)
		goto fail_restore;
	w = fp_jsonw_new_strbuf(&p->launches, 0);
	if (!w) {
		rc = FP_ENOMEM;
		goto fail_restore;
	}
	write_launch_summary(r, w, block);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (rc)
		goto fail_restore;
	if (r->bx * r->by > 1)
		fp_html_page_note(p,
				  "%s (launch %zu): %" PRIu64 " programs; each heatmap cell "
				  "aggregates %" PRIu64 "x%" PRIu64 " programs (--max-cells %zu)",
				  r->kernel, r->launch, r->programs, r->bx, r->by, p->o.max_cells);
	if (r->grid[2] > 1)
		fp_html_page_note(p, "%s (launch %zu): heatmaps aggregate the grid's z dimension",
				  r->kernel, r->launch);
	if (r->cut)
		fp_html_page_note(p, "%s (launch %zu): %" PRIu64 " long values were shortened",
				  r->kernel, r->launch, r->cut);
	rc = fp__html_title_default(p, "%s: FlagPrism Debugger", r->kernel);
	if (rc)
		goto fail_restore;
	p->st.launches++;
	p->st.statements += r->nstatements;
	p->st.sites += r->nsites;
	goto done;

fail_restore:
	checkpoint_restore(p, &cp);
fail_r:
done:
	fp_free(r->sfs);
	fp_free(r->lines);
	fp_strbuf_release(&r->src);
	fp_free(r);
	return rc;
}

int fp_html_debug_add_report(struct fp_html_page *p, const char *text, size_t len, const char *path,
			     struct fp_diag *diag)
{
	struct fp_json_doc *doc = NULL;
	int rc;

	fp_diag_clear(diag);
	if (!p || p->kind != FP_HTML_DEBUGGER || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "not a Debugger page, or no text");
	rc = fp_json_parse(text, len, NULL, &doc, diag);
	if (rc) {
		if (diag && path) {
			char msg[sizeof(diag->msg)];

			snprintf(msg, sizeof(msg), "%s", diag->msg);
			fp_diag_set_pos(diag, rc, diag->offset, diag->line, diag->col,
					"%s:%u:%u: %s", path, diag->line, diag->col, msg);
		}
		return rc;
	}
	rc = add_doc(p, doc, path, diag);
	fp_json_doc_free(doc);
	return rc;
}

/* ---- summary.json -------------------------------------------------------------------------- */

int fp_html_debug_add_summary(struct fp_html_page *p, const char *text, size_t len,
			      const char *path, struct fp_diag *diag)
{
	struct fp_json_doc *doc = NULL;
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	uint64_t cut = 0;
	int rc;

	fp_diag_clear(diag);
	if (!p || p->kind != FP_HTML_DEBUGGER || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "not a Debugger page, or no text");
	rc = fp_json_parse(text, len, NULL, &doc, diag);
	if (rc)
		return rc;
	if (fp_json_type(fp_json_root(doc)) != FP_JSON_OBJECT) {
		rc = fp__html_bad(diag, doc, fp_json_root(doc), path,
				  "a run summary is a JSON object");
		goto out;
	}
	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	if (!w) {
		rc = FP_ENOMEM;
		goto out;
	}
	fp__html_copy_json(w, fp_json_root(doc), COPY_DEPTH, 10000, COPY_STR, &cut);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!rc && path) {
		fp_free(p->summary_path);
		p->summary_path = fp_strdup(path);
		if (!p->summary_path)
			rc = FP_ENOMEM;
	}
	if (rc) {
		fp_strbuf_release(&sb);
		goto out;
	}
	fp_strbuf_release(&p->summary);
	p->summary = sb;
	p->st.data_bytes += sb.len;
	if (cut)
		fp_html_page_note(p, "summary: %" PRIu64 " long values or list items were left out",
				  cut);
out:
	fp_json_doc_free(doc);
	return rc;
}

/* ---- reading files and directories ----------------------------------------------------------- */

static int read_text(const char *path, struct fp_strbuf *sb, struct fp_diag *diag)
{
	fp_strbuf_init(sb, 0);
	return fp_strbuf_read_path(sb, path, FP_STRBUF_READ_REGULAR, diag);
}

/* Add the report at `path`; a JSON file that is not a report is skipped with a note when
 * `skip_others`. */
static int add_report_file(struct fp_html_page *p, const char *path, bool skip_others,
			   struct fp_diag *diag)
{
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *root;
	struct fp_strbuf sb;
	int rc;

	rc = read_text(path, &sb, diag);
	if (rc) {
		fp_strbuf_release(&sb);
		return rc;
	}
	rc = fp_json_parse(sb.buf, sb.len, NULL, &doc, diag);
	fp_strbuf_release(&sb);
	if (rc) {
		if (diag) {
			char msg[sizeof(diag->msg)];

			snprintf(msg, sizeof(msg), "%s", diag->msg);
			fp_diag_set_pos(diag, rc, diag->offset, diag->line, diag->col,
					"%s:%u:%u: %s", path, diag->line, diag->col, msg);
		}
		if (skip_others && rc == FP_EFORMAT) {
			rc = fp_html_page_note(p, "skipped %s: not JSON (%s)", path,
					       diag ? diag->msg : "");
			fp_diag_clear(diag);
		}
		return rc;
	}
	root = fp_json_root(doc);
	if (skip_others &&
	    (fp_json_type(root) != FP_JSON_OBJECT || !get(root, FP_DBG_KEY_REPORT_STATEMENTS) ||
	     !get(root, FP_DBG_KEY_REPORT_SCHEMA_VERSION))) {
		rc = fp_html_page_note(p, "skipped %s: not a Debugger report", path);
	} else {
		rc = add_doc(p, doc, path, diag);
	}
	fp_json_doc_free(doc);
	return rc;
}

static const char *const not_reports[] = {"_op_log.json", ".meta.json", ".chrome_trace.json",
					  "tensor_index.json", "summary.json"};

static bool report_name(const char *name)
{
	size_t i;

	if (!ends_with(name, ".json") || name[0] == '.')
		return false;
	for (i = 0; i < sizeof(not_reports) / sizeof(not_reports[0]); i++)
		if (ends_with(name, not_reports[i]))
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every report in `dir`, by name. */
/* The report files a page reads: full paths, each once (by the file it names). */
struct files {
	char **path, **real;
	size_t n, cap;
};

static void files_release(struct files *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		fp_free(f->path[i]);
		fp_free(f->real[i]);
	}
	fp_free(f->path);
	fp_free(f->real);
	memset(f, 0, sizeof(*f));
}

/* Add `path` (a regular file) unless it is already there under any name. */
static int files_add(struct files *f, const char *path)
{
	char real[PATH_MAX];
	size_t i;

	if (!realpath(path, real))
		return FP_OK; /* gone since, or a name too long: nothing to read */
	for (i = 0; i < f->n; i++)
		if (!strcmp(f->real[i], real))
			return FP_OK;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		char **a = fp_reallocarray(f->path, cap, sizeof(*a));
		char **b;

		if (a)
			f->path = a;
		b = a ? fp_reallocarray(f->real, cap, sizeof(*b)) : NULL;
		if (!b)
			return FP_ENOMEM;
		f->real = b;
		f->cap = cap;
	}
	f->path[f->n] = fp_strdup(path);
	f->real[f->n] = fp_strdup(real);
	if (!f->path[f->n] || !f->real[f->n]) {
		fp_free(f->path[f->n]);
		fp_free(f->real[f->n]);
		return FP_ENOMEM;
	}
	f->n++;
	return FP_OK;
}

static bool regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The reports in `dir` (not its subdirectories), in the order of their names. */
static int collect_dir(struct files *f, const char *dir, struct fp_diag *diag)
{
	char **names = NULL, full[4096];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int rc = FP_OK;

	d = opendir(dir);
	if (!d)
		return fp_diag_set(diag, FP_EIO, 0, "cannot open the directory '%s': %s", dir,
				   strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!report_name(de->d_name) ||
		    !fp__html_join(dir, de->d_name, full, sizeof(full)) || !regular_file(full))
			continue;
		if (n == cap) {
			char **x;

			cap = cap ? cap * 2 : 64;
			x = fp_reallocarray(names, cap, sizeof(*x));
			if (!x) {
				rc = FP_ENOMEM;
				goto out;
			}
			names = x;
		}
		names[n] = fp_strdup(de->d_name);
		if (!names[n]) {
			rc = FP_ENOMEM;
			goto out;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n && !rc; i++) {
		fp__html_join(dir, names[i], full, sizeof(full));
		rc = files_add(f, full);
	}
out:
	for (i = 0; i < n; i++)
		fp_free(names[i]);
	fp_free(names);
	closedir(d);
	return rc;
}

/* Read the collected reports, at most --max-launches of them. */
static int read_files(struct fp_html_page *p, const struct files *f, const char *where,
		      struct fp_diag *diag)
{
	size_t i;
	int rc = FP_OK;

	for (i = 0; i < f->n && !rc; i++) {
		if (p->st.launches == p->o.max_launches) {
			rc = fp_html_page_note(p,
					       "%zu more reports of %s were not read: at most %zu "
					       "launches (--max-launches)",
					       f->n - i, where, p->o.max_launches);
			break;
		}
		rc = add_report_file(p, f->path[i], true, diag);
	}
	return rc;
}

static int read_dir(struct fp_html_page *p, const char *dir, struct fp_diag *diag)
{
	struct files f;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = collect_dir(&f, dir, diag);
	if (!rc)
		rc = read_files(p, &f, dir, diag);
	files_release(&f);
	if (!rc && p->st.launches == 0)
		rc = fp_diag_set(
			diag, FP_ENOENT, 0,
			"no Debugger report (<script>_<kernel>_<time>_run<N>.json) in '%s'", dir);
	return rc;
}

/*
 * Where a file a summary names is: as written (absolute, or relative to the summary's directory,
 * then to the working directory), else, for a directory that was moved, its last two components
 * or its name under the summary's directory ("gw0/<stem>.txt" of a session's merged summary).
 */
static bool resolve(const char *sumdir, const char *ref, char *out, size_t cap)
{
	const char *b = fp__html_basename(ref), *two = b;

	if (!ref[0])
		return false;
	if (ref[0] == '/') {
		if ((size_t)snprintf(out, cap, "%s", ref) < cap && regular_file(out))
			return true;
	} else {
		if (fp__html_join(sumdir, ref, out, cap) && regular_file(out))
			return true;
		if ((size_t)snprintf(out, cap, "%s", ref) < cap && regular_file(out))
			return true;
	}
	if (b > ref + 1) {
		for (two = b - 2; two > ref && two[-1] != '/'; two--)
			;
		if (fp__html_join(sumdir, two, out, cap) && regular_file(out))
			return true;
	}
	return fp__html_join(sumdir, b, out, cap) && regular_file(out);
}

/* A report a summary names (the text report of a finding, or a JSON report): its JSON report. */
static int add_named(struct fp_html_page *p, struct files *f, const char *sumdir, const char *ref,
		     size_t *unfound)
{
	char json[4096], path[4096];
	size_t n = strlen(ref);

	if (n > 4 && !strcmp(ref + n - 4, ".txt")) {
		if (n - 4 + 6 > sizeof(json))
			return FP_OK;
		memcpy(json, ref, n - 4);
		memcpy(json + n - 4, ".json", 6);
	} else if (n > 5 && !strcmp(ref + n - 5, ".json") && n < sizeof(json)) {
		memcpy(json, ref, n + 1);
	} else {
		return FP_OK; /* not a report's name */
	}
	if (!resolve(sumdir, json, path, sizeof(path))) {
		if ((*unfound)++ < 8)
			return fp_html_page_note(p,
						 "the summary names the report %s, which was not "
						 "found",
						 json);
		return FP_OK;
	}
	return files_add(f, path);
}

/* The string `key` of each object of the array `arr` (or each string of it, when `key` is NULL)
 * as a named report. */
static int add_named_in(struct fp_html_page *p, struct files *f, const char *sumdir,
			const struct fp_json_value *arr, const char *key, size_t *unfound)
{
	size_t i;
	int rc = FP_OK;

	for (i = 0; !rc && i < fp_json_len(arr) && fp_json_type(arr) == FP_JSON_ARRAY; i++) {
		const struct fp_json_value *e = fp_json_at(arr, i);
		const char *ref = fp_json_string(key ? get(e, key) : e, NULL);

		if (ref)
			rc = add_named(p, f, sumdir, ref, unfound);
	}
	return rc;
}

/* The reports beside each merged process's summary ("ranks" or "workers": "inputs"). */
static int add_parts(struct fp_html_page *p, struct files *f, const char *sumdir,
		     const struct fp_json_value *root, struct fp_diag *diag)
{
	static const char *const objs[] = {FP_DBG_KEY_SUMMARY_RANKS, FP_DBG_KEY_SUMMARY_WORKERS};
	size_t k, i;
	int rc = FP_OK;

	for (k = 0; !rc && k < FP_ARRAY_SIZE(objs); k++) {
		const struct fp_json_value *in = get(get(root, objs[k]), FP_DBG_KEY_MERGE_INPUTS);

		for (i = 0; !rc && fp_json_type(in) == FP_JSON_ARRAY && i < fp_json_len(in); i++) {
			const char *sum = fp_json_string(
				get(fp_json_at(in, i), FP_DBG_KEY_MERGE_INPUT_SUMMARY), NULL);
			char path[4096], dir[4096];

			if (!sum || !resolve(sumdir, sum, path, sizeof(path)) ||
			    !fp__html_dirname(path, dir, sizeof(dir)))
				continue;
			rc = collect_dir(f, dir, diag);
			if (rc == FP_EIO) { /* a part's directory that cannot be listed: said */
				rc = fp_html_page_note(p, "%s", diag ? diag->msg : dir);
				fp_diag_clear(diag);
			}
		}
	}
	return rc;
}

/*
 * A Debugger summary (summary.json, docs/formats/debugger-report-schema.md "Summary"): shown as
 * its own section. The launches it reports are the report files beside it (check mode writes
 * one only for a launch with findings, or every one with --all-reports), those beside the
 * summaries it merges (a job's ranks, a test session's workers: "ranks" or "workers",
 * "inputs"), and those it names (each finding's "report"; "launches[].report" and "reports[]"
 * of other writers), each read once.
 */
static int read_summary(struct fp_html_page *p, const char *path, struct fp_diag *diag)
{
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *root = NULL;
	struct fp_strbuf sb;
	struct files f;
	char dir[4096];
	size_t unfound = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = read_text(path, &sb, diag);
	if (!rc)
		rc = fp_html_debug_add_summary(p, sb.buf, sb.len, path, diag);
	if (!rc && fp_json_parse(sb.buf, sb.len, NULL, &doc, NULL) == FP_OK)
		root = fp_json_root(doc);
	fp_strbuf_release(&sb);
	if (rc)
		goto out;
	if (!fp__html_dirname(path, dir, sizeof(dir))) {
		rc = fp_diag_set(diag, FP_EINVAL, 0, "path too long: %s", path);
		goto out;
	}
	rc = collect_dir(&f, dir, diag);
	if (!rc && root)
		rc = add_parts(p, &f, dir, root, diag);
	if (!rc && root)
		rc = add_named_in(p, &f, dir, get(root, FP_DBG_KEY_SUMMARY_FINDINGS),
				  FP_DBG_KEY_SUMMARY_FINDING_REPORT, &unfound);
	if (!rc && root)
		rc = add_named_in(p, &f, dir, get(root, FP_DBG_KEY_SUMMARY_LAUNCHES),
				  FP_DBG_KEY_SUMMARY_LAUNCH_REPORT, &unfound);
	if (!rc && root)
		rc = add_named_in(p, &f, dir, get(root, FP_DBG_KEY_SUMMARY_REPORTS), NULL,
				  &unfound);
	if (!rc && unfound > 8)
		rc = fp_html_page_note(p, "%zu more reports the summary names were not found",
				       unfound - 8);
	if (!rc)
		rc = read_files(p, &f, path, diag);
	if (!rc && p->st.launches == 0)
		/* a clean check-mode run writes no per-launch report: the summary is the page */
		rc = fp_html_page_note(p,
				       "%s: no per-launch report beside the summary or named by it "
				       "(no launch had findings, or --all-reports was not given)",
				       path);
out:
	files_release(&f);
	fp_json_doc_free(doc);
	return rc;
}

int fp_html_debug_read(struct fp_html_page *p, const char *path, struct fp_diag *diag)
{
	char sum[4096];
	struct stat st;

	fp_diag_clear(diag);
	if (!p || p->kind != FP_HTML_DEBUGGER || !path)
		return fp_diag_set(diag, FP_EINVAL, 0, "not a Debugger page, or no path");
	if (stat(path, &st) != 0)
		return fp_diag_set(diag, errno == ENOENT ? FP_ENOENT : FP_EIO, 0,
				   "cannot open '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		/* a run of several launches is named by its directory, not its first kernel */
		char name[256];
		size_t n = strlen(path);

		while (n > 1 && path[n - 1] == '/')
			n--;
		snprintf(name, sizeof(name), "%.*s", (int)n, path);
		if (fp__html_title_default(p, "%s: FlagPrism Debugger", fp__html_basename(name)))
			return FP_ENOMEM;
		if (fp__html_join(path, "summary.json", sum, sizeof(sum)) && stat(sum, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return read_summary(p, sum, diag);
		return read_dir(p, path, diag);
	}
	if (ends_with(path, "summary.json"))
		return read_summary(p, path, diag);
	return add_report_file(p, path, false, diag);
}
