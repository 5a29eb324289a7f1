/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the strict CSV reader (include/flagprism/csv.h): quoting, doubled quotes,
 * line ends, embedded newlines, limits, and positioned errors. */
#include <flagprism/alloc.h>
#include <flagprism/csv.h>

#include "test.h"

/* Read every row of `text` and join them as "f1|f2;f1|f2;" for easy comparison. */
static int rows_of(const char *text, size_t len, char *out, size_t size, struct fp_diag *d)
{
	struct fp_csv_reader r;
	size_t at = 0, i, flen;
	int n;

	fp_csv_reader_init(&r, text, len, NULL);
	out[0] = '\0';
	while ((n = fp_csv_next(&r, d)) > 0) {
		for (i = 0; i < (size_t)n; i++) {
			const char *f = fp_csv_field(&r, i, &flen);

			at += (size_t)snprintf(out + at, size - at, "%s%.*s", i ? "|" : "",
					       (int)flen, f);
		}
		at += (size_t)snprintf(out + at, size - at, ";");
	}
	fp_csv_reader_release(&r);
	return n;
}

#define ROWS(text, want)                                                             \
	do {                                                                         \
		char got[1024];                                                      \
		struct fp_diag d;                                                    \
		ASSERT_EQ(rows_of(text, sizeof(text) - 1, got, sizeof(got), &d), 0); \
		ASSERT_STREQ(got, want);                                             \
	} while (0)

TEST(ncu_csv_basic_rows)
{
	ROWS("a,b,c\n1,2,3\n", "a|b|c;1|2|3;");
	ROWS("a,b\n1,2", "a|b;1|2;");       /* no final newline */
	ROWS("a,b\r\n1,2\r\n", "a|b;1|2;"); /* CRLF */
	ROWS("a,,\n,\n", "a||;|;");         /* empty fields */
	ROWS("x\n\ny\n", "x;;y;");          /* an empty line is one empty field */
	ROWS("", "");
	ROWS("\xEF\xBB\xBF"
	     "a,b\n",
	     "a|b;");                /* BOM skipped */
	ROWS("a\rb,c\n", "a\rb|c;"); /* lone CR is data */
	ROWS("a,b\r", "a|b;");       /* final CR ends the row */
}

TEST(ncu_csv_quoted_fields)
{
	ROWS("\"a\",\"b,c\"\n", "a|b,c;");
	ROWS("\"say \"\"hi\"\"\",x\n", "say \"hi\"|x;");
	ROWS("\"\",\"\"\"\"\n", "|\";");
	ROWS("\"line1\nline2\",z\n", "line1\nline2|z;");
	ROWS("\"crlf\r\ninside\"\r\n", "crlf\r\ninside;");
	ROWS("\"(128, 1, 1)\",\"1,234\"", "(128, 1, 1)|1,234;");
}

TEST(ncu_csv_embedded_newline_counts_lines)
{
	static const char text[] = "\"a\nb\",c\nd,e\n\"f\",\"g\n";
	struct fp_csv_reader r;
	struct fp_diag d;

	fp_csv_reader_init(&r, text, sizeof(text) - 1, NULL);
	ASSERT_EQ(fp_csv_next(&r, &d), 2);
	ASSERT_EQ(r.row_line, 1);
	ASSERT_EQ(fp_csv_next(&r, &d), 2);
	ASSERT_EQ(r.row_line, 3);
	ASSERT_UEQ(r.row_offset, 8);
	/* The last row's second quote is never closed: reported at the opening quote. */
	ASSERT_EQ(fp_csv_next(&r, &d), FP_EFORMAT);
	ASSERT_EQ(d.status, FP_EFORMAT);
	ASSERT_EQ(d.line, 4);
	ASSERT_EQ(d.col, 5);
	ASSERT_UEQ(d.offset, 16);
	ASSERT(strstr(d.msg, "not closed") != NULL);
	fp_csv_reader_release(&r);
}

TEST(ncu_csv_errors_have_positions)
{
	struct fp_csv_reader r;
	struct fp_diag d;
	static const char bad1[] = "ok,row\nab\"c,d\n";
	static const char bad2[] = "x\n\"ab\"c,d\n";

	fp_csv_reader_init(&r, bad1, sizeof(bad1) - 1, NULL);
	ASSERT_EQ(fp_csv_next(&r, &d), 2);
	ASSERT_EQ(fp_csv_next(&r, &d), FP_EFORMAT);
	ASSERT_EQ(d.line, 2);
	ASSERT_EQ(d.col, 3);
	ASSERT_UEQ(d.offset, 9);
	ASSERT(strstr(d.msg, "unquoted") != NULL);
	/* The reader stays at the failing row; skipping the line resynchronises. */
	{
		const char *line;
		size_t len;

		ASSERT(fp_csv_skip_line(&r, &line, &len));
		ASSERT_EQ(len, 6);
		ASSERT_MEMEQ(line, "ab\"c,d", 6);
		ASSERT_EQ(fp_csv_next(&r, &d), 0);
		ASSERT(!fp_csv_skip_line(&r, &line, &len));
	}
	fp_csv_reader_release(&r);

	fp_csv_reader_init(&r, bad2, sizeof(bad2) - 1, NULL);
	ASSERT_EQ(fp_csv_next(&r, &d), 1);
	ASSERT_EQ(fp_csv_next(&r, &d), FP_EFORMAT);
	ASSERT_EQ(d.line, 2);
	ASSERT_EQ(d.col, 5);
	ASSERT(strstr(d.msg, "after a closing quote") != NULL);
	fp_csv_reader_release(&r);
}

TEST(ncu_csv_limits)
{
	struct fp_csv_limits lim = {.max_field = 4, .max_fields = 3, .max_row = 8};
	struct fp_csv_reader r;
	struct fp_diag d;

	fp_csv_reader_init(&r, "abcd,e\nabcde\n", 13, &lim);
	ASSERT_EQ(fp_csv_next(&r, &d), 2);
	ASSERT_EQ(fp_csv_next(&r, &d), FP_ELIMIT);
	ASSERT_EQ(d.line, 2);
	ASSERT_EQ(d.col, 1);
	fp_csv_reader_release(&r);

	fp_csv_reader_init(&r, "a,b,c,d\n", 8, &lim);
	ASSERT_EQ(fp_csv_next(&r, &d), FP_ELIMIT);
	ASSERT_EQ(d.col, 7); /* the fourth field */
	ASSERT(strstr(d.msg, "more than 3 fields") != NULL);
	fp_csv_reader_release(&r);

	fp_csv_reader_init(&r, "\"abcd\",\"abcd\",x\n", 16, &lim);
	ASSERT_EQ(fp_csv_next(&r, &d), FP_ELIMIT); /* 9 bytes of fields > 8 */
	ASSERT(strstr(d.msg, "row longer") != NULL);
	fp_csv_reader_release(&r);

	fp_csv_reader_init(&r, "\"abcde\"\n", 8, &lim);
	ASSERT_EQ(fp_csv_next(&r, &d), FP_ELIMIT);
	ASSERT(strstr(d.msg, "field longer") != NULL);
	ASSERT_EQ(d.col, 1);
	fp_csv_reader_release(&r);
}

TEST(ncu_csv_nul_bytes_and_field_access)
{
	static const char text[] = "\"a\0b\",c";
	struct fp_csv_reader r;
	struct fp_diag d;
	size_t len;
	const char *f;

	fp_csv_reader_init(&r, text, sizeof(text) - 1, NULL);
	ASSERT_EQ(fp_csv_next(&r, &d), 2);
	f = fp_csv_field(&r, 0, &len);
	ASSERT_EQ(len, 3);
	ASSERT_MEMEQ(f, "a\0b", 4);
	ASSERT_NULL(fp_csv_field(&r, 2, &len));
	ASSERT_EQ(fp_csv_next(&r, &d), 0);
	ASSERT_EQ(fp_csv_next(&r, &d), 0);
	fp_csv_reader_release(&r);
}

TEST(ncu_csv_oom_sweep)
{
	static const char text[] = "\"a\",\"b\"\"c\",d\n1,2,3\n";
	long fail_at;

	for (fail_at = 0;; fail_at++) {
		struct fp_csv_reader r;
		struct fp_diag d;
		int n, rows = 0;

		fpt_oom_install(fail_at);
		fp_csv_reader_init(&r, text, sizeof(text) - 1, NULL);
		while ((n = fp_csv_next(&r, &d)) > 0)
			rows++;
		fp_csv_reader_release(&r);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (n == 0) {
			ASSERT_EQ(rows, 2);
			break;
		}
		ASSERT_EQ(n, FP_ENOMEM);
		ASSERT_EQ(d.status, FP_ENOMEM);
	}
	ASSERT_GT(fail_at, 0);
}
