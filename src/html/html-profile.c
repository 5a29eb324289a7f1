/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile's side of the HTML report: the call tree as `flagprism view` evaluates it (the
 * same metric specs and derived columns, through include/flagprism/view.h; for a comparison the
 * same union of the two trees by name paths), cut to the heaviest rows a picture can show
 * (closed under parents; each cut is summarised as one "(N more)" row under its parent), with
 * each row's kind (kernel, scope, Python frame, scope inside a kernel) for the icicle's colours;
 * the devices with their peaks; and the kernels' roofline positions (roofline.h). It does not
 * read files (the caller gives trees), evaluate metrics itself, or draw.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/roofline.h>
#include <flagprism/view.h>

#include "html/html-internal.h"

/* Candidates for the table when the options name no metrics, in column order. */
static const char *const derived[] = {"time/ms",     "count",   "avg_time/us",
				      "gbyte/s",     "tflop/s", "est_gbyte/s",
				      "est_tflop/s", "util",    "est_util"};

/* Raw metrics the derived ones already show, or that are not numbers. */
static bool covered(const char *name)
{
	static const char *const prefixes[] = {"time (ns)", "count",     "bytes",      "flops",
					       "est_",      "device_id", "device_type"};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return strstr(name, "warning") != NULL;
}

static bool parses(struct fp_calltree *t, const char *spec)
{
	struct fp_view_metric m;

	return fp_view_metric_parse(t, spec, strlen(spec), &m, NULL) == FP_OK;
}

/* Append `spec` to the comma-separated list when both trees take it. */
static int try_spec(struct fp_strbuf *sb, size_t *n, struct fp_calltree *t,
		    struct fp_calltree *other, const char *spec)
{
	if (*n == FP_VIEW_MAX_COLUMNS || !parses(t, spec) || (other && !parses(other, spec)) ||
	    strchr(spec, ','))
		return FP_OK;
	(*n)++;
	if (sb->len && fp_strbuf_addch(sb, ','))
		return FP_ENOMEM;
	return fp_strbuf_addstr(sb, spec);
}

/* The default columns: every derived metric both trees allow, then their other raw metrics
 * (hardware counters first), up to FP_VIEW_MAX_COLUMNS; *left counts those that did not fit. */
static int default_specs(struct fp_calltree *t, struct fp_calltree *other, struct fp_strbuf *sb,
			 size_t *left)
{
	size_t i, n = 0, pass;
	uint32_t m, nm = fp_calltree_metric_count(t);
	const char *name;
	int rc;

	for (i = 0; i < sizeof(derived) / sizeof(derived[0]); i++) {
		rc = try_spec(sb, &n, t, other, derived[i]);
		if (rc)
			return rc;
	}
	for (pass = 0; pass < 2; pass++)
		for (m = 0; m < nm; m++) {
			bool hw;

			name = fp_calltree_metric_name(t, m, NULL, NULL);
			if (!name || covered(name))
				continue;
			hw = strncmp(name, "hw:", 3) == 0 || strncmp(name, "ncu:", 4) == 0;
			if (hw != (pass == 0))
				continue;
			if (n == FP_VIEW_MAX_COLUMNS) {
				if (parses(t, name))
					(*left)++;
				continue;
			}
			rc = try_spec(sb, &n, t, other, name);
			if (rc)
				return rc;
		}
	return FP_OK;
}

/* ---- rows ---------------------------------------------------------------------------------- */

struct out {
	struct fp_strbuf name, depth, kind, more;
	struct fp_strbuf *a, *b; /* per column */
	size_t ncols, n, others;
};

static int out_init(struct out *o, size_t ncols, bool diff)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->ncols = ncols;
	o->a = fp_calloc(ncols, sizeof(*o->a));
	o->b = diff ? fp_calloc(ncols, sizeof(*o->b)) : NULL;
	if (!o->a || (diff && !o->b))
		return FP_ENOMEM;
	fp_strbuf_init(&o->name, 0);
	fp_strbuf_init(&o->depth, 0);
	fp_strbuf_init(&o->kind, 0);
	fp_strbuf_init(&o->more, 0);
	for (i = 0; i < ncols; i++) {
		fp_strbuf_init(&o->a[i], 0);
		if (o->b)
			fp_strbuf_init(&o->b[i], 0);
	}
	return FP_OK;
}

static void out_release(struct out *o)
{
	size_t i;

	fp_strbuf_release(&o->name);
	fp_strbuf_release(&o->depth);
	fp_strbuf_release(&o->kind);
	fp_strbuf_release(&o->more);
	for (i = 0; o->a && i < o->ncols; i++)
		fp_strbuf_release(&o->a[i]);
	for (i = 0; o->b && i < o->ncols; i++)
		fp_strbuf_release(&o->b[i]);
	fp_free(o->a);
	fp_free(o->b);
}

/* One emitted row. `a`/`b` hold ncols values each (b NULL for a single profile). */
static int out_row(struct out *o, const char *name, size_t len, uint32_t depth, char kind,
		   uint64_t more, const double *a, const double *b)
{
	struct fp_jsonw *w;
	size_t i;
	int rc = FP_OK;

	if (o->n) {
		rc = fp_strbuf_addch(&o->name, ',');
		rc = rc ? rc : fp_strbuf_addch(&o->depth, ',');
		rc = rc ? rc : fp_strbuf_addch(&o->more, ',');
		for (i = 0; i < o->ncols && !rc; i++) {
			rc = fp_strbuf_addch(&o->a[i], ',');
			if (!rc && o->b)
				rc = fp_strbuf_addch(&o->b[i], ',');
		}
		if (rc)
			return rc;
	}
	w = fp_jsonw_new_strbuf(&o->name, 0);
	if (!w)
		return FP_ENOMEM;
	fp_jsonw_string_n(w, name ? name : "", name ? len : 0);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	rc = rc ? rc : fp_strbuf_addf(&o->depth, "%" PRIu32, depth);
	rc = rc ? rc : fp_strbuf_addch(&o->kind, kind);
	rc = rc ? rc : fp_strbuf_addf(&o->more, "%" PRIu64, more);
	for (i = 0; i < o->ncols && !rc; i++) {
		rc = fp__html_num(&o->a[i], a ? a[i] : NAN);
		if (!rc && o->b)
			rc = fp__html_num(&o->b[i], b ? b[i] : NAN);
	}
	if (!rc)
		o->n++;
	return rc;
}

static int out_block(struct fp_html_page *p, struct out *o, size_t *block)
{
	struct fp_strbuf sb;
	size_t i;
	int rc;

	fp_strbuf_init(&sb, 0);
	rc = fp_strbuf_addf(&sb, "{\"n\":%zu,\"name\":[", o->n);
	rc = rc ? rc : fp_strbuf_add(&sb, o->name.buf, o->name.len);
	rc = rc ? rc : fp_strbuf_addstr(&sb, "],\"depth\":[");
	rc = rc ? rc : fp_strbuf_add(&sb, o->depth.buf, o->depth.len);
	rc = rc ? rc : fp_strbuf_addstr(&sb, "],\"kind\":\"");
	rc = rc ? rc : fp_strbuf_add(&sb, o->kind.buf, o->kind.len);
	rc = rc ? rc : fp_strbuf_addstr(&sb, "\",\"more\":[");
	rc = rc ? rc : fp_strbuf_add(&sb, o->more.buf, o->more.len);
	rc = rc ? rc : fp_strbuf_addstr(&sb, "],\"a\":[");
	for (i = 0; i < o->ncols && !rc; i++) {
		rc = fp_strbuf_addstr(&sb, i ? ",[" : "[");
		rc = rc ? rc : fp_strbuf_add(&sb, o->a[i].buf, o->a[i].len);
		rc = rc ? rc : fp_strbuf_addch(&sb, ']');
	}
	rc = rc ? rc : fp_strbuf_addstr(&sb, o->b ? "],\"b\":[" : "],\"b\":null");
	for (i = 0; o->b && i < o->ncols && !rc; i++) {
		rc = fp_strbuf_addstr(&sb, i ? ",[" : "[");
		rc = rc ? rc : fp_strbuf_add(&sb, o->b[i].buf, o->b[i].len);
		rc = rc ? rc : fp_strbuf_addch(&sb, ']');
	}
	rc = rc ? rc : fp_strbuf_addstr(&sb, o->b ? "]}" : "}");
	if (rc) {
		fp_strbuf_release(&sb);
		return rc;
	}
	return fp__html_block_add(p, &sb, block);
}

/* "file.py:function@123": a Python frame. */
static bool python_frame(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == n || i == 0 || s[i - 1] != '@')
		return false;
	return memchr(s, ':', i - 1) != NULL;
}

struct side {
	struct fp_calltree *t;
	struct fp_view *v;
	uint32_t *row_of; /* node -> row of v, or UINT32_MAX */
	uint32_t dev;     /* "device_id" metric id, or FP_VIEW_NONE */
	double *vals;     /* ncols scratch */
};

static int side_init(struct side *s, struct fp_calltree *t, const struct fp_view_options *o,
		     size_t ncols, struct fp_diag *diag)
{
	struct fp_view_row row;
	size_t i, n, nodes;
	int rc;

	memset(s, 0, sizeof(*s));
	s->t = t;
	if (fp_calltree_metric_find(t, "device_id", 9, &s->dev) != FP_OK)
		s->dev = FP_VIEW_NONE;
	rc = fp_view_new(t, NULL, o, &s->v, diag);
	if (rc)
		return rc;
	nodes = fp_calltree_node_count(t);
	s->row_of = fp_reallocarray(NULL, nodes ? nodes : 1, sizeof(*s->row_of));
	s->vals = fp_calloc(ncols ? ncols : 1, sizeof(double));
	if (!s->row_of || !s->vals)
		return FP_ENOMEM;
	memset(s->row_of, 0xff, nodes * sizeof(*s->row_of));
	n = fp_view_row_count(s->v);
	for (i = 0; i < n; i++)
		if (fp_view_row(s->v, i, &row) == FP_OK && row.node < nodes)
			s->row_of[row.node] = (uint32_t)i;
	return FP_OK;
}

static void side_release(struct side *s)
{
	fp_view_free(s->v);
	fp_free(s->row_of);
	fp_free(s->vals);
}

/* The columns of `node` in s (NaN when absent); returns s->vals or NULL. */
static const double *side_values(struct side *s, uint32_t node, size_t ncols)
{
	struct fp_view_row row;
	size_t i;

	if (!s->t || node == FP_CALLTREE_NONE || node >= fp_calltree_node_count(s->t) ||
	    s->row_of[node] == UINT32_MAX || fp_view_row(s->v, s->row_of[node], &row) != FP_OK) {
		for (i = 0; i < ncols; i++)
			s->vals[i] = NAN;
		return NULL;
	}
	memcpy(s->vals, row.values, ncols * sizeof(double));
	return s->vals;
}

static bool is_kernel(const struct side *s, uint32_t node)
{
	struct fp_calltree_value v;

	return s->t && node != FP_CALLTREE_NONE && s->dev != FP_VIEW_NONE &&
	       fp_calltree_get(s->t, node, s->dev, &v) == FP_OK;
}

static double weight_of(double x)
{
	return isfinite(x) ? fabs(x) : 0;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

struct open_row {
	uint32_t depth;
	bool in_kernel;
	uint64_t more;
	double more_a, more_b;
};

/* Choose and emit the rows of view `v` (the comparison's or the single tree's). */
static int rows(struct fp_html_page *p, struct fp_view *v, struct side *a, struct side *b,
		struct out *o, double *thr_out)
{
	size_t n = fp_view_row_count(v), ncols = o->ncols, i, keep_eq = 0, sp = 0;
	double *w = NULL, *sorted = NULL, thr = 0;
	struct open_row *stack = NULL;
	struct fp_view_row row;
	const double *va, *vb;
	double va0, vb0;
	int rc = FP_ENOMEM;

	w = fp_reallocarray(NULL, n ? n : 1, sizeof(*w));
	stack = fp_reallocarray(NULL, FP_CALLTREE_DEFAULT_MAX_DEPTH + 2, sizeof(*stack));
	if (!w || !stack)
		goto out;
	for (i = 0; i < n; i++) {
		if (fp_view_row(v, i, &row) != FP_OK)
			goto out;
		if (b) {
			va = side_values(a, row.node, ncols);
			va0 = va ? va[0] : NAN;
			vb = side_values(b, row.other_node, ncols);
			vb0 = vb ? vb[0] : NAN;
			w[i] = fmax(weight_of(va0), weight_of(vb0));
		} else {
			w[i] = weight_of(row.values[0]);
		}
	}
	if (n > p->o.max_nodes) {
		size_t above = 0;

		sorted = fp_reallocarray(NULL, n, sizeof(*sorted));
		if (!sorted)
			goto out;
		memcpy(sorted, w, n * sizeof(*w));
		qsort(sorted, n, sizeof(*sorted), cmp_desc);
		thr = sorted[p->o.max_nodes - 1];
		for (i = 0; i < p->o.max_nodes; i++)
			above += sorted[i] > thr;
		keep_eq = p->o.max_nodes - above;
	} else {
		thr = -1;
	}
	*thr_out = thr;
	for (i = 0; i < n; i++) {
		bool parent_kept, keep, ink;
		char kind;

		fp_view_row(v, i, &row);
		/* close the rows this one is not inside of */
		while (sp > 0 && stack[sp - 1].depth >= row.depth) {
			struct open_row *t = &stack[--sp];

			if (t->more) {
				double ma[FP_VIEW_MAX_COLUMNS], mb[FP_VIEW_MAX_COLUMNS];
				size_t c;

				for (c = 0; c < ncols; c++)
					ma[c] = mb[c] = NAN;
				ma[0] = t->more_a;
				mb[0] = t->more_b;
				rc = out_row(o, NULL, 0, t->depth + 1, 'o', t->more, ma,
					     b ? mb : NULL);
				if (rc)
					goto out;
				o->others++;
			}
		}
		parent_kept = row.depth == 0 || (sp > 0 && stack[sp - 1].depth + 1 == row.depth);
		keep = parent_kept && o->n - o->others < p->o.max_nodes &&
		       (w[i] > thr || (w[i] == thr && keep_eq > 0));
		if (b) {
			va = side_values(a, row.node, ncols);
			va0 = va ? va[0] : 0;
			vb = side_values(b, row.other_node, ncols);
			vb0 = vb ? vb[0] : 0;
		} else {
			va = row.values;
			va0 = isfinite(va[0]) ? va[0] : 0;
			vb = NULL;
			vb0 = 0;
		}
		if (!keep) {
			if (sp > 0) {
				struct open_row *t = &stack[sp - 1];

				t->more++;
				if (parent_kept) {
					t->more_a += isfinite(va0) ? va0 : 0;
					t->more_b += isfinite(vb0) ? vb0 : 0;
				}
			}
			continue;
		}
		if (w[i] == thr)
			keep_eq--;
		ink = sp > 0 && stack[sp - 1].in_kernel;
		if (row.depth == 0)
			kind = 'r';
		else if (ink)
			kind = 'i';
		else if (is_kernel(a, row.node) || (b && is_kernel(b, row.other_node)))
			kind = 'k';
		else if (python_frame(row.name, row.name_len))
			kind = 'p';
		else
			kind = 's';
		if (b) {
			/* side_values() reuses its scratch: copy A before asking B */
			double ca[FP_VIEW_MAX_COLUMNS];

			va = side_values(a, row.node, ncols);
			if (va)
				memcpy(ca, va, ncols * sizeof(double));
			vb = side_values(b, row.other_node, ncols);
			rc = out_row(o, row.name, row.name_len, row.depth, kind, 0, va ? ca : NULL,
				     vb ? b->vals : NULL);
		} else {
			rc = out_row(o, row.name, row.name_len, row.depth, kind, 0, row.values,
				     NULL);
		}
		if (rc)
			goto out;
		if (sp < FP_CALLTREE_DEFAULT_MAX_DEPTH + 2) {
			stack[sp].depth = row.depth;
			stack[sp].in_kernel = ink || kind == 'k';
			stack[sp].more = 0;
			stack[sp].more_a = stack[sp].more_b = 0;
			sp++;
		}
	}
	while (sp > 0) {
		struct open_row *t = &stack[--sp];

		if (t->more) {
			double ma[FP_VIEW_MAX_COLUMNS], mb[FP_VIEW_MAX_COLUMNS];
			size_t c;

			for (c = 0; c < ncols; c++)
				ma[c] = mb[c] = NAN;
			ma[0] = t->more_a;
			mb[0] = t->more_b;
			rc = out_row(o, NULL, 0, t->depth + 1, 'o', t->more, ma, b ? mb : NULL);
			if (rc)
				goto out;
			o->others++;
		}
	}
	rc = FP_OK;
out:
	fp_free(w);
	fp_free(sorted);
	fp_free(stack);
	return rc;
}

/* ---- devices and roofline ------------------------------------------------------------------ */

static void devices(struct fp_jsonw *w, const struct fp_calltree *t)
{
	struct fp_calltree_device_attr at, prev;
	struct fp_view_peaks pk;
	size_t i, n = fp_calltree_device_count(t);
	bool have_prev = false;

	fp_jsonw_array_begin(w);
	for (i = 0; i < n; i++) {
		if (fp_calltree_device_at(t, i, &at) != FP_OK)
			break;
		if (have_prev && strcmp(prev.type, at.type) == 0 &&
		    strcmp(prev.index, at.index) == 0)
			continue;
		prev = at;
		have_prev = true;
		fp_view_peaks_of(t, at.type, at.index, &pk);
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "type", at.type);
		fp_jsonw_kv_string(w, "index", at.index);
		fp_jsonw_kv_string(w, "arch", pk.arch);
		fp_jsonw_kv_bool(w, "peaks_known", pk.known);
		fp_jsonw_kv_double(w, "peak_flops16", pk.known ? pk.flops[1] : NAN);
		fp_jsonw_kv_double(w, "peak_flops32", pk.known ? pk.flops[2] : NAN);
		fp_jsonw_kv_double(w, "peak_bytes_per_s", pk.known ? pk.bytes_per_s : NAN);
		fp_jsonw_kv_string(w, "note", pk.known ? NULL : pk.note);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}

struct kn {
	double time;
	uint32_t node;
};

static int kn_cmp(const void *a, const void *b)
{
	const struct kn *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int roofline(struct fp_html_page *p, struct fp_jsonw *w, const struct fp_calltree *t)
{
	struct fp_calltree_value v;
	struct fp_roofline_point pt;
	uint32_t dev, tm, node;
	size_t n = fp_calltree_node_count(t), nk = 0, i, shown = 0;
	struct kn *k;
	const char *name;
	size_t len;

	if (fp_calltree_metric_find(t, "device_id", 9, &dev) != FP_OK ||
	    fp_calltree_metric_find(t, "time (ns)", 9, &tm) != FP_OK)
		return fp_jsonw_null(w);
	k = fp_reallocarray(NULL, n ? n : 1, sizeof(*k));
	if (!k)
		return FP_ENOMEM;
	for (node = 0; node < n; node++)
		if (fp_calltree_get(t, node, dev, &v) == FP_OK &&
		    fp_calltree_get(t, node, tm, &v) == FP_OK && v.total > 0) {
			k[nk].time = v.total;
			k[nk++].node = node;
		}
	qsort(k, nk, sizeof(*k), kn_cmp);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "kernels", nk);
	fp_jsonw_key(w, "points");
	fp_jsonw_array_begin(w);
	for (i = 0; i < nk && shown < p->o.max_roofline; i++) {
		if (fp_roofline_point(t, k[i].node, &pt) != FP_OK)
			continue;
		if (!isfinite(pt.intensity) && !isfinite(pt.flop_per_s))
			continue;
		name = fp_calltree_node_name(t, k[i].node, &len);
		fp_jsonw_object_begin(w);
		fp_jsonw_key(w, "name");
		fp_jsonw_string_n(w, name, len);
		fp_jsonw_kv_double(w, "seconds", pt.seconds);
		fp_jsonw_kv_double(w, "flops", pt.flops);
		fp_jsonw_kv_double(w, "bytes", pt.bytes);
		fp_jsonw_kv_string(w, "flops_src", fp_roofline_source_name(pt.flops_src));
		fp_jsonw_kv_string(w, "bytes_src", fp_roofline_source_name(pt.bytes_src));
		fp_jsonw_kv_int(w, "flops_width", pt.flops_width);
		fp_jsonw_kv_double(w, "flop_per_s", pt.flop_per_s);
		fp_jsonw_kv_double(w, "byte_per_s", pt.byte_per_s);
		fp_jsonw_kv_double(w, "intensity", pt.intensity);
		fp_jsonw_kv_bool(w, "peaks_known", pt.peaks_known);
		fp_jsonw_kv_double(w, "peak_flops", pt.peak_flops);
		fp_jsonw_kv_double(w, "peak_bytes_per_s", pt.peak_bytes_per_s);
		fp_jsonw_kv_double(w, "ridge", pt.ridge);
		fp_jsonw_kv_double(w, "roof", pt.roof);
		fp_jsonw_kv_double(w, "pct_of_roof", pt.pct_of_roof);
		fp_jsonw_kv_string(w, "bound", pt.bound);
		fp_jsonw_object_end(w);
		shown++;
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	if (shown == p->o.max_roofline && i < nk)
		fp_html_page_note(p, "roofline: the %zu kernels taking most time are placed of %zu",
				  shown, nk);
	fp_free(k);
	return FP_OK;
}

/* ---- the profile ---------------------------------------------------------------------------- */

static void read_info(struct fp_jsonw *w, const char *prefix, const struct fp_view_read_info *in)
{
	char key[64];

	snprintf(key, sizeof(key), "%sincomplete", prefix);
	fp_jsonw_kv_bool(w, key, in && in->incomplete);
	snprintf(key, sizeof(key), "%sreasons", prefix);
	fp_jsonw_kv_string(w, key, in && in->reasons[0] ? in->reasons : NULL);
	snprintf(key, sizeof(key), "%smeta_warning", prefix);
	fp_jsonw_kv_string(w, key, in && in->meta_warning[0] ? in->meta_warning : NULL);
}

int fp_html_profile_set(struct fp_html_page *p, struct fp_calltree *t, const char *path,
			const struct fp_view_read_info *info, struct fp_calltree *other,
			const char *other_path, const struct fp_view_read_info *other_info,
			struct fp_diag *diag)
{
	struct fp_view_options vo;
	struct fp_strbuf specs, frag;
	struct fp_view *vd = NULL;
	struct side a, b;
	struct out o;
	struct fp_jsonw *w = NULL;
	size_t left = 0, ncols, i, block, nblocks0;
	double thr = 0;
	int rc;

	fp_diag_clear(diag);
	if (!p || p->kind != FP_HTML_PROFILE || !t)
		return fp_diag_set(diag, FP_EINVAL, 0, "not a profile page, or no tree");
	if (p->profile.len)
		return fp_diag_set(diag, FP_EINVAL, 0, "the page already has a profile");
	nblocks0 = p->nblocks;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&o, 0, sizeof(o));
	fp_strbuf_init(&specs, 0);
	fp_strbuf_init(&frag, 0);
	rc = fp_calltree_finalize(t);
	if (!rc && other)
		rc = fp_calltree_finalize(other);
	if (rc)
		goto out;
	if (p->o.metrics && p->o.metrics[0])
		rc = fp_strbuf_addstr(&specs, p->o.metrics);
	else
		rc = default_specs(t, other, &specs, &left);
	if (rc)
		goto out;
	fp_view_options_init(&vo);
	vo.metrics = specs.len ? specs.buf : NULL;
	vo.max_depth = UINT32_MAX;
	rc = fp_view_new(t, NULL, &vo, &a.v, diag);
	if (rc)
		goto out;
	ncols = fp_view_column_count(a.v);
	fp_view_free(a.v);
	a.v = NULL;
	rc = side_init(&a, t, &vo, ncols, diag);
	if (!rc && other)
		rc = side_init(&b, other, &vo, ncols, diag);
	if (!rc && other)
		rc = fp_view_new(t, other, &vo, &vd, diag);
	if (rc)
		goto out;
	rc = out_init(&o, ncols, other != NULL);
	if (rc)
		goto out;
	rc = rows(p, other ? vd : a.v, &a, other ? &b : NULL, &o, &thr);
	if (rc)
		goto out;
	rc = out_block(p, &o, &block);
	if (rc)
		goto out;

	w = fp_jsonw_new_strbuf(&frag, 0);
	if (!w) {
		rc = FP_ENOMEM;
		goto out;
	}
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "path", path);
	fp_jsonw_kv_string(w, "other_path", other ? other_path : NULL);
	fp_jsonw_kv_bool(w, "diff", other != NULL);
	read_info(w, "", info);
	read_info(w, "other_", other ? other_info : NULL);
	fp_jsonw_kv_uint(w, "nodes_total", fp_calltree_node_count(t));
	fp_jsonw_kv_uint(w, "other_nodes_total", other ? fp_calltree_node_count(other) : 0);
	fp_jsonw_kv_uint(w, "rows_total", fp_view_row_count(other ? vd : a.v));
	fp_jsonw_kv_uint(w, "rows", o.n - o.others);
	fp_jsonw_kv_uint(w, "other_rows", o.others);
	fp_jsonw_kv_uint(w, "max_nodes", p->o.max_nodes);
	fp_jsonw_kv_double(w, "cut_below", thr >= 0 ? thr : NAN);
	fp_jsonw_key(w, "columns");
	fp_jsonw_array_begin(w);
	for (i = 0; i < ncols; i++) {
		const struct fp_view_metric *m = fp_view_column(a.v, i);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "label", fp_view_column_label(a.v, i));
		fp_jsonw_kv_bool(w, "summed", m && m->summed);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "columns_left_out", left);
	fp_jsonw_key(w, "view_notes");
	fp_jsonw_array_begin(w);
	for (i = 0; i < fp_view_note_count(other ? vd : a.v); i++)
		fp_jsonw_string(w, fp_view_note(other ? vd : a.v, i));
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "devices");
	devices(w, other ? other : t);
	fp_jsonw_key(w, "roofline");
	rc = other ? fp_jsonw_null(w) : roofline(p, w, t);
	if (rc)
		goto out;
	{
		char id[FP__HTML_BLOCK_ID];

		fp__html_block_id(block, id);
		fp_jsonw_kv_string(w, "tree", id);
	}
	fp_jsonw_object_end(w);
	rc = fp_jsonw_finish(w);
	if (rc)
		goto out;
	if (left)
		fp_html_page_note(
			p, "table: %zu more metrics are not columns (at most %u; -m chooses)", left,
			FP_VIEW_MAX_COLUMNS);
	if (o.others)
		fp_html_page_note(
			p,
			"call tree: the %zu heaviest of %zu rows are shown (--max-nodes); "
			"the rest is summarised in %zu \"more\" rows",
			o.n - o.others, fp_view_row_count(other ? vd : a.v), o.others);
	rc = fp__html_title_default(p, "%s%s%s: FlagPrism profile",
				    path ? fp__html_basename(path) : "profile", other ? " vs " : "",
				    other ? (other_path ? fp__html_basename(other_path) : "other") :
					    "");
	if (rc)
		goto out;
	p->profile = frag;
	fp_strbuf_init(&frag, 0);
	p->st.data_bytes += p->profile.len;
	p->st.rows = o.n - o.others;
	p->st.rows_total = fp_view_row_count(other ? vd : a.v);
out:
	while (rc && p->nblocks > nblocks0) /* the page is unchanged on failure */
		fp_strbuf_release(&p->blocks[--p->nblocks].json);
	fp_jsonw_free(w);
	out_release(&o);
	fp_view_free(vd);
	side_release(&a);
	side_release(&b);
	fp_strbuf_release(&specs);
	fp_strbuf_release(&frag);
	return rc;
}
