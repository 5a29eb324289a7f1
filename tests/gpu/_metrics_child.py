# SPDX-License-Identifier: Apache-2.0
"""Child process of tests/gpu/test_metrics_gpu.py and bench/bench_metrics.py: one Triton kernel
run under a FlagPrism session, with or without in-process hardware metrics. A process keeps its
CUPTI subscriber for life, so every measurement runs in a process of its own.

Usage: python _metrics_child.py KERNEL NAME [METRICS]
KERNEL: vadd (2^29 float32: reads 4 GiB, writes 2 GiB), matmul (2048^3 float32 FFMA, tl.dot
with input_precision="ieee": 2 x 2048^3 FLOP); NAME: the output path; METRICS: a comma list,
"default", or absent/"none" for a session without metrics ("host" runs the host backend, for
running under ncu). Prints one JSON line: what the test needs to re-derive the expectations.
"""

from __future__ import annotations

import json
import sys

import torch
import triton
import triton.language as tl

import flagprism.profiler as profiler

# 2^29 float32 per vector: the kernel reads 4 GiB and writes 2 GiB. Dirty lines still in the
# H200's L2 (about 60 MB) when the kernel ends are not DRAM writes yet, and the first reads may
# hit lines a previous kernel left there: at this size that residue is under 1% of the bytes
# moved, so DRAM bytes within 2% of them is a fair test (at 2^26 it is ~8% of the writes).
N_VADD = 1 << 29
MM = 2048


@triton.jit
def hwm_vadd(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def hwm_matmul(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # K is a constexpr so the k-loop has a static trip count and the IR estimate is exact
    # (docs/internals/ir-estimates.md: dynamic loops count once).
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def make(kernel: str, n_vadd: int = N_VADD, mm: int = MM):
    """Inputs allocated and the kernel compiled (outside any session); returns launch()."""
    if kernel == "vadd":
        x = torch.rand(n_vadd, device="cuda")
        y = torch.rand(n_vadd, device="cuda")
        out = torch.empty_like(x)
        grid = (triton.cdiv(n_vadd, 1024),)

        def launch() -> None:
            hwm_vadd[grid](x, y, out, n_vadd, BLOCK=1024)

        info = {"bytes": 3 * 4 * n_vadd, "read": 2 * 4 * n_vadd, "write": 4 * n_vadd}
    elif kernel == "matmul":
        a = torch.rand((mm, mm), device="cuda")
        b = torch.rand((mm, mm), device="cuda")
        c = torch.empty((mm, mm), device="cuda")
        grid = (mm // 64, mm // 64)

        def launch() -> None:
            hwm_matmul[grid](a, b, c, mm, mm, mm, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)

        info = {"flops": 2 * mm**3, "ffma": mm**3}
    else:
        raise SystemExit(f"unknown kernel {kernel!r}")
    launch()  # compile and warm up
    torch.cuda.synchronize()
    return launch, info


def main() -> int:
    kernel, name = sys.argv[1], sys.argv[2]
    metrics = sys.argv[3] if len(sys.argv) > 3 else "none"
    launch, info = make(kernel)
    if metrics == "host":
        sid = profiler.start(name, backend="host", data="trace")
    elif metrics == "none":
        sid = profiler.start(name, backend="cupti")
    else:
        sid = profiler.start(name, backend="cupti", metrics=metrics)
    launch()
    torch.cuda.synchronize()
    profiler.finalize(sid)
    info["status"] = profiler.metrics_status() if metrics not in ("none", "host") else None
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
