/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the strict JSON reader: accessors, numbers, strings and escapes, a table of
 * malformed inputs with their exact error positions, every truncation of a valid document,
 * deep nesting, invalid UTF-8 and control characters, limits, the object index, positions,
 * files and an out-of-memory sweep.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "test.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct fp_json_doc *parse_ok(const char *text, size_t len)
{
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;

	fp_diag_clear(&d);
	if (fp_json_parse(text, len, NULL, &doc, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "parse of '%.60s' failed at %" PRIu64 " (%u:%u): %s",
			 text, d.offset, d.line, d.col, d.msg);
	ASSERT_NOT_NULL(doc);
	return doc;
}

/* Line and column of `off` in `text`, computed the slow way. */
static void ref_position(const char *text, size_t off, uint32_t *line, uint32_t *col)
{
	size_t i, start = 0;

	*line = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			start = i + 1;
		}
	}
	*col = (uint32_t)(off - start + 1);
}

TEST(json_read_basic)
{
	static const char text[] =
		"{\"a\": 1, \"b\": [true, false, null, \"s\", -2.5], \"c\": {}, \"d\": [],\n"
		" \"e\": {\"x\": {\"y\": \"deep\"}}, \"a\": 2}";
	struct fp_json_doc *doc = parse_ok(text, sizeof(text) - 1);
	const struct fp_json_value *root = fp_json_root(doc), *b, *v;
	const char *key, *s;
	size_t klen, slen;
	int64_t i;
	double d;
	bool bo;

	ASSERT_EQ(fp_json_type(root), FP_JSON_OBJECT);
	ASSERT_UEQ(fp_json_len(root), 6);
	ASSERT_UEQ(fp_json_offset(root), 0);
	/* duplicates: kept in order, get returns the last */
	v = fp_json_member(root, 0, &key, &klen);
	ASSERT_STREQ(key, "a");
	ASSERT_UEQ(klen, 1);
	ASSERT(fp_json_int64(v, &i));
	ASSERT_EQ(i, 1);
	ASSERT(fp_json_int64(fp_json_get(root, "a"), &i));
	ASSERT_EQ(i, 2);
	ASSERT_NULL(fp_json_member(root, 6, &key, &klen));
	ASSERT_NULL(fp_json_get(root, "zz"));
	ASSERT_NULL(fp_json_get(root, NULL));

	b = fp_json_get(root, "b");
	ASSERT_EQ(fp_json_type(b), FP_JSON_ARRAY);
	ASSERT_UEQ(fp_json_len(b), 5);
	ASSERT_UEQ(fp_json_offset(b), 14);
	ASSERT_EQ(fp_json_type(fp_json_at(b, 0)), FP_JSON_TRUE);
	ASSERT_EQ(fp_json_type(fp_json_at(b, 1)), FP_JSON_FALSE);
	ASSERT_EQ(fp_json_type(fp_json_at(b, 2)), FP_JSON_NULL);
	ASSERT(fp_json_bool(fp_json_at(b, 0), &bo) && bo);
	ASSERT(fp_json_bool(fp_json_at(b, 1), &bo) && !bo);
	ASSERT(!fp_json_bool(fp_json_at(b, 2), &bo));
	s = fp_json_string(fp_json_at(b, 3), &slen);
	ASSERT_STREQ(s, "s");
	ASSERT_UEQ(slen, 1);
	ASSERT_UEQ(fp_json_offset(fp_json_at(b, 3)), 34);
	ASSERT(fp_json_number(fp_json_at(b, 4), &d));
	ASSERT_DEQ(d, -2.5);
	ASSERT(!fp_json_int64(fp_json_at(b, 4), &i));
	ASSERT_NULL(fp_json_at(b, 5));
	ASSERT_NULL(fp_json_at(root, 0));              /* not an array */
	ASSERT_NULL(fp_json_member(b, 0, NULL, NULL)); /* not an object */

	ASSERT_UEQ(fp_json_len(fp_json_get(root, "c")), 0);
	ASSERT_EQ(fp_json_type(fp_json_get(root, "c")), FP_JSON_OBJECT);
	ASSERT_UEQ(fp_json_len(fp_json_get(root, "d")), 0);
	ASSERT_NULL(fp_json_at(fp_json_get(root, "d"), 0));
	s = fp_json_string(fp_json_get(fp_json_get(fp_json_get(root, "e"), "x"), "y"), NULL);
	ASSERT_STREQ(s, "deep");
	/* chaining through missing members is safe */
	ASSERT_NULL(fp_json_get(fp_json_get(root, "nope"), "x"));
	ASSERT_EQ(fp_json_type(NULL), FP_JSON_NULL);
	ASSERT_UEQ(fp_json_len(NULL), 0);
	ASSERT_NULL(fp_json_string(NULL, NULL));
	ASSERT(!fp_json_number(NULL, &d));
	ASSERT(!fp_json_number(b, &d));
	ASSERT_NULL(fp_json_string(b, NULL));
	ASSERT_NULL(fp_json_root(NULL));
	fp_json_doc_free(doc);
	fp_json_doc_free(NULL);
}

TEST(json_read_scalars_top_level)
{
	static const char *const ok[] = {"0",    "-1",  "\"\"",       "true",  "false",
					 "null", " 1 ", "\t\r\n[]\n", "1.5e3", "\"x\""};
	struct fp_json_doc *doc;
	size_t i;

	for (i = 0; i < NELEM(ok); i++) {
		doc = parse_ok(ok[i], strlen(ok[i]));
		fp_json_doc_free(doc);
	}
}

struct num_case {
	const char *text;
	double d;
	bool is_i64;
	int64_t i64;
	bool is_u64;
	uint64_t u64;
};

TEST(json_read_numbers)
{
	static const struct num_case cases[] = {
		{"0", 0.0, true, 0, true, 0},
		{"-0", -0.0, true, 0, true, 0},
		{"7", 7.0, true, 7, true, 7},
		{"-7", -7.0, true, -7, false, 0},
		{"1.5", 1.5, false, 0, false, 0},
		{"0.5", 0.5, false, 0, false, 0},
		{"-0.0", -0.0, true, 0, true, 0},
		{"3.0", 3.0, true, 3, true, 3},
		{"1e3", 1000.0, true, 1000, true, 1000},
		{"1E+3", 1000.0, true, 1000, true, 1000},
		{"2.50e1", 25.0, true, 25, true, 25},
		{"100e-2", 1.0, true, 1, true, 1},
		{"150e-2", 1.5, false, 0, false, 0},
		{"0.000e5", 0.0, true, 0, true, 0},
		{"0e-999999999999", 0.0, true, 0, true, 0},
		{"1E-2", 0.01, false, 0, false, 0},
		{"123456789012345678", 123456789012345678.0, true, 123456789012345678LL, true,
		 123456789012345678ULL},
		{"1234567890123456789", 1234567890123456789.0, true, 1234567890123456789LL, true,
		 1234567890123456789ULL},
		{"9223372036854775807", 9223372036854775807.0, true, INT64_MAX, true,
		 (uint64_t)INT64_MAX},
		{"9223372036854775808", 9223372036854775808.0, false, 0, true,
		 9223372036854775808ULL},
		{"-9223372036854775808", -9223372036854775808.0, true, INT64_MIN, false, 0},
		{"-9223372036854775809", -9223372036854775809.0, false, 0, false, 0},
		{"18446744073709551615", 18446744073709551615.0, false, 0, true, UINT64_MAX},
		{"18446744073709551616", 18446744073709551616.0, false, 0, false, 0},
		{"1e19", 1e19, false, 0, true, 10000000000000000000ULL},
		{"1e20", 1e20, false, 0, false, 0},
		{"0.1e1", 1.0, true, 1, true, 1},
		{"12.340e2", 1234.0, true, 1234, true, 1234},
		{"1.7976931348623157e308", 1.7976931348623157e308, false, 0, false, 0},
		{"-1.7976931348623157e308", -1.7976931348623157e308, false, 0, false, 0},
		{"1e-400", 0.0, false, 0, false, 0},
		{"4.9406564584124654e-324", 4.9406564584124654e-324, false, 0, false, 0},
		{"0.1", 0.1, false, 0, false, 0},
		{"1e308", 1e308, false, 0, false, 0},
		{"0.00000000000000000000000000001e330", 1e301, false, 0, false, 0},
	};
	struct fp_json_doc *doc;
	const struct fp_json_value *v;
	char buf[32];
	uint64_t u, a, b;
	int64_t i;
	double d;
	size_t k;

	for (k = 0; k < NELEM(cases); k++) {
		const struct num_case *c = &cases[k];

		doc = parse_ok(c->text, strlen(c->text));
		v = fp_json_root(doc);
		ASSERT_EQ(fp_json_type(v), FP_JSON_NUMBER);
		ASSERT(fp_json_number(v, &d));
		memcpy(&a, &d, 8);
		memcpy(&b, &c->d, 8);
		if (a != b)
			fpt_fail(__FILE__, __LINE__, "%s: %.17g vs %.17g", c->text, d, c->d);
		if (fp_json_int64(v, &i) != c->is_i64 || (c->is_i64 && i != c->i64))
			fpt_fail(__FILE__, __LINE__, "%s: int64 wrong", c->text);
		if (fp_json_uint64(v, &u) != c->is_u64 || (c->is_u64 && u != c->u64))
			fpt_fail(__FILE__, __LINE__, "%s: uint64 wrong", c->text);
		ASSERT_STREQ(fp_json_number_text(v, buf, sizeof(buf)), c->text);
		ASSERT(!fp_json_bool(v, NULL));
		fp_json_doc_free(doc);
	}
	doc = parse_ok("\"1\"", 3);
	ASSERT(!fp_json_int64(fp_json_root(doc), &i));
	ASSERT(!fp_json_uint64(fp_json_root(doc), &u));
	ASSERT_NULL(fp_json_number_text(fp_json_root(doc), buf, sizeof(buf)));
	fp_json_doc_free(doc);
}

TEST(json_read_number_length_limit)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	struct fp_diag d;
	size_t i;

	/* exactly the limit: fine */
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "[0."));
	for (i = 2; i < FP_JSON_MAX_NUMBER_LEN; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, '0' + (int)(i % 10)));
	ASSERT_OK(fp_strbuf_addch(&sb, ']'));
	doc = parse_ok(sb.buf, sb.len);
	fp_json_doc_free(doc);
	/* one more digit: FP_ELIMIT at the number */
	sb.len--;
	ASSERT_OK(fp_strbuf_addstr(&sb, "1]"));
	ASSERT_EQ(fp_json_parse(sb.buf, sb.len, NULL, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 1);
	ASSERT_NOT_NULL(strstr(d.msg, "longer than the limit"));
	/* a huge number string */
	fp_strbuf_reset(&sb);
	ASSERT_OK(fp_strbuf_addstr(&sb, "{\"n\": -"));
	for (i = 0; i < 1000000; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, '9'));
	ASSERT_OK(fp_strbuf_addch(&sb, '}'));
	ASSERT_EQ(fp_json_parse(sb.buf, sb.len, NULL, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 6);
	ASSERT_EQ(d.line, 1);
	ASSERT_EQ(d.col, 7);
	fp_strbuf_release(&sb);
}

TEST(json_read_strings)
{
	static const struct {
		const char *json;
		const char *want;
		size_t want_len;
	} cases[] = {
		{"\"\"", "", 0},
		{"\"plain\"", "plain", 5},
		{"\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\" \\ / \b \f \n \r \t", 15},
		{"\"\\u0041\\u00e9\\u20AC\"", "A\xC3\xA9\xE2\x82\xAC", 6},
		{"\"\\u0000x\"", "\0x", 2},
		{"\"\\ud83d\\ude00\"", "\xF0\x9F\x98\x80", 4},
		{"\"\\uDBFF\\uDFFF\"", "\xF4\x8F\xBF\xBF", 4},
		{"\"\\uD800\\uDC00\"", "\xF0\x90\x80\x80", 4},
		{"\"\\uffff\\ufeff\"", "\xEF\xBF\xBF\xEF\xBB\xBF", 6},
		{"\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80",
		 9},
		{"\"\x7F\"", "\x7F", 1},
		{"\"a long string without escapes that crosses several 8-byte words\"",
		 "a long string without escapes that crosses several 8-byte words", 63},
		{"\"mixed \\n and \xC3\xA9 and \\u00e9 in one\"",
		 "mixed \n and \xC3\xA9 and \xC3\xA9 in one", 28},
	};
	struct fp_json_doc *doc;
	const char *s;
	size_t k, n;

	for (k = 0; k < NELEM(cases); k++) {
		doc = parse_ok(cases[k].json, strlen(cases[k].json));
		s = fp_json_string(fp_json_root(doc), &n);
		ASSERT_NOT_NULL(s);
		if (n != cases[k].want_len || memcmp(s, cases[k].want, n) != 0)
			fpt_fail(__FILE__, __LINE__, "case %zu: got %zu bytes '%s'", k, n, s);
		ASSERT_EQ(s[n], '\0');
		fp_json_doc_free(doc);
	}
}

struct bad_case {
	const char *text;
	size_t len; /* 0: strlen */
	int status;
	uint64_t offset;
	uint32_t line, col;
	const char *msg; /* substring */
};

static void check_bad(const struct bad_case *c, size_t idx)
{
	struct fp_json_doc *doc = (struct fp_json_doc *)(uintptr_t)1;
	size_t len = c->len ? c->len : strlen(c->text);
	struct fp_diag d;
	int r;

	fp_diag_clear(&d);
	r = fp_json_parse(c->text, len, NULL, &doc, &d);
	if (r != c->status || d.status != c->status || d.offset != c->offset || d.line != c->line ||
	    d.col != c->col || !strstr(d.msg, c->msg))
		fpt_fail(__FILE__, __LINE__,
			 "case %zu '%.40s': got %s at %" PRIu64 " (%u:%u) '%s'; want %s at %" PRIu64
			 " (%u:%u) '%s'",
			 idx, c->text, fp_status_name(r), d.offset, d.line, d.col, d.msg,
			 fp_status_name(c->status), c->offset, c->line, c->col, c->msg);
	/* the output is untouched on failure */
	ASSERT((uintptr_t)doc == 1);
}

TEST(json_read_bad_inputs)
{
	static const struct bad_case cases[] = {
		/* empty and blank */
		{"", 0, FP_EFORMAT, 0, 1, 1, "unexpected end of input; expected a JSON value"},
		{"   ", 0, FP_EFORMAT, 3, 1, 4, "expected a JSON value"},
		{"\n\n\t", 0, FP_EFORMAT, 3, 3, 2, "expected a JSON value"},
		/* trailing commas */
		{"[1,]", 0, FP_EFORMAT, 3, 1, 4, "trailing commas"},
		{"[1,\n ]", 0, FP_EFORMAT, 5, 2, 2, "trailing commas"},
		{"{\"a\":1,}", 0, FP_EFORMAT, 7, 1, 8, "trailing commas"},
		{"[,1]", 0, FP_EFORMAT, 1, 1, 2, "expected a JSON value, found ','"},
		{"[1,,2]", 0, FP_EFORMAT, 3, 1, 4, "expected a JSON value"},
		{"{,}", 0, FP_EFORMAT, 1, 1, 2, "expected '\"' to start an object key, or '}'"},
		/* separators */
		{"[1 2]", 0, FP_EFORMAT, 3, 1, 4,
		 "expected ',' or ']' after array element, found '2'"},
		{"{\"a\":1 \"b\":2}", 0, FP_EFORMAT, 7, 1, 8,
		 "expected ',' or '}' after object member, found '\"'"},
		{"{\"a\" 1}", 0, FP_EFORMAT, 5, 1, 6, "expected ':' after object key, found '1'"},
		{"{\"a\"}", 0, FP_EFORMAT, 4, 1, 5, "expected ':' after object key"},
		{"{\"a\":}", 0, FP_EFORMAT, 5, 1, 6, "expected a JSON value, found '}'"},
		{"{1:2}", 0, FP_EFORMAT, 1, 1, 2, "expected '\"' to start an object key"},
		{"{a:2}", 0, FP_EFORMAT, 1, 1, 2, "expected '\"' to start an object key"},
		{"[1}", 0, FP_EFORMAT, 2, 1, 3,
		 "expected ',' or ']' after array element, found '}'"},
		{"{\"a\":1]", 0, FP_EFORMAT, 6, 1, 7, "expected ',' or '}' after object member"},
		{"]", 0, FP_EFORMAT, 0, 1, 1, "expected a JSON value, found ']'"},
		/* comments, quotes, NaN and friends */
		{"// c\n1", 0, FP_EFORMAT, 0, 1, 1, "comments are not allowed"},
		{"[1 /* c */]", 0, FP_EFORMAT, 3, 1, 4, "comments are not allowed"},
		{"'a'", 0, FP_EFORMAT, 0, 1, 1, "double quotes"},
		{"NaN", 0, FP_EFORMAT, 0, 1, 1, "NaN and Infinity"},
		{"[Infinity]", 0, FP_EFORMAT, 1, 1, 2, "NaN and Infinity"},
		{"-Infinity", 0, FP_EFORMAT, 1, 1, 2, "expected a digit after '-'"},
		{"nan", 0, FP_EFORMAT, 1, 1, 2, "invalid literal; expected 'null'"},
		{"True", 0, FP_EFORMAT, 0, 1, 1, "expected a JSON value, found 'T'"},
		{"tru", 0, FP_EFORMAT, 3, 1, 4, "unexpected end of input in literal 'true'"},
		{"trUe", 0, FP_EFORMAT, 2, 1, 3, "invalid literal; expected 'true'"},
		{"nulll", 0, FP_EFORMAT, 4, 1, 5,
		 "expected end of input after the top-level value"},
		{"falsy", 0, FP_EFORMAT, 4, 1, 5, "expected 'false'"},
		/* numbers */
		{"01", 0, FP_EFORMAT, 1, 1, 2, "leading zeros"},
		{"[-01]", 0, FP_EFORMAT, 3, 1, 4, "leading zeros"},
		{"00", 0, FP_EFORMAT, 1, 1, 2, "leading zeros"},
		{"+1", 0, FP_EFORMAT, 0, 1, 1, "cannot start with '+'"},
		{".5", 0, FP_EFORMAT, 0, 1, 1, "must start with a digit"},
		{"1.", 0, FP_EFORMAT, 2, 1, 3,
		 "unexpected end of input; expected a digit after '.'"},
		{"1.e5", 0, FP_EFORMAT, 2, 1, 3, "expected a digit after '.' in number, found 'e'"},
		{"1e", 0, FP_EFORMAT, 2, 1, 3, "expected a digit in the exponent"},
		{"1e+", 0, FP_EFORMAT, 3, 1, 4, "expected a digit in the exponent"},
		{"1e+x", 0, FP_EFORMAT, 3, 1, 4, "expected a digit in the exponent"},
		{"-", 0, FP_EFORMAT, 1, 1, 2, "expected a digit after '-'"},
		{"- 1", 0, FP_EFORMAT, 1, 1, 2, "expected a digit after '-'"},
		{"--1", 0, FP_EFORMAT, 1, 1, 2, "expected a digit after '-'"},
		{"0x10", 0, FP_EFORMAT, 1, 1, 2, "expected end of input after the top-level value"},
		{"1e400", 0, FP_ELIMIT, 0, 1, 1, "out of the range of a double"},
		{"[0, -1.5e99999]", 0, FP_ELIMIT, 4, 1, 5, "out of the range"},
		{"[1e309]", 0, FP_ELIMIT, 1, 1, 2, "out of the range"},
		{"1000000000000000000000000000000000000000000000000000000000000000000000000000"
		 "0000000000000000000000000000000000000000000000000000000000000000000000000000"
		 "0000000000000000000000000000000000000000000000000000000000000000000000000000"
		 "0000000000000000000000000000000000000000000000000000000000000000000000000000"
		 "000000000000",
		 0, FP_ELIMIT, 0, 1, 1, "out of the range"},
		/* strings */
		{"\"abc", 0, FP_EFORMAT, 4, 1, 5,
		 "unexpected end of input in string starting at offset 0"},
		{"\"a\x01\"", 0, FP_EFORMAT, 2, 1, 3, "control character U+0001 in string"},
		{"\"a\nb\"", 0, FP_EFORMAT, 2, 1, 3, "control character U+000A in string"},
		{"\"a\tb\"", 0, FP_EFORMAT, 2, 1, 3, "control character U+0009"},
		{"\"\0\"", 3, FP_EFORMAT, 1, 1, 2, "control character U+0000"},
		{"\"\\x\"", 0, FP_EFORMAT, 1, 1, 2, "invalid escape '\\x'"},
		{"\"\\'\"", 0, FP_EFORMAT, 1, 1, 2, "invalid escape '\\''"},
		{"\"\\\x01\"", 0, FP_EFORMAT, 1, 1, 2, "invalid escape"},
		{"\"\\U0041\"", 0, FP_EFORMAT, 1, 1, 2, "invalid escape '\\U'"},
		{"\"\\u00g0\"", 0, FP_EFORMAT, 5, 1, 6, "expected 4 hex digits"},
		{"\"\\u12\"", 0, FP_EFORMAT, 5, 1, 6, "expected 4 hex digits"},
		{"\"\\ud800\"", 0, FP_EFORMAT, 1, 1, 2, "lone high surrogate \\uD800"},
		{"\"\\ud800x\"", 0, FP_EFORMAT, 1, 1, 2, "lone high surrogate"},
		{"\"\\ud800\\n\"", 0, FP_EFORMAT, 1, 1, 2, "lone high surrogate"},
		{"\"\\ud800\\ud800\"", 0, FP_EFORMAT, 1, 1, 2, "not by a low surrogate"},
		{"\"\\ud800\\u0041\"", 0, FP_EFORMAT, 1, 1, 2, "not by a low surrogate"},
		{"\"ab\\udc00\"", 0, FP_EFORMAT, 3, 1, 4, "lone low surrogate \\uDC00"},
		{"\"\\uDFFF\"", 0, FP_EFORMAT, 1, 1, 2, "lone low surrogate"},
		{"\"\\ud800\\uzzzz\"", 0, FP_EFORMAT, 9, 1, 10, "expected 4 hex digits"},
		/* invalid UTF-8 in strings */
		{"\"\xFF\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xFF in string"},
		{"\"ab\x80\"", 0, FP_EFORMAT, 3, 1, 4, "invalid UTF-8 byte 0x80"},
		{"\"\xC0\x80\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xC0"},
		{"\"\xE0\x80\x80\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xE0"},
		{"\"\xED\xA0\x80\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xED"},
		{"\"\xF4\x90\x80\x80\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xF4"},
		{"\"\xC3\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xC3"},
		{"\"\xE2\x82x\"", 0, FP_EFORMAT, 1, 1, 2, "invalid UTF-8 byte 0xE2"},
		{"\"\xE2\x82", 0, FP_EFORMAT, 3, 1, 4,
		 "unexpected end of input in a UTF-8 sequence"},
		{"[\"ok\",\n\"\xC3\xA9\xFE\"]", 0, FP_EFORMAT, 10, 2, 4, "invalid UTF-8 byte 0xFE"},
		/* outside strings */
		{"\xFF", 0, FP_EFORMAT, 0, 1, 1, "invalid UTF-8 byte 0xFF; expected a JSON value"},
		{"[1]\xC3\xA9", 0, FP_EFORMAT, 3, 1, 4, "found U+00E9"},
		{"[1]\xE9", 0, FP_EFORMAT, 3, 1, 4, "invalid UTF-8 byte 0xE9"},
		{"[\x01]", 0, FP_EFORMAT, 1, 1, 2, "found control character U+0001"},
		{"[1,\x0b 2]", 0, FP_EFORMAT, 3, 1, 4, "control character U+000B"},
		{"\x0c", 0, FP_EFORMAT, 0, 1, 1, "control character U+000C"},
		{"[1\x7f]", 0, FP_EFORMAT, 2, 1, 3, "control character U+007F"},
		{"[1]\0", 4, FP_EFORMAT, 3, 1, 4, "control character U+0000"},
		{"\xC2\xA0[1]", 0, FP_EFORMAT, 0, 1, 1, "found U+00A0"},
		/* byte order marks: one at the start is skipped, anything else is an error */
		{"\xEF\xBB\xBF\xEF\xBB\xBF[]", 0, FP_EFORMAT, 3, 1, 4, "found U+FEFF"},
		{"[]\xEF\xBB\xBF", 0, FP_EFORMAT, 2, 1, 3, "found U+FEFF"},
		{"\xEF\xBB", 0, FP_EFORMAT, 0, 1, 1, "invalid UTF-8 byte 0xEF"},
		{"\xEF\xBB\xBF", 0, FP_EFORMAT, 3, 1, 4, "unexpected end of input"},
		/* trailing garbage and multiple values */
		{"[1] x", 0, FP_EFORMAT, 4, 1, 5,
		 "expected end of input after the top-level value"},
		{"[1]]", 0, FP_EFORMAT, 3, 1, 4, "after the top-level value, found ']'"},
		{"{} {}", 0, FP_EFORMAT, 3, 1, 4, "after the top-level value"},
		{"1 2", 0, FP_EFORMAT, 2, 1, 3, "after the top-level value"},
		{"\"a\"\"b\"", 0, FP_EFORMAT, 3, 1, 4, "after the top-level value"},
		{"[1]\n\n  x", 0, FP_EFORMAT, 7, 3, 3, "found 'x'"},
		/* unclosed */
		{"[", 0, FP_EFORMAT, 1, 1, 2, "unexpected end of input; expected a JSON value"},
		{"[1", 0, FP_EFORMAT, 2, 1, 3,
		 "unexpected end of input; expected ',' or ']' after array element"},
		{"{", 0, FP_EFORMAT, 1, 1, 2, "expected '\"' to start an object key, or '}'"},
		{"{\"a\"", 0, FP_EFORMAT, 4, 1, 5, "expected ':' after object key"},
		{"{\"a\":1", 0, FP_EFORMAT, 6, 1, 7, "expected ',' or '}' after object member"},
		{"{\"a\":1,", 0, FP_EFORMAT, 7, 1, 8, "expected '\"' to start an object key"},
		{"[[[]]", 0, FP_EFORMAT, 5, 1, 6, "expected ',' or ']' after array element"},
	};
	size_t k;

	for (k = 0; k < NELEM(cases); k++)
		check_bad(&cases[k], k);
}

TEST(json_read_bom)
{
	struct fp_json_doc *doc;
	uint32_t line, col;

	doc = parse_ok("\xEF\xBB\xBF[1]", 6);
	ASSERT_UEQ(fp_json_offset(fp_json_root(doc)), 3);
	ASSERT_OK(fp_json_position(doc, 3, &line, &col));
	ASSERT_EQ(line, 1);
	ASSERT_EQ(col, 4);
	fp_json_doc_free(doc);
	doc = parse_ok("\xEF\xBB\xBF \"\xEF\xBB\xBF\"", 9); /* a BOM inside a string is text */
	ASSERT_STREQ(fp_json_string(fp_json_root(doc), NULL), "\xEF\xBB\xBF");
	fp_json_doc_free(doc);
}

/* A valid document exercising every construct; every strict prefix must be rejected. */
static const char truncation_doc[] =
	"{\n"
	" \"frame\": {\"name\": \"k\\u00e9rnel \\ud83d\\ude00 \\\"q\\\" \\\\ \\/\","
	" \"type\": \"function\"},\n"
	" \"metrics\": {\"time (ns)\": 183000, \"flops\": -1.5e+10, \"x\": 0.25E-3,"
	" \"z\": 0, \"n\": -0},\n"
	" \"utf8\": \"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\",\n"
	" \"lits\": [true, false, null, [], {}, [[]], {\"a\": {}}],\n"
	" \"children\": [\r\n  {\"frame\": {\"name\": \"c\"}, \"metrics\": {},"
	" \"children\": []}\t]\n"
	"}";

TEST(json_read_every_truncation)
{
	const size_t full = sizeof(truncation_doc) - 1;
	struct fp_json_doc *doc;
	struct fp_diag d;
	uint32_t line, col;
	size_t k;
	char *copy;
	int r;

	doc = parse_ok(truncation_doc, full);
	fp_json_doc_free(doc);
	for (k = 0; k < full; k++) {
		/* a private copy of exactly k bytes, so ASan catches any read past the end */
		copy = malloc(k ? k : 1);
		ASSERT_NOT_NULL(copy);
		memcpy(copy, truncation_doc, k);
		fp_diag_clear(&d);
		r = fp_json_parse(copy, k, NULL, &doc, &d);
		ref_position(truncation_doc, k, &line, &col);
		if (r != FP_EFORMAT || d.offset != k || d.line != line || d.col != col ||
		    !strstr(d.msg, "end of input"))
			fpt_fail(__FILE__, __LINE__,
				 "prefix %zu: %s at %" PRIu64
				 " (%u:%u) '%s'; want end of input at %zu "
				 "(%u:%u)",
				 k, fp_status_name(r), d.offset, d.line, d.col, d.msg, k, line,
				 col);
		free(copy);
	}
}

TEST(json_read_deep_nesting)
{
	struct fp_json_limits lim = {0, 0, 0};
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	const struct fp_json_value *v;
	struct fp_diag d;
	size_t i, depth;

	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 100000; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, '['));
	/* default limit 512: refused at the 513th bracket */
	ASSERT_EQ(fp_json_parse(sb.buf, sb.len, NULL, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 512);
	ASSERT_EQ(d.line, 1);
	ASSERT_EQ(d.col, 513);
	ASSERT_NOT_NULL(strstr(d.msg, "nesting deeper than 512"));
	/* a higher limit: the parser goes all the way down (no recursion) and hits the end */
	lim.max_depth = 200000;
	ASSERT_EQ(fp_json_parse(sb.buf, sb.len, &lim, &doc, &d), FP_EFORMAT);
	ASSERT_UEQ(d.offset, 100000);
	ASSERT_NOT_NULL(strstr(d.msg, "end of input"));
	/* closed, it parses; walk down */
	for (i = 0; i < 100000; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, ']'));
	ASSERT_OK(fp_json_parse(sb.buf, sb.len, &lim, &doc, &d));
	for (v = fp_json_root(doc), depth = 1; fp_json_len(v); v = fp_json_at(v, 0))
		depth++;
	ASSERT_UEQ(depth, 100000);
	fp_json_doc_free(doc);
	/* exactly at the limit */
	lim.max_depth = 100000;
	ASSERT_OK(fp_json_parse(sb.buf, sb.len, &lim, &doc, &d));
	fp_json_doc_free(doc);
	lim.max_depth = 99999;
	ASSERT_EQ(fp_json_parse(sb.buf, sb.len, &lim, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 99999);

	/* nested objects count the same way */
	fp_strbuf_reset(&sb);
	for (i = 0; i < 513; i++)
		ASSERT_OK(fp_strbuf_addstr(&sb, "{\"a\":"));
	ASSERT_EQ(fp_json_parse(sb.buf, sb.len, NULL, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 512 * 5);
	sb.len -= 5;
	ASSERT_OK(fp_strbuf_addch(&sb, '1'));
	for (i = 0; i < 512; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, '}'));
	ASSERT_OK(fp_json_parse(sb.buf, sb.len, NULL, &doc, &d));
	fp_json_doc_free(doc);
	fp_strbuf_release(&sb);
}

TEST(json_read_controls_everywhere)
{
	struct fp_json_doc *doc;
	struct fp_diag d;
	char text[8];
	int b;

	for (b = 0; b < 0x20; b++) {
		/* raw in a string: always an error at its offset */
		memcpy(text, "[\"a?\"]", 7);
		text[3] = (char)b;
		ASSERT_EQ(fp_json_parse(text, 6, NULL, &doc, &d), FP_EFORMAT);
		ASSERT_UEQ(d.offset, 3);
		ASSERT_NOT_NULL(strstr(d.msg, "in string"));
		/* outside: only tab, LF and CR are whitespace */
		memcpy(text, "[1,?2]", 7);
		text[3] = (char)b;
		if (b == '\t' || b == '\n' || b == '\r') {
			ASSERT_OK(fp_json_parse(text, 6, NULL, &doc, &d));
			fp_json_doc_free(doc);
		} else {
			ASSERT_EQ(fp_json_parse(text, 6, NULL, &doc, &d), FP_EFORMAT);
			ASSERT_UEQ(d.offset, 3);
		}
	}
}

TEST(json_read_every_high_byte)
{
	struct fp_json_doc *doc;
	struct fp_diag d;
	char text[8];
	int b;

	/* a lone byte >= 0x80 is never valid UTF-8, in or out of a string */
	for (b = 0x80; b < 0x100; b++) {
		memcpy(text, "[\"a?\"]", 7);
		text[3] = (char)b;
		ASSERT_EQ(fp_json_parse(text, 6, NULL, &doc, &d), FP_EFORMAT);
		ASSERT_UEQ(d.offset, 3);
		ASSERT_NOT_NULL(strstr(d.msg, "invalid UTF-8"));
		memcpy(text, "[1,?2]", 7);
		text[3] = (char)b;
		ASSERT_EQ(fp_json_parse(text, 6, NULL, &doc, &d), FP_EFORMAT);
		ASSERT_UEQ(d.offset, 3);
		ASSERT_NOT_NULL(strstr(d.msg, "invalid UTF-8"));
	}
}

TEST(json_read_limits)
{
	struct fp_json_limits lim = {0, 0, 0};
	struct fp_json_doc *doc;
	struct fp_diag d;
	static const char text[] = "[1, [2, 3], {\"a\": 4}]";
	const size_t len = sizeof(text) - 1;

	lim.max_bytes = len;
	ASSERT_OK(fp_json_parse(text, len, &lim, &doc, &d));
	fp_json_doc_free(doc);
	lim.max_bytes = len - 1;
	ASSERT_EQ(fp_json_parse(text, len, &lim, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, len - 1);
	ASSERT_NOT_NULL(strstr(d.msg, "over the limit"));

	/* 7 values: the outer array, 1, [2,3], 2, 3, {...}, 4 */
	lim.max_bytes = 0;
	lim.max_values = 7;
	ASSERT_OK(fp_json_parse(text, len, &lim, &doc, &d));
	fp_json_doc_free(doc);
	lim.max_values = 6;
	ASSERT_EQ(fp_json_parse(text, len, &lim, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 18); /* the 4 */
	ASSERT_NOT_NULL(strstr(d.msg, "more than 6 values"));
	lim.max_values = 5;
	ASSERT_EQ(fp_json_parse(text, len, &lim, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 12); /* the { */
	lim.max_values = 1;
	ASSERT_EQ(fp_json_parse(text, len, &lim, &doc, &d), FP_ELIMIT);
	ASSERT_UEQ(d.offset, 1);

	/* bad arguments */
	ASSERT_EQ(fp_json_parse(NULL, 3, NULL, &doc, &d), FP_EINVAL);
	ASSERT_EQ(fp_json_parse(text, len, NULL, NULL, &d), FP_EINVAL);
	ASSERT_EQ(fp_json_parse(NULL, 0, NULL, &doc, &d), FP_EFORMAT);
	ASSERT_EQ(fp_json_parse(text, len, NULL, &doc, NULL), FP_OK); /* diag is optional */
	fp_json_doc_free(doc);
	ASSERT_EQ(fp_json_parse("[", 1, NULL, &doc, NULL), FP_EFORMAT);
}

TEST(json_read_object_index)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	const struct fp_json_value *root, *v;
	char key[32];
	int64_t i64;
	int i, n;

	for (n = 0; n <= 2000; n = n ? n * 3 : 1) {
		fp_strbuf_init(&sb, 0);
		ASSERT_OK(fp_strbuf_addch(&sb, '{'));
		for (i = 0; i < n; i++)
			ASSERT_OK(fp_strbuf_addf(&sb, "%s\"key%d\": %d", i ? "," : "", i, i));
		/* duplicates of the first and a middle key: the last one wins */
		ASSERT_OK(fp_strbuf_addf(&sb, "%s\"key0\": -1, \"key%d\": -2, \"k\\u0000z\": 5}",
					 n ? "," : "", n / 2));
		doc = parse_ok(sb.buf, sb.len);
		root = fp_json_root(doc);
		ASSERT_UEQ(fp_json_len(root), (size_t)n + 3);
		for (i = 0; i < n; i++) {
			snprintf(key, sizeof(key), "key%d", i);
			v = fp_json_get(root, key);
			ASSERT_NOT_NULL(v);
			ASSERT(fp_json_int64(v, &i64));
			if (i == n / 2)
				ASSERT_EQ(i64, -2);
			else if (i == 0)
				ASSERT_EQ(i64, -1);
			else
				ASSERT_EQ(i64, i);
		}
		ASSERT_NULL(fp_json_get(root, "key"));
		ASSERT_NULL(fp_json_get(root, "key-1"));
		ASSERT_NULL(fp_json_get(root, "k"));
		ASSERT(fp_json_int64(fp_json_get_n(root, "k\0z", 3), &i64));
		ASSERT_EQ(i64, 5);
		ASSERT_NULL(fp_json_get_n(root, "k\0y", 3));
		fp_json_doc_free(doc);
		fp_strbuf_release(&sb);
	}
}

TEST(json_read_object_index_keys)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	const struct fp_json_value *root;
	char key[32];
	int64_t v;
	int i;

	/* many keys of one length and long shared prefixes, plus empty and NUL-holding keys,
	 * keys in reverse order, and several duplicates spread out */
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "{\"\": -1, \"\\u0000\": -2"));
	for (i = 50000; i > 0; i--)
		ASSERT_OK(fp_strbuf_addf(&sb, ", \"prefix-prefix-%08d\": %d", i, i));
	for (i = 1; i <= 50000; i += 10000)
		ASSERT_OK(fp_strbuf_addf(&sb, ", \"prefix-prefix-%08d\": %d", i, -i));
	ASSERT_OK(fp_strbuf_addstr(&sb, ", \"\": -3}"));
	doc = parse_ok(sb.buf, sb.len);
	root = fp_json_root(doc);
	for (i = 1; i <= 50000; i++) {
		snprintf(key, sizeof(key), "prefix-prefix-%08d", i);
		ASSERT(fp_json_int64(fp_json_get(root, key), &v));
		ASSERT_EQ(v, i % 10000 == 1 ? -i : i);
	}
	ASSERT(fp_json_int64(fp_json_get(root, ""), &v));
	ASSERT_EQ(v, -3);
	ASSERT(fp_json_int64(fp_json_get_n(root, "\0", 1), &v));
	ASSERT_EQ(v, -2);
	ASSERT_NULL(fp_json_get(root, "prefix-prefix-00000000"));
	ASSERT_NULL(fp_json_get(root, "prefix-prefix-00050001"));
	ASSERT_NULL(fp_json_get(root, "prefix-prefix-0000000"));
	ASSERT_NULL(fp_json_get(root, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"));
	ASSERT_NULL(fp_json_get(root, "a"));
	fp_json_doc_free(doc);
	fp_strbuf_release(&sb);
}

TEST(json_read_positions)
{
	static const char text[] =
		"{\n  \"a\": [1,\n    2],\r\n  \"b\": \"\xC3\xA9\",\n\n \"c\": null}";
	struct fp_json_doc *doc = parse_ok(text, sizeof(text) - 1);
	const struct fp_json_value *root = fp_json_root(doc), *a;
	uint32_t line, col, rl, rc;
	uint64_t off;

	a = fp_json_get(root, "a");
	off = fp_json_offset(fp_json_at(a, 1));
	ASSERT_EQ(text[off], '2');
	ASSERT_OK(fp_json_position(doc, off, &line, &col));
	ASSERT_EQ(line, 3);
	ASSERT_EQ(col, 5);
	/* every offset agrees with the slow reference */
	for (off = 0; off <= sizeof(text) - 1; off++) {
		ASSERT_OK(fp_json_position(doc, off, &line, &col));
		ref_position(text, (size_t)off, &rl, &rc);
		ASSERT_EQ(line, rl);
		ASSERT_EQ(col, rc);
	}
	ASSERT_EQ(fp_json_position(doc, sizeof(text), &line, &col), FP_EINVAL);
	ASSERT_EQ(fp_json_position(NULL, 0, &line, &col), FP_EINVAL);
	ASSERT_OK(fp_json_position(doc, 0, NULL, NULL));
	off = fp_json_offset(fp_json_get(root, "c"));
	ASSERT_OK(fp_json_position(doc, off, &line, &col));
	ASSERT_EQ(line, 6);
	ASSERT_EQ(col, 7);
	fp_json_doc_free(doc);
}

TEST(json_read_file)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	struct fp_diag d;
	struct fp_json_limits lim = {0, 0, 0};
	char path[256];
	int64_t i;

	snprintf(path, sizeof(path), "/tmp/fp-test-json-%ld.json", (long)getpid());
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(
		&sb, "[{\"frame\": {\"name\": \"root\"}, \"metrics\": {\"count\": 3}}]"));
	ASSERT_OK(fp_strbuf_write_file(&sb, path, NULL));
	ASSERT_OK(fp_json_parse_file(path, NULL, &doc, &d));
	ASSERT(fp_json_int64(
		fp_json_get(fp_json_get(fp_json_at(fp_json_root(doc), 0), "metrics"), "count"),
		&i));
	ASSERT_EQ(i, 3);
	fp_json_doc_free(doc);

	/* errors name the file, with line and column */
	fp_strbuf_reset(&sb);
	ASSERT_OK(fp_strbuf_addstr(&sb, "[1,\n 2,\n]"));
	ASSERT_OK(fp_strbuf_write_file(&sb, path, NULL));
	fp_diag_clear(&d);
	ASSERT_EQ(fp_json_parse_file(path, NULL, &doc, &d), FP_EFORMAT);
	ASSERT_UEQ(d.offset, 8);
	ASSERT_EQ(d.line, 3);
	ASSERT_EQ(d.col, 1);
	ASSERT_EQ(strncmp(d.msg, path, strlen(path)), 0);
	ASSERT_NOT_NULL(strstr(d.msg, ":3:1: expected a JSON value"));

	/* over max_bytes */
	lim.max_bytes = 4;
	ASSERT_EQ(fp_json_parse_file(path, &lim, &doc, &d), FP_ELIMIT);
	ASSERT_NOT_NULL(strstr(d.msg, path));

	ASSERT_EQ(fp_json_parse_file("/nonexistent/x.json", NULL, &doc, &d), FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "/nonexistent/x.json"));
	ASSERT_EQ(fp_json_parse_file(NULL, NULL, &doc, &d), FP_EINVAL);
	ASSERT_EQ(unlink(path), 0);
	fp_strbuf_release(&sb);
}

/* A medium Hatchet-like document for the OOM sweep and the linear-time check. */
static void hatchet_doc(struct fp_strbuf *sb, int nodes, bool pretty)
{
	struct fp_jsonw *w = fp_jsonw_new_strbuf(sb, pretty ? FP_JSONW_PRETTY : 0);
	int i, open = 0;

	ASSERT_NOT_NULL(w);
	ASSERT_OK(fp_jsonw_array_begin(w));
	for (i = 0; i < nodes; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_key(w, "frame");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name",
				   i % 3 ? "matmul_kernel" : "model.py:42 \xC3\xA9 \"x\"");
		fp_jsonw_kv_string(w, "type", "function");
		fp_jsonw_object_end(w);
		fp_jsonw_key(w, "metrics");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_int(w, "time (ns)", 1000 + i);
		fp_jsonw_kv_int(w, "count", i);
		fp_jsonw_kv_double(w, "flops", i * 1.25e9 / 3);
		fp_jsonw_object_end(w);
		fp_jsonw_key(w, "children");
		fp_jsonw_array_begin(w);
		if (i % 4 == 3 || open > 20) {
			/* close some levels */
			fp_jsonw_array_end(w);
			fp_jsonw_object_end(w);
			for (; open > 0 && i % 2; open--) {
				fp_jsonw_array_end(w);
				fp_jsonw_object_end(w);
			}
		} else {
			open++;
		}
	}
	for (; open > 0; open--) {
		fp_jsonw_array_end(w);
		fp_jsonw_object_end(w);
	}
	ASSERT_OK(fp_jsonw_array_end(w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
}

/* Walk everything; returns the number of values. */
static size_t walk(const struct fp_json_value *v)
{
	size_t n = 1, i;
	const char *key;
	double d;

	switch (fp_json_type(v)) {
	case FP_JSON_ARRAY:
		for (i = 0; i < fp_json_len(v); i++)
			n += walk(fp_json_at(v, i));
		break;
	case FP_JSON_OBJECT:
		for (i = 0; i < fp_json_len(v); i++)
			n += walk(fp_json_member(v, i, &key, NULL));
		break;
	case FP_JSON_NUMBER:
		ASSERT(fp_json_number(v, &d));
		break;
	default:
		break;
	}
	return n;
}

TEST(json_read_oom)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	struct fp_diag d;
	size_t values;
	long fail_at;
	int r;

	fp_strbuf_init(&sb, 0);
	hatchet_doc(&sb, 300, true);
	ASSERT(sb.len > 30000);
	doc = parse_ok(sb.buf, sb.len);
	values = walk(fp_json_root(doc));
	fp_json_doc_free(doc);
	for (fail_at = 0;; fail_at++) {
		fpt_oom_install(fail_at);
		doc = NULL;
		fp_diag_clear(&d);
		r = fp_json_parse(sb.buf, sb.len, NULL, &doc, &d);
		if (r) {
			ASSERT_EQ(r, FP_ENOMEM);
			ASSERT_EQ(d.status, FP_ENOMEM);
			ASSERT_NULL(doc);
		} else {
			ASSERT_UEQ(walk(fp_json_root(doc)), values);
		}
		fp_json_doc_free(doc);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (!r)
			break;
		ASSERT(fail_at < 500);
	}
	ASSERT(fail_at > 5);
	fp_strbuf_release(&sb);
}

TEST(json_read_linear_time)
{
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	struct timespec t0, t1;
	size_t i;
	double secs;

	/* a 2M-element array, a 200k-member object and a 20 MB profile: all well under the
	 * runner's timeout only if nothing is quadratic */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addch(&sb, '['));
	for (i = 0; i < 2000000; i++)
		ASSERT_OK(fp_strbuf_addstr(&sb, i ? ",1" : "1"));
	ASSERT_OK(fp_strbuf_addch(&sb, ']'));
	doc = parse_ok(sb.buf, sb.len);
	ASSERT_UEQ(fp_json_len(fp_json_root(doc)), 2000000);
	fp_json_doc_free(doc);

	fp_strbuf_reset(&sb);
	ASSERT_OK(fp_strbuf_addch(&sb, '{'));
	for (i = 0; i < 200000; i++)
		ASSERT_OK(fp_strbuf_addf(&sb, "%s\"%zu\":%zu", i ? "," : "", i, i));
	ASSERT_OK(fp_strbuf_addch(&sb, '}'));
	doc = parse_ok(sb.buf, sb.len);
	for (i = 0; i < 200000; i += 7) {
		char key[24];
		int64_t v;

		snprintf(key, sizeof(key), "%zu", i);
		ASSERT(fp_json_int64(fp_json_get(fp_json_root(doc), key), &v));
		ASSERT_EQ(v, (int64_t)i);
	}
	fp_json_doc_free(doc);

	fp_strbuf_reset(&sb);
	hatchet_doc(&sb, 150000, false);
	doc = parse_ok(sb.buf, sb.len);
	ASSERT(walk(fp_json_root(doc)) > 1000000);
	fp_json_doc_free(doc);
	fp_strbuf_release(&sb);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("# json_read_linear_time: %.2f s\n", secs);
	ASSERT(secs < 30.0);
}
