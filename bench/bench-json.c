/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON writer and reader throughput on a large Hatchet-like call tree generated in memory
 * (nodes with "frame", "metrics" and "children", ~1M nodes by default). Prints one JSON line
 * with sizes, times and MB/s. Not a correctness test: it only checks that the parse sees every
 * node it wrote.
 *
 *   bench-json [--nodes N] [--pretty] [--repeat R]
 *
 * The parse runs R times (default 3) and the fastest run is reported, since shared machines are
 * noisy.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <flagprism/json.h>
#include <flagprism/strbuf.h>

struct gen {
	struct fp_jsonw *w;
	uint64_t rng;
	long remaining; /* nodes still to write */
	long written;
	int64_t time_sum;
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void gen_node(struct gen *g, int depth)
{
	struct fp_jsonw *w = g->w;
	uint64_t r = rng_next(&g->rng);
	char name[96];
	int64_t t = (int64_t)(r % 1000000);
	int kids, i;

	g->remaining--;
	g->written++;
	g->time_sum += t;
	if (r % 3)
		snprintf(name, sizeof(name), "model/layers.py:%u forward_%u",
			 (unsigned)(r >> 20) % 900, (unsigned)(r >> 40) % 64);
	else
		snprintf(name, sizeof(name), "matmul_kernel_%u_BLOCK_M_128_BLOCK_N_64",
			 (unsigned)(r >> 24) % 5000);
	fp_jsonw_object_begin(w);
	fp_jsonw_key(w, "frame");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "name", name);
	fp_jsonw_kv_string(w, "type", r % 3 ? "function" : "kernel");
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "metrics");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "time (ns)", t);
	fp_jsonw_kv_int(w, "count", (int64_t)(r >> 50));
	fp_jsonw_kv_double(w, "flops", (double)(r >> 30) * 1.37);
	fp_jsonw_kv_int(w, "bytes", (int64_t)(r >> 28));
	fp_jsonw_kv_double(w, "util", (double)(r % 10000) / 10000.0);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "children");
	fp_jsonw_array_begin(w);
	kids = depth < 24 ? (int)(rng_next(&g->rng) % 5) : 0;
	for (i = 0; i < kids && g->remaining > 0; i++)
		gen_node(g, depth + 1);
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

/* Count the nodes of the parsed tree and add up their "time (ns)". */
static long walk(const struct fp_json_value *node, int64_t *time_sum)
{
	const struct fp_json_value *kids = fp_json_get(node, "children");
	long n = 1;
	int64_t t;
	size_t i;

	if (fp_json_int64(fp_json_get(fp_json_get(node, "metrics"), "time (ns)"), &t))
		*time_sum += t;
	if (!fp_json_string(fp_json_get(fp_json_get(node, "frame"), "name"), NULL))
		return -1000000000L;
	for (i = 0; i < fp_json_len(kids); i++)
		n += walk(fp_json_at(kids, i), time_sum);
	return n;
}

int main(int argc, char **argv)
{
	struct gen g = {0};
	struct fp_strbuf sb;
	struct fp_json_doc *doc;
	struct fp_diag d;
	struct rusage ru;
	double t0, t1, t2, t3, mb, tw, best = 0;
	long nodes = 1000000, seen = 0;
	int64_t time_sum = 0;
	unsigned flags = 0;
	size_t i;
	int a, rc, repeat = 3, k;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--nodes") && a + 1 < argc)
			nodes = strtol(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--pretty"))
			flags |= FP_JSONW_PRETTY;
		else if (!strcmp(argv[a], "--repeat") && a + 1 < argc)
			repeat = (int)strtol(argv[++a], NULL, 10);
		else {
			fprintf(stderr, "usage: %s [--nodes N] [--pretty] [--repeat R]\n", argv[0]);
			return 2;
		}
	}

	if (repeat < 1)
		repeat = 1;
	fp_strbuf_init(&sb, (size_t)16 << 30);
	g.w = fp_jsonw_new_strbuf(&sb, flags);
	g.rng = 0x243F6A8885A308D3ULL;
	g.remaining = nodes;
	t0 = now();
	fp_jsonw_array_begin(g.w);
	while (g.remaining > 0)
		gen_node(&g, 0);
	fp_jsonw_array_end(g.w);
	rc = fp_jsonw_finish(g.w);
	t1 = now();
	tw = t1 - t0;
	fp_jsonw_free(g.w);
	if (rc) {
		fprintf(stderr, "writer failed: %s\n", fp_strerror(rc));
		return 1;
	}

	for (k = 0; k < repeat; k++) {
		if (k)
			fp_json_doc_free(doc);
		t1 = now();
		rc = fp_json_parse(sb.buf, sb.len, NULL, &doc, &d);
		t2 = now();
		if (rc) {
			fprintf(stderr, "parse failed at %u:%u: %s\n", d.line, d.col, d.msg);
			return 1;
		}
		if (!k || t2 - t1 < best)
			best = t2 - t1;
	}
	t2 = now();
	for (i = 0; i < fp_json_len(fp_json_root(doc)); i++)
		seen += walk(fp_json_at(fp_json_root(doc), i), &time_sum);
	t3 = now();
	fp_json_doc_free(doc);
	if (seen != g.written || time_sum != g.time_sum) {
		fprintf(stderr, "walk saw %ld nodes (wrote %ld)\n", seen, g.written);
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	mb = (double)sb.len / 1e6;
	printf("{\"bench\":\"json\",\"nodes\":%ld,\"pretty\":%s,\"bytes\":%zu,"
	       "\"write_s\":%.3f,\"write_mb_s\":%.1f,\"parse_s\":%.3f,\"parse_mb_s\":%.1f,"
	       "\"walk_s\":%.3f,\"peak_rss_mb\":%.0f}\n",
	       g.written, flags ? "true" : "false", sb.len, tw, mb / tw, best, mb / best, t3 - t2,
	       (double)ru.ru_maxrss / 1024.0);
	fp_strbuf_release(&sb);
	return 0;
}
