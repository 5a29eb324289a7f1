/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the JSON reader and writer. Any input: the parse must succeed or fail
 * cleanly with a sane diagnostic. On success the whole tree is walked, written back with the
 * writer (compact or pretty, depending on the input), parsed again and compared value by value
 * with the first parse; writing the second tree must give the same bytes again. Any mismatch
 * aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/json.h>
#include <flagprism/strbuf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "fuzz-json: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                \
			abort();                                                          \
		}                                                                         \
	} while (0)

/* Visit every value, checking the accessors agree with each other. */
static void walk(const struct fp_json_doc *doc, const struct fp_json_value *v, size_t size)
{
	const struct fp_json_value *m;
	uint32_t line, col;
	const char *key, *s;
	size_t i, n, klen;
	int64_t i64;
	uint64_t u64;
	double d;
	bool b;

	CHECK(fp_json_offset(v) < size);
	CHECK(fp_json_position(doc, fp_json_offset(v), &line, &col) == 0);
	CHECK(line >= 1 && col >= 1);
	switch (fp_json_type(v)) {
	case FP_JSON_NULL:
		CHECK(!fp_json_bool(v, &b));
		break;
	case FP_JSON_TRUE:
	case FP_JSON_FALSE:
		CHECK(fp_json_bool(v, &b) && b == (fp_json_type(v) == FP_JSON_TRUE));
		break;
	case FP_JSON_NUMBER:
		CHECK(fp_json_number(v, &d));
		CHECK(d == d && d - d == 0); /* finite: out-of-range literals were refused */
		if (fp_json_int64(v, &i64))
			CHECK((double)i64 == d);
		if (fp_json_uint64(v, &u64))
			CHECK((double)u64 == d);
		break;
	case FP_JSON_STRING:
		s = fp_json_string(v, &n);
		CHECK(s && s[n] == '\0');
		break;
	case FP_JSON_ARRAY:
		n = fp_json_len(v);
		for (i = 0; i < n; i++)
			walk(doc, fp_json_at(v, i), size);
		CHECK(fp_json_at(v, n) == NULL);
		break;
	case FP_JSON_OBJECT:
		n = fp_json_len(v);
		for (i = 0; i < n; i++) {
			m = fp_json_member(v, i, &key, &klen);
			CHECK(m && key && key[klen] == '\0');
			/* lookup finds this member or a later duplicate of its key */
			CHECK(fp_json_get_n(v, key, klen) >= m);
			walk(doc, m, size);
		}
		CHECK(fp_json_member(v, n, NULL, NULL) == NULL);
		break;
	}
}

static void write_value(struct fp_jsonw *w, const struct fp_json_value *v)
{
	const struct fp_json_value *m;
	const char *key, *s;
	size_t i, n, klen;
	int64_t i64;
	uint64_t u64;
	double d;

	switch (fp_json_type(v)) {
	case FP_JSON_NULL:
		fp_jsonw_null(w);
		break;
	case FP_JSON_TRUE:
	case FP_JSON_FALSE:
		fp_jsonw_bool(w, fp_json_type(v) == FP_JSON_TRUE);
		break;
	case FP_JSON_NUMBER:
		if (fp_json_int64(v, &i64))
			fp_jsonw_int(w, i64);
		else if (fp_json_uint64(v, &u64))
			fp_jsonw_uint(w, u64);
		else if (fp_json_number(v, &d))
			fp_jsonw_double(w, d);
		break;
	case FP_JSON_STRING:
		s = fp_json_string(v, &n);
		fp_jsonw_string_n(w, s, n);
		break;
	case FP_JSON_ARRAY:
		fp_jsonw_array_begin(w);
		for (i = 0; i < fp_json_len(v); i++)
			write_value(w, fp_json_at(v, i));
		fp_jsonw_array_end(w);
		break;
	case FP_JSON_OBJECT:
		fp_jsonw_object_begin(w);
		for (i = 0; i < fp_json_len(v); i++) {
			m = fp_json_member(v, i, &key, &klen);
			fp_jsonw_key_n(w, key, klen);
			write_value(w, m);
		}
		fp_jsonw_object_end(w);
		break;
	}
}

static void same(const struct fp_json_value *a, const struct fp_json_value *b)
{
	const char *ka, *kb, *sa, *sb;
	size_t i, la, lb;
	int64_t ia, ib;
	uint64_t ua, ub;
	double da, db;

	CHECK(fp_json_type(a) == fp_json_type(b));
	switch (fp_json_type(a)) {
	case FP_JSON_NUMBER:
		if (fp_json_int64(a, &ia)) {
			CHECK(fp_json_int64(b, &ib) && ia == ib);
		} else if (fp_json_uint64(a, &ua)) {
			CHECK(fp_json_uint64(b, &ub) && ua == ub);
		} else {
			CHECK(fp_json_number(a, &da) && fp_json_number(b, &db));
			CHECK(memcmp(&da, &db, sizeof(da)) == 0);
		}
		break;
	case FP_JSON_STRING:
		sa = fp_json_string(a, &la);
		sb = fp_json_string(b, &lb);
		CHECK(la == lb && memcmp(sa, sb, la) == 0);
		break;
	case FP_JSON_ARRAY:
		CHECK(fp_json_len(a) == fp_json_len(b));
		for (i = 0; i < fp_json_len(a); i++)
			same(fp_json_at(a, i), fp_json_at(b, i));
		break;
	case FP_JSON_OBJECT:
		CHECK(fp_json_len(a) == fp_json_len(b));
		for (i = 0; i < fp_json_len(a); i++) {
			const struct fp_json_value *ma = fp_json_member(a, i, &ka, &la);
			const struct fp_json_value *mb = fp_json_member(b, i, &kb, &lb);

			CHECK(la == lb && memcmp(ka, kb, la) == 0);
			same(ma, mb);
		}
		break;
	default:
		break;
	}
}

static void serialise(const struct fp_json_doc *doc, unsigned flags, struct fp_strbuf *out)
{
	struct fp_jsonw *w;

	fp_strbuf_init(out, 0);
	w = fp_jsonw_new_strbuf(out, flags);
	CHECK(w);
	write_value(w, fp_json_root(doc));
	CHECK(fp_jsonw_finish(w) == 0);
	fp_jsonw_free(w);
}

static struct fp_json_doc *reparse(const struct fp_strbuf *text)
{
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;
	int rc;

	rc = fp_json_parse(text->buf, text->len, NULL, &doc, &d);
	if (rc)
		fprintf(stderr, "fuzz-json: re-parse failed at %u:%u: %s\n%s\n", d.line, d.col,
			d.msg, text->buf);
	CHECK(rc == 0);
	return doc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_json_doc *doc = NULL, *doc2, *doc3;
	struct fp_strbuf out, out2, out3;
	struct fp_diag d;
	unsigned flags = size % 2 ? FP_JSONW_PRETTY : 0;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = fp_json_parse((const char *)data, size, NULL, &doc, &d);
	if (rc) {
		CHECK(rc == FP_EFORMAT || rc == FP_ELIMIT);
		CHECK(d.status == rc && d.offset <= size && d.line >= 1 && d.col >= 1);
		CHECK(d.msg[0] != '\0' && memchr(d.msg, '\0', sizeof(d.msg)) != NULL);
		CHECK(doc == NULL);
		return 0;
	}
	walk(doc, fp_json_root(doc), size);

	/* write, read back: the same values */
	serialise(doc, flags, &out);
	doc2 = reparse(&out);
	same(fp_json_root(doc), fp_json_root(doc2));

	/*
	 * Once written, a document is a fixed point: writing what was read gives the same bytes.
	 * (Not from the first tree: a literal like 9223372036854775807.5 becomes the double 2^63,
	 * written as 9.223372036854776e+18, which reads back as an exact integer.)
	 */
	serialise(doc2, flags, &out2);
	doc3 = reparse(&out2);
	same(fp_json_root(doc2), fp_json_root(doc3));
	serialise(doc3, flags, &out3);
	CHECK(out2.len == out3.len && memcmp(out2.buf, out3.buf, out2.len) == 0);

	fp_strbuf_release(&out3);
	fp_strbuf_release(&out2);
	fp_strbuf_release(&out);
	fp_json_doc_free(doc3);
	fp_json_doc_free(doc2);
	fp_json_doc_free(doc);
	return 0;
}
