/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of NVIDIA's CUPTI PC-sampling ABI (cupti_pcsampling.h, CUDA 13.0) that the PC-sampling
 * collector (cupti-pcsampling.c) uses, declared by hand so that the library builds without any
 * CUDA or CUPTI header: the configuration attribute ids, the params structs of every call, the
 * sample data structs (packed and 8-byte aligned, like the header's PACKED_ALIGNMENT on Linux)
 * and the function-pointer types, resolved with dlsym from the libcupti the backend bound.
 * tests/unit/test-cupti-pcs-abi.c checks sizes, offsets and constants against the real headers
 * when CMake finds them. Not a public header; the rest of the CUPTI ABI is in cupti-abi.h.
 */
#ifndef FP_CUPTI_PCS_ABI_H
#define FP_CUPTI_PCS_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cuda/cupti-abi.h"

#define FP__CUPTI_STALL_REASON_STRING_SIZE 128
#define FP__CUPTI_ERROR_OUT_OF_MEMORY 8

/* CUpti_PCSamplingCollectionMode */
#define FP__CUPTI_PCS_MODE_CONTINUOUS 1
#define FP__CUPTI_PCS_MODE_KERNEL_SERIALIZED 2

/* CUpti_PCSamplingOutputDataFormat */
#define FP__CUPTI_PCS_OUTPUT_PARSED 1

/* CUpti_PCSamplingConfigurationAttributeType */
#define FP__CUPTI_PCS_ATTR_SAMPLING_PERIOD 1
#define FP__CUPTI_PCS_ATTR_STALL_REASON 2
#define FP__CUPTI_PCS_ATTR_SCRATCH_BUFFER_SIZE 3
#define FP__CUPTI_PCS_ATTR_HARDWARE_BUFFER_SIZE 4
#define FP__CUPTI_PCS_ATTR_COLLECTION_MODE 5
#define FP__CUPTI_PCS_ATTR_ENABLE_START_STOP_CONTROL 6
#define FP__CUPTI_PCS_ATTR_OUTPUT_DATA_FORMAT 7
#define FP__CUPTI_PCS_ATTR_SAMPLING_DATA_BUFFER 8
#define FP__CUPTI_PCS_ATTR_WORKER_THREAD_PERIODIC_SLEEP_SPAN 9

#if defined(__GNUC__)
#define FP__CUPTI_PACKED __attribute__((__packed__, __aligned__(8)))
#else
#error "the CUPTI PC-sampling records need GCC or clang attributes"
#endif

/* CUpti_PCSamplingStallReason */
struct FP__CUPTI_PACKED fp__cupti_pcs_stall {
	uint32_t pcSamplingStallReasonIndex;
	uint32_t samples;
};

/* CUpti_PCSamplingPCData (correlationId since CUDA 12.4) */
struct FP__CUPTI_PACKED fp__cupti_pcs_pc {
	size_t size;
	uint64_t cubinCrc;
	uint64_t pcOffset;
	uint32_t functionIndex;
	uint32_t pad;
	char *functionName;
	size_t stallReasonCount;
	struct fp__cupti_pcs_stall *stallReason;
	uint32_t correlationId;
};

/* CUpti_PCSamplingData */
struct FP__CUPTI_PACKED fp__cupti_pcs_data {
	size_t size;
	size_t collectNumPcs;
	uint64_t totalSamples;
	uint64_t droppedSamples;
	size_t totalNumPcs;
	size_t remainingNumPcs;
	uint64_t rangeId;
	struct fp__cupti_pcs_pc *pPcData;
	uint64_t nonUsrKernelsTotalSamples;
	uint8_t hardwareBufferFull;
};

/* CUpti_PCSamplingConfigurationInfo: attributeData is a union of at most 3 words. */
struct fp__cupti_pcs_config_info {
	int attributeType;   /* CUpti_PCSamplingConfigurationAttributeType */
	int attributeStatus; /* CUptiResult, per attribute */
	union {
		uint64_t invalid[3];
		uint32_t samplingPeriod;
		struct {
			size_t stallReasonCount;
			uint32_t *pStallReasonIndex;
		} stallReason;
		size_t scratchBufferSize;
		size_t hardwareBufferSize;
		int collectionMode;
		uint32_t enableStartStopControl;
		int outputDataFormat;
		void *samplingDataBuffer;
		uint32_t workerThreadPeriodicSleepSpan;
	} attributeData;
};

/* CUpti_PCSamplingConfigurationInfoParams */
struct fp__cupti_pcs_config_params {
	size_t size;
	void *pPriv;
	fp__cu_context ctx;
	size_t numAttributes;
	struct fp__cupti_pcs_config_info *pPCSamplingConfigurationInfo;
};

/* CUpti_PCSamplingEnableParams, ...DisableParams, ...StartParams, ...StopParams */
struct fp__cupti_pcs_ctx_params {
	size_t size;
	void *pPriv;
	fp__cu_context ctx;
};

/* CUpti_PCSamplingGetDataParams */
struct fp__cupti_pcs_get_data_params {
	size_t size;
	void *pPriv;
	fp__cu_context ctx;
	void *pcSamplingData; /* struct fp__cupti_pcs_data * */
};

/* CUpti_PCSamplingGetNumStallReasonsParams */
struct fp__cupti_pcs_num_stall_params {
	size_t size;
	void *pPriv;
	fp__cu_context ctx;
	size_t *numStallReasons;
};

/* CUpti_PCSamplingGetStallReasonsParams */
struct fp__cupti_pcs_stall_params {
	size_t size;
	void *pPriv;
	fp__cu_context ctx;
	size_t numStallReasons;
	uint32_t *stallReasonIndex;
	char **stallReasons; /* each FP__CUPTI_STALL_REASON_STRING_SIZE bytes, caller's */
};

/* CUpti_GetCubinCrcParams */
struct fp__cupti_cubin_crc_params {
	size_t size;
	size_t cubinSize;
	const void *cubin;
	uint64_t cubinCrc;
};

/* CUpti_ModuleResourceData: resourceDescriptor of CUPTI_CBID_RESOURCE_MODULE_LOADED. */
struct fp__cupti_module_data {
	uint32_t moduleId;
	size_t cubinSize;
	const char *pCubin;
};

#define FP__CUPTI_CBID_RESOURCE_MODULE_LOADED 6

/* The ...ParamsSize macros: offsetof(last field) + its size. */
#define FP__CUPTI_PCS_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

/* Every PC-sampling function: X(required, name, params). All take one params pointer. */
#define FP__CUPTI_PCS_FUNCS(X)                                                                   \
	X(1, cuptiPCSamplingEnable, (struct fp__cupti_pcs_ctx_params * p))                       \
	X(1, cuptiPCSamplingDisable, (struct fp__cupti_pcs_ctx_params * p))                      \
	X(1, cuptiPCSamplingSetConfigurationAttribute, (struct fp__cupti_pcs_config_params * p)) \
	X(1, cuptiPCSamplingGetData, (struct fp__cupti_pcs_get_data_params * p))                 \
	X(1, cuptiPCSamplingGetNumStallReasons, (struct fp__cupti_pcs_num_stall_params * p))     \
	X(1, cuptiPCSamplingGetStallReasons, (struct fp__cupti_pcs_stall_params * p))            \
	X(1, cuptiGetCubinCrc, (struct fp__cupti_cubin_crc_params * p))

#define FP__CUPTI_PCS_FN_TYPE(req, name, params) typedef int(*fp__cupti_##name##_fn) params;
FP__CUPTI_PCS_FUNCS(FP__CUPTI_PCS_FN_TYPE)
#undef FP__CUPTI_PCS_FN_TYPE

#endif /* FP_CUPTI_PCS_ABI_H */
