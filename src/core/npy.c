/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The .npy writer: header formatting that mirrors numpy.save() byte for byte, and output to a
 * file (through fp_outfile: temporary name + rename, or written through a device) or a strbuf. bfloat16 is widened to float32 in fixed-size
 * chunks, so writing never allocates in proportion to the array. Reading .npy is not our job.
 */
#include "fp-setup.h"

#include <errno.h>

#include <flagprism/outfile.h>

#include "core/npy-internal.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREFIX_LEN 10 /* magic, two version bytes, little-endian u16 header length */
#define NPY_ALIGN 64
/* numpy.save leaves room for the first dimension to grow to this many digits in place. */
#define NPY_GROWTH_DIGITS 21
/* bfloat16 elements widened per chunk. */
#define BF16_CHUNK 2048

static bool host_little_endian(void)
{
	const uint16_t one = 1;
	unsigned char first;

	memcpy(&first, &one, 1);
	return first == 1;
}

const char *fp_npy_descr(enum fp_dtype t)
{
	static const char *const le[FP_DTYPE_LAST + 1] = {
		[FP_DTYPE_BOOL] = "|b1",    [FP_DTYPE_INT8] = "|i1",     [FP_DTYPE_INT16] = "<i2",
		[FP_DTYPE_INT32] = "<i4",   [FP_DTYPE_INT64] = "<i8",    [FP_DTYPE_UINT8] = "|u1",
		[FP_DTYPE_UINT16] = "<u2",  [FP_DTYPE_UINT32] = "<u4",   [FP_DTYPE_UINT64] = "<u8",
		[FP_DTYPE_FLOAT16] = "<f2", [FP_DTYPE_BFLOAT16] = "<f4", [FP_DTYPE_FLOAT32] = "<f4",
		[FP_DTYPE_FLOAT64] = "<f8",
	};
	static const char *const be[FP_DTYPE_LAST + 1] = {
		[FP_DTYPE_BOOL] = "|b1",    [FP_DTYPE_INT8] = "|i1",     [FP_DTYPE_INT16] = ">i2",
		[FP_DTYPE_INT32] = ">i4",   [FP_DTYPE_INT64] = ">i8",    [FP_DTYPE_UINT8] = "|u1",
		[FP_DTYPE_UINT16] = ">u2",  [FP_DTYPE_UINT32] = ">u4",   [FP_DTYPE_UINT64] = ">u8",
		[FP_DTYPE_FLOAT16] = ">f2", [FP_DTYPE_BFLOAT16] = ">f4", [FP_DTYPE_FLOAT32] = ">f4",
		[FP_DTYPE_FLOAT64] = ">f8",
	};

	if (!fp_dtype_valid((int)t))
		return NULL;
	return host_little_endian() ? le[t] : be[t];
}

/* Bytes one input element becomes in the file. */
static size_t out_size(enum fp_dtype t)
{
	return t == FP_DTYPE_BFLOAT16 ? 4 : fp_dtype_size(t);
}

/* Check dtype and shape; give the header-independent sizes. */
static int check_array(enum fp_dtype t, const uint64_t *shape, unsigned ndim, const void *data,
		       size_t nbytes, size_t *out_bytes, const char **why)
{
	uint64_t numel = 1;
	unsigned i;

	if (!fp_dtype_valid((int)t)) {
		*why = "invalid dtype code";
		return FP_EINVAL;
	}
	if (!fp_npy_descr(t)) {
		*why = "dtype has no NumPy equivalent";
		return FP_ENOTSUP;
	}
	if (ndim > FP_NPY_MAX_NDIM || (ndim && !shape)) {
		*why = ndim > FP_NPY_MAX_NDIM ? "too many dimensions" : "shape is NULL";
		return FP_EINVAL;
	}
	for (i = 0; i < ndim; i++) {
		if (shape[i] && numel > UINT64_MAX / shape[i]) {
			*why = "element count overflows";
			return FP_EINVAL;
		}
		numel *= shape[i];
	}
	if (numel > SIZE_MAX / 8 || numel * fp_dtype_size(t) != nbytes) {
		*why = "nbytes does not match shape and dtype";
		return FP_EINVAL;
	}
	if (!data && nbytes) {
		*why = "data is NULL";
		return FP_EINVAL;
	}
	*out_bytes = (size_t)numel * out_size(t);
	return FP_OK;
}

int fp_npy_header(char *buf, size_t size, enum fp_dtype t, const uint64_t *shape, unsigned ndim,
		  size_t *len)
{
	char dict[FP_NPY_HEADER_MAX];
	const char *descr;
	size_t n = 0, hlen, pad, total;
	unsigned i;
	int w;

	if (!buf || !len || ndim > FP_NPY_MAX_NDIM || (ndim && !shape) || !fp_dtype_valid((int)t))
		return FP_EINVAL;
	descr = fp_npy_descr(t);
	if (!descr)
		return FP_ENOTSUP;

	/* Python's repr of the dict numpy writes: keys sorted, shape as a tuple. */
	w = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
		     descr);
	n = (size_t)w;
	for (i = 0; i < ndim; i++) {
		w = snprintf(dict + n, sizeof(dict) - n, "%s%" PRIu64, i ? ", " : "", shape[i]);
		n += (size_t)w;
	}
	w = snprintf(dict + n, sizeof(dict) - n, "%s), }", ndim == 1 ? "," : "");
	n += (size_t)w;
	if (ndim > 0) {
		w = snprintf(dict + n, sizeof(dict) - n, "%" PRIu64, shape[0]);
		/* w digits; the spare space is written over the scratch digits just printed */
		memset(dict + n, ' ', NPY_GROWTH_DIGITS - (size_t)w);
		n += NPY_GROWTH_DIGITS - (size_t)w;
	}

	/* Spaces then '\n' so that the data starts 64-aligned; numpy always pads at least 1. */
	hlen = n + 1;
	pad = NPY_ALIGN - (NPY_PREFIX_LEN + hlen) % NPY_ALIGN;
	total = NPY_PREFIX_LEN + hlen + pad;
	if (total > size)
		return FP_ELIMIT;
	memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
	buf[6] = 1; /* version 1.0 */
	buf[7] = 0;
	buf[8] = (char)((hlen + pad) & 0xff);
	buf[9] = (char)((hlen + pad) >> 8);
	memcpy(buf + NPY_PREFIX_LEN, dict, n);
	memset(buf + NPY_PREFIX_LEN + n, ' ', pad);
	buf[total - 1] = '\n';
	*len = total;
	return FP_OK;
}

/* Widen up to BF16_CHUNK bfloat16 values from `src` into `dst`. */
static size_t widen_bf16(float *dst, const unsigned char *src, size_t count)
{
	size_t i;

	for (i = 0; i < count && i < BF16_CHUNK; i++) {
		uint16_t b;

		memcpy(&b, src + 2 * i, 2);
		dst[i] = fp_bf16_to_float(b);
	}
	return i;
}

int fp_npy_write_strbuf(struct fp_strbuf *sb, enum fp_dtype t, const uint64_t *shape, unsigned ndim,
			const void *data, size_t nbytes)
{
	char hdr[FP_NPY_HEADER_MAX];
	const unsigned char *src = data;
	size_t hdr_len, out_bytes, total, left;
	const char *why;
	float chunk[BF16_CHUNK];
	int rc;

	if (!sb)
		return FP_EINVAL;
	rc = check_array(t, shape, ndim, data, nbytes, &out_bytes, &why);
	if (rc)
		return rc;
	rc = fp_npy_header(hdr, sizeof(hdr), t, shape, ndim, &hdr_len);
	if (rc)
		return rc;
	if (!fp__add_ok(hdr_len, out_bytes, &total))
		return FP_ELIMIT;
	/* One growth up front: the appends below then cannot fail, so failure changes nothing. */
	rc = fp_strbuf_grow(sb, total);
	if (rc)
		return rc;
	fp_strbuf_add(sb, hdr, hdr_len);
	if (t != FP_DTYPE_BFLOAT16) {
		fp_strbuf_add(sb, data, nbytes);
		return FP_OK;
	}
	for (left = nbytes / 2; left;) {
		size_t k = widen_bf16(chunk, src, left);

		fp_strbuf_add(sb, chunk, k * sizeof(float));
		src += 2 * k;
		left -= k;
	}
	return FP_OK;
}

int fp_npy_write_file(const char *path, enum fp_dtype t, const uint64_t *shape, unsigned ndim,
		      const void *data, size_t nbytes, struct fp_diag *diag)
{
	char hdr[FP_NPY_HEADER_MAX];
	const unsigned char *src = data;
	size_t hdr_len, out_bytes, left;
	const char *why = "";
	float chunk[BF16_CHUNK];
	struct fp_outfile of;
	int rc;

	if (!path)
		return fp_diag_set(diag, FP_EINVAL, 0, "npy: path is NULL");
	rc = check_array(t, shape, ndim, data, nbytes, &out_bytes, &why);
	if (rc)
		return fp_diag_set(diag, rc, 0, "npy %s: %s (%s)", path, why, fp_dtype_name(t));
	rc = fp_npy_header(hdr, sizeof(hdr), t, shape, ndim, &hdr_len);
	if (rc)
		return fp_diag_set(diag, rc, 0, "npy %s: cannot build header", path);

	rc = fp_outfile_open(&of, path, 0, diag);
	if (rc)
		return rc;
	if (fwrite(hdr, 1, hdr_len, of.f) != hdr_len)
		goto fail_write;
	if (t != FP_DTYPE_BFLOAT16) {
		if (nbytes && fwrite(data, 1, nbytes, of.f) != nbytes)
			goto fail_write;
	} else {
		for (left = nbytes / 2; left;) {
			size_t k = widen_bf16(chunk, src, left);

			if (fwrite(chunk, sizeof(float), k, of.f) != k)
				goto fail_write;
			src += 2 * k;
			left -= k;
		}
	}
	return fp_outfile_commit(&of, diag);
fail_write:
	/* the commit reports the write's errno */
	if (!of.err)
		of.err = EIO;
	return fp_outfile_commit(&of, diag);
}
