# SPDX-License-Identifier: Apache-2.0
"""Kernels whose markers or regions the Debugger must reject with a clear message."""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def unbalanced_start(x_ptr):
    fpl.collect_start()
    x = tl.load(x_ptr)
    tl.store(x_ptr, x + 1)


@triton.jit
def unbalanced_end(x_ptr):
    x = tl.load(x_ptr)
    fpl.collect_end()


@triton.jit
def nested_markers(x_ptr):
    fpl.collect_start()
    fpl.collect_start()
    x = tl.load(x_ptr)
    fpl.collect_end()
    fpl.collect_end()


@triton.jit
def different_blocks(x_ptr, n):
    fpl.collect_start()
    if n > 0:
        x = tl.load(x_ptr)
        fpl.collect_end()


@triton.jit
def nested_in_block(x_ptr, n):
    fpl.collect_start()
    for i in range(n):
        fpl.collect_start()
        x = tl.load(x_ptr + i)
        fpl.collect_end()
    fpl.collect_end()


@triton.jit
def return_in_region(x_ptr, n):
    fpl.collect_start()
    x = tl.load(x_ptr)
    if n > 0:
        return
    fpl.collect_end()


@triton.jit
def load_in_boolop(x_ptr, FLAG: tl.constexpr):
    fpl.collect_start()
    x = FLAG and tl.load(x_ptr)
    fpl.collect_end()


@triton.jit
def marker_as_value(x_ptr):
    fpl.collect_start()
    y = fpl.collect_end()


@triton.jit
def bad_level(x_ptr, L: tl.constexpr):
    fpl.collect_start(level=L)
    x = tl.load(x_ptr)
    fpl.collect_end()
