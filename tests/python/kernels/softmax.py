# SPDX-License-Identifier: Apache-2.0
"""Row softmax: reductions, -inf padding of masked lanes, one program per row."""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * out_stride + offs, y, mask=mask)
    fpl.collect_end()
