# SPDX-License-Identifier: Apache-2.0
"""Kernels for the GPU acceptance tests of `flagprism advise` (test_advise_gpu.py), each in a
slow version with one planted cause and a fixed version that applies the advice: a transposed
(uncoalesced) load, an oversized block that spills, a reduction launched with too few programs
(tail effect), a float32 GEMM computed from float16 inputs without tl.dot on them, a launch-bound
loop of tiny kernels, and a pipelined loop run with num_stages=1 where the loads stall. The line
each rule must name carries a comment `# planted: <rule>` (either of the two loads of the
unpipelined loop, whose stalls PC sampling may put on one or the other).

Run as a script under `flagprism profile`: `python _advise_cases.py CASE VARIANT` runs the
variant (slow or fixed) of CASE a fixed number of times after a warm-up. Kernels must live in a
real file for Triton.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl

N = 4096  # square matrices: 64 MiB of float32, larger than the L2 of an H100/H200


# ---- uncoalesced: column sums read down the columns, and along the rows of the transpose ---------


@triton.jit
def colsum_strided(x_ptr, out_ptr, n: tl.constexpr, BLOCK_R: tl.constexpr):
    # one program per column; its lanes read a column, n floats apart: one 32-byte sector per
    # 4-byte float. n is a constexpr so that the IR's estimate counts every step of the loop (a
    # loop with runtime bounds counts once, and the fixed version would then read "too few"
    # bytes for its sectors)
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r0 in range(0, n, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        acc += tl.load(x_ptr + rows * n + col)  # planted: uncoalesced
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


@triton.jit
def colsum_contig(x_ptr, out_ptr, n: tl.constexpr, BLOCK_R: tl.constexpr):
    # the fix: the same sums read along the rows of the transpose (stride 1 across the lanes)
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r0 in range(0, n, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        acc += tl.load(x_ptr + col * n + rows)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def uncoalesced(variant: str) -> Callable[[], Any]:
    # slow: x's columns read in place; fixed: the same sums from xt = x^T, whose rows they are
    x = torch.randn(N, N, device="cuda")
    xt = x.t().contiguous()
    out = torch.empty(N, device="cuda")
    kern, src = (colsum_strided, x) if variant == "slow" else (colsum_contig, xt)
    return lambda: kern[(N,)](src, out, N, BLOCK_R=256)


# ---- spills: a program that holds a huge tile ---------------------------------------------------------


@triton.jit
def row_softmax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))  # planted: spills
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n + offs, e / tl.sum(e, axis=0), mask=offs < n)


def spills(variant: str) -> Callable[[], Any]:
    # 16384 floats per program: with 1 warp each thread holds 512 of them (spills); the fix
    # spreads the row over 16 warps (32 per thread)
    cols = 16384
    x = torch.randn(1024, cols, device="cuda")
    out = torch.empty_like(x)
    warps = 1 if variant == "slow" else 16
    return lambda: row_softmax[(1024,)](x, out, cols, BLOCK=cols, num_warps=warps)


# ---- tail effect: a reduction launched with too few programs -------------------------------------------


@triton.jit
def chunk_sum(x_ptr, out_ptr, n, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, CHUNK, BLOCK):
        offs = pid * CHUNK + i + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def tail(variant: str) -> Callable[[], Any]:
    n = 1 << 26
    x = torch.randn(n, device="cuda")
    out = torch.zeros(1, device="cuda")
    programs = 8 if variant == "slow" else 1024  # the fix: enough programs for every SM
    chunk = n // programs
    return lambda: chunk_sum[(programs,)](x, out, n, CHUNK=chunk, BLOCK=1024)  # planted: tail_effect


# ---- float32 GEMM from float16 inputs ---------------------------------------------------------------------


@triton.jit
def gemm_wide(a_ptr, b_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, n, BK):
        a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :]).to(tl.float32)
        b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :]).to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision="ieee")  # planted: half_math
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)


@triton.jit
def gemm_dot(a_ptr, b_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, n, BK):
        a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :])
        acc = tl.dot(a, b, acc)  # the fix: the float16 tiles on the tensor cores
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)


def half_math(variant: str) -> Callable[[], Any]:
    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda")
    kern = gemm_wide if variant == "slow" else gemm_dot
    grid = (n // 128, n // 128)
    return lambda: kern[grid](a, b, c, n, BM=128, BN=128, BK=32, num_warps=8, num_stages=3)


# ---- launch-bound: a loop of tiny kernels ----------------------------------------------------------------


@triton.jit
def bump(x_ptr, i, BLOCK: tl.constexpr):
    offs = i * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


@triton.jit
def bump_all(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def launch_bound(variant: str) -> Callable[[], Any]:
    items = 256
    x = torch.zeros(items * 128, device="cuda")

    def slow() -> None:
        for i in range(items):
            bump[(1,)](x, i, BLOCK=128)  # planted: launch_bound

    def fixed() -> None:
        bump_all[(items,)](x, BLOCK=128)

    return slow if variant == "slow" else fixed


# ---- stalls: loads of a loop that is not pipelined ---------------------------------------------------------


@triton.jit
def dot_loop(a_ptr, b_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             STAGES: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, n, BK, num_stages=STAGES):
        a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :])  # planted: stall
        b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :])  # planted: stall
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)


def stall(variant: str) -> Callable[[], Any]:
    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda")
    stages = 1 if variant == "slow" else 4
    grid = (n // 128, n // 128)
    return lambda: dot_loop[grid](a, b, c, n, BM=128, BN=128, BK=64, STAGES=stages, num_warps=8)


CASES: dict[str, Callable[[str], Callable[[], Any]]] = {
    "uncoalesced": uncoalesced,
    "spills": spills,
    "tail_effect": tail,
    "half_math": half_math,
    "launch_bound": launch_bound,
    "stall": stall,
}

#: kernel names of each case's slow and fixed version, as profiles name their nodes
KERNELS: dict[str, tuple[str, str]] = {
    "uncoalesced": ("colsum_strided", "colsum_contig"),
    "spills": ("row_softmax", "row_softmax"),
    "tail_effect": ("chunk_sum", "chunk_sum"),
    "half_math": ("gemm_wide", "gemm_dot"),
    "launch_bound": ("bump", "bump_all"),
    "stall": ("dot_loop", "dot_loop"),
}


def main(argv: list[str]) -> int:
    case, variant = argv[1], argv[2]
    reps = int(argv[3]) if len(argv) > 3 else 20
    fn = CASES[case](variant)
    fn()  # compile and warm up outside the measured launches
    torch.cuda.synchronize()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
