/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ranks of a multi-process job (<flagprism/ranks.h>): the rank's identity kept with a profiling
 * session (a feature of the session, fp__prof_feature_ranks: written to its metadata and trace
 * through the row's hooks), reading that identity back from a meta file, and
 * the merge of the ranks' profiles with per-rank statistics per node (mean/min/max from
 * fp_calltree_merge(), plus the sum and the rank of the max). The names each rank writes to
 * (core/ranks-names.c), the trace merge (ranks-trace.c), the summary merge
 * (debug/summary-ranks.c) and the imbalance view (view/view-ranks.c) are in their own files;
 * this one does not read traces or summaries.
 */
#include "fp-setup.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/comm.h>
#include <flagprism/json.h>
#include <flagprism/ranks.h>
#include <flagprism/strbuf.h>

#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"
#include "core/core-internal.h"

/* A meta file is a few kilobytes; anything near this is not ours. */
#define META_MAX_BYTES ((size_t)16 << 20)

/* ---- a session's identity -------------------------------------------------------------------- */

struct rank_state {
	int64_t rank, local_rank, world_size, local_world_size;
	char *host, *device, *backend, *boot_id;
	bool has_barrier;
	uint64_t barrier_exit_ns, barrier_ns;
};

void fp_ranks_info_init(struct fp_ranks_info *ri)
{
	if (!ri)
		return;
	memset(ri, 0, sizeof(*ri));
	ri->rank = ri->local_rank = ri->world_size = ri->local_world_size = -1;
}

static void rank_state_free(struct rank_state *r)
{
	if (!r)
		return;
	fp_free(r->host);
	fp_free(r->device);
	fp_free(r->backend);
	fp_free(r->boot_id);
	fp_free(r);
}

static void rank_release(void *state)
{
	rank_state_free(state);
}

static int copy_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return FP_OK;
	*dst = fp_strndup(src, strnlen(src, 255)); /* copies exactly n bytes */
	return *dst ? FP_OK : FP_ENOMEM;
}

static int attach_fn(struct fp_prof_session *s, void *arg)
{
	const struct fp_ranks_info *ri = arg;
	struct rank_state *r = fp_calloc(1, sizeof(*r));

	if (!r)
		return FP_ENOMEM;
	r->rank = ri->rank;
	r->local_rank = ri->local_rank;
	r->world_size = ri->world_size;
	r->local_world_size = ri->local_world_size;
	r->has_barrier = ri->has_barrier;
	r->barrier_exit_ns = ri->barrier_exit_ns;
	r->barrier_ns = ri->barrier_ns;
	if (copy_opt(&r->host, ri->host) || copy_opt(&r->device, ri->device) ||
	    copy_opt(&r->backend, ri->backend) || copy_opt(&r->boot_id, ri->boot_id)) {
		rank_state_free(r);
		return FP_ENOMEM;
	}
	rank_state_free(s->feature_state[FP__PROF_F_RANKS]);
	s->feature_state[FP__PROF_F_RANKS] = r;
	return FP_OK;
}

int fp_ranks_attach(int session, const struct fp_ranks_info *ri)
{
	if (!ri || ri->rank < 0 || ri->world_size < 1 || ri->rank >= ri->world_size ||
	    ri->world_size > FP_RANKS_MAX)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, attach_fn, (void *)ri);
}

static void kv_num(struct fp_jsonw *w, const char *k, int64_t v)
{
	if (v < 0)
		fp_jsonw_kv_null(w, k);
	else
		fp_jsonw_kv_int(w, k, v);
}

static void kv_str(struct fp_jsonw *w, const char *k, const char *v)
{
	if (v)
		fp_jsonw_kv_string(w, k, v);
	else
		fp_jsonw_kv_null(w, k);
}

/* The metadata's "distributed" member (nothing outside a job). */
static int rank_write_meta(struct fp_prof_session *s, struct fp_jsonw *w)
{
	const struct rank_state *r = s->feature_state[FP__PROF_F_RANKS];

	if (!r)
		return FP_OK;
	fp_jsonw_key(w, "distributed");
	fp_jsonw_object_begin(w);
	kv_num(w, "rank", r->rank);
	kv_num(w, "local_rank", r->local_rank);
	kv_num(w, "world_size", r->world_size);
	kv_num(w, "local_world_size", r->local_world_size);
	kv_str(w, "host", r->host);
	kv_str(w, "device", r->device);
	kv_str(w, "backend", r->backend);
	kv_str(w, "boot_id", r->boot_id);
	fp_jsonw_key(w, "barrier");
	if (r->has_barrier) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "exit_monotonic_ns", r->barrier_exit_ns);
		fp_jsonw_kv_uint(w, "duration_ns", r->barrier_ns);
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_null(w);
	}
	return fp_jsonw_object_end(w);
}

/* The trace's otherData members for the trace merger (nothing outside a job). */
static int rank_write_trace(struct fp_prof_session *s, struct fp_jsonw *w)
{
	const struct rank_state *r = s->feature_state[FP__PROF_F_RANKS];

	if (!r)
		return FP_OK;
	kv_num(w, "rank", r->rank);
	kv_num(w, "local_rank", r->local_rank);
	kv_num(w, "world_size", r->world_size);
	kv_str(w, "host", r->host);
	kv_str(w, "device", r->device);
	if (r->boot_id)
		fp_jsonw_kv_string(w, "boot_id", r->boot_id);
	if (r->has_barrier) {
		fp_jsonw_kv_uint(w, "barrier_exit_monotonic_ns", r->barrier_exit_ns);
		fp_jsonw_kv_uint(w, "barrier_ns", r->barrier_ns);
	}
	return FP_OK;
}

const struct fp__prof_feature fp__prof_feature_ranks = {
	.name = "ranks",
	.release = rank_release,
	.write_meta = rank_write_meta,
	.trace_other_data = rank_write_trace,
};

/* ---- reading an identity back ------------------------------------------------------------------ */

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* A member that must be a non-negative integer or null/absent (-1). */
static int read_int(const struct fp_json_value *obj, const char *key, int64_t *out,
		    const char *path, const struct fp_json_doc *doc, struct fp_diag *diag)
{
	const struct fp_json_value *v = fp_json_get(obj, key);
	uint32_t line = 0, col = 0;

	*out = -1;
	if (!v || fp_json_type(v) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_int64(v, out) && *out >= 0)
		return FP_OK;
	fp_json_position(doc, fp_json_offset(v), &line, &col);
	return fp_diag_set_pos(diag, FP_EFORMAT, fp_json_offset(v), line, col,
			       "%s:%u:%u: \"distributed\".\"%s\" must be a non-negative integer "
			       "or null",
			       path, line, col, key);
}

static int read_str(const struct fp_json_value *obj, const char *key, char *out, size_t cap,
		    const char *path, const struct fp_json_doc *doc, struct fp_diag *diag)
{
	const struct fp_json_value *v = fp_json_get(obj, key);
	uint32_t line = 0, col = 0;
	size_t len;
	const char *s;

	out[0] = '\0';
	if (!v || fp_json_type(v) == FP_JSON_NULL)
		return FP_OK;
	s = fp_json_string(v, &len);
	if (s) {
		snprintf(out, cap, "%.*s", (int)FP_MIN(len, cap - 1), s);
		return FP_OK;
	}
	fp_json_position(doc, fp_json_offset(v), &line, &col);
	return fp_diag_set_pos(diag, FP_EFORMAT, fp_json_offset(v), line, col,
			       "%s:%u:%u: \"distributed\".\"%s\" must be a string or null", path,
			       line, col, key);
}

static void read_init(struct fp_ranks_read *out)
{
	memset(out, 0, sizeof(*out));
	out->rank = out->local_rank = out->world_size = out->local_world_size = -1;
}

/* Fill *out from a parsed meta document; `name` for messages. */
static int read_doc(const struct fp_json_doc *doc, const char *name, struct fp_ranks_read *out,
		    struct fp_diag *diag)
{
	const struct fp_json_value *root = fp_json_root(doc), *d, *b, *t;
	bool inc = false;
	int rc;

	if (fp_json_type(root) != FP_JSON_OBJECT)
		return fp__json_error(diag, FP_EFORMAT, name, doc, root,
				      "expected a meta file (a JSON object)");
	fp_json_bool(fp_json_get(root, "incomplete"), &inc);
	out->incomplete = inc;
	t = fp_json_get(root, "time");
	fp_json_uint64(fp_json_get(t, "origin_monotonic_ns"), &out->origin_ns);
	fp_json_uint64(fp_json_get(t, "start_unix_ns"), &out->origin_unix_ns);
	d = fp_json_get(root, "distributed");
	if (!d || fp_json_type(d) == FP_JSON_NULL)
		return FP_OK;
	if (fp_json_type(d) != FP_JSON_OBJECT)
		return fp__json_error(diag, FP_EFORMAT, name, doc, d,
				      "\"distributed\" must be an object or null");
	if ((rc = read_int(d, "rank", &out->rank, name, doc, diag)) ||
	    (rc = read_int(d, "local_rank", &out->local_rank, name, doc, diag)) ||
	    (rc = read_int(d, "world_size", &out->world_size, name, doc, diag)) ||
	    (rc = read_int(d, "local_world_size", &out->local_world_size, name, doc, diag)) ||
	    (rc = read_str(d, "host", out->host, sizeof(out->host), name, doc, diag)) ||
	    (rc = read_str(d, "device", out->device, sizeof(out->device), name, doc, diag)) ||
	    (rc = read_str(d, "backend", out->backend, sizeof(out->backend), name, doc, diag)) ||
	    (rc = read_str(d, "boot_id", out->boot_id, sizeof(out->boot_id), name, doc, diag)))
		return rc;
	if (out->rank >= FP_RANKS_MAX || out->world_size > FP_RANKS_MAX ||
	    (out->world_size >= 0 && out->rank >= out->world_size))
		return fp__json_error(diag, FP_EFORMAT, name, doc, d,
				      "\"distributed\": rank %" PRId64
				      " is not below the world size %" PRId64 " (at most %d)",
				      out->rank, out->world_size, FP_RANKS_MAX);
	b = fp_json_get(d, "barrier");
	if (b && fp_json_type(b) == FP_JSON_OBJECT &&
	    fp_json_uint64(fp_json_get(b, "exit_monotonic_ns"), &out->barrier_exit_ns) &&
	    fp_json_uint64(fp_json_get(b, "duration_ns"), &out->barrier_ns))
		out->has_barrier = true;
	out->found = out->rank >= 0;
	return FP_OK;
}

int fp_ranks_parse_meta(const char *text, size_t len, const char *name, struct fp_ranks_read *out,
			struct fp_diag *diag)
{
	struct fp_json_limits jl = {META_MAX_BYTES, 64, 0};
	struct fp_json_doc *doc = NULL;
	int rc;

	if ((!text && len) || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_ranks_parse_meta: NULL argument");
	if (!name)
		name = "<meta>";
	read_init(out);
	rc = fp_json_parse(text, len, &jl, &doc, diag);
	if (rc == FP_EFORMAT || rc == FP_ELIMIT) {
		if (diag) {
			char msg[sizeof(diag->msg)];

			memcpy(msg, diag->msg, sizeof(msg));
			snprintf(diag->msg, sizeof(diag->msg), "%.100s:%u:%u: %.130s", name,
				 diag->line, diag->col, msg);
		}
		return rc;
	}
	if (rc)
		return rc;
	rc = read_doc(doc, name, out, diag);
	fp_json_doc_free(doc);
	if (rc)
		read_init(out);
	return rc;
}

int fp_ranks_read_meta(const char *path, struct fp_ranks_read *out, struct fp_diag *diag)
{
	struct stat st;
	size_t n, stem, len = 0;
	char *meta, *text = NULL;
	int rc;

	if (!path || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_ranks_read_meta: NULL argument");
	read_init(out);
	n = strlen(path);
	meta = fp_malloc(n + 16);
	if (!meta)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	stem = ends_with(path, n, ".meta.json")         ? n - strlen(".meta.json") :
	       ends_with(path, n, ".hatchet")           ? n - strlen(".hatchet") :
	       ends_with(path, n, ".chrome_trace.json") ? n - strlen(".chrome_trace.json") :
	       ends_with(path, n, ".json")              ? n - strlen(".json") :
							  n;
	snprintf(meta, n + 16, "%.*s.meta.json", (int)stem, path);
	rc = FP_OK;
	if (stat(meta, &st) == 0) { /* no meta file: nothing to say */
		rc = fp__strbuf_slurp(meta, META_MAX_BYTES, FP_STRBUF_READ_REGULAR, &text, &len,
				      diag);
		if (!rc)
			rc = fp_ranks_parse_meta(text, len, meta, out, diag);
	}
	fp_free(text);
	fp_free(meta);
	return rc;
}

/* ---- merging profiles ------------------------------------------------------------------------- */

/* The best (largest) value of one (node, metric) pair so far, and whose it is. */
struct best {
	double v;
	int64_t rank;
};

struct rmerge {
	struct fp_calltree *o;
	uint32_t *sum; /* by input metric id: "M (sum)" of the output */
	size_t ids_alloc;
	struct fp_hashmap rank_of; /* output "M (sum)" id -> output "M (max rank) (pty)" id */
	struct fp_hashmap slots;   /* (node << 32 | sum metric) -> index into bests */
	struct best *bests;
	size_t nbests, bests_alloc;
	uint32_t *map;
	size_t map_alloc;
};

/*
 * Register "<name> <suffix>" with `kind`, where <name> loses a trailing "(exc)", which comes
 * back behind the suffix when `keep_exc` ("t (ns)(exc)" -> "t (ns) (sum)(exc)" for a sum, "t
 * (ns) (max rank) (pty)" for its rank: a property name must end in "(pty)").
 */
static int metric_with(struct fp_calltree *o, const char *name, size_t len, const char *suffix,
		       bool keep_exc, enum fp_metric_kind kind, uint32_t *id)
{
	char small[512], *buf = small;
	size_t base = len, sl = strlen(suffix), n;
	bool exc = false;
	int rc;

	while (base > 0 && name[base - 1] == ' ')
		base--;
	if (base >= 5 && !memcmp(name + base - 5, "(exc)", 5)) {
		exc = true;
		base -= 5;
		while (base > 0 && name[base - 1] == ' ')
			base--;
	}
	/* any length the tree's names allow: the tree refuses what is too long */
	if (base > SIZE_MAX - sl - 7)
		return FP_ELIMIT;
	n = base + 1 + sl + (exc && keep_exc ? 5 : 0);
	if (n > sizeof(small)) {
		buf = fp_malloc(n);
		if (!buf)
			return FP_ENOMEM;
	}
	memcpy(buf, name, base);
	buf[base] = ' ';
	memcpy(buf + base + 1, suffix, sl);
	if (exc && keep_exc)
		memcpy(buf + base + 1 + sl, "(exc)", 5);
	rc = fp_calltree_metric(o, buf, n, kind, id);
	if (buf != small)
		fp_free(buf);
	return rc;
}

static int rmerge_register(struct rmerge *m, const struct fp_calltree *in)
{
	uint32_t i, nm = fp_calltree_metric_count(in);
	int rc;

	if (nm > m->ids_alloc) {
		uint32_t *ns = fp_reallocarray(m->sum, nm, sizeof(*ns));

		if (!ns)
			return FP_ENOMEM;
		m->sum = ns;
		m->ids_alloc = nm;
	}
	for (i = 0; i < nm; i++) {
		size_t len;
		enum fp_metric_kind kind;
		const char *name = fp_calltree_metric_name(in, i, &len, &kind);
		uint32_t rank_id;

		m->sum[i] = FP_CALLTREE_NONE;
		if (kind != FP_METRIC_INCLUSIVE && kind != FP_METRIC_EXCLUSIVE)
			continue;
		rc = metric_with(m->o, name, len, "(sum)", true, kind, &m->sum[i]);
		if (!rc)
			rc = metric_with(m->o, name, len, "(max rank) (pty)", false,
					 FP_METRIC_PROPERTY, &rank_id);
		if (!rc)
			rc = fp_hashmap_put(&m->rank_of, m->sum[i], rank_id);
		if (rc)
			return rc;
	}
	return FP_OK;
}

/* m->map[i] = the node of m->o with the path of node i of `in` (all exist after the merge). */
static int rmerge_map(struct rmerge *m, const struct fp_calltree *in)
{
	size_t i;

	if (in->count > m->map_alloc) {
		uint32_t *nm = fp_reallocarray(m->map, in->count, sizeof(*nm));

		if (!nm)
			return FP_ENOMEM;
		m->map = nm;
		m->map_alloc = in->count;
	}
	m->map[0] = FP_CALLTREE_ROOT;
	for (i = 1; i < in->count; i++) {
		const struct fp__ct_node *n = fp__ct_node(in, (uint32_t)i);
		size_t len;
		const char *name = fp_intern_str(in->names, n->frame, &len);
		uint32_t frame;

		if (fp_intern_find(m->o->names, name, len, &frame) != FP_OK ||
		    fp_calltree_child_find(m->o, m->map[n->parent], frame, &m->map[i]) != FP_OK)
			return FP_EINVAL; /* cannot happen: the merge made every path */
	}
	return FP_OK;
}

static int rmerge_one(struct rmerge *m, const struct fp_calltree *in, int64_t rank)
{
	size_t i;
	int rc;

	for (i = 0; i < in->count; i++) {
		const struct fp__ct_cell *c;
		uint32_t o = m->map[i];

		for (c = fp__ct_node(in, (uint32_t)i)->cells; c; c = c->next) {
			enum fp_metric_kind kind = (enum fp_metric_kind)in->kinds[c->metric];
			bool self = (c->flags & FP__CELL_SELF) != 0;
			uint64_t key, ix;
			double v;

			if (kind != FP_METRIC_INCLUSIVE && kind != FP_METRIC_EXCLUSIVE)
				continue;
			if (kind == FP_METRIC_EXCLUSIVE && !self)
				continue;
			if (self) {
				rc = fp_calltree_add_metric(m->o, o, m->sum[c->metric], c->self);
				if (rc)
					return rc;
			}
			v = kind == FP_METRIC_INCLUSIVE ? c->total : c->self;
			key = (uint64_t)o << 32 | m->sum[c->metric];
			if (fp_hashmap_get(&m->slots, key, &ix)) {
				/* ranks arrive in ascending order: strictly larger wins ties low */
				if (v > m->bests[ix].v) {
					m->bests[ix].v = v;
					m->bests[ix].rank = rank;
				}
				continue;
			}
			if (m->nbests == m->bests_alloc) {
				size_t na = m->bests_alloc ? m->bests_alloc * 2 : 256;
				struct best *nb = fp_reallocarray(m->bests, na, sizeof(*nb));

				if (!nb)
					return FP_ENOMEM;
				m->bests = nb;
				m->bests_alloc = na;
			}
			rc = fp_hashmap_put(&m->slots, key, m->nbests);
			if (rc)
				return rc;
			m->bests[m->nbests].v = v;
			m->bests[m->nbests].rank = rank;
			m->nbests++;
		}
	}
	return FP_OK;
}

/* Each (node, summed metric)'s best rank as the node's "M (max rank) (pty)". */
static int rmerge_finish(struct rmerge *m)
{
	size_t iter = 0;
	uint64_t key, ix, rm;
	int rc;

	while (fp_hashmap_next(&m->slots, &iter, &key, &ix)) {
		uint32_t node = (uint32_t)(key >> 32), sum = (uint32_t)key;

		if (!fp_hashmap_get(&m->rank_of, sum, &rm))
			return FP_EINVAL; /* cannot happen: registered together */
		rc = fp_calltree_add_metric(m->o, node, (uint32_t)rm, (double)m->bests[ix].rank);
		if (rc)
			return rc;
	}
	return FP_OK;
}

static int set_root_str(struct fp_calltree *o, const char *metric, const char *v)
{
	uint32_t m;
	int rc = fp_calltree_metric_auto(o, metric, strlen(metric), &m);

	return rc ? rc : fp_calltree_set_string(o, FP_CALLTREE_ROOT, m, v, strlen(v));
}

static int set_root_num(struct fp_calltree *o, const char *metric, double v)
{
	uint32_t m;
	int rc = fp_calltree_metric_auto(o, metric, strlen(metric), &m);

	return rc ? rc : fp_calltree_add_metric(o, FP_CALLTREE_ROOT, m, v);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The job's ranks and missing ranks as the root's properties. */
static int write_job(struct fp_calltree *o, const int64_t *ranks, size_t n, int64_t world)
{
	int64_t *sorted = fp_reallocarray(NULL, n, sizeof(*sorted)), *missing = NULL;
	size_t nmissing;
	char text[1024];
	int rc;

	if (!sorted)
		return FP_ENOMEM;
	memcpy(sorted, ranks, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_i64);
	fp_ranks_format(sorted, n, text, sizeof(text)); /* cut with "..." when long */
	rc = set_root_str(o, "ranks (pty)", text);
	if (!rc)
		rc = set_root_num(o, "world_size (pty)", (double)world);
	nmissing = fp_ranks_missing(ranks, n, world, NULL, 0);
	if (!rc && nmissing) {
		missing = fp_reallocarray(NULL, nmissing, sizeof(*missing));
		if (!missing)
			rc = FP_ENOMEM;
		else
			fp_ranks_missing(ranks, n, world, missing, nmissing);
	}
	if (!rc) {
		fp_ranks_format(missing, nmissing, text, sizeof(text));
		rc = set_root_str(o, "missing_ranks (pty)", text);
	}
	fp_free(missing);
	fp_free(sorted);
	return rc;
}

/*
 * A rank's kernel time outside collectives: the root's "time (ns)" total less the totals of the
 * collective library's kernel nodes (the outermost ones). A rank waiting for a straggler waits
 * inside those kernels (NCCL's spin until the peers' data arrives), so this, not the whole time,
 * names the straggler. *has is false when the tree has no "time (ns)". FP_OK or FP_ENOMEM.
 */
static int compute_time(const struct fp_calltree *t, double *out, bool *has)
{
	uint32_t m;
	size_t i;
	uint8_t *inside;
	const struct fp__ct_cell *c;

	*out = 0;
	*has = fp_calltree_metric_find(t, "time (ns)", 9, &m) == FP_OK;
	if (!*has)
		return FP_OK;
	c = fp__calltree_cell(t, FP_CALLTREE_ROOT, m);
	*out = c ? c->total : 0;
	inside = fp_calloc(t->count ? t->count : 1, 1);
	if (!inside)
		return FP_ENOMEM;
	for (i = 1; i < t->count; i++) { /* a child's id is larger than its parent's */
		const struct fp__ct_node *n = fp__ct_node(t, (uint32_t)i);
		size_t len;
		const char *name = fp_intern_str(t->names, n->frame, &len);

		if (inside[n->parent]) {
			inside[i] = 1;
		} else if (name && fp_comm_kernel_parse(name, len, NULL)) {
			inside[i] = 1;
			c = fp__calltree_cell(t, (uint32_t)i, m);
			*out -= c ? c->total : 0;
		}
	}
	fp_free(inside);
	return FP_OK;
}

/* Each rank's compute time as the root's "compute_time (ns)" and its statistics. */
static int write_compute_time(struct fp_calltree *o, struct fp_calltree *const *in,
			      const int64_t *ranks, size_t n)
{
	static const char *const names[] = {"compute_time (ns)", "compute_time (ns) (min)",
					    "compute_time (ns) (max)", "compute_time (ns) (sum)",
					    "compute_time (ns) (max rank) (pty)"};
	double v, sum = 0, lo = 0, hi = 0;
	int64_t best = -1;
	uint32_t m;
	size_t i, k;
	bool has;
	int rc;

	for (i = 0; i < n; i++) /* a merged profile merged again keeps its own */
		if (fp_calltree_metric_find(in[i], names[0], strlen(names[0]), &m) == FP_OK)
			return FP_OK;
	for (i = 0; i < n; i++) {
		rc = compute_time(in[i], &v, &has);
		if (rc)
			return rc;
		if (!has)
			return FP_OK; /* no times: nothing to say */
		sum += v;
		if (i == 0 || v < lo)
			lo = v;
		if (i == 0 || v > hi || (v == hi && ranks[i] < best)) {
			hi = v;
			best = ranks[i];
		}
	}
	for (k = 0; k < FP_ARRAY_SIZE(names); k++) {
		double x = k == 0 ? sum / (double)n :
			   k == 1 ? lo :
			   k == 2 ? hi :
			   k == 3 ? sum :
				    (double)best;

		rc = fp_calltree_metric_auto(o, names[k], strlen(names[k]), &m);
		if (!rc)
			rc = fp_calltree_add_metric(o, FP_CALLTREE_ROOT, m, x);
		if (rc)
			return rc;
	}
	return FP_OK;
}

int fp_ranks_merge(struct fp_calltree *const *in, const int64_t *ranks, size_t n,
		   int64_t world_size, struct fp_calltree **out)
{
	return fp_ranks_merge_op(in, ranks, n, world_size, FP_MERGE_MEAN, out);
}

int fp_ranks_merge_op(struct fp_calltree *const *in, const int64_t *ranks, size_t n,
		      int64_t world_size, enum fp_merge_op op, struct fp_calltree **out)
{
	struct rmerge m;
	size_t i, j, *order = NULL;
	int64_t maxr = -1;
	int rc;

	if (!in || !ranks || n == 0 || !out || n > FP_RANKS_MAX)
		return FP_EINVAL;
	for (i = 0; i < n; i++) {
		if (!in[i] || ranks[i] < 0 || ranks[i] >= FP_RANKS_MAX)
			return FP_EINVAL;
		for (j = 0; j < i; j++)
			if (ranks[j] == ranks[i])
				return FP_EINVAL;
		maxr = FP_MAX(maxr, ranks[i]);
	}
	if (world_size == 0)
		world_size = maxr + 1;
	if (world_size <= maxr || world_size > FP_RANKS_MAX)
		return FP_EINVAL;
	memset(&m, 0, sizeof(m));
	fp_hashmap_init(&m.slots);
	fp_hashmap_init(&m.rank_of);
	rc = fp_calltree_merge_op(in, n, op, &m.o);
	if (rc)
		return rc;
	/* Visit the inputs by rank, so that ties go to the lowest rank. */
	order = fp_reallocarray(NULL, n, sizeof(*order));
	if (!order) {
		rc = FP_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		for (j = i; j > 0 && ranks[order[j - 1]] > ranks[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (i = 0; !rc && i < n; i++) {
		const struct fp_calltree *t = in[order[i]];

		rc = rmerge_register(&m, t);
		if (!rc)
			rc = rmerge_map(&m, t);
		if (!rc)
			rc = rmerge_one(&m, t, ranks[order[i]]);
	}
	if (!rc)
		rc = rmerge_finish(&m);
	if (!rc)
		rc = write_job(m.o, ranks, n, world_size);
	if (!rc)
		rc = write_compute_time(m.o, in, ranks, n);
	if (!rc)
		rc = fp_calltree_finalize(m.o);
out:
	fp_free(order);
	fp_free(m.sum);
	fp_hashmap_release(&m.rank_of);
	fp_free(m.bests);
	fp_free(m.map);
	fp_hashmap_release(&m.slots);
	if (rc) {
		fp_calltree_free(m.o);
		return rc;
	}
	*out = m.o;
	return FP_OK;
}
