/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the little-endian 64-bit words of the buffers the GPU side writes (the Debugger's
 * record buffer, the timeline buffer): one definition for the decoders that walk them. Not a
 * public header and not a general byte-order library; the cursor parsers of file formats keep
 * their own bounds-checked readers.
 */
#ifndef FP_BYTES_INTERNAL_H
#define FP_BYTES_INTERNAL_H

#include <stdint.h>
#include <string.h>

/* The little-endian word at p (8 readable bytes, any alignment). */
static inline uint64_t fp__bytes_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

#endif /* FP_BYTES_INTERNAL_H */
