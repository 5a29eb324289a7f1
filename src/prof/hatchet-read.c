/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Hatchet JSON reader: our `.hatchet` files and Proton's (`[root, device_info]`) into a call
 * tree, for the viewer, diff, merge and the importers. One entry, fp_calltree_parse_hatchet():
 * the streaming fast path (hatchet-scan.c) for the common case, then this file's DOM reader for
 * everything the fast path declines, so trees, counters and messages are always this reader's.
 * Strict about structure (every node an object with a "frame" object naming it, a "metrics"
 * object, a "children" array if present), tolerant about content (unknown metrics and keys are
 * kept or skipped, never fatal). Every error names its place as line and column. The walk is
 * iterative: depth costs heap, not C stack. It does not interpret metric semantics beyond the
 * naming rule of fp_calltree_metric_kind_from_name(), and does not read meta files (the
 * viewer's loader does, src/view/view-read.c).
 */
#include "fp-setup.h"

#include <flagprism/json.h>

#include "core/intern-internal.h"
#include "prof/calltree-internal.h"

struct rd {
	const struct fp_json_doc *doc;
	struct fp_calltree *t;
	struct fp_hatchet_info *info;
	struct fp_diag *diag;
	const char *path; /* for messages, or NULL */
};

/* Fail at value `v`: "<path>: <what> at line L col C: <msg>". */
static int rd_fail(struct rd *r, int status, const struct fp_json_value *v, const char *what,
		   const char *fmt, ...) FP_PRINTF(5, 6);

static int rd_fail(struct rd *r, int status, const struct fp_json_value *v, const char *what,
		   const char *fmt, ...)
{
	uint64_t off = fp_json_offset(v);
	uint32_t line = 0, col = 0;
	char msg[200];
	va_list ap;

	fp_json_position(r->doc, off, &line, &col);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fp_diag_set_pos(r->diag, status, off, line, col,
			       "%s%s%s at line %" PRIu32 " col %" PRIu32 ": %s",
			       r->path ? r->path : "", r->path ? ": " : "", what, line, col, msg);
}

static const char *type_name(const struct fp_json_value *v)
{
	switch (fp_json_type(v)) {
	case FP_JSON_NULL:
		return "null";
	case FP_JSON_FALSE:
	case FP_JSON_TRUE:
		return "a boolean";
	case FP_JSON_NUMBER:
		return "a number";
	case FP_JSON_STRING:
		return "a string";
	case FP_JSON_ARRAY:
		return "an array";
	case FP_JSON_OBJECT:
		return "an object";
	}
	return "?";
}

/* Status of a tree operation turned into a positioned error. */
static int rd_tree_fail(struct rd *r, int rc, const struct fp_json_value *v, const char *what)
{
	if (rc == FP_ENOMEM)
		return fp_diag_set(r->diag, rc, fp_json_offset(v), "out of memory");
	return rd_fail(r, rc, v, what,
		       "%s (tree limits: nodes %zu, depth %" PRIu32 ", metrics %" PRIu32 ")",
		       fp_strerror(rc), r->t->lim.max_nodes, r->t->lim.max_depth,
		       r->t->lim.max_metrics);
}

/*
 * Pass 1: register every metric before reading any value, so that a metric's kind does not
 * depend on which node comes first. The kind follows the naming rule, except that a name
 * without a type suffix that carries only strings (never a number) is a string property; a
 * name with both keeps its numbers and skips its strings. Structure is not checked here: pass
 * 2 reports it with positions.
 */
static int register_metrics(struct rd *r, const struct fp_json_value *root)
{
	struct fp_intern *seen = fp_intern_new();
	uint8_t *has_string = NULL; /* by name: 1 strings seen, 2 numbers seen */
	const struct fp_json_value **stack = NULL;
	size_t depth = 0, alloc = 0, cap = 0, i, nodes = 0;
	uint32_t id, n;
	int rc = FP_OK;

	if (!seen)
		return FP_ENOMEM;
	alloc = 64;
	stack = fp_reallocarray(NULL, alloc, sizeof(*stack));
	if (!stack) {
		rc = FP_ENOMEM;
		goto out;
	}
	stack[depth++] = root;
	while (depth > 0 && !rc) {
		const struct fp_json_value *node = stack[--depth];

		nodes++;
		const struct fp_json_value *metrics = fp_json_get(node, "metrics");
		const struct fp_json_value *kids = fp_json_get(node, "children");

		for (i = 0; i < fp_json_len(metrics); i++) {
			const char *key;
			size_t klen;
			const struct fp_json_value *v = fp_json_member(metrics, i, &key, &klen);

			if (fp_json_type(v) != FP_JSON_STRING && fp_json_type(v) != FP_JSON_NUMBER)
				continue;
			if (klen == 12 && !memcmp(key, "_hatchet_nid", 12))
				continue;
			rc = fp_intern_add(seen, key, klen, &id);
			if (rc)
				break;
			if (id >= r->t->lim.max_metrics) {
				rc = rd_fail(r, FP_ELIMIT, v, "metric",
					     "more than %" PRIu32 " distinct metric names",
					     r->t->lim.max_metrics);
				goto out;
			}
			if (id >= cap) {
				uint8_t *nh = fp_reallocarray(has_string, cap ? cap * 2 : 64, 1);

				if (!nh) {
					rc = FP_ENOMEM;
					break;
				}
				memset(nh + cap, 0, (cap ? cap * 2 : 64) - cap);
				has_string = nh;
				cap = cap ? cap * 2 : 64;
			}
			has_string[id] |= fp_json_type(v) == FP_JSON_STRING ? 1 : 2;
		}
		if (fp_json_type(kids) != FP_JSON_ARRAY)
			continue;
		for (i = fp_json_len(kids); i-- > 0 && !rc;) {
			if (depth == alloc) {
				const struct fp_json_value **ns =
					fp_reallocarray(stack, alloc * 2, sizeof(*ns));

				if (!ns) {
					rc = FP_ENOMEM;
					break;
				}
				stack = ns;
				alloc *= 2;
			}
			stack[depth++] = fp_json_at(kids, i);
		}
	}
	/* Size the child map once: rehashing a million-entry map costs more than the lookups.
	 * Only a hint: on failure the map grows as usual. */
	if (!rc)
		fp_hashmap_reserve(&r->t->children, FP_MIN(nodes, r->t->lim.max_nodes));
	n = fp_intern_count(seen);
	for (id = 0; !rc && id < n; id++) {
		size_t len;
		const char *name = fp_intern_str(seen, id, &len);
		enum fp_metric_kind kind = fp_calltree_metric_kind_from_name(name, len);
		uint32_t m;

		if (has_string[id] == 1 && kind == FP_METRIC_INCLUSIVE)
			kind = FP_METRIC_PROPERTY;
		rc = fp_calltree_metric(r->t, name, len, kind, &m);
	}
out:
	fp_free(stack);
	fp_free(has_string);
	fp_intern_free(seen);
	return rc;
}

static int read_metrics(struct rd *r, const struct fp_json_value *node, uint32_t id)
{
	const struct fp_json_value *metrics = fp_json_get(node, "metrics");
	size_t i, n;

	if (!metrics)
		return rd_fail(r, FP_EFORMAT, node, "node", "'metrics' is required");
	if (fp_json_type(metrics) != FP_JSON_OBJECT)
		return rd_fail(r, FP_EFORMAT, metrics, "node",
			       "'metrics' must be an object, not %s", type_name(metrics));
	n = fp_json_len(metrics);
	for (i = 0; i < n; i++) {
		const char *key;
		size_t klen, slen;
		const struct fp_json_value *v = fp_json_member(metrics, i, &key, &klen);
		enum fp_json_type ty = fp_json_type(v);
		const char *str;
		uint32_t m;
		double d;
		int rc;

		/* Of duplicate keys the last wins, as in llnl-hatchet and JSON readers. */
		if (fp_json_get_n(metrics, key, klen) != v)
			continue;
		if ((ty != FP_JSON_NUMBER && ty != FP_JSON_STRING) ||
		    (klen == 12 && !memcmp(key, "_hatchet_nid", 12)) ||
		    fp_calltree_metric_find(r->t, key, klen, &m) != FP_OK ||
		    (ty == FP_JSON_STRING && r->t->kinds[m] != FP_METRIC_PROPERTY)) {
			/* Not a number or string, or a string where the metric is summable. */
			if (r->info)
				r->info->skipped_metrics++;
			continue;
		}
		if (ty == FP_JSON_STRING) {
			str = fp_json_string(v, &slen);
			rc = fp_calltree_set_string(r->t, id, m, str, slen);
		} else {
			fp_json_number(v, &d);
			rc = fp_calltree_add_metric(r->t, id, m, d);
		}
		if (rc)
			return rd_tree_fail(r, rc, v, "metric");
	}
	return FP_OK;
}

/* Validate a node object and return its name; *children gets the "children" array or NULL. */
static int check_node(struct rd *r, const struct fp_json_value *node, const char **name,
		      size_t *len, const struct fp_json_value **children)
{
	const struct fp_json_value *frame, *nm;

	if (fp_json_type(node) != FP_JSON_OBJECT)
		return rd_fail(r, FP_EFORMAT, node, "node", "a node must be an object, not %s",
			       type_name(node));
	frame = fp_json_get(node, "frame");
	if (!frame)
		return rd_fail(r, FP_EFORMAT, node, "node", "'frame' is required");
	if (fp_json_type(frame) != FP_JSON_OBJECT)
		return rd_fail(r, FP_EFORMAT, frame, "node", "'frame' must be an object, not %s",
			       type_name(frame));
	if (fp_json_len(frame) == 0)
		return rd_fail(r, FP_EFORMAT, frame, "node", "'frame' must not be empty");
	nm = fp_json_get(frame, "name");
	if (!nm)
		nm = fp_json_get(node, "name"); /* Hatchet's fallback */
	if (!nm)
		return rd_fail(r, FP_EFORMAT, frame, "node", "'frame' has no 'name'");
	if (fp_json_type(nm) != FP_JSON_STRING)
		return rd_fail(r, FP_EFORMAT, nm, "node", "frame 'name' must be a string, not %s",
			       type_name(nm));
	*name = fp_json_string(nm, len);
	*children = fp_json_get(node, "children");
	if (*children && fp_json_type(*children) != FP_JSON_ARRAY)
		return rd_fail(r, FP_EFORMAT, *children, "node",
			       "'children' must be an array, not %s", type_name(*children));
	return FP_OK;
}

static int read_devices(struct rd *r, const struct fp_json_value *dev)
{
	size_t i, j, k;

	if (fp_json_type(dev) != FP_JSON_OBJECT)
		return rd_fail(r, FP_EFORMAT, dev, "device info",
			       "element [1] must be an object {type: {index: {...}}}, not %s",
			       type_name(dev));
	if (r->info)
		r->info->has_device_info = true;
	for (i = 0; i < fp_json_len(dev); i++) {
		const char *type;
		size_t tlen;
		const struct fp_json_value *byindex = fp_json_member(dev, i, &type, &tlen);

		if (fp_json_type(byindex) != FP_JSON_OBJECT)
			return rd_fail(r, FP_EFORMAT, byindex, "device info",
				       "'%.*s' must be an object, not %s", (int)FP_MIN(tlen, 40),
				       type, type_name(byindex));
		for (j = 0; j < fp_json_len(byindex); j++) {
			const char *index;
			size_t ilen;
			const struct fp_json_value *attrs =
				fp_json_member(byindex, j, &index, &ilen);

			if (fp_json_type(attrs) != FP_JSON_OBJECT)
				return rd_fail(r, FP_EFORMAT, attrs, "device info",
					       "'%.*s' device '%.*s' must be an object, not %s",
					       (int)FP_MIN(tlen, 40), type, (int)FP_MIN(ilen, 40),
					       index, type_name(attrs));
			for (k = 0; k < fp_json_len(attrs); k++) {
				const char *key, *s;
				size_t klen, slen;
				const struct fp_json_value *v =
					fp_json_member(attrs, k, &key, &klen);
				double d = 0;
				int rc;

				if (fp_json_type(v) == FP_JSON_STRING) {
					s = fp_json_string(v, &slen);
					rc = fp__calltree_device_set_n(r->t, type, tlen, index,
								       ilen, key, klen, true, 0, s,
								       slen);
				} else if (fp_json_number(v, &d)) {
					rc = fp__calltree_device_set_n(r->t, type, tlen, index,
								       ilen, key, klen, false, d,
								       NULL, 0);
				} else {
					if (r->info)
						r->info->skipped_metrics++;
					continue;
				}
				if (rc)
					return rd_tree_fail(r, rc, v, "device info");
			}
		}
	}
	return FP_OK;
}

struct level {
	const struct fp_json_value *children;
	size_t next;
	uint32_t node;
};

static int read_tree(struct rd *r, const struct fp_json_value *root)
{
	const struct fp_json_value *children;
	struct level *stack = NULL;
	size_t depth = 0, alloc = 0;
	const char *name;
	size_t len;
	int rc;

	rc = check_node(r, root, &name, &len, &children);
	if (rc)
		return rc;
	rc = fp_calltree_set_root_name(r->t, name, len);
	if (!rc)
		rc = read_metrics(r, root, FP_CALLTREE_ROOT);
	if (rc)
		return rc == FP_ENOMEM || rc == FP_ELIMIT ? rd_tree_fail(r, rc, root, "node") : rc;
	if (r->info)
		r->info->nodes++;
	if (!children || fp_json_len(children) == 0)
		return FP_OK;
	alloc = 64;
	stack = fp_reallocarray(NULL, alloc, sizeof(*stack));
	if (!stack)
		return FP_ENOMEM;
	stack[depth++] = (struct level){children, 0, FP_CALLTREE_ROOT};
	while (depth > 0) {
		struct level *lv = &stack[depth - 1];
		const struct fp_json_value *node;
		uint32_t frame, id;
		size_t before;

		if (lv->next >= fp_json_len(lv->children)) {
			depth--;
			continue;
		}
		node = fp_json_at(lv->children, lv->next++);
		rc = check_node(r, node, &name, &len, &children);
		if (rc)
			break;
		before = r->t->count;
		rc = fp_calltree_intern(r->t, name, len, &frame);
		if (!rc)
			rc = fp_calltree_child(r->t, lv->node, frame, &id);
		if (rc) {
			rc = rd_tree_fail(r, rc, node, "node");
			break;
		}
		if (r->info) {
			r->info->nodes++;
			if (r->t->count == before)
				r->info->merged_siblings++;
		}
		rc = read_metrics(r, node, id);
		if (rc)
			break;
		if (children && fp_json_len(children) > 0) {
			if (depth == alloc) {
				struct level *ns = fp_reallocarray(stack, alloc * 2, sizeof(*ns));

				if (!ns) {
					rc = FP_ENOMEM;
					break;
				}
				stack = ns;
				alloc *= 2;
			}
			stack[depth++] = (struct level){children, 0, id};
		}
	}
	fp_free(stack);
	return rc;
}

static int read_doc(struct rd *r)
{
	const struct fp_json_value *top = fp_json_root(r->doc), *root;
	size_t i, n;
	int rc;

	if (fp_json_type(top) != FP_JSON_ARRAY)
		return rd_fail(r, FP_EFORMAT, top, "top level",
			       "expected an array [root, device_info], not %s", type_name(top));
	n = fp_json_len(top);
	if (n == 0)
		return rd_fail(r, FP_EFORMAT, top, "top level",
			       "the array is empty: expected a root node");
	root = fp_json_at(top, 0);
	rc = register_metrics(r, root);
	if (rc)
		return rc;
	rc = read_tree(r, root);
	if (rc)
		return rc;
	for (i = 1; i < n; i++) {
		const struct fp_json_value *el = fp_json_at(top, i);

		if (fp_json_type(el) == FP_JSON_OBJECT && fp_json_get(el, "frame"))
			return rd_fail(r, FP_EFORMAT, el, "top level",
				       "element [%zu] is a second root node; only one root is "
				       "supported",
				       i);
		if (i > 1)
			return rd_fail(r, FP_EFORMAT, el, "top level",
				       "unexpected element [%zu]: expected [root, device_info]", i);
		rc = read_devices(r, el);
		if (rc)
			return rc;
	}
	return fp_calltree_finalize(r->t);
}

static int parse_common(const char *text, size_t len, const char *path,
			const struct fp_calltree_limits *lim, struct fp_calltree **out,
			struct fp_hatchet_info *info, struct fp_diag *diag)
{
	struct fp_json_limits jl = {0};
	struct fp_json_doc *doc = NULL;
	struct rd r = {0};
	uint32_t max_depth = lim && lim->max_depth ? lim->max_depth : FP_CALLTREE_DEFAULT_MAX_DEPTH;
	int rc;

	if (!out || (!text && len && !path))
		return FP_EINVAL;
	if (info)
		memset(info, 0, sizeof(*info));
	/* Each tree level is two JSON levels (node object, children array), plus the top array
	 * and the frame/metrics objects of the deepest node. */
	jl.max_depth = 2 * (max_depth + 1) + 4;
	if (path)
		rc = fp_json_parse_file(path, &jl, &doc, diag);
	else
		rc = fp_json_parse(text, len, &jl, &doc, diag);
	if (rc)
		return rc;
	r.doc = doc;
	r.info = info;
	r.diag = diag;
	r.path = path;
	r.t = fp_calltree_new(lim);
	if (!r.t) {
		rc = FP_ENOMEM;
		goto fail_tree;
	}
	rc = read_doc(&r);
	if (rc) {
		if (rc == FP_ENOMEM)
			fp_diag_set(diag, rc, 0, "out of memory");
		fp_calltree_free(r.t);
		goto fail_tree;
	}
	*out = r.t;
fail_tree:
	fp_json_doc_free(doc);
	return rc;
}

int fp_calltree_parse_hatchet(const char *text, size_t len, const struct fp_calltree_limits *lim,
			      unsigned flags, struct fp_calltree **out,
			      struct fp_hatchet_info *info, struct fp_diag *diag)
{
	struct fp_hatchet_info local;
	struct fp_diag local_diag;
	struct fp_calltree *t = NULL;
	int rc = FP__HATCHET_FALLBACK;

	if (!out || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_calltree_parse_hatchet: NULL argument");
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	if (!(flags & FP_HATCHET_STRICT))
		rc = fp__hatchet_scan(text, len, lim, flags, &t, info);
	if (rc == FP_OK) {
		info->fast_path = true;
		*out = t;
		return FP_OK;
	}
	if (rc == FP_ENOMEM)
		return fp_diag_set(diag, rc, 0, "out of memory");
	if (flags & FP_HATCHET_FAST_ONLY)
		return fp_diag_set(diag, FP_ENOTSUP, 0, "not for the streaming reader");
	if (!diag)
		diag = &local_diag;
	rc = parse_common(text ? text : "", len, NULL, lim, out, info, diag);
	/* An error at the very end: the text stops inside the document. */
	if (rc == FP_EFORMAT && diag->offset >= len)
		info->truncated = true;
	return rc;
}

int fp_calltree_read_hatchet(const char *path, const struct fp_calltree_limits *lim,
			     struct fp_calltree **out, struct fp_hatchet_info *info,
			     struct fp_diag *diag)
{
	if (!path)
		return FP_EINVAL;
	return parse_common(NULL, 0, path, lim, out, info, diag);
}
