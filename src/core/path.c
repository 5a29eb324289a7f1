/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Matching source paths that different tools wrote differently: one tool records an absolute
 * path, another the same file relative to some directory (TTIR locations, DWARF line tables,
 * Python code objects, the Debugger's launch JSON). Two paths name the same file when they are
 * equal or one ends with "/" + the other. Not path normalisation ("..", symlinks) and not a
 * filesystem check: the strings alone decide.
 */
#include "fp-setup.h"

#include "core/core-internal.h"

bool fp__path_suffix_match(const char *a, const char *b)
{
	size_t la, lb;

	if (!a || !b)
		return false;
	la = strlen(a);
	lb = strlen(b);
	if (la == lb)
		return strcmp(a, b) == 0;
	if (la < lb) {
		const char *t = a;

		a = b;
		b = t;
		la = lb;
		lb = strlen(b);
	}
	return lb > 0 && a[la - lb - 1] == '/' && strcmp(a + la - lb, b) == 0;
}
