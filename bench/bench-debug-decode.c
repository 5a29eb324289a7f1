/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of the Debugger's host side on the launch the design targets: a 64M-element vector
 * add (65536 programs of BLOCK 1024), level 1 + addr_level 1, six records per program (address
 * summaries of the loads of x and y and of the store, value summaries of x, y and the output).
 * It synthesises the record buffer per docs/formats/record-format.md, then times fp_dbg_decode() and
 * fp_dbg_write_reports() (text, JSON, op log) into a temporary directory, best of a few rounds,
 * and prints one JSON line. Usage: bench-debug-decode [programs] [rounds] [raw] [keep_dir], where a
 * third argument "1" also writes the raw record dump, and a fourth names a directory where the
 * last round's reports are kept (with the tensor arguments in the launch, so they carry
 * extents: bench/bench_report.py renders them). Not a correctness test
 * (tests/unit/test-debug-*.c are).
 */
#define _GNU_SOURCE 1
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/debug.h>

#define BLOCK 1024
#define SLOTS 8
#define RECS 6

static const char SITES[] =
	"{\"version\":1,\"kernel\":\"add_kernel\",\"file\":\"/bench/add.py\",\"level\":1,"
	"\"addr_level\":1,\"statements\":["
	"{\"id\":0,\"line\":10,\"col\":4,\"source\":\"x = tl.load(x_ptr + offs, mask=mask)\"},"
	"{\"id\":1,\"line\":11,\"col\":4,\"source\":\"y = tl.load(y_ptr + offs, mask=mask)\"},"
	"{\"id\":2,\"line\":12,\"col\":4,\"source\":\"output = x + y\"},"
	"{\"id\":3,\"line\":13,\"col\":4,\"source\":\"tl.store(output_ptr + offs, output, mask=mask)\"}"
	"],\"sites\":["
	"{\"id\":1,\"statement\":0,\"kind\":\"load\",\"name\":\"x_ptr + offs\",\"reads\":[\"offs\",\"mask\"]},"
	"{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"x\"},"
	"{\"id\":3,\"statement\":1,\"kind\":\"load\",\"name\":\"y_ptr + offs\",\"reads\":[\"offs\",\"mask\"]},"
	"{\"id\":4,\"statement\":1,\"kind\":\"value\",\"name\":\"y\"},"
	"{\"id\":5,\"statement\":2,\"kind\":\"value\",\"name\":\"output\",\"reads\":[\"x\",\"y\"]},"
	"{\"id\":6,\"statement\":3,\"kind\":\"store\",\"name\":\"output_ptr + offs\","
	"\"reads\":[\"output\",\"mask\"]}]}";

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

/* xorshift: deterministic pseudo-random values for the summaries */
static uint64_t rng = 0x9e3779b97f4a7c15u;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static void value_rec(uint64_t *w, unsigned site, uint64_t k, double scale)
{
	double mean = urand() * scale, lo = mean - urand() * scale, hi = mean + urand() * scale;

	w[0] = site | 1u << 16 | (uint64_t)12 << 24 | (uint64_t)1 << 32 | (k & 0xffffff) << 40;
	w[1] = BLOCK;
	w[2] = 0;
	w[3] = UINT64_C(0xffffffff) << 32;
	w[4] = bits(mean * BLOCK);
	w[5] = bits((mean * mean + urand()) * BLOCK);
	w[6] = bits((double)(float)lo);
	w[7] = bits((double)(float)hi);
}

static void addr_rec(uint64_t *w, unsigned site, unsigned kind, uint64_t k, uint64_t base,
		     uint64_t p)
{
	uint64_t first = base + p * BLOCK * 4, last = first + (BLOCK - 1) * 4;

	w[0] = site | (uint64_t)kind << 16 | (uint64_t)12 << 24 | (uint64_t)1 << 32 |
	       (k & 0xffffff) << 40;
	w[1] = BLOCK;
	w[2] = BLOCK;
	w[3] = first;
	w[4] = last;
	w[5] = first;
	w[6] = last;
	w[7] = UINT64_MAX;
}

int main(int argc, char **argv)
{
	uint64_t P = argc > 1 ? strtoull(argv[1], NULL, 10) : 65536, p;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, r, raw = argc > 3 && !strcmp(argv[3], "1");
	const char *keep = argc > 4 ? argv[4] : NULL;
	size_t words = 8 + (size_t)P * SLOTS * 8, len = words * 8;
	uint64_t *buf = calloc(words, 8);
	double best_dec = 1e9, best_wr = 1e9, best_tot = 1e9;
	char dir[2048], launch[8192], args[2048], path[2100];
	struct fp_dbg_outputs out;
	struct fp_dbg_run *run;
	struct fp_diag d;
	struct stat sb;
	long txt = 0, json = 0;
	int st;

	if (!buf || P == 0)
		return 2;
	buf[0] = FP_DBG_MAGIC;
	buf[1] = 1 | (uint64_t)8 << 16 | (uint64_t)8 << 32;
	buf[2] = SLOTS;
	buf[3] = P;
	buf[7] = 6;
	for (p = 0; p < P; p++) {
		uint64_t *s = buf + 8 + p * SLOTS * 8;

		addr_rec(s + 0, 1, 2, 0, 0x7f1000000000, p);
		value_rec(s + 8, 2, 1, 1.0);
		addr_rec(s + 16, 3, 2, 2, 0x7f2000000000, p);
		value_rec(s + 24, 4, 3, 1.0);
		value_rec(s + 32, 5, 4, 2.0);
		addr_rec(s + 40, 6, 3, 5, 0x7f3000000000, p);
	}
	args[0] = '\0';
	if (keep) {
		static const char *const names[] = {"x_ptr", "y_ptr", "output_ptr"};
		size_t n = 0;

		snprintf(dir, sizeof(dir), "%s", keep);
		for (r = 0; r < 3; r++) {
			uint64_t base =
				UINT64_C(0x7f1000000000) + (uint64_t)r * UINT64_C(0x1000000000);

			n += (size_t)snprintf(args + n, sizeof(args) - n,
					      "%s{\"name\":\"%s\",\"kind\":\"tensor\",\"dtype\":"
					      "\"float32\",\"shape\":[%" PRIu64 "],\"strides\":[1],"
					      "\"data_ptr\":%" PRIu64 ",\"storage_ptr\":%" PRIu64
					      ",\"storage_nbytes\":%" PRIu64 ",\"element_size\":4}",
					      r ? "," : ",\"args\":[", names[r], P * BLOCK, base,
					      base, P * BLOCK * 4);
		}
		snprintf(args + n, sizeof(args) - n, "]");
	} else {
		snprintf(dir, sizeof(dir), "/tmp/fp-bench-debug-XXXXXX");
		if (!mkdtemp(dir))
			return 2;
	}
	snprintf(launch, sizeof(launch),
		 "{\"output_dir\":\"%s\",\"stem\":\"bench\",\"grid\":[%" PRIu64 "],"
		 "\"backend\":\"cuda\",\"ttir\":null,\"ttir_unavailable_reason\":\"benchmark\","
		 "\"kernel\":\"add_kernel\",\"export_raw_records\":%s%s}",
		 dir, P, raw ? "true" : "false", args);
	for (r = 0; r < rounds; r++) {
		double t0 = now(), t1, t2;

		st = fp_dbg_decode(buf, len, SITES, strlen(SITES), &run, &d);
		if (st) {
			fprintf(stderr, "decode: %s: %s\n", fp_status_name(st), d.msg);
			return 1;
		}
		t1 = now();
		fp_dbg_outputs_init(&out);
		st = fp_dbg_write_reports(run, launch, strlen(launch), &out, &d);
		t2 = now();
		if (st) {
			fprintf(stderr, "write: %s: %s\n", fp_status_name(st), d.msg);
			return 1;
		}
		if (!stat(out.txt, &sb))
			txt = (long)sb.st_size;
		if (!stat(out.json, &sb))
			json = (long)sb.st_size;
		if (!keep || r + 1 < rounds) {
			remove(out.txt);
			remove(out.json);
			remove(out.op_log_txt);
			remove(out.op_log_json);
			if (out.raw)
				remove(out.raw);
		}
		fp_dbg_outputs_release(&out);
		fp_dbg_run_free(run);
		best_dec = fmin(best_dec, t1 - t0);
		best_wr = fmin(best_wr, t2 - t1);
		best_tot = fmin(best_tot, t2 - t0);
	}
	snprintf(path, sizeof(path), "%s", dir);
	if (!keep)
		rmdir(path);
	printf("{\"bench\": \"debug-decode\", \"raw\": %s, \"programs\": %" PRIu64
	       ", \"records\": %" PRIu64
	       ", \"buffer_bytes\": %zu, \"rounds\": %d, \"decode_s\": %.4f, \"write_s\": %.4f,"
	       " \"total_s\": %.4f, \"txt_bytes\": %ld, \"json_bytes\": %ld}\n",
	       raw ? "true" : "false", P, P * RECS, len, rounds, best_dec, best_wr, best_tot, txt,
	       json);
	free(buf);
	return 0;
}
