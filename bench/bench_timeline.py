#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Slowdown of a kernel under intra-kernel timelines (docs/guide/intra-kernel.md, issue 8).

What is measured: the device time of a kernel's timeline twin (every program writes its scope
enter/exit records: %globaltimer, %clock64, %smid, four scalar stores each) against the same
kernel uninstrumented, side by side in one process with ``triton.testing.do_bench``, rounds
alternating A B / B A, medians reported with every round's ratio. The twin is launched
directly with a preallocated buffer, so the numbers are the kernel's own slowdown; the host
work of an instrumented launch in a session (synchronise, copy the buffer back, decode) is
timed separately as ``session_launch_us`` (one launch through ``profiler.start(...,
instrumentation=True)``), because it does not scale with the kernel.

Cases (fp16 matmul 4096^3 with 128x128x64 tiles; fp32 row softmax 8192 x 4096):

* ``matmul/outer``: 3 scopes outside the K loop (setup, k_loop, epilogue): 6 records/program;
* ``matmul/inner``: the same plus 2 scopes inside the K loop (loads, dot): 4 records per
  iteration (the worst placement: inside a software-pipelined loop, which the tool warns about);
* ``softmax/4``: 4 scopes (load, max, exp_sum, store) per row.

Output: one JSON object per line (stdout, and --out FILE), then a table. Needs a CUDA GPU.
Usage: python bench/bench_timeline.py [--quick] [--rounds 7] [--out FILE]
--quick: 3 rounds and fewer do_bench repetitions (well under a minute on the H200 machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

import flagprism.language as fpl
from flagprism import _timeline


@triton.jit
def matmul_plain(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a)
        y = tl.load(b)
        acc = tl.dot(x, y, acc)
        a += BK
        b += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_outer(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    fpl.enter_scope("setup")
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    fpl.exit_scope("setup")
    with fpl.scope("k_loop"):
        for k in range(0, K, BK):
            x = tl.load(a)
            y = tl.load(b)
            acc = tl.dot(x, y, acc)
            a += BK
            b += BK * N
    with fpl.scope("epilogue"):
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_inner(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    fpl.enter_scope("setup")
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    fpl.exit_scope("setup")
    with fpl.scope("k_loop"):
        for k in range(0, K, BK):
            with fpl.scope("loads"):
                x = tl.load(a)
                y = tl.load(b)
            with fpl.scope("dot"):
                acc = tl.dot(x, y, acc)
            a += BK
            b += BK * N
    with fpl.scope("epilogue"):
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def softmax_plain(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(in_ptr + row * n_cols + offs, mask=m, other=-float("inf"))
    mx = tl.max(x, axis=0)
    e = tl.exp(x - mx)
    s = tl.sum(e, axis=0)
    tl.store(out_ptr + row * n_cols + offs, e / s, mask=m)


@triton.jit
def softmax_scoped(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    with fpl.scope("load"):
        x = tl.load(in_ptr + row * n_cols + offs, mask=m, other=-float("inf"))
    with fpl.scope("max"):
        mx = tl.max(x, axis=0)
    with fpl.scope("exp_sum"):
        e = tl.exp(x - mx)
        s = tl.sum(e, axis=0)
    with fpl.scope("store"):
        tl.store(out_ptr + row * n_cols + offs, e / s, mask=m)


def _twin_launcher(fn, args, grid, kwargs):
    """A callable launching fn's timeline twin with a buffer sized and allocated once."""
    from flagprism import _launch

    twin = _timeline.build(fn, False, "nvidia")
    bound, _opts = _launch.bind(fn, args, kwargs)
    progs = grid[0] * grid[1]
    slots = _timeline.records_per_program(twin, bound)
    words = _timeline.HEADER_WORDS + progs * (1 + _timeline.RECORD_WORDS * slots)
    buf = torch.zeros(words, dtype=torch.int64, device="cuda")
    buf[:8] = torch.tensor(_timeline.header(slots, progs, len(twin.scopes), _timeline.CLOCK_NVIDIA))
    kw = dict(kwargs, __fp_ctx=buf)
    return (lambda: twin.jit[grid](*args, **kw)), twin, buf, slots


def _session_launch_us(fn, args, grid, kwargs, reps: int) -> float:
    """Host time of one launch of fn inside a session with instrumentation (median)."""
    import flagprism.profiler as profiler

    out = []
    profiler.start("/tmp/fp-bench-timeline", backend="host", instrumentation=True)
    try:
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn[grid](*args, **kwargs)
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t0) * 1e6)
    finally:
        profiler.finalize()
    return statistics.median(out)


def _case(name, plain, scoped, args, grid, kwargs, rounds, rep, quick, check_out):
    run_plain = lambda: plain[grid](*args, **kwargs)  # noqa: E731
    run_twin, twin, buf, slots = _twin_launcher(scoped, args, grid, kwargs)
    run_plain()
    ref = check_out().clone()
    run_twin()
    torch.cuda.synchronize()
    same = torch.allclose(check_out().float(), ref.float(), rtol=1e-3, atol=1e-3)
    overflow = int(buf.view(-1)[8].item()) > slots
    tp, ti, ratios = [], [], []
    for r in range(rounds):
        order = (run_plain, run_twin) if r % 2 == 0 else (run_twin, run_plain)
        res = {}
        for f in order:
            res[f] = triton.testing.do_bench(f, warmup=10 if quick else 25, rep=rep)
        tp.append(res[run_plain])
        ti.append(res[run_twin])
        ratios.append(res[run_twin] / res[run_plain])
    row = {
        "bench": "timeline",
        "case": name,
        "scopes": len(twin.scopes),
        "programs": grid[0] * grid[1],
        "records_per_program": slots,
        "plain_us": round(statistics.median(tp) * 1e3, 3),
        "instrumented_us": round(statistics.median(ti) * 1e3, 3),
        "ratio": round(statistics.median(ratios), 4),
        "ratios": [round(x, 4) for x in ratios],
        "same_output": bool(same),
        "first_launch_overflow": overflow,
        "pipelined_warning": [s.name for s in twin.scopes if s.flags],
        "session_launch_us": round(
            _session_launch_us(scoped, args, grid, kwargs, 5 if quick else 20), 1
        ),
    }
    return row


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_timeline: needs a CUDA GPU", file=sys.stderr)
        return 1
    rounds = a.rounds or (3 if a.quick else 7)
    rep = 30 if a.quick else 100
    rows = []
    M = N = K = 4096
    A = torch.randn(M, K, device="cuda", dtype=torch.float16)
    B = torch.randn(K, N, device="cuda", dtype=torch.float16)
    C = torch.empty(M, N, device="cuda", dtype=torch.float16)
    mm_args = (A, B, C, M, N, K)
    mm_grid = (M // 128, N // 128)
    mm_kw = {"BM": 128, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 3}
    rows.append(
        _case(
            "matmul/outer",
            matmul_plain,
            matmul_outer,
            mm_args,
            mm_grid,
            mm_kw,
            rounds,
            rep,
            a.quick,
            lambda: C,
        )
    )
    rows.append(
        _case(
            "matmul/inner",
            matmul_plain,
            matmul_inner,
            mm_args,
            mm_grid,
            mm_kw,
            rounds,
            rep,
            a.quick,
            lambda: C,
        )
    )
    R, Ccols = 8192, 4096
    X = torch.randn(R, Ccols, device="cuda")
    Y = torch.empty_like(X)
    sm_args = (Y, X, Ccols)
    sm_kw = {"BLOCK": 4096, "num_warps": 16}
    rows.append(
        _case(
            "softmax/4",
            softmax_plain,
            softmax_scoped,
            sm_args,
            (R, 1),
            sm_kw,
            rounds,
            rep,
            a.quick,
            lambda: Y,
        )
    )
    out = open(a.out, "w") if a.out else None
    for r in rows:
        line = json.dumps(r)
        print(line)
        if out:
            out.write(line + "\n")
    if out:
        out.close()
    print(f"{'case':<14} {'scopes':>6} {'plain us':>10} {'instr. us':>10} {'ratio':>7}  ok")
    for r in rows:
        print(
            f"{r['case']:<14} {r['scopes']:>6} {r['plain_us']:>10.1f} {r['instrumented_us']:>10.1f} "
            f"{r['ratio']:>7.3f}  {'yes' if r['same_output'] else 'NO'}"
        )
    return 0 if all(r["same_output"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
