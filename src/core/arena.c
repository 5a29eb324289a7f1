/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bump allocator behind fp_arena_*. Small requests are carved from the head block; a request
 * too big for a regular block gets a dedicated block chained *behind* the head, so the free tail
 * of the head block is not wasted. Regular blocks double from block_size up to
 * FP_ARENA_MAX_BLOCK, which keeps small arenas small and big ones at few mallocs.
 */
#include "fp-setup.h"

#include "core/arena-internal.h"

struct fp__arena_block {
	struct fp__arena_block *next;
	size_t size; /* bytes of this allocation, header included */
};

#define BLOCK_HDR sizeof(struct fp__arena_block)
#define MAX_ALIGN ((size_t)4096)

void fp_arena_init(struct fp_arena *a, size_t block_size, size_t cap)
{
	memset(a, 0, sizeof(*a));
	a->block_size = block_size ? block_size : FP_ARENA_DEFAULT_BLOCK;
	/* Keeps header + block and block doubling free of overflow; such blocks hit the cap anyway. */
	a->block_size = FP_MIN(a->block_size, SIZE_MAX / 4);
	a->next_block = a->block_size;
	a->cap = cap ? cap : FP_ARENA_DEFAULT_CAP;
}

void fp_arena_release(struct fp_arena *a)
{
	struct fp__arena_block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		fp_free(b);
	}
	fp_arena_init(a, a->block_size, a->cap);
}

/* Carve from the head block if it fits; NULL otherwise (arena unchanged). */
static void *carve(struct fp_arena *a, size_t size, size_t align)
{
	size_t pad, room;
	char *p;

	if (!a->ptr)
		return NULL;
	pad = (size_t)(-(uintptr_t)a->ptr & (align - 1));
	room = (size_t)(a->end - a->ptr);
	if (pad > room || size > room - pad)
		return NULL;
	p = a->ptr + pad;
	a->ptr = p + size;
	a->used += pad + size;
	return p;
}

static struct fp__arena_block *new_block(struct fp_arena *a, size_t total)
{
	struct fp__arena_block *b;

	if (total > a->cap - a->reserved) {
		a->last_error = FP_ELIMIT;
		return NULL;
	}
	b = fp_malloc(total);
	if (!b) {
		a->last_error = FP_ENOMEM;
		return NULL;
	}
	b->size = total;
	a->reserved += total;
	return b;
}

void *fp_arena_alloc_align(struct fp_arena *a, size_t size, size_t align)
{
	struct fp__arena_block *b;
	size_t need, total, max_block, pad;
	char *start;
	void *p;

	if (align == 0 || (align & (align - 1)) || align > MAX_ALIGN) {
		a->last_error = FP_EINVAL;
		return NULL;
	}
	if (size == 0)
		size = 1; /* a unique pointer, as malloc(0) might give */
	p = carve(a, size, align);
	if (p)
		return p;

	/* The allocator only promises malloc alignment: leave room to align by hand. */
	if (!fp__add_ok(size, align - 1, &need) || !fp__add_ok(need, BLOCK_HDR, &total)) {
		a->last_error = FP_ELIMIT;
		return NULL;
	}
	if (need > a->next_block / 4 && a->head) {
		/* Dedicated block behind the head: the head keeps its free room. */
		b = new_block(a, total);
		if (!b)
			return NULL;
		b->next = a->head->next;
		a->head->next = b;
		start = (char *)(b + 1);
		pad = (size_t)(-(uintptr_t)start & (align - 1));
		a->used += pad + size;
		return start + pad;
	}

	total = FP_MAX(total, BLOCK_HDR + a->next_block);
	/* Near the cap, a smaller block that still fits the request beats failing. */
	if (total > a->cap - a->reserved && need + BLOCK_HDR <= a->cap - a->reserved)
		total = a->cap - a->reserved;
	b = new_block(a, total);
	if (!b)
		return NULL;
	b->next = a->head;
	a->head = b;
	a->ptr = (char *)(b + 1);
	a->end = (char *)b + total;
	max_block = FP_MAX(a->block_size, FP_ARENA_MAX_BLOCK);
	if (a->next_block < max_block)
		a->next_block = FP_MIN(a->next_block * 2, max_block);
	return carve(a, size, align);
}

void *fp_arena_alloc(struct fp_arena *a, size_t size)
{
	return fp_arena_alloc_align(a, size, 16);
}

void *fp_arena_calloc(struct fp_arena *a, size_t n, size_t size)
{
	size_t total;
	void *p;

	if (!fp__mul_ok(n, size, &total)) {
		a->last_error = FP_ELIMIT;
		return NULL;
	}
	p = fp_arena_alloc(a, total);
	if (p)
		memset(p, 0, total);
	return p;
}

char *fp_arena_strndup(struct fp_arena *a, const char *s, size_t n)
{
	size_t total;
	char *p;

	if (!fp__add_ok(n, 1, &total)) {
		a->last_error = FP_ELIMIT;
		return NULL;
	}
	p = fp_arena_alloc_align(a, total, 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

size_t fp_arena_used(const struct fp_arena *a)
{
	return a->used;
}

size_t fp_arena_reserved(const struct fp_arena *a)
{
	return a->reserved;
}

int fp_arena_last_error(const struct fp_arena *a)
{
	return a->last_error;
}
