#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Debugger's sanitize mode on real programs, against the bare program, side by side.

Workloads (tests/gpu/_workloads.py): FlagGems' operators under use_gems() (9 ops, LibEntry
launches), and a small torch.compile'd block (Inductor kernels). Two measures per workload:

* in-process, interleaved: one pass bare, one pass with `debugger.activate(sanitize=True)`,
  alternating for --rounds rounds after a warm-up of both; the ratio of medians, the cost per
  instrumented launch ((sanitize pass - bare pass) / instrumented launches per pass: host work and
  the twins' extra device time) and the launch fast path's counters of the timed rounds
  (debugger.stats()["launch"]: plans reused, launches that took the slow path);
* whole program: `python prog.py` against `flagprism debug --sanitize prog.py` (child processes,
  alternating, --programs times each), wall time including start-up, compilation and the
  summary, as a user sees it.

Output: one JSON object per line (stdout, and --out FILE), then a table.
Usage: python bench/bench_launch_paths.py [--quick] [--rounds N] [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import json
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


def in_process(name: str, run: Callable[[], Any], rounds: int, outdir: str) -> dict[str, Any]:
    debugger.configure(output_dir=outdir)
    run()  # warm-up, bare (compiles the kernels)
    debugger.activate(sanitize=True)
    debugger.reset_summary()
    run()  # warm-up, sanitize (builds and compiles the twins)
    debugger.deactivate()
    launches = debugger.summary()["totals"]["by_status"]["instrumented"]
    from flagprism import _plans

    _plans.reset()  # the launch fast path's counters of the timed rounds
    bare, san = [], []
    for _ in range(rounds):
        bare.append(_timed(run))
        debugger.activate(sanitize=True)
        san.append(_timed(run))
        debugger.deactivate()
        debugger.clear_exported_runs()
    b, s = statistics.median(bare), statistics.median(san)
    return {
        "bench": "launch_paths",
        "workload": name,
        "measure": "in_process",
        "rounds": rounds,
        "bare_ms": b * 1e3,
        "sanitize_ms": s * 1e3,
        "ratio": s / b,
        "instrumented_launches_per_pass": launches,
        "host_us_per_launch": (s - b) / max(launches, 1) * 1e6,
        "findings": debugger.summary()["totals"]["findings"],
        "counters": debugger.stats()["launch"],
    }


PROGRAM = """\
import sys
sys.path.insert(0, {gpu!r})
import _workloads as wl
import torch
which = sys.argv[1]
if which == "gems":
    t = wl.gems_inputs()
    for _ in range(3):
        wl.gems_run(t)
else:
    m, x = wl.compiled_block()
    with torch.no_grad():
        for _ in range(3):
            m(x)
    torch.cuda.synchronize()
print("done")
"""


def whole_program(name: str, which: str, runs: int, tmp: Path) -> dict[str, Any]:
    prog = tmp / "prog.py"
    prog.write_text(PROGRAM.format(gpu=str(HERE.parent / "tests" / "gpu")))
    bare_cmd = [sys.executable, str(prog), which]
    san_cmd = ["flagprism", "debug", "--sanitize", "-o", str(tmp / "dbg"), str(prog), which]
    bare, san = [], []
    for _ in range(runs):
        for cmd, acc in ((bare_cmd, bare), (san_cmd, san)):
            t = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            acc.append(time.perf_counter() - t)
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    b, s = statistics.median(bare), statistics.median(san)
    return {
        "bench": "launch_paths",
        "workload": name,
        "measure": "whole_program",
        "runs": runs,
        "bare_s": b,
        "sanitize_s": s,
        "ratio": s / b,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds in process")
    ap.add_argument("--programs", type=int, default=None, help="whole-program runs of each")
    ap.add_argument("--out", default=None, help="also append the JSON lines to this file")
    args = ap.parse_args()
    rounds = args.rounds or (5 if args.quick else 15)
    programs = args.programs or (1 if args.quick else 3)
    out = open(args.out, "a", encoding="utf-8") if args.out else None
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        work: list[tuple[str, str, Callable[[], Any]]] = []
        if wl.missing("flag_gems") is None:
            t = wl.gems_inputs()
            work.append(("FlagGems 9 ops", "gems", lambda: wl.gems_run(t)))
        else:
            print(f"# skipped FlagGems: {wl.missing('flag_gems')}", file=sys.stderr)
        m, x = wl.compiled_block()

        def block() -> None:
            with torch.no_grad():
                m(x)

        work.append(("torch.compile block", "block", block))
        for name, which, run in work:
            rows.append(in_process(name, run, rounds, str(tmp / "dbg_inproc")))
            _emit(rows[-1], out)
            rows.append(whole_program(name, which, programs, tmp))
            _emit(rows[-1], out)
    print(
        f"{'workload':24} {'measure':14} {'bare':>10} {'sanitize':>10} {'ratio':>7} {'host us/launch':>15}"
    )
    for r in rows:
        if r["measure"] == "in_process":
            print(
                f"{r['workload']:24} {r['measure']:14} {r['bare_ms']:8.2f}ms {r['sanitize_ms']:8.2f}ms "
                f"{r['ratio']:6.2f}x {r['host_us_per_launch']:15.0f}"
            )
        else:
            print(
                f"{r['workload']:24} {r['measure']:14} {r['bare_s']:9.2f}s {r['sanitize_s']:9.2f}s "
                f"{r['ratio']:6.2f}x"
            )
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
