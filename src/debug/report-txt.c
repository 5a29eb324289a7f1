/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's statement report as text (<stem>.txt): a header (kernel, grid, backend, levels,
 * overflow), then every observed Triton statement in source order with its text, the earlier
 * results it reads ("x (see line 12)") and one table per site, one row per (program, execution)
 * aligned in columns, after an "all" row that aggregates the instances. The findings come first,
 * right after the header. Column widths are fixed per table from a quick pre-pass, so rows
 * stream out without buffering the table. The layout is described in
 * docs/formats/debugger-report-schema.md; the JSON twin of this report is report-json.c.
 */
#include "fp-setup.h"

#include <math.h>

#include "debug/report-internal.h"

#define GW 13 /* width of a %.6g column: "-1.23457e+308" */

static void program_cell(struct fp__tbuf *t, const struct fp_dbg_launch *l, uint64_t p,
			 unsigned width)
{
	char buf[80];
	size_t n;

	if (l->grid_ndim <= 1) {
		fp__tb_u64(t, p, width);
		return;
	}
	n = fp__dbg_program_label(l, p, buf, sizeof(buf));
	if (width > n)
		fp__tb_pad(t, width - n);
	fp__tb_mem(t, buf, n);
}

static unsigned program_width(const struct fp_dbg_launch *l, uint64_t programs)
{
	char buf[80];
	size_t n = programs ? fp__dbg_program_label(l, programs - 1, buf, sizeof(buf)) : 1;

	/* the last program has the widest label in every coordinate */
	if (l->grid_ndim > 1) {
		uint64_t w = l->grid[0] - 1, h = l->grid[1] - 1, d = l->grid[2] - 1;

		n = fp__dec_len(w) + 1 + fp__dec_len(h);
		if (l->grid_ndim > 2)
			n += 1 + fp__dec_len(d);
	}
	return (unsigned)FP_MAX(n, strlen("program"));
}

static void write_header(struct fp__tbuf *t, const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_run_info *in = c->info;
	const struct fp_dbg_launch *l = c->launch;

	fp__tb_str(t, "FlagPrism debugger report\n");
	fp__tb_printf(t, "kernel:          %s\n", l->kernel);
	fp__tb_printf(t, "source:          %s\n", l->source_file[0] ? l->source_file : "(unknown)");
	fp__tb_printf(t,
		      "grid:            [%" PRIu64 ", %" PRIu64 ", %" PRIu64 "] (%" PRIu64
		      " programs)\n",
		      l->grid[0], l->grid[1], l->grid[2], in->programs);
	fp__tb_printf(t, "backend:         %s\n", l->backend);
	if (l->nw_kernel) {
		fp__tb_printf(t, "num_warps:       kernel %" PRId64 ", twin %" PRId64, l->nw_kernel,
			      l->nw_twin);
		if (l->nw_reason)
			fp__tb_printf(t, " (%s)", l->nw_reason);
		fp__tb_ch(t, '\n');
	}
	if (l->has_registers && (l->reg_cap || l->reg_uncapped)) {
		if (l->reg_cap)
			fp__tb_printf(t, "registers:       twin capped at %" PRId64 " per thread",
				      l->reg_cap);
		else
			fp__tb_printf(t, "registers:       twin not capped");
		if (l->reg_uncapped)
			fp__tb_printf(t, ", %" PRId64 " per thread without a cap", l->reg_uncapped);
		if (l->reg_reason)
			fp__tb_printf(t, " (%s)", l->reg_reason);
		fp__tb_ch(t, '\n');
	}
	fp__tb_printf(t, "level:           %d\n", in->level);
	fp__tb_printf(t, "addr_level:      %d\n", in->addr_level);
	if (in->has_checks) {
		size_t nk;

		fp_dbg_run_checks(c->run, &nk);
		fp__tb_printf(
			t,
			"checks:          %zu, evaluated on the device per instance (the check "
			"area cannot overflow)%s\n",
			nk,
			in->suppress ? "; lanes out of bounds suppressed" :
				       "; lanes out of bounds performed (check_continue=run)");
	}
	if (in->slots_per_program || !in->has_checks) {
		fp__tb_printf(t, "record_capacity: %" PRIu64 " records per program\n",
			      in->slots_per_program);
		fp__tb_printf(t, "records:         %" PRIu64 " stored", in->record_count);
		if (in->dump_count)
			fp__tb_printf(t, ", %" PRIu64 " with a level-2 dump", in->dump_count);
		fp__tb_ch(t, '\n');
		fp__tb_printf(t, "overflow:        %" PRIu64 "\n", in->overflow_count);
	}
	if (in->flags & FP_DBG_FLAG_DUMP_ARENA)
		fp__tb_printf(t, "dump arena:      %" PRIu64 " of %" PRIu64 " words used\n",
			      FP_MIN(in->dump_cursor, in->dump_capacity), in->dump_capacity);
	if (l->launch_path)
		fp__tb_printf(t, "launched via:    %s\n", l->launch_path);
	if (l->autotune_role)
		fp__tb_printf(t, "autotune:        %s config%s%s\n", l->autotune_role,
			      l->autotune_config ? " " : "",
			      l->autotune_config ? l->autotune_config : "");
	if (l->test)
		fp__tb_printf(t, "test:            %s\n", l->test);
	fp__tb_printf(t, "status:          %s\n",
		      in->complete && !l->error ? "complete" : "INCOMPLETE");
	if (l->error)
		fp__tb_printf(t,
			      "INCOMPLETE: the launch raised, so these are the records written "
			      "before it stopped: %s\n",
			      l->error);
	if (in->overflow_count)
		fp__tb_printf(t,
			      "INCOMPLETE: %" PRIu64
			      " records did not fit (record_capacity=%" PRIu64 ")\n",
			      in->overflow_count, in->slots_per_program);
	if (in->dump_overflow)
		fp__tb_printf(t,
			      "INCOMPLETE: %" PRIu64
			      " dump words did not fit (dump capacity=%" PRIu64 " words)\n",
			      in->dump_overflow, in->dump_capacity);
	if (c->want_artifacts && !in->complete)
		fp__tb_str(t, "level-2 artifacts: refused (the run overflowed)\n");
	fp__tb_str(t, "\nEach table has one row per instance (program id");
	fp__tb_str(t, l->grid_ndim > 1 ? " x,y[,z]" : "");
	fp__tb_str(t, ", and 0-based execution within that program), after an \"all\" row "
		      "over every instance.\n");
}

static void write_shape(struct fp__tbuf *t, const struct fp_dbg_site *s)
{
	unsigned i, n = s->flattened ? 1 : s->ndim;

	fp__tb_ch(t, '[');
	for (i = 0; i < n && i < 3; i++) {
		if (i)
			fp__tb_str(t, ", ");
		fp__tb_u64(t, s->shape[i], 0);
	}
	fp__tb_ch(t, ']');
	if (s->flattened)
		fp__tb_printf(t, " (rank %u, flattened)", s->ndim);
}

/* Column widths of a value table, from the largest numbers it will print. */
struct vwidth {
	unsigned prog, exec, elems, nan, inf, zero;
};

static void value_widths(const struct fp__dbg_wctx *c, const struct fp_dbg_site *s,
			 const struct fp_dbg_record *r, size_t n, struct vwidth *w)
{
	uint64_t maxexec = 0, nan = 0, inf = 0, zero = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		maxexec = FP_MAX(maxexec, r[i].execution);
		nan += r[i].words[2] & 0xffffffffu;
		inf += r[i].words[2] >> 32;
		zero += r[i].words[3] & 0xffffffffu;
	}
	w->prog = program_width(c->launch, c->info->programs);
	w->exec = FP_MAX(4, fp__dec_len(maxexec));
	w->elems = FP_MAX(8, fp__dec_len(s->numel * n)); /* the "all" row sums */
	w->nan = FP_MAX(3, fp__dec_len(nan));
	w->inf = FP_MAX(3, fp__dec_len(inf));
	w->zero = FP_MAX(4, fp__dec_len(zero));
}

static void value_row(struct fp__tbuf *t, const struct vwidth *w,
		      const struct fp_dbg_value_summary *v)
{
	bool has = v->finite_count > 0 && !v->counts_only;

	fp__tb_str(t, "  ");
	fp__tb_u64(t, v->element_count, w->elems);
	fp__tb_ch(t, ' ');
	fp__tb_u64(t, v->nan_count, w->nan);
	fp__tb_ch(t, ' ');
	fp__tb_u64(t, v->inf_count, w->inf);
	fp__tb_ch(t, ' ');
	fp__tb_u64(t, v->zero_count, w->zero);
	fp__tb_ch(t, ' ');
	fp__tb_g(t, v->mean, has && isfinite(v->mean), GW);
	if (!v->is_float && has) {
		fp__tb_ch(t, ' ');
		if (v->is_unsigned)
			fp__tb_u64(t, (uint64_t)v->imin, GW);
		else
			fp__tb_i64(t, v->imin, GW);
		fp__tb_ch(t, ' ');
		if (v->is_unsigned)
			fp__tb_u64(t, (uint64_t)v->imax, GW);
		else
			fp__tb_i64(t, v->imax, GW);
	} else {
		fp__tb_ch(t, ' ');
		fp__tb_g(t, v->min, has, GW);
		fp__tb_ch(t, ' ');
		fp__tb_g(t, v->max, has, GW);
	}
	fp__tb_ch(t, ' ');
	fp__tb_g(t, v->l2_norm, true, GW);
	fp__tb_ch(t, '\n');
}

/* Aggregate of all instances of a value site. */
static void value_total(const struct fp_dbg_record *r, size_t n, struct fp_dbg_value_summary *all)
{
	struct fp_dbg_value_summary v;
	size_t i;
	bool first = true;

	memset(all, 0, sizeof(*all));
	for (i = 0; i < n; i++) {
		fp_dbg_record_value_summary(&r[i], &v);
		all->is_float = v.is_float;
		all->is_unsigned = v.is_unsigned;
		all->counts_only |= v.counts_only;
		all->element_count += v.element_count;
		all->nan_count += v.nan_count;
		all->inf_count += v.inf_count;
		all->zero_count += v.zero_count;
		all->finite_count += v.finite_count;
		all->sum += v.sum;
		all->sumsq += v.sumsq;
		if (!v.finite_count)
			continue;
		if (first) {
			all->min = v.min;
			all->max = v.max;
			all->imin = v.imin;
			all->imax = v.imax;
			first = false;
			continue;
		}
		all->min = FP_MIN(all->min, v.min);
		all->max = FP_MAX(all->max, v.max);
		if (v.is_unsigned) {
			all->imin = (int64_t)FP_MIN((uint64_t)all->imin, (uint64_t)v.imin);
			all->imax = (int64_t)FP_MAX((uint64_t)all->imax, (uint64_t)v.imax);
		} else {
			all->imin = FP_MIN(all->imin, v.imin);
			all->imax = FP_MAX(all->imax, v.imax);
		}
	}
	all->mean = all->finite_count ? all->sum / (double)all->finite_count : NAN;
	all->l2_norm = sqrt(all->sumsq);
}

static void value_table(struct fp__tbuf *t, const struct fp__dbg_wctx *c,
			const struct fp_dbg_site *s, const struct fp_dbg_record *r, size_t n)
{
	struct fp_dbg_value_summary v;
	struct vwidth w;
	size_t i;

	value_widths(c, s, r, n, &w);
	fp__tb_printf(t, "    %*s %*s", w.prog, "program", w.exec, "exec");
	fp__tb_printf(t, "  %*s %*s %*s %*s %*s %*s %*s %*s\n", w.elems, "elements", w.nan, "nan",
		      w.inf, "inf", w.zero, "zero", GW, "mean", GW, "min", GW, "max", GW, "l2");
	if (n > 1) {
		value_total(r, n, &v);
		fp__tb_str(t, "    ");
		fp__tb_pad(t, w.prog - 3);
		fp__tb_str(t, "all ");
		fp__tb_pad(t, w.exec - 1);
		fp__tb_ch(t, '-');
		value_row(t, &w, &v);
	}
	for (i = 0; i < n; i++) {
		fp_dbg_record_value_summary(&r[i], &v);
		fp__tb_str(t, "    ");
		program_cell(t, c->launch, r[i].program, w.prog);
		fp__tb_ch(t, ' ');
		fp__tb_u64(t, r[i].execution, w.exec);
		value_row(t, &w, &v);
	}
}

static void addr_table(struct fp__tbuf *t, const struct fp__dbg_wctx *c,
		       const struct fp_dbg_site *s, const struct fp_dbg_record *r, size_t n)
{
	struct fp_dbg_addr_summary a;
	unsigned wp = program_width(c->launch, c->info->programs), we, wa, ws;
	uint64_t maxexec = 0, active = 0, span = 0, lo = UINT64_MAX, hi = 0;
	uint64_t esize = fp_dtype_size(s->dtype);
	bool mixed = false;
	size_t i;

	for (i = 0; i < n; i++) {
		fp_dbg_record_addr_summary(&r[i], &a);
		maxexec = FP_MAX(maxexec, r[i].execution);
		active += a.active_lane_count;
		span = FP_MAX(span, a.address_span_bytes);
		mixed |= a.status != (uint32_t)(r[0].words[2] >> 32);
		if (a.has_addresses) {
			lo = FP_MIN(lo, a.min_addr);
			hi = FP_MAX(hi, a.max_addr);
		}
	}
	if (lo <= hi)
		span = FP_MAX(span, hi - lo + esize);
	we = FP_MAX(4, fp__dec_len(maxexec));
	wa = FP_MAX(6, fp__dec_len(active));
	ws = FP_MAX(10, fp__dec_len(span));
	fp__tb_printf(t, "    %*s %*s", wp, "program", we, "exec");
	fp__tb_printf(t, "  %*s  %-17s %-18s %-18s %-18s %-18s %*s\n", wa, "active", "status",
		      "first_addr", "last_addr", "min_addr", "max_addr", ws, "span_bytes");
	if (n > 1) {
		fp__tb_str(t, "    ");
		fp__tb_pad(t, wp - 3);
		fp__tb_str(t, "all ");
		fp__tb_pad(t, we - 1);
		fp__tb_str(t, "-  ");
		fp__tb_u64(t, active, wa);
		fp__tb_str(t, "  ");
		fp__tb_left(t,
			    mixed ? "mixed" :
				    fp_dbg_addr_status_name((uint32_t)(r[0].words[2] >> 32)),
			    17);
		fp__tb_ch(t, ' ');
		fp__tb_left(t, "-", 18);
		fp__tb_ch(t, ' ');
		fp__tb_left(t, "-", 18);
		fp__tb_ch(t, ' ');
		if (lo <= hi) {
			fp__tb_hex(t, lo);
			fp__tb_ch(t, ' ');
			fp__tb_hex(t, hi);
			fp__tb_ch(t, ' ');
			fp__tb_u64(t, hi - lo + esize, ws);
		} else {
			fp__tb_left(t, "-", 18);
			fp__tb_ch(t, ' ');
			fp__tb_left(t, "-", 18);
			fp__tb_ch(t, ' ');
			fp__tb_u64(t, 0, ws);
		}
		fp__tb_ch(t, '\n');
	}
	for (i = 0; i < n; i++) {
		fp_dbg_record_addr_summary(&r[i], &a);
		fp__tb_str(t, "    ");
		program_cell(t, c->launch, r[i].program, wp);
		fp__tb_ch(t, ' ');
		fp__tb_u64(t, r[i].execution, we);
		fp__tb_str(t, "  ");
		fp__tb_u64(t, a.active_lane_count, wa);
		fp__tb_str(t, "  ");
		fp__tb_left(t, fp_dbg_addr_status_name(a.status), 17);
		fp__tb_ch(t, ' ');
		if (a.has_addresses) {
			fp__tb_hex(t, a.first_addr);
			fp__tb_ch(t, ' ');
			fp__tb_hex(t, a.last_addr);
			fp__tb_ch(t, ' ');
			fp__tb_hex(t, a.min_addr);
			fp__tb_ch(t, ' ');
			fp__tb_hex(t, a.max_addr);
		} else {
			fp__tb_str(t, "-                  -                  -                  "
				      "-                 ");
		}
		fp__tb_ch(t, ' ');
		fp__tb_u64(t, a.address_span_bytes, ws);
		fp__tb_ch(t, '\n');
	}
}

static void write_site(struct fp__tbuf *t, const struct fp__dbg_wctx *c, size_t si)
{
	const struct fp_dbg_site *s = fp_dbg_run_site(c->run, si);
	const struct fp_dbg_record *r;
	size_t n;

	r = fp_dbg_run_records(c->run, si, &n);
	if (s->kind == FP_DBG_KIND_VALUE)
		fp__tb_printf(t, "  [result %s]", s->name);
	else if (s->kind == FP_DBG_KIND_ATOMIC)
		fp__tb_printf(t, "  [atomic_%s on %s]", s->op[0] ? s->op : "rmw", s->name);
	else if (s->kind == FP_DBG_KIND_DESCRIPTOR)
		fp__tb_printf(t, "  [descriptor made from %s]", s->name);
	else
		fp__tb_printf(t, "  [%s %s%s]",
			      s->kind == FP_DBG_KIND_LOAD ? "load from" : "store to",
			      s->form[0] && strcmp(s->form, "pointer") ?
				      (!strcmp(s->form, "block_pointer") ? "block pointer " :
									   "descriptor ") :
				      "",
			      s->name);
	if (!n) {
		const struct fp_dbg_run_info *in = fp_dbg_run_info(c->run);

		/*
		 * After an overflow a site without records may well have run: the buffer counts
		 * the records it dropped for the whole run, not per site.
		 */
		if (in->overflow_count)
			fp__tb_printf(t,
				      "  no records stored: records dropped (overflow): %" PRIu64
				      " records of this run were dropped after %" PRIu64
				      " of its %" PRIu64 " programs filled their %" PRIu64
				      " slots, and the buffer does not say which sites they came "
				      "from (raise record_capacity)\n",
				      in->overflow_count, in->full_programs, in->programs,
				      in->slots_per_program);
		else
			fp__tb_str(t, "  no records (not executed in any program)\n");
		return;
	}
	fp__tb_str(t, "  ");
	fp__tb_str(t, fp_dtype_name(s->dtype));
	if (s->kind != FP_DBG_KIND_VALUE)
		fp__tb_str(t, " pointers ");
	write_shape(t, s);
	fp__tb_printf(t, "  site %u\n", s->id);
	if (!strcmp(s->form, "tensor_descriptor") && s->kind != FP_DBG_KIND_DESCRIPTOR)
		fp__tb_printf(
			t,
			"    tensor descriptor: lanes outside its shape are %s (TMA), not "
			"accessed\n",
			s->kind == FP_DBG_KIND_LOAD ?
				(!strcmp(s->padding, "nan") ? "filled with NaN" : "zero-filled") :
				"dropped");
	else if (!strcmp(s->form, "block_pointer"))
		fp__tb_str(t, "    block pointer: lanes outside its shape on the boundary_check "
			      "dimensions are inactive; on the others they are accessed\n");
	else if (s->kind == FP_DBG_KIND_DESCRIPTOR)
		fp__tb_str(t,
			   "    the bytes the descriptor's shape and strides address (active: its "
			   "element count)\n");
	fp__tb_printf(t, "    instances: %zu", n);
	if (s->ndumps)
		fp__tb_printf(t, " (%zu with a level-2 dump)", s->ndumps);
	if (fp_dbg_run_info(c->run)->overflow_count)
		fp__tb_printf(t,
			      ", maybe more: records dropped (overflow): %" PRIu64 " in this run",
			      fp_dbg_run_info(c->run)->overflow_count);
	fp__tb_ch(t, '\n');
	if (s->kind == FP_DBG_KIND_VALUE)
		value_table(t, c, s, r, n);
	else
		addr_table(t, c, s, r, n);
}

/* "reads: offs (see line 10), mask (see line 11)": each name once, in first-read order. */
static void write_reads(struct fp__tbuf *t, const struct fp__dbg_wctx *c,
			const struct fp_dbg_statement *st)
{
	size_t i, j, k, m, shown = 0;

	for (i = 0; i < st->nsites; i++) {
		const struct fp_dbg_site *s = fp_dbg_run_site(c->run, st->sites[i]);

		for (j = 0; j < s->nreads; j++) {
			const struct fp_dbg_read *rd = &s->reads[j];
			bool dup = false;

			/* earlier occurrence in this statement? (statements read few names) */
			for (k = 0; k <= i && !dup; k++) {
				const struct fp_dbg_site *o = fp_dbg_run_site(c->run, st->sites[k]);
				size_t lim = k == i ? j : o->nreads;

				for (m = 0; m < lim && !dup; m++)
					dup = !strcmp(o->reads[m].name, rd->name);
			}
			if (dup)
				continue;
			fp__tb_str(t, shown++ ? ", " : "  reads: ");
			fp__tb_str(t, rd->name);
			if (strcmp(rd->var, rd->name))
				fp__tb_printf(t, " (= %s)", rd->var);
			if (rd->statement != UINT32_MAX) {
				const struct fp_dbg_statement *d =
					fp_dbg_run_statement(c->run, rd->statement);
				char where[512];

				if (d->frame == st->frame)
					fp__tb_printf(t, " (see line %u)", d->line);
				else {
					fp__dbg_where(c->run, d->frame, d->line, where,
						      sizeof(where));
					fp__tb_printf(t, " (see %s)", where);
				}
			}
		}
	}
	if (shown)
		fp__tb_ch(t, '\n');
}

static void write_source(struct fp__tbuf *t, const struct fp__dbg_wctx *c,
			 const struct fp_dbg_statement *st)
{
	const char *p = st->source, *nl;
	char where[512];

	if (st->frame) {
		/* inside a helper: "attn.py:43 _inner -> attn.py:12:8  qk = tl.dot(q, k)" */
		fp__dbg_where(c->run, st->frame, st->line, where, sizeof(where));
		fp__tb_printf(t, "\n%s:%u  ", where, st->col);
	} else {
		fp__tb_printf(t, "\nline %u:%u  ", st->line, st->col);
	}
	while ((nl = strchr(p, '\n'))) {
		fp__tb_mem(t, p, (size_t)(nl - p));
		fp__tb_str(t, "\n           ");
		p = nl + 1;
	}
	fp__tb_str(t, p);
	fp__tb_ch(t, '\n');
}

/* "program 3", "programs 0, 2, 5, ..." with the totals, then where it happened first. */
static void write_programs(struct fp__tbuf *t, const struct fp__dbg_wctx *c,
			   const struct fp_dbg_finding *f)
{
	char buf[80];
	size_t i, n;

	fp__tb_str(t, f->nprograms > 1 ? "     programs " : "     program ");
	for (i = 0; i < f->nprograms; i++) {
		n = fp__dbg_program_label(c->launch, f->programs[i], buf, sizeof(buf));
		if (i)
			fp__tb_str(t, c->launch->grid_ndim > 1 ? "; " : ", ");
		fp__tb_mem(t, buf, n);
	}
	if (f->programs_more)
		fp__tb_str(t, ", ...");
	fp__tb_printf(t, " (%s%" PRIu64 " program%s, %" PRIu64 " instance%s)\n",
		      f->programs_more ? "more than " : "", f->program_count,
		      f->program_count == 1 && !f->programs_more ? "" : "s", f->instance_count,
		      f->instance_count == 1 ? "" : "s");
	n = fp__dbg_program_label(c->launch, f->program, buf, sizeof(buf));
	fp__tb_str(t, "     first: program ");
	fp__tb_mem(t, buf, n);
	if (f->execution != FP_DBG_EXECUTION_UNKNOWN)
		fp__tb_printf(t, ", execution %u", f->execution);
	if (f->loop_var)
		fp__tb_printf(t, ", %s = %" PRId64 " (loop at line %u)", f->loop_var, f->loop_value,
			      f->loop_line);
	fp__tb_ch(t, '\n');
}

/* The findings, first thing after the header, in plain words. */
static void write_findings(struct fp__tbuf *t, const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_findings *fs = c->findings;
	size_t i, n = fp_dbg_findings_count(fs);

	if (!n) {
		fp__tb_str(t, "\nFINDINGS: none\n");
		return;
	}
	fp__tb_printf(t, "\nFINDINGS: %zu\n", n);
	for (i = 0; i < n; i++) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);
		const struct fp_dbg_statement *st = fp_dbg_run_statement(c->run, f->statement);
		const char *p = st->source, *nl = strchr(p, '\n');

		char where[512];

		fp__dbg_where(c->run, st->frame, st->line, where, sizeof(where));
		fp__tb_printf(t, "  %zu. %s at %s: ", i + 1, fp_dbg_finding_kind_name(f->kind),
			      where);
		fp__tb_mem(t, p, nl ? (size_t)(nl - p) : strlen(p));
		fp__tb_str(t, nl ? " ...\n     " : "\n     ");
		fp__tb_str(t, f->message);
		fp__tb_ch(t, '\n');
		write_programs(t, c, f);
	}
}

/* What was observed out of what exists, and what was not with its reason. */
static void write_coverage(struct fp__tbuf *t, const struct fp__dbg_wctx *c)
{
	struct fp_dbg_coverage cov;
	size_t i, n = fp_dbg_run_unobserved_count(c->run);

	fp_dbg_run_coverage(c->run, &cov);
	fp__tb_printf(t,
		      "\nCOVERAGE: %" PRIu64 " of %" PRIu64 " memory sites, %" PRIu64 " of %" PRIu64
		      " statements observed\n",
		      cov.memory_sites_observed, cov.memory_sites, cov.statements_observed,
		      cov.statements);
	for (i = 0; i < n; i++) {
		const struct fp_dbg_unobserved *u = fp_dbg_run_unobserved(c->run, i);
		const char *p = u->source, *nl = strchr(p, '\n');
		char where[512];

		fp__dbg_where(c->run, u->frame, u->line, where, sizeof(where));
		fp__tb_printf(t, "  not observed (%s) at %s: ",
			      u->what == FP_DBG_UNOBSERVED_MEMORY ? "memory" : "statement", where);
		fp__tb_mem(t, p, nl ? (size_t)(nl - p) : strlen(p));
		fp__tb_printf(t, "\n      %s\n", u->reason);
	}
	for (i = 0; i < fp_dbg_run_site_count(c->run); i++) {
		uint32_t why = fp_dbg_run_site_unobservable(c->run, i);
		const struct fp_dbg_statement *st;
		char where[512];

		if (!why)
			continue;
		st = fp_dbg_run_statement(c->run, fp_dbg_run_site(c->run, i)->statement);
		fp__dbg_where(c->run, st->frame, st->line, where, sizeof(where));
		fp__tb_printf(t, "  not observed (memory) at %s: %s\n      addresses of `%s`: %s\n",
			      where, st->source, fp_dbg_run_site(c->run, i)->name,
			      fp_dbg_addr_status_reason(why));
	}
}

int fp__dbg_write_txt(const struct fp__dbg_wctx *c, FILE *f)
{
	struct fp__tbuf *t = fp_malloc(sizeof(*t));
	size_t i, j, nst = fp_dbg_run_statement_count(c->run);
	int st;

	if (!t)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	fp__tb_init(t, f);
	write_header(t, c);
	write_findings(t, c);
	write_coverage(t, c);
	if (c->launch->findings_only)
		fp__tb_str(t, "\n(sanitize run: statement tables are not written)\n");
	for (i = 0; i < nst && !t->err && !c->launch->findings_only; i++) {
		const struct fp_dbg_statement *s = fp_dbg_run_statement(c->run, i);

		write_source(t, c, s);
		write_reads(t, c, s);
		if (!s->nsites)
			fp__tb_str(t, "  (nothing observed)\n");
		for (j = 0; j < s->nsites; j++)
			write_site(t, c, s->sites[j]);
	}
	st = fp__tb_flush(t);
	fp_free(t);
	return st;
}
