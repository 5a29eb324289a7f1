/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The test-control side of libfakecupti.so, a stand-in for NVIDIA's libcupti that the CUPTI
 * backend's unit tests load through FLAGPRISM_CUPTI_PATH. The library implements the subset of
 * the CUPTI API the backend calls (and a few CUDA driver calls for the device table); these
 * functions let a test play the GPU: fire launch and graph callbacks, write kernel activity
 * records into the buffers the backend hands out, drop records, refuse the subscription. Tests
 * reach them with dlsym on the same library. Not part of FlagPrism.
 */
#ifndef FAKE_CUPTI_H
#define FAKE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

/* One kernel activity record to write. kind 0 means CONCURRENT_KERNEL (10). */
struct fake_kernel {
	uint32_t kind;
	uint32_t corr;
	uint64_t start, end;
	uint32_t device, context, stream;
	int32_t grid[3], block[3];
	uint16_t registers;
	int32_t static_smem, dynamic_smem;
	uint64_t graph_node;
	uint32_t graph_id;
	const char *name; /* copied by the library; NULL writes a NULL name */
};

#define FAKE_CUPTI_CONTROL(X)                                                                  \
	X(void, fake_cupti_reset, (void))                                                      \
	X(void, fake_cupti_set_version, (uint32_t version))                                    \
	X(void, fake_cupti_set_busy, (const char *other))                                      \
	X(void, fake_cupti_set_ignore_timestamp_callback, (int on))                            \
	X(int, fake_cupti_subscribed, (void))                                                  \
	X(int, fake_cupti_callback_enabled, (int domain, uint32_t cbid))                       \
	X(int, fake_cupti_kind_enabled, (int kind))                                            \
	X(int, fake_cupti_zeroed_attr, (void))                                                 \
	X(int, fake_cupti_timestamp_callback, (void))                                          \
	X(void, fake_cupti_launch_enter, (int domain, uint32_t cbid, uint32_t corr))           \
	X(void, fake_cupti_launch_exit, (int domain, uint32_t cbid, uint32_t corr))            \
	X(void, fake_cupti_launch, (int domain, uint32_t cbid, uint32_t corr))                 \
	X(void, fake_cupti_graph_event,                                                        \
	  (uint32_t cbid, uint64_t graph, uint64_t node, uint64_t orig_node, int node_type,    \
	   uint64_t exec))                                                                     \
	X(int, fake_cupti_kernel, (const struct fake_kernel *k))                               \
	X(int, fake_cupti_raw, (const void *bytes, size_t n))                                  \
	X(void, fake_cupti_add_dropped, (size_t n))                                            \
	X(void, fake_cupti_complete, (void))                                                   \
	X(uint64_t, fake_cupti_now, (void))                                                    \
	X(uint64_t, fake_cupti_syncs, (void))                                                  \
	X(size_t, fake_cupti_record_size, (void))                                              \
	X(uint64_t, fake_cupti_records_lost, (void))                                           \
	X(void, fake_cupti_set_hold, (int on))                                                 \
	X(void, fake_cupti_launch_kernel,                                                      \
	  (int domain, uint32_t cbid, uint32_t corr, const char *symbol, const uint32_t *grid, \
	   int ret, int other_context))                                                        \
	X(void, fake_cupti_launch_fn,                                                          \
	  (int domain, uint32_t cbid, uint32_t corr, uint64_t fn, int sites))                  \
	X(void, fake_cupti_set_launch_function, (uint64_t fn))

#define FAKE_CUPTI_DECLARE(ret, name, params) ret name params;
FAKE_CUPTI_CONTROL(FAKE_CUPTI_DECLARE)
#undef FAKE_CUPTI_DECLARE

#endif /* FAKE_CUPTI_H */
