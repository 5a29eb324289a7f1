/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Level-2 dumps for the HTML report: reads a launch's tensor_index.json and each value or
 * address dump it lists (.npy), and summarises every dump as a histogram (FP_HTML_HIST_BINS
 * bins between its finite minimum and maximum, with NaN and Inf counted apart), so the page can
 * draw the one the user picks without embedding the tensors. A dump that cannot be read is
 * listed with its error instead of failing the page. Not a general .npy tool (core/npy-read.c
 * parses) and it writes nothing but the page's data.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/debug-keys.h>

#include "core/npy-internal.h"
#include "html/html-internal.h"

#define INDEX_MAX_BYTES ((size_t)64 << 20)
#define DUMP_MAX_BYTES ((size_t)1 << 30)

struct hist {
	uint64_t n, nan, inf, bins[FP_HTML_HIST_BINS];
	double lo, hi;
	bool any;
};

static void histogram(const struct fp_npy_view *a, struct hist *h)
{
	uint64_t i;
	double x, w;
	size_t b;

	memset(h, 0, sizeof(*h));
	h->n = a->numel;
	for (i = 0; i < a->numel; i++) {
		x = fp_npy_get(a, i);
		if (isnan(x)) {
			h->nan++;
		} else if (isinf(x)) {
			h->inf++;
		} else if (!h->any) {
			h->lo = h->hi = x;
			h->any = true;
		} else {
			if (x < h->lo)
				h->lo = x;
			if (x > h->hi)
				h->hi = x;
		}
	}
	if (!h->any)
		return;
	w = h->hi - h->lo;
	for (i = 0; i < a->numel; i++) {
		x = fp_npy_get(a, i);
		if (!isfinite(x))
			continue;
		b = w > 0 ? (size_t)((x - h->lo) / w * FP_HTML_HIST_BINS) : 0;
		if (b >= FP_HTML_HIST_BINS)
			b = FP_HTML_HIST_BINS - 1;
		h->bins[b]++;
	}
}

/* A plain file name: no directory part, not "." or "..". */
static bool plain_name(const char *s)
{
	return s && s[0] && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static void one_dump(struct fp_html_page *p, struct fp_jsonw *w, const char *dir,
		     const struct fp_json_value *e, const char *launch_name)
{
	static const struct fp__html_member copied[] = {
		{"file", FP_DBG_KEY_DUMP_FILE},
		{"site", FP_DBG_KEY_DUMP_SITE},
		{"statement_line", FP_DBG_KEY_DUMP_STATEMENT_LINE},
		{"name", FP_DBG_KEY_DUMP_NAME},
		{"kind", FP_DBG_KEY_DUMP_KIND},
		{"access", FP_DBG_KEY_DUMP_ACCESS},
		{"program", FP_DBG_KEY_DUMP_PROGRAM},
		{"execution", FP_DBG_KEY_DUMP_EXECUTION},
		{"dtype", FP_DBG_KEY_DUMP_DTYPE},
		{"source_dtype", FP_DBG_KEY_DUMP_SOURCE_DTYPE},
		{"shape", FP_DBG_KEY_DUMP_SHAPE}};
	const char *file = fp_json_string(fp_json_get(e, FP_DBG_KEY_DUMP_FILE), NULL);
	char path[4096], err[320] = "";
	struct fp_strbuf sb;
	struct fp_npy_view a;
	struct fp_diag d;
	struct hist h;
	size_t i;

	fp_strbuf_init(&sb, DUMP_MAX_BYTES);
	memset(&d, 0, sizeof(d));
	if (!plain_name(file))
		snprintf(err, sizeof(err), "the index names no plain file name");
	else if (!fp__html_join(dir, file, path, sizeof(path)))
		snprintf(err, sizeof(err), "path too long");
	else if (fp_strbuf_read_path(&sb, path, FP_STRBUF_READ_REGULAR, &d) != FP_OK)
		snprintf(err, sizeof(err), "%s", d.msg);
	else if (fp_npy_parse(sb.buf, sb.len, &a, &d) != FP_OK)
		snprintf(err, sizeof(err), "%s: %s", file, d.msg);
	fp_jsonw_object_begin(w);
	for (i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		fp_jsonw_key(w, copied[i].page);
		fp__html_copy_json(w, fp_json_get(e, copied[i].input), 2, 8, 256, NULL);
	}
	if (err[0]) {
		fp_jsonw_kv_string(w, "error", err);
		fp_html_page_note(p, "%s: dump %s not shown: %s", launch_name,
				  plain_name(file) ? file : "?", err);
	} else {
		histogram(&a, &h);
		fp_jsonw_kv_uint(w, "n", h.n);
		fp_jsonw_kv_uint(w, "nan", h.nan);
		fp_jsonw_kv_uint(w, "inf", h.inf);
		fp_jsonw_kv_double(w, "lo", h.any ? h.lo : NAN);
		fp_jsonw_kv_double(w, "hi", h.any ? h.hi : NAN);
		fp_jsonw_key(w, "bins");
		fp_jsonw_array_begin(w);
		for (i = 0; h.any && i < FP_HTML_HIST_BINS; i++)
			fp_jsonw_uint(w, h.bins[i]);
		fp_jsonw_array_end(w);
		p->st.dumps++;
	}
	fp_jsonw_object_end(w);
	fp_strbuf_release(&sb);
}

int fp__html_dumps(struct fp_html_page *p, struct fp_jsonw *w, const char *dir,
		   const char *launch_name)
{
	const struct fp_json_value *list, *e;
	struct fp_json_doc *doc = NULL;
	char path[4096];
	struct fp_strbuf sb;
	struct fp_diag d;
	size_t i, n, shown = 0;
	const char *kind;
	int rc;

	memset(&d, 0, sizeof(d));
	fp_strbuf_init(&sb, INDEX_MAX_BYTES);
	if (!fp__html_join(dir, "tensor_index.json", path, sizeof(path)))
		rc = fp_diag_set(&d, FP_EINVAL, 0, "path too long");
	else
		rc = fp_strbuf_read_path(&sb, path, FP_STRBUF_READ_REGULAR, &d);
	if (!rc)
		rc = fp_json_parse(sb.buf, sb.len, NULL, &doc, &d);
	fp_strbuf_release(&sb);
	list = fp_json_get(fp_json_root(doc), FP_DBG_KEY_INDEX_ARTIFACTS);
	if (!rc && fp_json_type(list) != FP_JSON_ARRAY)
		rc = fp_diag_set(&d, FP_EFORMAT, 0, "no 'artifacts' array");
	if (rc) {
		if (rc == FP_ENOMEM) {
			fp_json_doc_free(doc);
			return rc;
		}
		fp_html_page_note(p, "%s: dumps not shown: %s: %s", launch_name, path, d.msg);
		fp_json_doc_free(doc);
		return fp_jsonw_null(w);
	}
	fp_jsonw_array_begin(w);
	n = fp_json_len(list);
	for (i = 0; i < n; i++) {
		e = fp_json_at(list, i);
		kind = fp_json_string(fp_json_get(e, FP_DBG_KEY_DUMP_KIND), NULL);
		if (kind && strcmp(kind, "mask") == 0)
			continue; /* a mask goes with its address dump: not a histogram of its own */
		if (shown == p->o.max_dumps) {
			size_t more = 0, j;

			for (j = i; j < n; j++) {
				kind = fp_json_string(
					fp_json_get(fp_json_at(list, j), FP_DBG_KEY_DUMP_KIND),
					NULL);
				more += !kind || strcmp(kind, "mask") != 0;
			}
			fp_html_page_note(p, "%s: %zu more dumps are not shown (--max-dumps %zu)",
					  launch_name, more, p->o.max_dumps);
			break;
		}
		one_dump(p, w, dir, e, launch_name);
		shown++;
	}
	rc = fp_jsonw_array_end(w);
	fp_json_doc_free(doc);
	return rc;
}
