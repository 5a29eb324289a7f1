/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Views of call trees: the columns of one tree, or the comparison of two, filtered, ordered and
 * rendered as an indented text tree. Work is done once in fp_view_new(), over dense arrays
 * indexed by node id (a child's id is always larger than its parent's, so one forward pass
 * pushes facts down the tree and one backward pass pulls them up): filters mark removed nodes,
 * inclusive totals are recomputed without them, columns are evaluated for every node, rows are
 * built (the union of two trees by name paths for a comparison), the threshold is applied and the
 * display order is fixed. Rendering then only formats. Spec parsing, peaks and the arithmetic of
 * one value are in view-metric.c; reading files in view-read.c.
 */
#include "fp-setup.h"

#include <math.h>
#include <regex.h>

#include <flagprism/strbuf.h>

#include "view/view-internal.h"

#define MAX_NOTES 32
#define METADATA_FRAME "__proton_launch_metadata"
#define LINE_CAP ((size_t)1 << 20)

/* Per-frame match cache bits. */
#define FM_DONE 0x1u
#define FM_EXCLUDE 0x2u
#define FM_INCLUDE 0x4u
#define FM_META 0x8u

#define ROW_KEPT 0x1u
#define ROW_SHOWN 0x2u
#define ROW_PASS 0x4u

struct devcache {
	const char *type, *index; /* borrowed from the tree */
	struct fp_view_peaks pk;
};

#define DEVCACHE 64
#define MAX_IDS (FP_VIEW_MAX_COLUMNS * FP_VIEW_MAX_SRC)

/* One tree's side of a view: its columns and their values by node. */
struct side {
	struct fp_calltree *t;
	size_t n;
	struct fp_view_metric cols[FP_VIEW_MAX_COLUMNS];
	uint8_t *gone; /* by node: removed by a filter; NULL when nothing is */
	double *vals;  /* [col * n + node], valid where done[node]; NaN for removed nodes */
	uint8_t *done; /* by node: vals computed */
	double denom[FP_VIEW_MAX_COLUMNS]; /* PERCENT denominators */
	/* Sources gathered with totals recomputed (only when gone != NULL). */
	uint32_t ids[MAX_IDS];
	double *arr[MAX_IDS];
	size_t nids;
	struct devcache *dc; /* device peaks seen so far */
	size_t ndc;
	size_t hidden_meta;
};

struct fp_view {
	size_t ncols;
	bool diff;
	bool lazy; /* values computed on demand (plain view without threshold or leaf list) */
	struct fp_view_options opt; /* string fields cleared: they were borrowed */
	struct side a, b;
	size_t nrows;
	uint32_t *row_a, *row_b, *row_parent; /* comparison only */
	double *rv;      /* [col * nrows + row]: shown values (a.vals itself for one tree) */
	uint8_t *flags;  /* by row: ROW_* */
	uint32_t *order; /* rows shown, in display order */
	uint32_t *order_depth;
	uint8_t *order_last; /* the row is its parent's last shown child */
	size_t norder;
	uint32_t *leaves;
	size_t nleaves;
	char *notes[MAX_NOTES];
	size_t nnotes;
};

void fp_view_options_init(struct fp_view_options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_depth = FP_VIEW_DEFAULT_DEPTH;
	o->format = FP_VIEW_FORMAT_FULL;
	o->sort = FP_VIEW_SORT_VALUE;
}

static void add_note(struct fp_view *v, const char *fmt, ...) FP_PRINTF(2, 3);

static void add_note(struct fp_view *v, const char *fmt, ...)
{
	char buf[320];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fp__view_clean(buf, strlen(buf));
	for (i = 0; i < v->nnotes; i++)
		if (strcmp(v->notes[i], buf) == 0)
			return;
	if (v->nnotes < MAX_NOTES) {
		v->notes[v->nnotes] = fp_strdup(buf);
		if (v->notes[v->nnotes])
			v->nnotes++;
	}
}

/* ---- names and numbers -------------------------------------------------------------------- */

int fp_view_format_parse(const char *s, enum fp_view_format *out)
{
	static const char *const names[] = {"full", "file_function_line", "function_line",
					    "file_function"};
	size_t i;

	for (i = 0; s && i < FP_ARRAY_SIZE(names); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum fp_view_format)i;
			return FP_OK;
		}
	}
	return FP_EINVAL;
}

static size_t put(char *buf, size_t cap, size_t at, const char *s, size_t n)
{
	if (at < cap) {
		size_t k = FP_MIN(n, cap - 1 - at);

		memcpy(buf + at, s, k);
		buf[at + k] = '\0';
	}
	return at + n;
}

size_t fp_view_format_name(const char *name, size_t len, enum fp_view_format f, char *buf,
			   size_t cap)
{
	const char *at = NULL, *colon = NULL, *base, *p;
	size_t n = 0;

	if (cap)
		buf[0] = '\0';
	/* "file:function@line": the last '@' followed by digits only, a ':' before it. */
	for (p = name + len; p > name; p--) {
		if (p[-1] == '@') {
			at = p - 1;
			break;
		}
	}
	if (at && at + 1 < name + len) {
		for (p = at + 1; p < name + len; p++)
			if (*p < '0' || *p > '9')
				at = NULL;
	} else {
		at = NULL;
	}
	if (at) {
		for (p = at; p > name; p--) {
			if (p[-1] == ':') {
				colon = p - 1;
				break;
			}
		}
	}
	if (f == FP_VIEW_FORMAT_FULL || !at || !colon)
		return put(buf, cap, 0, name, len);
	base = colon;
	while (base > name && base[-1] != '/')
		base--;
	switch (f) {
	case FP_VIEW_FORMAT_FILE_FUNCTION_LINE:
		n = put(buf, cap, n, base, (size_t)(name + len - base));
		break;
	case FP_VIEW_FORMAT_FUNCTION_LINE:
		n = put(buf, cap, n, colon + 1, (size_t)(name + len - colon - 1));
		break;
	case FP_VIEW_FORMAT_FILE_FUNCTION:
		n = put(buf, cap, n, base, (size_t)(at - base));
		break;
	case FP_VIEW_FORMAT_FULL:
		break;
	}
	return n;
}

/* Decimal digits of u into buf (no NUL); returns the count. */
static size_t utoa(uint64_t u, char *buf)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

int fp_view_format_number(double v, char *buf, size_t size)
{
	/* p10[i] = 10^(i - 4): the decades of the fixed-point range [1e-4, 1e15). */
	static const double p10[] = {1e-4, 1e-3, 1e-2, 1e-1, 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,
				     1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	double a = fabs(v), scaled;
	size_t n = 0, nd, i;
	uint64_t u;
	char digits[24];
	int e, dec, k;

	if (!buf || size < 32)
		return FP_EINVAL;
	if (isnan(v))
		return snprintf(buf, size, "n/a");
	if (isinf(v))
		return snprintf(buf, size, v < 0 ? "-inf" : "inf");
	if (a < 1e15 && v == floor(v)) {
		if (v < 0)
			buf[n++] = '-';
		n += utoa((uint64_t)a, buf + n);
		buf[n] = '\0';
		return (int)n;
	}
	if (a < 1e-4 || a >= 1e15) {
		k = snprintf(buf, size, "%.3e", v);
		return k;
	}
	/* Four significant digits, at least one decimal: dec = max(1, 3 - floor(log10 a)). */
	for (e = -4; e < 14 && a >= p10[e + 5]; e++)
		;
	dec = 3 - e < 1 ? 1 : 3 - e; /* 1 .. 7 */
	scaled = a * p10[dec + 4] + 0.5;
	if (scaled >= 9e15) {
		k = snprintf(buf, size, "%.*f", dec, v);
		n = (size_t)k;
	} else {
		u = (uint64_t)scaled;
		nd = utoa(u, digits);
		if (v < 0)
			buf[n++] = '-';
		if (nd <= (size_t)dec) {
			buf[n++] = '0';
			buf[n++] = '.';
			for (i = nd; i < (size_t)dec; i++)
				buf[n++] = '0';
			memcpy(buf + n, digits, nd);
			n += nd;
		} else {
			memcpy(buf + n, digits, nd - (size_t)dec);
			n += nd - (size_t)dec;
			buf[n++] = '.';
			memcpy(buf + n, digits + nd - (size_t)dec, (size_t)dec);
			n += (size_t)dec;
		}
		buf[n] = '\0';
	}
	/* Trailing zeros go, and the point with them when nothing is left after it. */
	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
	return (int)n;
}

/* ---- filters ------------------------------------------------------------------------------ */

struct matcher {
	regex_t inc, exc;
	bool has_inc, has_exc, hide_meta;
	uint8_t *cache; /* by frame id: FM_* */
	size_t cache_n;
};

static int compile(const char *pattern, regex_t *re, const char *what, struct fp_diag *diag)
{
	char err[160];
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc == 0)
		return FP_OK;
	regerror(rc, re, err, sizeof(err));
	return fp_diag_set(diag, FP_EINVAL, 0, "bad %s regex '%.60s': %s", what, pattern, err);
}

static unsigned frame_bits(struct matcher *mt, const struct fp_calltree *t, uint32_t node)
{
	uint32_t frame = fp_calltree_node_frame(t, node);
	const char *name;
	size_t len;
	unsigned bits = FM_DONE;

	if (frame < mt->cache_n && mt->cache[frame])
		return mt->cache[frame];
	name = fp_calltree_node_name(t, node, &len);
	if (!name)
		return FM_DONE;
	/* Names with NUL bytes match up to the NUL: regexec works on C strings. */
	if (mt->has_exc && regexec(&mt->exc, name, 0, NULL, 0) == 0)
		bits |= FM_EXCLUDE;
	if (mt->has_inc && regexec(&mt->inc, name, 0, NULL, 0) == 0)
		bits |= FM_INCLUDE;
	if (mt->hide_meta &&
	    (strcmp(name, METADATA_FRAME) == 0 ||
	     strncmp(name, METADATA_FRAME ":", sizeof(METADATA_FRAME ":") - 1) == 0))
		bits |= FM_META;
	if (frame < mt->cache_n)
		mt->cache[frame] = (uint8_t)bits;
	return bits;
}

/* Mark the nodes of one side that filters remove (side->gone; stays NULL if none). */
static int apply_filters(struct side *s, struct matcher *mt)
{
	uint8_t *gone, *anc = NULL, *desc = NULL;
	size_t i, n = s->n, removed = 0;
	uint32_t maxf = 0;
	int rc = FP_OK;

	if (!mt->has_inc && !mt->has_exc && !mt->hide_meta)
		return FP_OK;
	for (i = 0; i < n; i++) {
		uint32_t fr = fp_calltree_node_frame(s->t, (uint32_t)i);

		if (fr != FP_CALLTREE_NONE && fr > maxf)
			maxf = fr;
	}
	fp_free(mt->cache);
	mt->cache_n = (size_t)maxf + 1;
	mt->cache = fp_calloc(mt->cache_n, 1);
	gone = fp_calloc(n, 1);
	if (mt->has_inc) {
		anc = fp_calloc(n, 1);
		desc = fp_calloc(n, 1);
	}
	if (!mt->cache || !gone || (mt->has_inc && (!anc || !desc))) {
		rc = FP_ENOMEM;
		goto out;
	}
	for (i = 1; i < n; i++) {
		uint32_t p = fp_calltree_node_parent(s->t, (uint32_t)i);
		unsigned bits = frame_bits(mt, s->t, (uint32_t)i);

		gone[i] = gone[p] || (bits & (FM_EXCLUDE | FM_META));
		if ((bits & FM_META) && !gone[p])
			s->hidden_meta++;
	}
	if (mt->has_inc) {
		anc[0] = (frame_bits(mt, s->t, 0) & FM_INCLUDE) != 0;
		for (i = 1; i < n; i++) {
			uint32_t p = fp_calltree_node_parent(s->t, (uint32_t)i);

			anc[i] = anc[p] ||
				 (!gone[i] && (frame_bits(mt, s->t, (uint32_t)i) & FM_INCLUDE));
		}
		for (i = n; i-- > 1;) {
			uint32_t p = fp_calltree_node_parent(s->t, (uint32_t)i);

			if (!gone[i] && (desc[i] || anc[i]))
				desc[p] = 1;
		}
		for (i = 1; i < n; i++)
			if (!anc[i] && !desc[i])
				gone[i] = 1;
	}
	for (i = 1; i < n; i++)
		removed += gone[i] != 0;
	if (removed) {
		s->gone = gone;
		gone = NULL;
	}
out:
	fp_free(gone);
	fp_free(anc);
	fp_free(desc);
	return rc;
}

/* ---- evaluation --------------------------------------------------------------------------- */

/* A source value at a node: gathered (filters removed nodes) or the tree's own. */
static double source(const struct side *s, uint32_t metric, uint32_t node)
{
	size_t j;

	if (s->nids) {
		for (j = 0; j < s->nids; j++)
			if (s->ids[j] == metric)
				return s->arr[j][node];
		if (metric == FP_VIEW_NONE)
			return NAN;
	}
	return fp__view_source(s->t, metric, node);
}

/* A node's own value of `metric` (NaN when it has none), for recomputing totals. */
static double self_value(const struct fp_calltree *t, uint32_t metric, uint32_t node)
{
	struct fp_calltree_value v;

	if (fp_calltree_get(t, node, metric, &v) != FP_OK || v.is_string)
		return NAN;
	return v.self;
}

static const struct fp_view_peaks *node_peaks(struct fp_view *v, struct side *s,
					      const struct fp_view_metric *m, uint32_t node,
					      struct fp_view_peaks *scratch)
{
	struct devcache *dc = s->dc;
	size_t *ndc = &s->ndc;
	const char *type = fp__view_string(s->t, m->src[FP_VIEW_U_DEVICE_TYPE], node);
	const char *id = fp__view_string(s->t, m->src[FP_VIEW_U_DEVICE_ID], node);
	char idbuf[32];
	size_t i;

	if (!id) {
		double d = fp__view_source(s->t, m->src[FP_VIEW_U_DEVICE_ID], node);

		if (isnan(d))
			return NULL; /* not a kernel: util does not apply */
		snprintf(idbuf, sizeof(idbuf), "%.0f", d);
		fp_view_peaks_of(s->t, type, idbuf, scratch);
		if (!scratch->known)
			add_note(v, "%s: %s shows n/a", scratch->note, m->label);
		return scratch;
	}
	for (i = 0; i < *ndc; i++) {
		if (strcmp(dc[i].index, id) == 0 &&
		    (dc[i].type == type || (dc[i].type && type && strcmp(dc[i].type, type) == 0)))
			return &dc[i].pk;
	}
	fp_view_peaks_of(s->t, type, id, scratch);
	if (!scratch->known)
		add_note(v, "%s: %s shows n/a", scratch->note, m->label);
	if (*ndc < DEVCACHE) {
		dc[*ndc].type = type;
		dc[*ndc].index = id;
		dc[*ndc].pk = *scratch;
		return &dc[(*ndc)++].pk;
	}
	return scratch;
}

/*
 * Prepare one side for evaluation: its value array, the PERCENT denominators and, when filters
 * removed nodes, each distinct source metric gathered into an array with inclusive totals
 * recomputed without them. Without removed nodes values come straight from the tree's totals,
 * so they can be computed lazily for the nodes a depth-limited view actually shows.
 */
static int prepare(struct fp_view *v, struct side *s)
{
	size_t c, k, i, j, n = s->n;

	s->vals = fp_reallocarray(NULL, v->ncols ? v->ncols * n : 1, sizeof(double));
	s->done = fp_calloc(n ? n : 1, 1);
	s->dc = fp_calloc(DEVCACHE, sizeof(*s->dc));
	if (!s->vals || !s->done || !s->dc)
		return FP_ENOMEM;
	for (c = 0; c < v->ncols && s->gone; c++) {
		const struct fp_view_metric *m = &s->cols[c];

		for (k = 0; k < m->nsrc; k++) {
			uint32_t id = m->src[k];

			if (id == FP_VIEW_NONE ||
			    ((m->op == FP_VIEW_OP_UTIL || m->op == FP_VIEW_OP_EST_UTIL) &&
			     k >= FP_VIEW_U_DEVICE_TYPE))
				continue;
			for (j = 0; j < s->nids && s->ids[j] != id; j++)
				;
			if (j < s->nids)
				continue;
			s->ids[s->nids] = id;
			s->arr[s->nids] = fp_reallocarray(NULL, n ? n : 1, sizeof(double));
			if (!s->arr[s->nids])
				return FP_ENOMEM;
			s->nids++;
		}
	}
	for (j = 0; j < s->nids; j++) {
		double *a = s->arr[j];
		bool inclusive = fp__view_source_inclusive(s->t, s->ids[j]);

		for (i = 0; i < n; i++)
			a[i] = s->gone[i] ? NAN :
			       inclusive  ? self_value(s->t, s->ids[j], (uint32_t)i) :
					    fp__view_source(s->t, s->ids[j], (uint32_t)i);
		if (!inclusive)
			continue;
		for (i = n; i-- > 1;) {
			uint32_t p = fp_calltree_node_parent(s->t, (uint32_t)i);

			if (!isnan(a[i]))
				a[p] = (isnan(a[p]) ? 0 : a[p]) + a[i];
		}
	}
	for (c = 0; c < v->ncols; c++) {
		const struct fp_view_metric *m = &s->cols[c];

		s->denom[c] = NAN;
		if (m->op != FP_VIEW_OP_PERCENT)
			continue;
		if (!m->exclusive_sum) {
			s->denom[c] = source(s, m->src[0], FP_CALLTREE_ROOT);
		} else {
			double sum = 0, x;

			for (i = 0; i < n; i++) {
				x = source(s, m->src[0], (uint32_t)i);
				if (!isnan(x))
					sum += x;
			}
			s->denom[c] = sum;
		}
	}
	return FP_OK;
}

/* Every column at one node (once; later calls return at once). */
static void compute(struct fp_view *v, struct side *s, uint32_t node)
{
	size_t c, k;

	if (node == FP_CALLTREE_NONE || s->done[node])
		return;
	s->done[node] = 1;
	for (c = 0; c < v->ncols; c++) {
		const struct fp_view_metric *m = &s->cols[c];
		double x[FP_VIEW_MAX_SRC], *out = &s->vals[c * s->n + node];
		struct fp_view_peaks scratch;
		const struct fp_view_peaks *pk = NULL;

		if (s->gone && s->gone[node]) {
			*out = NAN;
			continue;
		}
		if (m->op == FP_VIEW_OP_UTIL || m->op == FP_VIEW_OP_EST_UTIL) {
			pk = node_peaks(v, s, m, node, &scratch);
			if (!pk) {
				*out = NAN;
				continue;
			}
		}
		for (k = 0; k < m->nsrc; k++)
			x[k] = source(s, m->src[k], node);
		*out = fp__view_eval(m, x, s->denom[c], pk);
	}
}

static void compute_all(struct fp_view *v, struct side *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		compute(v, s, (uint32_t)i);
}

/* ---- specs -------------------------------------------------------------------------------- */

/* Bytewise order, a proper prefix first: the order of fp_calltree_sorted_children(). */
static int bytecmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, FP_MIN(alen, blen));

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* Parse the comma-separated specs against one tree. */
static int parse_specs(struct fp_view *v, struct side *s, const char *specs, const char *which,
		       struct fp_diag *diag)
{
	const char *p = specs, *comma;
	size_t ncols = 0;
	int rc;

	while (*p) {
		comma = strchr(p, ',');
		if (!comma)
			comma = p + strlen(p);
		if (ncols == FP_VIEW_MAX_COLUMNS)
			return fp_diag_set(diag, FP_EINVAL, 0, "more than %d metrics",
					   FP_VIEW_MAX_COLUMNS);
		rc = fp_view_metric_parse(s->t, p, (size_t)(comma - p), &s->cols[ncols], diag);
		if (rc) {
			if (which && diag) {
				char msg[sizeof(diag->msg)];
				size_t used, n;

				memcpy(msg, diag->msg, sizeof(msg));
				used = (size_t)snprintf(diag->msg, sizeof(diag->msg),
							"%s: ", which);
				n = FP_MIN(strlen(msg), sizeof(diag->msg) - 1 - used);
				memcpy(diag->msg + used, msg, n);
				diag->msg[used + n] = '\0';
			}
			return rc;
		}
		if (s->cols[ncols].estimated) {
			const struct fp_view_metric *m = &s->cols[ncols];
			const char *src = fp_calltree_metric_name(s->t, m->src[1], NULL, NULL);
			bool bytes = src && strcmp(src, "est_bytes") == 0;

			add_note(v,
				 "%s: no measured %s in this profile (they come from "
				 "launch_metadata, hook=\"triton\"): computed from FlagPrism's IR "
				 "estimate %s, as est_%s",
				 m->label, bytes ? "bytes" : "flops", src ? src : "?", m->label);
		}
		ncols++;
		p = *comma ? comma + 1 : comma;
	}
	if (ncols == 0)
		return fp_diag_set(diag, FP_EINVAL, 0, "no metric given");
	v->ncols = ncols;
	return FP_OK;
}

static bool parses(const struct fp_calltree *t, const char *spec)
{
	struct fp_view_metric m;

	return !t || fp_view_metric_parse(t, spec, strlen(spec), &m, NULL) == FP_OK;
}

/*
 * The default columns: time/ms and count, and where FlagPrism's IR estimates are present, the
 * rates and the share of the device peak they give; each only if both trees can show it. A tree
 * with none of them gets its first summed metric by name.
 */
static void default_specs(const struct fp_calltree *t, const struct fp_calltree *other, char *buf,
			  size_t size)
{
	static const char *const plain[] = {"time/ms", "count"};
	static const char *const est[] = {"est_gbyte/s", "est_tflop/s", "util"};
	uint32_t i, n = fp_calltree_metric_count(t);
	const char *best = NULL;
	size_t best_len = 0, used = 0;
	bool has_est = parses(t, "est_bytes") || parses(t, "est_flops");

	buf[0] = '\0';
	for (i = 0; i < FP_ARRAY_SIZE(plain) + FP_ARRAY_SIZE(est); i++) {
		const char *spec =
			i < FP_ARRAY_SIZE(plain) ? plain[i] : est[i - FP_ARRAY_SIZE(plain)];

		if (i >= FP_ARRAY_SIZE(plain) && !has_est)
			break;
		if (parses(t, spec) && parses(other, spec) && used + strlen(spec) + 2 < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "",
						 spec);
	}
	if (buf[0])
		return;
	for (i = 0; i < n; i++) {
		enum fp_metric_kind kind;
		size_t len;
		const char *name = fp_calltree_metric_name(t, i, &len, &kind);

		if (kind != FP_METRIC_INCLUSIVE && kind != FP_METRIC_EXCLUSIVE)
			continue;
		if (!best || bytecmp(name, len, best, best_len) < 0) {
			best = name;
			best_len = len;
		}
	}
	if (best && best_len + 1 < size && !memchr(best, ',', best_len))
		snprintf(buf, size, "%.*s", (int)best_len, best);
}

/* ---- rows --------------------------------------------------------------------------------- */

static const char *row_name(const struct fp_view *v, uint32_t r, size_t *len)
{
	if (!v->diff)
		return fp_calltree_node_name(v->a.t, r, len);
	if (v->row_a[r] != FP_CALLTREE_NONE)
		return fp_calltree_node_name(v->a.t, v->row_a[r], len);
	return fp_calltree_node_name(v->b.t, v->row_b[r], len);
}

static uint32_t row_parent(const struct fp_view *v, uint32_t r)
{
	return v->diff ? v->row_parent[r] : fp_calltree_node_parent(v->a.t, r);
}

struct kids {
	uint32_t *ids;
	size_t cap;
};

/* Children of `node` not removed, sorted by name, into k->ids; returns how many. */
static int sorted_kids(const struct side *s, uint32_t node, struct kids *k, size_t *count)
{
	size_t n = fp_calltree_sorted_children(s->t, node, k->ids, k->cap), i, j;

	if (n > k->cap) {
		uint32_t *ni = fp_reallocarray(k->ids, n, sizeof(*ni));

		if (!ni)
			return FP_ENOMEM;
		k->ids = ni;
		k->cap = n;
		n = fp_calltree_sorted_children(s->t, node, k->ids, k->cap);
	}
	for (i = j = 0; i < n; i++)
		if (!s->gone || !s->gone[k->ids[i]])
			k->ids[j++] = k->ids[i];
	*count = j;
	return FP_OK;
}

static int push_row(struct fp_view *v, size_t *cap, uint32_t a, uint32_t b, uint32_t parent)
{
	if (v->nrows == *cap) {
		size_t na = *cap * 2;
		uint32_t *ra = fp_reallocarray(v->row_a, na, sizeof(*ra));
		uint32_t *rb = ra ? fp_reallocarray(v->row_b, na, sizeof(*rb)) : NULL;
		uint32_t *rp = rb ? fp_reallocarray(v->row_parent, na, sizeof(*rp)) : NULL;

		if (ra)
			v->row_a = ra;
		if (rb)
			v->row_b = rb;
		if (rp)
			v->row_parent = rp;
		if (!ra || !rb || !rp)
			return FP_ENOMEM;
		*cap = na;
	}
	v->row_a[v->nrows] = a;
	v->row_b[v->nrows] = b;
	v->row_parent[v->nrows] = parent;
	v->nrows++;
	return FP_OK;
}

/* Rows of a comparison: the union of both trees by name paths, parents before children. */
static int union_rows(struct fp_view *v)
{
	struct kids ka = {0}, kb = {0};
	size_t cap = 1024, r, na, nb, i, j;
	int rc;

	v->row_a = fp_reallocarray(NULL, cap, sizeof(uint32_t));
	v->row_b = fp_reallocarray(NULL, cap, sizeof(uint32_t));
	v->row_parent = fp_reallocarray(NULL, cap, sizeof(uint32_t));
	if (!v->row_a || !v->row_b || !v->row_parent)
		return FP_ENOMEM;
	rc = push_row(v, &cap, FP_CALLTREE_ROOT, FP_CALLTREE_ROOT, FP_CALLTREE_NONE);
	for (r = 0; !rc && r < v->nrows; r++) {
		uint32_t a = v->row_a[r], b = v->row_b[r];

		na = nb = 0;
		if (a != FP_CALLTREE_NONE)
			rc = sorted_kids(&v->a, a, &ka, &na);
		if (!rc && b != FP_CALLTREE_NONE)
			rc = sorted_kids(&v->b, b, &kb, &nb);
		for (i = j = 0; !rc && (i < na || j < nb);) {
			size_t la = 0, lb = 0;
			const char *sa =
				i < na ? fp_calltree_node_name(v->a.t, ka.ids[i], &la) : NULL;
			const char *sb =
				j < nb ? fp_calltree_node_name(v->b.t, kb.ids[j], &lb) : NULL;
			int c = !sa ? 1 : !sb ? -1 : bytecmp(sa, la, sb, lb);

			if (c < 0)
				rc = push_row(v, &cap, ka.ids[i++], FP_CALLTREE_NONE, (uint32_t)r);
			else if (c > 0)
				rc = push_row(v, &cap, FP_CALLTREE_NONE, kb.ids[j++], (uint32_t)r);
			else
				rc = push_row(v, &cap, ka.ids[i++], kb.ids[j++], (uint32_t)r);
		}
	}
	fp_free(ka.ids);
	fp_free(kb.ids);
	return rc;
}

/* Value of column c for side s at node, 0 where the node is missing. */
static double side_value(const struct side *s, size_t c, uint32_t node)
{
	return node == FP_CALLTREE_NONE ? 0 : s->vals[c * s->n + node];
}

static int diff_values(struct fp_view *v)
{
	size_t c, r, cells = v->ncols * v->nrows;

	v->rv = fp_reallocarray(NULL, cells > 0 ? cells : 1, sizeof(double));
	if (!v->rv)
		return FP_ENOMEM;
	for (c = 0; c < v->ncols; c++)
		for (r = 0; r < v->nrows; r++)
			v->rv[c * v->nrows + r] = side_value(&v->b, c, v->row_b[r]) -
						  side_value(&v->a, c, v->row_a[r]);
	return FP_OK;
}

/* By node of t: 1 when the node or a descendant holds any metric value. NULL on OOM. */
static uint8_t *nonempty_nodes(const struct fp_calltree *t)
{
	size_t n = fp_calltree_node_count(t), i;
	uint8_t *ne = fp_calloc(n ? n : 1, 1);

	if (!ne)
		return NULL;
	for (i = n; i-- > 0;) { /* children have larger ids than their parents */
		if (fp_calltree_node_metrics(t, (uint32_t)i, NULL, 0) > 0)
			ne[i] = 1;
		if (ne[i] && i > 0)
			ne[fp_calltree_node_parent(t, (uint32_t)i)] = 1;
	}
	return ne;
}

/*
 * Rows with no metric value anywhere in their subtree (a scope that launched nothing and got
 * no metric, in this profile and the other) carry nothing to read: not shown, and counted in a
 * note.
 */
static int drop_empty(struct fp_view *v)
{
	uint8_t *na = nonempty_nodes(v->a.t), *nb = v->diff ? nonempty_nodes(v->b.t) : NULL;
	size_t r, hidden = 0;

	if (!na || (v->diff && !nb)) {
		fp_free(na);
		fp_free(nb);
		return FP_ENOMEM;
	}
	for (r = 1; r < v->nrows; r++) {
		bool full;

		if (!(v->flags[r] & ROW_KEPT))
			continue;
		if (!v->diff)
			full = na[r];
		else
			full = (v->row_a[r] != FP_CALLTREE_NONE && na[v->row_a[r]]) ||
			       (v->row_b[r] != FP_CALLTREE_NONE && nb[v->row_b[r]]);
		if (!full) {
			v->flags[r] &= (uint8_t)~ROW_KEPT;
			hidden++;
		}
	}
	if (hidden)
		add_note(v, "%zu node%s without any metric value in %s subtree hidden", hidden,
			 hidden == 1 ? "" : "s", hidden == 1 ? "its" : "their");
	fp_free(na);
	fp_free(nb);
	return FP_OK;
}

/* Whether the first column of side s at node passes the threshold against its root. */
static bool passes(const struct side *s, uint32_t node, double t)
{
	double root, x;

	if (node == FP_CALLTREE_NONE)
		return false;
	root = s->vals[0];
	x = s->vals[node];
	return !isnan(x) && !isnan(root) && fabs(x) >= t * fabs(root);
}

static int threshold_rows(struct fp_view *v, struct fp_diag *diag)
{
	double t = v->opt.threshold;
	size_t r, hidden = 0;

	for (r = 0; r < v->nrows; r++)
		v->flags[r] &= (uint8_t)~ROW_SHOWN;
	if (t > 0) {
		bool ok_a = isfinite(v->a.vals[0]) && v->a.vals[0] != 0;
		bool ok_b = v->diff && isfinite(v->b.vals[0]) && v->b.vals[0] != 0;

		if (!ok_a && !ok_b)
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "threshold: the first column (%s) has no value at the "
					   "root to compare with",
					   v->a.cols[0].label);
		for (r = 0; r < v->nrows; r++) {
			bool pass;

			if (!(v->flags[r] & ROW_KEPT))
				continue;
			if (!v->diff)
				pass = passes(&v->a, (uint32_t)r, t);
			else
				pass = (ok_a && passes(&v->a, v->row_a[r], t)) ||
				       (ok_b && passes(&v->b, v->row_b[r], t));
			if (pass)
				v->flags[r] |= ROW_PASS | ROW_SHOWN;
		}
		/* A row stays when it passes or a descendant does (so paths stay whole). */
		for (r = v->nrows; r-- > 1;)
			if (v->flags[r] & ROW_SHOWN)
				v->flags[row_parent(v, (uint32_t)r)] |= ROW_SHOWN;
		v->flags[0] |= ROW_SHOWN;
		for (r = 0; r < v->nrows; r++)
			if ((v->flags[r] & ROW_KEPT) && !(v->flags[r] & ROW_SHOWN))
				hidden++;
		if (hidden)
			add_note(v, "%zu node%s below the threshold (%g of the root's %s) hidden",
				 hidden, hidden == 1 ? "" : "s", t, v->a.cols[0].label);
	} else {
		for (r = 0; r < v->nrows; r++)
			if (v->flags[r] & ROW_KEPT)
				v->flags[r] |= ROW_SHOWN;
	}
	return FP_OK;
}

/* ---- display order ------------------------------------------------------------------------ */

struct sortctx {
	const struct fp_view *v;
	bool by_name;
};

/* -1 when row a goes before row b. */
static int row_cmp(const struct sortctx *sc, uint32_t a, uint32_t b)
{
	const struct fp_view *v = sc->v;
	size_t la, lb;
	const char *na, *nb;
	int c;

	if (!sc->by_name && v->ncols) {
		/* A comparison puts the largest changes first, whatever their sign. */
		double x = v->diff ? fabs(v->rv[a]) : v->rv[a];
		double y = v->diff ? fabs(v->rv[b]) : v->rv[b];

		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1;
		if (!isnan(x) && x != y)
			return x > y ? -1 : 1;
	}
	na = row_name(v, a, &la);
	nb = row_name(v, b, &lb);
	c = bytecmp(na, la, nb, lb);
	if (c)
		return c;
	return a < b ? -1 : a > b ? 1 : 0;
}

/* Stable merge sort of ids with row_cmp; tmp holds n ids. */
static void sort_rows(uint32_t *ids, uint32_t *tmp, size_t n, const struct sortctx *sc)
{
	size_t width, i, lo, mid, hi, a, b, k;

	if (n < 2)
		return;
	for (i = 1; i < n && n <= 16; i++) {
		uint32_t x = ids[i];
		size_t j = i;

		while (j > 0 && row_cmp(sc, ids[j - 1], x) > 0) {
			ids[j] = ids[j - 1];
			j--;
		}
		ids[j] = x;
	}
	if (n <= 16)
		return;
	for (width = 1; width < n; width *= 2) {
		for (lo = 0; lo < n; lo += 2 * width) {
			mid = FP_MIN(lo + width, n);
			hi = FP_MIN(lo + 2 * width, n);
			a = lo;
			b = mid;
			k = lo;
			while (a < mid && b < hi)
				tmp[k++] = row_cmp(sc, ids[b], ids[a]) < 0 ? ids[b++] : ids[a++];
			while (a < mid)
				tmp[k++] = ids[a++];
			while (b < hi)
				tmp[k++] = ids[b++];
		}
		memcpy(ids, tmp, n * sizeof(*ids));
	}
}

/* Lazy views: compute the values of rows about to be ordered or shown. */
static void ensure(struct fp_view *v, const uint32_t *rows, size_t n)
{
	size_t i;

	if (!v->lazy)
		return;
	for (i = 0; i < n; i++)
		compute(v, &v->a, rows[i]);
}

struct frame {
	uint32_t row;
	uint32_t depth;
	size_t next, end; /* children still to visit: kids[next .. end) */
};

static int build_order(struct fp_view *v)
{
	size_t n = v->nrows, r, nshown = 0, hidden_depth = 0, sp = 0, salloc = 64;
	uint32_t *start = NULL, *kids = NULL, *fill = NULL, *tmp = NULL;
	struct frame *stack = NULL;
	struct sortctx sc = {v, v->opt.sort == FP_VIEW_SORT_NAME};
	int rc = FP_ENOMEM;

	start = fp_calloc(n + 1, sizeof(*start));
	fill = fp_calloc(n + 1, sizeof(*fill));
	for (r = 0; r < n; r++)
		nshown += (v->flags[r] & ROW_SHOWN) != 0;
	kids = fp_reallocarray(NULL, nshown ? nshown : 1, sizeof(*kids));
	tmp = fp_reallocarray(NULL, nshown ? nshown : 1, sizeof(*tmp));
	v->order = fp_reallocarray(NULL, nshown ? nshown : 1, sizeof(*v->order));
	v->order_depth = fp_reallocarray(NULL, nshown ? nshown : 1, sizeof(*v->order_depth));
	v->order_last = fp_calloc(nshown ? nshown : 1, 1);
	v->leaves = fp_reallocarray(NULL, nshown ? nshown : 1, sizeof(*v->leaves));
	stack = fp_reallocarray(NULL, salloc, sizeof(*stack));
	if (!start || !fill || !kids || !tmp || !v->order || !v->order_depth || !v->order_last ||
	    !v->leaves || !stack)
		goto out;
	/* Children lists (CSR) of shown rows, in row order. */
	for (r = 1; r < n; r++)
		if (v->flags[r] & ROW_SHOWN)
			start[row_parent(v, (uint32_t)r) + 1]++;
	for (r = 0; r < n; r++)
		start[r + 1] += start[r];
	memcpy(fill, start, (n + 1) * sizeof(*fill));
	for (r = 1; r < n; r++)
		if (v->flags[r] & ROW_SHOWN)
			kids[fill[row_parent(v, (uint32_t)r)]++] = (uint32_t)r;
	/* Leaves: shown rows without shown children (the root only when alone). */
	for (r = 1; r < n; r++)
		if ((v->flags[r] & ROW_SHOWN) && start[r + 1] == start[r])
			v->leaves[v->nleaves++] = (uint32_t)r;
	if (v->opt.print_sorted) {
		struct sortctx by_value = {v, false};

		sort_rows(v->leaves, tmp, v->nleaves, &by_value);
	}
	/* Depth-first walk; children are sorted only where the walk goes. */
	{
		uint32_t root = 0;

		ensure(v, &root, 1);
	}
	stack[sp++] = (struct frame){0, 0, start[0], start[1]};
	v->order[v->norder] = 0;
	v->order_depth[v->norder] = 0;
	v->order_last[v->norder++] = 1;
	if (v->opt.max_depth > 0) {
		ensure(v, kids + start[0], start[1] - start[0]);
		sort_rows(kids + start[0], tmp, start[1] - start[0], &sc);
	} else
		hidden_depth += start[1] - start[0];
	while (sp > 0) {
		struct frame *fr = &stack[sp - 1];
		uint32_t c;

		if (fr->depth >= v->opt.max_depth || fr->next >= fr->end) {
			sp--;
			continue;
		}
		c = kids[fr->next++];
		v->order[v->norder] = c;
		v->order_depth[v->norder] = fr->depth + 1;
		v->order_last[v->norder++] = fr->next == fr->end;
		if (start[c + 1] == start[c])
			continue;
		if (fr->depth + 1 >= v->opt.max_depth) {
			hidden_depth += start[c + 1] - start[c];
			continue;
		}
		ensure(v, kids + start[c], start[c + 1] - start[c]);
		sort_rows(kids + start[c], tmp, start[c + 1] - start[c], &sc);
		if (sp == salloc) {
			struct frame *ns = fp_reallocarray(stack, salloc * 2, sizeof(*ns));

			if (!ns)
				goto out;
			stack = ns;
			salloc *= 2;
			fr = &stack[sp - 1];
		}
		stack[sp++] = (struct frame){c, fr->depth + 1, start[c], start[c + 1]};
	}
	if (hidden_depth)
		add_note(v, "%zu row%s deeper than depth %" PRIu32 " not shown (-d shows more)",
			 nshown - v->norder, nshown - v->norder == 1 ? "" : "s", v->opt.max_depth);
	rc = FP_OK;
out:
	fp_free(stack);
	fp_free(tmp);
	fp_free(kids);
	fp_free(fill);
	fp_free(start);
	return rc;
}

/* ---- construction ------------------------------------------------------------------------- */

static void side_release(struct side *s)
{
	size_t j;

	for (j = 0; j < s->nids; j++)
		fp_free(s->arr[j]);
	fp_free(s->dc);
	fp_free(s->done);
	fp_free(s->gone);
	fp_free(s->vals);
}

void fp_view_free(struct fp_view *v)
{
	size_t i;

	if (!v)
		return;
	side_release(&v->a);
	side_release(&v->b);
	if (v->diff)
		fp_free(v->rv);
	fp_free(v->row_a);
	fp_free(v->row_b);
	fp_free(v->row_parent);
	fp_free(v->flags);
	fp_free(v->order);
	fp_free(v->order_depth);
	fp_free(v->order_last);
	fp_free(v->leaves);
	for (i = 0; i < v->nnotes; i++)
		fp_free(v->notes[i]);
	fp_free(v);
}

int fp_view_new(struct fp_calltree *t, struct fp_calltree *other, const struct fp_view_options *o,
		struct fp_view **out, struct fp_diag *diag)
{
	struct fp_view_options defaults;
	struct matcher mt;
	struct fp_view *v;
	char specs[128];
	const char *spec_text;
	size_t r;
	int rc;

	if (!t || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_view_new: NULL argument");
	if (!o) {
		fp_view_options_init(&defaults);
		o = &defaults;
	}
	if (!(o->threshold >= 0) || !isfinite(o->threshold))
		return fp_diag_set(diag, FP_EINVAL, 0, "threshold must be a fraction >= 0");
	rc = fp_calltree_finalize(t);
	if (!rc && other)
		rc = fp_calltree_finalize(other);
	if (rc)
		return fp_diag_set(diag, rc, 0, "cannot compute totals: %s", fp_strerror(rc));
	v = fp_calloc(1, sizeof(*v));
	if (!v)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	v->opt = *o;
	v->opt.metrics = v->opt.include = v->opt.exclude = NULL;
	v->diff = other != NULL;
	v->a.t = t;
	v->a.n = fp_calltree_node_count(t);
	v->b.t = other;
	v->b.n = other ? fp_calltree_node_count(other) : 0;

	spec_text = o->metrics;
	if (!spec_text || !*spec_text) {
		default_specs(t, other, specs, sizeof(specs));
		if (!specs[0]) {
			rc = fp_diag_set(diag, FP_ENOENT, 0, "the profile has no numeric metric");
			goto out;
		}
		spec_text = specs;
	}
	rc = parse_specs(v, &v->a, spec_text, other ? "this profile" : NULL, diag);
	if (!rc && other)
		rc = parse_specs(v, &v->b, spec_text, "the other profile", diag);
	if (rc)
		goto out;

	memset(&mt, 0, sizeof(mt));
	mt.hide_meta = !o->keep_launch_metadata;
	if (o->include && *o->include) {
		rc = compile(o->include, &mt.inc, "include", diag);
		if (rc)
			goto out;
		mt.has_inc = true;
	}
	if (o->exclude && *o->exclude) {
		rc = compile(o->exclude, &mt.exc, "exclude", diag);
		if (rc)
			goto fail_regex;
		mt.has_exc = true;
	}
	rc = apply_filters(&v->a, &mt);
	if (!rc && other)
		rc = apply_filters(&v->b, &mt);
	if (rc)
		goto fail_regex;
	if (v->a.hidden_meta || v->b.hidden_meta) {
		size_t k = v->a.hidden_meta + v->b.hidden_meta;

		add_note(v,
			 "%zu Proton launch-metadata frame%s (" METADATA_FRAME
			 ") hidden with %s subtree%s, as proton-viewer does",
			 k, k == 1 ? "" : "s", k == 1 ? "its" : "their", k == 1 ? "" : "s");
	}
	rc = prepare(v, &v->a);
	if (!rc && other)
		rc = prepare(v, &v->b);
	if (rc)
		goto fail_regex;
	/* Thresholds, sorted leaves and comparisons read every node; a plain view computes only
	 * the rows it shows (and their siblings, for ordering). */
	v->lazy = !other && o->threshold == 0 && !o->print_sorted;
	if (!v->lazy) {
		compute_all(v, &v->a);
		if (other)
			compute_all(v, &v->b);
	}

	if (!other) {
		v->nrows = v->a.n;
		v->rv = v->a.vals;
	} else {
		rc = union_rows(v);
		if (!rc)
			rc = diff_values(v);
		if (rc)
			goto fail_regex;
	}
	v->flags = fp_calloc(v->nrows, 1);
	if (!v->flags) {
		rc = FP_ENOMEM;
		goto fail_regex;
	}
	for (r = 0; r < v->nrows; r++)
		if (other || !v->a.gone || !v->a.gone[r])
			v->flags[r] = ROW_KEPT;
	rc = drop_empty(v);
	if (!rc)
		rc = threshold_rows(v, diag);
	if (!rc)
		rc = build_order(v);
	if (rc)
		goto fail_regex;
	if (mt.has_inc)
		regfree(&mt.inc);
	if (mt.has_exc)
		regfree(&mt.exc);
	fp_free(mt.cache);
	*out = v;
	return FP_OK;

fail_regex:
	if (mt.has_inc)
		regfree(&mt.inc);
	if (mt.has_exc)
		regfree(&mt.exc);
	fp_free(mt.cache);
out:
	if (rc == FP_ENOMEM)
		fp_diag_set(diag, rc, 0, "out of memory");
	fp_view_free(v);
	return rc;
}

/* ---- accessors ---------------------------------------------------------------------------- */

size_t fp_view_column_count(const struct fp_view *v)
{
	return v ? v->ncols : 0;
}

const char *fp_view_column_label(const struct fp_view *v, size_t col)
{
	return v && col < v->ncols ? v->a.cols[col].label : NULL;
}

const struct fp_view_metric *fp_view_column(const struct fp_view *v, size_t col)
{
	return v && col < v->ncols ? &v->a.cols[col] : NULL;
}

size_t fp_view_row_count(const struct fp_view *v)
{
	return v ? v->norder : 0;
}

size_t fp_view_note_count(const struct fp_view *v)
{
	return v ? v->nnotes : 0;
}

const char *fp_view_note(const struct fp_view *v, size_t i)
{
	return v && i < v->nnotes ? v->notes[i] : NULL;
}

/* Values of row r: one per column, gathered into `buf` (ncols doubles). */
static void row_values(const struct fp_view *v, uint32_t r, double *buf)
{
	size_t c;

	for (c = 0; c < v->ncols; c++)
		buf[c] = v->rv[c * v->nrows + r];
}

int fp_view_row(const struct fp_view *v, size_t i, struct fp_view_row *out)
{
	static _Thread_local double vals[FP_VIEW_MAX_COLUMNS];
	uint32_t r;

	if (!v || !out || i >= v->norder)
		return FP_ENOENT;
	r = v->order[i];
	out->name = row_name(v, r, &out->name_len);
	out->depth = v->order_depth[i];
	out->node = v->diff ? v->row_a[r] : r;
	out->other_node = v->diff ? v->row_b[r] : FP_CALLTREE_NONE;
	row_values(v, r, vals);
	out->values = vals;
	return FP_OK;
}

/* ---- rendering ---------------------------------------------------------------------------- */

struct cells {
	char *text;
	uint32_t *off; /* cell k is text[off[k] .. off[k + 1]) */
	size_t n, len, alloc;
};

static int cells_add(struct cells *cs, double x, bool sign)
{
	char buf[40];
	int k;

	if (cs->len + 40 > cs->alloc) {
		size_t na = cs->alloc ? cs->alloc * 2 : 4096;
		char *nt;

		if (na > UINT32_MAX)
			return FP_ELIMIT;
		nt = fp_realloc(cs->text, na);
		if (!nt)
			return FP_ENOMEM;
		cs->text = nt;
		cs->alloc = na;
	}
	buf[0] = '+';
	k = fp_view_format_number(x, buf + 1, sizeof(buf) - 1);
	if (sign && x > 0) {
		memcpy(cs->text + cs->len, buf, (size_t)k + 1);
		cs->len += (size_t)k + 1;
	} else {
		memcpy(cs->text + cs->len, buf + 1, (size_t)k);
		cs->len += (size_t)k;
	}
	cs->off[++cs->n] = (uint32_t)cs->len;
	return FP_OK;
}

/* One output line being built; the first failure sticks and is reported by emit(). */
struct line {
	struct fp_strbuf sb;
	int err;
};

static void l_add(struct line *l, const char *s, size_t n)
{
	if (!l->err)
		l->err = fp_strbuf_add(&l->sb, s, n);
}

static void l_str(struct line *l, const char *s)
{
	l_add(l, s, strlen(s));
}

static void l_pad(struct line *l, size_t len, size_t width)
{
	static const char spaces[] = "                                ";

	while (len < width) {
		size_t k = FP_MIN(width - len, sizeof(spaces) - 1);

		l_add(l, spaces, k);
		len += k;
	}
}

static int emit(struct line *l, FILE *f)
{
	l_add(l, "\n", 1);
	if (l->err)
		return l->err;
	if (fwrite(l->sb.buf, 1, l->sb.len, f) != l->sb.len)
		return FP_EIO;
	fp_strbuf_reset(&l->sb);
	return FP_OK;
}

static void add_cells(struct line *l, const struct cells *cs, size_t first, size_t ncols,
		      const size_t *width)
{
	size_t c, k, len;

	for (c = 0; c < ncols; c++) {
		k = first + c;
		len = cs->off[k + 1] - cs->off[k];
		l_pad(l, len, width[c]);
		l_add(l, cs->text + cs->off[k], len);
		l_add(l, "  ", 2);
	}
}

/* Names longer than this are cut (with "...") so that one line stays bounded. */
#define NAME_SHOWN_MAX 4096

/* The tree and node a row's name comes from (this profile's, else the other's). */
static void row_node(const struct fp_view *v, uint32_t r, const struct fp_calltree **t,
		     uint32_t *node)
{
	if (!v->diff) {
		*t = v->a.t, *node = r;
	} else if (v->row_a[r] != FP_CALLTREE_NONE) {
		*t = v->a.t, *node = v->row_a[r];
	} else {
		*t = v->b.t, *node = v->row_b[r];
	}
}

static void add_name(const struct fp_view *v, struct line *l, uint32_t r, char *nbuf)
{
	const struct fp_calltree *t;
	size_t len, need;
	const char *name = row_name(v, r, &len);
	uint32_t node;

	row_node(v, r, &t, &node);
	/* C++ kernels in their short form (template arguments elided), or full with full_names */
	if (!fp_calltree_node_display(t, node, v->opt.full_names, nbuf, NAME_SHOWN_MAX + 1, &need))
		need = fp_view_format_name(name, len, v->opt.format, nbuf, NAME_SHOWN_MAX + 1);
	fp__view_clean(nbuf, FP_MIN(need, NAME_SHOWN_MAX));
	if (need > NAME_SHOWN_MAX) {
		l_add(l, nbuf, NAME_SHOWN_MAX - 3);
		l_add(l, "...", 3);
	} else {
		l_add(l, nbuf, need);
	}
	if (v->diff && v->row_a[r] == FP_CALLTREE_NONE)
		l_str(l, "  [added]");
	else if (v->diff && v->row_b[r] == FP_CALLTREE_NONE)
		l_str(l, "  [removed]");
}

int fp_view_render(const struct fp_view *v, FILE *f)
{
	size_t nleaves = v && v->opt.print_sorted ? v->nleaves : 0;
	size_t width[FP_VIEW_MAX_COLUMNS], i, c, ncells, d;
	struct cells cs = {0};
	struct line l = {.err = 0};
	uint8_t *last = NULL; /* by depth: the ancestor at that depth was a last child */
	uint32_t maxd = 0;
	char *nbuf = NULL;
	int rc = FP_OK;

	if (!v || !f)
		return FP_EINVAL;
	fp_strbuf_init(&l.sb, LINE_CAP);
	ncells = (v->norder + nleaves) * v->ncols;
	cs.off = fp_reallocarray(NULL, ncells + 1, sizeof(*cs.off));
	for (i = 0; i < v->norder; i++)
		maxd = FP_MAX(maxd, v->order_depth[i]);
	last = fp_calloc((size_t)maxd + 2, 1);
	nbuf = fp_malloc(NAME_SHOWN_MAX + 1);
	if (!cs.off || !last || !nbuf) {
		rc = FP_ENOMEM;
		goto out;
	}
	cs.off[0] = 0;
	for (i = 0; i < v->norder + nleaves && !rc; i++) {
		uint32_t r = i < v->norder ? v->order[i] : v->leaves[i - v->norder];

		for (c = 0; c < v->ncols && !rc; c++)
			rc = cells_add(&cs, v->rv[c * v->nrows + r], v->diff);
	}
	if (rc)
		goto out;
	for (c = 0; c < v->ncols; c++) {
		width[c] = strlen(v->a.cols[c].label);
		for (i = 0; i < v->norder + nleaves; i++) {
			size_t k = i * v->ncols + c;

			width[c] = FP_MAX(width[c], (size_t)(cs.off[k + 1] - cs.off[k]));
		}
	}
	/* Header: the labels over their columns. */
	for (c = 0; c < v->ncols; c++) {
		l_pad(&l, strlen(v->a.cols[c].label), width[c]);
		l_str(&l, v->a.cols[c].label);
		l_add(&l, "  ", 2);
	}
	l_str(&l, "name");
	rc = emit(&l, f);
	/* The tree. */
	for (i = 0; i < v->norder && !rc; i++) {
		uint32_t depth = v->order_depth[i];

		add_cells(&l, &cs, i * v->ncols, v->ncols, width);
		for (d = 1; d < depth; d++)
			l_str(&l, last[d] ? "   " : "\u2502  ");
		if (depth > 0)
			l_str(&l, v->order_last[i] ? "\u2514\u2500 " : "\u251c\u2500 ");
		last[depth] = v->order_last[i];
		add_name(v, &l, v->order[i], nbuf);
		rc = emit(&l, f);
	}
	if (!rc && v->opt.print_sorted) {
		l_str(&l, "\nLeaves sorted by ");
		l_str(&l, v->a.cols[0].label);
		l_str(&l, ":");
		rc = emit(&l, f);
		for (i = 0; i < nleaves && !rc; i++) {
			add_cells(&l, &cs, (v->norder + i) * v->ncols, v->ncols, width);
			add_name(v, &l, v->leaves[i], nbuf);
			rc = emit(&l, f);
		}
	}
	for (i = 0; i < v->nnotes && !rc; i++) {
		l_str(&l, "note: ");
		l_str(&l, v->notes[i]);
		rc = emit(&l, f);
	}
	if (!rc && ferror(f))
		rc = FP_EIO;
out:
	fp_free(nbuf);
	fp_free(last);
	fp_free(cs.off);
	fp_free(cs.text);
	fp_strbuf_release(&l.sb);
	return rc;
}
