/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The streaming JSON writer (include/flagprism/json.h): nesting and comma bookkeeping on a
 * fixed-depth stack, string escaping that turns any byte sequence into valid UTF-8 JSON, and
 * shortest round-trip doubles. It writes forward only and keeps no document: building or editing
 * a tree is the caller's business. Also home of the "C" locale the reader shares.
 */
#include "fp-setup.h"

#include <math.h>
#include <pthread.h>

#include <flagprism/json.h>

#include "json-internal.h"
#include "core/core-internal.h"

#define JSONW_BLOCK ((size_t)64 * 1024)

struct fp_jsonw {
	FILE *f;              /* FILE output, or NULL */
	struct fp_strbuf *sb; /* strbuf output, or NULL */
	char *blk;            /* FILE output: JSONW_BLOCK bytes pending write */
	size_t blen;          /* bytes used in blk */
	unsigned flags;       /* FP_JSONW_* */
	int err;              /* first error; sticky */
	uint32_t depth;       /* open containers */
	bool first;           /* innermost container has no item yet */
	bool want_value;      /* innermost object: a key was written, its value is due */
	bool done;            /* a complete top-level value was written */
	bool finished;        /* fp_jsonw_finish() was called */
	/* bit d: the container at depth d + 1 is an object (else an array) */
	unsigned char is_obj[FP_JSONW_MAX_DEPTH / 8];
};

/* ---- the "C" locale ------------------------------------------------------------------------ */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_make(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t fp__json_c_locale(void)
{
	pthread_once(&c_locale_once, c_locale_make);
	return c_locale;
}

/* ---- numbers ------------------------------------------------------------------------------- */

/* Decimal digits of v, right-aligned to end; returns the first digit. */
static char *u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

int fp_json_format_double(double v, char *buf, size_t size)
{
	locale_t c, old = (locale_t)0;
	char tmp[24], *p;
	size_t n;
	int prec, len = 0;

	if (!isfinite(v) || !buf || size < 32)
		return FP_EINVAL;
	/*
	 * Integral values below 1e15 print the same under %.15g as their integer digits, which we
	 * can produce far faster than snprintf + strtod. Counters and timestamps hit this path.
	 */
	if (fabs(v) < 1e15 && v == trunc(v)) {
		p = u64_digits((uint64_t)fabs(v), tmp + sizeof(tmp));
		n = (size_t)(tmp + sizeof(tmp) - p);
		if (signbit(v))
			buf[len++] = '-';
		memcpy(buf + len, p, n);
		len += (int)n;
		memcpy(buf + len, ".0", 3);
		return len + 2;
	}
	/* %g and strtod read LC_NUMERIC: switch this thread to "C" around them. */
	c = fp__json_c_locale();
	if (c)
		old = uselocale(c);
	/* 17 significant digits always identify a double: no need to check that one */
	for (prec = 15; prec <= 17; prec++) {
		len = snprintf(buf, size, "%.*g", prec, v);
		if (len < 0 || (size_t)len >= size || prec == 17)
			break;
		if (strtod(buf, NULL) == v)
			break;
	}
	if (c)
		uselocale(old);
	if (len < 0 || (size_t)len + 2 >= size)
		return FP_EINVAL;
	/* Keep it a floating-point literal for readers that distinguish 3 from 3.0. */
	if (!strpbrk(buf, ".e")) {
		memcpy(buf + len, ".0", 3);
		len += 2;
	}
	return len;
}

/* ---- output -------------------------------------------------------------------------------- */

static int fail(struct fp_jsonw *w, int status)
{
	if (!w->err)
		w->err = status;
	return w->err;
}

static void flush_block(struct fp_jsonw *w)
{
	if (w->blen && !w->err && fwrite(w->blk, 1, w->blen, w->f) != w->blen)
		fail(w, FP_EIO);
	w->blen = 0;
}

static void out(struct fp_jsonw *w, const void *p, size_t n)
{
	int r;

	if (w->err)
		return;
	if (w->sb) {
		r = fp_strbuf_add(w->sb, p, n);
		if (r)
			fail(w, r);
		return;
	}
	if (n > JSONW_BLOCK - w->blen) {
		flush_block(w);
		if (w->err)
			return;
		if (n >= JSONW_BLOCK) {
			if (fwrite(p, 1, n, w->f) != n)
				fail(w, FP_EIO);
			return;
		}
	}
	memcpy(w->blk + w->blen, p, n);
	w->blen += n;
}

static void outc(struct fp_jsonw *w, char c)
{
	if (!w->sb && w->blen < JSONW_BLOCK && !w->err)
		w->blk[w->blen++] = c;
	else
		out(w, &c, 1);
}

static void newline_indent(struct fp_jsonw *w, uint32_t depth)
{
	static const char spaces[] =
		"\n                                                               ";
	size_t n = (size_t)depth + 1, k;

	out(w, spaces, n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1);
	for (n -= FP_MIN(n, sizeof(spaces) - 1); n; n -= k) {
		k = FP_MIN(n, sizeof(spaces) - 2);
		out(w, spaces + 1, k);
	}
}

/*
 * Write s[0..n) as a JSON string. Runs of bytes that need no change are copied in one piece;
 * everything else is escaped or replaced, so any input yields valid UTF-8 JSON.
 */
static void out_string(struct fp_jsonw *w, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	static const char fffd[] = "\xEF\xBF\xBD";
	size_t i = 0, run = 0, len, bad;
	char esc[6];
	uint32_t cp;
	bool trunc;
	unsigned c;

	outc(w, '"');
	while (i < n) {
		c = s[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			len = fp__json_utf8_decode(s + i, n - i, &cp, &bad, &trunc);
			if (len && cp != 0x2028 && cp != 0x2029) {
				i += len;
				continue;
			}
			out(w, s + run, i - run);
			if (len) {
				out(w, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
				i += len;
			} else {
				out(w, fffd, 3);
				i += bad;
			}
			run = i;
			continue;
		}
		out(w, s + run, i - run);
		esc[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			out(w, esc, 2);
			break;
		case '\b':
			out(w, "\\b", 2);
			break;
		case '\f':
			out(w, "\\f", 2);
			break;
		case '\n':
			out(w, "\\n", 2);
			break;
		case '\r':
			out(w, "\\r", 2);
			break;
		case '\t':
			out(w, "\\t", 2);
			break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			out(w, esc, 6);
			break;
		}
		run = ++i;
	}
	out(w, s + run, i - run);
	outc(w, '"');
}

/* ---- structure ----------------------------------------------------------------------------- */

static bool in_object(const struct fp_jsonw *w)
{
	uint32_t d = w->depth - 1;

	return w->depth && (w->is_obj[d / 8] >> (d % 8) & 1);
}

/* Checks that a value may come now and writes what goes before it (comma, indentation). */
static int pre_value(struct fp_jsonw *w)
{
	if (w->err)
		return w->err;
	if (w->finished)
		return fail(w, FP_ESTATE);
	if (w->depth == 0)
		return w->done ? fail(w, FP_ESTATE) : FP_OK;
	if (in_object(w)) {
		if (!w->want_value)
			return fail(w, FP_ESTATE);
		w->want_value = false;
		return FP_OK;
	}
	if (!w->first)
		outc(w, ',');
	if (w->flags & FP_JSONW_PRETTY)
		newline_indent(w, w->depth);
	w->first = false;
	return w->err;
}

static int post_value(struct fp_jsonw *w)
{
	if (w->depth == 0)
		w->done = true;
	return w->err;
}

static int begin(struct fp_jsonw *w, bool obj)
{
	uint32_t d;
	int r;

	if (!w)
		return FP_EINVAL;
	r = pre_value(w);
	if (r)
		return r;
	if (w->depth >= FP_JSONW_MAX_DEPTH)
		return fail(w, FP_ELIMIT);
	d = w->depth++;
	if (obj)
		w->is_obj[d / 8] |= (unsigned char)(1u << (d % 8));
	else
		w->is_obj[d / 8] &= (unsigned char)~(1u << (d % 8));
	w->first = true;
	w->want_value = false;
	outc(w, obj ? '{' : '[');
	return w->err;
}

static int end(struct fp_jsonw *w, bool obj)
{
	if (!w)
		return FP_EINVAL;
	if (w->err)
		return w->err;
	if (w->finished || w->depth == 0 || in_object(w) != obj || w->want_value)
		return fail(w, FP_ESTATE);
	w->depth--;
	if ((w->flags & FP_JSONW_PRETTY) && !w->first)
		newline_indent(w, w->depth);
	outc(w, obj ? '}' : ']');
	w->first = false;
	return post_value(w);
}

/* ---- public API ---------------------------------------------------------------------------- */

static struct fp_jsonw *jsonw_new(FILE *f, struct fp_strbuf *sb, unsigned flags)
{
	struct fp_jsonw *w;

	w = fp_calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (f) {
		w->blk = fp_malloc(JSONW_BLOCK);
		if (!w->blk)
			goto fail_block;
	}
	w->f = f;
	w->sb = sb;
	w->flags = flags;
	return w;

fail_block:
	fp_free(w);
	return NULL;
}

struct fp_jsonw *fp_jsonw_new_file(FILE *f, unsigned flags)
{
	if (!f)
		return NULL;
	return jsonw_new(f, NULL, flags);
}

struct fp_jsonw *fp_jsonw_new_strbuf(struct fp_strbuf *sb, unsigned flags)
{
	if (!sb)
		return NULL;
	return jsonw_new(NULL, sb, flags);
}

int fp_jsonw_finish(struct fp_jsonw *w)
{
	if (!w)
		return FP_EINVAL;
	if (w->finished)
		return w->err;
	w->finished = true;
	if (w->depth || !w->done)
		fail(w, FP_ESTATE);
	if (w->f) {
		flush_block(w);
		if (fflush(w->f) != 0)
			fail(w, FP_EIO);
	}
	return w->err;
}

void fp_jsonw_free(struct fp_jsonw *w)
{
	if (!w)
		return;
	fp_free(w->blk);
	fp_free(w);
}

int fp_jsonw_object_begin(struct fp_jsonw *w)
{
	return begin(w, true);
}

int fp_jsonw_object_end(struct fp_jsonw *w)
{
	return end(w, true);
}

int fp_jsonw_array_begin(struct fp_jsonw *w)
{
	return begin(w, false);
}

int fp_jsonw_array_end(struct fp_jsonw *w)
{
	return end(w, false);
}

int fp_jsonw_key_n(struct fp_jsonw *w, const char *key, size_t n)
{
	if (!w)
		return FP_EINVAL;
	if (w->err)
		return w->err;
	if (!key)
		return fail(w, FP_EINVAL);
	if (w->finished || !in_object(w) || w->want_value)
		return fail(w, FP_ESTATE);
	if (!w->first)
		outc(w, ',');
	if (w->flags & FP_JSONW_PRETTY)
		newline_indent(w, w->depth);
	w->first = false;
	out_string(w, (const unsigned char *)key, n);
	if (w->flags & FP_JSONW_PRETTY)
		out(w, ": ", 2);
	else
		outc(w, ':');
	w->want_value = true;
	return w->err;
}

int fp_jsonw_key(struct fp_jsonw *w, const char *key)
{
	return fp_jsonw_key_n(w, key, key ? strlen(key) : 0);
}

int fp_jsonw_string_n(struct fp_jsonw *w, const char *s, size_t n)
{
	int r;

	if (!w)
		return FP_EINVAL;
	if (!s && n)
		return fail(w, FP_EINVAL);
	r = pre_value(w);
	if (r)
		return r;
	out_string(w, (const unsigned char *)(s ? s : ""), n);
	return post_value(w);
}

int fp_jsonw_string(struct fp_jsonw *w, const char *s)
{
	if (!s)
		return fp_jsonw_null(w);
	return fp_jsonw_string_n(w, s, strlen(s));
}

int fp_jsonw_uint(struct fp_jsonw *w, uint64_t v)
{
	char tmp[24], *p;
	int r;

	if (!w)
		return FP_EINVAL;
	r = pre_value(w);
	if (r)
		return r;
	p = u64_digits(v, tmp + sizeof(tmp));
	out(w, p, (size_t)(tmp + sizeof(tmp) - p));
	return post_value(w);
}

int fp_jsonw_int(struct fp_jsonw *w, int64_t v)
{
	char tmp[24], *p;
	int r;

	if (!w)
		return FP_EINVAL;
	r = pre_value(w);
	if (r)
		return r;
	/* negate in unsigned arithmetic so INT64_MIN is fine */
	p = u64_digits(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, tmp + sizeof(tmp));
	if (v < 0)
		*--p = '-';
	out(w, p, (size_t)(tmp + sizeof(tmp) - p));
	return post_value(w);
}

int fp_jsonw_double(struct fp_jsonw *w, double v)
{
	char buf[32];
	const char *s;
	int r, n;

	if (!w)
		return FP_EINVAL;
	r = pre_value(w);
	if (r)
		return r;
	if (isfinite(v)) {
		n = fp_json_format_double(v, buf, sizeof(buf));
		if (n < 0)
			return fail(w, n);
		out(w, buf, (size_t)n);
	} else if (w->flags & FP_JSONW_NONFINITE_STR) {
		s = isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
		out(w, s, strlen(s));
	} else {
		out(w, "null", 4);
	}
	return post_value(w);
}

int fp_jsonw_bool(struct fp_jsonw *w, bool v)
{
	int r;

	if (!w)
		return FP_EINVAL;
	r = pre_value(w);
	if (r)
		return r;
	out(w, v ? "true" : "false", v ? 4 : 5);
	return post_value(w);
}

int fp_jsonw_null(struct fp_jsonw *w)
{
	int r;

	if (!w)
		return FP_EINVAL;
	r = pre_value(w);
	if (r)
		return r;
	out(w, "null", 4);
	return post_value(w);
}

int fp_jsonw_raw(struct fp_jsonw *w, const char *json, size_t n)
{
	int r;

	if (!w)
		return FP_EINVAL;
	if (!json || !n)
		return fail(w, FP_EINVAL);
	r = pre_value(w);
	if (r)
		return r;
	out(w, json, n);
	return post_value(w);
}

int fp_jsonw_kv_string(struct fp_jsonw *w, const char *k, const char *v)
{
	int r = fp_jsonw_key(w, k);

	return r ? r : fp_jsonw_string(w, v);
}

int fp_jsonw_kv_int(struct fp_jsonw *w, const char *k, int64_t v)
{
	int r = fp_jsonw_key(w, k);

	return r ? r : fp_jsonw_int(w, v);
}

int fp_jsonw_kv_uint(struct fp_jsonw *w, const char *k, uint64_t v)
{
	int r = fp_jsonw_key(w, k);

	return r ? r : fp_jsonw_uint(w, v);
}

int fp_jsonw_kv_double(struct fp_jsonw *w, const char *k, double v)
{
	int r = fp_jsonw_key(w, k);

	return r ? r : fp_jsonw_double(w, v);
}

int fp_jsonw_kv_bool(struct fp_jsonw *w, const char *k, bool v)
{
	int r = fp_jsonw_key(w, k);

	return r ? r : fp_jsonw_bool(w, v);
}

int fp_jsonw_kv_null(struct fp_jsonw *w, const char *k)
{
	int r = fp_jsonw_key(w, k);

	return r ? r : fp_jsonw_null(w);
}

int fp__jsonw_value(struct fp_jsonw *w, const struct fp_json_value *v)
{
	char buf[32];
	const char *s;
	size_t i, len;
	int rc = FP_OK;

	switch (fp_json_type(v)) {
	case FP_JSON_NULL:
		return fp_jsonw_null(w);
	case FP_JSON_FALSE:
		return fp_jsonw_bool(w, false);
	case FP_JSON_TRUE:
		return fp_jsonw_bool(w, true);
	case FP_JSON_NUMBER:
		s = fp_json_number_text(v, buf, sizeof(buf));
		return s ? fp_jsonw_raw(w, s, strlen(s)) : FP_EINVAL;
	case FP_JSON_STRING:
		s = fp_json_string(v, &len);
		return fp_jsonw_string_n(w, s, len);
	case FP_JSON_ARRAY:
		fp_jsonw_array_begin(w);
		for (i = 0; !rc && i < fp_json_len(v); i++)
			rc = fp__jsonw_value(w, fp_json_at(v, i));
		return rc ? rc : fp_jsonw_array_end(w);
	case FP_JSON_OBJECT:
		fp_jsonw_object_begin(w);
		for (i = 0; !rc && i < fp_json_len(v); i++) {
			const char *key;
			size_t kl;
			const struct fp_json_value *m = fp_json_member(v, i, &key, &kl);

			fp_jsonw_key_n(w, key, kl);
			rc = fp__jsonw_value(w, m);
		}
		return rc ? rc : fp_jsonw_object_end(w);
	}
	return FP_EINVAL;
}
