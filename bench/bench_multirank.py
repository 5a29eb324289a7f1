#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Profiler's overhead per rank in a multi-GPU job, against the bare step in the same job
(issue 23, part 3; needs CUDA GPUs and NCCL).

torchrun starts one rank per GPU (at most --nproc, default 2); each rank runs a data-parallel
step (a Triton kernel, an NCCL all_reduce and all_gather_into_tensor of --mib MiB), times
--steps steps bare, then opens a profiling session (--backend, default cupti, data tree or trace)
and times the same steps again, interleaved over --rounds, and reports the median seconds per
step of each. The difference is what profiling costs a rank (CUPTI activity records, the launch
callback, the collective hooks); the ranks' medians are printed side by side. With one GPU the
job has world size 1 (NCCL then launches no collective kernels; the hooks still run).

Usage: python bench/bench_multirank.py [--quick] [--nproc 2] [--steps 50] [--rounds 5]
       [--mib 16] [--data tree|trace] [--backend cupti|host] [--out PATH]
Output: one JSON object per rank and mode per line (stdout, and --out: a file, or a directory
receiving bench_multirank.jsonl).
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
from pathlib import Path
from typing import Any


def worker(a: argparse.Namespace) -> int:
    import torch
    import torch.distributed as dist
    import triton
    import triton.language as tl

    import flagprism.profiler as profiler

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)

    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    n = 1 << 22
    x, out = torch.ones(n, device=dev), torch.empty(n, device=dev)
    msg = torch.ones(a.mib * (1 << 18), device=dev)
    gathered = torch.empty(msg.numel() * world, device=dev)

    def steps() -> float:
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
            dist.all_reduce(msg)
            dist.all_gather_into_tensor(gathered, msg)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / a.steps

    steps()  # warm up: compile, NCCL channels
    bare: list[float] = []
    prof: list[float] = []
    tmp = tempfile.mkdtemp(prefix="fp-bench-mr-")
    for r in range(a.rounds):
        bare.append(steps())
        sid = profiler.start(os.path.join(tmp, f"r{r}"), data=a.data, backend=a.backend)
        try:
            prof.append(steps())
        finally:
            profiler.finalize(sid)
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(a.result_dir, f"rank{rank}.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "rank": rank,
                "world_size": world,
                "bare": bare,
                "profiled": prof,
                "gpu": torch.cuda.get_device_name(dev),
            },
            f,
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds of 20 steps")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mib", type=int, default=16)
    ap.add_argument("--data", default="tree", choices=("tree", "trace"))
    ap.add_argument("--backend", default="cupti", choices=("cupti", "host"))
    ap.add_argument("--out", help="file for the JSON lines, or a directory")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--result-dir", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.quick:
        a.steps, a.rounds = 20, 3
    if a.worker:
        return worker(a)
    import torch

    if not torch.cuda.is_available():
        print("bench_multirank: needs a CUDA GPU", file=sys.stderr)
        return 2
    nproc = max(1, min(a.nproc, torch.cuda.device_count()))
    results = tempfile.mkdtemp(prefix="fp-bench-mr-res-")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        os.path.abspath(__file__),
        "--worker",
        "--result-dir",
        results,
        "--steps",
        str(a.steps),
        "--rounds",
        str(a.rounds),
        "--mib",
        str(a.mib),
        "--data",
        a.data,
        "--backend",
        a.backend,
    ]
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    env.pop("TRITON_INTERPRET", None)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        print(r.stdout[-3000:] + r.stderr[-3000:], file=sys.stderr)
        return 1
    rows: list[dict[str, Any]] = []
    for f in sorted(Path(results).glob("rank*.json")):
        d = json.loads(f.read_text())
        b, p = statistics.median(d["bare"]), statistics.median(d["profiled"])
        rows.append(
            {
                "bench": "multirank",
                "rank": d["rank"],
                "world_size": d["world_size"],
                "gpu": d["gpu"],
                "backend": a.backend,
                "data": a.data,
                "mib": a.mib,
                "steps": a.steps,
                "rounds": a.rounds,
                "bare_ms": round(b * 1e3, 4),
                "profiled_ms": round(p * 1e3, 4),
                "overhead_pct": round(100 * (p - b) / b, 2),
            }
        )
    out = None
    if a.out:
        path = os.path.join(a.out, "bench_multirank.jsonl") if os.path.isdir(a.out) else a.out
        out = open(path, "a", encoding="utf-8")
    for row in rows:
        line = json.dumps(row)
        print(line)
        if out:
            out.write(line + "\n")
    if out:
        out.close()
    for row in rows:
        print(
            f"rank {row['rank']}/{row['world_size']}: bare {row['bare_ms']} ms/step, "
            f"profiled {row['profiled_ms']} ms/step ({row['overhead_pct']:+.2f}%)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
