/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict JSON reader (include/flagprism/json.h). One forward pass over the input, driven by
 * an explicit stack instead of recursion, so nesting depth costs heap and not C stack. Values
 * of an open container wait on a value stack; when the container closes they are copied once,
 * contiguously, into the document's block storage, so arrays and objects are plain C arrays and
 * nothing is ever re-allocated per element. Strings are unescaped into the same storage, numbers
 * are kept as their literal text (small integers in binary) and converted only when asked.
 * Not a streaming/SAX parser: the whole input must be in memory.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/json.h>

#include "json-internal.h"
#include "core/core-internal.h"

/* ---- document storage ---------------------------------------------------------------------- */

/* Storage grows by blocks, doubling from a size fitted to the input up to this bound. */
#define BLOCK_MIN ((size_t)4 * 1024)
#define BLOCK_FIRST_MAX ((size_t)1024 * 1024)
#define BLOCK_MAX ((size_t)64 * 1024 * 1024)

/* Objects with more members than this get a sorted key index (see fp_json_get). */
#define INDEX_MIN_MEMBERS 16

struct block {
	struct block *next;
	size_t size; /* bytes at data */
	size_t used;
	/* 8-byte aligned (three 8-byte fields above on LP64; checked when allocating) */
	unsigned char data[];
};

/* value flags */
#define VF_INT 0x01     /* number stored in u.i (integer literal of at most 18 digits) */
#define VF_INDEXED 0x02 /* object: a sorted index follows the members */

/*
 * 32 bytes on LP64, since a large profile has tens of millions of these. Lengths and counts are
 * 32-bit: longer strings and larger containers are refused with FP_ELIMIT.
 */
struct fp_json_value {
	uint64_t pos;    /* byte offset in the input << 16 | VF_* flags << 8 | type */
	const char *key; /* object member: key (NUL-terminated), else NULL */
	union {
		const char *s;              /* string contents / number literal */
		struct fp_json_value *kids; /* array items / object members */
		int64_t i;                  /* VF_INT number */
	} u;
	uint32_t key_len; /* object member: key length */
	uint32_t n;       /* string / literal length, or number of items / members */
};

#define V_TYPE(v) ((unsigned)((v)->pos & 0xff))
#define V_FLAGS(v) ((unsigned)((v)->pos >> 8 & 0xff))
#define V_OFFSET(v) ((v)->pos >> 16)
#define V_POS(off, flags, type) ((uint64_t)(off) << 16 | (uint64_t)(flags) << 8 | (uint64_t)(type))

struct fp_json_doc {
	struct block *blocks; /* head: the block we allocate from */
	size_t next_block;    /* size of the next block */
	struct fp_json_value root;
	uint64_t *nl; /* offsets of every '\n' in the input, ascending */
	size_t nl_len, nl_alloc;
	uint64_t text_len;
};

/* Allocate `size` bytes aligned to `align` (1 or 8) from the document's blocks. */
static void *store_alloc(struct fp_json_doc *d, size_t size, size_t align)
{
	struct block *b = d->blocks, *nb;
	uintptr_t at;
	size_t bs, total;

	if (b) {
		at = ((uintptr_t)(b->data + b->used) + (align - 1)) & ~(uintptr_t)(align - 1);
		if (at - (uintptr_t)b->data <= b->size &&
		    size <= b->size - (size_t)(at - (uintptr_t)b->data)) {
			b->used = (size_t)(at - (uintptr_t)b->data) + size;
			return (void *)at;
		}
	}
	bs = d->next_block;
	if (size > bs)
		bs = size;
	if (!fp__add_ok(sizeof(*nb), bs, &total))
		return NULL;
	nb = fp_malloc(total);
	if (!nb)
		return NULL;
	nb->size = bs;
	nb->used = size;
	if (b && size > d->next_block) {
		/* a one-off big block: keep allocating from the current one afterwards */
		nb->next = b->next;
		b->next = nb;
	} else {
		nb->next = b;
		d->blocks = nb;
		if (d->next_block < BLOCK_MAX)
			d->next_block *= 2;
	}
	return nb->data;
}

/* Give back the unused tail of the most recent allocation p of `reserved` bytes. */
static void store_trim(struct fp_json_doc *d, void *p, size_t reserved, size_t used)
{
	struct block *b = d->blocks;

	if (b && (unsigned char *)p + reserved == b->data + b->used)
		b->used -= reserved - used;
}

static struct fp_json_doc *doc_new(size_t len)
{
	struct fp_json_doc *d = fp_calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->next_block = FP_MAX(BLOCK_MIN, FP_MIN(len, BLOCK_FIRST_MAX));
	d->text_len = len;
	return d;
}

void fp_json_doc_free(struct fp_json_doc *doc)
{
	struct block *b, *next;

	if (!doc)
		return;
	for (b = doc->blocks; b; b = next) {
		next = b->next;
		fp_free(b);
	}
	fp_free(doc->nl);
	fp_free(doc);
}

/* ---- parser state -------------------------------------------------------------------------- */

struct frame {
	size_t start;    /* first child on the value stack */
	uint64_t offset; /* of the '[' or '{' */
	const char *key; /* key under which the container sits in its parent object */
	uint32_t key_len;
	uint8_t type; /* FP_JSON_ARRAY or FP_JSON_OBJECT */
};

struct reader {
	const unsigned char *s, *end;
	struct fp_json_doc *doc;
	struct fp_diag *diag;
	struct fp_json_value *vs; /* value stack */
	size_t vlen, valloc;
	struct frame *fs; /* container stack */
	size_t flen, falloc;
	uint32_t *tmp; /* scratch for sorting object indexes */
	size_t tmp_alloc;
	size_t nvalues, max_values;
	uint32_t max_depth;
};

/* Position of offset `off` by counting lines in the text (error path only). */
static void text_position(const struct reader *r, uint64_t off, uint32_t *line, uint32_t *col)
{
	const unsigned char *p = r->s, *stop = r->s + off, *q;
	uint64_t ln = 1;

	while (p < stop && (q = memchr(p, '\n', (size_t)(stop - p))) != NULL) {
		ln++;
		p = q + 1;
	}
	*line = ln > UINT32_MAX ? UINT32_MAX : (uint32_t)ln;
	*col = (uint64_t)(stop - p) + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(stop - p) + 1;
}

FP_PRINTF(4, 5)
static int fail(struct reader *r, int status, const unsigned char *at, const char *fmt, ...)
{
	uint32_t line, col;
	uint64_t off;
	va_list ap;

	if (!r->diag)
		return status;
	off = (uint64_t)(at - r->s);
	text_position(r, off, &line, &col);
	fp_diag_set_pos(r->diag, status, off, line, col, "%s", "");
	va_start(ap, fmt);
	vsnprintf(r->diag->msg, sizeof(r->diag->msg), fmt, ap);
	va_end(ap);
	return status;
}

static int fail_nomem(struct reader *r, const unsigned char *at)
{
	return fail(r, FP_ENOMEM, at, "out of memory while parsing JSON");
}

/* Describe the byte(s) at `at` for a message: "']'", "U+00E9", "invalid UTF-8 byte 0xFF". */
static void describe(const struct reader *r, const unsigned char *at, char *buf, size_t size)
{
	size_t bad;
	uint32_t cp;
	bool trunc;

	if (at >= r->end) {
		snprintf(buf, size, "end of input");
	} else if (*at >= 0x80) {
		if (fp__json_utf8_decode(at, (size_t)(r->end - at), &cp, &bad, &trunc))
			snprintf(buf, size, "U+%04" PRIX32, cp);
		else
			snprintf(buf, size, "invalid UTF-8 byte 0x%02X", *at);
	} else if (*at < 0x20 || *at == 0x7f) {
		snprintf(buf, size, "control character U+%04X", *at);
	} else {
		snprintf(buf, size, "'%c'", *at);
	}
}

/* A hint for the common non-JSON habits. */
static const char *hint(const unsigned char *at, const unsigned char *end)
{
	if (at >= end)
		return "";
	switch (*at) {
	case '/':
		return " (comments are not allowed in JSON)";
	case '\'':
		return " (strings must use double quotes)";
	case 'N':
	case 'I':
		return " (NaN and Infinity are not JSON values)";
	case '+':
		return " (a number cannot start with '+')";
	case '.':
		return " (a number must start with a digit)";
	default:
		return "";
	}
}

static int fail_expected(struct reader *r, const unsigned char *at, const char *what)
{
	char found[48];

	if (at >= r->end)
		return fail(r, FP_EFORMAT, at, "unexpected end of input; expected %s", what);
	describe(r, at, found, sizeof(found));
	if (*at >= 0x80 && strncmp(found, "invalid", 7) == 0)
		return fail(r, FP_EFORMAT, at, "%s; expected %s", found, what);
	return fail(r, FP_EFORMAT, at, "expected %s, found %s%s", what, found, hint(at, r->end));
}

/* ---- lexical pieces ------------------------------------------------------------------------ */

static int note_newline(struct reader *r, const unsigned char *p)
{
	struct fp_json_doc *d = r->doc;
	size_t na;
	uint64_t *nl;

	if (d->nl_len == d->nl_alloc) {
		na = d->nl_alloc ? d->nl_alloc * 2 : 64;
		nl = fp_reallocarray(d->nl, na, sizeof(*nl));
		if (!nl)
			return fail_nomem(r, p);
		d->nl = nl;
		d->nl_alloc = na;
	}
	d->nl[d->nl_len++] = (uint64_t)(p - r->s);
	return FP_OK;
}

/*
 * Skip whitespace from p, recording line ends; returns the first other byte (or end), or NULL
 * when recording ran out of memory. Returning the cursor, rather than updating it through a
 * pointer, lets compilers keep it in a register in the main loop.
 */
static inline const unsigned char *skip_ws(struct reader *r, const unsigned char *p)
{
	const unsigned char *end = r->end;

	while (p < end && *p <= ' ') {
		if (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		else if (*p == '\n' && note_newline(r, p) == FP_OK)
			p++;
		else if (*p == '\n')
			return NULL;
		else
			break;
	}
	return p;
}

static int hexval(unsigned c)
{
	if (c >= '0' && c <= '9')
		return (int)(c - '0');
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	return -1;
}

/*
 * Read the 4 hex digits of a \u escape whose backslash is at `bs`. Returns FP_OK and the value,
 * or fails (at the end of input, or at the offending digit).
 */
static int read_u4(struct reader *r, const unsigned char *bs, uint32_t *out)
{
	uint32_t v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		if (bs + 2 + i >= r->end)
			return fail(r, FP_EFORMAT, r->end,
				    "unexpected end of input in \\u escape; expected 4 hex digits");
		h = hexval(bs[2 + i]);
		if (h < 0)
			return fail(r, FP_EFORMAT, bs + 2 + i,
				    "invalid \\u escape: expected 4 hex digits");
		v = v << 4 | (uint32_t)h;
	}
	*out = v;
	return FP_OK;
}

/* Does the word of 8 bytes hold a byte < 0x20, '"', '\\' or >= 0x80? (SWAR) */
static inline bool word_special(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

	return (((x - ones * 0x20) | (q - ones) | (b - ones) | x) & highs) != 0;
}

/*
 * Parse the string whose opening quote is at *pp into document storage. On success stores the
 * unescaped contents (NUL-terminated) and its length, and moves *pp past the closing quote.
 */
static int parse_string(struct reader *r, const unsigned char **pp, const char **out,
			size_t *out_len)
{
	const unsigned char *open = *pp, *q = open + 1, *end = r->end, *raw, *bs;
	unsigned char *dst, *d;
	size_t raw_len, bad, seq;
	bool esc = false, trunc;
	uint32_t cp = 0, lo; /* = 0: gcc -O3 cannot see read_u4() set it before use */
	uint64_t x;
	int rc;

	/* Pass 1: find the closing quote, validating escapes and UTF-8 on the way. */
	for (;;) {
		while (end - q >= 8) {
			memcpy(&x, q, 8);
			if (word_special(x))
				break;
			q += 8;
		}
		if (q >= end)
			return fail(r, FP_EFORMAT, end,
				    "unexpected end of input in string starting at offset %" PRIu64,
				    (uint64_t)(open - r->s));
		if (*q == '"')
			break;
		if (*q >= 0x20 && *q < 0x80 && *q != '\\') {
			q++;
			continue;
		}
		if (*q >= 0x80) {
			seq = fp__json_utf8_decode(q, (size_t)(end - q), &cp, &bad, &trunc);
			if (seq) {
				q += seq;
				continue;
			}
			if (trunc)
				return fail(
					r, FP_EFORMAT, end,
					"unexpected end of input in a UTF-8 sequence in a string");
			return fail(r, FP_EFORMAT, q, "invalid UTF-8 byte 0x%02X in string", *q);
		}
		if (*q < 0x20)
			return fail(r, FP_EFORMAT, q,
				    "control character U+%04X in string; it must be escaped", *q);
		/* backslash */
		bs = q;
		esc = true;
		if (q + 1 >= end)
			return fail(r, FP_EFORMAT, end,
				    "unexpected end of input after '\\' in string");
		switch (q[1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			q += 2;
			continue;
		case 'u':
			break;
		default:
			if (q[1] >= 0x20 && q[1] < 0x7f)
				return fail(r, FP_EFORMAT, q,
					    "invalid escape '\\%c'; expected one of \\\" \\\\ \\/ "
					    "\\b \\f \\n \\r \\t \\uXXXX",
					    q[1]);
			return fail(r, FP_EFORMAT, q,
				    "invalid escape; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r "
				    "\\t \\uXXXX after '\\'");
		}
		rc = read_u4(r, bs, &cp);
		if (rc)
			return rc;
		q = bs + 6;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return fail(r, FP_EFORMAT, bs,
				    "lone low surrogate \\u%04" PRIX32 " in string", cp);
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (q >= end || (q[0] == '\\' && q + 1 >= end))
				return fail(r, FP_EFORMAT, end,
					    "unexpected end of input after high surrogate "
					    "\\u%04" PRIX32,
					    cp);
			if (q[0] != '\\' || q[1] != 'u')
				return fail(r, FP_EFORMAT, bs,
					    "lone high surrogate \\u%04" PRIX32
					    "; expected a \\uDC00-\\uDFFF escape after it",
					    cp);
			rc = read_u4(r, q, &lo);
			if (rc)
				return rc;
			if (lo < 0xDC00 || lo > 0xDFFF)
				return fail(r, FP_EFORMAT, bs,
					    "high surrogate \\u%04" PRIX32
					    " followed by \\u%04" PRIX32 ", not by a low surrogate",
					    cp, lo);
			q += 6;
		}
	}

	/* Pass 2: copy (or unescape) into storage; escapes only shrink the text. */
	raw = open + 1;
	raw_len = (size_t)(q - raw);
	dst = store_alloc(r->doc, raw_len + 1, 1);
	if (!dst)
		return fail_nomem(r, open);
	if (!esc) {
		memcpy(dst, raw, raw_len);
		d = dst + raw_len;
	} else {
		const unsigned char *s = raw, *bsl;

		d = dst;
		while (s < q) {
			bsl = memchr(s, '\\', (size_t)(q - s));
			if (!bsl)
				bsl = q;
			memcpy(d, s, (size_t)(bsl - s));
			d += bsl - s;
			s = bsl;
			if (s >= q)
				break;
			switch (s[1]) {
			case 'b':
				*d++ = '\b';
				break;
			case 'f':
				*d++ = '\f';
				break;
			case 'n':
				*d++ = '\n';
				break;
			case 'r':
				*d++ = '\r';
				break;
			case 't':
				*d++ = '\t';
				break;
			case 'u':
				cp = (uint32_t)(hexval(s[2]) << 12 | hexval(s[3]) << 8 |
						hexval(s[4]) << 4 | hexval(s[5]));
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					lo = (uint32_t)(hexval(s[8]) << 12 | hexval(s[9]) << 8 |
							hexval(s[10]) << 4 | hexval(s[11]));
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					s += 6;
				}
				if (cp < 0x80) {
					*d++ = (unsigned char)cp;
				} else if (cp < 0x800) {
					*d++ = (unsigned char)(0xC0 | cp >> 6);
					*d++ = (unsigned char)(0x80 | (cp & 0x3F));
				} else if (cp < 0x10000) {
					*d++ = (unsigned char)(0xE0 | cp >> 12);
					*d++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
					*d++ = (unsigned char)(0x80 | (cp & 0x3F));
				} else {
					*d++ = (unsigned char)(0xF0 | cp >> 18);
					*d++ = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
					*d++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
					*d++ = (unsigned char)(0x80 | (cp & 0x3F));
				}
				s += 4;
				break;
			default: /* '"', '\\', '/' */
				*d++ = s[1];
				break;
			}
			s += 2;
		}
	}
	*d = '\0';
	store_trim(r->doc, dst, raw_len + 1, (size_t)(d - dst) + 1);
	*out = (const char *)dst;
	*out_len = (size_t)(d - dst);
	*pp = q + 1;
	return FP_OK;
}

static inline bool is_digit(unsigned c)
{
	return c - '0' < 10u;
}

/*
 * Parse the number at *pp into v. Integer literals of up to 18 digits (except "-0") are stored
 * in binary; everything else keeps its literal text in storage. Magnitudes that cannot be a
 * finite double are refused here, so fp_json_number() never yields an infinity.
 */
static int parse_number(struct reader *r, const unsigned char **pp, struct fp_json_value *v)
{
	const unsigned char *start = *pp, *p = start, *end = r->end, *int_start;
	size_t int_digits, len;
	bool frac = false, ex = false, neg = false;
	int64_t mag, e = 0;
	uint64_t acc = 0;
	char *dst;

	if (*p == '-') {
		neg = true;
		p++;
		if (p >= end || !is_digit(*p))
			return fail_expected(r, p, "a digit after '-'");
	}
	int_start = p;
	if (*p == '0') {
		p++;
		if (p < end && is_digit(*p))
			return fail(
				r, FP_EFORMAT, p,
				"leading zeros are not allowed in numbers; expected '.', 'e' or "
				"the end of the number");
	} else {
		while (p < end && is_digit(*p))
			p++;
	}
	int_digits = (size_t)(p - int_start);
	if (p < end && *p == '.') {
		frac = true;
		p++;
		if (p >= end || !is_digit(*p))
			return fail_expected(r, p, "a digit after '.' in number");
		while (p < end && is_digit(*p))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		const unsigned char *es;
		bool eneg = false;

		ex = true;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p >= end || !is_digit(*p))
			return fail_expected(r, p, "a digit in the exponent of a number");
		es = p;
		while (p < end && is_digit(*p)) {
			if (p - es < 9)
				e = e * 10 + (*p - '0');
			p++;
		}
		if (p - es >= 9)
			e = 1000000000; /* far beyond any double; the sign decides what it means */
		if (eneg)
			e = -e;
	}
	len = (size_t)(p - start);
	if (len > FP_JSON_MAX_NUMBER_LEN)
		return fail(r, FP_ELIMIT, start,
			    "number literal of %zu bytes is longer than the limit of %u", len,
			    FP_JSON_MAX_NUMBER_LEN);
	*pp = p;
	v->pos |= FP_JSON_NUMBER;
	if (!frac && !ex && int_digits <= 18 && !(neg && *int_start == '0')) {
		for (const unsigned char *c = int_start; c < int_start + int_digits; c++)
			acc = acc * 10 + (uint64_t)(*c - '0');
		v->pos |= (uint64_t)VF_INT << 8;
		v->u.i = neg ? -(int64_t)acc : (int64_t)acc;
		return FP_OK;
	}
	/*
	 * The value is below 10^mag: with a non-zero integer part of k digits, 10^(k+e); otherwise
	 * below 10^e. Only literals that may exceed DBL_MAX (~1.8e308) need strtod now.
	 */
	mag = (*int_start == '0' ? 0 : (int64_t)int_digits) + e;
	if (mag > 308) {
		char tmp[FP_JSON_MAX_NUMBER_LEN + 1];
		locale_t c = fp__json_c_locale();
		double dv;

		memcpy(tmp, start, len);
		tmp[len] = '\0';
		dv = c ? strtod_l(tmp, NULL, c) : strtod(tmp, NULL);
		if (isinf(dv))
			return fail(r, FP_ELIMIT, start,
				    "number %.40s%s is out of the range of a double", tmp,
				    len > 40 ? "..." : "");
	}
	dst = store_alloc(r->doc, len + 1, 1);
	if (!dst)
		return fail_nomem(r, start);
	memcpy(dst, start, len);
	dst[len] = '\0';
	v->u.s = dst;
	v->n = (uint32_t)len;
	return FP_OK;
}

static int parse_literal(struct reader *r, const unsigned char **pp, const char *word, size_t n)
{
	const unsigned char *p = *pp;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p + i >= r->end)
			return fail(r, FP_EFORMAT, r->end,
				    "unexpected end of input in literal '%s'", word);
		if (p[i] != (unsigned char)word[i])
			return fail(r, FP_EFORMAT, p + i, "invalid literal; expected '%s'", word);
	}
	*pp = p + n;
	return FP_OK;
}

/* ---- stacks -------------------------------------------------------------------------------- */

/* Make sure the value stack has a free slot. */
static int reserve_value(struct reader *r, const unsigned char *at)
{
	struct fp_json_value *v;
	size_t na;

	if (r->vlen < r->valloc)
		return FP_OK;
	na = r->valloc ? r->valloc * 2 : 256;
	v = fp_reallocarray(r->vs, na, sizeof(*v));
	if (!v)
		return fail_nomem(r, at);
	r->vs = v;
	r->valloc = na;
	return FP_OK;
}

/* A new value slot on the value stack, zeroed, counted against max_values. */
static struct fp_json_value *push_value(struct reader *r, const unsigned char *at, int *rc)
{
	struct fp_json_value *v;

	if (r->nvalues >= r->max_values) {
		*rc = fail(r, FP_ELIMIT, at, "more than %zu values", r->max_values);
		return NULL;
	}
	*rc = reserve_value(r, at);
	if (*rc)
		return NULL;
	r->nvalues++;
	v = &r->vs[r->vlen++];
	memset(v, 0, sizeof(*v));
	v->pos = V_POS(at - r->s, 0, 0);
	return v;
}

static int push_frame(struct reader *r, const unsigned char *at, uint8_t type, const char *key,
		      uint32_t key_len)
{
	struct frame *f;
	size_t na;

	if (r->flen >= r->max_depth)
		return fail(r, FP_ELIMIT, at, "nesting deeper than %" PRIu32 " levels",
			    r->max_depth);
	if (r->nvalues >= r->max_values)
		return fail(r, FP_ELIMIT, at, "more than %zu values", r->max_values);
	if (r->flen == r->falloc) {
		na = r->falloc ? r->falloc * 2 : 32;
		f = fp_reallocarray(r->fs, na, sizeof(*f));
		if (!f)
			return fail_nomem(r, at);
		r->fs = f;
		r->falloc = na;
	}
	r->nvalues++;
	f = &r->fs[r->flen++];
	f->start = r->vlen;
	f->offset = (uint64_t)(at - r->s);
	f->key = key;
	f->key_len = key_len;
	f->type = type;
	return FP_OK;
}

/* Order of member keys in an index: by length, then bytes. Any total order would do. */
static int key_cmp(const struct fp_json_value *m, const char *key, size_t n)
{
	if (m->key_len != n)
		return m->key_len < n ? -1 : 1;
	return memcmp(m->key, key, n);
}

/*
 * Fill idx[0..n) with the member numbers of an object sorted by key, equal keys in input order
 * (a stable bottom-up merge sort, using tmp[0..n) as scratch). A sort rather than a hash table
 * so that no input, however crafted, makes building or searching it worse than O(n log n) and
 * O(log n).
 */
static void sort_index(const struct fp_json_value *kids, uint32_t *idx, uint32_t *tmp, size_t n)
{
	uint32_t *src = idx, *dst = tmp, *t;
	size_t width, i, a, b, lo, mid, hi, o;

	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	for (width = 1; width < n; width *= 2) {
		for (lo = 0; lo < n; lo += 2 * width) {
			mid = FP_MIN(lo + width, n);
			hi = FP_MIN(lo + 2 * width, n);
			for (a = lo, b = mid, o = lo; o < hi; o++) {
				if (b >= hi || (a < mid && key_cmp(&kids[src[a]], kids[src[b]].key,
								   kids[src[b]].key_len) <= 0))
					dst[o] = src[a++];
				else
					dst[o] = src[b++];
			}
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != idx)
		memcpy(idx, src, n * sizeof(*idx));
}

/* Scratch space of n uint32 for sort_index(), kept across objects. */
static uint32_t *index_scratch(struct reader *r, size_t n, const unsigned char *at)
{
	uint32_t *t;

	if (n > r->tmp_alloc) {
		t = fp_reallocarray(r->tmp, n, sizeof(*t));
		if (!t) {
			fail_nomem(r, at);
			return NULL;
		}
		r->tmp = t;
		r->tmp_alloc = n;
	}
	return r->tmp;
}

/* Close the innermost container: move its children into storage and push it as a value. */
static int close_frame(struct reader *r, const unsigned char *at)
{
	struct frame f = r->fs[--r->flen];
	size_t n = r->vlen - f.start, bytes, extra = 0;
	struct fp_json_value *kids = NULL, *v;
	bool index = false;

	if (n) {
		if (f.type == FP_JSON_OBJECT && n > INDEX_MIN_MEMBERS && n <= UINT32_MAX) {
			index = true;
			extra = n * sizeof(uint32_t);
		}
		if (!fp__mul_ok(n, sizeof(*kids), &bytes) || !fp__add_ok(bytes, extra, &bytes))
			return fail_nomem(r, at);
		kids = store_alloc(r->doc, bytes, 8);
		if (!kids)
			return fail_nomem(r, at);
		memcpy(kids, r->vs + f.start, n * sizeof(*kids));
		if (index) {
			uint32_t *tmp = index_scratch(r, n, at);

			if (!tmp)
				return FP_ENOMEM;
			sort_index(kids, (uint32_t *)(void *)(kids + n), tmp, n);
		}
	}
	if (n > UINT32_MAX)
		return fail(r, FP_ELIMIT, at, "%s of %zu elements is too large (limit %" PRIu32 ")",
			    f.type == FP_JSON_ARRAY ? "array" : "object", n, UINT32_MAX);
	r->vlen = f.start;
	/* the slot is free (the container's own count was taken at push_frame) */
	v = &r->vs[r->vlen++];
	memset(v, 0, sizeof(*v));
	v->pos = V_POS(f.offset, index ? VF_INDEXED : 0, f.type);
	v->key = f.key;
	v->key_len = f.key_len;
	v->u.kids = kids;
	v->n = (uint32_t)n;
	return FP_OK;
}

/* ---- the parser ---------------------------------------------------------------------------- */

/* Is the last non-whitespace byte before p a comma? (error messages only) */
static bool after_comma(const struct reader *r, const unsigned char *p)
{
	while (p > r->s && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r' || p[-1] == '\n'))
		p--;
	return p > r->s && p[-1] == ',';
}

static int parse(struct reader *r, const unsigned char *p)
{
	const char *key = NULL, *str;
	const unsigned char *key_at;
	uint32_t key_len = 0;
	struct fp_json_value *v;
	size_t slen;
	int rc;

value:
	p = skip_ws(r, p);
	if (!p)
		return FP_ENOMEM;
	if (p >= r->end)
		return fail_expected(r, p, "a JSON value");
	switch (*p) {
	case '{':
	case '[':
		/* close_frame() puts the container where its first child would be: keep it free */
		rc = reserve_value(r, p);
		if (rc)
			return rc;
		rc = push_frame(r, p, *p == '{' ? FP_JSON_OBJECT : FP_JSON_ARRAY, key, key_len);
		if (rc)
			return rc;
		key = NULL;
		key_len = 0;
		p++;
		p = skip_ws(r, p);
		if (!p)
			return FP_ENOMEM;
		if (r->fs[r->flen - 1].type == FP_JSON_ARRAY) {
			if (p < r->end && *p == ']') {
				p++;
				goto close;
			}
			goto value;
		}
		if (p < r->end && *p == '}') {
			p++;
			goto close;
		}
		if (p >= r->end || *p != '"')
			return fail_expected(r, p, "'\"' to start an object key, or '}'");
		goto key;
	case '"': {
		const unsigned char *at = p;

		rc = parse_string(r, &p, &str, &slen);
		if (rc)
			return rc;
		if (slen > UINT32_MAX)
			return fail(r, FP_ELIMIT, at, "string of %zu bytes is too long", slen);
		v = push_value(r, at, &rc);
		if (!v)
			return rc;
		v->pos |= FP_JSON_STRING;
		v->u.s = str;
		v->n = (uint32_t)slen;
		break;
	}
	case 't':
	case 'f':
	case 'n': {
		const unsigned char *at = p;
		const char *word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";

		rc = parse_literal(r, &p, word, strlen(word));
		if (rc)
			return rc;
		v = push_value(r, at, &rc);
		if (!v)
			return rc;
		v->pos |= *at == 't' ? FP_JSON_TRUE : *at == 'f' ? FP_JSON_FALSE : FP_JSON_NULL;
		break;
	}
	default:
		if (*p == '-' || is_digit(*p)) {
			const unsigned char *at = p;

			v = push_value(r, at, &rc);
			if (!v)
				return rc;
			rc = parse_number(r, &p, v);
			if (rc)
				return rc;
			break;
		}
		if (r->flen && *p == (r->fs[r->flen - 1].type == FP_JSON_ARRAY ? ']' : '}') &&
		    after_comma(r, p))
			return fail(r, FP_EFORMAT, p,
				    "expected a JSON value, found '%c' (trailing commas are not "
				    "allowed)",
				    *p);
		return fail_expected(r, p, "a JSON value");
	}
	v->key = key;
	v->key_len = key_len;
	key = NULL;
	key_len = 0;

after_value:
	if (!r->flen)
		goto done;
	p = skip_ws(r, p);
	if (!p)
		return FP_ENOMEM;
	if (r->fs[r->flen - 1].type == FP_JSON_ARRAY) {
		if (p < r->end && *p == ',') {
			p++;
			goto value;
		}
		if (p < r->end && *p == ']') {
			p++;
			goto close;
		}
		return fail_expected(r, p, "',' or ']' after array element");
	}
	if (p < r->end && *p == ',') {
		p++;
		p = skip_ws(r, p);
		if (!p)
			return FP_ENOMEM;
		if (p < r->end && *p == '}')
			return fail(
				r, FP_EFORMAT, p,
				"expected '\"' to start an object key, found '}' (trailing commas "
				"are not allowed)");
		if (p >= r->end || *p != '"')
			return fail_expected(r, p, "'\"' to start an object key");
		goto key;
	}
	if (p < r->end && *p == '}') {
		p++;
		goto close;
	}
	return fail_expected(r, p, "',' or '}' after object member");

key:
	key_at = p;
	rc = parse_string(r, &p, &str, &slen);
	if (rc)
		return rc;
	if (slen > UINT32_MAX)
		return fail(r, FP_ELIMIT, key_at, "object key of %zu bytes is too long", slen);
	key = str;
	key_len = (uint32_t)slen;
	p = skip_ws(r, p);
	if (!p)
		return FP_ENOMEM;
	if (p >= r->end || *p != ':')
		return fail_expected(r, p, "':' after object key");
	p++;
	goto value;

close:
	rc = close_frame(r, p - 1);
	if (rc)
		return rc;
	goto after_value;

done:
	p = skip_ws(r, p);
	if (!p)
		return FP_ENOMEM;
	if (p < r->end)
		return fail_expected(r, p, "end of input after the top-level value");
	return FP_OK;
}

int fp_json_parse(const char *text, size_t len, const struct fp_json_limits *lim,
		  struct fp_json_doc **out, struct fp_diag *diag)
{
	struct reader r;
	size_t max_bytes = (size_t)4 << 30;
	const unsigned char *p;
	int rc;

	if (!out || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_json_parse: NULL argument");
	if (!text)
		text = "";
	memset(&r, 0, sizeof(r));
	r.s = (const unsigned char *)text;
	r.end = r.s + len;
	r.diag = diag;
	r.max_depth = FP_JSON_DEFAULT_MAX_DEPTH;
	r.max_values = SIZE_MAX;
	if (lim) {
		if (lim->max_bytes)
			max_bytes = lim->max_bytes;
		if (lim->max_depth)
			r.max_depth = lim->max_depth;
		if (lim->max_values)
			r.max_values = lim->max_values;
	}
	if (len > max_bytes)
		return fail(&r, FP_ELIMIT, r.s + max_bytes,
			    "input of %zu bytes is over the limit of %zu bytes", len, max_bytes);
	r.doc = doc_new(len);
	if (!r.doc)
		return fail_nomem(&r, r.s);
	p = r.s;
	/* RFC 8259 section 8.1: a parser may ignore a leading byte order mark. */
	if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
		p += 3;
	rc = parse(&r, p);
	if (rc)
		goto fail_parse;
	r.doc->root = r.vs[0];
	fp_free(r.tmp);
	fp_free(r.vs);
	fp_free(r.fs);
	*out = r.doc;
	return FP_OK;

fail_parse:
	fp_free(r.tmp);
	fp_free(r.vs);
	fp_free(r.fs);
	fp_json_doc_free(r.doc);
	return rc;
}

int fp_json_parse_file(const char *path, const struct fp_json_limits *lim, struct fp_json_doc **out,
		       struct fp_diag *diag)
{
	struct fp_strbuf sb;
	char msg[sizeof(diag->msg)];
	size_t used, n;
	int rc;

	if (!path || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_json_parse_file: NULL argument");
	fp_strbuf_init(&sb, lim && lim->max_bytes ? lim->max_bytes : (size_t)4 << 30);
	rc = fp_strbuf_read_file(&sb, path, diag);
	if (rc)
		goto fail_read;
	rc = fp_json_parse(sb.buf, sb.len, lim, out, diag);
	if (rc && diag) {
		/* prefix the message with the place; it may be cut to fit, the fields stay exact */
		memcpy(msg, diag->msg, sizeof(msg));
		if (diag->line)
			snprintf(diag->msg, sizeof(diag->msg), "%s:%" PRIu32 ":%" PRIu32 ": ", path,
				 diag->line, diag->col);
		else
			snprintf(diag->msg, sizeof(diag->msg), "%s: ", path);
		used = strlen(diag->msg);
		n = FP_MIN(strlen(msg), sizeof(diag->msg) - 1 - used);
		memcpy(diag->msg + used, msg, n);
		diag->msg[used + n] = '\0';
	}
fail_read:
	fp_strbuf_release(&sb);
	return rc;
}

/* ---- accessors ----------------------------------------------------------------------------- */

const struct fp_json_value *fp_json_root(const struct fp_json_doc *doc)
{
	return doc ? &doc->root : NULL;
}

enum fp_json_type fp_json_type(const struct fp_json_value *v)
{
	return v ? (enum fp_json_type)V_TYPE(v) : FP_JSON_NULL;
}

uint64_t fp_json_offset(const struct fp_json_value *v)
{
	return v ? V_OFFSET(v) : 0;
}

int fp_json_position(const struct fp_json_doc *doc, uint64_t offset, uint32_t *line, uint32_t *col)
{
	size_t lo = 0, hi, mid;
	uint64_t start, l, c;

	if (!doc || offset > doc->text_len)
		return FP_EINVAL;
	/* lo = number of line ends before offset */
	hi = doc->nl_len;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (doc->nl[mid] < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	start = lo ? doc->nl[lo - 1] + 1 : 0;
	l = (uint64_t)lo + 1;
	c = offset - start + 1;
	if (line)
		*line = l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
	if (col)
		*col = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	return FP_OK;
}

size_t fp_json_len(const struct fp_json_value *v)
{
	if (!v || (V_TYPE(v) != FP_JSON_ARRAY && V_TYPE(v) != FP_JSON_OBJECT))
		return 0;
	return v->n;
}

const struct fp_json_value *fp_json_at(const struct fp_json_value *arr, size_t i)
{
	if (!arr || V_TYPE(arr) != FP_JSON_ARRAY || i >= arr->n)
		return NULL;
	return &arr->u.kids[i];
}

const struct fp_json_value *fp_json_member(const struct fp_json_value *obj, size_t i,
					   const char **key, size_t *key_len)
{
	const struct fp_json_value *m;

	if (!obj || V_TYPE(obj) != FP_JSON_OBJECT || i >= obj->n)
		return NULL;
	m = &obj->u.kids[i];
	if (key)
		*key = m->key;
	if (key_len)
		*key_len = m->key_len;
	return m;
}

const struct fp_json_value *fp_json_get_n(const struct fp_json_value *obj, const char *key,
					  size_t n)
{
	const struct fp_json_value *kids, *m;
	const uint32_t *idx;
	size_t i, lo, hi, mid;

	if (!obj || V_TYPE(obj) != FP_JSON_OBJECT || !key)
		return NULL;
	kids = obj->u.kids;
	if (V_FLAGS(obj) & VF_INDEXED) {
		/* the last member whose key is <= the one sought; equal keys sort in input order */
		idx = (const uint32_t *)(const void *)(kids + obj->n);
		lo = 0;
		hi = obj->n;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (key_cmp(&kids[idx[mid]], key, n) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && key_cmp(&kids[idx[lo - 1]], key, n) == 0)
			return &kids[idx[lo - 1]];
		return NULL;
	}
	/* backwards, so that the last of duplicate keys wins */
	for (i = obj->n; i-- > 0;) {
		m = &kids[i];
		if (m->key_len == n && memcmp(m->key, key, n) == 0)
			return m;
	}
	return NULL;
}

const struct fp_json_value *fp_json_get(const struct fp_json_value *obj, const char *key)
{
	return key ? fp_json_get_n(obj, key, strlen(key)) : NULL;
}

const char *fp_json_string(const struct fp_json_value *v, size_t *len)
{
	if (!v || V_TYPE(v) != FP_JSON_STRING)
		return NULL;
	if (len)
		*len = v->n;
	return v->u.s;
}

bool fp_json_number(const struct fp_json_value *v, double *out)
{
	locale_t c;

	if (!v || V_TYPE(v) != FP_JSON_NUMBER)
		return false;
	if (V_FLAGS(v) & VF_INT) {
		*out = (double)v->u.i;
	} else {
		c = fp__json_c_locale();
		*out = c ? strtod_l(v->u.s, NULL, c) : strtod(v->u.s, NULL);
	}
	return true;
}

/*
 * Exact integer value of a (validated) number literal: *neg and the magnitude. false when the
 * value has a fractional part or its magnitude exceeds UINT64_MAX.
 */
static bool literal_integer(const char *s, bool *neg, uint64_t *mag)
{
	char digits[FP_JSON_MAX_NUMBER_LEN];
	size_t nd = 0, frac = 0, first, last;
	int64_t e = 0, scale;
	bool eneg = false, in_frac = false;
	uint64_t acc = 0;
	int ed = 0;

	*neg = *s == '-';
	if (*neg)
		s++;
	for (; *s && *s != 'e' && *s != 'E'; s++) {
		if (*s == '.') {
			in_frac = true;
			continue;
		}
		digits[nd++] = *s;
		frac += in_frac;
	}
	if (*s) {
		s++;
		if (*s == '+' || *s == '-')
			eneg = *s++ == '-';
		for (; *s; s++, ed++)
			if (ed < 9)
				e = e * 10 + (*s - '0');
		if (ed > 9)
			e = 1000000000;
		if (eneg)
			e = -e;
	}
	for (first = 0; first < nd && digits[first] == '0'; first++)
		;
	if (first == nd) {
		*mag = 0;
		return true;
	}
	for (last = nd; digits[last - 1] == '0'; last--)
		;
	/* value = digits[first..last) * 10^scale */
	scale = e - (int64_t)frac + (int64_t)(nd - last);
	if (scale < 0 || (int64_t)(last - first) + scale > 20)
		return false;
	for (size_t i = first; i < last; i++) {
		if (acc > (UINT64_MAX - 9) / 10 &&
		    (acc > UINT64_MAX / 10 || acc * 10 > UINT64_MAX - (uint64_t)(digits[i] - '0')))
			return false;
		acc = acc * 10 + (uint64_t)(digits[i] - '0');
	}
	for (; scale > 0; scale--) {
		if (acc > UINT64_MAX / 10)
			return false;
		acc *= 10;
	}
	*mag = acc;
	return true;
}

bool fp_json_int64(const struct fp_json_value *v, int64_t *out)
{
	uint64_t mag;
	bool neg;

	if (!v || V_TYPE(v) != FP_JSON_NUMBER)
		return false;
	if (V_FLAGS(v) & VF_INT) {
		*out = v->u.i;
		return true;
	}
	if (!literal_integer(v->u.s, &neg, &mag))
		return false;
	if (!neg && mag <= (uint64_t)INT64_MAX)
		*out = (int64_t)mag;
	else if (neg && mag <= (uint64_t)INT64_MAX)
		*out = -(int64_t)mag;
	else if (neg && mag == (uint64_t)INT64_MAX + 1)
		*out = INT64_MIN;
	else
		return false;
	return true;
}

bool fp_json_uint64(const struct fp_json_value *v, uint64_t *out)
{
	uint64_t mag;
	bool neg;

	if (!v || V_TYPE(v) != FP_JSON_NUMBER)
		return false;
	if (V_FLAGS(v) & VF_INT) {
		if (v->u.i < 0)
			return false;
		*out = (uint64_t)v->u.i;
		return true;
	}
	if (!literal_integer(v->u.s, &neg, &mag) || (neg && mag))
		return false;
	*out = mag;
	return true;
}

bool fp_json_bool(const struct fp_json_value *v, bool *out)
{
	if (!v || (V_TYPE(v) != FP_JSON_TRUE && V_TYPE(v) != FP_JSON_FALSE))
		return false;
	*out = V_TYPE(v) == FP_JSON_TRUE;
	return true;
}

const char *fp_json_number_text(const struct fp_json_value *v, char *buf, size_t size)
{
	if (!v || V_TYPE(v) != FP_JSON_NUMBER)
		return NULL;
	if (!(V_FLAGS(v) & VF_INT))
		return v->u.s;
	if (!buf || size < 24)
		return NULL;
	snprintf(buf, size, "%" PRId64, v->u.i);
	return buf;
}

int fp__json_error(struct fp_diag *diag, int status, const char *name,
		   const struct fp_json_doc *doc, const struct fp_json_value *v, const char *fmt,
		   ...)
{
	char msg[200];
	uint32_t line = 1, col = 1;
	uint64_t off = v ? fp_json_offset(v) : 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (doc && v)
		fp_json_position(doc, off, &line, &col);
	return fp_diag_set_pos(diag, status, off, line, col, "%s:%u:%u: %s", name, line, col, msg);
}
