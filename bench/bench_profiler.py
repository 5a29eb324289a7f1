#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cost of profiling a Triton launch loop: FlagPrism's "cupti" backend against Proton.

What is measured (issue 5's definition): the steady-state cost per launch of a profiled loop
against the bare loop, in the same process. Cases, each with the same Triton vector add
(BLOCK 1024, ``kernel[grid](...)`` through JITFunction.run):

* ``gpu64m``: launches of a 64M-element add (about 190 us each): GPU-bound, the ratio should be 1.
* ``launch``: 20,000 launches of a 1024-element add: the host is the bottleneck, so the ratio is
  the profiler's cost per launch (Proton measured 1.16x / 1.39x / 1.47x for shadow / hook /
  python on the H200 machine; a bare CUPTI tracer about 1.03x: measured-facts).
* ``finalize``: one session of --finalize-launches small launches (1,000,000 by default); the
  time finalize() takes and the size of the files it writes, per tool.

Modes: ``shadow`` (the defaults; FlagPrism attaches IR estimates, through its C launch hook),
``noest`` (FlagPrism only: shadow with ``estimates=False``, nothing in Triton's hook chains),
``floor`` (FlagPrism only, a measurement, not a mode users have: CUPTI's kernel activity records
without the launch callbacks, ``FLAGPRISM_CUPTI_LAUNCH_CALLBACKS=0``, so nothing is attributed;
what CUPTI alone costs per launch, the floor under every other mode),
``hook`` (``hook="triton"``), ``python`` (``context="python"``), ``pypublic`` (FlagPrism only: the
Python context with the call path read through the public frame API instead of the
interpreter's frame chain, for comparison).

Method. Each tool and mode runs in its own worker
process, Proton's first (one CUPTI subscriber per process, never given back). In a worker, after
a warm-up (compile, caches), rounds alternate the bare and the profiled loop (A B, then B A).
Every timed loop is: ``--warm`` untimed launches and a synchronize, then the timed launches and
a synchronize. A profiled round starts the session *before* its warm-up and finalizes it *after*
the timed loop, so start(), CUPTI's setup, first-launch caches and finalize() (reported on its
own, ``finalize_ms``) are never inside the timed region. Each round gives one ratio
(profiled / bare); the median is reported, with a bootstrap 95 % interval of it (``ratio_ci95``)
and every round's ratio (``ratios``) to show drift within the process. The bare per-launch time drifts by tens of percent between processes on
that machine: only ratios are comparable, never bare times of two workers. By default both
cases run in one worker, GPU-bound first; ``--separate`` runs each case in its own process (a
check that repeated sessions of a tool do not change the later case). ``--interleave`` runs all
modes of a tool in one worker instead, every round timing the bare loop and each mode in an order
that rotates by one every round: the modes then share that process's noise, and their
differences are measured, not inferred from separate processes.

Output: one JSON object per line (stdout, and --out: a file, or a directory that receives
bench_profiler.jsonl), then tables. Needs a CUDA GPU, Triton with Proton, and FlagPrism.
Usage: python bench/bench_profiler.py [--quick] [--rounds 7] [--launches 20000]
       [--big-launches 500] [--finalize-launches 1000000] [--warm 200] [--separate]
       [--tools proton,flagprism] [--modes shadow,noest,floor,hook,python,pypublic] [--interleave]
       [--no-finalize] [--out PATH]
--quick: 5 rounds of 20,000 launches (launch) and 300 (gpu64m), finalize after 200,000
launches (said in its rows); the whole run takes about 2-3 minutes on the H200 machine.
Workers inherit the environment: FLAGPRISM_CUPTI_PATH / TRITON_CUPTI_LIB_PATH choose the
libcupti of each tool (every row names the one it ran on).
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

MODES = ("shadow", "noest", "floor", "hook", "python", "pypublic")
FLAGPRISM_ONLY = ("noest", "floor", "pypublic")
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
        self.enter_hooks: list[str] = []  # Triton's launch-enter chain while a session ran
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
        if self.mode in ("python", "pypublic"):
            kw["context"] = "python"
        if self.tool == "flagprism" and self.mode.startswith("py"):
            from flagprism import _ext  # pypublic: the public frame API's walk, for comparison

            _ext.prof_frames("public" if self.mode == "pypublic" else "auto")
        if self.mode == "noest":
            kw["estimates"] = False  # FlagPrism only: shadow without IR estimates, as Proton's
        if self.mode == "floor":  # CUPTI's kernel activity alone (measurement only)
            kw["estimates"] = False
            os.environ["FLAGPRISM_CUPTI_LAUNCH_CALLBACKS"] = "0"
        try:
            self.mod.start(self.base, **kw)
        finally:  # read at start only: never left set for the next mode
            os.environ.pop("FLAGPRISM_CUPTI_LAUNCH_CALLBACKS", None)
        self.enter_hooks = [
            getattr(f, "__name__", "?") for f in triton.knobs.runtime.launch_enter_hook.calls
        ]

    def finalize(self) -> None:
        self.mod.finalize()

    def outputs(self) -> dict[str, int]:
        d = os.path.dirname(self.base)
        stem = os.path.basename(self.base)
        return {
            f: os.path.getsize(os.path.join(d, f))
            for f in sorted(os.listdir(d))
            if f == stem or f.startswith(stem + ".")
        }

    def library(self) -> str:
        """Which libcupti the tool runs on (they may differ: say so in the results)."""
        try:
            if self.tool == "proton":
                return str(triton.knobs.proton.cupti_lib_dir)
            from flagprism import _ext

            return str(_ext.cupti_stats().get("path", ""))
        except Exception as e:  # noqa: BLE001 - informational only
            return f"? ({type(e).__name__})"


def _sync() -> None:
    import torch

    torch.cuda.synchronize()


def _loop(kernel: Any, args: tuple[Any, ...], grid: tuple[int], launches: int, warm: int) -> float:
    """warm untimed launches, then `launches` timed ones; seconds of the timed part."""
    for _ in range(warm):
        kernel[grid](*args, BLOCK=1024)
    _sync()
    t0 = time.perf_counter()
    for _ in range(launches):
        kernel[grid](*args, BLOCK=1024)
    _sync()
    return time.perf_counter() - t0


def _tensors(n: int) -> tuple[Any, Any, Any]:
    import torch

    return (
        torch.randn(n, device="cuda"),
        torch.randn(n, device="cuda"),
        torch.empty(n, device="cuda"),
    )


def median_ci95(xs: list[float], resamples: int = 2000) -> list[float]:
    """A bootstrap 95 % interval of the median of xs (resampled with a fixed seed)."""
    import random

    rng = random.Random(12345)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(resamples))
    return [round(meds[int(0.025 * resamples)], 4), round(meds[int(0.975 * resamples) - 1], 4)]


def worker_loops(
    tools: list[Tool], cases: list[tuple[str, int, int]], rounds: int, warm: int
) -> None:
    """Rounds of the bare loop and each tool's profiled loop, in an order that rotates every
    round; one row per tool (mode), its ratios taken against the bare loop of the same round."""
    kernel = _kernel()
    for case, n, launches in cases:
        x, y, z = _tensors(n)
        grid = ((n + 1023) // 1024,)
        args = (x, y, z, n)
        _loop(kernel, args, grid, 0, max(warm, 200))  # compile, warm up
        order = ["bare"] + list(range(len(tools)))
        bare: list[float] = []
        prof: list[list[float]] = [[] for _ in tools]
        ratios: list[list[float]] = [[] for _ in tools]
        fin_ms: list[list[float]] = [[] for _ in tools]
        for r in range(rounds):
            k = r % len(order)
            times: dict[Any, float] = {}
            for what in order[k:] + order[:k]:
                if what == "bare":
                    times[what] = _loop(kernel, args, grid, launches, warm)
                else:
                    tool = tools[what]
                    tool.start()
                    times[what] = _loop(kernel, args, grid, launches, warm)
                    t = time.perf_counter()
                    tool.finalize()
                    fin_ms[what].append((time.perf_counter() - t) * 1e3)
            bare.append(times["bare"] / launches * 1e6)
            for i in range(len(tools)):
                prof[i].append(times[i] / launches * 1e6)
                ratios[i].append(times[i] / times["bare"])
        for i, tool in enumerate(tools):
            print(
                json.dumps(
                    {
                        "bench": "profiler",
                        "case": case,
                        "tool": tool.tool,
                        "mode": tool.mode,
                        "elements": n,
                        "launches": launches,
                        "warm": warm,
                        "rounds": rounds,
                        "interleaved_modes": [t.mode for t in tools] if len(tools) > 1 else None,
                        "bare_us_per_launch": round(statistics.median(bare), 3),
                        "profiled_us_per_launch": round(statistics.median(prof[i]), 3),
                        "ratio_median": round(statistics.median(ratios[i]), 4),
                        "ratio_min": round(min(ratios[i]), 4),
                        "ratio_max": round(max(ratios[i]), 4),
                        "ratio_ci95": median_ci95(ratios[i]),
                        "ratios": [round(v, 4) for v in ratios[i]],
                        "bare_us": [round(v, 3) for v in bare],
                        "finalize_ms_median": round(statistics.median(fin_ms[i]), 2),
                        "cupti_library": tool.library(),
                        "enter_hooks": tool.enter_hooks,
                        **_estimate_table(tool),
                    }
                ),
                flush=True,
            )


def _estimate_table(tool: Tool) -> dict[str, Any]:
    """FlagPrism's per-kernel estimate table (shadow context: looked up by the CUPTI callback,
    nothing in the launch hooks): kernels known, launches of unknown kernels."""
    if tool.tool != "flagprism":
        return {}
    from flagprism import _ext

    stats = getattr(_ext, "cupti_kest_stats", None)
    if stats is None:
        return {}
    k = stats()
    return {"est_table_known": k["known"], "est_table_misses": k["misses"]}


def worker_finalize(tool: Tool, launches: int, data: str, quick: bool) -> None:
    kernel = _kernel()
    n = 1024
    x, y, z = _tensors(n)
    args = (x, y, z, n)
    _loop(kernel, args, (1,), 0, 200)
    tool.start(data=data)
    loop_s = _loop(kernel, args, (1,), launches, 0)
    t1 = time.perf_counter()
    tool.finalize()
    fin_s = time.perf_counter() - t1
    files = tool.outputs()
    print(
        json.dumps(
            {
                "bench": "profiler",
                "case": "finalize",
                "tool": tool.tool,
                "mode": tool.mode,
                "data": data,
                "launches": launches,
                "quick": quick,
                "loop_s": round(loop_s, 3),
                "finalize_s": round(fin_s, 4),
                "output_bytes": sum(files.values()),
                "files": files,
                "cupti_library": tool.library(),
            }
        ),
        flush=True,
    )


def worker_main(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="fp-bench-prof-") as d:
        if spec["kind"] == "loops":
            tools = [Tool(spec["tool"], m, d) for m in spec.get("modes") or [spec["mode"]]]
            worker_loops(tools, [tuple(c) for c in spec["cases"]], spec["rounds"], spec["warm"])
        else:
            worker_finalize(
                Tool(spec["tool"], spec["mode"], d), spec["launches"], spec["data"], spec["quick"]
            )


# -------------------------------------------------------------------------------------------------
# Driver side
# -------------------------------------------------------------------------------------------------


def run_worker(spec: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [
            {
                "bench": "profiler",
                "tool": spec["tool"],
                "mode": spec["mode"],
                "kind": spec["kind"],
                "error": f"timed out after {timeout:.0f} s",
            }
        ]
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    for row in rows:
        row["worker_s"] = round(time.perf_counter() - t0, 1)
    if r.returncode != 0 or not rows:
        rows.append(
            {
                "bench": "profiler",
                "tool": spec["tool"],
                "mode": spec["mode"],
                "kind": spec["kind"],
                "error": (r.stderr or r.stdout)[-1500:],
            }
        )
    return rows


TARGETS = {
    ("launch", "shadow"): 1.05,
    ("launch", "noest"): 1.05,
    ("gpu64m", "noest"): 1.01,
    ("launch", "hook"): 1.15,
    ("launch", "python"): 1.10,
    ("gpu64m", "shadow"): 1.01,
    ("gpu64m", "hook"): 1.01,
    ("gpu64m", "python"): 1.01,
}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'case':<9} {'tool':<10} {'mode':<8} {'bare us':>9} {'prof us':>9} "
        f"{'ratio':>7} {'median 95% CI':>16} {'min':>6} {'max':>6} {'target':>6}  fin ms  "
        "per-round ratios"
    ]
    loops = [r for r in rows if r.get("case") in ("launch", "gpu64m") and not r.get("error")]
    for r in sorted(
        loops, key=lambda r: (r["case"] != "launch", TOOLS.index(r["tool"]), MODES.index(r["mode"]))
    ):
        tgt = TARGETS.get((r["case"], r["mode"])) if r["tool"] == "flagprism" else None
        lines.append(
            f"{r['case']:<9} {r['tool']:<10} {r['mode']:<8} "
            f"{r['bare_us_per_launch']:>9.2f} {r['profiled_us_per_launch']:>9.2f} "
            f"{r['ratio_median']:>7.3f} "
            f"{'[{:.3f}, {:.3f}]'.format(*r.get('ratio_ci95', [0, 0])):>16} "
            f"{r['ratio_min']:>6.3f} {r['ratio_max']:>6.3f} "
            f"{(f'{tgt:.2f}' if tgt else ''):>6}  {r['finalize_ms_median']:>6.1f}  "
            + " ".join(f"{v:.3f}" for v in r["ratios"])
        )
    for r in rows:
        if r.get("case") == "finalize" and not r.get("error"):
            lines.append(
                f"finalize  {r['tool']:<10} {r['mode']:<7} {r['launches']} launches "
                f"({r['data']}{', quick' if r['quick'] else ''}): finalize "
                f"{r['finalize_s']:.3f} s, {r['output_bytes']} bytes written "
                f"{r['files']}, loop {r['loop_s']:.1f} s"
            )
    for r in rows:
        if r.get("error"):
            lines.append(
                f"{r.get('case', r.get('kind', '?')):<9} {r['tool']:<10} "
                f"{r['mode']:<7} ERROR: {r['error'].strip().splitlines()[-1][:100]}"
            )
    libs = sorted({(r["tool"], r.get("cupti_library", "")) for r in rows if not r.get("error")})
    for tool, lib in libs:
        lines.append(f"libcupti of {tool}: {lib}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--big-launches", type=int, default=500)
    ap.add_argument(
        "--warm",
        type=int,
        default=200,
        help="untimed launches before every timed loop (after start())",
    )
    ap.add_argument("--finalize-launches", type=int, default=1000000)
    ap.add_argument("--finalize-data", default="tree", choices=("tree", "trace"))
    ap.add_argument("--no-finalize", action="store_true")
    ap.add_argument(
        "--separate", action="store_true", help="run each case in its own worker process"
    )
    ap.add_argument(
        "--interleave",
        action="store_true",
        help="one worker per tool running all its modes, interleaved in every round "
        "(the modes then share the process's noise)",
    )
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument(
        "--modes", default="shadow,noest,floor,hook,python", help="any of " + ",".join(MODES)
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="5 rounds; 20,000 launches (launch), 300 (gpu64m); finalize after 200,000 launches",
    )
    ap.add_argument("--timeout", type=float, default=600, help="seconds per worker process")
    ap.add_argument("--out", help="file for the JSON lines, or a directory")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker_main(json.loads(a.worker))
        return 0
    if a.quick:
        a.rounds, a.launches, a.big_launches = 5, 20000, 300
        a.finalize_launches = min(a.finalize_launches, 200000)
    tools = [t for t in TOOLS if t in a.tools.split(",")]  # Proton first
    modes = [m for m in MODES if m in a.modes.split(",")]
    cases = [("gpu64m", 1 << 26, a.big_launches), ("launch", 1024, a.launches)]
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

    groups = [[c] for c in cases] if a.separate else [cases]
    for tool in tools if a.interleave else []:
        tm = [m for m in modes if m not in FLAGPRISM_ONLY or tool == "flagprism"]
        for group in groups:
            emit(
                run_worker(
                    {
                        "kind": "loops",
                        "tool": tool,
                        "mode": ",".join(tm),
                        "modes": tm,
                        "cases": group,
                        "rounds": a.rounds,
                        "warm": a.warm,
                    },
                    a.timeout,
                )
            )
    for tool in tools if not a.interleave else []:
        for mode in modes:
            if mode in FLAGPRISM_ONLY and tool != "flagprism":
                continue  # FlagPrism's own measurements (Proton has no IR estimates, no floor switch)
            for group in groups:
                emit(
                    run_worker(
                        {
                            "kind": "loops",
                            "tool": tool,
                            "mode": mode,
                            "cases": group,
                            "rounds": a.rounds,
                            "warm": a.warm,
                        },
                        a.timeout,
                    )
                )
    if not a.no_finalize:
        for tool in tools:
            emit(
                run_worker(
                    {
                        "kind": "finalize",
                        "tool": tool,
                        "mode": "shadow",
                        "launches": a.finalize_launches,
                        "data": a.finalize_data,
                        "quick": a.quick,
                    },
                    a.timeout,
                )
            )
    if out:
        out.close()
    print()
    print(table(rows))
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
