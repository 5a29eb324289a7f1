/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TTIR text parser: one pass over the MLIR textual form Triton prints (`asm["ttir"]`), with a
 * bounds-checked cursor, building the op table of include/flagprism/ttir.h. It understands just
 * enough structure to be exact about what it records: `#alias = loc(...)` lines (anywhere at top
 * level, usually at the end, so locations are resolved after the pass), `module`, `tt.func`
 * headers with their arguments, and operations in custom or generic form, whose regions are
 * recognised by a '{' that ends a line. An op's text ends at a newline outside brackets, after
 * its regions. Types come from the op's last top-level ':' / '->' / 'to', with a few per-op
 * rules for ops whose printed type is not the result type (tt.load, arith.cmp*). It is not an
 * MLIR verifier and ignores attributes it has no use for.
 */
#include "fp-setup.h"

#include "ir/ttir-internal.h"

#define MAX_BRACKETS 256u
#define MAX_OP_OPERANDS 65536u
#define MAX_OP_RESULTS 4096u
#define MAX_FUNC_ARGS 65536u
#define ARENA_CAP ((size_t)1 << 30)

/* Where the ops being parsed go. */
struct ctx {
	uint32_t parent;  /* enclosing op or FP_TTIR_NONE */
	uint32_t region;  /* region index within the parent */
	uint32_t depth;   /* depth of the ops in this region */
	uint32_t func;    /* enclosing function or FP_TTIR_NONE */
	uint32_t flags;   /* FP_TTIR_IN_* inherited by the ops */
	uint32_t nesting; /* regions entered so far (module and func included) */
};

static int parse_body(struct fp__ttir_parser *p, const struct ctx *c, bool toplevel);

/* ---- cursor ---------------------------------------------------------------------------- */

bool fp__ttir_is_idchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '$';
}

static bool is_id_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

size_t fp__ttir_suffix_len(const struct fp__ttir_parser *p, size_t at)
{
	size_t i = at;

	while (i < p->n && (fp__ttir_is_idchar(p->s[i]) || p->s[i] == '-'))
		i++;
	return i - at;
}

/* Length of the bare identifier at `at` (0 if none). */
static size_t id_len(const struct fp__ttir_parser *p, size_t at)
{
	size_t i = at;

	if (i >= p->n || !is_id_start(p->s[i]))
		return 0;
	while (i < p->n && fp__ttir_is_idchar(p->s[i]))
		i++;
	return i - at;
}

static bool at_word(const struct fp__ttir_parser *p, const char *w)
{
	size_t n = strlen(w);

	return id_len(p, p->pos) == n && memcmp(p->s + p->pos, w, n) == 0;
}

static bool at_loc(const struct fp__ttir_parser *p)
{
	return at_word(p, "loc") && p->pos + 3 < p->n && p->s[p->pos + 3] == '(';
}

void fp__ttir_skip_space(struct fp__ttir_parser *p)
{
	while (p->pos < p->n && (is_blank(p->s[p->pos]) || p->s[p->pos] == '\n'))
		p->pos++;
}

static void skip_blank(struct fp__ttir_parser *p)
{
	while (p->pos < p->n && is_blank(p->s[p->pos]))
		p->pos++;
}

static void skip_to_eol(struct fp__ttir_parser *p)
{
	const char *nl = memchr(p->s + p->pos, '\n', p->n - p->pos);

	p->pos = nl ? (size_t)(nl - p->s) : p->n;
}

/* Whitespace, newlines and `//` comments (MLIR has no block comments). */
static void skip_space_comments(struct fp__ttir_parser *p)
{
	for (;;) {
		fp__ttir_skip_space(p);
		if (p->pos + 1 < p->n && p->s[p->pos] == '/' && p->s[p->pos + 1] == '/')
			skip_to_eol(p);
		else
			return;
	}
}

static bool at_eol(const struct fp__ttir_parser *p)
{
	return p->pos >= p->n || p->s[p->pos] == '\n';
}

/* ---- errors, memory, strings --------------------------------------------------------------- */

int fp__ttir_error(struct fp__ttir_parser *p, int status, size_t off, const char *fmt, ...)
{
	char msg[224];
	uint32_t line = 1;
	size_t line_start = 0, i = 0;
	const char *nl;
	va_list ap;

	if (p->errored)
		return status;
	p->errored = true;
	if (off > p->n)
		off = p->n;
	while (i < off && (nl = memchr(p->s + i, '\n', off - i)) != NULL) {
		if (line < UINT32_MAX)
			line++;
		i = (size_t)(nl - p->s) + 1;
		line_start = i;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fp_diag_set_pos(p->diag, status, off, line,
			       (uint32_t)FP_MIN(off - line_start + 1, (size_t)UINT32_MAX), "%s",
			       msg);
}

static int oom(struct fp__ttir_parser *p)
{
	return fp__ttir_error(p, FP_ENOMEM, p->pos, "out of memory");
}

const char *fp__ttir_intern(struct fp__ttir_parser *p, const char *s, size_t n)
{
	const struct fp__ttir_slot *hit = fp__ttir_strmap_get(&p->strs, s, n);
	struct fp__ttir_slot *slot;
	bool added;
	char *d;

	if (hit)
		return hit->key;
	d = fp_arena_strndup(&p->m->arena, s, n);
	if (!d || fp__ttir_strmap_put(&p->strs, d, n, 0, &slot, &added))
		return NULL;
	return d;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* End (offset of the closing quote) of the string starting at `start`, or SIZE_MAX. */
static size_t string_end(const struct fp__ttir_parser *p, size_t start, bool *escapes)
{
	size_t i = start + 1;

	*escapes = false;
	while (i < p->n && p->s[i] != '\n') {
		if (p->s[i] == '"')
			return i;
		if (p->s[i] == '\\') {
			*escapes = true;
			i++;
		}
		i++;
	}
	return SIZE_MAX;
}

static int skip_string(struct fp__ttir_parser *p)
{
	bool esc;
	size_t end = string_end(p, p->pos, &esc);

	if (end == SIZE_MAX)
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "unterminated string");
	p->pos = end + 1;
	return FP_OK;
}

int fp__ttir_string(struct fp__ttir_parser *p, const char **out, size_t *len)
{
	size_t start = p->pos, end, i, k = 0;
	bool esc;
	char *buf;
	int hi, lo;

	end = string_end(p, start, &esc);
	if (end == SIZE_MAX)
		return fp__ttir_error(p, FP_EFORMAT, start, "unterminated string");
	if (!esc) {
		*len = end - start - 1;
		*out = fp__ttir_intern(p, p->s + start + 1, *len);
		if (!*out)
			return oom(p);
		p->pos = end + 1;
		return FP_OK;
	}
	buf = fp_malloc(end - start);
	if (!buf)
		return oom(p);
	for (i = start + 1; i < end; i++) {
		char c = p->s[i];

		if (c != '\\') {
			buf[k++] = c;
			continue;
		}
		c = p->s[++i];
		if (c == '"' || c == '\\') {
			buf[k++] = c;
		} else if (c == 'n') {
			buf[k++] = '\n';
		} else if (c == 't') {
			buf[k++] = '\t';
		} else if (i + 1 < end && (hi = hexval(c)) >= 0 &&
			   (lo = hexval(p->s[i + 1])) >= 0 && (hi | lo) != 0) {
			buf[k++] = (char)(hi * 16 + lo);
			i++;
		} else {
			fp_free(buf);
			return fp__ttir_error(p, FP_EFORMAT, i - 1, "invalid escape in string");
		}
	}
	*out = fp__ttir_intern(p, buf, k);
	*len = k;
	fp_free(buf);
	if (!*out)
		return oom(p);
	p->pos = end + 1;
	return FP_OK;
}

/* 1-based line of `off`; offsets asked for only grow, so this is linear overall. */
static uint32_t line_of(struct fp__ttir_parser *p, size_t off)
{
	const char *nl;

	if (off < p->line_off) {
		p->line_off = 0;
		p->line_no = 1;
	}
	while (p->line_off < off &&
	       (nl = memchr(p->s + p->line_off, '\n', off - p->line_off)) != NULL) {
		if (p->line_no < UINT32_MAX)
			p->line_no++;
		p->line_off = (size_t)(nl - p->s) + 1;
	}
	if (p->line_off < off)
		p->line_off = off;
	return p->line_no;
}

static int push_span(struct fp__ttir_parser *p, size_t off, size_t len, uint32_t count)
{
	int rc = fp__grow((void **)&p->spans, &p->cap_spans, p->n_spans + 1, sizeof(*p->spans),
			  SIZE_MAX / sizeof(*p->spans));

	if (rc)
		return fp__ttir_error(p, rc, off, "out of memory");
	p->spans[p->n_spans++] = (struct fp__ttir_span){off, len, count};
	return FP_OK;
}

/* ---- bracket matching ---------------------------------------------------------------------- */

static char opener_of(char c)
{
	return c == ')' ? '(' : c == ']' ? '[' : '{';
}

/* Skip a balanced (), [] or {} group starting at p->pos (an opening bracket). */
static int skip_balanced(struct fp__ttir_parser *p)
{
	char stack[MAX_BRACKETS];
	unsigned sp = 0;
	size_t start = p->pos;
	int rc;

	do {
		char c;

		if (p->pos >= p->n)
			return fp__ttir_error(p, FP_EFORMAT, start, "unclosed '%c'", p->s[start]);
		c = p->s[p->pos];
		if (c == '"') {
			rc = skip_string(p);
			if (rc)
				return rc;
			continue;
		}
		if (c == '(' || c == '[' || c == '{') {
			if (sp == MAX_BRACKETS)
				return fp__ttir_error(p, FP_ELIMIT, p->pos,
						      "brackets nested too deeply");
			stack[sp++] = c;
		} else if (c == ')' || c == ']' || c == '}') {
			if (sp == 0 || stack[sp - 1] != opener_of(c))
				return fp__ttir_error(p, FP_EFORMAT, p->pos, "mismatched '%c'", c);
			sp--;
		}
		p->pos++;
	} while (sp > 0);
	return FP_OK;
}

/* Skip to the end of the line, keeping brackets balanced (block labels, foreign aliases). */
static int skip_line(struct fp__ttir_parser *p)
{
	int rc;

	while (p->pos < p->n && p->s[p->pos] != '\n') {
		char c = p->s[p->pos];

		if (c == '"') {
			rc = skip_string(p);
		} else if (c == '(' || c == '[' || c == '{') {
			rc = skip_balanced(p);
		} else if (c == ')' || c == ']' || c == '}') {
			return fp__ttir_error(p, FP_EFORMAT, p->pos, "unbalanced '%c'", c);
		} else {
			p->pos++;
			rc = FP_OK;
		}
		if (rc)
			return rc;
	}
	if (p->pos < p->n)
		p->pos++;
	return FP_OK;
}

/*
 * A '{' that ends its line (a comment may follow) opens a region; any other '{' starts an
 * attribute dictionary.
 */
static bool region_open(const struct fp__ttir_parser *p, size_t at)
{
	size_t q = at + 1;

	while (q < p->n && is_blank(p->s[q]))
		q++;
	return q < p->n &&
	       (p->s[q] == '\n' || (p->s[q] == '/' && q + 1 < p->n && p->s[q + 1] == '/'));
}

/* An optional trailing loc(...) and the end of the line (or a '}' closing the region). */
static int finish_line(struct fp__ttir_parser *p, uint32_t *node)
{
	int rc;

	skip_blank(p);
	if (at_loc(p)) {
		p->pos += 4;
		rc = fp__ttir_loc_parse(p, node);
		if (rc)
			return rc;
		skip_blank(p);
	}
	if (p->pos + 1 < p->n && p->s[p->pos] == '/' && p->s[p->pos + 1] == '/')
		skip_to_eol(p);
	if (at_eol(p) || p->s[p->pos] == '}')
		return FP_OK;
	return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected the end of the line");
}

static int enter_region(struct fp__ttir_parser *p, const struct ctx *c)
{
	if (c->nesting + 1 > p->lim.max_nesting)
		return fp__ttir_error(p, FP_ELIMIT, p->pos, "regions nested deeper than %u",
				      p->lim.max_nesting);
	return FP_OK;
}

/* ---- types --------------------------------------------------------------------------------- */

/* End of the type starting at `q`, or `q` if there is none. */
static size_t scan_type(const struct fp__ttir_parser *p, size_t q)
{
	size_t start = q, depth = 0;
	bool esc;

	if (q >= p->n || !(is_id_start(p->s[q]) || p->s[q] == '!' || p->s[q] == '<'))
		return start;
	while (q < p->n) {
		char c = p->s[q];

		if (c == '\n')
			break;
		if (c == '"') {
			size_t e = string_end(p, q, &esc);

			if (e == SIZE_MAX)
				return start;
			q = e + 1;
			continue;
		}
		if (c == '<' || c == '(' || c == '[' || c == '{') {
			if (++depth > MAX_BRACKETS)
				return start;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			if (depth == 0)
				break;
			depth--;
		} else if (depth == 0 && (is_blank(c) || c == ',' || c == '*' || c == '=')) {
			break;
		} else if (depth == 0 && c == '-' && q + 1 < p->n && p->s[q + 1] == '>') {
			break;
		}
		q++;
	}
	return depth ? start : q;
}

static size_t skip_blank_at(const struct fp__ttir_parser *p, size_t q)
{
	while (q < p->n && is_blank(p->s[q]))
		q++;
	return q;
}

/*
 * Push the spans of the type list starting at `from`: `(A, B)`, `A, B`, `A * B` or `A`. *end
 * (optional) receives the offset just past the list.
 */
static int push_types(struct fp__ttir_parser *p, size_t from, size_t *count, size_t *end)
{
	size_t q = skip_blank_at(p, from), e, last = q;
	bool paren = q < p->n && p->s[q] == '(';
	int rc;

	*count = 0;
	if (paren)
		q = skip_blank_at(p, q + 1);
	for (;;) {
		e = scan_type(p, q);
		if (e == q)
			break;
		if (*count >= MAX_OP_OPERANDS)
			return fp__ttir_error(p, FP_ELIMIT, q, "more than %u types",
					      MAX_OP_OPERANDS);
		rc = push_span(p, q, e - q, 0);
		if (rc)
			return rc;
		(*count)++;
		last = e;
		q = skip_blank_at(p, e);
		if (q < p->n && (p->s[q] == ',' || (!paren && p->s[q] == '*'))) {
			q = skip_blank_at(p, q + 1);
			continue;
		}
		break;
	}
	if (paren) {
		q = skip_blank_at(p, *count ? last : q);
		last = q < p->n && p->s[q] == ')' ? q + 1 : q;
	}
	if (end)
		*end = last;
	return FP_OK;
}

/* fp__ttir_type_get() of s[0..n), reporting a failure at `off`. */
static int get_type(struct fp__ttir_parser *p, const char *s, size_t n, size_t off,
		    struct fp_ttir_type *t)
{
	int rc = fp__ttir_type_get(p, s, n, t);

	if (rc == FP_ELIMIT)
		return fp__ttir_error(p, rc, off, "tensor rank above %u", FP_TTIR_MAX_RANK);
	if (rc)
		return fp__ttir_error(p, rc, off, "out of memory");
	return FP_OK;
}

static int type_at(struct fp__ttir_parser *p, size_t off, size_t len, struct fp_ttir_type *t)
{
	return get_type(p, p->s + off, len, off, t);
}

/* Offset of the element type inside a shaped type's text; 0 if `t` is not shaped. */
static size_t elem_offset(const struct fp_ttir_type *t)
{
	const char *s = t->text;
	size_t q = fp__ttir_shaped_prefix(s, strlen(s));

	if (q == 0)
		return 0;
	/* the same dims as fp__ttir_type_get() splits off: "?" or digits, then 'x' */
	for (;;) {
		size_t d = q;

		if (s[d] == '?')
			d++;
		else
			while (is_digit(s[d]))
				d++;
		if (d == q || s[d] != 'x')
			return q;
		q = d + 1;
	}
}

/* `t` with its element type replaced by e[0..n) (tensor<4x!tt.ptr<f32>> -> tensor<4xf32>). */
static int with_elem(struct fp__ttir_parser *p, const struct fp_ttir_type *t, const char *e,
		     size_t n, size_t off, struct fp_ttir_type *out)
{
	size_t pre = elem_offset(t), elen = strlen(t->elem), tail, len;
	char *buf;
	int rc;

	if (pre == 0 || strncmp(t->text + pre, t->elem, elen) != 0) {
		/* a scalar (or a shaped type we could not split): the element is the type */
		return get_type(p, e, n, off, out);
	}
	tail = strlen(t->text) - pre - elen;
	len = pre + n + tail;
	buf = fp_malloc(len + 1);
	if (!buf)
		return oom(p);
	memcpy(buf, t->text, pre);
	memcpy(buf + pre, e, n);
	memcpy(buf + pre + n, t->text + pre + elen, tail);
	rc = get_type(p, buf, len, off, out);
	fp_free(buf);
	return rc;
}

/* The value tt.load produces from its pointer type. */
static int load_result(struct fp__ttir_parser *p, const struct fp_ttir_type *ptr, size_t off,
		       struct fp_ttir_type *out)
{
	const char *s;
	size_t n;

	if (ptr->rank > 0 && fp__ttir_pointee(ptr->elem, &s, &n))
		return with_elem(p, ptr, s, n, off, out);
	if (ptr->rank == 0 && fp__ttir_pointee(ptr->text, &s, &n))
		return get_type(p, s, n, off, out);
	*out = *ptr;
	return FP_OK;
}

/* ---- operations ----------------------------------------------------------------------------- */

static uint32_t region_flags(const char *name)
{
	if (strcmp(name, "scf.for") == 0)
		return FP_TTIR_IN_FOR | FP_TTIR_IN_LOOP;
	if (strcmp(name, "scf.while") == 0)
		return FP_TTIR_IN_WHILE | FP_TTIR_IN_LOOP;
	if (strcmp(name, "scf.parallel") == 0 || strcmp(name, "scf.forall") == 0)
		return FP_TTIR_IN_LOOP;
	if (strcmp(name, "scf.if") == 0)
		return FP_TTIR_IN_IF;
	if (strcmp(name, "tt.reduce") == 0 || strcmp(name, "tt.scan") == 0)
		return FP_TTIR_IN_COMBINE_REGION;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/*
 * `arith.constant 42 : i32`, `arith.constant true`: the integer written after the op name.
 * *is_bool tells a true/false literal (whose type is not printed).
 */
static bool const_int_at(const struct fp__ttir_parser *p, size_t q, int64_t *v, bool *is_bool)
{
	uint64_t mag = 0;
	bool neg = false;

	q = skip_blank_at(p, q);
	*is_bool = true;
	if (p->n - q >= 4 && memcmp(p->s + q, "true", 4) == 0 &&
	    (q + 4 == p->n || !fp__ttir_is_idchar(p->s[q + 4]))) {
		*v = 1;
		return true;
	}
	if (p->n - q >= 5 && memcmp(p->s + q, "false", 5) == 0 &&
	    (q + 5 == p->n || !fp__ttir_is_idchar(p->s[q + 5]))) {
		*v = 0;
		return true;
	}
	*is_bool = false;
	if (q < p->n && p->s[q] == '-') {
		neg = true;
		q++;
	}
	if (q >= p->n || !is_digit(p->s[q]))
		return false;
	while (q < p->n && is_digit(p->s[q])) {
		if (mag > (UINT64_MAX - 9) / 10)
			return false;
		mag = mag * 10 + (uint64_t)(p->s[q] - '0');
		q++;
	}
	if (q < p->n && !is_blank(p->s[q]) && p->s[q] != ':' && p->s[q] != '\n')
		return false; /* 2.0, 1e3, 0x.. are not plain integers */
	if (mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
		return false;
	*v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return true;
}

/* `axis = N` after the word "axis" at q. */
static bool axis_at(const struct fp__ttir_parser *p, size_t q, int32_t *axis)
{
	int64_t v = 0;

	q = skip_blank_at(p, q);
	if (q >= p->n || p->s[q] != '=')
		return false;
	q = skip_blank_at(p, q + 1);
	if (q >= p->n || !is_digit(p->s[q]))
		return false;
	while (q < p->n && is_digit(p->s[q])) {
		v = v * 10 + (p->s[q] - '0');
		if (v > INT32_MAX)
			return false;
		q++;
	}
	*axis = (int32_t)v;
	return true;
}

static int new_op(struct fp__ttir_parser *p, const struct ctx *c, const char *name, size_t start,
		  uint32_t *oi)
{
	struct fp_ttir *m = p->m;
	struct fp_ttir_op *op;
	int rc;

	if (m->n_ops >= p->lim.max_ops)
		return fp__ttir_error(p, FP_ELIMIT, start, "more than %zu operations",
				      p->lim.max_ops);
	rc = fp__grow((void **)&m->ops, &m->cap_ops, m->n_ops + 1, sizeof(*m->ops), p->lim.max_ops);
	if (!rc)
		rc = fp__grow((void **)&p->op_loc, &p->cap_op_loc, m->n_ops + 1, sizeof(*p->op_loc),
			      p->lim.max_ops);
	if (rc)
		return fp__ttir_error(p, rc, start, "out of memory for operations");
	*oi = (uint32_t)m->n_ops;
	op = &m->ops[m->n_ops++];
	memset(op, 0, sizeof(*op));
	op->index = *oi;
	op->parent = c->parent;
	op->region = c->region;
	op->depth = c->depth;
	op->func = c->func;
	op->flags = c->flags;
	op->name = name;
	op->func_name = c->func != FP_TTIR_NONE ? m->funcs[c->func].name : NULL;
	op->axis = -1;
	op->offset = start;
	op->ir_line = line_of(p, start);
	p->op_loc[*oi] = FP_TTIR_NONE;
	return FP_OK;
}

/* Everything an op's scan collects besides what goes on the span stack. */
struct op_scan {
	size_t last_colon, last_arrow, last_to;
	size_t callee_off, callee_len;
	const char *callee;
	bool boundary_check;
	int32_t axis;
	uint32_t n_regions;
	size_t n_operands;
};

static int scan_operand(struct fp__ttir_parser *p, struct op_scan *sc)
{
	size_t start = p->pos, q;
	int rc;

	p->pos += 1 + fp__ttir_suffix_len(p, p->pos + 1);
	if (p->pos + 1 < p->n && p->s[p->pos] == '#' && is_digit(p->s[p->pos + 1])) {
		p->pos++;
		while (p->pos < p->n && is_digit(p->s[p->pos]))
			p->pos++;
	}
	if (p->pos - start < 2)
		return fp__ttir_error(p, FP_EFORMAT, start, "expected a value name after '%%'");
	/* `%iv = %lb` (scf.for, iter_args, scf.while) defines a block argument: not a use */
	q = skip_blank_at(p, p->pos);
	if (q < p->n && p->s[q] == '=' && (q + 1 >= p->n || p->s[q + 1] != '='))
		return FP_OK;
	if (sc->n_operands >= MAX_OP_OPERANDS)
		return fp__ttir_error(p, FP_ELIMIT, start, "more than %u operands",
				      MAX_OP_OPERANDS);
	rc = push_span(p, start, p->pos - start, 0);
	if (rc)
		return rc;
	sc->n_operands++;
	return FP_OK;
}

static int scan_symbol(struct fp__ttir_parser *p, struct op_scan *sc)
{
	const char *str;
	size_t len, w;
	int rc;

	p->pos++; /* '@' */
	if (p->pos < p->n && p->s[p->pos] == '"') {
		rc = fp__ttir_string(p, &str, &len);
		if (rc)
			return rc;
	} else {
		w = fp__ttir_suffix_len(p, p->pos);
		str = w ? fp__ttir_intern(p, p->s + p->pos, w) : "";
		if (!str)
			return oom(p);
		p->pos += w;
	}
	if (!sc->callee)
		sc->callee = str;
	return FP_OK;
}

/*
 * Scan an op's text after its name up to the newline that ends it (outside brackets and after
 * its regions), parsing regions recursively and collecting operands, the trailing location and
 * the positions of the type signature.
 */
static int scan_op_text(struct fp__ttir_parser *p, const struct ctx *c, uint32_t oi,
			struct op_scan *sc)
{
	char stack[MAX_BRACKETS];
	unsigned sp = 0;
	uint32_t node;
	int rc = FP_OK;

	for (;;) {
		char ch;
		size_t w;

		if (p->pos >= p->n) {
			if (sp == 0)
				return FP_OK;
			return fp__ttir_error(p, FP_EFORMAT, p->pos,
					      "unexpected end of input: unclosed '%c'",
					      stack[sp - 1]);
		}
		ch = p->s[p->pos];
		switch (ch) {
		case '\n':
			p->pos++;
			if (sp == 0)
				return FP_OK;
			continue;
		case ' ':
		case '\t':
		case '\r':
			p->pos++;
			continue;
		case '"':
			rc = skip_string(p);
			break;
		case '%':
			rc = scan_operand(p, sc);
			break;
		case '@':
			rc = scan_symbol(p, sc);
			break;
		case '#':
		case '^':
			p->pos += 1 + fp__ttir_suffix_len(p, p->pos + 1);
			continue;
		case '(':
		case '[':
			if (sp == MAX_BRACKETS)
				return fp__ttir_error(p, FP_ELIMIT, p->pos,
						      "brackets nested too deeply");
			stack[sp++] = ch;
			p->pos++;
			continue;
		case '{':
			if (region_open(p, p->pos)) {
				struct ctx child;

				rc = enter_region(p, c);
				if (rc)
					return rc;
				child.parent = oi;
				child.region = sc->n_regions++;
				child.depth = c->depth + 1;
				child.func = c->func;
				child.flags = c->flags | region_flags(p->m->ops[oi].name);
				child.nesting = c->nesting + 1;
				p->pos++;
				rc = parse_body(p, &child, false);
				break;
			}
			if (sp == MAX_BRACKETS)
				return fp__ttir_error(p, FP_ELIMIT, p->pos,
						      "brackets nested too deeply");
			stack[sp++] = ch;
			p->pos++;
			continue;
		case ')':
		case ']':
		case '}':
			if (sp == 0) {
				if (ch == '}')
					return FP_OK; /* the enclosing region ends on this line */
				return fp__ttir_error(p, FP_EFORMAT, p->pos, "unbalanced '%c'", ch);
			}
			if (stack[sp - 1] != opener_of(ch))
				return fp__ttir_error(p, FP_EFORMAT, p->pos, "mismatched '%c'", ch);
			sp--;
			p->pos++;
			continue;
		case '-':
			if (sp == 0 && p->pos + 1 < p->n && p->s[p->pos + 1] == '>') {
				sc->last_arrow = p->pos;
				p->pos += 2;
				continue;
			}
			p->pos++;
			continue;
		case ':':
			if (sp == 0)
				sc->last_colon = p->pos;
			p->pos++;
			continue;
		case '/':
			if (p->pos + 1 < p->n && p->s[p->pos + 1] == '/') {
				skip_to_eol(p);
				continue;
			}
			p->pos++;
			continue;
		default:
			w = id_len(p, p->pos);
			if (w == 0) {
				p->pos++;
				continue;
			}
			if (w == 3 && at_loc(p)) {
				if (sp > 0) {
					/* a nested loc (block arguments): not the op's own */
					p->pos += 3;
					continue;
				}
				p->pos += 4;
				rc = fp__ttir_loc_parse(p, &node);
				if (rc)
					return rc;
				p->op_loc[oi] = node;
				continue;
			}
			if (sp == 0 && w == 2 && memcmp(p->s + p->pos, "to", 2) == 0)
				sc->last_to = p->pos + 2;
			else if (w == 13 && memcmp(p->s + p->pos, "boundaryCheck", 13) == 0)
				sc->boundary_check = true;
			else if (w == 4 && memcmp(p->s + p->pos, "axis", 4) == 0 && sc->axis < 0)
				axis_at(p, p->pos + 4, &sc->axis);
			p->pos += w;
			continue;
		}
		if (rc)
			return rc;
	}
}

/* Names for the results: "%x", or "%x#0".."%x#N-1" for a `%x:N` group. */
static int build_results(struct fp__ttir_parser *p, size_t base, size_t n_groups,
			 struct fp_ttir_value *vals)
{
	size_t g, k = 0;
	uint32_t j;

	for (g = 0; g < n_groups; g++) {
		const struct fp__ttir_span *sp = &p->spans[base + g];

		for (j = 0; j < sp->count; j++) {
			if (sp->count == 1) {
				vals[k].name = fp__ttir_intern(p, p->s + sp->off, sp->len);
			} else {
				char *d = fp_arena_calloc(&p->m->arena, 1, sp->len + 12);

				if (d) {
					memcpy(d, p->s + sp->off, sp->len);
					snprintf(d + sp->len, 12, "#%" PRIu32, j);
				}
				vals[k].name = d;
			}
			if (!vals[k].name)
				return oom(p);
			k++;
		}
	}
	return FP_OK;
}

static int infer_result_types(struct fp__ttir_parser *p, const char *name, size_t start,
			      const struct fp_ttir_type *sig, size_t n_sig,
			      const struct fp_ttir_type *arrow, size_t n_arrow,
			      const struct fp_ttir_type *to, bool is_bool_const,
			      struct fp_ttir_value *vals, size_t n_res)
{
	struct fp_ttir_type t;
	size_t j;
	int rc;

	for (j = 0; j < n_res; j++) {
		memset(&t, 0, sizeof(t));
		t.text = "";
		t.elem = "";
		if (n_arrow) {
			t = arrow[FP_MIN(j, n_arrow - 1)];
		} else if (to) {
			t = *to;
		} else if (n_sig) {
			if (strcmp(name, "tt.load") == 0) {
				rc = load_result(p, &sig[0], start, &t);
			} else if (strcmp(name, "arith.cmpi") == 0 ||
				   strcmp(name, "arith.cmpf") == 0) {
				rc = with_elem(p, &sig[0], "i1", 2, start, &t);
			} else if (strcmp(name, "arith.select") == 0) {
				t = sig[n_sig - 1];
				rc = FP_OK;
			} else if (strcmp(name, "tt.make_tensor_ptr") == 0 &&
				   sig[0].text[0] == '<') {
				char buf[256];
				int len = snprintf(buf, sizeof(buf), "!tt.ptr%s", sig[0].text);

				t = sig[0];
				rc = FP_OK;
				if (len > 0 && (size_t)len < sizeof(buf))
					rc = get_type(p, buf, (size_t)len, start, &t);
			} else {
				t = sig[FP_MIN(j, n_sig - 1)];
				rc = FP_OK;
			}
			if (rc)
				return rc;
		} else if (is_bool_const) {
			rc = get_type(p, "i1", 2, start, &t);
			if (rc)
				return rc;
		}
		vals[j].type = t;
	}
	return FP_OK;
}

static int types_from_spans(struct fp__ttir_parser *p, size_t base, size_t n,
			    struct fp_ttir_type **out)
{
	struct fp_ttir_type *t;
	size_t i;
	int rc;

	*out = NULL;
	if (n == 0)
		return FP_OK;
	t = fp_arena_calloc(&p->m->arena, n, sizeof(*t));
	if (!t)
		return oom(p);
	for (i = 0; i < n; i++) {
		rc = type_at(p, p->spans[base + i].off, p->spans[base + i].len, &t[i]);
		if (rc)
			return rc;
	}
	*out = t;
	return FP_OK;
}

static int parse_op(struct fp__ttir_parser *p, const struct ctx *c)
{
	size_t start = p->pos, base = p->n_spans, n_groups = 0, n_res = 0, w, len;
	size_t sig_base, n_sig = 0, arrow_base, n_arrow = 0, to_base, n_to = 0, i;
	struct op_scan sc = {SIZE_MAX, SIZE_MAX, SIZE_MAX, 0, 0, NULL, false, -1, 0, 0};
	struct fp_ttir_type *sig = NULL, *arrow = NULL, *to = NULL;
	struct fp_ttir_value *vals = NULL;
	const char **opds = NULL;
	const char *name;
	struct fp_ttir_op *op;
	bool generic = false, has_int = false, is_bool = false;
	int64_t ival = 0;
	uint32_t oi = 0;
	int rc;

	/* results: %a, %b:2 = */
	if (p->s[p->pos] == '%') {
		for (;;) {
			size_t rs = p->pos;
			uint32_t count = 1;

			w = fp__ttir_suffix_len(p, p->pos + 1);
			if (w == 0)
				return fp__ttir_error(p, FP_EFORMAT, rs, "expected a result name");
			p->pos += 1 + w;
			if (p->pos + 1 < p->n && p->s[p->pos] == ':' &&
			    is_digit(p->s[p->pos + 1])) {
				uint64_t v = 0;

				p->pos++;
				while (p->pos < p->n && is_digit(p->s[p->pos])) {
					v = v * 10 + (uint64_t)(p->s[p->pos] - '0');
					if (v > MAX_OP_RESULTS)
						return fp__ttir_error(p, FP_ELIMIT, rs,
								      "more than %u results",
								      MAX_OP_RESULTS);
					p->pos++;
				}
				if (v == 0)
					return fp__ttir_error(p, FP_EFORMAT, rs, "zero results");
				count = (uint32_t)v;
			}
			if (n_res + count > MAX_OP_RESULTS)
				return fp__ttir_error(p, FP_ELIMIT, rs, "more than %u results",
						      MAX_OP_RESULTS);
			rc = push_span(p, rs, 1 + w, count);
			if (rc)
				return rc;
			n_groups++;
			n_res += count;
			skip_blank(p);
			if (p->pos < p->n && p->s[p->pos] == ',') {
				p->pos++;
				skip_blank(p);
				if (p->pos < p->n && p->s[p->pos] == '%')
					continue;
				return fp__ttir_error(p, FP_EFORMAT, p->pos,
						      "expected a result name");
			}
			if (p->pos < p->n && p->s[p->pos] == '=') {
				p->pos++;
				break;
			}
			return fp__ttir_error(p, FP_EFORMAT, p->pos,
					      "expected '=' after the results");
		}
		skip_blank(p);
	}
	if (p->n_results_total + n_res > p->lim.max_ops * 4 + MAX_OP_RESULTS)
		return fp__ttir_error(p, FP_ELIMIT, start, "too many results");
	p->n_results_total += n_res;

	/* the op name, bare or quoted (generic form) */
	if (p->pos < p->n && p->s[p->pos] == '"') {
		rc = fp__ttir_string(p, &name, &len);
		if (rc)
			return rc;
		generic = true;
	} else {
		w = id_len(p, p->pos);
		/* custom-form names are dialect.op; only func's `return` may drop its prefix */
		if (w == 0 || (!memchr(p->s + p->pos, '.', w) &&
			       !(w == 6 && memcmp(p->s + p->pos, "return", 6) == 0)))
			return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected an operation");
		name = fp__ttir_intern(p, p->s + p->pos, w);
		if (!name)
			return oom(p);
		p->pos += w;
	}
	rc = new_op(p, c, name, start, &oi);
	if (rc)
		return rc;
	if (strcmp(name, "arith.constant") == 0)
		has_int = const_int_at(p, p->pos, &ival, &is_bool);

	rc = scan_op_text(p, c, oi, &sc);
	if (rc)
		return rc;

	/* signature types */
	sig_base = p->n_spans;
	if (sc.last_colon != SIZE_MAX) {
		rc = push_types(p, sc.last_colon + 1, &n_sig, NULL);
		if (rc)
			return rc;
	}
	arrow_base = p->n_spans;
	if (sc.last_arrow != SIZE_MAX) {
		rc = push_types(p, sc.last_arrow + 2, &n_arrow, NULL);
		if (rc)
			return rc;
	}
	to_base = p->n_spans;
	if (sc.last_to != SIZE_MAX && sc.last_colon != SIZE_MAX && sc.last_to > sc.last_colon &&
	    sc.last_arrow == SIZE_MAX) {
		size_t q = skip_blank_at(p, sc.last_to), e = scan_type(p, q);

		if (e > q) {
			rc = push_span(p, q, e - q, 0);
			if (rc)
				return rc;
			n_to = 1;
		}
	}
	rc = types_from_spans(p, sig_base, n_sig, &sig);
	if (!rc)
		rc = types_from_spans(p, arrow_base, n_arrow, &arrow);
	if (!rc)
		rc = types_from_spans(p, to_base, n_to, &to);
	if (rc)
		return rc;

	if (n_res) {
		vals = fp_arena_calloc(&p->m->arena, n_res, sizeof(*vals));
		if (!vals)
			return oom(p);
		rc = build_results(p, base, n_groups, vals);
		if (!rc)
			rc = infer_result_types(p, name, start, sig, n_sig, arrow, n_arrow, to,
						has_int && is_bool && n_sig == 0, vals, n_res);
		if (rc)
			return rc;
	}
	if (sc.n_operands) {
		opds = fp_arena_calloc(&p->m->arena, sc.n_operands, sizeof(*opds));
		if (!opds)
			return oom(p);
		for (i = 0; i < sc.n_operands; i++) {
			const struct fp__ttir_span *sp = &p->spans[base + n_groups + i];

			opds[i] = fp__ttir_intern(p, p->s + sp->off, sp->len);
			if (!opds[i])
				return oom(p);
		}
	}

	op = &p->m->ops[oi];
	op->n_results = (uint32_t)n_res;
	op->results = vals;
	op->n_operands = (uint32_t)sc.n_operands;
	op->operands = opds;
	op->n_sig_types = (uint32_t)n_sig;
	op->sig_types = sig;
	op->n_regions = sc.n_regions;
	op->end = (uint32_t)p->m->n_ops;
	op->axis = sc.axis;
	if (sc.n_regions)
		op->flags |= FP_TTIR_OP_REGIONS;
	if (generic)
		op->flags |= FP_TTIR_OP_GENERIC;
	if (sc.callee && ends_with(name, ".call"))
		op->callee = sc.callee;
	if (strcmp(name, "tt.load") == 0 && (sc.n_operands >= 2 || sc.boundary_check))
		op->flags |= FP_TTIR_OP_MASKED;
	if (strcmp(name, "tt.store") == 0 && (sc.n_operands >= 3 || sc.boundary_check))
		op->flags |= FP_TTIR_OP_MASKED;
	if (has_int && n_res == 1 && vals[0].type.rank == 0 &&
	    fp__ttir_elem_class(vals[0].type.elem) == FP_TTIR_INT &&
	    strncmp(vals[0].type.elem, "!tt.ptr", 7) != 0) {
		op->flags |= FP_TTIR_OP_CONST_INT;
		op->int_value = ival;
	}
	p->n_spans = base;
	return FP_OK;
}

/* ---- functions and modules ------------------------------------------------------------------- */

/* `tt.divisibility = 16` inside an argument's attribute dictionary s[a..b). */
static uint32_t divisibility_in(const struct fp__ttir_parser *p, size_t a, size_t b)
{
	static const char key[] = "tt.divisibility";
	size_t klen = sizeof(key) - 1, q;
	uint64_t v = 0;

	for (; a + klen <= b; a++) {
		if (memcmp(p->s + a, key, klen) != 0)
			continue;
		q = skip_blank_at(p, a + klen);
		if (q >= b || p->s[q] != '=')
			return 0;
		q = skip_blank_at(p, q + 1);
		while (q < b && is_digit(p->s[q]) && v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(p->s[q++] - '0');
		return v <= UINT32_MAX ? (uint32_t)v : 0;
	}
	return 0;
}

static bool contains(const struct fp__ttir_parser *p, size_t a, size_t b, const char *needle)
{
	size_t n = strlen(needle);

	for (; a + n <= b; a++)
		if (memcmp(p->s + a, needle, n) == 0)
			return true;
	return false;
}

static int new_func(struct fp__ttir_parser *p, size_t start, uint32_t *fi)
{
	struct fp_ttir *m = p->m;
	int rc;

	if (m->n_funcs >= p->lim.max_ops)
		return fp__ttir_error(p, FP_ELIMIT, start, "too many functions");
	rc = fp__grow((void **)&m->funcs, &m->cap_funcs, m->n_funcs + 1, sizeof(*m->funcs),
		      p->lim.max_ops);
	if (!rc)
		rc = fp__grow((void **)&p->func_loc, &p->cap_func_loc, m->n_funcs + 1,
			      sizeof(*p->func_loc), p->lim.max_ops);
	if (rc)
		return fp__ttir_error(p, rc, start, "out of memory for functions");
	*fi = (uint32_t)m->n_funcs++;
	memset(&m->funcs[*fi], 0, sizeof(m->funcs[*fi]));
	m->funcs[*fi].name = "";
	m->funcs[*fi].first_op = (uint32_t)m->n_ops;
	m->funcs[*fi].end_op = (uint32_t)m->n_ops;
	m->funcs[*fi].ir_line = line_of(p, start);
	p->func_loc[*fi] = FP_TTIR_NONE;
	return FP_OK;
}

/* One `%name: type {attrs} loc(...)` argument; appended to *args (a scratch array). */
static int parse_arg(struct fp__ttir_parser *p, struct fp_ttir_arg **args, size_t *n, size_t *cap)
{
	struct fp_ttir_arg *a;
	size_t start = p->pos, w, e, ds;
	uint32_t node = FP_TTIR_NONE;
	int rc;

	if (p->s[p->pos] != '%' || (w = fp__ttir_suffix_len(p, p->pos + 1)) == 0)
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected an argument name");
	if (*n >= MAX_FUNC_ARGS)
		return fp__ttir_error(p, FP_ELIMIT, start, "more than %u arguments", MAX_FUNC_ARGS);
	rc = fp__grow((void **)args, cap, *n + 1, sizeof(**args), MAX_FUNC_ARGS);
	if (!rc)
		rc = fp__grow((void **)&p->arg_loc, &p->cap_arg_loc, p->n_arg_loc + 1,
			      sizeof(*p->arg_loc), SIZE_MAX / sizeof(*p->arg_loc));
	if (rc)
		return fp__ttir_error(p, rc, start, "out of memory");
	a = &(*args)[*n];
	memset(a, 0, sizeof(*a));
	a->name = fp__ttir_intern(p, p->s + p->pos, w + 1);
	if (!a->name)
		return oom(p);
	p->pos += w + 1;
	fp__ttir_skip_space(p);
	if (p->pos >= p->n || p->s[p->pos] != ':')
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected ':' after an argument name");
	p->pos++;
	fp__ttir_skip_space(p);
	e = scan_type(p, p->pos);
	if (e == p->pos)
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected an argument type");
	rc = type_at(p, p->pos, e - p->pos, &a->type);
	if (rc)
		return rc;
	p->pos = e;
	fp__ttir_skip_space(p);
	if (p->pos < p->n && p->s[p->pos] == '{') {
		ds = p->pos;
		rc = skip_balanced(p);
		if (rc)
			return rc;
		a->divisibility = divisibility_in(p, ds, p->pos);
		fp__ttir_skip_space(p);
	}
	if (at_loc(p)) {
		p->pos += 4;
		rc = fp__ttir_loc_parse(p, &node);
		if (rc)
			return rc;
	}
	p->arg_loc[p->n_arg_loc++] = node;
	(*n)++;
	return FP_OK;
}

static int parse_func(struct fp__ttir_parser *p, const struct ctx *c)
{
	struct fp_ttir_arg *args = NULL, *owned;
	size_t start = p->pos, n_args = 0, cap_args = 0, rbase, n_res = 0, ds, len, w;
	struct fp_ttir_type *res = NULL;
	struct fp_ttir_func *f;
	const char *name;
	uint32_t fi = 0, node = FP_TTIR_NONE;
	bool is_public = false, noinline = false, body = false;
	struct ctx child;
	int rc;

	p->pos += id_len(p, p->pos); /* tt.func / func.func */
	rc = new_func(p, start, &fi);
	if (rc)
		return rc;
	skip_blank(p);
	if (at_word(p, "public") || at_word(p, "private") || at_word(p, "nested")) {
		is_public = at_word(p, "public");
		p->pos += id_len(p, p->pos);
		skip_blank(p);
	}
	if (p->pos >= p->n || p->s[p->pos] != '@')
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected '@name' after tt.func");
	p->pos++;
	if (p->pos < p->n && p->s[p->pos] == '"') {
		rc = fp__ttir_string(p, &name, &len);
		if (rc)
			return rc;
	} else {
		w = fp__ttir_suffix_len(p, p->pos);
		if (w == 0)
			return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected a function name");
		name = fp__ttir_intern(p, p->s + p->pos, w);
		if (!name)
			return oom(p);
		p->pos += w;
	}
	p->m->funcs[fi].name = name;
	if (p->pos >= p->n || p->s[p->pos] != '(')
		return fp__ttir_error(p, FP_EFORMAT, p->pos,
				      "expected '(' after the function name");
	p->pos++;
	for (;;) {
		fp__ttir_skip_space(p);
		if (p->pos < p->n && p->s[p->pos] == ')' && n_args == 0) {
			p->pos++;
			break;
		}
		if (p->pos >= p->n) {
			rc = fp__ttir_error(p, FP_EFORMAT, p->pos,
					    "unexpected end of input in arguments");
			goto fail_args;
		}
		rc = parse_arg(p, &args, &n_args, &cap_args);
		if (rc)
			goto fail_args;
		fp__ttir_skip_space(p);
		if (p->pos < p->n && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->n && p->s[p->pos] == ')') {
			p->pos++;
			break;
		}
		rc = fp__ttir_error(p, FP_EFORMAT, p->pos, "expected ',' or ')' after an argument");
		goto fail_args;
	}
	owned = NULL;
	if (n_args) {
		owned = fp_arena_calloc(&p->m->arena, n_args, sizeof(*owned));
		if (!owned) {
			rc = oom(p);
			goto fail_args;
		}
		memcpy(owned, args, n_args * sizeof(*owned));
	}
	fp_free(args);
	args = NULL;
	f = &p->m->funcs[fi];
	f->args = owned;
	f->n_args = (uint32_t)n_args;
	f->is_public = is_public;

	/* -> results, attributes {...}, then a body or the end of a declaration */
	for (;;) {
		skip_blank(p);
		if (p->pos + 1 < p->n && p->s[p->pos] == '-' && p->s[p->pos + 1] == '>') {
			rbase = p->n_spans;
			rc = push_types(p, p->pos + 2, &n_res, &ds);
			if (!rc)
				rc = types_from_spans(p, rbase, n_res, &res);
			if (rc)
				return rc;
			if (n_res == 0)
				return fp__ttir_error(p, FP_EFORMAT, p->pos,
						      "expected result types");
			p->pos = ds;
			p->n_spans = rbase;
			continue;
		}
		if (at_word(p, "attributes")) {
			p->pos += 10;
			skip_blank(p);
			if (p->pos >= p->n || p->s[p->pos] != '{')
				return fp__ttir_error(p, FP_EFORMAT, p->pos,
						      "expected '{' after attributes");
			ds = p->pos;
			rc = skip_balanced(p);
			if (rc)
				return rc;
			noinline = contains(p, ds, p->pos, "noinline = true");
			continue;
		}
		if (p->pos < p->n && p->s[p->pos] == '{' && region_open(p, p->pos)) {
			rc = enter_region(p, c);
			if (rc)
				return rc;
			child.parent = FP_TTIR_NONE;
			child.region = 0;
			child.depth = 0;
			child.func = fi;
			child.flags = 0;
			child.nesting = c->nesting + 1;
			p->pos++;
			rc = parse_body(p, &child, false);
			if (rc)
				return rc;
			body = true;
			break;
		}
		if (at_eol(p) || at_loc(p))
			break;
		return fp__ttir_error(p, FP_EFORMAT, p->pos,
				      "unexpected text in the function header");
	}
	rc = finish_line(p, &node);
	if (rc)
		return rc;
	p->func_loc[fi] = node;
	f = &p->m->funcs[fi];
	f->n_results = (uint32_t)n_res;
	f->results = res;
	f->noinline = noinline;
	f->has_body = body;
	f->end_op = (uint32_t)p->m->n_ops;
	return FP_OK;

fail_args:
	fp_free(args);
	return rc;
}

static int parse_module(struct fp__ttir_parser *p, const struct ctx *c)
{
	uint32_t node;
	struct ctx child;
	int rc;

	p->pos += 6; /* module */
	for (;;) {
		skip_blank(p);
		if (p->pos < p->n && p->s[p->pos] == '@') {
			p->pos += 1 + fp__ttir_suffix_len(p, p->pos + 1);
			continue;
		}
		if (at_word(p, "attributes")) {
			p->pos += 10;
			skip_blank(p);
			if (p->pos >= p->n || p->s[p->pos] != '{')
				return fp__ttir_error(p, FP_EFORMAT, p->pos,
						      "expected '{' after attributes");
			rc = skip_balanced(p);
			if (rc)
				return rc;
			continue;
		}
		if (p->pos < p->n && p->s[p->pos] == '{' && region_open(p, p->pos))
			break;
		return fp__ttir_error(p, FP_EFORMAT, p->pos,
				      "expected '{' and a newline after module");
	}
	rc = enter_region(p, c);
	if (rc)
		return rc;
	child = *c;
	child.nesting = c->nesting + 1;
	p->pos++;
	rc = parse_body(p, &child, false);
	if (rc)
		return rc;
	return finish_line(p, &node);
}

/* `#name = loc(...)` (or another attribute alias, `!type = ...`, which are skipped). */
static int parse_alias(struct fp__ttir_parser *p)
{
	size_t start = p->pos, w = fp__ttir_suffix_len(p, p->pos + 1);
	bool is_loc;
	int rc;

	if (w == 0)
		return fp__ttir_error(p, FP_EFORMAT, start, "expected an alias name");
	p->pos += 1 + w;
	skip_blank(p);
	if (p->pos >= p->n || p->s[p->pos] != '=')
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected '=' in an alias definition");
	p->pos++;
	skip_blank(p);
	if (at_eol(p))
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected a value after '='");
	is_loc = p->s[start] == '#' && at_loc(p);
	if (!is_loc)
		return skip_line(p);
	p->pos += 4;
	rc = fp__ttir_loc_define(p, p->s + start, 1 + w, start);
	if (rc)
		return rc;
	skip_blank(p);
	if (!at_eol(p))
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected the end of the line");
	return FP_OK;
}

/* `{-# dialect_resources: ... #-}` at the end of a module. */
static int skip_resources(struct fp__ttir_parser *p)
{
	size_t start = p->pos, i;

	for (i = p->pos + 3; i + 3 <= p->n; i++) {
		if (p->s[i] == '#' && p->s[i + 1] == '-' && p->s[i + 2] == '}') {
			p->pos = i + 3;
			return FP_OK;
		}
	}
	return fp__ttir_error(p, FP_EFORMAT, start, "unterminated '{-#' block");
}

static int parse_body(struct fp__ttir_parser *p, const struct ctx *c, bool toplevel)
{
	int rc;

	for (;;) {
		char ch;

		skip_space_comments(p);
		if (p->pos >= p->n) {
			if (toplevel)
				return FP_OK;
			return fp__ttir_error(p, FP_EFORMAT, p->pos,
					      "unexpected end of input: a region is not closed");
		}
		ch = p->s[p->pos];
		if (ch == '}') {
			if (toplevel)
				return fp__ttir_error(p, FP_EFORMAT, p->pos, "unbalanced '}'");
			p->pos++;
			return FP_OK;
		}
		if (ch == '#' || ch == '!') {
			rc = parse_alias(p);
		} else if (ch == '{' && p->pos + 2 < p->n && p->s[p->pos + 1] == '-' &&
			   p->s[p->pos + 2] == '#') {
			rc = skip_resources(p);
		} else if (ch == '^') {
			rc = skip_line(p); /* a block label with its arguments */
		} else if (ch == '%' || ch == '"') {
			rc = parse_op(p, c);
		} else if (c->func == FP_TTIR_NONE && at_word(p, "module")) {
			rc = parse_module(p, c);
		} else if (c->func == FP_TTIR_NONE &&
			   (at_word(p, "tt.func") || at_word(p, "func.func"))) {
			rc = parse_func(p, c);
		} else if (is_id_start(ch)) {
			rc = parse_op(p, c);
		} else {
			rc = fp__ttir_error(p, FP_EFORMAT, p->pos, "expected an operation");
		}
		if (rc)
			return rc;
	}
}

/* ---- after the pass: locations and the function index -------------------------------------- */

static int resolve_all(struct fp__ttir_parser *p)
{
	struct fp_ttir *m = p->m;
	struct fp__ttir_frames fr;
	size_t i, a, k = 0;
	int rc;

	for (i = 0; i < m->n_ops; i++) {
		struct fp_ttir_op *op = &m->ops[i];

		rc = fp__ttir_loc_resolve(p, p->op_loc[i], op->offset, &fr);
		if (rc)
			return rc;
		op->loc = fr.inner;
		op->caller = fr.outer;
		op->var_name = fr.inner.name ? fr.inner.name : fr.outer.name;
		if (fr.callsite)
			op->flags |= FP_TTIR_OP_CALLSITE;
		if (fr.nchain > 1) {
			struct fp_ttir_loc *frames =
				fp_arena_calloc(&p->m->arena, fr.nchain, sizeof(*frames));

			if (!frames)
				return oom(p);
			memcpy(frames, fr.chain, fr.nchain * sizeof(*frames));
			op->frames = frames;
			op->n_frames = fr.nchain;
		} else {
			op->frames = &op->loc;
			op->n_frames = fr.nchain;
		}
	}
	for (i = 0; i < m->n_funcs; i++) {
		struct fp_ttir_func *f = &m->funcs[i];
		struct fp_ttir_arg *args = (struct fp_ttir_arg *)f->args;

		rc = fp__ttir_loc_resolve(p, p->func_loc[i], 0, &fr);
		if (rc)
			return rc;
		f->loc = fr.inner;
		for (a = 0; a < f->n_args && k < p->n_arg_loc; a++, k++) {
			rc = fp__ttir_loc_resolve(p, p->arg_loc[k], 0, &fr);
			if (rc)
				return rc;
			args[a].loc = fr.inner;
		}
	}
	return FP_OK;
}

static int index_funcs(struct fp__ttir_parser *p)
{
	struct fp_ttir *m = p->m;
	struct fp__ttir_slot *slot;
	bool added;
	size_t i;
	int rc;

	for (i = 0; i < m->n_funcs; i++) {
		rc = fp__ttir_strmap_put(&m->func_map, m->funcs[i].name, strlen(m->funcs[i].name),
					 (uint32_t)i, &slot, &added);
		if (rc)
			return fp__ttir_error(p, rc, 0, "out of memory");
	}
	return FP_OK;
}

static void parser_release(struct fp__ttir_parser *p)
{
	fp__ttir_strmap_release(&p->strs);
	fp__ttir_strmap_release(&p->type_map);
	fp__ttir_strmap_release(&p->alias_map);
	fp_free(p->types);
	fp_free(p->nodes);
	fp_free(p->aliases);
	fp_free(p->op_loc);
	fp_free(p->func_loc);
	fp_free(p->arg_loc);
	fp_free(p->spans);
}

int fp_ttir_parse_ex(const char *text, size_t len, const struct fp_ttir_limits *lim,
		     struct fp_ttir **out, struct fp_diag *diag)
{
	struct fp__ttir_parser p;
	struct ctx top = {FP_TTIR_NONE, 0, 0, FP_TTIR_NONE, 0, 0};
	struct fp_ttir *m;
	int rc;

	fp_diag_clear(diag);
	if (!out || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_ttir_parse: NULL argument");
	*out = NULL;
	memset(&p, 0, sizeof(p));
	if (lim)
		p.lim = *lim;
	if (!p.lim.max_bytes)
		p.lim.max_bytes = FP_TTIR_DEFAULT_MAX_BYTES;
	if (!p.lim.max_ops)
		p.lim.max_ops = FP_TTIR_DEFAULT_MAX_OPS;
	if (!p.lim.max_aliases)
		p.lim.max_aliases = FP_TTIR_DEFAULT_MAX_ALIASES;
	if (!p.lim.max_nesting)
		p.lim.max_nesting = FP_TTIR_DEFAULT_MAX_NESTING;
	p.lim.max_nesting = FP_MIN(p.lim.max_nesting, FP_TTIR_MAX_NESTING_CAP);
	p.lim.max_ops = FP_MIN(p.lim.max_ops, (size_t)UINT32_MAX / 16);
	p.lim.max_aliases = FP_MIN(p.lim.max_aliases, (size_t)UINT32_MAX / 16);
	if (len > p.lim.max_bytes)
		return fp_diag_set(diag, FP_ELIMIT, 0,
				   "TTIR text of %zu bytes exceeds the limit of %zu", len,
				   p.lim.max_bytes);

	m = fp_calloc(1, sizeof(*m));
	if (!m)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	fp_arena_init(&m->arena, 0, ARENA_CAP);
	p.s = text ? text : "";
	p.n = len;
	p.m = m;
	p.diag = diag;
	p.line_no = 1;

	rc = parse_body(&p, &top, true);
	if (!rc)
		rc = fp__ttir_loc_check(&p);
	if (!rc)
		rc = resolve_all(&p);
	if (!rc)
		rc = index_funcs(&p);
	parser_release(&p);
	if (rc) {
		fp_ttir_free(m);
		return rc;
	}
	*out = m;
	return FP_OK;
}

int fp_ttir_parse(const char *text, size_t len, struct fp_ttir **out, struct fp_diag *diag)
{
	return fp_ttir_parse_ex(text, len, NULL, out, diag);
}

void fp_ttir_free(struct fp_ttir *m)
{
	if (!m)
		return;
	fp__ttir_strmap_release(&m->func_map);
	fp_arena_release(&m->arena);
	fp_free(m->ops);
	fp_free(m->funcs);
	fp_free(m);
}

/* ---- queries ------------------------------------------------------------------------------- */

size_t fp_ttir_op_count(const struct fp_ttir *m)
{
	return m ? m->n_ops : 0;
}

const struct fp_ttir_op *fp_ttir_op_at(const struct fp_ttir *m, size_t i)
{
	return m && i < m->n_ops ? &m->ops[i] : NULL;
}

size_t fp_ttir_func_count(const struct fp_ttir *m)
{
	return m ? m->n_funcs : 0;
}

const struct fp_ttir_func *fp_ttir_func_at(const struct fp_ttir *m, size_t i)
{
	return m && i < m->n_funcs ? &m->funcs[i] : NULL;
}

size_t fp_ttir_func_find(const struct fp_ttir *m, const char *name)
{
	const struct fp__ttir_slot *hit;

	if (!m || !name)
		return FP_TTIR_NPOS;
	hit = fp__ttir_strmap_get(&m->func_map, name, strlen(name));
	return hit ? hit->value : FP_TTIR_NPOS;
}

size_t fp_ttir_entry(const struct fp_ttir *m)
{
	size_t i;

	if (!m || m->n_funcs == 0)
		return FP_TTIR_NPOS;
	for (i = 0; i < m->n_funcs; i++)
		if (m->funcs[i].is_public)
			return i;
	return 0;
}

static bool loc_matches(const struct fp_ttir_loc *l, const char *file, uint32_t line)
{
	return l->file && l->line == line && (!file || fp__path_suffix_match(l->file, file));
}

size_t fp_ttir_find_line(const struct fp_ttir *m, const char *file, uint32_t line, unsigned match,
			 size_t from)
{
	size_t i;

	if (!m)
		return FP_TTIR_NPOS;
	for (i = from; i < m->n_ops; i++) {
		const struct fp_ttir_op *op = &m->ops[i];

		if ((match & FP_TTIR_MATCH_LOC) && loc_matches(&op->loc, file, line))
			return i;
		if ((match & FP_TTIR_MATCH_CALLER) && loc_matches(&op->caller, file, line))
			return i;
	}
	return FP_TTIR_NPOS;
}
