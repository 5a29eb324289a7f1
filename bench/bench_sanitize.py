#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Debugger's sanitize mode against compute-sanitizer memcheck, side by side, in one run.

Slowdown: for each kernel (a vector add, a row softmax and a tiled transpose at sizes where the
GPU does real work, then every kernel of the planted suite at its planted size) the script
times the uninstrumented kernel and its sanitize twin (the exact kernel `activate(sanitize=True)`
launches: every load and store observed, address summaries only) in this process with
triton.testing.do_bench (median), the whole sanitize launch through the Debugger (twin, buffer
copy back, decode, findings, report; wall time per launch), and the uninstrumented kernel under
`compute-sanitizer --tool memcheck` in a child process (CUDA events, median of 5 launches after
one warm-up), when compute-sanitizer is on PATH.

Detection: for every planted bug of tests/python/kernels/planted.py, whether sanitize mode found
its out-of-bounds bugs, whether the full Debugger (level 1, addr_level 1) found every planted
finding, and how many errors memcheck reported for the same launch (child process); then the
detection rates.

Output: one JSON object per line (stdout, and --out FILE), then a table. Needs a CUDA GPU;
`--dry-run` runs the detection part of the Debugger only, on the Triton interpreter
(TRITON_INTERPRET=1), as a smoke test of this script.
Usage: python bench/bench_sanitize.py [--quick] [--out results.jsonl] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402

from flagprism import _launch, _rewrite, debugger  # noqa: E402
from kernels import planted  # noqa: E402

MEMCHECK_TIMEOUT = 900


# ------------------------------------------------------------------------------------------------
# Kernels to time
# ------------------------------------------------------------------------------------------------


def _perf_cases(quick: bool) -> list[tuple[str, Any, Callable[[str], tuple]]]:
    n = (1 << 22) if quick else (1 << 26)
    rows, cols = (1024, 1024) if quick else (8192, 1024)
    side = 2048 if quick else 8192

    def add(dev: str):
        x = torch.randn(n, device=dev)
        return (x, torch.randn(n, device=dev), torch.empty(n, device=dev), n), {"BLOCK": 1024}, (triton.cdiv(n, 1024),)

    def softmax(dev: str):
        x = torch.randn(rows, cols, device=dev)
        out = torch.empty_like(x)
        return (out, x, x.stride(0), out.stride(0), cols), {"BLOCK": cols}, (rows,)

    def transpose(dev: str):
        a = torch.randn(side, side, device=dev).t()
        out = torch.empty(side, side, device=dev)
        return (a, out, side, side, a.stride(0), a.stride(1)), {"BM": 64, "BN": 64}, (side // 64, side // 64)

    out = [(f"add n={n}", planted.add_kernel, add), (f"softmax {rows}x{cols}", planted.softmax_kernel, softmax),
           (f"transpose {side}x{side}", planted.transpose_copy_kernel, transpose)]
    out += [(c.name, c.kernel, c.make) for c in planted.CASES]
    return out


def _bench(fn: Callable[[], Any]) -> float:
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _sanitize_twin_call(kernel: Any, args: tuple, kwargs: dict, grid: tuple) -> Callable[[], Any]:
    twin = _rewrite.build(kernel, 0, 1, debugger._helpers(kernel, "fused"), sanitize=True)
    plan = _launch.prepare(twin, kernel, args, kwargs, grid, None, None)
    buf = plan.buffer

    def call() -> None:
        buf[4:6].zero_()
        twin.jit[grid](*args, **kwargs, __fp_ctx=buf)

    return call


def _debugger_launch_s(kernel: Any, args: tuple, kwargs: dict, grid: tuple, reps: int, out_dir: str) -> float:
    debugger.configure(output_dir=out_dir)
    debugger.activate(sanitize=True)
    try:
        kernel[grid](*args, **kwargs)  # compile the twin
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            kernel[grid](*args, **kwargs)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / reps
    finally:
        debugger.deactivate()
        debugger.clear_exported_runs()
        debugger.reset_config()


# ------------------------------------------------------------------------------------------------
# Child processes (what memcheck runs)
# ------------------------------------------------------------------------------------------------


def _child_time(name: str, quick: bool) -> None:
    case = next(c for c in _perf_cases(quick) if c[0] == name)
    args, kwargs, grid = case[2]("cuda")
    kernel = case[1]
    kernel[grid](*args, **kwargs)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        kernel[grid](*args, **kwargs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    print(json.dumps({"ms": statistics.median(times)}))


def _child_case(name: str) -> None:
    planted.launch(planted.BY_NAME[name], "cuda")
    torch.cuda.synchronize()
    print(json.dumps({"ran": name}))


def _memcheck(extra: list[str]) -> tuple[str, int]:
    exe = shutil.which("compute-sanitizer")
    assert exe is not None
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    cmd = [exe, "--tool", "memcheck", sys.executable, os.path.abspath(__file__), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=MEMCHECK_TIMEOUT, env=env)
    return proc.stdout + proc.stderr, proc.returncode


# ------------------------------------------------------------------------------------------------
# The two parts
# ------------------------------------------------------------------------------------------------


def slowdown(quick: bool, out_dir: str) -> list[dict]:
    rows = []
    have_memcheck = shutil.which("compute-sanitizer") is not None
    for name, kernel, make in _perf_cases(quick):
        args, kwargs, grid = make("cuda")
        plain_ms = _bench(lambda: kernel[grid](*args, **kwargs))
        row: dict[str, Any] = {"part": "slowdown", "case": name, "plain_ms": plain_ms}
        try:
            twin_ms = _bench(_sanitize_twin_call(kernel, args, kwargs, grid))
            row.update(sanitize_twin_ms=twin_ms, sanitize_ratio=twin_ms / plain_ms)
            row["sanitize_launch_s"] = _debugger_launch_s(kernel, args, kwargs, grid, 3, out_dir)
        except Exception as e:  # noqa: BLE001 - record and go on with the other kernels
            row["sanitize_error"] = f"{type(e).__name__}: {e}"[:300]
        if have_memcheck:
            try:
                text, rc = _memcheck(["--child-time", name] + (["--quick"] if quick else []))
                line = next((ln for ln in reversed(text.splitlines()) if ln.startswith('{"ms"')), None)
                if line is not None:
                    ms = json.loads(line)["ms"]
                    row.update(memcheck_ms=ms, memcheck_ratio=ms / plain_ms)
                else:
                    row["memcheck_error"] = f"rc {rc}: {' | '.join(text.strip().splitlines()[-2:])}"[:300]
            except subprocess.TimeoutExpired:
                row["memcheck_error"] = f"timed out after {MEMCHECK_TIMEOUT} s"
        else:
            row["memcheck_error"] = "compute-sanitizer is not on PATH"
        rows.append(row)
        del args
        torch.cuda.empty_cache()
    return rows


def detection(device: str, out_dir: str) -> list[dict]:
    rows = []
    have_memcheck = device == "cuda" and shutil.which("compute-sanitizer") is not None
    debugger.configure(output_dir=out_dir)
    for case in planted.CASES:
        if not case.planted:
            continue
        row: dict[str, Any] = {"part": "detection", "case": case.name,
                               "planted": sorted({e.kind for e in case.expect}), "oob_bug": bool(case.oob)}
        debugger.activate(sanitize=True)
        planted.launch(case, device)
        runs = debugger.take_exported_runs()
        debugger.deactivate()
        fs = [f for r in runs for f in r["findings"]]
        missing, _extra = planted.unmatched(case, fs, {"out_of_bounds"})
        row["sanitize_found"] = bool(case.oob) and not missing
        if not case.sanitize_only:
            debugger.activate(level=1, addr_level=1)
            planted.launch(case, device)
            runs = debugger.take_exported_runs()
            debugger.deactivate()
            missing, _extra = planted.unmatched(case, [f for r in runs for f in r["findings"]])
            row["debugger_found"] = not missing
        if have_memcheck:
            try:
                text, _rc = _memcheck(["--child-case", case.name])
                m = re.search(r"ERROR SUMMARY: (\d+) error", text)
                row["memcheck_errors"] = int(m.group(1)) if m else None
                row["memcheck_found"] = bool(m and int(m.group(1)) > 0)
            except subprocess.TimeoutExpired:
                row["memcheck_errors"] = None
        rows.append(row)
    debugger.reset_config()
    oob = [r for r in rows if r["oob_bug"]]
    summary: dict[str, Any] = {"part": "detection-rate", "planted_bugs": len(rows), "oob_bugs": len(oob),
                               "sanitize_oob_found": sum(r["sanitize_found"] for r in oob),
                               "debugger_found": sum(bool(r.get("debugger_found")) for r in rows)}
    if have_memcheck:
        summary["memcheck_oob_found"] = sum(bool(r.get("memcheck_found")) for r in oob)
        summary["memcheck_found"] = sum(bool(r.get("memcheck_found")) for r in rows)
    rows.append(summary)
    return rows


def _table(rows: list[dict]) -> None:
    slow = [r for r in rows if r["part"] == "slowdown"]
    if slow:
        print(f"\n{'kernel':30} {'plain ms':>10} {'sanitize ms':>12} {'x':>7} {'launch s':>9} "
              f"{'memcheck ms':>12} {'x':>8}")
        for r in slow:
            def f(k: str, fmt: str) -> str:
                return format(r[k], fmt) if k in r else "-"
            print(f"{r['case']:30} {f('plain_ms', '10.4f')} {f('sanitize_twin_ms', '12.4f'):>12} "
                  f"{f('sanitize_ratio', '7.2f'):>7} {f('sanitize_launch_s', '9.3f'):>9} "
                  f"{f('memcheck_ms', '12.4f'):>12} "
                  f"{f('memcheck_ratio', '8.2f'):>8}")
    det = [r for r in rows if r["part"] == "detection"]
    if det:
        print(f"\n{'planted bug':28} {'kinds':45} {'sanitize':9} {'debugger':9} {'memcheck errors':>15}")
        for r in det:
            print(f"{r['case']:28} {','.join(r['planted']):45} {('found' if r['sanitize_found'] else '-'):9} "
                  f"{('found' if r.get('debugger_found') else 'MISSED'):9} {str(r.get('memcheck_errors', '-')):>15}")
    for r in rows:
        if r["part"] == "detection-rate":
            line = (f"\ndetection: sanitize {r['sanitize_oob_found']}/{r['oob_bugs']} out-of-bounds bugs; "
                    f"debugger {r['debugger_found']}/{r['planted_bugs']} planted bugs")
            if "memcheck_oob_found" in r:
                line += (f"; memcheck {r['memcheck_oob_found']}/{r['oob_bugs']} out-of-bounds bugs, "
                         f"{r['memcheck_found']}/{r['planted_bugs']} planted bugs")
            print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--out", help="also write the JSON lines to this file")
    ap.add_argument("--dry-run", action="store_true", help="detection only, on the Triton interpreter")
    ap.add_argument("--child-time", help=argparse.SUPPRESS)
    ap.add_argument("--child-case", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child_time:
        _child_time(a.child_time, a.quick)
        return 0
    if a.child_case:
        _child_case(a.child_case)
        return 0
    import tempfile

    out_dir = tempfile.mkdtemp(prefix="fp-bench-sanitize-")
    if a.dry_run:
        if os.environ.get("TRITON_INTERPRET") != "1":
            raise SystemExit("--dry-run runs on the Triton interpreter: set TRITON_INTERPRET=1")
        rows = detection("cpu", out_dir)
    else:
        if not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1":
            raise SystemExit("needs a CUDA GPU with TRITON_INTERPRET unset (or --dry-run)")
        rows = slowdown(a.quick, out_dir) + detection("cuda", out_dir)
    for r in rows:
        print(json.dumps(r))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    _table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
