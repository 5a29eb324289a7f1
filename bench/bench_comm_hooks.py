#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Host cost of the torch.distributed hooks (python/flagprism/_dist.py) per collective call.

While a profiling session is open, each torch.distributed collective runs inside a collective
scope: the wrapper finds the message and the group, looks the group up (once per group), and
opens and closes the scope in C. This times N all_reduce calls of a tiny CPU tensor on a
one-rank gloo group in this process, with no session (bare: the collective's own cost), with a
session on the host backend (tree), and with one writing a trace, interleaved over rounds, and
prints the median ns per call and the difference to bare: the hooks' cost per call. A one-rank
gloo all_reduce is a few microseconds, so the difference is the hooks' cost, not noise in a
network transfer. Runs without a GPU.

Usage: python bench/bench_comm_hooks.py [--quick] [--calls 20000] [--rounds 7] [--out PATH]
Output: one JSON object per line (stdout, and --out: a file, or a directory receiving
bench_comm_hooks.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any


def _time_calls(dist: Any, t: Any, calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        dist.all_reduce(t)
    return (time.perf_counter_ns() - t0) / calls


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 rounds of 5,000 calls")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", help="file for the JSON lines, or a directory")
    a = ap.parse_args()
    if a.quick:
        a.calls, a.rounds = 5000, 5
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU needed; host backend
    import torch
    import torch.distributed as dist

    import flagprism.profiler as profiler

    tmp = tempfile.mkdtemp(prefix="fp-bench-comm-")
    dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
    t = torch.ones(8)
    _time_calls(dist, t, 500)  # warm up gloo
    modes: dict[str, list[float]] = {"bare": [], "tree": [], "trace": []}
    for r in range(a.rounds):
        modes["bare"].append(_time_calls(dist, t, a.calls))
        for mode in ("tree", "trace"):
            sid = profiler.start(os.path.join(tmp, f"{mode}{r}"), data=mode, backend="host")
            try:
                modes[mode].append(_time_calls(dist, t, a.calls))
            finally:
                profiler.finalize(sid)
    dist.destroy_process_group()
    bare = statistics.median(modes["bare"])
    rows = []
    for mode, xs in modes.items():
        med = statistics.median(xs)
        rows.append(
            {
                "bench": "comm_hooks",
                "mode": mode,
                "calls": a.calls,
                "rounds": a.rounds,
                "ns_per_call": round(med, 1),
                "overhead_ns": round(med - bare, 1),
                "torch": torch.__version__,
            }
        )
    out = None
    if a.out:
        path = os.path.join(a.out, "bench_comm_hooks.jsonl") if os.path.isdir(a.out) else a.out
        out = open(path, "a", encoding="utf-8")
    for row in rows:
        line = json.dumps(row)
        print(line)
        if out:
            out.write(line + "\n")
    if out:
        out.close()
    print(
        f"all_reduce on a one-rank gloo group: bare {bare:.0f} ns/call; hooks add "
        + ", ".join(f"{r['overhead_ns']:.0f} ns ({r['mode']})" for r in rows[1:]),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
