/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading CUPTI activity records: the record layout per library version, a kernel-record decoder
 * that reads fixed offsets with memcpy and never past FP__CUPTI_K_MIN_SIZE, and a walker over a
 * raw buffer that sizes each record itself and refuses anything it cannot size. The backend
 * steps through CUPTI's buffers with cuptiActivityGetNextRecord and decodes each record here;
 * the walker is the same decoding over bytes nobody vouches for (the fuzz target, tests). It does
 * not convert clocks or attribute anything: cupti.c does.
 */
#include "fp-setup.h"

#include "backend/cuda/cupti-internal.h"

int fp__cupti_layout_init(struct fp__cupti_layout *l, uint32_t api_version)
{
	if (!l)
		return FP_EINVAL;
	memset(l, 0, sizeof(*l));
	if (api_version < FP__CUPTI_API_MIN)
		return FP_ENOTSUP;
	l->api_version = api_version;
	/*
	 * 13.0 reports CUpti_ActivityKernel10; 12.0 to 12.9 (API 19 to 26) Kernel9; 11.8 (API 18)
	 * Kernel8, 200 bytes. All three keep the offsets cupti-abi.h lists.
	 */
	if (api_version >= FP__CUPTI_API_13_0)
		l->kernel_size = FP__CUPTI_K_SIZE_V10;
	else if (api_version >= 19)
		l->kernel_size = FP__CUPTI_K_SIZE_V9;
	else
		l->kernel_size = 200;
	return FP_OK;
}

size_t fp__cupti_record_size(const struct fp__cupti_layout *l, uint32_t kind)
{
	if (!l)
		return 0;
	switch (kind) {
	case FP__CUPTI_ACTIVITY_KIND_KERNEL:
	case FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return l->kernel_size;
	default:
		return 0;
	}
}

static uint16_t rd16(const uint8_t *p, size_t off)
{
	uint16_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static int32_t rds32(const uint8_t *p, size_t off)
{
	int32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

int fp__cupti_kernel_decode(const uint8_t *rec, size_t avail, struct fp_cupti_kernel_record *out)
{
	uintptr_t name;
	uint32_t kind;
	int i;

	if (!rec || !out || avail < FP__CUPTI_K_MIN_SIZE)
		return FP_EFORMAT;
	kind = rd32(rec, FP__CUPTI_K_KIND);
	if (kind != FP__CUPTI_ACTIVITY_KIND_KERNEL &&
	    kind != FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		return FP_EFORMAT;
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	out->registers = rd16(rec, FP__CUPTI_K_REGISTERS);
	out->start = rd64(rec, FP__CUPTI_K_START);
	out->end = rd64(rec, FP__CUPTI_K_END);
	out->device_id = rd32(rec, FP__CUPTI_K_DEVICE_ID);
	out->context_id = rd32(rec, FP__CUPTI_K_CONTEXT_ID);
	out->stream_id = rd32(rec, FP__CUPTI_K_STREAM_ID);
	for (i = 0; i < 3; i++) {
		out->grid[i] = rds32(rec, FP__CUPTI_K_GRID_X + 4 * (size_t)i);
		out->block[i] = rds32(rec, FP__CUPTI_K_BLOCK_X + 4 * (size_t)i);
	}
	out->static_smem = rds32(rec, FP__CUPTI_K_STATIC_SMEM);
	out->dynamic_smem = rds32(rec, FP__CUPTI_K_DYNAMIC_SMEM);
	out->correlation = rd32(rec, FP__CUPTI_K_CORRELATION);
	/* A pointer-sized field: copied as bytes, kept as a number. */
	memcpy(&name, rec + FP__CUPTI_K_NAME, sizeof(name));
	out->name = (uint64_t)name;
	out->graph_node_id = rd64(rec, FP__CUPTI_K_GRAPH_NODE_ID);
	out->graph_id = rd32(rec, FP__CUPTI_K_GRAPH_ID);
	return FP_OK;
}

int fp__cupti_walk(const uint8_t *buf, size_t valid, const struct fp__cupti_layout *l,
		   fp_cupti_record_fn fn, void *arg, struct fp__cupti_walk_stats *st,
		   struct fp_diag *diag)
{
	struct fp__cupti_walk_stats local;
	struct fp_cupti_kernel_record k;
	size_t off = 0, size;
	uint32_t kind;
	int rc = FP_OK;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if ((!buf && valid) || !l)
		return FP_EINVAL;
	while (off < valid) {
		if (valid - off < sizeof(uint32_t)) {
			rc = fp_diag_set(diag, FP_EFORMAT, off,
					 "%zu trailing bytes are too short for a record kind",
					 valid - off);
			break;
		}
		kind = rd32(buf, off);
		size = fp__cupti_record_size(l, kind);
		if (!size) {
			rc = fp_diag_set(diag, FP_EFORMAT, off,
					 "activity record of unknown kind %" PRIu32, kind);
			break;
		}
		if (size > valid - off) {
			rc = fp_diag_set(diag, FP_EFORMAT, off,
					 "activity record of kind %" PRIu32 " needs %zu bytes, "
					 "%zu left",
					 kind, size, valid - off);
			break;
		}
		st->records++;
		if (fp__cupti_kernel_decode(buf + off, size, &k) == FP_OK) {
			st->kernels++;
			if (fn) {
				rc = fn(arg, &k);
				if (rc) {
					off += size;
					break;
				}
			}
		}
		/* Sizes are multiples of 8, so the next record stays 8-byte aligned. */
		off += size;
	}
	st->consumed = off < valid ? off : valid;
	return rc;
}

int fp_cupti_read_records(const void *buf, size_t len, uint32_t api_version, fp_cupti_record_fn fn,
			  void *arg, size_t *consumed, struct fp_diag *diag)
{
	struct fp__cupti_walk_stats st = {0};
	struct fp__cupti_layout l;
	int rc;

	if (consumed)
		*consumed = 0;
	if (!buf && len)
		return FP_EINVAL;
	rc = fp__cupti_layout_init(&l, api_version);
	if (rc)
		return fp_diag_set(diag, rc, 0,
				   "CUPTI API version %" PRIu32 " is older than CUDA 11.8's (%u)",
				   api_version, FP__CUPTI_API_MIN);
	rc = fp__cupti_walk(buf, len, &l, fn, arg, &st, diag);
	if (consumed)
		*consumed = st.consumed;
	return rc;
}
