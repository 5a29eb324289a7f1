#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cost of profiling a Triton launch loop: FlagPrism's "cupti" backend against Proton.

Cases, each with the same Triton vector add (BLOCK 1024):

* ``launch``: 20,000 launches of a 1024-element add. The host is the bottleneck, so this shows
  the profiler's cost per launch (Proton measured 1.16x / 1.39x / 1.47x for shadow / hook /
  python on the H200 machine; a bare CUPTI tracer 1.03x: docs/cupti-backend.md).
* ``gpu64m``: launches of a 64M-element add (about 190 us each): GPU-bound, the ratio should be 1.
* ``finalize``: one session of 1,000,000 small launches; the time finalize takes and the size of
  what it writes.

Each tool and mode (shadow, hook="triton", context="python") runs in its own process, Proton's
first: one CUPTI subscriber per process, and once taken it is never given back. Inside a
process the bare loop and the profiled loop alternate (A B, then B A) for --rounds rounds; each
round gives a ratio, the median ratio is reported (the bare per-launch time drifts by tens of
percent between processes on that machine: only in-process ratios are comparable).

Output: one JSON object per line (stdout, and --out: a file, or a directory that receives
bench_profiler.jsonl), then a table. Needs a CUDA GPU, Triton with Proton, and FlagPrism.
Usage: python bench/bench_profiler.py [--rounds 8] [--launches 20000] [--quick] [--out DIR]
       [--tools proton,flagprism] [--modes shadow,hook,python] [--no-finalize]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

MODES = ("shadow", "hook", "python")
TOOLS = ("proton", "flagprism")


# -------------------------------------------------------------------------------------------------
# Worker side: one tool, one mode, in this process
# -------------------------------------------------------------------------------------------------


try:  # the driver process needs neither; workers do
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - reported by the workers
    triton = None

if triton is not None:

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)


def _kernel() -> Any:
    if triton is None:
        raise RuntimeError("Triton is not importable")
    return add_kernel


class Tool:
    """start/finalize of one profiler in one mode, and the files a session wrote."""

    def __init__(self, tool: str, mode: str, workdir: str) -> None:
        self.tool, self.mode, self.workdir = tool, mode, workdir
        self.n = 0
        self.base = ""
        if tool == "proton":
            import triton.profiler as proton

            self.mod = proton
        else:
            import flagprism.profiler as profiler

            self.mod = profiler

    def start(self, data: str = "tree") -> None:
        self.n += 1
        self.base = os.path.join(self.workdir, f"{self.tool}-{self.mode}-{self.n}")
        kw: dict[str, Any] = {"data": data, "backend": "cupti"}
        if self.mode == "hook":
            kw["hook"] = "triton"
        if self.mode == "python":
            kw["context"] = "python"
        self.mod.start(self.base, **kw)

    def finalize(self) -> None:
        self.mod.finalize()

    def outputs(self) -> list[str]:
        d = os.path.dirname(self.base)
        stem = os.path.basename(self.base)
        return [os.path.join(d, f) for f in os.listdir(d)
                if f == stem or f.startswith(stem + ".")]


def _loop(kernel: Any, args: tuple[Any, ...], grid: tuple[int], launches: int) -> float:
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        kernel[grid](*args, BLOCK=1024)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def _tensors(n: int) -> tuple[Any, Any, Any]:
    import torch

    return (torch.randn(n, device="cuda"), torch.randn(n, device="cuda"),
            torch.empty(n, device="cuda"))


def worker_loops(tool: Tool, cases: list[tuple[str, int, int]], rounds: int) -> None:
    kernel = _kernel()
    for case, n, launches in cases:
        x, y, z = _tensors(n)
        grid = ((n + 1023) // 1024,)
        args = (x, y, z, n)
        _loop(kernel, args, grid, 200)  # compile, warm up
        bare, prof, ratios = [], [], []
        for r in range(rounds):
            order = ("bare", "prof") if r % 2 == 0 else ("prof", "bare")
            times: dict[str, float] = {}
            for what in order:
                if what == "bare":
                    times[what] = _loop(kernel, args, grid, launches)
                else:
                    tool.start()
                    times[what] = _loop(kernel, args, grid, launches)
                    tool.finalize()
            bare.append(times["bare"] / launches * 1e6)
            prof.append(times["prof"] / launches * 1e6)
            ratios.append(times["prof"] / times["bare"])
        print(json.dumps({
            "bench": "profiler", "case": case, "tool": tool.tool, "mode": tool.mode,
            "elements": n, "launches": launches, "rounds": rounds,
            "bare_us_per_launch": round(statistics.median(bare), 3),
            "profiled_us_per_launch": round(statistics.median(prof), 3),
            "ratio_median": round(statistics.median(ratios), 4),
            "ratio_min": round(min(ratios), 4), "ratio_max": round(max(ratios), 4),
        }), flush=True)


def worker_finalize(tool: Tool, launches: int, data: str) -> None:
    import torch

    kernel = _kernel()
    n = 1024
    x, y, z = _tensors(n)
    args = (x, y, z, n)
    _loop(kernel, args, (1,), 200)
    tool.start(data=data)
    t0 = time.perf_counter()
    _loop(kernel, args, (1,), launches)
    loop_s = time.perf_counter() - t0
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    tool.finalize()
    fin_s = time.perf_counter() - t1
    files = {os.path.basename(p): os.path.getsize(p) for p in tool.outputs()}
    print(json.dumps({
        "bench": "profiler", "case": "finalize", "tool": tool.tool, "mode": tool.mode,
        "data": data, "launches": launches, "loop_s": round(loop_s, 3),
        "finalize_s": round(fin_s, 4), "output_bytes": sum(files.values()), "files": files,
    }), flush=True)


def worker_main(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="fp-bench-prof-") as d:
        tool = Tool(spec["tool"], spec["mode"], d)
        if spec["kind"] == "loops":
            worker_loops(tool, [tuple(c) for c in spec["cases"]], spec["rounds"])
        else:
            worker_finalize(tool, spec["launches"], spec["data"])


# -------------------------------------------------------------------------------------------------
# Driver side
# -------------------------------------------------------------------------------------------------


def run_worker(spec: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [{"bench": "profiler", "tool": spec["tool"], "mode": spec["mode"],
                 "error": f"timed out after {timeout:.0f} s"}]
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    if r.returncode != 0 or not rows:
        rows.append({"bench": "profiler", "tool": spec["tool"], "mode": spec["mode"],
                     "kind": spec["kind"], "error": (r.stderr or r.stdout)[-1500:]})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'case':<9} {'tool':<10} {'mode':<7} {'bare us':>9} {'prof us':>9} "
             f"{'ratio':>7} {'min':>6} {'max':>6}"]
    for r in rows:
        if r.get("error"):
            lines.append(f"{r.get('case', r.get('kind', '?')):<9} {r['tool']:<10} "
                         f"{r['mode']:<7} ERROR: {r['error'].strip().splitlines()[-1][:80]}")
        elif r["case"] == "finalize":
            lines.append(f"{'finalize':<9} {r['tool']:<10} {r['mode']:<7} "
                         f"{r['launches']} launches ({r['data']}): finalize "
                         f"{r['finalize_s']:.3f} s, {r['output_bytes']} bytes written, "
                         f"loop {r['loop_s']:.1f} s")
        else:
            lines.append(f"{r['case']:<9} {r['tool']:<10} {r['mode']:<7} "
                         f"{r['bare_us_per_launch']:>9.2f} {r['profiled_us_per_launch']:>9.2f} "
                         f"{r['ratio_median']:>7.3f} {r['ratio_min']:>6.3f} {r['ratio_max']:>6.3f}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--big-launches", type=int, default=1000)
    ap.add_argument("--finalize-launches", type=int, default=1000000)
    ap.add_argument("--finalize-data", default="tree", choices=("tree", "trace"))
    ap.add_argument("--no-finalize", action="store_true")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--quick", action="store_true", help="4 rounds, 5,000 launches, 100,000 "
                    "launches for finalize")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per worker process")
    ap.add_argument("--out", help="file for the JSON lines, or a directory")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker_main(json.loads(a.worker))
        return 0
    if a.quick:
        a.rounds, a.launches, a.big_launches = 4, 5000, 300
        a.finalize_launches = min(a.finalize_launches, 100000)
    tools = [t for t in TOOLS if t in a.tools.split(",")]  # Proton first
    modes = [m for m in MODES if m in a.modes.split(",")]
    cases = [("launch", 1024, a.launches), ("gpu64m", 1 << 26, a.big_launches)]
    out = None
    if a.out:
        path = os.path.join(a.out, "bench_profiler.jsonl") if os.path.isdir(a.out) else a.out
        out = open(path, "w", encoding="utf-8")
    rows: list[dict[str, Any]] = []

    def emit(new: list[dict[str, Any]]) -> None:
        for r in new:
            line = json.dumps(r)
            print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
        rows.extend(new)

    for tool in tools:
        for mode in modes:
            emit(run_worker({"kind": "loops", "tool": tool, "mode": mode, "cases": cases,
                             "rounds": a.rounds}, a.timeout))
    if not a.no_finalize:
        for tool in tools:
            emit(run_worker({"kind": "finalize", "tool": tool, "mode": "shadow",
                             "launches": a.finalize_launches, "data": a.finalize_data},
                            a.timeout))
    if out:
        out.close()
    print()
    print(table(rows))
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
