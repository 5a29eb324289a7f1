# SPDX-License-Identifier: Apache-2.0
"""Control flow inside collection regions: while loops, if blocks, helper calls, constexpr and
specialised arguments, several regions, marker level overrides."""

import triton
import triton.language as tl

import flagprism.language as fpl
from flagprism.language import collect_end, collect_start


@triton.jit
def scale_helper(v, factor):
    w = v * factor
    return w + 1.0


@triton.jit
def control_kernel(x_ptr, out_ptr, n, steps, BLOCK: tl.constexpr, USE_HELPER: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    fpl.collect_start()
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    i = 0
    while i < steps:
        v = v * 0.5
        i += 1
    if pid % 2 == 0:
        v = v + 100.0
    else:
        v = v - 100.0
    if USE_HELPER:
        v = scale_helper(v, 2.0)
    total = tl.sum(tl.where(mask, v, 0.0), axis=0)
    tl.store(out_ptr + offs, v, mask=mask)
    fpl.collect_end()
    tl.store(out_ptr + n + pid, total)


@triton.jit
def two_regions_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    collect_start(level=2, addr_level=0)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    collect_end()
    y = x * 3.0
    collect_start(level=1)
    z = y + 1; tl.store(out_ptr + offs, z, mask=offs < n)  # noqa: E702 - two statements on a line
    collect_end()


@triton.jit
def specialised_kernel(x_ptr, out_ptr, n, stride, ALPHA: tl.constexpr, BLOCK: tl.constexpr):
    """stride == 1 is specialised to a constant by Triton; ALPHA is a constexpr float."""
    pid = tl.program_id(0)
    fpl.collect_start()
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride, mask=offs < n, other=0.0)
    y = x * ALPHA
    tl.store(out_ptr + offs, y, mask=offs < n)
    fpl.collect_end()


@triton.jit
def masked_loop_kernel(x_ptr, out_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    """A loop whose masks change per iteration (some iterations fully masked off)."""
    pid = tl.program_id(0)
    fpl.collect_start()
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for it in range(ITERS):
        offs = (pid * ITERS + it) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        acc += tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)
    fpl.collect_end()
