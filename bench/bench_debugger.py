#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU cost of the Debugger's instrumented twins, measured against the uninstrumented kernels.

For each case the script launches the kernel as written and its instrumented twin (the exact
kernel the Debugger launches while active) with a record buffer sized as the Debugger sizes it,
alternating the two (A B A B ...) in one process, each timed with triton.testing.do_bench
(median), and reports the median time of each and the median ratio over the rounds. Cases:
a 64M-element fp32 vector add (BLOCK 1024, level 1 + addr_level 1 over the whole body: the
issue's target is a ratio of at most 1.3), a row softmax, a matmul with a K loop, level-2 dumps,
and, where `compute-sanitizer` is on PATH, the uninstrumented add under memcheck (run in a child
process) for comparison. It also times one whole Debugger launch (twin, buffer copy back and
report) when the native report writer is available.

Output: one JSON object per line (stdout, and --out FILE), then a table. Needs a CUDA GPU.
Usage: python bench/bench_debugger.py [--rounds 5] [--quick] [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import torch
import triton
import triton.language as tl

import flagprism.language as fpl
from flagprism import _launch, debugger


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    out = x + y
    tl.store(out_ptr + offs, out, mask=mask)
    fpl.collect_end()


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * out_stride + offs, y, mask=mask)
    fpl.collect_end()


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    fpl.collect_start()
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc)
    fpl.collect_end()


def _bench(fn: Callable[[], Any]) -> float:
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _twin_call(kernel: Any, args: tuple, kwargs: dict, grid: tuple, level: int, addr_level: int,
               dump_capacity: int | None = None) -> tuple[Callable[[], Any], Any]:
    debugger.activate(level=level, addr_level=addr_level)
    try:
        twin = debugger._twin_for(kernel)
    finally:
        debugger.deactivate()
    plan = _launch.prepare(twin, kernel, args, kwargs, grid, None, dump_capacity)
    buf = plan.buffer
    resets = twin.has_dumps

    def call() -> None:
        if resets:
            buf[4:6].zero_()  # the dump cursor grows at every launch; start each one afresh
        twin.jit[grid](*args, **kwargs, __fp_ctx=buf)

    return call, plan


def compare(name: str, base: Callable[[], Any], inst: Callable[[], Any], rounds: int, extra: dict) -> dict:
    base()
    inst()
    torch.cuda.synchronize()
    tb, ti, ratios = [], [], []
    for _ in range(rounds):
        b = _bench(base)
        i = _bench(inst)
        tb.append(b)
        ti.append(i)
        ratios.append(i / b)
    row = {"case": name, "base_ms": statistics.median(tb), "instrumented_ms": statistics.median(ti),
           "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios), "rounds": rounds}
    row.update(extra)
    return row


def case_add(n: int, level: int, addr: int, rounds: int, dump_capacity: int | None = None) -> dict:
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    block = 1024
    grid = (triton.cdiv(n, block),)
    base = lambda: add_kernel[grid](x, y, out, n, BLOCK=block)  # noqa: E731
    inst, plan = _twin_call(add_kernel, (x, y, out, n), {"BLOCK": block}, grid, level, addr, dump_capacity)
    if plan.arena_words:
        base_plain = base
        scratch = torch.zeros(2, dtype=torch.int64, device="cuda")

        def base() -> None:  # the same small reset as the instrumented call, for fairness
            scratch.zero_()
            base_plain()

    inst()
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    hdr = plan.buffer[:8].cpu().tolist()
    return compare(f"add n={n} level={level} addr_level={addr}", base, inst, rounds,
                   {"programs": plan.programs, "slots": plan.slots, "overflow": hdr[4],
                    "dump_words": plan.arena_words, "dump_cursor": hdr[5]})


def case_softmax(rows: int, cols: int, rounds: int) -> dict:
    x = torch.randn(rows, cols, device="cuda")
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    grid = (rows,)
    args = (out, x, x.stride(0), out.stride(0), cols)
    base = lambda: softmax_kernel[grid](*args, BLOCK=block)  # noqa: E731
    inst, plan = _twin_call(softmax_kernel, args, {"BLOCK": block}, grid, 1, 1)
    inst()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    return compare(f"softmax {rows}x{cols} level=1 addr_level=1", base, inst, rounds,
                   {"programs": plan.programs, "slots": plan.slots})


def case_matmul(m: int, n: int, k: int, rounds: int) -> dict:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    bm, bn, bk = 128, 128, 64
    grid = (m // bm, n // bn)
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    kw = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": 8, "num_stages": 3}
    base = lambda: matmul_kernel[grid](*args, **kw)  # noqa: E731
    inst, plan = _twin_call(matmul_kernel, args, kw, grid, 1, 1)
    inst()
    torch.cuda.synchronize()
    torch.testing.assert_close(c, (a.float() @ b.float()), rtol=2e-2, atol=2e-1)
    hdr = plan.buffer[:8].cpu().tolist()
    return compare(f"matmul {m}x{n}x{k} fp16 level=1 addr_level=1", base, inst, rounds,
                   {"programs": plan.programs, "slots": plan.slots, "overflow": hdr[4]})


def case_end_to_end(n: int) -> dict | None:
    """Wall time of whole Debugger launches (twin + copy back + report), when reports can be written."""
    if not debugger.is_available():
        return None
    import tempfile

    x = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    grid = (triton.cdiv(n, 1024),)
    with tempfile.TemporaryDirectory() as d:
        debugger.configure(output_dir=d)
        debugger.activate()
        add_kernel[grid](x, x, out, n, BLOCK=1024)  # compile
        debugger.clear_exported_runs()
        torch.cuda.synchronize()
        t = time.perf_counter()
        reps = 5
        for _ in range(reps):
            add_kernel[grid](x, x, out, n, BLOCK=1024)
        dt = (time.perf_counter() - t) / reps
        debugger.deactivate()
        debugger.clear_exported_runs()
    return {"case": f"debugger launch end to end n={n}", "seconds_per_launch": dt}


def _child_plain_add(n: int) -> None:
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        add_kernel[grid](x, y, out, n, BLOCK=1024)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    print(json.dumps({"memcheck_ms": statistics.median(times)}))


def case_sanitizer(n: int, base_ms: float | None) -> dict | None:
    exe = shutil.which("compute-sanitizer")
    if exe is None:
        return {"case": "compute-sanitizer memcheck", "skipped": "compute-sanitizer is not on PATH"}
    cmd = [exe, "--tool", "memcheck", sys.executable, os.path.abspath(__file__), "--child-plain-add", str(n)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"case": "compute-sanitizer memcheck", "skipped": "timed out after 600 s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            ms = json.loads(line)["memcheck_ms"]
            row = {"case": f"uninstrumented add under compute-sanitizer memcheck n={n}", "memcheck_ms": ms}
            if base_ms:
                row["ratio_vs_plain"] = ms / base_ms
            return row
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return {"case": "compute-sanitizer memcheck", "skipped": f"did not run (rc {proc.returncode}): {' | '.join(tail)}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer cases")
    ap.add_argument("--out", help="also append the JSON lines to this file (or to bench_debugger.jsonl in "
                    "this directory)")
    ap.add_argument("--child-plain-add", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--no-sanitizer", action="store_true")
    args = ap.parse_args()
    if args.child_plain_add:
        _child_plain_add(args.child_plain_add)
        return 0
    if not torch.cuda.is_available():
        print("bench_debugger: needs a CUDA GPU", file=sys.stderr)
        return 77
    n = (1 << 22) if args.quick else (1 << 26)
    rows: list[dict] = []

    def emit(row: dict | None) -> None:
        if row is None:
            return
        rows.append(row)
        line = json.dumps(row)
        print(line, flush=True)
        if args.out:
            path = os.path.join(args.out, "bench_debugger.jsonl") if os.path.isdir(args.out) else args.out
            with open(path, "a") as f:
                f.write(line + "\n")

    emit({"case": "environment", "gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
          "torch": torch.__version__})
    add = case_add(n, 1, 1, args.rounds)
    emit(add)
    emit(case_add(n, 1, 0, args.rounds))
    emit(case_add(n, 0, 1, args.rounds))
    if not args.quick:
        emit(case_add(1 << 22, 1, 1, args.rounds))
    emit(case_softmax(4096 if args.quick else 32768, 1024, args.rounds))
    emit(case_matmul(1024, 1024, 1024, args.rounds) if args.quick else case_matmul(4096, 4096, 4096, args.rounds))
    n2 = 1 << 22
    emit(case_add(n2, 2, 2, args.rounds, dump_capacity=(n2 // 1024) * 10 * 1024))
    emit(case_end_to_end(n2))
    if not args.no_sanitizer:
        emit(case_sanitizer(n, add["base_ms"]))

    print()
    print(f"{'case':58} {'base ms':>9} {'instr ms':>9} {'ratio':>7}")
    for r in rows:
        if "ratio" in r:
            print(f"{r['case']:58} {r['base_ms']:9.4f} {r['instrumented_ms']:9.4f} {r['ratio']:7.3f}")
        elif "memcheck_ms" in r:
            print(f"{r['case']:58} {'':9} {r['memcheck_ms']:9.4f} {r.get('ratio_vs_plain', 0):7.2f}")
        elif "seconds_per_launch" in r:
            print(f"{r['case']:58} {r['seconds_per_launch'] * 1e3:9.2f} ms per launch")
        elif "skipped" in r:
            print(f"{r['case']:58} skipped: {r['skipped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
