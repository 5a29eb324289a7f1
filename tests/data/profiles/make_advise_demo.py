# SPDX-License-Identifier: Apache-2.0
"""Writes advise-demo.hatchet, .meta.json and .chrome_trace.json: a hand-made FlagPrism profile
of a training step on an H100 SXM (sm_90, 132 SMs) that gives `flagprism advise` something to
say under most rules, for the examples of docs/guide/advise.md and docs/cli/flagprism-advise.md
(run by tests/python/test_doc_examples.py). The numbers are invented, consistent with each
other and with the device; nothing here was measured. Rerun only to change the example, then
update the documented output.

* matmul_wide (train.py:step@42, 3 launches of 2 ms): a tl.dot on float16 tiles converted to
  float32 (tf32), 168 registers per thread in 8 warps (occupancy 12.5%), PC samples;
* transpose_copy (train.py:step@44, 3 launches of 1 ms): 4x the sector bytes its loads read;
* add_bias (train.py:step@47, 200 launches of 4 us, 30 us apart): launch-bound;
* a PyTorch kernel, filed under its mangled name as older profiles do (train.py:step@45, 2
  launches of 1.2 ms);
* the autotuner of matmul_wide measured three configs and chose the fastest, BLOCK_M=128, the
  largest of its list.
"""

from __future__ import annotations

import json
import os

OUT = os.path.dirname(os.path.abspath(__file__))
SRC = "/work/model.py"
DEVICE = {"CUDA": {"0": {"arch": "90", "bus_width": 5120, "clock_rate": 1980000,
                         "memory_clock_rate": 2619000, "num_sms": 132}}}
COPY = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEEviT0_T1_"


def node(name, metrics=None, children=None):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics or {},
            "children": sorted(children or [], key=lambda c: c["frame"]["name"])}


def kernel(name, ns, count, **metrics):
    m = {"count": count, "device_id": "0", "device_type": "CUDA", "time (ns)": ns}
    m.update(metrics)
    return m


def main() -> None:
    lines = [node(f"{SRC}:{ln}", {"num_samples": s, "num_stalled_samples": s - sel,
                                   "stalled_long_scoreboard": ls, "stalled_selected": sel,
                                   "stalled_barrier": b})
             for ln, s, sel, ls, b in ((33, 600, 100, 380, 60), (35, 300, 200, 40, 30),
                                       (31, 100, 90, 5, 5))]
    mm = node("matmul_wide", kernel("matmul_wide", 6e6, 3, est_bytes=3 * 2.5e7,
                                    est_flops=3 * 6.87e10), lines)
    tr = node("transpose_copy", kernel(
        "transpose_copy", 3e6, 3, est_bytes=3 * 3.2e7,
        **{"hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 3 * 2e6,
           "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 3 * 6.25e4,
           "hw:dram__bytes_read.sum": 3 * 3.6e7, "hw:dram__bytes_write.sum": 3 * 1.6e7}))
    bias = node("add_bias", kernel("add_bias", 200 * 4e3, 200, est_bytes=200 * 3 * 4096,
                                   est_flops=200 * 1024))
    cp = node(COPY, kernel(COPY, 2 * 1.2e6, 2))
    root = node("ROOT", {"count": 0, "time (ns)": 0}, [
        node("train.py:step@42", {}, [mm]), node("train.py:step@44", {}, [tr]),
        node("train.py:step@45", {}, [cp]), node("train.py:step@47", {}, [bias])])
    with open(os.path.join(OUT, "advise-demo.hatchet"), "w") as f:
        json.dump([root, DEVICE], f, separators=(",", ":"))

    def facts(**kw):
        return "per program: ...\nfacts: " + json.dumps(kw, sort_keys=True, separators=(",", ":"))

    env = {
        "estimate:matmul_wide": facts(
            bytes=98304, load_bytes=65536, total_flops=4194304, fp32_flops=0,
            dot_flops=4194304, widened_dots=8, widened_dot_flops=4194304, widened_from="fp16",
            precision="tf32", widened_dot_at={"file": SRC, "line": 35},
            top_load_bytes=32768, top_load_at={"file": SRC, "line": 33},
            top_tile_bytes=65536, top_tile_at={"file": SRC, "line": 36},
            def_={"file": SRC, "line": 27},
            compiled={"num_warps": 8, "num_stages": 3, "registers": 168, "spill_bytes": 0,
                      "shared_bytes": 98304}).replace('"def_"', '"def"'),
        "estimate:transpose_copy": facts(
            bytes=8192, load_bytes=4096, total_flops=0, fp32_flops=0, dot_flops=0,
            top_load_bytes=4096, top_load_at={"file": SRC, "line": 52},
            def_={"file": SRC, "line": 48},
            compiled={"num_warps": 4, "num_stages": 3, "registers": 32, "spill_bytes": 0,
                      "shared_bytes": 0}).replace('"def_"', '"def"'),
        "estimate:add_bias": facts(bytes=12288, load_bytes=8192, total_flops=1024,
                                   fp32_flops=1024, dot_flops=0,
                                   def_={"file": SRC, "line": 60}).replace('"def_"', '"def"'),
        "autotune:matmul_wide": json.dumps({
            "kernel": "matmul_wide", "key": ["M", "N", "K"], "chosen": 2, "bench_s": 1.84,
            "keys_tuned": 1, "configs_left_out": 0, "configs": [
                {"config": {"BLOCK_M": 32, "num_warps": 4, "num_stages": 3}, "ms": [4.1, 4.0, 4.2]},
                {"config": {"BLOCK_M": 64, "num_warps": 4, "num_stages": 3}, "ms": [2.9, 2.8, 3.0]},
                {"config": {"BLOCK_M": 128, "num_warps": 8, "num_stages": 3}, "ms": [2.0, 1.9, 2.1]},
            ]}, sort_keys=True, separators=(",", ":")),
    }
    meta = {"format": "flagprism-profile-meta", "format_version": 1, "flagprism_version": "0.1.0",
            "session": {"id": 0, "name": "advise-demo", "context": "python", "data": "trace",
                        "backend": "cupti"},
            "devices": DEVICE, "environment": dict(sorted(env.items())),
            "incomplete": False, "incomplete_reasons": [],
            "time": {"start_unix_ns": 1796000000000000000, "end_unix_ns": 1796000000020000000}}
    with open(os.path.join(OUT, "advise-demo.meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    evs, t = [], 0.0

    def ev(name, site, dur, grid):
        nonlocal t
        evs.append({"ph": "X", "cat": "kernel", "name": name, "pid": 1000, "tid": 7,
                    "ts": round(t, 3), "dur": dur,
                    "args": {"call_stack": [site], "grid": grid, "device_id": 0}})
        t += dur

    for step in range(3):
        ev("matmul_wide", "train.py:step@42", 2000.0, [32, 32, 1])
        t += 5
        ev("transpose_copy", "train.py:step@44", 1000.0, [8192, 1, 1])
        t += 5
        if step < 2:
            ev(COPY, "train.py:step@45", 1200.0, [1024, 1, 1])
            t += 5
    for _ in range(200):
        t += 30
        ev("add_bias", "train.py:step@47", 4.0, [4, 1, 1])
    with open(os.path.join(OUT, "advise-demo.chrome_trace.json"), "w") as f:
        json.dump({"displayTimeUnit": "ns", "traceEvents": evs}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
