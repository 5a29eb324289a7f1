# SPDX-License-Identifier: Apache-2.0
"""Kernels the Debugger must see whole: @triton.jit helpers, block pointers, tensor descriptors,
atomics, a lock in a `while` header. Each comes as a correct version and a planted bug (chosen by
a constexpr, so both are one kernel), driven by tests/python/test_debugger_whole.py on the
interpreter. Overruns land in memory the test owns (see planted.py, "Memory safety").
"""

from __future__ import annotations

import triton
import triton.language as tl

import flagprism.language as fpl


# -- a helper that loads without a mask ---------------------------------------------------------


@triton.jit
def _scaled_load(ptr, offs, mask, s):
    v = tl.load(ptr + offs, mask=mask, other=0.0)
    return v * s


@triton.jit
def _scaled_load_nomask(ptr, offs, mask, s):
    v = tl.load(ptr + offs)  # BUG: no mask on the last block
    return v * s


@triton.jit
def helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BUGGY: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if BUGGY:
        y = _scaled_load_nomask(x_ptr, offs, mask, 2.0)
    else:
        y = _scaled_load(x_ptr, offs, mask, 2.0)
    tl.store(out_ptr + offs, y, mask=mask)
    fpl.collect_end()


# -- a block-pointer load without boundary_check on a ragged edge --------------------------------


@triton.jit
def bp_rows_kernel(a_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr):
    pid = tl.program_id(0)
    fpl.collect_start()
    a_bp = tl.make_block_ptr(a_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                             block_shape=(BM, BN), order=(1, 0))
    if CHECK:
        t = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
    else:
        t = tl.load(a_bp, boundary_check=(1,))  # BUG: rows past M are read
    o_bp = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(N, 1), offsets=(pid * BM, 0), block_shape=(BM, BN),
                             order=(1, 0))
    tl.store(o_bp, t, boundary_check=(0, 1))
    fpl.collect_end()


# -- an atomic histogram with an out-of-range bin -----------------------------------------------


@triton.jit
def hist_kernel(x_ptr, bins_ptr, n, NB: tl.constexpr, BLOCK: tl.constexpr, RANGE_CHECK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0)
    if RANGE_CHECK:
        ok = mask & (v >= 0) & (v < NB)
    else:
        ok = mask  # BUG: a value NB lands past the last bin
    tl.atomic_add(bins_ptr + v, 1, mask=ok)
    fpl.collect_end()


@triton.jit
def none_mask_kernel(x_ptr, out_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    """FlagGems' bmm style: a mask that is None for divisible shapes, read by the store."""
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        mask = None
    else:
        mask = offs < n
    v = tl.load(x_ptr + offs, mask)
    tl.store(out_ptr + offs, v * 2.0, mask)
    fpl.collect_end()


# -- tensor descriptors: host (TensorDescriptor) and device (tl.make_tensor_descriptor) ---------


@triton.jit
def host_desc_kernel(a_desc, out_desc, BM: tl.constexpr):
    pid = tl.program_id(0)
    fpl.collect_start()
    t = a_desc.load([pid * BM, 0])
    out_desc.store([pid * BM, 0], t * 2.0)
    fpl.collect_end()


@triton.jit
def dev_desc_kernel(a_ptr, out_ptr, M, N, EXTRA: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    fpl.collect_start()
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M + EXTRA, N], strides=[N, 1], block_shape=[BM, BN])
    o_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    t = a_desc.load([pid * BM, 0])
    o_desc.store([pid * BM, 0], t + 1.0)
    fpl.collect_end()


# -- a NaN born inside a helper (markers around the call only) ----------------------------------


@triton.jit
def _normalize(x, d):
    r = x / d
    return r * 2.0


@triton.jit
def nan_helper_kernel(x_ptr, d_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    d = tl.load(d_ptr + offs, mask=mask, other=1.0)
    fpl.collect_start()
    y = _normalize(x, d)
    fpl.collect_end()
    tl.store(out_ptr + offs, y, mask=mask)


# -- a lock taken in a `while` header (atomic_cas) and released with atomic_xchg ----------------


@triton.jit
def _accumulate(out_ptr, offs, mask, v):
    acc = tl.load(out_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc + v, mask=mask)


@triton.jit
def lock_kernel(x_ptr, out_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    fpl.collect_start()
    v = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=mask, other=0.0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    _accumulate(out_ptr, offs, mask, v)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)
    fpl.collect_end()


# -- loads the rewriter used to skip: in a loop header, a one-line body --------------------------


@triton.jit
def awkward_kernel(x_ptr, n_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    fpl.collect_start()
    for i in range(tl.load(n_ptr)):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    # (the header's load is evaluated on this line)
    if tl.load(n_ptr) > 0: tl.store(out_ptr + offs, acc)  # noqa: E701
    if tl.load(n_ptr) > 1:
        tl.store(out_ptr + BLOCK + offs, acc)  # the header above has no line before it: listed unobserved
    fpl.collect_end()


# -- loads in conditional expressions: a compile-time and a run-time condition ------------------


@triton.jit
def ifexp_kernel(x_ptr, b_ptr, out_ptr, n, HAS_B: tl.constexpr, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0) if HAS_B else 0.0
    s = tl.sum(x, axis=0)
    y = tl.load(x_ptr + BLOCK + offs, mask=mask, other=0.0) if s > 0 else x
    tl.store(out_ptr + offs, x + b + y, mask=mask)
    fpl.collect_end()


# -- a descriptor gather: rows picked by an index block ------------------------------------------


@triton.jit
def gather_kernel(a_ptr, idx_ptr, out_ptr, M, N, R: tl.constexpr, BN: tl.constexpr):
    fpl.collect_start()
    desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    rows = tl.load(idx_ptr + tl.arange(0, R))
    t = desc.gather(rows, 0)
    tl.store(out_ptr + tl.arange(0, R)[:, None] * BN + tl.arange(0, BN)[None, :], t)
    fpl.collect_end()


@triton.jit
def scatter_kernel(a_ptr, idx_ptr, src_ptr, M, N, R: tl.constexpr, BN: tl.constexpr):
    fpl.collect_start()
    desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    rows = tl.load(idx_ptr + tl.arange(0, R))
    v = tl.load(src_ptr + tl.arange(0, R)[:, None] * BN + tl.arange(0, BN)[None, :])
    desc.scatter(v, rows, 0)
    fpl.collect_end()


@triton.jit
def desc_atomic_kernel(a_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A descriptor atomic (TMA reduce): compiled for GPUs only (the interpreter has none)."""
    fpl.collect_start()
    d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    d.atomic_add([tl.program_id(0) * BM, 0], tl.full((BM, BN), 1.0, tl.float32))
    fpl.collect_end()
