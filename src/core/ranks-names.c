/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names of a multi-process job's outputs (<flagprism/ranks.h>): the file each rank writes
 * to ("prof.rank3.hatchet", "out/rank3/..."), the rank a path names, the compact text of a rank
 * list ("0-3,5") and the ranks missing from a job. Plain string and integer work, shared by the
 * profiler's merges, the Debugger's summary merge and the viewer; nothing here reads a file.
 */
#include "fp-setup.h"

#include <flagprism/ranks.h>

int fp_ranks_name(const char *name, int64_t rank, enum fp_ranks_place place, char *out, size_t cap)
{
	static const char ph[] = FP_RANKS_PLACEHOLDER;
	const size_t phl = sizeof(ph) - 1;
	char num[24];
	size_t used = 0, nl;
	const char *p, *hit;
	bool placed = false;
	int k;

	if (!out || cap == 0)
		return FP_EINVAL;
	out[0] = '\0';
	if (!name || !name[0] || rank < 0 || (place != FP_RANKS_SUFFIX && place != FP_RANKS_SUBDIR))
		return FP_EINVAL;
	k = snprintf(num, sizeof(num), "%" PRId64, rank);
	nl = (size_t)k;
#define PUT(s, n)                             \
	do {                                  \
		if ((n) >= cap - used)        \
			goto fail_length;     \
		memcpy(out + used, (s), (n)); \
		used += (n);                  \
	} while (0)
	for (p = name; (hit = strstr(p, ph)) != NULL; p = hit + phl) {
		PUT(p, (size_t)(hit - p));
		PUT(num, nl);
		placed = true;
	}
	PUT(p, strlen(p));
	if (!placed) {
		if (place == FP_RANKS_SUBDIR) {
			if (used == 0 || out[used - 1] != '/')
				PUT("/", (size_t)1);
			PUT("rank", (size_t)4);
		} else {
			PUT(".rank", (size_t)5);
		}
		PUT(num, nl);
	}
#undef PUT
	out[used] = '\0';
	return FP_OK;
fail_length:
	out[0] = '\0';
	return FP_ELIMIT;
}

/* The rank in one path component (`s`, `n` bytes): the last qualifying "rank<digits>". */
static bool rank_in(const char *s, size_t n, int64_t *rank)
{
	bool found = false;
	size_t i, j;

	for (i = 0; i + 4 < n; i++) {
		int64_t v = 0;

		if (memcmp(s + i, "rank", 4) != 0)
			continue;
		if (i > 0 && s[i - 1] != '.' && s[i - 1] != '_' && s[i - 1] != '-')
			continue;
		for (j = i + 4; j < n && s[j] >= '0' && s[j] <= '9' && v <= FP_RANKS_MAX; j++)
			v = v * 10 + (s[j] - '0');
		if (j == i + 4 || v >= FP_RANKS_MAX)
			continue;
		if (j < n && s[j] != '.' && s[j] != '_' && s[j] != '-')
			continue;
		*rank = v;
		found = true;
	}
	return found;
}

int fp_ranks_of_path(const char *path, int64_t *rank)
{
	const char *last, *prev;
	size_t n;

	if (!path || !rank)
		return FP_EINVAL;
	n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	for (last = path + n; last > path && last[-1] != '/'; last--)
		;
	if ((size_t)(path + n - last) == strlen("summary.json") &&
	    memcmp(last, "summary.json", strlen("summary.json")) == 0) {
		size_t dn = (size_t)(last - path);

		while (dn > 0 && path[dn - 1] == '/')
			dn--;
		for (prev = path + dn; prev > path && prev[-1] != '/'; prev--)
			;
		return rank_in(prev, (size_t)(path + dn - prev), rank) ? FP_OK : FP_ENOENT;
	}
	return rank_in(last, (size_t)(path + n - last), rank) ? FP_OK : FP_ENOENT;
}

int fp_ranks_format(const int64_t *ranks, size_t n, char *out, size_t cap)
{
	size_t used = 0, i = 0, j;
	int k;

	if (!out || cap == 0)
		return FP_EINVAL;
	out[0] = '\0';
	while (i < n) {
		for (j = i; j + 1 < n && ranks[j + 1] == ranks[j] + 1; j++)
			;
		if (j >= i + 2)
			k = snprintf(out + used, cap - used, "%s%" PRId64 "-%" PRId64,
				     used ? "," : "", ranks[i], ranks[j]);
		else
			k = snprintf(out + used, cap - used, "%s%" PRId64, used ? "," : "",
				     ranks[i]);
		if (k < 0 || (size_t)k >= cap - used)
			goto fail_length;
		used += (size_t)k;
		i = j >= i + 2 ? j + 1 : i + 1;
	}
	return FP_OK;
fail_length:
	if (cap > 4)
		snprintf(out + FP_MIN(used, cap - 4), 4, "...");
	else
		out[0] = '\0';
	return FP_ELIMIT;
}

size_t fp_ranks_missing(const int64_t *ranks, size_t n, int64_t world_size, int64_t *out,
			size_t cap)
{
	size_t count = 0, i;
	int64_t r;

	/* Quadratic in the worst case only for tiny inputs; sort-free so it never allocates. */
	for (r = 0; r < world_size && r < FP_RANKS_MAX; r++) {
		bool have = false;

		for (i = 0; i < n && !have; i++)
			have = ranks[i] == r;
		if (have)
			continue;
		if (count < cap)
			out[count] = r;
		count++;
	}
	return count;
}
