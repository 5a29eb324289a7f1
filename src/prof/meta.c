/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metadata writer (`<name>.meta.json`): versions, session options, devices, the environment
 * the Python layer reported, what was recorded and, above all, what was lost and why (dropped
 * records, unmatched events, unfinished scopes) and whether the session ended cleanly. Written
 * last at finalize so that it can list the files that were actually written; each feature of
 * the session adds its members (intra-kernel timelines, the rank's identity: their rows'
 * write_meta). The profile data itself is in the Hatchet and trace files, not here.
 */
#include "fp-setup.h"

#include <flagprism/json.h>
#include <flagprism/version.h>

#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"

static void write_open_scopes(struct fp_prof_session *s, struct fp_jsonw *w)
{
	size_t i;
	uint32_t j;

	fp_jsonw_key(w, "unfinished_scope_stacks");
	fp_jsonw_array_begin(w);
	for (i = 0; i < s->nthreads; i++) {
		const struct fp__prof_thread *th = s->threads[i];

		if (!th->depth)
			continue;
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "thread", th->tid);
		fp_jsonw_key(w, "scopes");
		fp_jsonw_array_begin(w);
		for (j = 0; j < th->depth; j++) {
			size_t len;
			const char *name =
				fp_calltree_frame_name(s->tree, th->stack[j].frame, &len);

			fp_jsonw_string_n(w, name, len);
		}
		fp_jsonw_array_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}

static void write_env(struct fp_prof_session *s, struct fp_jsonw *w)
{
	size_t order[FP__MAX_ENV], i, j;

	/* Sorted by key, for deterministic files. */
	for (i = 0; i < s->nenv; i++) {
		for (j = i; j > 0 && strcmp(s->env_keys[order[j - 1]], s->env_keys[i]) > 0; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	fp_jsonw_key(w, "environment");
	fp_jsonw_object_begin(w);
	for (i = 0; i < s->nenv; i++)
		fp_jsonw_kv_string(w, s->env_keys[order[i]], s->env_values[order[i]]);
	fp_jsonw_object_end(w);
}

int fp__prof_write_meta(struct fp_prof_session *s, struct fp_jsonw *w)
{
	struct fp_prof_stats st;
	size_t i, open = 0;

	st = s->st;
	for (i = 0; i < s->nthreads; i++)
		open += s->threads[i]->depth;
	st.pending = fp_hashmap_count(&s->pending_map);

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "format", "flagprism-profile-meta");
	fp_jsonw_kv_int(w, "format_version", 1);
	fp_jsonw_kv_string(w, "flagprism_version", FP_VERSION_STRING);

	fp_jsonw_key(w, "session");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "id", s->id);
	fp_jsonw_kv_string(w, "name", s->name);
	fp_jsonw_kv_string(w, "context",
			   s->opt.context == FP_PROF_CONTEXT_PYTHON ? "python" : "shadow");
	fp_jsonw_kv_string(w, "data", s->opt.data == FP_PROF_DATA_TRACE ? "trace" : "tree");
	fp_jsonw_kv_string(w, "backend", s->backend->name);
	fp_jsonw_kv_string(w, "backend_version", s->backend->version);
	fp_jsonw_kv_string(w, "hook", s->hook);
	fp_jsonw_key(w, "limits");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "max_trace_events", s->opt.max_trace_events);
	fp_jsonw_kv_uint(w, "max_pending_launches", s->opt.max_pending_launches);
	fp_jsonw_kv_uint(w, "max_scope_depth", s->opt.max_scope_depth);
	fp_jsonw_kv_uint(w, "max_threads", s->opt.max_threads);
	fp_jsonw_kv_uint(w, "max_nodes", s->tree->lim.max_nodes);
	fp_jsonw_kv_uint(w, "max_depth", s->tree->lim.max_depth);
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "outputs");
	fp_jsonw_object_begin(w);
	for (i = 0; i < s->nwritten; i++)
		fp_jsonw_kv_string(w, s->written[i], s->written_at[i]);
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "devices");
	fp__calltree_write_devices(s->tree, w);
	write_env(s, w);

	fp_jsonw_key(w, "counts");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "kernels", st.kernels);
	fp_jsonw_kv_uint(w, "scopes", st.scopes);
	fp_jsonw_kv_uint(w, "trace_records", st.trace_records);
	fp_jsonw_kv_uint(w, "nodes", fp_calltree_node_count(s->tree));
	fp_jsonw_kv_uint(w, "trace_slices_on_overlap_tracks", s->trace_moved);
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "lost");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "dropped_trace_records", st.dropped_trace);
	fp_jsonw_kv_uint(w, "dropped_launch_contexts", st.dropped_launches);
	fp_jsonw_kv_uint(w, "dropped_by_backend", st.dropped_backend);
	fp_jsonw_key(w, "backend_drop_reasons");
	fp_jsonw_array_begin(w);
	for (i = 0; i < s->ndrop_reasons; i++)
		fp_jsonw_string(w, s->drop_reasons[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "events_without_launch_context", st.unmatched);
	fp_jsonw_kv_uint(w, "launches_without_event", st.pending);
	fp_jsonw_kv_uint(w, "failed", st.failed);
	fp_jsonw_kv_uint(w, "unfinished_scopes", open);
	write_open_scopes(s, w);
	fp_jsonw_kv_uint(w, "exits_without_enter", st.exits_without_enter);
	fp_jsonw_kv_uint(w, "scopes_too_deep", st.scopes_too_deep);
	fp_jsonw_kv_uint(w, "ignored_while_inactive", st.ignored_inactive);
	fp_jsonw_kv_uint(w, "flagprism_internal_launches", st.internal);
	fp_jsonw_kv_uint(w, "clamped_timestamps", st.clamped_timestamps);
	fp_jsonw_object_end(w);

	for (i = 0; i < FP__PROF_NFEATURES; i++)
		if (s->features[i]->write_meta)
			s->features[i]->write_meta(s, w);
	fp_jsonw_kv_bool(w, "incomplete", s->nincomplete > 0);
	fp_jsonw_key(w, "incomplete_reasons");
	fp_jsonw_array_begin(w);
	for (i = 0; i < s->nincomplete; i++)
		fp_jsonw_string(w, s->incomplete[i]);
	fp_jsonw_array_end(w);

	fp_jsonw_key(w, "time");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "start_unix_ns", s->origin_unix_ns);
	fp_jsonw_kv_uint(w, "end_unix_ns", s->end_unix_ns);
	fp_jsonw_kv_uint(w, "origin_monotonic_ns", s->origin_ns);
	fp_jsonw_object_end(w);
	return fp_jsonw_object_end(w);
}
