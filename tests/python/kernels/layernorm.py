# SPDX-License-Identifier: Apache-2.0
"""Layer norm over rows with column loops (two passes), weights and bias."""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    fpl.collect_start()
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        a = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += a
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        a = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, a - mean, 0.0)
        acc2 += d * d
    var = tl.sum(acc2, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        a = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        y = (a - mean) * rstd * w + b
        tl.store(y_row + cols, y, mask=m)
    fpl.collect_end()
