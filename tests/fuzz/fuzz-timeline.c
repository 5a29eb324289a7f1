/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the intra-kernel timeline decoder (docs/formats/timeline-format.md). The input
 * is the buffer. Decoding must succeed or fail cleanly (FP_EFORMAT/FP_EVERSION with an offset
 * inside the buffer, FP_ELIMIT, FP_ENOMEM); a decoded launch is checked against the model's
 * invariants (intervals ordered in time and within the launch's time range, scope ids and
 * parents in range, statistics consistent with the intervals). A violated invariant aborts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/status.h>
#include <flagprism/timeline.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz-timeline: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                    \
			abort();                                                              \
		}                                                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fp_timeline_interval *iv;
	const struct fp_timeline_info *in;
	struct fp_timeline *t = NULL;
	struct fp_diag d;
	uint64_t intervals = 0;
	size_t n, i;
	uint32_t sc;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = fp_timeline_decode(data, size, &t, &d);
	if (rc != FP_OK) {
		CHECK(t == NULL);
		CHECK(rc == FP_EFORMAT || rc == FP_EVERSION || rc == FP_ELIMIT || rc == FP_ENOMEM);
		if (rc == FP_EFORMAT || rc == FP_EVERSION)
			CHECK(d.offset < (size ? size : 1) && d.msg[0]);
		return 0;
	}
	in = fp_timeline_get_info(t);
	n = fp_timeline_intervals(t, &iv);
	CHECK(in->records <= in->programs * in->slots);
	CHECK(n <= in->records / 2);
	for (i = 0; i < n; i++) {
		CHECK(iv[i].scope >= 1 && iv[i].scope <= in->nscopes);
		CHECK(iv[i].parent <= in->nscopes);
		CHECK(iv[i].end_ns >= iv[i].begin_ns);
		CHECK(iv[i].begin_ns >= in->t_min && iv[i].end_ns <= in->t_max);
		CHECK(iv[i].program < in->programs);
		CHECK(iv[i].depth < FP_TIMELINE_MAX_DEPTH);
		if (i)
			CHECK(iv[i].program >= iv[i - 1].program);
	}
	for (sc = 1; sc <= in->nscopes; sc++) {
		struct fp_timeline_scope_stats st;

		CHECK(fp_timeline_scope_stats(t, sc, &st) == FP_OK);
		CHECK(st.programs <= in->programs);
		CHECK(st.programs <= st.intervals);
		if (st.programs)
			CHECK(st.time_min <= st.time_max && st.time_sum >= st.time_max);
		intervals += st.intervals;
	}
	CHECK(intervals == n);
	fp_timeline_free(t);
	return 0;
}
