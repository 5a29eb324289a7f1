/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Functions the library must not call: unbounded string functions, and raw allocation (all
 * memory goes through fp_malloc & co. so the allocator hook and the OOM sweep see it). Using one
 * is a compile error. core/alloc.c defines FP_ALLOC_IMPL to reach libc's allocator.
 */
#ifndef FP_BANNED_H
#define FP_BANNED_H

#define FP__BANNED(func) sorry_##func##_is_banned_in_flagprism

#undef strcpy
#define strcpy(x, y) FP__BANNED(strcpy)
#undef strcat
#define strcat(x, y) FP__BANNED(strcat)
#undef sprintf
#define sprintf(...) FP__BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) FP__BANNED(vsprintf)
#undef strtok
#define strtok(x, y) FP__BANNED(strtok)
#undef atoi
#define atoi(x) FP__BANNED(atoi)
#undef gets
#define gets(x) FP__BANNED(gets)

#ifndef FP_ALLOC_IMPL
#undef malloc
#define malloc(x) FP__BANNED(malloc)
#undef calloc
#define calloc(x, y) FP__BANNED(calloc)
#undef realloc
#define realloc(x, y) FP__BANNED(realloc)
#undef free
#define free(x) FP__BANNED(free)
#undef strdup
#define strdup(x) FP__BANNED(strdup)
#endif

#endif /* FP_BANNED_H */
