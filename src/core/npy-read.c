/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The .npy reader: checks the magic and version, parses the header dictionary (a small Python
 * literal: 'descr', 'fortran_order' and 'shape', nothing else) with a bounds-checked cursor, and
 * returns a view of the data in the caller's buffer. It never allocates and never trusts a size
 * it reads: the shape's product is checked for overflow and against the bytes there are. It does
 * not convert byte orders, read structured or object arrays, or write files (npy.c does).
 */
#include "fp-setup.h"

#include "core/npy-internal.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6

struct cur {
	const char *s;
	size_t n, i;
	size_t base; /* byte offset of s[0] in the file, for messages */
	struct fp_diag *diag;
};

static int fail(struct cur *c, const char *what)
{
	return fp_diag_set(c->diag, FP_EFORMAT, c->base + c->i, "npy header: %s at byte %zu", what,
			   c->base + c->i);
}

static void ws(struct cur *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
			       c->s[c->i] == '\r'))
		c->i++;
}

static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return true;
	}
	return false;
}

/* A quoted string (single or double quotes, no escapes): start and length. */
static int string(struct cur *c, const char **s, size_t *len)
{
	char q;
	size_t start;

	ws(c);
	if (c->i >= c->n || (c->s[c->i] != '\'' && c->s[c->i] != '"'))
		return fail(c, "expected a quoted string");
	q = c->s[c->i++];
	start = c->i;
	while (c->i < c->n && c->s[c->i] != q) {
		if (c->s[c->i] == '\\')
			return fail(c, "escapes are not supported in header strings");
		c->i++;
	}
	if (c->i >= c->n)
		return fail(c, "unterminated string");
	*s = c->s + start;
	*len = c->i - start;
	c->i++;
	return FP_OK;
}

static bool word(struct cur *c, const char *w)
{
	size_t n = strlen(w);

	ws(c);
	if (c->n - c->i >= n && memcmp(c->s + c->i, w, n) == 0) {
		c->i += n;
		return true;
	}
	return false;
}

static int shape(struct cur *c, struct fp_npy_view *v)
{
	uint64_t d;

	if (!eat(c, '('))
		return fail(c, "'shape' must be a tuple");
	v->ndim = 0;
	v->numel = 1;
	for (;;) {
		if (eat(c, ')'))
			return FP_OK;
		ws(c);
		if (c->i >= c->n || c->s[c->i] < '0' || c->s[c->i] > '9')
			return fail(c, "expected a dimension (a non-negative integer) or ')'");
		d = 0;
		while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
			if (d > (UINT64_MAX - 9) / 10)
				return fail(c, "dimension too large");
			d = d * 10 + (uint64_t)(c->s[c->i++] - '0');
		}
		if (c->i < c->n && c->s[c->i] == 'L') /* Python 2 long */
			c->i++;
		if (v->ndim == FP_NPY_MAX_NDIM)
			return fail(c, "more than 32 dimensions");
		if (d && v->numel > UINT64_MAX / d)
			return fail(c, "the shape's element count overflows");
		v->numel *= d;
		v->shape[v->ndim++] = d;
		if (eat(c, ','))
			continue;
		if (eat(c, ')'))
			return FP_OK;
		return fail(c, "expected ',' or ')' in the shape");
	}
}

static bool host_le(void)
{
	const uint16_t one = 1;
	unsigned char b;

	memcpy(&b, &one, 1);
	return b == 1;
}

static int descr(struct cur *c, const char *s, size_t len, struct fp_npy_view *v)
{
	static const struct {
		const char *code;
		enum fp_dtype t;
	} types[] = {
		{"b1", FP_DTYPE_BOOL},    {"i1", FP_DTYPE_INT8},    {"u1", FP_DTYPE_UINT8},
		{"i2", FP_DTYPE_INT16},   {"u2", FP_DTYPE_UINT16},  {"i4", FP_DTYPE_INT32},
		{"u4", FP_DTYPE_UINT32},  {"i8", FP_DTYPE_INT64},   {"u8", FP_DTYPE_UINT64},
		{"f2", FP_DTYPE_FLOAT16}, {"f4", FP_DTYPE_FLOAT32}, {"f8", FP_DTYPE_FLOAT64},
	};
	char order;
	size_t i;

	if (len != 3)
		return fp_diag_set(c->diag, FP_ENOTSUP, c->base + c->i,
				   "npy: dtype '%.*s' is not supported", (int)(len > 32 ? 32 : len),
				   s);
	order = s[0];
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (memcmp(s + 1, types[i].code, 2) != 0)
			continue;
		if (fp_dtype_size(types[i].t) > 1 && order != '=' &&
		    order != (host_le() ? '<' : '>'))
			return fp_diag_set(c->diag, FP_ENOTSUP, c->base + c->i,
					   "npy: dtype '%.3s' is not in this machine's byte order",
					   s);
		if (order != '|' && order != '<' && order != '>' && order != '=')
			break;
		v->dtype = types[i].t;
		return FP_OK;
	}
	return fp_diag_set(c->diag, FP_ENOTSUP, c->base + c->i,
			   "npy: dtype '%.3s' is not supported", s);
}

int fp_npy_parse(const void *buf, size_t len, struct fp_npy_view *out, struct fp_diag *diag)
{
	const unsigned char *b = buf;
	struct fp_npy_view v;
	struct cur c;
	size_t hlen, pre, klen, vlen;
	const char *k, *val;
	bool have_descr = false, have_order = false, have_shape = false;
	int rc;

	fp_diag_clear(diag);
	if (!out || (!buf && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "npy: no buffer or no output");
	if (len < MAGIC_LEN + 4 || memcmp(b, MAGIC, MAGIC_LEN) != 0)
		return fp_diag_set(diag, FP_EFORMAT, 0,
				   "npy: not a .npy file (no \\x93NUMPY magic)");
	if (b[6] == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		pre = 10;
	} else if (b[6] == 2 || b[6] == 3) {
		if (len < 12)
			return fp_diag_set(diag, FP_EFORMAT, len,
					   "npy: the file ends in its prefix");
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		pre = 12;
	} else {
		return fp_diag_set(diag, FP_EFORMAT, 6, "npy: format version %u.%u is unknown",
				   b[6], b[7]);
	}
	if (hlen > len - pre)
		return fp_diag_set(
			diag, FP_EFORMAT, len,
			"npy: the header says %zu bytes, the file has %zu after its prefix", hlen,
			len - pre);
	memset(&v, 0, sizeof(v));
	c.s = (const char *)b + pre;
	c.n = hlen;
	c.i = 0;
	c.base = pre;
	c.diag = diag;
	if (!eat(&c, '{'))
		return fail(&c, "expected '{'");
	while (!eat(&c, '}')) {
		rc = string(&c, &k, &klen);
		if (rc)
			return rc;
		if (!eat(&c, ':'))
			return fail(&c, "expected ':'");
		if (klen == 5 && memcmp(k, "descr", 5) == 0) {
			rc = string(&c, &val, &vlen);
			if (!rc)
				rc = descr(&c, val, vlen, &v);
			if (rc)
				return rc;
			have_descr = true;
		} else if (klen == 13 && memcmp(k, "fortran_order", 13) == 0) {
			if (word(&c, "True"))
				v.fortran_order = true;
			else if (!word(&c, "False"))
				return fail(&c, "'fortran_order' must be True or False");
			have_order = true;
		} else if (klen == 5 && memcmp(k, "shape", 5) == 0) {
			rc = shape(&c, &v);
			if (rc)
				return rc;
			have_shape = true;
		} else {
			return fail(&c, "unknown key (only 'descr', 'fortran_order', 'shape')");
		}
		if (!eat(&c, ',')) {
			if (eat(&c, '}'))
				break;
			return fail(&c, "expected ',' or '}'");
		}
	}
	if (!have_descr || !have_order || !have_shape)
		return fail(&c, "the header needs 'descr', 'fortran_order' and 'shape'");
	if (v.numel > (UINT64_MAX / 8) || v.numel * fp_dtype_size(v.dtype) != len - pre - hlen)
		return fp_diag_set(diag, FP_EFORMAT, pre + hlen,
				   "npy: %" PRIu64 " elements of %zu bytes need %" PRIu64
				   " bytes of data, the file has %zu",
				   v.numel, fp_dtype_size(v.dtype),
				   v.numel > UINT64_MAX / 8 ? UINT64_MAX :
							      v.numel * fp_dtype_size(v.dtype),
				   len - pre - hlen);
	v.data = b + pre + hlen;
	v.nbytes = len - pre - hlen;
	*out = v;
	return FP_OK;
}

double fp_npy_get(const struct fp_npy_view *a, uint64_t i)
{
	const unsigned char *p;
	size_t sz;
	union {
		uint8_t u8;
		int8_t i8;
		uint16_t u16;
		int16_t i16;
		uint32_t u32;
		int32_t i32;
		uint64_t u64;
		int64_t i64;
		float f;
		double d;
	} x;

	if (!a || i >= a->numel)
		return 0;
	sz = fp_dtype_size(a->dtype);
	p = (const unsigned char *)a->data + i * sz;
	memcpy(&x, p, sz);
	switch (a->dtype) {
	case FP_DTYPE_BOOL:
		return x.u8 != 0;
	case FP_DTYPE_INT8:
		return x.i8;
	case FP_DTYPE_UINT8:
		return x.u8;
	case FP_DTYPE_INT16:
		return x.i16;
	case FP_DTYPE_UINT16:
		return x.u16;
	case FP_DTYPE_INT32:
		return x.i32;
	case FP_DTYPE_UINT32:
		return x.u32;
	case FP_DTYPE_INT64:
		return (double)x.i64;
	case FP_DTYPE_UINT64:
		return (double)x.u64;
	case FP_DTYPE_FLOAT16:
		return fp_half_to_double(x.u16);
	case FP_DTYPE_FLOAT32:
		return x.f;
	case FP_DTYPE_FLOAT64:
		return x.d;
	default:
		return 0;
	}
}
