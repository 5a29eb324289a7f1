/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for string interning: dense stable ids, arbitrary bytes, stable string pointers,
 * millions of strings (a quadratic table would time out here), the byte cap.
 */
#include <stdint.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>

#include "core/intern-internal.h"
#include "test.h"

TEST(intern_basic)
{
	struct fp_intern *in = fp_intern_new();
	uint32_t id = 99;
	size_t len = 0;

	ASSERT_NOT_NULL(in);
	ASSERT_EQ(fp_intern_count(in), 0);
	ASSERT_EQ(fp_intern_find(in, "a", 1, &id), FP_ENOENT);
	ASSERT_EQ(id, 99);
	ASSERT_OK(fp_intern_add_str(in, "alpha", &id));
	ASSERT_EQ(id, 0);
	ASSERT_OK(fp_intern_add_str(in, "beta", &id));
	ASSERT_EQ(id, 1);
	ASSERT_OK(fp_intern_add(in, "alphabet", 5, &id)); /* same bytes as "alpha" */
	ASSERT_EQ(id, 0);
	ASSERT_OK(fp_intern_add(in, "alp", 3, &id));
	ASSERT_EQ(id, 2);
	ASSERT_EQ(fp_intern_count(in), 3);
	ASSERT_STREQ(fp_intern_str(in, 0, &len), "alpha");
	ASSERT_UEQ(len, 5);
	ASSERT_STREQ(fp_intern_str(in, 2, NULL), "alp");
	ASSERT_NULL(fp_intern_str(in, 3, &len));
	ASSERT_NULL(fp_intern_str(in, UINT32_MAX, NULL));
	ASSERT_OK(fp_intern_find(in, "beta", 4, &id));
	ASSERT_EQ(id, 1);
	ASSERT_OK(fp_intern_find(in, "beta", 4, NULL));
	ASSERT_EQ(fp_intern_find(in, "bet", 3, NULL), FP_ENOENT);
	ASSERT_OK(fp_intern_add(in, "gamma", 5, NULL));
	ASSERT_EQ(fp_intern_count(in), 4);
	ASSERT_GT(fp_intern_memory(in), 0);
	fp_intern_free(in);
	fp_intern_free(NULL);
}

TEST(intern_bytes_empty_and_errors)
{
	struct fp_intern *in = fp_intern_new();
	uint32_t id, e1, e2;
	size_t len;
	const char *s;

	ASSERT_OK(fp_intern_add(in, "a\0b", 3, &id));
	ASSERT_EQ(id, 0);
	ASSERT_OK(fp_intern_add(in, "a\0c", 3, &id));
	ASSERT_EQ(id, 1);
	ASSERT_OK(fp_intern_add(in, "a", 1, &id));
	ASSERT_EQ(id, 2);
	s = fp_intern_str(in, 0, &len);
	ASSERT_UEQ(len, 3);
	ASSERT_MEMEQ(s, "a\0b", 4); /* NUL-terminated too */
	/* the empty string is a string like any other, with or without a pointer */
	ASSERT_OK(fp_intern_add(in, NULL, 0, &e1));
	ASSERT_OK(fp_intern_add(in, "xyz", 0, &e2));
	ASSERT_EQ(e1, 3);
	ASSERT_EQ(e2, 3);
	ASSERT_STREQ(fp_intern_str(in, 3, &len), "");
	ASSERT_UEQ(len, 0);
	ASSERT_OK(fp_intern_find(in, NULL, 0, &id));
	ASSERT_EQ(id, 3);
	/* high bytes */
	ASSERT_OK(fp_intern_add(in, "\xff\xfe\x80", 3, &id));
	ASSERT_EQ(id, 4);
	ASSERT_EQ(fp_intern_add(in, NULL, 1, &id), FP_EINVAL);
	ASSERT_EQ(fp_intern_add(NULL, "a", 1, &id), FP_EINVAL);
	ASSERT_EQ(fp_intern_add_str(in, NULL, &id), FP_EINVAL);
	ASSERT_EQ(fp_intern_find(in, NULL, 2, &id), FP_EINVAL);
	ASSERT_EQ(fp_intern_find(NULL, "a", 1, &id), FP_EINVAL);
	ASSERT_EQ(fp_intern_count(NULL), 0);
	ASSERT_NULL(fp_intern_str(NULL, 0, NULL));
	ASSERT_EQ(fp_intern_count(in), 5);
	fp_intern_free(in);
}

TEST(intern_million_stable)
{
	enum {
		N = 2000000
	};
	struct fp_intern *in = fp_intern_new();
	const char *first;
	char buf[64];
	uint32_t i, id;
	size_t len;

	ASSERT_OK(fp_intern_add_str(in, "kernel_0", &id));
	first = fp_intern_str(in, 0, NULL);
	for (i = 1; i < N; i++) {
		/* long shared prefix and equal lengths: the hash must still tell them apart */
		int n = snprintf(buf, sizeof(buf), "triton_/very/long/shared/prefix/kernel_%07u",
				 i);

		ASSERT_OK(fp_intern_add(in, buf, (size_t)n, &id));
		ASSERT_EQ(id, i);
	}
	ASSERT_EQ(fp_intern_count(in), N);
	ASSERT(fp_intern_str(in, 0, NULL) == first); /* strings never move */
	ASSERT_STREQ(first, "kernel_0");
	for (i = 1; i < N; i += 7) {
		int n = snprintf(buf, sizeof(buf), "triton_/very/long/shared/prefix/kernel_%07u",
				 i);

		ASSERT_OK(fp_intern_find(in, buf, (size_t)n, &id));
		ASSERT_EQ(id, i);
		ASSERT_OK(fp_intern_add(in, buf, (size_t)n, &id)); /* repeat: same id */
		ASSERT_EQ(id, i);
		ASSERT_STREQ(fp_intern_str(in, i, &len), buf);
		ASSERT_UEQ(len, (size_t)n);
	}
	ASSERT_EQ(fp_intern_find(in, "kernel_1", 8, &id), FP_ENOENT);
	ASSERT_EQ(fp_intern_count(in), N);
	/* about 30 bytes of overhead per string on top of the 47-byte strings */
	ASSERT_LT(fp_intern_memory(in), (size_t)N * 100);
	fp_intern_free(in);
}

TEST(intern_short_keys_all_two_byte_strings)
{
	struct fp_intern *in = fp_intern_new();
	unsigned i;
	uint32_t id;

	for (i = 0; i < 65536; i++) {
		char s[2] = {(char)(i & 0xff), (char)(i >> 8)};

		ASSERT_OK(fp_intern_add(in, s, 2, &id));
		ASSERT_EQ(id, i);
	}
	for (i = 0; i < 256; i++) {
		char s[1] = {(char)i};

		ASSERT_OK(fp_intern_add(in, s, 1, &id));
		ASSERT_EQ(id, 65536 + i);
	}
	ASSERT_EQ(fp_intern_count(in), 65536 + 256);
	fp_intern_free(in);
}

TEST(intern_cap)
{
	struct fp_intern *in = fp_intern_new_capped(4096);
	char buf[32];
	uint32_t i, id, n = 0;
	int rc = 0;

	for (i = 0; i < 10000; i++) {
		snprintf(buf, sizeof(buf), "name-%05u", i);
		rc = fp_intern_add_str(in, buf, &id);
		if (rc)
			break;
		n++;
	}
	ASSERT_EQ(rc, FP_ELIMIT);
	ASSERT_GT(n, 300);
	ASSERT_EQ(fp_intern_count(in), n);
	/* the failed string left no trace; existing ones still resolve */
	ASSERT_EQ(fp_intern_find(in, buf, strlen(buf), &id), FP_ENOENT);
	ASSERT_OK(fp_intern_add_str(in, "name-00000", &id));
	ASSERT_EQ(id, 0);
	fp_intern_free(in);
}
