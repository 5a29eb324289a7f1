/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of the aggregation data structures: interning N distinct strings (default 1M), then
 * the same N strings again (all hits; once in a scattered order, where every step misses the
 * caches, once in insertion order), then N lookups; and M (default 10M) hashmap puts and gets.
 * Prints one JSON line with nanoseconds per operation. Usage: `bench-intern [N [M]]`. Strings are generated before timing starts, so only the data
 * structures are measured. A client of the public API only.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flagprism/status.h>

#include "core/hashmap-internal.h"
#include "core/intern-internal.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench-intern: %s: %s\n", what, fp_strerror(rc));
	exit(1);
}

/* Visit 0..n-1 in a scattered order: i * step mod n with step coprime to n. */
static size_t scatter_step(size_t n)
{
	size_t step = n / 2 + 7919, a, b, t;

	for (;; step++) {
		for (a = step, b = n; b; t = a % b, a = b, b = t)
			;
		if (a == 1)
			return step;
	}
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	size_t m = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000000;
	size_t i, j, step, *off, total = 0;
	uint32_t *len, id;
	uint64_t check = 0, v;
	struct fp_intern *in;
	struct fp_hashmap map;
	double t0, t_new, t_rep, t_seq, t_find, t_put, t_get, t_miss;
	char *text;
	int rc;

	if (n < 2 || m < 1) {
		fprintf(stderr, "usage: bench-intern [N>=2 [M>=1]]\n");
		return 2;
	}
	/* Names shaped like real ones: a shared path prefix, a kernel name, a line number. */
	off = malloc(n * sizeof(*off));
	len = malloc(n * sizeof(*len));
	text = malloc(n * 64);
	if (!off || !len || !text)
		die("setup", FP_ENOMEM);
	for (i = 0; i < n; i++) {
		int w = snprintf(text + total, 64, "/home/user/proj/kernels/k%zu.py:matmul_%zu:%zu",
				 i % 997, i, (i * 31) % 4000);

		off[i] = total;
		len[i] = (uint32_t)w;
		total += (size_t)w;
	}

	in = fp_intern_new();
	if (!in)
		die("fp_intern_new", FP_ENOMEM);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		rc = fp_intern_add(in, text + off[i], len[i], &id);
		if (rc)
			die("fp_intern_add", rc);
		check += id;
	}
	t_new = now_ns() - t0;
	step = scatter_step(n);
	t0 = now_ns();
	for (i = 0, j = 0; i < n; i++, j = (j + step) % n) {
		rc = fp_intern_add(in, text + off[j], len[j], &id);
		if (rc)
			die("fp_intern_add", rc);
		check += id;
	}
	t_rep = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		rc = fp_intern_add(in, text + off[i], len[i], &id);
		if (rc)
			die("fp_intern_add", rc);
		check += id;
	}
	t_seq = now_ns() - t0;
	t0 = now_ns();
	for (i = 0, j = 1; i < n; i++, j = (j + step) % n) {
		rc = fp_intern_find(in, text + off[j], len[j], &id);
		if (rc)
			die("fp_intern_find", rc);
		check += id;
	}
	t_find = now_ns() - t0;

	fp_hashmap_init(&map);
	t0 = now_ns();
	for (i = 0; i < m; i++) {
		/* (parent, frame) id pairs, as the call tree uses them */
		rc = fp_hashmap_put(&map, (uint64_t)(i / 16) << 32 | (i % 16), i);
		if (rc)
			die("fp_hashmap_put", rc);
	}
	t_put = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < m; i++) {
		size_t k = (i * 7919) % m;

		if (fp_hashmap_get(&map, (uint64_t)(k / 16) << 32 | (k % 16), &v))
			check += v;
	}
	t_get = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < m; i++)
		if (fp_hashmap_get(&map, (uint64_t)(i / 16) << 32 | (16 + i % 16), &v))
			check += v;
	t_miss = now_ns() - t0;

	printf("{\"bench\": \"intern\", \"strings\": %zu, \"string_bytes\": %zu, "
	       "\"intern_add_new_ns\": %.1f, \"intern_add_repeat_ns\": %.1f, "
	       "\"intern_add_repeat_seq_ns\": %.1f, "
	       "\"intern_find_ns\": %.1f, \"intern_memory_bytes\": %zu, "
	       "\"hashmap_keys\": %zu, \"hashmap_put_ns\": %.1f, \"hashmap_get_ns\": %.1f, "
	       "\"hashmap_get_miss_ns\": %.1f, \"checksum\": %llu}\n",
	       n, total, t_new / (double)n, t_rep / (double)n, t_seq / (double)n,
	       t_find / (double)n, fp_intern_memory(in), m, t_put / (double)m, t_get / (double)m,
	       t_miss / (double)m, (unsigned long long)check);
	fp_hashmap_release(&map);
	fp_intern_free(in);
	free(text);
	free(len);
	free(off);
	return 0;
}
