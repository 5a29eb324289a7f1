/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the CSV reader and the Nsight Compute importer: any bytes are read as
 * CSV row by row (skipping the line after an error, as callers may) and as ncu output. A
 * failure must come back as a status with a filled diagnostic; a parsed report must attach to
 * a small profile, give a vendor document that is valid JSON, and a tree that writes as a
 * Hatchet file that reads back. Any violation aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/csv.h>
#include <flagprism/json.h>
#include <flagprism/ncu.h>
#include <flagprism/strbuf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz-ncu-csv: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                   \
			abort();                                                             \
		}                                                                            \
	} while (0)

static void csv_rows(const char *text, size_t size)
{
	struct fp_csv_limits lim = {.max_field = 4096, .max_fields = 256, .max_row = 16384};
	struct fp_csv_reader r;
	struct fp_diag d;
	const char *line;
	size_t len, i, guard = 0;
	int n;

	fp_csv_reader_init(&r, text, size, &lim);
	for (;;) {
		size_t before = r.pos;

		CHECK(guard++ <= size + 1); /* every call consumes input or ends */
		n = fp_csv_next(&r, &d);
		if (n == 0)
			break;
		if (n < 0) {
			CHECK(n == FP_EFORMAT || n == FP_ELIMIT || n == FP_ENOMEM);
			CHECK(d.status == n && d.msg[0] && d.offset <= size && d.line >= 1);
			CHECK(r.pos == before);
			CHECK(fp_csv_skip_line(&r, &line, &len));
			continue;
		}
		CHECK(r.pos > before && (size_t)n == r.nfields);
		for (i = 0; i < (size_t)n; i++) {
			const char *f = fp_csv_field(&r, i, &len);

			CHECK(f && f[len] == '\0' && len <= lim.max_field);
		}
	}
	fp_csv_reader_release(&r);
}

static struct fp_calltree *small_tree(void)
{
	static const char *const kernels[] = {"k", "add_kernel", "matmul_kernel", "void k(int)"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t f[2], n, cnt;
	size_t i;

	CHECK(t != NULL);
	CHECK(fp_calltree_metric_auto(t, "count", 5, &cnt) == FP_OK);
	CHECK(fp_calltree_intern(t, "main.py:f@1", 11, &f[0]) == FP_OK);
	for (i = 0; i < 4; i++) {
		CHECK(fp_calltree_intern(t, kernels[i], strlen(kernels[i]), &f[1]) == FP_OK);
		/* Odd kernels under a frame, even ones at the root. */
		if (i & 1)
			CHECK(fp_calltree_add_path(t, f, 2, &n) == FP_OK);
		else
			CHECK(fp_calltree_add_path(t, f + 1, 1, &n) == FP_OK);
		CHECK(fp_calltree_add_metric(t, n, cnt, (double)(i + 1)) == FP_OK);
	}
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_ncu_limits lim = {.max_records = 20000, .max_messages = 64};
	struct fp_ncu_report *r = NULL;
	struct fp_calltree *t, *t2 = NULL;
	struct fp_ncu_attach_stats st;
	struct fp_json_doc *doc = NULL;
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	struct fp_diag d;
	size_t i;
	int rc;

	csv_rows((const char *)data, size);

	rc = fp_ncu_parse((const char *)data, size, &lim, &r, &d);
	if (rc != FP_OK) {
		CHECK(r == NULL);
		CHECK(rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM);
		CHECK(d.status == rc && d.msg[0] != '\0' && d.offset <= size);
		return 0;
	}
	for (i = 0; i < fp_ncu_report_launch_count(r); i++) {
		const struct fp_ncu_launch *l = fp_ncu_report_launch(r, i);

		CHECK(l->first_record < fp_ncu_report_record_count(r));
		CHECK(l->nrecords >= 1);
	}
	CHECK(fp_ncu_report_message_count(r) <= fp_ncu_report_messages_seen(r));

	t = small_tree();
	CHECK(fp_ncu_attach(r, t, NULL, &st, &d) == FP_OK);
	CHECK(st.matched + st.unmatched == st.launches);
	CHECK(st.launches == fp_ncu_report_launch_count(r));

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	CHECK(w != NULL);
	CHECK(fp_ncu_write_vendor(r, t, NULL, w) == FP_OK);
	CHECK(fp_jsonw_finish(w) == FP_OK);
	fp_jsonw_free(w);
	rc = fp_json_parse(sb.buf, sb.len, NULL, &doc, &d);
	if (rc != FP_OK) {
		fprintf(stderr, "fuzz-ncu-csv: vendor JSON does not parse: %s\n", d.msg);
		abort();
	}
	fp_json_doc_free(doc);

	fp_strbuf_reset(&sb);
	w = fp_jsonw_new_strbuf(&sb, 0);
	CHECK(w != NULL);
	CHECK(fp_calltree_write_hatchet(t, w) == FP_OK);
	CHECK(fp_jsonw_finish(w) == FP_OK);
	fp_jsonw_free(w);
	CHECK(fp_calltree_parse_hatchet(sb.buf, sb.len, NULL, 0, &t2, NULL, &d) == FP_OK);
	fp_calltree_free(t2);
	fp_strbuf_release(&sb);
	fp_calltree_free(t);
	fp_ncu_report_free(r);
	return 0;
}
