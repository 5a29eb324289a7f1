#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Debugger's sanitize mode against compute-sanitizer memcheck, side by side, in one run.

Slowdown: for each kernel (a vector add, a row softmax and a tiled transpose at sizes where the
GPU does real work, then every kernel of the planted suite at its planted size) the script
times the uninstrumented kernel and its sanitize twin (the exact kernel `activate(sanitize=True)`
launches: every load and store observed, address summaries only) in this process with
triton.testing.do_bench (median), the whole sanitize launch through the Debugger (twin, buffer
copy back, decode, findings, report; wall time per launch), and the uninstrumented kernel under
`compute-sanitizer --tool memcheck` (one child process for all kernels, so memcheck starts once;
CUDA events, median of 5 launches after one warm-up), when compute-sanitizer is on PATH.

Detection: for every planted bug of tests/python/kernels/planted.py, whether sanitize mode found
its out-of-bounds bugs, whether the full Debugger (level 1, addr_level 1) found every planted
finding, and how many errors memcheck reported for the same launch (child process); then the
detection rates (the memcheck children of this part run in parallel, one per planted bug, while
this process runs the Debugger on the same bugs: only their error counts matter).

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
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
from _debugger_bench import event_median_ms  # noqa: E402
from kernels import planted  # noqa: E402

from flagprism import _launch, _rewrite, debugger  # noqa: E402

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
        return (
            (x, torch.randn(n, device=dev), torch.empty(n, device=dev), n),
            {"BLOCK": 1024},
            (triton.cdiv(n, 1024),),
        )

    def softmax(dev: str):
        x = torch.randn(rows, cols, device=dev)
        out = torch.empty_like(x)
        return (out, x, x.stride(0), out.stride(0), cols), {"BLOCK": cols}, (rows,)

    def transpose(dev: str):
        a = torch.randn(side, side, device=dev).t()
        out = torch.empty(side, side, device=dev)
        return (
            (a, out, side, side, a.stride(0), a.stride(1)),
            {"BM": 64, "BN": 64},
            (side // 64, side // 64),
        )

    out = [
        (f"add n={n}", planted.add_kernel, add),
        (f"softmax {rows}x{cols}", planted.softmax_kernel, softmax),
        (f"transpose {side}x{side}", planted.transpose_copy_kernel, transpose),
    ]
    out += [(c.name, c.kernel, c.make) for c in planted.CASES]
    return out


def _bench(fn: Callable[[], Any]) -> float:
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _sanitize_twin_call(kernel: Any, args: tuple, kwargs: dict, grid: tuple) -> Callable[[], Any]:
    twin = _rewrite.build(kernel, 0, 1, debugger._helpers(kernel, "fused"), sanitize=True)
    plan = _launch.prepare(twin, kernel, args, kwargs, grid, None, None)
    buf = plan.buffer
    kw = _launch.launch_kwargs(
        plan, kwargs
    )  # the record buffer and the twin's warps, as the Debugger

    def call() -> None:
        buf[4:6].zero_()
        twin.jit[grid](*args, **kw)

    return call


def _debugger_launch_s(
    kernel: Any, args: tuple, kwargs: dict, grid: tuple, reps: int, out_dir: str
) -> float:
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


def _child_time_all(quick: bool) -> None:
    """Under memcheck: every timing case in this one process (one sanitizer start-up, not one per
    kernel), a JSON line per case as soon as it is timed."""
    for name, kernel, make in _perf_cases(quick):
        args, kwargs, grid = make("cuda")
        ms = event_median_ms(lambda: kernel[grid](*args, **kwargs))
        print(json.dumps({"case": name, "ms": ms}), flush=True)
        args = None  # the inputs go before empty_cache()
        torch.cuda.empty_cache()


def _child_case(name: str) -> None:
    planted.launch(planted.BY_NAME[name], "cuda")
    torch.cuda.synchronize()
    print(json.dumps({"ran": name}), flush=True)


def _memcheck_cmd(extra: list[str]) -> tuple[list[str], dict[str, str]]:
    exe = shutil.which("compute-sanitizer")
    assert exe is not None
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    return [exe, "--tool", "memcheck", sys.executable, os.path.abspath(__file__), *extra], env


def _memcheck(extra: list[str]) -> tuple[str, int]:
    cmd, env = _memcheck_cmd(extra)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=MEMCHECK_TIMEOUT, env=env)
    return proc.stdout + proc.stderr, proc.returncode


def _memcheck_many(extras: list[list[str]]) -> list[tuple[str, int] | None]:
    """Several memcheck children at once (detection only: their times do not matter). None for a
    child that ran past MEMCHECK_TIMEOUT."""
    procs = []
    for extra in extras:
        cmd, env = _memcheck_cmd(extra)
        procs.append(
            subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
            )
        )
    deadline = time.monotonic() + MEMCHECK_TIMEOUT
    out: list[tuple[str, int] | None] = []
    for p in procs:
        try:
            text, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            out.append((text, p.returncode))
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            out.append(None)
    return out


# ------------------------------------------------------------------------------------------------
# The two parts
# ------------------------------------------------------------------------------------------------


def _memcheck_times(quick: bool) -> tuple[dict[str, float], str | None]:
    """Memcheck times of every timing case, from one child process under memcheck."""
    if shutil.which("compute-sanitizer") is None:
        return {}, "compute-sanitizer is not on PATH"
    try:
        text, rc = _memcheck(["--child-time-all"] + (["--quick"] if quick else []))
    except subprocess.TimeoutExpired:
        return {}, f"timed out after {MEMCHECK_TIMEOUT} s"
    times = {}
    for ln in text.splitlines():
        if ln.startswith('{"case"'):
            d = json.loads(ln)
            times[d["case"]] = d["ms"]
    err = None if rc == 0 else f"rc {rc}: {' | '.join(text.strip().splitlines()[-2:])}"[:300]
    return times, err


def slowdown(quick: bool, out_dir: str, emit: Callable[[dict], None]) -> list[dict]:
    rows = []
    mc_times, mc_err = _memcheck_times(quick)
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
        if name in mc_times:
            ms = mc_times[name]
            row.update(memcheck_ms=ms, memcheck_ratio=ms / plain_ms)
            if "sanitize_twin_ms" in row:
                row["memcheck_over_sanitize"] = ms / row["sanitize_twin_ms"]
        else:
            row["memcheck_error"] = mc_err or "no time from the memcheck child"
        emit(row)
        rows.append(row)
        args = None  # the inputs go before empty_cache()
        torch.cuda.empty_cache()
    return rows


def detection(device: str, out_dir: str, emit: Callable[[dict], None]) -> list[dict]:
    rows = []
    cases = [c for c in planted.CASES if c.planted]
    have_memcheck = device == "cuda" and shutil.which("compute-sanitizer") is not None
    memcheck = None
    if have_memcheck:  # the children run while this process checks the same bugs
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=1)
        memcheck = pool.submit(_memcheck_many, [["--child-case", c.name] for c in cases])
    debugger.configure(output_dir=out_dir)
    for case in cases:
        row: dict[str, Any] = {
            "part": "detection",
            "case": case.name,
            "planted": sorted({e.kind for e in case.expect}),
            "oob_bug": bool(case.oob),
        }
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
        rows.append(row)
    if memcheck is not None:
        for row, res in zip(rows, memcheck.result()):
            if res is None:
                row["memcheck_errors"] = None
                row["memcheck_error"] = f"timed out after {MEMCHECK_TIMEOUT} s"
                continue
            text, rc = res
            m = re.search(r"ERROR SUMMARY: (\d+) error", text)
            row["memcheck_errors"] = int(m.group(1)) if m else None
            row["memcheck_found"] = bool(m and int(m.group(1)) > 0)
            if m is None or '{"ran"' not in text:
                row["memcheck_error"] = f"rc {rc}: {' | '.join(text.strip().splitlines()[-2:])}"[
                    :300
                ]
    for row in rows:
        emit(row)
    debugger.reset_config()
    oob = [r for r in rows if r["oob_bug"]]
    summary: dict[str, Any] = {
        "part": "detection-rate",
        "planted_bugs": len(rows),
        "oob_bugs": len(oob),
        "sanitize_oob_found": sum(r["sanitize_found"] for r in oob),
        "debugger_found": sum(bool(r.get("debugger_found")) for r in rows),
    }
    if have_memcheck:
        summary["memcheck_oob_found"] = sum(bool(r.get("memcheck_found")) for r in oob)
        summary["memcheck_found"] = sum(bool(r.get("memcheck_found")) for r in rows)
    emit(summary)
    rows.append(summary)
    return rows


def _table(rows: list[dict]) -> None:
    slow = [r for r in rows if r["part"] == "slowdown"]
    if slow:
        print(
            f"\n{'kernel':30} {'plain ms':>10} {'sanitize ms':>12} {'x':>7} {'launch s':>9} "
            f"{'memcheck ms':>12} {'x':>8} {'memcheck/sanitize':>18}"
        )
        for r in slow:

            def f(k: str, fmt: str) -> str:
                return format(r[k], fmt) if k in r else "-"

            print(
                f"{r['case']:30} {f('plain_ms', '10.4f')} {f('sanitize_twin_ms', '12.4f'):>12} "
                f"{f('sanitize_ratio', '7.2f'):>7} {f('sanitize_launch_s', '9.3f'):>9} "
                f"{f('memcheck_ms', '12.4f'):>12} "
                f"{f('memcheck_ratio', '8.2f'):>8} {f('memcheck_over_sanitize', '18.1f'):>18}"
            )
    det = [r for r in rows if r["part"] == "detection"]
    if det:
        print(
            f"\n{'planted bug':28} {'kinds':45} {'sanitize':9} {'debugger':9} {'memcheck errors':>15}"
        )
        for r in det:
            print(
                f"{r['case']:28} {','.join(r['planted']):45} {('found' if r['sanitize_found'] else '-'):9} "
                f"{('found' if r.get('debugger_found') else 'MISSED'):9} {str(r.get('memcheck_errors', '-')):>15}"
            )
    for r in rows:
        if r["part"] == "detection-rate":
            line = (
                f"\ndetection: sanitize {r['sanitize_oob_found']}/{r['oob_bugs']} out-of-bounds bugs; "
                f"debugger {r['debugger_found']}/{r['planted_bugs']} planted bugs"
            )
            if "memcheck_oob_found" in r:
                line += (
                    f"; memcheck {r['memcheck_oob_found']}/{r['oob_bugs']} out-of-bounds bugs, "
                    f"{r['memcheck_found']}/{r['planted_bugs']} planted bugs"
                )
            print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--out", help="also write the JSON lines to this file")
    ap.add_argument(
        "--dry-run", action="store_true", help="detection only, on the Triton interpreter"
    )
    ap.add_argument("--child-time-all", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-case", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child_time_all:
        _child_time_all(a.quick)
        return 0
    if a.child_case:
        _child_case(a.child_case)
        return 0
    import tempfile

    out_dir = tempfile.mkdtemp(prefix="fp-bench-sanitize-")
    sink = open(a.out, "w", encoding="utf-8") if a.out else None

    def emit(row: dict) -> None:  # each row as soon as it exists: a timeout keeps what was measured
        print(json.dumps(row), flush=True)
        if sink is not None:
            sink.write(json.dumps(row) + "\n")
            sink.flush()

    if a.dry_run:
        if os.environ.get("TRITON_INTERPRET") != "1":
            raise SystemExit("--dry-run runs on the Triton interpreter: set TRITON_INTERPRET=1")
        rows = detection("cpu", out_dir, emit)
    else:
        if not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1":
            raise SystemExit("needs a CUDA GPU with TRITON_INTERPRET unset (or --dry-run)")
        rows = slowdown(a.quick, out_dir, emit) + detection("cuda", out_dir, emit)
    if sink is not None:
        sink.close()
    _table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
