/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Chrome Trace Event Format writer for a session's timeline (`<name>.chrome_trace.json`),
 * which Perfetto and chrome://tracing open. One complete ("X") event per kernel and per closed
 * scope, process/thread name and sort-index metadata ("M") events first, times in microseconds
 * relative to the session origin, printed exactly from integer nanoseconds. Events are sorted by
 * (pid, tid, start, longer first) so the file is deterministic. Viewers need the slices of one
 * track to nest strictly; a slice that partially overlaps another on its stream (kernels may, on
 * a GPU) moves to an extra track of that stream, "stream N (overlap k)", instead of being drawn
 * wrong or dropped. Collectives get tracks of their own (comm.c records them and marks its
 * kernels' tracks): a thread's torch.distributed calls on "thread N collectives", a collective
 * library's kernels on "stream N communication", apart from compute. The session's features
 * prepare the records first and add to "otherData" (their rows' trace hooks). It does not
 * write flow arrows or counters;
 * docs/formats/profiler-formats.md has the layout.
 */
#include "fp-setup.h"

#include <flagprism/json.h>
#include <flagprism/strbuf.h>
#include <flagprism/version.h>

#include "core/hashmap-internal.h"
#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"

#define HOST_PID 1u
#define DEVICE_PID_BASE 1000u
#define NAME_SHOWN_MAX 4096u /* bytes of a slice name */
#define NODE_VALUES 512u     /* metrics of one node looked at for a slice's args */

/* Slice names by node, computed once per node: C++ kernels are demangled per node, not per
 * event (a trace may hold millions of launches of a few kernels). */
struct names {
	struct fp_hashmap map; /* node -> off << 16 | len in text */
	struct fp_strbuf text;
	char *buf;                      /* NAME_SHOWN_MAX + 1 */
	struct fp_calltree_value *vals; /* NODE_VALUES */
};

static int slice_name(struct names *nm, const struct fp_calltree *t, uint32_t node,
		      const char **out, size_t *len)
{
	uint64_t v;
	size_t n;
	int rc;

	if (fp_hashmap_get(&nm->map, node, &v)) {
		*out = nm->text.buf + (v >> 16);
		*len = (size_t)(v & 0xffff);
		return FP_OK;
	}
	fp_calltree_node_display(t, node, false, nm->buf, NAME_SHOWN_MAX + 1, &n);
	n = FP_MIN(n, (size_t)NAME_SHOWN_MAX);
	v = (uint64_t)nm->text.len << 16 | n;
	rc = fp_strbuf_add(&nm->text, nm->buf, n);
	if (!rc)
		rc = fp_hashmap_put(&nm->map, node, v);
	if (rc)
		return rc;
	*out = nm->text.buf + (v >> 16);
	*len = n;
	return FP_OK;
}

/*
 * A kernel's node strings as args: "full_name" when the slice shows a short form, and every
 * string property but the device ones the event already has ("mangled_name", and for Inductor
 * kernels "source_lines", "aten_ops", "source_nodes": where the kernel came from).
 */
static void write_node_strings(const struct fp_calltree *t, uint32_t node, const char *shown,
			       size_t shown_len, struct fp_calltree_value *vals, struct fp_jsonw *w)
{
	size_t n, i, len;
	const char *full = fp_calltree_node_name(t, node, &len);

	if (full && (len != shown_len || memcmp(full, shown, len))) {
		fp_jsonw_key(w, "full_name");
		fp_jsonw_string_n(w, full, len);
	}
	n = FP_MIN(fp_calltree_node_metrics(t, node, vals, NODE_VALUES), (size_t)NODE_VALUES);
	for (i = 0; i < n; i++) {
		const char *mn = fp_calltree_metric_name(t, vals[i].metric, &len, NULL);

		if (!vals[i].is_string || !mn || !strcmp(mn, "device_id") ||
		    !strcmp(mn, "device_type"))
			continue;
		fp_jsonw_key(w, mn);
		fp_jsonw_string_n(w, vals[i].str, vals[i].str_len);
	}
}

struct key {
	uint64_t pid, tid, begin, neg_dur;
	uint64_t track; /* the record's own tid (stream or thread); tid adds the overlap lane */
	size_t idx;
};

#define LANE_SHIFT 32

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->neg_dur != y->neg_dur)
		return x->neg_dur < y->neg_dur ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int fp__prof_write_us(struct fp_jsonw *w, uint64_t ns)
{
	char buf[40];
	int k = snprintf(buf, sizeof(buf), "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));

	return fp_jsonw_raw(w, buf, (size_t)k);
}

static uint64_t rel(const struct fp_prof_session *s, uint64_t t)
{
	return t > s->origin_ns ? t - s->origin_ns : 0;
}

/* Node names from below ROOT down to the node's parent, outermost first. */
static int write_call_stack(struct fp_prof_session *s, uint32_t node, struct fp_jsonw *w,
			    uint32_t **buf, size_t *alloc)
{
	uint32_t depth = fp_calltree_node_depth(s->tree, node), i, cur = node;

	if (depth > *alloc) {
		uint32_t *nb = fp_reallocarray(*buf, depth, sizeof(*nb));

		if (!nb)
			return FP_ENOMEM;
		*buf = nb;
		*alloc = depth;
	}
	for (i = depth; i-- > 0;) {
		(*buf)[i] = cur;
		cur = fp_calltree_node_parent(s->tree, cur);
	}
	fp_jsonw_key(w, "call_stack");
	fp_jsonw_array_begin(w);
	for (i = 0; i + 1 < depth; i++) {
		size_t len;
		const char *name = fp_calltree_node_name(s->tree, (*buf)[i], &len);

		fp_jsonw_string_n(w, name, len);
	}
	return fp_jsonw_array_end(w);
}

static void write_meta_event(struct fp_jsonw *w, const char *what, uint64_t pid,
			     const uint64_t *tid, const char *name, size_t name_len,
			     uint64_t sort_index)
{
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "ph", "M");
	fp_jsonw_kv_string(w, "name", what);
	fp_jsonw_kv_uint(w, "pid", pid);
	if (tid)
		fp_jsonw_kv_uint(w, "tid", *tid);
	fp_jsonw_key(w, "args");
	fp_jsonw_object_begin(w);
	if (name) {
		fp_jsonw_key(w, "name");
		fp_jsonw_string_n(w, name, name_len);
	} else {
		fp_jsonw_kv_uint(w, "sort_index", sort_index);
	}
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);
}

static void write_names(struct fp_prof_session *s, struct fp_jsonw *w, const struct key *keys,
			size_t n)
{
	size_t i;
	char buf[96];

	for (i = 0; i < n; i++) {
		const struct key *k = &keys[i];
		const struct fp__trace_rec *r = fp__trace_at(s, k->idx);
		bool new_pid = i == 0 || keys[i - 1].pid != k->pid;
		int len;

		if (new_pid) {
			if (k->pid == HOST_PID) {
				len = snprintf(buf, sizeof(buf), "host");
			} else {
				size_t tl = 0;
				const char *type = r->device_type != FP_PROF_NO_NAME ?
							   fp_prof_name_str(r->device_type, &tl) :
							   NULL;

				len = snprintf(buf, sizeof(buf), "%.*s %" PRIu32,
					       (int)FP_MIN(tl, 40), type ? type : "device",
					       r->device_id);
			}
			write_meta_event(w, "process_name", k->pid, NULL, buf, (size_t)len, 0);
			write_meta_event(w, "process_sort_index", k->pid, NULL, NULL, 0, k->pid);
		}
		if (new_pid || keys[i - 1].tid != k->tid) {
			uint64_t lane = (k->tid - k->track) >> LANE_SHIFT;
			bool comm = (k->track & FP__TRACK_COMM) && r->kind != FP__TRACE_ISCOPE;

			if (comm) {
				const char *what = k->pid == HOST_PID ? "thread" : "stream";
				const char *track =
					k->pid == HOST_PID ? "collectives" : "communication";
				uint64_t t = k->track & ~FP__TRACK_COMM;

				len = lane ? snprintf(buf, sizeof(buf),
						      "%s %" PRIu64 " %s (overlap %" PRIu64 ")",
						      what, t, track, lane) :
					     snprintf(buf, sizeof(buf), "%s %" PRIu64 " %s", what,
						      t, track);
			} else if (r->kind == FP__TRACE_ISCOPE) {
				bool sm = k->track < FP__TL_TRACK_PROGRAM;
				uint64_t t =
					k->track - (sm ? FP__TL_TRACK_SM : FP__TL_TRACK_PROGRAM);

				len = lane ? snprintf(buf, sizeof(buf),
						      "%s %" PRIu64 " (overlap %" PRIu64 ")",
						      sm ? "SM" : "program", t, lane) :
					     snprintf(buf, sizeof(buf), "%s %" PRIu64,
						      sm ? "SM" : "program", t);
			} else if (lane)
				len = snprintf(
					buf, sizeof(buf), "%s %" PRIu64 " (overlap %" PRIu64 ")",
					k->pid == HOST_PID ? "thread" : "stream", k->track, lane);
			else
				len = snprintf(buf, sizeof(buf), "%s %" PRIu64,
					       k->pid == HOST_PID ? "thread" : "stream", k->track);
			write_meta_event(w, "thread_name", k->pid, &k->tid, buf, (size_t)len, 0);
			write_meta_event(w, "thread_sort_index", k->pid, &k->tid, NULL, 0, k->tid);
		}
	}
}

/*
 * Keys sorted by (pid, tid, start, longer first). Give each slice the first lane of its track
 * where it nests (ends no later than the innermost open slice of that lane), then re-sort.
 */
static int assign_lanes(struct fp_prof_session *s, struct key *keys, size_t n)
{
	uint64_t *ends = NULL; /* lane k's stack of open slice ends at ends[k * cap] */
	size_t *depth = NULL, nlanes = 0, lanes_alloc = 0, cap = 64, i, start = 0;
	size_t moved = 0;
	int rc = FP_OK;

	/* Each lane keeps a small stack of open ends; `cap` bounds nesting per lane (deeper
	 * nesting than that simply takes another lane, which is still a valid drawing). */
	for (i = 0; i < n && !rc; i++) {
		uint64_t b = keys[i].begin, e = b + (UINT64_MAX - keys[i].neg_dur);
		size_t lane;

		if (i == 0 || keys[i].pid != keys[start].pid ||
		    keys[i].track != keys[start].track) {
			start = i;
			nlanes = 0;
		}
		for (lane = 0; lane < nlanes; lane++) {
			uint64_t *st = &ends[lane * cap];

			while (depth[lane] > 0 && st[depth[lane] - 1] <= b)
				depth[lane]--;
			if (depth[lane] < cap && (depth[lane] == 0 || st[depth[lane] - 1] >= e))
				break;
		}
		if (lane == nlanes) {
			if (nlanes == lanes_alloc) {
				size_t na = lanes_alloc ? lanes_alloc * 2 : 4;
				uint64_t *ne = fp_reallocarray(ends, na * cap, sizeof(*ne));
				size_t *nd = ne ? fp_reallocarray(depth, na, sizeof(*nd)) : NULL;

				if (ne)
					ends = ne;
				if (!ne || !nd) {
					rc = FP_ENOMEM;
					break;
				}
				depth = nd;
				lanes_alloc = na;
			}
			depth[nlanes++] = 0;
		}
		ends[lane * cap + depth[lane]++] = e;
		if (lane) {
			keys[i].tid = keys[i].track + ((uint64_t)lane << LANE_SHIFT);
			moved++;
		}
	}
	fp_free(ends);
	fp_free(depth);
	if (rc)
		return rc;
	s->trace_moved = moved;
	if (moved)
		qsort(keys, n, sizeof(*keys), key_cmp);
	return FP_OK;
}

/* The bits the session's features add to the track of a kernel slice on `node`. */
static uint64_t kernel_track(struct fp_prof_session *s, uint32_t node)
{
	uint64_t bits = 0;
	size_t i;

	for (i = 0; i < FP__PROF_NFEATURES; i++)
		if (s->features[i]->trace_kernel_track)
			bits |= s->features[i]->trace_kernel_track(s, node);
	return bits;
}

/* A collective's arguments: its bytes, communicator and kind (from its node). `*ranks` caches
 * the id of the "comm_ranks (pty)" metric (FP_CALLTREE_NONE until looked up). */
static void write_comm_args(struct fp_prof_session *s, const struct fp__trace_rec *r,
			    struct fp_jsonw *w, uint32_t *ranks)
{
	struct fp_calltree_value v;

	fp_jsonw_kv_uint(w, "bytes", r->correlation);
	if (r->grid[0])
		fp_jsonw_kv_uint(w, "group_size", r->grid[0]);
	if (*ranks == FP_CALLTREE_NONE &&
	    fp_calltree_metric_find(s->tree, "comm_ranks (pty)", 16, ranks) != FP_OK)
		*ranks = FP_CALLTREE_NONE - 1; /* none in this tree */
	if (*ranks < FP_CALLTREE_NONE - 1 &&
	    fp_calltree_get(s->tree, r->node, *ranks, &v) == FP_OK && v.is_string) {
		fp_jsonw_key(w, "ranks");
		fp_jsonw_string_n(w, v.str, v.str_len);
	}
	fp_jsonw_kv_bool(w, "async", r->grid[1] != 0);
}

int fp__prof_write_chrome_trace(struct fp_prof_session *s, struct fp_jsonw *w)
{
	struct names nm;
	struct key *keys = NULL;
	uint32_t *stack = NULL, comm_ranks = FP_CALLTREE_NONE;
	size_t i, stack_alloc = 0;
	int rc = FP_OK;

	for (i = 0; i < FP__PROF_NFEATURES; i++)
		if (s->features[i]->trace_begin)
			s->features[i]->trace_begin(s);
	if (s->ntrace) {
		keys = fp_reallocarray(NULL, s->ntrace, sizeof(*keys));
		if (!keys)
			return FP_ENOMEM;
	}
	for (i = 0; i < s->ntrace; i++) {
		const struct fp__trace_rec *r = fp__trace_at(s, i);
		uint64_t b = rel(s, r->begin), e = rel(s, r->end);

		keys[i].pid = r->kind == FP__TRACE_SCOPE || r->kind == FP__TRACE_COMM ?
				      HOST_PID :
				      DEVICE_PID_BASE + (uint64_t)r->device_id;
		keys[i].tid = r->kind == FP__TRACE_SCOPE  ? r->tid :
			      r->kind == FP__TRACE_COMM   ? FP__TRACK_COMM | r->tid :
			      r->kind == FP__TRACE_ISCOPE ? r->correlation :
							    r->stream;
		if (r->kind == FP__TRACE_KERNEL)
			keys[i].tid |= kernel_track(s, r->node);
		keys[i].begin = b;
		keys[i].neg_dur = UINT64_MAX - (e - b);
		keys[i].track = keys[i].tid;
		keys[i].idx = i;
	}
	if (s->ntrace > 1)
		qsort(keys, s->ntrace, sizeof(*keys), key_cmp);
	rc = assign_lanes(s, keys, s->ntrace);
	if (rc) {
		fp_free(keys);
		return rc;
	}
	fp_hashmap_init(&nm.map);
	fp_strbuf_init(&nm.text, 0);
	nm.buf = fp_malloc(NAME_SHOWN_MAX + 1);
	nm.vals = fp_reallocarray(NULL, NODE_VALUES, sizeof(*nm.vals));
	if (!nm.buf || !nm.vals) {
		fp_free(nm.buf);
		fp_free(nm.vals);
		fp_free(keys);
		return FP_ENOMEM;
	}

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "displayTimeUnit", "ns");
	fp_jsonw_kv_uint(w, "baseTimeNanoseconds", s->origin_unix_ns);
	fp_jsonw_key(w, "otherData");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "producer", "flagprism " FP_VERSION_STRING);
	fp_jsonw_kv_string(w, "session", s->name);
	fp_jsonw_kv_string(w, "clock", "CLOCK_MONOTONIC");
	fp_jsonw_kv_uint(w, "origin_monotonic_ns", s->origin_ns);
	fp_jsonw_kv_uint(w, "dropped_records", s->st.dropped_trace);
	for (i = 0; i < FP__PROF_NFEATURES; i++)
		if (s->features[i]->trace_other_data)
			s->features[i]->trace_other_data(s, w);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "traceEvents");
	fp_jsonw_array_begin(w);
	write_names(s, w, keys, s->ntrace);
	for (i = 0; i < s->ntrace && !rc; i++) {
		const struct fp__trace_rec *r = fp__trace_at(s, keys[i].idx);
		uint64_t b = keys[i].begin, d = UINT64_MAX - keys[i].neg_dur;
		size_t len, name_len;
		const char *name = fp_calltree_node_name(s->tree, r->node, &name_len);

		if (r->kind == FP__TRACE_KERNEL) {
			rc = slice_name(&nm, s->tree, r->node, &name, &name_len);
			if (rc)
				break;
		}

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "ph", "X");
		fp_jsonw_key(w, "name");
		fp_jsonw_string_n(w, name, name_len);
		fp_jsonw_kv_string(w, "cat",
				   r->kind == FP__TRACE_SCOPE  ? "scope" :
				   r->kind == FP__TRACE_ISCOPE ? "kernel_scope" :
				   r->kind == FP__TRACE_COMM   ? "collective" :
								 "kernel");
		fp_jsonw_kv_uint(w, "pid", keys[i].pid);
		fp_jsonw_kv_uint(w, "tid", keys[i].tid);
		fp_jsonw_key(w, "ts");
		fp__prof_write_us(w, b);
		fp_jsonw_key(w, "dur");
		fp__prof_write_us(w, d);
		fp_jsonw_key(w, "args");
		fp_jsonw_object_begin(w);
		rc = write_call_stack(s, r->node, w, &stack, &stack_alloc);
		if (r->kind == FP__TRACE_KERNEL) {
			fp_jsonw_kv_uint(w, "correlation", r->correlation);
			fp_jsonw_kv_uint(w, "device_id", r->device_id);
			if (r->device_type != FP_PROF_NO_NAME) {
				const char *type = fp_prof_name_str(r->device_type, &len);

				if (type) {
					fp_jsonw_key(w, "device_type");
					fp_jsonw_string_n(w, type, len);
				}
			}
			fp_jsonw_key(w, "grid");
			fp_jsonw_array_begin(w);
			fp_jsonw_uint(w, r->grid[0]);
			fp_jsonw_uint(w, r->grid[1]);
			fp_jsonw_uint(w, r->grid[2]);
			fp_jsonw_array_end(w);
			fp_jsonw_kv_uint(w, "stream", r->stream);
			write_node_strings(s->tree, r->node, name, name_len, nm.vals, w);
		} else if (r->kind == FP__TRACE_COMM) {
			write_comm_args(s, r, w, &comm_ranks);
		} else if (r->kind == FP__TRACE_ISCOPE) {
			fp_jsonw_kv_uint(w, "program", r->grid[0]);
			fp_jsonw_kv_uint(w, "smid", r->grid[1]);
			fp_jsonw_kv_uint(w, "depth", r->grid[2]);
		}
		fp_jsonw_object_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	if (!rc)
		rc = fp_jsonw_object_end(w);
	fp_free(stack);
	fp_free(keys);
	fp_hashmap_release(&nm.map);
	fp_strbuf_release(&nm.text);
	fp_free(nm.buf);
	fp_free(nm.vals);
	return rc;
}
