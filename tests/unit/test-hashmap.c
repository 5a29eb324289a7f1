/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the u64 map (against a plain array as the reference model, so removal with
 * backward shifting is checked after every step) and for the hash functions' distribution.
 */
#include <stdint.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>

#include "core/hashmap-internal.h"
#include "test.h"

static uint64_t rng_state = 0x1234567887654321ull;

static uint64_t rng(void)
{
	/* xorshift64: deterministic test data */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

TEST(hashmap_basic)
{
	struct fp_hashmap m;
	uint64_t v = 7;
	size_t iter = 0;

	fp_hashmap_init(&m);
	ASSERT_UEQ(fp_hashmap_count(&m), 0);
	ASSERT(!fp_hashmap_get(&m, 1, &v));
	ASSERT(!fp_hashmap_get(&m, 0, &v));
	ASSERT(!fp_hashmap_remove(&m, 1));
	ASSERT(!fp_hashmap_remove(&m, 0));
	ASSERT(!fp_hashmap_next(&m, &iter, NULL, NULL));
	ASSERT_UEQ(v, 7);
	ASSERT_OK(fp_hashmap_put(&m, 1, 10));
	ASSERT_OK(fp_hashmap_put(&m, 0, 20)); /* key 0 is an ordinary key */
	ASSERT_OK(fp_hashmap_put(&m, UINT64_MAX, 30));
	ASSERT_UEQ(fp_hashmap_count(&m), 3);
	ASSERT(fp_hashmap_get(&m, 1, &v) && v == 10);
	ASSERT(fp_hashmap_get(&m, 0, &v) && v == 20);
	ASSERT(fp_hashmap_get(&m, UINT64_MAX, &v) && v == 30);
	ASSERT(fp_hashmap_get(&m, 0, NULL));
	ASSERT_OK(fp_hashmap_put(&m, 1, 11));
	ASSERT_OK(fp_hashmap_put(&m, 0, 21));
	ASSERT_UEQ(fp_hashmap_count(&m), 3);
	ASSERT(fp_hashmap_get(&m, 1, &v) && v == 11);
	ASSERT(fp_hashmap_get(&m, 0, &v) && v == 21);
	ASSERT(fp_hashmap_remove(&m, 0));
	ASSERT(!fp_hashmap_get(&m, 0, NULL));
	ASSERT(fp_hashmap_remove(&m, 1));
	ASSERT(!fp_hashmap_remove(&m, 1));
	ASSERT_UEQ(fp_hashmap_count(&m), 1);
	fp_hashmap_clear(&m);
	ASSERT_UEQ(fp_hashmap_count(&m), 0);
	ASSERT(!fp_hashmap_get(&m, UINT64_MAX, NULL));
	ASSERT_OK(fp_hashmap_put(&m, 5, 5));
	fp_hashmap_release(&m);
	ASSERT_UEQ(fp_hashmap_count(&m), 0);
	ASSERT(!fp_hashmap_get(&m, 5, NULL));
	fp_hashmap_release(&m);
	fp_hashmap_release(NULL);
}

/* Random puts/removes over a small key range, checked against an array after every step. */
TEST(hashmap_model)
{
	enum {
		KEYS = 3000,
		OPS = 200000
	};
	static uint64_t model[KEYS];
	static unsigned char present[KEYS];
	struct fp_hashmap m;
	size_t count = 0, i, iter, seen;
	uint64_t k, v;
	int op;

	fp_hashmap_init(&m);
	for (op = 0; op < OPS; op++) {
		uint64_t r = rng();
		size_t key = (size_t)(r % KEYS);

		/* keys are clustered (multiples of 2^20) so that hash quality matters */
		k = (uint64_t)key << 20;
		if ((r >> 32) % 3 != 0) {
			ASSERT_OK(fp_hashmap_put(&m, k, r));
			count += !present[key];
			present[key] = 1;
			model[key] = r;
		} else {
			ASSERT_EQ(fp_hashmap_remove(&m, k), present[key]);
			count -= present[key];
			present[key] = 0;
		}
		ASSERT_UEQ(fp_hashmap_count(&m), count);
		if (op % 1000 == 0) {
			for (i = 0; i < KEYS; i++) {
				bool got = fp_hashmap_get(&m, (uint64_t)i << 20, &v);

				ASSERT_EQ(got, present[i]);
				if (got)
					ASSERT_UEQ(v, model[i]);
			}
		}
	}
	/* iteration yields each entry once */
	iter = 0;
	seen = 0;
	while (fp_hashmap_next(&m, &iter, &k, &v)) {
		ASSERT_EQ(k & 0xfffff, 0);
		ASSERT(present[k >> 20]);
		ASSERT_UEQ(v, model[k >> 20]);
		present[k >> 20] = 2;
		seen++;
	}
	ASSERT_UEQ(seen, count);
	fp_hashmap_release(&m);
}

TEST(hashmap_million_remove_half)
{
	enum {
		N = 1000000
	};
	struct fp_hashmap m;
	uint64_t i, v;
	size_t iter = 0, seen = 0;

	fp_hashmap_init(&m);
	for (i = 0; i < N; i++)
		ASSERT_OK(fp_hashmap_put(&m, i * 0x100000001ull, i));
	ASSERT_UEQ(fp_hashmap_count(&m), N);
	for (i = 0; i < N; i += 2)
		ASSERT(fp_hashmap_remove(&m, i * 0x100000001ull));
	ASSERT_UEQ(fp_hashmap_count(&m), N / 2);
	for (i = 0; i < N; i++) {
		bool got = fp_hashmap_get(&m, i * 0x100000001ull, &v);

		ASSERT_EQ(got, (int)(i & 1));
		if (got)
			ASSERT_UEQ(v, i);
	}
	while (fp_hashmap_next(&m, &iter, NULL, &v)) {
		ASSERT_EQ(v & 1, 1);
		seen++;
	}
	ASSERT_UEQ(seen, N / 2);
	fp_hashmap_release(&m);
}

TEST(hashmap_limit_and_reserve)
{
	struct fp_hashmap m;
	uint64_t i;

	fp_hashmap_init(&m);
	fp_hashmap_set_limit(&m, 10);
	for (i = 0; i < 10; i++)
		ASSERT_OK(fp_hashmap_put(&m, i, i));
	ASSERT_EQ(fp_hashmap_put(&m, 10, 10), FP_ELIMIT);
	ASSERT_OK(fp_hashmap_put(&m, 3, 33)); /* replacing is always fine */
	ASSERT(fp_hashmap_remove(&m, 0));
	ASSERT_EQ(fp_hashmap_put(&m, 11, 11), FP_OK);
	ASSERT_EQ(fp_hashmap_put(&m, 0, 0), FP_ELIMIT); /* key 0 counts too */
	ASSERT_EQ(fp_hashmap_reserve(&m, 11), FP_ELIMIT);
	ASSERT_UEQ(fp_hashmap_count(&m), 10);
	fp_hashmap_release(&m);

	fp_hashmap_init(&m);
	fpt_oom_install(-1);
	ASSERT_OK(fp_hashmap_reserve(&m, 1000));
	ASSERT_EQ(fpt_oom_count(), 1);
	for (i = 1; i <= 1000; i++)
		ASSERT_OK(fp_hashmap_put(&m, i, i));
	ASSERT_EQ(fpt_oom_count(), 1); /* no growth after reserve */
	fp_hashmap_release(&m);
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
}

TEST(hashmap_hash_u64)
{
	struct fp_hashmap seen;
	uint64_t i, buckets[64] = {0};
	double chi = 0;

	/* bijective, so no collisions; and low bits (table index) are uniform for 0..N-1 */
	fp_hashmap_init(&seen);
	for (i = 0; i < 200000; i++) {
		uint64_t h = fp_hash_u64(i);

		ASSERT(!fp_hashmap_get(&seen, h, NULL));
		ASSERT_OK(fp_hashmap_put(&seen, h, i));
		buckets[h & 63]++;
	}
	fp_hashmap_release(&seen);
	for (i = 0; i < 64; i++) {
		double d = (double)buckets[i] - 200000.0 / 64;

		chi += d * d / (200000.0 / 64);
	}
	ASSERT_LT(chi, 130); /* 63 degrees of freedom: p < 1e-5 of failing by chance */
	ASSERT(fp_hash_u64(0) != 0);
}

static int popcount64(uint64_t x)
{
	int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

TEST(hashmap_hash_bytes)
{
	unsigned char buf[200];
	struct fp_hashmap seen;
	uint64_t buckets[256] = {0};
	double chi = 0;
	size_t n, bit, total = 0, flips = 0;
	unsigned i;
	char s[32];

	ASSERT_UEQ(fp_hash_bytes(NULL, 0), fp_hash_bytes("", 0));
	ASSERT_UEQ(fp_hash_bytes("abc", 3), fp_hash_bytes("abcd", 3));
	ASSERT(fp_hash_bytes("abc", 3) != fp_hash_bytes("abd", 3));

	/* zero buffers of every length 0..200 and every 1- and 2-byte string: all distinct */
	memset(buf, 0, sizeof(buf));
	fp_hashmap_init(&seen);
	for (n = 0; n <= sizeof(buf); n++)
		if (n != 1 && n != 2) /* those two are among the short strings below */
			ASSERT_OK(fp_hashmap_put(&seen, fp_hash_bytes(buf, n), n));
	for (i = 0; i < 65536 + 256; i++) {
		unsigned char b[2] = {(unsigned char)i, (unsigned char)(i >> 8)};

		ASSERT_OK(fp_hashmap_put(&seen, fp_hash_bytes(b, i < 65536 ? 2 : 1), i));
	}
	ASSERT_UEQ(fp_hashmap_count(&seen), sizeof(buf) - 1 + 65536 + 256);
	fp_hashmap_release(&seen);

	/* sequential names spread evenly over buckets (low byte) */
	for (i = 0; i < 256000; i++) {
		int len = snprintf(s, sizeof(s), "name%u", i);

		buckets[fp_hash_bytes(s, (size_t)len) & 255]++;
	}
	for (i = 0; i < 256; i++) {
		double d = (double)buckets[i] - 1000.0;

		chi += d * d / 1000.0;
	}
	ASSERT_LT(chi, 360); /* 255 degrees of freedom */

	/* avalanche: flipping one input bit flips about half the output bits */
	for (n = 1; n <= 64; n += 7) {
		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)rng();
		for (bit = 0; bit < n * 8; bit++) {
			uint64_t h0 = fp_hash_bytes(buf, n), h1;

			buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
			h1 = fp_hash_bytes(buf, n);
			buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
			flips += (size_t)popcount64(h0 ^ h1);
			total++;
		}
	}
	ASSERT_GT(flips, total * 30);
	ASSERT_LT(flips, total * 34);
}
