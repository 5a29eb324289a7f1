/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CUPTI's kernel activity record, CUpti_ActivityKernel10 (CUDA 13.0), declared from the header's
 * field list for the test double and the record tests. Deliberately independent of
 * src/backend/cuda/cupti-abi.h: the backend's offsets are checked against this layout (and, where
 * NVIDIA's headers are present, against theirs). Kernel9 (12.x) is its first 208 bytes.
 */
#ifndef FAKE_CUPTI_RECORD_H
#define FAKE_CUPTI_RECORD_H

#include <stdint.h>

struct __attribute__((packed, aligned(8))) fake_kernel10 {
	uint32_t kind;
	uint8_t cacheConfig;
	uint8_t sharedMemoryConfig;
	uint16_t registersPerThread;
	uint32_t partitionedGlobalCacheRequested;
	uint32_t partitionedGlobalCacheExecuted;
	uint64_t start;
	uint64_t end;
	uint64_t completed;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	int32_t gridX, gridY, gridZ;
	int32_t blockX, blockY, blockZ;
	int32_t staticSharedMemory;
	int32_t dynamicSharedMemory;
	uint32_t localMemoryPerThread;
	uint32_t localMemoryTotal;
	uint32_t correlationId;
	int64_t gridId;
	const char *name;
	void *reserved0;
	uint64_t queued;
	uint64_t submitted;
	uint8_t launchType;
	uint8_t isSharedMemoryCarveoutRequested;
	uint8_t sharedMemoryCarveoutRequested;
	uint8_t padding;
	uint32_t sharedMemoryExecuted;
	uint64_t graphNodeId;
	uint32_t shmemLimitConfig;
	uint32_t graphId;
	void *pAccessPolicyWindow;
	uint32_t channelID;
	uint32_t channelType;
	uint32_t clusterX, clusterY, clusterZ;
	uint32_t clusterSchedulingPolicy;
	uint64_t localMemoryTotal_v2;
	uint32_t maxPotentialClusterSize;
	uint32_t maxActiveClusters;
	uint8_t isDeviceLaunched;
	uint8_t padding3[7];
};

_Static_assert(sizeof(struct fake_kernel10) == 216, "CUpti_ActivityKernel10 is 216 bytes");

#endif /* FAKE_CUPTI_RECORD_H */
