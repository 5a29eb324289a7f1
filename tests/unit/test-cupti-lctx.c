/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The core's launch contexts (prof.h: fp_prof_launch_context(), fp_prof_session_kernel_lctx()),
 * which the CUPTI backend relies on to attribute kernels without taking a lock at launch: ids
 * follow scope and state changes per thread, equal contexts share an id, and events resolve to
 * the same nodes the registered-launch path gives, with Python call paths, per-session scopes,
 * graph-style nesting (outer / inner) and lost contexts. Uses the "null" backend only.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/prof.h>

#include "test.h"

static int open_session(enum fp_prof_context ctx)
{
	static unsigned n;
	struct fp_prof_options o = {0};
	struct fp_diag d;
	char name[64];
	int id = -1;

	/* Open sessions never share a name (their files would overwrite each other's), also those of
	 * the other tests ctest runs at the same time (a name another process holds is refused). */
	snprintf(name, sizeof(name), "/tmp/fp-cupti-lctx-%ld-%u", (long)getpid(), n++);
	o.name = name;
	o.backend = "null";
	o.context = ctx;
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	return id;
}

static struct fp_sink_event kernel_event(const char *name)
{
	struct fp_sink_event ev;
	uint32_t k;

	ASSERT_OK(fp_prof_name_intern(name, strlen(name), &k));
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.kernel = k;
	ev.callpath = FP_PROF_NO_CALLPATH;
	ev.device_type = FP_PROF_NO_NAME;
	ev.begin_ns = fp_prof_clock_ns();
	ev.end_ns = ev.begin_ns + 10;
	return ev;
}

/* Count of the node at "a/b/c" below ROOT, -1 if absent. */
static double count_at(int session, const char *path)
{
	struct fp_calltree *t = fp_prof_session_tree(fp_prof_session_get(session));
	struct fp_calltree_value v;
	uint32_t node = FP_CALLTREE_ROOT, m;
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
			return -1;
		node = c;
		p = e ? e + 1 : p + len;
	}
	if (fp_calltree_metric_find(t, "count", 5, &m) || fp_calltree_get(t, node, m, &v))
		return -1;
	return v.self;
}

static void deliver(int session, const char *kernel, uint32_t outer, uint32_t inner,
		    uint32_t callpath)
{
	struct fp_sink_event ev = kernel_event(kernel);

	ev.callpath = callpath;
	ASSERT_OK(fp_prof_session_kernel_lctx(fp_prof_session_get(session), &ev, outer, inner));
}

TEST(cupti_lctx_follows_scopes)
{
	uint32_t none, a, ab, a_again, st;
	int id;

	ASSERT_EQ(fp_prof_launch_context(), FP_SINK_LCTX_NONE);
	id = open_session(FP_PROF_CONTEXT_SHADOW);
	none = fp_prof_launch_context();
	ASSERT_EQ(none, FP_SINK_LCTX_NONE);
	ASSERT_OK(fp_prof_scope_enter(id, "a", 1, 0));
	a = fp_prof_launch_context();
	ASSERT_NE(a, FP_SINK_LCTX_NONE);
	ASSERT_NE(a, FP_SINK_LCTX_LOST);
	ASSERT_OK(fp_prof_scope_enter(id, "b", 1, 0));
	ab = fp_prof_launch_context();
	ASSERT_NE(ab, a);
	ASSERT_OK(fp_prof_state_enter(id, "warm", 4));
	st = fp_prof_launch_context();
	ASSERT_NE(st, ab);
	ASSERT_OK(fp_prof_state_exit(id));
	ASSERT_EQ(fp_prof_launch_context(), ab);
	ASSERT_OK(fp_prof_scope_exit(id, "b", 1, NULL));
	a_again = fp_prof_launch_context();
	ASSERT_EQ(a_again, a); /* interned: the same context, the same id */
	/* A failed exit leaves the context as it was. */
	ASSERT_EQ(fp_prof_scope_exit(id, "zz", 2, NULL), FP_ESTATE);
	ASSERT_EQ(fp_prof_launch_context(), a);
	ASSERT_OK(fp_prof_scope_exit(id, "a", 1, NULL));
	ASSERT_EQ(fp_prof_launch_context(), FP_SINK_LCTX_NONE);

	/* Kernels delivered later land where the launch happened. */
	deliver(id, "k", FP_SINK_LCTX_NONE, ab, FP_PROF_NO_CALLPATH);
	deliver(id, "k", FP_SINK_LCTX_NONE, st, FP_PROF_NO_CALLPATH);
	deliver(id, "k", FP_SINK_LCTX_NONE, FP_SINK_LCTX_NONE, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(id, "a/b/k"), 1);
	ASSERT_EQ(count_at(id, "a/b/warm/k"), 1);
	ASSERT_EQ(count_at(id, "k"), 1);
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	fp_prof_shutdown();
}

static void *other_thread(void *arg)
{
	*(uint32_t *)arg = fp_prof_launch_context();
	return NULL;
}

TEST(cupti_lctx_per_thread_and_session)
{
	uint32_t here, there = 12345;
	pthread_t th;
	int a, b;

	a = open_session(FP_PROF_CONTEXT_SHADOW);
	b = open_session(FP_PROF_CONTEXT_SHADOW);
	ASSERT_OK(fp_prof_scope_enter(a, "only_a", 6, 0));
	here = fp_prof_launch_context();
	ASSERT_NE(here, FP_SINK_LCTX_NONE);
	ASSERT_OK(pthread_create(&th, NULL, other_thread, &there));
	pthread_join(th, NULL);
	ASSERT_EQ(there, FP_SINK_LCTX_NONE);
	deliver(a, "k", FP_SINK_LCTX_NONE, here, FP_PROF_NO_CALLPATH);
	deliver(b, "k", FP_SINK_LCTX_NONE, here, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(a, "only_a/k"), 1);
	ASSERT_EQ(count_at(b, "k"), 1);
	ASSERT_OK(fp_prof_scope_exit(a, NULL, 0, NULL));
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, NULL));
	fp_prof_shutdown();
}

TEST(cupti_lctx_python_and_nesting)
{
	struct fp_prof_frame fr[2] = {{"m.py", 4, "f", 1, 1}, {"n.py", 4, "g", 1, 2}};
	uint32_t cp, a, ab, ac, x;
	struct fp_prof_stats st;
	int py, sh;

	sh = open_session(FP_PROF_CONTEXT_SHADOW);
	py = open_session(FP_PROF_CONTEXT_PYTHON);
	ASSERT_OK(fp_prof_callpath_intern(fr, 2, &cp));
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "a", 1, 0));
	a = fp_prof_launch_context();
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "b", 1, 0));
	ab = fp_prof_launch_context();
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, NULL, 0, NULL));
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "c", 1, 0));
	ac = fp_prof_launch_context();
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, NULL, 0, NULL));
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, NULL, 0, NULL));
	ASSERT_OK(fp_prof_scope_enter(FP_PROF_ALL, "x", 1, 0));
	x = fp_prof_launch_context();
	ASSERT_OK(fp_prof_scope_exit(FP_PROF_ALL, NULL, 0, NULL));

	/* Python context: the scopes first, then the call path; shadow ignores the call path. */
	deliver(py, "k", FP_SINK_LCTX_NONE, ab, cp);
	deliver(sh, "k", FP_SINK_LCTX_NONE, ab, cp);
	ASSERT_EQ(count_at(py, "a/b/m.py:f@1/n.py:g@2/k"), 1);
	ASSERT_EQ(count_at(sh, "a/b/k"), 1);
	/* Graph replay: captured in a/c, replayed in a/b -> a/b/c (shared "a" once). */
	deliver(sh, "g", ab, ac, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "a/b/c/g"), 1);
	deliver(py, "g", ab, ac, cp);
	ASSERT_EQ(count_at(py, "a/b/c/m.py:f@1/n.py:g@2/g"), 1);
	/* Captured in a, replayed in a/b: nothing to add. Captured in x, replayed in a: a/x. */
	deliver(sh, "h", ab, a, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "a/b/h"), 1);
	deliver(sh, "h", a, x, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "a/x/h"), 1);
	deliver(sh, "h", FP_SINK_LCTX_NONE, x, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "x/h"), 1);
	/* A lost context is counted and filed at the root. */
	deliver(sh, "lost", FP_SINK_LCTX_NONE, FP_SINK_LCTX_LOST, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "lost"), 1);
	ASSERT_OK(fp_prof_session_stats(fp_prof_session_get(sh), &st));
	ASSERT_EQ(st.unmatched, 1);
	ASSERT_EQ(st.failed, 0);
	/* An unknown id is nothing to this session. */
	deliver(sh, "u", FP_SINK_LCTX_NONE, 999999, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "u"), 1);
	/* Inactive sessions ignore events. */
	ASSERT_OK(fp_prof_deactivate(sh));
	deliver(sh, "u", FP_SINK_LCTX_NONE, FP_SINK_LCTX_NONE, FP_PROF_NO_CALLPATH);
	ASSERT_EQ(count_at(sh, "u"), 1);
	ASSERT_EQ(fp_prof_session_kernel_lctx(NULL, NULL, 0, 0), FP_EINVAL);
	ASSERT_OK(fp_prof_finalize(FP_PROF_ALL, NULL, NULL));
	fp_prof_shutdown();
}

TEST(cupti_lctx_shutdown_forgets)
{
	int id = open_session(FP_PROF_CONTEXT_SHADOW);

	ASSERT_OK(fp_prof_scope_enter(id, "a", 1, 0));
	ASSERT_NE(fp_prof_launch_context(), FP_SINK_LCTX_NONE);
	fp_prof_shutdown();
	/* The thread never closed its scope, but the table is gone: no stale id. */
	ASSERT_EQ(fp_prof_launch_context(), FP_SINK_LCTX_NONE);
	id = open_session(FP_PROF_CONTEXT_SHADOW);
	ASSERT_OK(fp_prof_scope_enter(id, "b", 1, 0));
	ASSERT_NE(fp_prof_launch_context(), FP_SINK_LCTX_NONE);
	ASSERT_OK(fp_prof_scope_exit(id, NULL, 0, NULL));
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	fp_prof_shutdown();
}
