/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the cubin line-table reader (src/ir/cubin-lines-internal.h), on real cubins that
 * Triton 3.6 compiled for sm_90 (tests/data/cubin/make_cubins.py). The reference is independent
 * of our decoder: nvdisasm -g's "File ..., line N" annotation of every SASS instruction, saved in
 * <name>.lines.txt. Corrupted copies check the positioned errors; an out-of-memory sweep and a
 * truncation sweep check the cleanup paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>

#include "ir/cubin-lines-internal.h"
#include "test.h"

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

/* File offset of section `name`, found with a reader of our own (not the one under test). */
static uint64_t section_offset(const uint8_t *elf, const char *name)
{
	uint64_t shoff = le64(elf + 0x28), stroff;
	unsigned n = le16(elf + 0x3c), str = le16(elf + 0x3e), i;

	stroff = le64(elf + shoff + (uint64_t)str * 64 + 24);
	for (i = 0; i < n; i++) {
		const uint8_t *h = elf + shoff + (uint64_t)i * 64;

		if (strcmp((const char *)elf + stroff + le32(h), name) == 0)
			return le64(h + 24);
	}
	return 0;
}

/* Every instruction nvdisasm annotated gets the same line from our table. */
static void check_against_nvdisasm(const char *cubin, const char *lines, const char *kernel,
				   size_t min_rows)
{
	size_t len, tlen, checked = 0;
	uint8_t *data = fpt_slurp(fpt_data_path(cubin), &len);
	char *text = (char *)fpt_slurp(fpt_data_path(lines), &tlen), *p;
	struct fp_cubin_lines *cl = NULL;
	struct fp_cubin_loc loc;
	struct fp_diag diag;

	ASSERT_OK(fp_cubin_lines_parse(data, len, &cl, &diag));
	ASSERT(fp_cubin_lines_has_lines(cl));
	ASSERT_GE(fp_cubin_lines_count(cl), min_rows);
	for (p = text; *p;) {
		unsigned long long off = strtoull(p, &p, 10);
		unsigned long line = strtoul(p, &p, 10);

		while (*p == '\n')
			p++;
		if (!line) {
			ASSERT_EQ(fp_cubin_lines_lookup(cl, kernel, off, &loc), FP_ENOENT);
			continue;
		}
		ASSERT_OK(fp_cubin_lines_lookup(cl, kernel, off, &loc));
		ASSERT_UEQ(loc.line, line);
		ASSERT_STREQ(loc.function, kernel);
		ASSERT_STREQ(loc.file, "make_cubins.py");
		ASSERT(strstr(loc.dir, "tests/data/cubin") != NULL);
		ASSERT_LE(loc.pc_lo, off);
		ASSERT_GT(loc.pc_hi, off);
		checked++;
	}
	ASSERT_GT(checked, 20);
	/* past the end of the code, and a function that is not there */
	ASSERT_EQ(fp_cubin_lines_lookup(cl, kernel, 1u << 30, &loc), FP_ENOENT);
	ASSERT_EQ(fp_cubin_lines_lookup(cl, "no_such_kernel", 0, &loc), FP_ENOENT);
	fp_cubin_lines_free(cl);
	free(text);
	free(data);
}

TEST(cubin_lines_match_nvdisasm_hot_loop)
{
	check_against_nvdisasm("cubin/hot_loop.cubin", "cubin/hot_loop.lines.txt", "hot_loop", 20);
}

TEST(cubin_lines_match_nvdisasm_add)
{
	check_against_nvdisasm("cubin/add.cubin", "cubin/add.lines.txt", "add", 10);
}

/* The loop body of hot_loop (lines 27-28 of make_cubins.py) owns a real share of the code. */
TEST(cubin_lines_rows_are_sorted_and_disjoint)
{
	size_t len, i, n, loop_bytes = 0;
	uint8_t *data = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);
	struct fp_cubin_lines *cl = NULL;
	struct fp_cubin_loc a, b;

	ASSERT_OK(fp_cubin_lines_parse(data, len, &cl, NULL));
	n = fp_cubin_lines_count(cl);
	for (i = 0; i < n; i++) {
		ASSERT_OK(fp_cubin_lines_row(cl, i, &a));
		ASSERT_LT(a.pc_lo, a.pc_hi);
		if (a.line == 27 || a.line == 28)
			loop_bytes += a.pc_hi - a.pc_lo;
		if (i + 1 < n) {
			ASSERT_OK(fp_cubin_lines_row(cl, i + 1, &b));
			ASSERT_LE(a.pc_hi, b.pc_lo);
		}
	}
	ASSERT_GT(loop_bytes, 64);
	ASSERT_EQ(fp_cubin_lines_row(cl, n, &a), FP_EINVAL);
	fp_cubin_lines_free(cl);
	free(data);
}

TEST(cubin_lines_without_line_info)
{
	size_t len;
	uint8_t *data = fpt_slurp(fpt_data_path("cubin/add_nolines.cubin"), &len);
	struct fp_cubin_lines *cl = NULL;
	struct fp_cubin_loc loc;

	ASSERT_OK(fp_cubin_lines_parse(data, len, &cl, NULL));
	ASSERT(!fp_cubin_lines_has_lines(cl));
	ASSERT_EQ(fp_cubin_lines_count(cl), 0);
	ASSERT_EQ(fp_cubin_lines_lookup(cl, "add", 0, &loc), FP_ENOENT);
	fp_cubin_lines_free(cl);
	free(data);
}

TEST(cubin_lines_rejects_bad_input_with_position)
{
	size_t len;
	uint8_t *data = fpt_slurp(fpt_data_path("cubin/add.cubin"), &len);
	uint64_t dl = section_offset(data, ".debug_line");
	struct fp_cubin_lines *cl = NULL;
	struct fp_diag diag;
	uint8_t save;

	ASSERT_GT(dl, 0);
	ASSERT_EQ(fp_cubin_lines_parse("nope", 4, &cl, &diag), FP_EFORMAT);
	ASSERT_EQ(fp_cubin_lines_parse(data, 63, &cl, &diag), FP_EFORMAT);
	ASSERT_EQ(diag.offset, 0);
	save = data[4];
	data[4] = 1; /* ELFCLASS32 */
	ASSERT_EQ(fp_cubin_lines_parse(data, len, &cl, &diag), FP_EFORMAT);
	ASSERT_EQ(diag.offset, 4);
	ASSERT(strstr(diag.msg, "64-bit") != NULL);
	data[4] = save;
	/* DWARF 5: named, not guessed */
	save = data[dl + 4];
	data[dl + 4] = 5;
	ASSERT_EQ(fp_cubin_lines_parse(data, len, &cl, &diag), FP_ENOTSUP);
	ASSERT_EQ(diag.offset, dl + 4);
	data[dl + 4] = 9;
	ASSERT_EQ(fp_cubin_lines_parse(data, len, &cl, &diag), FP_EFORMAT);
	ASSERT_EQ(diag.offset, dl + 4);
	data[dl + 4] = save;
	/* a unit longer than the section */
	data[dl + 3] = 0x7f;
	ASSERT_EQ(fp_cubin_lines_parse(data, len, &cl, &diag), FP_EFORMAT);
	ASSERT_EQ(diag.offset, dl);
	data[dl + 3] = 0;
	/* line range 0 (offset 4 + 2 + 4 + 1 + 1 + 1 into the unit) */
	save = data[dl + 13];
	data[dl + 13] = 0;
	ASSERT_EQ(fp_cubin_lines_parse(data, len, &cl, &diag), FP_EFORMAT);
	ASSERT(strstr(diag.msg, "line range") != NULL);
	data[dl + 13] = save;
	/* e_shstrndx naming section 0, whose header points outside the file */
	{
		uint64_t shoff = le64(data + 0x28);
		uint8_t save_hdr[18];

		memcpy(save_hdr, data + 0x3e, 2);
		memcpy(save_hdr + 2, data + shoff + 24, 16);
		memset(data + 0x3e, 0, 2);
		memset(data + shoff + 24, 0x7f, 8);
		ASSERT_EQ(fp_cubin_lines_parse(data, len, &cl, &diag), FP_EFORMAT);
		ASSERT_EQ(diag.offset, shoff);
		memcpy(data + 0x3e, save_hdr, 2);
		memcpy(data + shoff + 24, save_hdr + 2, 16);
	}
	ASSERT_NULL(cl);
	ASSERT_OK(fp_cubin_lines_parse(data, len, &cl, &diag));
	fp_cubin_lines_free(cl);
	ASSERT_EQ(fp_cubin_lines_parse(NULL, 0, &cl, &diag), FP_EINVAL);
	free(data);
}

/* Every prefix of a real cubin is accepted or rejected cleanly (ASan watches the reads). */
TEST(cubin_lines_truncation_sweep)
{
	size_t len, n, rejected = 0, headers_end;
	uint8_t *data = fpt_slurp(fpt_data_path("cubin/add.cubin"), &len);

	headers_end = (size_t)(le64(data + 0x28) + (uint64_t)le16(data + 0x3c) * 64);
	ASSERT_LE(headers_end, len);

	for (n = 0; n < len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		struct fp_cubin_lines *cl = NULL;
		struct fp_diag diag;
		int rc;

		memcpy(copy, data, n);
		rc = fp_cubin_lines_parse(copy, n, &cl, &diag);
		if (n < headers_end)
			ASSERT_EQ(rc, FP_EFORMAT);
		if (rc) {
			ASSERT(rc == FP_EFORMAT || rc == FP_ENOTSUP);
			ASSERT_LE(diag.offset, n);
			rejected++;
		}
		fp_cubin_lines_free(cl);
		free(copy);
	}
	/* ptxas puts the section headers after the sections (program headers follow) */
	ASSERT_GE(rejected, headers_end);
	ASSERT_GT(headers_end, len / 2);
	free(data);
}

TEST(cubin_lines_oom_sweep)
{
	size_t len;
	uint8_t *data = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);
	struct fp_cubin_lines *cl;
	long fail_at;
	int rc;

	for (fail_at = 0;; fail_at++) {
		fpt_oom_install(fail_at);
		cl = NULL;
		rc = fp_cubin_lines_parse(data, len, &cl, NULL);
		if (rc == FP_OK) {
			fp_cubin_lines_free(cl);
			ASSERT_EQ(fpt_oom_live(), 0);
			fpt_oom_uninstall();
			break;
		}
		ASSERT_EQ(rc, FP_ENOMEM);
		ASSERT_NULL(cl);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		ASSERT_LT(fail_at, 10000);
	}
	ASSERT_GT(fail_at, 3);
	free(data);
}
