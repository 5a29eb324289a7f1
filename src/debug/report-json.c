/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's statement report as JSON (<stem>.json), schema in
 * docs/formats/debugger-report-schema.md: kernel and config, overflow facts, then statements in source
 * order, each with its results (value summaries) and memory accesses (address summaries), every
 * instance in program-then-execution order; then the `findings` (src/debug/findings.c; a
 * sanitize run lists findings only, with an empty `statements` list). Everything goes through
 * the streaming JSON writer; addresses are JSON integers. Members a reader relies on are
 * spelled by <flagprism/debug-keys.h>, the others here. The text twin is report-txt.c.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/debug-keys.h>
#include <flagprism/json.h>
#include <flagprism/version.h>

#include "debug/report-internal.h"

static void shape(struct fp_jsonw *w, const struct fp_dbg_site *s)
{
	unsigned i, n = s->flattened ? 1 : s->ndim;

	fp_jsonw_array_begin(w);
	for (i = 0; i < n && i < 3; i++)
		fp_jsonw_uint(w, s->shape[i]);
	fp_jsonw_array_end(w);
}

/*
 * One instance object, built as compact text and inserted with fp_jsonw_raw(): a large report
 * has millions of members, and one writer call per instance instead of a dozen per instance is
 * what keeps it fast. In the pretty layout this also puts each instance on one line. Everything
 * written here is a number, null, or a string of our own ([A-Za-z0-9_.-]) that needs no escape.
 */
struct ib {
	size_t n;
	char b[1024];
};

/* `"key":`, to join with the text around it */
#define QK(key) "\"" key "\":"

static void ib_str(struct ib *x, const char *s)
{
	size_t n = strlen(s);

	memcpy(x->b + x->n, s, n);
	x->n += n;
}

static void ib_u64(struct ib *x, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(x->b + x->n, tmp + sizeof(tmp) - n, n);
	x->n += n;
}

static void ib_i64(struct ib *x, int64_t v)
{
	if (v < 0) {
		x->b[x->n++] = '-';
		ib_u64(x, (uint64_t)0 - (uint64_t)v);
	} else {
		ib_u64(x, (uint64_t)v);
	}
}

/* A finite double (same text as fp_jsonw_double(), see report-internal.h), or null. */
static void ib_num(struct ib *x, double v, bool present)
{
	int n;

	if (present && isfinite(v) && (n = fp__dbg_fmt_json(v, x->b + x->n, 40)) > 0)
		x->n += (size_t)n;
	else
		ib_str(x, "null");
}

static void ib_program(struct ib *x, const struct fp_dbg_launch *l, uint64_t p, uint32_t exec)
{
	uint64_t xyz[3];

	fp__dbg_program_xyz(l, p, xyz);
	ib_str(x, "{" QK(FP_DBG_KEY_INSTANCE_PROGRAM) "[");
	ib_u64(x, xyz[0]);
	x->b[x->n++] = ',';
	ib_u64(x, xyz[1]);
	x->b[x->n++] = ',';
	ib_u64(x, xyz[2]);
	ib_str(x, "]," QK(FP_DBG_KEY_INSTANCE_EXECUTION));
	ib_u64(x, exec);
}

static void value_summary(struct ib *x, const struct fp_dbg_record *r)
{
	struct fp_dbg_value_summary v;
	bool has;

	fp_dbg_record_value_summary(r, &v);
	has = v.finite_count > 0 && !v.counts_only;
	ib_str(x, "," QK(FP_DBG_KEY_INSTANCE_SUMMARY) "{" QK(FP_DBG_KEY_VALUE_ELEMENT_COUNT));
	ib_u64(x, v.element_count);
	ib_str(x, "," QK(FP_DBG_KEY_VALUE_NAN_COUNT));
	ib_u64(x, v.nan_count);
	ib_str(x, "," QK(FP_DBG_KEY_VALUE_INF_COUNT));
	ib_u64(x, v.inf_count);
	ib_str(x, "," QK(FP_DBG_KEY_VALUE_ZERO_COUNT));
	ib_u64(x, v.zero_count);
	ib_str(x, "," QK(FP_DBG_KEY_VALUE_MEAN));
	ib_num(x, v.mean, has);
	if (!v.is_float && has) {
		ib_str(x, "," QK(FP_DBG_KEY_VALUE_MIN));
		if (v.is_unsigned)
			ib_u64(x, (uint64_t)v.imin);
		else
			ib_i64(x, v.imin);
		ib_str(x, "," QK(FP_DBG_KEY_VALUE_MAX));
		if (v.is_unsigned)
			ib_u64(x, (uint64_t)v.imax);
		else
			ib_i64(x, v.imax);
	} else {
		ib_str(x, "," QK(FP_DBG_KEY_VALUE_MIN));
		ib_num(x, v.min, has);
		ib_str(x, "," QK(FP_DBG_KEY_VALUE_MAX));
		ib_num(x, v.max, has);
	}
	ib_str(x, "," QK("l2_norm"));
	ib_num(x, v.l2_norm, true);
	x->b[x->n++] = '}';
}

static void addr_field(struct ib *x, const char *key, uint64_t v, bool present)
{
	ib_str(x, key);
	if (present)
		ib_u64(x, v);
	else
		ib_str(x, "null");
}

/*
 * What TMA (descriptors) or the boundary check (block pointers) does with the lanes outside the
 * shape of an access: "zero_fill", "nan_fill", "dropped", or NULL for other accesses.
 */
static const char *outside_effect(const struct fp_dbg_site *s)
{
	bool desc = !strcmp(s->form, "tensor_descriptor"), bp = !strcmp(s->form, "block_pointer");

	if ((!desc && !bp) || s->kind == FP_DBG_KIND_DESCRIPTOR)
		return NULL;
	if (s->kind != FP_DBG_KIND_LOAD)
		return "dropped";
	if (!strcmp(s->padding, "nan"))
		return "nan_fill";
	if (!strcmp(s->padding, "zero") || bp)
		return "zero_fill";
	return "fill";
}

static void addr_summary(struct ib *x, const struct fp_dbg_site *s, const struct fp_dbg_record *r)
{
	struct fp_dbg_addr_summary a;
	const char *effect = outside_effect(s);

	fp_dbg_record_addr_summary(r, &a);
	addr_field(x, "," QK(FP_DBG_KEY_INSTANCE_ADDRESS_SUMMARY) "{" QK("first_addr"),
		   a.first_addr, a.has_addresses);
	addr_field(x, "," QK("last_addr"), a.last_addr, a.has_addresses);
	addr_field(x, "," QK(FP_DBG_KEY_ADDRESS_MIN_ADDR), a.min_addr, a.has_addresses);
	addr_field(x, "," QK(FP_DBG_KEY_ADDRESS_MAX_ADDR), a.max_addr, a.has_addresses);
	addr_field(x, "," QK(FP_DBG_KEY_ADDRESS_ACTIVE_LANE_COUNT), a.active_lane_count, true);
	addr_field(x, "," QK(FP_DBG_KEY_ADDRESS_LANE_COUNT), a.lanes, true);
	addr_field(x, "," QK(FP_DBG_KEY_ADDRESS_SPAN_BYTES), a.address_span_bytes, true);
	ib_str(x, "," QK("status") "\"");
	ib_str(x, fp_dbg_addr_status_name(a.status));
	ib_str(x, "\"");
	if (effect && a.status == FP_DBG_ADDR_COMPLETE) {
		addr_field(x, "," QK("lanes_outside_shape"),
			   a.lanes - FP_MIN(a.active_lane_count, a.lanes), true);
		ib_str(x, "," QK("outside_shape") "\"");
		ib_str(x, effect);
		ib_str(x, "\"");
	}
	ib_str(x, "}");
}

static void artifacts_of(struct ib *x, const struct fp__dbg_wctx *c, const struct fp_dbg_record *r)
{
	char name[160];

	if (!c->link_artifacts || fp_dbg_record_dump_offset(r) == FP_DBG_NO_DUMP)
		return;
	if (fp_dbg_record_kind(r) == FP_DBG_KIND_VALUE) {
		fp__dbg_artifact_name(c, r, "value", name, sizeof(name));
		ib_str(x, "," QK("artifact") "\"");
		ib_str(x, name);
		x->b[x->n++] = '"';
	} else {
		fp__dbg_artifact_name(c, r, "addr", name, sizeof(name));
		ib_str(x, "," QK("artifact") "\"");
		ib_str(x, name);
		fp__dbg_artifact_name(c, r, "mask", name, sizeof(name));
		ib_str(x, "\"," QK("mask_artifact") "\"");
		ib_str(x, name);
		x->b[x->n++] = '"';
	}
}

static void instance(struct fp_jsonw *w, const struct fp__dbg_wctx *c, const struct fp_dbg_site *s,
		     const struct fp_dbg_record *r)
{
	struct ib x;

	x.n = 0;
	ib_program(&x, c->launch, r->program, r->execution);
	if (fp_dbg_record_kind(r) == FP_DBG_KIND_VALUE)
		value_summary(&x, r);
	else
		addr_summary(&x, s, r);
	artifacts_of(&x, c, r);
	x.b[x.n++] = '}';
	fp_jsonw_raw(w, x.b, x.n);
}

static void site(struct fp_jsonw *w, const struct fp__dbg_wctx *c, size_t si)
{
	const struct fp_dbg_site *s = fp_dbg_run_site(c->run, si);
	const struct fp_dbg_record *r;
	size_t i, n;

	r = fp_dbg_run_records(c->run, si, &n);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_SITE_ID, s->id);
	if (s->kind != FP_DBG_KIND_VALUE) {
		fp_jsonw_kv_string(w, FP_DBG_KEY_SITE_ACCESS, fp_dbg_kind_name(s->kind));
		if (s->op[0])
			fp_jsonw_kv_string(w, "op", s->op);
		fp_jsonw_kv_string(w, "form", s->form[0] ? s->form : "pointer");
		if (s->padding[0])
			fp_jsonw_kv_string(w, "padding", s->padding);
	}
	fp_jsonw_kv_string(w, FP_DBG_KEY_SITE_NAME, s->name);
	if (n) {
		fp_jsonw_kv_string(w, FP_DBG_KEY_SITE_DTYPE, fp_dtype_name(s->dtype));
		fp_jsonw_key(w, FP_DBG_KEY_SITE_SHAPE);
		shape(w, s);
		if (s->flattened)
			fp_jsonw_kv_uint(w, FP_DBG_KEY_SITE_RANK, s->ndim);
	} else {
		fp_jsonw_kv_null(w, FP_DBG_KEY_SITE_DTYPE);
		fp_jsonw_kv_null(w, FP_DBG_KEY_SITE_SHAPE);
	}
	fp_jsonw_kv_uint(w, FP_DBG_KEY_SITE_INSTANCE_COUNT, n);
	/* false after a record overflow: dropped records are counted per run, not per site */
	fp_jsonw_kv_bool(w, "instances_complete", !fp_dbg_run_info(c->run)->overflow_count);
	if (n)
		fp_jsonw_kv_null(w, "no_records");
	else
		fp_jsonw_kv_string(w, "no_records",
				   fp_dbg_run_info(c->run)->overflow_count ?
					   "records dropped (overflow)" :
					   "not executed");
	fp_jsonw_key(w, FP_DBG_KEY_SITE_INSTANCES);
	fp_jsonw_array_begin(w);
	for (i = 0; i < n; i++)
		instance(w, c, s, &r[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

/* "frame", "file", "function" and "chain" of a statement, finding or unobserved entry. */
static void where(struct fp_jsonw *w, const struct fp__dbg_wctx *c, uint32_t frame)
{
	const struct fp_dbg_frame *f = fp_dbg_run_frame(c->run, frame);

	fp_jsonw_kv_uint(w, "frame", frame);
	fp_jsonw_kv_string(w, "file", fp__dbg_frame_file(c->run, c->launch, frame));
	if (f)
		fp_jsonw_kv_string(w, "function", f->function);
	else
		fp_jsonw_kv_string(w, "function", c->launch->kernel);
	fp_jsonw_key(w, "chain");
	fp__dbg_json_chain(w, c->run, frame);
}

static void reads(struct fp_jsonw *w, const struct fp__dbg_wctx *c,
		  const struct fp_dbg_statement *st)
{
	size_t i, j;

	fp_jsonw_key(w, FP_DBG_KEY_STATEMENT_READS);
	fp_jsonw_array_begin(w);
	for (i = 0; i < st->nsites; i++) {
		const struct fp_dbg_site *s = fp_dbg_run_site(c->run, st->sites[i]);

		for (j = 0; j < s->nreads; j++) {
			fp_jsonw_object_begin(w);
			fp_jsonw_kv_uint(w, "site", s->id);
			fp_jsonw_kv_string(w, FP_DBG_KEY_READ_NAME, s->reads[j].name);
			if (s->reads[j].frame != st->frame ||
			    strcmp(s->reads[j].var, s->reads[j].name)) {
				/* a helper's parameter: the caller's variable it stands for */
				fp_jsonw_kv_uint(w, "frame", s->reads[j].frame);
				fp_jsonw_kv_string(w, "var", s->reads[j].var);
			}
			if (s->reads[j].statement == UINT32_MAX)
				fp_jsonw_kv_null(w, FP_DBG_KEY_READ_LINE);
			else
				fp_jsonw_kv_uint(
					w, FP_DBG_KEY_READ_LINE,
					fp_dbg_run_statement(c->run, s->reads[j].statement)->line);
			fp_jsonw_object_end(w);
		}
	}
	fp_jsonw_array_end(w);
}

static void statement(struct fp_jsonw *w, const struct fp__dbg_wctx *c, size_t idx)
{
	const struct fp_dbg_statement *st = fp_dbg_run_statement(c->run, idx);
	size_t i;
	int pass;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_STATEMENT_ID, st->id);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_STATEMENT_LINE, st->line);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_STATEMENT_COL, st->col);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_STATEMENT_END_LINE, st->end_line);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_STATEMENT_LOOP_DEPTH, st->loop_depth);
	fp_jsonw_kv_string(w, FP_DBG_KEY_STATEMENT_SOURCE, st->source);
	where(w, c, st->frame);
	reads(w, c, st);
	for (pass = 0; pass < 2; pass++) { /* results, then memory */
		fp_jsonw_key(w, pass ? FP_DBG_KEY_STATEMENT_MEMORY : FP_DBG_KEY_STATEMENT_RESULTS);
		fp_jsonw_array_begin(w);
		for (i = 0; i < st->nsites; i++) {
			const struct fp_dbg_site *s = fp_dbg_run_site(c->run, st->sites[i]);

			if ((s->kind == FP_DBG_KIND_VALUE) == !pass)
				site(w, c, st->sites[i]);
		}
		fp_jsonw_array_end(w);
	}
	fp_jsonw_object_end(w);
}

static void header(struct fp_jsonw *w, const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_run_info *in = c->info;
	const struct fp_dbg_launch *l = c->launch;
	unsigned i;

	fp_jsonw_kv_int(w, FP_DBG_KEY_REPORT_SCHEMA_VERSION, FP_DBG_SCHEMA_VERSION);
	fp_jsonw_key(w, "generator");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "name", "flagprism");
	fp_jsonw_kv_string(w, "version", fp_version_string());
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_KERNEL);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, FP_DBG_KEY_KERNEL_NAME, l->kernel);
	fp_jsonw_key(w, FP_DBG_KEY_KERNEL_GRID);
	fp_jsonw_array_begin(w);
	for (i = 0; i < 3; i++)
		fp_jsonw_uint(w, l->grid[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "programs", in->programs);
	fp_jsonw_kv_string(w, FP_DBG_KEY_KERNEL_BACKEND, l->backend);
	fp_jsonw_kv_string(w, FP_DBG_KEY_KERNEL_SOURCE_FILE, l->source_file);
	fp_jsonw_key(w, "num_warps");
	if (l->nw_kernel) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_int(w, "kernel", l->nw_kernel);
		fp_jsonw_kv_int(w, "twin", l->nw_twin);
		fp_jsonw_key(w, "reason");
		if (l->nw_reason)
			fp_jsonw_string(w, l->nw_reason);
		else
			fp_jsonw_null(w);
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_null(w);
	}
	fp_jsonw_key(w, "registers");
	if (l->has_registers) {
		fp_jsonw_object_begin(w);
		fp_jsonw_key(w, "cap");
		if (l->reg_cap)
			fp_jsonw_int(w, l->reg_cap);
		else
			fp_jsonw_null(w);
		fp_jsonw_key(w, "uncapped");
		if (l->reg_uncapped)
			fp_jsonw_int(w, l->reg_uncapped);
		else
			fp_jsonw_null(w);
		fp_jsonw_key(w, "reason");
		if (l->reg_reason)
			fp_jsonw_string(w, l->reg_reason);
		else
			fp_jsonw_null(w);
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_null(w);
	}
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_CONFIG);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "level", in->level);
	fp_jsonw_kv_int(w, "addr_level", in->addr_level);
	fp_jsonw_kv_uint(w, "record_capacity", in->slots_per_program);
	fp_jsonw_kv_uint(w, "dump_capacity_words", in->dump_capacity);
	fp_jsonw_kv_bool(w, FP_DBG_KEY_CONFIG_SANITIZE, l->findings_only);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_RUN);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "script", l->script);
	fp_jsonw_kv_string(w, "timestamp", l->timestamp);
	fp_jsonw_kv_int(w, "index", l->run_index);
	fp_jsonw_kv_string(w, "stem", l->stem);
	fp_jsonw_object_end(w);
	fp_jsonw_kv_bool(w, FP_DBG_KEY_REPORT_COMPLETE, in->complete && !l->error);
	if (l->error)
		fp_jsonw_kv_string(w, "partial_reason", l->error);
	else if (!in->complete)
		fp_jsonw_kv_string(w, "partial_reason",
				   "records did not fit their buffer (see overflow_count and "
				   "dump_overflow_words)");
	else
		fp_jsonw_kv_null(w, "partial_reason");
	fp_jsonw_key(w, "origin");
	fp_jsonw_object_begin(w);
	if (l->launch_path)
		fp_jsonw_kv_string(w, "launch_path", l->launch_path);
	else
		fp_jsonw_kv_null(w, "launch_path");
	if (l->autotune_role) {
		fp_jsonw_key(w, "autotune");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "role", l->autotune_role);
		if (l->autotune_config)
			fp_jsonw_kv_string(w, "config", l->autotune_config);
		else
			fp_jsonw_kv_null(w, "config");
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_kv_null(w, "autotune");
	}
	if (l->test)
		fp_jsonw_kv_string(w, "test", l->test);
	else
		fp_jsonw_kv_null(w, "test");
	fp_jsonw_key(w, "stack");
	fp_jsonw_array_begin(w);
	for (size_t si = 0; si < l->nstack; si++)
		fp_jsonw_string(w, l->stack[si]);
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_REPORT_OVERFLOW_COUNT, in->overflow_count);
	fp_jsonw_kv_uint(w, "full_programs", in->full_programs);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_REPORT_DUMP_OVERFLOW_WORDS, in->dump_overflow);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_REPORT_RECORD_COUNT, in->record_count);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_REPORT_DUMP_COUNT, in->dump_count);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_ARTIFACTS);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_bool(w, FP_DBG_KEY_ARTIFACTS_WRITTEN, c->link_artifacts);
	if (c->link_artifacts) {
		char dir[600];

		snprintf(dir, sizeof(dir), "%s_artifacts", l->stem);
		fp_jsonw_kv_string(w, FP_DBG_KEY_ARTIFACTS_DIR, dir);
	} else {
		fp_jsonw_kv_null(w, FP_DBG_KEY_ARTIFACTS_DIR);
	}
	if (c->want_artifacts && !in->complete)
		fp_jsonw_kv_string(w, "refused",
				   "the run overflowed (records or dump arena): level-2 artifacts "
				   "from an incomplete run are not written");
	else
		fp_jsonw_kv_null(w, "refused");
	fp_jsonw_object_end(w);
}

static void range(struct fp_jsonw *w, const char *key, uint64_t lo, uint64_t hi);

/* The tensor arguments the out-of-bounds checks used (their views and allocations), so readers
 * such as the HTML report can draw accesses against them. */
static void args(struct fp_jsonw *w, const struct fp__dbg_wctx *c)
{
	size_t i, n;
	const struct fp_dbg_arg *a = fp_dbg_findings_args(c->findings, &n);

	fp_jsonw_key(w, FP_DBG_KEY_REPORT_ARGS);
	fp_jsonw_array_begin(w);
	for (i = 0; a && i < n; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, FP_DBG_KEY_ARG_NAME, a[i].name);
		fp_jsonw_kv_uint(w, FP_DBG_KEY_ARG_ELEMENT_SIZE, a[i].element_size);
		range(w, FP_DBG_KEY_ARG_VIEW, a[i].view_lo, a[i].view_hi);
		if (a[i].storage_hi > a[i].storage_lo)
			range(w, FP_DBG_KEY_ARG_STORAGE, a[i].storage_lo, a[i].storage_hi);
		else
			fp_jsonw_kv_null(w, FP_DBG_KEY_ARG_STORAGE);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}

static void program_array(struct fp_jsonw *w, const struct fp_dbg_launch *l, uint64_t p)
{
	uint64_t xyz[3];
	unsigned i;

	fp__dbg_program_xyz(l, p, xyz);
	fp_jsonw_array_begin(w);
	for (i = 0; i < 3; i++)
		fp_jsonw_uint(w, xyz[i]);
	fp_jsonw_array_end(w);
}

static void range(struct fp_jsonw *w, const char *key, uint64_t lo, uint64_t hi)
{
	fp_jsonw_key(w, key);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_RANGE_START, lo);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_RANGE_END, hi);
	fp_jsonw_kv_uint(w, "bytes", hi - lo);
	fp_jsonw_object_end(w);
}

/* One finding (docs/formats/debugger-report-schema.md, FINDING). */
static void finding(struct fp_jsonw *w, const struct fp__dbg_wctx *c,
		    const struct fp_dbg_finding *f)
{
	const struct fp_dbg_statement *st = fp_dbg_run_statement(c->run, f->statement);
	const struct fp_dbg_site *s = fp_dbg_run_site(c->run, f->site);
	size_t i;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, FP_DBG_KEY_FINDING_KIND, fp_dbg_finding_kind_name(f->kind));
	fp_jsonw_kv_string(w, FP_DBG_KEY_FINDING_STATEMENT, st->source);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_FINDING_STATEMENT_ID, st->id);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_FINDING_LINE, st->line);
	where(w, c, st->frame);
	if (s)
		fp_jsonw_kv_uint(w, FP_DBG_KEY_FINDING_SITE, s->id);
	else
		fp_jsonw_kv_null(w, FP_DBG_KEY_FINDING_SITE);
	fp_jsonw_kv_string(w, "subject", f->subject);
	fp_jsonw_key(w, "program");
	program_array(w, c->launch, f->program);
	if (f->execution != FP_DBG_EXECUTION_UNKNOWN)
		fp_jsonw_kv_uint(w, "execution", f->execution);
	else
		fp_jsonw_kv_null(w, "execution");
	if (f->loop_var) {
		fp_jsonw_key(w, "iteration");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "var", f->loop_var);
		fp_jsonw_kv_uint(w, "loop_line", f->loop_line);
		fp_jsonw_kv_int(w, "value", f->loop_value);
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_kv_null(w, "iteration");
	}
	fp_jsonw_key(w, "programs");
	fp_jsonw_array_begin(w);
	for (i = 0; i < f->nprograms; i++)
		program_array(w, c->launch, f->programs[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, "program_count", f->program_count);
	fp_jsonw_kv_bool(w, "programs_more", f->programs_more);
	fp_jsonw_kv_uint(w, "instance_count", f->instance_count);
	fp_jsonw_kv_string(w, FP_DBG_KEY_FINDING_MESSAGE, f->message);
	if (f->kind == FP_DBG_FINDING_OUT_OF_BOUNDS ||
	    f->kind == FP_DBG_FINDING_DESCRIPTOR_EXTENT) {
		fp_jsonw_kv_string(w, "access", s ? fp_dbg_kind_name(s->kind) : "load");
		if (s && s->op[0])
			fp_jsonw_kv_string(w, "op", s->op);
		fp_jsonw_kv_string(w, FP_DBG_KEY_FINDING_PARAM, f->param);
		fp_jsonw_kv_bool(w, "param_known", f->param_known);
		fp_jsonw_kv_string(w, "location", fp_dbg_oob_where_name(f->where));
		if (f->other_param)
			fp_jsonw_kv_string(w, "other_param", f->other_param);
		else
			fp_jsonw_kv_null(w, "other_param");
		fp_jsonw_kv_uint(w, "address", f->address);
		fp_jsonw_kv_uint(w, "bytes_before_start", f->bytes_before);
		fp_jsonw_kv_uint(w, "bytes_past_end", f->bytes_past);
		fp_jsonw_kv_uint(w, "distance_bytes", FP_MAX(f->bytes_before, f->bytes_past));
		if (f->lanes_known)
			fp_jsonw_kv_uint(w, "lanes_out", f->lanes_out);
		else
			fp_jsonw_kv_null(w, "lanes_out");
		fp_jsonw_kv_uint(w, "suppressed", f->suppressed);
		range(w, FP_DBG_KEY_FINDING_VIEW, f->view_lo, f->view_hi);
		range(w, FP_DBG_KEY_FINDING_STORAGE, f->storage_lo, f->storage_hi);
	} else {
		fp_jsonw_kv_uint(w, "count", f->count);
		fp_jsonw_kv_bool(w, "count_is_lower_bound", f->count_is_lower_bound);
		if (f->kind == FP_DBG_FINDING_NAN_ORIGIN || f->kind == FP_DBG_FINDING_INF_ORIGIN) {
			fp_jsonw_kv_bool(w, "from_memory", f->from_memory);
			fp_jsonw_kv_uint(w, "descendants", f->descendants);
		} else {
			if (isfinite(f->value))
				fp_jsonw_kv_double(w, "value", f->value);
			else
				fp_jsonw_kv_null(w, "value");
		}
		if (f->kind == FP_DBG_FINDING_PRECISION_LOSS)
			fp_jsonw_kv_string(w, "target_dtype", fp_dtype_name(f->target_dtype));
	}
	fp_jsonw_object_end(w);
}

static void frames(struct fp_jsonw *w, const struct fp__dbg_wctx *c)
{
	size_t i, n = fp_dbg_run_frame_count(c->run);

	fp_jsonw_key(w, "frames");
	fp_jsonw_array_begin(w);
	for (i = 1; i <= n; i++) {
		const struct fp_dbg_frame *f = fp_dbg_run_frame(c->run, (uint32_t)i);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "id", f->id);
		fp_jsonw_kv_string(w, "function", f->function);
		fp_jsonw_kv_string(w, "file", f->file);
		fp_jsonw_kv_uint(w, "parent", f->parent);
		fp_jsonw_key(w, "call");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "file", f->call_file);
		fp_jsonw_kv_uint(w, "line", f->call_line);
		fp_jsonw_kv_uint(w, "col", f->call_col);
		fp_jsonw_kv_string(w, "source", f->call_source);
		fp_jsonw_object_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}

/* docs/formats/debugger-report-schema.md, "coverage" */
static void coverage(struct fp_jsonw *w, const struct fp__dbg_wctx *c)
{
	struct fp_dbg_coverage cov;
	size_t i, n = fp_dbg_run_unobserved_count(c->run);

	fp_dbg_run_coverage(c->run, &cov);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_COVERAGE);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "memory_sites", cov.memory_sites);
	fp_jsonw_kv_uint(w, "memory_sites_observed", cov.memory_sites_observed);
	fp_jsonw_kv_uint(w, "statements", cov.statements);
	fp_jsonw_kv_uint(w, "statements_observed", cov.statements_observed);
	fp_jsonw_key(w, "unobserved");
	fp_jsonw_array_begin(w);
	for (i = 0; i < n; i++) {
		const struct fp_dbg_unobserved *u = fp_dbg_run_unobserved(c->run, i);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "line", u->line);
		fp_jsonw_kv_string(w, "source", u->source);
		fp_jsonw_kv_string(w, "reason", u->reason);
		fp_jsonw_kv_string(w, "what",
				   u->what == FP_DBG_UNOBSERVED_MEMORY ? "memory" : "statement");
		fp_jsonw_kv_string(w, "file", fp__dbg_frame_file(c->run, c->launch, u->frame));
		fp_jsonw_kv_uint(w, "frame", u->frame);
		fp_jsonw_object_end(w);
	}
	/* memory sites whose records say their addresses are not observable */
	for (i = 0; i < fp_dbg_run_site_count(c->run); i++) {
		uint32_t why = fp_dbg_run_site_unobservable(c->run, i);
		const struct fp_dbg_site *s = fp_dbg_run_site(c->run, i);
		const struct fp_dbg_statement *st;

		if (!why)
			continue;
		st = fp_dbg_run_statement(c->run, s->statement);
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "line", st->line);
		fp_jsonw_kv_string(w, "source", st->source);
		fp_jsonw_kv_string(w, "reason", fp_dbg_addr_status_reason(why));
		fp_jsonw_kv_string(w, "what", "memory");
		fp_jsonw_kv_string(w, "file", fp__dbg_frame_file(c->run, c->launch, st->frame));
		fp_jsonw_kv_uint(w, "frame", st->frame);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

int fp__dbg_write_json(const struct fp__dbg_wctx *c, FILE *f)
{
	struct fp_jsonw *w = fp_jsonw_new_file(f, FP_JSONW_PRETTY);
	size_t i, n = fp_dbg_run_statement_count(c->run);
	int st;

	if (!w)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	fp_jsonw_object_begin(w);
	header(w, c);
	args(w, c);
	coverage(w, c);
	frames(w, c);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_STATEMENTS);
	fp_jsonw_array_begin(w);
	for (i = 0; i < n && !c->launch->findings_only; i++)
		statement(w, c, i);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, FP_DBG_KEY_REPORT_FINDINGS);
	fp_jsonw_array_begin(w);
	for (i = 0; i < fp_dbg_findings_count(c->findings); i++)
		finding(w, c, fp_dbg_findings_at(c->findings, i));
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	st = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!st && fputc('\n', f) == EOF)
		st = FP_EIO;
	return st;
}
