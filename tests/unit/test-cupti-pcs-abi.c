/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks src/backend/cuda/cupti-pcs-abi.h, our hand-written copy of CUPTI's PC-sampling ABI, against
 * NVIDIA's cupti_pcsampling.h when CMake found it (FP_CUPTI13_HEADERS_DIR, else
 * FP_CUPTI_HEADERS_DIR; cuda.h from the same search as the profiler ABI check): sizes, offsets,
 * the ...ParamsSize values and the enum constants, as static assertions, so a mismatch fails the
 * build of this file. Without headers the tests below still check the layout facts we rely on.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef FP_HAVE_CUPTI_PCS_HEADERS
#include <cupti_pcsampling.h> /* with cuda.h, cupti_result.h: not cupti.h, which needs 13.0's cuda.h */
#if __has_include(<cupti_callbacks.h>)
#include <cupti_callbacks.h>
#define FP_HAVE_CUPTI_CALLBACKS_H 1
#endif
#endif

#include "backend/cuda/cupti-pcs-abi.h"
#include "test.h"

#ifdef FP_HAVE_CUPTI_PCS_HEADERS

#define SAME_OFF(ours, theirs, field) \
	_Static_assert(offsetof(ours, field) == offsetof(theirs, field), #theirs "." #field)
#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs), "sizeof " #theirs)

SAME_SIZE(struct fp__cupti_pcs_stall, CUpti_PCSamplingStallReason);
SAME_OFF(struct fp__cupti_pcs_stall, CUpti_PCSamplingStallReason, samples);

SAME_SIZE(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, cubinCrc);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, pcOffset);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, functionIndex);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, functionName);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, stallReasonCount);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, stallReason);
SAME_OFF(struct fp__cupti_pcs_pc, CUpti_PCSamplingPCData, correlationId);

SAME_SIZE(struct fp__cupti_pcs_data, CUpti_PCSamplingData);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, collectNumPcs);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, totalSamples);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, droppedSamples);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, totalNumPcs);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, remainingNumPcs);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, rangeId);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, pPcData);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, nonUsrKernelsTotalSamples);
SAME_OFF(struct fp__cupti_pcs_data, CUpti_PCSamplingData, hardwareBufferFull);

SAME_SIZE(struct fp__cupti_pcs_config_info, CUpti_PCSamplingConfigurationInfo);
SAME_OFF(struct fp__cupti_pcs_config_info, CUpti_PCSamplingConfigurationInfo, attributeStatus);
SAME_OFF(struct fp__cupti_pcs_config_info, CUpti_PCSamplingConfigurationInfo, attributeData);
_Static_assert(offsetof(struct fp__cupti_pcs_config_info,
			attributeData.stallReason.pStallReasonIndex) ==
		       offsetof(CUpti_PCSamplingConfigurationInfo,
				attributeData.stallReasonData.pStallReasonIndex),
	       "stallReasonData.pStallReasonIndex");

SAME_SIZE(struct fp__cupti_pcs_config_params, CUpti_PCSamplingConfigurationInfoParams);
SAME_OFF(struct fp__cupti_pcs_config_params, CUpti_PCSamplingConfigurationInfoParams, ctx);
SAME_OFF(struct fp__cupti_pcs_config_params, CUpti_PCSamplingConfigurationInfoParams,
	 numAttributes);
SAME_OFF(struct fp__cupti_pcs_config_params, CUpti_PCSamplingConfigurationInfoParams,
	 pPCSamplingConfigurationInfo);
SAME_SIZE(struct fp__cupti_pcs_ctx_params, CUpti_PCSamplingEnableParams);
SAME_SIZE(struct fp__cupti_pcs_ctx_params, CUpti_PCSamplingDisableParams);
SAME_OFF(struct fp__cupti_pcs_ctx_params, CUpti_PCSamplingEnableParams, ctx);
SAME_SIZE(struct fp__cupti_pcs_get_data_params, CUpti_PCSamplingGetDataParams);
SAME_OFF(struct fp__cupti_pcs_get_data_params, CUpti_PCSamplingGetDataParams, pcSamplingData);
SAME_SIZE(struct fp__cupti_pcs_num_stall_params, CUpti_PCSamplingGetNumStallReasonsParams);
SAME_OFF(struct fp__cupti_pcs_num_stall_params, CUpti_PCSamplingGetNumStallReasonsParams,
	 numStallReasons);
SAME_SIZE(struct fp__cupti_pcs_stall_params, CUpti_PCSamplingGetStallReasonsParams);
SAME_OFF(struct fp__cupti_pcs_stall_params, CUpti_PCSamplingGetStallReasonsParams,
	 stallReasonIndex);
SAME_OFF(struct fp__cupti_pcs_stall_params, CUpti_PCSamplingGetStallReasonsParams, stallReasons);
SAME_SIZE(struct fp__cupti_cubin_crc_params, CUpti_GetCubinCrcParams);
SAME_OFF(struct fp__cupti_cubin_crc_params, CUpti_GetCubinCrcParams, cubin);
SAME_OFF(struct fp__cupti_cubin_crc_params, CUpti_GetCubinCrcParams, cubinCrc);

_Static_assert(FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_config_params,
				  pPCSamplingConfigurationInfo) ==
		       CUpti_PCSamplingConfigurationInfoParamsSize,
	       "ConfigurationInfoParamsSize");
_Static_assert(FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_get_data_params, pcSamplingData) ==
		       CUpti_PCSamplingGetDataParamsSize,
	       "GetDataParamsSize");
_Static_assert(FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_ctx_params, ctx) ==
		       CUpti_PCSamplingEnableParamsSize,
	       "EnableParamsSize");
_Static_assert(FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_stall_params, stallReasons) ==
		       CUpti_PCSamplingGetStallReasonsParamsSize,
	       "GetStallReasonsParamsSize");
_Static_assert(FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_num_stall_params, numStallReasons) ==
		       CUpti_PCSamplingGetNumStallReasonsParamsSize,
	       "GetNumStallReasonsParamsSize");

#ifdef FP_HAVE_CUPTI_CALLBACKS_H
SAME_SIZE(struct fp__cupti_module_data, CUpti_ModuleResourceData);
SAME_OFF(struct fp__cupti_module_data, CUpti_ModuleResourceData, cubinSize);
SAME_OFF(struct fp__cupti_module_data, CUpti_ModuleResourceData, pCubin);
_Static_assert(FP__CUPTI_CBID_RESOURCE_MODULE_LOADED == CUPTI_CBID_RESOURCE_MODULE_LOADED, "");
#endif

_Static_assert(FP__CUPTI_STALL_REASON_STRING_SIZE == CUPTI_STALL_REASON_STRING_SIZE, "string size");
_Static_assert(FP__CUPTI_ERROR_OUT_OF_MEMORY == CUPTI_ERROR_OUT_OF_MEMORY, "OUT_OF_MEMORY");
_Static_assert(FP__CUPTI_PCS_MODE_CONTINUOUS == CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS, "");
_Static_assert(FP__CUPTI_PCS_MODE_KERNEL_SERIALIZED ==
		       CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED,
	       "");
_Static_assert(FP__CUPTI_PCS_OUTPUT_PARSED == CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED, "");
_Static_assert(FP__CUPTI_PCS_ATTR_SAMPLING_PERIOD ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_STALL_REASON ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_SCRATCH_BUFFER_SIZE ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_HARDWARE_BUFFER_SIZE ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_COLLECTION_MODE ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_ENABLE_START_STOP_CONTROL ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_OUTPUT_DATA_FORMAT ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_SAMPLING_DATA_BUFFER ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER,
	       "");
_Static_assert(FP__CUPTI_PCS_ATTR_WORKER_THREAD_PERIODIC_SLEEP_SPAN ==
		       CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN,
	       "");

#define FPT_CHECKED_AGAINST_HEADERS 1
#else
#define FPT_CHECKED_AGAINST_HEADERS 0
#endif

/* The facts the collector relies on, with or without headers (LP64 Linux). */
TEST(cupti_pcs_abi_layout)
{
	ASSERT_EQ(sizeof(struct fp__cupti_pcs_stall), 8);
	ASSERT_EQ(offsetof(struct fp__cupti_pcs_pc, correlationId), 56);
	ASSERT_EQ(sizeof(struct fp__cupti_pcs_pc), 64);
	ASSERT_EQ(offsetof(struct fp__cupti_pcs_data, hardwareBufferFull), 72);
	ASSERT_EQ(sizeof(struct fp__cupti_pcs_data), 80);
	ASSERT_EQ(sizeof(struct fp__cupti_pcs_config_info), 32);
	ASSERT_EQ(FP__CUPTI_PCS_SIZE(struct fp__cupti_pcs_ctx_params, ctx), 24);
	ASSERT(FPT_CHECKED_AGAINST_HEADERS == 0 || FPT_CHECKED_AGAINST_HEADERS == 1);
}
