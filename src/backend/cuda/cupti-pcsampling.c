/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PC sampling for the CUPTI backend: the driver of CUPTI's PC-sampling API (enable on a context,
 * read the stall reasons, configure, drain with GetData, disable) and the aggregator that turns
 * PC records into per-line sample counts delivered through the session's sink
 * (include/flagprism/sink.h: pc_sample(); the profiler makes the tree's nodes). A record says (cubin CRC, function name, PC offset, samples
 * per stall reason; the launch's correlation id only in serialized mode, which collected nothing
 * on the H200 with CUDA 13.0, so continuous mode is the default); the aggregator counts per
 * (launch, cubin, function, PC, reason) while sampling runs, and when filing maps each PC to its
 * source line through the cubin's line table (src/ir/cubin-lines-internal.h) and files the counts
 * under the launch's kernel node, or, without a correlation id, under the nodes whose launches
 * ran the function (split by their GPU time), one child per line. Samples that have no line, no
 * known cubin or no launch go to nodes named for that, and are counted; nothing is dropped
 * without a count. Not here: which node a launch has (cupti.c), the Python side that hands
 * cubins over.
 */
#include "fp-setup.h"

#include <dlfcn.h>
#include <pthread.h>

#include <flagprism/cupti-pcsampling.h>
#include <flagprism/sink.h>
#if defined(__has_include)
#if __has_include(<flagprism/cupti-metrics.h>)
#include <flagprism/cupti-metrics.h>
#endif
#endif

#include "backend/cuda/cupti-internal.h" /* fp__cupti_sink */
#include "backend/cuda/cupti-pcs-internal.h"
#include "ir/cubin-lines-internal.h"

#define NO_SLOT UINT32_MAX
#define FRAME_MAX 1024

struct reason {
	uint32_t index;   /* CUPTI's */
	char metric[160]; /* "stalled_<short>" */
	bool not_issued;  /* the *_not_issued twin: latency view, not added to num_samples */
	bool selected;    /* "selected": the warp issued, not a stall */
};

struct entry {
	uint64_t crc, pc, count;
	uint32_t corr, func, slot; /* func: fp_prof name id */
	bool used;
};

struct cubin {
	uint64_t crc;
	struct fp_cubin_lines *lines; /* NULL: unreadable, samples go to "<no line info>" */
};

/* GPU time of one function's launches under one kernel node (continuous mode's attribution) */
struct share {
	uint32_t func, node;
	uint64_t ns;
	bool used;
};

struct fp__pcs {
	struct reason *reasons;
	size_t nreasons;
	struct entry *e;
	size_t cap, n, max; /* cap: power of two, n <= cap / 2 */
	struct share *sh;   /* open addressing on (func, node) */
	size_t shcap, nsh;
	struct cubin *cubins;
	size_t ncubins, capcubins;
	struct fp__pcs_stats st;
	const struct fp_sink *sink; /* names */
};

/* ---- reasons --------------------------------------------------------------------------------- */

struct fp__pcs *fp__pcs_new(size_t max_entries, const struct fp_sink *sink)
{
	struct fp__pcs *p;

	if (!sink)
		return NULL;
	p = fp_calloc(1, sizeof(*p));
	if (p) {
		p->max = max_entries ? max_entries : FP__PCS_DEFAULT_MAX_ENTRIES;
		p->sink = sink;
	}
	return p;
}

void fp__pcs_free(struct fp__pcs *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ncubins; i++)
		fp_cubin_lines_free(p->cubins[i].lines);
	fp_free(p->cubins);
	fp_free(p->e);
	fp_free(p->sh);
	fp_free(p->reasons);
	fp_free(p);
}

int fp__pcs_set_reasons(struct fp__pcs *p, size_t n, const uint32_t *index,
			const char *const *names)
{
	struct reason *r;
	size_t i, plen = strlen(FP__PCS_REASON_PREFIX);

	if (!p || !n || n > FP__PCS_MAX_REASONS || !index || !names)
		return FP_EINVAL;
	for (i = 0; i < n; i++)
		if (!names[i])
			return FP_EINVAL;
	r = fp_calloc(n, sizeof(*r));
	if (!r)
		return FP_ENOMEM;
	for (i = 0; i < n; i++) {
		const char *s = names[i];
		size_t len = strnlen(s, FP__CUPTI_STALL_REASON_STRING_SIZE), k, o;

		if (len > plen && strncmp(s, FP__PCS_REASON_PREFIX, plen) == 0) {
			s += plen;
			len -= plen;
		}
		o = (size_t)snprintf(r[i].metric, sizeof(r[i].metric), "stalled_");
		/* metric names stay plain: [A-Za-z0-9_] */
		for (k = 0; k < len && o + 1 < sizeof(r[i].metric); k++) {
			char c = s[k];
			bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				  (c >= '0' && c <= '9') || c == '_';

			r[i].metric[o++] = ok ? c : '_';
		}
		r[i].metric[o] = '\0';
		r[i].index = index[i];
		r[i].not_issued = len >= 11 && memcmp(s + len - 11, "_not_issued", 11) == 0;
		r[i].selected = len == 8 && memcmp(s, "selected", 8) == 0;
	}
	fp_free(p->reasons);
	p->reasons = r;
	p->nreasons = n;
	return FP_OK;
}

size_t fp__pcs_reason_count(const struct fp__pcs *p)
{
	return p ? p->nreasons : 0;
}

const char *fp__pcs_reason_metric(const struct fp__pcs *p, size_t i)
{
	return p && i < p->nreasons ? p->reasons[i].metric : NULL;
}

static uint32_t reason_slot(const struct fp__pcs *p, uint32_t index)
{
	size_t i;

	/* CUPTI's indexes are usually 0..n-1 in order: try that first */
	if (index < p->nreasons && p->reasons[index].index == index)
		return index;
	for (i = 0; i < p->nreasons; i++)
		if (p->reasons[i].index == index)
			return (uint32_t)i;
	return NO_SLOT;
}

/* ---- cubins ---------------------------------------------------------------------------------- */

static const struct cubin *find_cubin(const struct fp__pcs *p, uint64_t crc)
{
	size_t i;

	for (i = 0; i < p->ncubins; i++)
		if (p->cubins[i].crc == crc)
			return &p->cubins[i];
	return NULL;
}

bool fp__pcs_has_cubin(const struct fp__pcs *p, uint64_t crc)
{
	return p && find_cubin(p, crc) != NULL;
}

int fp__pcs_add_cubin(struct fp__pcs *p, uint64_t crc, const void *cubin, size_t size,
		      struct fp_diag *diag)
{
	struct fp_cubin_lines *cl = NULL;
	int rc;

	if (!p || !cubin)
		return fp_diag_set(diag, FP_EINVAL, 0, "pc sampling: no cubin");
	if (find_cubin(p, crc))
		return FP_OK;
	if (p->ncubins >= FP__PCS_MAX_CUBINS)
		return fp_diag_set(diag, FP_ELIMIT, 0, "pc sampling: more than %u cubins",
				   FP__PCS_MAX_CUBINS);
	if (p->ncubins == p->capcubins) {
		size_t n = p->capcubins ? p->capcubins * 2 : 16;
		struct cubin *c = fp_reallocarray(p->cubins, n, sizeof(*c));

		if (!c)
			return fp_diag_set(diag, FP_ENOMEM, 0, "pc sampling: cubin table");
		p->cubins = c;
		p->capcubins = n;
	}
	rc = fp_cubin_lines_parse(cubin, size, &cl, diag);
	if (rc == FP_ENOMEM)
		return rc;
	/* an unreadable line table still registers the CRC: its samples say "<no line info>" */
	p->cubins[p->ncubins].crc = crc;
	p->cubins[p->ncubins].lines = rc ? NULL : cl;
	p->ncubins++;
	return rc;
}

/* ---- counting -------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t key_hash(const struct entry *k)
{
	return mix(k->crc ^ mix(k->pc ^ mix(((uint64_t)k->corr << 32 | k->func) ^
					    mix((uint64_t)k->slot + 1))));
}

static bool same_key(const struct entry *a, const struct entry *b)
{
	return a->crc == b->crc && a->pc == b->pc && a->corr == b->corr && a->func == b->func &&
	       a->slot == b->slot;
}

static struct entry *slot_of(struct entry *e, size_t cap, const struct entry *k)
{
	size_t i = (size_t)key_hash(k) & (cap - 1);

	while (e[i].used && !same_key(&e[i], k))
		i = (i + 1) & (cap - 1);
	return &e[i];
}

static int grow_table(struct fp__pcs *p)
{
	size_t cap = p->cap ? p->cap * 2 : 1024, i;
	struct entry *e;

	e = fp_calloc(cap, sizeof(*e));
	if (!e)
		return FP_ENOMEM;
	for (i = 0; i < p->cap; i++)
		if (p->e[i].used)
			*slot_of(e, cap, &p->e[i]) = p->e[i];
	fp_free(p->e);
	p->e = e;
	p->cap = cap;
	return FP_OK;
}

/* false: not kept (table full or out of memory) */
static bool count(struct fp__pcs *p, const struct entry *k, uint64_t n)
{
	struct entry *e;

	if (p->cap) {
		e = slot_of(p->e, p->cap, k);
		if (e->used) {
			e->count += n;
			return true;
		}
	}
	if (p->n >= p->max)
		return false;
	if ((p->n + 1) * 2 > p->cap && grow_table(p))
		return false;
	e = slot_of(p->e, p->cap, k);
	*e = *k;
	e->used = true;
	e->count = n;
	p->n++;
	return true;
}

static void add_pc(struct fp__pcs *p, const struct fp__cupti_pcs_pc *pc)
{
	struct entry k;
	size_t i;

	p->st.pc_records++;
	if (!pc->functionName || (pc->stallReasonCount && !pc->stallReason)) {
		p->st.bad_records++;
		return;
	}
	memset(&k, 0, sizeof(k));
	/* functionName is CUPTI's, shared between records and never freed here (the header makes
	 * the client free each distinct name once at the end; a few bytes per kernel) */
	if (p->sink->name_intern(pc->functionName, strnlen(pc->functionName, 4096), &k.func)) {
		p->st.bad_records++;
		return;
	}
	k.crc = pc->cubinCrc;
	k.pc = pc->pcOffset;
	k.corr = pc->correlationId;
	for (i = 0; i < pc->stallReasonCount; i++) {
		const struct fp__cupti_pcs_stall *s = &pc->stallReason[i];
		uint32_t slot;

		if (!s->samples)
			continue;
		slot = reason_slot(p, s->pcSamplingStallReasonIndex);
		if (slot == NO_SLOT) {
			p->st.bad_records++;
			continue;
		}
		k.slot = slot;
		if (!count(p, &k, s->samples)) {
			if (!p->reasons[slot].not_issued)
				p->st.table_full += s->samples;
			continue;
		}
		if (!p->reasons[slot].not_issued)
			p->st.samples += s->samples;
	}
}

int fp__pcs_add_data(struct fp__pcs *p, const struct fp__cupti_pcs_data *d)
{
	size_t i;

	if (!p || !d || !p->nreasons)
		return FP_EINVAL;
	if (d->totalNumPcs && !d->pPcData)
		return FP_EFORMAT;
	p->st.total_samples += d->totalSamples;
	p->st.dropped_samples += d->droppedSamples;
	p->st.nonuser_samples += d->nonUsrKernelsTotalSamples;
	if (d->hardwareBufferFull)
		p->st.hw_buffer_full++;
	for (i = 0; i < d->totalNumPcs && i < d->collectNumPcs; i++)
		add_pc(p, &d->pPcData[i]);
	return FP_OK;
}

void fp__pcs_get_stats(const struct fp__pcs *p, struct fp__pcs_stats *out)
{
	if (p && out)
		*out = p->st;
}

/* ---- launches of a function (continuous mode) ------------------------------------------------ */

static struct share *share_slot(struct share *t, size_t cap, uint32_t func, uint32_t node)
{
	size_t i = (size_t)mix((uint64_t)func << 32 | node) & (cap - 1);

	while (t[i].used && (t[i].func != func || t[i].node != node))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

int fp__pcs_note_kernel(struct fp__pcs *p, uint32_t func, uint32_t node, uint64_t ns)
{
	struct share *e;

	if (!p || node == FP_SINK_NO_NODE)
		return FP_EINVAL;
	if (!ns)
		ns = 1; /* an untimed launch still counts */
	if (p->shcap) {
		e = share_slot(p->sh, p->shcap, func, node);
		if (e->used) {
			e->ns += ns;
			return FP_OK;
		}
	}
	if (p->nsh >= FP__PCS_MAX_KERNEL_NODES) {
		p->st.kernels_unnoted++;
		return FP_ELIMIT;
	}
	if ((p->nsh + 1) * 2 > p->shcap) {
		size_t cap = p->shcap ? p->shcap * 2 : 256, i;
		struct share *t = fp_calloc(cap, sizeof(*t));

		if (!t) {
			p->st.kernels_unnoted++;
			return FP_ENOMEM;
		}
		for (i = 0; i < p->shcap; i++)
			if (p->sh[i].used)
				*share_slot(t, cap, p->sh[i].func, p->sh[i].node) = p->sh[i];
		fp_free(p->sh);
		p->sh = t;
		p->shcap = cap;
	}
	e = share_slot(p->sh, p->shcap, func, node);
	e->used = true;
	e->func = func;
	e->node = node;
	e->ns = ns;
	p->nsh++;
	return FP_OK;
}

static int share_cmp(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1; /* the largest first */
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The used shares sorted by function (NULL with *n 0 when none or out of memory). */
static struct share *sorted_shares(const struct fp__pcs *p, size_t *n)
{
	struct share *a;
	size_t i, k = 0;

	*n = 0;
	if (!p->nsh || !(a = fp_calloc(p->nsh, sizeof(*a))))
		return NULL;
	for (i = 0; i < p->shcap; i++)
		if (p->sh[i].used)
			a[k++] = p->sh[i];
	qsort(a, k, sizeof(*a), share_cmp);
	*n = k;
	return a;
}

/* The first share of `func` in the sorted array and how many it has (at most FP__PCS_MAX_SPLIT). */
static const struct share *shares_of(const struct share *a, size_t n, uint32_t func, size_t *count)
{
	size_t lo = 0, hi = n, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid].func < func)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; lo + k < n && a[lo + k].func == func && k < FP__PCS_MAX_SPLIT; k++)
		;
	*count = k;
	return k ? &a[lo] : NULL;
}

/* ---- attribution ----------------------------------------------------------------------------- */

/* The place (line child of the kernel's node) of entry `e`, and the counter of that kind. */
static const char *place_of(struct fp__pcs *p, const struct entry *e, char *name, size_t size,
			    uint64_t **bucket)
{
	const struct cubin *c = find_cubin(p, e->crc);
	const char *fn = p->sink->name_str(e->func, NULL);
	struct fp_cubin_loc loc;

	if (!c) {
		*bucket = &p->st.no_cubin;
		return FP__PCS_NO_CUBIN;
	}
	if (!c->lines || !fn || fp_cubin_lines_lookup(c->lines, fn, e->pc, &loc) || !loc.line) {
		*bucket = &p->st.no_line;
		return FP__PCS_NO_LINE;
	}
	*bucket = &p->st.on_lines;
	if (loc.dir[0] && loc.file[0] != '/')
		snprintf(name, size, "%s/%s:%" PRIu32, loc.dir, loc.file, loc.line);
	else
		snprintf(name, size, "%s:%" PRIu32, loc.file, loc.line);
	return name;
}

/* `n` samples of entry `e` on its line under `kernel` (FP_SINK_NO_NODE: no launch). */
static int file_at(struct fp__pcs *p, struct fp_sink_session *s, uint32_t kernel,
		   const struct entry *e, double n, uint64_t **bucket)
{
	const struct reason *r = &p->reasons[e->slot];
	struct fp_sink_pc_sample v;
	char name[FRAME_MAX];
	const char *fn = p->sink->name_str(e->func, NULL);

	memset(&v, 0, sizeof(v));
	v.node = kernel;
	v.function = fn ? fn : "<unknown function>";
	v.place = place_of(p, e, name, sizeof(name), bucket);
	v.reason = r->metric;
	v.samples = n;
	v.flags = (r->not_issued ? FP_SINK_PC_LATENCY : 0) | (r->selected ? FP_SINK_PC_ISSUED : 0);
	return s->sink->pc_sample(s, &v);
}

/*
 * One counter into the tree. With a correlation id (serialized mode) under that launch's node;
 * without one (continuous mode) split among the nodes whose launches ran the function, in
 * proportion to their GPU time; else under FP__PCS_NO_LAUNCH.
 */
static int file_entry(struct fp__pcs *p, struct fp_sink_session *s, const struct entry *e,
		      fp__pcs_node_fn node_fn, void *arg, const struct share *shares,
		      size_t nshares)
{
	const struct share *sh = NULL;
	uint64_t *bucket = NULL, total = 0;
	uint32_t kernel;
	size_t nsh = 0, k;
	bool launched;
	int rc = FP_OK;

	if (!e->corr)
		sh = shares_of(shares, nshares, e->func, &nsh);
	if (nsh) {
		launched = true;
		for (k = 0; k < nsh; k++)
			total += sh[k].ns;
		for (k = 0; !rc && k < nsh; k++)
			rc = file_at(p, s, sh[k].node, e,
				     (double)e->count * ((double)sh[k].ns / (double)total),
				     &bucket);
	} else {
		kernel = node_fn && e->corr ? node_fn(arg, e->corr) : FP_SINK_NO_NODE;
		launched = kernel != FP_SINK_NO_NODE;
		rc = file_at(p, s, kernel, e, (double)e->count, &bucket);
	}
	if (!rc && !p->reasons[e->slot].not_issued) {
		*bucket += e->count;
		if (!launched)
			p->st.no_launch += e->count;
	}
	return rc;
}

int fp__pcs_attribute(struct fp__pcs *p, struct fp_sink_session *s, fp__pcs_node_fn node_fn,
		      void *arg)
{
	const char **names;
	struct share *shares;
	size_t i, nshares;
	int rc = FP_OK, first = FP_OK;

	if (!p || !s)
		return FP_EINVAL;
	if (!p->n)
		return FP_OK;
	names = fp_calloc(p->nreasons ? p->nreasons : 1, sizeof(*names));
	if (!names)
		return FP_ENOMEM;
	/* out of memory here: continuous-mode samples go to FP__PCS_NO_LAUNCH, counted */
	shares = sorted_shares(p, &nshares);
	for (i = 0; i < p->nreasons; i++)
		names[i] = p->reasons[i].metric;
	rc = s->sink->pc_reasons(s, names, p->nreasons);
	for (i = 0; !rc && i < p->cap; i++) {
		struct entry *e = &p->e[i];
		int erc;

		if (!e->used)
			continue;
		erc = file_entry(p, s, e, node_fn, arg, shares, nshares);
		if (erc) {
			if (!p->reasons[e->slot].not_issued)
				p->st.unfiled += e->count;
			if (!first)
				first = erc;
		}
	}
	if (!rc) {
		memset(p->e, 0, p->cap * sizeof(*p->e));
		p->n = 0;
	}
	fp_free(shares);
	fp_free(names);
	return rc ? rc : first;
}

/* ---- the CUPTI driver ------------------------------------------------------------------------ */

int fp__pcs_bind(void *lib, struct fp__pcs_fns *f, struct fp_diag *diag)
{
	void *p;

	memset(f, 0, sizeof(*f));
	if (!lib)
		return fp_diag_set(diag, FP_ENOTSUP, 0, "pc sampling: no libcupti loaded");
	/* ISO C has no void* -> function pointer conversion; POSIX guarantees the bytes match. */
#define X(req, name, params)                                                                   \
	dlerror();                                                                             \
	p = dlsym(lib, #name);                                                                 \
	if (!p && (req))                                                                       \
		return fp_diag_set(diag, FP_ENOTSUP, 0,                                        \
				   "pc sampling: the loaded libcupti has no %s (CUDA 11.3 or " \
				   "later is needed)",                                         \
				   #name);                                                     \
	memcpy(&f->name, &p, sizeof(p));
	FP__CUPTI_PCS_FUNCS(X)
#undef X
	dlerror();
	p = dlsym(lib, "cuptiGetResultString");
	memcpy(&f->result_string, &p, sizeof(p));
	return FP_OK;
}

static const char *result_text(const struct fp__pcs_fns *f, int rc)
{
	const char *s = NULL;

	if (f->result_string && f->result_string(rc, &s) == FP__CUPTI_SUCCESS && s)
		return s;
	return "CUPTI error";
}

static int vendor_error(const struct fp__pcs_fns *f, struct fp_diag *diag, const char *call, int rc)
{
	if (rc == FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		return fp_diag_set(
			diag, FP_ENOTSUP, 0,
			"pc sampling: %s: no access to GPU performance counters. Run as root or "
			"with CAP_PERFMON, or set the nvidia module option "
			"NVreg_RestrictProfilingToAdminUsers=0 (see `flagprism doctor`)",
			call);
	if (rc == FP__CUPTI_ERROR_NOT_SUPPORTED || rc == 33 /* virtualized */ || rc == 43 /* MIG */)
		return fp_diag_set(diag, FP_ENOTSUP, 0,
				   "pc sampling: %s: not supported on this device or setup: %s "
				   "(error %d)",
				   call, result_text(f, rc), rc);
	if (rc == 29 /* CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED */ ||
	    rc == 40 /* CUPTI_ERROR_PROFILING_API_INITIALIZED ... */)
		return fp_diag_set(diag, FP_EBUSY, 0,
				   "pc sampling: %s: another profiling session holds this context "
				   "(%s, error %d); only one can sample a GPU context at a time",
				   call, result_text(f, rc), rc);
	return fp_diag_set(diag, FP_EVENDOR, 0, "pc sampling: %s failed: %s (error %d)", call,
			   result_text(f, rc), rc);
}

static int num_reasons(struct fp__pcs_session *ps, struct fp_diag *diag)
{
	struct fp__cupti_pcs_num_stall_params np;
	size_t n = 0;
	int rc;

	memset(&np, 0, sizeof(np));
	np.size = FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_num_stall_params, numStallReasons);
	np.ctx = ps->ctx;
	np.numStallReasons = &n;
	rc = ps->f.cuptiPCSamplingGetNumStallReasons(&np);
	ps->calls.num_reasons = rc;
	if (rc)
		return vendor_error(&ps->f, diag, "cuptiPCSamplingGetNumStallReasons", rc);
	if (!n || n > FP__PCS_MAX_REASONS)
		return fp_diag_set(
			diag, FP_EVENDOR, 0,
			"pc sampling: CUPTI reports %zu stall reasons (1 to %u expected)", n,
			FP__PCS_MAX_REASONS);
	ps->nreasons = n;
	return FP_OK;
}

/* Every stall reason, the collection mode, parsed output into our buffer, the period. */
static int configure(struct fp__pcs_session *ps, uint32_t *idx, struct fp_diag *diag)
{
	struct fp__cupti_pcs_config_info a[5];
	struct fp__cupti_pcs_config_params cp;
	size_t na = 0, k;
	int rc, bad = 0;

	memset(a, 0, sizeof(a));
	a[na].attributeType = FP__CUPTI_PCS_ATTR_STALL_REASON;
	a[na].attributeData.stallReason.stallReasonCount = ps->nreasons;
	a[na++].attributeData.stallReason.pStallReasonIndex = idx;
	a[na].attributeType = FP__CUPTI_PCS_ATTR_COLLECTION_MODE;
	a[na++].attributeData.collectionMode = ps->cfg.serialized ?
						       FP__CUPTI_PCS_MODE_KERNEL_SERIALIZED :
						       FP__CUPTI_PCS_MODE_CONTINUOUS;
	a[na].attributeType = FP__CUPTI_PCS_ATTR_OUTPUT_DATA_FORMAT;
	a[na++].attributeData.outputDataFormat = FP__CUPTI_PCS_OUTPUT_PARSED;
	a[na].attributeType = FP__CUPTI_PCS_ATTR_SAMPLING_DATA_BUFFER;
	a[na++].attributeData.samplingDataBuffer = &ps->data;
	if (ps->cfg.sampling_period) {
		a[na].attributeType = FP__CUPTI_PCS_ATTR_SAMPLING_PERIOD;
		a[na++].attributeData.samplingPeriod = ps->cfg.sampling_period;
	}
	memset(&cp, 0, sizeof(cp));
	cp.size = FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_config_params,
				     pPCSamplingConfigurationInfo);
	cp.ctx = ps->ctx;
	cp.numAttributes = na;
	cp.pPCSamplingConfigurationInfo = a;
	rc = ps->f.cuptiPCSamplingSetConfigurationAttribute(&cp);
	ps->calls.config = rc;
	for (k = 0; k < na; k++)
		if (a[k].attributeStatus && !ps->calls.config_attr) {
			ps->calls.config_attr = a[k].attributeType;
			ps->calls.config_attr_status = a[k].attributeStatus;
		}
	if (!rc)
		return FP_OK;
	bad = ps->calls.config_attr;
	return vendor_error(&ps->f, diag,
			    bad == FP__CUPTI_PCS_ATTR_SAMPLING_PERIOD ?
				    "cuptiPCSamplingSetConfigurationAttribute (sampling period)" :
				    "cuptiPCSamplingSetConfigurationAttribute",
			    rc);
}

/* The reasons' indexes and names into the aggregator, then the configuration. */
static int reasons_and_config(struct fp__pcs_session *ps, struct fp_diag *diag)
{
	struct fp__cupti_pcs_stall_params sp;
	size_t n = ps->nreasons, i;
	uint32_t *idx;
	char **names, *text;
	int rc;

	idx = fp_calloc(n, sizeof(*idx));
	names = fp_calloc(n, sizeof(*names));
	text = fp_calloc(n, FP__CUPTI_STALL_REASON_STRING_SIZE);
	if (!idx || !names || !text) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "pc sampling: stall reasons");
		goto out;
	}
	for (i = 0; i < n; i++)
		names[i] = text + i * FP__CUPTI_STALL_REASON_STRING_SIZE;
	memset(&sp, 0, sizeof(sp));
	sp.size = FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_stall_params, stallReasons);
	sp.ctx = ps->ctx;
	sp.numStallReasons = n;
	sp.stallReasonIndex = idx;
	sp.stallReasons = names;
	rc = ps->f.cuptiPCSamplingGetStallReasons(&sp);
	ps->calls.reasons = rc;
	if (rc) {
		rc = vendor_error(&ps->f, diag, "cuptiPCSamplingGetStallReasons", rc);
		goto out;
	}
	for (i = 0; i < n; i++)
		names[i][FP__CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
	rc = fp__pcs_set_reasons(ps->agg, n, idx, (const char *const *)names);
	if (rc) {
		rc = fp_diag_set(diag, rc, 0, "pc sampling: stall reason table");
		goto out;
	}
	rc = configure(ps, idx, diag);
out:
	fp_free(text);
	fp_free(names);
	fp_free(idx);
	return rc;
}

static int alloc_buffers(struct fp__pcs_session *ps, struct fp_diag *diag)
{
	size_t n = ps->cfg.collect_pcs, i;

	ps->pcs = fp_calloc(n, sizeof(*ps->pcs));
	ps->stalls = fp_calloc(n * ps->nreasons, sizeof(*ps->stalls));
	if (!ps->pcs || !ps->stalls)
		return fp_diag_set(diag, FP_ENOMEM, 0,
				   "pc sampling: buffers for %zu PCs x %zu stall reasons", n,
				   ps->nreasons);
	for (i = 0; i < n; i++) {
		ps->pcs[i].size = sizeof(ps->pcs[i]);
		ps->pcs[i].stallReason = ps->stalls + i * ps->nreasons;
	}
	memset(&ps->data, 0, sizeof(ps->data));
	ps->data.size = sizeof(ps->data);
	ps->data.collectNumPcs = n;
	ps->data.pPcData = ps->pcs;
	return FP_OK;
}

int fp__pcs_session_start(struct fp__pcs_session *ps, const struct fp__pcs_fns *f,
			  const struct fp_sink *sink, fp__cu_context ctx,
			  const struct fp__pcs_config *cfg, struct fp_diag *diag)
{
	struct fp__cupti_pcs_ctx_params ep;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->calls.enable = ps->calls.num_reasons = ps->calls.reasons = FP__PCS_NOT_CALLED;
	ps->calls.config = ps->calls.disable = ps->calls.last_getdata = FP__PCS_NOT_CALLED;
	ps->f = *f;
	ps->ctx = ctx;
	if (cfg)
		ps->cfg = *cfg;
	if (!ps->cfg.collect_pcs)
		ps->cfg.collect_pcs = FP__PCS_DEFAULT_COLLECT_PCS;
	if (ps->cfg.sampling_period &&
	    (ps->cfg.sampling_period < 5 || ps->cfg.sampling_period > 31))
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "pc sampling: sampling period %" PRIu32
				   " is not 5 to 31 (2^N cycles)",
				   ps->cfg.sampling_period);
	ps->agg = fp__pcs_new(ps->cfg.max_entries, sink);
	if (!ps->agg)
		return fp_diag_set(diag, FP_ENOMEM, 0, "pc sampling: aggregator");
	memset(&ep, 0, sizeof(ep));
	ep.size = FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_ctx_params, ctx);
	ep.ctx = ctx;
	/* Enable comes first: CUPTI answers the stall-reason queries only after it. */
	rc = ps->f.cuptiPCSamplingEnable(&ep);
	ps->calls.enable = rc;
	if (rc) {
		rc = vendor_error(&ps->f, diag, "cuptiPCSamplingEnable", rc);
		goto fail_enable;
	}
	ps->enabled = true;
	rc = num_reasons(ps, diag);
	if (rc)
		goto fail_config;
	rc = alloc_buffers(ps, diag);
	if (!rc)
		rc = reasons_and_config(ps, diag);
	if (rc)
		goto fail_config;
	return FP_OK;

fail_config:
	ps->f.cuptiPCSamplingDisable(&ep);
	ps->enabled = false;
fail_enable:
	fp__pcs_session_release(ps);
	return rc;
}

int fp__pcs_session_drain(struct fp__pcs_session *ps)
{
	struct fp__cupti_pcs_get_data_params gp;
	unsigned rounds = 0;
	int rc;

	if (!ps->enabled)
		return FP_OK;
	do {
		ps->data.totalNumPcs = 0;
		ps->data.remainingNumPcs = 0;
		ps->data.totalSamples = ps->data.droppedSamples = 0;
		ps->data.nonUsrKernelsTotalSamples = 0;
		ps->data.hardwareBufferFull = 0;
		memset(&gp, 0, sizeof(gp));
		gp.size = FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_get_data_params, pcSamplingData);
		gp.ctx = ps->ctx;
		gp.pcSamplingData = &ps->data;
		rc = ps->f.cuptiPCSamplingGetData(&gp);
		ps->calls.getdata++;
		ps->calls.last_getdata = rc;
		if (rc && rc != FP__CUPTI_ERROR_OUT_OF_MEMORY) {
			ps->calls.getdata_errors++;
			return FP_EVENDOR;
		}
		if (ps->data.totalNumPcs)
			ps->calls.getdata_records++;
		if (ps->data.remainingNumPcs > ps->calls.max_remaining)
			ps->calls.max_remaining = ps->data.remainingNumPcs;
		if (rc == FP__CUPTI_ERROR_OUT_OF_MEMORY)
			ps->data.hardwareBufferFull = 1;
		fp__pcs_add_data(ps->agg, &ps->data);
		ps->agg->st.drains++;
	} while (ps->data.remainingNumPcs && ++rounds < 1u << 20);
	return FP_OK;
}

int fp__pcs_session_stop(struct fp__pcs_session *ps)
{
	struct fp__cupti_pcs_ctx_params ep;
	int rc, rc2;

	if (!ps->enabled)
		return FP_OK;
	rc = fp__pcs_session_drain(ps);
	memset(&ep, 0, sizeof(ep));
	ep.size = FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_ctx_params, ctx);
	ep.ctx = ps->ctx;
	ps->data.totalNumPcs = ps->data.remainingNumPcs = 0;
	ps->data.totalSamples = ps->data.droppedSamples = 0;
	ps->data.nonUsrKernelsTotalSamples = 0;
	ps->data.hardwareBufferFull = 0;
	rc2 = ps->f.cuptiPCSamplingDisable(&ep);
	ps->calls.disable = rc2;
	ps->enabled = false;
	/* Disable copies the PCs (and totals) still inside CUPTI into our buffer, the rest is lost */
	if (!rc2) {
		if (ps->data.totalNumPcs)
			ps->calls.getdata_records++;
		if (ps->data.remainingNumPcs > ps->calls.max_remaining)
			ps->calls.max_remaining = ps->data.remainingNumPcs;
		fp__pcs_add_data(ps->agg, &ps->data);
	}
	fp_free(ps->stalls);
	fp_free(ps->pcs);
	ps->stalls = NULL;
	ps->pcs = NULL;
	return rc ? rc : rc2 ? FP_EVENDOR : FP_OK;
}

void fp__pcs_session_release(struct fp__pcs_session *ps)
{
	if (!ps)
		return;
	if (ps->enabled)
		fp__pcs_session_stop(ps);
	fp_free(ps->stalls);
	fp_free(ps->pcs);
	fp__pcs_free(ps->agg);
	ps->stalls = NULL;
	ps->pcs = NULL;
	ps->agg = NULL;
}

/* ---- the backend's "pcsampling" mode --------------------------------------------------------- */

#define MAX_PENDING_CUBINS 1024u
#define MAX_LAUNCHES ((size_t)1 << 22)

struct pending {
	uint8_t *bytes;
	size_t size;
};

struct launch_slot {
	uint32_t corr; /* 0: empty */
	uint32_t node;
};

/* Everything below is guarded by `plock`; `fp__cupti_pcs_on` is read without it. */
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
atomic_bool fp__cupti_pcs_on;
static struct {
	bool requested;
	struct fp__pcs_config req;
	struct fp_sink_session *sess; /* the session sampling, or NULL */
	struct fp__pcs_session ps;
	struct pending pend[MAX_PENDING_CUBINS]; /* cubins waiting for a CRC */
	size_t npend;
	struct launch_slot *launches; /* correlation id -> kernel node, open addressing */
	size_t lcap, nlaunch;
	uint64_t launches_lost, cubins, cubins_unreadable, filed_lost;
	uint64_t last_drain_ns, drains, noted; /* noted: kernel records (continuous mode) */
	struct fp_cupti_pcsampling_stats last;
} pc;

int fp_cupti_pcsampling_request(const struct fp_cupti_pcsampling_options *opt, struct fp_diag *diag)
{
	struct fp__pcs_config c;

	memset(&c, 0, sizeof(c));
	if (opt) {
		if (opt->sampling_period && (opt->sampling_period < 5 || opt->sampling_period > 31))
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "pc sampling: sampling period %" PRIu32
					   " is not 5 to 31 (samples every 2^N cycles)",
					   opt->sampling_period);
		c.sampling_period = opt->sampling_period;
		c.serialized = opt->serialized;
	}
	pthread_mutex_lock(&plock);
	pc.requested = true;
	pc.req = c;
	pthread_mutex_unlock(&plock);
	return FP_OK;
}

void fp_cupti_pcsampling_cancel(void)
{
	pthread_mutex_lock(&plock);
	pc.requested = false;
	pthread_mutex_unlock(&plock);
}

bool fp_cupti_pcsampling_active(void)
{
	return atomic_load(&fp__cupti_pcs_on);
}

/* plock held, sampling: the CRC through CUPTI, then the line table. */
static void register_cubin(const void *bytes, size_t size)
{
	struct fp__cupti_cubin_crc_params cp;

	memset(&cp, 0, sizeof(cp));
	cp.size = sizeof(cp);
	cp.cubin = bytes;
	cp.cubinSize = size;
	if (pc.ps.f.cuptiGetCubinCrc(&cp) != FP__CUPTI_SUCCESS) {
		pc.cubins_unreadable++;
		return;
	}
	if (fp__pcs_has_cubin(pc.ps.agg, cp.cubinCrc))
		return;
	pc.cubins++;
	if (fp__pcs_add_cubin(pc.ps.agg, cp.cubinCrc, bytes, size, NULL))
		pc.cubins_unreadable++;
}

int fp_cupti_pcsampling_add_cubin(const void *cubin, size_t size)
{
	int rc = FP_OK;

	if (!cubin || !size || size > FP_CUBIN_MAX_SIZE)
		return FP_EINVAL;
	pthread_mutex_lock(&plock);
	if (pc.sess) {
		register_cubin(cubin, size);
	} else if (pc.npend >= MAX_PENDING_CUBINS) {
		rc = FP_ELIMIT;
	} else {
		size_t i;

		for (i = 0; i < pc.npend; i++)
			if (pc.pend[i].size == size && memcmp(pc.pend[i].bytes, cubin, size) == 0)
				break;
		if (i == pc.npend) {
			pc.pend[i].bytes = fp_malloc(size);
			if (!pc.pend[i].bytes) {
				rc = FP_ENOMEM;
			} else {
				memcpy(pc.pend[i].bytes, cubin, size);
				pc.pend[i].size = size;
				pc.npend++;
			}
		}
	}
	pthread_mutex_unlock(&plock);
	return rc;
}

void fp__cupti_pcs_module(const void *resource_descriptor)
{
	const struct fp__cupti_module_data *m = resource_descriptor;

	if (!m || !m->pCubin || !m->cubinSize || !atomic_load(&fp__cupti_pcs_on))
		return;
	pthread_mutex_lock(&plock);
	if (pc.sess)
		register_cubin(m->pCubin, m->cubinSize);
	pthread_mutex_unlock(&plock);
}

/* plock held. */
static void launches_clear(void)
{
	fp_free(pc.launches);
	pc.launches = NULL;
	pc.lcap = pc.nlaunch = 0;
}

static struct launch_slot *launch_find(struct launch_slot *t, size_t cap, uint32_t corr)
{
	size_t i = (size_t)mix(corr) & (cap - 1);

	while (t[i].corr && t[i].corr != corr)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

void fp__cupti_pcs_note(struct fp_sink_session *s, uint32_t corr, uint32_t node, uint32_t kernel,
			uint64_t ns)
{
	struct launch_slot *e;

	if (node == FP_SINK_NO_NODE || !atomic_load(&fp__cupti_pcs_on))
		return;
	pthread_mutex_lock(&plock);
	if (s != pc.sess)
		goto out;
	if (!pc.ps.cfg.serialized) {
		/* continuous mode: records carry no correlation id, only the function */
		if (fp__pcs_note_kernel(pc.ps.agg, kernel, node, ns))
			pc.launches_lost++;
		else
			pc.noted++;
		goto out;
	}
	if (!corr)
		goto out;
	if ((pc.nlaunch + 1) * 2 > pc.lcap) {
		size_t cap = pc.lcap ? pc.lcap * 2 : 4096, i;
		struct launch_slot *t;

		if (pc.nlaunch >= MAX_LAUNCHES || !(t = fp_calloc(cap, sizeof(*t)))) {
			pc.launches_lost++;
			goto out;
		}
		for (i = 0; i < pc.lcap; i++)
			if (pc.launches[i].corr)
				*launch_find(t, cap, pc.launches[i].corr) = pc.launches[i];
		fp_free(pc.launches);
		pc.launches = t;
		pc.lcap = cap;
	}
	e = launch_find(pc.launches, pc.lcap, corr);
	if (!e->corr)
		pc.nlaunch++;
	e->corr = corr;
	e->node = node;
out:
	pthread_mutex_unlock(&plock);
}

static uint32_t node_of_launch(void *arg, uint32_t corr)
{
	const struct launch_slot *e;

	(void)arg;
	if (!pc.lcap)
		return FP_SINK_NO_NODE;
	e = launch_find(pc.launches, pc.lcap, corr);
	return e->corr ? e->node : FP_SINK_NO_NODE;
}

/*
 * CUPTI's worker threads decode the hardware buffer every 100 ms (WORKER_THREAD_PERIODIC_SLEEP_
 * SPAN) and GetData never waits for them: on the H200, GetData right after a kernel (even after
 * a context sync) returned nothing, 300 ms later it returned the kernel's PCs. Draining at every
 * launch would mostly find nothing; draining now and then keeps CUPTI's buffers from filling in
 * long runs. What is still inside CUPTI at the end comes with Disable.
 */
#define DRAIN_EVERY_NS 50000000ull

void fp__cupti_pcs_after_launch(void)
{
	uint64_t now = fp__cupti_sink->clock_ns();

	if (pthread_mutex_trylock(&plock))
		return; /* another thread drains or files: no need to wait */
	if (pc.sess && now - pc.last_drain_ns >= DRAIN_EVERY_NS) {
		pc.last_drain_ns = now;
		pc.drains++;
		fp__pcs_session_drain(&pc.ps);
	}
	pthread_mutex_unlock(&plock);
}

typedef int (*cu_get_current_fn)(fp__cu_context *ctx);
typedef int (*cu_primary_retain_fn)(fp__cu_context *ctx, int dev);
typedef int (*cu_set_current_fn)(fp__cu_context ctx);

/* The calling thread's CUDA context, else device 0's primary context made current. */
static int current_context(void *cuda, fp__cu_context *ctx, struct fp_diag *diag)
{
	cu_get_current_fn get = NULL;
	cu_primary_retain_fn retain = NULL;
	cu_set_current_fn set = NULL;
	void *p;

	*ctx = NULL;
	p = cuda ? dlsym(cuda, "cuCtxGetCurrent") : NULL;
	memcpy(&get, &p, sizeof(p));
	if (get && get(ctx) != 0)
		*ctx = NULL;
	if (*ctx)
		return FP_OK;
	p = cuda ? dlsym(cuda, "cuDevicePrimaryCtxRetain") : NULL;
	memcpy(&retain, &p, sizeof(p));
	p = cuda ? dlsym(cuda, "cuCtxSetCurrent") : NULL;
	memcpy(&set, &p, sizeof(p));
	if (!retain || !set || retain(ctx, 0) != 0 || !*ctx || set(*ctx) != 0)
		return fp_diag_set(
			diag, FP_ENOTSUP, 0,
			"pc sampling needs a CUDA context: none is current on this thread "
			"and device 0's primary context could not be made current");
	return FP_OK;
}

static bool metrics_active(void)
{
#if defined(__has_include)
#if __has_include(<flagprism/cupti-metrics.h>)
#define FP__PCS_HAVE_METRICS 1
#endif
#endif
#ifdef FP__PCS_HAVE_METRICS
	return fp_cupti_metrics_active();
#else
	return false;
#endif
}

int fp__cupti_pcs_start(struct fp_sink_session *s, void *lib, void *cuda, struct fp_diag *diag)
{
	struct fp__pcs_config cfg;
	struct fp__pcs_fns f;
	fp__cu_context ctx;
	size_t i;
	int rc;

	pthread_mutex_lock(&plock);
	if (!pc.requested) {
		/* metrics active while a session samples can only come from this start */
		rc = pc.sess && metrics_active() ?
			     fp_diag_set(
				     diag, FP_EBUSY, 0,
				     "hardware metrics cannot run while a PC-sampling session is "
				     "open (both need the GPU's profiling hardware)") :
			     FP_OK;
		pthread_mutex_unlock(&plock);
		return rc;
	}
	pc.requested = false;
	cfg = pc.req;
	if (pc.sess) {
		rc = fp_diag_set(diag, FP_EBUSY, 0,
				 "pc sampling: another session samples already; CUPTI samples one "
				 "context per GPU, one session at a time");
		goto out;
	}
	if (metrics_active()) {
		rc = fp_diag_set(
			diag, FP_EBUSY, 0,
			"pc sampling and hardware metrics cannot run in the same session or "
			"at the same time (both need the GPU's profiling hardware); profile "
			"them in separate runs");
		goto out;
	}
	rc = fp__pcs_bind(lib, &f, diag);
	if (!rc)
		rc = current_context(cuda, &ctx, diag);
	if (!rc)
		rc = fp__pcs_session_start(&pc.ps, &f, s->sink, ctx, &cfg, diag);
	if (rc)
		goto out;
	memset(&pc.last, 0, sizeof(pc.last));
	pc.sess = s;
	pc.cubins = pc.cubins_unreadable = pc.launches_lost = pc.filed_lost = 0;
	pc.drains = pc.noted = 0;
	pc.last_drain_ns = fp__cupti_sink->clock_ns();
	launches_clear();
	for (i = 0; i < pc.npend; i++) {
		register_cubin(pc.pend[i].bytes, pc.pend[i].size);
		fp_free(pc.pend[i].bytes);
	}
	pc.npend = 0;
	atomic_store(&fp__cupti_pcs_on, true);
out:
	pthread_mutex_unlock(&plock);
	return rc;
}

/* plock held: what CUPTI answered into `last`. */
static void keep_calls(void)
{
	const struct fp__pcs_calls *c = &pc.ps.calls;

	pc.last.enable_status = c->enable;
	pc.last.stall_reasons_status = c->num_reasons ? c->num_reasons : c->reasons;
	pc.last.config_status = c->config;
	pc.last.config_attribute = c->config_attr;
	pc.last.config_attribute_status = c->config_attr_status;
	pc.last.disable_status = c->disable;
	pc.last.last_getdata_status = c->last_getdata;
	pc.last.stall_reasons = (uint32_t)pc.ps.nreasons;
	pc.last.sampling_period = pc.ps.cfg.sampling_period;
	pc.last.serialized = pc.ps.cfg.serialized;
	pc.last.getdata_calls = c->getdata;
	pc.last.getdata_errors = c->getdata_errors;
	pc.last.getdata_records = c->getdata_records;
	pc.last.max_remaining_pcs = c->max_remaining;
}

/* plock held: the aggregator's and our counters into `last`. */
static void keep_stats(void)
{
	struct fp__pcs_stats s;

	memset(&s, 0, sizeof(s));
	if (pc.ps.agg)
		fp__pcs_get_stats(pc.ps.agg, &s);
	pc.last.active = pc.sess != NULL;
	pc.last.total_samples = s.total_samples;
	pc.last.dropped_samples = s.dropped_samples;
	pc.last.nonuser_samples = s.nonuser_samples;
	pc.last.samples = s.samples;
	pc.last.on_lines = s.on_lines;
	pc.last.no_line = s.no_line;
	pc.last.no_cubin = s.no_cubin;
	pc.last.no_launch = s.no_launch;
	pc.last.lost = s.table_full;
	pc.last.unfiled = s.unfiled;
	pc.last.bad_records = s.bad_records;
	pc.last.hw_buffer_full = s.hw_buffer_full;
	pc.last.cubins = pc.cubins;
	pc.last.cubins_unreadable = pc.cubins_unreadable;
	pc.last.launches = pc.ps.cfg.serialized ? pc.nlaunch : pc.noted;
	keep_calls();
	pc.last.drains = pc.drains;
}

/* plock held: file what was counted into s's tree through its sink, and say what was lost. */
static int file_samples(struct fp_sink_session *s)
{
	struct fp__pcs_stats before = {0}, after = {0};
	int rc;

	if (!s)
		return FP_EINVAL;
	fp__pcs_get_stats(pc.ps.agg, &before);
	rc = fp__pcs_attribute(pc.ps.agg, s, node_of_launch, NULL);
	fp__pcs_get_stats(pc.ps.agg, &after);
	if (after.unfiled > before.unfiled)
		s->sink->dropped(s, after.unfiled - before.unfiled,
				 "PC samples not filed into the tree (tree caps, memory)");
	keep_stats();
	return rc;
}

int fp__cupti_pcs_flush(struct fp_sink_session *s)
{
	int rc = FP_OK;

	pthread_mutex_lock(&plock);
	if (pc.sess && s == pc.sess) {
		pc.drains++;
		pc.last_drain_ns = fp__cupti_sink->clock_ns();
		rc = fp__pcs_session_drain(&pc.ps);
		if (!rc)
			rc = file_samples(s);
	}
	pthread_mutex_unlock(&plock);
	return rc;
}

static void meta_u64(struct fp_sink_session *s, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	s->sink->set_meta(s, key, buf);
}

void fp__cupti_pcs_stop(struct fp_sink_session *s)
{
	pthread_mutex_lock(&plock);
	if (!pc.sess || s != pc.sess) {
		pthread_mutex_unlock(&plock);
		return;
	}
	atomic_store(&fp__cupti_pcs_on, false);
	fp__pcs_session_stop(&pc.ps);
	file_samples(s);
	pc.last.active = false;
	/* The totals the metadata file keeps: dropped samples are never silent. */
	meta_u64(s, "pcsampling_total_samples", pc.last.total_samples);
	meta_u64(s, "pcsampling_dropped_samples", pc.last.dropped_samples);
	meta_u64(s, "pcsampling_nonuser_samples", pc.last.nonuser_samples);
	meta_u64(s, "pcsampling_samples", pc.last.samples);
	meta_u64(s, "pcsampling_samples_on_lines", pc.last.on_lines);
	meta_u64(s, "pcsampling_samples_no_line", pc.last.no_line);
	meta_u64(s, "pcsampling_samples_unknown_cubin", pc.last.no_cubin);
	meta_u64(s, "pcsampling_samples_no_launch", pc.last.no_launch);
	meta_u64(s, "pcsampling_samples_lost", pc.last.lost);
	meta_u64(s, "pcsampling_samples_unfiled", pc.last.unfiled);
	if (pc.last.lost)
		s->sink->dropped(s, pc.last.lost, "PC samples not counted (counter table full)");
	meta_u64(s, "pcsampling_hw_buffer_full", pc.last.hw_buffer_full);
	meta_u64(s, "pcsampling_cubins", pc.last.cubins);
	if (pc.last.dropped_samples)
		s->sink->dropped(s, pc.last.dropped_samples,
				 "PC samples dropped by the GPU (hardware buffer full)");
	fp__pcs_session_release(&pc.ps);
	launches_clear();
	pc.sess = NULL;
	pthread_mutex_unlock(&plock);
}

int fp_cupti_pcsampling_get_stats(struct fp_cupti_pcsampling_stats *out)
{
	if (!out)
		return FP_EINVAL;
	pthread_mutex_lock(&plock);
	if (pc.sess)
		keep_stats();
	*out = pc.last;
	pthread_mutex_unlock(&plock);
	return FP_OK;
}

void fp__cupti_pcs_reset(void)
{
	size_t i;

	pthread_mutex_lock(&plock);
	atomic_store(&fp__cupti_pcs_on, false);
	fp__pcs_session_release(&pc.ps);
	launches_clear();
	for (i = 0; i < pc.npend; i++)
		fp_free(pc.pend[i].bytes);
	memset(&pc, 0, sizeof(pc));
	pthread_mutex_unlock(&plock);
}
