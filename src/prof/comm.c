/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Collectives in sessions (<flagprism/comm.h>), a feature of the session (its row,
 * fp__prof_feature_comm, is called by the core: prof-internal.h): recognising a collective
 * library's kernels by name and filing them under one group node per kind, and the collective
 * scopes the Python layer opens around torch.distributed calls (their metrics and trace slices).
 * The scope stack itself is session-scope.c's; this file only adds what makes a scope a
 * collective. Not here: the hooks (python/flagprism/_dist.py) and the trace layout
 * (chrome-trace.c draws what this file records; this file puts a collective library's kernels
 * on their own tracks).
 */
#include "fp-setup.h"

#include <flagprism/comm.h>

#include "prof/calltree-internal.h"
#include "prof/prof-internal.h"

/* Metric names of collective scopes (docs/formats/profiler-formats.md, "Collectives"). */
#define M_BYTES "comm_bytes"
#define M_COUNT "comm_count"
#define M_TIME "comm_time (ns)"
#define M_KIND "comm_kind (pty)"
#define M_RANKS "comm_ranks (pty)"
#define M_GROUP "comm_group_size (max)"

/* Longest "<backend>:<op>" scope name and "<library>:<Kind>" group name. */
#define MAX_NAME 256

enum {
	CM_BYTES,
	CM_COUNT,
	CM_TIME,
	CM_KIND,
	CM_RANKS,
	CM_GROUP,
	CM_NSLOTS
};

static const char *const comm_metric_names[CM_NSLOTS] = {
	[CM_BYTES] = M_BYTES, [CM_COUNT] = M_COUNT, [CM_TIME] = M_TIME,
	[CM_KIND] = M_KIND,   [CM_RANKS] = M_RANKS, [CM_GROUP] = M_GROUP,
};

struct comm_state {
	struct fp_hashmap kinds;  /* kernel name id -> group frame + 1; 0: not a collective */
	struct fp_hashmap scopes; /* node id -> 1 for nodes of collective scopes */
	uint32_t metric[CM_NSLOTS];
};

/* What a collective scope keeps in its stack entry's data[]: the call's bytes, and its
 * communicator size with SCOPE_ASYNC for an asynchronous call. */
#define SCOPE_BYTES 0
#define SCOPE_GROUP 1
#define SCOPE_ASYNC ((uint64_t)1 << 32)

/* ---- names ----------------------------------------------------------------------------------- */

static bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t pl = strlen(p);

	return n >= pl && memcmp(s, p, pl) == 0;
}

bool fp_comm_kernel_parse(const char *name, size_t len, struct fp_comm_kernel *out)
{
	static const char *const prefixes[] = {"ncclDevKernel_", "ncclKernel_"};
	const char *id = name;
	size_t n = len, i, k;

	if (!name)
		return false;
	/* "_Z<len><identifier>...": a mangled global function; the identifier is its name. */
	if (n >= 3 && id[0] == '_' && id[1] == 'Z' && id[2] >= '0' && id[2] <= '9') {
		size_t idlen = 0;

		for (i = 2; i < n && id[i] >= '0' && id[i] <= '9' && idlen < 4096; i++)
			idlen = idlen * 10 + (size_t)(id[i] - '0');
		if (idlen == 0 || idlen > n - i)
			return false;
		id += i;
		n = idlen;
	} else {
		for (i = 0; i < n && id[i] != '('; i++)
			;
		n = i;
	}
	for (k = 0; k < FP_ARRAY_SIZE(prefixes); k++) {
		size_t pl = strlen(prefixes[k]), end;

		if (!has_prefix(id, n, prefixes[k]))
			continue;
		for (end = pl; end < n && id[end] != '_'; end++) {
			char c = id[end];

			if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			      (c >= '0' && c <= '9')))
				return false;
		}
		if (end == pl || id[pl] < 'A' || id[pl] > 'Z')
			return false;
		if (out) {
			out->library = "nccl";
			out->kind = id + pl;
			out->kind_len = end - pl;
		}
		return true;
	}
	return false;
}

/* ---- per-session state (session lock held) --------------------------------------------------- */

static int state(struct fp_prof_session *s, struct comm_state **out)
{
	size_t i;

	if (!s->feature_state[FP__PROF_F_COMM]) {
		struct comm_state *c = fp_calloc(1, sizeof(*c));

		if (!c)
			return FP_ENOMEM;
		fp_hashmap_init(&c->kinds);
		fp_hashmap_init(&c->scopes);
		for (i = 0; i < CM_NSLOTS; i++)
			c->metric[i] = FP_CALLTREE_NONE;
		s->feature_state[FP__PROF_F_COMM] = c;
	}
	*out = s->feature_state[FP__PROF_F_COMM];
	return FP_OK;
}

static void comm_release(void *state)
{
	struct comm_state *c = state;

	fp_hashmap_release(&c->kinds);
	fp_hashmap_release(&c->scopes);
	fp_free(c);
}

static int metric(struct fp_prof_session *s, struct comm_state *c, int slot, uint32_t *id)
{
	int rc;

	if (c->metric[slot] == FP_CALLTREE_NONE) {
		rc = fp_calltree_metric_auto(s->tree, comm_metric_names[slot],
					     strlen(comm_metric_names[slot]), &c->metric[slot]);
		if (rc) {
			c->metric[slot] = FP_CALLTREE_NONE;
			return rc;
		}
	}
	*id = c->metric[slot];
	return FP_OK;
}

static int add(struct fp_prof_session *s, struct comm_state *c, uint32_t node, int slot, double v)
{
	uint32_t m;
	int rc = metric(s, c, slot, &m);

	return rc ? rc : fp_calltree_add_metric(s->tree, node, m, v);
}

static int set_str(struct fp_prof_session *s, struct comm_state *c, uint32_t node, int slot,
		   const char *v)
{
	uint32_t m;
	int rc = metric(s, c, slot, &m);

	return rc ? rc : fp_calltree_set_string(s->tree, node, m, v, strnlen(v, 4096));
}

/* The node a kernel (process-wide name id) is filed under, given the node `base` its launch
 * context gives: `base` itself, or for a collective library's kernel launched outside a
 * collective scope, its group "nccl:<Kind>" below `base`. */
static int comm_kernel_base(struct fp_prof_session *s, uint32_t kernel, uint32_t base,
			    uint32_t *out)
{
	struct comm_state *c = s->feature_state[FP__PROF_F_COMM];
	struct fp_comm_kernel k;
	uint64_t v;
	const char *name;
	size_t len;
	int rc;

	*out = base;
	/* The common case first: a session that saw no collective scope and this kernel before. */
	if (c && fp_hashmap_get(&c->kinds, kernel, &v)) {
		if (!v)
			return FP_OK;
	} else {
		char group[MAX_NAME];
		uint32_t frame;
		int gl;

		rc = state(s, &c);
		if (rc)
			return rc;
		name = fp_prof_name_str(kernel, &len);
		v = 0;
		if (name && fp_comm_kernel_parse(name, len, &k)) {
			gl = snprintf(group, sizeof(group), "%s:%.*s", k.library,
				      (int)FP_MIN(k.kind_len, 200), k.kind);
			rc = fp_calltree_intern(s->tree, group, (size_t)gl, &frame);
			if (rc)
				return rc;
			v = (uint64_t)frame + 1;
		}
		rc = fp_hashmap_put(&c->kinds, kernel, v);
		if (rc)
			return rc;
		if (!v)
			return FP_OK;
	}
	/* Launched inside a torch.distributed collective: that scope already is its group. */
	if (base != FP_CALLTREE_ROOT && fp_hashmap_get(&c->scopes, base, NULL))
		return FP_OK;
	return fp_calltree_child(s->tree, base, (uint32_t)(v - 1), out);
}

/* A collective scope was just pushed (sc is its stack entry): metrics of its node. */
static int comm_scope_opened(struct fp_prof_session *s, struct fp__prof_scope *sc, const void *arg)
{
	const struct fp_comm_call *call = arg;
	struct comm_state *c;
	int rc;

	sc->data[SCOPE_BYTES] = call->bytes;
	sc->data[SCOPE_GROUP] = call->group_size | (call->flags & FP_COMM_ASYNC ? SCOPE_ASYNC : 0);
	rc = state(s, &c);
	if (!rc)
		rc = fp_hashmap_put(&c->scopes, sc->node, 1);
	if (rc)
		return rc;
	if (!s->active) {
		s->st.ignored_inactive++;
		return FP_OK;
	}
	rc = add(s, c, sc->node, CM_BYTES, (double)call->bytes);
	if (!rc)
		rc = add(s, c, sc->node, CM_COUNT, 1);
	if (!rc)
		rc = set_str(s, c, sc->node, CM_KIND, call->op);
	if (!rc && call->ranks && call->ranks[0])
		rc = set_str(s, c, sc->node, CM_RANKS, call->ranks);
	if (!rc && call->group_size)
		rc = add(s, c, sc->node, CM_GROUP, call->group_size);
	if (rc)
		s->st.failed++; /* the scope stays open: its exit must still pair */
	return FP_OK;
}

/* A collective scope was just popped on thread `tid` at `now`: its time and trace slice. */
static int comm_scope_closed(struct fp_prof_session *s, uint32_t tid,
			     const struct fp__prof_scope *sc, uint64_t now)
{
	struct comm_state *c;
	uint64_t end = now >= sc->begin ? now : sc->begin;
	int rc = state(s, &c);

	if (!rc)
		rc = add(s, c, sc->node, CM_TIME, (double)(end - sc->begin));
	if (!rc && s->opt.data == FP_PROF_DATA_TRACE) {
		struct fp__trace_rec r = {
			.begin = sc->begin,
			.end = end,
			.correlation = sc->data[SCOPE_BYTES],
			.node = sc->node,
			.kind = FP__TRACE_COMM,
			.device_type = FP_PROF_NO_NAME,
			.tid = tid,
			.grid = {(uint32_t)sc->data[SCOPE_GROUP],
				 (sc->data[SCOPE_GROUP] & SCOPE_ASYNC) ? 1u : 0u, 0},
		};

		rc = fp__prof_trace_add(s, &r);
	}
	return rc;
}

/* A collective library's kernels are drawn on their stream's communication track. */
static uint64_t comm_kernel_track(struct fp_prof_session *s, uint32_t node)
{
	size_t len;
	const char *name = fp_calltree_node_name(s->tree, node, &len);

	return name && fp_comm_kernel_parse(name, len, NULL) ? FP__TRACK_COMM : 0;
}

const struct fp__prof_feature fp__prof_feature_comm = {
	.name = "comm",
	.release = comm_release,
	.kernel_base = comm_kernel_base,
	.scope_opened = comm_scope_opened,
	.scope_closed = comm_scope_closed,
	.scope_noun = "collective",
	.trace_kernel_track = comm_kernel_track,
};

/* ---- public entry points --------------------------------------------------------------------- */

int fp_comm_enter(int session, const struct fp_comm_call *c)
{
	char name[MAX_NAME];
	int n;

	if (!c || !c->backend || !c->backend[0] || !c->op || !c->op[0])
		return FP_EINVAL;
	n = snprintf(name, sizeof(name), "%s:%s", c->backend, c->op);
	if (n < 0 || (size_t)n >= sizeof(name))
		return FP_EINVAL;
	return fp__prof_scope_enter_feature(session, name, (size_t)n, &fp__prof_feature_comm, c);
}

int fp_comm_exit(int session, struct fp_diag *diag)
{
	return fp__prof_scope_exit_feature(session, &fp__prof_feature_comm, diag);
}
