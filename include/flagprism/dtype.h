/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Element types of the tensors FlagPrism records, dumps and reports. The numeric codes are part of
 * the debugger record format (docs/formats/record-format.md, "Dtype codes") and of every artifact that
 * stores a dtype, so they never change; new types only get new codes. This header also holds the
 * scalar conversions the decoders need for 16-bit and 8-bit floats. It does not describe layouts,
 * strides or byte order (everything here is a single host-order scalar).
 */
#ifndef FLAGPRISM_DTYPE_H
#define FLAGPRISM_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Dtype codes. 0 is never a valid dtype (FP_DTYPE_UNKNOWN marks "not set"). Codes 1..16 match the
 * record format; FP_DTYPE_LAST is the highest valid code.
 */
enum fp_dtype {
	FP_DTYPE_UNKNOWN = 0, /* not a dtype; what lookups of bad codes give back */
	FP_DTYPE_BOOL = 1,    /* Triton int1; stored as one byte, 0 or 1 */
	FP_DTYPE_INT8 = 2,
	FP_DTYPE_INT16 = 3,
	FP_DTYPE_INT32 = 4,
	FP_DTYPE_INT64 = 5,
	FP_DTYPE_UINT8 = 6,
	FP_DTYPE_UINT16 = 7,
	FP_DTYPE_UINT32 = 8,
	FP_DTYPE_UINT64 = 9,
	FP_DTYPE_FLOAT16 = 10,  /* IEEE 754 binary16 */
	FP_DTYPE_BFLOAT16 = 11, /* upper half of a binary32 */
	FP_DTYPE_FLOAT32 = 12,
	FP_DTYPE_FLOAT64 = 13,
	FP_DTYPE_FLOAT8E4NV = 14, /* e4m3 "fn": bias 7, no infinities, S.1111.111 is NaN */
	FP_DTYPE_FLOAT8E5 = 15,   /* e5m2: bias 15, IEEE-like infinities and NaNs */
	FP_DTYPE_POINTER = 16,    /* a device address; 8 bytes */
};

#define FP_DTYPE_LAST FP_DTYPE_POINTER

/** True if `code` is one of the valid dtype codes 1..FP_DTYPE_LAST. */
FP_EXTERN bool fp_dtype_valid(int code);

/**
 * Canonical lower-case name: "bool", "int8", ..., "float16", "bfloat16", "float32", "float64",
 * "float8e4nv", "float8e5", "pointer". "unknown" for anything else. Never NULL; static storage.
 */
FP_EXTERN const char *fp_dtype_name(enum fp_dtype t);

/**
 * Look a dtype up by name. Accepts the canonical names above and Triton's short spellings
 * ("i1", "i8".."i64", "u8".."u64", "fp16", "bf16", "fp32", "fp64", "fp8e4nv", "fp8e5",
 * "int1"). Returns FP_OK and sets *out, FP_ENOENT if the name is unknown (*out untouched) or
 * FP_EINVAL if an argument is NULL.
 */
FP_EXTERN int fp_dtype_from_name(const char *name, enum fp_dtype *out);

/** Size of one element in bytes (1, 2, 4 or 8); 0 for an invalid dtype. */
FP_EXTERN size_t fp_dtype_size(enum fp_dtype t);

/** True for the floating types: float16, bfloat16, float32, float64 and both float8 types. */
FP_EXTERN bool fp_dtype_is_float(enum fp_dtype t);

/** True for the integer types int8..int64 and uint8..uint64 (not bool, not pointer). */
FP_EXTERN bool fp_dtype_is_int(enum fp_dtype t);

/**
 * True if values of the type can be negative: the signed integers and every floating type.
 * False for bool, the unsigned integers, pointers and invalid dtypes.
 */
FP_EXTERN bool fp_dtype_is_signed(enum fp_dtype t);

/*
 * Scalar conversions from raw bit patterns (as stored in memory, already in host order). All are
 * exact: every value of the narrow type is representable in the wide one, and NaNs stay NaNs
 * (their payload bits are kept where the wide format has room, and the sign is kept).
 */

/** IEEE binary16 bits to double, exactly (subnormals, infinities, NaNs included). */
FP_EXTERN double fp_half_to_double(uint16_t h);

/** IEEE binary16 bits to float, exactly. */
FP_EXTERN float fp_half_to_float(uint16_t h);

/** bfloat16 bits to float, exactly: the bits become the upper half of a binary32. */
FP_EXTERN float fp_bf16_to_float(uint16_t b);

/** bfloat16 bits to the binary32 bit pattern of the same value (`(uint32_t)b << 16`). */
FP_EXTERN uint32_t fp_bf16_to_f32_bits(uint16_t b);

/** float8 e4m3fn (Triton fp8e4nv) bits to float, exactly; 0x7f and 0xff are NaN. */
FP_EXTERN float fp_fp8e4nv_to_float(uint8_t v);

/** float8 e5m2 (Triton fp8e5) bits to float, exactly; 0x7c is +Inf, 0x7d..0x7f NaN. */
FP_EXTERN float fp_fp8e5_to_float(uint8_t v);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_DTYPE_H */
