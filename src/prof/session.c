/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profiling sessions: the registry of open sessions, per-thread scope stacks and states, launch
 * contexts awaiting their device events, event intake into the call tree and the timeline, and
 * finalization (backend stop, files, metadata). Writers and backends live in their own files.
 *
 * Locking: the registry lock, then a session's lock, then the names lock (names.c); never the
 * other way round. Calls for FP_PROF_ALL hold the registry lock while they visit the sessions,
 * so a session cannot be freed under them; a backend that holds a session pointer may use it
 * until its stop callback returns.
 */
#include "fp-setup.h"

#include <stdatomic.h>
#include <time.h>

#include <flagprism/outfile.h>
#include <flagprism/strbuf.h>

#include "core/seqtab.h"
#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fp_prof_session *sessions[FP_PROF_MAX_SESSIONS];
static int next_session_id;
static size_t next_slot; /* round robin: a slot's bit is reused as late as possible */
static _Atomic uint64_t active_mask;
static _Thread_local uint32_t internal_depth;
static atomic_uint_fast64_t next_correlation = 1;
static atomic_uint next_thread_index;
static _Thread_local uint32_t thread_index;

static const char *const metric_names[FP__M_COUNT_SLOTS] = {
	[FP__M_TIME] = "time (ns)",      [FP__M_COUNT] = "count",
	[FP__M_DEVICE_ID] = "device_id", [FP__M_DEVICE_TYPE] = "device_type",
	[FP__M_FLOPS8] = "flops8",       [FP__M_FLOPS16] = "flops16",
	[FP__M_FLOPS32] = "flops32",     [FP__M_FLOPS64] = "flops64",
	[FP__M_BYTES] = "bytes",         [FP__M_EST_BYTES] = "est_bytes",
	[FP__M_EST_FLOPS] = "est_flops", [FP__M_CPU_TIME] = "cpu_time (ns)(exc)",
};

_Static_assert(sizeof(struct fp_sink_event) == 128, "fp_sink_event is part of the backend ABI");

/* ---- clocks and ids ------------------------------------------------------------------------ */

uint64_t fp_prof_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t fp__prof_thread_index(void)
{
	if (!thread_index)
		thread_index = (uint32_t)atomic_fetch_add(&next_thread_index, 1) + 1;
	return thread_index;
}

uint64_t fp_prof_correlation_next(void)
{
	return (uint64_t)atomic_fetch_add(&next_correlation, 1);
}

/* ---- session lifecycle ---------------------------------------------------------------------- */

static void session_free(struct fp_prof_session *s)
{
	size_t i;

	if (!s)
		return;
	fp_calltree_free(s->tree);
	fp_hashmap_release(&s->name_map);
	fp_hashmap_release(&s->callpath_map);
	fp_hashmap_release(&s->note_map);
	fp_hashmap_release(&s->thread_map);
	fp_hashmap_release(&s->pending_map);
	for (i = 0; i < s->nthreads; i++) {
		fp_free(s->threads[i]->stack);
		fp_free(s->threads[i]);
	}
	fp_free(s->threads);
	fp_free(s->pending);
	fp_free(s->pending_free);
	for (i = 0; i < (s->ntrace + FP__TRACE_CHUNK - 1) >> FP__TRACE_CHUNK_SHIFT; i++)
		fp_free(s->trace_chunks[i]);
	fp_free(s->trace_chunks);
	for (i = 0; i < s->ndrop_reasons; i++)
		fp_free(s->drop_reasons[i]);
	for (i = 0; i < s->nenv; i++) {
		fp_free(s->env_keys[i]);
		fp_free(s->env_values[i]);
	}
	fp__prof_tl_release(s);
	fp__prof_comm_release(s);
	fp__prof_rank_release(s);
	fp_free(s->name);
	fp_free(s->hook);
	pthread_mutex_destroy(&s->lock);
	fp_free(s);
}

static int session_new(const struct fp_prof_options *opt, struct fp_prof_session **out,
		       struct fp_diag *diag)
{
	static const struct fp_prof_options defaults;
	const struct fp_backend_ops *backend;
	struct fp_prof_session *s;
	const char *bname;
	size_t i;

	if (!opt)
		opt = &defaults;
	if ((unsigned)opt->context > FP_PROF_CONTEXT_PYTHON)
		return fp_diag_set(diag, FP_EINVAL, 0, "unknown context %d (shadow or python)",
				   (int)opt->context);
	if ((unsigned)opt->data > FP_PROF_DATA_TRACE)
		return fp_diag_set(diag, FP_EINVAL, 0, "unknown data kind %d (tree or trace)",
				   (int)opt->data);
	bname = opt->backend && *opt->backend ? opt->backend : "host";
	backend = fp_backend_find(bname);
	if (!backend)
		return fp_diag_set(diag, FP_ENOENT, 0, "unknown profiler backend '%s'", bname);

	s = fp_calloc(1, sizeof(*s));
	if (!s)
		return FP_ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	fp_hashmap_init(&s->name_map);
	fp_hashmap_init(&s->callpath_map);
	fp_hashmap_init(&s->note_map);
	fp_hashmap_init(&s->thread_map);
	fp_hashmap_init(&s->pending_map);
	s->opt = *opt;
	s->backend = backend;
	s->opt.backend = backend->name;
	s->sink.sink = fp_prof_sink();
	s->name = fp_strdup(opt->name && *opt->name ? opt->name : FP_PROF_DEFAULT_NAME);
	if (!s->name)
		goto fail;
	s->opt.name = s->name;
	if (opt->hook) {
		s->hook = fp_strdup(opt->hook);
		if (!s->hook)
			goto fail;
	}
	s->opt.hook = s->hook;
	if (!s->opt.max_trace_events)
		s->opt.max_trace_events = FP_PROF_DEFAULT_MAX_TRACE;
	if (!s->opt.max_pending_launches)
		s->opt.max_pending_launches = FP_PROF_DEFAULT_MAX_PENDING;
	if (!s->opt.max_scope_depth)
		s->opt.max_scope_depth = FP_PROF_DEFAULT_MAX_SCOPE_DEPTH;
	if (!s->opt.max_threads)
		s->opt.max_threads = FP_PROF_DEFAULT_MAX_THREADS;
	s->tree = fp_calltree_new(&s->opt.tree);
	if (!s->tree)
		goto fail;
	for (i = 0; i < FP__M_COUNT_SLOTS; i++)
		s->metric[i] = FP_CALLTREE_NONE;
	s->origin_ns = fp_prof_clock_ns();
	s->origin_unix_ns = unix_ns();
	*out = s;
	return FP_OK;

fail:
	session_free(s);
	return FP_ENOMEM;
}

/*
 * Whether the session's files can be written, checked before anything runs: the directory of
 * `name` takes a new file and the longest file name (name plus the longest writer suffix) fits
 * the file system. A failure at finalize would otherwise come after the whole program ran.
 */
static int check_outputs(const char *name, struct fp_diag *diag)
{
	const char *longest = "";
	struct fp_strbuf path;
	size_t i;
	int rc;

	for (i = 0; fp_prof_writer_at(i); i++)
		if (strlen(fp_prof_writer_at(i)->suffix) > strlen(longest))
			longest = fp_prof_writer_at(i)->suffix;
	fp_strbuf_init(&path, 0);
	rc = fp_strbuf_addstr(&path, name);
	if (!rc)
		rc = fp_strbuf_addstr(&path, longest);
	if (rc) {
		fp_strbuf_release(&path);
		return fp_diag_set(diag, rc, 0, "out of memory");
	}
	rc = fp_outfile_check(path.buf, diag);
	fp_strbuf_release(&path);
	return rc;
}

/* Registry lock held. */
static struct fp_prof_session *find_locked(int id)
{
	size_t i;

	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] && sessions[i]->id == id)
			return sessions[i];
	return NULL;
}

int fp_prof_start(const struct fp_prof_options *opt, int *session, struct fp_diag *diag)
{
	struct fp_prof_session *s = NULL;
	size_t i = 0, n;
	int rc;

	if (!session)
		return FP_EINVAL;
	rc = session_new(opt, &s, diag);
	if (rc)
		return rc;
	rc = check_outputs(s->name, diag);
	if (rc) {
		session_free(s);
		return rc;
	}
	/* Registered inactive first, so the backend's start can already address it by id. */
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++) {
		if (sessions[i] && !strcmp(sessions[i]->name, s->name)) {
			int other = sessions[i]->id;

			pthread_mutex_unlock(&reg_lock);
			session_free(s);
			return fp_diag_set(
				diag, FP_EBUSY, 0,
				"profiling session %d already writes '%.120s': finalize it "
				"first or give this session another name",
				other,
				opt && opt->name && *opt->name ? opt->name : FP_PROF_DEFAULT_NAME);
		}
	}
	for (n = 0; n < FP_PROF_MAX_SESSIONS; n++) {
		i = (next_slot + n) % FP_PROF_MAX_SESSIONS;
		if (!sessions[i])
			break;
	}
	if (n == FP_PROF_MAX_SESSIONS) {
		pthread_mutex_unlock(&reg_lock);
		session_free(s);
		return fp_diag_set(diag, FP_ELIMIT, 0, "%d profiling sessions are already open",
				   FP_PROF_MAX_SESSIONS);
	}
	s->id = next_session_id++;
	s->slot = (int)i;
	next_slot = i + 1;
	s->finalizing = true; /* not visible to FP_PROF_ALL callers until started */
	sessions[i] = s;
	pthread_mutex_unlock(&reg_lock);
	/* backends deliver through the sink; the host backend finds it in the registry */
	fp_backend_set_sink(fp_prof_sink());

	rc = s->backend->start(&s->sink, diag);
	pthread_mutex_lock(&reg_lock);
	if (rc) {
		sessions[i] = NULL;
		pthread_mutex_unlock(&reg_lock);
		session_free(s);
		return rc;
	}
	pthread_mutex_lock(&s->lock);
	s->finalizing = false;
	s->active = true;
	atomic_fetch_or(&active_mask, (uint64_t)1 << s->slot);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&reg_lock);
	*session = s->id;
	return FP_OK;
}

struct fp_prof_session *fp_prof_session_get(int id)
{
	struct fp_prof_session *s;

	pthread_mutex_lock(&reg_lock);
	s = find_locked(id);
	pthread_mutex_unlock(&reg_lock);
	return s;
}

int fp_prof_session_id(const struct fp_prof_session *s)
{
	return s ? s->id : -1;
}

const char *fp_prof_session_name(const struct fp_prof_session *s)
{
	return s ? s->name : NULL;
}

bool fp_prof_session_active(const struct fp_prof_session *s)
{
	return s && s->active;
}

const struct fp_backend_ops *fp_prof_session_backend(const struct fp_prof_session *s)
{
	return s ? s->backend : NULL;
}

struct fp_sink_session *fp_prof_session_sink(struct fp_prof_session *s)
{
	return s ? &s->sink : NULL;
}

struct fp_calltree *fp_prof_session_tree(struct fp_prof_session *s)
{
	return s ? s->tree : NULL;
}

size_t fp_prof_session_count(void)
{
	size_t i, n = 0;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		n += sessions[i] != NULL;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/*
 * Run fn on one session or on every open session (FP_PROF_ALL), each under its lock. Returns
 * FP_ENOENT for an unknown id, else the first error fn returned.
 */
typedef int (*sess_fn)(struct fp_prof_session *s, void *arg);

static int for_sessions(int id, sess_fn fn, void *arg)
{
	size_t i;
	int rc = FP_OK;

	pthread_mutex_lock(&reg_lock);
	if (id == FP_PROF_ALL) {
		for (i = 0; i < FP_PROF_MAX_SESSIONS; i++) {
			struct fp_prof_session *s = sessions[i];
			int r;

			if (!s)
				continue;
			pthread_mutex_lock(&s->lock);
			r = fn(s, arg);
			pthread_mutex_unlock(&s->lock);
			if (r && !rc)
				rc = r;
		}
	} else {
		struct fp_prof_session *s = find_locked(id);

		if (!s) {
			rc = FP_ENOENT;
		} else {
			pthread_mutex_lock(&s->lock);
			rc = fn(s, arg);
			pthread_mutex_unlock(&s->lock);
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

static void lctx_refresh(void);
static void lctx_release(void);

static int set_active(struct fp_prof_session *s, void *arg)
{
	if (s->finalizing)
		return FP_OK;
	s->active = *(bool *)arg;
	if (s->active)
		atomic_fetch_or(&active_mask, (uint64_t)1 << s->slot);
	else
		atomic_fetch_and(&active_mask, ~((uint64_t)1 << s->slot));
	return FP_OK;
}

uint64_t fp_prof_active_mask(void)
{
	return atomic_load_explicit(&active_mask, memory_order_relaxed);
}

int fp_prof_session_slot(const struct fp_prof_session *s)
{
	return s ? s->slot : -1;
}

#define INTERNAL_MAX ((uint32_t)1 << 20)

int fp_prof_internal_mark(int delta)
{
	int64_t d = (int64_t)internal_depth + delta;

	if (d < 0 || d > INTERNAL_MAX)
		return FP_EINVAL;
	internal_depth = (uint32_t)d;
	return (int)d;
}

uint32_t fp_prof_internal_depth(void)
{
	return internal_depth;
}

void fp_prof_launch_state_now(struct fp_sink_launch_state *out)
{
	out->active = atomic_load_explicit(&active_mask, memory_order_relaxed);
	out->internal = internal_depth;
	out->known = 1;
}

int fp_prof_activate(int session)
{
	bool on = true;

	return for_sessions(session, set_active, &on);
}

int fp_prof_deactivate(int session)
{
	bool on = false;

	return for_sessions(session, set_active, &on);
}

/* ---- tree helpers (session lock held) ------------------------------------------------------- */

static int sess_metric(struct fp_prof_session *s, int slot, uint32_t *id)
{
	int rc;

	if (s->metric[slot] != FP_CALLTREE_NONE) {
		*id = s->metric[slot];
		return FP_OK;
	}
	rc = fp_calltree_metric_auto(s->tree, metric_names[slot], strlen(metric_names[slot]),
				     &s->metric[slot]);
	if (rc) {
		s->metric[slot] = FP_CALLTREE_NONE;
		return rc;
	}
	*id = s->metric[slot];
	return FP_OK;
}

/* The tree frame of a process-wide name id. */
static int sess_frame(struct fp_prof_session *s, uint32_t name, uint32_t *frame)
{
	uint64_t v;
	const char *str;
	size_t len;
	int rc;

	if (fp_hashmap_get(&s->name_map, name, &v)) {
		*frame = (uint32_t)v;
		return FP_OK;
	}
	str = fp_prof_name_str(name, &len);
	if (!str)
		return FP_EINVAL;
	rc = fp_calltree_intern(s->tree, str, len, frame);
	if (rc)
		return rc;
	return fp_hashmap_put(&s->name_map, name, *frame);
}

/*
 * The node base / call-path frames (base: ROOT, or the innermost scope in context "python",
 * where a launch is filed under ROOT / scopes... / call path... / [state] / kernel, so that a
 * scope's own metrics sit above the kernels launched inside it). Cached per (base, call
 * path): a ROOT base keys by the call path alone, any other by (base + 1) << 32 | call path.
 */
static int sess_callpath_node(struct fp_prof_session *s, uint32_t base, uint32_t callpath,
			      uint32_t *node)
{
	uint32_t small[64], *ids = small, cur = base;
	uint64_t key = base == FP_CALLTREE_ROOT ? callpath :
						  ((uint64_t)base + 1) << 32 | callpath;
	size_t n, i;
	uint64_t v;
	int rc = FP_OK;

	if (fp_hashmap_get(&s->callpath_map, key, &v)) {
		*node = (uint32_t)v;
		return FP_OK;
	}
	/* An unknown id is refused rather than filed somewhere plausible. */
	rc = fp__prof_callpath_get(callpath, small, FP_ARRAY_SIZE(small), &n);
	if (rc)
		return rc;
	if (n > FP_ARRAY_SIZE(small)) {
		ids = fp_reallocarray(NULL, n, sizeof(*ids));
		if (!ids)
			return FP_ENOMEM;
		rc = fp__prof_callpath_get(callpath, ids, n, &n);
	}
	for (i = 0; !rc && i < n; i++) {
		uint32_t frame;

		rc = sess_frame(s, ids[i], &frame);
		if (!rc)
			rc = fp_calltree_child(s->tree, cur, frame, &cur);
	}
	if (ids != small)
		fp_free(ids);
	if (rc)
		return rc;
	rc = fp_hashmap_put(&s->callpath_map, key, cur);
	if (rc)
		return rc;
	*node = cur;
	return FP_OK;
}

static struct fp__prof_thread *sess_thread_find(struct fp_prof_session *s)
{
	uint64_t v;

	if (!fp_hashmap_get(&s->thread_map, fp__prof_thread_index(), &v))
		return NULL;
	return s->threads[v];
}

static int sess_thread(struct fp_prof_session *s, struct fp__prof_thread **out)
{
	struct fp__prof_thread *th = sess_thread_find(s);
	int rc;

	if (th) {
		*out = th;
		return FP_OK;
	}
	if (s->nthreads >= s->opt.max_threads)
		return FP_ELIMIT;
	if (s->nthreads == s->threads_alloc) {
		size_t na = s->threads_alloc ? s->threads_alloc * 2 : 8;
		struct fp__prof_thread **nt = fp_reallocarray(s->threads, na, sizeof(*nt));

		if (!nt)
			return FP_ENOMEM;
		s->threads = nt;
		s->threads_alloc = na;
	}
	th = fp_calloc(1, sizeof(*th));
	if (!th)
		return FP_ENOMEM;
	th->tid = fp__prof_thread_index();
	th->state_frame = FP_CALLTREE_NONE;
	rc = fp_hashmap_put(&s->thread_map, th->tid, s->nthreads);
	if (rc) {
		fp_free(th);
		return rc;
	}
	s->threads[s->nthreads++] = th;
	*out = th;
	return FP_OK;
}

/*
 * The kernel node below `base`. A mangled C++ name (PyTorch's, cuBLAS's kernels) is filed under
 * its full demangled form, and a new node keeps the mangled one as its string property
 * "mangled_name" (readers show a short form of the name; include/flagprism/demangle.h).
 */
static int sess_kernel_node(struct fp_prof_session *s, uint32_t base, uint32_t kernel,
			    uint32_t *node)
{
	uint32_t display = fp__prof_kernel_display(kernel), frame, m;
	size_t before = fp_calltree_node_count(s->tree), len;
	const char *mangled;
	int rc = sess_frame(s, display, &frame);

	if (!rc)
		rc = fp_calltree_child(s->tree, base, frame, node);
	if (rc || display == kernel || fp_calltree_node_count(s->tree) == before)
		return rc;
	mangled = fp_prof_name_str(kernel, &len);
	if (!mangled)
		return FP_OK;
	rc = fp_calltree_metric(s->tree, "mangled_name", 12, FP_METRIC_PROPERTY, &m);
	return rc ? rc : fp_calltree_set_string(s->tree, *node, m, mangled, len);
}

/* The node a launch on the calling thread belongs to. */
static int sess_launch_node(struct fp_prof_session *s, const struct fp_sink_launch *l,
			    bool use_thread, uint32_t *node)
{
	struct fp__prof_thread *th = use_thread ? sess_thread_find(s) : NULL;
	uint32_t base = FP_CALLTREE_ROOT;
	int rc;

	if (th && th->depth)
		base = th->stack[th->depth - 1].node;
	if (s->opt.context == FP_PROF_CONTEXT_PYTHON && l->callpath != FP_PROF_NO_CALLPATH) {
		rc = sess_callpath_node(s, base, l->callpath, &base);
		if (rc)
			return rc;
	}
	if (th && th->state_frame != FP_CALLTREE_NONE) {
		rc = fp_calltree_child(s->tree, base, th->state_frame, &base);
		if (rc)
			return rc;
	}
	rc = fp__prof_comm_base(s, l->kernel, base, &base);
	if (rc)
		return rc;
	return sess_kernel_node(s, base, l->kernel, node);
}

static int trace_add(struct fp_prof_session *s, const struct fp__trace_rec *r)
{
	size_t chunk = s->ntrace >> FP__TRACE_CHUNK_SHIFT;

	if (s->ntrace >= s->opt.max_trace_events) {
		s->st.dropped_trace++;
		return FP_OK;
	}
	if ((s->ntrace & (FP__TRACE_CHUNK - 1)) == 0) {
		struct fp__trace_rec *block;

		if (chunk == s->trace_chunks_alloc) {
			size_t na = s->trace_chunks_alloc ? s->trace_chunks_alloc * 2 : 16;
			struct fp__trace_rec **nc =
				fp_reallocarray(s->trace_chunks, na, sizeof(*nc));

			if (!nc)
				return FP_ENOMEM;
			s->trace_chunks = nc;
			s->trace_chunks_alloc = na;
		}
		block = fp_reallocarray(NULL, FP__TRACE_CHUNK, sizeof(*block));
		if (!block)
			return FP_ENOMEM;
		s->trace_chunks[chunk] = block;
	}
	*fp__trace_at(s, s->ntrace++) = *r;
	if (r->begin < s->origin_ns)
		s->st.clamped_timestamps++;
	s->st.trace_records++;
	return FP_OK;
}

int fp__prof_launch_node(struct fp_prof_session *s, const struct fp_sink_launch *l, uint32_t *node)
{
	return sess_launch_node(s, l, true, node);
}

int fp__prof_trace_add(struct fp_prof_session *s, const struct fp__trace_rec *r)
{
	return trace_add(s, r);
}

int fp__prof_for_sessions(int id, int (*fn)(struct fp_prof_session *s, void *arg), void *arg)
{
	return for_sessions(id, fn, arg);
}

/* ---- kernel intake (session lock held) -------------------------------------------------------- */

static void merge_md(struct fp_sink_metadata *dst, const struct fp_sink_metadata *src)
{
	const uint32_t miss = src->flags & ~dst->flags;

	if (miss & FP_SINK_MD_FLOPS8)
		dst->flops8 = src->flops8;
	if (miss & FP_SINK_MD_FLOPS16)
		dst->flops16 = src->flops16;
	if (miss & FP_SINK_MD_FLOPS32)
		dst->flops32 = src->flops32;
	if (miss & FP_SINK_MD_FLOPS64)
		dst->flops64 = src->flops64;
	if (miss & FP_SINK_MD_BYTES)
		dst->bytes = src->bytes;
	if (miss & FP_SINK_MD_EST_BYTES)
		dst->est_bytes = src->est_bytes;
	if (miss & FP_SINK_MD_EST_FLOPS)
		dst->est_flops = src->est_flops;
	dst->flags |= miss;
}

static int add_slot(struct fp_prof_session *s, uint32_t node, int slot, double v)
{
	uint32_t m;
	int rc = sess_metric(s, slot, &m);

	return rc ? rc : fp_calltree_add_metric(s->tree, node, m, v);
}

/* Whether `hay` holds `needle` between " | " separators (or is it). */
static bool contains(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	size_t i;

	for (i = 0; i + nlen <= hlen; i++) {
		if (memcmp(hay + i, needle, nlen))
			continue;
		if ((i == 0 || (i >= 3 && !memcmp(hay + i - 3, " | ", 3))) &&
		    (i + nlen == hlen || (i + nlen + 3 <= hlen && !memcmp(hay + i + nlen, " | ", 3))))
			return true;
	}
	return false;
}

#define NOTE_VALUE_MAX 1024 /* bytes of one property made from notes (several are joined) */

/*
 * The note of the launch's call path as string properties of its kernel node, once per (node,
 * note). A node that launches with different notes (kernels of one name from two compiled
 * graphs, merged in shadow context) gets every distinct value, joined with " | " up to
 * NOTE_VALUE_MAX bytes and "..." past it, never just one of them.
 */
static int apply_note(struct fp_prof_session *s, uint32_t node, uint32_t callpath)
{
	uint32_t note = fp__prof_callpath_note_id(callpath), m;
	struct fp_calltree_value old;
	const char *text, *p, *end;
	struct fp_strbuf sb;
	size_t len;
	uint64_t v;
	int rc = FP_OK;

	if (note == FP_PROF_NO_NAME)
		return FP_OK;
	if (fp_hashmap_get(&s->note_map, node, &v) && v == note)
		return FP_OK;
	text = fp_prof_name_str(note, &len);
	if (!text)
		return FP_OK;
	fp_strbuf_init(&sb, NOTE_VALUE_MAX + 8);
	for (p = text, end = text + len; !rc && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *tab;
		size_t line = nl ? (size_t)(nl - p) : (size_t)(end - p);

		tab = memchr(p, '\t', line);
		if (tab && tab > p) {
			const char *val = tab + 1;
			size_t vlen = line - (size_t)(val - p);

			rc = fp_calltree_metric(s->tree, p, (size_t)(tab - p), FP_METRIC_PROPERTY,
						&m);
			if (rc == FP_EINVAL) {
				rc = FP_OK; /* a numeric metric of that name exists: keep it */
			} else if (!rc) {
				fp_strbuf_reset(&sb);
				if (!fp_calltree_get(s->tree, node, m, &old) && old.is_string &&
				    !(old.str_len == vlen && !memcmp(old.str, val, vlen))) {
					/* another value already: keep both */
					if (contains(old.str, old.str_len, val, vlen))
						goto next;
					if (fp_strbuf_add(&sb, old.str, old.str_len) ||
					    fp_strbuf_addstr(&sb, " | "))
						rc = FP_ENOMEM;
				}
				if (!rc && sb.len + vlen > NOTE_VALUE_MAX) {
					if (fp_strbuf_add(&sb, val,
							  NOTE_VALUE_MAX > sb.len ?
								  NOTE_VALUE_MAX - sb.len :
								  0) ||
					    fp_strbuf_addstr(&sb, "..."))
						rc = FP_ENOMEM;
				} else if (!rc && fp_strbuf_add(&sb, val, vlen)) {
					rc = FP_ENOMEM;
				}
				if (!rc)
					rc = fp_calltree_set_string(s->tree, node, m, sb.buf, sb.len);
			}
		}
next:
		p += line + 1;
	}
	fp_strbuf_release(&sb);
	if (!rc)
		rc = fp_hashmap_put(&s->note_map, node, note);
	return rc;
}

static int record_kernel(struct fp_prof_session *s, uint32_t node, const struct fp_sink_event *ev,
			 const struct fp_sink_metadata *md)
{
	static const struct {
		uint32_t flag;
		int slot;
		size_t off;
	} mdf[] = {
		{FP_SINK_MD_FLOPS8, FP__M_FLOPS8, offsetof(struct fp_sink_metadata, flops8)},
		{FP_SINK_MD_FLOPS16, FP__M_FLOPS16, offsetof(struct fp_sink_metadata, flops16)},
		{FP_SINK_MD_FLOPS32, FP__M_FLOPS32, offsetof(struct fp_sink_metadata, flops32)},
		{FP_SINK_MD_FLOPS64, FP__M_FLOPS64, offsetof(struct fp_sink_metadata, flops64)},
		{FP_SINK_MD_BYTES, FP__M_BYTES, offsetof(struct fp_sink_metadata, bytes)},
		{FP_SINK_MD_EST_BYTES, FP__M_EST_BYTES,
		 offsetof(struct fp_sink_metadata, est_bytes)},
		{FP_SINK_MD_EST_FLOPS, FP__M_EST_FLOPS,
		 offsetof(struct fp_sink_metadata, est_flops)},
	};
	char dev[16];
	uint32_t m;
	size_t i;
	int rc;

	rc = add_slot(s, node, FP__M_TIME,
		      ev->end_ns >= ev->begin_ns ? (double)(ev->end_ns - ev->begin_ns) : 0);
	if (!rc)
		rc = add_slot(s, node, FP__M_COUNT, 1);
	if (!rc)
		rc = sess_metric(s, FP__M_DEVICE_ID, &m);
	if (!rc) {
		int k = snprintf(dev, sizeof(dev), "%" PRIu32, ev->device_id);

		rc = fp_calltree_set_string(s->tree, node, m, dev, (size_t)k);
	}
	if (!rc && ev->device_type != FP_PROF_NO_NAME) {
		size_t len;
		const char *type = fp_prof_name_str(ev->device_type, &len);

		if (type) {
			rc = sess_metric(s, FP__M_DEVICE_TYPE, &m);
			if (!rc)
				rc = fp_calltree_set_string(s->tree, node, m, type, len);
		}
	}
	if (!rc && ev->callpath != FP_PROF_NO_CALLPATH)
		rc = apply_note(s, node, ev->callpath);
	for (i = 0; !rc && i < FP_ARRAY_SIZE(mdf); i++) {
		double v;

		if (!(md->flags & mdf[i].flag))
			continue;
		memcpy(&v, (const char *)md + mdf[i].off, sizeof(v));
		rc = add_slot(s, node, mdf[i].slot, v);
	}
	if (rc)
		return rc;
	s->st.kernels++;
	if (s->opt.data == FP_PROF_DATA_TRACE) {
		struct fp__trace_rec r = {
			.begin = ev->begin_ns,
			.end = ev->end_ns >= ev->begin_ns ? ev->end_ns : ev->begin_ns,
			.stream = ev->stream,
			.correlation = ev->correlation,
			.node = node,
			.kind = FP__TRACE_KERNEL,
			.device_id = ev->device_id,
			.device_type = ev->device_type,
			.grid = {ev->grid[0], ev->grid[1], ev->grid[2]},
		};

		rc = trace_add(s, &r);
	}
	return rc;
}

static void pending_release(struct fp_prof_session *s, uint64_t corr, uint32_t slot)
{
	fp_hashmap_remove(&s->pending_map, corr);
	s->pending[slot].used = 0;
	/* The free list was sized with the slots, so this push never allocates. */
	s->pending_free[s->nfree++] = slot;
}

static int sess_kernel_locked(struct fp_prof_session *s, const struct fp_sink_event *ev)
{
	struct fp_sink_metadata md = ev->md;
	uint32_t node = FP_CALLTREE_NONE;
	uint64_t v;
	int rc;

	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	if (ev->correlation) {
		if (fp_hashmap_get(&s->pending_map, ev->correlation, &v)) {
			node = s->pending[v].node;
			merge_md(&md, &s->pending[v].md);
			pending_release(s, ev->correlation, (uint32_t)v);
		} else {
			s->st.unmatched++;
		}
	}
	if (node == FP_CALLTREE_NONE) {
		struct fp_sink_launch l = {.kernel = ev->kernel, .callpath = ev->callpath};

		rc = sess_launch_node(s, &l, false, &node);
		if (rc)
			goto fail;
	}
	rc = record_kernel(s, node, ev, &md);
	if (rc)
		goto fail;
	return FP_OK;
fail:
	s->st.failed++;
	return FP_OK;
}

static bool event_ok(const struct fp_sink_event *ev)
{
	return ev && ev->kind == FP_SINK_EVENT_KERNEL;
}

int fp_prof_session_kernel(struct fp_prof_session *s, const struct fp_sink_event *ev)
{
	if (!s || !event_ok(ev))
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	sess_kernel_locked(s, ev);
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

static int kernel_fn(struct fp_prof_session *s, void *arg)
{
	return sess_kernel_locked(s, arg);
}

int fp_prof_kernel(int session, const struct fp_sink_event *ev)
{
	if (!event_ok(ev))
		return FP_EINVAL;
	return for_sessions(session, kernel_fn, (void *)ev);
}

struct register_arg {
	uint64_t correlation;
	const struct fp_sink_launch *launch;
};

static int register_fn(struct fp_prof_session *s, void *argp)
{
	struct register_arg *a = argp;
	uint64_t v;
	uint32_t node, slot;
	int rc;

	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	rc = sess_launch_node(s, a->launch, true, &node);
	if (rc) {
		s->st.failed++;
		return FP_OK;
	}
	if (fp_hashmap_get(&s->pending_map, a->correlation, &v)) {
		slot = (uint32_t)v; /* the same id again: the newer launch wins */
	} else {
		if (fp_hashmap_count(&s->pending_map) >= s->opt.max_pending_launches) {
			s->st.dropped_launches++;
			return FP_OK;
		}
		if (s->nfree == 0) {
			size_t na = s->pending_alloc ? s->pending_alloc * 2 : 64;
			struct fp__pending *np;
			uint32_t *nf;

			if (na > UINT32_MAX)
				goto fail;
			np = fp_reallocarray(s->pending, na, sizeof(*np));
			if (!np)
				goto fail;
			s->pending = np;
			nf = fp_reallocarray(s->pending_free, na, sizeof(*nf));
			if (!nf)
				goto fail;
			s->pending_free = nf;
			/* The new slots become the free list, lowest on top. */
			for (v = na; v-- > s->pending_alloc;)
				s->pending_free[s->nfree++] = (uint32_t)v;
			s->pending_alloc = na;
		}
		slot = s->pending_free[s->nfree - 1];
		if (fp_hashmap_put(&s->pending_map, a->correlation, slot))
			goto fail;
		s->nfree--;
	}
	s->pending[slot].node = node;
	s->pending[slot].used = 1;
	s->pending[slot].md = a->launch->md;
	return FP_OK;
fail:
	s->st.failed++;
	return FP_OK;
}

int fp_prof_launch_register(int session, uint64_t correlation, const struct fp_sink_launch *l)
{
	struct register_arg a = {correlation, l};

	if (!l || !correlation)
		return FP_EINVAL;
	return for_sessions(session, register_fn, &a);
}

struct host_arg {
	const struct fp_sink_launch *launch;
	const struct fp_sink_event *ev;
};

static int host_fn(struct fp_prof_session *s, void *argp)
{
	struct host_arg *a = argp;
	uint32_t node;
	struct fp_sink_metadata md = a->ev->md;

	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	if (internal_depth) {
		s->st.internal++; /* FlagPrism's own launch (fp_prof_internal_mark) */
		return FP_OK;
	}
	merge_md(&md, &a->launch->md);
	if (sess_launch_node(s, a->launch, true, &node) || record_kernel(s, node, a->ev, &md))
		s->st.failed++;
	return FP_OK;
}

int fp__prof_host_record(int session, const struct fp_sink_launch *l,
			 const struct fp_sink_event *ev)
{
	struct host_arg a = {l, ev};

	return for_sessions(session, host_fn, &a);
}

int fp_prof_session_note_dropped(struct fp_prof_session *s, uint64_t n, const char *reason)
{
	size_t i;

	if (!s)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	s->st.dropped_backend += n;
	if (reason) {
		for (i = 0; i < s->ndrop_reasons; i++)
			if (!strcmp(s->drop_reasons[i], reason))
				break;
		if (i == s->ndrop_reasons && i < FP__MAX_DROP_REASONS) {
			s->drop_reasons[i] = fp_strdup(reason);
			if (s->drop_reasons[i])
				s->ndrop_reasons++;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

/* ---- scopes and states ------------------------------------------------------------------------ */

struct scope_arg {
	const char *name;
	size_t len;
	unsigned flags;
	uint64_t now;
	struct fp_diag *diag;
	bool diag_set;
	double value;
	const struct fp_comm_call *comm; /* entering a collective scope (comm.c) */
	bool comm_only;                  /* exiting: only a collective scope may be closed */
};

static int scope_enter_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th;
	uint32_t frame, node, parent;
	int rc;

	rc = sess_thread(s, &th);
	if (rc)
		return rc;
	if (th->depth >= s->opt.max_scope_depth)
		return FP_ELIMIT;
	if (th->depth == th->alloc) {
		uint32_t na = th->alloc ? th->alloc * 2 : 8;
		struct fp__prof_scope *ns = fp_reallocarray(th->stack, na, sizeof(*ns));

		if (!ns)
			return FP_ENOMEM;
		th->stack = ns;
		th->alloc = na;
	}
	rc = fp_calltree_intern(s->tree, a->name, a->len, &frame);
	if (rc)
		return rc;
	parent = th->depth ? th->stack[th->depth - 1].node : FP_CALLTREE_ROOT;
	rc = fp_calltree_child(s->tree, parent, frame, &node);
	if (rc)
		return rc;
	memset(&th->stack[th->depth], 0, sizeof(th->stack[th->depth]));
	th->stack[th->depth].frame = frame;
	th->stack[th->depth].node = node;
	th->stack[th->depth].begin = a->now;
	th->stack[th->depth].flags = a->flags;
	th->depth++;
	if (a->comm) {
		rc = fp__prof_comm_opened(s, &th->stack[th->depth - 1], a->comm);
		if (rc)
			th->depth--;
	}
	return rc;
}

int fp_prof_scope_enter(int session, const char *name, size_t len, unsigned flags)
{
	struct scope_arg a = {.name = name, .len = len, .flags = flags & FP_PROF_SCOPE_CPU_TIME};
	int rc;

	if (!name && len)
		return FP_EINVAL;
	a.now = fp_prof_clock_ns();
	rc = for_sessions(session, scope_enter_fn, &a);
	lctx_refresh();
	return rc;
}

int fp__prof_scope_enter_comm(int session, const char *name, size_t len,
			      const struct fp_comm_call *c)
{
	struct scope_arg a = {.name = name, .len = len, .flags = FP__PROF_SCOPE_COMM, .comm = c};
	int rc;

	a.now = fp_prof_clock_ns();
	rc = for_sessions(session, scope_enter_fn, &a);
	lctx_refresh();
	return rc;
}

static int scope_exit_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th = sess_thread_find(s);
	struct fp__prof_scope top;
	int rc = FP_OK;

	if (!th || th->depth == 0) {
		s->st.exits_without_enter++;
		return FP_OK;
	}
	top = th->stack[th->depth - 1];
	if (a->comm_only && !(top.flags & FP__PROF_SCOPE_COMM)) {
		size_t tlen;
		const char *tname = fp_calltree_frame_name(s->tree, top.frame, &tlen);

		if (!a->diag_set) {
			a->diag_set = true;
			fp_diag_set(a->diag, FP_ESTATE, 0,
				    "collective exit: the innermost open scope '%.*s' is not a "
				    "collective",
				    (int)FP_MIN(tlen, 100), tname);
		}
		return FP_ESTATE;
	}
	if (a->name) {
		size_t tlen;
		const char *tname = fp_calltree_frame_name(s->tree, top.frame, &tlen);

		if (fp__prof_strcmp_n(tname, tlen, a->name, a->len) != 0) {
			if (!a->diag_set) {
				a->diag_set = true;
				fp_diag_set(a->diag, FP_ESTATE, 0,
					    "scope exit '%.*s' does not match the innermost open "
					    "scope '%.*s'",
					    (int)FP_MIN(a->len, 100), a->name,
					    (int)FP_MIN(tlen, 100), tname);
			}
			return FP_ESTATE;
		}
	}
	th->depth--;
	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	s->st.scopes++;
	if (top.flags & FP__PROF_SCOPE_COMM) {
		if (fp__prof_comm_closed(s, th->tid, &top, a->now))
			s->st.failed++;
		return FP_OK;
	}
	if (top.flags & FP_PROF_SCOPE_CPU_TIME)
		rc = add_slot(s, top.node, FP__M_CPU_TIME,
			      a->now >= top.begin ? (double)(a->now - top.begin) : 0);
	if (!rc && s->opt.data == FP_PROF_DATA_TRACE) {
		struct fp__trace_rec r = {
			.begin = top.begin,
			.end = a->now >= top.begin ? a->now : top.begin,
			.node = top.node,
			.kind = FP__TRACE_SCOPE,
			.device_type = FP_PROF_NO_NAME,
			.tid = th->tid,
		};

		rc = trace_add(s, &r);
	}
	if (rc)
		s->st.failed++;
	return FP_OK;
}

int fp_prof_scope_exit(int session, const char *name, size_t len, struct fp_diag *diag)
{
	struct scope_arg a = {.name = name, .len = len, .diag = diag};
	int rc;

	if (!name && len)
		return FP_EINVAL;
	a.now = fp_prof_clock_ns();
	rc = for_sessions(session, scope_exit_fn, &a);
	lctx_refresh();
	return rc;
}

int fp__prof_scope_exit_comm(int session, struct fp_diag *diag)
{
	struct scope_arg a = {.diag = diag, .comm_only = true};
	int rc;

	a.now = fp_prof_clock_ns();
	rc = for_sessions(session, scope_exit_fn, &a);
	lctx_refresh();
	return rc;
}

static int scope_metric_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th = sess_thread_find(s);
	uint32_t node = th && th->depth ? th->stack[th->depth - 1].node : FP_CALLTREE_ROOT;
	uint32_t m;
	int rc;

	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	rc = fp_calltree_metric_auto(s->tree, a->name, a->len, &m);
	if (!rc)
		rc = fp_calltree_add_metric(s->tree, node, m, a->value);
	if (rc == FP_EINVAL)
		return rc; /* a property metric fed a number is fine; a kind clash is the caller's */
	if (rc)
		s->st.failed++;
	return FP_OK;
}

int fp_prof_scope_metric(int session, const char *name, size_t len, double value)
{
	struct scope_arg a = {.name = name, .len = len, .value = value};

	if (!name)
		return FP_EINVAL;
	return for_sessions(session, scope_metric_fn, &a);
}

static int state_enter_fn(struct fp_prof_session *s, void *argp)
{
	struct scope_arg *a = argp;
	struct fp__prof_thread *th;
	uint32_t frame;
	int rc = sess_thread(s, &th);

	if (!rc)
		rc = fp_calltree_intern(s->tree, a->name, a->len, &frame);
	if (!rc)
		th->state_frame = frame;
	return rc;
}

int fp_prof_state_enter(int session, const char *name, size_t len)
{
	struct scope_arg a = {.name = name, .len = len};
	int rc;

	if (!name && len)
		return FP_EINVAL;
	rc = for_sessions(session, state_enter_fn, &a);
	lctx_refresh();
	return rc;
}

static int state_exit_fn(struct fp_prof_session *s, void *argp)
{
	struct fp__prof_thread *th = sess_thread_find(s);

	(void)argp;
	if (th)
		th->state_frame = FP_CALLTREE_NONE;
	return FP_OK;
}

int fp_prof_state_exit(int session)
{
	int rc = for_sessions(session, state_exit_fn, NULL);

	lctx_refresh();
	return rc;
}

static int depth_fn(struct fp_prof_session *s, void *argp)
{
	struct fp__prof_thread *th = sess_thread_find(s);

	*(uint32_t *)argp = th ? th->depth : 0;
	return FP_OK;
}

int fp_prof_scope_depth(int session, uint32_t *depth)
{
	if (session == FP_PROF_ALL || !depth)
		return FP_EINVAL;
	return for_sessions(session, depth_fn, depth);
}

/* ---- metadata, devices, stats --------------------------------------------------------------- */

struct kv_arg {
	const char *type, *index, *key, *str;
	double value;
};

static int meta_fn(struct fp_prof_session *s, void *argp)
{
	struct kv_arg *a = argp;
	size_t i;
	char *v;

	for (i = 0; i < s->nenv; i++)
		if (!strcmp(s->env_keys[i], a->key))
			break;
	if (i == FP__MAX_ENV)
		return FP_ELIMIT;
	v = fp_strdup(a->str);
	if (!v)
		return FP_ENOMEM;
	if (i == s->nenv) {
		s->env_keys[i] = fp_strdup(a->key);
		if (!s->env_keys[i]) {
			fp_free(v);
			return FP_ENOMEM;
		}
		s->nenv++;
	} else {
		fp_free(s->env_values[i]);
	}
	s->env_values[i] = v;
	return FP_OK;
}

int fp_prof_set_meta(int session, const char *key, const char *value)
{
	struct kv_arg a = {.key = key, .str = value};

	if (!key || !value)
		return FP_EINVAL;
	return for_sessions(session, meta_fn, &a);
}

static int device_fn(struct fp_prof_session *s, void *argp)
{
	struct kv_arg *a = argp;

	if (a->str)
		return fp_calltree_device_set_str(s->tree, a->type, a->index, a->key, a->str);
	return fp_calltree_device_set(s->tree, a->type, a->index, a->key, a->value);
}

int fp_prof_set_device(int session, const char *type, const char *index, const char *key,
		       double value)
{
	struct kv_arg a = {type, index, key, NULL, value};

	if (!type || !index || !key)
		return FP_EINVAL;
	return for_sessions(session, device_fn, &a);
}

int fp_prof_set_device_str(int session, const char *type, const char *index, const char *key,
			   const char *value)
{
	struct kv_arg a = {type, index, key, value, 0};

	if (!type || !index || !key || !value)
		return FP_EINVAL;
	return for_sessions(session, device_fn, &a);
}

int fp_prof_session_set_device(struct fp_prof_session *s, const char *type, const char *index,
			       const char *key, double value)
{
	struct kv_arg a = {type, index, key, NULL, value};
	int rc;

	if (!s || !type || !index || !key)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = device_fn(s, &a);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int fp_prof_session_set_device_str(struct fp_prof_session *s, const char *type, const char *index,
				   const char *key, const char *value)
{
	struct kv_arg a = {type, index, key, value, 0};
	int rc;

	if (!s || !type || !index || !key || !value)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = device_fn(s, &a);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void stats_locked(struct fp_prof_session *s, struct fp_prof_stats *out)
{
	size_t i;

	*out = s->st;
	out->open_scopes = 0;
	for (i = 0; i < s->nthreads; i++)
		out->open_scopes += s->threads[i]->depth;
	out->pending = fp_hashmap_count(&s->pending_map);
	out->nodes = fp_calltree_node_count(s->tree);
}

int fp_prof_session_stats(struct fp_prof_session *s, struct fp_prof_stats *out)
{
	if (!s || !out)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	stats_locked(s, out);
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

/* ---- writers and finalize ----------------------------------------------------------------------- */

static const struct fp_writer_ops writers[] = {
	{"hatchet", ".hatchet", fp__prof_write_hatchet},
	{"chrome_trace", ".chrome_trace.json", fp__prof_write_chrome_trace},
	{"meta", ".meta.json", fp__prof_write_meta},
};

const struct fp_writer_ops *fp_prof_writer_at(size_t i)
{
	return i < FP_ARRAY_SIZE(writers) ? &writers[i] : NULL;
}

const struct fp_writer_ops *fp_prof_writer_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < FP_ARRAY_SIZE(writers); i++)
		if (!strcmp(writers[i].name, name))
			return &writers[i];
	return NULL;
}

struct write_arg {
	struct fp_prof_session *s;
	const struct fp_writer_ops *wr;
};

static int write_cb(void *argp, struct fp_jsonw *w)
{
	struct write_arg *a = argp;

	return a->wr->write(a->s, w);
}

int fp_prof_session_write(struct fp_prof_session *s, const struct fp_writer_ops *wr,
			  const char *path, struct fp_diag *diag)
{
	struct write_arg a = {s, wr};
	int rc;

	if (!s || !wr || !path)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = fp__prof_save_json(path, 0, write_cb, &a, diag);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Session lock held, or the session is ours alone (finalize). A reason is kept once; the ones
 * past the eighth, or past FP__INCOMPLETE_LEN bytes, are cut. */
static void note_incomplete(struct fp_prof_session *s, const char *why)
{
	size_t i;

	for (i = 0; i < s->nincomplete; i++)
		if (!strncmp(s->incomplete[i], why, FP__INCOMPLETE_LEN - 1))
			return;
	if (s->nincomplete < FP_ARRAY_SIZE(s->incomplete))
		snprintf(s->incomplete[s->nincomplete++], FP__INCOMPLETE_LEN, "%s", why);
}

static int incomplete_fn(struct fp_prof_session *s, void *arg)
{
	note_incomplete(s, arg);
	return FP_OK;
}

int fp_prof_mark_incomplete(int session, const char *reason)
{
	if (!reason || !*reason)
		return FP_EINVAL;
	return for_sessions(session, incomplete_fn, (void *)reason);
}

static int write_one(struct fp_prof_session *s, const struct fp_writer_ops *wr,
		     struct fp_diag *diag)
{
	struct fp_strbuf path;
	int rc;

	fp_strbuf_init(&path, 0);
	rc = fp_strbuf_addstr(&path, s->name);
	if (!rc)
		rc = fp_strbuf_addstr(&path, wr->suffix);
	if (!rc)
		rc = fp_prof_session_write(s, wr, path.buf, diag);
	fp_strbuf_release(&path);
	if (!rc && s->nwritten < FP_ARRAY_SIZE(s->written))
		s->written[s->nwritten++] = (char *)wr->name;
	return rc;
}

/* Parse "a,b" into writer rows (meta excluded: always written last). */
static int pick_formats(struct fp_prof_session *s, const char *format,
			const struct fp_writer_ops **out, size_t *n, struct fp_diag *diag)
{
	const char *p = format;

	*n = 0;
	if (!format || !*format) {
		out[(*n)++] = fp_prof_writer_find("hatchet");
		if (s->opt.data == FP_PROF_DATA_TRACE)
			out[(*n)++] = fp_prof_writer_find("chrome_trace");
		return FP_OK;
	}
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p), i;
		const struct fp_writer_ops *wr = NULL;

		for (i = 0; i < FP_ARRAY_SIZE(writers); i++)
			if (strlen(writers[i].name) == len && !memcmp(writers[i].name, p, len) &&
			    strcmp(writers[i].name, "meta") != 0)
				wr = &writers[i];
		if (!wr)
			return fp_diag_set(diag, FP_EINVAL, (uint64_t)(p - format),
					   "unknown output format '%.*s' (hatchet, chrome_trace)",
					   (int)FP_MIN(len, 64), p);
		for (i = 0; i < *n; i++)
			if (out[i] == wr)
				break;
		if (i == *n)
			out[(*n)++] = wr;
		p = e ? e + 1 : p + len;
	}
	return FP_OK;
}

static int finalize_session(struct fp_prof_session *s, const char *format, struct fp_diag *diag)
{
	const struct fp_writer_ops *fmts[FP_ARRAY_SIZE(writers)];
	struct fp_prof_stats st;
	size_t i, n = 0;
	int rc = FP_OK, r;

	if (s->backend->flush && s->backend->flush(&s->sink) != FP_OK)
		note_incomplete(s, "backend flush failed");
	if (s->backend->stop(&s->sink) != FP_OK)
		note_incomplete(s, "backend stop failed");
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] == s)
			sessions[i] = NULL;
	pthread_mutex_unlock(&reg_lock);

	/* The session is ours alone from here. */
	s->active = false;
	s->end_unix_ns = unix_ns();
	stats_locked(s, &st);
	if (st.open_scopes)
		note_incomplete(s, "scopes still open at finalize");
	r = pick_formats(s, format, fmts, &n, diag);
	if (r) {
		rc = r;
		note_incomplete(s, "unknown output format requested");
	}
	/*
	 * The metadata first, marked incomplete, then the data files, then the metadata again: a
	 * process killed while writing (SIGKILL, a crash) leaves a meta file that says so, never
	 * a set of files that looks whole. Its failure here is reported by the last write.
	 */
	if (n) {
		size_t keep = s->nincomplete;

		note_incomplete(s, "finalize did not finish: the process ended while writing the "
				   "outputs");
		write_one(s, fp_prof_writer_find("meta"), NULL);
		s->nincomplete = keep;
		s->nwritten = 0;
	}
	for (i = 0; i < n; i++) {
		r = write_one(s, fmts[i], rc ? NULL : diag);
		if (r) {
			note_incomplete(s, "an output file could not be written");
			if (!rc)
				rc = r;
		}
	}
	r = write_one(s, fp_prof_writer_find("meta"), rc ? NULL : diag);
	if (r && !rc)
		rc = r;
	session_free(s);
	return rc;
}

/* Take a session out of reach of finalize/shutdown races: first caller wins. */
static struct fp_prof_session *claim(int id, int *rc)
{
	struct fp_prof_session *s;

	pthread_mutex_lock(&reg_lock);
	s = find_locked(id);
	*rc = s ? FP_OK : FP_ENOENT;
	if (s) {
		pthread_mutex_lock(&s->lock);
		if (s->finalizing) {
			*rc = FP_ESTATE;
		} else {
			s->finalizing = true;
			/* launches from now on are not this session's */
			atomic_fetch_and(&active_mask, ~((uint64_t)1 << s->slot));
		}
		pthread_mutex_unlock(&s->lock);
		if (*rc)
			s = NULL;
	}
	pthread_mutex_unlock(&reg_lock);
	return s;
}

static int open_ids(int *ids)
{
	size_t i;
	int n = 0;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] && !sessions[i]->finalizing)
			ids[n++] = sessions[i]->id;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

int fp_prof_finalize(int session, const char *format, struct fp_diag *diag)
{
	struct fp_prof_session *s;
	int rc = FP_OK;

	if (session == FP_PROF_ALL) {
		int ids[FP_PROF_MAX_SESSIONS], n = open_ids(ids), i;

		for (i = 0; i < n; i++) {
			int r = fp_prof_finalize(ids[i], format, rc ? NULL : diag);

			if (r && r != FP_ENOENT && r != FP_ESTATE && !rc)
				rc = r;
		}
		return rc;
	}
	s = claim(session, &rc);
	if (!s)
		return rc;
	return finalize_session(s, format, diag);
}

void fp_prof_shutdown(void)
{
	int ids[FP_PROF_MAX_SESSIONS], n = open_ids(ids), i, rc;

	for (i = 0; i < n; i++) {
		struct fp_prof_session *s = claim(ids[i], &rc);

		if (!s)
			continue;
		note_incomplete(s, "shutdown without finalize");
		finalize_session(s, NULL, NULL);
	}
	lctx_release();
	fp__prof_names_release();
}

/* ---- launch contexts ------------------------------------------------------------------------- */

/*
 * A launch context is what one thread has open in every session, as triples (session id,
 * innermost scope node or ROOT, state frame or FP_CALLTREE_NONE), interned process-wide so that
 * an activity source's launch callback remembers it by reading one thread-local integer instead
 * of visiting the sessions under their locks. The scope and state functions refresh the calling
 * thread's id after every change (a scope change costs one more pass over the sessions); events
 * that carry ids are resolved under the session lock. Lock order: registry, session, then
 * lctx_lock, which is a leaf. The table only grows, up to FP_PROF_MAX_LCTX entries, until
 * fp_prof_shutdown(); the epoch makes ids that threads still hold from before a shutdown read
 * as "none".
 */

#define LCTX_WORDS 3u /* per session: id, node, state frame */
#define LCTX_MAX_TOTAL_WORDS ((size_t)1 << 26)

static pthread_mutex_t lctx_lock = PTHREAD_MUTEX_INITIALIZER;
/* the contexts (core's sequence table); id FP_SINK_LCTX_NONE is the empty context */
static struct fp__seqtab lctx = {.max_count = FP_PROF_MAX_LCTX,
				 .max_words = LCTX_MAX_TOTAL_WORDS};
static atomic_uint lctx_epoch = 1;
static _Thread_local uint32_t thread_lctx;
static _Thread_local unsigned thread_lctx_epoch; /* 0: never refreshed */

uint32_t fp_prof_launch_context(void)
{
	if (thread_lctx_epoch != atomic_load_explicit(&lctx_epoch, memory_order_relaxed))
		return FP_SINK_LCTX_NONE;
	return thread_lctx;
}

/* lctx_lock held. */
static int lctx_intern_locked(const uint32_t *w, uint32_t n, uint32_t *id)
{
	uint32_t none;
	int rc;

	if (!fp__seqtab_count(&lctx)) {
		rc = fp__seqtab_add(&lctx, NULL, 0, 0, &none); /* FP_SINK_LCTX_NONE */
		if (rc)
			return rc;
	}
	return fp__seqtab_add(&lctx, w, n, 0, id);
}

struct lctx_collect {
	uint32_t w[LCTX_WORDS * FP_PROF_MAX_SESSIONS];
	uint32_t n;
};

static int lctx_collect_fn(struct fp_prof_session *s, void *argp)
{
	struct lctx_collect *c = argp;
	struct fp__prof_thread *th = sess_thread_find(s);

	if (!th || (!th->depth && th->state_frame == FP_CALLTREE_NONE))
		return FP_OK;
	if (c->n + LCTX_WORDS > FP_ARRAY_SIZE(c->w))
		return FP_OK; /* one triple per open session: cannot happen */
	c->w[c->n++] = (uint32_t)s->id;
	c->w[c->n++] = th->depth ? th->stack[th->depth - 1].node : FP_CALLTREE_ROOT;
	c->w[c->n++] = th->state_frame;
	return FP_OK;
}

/* After a scope or state change on the calling thread: re-intern its launch context. */
static void lctx_refresh(void)
{
	struct lctx_collect c;
	uint32_t id = FP_SINK_LCTX_NONE;
	unsigned epoch;

	c.n = 0;
	for_sessions(FP_PROF_ALL, lctx_collect_fn, &c);
	pthread_mutex_lock(&lctx_lock);
	epoch = atomic_load(&lctx_epoch);
	if (c.n && lctx_intern_locked(c.w, c.n, &id))
		id = FP_SINK_LCTX_LOST;
	pthread_mutex_unlock(&lctx_lock);
	thread_lctx = id;
	thread_lctx_epoch = epoch;
}

static void lctx_release(void)
{
	pthread_mutex_lock(&lctx_lock);
	fp__seqtab_release(&lctx);
	atomic_fetch_add(&lctx_epoch, 1);
	pthread_mutex_unlock(&lctx_lock);
}

/* Session `sid`'s innermost scope node and state frame in context `id`; false: none there. */
static bool lctx_get(uint32_t id, int sid, uint32_t *node, uint32_t *state)
{
	const uint32_t *w;
	bool found = false;
	uint32_t i, n = 0;

	if (id == FP_SINK_LCTX_NONE || id == FP_SINK_LCTX_LOST)
		return false;
	pthread_mutex_lock(&lctx_lock);
	w = fp__seqtab_get(&lctx, id, &n, NULL);
	if (w) {
		for (i = 0; i + LCTX_WORDS <= n; i += LCTX_WORDS) {
			if (w[i] == (uint32_t)sid) {
				*node = w[i + 1];
				*state = w[i + 2];
				found = true;
				break;
			}
		}
	}
	pthread_mutex_unlock(&lctx_lock);
	return found;
}

struct lctx_frames {
	uint32_t small[64];
	uint32_t *v;
	size_t n;
};

/* The frames of ROOT / ... / node (ROOT excluded), then `state` if set. */
static int lctx_frames_of(struct fp_prof_session *s, uint32_t node, uint32_t state,
			  struct lctx_frames *f)
{
	uint32_t depth = fp_calltree_node_depth(s->tree, node), i, cur = node;

	f->v = f->small;
	f->n = 0;
	if ((size_t)depth + 1 > FP_ARRAY_SIZE(f->small)) {
		f->v = fp_reallocarray(NULL, (size_t)depth + 1, sizeof(*f->v));
		if (!f->v) {
			f->v = f->small;
			return FP_ENOMEM;
		}
	}
	for (i = depth; i-- > 0;) {
		f->v[i] = fp_calltree_node_frame(s->tree, cur);
		cur = fp_calltree_node_parent(s->tree, cur);
	}
	f->n = depth;
	if (state != FP_CALLTREE_NONE)
		f->v[f->n++] = state;
	return FP_OK;
}

static void lctx_frames_release(struct lctx_frames *f)
{
	if (f->v != f->small)
		fp_free(f->v);
	f->v = f->small;
}

/* Session lock held: the node of a kernel launched in `inner` inside `outer`. */
static int lctx_node(struct fp_prof_session *s, const struct fp_sink_event *ev, uint32_t outer,
		     uint32_t inner, uint32_t *out)
{
	uint32_t on = FP_CALLTREE_ROOT, ost = FP_CALLTREE_NONE;
	uint32_t in = FP_CALLTREE_ROOT, ist = FP_CALLTREE_NONE;
	uint32_t cur = FP_CALLTREE_ROOT;
	struct lctx_frames fo, fi;
	bool has_outer;
	size_t i, skip = 0;
	int rc = FP_OK;

	if (outer == FP_SINK_LCTX_LOST || inner == FP_SINK_LCTX_LOST)
		s->st.unmatched++;
	has_outer = lctx_get(outer, s->id, &on, &ost);
	lctx_get(inner, s->id, &in, &ist);
	if (!has_outer) {
		/* The common case: the innermost scope's node already is the path. */
		cur = in;
	} else {
		rc = lctx_frames_of(s, on, ost, &fo);
		if (!rc) {
			rc = lctx_frames_of(s, in, FP_CALLTREE_NONE, &fi);
			for (i = 0; !rc && i < fo.n; i++)
				rc = fp_calltree_child(s->tree, cur, fo.v[i], &cur);
			/* A graph captured and replayed in the same scopes shows them once. */
			while (!rc && skip < fo.n && skip < fi.n && fo.v[skip] == fi.v[skip])
				skip++;
			for (i = skip; !rc && i < fi.n; i++)
				rc = fp_calltree_child(s->tree, cur, fi.v[i], &cur);
			lctx_frames_release(&fi);
		}
		lctx_frames_release(&fo);
	}
	if (!rc && s->opt.context == FP_PROF_CONTEXT_PYTHON && ev->callpath != FP_PROF_NO_CALLPATH)
		rc = sess_callpath_node(s, cur, ev->callpath, &cur);
	if (!rc && ist != FP_CALLTREE_NONE) /* the state right above the kernel */
		rc = fp_calltree_child(s->tree, cur, ist, &cur);
	if (!rc)
		rc = fp__prof_comm_base(s, ev->kernel, cur, &cur);
	if (!rc)
		rc = sess_kernel_node(s, cur, ev->kernel, out);
	return rc;
}

int fp_prof_session_kernel_lctx_node(struct fp_prof_session *s, const struct fp_sink_event *ev,
				     uint32_t outer, uint32_t inner, uint32_t *filed)
{
	uint32_t node = FP_CALLTREE_NONE;

	if (filed)
		*filed = FP_CALLTREE_NONE;
	if (!s || !event_ok(ev))
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	if (!s->active)
		s->st.ignored_inactive++;
	else if (lctx_node(s, ev, outer, inner, &node) || record_kernel(s, node, ev, &ev->md))
		s->st.failed++;
	else if (filed)
		*filed = node;
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

int fp_prof_session_kernel_launched(struct fp_prof_session *s, const struct fp_sink_event *ev,
				    uint32_t outer, uint32_t inner,
				    const struct fp_sink_launch_state *ls, uint32_t *filed)
{
	uint32_t node = FP_CALLTREE_NONE;
	bool active;

	if (!ls || !ls->known)
		return fp_prof_session_kernel_lctx_node(s, ev, outer, inner, filed);
	if (filed)
		*filed = FP_CALLTREE_NONE;
	if (!s || !event_ok(ev))
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	/* The session's state when the kernel was launched decides, not its state now. */
	active = (ls->active >> s->slot) & 1;
	if (!active)
		s->st.ignored_inactive++;
	else if (ls->internal)
		s->st.internal++;
	else if (lctx_node(s, ev, outer, inner, &node) || record_kernel(s, node, ev, &ev->md))
		s->st.failed++;
	else if (filed)
		*filed = node;
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

int fp_prof_session_kernel_lctx(struct fp_prof_session *s, const struct fp_sink_event *ev,
				uint32_t outer, uint32_t inner)
{
	return fp_prof_session_kernel_lctx_node(s, ev, outer, inner, NULL);
}
