/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of the CUDA vendor folder share beyond CUPTI's own internals
 * (cupti-internal.h): the one loader of the CUDA driver (driver.c), which the CUPTI backend and
 * device memory (devmem.c) both use. Not a public header; nothing outside src/backend/cuda/ and
 * its tests includes it.
 */
#ifndef FP_CUDA_INTERNAL_H
#define FP_CUDA_INTERNAL_H

#include "backend/cuda/cuda-abi.h"

/* The loaded driver: its library handle and every entry point of FP__CU_FUNCS. */
struct fp__cu_driver {
	void *lib; /* the dlopen handle, for entry points a feature looks up itself */
#define FP__CU_FN_FIELD(name, params) fp__cu_##name##_fn name;
	FP__CU_FUNCS(FP__CU_FN_FIELD)
#undef FP__CU_FN_FIELD
};

/*
 * The CUDA driver (libcuda.so.1, or $FLAGPRISM_CUDA_DRIVER_PATH), loaded with every entry point
 * and cuInit(0) called on the first call; later calls give the first answer without a lock.
 * FP_OK with *out, or with *why (static; `why` may be NULL) saying what failed: FP_ENOENT (the
 * library cannot be loaded: dlerror()'s words) or FP_ENOTSUP (an entry point is missing, or
 * cuInit failed). Thread-safe.
 */
int fp__cu_driver_open(const struct fp__cu_driver **out, const char **why);

/*
 * Close the driver and forget the answer, so that the next open loads it again (tests, through
 * fp__cupti_reset()). Nothing may use the driver meanwhile, nor keep a device-memory span or
 * event made before.
 */
void fp__cu_driver_reset(void);

#endif /* FP_CUDA_INTERNAL_H */
