/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pieces shared by the JSON writer and reader (and their unit tests): the UTF-8 sequence
 * decoder both use to validate text, and the "C" locale both use so that number formatting and
 * parsing do not depend on the process locale. Not a public header and not a general UTF-8
 * library.
 */
#ifndef FP_JSON_INTERNAL_H
#define FP_JSON_INTERNAL_H

#include <locale.h>

/*
 * Decode one UTF-8 sequence at p[0..n) (n >= 1). Returns its length (1-4) and stores the code
 * point in *cp when it is well-formed per Unicode table 3-7 (no overlongs, no surrogates, nothing
 * above U+10FFFF). Otherwise returns 0 and stores in *bad the length of the maximal ill-formed
 * subpart (>= 1; the bytes to replace with one U+FFFD, as the Unicode "best practice" and the
 * WHATWG decoder do) and in *truncated whether the sequence was cut short by the end of the
 * input rather than by a wrong byte.
 */
static inline size_t fp__json_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp,
					  size_t *bad, bool *truncated)
{
	unsigned c = p[0], lo = 0x80, hi = 0xBF, b;
	size_t need, i;
	uint32_t v;

	*truncated = false;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		need = 1;
		v = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		v = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0; /* no overlongs */
		else if (c == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		v = c & 0x07;
		if (c == 0xF0)
			lo = 0x90; /* no overlongs */
		else if (c == 0xF4)
			hi = 0x8F; /* nothing above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (i = 1; i <= need; i++) {
		if (i >= n) {
			*bad = i;
			*truncated = true;
			return 0;
		}
		b = p[i];
		if (b < lo || b > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xBF;
		v = v << 6 | (b & 0x3F);
	}
	*cp = v;
	return need + 1;
}

/* The "C" locale, created once; (locale_t)0 if the C library could not provide it. */
locale_t fp__json_c_locale(void);

#endif /* FP_JSON_INTERNAL_H */
