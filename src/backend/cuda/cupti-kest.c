/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-kernel IR estimates for the CUPTI backend's launch callback: a fixed table CUfunction ->
 * per-program (bytes, FLOPs) that the Python layer fills once per kernel, when Triton loads it
 * (knobs.runtime.kernel_load_end_hook) or, for kernels loaded before a session, from Triton's
 * caches at start. The driver-API launch callback (cupti.c) reads the launch's CUfunction from
 * its parameters and looks it up here, so a session in shadow context needs nothing in Triton's
 * launch hook chains to get estimates. Not here: estimating (src/ir, the TTIR estimator), the
 * launch-hook path of hook="triton" / context="python" (python/ext/cupti.c keeps its own table).
 *
 * Concurrency: readers (every launching thread, the record reader) take no lock; writers (kernel
 * loads, rare) serialize on `wlock`. An entry's key is published last and never removed while
 * the process runs (fp__cupti_kest_reset() is for tests, with no launch in flight), so an index
 * found once stays valid; its values may be replaced (a second load of the same handle), so they
 * sit behind a per-entry sequence counter. Open addressing, filled to half at most: a full table
 * refuses new kernels (counted), whose launches then go without an estimate (counted as misses),
 * never with a wrong one.
 */
#include "fp-setup.h"

#include <pthread.h>
#include <stdatomic.h>

#include <flagprism/cupti.h>

#include "backend/cuda/cupti-kest-internal.h"
#include "backend/cuda/cupti-metrics-internal.h" /* FP__CUPTI_MD_PER_PROGRAM */

#define SLOTS FP_CUPTI_KEST_SLOTS
#define MAX_KERNELS (SLOTS / 2) /* keeps probes short */
#define READ_TRIES 1024

_Static_assert((SLOTS & (SLOTS - 1)) == 0, "FP_CUPTI_KEST_SLOTS must be a power of two");

struct entry {
	_Atomic uint64_t fn;           /* the CUfunction; 0: empty. Published last, never cleared */
	_Atomic uint32_t seen;         /* epoch of the latest launch looked up (0: none) */
	_Atomic uint32_t seq;          /* odd while the values are written */
	_Atomic uint64_t bytes, flops; /* double bit patterns, per program */
	_Atomic uint32_t has_est;
};

static struct entry tab[SLOTS];
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static size_t used; /* wlock */
static atomic_uint_fast64_t n_full, n_miss;
static _Atomic uint32_t epoch = 1;

atomic_bool fp__cupti_kest_on;

static size_t slot_of(uint64_t fn)
{
	return (size_t)((fn * 0x9E3779B97F4A7C15ull) >> 40) & (SLOTS - 1);
}

static uint64_t bits(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static double value(uint64_t u)
{
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

uint32_t fp__cupti_kest_find(uint64_t fn)
{
	size_t i, n;

	if (!fn)
		return 0;
	for (n = 0, i = slot_of(fn); n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&tab[i].fn, memory_order_acquire);

		if (k == fn) {
			uint32_t ep = atomic_load_explicit(&epoch, memory_order_relaxed);

			/* written once per kernel and epoch: the line stays shared otherwise */
			if (atomic_load_explicit(&tab[i].seen, memory_order_relaxed) != ep)
				atomic_store_explicit(&tab[i].seen, ep, memory_order_relaxed);
			return (uint32_t)i + 1;
		}
		if (!k)
			return 0;
	}
	return 0;
}

bool fp__cupti_kest_get(uint64_t ref, struct fp_sink_metadata *md)
{
	uint64_t i = (ref & ~FP__CUPTI_MD_KEST) - 1;
	uint64_t b, f;
	uint32_t s1, s2, h;
	int tries;

	memset(md, 0, sizeof(*md));
	if (i >= SLOTS)
		return false;
	for (tries = 0; tries < READ_TRIES; tries++) {
		s1 = atomic_load_explicit(&tab[i].seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		b = atomic_load_explicit(&tab[i].bytes, memory_order_relaxed);
		f = atomic_load_explicit(&tab[i].flops, memory_order_relaxed);
		h = atomic_load_explicit(&tab[i].has_est, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&tab[i].seq, memory_order_relaxed);
		if (s1 != s2)
			continue;
		if (!h)
			return false;
		md->est_bytes = value(b);
		md->est_flops = value(f);
		md->flags = FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS;
		md->reserved = FP__CUPTI_MD_PER_PROGRAM;
		return true;
	}
	return false; /* a writer kept the entry busy: no estimate rather than a torn one */
}

void fp__cupti_kest_miss(void)
{
	atomic_fetch_add_explicit(&n_miss, 1, memory_order_relaxed);
}

int fp_cupti_kernel_estimate_set(uint64_t function, const double *est)
{
	struct entry *e = NULL;
	size_t i, n;
	uint32_t s;

	if (!function)
		return FP_EINVAL;
	pthread_mutex_lock(&wlock);
	for (n = 0, i = slot_of(function); n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&tab[i].fn, memory_order_relaxed);

		if (k == function || !k) {
			e = &tab[i];
			break;
		}
	}
	if (!e || (!atomic_load_explicit(&e->fn, memory_order_relaxed) && used >= MAX_KERNELS)) {
		atomic_fetch_add_explicit(&n_full, 1, memory_order_relaxed);
		pthread_mutex_unlock(&wlock);
		return FP_ELIMIT;
	}
	s = atomic_load_explicit(&e->seq, memory_order_relaxed);
	atomic_store_explicit(&e->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&e->bytes, est ? bits(est[0]) : 0, memory_order_relaxed);
	atomic_store_explicit(&e->flops, est ? bits(est[1]) : 0, memory_order_relaxed);
	atomic_store_explicit(&e->has_est, est != NULL, memory_order_relaxed);
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
	if (!atomic_load_explicit(&e->fn, memory_order_relaxed)) {
		atomic_store_explicit(&e->fn, function, memory_order_release);
		used++;
	}
	pthread_mutex_unlock(&wlock);
	return FP_OK;
}

void fp_cupti_kernel_estimates_enable(bool on)
{
	atomic_store(&fp__cupti_kest_on, on);
}

uint32_t fp_cupti_kernel_estimates_epoch(void)
{
	uint32_t e = atomic_fetch_add(&epoch, 1) + 1;

	if (!e) /* 0 means "never launched": skip it */
		e = atomic_fetch_add(&epoch, 1) + 1;
	return e;
}

size_t fp_cupti_kernel_estimates_seen(uint32_t since, uint64_t *out, size_t cap)
{
	size_t i, n = 0;

	if (!out)
		cap = 0;
	for (i = 0; i < SLOTS; i++) {
		uint64_t k = atomic_load_explicit(&tab[i].fn, memory_order_acquire);
		uint32_t seen = atomic_load_explicit(&tab[i].seen, memory_order_relaxed);

		if (!k || !seen || seen < since)
			continue;
		if (n < cap)
			out[n] = k;
		n++;
	}
	return n;
}

int fp_cupti_kernel_estimates_stats(struct fp_cupti_kest_stats *out)
{
	if (!out)
		return FP_EINVAL;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&wlock);
	out->known = used;
	pthread_mutex_unlock(&wlock);
	out->enabled = atomic_load(&fp__cupti_kest_on);
	out->capacity = MAX_KERNELS;
	out->full = atomic_load(&n_full);
	out->misses = atomic_load(&n_miss);
	out->epoch = atomic_load(&epoch);
	return FP_OK;
}

void fp__cupti_kest_reset(void)
{
	size_t i;

	pthread_mutex_lock(&wlock);
	atomic_store(&fp__cupti_kest_on, false);
	for (i = 0; i < SLOTS; i++) {
		atomic_store(&tab[i].fn, 0);
		atomic_store(&tab[i].seen, 0);
		atomic_store(&tab[i].bytes, 0);
		atomic_store(&tab[i].flops, 0);
		atomic_store(&tab[i].has_est, 0);
	}
	used = 0;
	atomic_store(&n_full, 0);
	atomic_store(&n_miss, 0);
	atomic_store(&epoch, 1);
	pthread_mutex_unlock(&wlock);
}
