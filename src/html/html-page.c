/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTML report's page object and its output: options, notes, lazily parsed data blocks, the
 * JSON escaping that lets data sit inside <script type="application/json">, and the writer that
 * fills the compiled-in template (src/html/page.html) with its stylesheet, the data and its
 * script. It does not read inputs: html-debug.c, html-profile.c and html-trace.c do.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/outfile.h>
#include <flagprism/version.h>

#include "html/html-internal.h"

#define NOTE_MAX 1024

void fp_html_options_init(struct fp_html_options *o)
{
	memset(o, 0, sizeof(*o));
	o->read_sources = true;
}

static void defaults(struct fp_html_options *o)
{
#define DEF(f, v)                   \
	do {                        \
		if (!o->f)          \
			o->f = (v); \
	} while (0)
	DEF(max_cells, FP_HTML_DEFAULT_MAX_CELLS);
	DEF(max_series, FP_HTML_DEFAULT_MAX_SERIES);
	DEF(max_nodes, FP_HTML_DEFAULT_MAX_NODES);
	DEF(max_findings, FP_HTML_DEFAULT_MAX_FINDINGS);
	DEF(max_launches, FP_HTML_DEFAULT_MAX_LAUNCHES);
	DEF(max_dumps, FP_HTML_DEFAULT_MAX_DUMPS);
	DEF(max_slices, FP_HTML_DEFAULT_MAX_SLICES);
	DEF(max_source_lines, FP_HTML_DEFAULT_MAX_SOURCE_LINES);
	DEF(max_roofline, FP_HTML_DEFAULT_MAX_ROOFLINE);
#undef DEF
}

int fp_html_page_new(enum fp_html_kind kind, const struct fp_html_options *o,
		     struct fp_html_page **out)
{
	struct fp_html_page *p;

	if (!out || (kind != FP_HTML_DEBUGGER && kind != FP_HTML_PROFILE))
		return FP_EINVAL;
	p = fp_calloc(1, sizeof(*p));
	if (!p)
		return FP_ENOMEM;
	p->kind = kind;
	if (o)
		p->o = *o;
	else
		fp_html_options_init(&p->o);
	defaults(&p->o);
	fp_strbuf_init(&p->launches, 0);
	fp_strbuf_init(&p->findings, 0);
	fp_strbuf_init(&p->summary, 0);
	fp_strbuf_init(&p->profile, 0);
	p->timeline_block = -1;
	p->advice_block = -1;
	*out = p;
	return FP_OK;
}

void fp_html_page_free(struct fp_html_page *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nnotes; i++)
		fp_free(p->notes[i]);
	for (i = 0; i < p->nblocks; i++)
		fp_strbuf_release(&p->blocks[i].json);
	fp_free(p->blocks);
	fp_strbuf_release(&p->launches);
	fp_strbuf_release(&p->findings);
	fp_strbuf_release(&p->summary);
	fp_strbuf_release(&p->profile);
	fp_free(p->summary_path);
	fp_free(p->title);
	fp_free(p);
}

int fp_html_page_note(struct fp_html_page *p, const char *fmt, ...)
{
	char buf[NOTE_MAX];
	va_list ap;

	if (!p || !fmt)
		return FP_EINVAL;
	if (p->nnotes == FP__HTML_MAX_NOTES) {
		p->notes_dropped++;
		return FP_OK;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->notes[p->nnotes] = fp_strdup(buf);
	if (!p->notes[p->nnotes]) {
		p->notes_dropped++; /* the page still says that a note is missing */
		return FP_ENOMEM;
	}
	p->nnotes++;
	return FP_OK;
}

size_t fp_html_page_note_count(const struct fp_html_page *p)
{
	return p ? p->nnotes : 0;
}

const char *fp_html_page_note_at(const struct fp_html_page *p, size_t i)
{
	return p && i < p->nnotes ? p->notes[i] : NULL;
}

int fp__html_title_default(struct fp_html_page *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (p->title)
		return FP_OK;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->title = fp_strdup(buf);
	return p->title ? FP_OK : FP_ENOMEM;
}

int fp__html_block_add(struct fp_html_page *p, struct fp_strbuf *sb, size_t *index)
{
	if (p->nblocks == p->blocks_cap) {
		size_t cap = p->blocks_cap ? p->blocks_cap * 2 : 16;
		struct fp__html_block *b = fp_reallocarray(p->blocks, cap, sizeof(*b));

		if (!b) {
			fp_strbuf_release(sb);
			return FP_ENOMEM;
		}
		p->blocks = b;
		p->blocks_cap = cap;
	}
	p->blocks[p->nblocks].json = *sb;
	p->st.data_bytes += sb->len;
	fp_strbuf_init(sb, sb->cap);
	*index = p->nblocks++;
	return FP_OK;
}

void fp__html_block_id(size_t index, char *buf)
{
	snprintf(buf, FP__HTML_BLOCK_ID, "fp-b-%zu", index);
}

void fp_html_page_stats(const struct fp_html_page *p, struct fp_html_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	*out = p->st;
	out->notes = p->nnotes + (size_t)p->notes_dropped;
}

/* ---- small writers shared by the data builders ------------------------------------------- */

int fp__html_num(struct fp_strbuf *sb, double v)
{
	char buf[40];
	int n;

	if (!isfinite(v))
		return fp_strbuf_add(sb, "null", 4);
	/* range first: converting a double outside int64_t's range is undefined */
	if (fabs(v) < 1e15 && v == (double)(int64_t)v)
		n = snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v);
	else
		n = snprintf(buf, sizeof(buf), "%.6g", v);
	return fp_strbuf_add(sb, buf, (size_t)n);
}

int fp__html_num_array(struct fp_strbuf *sb, const double *v, size_t n)
{
	size_t i;
	int rc = fp_strbuf_addch(sb, '[');

	for (i = 0; i < n && !rc; i++) {
		if (i)
			rc = fp_strbuf_addch(sb, ',');
		if (!rc)
			rc = fp__html_num(sb, v[i]);
	}
	return rc ? rc : fp_strbuf_addch(sb, ']');
}

/* Length of the longest prefix of s[0 .. n) that does not end inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && n - i < 3)
		i--;
	if (i > 0 && ((unsigned char)s[i - 1] & 0x80)) {
		unsigned char c = (unsigned char)s[i - 1];
		size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;

		if (n - (i - 1) < need)
			return i - 1;
	}
	return n;
}

int fp__html_copy_json(struct fp_jsonw *w, const struct fp_json_value *v, unsigned depth,
		       size_t max_items, size_t max_str, uint64_t *cut)
{
	char nbuf[32];
	const char *s, *key;
	size_t i, n, len, klen;
	bool b;

	switch (fp_json_type(v)) {
	case FP_JSON_NULL:
		return fp_jsonw_null(w);
	case FP_JSON_FALSE:
	case FP_JSON_TRUE:
		fp_json_bool(v, &b);
		return fp_jsonw_bool(w, b);
	case FP_JSON_NUMBER:
		s = fp_json_number_text(v, nbuf, sizeof(nbuf));
		return fp_jsonw_raw(w, s, strlen(s));
	case FP_JSON_STRING:
		s = fp_json_string(v, &len);
		if (len > max_str) {
			if (cut)
				(*cut)++;
			len = utf8_cut(s, max_str);
		}
		return fp_jsonw_string_n(w, s, len);
	case FP_JSON_ARRAY:
	case FP_JSON_OBJECT:
		break;
	}
	if (depth == 0) {
		if (cut)
			(*cut)++;
		return fp_jsonw_null(w);
	}
	n = fp_json_len(v);
	if (n > max_items) {
		if (cut)
			(*cut) += n - max_items;
		n = max_items;
	}
	if (fp_json_type(v) == FP_JSON_ARRAY) {
		fp_jsonw_array_begin(w);
		for (i = 0; i < n; i++)
			fp__html_copy_json(w, fp_json_at(v, i), depth - 1, max_items, max_str, cut);
		return fp_jsonw_array_end(w);
	}
	fp_jsonw_object_begin(w);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *m = fp_json_member(v, i, &key, &klen);

		fp_jsonw_key_n(w, key, klen > max_str ? utf8_cut(key, max_str) : klen);
		fp__html_copy_json(w, m, depth - 1, max_items, max_str, cut);
	}
	return fp_jsonw_object_end(w);
}

int fp__html_bad(struct fp_diag *diag, const struct fp_json_doc *doc, const struct fp_json_value *v,
		 const char *path, const char *fmt, ...)
{
	char msg[sizeof(diag->msg)];
	uint32_t line = 0, col = 0;
	uint64_t off = fp_json_offset(v);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (v && fp_json_position(doc, off, &line, &col) != FP_OK)
		line = col = 0;
	if (line)
		return fp_diag_set_pos(diag, FP_EFORMAT, off, line, col, "%s%s%u:%u: %s",
				       path ? path : "", path ? ":" : "", line, col, msg);
	return fp_diag_set(diag, FP_EFORMAT, off, "%s%s%s", path ? path : "", path ? ": " : "",
			   msg);
}

bool fp__html_dirname(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash)
		n = snprintf(buf, size, ".");
	else if (slash == path)
		n = snprintf(buf, size, "/");
	else
		n = snprintf(buf, size, "%.*s", (int)(slash - path), path);
	return n >= 0 && (size_t)n < size;
}

bool fp__html_join(const char *dir, const char *name, char *buf, size_t size)
{
	int n;

	if (name[0] == '/' || !dir || !dir[0])
		n = snprintf(buf, size, "%s", name);
	else
		n = snprintf(buf, size, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
			     name);
	return n >= 0 && (size_t)n < size;
}

const char *fp__html_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* ---- escaping and output -------------------------------------------------------------------- */

/* The \u escape for byte run positions that must not appear raw inside a script element. */
static const char *escape_of(const unsigned char *s, size_t n, size_t i, size_t *skip)
{
	*skip = 1;
	switch (s[i]) {
	case '<':
		return "\\u003c";
	case '>':
		return "\\u003e";
	case '&':
		return "\\u0026";
	case 0xE2:
		if (i + 2 < n && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
			*skip = 3;
			return s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
		}
		return NULL;
	default:
		return NULL;
	}
}

int fp_html_escape_json(struct fp_strbuf *sb, const char *json, size_t len)
{
	const unsigned char *s = (const unsigned char *)json;
	size_t i = 0, start = 0, skip;
	const char *e;
	int rc;

	if (!sb || (!json && len))
		return FP_EINVAL;
	while (i < len) {
		e = escape_of(s, len, i, &skip);
		if (!e) {
			i++;
			continue;
		}
		rc = fp_strbuf_add(sb, json + start, i - start);
		if (!rc)
			rc = fp_strbuf_addstr(sb, e);
		if (rc)
			return rc;
		i += skip;
		start = i;
	}
	return fp_strbuf_add(sb, json + start, len - start);
}

static bool put(FILE *f, const void *s, size_t n)
{
	return n == 0 || fwrite(s, 1, n, f) == n;
}

static bool put_escaped(FILE *f, const char *json, size_t len)
{
	const unsigned char *s = (const unsigned char *)json;
	size_t i = 0, start = 0, skip;
	const char *e;

	while (i < len) {
		e = escape_of(s, len, i, &skip);
		if (!e) {
			i++;
			continue;
		}
		if (!put(f, json + start, i - start) || !put(f, e, strlen(e)))
			return false;
		i += skip;
		start = i;
	}
	return put(f, json + start, len - start);
}

/* The main data object: kind, title, notes, and the kind's members. */
static int main_data(const struct fp_html_page *p, struct fp_strbuf *sb)
{
	struct fp_jsonw *w = fp_jsonw_new_strbuf(sb, 0);
	char id[FP__HTML_BLOCK_ID];
	size_t i;
	int rc;

	if (!w)
		return FP_ENOMEM;
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "kind", p->kind == FP_HTML_DEBUGGER ? "debugger" : "profile");
	fp_jsonw_kv_int(w, "format", 1);
	fp_jsonw_key(w, "generator");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "name", "flagprism");
	fp_jsonw_kv_string(w, "version", fp_version_string());
	fp_jsonw_object_end(w);
	fp_jsonw_kv_string(w, "title",
			   p->o.title ? p->o.title :
			   p->title   ? p->title :
					"FlagPrism report");
	fp_jsonw_key(w, "notes");
	fp_jsonw_array_begin(w);
	for (i = 0; i < p->nnotes; i++)
		fp_jsonw_string(w, p->notes[i]);
	if (p->notes_dropped) {
		char buf[96];

		snprintf(buf, sizeof(buf), "%" PRIu64 " more notes were left out",
			 p->notes_dropped);
		fp_jsonw_string(w, buf);
	}
	fp_jsonw_array_end(w);
	if (p->kind == FP_HTML_DEBUGGER) {
		fp_jsonw_key(w, "launches");
		fp_jsonw_array_begin(w);
		if (p->launches.len)
			fp_jsonw_raw(w, p->launches.buf, p->launches.len);
		fp_jsonw_array_end(w);
		fp_jsonw_key(w, "findings");
		fp_jsonw_array_begin(w);
		if (p->findings.len)
			fp_jsonw_raw(w, p->findings.buf, p->findings.len);
		fp_jsonw_array_end(w);
		fp_jsonw_kv_uint(w, "findings_total", p->st.findings_total);
		fp_jsonw_key(w, "summary");
		if (p->summary.len)
			fp_jsonw_raw(w, p->summary.buf, p->summary.len);
		else
			fp_jsonw_null(w);
		fp_jsonw_key(w, "summary_path");
		fp_jsonw_string(w, p->summary_path);
	} else {
		fp_jsonw_key(w, "profile");
		fp_jsonw_raw(w, p->profile.buf, p->profile.len);
		fp_jsonw_key(w, "timeline");
		if (p->timeline_block >= 0) {
			fp__html_block_id((size_t)p->timeline_block, id);
			fp_jsonw_string(w, id);
		} else {
			fp_jsonw_null(w);
		}
		fp_jsonw_key(w, "advice");
		if (p->advice_block >= 0) {
			fp__html_block_id((size_t)p->advice_block, id);
			fp_jsonw_string(w, id);
		} else {
			fp_jsonw_null(w);
		}
	}
	fp_jsonw_object_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	return rc;
}

/* Template pieces between the markers. */
struct tmpl {
	const char *s[5];
	size_t n[5];
};

static int split_template(struct tmpl *t)
{
	static const char *const marks[4] = {FP__HTML_MARK_CSP, FP__HTML_MARK_STYLE,
					     FP__HTML_MARK_DATA, FP__HTML_MARK_SCRIPT};
	const char *at = (const char *)fp__html_page_html, *m;
	size_t i;

	for (i = 0; i < 4; i++) {
		m = strstr(at, marks[i]);
		if (!m)
			return FP_ESTATE;
		t->s[i] = at;
		t->n[i] = (size_t)(m - at);
		at = m + strlen(marks[i]);
	}
	t->s[4] = at;
	t->n[4] = strlen(at);
	return FP_OK;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "'sha256-<base64>'" of the script, from the hex digest the build computed. */
static int csp_source(char *buf, size_t size)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char d[33];
	size_t i, n = 0;
	int hi, lo;

	if (strlen(fp__html_page_js_sha256) != 64 || size < 60)
		return FP_ESTATE;
	for (i = 0; i < 32; i++) {
		hi = hexval(fp__html_page_js_sha256[2 * i]);
		lo = hexval(fp__html_page_js_sha256[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return FP_ESTATE;
		d[i] = (unsigned char)(hi << 4 | lo);
	}
	d[32] = 0;
	n = (size_t)snprintf(buf, size, "'sha256-");
	for (i = 0; i < 33; i += 3) { /* 32 bytes: 10 full groups and one of two bytes */
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < 32 ? (unsigned)d[i + 1] << 8 : 0) |
			     (i + 2 < 32 ? d[i + 2] : 0);

		buf[n++] = b64[v >> 18 & 63];
		buf[n++] = b64[v >> 12 & 63];
		buf[n++] = i + 1 < 32 ? b64[v >> 6 & 63] : '=';
		buf[n++] = i + 2 < 32 ? b64[v & 63] : '=';
	}
	buf[n++] = '\'';
	buf[n] = '\0';
	return FP_OK;
}

static bool put_block(FILE *f, const char *id, const char *json, size_t len)
{
	return fputs("<script type=\"application/json\" id=\"", f) >= 0 && fputs(id, f) >= 0 &&
	       fputs("\">", f) >= 0 && put_escaped(f, json, len) && fputs("</script>\n", f) >= 0;
}

int fp_html_page_write(const struct fp_html_page *p, FILE *f)
{
	struct fp_strbuf main;
	char id[FP__HTML_BLOCK_ID], csp[64];
	struct tmpl t;
	bool ok;
	size_t i;
	int rc;

	if (!p || !f)
		return FP_EINVAL;
	/* a Debugger page needs a launch or a summary (a clean check run has only the summary) */
	if (p->kind == FP_HTML_DEBUGGER ? p->st.launches == 0 && p->summary.len == 0 :
					  p->profile.len == 0)
		return FP_EINVAL;
	rc = split_template(&t);
	if (!rc)
		rc = csp_source(csp, sizeof(csp));
	if (rc)
		return rc;
	fp_strbuf_init(&main, 0);
	rc = main_data(p, &main);
	if (rc)
		goto out;
	ok = put(f, t.s[0], t.n[0]) && put(f, csp, strlen(csp)) && put(f, t.s[1], t.n[1]) &&
	     put(f, fp__html_page_css, fp__html_page_css_len) && put(f, t.s[2], t.n[2]) &&
	     put_block(f, "fp-data", main.buf, main.len);
	for (i = 0; ok && i < p->nblocks; i++) {
		fp__html_block_id(i, id);
		ok = put_block(f, id, p->blocks[i].json.buf, p->blocks[i].json.len);
	}
	ok = ok && put(f, t.s[3], t.n[3]) && put(f, fp__html_page_js, fp__html_page_js_len) &&
	     put(f, t.s[4], t.n[4]);
	rc = ok && fflush(f) == 0 && !ferror(f) ? FP_OK : FP_EIO;
out:
	fp_strbuf_release(&main);
	return rc;
}

int fp_html_page_save(const struct fp_html_page *p, const char *path, struct fp_diag *diag)
{
	struct fp_outfile of;
	int rc;

	fp_diag_clear(diag);
	if (!p || !path)
		return fp_diag_set(diag, FP_EINVAL, 0, "no page or no path");
	if (p->kind == FP_HTML_DEBUGGER ? p->st.launches == 0 && p->summary.len == 0 :
					  p->profile.len == 0)
		return fp_diag_set(diag, FP_EINVAL, 0, "the page has no %s",
				   p->kind == FP_HTML_DEBUGGER ? "launch" : "profile");
	rc = fp_outfile_open(&of, path, 0, diag);
	if (rc)
		return rc;
	rc = fp_html_page_write(p, of.f);
	if (rc == FP_ENOMEM)
		fp_diag_set(diag, rc, 0, "%s: out of memory", path);
	/* a failed write is reported by the finish with its errno */
	return fp_outfile_finish(&of, rc, diag);
}
