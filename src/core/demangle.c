/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The C++ demangler (include/flagprism/demangle.h): a recursive-descent reader of the Itanium
 * C++ ABI's <mangled-name> grammar, the subset that kernel names use, written from the ABI
 * document. It renders as it parses, into capped buffers, and keeps what later parts of a name
 * refer back to (substitutions S_, S0_..., template parameters T_, T0_...) as copies of the text
 * already rendered. The text carries marker bytes around template-argument lists, parameter
 * lists and return types; the last step turns it into the full form (markers dropped) or the
 * short form (those regions elided at the outer level). It is not a general C++ pretty printer:
 * constructs outside the subset (decltype, most expressions, requires-clauses) give FP_ENOTSUP,
 * and the caller shows the mangled name.
 */
#include "fp-setup.h"

#include <flagprism/demangle.h>
#include <flagprism/strbuf.h>

#define MAX_DEPTH 192u              /* nested parse calls */
#define MAX_SUBS 4096u              /* substitution candidates */
#define MAX_TARGS 1024u             /* template parameters of one template-argument list */
#define STORE_MAX ((size_t)1 << 21) /* bytes of copied texts (substitutions, parameters) */
#define LAST_MAX 256u               /* bytes of the name a constructor repeats */

/* Markers in the working text. Never part of a name: source names are printable ASCII. */
#define M_TA_OPEN '\x01' /* '<' of a template-argument list */
#define M_TA_CLOSE '\x02'
#define M_PA_OPEN '\x03' /* a parameter list "(...)" and the qualifiers after it */
#define M_PA_CLOSE '\x04'
#define M_RT_OPEN '\x05' /* a function's return type and its space */
#define M_RT_CLOSE '\x06'
#define M_TP_OPEN '\x07' /* a template parameter's placeholder: \x07 <index> \x08 */
#define M_TP_CLOSE '\x08'
#define M_DP_OPEN '\x0e' /* a pack expansion (Dp <type>), expanded by resolve() */
#define M_DP_CLOSE '\x0f'

#define NONE ((size_t)-1)

struct span {
	size_t off, len;
};

/* A template parameter's argument: its text, and for a pack (J...E) its elements' texts. */
struct targ {
	struct span text;
	size_t elem0, nelem; /* in dm.elems */
	bool pack;
};

/* Where a declarator goes into a type's text (function and array types); see struct tinfo. */
struct sub {
	struct span text;
	size_t decl; /* offset in the text, NONE: at the end */
	bool parens, space;
};

struct dm {
	const char *p, *end;
	unsigned depth;
	struct fp_strbuf store; /* texts the tables point into */
	struct sub *subs;
	size_t nsubs, asubs;
	struct targ *targs;
	size_t ntargs, atargs;
	struct span *elems; /* elements of packs among the template arguments */
	size_t nelems, aelems;
	size_t sub_decl; /* of the substitution last written: absolute, NONE: none */
	bool sub_parens, sub_space;
};

/* What the name of an encoding tells the rest of it. */
struct nstate {
	bool ends_targs;     /* the name ends with template arguments: a return type follows */
	bool ctor_dtor_conv; /* constructor, destructor or conversion: no return type */
	char quals[32];      /* " const", " &&"...: written after the parameters */
};

/* Where an outer pointer, reference or member pointer goes into a type's text (function and
 * array types are written around their declarator: "void (*)(int)", "int (*) [4]"). */
struct tinfo {
	size_t at;   /* offset in the output, NONE: append at the end */
	bool parens; /* a "(...)" group already holds a declarator: insert inside it */
	bool space;  /* the first declarator needs a space before it (arrays) */
};

static int p_type(struct dm *d, struct fp_strbuf *o, struct tinfo *ti);
static int p_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns);
static int p_encoding(struct dm *d, struct fp_strbuf *o);
static int p_template_args(struct dm *d, struct fp_strbuf *o, bool tag);
static int p_expression(struct dm *d, struct fp_strbuf *o);
static int p_address_of(struct dm *d, struct fp_strbuf *o);
static size_t region_end(const char *s, size_t n, size_t i);

/* ---- the cursor ---------------------------------------------------------------------------- */

static char peek(const struct dm *d, size_t k)
{
	return (size_t)(d->end - d->p) > k ? d->p[k] : '\0';
}

static bool eat(struct dm *d, char c)
{
	if (peek(d, 0) != c || d->p >= d->end)
		return false;
	d->p++;
	return true;
}

static bool eat2(struct dm *d, const char *s)
{
	if (peek(d, 0) != s[0] || peek(d, 1) != s[1] || d->end - d->p < 2)
		return false;
	d->p += 2;
	return true;
}

/* Append a qualifier to a small fixed buffer (bounded; qualifiers are few). */
static void qadd(char *q, size_t cap, const char *s)
{
	size_t n = strlen(q);

	snprintf(q + n, cap - n, "%s", s);
}

/* <CV-qualifiers> ::= [r] [V] [K], written " const volatile restrict" (c++filt's order). */
static void p_cv(struct dm *d, char *q, size_t cap)
{
	bool r = eat(d, 'r'), v = eat(d, 'V'), k = eat(d, 'K');

	if (k)
		qadd(q, cap, " const");
	if (v)
		qadd(q, cap, " volatile");
	if (r)
		qadd(q, cap, " restrict");
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* <number> ::= [n] <decimal>, at most 9 digits (names are far shorter). */
static int p_number(struct dm *d, bool *neg, size_t *v)
{
	size_t n = 0, i = 0;

	*neg = eat(d, 'n');
	if (!is_digit(peek(d, 0)))
		return FP_EFORMAT;
	while (is_digit(peek(d, 0))) {
		if (++i > 9)
			return FP_ELIMIT;
		n = n * 10 + (size_t)(*d->p++ - '0');
	}
	*v = n;
	return FP_OK;
}

/* <seq-id> in base 36, then '_': S_ is 0, S0_ is 1... (the caller adds the 1). */
static int p_seq_id(struct dm *d, size_t *v)
{
	size_t n = 0, i = 0;

	while (peek(d, 0) != '_') {
		char c = peek(d, 0);

		if (++i > 6)
			return FP_ELIMIT;
		if (is_digit(c))
			n = n * 36 + (size_t)(c - '0');
		else if (c >= 'A' && c <= 'Z')
			n = n * 36 + (size_t)(c - 'A' + 10);
		else
			return FP_EFORMAT;
		d->p++;
	}
	d->p++;
	*v = n;
	return FP_OK;
}

/* ---- text helpers --------------------------------------------------------------------------- */

static int put(struct fp_strbuf *o, const char *s)
{
	return fp_strbuf_addstr(o, s);
}

static int putc_(struct fp_strbuf *o, char c)
{
	return fp_strbuf_addch(o, (unsigned char)c);
}

static int insert(struct fp_strbuf *o, size_t at, const char *s, size_t n)
{
	int rc;

	if (at > o->len)
		return FP_EFORMAT;
	rc = fp_strbuf_grow(o, n);
	if (rc)
		return rc;
	memmove(o->buf + at + n, o->buf + at, o->len - at);
	memcpy(o->buf + at, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
	return FP_OK;
}

static void buf_init(struct fp_strbuf *b)
{
	fp_strbuf_init(b, FP_DEMANGLE_MAX);
}

/* Keep o[start..] for later references: a substitution candidate. `decl` (absolute, NONE)
 * and the flags say where a declarator goes into it, for function and array types. */
static int add_sub_decl(struct dm *d, const struct fp_strbuf *o, size_t start, size_t decl,
			bool parens, bool space)
{
	struct sub s;
	int rc;

	if (d->nsubs >= MAX_SUBS)
		return FP_ELIMIT;
	if (d->nsubs == d->asubs) {
		size_t na = d->asubs ? d->asubs * 2 : 32;
		struct sub *n = fp_reallocarray(d->subs, na, sizeof(*n));

		if (!n)
			return FP_ENOMEM;
		d->subs = n;
		d->asubs = na;
	}
	s.text.off = d->store.len;
	s.text.len = o->len - start;
	s.decl = decl == NONE || decl < start ? NONE : decl - start;
	s.parens = parens;
	s.space = space;
	rc = fp_strbuf_add(&d->store, o->buf + start, s.text.len);
	if (rc)
		return rc;
	d->subs[d->nsubs++] = s;
	return FP_OK;
}

static int add_sub(struct dm *d, const struct fp_strbuf *o, size_t start)
{
	return add_sub_decl(d, o, start, NONE, false, false);
}

static int keep_text(struct dm *d, const struct fp_strbuf *o, size_t start, struct span *out)
{
	out->off = d->store.len;
	out->len = o->len - start;
	return fp_strbuf_add(&d->store, o->buf + start, out->len);
}

static int add_targ(struct dm *d, const struct fp_strbuf *o, size_t start, bool pack, size_t elem0)
{
	struct targ t;
	int rc;

	if (d->ntargs >= MAX_TARGS)
		return FP_ELIMIT;
	if (d->ntargs == d->atargs) {
		size_t na = d->atargs ? d->atargs * 2 : 16;
		struct targ *n = fp_reallocarray(d->targs, na, sizeof(*n));

		if (!n)
			return FP_ENOMEM;
		d->targs = n;
		d->atargs = na;
	}
	rc = keep_text(d, o, start, &t.text);
	if (rc)
		return rc;
	t.pack = pack;
	t.elem0 = elem0;
	t.nelem = pack ? d->nelems - elem0 : 0;
	d->targs[d->ntargs++] = t;
	return FP_OK;
}

static int add_elem(struct dm *d, const struct fp_strbuf *o, size_t start)
{
	if (d->nelems >= (size_t)MAX_TARGS * 16)
		return FP_ELIMIT;
	if (d->nelems == d->aelems) {
		size_t na = d->aelems ? d->aelems * 2 : 16;
		struct span *n = fp_reallocarray(d->elems, na, sizeof(*n));

		if (!n)
			return FP_ENOMEM;
		d->elems = n;
		d->aelems = na;
	}
	return keep_text(d, o, start, &d->elems[d->nelems++]);
}

static int put_span(struct dm *d, struct fp_strbuf *o, struct span s)
{
	return fp_strbuf_add(o, d->store.buf + s.off, s.len);
}

static int enter(struct dm *d)
{
	return ++d->depth > MAX_DEPTH ? FP_ELIMIT : FP_OK;
}

/* ---- names ----------------------------------------------------------------------------------- */

/* <source-name> ::= <length> <identifier>; `last` (may be NULL) gets the identifier. */
static int p_source_name(struct dm *d, struct fp_strbuf *o, char *last)
{
	bool neg;
	size_t n, i;
	int rc = p_number(d, &neg, &n);

	if (rc)
		return rc;
	if (neg || n == 0 || n > (size_t)(d->end - d->p))
		return FP_EFORMAT;
	for (i = 0; i < n; i++)
		if ((unsigned char)d->p[i] < 0x21 || (unsigned char)d->p[i] > 0x7e)
			return FP_EFORMAT;
	if (n >= 10 && !memcmp(d->p, "_GLOBAL__N", 10)) {
		rc = put(o, "(anonymous namespace)");
		if (last)
			snprintf(last, LAST_MAX, "%s", "(anonymous namespace)");
	} else {
		rc = fp_strbuf_add(o, d->p, n);
		if (last)
			snprintf(last, LAST_MAX, "%.*s", (int)FP_MIN(n, LAST_MAX - 1), d->p);
	}
	d->p += n;
	return rc;
}

struct op {
	char code[3];
	const char *text;
	int arity; /* in expressions: 1 prefix, 2 binary, 3 the conditional */
};

static const struct op ops[] = {
	{"nw", "new", 0}, {"na", "new[]", 0}, {"dl", "delete", 0}, {"da", "delete[]", 0},
	{"ps", "+", 1},   {"ng", "-", 1},     {"ad", "&", 1},      {"de", "*", 1},
	{"co", "~", 1},   {"pl", "+", 2},     {"mi", "-", 2},      {"ml", "*", 2},
	{"dv", "/", 2},   {"rm", "%", 2},     {"an", "&", 2},      {"or", "|", 2},
	{"eo", "^", 2},   {"aS", "=", 2},     {"pL", "+=", 2},     {"mI", "-=", 2},
	{"mL", "*=", 2},  {"dV", "/=", 2},    {"rM", "%=", 2},     {"aN", "&=", 2},
	{"oR", "|=", 2},  {"eO", "^=", 2},    {"ls", "<<", 2},     {"rs", ">>", 2},
	{"lS", "<<=", 2}, {"rS", ">>=", 2},   {"eq", "==", 2},     {"ne", "!=", 2},
	{"lt", "<", 2},   {"gt", ">", 2},     {"le", "<=", 2},     {"ge", ">=", 2},
	{"ss", "<=>", 2}, {"nt", "!", 1},     {"aa", "&&", 2},     {"oo", "||", 2},
	{"pp", "++", 1},  {"mm", "--", 1},    {"cm", ",", 2},      {"pm", "->*", 2},
	{"pt", "->", 2},  {"cl", "()", 0},    {"ix", "[]", 2},     {"qu", "?", 3},
};

static const struct op *find_op(char a, char b)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(ops); i++)
		if (ops[i].code[0] == a && ops[i].code[1] == b)
			return &ops[i];
	return NULL;
}

/* <operator-name>: "operator+", "operator new", conversions "operator int". */
static int p_operator_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns)
{
	const struct op *op;
	int rc;

	if (eat2(d, "cv")) {
		if (ns)
			ns->ctor_dtor_conv = true;
		rc = put(o, "operator ");
		return rc ? rc : p_type(d, o, NULL);
	}
	if (eat2(d, "li")) {
		rc = put(o, "operator\"\" ");
		return rc ? rc : p_source_name(d, o, NULL);
	}
	if (peek(d, 0) == 'v' && is_digit(peek(d, 1))) {
		d->p += 2;
		rc = put(o, "operator ");
		return rc ? rc : p_source_name(d, o, NULL);
	}
	op = find_op(peek(d, 0), peek(d, 1));
	if (!op)
		return FP_EFORMAT;
	d->p += 2;
	rc = put(o, "operator");
	if (!rc && op->text[0] >= 'a' && op->text[0] <= 'z')
		rc = putc_(o, ' ');
	return rc ? rc : put(o, op->text);
}

/* <abi-tag>*: [abi:cxx11] */
static int p_abi_tags(struct dm *d, struct fp_strbuf *o)
{
	int rc = FP_OK;

	while (!rc && peek(d, 0) == 'B') {
		d->p++;
		rc = put(o, "[abi:");
		if (!rc)
			rc = p_source_name(d, o, NULL);
		if (!rc)
			rc = putc_(o, ']');
	}
	return rc;
}

/* <discriminator> ::= _ <digit> | __ <number> _ (not printed) */
static void p_discriminator(struct dm *d)
{
	if (peek(d, 0) != '_')
		return;
	if (is_digit(peek(d, 1))) {
		d->p += 2;
		return;
	}
	if (peek(d, 1) == '_') {
		const char *save = d->p;

		d->p += 2;
		while (is_digit(peek(d, 0)))
			d->p++;
		if (!eat(d, '_'))
			d->p = save;
	}
}

/* Lambda parameters: <type>+ until 'E', "v" alone for none, written as a parameter list. */
static int p_param_list(struct dm *d, struct fp_strbuf *o, char end)
{
	bool first = true;
	int rc = putc_(o, M_PA_OPEN);

	if (!rc)
		rc = putc_(o, '(');
	if (!rc && peek(d, 0) == 'v' && peek(d, 1) == end) {
		d->p++;
	} else {
		while (!rc && peek(d, 0) != end) {
			if (d->p >= d->end)
				return FP_EFORMAT;
			if (!first)
				rc = put(o, ", ");
			if (!rc)
				rc = p_type(d, o, NULL);
			first = false;
		}
	}
	if (!rc)
		rc = putc_(o, ')');
	if (!rc)
		rc = putc_(o, M_PA_CLOSE);
	return rc;
}

/*
 * In a lambda's parameter list, T_, T0_... are the lambda's own (generic) parameters: shown as
 * "auto:1", "auto:2" there, while the substitutions taken inside keep the placeholders, which
 * mean the template in scope wherever they are used (c++filt's reading).
 */
static int autos(struct fp_strbuf *o, size_t at)
{
	struct fp_strbuf tmp;
	size_t i, j, k;
	int rc = FP_OK;

	if (!memchr(o->buf + at, M_TP_OPEN, o->len - at))
		return FP_OK;
	buf_init(&tmp);
	for (i = at; !rc && i < o->len; i++) {
		if (o->buf[i] != M_TP_OPEN) {
			rc = putc_(&tmp, o->buf[i]);
			continue;
		}
		for (k = 0, j = i + 1; j < o->len && is_digit(o->buf[j]); j++)
			k = k * 10 + (size_t)(o->buf[j] - '0');
		rc = fp_strbuf_addf(&tmp, "auto:%zu", k + 1);
		i = j;
	}
	if (!rc) {
		o->len = at;
		rc = fp_strbuf_add(o, tmp.buf, tmp.len);
	}
	fp_strbuf_release(&tmp);
	return rc;
}

/* <unnamed-type-name>: Ut [<number>] _, and lambdas Ul <params> E [<number>] _ */
static int p_unnamed(struct dm *d, struct fp_strbuf *o)
{
	size_t n = 0, at;
	bool neg;
	int rc;

	if (eat2(d, "Ut")) {
		bool num = is_digit(peek(d, 0));

		if (num && (rc = p_number(d, &neg, &n)))
			return rc;
		if (!eat(d, '_'))
			return FP_EFORMAT;
		return fp_strbuf_addf(o, "{unnamed type#%zu}", num ? n + 2 : 1);
	}
	if (!eat2(d, "Ul"))
		return FP_EFORMAT;
	rc = put(o, "{lambda");
	at = o->len;
	if (!rc)
		rc = p_param_list(d, o, 'E');
	if (!rc)
		rc = autos(o, at); /* a generic lambda's own parameters */
	if (rc)
		return rc;
	if (!eat(d, 'E'))
		return FP_EFORMAT;
	if (is_digit(peek(d, 0))) {
		rc = p_number(d, &neg, &n);
		if (rc)
			return rc;
		n += 2;
	} else {
		n = 1;
	}
	if (!eat(d, '_'))
		return FP_EFORMAT;
	return fp_strbuf_addf(o, "#%zu}", n);
}

/* <unqualified-name>, with its ABI tags; `last` gets a source name (for constructors). */
static int p_unqualified_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns, char *last)
{
	char c = peek(d, 0);
	int rc;

	if (c == 'L' && is_digit(peek(d, 1)))
		d->p++, c = peek(d, 0); /* internal linkage (GCC) */
	if (is_digit(c))
		rc = p_source_name(d, o, last);
	else if (c == 'U')
		rc = p_unnamed(d, o);
	else if (c == 'D' && peek(d, 1) == 'C') {
		bool first = true;

		d->p += 2;
		rc = putc_(o, '[');
		while (!rc && !eat(d, 'E')) {
			if (d->p >= d->end)
				return FP_EFORMAT;
			if (!first)
				rc = put(o, ", ");
			if (!rc)
				rc = p_source_name(d, o, NULL);
			first = false;
		}
		if (!rc)
			rc = putc_(o, ']');
	} else if (c >= 'a' && c <= 'z')
		rc = p_operator_name(d, o, ns);
	else
		return FP_EFORMAT;
	return rc ? rc : p_abi_tags(d, o);
}

/* The last component of a substituted name, without template arguments (for constructors). */
static void last_of(const char *s, size_t n, char *last)
{
	size_t i, start = 0, end = n;
	int depth = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == M_TA_OPEN)
			depth++;
		else if (s[i] == M_TA_CLOSE)
			depth--;
		else if (!depth && s[i] == ':' && i + 1 < n && s[i + 1] == ':')
			start = i + 2;
	}
	for (i = start; i < n; i++)
		if (s[i] == M_TA_OPEN) {
			end = i;
			break;
		}
	snprintf(last, LAST_MAX, "%.*s", (int)FP_MIN(end - start, LAST_MAX - 1), s + start);
}

/* <substitution>: S_, S<seq-id>_, and the std:: abbreviations. */
static int p_substitution(struct dm *d, struct fp_strbuf *o)
{
	static const struct {
		char c;
		const char *text;
	} abbr[] = {
		{'a', "std::allocator"}, {'b', "std::basic_string"}, {'s', "std::string"},
		{'i', "std::istream"},   {'o', "std::ostream"},      {'d', "std::iostream"},
	};
	size_t i, seq;
	int rc;

	if (!eat(d, 'S'))
		return FP_EFORMAT;
	d->sub_decl = NONE;
	for (i = 0; i < FP_ARRAY_SIZE(abbr); i++)
		if (eat(d, abbr[i].c))
			return put(o, abbr[i].text);
	if (eat(d, '_'))
		seq = 0;
	else {
		rc = p_seq_id(d, &seq);
		if (rc)
			return rc;
		seq++;
	}
	if (seq >= d->nsubs)
		return FP_EFORMAT;
	d->sub_decl = d->subs[seq].decl == NONE ? NONE : o->len + d->subs[seq].decl;
	d->sub_parens = d->subs[seq].parens;
	d->sub_space = d->subs[seq].space;
	return put_span(d, o, d->subs[seq].text);
}

/* <template-param> ::= T_ | T <number> _ */
static int p_template_param(struct dm *d, struct fp_strbuf *o)
{
	size_t i = 0;
	bool neg;
	int rc;

	if (!eat(d, 'T'))
		return FP_EFORMAT;
	if (!eat(d, '_')) {
		rc = p_number(d, &neg, &i);
		if (rc || neg || !eat(d, '_'))
			return rc ? rc : FP_EFORMAT;
		i++;
	}
	if (i >= MAX_TARGS)
		return FP_EFORMAT;
	/* A placeholder, resolved when the enclosing encoding ends (resolve()): a substitution
	 * copied from here and used in another encoding means that encoding's parameter. */
	return fp_strbuf_addf(o, "%c%zu%c", M_TP_OPEN, i, M_TP_CLOSE);
}

/*
 * Replace the template-parameter placeholders in o[start..] with the arguments they stand for
 * in the encoding that just ended. An argument's own text may hold placeholders of an enclosing
 * scope (a parameter used before its arguments end): resolved again, a few levels deep.
 */
static int resolve_range(struct dm *d, const char *src, size_t n, struct fp_strbuf *out,
			 unsigned level, size_t ok, const struct span *oval);

/* The placeholder at src[i] (M_TP_OPEN): its index in *k, the offset of its M_TP_CLOSE. */
static int placeholder(const char *src, size_t n, size_t i, size_t *k, size_t *close)
{
	size_t j, v = 0;

	for (j = i + 1; j < n && is_digit(src[j]) && j - i < 8; j++)
		v = v * 10 + (size_t)(src[j] - '0');
	if (j >= n || src[j] != M_TP_CLOSE)
		return FP_EFORMAT;
	*k = v;
	*close = j;
	return FP_OK;
}

/* The offset of the M_DP_CLOSE that ends the expansion opened at src[i], or n. */
static size_t dp_end(const char *src, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		if (src[i] == M_DP_OPEN)
			depth++;
		else if (src[i] == M_DP_CLOSE && --depth == 0)
			return i;
	}
	return n;
}

/*
 * A pack expansion src[0..n) (the pattern of Dp <type>): once per element of the first pack it
 * names, joined with ", " (c++filt's reading); a pattern that names no pack gets "...".
 */
static int expand_pack(struct dm *d, const char *src, size_t n, struct fp_strbuf *out,
		       unsigned level, bool *empty)
{
	size_t i, k, close, e;
	int rc;

	*empty = false;
	for (i = 0; i < n; i++) {
		if (src[i] != M_TP_OPEN)
			continue;
		rc = placeholder(src, n, i, &k, &close);
		if (rc)
			return rc;
		if (k < d->ntargs && d->targs[k].pack)
			break;
		i = close;
	}
	if (i >= n) {
		rc = resolve_range(d, src, n, out, level, NONE, NULL);
		return rc ? rc : put(out, "...");
	}
	*empty = d->targs[k].nelem == 0;
	for (e = 0; e < d->targs[k].nelem; e++) {
		rc = e ? put(out, ", ") : FP_OK;
		if (!rc)
			rc = resolve_range(d, src, n, out, level, k,
					   &d->elems[d->targs[k].elem0 + e]);
		if (rc)
			return rc;
	}
	return FP_OK;
}

/*
 * Write src[0..n) to `out` with the template-parameter placeholders replaced by the arguments
 * they stand for in the encoding that just ended (parameter `ok`, if not NONE, by *oval: one
 * element of a pack being expanded) and pack expansions expanded. An argument's own text may
 * hold placeholders too (a parameter used before its arguments end): resolved again, a few
 * levels deep.
 */
static int resolve_range(struct dm *d, const char *src, size_t n, struct fp_strbuf *out,
			 unsigned level, size_t ok, const struct span *oval)
{
	size_t i, k, close;
	bool empty, skip_comma = false;
	int rc = FP_OK;

	if (level > 6)
		return FP_ENOTSUP;
	for (i = 0; !rc && i < n; i++) {
		char c = src[i];

		if (skip_comma) {
			skip_comma = false;
			if (c == ',' && i + 1 < n && src[i + 1] == ' ') {
				i++;
				continue;
			}
		}
		if (c == M_TP_OPEN) {
			rc = placeholder(src, n, i, &k, &close);
			if (rc)
				break;
			if (k == ok && oval) {
				rc = resolve_range(d, d->store.buf + oval->off, oval->len, out,
						   level + 1, NONE, NULL);
			} else if (k >= d->ntargs) {
				rc = FP_ENOTSUP; /* a forward reference (conversion templates) */
			} else {
				const struct span *t = &d->targs[k].text;

				rc = resolve_range(d, d->store.buf + t->off, t->len, out, level + 1,
						   NONE, NULL);
			}
			i = close;
		} else if (c == M_DP_OPEN) {
			close = dp_end(src, n, i);
			if (close >= n) {
				rc = FP_EFORMAT;
				break;
			}
			rc = expand_pack(d, src + i + 1, close - i - 1, out, level + 1, &empty);
			if (!rc && empty) {
				/* nothing expanded: no dangling ", " on either side */
				if (out->len >= 2 && !memcmp(out->buf + out->len - 2, ", ", 2))
					out->len -= 2, out->buf[out->len] = '\0';
				else
					skip_comma = true;
			}
			i = close;
		} else {
			rc = putc_(out, c);
		}
	}
	return rc;
}

/* resolve_range() over o[start..], in place. */
static int resolve(struct dm *d, struct fp_strbuf *o, size_t start)
{
	struct fp_strbuf tmp;
	int rc;

	if (!memchr(o->buf + start, M_TP_OPEN, o->len - start) &&
	    !memchr(o->buf + start, M_DP_OPEN, o->len - start))
		return FP_OK;
	buf_init(&tmp);
	rc = resolve_range(d, o->buf + start, o->len - start, &tmp, 0, NONE, NULL);
	if (!rc) {
		o->len = start;
		rc = fp_strbuf_add(o, tmp.buf, tmp.len);
	}
	fp_strbuf_release(&tmp);
	return rc;
}

/* <nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E */
static int p_nested_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns)
{
	size_t start = o->len;
	char last[LAST_MAX] = "";
	char q[32] = "";
	bool have = false, pushed = false;
	int rc = FP_OK;

	if (!eat(d, 'N'))
		return FP_EFORMAT;
	p_cv(d, q, sizeof(q));
	if (peek(d, 0) == 'R' && peek(d, 1) != 'E')
		d->p++, qadd(q, sizeof(q), " &");
	else if (peek(d, 0) == 'O' && peek(d, 1) != 'E')
		d->p++, qadd(q, sizeof(q), " &&");
	if (ns)
		memcpy(ns->quals, q, sizeof(q));
	if (eat2(d, "St")) {
		rc = put(o, "std");
		have = true;
	}
	while (!rc && !eat(d, 'E')) {
		char c = peek(d, 0), c1 = peek(d, 1);

		if (d->p >= d->end)
			return FP_EFORMAT;
		if (c == 'M') { /* <data-member-prefix> */
			d->p++;
			if (!have)
				return FP_EFORMAT;
			continue;
		}
		if (ns)
			ns->ends_targs = false;
		pushed = false;
		if (c == 'I') {
			if (!have)
				return FP_EFORMAT;
			rc = p_template_args(d, o, ns != NULL);
			if (ns)
				ns->ends_targs = true;
		} else if (c == 'T') {
			if (have)
				rc = put(o, "::");
			if (!rc)
				rc = p_template_param(d, o);
			last_of(o->buf + start, o->len - start, last);
		} else if (c == 'D' && (c1 == 't' || c1 == 'T')) {
			return FP_ENOTSUP; /* decltype */
		} else if (c == 'S' && c1 != 't') {
			size_t at = o->len;

			if (have)
				return FP_EFORMAT;
			rc = p_substitution(d, o);
			if (!rc)
				last_of(o->buf + at, o->len - at, last);
			have = true;
			continue; /* not a new candidate */
		} else if (c == 'C' || (c == 'D' && c1 != 'C')) {
			bool dtor = c == 'D';

			if (!have || !last[0])
				return FP_EFORMAT;
			d->p++;
			if (dtor ? !strchr("0124", peek(d, 0)) || !peek(d, 0) :
				   !strchr("12345I", peek(d, 0)) || !peek(d, 0))
				return FP_EFORMAT;
			if (eat(d, 'I')) { /* inheriting constructor: CI1 <base class type> */
				struct fp_strbuf base;

				if (!is_digit(peek(d, 0)))
					return FP_EFORMAT;
				d->p++;
				buf_init(&base);
				rc = p_type(d, &base, NULL); /* parsed, not printed */
				fp_strbuf_release(&base);
				if (rc)
					return rc;
			} else {
				d->p++;
			}
			if (ns)
				ns->ctor_dtor_conv = true;
			rc = put(o, dtor ? "::~" : "::");
			if (!rc)
				rc = put(o, last);
			if (!rc)
				rc = p_abi_tags(d, o);
		} else {
			if (have)
				rc = put(o, "::");
			if (!rc)
				rc = p_unqualified_name(d, o, ns, last);
		}
		if (!rc)
			rc = add_sub(d, o, start);
		pushed = !rc;
		have = true;
	}
	if (rc)
		return rc;
	if (!have)
		return FP_EFORMAT;
	if (pushed) /* the whole name is not a candidate here (a type adds it itself) */
		d->nsubs--;
	return FP_OK;
}

/* <local-name> ::= Z <function encoding> E <entity name> [<discriminator>] | ... E s ... */
static int p_local_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns)
{
	size_t at;
	int rc;

	if (!eat(d, 'Z'))
		return FP_EFORMAT;
	at = o->len;
	rc = p_encoding(d, o);
	if (rc)
		return rc;
	if (!eat(d, 'E'))
		return FP_EFORMAT;
	if (o->len > at && o->buf[at] == M_RT_OPEN) {
		/* "ns::f<int>(int)::x": a local name does not repeat the return type */
		size_t end = region_end(o->buf, o->len, at);

		if (end < o->len) {
			memmove(o->buf + at, o->buf + end + 1, o->len - end - 1);
			o->len -= end + 1 - at;
			o->buf[o->len] = '\0';
		}
	}
	if (eat(d, 's')) {
		p_discriminator(d);
		return put(o, "::string literal");
	}
	if (eat(d, 'd')) {
		bool neg;
		size_t n;

		if (peek(d, 0) != '_' && (rc = p_number(d, &neg, &n)))
			return rc;
		if (!eat(d, '_'))
			return FP_EFORMAT;
	}
	rc = put(o, "::");
	if (!rc)
		rc = p_name(d, o, ns);
	if (!rc)
		p_discriminator(d);
	return rc;
}

/* <unscoped-name> ::= <unqualified-name> | St <unqualified-name>, or a substitution. */
static int p_unscoped_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns, bool *is_sub)
{
	bool std = eat2(d, "St");

	*is_sub = false;
	if (!std && peek(d, 0) == 'S') {
		*is_sub = true;
		return p_substitution(d, o);
	}
	if (std) {
		int rc = put(o, "std::");

		if (rc)
			return rc;
	}
	return p_unqualified_name(d, o, ns, NULL);
}

static int p_name(struct dm *d, struct fp_strbuf *o, struct nstate *ns)
{
	size_t start = o->len;
	bool is_sub;
	int rc;

	if ((rc = enter(d)))
		return rc;
	if (peek(d, 0) == 'N')
		rc = p_nested_name(d, o, ns);
	else if (peek(d, 0) == 'Z')
		rc = p_local_name(d, o, ns);
	else {
		rc = p_unscoped_name(d, o, ns, &is_sub);
		if (!rc && peek(d, 0) == 'I') {
			if (!is_sub)
				rc = add_sub(d, o, start); /* an unscoped template name */
			if (!rc)
				rc = p_template_args(d, o, ns != NULL);
			if (ns)
				ns->ends_targs = true;
		} else if (!rc && is_sub) {
			rc = FP_EFORMAT; /* a substitution here must have template arguments */
		}
	}
	d->depth--;
	return rc;
}

/* ---- template arguments and expressions ----------------------------------------------------- */

/* <expr-primary> ::= L <type> <value> E | L <mangled-name> E | LDnE ... */
static int p_expr_primary(struct dm *d, struct fp_strbuf *o)
{
	static const struct {
		char t;
		const char *suffix;
	} ints[] = {{'i', ""},   {'j', "u"},   {'l', "l"},    {'m', "ul"},
		    {'x', "ll"}, {'y', "ull"}, {'n', "i128"}, {'o', "ui128"}};
	size_t i, n = 0;
	int rc;

	if (!eat(d, 'L'))
		return FP_EFORMAT;
	if (eat2(d, "_Z")) {
		rc = p_encoding(d, o);
		return rc ? rc : eat(d, 'E') ? FP_OK : FP_EFORMAT;
	}
	if (eat2(d, "Dn")) {
		eat(d, '0');
		rc = put(o, "nullptr");
		return rc ? rc : eat(d, 'E') ? FP_OK : FP_EFORMAT;
	}
	if (peek(d, 0) == 'b' && (peek(d, 1) == '0' || peek(d, 1) == '1') && peek(d, 2) == 'E') {
		rc = put(o, peek(d, 1) == '1' ? "true" : "false");
		d->p += 3;
		return rc;
	}
	for (i = 0; i < FP_ARRAY_SIZE(ints); i++) {
		if (peek(d, 0) != ints[i].t)
			continue;
		d->p++;
		if (eat(d, 'n') && (rc = putc_(o, '-')))
			return rc;
		while (is_digit(peek(d, n)))
			n++;
		if (!n || peek(d, n) != 'E')
			return FP_EFORMAT;
		rc = fp_strbuf_add(o, d->p, n);
		if (!rc)
			rc = put(o, ints[i].suffix);
		d->p += n + 1;
		return rc;
	}
	/* Any other type: "(type)value" (chars, enums, floats as their hex digits). */
	rc = putc_(o, '(');
	if (!rc)
		rc = p_type(d, o, NULL);
	if (!rc)
		rc = putc_(o, ')');
	if (!rc && eat(d, 'n'))
		rc = putc_(o, '-');
	while (!rc && peek(d, n) && peek(d, n) != 'E') {
		char c = peek(d, n);

		if (!is_digit(c) && !(c >= 'a' && c <= 'f'))
			return FP_EFORMAT;
		n++;
	}
	if (rc)
		return rc;
	if (peek(d, n) != 'E')
		return FP_EFORMAT;
	rc = fp_strbuf_add(o, d->p, n);
	d->p += n + 1;
	return rc;
}

/* Whether a name has a "::" outside its template arguments and parameter lists. */
static bool qualified(const char *s, size_t n)
{
	size_t i;
	int depth = 0;

	for (i = 0; i + 1 < n; i++) {
		if (s[i] == M_TA_OPEN || s[i] == M_PA_OPEN)
			depth++;
		else if (s[i] == M_TA_CLOSE || s[i] == M_PA_CLOSE)
			depth--;
		else if (!depth && s[i] == ':' && s[i + 1] == ':')
			return true;
	}
	return false;
}

/*
 * &function as a template argument (ad L_Z <encoding> E), as c++filt writes it: "&ns::f" for a
 * qualified plain function, "&(ret ns::f<T>(params))" for a function template (its return type
 * and parameters say which one) and "&(f(params))" for an unqualified one.
 */
static int p_address_of(struct dm *d, struct fp_strbuf *o)
{
	struct fp_strbuf enc;
	size_t n;
	int rc;

	d->p += 5; /* "adL_Z" */
	buf_init(&enc);
	rc = p_encoding(d, &enc);
	if (!rc && !eat(d, 'E'))
		rc = FP_EFORMAT;
	if (!rc && ((enc.len && enc.buf[0] == M_RT_OPEN) || !qualified(enc.buf, enc.len))) {
		rc = put(o, "&(");
		if (!rc)
			rc = fp_strbuf_add(o, enc.buf, enc.len);
		if (!rc)
			rc = putc_(o, ')');
	} else if (!rc) {
		/* drop the trailing parameter list */
		n = enc.len;
		if (n && enc.buf[n - 1] == M_PA_CLOSE) {
			int depth = 0;

			while (n--) {
				if (enc.buf[n] == M_PA_CLOSE)
					depth++;
				else if (enc.buf[n] == M_PA_OPEN && --depth == 0)
					break;
			}
			if (n == (size_t)-1)
				n = enc.len;
		}
		rc = putc_(o, '&');
		if (!rc)
			rc = fp_strbuf_add(o, enc.buf, n);
	}
	fp_strbuf_release(&enc);
	return rc;
}

/* The expressions template arguments use most; anything else is FP_ENOTSUP. */
static int p_expression(struct dm *d, struct fp_strbuf *o)
{
	const struct op *op;
	char c = peek(d, 0);
	int rc, i;

	if ((rc = enter(d)))
		return rc;
	if (c == 'L') {
		rc = p_expr_primary(d, o);
	} else if (c == 'T') {
		rc = p_template_param(d, o);
	} else if (c == 'f' && peek(d, 1) == 'p') {
		size_t n = 0;
		bool neg;

		d->p += 2;
		while (peek(d, 0) == 'r' || peek(d, 0) == 'V' || peek(d, 0) == 'K')
			d->p++;
		if (!eat(d, '_')) {
			rc = p_number(d, &neg, &n);
			if (!rc && !eat(d, '_'))
				rc = FP_EFORMAT;
			n += 1;
		}
		if (!rc)
			rc = fp_strbuf_addf(o, "{parm#%zu}", n + 1);
	} else if (c == 's' && peek(d, 1) == 'p') { /* a pack expansion of an expression */
		d->p += 2;
		rc = putc_(o, M_DP_OPEN);
		if (!rc)
			rc = p_expression(d, o);
		if (!rc)
			rc = putc_(o, M_DP_CLOSE);
	} else if (c == 's' && peek(d, 1) == 'Z') { /* sizeof...(pack) */
		d->p += 2;
		rc = put(o, "sizeof...(");
		if (!rc)
			rc = p_expression(d, o);
		if (!rc)
			rc = putc_(o, ')');
	} else if (c == 's' && (peek(d, 1) == 't' || peek(d, 1) == 'z')) {
		bool type = peek(d, 1) == 't';

		d->p += 2;
		rc = put(o, "sizeof (");
		if (!rc)
			rc = type ? p_type(d, o, NULL) : p_expression(d, o);
		if (!rc)
			rc = putc_(o, ')');
	} else if (c == 'a' && peek(d, 1) == 'd' && peek(d, 2) == 'L' && peek(d, 3) == '_' &&
		   peek(d, 4) == 'Z') {
		rc = p_address_of(d, o);
	} else if ((op = find_op(c, peek(d, 1))) != NULL && op->arity > 0) {
		d->p += 2;
		if (op->arity == 1) {
			rc = put(o, op->text);
			if (!rc)
				rc = putc_(o, '(');
			if (!rc)
				rc = p_expression(d, o);
			if (!rc)
				rc = putc_(o, ')');
		} else {
			for (i = 0; !rc && i < op->arity; i++) {
				if (i == 1)
					rc = put(o, op->arity == 3 ? " ? " : op->text);
				else if (i == 2)
					rc = put(o, " : ");
				if (!rc)
					rc = putc_(o, '(');
				if (!rc)
					rc = p_expression(d, o);
				if (!rc)
					rc = putc_(o, ')');
			}
		}
	} else {
		rc = FP_ENOTSUP;
	}
	d->depth--;
	return rc;
}

/* <template-arg> ::= <type> | X <expression> E | <expr-primary> | J <template-arg>* E */
static int p_template_arg(struct dm *d, struct fp_strbuf *o)
{
	bool first = true;
	int rc = FP_OK;

	switch (peek(d, 0)) {
	case 'X':
		d->p++;
		rc = p_expression(d, o);
		return rc ? rc : eat(d, 'E') ? FP_OK : FP_EFORMAT;
	case 'J':
		d->p++;
		while (!rc && !eat(d, 'E')) {
			if (d->p >= d->end)
				return FP_EFORMAT;
			if (!first)
				rc = put(o, ", ");
			if (!rc)
				rc = p_template_arg(d, o);
			first = false;
		}
		return rc;
	case 'L':
		return p_expr_primary(d, o);
	default:
		return p_type(d, o, NULL);
	}
}

/* <template-args> ::= I <template-arg>+ E; `tag`: they are the template's parameters. */
static int p_template_args(struct dm *d, struct fp_strbuf *o, bool tag)
{
	bool first = true;
	int rc;

	if ((rc = enter(d)))
		return rc;
	if (!eat(d, 'I')) {
		d->depth--;
		return FP_EFORMAT;
	}
	if (tag)
		d->ntargs = 0;
	rc = putc_(o, M_TA_OPEN);
	while (!rc && !eat(d, 'E')) {
		size_t at, elem0 = d->nelems;
		bool pack = false;

		if (d->p >= d->end) {
			rc = FP_EFORMAT;
			break;
		}
		if (peek(d, 0) == 'J' && peek(d, 1) == 'E') {
			/* an empty pack: nothing to write, not even a comma */
			d->p += 2;
			if (tag)
				rc = add_targ(d, o, o->len, true, elem0);
			continue;
		}
		if (!first)
			rc = put(o, ", ");
		at = o->len;
		if (!rc && tag && peek(d, 0) == 'J') {
			/* a pack of the template's own parameters: keep each element, for Dp */
			bool efirst = true;

			pack = true;
			d->p++;
			while (!rc && !eat(d, 'E')) {
				size_t e = o->len;

				if (d->p >= d->end) {
					rc = FP_EFORMAT;
					break;
				}
				if (!efirst)
					rc = put(o, ", ");
				e = o->len;
				if (!rc)
					rc = p_template_arg(d, o);
				if (!rc)
					rc = add_elem(d, o, e);
				efirst = false;
			}
		} else if (!rc) {
			rc = p_template_arg(d, o);
		}
		if (!rc && tag)
			rc = add_targ(d, o, at, pack, elem0);
		first = false;
	}
	if (!rc)
		rc = putc_(o, M_TA_CLOSE);
	d->depth--;
	return rc;
}

/* ---- types ----------------------------------------------------------------------------------- */

static const char *builtin(char c)
{
	switch (c) {
	case 'v':
		return "void";
	case 'w':
		return "wchar_t";
	case 'b':
		return "bool";
	case 'c':
		return "char";
	case 'a':
		return "signed char";
	case 'h':
		return "unsigned char";
	case 's':
		return "short";
	case 't':
		return "unsigned short";
	case 'i':
		return "int";
	case 'j':
		return "unsigned int";
	case 'l':
		return "long";
	case 'm':
		return "unsigned long";
	case 'x':
		return "long long";
	case 'y':
		return "unsigned long long";
	case 'n':
		return "__int128";
	case 'o':
		return "unsigned __int128";
	case 'f':
		return "float";
	case 'd':
		return "double";
	case 'e':
		return "long double";
	case 'g':
		return "__float128";
	case 'z':
		return "...";
	default:
		return NULL;
	}
}

static const char *builtin_d(char c)
{
	switch (c) {
	case 'd':
		return "decimal64";
	case 'e':
		return "decimal128";
	case 'f':
		return "decimal32";
	case 'h':
		return "half";
	case 'i':
		return "char32_t";
	case 's':
		return "char16_t";
	case 'u':
		return "char8_t";
	case 'a':
		return "auto";
	case 'c':
		return "decltype(auto)";
	case 'n':
		return "decltype(nullptr)";
	default:
		return NULL;
	}
}

/*
 * <function-type> ::= [<CV-qualifiers>] [Dx] F [Y] <return type> <params> [<ref-qualifier>] E,
 * written "ret (params) quals"; ti->at is where a declarator ("(*)") goes.
 */
static int p_function_type(struct dm *d, struct fp_strbuf *o, struct tinfo *ti)
{
	char q[40] = "";
	bool first = true;
	int rc;

	p_cv(d, q, sizeof(q));
	if (!eat2(d, "Dx"))
		eat2(d, "Do"); /* transaction-safe, noexcept: not printed */
	if (!eat(d, 'F'))
		return FP_EFORMAT;
	eat(d, 'Y');
	rc = p_type(d, o, NULL);
	if (!rc)
		rc = putc_(o, ' ');
	if (rc)
		return rc;
	if (ti) {
		ti->at = o->len;
		ti->parens = false;
		ti->space = false;
	}
	rc = putc_(o, M_PA_OPEN);
	if (!rc)
		rc = putc_(o, '(');
	if (!rc && peek(d, 0) == 'v' &&
	    (peek(d, 1) == 'E' || peek(d, 1) == 'R' || peek(d, 1) == 'O'))
		d->p++;
	while (!rc && peek(d, 0) != 'E' &&
	       !((peek(d, 0) == 'R' || peek(d, 0) == 'O') && peek(d, 1) == 'E')) {
		if (d->p >= d->end)
			return FP_EFORMAT;
		if (!first)
			rc = put(o, ", ");
		if (!rc)
			rc = p_type(d, o, NULL);
		first = false;
	}
	if (!rc)
		rc = putc_(o, ')');
	if (!rc && eat(d, 'R'))
		qadd(q, sizeof(q), " &");
	else if (!rc && eat(d, 'O'))
		qadd(q, sizeof(q), " &&");
	if (!rc)
		rc = put(o, q);
	if (!rc)
		rc = putc_(o, M_PA_CLOSE);
	if (!rc && !eat(d, 'E'))
		rc = FP_EFORMAT;
	return rc;
}

/* Add a pointer, reference or member-pointer declarator `dc` to the type just written. */
static int declarator(struct fp_strbuf *o, struct tinfo *ti, const char *dc)
{
	char buf[2 * LAST_MAX + 16];
	int rc;

	if (ti->at == NONE)
		return put(o, dc);
	if (ti->parens) {
		rc = insert(o, ti->at, dc, strlen(dc));
		if (!rc)
			ti->at += strlen(dc);
		return rc;
	}
	snprintf(buf, sizeof(buf), "%s(%s)", ti->space ? " " : "", dc);
	rc = insert(o, ti->at, buf, strlen(buf));
	if (!rc) {
		ti->at += strlen(buf) - 1; /* inside the parentheses, after the declarator */
		ti->parens = true;
	}
	return rc;
}

static int p_type(struct dm *d, struct fp_strbuf *o, struct tinfo *out_ti)
{
	struct tinfo ti = {NONE, false, false};
	size_t start = o->len;
	const char *b;
	char c = peek(d, 0), c1 = peek(d, 1);
	bool is_sub = false;
	int rc = FP_OK;

	if ((rc = enter(d)))
		return rc;
	if ((b = builtin(c)) != NULL) {
		d->p++;
		rc = put(o, b);
		goto done_nosub;
	}
	if (c == 'D' && (b = builtin_d(c1)) != NULL) {
		d->p += 2;
		rc = put(o, b);
		goto done_nosub;
	}
	switch (c) {
	case 'r':
	case 'V':
	case 'K': {
		char q[32] = "", f;
		size_t k = 0;

		while (k < 3 && (peek(d, k) == 'r' || peek(d, k) == 'V' || peek(d, k) == 'K'))
			k++;
		f = peek(d, k);
		if (f == 'F' || (f == 'D' && (peek(d, k + 1) == 'x' || peek(d, k + 1) == 'o'))) {
			rc = p_function_type(d, o, &ti); /* a qualified function type */
			break;
		}
		p_cv(d, q, sizeof(q));
		rc = p_type(d, o, &ti);
		if (!rc && ti.at != NONE && ti.parens) {
			/* a qualified pointer to function: "void (* const)()" */
			rc = insert(o, ti.at, q, strlen(q));
			ti.at += strlen(q);
		} else if (!rc) {
			rc = put(o, q);
		}
		break;
	}
	case 'u':
		d->p++;
		rc = p_source_name(d, o, NULL);
		break;
	case 'D':
		if (c1 == 'p') { /* pack expansion: expanded when the encoding ends */
			d->p += 2;
			rc = putc_(o, M_DP_OPEN);
			if (!rc)
				rc = p_type(d, o, NULL);
			if (!rc)
				rc = putc_(o, M_DP_CLOSE);
		} else if (c1 == 'v') { /* vector: Dv <number> _ <type> */
			bool neg;
			size_t n;

			d->p += 2;
			rc = p_number(d, &neg, &n);
			if (!rc && !eat(d, '_'))
				rc = FP_EFORMAT;
			if (!rc)
				rc = p_type(d, o, NULL);
			if (!rc)
				rc = fp_strbuf_addf(o, " __vector(%zu)", n);
		} else if (c1 == 'F') { /* DF <bits> _: _Float16... */
			bool neg;
			size_t n;

			d->p += 2;
			rc = p_number(d, &neg, &n);
			if (!rc && !eat(d, '_'))
				rc = FP_EFORMAT;
			if (!rc)
				rc = fp_strbuf_addf(o, "_Float%zu", n);
			goto done_nosub;
		} else if (c1 == 'x' || c1 == 'o' || c1 == 'O' || c1 == 'w') {
			if (c1 == 'O' || c1 == 'w') {
				rc = FP_ENOTSUP; /* computed exception specifications */
				break;
			}
			rc = p_function_type(d, o, &ti);
		} else {
			rc = FP_ENOTSUP; /* decltype and others */
		}
		break;
	case 'F':
		rc = p_function_type(d, o, &ti);
		break;
	case 'A': { /* A <number> _ <type> | A _ <type> */
		char dim[24] = "";

		d->p++;
		if (is_digit(peek(d, 0))) {
			size_t n = 0;

			while (is_digit(peek(d, 0)) && n < 20)
				dim[n++] = *d->p++;
			dim[n] = '\0';
		} else if (peek(d, 0) != '_') {
			rc = FP_ENOTSUP; /* dependent array bounds */
			break;
		}
		if (!eat(d, '_')) {
			rc = FP_EFORMAT;
			break;
		}
		rc = p_type(d, o, NULL);
		if (!rc) {
			ti.at = o->len;
			ti.parens = false;
			ti.space = true;
			rc = fp_strbuf_addf(o, " [%s]", dim);
		}
		break;
	}
	case 'M': { /* M <class type> <member type> */
		struct fp_strbuf cls;
		char dc[LAST_MAX + 4];

		d->p++;
		buf_init(&cls);
		rc = p_type(d, &cls, NULL);
		if (!rc)
			rc = p_type(d, o, &ti);
		if (!rc) {
			snprintf(dc, sizeof(dc), "%.*s::*", (int)FP_MIN(cls.len, LAST_MAX - 1),
				 cls.buf);
			if (ti.at == NONE)
				rc = putc_(o, ' ');
			if (!rc)
				rc = declarator(o, &ti, dc);
		}
		fp_strbuf_release(&cls);
		break;
	}
	case 'T':
		if (c1 == 's' || c1 == 'u' || c1 == 'e') { /* elaborated type specifier */
			d->p += 2;
			rc = p_name(d, o, NULL);
			break;
		}
		rc = p_template_param(d, o);
		if (!rc && peek(d, 0) == 'I') {
			rc = add_sub(d, o, start); /* a template template parameter */
			if (!rc)
				rc = p_template_args(d, o, false);
		}
		break;
	case 'P':
	case 'R':
	case 'O':
		d->p++;
		rc = p_type(d, o, &ti);
		if (!rc)
			rc = declarator(o, &ti, c == 'P' ? "*" : c == 'R' ? "&" : "&&");
		break;
	case 'C':
	case 'G':
		d->p++;
		rc = p_type(d, o, NULL);
		if (!rc)
			rc = put(o, c == 'C' ? " _Complex" : " _Imaginary");
		break;
	case 'S':
		if (c1 != 't') {
			rc = p_unscoped_name(d, o, NULL, &is_sub);
			if (!rc && peek(d, 0) == 'I') {
				if (!is_sub)
					rc = add_sub(d, o, start);
				if (!rc)
					rc = p_template_args(d, o, false);
			} else if (!rc && is_sub) {
				ti.at = d->sub_decl; /* a function type keeps its declarator spot */
				ti.parens = d->sub_parens;
				ti.space = d->sub_space;
				goto done_nosub; /* a substitution is not a new candidate */
			}
			break;
		}
		/* St...: a class name */
		/* fall through */
	default:
		if (!is_digit(c) && c != 'N' && c != 'Z' && c != 'S') {
			rc = FP_EFORMAT;
			break;
		}
		rc = p_name(d, o, NULL);
		break;
	}
	if (!rc)
		rc = add_sub_decl(d, o, start, ti.at, ti.parens, ti.space);
	if (out_ti)
		*out_ti = ti;
	d->depth--;
	return rc;
done_nosub:
	if (out_ti)
		*out_ti = ti;
	d->depth--;
	return rc;
}

/* ---- encodings -------------------------------------------------------------------------------- */

static bool end_of_encoding(const struct dm *d)
{
	char c = peek(d, 0);

	return d->p >= d->end || c == 'E' || c == '.' || c == '_';
}

/* <special-name>: vtables, typeinfo, guard variables, reference temporaries. */
static int p_special_name(struct dm *d, struct fp_strbuf *o)
{
	static const struct {
		char code[3];
		const char *text;
		bool type;
	} sp[] = {
		{"TV", "vtable for ", true},          {"TT", "VTT for ", true},
		{"TI", "typeinfo for ", true},        {"TS", "typeinfo name for ", true},
		{"GV", "guard variable for ", false}, {"GR", "reference temporary for ", false},
		{"GA", "hidden alias for ", false},
	};
	size_t i;
	int rc;

	for (i = 0; i < FP_ARRAY_SIZE(sp); i++) {
		if (!eat2(d, sp[i].code))
			continue;
		rc = put(o, sp[i].text);
		if (rc)
			return rc;
		if (sp[i].type)
			return p_type(d, o, NULL);
		rc = p_name(d, o, NULL);
		if (!rc && sp[i].code[1] == 'R')
			p_discriminator(d);
		return rc;
	}
	return FP_ENOTSUP; /* thunks, covariant thunks, construction vtables... */
}

/* <encoding> ::= <name> <bare-function-type> | <name> | <special-name> */
static int p_encoding(struct dm *d, struct fp_strbuf *o)
{
	struct targ *saved = NULL;
	size_t nsaved = d->ntargs, o_start = o->len;
	struct fp_strbuf name, ret;
	struct nstate ns;
	bool first = true;
	int rc;

	if ((rc = enter(d)))
		return rc;
	if (nsaved) { /* an encoding's template parameters are its own */
		saved = fp_reallocarray(NULL, nsaved, sizeof(*saved));
		if (!saved) {
			d->depth--;
			return FP_ENOMEM;
		}
		memcpy(saved, d->targs, nsaved * sizeof(*saved));
	}
	if (peek(d, 0) == 'G' || peek(d, 0) == 'T') {
		rc = p_special_name(d, o);
		goto out;
	}
	memset(&ns, 0, sizeof(ns));
	buf_init(&name);
	buf_init(&ret);
	rc = p_name(d, &name, &ns);
	if (rc || end_of_encoding(d)) {
		if (!rc)
			rc = fp_strbuf_add(o, name.buf, name.len);
		goto out_bufs;
	}
	if (!ns.ctor_dtor_conv && ns.ends_targs) {
		rc = putc_(&ret, M_RT_OPEN);
		if (!rc)
			rc = p_type(d, &ret, NULL);
		if (!rc)
			rc = putc_(&ret, ' ');
		if (!rc)
			rc = putc_(&ret, M_RT_CLOSE);
		if (rc)
			goto out_bufs;
	}
	rc = fp_strbuf_add(o, ret.buf, ret.len);
	if (!rc)
		rc = fp_strbuf_add(o, name.buf, name.len);
	if (!rc)
		rc = putc_(o, M_PA_OPEN);
	if (!rc)
		rc = putc_(o, '(');
	if (!rc && peek(d, 0) == 'v' &&
	    (d->p + 1 >= d->end || peek(d, 1) == 'E' || peek(d, 1) == '.' || peek(d, 1) == '_'))
		d->p++;
	while (!rc && !end_of_encoding(d)) {
		if (!first)
			rc = put(o, ", ");
		if (!rc)
			rc = p_type(d, o, NULL);
		first = false;
	}
	if (!rc)
		rc = putc_(o, ')');
	if (!rc)
		rc = put(o, ns.quals);
	if (!rc)
		rc = putc_(o, M_PA_CLOSE);
out_bufs:
	fp_strbuf_release(&name);
	fp_strbuf_release(&ret);
out:
	if (!rc)
		rc = resolve(d, o, o_start);
	if (nsaved)
		memcpy(d->targs, saved, nsaved * sizeof(*saved)); /* the array only grows */
	d->ntargs = nsaved;
	fp_free(saved);
	d->depth--;
	return rc;
}

/* ---- the two forms ---------------------------------------------------------------------------- */

static bool is_open(char c)
{
	return c == M_TA_OPEN || c == M_PA_OPEN || c == M_RT_OPEN;
}

static bool is_close(char c)
{
	return c == M_TA_CLOSE || c == M_PA_CLOSE || c == M_RT_CLOSE;
}

/* The full form of s[0..n) into o: markers become brackets or nothing. */
static int render_full(const char *s, size_t n, struct fp_strbuf *o)
{
	size_t i;
	int rc = FP_OK;

	for (i = 0; !rc && i < n; i++) {
		char prev = o->len ? o->buf[o->len - 1] : '\0';

		if (s[i] == M_TA_OPEN) {
			if (prev == '<')
				rc = putc_(o, ' '); /* "operator< <int>" */
			if (!rc)
				rc = putc_(o, '<');
		} else if (s[i] == M_TA_CLOSE) {
			if (prev == '>')
				rc = putc_(o, ' '); /* "a<b<int> >" */
			if (!rc)
				rc = putc_(o, '>');
		} else if (!is_open(s[i]) && !is_close(s[i])) {
			rc = putc_(o, s[i]);
		}
	}
	return rc;
}

/* The end of the region opened at s[i] (the index of its closing marker), or n. */
static size_t region_end(const char *s, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		if (is_open(s[i]))
			depth++;
		else if (is_close(s[i]) && --depth == 0)
			return i;
	}
	return n;
}

static bool simple_arg(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
		      c == ':'))
			return false;
	}
	return true;
}

/* The short form: return types and parameter lists dropped, template arguments elided. */
static int render_short(const char *s, size_t n, struct fp_strbuf *o)
{
	struct fp_strbuf arg;
	size_t i, j;
	int rc = FP_OK;

	buf_init(&arg);
	for (i = 0; !rc && i < n; i++) {
		if (s[i] == M_RT_OPEN || s[i] == M_PA_OPEN) {
			i = region_end(s, n, i);
		} else if (s[i] == M_TA_OPEN) {
			j = region_end(s, n, i);
			fp_strbuf_reset(&arg);
			rc = render_full(s + i + 1, j - i - 1, &arg);
			if (!rc && (!arg.len || simple_arg(arg.buf, arg.len)))
				rc = fp_strbuf_addf(o, "<%s>", arg.buf);
			else if (!rc)
				rc = put(o, "<...>");
			i = j;
		} else if (!is_close(s[i])) {
			rc = putc_(o, s[i]);
		}
	}
	fp_strbuf_release(&arg);
	return rc;
}

int fp_demangle_is_mangled(const char *name, size_t len)
{
	if (!name)
		return 0;
	return (len >= 3 && name[0] == '_' && name[1] == 'Z') ||
	       (len >= 4 && name[0] == '_' && name[1] == '_' && name[2] == 'Z');
}

int fp_demangle(const char *name, size_t len, enum fp_demangle_form form, char *out, size_t cap,
		size_t *out_len)
{
	struct fp_strbuf text, res;
	struct dm d;
	int rc;

	if (!name || !out || !cap || (form != FP_DEMANGLE_FULL && form != FP_DEMANGLE_SHORT))
		return FP_EINVAL;
	if (!fp_demangle_is_mangled(name, len))
		return FP_EFORMAT;
	memset(&d, 0, sizeof(d));
	d.p = name + (name[1] == '_' ? 3 : 2);
	d.end = name + len;
	fp_strbuf_init(&d.store, STORE_MAX);
	buf_init(&text);
	fp_strbuf_init(&res, FP_MIN(cap, (size_t)FP_DEMANGLE_MAX + 1));
	rc = p_encoding(&d, &text);
	if (!rc && d.p < d.end) {
		/* clone suffixes: ".constprop.0" -> " [clone .constprop.0]" */
		const char *q;

		for (q = d.p; q < d.end; q++)
			if ((unsigned char)*q < 0x21 || (unsigned char)*q > 0x7e)
				break;
		if (*d.p != '.' || q < d.end || d.end - d.p > 256)
			rc = FP_EFORMAT;
		else
			rc = fp_strbuf_addf(&text, " [clone %.*s]", (int)FP_MIN(d.end - d.p, 256),
					    d.p);
		d.p = d.end;
	}
	if (!rc && (memchr(text.buf, M_TP_OPEN, text.len) || memchr(text.buf, M_DP_OPEN, text.len)))
		rc = FP_ENOTSUP; /* a template parameter outside any template */
	if (!rc)
		rc = form == FP_DEMANGLE_FULL ? render_full(text.buf, text.len, &res) :
						render_short(text.buf, text.len, &res);
	if (!rc && res.len + 1 > cap)
		rc = FP_ELIMIT;
	if (!rc) {
		memcpy(out, res.buf, res.len);
		out[res.len] = '\0';
		if (out_len)
			*out_len = res.len;
	}
	fp_strbuf_release(&res);
	fp_strbuf_release(&text);
	fp_strbuf_release(&d.store);
	fp_free(d.subs);
	fp_free(d.targs);
	fp_free(d.elems);
	return rc;
}
