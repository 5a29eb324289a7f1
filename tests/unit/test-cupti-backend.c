/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "cupti" backend end to end, without a GPU: the backend loads libfakecupti.so
 * (tests/unit/fake-cupti) through FLAGPRISM_CUPTI_PATH, and the tests play the GPU through the
 * fake's control functions: launch callbacks with correlation ids, graph resource callbacks,
 * kernel records written into the activity buffers the backend hands out. Covered: attribution
 * to scopes, states and Python call paths; the runtime -> driver launch nest; exact counts with
 * 1, 4 and 8 launching threads; CUDA-graph capture, instantiation, replay and destruction;
 * dropped records, records without timestamps and correlation misses; buffer-pool exhaustion;
 * another subscriber; a missing symbol; no library; CUPTI 12.8's record size and clock; the
 * capture of raw activity buffers into files (fp_cupti_capture).
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/cupti.h>
#include <flagprism/prof.h>

#include "backend/cuda/cupti-internal.h"
#include "backend/cuda/cupti-kest-internal.h"
#include "backend/cuda/cupti-metrics-internal.h"
#include "fake-cupti/fake-bind.h"
#include "fake-cupti/fake-cupti.h"
#include "test.h"

#define DRV FP__CUPTI_CB_DOMAIN_DRIVER_API
#define RT FP__CUPTI_CB_DOMAIN_RUNTIME_API
#define LAUNCH FP__CUPTI_DRIVER_cuLaunchKernel
#define LAUNCH_EX FP__CUPTI_DRIVER_cuLaunchKernelEx
#define GRAPH_LAUNCH FP__CUPTI_DRIVER_cuGraphLaunch

static struct {
	void *h;
#define X(ret, name, params) ret(*name) params;
	FAKE_CUPTI_CONTROL(X)
#undef X
} fk;

static char out_dir[] = "/tmp/fp-cupti-test-XXXXXX";
static bool out_dir_made;

/* The directory for the sessions' files, made once (mkdtemp's name may end in 'X' itself). */
static void make_out_dir(void)
{
	if (!out_dir_made)
		ASSERT_NOT_NULL(mkdtemp(out_dir));
	out_dir_made = true;
}

/* Load a fake libcupti and point the backend (and its device table) at it. */
static void fake_open(const char *path)
{
	fk.h = fake_cupti_load(path);
	FAKE_CUPTI_CONTROL(FAKE_BIND_X)
	fk.fake_cupti_reset();
	ASSERT_OK(fp_cupti_register());
	make_out_dir();
}

static const char *out_path(const char *name);

static void fake_close(void)
{
	static const char *const suffixes[] = {".hatchet", ".chrome_trace.json", ".meta.json"};
	char path[300];
	size_t i;

	fp_prof_shutdown();
	fp__cupti_reset();
	fk.fake_cupti_reset();
	dlclose(fk.h);
	unsetenv(FP_CUPTI_PATH_ENV);
	unsetenv("FLAGPRISM_CUDA_DRIVER_PATH");
	if (out_dir_made) {
		for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
			snprintf(path, sizeof(path), "%s%s", out_path("cupti"), suffixes[i]);
			unlink(path);
			snprintf(path, sizeof(path), "%s%s", out_path("cupti-b"), suffixes[i]);
			unlink(path);
		}
		rmdir(out_dir);
		memcpy(out_dir + sizeof(out_dir) - 7, "XXXXXX", 6);
		out_dir_made = false;
	}
}

static const char *out_path(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", out_dir, name);
	return buf;
}

/* A session on the CUPTI backend named `name` (in out_dir). */
static int start_named(enum fp_prof_context ctx, const char *name, struct fp_diag *d)
{
	struct fp_prof_options o = {0};
	int id = -1, rc;

	make_out_dir();
	o.name = out_path(name);
	o.backend = FP_CUPTI_BACKEND;
	o.context = ctx;
	rc = fp_prof_start(&o, &id, d);
	return rc ? rc : id;
}

static int start(enum fp_prof_context ctx, struct fp_diag *d)
{
	return start_named(ctx, "cupti", d);
}

static uint64_t now_ns(void)
{
	return fp_prof_clock_ns();
}

/* One kernel record `name` for correlation id `corr`, `dur` ns long, starting now. */
static void record(uint32_t corr, const char *name, uint64_t dur, uint64_t graph_node)
{
	struct fake_kernel k;

	memset(&k, 0, sizeof(k));
	k.corr = corr;
	k.start = now_ns() + 1000;
	k.end = k.start + dur;
	k.device = 0;
	k.stream = 7;
	k.grid[0] = 4;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = 128;
	k.block[1] = k.block[2] = 1;
	k.name = name;
	k.graph_node = graph_node;
	ASSERT_OK(fk.fake_cupti_kernel(&k));
}

/* The node at "a/b/c" below ROOT, or FP_CALLTREE_NONE. */
static uint32_t find(struct fp_calltree *t, const char *path)
{
	uint32_t node = FP_CALLTREE_ROOT;
	const char *p = path;

	while (*p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p), nlen;
		uint32_t c;

		for (c = fp_calltree_node_first_child(t, node); c != FP_CALLTREE_NONE;
		     c = fp_calltree_node_next_sibling(t, c)) {
			const char *n = fp_calltree_node_name(t, c, &nlen);

			if (nlen == len && !memcmp(n, p, len))
				break;
		}
		if (c == FP_CALLTREE_NONE)
			return FP_CALLTREE_NONE;
		node = c;
		p = e ? e + 1 : p + len;
	}
	return node;
}

/* A node's own value of metric `m`, or -1. */
static double metric(struct fp_calltree *t, const char *path, const char *m)
{
	struct fp_calltree_value v;
	uint32_t node = find(t, path), id;

	if (node == FP_CALLTREE_NONE || fp_calltree_metric_find(t, m, strlen(m), &id) ||
	    fp_calltree_get(t, node, id, &v))
		return -1;
	return v.self;
}

static struct fp_calltree *tree(int id)
{
	return fp_prof_session_tree(fp_prof_session_get(id));
}

static struct fp_prof_stats sstats(int id)
{
	struct fp_prof_stats s;

	memset(&s, 0, sizeof(s));
	fp_prof_session_stats(fp_prof_session_get(id), &s);
	return s;
}

static struct fp_cupti_stats cstats(void)
{
	struct fp_cupti_stats s;

	ASSERT_OK(fp_cupti_get_stats(&s));
	return s;
}

/* ---- loading and errors ---------------------------------------------------------------------- */

TEST(cupti_backend_no_library)
{
	struct fp_diag d;
	struct fp_cupti_stats s;

	ASSERT_OK(fp_cupti_register());
	ASSERT_OK(fp_cupti_register()); /* idempotent */
	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, "/nonexistent/flagprism/libcupti.so", 1));
	ASSERT_EQ(start(FP_PROF_CONTEXT_SHADOW, &d), FP_ENOTSUP);
	ASSERT(strstr(d.msg, "CUPTI backend cannot run") != NULL);
	ASSERT(strstr(d.msg, "FLAGPRISM_CUPTI_PATH") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 0);
	s = cstats();
	ASSERT(!s.loaded);
	unsetenv(FP_CUPTI_PATH_ENV);
	fp__cupti_reset();
}

TEST(cupti_backend_no_driver)
{
	struct fp_diag d;

	fake_open(FP_FAKE_CUPTI_PATH);
	/* A libcupti but no CUDA driver (a machine without a GPU): say so, subscribe nothing. */
	ASSERT_OK(setenv("FLAGPRISM_CUDA_DRIVER_PATH", "/nonexistent/libcuda.so.1", 1));
	ASSERT_EQ(start(FP_PROF_CONTEXT_SHADOW, &d), FP_ENOTSUP);
	ASSERT(strstr(d.msg, "no usable CUDA driver") != NULL);
	ASSERT(strstr(d.msg, "/nonexistent/libcuda.so.1") != NULL);
	ASSERT(!fk.fake_cupti_subscribed());
	ASSERT_EQ(fp_prof_session_count(), 0);
	fake_close();
}

TEST(cupti_backend_missing_symbol)
{
	struct fp_diag d;

	fake_open(FP_FAKE_CUPTI_NOSYM_PATH);
	ASSERT_EQ(start(FP_PROF_CONTEXT_SHADOW, &d), FP_EVENDOR);
	ASSERT(strstr(d.msg, "cuptiActivityFlushAll") != NULL);
	ASSERT(strstr(d.msg, "fakecupti_nosym") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 0);
	ASSERT(!cstats().loaded);
	ASSERT(!fk.fake_cupti_subscribed());
	fake_close();
}

TEST(cupti_backend_busy)
{
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	fk.fake_cupti_set_busy("CUPTI for Proton");
	ASSERT_EQ(start(FP_PROF_CONTEXT_SHADOW, &d), FP_EBUSY);
	ASSERT(strstr(d.msg, "another CUPTI subscriber is active") != NULL);
	ASSERT(strstr(d.msg, "\"CUPTI for Proton\"") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 0);
	/* CUPTI does not always say who it is. */
	fk.fake_cupti_set_busy("");
	ASSERT_EQ(start(FP_PROF_CONTEXT_SHADOW, &d), FP_EBUSY);
	ASSERT(strstr(d.msg, "Proton") != NULL);
	ASSERT(strstr(d.msg, "separate process") != NULL);
	ASSERT(!cstats().subscribed);
	/* Once the other one is gone, starting works. */
	fk.fake_cupti_set_busy(NULL);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT(cstats().subscribed);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_busy_without_v2)
{
	struct fp_diag d;

	fake_open(FP_FAKE_CUPTI_OLD_PATH);
	fk.fake_cupti_set_busy("someone");
	ASSERT_EQ(start(FP_PROF_CONTEXT_SHADOW, &d), FP_EBUSY);
	/* cuptiSubscribe (12.x) cannot name the other subscriber. */
	ASSERT(strstr(d.msg, "someone") == NULL);
	ASSERT(strstr(d.msg, "Proton") != NULL);
	fake_close();
}

TEST(cupti_backend_enable_disable)
{
	struct fp_calltree_device_attr a;
	struct fp_cupti_stats s;
	struct fp_diag d;
	int id, i, found = 0;
	size_t n;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT(fk.fake_cupti_subscribed());
	ASSERT(fk.fake_cupti_callback_enabled(DRV, LAUNCH_EX));
	ASSERT(fk.fake_cupti_callback_enabled(DRV, FP__CUPTI_DRIVER_cuLaunchKernel));
	ASSERT(fk.fake_cupti_callback_enabled(DRV, GRAPH_LAUNCH));
	ASSERT(fk.fake_cupti_callback_enabled(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000));
	ASSERT(fk.fake_cupti_callback_enabled(FP__CUPTI_CB_DOMAIN_RESOURCE,
					      FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED));
	ASSERT(!fk.fake_cupti_callback_enabled(DRV, 1)); /* nothing else */
	ASSERT(fk.fake_cupti_kind_enabled(FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	ASSERT(!fk.fake_cupti_kind_enabled(FP__CUPTI_ACTIVITY_KIND_KERNEL));
	ASSERT(fk.fake_cupti_zeroed_attr());
	ASSERT(fk.fake_cupti_timestamp_callback());
	s = cstats();
	ASSERT(s.loaded && s.subscribed && s.enabled);
	ASSERT_EQ(s.api_version, 130001);
	ASSERT_EQ(s.sessions, 1);
	ASSERT_EQ(s.clock_offset_ns, 0);
	ASSERT(strstr(s.path, "libfakecupti.so") != NULL);

	/* Proton's device keys from the driver (the fake has two H100-like devices). */
	n = fp_calltree_device_count(tree(id));
	for (i = 0; (size_t)i < n; i++) {
		ASSERT_OK(fp_calltree_device_at(tree(id), (size_t)i, &a));
		ASSERT_STREQ(a.type, "CUDA");
		if (!strcmp(a.key, "arch")) {
			ASSERT_STREQ(a.str, "90");
			found++;
		} else if (!strcmp(a.key, "num_sms")) {
			ASSERT_DEQ(a.value, 132);
			found++;
		} else if (!strcmp(a.key, "clock_rate") && !strcmp(a.index, "1")) {
			ASSERT_DEQ(a.value, 1979999);
			found++;
		}
	}
	ASSERT_EQ(n, 10);
	ASSERT_EQ(found, 5);

	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	ASSERT_UEQ(fk.fake_cupti_syncs(), 1); /* finalize synchronized before flushing */
	ASSERT(!fk.fake_cupti_callback_enabled(DRV, LAUNCH_EX));
	ASSERT(!fk.fake_cupti_kind_enabled(FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	/* The subscription stays: CUPTI would not give the slot to anyone else anyway. */
	ASSERT(fk.fake_cupti_subscribed());
	s = cstats();
	ASSERT(!s.enabled);
	ASSERT_EQ(s.sessions, 0);
	/* A second session re-enables without subscribing again. */
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT(fk.fake_cupti_callback_enabled(DRV, LAUNCH_EX));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* FLAGPRISM_CUPTI_LAUNCH_CALLBACKS=0 (bench_profiler.py's "floor"): kernel records only. */
TEST(cupti_backend_floor_without_launch_callbacks)
{
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	ASSERT_OK(setenv("FLAGPRISM_CUPTI_LAUNCH_CALLBACKS", "0", 1));
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	unsetenv("FLAGPRISM_CUPTI_LAUNCH_CALLBACKS");
	ASSERT_GE(id, 0);
	ASSERT(!fk.fake_cupti_callback_enabled(DRV, LAUNCH_EX));
	ASSERT(fk.fake_cupti_kind_enabled(FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	ASSERT_OK(fp_prof_scope_enter(id, "outer", 5, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	ASSERT_OK(fp_prof_scope_exit(id, "outer", 5, &d));
	record(1, "add_kernel", 200, 0);
	fk.fake_cupti_complete();
	/* Timed, not attributed: at the root although launched inside "outer", and counted. */
	ASSERT_DEQ(metric(tree(id), "add_kernel", "time (ns)"), 200);
	ASSERT_EQ(cstats().kernels, 1);
	ASSERT_EQ(cstats().misses, 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	/* The next session has its launch callbacks again. */
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT(fk.fake_cupti_callback_enabled(DRV, LAUNCH_EX));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_configure)
{
	struct fp_cupti_config c = {0};
	const char *dirs[] = {"/nonexistent", NULL};
	struct fp_diag d;
	int id;

	c.buffers = 65;
	ASSERT_EQ(fp_cupti_configure(&c), FP_EINVAL);
	c.buffers = 2;
	c.corr_slots = 1000;
	ASSERT_EQ(fp_cupti_configure(&c), FP_EINVAL);
	c.corr_slots = 1024;
	c.buffer_size = 100;
	ASSERT_EQ(fp_cupti_configure(&c), FP_EINVAL);
	c.buffer_size = 4096;
	c.extra_dirs = dirs;
	c.n_extra = 2;
	ASSERT_OK(fp_cupti_configure(&c));
	ASSERT_EQ(fp_cupti_configure(NULL), FP_EINVAL);
	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_EQ(fp_cupti_configure(&c), FP_ESTATE);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* ---- attribution ----------------------------------------------------------------------------- */

TEST(cupti_backend_scopes_and_states)
{
	struct fp_calltree *t;
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_scope_enter(id, "outer", 5, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	ASSERT_OK(fp_prof_scope_enter(id, "inner", 5, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	ASSERT_OK(fp_prof_state_enter(id, "warmup", 6));
	fk.fake_cupti_launch(DRV, FP__CUPTI_DRIVER_cuLaunchKernel, 3);
	ASSERT_OK(fp_prof_state_exit(id));
	ASSERT_OK(fp_prof_scope_exit(id, "inner", 5, &d));
	ASSERT_OK(fp_prof_scope_exit(id, "outer", 5, &d));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 4);
	/* The records come after every scope closed, out of order, as CUPTI's do. */
	record(4, "add_kernel", 500, 0);
	record(2, "mul_kernel", 300, 0);
	record(1, "add_kernel", 200, 0);
	record(3, "add_kernel", 100, 0);
	fk.fake_cupti_complete();

	t = tree(id);
	ASSERT_DEQ(metric(t, "outer/add_kernel", "count"), 1);
	ASSERT_DEQ(metric(t, "outer/add_kernel", "time (ns)"), 200);
	ASSERT_DEQ(metric(t, "outer/inner/mul_kernel", "time (ns)"), 300);
	ASSERT_DEQ(metric(t, "outer/inner/warmup/add_kernel", "time (ns)"), 100);
	ASSERT_DEQ(metric(t, "add_kernel", "time (ns)"), 500);
	ASSERT_EQ(sstats(id).kernels, 4);
	ASSERT_EQ(sstats(id).unmatched, 0);
	ASSERT_EQ(cstats().kernels, 4);
	ASSERT_EQ(cstats().misses, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_python_context)
{
	struct fp_prof_frame fr[2] = {{"model.py", 8, "forward", 7, 12},
				      {"ops.py", 6, "add", 3, 5}};
	struct fp_sink_metadata md = {0};
	struct fp_calltree *t;
	struct fp_diag d;
	uint32_t cp;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_PYTHON, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_callpath_intern(fr, 2, &cp));
	md.flags = FP_SINK_MD_FLOPS16 | FP_SINK_MD_BYTES;
	md.flops16 = 2e9;
	md.bytes = 4096;
	ASSERT_OK(fp_prof_scope_enter(id, "step", 4, 0));
	fp_cupti_set_thread_launch(cp, &md);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	/* One-shot: the next launch (say, a PyTorch kernel) has no Python call path. */
	fk.fake_cupti_launch(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 2);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(1, "add_kernel", 1000, 0);
	record(2, "elementwise_kernel", 700, 0);
	fk.fake_cupti_complete();

	t = tree(id);
	ASSERT_DEQ(metric(t, "step/model.py:forward@12/ops.py:add@5/add_kernel", "time (ns)"),
		   1000);
	ASSERT_DEQ(metric(t, "step/model.py:forward@12/ops.py:add@5/add_kernel", "flops16"), 2e9);
	ASSERT_DEQ(metric(t, "step/model.py:forward@12/ops.py:add@5/add_kernel", "bytes"), 4096);
	ASSERT_DEQ(metric(t, "step/elementwise_kernel", "time (ns)"), 700);
	ASSERT_DEQ(metric(t, "step/elementwise_kernel", "bytes"), -1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_runtime_driver_nest)
{
	struct fp_calltree *t;
	struct fp_diag d;
	uint32_t cp;
	struct fp_prof_frame fr = {"a.py", 4, "f", 1, 3};
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_PYTHON, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_callpath_intern(&fr, 1, &cp));
	ASSERT_OK(fp_prof_scope_enter(id, "s", 1, 0));
	/* cudaLaunchKernel entering the driver: two correlation ids, one launch, one context. */
	fp_cupti_set_thread_callpath(cp);
	fk.fake_cupti_launch_enter(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 10);
	fk.fake_cupti_launch_enter(DRV, FP__CUPTI_DRIVER_cuLaunchKernel, 11);
	fk.fake_cupti_launch_exit(DRV, FP__CUPTI_DRIVER_cuLaunchKernel, 11);
	fk.fake_cupti_launch_exit(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 10);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(10, "k", 10, 0);
	record(11, "k", 20, 0);
	fk.fake_cupti_complete();
	t = tree(id);
	ASSERT_DEQ(metric(t, "s/a.py:f@3/k", "count"), 2);
	ASSERT_DEQ(metric(t, "s/a.py:f@3/k", "time (ns)"), 30);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_missed_api_exit)
{
	/* A session stops while this thread is inside a launch call: its API exit never arrives.
	 * The next session must not take later launches for nested ones (stale context). */
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	fk.fake_cupti_launch_enter(DRV, LAUNCH_EX, 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_scope_enter(id, "later", 5, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(2, "k", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(id), "later/k", "count"), 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* ---- threads --------------------------------------------------------------------------------- */

struct worker {
	int session, index, launches;
	bool kest; /* launch kernel functions the estimate table knows (cupti_backend_kest_*) */
};

/* One launching thread under its own scope: `launches` launches, each with its kernel record. */
static void *launcher(void *p)
{
	struct worker *w = p;
	char scope[16];
	int j;

	snprintf(scope, sizeof(scope), "t%d", w->index);
	if (fp_prof_scope_enter(w->session, scope, strlen(scope), 0))
		abort();
	for (j = 0; j < w->launches; j++) {
		uint32_t corr = (uint32_t)(w->index * w->launches + j + 1);
		struct fake_kernel k;

		memset(&k, 0, sizeof(k));
		if (w->kest) {
			fk.fake_cupti_launch_fn(DRV, j % 2 ? LAUNCH : LAUNCH_EX, corr,
						0x100000 + 16 * (uint64_t)w->index, 0);
			k.grid[0] = 2;
			k.grid[1] = k.grid[2] = 1;
			k.name = "k";
		} else {
			fk.fake_cupti_launch(DRV, LAUNCH_EX, corr);
			k.stream = (uint32_t)w->index;
			k.name = j % 2 ? "odd" : "even";
		}
		k.corr = corr;
		k.start = fp_prof_clock_ns();
		k.end = k.start + 10;
		if (fk.fake_cupti_kernel(&k))
			abort();
	}
	if (fp_prof_scope_exit(w->session, scope, strlen(scope), NULL))
		abort();
	return NULL;
}

static void run_threads(int nthreads)
{
	enum {
		LAUNCHES = 3000
	};
	struct fp_cupti_config c = {0};
	struct worker w[8];
	pthread_t th[8];
	struct fp_calltree *t;
	struct fp_diag d;
	char path[32];
	int id, i;

	/* Small buffers: many completions, on the launching threads, concurrently. */
	c.buffer_size = 16 << 10;
	c.buffers = 32;
	ASSERT_OK(fp_cupti_configure(&c));
	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct worker){id, i, LAUNCHES, false};
		ASSERT_OK(pthread_create(&th[i], NULL, launcher, &w[i]));
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	fk.fake_cupti_complete();
	t = tree(id);
	for (i = 0; i < nthreads; i++) {
		snprintf(path, sizeof(path), "t%d/even", i);
		ASSERT_DEQ(metric(t, path, "count"), LAUNCHES / 2);
		snprintf(path, sizeof(path), "t%d/odd", i);
		ASSERT_DEQ(metric(t, path, "count"), LAUNCHES / 2);
		ASSERT_DEQ(metric(t, path, "time (ns)"), LAUNCHES / 2 * 10);
	}
	ASSERT_EQ(sstats(id).kernels, nthreads * LAUNCHES);
	ASSERT_EQ(sstats(id).unmatched, 0);
	ASSERT_EQ(sstats(id).dropped_backend, 0);
	ASSERT_EQ(cstats().kernels, nthreads * LAUNCHES);
	ASSERT_EQ(cstats().misses, 0);
	ASSERT_EQ(cstats().corr_collisions, 0);
	ASSERT_EQ(cstats().buffers_denied, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_threads_1)
{
	run_threads(1);
}

TEST(cupti_backend_threads_4)
{
	run_threads(4);
}

TEST(cupti_backend_threads_8)
{
	run_threads(8);
}

/* ---- CUDA graphs ----------------------------------------------------------------------------- */

TEST(cupti_backend_graphs)
{
	struct fp_sink_metadata md = {0};
	struct fp_calltree *t;
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);

	/* Capture: the launch only adds node 100 to graph 1; its metadata stays with the node. */
	ASSERT_OK(fp_prof_scope_enter(id, "capture", 7, 0));
	md.flags = FP_SINK_MD_BYTES;
	md.bytes = 100;
	fp_cupti_set_thread_launch(FP_PROF_NO_CALLPATH, &md);
	fk.fake_cupti_launch_enter(DRV, LAUNCH_EX, 20);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1, 100, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	fk.fake_cupti_launch_exit(DRV, LAUNCH_EX, 20);
	/* A memcpy node is not tracked. */
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1, 101, 0, 1, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_EQ(cstats().graph_nodes, 1);

	/* Instantiation: exec 5's node 200 is a copy of 100; exec 6's node 300 too. */
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 1, 200, 100,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 5);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 1, 300, 100,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 6);
	ASSERT_EQ(cstats().graph_nodes, 3);

	/* Replays: under the replaying scope, then the capture scope. */
	ASSERT_OK(fp_prof_scope_enter(id, "replay", 6, 0));
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 30);
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 31);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	/* Replayed inside the capture scope: the shared scope is not repeated. */
	ASSERT_OK(fp_prof_scope_enter(id, "capture", 7, 0));
	fk.fake_cupti_launch(RT, FP__CUPTI_RUNTIME_cudaGraphLaunch_v10000, 32);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	/* A node captured before profiling started: only the replaying scope is known. */
	ASSERT_OK(fp_prof_scope_enter(id, "replay", 6, 0));
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 33);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));

	record(30, "gk", 10, 200);
	record(31, "gk", 10, 300);
	record(32, "gk", 10, 200);
	record(33, "old", 10, 999);
	fk.fake_cupti_complete();
	t = tree(id);
	ASSERT_DEQ(metric(t, "replay/capture/gk", "count"), 2);
	ASSERT_DEQ(metric(t, "replay/capture/gk", "bytes"), 200);
	ASSERT_DEQ(metric(t, "capture/gk", "count"), 1);
	ASSERT_DEQ(metric(t, "capture/gk", "bytes"), 100);
	ASSERT_DEQ(metric(t, "replay/old", "count"), 1);
	ASSERT_EQ(cstats().graph_unknown, 1);
	ASSERT_EQ(cstats().misses, 0);
	ASSERT_EQ(sstats(id).unmatched, 0);

	/* Destruction frees the entries: exec 5, then graph 1 (node 100), then exec 6's node. */
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING, 0, 0, 0, 0,
				  5);
	ASSERT_EQ(cstats().graph_nodes, 2);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, 1, 0, 0, 0, 0);
	ASSERT_EQ(cstats().graph_nodes, 1);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING, 1, 300, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	ASSERT_EQ(cstats().graph_nodes, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* A string property of a node, or NULL. */
static const char *prop(struct fp_calltree *t, const char *path, const char *m)
{
	struct fp_calltree_value v;
	uint32_t node = find(t, path), id;

	if (node == FP_CALLTREE_NONE || fp_calltree_metric_find(t, m, strlen(m), &id) ||
	    fp_calltree_get(t, node, id, &v) || !v.is_string)
		return NULL;
	return v.str;
}

static uint32_t name_of(const char *s)
{
	uint32_t id;

	ASSERT_OK(fp_prof_name_intern(s, strlen(s), &id));
	return id;
}

/*
 * Inductor's kernels: a launch wrapper sets the thread's call path (with the model lines as its
 * note) for launches nobody hands one to (the static CUDA launcher calls no Triton hook);
 * captured into a CUDA graph and replayed from elsewhere, a kernel lands under the replaying
 * path, then the capture path minus the frames they share, with the capture's note.
 */
TEST(cupti_backend_callpath_override_notes_graphs)
{
	static const char note[] = "source_lines\tm.py:20 forward: y = x * 2\naten_ops\taten.mul";
	uint32_t f_user, f_call, f_model, f_replay, cap[3], rep[2], cp, rp;
	struct fp_calltree *t;
	struct fp_diag d;
	int py, sh;

	fake_open(FP_FAKE_CUPTI_PATH);
	py = start(FP_PROF_CONTEXT_PYTHON, &d);
	ASSERT_GE(py, 0);
	sh = start_named(FP_PROF_CONTEXT_SHADOW, "cupti-shadow", &d);
	ASSERT_GE(sh, 0);
	f_user = name_of("u.py:main@3");
	f_call = name_of("gen.py:call@40");
	f_model = name_of("m.py:forward@20");
	f_replay = name_of("trees.py:run@9");
	cap[0] = f_user, cap[1] = f_call, cap[2] = f_model;
	rep[0] = f_user, rep[1] = f_replay;
	ASSERT_EQ(fp_prof_callpath_intern_noted(cap, 3, note, sizeof(note) - 1, &cp), FP_OK);
	ASSERT_OK(fp_prof_callpath_intern_ids(rep, 2, &rp));
	ASSERT_STREQ(fp_prof_callpath_note(cp, NULL), note);
	ASSERT_NULL(fp_prof_callpath_note(rp, NULL));

	/* No hand-over: the override is the call path, and one-shot hand-overs still win. */
	ASSERT_EQ(fp_prof_callpath_override_set(cp), FP_PROF_NO_CALLPATH);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	fp_cupti_set_thread_callpath(rp);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	/* Capture under the same override. */
	fk.fake_cupti_launch_enter(DRV, LAUNCH_EX, 3);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1, 100, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	fk.fake_cupti_launch_exit(DRV, LAUNCH_EX, 3);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 1, 200, 100,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 5);
	ASSERT_EQ(fp_prof_callpath_override_set(rp), cp);
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 4);
	ASSERT_EQ(fp_prof_callpath_override_set(FP_PROF_NO_CALLPATH), rp);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 5);
	record(1, "triton_poi_fused_mul_0", 10, 0);
	record(2, "triton_poi_fused_mul_0", 10, 0);
	record(4, "triton_poi_fused_mul_0", 10, 200);
	record(5, "plain", 10, 0);
	fk.fake_cupti_complete();

	t = tree(py);
	ASSERT_DEQ(metric(t, "u.py:main@3/gen.py:call@40/m.py:forward@20/triton_poi_fused_mul_0",
			  "count"),
		   1);
	ASSERT_STREQ(prop(t, "u.py:main@3/gen.py:call@40/m.py:forward@20/triton_poi_fused_mul_0",
			  "source_lines"),
		     "m.py:20 forward: y = x * 2");
	ASSERT_STREQ(prop(t, "u.py:main@3/gen.py:call@40/m.py:forward@20/triton_poi_fused_mul_0",
			  "aten_ops"),
		     "aten.mul");
	ASSERT_DEQ(metric(t, "u.py:main@3/trees.py:run@9/triton_poi_fused_mul_0", "count"), 1);
	ASSERT_NULL(prop(t, "u.py:main@3/trees.py:run@9/triton_poi_fused_mul_0", "aten_ops"));
	/* replay path, then the capture path after the shared u.py:main@3 */
	ASSERT_DEQ(metric(t,
			  "u.py:main@3/trees.py:run@9/gen.py:call@40/m.py:forward@20/"
			  "triton_poi_fused_mul_0",
			  "count"),
		   1);
	ASSERT_STREQ(prop(t,
			  "u.py:main@3/trees.py:run@9/gen.py:call@40/m.py:forward@20/"
			  "triton_poi_fused_mul_0",
			  "aten_ops"),
		     "aten.mul");
	ASSERT_DEQ(metric(t, "plain", "count"), 1);
	/* Shadow context: no frames, but the note, on the one merged node. */
	t = tree(sh);
	ASSERT_DEQ(metric(t, "triton_poi_fused_mul_0", "count"), 3);
	ASSERT_STREQ(prop(t, "triton_poi_fused_mul_0", "source_lines"),
		     "m.py:20 forward: y = x * 2");
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, &d));
	fake_close();
}

/* PyTorch's C++ kernels: filed under the demangled name, the mangled one kept on the node. */
TEST(cupti_backend_demangled_names)
{
	static const char mangled[] = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10Abs"
				      "FunctorIfEESt5arrayIPcLm2EEEEviT0_T1_";
	static const char full[] = "void at::native::vectorized_elementwise_kernel<4, "
				   "at::native::AbsFunctor<float>, std::array<char*, 2ul> >(int, "
				   "at::native::AbsFunctor<float>, std::array<char*, 2ul>)";
	struct fp_calltree *t;
	struct fp_diag d;
	char path[512];
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	fk.fake_cupti_launch(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 1);
	fk.fake_cupti_launch(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 2);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 3);
	record(1, mangled, 10, 0);
	record(2, mangled, 10, 0);
	record(3, "_Znot_really_mangled", 10, 0); /* refused by the demangler: kept as it is */
	fk.fake_cupti_complete();
	t = tree(id);
	snprintf(path, sizeof(path), "%s", full);
	ASSERT_DEQ(metric(t, path, "count"), 2);
	ASSERT_STREQ(prop(t, path, "mangled_name"), mangled);
	ASSERT_DEQ(metric(t, "_Znot_really_mangled", "count"), 1);
	ASSERT_NULL(prop(t, "_Znot_really_mangled", "mangled_name"));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* Notes of different graphs on one node keep every value; joins of unknown ids fail. */
TEST(prof_callpath_notes_merge)
{
	uint32_t f = name_of("a.py:f@1"), c1, c2, c3, j;
	struct fp_calltree *t;
	struct fp_diag d;
	int sh;

	fake_open(FP_FAKE_CUPTI_PATH);
	sh = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(sh, 0);
	ASSERT_OK(fp_prof_callpath_intern_noted(&f, 1, "aten_ops\taten.add", 17, &c1));
	ASSERT_OK(fp_prof_callpath_intern_noted(&f, 1, "aten_ops\taten.mul", 17, &c2));
	ASSERT_OK(fp_prof_callpath_intern_noted(&f, 1, "aten_ops\taten.add", 17, &c3));
	ASSERT_NE(c1, c2);
	ASSERT_EQ(c1, c3);
	ASSERT_EQ(fp_prof_callpath_join(c1, 999999, &j), FP_EINVAL);
	ASSERT_OK(fp_prof_callpath_join(FP_PROF_NO_CALLPATH, c2, &j));
	ASSERT_EQ(j, c2);
	ASSERT_EQ(fp_prof_callpath_intern_noted(&f, 1, NULL, 3, &j), FP_EINVAL);
	fp_cupti_set_thread_callpath(c1);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	fp_cupti_set_thread_callpath(c2);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	fp_cupti_set_thread_callpath(c1);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 3);
	record(1, "triton_poi_fused_0", 10, 0);
	record(2, "triton_poi_fused_0", 10, 0);
	record(3, "triton_poi_fused_0", 10, 0);
	fk.fake_cupti_complete();
	t = tree(sh);
	ASSERT_DEQ(metric(t, "triton_poi_fused_0", "count"), 3);
	ASSERT_STREQ(prop(t, "triton_poi_fused_0", "aten_ops"), "aten.add | aten.mul");
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, &d));
	fake_close();
}

TEST(cupti_backend_graph_node_outside_launch)
{
	/* cuGraphAddKernelNode: no launch in progress, the thread's context of the moment. */
	struct fp_calltree *t;
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_scope_enter(id, "build", 5, 0));
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 2, 400, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 2, 401, 400, 0, 9);
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 40);
	record(40, "gk", 10, 401);
	fk.fake_cupti_complete();
	t = tree(id);
	ASSERT_DEQ(metric(t, "build/gk", "count"), 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_graphs_between_sessions)
{
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1, 100, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 1, 200, 100,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 5);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	/* With no session open the graph callbacks stay on: destruction frees the entries... */
	ASSERT(fk.fake_cupti_callback_enabled(FP__CUPTI_CB_DOMAIN_RESOURCE,
					      FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING));
	ASSERT(!fk.fake_cupti_callback_enabled(DRV, LAUNCH_EX));
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING, 0, 0, 0, 0,
				  5);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, 1, 0, 0, 0, 0);
	ASSERT_EQ(cstats().graph_nodes, 0);
	/* ...and a graph captured now is known when a later session replays it. */
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 2, 300, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 2, 301, 300,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 6);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_scope_enter(id, "replay", 6, 0));
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 50);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(50, "gk", 10, 301);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(id), "replay/gk", "count"), 1);
	ASSERT_EQ(cstats().graph_unknown, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
	/* fp__cupti_reset() turned them off with everything else. */
}

/* ---- losses ---------------------------------------------------------------------------------- */

TEST(cupti_backend_dropped_accounting)
{
	struct fp_calltree *t;
	struct fp_prof_stats ss;
	struct fp_cupti_stats cs;
	struct fake_kernel k;
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_scope_enter(id, "s", 1, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(1, "k", 10, 0);
	/* No timestamps: CUPTI's device buffer was full. */
	memset(&k, 0, sizeof(k));
	k.corr = 2;
	k.name = "k";
	ASSERT_OK(fk.fake_cupti_kernel(&k));
	/* A kernel nobody launched while profiling: kept at ROOT, counted as unmatched. */
	record(77, "stranger", 10, 0);
	fk.fake_cupti_add_dropped(5);
	fk.fake_cupti_complete();

	t = tree(id);
	ASSERT_DEQ(metric(t, "s/k", "count"), 1);
	ASSERT_DEQ(metric(t, "stranger", "count"), 1);
	ss = sstats(id);
	ASSERT_EQ(ss.kernels, 2);
	ASSERT_EQ(ss.unmatched, 1);
	ASSERT_EQ(ss.dropped_backend, 5 + 1);
	cs = cstats();
	ASSERT_EQ(cs.kernels, 2);
	ASSERT_EQ(cs.misses, 1);
	ASSERT_EQ(cs.no_timing, 1);
	ASSERT_EQ(cs.cupti_dropped, 5);
	ASSERT_EQ(cs.buffers_completed, 1);
	ASSERT_EQ(cs.bad_buffers, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_pool_exhaustion)
{
	enum {
		PER_BUFFER = 5,
		RECORDS = 24
	};
	struct fp_cupti_config c = {0};
	struct fp_cupti_stats cs;
	struct fp_diag d;
	uint64_t lost;
	int id, i;

	/* Two buffers of four records, and a CUPTI that holds full buffers for a while. */
	c.buffer_size = PER_BUFFER * 216;
	c.buffers = 2;
	ASSERT_OK(fp_cupti_configure(&c));
	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	fk.fake_cupti_set_hold(1);
	for (i = 0; i < RECORDS; i++) {
		struct fake_kernel k;

		fk.fake_cupti_launch(DRV, LAUNCH_EX, (uint32_t)i + 1);
		memset(&k, 0, sizeof(k));
		k.corr = (uint32_t)i + 1;
		k.start = fp_prof_clock_ns();
		k.end = k.start + 1;
		k.name = "k";
		fk.fake_cupti_kernel(&k);
	}
	lost = fk.fake_cupti_records_lost();
	/* 8 records fit in the two buffers; the ninth finds the pool empty, and so on. */
	ASSERT_UEQ(lost, RECORDS - 2 * PER_BUFFER);
	fk.fake_cupti_set_hold(0);
	fk.fake_cupti_complete();
	cs = cstats();
	ASSERT_EQ(cs.kernels, 2 * PER_BUFFER);
	ASSERT_EQ(cs.cupti_dropped, lost);
	ASSERT_GE(cs.buffers_denied, 1);
	ASSERT_EQ(sstats(id).kernels, 2 * PER_BUFFER);
	ASSERT_EQ(sstats(id).dropped_backend, lost);
	/* Buffers came back: new records flow again. */
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 100);
	record(100, "k", 1, 0);
	fk.fake_cupti_complete();
	ASSERT_EQ(sstats(id).kernels, 2 * PER_BUFFER + 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_bad_record_stops_buffer)
{
	struct fp_diag d;
	uint8_t junk[64];
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	record(1, "k", 10, 0);
	memset(junk, 0xab, sizeof(junk));
	ASSERT_OK(fk.fake_cupti_raw(junk, sizeof(junk)));
	fk.fake_cupti_complete();
	ASSERT_EQ(cstats().kernels, 1);
	ASSERT_EQ(cstats().bad_buffers, 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* ---- versions, clocks, sessions -------------------------------------------------------------- */

TEST(cupti_backend_cuda12_records)
{
	struct fp_cupti_stats cs;
	struct fake_kernel k;
	struct fp_calltree *t;
	struct fp_diag d;
	uint64_t realtime, mono;
	struct timespec ts;
	int id;

	fake_open(FP_FAKE_CUPTI_OLD_PATH);
	ASSERT_EQ(fk.fake_cupti_record_size(), 208);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	cs = cstats();
	ASSERT_EQ(cs.api_version, 26);
	/* No timestamp callback in 12.x here: CUPTI's clock is CLOCK_REALTIME, offset measured. */
	clock_gettime(CLOCK_REALTIME, &ts);
	realtime = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	mono = fp_prof_clock_ns();
	ASSERT_NEAR((double)cs.clock_offset_ns, (double)(int64_t)(realtime - mono), 50e6);
	ASSERT_OK(fp_prof_scope_enter(id, "s", 1, 0));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	memset(&k, 0, sizeof(k));
	k.corr = 1;
	k.start = fk.fake_cupti_now();
	k.end = k.start + 12345;
	k.name = "k12";
	ASSERT_OK(fk.fake_cupti_kernel(&k));
	k.corr = 2;
	ASSERT_OK(fk.fake_cupti_kernel(&k));
	fk.fake_cupti_complete();
	t = tree(id);
	ASSERT_DEQ(metric(t, "s/k12", "count"), 2);
	ASSERT_DEQ(metric(t, "s/k12", "time (ns)"), 2 * 12345);
	ASSERT_EQ(sstats(id).clamped_timestamps, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_timestamp_callback_ignored)
{
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	fk.fake_cupti_set_ignore_timestamp_callback(1);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	/* Registered but not honoured (CUDA already initialized): the offset is measured. */
	ASSERT(cstats().clock_offset_ns > 1000000 || cstats().clock_offset_ns < -1000000);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_two_sessions)
{
	struct fp_prof_frame fr = {"m.py", 4, "g", 1, 9};
	struct fp_diag d;
	uint32_t cp;
	int a, b;

	fake_open(FP_FAKE_CUPTI_PATH);
	a = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(a, 0);
	/* the same name again is refused: the two sessions' files would overwrite each other */
	ASSERT_EQ(start(FP_PROF_CONTEXT_PYTHON, &d), FP_EBUSY);
	ASSERT(strstr(d.msg, "already writes") != NULL);
	b = start_named(FP_PROF_CONTEXT_PYTHON, "cupti-b", &d);
	ASSERT_GE(b, 0);
	ASSERT_EQ(cstats().sessions, 2);
	ASSERT_OK(fp_prof_callpath_intern(&fr, 1, &cp));
	/* A scope in session a only. */
	ASSERT_OK(fp_prof_scope_enter(a, "only_a", 6, 0));
	fp_cupti_set_thread_callpath(cp);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	ASSERT_OK(fp_prof_scope_exit(a, NULL, 0, &d));
	record(1, "k", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(a), "only_a/k", "count"), 1);
	ASSERT_DEQ(metric(tree(b), "m.py:g@9/k", "count"), 1);
	ASSERT_OK(fp_prof_finalize(a, NULL, &d));
	ASSERT(cstats().enabled);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	record(2, "k", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(b), "k", "count"), 1);
	ASSERT_OK(fp_prof_finalize(b, NULL, &d));
	ASSERT(!cstats().enabled);
	/* Records arriving with no session are counted, not delivered anywhere. */
	record(3, "late", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_EQ(cstats().orphaned, 1);
	fake_close();
}

/*
 * The sequence: one launch, deactivate, five launches, activate, one launch, and every
 * record delivered only at the end (as CUPTI does when its buffers fill or at finalize): the
 * session counts 2, the five are ignored, whatever the state when their records arrive. A
 * kernel launched while active and delivered after deactivate() still counts.
 */
TEST(cupti_backend_deactivate_is_exact)
{
	struct fp_diag d;
	uint32_t corr;
	int id, other;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	other = start_named(FP_PROF_CONTEXT_SHADOW, "cupti-other",
			    &d); /* stays active throughout */
	ASSERT_GE(other, 0);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	ASSERT_OK(fp_prof_deactivate(id));
	for (corr = 2; corr <= 6; corr++)
		fk.fake_cupti_launch(DRV, LAUNCH_EX, corr);
	ASSERT_OK(fp_prof_activate(id));
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 7);
	for (corr = 1; corr <= 7; corr++)
		record(corr, "k", 10, 0);
	fk.fake_cupti_complete(); /* delivered while both are active */
	ASSERT_DEQ(metric(tree(id), "k", "count"), 2);
	ASSERT_EQ(sstats(id).ignored_inactive, 5);
	ASSERT_DEQ(metric(tree(other), "k", "count"), 7);
	/* Launched active, delivered while deactivated: counted. */
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 8);
	ASSERT_OK(fp_prof_deactivate(id));
	record(8, "k", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(id), "k", "count"), 3);
	/* A record without a remembered launch falls back to the state now (counted a miss). */
	record(99, "k", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(id), "k", "count"), 3);
	ASSERT_EQ(sstats(id).ignored_inactive, 6);
	ASSERT_DEQ(metric(tree(other), "k", "count"), 9);
	/* A launch during finalize's flush (the session already claimed) is not the session's. */
	ASSERT_OK(fp_prof_activate(id));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	ASSERT_OK(fp_prof_finalize(other, NULL, &d));
	ASSERT_UEQ(fp_prof_active_mask(), 0);
	fake_close();
}

/* Launches under FlagPrism's internal mark are dropped and counted, on every thread's own. */
TEST(cupti_backend_internal_launches)
{
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_EQ(fp_prof_internal_mark(-1), FP_EINVAL);
	ASSERT_EQ(fp_prof_internal_mark(1), 1);
	ASSERT_EQ(fp_prof_internal_mark(1), 2);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	ASSERT_EQ(fp_prof_internal_mark(-1), 1);
	fk.fake_cupti_launch(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 2);
	ASSERT_EQ(fp_prof_internal_mark(-1), 0);
	ASSERT_EQ(fp_prof_internal_depth(), 0);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 3);
	record(1, "zero_record_buffer", 10, 0);
	record(2, "copy_back", 10, 0);
	record(3, "user_kernel", 10, 0);
	fk.fake_cupti_complete();
	ASSERT_DEQ(metric(tree(id), "user_kernel", "count"), 1);
	ASSERT_EQ(find(tree(id), "zero_record_buffer"), FP_CALLTREE_NONE);
	ASSERT_EQ(find(tree(id), "copy_back"), FP_CALLTREE_NONE);
	ASSERT_EQ(sstats(id).internal, 2);
	ASSERT_EQ(sstats(id).kernels, 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_finalize_flushes)
{
	struct fp_diag d;
	char path[300];
	FILE *f;
	char buf[4096];
	size_t n;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	record(1, "flushed_kernel", 10, 0);
	/* Not completed by hand: finalize's flush must deliver it before writing. */
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	ASSERT_EQ(cstats().kernels, 1);
	snprintf(path, sizeof(path), "%s.hatchet", out_path("cupti"));
	f = fopen(path, "r");
	ASSERT_NOT_NULL(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ASSERT(strstr(buf, "\"flushed_kernel\"") != NULL);
	ASSERT(strstr(buf, "\"num_sms\"") != NULL);
	fake_close();
}

/* One whole session under the failing allocator; everything torn down before returning. */
static int oom_scenario(void)
{
	struct fp_diag d;
	int id, rc;

	fk.fake_cupti_reset();
	id = start(FP_PROF_CONTEXT_PYTHON, &d);
	if (id < 0) {
		rc = id;
		goto out;
	}
	if (fp_prof_scope_enter(id, "s", 1, 0) == FP_OK) {
		fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
		fp_prof_scope_exit(id, NULL, 0, NULL);
	}
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	record(1, "k", 10, 0);
	record(2, "k", 10, 0);
	fk.fake_cupti_complete();
	rc = fp_prof_finalize(id, NULL, &d);
out:
	fp__cupti_reset();
	fp_prof_shutdown();
	return rc;
}

TEST(cupti_backend_oom)
{
	long i, total;
	int rc;

	fake_open(FP_FAKE_CUPTI_PATH);
	fpt_oom_install(-1);
	ASSERT_OK(oom_scenario());
	total = fpt_oom_count();
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
	for (i = 0; i < total; i++) {
		fpt_oom_install(i);
		rc = oom_scenario();
		if (fpt_oom_live() != 0)
			fpt_fail(__FILE__, __LINE__, "fail_at %ld: %ld blocks leaked", i,
				 fpt_oom_live());
		fpt_oom_uninstall();
		/* Losses after start are counted in the session, not returned. */
		ASSERT(rc == FP_OK || rc == FP_ENOMEM);
	}
	ASSERT_OK(fp_cupti_register());
	fake_close();
}

/* Estimates handed over per program are multiplied by the record's grid (4 x 1 x 1 here);
 * those handed over whole are not. */
TEST(cupti_backend_est_per_program)
{
	struct fp_sink_metadata md;
	struct fp_calltree *t;
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	memset(&md, 0, sizeof(md));
	md.flags = FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS;
	md.est_bytes = 100;
	md.est_flops = 3;
	ASSERT_OK(fp_prof_scope_enter(id, "pp", 2, 0));
	fp_cupti_set_thread_launch_ex(FP_PROF_NO_CALLPATH, &md, FP_CUPTI_LAUNCH_EST_PER_PROGRAM);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 1);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_OK(fp_prof_scope_enter(id, "whole", 5, 0));
	fp_cupti_set_thread_launch_ex(FP_PROF_NO_CALLPATH, &md, 0);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 2);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(1, "add_kernel", 1000, 0);
	record(2, "add_kernel", 1000, 0);
	fk.fake_cupti_complete();

	t = tree(id);
	ASSERT_DEQ(metric(t, "pp/add_kernel", "est_bytes"), 400);
	ASSERT_DEQ(metric(t, "pp/add_kernel", "est_flops"), 12);
	ASSERT_DEQ(metric(t, "whole/add_kernel", "est_bytes"), 100);
	ASSERT_DEQ(metric(t, "whole/add_kernel", "est_flops"), 3);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* ---- per-kernel estimates looked up in the launch callback (cupti-kest.c) -------------------- */

/* The table alone: set, replace, no estimate, overflow, epochs. */
TEST(cupti_kest_table)
{
	const double a[2] = {100, 3}, b[2] = {7, 1};
	struct fp_cupti_kest_stats s;
	struct fp_sink_metadata md;
	uint64_t seen[4];
	uint32_t ref, e1, e2;
	uint64_t fn;

	fp__cupti_kest_reset();
	ASSERT_EQ(fp_cupti_kernel_estimate_set(0, a), FP_EINVAL);
	ASSERT_EQ(fp__cupti_kest_find(0x1000), 0);
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x1000, a));
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x2000, NULL));
	ref = fp__cupti_kest_find(0x1000);
	ASSERT_GT(ref, 0);
	ASSERT(fp__cupti_kest_get(ref, &md));
	ASSERT_DEQ(md.est_bytes, 100);
	ASSERT_DEQ(md.est_flops, 3);
	ASSERT_UEQ(md.flags, FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS);
	ASSERT_UEQ(md.reserved, FP__CUPTI_MD_PER_PROGRAM);
	ASSERT(fp__cupti_kest_get(FP__CUPTI_MD_KEST | ref, &md)); /* as the slot keeps it */
	ASSERT(!fp__cupti_kest_get(fp__cupti_kest_find(0x2000), &md));
	ASSERT_UEQ(md.flags, 0);
	ASSERT(!fp__cupti_kest_get(0, &md));
	ASSERT(!fp__cupti_kest_get(FP_CUPTI_KEST_SLOTS + 1, &md));
	/* A second load of the same handle replaces the values, in the same entry. */
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x1000, b));
	ASSERT_EQ(fp__cupti_kest_find(0x1000), ref);
	ASSERT(fp__cupti_kest_get(ref, &md));
	ASSERT_DEQ(md.est_bytes, 7);

	/* Epochs: lookups mark their entry; seen(e) lists what was looked up since e began. */
	e1 = fp_cupti_kernel_estimates_epoch();
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(e1, seen, 4), 0);
	fp__cupti_kest_find(0x1000);
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(e1, seen, 4), 1);
	ASSERT_UEQ(seen[0], 0x1000);
	e2 = fp_cupti_kernel_estimates_epoch();
	ASSERT_GT(e2, e1);
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(e2, seen, 4), 0);
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(e1, seen, 4), 1); /* still since e1 */
	fp__cupti_kest_find(0x2000);
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(e2, NULL, 0), 1);
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(e1, seen, 1), 2); /* more than cap */

	/* Overflow: half the slots, then refused and counted; known kernels stay found. */
	for (fn = 0; fn < FP_CUPTI_KEST_SLOTS; fn++) {
		int rc = fp_cupti_kernel_estimate_set(0x10000 + 8 * fn, a);

		ASSERT(rc == FP_OK || rc == FP_ELIMIT);
	}
	ASSERT_OK(fp_cupti_kernel_estimates_stats(&s));
	ASSERT_EQ(s.known, FP_CUPTI_KEST_SLOTS / 2);
	ASSERT_EQ(s.capacity, FP_CUPTI_KEST_SLOTS / 2);
	/* 2 known before, so FP_CUPTI_KEST_SLOTS / 2 - 2 of the new ones fit */
	ASSERT_EQ(s.full, FP_CUPTI_KEST_SLOTS - (FP_CUPTI_KEST_SLOTS / 2 - 2));
	ASSERT_EQ(fp_cupti_kernel_estimate_set(0x99999, a), FP_ELIMIT);
	ASSERT_OK(fp_cupti_kernel_estimates_stats(&s));
	ASSERT_EQ(s.full, FP_CUPTI_KEST_SLOTS - (FP_CUPTI_KEST_SLOTS / 2 - 2) + 1);
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x1000, a)); /* a known one may still change */
	ASSERT_GT(fp__cupti_kest_find(0x1000), 0);
	ASSERT_GT(fp__cupti_kest_find(0x10000), 0);
	ASSERT_EQ(fp__cupti_kest_find(0x99999), 0);
	ASSERT_EQ(fp_cupti_kernel_estimates_stats(NULL), FP_EINVAL);
	fp__cupti_kest_reset();
	ASSERT_OK(fp_cupti_kernel_estimates_stats(&s));
	ASSERT_EQ(s.known, 0);
	ASSERT(!s.enabled);
}

/*
 * The launch callback's lookup: hits through cuLaunchKernelEx's and cuLaunchKernel's parameter
 * blocks (per program, times the record's grid of 4), a known kernel without an estimate, a miss
 * (counted, nothing attached), lookups off, a hand-over that wins over the table, a runtime
 * launch (no lookup), and the kernels seen since the session's epoch.
 */
TEST(cupti_backend_kest_launch)
{
	const double a[2] = {100, 3};
	struct fp_sink_metadata md;
	struct fp_cupti_kest_stats ks;
	struct fp_calltree *t;
	struct fp_diag d;
	uint64_t seen[4];
	uint32_t epoch;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x1000, a));
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x2000, NULL));
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	epoch = fp_cupti_kernel_estimates_epoch();

	ASSERT_OK(fp_prof_scope_enter(id, "off", 3, 0)); /* lookups not enabled yet */
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 1, 0x1000, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	fp_cupti_kernel_estimates_enable(true);
	ASSERT_OK(fp_prof_scope_enter(id, "hit", 3, 0));
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 2, 0x1000, 0);
	fk.fake_cupti_launch_fn(DRV, LAUNCH, 3, 0x1000, 0);
	fk.fake_cupti_launch_fn(DRV, FP__CUPTI_DRIVER_cuLaunchKernelEx_ptsz, 4, 0x1000, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_OK(fp_prof_scope_enter(id, "noest", 5, 0));
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 5, 0x2000, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_OK(fp_prof_scope_enter(id, "miss", 4, 0));
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 6, 0x3000, 0);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, 7); /* no parameter block: not looked up */
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_OK(fp_prof_scope_enter(id, "handed", 6, 0));
	memset(&md, 0, sizeof(md));
	md.flags = FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS;
	md.est_bytes = 1;
	md.est_flops = 1;
	fp_cupti_set_thread_launch_ex(FP_PROF_NO_CALLPATH, &md, FP_CUPTI_LAUNCH_EST_PER_PROGRAM);
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 8, 0x1000, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_OK(fp_prof_scope_enter(id, "torch", 5, 0));
	fk.fake_cupti_launch_fn(RT, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, 9, 0x3000, 0);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	ASSERT_EQ(fp_cupti_kernel_estimates_seen(epoch, seen, 4), 2);

	record(1, "k", 10, 0);
	record(2, "k", 10, 0);
	record(3, "k", 10, 0);
	record(4, "k", 10, 0);
	record(5, "n", 10, 0);
	record(6, "m", 10, 0);
	record(7, "m", 10, 0);
	record(8, "k", 10, 0);
	record(9, "t", 10, 0);
	fk.fake_cupti_complete();
	t = tree(id);
	ASSERT_DEQ(metric(t, "off/k", "count"), 1);
	ASSERT_DEQ(metric(t, "off/k", "est_bytes"), -1);
	ASSERT_DEQ(metric(t, "hit/k", "count"), 3);
	ASSERT_DEQ(metric(t, "hit/k", "est_bytes"), 3 * 4 * 100);
	ASSERT_DEQ(metric(t, "hit/k", "est_flops"), 3 * 4 * 3);
	ASSERT_DEQ(metric(t, "noest/n", "count"), 1);
	ASSERT_DEQ(metric(t, "noest/n", "est_bytes"), -1);
	ASSERT_DEQ(metric(t, "miss/m", "count"), 2);
	ASSERT_DEQ(metric(t, "miss/m", "est_bytes"), -1);
	ASSERT_DEQ(metric(t, "handed/k", "est_bytes"), 4);
	ASSERT_DEQ(metric(t, "torch/t", "est_bytes"), -1);
	ASSERT_OK(fp_cupti_kernel_estimates_stats(&ks));
	ASSERT(ks.enabled);
	ASSERT_EQ(ks.known, 2);
	ASSERT_EQ(ks.misses, 1);
	ASSERT_EQ(cstats().misses, 0);
	ASSERT_EQ(cstats().md_lost, 0);
	ASSERT_EQ(sstats(id).unmatched, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* A graph captured from a launch that got its estimate from the table: each replay carries it,
 * multiplied by the replayed record's grid. */
TEST(cupti_backend_kest_graph)
{
	const double a[2] = {50, 2};
	struct fp_calltree *t;
	struct fp_diag d;
	int id;

	fake_open(FP_FAKE_CUPTI_PATH);
	ASSERT_OK(fp_cupti_kernel_estimate_set(0x4000, a));
	fp_cupti_kernel_estimates_enable(true);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	ASSERT_OK(fp_prof_scope_enter(id, "capture", 7, 0));
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 20, 0x4000, 1);
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1, 100, 0,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 0);
	fk.fake_cupti_launch_fn(DRV, LAUNCH_EX, 20, 0x4000, 2);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	fk.fake_cupti_graph_event(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 1, 200, 100,
				  FP__CU_GRAPH_NODE_TYPE_KERNEL, 5);
	ASSERT_OK(fp_prof_scope_enter(id, "replay", 6, 0));
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 30);
	fk.fake_cupti_launch(DRV, GRAPH_LAUNCH, 31);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, &d));
	record(30, "gk", 10, 200);
	record(31, "gk", 10, 200);
	fk.fake_cupti_complete();
	t = tree(id);
	ASSERT_DEQ(metric(t, "replay/capture/gk", "count"), 2);
	ASSERT_DEQ(metric(t, "replay/capture/gk", "est_bytes"), 2 * 4 * 50);
	ASSERT_DEQ(metric(t, "replay/capture/gk", "est_flops"), 2 * 4 * 2);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* Readers on 8 threads while the main thread keeps adding kernels and replacing the estimates
 * of kernels nobody launches: every launch gets exactly its kernel's estimate. */
TEST(cupti_backend_kest_concurrent)
{
	enum {
		THREADS = 8,
		LAUNCHES = 3000
	};
	struct fp_cupti_config c = {0};
	struct worker w[THREADS];
	struct fp_cupti_kest_stats ks;
	pthread_t th[THREADS];
	struct fp_calltree *t;
	struct fp_diag d;
	char path[32];
	uint64_t n;
	int id, i;

	c.buffer_size = 16 << 10;
	c.buffers = 32;
	ASSERT_OK(fp_cupti_configure(&c));
	fake_open(FP_FAKE_CUPTI_PATH);
	for (i = 0; i < THREADS; i++) {
		double e[2] = {10.0 * (i + 1), (double)i};

		ASSERT_OK(fp_cupti_kernel_estimate_set(0x100000 + 16 * (uint64_t)i, e));
	}
	fp_cupti_kernel_estimates_enable(true);
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){id, i, LAUNCHES, true};
		ASSERT_OK(pthread_create(&th[i], NULL, launcher, &w[i]));
	}
	for (n = 0; n < 1000; n++) {
		double e[2] = {(double)n, (double)n};

		/* new kernels, and replacements of kernels nobody launches */
		ASSERT_OK(fp_cupti_kernel_estimate_set(0x900000 + 16 * (n % 500), e));
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	fk.fake_cupti_complete();
	t = tree(id);
	for (i = 0; i < THREADS; i++) {
		snprintf(path, sizeof(path), "t%d/k", i);
		ASSERT_DEQ(metric(t, path, "count"), LAUNCHES);
		ASSERT_DEQ(metric(t, path, "est_bytes"), LAUNCHES * 2 * 10.0 * (i + 1));
		ASSERT_DEQ(metric(t, path, "est_flops"), LAUNCHES * 2 * (double)i);
	}
	ASSERT_EQ(sstats(id).kernels, THREADS * LAUNCHES);
	ASSERT_EQ(cstats().misses, 0);
	ASSERT_OK(fp_cupti_kernel_estimates_stats(&ks));
	ASSERT_EQ(ks.misses, 0);
	ASSERT_EQ(ks.known, THREADS + 500);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

/* ---- capturing raw activity buffers ---------------------------------------------------------- */

struct cap_walk {
	uint32_t corr[8];
	size_t n;
};

static int cap_record(void *arg, const struct fp_cupti_kernel_record *k)
{
	struct cap_walk *w = arg;

	if (w->n < 8)
		w->corr[w->n] = k->correlation;
	w->n++;
	return FP_OK;
}

/* The capture file number `seq` of this process in `dir`, walked into *w; its size. */
static size_t cap_read(const char *dir, uint32_t api, uint64_t seq, struct cap_walk *w)
{
	static uint8_t buf[1 << 16];
	char path[512];
	size_t n, used = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cupti-%" PRIu32 "-%ld-%" PRIu64 ".rec", dir, api,
		 (long)getpid(), seq);
	f = fopen(path, "rb");
	ASSERT_NOT_NULL(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ASSERT_LT(n, sizeof(buf));
	memset(w, 0, sizeof(*w));
	ASSERT_OK(fp_cupti_read_records(buf, n, api, cap_record, w, &used, NULL));
	ASSERT_EQ(used, n);
	return n;
}

/* Files in `dir`, each removed when `remove` is set. */
static size_t cap_files(const char *dir, bool remove)
{
	char path[512];
	struct dirent *e;
	size_t n = 0;
	DIR *dp = opendir(dir);

	ASSERT_NOT_NULL(dp);
	while ((e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (remove)
			unlink(path);
	}
	closedir(dp);
	return n;
}

static struct fp_cupti_capture_stats capstats(void)
{
	struct fp_cupti_capture_stats s;

	ASSERT_OK(fp_cupti_capture_get_stats(&s));
	return s;
}

/* Two kernels launched and their records completed in one buffer. */
static void two_kernels(uint32_t corr)
{
	fk.fake_cupti_launch(DRV, LAUNCH_EX, corr);
	fk.fake_cupti_launch(DRV, LAUNCH_EX, corr + 1);
	record(corr, "cap_kernel", 100, 0);
	record(corr + 1, "cap_kernel", 200, 0);
	fk.fake_cupti_complete();
}

TEST(cupti_backend_capture)
{
	char dir[] = "/tmp/fp-cupti-cap-XXXXXX";
	struct fp_cupti_capture_stats cs;
	struct cap_walk w;
	struct fp_diag d;
	uint32_t api;
	size_t size;
	int id;

	ASSERT_NOT_NULL(mkdtemp(dir));
	fake_open(FP_FAKE_CUPTI_PATH);
	cs = capstats();
	ASSERT(!cs.active);
	ASSERT_EQ(cs.files, 0);
	ASSERT_OK(fp_cupti_capture(dir, 1 << 20, &d));
	id = start(FP_PROF_CONTEXT_SHADOW, &d);
	ASSERT_GE(id, 0);
	api = cstats().api_version;
	ASSERT_EQ(api, 130001);
	two_kernels(1);
	cs = capstats();
	ASSERT(cs.active);
	ASSERT_STREQ(cs.dir, dir);
	ASSERT_EQ(cs.files, 1);
	ASSERT_EQ(cs.failures, 0);
	ASSERT_EQ(cs.skipped, 0);
	/* named cupti-<api>-<pid>-<seq>.rec, holding the kernels as CUPTI wrote them */
	size = cap_read(dir, api, 0, &w);
	ASSERT_EQ(size, 2 * fk.fake_cupti_record_size());
	ASSERT_UEQ(cs.bytes, size);
	ASSERT_EQ(w.n, 2);
	ASSERT_EQ(w.corr[0], 1);
	ASSERT_EQ(w.corr[1], 2);
	ASSERT_EQ(cap_files(dir, false), 1);

	/* A cap of exactly one buffer: the next is written, the one after ends the capture. */
	ASSERT_OK(fp_cupti_capture(dir, size, &d));
	ASSERT_EQ(capstats().files, 0); /* counters start afresh */
	two_kernels(3);
	two_kernels(5);
	two_kernels(7);
	cs = capstats();
	ASSERT(!cs.active);
	ASSERT_EQ(cs.files, 1);
	ASSERT_UEQ(cs.bytes, size);
	ASSERT_EQ(cs.skipped, 2);
	ASSERT_UEQ(cs.skipped_bytes, 2 * size);
	ASSERT_EQ(cap_read(dir, api, 1, &w), size); /* numbering went on: the first file stays */
	ASSERT_EQ(w.corr[0], 3);
	ASSERT_EQ(cap_files(dir, false), 2);
	/* capturing never costs the profile a kernel */
	ASSERT_EQ(sstats(id).kernels, 8);

	/* Turned off: nothing more is written, the counters stay readable. */
	ASSERT_OK(fp_cupti_capture(dir, 1 << 20, &d));
	ASSERT_OK(fp_cupti_capture(NULL, 0, &d));
	two_kernels(9);
	cs = capstats();
	ASSERT(!cs.active);
	ASSERT_EQ(cs.files, 0);
	ASSERT_EQ(cs.skipped, 0);
	ASSERT_OK(fp_cupti_capture("", 0, NULL));
	ASSERT_EQ(cap_files(dir, false), 2);

	/* A directory that goes away while capturing: counted, the kernels still delivered. */
	ASSERT_EQ(cap_files(dir, true), 2);
	ASSERT_OK(fp_cupti_capture(dir, 1 << 20, &d));
	ASSERT_OK(rmdir(dir));
	two_kernels(11);
	cs = capstats();
	ASSERT(cs.active);
	ASSERT_EQ(cs.files, 0);
	ASSERT_EQ(cs.failures, 1);
	ASSERT(strstr(cs.error, "ENOENT") != NULL);
	ASSERT_EQ(sstats(id).kernels, 12);
	ASSERT_OK(fp_cupti_capture(NULL, 0, NULL));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fake_close();
}

TEST(cupti_backend_capture_refused)
{
	char dir[] = "/tmp/fp-cupti-cap-XXXXXX", path[256];
	struct fp_cupti_capture_stats cs;
	struct fp_diag d;
	FILE *f;

	ASSERT_NOT_NULL(mkdtemp(dir));
	ASSERT_OK(fp_cupti_capture(dir, 4096, &d));
	ASSERT_EQ(fp_cupti_capture(dir, 0, &d), FP_EINVAL);
	ASSERT_EQ(fp_cupti_capture_get_stats(NULL), FP_EINVAL);
	/* missing */
	snprintf(path, sizeof(path), "%s/missing", dir);
	ASSERT_EQ(fp_cupti_capture(path, 4096, &d), FP_EIO);
	ASSERT(strstr(d.msg, "ENOENT") != NULL);
	ASSERT(strstr(d.msg, path) != NULL);
	/* a file, not a directory */
	f = fopen(path, "w");
	ASSERT_NOT_NULL(f);
	fclose(f);
	ASSERT_EQ(fp_cupti_capture(path, 4096, &d), FP_EIO);
	ASSERT(strstr(d.msg, "ENOTDIR") != NULL);
	ASSERT_OK(unlink(path));
	/* a directory no file can be created in (root may write anywhere chmod forbids) */
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/ro", dir);
		ASSERT_OK(mkdir(path, 0500));
		ASSERT_EQ(fp_cupti_capture(path, 4096, &d), FP_EIO);
		ASSERT(strstr(d.msg, "EACCES") != NULL);
		ASSERT_OK(rmdir(path));
	}
	ASSERT_EQ(fp_cupti_capture("/proc/self", 4096, &d), FP_EIO);
	/* a refused capture leaves the one that was set */
	cs = capstats();
	ASSERT(cs.active);
	ASSERT_STREQ(cs.dir, dir);
	ASSERT_UEQ(cs.max_bytes, 4096);
	ASSERT_OK(fp_cupti_capture(NULL, 0, NULL));
	ASSERT_EQ(cap_files(dir, false), 0); /* the probe file was removed */
	ASSERT_OK(rmdir(dir));
	fp__cupti_reset();
	ASSERT_EQ(capstats().max_bytes, 0);
}
