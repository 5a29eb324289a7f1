/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for multi-process jobs (<flagprism/ranks.h>, <flagprism/comm.h>): per-rank names,
 * ranks in paths and as text, collective kernels recognised by name, collective scopes in
 * sessions (tree, metadata, trace tracks), the rank's identity in meta files and traces, the
 * merges of profiles (statistics checked against the inputs), of traces (clock alignment) and of
 * the Debugger's summaries, bad inputs named, and out-of-memory sweeps of every merge. */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/comm.h>
#include <flagprism/debug-summary.h>
#include <flagprism/json.h>
#include <flagprism/prof.h>
#include <flagprism/ranks.h>

#include "test.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ASSERT_NOT_NULL(f);
	ASSERT_EQ(fputs(text, f) >= 0, 1);
	ASSERT_EQ(fclose(f), 0);
}

static uint32_t name_id(const char *s)
{
	uint32_t id;

	ASSERT_OK(fp_prof_name_intern(s, strlen(s), &id));
	return id;
}

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

/* A metric's value at a node (total for inclusive ones); NAN when absent. */
static double val(struct fp_calltree *t, uint32_t node, const char *metric)
{
	struct fp_calltree_value v;
	uint32_t m;

	ASSERT_NE(node, FP_CALLTREE_NONE);
	if (fp_calltree_metric_find(t, metric, strlen(metric), &m) ||
	    fp_calltree_get(t, node, m, &v))
		return NAN;
	return v.kind == FP_METRIC_INCLUSIVE ? v.total : v.self;
}

/* ---- naming --------------------------------------------------------------------------------- */

TEST(ranks_name)
{
	char out[64];

	ASSERT_OK(fp_ranks_name("out/prof", 3, FP_RANKS_SUFFIX, out, sizeof(out)));
	ASSERT_STREQ(out, "out/prof.rank3");
	ASSERT_OK(fp_ranks_name("out/dbg", 12, FP_RANKS_SUBDIR, out, sizeof(out)));
	ASSERT_STREQ(out, "out/dbg/rank12");
	ASSERT_OK(fp_ranks_name("out/dbg/", 0, FP_RANKS_SUBDIR, out, sizeof(out)));
	ASSERT_STREQ(out, "out/dbg/rank0");
	ASSERT_OK(fp_ranks_name("r{rank}/p-{rank}", 7, FP_RANKS_SUFFIX, out, sizeof(out)));
	ASSERT_STREQ(out, "r7/p-7");
	ASSERT_OK(fp_ranks_name("{rank}", 0, FP_RANKS_SUBDIR, out, sizeof(out)));
	ASSERT_STREQ(out, "0");
	ASSERT_OK(fp_ranks_name("a{ran}", 1, FP_RANKS_SUFFIX, out, sizeof(out)));
	ASSERT_STREQ(out, "a{ran}.rank1");
	/* exactly fits, then one byte short */
	ASSERT_OK(fp_ranks_name("abc", 5, FP_RANKS_SUFFIX, out, 10));
	ASSERT_STREQ(out, "abc.rank5");
	ASSERT_EQ(fp_ranks_name("abc", 5, FP_RANKS_SUFFIX, out, 9), FP_ELIMIT);
	ASSERT_STREQ(out, "");
	ASSERT_EQ(fp_ranks_name("", 1, FP_RANKS_SUFFIX, out, sizeof(out)), FP_EINVAL);
	ASSERT_EQ(fp_ranks_name("a", -1, FP_RANKS_SUFFIX, out, sizeof(out)), FP_EINVAL);
	ASSERT_EQ(fp_ranks_name("a", 1, (enum fp_ranks_place)9, out, sizeof(out)), FP_EINVAL);
	ASSERT_EQ(fp_ranks_name("a", 1, FP_RANKS_SUFFIX, out, 0), FP_EINVAL);
}

TEST(ranks_of_path)
{
	int64_t r = -1;

	ASSERT_OK(fp_ranks_of_path("out/prof.rank12.hatchet", &r));
	ASSERT_EQ(r, 12);
	ASSERT_OK(fp_ranks_of_path("rank3.hatchet", &r));
	ASSERT_EQ(r, 3);
	ASSERT_OK(fp_ranks_of_path("dbg/rank1/summary.json", &r));
	ASSERT_EQ(r, 1);
	ASSERT_OK(fp_ranks_of_path("dbg/rank4/", &r));
	ASSERT_EQ(r, 4);
	ASSERT_OK(fp_ranks_of_path("x/job_rank2-a.chrome_trace.json", &r));
	ASSERT_EQ(r, 2);
	ASSERT_OK(fp_ranks_of_path("rank9.x.rank5.hatchet", &r)); /* the last one */
	ASSERT_EQ(r, 5);
	ASSERT_EQ(fp_ranks_of_path("rank1/prof.hatchet", &r), FP_ENOENT); /* not the file's */
	ASSERT_EQ(fp_ranks_of_path("franks3.hatchet", &r), FP_ENOENT);
	ASSERT_EQ(fp_ranks_of_path("rank.hatchet", &r), FP_ENOENT);
	ASSERT_EQ(fp_ranks_of_path("rank3x.hatchet", &r), FP_ENOENT);
	ASSERT_EQ(fp_ranks_of_path("prof.rank99999999.hatchet", &r), FP_ENOENT);
	ASSERT_EQ(fp_ranks_of_path("summary.json", &r), FP_ENOENT);
	ASSERT_EQ(fp_ranks_of_path(NULL, &r), FP_EINVAL);
}

TEST(ranks_format_and_missing)
{
	static const int64_t r[] = {0, 1, 2, 3, 5, 7, 8, 10, 11, 12};
	int64_t miss[8];
	char out[64];

	ASSERT_OK(fp_ranks_format(r, 10, out, sizeof(out)));
	ASSERT_STREQ(out, "0-3,5,7,8,10-12");
	ASSERT_OK(fp_ranks_format(r, 0, out, sizeof(out)));
	ASSERT_STREQ(out, "");
	ASSERT_OK(fp_ranks_format(r, 2, out, sizeof(out)));
	ASSERT_STREQ(out, "0,1");
	ASSERT_EQ(fp_ranks_format(r, 10, out, 8), FP_ELIMIT);
	ASSERT(strstr(out, "...") != NULL);
	ASSERT_EQ(fp_ranks_missing(r, 10, 14, miss, 8), 4);
	ASSERT_EQ(miss[0], 4);
	ASSERT_EQ(miss[1], 6);
	ASSERT_EQ(miss[2], 9);
	ASSERT_EQ(miss[3], 13);
	ASSERT_EQ(fp_ranks_missing(r, 10, 14, miss, 1), 4); /* counts past the room */
	ASSERT_EQ(fp_ranks_missing(r, 4, 4, miss, 8), 0);
}

/* ---- collective kernels ---------------------------------------------------------------------- */

static const char *kind_of(const char *name)
{
	static char buf[64];
	struct fp_comm_kernel k;

	if (!fp_comm_kernel_parse(name, strlen(name), &k))
		return "-";
	snprintf(buf, sizeof(buf), "%s:%.*s", k.library, (int)k.kind_len, k.kind);
	return buf;
}

TEST(comm_kernel_names)
{
	ASSERT_STREQ(kind_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), "nccl:AllReduce");
	ASSERT_STREQ(kind_of("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), "nccl:ReduceScatter");
	ASSERT_STREQ(kind_of("ncclDevKernel_SendRecv"), "nccl:SendRecv");
	ASSERT_STREQ(kind_of("ncclDevKernel_Generic_4"), "nccl:Generic");
	ASSERT_STREQ(kind_of("ncclKernel_AllGather_RING_LL_Sum_int8_t"), "nccl:AllGather");
	ASSERT_STREQ(
		kind_of("_Z38ncclDevKernel_Broadcast_RING_LL_Sum_i824ncclDevKernelArgsStorageILm4096EE"),
		"nccl:Broadcast");
	ASSERT_STREQ(
		kind_of("ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
		"nccl:Reduce");
	ASSERT_STREQ(kind_of("ncclDevKernel_AllReduce(x)"), "nccl:AllReduce");
	ASSERT_STREQ(kind_of("ncclDevKernel_"), "-");
	ASSERT_STREQ(kind_of("ncclDevKernel_allReduce"), "-");
	ASSERT_STREQ(kind_of("my_ncclDevKernel_AllReduce"), "-");
	ASSERT_STREQ(kind_of("add_kernel"), "-");
	ASSERT_STREQ(kind_of("_Z3foov"), "-");
	ASSERT_STREQ(kind_of("_Z99ncclDevKernel_AllReduce"), "-"); /* length past the end */
	ASSERT(!fp_comm_kernel_parse(NULL, 0, NULL));
	/* a length that cuts the name is honoured */
	ASSERT(!fp_comm_kernel_parse("ncclDevKernel_AllReduce", 14, NULL));
	ASSERT(fp_comm_kernel_parse("ncclDevKernel_AllReduce", 15, NULL));
}

/* ---- collective scopes in a session ---------------------------------------------------------- */

static struct fp_sink_launch launch(const char *kernel)
{
	struct fp_sink_launch l;

	memset(&l, 0, sizeof(l));
	l.kernel = name_id(kernel);
	l.callpath = FP_PROF_NO_CALLPATH;
	l.grid[0] = 1;
	l.grid[1] = 1;
	l.grid[2] = 1;
	return l;
}

static int start(const char *name, enum fp_prof_data data, const char *backend)
{
	struct fp_prof_options o = {0};
	struct fp_diag d;
	int id = -1;

	o.name = fpt_tmp_path(name);
	o.data = data;
	o.backend = backend;
	fp_diag_clear(&d);
	if (fp_prof_start(&o, &id, &d))
		fpt_fail(__FILE__, __LINE__, "start: %s", d.msg);
	return id;
}

TEST(comm_scopes_tree_meta_trace)
{
	int id = start("c", FP_PROF_DATA_TRACE, "host");
	struct fp_sink_launch add = launch("add_kernel");
	struct fp_sink_launch nccl = launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	struct fp_comm_call c = {"gloo", "all_reduce", 4096, "0-3", 4, 0};
	struct fp_ranks_info ri;
	struct fp_calltree *t;
	struct fp_diag d;
	struct fp_json_doc *doc;
	const struct fp_json_value *root, *evs, *dist;
	static const char *const in_scope[] = {"step", "gloo:all_reduce",
					       "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
	static const char *const grouped[] = {"step", "nccl:AllReduce",
					      "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
	static const char *const scope[] = {"step", "gloo:all_reduce"};
	static const char *const step[] = {"step"};
	size_t i;
	int collectives = 0, comm_track = 0, coll_track = 0, comm_kernels = 0;
	int64_t x;

	fp_ranks_info_init(&ri);
	ri.rank = 2;
	ri.world_size = 4;
	ri.local_rank = 0;
	ri.host = "nodeB";
	ri.device = "cuda:0";
	ri.backend = "nccl";
	ri.boot_id = "boot-1";
	ri.has_barrier = true;
	ri.barrier_exit_ns = 123456;
	ri.barrier_ns = 789;
	ASSERT_OK(fp_ranks_attach(id, &ri));
	ri.rank = 4;
	ASSERT_EQ(fp_ranks_attach(id, &ri), FP_EINVAL);
	ri.rank = 2;
	ASSERT_EQ(fp_ranks_attach(id + 100, &ri), FP_ENOENT);

	ASSERT_OK(fp_prof_scope_enter(id, "step", 4, 0));
	ASSERT_OK(fp_host_launch(id, &add, 10, 20));
	ASSERT_OK(fp_comm_enter(id, &c));
	ASSERT_OK(fp_host_launch(id, &nccl, 30, 80)); /* inside the collective: no group */
	ASSERT_OK(fp_comm_exit(id, NULL));
	c.flags = FP_COMM_ASYNC;
	c.bytes = 1000;
	ASSERT_OK(fp_comm_enter(id, &c));
	ASSERT_OK(fp_comm_exit(id, NULL));
	ASSERT_OK(fp_host_launch(id, &nccl, 90, 100)); /* outside: grouped per kind */
	/* fp_comm_exit closes only collectives */
	fp_diag_clear(&d);
	ASSERT_EQ(fp_comm_exit(id, &d), FP_ESTATE);
	ASSERT(strstr(d.msg, "'step' is not a collective") != NULL);
	ASSERT_OK(fp_prof_scope_exit(id, "step", 4, NULL));
	/* bad calls */
	c.backend = "";
	ASSERT_EQ(fp_comm_enter(id, &c), FP_EINVAL);
	ASSERT_EQ(fp_comm_enter(id, NULL), FP_EINVAL);

	t = fp_prof_session_tree(fp_prof_session_get(id));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(val(t, find(t, in_scope, 3), "time (ns)"), 50);
	ASSERT_DEQ(val(t, find(t, grouped, 3), "time (ns)"), 10);
	ASSERT_DEQ(val(t, find(t, scope, 2), "comm_bytes"), 5096);
	ASSERT_DEQ(val(t, find(t, scope, 2), "comm_count"), 2);
	ASSERT(val(t, find(t, scope, 2), "comm_time (ns)") >= 0);
	ASSERT_DEQ(val(t, find(t, step, 1), "comm_count"), 2); /* inclusive */
	ASSERT_DEQ(val(t, find(t, scope, 2), "comm_group_size (max)"), 4);
	ASSERT_STREQ(fpt_metric_str(t, find(t, scope, 2), "comm_kind (pty)"), "all_reduce");
	ASSERT_STREQ(fpt_metric_str(t, find(t, scope, 2), "comm_ranks (pty)"), "0-3");
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));

	doc = fpt_json_file(fpt_tmp_path("c.meta.json"));
	dist = fp_json_get(fp_json_root(doc), "distributed");
	ASSERT(fp_json_int64(fp_json_get(dist, "rank"), &x) && x == 2);
	ASSERT(fp_json_int64(fp_json_get(dist, "world_size"), &x) && x == 4);
	ASSERT(fp_json_int64(fp_json_get(dist, "local_rank"), &x) && x == 0);
	ASSERT_EQ(fp_json_type(fp_json_get(dist, "local_world_size")), FP_JSON_NULL);
	ASSERT_STREQ(fp_json_string(fp_json_get(dist, "host"), NULL), "nodeB");
	ASSERT_STREQ(fp_json_string(fp_json_get(dist, "backend"), NULL), "nccl");
	ASSERT_STREQ(fp_json_string(fp_json_get(dist, "boot_id"), NULL), "boot-1");
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(dist, "barrier"), "duration_ns"), &x) &&
	       x == 789);
	fp_json_doc_free(doc);

	doc = fpt_json_file(fpt_tmp_path("c.chrome_trace.json"));
	root = fp_json_root(doc);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(root, "otherData"), "rank"), &x) && x == 2);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(root, "otherData"), "barrier_ns"), &x) &&
	       x == 789);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(root, "otherData"), "boot_id"), NULL),
		     "boot-1");
	evs = fp_json_get(root, "traceEvents");
	for (i = 0; i < fp_json_len(evs); i++) {
		const struct fp_json_value *e = fp_json_at(evs, i), *args = fp_json_get(e, "args");
		const char *cat = fp_json_string(fp_json_get(e, "cat"), NULL);
		const char *n = fp_json_string(fp_json_get(args, "name"), NULL);
		const char *en = fp_json_string(fp_json_get(e, "name"), NULL);

		if (cat && !strcmp(cat, "collective")) {
			collectives++;
			ASSERT_STREQ(en, "gloo:all_reduce");
			ASSERT_STREQ(fp_json_string(fp_json_get(args, "ranks"), NULL), "0-3");
			ASSERT(fp_json_int64(fp_json_get(args, "group_size"), &x) && x == 4);
			ASSERT(fp_json_int64(fp_json_get(args, "bytes"), &x) &&
			       (x == 4096 || x == 1000));
		}
		if (cat && !strcmp(cat, "kernel") && en && !strncmp(en, "nccl", 4))
			comm_kernels++;
		if (n && strstr(n, "collectives"))
			coll_track++;
		if (n && strstr(n, "communication"))
			comm_track++;
	}
	ASSERT_EQ(collectives, 2);
	ASSERT_EQ(comm_kernels, 2);
	ASSERT_EQ(coll_track, 1); /* "thread N collectives" */
	ASSERT_EQ(comm_track, 1); /* "stream N communication" */
	fp_json_doc_free(doc);
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

/* A device-timed kernel (the CUPTI path: launch contexts) inside and outside a collective. */
TEST(comm_scopes_launch_contexts)
{
	int id = start("lc", FP_PROF_DATA_TREE, "null");
	struct fp_prof_session *s = fp_prof_session_get(id);
	struct fp_comm_call c = {"nccl", "all_gather_into_tensor", 64, NULL, 0, 0};
	struct fp_sink_event ev;
	struct fp_calltree *t;
	uint32_t inner;
	static const char *const in_scope[] = {"nccl:all_gather_into_tensor",
					       "ncclDevKernel_AllGather_RING_LL"};
	static const char *const grouped[] = {"nccl:AllGather", "ncclDevKernel_AllGather_RING_LL"};

	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.kernel = name_id("ncclDevKernel_AllGather_RING_LL");
	ev.callpath = FP_PROF_NO_CALLPATH;
	ev.device_type = name_id("CUDA");
	ev.begin_ns = 1;
	ev.end_ns = 3;
	ASSERT_OK(fp_comm_enter(FP_PROF_ALL, &c));
	inner = fp_prof_launch_context();
	ASSERT_NE(inner, FP_SINK_LCTX_NONE);
	ASSERT_OK(fp_comm_exit(FP_PROF_ALL, NULL));
	ASSERT_OK(fp_prof_session_kernel_lctx(s, &ev, FP_SINK_LCTX_NONE, inner));
	ASSERT_OK(fp_prof_session_kernel_lctx(s, &ev, FP_SINK_LCTX_NONE, FP_SINK_LCTX_NONE));
	t = fp_prof_session_tree(s);
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(val(t, find(t, in_scope, 2), "count"), 1);
	ASSERT_DEQ(val(t, find(t, grouped, 2), "count"), 1);
	ASSERT(isnan(val(t, find(t, in_scope, 1), "comm_ranks (pty)"))); /* none given */
	ASSERT_OK(fp_prof_finalize(id, NULL, NULL));
	fp_prof_shutdown();
	fpt_tmp_cleanup();
}

/* ---- identity read back ------------------------------------------------------------------------ */

TEST(ranks_read_meta)
{
	struct fp_ranks_read rr;
	struct fp_diag d;

	write_file(fpt_tmp_path("p.rank1.meta.json"),
		   "{\"format\":\"flagprism-profile-meta\",\"incomplete\":true,"
		   "\"time\":{\"origin_monotonic_ns\":500,\"start_unix_ns\":9000},"
		   "\"distributed\":{\"rank\":1,\"local_rank\":1,\"world_size\":4,"
		   "\"local_world_size\":null,\"host\":\"h\",\"device\":\"cpu\",\"backend\":null,"
		   "\"boot_id\":\"b7\","
		   "\"barrier\":{\"exit_monotonic_ns\":700,\"duration_ns\":30}}}");
	ASSERT_OK(fp_ranks_read_meta(fpt_tmp_path("p.rank1.hatchet"), &rr, NULL));
	ASSERT(rr.found);
	ASSERT_EQ(rr.rank, 1);
	ASSERT_EQ(rr.world_size, 4);
	ASSERT_EQ(rr.local_world_size, -1);
	ASSERT_STREQ(rr.host, "h");
	ASSERT_STREQ(rr.backend, "");
	ASSERT_STREQ(rr.boot_id, "b7");
	ASSERT(rr.has_barrier);
	ASSERT_UEQ(rr.barrier_ns, 30);
	ASSERT_UEQ(rr.origin_ns, 500);
	ASSERT_UEQ(rr.origin_unix_ns, 9000);
	ASSERT(rr.incomplete);
	/* the meta file itself, and the trace beside it, name the same meta file */
	ASSERT_OK(fp_ranks_read_meta(fpt_tmp_path("p.rank1.meta.json"), &rr, NULL));
	ASSERT_EQ(rr.rank, 1);
	ASSERT_OK(fp_ranks_read_meta(fpt_tmp_path("p.rank1.chrome_trace.json"), &rr, NULL));
	ASSERT_EQ(rr.rank, 1);
	/* no meta file: nothing known, no error */
	ASSERT_OK(fp_ranks_read_meta(fpt_tmp_path("none.hatchet"), &rr, NULL));
	ASSERT(!rr.found);
	/* a session outside a job */
	ASSERT_OK(fp_ranks_parse_meta("{\"distributed\":null}", 20, "m", &rr, NULL));
	ASSERT(!rr.found);
	/* malformed: named with file, line and column */
	fp_diag_clear(&d);
	ASSERT_EQ(fp_ranks_parse_meta("{\"distributed\":{\n\"rank\":\"one\"}}", 31, "m.json", &rr,
				      &d),
		  FP_EFORMAT);
	ASSERT_STREQ(d.msg,
		     "m.json:2:8: \"distributed\".\"rank\" must be a non-negative integer or "
		     "null");
	ASSERT_EQ(fp_ranks_parse_meta("{\"distributed\":[]}", 18, "m", &rr, &d), FP_EFORMAT);
	ASSERT_EQ(fp_ranks_parse_meta("{\"distributed\":{\"rank\":4,\"world_size\":4}}", 41, "m",
				      &rr, &d),
		  FP_EFORMAT);
	ASSERT(strstr(d.msg, "not below the world size") != NULL);
	ASSERT_EQ(fp_ranks_parse_meta("{\"distributed\":{\"host\":3}}", 26, "m", &rr, &d),
		  FP_EFORMAT);
	ASSERT_EQ(fp_ranks_parse_meta("[1,", 3, "m", &rr, &d), FP_EFORMAT);
	ASSERT(strncmp(d.msg, "m:1:4: ", 7) == 0);
	fpt_tmp_cleanup();
}

static char *render(struct fp_calltree *t, const char *metric, int *rc);

/* ---- merging profiles ------------------------------------------------------------------------- */

/* A rank's tree: ROOT/step/k (time t_k, count 1), ROOT/step/coll (comm_time c), an exclusive
 * cpu time at step, and ROOT/only<r> on that rank only. */
static struct fp_calltree *rank_tree(int64_t rank, double t_k, double c)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t f[2], n, mt, mc, mx, mn;
	char only[16];

	ASSERT_NOT_NULL(t);
	ASSERT_OK(fp_calltree_metric_auto(t, "time (ns)", 9, &mt));
	ASSERT_OK(fp_calltree_metric_auto(t, "count", 5, &mn));
	ASSERT_OK(fp_calltree_metric_auto(t, "comm_time (ns)", 14, &mc));
	ASSERT_OK(fp_calltree_metric_auto(t, "cpu_time (ns)(exc)", 18, &mx));
	ASSERT_OK(fp_calltree_intern(t, "step", 4, &f[0]));
	ASSERT_OK(fp_calltree_intern(t, "k", 1, &f[1]));
	ASSERT_OK(fp_calltree_add_path(t, f, 2, &n));
	ASSERT_OK(fp_calltree_add_metric(t, n, mt, t_k));
	ASSERT_OK(fp_calltree_add_metric(t, n, mn, 1));
	ASSERT_OK(fp_calltree_add_metric(t, fp_calltree_node_parent(t, n), mx, 10 * (double)rank));
	ASSERT_OK(fp_calltree_intern(t, "gloo:all_reduce", 15, &f[1]));
	ASSERT_OK(fp_calltree_add_path(t, f, 2, &n));
	ASSERT_OK(fp_calltree_add_metric(t, n, mc, c));
	snprintf(only, sizeof(only), "only%d", (int)rank);
	ASSERT_OK(fp_calltree_intern(t, only, strlen(only), &f[0]));
	ASSERT_OK(fp_calltree_add_path(t, f, 1, &n));
	ASSERT_OK(fp_calltree_add_metric(t, n, mt, 1));
	return t;
}

TEST(ranks_merge_statistics)
{
	/* ranks 2, 0, 3 of 4 (rank 1 missing): given out of order */
	static const int64_t ranks[] = {2, 0, 3};
	struct fp_calltree *in[3], *m = NULL;
	static const char *const k[] = {"step", "k"};
	static const char *const coll[] = {"step", "gloo:all_reduce"};
	static const char *const step[] = {"step"};
	static const char *const only3[] = {"only3"};
	uint32_t node;
	int64_t dup[3] = {2, 0, 2};

	in[0] = rank_tree(2, 300, 10);
	in[1] = rank_tree(0, 100, 50);
	in[2] = rank_tree(3, 300, 40);
	ASSERT_OK(fp_ranks_merge(in, ranks, 3, 4, &m));
	node = find(m, k, 2);
	ASSERT_DEQ(val(m, node, "time (ns)"), 700.0 / 3);
	ASSERT_DEQ(val(m, node, "time (ns) (min)"), 100);
	ASSERT_DEQ(val(m, node, "time (ns) (max)"), 300);
	ASSERT_DEQ(val(m, node, "time (ns) (sum)"), 700);
	ASSERT_DEQ(val(m, node, "time (ns) (max rank) (pty)"), 2); /* tie 2 and 3: the lower */
	node = find(m, coll, 2);
	ASSERT_DEQ(val(m, node, "comm_time (ns) (max)"), 50);
	ASSERT_DEQ(val(m, node, "comm_time (ns) (max rank) (pty)"), 0);
	ASSERT_DEQ(val(m, node, "comm_time (ns) (sum)"), 100);
	/* inclusive sums roll up: step's time sum is the kernels' */
	node = find(m, step, 1);
	ASSERT_DEQ(val(m, node, "time (ns) (sum)"), 700);
	ASSERT_DEQ(val(m, node, "comm_time (ns) (sum)"), 100);
	/* exclusive: the sum stays exclusive, its rank metric is a property */
	ASSERT_DEQ(val(m, node, "cpu_time (ns) (sum)(exc)"), 50);
	ASSERT_DEQ(val(m, node, "cpu_time (ns) (max rank) (pty)"), 3);
	/* a node of one rank only: max rank is that rank, min 0 */
	node = find(m, only3, 1);
	ASSERT_DEQ(val(m, node, "time (ns) (max rank) (pty)"), 3);
	ASSERT_DEQ(val(m, node, "time (ns) (min)"), 0);
	ASSERT_DEQ(val(m, node, "time (ns) (sum)"), 1);
	/* the root: straggler and the job */
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "time (ns) (max rank) (pty)"), 2);
	ASSERT_STREQ(fpt_metric_str(m, FP_CALLTREE_ROOT, "ranks (pty)"), "0,2,3");
	ASSERT_STREQ(fpt_metric_str(m, FP_CALLTREE_ROOT, "missing_ranks (pty)"), "1");
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "world_size (pty)"), 4);
	fp_calltree_free(m);
	m = NULL;
	/* a merged profile round-trips through Hatchet with the kinds its names imply */
	ASSERT_OK(fp_ranks_merge(in, ranks, 3, 0, &m));
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "world_size (pty)"), 4);
	ASSERT_STREQ(fpt_metric_str(m, FP_CALLTREE_ROOT, "missing_ranks (pty)"), "1");
	{
		struct fp_calltree *r = NULL;
		struct fp_diag d;

		ASSERT_OK(fp_calltree_save_hatchet(m, fpt_tmp_path("m.hatchet"), 0, &d));
		ASSERT_OK(fp_calltree_read_hatchet(fpt_tmp_path("m.hatchet"), NULL, &r, NULL, &d));
		ASSERT(fp_calltree_equal(m, r, 1e-12, &d));
		fp_calltree_free(r);
	}
	fp_calltree_free(m);
	m = NULL;
	ASSERT_EQ(fp_ranks_merge(in, dup, 3, 4, &m), FP_EINVAL);
	ASSERT_EQ(fp_ranks_merge(in, ranks, 3, 3, &m), FP_EINVAL); /* rank 3 in a world of 3 */
	ASSERT_NULL(m);
	fp_calltree_free(in[0]);
	fp_calltree_free(in[1]);
	fp_calltree_free(in[2]);
	fpt_tmp_cleanup();
}

/* Metric names of any length (a scope's own metrics are named by the user), and --op sum. */
TEST(ranks_merge_long_names_and_sum)
{
	static const int64_t ranks[] = {0, 1};
	struct fp_calltree *in[2], *m = NULL;
	char name[2100], want[2200];
	uint32_t mt, f, n;
	size_t i;

	memset(name, 'x', 2000);
	memcpy(name + 2000, " (ns)", 6);
	for (i = 0; i < 2; i++) {
		in[i] = fp_calltree_new(NULL);
		ASSERT_NOT_NULL(in[i]);
		ASSERT_OK(fp_calltree_metric_auto(in[i], name, strlen(name), &mt));
		ASSERT_OK(fp_calltree_intern(in[i], "k", 1, &f));
		ASSERT_OK(fp_calltree_add_path(in[i], &f, 1, &n));
		ASSERT_OK(fp_calltree_add_metric(in[i], n, mt, 10.0 * (double)(i + 1)));
	}
	ASSERT_OK(fp_ranks_merge_op(in, ranks, 2, 2, FP_MERGE_SUM, &m));
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, name), 30); /* M is the sum */
	snprintf(want, sizeof(want), "%s (sum)", name);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, want), 30);
	snprintf(want, sizeof(want), "%s (max rank) (pty)", name);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, want), 1);
	fp_calltree_free(m);
	m = NULL;
	ASSERT_OK(fp_ranks_merge_op(in, ranks, 2, 2, FP_MERGE_MEAN, &m));
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, name), 15);
	fp_calltree_free(m);
	m = NULL;
	ASSERT_EQ(fp_ranks_merge_op(in, ranks, 2, 2, (enum fp_merge_op)7, &m), FP_EINVAL);
	ASSERT_NULL(m);
	fp_calltree_free(in[0]);
	fp_calltree_free(in[1]);
}

/* ROOT/step/{k (time k_ns), nccl:all_reduce/ncclDevKernel_AllReduce_Sum_f32_RING_LL (wait_ns)} */
static struct fp_calltree *gpu_rank_tree(double k_ns, double wait_ns)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t f[3], n, mt;

	ASSERT_NOT_NULL(t);
	ASSERT_OK(fp_calltree_metric_auto(t, "time (ns)", 9, &mt));
	ASSERT_OK(fp_calltree_intern(t, "step", 4, &f[0]));
	ASSERT_OK(fp_calltree_intern(t, "k", 1, &f[1]));
	ASSERT_OK(fp_calltree_add_path(t, f, 2, &n));
	ASSERT_OK(fp_calltree_add_metric(t, n, mt, k_ns));
	ASSERT_OK(fp_calltree_intern(t, "nccl:all_reduce", 15, &f[1]));
	ASSERT_OK(fp_calltree_intern(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 39, &f[2]));
	ASSERT_OK(fp_calltree_add_path(t, f, 3, &n));
	ASSERT_OK(fp_calltree_add_metric(t, n, mt, wait_ns));
	return t;
}

/* On GPUs the fast rank waits inside NCCL's kernel: its whole time can be the largest, its
 * compute time is not, and the straggler is named by compute time. */
TEST(ranks_merge_compute_time)
{
	static const int64_t ranks[] = {0, 1};
	struct fp_calltree *in[2], *m = NULL;
	char *text;
	int rc;

	in[0] = gpu_rank_tree(100e6, 320e6); /* fast, waits 320 ms for rank 1 */
	in[1] = gpu_rank_tree(400e6, 10e6);  /* slow */
	ASSERT_OK(fp_ranks_merge(in, ranks, 2, 2, &m));
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "time (ns) (max rank) (pty)"), 0);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "compute_time (ns) (max rank) (pty)"), 1);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "compute_time (ns)"), 250e6);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "compute_time (ns) (min)"), 100e6);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "compute_time (ns) (max)"), 400e6);
	ASSERT_DEQ(val(m, FP_CALLTREE_ROOT, "compute_time (ns) (sum)"), 500e6);
	text = render(m, NULL, &rc);
	ASSERT_OK(rc);
	if (!strstr(text, "straggler: rank 1 (compute time/ms 400, the kernel time outside "
			  "collectives; mean 250, max/mean 1.6)\n"))
		fpt_fail(__FILE__, __LINE__, "view:\n%s", text);
	free(text);
	/* merged again: its compute time is kept, not added to */
	{
		struct fp_calltree *again = NULL;
		static const int64_t one[] = {0};

		ASSERT_OK(fp_ranks_merge(&m, one, 1, 1, &again));
		ASSERT_DEQ(val(again, FP_CALLTREE_ROOT, "compute_time (ns)"), 250e6);
		fp_calltree_free(again);
	}
	fp_calltree_free(m);
	fp_calltree_free(in[0]);
	fp_calltree_free(in[1]);
}

static int merge_run(void *arg)
{
	static const int64_t ranks[] = {1, 0};
	struct fp_calltree *in[2], *m = NULL;
	int rc;

	(void)arg;
	in[0] = fp_calltree_new(NULL);
	in[1] = fp_calltree_new(NULL);
	rc = in[0] && in[1] ? FP_OK : FP_ENOMEM;
	if (!rc) {
		uint32_t f, n, mt;

		rc = fp_calltree_metric_auto(in[0], "time (ns)", 9, &mt);
		if (!rc)
			rc = fp_calltree_intern(in[0], "k", 1, &f);
		if (!rc)
			rc = fp_calltree_child(in[0], FP_CALLTREE_ROOT, f, &n);
		if (!rc)
			rc = fp_calltree_add_metric(in[0], n, mt, 5);
	}
	if (!rc)
		rc = fp_ranks_merge(in, ranks, 2, 3, &m);
	fp_calltree_free(m);
	fp_calltree_free(in[0]);
	fp_calltree_free(in[1]);
	return rc;
}

TEST(ranks_merge_oom)
{
	fpt_oom_sweep(merge_run, NULL, 0, 10, NULL);
}

/* ---- the imbalance view ---------------------------------------------------------------------- */

static char *render(struct fp_calltree *t, const char *metric, int *rc)
{
	struct fp_ranks_view_options o;
	struct fp_diag d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NOT_NULL(f);
	memset(&o, 0, sizeof(o));
	o.metric = metric;
	fp_diag_clear(&d);
	*rc = fp_ranks_view_render(t, &o, f, &d);
	ASSERT_EQ(fclose(f), 0);
	if (*rc) {
		free(buf);
		buf = strdup(d.msg);
	}
	return buf;
}

TEST(ranks_view)
{
	static const int64_t ranks[] = {0, 1, 2};
	struct fp_calltree *in[3], *m = NULL;
	char *text;
	int rc;

	in[0] = rank_tree(0, 100e6, 50e6);
	in[1] = rank_tree(1, 100e6, 50e6);
	in[2] = rank_tree(2, 400e6, 5e6);
	ASSERT_OK(fp_ranks_merge(in, ranks, 3, 3, &m));
	text = render(m, NULL, &rc);
	ASSERT_OK(rc);
	ASSERT(strstr(text, "ranks: 0-2 of world size 3; missing: none\n") != NULL);
	if (!strstr(text,
		    "straggler: rank 2 (compute time/ms 400, the kernel time outside collectives; mean "
		    "200, max/mean 2)\n") ||
	    !strstr(text, "       2         2  \u2502  \u251c\u2500 k\n") ||
	    !strstr(text, "     n/a       n/a  \u2502  \u2514\u2500 gloo:all_reduce\n") ||
	    !strstr(text, "       2  rank 2     k (max 400, mean 200)\n"))
		fpt_fail(__FILE__, __LINE__, "view:\n%s", text);
	ASSERT(strstr(text, "\u2514\u2500 k\n") != NULL ||
	       strstr(text, "\u251c\u2500 k\n") != NULL);
	ASSERT(strstr(text, "most imbalanced") != NULL);
	free(text);
	text = render(m, "comm_time (ns)", &rc);
	ASSERT_OK(rc);
	if (!strstr(text, "straggler: rank 0 (comm_time/ms 50; mean 35, max/mean 1.429)"))
		fpt_fail(__FILE__, __LINE__, "view:\n%s", text);
	free(text);
	text = render(m, "nope", &rc);
	ASSERT_EQ(rc, FP_EINVAL);
	free(text);
	text = render(in[0], NULL, &rc); /* not merged */
	ASSERT_EQ(rc, FP_ENOENT);
	ASSERT(strstr(text, "not a profile merged across ranks") != NULL);
	free(text);
	fp_calltree_free(m);
	fp_calltree_free(in[0]);
	fp_calltree_free(in[1]);
	fp_calltree_free(in[2]);
}

/* ---- merging traces --------------------------------------------------------------------------- */

/* A trace as a session writes it, with an X event at ts (us text) on (pid 1, tid 1) and one on
 * a device stream. */
static char *trace_text(int rank, const char *host, uint64_t origin, uint64_t unix_ns, int barrier,
			uint64_t bexit, uint64_t bns, const char *ts)
{
	char *s = NULL;
	char bar[128] = "";

	if (barrier)
		snprintf(bar, sizeof(bar),
			 ",\"barrier_exit_monotonic_ns\":%llu,\"barrier_ns\":%llu",
			 (unsigned long long)bexit, (unsigned long long)bns);
	ASSERT(asprintf(
		       &s,
		       "{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":%llu,\"otherData\":{"
		       "\"clock\":\"CLOCK_MONOTONIC\",\"origin_monotonic_ns\":%llu,\"rank\":%d,"
		       "\"world_size\":3,\"host\":\"%s\"%s},\"traceEvents\":["
		       "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"host\"}},"
		       "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":"
		       "\"thread 1\"}},"
		       "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1000,\"args\":{\"name\":\"CUDA "
		       "0\"}},"
		       "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1000,\"tid\":1073741831,\"args\":"
		       "{\"name\":\"stream 7 communication\"}},"
		       "{\"ph\":\"X\",\"name\":\"step\",\"cat\":\"scope\",\"pid\":1,\"tid\":1,\"ts\":%s,"
		       "\"dur\":2.000,\"args\":{\"call_stack\":[]}},"
		       "{\"ph\":\"X\",\"name\":\"nccl\",\"cat\":\"kernel\",\"pid\":1000,\"tid\":"
		       "1073741831,\"ts\":0.250,\"dur\":1.000,\"args\":{\"grid\":[1,1,1]}}]}",
		       (unsigned long long)unix_ns, (unsigned long long)origin, rank, host, bar,
		       ts) > 0);
	return s;
}

/* The ts of the first "step" event of process `pid` in a merged trace, in ns. */
static int64_t step_ts(const struct fp_json_value *root, int64_t pid, int64_t *tid)
{
	const struct fp_json_value *evs = fp_json_get(root, "traceEvents");
	size_t i;

	for (i = 0; i < fp_json_len(evs); i++) {
		const struct fp_json_value *e = fp_json_at(evs, i);
		const char *n = fp_json_string(fp_json_get(e, "name"), NULL);
		int64_t p;
		double ts;

		if (n && !strcmp(n, "step") && fp_json_int64(fp_json_get(e, "pid"), &p) &&
		    p == pid && fp_json_number(fp_json_get(e, "ts"), &ts)) {
			if (tid)
				ASSERT(fp_json_int64(fp_json_get(e, "tid"), tid));
			return (int64_t)llround(ts * 1000);
		}
	}
	fpt_fail(__FILE__, __LINE__, "no step event for pid %lld", (long long)pid);
}

static int merge_texts(char **texts, const char *const *names, size_t n, enum fp_ranks_align a,
		       struct fp_json_doc **doc, struct fp_ranks_trace_report *rep,
		       struct fp_diag *d)
{
	struct fp_ranks_trace_options o;
	size_t lens[8], i;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	memset(&o, 0, sizeof(o));
	o.align = a;
	for (i = 0; i < n; i++)
		lens[i] = strlen(texts[i]);
	fp_diag_clear(d);
	rc = fp_ranks_merge_trace_texts((const char *const *)texts, lens, names, n, &o, f, rep, d);
	ASSERT_EQ(fclose(f), 0);
	if (!rc && doc) {
		struct fp_diag pd;

		if (fp_json_parse(buf, len, NULL, doc, &pd))
			fpt_fail(__FILE__, __LINE__, "merged trace is not JSON: %s", pd.msg);
	}
	free(buf);
	return rc;
}

TEST(ranks_merge_traces_align)
{
	/* rank 1 started 5 us after rank 0 on the same host; rank 2 (the third trace) is missing
	 * from the world of 3 */
	char *t[2] = {trace_text(1, "h", 1005000, 2000005000, 1, 2000000, 300, "10.500"),
		      trace_text(0, "h", 1000000, 2000000000, 1, 1999000, 200, "1.000")};
	static const char *const names[] = {"a.json", "b.json"};
	struct fp_ranks_trace_report rep;
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;
	const struct fp_json_value *od, *evs;
	int64_t tid, x;
	size_t i, threads = 0;

	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, &doc, &rep, &d));
	ASSERT_EQ(rep.used, FP_RANKS_ALIGN_CLOCK);
	ASSERT_EQ(rep.error_ns, 0);
	ASSERT_EQ(rep.ranks, 2);
	ASSERT_EQ(rep.world_size, 3);
	ASSERT_EQ(rep.nmissing, 1);
	ASSERT_STREQ(rep.missing, "2");
	ASSERT_UEQ(rep.events, 4);
	/* one process per rank, pid rank + 1; rank 1's events moved by 5 us, exactly */
	ASSERT_EQ(step_ts(fp_json_root(doc), 1, &tid), 1000);
	ASSERT_EQ(tid, 1);
	ASSERT_EQ(step_ts(fp_json_root(doc), 2, NULL), 10500 + 5000);
	od = fp_json_get(fp_json_root(doc), "otherData");
	ASSERT_STREQ(fp_json_string(fp_json_get(od, "missing_ranks"), NULL), "2");
	ASSERT_STREQ(
		fp_json_string(fp_json_get(fp_json_get(od, "clock_alignment"), "method"), NULL),
		"clock");
	ASSERT(fp_json_int64(
		       fp_json_get(fp_json_get(fp_json_get(od, "clock_alignment"), "offsets_ns"),
				   "1"),
		       &x) &&
	       x == 5000);
	evs = fp_json_get(fp_json_root(doc), "traceEvents");
	for (i = 0; i < fp_json_len(evs); i++) {
		const char *n = fp_json_string(
			fp_json_get(fp_json_get(fp_json_at(evs, i), "args"), "name"), NULL);

		if (n &&
		    (!strcmp(n, "CUDA 0 stream 7 communication") || !strcmp(n, "host thread 1")))
			threads++;
		if (n && !strcmp(n, "rank 1 (h)"))
			threads += 100;
	}
	ASSERT_EQ(threads, 104);
	fp_json_doc_free(doc);
	doc = NULL;

	/* on the barrier: rank 1 left it 995000 ns after its origin, rank 0 999000 ns after its:
	 * rank 1's time line starts 4000 ns after rank 0's */
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_BARRIER, &doc, &rep, &d));
	ASSERT_EQ(rep.used, FP_RANKS_ALIGN_BARRIER);
	ASSERT_EQ(rep.error_ns, 300);
	ASSERT_EQ(step_ts(fp_json_root(doc), 1, NULL), 1000);
	ASSERT_EQ(step_ts(fp_json_root(doc), 2, NULL), 10500 + 4000);
	fp_json_doc_free(doc);
	doc = NULL;

	/* wall clocks: the same 5 us here */
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_WALL, &doc, &rep, &d));
	ASSERT_EQ(rep.error_ns, -1);
	ASSERT_EQ(step_ts(fp_json_root(doc), 2, NULL) - step_ts(fp_json_root(doc), 1, NULL),
		  15500 - 1000);
	fp_json_doc_free(doc);
	free(t[0]);
	free(t[1]);

	/* different hosts: auto picks the barrier */
	t[0] = trace_text(0, "h1", 1000000, 1, 1, 1500000, 100, "0");
	t[1] = trace_text(1, "h2", 7000000, 1, 1, 7200000, 900, "0");
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d));
	ASSERT_EQ(rep.used, FP_RANKS_ALIGN_BARRIER);
	ASSERT_EQ(rep.error_ns, 900);
	ASSERT(strstr(rep.note, "2 hosts") != NULL);
	free(t[1]);
	/* ... and without a barrier on every rank, the wall clock */
	t[1] = trace_text(1, "h2", 7000000, 1, 0, 0, 0, "0");
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d));
	ASSERT_EQ(rep.used, FP_RANKS_ALIGN_WALL);
	ASSERT_EQ(merge_texts(t, names, 2, FP_RANKS_ALIGN_BARRIER, NULL, &rep, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "start barrier") != NULL);
	free(t[0]);
	free(t[1]);
}

/* The ts (ns) of the event named `name`. */
static int64_t event_ts(const struct fp_json_value *root, const char *name, int64_t *pid)
{
	const struct fp_json_value *evs = fp_json_get(root, "traceEvents");
	size_t i;
	double ts;

	for (i = 0; i < fp_json_len(evs); i++) {
		const struct fp_json_value *e = fp_json_at(evs, i);
		const char *n = fp_json_string(fp_json_get(e, "name"), NULL);

		if (n && !strcmp(n, name) && fp_json_number(fp_json_get(e, "ts"), &ts)) {
			ASSERT(fp_json_int64(fp_json_get(e, "pid"), pid));
			return (int64_t)llround(ts * 1000);
		}
	}
	fpt_fail(__FILE__, __LINE__, "no event %s", name);
}

static void expect_bad(const char *text, int status, const char *msg)
{
	static const char *const names[] = {"bad.json"};
	char *t[1] = {(char *)text};
	struct fp_ranks_trace_report rep;
	struct fp_diag d;
	int rc = merge_texts(t, names, 1, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d);

	if (rc != status || !strstr(d.msg, msg))
		fpt_fail(__FILE__, __LINE__, "%s: got %d \"%s\", want %d \"%s\"", text, rc, d.msg,
			 status, msg);
}

/* A trace_text() with a boot id beside its host. */
static char *with_boot(char *t, const char *host, const char *boot)
{
	char key[64], *s = NULL, *at;

	snprintf(key, sizeof(key), "\"host\":\"%s\"", host);
	at = strstr(t, key);
	ASSERT_NOT_NULL(at);
	ASSERT(asprintf(&s, "%.*s%s,\"boot_id\":\"%s\"%s", (int)(at - t), t, key, boot,
			at + strlen(key)) > 0);
	free(t);
	return s;
}

/* The boot id says who shares a clock; host names stand in only without one. */
TEST(ranks_merge_traces_boot_id)
{
	static const char *const names[] = {"a.json", "b.json"};
	struct fp_ranks_trace_report rep;
	struct fp_diag d;
	char *t[2];

	/* one host name, two boots (containers on two machines): not one clock */
	t[0] = with_boot(trace_text(0, "h", 1000, 1, 1, 1500, 10, "0"), "h", "boot-a");
	t[1] = with_boot(trace_text(1, "h", 9000, 1, 1, 9700, 20, "0"), "h", "boot-b");
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d));
	ASSERT_EQ(rep.used, FP_RANKS_ALIGN_BARRIER);
	free(t[0]);
	free(t[1]);
	/* two host names (aliases), one boot: one clock */
	t[0] = with_boot(trace_text(0, "h1", 1000, 1, 1, 1500, 10, "0"), "h1", "boot-a");
	t[1] = with_boot(trace_text(1, "h1.example", 9000, 1, 1, 9700, 20, "0"), "h1.example",
			 "boot-a");
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d));
	ASSERT_EQ(rep.used, FP_RANKS_ALIGN_CLOCK);
	free(t[0]);
	free(t[1]);
}

TEST(ranks_merge_traces_bad_input)
{
	static const char *const names[] = {"x/r.rank5.json", "y.json"};
	char *t[2];
	struct fp_ranks_trace_report rep;
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;
	int64_t pid;

	/* foreign traces: the rank from the file name, else the position; no clock, no shift */
	t[0] = strdup("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":3,\"tid\":4,\"ts\":1e3,\"dur\":1}]");
	t[1] = strdup("{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"b\",\"ts\":-2.5,\"s\":\"g\"}]}");
	ASSERT_OK(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, &doc, &rep, &d));
	ASSERT_EQ(rep.world_size, 6);
	ASSERT_EQ(rep.nmissing, 4);
	ASSERT_STREQ(rep.missing, "0,2-4");
	ASSERT_EQ(rep.error_ns, -1);
	ASSERT(strstr(rep.note, "not aligned") != NULL);
	ASSERT_EQ(event_ts(fp_json_root(doc), "a", &pid), 1000000);
	ASSERT_EQ(pid, 6);
	ASSERT_EQ(event_ts(fp_json_root(doc), "b", &pid), -2500);
	ASSERT_EQ(pid, 2);
	fp_json_doc_free(doc);
	free(t[0]);
	free(t[1]);

	expect_bad("{\"traceEvents\":[", FP_EFORMAT, "bad.json:1:17: ");
	expect_bad("{\"x\":1}", FP_EFORMAT, "bad.json:1:1: \"traceEvents\" must be an array");
	expect_bad("3", FP_EFORMAT, "expected a Chrome trace");
	expect_bad("[1]", FP_EFORMAT, "bad.json:1:2: event 0 must be an object");
	expect_bad("[{\"name\":\"a\"}]", FP_EFORMAT, "event 0 has no \"ph\" string");
	expect_bad("[{\"ph\":\"X\",\"pid\":\"p\"}]", FP_EFORMAT,
		   "event 0: \"pid\" and \"tid\" must be integers");
	expect_bad("[{\"ph\":\"X\",\"ts\":\"1\"}]", FP_EFORMAT,
		   "bad.json:1:17: event 0: \"ts\" must be a number");
	expect_bad("{\"otherData\":[],\"traceEvents\":[]}", FP_EFORMAT,
		   "\"otherData\" must be an object");
	expect_bad("{\"otherData\":{\"rank\":-1},\"traceEvents\":[]}", FP_EFORMAT,
		   "\"otherData\".\"rank\" must be an integer");
	expect_bad("{\"otherData\":{\"rank\":3,\"world_size\":2},\"traceEvents\":[]}", FP_EINVAL,
		   "rank 3 is not below the world size 2");

	/* two traces of one rank; traces of two jobs */
	t[0] = trace_text(0, "h", 1, 1, 0, 0, 0, "0");
	t[1] = trace_text(0, "h", 1, 1, 0, 0, 0, "0");
	ASSERT_EQ(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d), FP_EINVAL);
	ASSERT_STREQ(d.msg, "x/r.rank5.json and y.json are both rank 0 (traces of two jobs?)");
	free(t[1]);
	t[1] = strdup("{\"otherData\":{\"rank\":1,\"world_size\":2},\"traceEvents\":[]}");
	ASSERT_EQ(merge_texts(t, names, 2, FP_RANKS_ALIGN_AUTO, NULL, &rep, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "world size 2, an earlier trace 3") != NULL);
	free(t[0]);
	free(t[1]);
}

struct trace_oom {
	char *t[2];
};

static int trace_oom_run(void *arg)
{
	struct trace_oom *a = arg;
	static const char *const names[] = {"a", "b"};
	size_t lens[2] = {strlen(a->t[0]), strlen(a->t[1])};
	FILE *f = fopen("/dev/null", "w");
	int rc;

	ASSERT_NOT_NULL(f);
	rc = fp_ranks_merge_trace_texts((const char *const *)a->t, lens, names, 2, NULL, f, NULL,
					NULL);
	fclose(f);
	return rc;
}

TEST(ranks_merge_traces_oom)
{
	struct trace_oom a;

	a.t[0] = trace_text(0, "h", 10, 1, 1, 5, 1, "1.5");
	a.t[1] = trace_text(1, "h", 20, 2, 1, 15, 2, "2");
	fpt_oom_sweep(trace_oom_run, &a, 0, 10, NULL);
	free(a.t[0]);
	free(a.t[1]);
}

/* The files API: read, write through a temporary name, fail on a missing input. */
TEST(ranks_merge_traces_files)
{
	char *t = trace_text(0, "h", 10, 1, 0, 0, 0, "1");
	char p0[256], p1[256];
	const char *paths[2] = {p0, p1};
	struct fp_ranks_trace_report rep;
	struct fp_json_doc *doc;
	struct fp_diag d;
	int64_t pid;

	write_file(fpt_tmp_path("p.rank0.chrome_trace.json"), t);
	snprintf(p0, sizeof(p0), "%s", fpt_tmp_path("p.rank0.chrome_trace.json"));
	ASSERT_OK(fp_ranks_merge_traces(paths, 1, NULL, fpt_tmp_path("all.json"), &rep, &d));
	doc = fpt_json_file(fpt_tmp_path("all.json"));
	ASSERT_EQ(event_ts(fp_json_root(doc), "step", &pid), 1000);
	ASSERT_EQ(pid, 1);
	fp_json_doc_free(doc);
	snprintf(p1, sizeof(p1), "%s", fpt_tmp_path("nope.json"));
	ASSERT_EQ(fp_ranks_merge_traces(paths, 2, NULL, fpt_tmp_path("all2.json"), &rep, &d),
		  FP_EIO);
	if (!strstr(d.msg, "nope.json"))
		fpt_fail(__FILE__, __LINE__, "msg: %s", d.msg);
	ASSERT_EQ(access(fpt_tmp_path("all2.json"), F_OK), -1);
	free(t);
	fpt_tmp_cleanup();
}

/* ---- merging the Debugger's summaries ----------------------------------------------------------- */

static char *summary_text(int rank, int world, int finding, int complete)
{
	char *s = NULL;
	char dist[160] = "null";

	if (rank >= 0)
		snprintf(dist, sizeof(dist),
			 "{\"rank\":%d,\"local_rank\":%d,\"world_size\":%d,\"host\":\"h%d\","
			 "\"device\":\"cpu\"}",
			 rank, rank, world, rank);
	ASSERT(asprintf(
		       &s,
		       "{\"schema\":\"flagprism.debug.summary\",\"version\":1,\"mode\":\"sanitize\","
		       "\"checks\":\"bounds\",\"command\":\"flagprism debug --sanitize\","
		       "\"output_dir\":\"/o\",\"complete\":%s,\"incomplete_reason\":%s,"
		       "\"exit_status\":%d,\"distributed\":%s,"
		       "\"totals\":{\"kernels\":1,\"launches\":2,\"instrumented\":2,\"findings\":%d},"
		       "\"dropped\":{\"kernels\":0},"
		       "\"kernels\":[{\"name\":\"copy\",\"source_file\":\"/w/c.py\",\"launches\":2,"
		       "\"instrumented\":2,\"first_launch\":0,\"findings\":%d,\"not_instrumented\":[]}],"
		       "\"findings\":[%s]}",
		       complete ? "true" : "false", complete ? "null" : "\"SIGTERM\"",
		       complete ? 0 : 143, dist, finding, finding,
		       finding ?
			       "{\"kind\":\"out_of_bounds\",\"kernel\":\"copy\",\"file\":\"/w/c.py\","
			       "\"line\":13,\"source\":\"x = tl.load(p)\",\"program\":0,\"launch\":1,"
			       "\"message\":\"reads past the end\",\"stack\":[\"/w/c.py:28 <module>\"]}" :
			       "") > 0);
	return s;
}

static int merge_summaries(char **texts, const char *const *names, size_t n, char **json,
			   char **txt, struct fp_ranks_summary_report *rep, struct fp_diag *d)
{
	size_t lens[8], i, jl = 0, tl = 0;
	FILE *fj = open_memstream(json, &jl), *ft = open_memstream(txt, &tl);
	int rc;

	for (i = 0; i < n; i++)
		lens[i] = strlen(texts[i]);
	fp_diag_clear(d);
	rc = fp_ranks_merge_summary_texts((const char *const *)texts, lens, names, n, fj, ft, rep,
					  d);
	fclose(fj);
	fclose(ft);
	return rc;
}

TEST(ranks_merge_summaries)
{
	char *t[3] = {summary_text(3, 4, 1, 0), summary_text(0, 4, 0, 1),
		      summary_text(-1, 0, 0, 1)};
	static const char *const names[] = {"d/rank3/summary.json", "d/rank0/summary.json",
					    "d/rank1/summary.json"};
	struct fp_ranks_summary_report rep;
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *r, *f, *k;
	struct fp_diag d;
	char *json = NULL, *txt = NULL;
	int64_t x;

	ASSERT_OK(merge_summaries(t, names, 3, &json, &txt, &rep, &d));
	ASSERT_EQ(rep.ranks, 3);
	ASSERT_EQ(rep.world_size, 4);
	ASSERT_STREQ(rep.missing, "2");
	ASSERT_EQ(rep.incomplete, 1);
	ASSERT_UEQ(rep.findings, 1);
	ASSERT_UEQ(rep.kernels, 3);
	ASSERT_OK(fp_json_parse(json, strlen(json), NULL, &doc, &d));
	r = fp_json_root(doc);
	ASSERT_STREQ(fp_json_string(fp_json_get(r, "schema"), NULL), "flagprism.debug.summary");
	ASSERT_EQ(fp_json_type(fp_json_get(r, "complete")), FP_JSON_FALSE);
	ASSERT(strstr(fp_json_string(fp_json_get(r, "incomplete_reason"), NULL),
		      "rank 3: SIGTERM; missing rank 2 (no summary)") != NULL);
	ASSERT(fp_json_int64(fp_json_get(r, "exit_status"), &x) && x == 143);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "totals"), "launches"), &x) && x == 6);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "totals"), "findings"), &x) && x == 1);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(r, "ranks"), "merged"), NULL), "0,1,3");
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(r, "ranks"), "missing"), NULL), "2");
	/* kernels in rank order, each naming its rank; the finding names rank 3 */
	k = fp_json_get(r, "kernels");
	ASSERT_EQ(fp_json_len(k), 3);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(k, 0), "rank"), &x) && x == 0);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(k, 1), "rank"), &x) && x == 1); /* from path */
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(k, 2), "rank"), &x) && x == 3);
	f = fp_json_get(r, "findings");
	ASSERT_EQ(fp_json_len(f), 1);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(f, 0), "rank"), &x) && x == 3);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(f, 0), "kind"), NULL), "out_of_bounds");
	ASSERT(strstr(txt, "rank 3: out_of_bounds in copy at c.py:13") != NULL);
	ASSERT(strstr(txt, "rank 3 INCOMPLETE: SIGTERM") != NULL);
	ASSERT(strstr(txt, "rank 2 missing") != NULL);
	fp_json_doc_free(doc);
	free(json);
	free(txt);
	free(t[2]);

	/* bad summaries are named */
	t[2] = strdup("{\"schema\":\"flagprism.debug.summary\",\"version\":2,\"kernels\":[],"
		      "\"findings\":[]}");
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EVERSION);
	ASSERT(strstr(d.msg, "d/rank1/summary.json:1:") != NULL);
	free(json);
	free(txt);
	free(t[2]);
	t[2] = strdup("{\"schema\":\"other\"}");
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "not a Debugger summary") != NULL);
	free(json);
	free(txt);
	free(t[2]);
	t[2] = strdup("{\"schema\":\"flagprism.debug.summary\",\"version\":1,\"kernels\":[1],"
		      "\"findings\":[]}");
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "kernel 0 must be an object") != NULL);
	free(json);
	free(txt);
	free(t[2]);
	t[2] = summary_text(0, 4, 0, 1); /* rank 0 twice */
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "are both rank 0") != NULL);
	free(json);
	free(txt);
	free(t[2]);
	t[2] = strdup("{\"schema\":");
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EFORMAT);
	ASSERT(strncmp(d.msg, "d/rank1/summary.json:1:11: ", 27) == 0);
	free(json);
	free(txt);
	free(t[0]);
	free(t[1]);
	free(t[2]);
}

/* Each rank's incomplete launches reach the merged summary, each with its rank. */
TEST(ranks_merge_summaries_incomplete_launches)
{
	char *t[2] = {summary_text(1, 2, 0, 1), summary_text(0, 2, 0, 1)};
	static const char *const names[] = {"d/rank1/summary.json", "d/rank0/summary.json"};
	static const char list[] = "\"incomplete\":[{\"kernel\":\"copy\",\"launch\":1,"
				   "\"report\":\"r.txt\",\"reason\":\"records did not fit\"}],";
	struct fp_ranks_summary_report rep;
	struct fp_json_doc *doc;
	const struct fp_json_value *inc, *e;
	char *json = NULL, *txt = NULL, *p, *with;
	struct fp_diag d;
	int64_t x;

	/* rank 1 lists one launch (before its "kernels"); rank 0 has no list (an older writer) */
	p = strstr(t[0], "\"kernels\":[");
	ASSERT_NOT_NULL(p);
	ASSERT(asprintf(&with, "%.*s%s%s", (int)(p - t[0]), t[0], list, p) > 0);
	free(t[0]);
	t[0] = with;
	ASSERT_OK(merge_summaries(t, names, 2, &json, &txt, &rep, &d));
	ASSERT_OK(fp_json_parse(json, strlen(json), NULL, &doc, &d));
	inc = fp_json_get(fp_json_root(doc), "incomplete");
	ASSERT_EQ(fp_json_len(inc), 1);
	e = fp_json_at(inc, 0);
	ASSERT(fp_json_int64(fp_json_get(e, "rank"), &x) && x == 1);
	ASSERT_STREQ(fp_json_string(fp_json_get(e, "kernel"), NULL), "copy");
	ASSERT_STREQ(fp_json_string(fp_json_get(e, "reason"), NULL), "records did not fit");
	fp_json_doc_free(doc);
	free(json);
	free(txt);
	free(t[0]);
	free(t[1]);
}

struct sum_oom {
	char *t[2];
};

static int summary_oom_run(void *arg)
{
	struct sum_oom *a = arg;
	static const char *const names[] = {"a", "b"};
	size_t lens[2] = {strlen(a->t[0]), strlen(a->t[1])};
	FILE *f = fopen("/dev/null", "w");
	int rc;

	ASSERT_NOT_NULL(f);
	rc = fp_ranks_merge_summary_texts((const char *const *)a->t, lens, names, 2, f, f, NULL,
					  NULL);
	fclose(f);
	return rc;
}

TEST(ranks_merge_summaries_oom)
{
	struct sum_oom a;

	a.t[0] = summary_text(1, 2, 1, 1);
	a.t[1] = summary_text(0, 2, 0, 0);
	fpt_oom_sweep(summary_oom_run, &a, 0, 4, NULL);
	free(a.t[0]);
	free(a.t[1]);
}

/* Files and directories: a Debugger output directory stands for its summary.json. */
TEST(ranks_merge_summaries_files)
{
	char *t = summary_text(1, 2, 1, 1);
	const char *paths[1];
	struct fp_ranks_summary_report rep;
	struct fp_json_doc *doc;
	struct fp_diag d;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s", fpt_tmp_path("rank1"));
	ASSERT_EQ(mkdir(dir, 0777), 0);
	write_file(fpt_tmp_path("rank1/summary.json"), t);
	paths[0] = dir;
	ASSERT_OK(fp_ranks_merge_summaries(paths, 1, fpt_tmp_path("all/x"), &rep, &d));
	ASSERT_STREQ(rep.missing, "0");
	doc = fpt_json_file(fpt_tmp_path("all/x/summary.json"));
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_root(doc), "findings")), 1);
	fp_json_doc_free(doc);
	ASSERT_EQ(access(fpt_tmp_path("all/x/summary.txt"), F_OK), 0);
	paths[0] = fpt_tmp_path("missing");
	ASSERT_EQ(fp_ranks_merge_summaries(paths, 1, fpt_tmp_path("all/y"), &rep, &d), FP_EIO);
	free(t);
	fpt_tmp_cleanup();
}

/* The Debugger's own summary says which rank wrote it. */
TEST(ranks_debug_summary_distributed)
{
	struct fp_dbg_summary *s = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_OK(fp_dbg_summary_new(&s));
	f = open_memstream(&buf, &len);
	ASSERT_OK(fp_dbg_summary_write_format(s, "json", f, NULL));
	fclose(f);
	ASSERT(strstr(buf, "\"distributed\": null") != NULL);
	free(buf);
	ASSERT_OK(fp_dbg_summary_set_int(s, "rank", 1));
	ASSERT_OK(fp_dbg_summary_set_int(s, "world_size", 2));
	ASSERT_OK(fp_dbg_summary_set(s, "host", "nodeA"));
	ASSERT_EQ(fp_dbg_summary_set_int(s, "rank", -5), FP_EINVAL);
	ASSERT_EQ(fp_dbg_summary_set_int(s, "ranks", 1), FP_EINVAL);
	f = open_memstream(&buf, &len);
	ASSERT_OK(fp_dbg_summary_write_format(s, "json", f, NULL));
	fclose(f);
	ASSERT(strstr(buf, "\"rank\": 1") != NULL);
	ASSERT(strstr(buf, "\"world_size\": 2") != NULL);
	ASSERT(strstr(buf, "\"local_rank\": null") != NULL);
	ASSERT(strstr(buf, "\"host\": \"nodeA\"") != NULL);
	free(buf);
	f = open_memstream(&buf, &len);
	ASSERT_OK(fp_dbg_summary_write_format(s, "txt", f, NULL));
	fclose(f);
	ASSERT(strstr(buf, "rank 1 of 2 on nodeA") != NULL);
	free(buf);
	fp_dbg_summary_free(s);
}

/* ---- merging the parts of a pytest-xdist session ------------------------------------------------ */

/* A worker's part: kernel "copy" (2 launches) and, with `finding`, its out-of-bounds read at
 * line 13 (in 1 launch); with `other`, kernel "other" too. */
static char *worker_text(const char *id, int count, int finding, int other)
{
	char *s = NULL;

	ASSERT(asprintf(
		       &s,
		       "{\"schema\":\"flagprism.debug.summary\",\"version\":1,\"mode\":\"check\","
		       "\"checks\":\"bounds\",\"command\":\"pytest --flagprism-check=bounds\","
		       "\"output_dir\":\"/o/%s\",\"complete\":true,\"incomplete_reason\":null,"
		       "\"exit_status\":%d,\"distributed\":null,"
		       "\"worker\":{\"id\":\"%s\",\"count\":%d},"
		       "\"totals\":{\"kernels\":%d,\"launches\":%d,\"instrumented\":%d,"
		       "\"findings\":%d,\"launches_with_findings\":%d},"
		       "\"dropped\":{\"kernels\":0,\"findings\":0},"
		       "\"kernels\":[{\"name\":\"copy\",\"source_file\":\"/w/c.py\",\"launches\":2,"
		       "\"instrumented\":1,\"first_launch\":0,\"findings\":%d,\"coverage\":null,"
		       "\"not_instrumented\":[{\"status\":\"excluded\",\"reason\":\"filter\","
		       "\"launches\":1,\"first_launch\":1}]}%s],"
		       "\"findings\":[%s]}",
		       id, finding, id, count, 1 + other, 2 + other, 1 + other, finding, finding,
		       finding,
		       other ? ",{\"name\":\"other\",\"source_file\":\"/w/o.py\",\"launches\":1,"
			       "\"instrumented\":1,\"first_launch\":2,\"findings\":0,"
			       "\"coverage\":{\"statements\":1},\"not_instrumented\":[]}" :
			       "",
		       finding ?
			       "{\"kind\":\"out_of_bounds\",\"kernel\":\"copy\",\"file\":\"/w/c.py\","
			       "\"line\":13,\"subject\":\"x + 1\",\"program\":0,\"launch\":1,"
			       "\"launches\":1,\"programs\":2,\"instances\":3,"
			       "\"message\":\"reads past the end\",\"report\":\"/o/r.txt\","
			       "\"test\":\"t.py::test_x\",\"stack\":[\"/w/t.py:9 test_x\"]}" :
			       "") > 0);
	return s;
}

/* The parts of a session fold into what one process would have written: a kernel and a
 * finding once, their counts summed, each naming the workers it was seen in; a worker the
 * session had without a part is missing. */
TEST(ranks_merge_worker_summaries)
{
	char *t[3] = {worker_text("gw10", 12, 1, 0), worker_text("gw0", 12, 1, 1),
		      worker_text("gw2", 12, 0, 0)};
	static const char *const names[] = {"s/gw10/summary.json", "s/gw0/summary.json",
					    "s/gw2/summary.json"};
	struct fp_ranks_summary_report rep;
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *r, *f, *k, *ni;
	struct fp_diag d;
	char *json = NULL, *txt = NULL;
	int64_t x;

	ASSERT_OK(merge_summaries(t, names, 3, &json, &txt, &rep, &d));
	ASSERT_EQ(rep.ranks, 3);
	ASSERT_EQ(rep.world_size, 0); /* workers, not ranks */
	ASSERT_STREQ(rep.missing, "gw1,gw3,gw4,gw5,gw6,gw7,gw8,gw9,gw11");
	ASSERT_UEQ(rep.kernels, 2);
	ASSERT_UEQ(rep.findings, 1);
	ASSERT_OK(fp_json_parse(json, strlen(json), NULL, &doc, &d));
	r = fp_json_root(doc);
	ASSERT_NULL(fp_json_get(r, "ranks"));
	ASSERT_EQ(fp_json_type(fp_json_get(r, "worker")), FP_JSON_NULL);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(r, "workers"), "merged"), NULL),
		     "gw0,gw2,gw10");
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "workers"), "count"), &x) && x == 12);
	ASSERT_EQ(fp_json_type(fp_json_get(r, "complete")), FP_JSON_FALSE);
	ASSERT(strstr(fp_json_string(fp_json_get(r, "incomplete_reason"), NULL),
		      "missing workers gw1,gw3") != NULL);
	ASSERT(fp_json_int64(fp_json_get(r, "exit_status"), &x) && x == 1);
	/* totals: launches summed, kernels and findings folded */
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "totals"), "launches"), &x) && x == 7);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "totals"), "kernels"), &x) && x == 2);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "totals"), "findings"), &x) && x == 1);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(r, "totals"), "launches_with_findings"), &x) &&
	       x == 2);
	k = fp_json_get(r, "kernels");
	ASSERT_EQ(fp_json_len(k), 2);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(k, 0), "name"), NULL), "copy");
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(k, 0), "worker"), NULL), "gw0");
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_at(k, 0), "workers")), 3);
	ASSERT_STREQ(fp_json_string(fp_json_at(fp_json_get(fp_json_at(k, 0), "workers"), 2), NULL),
		     "gw10");
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(k, 0), "launches"), &x) && x == 6);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(k, 0), "instrumented"), &x) && x == 3);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(k, 0), "findings"), &x) && x == 1);
	ni = fp_json_get(fp_json_at(k, 0), "not_instrumented");
	ASSERT_EQ(fp_json_len(ni), 1);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(ni, 0), "launches"), &x) && x == 3);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(k, 1), "name"), NULL), "other");
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_at(k, 1), "workers")), 1);
	f = fp_json_get(r, "findings");
	ASSERT_EQ(fp_json_len(f), 1);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(f, 0), "worker"), NULL), "gw0");
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_at(f, 0), "workers")), 2);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(f, 0), "launches"), &x) && x == 2);
	ASSERT(fp_json_int64(fp_json_get(fp_json_at(f, 0), "instances"), &x) && x == 6);
	ASSERT(strstr(txt, "3 pytest-xdist workers merged (gw0,gw2,gw10; missing: gw1,") != NULL);
	ASSERT(strstr(txt, "2 kernels, 7 launches") != NULL);
	ASSERT(strstr(txt, "out_of_bounds in copy at c.py:13, program 0, launch 1 of worker gw0 "
			   "(in 2 launches, workers gw0,gw10)") != NULL);
	ASSERT(strstr(txt, "test: t.py::test_x") != NULL);
	fp_json_doc_free(doc);
	free(json);
	free(txt);

	/* a session's part and a rank's summary are not merged together; nor two of one worker */
	free(t[2]);
	t[2] = summary_text(0, 1, 0, 1);
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EINVAL);
	ASSERT(strstr(d.msg,
		      "worker gw10's part of a test session and s/gw2/summary.json is not") !=
	       NULL);
	free(json);
	free(txt);
	free(t[2]);
	t[2] = worker_text("gw0", 12, 0, 0);
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "are both worker gw0") != NULL);
	free(json);
	free(txt);
	free(t[2]);
	t[2] = strdup("{\"schema\":\"flagprism.debug.summary\",\"version\":1,\"kernels\":[],"
		      "\"findings\":[],\"worker\":{\"id\":\"\"}}");
	ASSERT_EQ(merge_summaries(t, names, 3, &json, &txt, &rep, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "\"worker\".\"id\" must be") != NULL);
	free(json);
	free(txt);
	free(t[0]);
	free(t[1]);
	free(t[2]);
}

static int worker_oom_run(void *arg)
{
	struct sum_oom *a = arg;
	static const char *const names[] = {"a", "b"};
	size_t lens[2] = {strlen(a->t[0]), strlen(a->t[1])};
	FILE *f = fopen("/dev/null", "w");
	int rc;

	ASSERT_NOT_NULL(f);
	rc = fp_ranks_merge_summary_texts((const char *const *)a->t, lens, names, 2, f, f, NULL,
					  NULL);
	fclose(f);
	return rc;
}

TEST(ranks_merge_worker_summaries_oom)
{
	struct sum_oom a;

	a.t[0] = worker_text("gw1", 2, 1, 1);
	a.t[1] = worker_text("gw0", 2, 1, 0);
	fpt_oom_sweep(worker_oom_run, &a, 0, 4, NULL);
	free(a.t[0]);
	free(a.t[1]);
}

/* The controlling process merges the parts it was told of under its own summary; a worker it
 * started without a part is missing, and an earlier session's part is never looked for. */
TEST(ranks_debug_summary_write_parts)
{
	char *t0 = worker_text("gw0", 2, 1, 0), *t2 = worker_text("gw2", 2, 0, 1);
	static const char *const expected[] = {"gw0", "gw1", "gw2"};
	struct fp_dbg_summary_parts_report rep;
	struct fp_dbg_summary *s = NULL;
	const struct fp_json_value *r;
	struct fp_json_doc *doc;
	const char *parts[2];
	struct fp_diag d;
	char p0[256], p2[256];
	int64_t x;

	snprintf(p0, sizeof(p0), "%s", fpt_tmp_path("gw0"));
	snprintf(p2, sizeof(p2), "%s", fpt_tmp_path("gw2/summary.json"));
	ASSERT_EQ(mkdir(p0, 0777), 0);
	ASSERT_EQ(mkdir(fpt_tmp_path("gw2"), 0777), 0);
	write_file(fpt_tmp_path("gw0/summary.json"), t0);
	write_file(p2, t2);
	parts[0] = p0;
	parts[1] = p2;
	ASSERT_OK(fp_dbg_summary_new(&s));
	ASSERT_OK(fp_dbg_summary_set(s, "mode", "check"));
	ASSERT_OK(fp_dbg_summary_set(s, "command", "flagprism debug --check bounds"));
	ASSERT_OK(fp_dbg_summary_set(s, "output_dir", "/o"));
	ASSERT_OK(fp_dbg_summary_set_int(s, "exit_status", 3));
	ASSERT_OK(fp_dbg_summary_write_parts(s, fpt_tmp_path("all"), parts, 2, expected, 3, &rep,
					     &d));
	ASSERT_EQ(rep.parts, 2);
	ASSERT_EQ(rep.nmissing, 1);
	ASSERT_STREQ(rep.missing, "gw1");
	ASSERT_UEQ(rep.totals.launches, 5);
	ASSERT_UEQ(rep.totals.kernels, 2);
	ASSERT_UEQ(rep.totals.findings, 1);
	ASSERT_UEQ(rep.totals.by_status[FP_DBG_LAUNCH_INSTRUMENTED], 3);
	doc = fpt_json_file(fpt_tmp_path("all/summary.json"));
	r = fp_json_root(doc);
	ASSERT_STREQ(fp_json_string(fp_json_get(r, "command"), NULL),
		     "flagprism debug --check bounds");
	ASSERT_STREQ(fp_json_string(fp_json_get(r, "output_dir"), NULL), "/o");
	ASSERT(fp_json_int64(fp_json_get(r, "exit_status"), &x) && x == 3);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(r, "workers"), "missing"), NULL),
		     "gw1");
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_get(r, "workers"), "inputs")), 2);
	fp_json_doc_free(doc);
	ASSERT_EQ(access(fpt_tmp_path("all/summary.txt"), F_OK), 0);

	/* every worker died: the summary says so, with nothing merged */
	ASSERT_OK(fp_dbg_summary_write_parts(s, fpt_tmp_path("none"), NULL, 0, expected, 2, &rep,
					     &d));
	ASSERT_STREQ(rep.missing, "gw0,gw1");
	doc = fpt_json_file(fpt_tmp_path("none/summary.json"));
	ASSERT(strstr(fp_json_string(fp_json_get(fp_json_root(doc), "incomplete_reason"), NULL),
		      "missing workers gw0,gw1") != NULL);
	fp_json_doc_free(doc);

	/* a part that is not a worker's is refused, naming it */
	write_file(fpt_tmp_path("gw0/summary.json"),
		   "{\"schema\":\"flagprism.debug.summary\","
		   "\"version\":1,\"kernels\":[],\"findings\":[]}");
	ASSERT_EQ(fp_dbg_summary_write_parts(s, fpt_tmp_path("bad"), parts, 1, NULL, 0, &rep, &d),
		  FP_EINVAL);
	ASSERT(strstr(d.msg, "is not the summary of a pytest-xdist worker") != NULL);
	ASSERT_EQ(fp_dbg_summary_write_parts(s, fpt_tmp_path("bad"), NULL, 1, NULL, 0, &rep, &d),
		  FP_EINVAL);
	fp_dbg_summary_free(s);
	free(t0);
	free(t2);
	fpt_tmp_cleanup();
}

struct parts_oom {
	struct fp_dbg_summary *s;
	const char *parts[2];
};

static int parts_oom_run(void *arg)
{
	struct parts_oom *a = arg;
	static const char *const expected[] = {"gw0", "gw1", "gw2"};

	return fp_dbg_summary_write_parts(a->s, fpt_tmp_path("oom"), a->parts, 2, expected, 3, NULL,
					  NULL);
}

TEST(ranks_debug_summary_write_parts_oom)
{
	char *t0 = worker_text("gw0", 2, 1, 0), *t2 = worker_text("gw2", 2, 1, 1);
	char p0[256], p2[256];
	struct parts_oom a;

	snprintf(p0, sizeof(p0), "%s", fpt_tmp_path("p0.json"));
	snprintf(p2, sizeof(p2), "%s", fpt_tmp_path("p2.json"));
	write_file(p0, t0);
	write_file(p2, t2);
	a.parts[0] = p0;
	a.parts[1] = p2;
	ASSERT_OK(fp_dbg_summary_new(&a.s));
	fpt_oom_sweep(parts_oom_run, &a, 0, 8, NULL);
	fp_dbg_summary_free(a.s);
	free(t0);
	free(t2);
	fpt_tmp_cleanup();
}
