/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the .npy reader (src/core/npy-read.c): the input is the file. Parsing
 * must succeed or fail cleanly (FP_EFORMAT with an offset inside the input, FP_ENOTSUP); a parsed
 * array's data must lie inside the input and hold exactly numel elements, every one readable.
 * A violated invariant aborts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <flagprism/status.h>

#include "core/npy-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz-npy-read: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                    \
			abort();                                                              \
		}                                                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_npy_view a;
	struct fp_diag d;
	uint64_t i, n = 1;
	volatile double sum = 0;
	int rc;

	rc = fp_npy_parse(data, size, &a, &d);
	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_ENOTSUP);
	if (rc != FP_OK) {
		CHECK(d.status == rc && d.msg[0] && d.offset <= size);
		return 0;
	}
	CHECK(a.ndim <= FP_NPY_MAX_NDIM);
	for (i = 0; i < a.ndim; i++)
		n *= a.shape[i];
	CHECK(n == a.numel);
	CHECK(a.nbytes == a.numel * fp_dtype_size(a.dtype));
	CHECK((const uint8_t *)a.data >= data && (const uint8_t *)a.data + a.nbytes == data + size);
	for (i = 0; i < a.numel; i++)
		sum += fp_npy_get(&a, i);
	(void)sum;
	return 0;
}
