/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUPTI backend's table of per-kernel IR estimates (cupti-kest.c), as cupti.c's launch
 * callback and record reader use it: CUfunction -> per-program (bytes, FLOPs), filled when a
 * kernel is loaded (public side: fp_cupti_kernel_estimate_set() in <flagprism/cupti.h>) and
 * looked up, lock-free, on every driver launch of a session that wants estimates without a
 * Python launch hook. Not the table itself (cupti-kest.c) nor a public header.
 */
#ifndef FP_CUPTI_KEST_INTERNAL_H
#define FP_CUPTI_KEST_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <flagprism/sink.h>

/* A launch's metadata ticket that names a table entry instead of a ring slot (cupti.c keeps it
 * in the correlation table's `md` field; ring tickets never reach bit 63). */
#define FP__CUPTI_MD_KEST ((uint64_t)1 << 63)

/* Whether the launch callback looks estimates up (fp_cupti_kernel_estimates_enable()). */
extern atomic_bool fp__cupti_kest_on;

/**
 * The entry of CUfunction `fn` (a reference >= 1 for fp__cupti_kest_get()), or 0 when the table
 * does not know it. Marks the entry as launched in the current epoch. Lock-free, no allocation:
 * the launch callback calls it.
 */
uint32_t fp__cupti_kest_find(uint64_t fn);

/**
 * The estimate of entry `ref` (from fp__cupti_kest_find(), with or without FP__CUPTI_MD_KEST)
 * into `md`: est_bytes / est_flops per program, their flags, and `reserved` set to
 * FP__CUPTI_MD_PER_PROGRAM so that the record's grid multiplies them. False when the entry has
 * no estimate (a kernel whose TTIR could not be read) or `ref` is not valid; `md` is then
 * zeroed.
 */
bool fp__cupti_kest_get(uint64_t ref, struct fp_sink_metadata *md);

/** Count one launch whose kernel the table did not know (estimate unavailable). */
void fp__cupti_kest_miss(void);

/** Empty the table, zero its counters, turn lookups off (fp__cupti_reset(); tests). */
void fp__cupti_kest_reset(void);

#endif /* FP_CUPTI_KEST_INTERNAL_H */
