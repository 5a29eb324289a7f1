/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The launch JSON of a Debugger run (docs/formats/debugger-report-schema.md, "Launch JSON"): where the
 * reports go and what they are called, the grid, the backend, the user's source file, the
 * instrumented twin's TTIR and the tensor arguments' extents. Parsed and checked once, against
 * the decoded run (the grid must multiply to the buffer's program count), into one launch
 * structure; fp_dbg_launch_findings() runs the findings analyses (findings.c) on the run with its
 * arguments, and the writers get both. Not the site table (sites.c), not the record buffer, not
 * the analyses themselves.
 */
#include "fp-setup.h"

#include <inttypes.h>

#include <flagprism/json.h>

#include "debug/diag-internal.h"
#include "debug/report-internal.h"

#define MAX_DIMS 64u /* dimensions of a tensor argument's shape and strides */

/* Optional string member: NULL when absent or null; copied. */
static int opt_str(struct fp__dbg_jctx *c, const struct fp_json_value *o, const char *key,
		   char **out, size_t *lenp)
{
	const struct fp_json_value *v = fp_json_get(o, key);
	const char *s;
	size_t n;

	*out = NULL;
	if (!v || fp_json_type(v) == FP_JSON_NULL)
		return FP_OK;
	s = fp_json_string(v, &n);
	if (!s)
		return fp__dbg_launch_err(c, FP_EFORMAT, v, "\"%s\" must be a string", key);
	*out = fp_strndup(s, n);
	if (!*out)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
	if (lenp)
		*lenp = n;
	return FP_OK;
}

static int dflt(struct fp__dbg_jctx *c, char **s, const char *value)
{
	if (*s)
		return FP_OK;
	*s = fp_strdup(value);
	return *s ? FP_OK : fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
}

/* File-name-safe copy in place: anything but [A-Za-z0-9._-] becomes '_' ("." and ".." too). */
static void sanitize(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			*p = '_';
	}
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		s[0] = '_';
}

/*
 * An optional object {KEY0: int, KEY1: int, "reason": str} under `name`: absent or null leaves
 * the destinations as they are (*present false); each integer must lie in 1..max, and may be
 * null (left 0) when `nullable`.
 */
static int parse_pair(struct fp__dbg_jctx *c, const struct fp_json_value *root, const char *name,
		      const char *const keys[2], int64_t *dst[2], int64_t max, bool nullable,
		      char **reason, bool *present)
{
	const struct fp_json_value *o = fp_json_get(root, name), *v;
	int64_t x;
	int i;

	if (!o || fp_json_type(o) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(o) != FP_JSON_OBJECT)
		return fp__dbg_launch_err(c, FP_EFORMAT, o, "\"%s\" must be an object or null",
					  name);
	for (i = 0; i < 2; i++) {
		v = fp_json_get(o, keys[i]);
		if (nullable && (!v || fp_json_type(v) == FP_JSON_NULL))
			continue;
		if (!v || !fp_json_int64(v, &x) || x < 1 || x > max)
			return fp__dbg_launch_err(
				c, FP_EFORMAT, v ? v : o,
				"\"%s.%s\" must be %san integer from 1 to %" PRId64, name, keys[i],
				nullable ? "null or " : "", max);
		*dst[i] = x;
	}
	if (present)
		*present = true;
	return opt_str(c, o, "reason", reason, NULL);
}

/* Optional "num_warps": {"kernel": K, "twin": T, "reason": "..."} (K, T in 1..1024). */
static int parse_num_warps(struct fp__dbg_jctx *c, const struct fp_json_value *root,
			   struct fp_dbg_launch *l)
{
	static const char *const keys[2] = {"kernel", "twin"};
	int64_t *dst[2] = {&l->nw_kernel, &l->nw_twin};

	return parse_pair(c, root, "num_warps", keys, dst, 1024, false, &l->nw_reason, NULL);
}

/* Optional "registers": {"cap": C|null, "uncapped": R|null, "reason": "..."|null} (C, R in
 * 1..255: registers per thread). */
static int parse_registers(struct fp__dbg_jctx *c, const struct fp_json_value *root,
			   struct fp_dbg_launch *l)
{
	static const char *const keys[2] = {"cap", "uncapped"};
	int64_t *dst[2] = {&l->reg_cap, &l->reg_uncapped};

	return parse_pair(c, root, "registers", keys, dst, 255, true, &l->reg_reason,
			  &l->has_registers);
}

static int parse_grid(struct fp__dbg_jctx *c, const struct fp_json_value *root,
		      struct fp_dbg_launch *l, const struct fp_dbg_run *run)
{
	const struct fp_json_value *g = fp_json_get(root, "grid");
	uint64_t prod = 1;
	size_t i, n;

	if (!g || fp_json_type(g) != FP_JSON_ARRAY || (n = fp_json_len(g)) < 1 || n > 3)
		return fp__dbg_launch_err(c, FP_EFORMAT, g ? g : root,
					  "\"grid\" must be an array of 1 to 3 positive integers");
	l->grid[0] = l->grid[1] = l->grid[2] = 1;
	for (i = 0; i < n; i++) {
		uint64_t v;

		if (!fp_json_uint64(fp_json_at(g, i), &v) || !v || v > UINT32_MAX)
			return fp__dbg_launch_err(c, FP_EFORMAT, fp_json_at(g, i),
						  "grid[%zu] must be an integer in 1..4294967295",
						  i);
		l->grid[i] = v;
		prod *= v; /* may wrap for three huge dims: the overflow is checked below */
	}
	if ((l->grid[2] > 1 && l->grid[0] * l->grid[1] > UINT64_MAX / l->grid[2]) ||
	    prod != fp_dbg_run_info(run)->programs)
		return fp__dbg_launch_err(
			c, FP_EFORMAT, g,
			"grid [%" PRIu64 ", %" PRIu64 ", %" PRIu64
			"] does not match the record buffer's %" PRIu64 " programs",
			l->grid[0], l->grid[1], l->grid[2], fp_dbg_run_info(run)->programs);
	l->grid_ndim = (unsigned)n;
	return FP_OK;
}

/* An array of file names (`nullable`: null entries allowed, kept as NULL). */
static int parse_files(struct fp__dbg_jctx *c, const struct fp_json_value *root, const char *key,
		       bool nullable, char ***out, size_t *nout)
{
	const struct fp_json_value *a = fp_json_get(root, key);
	size_t i, n;

	if (!a || fp_json_type(a) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(a) != FP_JSON_ARRAY)
		return fp__dbg_launch_err(c, FP_EFORMAT, a, "\"%s\" must be an array of strings",
					  key);
	n = fp_json_len(a);
	*out = fp_calloc(n ? n : 1, sizeof(**out));
	if (!*out)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
	for (i = 0; i < n; i++) {
		size_t len;
		const struct fp_json_value *v = fp_json_at(a, i);
		const char *s = fp_json_string(v, &len);

		*nout = i + 1;
		if (!s && nullable && fp_json_type(v) == FP_JSON_NULL)
			continue;
		if (!s)
			return fp__dbg_launch_err(c, FP_EFORMAT, v, "%s[%zu] must be a string", key,
						  i);
		(*out)[i] = fp_strndup(s, len);
		if (!(*out)[i])
			return fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
	}
	return FP_OK;
}

/* Optional "stack": an array of strings (frames, innermost last), at most 64 kept. */
static int parse_stack(struct fp__dbg_jctx *c, const struct fp_json_value *root,
		       struct fp_dbg_launch *l)
{
	const struct fp_json_value *a = fp_json_get(root, "stack"), *v;
	size_t i, n, len;
	const char *str;

	if (!a || fp_json_type(a) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(a) != FP_JSON_ARRAY)
		return fp__dbg_launch_err(c, FP_EFORMAT, a,
					  "\"stack\" must be an array of strings");
	n = FP_MIN(fp_json_len(a), (size_t)64);
	if (!n)
		return FP_OK;
	l->stack = fp_calloc(n, sizeof(*l->stack));
	if (!l->stack)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
	for (i = 0; i < n; i++) {
		v = fp_json_at(a, i);
		str = fp_json_string(v, &len);
		if (!str)
			return fp__dbg_launch_err(c, FP_EFORMAT, v,
						  "\"stack[%zu]\" must be a string", i);
		l->stack[i] = fp_strndup(str, FP_MIN(len, (size_t)1024));
		if (!l->stack[i])
			return fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
		l->nstack = i + 1;
	}
	return FP_OK;
}

/* Optional "checks": the checks of check mode (the registry's names, fp_dbg_check_find()), as
 * the kinds of findings they report; null or absent: every kind. */
static int parse_checks(struct fp__dbg_jctx *c, const struct fp_json_value *root,
			struct fp_dbg_launch *l)
{
	const struct fp_json_value *a = fp_json_get(root, "checks"), *v;
	const struct fp_dbg_check_info *ck;
	char names[128];
	size_t i, n, len;
	const char *name;

	if (!a || fp_json_type(a) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(a) != FP_JSON_ARRAY)
		return fp__dbg_launch_err(c, FP_EFORMAT, a,
					  "\"checks\" must be an array of strings");
	n = fp_json_len(a);
	for (i = 0; i < n; i++) {
		v = fp_json_at(a, i);
		name = fp_json_string(v, &len);
		ck = name ? fp_dbg_check_find(name, len) : NULL;
		if (!ck) {
			fp_dbg_check_names(names, sizeof(names), ", ");
			return fp__dbg_launch_err(c, FP_EFORMAT, v,
						  "\"checks[%zu]\" must be one of %s", i, names);
		}
		l->check_kinds |= ck->kinds;
	}
	return FP_OK;
}

/* Optional "autotune": {"role": "benchmark"|"chosen", "config": "..."}. */
static int parse_autotune(struct fp__dbg_jctx *c, const struct fp_json_value *root,
			  struct fp_dbg_launch *l)
{
	const struct fp_json_value *o = fp_json_get(root, "autotune");
	int st;

	if (!o || fp_json_type(o) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(o) != FP_JSON_OBJECT)
		return fp__dbg_launch_err(c, FP_EFORMAT, o,
					  "\"autotune\" must be an object or null");
	if ((st = opt_str(c, o, "role", &l->autotune_role, NULL)) ||
	    (st = opt_str(c, o, "config", &l->autotune_config, NULL)))
		return st;
	if (l->autotune_role && strcmp(l->autotune_role, "benchmark") &&
	    strcmp(l->autotune_role, "chosen"))
		return fp__dbg_launch_err(c, FP_EFORMAT, fp_json_get(o, "role"),
					  "\"autotune.role\" must be \"benchmark\" or \"chosen\"");
	return FP_OK;
}

/*
 * A stem longer than STEM_MAX bytes keeps its start and its end (the timestamp and run index
 * that make it unique) around a '~', so that every report name (stem + the longest suffix)
 * fits a file system's 255-byte name limit whatever the kernel's name.
 */
#define STEM_MAX 180
#define STEM_TAIL 60

static void cap_stem(char *s)
{
	size_t n = strlen(s);

	if (n <= STEM_MAX)
		return;
	s[STEM_MAX - STEM_TAIL - 1] = '~';
	memmove(s + STEM_MAX - STEM_TAIL, s + n - STEM_TAIL, STEM_TAIL + 1);
}

static int parse_helpers(struct fp__dbg_jctx *c, const struct fp_json_value *root,
			 struct fp_dbg_launch *l)
{
	int st = parse_files(c, root, "helper_files", false, &l->helper_files, &l->nhelper_files);

	if (st)
		return st;
	return parse_files(c, root, "frame_files", true, &l->frame_files, &l->nframe_files);
}

static int make_stem(struct fp__dbg_jctx *c, struct fp_dbg_launch *l)
{
	char run_s[32];
	size_t n;

	if (l->stem) {
		if (!l->stem[0])
			return fp__dbg_launch_err(c, FP_EFORMAT, NULL, "\"stem\" is empty");
		sanitize(l->stem);
		cap_stem(l->stem);
		return FP_OK;
	}
	snprintf(run_s, sizeof(run_s), "%" PRId64, l->run_index);
	n = strlen(l->script) + strlen(l->kernel) + strlen(l->timestamp) + strlen(run_s) + 8;
	l->stem = fp_malloc(n);
	if (!l->stem)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
	snprintf(l->stem, n, "%s_%s_%s_run%s", l->script, l->kernel, l->timestamp, run_s);
	sanitize(l->stem);
	cap_stem(l->stem);
	return FP_OK;
}

/* ---- the launch JSON's `args`: the tensor arguments' extents -------------------------------- */

/* An optional non-negative integer member (null or absent: *present = false). */
static int opt_u64(struct fp__dbg_jctx *c, const struct fp_json_value *o, size_t i, const char *key,
		   uint64_t *out, bool *present)
{
	const struct fp_json_value *v = fp_json_get(o, key);

	*present = false;
	if (!v || fp_json_type(v) == FP_JSON_NULL)
		return FP_OK;
	if (!fp_json_uint64(v, out))
		return fp__dbg_launch_err(c, FP_EFORMAT, v,
					  "args[%zu].%s must be a non-negative integer", i, key);
	*present = true;
	return FP_OK;
}

static int int_list(struct fp__dbg_jctx *c, const struct fp_json_value *o, size_t i,
		    const char *key, int64_t *out, size_t *n)
{
	const struct fp_json_value *v = fp_json_get(o, key);
	size_t k;

	if (!v || fp_json_type(v) != FP_JSON_ARRAY || fp_json_len(v) > MAX_DIMS)
		return fp__dbg_launch_err(c, FP_EFORMAT, v ? v : o,
					  "args[%zu].%s must be an array of at most %u integers", i,
					  key, MAX_DIMS);
	*n = fp_json_len(v);
	for (k = 0; k < *n; k++)
		if (!fp_json_int64(fp_json_at(v, k), &out[k]))
			return fp__dbg_launch_err(c, FP_EFORMAT, fp_json_at(v, k),
						  "args[%zu].%s[%zu] must be an integer", i, key,
						  k);
	return FP_OK;
}

/*
 * The `descriptor` member of a tensor entry (a host TensorDescriptor: {"shape": [...],
 * "strides": [...]}): the bytes it addresses from the same data_ptr, and their description.
 */
#define DESC_TEXT 320

/* Append to a DESC_TEXT buffer, silently cut at its end. */
FP_PRINTF(3, 4)
static void text_add(char *buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= DESC_TEXT - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, DESC_TEXT - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = FP_MIN(*len + (size_t)n, DESC_TEXT - 1);
}

static int parse_descriptor(struct fp__dbg_jctx *c, const struct fp_json_value *o, size_t i,
			    struct fp_dbg_arg *a, char *text)
{
	const struct fp_json_value *d = fp_json_get(o, "descriptor");
	int64_t shape[MAX_DIMS], strides[MAX_DIMS];
	struct fp_dbg_arg v = *a;
	size_t nd, ns, k, len = 0;
	int st;

	if (!d || fp_json_type(d) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(d) != FP_JSON_OBJECT)
		return fp__dbg_launch_err(c, FP_EFORMAT, d,
					  "args[%zu].descriptor must be an object", i);
	if ((st = int_list(c, d, i, "shape", shape, &nd)) ||
	    (st = int_list(c, d, i, "strides", strides, &ns)))
		return st;
	if (nd != ns)
		return fp__dbg_launch_err(
			c, FP_EFORMAT, d,
			"args[%zu].descriptor: shape and strides differ in length", i);
	if (fp_dbg_arg_set_view(&v, a->data_ptr, a->element_size, nd, shape, strides))
		return fp__dbg_launch_err(c, FP_EFORMAT, d,
					  "args[%zu].descriptor: invalid shape/strides", i);
	a->descriptor = true;
	a->desc_lo = v.view_lo;
	a->desc_hi = v.view_hi;
	/* "shape [64, 64], strides [64, 1]": the message's words (at most 8 dims shown) */
	text_add(text, &len, "shape [");
	for (k = 0; k < nd && k < 6; k++)
		text_add(text, &len, "%s%" PRId64, k ? ", " : "", shape[k]);
	text_add(text, &len, "], strides [");
	for (k = 0; k < ns && k < 6; k++)
		text_add(text, &len, "%s%" PRId64, k ? ", " : "", strides[k]);
	text_add(text, &len, "]");
	a->desc_text = text;
	return FP_OK;
}

/* One tensor entry into *a; *use = false for entries without addresses (skipped). */
static int parse_arg(struct fp__dbg_jctx *c, const struct fp_json_value *o, size_t i,
		     struct fp_dbg_arg *a, bool *use, char *text)
{
	int64_t shape[MAX_DIMS], strides[MAX_DIMS];
	size_t nd, ns;
	uint64_t ptr, esize, sptr, sbytes;
	bool hp, he, hs, hb;
	const char *name;
	size_t len;
	int st;

	*use = false;
	name = fp_json_string(fp_json_get(o, "name"), &len);
	if (!name)
		return fp__dbg_launch_err(c, FP_EFORMAT, o, "args[%zu] needs a string \"name\"", i);
	if ((st = opt_u64(c, o, i, "data_ptr", &ptr, &hp)) ||
	    (st = opt_u64(c, o, i, "element_size", &esize, &he)) ||
	    (st = opt_u64(c, o, i, "storage_ptr", &sptr, &hs)) ||
	    (st = opt_u64(c, o, i, "storage_nbytes", &sbytes, &hb)))
		return st;
	if (!hp || !he)
		return FP_OK; /* a tensor whose addresses we were not told */
	if (!esize || esize > UINT32_MAX)
		return fp__dbg_launch_err(c, FP_EFORMAT, fp_json_get(o, "element_size"),
					  "args[%zu].element_size must be 1..2^32-1", i);
	if ((st = int_list(c, o, i, "shape", shape, &nd)) ||
	    (st = int_list(c, o, i, "strides", strides, &ns)))
		return st;
	if (nd != ns)
		return fp__dbg_launch_err(c, FP_EFORMAT, o,
					  "args[%zu]: shape and strides differ in length", i);
	a->name = name; /* borrowed from the document: parse_args() copies it */
	if ((st = fp_dbg_arg_set_view(a, ptr, (uint32_t)esize, nd, shape, strides)))
		return fp__dbg_launch_err(
			c, FP_EFORMAT, o,
			"args[%zu] (%.*s): the view's shape/strides are invalid or its byte "
			"range does not fit in 64 bits",
			i, (int)FP_MIN(len, 64), name);
	if (hs && hb && sbytes <= UINT64_MAX - sptr) {
		a->storage_lo = sptr;
		a->storage_hi = sptr + sbytes;
	}
	if ((st = parse_descriptor(c, o, i, a, text)))
		return st;
	*use = true;
	return FP_OK;
}

/* The tensor arguments' texts (descriptor descriptions), one block of DESC_TEXT bytes each. */
struct args {
	struct fp_dbg_arg *a;
	size_t n;
	char *texts;
};

static void args_release(struct args *x)
{
	size_t i;

	for (i = 0; x->a && i < x->n; i++)
		fp_free((char *)x->a[i].name);
	fp_free(x->a);
	fp_free(x->texts);
	memset(x, 0, sizeof(*x));
}

/*
 * The optional "args" member of `root` (entries of kind "tensor" with data_ptr, element_size,
 * shape and strides count; others are skipped) into *x, names copied. Not an object, absent or
 * null: no arguments. On failure *x holds nothing.
 */
static int parse_args(struct fp__dbg_jctx *c, const struct fp_json_value *root, struct args *x)
{
	const struct fp_json_value *arr;
	size_t i, n;
	int st = FP_OK;

	memset(x, 0, sizeof(*x));
	arr = fp_json_type(root) == FP_JSON_OBJECT ? fp_json_get(root, "args") : NULL;
	if (!arr || fp_json_type(arr) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(arr) != FP_JSON_ARRAY)
		return fp__dbg_launch_err(c, FP_EFORMAT, arr, "\"args\" must be an array");
	n = fp_json_len(arr);
	if (n > FP_DBG_MAX_ARGS)
		return fp__dbg_launch_err(c, FP_ELIMIT, arr, "more than %u arguments",
					  FP_DBG_MAX_ARGS);
	x->a = fp_calloc(n ? n : 1, sizeof(*x->a));
	x->texts = fp_calloc(n ? n : 1, DESC_TEXT);
	if (!x->a || !x->texts) {
		st = fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
		goto fail_alloc;
	}
	for (i = 0; i < n; i++) {
		const struct fp_json_value *o = fp_json_at(arr, i), *k;
		struct fp_dbg_arg *a = &x->a[x->n];
		const char *kind;
		size_t kl;
		bool use;

		if (fp_json_type(o) != FP_JSON_OBJECT) {
			st = fp__dbg_launch_err(c, FP_EFORMAT, o, "args[%zu] must be an object", i);
			goto fail_arg;
		}
		k = fp_json_get(o, "kind");
		kind = k ? fp_json_string(k, &kl) : NULL;
		if (!kind || kl != 6 || memcmp(kind, "tensor", 6))
			continue; /* scalars and constexprs have no extent */
		if ((st = parse_arg(c, o, i, a, &use, x->texts + x->n * DESC_TEXT)))
			goto fail_arg;
		if (!use) {
			memset(a, 0, sizeof(*a));
			continue;
		}
		a->name = fp_strdup(a->name);
		if (!a->name) {
			st = fp_diag_set(c->diag, FP_ENOMEM, 0, "launch: out of memory");
			goto fail_arg;
		}
		x->n++;
	}
	return FP_OK;

fail_arg:
fail_alloc:
	args_release(x);
	return st;
}

int fp_dbg_findings_from_launch(const struct fp_dbg_run *run, const char *launch_json, size_t len,
				struct fp_dbg_findings **out, struct fp_diag *diag)
{
	struct fp_json_limits lim = {.max_bytes = len, .max_depth = 32, .max_values = 0};
	struct fp_json_doc *doc = NULL;
	struct fp__dbg_jctx c = {.diag = diag};
	struct args x;
	int st;

	if (!run || !launch_json || !out)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_dbg_findings_from_launch: NULL argument");
	*out = NULL;
	if ((st = fp_json_parse(launch_json, len, &lim, &doc, diag)))
		return st;
	c.doc = doc;
	st = parse_args(&c, fp_json_root(doc), &x);
	if (!st)
		st = fp_dbg_findings_new(run, x.a, x.n, out, diag);
	args_release(&x);
	fp_json_doc_free(doc);
	return st;
}

int fp_dbg_launch_findings(const struct fp_dbg_run *run, const struct fp_dbg_launch *l,
			   struct fp_dbg_findings **out, struct fp_diag *diag)
{
	int st;

	if (!run || !l || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_launch_findings: NULL argument");
	*out = NULL;
	st = fp_dbg_findings_new(run, l->args, l->nargs, out, diag);
	if (!st && l->check_kinds)
		fp_dbg_findings_keep(*out, l->check_kinds);
	return st;
}

int fp_dbg_launch_parse(const struct fp_dbg_run *run, const char *launch_json, size_t len,
			struct fp_dbg_launch **out, struct fp_diag *diag)
{
	struct fp_json_limits lim = {.max_bytes = len, .max_depth = 32, .max_values = 0};
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *root, *v;
	struct fp_dbg_launch *l;
	struct fp__dbg_jctx c = {.diag = diag};
	const struct fp_dbg_run_info *info;
	struct args x;
	int64_t i64;
	bool b;
	int st;

	if (!run || !launch_json || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_launch_parse: NULL argument");
	*out = NULL;
	info = fp_dbg_run_info(run);
	l = fp_calloc(1, sizeof(*l));
	if (!l)
		return fp_diag_set(diag, FP_ENOMEM, 0, "launch: out of memory");
	if ((st = fp_json_parse(launch_json, len, &lim, &doc, diag))) {
		if (diag) {
			char inner[sizeof(diag->msg) - 8];

			memcpy(inner, diag->msg, sizeof(inner) - 1);
			inner[sizeof(inner) - 1] = '\0';
			snprintf(diag->msg, sizeof(diag->msg), "launch: %s", inner);
		}
		goto fail_parse;
	}
	c.doc = doc;
	root = fp_json_root(doc);
	if (fp_json_type(root) != FP_JSON_OBJECT) {
		st = fp__dbg_launch_err(&c, FP_EFORMAT, root, "expected a JSON object");
		goto fail_parse;
	}
	if ((v = fp_json_get(root, "version")) && (!fp_json_int64(v, &i64) || i64 != 1)) {
		st = fp__dbg_launch_err(&c, FP_EVERSION, v, "version must be 1");
		goto fail_parse;
	}
	if ((st = opt_str(&c, root, "output_dir", &l->output_dir, NULL)))
		goto fail_parse;
	if (!l->output_dir || !l->output_dir[0]) {
		st = fp__dbg_launch_err(&c, FP_EFORMAT, root,
					"\"output_dir\" (a non-empty string) is required");
		goto fail_parse;
	}
	if ((st = opt_str(&c, root, "stem", &l->stem, NULL)) ||
	    (st = opt_str(&c, root, "script", &l->script, NULL)) ||
	    (st = opt_str(&c, root, "kernel", &l->kernel, NULL)) ||
	    (st = opt_str(&c, root, "timestamp", &l->timestamp, NULL)) ||
	    (st = opt_str(&c, root, "backend", &l->backend, NULL)) ||
	    (st = opt_str(&c, root, "source_file", &l->source_file, NULL)) ||
	    (st = opt_str(&c, root, "twin_file", &l->twin_file, NULL)) ||
	    (st = opt_str(&c, root, "ttir", &l->ttir, &l->ttir_len)) ||
	    (st = opt_str(&c, root, "ttir_unavailable_reason", &l->ttir_unavailable_reason,
			  NULL)) ||
	    (st = opt_str(&c, root, "test", &l->test, NULL)) ||
	    (st = opt_str(&c, root, "launch_path", &l->launch_path, NULL)) ||
	    (st = opt_str(&c, root, "error", &l->error, NULL)) || (st = parse_stack(&c, root, l)) ||
	    (st = parse_autotune(&c, root, l)) || (st = parse_checks(&c, root, l)))
		goto fail_parse;
	if ((st = dflt(&c, &l->script, "script")) ||
	    (st = dflt(&c, &l->kernel, info->kernel[0] ? info->kernel : "kernel")) ||
	    (st = dflt(&c, &l->timestamp, "0")) || (st = dflt(&c, &l->backend, "unknown")) ||
	    (st = dflt(&c, &l->source_file, info->file)))
		goto fail_parse;
	if ((v = fp_json_get(root, "run"))) {
		if (!fp_json_int64(v, &i64) || i64 < 0) {
			st = fp__dbg_launch_err(&c, FP_EFORMAT, v,
						"\"run\" must be a non-negative integer");
			goto fail_parse;
		}
		l->run_index = i64;
	}
	l->record_capacity = info->slots_per_program;
	if ((v = fp_json_get(root, "record_capacity")) && !fp_json_uint64(v, &l->record_capacity)) {
		st = fp__dbg_launch_err(&c, FP_EFORMAT, v,
					"\"record_capacity\" must be a non-negative integer");
		goto fail_parse;
	}
	if ((v = fp_json_get(root, "export_raw_records")) && fp_json_type(v) != FP_JSON_NULL) {
		if (!fp_json_bool(v, &b)) {
			st = fp__dbg_launch_err(&c, FP_EFORMAT, v,
						"\"export_raw_records\" must be true or false");
			goto fail_parse;
		}
		l->export_raw_records = b;
	}
	if ((v = fp_json_get(root, "sanitize")) && fp_json_type(v) != FP_JSON_NULL) {
		if (!fp_json_bool(v, &b)) {
			st = fp__dbg_launch_err(&c, FP_EFORMAT, v,
						"\"sanitize\" must be true or false");
			goto fail_parse;
		}
		l->findings_only = b;
	}
	if ((st = parse_grid(&c, root, l, run)) || (st = parse_helpers(&c, root, l)) ||
	    (st = parse_num_warps(&c, root, l)) || (st = parse_registers(&c, root, l)) ||
	    (st = make_stem(&c, l)))
		goto fail_parse;
	/* the tensor arguments' extents: what fp_dbg_launch_findings() checks accesses against */
	if ((st = parse_args(&c, root, &x)))
		goto fail_parse;
	l->args = x.a;
	l->nargs = x.n;
	l->arg_texts = x.texts;
	fp_json_doc_free(doc);
	*out = l;
	return FP_OK;

fail_parse:
	fp_json_doc_free(doc);
	fp_dbg_launch_free(l);
	return st;
}

void fp_dbg_launch_free(struct fp_dbg_launch *l)
{
	size_t i;

	if (!l)
		return;
	fp_free(l->output_dir);
	fp_free(l->stem);
	fp_free(l->script);
	fp_free(l->kernel);
	fp_free(l->timestamp);
	fp_free(l->backend);
	fp_free(l->source_file);
	fp_free(l->twin_file);
	fp_free(l->ttir);
	fp_free(l->ttir_unavailable_reason);
	fp_free(l->nw_reason);
	fp_free(l->reg_reason);
	for (i = 0; i < l->nargs; i++)
		fp_free((char *)l->args[i].name);
	fp_free(l->args);
	fp_free(l->arg_texts);
	fp_free(l->test);
	fp_free(l->launch_path);
	fp_free(l->autotune_role);
	fp_free(l->autotune_config);
	fp_free(l->error);
	for (i = 0; i < l->nstack; i++)
		fp_free(l->stack[i]);
	fp_free(l->stack);
	for (i = 0; i < l->nhelper_files; i++)
		fp_free(l->helper_files[i]);
	fp_free(l->helper_files);
	for (i = 0; i < l->nframe_files; i++)
		fp_free(l->frame_files[i]);
	fp_free(l->frame_files);
	fp_free(l);
}

void fp__dbg_program_xyz(const struct fp_dbg_launch *l, uint64_t p, uint64_t xyz[3])
{
	xyz[0] = p % l->grid[0];
	xyz[1] = (p / l->grid[0]) % l->grid[1];
	xyz[2] = p / (l->grid[0] * l->grid[1]);
}
