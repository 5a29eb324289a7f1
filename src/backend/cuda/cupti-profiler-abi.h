/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of CUPTI's profiling ABI (CUDA 13.0: cupti_range_profiler.h, cupti_profiler_host.h,
 * cupti_target.h, cupti_profiler_target.h) that the hardware-metrics collector
 * (cupti-metrics.c) uses, declared by hand: cupti_profiler_host.h is C++ only (it includes
 * <string>), and the library builds without any CUDA header. Every struct is a params block
 * whose first field is its size; we pass the size up to the last field we know, as the
 * headers' *_STRUCT_SIZE macros do. tests/unit/test-cupti-profiler-abi.c checks sizes, offsets
 * and enum values against NVIDIA's headers when CMake finds 13.0 ones (FP_CUPTI13_HEADERS_DIR).
 * Not a public header; only src/backend/cuda/cupti-metrics.c and its tests include it.
 */
#ifndef FP_CUPTI_PROFILER_ABI_H
#define FP_CUPTI_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>

#define FP__CUPTI_ERROR_INVALID_METRIC_NAME 17

/* CUpti_ProfilerRange, CUpti_ProfilerReplayMode (cupti_profiler_target.h) */
#define FP__CUPTI_AUTO_RANGE 1
#define FP__CUPTI_KERNEL_REPLAY 2
/* CUpti_ProfilerType, CUpti_MetricType (cupti_profiler_host.h) */
#define FP__CUPTI_PROFILER_TYPE_RANGE_PROFILER 0
#define FP__CUPTI_METRIC_TYPE_COUNTER 0
#define FP__CUPTI_METRIC_TYPE_RATIO 1
#define FP__CUPTI_METRIC_TYPE_THROUGHPUT 2

#define FP__CUPTI_PSIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

struct fp__cupti_rp_object;   /* CUpti_RangeProfiler_Object */
struct fp__cupti_host_object; /* CUpti_Profiler_Host_Object */

struct fp__cupti_prof_init_params { /* CUpti_Profiler_Initialize_Params, ..._DeInitialize_ */
	size_t structSize;
	void *pPriv;
};

struct fp__cupti_chip_name_params { /* CUpti_Device_GetChipName_Params */
	size_t structSize;
	void *pPriv;
	size_t deviceIndex;
	const char *pChipName;
};

struct fp__cupti_avail_params { /* CUpti_Profiler_GetCounterAvailability_Params */
	size_t structSize;
	void *pPriv;
	void *ctx;
	size_t counterAvailabilityImageSize;
	uint8_t *pCounterAvailabilityImage;
};

struct fp__cupti_host_init_params { /* CUpti_Profiler_Host_Initialize_Params */
	size_t structSize;
	void *pPriv;
	int profilerType;
	const char *pChipName;
	const uint8_t *pCounterAvailabilityImage;
	struct fp__cupti_host_object *pHostObject;
};

struct fp__cupti_host_deinit_params { /* CUpti_Profiler_Host_Deinitialize_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_host_object *pHostObject;
};

struct fp__cupti_metric_props_params { /* CUpti_Profiler_Host_GetMetricProperties_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_host_object *pHostObject;
	const char *pMetricName;
	const char *pDescription;
	const char *pHwUnit;
	const char *pDimUnit;
	int metricType;
};

struct fp__cupti_add_metrics_params { /* CUpti_Profiler_Host_ConfigAddMetrics_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_host_object *pHostObject;
	const char **ppMetricNames;
	size_t numMetrics;
};

struct fp__cupti_config_size_params { /* CUpti_Profiler_Host_GetConfigImageSize_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_host_object *pHostObject;
	size_t configImageSize;
};

struct fp__cupti_config_image_params { /* CUpti_Profiler_Host_GetConfigImage_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_host_object *pHostObject;
	size_t configImageSize;
	uint8_t *pConfigImage;
};

struct fp__cupti_passes_params { /* CUpti_Profiler_Host_GetNumOfPasses_Params */
	size_t structSize;
	void *pPriv;
	size_t configImageSize;
	uint8_t *pConfigImage;
	size_t numOfPasses;
};

struct fp__cupti_evaluate_params { /* CUpti_Profiler_Host_EvaluateToGpuValues_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_host_object *pHostObject;
	const uint8_t *pCounterDataImage;
	size_t counterDataImageSize;
	size_t rangeIndex;
	const char **ppMetricNames;
	size_t numMetrics;
	double *pMetricValues;
};

struct fp__cupti_rp_enable_params { /* CUpti_RangeProfiler_Enable_Params */
	size_t structSize;
	void *pPriv;
	void *ctx;
	struct fp__cupti_rp_object *pRangeProfilerObject;
};

/* CUpti_RangeProfiler_Disable_Params, _Start_Params */
struct fp__cupti_rp_object_params {
	size_t structSize;
	void *pPriv;
	struct fp__cupti_rp_object *pRangeProfilerObject;
};

struct fp__cupti_rp_stop_params { /* CUpti_RangeProfiler_Stop_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_rp_object *pRangeProfilerObject;
	size_t passIndex;
	size_t targetNestingLevel;
	uint8_t isAllPassSubmitted;
};

struct fp__cupti_rp_setconfig_params { /* CUpti_RangeProfiler_SetConfig_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_rp_object *pRangeProfilerObject;
	size_t configSize;
	const uint8_t *pConfig;
	size_t counterDataImageSize;
	uint8_t *pCounterDataImage;
	int range;      /* CUpti_ProfilerRange */
	int replayMode; /* CUpti_ProfilerReplayMode */
	size_t maxRangesPerPass;
	uint16_t numNestingLevels;
	uint16_t minNestingLevel;
	size_t passIndex;
	uint16_t targetNestingLevel;
};

struct fp__cupti_rp_decode_params { /* CUpti_RangeProfiler_DecodeData_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_rp_object *pRangeProfilerObject;
	size_t numOfRangeDropped;
};

struct fp__cupti_rp_datasize_params { /* CUpti_RangeProfiler_GetCounterDataSize_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_rp_object *pRangeProfilerObject;
	const char **pMetricNames;
	size_t numMetrics;
	size_t maxNumOfRanges;
	uint32_t maxNumRangeTreeNodes;
	size_t counterDataSize;
};

struct fp__cupti_rp_datainit_params { /* CUpti_RangeProfiler_CounterDataImage_Initialize_Params */
	size_t structSize;
	void *pPriv;
	struct fp__cupti_rp_object *pRangeProfilerObject;
	size_t counterDataSize;
	uint8_t *pCounterData;
};

struct fp__cupti_rp_datainfo_params { /* CUpti_RangeProfiler_GetCounterDataInfo_Params */
	size_t structSize;
	void *pPriv;
	const uint8_t *pCounterDataImage;
	size_t counterDataImageSize;
	size_t numTotalRanges;
};

/* The *_STRUCT_SIZE values of the headers: what structSize must say (up to the last field). */
#define FP__CUPTI_SZ_PROF_INIT FP__CUPTI_PSIZE(struct fp__cupti_prof_init_params, pPriv)
#define FP__CUPTI_SZ_CHIP_NAME FP__CUPTI_PSIZE(struct fp__cupti_chip_name_params, pChipName)
#define FP__CUPTI_SZ_AVAIL FP__CUPTI_PSIZE(struct fp__cupti_avail_params, pCounterAvailabilityImage)
#define FP__CUPTI_SZ_HOST_INIT FP__CUPTI_PSIZE(struct fp__cupti_host_init_params, pHostObject)
#define FP__CUPTI_SZ_HOST_DEINIT FP__CUPTI_PSIZE(struct fp__cupti_host_deinit_params, pHostObject)
#define FP__CUPTI_SZ_METRIC_PROPS FP__CUPTI_PSIZE(struct fp__cupti_metric_props_params, metricType)
#define FP__CUPTI_SZ_ADD_METRICS FP__CUPTI_PSIZE(struct fp__cupti_add_metrics_params, numMetrics)
#define FP__CUPTI_SZ_CONFIG_SIZE \
	FP__CUPTI_PSIZE(struct fp__cupti_config_size_params, configImageSize)
#define FP__CUPTI_SZ_CONFIG_IMAGE \
	FP__CUPTI_PSIZE(struct fp__cupti_config_image_params, pConfigImage)
#define FP__CUPTI_SZ_PASSES FP__CUPTI_PSIZE(struct fp__cupti_passes_params, numOfPasses)
#define FP__CUPTI_SZ_EVALUATE FP__CUPTI_PSIZE(struct fp__cupti_evaluate_params, pMetricValues)
#define FP__CUPTI_SZ_RP_ENABLE \
	FP__CUPTI_PSIZE(struct fp__cupti_rp_enable_params, pRangeProfilerObject)
#define FP__CUPTI_SZ_RP_OBJECT \
	FP__CUPTI_PSIZE(struct fp__cupti_rp_object_params, pRangeProfilerObject)
#define FP__CUPTI_SZ_RP_STOP FP__CUPTI_PSIZE(struct fp__cupti_rp_stop_params, isAllPassSubmitted)
#define FP__CUPTI_SZ_RP_SETCONFIG \
	FP__CUPTI_PSIZE(struct fp__cupti_rp_setconfig_params, targetNestingLevel)
#define FP__CUPTI_SZ_RP_DECODE FP__CUPTI_PSIZE(struct fp__cupti_rp_decode_params, numOfRangeDropped)
#define FP__CUPTI_SZ_RP_DATASIZE \
	FP__CUPTI_PSIZE(struct fp__cupti_rp_datasize_params, counterDataSize)
#define FP__CUPTI_SZ_RP_DATAINIT FP__CUPTI_PSIZE(struct fp__cupti_rp_datainit_params, pCounterData)
#define FP__CUPTI_SZ_RP_DATAINFO \
	FP__CUPTI_PSIZE(struct fp__cupti_rp_datainfo_params, numTotalRanges)

/*
 * The profiling functions, resolved from the already loaded libcupti. All are required: a
 * library without one cannot collect metrics, and start says which is missing.
 */
#define FP__CUPTI_PROF_FUNCS(X)                                                                    \
	X(cuptiProfilerInitialize, (struct fp__cupti_prof_init_params * p))                        \
	X(cuptiProfilerDeInitialize, (struct fp__cupti_prof_init_params * p))                      \
	X(cuptiDeviceGetChipName, (struct fp__cupti_chip_name_params * p))                         \
	X(cuptiProfilerGetCounterAvailability, (struct fp__cupti_avail_params * p))                \
	X(cuptiProfilerHostInitialize, (struct fp__cupti_host_init_params * p))                    \
	X(cuptiProfilerHostDeinitialize, (struct fp__cupti_host_deinit_params * p))                \
	X(cuptiProfilerHostGetMetricProperties, (struct fp__cupti_metric_props_params * p))        \
	X(cuptiProfilerHostConfigAddMetrics, (struct fp__cupti_add_metrics_params * p))            \
	X(cuptiProfilerHostGetConfigImageSize, (struct fp__cupti_config_size_params * p))          \
	X(cuptiProfilerHostGetConfigImage, (struct fp__cupti_config_image_params * p))             \
	X(cuptiProfilerHostGetNumOfPasses, (struct fp__cupti_passes_params * p))                   \
	X(cuptiProfilerHostEvaluateToGpuValues, (struct fp__cupti_evaluate_params * p))            \
	X(cuptiRangeProfilerEnable, (struct fp__cupti_rp_enable_params * p))                       \
	X(cuptiRangeProfilerDisable, (struct fp__cupti_rp_object_params * p))                      \
	X(cuptiRangeProfilerStart, (struct fp__cupti_rp_object_params * p))                        \
	X(cuptiRangeProfilerStop, (struct fp__cupti_rp_stop_params * p))                           \
	X(cuptiRangeProfilerSetConfig, (struct fp__cupti_rp_setconfig_params * p))                 \
	X(cuptiRangeProfilerDecodeData, (struct fp__cupti_rp_decode_params * p))                   \
	X(cuptiRangeProfilerGetCounterDataSize, (struct fp__cupti_rp_datasize_params * p))         \
	X(cuptiRangeProfilerCounterDataImageInitialize, (struct fp__cupti_rp_datainit_params * p)) \
	X(cuptiRangeProfilerGetCounterDataInfo, (struct fp__cupti_rp_datainfo_params * p))

#define FP__CUPTI_PROF_FN_TYPE(name, params) typedef int(*fp__cupti_##name##_fn) params;
FP__CUPTI_PROF_FUNCS(FP__CUPTI_PROF_FN_TYPE)
#undef FP__CUPTI_PROF_FN_TYPE

#endif /* FP_CUPTI_PROFILER_ABI_H */
