#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cost of in-process hardware metrics (``profiler.start(metrics=...)``): the slowdown of a
kernel loop per metric set, against the same loop in a CUPTI session without metrics.

Metric sets: ``none`` (CUPTI backend, kernel times only: the baseline), ``single``
(dram__bytes_read.sum, one pass), ``default`` (the default set; its pass count is reported).
Kernels: ``vadd`` (2^24 float32 add, memory-bound, about 25 us), ``matmul`` (1024^3 float32
FFMA), ``tiny`` (4096-element add: launch-bound, so the row shows the per-kernel fixed cost of
auto range: a context synchronize and the replay set-up). Every set runs in its own worker
process (one CUPTI subscriber per process); in a worker, each kernel runs --iters launches
after a warm-up, timed wall-clock with a synchronize at the end. Range-profiler auto range
serialises every kernel and kernel replay runs it once per pass, plus a save/restore of the
memory it writes, so the slowdown grows with passes and with the bytes a kernel writes.

Output: one JSON object per line (stdout, and --out: a file, or a directory that receives
bench_metrics.jsonl): {"bench": "metrics", "set", "kernel", "iters", "s_per_launch",
"slowdown", "passes", "metrics"}. Usage: python bench/bench_metrics.py [--quick] [--iters 50]
[--out PATH]; --quick: 10 launches per kernel (about 30 s with start-up on the H200 machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SETS = {"none": None, "single": "dram__bytes_read.sum", "default": "default"}
KERNELS = ("vadd", "matmul", "tiny")
HERE = os.path.dirname(os.path.abspath(__file__))
CHILD_DIR = os.path.join(HERE, "..", "tests", "gpu")


def worker(spec: dict) -> int:
    sys.path.insert(0, CHILD_DIR)
    import _metrics_child as mc
    import torch

    import flagprism.profiler as profiler

    launches = {
        "vadd": mc.make("vadd", n_vadd=1 << 24)[0],
        "matmul": mc.make("matmul", mm=1024)[0],
        "tiny": mc.make("vadd", n_vadd=4096)[0],
    }
    metrics = SETS[spec["set"]]
    kw = {"metrics": metrics} if metrics else {}
    sid = profiler.start(spec["name"], backend="cupti", **kw)
    times = {}
    for k in KERNELS:
        for _ in range(2):  # warm-up inside the session (first-range set-up)
            launches[k]()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(spec["iters"]):
            launches[k]()
        torch.cuda.synchronize()
        times[k] = (time.perf_counter() - t0) / spec["iters"]
    profiler.finalize(sid)
    st = profiler.metrics_status() if metrics else {"passes": 0, "metrics": 0, "reasons": []}
    print("RESULT " + json.dumps({"times": times, "status": st}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="10 launches per kernel")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--out", help="file for the JSON lines, or a directory")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(json.loads(a.worker))
    iters = 10 if a.quick else a.iters
    out_path = a.out
    if out_path and os.path.isdir(out_path):
        out_path = os.path.join(out_path, "bench_metrics.jsonl")
    rows, base, status = [], {}, 0
    tmp = os.environ.get("TMPDIR", "/tmp")
    for s in a.sets.split(","):
        spec = {"set": s, "iters": iters, "name": os.path.join(tmp, f"fp-bench-metrics-{s}")}
        r = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=a.timeout,
        )
        res = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
        if r.returncode != 0 or not res:
            print(f"set {s}: worker failed ({r.returncode}):\n{r.stderr[-2000:]}", file=sys.stderr)
            rows.append({"bench": "metrics", "set": s, "error": r.stderr[-500:]})
            status = 1
            continue
        got = json.loads(res[-1][len("RESULT ") :])
        for k, t in got["times"].items():
            if s == "none":
                base[k] = t
            rows.append(
                {
                    "bench": "metrics",
                    "set": s,
                    "kernel": k,
                    "iters": iters,
                    "s_per_launch": t,
                    "slowdown": (t / base[k]) if k in base and base[k] > 0 else None,
                    "passes": got["status"]["passes"],
                    "metrics": got["status"]["metrics"],
                    "reasons": got["status"]["reasons"],
                }
            )
    for row in rows:
        print(json.dumps(row))
    if out_path:
        with open(out_path, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    print(f"{'set':8} {'kernel':8} {'us/launch':>12} {'slowdown':>9} {'passes':>6}")
    for row in rows:
        if "kernel" in row:
            sd = f"{row['slowdown']:.2f}x" if row["slowdown"] else "-"
            print(
                f"{row['set']:8} {row['kernel']:8} {row['s_per_launch'] * 1e6:12.1f} "
                f"{sd:>9} {row['passes']:6}"
            )
    return status


if __name__ == "__main__":
    sys.exit(main())
