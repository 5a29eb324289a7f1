/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the HTML report's reader of Chrome traces (src/html/html-trace.c): the
 * input is the trace's JSON text. Adding it to a profile page must succeed or fail cleanly
 * (FP_EFORMAT, FP_ELIMIT, FP_ENOMEM); the slices kept never exceed the cap nor the slices read,
 * and a page with a timeline writes. A violated invariant aborts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <flagprism/calltree.h>
#include <flagprism/html.h>
#include <flagprism/status.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                             \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "fuzz-html-trace: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                      \
			abort();                                                                \
		}                                                                               \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct fp_html_options o;
	struct fp_html_page *p = NULL;
	struct fp_calltree *t;
	struct fp_html_stats st;
	uint32_t m;
	struct fp_diag d;
	int rc;

	if (!sink)
		sink = fopen("/dev/null", "w");
	t = fp_calltree_new(NULL);
	if (!t)
		return 0;
	fp_html_options_init(&o);
	o.max_slices = 64;
	if (fp_calltree_metric_auto(t, "time (ns)", 9, &m) != FP_OK ||
	    fp_calltree_add_metric(t, 0, m, 1) != FP_OK ||
	    fp_html_page_new(FP_HTML_PROFILE, &o, &p) != FP_OK ||
	    fp_html_profile_set(p, t, "f.hatchet", NULL, NULL, NULL, NULL, NULL) != FP_OK)
		goto out;
	rc = fp_html_profile_add_trace(p, (const char *)data, size, "f.chrome_trace.json", &d);
	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM);
	fp_html_page_stats(p, &st);
	if (rc == FP_OK) {
		CHECK(st.slices <= 64 && st.slices <= st.slices_total);
		CHECK(fp_html_page_write(p, sink) == FP_OK);
	} else {
		CHECK(d.status == rc && d.msg[0]);
		CHECK(st.slices == 0);
	}
out:
	fp_html_page_free(p);
	fp_calltree_free(t);
	return 0;
}
