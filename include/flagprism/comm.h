/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Communication in profiles: the collectives of a multi-process job, seen from two sides. From
 * the host, a torch.distributed call (all_reduce, all_gather, broadcast, ...) becomes a
 * *collective scope* of the profiling sessions: a node named "<backend>:<op>" ("gloo:all_reduce",
 * "nccl:all_reduce") under the scopes open on the calling thread, with the message size, the
 * call count, the host time of the call and the communicator's ranks, and a slice on the
 * thread's "collectives" track of the trace. From the device, the kernels of a collective
 * library (NCCL's "ncclDevKernel_AllReduce_Sum_f32_RING_LL", RCCL's) are recognised by name and
 * filed under one node per collective kind ("nccl:AllReduce"), unless they were launched inside
 * a collective scope (then that scope is their group), and drawn on "communication" tracks of
 * the trace, apart from compute.
 *
 * Not here: intercepting torch.distributed (the Python layer registers the hooks and calls
 * fp_comm_enter()/fp_comm_exit()), and anything about ranks or merging (<flagprism/ranks.h>).
 */
#ifndef FLAGPRISM_COMM_H
#define FLAGPRISM_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- collective kernels ---------------------------------------------------------------------- */

/** What a collective library's kernel name says. Pointers are borrowed from the name. */
struct fp_comm_kernel {
	const char *library; /* "nccl" (NCCL and RCCL) */
	const char *kind;    /* "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
				"SendRecv", "Generic", ... (the name's own word) */
	size_t kind_len;
};

/**
 * Recognise a collective library's kernel: names starting "ncclDevKernel_<Kind>" (NCCL 2.19 and
 * later), "ncclKernel_<Kind>" (earlier), with or without C++ mangling ("_Z<len>ncclDevKernel_...")
 * or a demangled argument list. <Kind> is the text up to the next '_', '(' or the end of the
 * identifier and must start with a capital letter. Returns true and fills *out (may be NULL)
 * for such a name, false for any other. Never fails; reads at most `len` bytes.
 */
FP_EXTERN bool fp_comm_kernel_parse(const char *name, size_t len, struct fp_comm_kernel *out);

/* ---- collective scopes ------------------------------------------------------------------------ */

/* Bits of fp_comm_call.flags. */
#define FP_COMM_ASYNC (1u << 0) /* async_op=True: the scope covers issuing, not completion */

/** One collective call, as the hook saw it. Strings are borrowed for the call. */
struct fp_comm_call {
	const char *backend; /* "gloo", "nccl", ...: the node is "<backend>:<op>" */
	const char *op;      /* "all_reduce", "all_gather_into_tensor", "broadcast", ... */
	uint64_t bytes;      /* this rank's message: see docs/guide/profiler.md ("Collectives") */
	const char *ranks;   /* the communicator's global ranks as text ("0-3"), NULL: unknown */
	uint32_t group_size; /* ranks in the communicator, 0: unknown */
	unsigned flags;      /* FP_COMM_* */
};

/**
 * Open a collective scope on the calling thread in `session` (or FP_PROF_ALL: every open
 * session), as fp_prof_scope_enter() opens a scope; kernels launched until fp_comm_exit() land
 * under it. Its node gets "comm_bytes" (+= bytes), "comm_count" (+= 1), "comm_kind (pty)" (op)
 * and, when known, "comm_ranks (pty)" and "comm_group_size (max)". FP_OK, FP_EINVAL (NULL or
 * empty backend or op), FP_ENOENT (no such session), FP_ELIMIT (scope depth), FP_ENOMEM.
 */
FP_EXTERN int fp_comm_enter(int session, const struct fp_comm_call *c);

/**
 * Close the calling thread's innermost scope, which must be a collective scope: adds the call's
 * host time to "comm_time (ns)" of its node and, for trace sessions, a slice on the thread's
 * collectives track with the bytes, ranks and kind. FP_OK; FP_ESTATE when the innermost scope is
 * not a collective scope (nothing is closed; diag says which scope is open); FP_ENOENT.
 */
FP_EXTERN int fp_comm_exit(int session, struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_COMM_H */
