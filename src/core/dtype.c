/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dtype table (names, sizes, classes) and exact scalar conversions from the narrow float
 * formats. Everything here is pure and allocation-free, so decoders may call it anywhere. It does
 * not convert between integer types or round wide floats to narrow ones: FlagPrism only ever
 * widens what the device stored.
 */
#include "fp-setup.h"

#include <flagprism/dtype.h>

enum dtype_class {
	C_NONE,
	C_BOOL,
	C_SINT,
	C_UINT,
	C_FLOAT,
	C_PTR
};

struct dtype_info {
	const char *name;
	const char *triton; /* Triton's short spelling, also accepted by fp_dtype_from_name */
	uint8_t size;
	uint8_t cls;
};

static const struct dtype_info dtypes[FP_DTYPE_LAST + 1] = {
	[FP_DTYPE_UNKNOWN] = {"unknown", NULL, 0, C_NONE},
	[FP_DTYPE_BOOL] = {"bool", "i1", 1, C_BOOL},
	[FP_DTYPE_INT8] = {"int8", "i8", 1, C_SINT},
	[FP_DTYPE_INT16] = {"int16", "i16", 2, C_SINT},
	[FP_DTYPE_INT32] = {"int32", "i32", 4, C_SINT},
	[FP_DTYPE_INT64] = {"int64", "i64", 8, C_SINT},
	[FP_DTYPE_UINT8] = {"uint8", "u8", 1, C_UINT},
	[FP_DTYPE_UINT16] = {"uint16", "u16", 2, C_UINT},
	[FP_DTYPE_UINT32] = {"uint32", "u32", 4, C_UINT},
	[FP_DTYPE_UINT64] = {"uint64", "u64", 8, C_UINT},
	[FP_DTYPE_FLOAT16] = {"float16", "fp16", 2, C_FLOAT},
	[FP_DTYPE_BFLOAT16] = {"bfloat16", "bf16", 2, C_FLOAT},
	[FP_DTYPE_FLOAT32] = {"float32", "fp32", 4, C_FLOAT},
	[FP_DTYPE_FLOAT64] = {"float64", "fp64", 8, C_FLOAT},
	[FP_DTYPE_FLOAT8E4NV] = {"float8e4nv", "fp8e4nv", 1, C_FLOAT},
	[FP_DTYPE_FLOAT8E5] = {"float8e5", "fp8e5", 1, C_FLOAT},
	[FP_DTYPE_POINTER] = {"pointer", "ptr", 8, C_PTR},
};

bool fp_dtype_valid(int code)
{
	return code >= 1 && code <= FP_DTYPE_LAST;
}

/* Enum values outside the table are possible (casts from record words): map them to 0. */
static const struct dtype_info *info(enum fp_dtype t)
{
	return &dtypes[fp_dtype_valid((int)t) ? (int)t : 0];
}

const char *fp_dtype_name(enum fp_dtype t)
{
	return info(t)->name;
}

int fp_dtype_from_name(const char *name, enum fp_dtype *out)
{
	int i;

	if (!name || !out)
		return FP_EINVAL;
	for (i = 1; i <= FP_DTYPE_LAST; i++) {
		if (!strcmp(name, dtypes[i].name) || !strcmp(name, dtypes[i].triton)) {
			*out = (enum fp_dtype)i;
			return FP_OK;
		}
	}
	if (!strcmp(name, "int1")) {
		*out = FP_DTYPE_BOOL;
		return FP_OK;
	}
	return FP_ENOENT;
}

size_t fp_dtype_size(enum fp_dtype t)
{
	return info(t)->size;
}

bool fp_dtype_is_float(enum fp_dtype t)
{
	return info(t)->cls == C_FLOAT;
}

bool fp_dtype_is_int(enum fp_dtype t)
{
	return info(t)->cls == C_SINT || info(t)->cls == C_UINT;
}

bool fp_dtype_is_signed(enum fp_dtype t)
{
	return info(t)->cls == C_SINT || info(t)->cls == C_FLOAT;
}

/*
 * Binary32 bits of a small float given as sign, biased exponent and mantissa fields. Handles
 * zero, subnormals (renormalised: every small-format subnormal is a binary32 normal) and normal
 * numbers; the callers deal with their own Inf/NaN encodings.
 */
static uint32_t small_to_f32_bits(uint32_t sign, uint32_t e, uint32_t m, int mbits, int bias)
{
	int shift = 0;

	if (e == 0) {
		if (m == 0)
			return sign << 31;
		while (!(m & (1u << mbits))) {
			m <<= 1;
			shift++;
		}
		m &= (1u << mbits) - 1;
		return sign << 31 | (uint32_t)(1 - bias - shift + 127) << 23 | m << (23 - mbits);
	}
	return sign << 31 | (uint32_t)((int)e - bias + 127) << 23 | m << (23 - mbits);
}

static float f32_from_bits(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

float fp_half_to_float(uint16_t h)
{
	uint32_t sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f) /* Inf (m == 0) or NaN; the payload moves to the top of the mantissa */
		return f32_from_bits(sign << 31 | 0xffu << 23 | m << 13);
	return f32_from_bits(small_to_f32_bits(sign, e, m, 10, 15));
}

double fp_half_to_double(uint16_t h)
{
	return (double)fp_half_to_float(h);
}

uint32_t fp_bf16_to_f32_bits(uint16_t b)
{
	return (uint32_t)b << 16;
}

float fp_bf16_to_float(uint16_t b)
{
	return f32_from_bits(fp_bf16_to_f32_bits(b));
}

float fp_fp8e4nv_to_float(uint8_t v)
{
	uint32_t sign = v >> 7, e = (v >> 3) & 0xf, m = v & 0x7;

	/* "fn" variant: the all-ones exponent still holds normal numbers, except the one NaN. */
	if (e == 0xf && m == 0x7)
		return f32_from_bits(sign << 31 | 0x7fc00000u);
	return f32_from_bits(small_to_f32_bits(sign, e, m, 3, 7));
}

float fp_fp8e5_to_float(uint8_t v)
{
	uint32_t sign = v >> 7, e = (v >> 2) & 0x1f, m = v & 0x3;

	if (e == 0x1f)
		return f32_from_bits(sign << 31 | 0xffu << 23 | m << 21);
	return f32_from_bits(small_to_f32_bits(sign, e, m, 2, 15));
}
