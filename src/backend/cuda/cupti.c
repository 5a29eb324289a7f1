/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "cupti" profiler backend: binds a libcupti found by the probe (dlopen + a dlsym table),
 * subscribes once per process, remembers each kernel launch's context in the launch callbacks,
 * tracks CUDA-graph kernel nodes through resource callbacks, hands CUPTI activity buffers from a
 * pre-allocated pool, and turns kernel records into fixed-size events delivered through the
 * "cupti" sessions' sink (include/flagprism/sink.h: kernel()). Launch callbacks do nothing but
 * capture the thread's launch context through the sink (thread-local reads) and write one
 * lock-free slot; everything else happens when CUPTI hands a buffer back (and, when a capture
 * is set with fp_cupti_capture(), the buffer's raw bytes are written to a file). Not here:
 * record decoding (cupti-records.c), the tables (cupti-tables.c), hardware metrics
 * (cupti-metrics.c), PC sampling (cupti-pcsampling.c: this file only calls its hooks).
 *
 * Locks: `lock` (lifecycle: load, enable, sessions start/stop and flush), then `deliver_lock`
 * (the session list and the record reader), then the sessions' own locks. Never call CUPTI's
 * flush with deliver_lock held: CUPTI calls buffer_completed from inside it.
 */
#include "fp-setup.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/backend.h>
#include <flagprism/cupti.h>
#include <flagprism/outfile.h>

#include "backend/cuda/cuda-internal.h"
#include "backend/cuda/cupti-internal.h"
#include "backend/cuda/cupti-metrics-internal.h"
#include "backend/cuda/cupti-pcs-internal.h"
#include "backend/cuda/cupti-kest-internal.h"

#define MD_SLOTS ((size_t)1 << 14)
#define NAME_CACHE 512
#define NAME_MAX_LEN ((size_t)1 << 16)
#define MAX_DEVICES 64
#define MAX_EXTRA_DIRS 32
#define OFFSET_TRUST_NS 1000000 /* |offset| below this with our timestamp callback: 0 */

#define REASON_NO_TIMING "kernel records without timestamps (CUPTI's device buffer was full)"
#define REASON_CUPTI_DROPPED "activity records CUPTI dropped (no host buffer, or buffer full)"
#define REASON_POOL "activity buffer pool exhausted (raise FLAGPRISM_CUPTI_BUFFERS)"

struct cupti_fns {
#define X(req, name, params) fp__cupti_##name##_fn name;
	FP__CUPTI_FUNCS(X)
#undef X
};

struct cbid {
	int domain;
	uint32_t id;
};

/* Every API call that launches kernels: the driver's (Triton) and the runtime's (PyTorch). */
static const struct cbid launch_cbids[] = {
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchKernel},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchKernel_ptsz},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchKernelEx},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchKernelEx_ptsz},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchCooperativeKernel},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchCooperativeKernel_ptsz},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchCooperativeKernelMultiDevice},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuGraphLaunch},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuGraphLaunch_ptsz},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunch},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchGrid},
	{FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuLaunchGridAsync},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunchKernel_ptsz_v7000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunchKernelExC_v11060},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunchKernelExC_ptsz_v11060},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernel_v9000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernel_ptsz_v9000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API,
	 FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernelMultiDevice_v9000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaGraphLaunch_v10000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaGraphLaunch_ptsz_v10000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunch_v3020},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME_cudaLaunch_ptsz_v7000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME___cudaLaunchKernel_v13000},
	{FP__CUPTI_CB_DOMAIN_RUNTIME_API, FP__CUPTI_RUNTIME___cudaLaunchKernel_ptsz_v13000},
};

static const uint32_t resource_cbids[] = {
	FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
	FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
	FP__CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING,
	FP__CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
	FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
	FP__CUPTI_CBID_RESOURCE_MODULE_LOADED, /* cubins for PC sampling */
};

struct name_entry {
	uint64_t ptr;    /* the record's name pointer */
	const char *str; /* our interned copy (the sink's: stable for the process) */
	uint32_t id;
};

/* Configuration, taken at the first start. */
struct config {
	char *extra[MAX_EXTRA_DIRS];
	size_t n_extra;
	size_t buffer_size, corr_slots, graph_nodes;
	unsigned buffers;
};

/* Everything fp__cupti_reset() puts back to zero. */
struct state {
	/* the library */
	void *lib;
	struct cupti_fns f;
	uint32_t api_version;
	struct fp__cupti_layout layout;
	char path[FP_CUPTI_PATH_MAX];
	const struct fp__cu_driver *cu; /* the CUDA driver (driver.c), once a start found it */
	/* CUPTI set-up, done once per process */
	bool subscribed, callbacks_registered, ts_callback, zeroed, resource_callbacks;
	fp__cupti_subscriber sub;
	int64_t clock_offset;
	/* the tables */
	bool tables;
	struct fp__cupti_corr corr;
	struct fp__cupti_mdring md;
	struct fp__cupti_graphs graphs;
	struct fp__cupti_pool pool;
	uint32_t cuda_name, unknown_name;
	/* sessions: deliver_lock */
	struct fp_sink_session *sess[FP_SINK_MAX_SESSIONS];
	size_t nsess;
	uint64_t denied_seen;
	struct name_entry names[NAME_CACHE];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;
static struct config cfg;
static struct state st;
static atomic_bool enabled;
/* Bumped at every enable: a thread whose nest depth is from an older enable starts afresh (an
 * API exit missed while callbacks were off would otherwise leave its depth stuck). */
static atomic_uint enable_gen;

/*
 * The capture of raw activity buffers (fp_cupti_capture): deliver_lock. Outside `st` so that it
 * can be set before the first start; `seq` numbers the process's files and is never reset by a
 * new capture (a second capture into the same directory must not replace the first's files).
 */
#define CAPTURE_NAME_MAX 64 /* "/cupti-<u32>-<pid>-<u64>.rec" and its NUL */

static struct {
	struct fp_cupti_capture_stats s; /* s.dir: the directory; s.active: below the cap */
	bool on;                         /* set, not stopped */
	uint64_t seq;
} capture;

/* Counters (fp_cupti_get_stats); written from CUPTI's threads. */
static atomic_uint_fast64_t n_kernels, n_misses, n_no_timing, n_cupti_dropped, n_completed,
	n_graph_unknown, n_md_lost, n_other, n_bad, n_orphaned;

/* The launching thread's state: only this thread reads or writes it. */
struct thread_state {
	bool next_set, next_has_md;
	uint32_t next_callpath;
	struct fp_sink_metadata next_md;
	uint32_t depth; /* launch API calls entered and not yet exited (runtime -> driver nest) */
	unsigned gen;   /* enable_gen when depth was last valid */
	struct fp__cupti_launch cur;
	bool cur_has_md;
	struct fp_sink_metadata cur_md;
};

static _Thread_local struct thread_state tls;

static void relax_add(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* ---- the launch path (application threads) --------------------------------------------------- */

/* Backend-private use of fp_sink_metadata.reserved in the copies this file keeps (the ring,
 * graph nodes): the estimates are per program. deliver() multiplies and clears it. */
#define MD_EST_PER_PROGRAM FP__CUPTI_MD_PER_PROGRAM

void fp_cupti_set_thread_launch_ex(uint32_t callpath, const struct fp_sink_metadata *md,
				   unsigned flags)
{
	struct thread_state *t = &tls;

	t->next_set = true;
	t->next_callpath = callpath;
	t->next_has_md = md != NULL;
	if (md) {
		t->next_md = *md;
		t->next_md.reserved =
			(flags & FP_CUPTI_LAUNCH_EST_PER_PROGRAM) ? MD_EST_PER_PROGRAM : 0;
	}
}

void fp_cupti_set_thread_launch(uint32_t callpath, const struct fp_sink_metadata *md)
{
	fp_cupti_set_thread_launch_ex(callpath, md, 0);
}

void fp_cupti_set_thread_callpath(uint32_t callpath)
{
	fp_cupti_set_thread_launch(callpath, NULL);
}

/*
 * The CUfunction a driver launch call launches, read from its parameter block (cupti-abi.h);
 * 0 for the runtime's calls, graph launches and the old cuLaunch* (no per-kernel estimate).
 */
static uint64_t launch_function(int domain, uint32_t cbid, const struct fp__cupti_cbdata *d)
{
	const void *p = d->functionParams;
	void *f = NULL;

	if (domain != FP__CUPTI_CB_DOMAIN_DRIVER_API || !p)
		return 0;
	switch (cbid) {
	case FP__CUPTI_DRIVER_cuLaunchKernelEx:
	case FP__CUPTI_DRIVER_cuLaunchKernelEx_ptsz:
		f = ((const struct fp__cu_launch_kernel_ex_params *)p)->f;
		break;
	case FP__CUPTI_DRIVER_cuLaunchKernel:
	case FP__CUPTI_DRIVER_cuLaunchKernel_ptsz:
	case FP__CUPTI_DRIVER_cuLaunchCooperativeKernel:
	case FP__CUPTI_DRIVER_cuLaunchCooperativeKernel_ptsz:
		f = ((const struct fp__cu_launch_kernel_params *)p)->f;
		break;
	default:
		return 0;
	}
	return (uint64_t)(uintptr_t)f;
}

/*
 * A launch nobody handed anything to, while estimate lookups are on: its kernel's per-program
 * estimate from the table (cupti-kest.c), as the launch hook would have handed it over. The
 * correlation slot keeps a reference to the entry (FP__CUPTI_MD_KEST), not a copy in the ring;
 * cur_md gets the copy for a graph node captured by this launch and for the metrics session.
 */
static void launch_estimate(int domain, uint32_t cbid, const struct fp__cupti_cbdata *d,
			    struct thread_state *t)
{
	uint64_t fn = launch_function(domain, cbid, d);
	uint32_t ref;

	if (!fn)
		return;
	ref = fp__cupti_kest_find(fn);
	if (!ref) {
		fp__cupti_kest_miss();
		return;
	}
	if (fp__cupti_kest_get(ref, &t->cur_md)) {
		t->cur_has_md = true;
		t->cur.md = FP__CUPTI_MD_KEST | ref;
	}
}

/*
 * API enter/exit of a launch call. The outermost call of a nest (cudaLaunchKernel entering the
 * driver) captures the context once; every correlation id of the nest gets it, since the record
 * may carry either. This is the whole launch-path cost: thread-local reads and one slot write.
 */
static void on_launch(int domain, uint32_t cbid, const struct fp__cupti_cbdata *d)
{
	struct thread_state *t = &tls;

	if (d->callbackSite == FP__CUPTI_API_ENTER) {
		unsigned gen = atomic_load_explicit(&enable_gen, memory_order_relaxed);

		if (t->gen != gen) {
			t->gen = gen;
			t->depth = 0;
		}
		if (t->depth++ == 0) {
			struct fp_sink_capture cap;

			fp__cupti_sink->capture(&cap);
			t->cur.lctx = cap.lctx;
			/* which sessions file it, decided now (exact deactivate), and whether it is
			 * FlagPrism's own launch (fp_prof_internal_mark) */
			t->cur.active = cap.state.active;
			t->cur.internal = cap.state.internal;
			/* the hook's hand-over, else what a framework's launch wrapper set for
			 * the thread (Inductor's static launcher calls no Triton hook) */
			t->cur.callpath = t->next_set && t->next_callpath != FP_SINK_NO_CALLPATH ?
						  t->next_callpath :
						  cap.callpath;
			t->cur.md = 0;
			t->cur_has_md = t->next_set && t->next_has_md;
			if (t->cur_has_md) {
				t->cur_md = t->next_md;
				t->cur.md = fp__cupti_md_put(&st.md, &t->next_md);
			} else if (!t->next_set &&
				   atomic_load_explicit(&fp__cupti_kest_on, memory_order_relaxed)) {
				launch_estimate(domain, cbid, d, t);
			}
			t->next_set = t->next_has_md = false;
		}
		if (d->correlationId)
			fp__cupti_corr_put(&st.corr, d->correlationId, &t->cur);
		if (atomic_load_explicit(&fp__cupti_metrics_on, memory_order_relaxed))
			fp__cupti_metrics_launch(domain, cbid, d, t->depth == 1, t->cur.lctx,
						 t->cur.callpath,
						 t->cur_has_md ? &t->cur_md : NULL);
	} else if (t->depth) {
		t->depth--;
		if (atomic_load_explicit(&fp__cupti_metrics_on, memory_order_relaxed))
			fp__cupti_metrics_launch(domain, cbid, d, t->depth == 0, 0, 0, NULL);
		/* PC sampling drains CUPTI's buffer now and then (at most every 50 ms) */
		if (!t->depth && atomic_load_explicit(&fp__cupti_pcs_on, memory_order_relaxed))
			fp__cupti_pcs_after_launch();
	}
}

static uint64_t graph_owner(fp__cu_graph graph)
{
	uint32_t id = 0;

	if (!graph || !st.f.cuptiGetGraphId || st.f.cuptiGetGraphId(graph, &id))
		return 0;
	return FP__CUPTI_OWNER_GRAPH | id;
}

static uint64_t exec_owner(fp__cu_graph_exec exec)
{
	uint32_t id = 0;

	if (!exec || !st.f.cuptiGetGraphExecId || st.f.cuptiGetGraphExecId(exec, &id))
		return 0;
	return FP__CUPTI_OWNER_EXEC | id;
}

static uint64_t node_id(fp__cu_graph_node node)
{
	uint64_t id = 0;

	if (!node || st.f.cuptiGetGraphNodeId(node, &id))
		return 0;
	return id;
}

/*
 * Graph bookkeeping. A launch on a capturing stream only adds a node: GRAPHNODE_CREATED fires on
 * the launching thread inside that launch call, so the node takes the launch's context. Nodes
 * made outside a launch (cuGraphAddKernelNode) take the thread's context of the moment.
 * Instantiation and cloning copy entries to the new node ids (replayed records carry the exec
 * graph's ids); destruction removes them.
 */
static void on_resource(uint32_t cbid, const struct fp__cupti_resource_data *r)
{
	const struct fp__cupti_graph_data *gd = r ? r->resourceDescriptor : NULL;
	struct fp__cupti_gnode n;
	uint64_t from, to;

	if (cbid == FP__CUPTI_CBID_RESOURCE_MODULE_LOADED) {
		fp__cupti_pcs_module(r ? r->resourceDescriptor : NULL);
		return;
	}
	if (!gd)
		return;
	switch (cbid) {
	case FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
		if (gd->nodeType != FP__CU_GRAPH_NODE_TYPE_KERNEL)
			return;
		memset(&n, 0, sizeof(n));
		n.id = node_id(gd->node);
		if (!n.id)
			return;
		n.owner = graph_owner(gd->graph);
		if (tls.depth && atomic_load_explicit(&enabled, memory_order_relaxed) &&
		    tls.gen == atomic_load_explicit(&enable_gen, memory_order_relaxed)) {
			n.lctx = tls.cur.lctx;
			n.callpath = tls.cur.callpath;
			n.has_md = tls.cur_has_md;
			if (n.has_md)
				n.md = tls.cur_md;
		} else {
			struct fp_sink_capture cap;

			fp__cupti_sink->capture(&cap);
			n.lctx = cap.lctx;
			n.callpath = FP_SINK_NO_CALLPATH;
		}
		fp__cupti_graphs_put(&st.graphs, &n);
		break;
	case FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
		from = node_id(gd->originalNode);
		to = node_id(gd->node);
		if (from && to)
			fp__cupti_graphs_clone(&st.graphs, from, to,
					       gd->graphExec ? exec_owner(gd->graphExec) :
							       graph_owner(gd->graph));
		break;
	case FP__CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING:
		fp__cupti_graphs_remove(&st.graphs, node_id(gd->node));
		break;
	case FP__CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
		fp__cupti_graphs_remove_owner(&st.graphs, graph_owner(gd->graph));
		break;
	case FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
		fp__cupti_graphs_remove_owner(&st.graphs, exec_owner(gd->graphExec));
		break;
	default:
		break;
	}
}

static void api_callback(void *user, int domain, uint32_t cbid, const void *cbdata)
{
	(void)user;
	if (!cbdata)
		return;
	if (domain == FP__CUPTI_CB_DOMAIN_DRIVER_API || domain == FP__CUPTI_CB_DOMAIN_RUNTIME_API)
		on_launch(domain, cbid, cbdata);
	else if (domain == FP__CUPTI_CB_DOMAIN_RESOURCE)
		on_resource(cbid, cbdata);
}

/* ---- activity buffers (CUPTI's threads, or the thread that flushes) -------------------------- */

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = fp__cupti_pool_get(&st.pool);

	*buffer = b;
	*size = b ? st.pool.size : 0;
	*max_records = 0;
}

/* deliver_lock held. */
static void note_all(uint64_t n, const char *reason)
{
	size_t i;

	for (i = 0; i < st.nsess; i++)
		st.sess[i]->sink->dropped(st.sess[i], n, reason);
}

/* deliver_lock held: the name id of a record's kernel name. */
static uint32_t kernel_name(uint64_t ptr)
{
	const char *s = (const char *)(uintptr_t)ptr;
	struct name_entry *e = &st.names[(ptr >> 4) % NAME_CACHE];
	uint32_t id;
	size_t len;

	if (!s)
		return st.unknown_name;
	/* The pointer is CUPTI's and may be reused after a module unload: compare the text. */
	if (e->ptr == ptr && e->str && strcmp(e->str, s) == 0)
		return e->id;
	len = strnlen(s, NAME_MAX_LEN);
	if (fp__cupti_sink->name_intern(s, len, &id))
		return st.unknown_name;
	e->ptr = ptr;
	e->str = fp__cupti_sink->name_str(id, NULL);
	e->id = id;
	return id;
}

static uint64_t to_host_ns(uint64_t t)
{
	int64_t v = (int64_t)t - st.clock_offset;

	return v > 0 ? (uint64_t)v : 0;
}

static uint32_t grid_dim(int32_t v)
{
	return v > 0 ? (uint32_t)v : 0;
}

/* deliver_lock held: one kernel record into every open session. */
static void deliver(const struct fp_cupti_kernel_record *k)
{
	uint32_t outer = FP_SINK_LCTX_NONE, inner;
	struct fp__cupti_launch l;
	struct fp__cupti_gnode n;
	struct fp_sink_launch_state ls;
	struct fp_sink_event ev;
	uint32_t cp;
	bool have, claimed = false;
	size_t i;

	if (!st.nsess) {
		relax_add(&n_orphaned, 1);
		return;
	}
	/* A kernel the metrics session recorded at launch: it files it at stop (once). */
	if (atomic_load_explicit(&fp__cupti_metrics_on, memory_order_relaxed)) {
		struct fp__cupti_metrics_rec mr;

		memset(&mr, 0, sizeof(mr));
		mr.correlation = k->correlation;
		mr.device = k->device_id;
		mr.kernel = kernel_name(k->name);
		for (i = 0; i < 3; i++)
			mr.grid[i] = grid_dim(k->grid[i]);
		mr.stream = k->stream_id;
		mr.timed = k->start || k->end;
		mr.begin_ns = mr.timed ? to_host_ns(k->start) : 0;
		mr.end_ns = mr.timed ? to_host_ns(k->end) : 0;
		claimed = fp__cupti_metrics_claim(&mr);
		if (claimed && st.nsess == 1 && fp__cupti_metrics_session(st.sess[0])) {
			relax_add(&n_kernels, 1);
			return;
		}
	}
	if (!k->start && !k->end) {
		relax_add(&n_no_timing, 1);
		for (i = 0; i < st.nsess; i++)
			if (!claimed || !fp__cupti_metrics_session(st.sess[i]))
				st.sess[i]->sink->dropped(st.sess[i], 1, REASON_NO_TIMING);
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.device_id = k->device_id;
	ev.device_type = st.cuda_name;
	ev.kernel = kernel_name(k->name);
	ev.callpath = FP_SINK_NO_CALLPATH;
	for (i = 0; i < 3; i++)
		ev.grid[i] = grid_dim(k->grid[i]);
	ev.begin_ns = to_host_ns(k->start);
	ev.end_ns = to_host_ns(k->end);
	ev.stream = k->stream_id;
	ev.correlation = k->correlation;

	have = fp__cupti_corr_get(&st.corr, k->correlation, &l);
	if (!have)
		relax_add(&n_misses, 1);
	if (k->graph_node_id && fp__cupti_graphs_get(&st.graphs, k->graph_node_id, &n)) {
		/* A replayed node: under the replaying context, then the capture context. */
		outer = have ? l.lctx : FP_SINK_LCTX_NONE;
		inner = n.lctx;
		ev.callpath = have ? l.callpath : FP_SINK_NO_CALLPATH;
		/* the replaying call path, then where the node was captured (its note too) */
		if (fp__cupti_sink->callpath_join(ev.callpath, n.callpath, &cp) == FP_OK)
			ev.callpath = cp;
		else if (ev.callpath == FP_SINK_NO_CALLPATH)
			ev.callpath = n.callpath;
		if (n.has_md)
			ev.md = n.md;
	} else {
		if (k->graph_node_id)
			relax_add(&n_graph_unknown, 1);
		inner = have ? l.lctx : FP_SINK_LCTX_LOST;
		if (have) {
			ev.callpath = l.callpath;
			if (l.md & FP__CUPTI_MD_KEST)
				fp__cupti_kest_get(l.md, &ev.md); /* entries outlive launches */
			else if (l.md && !fp__cupti_md_get(&st.md, l.md, &ev.md))
				relax_add(&n_md_lost, 1);
		}
	}
	if (ev.md.reserved & MD_EST_PER_PROGRAM) {
		double programs = (double)ev.grid[0] * ev.grid[1] * ev.grid[2];

		ev.md.est_bytes *= programs;
		ev.md.est_flops *= programs;
	}
	ev.md.reserved = 0;
	ls.known = have;
	ls.active = have ? l.active : 0;
	ls.internal = have ? l.internal : 0;
	for (i = 0; i < st.nsess; i++) {
		uint32_t node;

		if (claimed && fp__cupti_metrics_session(st.sess[i]))
			continue; /* filed by the metrics session at stop */
		st.sess[i]->sink->kernel(st.sess[i], &ev, outer, inner, &ls, &node);
		fp__cupti_pcs_note(st.sess[i], k->correlation, node, ev.kernel,
				   ev.end_ns > ev.begin_ns ? ev.end_ns - ev.begin_ns : 0);
	}
	relax_add(&n_kernels, 1);
}

/* deliver_lock held: one record of `extent` bytes (up to the next record or the end). */
static void handle_record(const uint8_t *rec, size_t extent)
{
	struct fp_cupti_kernel_record k;
	uint32_t kind;

	if (extent < sizeof(kind)) {
		relax_add(&n_bad, 1);
		return;
	}
	memcpy(&kind, rec, sizeof(kind));
	if (fp__cupti_record_size(&st.layout, kind) == 0) {
		relax_add(&n_other, 1);
		return;
	}
	if (fp__cupti_kernel_decode(rec, extent, &k)) {
		relax_add(&n_bad, 1);
		return;
	}
	deliver(&k);
}

/*
 * Step through a completed buffer with CUPTI's own iterator (it knows the sizes of every kind
 * of the loaded version) and decode each record within the bytes up to the next one.
 */
static void read_buffer(uint8_t *buf, size_t valid)
{
	const uint8_t *prev = NULL, *end = buf + valid;
	void *rec = NULL;
	int rc;

	for (;;) {
		const uint8_t *r;

		rc = st.f.cuptiActivityGetNextRecord(buf, valid, &rec);
		if (rc != FP__CUPTI_SUCCESS) {
			if (rc != FP__CUPTI_ERROR_MAX_LIMIT_REACHED)
				relax_add(&n_bad, 1);
			break;
		}
		r = rec;
		if (r < buf || r >= end || (prev && r <= prev)) {
			relax_add(&n_bad, 1);
			break;
		}
		if (prev)
			handle_record(prev, (size_t)(r - prev));
		prev = r;
	}
	if (prev)
		handle_record(prev, (size_t)(end - prev));
}

/*
 * deliver_lock held, CUPTI's thread: write `valid` bytes of a completed buffer to the capture's
 * next file, or count them as skipped once the cap is reached. Never fails the buffer.
 */
static void capture_buffer(const uint8_t *buf, size_t valid)
{
	char path[FP_CUPTI_PATH_MAX + CAPTURE_NAME_MAX];
	struct fp_outfile of;
	struct fp_diag d;
	int rc;

	if (!capture.on || !valid)
		return;
	if (!capture.s.active || valid > capture.s.max_bytes - capture.s.bytes) {
		capture.s.active = false; /* the cap: this buffer and every later one are skipped */
		capture.s.skipped++;
		capture.s.skipped_bytes += valid;
		return;
	}
	memset(&d, 0, sizeof(d));
	snprintf(path, sizeof(path), "%s/cupti-%" PRIu32 "-%ld-%" PRIu64 ".rec", capture.s.dir,
		 st.api_version, (long)getpid(), capture.seq++);
	rc = fp_outfile_open(&of, path, 0, &d);
	if (rc)
		goto fail_open;
	rc = fwrite(buf, 1, valid, of.f) == valid ? FP_OK : FP_EIO;
	rc = fp_outfile_finish(&of, rc, &d);
	if (rc)
		goto fail_write;
	capture.s.files++;
	capture.s.bytes += valid;
	return;

fail_write:
fail_open:
	if (!capture.s.failures)
		snprintf(capture.s.error, sizeof(capture.s.error), "%s (%s)",
			 d.msg[0] ? d.msg : fp_strerror(rc), fp_status_name(rc));
	capture.s.failures++;
}

static void buffer_completed(fp__cu_context ctx, uint32_t stream, uint8_t *buffer, size_t size,
			     size_t valid)
{
	size_t dropped = 0;
	uint64_t denied;

	(void)ctx;
	(void)stream;
	if (!buffer)
		return;
	relax_add(&n_completed, 1);
	if (st.f.cuptiActivityGetNumDroppedRecords &&
	    st.f.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) != FP__CUPTI_SUCCESS)
		dropped = 0;
	denied = atomic_load(&st.pool.denied);
	pthread_mutex_lock(&deliver_lock);
	if (valid) {
		read_buffer(buffer, FP_MIN(valid, size));
		capture_buffer(buffer, FP_MIN(valid, size));
	}
	if (dropped) {
		relax_add(&n_cupti_dropped, dropped);
		note_all(dropped, REASON_CUPTI_DROPPED);
	}
	if (denied != st.denied_seen) {
		st.denied_seen = denied;
		note_all(0, REASON_POOL);
	}
	pthread_mutex_unlock(&deliver_lock);
	/* CUPTI was told buffers arrive zeroed: keep the promise for the next use. */
	if (st.zeroed)
		memset(buffer, 0, size);
	fp__cupti_pool_put(&st.pool, buffer);
}

/* ---- loading --------------------------------------------------------------------------------- */

static const char *cupti_error(int rc)
{
	const char *s = NULL;

	if (st.f.cuptiGetResultString && st.f.cuptiGetResultString(rc, &s) == FP__CUPTI_SUCCESS &&
	    s)
		return s;
	return "unknown CUPTI error";
}

static void *sym(void *h, const char *name)
{
	dlerror();
	return dlsym(h, name);
}

/* lock held. */
static int load_cupti(struct fp_diag *diag)
{
	struct fp_cupti_probe_result *r;
	void *h, *p;
	int rc;

	if (st.lib)
		return FP_OK;
	r = fp_malloc(sizeof(*r));
	if (!r)
		return FP_ENOMEM;
	rc = fp_cupti_probe((const char *const *)cfg.extra, cfg.n_extra, r);
	if (rc) {
		rc = fp_diag_set(diag, rc == FP_ENOENT ? FP_ENOTSUP : FP_EVENDOR, 0,
				 "the CUPTI backend cannot run: %s",
				 r->error[0] ? r->error : "libcupti not found");
		fp_free(r);
		return rc;
	}
	FP__LSAN_DISABLE();
	h = dlopen(r->path, RTLD_NOW | RTLD_LOCAL);
	FP__LSAN_ENABLE();
	if (!h) {
		const char *e = dlerror();

		rc = fp_diag_set(diag, FP_EVENDOR, 0, "cannot load %s: %s", r->path,
				 e ? e : "dlopen failed");
		fp_free(r);
		return rc;
	}
	memset(&st.f, 0, sizeof(st.f));
	/* ISO C has no void* -> function pointer conversion; POSIX guarantees the bytes match. */
#define X(req, name, params)                                                                    \
	p = sym(h, #name);                                                                      \
	if (!p && (req)) {                                                                      \
		rc = fp_diag_set(diag, FP_EVENDOR, 0,                                           \
				 "%s has no symbol %s, which the CUPTI backend needs", r->path, \
				 #name);                                                        \
		goto fail_load;                                                                 \
	}                                                                                       \
	memcpy(&st.f.name, &p, sizeof(p));
	FP__CUPTI_FUNCS(X)
#undef X
	rc = st.f.cuptiGetVersion(&st.api_version);
	if (rc != FP__CUPTI_SUCCESS) {
		rc = fp_diag_set(diag, FP_EVENDOR, 0, "cuptiGetVersion() failed in %s: error %d",
				 r->path, rc);
		goto fail_load;
	}
	if (fp__cupti_layout_init(&st.layout, st.api_version)) {
		rc = fp_diag_set(diag, FP_ENOTSUP, 0,
				 "%s is CUPTI API version %" PRIu32
				 ", older than CUDA 11.8's (%u), whose records this backend reads",
				 r->path, st.api_version, FP__CUPTI_API_MIN);
		goto fail_load;
	}
	snprintf(st.path, sizeof(st.path), "%s", r->path);
	st.lib = h;
	fp_free(r);
	return FP_OK;

fail_load:
	memset(&st.f, 0, sizeof(st.f));
	st.api_version = 0;
	FP__LSAN_DISABLE();
	dlclose(h);
	FP__LSAN_ENABLE();
	fp_free(r);
	return rc;
}

/*
 * lock held: the CUDA driver, for the device table and the final synchronize. Without one CUPTI
 * fails with unhelpful errors (CUPTI_ERROR_UNKNOWN from cuptiSubscribe), so start checks here
 * first and says what is missing.
 */
static int load_cuda(struct fp_diag *diag)
{
	const char *why = "";

	if (!st.cu && fp__cu_driver_open(&st.cu, &why) != FP_OK)
		return fp_diag_set(diag, FP_ENOTSUP, 0,
				   "the CUPTI backend cannot run: no usable CUDA driver (%s)", why);
	return FP_OK;
}

static size_t env_size(const char *name, size_t dflt)
{
	const char *v = secure_getenv(name);
	unsigned long long x;
	char *end;

	if (!v || !*v)
		return dflt;
	x = strtoull(v, &end, 0);
	if (*end == 'k' || *end == 'K')
		x <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		x <<= 20, end++;
	return *end || !x || x > SIZE_MAX ? dflt : (size_t)x;
}

/* lock held: the tables, allocated once per process. */
static int make_tables(struct fp_diag *diag)
{
	size_t bsize = cfg.buffer_size ? cfg.buffer_size :
					 env_size("FLAGPRISM_CUPTI_BUFFER_SIZE",
						  FP_CUPTI_DEFAULT_BUFFER_SIZE);
	size_t nbuf = cfg.buffers ? cfg.buffers :
				    env_size("FLAGPRISM_CUPTI_BUFFERS", FP_CUPTI_DEFAULT_BUFFERS);
	int rc;

	if (st.tables)
		return FP_OK;
	bsize = (bsize + 7) & ~(size_t)7;
	if (nbuf > FP_CUPTI_MAX_BUFFERS || bsize < 1024)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "CUPTI activity buffers: %zu of %zu bytes (at most %u buffers "
				   "of at least 1 KiB)",
				   nbuf, bsize, FP_CUPTI_MAX_BUFFERS);
	rc = fp__cupti_corr_init(&st.corr,
				 cfg.corr_slots ? cfg.corr_slots : FP_CUPTI_DEFAULT_CORR_SLOTS);
	if (rc)
		goto fail_corr;
	rc = fp__cupti_md_init(&st.md, MD_SLOTS);
	if (rc)
		goto fail_md;
	rc = fp__cupti_graphs_init(&st.graphs, cfg.graph_nodes ? cfg.graph_nodes :
								 FP_CUPTI_DEFAULT_GRAPH_NODES);
	if (rc)
		goto fail_graphs;
	rc = fp__cupti_pool_init(&st.pool, (unsigned)nbuf, bsize);
	if (rc)
		goto fail_pool;
	rc = fp__cupti_sink->name_intern("CUDA", 4, &st.cuda_name);
	if (!rc)
		rc = fp__cupti_sink->name_intern("<unknown kernel>", 16, &st.unknown_name);
	if (rc)
		goto fail_names;
	st.tables = true;
	return FP_OK;

fail_names:
	fp__cupti_pool_release(&st.pool);
fail_pool:
	fp__cupti_graphs_release(&st.graphs);
fail_graphs:
	fp__cupti_md_release(&st.md);
fail_md:
	fp__cupti_corr_release(&st.corr);
fail_corr:
	return fp_diag_set(diag, rc, 0,
			   "cannot allocate the CUPTI backend's tables (%zu x %zu "
			   "bytes of activity buffers)",
			   nbuf, bsize);
}

/* ---- enabling -------------------------------------------------------------------------------- */

/* lock held. */
static int subscribe(struct fp_diag *diag)
{
	char other[FP__CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = "";
	int rc;

	if (st.f.cuptiSubscribe_v2) {
		struct fp__cupti_subscriber_params p;

		memset(&p, 0, sizeof(p));
		p.structSize = sizeof(p);
		p.subscriberName = "FlagPrism";
		p.oldSubscriberName = other;
		p.oldSubscriberSize = sizeof(other);
		rc = st.f.cuptiSubscribe_v2(&st.sub, api_callback, NULL, &p);
	} else {
		rc = st.f.cuptiSubscribe(&st.sub, api_callback, NULL);
	}
	other[sizeof(other) - 1] = '\0';
	if (rc == FP__CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		if (other[0])
			return fp_diag_set(diag, FP_EBUSY, 0,
					   "another CUPTI subscriber is active in this process: "
					   "\"%s\". CUPTI allows one per process; finish it first "
					   "or profile in a separate process",
					   other);
		return fp_diag_set(diag, FP_EBUSY, 0,
				   "another CUPTI subscriber is active in this process (Proton / "
				   "triton.profiler, torch.profiler, Nsight Systems or Compute, "
				   "cuda-gdb, compute-sanitizer...). CUPTI allows one per process, "
				   "even after it unsubscribes: profile in a separate process");
	}
	if (rc != FP__CUPTI_SUCCESS)
		return fp_diag_set(diag, FP_EVENDOR, 0, "cuptiSubscribe failed: %s (error %d)",
				   cupti_error(rc), rc);
	st.subscribed = true;
	return FP_OK;
}

/* The launch callbacks follow the sessions: on with the first, off after the last. */
static void enable_callbacks(uint32_t on, unsigned *ok_launch)
{
	size_t i;

	*ok_launch = 0;
	for (i = 0; i < FP_ARRAY_SIZE(launch_cbids); i++)
		if (st.f.cuptiEnableCallback(on, st.sub, launch_cbids[i].domain,
					     launch_cbids[i].id) == FP__CUPTI_SUCCESS)
			(*ok_launch)++;
}

/*
 * The graph callbacks stay on from the first start to the end of the process: graphs are built
 * and destroyed rarely, and keeping them on means a graph destroyed between two sessions frees
 * its entries, and one captured between sessions is known (with no context) when replayed.
 */
static void enable_resource_callbacks(uint32_t on)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(resource_cbids); i++)
		st.f.cuptiEnableCallback(on, st.sub, FP__CUPTI_CB_DOMAIN_RESOURCE,
					 resource_cbids[i]);
	st.resource_callbacks = on != 0;
}

/* CUPTI's clock minus ours, from the tightest of a few back-to-back readings. */
static int64_t measure_offset(void)
{
	uint64_t best = UINT64_MAX, a, b, c;
	int64_t off = 0;
	int i;

	for (i = 0; i < 16; i++) {
		a = fp__cupti_sink->clock_ns();
		if (st.f.cuptiGetTimestamp(&c) != FP__CUPTI_SUCCESS)
			return 0;
		b = fp__cupti_sink->clock_ns();
		if (b - a < best) {
			best = b - a;
			off = (int64_t)(c - (a + (b - a) / 2));
		}
	}
	/* With our clock registered, a tiny offset is jitter; a large one means it was ignored. */
	if (st.ts_callback && off > -OFFSET_TRUST_NS && off < OFFSET_TRUST_NS)
		off = 0;
	return off;
}

/*
 * FLAGPRISM_CUPTI_LAUNCH_CALLBACKS=0, for measurement only: kernel records without the launch
 * callbacks, so none is attributed (all land at the root, without estimates, counted as
 * misses). bench/bench_profiler.py's "floor" mode uses it to show what CUPTI's kernel activity
 * alone costs per launch, under every other mode.
 */
static bool floor_only(void)
{
	const char *v = getenv("FLAGPRISM_CUPTI_LAUNCH_CALLBACKS");

	return v && strcmp(v, "0") == 0;
}

/* lock held: the first session opens. */
static int enable(struct fp_diag *diag)
{
	unsigned ok = 0;
	int rc;

	if (!st.subscribed) {
		rc = subscribe(diag);
		if (rc)
			return rc;
	}
	if (!st.callbacks_registered) {
		if (st.f.cuptiActivitySetAttribute) {
			uint8_t one = 1;
			size_t sz = sizeof(one);

			st.zeroed = st.f.cuptiActivitySetAttribute(
					    FP__CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz,
					    &one) == FP__CUPTI_SUCCESS;
		}
		/* Records on the sink's clock: must precede enabling any activity kind. */
		if (st.f.cuptiActivityRegisterTimestampCallback)
			st.ts_callback = st.f.cuptiActivityRegisterTimestampCallback(
						 fp__cupti_sink->clock_ns) == FP__CUPTI_SUCCESS;
		rc = st.f.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
		if (rc != FP__CUPTI_SUCCESS)
			return fp_diag_set(diag, FP_EVENDOR, 0,
					   "cuptiActivityRegisterCallbacks failed: %s (error %d)",
					   cupti_error(rc), rc);
		st.callbacks_registered = true;
	}
	fp__cupti_corr_clear(&st.corr);
	atomic_fetch_add(&enable_gen, 1);
	if (floor_only())
		ok = 1;
	else
		enable_callbacks(1, &ok);
	if (!ok) {
		enable_callbacks(0, &ok);
		return fp_diag_set(
			diag, FP_EVENDOR, 0,
			"CUPTI refused every kernel-launch callback (cuLaunchKernel...)");
	}
	rc = st.f.cuptiActivityEnable(FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (rc != FP__CUPTI_SUCCESS) {
		enable_callbacks(0, &ok);
		return fp_diag_set(
			diag,
			rc == FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? FP_ENOTSUP : FP_EVENDOR, 0,
			"cuptiActivityEnable(CONCURRENT_KERNEL) failed: %s (error %d)",
			cupti_error(rc), rc);
	}
	st.clock_offset = measure_offset();
	if (!st.resource_callbacks)
		enable_resource_callbacks(1);
	atomic_store(&enabled, true);
	return FP_OK;
}

/* lock held: the last session closed. */
static void disable(void)
{
	unsigned ok;

	if (!atomic_load(&enabled))
		return;
	st.f.cuptiActivityDisable(FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	enable_callbacks(0, &ok);
	atomic_store(&enabled, false);
}

/* lock held: Proton's device-table keys, so proton-viewer's util metric works. */
static void device_table(struct fp_sink_session *s)
{
	int n = 0, i;

	if (!st.cu || st.cu->cuDeviceGetCount(&n) != 0)
		return;
	for (i = 0; i < n && i < MAX_DEVICES; i++) {
		int dev, major = 0, minor = 0, v;
		char idx[16], arch[24];

		if (st.cu->cuDeviceGet(&dev, i) != 0)
			continue;
		snprintf(idx, sizeof(idx), "%d", i);
		if (!st.cu->cuDeviceGetAttribute(&major, FP__CU_ATTR_COMPUTE_CAPABILITY_MAJOR,
						 dev) &&
		    !st.cu->cuDeviceGetAttribute(&minor, FP__CU_ATTR_COMPUTE_CAPABILITY_MINOR,
						 dev)) {
			snprintf(arch, sizeof(arch), "%d%d", major, minor);
			s->sink->set_device_str(s, "CUDA", idx, "arch", arch);
		}
		if (!st.cu->cuDeviceGetAttribute(&v, FP__CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, dev))
			s->sink->set_device(s, "CUDA", idx, "bus_width", v);
		if (!st.cu->cuDeviceGetAttribute(&v, FP__CU_ATTR_CLOCK_RATE, dev))
			s->sink->set_device(s, "CUDA", idx, "clock_rate", v);
		if (!st.cu->cuDeviceGetAttribute(&v, FP__CU_ATTR_MEMORY_CLOCK_RATE, dev))
			s->sink->set_device(s, "CUDA", idx, "memory_clock_rate", v);
		if (!st.cu->cuDeviceGetAttribute(&v, FP__CU_ATTR_MULTIPROCESSOR_COUNT, dev))
			s->sink->set_device(s, "CUDA", idx, "num_sms", v);
	}
}

/* ---- the backend ops ------------------------------------------------------------------------- */

static int cupti_start(struct fp_sink_session *s, struct fp_diag *diag)
{
	int rc;

	pthread_mutex_lock(&lock);
	/* One sink table per process: kept at the first start, before any callback is registered,
	 * and never written again (the callbacks read it without a lock). */
	if (!fp__cupti_sink)
		fp__cupti_sink = s->sink;
	rc = load_cupti(diag);
	if (!rc)
		rc = load_cuda(diag);
	if (!rc)
		rc = make_tables(diag);
	if (!rc && st.nsess >= FP_ARRAY_SIZE(st.sess))
		rc = fp_diag_set(diag, FP_ELIMIT, 0, "too many CUPTI sessions");
	if (!rc && !atomic_load(&enabled))
		rc = enable(diag);
	if (!rc) {
		rc = fp__cupti_metrics_start(s, st.lib, st.cu->lib, diag);
		if (rc && !st.nsess)
			disable();
	}
	if (!rc) {
		rc = fp__cupti_pcs_start(s, st.lib, st.cu->lib, diag);
		if (rc) {
			fp__cupti_metrics_stop(s, st.lib);
			if (!st.nsess)
				disable();
		}
	}
	if (!rc) {
		device_table(s);
		pthread_mutex_lock(&deliver_lock);
		st.sess[st.nsess++] = s;
		pthread_mutex_unlock(&deliver_lock);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static int cupti_flush(struct fp_sink_session *s)
{
	fp__cu_context ctx = NULL;
	int rc = FP_OK;

	(void)s;
	pthread_mutex_lock(&lock);
	if (st.lib && atomic_load(&enabled)) {
		/* Records of running kernels would come back without timestamps. */
		if (st.cu && st.cu->cuCtxGetCurrent(&ctx) == 0 && ctx)
			st.cu->cuCtxSynchronize();
		if (st.f.cuptiActivityFlushAll(FP__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) !=
		    FP__CUPTI_SUCCESS)
			rc = FP_EVENDOR;
		/* after the kernel records: their nodes are known now */
		if (fp__cupti_pcs_flush(s) != FP_OK && !rc)
			rc = FP_EVENDOR;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static int cupti_stop(struct fp_sink_session *s)
{
	size_t i;
	int rc = FP_ENOENT;

	pthread_mutex_lock(&lock);
	pthread_mutex_lock(&deliver_lock);
	for (i = 0; i < st.nsess; i++) {
		if (st.sess[i] == s) {
			st.sess[i] = st.sess[--st.nsess];
			rc = FP_OK;
			break;
		}
	}
	pthread_mutex_unlock(&deliver_lock);
	if (!rc) {
		fp__cupti_metrics_stop(s, st.lib);
		fp__cupti_pcs_stop(s);
	}
	if (!st.nsess)
		disable();
	pthread_mutex_unlock(&lock);
	return rc;
}

static const struct fp_backend_ops cupti_ops = {
	.name = FP_CUPTI_BACKEND,
	.version = "1",
	.start = cupti_start,
	.stop = cupti_stop,
	.flush = cupti_flush,
};

const struct fp_backend_ops *fp_backend_cupti(void)
{
	return &cupti_ops;
}

int fp_cupti_register(void)
{
	int rc = fp_backend_register(&cupti_ops);

	return rc == FP_EBUSY && fp_backend_find(FP_CUPTI_BACKEND) == &cupti_ops ? FP_OK : rc;
}

/* ---- configuration and counters -------------------------------------------------------------- */

static void config_clear_dirs(void)
{
	size_t i;

	for (i = 0; i < cfg.n_extra; i++)
		fp_free(cfg.extra[i]);
	cfg.n_extra = 0;
}

int fp_cupti_configure(const struct fp_cupti_config *c)
{
	size_t i;
	int rc = FP_OK;

	if (!c || (c->n_extra && !c->extra_dirs) || c->n_extra > MAX_EXTRA_DIRS ||
	    c->buffers > FP_CUPTI_MAX_BUFFERS || (c->buffer_size && c->buffer_size < 1024) ||
	    (c->corr_slots && (c->corr_slots < 2 || (c->corr_slots & (c->corr_slots - 1)))))
		return FP_EINVAL;
	pthread_mutex_lock(&lock);
	if (st.tables) {
		pthread_mutex_unlock(&lock);
		return FP_ESTATE;
	}
	config_clear_dirs();
	for (i = 0; i < c->n_extra; i++) {
		if (!c->extra_dirs[i])
			continue;
		cfg.extra[cfg.n_extra] = fp_strdup(c->extra_dirs[i]);
		if (!cfg.extra[cfg.n_extra]) {
			config_clear_dirs();
			rc = FP_ENOMEM;
			break;
		}
		cfg.n_extra++;
	}
	if (!rc) {
		cfg.buffer_size = c->buffer_size;
		cfg.buffers = c->buffers;
		cfg.corr_slots = c->corr_slots;
		cfg.graph_nodes = c->graph_nodes;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int fp_cupti_get_stats(struct fp_cupti_stats *out)
{
	if (!out)
		return FP_EINVAL;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&lock);
	out->loaded = st.lib != NULL;
	out->subscribed = st.subscribed;
	out->enabled = atomic_load(&enabled);
	out->api_version = st.api_version;
	pthread_mutex_lock(&deliver_lock);
	out->sessions = (unsigned)st.nsess;
	pthread_mutex_unlock(&deliver_lock);
	out->kernels = atomic_load(&n_kernels);
	out->misses = atomic_load(&n_misses);
	out->no_timing = atomic_load(&n_no_timing);
	out->cupti_dropped = atomic_load(&n_cupti_dropped);
	out->buffers_completed = atomic_load(&n_completed);
	out->graph_unknown = atomic_load(&n_graph_unknown);
	out->md_lost = atomic_load(&n_md_lost);
	out->other_records = atomic_load(&n_other);
	out->bad_buffers = atomic_load(&n_bad);
	out->orphaned = atomic_load(&n_orphaned);
	if (st.tables) {
		out->buffers_denied = atomic_load(&st.pool.denied);
		out->corr_collisions = atomic_load(&st.corr.collisions);
		out->graph_nodes = fp__cupti_graphs_count(&st.graphs);
		pthread_mutex_lock(&st.graphs.lock);
		out->graph_untracked = st.graphs.untracked;
		pthread_mutex_unlock(&st.graphs.lock);
	}
	out->clock_offset_ns = st.clock_offset;
	snprintf(out->path, sizeof(out->path), "%s", st.path);
	pthread_mutex_unlock(&lock);
	return FP_OK;
}

int fp_cupti_capture(const char *dir, uint64_t max_bytes, struct fp_diag *diag)
{
	char probe[FP_CUPTI_PATH_MAX + CAPTURE_NAME_MAX];
	struct stat sb;
	size_t len;
	int rc, err;

	if (!dir || !*dir) {
		pthread_mutex_lock(&deliver_lock);
		capture.on = capture.s.active = false;
		pthread_mutex_unlock(&deliver_lock);
		return FP_OK;
	}
	len = strlen(dir);
	if (!max_bytes)
		return fp_diag_set(diag, FP_EINVAL, 0, "capture into %s: the byte cap is 0", dir);
	if (len >= FP_CUPTI_PATH_MAX)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "capture directory %.64s...: the path is %zu bytes, longer than "
				   "the %d allowed",
				   dir, len, FP_CUPTI_PATH_MAX - 1);
	err = stat(dir, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
	if (err)
		return fp_diag_set(diag, FP_EIO, 0, "capture directory %s: %s (%s)", dir,
				   strerror(err), fp_errno_name(err));
	/* the longest name a capture file can have: a file can be created there now */
	snprintf(probe, sizeof(probe), "%s/cupti-%" PRIu32 "-%ld-%" PRIu64 ".rec", dir, UINT32_MAX,
		 (long)getpid(), UINT64_MAX);
	rc = fp_outfile_check(probe, diag);
	if (rc)
		return rc;
	pthread_mutex_lock(&deliver_lock);
	memset(&capture.s, 0, sizeof(capture.s));
	memcpy(capture.s.dir, dir, len + 1);
	capture.s.max_bytes = max_bytes;
	capture.on = capture.s.active = true;
	pthread_mutex_unlock(&deliver_lock);
	return FP_OK;
}

int fp_cupti_capture_get_stats(struct fp_cupti_capture_stats *out)
{
	if (!out)
		return FP_EINVAL;
	pthread_mutex_lock(&deliver_lock);
	*out = capture.s;
	pthread_mutex_unlock(&deliver_lock);
	return FP_OK;
}

void fp__cupti_reset(void)
{
	pthread_mutex_lock(&lock);
	fp__cupti_metrics_reset();
	fp__cupti_pcs_reset();
	fp__cupti_kest_reset();
	if (st.lib) {
		disable();
		if (st.resource_callbacks)
			enable_resource_callbacks(0);
		if (st.subscribed)
			st.f.cuptiUnsubscribe(st.sub);
		FP__LSAN_DISABLE();
		dlclose(st.lib);
		FP__LSAN_ENABLE();
	}
	fp__cu_driver_reset();
	if (st.tables) {
		fp__cupti_pool_release(&st.pool);
		fp__cupti_graphs_release(&st.graphs);
		fp__cupti_md_release(&st.md);
		fp__cupti_corr_release(&st.corr);
	}
	pthread_mutex_lock(&deliver_lock);
	memset(&st, 0, sizeof(st));
	memset(&capture, 0, sizeof(capture));
	pthread_mutex_unlock(&deliver_lock);
	config_clear_dirs();
	memset(&cfg, 0, sizeof(cfg));
	atomic_store(&enabled, false);
	atomic_store(&n_kernels, 0);
	atomic_store(&n_misses, 0);
	atomic_store(&n_no_timing, 0);
	atomic_store(&n_cupti_dropped, 0);
	atomic_store(&n_completed, 0);
	atomic_store(&n_graph_unknown, 0);
	atomic_store(&n_md_lost, 0);
	atomic_store(&n_other, 0);
	atomic_store(&n_bad, 0);
	atomic_store(&n_orphaned, 0);
	memset(&tls, 0, sizeof(tls));
	pthread_mutex_unlock(&lock);
}
