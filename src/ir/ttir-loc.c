/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MLIR debug locations in TTIR text: parse `loc(...)` expressions into a small graph (file
 * positions, NameLoc, CallSiteLoc, FusedLoc, unknown, references to `#locN` aliases) and resolve
 * each op's location to its innermost and outermost source position once the whole file, with
 * its alias definitions at the end, has been read. Aliases are resolved once each (memoized), so
 * resolution is linear; cycles and undefined aliases are format errors. Opaque and other
 * location kinds Triton never prints are rejected rather than guessed.
 */
#include "fp-setup.h"

#include "ir/ttir-internal.h"

/* Nesting of an inline location expression, and of alias chains during resolution. */
#define LOC_MAX_PARSE_DEPTH 64u
#define LOC_MAX_RESOLVE_DEPTH 512u

static int new_node(struct fp__ttir_parser *p, uint32_t kind, uint32_t a, uint32_t b,
		    const char *str, uint32_t *out)
{
	size_t max = p->lim.max_ops + p->lim.max_aliases;
	int rc;

	/* a few nodes per op and alias is plenty for real IR */
	max = max > SIZE_MAX / 8 ? SIZE_MAX : max * 8;
	if (p->n_nodes >= max || p->n_nodes >= UINT32_MAX - 1)
		return fp__ttir_error(p, FP_ELIMIT, p->pos, "too many location nodes");
	rc = fp__grow((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(*p->nodes), max);
	if (rc)
		return fp__ttir_error(p, rc, p->pos, "out of memory for locations");
	p->nodes[p->n_nodes] = (struct fp__ttir_loc_node){kind, a, b, str};
	*out = (uint32_t)p->n_nodes++;
	return FP_OK;
}

/* The alias called s[0..n) (with its '#'), created on first sight. */
static int alias_get(struct fp__ttir_parser *p, const char *s, size_t n, size_t off, uint32_t *idx)
{
	const struct fp__ttir_slot *hit = fp__ttir_strmap_get(&p->alias_map, s, n);
	struct fp__ttir_slot *slot;
	const char *name;
	bool added;
	int rc;

	if (hit) {
		*idx = hit->value;
		return FP_OK;
	}
	if (p->n_aliases >= p->lim.max_aliases)
		return fp__ttir_error(p, FP_ELIMIT, off, "more than %zu location aliases",
				      p->lim.max_aliases);
	rc = fp__grow((void **)&p->aliases, &p->cap_aliases, p->n_aliases + 1, sizeof(*p->aliases),
		      p->lim.max_aliases);
	if (rc)
		return fp__ttir_error(p, rc, off, "out of memory for location aliases");
	name = fp__ttir_intern(p, s, n);
	if (!name)
		return fp__ttir_error(p, FP_ENOMEM, off, "out of memory for location aliases");
	rc = fp__ttir_strmap_put(&p->alias_map, name, n, (uint32_t)p->n_aliases, &slot, &added);
	if (rc)
		return fp__ttir_error(p, rc, off, "out of memory for location aliases");
	memset(&p->aliases[p->n_aliases], 0, sizeof(p->aliases[0]));
	p->aliases[p->n_aliases].name = name;
	p->aliases[p->n_aliases].node = FP_TTIR_NONE;
	p->aliases[p->n_aliases].def_off = SIZE_MAX;
	p->aliases[p->n_aliases].ref_off = SIZE_MAX;
	*idx = (uint32_t)p->n_aliases++;
	return FP_OK;
}

static bool word_is(const struct fp__ttir_parser *p, const char *w)
{
	size_t n = strlen(w);

	return p->n - p->pos >= n && memcmp(p->s + p->pos, w, n) == 0 &&
	       (p->pos + n == p->n || !fp__ttir_is_idchar(p->s[p->pos + n]));
}

static int expect(struct fp__ttir_parser *p, char c, const char *what)
{
	fp__ttir_skip_space(p);
	if (p->pos >= p->n)
		return fp__ttir_error(p, FP_EFORMAT, p->pos,
				      "unexpected end of input in location: expected %s", what);
	if (p->s[p->pos] != c)
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "expected %s in location", what);
	p->pos++;
	return FP_OK;
}

static int parse_u32(struct fp__ttir_parser *p, uint32_t *out)
{
	uint64_t v = 0;
	size_t start = p->pos;

	while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
		v = v * 10 + (uint64_t)(p->s[p->pos] - '0');
		if (v > UINT32_MAX)
			return fp__ttir_error(p, FP_EFORMAT, start, "number too large in location");
		p->pos++;
	}
	if (p->pos == start)
		return fp__ttir_error(p, FP_EFORMAT, start, "expected a number in location");
	*out = (uint32_t)v;
	return FP_OK;
}

/* The rest of a file position after its string: ":LINE:COL" and an optional " to [L][:C]". */
static int parse_file_pos(struct fp__ttir_parser *p, const char *file, uint32_t *node)
{
	uint32_t line = 0, col = 0, dummy;
	size_t save;
	int rc;

	p->pos++; /* ':' */
	rc = parse_u32(p, &line);
	if (rc)
		return rc;
	if (p->pos < p->n && p->s[p->pos] == ':') {
		p->pos++;
		rc = parse_u32(p, &col);
		if (rc)
			return rc;
	}
	/* FileLineColRange (newer MLIR): `"f":1:2 to 3:4` or `to :4`; only the start is kept. */
	save = p->pos;
	fp__ttir_skip_space(p);
	if (word_is(p, "to")) {
		p->pos += 2;
		fp__ttir_skip_space(p);
		if (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
			rc = parse_u32(p, &dummy);
			if (rc)
				return rc;
		}
		if (p->pos < p->n && p->s[p->pos] == ':') {
			p->pos++;
			rc = parse_u32(p, &dummy);
			if (rc)
				return rc;
		}
	} else {
		p->pos = save;
	}
	return new_node(p, FP__LOC_FILE, line, col, file, node);
}

/* Skip `<...>` after `fused` (a metadata attribute), strings included. */
static int skip_angle(struct fp__ttir_parser *p)
{
	size_t start = p->pos, depth = 0;
	const char *str;
	size_t len;
	int rc;

	while (p->pos < p->n) {
		char c = p->s[p->pos];

		if (c == '"') {
			rc = fp__ttir_string(p, &str, &len);
			if (rc)
				return rc;
			continue;
		}
		if (c == '\n')
			break;
		p->pos++;
		if (c == '<') {
			depth++;
		} else if (c == '>') {
			if (--depth == 0)
				return FP_OK;
		}
	}
	return fp__ttir_error(p, FP_EFORMAT, start, "unterminated '<' in fused location");
}

static int parse_inner(struct fp__ttir_parser *p, unsigned depth, uint32_t *node)
{
	size_t start, w;
	const char *str;
	size_t len;
	uint32_t a, b, idx = 0; /* = 0: gcc -O3 cannot see alias_get() set it on success */
	int rc;

	if (depth > LOC_MAX_PARSE_DEPTH)
		return fp__ttir_error(p, FP_ELIMIT, p->pos, "location nested too deeply");
	fp__ttir_skip_space(p);
	start = p->pos;
	if (p->pos >= p->n)
		return fp__ttir_error(p, FP_EFORMAT, p->pos, "unexpected end of input in location");
	switch (p->s[p->pos]) {
	case '#':
		w = fp__ttir_suffix_len(p, p->pos + 1);
		if (w == 0)
			return fp__ttir_error(p, FP_EFORMAT, start,
					      "expected an alias name after '#'");
		rc = alias_get(p, p->s + start, w + 1, start, &idx);
		if (rc)
			return rc;
		if (p->aliases[idx].ref_off == SIZE_MAX)
			p->aliases[idx].ref_off = start;
		p->pos += w + 1;
		return new_node(p, FP__LOC_ALIAS, idx, 0, NULL, node);
	case '"':
		rc = fp__ttir_string(p, &str, &len);
		if (rc)
			return rc;
		if (p->pos < p->n && p->s[p->pos] == ':')
			return parse_file_pos(p, str, node);
		if (p->pos < p->n && p->s[p->pos] == '(') {
			/* NameLoc with a child location */
			p->pos++;
			rc = parse_inner(p, depth + 1, &a);
			if (rc)
				return rc;
			rc = expect(p, ')', "')' after a named location");
			if (rc)
				return rc;
			return new_node(p, FP__LOC_NAME, a, 0, str, node);
		}
		return new_node(p, FP__LOC_NAME, FP_TTIR_NONE, 0, str, node);
	default:
		break;
	}
	if (word_is(p, "unknown")) {
		p->pos += 7;
		return new_node(p, FP__LOC_UNKNOWN, 0, 0, NULL, node);
	}
	if (word_is(p, "callsite")) {
		p->pos += 8;
		rc = expect(p, '(', "'(' after callsite");
		if (rc)
			return rc;
		rc = parse_inner(p, depth + 1, &a);
		if (rc)
			return rc;
		fp__ttir_skip_space(p);
		if (!word_is(p, "at"))
			return fp__ttir_error(p, FP_EFORMAT, p->pos,
					      "expected 'at' in callsite location");
		p->pos += 2;
		rc = parse_inner(p, depth + 1, &b);
		if (rc)
			return rc;
		rc = expect(p, ')', "')' closing callsite");
		if (rc)
			return rc;
		return new_node(p, FP__LOC_CALLSITE, a, b, NULL, node);
	}
	if (word_is(p, "fused")) {
		uint32_t head = FP_TTIR_NONE, tail = FP_TTIR_NONE, cell;

		p->pos += 5;
		fp__ttir_skip_space(p);
		if (p->pos < p->n && p->s[p->pos] == '<') {
			rc = skip_angle(p);
			if (rc)
				return rc;
		}
		rc = expect(p, '[', "'[' in fused location");
		if (rc)
			return rc;
		fp__ttir_skip_space(p);
		if (p->pos < p->n && p->s[p->pos] == ']') {
			p->pos++;
			return new_node(p, FP__LOC_UNKNOWN, 0, 0, NULL, node);
		}
		/* a cons list: FUSED(a = element, b = next cell) keeps nested fused locs simple */
		for (;;) {
			rc = parse_inner(p, depth + 1, &a);
			if (rc)
				return rc;
			rc = new_node(p, FP__LOC_FUSED, a, FP_TTIR_NONE, NULL, &cell);
			if (rc)
				return rc;
			if (tail == FP_TTIR_NONE)
				head = cell;
			else
				p->nodes[tail].b = cell;
			tail = cell;
			fp__ttir_skip_space(p);
			if (p->pos < p->n && p->s[p->pos] == ',') {
				p->pos++;
				continue;
			}
			rc = expect(p, ']', "',' or ']' in fused location");
			if (rc)
				return rc;
			*node = head;
			return FP_OK;
		}
	}
	if (word_is(p, "loc") && p->pos + 3 < p->n && p->s[p->pos + 3] == '(') {
		p->pos += 4;
		rc = parse_inner(p, depth + 1, node);
		if (rc)
			return rc;
		return expect(p, ')', "')' closing loc");
	}
	return fp__ttir_error(p, FP_EFORMAT, start, "unsupported location syntax");
}

int fp__ttir_loc_parse(struct fp__ttir_parser *p, uint32_t *node)
{
	int rc = parse_inner(p, 0, node);

	if (rc)
		return rc;
	return expect(p, ')', "')' closing loc(");
}

int fp__ttir_loc_define(struct fp__ttir_parser *p, const char *name, size_t len, size_t def_off)
{
	uint32_t idx = 0, node; /* = 0: as in the parser above */
	int rc;

	rc = alias_get(p, name, len, def_off, &idx);
	if (rc)
		return rc;
	if (p->aliases[idx].node != FP_TTIR_NONE)
		return fp__ttir_error(p, FP_EFORMAT, def_off, "location alias %s defined twice",
				      p->aliases[idx].name);
	rc = fp__ttir_loc_parse(p, &node);
	if (rc)
		return rc;
	p->aliases[idx].node = node;
	p->aliases[idx].def_off = def_off;
	return FP_OK;
}

int fp__ttir_loc_check(struct fp__ttir_parser *p)
{
	size_t i;

	for (i = 0; i < p->n_aliases; i++) {
		const struct fp__ttir_alias *al = &p->aliases[i];

		if (al->node == FP_TTIR_NONE)
			return fp__ttir_error(p, FP_EFORMAT, al->ref_off,
					      "undefined location alias %s", al->name);
	}
	return FP_OK;
}

/*
 * out->chain = a's frames then b's. When there are too many, the innermost frame and the
 * outermost FP_TTIR_MAX_FRAMES - 1 are kept: the frames in user code (the kernel and its
 * helpers) are the outer ones, library internals the inner ones.
 */
static void chain_join(struct fp__ttir_frames *out, const struct fp__ttir_frames *a,
		       const struct fp__ttir_frames *b)
{
	struct fp_ttir_loc all[2 * FP_TTIR_MAX_FRAMES];
	uint32_t n = 0, i, skip;

	for (i = 0; i < a->nchain; i++)
		all[n++] = a->chain[i];
	for (i = 0; i < b->nchain; i++)
		all[n++] = b->chain[i];
	if (n <= FP_TTIR_MAX_FRAMES) {
		memcpy(out->chain, all, n * sizeof(*all));
		out->nchain = n;
		return;
	}
	skip = n - FP_TTIR_MAX_FRAMES;
	out->chain[0] = all[0];
	memcpy(out->chain + 1, all + 1 + skip, (FP_TTIR_MAX_FRAMES - 1) * sizeof(*all));
	out->nchain = FP_TTIR_MAX_FRAMES;
}

/*
 * NameLoc naming rule: the outermost NameLoc wins (Triton renames by wrapping), but a name that
 * wraps a callsite names the caller's value and only fills an unnamed callee frame.
 */
static int resolve(struct fp__ttir_parser *p, uint32_t node, unsigned depth, size_t at,
		   struct fp__ttir_frames *out)
{
	const struct fp__ttir_loc_node *n;
	struct fp__ttir_frames a, b;
	struct fp__ttir_alias *al;
	uint32_t cell;
	int rc;

	memset(out, 0, sizeof(*out));
	if (node == FP_TTIR_NONE)
		return FP_OK;
	if (depth > LOC_MAX_RESOLVE_DEPTH)
		return fp__ttir_error(p, FP_ELIMIT, at, "location aliases nested too deeply");
	n = &p->nodes[node];
	switch (n->kind) {
	case FP__LOC_FILE:
		out->inner.file = n->str;
		out->inner.line = n->a;
		out->inner.col = n->b;
		out->outer = out->inner;
		out->chain[0] = out->inner;
		out->nchain = 1;
		return FP_OK;
	case FP__LOC_NAME:
		rc = resolve(p, n->a, depth + 1, at, out);
		if (rc)
			return rc;
		out->outer.name = n->str;
		if (!out->callsite || !out->inner.name)
			out->inner.name = n->str;
		if (out->nchain) {
			out->chain[out->nchain - 1].name = out->outer.name;
			out->chain[0].name = out->inner.name;
		}
		return FP_OK;
	case FP__LOC_CALLSITE:
		rc = resolve(p, n->a, depth + 1, at, &a);
		if (rc)
			return rc;
		rc = resolve(p, n->b, depth + 1, at, &b);
		if (rc)
			return rc;
		out->inner = a.inner;
		out->outer = b.outer;
		out->callsite = true;
		chain_join(out, &a, &b);
		return FP_OK;
	case FP__LOC_FUSED:
		/* the first element that names a file, else the first element */
		for (cell = node; cell != FP_TTIR_NONE; cell = p->nodes[cell].b) {
			rc = resolve(p, p->nodes[cell].a, depth + 1, at, &a);
			if (rc)
				return rc;
			if (cell == node)
				*out = a;
			if (a.inner.file) {
				*out = a;
				break;
			}
		}
		return FP_OK;
	case FP__LOC_ALIAS:
		al = &p->aliases[n->a];
		if (al->state == 2) {
			*out = al->res;
			return FP_OK;
		}
		if (al->node == FP_TTIR_NONE)
			return fp__ttir_error(p, FP_EFORMAT, al->ref_off,
					      "undefined location alias %s", al->name);
		if (al->state == 1)
			return fp__ttir_error(p, FP_EFORMAT, al->def_off,
					      "location alias %s refers to itself", al->name);
		al->state = 1;
		rc = resolve(p, al->node, depth + 1, al->def_off, &a);
		al = &p->aliases[n->a];
		if (rc)
			return rc;
		al->res = a;
		al->state = 2;
		*out = a;
		return FP_OK;
	default:
		return FP_OK;
	}
}

int fp__ttir_loc_resolve(struct fp__ttir_parser *p, uint32_t node, size_t at,
			 struct fp__ttir_frames *out)
{
	return resolve(p, node, 0, at, out);
}
