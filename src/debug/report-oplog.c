/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's op log (<stem>_op_log.txt and .json): every Triton IR operation of the compiled
 * twin, with its result types and shapes, its source position mapped back to the user's file
 * (the twin's cache file keeps the user's line numbers), the statement it belongs to and the
 * records of that statement's sites. Operations that come from FlagPrism's own record helpers
 * are recognised and grouped per statement as "instrumentation" instead of being listed as user
 * ops. Without TTIR (or with TTIR we cannot parse) both files say plainly that the op log is
 * unavailable and why. The TTIR parser itself is src/ir/.
 */
#include "fp-setup.h"

#include <flagprism/json.h>
#include <flagprism/ttir.h>

#include "core/core-internal.h"
#include "debug/report-internal.h"

#define NO_STMT UINT32_MAX

struct opinfo {
	const struct fp_ttir_op *op;
	uint32_t stmt;  /* statement index, NO_STMT when the op is outside every statement */
	bool instr;     /* instrumentation (record helpers) */
	bool in_twin;   /* some frame of its location is in the kernel's or a helper's twin */
	bool inlined;   /* that frame is not the innermost (the op comes from a call there) */
	uint32_t frame; /* the frame of that position (0: the kernel's body) */
	struct fp_ttir_loc upos; /* that position: the user's line the op belongs to */
};

struct oplog {
	struct fp_ttir *ir;
	char reason[300]; /* why unavailable, when ir is NULL */
	struct opinfo *ops;
	size_t nops, nuser, ninstr;
	size_t *user_per_stmt; /* user ops per statement (+1 slot for "outside") */
	size_t *instr_per_stmt;
	/* statements of each frame (0..nframes), in source order: by_frame[first[f]..first[f+1]) */
	uint32_t *by_frame;
	size_t *first;
};

/* Equal paths, or one ends with "/" + the other (relative paths in IR locations); a missing or
 * empty path (a launch without a twin file) never matches. */
static bool same_path(const char *a, const char *b)
{
	return a && b && a[0] && b[0] && fp__path_suffix_match(a, b);
}

static bool is_helper_file(const struct fp_dbg_launch *l, const char *file)
{
	const char *base;
	size_t i;

	if (!file)
		return false;
	for (i = 0; i < l->nhelper_files; i++)
		if (same_path(file, l->helper_files[i]))
			return true;
	/* without a list: the package's record helpers, python/flagprism/_records.py */
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	return !strcmp(base, "_records.py") && strstr(file, "flagprism");
}

/* The kernel's own source: the twin's cache file, or the user's file itself. */
static bool is_kernel_file(const struct fp_dbg_launch *l, const char *file)
{
	return file && (same_path(file, l->twin_file) || same_path(file, l->source_file));
}

/* The frame whose twin is `file` (a helper call site's twin, launch `frame_files`), or 0. */
static uint32_t frame_of_file(const struct fp_dbg_launch *l, const char *file)
{
	size_t i;

	for (i = 0; file && i < l->nframe_files; i++)
		if (l->frame_files[i] && same_path(file, l->frame_files[i]))
			return (uint32_t)(i + 1);
	return 0;
}

/* The path to show for a location: twin positions are the user's file (the helper's file for a
 * helper's twin). */
static const char *shown_file(const struct fp__dbg_wctx *c, const char *file)
{
	uint32_t f;

	if (is_kernel_file(c->launch, file))
		return c->launch->source_file;
	f = frame_of_file(c->launch, file);
	if (f && fp_dbg_run_frame(c->run, f))
		return fp_dbg_run_frame(c->run, f)->file;
	return file;
}

/* Statement of `frame` containing `line`: the last one (source order) starting at or before it
 * whose range covers it. */
static uint32_t stmt_of_line(const struct fp_dbg_run *run, const struct oplog *o, uint32_t frame,
			     uint32_t line)
{
	size_t lo, hi, i, base;

	if (frame > fp_dbg_run_frame_count(run))
		return NO_STMT;
	lo = base = o->first[frame];
	hi = o->first[frame + 1];
	while (lo < hi) { /* first statement with line > `line` */
		size_t mid = lo + (hi - lo) / 2;

		if (fp_dbg_run_statement(run, o->by_frame[mid])->line <= line)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > base; i--) {
		const struct fp_dbg_statement *s = fp_dbg_run_statement(run, o->by_frame[i - 1]);

		if (s->end_line >= line)
			return o->by_frame[i - 1];
		if (lo - i > 64) /* statements do not nest deeply; stop looking */
			break;
	}
	return NO_STMT;
}

/* by_frame/first: the statements of each frame in source order (counting sort by frame). */
static int index_frames(const struct fp_dbg_run *run, struct oplog *o)
{
	size_t nst = fp_dbg_run_statement_count(run), nf = fp_dbg_run_frame_count(run), i;
	size_t *fill;

	o->by_frame = fp_calloc(nst ? nst : 1, sizeof(*o->by_frame));
	o->first = fp_calloc(nf + 2, sizeof(*o->first));
	fill = fp_calloc(nf + 2, sizeof(*fill));
	if (!o->by_frame || !o->first || !fill) {
		fp_free(fill);
		return FP_ENOMEM;
	}
	for (i = 0; i < nst; i++)
		o->first[FP_MIN(fp_dbg_run_statement(run, i)->frame, nf) + 1]++;
	for (i = 0; i <= nf; i++)
		o->first[i + 1] += o->first[i];
	memcpy(fill, o->first, (nf + 1) * sizeof(*fill));
	for (i = 0; i < nst; i++)
		o->by_frame[fill[FP_MIN(fp_dbg_run_statement(run, i)->frame, nf)]++] = (uint32_t)i;
	fp_free(fill);
	return FP_OK;
}

/* (line, col) of helper call sites in the kernel source, sorted, for membership tests. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_sorted(const uint64_t *v, size_t n, uint64_t key)
{
	return n && bsearch(&key, v, n, sizeof(*v), cmp_u64);
}

static void oplog_release(struct oplog *o)
{
	fp_ttir_free(o->ir);
	fp_free(o->ops);
	fp_free(o->user_per_stmt);
	fp_free(o->instr_per_stmt);
	fp_free(o->by_frame);
	fp_free(o->first);
}

/* The innermost frame of the op's location that lies in the kernel's twin or a helper's twin. */
static void user_position(const struct fp_dbg_launch *l, struct opinfo *oi)
{
	const struct fp_ttir_op *op = oi->op;
	uint32_t i;

	for (i = 0; i < op->n_frames; i++) {
		const struct fp_ttir_loc *f = &op->frames[i];
		uint32_t fr;

		if (is_kernel_file(l, f->file))
			fr = 0;
		else if (!(fr = frame_of_file(l, f->file)))
			continue;
		oi->in_twin = true;
		oi->inlined = i > 0;
		oi->frame = fr;
		oi->upos = *f;
		return;
	}
}

static uint64_t pos_key(const struct opinfo *oi)
{
	return (uint64_t)oi->frame << 48 ^ (uint64_t)oi->upos.line << 20 ^ oi->upos.col;
}

/*
 * Classify every op. Its position is the innermost frame of its location in the kernel's twin
 * or in a helper's twin (user_position): the statement of that frame holding that line is its
 * statement. An op is instrumentation when its innermost position is in a record helper file,
 * when its Python name is one of the rewriter's own (`__fp...`, but not the `__fpu_...`
 * temporaries that hold hoisted parts of the user's statement), or when it was inlined from
 * the same call expression as such an op (e.g. a tl.sum inside a record helper: its innermost
 * position is in triton/language, but its position in the twin is the record helper's call).
 */
static int oplog_build(const struct fp__dbg_wctx *c, struct oplog *o)
{
	const struct fp_dbg_launch *l = c->launch;
	size_t nst = fp_dbg_run_statement_count(c->run), i, ncall = 0;
	uint64_t *calls = NULL;
	struct fp_diag d;
	int st;

	memset(o, 0, sizeof(*o));
	if (!l->ttir) {
		snprintf(o->reason, sizeof(o->reason), "%s",
			 l->ttir_unavailable_reason ? l->ttir_unavailable_reason :
						      "the launch carried no TTIR");
		return FP_OK;
	}
	fp_diag_clear(&d);
	st = fp_ttir_parse(l->ttir, l->ttir_len, &o->ir, &d);
	if (st == FP_ENOMEM)
		return fp_diag_set(c->diag, st, 0, "out of memory parsing the TTIR");
	if (st) {
		snprintf(o->reason, sizeof(o->reason), "the TTIR could not be parsed (%s: %s)",
			 fp_status_name(st), d.msg);
		o->ir = NULL;
		return FP_OK;
	}
	o->nops = fp_ttir_op_count(o->ir);
	o->ops = fp_calloc(o->nops ? o->nops : 1, sizeof(*o->ops));
	calls = fp_calloc(o->nops ? o->nops : 1, sizeof(*calls));
	o->user_per_stmt = fp_calloc(nst + 1, sizeof(*o->user_per_stmt));
	o->instr_per_stmt = fp_calloc(nst + 1, sizeof(*o->instr_per_stmt));
	if (!o->ops || !calls || !o->user_per_stmt || !o->instr_per_stmt) {
		fp_free(calls);
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	}
	if (index_frames(c->run, o)) {
		fp_free(calls);
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	}
	for (i = 0; i < o->nops; i++) {
		const struct fp_ttir_op *op = fp_ttir_op_at(o->ir, i);
		struct opinfo *oi = &o->ops[i];
		const char *name;

		oi->op = op;
		user_position(l, oi);
		oi->stmt =
			oi->in_twin ? stmt_of_line(c->run, o, oi->frame, oi->upos.line) : NO_STMT;
		/* the name at its position (an op of a helper's twin without a name of its own
		 * must not take the name of the assignment around the helper's call) */
		name = oi->in_twin && oi->frame ? oi->upos.name : op->var_name;
		oi->instr = is_helper_file(l, op->loc.file) ||
			    (name && !strncmp(name, "__fp", 4) && strncmp(name, "__fpu_", 6) != 0);
		if (oi->instr && oi->in_twin && oi->inlined)
			calls[ncall++] = pos_key(oi);
	}
	qsort(calls, ncall, sizeof(*calls), cmp_u64);
	for (i = 0; i < o->nops; i++) {
		struct opinfo *oi = &o->ops[i];

		if (!oi->instr && oi->in_twin && oi->inlined &&
		    in_sorted(calls, ncall, pos_key(oi)))
			oi->instr = true;
		if (oi->instr) {
			o->ninstr++;
			o->instr_per_stmt[oi->stmt == NO_STMT ? nst : oi->stmt]++;
		} else {
			o->nuser++;
			o->user_per_stmt[oi->stmt == NO_STMT ? nst : oi->stmt]++;
		}
	}
	fp_free(calls);
	return FP_OK;
}

static size_t stmt_records(const struct fp_dbg_run *run, const struct fp_dbg_statement *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nsites; i++)
		n += fp_dbg_run_site(run, s->sites[i])->nrecords;
	return n;
}

/* ---- text ------------------------------------------------------------------------------------ */

static void txt_header(struct fp__tbuf *t, const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_launch *l = c->launch;

	fp__tb_str(t, "FlagPrism op log\n");
	fp__tb_printf(t, "kernel:  %s\n", l->kernel);
	fp__tb_printf(t, "source:  %s\n", l->source_file);
	if (l->twin_file)
		fp__tb_printf(t, "twin:    %s (same line numbers as the source)\n", l->twin_file);
}

static void txt_types(struct fp__tbuf *t, const struct fp_ttir_op *op)
{
	uint32_t i;

	if (!op->n_results) {
		fp__tb_ch(t, '-');
		return;
	}
	for (i = 0; i < op->n_results; i++) {
		if (i)
			fp__tb_str(t, ", ");
		fp__tb_str(t, op->results[i].name);
		fp__tb_str(t, ": ");
		fp__tb_str(t, op->results[i].type.text[0] ? op->results[i].type.text : "?");
	}
}

static void txt_op(struct fp__tbuf *t, const struct fp__dbg_wctx *c, const struct opinfo *oi)
{
	const struct fp_ttir_op *op = oi->op;
	char pos[32];

	fp__tb_u64(t, op->index, 5);
	fp__tb_str(t, "  ");
	if (oi->in_twin && oi->frame)
		snprintf(pos, sizeof(pos), "F%u:%u:%u", oi->frame, oi->upos.line, oi->upos.col);
	else if (oi->in_twin)
		snprintf(pos, sizeof(pos), "%u:%u", oi->upos.line, oi->upos.col);
	else if (op->caller.file)
		snprintf(pos, sizeof(pos), "(other file)");
	else
		snprintf(pos, sizeof(pos), "-");
	fp__tb_left(t, pos, 10);
	fp__tb_ch(t, ' ');
	if (oi->stmt == NO_STMT)
		snprintf(pos, sizeof(pos), "-");
	else if (oi->frame)
		snprintf(pos, sizeof(pos), "F%u:L%u", oi->frame,
			 fp_dbg_run_statement(c->run, oi->stmt)->line);
	else
		snprintf(pos, sizeof(pos), "L%u", fp_dbg_run_statement(c->run, oi->stmt)->line);
	fp__tb_left(t, pos, 6);
	fp__tb_ch(t, ' ');
	fp__tb_pad(t, 2 * (size_t)FP_MIN(op->depth, 16u));
	fp__tb_str(t, op->name);
	fp__tb_str(t, "  ");
	txt_types(t, op);
	if (op->var_name)
		fp__tb_printf(t, "  [%s]", op->var_name);
	if (oi->inlined && op->loc.file)
		fp__tb_printf(t, "  (inlined from %s:%u:%u)", shown_file(c, op->loc.file),
			      op->loc.line, op->loc.col);
	else if (!oi->in_twin && op->loc.file)
		fp__tb_printf(t, "  (at %s:%u:%u)", op->loc.file, op->loc.line, op->loc.col);
	fp__tb_ch(t, '\n');
}

static void txt_statements(struct fp__tbuf *t, const struct fp__dbg_wctx *c, const struct oplog *o)
{
	size_t nst = fp_dbg_run_statement_count(c->run), i, j;

	fp__tb_str(t, "\nStatements (observed region), with their ops and records:\n");
	for (i = 0; i < nst; i++) {
		const struct fp_dbg_statement *s = fp_dbg_run_statement(c->run, i);

		if (s->frame) {
			char where[512];

			fp__dbg_where(c->run, s->frame, s->line, where, sizeof(where));
			fp__tb_printf(t, "\n%s:%u  %s\n", where, s->col, s->source);
		} else {
			fp__tb_printf(t, "\nline %u:%u  %s\n", s->line, s->col, s->source);
		}
		fp__tb_printf(t, "  ops: %zu user, %zu instrumentation\n", o->user_per_stmt[i],
			      o->instr_per_stmt[i]);
		fp__tb_printf(t, "  records: %zu", stmt_records(c->run, s));
		for (j = 0; j < s->nsites; j++) {
			const struct fp_dbg_site *site = fp_dbg_run_site(c->run, s->sites[j]);

			fp__tb_printf(t, "%ssite %u %s %s: %zu", j ? "; " : " (", site->id,
				      fp_dbg_kind_name(site->kind), site->name, site->nrecords);
		}
		fp__tb_str(t, s->nsites ? ")\n" : "\n");
	}
	if (o->user_per_stmt[nst] || o->instr_per_stmt[nst])
		fp__tb_printf(t,
			      "\noutside observed statements: %zu user ops, %zu instrumentation\n",
			      o->user_per_stmt[nst], o->instr_per_stmt[nst]);
}

int fp__dbg_write_op_log_txt(const struct fp__dbg_wctx *c, FILE *f)
{
	struct fp__tbuf *t = fp_malloc(sizeof(*t));
	struct oplog o;
	size_t i;
	int st;

	if (!t)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	fp__tb_init(t, f);
	if ((st = oplog_build(c, &o)))
		goto out;
	txt_header(t, c);
	if (!o.ir) {
		fp__tb_printf(t, "\nop log unavailable: %s\n", o.reason);
		goto out;
	}
	fp__tb_printf(t,
		      "ops:     %zu in %zu function(s): %zu user ops listed below, %zu "
		      "instrumentation ops (FlagPrism record helpers) counted per statement\n",
		      o.nops, fp_ttir_func_count(o.ir), o.nuser, o.ninstr);
	fp__tb_str(t, "\n   op  line:col   stmt   operation  results  [python name]\n");
	for (i = 0; i < o.nops; i++)
		if (!o.ops[i].instr)
			txt_op(t, c, &o.ops[i]);
	txt_statements(t, c, &o);
out:
	if (!st)
		st = fp__tb_flush(t);
	oplog_release(&o);
	fp_free(t);
	return st;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_loc(struct fp_jsonw *w, const struct fp__dbg_wctx *c, const char *key,
		     const struct fp_ttir_loc *loc)
{
	fp_jsonw_key(w, key);
	if (!loc->file) {
		fp_jsonw_null(w);
		return;
	}
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "file", shown_file(c, loc->file));
	fp_jsonw_kv_uint(w, "line", loc->line);
	fp_jsonw_kv_uint(w, "col", loc->col);
	fp_jsonw_object_end(w);
}

static void json_type(struct fp_jsonw *w, const struct fp_ttir_type *ty)
{
	uint32_t i;

	fp_jsonw_kv_string(w, "type", ty->text);
	fp_jsonw_kv_string(w, "elem", ty->elem);
	fp_jsonw_key(w, "shape");
	fp_jsonw_array_begin(w);
	for (i = 0; i < ty->rank; i++)
		fp_jsonw_int(w, ty->shape[i]);
	fp_jsonw_array_end(w);
}

static void json_sites(struct fp_jsonw *w, const struct fp__dbg_wctx *c,
		       const struct fp_dbg_statement *s)
{
	size_t j;

	fp_jsonw_array_begin(w);
	for (j = 0; j < s->nsites; j++) {
		const struct fp_dbg_site *site = fp_dbg_run_site(c->run, s->sites[j]);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "site", site->id);
		fp_jsonw_kv_string(w, "kind", fp_dbg_kind_name(site->kind));
		fp_jsonw_kv_string(w, "name", site->name);
		fp_jsonw_kv_uint(w, "records", site->nrecords);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}

static void json_op(struct fp_jsonw *w, const struct fp__dbg_wctx *c, const struct opinfo *oi)
{
	const struct fp_ttir_op *op = oi->op;
	uint32_t i;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "index", op->index);
	fp_jsonw_kv_string(w, "op", op->name);
	fp_jsonw_kv_string(w, "function", op->func_name);
	fp_jsonw_kv_uint(w, "depth", op->depth);
	fp_jsonw_kv_uint(w, "ir_line", op->ir_line);
	fp_jsonw_key(w, "results");
	fp_jsonw_array_begin(w);
	for (i = 0; i < op->n_results; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", op->results[i].name);
		json_type(w, &op->results[i].type);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_kv_string(w, "var_name", op->var_name);
	json_loc(w, c, "loc", &op->loc);
	json_loc(w, c, "caller", &op->caller);
	fp_jsonw_kv_bool(w, "inlined", op->flags & FP_TTIR_OP_CALLSITE);
	fp_jsonw_kv_uint(w, "frame", oi->frame);
	if (oi->in_twin)
		json_loc(w, c, "position", &oi->upos);
	else
		fp_jsonw_kv_null(w, "position");
	if (oi->stmt == NO_STMT) {
		fp_jsonw_kv_null(w, "statement");
		fp_jsonw_key(w, "sites");
		fp_jsonw_array_begin(w);
		fp_jsonw_array_end(w);
	} else {
		const struct fp_dbg_statement *s = fp_dbg_run_statement(c->run, oi->stmt);

		fp_jsonw_key(w, "statement");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "id", s->id);
		fp_jsonw_kv_uint(w, "line", s->line);
		fp_jsonw_kv_uint(w, "frame", s->frame);
		fp_jsonw_object_end(w);
		fp_jsonw_key(w, "sites");
		json_sites(w, c, s);
	}
	fp_jsonw_object_end(w);
}

struct name_count {
	uint32_t stmt;
	const char *name;
};

static int cmp_nc(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;

	if (x->stmt != y->stmt)
		return x->stmt < y->stmt ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Instrumentation grouped per statement: op names with counts, sorted (deterministic). */
static int json_instr(struct fp_jsonw *w, const struct fp__dbg_wctx *c, const struct oplog *o)
{
	struct name_count *v = fp_calloc(o->ninstr ? o->ninstr : 1, sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	for (i = 0; i < o->nops; i++)
		if (o->ops[i].instr)
			v[n++] = (struct name_count){o->ops[i].stmt, o->ops[i].op->name};
	qsort(v, n, sizeof(*v), cmp_nc);
	fp_jsonw_key(w, "instrumentation");
	fp_jsonw_array_begin(w);
	for (i = 0; i < n;) {
		uint32_t s = v[i].stmt;
		size_t j, total = 0;

		for (j = i; j < n && v[j].stmt == s; j++)
			total++;
		fp_jsonw_object_begin(w);
		if (s == NO_STMT)
			fp_jsonw_kv_null(w, "statement_line");
		else
			fp_jsonw_kv_uint(w, "statement_line",
					 fp_dbg_run_statement(c->run, s)->line);
		fp_jsonw_kv_uint(w, "op_count", total);
		fp_jsonw_key(w, "ops");
		fp_jsonw_object_begin(w);
		while (i < n && v[i].stmt == s) {
			size_t k = i;

			while (k < n && v[k].stmt == s && !strcmp(v[k].name, v[i].name))
				k++;
			fp_jsonw_kv_uint(w, v[i].name, k - i);
			i = k;
		}
		fp_jsonw_object_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_free(v);
	return FP_OK;
}

static int json_statements(struct fp_jsonw *w, const struct fp__dbg_wctx *c, const struct oplog *o)
{
	size_t nst = fp_dbg_run_statement_count(c->run), i, j;
	size_t *first = fp_calloc(nst + 2, sizeof(*first));
	uint32_t *order = fp_calloc(o->nuser ? o->nuser : 1, sizeof(*order));

	if (!first || !order) {
		fp_free(first);
		fp_free(order);
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	}
	/* user ops grouped by statement (counting sort keeps IR order within a statement) */
	for (i = 0; i <= nst; i++)
		first[i + 1] = first[i] + o->user_per_stmt[i];
	for (j = 0; j < o->nops; j++) {
		const struct opinfo *oi = &o->ops[j];

		if (!oi->instr)
			order[first[oi->stmt == NO_STMT ? nst : oi->stmt]++] = (uint32_t)j;
	}
	for (i = nst + 1; i > 0; i--) /* shift back: first[i] = start of statement i */
		first[i] = first[i - 1];
	first[0] = 0;
	fp_jsonw_key(w, "statements");
	fp_jsonw_array_begin(w);
	for (i = 0; i < nst; i++) {
		const struct fp_dbg_statement *s = fp_dbg_run_statement(c->run, i);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "id", s->id);
		fp_jsonw_kv_uint(w, "line", s->line);
		fp_jsonw_kv_uint(w, "end_line", s->end_line);
		fp_jsonw_kv_uint(w, "frame", s->frame);
		fp_jsonw_kv_string(w, "source", s->source);
		fp_jsonw_key(w, "user_ops");
		fp_jsonw_array_begin(w);
		for (j = first[i]; j < first[i + 1]; j++)
			fp_jsonw_uint(w, o->ops[order[j]].op->index);
		fp_jsonw_array_end(w);
		fp_jsonw_kv_uint(w, "instrumentation_op_count", o->instr_per_stmt[i]);
		fp_jsonw_kv_uint(w, "records", stmt_records(c->run, s));
		fp_jsonw_key(w, "sites");
		json_sites(w, c, s);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_free(first);
	fp_free(order);
	return FP_OK;
}

int fp__dbg_write_op_log_json(const struct fp__dbg_wctx *c, FILE *f)
{
	const struct fp_dbg_launch *l = c->launch;
	struct fp_jsonw *w;
	struct oplog o;
	size_t i;
	int st;

	if ((st = oplog_build(c, &o)))
		goto out;
	w = fp_jsonw_new_file(f, FP_JSONW_PRETTY);
	if (!w) {
		st = fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
		goto out;
	}
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "schema_version", FP_DBG_SCHEMA_VERSION);
	fp_jsonw_kv_string(w, "kernel", l->kernel);
	fp_jsonw_kv_string(w, "source_file", l->source_file);
	fp_jsonw_kv_string(w, "twin_file", l->twin_file);
	fp_jsonw_kv_bool(w, "available", o.ir != NULL);
	if (!o.ir) {
		fp_jsonw_kv_string(w, "unavailable_reason", o.reason);
		fp_jsonw_key(w, "ops");
		fp_jsonw_array_begin(w);
		fp_jsonw_array_end(w);
	} else {
		fp_jsonw_kv_null(w, "unavailable_reason");
		fp_jsonw_kv_uint(w, "op_count", o.nops);
		fp_jsonw_kv_uint(w, "user_op_count", o.nuser);
		fp_jsonw_kv_uint(w, "instrumentation_op_count", o.ninstr);
		fp_jsonw_key(w, "functions");
		fp_jsonw_array_begin(w);
		for (i = 0; i < fp_ttir_func_count(o.ir); i++) {
			const struct fp_ttir_func *fn = fp_ttir_func_at(o.ir, i);

			fp_jsonw_object_begin(w);
			fp_jsonw_kv_string(w, "name", fn->name);
			fp_jsonw_kv_uint(w, "first_op", fn->first_op);
			fp_jsonw_kv_uint(w, "end_op", fn->end_op);
			fp_jsonw_object_end(w);
		}
		fp_jsonw_array_end(w);
		fp_jsonw_key(w, "ops");
		fp_jsonw_array_begin(w);
		for (i = 0; i < o.nops; i++)
			if (!o.ops[i].instr)
				json_op(w, c, &o.ops[i]);
		fp_jsonw_array_end(w);
		if ((st = json_instr(w, c, &o)) || (st = json_statements(w, c, &o))) {
			fp_jsonw_free(w);
			goto out;
		}
	}
	fp_jsonw_object_end(w);
	st = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!st && fputc('\n', f) == EOF)
		st = FP_EIO;
out:
	oplog_release(&o);
	return st;
}
