/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of NVIDIA's CUPTI ABI that the CUPTI backend uses, declared by hand so that the
 * library builds without any CUDA or CUPTI header: result codes, callback domains and ids,
 * activity kinds and attributes, the callback data structs, the function-pointer types of every
 * CUPTI function we call (one X-macro list, resolved with dlsym), and the byte offsets of the
 * kernel activity record fields we read. Values and layouts are those of the CUDA 13.0 headers
 * (CUPTI_API_VERSION 130001), which keep the 12.x ones for everything here;
 * tests/unit/test-cupti-abi.c checks every struct offset and constant against the real headers
 * when CMake finds them (FP_CUPTI_HEADERS_DIR). Not a public header; nothing outside
 * src/backend/cuda/cupti*.c and its tests includes it.
 */
#ifndef FP_CUPTI_ABI_H
#define FP_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cuda/cuda-abi.h"

/* CUptiResult: an int-sized enum. */
#define FP__CUPTI_SUCCESS 0
#define FP__CUPTI_ERROR_INVALID_PARAMETER 1
#define FP__CUPTI_ERROR_MAX_LIMIT_REACHED 12
#define FP__CUPTI_ERROR_NOT_INITIALIZED 15
#define FP__CUPTI_ERROR_INVALID_KIND 21
#define FP__CUPTI_ERROR_NOT_SUPPORTED 27
#define FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES 35
#define FP__CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED 38
#define FP__CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39
#define FP__CUPTI_ERROR_UNKNOWN 999

/* CUpti_ApiCallbackSite */
#define FP__CUPTI_API_ENTER 0
#define FP__CUPTI_API_EXIT 1

/* CUpti_CallbackDomain */
#define FP__CUPTI_CB_DOMAIN_DRIVER_API 1
#define FP__CUPTI_CB_DOMAIN_RUNTIME_API 2
#define FP__CUPTI_CB_DOMAIN_RESOURCE 3

/* CUpti_driver_api_trace_cbid: the kernel-launching driver calls. */
#define FP__CUPTI_DRIVER_cuLaunch 115
#define FP__CUPTI_DRIVER_cuLaunchGrid 116
#define FP__CUPTI_DRIVER_cuLaunchGridAsync 117
#define FP__CUPTI_DRIVER_cuLaunchKernel 307
#define FP__CUPTI_DRIVER_cuLaunchKernel_ptsz 442
#define FP__CUPTI_DRIVER_cuLaunchCooperativeKernel 477
#define FP__CUPTI_DRIVER_cuLaunchCooperativeKernel_ptsz 478
#define FP__CUPTI_DRIVER_cuLaunchCooperativeKernelMultiDevice 480
#define FP__CUPTI_DRIVER_cuGraphLaunch 514
#define FP__CUPTI_DRIVER_cuGraphLaunch_ptsz 515
#define FP__CUPTI_DRIVER_cuLaunchKernelEx 652
#define FP__CUPTI_DRIVER_cuLaunchKernelEx_ptsz 653

/* CUpti_runtime_api_trace_cbid: the kernel-launching runtime calls (PyTorch's path). */
#define FP__CUPTI_RUNTIME_cudaLaunch_v3020 13
#define FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000 211
#define FP__CUPTI_RUNTIME_cudaLaunch_ptsz_v7000 213
#define FP__CUPTI_RUNTIME_cudaLaunchKernel_ptsz_v7000 214
#define FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernel_v9000 269
#define FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernel_ptsz_v9000 270
#define FP__CUPTI_RUNTIME_cudaLaunchCooperativeKernelMultiDevice_v9000 272
#define FP__CUPTI_RUNTIME_cudaGraphLaunch_v10000 311
#define FP__CUPTI_RUNTIME_cudaGraphLaunch_ptsz_v10000 312
#define FP__CUPTI_RUNTIME_cudaLaunchKernelExC_v11060 430
#define FP__CUPTI_RUNTIME_cudaLaunchKernelExC_ptsz_v11060 431
#define FP__CUPTI_RUNTIME___cudaLaunchKernel_v13000 505
#define FP__CUPTI_RUNTIME___cudaLaunchKernel_ptsz_v13000 506

/* CUpti_CallbackIdResource: the CUDA-graph bookkeeping callbacks. */
#define FP__CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING 10
#define FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED 13
#define FP__CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING 14
#define FP__CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING 19
#define FP__CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED 20

/* CUgraphNodeType */
#define FP__CU_GRAPH_NODE_TYPE_KERNEL 0

/* CUpti_ActivityKind */
#define FP__CUPTI_ACTIVITY_KIND_KERNEL 3
#define FP__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL 10

/* CUpti_ActivityFlag */
#define FP__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1u

/* CUpti_ActivityAttribute; the value of ZEROED_OUT_ACTIVITY_BUFFER is a uint8_t. */
#define FP__CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER 5

/* CUpti_SubscriberParams name lengths. */
#define FP__CUPTI_SUBSCRIBER_NAME_MAX_LEN 53
#define FP__CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN 64

/* Opaque CUPTI handles (the CUDA driver's are in cuda-abi.h). */
typedef void *fp__cupti_subscriber; /* CUpti_SubscriberHandle */

/* CUpti_CallbackData: the cbdata of the driver and runtime API domains. */
struct fp__cupti_cbdata {
	int callbackSite; /* CUpti_ApiCallbackSite */
	const char *functionName;
	const void *functionParams;
	void *functionReturnValue;
	const char *symbolName;
	fp__cu_context context;
	uint32_t contextUid;
	uint64_t *correlationData;
	uint32_t correlationId;
};

/* CUpti_ResourceData: the cbdata of the resource domain. */
struct fp__cupti_resource_data {
	fp__cu_context context;
	union {
		fp__cu_stream stream;
	} resourceHandle;
	void *resourceDescriptor; /* CUpti_GraphData * for the graph callbacks */
};

/* CUpti_GraphData */
struct fp__cupti_graph_data {
	fp__cu_graph graph;
	fp__cu_graph originalGraph;
	fp__cu_graph_node node;
	fp__cu_graph_node originalNode;
	int nodeType; /* CUgraphNodeType */
	fp__cu_graph_node dependency;
	fp__cu_graph_exec graphExec;
};

/* The head of the launch calls' parameter blocks (functionParams of the driver API callbacks,
 * generated_cuda_meta.h), up to the CUfunction: cuLaunchKernel_params, its _ptsz twin and
 * cuLaunchCooperativeKernel(_ptsz)_params start with it; cuLaunchKernelEx(_ptsz)_params has the
 * CUlaunchConfig pointer first. */
struct fp__cu_launch_kernel_params {
	void *f; /* CUfunction */
	unsigned int gridDimX, gridDimY, gridDimZ;
};

struct fp__cu_launch_kernel_ex_params {
	const void *config; /* const CUlaunchConfig * */
	void *f;            /* CUfunction */
	void **kernelParams;
	void **extra;
};

/* CUpti_SubscriberParams (cuptiSubscribe_v2, CUDA 13.0). */
struct fp__cupti_subscriber_params {
	size_t structSize;
	const char *subscriberName;
	char *oldSubscriberName;
	size_t oldSubscriberSize;
};

typedef void (*fp__cupti_callback_fn)(void *userdata, int domain, uint32_t cbid,
				      const void *cbdata);
typedef void (*fp__cupti_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*fp__cupti_complete_fn)(fp__cu_context ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid);
typedef uint64_t (*fp__cupti_timestamp_fn)(void);

/*
 * Every CUPTI function the backend calls: X(required, name, parameter list). A missing required
 * symbol makes start() fail with FP_EVENDOR naming it; optional ones are used when present.
 */
#define FP__CUPTI_FUNCS(X)                                                                        \
	X(1, cuptiGetVersion, (uint32_t *version))                                                \
	X(1, cuptiGetResultString, (int result, const char **str))                                \
	X(1, cuptiSubscribe, (fp__cupti_subscriber * sub, fp__cupti_callback_fn cb, void *user))  \
	X(0, cuptiSubscribe_v2,                                                                   \
	  (fp__cupti_subscriber * sub, fp__cupti_callback_fn cb, void *user,                      \
	   struct fp__cupti_subscriber_params *params))                                           \
	X(1, cuptiUnsubscribe, (fp__cupti_subscriber sub))                                        \
	X(1, cuptiEnableCallback,                                                                 \
	  (uint32_t enable, fp__cupti_subscriber sub, int domain, uint32_t cbid))                 \
	X(1, cuptiActivityRegisterCallbacks,                                                      \
	  (fp__cupti_request_fn req, fp__cupti_complete_fn cpl))                                  \
	X(1, cuptiActivityEnable, (int kind))                                                     \
	X(1, cuptiActivityDisable, (int kind))                                                    \
	X(1, cuptiActivityGetNextRecord, (uint8_t *buffer, size_t valid, void **record))          \
	X(1, cuptiActivityGetNumDroppedRecords, (fp__cu_context ctx, uint32_t stream, size_t *n)) \
	X(1, cuptiActivityFlushAll, (uint32_t flag))                                              \
	X(0, cuptiActivitySetAttribute, (int attr, size_t *size, void *value))                    \
	X(0, cuptiActivityRegisterTimestampCallback, (fp__cupti_timestamp_fn fn))                 \
	X(1, cuptiGetTimestamp, (uint64_t *ts))                                                   \
	X(1, cuptiGetGraphNodeId, (fp__cu_graph_node node, uint64_t *id))                         \
	X(0, cuptiGetGraphId, (fp__cu_graph graph, uint32_t *id))                                 \
	X(0, cuptiGetGraphExecId, (fp__cu_graph_exec exec, uint32_t *id))

#define FP__CUPTI_FN_TYPE(req, name, params) typedef int(*fp__cupti_##name##_fn) params;
FP__CUPTI_FUNCS(FP__CUPTI_FN_TYPE)
#undef FP__CUPTI_FN_TYPE

/*
 * CUpti_ActivityKernel10 (13.0), CUpti_ActivityKernel9 (12.x): packed, 8-byte aligned. Both
 * share every offset below; Kernel10 only appends isDeviceLaunched and padding. The reader
 * touches nothing past FP__CUPTI_K_MIN_SIZE, so it works on every record size listed in
 * cupti-records.c.
 */
#define FP__CUPTI_K_KIND 0            /* uint32_t CUpti_ActivityKind */
#define FP__CUPTI_K_REGISTERS 6       /* uint16_t registersPerThread */
#define FP__CUPTI_K_START 16          /* uint64_t ns */
#define FP__CUPTI_K_END 24            /* uint64_t ns */
#define FP__CUPTI_K_DEVICE_ID 40      /* uint32_t */
#define FP__CUPTI_K_CONTEXT_ID 44     /* uint32_t */
#define FP__CUPTI_K_STREAM_ID 48      /* uint32_t */
#define FP__CUPTI_K_GRID_X 52         /* int32_t x 3 */
#define FP__CUPTI_K_BLOCK_X 64        /* int32_t x 3 */
#define FP__CUPTI_K_STATIC_SMEM 76    /* int32_t bytes */
#define FP__CUPTI_K_DYNAMIC_SMEM 80   /* int32_t bytes */
#define FP__CUPTI_K_CORRELATION 92    /* uint32_t */
#define FP__CUPTI_K_NAME 104          /* const char * */
#define FP__CUPTI_K_GRAPH_NODE_ID 144 /* uint64_t */
#define FP__CUPTI_K_GRAPH_ID 156      /* uint32_t */
#define FP__CUPTI_K_MIN_SIZE 160      /* bytes a record needs for the fields above */
#define FP__CUPTI_K_SIZE_V9 208       /* sizeof(CUpti_ActivityKernel9) */
#define FP__CUPTI_K_SIZE_V10 216      /* sizeof(CUpti_ActivityKernel10) */

#endif /* FP_CUPTI_ABI_H */
