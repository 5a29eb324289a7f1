#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check mode on a real workload, side by side in one run: Liger-Kernel's ops forward and backward
(tests/gpu/_workloads.py: RMSNorm, LayerNorm, SwiGLU, CrossEntropy, RoPE) per pass, bare against
`debugger.activate(check="bounds")` and `check="nan,inf"`, interleaved in one process (median
of --rounds rounds, after a warm-up of each mode; each round switches the Debugger on and off),
then each mode in one block of 3 x --rounds passes under one activation (what a long run sees); the same script under compute-sanitizer
memcheck (one child process, --memcheck-passes passes, when compute-sanitizer is on PATH); the
host cost per instrumented launch on each launch path (JITFunction.run, triton.autotune, FlagGems'
LibEntry, torch.compile's Inductor: the launching thread's wall and CPU time per launch of a small
kernel, bare and in check mode, the GPU idle, with the launch fast path's counters); and the
64M-element vector add at level 1 + addr_level 1, end to end (twin, read back, decode, reports,
run dict), with the pipeline and without.

Output: one JSON object per line (stdout, and --out FILE), then a table.
Usage: python bench/bench_check.py [--quick] [--rounds N] [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "gpu"))
sys.path.insert(0, str(HERE.parent / "tests" / "python"))

import _workloads as wl  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402

from flagprism import debugger  # noqa: E402


def _emit(row: dict[str, Any], out: Any) -> None:
    line = json.dumps(row, sort_keys=True)
    print(line, flush=True)
    if out is not None:
        out.write(line + "\n")
        out.flush()


def _timed(fn: Callable[[], Any]) -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t


MODES = {"bare": None, "bounds": "bounds", "nan,inf": "nan,inf"}


def liger(rounds: int, outdir: str) -> list[dict[str, Any]]:
    t = wl.liger_inputs()

    def run() -> None:
        wl.liger_pass(t)

    debugger.configure(output_dir=outdir)
    launches: dict[str, int] = {}
    for name, check in MODES.items():  # warm-up: compiles kernels and twins
        if check:
            debugger.reset_summary()
            debugger.activate(check=check)
        run()
        if check:
            debugger.deactivate()
            launches[name] = debugger.summary()["totals"]["by_status"]["instrumented"]
    times: dict[str, list[float]] = {k: [] for k in MODES}
    order = list(MODES)
    for i in range(rounds):
        for name in order[i % len(order) :] + order[: i % len(order)]:
            check = MODES[name]
            if check:
                debugger.activate(check=check)
            times[name].append(_timed(run))
            if check:
                debugger.deactivate()
                debugger.clear_exported_runs()
    bare = statistics.median(times["bare"])
    rows = []
    for name in MODES:
        m = statistics.median(times[name])
        row = {
            "bench": "check",
            "workload": "liger fwd+bwd",
            "mode": name,
            "rounds": rounds,
            "pass_ms": m * 1e3,
            "ratio": m / bare,
        }
        if name in launches:
            row["instrumented_launches_per_pass"] = launches[name]
            row["findings"] = debugger.summary()["totals"]["findings"]
        rows.append(row)
    rows.extend(steady(run, 3 * rounds))
    return rows


def steady(run: Callable[[], Any], passes: int) -> list[dict[str, Any]]:
    """The same passes with each mode in one block: one activation, `passes` timed passes (median),
    as a long run sees them; the interleaved rounds above switch the Debugger at every pass."""
    times: dict[str, float] = {}
    for name, check in MODES.items():
        if check:
            debugger.activate(check=check)
        run()
        times[name] = statistics.median(_timed(run) for _ in range(passes))
        if check:
            debugger.deactivate()
            debugger.clear_exported_runs()
    return [
        {
            "bench": "check",
            "workload": "liger fwd+bwd, one activation",
            "mode": name,
            "passes": passes,
            "pass_ms": times[name] * 1e3,
            "ratio": times[name] / times["bare"],
        }
        for name in MODES
    ]


def _host_per_call(call: Callable[[], Any], check: str | None, calls: int) -> dict[str, Any]:
    """The launching thread's time per call of `call` (wall and its own CPU time; the GPU is not
    waited for inside the loop), after a warm-up call, bare (check None) or in check mode; in
    check mode also the launch counters (debugger.stats()["launch"]) of the timed calls."""
    from flagprism import _plans

    if check:
        debugger.activate(check=check)
    call()  # builds the kernels, twins and plans
    torch.cuda.synchronize()
    _plans.reset()
    t, c = time.perf_counter(), time.thread_time()
    for _ in range(calls):
        call()
    wall, cpu = (time.perf_counter() - t) / calls, (time.thread_time() - c) / calls
    torch.cuda.synchronize()
    out: dict[str, Any] = {"wall_us": wall * 1e6, "cpu_us": cpu * 1e6}
    if check:
        out["counters"] = debugger.stats()["launch"]
        debugger.deactivate()
        debugger.clear_exported_runs()
    return out


def _path_calls() -> list[tuple[str, Callable[[], Any], Any]]:
    """(launch path, one call launching one small kernel, context to run the calls in)."""
    import contextlib

    from kernels import tuned, vector_add

    n = 4096
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    paths: list[tuple[str, Callable[[], Any], Any]] = [
        (
            "JITFunction.run (add 4096)",
            lambda: vector_add.add_kernel[grid](x, x, out, n, BLOCK=1024),
            contextlib.nullcontext,
        ),
        (
            "triton.autotune (scale 4096)",
            lambda: tuned.tuned_scale[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n),
            contextlib.nullcontext,
        ),
    ]
    if wl.missing("flag_gems") is None:
        import flag_gems

        paths.append(("FlagGems LibEntry (add 4096)", lambda: torch.add(x, x), flag_gems.use_gems))
    else:
        print(f"# skipped the LibEntry path: {wl.missing('flag_gems')}", file=sys.stderr)
    compiled = torch.compile(lambda v: v * 2.0 + 1.0)
    paths.append(("torch.compile (Inductor, 4096)", lambda: compiled(x), contextlib.nullcontext))
    return paths


def host_paths(outdir: str, calls: int = 300) -> list[dict[str, Any]]:
    """Host cost per instrumented launch on each launch path: the launching thread's time per
    launch of a small kernel, bare and in check mode (bounds; nan,inf), the GPU idle."""
    debugger.configure(output_dir=outdir)
    rows = []
    for path, call, ctx in _path_calls():
        with ctx():
            res = {mode: _host_per_call(call, MODES[mode], calls) for mode in MODES}
        for mode in ("bounds", "nan,inf"):
            r, b = res[mode], res["bare"]
            cnt = r["counters"]
            launches = (cnt["plan_hits"] + cnt["plans_built"] + cnt["slow_launches"]) / calls
            rows.append(
                {
                    "bench": "check",
                    "workload": path,
                    "mode": mode,
                    "measure": "host_per_launch",
                    "calls": calls,
                    "instrumented_launches_per_call": launches,
                    "bare_us": b["wall_us"],
                    "instrumented_us": r["wall_us"],
                    "added_us": (r["wall_us"] - b["wall_us"]) / max(launches, 1),
                    "bare_cpu_us": b["cpu_us"],
                    "instrumented_cpu_us": r["cpu_us"],
                    "added_cpu_us": (r["cpu_us"] - b["cpu_us"]) / max(launches, 1),
                    "counters": cnt,
                }
            )
    return rows


MEMCHECK_PROG = """\
import sys, time
sys.path.insert(0, {gpu!r})
import _workloads as wl
import torch
t = wl.liger_inputs()
wl.liger_pass(t)
torch.cuda.synchronize()
s = time.perf_counter()
for _ in range({passes}):
    wl.liger_pass(t)
torch.cuda.synchronize()
print("PASS_S", (time.perf_counter() - s) / {passes})
"""


def memcheck(passes: int, tmp: Path) -> dict[str, Any] | None:
    exe = shutil.which("compute-sanitizer")
    if exe is None:
        return None
    prog = tmp / "liger_prog.py"
    prog.write_text(MEMCHECK_PROG.format(gpu=str(HERE.parent / "tests" / "gpu"), passes=passes))
    r = subprocess.run(
        [exe, "--tool", "memcheck", sys.executable, str(prog)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("PASS_S")), None)
    if line is None:
        return {
            "bench": "check",
            "workload": "liger fwd+bwd",
            "mode": "memcheck",
            "error": r.stderr[-500:],
        }
    return {
        "bench": "check",
        "workload": "liger fwd+bwd",
        "mode": "memcheck",
        "passes": passes,
        "pass_ms": float(line.split()[1]) * 1e3,
        "errors_line": next((ln for ln in r.stdout.splitlines() if "ERROR SUMMARY" in ln), None),
    }


def add_64m(outdir: str) -> list[dict[str, Any]]:
    from kernels import vector_add

    n = 1 << 26
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    rows = []
    for pipeline in (True, False):
        debugger.configure(output_dir=outdir, pipeline=pipeline)
        debugger.activate(level=1, addr_level=1)
        vector_add.add_kernel[grid](x, x, out, n, BLOCK=1024)  # compiles the twin
        debugger.take_exported_runs()
        best = None
        for _ in range(3):
            torch.cuda.synchronize()
            t = time.perf_counter()
            vector_add.add_kernel[grid](x, x, out, n, BLOCK=1024)
            (run,) = debugger.take_exported_runs()  # waits for the reports
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        debugger.deactivate()
        rows.append(
            {
                "bench": "check",
                "workload": "add 64M level 1",
                "mode": "pipeline" if pipeline else "sync",
                "measure": "end_to_end",
                "seconds": best,
                "records": run["programs"] * run["slots_per_program"],
                "complete": run["complete"],
            }
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--memcheck-passes", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rounds = args.rounds or (7 if args.quick else 21)
    out = open(args.out, "a", encoding="utf-8") if args.out else None
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        if wl.missing("liger_kernel") is None:
            for r in liger(rounds, str(tmp / "dbg")):
                rows.append(r)
                _emit(r, out)
            m = memcheck(args.memcheck_passes, tmp)
            if m is not None:
                rows.append(m)
                _emit(m, out)
        else:
            print(f"# skipped Liger-Kernel: {wl.missing('liger_kernel')}", file=sys.stderr)
        for r in host_paths(str(tmp / "dbg2")):
            rows.append(r)
            _emit(r, out)
        for r in add_64m(str(tmp / "dbg3")):
            rows.append(r)
            _emit(r, out)
    bare = next((r["pass_ms"] for r in rows if r.get("mode") == "bare"), None)
    for r in rows:
        if "pass_ms" in r:
            ratio = r.get("ratio", r["pass_ms"] / bare if bare else float("nan"))
            print(
                f"{r['workload']:32} {r['mode']:9} {r['pass_ms']:9.2f} ms/pass  {ratio:6.2f}x bare"
            )
        elif r.get("measure") == "host_per_launch":
            print(
                f"{r['workload']:32} {r['mode']:9} host {r['instrumented_us']:8.1f} us/call "
                f"(bare {r['bare_us']:.1f}; added per launch {r['added_us']:.1f} us wall, "
                f"{r['added_cpu_us']:.1f} us CPU; fast path {r['counters']['plan_hits']}/"
                f"{r['calls'] * r['instrumented_launches_per_call']:.0f})"
            )
        elif r.get("measure") == "end_to_end":
            print(f"{r['workload']:18} {r['mode']:9} {r['seconds']:8.3f} s end to end")
    mc = next((r for r in rows if r.get("mode") == "memcheck" and "pass_ms" in r), None)
    if mc:
        for r in rows:
            if r.get("mode") in ("bounds", "nan,inf") and "pass_ms" in r:
                print(
                    f"memcheck / {r['mode']} ({r['workload']}): {mc['pass_ms'] / r['pass_ms']:.1f}x"
                )
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
