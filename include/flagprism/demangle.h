/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A demangler of C++ symbol names (the Itanium C++ ABI's mangling, what GCC, Clang and NVCC
 * emit), written for kernel names: PyTorch's, cuBLAS's, CUTLASS's and other C++ CUDA kernels
 * reach the profiler as `_ZN2at6native29vectorized_elementwise_kernel...`. It covers nested and
 * local names, templates and their arguments (types, literals, packs, simple expressions),
 * substitutions and template parameters, lambdas and unnamed types, ABI tags, function, pointer,
 * reference, array and member-pointer types, operators, constructors and destructors, and a few
 * special names. It needs no C++ runtime, never reads past `len`, allocates through fp_malloc,
 * and bounds its output (FP_DEMANGLE_MAX bytes), its recursion and its tables.
 *
 * Two forms: FP_DEMANGLE_FULL reads like `c++filt`'s (`void at::native::foo<4,
 * at::native::AbsFunctor<float> >(int, at::native::AbsFunctor<float>)`); FP_DEMANGLE_SHORT is
 * for display: no return type, no parameter lists (of the function, of functions it is local
 * to, of lambdas), and every template argument list shown as `<...>` unless it is a single
 * identifier or number (`cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4>`
 * stays, `at::native::vectorized_elementwise_kernel<...>` is elided).
 *
 * Not here: demangling other schemes (MSVC, Rust v0, D), or names inside longer text.
 */
#ifndef FLAGPRISM_DEMANGLE_H
#define FLAGPRISM_DEMANGLE_H

#include <stddef.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP_DEMANGLE_MAX 16384u /* bytes of demangled text (before the short form) */

enum fp_demangle_form {
	FP_DEMANGLE_FULL = 0,
	FP_DEMANGLE_SHORT = 1,
};

/**
 * Demangle `name[0..len)` (it must be the whole symbol, `_Z...` or `__Z...`, optionally with
 * `.suffix` clone parts) into `out`, NUL-terminated, at most `cap` bytes with the NUL; the text's
 * length goes to *out_len (may be NULL). Returns FP_OK, FP_EINVAL (bad arguments), FP_EFORMAT
 * (not a mangled name, or malformed), FP_ENOTSUP (a construct this demangler does not cover),
 * FP_ELIMIT (the result would exceed `cap` or FP_DEMANGLE_MAX, or nests too deeply) or FP_ENOMEM.
 * `out` is written only on success. A caller that gets an error shows the name as it was.
 */
FP_EXTERN int fp_demangle(const char *name, size_t len, enum fp_demangle_form form, char *out,
			  size_t cap, size_t *out_len);

/** Whether `name[0..len)` looks mangled (starts with `_Z` or `__Z`): worth demangling. */
FP_EXTERN int fp_demangle_is_mangled(const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_DEMANGLE_H */
