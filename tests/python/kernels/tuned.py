# SPDX-License-Identifier: Apache-2.0
"""Kernels launched through triton.autotune and triton.heuristics."""

import triton
import triton.language as tl

import flagprism.language as fpl

BENCH_CALLS = []


def cpu_bench(kernel_call, quantiles):
    """Autotuner benchmark that works without a GPU: one timed call (the interpreter has no
    device timer)."""
    import time

    t = time.perf_counter()
    kernel_call()
    dt = time.perf_counter() - t
    BENCH_CALLS.append(dt)
    return [dt, dt, dt]


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"],
                 do_bench=cpu_bench)
@triton.jit
def tuned_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    fpl.collect_start()
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2.0, mask=offs < n)
    fpl.collect_end()


@triton.heuristics({"BLOCK": lambda args: 64 if args["n"] <= 256 else 128, "EVEN": lambda args: args["n"] % 64 == 0})
@triton.jit
def heur_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    fpl.collect_start()
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)
    fpl.collect_end()
