# SPDX-License-Identifier: Apache-2.0
"""Vector add with a masked tail, observed over its whole body."""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs,
                mask=mask, other=0.0)  # a statement on two lines
    out = x + y
    tl.store(out_ptr + offs, out, mask=mask)
    fpl.collect_end()


@triton.jit
def add_plain(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
