# SPDX-License-Identifier: Apache-2.0
"""Kernels with intra-kernel scopes for the timeline tests (tests/python/test_timeline*.py).

`plain_kernel` and `scoped_kernel` are the same computation, without and with scopes, on the
same lines after their `def`, so their TTIR differs only in locations."""

from __future__ import annotations

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def plain_kernel(x_ptr, y_ptr, n, K, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    if True:
        for k in range(0, K):
            if True:
                acc += tl.load(x_ptr + offs, mask=m)
    if True:
        for k in range(0, K):
            acc = acc * 1.5
    tl.store(y_ptr + offs, acc, mask=m)


@triton.jit
def scoped_kernel(x_ptr, y_ptr, n, K, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    with fpl.scope("loads"):
        for k in range(0, K):
            with fpl.scope("one_load"):
                acc += tl.load(x_ptr + offs, mask=m)
    with fpl.scope("math"):
        for k in range(0, K):
            acc = acc * 1.5
    tl.store(y_ptr + offs, acc, mask=m)


@triton.jit
def calls_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    fpl.enter_scope("load")
    x = tl.load(x_ptr + offs, mask=offs < n)
    fpl.exit_scope("load")
    fpl.enter_scope("store")
    tl.store(y_ptr + offs, x + 1, mask=offs < n)
    fpl.exit_scope("store")


@triton.jit
def auto_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    fpl.collect_start()
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = x * 3
    tl.store(y_ptr + offs, y, mask=offs < n)
    fpl.collect_end()


@triton.jit
def bad_mismatch(x_ptr, n):
    fpl.enter_scope("a")
    fpl.exit_scope("b")


@triton.jit
def bad_unclosed(x_ptr, n):
    fpl.enter_scope("a")
    x = n + 1


@triton.jit
def bad_name(x_ptr, n, NAME: tl.constexpr):
    with fpl.scope(NAME):
        x = n + 1
    x = x + 1


@triton.jit
def bad_across_blocks(x_ptr, n):
    fpl.enter_scope("a")
    if n > 0:
        fpl.exit_scope("a")


@triton.jit
def bad_placement(x_ptr, n):
    acc = n
    for i in range(0, 3):
        with fpl.scope("a"):
            for j in range(0, 2):
                acc += j
        for j in range(0, 2):
            acc += j
    tl.store(x_ptr, acc)
