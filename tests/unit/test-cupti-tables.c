/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUPTI backend's fixed-size tables without CUPTI: the lock-free correlation table and
 * metadata ring (including concurrent writers), the CUDA-graph node table (clone, removal by
 * node and by owner, capacity, and a randomized comparison with a plain array), and the
 * activity-buffer pool (exhaustion, bad returns, concurrent use).
 */
#include <pthread.h>
#include <stdlib.h>

#include <flagprism/status.h>

#include "backend/cuda/cupti-internal.h"
#include "test.h"

TEST(cupti_tables_corr_basic)
{
	struct fp__cupti_corr t;
	struct fp__cupti_launch l = {7, 9, 11, 0x8000000000000005ull, 2}, out;

	ASSERT_EQ(fp__cupti_corr_init(&t, 6), FP_EINVAL);
	ASSERT_OK(fp__cupti_corr_init(&t, 16));
	ASSERT(!fp__cupti_corr_get(&t, 5, &out));
	ASSERT(fp__cupti_corr_put(&t, 5, &l));
	ASSERT(fp__cupti_corr_get(&t, 5, &out));
	ASSERT_EQ(out.lctx, 7);
	ASSERT_EQ(out.callpath, 9);
	ASSERT_UEQ(out.md, 11);
	ASSERT_UEQ(out.active, 0x8000000000000005ull); /* the sessions active at launch */
	ASSERT_EQ(out.internal, 2);
	/* Not consumed: graph launches read one entry many times. */
	ASSERT(fp__cupti_corr_get(&t, 5, &out));
	/* 16 launches later the slot belongs to id 21: 5 is a miss, never a wrong answer. */
	l.lctx = 8;
	ASSERT(fp__cupti_corr_put(&t, 21, &l));
	ASSERT(!fp__cupti_corr_get(&t, 5, &out));
	ASSERT(fp__cupti_corr_get(&t, 21, &out));
	ASSERT_EQ(out.lctx, 8);
	ASSERT(!fp__cupti_corr_get(&t, 0, &out));
	fp__cupti_corr_clear(&t);
	ASSERT(!fp__cupti_corr_get(&t, 21, &out));
	fp__cupti_corr_release(&t);
}

struct corr_arg {
	struct fp__cupti_corr *t;
	uint32_t first, n, stride;
};

static void *corr_writer(void *p)
{
	struct corr_arg *a = p;
	uint32_t i;

	for (i = 0; i < a->n; i++) {
		uint32_t id = a->first + i * a->stride;
		struct fp__cupti_launch l = {id * 3, id ^ 0x5555, (uint64_t)id << 20, id, 0};

		fp__cupti_corr_put(a->t, id, &l);
	}
	return NULL;
}

TEST(cupti_tables_corr_threads)
{
	enum {
		THREADS = 8,
		PER = 4096
	};
	struct fp__cupti_corr t;
	struct corr_arg a[THREADS];
	pthread_t th[THREADS];
	struct fp__cupti_launch out;
	uint32_t id;
	int i;

	/* Ids 1..THREADS*PER, interleaved between threads, all fitting in the table. */
	ASSERT_OK(fp__cupti_corr_init(&t, 1u << 16));
	for (i = 0; i < THREADS; i++) {
		a[i] = (struct corr_arg){&t, (uint32_t)i + 1, PER, THREADS};
		ASSERT_OK(pthread_create(&th[i], NULL, corr_writer, &a[i]));
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (id = 1; id <= THREADS * PER; id++) {
		ASSERT(fp__cupti_corr_get(&t, id, &out));
		ASSERT_EQ(out.lctx, id * 3);
		ASSERT_EQ(out.callpath, id ^ 0x5555);
		ASSERT_UEQ(out.md, (uint64_t)id << 20);
	}
	ASSERT_UEQ(atomic_load(&t.collisions), 0);
	fp__cupti_corr_release(&t);
}

TEST(cupti_tables_md_ring)
{
	struct fp__cupti_mdring r;
	struct fp_sink_metadata md = {0}, out;
	uint64_t t1, t;
	int i;

	ASSERT_OK(fp__cupti_md_init(&r, 8));
	md.flags = FP_SINK_MD_FLOPS16 | FP_SINK_MD_BYTES;
	md.flops16 = 1e12;
	md.bytes = 4096;
	t1 = fp__cupti_md_put(&r, &md);
	ASSERT_UEQ(t1, 1);
	ASSERT(fp__cupti_md_get(&r, t1, &out));
	ASSERT_EQ(out.flags, md.flags);
	ASSERT_DEQ(out.flops16, 1e12);
	ASSERT_DEQ(out.bytes, 4096);
	ASSERT(!fp__cupti_md_get(&r, 0, &out));
	ASSERT(!fp__cupti_md_get(&r, 2, &out)); /* not written yet */
	for (i = 0; i < 8; i++)
		t = fp__cupti_md_put(&r, &md);
	ASSERT_UEQ(t, 9);
	ASSERT(!fp__cupti_md_get(&r, t1, &out)); /* overwritten by ticket 9 */
	ASSERT(fp__cupti_md_get(&r, 9, &out));
	fp__cupti_md_release(&r);
}

TEST(cupti_tables_graphs)
{
	struct fp__cupti_graphs g;
	struct fp__cupti_gnode n = {0}, out;

	ASSERT_EQ(fp__cupti_graphs_init(&g, 0), FP_EINVAL);
	ASSERT_OK(fp__cupti_graphs_init(&g, 4));
	n.id = 10;
	n.owner = FP__CUPTI_OWNER_GRAPH | 1;
	n.lctx = 3;
	n.callpath = 4;
	n.has_md = true;
	n.md.flags = FP_SINK_MD_BYTES;
	n.md.bytes = 8;
	ASSERT_OK(fp__cupti_graphs_put(&g, &n));
	ASSERT(fp__cupti_graphs_get(&g, 10, &out));
	ASSERT_EQ(out.lctx, 3);
	ASSERT_DEQ(out.md.bytes, 8);
	/* Instantiation copies the entry to the exec node. */
	ASSERT_OK(fp__cupti_graphs_clone(&g, 10, 20, FP__CUPTI_OWNER_EXEC | 1));
	ASSERT_OK(fp__cupti_graphs_clone(&g, 10, 21, FP__CUPTI_OWNER_EXEC | 2));
	ASSERT_EQ(fp__cupti_graphs_clone(&g, 11, 22, 0), FP_ENOENT);
	ASSERT(fp__cupti_graphs_get(&g, 20, &out));
	ASSERT_EQ(out.lctx, 3);
	ASSERT_UEQ(out.owner, FP__CUPTI_OWNER_EXEC | 1);
	ASSERT_EQ(fp__cupti_graphs_count(&g), 3);
	/* Full at 4 entries. */
	n.id = 30;
	ASSERT_OK(fp__cupti_graphs_put(&g, &n));
	n.id = 31;
	ASSERT_EQ(fp__cupti_graphs_put(&g, &n), FP_ELIMIT);
	ASSERT_UEQ(g.untracked, 1);
	n.id = 30; /* replacing is fine when full */
	n.lctx = 9;
	ASSERT_OK(fp__cupti_graphs_put(&g, &n));
	ASSERT(fp__cupti_graphs_get(&g, 30, &out));
	ASSERT_EQ(out.lctx, 9);
	/* Destroying exec 1 removes its node only. */
	ASSERT_EQ(fp__cupti_graphs_remove_owner(&g, FP__CUPTI_OWNER_EXEC | 1), 1);
	ASSERT(!fp__cupti_graphs_get(&g, 20, &out));
	ASSERT(fp__cupti_graphs_get(&g, 21, &out));
	ASSERT(fp__cupti_graphs_remove(&g, 10));
	ASSERT(!fp__cupti_graphs_remove(&g, 10));
	ASSERT_EQ(fp__cupti_graphs_remove_owner(&g, FP__CUPTI_OWNER_GRAPH | 1), 1); /* node 30 */
	ASSERT_EQ(fp__cupti_graphs_count(&g), 1);
	ASSERT_EQ(fp__cupti_graphs_remove_owner(&g, 0), 0);
	n.id = 0;
	ASSERT_EQ(fp__cupti_graphs_put(&g, &n), FP_EINVAL);
	fp__cupti_graphs_clear(&g);
	ASSERT_EQ(fp__cupti_graphs_count(&g), 0);
	fp__cupti_graphs_release(&g);
}

TEST(cupti_tables_graphs_random)
{
	/* Inserts and deletions against a plain array: backward-shift deletion keeps every
	 * remaining entry reachable. */
	enum {
		IDS = 600,
		OPS = 20000
	};
	static uint32_t ref[IDS]; /* 0 absent, else lctx */
	struct fp__cupti_graphs g;
	struct fp__cupti_gnode n, out;
	unsigned seed = 12345;
	size_t count = 0;
	int op;

	memset(ref, 0, sizeof(ref));
	ASSERT_OK(fp__cupti_graphs_init(&g, IDS));
	for (op = 0; op < OPS; op++) {
		uint32_t id, r;

		seed = seed * 1103515245u + 12345u;
		r = seed >> 8;
		id = r % IDS + 1;
		memset(&n, 0, sizeof(n));
		n.id = id;
		n.owner = FP__CUPTI_OWNER_GRAPH | (id % 7);
		n.lctx = (uint32_t)op + 1;
		if ((r >> 16) % 3) {
			ASSERT_OK(fp__cupti_graphs_put(&g, &n));
			count += !ref[id - 1];
			ref[id - 1] = n.lctx;
		} else {
			ASSERT_EQ(fp__cupti_graphs_remove(&g, id), ref[id - 1] != 0);
			count -= ref[id - 1] != 0;
			ref[id - 1] = 0;
		}
		if (op % 5000 == 4999) {
			/* Drop one owner's nodes now and then. */
			uint64_t owner = FP__CUPTI_OWNER_GRAPH | (uint64_t)(op % 7);
			size_t expect = 0, i;

			for (i = 0; i < IDS; i++)
				if (ref[i] && (i + 1) % 7 == (size_t)(op % 7)) {
					ref[i] = 0;
					expect++;
				}
			ASSERT_EQ(fp__cupti_graphs_remove_owner(&g, owner), expect);
			count -= expect;
		}
	}
	ASSERT_EQ(fp__cupti_graphs_count(&g), count);
	for (op = 0; op < IDS; op++) {
		bool there = fp__cupti_graphs_get(&g, (uint64_t)op + 1, &out);

		ASSERT_EQ(there, ref[op] != 0);
		if (there)
			ASSERT_EQ(out.lctx, ref[op]);
	}
	fp__cupti_graphs_release(&g);
}

TEST(cupti_tables_pool)
{
	struct fp__cupti_pool p;
	uint8_t *b[4], *x;
	int i;

	ASSERT_EQ(fp__cupti_pool_init(&p, 0, 4096), FP_EINVAL);
	ASSERT_EQ(fp__cupti_pool_init(&p, 65, 4096), FP_EINVAL);
	ASSERT_EQ(fp__cupti_pool_init(&p, 4, 4097), FP_EINVAL);
	ASSERT_OK(fp__cupti_pool_init(&p, 4, 4096));
	ASSERT_EQ(fp__cupti_pool_free_count(&p), 4);
	for (i = 0; i < 4; i++) {
		b[i] = fp__cupti_pool_get(&p);
		ASSERT_NOT_NULL(b[i]);
		ASSERT_EQ(((uintptr_t)b[i]) % 8, 0);
		ASSERT_EQ(b[i][0], 0);
		ASSERT_EQ(b[i][4095], 0);
	}
	ASSERT_NULL(fp__cupti_pool_get(&p));
	ASSERT_NULL(fp__cupti_pool_get(&p));
	ASSERT_UEQ(atomic_load(&p.denied), 2);
	ASSERT_OK(fp__cupti_pool_put(&p, b[2]));
	ASSERT_EQ(fp__cupti_pool_put(&p, b[2]), FP_EINVAL); /* twice */
	ASSERT_EQ(fp__cupti_pool_put(&p, b[1] + 8), FP_EINVAL);
	ASSERT_EQ(fp__cupti_pool_put(&p, NULL), FP_EINVAL);
	x = fp__cupti_pool_get(&p);
	ASSERT(x == b[2]);
	fp__cupti_pool_release(&p);

	ASSERT_OK(fp__cupti_pool_init(&p, 64, 1024));
	for (i = 0; i < 64; i++)
		ASSERT_NOT_NULL(fp__cupti_pool_get(&p));
	ASSERT_NULL(fp__cupti_pool_get(&p));
	fp__cupti_pool_release(&p);
}

static void *pool_user(void *arg)
{
	struct fp__cupti_pool *p = arg;
	int i;

	for (i = 0; i < 20000; i++) {
		uint8_t *b = fp__cupti_pool_get(p);

		if (b) {
			/* Own it for a moment: nobody else may have it. */
			b[0]++;
			if (b[0] != 1)
				abort();
			b[0]--;
			if (fp__cupti_pool_put(p, b))
				abort();
		}
	}
	return NULL;
}

TEST(cupti_tables_pool_threads)
{
	struct fp__cupti_pool p;
	pthread_t th[8];
	int i;

	ASSERT_OK(fp__cupti_pool_init(&p, 3, 1024));
	for (i = 0; i < 8; i++)
		ASSERT_OK(pthread_create(&th[i], NULL, pool_user, &p));
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(fp__cupti_pool_free_count(&p), 3);
	fp__cupti_pool_release(&p);
}
