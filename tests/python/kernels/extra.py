# SPDX-License-Identifier: Apache-2.0
"""Less common value types: integer widths, float64, block pointers, 4-D tensors, uint64."""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def dtypes_kernel(i8_ptr, u8_ptr, i64_ptr, u64_ptr, f64_ptr, out_ptr, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    a = tl.load(i8_ptr + offs)
    b = tl.load(u8_ptr + offs)
    c = tl.load(i64_ptr + offs)
    d = tl.load(u64_ptr + offs)
    e = tl.load(f64_ptr + offs)
    h = e.to(tl.float16)
    g = e.to(tl.bfloat16)
    p = out_ptr + offs
    s = a.to(tl.float32) + b.to(tl.float32) + c.to(tl.float32) + h.to(tl.float32) + g.to(tl.float32)
    tl.store(p, s)
    fpl.collect_end()


@triton.jit
def block_ptr_kernel(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    fpl.collect_start()
    bp = tl.make_block_ptr(a_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BM, BN),
                           order=(1, 0))
    t = tl.load(bp, boundary_check=(0, 1))
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], t)
    fpl.collect_end()


@triton.jit
def nd_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    fpl.collect_start()
    idx = tl.arange(0, A * B * C * D)
    x = tl.load(x_ptr + idx)
    y = tl.reshape(x, (A, B, C, D))
    z = y * 2.0
    w = tl.reshape(z, (A * B * C * D,))
    tl.store(out_ptr + idx, w)
    fpl.collect_end()
