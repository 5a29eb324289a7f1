# SPDX-License-Identifier: Apache-2.0
"""Kernels for the interpreter tests of `flagprism advise` (tests/python/test_advise.py), each in
a slow and a fixed version, for the rules that need no hardware: a launch-bound loop of tiny
kernels and the same work in one launch, an autotuned kernel whose fastest config sits at the
edge of the configs (and one whose configs all measure the same), and a matrix product computed
in float32 from float16 inputs and the same with tl.dot on the float16 tiles. The autotuners'
benchmark is replaced by fixed times so that what they measured is the same on every machine.
Kernels must live in a real file for Triton (and its interpreter)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import triton
import triton.language as tl


@triton.jit
def adv_tiny(x_ptr, i, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + i * BLOCK + offs, tl.load(x_ptr + i * BLOCK + offs) + 1.0)


@triton.jit
def adv_batched(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def launch_bound(x: Any, items: int, host_s: float) -> None:
    """The slow version: one tiny launch per item, with host work between them."""
    for i in range(items):
        adv_tiny[(1,)](x, i, BLOCK=16)
        time.sleep(host_s)  # the host work of a loop step (the line the advice names)


def batched(x: Any, items: int) -> None:
    """The fixed version: every item in one launch."""
    adv_batched[(items,)](x, BLOCK=16)


def _fixed_bench(times: list[float]) -> Any:
    """A do_bench for triton.autotune that runs each config once and reports `times` (ms) in
    the order the autotuner measures its configs."""
    it: Iterator[float] = iter(times)

    def bench(kernel_call: Any, quantiles: Any = None) -> list[float]:
        kernel_call()
        t = next(it)
        return [t, t * 0.99, t * 1.01]

    return bench


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in (16, 32, 64)],
    key=["n"],
    do_bench=_fixed_bench([3.0, 2.0, 1.0]),
)
@triton.jit
def adv_tuned_edge(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 32}, num_warps=w) for w in (1, 2, 4)],
    key=["n"],
    do_bench=_fixed_bench([1.0, 1.0, 1.0]),
)
@triton.jit
def adv_tuned_flat(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def tuned(x: Any, kernel: Any) -> None:
    n = x.numel()
    kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, n)


@triton.jit
def adv_mm_wide(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(tl.float32)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(tl.float32)
    c = tl.sum(a[:, :, None] * b[None, :, :], axis=1)  # float32 math on float16 data
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def adv_mm_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b)  # the float16 tiles on the tensor cores, a float32 accumulator
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def matmul(kernel: Any, n: int = 16) -> Any:
    import torch

    a = torch.randn(n, n, dtype=torch.float16)
    b = torch.randn(n, n, dtype=torch.float16)
    c = torch.empty(n, n, dtype=torch.float32)
    kernel[(1,)](a, b, c, n, n, n)
    return c
