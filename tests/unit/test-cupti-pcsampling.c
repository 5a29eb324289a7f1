/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "cupti" backend's PC-sampling mode end to end, without a GPU: the backend loads
 * libfakecupti.so (whose PC-sampling part is tests/unit/fake-cupti/fake-cupti-pcs.c), a test
 * fires the module-load callback with a real Triton cubin (tests/data/cubin/hot_loop.cubin),
 * launches, queues PC records and kernel records, and checks that the samples land on the
 * kernel's node under the launching scope, one child per Triton source line; that unmappable
 * samples are kept and counted; and that refusals (permission denied, a second sampling
 * session) say why and leave the backend usable.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/cupti-pcsampling.h>
#include <flagprism/cupti.h>
#include <flagprism/prof.h>

#if defined(__has_include)
#if __has_include(<flagprism/cupti-metrics.h>)
#include <flagprism/cupti-metrics.h>
#define HAVE_METRICS 1
#endif
#endif

#include "backend/cuda/cupti-internal.h"
#include "backend/cuda/cupti-pcs-abi.h"
#include "fake-cupti/fake-bind.h"
#include "fake-cupti/fake-cupti-pcs.h"
#include "fake-cupti/fake-cupti.h"
#include "ir/cubin-lines-internal.h"
#include "test.h"

#define DRV FP__CUPTI_CB_DOMAIN_DRIVER_API
#define LAUNCH_EX FP__CUPTI_DRIVER_cuLaunchKernelEx

static struct {
	void *h;
#define X(ret, name, params) ret(*name) params;
	FAKE_CUPTI_CONTROL(X)
	FAKE_CUPTI_PCS_CONTROL(X)
#undef X
	int (*crc)(struct fp__cupti_cubin_crc_params *p);
} fk;

static char out_dir[] = "/tmp/fp-pcs-test-XXXXXX";

static void fake_open(void)
{
	fk.h = fake_cupti_load(FP_FAKE_CUPTI_PATH);
	FAKE_CUPTI_CONTROL(FAKE_BIND_X)
	FAKE_CUPTI_PCS_CONTROL(FAKE_BIND_X)
	FAKE_BIND(fk.h, fk.crc, "cuptiGetCubinCrc");
	fk.fake_cupti_reset();
	fk.fake_pcs_reset();
	ASSERT_OK(fp_cupti_register());
	ASSERT_NOT_NULL(mkdtemp(out_dir));
}

static void fake_close(void)
{
	static const char *const suffixes[] = {".hatchet", ".meta.json"};
	char path[300];
	size_t i;

	fp_prof_shutdown();
	fp__cupti_reset();
	fk.fake_cupti_reset();
	fk.fake_pcs_reset();
	dlclose(fk.h);
	unsetenv(FP_CUPTI_PATH_ENV);
	unsetenv("FLAGPRISM_CUDA_DRIVER_PATH");
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/pcs%s", out_dir, suffixes[i]);
		unlink(path);
	}
	rmdir(out_dir);
	memcpy(out_dir + sizeof(out_dir) - 7, "XXXXXX", 6);
}

static int start(struct fp_diag *d)
{
	struct fp_prof_options o = {0};
	char name[300];
	int id = -1, rc;

	static unsigned n;

	/* A second open session gets a name of its own (two sessions never share one). */
	if (fp_prof_session_count())
		snprintf(name, sizeof(name), "%s/pcs-%u", out_dir, ++n);
	else
		snprintf(name, sizeof(name), "%s/pcs", out_dir);
	o.name = name;
	o.backend = FP_CUPTI_BACKEND;
	rc = fp_prof_start(&o, &id, d);
	return rc ? rc : id;
}

static uint64_t first_pc_of_line(const uint8_t *cubin, size_t len, uint32_t line)
{
	struct fp_cubin_lines *cl = NULL;
	struct fp_cubin_loc loc;
	uint64_t pc = UINT64_MAX;
	size_t i;

	ASSERT_OK(fp_cubin_lines_parse(cubin, len, &cl, NULL));
	for (i = 0; i < fp_cubin_lines_count(cl) && pc == UINT64_MAX; i++) {
		ASSERT_OK(fp_cubin_lines_row(cl, i, &loc));
		if (loc.line == line)
			pc = loc.pc_lo;
	}
	fp_cubin_lines_free(cl);
	ASSERT_NE(pc, UINT64_MAX);
	return pc;
}

/* The child of `node` whose name ends with `suffix`. */
static uint32_t child_ending(struct fp_calltree *t, uint32_t node, const char *suffix)
{
	size_t sl = strlen(suffix);
	uint32_t c;

	for (c = fp_calltree_node_first_child(t, node); c != FP_CALLTREE_NONE;
	     c = fp_calltree_node_next_sibling(t, c)) {
		size_t n;
		const char *name = fp_calltree_node_name(t, c, &n);

		if (n >= sl && memcmp(name + n - sl, suffix, sl) == 0)
			return c;
	}
	return FP_CALLTREE_NONE;
}

static double value(struct fp_calltree *t, uint32_t node, const char *m)
{
	struct fp_calltree_value v;
	uint32_t id;

	if (node == FP_CALLTREE_NONE || fp_calltree_metric_find(t, m, strlen(m), &id) ||
	    fp_calltree_get(t, node, id, &v))
		return -1;
	return v.self;
}

static void kernel_record(uint32_t corr, const char *name)
{
	struct fake_kernel k;

	memset(&k, 0, sizeof(k));
	k.corr = corr;
	k.start = fp_prof_clock_ns() + 1000;
	k.end = k.start + 5000;
	k.grid[0] = k.grid[1] = k.grid[2] = 1;
	k.block[0] = k.block[1] = k.block[2] = 128;
	k.name = name;
	ASSERT_OK(fk.fake_cupti_kernel(&k));
}

TEST(cupti_pcsampling_samples_land_on_triton_lines)
{
	struct fp_cupti_pcsampling_stats ps;
	struct fp__cupti_cubin_crc_params cp;
	struct fp__cupti_module_data mod;
	struct fp_calltree *t;
	struct fp_diag d;
	size_t len;
	uint8_t *cubin = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);
	uint64_t pc27 = first_pc_of_line(cubin, len, 27), pc28 = first_pc_of_line(cubin, len, 28);
	uint32_t outer, kern, l27, l28, nol;
	int id;

	fake_open();
	memset(&cp, 0, sizeof(cp));
	cp.size = sizeof(cp);
	cp.cubin = cubin;
	cp.cubinSize = len;
	ASSERT_OK(fk.crc(&cp));
	ASSERT_OK(fp_cupti_pcsampling_request(NULL, &d));
	id = start(&d);
	ASSERT_GE(id, 0);
	ASSERT(fp_cupti_pcsampling_active());
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_ENABLES), 1);
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_MODE), FP__CUPTI_PCS_MODE_CONTINUOUS);
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_REASONS), 4);
	/* the module loads while sampling: the backend copies its cubin */
	mod.moduleId = 1;
	mod.cubinSize = len;
	mod.pCubin = (const char *)cubin;
	fk.fake_cupti_resource(FP__CUPTI_CBID_RESOURCE_MODULE_LOADED, &mod);

	ASSERT_OK(fp_prof_scope_enter(id, "outer", 5, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 5);
	ASSERT_OK(fp_prof_scope_exit(id, "outer", 5, NULL));
	/* continuous mode: the records carry no correlation id (the fake zeroes it); the samples
	 * go where the function's launches went */
	ASSERT_OK(fk.fake_pcs_push(5, cp.cubinCrc, pc27, "hot_loop", FAKE_PCS_LONG_SB, 70));
	ASSERT_OK(fk.fake_pcs_push(5, cp.cubinCrc, pc27, "hot_loop", FAKE_PCS_SELECTED, 10));
	ASSERT_OK(fk.fake_pcs_push(5, cp.cubinCrc, pc28, "hot_loop", FAKE_PCS_MATH, 15));
	ASSERT_OK(fk.fake_pcs_push(5, cp.cubinCrc, 1u << 26, "hot_loop", FAKE_PCS_MATH, 2));
	ASSERT_OK(fk.fake_pcs_push(6, 0x5555, 0x10, "torch_kernel", FAKE_PCS_MATH, 3));
	fk.fake_pcs_add_totals(4, 4); /* totalSamples counts the dropped ones too */
	kernel_record(5, "hot_loop");
	fk.fake_cupti_complete();
	/* before CUPTI's worker decoded them, a flush finds nothing */
	ASSERT_OK(fp_backend_cupti()->flush(fp_prof_session_sink(fp_prof_session_get(id))));
	ASSERT_OK(fp_cupti_pcsampling_get_stats(&ps));
	ASSERT_UEQ(ps.samples, 0);
	ASSERT_GE(ps.getdata_calls, 1);
	ASSERT_UEQ(ps.getdata_records, 0);
	ASSERT_EQ(ps.enable_status, 0);
	ASSERT_EQ(ps.config_status, 0);
	ASSERT_EQ(ps.disable_status, -1); /* not yet called */
	ASSERT(!ps.serialized);
	ASSERT_UEQ(ps.stall_reasons, 4);
	/* the flush finalize does, after the worker ran: records in, samples drained and filed */
	fk.fake_pcs_worker();
	ASSERT_OK(fp_backend_cupti()->flush(fp_prof_session_sink(fp_prof_session_get(id))));
	t = fp_prof_session_tree(fp_prof_session_get(id));
	ASSERT_OK(fp_calltree_finalize(t));
	outer = child_ending(t, FP_CALLTREE_ROOT, "outer");
	kern = child_ending(t, outer, "hot_loop");
	ASSERT_NE(kern, FP_CALLTREE_NONE);
	l27 = child_ending(t, kern, "tests/data/cubin/make_cubins.py:27");
	l28 = child_ending(t, kern, "tests/data/cubin/make_cubins.py:28");
	nol = child_ending(t, kern, "<no line info>");
	ASSERT_DEQ(value(t, l27, "num_samples"), 80);
	ASSERT_DEQ(value(t, l27, "num_stalled_samples"), 70);
	ASSERT_DEQ(value(t, l27, "stalled_long_scoreboard"), 70);
	ASSERT_DEQ(value(t, l28, "stalled_math_pipe_throttle"), 15);
	ASSERT_DEQ(value(t, nol, "num_samples"), 2);
	/* correlation 6 never had a kernel record here: kept, under its own node */
	ASSERT_DEQ(value(t,
			 child_ending(t,
				      child_ending(t,
						   child_ending(t, FP_CALLTREE_ROOT,
								"<pc samples without a launch>"),
						   "torch_kernel"),
				      "<unknown cubin>"),
			 "num_samples"),
		   3);
	ASSERT_OK(fp_cupti_pcsampling_get_stats(&ps));
	ASSERT(ps.active);
	ASSERT_UEQ(ps.samples, 100);
	ASSERT_UEQ(ps.on_lines, 95);
	ASSERT_UEQ(ps.no_line, 2);
	ASSERT_UEQ(ps.no_cubin, 3);
	ASSERT_UEQ(ps.no_launch, 3);
	ASSERT_UEQ(ps.dropped_samples, 0); /* CUPTI gives the totals with Disable only */
	ASSERT_UEQ(ps.cubins, 1);
	ASSERT_UEQ(ps.launches, 1);
	ASSERT_UEQ(ps.getdata_records, 1);

	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	ASSERT(!fp_cupti_pcsampling_active());
	ASSERT_OK(fp_cupti_pcsampling_get_stats(&ps));
	ASSERT(!ps.active);
	ASSERT_UEQ(ps.dropped_samples, 4);
	ASSERT_UEQ(ps.total_samples - ps.dropped_samples, ps.samples);
	ASSERT_EQ(ps.disable_status, 0);
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_DISABLES), 1);
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_ENABLED), 0);
	{
		char path[300];
		size_t mlen;
		char *meta;

		snprintf(path, sizeof(path), "%s/pcs.meta.json", out_dir);
		meta = fpt_slurp(path, &mlen);
		ASSERT(strstr(meta, "\"pcsampling_dropped_samples\": \"4\"") ||
		       strstr(meta, "\"pcsampling_dropped_samples\":\"4\""));
		free(meta);
	}
	fake_close();
	free(cubin);
}

/* A cubin handed over before the session (the module was loaded earlier). */
TEST(cupti_pcsampling_cubin_handed_over_before_start)
{
	struct fp_cupti_pcsampling_stats ps;
	struct fp__cupti_cubin_crc_params cp;
	struct fp_diag d;
	size_t len;
	uint8_t *cubin = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);
	int id;

	fake_open();
	ASSERT_OK(fp_cupti_pcsampling_add_cubin(cubin, len));
	ASSERT_OK(fp_cupti_pcsampling_add_cubin(cubin, len)); /* duplicate: ignored */
	ASSERT_EQ(fp_cupti_pcsampling_add_cubin(NULL, 0), FP_EINVAL);
	ASSERT_OK(fp_cupti_pcsampling_request(NULL, &d));
	id = start(&d);
	ASSERT_GE(id, 0);
	memset(&cp, 0, sizeof(cp));
	cp.size = sizeof(cp);
	cp.cubin = cubin;
	cp.cubinSize = len;
	ASSERT_OK(fk.crc(&cp));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 9);
	ASSERT_OK(fk.fake_pcs_push(9, cp.cubinCrc, first_pc_of_line(cubin, len, 28), "hot_loop",
				   FAKE_PCS_MATH, 11));
	kernel_record(9, "hot_loop");
	fk.fake_cupti_complete();
	fk.fake_pcs_worker();
	ASSERT_OK(fp_backend_cupti()->flush(fp_prof_session_sink(fp_prof_session_get(id))));
	ASSERT_OK(fp_cupti_pcsampling_get_stats(&ps));
	ASSERT_UEQ(ps.cubins, 1);
	ASSERT_UEQ(ps.on_lines, 11);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
	free(cubin);
}

TEST(cupti_pcsampling_refusals_say_why)
{
	struct fp_cupti_pcsampling_options o = {.sampling_period = 3};
	struct fp_diag d;
	int id, id2;

	fake_open();
	ASSERT_EQ(fp_cupti_pcsampling_request(&o, &d), FP_EINVAL);
	/* no counter access */
	fk.fake_pcs_set_enable_rc(FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
	ASSERT_OK(fp_cupti_pcsampling_request(NULL, &d));
	ASSERT_EQ(start(&d), FP_ENOTSUP);
	ASSERT(strstr(d.msg, "NVreg_RestrictProfilingToAdminUsers=0") != NULL);
	ASSERT(!fp_cupti_pcsampling_active());
	/* the request was consumed and the backend still works */
	fk.fake_pcs_set_enable_rc(0);
	id = start(&d);
	ASSERT_GE(id, 0);
	ASSERT(!fp_cupti_pcsampling_active());
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	/* a second sampling session while one samples */
	o.sampling_period = 12;
	ASSERT_OK(fp_cupti_pcsampling_request(&o, &d));
	id = start(&d);
	ASSERT_GE(id, 0);
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_PERIOD), 12);
	ASSERT_OK(fp_cupti_pcsampling_request(NULL, &d));
	id2 = start(&d);
	ASSERT_EQ(id2, FP_EBUSY);
	ASSERT(strstr(d.msg, "another session samples") != NULL);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

#ifdef HAVE_METRICS
/* PC sampling and hardware metrics exclude each other, whichever comes first. */
TEST(cupti_pcsampling_and_metrics_exclude_each_other)
{
	struct fp_diag d;
	int id;

	fake_open();
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_read.sum", 0, &d));
	ASSERT_OK(fp_cupti_pcsampling_request(NULL, &d));
	ASSERT_EQ(start(&d), FP_EBUSY);
	ASSERT(strstr(d.msg, "cannot run in the same session") != NULL);
	ASSERT(!fp_cupti_metrics_active());
	ASSERT(!fp_cupti_pcsampling_active());
	ASSERT_EQ(fk.fake_pcs_state(FAKE_PCS_ENABLES), 0);

	ASSERT_OK(fp_cupti_pcsampling_request(NULL, &d));
	id = start(&d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_read.sum", 0, &d));
	ASSERT_EQ(start(&d), FP_EBUSY);
	ASSERT(strstr(d.msg, "while a PC-sampling session is open") != NULL);
	ASSERT(!fp_cupti_metrics_active());
	ASSERT(fp_cupti_pcsampling_active());
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}
#endif
