/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the advice's readers of untrusted text (fp_advise_run()): the bytes are
 * a meta file and a Chrome trace separated by the first NUL (no NUL: the meta file alone), given
 * with a fixed profile whose kernels every rule looks at (a CUDA device, counters, PC-sampling
 * lines, a kernel under a Python frame). The meta file's facts notes ("estimate:<kernel>" after
 * "\nfacts: ") and autotune objects are parsed from it. Any input must give FP_OK or FP_EFORMAT/
 * FP_ELIMIT with a message, never a crash; a successful advice is then rendered (text, plan,
 * JSON) to /dev/null, which must not fail.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/advise.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/status.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "fuzz-advise: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                  \
			abort();                                                            \
		}                                                                           \
	} while (0)

static void put(struct fp_calltree *t, uint32_t node, const char *name, double v)
{
	uint32_t m;

	CHECK(fp_calltree_metric_auto(t, name, strlen(name), &m) == FP_OK);
	CHECK(fp_calltree_add_metric(t, node, m, v) == FP_OK);
}

static void put_str(struct fp_calltree *t, uint32_t node, const char *name, const char *s)
{
	uint32_t m;

	CHECK(fp_calltree_metric_auto(t, name, strlen(name), &m) == FP_OK);
	CHECK(fp_calltree_set_string(t, node, m, s, strlen(s)) == FP_OK);
}

static uint32_t path(struct fp_calltree *t, const char *const *names, size_t n)
{
	uint32_t fr[4], node;
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(fp_calltree_intern(t, names[i], strlen(names[i]), &fr[i]) == FP_OK);
	CHECK(fp_calltree_add_path(t, fr, n, &node) == FP_OK);
	return node;
}

static struct fp_calltree *profile(void)
{
	static const char *const k1[] = {"main.py:run@10", "k"};
	static const char *const k2[] = {"main.py:loop@7", "tiny"};
	static const char *const l1[] = {"main.py:run@10", "k", "k.py:14"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t n;

	CHECK(t);
	CHECK(fp_calltree_device_set_str(t, "CUDA", "0", "arch", "90") == FP_OK);
	CHECK(fp_calltree_device_set(t, "CUDA", "0", "num_sms", 132) == FP_OK);
	CHECK(fp_calltree_device_set(t, "CUDA", "0", "clock_rate", 1980000) == FP_OK);
	CHECK(fp_calltree_device_set(t, "CUDA", "0", "bus_width", 5120) == FP_OK);
	CHECK(fp_calltree_device_set(t, "CUDA", "0", "memory_clock_rate", 2619000) == FP_OK);
	n = path(t, k1, 2);
	put_str(t, n, "device_id", "0");
	put_str(t, n, "device_type", "CUDA");
	put(t, n, "time (ns)", 1e6);
	put(t, n, "count", 3);
	put(t, n, "est_bytes", 1e7);
	put(t, n, "est_flops", 1e9);
	put(t, n, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1e6);
	put(t, n, "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1e4);
	n = path(t, l1, 3);
	put(t, n, "num_samples", 100);
	put(t, n, "stalled_long_scoreboard", 60);
	n = path(t, k2, 2);
	put_str(t, n, "device_id", "0");
	put_str(t, n, "device_type", "CUDA");
	put(t, n, "time (ns)", 1e5);
	put(t, n, "count", 20);
	CHECK(fp_calltree_finalize(t) == FP_OK);
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fp_calltree *t;
	const uint8_t *nul = memchr(data, 0, size);
	struct fp_advise_input in;
	struct fp_advice *a = NULL;
	struct fp_diag diag;
	struct fp_jsonw *w;
	FILE *devnull;
	int rc;

	if (!t)
		t = profile();
	memset(&in, 0, sizeof(in));
	in.main.tree = t;
	in.main.path = "fuzz.hatchet";
	in.main.meta = (const char *)data;
	in.main.meta_len = nul ? (size_t)(nul - data) : size;
	if (nul) {
		in.main.trace = (const char *)nul + 1;
		in.main.trace_len = size - (size_t)(nul - data) - 1;
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_advise_run(&in, NULL, &a, &diag);
	if (rc) {
		CHECK(!a);
		CHECK(rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM);
		CHECK(diag.msg[0]);
		return 0;
	}
	devnull = fopen("/dev/null", "w");
	CHECK(devnull);
	CHECK(fp_advice_render(a, devnull) == FP_OK);
	CHECK(fp_advice_render_plan(a, devnull) == FP_OK);
	w = fp_jsonw_new_file(devnull, 0);
	CHECK(w);
	CHECK(fp_advice_write_json(a, w) == FP_OK);
	CHECK(fp_jsonw_finish(w) == FP_OK);
	fp_jsonw_free(w);
	fclose(devnull);
	fp_advice_free(a);
	return 0;
}
