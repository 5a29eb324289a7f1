# SPDX-License-Identifier: Apache-2.0
"""Kernels for the twin's warp decision (python/flagprism/_warps.py): element-wise ones the twin
may run with fewer warps, and ones whose results may depend on the warp count."""

import triton
import triton.language as tl
from triton.language.extra import cuda as _cuda  # noqa: F401 - makes tl.extra.cuda resolvable
from triton.language.extra import libdevice

import flagprism.language as fpl

from . import tuned


@triton.jit
def _twice(v):
    return v * 2.0 + 1.0


@triton.jit
def _row_total(v):
    return tl.sum(v, axis=0)


@triton.jit
def _outer(v):
    return _row_total(v)  # reduces two calls down


@triton.jit
def helper_elementwise_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    fpl.collect_start()
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = _twice(x)
    z = libdevice.exp(tl.where(mask, y, 0.0)).to(tl.float32)
    tl.store(out_ptr + offs, z, mask=mask)
    fpl.collect_end()


@triton.jit
def helper_reduce_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    fpl.collect_start()
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    t = _outer(x)
    tl.store(out_ptr + offs, x - t, mask=mask)
    fpl.collect_end()


@triton.jit
def method_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    fpl.collect_start()
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), x - x.sum(axis=0))
    fpl.collect_end()


@triton.jit
def atomic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    fpl.collect_start()
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + offs % 4, x, mask=offs < n)
    fpl.collect_end()


@triton.jit
def asm_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    fpl.collect_start()
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + tl.arange(0, BLOCK), y)
    fpl.collect_end()


@triton.jit
def intrinsic_kernel(out_ptr, BLOCK: tl.constexpr):
    fpl.collect_start()
    w = tl.extra.cuda.num_warps()
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.full((BLOCK,), w, tl.int32))
    fpl.collect_end()


@triton.jit
def reorder_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr):
    fpl.collect_start()
    x = tl.load(x_ptr + tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :])
    y = tl.reshape(x, (A * B,), can_reorder=True)
    tl.store(out_ptr + tl.arange(0, A * B), y)
    fpl.collect_end()


@triton.jit
def callee_param_kernel(x_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    fpl.collect_start()
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), FN(x))
    fpl.collect_end()


@triton.jit
def copy2d_kernel(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    fpl.collect_start()
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x + 1.0)
    fpl.collect_end()


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=8)], key=["n"], do_bench=tuned.cpu_bench)
@triton.jit
def tuned_add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    fpl.collect_start()
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)
    fpl.collect_end()


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=2)], key=["n"], do_bench=tuned.cpu_bench)
@triton.jit
def tuned_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    fpl.collect_start()
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    s = tl.sum(x, axis=0)
    tl.store(out_ptr + offs, x / s, mask=offs < n)
    fpl.collect_end()


@triton.jit
def rotate_kernel(x_ptr, y_ptr, c, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    xc = x * c
    tl.store(x_ptr + offs, xc - y * s, mask=m)  # two products meet: which one fuses is the compiler's


@triton.jit
def index_products_kernel(x_ptr, out_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = row * stride * 2 + tl.arange(0, BLOCK) * 2  # products of integers only
    m = tl.arange(0, BLOCK) < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + row * stride + tl.arange(0, BLOCK), x * 3.0 + 1.0, mask=m)
