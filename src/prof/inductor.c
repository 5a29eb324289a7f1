/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading where an Inductor kernel came from (include/flagprism/inductor.h): find the kernel's
 * definition line in the generated module, read the comment block above it for its FX source
 * nodes, ATen ops and post-grad node names, then walk the post-grad graph's text and collect the
 * "# File:" comments that precede those nodes. Line-by-line cursor code over bounded slices of
 * the caller's texts; nothing is copied but the note. Not a Python parser: only the comment
 * shapes Inductor writes are read, anything else is skipped.
 */
#include "fp-setup.h"

#include <flagprism/inductor.h>

#include "core/hashmap-internal.h"

#define MAX_NODES 65536u /* post-grad node names of one kernel */

struct slice {
	const char *p;
	size_t n;
};

struct reader {
	const char *p, *end;
};

/* The next line (without its newline); false at the end. */
static bool next_line(struct reader *r, struct slice *line)
{
	const char *nl;

	if (r->p >= r->end)
		return false;
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	line->p = r->p;
	line->n = nl ? (size_t)(nl - r->p) : (size_t)(r->end - r->p);
	r->p = nl ? nl + 1 : r->end;
	if (line->n && line->p[line->n - 1] == '\r')
		line->n--;
	return true;
}

static struct slice trim(struct slice s)
{
	while (s.n && (*s.p == ' ' || *s.p == '\t'))
		s.p++, s.n--;
	while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
		s.n--;
	return s;
}

static bool starts(struct slice s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && !memcmp(s.p, lit, n);
}

/* The first occurrence of `lit` in s, or NULL. */
static const char *find(struct slice s, const char *lit)
{
	size_t n = strlen(lit), i;

	for (i = 0; i + n <= s.n; i++)
		if (!memcmp(s.p + i, lit, n))
			return s.p + i;
	return NULL;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Append s to the note with tabs, newlines and other control bytes made spaces. */
static int add_clean(struct fp_strbuf *note, const char *s, size_t n)
{
	size_t i;
	int rc = FP_OK;

	for (i = 0; !rc && i < n; i++)
		rc = fp_strbuf_addch(note, (unsigned char)s[i] < 0x20 ? ' ' : s[i]);
	return rc;
}

/* "[a, b], ..." at s: the text between the brackets (the list is one line). */
static bool bracket_list(const char *at, const char *end, struct slice *out)
{
	const char *close;

	if (!at || at >= end || *at != '[')
		return false;
	close = memchr(at, ']', (size_t)(end - at));
	if (!close)
		return false;
	out->p = at + 1;
	out->n = (size_t)(close - at - 1);
	return true;
}

struct nodes {
	struct fp_hashmap map; /* hash of a name -> index + 1 */
	struct slice *v;
	size_t n, alloc;
};

static int nodes_add(struct nodes *ns, const char *p, size_t n)
{
	uint64_t h = fp_hash_bytes(p, n), v;

	if (!n || fp_hashmap_get(&ns->map, h, &v))
		return FP_OK;
	if (ns->n >= MAX_NODES)
		return FP_OK; /* counted by the caller through out->nodes */
	if (ns->n == ns->alloc) {
		size_t na = ns->alloc ? ns->alloc * 2 : 32;
		struct slice *nv = fp_reallocarray(ns->v, na, sizeof(*nv));

		if (!nv)
			return FP_ENOMEM;
		ns->v = nv;
		ns->alloc = na;
	}
	ns->v[ns->n].p = p;
	ns->v[ns->n].n = n;
	ns->n++;
	return fp_hashmap_put(&ns->map, h, ns->n);
}

static bool nodes_has(const struct nodes *ns, const char *p, size_t n)
{
	uint64_t v;

	if (!n || !fp_hashmap_get(&ns->map, fp_hash_bytes(p, n), &v) || v == 0 || v > ns->n)
		return false;
	return ns->v[v - 1].n == n && !memcmp(ns->v[v - 1].p, p, n);
}

/* Comma-separated identifiers of s into the node set. */
static int nodes_add_list(struct nodes *ns, struct slice s)
{
	size_t i = 0, b;
	int rc = FP_OK;

	while (!rc && i < s.n) {
		while (i < s.n && !ident_char(s.p[i]))
			i++;
		b = i;
		while (i < s.n && ident_char(s.p[i]))
			i++;
		if (i > b)
			rc = nodes_add(ns, s.p + b, i - b);
	}
	return rc;
}

/* The comment block right above "<kernel> = async_compile.triton(" (contiguous '#' lines). */
static bool kernel_block(const char *text, size_t len, const char *kernel, size_t klen,
			 struct slice *block)
{
	static const char def[] = " = async_compile.triton(";
	struct reader r = {text, text + len};
	struct slice line;
	const char *first = NULL, *prev_end = NULL;

	while (next_line(&r, &line)) {
		bool comment = line.n && line.p[0] == '#';

		if (comment) {
			if (!first)
				first = line.p;
			prev_end = line.p + line.n;
			continue;
		}
		if (line.n >= klen + sizeof(def) - 1 && !memcmp(line.p, kernel, klen) &&
		    !memcmp(line.p + klen, def, sizeof(def) - 1)) {
			block->p = first ? first : line.p;
			block->n = first ? (size_t)(prev_end - first) : 0;
			return true;
		}
		first = NULL;
	}
	return false;
}

/* The post-grad node names of the block: the mapping's right-hand sides, else the fragment's. */
static int block_nodes(struct slice block, struct nodes *ns, struct slice *src_nodes,
		       struct slice *aten, struct fp_inductor_origin *out)
{
	struct reader r = {block.p, block.p + block.n};
	struct slice line, t;
	bool in_map = false, in_frag = false, mapped = false;
	int rc = FP_OK;

	while (!rc && next_line(&r, &line)) {
		const char *a, *arrow;

		t = trim(line);
		if (!starts(t, "#"))
			continue;
		t.p++, t.n--;
		if ((a = find(t, "Source Nodes: ")) != NULL) {
			in_map = in_frag = false;
			if (bracket_list(a + 14, t.p + t.n, src_nodes))
				out->has_source_nodes = 1;
			if ((a = find(t, "Original ATen: ")) != NULL &&
			    bracket_list(a + 15, t.p + t.n, aten))
				out->has_aten_ops = 1;
			continue;
		}
		if (find(t, "Source node to ATen node mapping:")) {
			in_map = true, in_frag = false;
			continue;
		}
		if (find(t, "Graph fragment:")) {
			in_frag = true, in_map = false;
			continue;
		}
		t = trim(t);
		if (in_map && (arrow = find(t, " => ")) != NULL) {
			struct slice rhs = {arrow + 4, (size_t)(t.p + t.n - arrow - 4)};

			rc = nodes_add_list(ns, rhs);
			mapped = true;
		} else if (in_frag && !mapped && t.n > 1 && t.p[0] == '%' &&
			   find(t, "call_function")) {
			size_t i = 1;

			while (i < t.n && ident_char(t.p[i]))
				i++;
			rc = nodes_add(ns, t.p + 1, i - 1);
		}
	}
	out->nodes = ns->n;
	return rc;
}

/* "# File: path:line in func, code: text" -> its parts (false when it is not one). */
static bool file_comment(struct slice t, struct slice *path, struct slice *lineno,
			 struct slice *func, struct slice *code)
{
	const char *in, *cd, *colon;
	struct slice loc;
	size_t i;

	if (!starts(t, "# File: "))
		return false;
	t.p += 8, t.n -= 8;
	in = find(t, " in ");
	if (!in)
		return false;
	loc.p = t.p;
	loc.n = (size_t)(in - t.p);
	for (colon = NULL, i = loc.n; i-- > 0;)
		if (loc.p[i] == ':') {
			colon = loc.p + i;
			break;
		}
	if (!colon || colon + 1 >= loc.p + loc.n)
		return false;
	path->p = loc.p;
	path->n = (size_t)(colon - loc.p);
	lineno->p = colon + 1;
	lineno->n = (size_t)(loc.p + loc.n - colon - 1);
	for (i = 0; i < lineno->n; i++)
		if (lineno->p[i] < '0' || lineno->p[i] > '9')
			return false;
	func->p = in + 4;
	cd = find((struct slice){func->p, (size_t)(t.p + t.n - func->p)}, ", code: ");
	func->n = cd ? (size_t)(cd - func->p) : (size_t)(t.p + t.n - func->p);
	code->p = cd ? cd + 8 : t.p + t.n;
	code->n = cd ? (size_t)(t.p + t.n - cd - 8) : 0;
	return path->n > 0 && func->n > 0;
}

/* The node a graph line defines ("name: ..." or "name = ..."), or an empty slice. */
static struct slice defined_node(struct slice t)
{
	struct slice s = {t.p, 0};

	while (s.n < t.n && ident_char(t.p[s.n]))
		s.n++;
	if (!s.n || s.n >= t.n || (t.p[s.n] != ':' && t.p[s.n] != ' '))
		return (struct slice){t.p, 0};
	if (t.p[s.n] == ' ' && !(s.n + 1 < t.n && t.p[s.n + 1] == '='))
		return (struct slice){t.p, 0};
	return s;
}

/* The "# File:" comments of the kernel's nodes in the graph, in graph order, deduplicated. */
static int graph_lines(const char *graph, size_t len, const struct nodes *ns, struct slice *lines,
		       size_t *n, size_t *more)
{
	struct reader r = {graph, graph + len};
	struct slice line, t, cur = {NULL, 0}, dummy, node;
	size_t i;

	*n = *more = 0;
	while (next_line(&r, &line)) {
		t = trim(line);
		if (starts(t, "# File: ")) {
			cur = file_comment(t, &dummy, &dummy, &dummy, &dummy) ?
				      t :
				      (struct slice){NULL, 0};
			continue;
		}
		if (starts(t, "#")) {
			if (starts(t, "# No stacktrace found"))
				cur.p = NULL;
			continue;
		}
		if (!t.n) /* a blank line ends a "# File:" group */
			continue;
		node = defined_node(t);
		if (!cur.p || !node.n || !nodes_has(ns, node.p, node.n))
			continue;
		for (i = 0; i < *n; i++)
			if (lines[i].n == cur.n && !memcmp(lines[i].p, cur.p, cur.n))
				break;
		if (i < *n)
			continue;
		if (*n < FP_INDUCTOR_MAX_LINES) {
			lines[(*n)++] = cur;
		} else {
			/* count distinct ones past the cap only once per comment group */
			(*more)++;
			cur.p = NULL;
		}
	}
	return FP_OK;
}

static int add_key(struct fp_strbuf *note, const char *key)
{
	int rc = FP_OK;

	if (note->len && note->buf[note->len - 1] != '\n')
		rc = fp_strbuf_addch(note, '\n');
	if (!rc)
		rc = fp_strbuf_addstr(note, key);
	return rc ? rc : fp_strbuf_addch(note, '\t');
}

int fp_inductor_origin(const char *module, size_t module_len, const char *kernel, size_t kernel_len,
		       const char *graph, size_t graph_len, struct fp_strbuf *note,
		       struct fp_inductor_origin *out)
{
	struct slice block, src_nodes = {NULL, 0}, aten = {NULL, 0};
	struct slice lines[FP_INDUCTOR_MAX_LINES];
	struct nodes ns;
	size_t nlines = 0, more = 0, i;
	int rc;

	if (!module || !kernel || !kernel_len || !note || !out || (!graph && graph_len) ||
	    module_len > FP_INDUCTOR_MAX_TEXT || graph_len > FP_INDUCTOR_MAX_TEXT)
		return FP_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!kernel_block(module, module_len, kernel, kernel_len, &block))
		return FP_ENOENT;
	memset(&ns, 0, sizeof(ns));
	fp_hashmap_init(&ns.map);
	rc = block_nodes(block, &ns, &src_nodes, &aten, out);
	if (!rc && graph && graph_len && ns.n)
		rc = graph_lines(graph, graph_len, &ns, lines, &nlines, &more);
	if (!rc && out->has_source_nodes && src_nodes.n) {
		rc = add_key(note, "source_nodes");
		if (!rc)
			rc = add_clean(note, src_nodes.p, src_nodes.n);
	}
	if (!rc && out->has_aten_ops && aten.n) {
		rc = add_key(note, "aten_ops");
		if (!rc)
			rc = add_clean(note, aten.p, aten.n);
	}
	if (!rc && nlines)
		rc = add_key(note, "source_lines");
	for (i = 0; !rc && i < nlines; i++) {
		struct slice path, lineno, func, code;

		file_comment(lines[i], &path, &lineno, &func, &code);
		if (i)
			rc = fp_strbuf_addstr(note, " | ");
		if (!rc)
			rc = add_clean(note, path.p, path.n);
		if (!rc)
			rc = fp_strbuf_addch(note, ':');
		if (!rc)
			rc = add_clean(note, lineno.p, lineno.n);
		if (!rc)
			rc = fp_strbuf_addstr(note, " in ");
		if (!rc)
			rc = add_clean(note, func.p, func.n);
		if (!rc && code.n) {
			rc = fp_strbuf_addstr(note, ": ");
			if (!rc)
				rc = add_clean(note, code.p, FP_MIN(code.n, FP_INDUCTOR_MAX_CODE));
			if (!rc && code.n > FP_INDUCTOR_MAX_CODE)
				rc = fp_strbuf_addstr(note, "...");
		}
		if (!rc && i == 0) {
			char *c;

			snprintf(out->frame, sizeof(out->frame), "%.*s:%.*s@%.*s",
				 (int)FP_MIN(path.n, 400), path.p, (int)FP_MIN(func.n, 80), func.p,
				 (int)FP_MIN(lineno.n, 12), lineno.p);
			for (c = out->frame; *c; c++)
				if ((unsigned char)*c < 0x20)
					*c = ' ';
		}
	}
	if (!rc && more)
		rc = fp_strbuf_addf(note, " | (%zu more)", more);
	out->lines = nlines;
	out->more_lines = more;
	fp_hashmap_release(&ns.map);
	fp_free(ns.v);
	return rc;
}
