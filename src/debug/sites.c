/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The site table parser: the rewriter's JSON description of the collected region (statements
 * with their text and position, sites with their kind, name and the names they read), checked
 * and copied into a run's arena. It also puts statements in source order and resolves each read
 * name to the earlier statement that defined it, which the reports use for "see line N"
 * references and later analyses for NaN-origin chains. It does not look at the record buffer.
 */
#include "fp-setup.h"

#include <flagprism/json.h>

#include "core/hashmap-internal.h"
#include "core/intern-internal.h"
#include "debug/debug-internal.h"
#include "debug/diag-internal.h"

struct st_ctx {
	struct fp_dbg_run *run;
	const struct fp_json_doc *doc;
	struct fp_diag *diag;
};

int fp__dbg_json_verr(const struct fp_json_doc *doc, struct fp_diag *diag, int status,
		      const struct fp_json_value *v, const char *prefix, const char *fmt,
		      va_list ap)
{
	char msg[200];
	uint32_t line = 0, col = 0;
	uint64_t off = v ? fp_json_offset(v) : 0;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (v)
		fp_json_position(doc, off, &line, &col);
	return fp_diag_set_pos(diag, status, off, line, col, "%s: %s", prefix, msg);
}

int fp__dbg_launch_err(struct fp__dbg_jctx *c, int status, const struct fp_json_value *v,
		       const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fp__dbg_json_verr(c->doc, c->diag, status, v, "launch", fmt, ap);
	va_end(ap);
	return rc;
}

FP_PRINTF(4, 5)
static int st_err(struct st_ctx *c, int status, const struct fp_json_value *v, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fp__dbg_json_verr(c->doc, c->diag, status, v, "site table", fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Read an optional or required integer member within [lo, hi]. `what` names the object for the
 * message ("statements[3]"). Absent optional members keep *out.
 */
static int get_int(struct st_ctx *c, const struct fp_json_value *obj, const char *what,
		   const char *key, bool required, int64_t lo, int64_t hi, int64_t *out)
{
	const struct fp_json_value *v = fp_json_get(obj, key);
	int64_t x;

	if (!v) {
		if (required)
			return st_err(c, FP_EFORMAT, obj, "%s: missing member \"%s\"", what, key);
		return FP_OK;
	}
	if (!fp_json_int64(v, &x) || x < lo || x > hi)
		return st_err(c, FP_EFORMAT, v,
			      "%s.%s: expected an integer in %" PRId64 "..%" PRId64, what, key, lo,
			      hi);
	*out = x;
	return FP_OK;
}

static int get_str(struct st_ctx *c, const struct fp_json_value *obj, const char *what,
		   const char *key, bool required, const char **out)
{
	const struct fp_json_value *v = fp_json_get(obj, key);
	const char *s;
	size_t n;

	if (!v) {
		if (required)
			return st_err(c, FP_EFORMAT, obj, "%s: missing member \"%s\"", what, key);
		*out = "";
		return FP_OK;
	}
	s = fp_json_string(v, &n);
	if (!s)
		return st_err(c, FP_EFORMAT, v, "%s.%s: expected a string", what, key);
	*out = fp_arena_strndup(&c->run->arena, s, n);
	if (!*out)
		return fp_diag_set(c->diag, fp_arena_last_error(&c->run->arena), 0,
				   "site table: out of memory copying strings");
	return FP_OK;
}

static const struct fp_json_value *get_array(struct st_ctx *c, const struct fp_json_value *obj,
					     const char *key, int *st)
{
	const struct fp_json_value *v = fp_json_get(obj, key);

	if (!v) {
		*st = st_err(c, FP_EFORMAT, obj, "missing member \"%s\"", key);
		return NULL;
	}
	if (fp_json_type(v) != FP_JSON_ARRAY) {
		*st = st_err(c, FP_EFORMAT, v, "\"%s\" must be an array", key);
		return NULL;
	}
	return v;
}

static int nomem(struct st_ctx *c)
{
	return fp_diag_set(c->diag, FP_ENOMEM, 0, "site table: out of memory");
}

/*
 * Source order. A statement's key is the (line, column) of every call statement from the kernel
 * down to its frame, then its own (line, column): a helper's statements sort right after the
 * statement calling it (whose key is a prefix of theirs), in the helper's own order. Ties: frame,
 * then id (ids are unique, so the order is total).
 */
struct stmt_key {
	const uint64_t *k; /* n entries */
	uint32_t n;
	struct fp_dbg_statement st;
};

static int cmp_key(const void *a, const void *b)
{
	const struct stmt_key *x = a, *y = b;
	uint32_t i, n = FP_MIN(x->n, y->n);

	for (i = 0; i < n; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	if (x->st.frame != y->st.frame)
		return x->st.frame < y->st.frame ? -1 : 1;
	return x->st.id < y->st.id ? -1 : x->st.id > y->st.id;
}

/* key[0..n) of a statement of `frame` at (line, col) */
static uint32_t frame_key(const struct fp_dbg_run *run, uint32_t frame, uint32_t line, uint32_t col,
			  uint64_t *key)
{
	uint32_t n, d = frame ? run->frames[frame - 1].depth : 0;

	key[d] = (uint64_t)line << 32 | col;
	n = d + 1;
	while (frame) {
		const struct fp_dbg_frame *f = &run->frames[frame - 1];

		key[--d] = (uint64_t)f->call_line << 32 | f->call_col;
		frame = f->parent;
	}
	return n;
}

static int sort_statements(struct st_ctx *c)
{
	struct fp_dbg_run *run = c->run;
	struct stmt_key *keys;
	uint64_t *words;
	size_t i, width = 1;

	if (!run->nstmts)
		return FP_OK;
	for (i = 0; i < run->nframes; i++)
		width = FP_MAX(width, (size_t)run->frames[i].depth + 1);
	keys = fp_calloc(run->nstmts, sizeof(*keys));
	words = fp_calloc(run->nstmts, width * sizeof(*words));
	if (!keys || !words) {
		fp_free(keys);
		fp_free(words);
		return nomem(c);
	}
	for (i = 0; i < run->nstmts; i++) {
		keys[i].st = run->stmts[i];
		keys[i].k = words + i * width;
		keys[i].n = frame_key(run, run->stmts[i].frame, run->stmts[i].line,
				      run->stmts[i].col, words + i * width);
	}
	qsort(keys, run->nstmts, sizeof(*keys), cmp_key);
	for (i = 0; i < run->nstmts; i++)
		run->stmts[i] = keys[i].st;
	fp_free(keys);
	fp_free(words);
	return FP_OK;
}

static int parse_statements(struct st_ctx *c, const struct fp_json_value *arr,
			    struct fp_hashmap *by_id)
{
	struct fp_dbg_run *run = c->run;
	size_t i, n = fp_json_len(arr);
	char what[48];
	int st;

	if (n > FP_DBG_MAX_STATEMENTS)
		return st_err(c, FP_ELIMIT, arr, "more than %u statements", FP_DBG_MAX_STATEMENTS);
	run->stmts = fp_arena_calloc(&run->arena, n ? n : 1, sizeof(*run->stmts));
	if (!run->stmts)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *o = fp_json_at(arr, i);
		struct fp_dbg_statement *s = &run->stmts[i];
		int64_t id = 0, line = 0, col = 0, end_line = 0, depth = 0, frame = 0;

		snprintf(what, sizeof(what), "statements[%zu]", i);
		if (fp_json_type(o) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, o, "%s: expected an object", what);
		if ((st = get_int(c, o, what, "id", true, 0, UINT32_MAX - 1, &id)) ||
		    (st = get_int(c, o, what, "line", true, 1, UINT32_MAX, &line)) ||
		    (st = get_int(c, o, what, "col", false, 0, UINT32_MAX, &col)))
			return st;
		end_line = line;
		if ((st = get_int(c, o, what, "end_line", false, line, UINT32_MAX, &end_line)) ||
		    (st = get_int(c, o, what, "loop_depth", false, 0, UINT32_MAX, &depth)) ||
		    (st = get_int(c, o, what, "frame", false, 0, (int64_t)run->nframes, &frame)) ||
		    (st = get_str(c, o, what, "source", true, &s->source)))
			return st;
		s->id = (uint32_t)id;
		s->line = (uint32_t)line;
		s->col = (uint32_t)col;
		s->end_line = (uint32_t)end_line;
		s->loop_depth = (uint32_t)depth;
		s->frame = (uint32_t)frame;
		if (fp_hashmap_get(by_id, s->id, NULL))
			return st_err(c, FP_EFORMAT, fp_json_get(o, "id"),
				      "%s.id: duplicate statement id %u", what, s->id);
		if ((st = fp_hashmap_put(by_id, s->id, 0)))
			return fp_diag_set(c->diag, st, 0, "site table: out of memory");
	}
	run->nstmts = n;
	if ((st = sort_statements(c)))
		return st;
	for (i = 0; i < n; i++)
		fp_hashmap_put(by_id, run->stmts[i].id, i); /* replaces: never fails */
	return FP_OK;
}

static int parse_kind(const char *s, enum fp_dbg_kind *k)
{
	if (!strcmp(s, "value"))
		*k = FP_DBG_KIND_VALUE;
	else if (!strcmp(s, "load"))
		*k = FP_DBG_KIND_LOAD;
	else if (!strcmp(s, "store"))
		*k = FP_DBG_KIND_STORE;
	else if (!strcmp(s, "atomic"))
		*k = FP_DBG_KIND_ATOMIC;
	else if (!strcmp(s, "descriptor"))
		*k = FP_DBG_KIND_DESCRIPTOR;
	else
		return FP_EFORMAT;
	return FP_OK;
}

/* `frame` and `var` of a cross-frame reference (a read or a check): both required. */
static int frame_ref(struct st_ctx *c, const struct fp_json_value *o, const char *what,
		     uint32_t *frame, const char **var)
{
	int64_t f = 0;
	int st;

	if ((st = get_int(c, o, what, "frame", true, 0, (int64_t)c->run->nframes, &f)) ||
	    (st = get_str(c, o, what, "var", true, var)))
		return st;
	*frame = (uint32_t)f;
	return FP_OK;
}

static int parse_reads(struct st_ctx *c, const struct fp_json_value *o, const char *what,
		       struct fp_dbg_site *site)
{
	const struct fp_json_value *arr = fp_json_get(o, "reads");
	struct fp_dbg_read *reads;
	size_t i, n;

	if (!arr)
		return FP_OK;
	if (fp_json_type(arr) != FP_JSON_ARRAY)
		return st_err(c, FP_EFORMAT, arr, "%s.reads: expected an array of strings", what);
	n = fp_json_len(arr);
	if (!n)
		return FP_OK;
	reads = fp_arena_calloc(&c->run->arena, n, sizeof(*reads));
	if (!reads)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *v = fp_json_at(arr, i);
		size_t len;
		const char *s = fp_json_string(v, &len);
		int st;

		reads[i].statement = UINT32_MAX;
		reads[i].frame = site->frame;
		if (!s && fp_json_type(v) == FP_JSON_OBJECT) {
			/* a helper's parameter standing for a caller's variable */
			char w[96];

			snprintf(w, sizeof(w), "%s.reads[%zu]", what, i);
			if ((st = get_str(c, v, w, "name", true, &reads[i].name)) ||
			    (st = frame_ref(c, v, w, &reads[i].frame, &reads[i].var)))
				return st;
			continue;
		}
		if (!s)
			return st_err(c, FP_EFORMAT, v,
				      "%s.reads[%zu]: expected a string or an object", what, i);
		reads[i].name = fp_arena_strndup(&c->run->arena, s, len);
		if (!reads[i].name)
			return nomem(c);
		reads[i].var = reads[i].name;
	}
	site->reads = reads;
	site->nreads = n;
	return FP_OK;
}

/* Optional string member: NULL when absent or null, else the JSON string (not copied). */
static int opt_cstr(struct st_ctx *c, const struct fp_json_value *o, const char *what,
		    const char *key, const char **out, size_t *len)
{
	const struct fp_json_value *v = fp_json_get(o, key);

	*out = NULL;
	if (!v || fp_json_type(v) == FP_JSON_NULL)
		return FP_OK;
	*out = fp_json_string(v, len);
	if (!*out)
		return st_err(c, FP_EFORMAT, v, "%s.%s: expected a string or null", what, key);
	return FP_OK;
}

/* Role names of the site table; an unknown role is ignored (a later rewriter may add some). */
static enum fp_dbg_role role_of(const char *s, size_t n)
{
	static const char *const names[] = {"",        "loaded",   "cast_src",
					    "divisor", "sqrt_arg", "log_arg"};
	size_t i;

	for (i = 1; s && i < FP_ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && !memcmp(names[i], s, n))
			return (enum fp_dbg_role)i;
	return FP_DBG_ROLE_NONE;
}

static enum fp_dtype dtype_of(struct st_ctx *c, const char *s, size_t n)
{
	enum fp_dtype t = FP_DTYPE_UNKNOWN;
	char *z;

	if (!s)
		return t;
	z = fp_arena_strndup(&c->run->arena, s, n);
	if (z)
		fp_dtype_from_name(z, &t);
	return t;
}

static int parse_checks(struct st_ctx *c, const struct fp_json_value *o, const char *what,
			struct fp_dbg_site *site)
{
	const struct fp_json_value *arr = fp_json_get(o, "checks");
	struct fp_dbg_check *checks;
	size_t i, n;
	int st;

	if (!arr || fp_json_type(arr) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(arr) != FP_JSON_ARRAY)
		return st_err(c, FP_EFORMAT, arr, "%s.checks: expected an array of objects", what);
	n = fp_json_len(arr);
	if (!n)
		return FP_OK;
	checks = fp_arena_calloc(&c->run->arena, n, sizeof(*checks));
	if (!checks)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *e = fp_json_at(arr, i);
		const char *role, *name, *dt;
		size_t rl = 0, nl = 0, dl = 0;

		if (fp_json_type(e) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, e, "%s.checks[%zu]: expected an object", what,
				      i);
		if ((st = opt_cstr(c, e, what, "role", &role, &rl)) ||
		    (st = opt_cstr(c, e, what, "name", &name, &nl)) ||
		    (st = opt_cstr(c, e, what, "target_dtype", &dt, &dl)))
			return st;
		if (!name)
			return st_err(c, FP_EFORMAT, e, "%s.checks[%zu]: missing member \"name\"",
				      what, i);
		checks[i].role = role_of(role, rl);
		checks[i].target_dtype = dtype_of(c, dt, dl);
		checks[i].name = fp_arena_strndup(&c->run->arena, name, nl);
		if (!checks[i].name)
			return nomem(c);
		checks[i].frame = site->frame;
		checks[i].var = checks[i].name;
		if (fp_json_get(e, "var")) {
			char w[96];

			snprintf(w, sizeof(w), "%s.checks[%zu]", what, i);
			if ((st = frame_ref(c, e, w, &checks[i].frame, &checks[i].var)))
				return st;
		}
	}
	site->checks = checks;
	site->nchecks = n;
	return FP_OK;
}

/*
 * The findings inputs of a site (docs/formats/record-format.md, site table): `role`, `target_dtype`,
 * `other`, `load_site`, `base_params`/`base_param` and `checks`. All optional.
 */
static int parse_findings_inputs(struct st_ctx *c, const struct fp_json_value *o, const char *what,
				 struct fp_dbg_site *site, size_t nsites)
{
	static const char *const others[] = {"none", "finite", "nan", "inf", "unknown"};
	const struct fp_json_value *v;
	const char *s;
	size_t n = 0, i;
	int64_t ls = 0;
	int st;

	site->load_site = UINT32_MAX;
	if ((st = get_str(c, o, what, "op", false, &site->op)) ||
	    (st = get_str(c, o, what, "form", false, &site->form)) ||
	    (st = get_str(c, o, what, "padding", false, &site->padding)))
		return st;
	if ((v = fp_json_get(o, "inf_literal")) && fp_json_type(v) != FP_JSON_NULL) {
		if (fp_json_type(v) != FP_JSON_TRUE && fp_json_type(v) != FP_JSON_FALSE)
			return st_err(c, FP_EFORMAT, v, "%s.inf_literal: expected a boolean", what);
		site->inf_literal = fp_json_type(v) == FP_JSON_TRUE;
	}
	if ((st = opt_cstr(c, o, what, "desc_param", &s, &n)))
		return st;
	if (s && !(site->desc_param = fp_arena_strndup(&c->run->arena, s, n)))
		return nomem(c);
	if ((st = opt_cstr(c, o, what, "role", &s, &n)))
		return st;
	site->role = role_of(s, n);
	if ((st = opt_cstr(c, o, what, "target_dtype", &s, &n)))
		return st;
	site->target_dtype = dtype_of(c, s, n);
	if ((st = opt_cstr(c, o, what, "other", &s, &n)))
		return st;
	for (i = 0; s && i < FP_ARRAY_SIZE(others); i++)
		if (strlen(others[i]) == n && !memcmp(others[i], s, n))
			site->other = (enum fp_dbg_other)i;
	if ((v = fp_json_get(o, "load_site")) && fp_json_type(v) != FP_JSON_NULL) {
		if ((st = get_int(c, o, what, "load_site", false, 1, (int64_t)nsites, &ls)))
			return st;
		site->load_site = (uint32_t)(ls - 1);
	}
	if ((st = parse_checks(c, o, what, site)))
		return st;
	v = fp_json_get(o, "base_params");
	if (v && fp_json_type(v) != FP_JSON_NULL) {
		const char **names;

		if (fp_json_type(v) != FP_JSON_ARRAY)
			return st_err(c, FP_EFORMAT, v,
				      "%s.base_params: expected an array of strings", what);
		n = fp_json_len(v);
		names = fp_arena_calloc(&c->run->arena, n ? n : 1, sizeof(*names));
		if (!names)
			return nomem(c);
		for (i = 0; i < n; i++) {
			size_t len;
			const char *p = fp_json_string(fp_json_at(v, i), &len);

			if (!p)
				return st_err(c, FP_EFORMAT, fp_json_at(v, i),
					      "%s.base_params[%zu]: expected a string", what, i);
			if (!(names[i] = fp_arena_strndup(&c->run->arena, p, len)))
				return nomem(c);
		}
		site->base_params = names;
		site->nbase_params = n;
		return FP_OK;
	}
	if ((st = opt_cstr(c, o, what, "base_param", &s, &n)))
		return st;
	if (s) {
		const char **names = fp_arena_calloc(&c->run->arena, 1, sizeof(*names));

		if (!names || !(names[0] = fp_arena_strndup(&c->run->arena, s, n)))
			return nomem(c);
		site->base_params = names;
		site->nbase_params = 1;
	}
	return FP_OK;
}

static int parse_sites(struct st_ctx *c, const struct fp_json_value *arr,
		       const struct fp_hashmap *by_id)
{
	struct fp_dbg_run *run = c->run;
	size_t i, n = fp_json_len(arr);
	char what[48];
	int st;

	if (n > FP_DBG_MAX_SITES)
		return st_err(c, FP_ELIMIT, arr, "more than %u sites", FP_DBG_MAX_SITES);
	run->sites = fp_arena_calloc(&run->arena, n ? n : 1, sizeof(*run->sites));
	if (!run->sites)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *o = fp_json_at(arr, i);
		struct fp_dbg_site *s;
		int64_t id = 0, stmt = 0;
		uint64_t idx;
		const char *kind;

		snprintf(what, sizeof(what), "sites[%zu]", i);
		if (fp_json_type(o) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, o, "%s: expected an object", what);
		if ((st = get_int(c, o, what, "id", true, 1, (int64_t)n, &id)))
			return st_err(
				c, FP_EFORMAT, fp_json_get(o, "id") ? fp_json_get(o, "id") : o,
				"%s.id: site ids must be 1..%zu (one per site, dense)", what, n);
		s = &run->sites[id - 1];
		if (s->id)
			return st_err(c, FP_EFORMAT, fp_json_get(o, "id"),
				      "%s.id: duplicate site id %" PRId64, what, id);
		s->id = (uint32_t)id;
		if ((st = get_int(c, o, what, "statement", true, 0, UINT32_MAX, &stmt)))
			return st;
		if (!fp_hashmap_get(by_id, (uint64_t)stmt, &idx))
			return st_err(c, FP_EFORMAT, fp_json_get(o, "statement"),
				      "%s.statement: no statement with id %" PRId64, what, stmt);
		s->statement = (uint32_t)idx;
		s->frame = run->stmts[idx].frame;
		if ((st = get_str(c, o, what, "kind", true, &kind)))
			return st;
		if (parse_kind(kind, &s->kind))
			return st_err(
				c, FP_EFORMAT, fp_json_get(o, "kind"),
				"%s.kind: expected \"value\", \"load\", \"store\", \"atomic\" or "
				"\"descriptor\"",
				what);
		if ((st = get_str(c, o, what, "name", true, &s->name)) ||
		    (st = parse_reads(c, o, what, s)) ||
		    (st = parse_findings_inputs(c, o, what, s, n)))
			return st;
	}
	run->nsites = n;
	return FP_OK;
}

/* Give every statement its sites, by ascending site id (counting sort on the statement index). */
static int link_sites(struct st_ctx *c)
{
	struct fp_dbg_run *run = c->run;
	size_t *fill, i;
	uint32_t *all;

	all = fp_arena_calloc(&run->arena, run->nsites ? run->nsites : 1, sizeof(*all));
	fill = fp_calloc(run->nstmts + 1, sizeof(*fill));
	if (!all || !fill) {
		fp_free(fill);
		return nomem(c);
	}
	for (i = 0; i < run->nsites; i++)
		run->stmts[run->sites[i].statement].nsites++;
	for (i = 0; i < run->nstmts; i++)
		fill[i + 1] = fill[i] + run->stmts[i].nsites;
	for (i = 0; i < run->nstmts; i++)
		run->stmts[i].sites = all + fill[i];
	for (i = 0; i < run->nsites; i++)
		all[fill[run->sites[i].statement]++] = (uint32_t)i;
	fp_free(fill);
	return FP_OK;
}

int fp__dbg_var_key(struct fp_intern *names, uint32_t frame, const char *name, bool add,
		    uint32_t *id)
{
	char small[256], *buf = small;
	size_t n = strlen(name) + 12;
	int st, len;

	if (n > sizeof(small) && !(buf = fp_malloc(n)))
		return FP_ENOMEM;
	len = snprintf(buf, n, "%u:%s", frame, name);
	st = add ? fp_intern_add(names, buf, (size_t)len, id) :
		   fp_intern_find(names, buf, (size_t)len, id);
	if (buf != small)
		fp_free(buf);
	return st;
}

struct defs {
	struct fp_intern *names;
	uint32_t *def; /* per variable id: index of its latest defining statement */
	size_t ndef;
};

static int add_defs(struct defs *d, const struct fp_dbg_run *run, size_t i)
{
	const struct fp_dbg_statement *stmt = &run->stmts[i];
	size_t j;
	uint32_t id;
	int st;

	for (j = 0; j < stmt->nsites; j++) {
		const struct fp_dbg_site *s = &run->sites[stmt->sites[j]];

		if (s->kind != FP_DBG_KIND_VALUE)
			continue;
		if ((st = fp__dbg_var_key(d->names, stmt->frame, s->name, true, &id)))
			return st;
		if (id >= d->ndef) {
			uint32_t *nd = fp_reallocarray(d->def, (size_t)id + 1, sizeof(*d->def));

			if (!nd)
				return FP_ENOMEM;
			d->def = nd;
			d->ndef = (size_t)id + 1;
		}
		d->def[id] = (uint32_t)i;
	}
	return FP_OK;
}

/* Is statement `a`'s key a proper prefix of `b`'s (b is inside a helper `a` calls)? */
static bool calls_into(const struct fp_dbg_run *run, const struct fp_dbg_statement *a,
		       const struct fp_dbg_statement *b)
{
	uint64_t ka[FP_DBG_MAX_FRAME_DEPTH + 1], kb[FP_DBG_MAX_FRAME_DEPTH + 1];
	uint32_t na = frame_key(run, a->frame, a->line, a->col, ka);
	uint32_t nb = frame_key(run, b->frame, b->line, b->col, kb);

	return na < nb && !memcmp(ka, kb, na * sizeof(*ka));
}

/*
 * Resolve reads: walking statements in source order, a read refers to the latest earlier
 * statement with a value site of that variable (the name in the read's frame). Reads are
 * resolved before the statement's own definitions are added, so `x = x + 1` points at the
 * previous x; and the definitions of a statement that calls helpers are added only after the
 * helpers' statements (which follow it in source order), which run before its results exist.
 */
static int resolve_reads(struct st_ctx *c)
{
	struct fp_dbg_run *run = c->run;
	struct defs d = {.names = fp_intern_new()};
	uint32_t *pending = NULL, id;
	size_t npending = 0, i, j, k;
	int st = FP_OK;

	pending = fp_calloc(run->nstmts + 1, sizeof(*pending));
	if (!d.names || !pending) {
		st = FP_ENOMEM;
		goto fail_defs;
	}
	for (i = 0; i < run->nstmts; i++) {
		const struct fp_dbg_statement *stmt = &run->stmts[i];

		while (npending && !calls_into(run, &run->stmts[pending[npending - 1]], stmt))
			if ((st = add_defs(&d, run, pending[--npending])))
				goto fail_defs;
		for (j = 0; j < stmt->nsites; j++) {
			struct fp_dbg_site *s = &run->sites[stmt->sites[j]];

			for (k = 0; k < s->nreads; k++) {
				struct fp_dbg_read *r = (struct fp_dbg_read *)&s->reads[k];

				if (!fp__dbg_var_key(d.names, r->frame, r->var, false, &id) &&
				    id < d.ndef)
					r->statement = d.def[id];
			}
		}
		pending[npending++] = (uint32_t)i;
	}
	while (npending)
		if ((st = add_defs(&d, run, pending[--npending])))
			goto fail_defs;
	fp_free(pending);
	fp_free(d.def);
	fp_intern_free(d.names);
	return FP_OK;

fail_defs:
	fp_free(pending);
	fp_free(d.def);
	fp_intern_free(d.names);
	return fp_diag_set(c->diag, st, 0, "site table: out of memory resolving reads");
}

static int parse_frames(struct st_ctx *c, const struct fp_json_value *root)
{
	struct fp_dbg_run *run = c->run;
	const struct fp_json_value *arr = fp_json_get(root, "frames");
	size_t i, n;
	char what[48];
	int st;

	if (!arr || fp_json_type(arr) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(arr) != FP_JSON_ARRAY)
		return st_err(c, FP_EFORMAT, arr, "\"frames\" must be an array");
	n = fp_json_len(arr);
	if (n > FP_DBG_MAX_FRAMES)
		return st_err(c, FP_ELIMIT, arr, "more than %u frames", FP_DBG_MAX_FRAMES);
	if (!n)
		return FP_OK;
	run->frames = fp_arena_calloc(&run->arena, n, sizeof(*run->frames));
	if (!run->frames)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *o = fp_json_at(arr, i), *call;
		struct fp_dbg_frame *f = &run->frames[i];
		int64_t id = 0, parent = 0, line = 0, col = 0;

		snprintf(what, sizeof(what), "frames[%zu]", i);
		if (fp_json_type(o) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, o, "%s: expected an object", what);
		if ((st = get_int(c, o, what, "id", true, 1, INT64_MAX, &id)))
			return st;
		if ((size_t)id != i + 1)
			return st_err(c, FP_EFORMAT, fp_json_get(o, "id"),
				      "%s.id: frame ids must be 1..n in order", what);
		if ((st = get_int(c, o, what, "parent", true, 0, (int64_t)i, &parent)) ||
		    (st = get_str(c, o, what, "function", true, &f->function)) ||
		    (st = get_str(c, o, what, "file", false, &f->file)))
			return st;
		call = fp_json_get(o, "call");
		if (!call || fp_json_type(call) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, call ? call : o, "%s.call: expected an object",
				      what);
		snprintf(what, sizeof(what), "frames[%zu].call", i);
		if ((st = get_int(c, call, what, "line", true, 1, UINT32_MAX, &line)) ||
		    (st = get_int(c, call, what, "col", false, 0, UINT32_MAX, &col)) ||
		    (st = get_str(c, call, what, "file", false, &f->call_file)) ||
		    (st = get_str(c, call, what, "source", false, &f->call_source)))
			return st;
		f->id = (uint32_t)id;
		f->parent = (uint32_t)parent;
		f->call_line = (uint32_t)line;
		f->call_col = (uint32_t)col;
		f->depth = parent ? run->frames[parent - 1].depth + 1 : 1;
		if (f->depth > FP_DBG_MAX_FRAME_DEPTH)
			return st_err(c, FP_ELIMIT, o, "frames[%zu]: helpers nested deeper than %u",
				      i, FP_DBG_MAX_FRAME_DEPTH);
	}
	run->nframes = n;
	return FP_OK;
}

/* An optional array of strings into the arena; *n = 0 and *out = NULL when absent or null. */
static int str_array(struct st_ctx *c, const struct fp_json_value *v, const char *what, size_t max,
		     const char ***out, size_t *n)
{
	size_t i, len;

	*out = NULL;
	*n = 0;
	if (!v || fp_json_type(v) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(v) != FP_JSON_ARRAY)
		return st_err(c, FP_EFORMAT, v, "%s: expected an array of strings", what);
	if (fp_json_len(v) > max)
		return st_err(c, FP_ELIMIT, v, "%s: more than %zu entries", what, max);
	if (!fp_json_len(v))
		return FP_OK;
	*out = fp_arena_calloc(&c->run->arena, fp_json_len(v), sizeof(**out));
	if (!*out)
		return nomem(c);
	for (i = 0; i < fp_json_len(v); i++) {
		const char *sv = fp_json_string(fp_json_at(v, i), &len);

		if (!sv)
			return st_err(c, FP_EFORMAT, fp_json_at(v, i), "%s[%zu]: expected a string",
				      what, i);
		if (!((*out)[i] = fp_arena_strndup(&c->run->arena, sv, len)))
			return nomem(c);
	}
	*n = fp_json_len(v);
	return FP_OK;
}

/*
 * The kernel's parameter names (`params`) and its check slots (`check_slots`,
 * docs/formats/record-format.md): each slot's rule, statement, subject and what the findings
 * say of it; the device's words come from the buffer (decode.c).
 */
static int parse_check_slots(struct st_ctx *c, const struct fp_json_value *root,
			     const struct fp_hashmap *by_id)
{
	struct fp_dbg_run *run = c->run;
	const struct fp_json_value *arr = fp_json_get(root, "check_slots"), *pv;
	size_t i, n;
	char what[48];
	int st;

	pv = fp_json_get(root, "params");
	if (pv && fp_json_type(pv) == FP_JSON_ARRAY &&
	    (st = str_array(c, pv, "params", FP_DBG_MAX_PARAMS, &run->params, &run->nparams)))
		return st;
	if (pv && fp_json_type(pv) != FP_JSON_ARRAY && fp_json_type(pv) != FP_JSON_NULL)
		return st_err(c, FP_EFORMAT, pv, "\"params\" must be an array of strings");
	if (!arr || fp_json_type(arr) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(arr) != FP_JSON_ARRAY)
		return st_err(c, FP_EFORMAT, arr, "\"check_slots\" must be an array");
	n = fp_json_len(arr);
	if (n > FP_DBG_MAX_CHECKS)
		return st_err(c, FP_ELIMIT, arr, "more than %u check slots", FP_DBG_MAX_CHECKS);
	if (!n)
		return FP_OK;
	run->checks = fp_arena_calloc(&run->arena, n, sizeof(*run->checks));
	if (!run->checks)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *o = fp_json_at(arr, i), *loop;
		struct fp_dbg_check_slot *k = &run->checks[i];
		int64_t slot = -1, stmt = 0, site = 0, line = 0;
		const char *rule, *dt;
		uint64_t idx;

		snprintf(what, sizeof(what), "check_slots[%zu]", i);
		if (fp_json_type(o) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, o, "%s: expected an object", what);
		if ((st = get_int(c, o, what, "slot", true, 0, INT64_MAX, &slot)))
			return st;
		if ((size_t)slot != i)
			return st_err(c, FP_EFORMAT, fp_json_get(o, "slot"),
				      "%s.slot: slots must be numbered 0..n-1 in order", what);
		if ((st = get_str(c, o, what, "rule", true, &rule)) ||
		    (st = get_int(c, o, what, "statement", true, 0, UINT32_MAX, &stmt)) ||
		    (st = get_int(c, o, what, "site", false, 0, (int64_t)run->nsites, &site)) ||
		    (st = get_str(c, o, what, "subject", false, &k->subject)) ||
		    (st = get_str(c, o, what, "target_dtype", false, &dt)))
			return st;
		k->rule = fp_dbg_rule_find(rule);
		if (k->rule == FP_DBG_RULE_UNKNOWN)
			return st_err(c, FP_EFORMAT, fp_json_get(o, "rule"),
				      "%s.rule: unknown rule \"%s\"", what, rule);
		if (!fp_hashmap_get(by_id, (uint64_t)stmt, &idx))
			return st_err(c, FP_EFORMAT, fp_json_get(o, "statement"),
				      "%s.statement: no statement with id %" PRId64, what, stmt);
		k->statement = (uint32_t)idx;
		k->site = site ? (uint32_t)site - 1 : UINT32_MAX;
		k->target_dtype = FP_DTYPE_UNKNOWN;
		if (dt[0])
			fp_dtype_from_name(dt, &k->target_dtype);
		if ((st = str_array(c, fp_json_get(o, "cands"), what, FP_DBG_MAX_PARAMS,
				    (const char ***)&k->cands, &k->ncands)) ||
		    (st = str_array(c, fp_json_get(o, "reads"), what, 4096,
				    (const char ***)&k->reads, &k->nreads)) ||
		    (st = str_array(c, fp_json_get(o, "stores"), what, FP_DBG_MAX_PARAMS,
				    (const char ***)&k->stores, &k->nstores)))
			return st;
		if ((loop = fp_json_get(o, "suppressed")) && fp_json_type(loop) != FP_JSON_NULL) {
			if (fp_json_type(loop) != FP_JSON_TRUE &&
			    fp_json_type(loop) != FP_JSON_FALSE)
				return st_err(c, FP_EFORMAT, loop,
					      "%s.suppressed: expected a boolean", what);
			k->suppressed = fp_json_type(loop) == FP_JSON_TRUE;
		}
		loop = fp_json_get(o, "loop");
		if (loop && fp_json_type(loop) == FP_JSON_OBJECT) {
			const char *var;

			if ((st = get_str(c, loop, what, "var", true, &var)) ||
			    (st = get_int(c, loop, what, "line", false, 0, UINT32_MAX, &line)))
				return st;
			k->loop_var = var;
			k->loop_line = (uint32_t)line;
		}
	}
	run->nchecks = n;
	return FP_OK;
}

static int parse_unobserved(struct st_ctx *c, const struct fp_json_value *root)
{
	struct fp_dbg_run *run = c->run;
	const struct fp_json_value *arr = fp_json_get(root, "unobserved");
	size_t i, n;
	char what[48];
	int st;

	if (!arr || fp_json_type(arr) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(arr) != FP_JSON_ARRAY)
		return st_err(c, FP_EFORMAT, arr, "\"unobserved\" must be an array");
	n = fp_json_len(arr);
	if (n > FP_DBG_MAX_UNOBSERVED)
		return st_err(c, FP_ELIMIT, arr, "more than %u unobserved entries",
			      FP_DBG_MAX_UNOBSERVED);
	if (!n)
		return FP_OK;
	run->unobserved = fp_arena_calloc(&run->arena, n, sizeof(*run->unobserved));
	if (!run->unobserved)
		return nomem(c);
	for (i = 0; i < n; i++) {
		const struct fp_json_value *o = fp_json_at(arr, i);
		struct fp_dbg_unobserved *u = &run->unobserved[i];
		int64_t line = 0, col = 0, frame = 0;
		const char *kind;

		snprintf(what, sizeof(what), "unobserved[%zu]", i);
		if (fp_json_type(o) != FP_JSON_OBJECT)
			return st_err(c, FP_EFORMAT, o, "%s: expected an object", what);
		if ((st = get_str(c, o, what, "what", true, &kind)) ||
		    (st = get_int(c, o, what, "line", true, 1, UINT32_MAX, &line)) ||
		    (st = get_int(c, o, what, "col", false, 0, UINT32_MAX, &col)) ||
		    (st = get_int(c, o, what, "frame", false, 0, (int64_t)run->nframes, &frame)) ||
		    (st = get_str(c, o, what, "source", true, &u->source)) ||
		    (st = get_str(c, o, what, "reason", true, &u->reason)))
			return st;
		if (!strcmp(kind, "memory"))
			u->what = FP_DBG_UNOBSERVED_MEMORY;
		else if (!strcmp(kind, "statement"))
			u->what = FP_DBG_UNOBSERVED_STATEMENT;
		else
			return st_err(c, FP_EFORMAT, fp_json_get(o, "what"),
				      "%s.what: expected \"memory\" or \"statement\"", what);
		u->line = (uint32_t)line;
		u->col = (uint32_t)col;
		u->frame = (uint32_t)frame;
	}
	run->nunobserved = n;
	return FP_OK;
}

int fp__dbg_sites_parse(struct fp_dbg_run *run, const char *json, size_t len, struct fp_diag *diag)
{
	struct fp_json_limits lim = {.max_bytes = len, .max_depth = 16, .max_values = 0};
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *root, *stmts, *sites;
	struct fp_hashmap by_id;
	struct st_ctx c = {.run = run, .diag = diag};
	int64_t version = 0, level = 0, addr_level = 0;
	size_t i;
	int st;

	fp_hashmap_init(&by_id);
	st = fp_json_parse(json, len, &lim, &doc, diag);
	if (st) {
		if (diag) {
			char inner[sizeof(diag->msg) - 12]; /* room for the prefix */

			memcpy(inner, diag->msg, sizeof(inner) - 1);
			inner[sizeof(inner) - 1] = '\0';
			snprintf(diag->msg, sizeof(diag->msg), "site table: %s", inner);
		}
		return st;
	}
	c.doc = doc;
	root = fp_json_root(doc);
	if (fp_json_type(root) != FP_JSON_OBJECT) {
		st = st_err(&c, FP_EFORMAT, root, "expected a JSON object");
		goto fail_parse;
	}
	if ((st = get_int(&c, root, "root", "version", true, INT64_MIN, INT64_MAX, &version)))
		goto fail_parse;
	if (version != 1) {
		st = st_err(&c, FP_EVERSION, fp_json_get(root, "version"),
			    "version %" PRId64 " is not supported (this build reads version 1)",
			    version);
		goto fail_parse;
	}
	if ((st = get_str(&c, root, "root", "kernel", false, &run->info.kernel)) ||
	    (st = get_str(&c, root, "root", "file", false, &run->info.file)) ||
	    (st = get_int(&c, root, "root", "level", false, 0, 2, &level)) ||
	    (st = get_int(&c, root, "root", "addr_level", false, 0, 2, &addr_level)))
		goto fail_parse;
	run->info.level = (int)level;
	run->info.addr_level = (int)addr_level;
	if (!(stmts = get_array(&c, root, "statements", &st)) ||
	    !(sites = get_array(&c, root, "sites", &st)))
		goto fail_parse;
	if ((st = parse_frames(&c, root)) || (st = parse_statements(&c, stmts, &by_id)) ||
	    (st = parse_sites(&c, sites, &by_id)) || (st = parse_unobserved(&c, root)) ||
	    (st = parse_check_slots(&c, root, &by_id)))
		goto fail_parse;
	for (i = 0; i < run->nsites; i++) {
		if (!run->sites[i].id) { /* cannot happen: n ids in 1..n, no duplicates */
			st = st_err(&c, FP_EFORMAT, sites, "site id %zu missing", i + 1);
			goto fail_parse;
		}
	}
	if ((st = link_sites(&c)) || (st = resolve_reads(&c)))
		goto fail_parse;
	fp_hashmap_release(&by_id);
	fp_json_doc_free(doc);
	return FP_OK;

fail_parse:
	fp_hashmap_release(&by_id);
	fp_json_doc_free(doc);
	return st;
}
