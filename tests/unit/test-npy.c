/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the .npy writer: byte-exact headers (the expected bytes are what numpy.save
 * writes), argument checking, bfloat16 widening, the strbuf and file outputs, and
 * `npy_write_samples`, which writes one file per dtype into $FP_NPY_OUT for
 * tests/python/test_npy_numpy.py to load with NumPy.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#include "core/npy-internal.h"
#include "test.h"

/* Check a header against the dict text numpy writes and the total length numpy gives it. */
static void check_header(enum fp_dtype t, const uint64_t *shape, unsigned ndim, const char *dict,
			 size_t want_len)
{
	char buf[FP_NPY_HEADER_MAX];
	size_t len = 0, i, dlen = strlen(dict);

	ASSERT_OK(fp_npy_header(buf, sizeof(buf), t, shape, ndim, &len));
	ASSERT_UEQ(len, want_len);
	ASSERT_UEQ(len % 64, 0);
	ASSERT_MEMEQ(buf, "\x93NUMPY\x01\x00", 8);
	ASSERT_UEQ((unsigned char)buf[8] | (unsigned char)buf[9] << 8, len - 10);
	ASSERT_MEMEQ(buf + 10, dict, dlen);
	for (i = 10 + dlen; i < len - 1; i++)
		ASSERT_EQ(buf[i], ' ');
	ASSERT_EQ(buf[len - 1], '\n');
}

TEST(npy_header_exact)
{
	const uint64_t s34[] = {3, 4}, s5[] = {5}, s203[] = {2, 0, 3};
	const uint64_t big[] = {UINT64_MAX / 2, 1};
	uint64_t ones[20];
	char dict[512];
	size_t i, n;

	/* lengths as numpy 2.4 writes them (numpy.save into BytesIO) */
	check_header(FP_DTYPE_FLOAT32, s34, 2,
		     "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 128);
	check_header(FP_DTYPE_INT8, NULL, 0,
		     "{'descr': '|i1', 'fortran_order': False, 'shape': (), }", 128);
	check_header(FP_DTYPE_BOOL, s5, 1,
		     "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", 128);
	check_header(FP_DTYPE_UINT16, s203, 3,
		     "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 0, 3), }", 128);
	check_header(FP_DTYPE_BFLOAT16, s5, 1,
		     "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 128);
	check_header(
		FP_DTYPE_INT64, big, 2,
		"{'descr': '<i8', 'fortran_order': False, 'shape': (9223372036854775807, 1), }",
		128);
	for (i = 0; i < 20; i++)
		ones[i] = 1;
	n = (size_t)snprintf(dict, sizeof(dict),
			     "{'descr': '<f8', 'fortran_order': False, 'shape': (");
	for (i = 0; i < 20; i++)
		n += (size_t)snprintf(dict + n, sizeof(dict) - n, "%s1", i ? ", " : "");
	snprintf(dict + n, sizeof(dict) - n, "), }");
	check_header(FP_DTYPE_FLOAT64, ones, 20, dict, 192);
}

TEST(npy_header_spare_space_and_padding)
{
	char buf[FP_NPY_HEADER_MAX];
	uint64_t shape[FP_NPY_MAX_NDIM];
	size_t len, i;
	unsigned nd;

	/*
	 * numpy leaves 21 - digits(shape[0]) spaces after "}" and always pads by 1..64: with the
	 * dict at 42 + 11 chars, 10 + 53 + 1 = 64 is already aligned, yet a full 64 more follow.
	 * Recreate that case: "{'descr': '<f4', 'fortran_order': False, 'shape': (" is 52 chars.
	 */
	for (i = 0; i < FP_NPY_MAX_NDIM; i++)
		shape[i] = UINT64_MAX;
	for (nd = 0; nd <= FP_NPY_MAX_NDIM; nd++) {
		ASSERT_OK(fp_npy_header(buf, sizeof(buf), FP_DTYPE_UINT64, shape, nd, &len));
		ASSERT_UEQ(len % 64, 0);
		ASSERT_LE(len, FP_NPY_HEADER_MAX);
		ASSERT_EQ(buf[len - 1], '\n');
		ASSERT_EQ(buf[len - 2], ' '); /* at least one pad space */
	}
	ASSERT_EQ(
		fp_npy_header(buf, sizeof(buf), FP_DTYPE_UINT64, shape, FP_NPY_MAX_NDIM + 1, &len),
		FP_EINVAL);
	ASSERT_EQ(fp_npy_header(buf, 64, FP_DTYPE_UINT64, shape, 2, &len), FP_ELIMIT);
	ASSERT_EQ(fp_npy_header(buf, sizeof(buf), FP_DTYPE_FLOAT8E5, shape, 1, &len), FP_ENOTSUP);
	ASSERT_EQ(fp_npy_header(buf, sizeof(buf), (enum fp_dtype)0, shape, 1, &len), FP_EINVAL);
	ASSERT_EQ(fp_npy_header(buf, sizeof(buf), FP_DTYPE_INT8, NULL, 1, &len), FP_EINVAL);
	ASSERT_EQ(fp_npy_header(NULL, 0, FP_DTYPE_INT8, NULL, 0, &len), FP_EINVAL);
}

TEST(npy_descr)
{
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_BOOL), "|b1");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_INT8), "|i1");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_UINT8), "|u1");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_INT16), "<i2");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_INT32), "<i4");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_INT64), "<i8");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_UINT16), "<u2");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_UINT32), "<u4");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_UINT64), "<u8");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_FLOAT16), "<f2");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_BFLOAT16), "<f4");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_FLOAT32), "<f4");
	ASSERT_STREQ(fp_npy_descr(FP_DTYPE_FLOAT64), "<f8");
	ASSERT_NULL(fp_npy_descr(FP_DTYPE_FLOAT8E4NV));
	ASSERT_NULL(fp_npy_descr(FP_DTYPE_FLOAT8E5));
	ASSERT_NULL(fp_npy_descr(FP_DTYPE_POINTER));
	ASSERT_NULL(fp_npy_descr(FP_DTYPE_UNKNOWN));
	ASSERT_NULL(fp_npy_descr((enum fp_dtype)77));
}

TEST(npy_strbuf_data_and_errors)
{
	const uint64_t s23[] = {2, 3}, s4[] = {4}, huge[] = {UINT64_MAX, 3}, zero[] = {0, 5};
	const float f[6] = {1, 2, 3, 4, 5, -0.0f};
	const uint16_t bf[4] = {0x3f80, 0xc040, 0x7fc1, 0x8000};
	const uint32_t bf_wide[4] = {0x3f800000u, 0xc0400000u, 0x7fc10000u, 0x80000000u};
	const uint8_t fp8[4] = {0};
	const int64_t scalar = -42;
	struct fp_strbuf sb;
	size_t before;

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, s23, 2, f, sizeof(f)));
	ASSERT_UEQ(sb.len, 128 + sizeof(f));
	ASSERT_MEMEQ(sb.buf + 128, f, sizeof(f));
	/* appends after existing contents */
	before = sb.len;
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_BFLOAT16, s4, 1, bf, sizeof(bf)));
	ASSERT_UEQ(sb.len, before + 128 + 16);
	ASSERT_MEMEQ(sb.buf + before + 128, bf_wide, 16);
	ASSERT_MEMEQ(sb.buf + before, "\x93NUMPY", 6);
	before = sb.len;
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_INT64, NULL, 0, &scalar, 8));
	ASSERT_MEMEQ(sb.buf + before + 128, &scalar, 8);
	before = sb.len;
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, zero, 2, NULL, 0));
	ASSERT_UEQ(sb.len, before + 128);

	/* every failure leaves the buffer as it was */
	before = sb.len;
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, s23, 2, f, sizeof(f) - 4), FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, s23, 2, NULL, sizeof(f)), FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, NULL, 2, f, sizeof(f)), FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, huge, 2, f, sizeof(f)), FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, s23, FP_NPY_MAX_NDIM + 1, f, 4),
		  FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT8E4NV, s4, 1, fp8, 4), FP_ENOTSUP);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT8E5, s4, 1, fp8, 4), FP_ENOTSUP);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_POINTER, NULL, 0, &scalar, 8), FP_ENOTSUP);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, (enum fp_dtype)0, s4, 1, fp8, 4), FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(&sb, (enum fp_dtype)40, s4, 1, fp8, 4), FP_EINVAL);
	ASSERT_EQ(fp_npy_write_strbuf(NULL, FP_DTYPE_UINT8, s4, 1, fp8, 4), FP_EINVAL);
	ASSERT_UEQ(sb.len, before);
	fp_strbuf_release(&sb);

	/* the strbuf's cap is respected, atomically */
	fp_strbuf_init(&sb, 150);
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, s4, 1, f, 16));
	ASSERT_EQ(fp_npy_write_strbuf(&sb, FP_DTYPE_FLOAT32, s4, 1, f, 16), FP_ELIMIT);
	ASSERT_UEQ(sb.len, 144);
	fp_strbuf_release(&sb);
}

TEST(npy_bf16_large_chunks)
{
	enum {
		N = 10000
	}; /* several widening chunks */
	static uint16_t in[N];
	uint64_t shape[1] = {N};
	struct fp_strbuf sb;
	size_t i;

	for (i = 0; i < N; i++)
		in[i] = (uint16_t)(i * 7919u);
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_npy_write_strbuf(&sb, FP_DTYPE_BFLOAT16, shape, 1, in, sizeof(in)));
	ASSERT_UEQ(sb.len, 128 + 4 * (size_t)N);
	for (i = 0; i < N; i++) {
		uint32_t w;

		memcpy(&w, sb.buf + 128 + 4 * i, 4);
		ASSERT_UEQ(w, (uint32_t)in[i] << 16);
	}
	fp_strbuf_release(&sb);
}

static char *make_tmpdir(void)
{
	char *dir = strdup("/tmp/fp-npy-test-XXXXXX");

	ASSERT_NOT_NULL(dir);
	ASSERT_NOT_NULL(mkdtemp(dir));
	return dir;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ASSERT_NOT_NULL(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Whole file at `path` must equal what the strbuf writer produces for the same array. */
static void check_file_matches(const char *path, enum fp_dtype t, const uint64_t *shape,
			       unsigned ndim, const void *data, size_t nbytes)
{
	struct fp_strbuf want, got;

	fp_strbuf_init(&want, 0);
	fp_strbuf_init(&got, 0);
	ASSERT_OK(fp_npy_write_strbuf(&want, t, shape, ndim, data, nbytes));
	ASSERT_OK(fp_strbuf_read_file(&got, path, NULL));
	ASSERT_UEQ(got.len, want.len);
	ASSERT_MEMEQ(got.buf, want.buf, want.len);
	fp_strbuf_release(&want);
	fp_strbuf_release(&got);
}

TEST(npy_write_file)
{
	const uint64_t shape[] = {2, 2};
	const int32_t v[4] = {1, -2, 3, INT32_MIN};
	const uint16_t bf[4] = {0x3f80, 0x4000, 0x4040, 0x4080};
	char *dir = make_tmpdir(), path[4096], bad[4096];
	struct fp_diag diag;
	struct stat st;
	mode_t old_mask;

	snprintf(path, sizeof(path), "%s/a.npy", dir);
	old_mask = umask(022);
	ASSERT_OK(fp_npy_write_file(path, FP_DTYPE_INT32, shape, 2, v, sizeof(v), &diag));
	umask(old_mask);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0644);
	check_file_matches(path, FP_DTYPE_INT32, shape, 2, v, sizeof(v));
	/* replace in place, with a different dtype and size */
	ASSERT_OK(fp_npy_write_file(path, FP_DTYPE_BFLOAT16, shape, 2, bf, sizeof(bf), NULL));
	check_file_matches(path, FP_DTYPE_BFLOAT16, shape, 2, bf, sizeof(bf));
	ASSERT_EQ(count_entries(dir), 1); /* no temporary file left */

	/* errors name the path; nothing is left behind */
	snprintf(bad, sizeof(bad), "%s/missing-dir/b.npy", dir);
	fp_diag_clear(&diag);
	ASSERT_EQ(fp_npy_write_file(bad, FP_DTYPE_INT32, shape, 2, v, sizeof(v), &diag), FP_EIO);
	ASSERT_EQ(diag.status, FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, bad));
	fp_diag_clear(&diag);
	ASSERT_EQ(fp_npy_write_file(path, FP_DTYPE_INT32, shape, 2, v, 3, &diag), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(diag.msg, "nbytes"));
	ASSERT_EQ(fp_npy_write_file(path, FP_DTYPE_POINTER, shape, 2, v, 32, &diag), FP_ENOTSUP);
	ASSERT_EQ(fp_npy_write_file(NULL, FP_DTYPE_INT32, shape, 2, v, 16, &diag), FP_EINVAL);
	/* a directory is refused before anything is created */
	snprintf(bad, sizeof(bad), "%s/sub", dir);
	ASSERT_OK(mkdir(bad, 0755));
	ASSERT_EQ(fp_npy_write_file(bad, FP_DTYPE_INT32, shape, 2, v, sizeof(v), &diag), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(diag.msg, "is a directory"));
	ASSERT_EQ(count_entries(dir), 2);
	rmdir(bad);
	check_file_matches(path, FP_DTYPE_BFLOAT16, shape, 2, bf, sizeof(bf));
	remove_tree(dir);
	free(dir);
}

/*
 * One sample array per writable dtype, with edge values. Each goes to <dir>/<name>.npy plus a
 * <name>.txt sidecar that gives the dtype, the shape and each element's raw bits in hex, from
 * which the Python test rebuilds the expected array independently of the writer.
 */
struct sample {
	const char *name;
	enum fp_dtype t;
	unsigned ndim;
	uint64_t shape[3];
	size_t count;
	const void *data;
};

static void write_sidecar(const char *dir, const struct sample *s)
{
	char path[4096];
	size_t size = fp_dtype_size(s->t), i;
	const unsigned char *p = s->data;
	unsigned d;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.txt", dir, s->name);
	f = fopen(path, "w");
	ASSERT_NOT_NULL(f);
	fprintf(f, "dtype %s\nshape", fp_dtype_name(s->t));
	for (d = 0; d < s->ndim; d++)
		fprintf(f, " %" PRIu64, s->shape[d]);
	fprintf(f, "\nbits");
	for (i = 0; i < s->count; i++) {
		uint64_t v = 0;

		switch (size) {
		case 1:
			v = p[i];
			break;
		case 2: {
			uint16_t x;
			memcpy(&x, p + 2 * i, 2);
			v = x;
			break;
		}
		case 4: {
			uint32_t x;
			memcpy(&x, p + 4 * i, 4);
			v = x;
			break;
		}
		default:
			memcpy(&v, p + 8 * i, 8);
			break;
		}
		fprintf(f, " %" PRIx64, v);
	}
	fprintf(f, "\n");
	ASSERT_OK(fclose(f));
}

TEST(npy_write_samples)
{
	static const uint8_t b[6] = {0, 1, 1, 0, 1, 0};
	static const int8_t i8[4] = {-128, -1, 0, 127};
	static const int16_t i16[4] = {-32768, -1, 1, 32767};
	static const int32_t i32[1] = {-123456789};
	static const int64_t i64[3] = {INT64_MIN, 0, INT64_MAX};
	static const uint8_t u8[8] = {0, 1, 2, 127, 128, 200, 254, 255};
	static const uint16_t u16[3] = {0, 1, 65535};
	static const uint32_t u32[3] = {0, 123, UINT32_MAX};
	static const uint64_t u64[2] = {0, UINT64_MAX};
	/* 0, -0, 1, -2, 65504, smallest subnormal, +Inf, NaN */
	static const uint16_t f16[8] = {0x0000, 0x8000, 0x3c00, 0xc000,
					0x7bff, 0x0001, 0x7c00, 0x7e00};
	/* 1, -3, smallest subnormal, +Inf, -Inf, NaN with a payload bit */
	static const uint16_t bf16[6] = {0x3f80, 0xc040, 0x0001, 0x7f80, 0xff80, 0x7fc1};
	const float f32[4] = {1.5f, -0.0f, INFINITY, 1e-45f};
	const double f64[6] = {3.141592653589793, -0.0, NAN, 1.7976931348623157e308, 5e-324, 1.0};
	const struct sample samples[] = {
		{"bool", FP_DTYPE_BOOL, 2, {2, 3}, 6, b},
		{"int8", FP_DTYPE_INT8, 1, {4}, 4, i8},
		{"int16", FP_DTYPE_INT16, 2, {2, 2}, 4, i16},
		{"int32", FP_DTYPE_INT32, 0, {0}, 1, i32},
		{"int64", FP_DTYPE_INT64, 1, {3}, 3, i64},
		{"uint8", FP_DTYPE_UINT8, 3, {2, 2, 2}, 8, u8},
		{"uint16", FP_DTYPE_UINT16, 1, {3}, 3, u16},
		{"uint32", FP_DTYPE_UINT32, 1, {3}, 3, u32},
		{"uint64", FP_DTYPE_UINT64, 1, {2}, 2, u64},
		{"float16", FP_DTYPE_FLOAT16, 2, {2, 4}, 8, f16},
		{"bfloat16", FP_DTYPE_BFLOAT16, 2, {2, 3}, 6, bf16},
		{"float32", FP_DTYPE_FLOAT32, 2, {2, 2}, 4, f32},
		{"float64", FP_DTYPE_FLOAT64, 3, {3, 1, 2}, 6, f64},
		{"float64_empty", FP_DTYPE_FLOAT64, 2, {0, 3}, 0, f64},
	};
	const char *out = getenv("FP_NPY_OUT");
	char *dir = out && *out ? NULL : make_tmpdir(), path[4096];
	struct diag_holder {
		struct fp_diag d;
	} h;
	size_t i;

	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const struct sample *s = &samples[i];
		size_t nbytes = s->count * fp_dtype_size(s->t);

		snprintf(path, sizeof(path), "%s/%s.npy", dir ? dir : out, s->name);
		ASSERT_OK(fp_npy_write_file(path, s->t, s->shape, s->ndim, s->data, nbytes, &h.d));
		check_file_matches(path, s->t, s->shape, s->ndim, s->data, nbytes);
		write_sidecar(dir ? dir : out, s);
	}
	if (dir) {
		remove_tree(dir);
		free(dir);
	}
}
