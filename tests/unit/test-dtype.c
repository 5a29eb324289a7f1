/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the dtype table and the narrow-float conversions. The conversions are checked
 * exhaustively against a reference written with ldexp(), so that the bit-twiddling in dtype.c
 * and the arithmetic here have to agree on every one of the 2^16 or 2^8 inputs.
 */
#include <math.h>
#include <stdint.h>

#include <flagprism/dtype.h>
#include <flagprism/status.h>

#include "test.h"

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static uint64_t f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* Value of a small IEEE-style float from its fields, by arithmetic (not by bit placement). */
static double ref_small(unsigned sign, unsigned e, unsigned m, int mbits, int bias)
{
	double v;

	if (e == 0)
		v = ldexp((double)m, 1 - bias - mbits);
	else
		v = ldexp(1.0 + ldexp((double)m, -mbits), (int)e - bias);
	return sign ? -v : v;
}

TEST(dtype_codes_names_sizes)
{
	static const struct {
		enum fp_dtype t;
		int code;
		const char *name;
		size_t size;
	} want[] = {
		{FP_DTYPE_BOOL, 1, "bool", 1},          {FP_DTYPE_INT8, 2, "int8", 1},
		{FP_DTYPE_INT16, 3, "int16", 2},        {FP_DTYPE_INT32, 4, "int32", 4},
		{FP_DTYPE_INT64, 5, "int64", 8},        {FP_DTYPE_UINT8, 6, "uint8", 1},
		{FP_DTYPE_UINT16, 7, "uint16", 2},      {FP_DTYPE_UINT32, 8, "uint32", 4},
		{FP_DTYPE_UINT64, 9, "uint64", 8},      {FP_DTYPE_FLOAT16, 10, "float16", 2},
		{FP_DTYPE_BFLOAT16, 11, "bfloat16", 2}, {FP_DTYPE_FLOAT32, 12, "float32", 4},
		{FP_DTYPE_FLOAT64, 13, "float64", 8},   {FP_DTYPE_FLOAT8E4NV, 14, "float8e4nv", 1},
		{FP_DTYPE_FLOAT8E5, 15, "float8e5", 1}, {FP_DTYPE_POINTER, 16, "pointer", 8},
	};
	size_t i;

	ASSERT_EQ(FP_DTYPE_LAST, 16);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		enum fp_dtype back = FP_DTYPE_UNKNOWN;

		ASSERT_EQ(want[i].t, want[i].code);
		ASSERT(fp_dtype_valid(want[i].code));
		ASSERT_STREQ(fp_dtype_name(want[i].t), want[i].name);
		ASSERT_UEQ(fp_dtype_size(want[i].t), want[i].size);
		ASSERT_OK(fp_dtype_from_name(want[i].name, &back));
		ASSERT_EQ(back, want[i].t);
	}
	ASSERT(!fp_dtype_valid(0));
	ASSERT(!fp_dtype_valid(17));
	ASSERT(!fp_dtype_valid(-1));
	ASSERT_STREQ(fp_dtype_name(FP_DTYPE_UNKNOWN), "unknown");
	ASSERT_STREQ(fp_dtype_name((enum fp_dtype)17), "unknown");
	ASSERT_STREQ(fp_dtype_name((enum fp_dtype)(-5)), "unknown");
	ASSERT_UEQ(fp_dtype_size((enum fp_dtype)99), 0);
	ASSERT_UEQ(fp_dtype_size(FP_DTYPE_UNKNOWN), 0);
}

TEST(dtype_from_name)
{
	static const struct {
		const char *name;
		enum fp_dtype t;
	} aliases[] = {
		{"i1", FP_DTYPE_BOOL},
		{"int1", FP_DTYPE_BOOL},
		{"i8", FP_DTYPE_INT8},
		{"i16", FP_DTYPE_INT16},
		{"i32", FP_DTYPE_INT32},
		{"i64", FP_DTYPE_INT64},
		{"u8", FP_DTYPE_UINT8},
		{"u16", FP_DTYPE_UINT16},
		{"u32", FP_DTYPE_UINT32},
		{"u64", FP_DTYPE_UINT64},
		{"fp16", FP_DTYPE_FLOAT16},
		{"bf16", FP_DTYPE_BFLOAT16},
		{"fp32", FP_DTYPE_FLOAT32},
		{"fp64", FP_DTYPE_FLOAT64},
		{"fp8e4nv", FP_DTYPE_FLOAT8E4NV},
		{"fp8e5", FP_DTYPE_FLOAT8E5},
		{"ptr", FP_DTYPE_POINTER},
	};
	enum fp_dtype t = FP_DTYPE_INT8;
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		ASSERT_OK(fp_dtype_from_name(aliases[i].name, &t));
		ASSERT_EQ(t, aliases[i].t);
	}
	t = FP_DTYPE_INT8;
	ASSERT_EQ(fp_dtype_from_name("float128", &t), FP_ENOENT);
	ASSERT_EQ(fp_dtype_from_name("", &t), FP_ENOENT);
	ASSERT_EQ(fp_dtype_from_name("unknown", &t), FP_ENOENT);
	ASSERT_EQ(fp_dtype_from_name("Float32", &t), FP_ENOENT);
	ASSERT_EQ(t, FP_DTYPE_INT8); /* untouched on failure */
	ASSERT_EQ(fp_dtype_from_name(NULL, &t), FP_EINVAL);
	ASSERT_EQ(fp_dtype_from_name("fp32", NULL), FP_EINVAL);
}

TEST(dtype_classes)
{
	int c;

	for (c = 0; c <= 20; c++) {
		enum fp_dtype t = (enum fp_dtype)c;
		bool flt = c >= FP_DTYPE_FLOAT16 && c <= FP_DTYPE_FLOAT8E5;
		bool sint = c >= FP_DTYPE_INT8 && c <= FP_DTYPE_INT64;
		bool uint = c >= FP_DTYPE_UINT8 && c <= FP_DTYPE_UINT64;

		ASSERT_EQ(fp_dtype_is_float(t), flt);
		ASSERT_EQ(fp_dtype_is_int(t), sint || uint);
		ASSERT_EQ(fp_dtype_is_signed(t), sint || flt);
	}
	ASSERT(!fp_dtype_is_signed(FP_DTYPE_BOOL));
	ASSERT(!fp_dtype_is_int(FP_DTYPE_BOOL));
	ASSERT(!fp_dtype_is_int(FP_DTYPE_POINTER));
	ASSERT(!fp_dtype_is_float(FP_DTYPE_POINTER));
}

TEST(dtype_half_known_values)
{
	ASSERT_DEQ(fp_half_to_double(0x3c00), 1.0);
	ASSERT_DEQ(fp_half_to_double(0xc000), -2.0);
	ASSERT_DEQ(fp_half_to_double(0x7bff), 65504.0);
	ASSERT_DEQ(fp_half_to_double(0x0001), ldexp(1.0, -24));
	ASSERT_DEQ(fp_half_to_double(0x03ff), ldexp(1023.0, -24));
	ASSERT_DEQ(fp_half_to_double(0x0400), ldexp(1.0, -14));
	ASSERT_DEQ(fp_half_to_double(0x3555), 0.333251953125);
	ASSERT_UEQ(f64_bits(fp_half_to_double(0x8000)), f64_bits(-0.0));
	ASSERT(isinf(fp_half_to_double(0x7c00)) && fp_half_to_double(0x7c00) > 0);
	ASSERT(isinf(fp_half_to_double(0xfc00)) && fp_half_to_double(0xfc00) < 0);
	ASSERT(isnan(fp_half_to_double(0x7e00)));
	ASSERT(isnan(fp_half_to_double(0x7c01)));
	ASSERT(signbit(fp_half_to_double(0xfe00)));
}

TEST(dtype_half_exhaustive)
{
	uint32_t h;

	for (h = 0; h <= 0xffff; h++) {
		unsigned s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
		float f = fp_half_to_float((uint16_t)h);
		double d = fp_half_to_double((uint16_t)h);

		if (e == 0x1f) {
			ASSERT(m ? isnan(f) : isinf(f));
			ASSERT(m ? isnan(d) : isinf(d));
			ASSERT_EQ(!!signbit(f), s);
			/* NaN payload moves to the top of the float mantissa. */
			ASSERT_UEQ(f32_bits(f), (uint32_t)s << 31 | 0x7f800000u | m << 13);
			continue;
		}
		ASSERT_UEQ(f64_bits(d), f64_bits(ref_small(s, e, m, 10, 15)));
		ASSERT_UEQ(f32_bits(f), f32_bits((float)ref_small(s, e, m, 10, 15)));
	}
}

TEST(dtype_bf16)
{
	uint32_t b;

	ASSERT_DEQ(fp_bf16_to_float(0x3f80), 1.0);
	ASSERT_DEQ(fp_bf16_to_float(0xc040), -3.0);
	ASSERT_DEQ(fp_bf16_to_float(0x4049), 3.140625);
	ASSERT_DEQ(fp_bf16_to_float(0x0001), ldexp(1.0, -133));
	ASSERT_DEQ(fp_bf16_to_float(0x7f7f), ldexp(255.0, 120));
	ASSERT(isinf(fp_bf16_to_float(0x7f80)));
	ASSERT(isnan(fp_bf16_to_float(0x7fc0)));
	ASSERT_UEQ(f32_bits(fp_bf16_to_float(0x8000)), 0x80000000u);
	for (b = 0; b <= 0xffff; b++) {
		unsigned s = b >> 15, e = (b >> 7) & 0xff, m = b & 0x7f;
		float f = fp_bf16_to_float((uint16_t)b);

		ASSERT_UEQ(fp_bf16_to_f32_bits((uint16_t)b), b << 16);
		ASSERT_UEQ(f32_bits(f), b << 16);
		if (e != 0xff)
			ASSERT_DEQ(f, ref_small(s, e, m, 7, 127));
	}
}

TEST(dtype_fp8)
{
	unsigned v;

	ASSERT_DEQ(fp_fp8e4nv_to_float(0x38), 1.0);
	ASSERT_DEQ(fp_fp8e4nv_to_float(0x7e), 448.0);
	ASSERT_DEQ(fp_fp8e4nv_to_float(0xfe), -448.0);
	ASSERT_DEQ(fp_fp8e4nv_to_float(0x01), ldexp(1.0, -9));
	ASSERT(isnan(fp_fp8e4nv_to_float(0x7f)));
	ASSERT(isnan(fp_fp8e4nv_to_float(0xff)));
	ASSERT_DEQ(fp_fp8e5_to_float(0x3c), 1.0);
	ASSERT_DEQ(fp_fp8e5_to_float(0x7b), 57344.0);
	ASSERT_DEQ(fp_fp8e5_to_float(0x01), ldexp(1.0, -16));
	ASSERT(isinf(fp_fp8e5_to_float(0x7c)) && fp_fp8e5_to_float(0x7c) > 0);
	ASSERT(isinf(fp_fp8e5_to_float(0xfc)) && fp_fp8e5_to_float(0xfc) < 0);
	for (v = 0x7d; v <= 0x7f; v++)
		ASSERT(isnan(fp_fp8e5_to_float((uint8_t)v)));

	for (v = 0; v <= 0xff; v++) {
		unsigned s = v >> 7;
		float a = fp_fp8e4nv_to_float((uint8_t)v), b = fp_fp8e5_to_float((uint8_t)v);

		if ((v & 0x7f) != 0x7f)
			ASSERT_UEQ(f32_bits(a),
				   f32_bits((float)ref_small(s, (v >> 3) & 0xf, v & 7, 3, 7)));
		if (((v >> 2) & 0x1f) != 0x1f)
			ASSERT_UEQ(f32_bits(b),
				   f32_bits((float)ref_small(s, (v >> 2) & 0x1f, v & 3, 2, 15)));
		ASSERT_EQ(!!signbit(a), s);
		ASSERT_EQ(!!signbit(b), s);
	}
}
