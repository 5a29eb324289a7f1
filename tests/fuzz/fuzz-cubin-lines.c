/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the cubin line-table reader (src/ir/cubin-lines-internal.h), seeded with
 * real Triton cubins. Any input: the parse must succeed or fail cleanly with a known status and a
 * position inside the input. On success the rows must be non-empty, sorted and disjoint ranges,
 * and looking up each row's first and last byte must find that row.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/status.h>

#include "ir/cubin-lines-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz-cubin-lines: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                       \
			abort();                                                                 \
		}                                                                                \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_cubin_lines *cl = NULL;
	struct fp_cubin_loc a, b, got;
	struct fp_diag diag;
	size_t i, n;
	int rc;

	memset(&diag, 0, sizeof(diag));
	rc = fp_cubin_lines_parse(data, size, &cl, &diag);
	if (rc) {
		CHECK(rc == FP_EFORMAT || rc == FP_ENOTSUP || rc == FP_ELIMIT || rc == FP_ENOMEM);
		CHECK(cl == NULL);
		CHECK(diag.status == rc);
		CHECK(diag.offset <= size);
		CHECK(diag.msg[0] != '\0');
		return 0;
	}
	n = fp_cubin_lines_count(cl);
	CHECK(fp_cubin_lines_has_lines(cl) == (n > 0));
	for (i = 0; i < n; i++) {
		CHECK(fp_cubin_lines_row(cl, i, &a) == FP_OK);
		CHECK(a.pc_lo < a.pc_hi);
		CHECK(a.function && a.file && a.dir);
		CHECK(fp_cubin_lines_lookup(cl, a.function, a.pc_lo, &got) == FP_OK);
		CHECK(got.pc_lo == a.pc_lo && got.line == a.line);
		CHECK(fp_cubin_lines_lookup(cl, a.function, a.pc_hi - 1, &got) == FP_OK);
		CHECK(got.pc_lo == a.pc_lo);
		if (i + 1 < n) {
			CHECK(fp_cubin_lines_row(cl, i + 1, &b) == FP_OK);
			CHECK(strcmp(a.function, b.function) != 0 || a.pc_hi <= b.pc_lo);
		}
	}
	CHECK(fp_cubin_lines_row(cl, n, &a) == FP_EINVAL);
	fp_cubin_lines_free(cl);
	return 0;
}
