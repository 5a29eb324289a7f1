/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src/backend/cuda/cupti-profiler-abi.h against NVIDIA's CUDA 13.0 profiling headers, when CMake
 * found them (FP_CUPTI13_HEADERS_DIR): the static assertions of cupti-profiler-abi-check.h fail
 * the build of this file on any mismatch. Without the headers only our own declarations'
 * internal facts are tested (sizes match the field lists on LP64).
 */
#include <stddef.h>
#include <stdint.h>

#ifdef FP_HAVE_CUPTI13_HEADERS
#include "cupti-profiler-abi-check.h"
#endif

#include "backend/cuda/cupti-profiler-abi.h"
#include "test.h"

TEST(cupti_profiler_abi_layouts)
{
	/* LP64 layouts the headers give (checked against them when present). */
	ASSERT_EQ(sizeof(struct fp__cupti_rp_setconfig_params), 96);
	ASSERT_EQ(FP__CUPTI_PSIZE(struct fp__cupti_rp_setconfig_params, targetNestingLevel), 90);
	ASSERT_EQ(sizeof(struct fp__cupti_evaluate_params), 72);
	ASSERT_EQ(sizeof(struct fp__cupti_rp_stop_params), 48);
	ASSERT_EQ(FP__CUPTI_PSIZE(struct fp__cupti_rp_stop_params, isAllPassSubmitted), 41);
	ASSERT_EQ(offsetof(struct fp__cupti_rp_datasize_params, counterDataSize), 56);
	ASSERT_EQ(offsetof(struct fp__cupti_metric_props_params, metricType), 56);
#ifdef FP_HAVE_CUPTI13_HEADERS
	ASSERT_EQ(CUPTI_API_VERSION >= 130000, 1);
#endif
}
