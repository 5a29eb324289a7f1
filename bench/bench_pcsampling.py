#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cost of ``mode="pcsampling"``: a Triton matmul loop and a softmax loop, bare against the
"cupti" backend (kernel times only) against PC sampling, side by side in one process.

Method: after a warm-up (compile, caches), each round times the bare loop, the loop under a
plain "cupti" session and the loop under a PC-sampling session (order rotated per round); every
timed loop is a synchronize, the launches, a synchronize. Sessions start before their warm-up
launches and finalize after the timed loop, so start/finalize are reported on their own
(``finalize_ms``: PC-sampling's includes draining and mapping samples to lines). Ratios are
profiled / bare per round; the median is reported with every round's ratio. Also reported: the
samples, how many landed on source lines, and the dropped ones.

PC sampling (CUPTI's continuous mode) runs kernels as usual; CUPTI's worker threads decode the
hardware buffer, and finalize waits for them (Disable), hence ``finalize_ms``. A machine that denies counter access gets a
row with ``error`` saying why (and how to allow it) instead of numbers.

Output: one JSON object per line (stdout, and --out FILE, or a directory that receives
bench_pcsampling.jsonl). Usage: python bench/bench_pcsampling.py [--quick] [--rounds 5]
[--launches 200] [--period N] [--out PATH]. --quick: 3 rounds of 100 launches (well under a
minute on the H200 machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import triton
import triton.language as tl

import flagprism.profiler as prof


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def cases():
    x = torch.randn(4096, 1024, device="cuda")
    y = torch.empty_like(x)
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    c = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)

    def softmax():
        softmax_kernel[(4096,)](x, y, 1024, BLOCK=1024)

    def matmul():
        matmul_kernel[(16, 16)](a, b, c, 2048, 2048, 2048, BM=128, BN=128, BK=64)

    return {"softmax": softmax, "matmul": matmul}


def timed(fn, n):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t


def session(fn, n, warm, mode, period, tmp):
    """(seconds of the timed loop, finalize seconds, stats or None)."""
    kw = {"backend": "cupti"}
    if mode == "pcsampling":
        kw["mode"] = "pcsampling"
        if period:
            kw["sampling_period"] = period
    sid = prof.start(os.path.join(tmp, mode), **kw)
    for _ in range(warm):
        fn()
    s = timed(fn, n)
    t = time.perf_counter()
    prof.finalize(sid)
    fin = time.perf_counter() - t
    return s, fin, prof.pcsampling_stats() if mode == "pcsampling" else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--period", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.launches = 3, 100
    out = args.out
    if out and os.path.isdir(out):
        out = os.path.join(out, "bench_pcsampling.jsonl")
    rows = []
    tmp = tempfile.mkdtemp(prefix="fp-bench-pcs-")
    device = torch.cuda.get_device_name(0)
    # every kernel is compiled and loaded before the first session: CUPTI gives no PC records
    # for a module loaded while it is attached but not sampling (docs/internals/cupti-backend.md)
    todo = cases()
    for fn in todo.values():
        for _ in range(args.warm):
            fn()
    for name, fn in todo.items():
        ratios = {"cupti": [], "pcsampling": []}
        fins = {"cupti": [], "pcsampling": []}
        bare_s, stats, error = [], None, None
        order = ["bare", "cupti", "pcsampling"]
        for r in range(args.rounds):
            got = {}
            for what in order[r % 3 :] + order[: r % 3]:
                if what == "bare":
                    got["bare"] = timed(fn, args.launches)
                    continue
                if error and what == "pcsampling":
                    continue
                try:
                    s, fin, st = session(fn, args.launches, args.warm, what, args.period, tmp)
                except Exception as e:  # noqa: BLE001 - reported in the row
                    error = f"{type(e).__name__}: {e}"
                    continue
                got[what] = s
                fins[what].append(fin)
                stats = st or stats
            bare_s.append(got["bare"])
            for what in ("cupti", "pcsampling"):
                if what in got:
                    ratios[what].append(got[what] / got["bare"])
        row = {
            "bench": "pcsampling",
            "case": name,
            "device": device,
            "launches": args.launches,
            "rounds": args.rounds,
            "bare_us_per_launch": statistics.median(bare_s) / args.launches * 1e6,
            "cupti_ratio": statistics.median(ratios["cupti"]) if ratios["cupti"] else None,
            "pcsampling_ratio": (
                statistics.median(ratios["pcsampling"]) if ratios["pcsampling"] else None
            ),
            "cupti_ratios": ratios["cupti"],
            "pcsampling_ratios": ratios["pcsampling"],
            "cupti_finalize_ms": statistics.median(fins["cupti"]) * 1e3 if fins["cupti"] else None,
            "pcsampling_finalize_ms": (
                statistics.median(fins["pcsampling"]) * 1e3 if fins["pcsampling"] else None
            ),
            "sampling_period": args.period or "default",
            "pcsampling_stats": stats,
            "error": error,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if out:
        with open(out, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    print(f"\n{'case':10} {'bare us/launch':>15} {'cupti x':>8} {'pcsampling x':>13}")
    for row in rows:
        cx = f"{row['cupti_ratio']:.2f}" if row["cupti_ratio"] else "-"
        px = f"{row['pcsampling_ratio']:.2f}" if row["pcsampling_ratio"] else "-"
        print(f"{row['case']:10} {row['bare_us_per_launch']:15.1f} {cx:>8} {px:>13}")
        if row["error"]:
            print(f"  {row['case']}: {row['error']}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
