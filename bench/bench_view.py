#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time `flagprism view` against Triton's `proton-viewer` on the same profiles, side by side.

The profiles come from build/bench/bench-prof (a synthetic Python-context profile of about N
call-tree nodes, one kernel per leaf, written as a Hatchet file that both viewers read):
--nodes (default 1,000,000) for the large file and --proton-nodes (default 20,000) for a small
one on which proton-viewer finishes in reasonable time. Both tools run on both files with the
same metric and depth (-m time/ms -d 2 by default); proton-viewer on the large file only with
--proton-on-large (it took 827 s on the 2-core development VM) and under --proton-timeout.
`flagprism view` also runs once more on the large file at full depth (every row printed).
Each command runs --repeat times (proton-viewer once per file unless --proton-repeat);
output goes to /dev/null. Wall time, CPU time and peak RSS come from wait4().

Output: one JSON object per line on stdout (and --out FILE), then a table on stderr.
Usage: python bench/bench_view.py [--nodes N] [--proton-nodes N] [--repeat 5] [--proton-on-large]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def generate(bench_prof: Path, nodes: int, out_dir: Path) -> Path:
    """Write a profile of about `nodes` nodes into out_dir; returns the .hatchet path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "bench-prof.hatchet"
    if path.exists():
        return path
    r = subprocess.run(
        [str(bench_prof), "--nodes", str(nodes), "--out", str(out_dir), "--no-trace"],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        sys.exit(f"bench-prof failed: {r.stderr}")
    return path


def run_once(cmd: list[str], timeout: float | None) -> dict[str, Any]:
    """Run cmd with output to /dev/null; wall, user+sys CPU seconds and peak RSS (KiB)."""
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE)
    timed_out = False
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG if timeout else 0)
        if pid:
            break
        if timeout and time.monotonic() - start > timeout:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            timed_out = True
            break
        time.sleep(0.02)
    wall = time.monotonic() - start
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": wall,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "max_rss_kb": ru.ru_maxrss,
        "exit": code,
        "timed_out": timed_out,
        "stderr": err[-400:],
    }


def measure(
    tool: str,
    cmd: list[str],
    path: Path,
    nodes: int,
    repeat: int,
    timeout: float | None,
    label: str,
) -> dict[str, Any]:
    runs = [run_once(cmd, timeout) for _ in range(repeat)]
    ok = [r for r in runs if r["exit"] == 0 and not r["timed_out"]]
    walls = [r["wall_s"] for r in ok] or [float("nan")]
    cpus = [r["cpu_s"] for r in ok] or [float("nan")]
    res = {
        "bench": "view",
        "tool": tool,
        "args": label,
        "file": path.name,
        "nodes": nodes,
        "bytes": path.stat().st_size,
        "runs": len(runs),
        "ok_runs": len(ok),
        "wall_min_s": round(min(walls), 4),
        "wall_median_s": round(statistics.median(walls), 4),
        "cpu_min_s": round(min(cpus), 4),
        "max_rss_mb": round(max(r["max_rss_kb"] for r in runs) / 1024, 1),
        "timed_out": any(r["timed_out"] for r in runs),
    }
    if not ok:
        res["error"] = runs[-1]["stderr"].strip().splitlines()[-1:] or ["(no message)"]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument(
        "--proton-nodes",
        type=int,
        default=20_000,
        help="size of the file both viewers are compared on (0: skip)",
    )
    ap.add_argument(
        "--proton-on-large",
        action="store_true",
        help="also run proton-viewer on the large file (minutes)",
    )
    ap.add_argument("--proton-timeout", type=float, default=3600)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--proton-repeat", type=int, default=1)
    ap.add_argument("--metrics", default="time/ms")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument(
        "--cli", default=os.environ.get("FLAGPRISM_CLI", str(REPO / "build" / "flagprism"))
    )
    ap.add_argument("--bench-prof", default=str(REPO / "build" / "bench" / "bench-prof"))
    ap.add_argument(
        "--proton-viewer",
        default=shutil.which("proton-viewer") or str(Path(sys.executable).parent / "proton-viewer"),
    )
    ap.add_argument("--workdir", default=None, help="where the profiles go (kept; default: temp)")
    ap.add_argument("--out", default=None, help="also append the JSON lines to this file")
    args = ap.parse_args()

    for what, path in (("flagprism CLI", args.cli), ("bench-prof", args.bench_prof)):
        if not os.access(path, os.X_OK):
            sys.exit(f"{what} not found at {path} (build it, or pass its path)")
    have_proton = os.access(args.proton_viewer, os.X_OK)
    if not have_proton:
        print(
            f"note: proton-viewer not found at {args.proton_viewer}; timing flagprism only",
            file=sys.stderr,
        )

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="fp-bench-view-"))
    large = generate(Path(args.bench_prof), args.nodes, work / f"n{args.nodes}")
    small = (
        generate(Path(args.bench_prof), args.proton_nodes, work / f"n{args.proton_nodes}")
        if args.proton_nodes
        else None
    )
    view_args = ["-m", args.metrics, "-d", str(args.depth)]
    label = " ".join(view_args)
    results = []
    for path, nodes in ((small, args.proton_nodes), (large, args.nodes)):
        if path is None:
            continue
        results.append(
            measure(
                "flagprism view",
                [args.cli, "view", *view_args, str(path)],
                path,
                nodes,
                args.repeat,
                None,
                label,
            )
        )
        if path is large:
            results.append(
                measure(
                    "flagprism view",
                    [args.cli, "view", "-m", args.metrics, str(path)],
                    path,
                    nodes,
                    args.repeat,
                    None,
                    f"-m {args.metrics} (all rows)",
                )
            )
        if have_proton and (path is small or args.proton_on_large):
            results.append(
                measure(
                    "proton-viewer",
                    [args.proton_viewer, *view_args, str(path)],
                    path,
                    nodes,
                    args.proton_repeat,
                    args.proton_timeout,
                    label,
                )
            )
    lines = [json.dumps(r, sort_keys=True) for r in results]
    print("\n".join(lines))
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(lines) + "\n")

    head = (
        "tool",
        "args",
        "nodes",
        "MB",
        "runs",
        "wall min s",
        "wall med s",
        "cpu min s",
        "RSS MB",
    )
    rows = [
        (
            r["tool"],
            r["args"],
            f"{r['nodes']:,}",
            f"{r['bytes'] / 1e6:.1f}",
            f"{r['ok_runs']}/{r['runs']}",
            f"{r['wall_min_s']:.3f}",
            f"{r['wall_median_s']:.3f}",
            f"{r['cpu_min_s']:.3f}",
            f"{r['max_rss_mb']:.0f}",
        )
        for r in results
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in (head, *rows):
        print(
            "  ".join(
                str(c).rjust(w) if i > 1 else str(c).ljust(w)
                for i, (c, w) in enumerate(zip(row, widths))
            ),
            file=sys.stderr,
        )
    for r in results:
        if r.get("error") or r["timed_out"]:
            print(
                f"note: {r['tool']} on {r['nodes']:,} nodes: "
                f"{'timed out' if r['timed_out'] else r['error']}",
                file=sys.stderr,
            )
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
