/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of the CUDA driver API (cuda.h) that FlagPrism calls, declared by hand so that the
 * library builds without any CUDA header: the opaque handles, every driver entry point it calls
 * (one X-macro list, resolved with dlsym by the one loader, driver.c) and the enum values it
 * passes. Device addresses (CUdeviceptr) and streams (CUstream) are passed as 64-bit integers,
 * which the x86-64 and AArch64 calling conventions pass as they pass the driver's own types. Not
 * a public header; nothing outside src/backend/cuda/ and its tests includes it.
 */
#ifndef FP_CUDA_ABI_H
#define FP_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Opaque CUDA handles. */
typedef void *fp__cu_context;    /* CUcontext */
typedef void *fp__cu_stream;     /* CUstream */
typedef void *fp__cu_graph;      /* CUgraph */
typedef void *fp__cu_graph_node; /* CUgraphNode */
typedef void *fp__cu_graph_exec; /* CUgraphExec */

/*
 * The driver entry points FlagPrism calls, all required: the CUPTI backend's (device table,
 * the synchronize before a flush) and device memory's (<flagprism/devmem.h>: contexts,
 * asynchronous copies, page-locked host memory, events). Entry points only some features need
 * (the primary context of hardware metrics and PC sampling) are looked up by those features in
 * the loaded library.
 */
#define FP__CU_FUNCS(X)                                                                     \
	X(cuInit, (unsigned flags))                                                         \
	X(cuGetErrorName, (int err, const char **name))                                     \
	X(cuDeviceGetCount, (int *count))                                                   \
	X(cuDeviceGet, (int *dev, int ordinal))                                             \
	X(cuDeviceGetAttribute, (int *value, int attr, int dev))                            \
	X(cuCtxGetCurrent, (fp__cu_context * ctx))                                          \
	X(cuCtxSynchronize, (void))                                                         \
	X(cuCtxPushCurrent_v2, (fp__cu_context ctx))                                        \
	X(cuCtxPopCurrent_v2, (fp__cu_context * ctx))                                       \
	X(cuPointerGetAttribute, (void *data, int attr, uint64_t ptr))                      \
	X(cuMemsetD8Async, (uint64_t dptr, unsigned char v, size_t n, uint64_t stream))     \
	X(cuMemcpyHtoDAsync_v2, (uint64_t dst, const void *src, size_t n, uint64_t stream)) \
	X(cuMemcpyDtoHAsync_v2, (void *dst, uint64_t src, size_t n, uint64_t stream))       \
	X(cuStreamSynchronize, (uint64_t stream))                                           \
	X(cuMemHostAlloc, (void **pp, size_t n, unsigned flags))                            \
	X(cuMemFreeHost, (void *p))                                                         \
	X(cuEventCreate, (void **ev, unsigned flags))                                       \
	X(cuEventRecord, (void *ev, uint64_t stream))                                       \
	X(cuEventSynchronize, (void *ev))                                                   \
	X(cuEventDestroy_v2, (void *ev))

#define FP__CU_FN_TYPE(name, params) typedef int(*fp__cu_##name##_fn) params;
FP__CU_FUNCS(FP__CU_FN_TYPE)
#undef FP__CU_FN_TYPE

/* CUdevice_attribute values of the device table (Proton's keys). */
#define FP__CU_ATTR_MULTIPROCESSOR_COUNT 16
#define FP__CU_ATTR_CLOCK_RATE 13
#define FP__CU_ATTR_MEMORY_CLOCK_RATE 36
#define FP__CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH 37
#define FP__CU_ATTR_COMPUTE_CAPABILITY_MAJOR 75
#define FP__CU_ATTR_COMPUTE_CAPABILITY_MINOR 76

/* CU_POINTER_ATTRIBUTE_CONTEXT */
#define FP__CU_POINTER_ATTRIBUTE_CONTEXT 1
/* CU_MEMHOSTALLOC_PORTABLE, CU_EVENT_DISABLE_TIMING */
#define FP__CU_MEMHOSTALLOC_PORTABLE 1u
#define FP__CU_EVENT_DISABLE_TIMING 2u

#endif /* FP_CUDA_ABI_H */
