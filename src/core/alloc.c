/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place that calls libc's allocator. Everything else allocates through fp_malloc and
 * friends, so that fp_set_allocator() sees every byte (and the OOM sweep can fail any of them);
 * growable arrays grow through fp__grow() (core-internal.h), the one capped doubling helper.
 */
#define FP_ALLOC_IMPL 1
#include "fp-setup.h"

#include "core/core-internal.h"

static fp_malloc_fn alloc_malloc = malloc;
static fp_realloc_fn alloc_realloc = realloc;
static fp_free_fn alloc_free = free;

int fp_set_allocator(fp_malloc_fn m, fp_realloc_fn r, fp_free_fn f)
{
	if (!m && !r && !f) {
		alloc_malloc = malloc;
		alloc_realloc = realloc;
		alloc_free = free;
		return FP_OK;
	}
	if (!m || !r || !f)
		return FP_EINVAL;
	alloc_malloc = m;
	alloc_realloc = r;
	alloc_free = f;
	return FP_OK;
}

void *fp_malloc(size_t size)
{
	return alloc_malloc(size ? size : 1);
}

void *fp_calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (!fp__mul_ok(n, size, &total))
		return NULL;
	p = fp_malloc(total);
	if (p)
		memset(p, 0, total);
	return p;
}

void *fp_realloc(void *ptr, size_t size)
{
	return alloc_realloc(ptr, size ? size : 1);
}

void *fp_reallocarray(void *ptr, size_t n, size_t size)
{
	size_t total;

	if (!fp__mul_ok(n, size, &total))
		return NULL;
	return fp_realloc(ptr, total);
}

void fp_free(void *ptr)
{
	if (ptr)
		alloc_free(ptr);
}

char *fp_strndup(const char *s, size_t n)
{
	char *p;
	size_t total;

	if (!fp__add_ok(n, 1, &total))
		return NULL;
	p = fp_malloc(total);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *fp_strdup(const char *s)
{
	return fp_strndup(s, strlen(s));
}

int fp__grow(void **arr, size_t *cap, size_t need, size_t size, size_t max)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return FP_OK;
	if (need > max)
		return FP_ELIMIT;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	if (ncap > max)
		ncap = max;
	p = fp_reallocarray(*arr, ncap, size);
	if (!p)
		return FP_ENOMEM;
	*arr = p;
	*cap = ncap;
	return FP_OK;
}
