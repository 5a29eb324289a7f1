/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one loader of the CUDA driver (cuda-internal.h): libcuda.so.1 (FLAGPRISM_CUDA_DRIVER_PATH
 * overrides, for tests) opened with dlopen once per process, every entry point of FP__CU_FUNCS
 * resolved, cuInit(0) called, and the answer kept for every later caller: the CUPTI backend (its
 * device table and flush, and the handle where hardware metrics and PC sampling look up more)
 * and device memory. Not here: what they call the driver for.
 */
#include "fp-setup.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/backend-internal.h" /* FP__LSAN_DISABLE/ENABLE */
#include "backend/cuda/cuda-internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool ready; /* status and why are final */
static struct fp__cu_driver drv;
static int status;
static char why_buf[256];

/* lock held: load the library and its entry points, and initialize the driver. */
static int load(void)
{
	const char *path = secure_getenv("FLAGPRISM_CUDA_DRIVER_PATH"), *e;
	void *h, *p;
	int rc;

	if (!path || !*path)
		path = "libcuda.so.1";
	FP__LSAN_DISABLE();
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	FP__LSAN_ENABLE();
	if (!h) {
		e = dlerror();
		snprintf(why_buf, sizeof(why_buf), "%s", e ? e : path);
		return FP_ENOENT;
	}
#define FP__CU_FN_LOAD(name, params)                                             \
	dlerror();                                                               \
	p = dlsym(h, #name);                                                     \
	if (!p) {                                                                \
		snprintf(why_buf, sizeof(why_buf), "%s has no %s", path, #name); \
		goto fail_symbol;                                                \
	}                                                                        \
	memcpy(&drv.name, &p, sizeof(p));
	FP__CU_FUNCS(FP__CU_FN_LOAD)
#undef FP__CU_FN_LOAD
	drv.lib = h;
	rc = drv.cuInit(0);
	if (rc) {
		snprintf(why_buf, sizeof(why_buf),
			 "cuInit(0) failed with CUDA error %d (no GPU visible, or driver too old)",
			 rc);
		return FP_ENOTSUP;
	}
	return FP_OK;

fail_symbol:
	memset(&drv, 0, sizeof(drv));
	FP__LSAN_DISABLE();
	dlclose(h);
	FP__LSAN_ENABLE();
	return FP_ENOTSUP;
}

int fp__cu_driver_open(const struct fp__cu_driver **out, const char **why)
{
	if (!atomic_load_explicit(&ready, memory_order_acquire)) {
		pthread_mutex_lock(&lock);
		if (!atomic_load_explicit(&ready, memory_order_relaxed)) {
			status = load();
			atomic_store_explicit(&ready, true, memory_order_release);
		}
		pthread_mutex_unlock(&lock);
	}
	if (status) {
		if (why)
			*why = why_buf;
		return status;
	}
	*out = &drv;
	return FP_OK;
}

void fp__cu_driver_reset(void)
{
	pthread_mutex_lock(&lock);
	if (drv.lib) {
		FP__LSAN_DISABLE();
		dlclose(drv.lib);
		FP__LSAN_ENABLE();
	}
	memset(&drv, 0, sizeof(drv));
	status = FP_OK;
	why_buf[0] = '\0';
	atomic_store_explicit(&ready, false, memory_order_release);
	pthread_mutex_unlock(&lock);
}
