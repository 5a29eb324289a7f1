/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the HTML report's reader of Debugger reports (src/html/html-debug.c):
 * the input is a report's JSON text. Adding it must succeed or fail cleanly (FP_EFORMAT,
 * FP_EVERSION, FP_ELIMIT, FP_ENOMEM) and leave the page as it was; an added launch must write a
 * page. Small caps make binning, series and the findings cap reachable. No file is read (no
 * path is given). The same text is also read as a run's summary.json (any JSON object is kept,
 * cut to the page's limits). A violated invariant aborts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <flagprism/html.h>
#include <flagprism/status.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz-html-report: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                       \
			abort();                                                                 \
		}                                                                                \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct fp_html_options o;
	struct fp_html_page *p = NULL;
	struct fp_html_stats st;
	struct fp_diag d;
	int rc;

	if (!sink)
		sink = fopen("/dev/null", "w");
	fp_html_options_init(&o);
	o.max_cells = 16;
	o.max_series = 4;
	o.max_findings = 3;
	if (fp_html_page_new(FP_HTML_DEBUGGER, &o, &p) != FP_OK)
		return 0;
	rc = fp_html_debug_add_report(p, (const char *)data, size, NULL, &d);
	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_EVERSION || rc == FP_ELIMIT ||
	      rc == FP_ENOMEM);
	fp_html_page_stats(p, &st);
	if (rc == FP_OK) {
		CHECK(st.launches == 1);
		CHECK(st.findings <= 3 && st.findings <= st.findings_total);
		CHECK(fp_html_page_write(p, sink) == FP_OK);
	} else {
		CHECK(d.status == rc && d.msg[0]);
		CHECK(st.launches == 0 && st.findings == 0 && st.sites == 0);
		CHECK(fp_html_page_note_count(p) == 0);
	}
	fp_html_page_free(p);
	if (fp_html_page_new(FP_HTML_DEBUGGER, &o, &p) != FP_OK)
		return 0;
	rc = fp_html_debug_add_summary(p, (const char *)data, size, "summary.json", &d);
	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM);
	fp_html_page_free(p);
	return 0;
}
