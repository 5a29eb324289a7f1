/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading the fake libcupti in a unit test: point the backend at it (it stands in for libcupti
 * and for the CUDA driver) and bind the test's control functions from it. Shared by the CUPTI
 * backend, PC-sampling and hardware-metrics tests; not for the fake library itself.
 */
#ifndef FP_FAKE_BIND_H
#define FP_FAKE_BIND_H

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <flagprism/cupti.h>
#include "../test.h"

/* Set the backend's library paths to `path` and dlopen it for the test; fails the test if not. */
static inline void *fake_cupti_load(const char *path)
{
	void *h;

	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, path, 1));
	ASSERT_OK(setenv("FLAGPRISM_CUDA_DRIVER_PATH", path, 1));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NOT_NULL(h);
	return h;
}

/* Store the fake's function `name` (a string) into the function pointer `slot`. */
#define FAKE_BIND(h, slot, name)                            \
	do {                                                \
		void *fake_p_ = dlsym((h), (name));         \
		ASSERT_NOT_NULL(fake_p_);                   \
		memcpy(&(slot), &fake_p_, sizeof(fake_p_)); \
	} while (0)

/* X-macro form over the FAKE_*_CONTROL lists, for a file-local struct named `fk` with `h`. */
#define FAKE_BIND_X(ret, name, params) FAKE_BIND(fk.h, fk.name, #name);

#endif /* FP_FAKE_BIND_H */
