/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for core's internal helpers that other folders share (core/core-internal.h,
 * core/seqtab-internal.h): the one capped grow helper, the one path-suffix matcher and the one interner
 * of uint32 sequences, each with its caps (FP_ELIMIT) and an out-of-memory sweep. Not for the
 * public containers (test-arena.c, test-intern.c, test-hashmap.c).
 */
#include "fp-setup.h" /* core-internal.h is written for library files */

#include <stdint.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>

#include "core/core-internal.h"
#include "core/seqtab-internal.h"
#include "test.h"

/* ---- fp__grow ------------------------------------------------------------------------------- */

TEST(core_grow_doubles_under_cap)
{
	uint32_t *a = NULL;
	size_t cap = 0;

	ASSERT_OK(fp__grow((void **)&a, &cap, 0, sizeof(*a), 100)); /* nothing needed */
	ASSERT_NULL(a);
	ASSERT_UEQ(cap, 0);
	ASSERT_OK(fp__grow((void **)&a, &cap, 1, sizeof(*a), 100));
	ASSERT_NOT_NULL(a);
	ASSERT_UEQ(cap, 16); /* the first capacity */
	a[15] = 7;
	ASSERT_OK(fp__grow((void **)&a, &cap, 16, sizeof(*a), 100)); /* fits: unchanged */
	ASSERT_UEQ(cap, 16);
	ASSERT_OK(fp__grow((void **)&a, &cap, 17, sizeof(*a), 100));
	ASSERT_UEQ(cap, 32);
	ASSERT_EQ(a[15], 7); /* contents kept */
	ASSERT_OK(fp__grow((void **)&a, &cap, 65, sizeof(*a), 100));
	ASSERT_UEQ(cap, 100); /* doubling stops at the cap */
	a[99] = 1;
	ASSERT_EQ(fp__grow((void **)&a, &cap, 101, sizeof(*a), 100), FP_ELIMIT);
	ASSERT_UEQ(cap, 100); /* a failure changes nothing */
	ASSERT_EQ(a[15], 7);
	fp_free(a);
}

TEST(core_grow_jumps_and_overflow)
{
	uint64_t *a = NULL;
	size_t cap = 0;

	ASSERT_OK(fp__grow((void **)&a, &cap, 1000, sizeof(*a), SIZE_MAX));
	ASSERT_UEQ(cap, 1024);
	/* a count whose size in bytes overflows: out of memory, never a short buffer */
	ASSERT_EQ(fp__grow((void **)&a, &cap, SIZE_MAX / 4, sizeof(*a), SIZE_MAX), FP_ENOMEM);
	ASSERT_UEQ(cap, 1024);
	fp_free(a);
}

static int grow_run(void *arg)
{
	uint32_t *a = NULL;
	size_t cap = 0, i;
	int rc = FP_OK;

	(void)arg;
	for (i = 0; i < 1000 && !rc; i++) {
		rc = fp__grow((void **)&a, &cap, i + 1, sizeof(*a), 5000);
		if (!rc)
			a[i] = (uint32_t)i;
	}
	for (i = 0; !rc && i < 1000; i++)
		if (a[i] != i)
			rc = FP_EINVAL;
	fp_free(a);
	return rc;
}

TEST(core_grow_oom)
{
	ASSERT_GT(fpt_oom_sweep(grow_run, NULL, 0, 5, NULL), 5);
}

/* ---- fp__path_suffix_match ------------------------------------------------------------------ */

TEST(core_path_suffix_match)
{
	ASSERT(fp__path_suffix_match("/a/b/c.py", "/a/b/c.py"));
	ASSERT(fp__path_suffix_match("/a/b/c.py", "b/c.py"));
	ASSERT(fp__path_suffix_match("c.py", "/a/b/c.py"));   /* either order */
	ASSERT(!fp__path_suffix_match("/a/b/c.py", "bc.py")); /* whole components only */
	ASSERT(!fp__path_suffix_match("/a/b/c.py", "/c.py/"));
	ASSERT(!fp__path_suffix_match("/a/b/c.py", "/a/b/d.py"));
	ASSERT(!fp__path_suffix_match("/a/b/c.py", "/x/b/c.py")); /* same length, differ */
	ASSERT(!fp__path_suffix_match("/a/b/c.py", ""));
	ASSERT(fp__path_suffix_match("", ""));
	ASSERT(!fp__path_suffix_match(NULL, "c.py"));
	ASSERT(!fp__path_suffix_match("c.py", NULL));
	ASSERT(!fp__path_suffix_match(NULL, NULL));
}

/* ---- fp__seqtab ----------------------------------------------------------------------------- */

TEST(core_seqtab_ids)
{
	static const uint32_t a[] = {1, 2, 3}, b[] = {1, 2}, c[] = {3, 2, 1};
	struct fp__seqtab t;
	const uint32_t *w;
	uint32_t id, n = 99, tag = 99;

	fp__seqtab_init(&t, 100, 1000);
	ASSERT_UEQ(fp__seqtab_count(&t), 0);
	ASSERT_NULL(fp__seqtab_get(&t, 0, &n, &tag));
	ASSERT_OK(fp__seqtab_add(&t, a, 3, 0, &id));
	ASSERT_EQ(id, 0);
	ASSERT_OK(fp__seqtab_add(&t, b, 2, 0, &id));
	ASSERT_EQ(id, 1);
	ASSERT_OK(fp__seqtab_add(&t, c, 3, 0, &id));
	ASSERT_EQ(id, 2);
	ASSERT_OK(fp__seqtab_add(&t, a, 3, 5, &id)); /* the tag is part of the identity */
	ASSERT_EQ(id, 3);
	ASSERT_OK(fp__seqtab_add(&t, NULL, 0, 0, &id)); /* the empty sequence */
	ASSERT_EQ(id, 4);
	ASSERT_OK(fp__seqtab_add(&t, a, 3, 0, &id));
	ASSERT_EQ(id, 0);
	ASSERT_OK(fp__seqtab_add(&t, a, 3, 5, &id));
	ASSERT_EQ(id, 3);
	ASSERT_OK(fp__seqtab_add(&t, a, 0, 0, &id));
	ASSERT_EQ(id, 4);
	ASSERT_UEQ(fp__seqtab_count(&t), 5);
	w = fp__seqtab_get(&t, 3, &n, &tag);
	ASSERT_NOT_NULL(w);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(tag, 5);
	ASSERT_MEMEQ(w, a, sizeof(a));
	ASSERT_NOT_NULL(fp__seqtab_get(&t, 4, &n, NULL));
	ASSERT_EQ(n, 0);
	ASSERT_NULL(fp__seqtab_get(&t, 5, NULL, NULL));
	ASSERT_EQ(fp__seqtab_add(&t, NULL, 2, 0, &id), FP_EINVAL);
	fp__seqtab_release(&t);
	ASSERT_UEQ(fp__seqtab_count(&t), 0);
	ASSERT_OK(fp__seqtab_add(&t, c, 3, 0, &id)); /* usable again after a release */
	ASSERT_EQ(id, 0);
	fp__seqtab_release(&t);
}

TEST(core_seqtab_static_and_many)
{
	/* a zero-initialised table with only its caps set, as the profiler declares them */
	static struct fp__seqtab t = {.max_count = 1u << 20, .max_words = 1u << 22};
	uint32_t w[4], id, i, n;

	for (i = 0; i < 100000; i++) {
		w[0] = i;
		w[1] = i * 7u;
		w[2] = ~i;
		w[3] = i % 3;
		ASSERT_OK(fp__seqtab_add(&t, w, 1 + i % 4, 0, &id));
		ASSERT_EQ(id, i);
	}
	for (i = 0; i < 100000; i += 997) {
		w[0] = i;
		w[1] = i * 7u;
		w[2] = ~i;
		w[3] = i % 3;
		ASSERT_OK(fp__seqtab_add(&t, w, 1 + i % 4, 0, &id));
		ASSERT_EQ(id, i);
		ASSERT_EQ(fp__seqtab_get(&t, i, &n, NULL)[0], i);
		ASSERT_EQ(n, 1 + i % 4);
	}
	fp__seqtab_release(&t);
}

TEST(core_seqtab_caps)
{
	static const uint32_t a[] = {1, 2, 3, 4};
	struct fp__seqtab t;
	uint32_t id;

	fp__seqtab_init(&t, 3, 6);
	ASSERT_OK(fp__seqtab_add(&t, a, 4, 0, &id));
	ASSERT_EQ(fp__seqtab_add(&t, a + 1, 3, 0, &id), FP_ELIMIT); /* 7 words > 6 */
	ASSERT_UEQ(fp__seqtab_count(&t), 1);
	ASSERT_OK(fp__seqtab_add(&t, a, 2, 0, &id)); /* 6 words: at the cap */
	ASSERT_EQ(id, 1);
	ASSERT_OK(fp__seqtab_add(&t, NULL, 0, 0, &id)); /* no words, third entry */
	ASSERT_EQ(id, 2);
	ASSERT_EQ(fp__seqtab_add(&t, NULL, 0, 1, &id), FP_ELIMIT); /* a fourth entry */
	ASSERT_OK(fp__seqtab_add(&t, a, 4, 0, &id)); /* known sequences are still found */
	ASSERT_EQ(id, 0);
	ASSERT_UEQ(fp__seqtab_count(&t), 3);
	fp__seqtab_release(&t);
}

static int seqtab_run(void *arg)
{
	struct fp__seqtab t;
	uint32_t w[3], id, i, n;
	int rc = FP_OK;

	(void)arg;
	fp__seqtab_init(&t, 10000, 100000);
	for (i = 0; i < 300 && !rc; i++) {
		w[0] = i;
		w[1] = i + 1;
		w[2] = i + 2;
		rc = fp__seqtab_add(&t, w, 3, i & 1, &id);
		if (!rc && id != i)
			rc = FP_EINVAL;
	}
	/* what was added before a failure is still there, under the same ids */
	for (n = i - (rc ? 1 : 0), i = 0; i < n; i++) {
		const uint32_t *got = fp__seqtab_get(&t, i, NULL, NULL);

		if (!got || got[0] != i || got[2] != i + 2)
			rc = FP_EINVAL;
	}
	if (fp__seqtab_count(&t) != n)
		rc = FP_EINVAL;
	fp__seqtab_release(&t);
	return rc;
}

TEST(core_seqtab_oom)
{
	ASSERT_GT(fpt_oom_sweep(seqtab_run, NULL, 0, 5, NULL), 5);
}
