/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the JSON writer: layout (compact and pretty), escaping of every byte and of
 * invalid UTF-8, shortest round-trip doubles, misuse detection, FILE output, caps, OOM, and
 * writer -> reader round trips of random documents.
 */
#define _GNU_SOURCE 1
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <flagprism/alloc.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "test.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* xorshift64*: deterministic random numbers for the tests */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* The writer output for a single string value. */
static void write_one_string(struct fp_strbuf *sb, const char *s, size_t n)
{
	struct fp_jsonw *w;

	fp_strbuf_reset(sb);
	w = fp_jsonw_new_strbuf(sb, 0);
	ASSERT_NOT_NULL(w);
	ASSERT_OK(fp_jsonw_string_n(w, s, n));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
}

TEST(jsonw_compact)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_OK(fp_jsonw_kv_string(w, "s", "x"));
	ASSERT_OK(fp_jsonw_kv_int(w, "i", -5));
	ASSERT_OK(fp_jsonw_kv_uint(w, "u", UINT64_MAX));
	ASSERT_OK(fp_jsonw_kv_double(w, "d", 0.5));
	ASSERT_OK(fp_jsonw_kv_bool(w, "t", true));
	ASSERT_OK(fp_jsonw_kv_bool(w, "f", false));
	ASSERT_OK(fp_jsonw_kv_null(w, "n"));
	ASSERT_OK(fp_jsonw_kv_string(w, "ns", NULL));
	ASSERT_OK(fp_jsonw_key(w, "a"));
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_OK(fp_jsonw_object_end(w));
	ASSERT_OK(fp_jsonw_raw(w, "{\"r\":1}", 7));
	ASSERT_OK(fp_jsonw_int(w, INT64_MIN));
	ASSERT_OK(fp_jsonw_int(w, INT64_MAX));
	ASSERT_OK(fp_jsonw_uint(w, 0));
	ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_key_n(w, "k\0z", 3));
	ASSERT_OK(fp_jsonw_string(w, ""));
	ASSERT_OK(fp_jsonw_object_end(w));
	ASSERT_OK(fp_jsonw_finish(w));
	ASSERT_OK(fp_jsonw_finish(w)); /* idempotent */
	fp_jsonw_free(w);
	ASSERT_STREQ(sb.buf, "{\"s\":\"x\",\"i\":-5,\"u\":18446744073709551615,\"d\":0.5,"
			     "\"t\":true,\"f\":false,\"n\":null,\"ns\":null,"
			     "\"a\":[[],{},{\"r\":1},-9223372036854775808,9223372036854775807,0],"
			     "\"k\\u0000z\":\"\"}");
	fp_strbuf_release(&sb);
}

TEST(jsonw_pretty)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, FP_JSONW_PRETTY);
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_OK(fp_jsonw_kv_int(w, "a", 1));
	ASSERT_OK(fp_jsonw_key(w, "b"));
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_OK(fp_jsonw_int(w, 2));
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_key(w, "c"));
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_OK(fp_jsonw_object_end(w));
	ASSERT_OK(fp_jsonw_object_end(w));
	ASSERT_OK(fp_jsonw_null(w));
	ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	ASSERT_STREQ(sb.buf, "[\n"
			     " {\n"
			     "  \"a\": 1,\n"
			     "  \"b\": [\n"
			     "   2,\n"
			     "   []\n"
			     "  ],\n"
			     "  \"c\": {}\n"
			     " },\n"
			     " null\n"
			     "]");
	fp_strbuf_release(&sb);
}

TEST(jsonw_pretty_deep_indent)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	struct fp_json_doc *doc;
	const char *p;
	int i;

	/* indentation deeper than the writer's run of spaces */
	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, FP_JSONW_PRETTY);
	for (i = 0; i < 200; i++)
		ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_OK(fp_jsonw_int(w, 7));
	for (i = 0; i < 200; i++)
		ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	p = strchr(sb.buf, '7');
	ASSERT_NOT_NULL(p);
	for (i = 1; i <= 200; i++)
		ASSERT_EQ(p[-i], ' ');
	ASSERT_EQ(p[-201], '\n');
	{
		struct fp_json_limits lim = {0, 1000, 0};

		ASSERT_OK(fp_json_parse(sb.buf, sb.len, &lim, &doc, NULL));
		fp_json_doc_free(doc);
	}
	fp_strbuf_release(&sb);
}

TEST(jsonw_escape_every_byte)
{
	struct fp_strbuf sb, expect;
	struct fp_json_doc *doc;
	const char *s;
	size_t n;
	char c;
	int b;

	fp_strbuf_init(&sb, 0);
	fp_strbuf_init(&expect, 0);
	for (b = 0; b < 256; b++) {
		c = (char)b;
		write_one_string(&sb, &c, 1);
		fp_strbuf_reset(&expect);
		ASSERT_OK(fp_strbuf_addch(&expect, '"'));
		switch (b) {
		case '"':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\\""));
			break;
		case '\\':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\\\"));
			break;
		case '\b':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\b"));
			break;
		case '\f':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\f"));
			break;
		case '\n':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\n"));
			break;
		case '\r':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\r"));
			break;
		case '\t':
			ASSERT_OK(fp_strbuf_addstr(&expect, "\\t"));
			break;
		default:
			if (b < 0x20)
				ASSERT_OK(fp_strbuf_addf(&expect, "\\u%04x", b));
			else if (b < 0x80)
				ASSERT_OK(fp_strbuf_addch(&expect, b));
			else
				ASSERT_OK(fp_strbuf_addstr(&expect, "\xEF\xBF\xBD"));
		}
		ASSERT_OK(fp_strbuf_addch(&expect, '"'));
		if (sb.len != expect.len || memcmp(sb.buf, expect.buf, sb.len) != 0)
			fpt_fail(__FILE__, __LINE__, "byte 0x%02x: got %s, want %s", b, sb.buf,
				 expect.buf);
		/* and the reader gives the byte back (or U+FFFD) */
		ASSERT_OK(fp_json_parse(sb.buf, sb.len, NULL, &doc, NULL));
		s = fp_json_string(fp_json_root(doc), &n);
		ASSERT_NOT_NULL(s);
		if (b < 0x80) {
			ASSERT_UEQ(n, 1);
			ASSERT_EQ((unsigned char)s[0], b);
		} else {
			ASSERT_UEQ(n, 3);
			ASSERT_MEMEQ(s, "\xEF\xBF\xBD", 3);
		}
		fp_json_doc_free(doc);
	}
	fp_strbuf_release(&sb);
	fp_strbuf_release(&expect);
}

TEST(jsonw_utf8_sequences)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out; /* inside the quotes */
	} cases[] = {
#define R "\xEF\xBF\xBD"
		{"\xC3\xA9", 2, "\xC3\xA9"},                 /* U+00E9 */
		{"\xE2\x82\xAC", 3, "\xE2\x82\xAC"},         /* U+20AC */
		{"\xF0\x9F\x98\x80", 4, "\xF0\x9F\x98\x80"}, /* U+1F600 */
		{"\xF4\x8F\xBF\xBF", 4, "\xF4\x8F\xBF\xBF"}, /* U+10FFFF */
		{"\xEF\xBF\xBF", 3, "\xEF\xBF\xBF"},         /* U+FFFF, a noncharacter, is valid */
		{"\xE2\x80\xA8", 3, "\\u2028"},
		{"\xE2\x80\xA9", 3, "\\u2029"},
		{"\xE2\x80\xAA", 3, "\xE2\x80\xAA"},
		{"\x7F", 1, "\x7F"},
		{"a\0b", 3, "a\\u0000b"},
		{"\xC0\x80", 2, R R},                /* overlong NUL */
		{"\xC1\xBF", 2, R R},                /* overlong */
		{"\xE0\x80\x80", 3, R R R},          /* overlong */
		{"\xE0\x9F\xBF", 3, R R R},          /* overlong */
		{"\xF0\x8F\xBF\xBF", 4, R R R R},    /* overlong */
		{"\xED\xA0\x80", 3, R R R},          /* U+D800 encoded */
		{"\xED\xBF\xBF", 3, R R R},          /* U+DFFF encoded */
		{"\xED\x9F\xBF", 3, "\xED\x9F\xBF"}, /* U+D7FF is fine */
		{"\xF4\x90\x80\x80", 4, R R R R},    /* U+110000 */
		{"\xF5\x80\x80\x80", 4, R R R R},
		{"\xF8\x88\x80\x80\x80", 5, R R R R R},
		{"\xFE\xFF", 2, R R},
		{"\x80", 1, R},          /* stray continuation */
		{"\xE2\x82", 2, R},      /* truncated at the end */
		{"\xE2\x82x", 3, R "x"}, /* truncated before ASCII */
		{"\xF0\x9F\x98", 3, R},
		{"\xF0\x9F\x98\xC3\xA9", 5, R "\xC3\xA9"},
		{"\xC3", 1, R},
		{"\xC3\xC3\xA9", 3, R "\xC3\xA9"},
		{"x\xFF\"y", 4, "x" R "\\\"y"},
#undef R
	};
	struct fp_strbuf sb;
	char want[128];
	size_t i;

	fp_strbuf_init(&sb, 0);
	for (i = 0; i < NELEM(cases); i++) {
		write_one_string(&sb, cases[i].in, cases[i].n);
		snprintf(want, sizeof(want), "\"%s\"", cases[i].out);
		if (strcmp(sb.buf, want) != 0)
			fpt_fail(__FILE__, __LINE__, "case %zu: got %s want %s", i, sb.buf, want);
	}
	fp_strbuf_release(&sb);
}

static void format_is(double v, const char *want)
{
	char buf[32];
	int n;

	n = fp_json_format_double(v, buf, sizeof(buf));
	if (n < 0 || strcmp(buf, want) != 0 || (size_t)n != strlen(want))
		fpt_fail(__FILE__, __LINE__, "%.17g: got '%s' (%d), want '%s'", v, n < 0 ? "" : buf,
			 n, want);
}

TEST(jsonw_double_format)
{
	char buf[32];

	format_is(0.0, "0.0");
	format_is(-0.0, "-0.0");
	format_is(3.0, "3.0");
	format_is(-42.0, "-42.0");
	format_is(0.1, "0.1");
	format_is(0.5, "0.5");
	format_is(1.0 / 3.0, "0.3333333333333333");
	format_is(2.0 / 3.0, "0.6666666666666666");
	format_is(0.3, "0.3");
	format_is(0.1 + 0.2, "0.30000000000000004");
	format_is(123456.789, "123456.789");
	format_is(1e15, "1e+15");
	format_is(999999999999999.0, "999999999999999.0");
	format_is(1e20, "1e+20");
	format_is(1e300, "1e+300");
	format_is(1.5e-7, "1.5e-07");
	format_is(DBL_MAX, "1.7976931348623157e+308");
	format_is(-DBL_MAX, "-1.7976931348623157e+308");
	format_is(DBL_MIN, "2.2250738585072014e-308");
	format_is(5e-324, "4.94065645841247e-324");
	format_is(9007199254740993.0, "9007199254740992.0"); /* 2^53 + 1 rounds to 2^53 */
	format_is(123456789012345678.0, "1.2345678901234568e+17");
	ASSERT_EQ(fp_json_format_double(NAN, buf, sizeof(buf)), FP_EINVAL);
	ASSERT_EQ(fp_json_format_double(INFINITY, buf, sizeof(buf)), FP_EINVAL);
	ASSERT_EQ(fp_json_format_double(1.0, buf, 8), FP_EINVAL);
	ASSERT_EQ(fp_json_format_double(1.0, NULL, 32), FP_EINVAL);
}

TEST(jsonw_nonfinite)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	unsigned flags;

	fp_strbuf_init(&sb, 0);
	for (flags = 0; flags <= FP_JSONW_NONFINITE_STR; flags += FP_JSONW_NONFINITE_STR) {
		fp_strbuf_reset(&sb);
		w = fp_jsonw_new_strbuf(&sb, flags);
		ASSERT_OK(fp_jsonw_array_begin(w));
		ASSERT_OK(fp_jsonw_double(w, NAN));
		ASSERT_OK(fp_jsonw_double(w, INFINITY));
		ASSERT_OK(fp_jsonw_double(w, -INFINITY));
		ASSERT_OK(fp_jsonw_double(w, 1.5));
		ASSERT_OK(fp_jsonw_array_end(w));
		ASSERT_OK(fp_jsonw_finish(w));
		fp_jsonw_free(w);
		if (flags)
			ASSERT_STREQ(sb.buf, "[\"NaN\",\"Infinity\",\"-Infinity\",1.5]");
		else
			ASSERT_STREQ(sb.buf, "[null,null,null,1.5]");
	}
	fp_strbuf_release(&sb);
}

/* Round trip of a double through the writer and the reader, bit for bit. */
static void double_roundtrip(struct fp_strbuf *sb, double v)
{
	struct fp_json_doc *doc;
	struct fp_jsonw *w;
	char g15[40], buf[32];
	double back;
	uint64_t a, b;
	int n;

	fp_strbuf_reset(sb);
	w = fp_jsonw_new_strbuf(sb, 0);
	ASSERT_OK(fp_jsonw_double(w, v));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	ASSERT_OK(fp_json_parse(sb->buf, sb->len, NULL, &doc, NULL));
	ASSERT(fp_json_number(fp_json_root(doc), &back));
	memcpy(&a, &v, 8);
	memcpy(&b, &back, 8);
	if (a != b)
		fpt_fail(__FILE__, __LINE__, "%.17g written as %s read back as %.17g", v, sb->buf,
			 back);
	fp_json_doc_free(doc);
	/* shortest: when %.15g already round-trips, that is what we must have written */
	snprintf(g15, sizeof(g15), "%.15g", v);
	if (strtod(g15, NULL) == v) {
		n = fp_json_format_double(v, buf, sizeof(buf));
		ASSERT_GT(n, 0);
		ASSERT_EQ(strncmp(buf, g15, strlen(g15)), 0);
	}
}

TEST(jsonw_double_roundtrip_random)
{
	struct fp_strbuf sb;
	uint64_t s = 0x9E3779B97F4A7C15ULL, bits;
	double v;
	int i, done = 0;

	fp_strbuf_init(&sb, 0);
	for (i = 0; done < 100000; i++) {
		bits = rng_next(&s);
		memcpy(&v, &bits, 8);
		if (!isfinite(v))
			continue;
		double_roundtrip(&sb, v);
		done++;
	}
	/* and "human" values: decimal fractions, integers, powers, boundaries */
	for (i = 0; i < 20000; i++) {
		double_roundtrip(&sb, (double)(int64_t)(rng_next(&s) % 2000001) / 1000.0 - 1000.0);
		double_roundtrip(&sb, (double)(int64_t)(rng_next(&s) >> (rng_next(&s) % 64)));
		double_roundtrip(&sb, ldexp(1.0, (int)(rng_next(&s) % 2098) - 1074));
	}
	double_roundtrip(&sb, 0.0);
	double_roundtrip(&sb, -0.0);
	double_roundtrip(&sb, DBL_MAX);
	double_roundtrip(&sb, DBL_MIN);
	double_roundtrip(&sb, DBL_TRUE_MIN);
	double_roundtrip(&sb, -DBL_TRUE_MIN);
	fp_strbuf_release(&sb);
}

TEST(jsonw_locale_independent)
{
	struct fp_strbuf sb;
	static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
					    "fr_FR.utf8", "ru_RU.UTF-8"};
	const char *got = NULL;
	size_t i;

	for (i = 0; i < NELEM(names) && !got; i++)
		got = setlocale(LC_NUMERIC, names[i]);
	if (!got) {
		printf("# no locale with a ',' decimal point installed; checked \"C\" only\n");
	}
	fp_strbuf_init(&sb, 0);
	{
		struct fp_json_doc *doc;
		struct fp_jsonw *w = fp_jsonw_new_strbuf(&sb, 0);
		double v;

		ASSERT_OK(fp_jsonw_array_begin(w));
		ASSERT_OK(fp_jsonw_double(w, 0.5));
		ASSERT_OK(fp_jsonw_double(w, 1.0 / 3.0));
		ASSERT_OK(fp_jsonw_array_end(w));
		ASSERT_OK(fp_jsonw_finish(w));
		fp_jsonw_free(w);
		ASSERT_STREQ(sb.buf, "[0.5,0.3333333333333333]");
		ASSERT_OK(fp_json_parse(sb.buf, sb.len, NULL, &doc, NULL));
		ASSERT(fp_json_number(fp_json_at(fp_json_root(doc), 0), &v));
		ASSERT_DEQ(v, 0.5);
		ASSERT(fp_json_number(fp_json_at(fp_json_root(doc), 1), &v));
		ASSERT_DEQ(v, 1.0 / 3.0);
		fp_json_doc_free(doc);
	}
	setlocale(LC_NUMERIC, "C");
	fp_strbuf_release(&sb);
}

TEST(jsonw_misuse)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;

	fp_strbuf_init(&sb, 0);

	/* a value where a key is expected; sticky afterwards */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_EQ(fp_jsonw_int(w, 1), FP_ESTATE);
	ASSERT_EQ(fp_jsonw_key(w, "a"), FP_ESTATE);
	ASSERT_EQ(fp_jsonw_object_end(w), FP_ESTATE);
	ASSERT_EQ(fp_jsonw_finish(w), FP_ESTATE);
	fp_jsonw_free(w);

	/* a key in an array, and a key at top level */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_EQ(fp_jsonw_key(w, "a"), FP_ESTATE);
	fp_jsonw_free(w);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_EQ(fp_jsonw_key(w, "a"), FP_ESTATE);
	fp_jsonw_free(w);

	/* two keys in a row */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_OK(fp_jsonw_key(w, "a"));
	ASSERT_EQ(fp_jsonw_key(w, "b"), FP_ESTATE);
	fp_jsonw_free(w);

	/* object end while a value is due */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_OK(fp_jsonw_key(w, "a"));
	ASSERT_EQ(fp_jsonw_object_end(w), FP_ESTATE);
	fp_jsonw_free(w);

	/* mismatched and unbalanced ends */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_EQ(fp_jsonw_object_end(w), FP_ESTATE);
	fp_jsonw_free(w);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_EQ(fp_jsonw_array_end(w), FP_ESTATE);
	fp_jsonw_free(w);

	/* unfinished nesting, nothing written, two top-level values */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_array_begin(w));
	ASSERT_EQ(fp_jsonw_finish(w), FP_ESTATE);
	fp_jsonw_free(w);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_EQ(fp_jsonw_finish(w), FP_ESTATE);
	fp_jsonw_free(w);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_int(w, 1));
	ASSERT_EQ(fp_jsonw_int(w, 2), FP_ESTATE);
	fp_jsonw_free(w);

	/* NULL key, NULL raw, calls after finish */
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_object_begin(w));
	ASSERT_EQ(fp_jsonw_key(w, NULL), FP_EINVAL);
	ASSERT_EQ(fp_jsonw_finish(w), FP_EINVAL);
	fp_jsonw_free(w);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_EQ(fp_jsonw_raw(w, NULL, 3), FP_EINVAL);
	fp_jsonw_free(w);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_null(w));
	ASSERT_OK(fp_jsonw_finish(w));
	ASSERT_EQ(fp_jsonw_null(w), FP_ESTATE);
	ASSERT_EQ(fp_jsonw_array_end(w), FP_ESTATE);
	fp_jsonw_free(w);

	/* NULL writer */
	ASSERT_EQ(fp_jsonw_int(NULL, 1), FP_EINVAL);
	ASSERT_EQ(fp_jsonw_finish(NULL), FP_EINVAL);
	ASSERT_EQ(fp_jsonw_object_begin(NULL), FP_EINVAL);
	ASSERT_EQ(fp_jsonw_key(NULL, "k"), FP_EINVAL);
	ASSERT_NULL(fp_jsonw_new_file(NULL, 0));
	ASSERT_NULL(fp_jsonw_new_strbuf(NULL, 0));
	fp_jsonw_free(NULL);
	fp_strbuf_release(&sb);
}

TEST(jsonw_depth_limit)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	int i;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	/* objects at even levels, arrays at odd ones */
	for (i = 0; i < FP_JSONW_MAX_DEPTH; i++) {
		if (i % 2 == 0) {
			ASSERT_OK(fp_jsonw_object_begin(w));
		} else {
			ASSERT_OK(fp_jsonw_key(w, "k"));
			ASSERT_OK(fp_jsonw_array_begin(w));
		}
	}
	/* 1024 open; in an array at the innermost level (i = 1023 is odd) */
	ASSERT_EQ(fp_jsonw_array_begin(w), FP_ELIMIT);
	ASSERT_EQ(fp_jsonw_null(w), FP_ELIMIT);
	ASSERT_EQ(fp_jsonw_finish(w), FP_ELIMIT);
	fp_jsonw_free(w);

	/* exactly the maximum closes cleanly and reads back with a matching limit */
	fp_strbuf_reset(&sb);
	w = fp_jsonw_new_strbuf(&sb, 0);
	for (i = 0; i < FP_JSONW_MAX_DEPTH; i++)
		ASSERT_OK(fp_jsonw_array_begin(w));
	for (i = 0; i < FP_JSONW_MAX_DEPTH; i++)
		ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	ASSERT_UEQ(sb.len, 2 * FP_JSONW_MAX_DEPTH);
	{
		struct fp_json_limits lim = {0, FP_JSONW_MAX_DEPTH, 0};
		struct fp_json_doc *doc;

		ASSERT_OK(fp_json_parse(sb.buf, sb.len, &lim, &doc, NULL));
		fp_json_doc_free(doc);
	}
	fp_strbuf_release(&sb);
}

TEST(jsonw_strbuf_cap)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	int i, r = 0;

	fp_strbuf_init(&sb, 100);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_jsonw_array_begin(w));
	for (i = 0; i < 100 && !r; i++)
		r = fp_jsonw_string(w, "0123456789");
	ASSERT_EQ(r, FP_ELIMIT);
	ASSERT_EQ(fp_jsonw_int(w, 1), FP_ELIMIT);
	ASSERT_EQ(fp_jsonw_finish(w), FP_ELIMIT);
	ASSERT(sb.len <= 100);
	fp_jsonw_free(w);
	fp_strbuf_release(&sb);
}

/* A document of about `n` bytes, the same to any writer. */
static int write_sample(struct fp_jsonw *w, int items)
{
	int i;

	fp_jsonw_object_begin(w);
	fp_jsonw_key(w, "items");
	fp_jsonw_array_begin(w);
	for (i = 0; i < items; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_int(w, "i", i);
		fp_jsonw_kv_string(w, "name", "some \"quoted\" name\n\xC3\xA9");
		fp_jsonw_kv_double(w, "x", i / 7.0);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "long");
	{
		static char big[100000];

		memset(big, 'b', sizeof(big) - 1);
		fp_jsonw_string(w, big); /* bigger than the FILE block */
	}
	fp_jsonw_object_end(w);
	return fp_jsonw_finish(w);
}

TEST(jsonw_file_output)
{
	struct fp_strbuf sb, back;
	struct fp_jsonw *w;
	unsigned flags;
	FILE *f;
	long sz;

	for (flags = 0; flags <= FP_JSONW_PRETTY; flags++) {
		fp_strbuf_init(&sb, 0);
		w = fp_jsonw_new_strbuf(&sb, flags);
		ASSERT_OK(write_sample(w, 5000));
		fp_jsonw_free(w);
		ASSERT(sb.len > 3 * 64 * 1024);

		f = tmpfile();
		ASSERT_NOT_NULL(f);
		w = fp_jsonw_new_file(f, flags);
		ASSERT_NOT_NULL(w);
		ASSERT_OK(write_sample(w, 5000));
		fp_jsonw_free(w);
		sz = ftell(f);
		ASSERT_EQ(sz, (long)sb.len);
		rewind(f);
		fp_strbuf_init(&back, 0);
		ASSERT_OK(fp_strbuf_grow(&back, (size_t)sz));
		ASSERT_UEQ(fread(back.buf, 1, (size_t)sz, f), (size_t)sz);
		ASSERT_MEMEQ(back.buf, sb.buf, sb.len);
		fclose(f);
		fp_strbuf_release(&back);
		fp_strbuf_release(&sb);
	}
}

TEST(jsonw_file_error)
{
	struct fp_jsonw *w;
	FILE *f;

	f = fopen("/dev/full", "w");
	if (!f) {
		printf("# /dev/full not available\n");
		return;
	}
	w = fp_jsonw_new_file(f, 0);
	ASSERT_EQ(write_sample(w, 10), FP_EIO);
	fp_jsonw_free(w);
	fclose(f);
}

TEST(jsonw_oom)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	long fail_at;
	int r;

	for (fail_at = 0;; fail_at++) {
		fpt_oom_install(fail_at);
		fp_strbuf_init(&sb, 0);
		w = fp_jsonw_new_strbuf(&sb, FP_JSONW_PRETTY);
		if (!w) {
			r = FP_ENOMEM;
		} else {
			r = write_sample(w, 300);
			fp_jsonw_free(w);
		}
		if (r)
			ASSERT_EQ(r, FP_ENOMEM);
		fp_strbuf_release(&sb);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (!r)
			break;
		ASSERT(fail_at < 200);
	}
	ASSERT(fail_at > 3);

	/* FILE writers allocate their block up front */
	fpt_oom_install(1);
	ASSERT_NULL(fp_jsonw_new_file(stdout, 0));
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
}

/* ---- random documents: write with one PRNG stream, check the parse with the same stream ---- */

/* A random string of valid UTF-8 with quotes, backslashes, controls and NULs mixed in. */
static size_t random_string(uint64_t *s, char *buf, size_t cap)
{
	static const char *const pieces[] = {
		"a",
		"Z",
		" ",
		"\"",
		"\\",
		"/",
		"\n",
		"\t",
		"\x01",
		"\x1f",
		"\x7f",
		"\xC3\xA9",
		"\xE2\x82\xAC",
		"\xF0\x9F\x98\x80",
		"\xE2\x80\xA8",
		"\xEF\xBF\xBD",
		"frame",
		"metrics",
		"time (ns)",
	};
	size_t len = 0, n = rng_next(s) % 12, k, pl;

	for (k = 0; k < n; k++) {
		if (rng_next(s) % 10 == 0) {
			if (len + 1 > cap)
				break;
			buf[len++] = '\0';
			continue;
		}
		const char *p = pieces[rng_next(s) % NELEM(pieces)];

		pl = strlen(p);
		if (len + pl > cap)
			break;
		memcpy(buf + len, p, pl);
		len += pl;
	}
	return len;
}

enum {
	G_NULL,
	G_TRUE,
	G_FALSE,
	G_INT,
	G_DOUBLE,
	G_STRING,
	G_ARRAY,
	G_OBJECT,
	G_KINDS
};

static void gen_write(struct fp_jsonw *w, uint64_t *s, int depth)
{
	char buf[128];
	size_t n, i, len;
	int kind = (int)(rng_next(s) % (depth > 6 ? G_ARRAY : G_KINDS));
	uint64_t bits;
	double d;

	switch (kind) {
	case G_NULL:
		ASSERT_OK(fp_jsonw_null(w));
		break;
	case G_TRUE:
		ASSERT_OK(fp_jsonw_bool(w, true));
		break;
	case G_FALSE:
		ASSERT_OK(fp_jsonw_bool(w, false));
		break;
	case G_INT:
		ASSERT_OK(fp_jsonw_int(w, (int64_t)rng_next(s) >> (rng_next(s) % 64)));
		break;
	case G_DOUBLE:
		do {
			bits = rng_next(s);
			memcpy(&d, &bits, 8);
		} while (!isfinite(d));
		ASSERT_OK(fp_jsonw_double(w, d));
		break;
	case G_STRING:
		len = random_string(s, buf, sizeof(buf));
		ASSERT_OK(fp_jsonw_string_n(w, buf, len));
		break;
	case G_ARRAY:
		n = rng_next(s) % 6;
		ASSERT_OK(fp_jsonw_array_begin(w));
		for (i = 0; i < n; i++)
			gen_write(w, s, depth + 1);
		ASSERT_OK(fp_jsonw_array_end(w));
		break;
	default:
		n = rng_next(s) % (rng_next(s) % 8 == 0 ? 40 : 6); /* some indexed objects */
		ASSERT_OK(fp_jsonw_object_begin(w));
		for (i = 0; i < n; i++) {
			len = random_string(s, buf, sizeof(buf) - 24);
			/* unique keys: append the member number */
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "#%zu", i);
			ASSERT_OK(fp_jsonw_key_n(w, buf, len));
			gen_write(w, s, depth + 1);
		}
		ASSERT_OK(fp_jsonw_object_end(w));
		break;
	}
}

static void gen_check(const struct fp_json_value *v, uint64_t *s, int depth)
{
	char buf[128];
	size_t n, i, len, got_len;
	int kind = (int)(rng_next(s) % (depth > 6 ? G_ARRAY : G_KINDS));
	const char *str, *key;
	uint64_t bits, gbits;
	int64_t iv, want;
	double d, gd;
	bool b;

	switch (kind) {
	case G_NULL:
		ASSERT_EQ(fp_json_type(v), FP_JSON_NULL);
		break;
	case G_TRUE:
	case G_FALSE:
		ASSERT(fp_json_bool(v, &b));
		ASSERT_EQ(b, kind == G_TRUE);
		break;
	case G_INT:
		want = (int64_t)rng_next(s) >> (rng_next(s) % 64);
		ASSERT(fp_json_int64(v, &iv));
		ASSERT_EQ(iv, want);
		break;
	case G_DOUBLE:
		do {
			bits = rng_next(s);
			memcpy(&d, &bits, 8);
		} while (!isfinite(d));
		ASSERT(fp_json_number(v, &gd));
		memcpy(&gbits, &gd, 8);
		ASSERT_UEQ(gbits, bits);
		break;
	case G_STRING:
		len = random_string(s, buf, sizeof(buf));
		str = fp_json_string(v, &got_len);
		ASSERT_NOT_NULL(str);
		ASSERT_UEQ(got_len, len);
		ASSERT_MEMEQ(str, buf, len);
		ASSERT_EQ(str[len], '\0');
		break;
	case G_ARRAY:
		n = rng_next(s) % 6;
		ASSERT_EQ(fp_json_type(v), FP_JSON_ARRAY);
		ASSERT_UEQ(fp_json_len(v), n);
		for (i = 0; i < n; i++)
			gen_check(fp_json_at(v, i), s, depth + 1);
		break;
	default:
		n = rng_next(s) % (rng_next(s) % 8 == 0 ? 40 : 6);
		ASSERT_EQ(fp_json_type(v), FP_JSON_OBJECT);
		ASSERT_UEQ(fp_json_len(v), n);
		for (i = 0; i < n; i++) {
			const struct fp_json_value *m;

			len = random_string(s, buf, sizeof(buf) - 24);
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "#%zu", i);
			m = fp_json_member(v, i, &key, &got_len);
			ASSERT_NOT_NULL(m);
			ASSERT_UEQ(got_len, len);
			ASSERT_MEMEQ(key, buf, len);
			ASSERT(fp_json_get_n(v, buf, len) == m);
			gen_check(m, s, depth + 1);
		}
		break;
	}
}

TEST(jsonw_roundtrip_random)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	struct fp_jsonw *w;
	struct fp_diag d;
	uint64_t seed, s;
	int round;

	fp_strbuf_init(&sb, 0);
	for (round = 0; round < 600; round++) {
		seed = 0x1234567ULL + (uint64_t)round * 0x9E3779B97F4A7C15ULL;
		fp_strbuf_reset(&sb);
		w = fp_jsonw_new_strbuf(&sb, round % 2 ? FP_JSONW_PRETTY : 0);
		s = seed;
		gen_write(w, &s, 0);
		ASSERT_OK(fp_jsonw_finish(w));
		fp_jsonw_free(w);
		if (fp_json_parse(sb.buf, sb.len, NULL, &doc, &d) != 0)
			fpt_fail(__FILE__, __LINE__, "round %d: %s at %u:%u in %s", round, d.msg,
				 d.line, d.col, sb.buf);
		s = seed;
		gen_check(fp_json_root(doc), &s, 0);
		fp_json_doc_free(doc);
	}
	fp_strbuf_release(&sb);
}
