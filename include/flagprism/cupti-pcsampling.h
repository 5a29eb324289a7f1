/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PC sampling in the CUPTI backend (mode "pcsampling"): CUPTI's PC-sampling API samples the
 * program counter and stall reason of warps on every SM while kernels run; the backend files
 * the samples under each launch's kernel node, one child node per source line of the kernel
 * (for Triton kernels: the Python file and line of the @triton.jit code), with the metrics
 * num_samples, num_stalled_samples and stalled_<reason>. A session asks for it with
 * fp_cupti_pcsampling_request() before fp_prof_start(backend "cupti"). docs/internals/cupti-backend.md
 * ("PC sampling") says what it measures, what it costs and which permissions it needs.
 *
 * Source lines come from the cubins' line tables (the library's cubin reader). The backend
 * copies every module CUDA loads while sampling runs; kernels whose module was loaded earlier
 * need their cubin handed over with fp_cupti_pcsampling_add_cubin() (the Python layer does it
 * for Triton kernels), or their samples land under "<unknown cubin>".
 */
#ifndef FLAGPRISM_CUPTI_PCSAMPLING_H
#define FLAGPRISM_CUPTI_PCSAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fp_cupti_pcsampling_options {
	uint32_t sampling_period; /* samples every 2^N cycles per SM, N in 5..31; 0: CUPTI's
				   * default (from the SM count) */
	bool serialized;          /* CUPTI's kernel-serialized mode: samples carry the launch's
				   * correlation id. Off by default: on an H200 with CUDA 13.0 it
				   * collected no samples at all (docs/internals/cupti-backend.md). The default,
				   * continuous mode, splits a kernel's samples among the call-tree
				   * nodes that launched it, in proportion to their GPU time */
};

/**
 * Ask the next CUPTI session started in this process to sample PCs (`opt` NULL: defaults). The
 * request is consumed by that start, which fails with FP_EBUSY when hardware metrics are
 * requested too or another session samples, FP_ENOTSUP when the driver denies counter access
 * (the message says how to allow it). FP_OK or FP_EINVAL (a period outside 5..31).
 */
FP_EXTERN int fp_cupti_pcsampling_request(const struct fp_cupti_pcsampling_options *opt,
					  struct fp_diag *diag);

/** Withdraw a request no start consumed (the start failed before it got there). */
FP_EXTERN void fp_cupti_pcsampling_cancel(void);

/** True between the start and the stop of a PC-sampling session. */
FP_EXTERN bool fp_cupti_pcsampling_active(void);

/**
 * Hand over a cubin (ELF bytes, e.g. Triton's CompiledKernel.asm["cubin"]), copied. Its CRC is
 * computed by CUPTI when a session samples, else kept until one starts. Duplicates are ignored.
 * FP_OK, FP_EINVAL, FP_ELIMIT (too many waiting), FP_ENOMEM.
 */
FP_EXTERN int fp_cupti_pcsampling_add_cubin(const void *cubin, size_t size);

/** What the last (or the running) PC-sampling session saw. */
struct fp_cupti_pcsampling_stats {
	bool active;
	uint64_t total_samples;   /* CUPTI's totalSamples (includes dropped and non-user) */
	uint64_t dropped_samples; /* dropped by the hardware (buffer full / backpressure) */
	uint64_t nonuser_samples; /* in kernels CUPTI gives no PC records for */
	uint64_t samples;         /* in PC records (issue-stall reasons) */
	uint64_t on_lines;        /* of which filed on a source line */
	uint64_t no_line, no_cubin, no_launch; /* filed under the nodes named for why */
	uint64_t lost;              /* not counted: counter table full (samples + lost = CUPTI's
				   * totalSamples - dropped - non-user) */
	uint64_t unfiled;           /* counted but not filed: tree caps, memory (on_lines + no_line
				   * + no_cubin + unfiled = samples) */
	uint64_t bad_records;       /* PC records CUPTI gave that could not be read */
	uint64_t hw_buffer_full;    /* drains that found the hardware buffer full */
	uint64_t cubins;            /* cubins known (module loads + handed over) */
	uint64_t cubins_unreadable; /* whose line table could not be read */
	uint64_t launches;          /* kernel records noted (their node, and in continuous mode
				     * their function and GPU time) */
	/* Diagnostics: what CUPTI answered, so that a session without samples explains itself.
	 * Statuses are CUptiResult values (0: success), -1 where the call was not made. */
	int enable_status;        /* cuptiPCSamplingEnable */
	int stall_reasons_status; /* cuptiPCSamplingGetStallReasons (GetNumStallReasons' if it failed) */
	int config_status;        /* cuptiPCSamplingSetConfigurationAttribute */
	int config_attribute;        /* the first attribute it refused (attribute type), 0: none */
	int config_attribute_status; /* that attribute's attributeStatus */
	int disable_status;          /* cuptiPCSamplingDisable */
	int last_getdata_status;     /* the last cuptiPCSamplingGetData */
	uint32_t stall_reasons;      /* stall reasons CUPTI reported (all selected) */
	uint32_t sampling_period;    /* configured (2^N cycles), 0: CUPTI's default */
	bool serialized;             /* collection mode: kernel-serialized, else continuous */
	uint64_t getdata_calls;      /* cuptiPCSamplingGetData calls */
	uint64_t getdata_errors;     /* of which failed (a full hardware buffer is not counted) */
	uint64_t getdata_records;    /* of which returned PC records */
	uint64_t max_remaining_pcs;  /* the largest remainingNumPcs seen */
	uint64_t drains;             /* backend drains: at launch exits (at most every 50 ms) and
				     * flushes; Disable hands over the rest */
};

/** Fill *out. FP_OK or FP_EINVAL. */
FP_EXTERN int fp_cupti_pcsampling_get_stats(struct fp_cupti_pcsampling_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_CUPTI_PCSAMPLING_H */
