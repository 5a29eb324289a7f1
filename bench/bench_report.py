#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time `flagprism report` and the pages it writes in headless Chromium, on the two sizes the
report must handle: a Debugger run of 65,536 programs and a profile of 1,000,000 call-tree nodes.

Inputs come from the build tree's generators: `bench-debug-decode 65536 1 0 DIR` (the 64M-element
vector add, six records per program, its reports kept in DIR with the tensor arguments) and
`bench-prof --nodes 1000000 --no-trace` (the profile bench/bench_view.py uses). For each input:

* `flagprism report` (wall time and peak RSS, best of --repeat), the page's size;
* the page in one headless Chromium (tests/python/_browser.py, the DevTools protocol over a
  pipe), opened --repeat times: `open` is the wall time from the navigation command to the
  reply of the page's main thread once the page says it is ready (its data parsed and its first
  views drawn: the page is interactive then), `ready_ms` the page's own performance.now() at
  that point; then one interaction, timed the same way: on the Debugger page a click on each
  statement (parsing its sites' heatmap blocks and drawing them), on the profile page a search
  and a zoom into the heaviest child. Console errors and requests other than the page are
  counted (both must be 0).

Output: one JSON object per line on stdout (and --out FILE), then a summary on stderr.
Usage: python bench/bench_report.py [--programs 65536] [--nodes 1000000] [--repeat 5]
       [--cli build/flagprism] [--build build] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import _browser  # noqa: E402


def run_timed(cmd: list[str]) -> dict[str, Any]:
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    out, err = p.stdout.read().decode(), p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out}\n{err}")
    return {
        "wall_s": wall,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "rss_mb": ru.ru_maxrss / 1024,
        "stdout": out,
    }


def inputs(build: Path, work: Path, programs: int, nodes: int) -> tuple[Path, Path]:
    dbg = work / f"debug-{programs}"
    if not (dbg / "bench.json").exists():
        dbg.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [str(build / "bench" / "bench-debug-decode"), str(programs), "1", "0", str(dbg)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    prof_dir = work / f"prof-{nodes}"
    prof = prof_dir / "bench-prof.hatchet"
    if not prof.exists():
        prof_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                str(build / "bench" / "bench-prof"),
                "--nodes",
                str(nodes),
                "--out",
                str(prof_dir),
                "--no-trace",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return dbg, prof


def interact_debug(b: _browser.Browser) -> float:
    t0 = time.monotonic()
    n = b.eval("document.querySelectorAll('#fp-source .fp-line.fp-stmt').length")
    for i in range(n):
        b.eval(f"document.querySelectorAll('#fp-source .fp-line.fp-stmt')[{i}].click()")
    b.eval("document.querySelectorAll('#fp-detail canvas.fp-heat').length")
    return time.monotonic() - t0


def interact_profile(b: _browser.Browser) -> float:
    t0 = time.monotonic()
    b.eval(
        "(() => { const s = document.getElementById('fp-search'); s.value = 'level1';"
        " s.dispatchEvent(new Event('input')); })()"
    )
    b.eval(
        "(() => { const s = document.getElementById('fp-search'); s.value = '';"
        " s.dispatchEvent(new Event('input')); })()"
    )
    b.eval("document.querySelectorAll('#fp-table-main tbody tr')[1].click()")
    return time.monotonic() - t0


def measure(b: _browser.Browser, page: Path, kind: str, repeat: int) -> dict[str, Any]:
    opens, readies, acts, errors, requests = [], [], [], 0, 0
    for _ in range(repeat):
        opens.append(b.open(page, timeout=120))
        readies.append(float(b.eval("document.documentElement.dataset.fpReadyMs")))
        errors += len(b.console_errors())
        requests += len([u for u in b.requests() if u != page.resolve().as_uri()])
        acts.append(interact_debug(b) if kind == "debugger" else interact_profile(b))
        errors += len(b.console_errors())
    return {
        "open_s_best": min(opens),
        "open_s_median": statistics.median(opens),
        "open_s_max": max(opens),
        "ready_ms_median": statistics.median(readies),
        "interact_s_median": statistics.median(acts),
        "interact_s_max": max(acts),
        "console_errors": errors,
        "extra_requests": requests,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=65536)
    ap.add_argument("--nodes", type=int, default=1000000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--cli", default=None, help="flagprism binary (default: BUILD/flagprism)")
    ap.add_argument("--workdir", default="/tmp/fp-bench-report")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    build = Path(args.build)
    cli = Path(args.cli) if args.cli else build / "flagprism"
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    dbg, prof = inputs(build, work, args.programs, args.nodes)
    rows = []
    cold_t0 = time.monotonic()
    with _browser.Browser() as b:
        browser_start = time.monotonic() - cold_t0
        for kind, src, size in (("debugger", dbg, args.programs), ("profile", prof, args.nodes)):
            page = work / f"{kind}.html"
            gens = [
                run_timed([str(cli), "report", "-q", str(src), "-o", str(page)])
                for _ in range(args.repeat)
            ]
            row: dict[str, Any] = {
                "bench": "report",
                "kind": kind,
                "size": size,
                "input_mb": round(
                    sum(f.stat().st_size for f in (src.glob("*.json") if src.is_dir() else [src]))
                    / 1e6,
                    1,
                ),
                "page_mb": round(page.stat().st_size / 1e6, 2),
                "report_s_best": min(g["wall_s"] for g in gens),
                "report_s_median": statistics.median(g["wall_s"] for g in gens),
                "report_rss_mb": round(max(g["rss_mb"] for g in gens)),
                "browser_start_s": browser_start,
            }
            row.update(measure(b, page, kind, args.repeat))
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    for r in rows:
        print(
            f"{r['kind']:>9} {r['size']:>9,}: report {r['report_s_best']:.2f} s (median {r['report_s_median']:.2f}),"
            f" page {r['page_mb']} MB, open {r['open_s_best']:.2f} s (median {r['open_s_median']:.2f},"
            f" max {r['open_s_max']:.2f}), interaction {r['interact_s_median']:.2f} s,"
            f" errors {r['console_errors']}, requests {r['extra_requests']}",
            file=sys.stderr,
        )
    return 0 if all(r["console_errors"] == 0 and r["extra_requests"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
