/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Symbol visibility for the public API. The library is built with hidden visibility; only
 * declarations marked FP_EXTERN are exported from a shared build. Not for anything else.
 */
#ifndef FLAGPRISM_EXPORT_H
#define FLAGPRISM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define FP_EXTERN __attribute__((visibility("default")))
#else
#define FP_EXTERN
#endif

#endif /* FLAGPRISM_EXPORT_H */
