/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Out-of-memory sweeps for the core data structures (arena, intern, hashmap, npy writer): each
 * scenario runs with allocation number i failing (and every one after it), for i = 0, 1, 2, ...
 * until a run completes without reaching the failure point. Every run must return FP_OK or
 * FP_ENOMEM, leave the structure consistent (what was added before the failure is still there)
 * and free everything (no live blocks after cleanup).
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#include "core/arena-internal.h"
#include "core/hashmap-internal.h"
#include "core/intern-internal.h"
#include "core/npy-internal.h"
#include "test.h"

typedef int (*scenario_fn)(void);

/* Run `fn` under every failure point; returns how many runs it took. */
static long sweep(scenario_fn fn)
{
	long i;

	for (i = 0; i < 100000; i++) {
		long count, live;
		int rc;

		fpt_oom_install(i);
		rc = fn();
		count = fpt_oom_count();
		live = fpt_oom_live();
		fpt_oom_uninstall();
		ASSERT_EQ(live, 0);
		if (count <= i) { /* the failure point was never reached */
			ASSERT_OK(rc);
			return i + 1;
		}
		ASSERT_EQ(rc, FP_ENOMEM);
	}
	fpt_fail(__FILE__, __LINE__, "sweep did not converge");
}

static int scenario_arena(void)
{
	struct fp_arena a;
	char *first = NULL;
	int rc = FP_OK;
	size_t i;

	fp_arena_init(&a, 256, 0);
	for (i = 0; i < 500; i++) {
		/* small, medium and block-sized requests: carving, new blocks, dedicated blocks */
		size_t size = i % 50 == 0 ? 3000 : (i * 13) % 200;
		char *p = i % 3 ? fp_arena_alloc(&a, size) : fp_arena_strndup(&a, "abcdef", 6);

		if (!p) {
			rc = fp_arena_last_error(&a);
			break;
		}
		memset(p, 'x', i % 3 ? size : 6);
		if (!first) {
			first = p;
			memcpy(first, "first", 6);
		}
	}
	if (first)
		ASSERT_STREQ(first, "first"); /* earlier allocations survive a failure */
	fp_arena_release(&a);
	return rc;
}

TEST(oom_arena)
{
	ASSERT_GT(sweep(scenario_arena), 3);
}

static int scenario_intern(void)
{
	struct fp_intern *in = fp_intern_new();
	char buf[64];
	uint32_t k, id, j;
	int rc = FP_OK;

	if (!in)
		return FP_ENOMEM;
	for (k = 0; k < 1000; k++) {
		int n = snprintf(buf, sizeof(buf), "kernel-%u-with-a-longer-name", k);

		rc = fp_intern_add(in, buf, (size_t)n, &id);
		if (rc) {
			/* unchanged: k strings, the failed one absent, old ones resolve */
			ASSERT_EQ(fp_intern_count(in), k);
			ASSERT_EQ(fp_intern_find(in, buf, (size_t)n, NULL), FP_ENOENT);
			for (j = 0; j < k; j++) {
				n = snprintf(buf, sizeof(buf), "kernel-%u-with-a-longer-name", j);
				/* adding an existing string needs no allocation */
				ASSERT_OK(fp_intern_add(in, buf, (size_t)n, &id));
				ASSERT_EQ(id, j);
				ASSERT_STREQ(fp_intern_str(in, j, NULL), buf);
			}
			break;
		}
		ASSERT_EQ(id, k);
		/* repeats never allocate */
		n = snprintf(buf, sizeof(buf), "kernel-%u-with-a-longer-name", k / 2);
		ASSERT_OK(fp_intern_add(in, buf, (size_t)n, &id));
		ASSERT_EQ(id, k / 2);
	}
	fp_intern_free(in);
	return rc;
}

TEST(oom_intern)
{
	ASSERT_GT(sweep(scenario_intern), 5);
}

static int scenario_hashmap(void)
{
	struct fp_hashmap m;
	uint64_t k, j, v;
	int rc = FP_OK;

	fp_hashmap_init(&m);
	for (k = 0; k < 10000; k++) {
		rc = fp_hashmap_put(&m, k * 7919, k);
		if (rc) {
			ASSERT_UEQ(fp_hashmap_count(&m), k);
			ASSERT(!fp_hashmap_get(&m, k * 7919, NULL));
			for (j = 0; j < k; j++) {
				ASSERT(fp_hashmap_get(&m, j * 7919, &v));
				ASSERT_UEQ(v, j);
			}
			/* replacing and removing never allocate */
			if (k > 0) {
				ASSERT_OK(fp_hashmap_put(&m, 0, 42));
				ASSERT(fp_hashmap_remove(&m, (k - 1) * 7919));
			}
			break;
		}
		if (k % 10 == 9)
			ASSERT(fp_hashmap_remove(&m, (k - 3) * 7919) || k < 3);
		if (k % 10 == 9)
			ASSERT_OK(fp_hashmap_put(&m, (k - 3) * 7919, k - 3));
	}
	if (!rc) {
		fp_hashmap_clear(&m);
		rc = fp_hashmap_reserve(&m, 50000);
	}
	fp_hashmap_release(&m);
	return rc;
}

TEST(oom_hashmap)
{
	ASSERT_GT(sweep(scenario_hashmap), 5);
}

static int scenario_npy_strbuf(void)
{
	static const uint64_t shape[2] = {30, 40};
	static uint16_t data[1200];
	struct fp_strbuf sb;
	size_t before;
	int rc, i;

	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 6; i++) {
		before = sb.len;
		rc = fp_npy_write_strbuf(&sb, i % 2 ? FP_DTYPE_BFLOAT16 : FP_DTYPE_FLOAT16, shape,
					 2, data, sizeof(data));
		if (rc) {
			ASSERT_UEQ(sb.len, before);
			break;
		}
	}
	fp_strbuf_release(&sb);
	return rc;
}

TEST(oom_npy_strbuf)
{
	ASSERT_GT(sweep(scenario_npy_strbuf), 2);
}

static char oom_dir[64];

static int scenario_npy_file(void)
{
	static const uint64_t shape[1] = {4};
	static const float data[4] = {1, 2, 3, 4};
	char path[128];

	snprintf(path, sizeof(path), "%s/x.npy", oom_dir);
	return fp_npy_write_file(path, FP_DTYPE_FLOAT32, shape, 1, data, sizeof(data), NULL);
}

TEST(oom_npy_file)
{
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(oom_dir, sizeof(oom_dir), "/tmp/fp-oom-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(oom_dir));
	ASSERT_GE(sweep(scenario_npy_file), 2);
	/* only the final file, no temporary left by the failed runs */
	d = opendir(oom_dir);
	ASSERT_NOT_NULL(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	ASSERT_EQ(n, 1);
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/x.npy", oom_dir);
		ASSERT_OK(unlink(path));
	}
	ASSERT_OK(rmdir(oom_dir));
}
