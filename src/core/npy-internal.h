/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writer for NumPy `.npy` files (format version 1.0), used for full tensor and address dumps so
 * that `numpy.load()` reads them with no FlagPrism code at all, and a reader of the same files
 * (for the HTML report's histograms of dumps). Output is byte-identical to what
 * current `numpy.save()` writes for the same array (tested against NumPy 2.4): same header
 * dictionary, same spare space, same 64-byte alignment of the data. C order only; elements are
 * written in host byte order, which the header states. The reader accepts the simple arrays
 * these files hold (no structured or object dtypes, no pickles).
 *
 * dtype mapping (docs/formats/npy.md has the full table):
 *   bool '|b1', int8 '|i1', uint8 '|u1', int16..int64 '<i2' '<i4' '<i8',
 *   uint16..uint64 '<u2' '<u4' '<u8', float16 '<f2', float32 '<f4', float64 '<f8',
 *   bfloat16 -> '<f4': NumPy has no bfloat16, so the raw 16-bit patterns given are widened to
 *   float32 (each bf16 is exactly the upper half of a float32, so this loses nothing, NaN
 *   payloads and signed zeros included); the file is then twice the size of the input.
 *   float8e4nv, float8e5 and pointer: FP_ENOTSUP. Callers write pointer dumps as int64 and
 *   float8 dumps as the float32/float64 values they decoded.
 */
#ifndef FP_CORE_NPY_H
#define FP_CORE_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/dtype.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

/* Most dimensions an array may have (NumPy 1.x's limit; NumPy 2 allows more). */
#define FP_NPY_MAX_NDIM 32u
/* Upper bound on the header size for any valid dtype and shape (magic and padding included). */
#define FP_NPY_HEADER_MAX 1024u

/**
 * The NumPy type string stored for `t` ("<f4", "|b1", ...; '>' instead of '<' on a big-endian
 * host), static storage. bfloat16 gives the float32 descr. NULL for dtypes that cannot be
 * written (float8, pointer, invalid codes).
 */
const char *fp_npy_descr(enum fp_dtype t);

/**
 * Build the header (magic, version 1.0, length, dictionary, padding) for an array of dtype `t`
 * and the given shape into `buf` (`size` bytes, FP_NPY_HEADER_MAX always suffices); set *len
 * to its length, a multiple of 64. `shape` may be NULL when ndim is 0 (a scalar). Returns
 * FP_OK, FP_ENOTSUP (dtype not writable), FP_EINVAL (invalid dtype, ndim > FP_NPY_MAX_NDIM,
 * NULL argument) or FP_ELIMIT (`size` too small). The header is not NUL-terminated.
 */
int fp_npy_header(char *buf, size_t size, enum fp_dtype t, const uint64_t *shape, unsigned ndim,
		  size_t *len);

/**
 * Write `data` as a .npy file at `path`, replacing any file there. `data` holds numel elements
 * of `t` in C order and host byte order (bfloat16: raw bit patterns), numel being the product
 * of the `ndim` dimensions in `shape` (1 for ndim 0); `nbytes` must equal numel *
 * fp_dtype_size(t). `data` may be NULL when nbytes is 0. The file is written as
 * include/flagprism/outfile.h says: under a temporary name in the same directory and renamed
 * into place, so no reader sees a partial file, and a failure leaves no temporary file behind
 * (a device or FIFO is written through, a symbolic link's target written). New files get mode
 * 0666 minus the umask.
 *
 * Returns FP_OK, FP_EINVAL (bad dtype, shape or size; NULL path; a destination that is
 * refused, such as a directory), FP_ENOTSUP (float8, pointer), FP_ENOMEM or FP_EIO. `diag`
 * (may be NULL) names the path and the reason.
 */
int fp_npy_write_file(const char *path, enum fp_dtype t, const uint64_t *shape, unsigned ndim,
		      const void *data, size_t nbytes, struct fp_diag *diag);

/**
 * Append the same bytes as fp_npy_write_file() would write to `sb`. Same argument rules.
 * Returns FP_OK, FP_EINVAL, FP_ENOTSUP, FP_ENOMEM or FP_ELIMIT (the strbuf's cap); on failure
 * `sb` is unchanged.
 */
int fp_npy_write_strbuf(struct fp_strbuf *sb, enum fp_dtype t, const uint64_t *shape, unsigned ndim,
			const void *data, size_t nbytes);

/** A parsed .npy file: a view into the caller's buffer (nothing is allocated or copied). */
struct fp_npy_view {
	enum fp_dtype dtype; /* float16/32/64, bool, signed and unsigned 8..64-bit integers */
	unsigned ndim;
	uint64_t shape[FP_NPY_MAX_NDIM];
	uint64_t numel;     /* product of the shape (1 for a scalar) */
	bool fortran_order; /* data is in Fortran order (elements are still all there) */
	const void *data;   /* numel * fp_dtype_size(dtype) bytes, borrowed, maybe unaligned */
	size_t nbytes;
};

/**
 * Parse `len` bytes of a .npy file (format versions 1.0, 2.0 and 3.0): the magic, the header
 * dictionary ('descr', 'fortran_order', 'shape' in any order; a Python literal of strings,
 * booleans and a tuple of integers) and the data, whose length must be exactly what the shape
 * and dtype say. `descr` must be one of the type strings fp_npy_descr() writes in host byte order
 * ('=' is accepted for host order too). FP_OK and *out; FP_EFORMAT (diag names the byte offset
 * and what is wrong), FP_ENOTSUP (another byte order or dtype, e.g. '>f4', '<c8', '|O'),
 * FP_EINVAL (NULL arguments). *out is untouched on failure.
 */
int fp_npy_parse(const void *buf, size_t len, struct fp_npy_view *out, struct fp_diag *diag);

/** Element `i` of a parsed array as a double (integers above 2^53 round). */
double fp_npy_get(const struct fp_npy_view *a, uint64_t i);

#endif /* FP_CORE_NPY_H */
