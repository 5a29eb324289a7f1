/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the arena: alignment, no overlap, big requests, the cap, reuse after release. */
#include <stdint.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>

#include "core/arena-internal.h"
#include "test.h"

TEST(arena_basic_alignment_no_overlap)
{
	struct fp_arena a;
	unsigned char *ptrs[2000];
	size_t sizes[2000], i, j, total = 0;

	fp_arena_init(&a, 256, 0);
	ASSERT_UEQ(fp_arena_used(&a), 0);
	ASSERT_UEQ(fp_arena_reserved(&a), 0);
	for (i = 0; i < 2000; i++) {
		sizes[i] = (i * 37) % 300 + (i % 7 == 0 ? 0 : 1);
		ptrs[i] = fp_arena_alloc(&a, sizes[i]);
		ASSERT_NOT_NULL(ptrs[i]);
		ASSERT_UEQ((uintptr_t)ptrs[i] % 16, 0);
		memset(ptrs[i], (int)(i & 0xff), sizes[i]);
		total += sizes[i];
	}
	for (i = 0; i < 2000; i++)
		for (j = 0; j < sizes[i]; j++)
			ASSERT_EQ(ptrs[i][j], (int)(i & 0xff));
	/* size 0 still gives distinct pointers */
	ASSERT(fp_arena_alloc(&a, 0) != fp_arena_alloc(&a, 0));
	ASSERT_GE(fp_arena_used(&a), total);
	ASSERT_GE(fp_arena_reserved(&a), fp_arena_used(&a));
	ASSERT_EQ(fp_arena_last_error(&a), 0);
	fp_arena_release(&a);
	ASSERT_UEQ(fp_arena_used(&a), 0);
	ASSERT_UEQ(fp_arena_reserved(&a), 0);
	/* reusable after release */
	ASSERT_NOT_NULL(fp_arena_alloc(&a, 10));
	fp_arena_release(&a);
	fp_arena_release(NULL);
}

TEST(arena_align_strndup_calloc)
{
	struct fp_arena a;
	unsigned char *z;
	char *s, *t;
	size_t i;

	fp_arena_init(&a, 0, 0);
	s = fp_arena_strndup(&a, "hello world", 5);
	ASSERT_STREQ(s, "hello");
	t = fp_arena_strndup(&a, "a\0b", 3);
	ASSERT_MEMEQ(t, "a\0b", 4);
	/* strings are byte-packed: the next one starts right after the NUL */
	ASSERT(t == s + 6);
	ASSERT_STREQ(fp_arena_strndup(&a, NULL, 0), "");
	for (i = 1; i <= 4096; i *= 2) {
		void *p = fp_arena_alloc_align(&a, 3, i);

		ASSERT_NOT_NULL(p);
		ASSERT_UEQ((uintptr_t)p % i, 0);
	}
	ASSERT_NULL(fp_arena_alloc_align(&a, 8, 3));
	ASSERT_EQ(fp_arena_last_error(&a), FP_EINVAL);
	ASSERT_NULL(fp_arena_alloc_align(&a, 8, 8192));
	ASSERT_NULL(fp_arena_alloc_align(&a, 8, 0));
	z = fp_arena_calloc(&a, 100, 3);
	ASSERT_NOT_NULL(z);
	for (i = 0; i < 300; i++)
		ASSERT_EQ(z[i], 0);
	ASSERT_NULL(fp_arena_calloc(&a, SIZE_MAX / 2, 4));
	ASSERT_EQ(fp_arena_last_error(&a), FP_ELIMIT);
	ASSERT_NULL(fp_arena_alloc(&a, SIZE_MAX - 4));
	ASSERT_NULL(fp_arena_strndup(&a, "x", SIZE_MAX));
	fp_arena_release(&a);
}

TEST(arena_big_requests_keep_head_room)
{
	struct fp_arena a;
	char *p1, *big, *p2;
	size_t reserved;

	fp_arena_init(&a, 1024, 0);
	p1 = fp_arena_alloc(&a, 16);
	reserved = fp_arena_reserved(&a);
	big = fp_arena_alloc(&a, 100000);
	ASSERT_NOT_NULL(big);
	memset(big, 1, 100000);
	/* the dedicated block did not replace the head: the next small one follows p1 */
	p2 = fp_arena_alloc(&a, 16);
	ASSERT(p2 == p1 + 16);
	ASSERT_GE(fp_arena_reserved(&a), reserved + 100000);
	ASSERT_LT(fp_arena_reserved(&a), reserved + 100000 + 64);
	fp_arena_release(&a);

	/* a big first request becomes the head block */
	fp_arena_init(&a, 1024, 0);
	big = fp_arena_alloc(&a, 5000);
	ASSERT_NOT_NULL(big);
	p2 = fp_arena_alloc(&a, 16);
	ASSERT_NOT_NULL(p2);
	fp_arena_release(&a);
}

TEST(arena_blocks_grow_geometrically)
{
	struct fp_arena a;
	size_t i;

	/* 64 MiB in 64-byte pieces from 4 KiB blocks: blocks grow to 1 MiB, so few mallocs */
	fp_arena_init(&a, 4096, 0);
	fpt_oom_install(-1);
	for (i = 0; i < ((size_t)64 << 20) / 64; i++)
		ASSERT_NOT_NULL(fp_arena_alloc(&a, 64));
	ASSERT_LT(fpt_oom_count(), 100);
	ASSERT_UEQ(fp_arena_used(&a), (size_t)64 << 20);
	fp_arena_release(&a);
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
}

TEST(arena_cap)
{
	struct fp_arena a;
	size_t n = 0, used;
	void *p;

	fp_arena_init(&a, 1000, 10000);
	while ((p = fp_arena_alloc(&a, 100)) != NULL) {
		memset(p, 0, 100);
		n++;
		ASSERT_LE(fp_arena_reserved(&a), 10000);
	}
	ASSERT_EQ(fp_arena_last_error(&a), FP_ELIMIT);
	ASSERT_GT(n, 60); /* near the cap a smaller last block is used, not wasted */
	ASSERT_LE(fp_arena_reserved(&a), 10000);
	used = fp_arena_used(&a);
	/* failure leaves the arena as it was */
	ASSERT_NULL(fp_arena_alloc(&a, 100000));
	ASSERT_UEQ(fp_arena_used(&a), used);
	fp_arena_release(&a);

	/* a request larger than the cap fails without allocating */
	fp_arena_init(&a, 0, 4096);
	fpt_oom_install(-1);
	ASSERT_NULL(fp_arena_alloc(&a, 5000));
	ASSERT_EQ(fp_arena_last_error(&a), FP_ELIMIT);
	ASSERT_EQ(fpt_oom_count(), 0);
	/* the default first block (64 KiB) shrinks to fit under a small cap */
	ASSERT_NOT_NULL(fp_arena_alloc(&a, 100));
	ASSERT_LE(fp_arena_reserved(&a), 4096);
	fp_arena_release(&a);
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
}

TEST(arena_oom_reports_nomem)
{
	struct fp_arena a;

	fp_arena_init(&a, 0, 0);
	fpt_oom_install(0);
	ASSERT_NULL(fp_arena_alloc(&a, 10));
	ASSERT_EQ(fp_arena_last_error(&a), FP_ENOMEM);
	ASSERT_UEQ(fp_arena_reserved(&a), 0);
	fp_arena_release(&a);
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
}
