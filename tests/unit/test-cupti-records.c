/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUPTI backend's own activity-record reader on synthetic buffers: the record layout per
 * library version (Kernel10 in 13.0, Kernel9 in 12.x), field decoding against an independent
 * declaration of the record (fake-cupti/fake-cupti-record.h), and the raw walker's bounds and
 * kind checks on truncated, misaligned and unknown input.
 */
#include <stdlib.h>

#include <flagprism/status.h>

#include "backend/cuda/cupti-internal.h"
#include "fake-cupti/fake-cupti-record.h"
#include "test.h"

static void fill(struct fake_kernel10 *r, uint32_t corr)
{
	memset(r, 0, sizeof(*r));
	r->kind = 10;
	r->registersPerThread = 40;
	r->start = 1000000 + corr;
	r->end = 2000000 + corr;
	r->deviceId = 1;
	r->contextId = 2;
	r->streamId = 7;
	r->gridX = 64;
	r->gridY = 2;
	r->gridZ = 3;
	r->blockX = 128;
	r->blockY = 1;
	r->blockZ = 1;
	r->staticSharedMemory = 1024;
	r->dynamicSharedMemory = 49152;
	r->correlationId = corr;
	r->name = (const char *)(uintptr_t)0x1234560;
	r->graphNodeId = 99;
	r->graphId = 5;
	r->isDeviceLaunched = 1;
}

TEST(cupti_records_layout)
{
	struct fp__cupti_layout l;

	ASSERT_EQ(fp__cupti_layout_init(&l, 17), FP_ENOTSUP);
	ASSERT_OK(fp__cupti_layout_init(&l, 18));
	ASSERT_EQ(l.kernel_size, 200);
	ASSERT_OK(fp__cupti_layout_init(&l, 26));
	ASSERT_EQ(l.kernel_size, 208);
	ASSERT_OK(fp__cupti_layout_init(&l, 130001));
	ASSERT_EQ(l.kernel_size, sizeof(struct fake_kernel10));
	ASSERT_EQ(fp__cupti_record_size(&l, 10), 216);
	ASSERT_EQ(fp__cupti_record_size(&l, 3), 216);
	ASSERT_EQ(fp__cupti_record_size(&l, 5), 0);
	ASSERT_EQ(fp__cupti_record_size(&l, 0), 0);
	ASSERT_EQ(fp__cupti_layout_init(NULL, 26), FP_EINVAL);
}

TEST(cupti_records_decode_fields)
{
	struct fake_kernel10 r;
	struct fp_cupti_kernel_record k;
	uint8_t *odd = malloc(sizeof(r) + 1);

	fill(&r, 77);
	ASSERT_OK(fp__cupti_kernel_decode((const uint8_t *)&r, sizeof(r), &k));
	ASSERT_EQ(k.kind, 10);
	ASSERT_EQ(k.registers, 40);
	ASSERT_UEQ(k.start, 1000077);
	ASSERT_UEQ(k.end, 2000077);
	ASSERT_EQ(k.device_id, 1);
	ASSERT_EQ(k.context_id, 2);
	ASSERT_EQ(k.stream_id, 7);
	ASSERT_EQ(k.grid[0], 64);
	ASSERT_EQ(k.grid[1], 2);
	ASSERT_EQ(k.grid[2], 3);
	ASSERT_EQ(k.block[0], 128);
	ASSERT_EQ(k.block[1], 1);
	ASSERT_EQ(k.static_smem, 1024);
	ASSERT_EQ(k.dynamic_smem, 49152);
	ASSERT_EQ(k.correlation, 77);
	ASSERT_UEQ(k.name, 0x1234560);
	ASSERT_UEQ(k.graph_node_id, 99);
	ASSERT_EQ(k.graph_id, 5);

	/* Misaligned input and the smallest acceptable extent both decode the same fields. */
	ASSERT_NOT_NULL(odd);
	memcpy(odd + 1, &r, sizeof(r));
	ASSERT_OK(fp__cupti_kernel_decode(odd + 1, FP__CUPTI_K_MIN_SIZE, &k));
	ASSERT_EQ(k.correlation, 77);
	ASSERT_UEQ(k.graph_node_id, 99);
	free(odd);

	/* The KERNEL kind (serialized) is read the same way. */
	r.kind = 3;
	ASSERT_OK(fp__cupti_kernel_decode((const uint8_t *)&r, sizeof(r), &k));
	ASSERT_EQ(k.kind, 3);
}

TEST(cupti_records_decode_rejects)
{
	struct fake_kernel10 r;
	struct fp_cupti_kernel_record k;

	fill(&r, 1);
	ASSERT_EQ(fp__cupti_kernel_decode((const uint8_t *)&r, FP__CUPTI_K_MIN_SIZE - 1, &k),
		  FP_EFORMAT);
	ASSERT_EQ(fp__cupti_kernel_decode(NULL, sizeof(r), &k), FP_EFORMAT);
	r.kind = 4; /* CUPTI_ACTIVITY_KIND_DRIVER: not a kernel */
	ASSERT_EQ(fp__cupti_kernel_decode((const uint8_t *)&r, sizeof(r), &k), FP_EFORMAT);
	r.kind = 0;
	ASSERT_EQ(fp__cupti_kernel_decode((const uint8_t *)&r, sizeof(r), &k), FP_EFORMAT);
}

struct collect {
	uint32_t corr[64];
	size_t n;
	int fail_at;
};

static int collect_fn(void *arg, const struct fp_cupti_kernel_record *k)
{
	struct collect *c = arg;

	if (c->fail_at >= 0 && (size_t)c->fail_at == c->n)
		return FP_ELIMIT;
	if (c->n < 64)
		c->corr[c->n] = k->correlation;
	c->n++;
	return FP_OK;
}

/* n records of `size` bytes each (216: Kernel10, 208: Kernel9) into a fresh buffer. */
static uint8_t *make_buffer(unsigned n, size_t size, size_t *len)
{
	uint8_t *b = calloc(n ? n : 1, size);
	struct fake_kernel10 r;
	unsigned i;

	for (i = 0; b && i < n; i++) {
		fill(&r, 100 + i);
		memcpy(b + i * size, &r, size);
	}
	*len = n * size;
	return b;
}

TEST(cupti_records_walk_versions)
{
	static const struct {
		uint32_t api;
		size_t size;
	} v[] = {{130001, 216}, {26, 208}, {19, 208}};
	struct fp__cupti_walk_stats st;
	struct fp__cupti_layout l;
	struct fp_diag d;
	size_t i, len;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct collect c = {.fail_at = -1};
		uint8_t *b = make_buffer(10, v[i].size, &len);

		ASSERT_NOT_NULL(b);
		ASSERT_OK(fp__cupti_layout_init(&l, v[i].api));
		ASSERT_OK(fp__cupti_walk(b, len, &l, collect_fn, &c, &st, &d));
		ASSERT_EQ(c.n, 10);
		ASSERT_EQ(c.corr[0], 100);
		ASSERT_EQ(c.corr[9], 109);
		ASSERT_EQ(st.records, 10);
		ASSERT_EQ(st.kernels, 10);
		ASSERT_EQ(st.consumed, len);
		free(b);
	}
}

TEST(cupti_records_walk_wrong_version_detected)
{
	/* 12.8 records read with the 13.0 layout: sizes do not line up, and the walk says so. */
	struct fp__cupti_walk_stats st;
	struct fp__cupti_layout l;
	struct collect c = {.fail_at = -1};
	struct fp_diag d;
	size_t len;
	uint8_t *b = make_buffer(3, 208, &len);

	ASSERT_OK(fp__cupti_layout_init(&l, 130001));
	ASSERT_EQ(fp__cupti_walk(b, len, &l, collect_fn, &c, &st, &d), FP_EFORMAT);
	/* The second step lands 8 bytes into the second record, on a zero field. */
	ASSERT_EQ(c.n, 1);
	ASSERT(d.offset == 216);
	ASSERT(strstr(d.msg, "unknown kind 0") != NULL);
	/* Two 208-byte records read as one 216-byte record and a short rest. */
	c.n = 0;
	ASSERT_OK(fp__cupti_layout_init(&l, 26));
	ASSERT_EQ(fp__cupti_walk(b, 216 + 100, &l, collect_fn, &c, &st, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "needs 208 bytes, 108 left") != NULL);
	free(b);
}

TEST(cupti_records_walk_bad_input)
{
	struct fp__cupti_walk_stats st;
	struct fp__cupti_layout l;
	struct collect c = {.fail_at = -1};
	struct fp_diag d;
	size_t len;
	uint8_t *b = make_buffer(4, 216, &len);
	uint32_t kind = 42;

	ASSERT_OK(fp__cupti_layout_init(&l, 130001));
	/* Empty buffer: nothing, fine. */
	ASSERT_OK(fp__cupti_walk(b, 0, &l, collect_fn, &c, &st, &d));
	ASSERT_EQ(st.records, 0);
	/* Truncated last record. */
	ASSERT_EQ(fp__cupti_walk(b, len - 1, &l, collect_fn, &c, &st, &d), FP_EFORMAT);
	ASSERT_EQ(st.kernels, 3);
	ASSERT_EQ(st.consumed, 3 * 216);
	/* Trailing bytes too short for a kind. */
	c.n = 0;
	ASSERT_EQ(fp__cupti_walk(b, 216 + 3, &l, collect_fn, &c, &st, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "trailing") != NULL);
	ASSERT_EQ(c.n, 1);
	/* An unknown kind in the middle stops the walk there. */
	memcpy(b + 2 * 216, &kind, sizeof(kind));
	c.n = 0;
	ASSERT_EQ(fp__cupti_walk(b, len, &l, collect_fn, &c, &st, &d), FP_EFORMAT);
	ASSERT_EQ(c.n, 2);
	ASSERT(d.offset == 2 * 216);
	ASSERT(strstr(d.msg, "unknown kind 42") != NULL);
	/* Arguments. */
	ASSERT_EQ(fp__cupti_walk(NULL, 8, &l, NULL, NULL, &st, NULL), FP_EINVAL);
	ASSERT_EQ(fp__cupti_walk(b, len, NULL, NULL, NULL, &st, NULL), FP_EINVAL);
	free(b);
}

TEST(cupti_records_walk_callback_error)
{
	struct fp__cupti_layout l;
	struct collect c = {.fail_at = 2};
	size_t len;
	uint8_t *b = make_buffer(5, 216, &len);

	ASSERT_OK(fp__cupti_layout_init(&l, 130001));
	ASSERT_EQ(fp__cupti_walk(b, len, &l, collect_fn, &c, NULL, NULL), FP_ELIMIT);
	ASSERT_EQ(c.n, 2);
	/* No callback: records are counted only. */
	ASSERT_OK(fp__cupti_walk(b, len, &l, NULL, NULL, NULL, NULL));
	free(b);
}

TEST(cupti_records_public_reader)
{
	struct collect c = {.fail_at = -1};
	struct fp_diag d;
	size_t len, consumed = 99;
	uint8_t *b = make_buffer(3, 208, &len);

	ASSERT_OK(fp_cupti_read_records(b, len, 26, collect_fn, &c, &consumed, &d));
	ASSERT_EQ(c.n, 3);
	ASSERT_EQ(consumed, len);
	ASSERT_EQ(fp_cupti_read_records(b, len, 130001, NULL, NULL, &consumed, &d), FP_EFORMAT);
	ASSERT_EQ(consumed, 216);
	ASSERT_EQ(fp_cupti_read_records(b, len, 12, NULL, NULL, &consumed, &d), FP_ENOTSUP);
	ASSERT(strstr(d.msg, "older than CUDA 11.8") != NULL);
	ASSERT_EQ(consumed, 0);
	ASSERT_EQ(fp_cupti_read_records(NULL, 4, 26, NULL, NULL, NULL, NULL), FP_EINVAL);
	ASSERT_OK(fp_cupti_read_records(NULL, 0, 26, NULL, NULL, NULL, NULL));
	free(b);
}

struct real_check {
	size_t n;
	uint64_t prev_start;
	uint32_t last_corr;
	int bad;
};

static int real_fn(void *arg, const struct fp_cupti_kernel_record *k)
{
	struct real_check *c = arg;

	c->n++;
	/* what a CUDA 13 CUPTI wrote on the H200 for kernels it timed */
	if (k->kind != 10 || k->start == 0 || k->end <= k->start ||
	    k->end - k->start > 1000000000ull || k->grid[0] < 1 || k->grid[1] < 1 ||
	    k->grid[2] < 1 || k->block[0] < 1 || k->block[0] > 1024 || k->registers == 0 ||
	    k->registers > 255 || k->name == 0 || k->correlation == 0 ||
	    k->correlation <= c->last_corr || k->graph_node_id != 0)
		c->bad++;
	c->last_corr = k->correlation;
	c->prev_start = k->start;
	return FP_OK;
}

/* A real activity buffer, captured on the lent H200 (CUPTI 13.0.1, API 130001; add, softmax and
 * matmul under the Profiler, tests/gpu/test_cupti_gpu.py::test_capture_raw_records): every
 * record of it is a kernel record this reader decodes whole, with plausible fields. */
TEST(cupti_records_real_h200_capture)
{
	struct real_check c = {0};
	struct fp_diag d;
	size_t len = 0, consumed = 0;
	FILE *f = fopen(fpt_data_path("cupti/h200-130001-kernels.rec"), "rb");
	uint8_t *b;

	ASSERT_NOT_NULL(f);
	ASSERT_EQ(fseek(f, 0, SEEK_END), 0);
	len = (size_t)ftell(f);
	ASSERT_EQ(fseek(f, 0, SEEK_SET), 0);
	b = malloc(len);
	ASSERT_NOT_NULL(b);
	ASSERT_EQ(fread(b, 1, len, f), len);
	fclose(f);
	ASSERT_OK(fp_cupti_read_records(b, len, 130001, real_fn, &c, &consumed, &d));
	ASSERT_EQ(consumed, len);
	ASSERT_EQ(c.n, 45);
	ASSERT_EQ(len, 45 * 216);
	ASSERT_EQ(c.bad, 0);
	/* read as the older layout, the same bytes do not pass as kernel records */
	ASSERT_EQ(fp_cupti_read_records(b, len, 26, NULL, NULL, &consumed, &d), FP_EFORMAT);
	free(b);
}
