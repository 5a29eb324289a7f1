/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The test-control side of the PC-sampling part of libfakecupti.so (fake-cupti-pcs.c): what the
 * backend enabled and configured, and the PC records cuptiPCSamplingGetData hands over once
 * fake_pcs_worker() "decoded" them (Disable hands over all, with the totals). Tests reach these
 * with dlsym. Not part of FlagPrism.
 */
#ifndef FAKE_CUPTI_PCS_H
#define FAKE_CUPTI_PCS_H

#include <stddef.h>
#include <stdint.h>

/* fake_pcs_state(what) */
#define FAKE_PCS_ENABLED 0  /* 1 while enabled */
#define FAKE_PCS_ENABLES 1  /* cuptiPCSamplingEnable calls that succeeded */
#define FAKE_PCS_DISABLES 2 /* cuptiPCSamplingDisable calls */
#define FAKE_PCS_GETDATA 3  /* cuptiPCSamplingGetData calls */
#define FAKE_PCS_MODE 4     /* collection mode configured */
#define FAKE_PCS_PERIOD 5   /* sampling period configured (0: none) */
#define FAKE_PCS_REASONS 6  /* stall reasons selected */

/* The stall reasons the fake reports: indexes 10, 3, 4, 7. */
#define FAKE_PCS_SELECTED 10
#define FAKE_PCS_LONG_SB 3
#define FAKE_PCS_LONG_SB_NOT_ISSUED 4
#define FAKE_PCS_MATH 7

#define FAKE_CUPTI_PCS_CONTROL(X)                                                     \
	X(void, fake_pcs_reset, (void))                                               \
	X(void, fake_pcs_set_enable_rc, (int rc))                                     \
	X(int, fake_pcs_state, (int what))                                            \
	X(int, fake_pcs_push,                                                         \
	  (uint32_t corr, uint64_t crc, uint64_t pc, const char *fn, uint32_t reason, \
	   uint32_t samples))                                                         \
	X(void, fake_pcs_add_totals, (uint64_t total, uint64_t dropped))              \
	X(void, fake_pcs_worker, (void))                                              \
	X(void, fake_cupti_resource, (uint32_t cbid, const void *descriptor))

#define FAKE_CUPTI_PCS_DECLARE(ret, name, params) ret name params;
FAKE_CUPTI_PCS_CONTROL(FAKE_CUPTI_PCS_DECLARE)
#undef FAKE_CUPTI_PCS_DECLARE

#endif /* FAKE_CUPTI_PCS_H */
