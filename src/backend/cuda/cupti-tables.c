/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUPTI backend's fixed-size tables: correlation id -> launch (lock-free, written by the
 * launch callback on application threads), the launch-metadata ring (lock-free), the CUDA-graph
 * node table (a mutex: written only by resource callbacks during capture, instantiation and
 * destruction) and the activity-buffer pool (lock-free, used by CUPTI's buffer callbacks). All
 * memory is allocated by the init functions; the hot-path functions never allocate, lock or
 * format. They know nothing of CUPTI itself: cupti.c drives them. The sink every file of the
 * backend delivers through (fp__cupti_sink, set by cupti.c) is kept here too.
 */
#include "fp-setup.h"

#include "backend/cuda/cupti-internal.h"

_Static_assert(sizeof(struct fp_sink_metadata) % sizeof(uint64_t) == 0,
	       "the metadata ring copies fp_sink_metadata as 64-bit words");

const struct fp_sink *fp__cupti_sink;

static bool pow2(size_t n)
{
	return n >= 2 && (n & (n - 1)) == 0;
}

/* ---- correlation table ----------------------------------------------------------------------- */

int fp__cupti_corr_init(struct fp__cupti_corr *t, size_t nslots)
{
	size_t i;

	if (!t || !pow2(nslots))
		return FP_EINVAL;
	t->slots = fp_reallocarray(NULL, nslots, sizeof(*t->slots));
	if (!t->slots)
		return FP_ENOMEM;
	for (i = 0; i < nslots; i++) {
		atomic_init(&t->slots[i].key, 0);
		atomic_init(&t->slots[i].lctx, 0);
		atomic_init(&t->slots[i].callpath, 0);
		atomic_init(&t->slots[i].md, 0);
	}
	t->mask = nslots - 1;
	atomic_init(&t->collisions, 0);
	return FP_OK;
}

void fp__cupti_corr_release(struct fp__cupti_corr *t)
{
	if (!t)
		return;
	fp_free(t->slots);
	t->slots = NULL;
	t->mask = 0;
}

void fp__cupti_corr_clear(struct fp__cupti_corr *t)
{
	uint64_t i;

	if (!t || !t->slots)
		return;
	for (i = 0; i <= t->mask; i++)
		atomic_store_explicit(&t->slots[i].key, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

bool fp__cupti_corr_put(struct fp__cupti_corr *t, uint32_t corr, const struct fp__cupti_launch *l)
{
	struct fp__cupti_corr_slot *s = &t->slots[corr & t->mask];
	uint64_t old = atomic_load_explicit(&s->key, memory_order_relaxed);

	if (old == FP__CUPTI_CORR_BUSY ||
	    !atomic_compare_exchange_strong_explicit(&s->key, &old, FP__CUPTI_CORR_BUSY,
						     memory_order_acquire, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&t->collisions, 1, memory_order_relaxed);
		return false;
	}
	atomic_store_explicit(&s->lctx, l->lctx, memory_order_relaxed);
	atomic_store_explicit(&s->callpath, l->callpath, memory_order_relaxed);
	atomic_store_explicit(&s->md, l->md, memory_order_relaxed);
	atomic_store_explicit(&s->active, l->active, memory_order_relaxed);
	atomic_store_explicit(&s->internal, l->internal, memory_order_relaxed);
	atomic_store_explicit(&s->key, corr, memory_order_release);
	return true;
}

bool fp__cupti_corr_get(struct fp__cupti_corr *t, uint32_t corr, struct fp__cupti_launch *out)
{
	struct fp__cupti_corr_slot *s;
	uint64_t k1, k2;

	if (!t->slots || !corr)
		return false;
	s = &t->slots[corr & t->mask];
	k1 = atomic_load_explicit(&s->key, memory_order_acquire);
	if (k1 != corr)
		return false;
	out->lctx = atomic_load_explicit(&s->lctx, memory_order_relaxed);
	out->callpath = atomic_load_explicit(&s->callpath, memory_order_relaxed);
	out->md = atomic_load_explicit(&s->md, memory_order_relaxed);
	out->active = atomic_load_explicit(&s->active, memory_order_relaxed);
	out->internal = atomic_load_explicit(&s->internal, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	k2 = atomic_load_explicit(&s->key, memory_order_relaxed);
	return k2 == corr;
}

/* ---- metadata ring --------------------------------------------------------------------------- */

int fp__cupti_md_init(struct fp__cupti_mdring *r, size_t n)
{
	size_t i, j;

	if (!r || !pow2(n))
		return FP_EINVAL;
	r->e = fp_reallocarray(NULL, n, sizeof(*r->e));
	if (!r->e)
		return FP_ENOMEM;
	for (i = 0; i < n; i++) {
		atomic_init(&r->e[i].seq, 0);
		for (j = 0; j < FP__CUPTI_MD_WORDS; j++)
			atomic_init(&r->e[i].w[j], 0);
	}
	r->mask = n - 1;
	atomic_init(&r->head, 0);
	return FP_OK;
}

void fp__cupti_md_release(struct fp__cupti_mdring *r)
{
	if (!r)
		return;
	fp_free(r->e);
	r->e = NULL;
	r->mask = 0;
}

uint64_t fp__cupti_md_put(struct fp__cupti_mdring *r, const struct fp_sink_metadata *md)
{
	uint64_t t = atomic_fetch_add_explicit(&r->head, 1, memory_order_relaxed) + 1;
	struct fp__cupti_md_entry *e = &r->e[t & r->mask];
	uint64_t w[FP__CUPTI_MD_WORDS];
	size_t j;

	memcpy(w, md, sizeof(w));
	atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (j = 0; j < FP__CUPTI_MD_WORDS; j++)
		atomic_store_explicit(&e->w[j], w[j], memory_order_relaxed);
	atomic_store_explicit(&e->seq, t, memory_order_release);
	return t;
}

bool fp__cupti_md_get(struct fp__cupti_mdring *r, uint64_t ticket, struct fp_sink_metadata *out)
{
	struct fp__cupti_md_entry *e;
	uint64_t w[FP__CUPTI_MD_WORDS];
	size_t j;

	if (!r->e || !ticket)
		return false;
	e = &r->e[ticket & r->mask];
	if (atomic_load_explicit(&e->seq, memory_order_acquire) != ticket)
		return false;
	for (j = 0; j < FP__CUPTI_MD_WORDS; j++)
		w[j] = atomic_load_explicit(&e->w[j], memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&e->seq, memory_order_relaxed) != ticket)
		return false;
	memcpy(out, w, sizeof(w));
	return true;
}

/* ---- graph nodes ----------------------------------------------------------------------------- */

int fp__cupti_graphs_init(struct fp__cupti_graphs *g, size_t max_nodes)
{
	size_t cap = 16;

	if (!g || !max_nodes || max_nodes > ((size_t)1 << 28))
		return FP_EINVAL;
	/* At most half full, so probe runs stay short. */
	while (cap < 2 * max_nodes)
		cap *= 2;
	g->e = fp_calloc(cap, sizeof(*g->e));
	if (!g->e)
		return FP_ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	g->cap = cap;
	g->n = 0;
	g->max = max_nodes;
	g->untracked = 0;
	return FP_OK;
}

void fp__cupti_graphs_release(struct fp__cupti_graphs *g)
{
	if (!g || !g->e)
		return;
	pthread_mutex_destroy(&g->lock);
	fp_free(g->e);
	g->e = NULL;
	g->cap = g->n = 0;
}

void fp__cupti_graphs_clear(struct fp__cupti_graphs *g)
{
	pthread_mutex_lock(&g->lock);
	memset(g->e, 0, g->cap * sizeof(*g->e));
	g->n = 0;
	pthread_mutex_unlock(&g->lock);
}

static size_t slot_of(const struct fp__cupti_graphs *g, uint64_t id)
{
	/* Node ids are small consecutive integers: mix them before masking. */
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (g->cap - 1);
}

/* Lock held: the slot holding `id`, or the free slot where it would go. */
static size_t find_locked(const struct fp__cupti_graphs *g, uint64_t id)
{
	size_t i = slot_of(g, id);

	while (g->e[i].id && g->e[i].id != id)
		i = (i + 1) & (g->cap - 1);
	return i;
}

static int put_locked(struct fp__cupti_graphs *g, const struct fp__cupti_gnode *n)
{
	size_t i = find_locked(g, n->id);

	if (!g->e[i].id) {
		if (g->n >= g->max) {
			g->untracked++;
			return FP_ELIMIT;
		}
		g->n++;
	}
	g->e[i] = *n;
	return FP_OK;
}

int fp__cupti_graphs_put(struct fp__cupti_graphs *g, const struct fp__cupti_gnode *n)
{
	int rc;

	if (!n || !n->id)
		return FP_EINVAL;
	pthread_mutex_lock(&g->lock);
	rc = put_locked(g, n);
	pthread_mutex_unlock(&g->lock);
	return rc;
}

int fp__cupti_graphs_clone(struct fp__cupti_graphs *g, uint64_t from, uint64_t to, uint64_t owner)
{
	struct fp__cupti_gnode n;
	size_t i;
	int rc;

	if (!from || !to)
		return FP_EINVAL;
	pthread_mutex_lock(&g->lock);
	i = find_locked(g, from);
	if (!g->e[i].id) {
		rc = FP_ENOENT;
	} else {
		n = g->e[i];
		n.id = to;
		n.owner = owner;
		rc = put_locked(g, &n);
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

bool fp__cupti_graphs_get(struct fp__cupti_graphs *g, uint64_t id, struct fp__cupti_gnode *out)
{
	bool found = false;
	size_t i;

	if (!id || !g->e)
		return false;
	pthread_mutex_lock(&g->lock);
	i = find_locked(g, id);
	if (g->e[i].id) {
		*out = g->e[i];
		found = true;
	}
	pthread_mutex_unlock(&g->lock);
	return found;
}

/* Lock held: empty slot i and move later entries of its probe run back (no tombstones). */
static void delete_at_locked(struct fp__cupti_graphs *g, size_t i)
{
	size_t mask = g->cap - 1, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!g->e[j].id)
			break;
		home = slot_of(g, g->e[j].id);
		/* Entry j may move to i if its home is not in the cyclic range (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			g->e[i] = g->e[j];
			i = j;
		}
	}
	memset(&g->e[i], 0, sizeof(g->e[i]));
	g->n--;
}

bool fp__cupti_graphs_remove(struct fp__cupti_graphs *g, uint64_t id)
{
	bool found = false;
	size_t i;

	if (!id)
		return false;
	pthread_mutex_lock(&g->lock);
	i = find_locked(g, id);
	if (g->e[i].id) {
		delete_at_locked(g, i);
		found = true;
	}
	pthread_mutex_unlock(&g->lock);
	return found;
}

size_t fp__cupti_graphs_remove_owner(struct fp__cupti_graphs *g, uint64_t owner)
{
	size_t i, removed = 0;

	if (!owner)
		return 0;
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->cap;) {
		/* A deletion may move a later entry into slot i: look at i again. */
		if (g->e[i].id && g->e[i].owner == owner) {
			delete_at_locked(g, i);
			removed++;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&g->lock);
	return removed;
}

size_t fp__cupti_graphs_count(struct fp__cupti_graphs *g)
{
	size_t n;

	pthread_mutex_lock(&g->lock);
	n = g->n;
	pthread_mutex_unlock(&g->lock);
	return n;
}

/* ---- buffer pool ----------------------------------------------------------------------------- */

int fp__cupti_pool_init(struct fp__cupti_pool *p, unsigned n, size_t size)
{
	if (!p || !n || n > FP__CUPTI_POOL_MAX || size < 1024 || size % 8)
		return FP_EINVAL;
	/* calloc: CUPTI is told the buffers arrive zeroed (and they are given back zeroed). */
	p->arena = fp_calloc(n, size);
	if (!p->arena)
		return FP_ENOMEM;
	p->size = size;
	p->n = n;
	atomic_init(&p->free_mask, n == 64 ? UINT64_MAX : (((uint64_t)1 << n) - 1));
	atomic_init(&p->denied, 0);
	return FP_OK;
}

void fp__cupti_pool_release(struct fp__cupti_pool *p)
{
	if (!p)
		return;
	fp_free(p->arena);
	p->arena = NULL;
	p->n = 0;
}

uint8_t *fp__cupti_pool_get(struct fp__cupti_pool *p)
{
	uint64_t m = atomic_load_explicit(&p->free_mask, memory_order_relaxed);

	for (;;) {
		unsigned i;

		if (!m) {
			atomic_fetch_add_explicit(&p->denied, 1, memory_order_relaxed);
			return NULL;
		}
		i = (unsigned)__builtin_ctzll(m);
		if (atomic_compare_exchange_weak_explicit(
			    &p->free_mask, &m, m & ~((uint64_t)1 << i), memory_order_acquire,
			    memory_order_relaxed))
			return p->arena + (size_t)i * p->size;
	}
}

int fp__cupti_pool_put(struct fp__cupti_pool *p, uint8_t *buf)
{
	uint64_t bit, old;
	size_t off;

	if (!p->arena || !buf || buf < p->arena)
		return FP_EINVAL;
	off = (size_t)(buf - p->arena);
	if (off % p->size || off / p->size >= p->n)
		return FP_EINVAL;
	bit = (uint64_t)1 << (off / p->size);
	old = atomic_fetch_or_explicit(&p->free_mask, bit, memory_order_release);
	return old & bit ? FP_EINVAL : FP_OK;
}

unsigned fp__cupti_pool_free_count(struct fp__cupti_pool *p)
{
	return (unsigned)__builtin_popcountll(atomic_load(&p->free_mask));
}
