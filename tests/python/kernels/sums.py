# SPDX-License-Identifier: Apache-2.0
"""One tile loaded and stored per program: the level-1 float sums' accuracy tests
(tests/python/test_debugger_sums.py) read the record of `x`."""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def tile_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)
    fpl.collect_end()
