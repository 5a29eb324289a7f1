/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `<name>.vendor.json` writer for Nsight Compute imports: every CSV row verbatim, the
 * launches and where they went, what could not be attached and why, how each tree metric was
 * aggregated, and what ncu could not collect. It is a record for people and scripts to
 * re-derive what the profile shows; FlagPrism does not read it back. Format:
 * docs/formats/profiler-formats.md ("<name>.vendor.json").
 */
#include "fp-setup.h"

#include <flagprism/json.h>

#include "prof/ncu-internal.h"
#include "prof/prof-internal.h"

static const char *page_name(enum fp_ncu_page p)
{
	switch (p) {
	case FP_NCU_PAGE_RAW:
		return "raw";
	case FP_NCU_PAGE_DETAILS:
		return "details";
	case FP_NCU_PAGE_MIXED:
		return "mixed";
	case FP_NCU_PAGE_NONE:
		break;
	}
	return "none";
}

static const char *kind_name(enum fp_ncu_record_kind k)
{
	switch (k) {
	case FP_NCU_RECORD_HEADER:
		return "header";
	case FP_NCU_RECORD_UNITS:
		return "units";
	case FP_NCU_RECORD_DATA:
		return "data";
	case FP_NCU_RECORD_OTHER:
		return "other";
	case FP_NCU_RECORD_BAD:
		break;
	}
	return "bad";
}

static void kv_opt(struct fp_jsonw *w, const char *key, const char *v)
{
	fp_jsonw_key(w, key);
	fp_jsonw_string(w, v); /* NULL writes null */
}

/* The node's path below ROOT as an array of names (ROOT itself: []). */
static int write_path(struct fp_jsonw *w, const struct fp_calltree *t, uint32_t node)
{
	uint32_t stack[FP_CALLTREE_DEFAULT_MAX_DEPTH + 1];
	size_t n = 0, len;
	const char *name;

	while (node != FP_CALLTREE_ROOT && node != FP_CALLTREE_NONE && n < FP_ARRAY_SIZE(stack)) {
		stack[n++] = node;
		node = fp_calltree_node_parent(t, node);
	}
	fp_jsonw_array_begin(w);
	while (n) {
		name = fp_calltree_node_name(t, stack[--n], &len);
		fp_jsonw_string_n(w, name ? name : "", name ? len : 0);
	}
	return fp_jsonw_array_end(w);
}

static void write_dim3(struct fp_jsonw *w, const char *key, bool has, const uint32_t v[3])
{
	fp_jsonw_key(w, key);
	if (!has) {
		fp_jsonw_null(w);
		return;
	}
	fp_jsonw_array_begin(w);
	fp_jsonw_uint(w, v[0]);
	fp_jsonw_uint(w, v[1]);
	fp_jsonw_uint(w, v[2]);
	fp_jsonw_array_end(w);
}

static void write_record(struct fp_jsonw *w, const struct fp_ncu_report *r, size_t i)
{
	const struct fp_ncu_record *rec = &r->records[i];
	const struct fp_ncu_record *h =
		rec->header != FP_NCU_NONE ? &r->records[rec->header] : NULL;
	size_t f;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "kind", kind_name(rec->kind));
	fp_jsonw_kv_uint(w, "line", rec->line);
	if (rec->launch != FP_NCU_NONE)
		fp_jsonw_kv_uint(w, "launch", rec->launch);
	if (rec->kind == FP_NCU_RECORD_HEADER || !h || rec->nfields != h->nfields) {
		/* Headers, rows without one and rows of the wrong shape: the fields as a list. */
		fp_jsonw_key(w, "fields");
		fp_jsonw_array_begin(w);
		for (f = 0; f < rec->nfields; f++)
			fp_jsonw_string_n(w, rec->fields[f], rec->lens[f]);
		fp_jsonw_array_end(w);
	} else {
		fp_jsonw_kv_uint(w, "header", rec->header);
		fp_jsonw_key(w, "values");
		fp_jsonw_object_begin(w);
		for (f = 0; f < rec->nfields; f++) {
			fp_jsonw_key_n(w, h->fields[f], h->lens[f]);
			fp_jsonw_string_n(w, rec->fields[f], rec->lens[f]);
		}
		fp_jsonw_object_end(w);
	}
	fp_jsonw_object_end(w);
}

static void write_launch(struct fp_jsonw *w, const struct fp_ncu_report *r,
			 const struct fp_calltree *t, size_t i)
{
	const struct fp_ncu_launch *l = &r->launches[i];

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "index", i);
	fp_jsonw_kv_string(w, "id", l->id);
	fp_jsonw_kv_string(w, "process_id", l->process_id);
	fp_jsonw_kv_string(w, "kernel", l->kernel);
	fp_jsonw_kv_string(w, "device", l->device);
	write_dim3(w, "grid", l->has_grid, l->grid);
	write_dim3(w, "block", l->has_block, l->block);
	fp_jsonw_kv_uint(w, "first_record", l->first_record);
	fp_jsonw_kv_uint(w, "records", l->nrecords);
	fp_jsonw_kv_uint(w, "metrics", l->nmetrics);
	fp_jsonw_key(w, "duration_ns");
	if (l->duration_ns > 0)
		fp__prof_write_number(w, l->duration_ns);
	else
		fp_jsonw_null(w);
	fp_jsonw_key(w, "node");
	if (t && l->node != FP_CALLTREE_NONE)
		write_path(w, t, l->node);
	else
		fp_jsonw_null(w);
	if (l->unmatched)
		fp_jsonw_kv_string(w, "unmatched", l->unmatched);
	fp_jsonw_object_end(w);
}

static void write_matching(struct fp_jsonw *w, const struct fp_ncu_report *r)
{
	const struct fp_ncu_attach_stats *s = &r->stats;

	fp_jsonw_key(w, "matching");
	if (!r->attached) {
		fp_jsonw_null(w);
		return;
	}
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "order", s->used_trace ? "trace" : "counts");
	fp_jsonw_kv_string(w, "order_note", s->order_note);
	fp_jsonw_kv_uint(w, "launches", s->launches);
	fp_jsonw_kv_uint(w, "matched", s->matched);
	fp_jsonw_kv_uint(w, "unmatched", s->unmatched);
	fp_jsonw_kv_uint(w, "matched_by_base_name", s->by_base_name);
	fp_jsonw_kv_uint(w, "nodes", s->nodes);
	fp_jsonw_kv_uint(w, "values", s->values);
	fp_jsonw_kv_uint(w, "values_missing", s->values_missing);
	fp_jsonw_kv_uint(w, "profile_launches", s->profile_launches);
	fp_jsonw_kv_uint(w, "profile_launches_without_record", s->profile_unmatched);
	fp_jsonw_kv_uint(w, "kernels_split_by_count_rule", s->split_kernels);
	fp_jsonw_object_end(w);
}

static void write_metrics(struct fp_jsonw *w, const struct fp_ncu_report *r)
{
	size_t i;

	fp_jsonw_key(w, "metrics");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->ntmetrics; i++) {
		const struct fp__ncu_tree_metric *m = &r->tmetrics[i];
		const char *weight = NULL;

		if (m->agg == FP_NCU_AGG_MEAN)
			weight = m->weighted_by_time ?
					 (m->weighted_by_launches ? "duration or launches" :
								    "duration") :
					 "launches";
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "tree_name", m->tree_name);
		fp_jsonw_kv_string(w, "section", m->section);
		fp_jsonw_kv_string(w, "name", m->name);
		fp_jsonw_kv_string(w, "base_unit", m->base_unit);
		fp_jsonw_kv_string(w, "aggregation", m->agg == FP_NCU_AGG_SUM ? "sum" : "mean");
		kv_opt(w, "weight", weight);
		fp_jsonw_kv_uint(w, "values", m->values);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}

int fp_ncu_write_vendor(const struct fp_ncu_report *r, const struct fp_calltree *t,
			const struct fp_ncu_vendor_info *info, struct fp_jsonw *w)
{
	static const struct fp_ncu_vendor_info none;
	size_t i;

	if (!r || !w)
		return FP_EINVAL;
	if (!info)
		info = &none;
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "format", "flagprism-vendor");
	fp_jsonw_kv_int(w, "format_version", 1);
	fp_jsonw_kv_string(w, "vendor", "nvidia-ncu");
	kv_opt(w, "source", info->source);
	kv_opt(w, "profile", info->profile);
	kv_opt(w, "trace", r->attached && r->stats.used_trace ? info->trace : NULL);
	fp_jsonw_kv_string(w, "page", page_name(r->page));
	write_matching(w, r);

	fp_jsonw_key(w, "unmatched");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->nlaunches; i++) {
		const struct fp_ncu_launch *l = &r->launches[i];

		if (!l->unmatched)
			continue;
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "launch", i);
		fp_jsonw_kv_uint(w, "record", l->first_record);
		fp_jsonw_kv_string(w, "kernel", l->kernel);
		fp_jsonw_kv_string(w, "reason", l->unmatched);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);

	fp_jsonw_key(w, "profile_launches_without_record");
	fp_jsonw_array_begin(w);
	for (i = 0; t && i < r->nmissing; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_key(w, "node");
		write_path(w, t, r->missing[i].node);
		fp_jsonw_kv_uint(w, "count", r->missing[i].count);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);

	write_metrics(w, r);

	fp_jsonw_key(w, "degradation_reasons");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->ndegs; i++) {
		const struct fp_ncu_degradation *d = &r->degs[i];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "kind", d->kind);
		fp_jsonw_kv_string(w, "detail", d->detail);
		fp_jsonw_kv_uint(w, "count", d->count);
		fp_jsonw_key(w, "record");
		if (d->first_record != FP_NCU_NONE)
			fp_jsonw_uint(w, d->first_record);
		else
			fp_jsonw_null(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);

	fp_jsonw_key(w, "messages");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->nmessages; i++)
		fp_jsonw_string(w, r->messages[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "messages_seen", r->messages_seen);

	fp_jsonw_key(w, "launches");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->nlaunches; i++)
		write_launch(w, r, t, i);
	fp_jsonw_array_end(w);

	fp_jsonw_key(w, "records");
	fp_jsonw_array_begin(w);
	for (i = 0; i < r->nrecords; i++)
		write_record(w, r, i);
	fp_jsonw_array_end(w);
	return fp_jsonw_object_end(w);
}

struct save_arg {
	const struct fp_ncu_report *r;
	const struct fp_calltree *t;
	const struct fp_ncu_vendor_info *info;
};

static int save_fn(void *arg, struct fp_jsonw *w)
{
	const struct save_arg *a = arg;

	return fp_ncu_write_vendor(a->r, a->t, a->info, w);
}

int fp_ncu_save_vendor(const struct fp_ncu_report *r, const struct fp_calltree *t,
		       const struct fp_ncu_vendor_info *info, const char *path, unsigned flags,
		       struct fp_diag *diag)
{
	struct save_arg a = {r, t, info};

	if (!r || !path)
		return FP_EINVAL;
	return fp__prof_save_json(path, flags, save_fn, &a, diag);
}
