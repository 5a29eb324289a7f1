/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for profiling sessions: scopes (and those too deep, dropped), states, call paths,
 * launches and correlation, several sessions at once, concurrent event intake, the three output
 * files read back, lost-data accounting, names resolved and locked at start, outputs rescued
 * from a full disk, the backend registry, and the OOM sweep over a whole session. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/prof.h>

#include "test.h"

static int start(const char *name, enum fp_prof_context ctx, enum fp_prof_data data,
		 const char *backend)
{
	struct fp_prof_options o = {0};
	struct fp_diag d;
	int id = -1;

	o.name = fpt_tmp_path(name);
	o.context = ctx;
	o.data = data;
	o.backend = backend;
	fp_diag_clear(&d);
	if (fp_prof_start(&o, &id, &d))
		fpt_fail(__FILE__, __LINE__, "start: %s", d.msg);
	return id;
}

static uint32_t name_id(const char *s)
{
	uint32_t id;

	ASSERT_OK(fp_prof_name_intern(s, strlen(s), &id));
	return id;
}

static struct fp_sink_launch launch(const char *kernel, uint32_t callpath)
{
	struct fp_sink_launch l;

	memset(&l, 0, sizeof(l));
	l.kernel = name_id(kernel);
	l.callpath = callpath;
	l.grid[0] = 4;
	l.grid[1] = 1;
	l.grid[2] = 1;
	return l;
}

/* Node ROOT/names... of a tree, or FP_CALLTREE_NONE. */
static uint32_t find(struct fp_calltree *t, const char *const *names, size_t n)
{
	uint32_t node = FP_CALLTREE_ROOT, f;
	size_t i;

	for (i = 0; i < n; i++) {
		if (fp_calltree_intern(t, names[i], strlen(names[i]), &f) ||
		    fp_calltree_child_find(t, node, f, &node))
			return FP_CALLTREE_NONE;
	}
	return node;
}

static double metric_of(struct fp_calltree *t, uint32_t node, const char *metric, int total)
{
	struct fp_calltree_value v;
	uint32_t m;

	ASSERT_NE(node, FP_CALLTREE_NONE);
	if (fp_calltree_metric_find(t, metric, strlen(metric), &m) ||
	    fp_calltree_get(t, node, m, &v))
		return -1;
	return total ? v.total : v.self;
}

static const struct fp_json_value *get_path(const struct fp_json_value *v, const char *a,
					    const char *b)
{
	v = fp_json_get(v, a);
	return b ? fp_json_get(v, b) : v;
}

static int64_t get_int(const struct fp_json_value *v, const char *a, const char *b)
{
	int64_t i = -1;

	ASSERT(fp_json_int64(get_path(v, a, b), &i));
	return i;
}

TEST(prof_session_scopes)
{
	int id = start("scopes", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "host");
	struct fp_sink_launch l = launch("add_kernel", FP_PROF_NO_CALLPATH);
	struct fp_prof_session *s = fp_prof_session_get(id);
	struct fp_calltree *t, *r = NULL;
	struct fp_json_doc *doc;
	const struct fp_json_value *meta;
	static const char *const k_ab[] = {"a", "b", "add_kernel"};
	static const char *const k_a[] = {"a", "add_kernel"};
	static const char *const k_st[] = {"a", "warmup", "add_kernel"};
	static const char *const k_root[] = {"add_kernel"};
	static const char *const ab[] = {"a", "b"};
	static const char *const a[] = {"a"};
	uint32_t depth;

	ASSERT_NOT_NULL(s);
	ASSERT_STREQ(fp_prof_session_name(s), fpt_tmp_path("scopes"));
	ASSERT(fp_prof_session_active(s));
	ASSERT_OK(fp_host_launch(id, &l, 100, 150)); /* ROOT/add_kernel */
	ASSERT_OK(fp_prof_scope_enter(id, "a", 1, 0));
	ASSERT_OK(fp_prof_scope_enter(id, "b", 1, FP_PROF_SCOPE_CPU_TIME));
	ASSERT_OK(fp_prof_scope_depth(id, &depth));
	ASSERT_EQ(depth, 2);
	ASSERT_OK(fp_host_launch(id, &l, 1000, 1100));
	ASSERT_OK(fp_host_launch(id, &l, 2000, 2300));
	ASSERT_OK(fp_prof_scope_metric(id, "flops (inner)", 13, 5));
	ASSERT_OK(fp_prof_scope_metric(id, "note (pty)", 10, 3));
	ASSERT_OK(fp_prof_scope_exit(id, "b", 1, NULL));
	ASSERT_OK(fp_host_launch(id, &l, 3000, 3010));
	ASSERT_OK(fp_prof_state_enter(id, "warmup", 6));
	ASSERT_OK(fp_host_launch(id, &l, 4000, 4001));
	ASSERT_OK(fp_prof_state_exit(id));
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, NULL)); /* closes "a" */
	ASSERT_OK(fp_prof_scope_metric(id, "root_metric", 11, 2));
	ASSERT_EQ(fp_host_launch(id, &l, 10, 5), FP_EINVAL);

	t = fp_prof_session_tree(s);
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(metric_of(t, find(t, k_ab, 3), "time (ns)", 0), 400);
	ASSERT_DEQ(metric_of(t, find(t, k_ab, 3), "count", 0), 2);
	ASSERT_STREQ(fpt_metric_str(t, find(t, k_ab, 3), "device_id"), "0");
	ASSERT_STREQ(fpt_metric_str(t, find(t, k_ab, 3), "device_type"), "CPU");
	ASSERT_DEQ(metric_of(t, find(t, k_a, 2), "time (ns)", 0), 10);
	ASSERT_DEQ(metric_of(t, find(t, k_st, 3), "count", 0), 1);
	ASSERT_DEQ(metric_of(t, find(t, k_root, 1), "time (ns)", 0), 50);
	ASSERT_DEQ(metric_of(t, find(t, a, 1), "time (ns)", 1), 411);
	ASSERT_DEQ(metric_of(t, FP_CALLTREE_ROOT, "time (ns)", 1), 461);
	ASSERT_DEQ(metric_of(t, FP_CALLTREE_ROOT, "count", 1), 5);
	ASSERT_DEQ(metric_of(t, find(t, ab, 2), "flops (inner)", 0), 5);
	ASSERT_DEQ(metric_of(t, find(t, ab, 2), "note (pty)", 0), 3);
	ASSERT_GE(metric_of(t, find(t, ab, 2), "cpu_time (ns)(exc)", 0), 0);
	ASSERT_DEQ(metric_of(t, FP_CALLTREE_ROOT, "root_metric", 0), 2);

	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	ASSERT_NULL(fp_prof_session_get(id));
	ASSERT_EQ(fp_prof_finalize(id, NULL, NULL), FP_ENOENT);

	/* The files: the hatchet reads back with the same totals; the meta says all is well. */
	ASSERT_OK(fp_calltree_read_hatchet(fpt_tmp_path("scopes.hatchet"), NULL, &r, NULL, NULL));
	ASSERT_DEQ(metric_of(r, FP_CALLTREE_ROOT, "time (ns)", 1), 461);
	ASSERT_STREQ(fpt_metric_str(r, find(r, k_ab, 3), "device_type"), "CPU");
	ASSERT_EQ(fp_calltree_device_count(r), 1);
	fp_calltree_free(r);
	ASSERT_EQ(access(fpt_tmp_path("scopes.chrome_trace.json"), F_OK), -1); /* tree data only */
	doc = fpt_json_file(fpt_tmp_path("scopes.meta.json"));
	meta = fp_json_root(doc);
	ASSERT_STREQ(fp_json_string(fp_json_get(meta, "format"), NULL), "flagprism-profile-meta");
	ASSERT_STREQ(fp_json_string(get_path(meta, "session", "context"), NULL), "shadow");
	ASSERT_STREQ(fp_json_string(get_path(meta, "session", "backend"), NULL), "host");
	ASSERT_EQ(get_int(meta, "counts", "kernels"), 5);
	ASSERT_EQ(get_int(meta, "counts", "scopes"), 2);
	ASSERT_EQ(get_int(meta, "lost", "unfinished_scopes"), 0);
	ASSERT_EQ(fp_json_type(fp_json_get(meta, "incomplete")), FP_JSON_FALSE);
	ASSERT_STREQ(fp_json_string(get_path(meta, "outputs", "hatchet"), NULL),
		     fpt_tmp_path("scopes.hatchet"));
	ASSERT_STREQ(fp_json_string(get_path(get_path(meta, "devices", "CPU"), "0", "arch"), NULL),
		     "interpreter");
	fp_json_doc_free(doc);
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

TEST(prof_session_mismatch)
{
	int id = start("mismatch", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "null");
	struct fp_prof_stats st;
	struct fp_diag d;
	uint32_t depth;

	ASSERT_OK(fp_prof_scope_enter(id, "outer", 5, 0));
	ASSERT_OK(fp_prof_scope_enter(id, "inner", 5, 0));
	fp_diag_clear(&d);
	ASSERT_EQ(fp_prof_scope_exit(id, "outer", 5, &d), FP_ESTATE);
	ASSERT_STREQ(d.msg, "scope exit 'outer' does not match the innermost open scope 'inner'");
	ASSERT_OK(fp_prof_scope_depth(id, &depth));
	ASSERT_EQ(depth, 2); /* untouched */
	ASSERT_OK(fp_prof_scope_exit(id, "inner", 5, NULL));
	ASSERT_OK(fp_prof_scope_exit(id, "outer", 5, NULL));
	/* An exit with nothing open is counted, not an error. */
	ASSERT_OK(fp_prof_scope_exit(id, "x", 1, NULL));
	ASSERT_OK(fp_prof_session_stats(fp_prof_session_get(id), &st));
	ASSERT_EQ(st.exits_without_enter, 1);
	ASSERT_EQ(st.scopes, 2);
	ASSERT_EQ(fp_prof_scope_enter(12345, "x", 1, 0), FP_ENOENT);
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

TEST(prof_session_multiple)
{
	int s1, s2, s3;
	struct fp_sink_launch l = launch("k", FP_PROF_NO_CALLPATH);
	struct fp_prof_stats st;
	struct fp_calltree *t;
	static const char *const k_ab[] = {"a", "b", "k"};
	static const char *const k_b[] = {"b", "k"};
	uint32_t depth;

	s1 = start("m1", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "host");
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "a", 1, 0));
	s2 = start("m2", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "null"); /* starts inside "a" */
	ASSERT_NE(s1, s2);
	ASSERT_EQ(fp_prof_session_count(), 2);
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "b", 1, 0));
	ASSERT_OK(fp_host_launch(FP_PROF_ALL, &l, 0, 10));
	ASSERT_OK(fp_prof_deactivate(s2));
	ASSERT(!fp_prof_session_active(fp_prof_session_get(s2)));
	ASSERT_OK(fp_host_launch(FP_PROF_ALL, &l, 0, 10)); /* s1 only */
	ASSERT_OK(fp_prof_activate(FP_PROF_ALL));
	ASSERT_OK(fp_host_launch(s2, &l, 0, 1)); /* s2 only */
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, "b", 1, NULL));
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, "a", 1, NULL)); /* s2 never saw "a" */
	ASSERT_OK(fp_prof_scope_depth(s1, &depth));
	ASSERT_EQ(depth, 0);

	t = fp_prof_session_tree(fp_prof_session_get(s1));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(metric_of(t, find(t, k_ab, 3), "count", 0), 2);
	ASSERT_DEQ(metric_of(t, find(t, k_ab, 3), "time (ns)", 0), 20);
	t = fp_prof_session_tree(fp_prof_session_get(s2));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(metric_of(t, find(t, k_b, 2), "count", 0), 2);
	ASSERT_DEQ(metric_of(t, find(t, k_b, 2), "time (ns)", 0), 11);
	ASSERT_OK(fp_prof_session_stats(fp_prof_session_get(s2), &st));
	ASSERT_EQ(st.ignored_inactive, 1);
	ASSERT_EQ(st.exits_without_enter, 1);

	/* Ids are not reused; finalize all. */
	ASSERT_OK(fp_prof_finalize(s2, NULL, NULL));
	s3 = start("m3", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "null");
	ASSERT_NE(s3, s2);
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, NULL));
	ASSERT_EQ(fp_prof_session_count(), 0);
	ASSERT_EQ(access(fpt_tmp_path("m1.hatchet"), F_OK), 0);
	ASSERT_EQ(access(fpt_tmp_path("m3.meta.json"), F_OK), 0);
	/* FP_PROF_ALL with no session is a no-op. */
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "z", 1, 0));
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

TEST(prof_session_python_context)
{
	struct fp_prof_frame fr[3] = {
		{"/w/main.py", 10, "<module>", 8, 3},
		{"/w/model.py", 11, "forward", 7, 42},
		{"/w/model.py", 11, "forward", 7, 43},
	};
	uint32_t cp1, cp2, cp3, ids[4];
	int py, sh;
	struct fp_calltree *t;
	struct fp_sink_launch l;
	/* python context: scopes first, so a scope's metrics sit above its kernels */
	static const char *const k_py[] = {"s", "/w/main.py:<module>@3", "/w/model.py:forward@42",
					   "mm"};
	static const char *const k_sh[] = {"s", "mm"};

	ASSERT_OK(fp_prof_callpath_intern(fr, 2, &cp1));
	ASSERT_OK(fp_prof_callpath_intern(fr, 2, &cp2));
	ASSERT_EQ(cp1, cp2);
	fr[1].line = 43;
	ASSERT_OK(fp_prof_callpath_intern(fr, 2, &cp3));
	ASSERT_NE(cp1, cp3);
	ASSERT_EQ(fp_prof_callpath_frames(cp1, ids, 4), 2);
	ASSERT_STREQ(fp_prof_name_str(ids[1], NULL), "/w/model.py:forward@42");
	ASSERT_OK(fp_prof_callpath_intern_ids(ids, 2, &cp2));
	ASSERT_EQ(cp1, cp2);
	ASSERT_EQ(fp_prof_callpath_frames(9999, ids, 4), 0);

	py = start("py", FP_PROF_CONTEXT_PYTHON, FP_PROF_DATA_TREE, "host");
	sh = start("sh", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "host");
	l = launch("mm", cp1);
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "s", 1, 0));
	ASSERT_OK(fp_prof_scope_metric(FP_PROF_ALL, "bytes", 5, 4096));
	ASSERT_OK(fp_host_launch(FP_PROF_ALL, &l, 0, 7));
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, "s", 1, NULL));
	t = fp_prof_session_tree(fp_prof_session_get(py));
	ASSERT_DEQ(metric_of(t, find(t, k_py, 4), "time (ns)", 0), 7);
	/* the scope's metric and its kernels' time on one node: no second, empty branch */
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(metric_of(t, find(t, k_py, 1), "bytes", 0), 4096);
	ASSERT_DEQ(metric_of(t, find(t, k_py, 1), "time (ns)", 1), 7);
	ASSERT_EQ(fp_calltree_node_child_count(t, FP_CALLTREE_ROOT), 1);
	t = fp_prof_session_tree(fp_prof_session_get(sh));
	ASSERT_DEQ(metric_of(t, find(t, k_sh, 2), "time (ns)", 0), 7);
	/* An unknown call path is refused, not filed somewhere plausible. */
	l.callpath = 4242;
	ASSERT_OK(fp_host_launch(py, &l, 0, 1));
	{
		struct fp_prof_stats st;

		ASSERT_OK(fp_prof_session_stats(fp_prof_session_get(py), &st));
		ASSERT_EQ(st.failed, 1);
		ASSERT_EQ(st.kernels, 1);
	}
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, NULL));
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

#define NTHREADS 8
#define PER_THREAD 5000

struct worker {
	int index;
	uint32_t kernel, callpath, cpu;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fp_sink_event ev;
	struct fp_sink_launch l = {0};
	int i;

	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.device_type = w->cpu;
	ev.kernel = w->kernel;
	ev.callpath = w->callpath;
	ev.device_id = (uint32_t)w->index % 2;
	ev.stream = (uint64_t)w->index;
	l.kernel = w->kernel;
	for (i = 0; i < PER_THREAD; i++) {
		ev.begin_ns = 1000 + (uint64_t)i;
		ev.end_ns = ev.begin_ns + 3;
		ev.md.flags = FP_SINK_MD_BYTES;
		ev.md.bytes = 2;
		if (fp_prof_kernel(FP_PROF_ALL, &ev))
			return (void *)1;
		/* Every thread also keeps a scope stack of its own going. */
		if (i % 100 == 0) {
			if (fp_prof_scope_enter(FP_PROF_ALL, "t", 1, 0) ||
			    fp_host_launch(FP_PROF_ALL, &l, 0, 1) ||
			    fp_prof_scope_exit(FP_PROF_ALL, "t", 1, NULL))
				return (void *)2;
		}
	}
	return NULL;
}

TEST(prof_session_concurrent)
{
	pthread_t th[NTHREADS];
	struct worker w[NTHREADS];
	struct fp_prof_stats st;
	struct fp_calltree *t;
	int a, b, i;
	char kname[16], fname[32];

	a = start("c1", FP_PROF_CONTEXT_PYTHON, FP_PROF_DATA_TRACE, "null");
	b = start("c2", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "null");
	for (i = 0; i < NTHREADS; i++) {
		uint32_t fid;

		snprintf(kname, sizeof(kname), "k%d", i % 4);
		snprintf(fname, sizeof(fname), "f.py:w@%d", i);
		w[i].index = i;
		w[i].kernel = name_id(kname);
		w[i].cpu = name_id("CPU");
		fid = name_id(fname);
		ASSERT_OK(fp_prof_callpath_intern_ids(&fid, 1, &w[i].callpath));
	}
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	for (i = 0; i < NTHREADS; i++) {
		void *ret;

		ASSERT_EQ(pthread_join(th[i], &ret), 0);
		ASSERT_NULL(ret);
	}
	ASSERT_OK(fp_prof_session_stats(fp_prof_session_get(a), &st));
	ASSERT_EQ(st.kernels, NTHREADS * (PER_THREAD + PER_THREAD / 100));
	ASSERT_EQ(st.trace_records, NTHREADS * (PER_THREAD + 2 * PER_THREAD / 100));
	ASSERT_EQ(st.failed, 0);
	ASSERT_EQ(st.open_scopes, 0);
	t = fp_prof_session_tree(fp_prof_session_get(a));
	ASSERT_OK(fp_calltree_finalize(t));
	/* Python context: ROOT / f.py:w@i / k(i%4), exactly PER_THREAD events each. */
	for (i = 0; i < NTHREADS; i++) {
		const char *p[2];

		snprintf(kname, sizeof(kname), "k%d", i % 4);
		snprintf(fname, sizeof(fname), "f.py:w@%d", i);
		p[0] = fname;
		p[1] = kname;
		ASSERT_DEQ(metric_of(t, find(t, p, 2), "count", 0), PER_THREAD);
		ASSERT_DEQ(metric_of(t, find(t, p, 2), "time (ns)", 0), 3.0 * PER_THREAD);
		ASSERT_DEQ(metric_of(t, find(t, p, 2), "bytes", 0), 2.0 * PER_THREAD);
	}
	ASSERT_DEQ(metric_of(t, FP_CALLTREE_ROOT, "count", 1),
		   NTHREADS * (PER_THREAD + PER_THREAD / 100));
	t = fp_prof_session_tree(fp_prof_session_get(b));
	ASSERT_OK(fp_calltree_finalize(t));
	/* Shadow context: ROOT / k0..k3 (2 threads each) and ROOT / t / k*. */
	for (i = 0; i < 4; i++) {
		const char *p[2];

		snprintf(kname, sizeof(kname), "k%d", i);
		p[0] = kname;
		ASSERT_DEQ(metric_of(t, find(t, p, 1), "count", 0), 2 * PER_THREAD);
		p[0] = "t";
		p[1] = kname;
		ASSERT_DEQ(metric_of(t, find(t, p, 2), "count", 0), 2 * PER_THREAD / 100);
	}
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, NULL));
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

struct corr_arg {
	uint64_t correlation;
	uint32_t kernel;
};

static void *deliver(void *argp)
{
	struct corr_arg *a = argp;
	struct fp_sink_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.kernel = a->kernel;
	ev.callpath = FP_PROF_NO_CALLPATH;
	ev.device_type = FP_PROF_NO_NAME;
	ev.device_id = 3;
	ev.correlation = a->correlation;
	ev.begin_ns = 10;
	ev.end_ns = 30;
	ev.md.flags = FP_SINK_MD_FLOPS16;
	ev.md.flops16 = 99; /* the event's own value wins over the launch's */
	return fp_prof_kernel(FP_PROF_ALL, &ev) ? (void *)1 : NULL;
}

TEST(prof_session_correlation)
{
	int id = start("corr", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "null");
	struct fp_sink_launch l = launch("gemm", FP_PROF_NO_CALLPATH);
	struct corr_arg a;
	struct fp_prof_stats st;
	struct fp_calltree *t;
	pthread_t th;
	void *ret;
	uint64_t c1 = fp_prof_correlation_next(), c2 = fp_prof_correlation_next();
	static const char *const k_s[] = {"s", "gemm"};
	static const char *const k_root[] = {"gemm"};

	ASSERT_GT(c2, c1);
	l.md.flags = FP_SINK_MD_FLOPS16 | FP_SINK_MD_BYTES | FP_SINK_MD_EST_FLOPS;
	l.md.flops16 = 1;
	l.md.bytes = 64;
	l.md.est_flops = 7;
	ASSERT_OK(fp_prof_scope_enter(id, "s", 1, 0));
	ASSERT_OK(fp_prof_launch_register(id, c1, &l));
	ASSERT_OK(fp_prof_launch_register(id, c2, &l)); /* its event never comes */
	ASSERT_OK(fp_prof_scope_exit(id, "s", 1, NULL));
	ASSERT_EQ(fp_prof_launch_register(id, 0, &l), FP_EINVAL);

	/* The event arrives later, on another thread, outside the scope. */
	a.correlation = c1;
	a.kernel = l.kernel;
	ASSERT_EQ(pthread_create(&th, NULL, deliver, &a), 0);
	ASSERT_EQ(pthread_join(th, &ret), 0);
	ASSERT_NULL(ret);
	/* An event whose launch was never registered goes to ROOT / kernel and is counted. */
	a.correlation = 777777;
	ASSERT_NULL(deliver(&a));

	t = fp_prof_session_tree(fp_prof_session_get(id));
	ASSERT_DEQ(metric_of(t, find(t, k_s, 2), "time (ns)", 0), 20);
	ASSERT_DEQ(metric_of(t, find(t, k_s, 2), "flops16", 0), 99);
	ASSERT_DEQ(metric_of(t, find(t, k_s, 2), "bytes", 0), 64);
	ASSERT_DEQ(metric_of(t, find(t, k_s, 2), "est_flops", 0), 7);
	ASSERT_STREQ(fpt_metric_str(t, find(t, k_s, 2), "device_id"), "3");
	ASSERT_DEQ(metric_of(t, find(t, k_root, 1), "count", 0), 1);
	ASSERT_OK(fp_prof_session_stats(fp_prof_session_get(id), &st));
	ASSERT_EQ(st.unmatched, 1);
	ASSERT_EQ(st.pending, 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	{
		struct fp_json_doc *doc = fpt_json_file(fpt_tmp_path("corr.meta.json"));
		const struct fp_json_value *m = fp_json_root(doc);

		ASSERT_EQ(get_int(m, "lost", "launches_without_event"), 1);
		ASSERT_EQ(get_int(m, "lost", "events_without_launch_context"), 1);
		fp_json_doc_free(doc);
	}
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

static void check_trace_file(const char *path, size_t want_x)
{
	struct fp_json_doc *doc = fpt_json_file(path);
	const struct fp_json_value *root = fp_json_root(doc), *evs;
	size_t i, nx = 0, nm = 0;
	uint64_t last_pid = 0, last_tid = 0;
	double last_ts = -1;

	ASSERT_STREQ(fp_json_string(fp_json_get(root, "displayTimeUnit"), NULL), "ns");
	evs = fp_json_get(root, "traceEvents");
	ASSERT_EQ(fp_json_type(evs), FP_JSON_ARRAY);
	for (i = 0; i < fp_json_len(evs); i++) {
		const struct fp_json_value *e = fp_json_at(evs, i);
		const char *ph = fp_json_string(fp_json_get(e, "ph"), NULL);
		int64_t pid, tid;
		double ts, dur;

		ASSERT_NOT_NULL(ph);
		ASSERT(fp_json_int64(fp_json_get(e, "pid"), &pid));
		if (!strcmp(ph, "M")) {
			ASSERT_EQ(nx, 0); /* metadata first */
			nm++;
			ASSERT_EQ(fp_json_type(fp_json_get(e, "args")), FP_JSON_OBJECT);
			continue;
		}
		ASSERT_STREQ(ph, "X");
		nx++;
		ASSERT(fp_json_int64(fp_json_get(e, "tid"), &tid));
		ASSERT(fp_json_number(fp_json_get(e, "ts"), &ts));
		ASSERT(fp_json_number(fp_json_get(e, "dur"), &dur));
		ASSERT(ts >= 0 && dur >= 0);
		ASSERT_EQ(fp_json_type(get_path(e, "args", "call_stack")), FP_JSON_ARRAY);
		/* Sorted by track then start. */
		if ((uint64_t)pid == last_pid && (uint64_t)tid == last_tid)
			ASSERT(ts >= last_ts);
		last_pid = (uint64_t)pid;
		last_tid = (uint64_t)tid;
		last_ts = ts;
	}
	ASSERT_EQ(nx, want_x);
	ASSERT_GT(nm, 0);
	fp_json_doc_free(doc);
}

TEST(prof_session_trace)
{
	int id = start("tr", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TRACE, "host");
	struct fp_sink_launch l = launch("k", FP_PROF_NO_CALLPATH);
	uint64_t t0 = fp_prof_clock_ns();
	struct fp_json_doc *doc;
	const struct fp_json_value *evs;
	size_t i;
	int found = 0;

	ASSERT_OK(fp_prof_scope_enter(id, "outer", 5, 0));
	ASSERT_OK(fp_prof_scope_enter(id, "inner", 5, 0));
	ASSERT_OK(fp_host_launch(id, &l, t0 + 1234567, t0 + 1238000));
	ASSERT_OK(fp_prof_scope_exit(id, "inner", 5, NULL));
	ASSERT_OK(fp_prof_scope_exit(id, "outer", 5, NULL));
	ASSERT_OK(fp_host_launch(id, &l, 5, 6)); /* before the origin: clamped to 0 */
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	check_trace_file(fpt_tmp_path("tr.chrome_trace.json"), 4);

	doc = fpt_json_file(fpt_tmp_path("tr.chrome_trace.json"));
	evs = fp_json_get(fp_json_root(doc), "traceEvents");
	for (i = 0; i < fp_json_len(evs); i++) {
		const struct fp_json_value *e = fp_json_at(evs, i), *cs;
		double dur;

		if (strcmp(fp_json_string(fp_json_get(e, "name"), NULL), "k") ||
		    strcmp(fp_json_string(fp_json_get(e, "ph"), NULL), "X"))
			continue;
		cs = get_path(e, "args", "call_stack");
		ASSERT(fp_json_number(fp_json_get(e, "dur"), &dur));
		if (fp_json_len(cs) == 2) {
			/* 3433 ns, printed exactly as 3.433 us */
			ASSERT_DEQ(dur, 3.433);
			ASSERT_STREQ(fp_json_string(fp_json_at(cs, 0), NULL), "outer");
			ASSERT_STREQ(fp_json_string(fp_json_at(cs, 1), NULL), "inner");
			ASSERT_STREQ(fp_json_string(get_path(e, "args", "device_type"), NULL),
				     "CPU");
			ASSERT_EQ(fp_json_len(get_path(e, "args", "grid")), 3);
			found++;
		} else {
			double ts;

			ASSERT(fp_json_number(fp_json_get(e, "ts"), &ts));
			ASSERT_DEQ(ts, 0);
			found++;
		}
	}
	ASSERT_EQ(found, 2);
	fp_json_doc_free(doc);
	doc = fpt_json_file(fpt_tmp_path("tr.meta.json"));
	ASSERT_EQ(get_int(fp_json_root(doc), "lost", "clamped_timestamps"), 1);
	ASSERT_STREQ(fp_json_string(get_path(fp_json_root(doc), "outputs", "chrome_trace"), NULL),
		     fpt_tmp_path("tr.chrome_trace.json"));
	fp_json_doc_free(doc);
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

TEST(prof_session_trace_overlap)
{
	int id = start("ov", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TRACE, "null");
	uint64_t t0 = fp_prof_clock_ns();
	struct fp_sink_event ev;
	struct fp_json_doc *doc;
	const struct fp_json_value *evs;
	size_t i;
	int lanes = 0;

	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.kernel = name_id("k");
	ev.callpath = FP_PROF_NO_CALLPATH;
	ev.device_type = name_id("CUDA");
	ev.stream = 5;
	/* [0, 100] and [50, 150] overlap partially; [60, 70] nests in the first. */
	ev.begin_ns = t0;
	ev.end_ns = t0 + 100;
	ASSERT_OK(fp_prof_kernel(id, &ev));
	ev.begin_ns = t0 + 50;
	ev.end_ns = t0 + 150;
	ASSERT_OK(fp_prof_kernel(id, &ev));
	ev.begin_ns = t0 + 60;
	ev.end_ns = t0 + 70;
	ASSERT_OK(fp_prof_kernel(id, &ev));
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	check_trace_file(fpt_tmp_path("ov.chrome_trace.json"), 3);
	doc = fpt_json_file(fpt_tmp_path("ov.chrome_trace.json"));
	evs = fp_json_get(fp_json_root(doc), "traceEvents");
	for (i = 0; i < fp_json_len(evs); i++) {
		const struct fp_json_value *e = fp_json_at(evs, i);
		const char *n = fp_json_string(get_path(e, "args", "name"), NULL);

		if (n && !strcmp(n, "stream 5 (overlap 1)"))
			lanes++;
		if (n && !strcmp(n, "CUDA 0"))
			lanes += 10;
	}
	ASSERT_EQ(lanes, 11);
	fp_json_doc_free(doc);
	doc = fpt_json_file(fpt_tmp_path("ov.meta.json"));
	ASSERT_EQ(get_int(fp_json_root(doc), "counts", "trace_slices_on_overlap_tracks"), 1);
	fp_json_doc_free(doc);
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

TEST(prof_session_incomplete)
{
	struct fp_prof_options o = {0};
	struct fp_sink_launch l = launch("k", FP_PROF_NO_CALLPATH);
	struct fp_json_doc *doc;
	const struct fp_json_value *m;
	struct fp_diag d;
	int id, id2;

	o.name = fpt_tmp_path("inc");
	o.data = FP_PROF_DATA_TRACE;
	o.max_trace_events = 2;
	o.backend = "null";
	ASSERT_OK(fp_prof_start(&o, &id, NULL));
	ASSERT_OK(fp_prof_scope_enter(id, "left open", 9, 0));
	ASSERT_OK(fp_host_launch(id, &l, 1, 2));
	ASSERT_OK(fp_host_launch(id, &l, 1, 2));
	ASSERT_OK(fp_host_launch(id, &l, 1, 2));
	ASSERT_OK(fp_prof_session_note_dropped(fp_prof_session_get(id), 5, "buffer full"));
	ASSERT_OK(fp_prof_session_note_dropped(fp_prof_session_get(id), 1, "buffer full"));
	fp_diag_clear(&d);
	ASSERT_EQ(fp_prof_finalize(id, "hatchet,bogus", &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "unknown output format 'bogus'") != NULL);
	doc = fpt_json_file(fpt_tmp_path("inc.meta.json"));
	m = fp_json_root(doc);
	ASSERT_EQ(fp_json_type(fp_json_get(m, "incomplete")), FP_JSON_TRUE);
	ASSERT_EQ(get_int(m, "lost", "unfinished_scopes"), 1);
	ASSERT_EQ(get_int(m, "lost", "dropped_trace_records"), 1);
	ASSERT_EQ(get_int(m, "lost", "dropped_by_backend"), 6);
	ASSERT_EQ(fp_json_len(get_path(m, "lost", "backend_drop_reasons")), 1);
	{
		const struct fp_json_value *stacks = get_path(m, "lost", "unfinished_scope_stacks");

		ASSERT_STREQ(
			fp_json_string(fp_json_at(fp_json_get(fp_json_at(stacks, 0), "scopes"), 0),
				       NULL),
			"left open");
	}
	ASSERT_EQ(fp_json_len(fp_json_get(m, "incomplete_reasons")), 2);
	fp_json_doc_free(doc);

	/* Sessions left open at shutdown are written as incomplete. */
	o.name = fpt_tmp_path("abandoned");
	ASSERT_OK(fp_prof_start(&o, &id2, NULL));
	ASSERT_OK(fp_prof_set_meta(id2, "triton", "3.6.0"));
	ASSERT_OK(fp_prof_set_meta(id2, "python", "3.11"));
	ASSERT_OK(fp_prof_set_meta(id2, "python", "3.12"));
	fp_prof_shutdown();
	doc = fpt_json_file(fpt_tmp_path("abandoned.meta.json"));
	m = fp_json_root(doc);
	ASSERT_EQ(fp_json_type(fp_json_get(m, "incomplete")), FP_JSON_TRUE);
	ASSERT_STREQ(fp_json_string(fp_json_at(fp_json_get(m, "incomplete_reasons"), 0), NULL),
		     "shutdown without finalize");
	ASSERT_STREQ(fp_json_string(get_path(m, "environment", "python"), NULL), "3.12");
	{
		const char *key;

		fp_json_member(fp_json_get(m, "environment"), 0, &key, NULL);
		ASSERT_STREQ(key, "python");
	}
	fp_json_doc_free(doc);
	fpt_tmp_cleanup();
}

/* Where a session's files would go is checked at start; two open sessions never share a name;
 * what the library cannot see (a signal) is marked incomplete through the API. */
TEST(prof_session_outputs_checked_at_start)
{
	struct fp_prof_options o = {0};
	struct fp_json_doc *doc;
	const struct fp_json_value *m, *reasons;
	char longname[400];
	struct fp_diag d;
	int id, id2;
	size_t i;

	o.backend = "null";
	o.name = "/nonexistent-fp-dir/p";
	ASSERT_EQ(fp_prof_start(&o, &id, &d), FP_EIO);
	ASSERT(strstr(d.msg, "/nonexistent-fp-dir/p: cannot use the directory") != NULL);
	ASSERT(strstr(d.msg, "ENOENT") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 0);
	snprintf(longname, sizeof(longname), "%s/", fpt_tmp_path(""));
	for (i = strlen(longname); i < 300; i++)
		longname[i] = 'n';
	longname[300] = '\0';
	o.name = longname;
	ASSERT_NE(fp_prof_start(&o, &id, &d), FP_OK);
	ASSERT(strstr(d.msg, "ENAMETOOLONG") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 0);

	o.name = fpt_tmp_path("same");
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	ASSERT_EQ(fp_prof_start(&o, &id2, &d), FP_EBUSY);
	ASSERT(strstr(d.msg, "already writes") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 1);
	ASSERT_EQ(fp_prof_mark_incomplete(id, ""), FP_EINVAL);
	ASSERT_EQ(fp_prof_mark_incomplete(id + 100, "x"), FP_ENOENT);
	ASSERT_OK(fp_prof_mark_incomplete(id, "the program was ended by SIGTERM"));
	ASSERT_OK(fp_prof_mark_incomplete(id, "the program was ended by SIGTERM"));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	doc = fpt_json_file(fpt_tmp_path("same.meta.json"));
	m = fp_json_root(doc);
	ASSERT_EQ(fp_json_type(fp_json_get(m, "incomplete")), FP_JSON_TRUE);
	reasons = fp_json_get(m, "incomplete_reasons");
	ASSERT_EQ(fp_json_len(reasons), 1);
	ASSERT_STREQ(fp_json_string(fp_json_at(reasons, 0), NULL),
		     "the program was ended by SIGTERM");
	ASSERT_NOT_NULL(get_path(m, "outputs", "hatchet"));
	fp_json_doc_free(doc);
	/* the name is free again once the first session is finalized */
	ASSERT_OK(fp_prof_start(&o, &id2, &d));
	ASSERT_OK(fp_prof_finalize(id2, NULL, &d));
	fpt_tmp_cleanup();
}

/* Scopes deeper than max_scope_depth are counted and dropped, never an error: their enters say
 * so (a positive count), their exits pair without a check, their metrics go nowhere, and the
 * metadata counts them. */
TEST(prof_session_scopes_too_deep_dropped)
{
	struct fp_prof_options o = {0};
	struct fp_json_doc *doc;
	uint32_t depth;
	struct fp_diag d;
	int id, i;

	o.backend = "null";
	o.max_scope_depth = 4;
	o.name = fpt_tmp_path("deep");
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(fp_prof_scope_enter(id, "s", 1, 0), i < 4 ? FP_OK : 1);
	ASSERT_OK(fp_prof_scope_depth(id, &depth));
	ASSERT_EQ(depth, 6);
	ASSERT_OK(fp_prof_scope_metric(id, "bytes", 5, 7)); /* the dropped scope's: dropped */
	for (i = 0; i < 6; i++)
		ASSERT_OK(fp_prof_scope_exit(id, "s", 1, &d));
	ASSERT_OK(fp_prof_scope_depth(id, &depth));
	ASSERT_EQ(depth, 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	doc = fpt_json_file(fpt_tmp_path("deep.meta.json"));
	ASSERT_EQ(get_int(fp_json_root(doc), "lost", "scopes_too_deep"), 2);
	ASSERT_EQ(fp_json_type(fp_json_get(fp_json_root(doc), "incomplete")), FP_JSON_FALSE);
	fp_json_doc_free(doc);
	fpt_tmp_cleanup();
}

/* The name's directory is resolved at start: a chdir later neither moves nor loses the outputs,
 * another path to the same place (a link to the directory) is the same name, and another
 * process cannot take a name this one writes (an advisory lock beside the outputs, removed at
 * finalize). */
TEST(prof_session_name_resolved_and_locked)
{
	struct fp_prof_options o = {0};
	char real[320], alias[320], cwd[4096], lock[340], dir[256];
	struct fp_diag d;
	struct stat st;
	int id, id2, status;
	pid_t pid;

	o.backend = "null";
	snprintf(dir, sizeof(dir), "%.200s", fpt_tmp_path(""));
	snprintf(real, sizeof(real), "%sreal", dir);
	snprintf(alias, sizeof(alias), "%salias", dir);
	ASSERT_OK(mkdir(real, 0700));
	ASSERT_OK(symlink("real", alias));
	ASSERT_NOT_NULL(getcwd(cwd, sizeof(cwd)));
	ASSERT_OK(chdir(dir));
	o.name = "real/q";
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	ASSERT_OK(chdir("/"));
	o.name = fpt_tmp_path("alias/q"); /* the same files through the link */
	ASSERT_EQ(fp_prof_start(&o, &id2, &d), FP_EBUSY);
	ASSERT(strstr(d.msg, "already writes") != NULL);
	snprintf(lock, sizeof(lock), "%s/.q.flagprism.lock", real);
	ASSERT_OK(stat(lock, &st));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* another process (a fork inherits the registry, so ask the lock itself): it is
		 * held, and names this process */
		int fd = open(lock, O_RDWR);
		char buf[32] = "";

		_exit(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK &&
				      read(fd, buf, sizeof(buf) - 1) > 0 &&
				      atol(buf) == (long)getppid() ?
			      0 :
			      1);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_OK(fp_prof_finalize(id, NULL, &d)); /* written where "real/q" was at start */
	snprintf(lock, sizeof(lock), "%s/q.hatchet", real);
	ASSERT_OK(stat(lock, &st));
	snprintf(lock, sizeof(lock), "%s/.q.flagprism.lock", real);
	ASSERT_NE(stat(lock, &st), 0);    /* the lock file is gone */
	o.name = fpt_tmp_path("alias/q"); /* and the name is free again */
	ASSERT_OK(fp_prof_start(&o, &id2, &d));
	ASSERT_OK(fp_prof_finalize(id2, NULL, &d));
	o.name = fpt_tmp_path("ends-with-slash/");
	ASSERT_EQ(fp_prof_start(&o, &id2, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "ends with '/'") != NULL);
	ASSERT_OK(chdir(cwd));
	fpt_tmp_cleanup();
}

/* A data file that cannot be written (here a link to /dev/full: "No space left on device") is
 * not lost: it goes to a rescue directory under $TMPDIR, and the metadata names the real reason
 * and where the file went; fp_prof_finalize_each() reports every file written. */
static void collect(void *arg, const char *writer, const char *path)
{
	char *buf = arg;

	snprintf(buf + strlen(buf), 1024 - strlen(buf), "%s=%s;", writer, path);
}

TEST(prof_session_full_disk_rescued)
{
	struct fp_prof_options o = {0};
	struct fp_json_doc *doc;
	const struct fp_json_value *m, *reasons;
	char got[1024] = "", link[256], tmpdir[256];
	const char *reason, *rescued;
	struct fp_diag d;
	int id;

	if (access("/dev/full", W_OK) != 0)
		return;
	snprintf(tmpdir, sizeof(tmpdir), "%.200s", fpt_tmp_path("tmp"));
	ASSERT_OK(mkdir(tmpdir, 0700));
	setenv("TMPDIR", tmpdir, 1);
	snprintf(link, sizeof(link), "%.200s", fpt_tmp_path("full.hatchet"));
	ASSERT_OK(symlink("/dev/full", link));
	o.backend = "null";
	o.name = fpt_tmp_path("full");
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	ASSERT_EQ(fp_prof_finalize_each(id, NULL, collect, got, &d), FP_EIO);
	ASSERT(strstr(d.msg, "ENOSPC") != NULL);
	ASSERT(strstr(d.msg, "flagprism-rescue-") != NULL);
	ASSERT(strstr(got, "hatchet=") != NULL && strstr(got, "flagprism-rescue-") != NULL);
	ASSERT(strstr(got, "meta=") != NULL);
	doc = fpt_json_file(fpt_tmp_path("full.meta.json"));
	m = fp_json_root(doc);
	ASSERT_EQ(fp_json_type(fp_json_get(m, "incomplete")), FP_JSON_TRUE);
	reasons = fp_json_get(m, "incomplete_reasons");
	ASSERT_EQ(fp_json_len(reasons), 1);
	reason = fp_json_string(fp_json_at(reasons, 0), NULL);
	ASSERT(strstr(reason, "No space left on device (ENOSPC)") != NULL);
	ASSERT(strstr(reason, "written to") != NULL);
	rescued = get_path(m, "outputs", "hatchet") ?
			  fp_json_string(get_path(m, "outputs", "hatchet"), NULL) :
			  NULL;
	ASSERT_NOT_NULL(rescued);
	ASSERT(strncmp(rescued, tmpdir, strlen(tmpdir)) == 0);
	fp_json_doc_free(doc);
	doc = fpt_json_file(rescued); /* the profile, whole */
	fp_json_doc_free(doc);
	unsetenv("TMPDIR");
	fpt_tmp_cleanup();
}

/* An output directory with a long path, replaced by a file while the program ran, and a long
 * $TMPDIR: the message (256 bytes) still names where the file was rescued to, whole, and why the
 * original could not be written (its errno name); the middle of the rest gives way. */
TEST(prof_session_rescued_path_survives_a_long_message)
{
	struct fp_prof_options o = {0};
	char dir[512], tmpdir[512], name[600], rescued[600], *end;
	struct fp_diag d;
	int id, fd;

	snprintf(dir, sizeof(dir), "%.200s",
		 fpt_tmp_path("a-directory-name-long-enough-to-matter"));
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir),
		 "/another-level-of-directories-as-pytest-makes-them-for-each-worker");
	ASSERT_OK(mkdir(fpt_tmp_path("a-directory-name-long-enough-to-matter"), 0700));
	ASSERT_OK(mkdir(dir, 0700));
	snprintf(tmpdir, sizeof(tmpdir), "%.200s",
		 fpt_tmp_path("a-temporary-directory-with-a-long-name"));
	ASSERT_OK(mkdir(tmpdir, 0700));
	setenv("TMPDIR", tmpdir, 1);
	snprintf(name, sizeof(name), "%s/p", dir);
	o.backend = "null";
	o.name = name;
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	snprintf(rescued, sizeof(rescued), "rm -rf '%s'", dir); /* and its lock file */
	ASSERT_EQ(system(rescued), 0);
	fd = open(dir, O_WRONLY | O_CREAT | O_EXCL, 0600); /* a file where the directory was */
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(fp_prof_finalize(id, NULL, &d), FP_EIO);
	ASSERT(strstr(d.msg, "(ENOTDIR)") != NULL);
	end = strstr(d.msg, "; written to ");
	ASSERT_NOT_NULL(end);
	snprintf(rescued, sizeof(rescued), "%s", end + strlen("; written to "));
	ASSERT(strstr(rescued, " instead") != NULL);
	*strstr(rescued, " instead") = '\0';
	ASSERT(strncmp(rescued, tmpdir, strlen(tmpdir)) == 0);
	ASSERT_OK(access(rescued, R_OK)); /* the path is whole: the file is there */
	unlink(dir);
	unsetenv("TMPDIR");
	fpt_tmp_cleanup();
}

/* A process killed while finalize writes (here by a file size limit, SIGXFSZ, in the middle of
 * the Chrome trace) leaves a metadata file that says so: it is written first, marked. */
TEST(prof_session_killed_while_writing_leaves_meta_marked)
{
	struct fp_sink_launch l = launch("a_kernel_with_a_long_enough_name", FP_PROF_NO_CALLPATH);
	struct fp_prof_options o = {0};
	struct fp_json_doc *doc;
	const struct fp_json_value *m, *reasons;
	int id, status, i;
	pid_t pid;

	o.name = fpt_tmp_path("killed");
	o.data = FP_PROF_DATA_TRACE;
	o.backend = "null";
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct rlimit lim;

		if (fp_prof_start(&o, &id, NULL))
			_exit(3);
		for (i = 0; i < 20000; i++)
			fp_host_launch(id, &l, (uint64_t)i * 10, (uint64_t)i * 10 + 5);
		getrlimit(RLIMIT_FSIZE, &lim);
		lim.rlim_cur = 256 << 10; /* the meta and Hatchet files fit, the trace does not */
		setrlimit(RLIMIT_FSIZE, &lim);
		fp_prof_finalize(id, NULL, NULL);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGXFSZ);
	doc = fpt_json_file(fpt_tmp_path("killed.meta.json"));
	m = fp_json_root(doc);
	ASSERT_EQ(fp_json_type(fp_json_get(m, "incomplete")), FP_JSON_TRUE);
	reasons = fp_json_get(m, "incomplete_reasons");
	ASSERT_EQ(fp_json_len(reasons), 1);
	ASSERT(strstr(fp_json_string(fp_json_at(reasons, 0), NULL), "finalize did not finish") !=
	       NULL);
	fp_json_doc_free(doc);
	fpt_tmp_cleanup();
}

static int failing_start(struct fp_sink_session *s, struct fp_diag *diag)
{
	(void)s;
	return fp_diag_set(diag, FP_EBUSY, 0, "another profiler owns the device hook");
}

static int ok_stop(struct fp_sink_session *s)
{
	(void)s;
	return FP_OK;
}

static const struct fp_backend_ops busy_ops = {"busy", "0", failing_start, ok_stop, ok_stop};

TEST(prof_backend_registry)
{
	struct fp_prof_options o = {0};
	struct fp_diag d;
	int id, i, ids[FP_PROF_MAX_SESSIONS];
	const struct fp_backend_ops *b;

	ASSERT_STREQ(fp_backend_find("host")->name, "host");
	ASSERT_STREQ(fp_backend_find("null")->name, "null");
	ASSERT_NULL(fp_backend_find("nope"));
	ASSERT_EQ(fp_backend_at(0), fp_backend_host());
	ASSERT_EQ(fp_backend_at(1), fp_backend_null());
	ASSERT_OK(fp_backend_register(&busy_ops));
	ASSERT_EQ(fp_backend_register(&busy_ops), FP_EBUSY);
	for (i = 0; (b = fp_backend_at((size_t)i)) != NULL; i++)
		;
	ASSERT_EQ(i, 3);

	o.name = fpt_tmp_path("reg");
	o.backend = "busy";
	ASSERT_EQ(fp_prof_start(&o, &id, &d), FP_EBUSY);
	ASSERT_STREQ(d.msg, "another profiler owns the device hook");
	ASSERT_EQ(fp_prof_session_count(), 0);
	o.backend = "cuptii";
	ASSERT_EQ(fp_prof_start(&o, &id, &d), FP_ENOENT);
	ASSERT(strstr(d.msg, "'cuptii'") != NULL);
	o.backend = NULL;
	o.context = (enum fp_prof_context)7;
	ASSERT_EQ(fp_prof_start(&o, &id, &d), FP_EINVAL);
	o.context = FP_PROF_CONTEXT_SHADOW;
	o.backend = "null";
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "reg-%d", i);
		o.name = fpt_tmp_path(name);
		ASSERT_OK(fp_prof_start(&o, &ids[i], NULL));
	}
	o.name = fpt_tmp_path("reg-one-more");
	ASSERT_EQ(fp_prof_start(&o, &id, &d), FP_ELIMIT);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		ASSERT_OK(fp_prof_deactivate(ids[i]));
	fp_prof_shutdown();
	ASSERT_EQ(fp_prof_session_count(), 0);
	ASSERT_NOT_NULL(fp_prof_writer_find("hatchet"));
	ASSERT_STREQ(fp_prof_writer_find("chrome_trace")->suffix, ".chrome_trace.json");
	ASSERT_STREQ(fp_prof_writer_at(2)->name, "meta");
	ASSERT_NULL(fp_prof_writer_at(3));
	fpt_tmp_cleanup();
}

/* One whole session; every allocation may fail. Returns the first non-OK status. */
static int session_run(void *unused)
{
	struct fp_prof_options o = {0};
	struct fp_prof_frame fr[2] = {{"a.py", 4, "f", 1, 1}, {"a.py", 4, "g", 1, 2}};
	struct fp_sink_launch l;
	uint32_t cp, k;
	int id, rc;

	(void)unused;
	o.name = fpt_tmp_path("oom");
	o.data = FP_PROF_DATA_TRACE;
	o.context = FP_PROF_CONTEXT_PYTHON;
	rc = fp_prof_start(&o, &id, NULL);
	if (rc)
		goto out;
	if ((rc = fp_prof_callpath_intern(fr, 2, &cp)) || (rc = fp_prof_name_intern("k", 1, &k)))
		goto out;
	memset(&l, 0, sizeof(l));
	l.kernel = k;
	l.callpath = cp;
	if ((rc = fp_prof_scope_enter(id, "s", 1, FP_PROF_SCOPE_CPU_TIME)) ||
	    (rc = fp_host_launch(id, &l, 1, 2)) || (rc = fp_prof_scope_metric(id, "x", 1, 1)) ||
	    (rc = fp_prof_scope_exit(id, "s", 1, NULL)) || (rc = fp_host_launch(id, &l, 3, 5)))
		goto out;
	rc = fp_prof_finalize(id, NULL, NULL);
out:
	fp_prof_shutdown();
	return rc;
}

TEST(prof_session_oom)
{
	fpt_oom_sweep(session_run, NULL, 0, 11, NULL);
	fpt_tmp_cleanup();
}

/* Metadata keys: one per kernel estimated, so thousands in a large program; kept sorted in the
 * file whatever the order they came in; past the cap a key is refused and counted
 * (lost.dropped_metadata), a known key is still updated. */
TEST(prof_session_meta_keys)
{
	int id = start("mk", FP_PROF_CONTEXT_SHADOW, FP_PROF_DATA_TREE, "host");
	const struct fp_json_value *env;
	struct fp_json_doc *doc;
	char key[32], prev[32] = "";
	size_t i, n;

	for (i = 0; i < 200; i++) { /* out of order */
		snprintf(key, sizeof(key), "estimate:k%03zu", (i * 37) % 200);
		ASSERT_OK(fp_prof_set_meta(id, key, "v"));
	}
	ASSERT_OK(fp_prof_set_meta(id, "estimate:k007", "again"));
	for (i = 200; i < 16384 - 1; i++) { /* the increasing tail fills the table cheaply */
		snprintf(key, sizeof(key), "z%06zu", i);
		ASSERT_OK(fp_prof_set_meta(id, key, "v"));
	}
	ASSERT_OK(fp_prof_set_meta(id, "zz-last", "v"));
	ASSERT_EQ(fp_prof_set_meta(id, "zz-one-too-many", "v"), FP_ELIMIT);
	ASSERT_EQ(fp_prof_set_meta(id, "zz-two-too-many", "v"), FP_ELIMIT);
	ASSERT_OK(fp_prof_set_meta(id, "estimate:k000", "updated")); /* known keys still update */
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	doc = fpt_json_file(fpt_tmp_path("mk.meta.json"));
	ASSERT_EQ(get_int(fp_json_root(doc), "lost", "dropped_metadata"), 2);
	env = fp_json_get(fp_json_root(doc), "environment");
	n = fp_json_len(env);
	ASSERT_GE(n, 16384);
	for (i = 0; i < n; i++) {
		const char *k;

		fp_json_member(env, i, &k, NULL);
		ASSERT(strcmp(prev, k) < 0);
		snprintf(prev, sizeof(prev), "%s", k);
	}
	ASSERT_STREQ(fp_json_string(fp_json_get(env, "estimate:k007"), NULL), "again");
	ASSERT_STREQ(fp_json_string(fp_json_get(env, "estimate:k000"), NULL), "updated");
	ASSERT_NULL(fp_json_get(env, "zz-one-too-many"));
	fp_json_doc_free(doc);
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}
