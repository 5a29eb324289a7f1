/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compile-time check of src/backend/cuda/cupti-profiler-abi.h (our C re-declaration of CUPTI 13.0's
 * range profiler and profiler host API) against NVIDIA's headers: every struct's size and the
 * offset of every field we set or read, the *_STRUCT_SIZE values we pass, enum values and error
 * codes. Needs the 13.0 CUPTI headers, cuda.h, and tests/unit/abi-stub first on the include
 * path (cupti_profiler_host.h includes C++'s <string>, which it does not use). Included by
 * tests/unit/test-cupti-profiler-abi.c when CMake finds the headers, and compiled on its own
 * by tests/gpu/test_metrics_gpu.py against the GPU machine's toolkit.
 */
#ifndef FP_CUPTI_PROFILER_ABI_CHECK_H
#define FP_CUPTI_PROFILER_ABI_CHECK_H

#include <stddef.h>

#include <cupti_result.h>
#include <cupti_version.h>
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_profiler_host.h>

#include "backend/cuda/cupti-profiler-abi.h"

#define FPA_SAME(ours, theirs, of, tf)                                                      \
	_Static_assert(offsetof(struct ours, of) == offsetof(theirs, tf), #theirs "." #tf); \
	_Static_assert(sizeof(((struct ours *)0)->of) == sizeof(((theirs *)0)->tf),         \
		       #theirs "." #tf " size")
#define FPA_SIZE(ours, theirs, last)                                               \
	_Static_assert(sizeof(struct ours) == sizeof(theirs), "sizeof " #theirs);  \
	_Static_assert(FP__CUPTI_PSIZE(struct ours, last) == theirs##_STRUCT_SIZE, \
		       #theirs "_STRUCT_SIZE")

_Static_assert(FP__CUPTI_ERROR_INVALID_METRIC_NAME == CUPTI_ERROR_INVALID_METRIC_NAME, "err");
_Static_assert(FP__CUPTI_AUTO_RANGE == CUPTI_AutoRange, "CUPTI_AutoRange");
_Static_assert(FP__CUPTI_KERNEL_REPLAY == CUPTI_KernelReplay, "CUPTI_KernelReplay");
_Static_assert(FP__CUPTI_PROFILER_TYPE_RANGE_PROFILER == CUPTI_PROFILER_TYPE_RANGE_PROFILER, "t");
_Static_assert(FP__CUPTI_METRIC_TYPE_COUNTER == CUPTI_METRIC_TYPE_COUNTER, "counter");
_Static_assert(FP__CUPTI_METRIC_TYPE_RATIO == CUPTI_METRIC_TYPE_RATIO, "ratio");
_Static_assert(FP__CUPTI_METRIC_TYPE_THROUGHPUT == CUPTI_METRIC_TYPE_THROUGHPUT, "throughput");
_Static_assert(sizeof(CUpti_ProfilerRange) == sizeof(int), "enum size");
_Static_assert(sizeof(CUpti_MetricType) == sizeof(int), "enum size");

FPA_SAME(fp__cupti_prof_init_params, CUpti_Profiler_Initialize_Params, pPriv, pPriv);
FPA_SIZE(fp__cupti_prof_init_params, CUpti_Profiler_Initialize_Params, pPriv);
FPA_SIZE(fp__cupti_prof_init_params, CUpti_Profiler_DeInitialize_Params, pPriv);

FPA_SAME(fp__cupti_chip_name_params, CUpti_Device_GetChipName_Params, deviceIndex, deviceIndex);
FPA_SAME(fp__cupti_chip_name_params, CUpti_Device_GetChipName_Params, pChipName, pChipName);
FPA_SIZE(fp__cupti_chip_name_params, CUpti_Device_GetChipName_Params, pChipName);

FPA_SAME(fp__cupti_avail_params, CUpti_Profiler_GetCounterAvailability_Params, ctx, ctx);
FPA_SAME(fp__cupti_avail_params, CUpti_Profiler_GetCounterAvailability_Params,
	 counterAvailabilityImageSize, counterAvailabilityImageSize);
FPA_SAME(fp__cupti_avail_params, CUpti_Profiler_GetCounterAvailability_Params,
	 pCounterAvailabilityImage, pCounterAvailabilityImage);
FPA_SIZE(fp__cupti_avail_params, CUpti_Profiler_GetCounterAvailability_Params,
	 pCounterAvailabilityImage);

FPA_SAME(fp__cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, profilerType,
	 profilerType);
FPA_SAME(fp__cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, pChipName, pChipName);
FPA_SAME(fp__cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params,
	 pCounterAvailabilityImage, pCounterAvailabilityImage);
FPA_SAME(fp__cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, pHostObject,
	 pHostObject);
FPA_SIZE(fp__cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, pHostObject);

FPA_SAME(fp__cupti_host_deinit_params, CUpti_Profiler_Host_Deinitialize_Params, pHostObject,
	 pHostObject);
FPA_SIZE(fp__cupti_host_deinit_params, CUpti_Profiler_Host_Deinitialize_Params, pHostObject);

FPA_SAME(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params, pHostObject,
	 pHostObject);
FPA_SAME(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params, pMetricName,
	 pMetricName);
FPA_SAME(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params,
	 pDescription, pDescription);
FPA_SAME(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params, pHwUnit,
	 pHwUnit);
FPA_SAME(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params, pDimUnit,
	 pDimUnit);
FPA_SAME(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params, metricType,
	 metricType);
FPA_SIZE(fp__cupti_metric_props_params, CUpti_Profiler_Host_GetMetricProperties_Params, metricType);

FPA_SAME(fp__cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, pHostObject,
	 pHostObject);
FPA_SAME(fp__cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, ppMetricNames,
	 ppMetricNames);
FPA_SAME(fp__cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics,
	 numMetrics);
FPA_SIZE(fp__cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics);

FPA_SAME(fp__cupti_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params, pHostObject,
	 pHostObject);
FPA_SAME(fp__cupti_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params,
	 configImageSize, configImageSize);
FPA_SIZE(fp__cupti_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params,
	 configImageSize);

FPA_SAME(fp__cupti_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, configImageSize,
	 configImageSize);
FPA_SAME(fp__cupti_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage,
	 pConfigImage);
FPA_SIZE(fp__cupti_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage);

FPA_SAME(fp__cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, configImageSize,
	 configImageSize);
FPA_SAME(fp__cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, pConfigImage,
	 pConfigImage);
FPA_SAME(fp__cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses,
	 numOfPasses);
FPA_SIZE(fp__cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses);

FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pHostObject,
	 pHostObject);
FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params,
	 pCounterDataImage, pCounterDataImage);
FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params,
	 counterDataImageSize, counterDataImageSize);
FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, rangeIndex,
	 rangeIndex);
FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, ppMetricNames,
	 ppMetricNames);
FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, numMetrics,
	 numMetrics);
FPA_SAME(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues,
	 pMetricValues);
FPA_SIZE(fp__cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues);

FPA_SAME(fp__cupti_rp_enable_params, CUpti_RangeProfiler_Enable_Params, ctx, ctx);
FPA_SAME(fp__cupti_rp_enable_params, CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject,
	 pRangeProfilerObject);
FPA_SIZE(fp__cupti_rp_enable_params, CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject);

FPA_SAME(fp__cupti_rp_object_params, CUpti_RangeProfiler_Disable_Params, pRangeProfilerObject,
	 pRangeProfilerObject);
FPA_SIZE(fp__cupti_rp_object_params, CUpti_RangeProfiler_Disable_Params, pRangeProfilerObject);
FPA_SAME(fp__cupti_rp_object_params, CUpti_RangeProfiler_Start_Params, pRangeProfilerObject,
	 pRangeProfilerObject);
FPA_SIZE(fp__cupti_rp_object_params, CUpti_RangeProfiler_Start_Params, pRangeProfilerObject);

FPA_SAME(fp__cupti_rp_stop_params, CUpti_RangeProfiler_Stop_Params, pRangeProfilerObject,
	 pRangeProfilerObject);
FPA_SAME(fp__cupti_rp_stop_params, CUpti_RangeProfiler_Stop_Params, passIndex, passIndex);
FPA_SAME(fp__cupti_rp_stop_params, CUpti_RangeProfiler_Stop_Params, targetNestingLevel,
	 targetNestingLevel);
FPA_SAME(fp__cupti_rp_stop_params, CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted,
	 isAllPassSubmitted);
FPA_SIZE(fp__cupti_rp_stop_params, CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);

FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, pRangeProfilerObject,
	 pRangeProfilerObject);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, configSize,
	 configSize);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, pConfig, pConfig);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, counterDataImageSize,
	 counterDataImageSize);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, pCounterDataImage,
	 pCounterDataImage);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, range, range);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, replayMode,
	 replayMode);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, maxRangesPerPass,
	 maxRangesPerPass);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, numNestingLevels,
	 numNestingLevels);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, minNestingLevel,
	 minNestingLevel);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, passIndex, passIndex);
FPA_SAME(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, targetNestingLevel,
	 targetNestingLevel);
FPA_SIZE(fp__cupti_rp_setconfig_params, CUpti_RangeProfiler_SetConfig_Params, targetNestingLevel);

FPA_SAME(fp__cupti_rp_decode_params, CUpti_RangeProfiler_DecodeData_Params, numOfRangeDropped,
	 numOfRangeDropped);
FPA_SIZE(fp__cupti_rp_decode_params, CUpti_RangeProfiler_DecodeData_Params, numOfRangeDropped);

FPA_SAME(fp__cupti_rp_datasize_params, CUpti_RangeProfiler_GetCounterDataSize_Params, pMetricNames,
	 pMetricNames);
FPA_SAME(fp__cupti_rp_datasize_params, CUpti_RangeProfiler_GetCounterDataSize_Params, numMetrics,
	 numMetrics);
FPA_SAME(fp__cupti_rp_datasize_params, CUpti_RangeProfiler_GetCounterDataSize_Params,
	 maxNumOfRanges, maxNumOfRanges);
FPA_SAME(fp__cupti_rp_datasize_params, CUpti_RangeProfiler_GetCounterDataSize_Params,
	 maxNumRangeTreeNodes, maxNumRangeTreeNodes);
FPA_SAME(fp__cupti_rp_datasize_params, CUpti_RangeProfiler_GetCounterDataSize_Params,
	 counterDataSize, counterDataSize);
FPA_SIZE(fp__cupti_rp_datasize_params, CUpti_RangeProfiler_GetCounterDataSize_Params,
	 counterDataSize);

FPA_SAME(fp__cupti_rp_datainit_params, CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
	 counterDataSize, counterDataSize);
FPA_SAME(fp__cupti_rp_datainit_params, CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
	 pCounterData, pCounterData);
FPA_SIZE(fp__cupti_rp_datainit_params, CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
	 pCounterData);

FPA_SAME(fp__cupti_rp_datainfo_params, CUpti_RangeProfiler_GetCounterDataInfo_Params,
	 pCounterDataImage, pCounterDataImage);
FPA_SAME(fp__cupti_rp_datainfo_params, CUpti_RangeProfiler_GetCounterDataInfo_Params,
	 counterDataImageSize, counterDataImageSize);
FPA_SAME(fp__cupti_rp_datainfo_params, CUpti_RangeProfiler_GetCounterDataInfo_Params,
	 numTotalRanges, numTotalRanges);
FPA_SIZE(fp__cupti_rp_datainfo_params, CUpti_RangeProfiler_GetCounterDataInfo_Params,
	 numTotalRanges);

/* The function types: assigning NVIDIA's functions to our pointer types must not need a cast
 * beyond the params struct (checked by the argument count and return type). */
#define FPA_FN(name, params)                                                            \
	_Static_assert(sizeof(fp__cupti_##name##_fn) == sizeof(void (*)(void)), #name); \
	_Static_assert(sizeof(__typeof__(name(NULL))) == sizeof(int), #name " returns int");
FP__CUPTI_PROF_FUNCS(FPA_FN)
#undef FPA_FN

#endif /* FP_CUPTI_PROFILER_ABI_CHECK_H */
