/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Hatchet reader's streaming fast path (fp_calltree_parse_hatchet(),
 * with and without its scanner thread) against the DOM reader it stands in for
 * (FP_HATCHET_STRICT): for any bytes both must return the same status; on failure the same
 * diagnostic (offset and message); on success equal trees (structure, values, metric
 * names and kinds in the same order) and the same counters. A successful tree then goes through
 * a view with several metrics and filters and is rendered, which must not fail except for
 * out-of-range options. Any mismatch aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/calltree.h>
#include <flagprism/view.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                            \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "fuzz-view-read: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                     \
			abort();                                                               \
		}                                                                              \
	} while (0)

static void same_metrics(const struct fp_calltree *a, const struct fp_calltree *b)
{
	uint32_t m, n = fp_calltree_metric_count(a);

	CHECK(n == fp_calltree_metric_count(b));
	for (m = 0; m < n; m++) {
		enum fp_metric_kind ka, kb;
		size_t la, lb;
		const char *na = fp_calltree_metric_name(a, m, &la, &ka);
		const char *nb = fp_calltree_metric_name(b, m, &lb, &kb);

		CHECK(la == lb && memcmp(na, nb, la) == 0 && ka == kb);
	}
}

static void render(struct fp_calltree *t, const char *metrics, const char *include, bool sorted)
{
	struct fp_view_options o;
	struct fp_view *v = NULL;
	FILE *null = fopen("/dev/null", "w");
	int rc;

	CHECK(null != NULL);
	fp_view_options_init(&o);
	o.metrics = metrics;
	o.include = include;
	o.print_sorted = sorted;
	o.max_depth = 8;
	rc = fp_view_new(t, NULL, &o, &v, NULL);
	/* Specs a random tree cannot satisfy are fine; nothing else may fail. */
	CHECK(rc == FP_OK || rc == FP_EINVAL || rc == FP_ENOENT);
	if (rc == FP_OK)
		CHECK(fp_view_render(v, null) == FP_OK);
	fp_view_free(v);
	fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_calltree *fast = NULL, *strict = NULL;
	struct fp_hatchet_info fi, si;
	struct fp_diag fd, sd, why;
	const char *text = (const char *)data;
	int rf, rs;

	memset(&fd, 0, sizeof(fd));
	memset(&sd, 0, sizeof(sd));
	/* Every other input takes the scanner thread, which small inputs otherwise never do. */
	rf = fp_calltree_parse_hatchet(text, size, NULL, size % 2 ? FP_HATCHET_THREADED : 0, &fast,
				       &fi, &fd);
	rs = fp_calltree_parse_hatchet(text, size, NULL, FP_HATCHET_STRICT, &strict, &si, &sd);
	CHECK(rf == rs);
	if (rs != FP_OK) {
		CHECK(fast == NULL && strict == NULL);
		CHECK(fd.offset == sd.offset && strcmp(fd.msg, sd.msg) == 0);
		CHECK(fi.truncated == si.truncated);
		return 0;
	}
	CHECK(fp_calltree_equal(fast, strict, 0, &why));
	CHECK(fp_calltree_node_count(fast) == fp_calltree_node_count(strict));
	same_metrics(fast, strict);
	CHECK(fi.nodes == si.nodes);
	CHECK(fi.merged_siblings == si.merged_siblings);
	CHECK(fi.skipped_metrics == si.skipped_metrics);
	CHECK(fi.has_device_info == si.has_device_info);

	render(fast, NULL, NULL, false);
	render(fast, "time/ms,count/%,util,avg_time/us,gflop/s", NULL, true);
	render(fast, "count", "a|k", false);
	{
		struct fp_view *v = NULL;
		FILE *null = fopen("/dev/null", "w");

		CHECK(null != NULL);
		if (fp_view_new(fast, strict, NULL, &v, NULL) == FP_OK)
			CHECK(fp_view_render(v, null) == FP_OK);
		fp_view_free(v);
		CHECK(fp_view_list_metrics(fast, null) == FP_OK);
		fclose(null);
	}
	fp_calltree_free(fast);
	fp_calltree_free(strict);
	return 0;
}
