# SPDX-License-Identifier: Apache-2.0
"""Time `flagprism advise` on a large synthetic GPU profile: 20,000 nodes by default (100 Python
frames, 20 kernel nodes under each, 9 PC-sampling source lines under every kernel), hardware
counters on every kernel node, an H100's device table, a meta file with the IR's and the
compiled kernel's facts for each of 500 kernel names (and 50 autotuners), and a Chrome trace
with 5 launches of every kernel node. Every rule has its evidence somewhere.

    python bench/bench_advise.py [--nodes N] [--runs R] [--top K] [--cli PATH] [--keep DIR]

Prints one JSON line: the profile's size, and the median, min and max wall time of R runs of
`flagprism advise --top K --min-share 1e-6 PROFILE -o advice.json` (text and JSON both written;
every kernel node is under 1% of the time, so the share must not stop the K heaviest). docs/benchmarks.md
records the result with the machine it ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REASONS = ("long_scoreboard", "barrier", "math_pipe_throttle", "selected", "wait")


def build(out: Path, nodes: int) -> Path:
    frames = 100
    per_frame = max(1, (nodes // frames) // 10)
    names = 500
    root: dict = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
    events = []
    t = 0.0
    for f in range(frames):
        frame = {
            "frame": {"name": f"/src/app.py:step{f}@{10 + f}", "type": "function"},
            "metrics": {},
            "children": [],
        }
        for k in range(per_frame):
            name = f"kernel_{(f * per_frame + k) % names}"
            ns = 1000.0 * (1 + (f * 7 + k * 13) % 997)
            kn = {
                "frame": {"name": name, "type": "function"},
                "metrics": {
                    "time (ns)": ns * 5,
                    "count": 5,
                    "device_id": "0",
                    "device_type": "CUDA",
                    "est_bytes": 1e6 * (1 + k),
                    "est_flops": 1e8 * (1 + f),
                    "hw:dram__bytes_read.sum": 4e5 * (1 + k),
                    "hw:dram__bytes_write.sum": 1e5,
                    "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1e5 * (1 + k % 3),
                    "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1e4,
                    "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)": 30.0,
                    "hw:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (pty)": 40.0,
                },
                "children": [],
            }
            for line in range(9):
                lm = {"num_samples": 100 + line}
                for r, reason in enumerate(REASONS):
                    lm[f"stalled_{reason}"] = (line * 7 + r * 11) % 60
                kn["children"].append(
                    {
                        "frame": {"name": f"/src/k{k}.py:{20 + line}", "type": "function"},
                        "metrics": lm,
                        "children": [],
                    }
                )
            frame["children"].append(kn)
            for _ in range(5):
                events.append(
                    {
                        "ph": "X",
                        "cat": "kernel",
                        "name": name,
                        "pid": 1000,
                        "tid": 1,
                        "ts": round(t, 3),
                        "dur": ns / 1e3,
                        "args": {
                            "call_stack": [frame["frame"]["name"]],
                            "grid": [64 + k, 1, 1],
                        },
                    }
                )
                t += ns / 1e3 + 3.0
        root["children"].append(frame)
    device = {
        "CUDA": {
            "0": {
                "arch": "90",
                "num_sms": 132,
                "clock_rate": 1980000,
                "bus_width": 5120,
                "memory_clock_rate": 2619000,
            }
        }
    }
    env = {}
    for i in range(names):
        facts = {
            "def": {"file": "/src/kernels.py", "line": 10 + i},
            "bytes": 4096,
            "load_bytes": 2048,
            "total_flops": 65536,
            "fp32_flops": 1024,
            "dot_flops": 65536,
            "widened_dots": i % 2,
            "widened_dot_flops": 65536 if i % 2 else 0,
            "widened_from": "fp16",
            "precision": "tf32",
            "widened_dot_at": {"file": "/src/kernels.py", "line": 12 + i},
            "top_load_bytes": 2048,
            "top_load_at": {"file": "/src/kernels.py", "line": 11 + i},
            "top_tile_bytes": 65536,
            "top_tile_at": {"file": "/src/kernels.py", "line": 11 + i},
            "compiled": {
                "num_warps": 4,
                "num_stages": 3,
                "registers": 40 + i % 200,
                "spill_bytes": 8 * (i % 3),
                "shared_bytes": 16384,
            },
        }
        env[f"estimate:kernel_{i}"] = "per program: ...\nfacts: " + json.dumps(facts)
    for i in range(50):
        env[f"autotune:kernel_{i}"] = json.dumps(
            {
                "kernel": f"kernel_{i}",
                "chosen": 0,
                "bench_s": 1.0,
                "configs": [
                    {"config": {"BLOCK": b, "num_warps": 4}, "ms": [1.0 + b / 1000]}
                    for b in (32, 64, 128, 256)
                ],
            }
        )
    meta = {
        "format": "flagprism-profile-meta",
        "format_version": 1,
        "session": {"backend": "cupti", "context": "python", "data": "trace"},
        "environment": env,
        "time": {"start_unix_ns": 0, "end_unix_ns": int(t * 1e3) + 1000},
    }
    prof = out / "big.hatchet"
    prof.write_text(json.dumps([root, device]))
    (out / "big.meta.json").write_text(json.dumps(meta))
    (out / "big.chrome_trace.json").write_text(json.dumps({"traceEvents": events}))
    return prof


def count_nodes(n: dict) -> int:
    return 1 + sum(count_nodes(c) for c in n["children"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=100, help="kernels advised (default 100)")
    ap.add_argument("--cli", default=os.environ.get("FLAGPRISM_CLI", "build/flagprism"))
    ap.add_argument("--keep", help="write the profile here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fp-bench-advise-") as tmp:
        out = Path(args.keep or tmp)
        out.mkdir(parents=True, exist_ok=True)
        prof = build(out, args.nodes)
        nodes = count_nodes(json.loads(prof.read_text())[0])
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(
                [
                    args.cli,
                    "advise",
                    "--top",
                    str(args.top),
                    "--min-share",
                    "1e-6",
                    "-o",
                    str(out / "advice.json"),
                    str(prof),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            times.append(time.perf_counter() - t0)
        advice = json.loads((out / "advice.json").read_text())
        findings = len(advice["findings"])
        print(
            json.dumps(
                {
                    "nodes": nodes,
                    "hatchet_bytes": prof.stat().st_size,
                    "trace_bytes": (out / "big.chrome_trace.json").stat().st_size,
                    "meta_bytes": (out / "big.meta.json").stat().st_size,
                    "kernels_advised": advice["summary"]["kernels_advised"],
                    "findings": findings,
                    "runs": args.runs,
                    "median_s": round(statistics.median(times), 4),
                    "min_s": round(min(times), 4),
                    "max_s": round(max(times), 4),
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
