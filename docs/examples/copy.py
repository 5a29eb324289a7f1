# SPDX-License-Identifier: Apache-2.0
# The program of the `flagprism debug --sanitize` example in docs/cli/flagprism-debug.md (run by
# tests/python/test_doc_examples.py): a copy kernel whose load mask lets lanes past the end,
# launched after two correct adds.
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n + BLOCK // 4)  # bug: lanes past n pass the mask
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


x = torch.arange(100, dtype=torch.float32)
y = torch.empty_like(x)
add_kernel[(1,)](x, x, y, 100, BLOCK=128)
add_kernel[(1,)](y, x, y, 100, BLOCK=128)
copy_kernel[(1,)](x, y, 100, BLOCK=128)
