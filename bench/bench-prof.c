/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profiler benchmark and file generator: builds a synthetic profile of about N call-tree nodes
 * through the public session API (null backend, Python context, one kernel event per leaf),
 * finalizes it into DIR (bench-prof.hatchet, .chrome_trace.json, .meta.json), reads the Hatchet
 * file back, and prints one JSON line with the timings. tests/python/test_prof_formats.py uses
 * the files it writes. `--read FILE` only times reading an existing Hatchet file.
 *
 *   bench-prof [--nodes N] [--out DIR] [--no-trace]
 *   bench-prof --read FILE
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/prof.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static int read_only(const char *path)
{
	struct fp_calltree *t = NULL;
	struct fp_hatchet_info info;
	struct fp_diag d;
	double t0 = now_s(), t1;
	int rc = fp_calltree_read_hatchet(path, NULL, &t, &info, &d);

	t1 = now_s();
	if (rc) {
		fprintf(stderr, "bench-prof: %s\n", d.msg);
		return 1;
	}
	printf("{\"bench\":\"prof-read\",\"file\":\"%s\",\"bytes\":%lld,\"nodes\":%zu,"
	       "\"read_s\":%.6f}\n",
	       path, file_size(path), fp_calltree_node_count(t), t1 - t0);
	fp_calltree_free(t);
	return 0;
}

int main(int argc, char **argv)
{
	struct fp_prof_options o = {0};
	struct fp_sink_event ev;
	struct fp_prof_stats st;
	struct fp_calltree *t = NULL;
	struct fp_diag d;
	const char *dir = ".";
	char base[4096], path[4200];
	unsigned long nodes = 10000;
	uint32_t kernels[8], cpu;
	uint64_t leaf = 0;
	double t0, t1, t2, t3;
	int trace = 1, id, i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
			nodes = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--no-trace")) {
			trace = 0;
		} else if (!strcmp(argv[i], "--read") && i + 1 < argc) {
			return read_only(argv[++i]);
		} else {
			fprintf(stderr,
				"usage: bench-prof [--nodes N] [--out DIR] [--no-trace] | --read FILE\n");
			return 2;
		}
	}
	snprintf(base, sizeof(base), "%s/bench-prof", dir);
	o.name = base;
	o.context = FP_PROF_CONTEXT_PYTHON;
	o.data = trace ? FP_PROF_DATA_TRACE : FP_PROF_DATA_TREE;
	o.backend = "null";
	o.max_trace_events = (uint64_t)nodes + 16;
	if (fp_prof_start(&o, &id, &d)) {
		fprintf(stderr, "bench-prof: start: %s\n", d.msg);
		return 1;
	}
	fp_prof_set_device_str(id, "CPU", "0", "arch", "interpreter");
	fp_prof_set_meta(id, "generator", "bench-prof");
	for (i = 0; i < 8; i++) {
		char name[32];
		int k = snprintf(name, sizeof(name), "kernel_%d", i);

		fp_prof_name_intern(name, (size_t)k, &kernels[i]);
	}
	fp_prof_name_intern("CPU", 3, &cpu);
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.device_type = cpu;
	ev.md.flags = FP_SINK_MD_BYTES | FP_SINK_MD_FLOPS16;

	t0 = now_s();
	t = fp_prof_session_tree(fp_prof_session_get(id));
	/* Leaves i: bench.py:level0@(i/4096) / bench.py:level1@(i/64%64) / bench.py:level2@(i%64)
	 * / kernel_(i%8): about two new nodes per leaf. */
	while (fp_calltree_node_count(t) < nodes) {
		struct fp_prof_frame fr[3] = {
			{"bench.py", 8, "level0", 6, (uint32_t)(leaf / 4096)},
			{"bench.py", 8, "level1", 6, (uint32_t)(leaf / 64 % 64)},
			{"bench.py", 8, "level2", 6, (uint32_t)(leaf % 64)},
		};

		rc = fp_prof_callpath_intern(fr, 3, &ev.callpath);
		if (rc) {
			fprintf(stderr, "bench-prof: call path: %s\n", fp_strerror(rc));
			return 1;
		}
		ev.kernel = kernels[leaf % 8];
		ev.begin_ns = fp_prof_clock_ns();
		ev.end_ns = ev.begin_ns + 1000 + leaf % 977;
		ev.stream = leaf % 4;
		ev.grid[0] = (uint32_t)(leaf % 1024) + 1;
		ev.grid[1] = ev.grid[2] = 1;
		ev.md.bytes = (double)(leaf % 4096) * 16;
		ev.md.flops16 = (double)(leaf % 100) * 1e6;
		fp_prof_kernel(id, &ev);
		leaf++;
	}
	t1 = now_s();
	fp_prof_session_stats(fp_prof_session_get(id), &st);
	rc = fp_prof_finalize(id, NULL, &d);
	t2 = now_s();
	if (rc) {
		fprintf(stderr, "bench-prof: finalize: %s\n", d.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%s.hatchet", base);
	t = NULL;
	rc = fp_calltree_read_hatchet(path, NULL, &t, NULL, &d);
	t3 = now_s();
	if (rc) {
		fprintf(stderr, "bench-prof: read back: %s\n", d.msg);
		return 1;
	}
	printf("{\"bench\":\"prof\",\"nodes\":%llu,\"events\":%llu,\"trace\":%s,"
	       "\"build_s\":%.6f,\"finalize_s\":%.6f,\"read_s\":%.6f,\"hatchet_bytes\":%lld",
	       (unsigned long long)st.nodes, (unsigned long long)st.kernels,
	       trace ? "true" : "false", t1 - t0, t2 - t1, t3 - t2, file_size(path));
	snprintf(path, sizeof(path), "%s.chrome_trace.json", base);
	printf(",\"trace_bytes\":%lld,\"read_nodes\":%zu}\n", trace ? file_size(path) : 0,
	       fp_calltree_node_count(t));
	fp_calltree_free(t);
	fp_prof_shutdown();
	return 0;
}
