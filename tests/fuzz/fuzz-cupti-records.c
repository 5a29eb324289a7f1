/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for FlagPrism's own reader of CUPTI activity buffers
 * (fp_cupti_read_records(), the bounds-checked walker the CUPTI backend's decoding rests on; not
 * CUPTI's iterator). The first input byte picks the library version whose record layout is
 * assumed (CUDA 11.8, 12.0, 12.8, 13.0); the rest is the buffer, copied to an allocation of
 * exactly its size, once aligned and once misaligned. The walk must end at the buffer's end or
 * fail with FP_EFORMAT at an offset inside it, report every kernel record it decoded, agree with
 * itself on both copies, and never read outside the buffer (ASan). A violated check aborts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/cupti.h>
#include <flagprism/status.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz-cupti-records: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct seen {
	size_t kernels;
	uint64_t corr_sum;
	int stop_at; /* return an error from the callback at this kernel, -1: never */
};

static int on_kernel(void *arg, const struct fp_cupti_kernel_record *k)
{
	struct seen *s = arg;

	CHECK(k->kind == 3 || k->kind == 10);
	if (s->stop_at >= 0 && (size_t)s->stop_at == s->kernels)
		return FP_ELIMIT;
	s->kernels++;
	s->corr_sum += k->correlation + k->graph_node_id + (uint64_t)k->grid[0];
	return FP_OK;
}

static int walk(const uint8_t *buf, size_t n, uint32_t version, struct seen *s, size_t *consumed,
		struct fp_diag *d)
{
	int rc = fp_cupti_read_records(buf, n, version, on_kernel, s, consumed, d);

	CHECK(*consumed <= n);
	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_ELIMIT);
	if (rc == FP_OK)
		CHECK(*consumed == n);
	if (rc == FP_EFORMAT) {
		CHECK(d->status == FP_EFORMAT);
		CHECK(d->offset == *consumed);
		CHECK(d->offset < n);
		CHECK(d->msg[0] != '\0');
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t versions[] = {18, 19, 26, 130000, 130001};
	struct seen a = {0, 0, -1}, b = {0, 0, -1}, c = {0, 0, 1};
	size_t n, ca, cb, cc;
	struct fp_diag da, db, dc;
	uint32_t version;
	uint8_t *exact, *odd;
	int ra, rb, rc;

	if (size < 1)
		return 0;
	version = versions[data[0] % (sizeof(versions) / sizeof(versions[0]))];
	n = size - 1;
	exact = malloc(n ? n : 1);
	odd = malloc(n + 1);
	if (!exact || !odd) {
		free(exact);
		free(odd);
		return 0;
	}
	memcpy(exact, data + 1, n);
	memcpy(odd + 1, data + 1, n);

	ra = walk(exact, n, version, &a, &ca, &da);
	rb = walk(odd + 1, n, version, &b, &cb, &db);
	CHECK(ra == rb && ca == cb && a.kernels == b.kernels && a.corr_sum == b.corr_sum);
	/* A callback error stops the walk right there and is returned as is. */
	rc = walk(exact, n, version, &c, &cc, &dc);
	if (a.kernels > 1)
		CHECK(rc == FP_ELIMIT && c.kernels == 1 && cc <= ca);
	else
		CHECK(rc == ra && c.kernels == a.kernels);
	free(exact);
	free(odd);
	return 0;
}
