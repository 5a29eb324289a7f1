/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks src/backend/cuda/cupti-abi.h, our hand-written copy of the CUPTI ABI, against NVIDIA's own
 * headers when CMake found them (FP_CUPTI_HEADERS_DIR; Triton's wheel ships them): struct
 * offsets, record offsets, enum values and callback ids, as static assertions, so a mismatch
 * fails the build of this file. Without headers only the internal consistency of the record
 * offsets is tested. Kernel10 and cuptiSubscribe_v2 exist only in 13.0 headers; Triton 3.6's
 * are 12.8, whose Kernel9 shares every offset we read.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef FP_HAVE_CUPTI_HEADERS
#include <cupti.h>
#endif

#include "backend/cuda/cupti-abi.h"
#include "test.h"

#ifdef FP_HAVE_CUPTI_HEADERS

#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 fpt_kernel;
#define FPT_KERNEL_SIZE FP__CUPTI_K_SIZE_V10
#else
typedef CUpti_ActivityKernel9 fpt_kernel;
#define FPT_KERNEL_SIZE FP__CUPTI_K_SIZE_V9
#endif

#define SAME_OFF(ours, theirs, field) \
	_Static_assert(offsetof(ours, field) == offsetof(theirs, field), #theirs "." #field)
#define REC_OFF(ours, field) \
	_Static_assert(ours == offsetof(fpt_kernel, field), "kernel record offset of " #field)

/* Kernel record */
REC_OFF(FP__CUPTI_K_KIND, kind);
REC_OFF(FP__CUPTI_K_REGISTERS, registersPerThread);
REC_OFF(FP__CUPTI_K_START, start);
REC_OFF(FP__CUPTI_K_END, end);
REC_OFF(FP__CUPTI_K_DEVICE_ID, deviceId);
REC_OFF(FP__CUPTI_K_CONTEXT_ID, contextId);
REC_OFF(FP__CUPTI_K_STREAM_ID, streamId);
REC_OFF(FP__CUPTI_K_GRID_X, gridX);
REC_OFF(FP__CUPTI_K_GRID_X + 4, gridY);
REC_OFF(FP__CUPTI_K_GRID_X + 8, gridZ);
REC_OFF(FP__CUPTI_K_BLOCK_X, blockX);
REC_OFF(FP__CUPTI_K_BLOCK_X + 4, blockY);
REC_OFF(FP__CUPTI_K_BLOCK_X + 8, blockZ);
REC_OFF(FP__CUPTI_K_STATIC_SMEM, staticSharedMemory);
REC_OFF(FP__CUPTI_K_DYNAMIC_SMEM, dynamicSharedMemory);
REC_OFF(FP__CUPTI_K_CORRELATION, correlationId);
REC_OFF(FP__CUPTI_K_NAME, name);
REC_OFF(FP__CUPTI_K_GRAPH_NODE_ID, graphNodeId);
REC_OFF(FP__CUPTI_K_GRAPH_ID, graphId);
_Static_assert(sizeof(fpt_kernel) == FPT_KERNEL_SIZE, "kernel record size");
_Static_assert(sizeof(CUpti_ActivityKernel9) == FP__CUPTI_K_SIZE_V9, "Kernel9 size");
_Static_assert(FP__CUPTI_K_MIN_SIZE == offsetof(fpt_kernel, graphId) + sizeof(uint32_t),
	       "FP__CUPTI_K_MIN_SIZE ends at graphId");
_Static_assert(sizeof(((fpt_kernel *)0)->registersPerThread) == 2, "registers are 16-bit");
_Static_assert(sizeof(((fpt_kernel *)0)->kind) == 4, "kind is 32-bit");

/* Callback data */
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, callbackSite);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, functionName);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, functionParams);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, functionReturnValue);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, symbolName);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, context);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, contextUid);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, correlationData);
SAME_OFF(struct fp__cupti_cbdata, CUpti_CallbackData, correlationId);
_Static_assert(sizeof(struct fp__cupti_cbdata) == sizeof(CUpti_CallbackData), "cbdata size");

/* The launch calls' parameter blocks, up to the CUfunction (the estimate lookup reads `f`);
 * cupti.h brings generated_cuda_meta.h in. */
SAME_OFF(struct fp__cu_launch_kernel_params, cuLaunchKernel_params, f);
SAME_OFF(struct fp__cu_launch_kernel_params, cuLaunchKernel_params, gridDimX);
SAME_OFF(struct fp__cu_launch_kernel_params, cuLaunchKernel_ptsz_params, f);
SAME_OFF(struct fp__cu_launch_kernel_params, cuLaunchCooperativeKernel_params, f);
SAME_OFF(struct fp__cu_launch_kernel_params, cuLaunchCooperativeKernel_ptsz_params, f);
SAME_OFF(struct fp__cu_launch_kernel_ex_params, cuLaunchKernelEx_params, config);
SAME_OFF(struct fp__cu_launch_kernel_ex_params, cuLaunchKernelEx_params, f);
SAME_OFF(struct fp__cu_launch_kernel_ex_params, cuLaunchKernelEx_ptsz_params, f);
SAME_OFF(struct fp__cupti_resource_data, CUpti_ResourceData, context);
SAME_OFF(struct fp__cupti_resource_data, CUpti_ResourceData, resourceHandle);
SAME_OFF(struct fp__cupti_resource_data, CUpti_ResourceData, resourceDescriptor);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, graph);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, originalGraph);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, node);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, originalNode);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, nodeType);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, dependency);
SAME_OFF(struct fp__cupti_graph_data, CUpti_GraphData, graphExec);
_Static_assert(sizeof(struct fp__cupti_graph_data) == sizeof(CUpti_GraphData), "graph data");
#if CUPTI_API_VERSION >= 130000
SAME_OFF(struct fp__cupti_subscriber_params, CUpti_SubscriberParams, structSize);
SAME_OFF(struct fp__cupti_subscriber_params, CUpti_SubscriberParams, subscriberName);
SAME_OFF(struct fp__cupti_subscriber_params, CUpti_SubscriberParams, oldSubscriberName);
SAME_OFF(struct fp__cupti_subscriber_params, CUpti_SubscriberParams, oldSubscriberSize);
_Static_assert(sizeof(struct fp__cupti_subscriber_params) == CUpti_SubscriberParams_STRUCT_SIZE,
	       "subscriber params size");
_Static_assert(FP__CUPTI_SUBSCRIBER_NAME_MAX_LEN == CUPTI_SUBSCRIBER_NAME_MAX_LEN, "name max");
_Static_assert(FP__CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN == CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN,
	       "old name min");
#endif

/* Values */
#define SAME(ours, theirs) _Static_assert((ours) == (theirs), #theirs)
SAME(FP__CUPTI_SUCCESS, CUPTI_SUCCESS);
SAME(FP__CUPTI_ERROR_INVALID_PARAMETER, CUPTI_ERROR_INVALID_PARAMETER);
SAME(FP__CUPTI_ERROR_MAX_LIMIT_REACHED, CUPTI_ERROR_MAX_LIMIT_REACHED);
SAME(FP__CUPTI_ERROR_NOT_INITIALIZED, CUPTI_ERROR_NOT_INITIALIZED);
SAME(FP__CUPTI_ERROR_INVALID_KIND, CUPTI_ERROR_INVALID_KIND);
SAME(FP__CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_NOT_SUPPORTED);
SAME(FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
SAME(FP__CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
SAME(FP__CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
SAME(FP__CUPTI_ERROR_UNKNOWN, CUPTI_ERROR_UNKNOWN);
SAME(FP__CUPTI_API_ENTER, CUPTI_API_ENTER);
SAME(FP__CUPTI_API_EXIT, CUPTI_API_EXIT);
SAME(FP__CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_DRIVER_API);
SAME(FP__CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_RUNTIME_API);
SAME(FP__CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_RESOURCE);
SAME(FP__CUPTI_DRIVER_cuLaunch, CUPTI_DRIVER_TRACE_CBID_cuLaunch);
SAME(FP__CUPTI_DRIVER_cuLaunchGrid, CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid);
SAME(FP__CUPTI_DRIVER_cuLaunchGridAsync, CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync);
SAME(FP__CUPTI_DRIVER_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
SAME(FP__CUPTI_DRIVER_cuLaunchKernel_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz);
SAME(FP__CUPTI_DRIVER_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel);
SAME(FP__CUPTI_DRIVER_cuLaunchCooperativeKernel_ptsz,
     CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz);
SAME(FP__CUPTI_DRIVER_cuLaunchCooperativeKernelMultiDevice,
     CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice);
SAME(FP__CUPTI_DRIVER_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
SAME(FP__CUPTI_DRIVER_cuGraphLaunch_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz);
SAME(FP__CUPTI_DRIVER_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
SAME(FP__CUPTI_DRIVER_cuLaunchKernelEx_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz);
SAME(FP__CUPTI_RUNTIME_cudaLaunch_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020);
SAME(FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
SAME(FP__CUPTI_RUNTIME_cudaLaunch_ptsz_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000);
SAME(FP__CUPTI_RUNTIME_cudaLaunchKernel_ptsz_v7000,
     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
SAME(FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernel_v9000,
     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000);
SAME(FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernel_ptsz_v9000,
     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000);
SAME(FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernelMultiDevice_v9000,
     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000);
SAME(FP__CUPTI_RUNTIME_cudaGraphLaunch_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
SAME(FP__CUPTI_RUNTIME_cudaGraphLaunch_ptsz_v10000,
     CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000);
SAME(FP__CUPTI_RUNTIME_cudaLaunchKernelExC_v11060,
     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060);
SAME(FP__CUPTI_RUNTIME_cudaLaunchKernelExC_ptsz_v11060,
     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060);
#if CUPTI_API_VERSION >= 130000
SAME(FP__CUPTI_RUNTIME___cudaLaunchKernel_v13000,
     CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
SAME(FP__CUPTI_RUNTIME___cudaLaunchKernel_ptsz_v13000,
     CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000);
#endif
SAME(FP__CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING);
SAME(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
SAME(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING,
     CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING);
SAME(FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
     CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING);
SAME(FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
SAME(FP__CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_KERNEL);
SAME(FP__CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL);
SAME(FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
SAME(FP__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
SAME(FP__CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
     CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER);
SAME(FP__CU_ATTR_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME(FP__CU_ATTR_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
SAME(FP__CU_ATTR_MEMORY_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
SAME(FP__CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
SAME(FP__CU_ATTR_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME(FP__CU_ATTR_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME(sizeof(CUptiResult), sizeof(int));
SAME(sizeof(CUpti_CallbackDomain), sizeof(int));
SAME(sizeof(CUpti_ActivityKind), sizeof(int));

#endif /* FP_HAVE_CUPTI_HEADERS */

TEST(cupti_abi_headers)
{
#ifdef FP_HAVE_CUPTI_HEADERS
	/* Everything above is a static assertion; at run time say which headers were used. */
	printf("checked against CUPTI headers, CUPTI_API_VERSION %d\n", (int)CUPTI_API_VERSION);
#else
	printf("no CUPTI headers found (FP_CUPTI_HEADERS_DIR): only internal checks\n");
#endif
	ASSERT(1);
}

TEST(cupti_abi_record_offsets_consistent)
{
	/* Every field we read lies inside FP__CUPTI_K_MIN_SIZE and inside every known size. */
	static const struct {
		size_t off, size;
	} f[] = {
		{FP__CUPTI_K_KIND, 4},
		{FP__CUPTI_K_REGISTERS, 2},
		{FP__CUPTI_K_START, 8},
		{FP__CUPTI_K_END, 8},
		{FP__CUPTI_K_DEVICE_ID, 4},
		{FP__CUPTI_K_CONTEXT_ID, 4},
		{FP__CUPTI_K_STREAM_ID, 4},
		{FP__CUPTI_K_GRID_X, 12},
		{FP__CUPTI_K_BLOCK_X, 12},
		{FP__CUPTI_K_STATIC_SMEM, 4},
		{FP__CUPTI_K_DYNAMIC_SMEM, 4},
		{FP__CUPTI_K_CORRELATION, 4},
		{FP__CUPTI_K_NAME, sizeof(void *)},
		{FP__CUPTI_K_GRAPH_NODE_ID, 8},
		{FP__CUPTI_K_GRAPH_ID, 4},
	};
	size_t i, j;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		ASSERT_LE(f[i].off + f[i].size, FP__CUPTI_K_MIN_SIZE);
		for (j = 0; j < i; j++)
			ASSERT(f[i].off >= f[j].off + f[j].size ||
			       f[j].off >= f[i].off + f[i].size);
	}
	ASSERT_EQ(FP__CUPTI_K_SIZE_V9 % 8, 0);
	ASSERT_EQ(FP__CUPTI_K_SIZE_V10 % 8, 0);
	ASSERT_GE(FP__CUPTI_K_SIZE_V9, FP__CUPTI_K_MIN_SIZE);
}
