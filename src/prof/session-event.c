/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event intake of a profiling session: the tree helpers that file a launch or a kernel under
 * its node (metric slots, frames, call paths, per-thread scope stacks, kernel names), the
 * session's trace records, and the kernels, launches and host-timed events that backends
 * deliver through the sink, with their metadata and the notes the Python layer attached. Every
 * function here runs with the session's lock held (or takes it). Not the registry (session.c),
 * not launch contexts (session-lctx.c).
 */
#include "fp-setup.h"

#include <flagprism/strbuf.h>

#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

static const char *const metric_names[FP__M_COUNT_SLOTS] = {
	[FP__M_TIME] = "time (ns)",      [FP__M_COUNT] = "count",
	[FP__M_DEVICE_ID] = "device_id", [FP__M_DEVICE_TYPE] = "device_type",
	[FP__M_FLOPS8] = "flops8",       [FP__M_FLOPS16] = "flops16",
	[FP__M_FLOPS32] = "flops32",     [FP__M_FLOPS64] = "flops64",
	[FP__M_BYTES] = "bytes",         [FP__M_EST_BYTES] = "est_bytes",
	[FP__M_EST_FLOPS] = "est_flops", [FP__M_CPU_TIME] = "cpu_time (ns)(exc)",
};

/* ---- tree helpers (session lock held) ------------------------------------------------------- */

int fp__prof_sess_metric(struct fp_prof_session *s, int slot, uint32_t *id)
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
int fp__prof_callpath_node(struct fp_prof_session *s, uint32_t base, uint32_t callpath,
			   uint32_t *node)
{
	uint32_t small[64], *ids = small, cur = base;
	uint64_t key = base == FP_CALLTREE_ROOT ? callpath : ((uint64_t)base + 1) << 32 | callpath;
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

struct fp__prof_thread *fp__prof_thread_find(struct fp_prof_session *s)
{
	uint64_t v;

	if (!fp_hashmap_get(&s->thread_map, fp__prof_thread_index(), &v))
		return NULL;
	return s->threads[v];
}

int fp__prof_thread_get(struct fp_prof_session *s, struct fp__prof_thread **out)
{
	struct fp__prof_thread *th = fp__prof_thread_find(s);
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
int fp__prof_kernel_node(struct fp_prof_session *s, uint32_t base, uint32_t kernel, uint32_t *node)
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

int fp__prof_kernel_base(struct fp_prof_session *s, uint32_t kernel, uint32_t base, uint32_t *out)
{
	size_t i;
	int rc = FP_OK;

	*out = base;
	for (i = 0; !rc && i < FP__PROF_NFEATURES; i++)
		if (s->features[i]->kernel_base)
			rc = s->features[i]->kernel_base(s, kernel, *out, out);
	return rc;
}

/* The node a launch on the calling thread belongs to. */
static int sess_launch_node(struct fp_prof_session *s, const struct fp_sink_launch *l,
			    bool use_thread, uint32_t *node)
{
	struct fp__prof_thread *th = use_thread ? fp__prof_thread_find(s) : NULL;
	uint32_t base = FP_CALLTREE_ROOT;
	int rc;

	if (th && th->depth)
		base = th->stack[th->depth - 1].node;
	if (s->opt.context == FP_PROF_CONTEXT_PYTHON && l->callpath != FP_PROF_NO_CALLPATH) {
		rc = fp__prof_callpath_node(s, base, l->callpath, &base);
		if (rc)
			return rc;
	}
	if (th && th->state_frame != FP_CALLTREE_NONE) {
		rc = fp_calltree_child(s->tree, base, th->state_frame, &base);
		if (rc)
			return rc;
	}
	rc = fp__prof_kernel_base(s, l->kernel, base, &base);
	if (rc)
		return rc;
	return fp__prof_kernel_node(s, base, l->kernel, node);
}

int fp__prof_trace_add(struct fp_prof_session *s, const struct fp__trace_rec *r)
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

int fp__prof_add_slot(struct fp_prof_session *s, uint32_t node, int slot, double v)
{
	uint32_t m;
	int rc = fp__prof_sess_metric(s, slot, &m);

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
		    (i + nlen == hlen ||
		     (i + nlen + 3 <= hlen && !memcmp(hay + i + nlen, " | ", 3))))
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
					rc = fp_calltree_set_string(s->tree, node, m, sb.buf,
								    sb.len);
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

int fp__prof_record_kernel(struct fp_prof_session *s, uint32_t node, const struct fp_sink_event *ev,
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

	rc = fp__prof_add_slot(s, node, FP__M_TIME,
			       ev->end_ns >= ev->begin_ns ? (double)(ev->end_ns - ev->begin_ns) :
							    0);
	if (!rc)
		rc = fp__prof_add_slot(s, node, FP__M_COUNT, 1);
	if (!rc)
		rc = fp__prof_sess_metric(s, FP__M_DEVICE_ID, &m);
	if (!rc) {
		int k = snprintf(dev, sizeof(dev), "%" PRIu32, ev->device_id);

		rc = fp_calltree_set_string(s->tree, node, m, dev, (size_t)k);
	}
	if (!rc && ev->device_type != FP_PROF_NO_NAME) {
		size_t len;
		const char *type = fp_prof_name_str(ev->device_type, &len);

		if (type) {
			rc = fp__prof_sess_metric(s, FP__M_DEVICE_TYPE, &m);
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
		rc = fp__prof_add_slot(s, node, mdf[i].slot, v);
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

		rc = fp__prof_trace_add(s, &r);
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
			goto fail_record;
	}
	rc = fp__prof_record_kernel(s, node, ev, &md);
	if (rc)
		goto fail_record;
	return FP_OK;
fail_record:
	s->st.failed++;
	return FP_OK;
}

bool fp__prof_event_ok(const struct fp_sink_event *ev)
{
	return ev && ev->kind == FP_SINK_EVENT_KERNEL;
}

int fp_prof_session_kernel(struct fp_prof_session *s, const struct fp_sink_event *ev)
{
	if (!s || !fp__prof_event_ok(ev))
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
	if (!fp__prof_event_ok(ev))
		return FP_EINVAL;
	return fp__prof_for_sessions(session, kernel_fn, (void *)ev);
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
				goto fail_register;
			np = fp_reallocarray(s->pending, na, sizeof(*np));
			if (!np)
				goto fail_register;
			s->pending = np;
			nf = fp_reallocarray(s->pending_free, na, sizeof(*nf));
			if (!nf)
				goto fail_register;
			s->pending_free = nf;
			/* The new slots become the free list, lowest on top. */
			for (v = na; v-- > s->pending_alloc;)
				s->pending_free[s->nfree++] = (uint32_t)v;
			s->pending_alloc = na;
		}
		slot = s->pending_free[s->nfree - 1];
		if (fp_hashmap_put(&s->pending_map, a->correlation, slot))
			goto fail_register;
		s->nfree--;
	}
	s->pending[slot].node = node;
	s->pending[slot].used = 1;
	s->pending[slot].md = a->launch->md;
	return FP_OK;
fail_register:
	s->st.failed++;
	return FP_OK;
}

int fp_prof_launch_register(int session, uint64_t correlation, const struct fp_sink_launch *l)
{
	struct register_arg a = {correlation, l};

	if (!l || !correlation)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, register_fn, &a);
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
	if (fp_prof_internal_depth()) {
		s->st.internal++; /* FlagPrism's own launch (fp_prof_internal_mark) */
		return FP_OK;
	}
	merge_md(&md, &a->launch->md);
	if (sess_launch_node(s, a->launch, true, &node) ||
	    fp__prof_record_kernel(s, node, a->ev, &md))
		s->st.failed++;
	return FP_OK;
}

int fp__prof_host_record(int session, const struct fp_sink_launch *l,
			 const struct fp_sink_event *ev)
{
	struct host_arg a = {l, ev};

	return fp__prof_for_sessions(session, host_fn, &a);
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
