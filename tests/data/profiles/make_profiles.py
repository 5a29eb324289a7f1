# SPDX-License-Identifier: Apache-2.0
"""Writes the example profiles of tests/data/profiles (the files are checked in; rerun only to
change them, then regenerate the golden files with FP_UPDATE_GOLDEN=1).

proton-*.json follow Proton 3.6's Hatchet output exactly as its C++ writer (nlohmann::json)
produces it: compact, object keys sorted (so "children" comes before "frame"), integers for
counters and times, floats for launch-metadata values, device_id as a string, and the device
table as element [1]. flagprism-*.json follow FlagPrism's writer (frame, metrics, children;
children and metrics sorted by name) with meta files beside them. bad-* are malformed inputs.
"""

from __future__ import annotations

import copy
import json
import os

OUT = os.path.dirname(os.path.abspath(__file__))


def proton_dump(obj):
    # nlohmann::json's dump(): compact, object keys sorted, floats with a fraction part
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


def node(name, metrics=None, children=None):
    return {
        "frame": {"name": name, "type": "function"},
        "metrics": metrics or {},
        "children": children or [],
    }


def kern(name, t, n, dev="0", dtype="CUDA", **extra):
    m = {"time (ns)": t, "count": n, "device_id": dev, "device_type": dtype}
    m.update(extra)
    return node(name, m)


def ours_dump(obj):
    # FlagPrism's writer: frame, metrics, children; metrics and children sorted by name
    def conv(n):
        return {
            "frame": n["frame"],
            "metrics": dict(sorted(n["metrics"].items())),
            "children": [
                conv(c) for c in sorted(n["children"], key=lambda c: c["frame"]["name"].encode())
            ],
        }

    root, dev = obj
    return json.dumps([conv(root), dev], separators=(",", ":"))


def write(name, text):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)


H100 = {
    "arch": "90",
    "bus_width": 5120,
    "clock_rate": 1980000,
    "memory_clock_rate": 2619000,
    "num_sms": 132,
}


def h100_run(run2=False):
    attn_t = 1000000 if run2 else 1250000
    attn = node(
        "attention",
        {},
        [
            kern("attn_fwd_kernel", attn_t, 10, flops16=5e11, bytes=2.1e9),
            kern("softmax_kernel", 300000, 10, bytes=8e8),
        ],
    )
    mlp_kids = [kern("matmul_kernel", 2000000, 20, flops16=1.2e12, bytes=1.2e9)]
    if run2:
        mlp_kids.append(kern("fused_gelu_kernel", 90000, 20, bytes=2.4e8, flops32=2e9))
    else:
        mlp_kids.append(kern("gelu_kernel", 150000, 20, bytes=4e8, flops32=2e9))
    fwd = node("model.forward", {}, [attn, node("mlp", {}, mlp_kids)])
    opt = node(
        "optimizer.step", {}, [kern("adam_kernel", 420000 if run2 else 400000, 5, bytes=1.2e9)]
    )
    meta = node(
        "__proton_launch_metadata", {}, [kern("matmul_kernel", 5000, 1, flops16=1e9, bytes=1e6)]
    )
    root = node(
        "ROOT",
        {"bytes": 0, "count": 0, "flops16": 0, "flops32": 0, "time (ns)": 0},
        [fwd, opt, meta],
    )
    return [root, {"CUDA": {"0": H100}}]


write("proton-h100.json", proton_dump(h100_run()))
write("proton-h100-run2.json", proton_dump(h100_run(True)))

# One kernel per device model: the peak table of `util`.
ARCH = {
    "0": {
        "arch": "80",
        "bus_width": 5120,
        "clock_rate": 1410000,
        "memory_clock_rate": 1215000,
        "num_sms": 108,
    },
    "1": {
        "arch": "89",
        "bus_width": 192,
        "clock_rate": 2040000,
        "memory_clock_rate": 6251000,
        "num_sms": 58,
    },
    "2": {
        "arch": "90",
        "bus_width": 6144,
        "clock_rate": 1980000,
        "memory_clock_rate": 3201000,
        "num_sms": 132,
    },
    "3": {
        "arch": "100",
        "bus_width": 8192,
        "clock_rate": 1965000,
        "memory_clock_rate": 3996000,
        "num_sms": 148,
    },
    "4": {
        "arch": "75",
        "bus_width": 256,
        "clock_rate": 1590000,
        "memory_clock_rate": 5001000,
        "num_sms": 40,
    },
}
kids = [
    kern("gemm_a100", 1000000, 1, dev="0", flops16=2e11, bytes=5e8),
    kern("gemm_l4", 1000000, 1, dev="1", flops16=1e11, bytes=1e8),
    kern("gemm_h200", 1000000, 1, dev="2", flops16=8e11, bytes=1e9),
    kern("gemm_b200", 1000000, 1, dev="3", flops8=3e12, bytes=4e9),
    kern("gemm_t4", 1000000, 1, dev="4", flops16=1e10, bytes=1e8),
    kern("gemm_mi300", 1000000, 1, dev="0", dtype="HIP", flops16=5e11, bytes=2e9),
]
root = node(
    "ROOT",
    {"bytes": 0, "count": 0, "flops16": 0, "flops8": 0, "time (ns)": 0},
    [node("bench", {}, kids)],
)
dev = {
    "CUDA": ARCH,
    "HIP": {
        "0": {
            "arch": "gfx942",
            "bus_width": 8192,
            "clock_rate": 2100000,
            "memory_clock_rate": 1300000,
            "num_sms": 304,
        }
    },
}
write("proton-archs.json", proton_dump([root, dev]))


# Python context (file:function@line frames) with CPU-time scopes.
def py(f, fn, line, kids):
    return node(f"/home/dev/proj/{f}:{fn}@{line}", {}, kids)


root = node(
    "ROOT",
    {"count": 0, "time (ns)": 0, "cpu_time (ns)(exc)": 0},
    [
        py(
            "train.py",
            "main",
            40,
            [
                py(
                    "train.py",
                    "step",
                    25,
                    [
                        py(
                            "layers.py",
                            "forward",
                            88,
                            [kern("matmul_kernel", 800000, 4), kern("relu_kernel", 60000, 4)],
                        ),
                        py("layers.py", "backward", 120, [kern("matmul_kernel", 1500000, 8)]),
                    ],
                ),
                node(
                    "eval",
                    {"cpu_time (ns)(exc)": 2500000},
                    [py("layers.py", "forward", 88, [kern("matmul_kernel", 400000, 2)])],
                ),
            ],
        ),
    ],
)
write("proton-python.json", proton_dump([root, {"CUDA": {"0": H100}}]))


# Ranks of one job, for merge.
def rank(i):
    t = [1000000, 1100000, 1300000][i]
    kids = [
        kern("allreduce_kernel", 200000 + 50000 * i, 4),
        kern("matmul_kernel", t, 10, flops16=6e11, bytes=1e9),
    ]
    if i == 2:
        kids.append(kern("straggler_kernel", 90000, 1))
    root = node(
        "ROOT",
        {"count": 0, "time (ns)": 0, "flops16": 0, "bytes": 0},
        [node("train_step", {}, kids)],
    )
    return [root, {"CUDA": {"0": H100}}]


for i in range(3):
    write(f"proton-rank{i}.json", proton_dump(rank(i)))


# FlagPrism's own format from the Triton interpreter (CPU), with IR estimates.
def ck(name, t, n, **extra):
    return kern(name, t, n, dtype="CPU", **extra)


root = node(
    "ROOT",
    {"bytes": 0, "count": 0, "est_bytes": 0, "est_flops": 0, "time (ns)": 0},
    [
        py(
            "demo.py",
            "main",
            30,
            [
                py(
                    "demo.py",
                    "run",
                    21,
                    [
                        ck("add_kernel", 183000, 3, bytes=24576, est_bytes=24576, est_flops=2048),
                        ck("softmax_kernel", 950000, 2, est_bytes=65536, est_flops=40960),
                    ],
                ),
                node(
                    "warmup",
                    {},
                    [ck("add_kernel", 61000, 1, bytes=8192, est_bytes=8192, est_flops=1024)],
                ),
            ],
        ),
    ],
)
tree = [root, {"CPU": {"0": {"arch": "interpreter"}}}]
write("flagprism-interp.json", ours_dump(tree))


def meta(name, incomplete, reasons):
    return json.dumps(
        {
            "format": "flagprism-profile-meta",
            "format_version": 1,
            "flagprism_version": "0.1.0",
            "session": {
                "id": 0,
                "name": name,
                "context": "python",
                "data": "tree",
                "backend": "host",
            },
            "outputs": {"hatchet": name + ".hatchet"},
            "devices": {"CPU": {"0": {"arch": "interpreter"}}},
            "incomplete": incomplete,
            "incomplete_reasons": reasons,
        },
        separators=(",", ":"),
    )


write("flagprism-interp.meta.json", meta("flagprism-interp", False, []))

# A session that never finalized: the meta file says so.
crashed = copy.deepcopy(tree)
write("flagprism-crashed.json", ours_dump(crashed))
write(
    "flagprism-crashed.meta.json",
    meta("flagprism-crashed", True, ["shutdown without finalize", "scopes still open at finalize"]),
)


# FlagPrism on a GPU (CUPTI backend): IR estimates but no measured flops or bytes.
def gk(name, t, n, **extra):
    return kern(name, t, n, **extra)


root = node(
    "ROOT",
    {"count": 0, "est_bytes": 0, "est_flops": 0, "time (ns)": 0},
    [
        py(
            "bench.py",
            "run",
            12,
            [
                gk("matmul_kernel", 2000000, 10, est_bytes=3e9, est_flops=1.2e12),
                gk("layernorm_kernel", 300000, 10, est_bytes=9e8, est_flops=2e9),
            ],
        ),
    ],
)
write("flagprism-gpu-est.json", ours_dump([root, {"CUDA": {"0": H100}}]))

# FlagPrism on an H200 with in-process hardware metrics (metrics=...): "hw:" counters (sums)
# and "hw:... (pty)" time-weighted means on the kernel nodes, next to IR estimates; a kernel
# without counters. For `flagprism view --roofline` and hw: columns.
HWM_DEV = {"arch": "90", "bus_width": 6144, "clock_rate": 1980000,
           "memory_clock_rate": 3201000, "num_sms": 132}
root = node(
    "ROOT",
    {"count": 0, "time (ns)": 0, "hw:launches": 0, "hw:dram__bytes_read.sum": 0,
     "hw:dram__bytes_write.sum": 0, "hw:gpu__time_duration.sum": 0,
     "hw:smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 0, "est_bytes": 0,
     "est_flops": 0},
    [
        node("step", {}, [
            gk("hwm_vadd", 1400000, 2, **{
                "hw:launches": 2, "hw:dram__bytes_read.sum": 4294967296.0,
                "hw:dram__bytes_write.sum": 2147483648.0, "hw:gpu__time_duration.sum": 1390000,
                "hw:lts__t_sector_hit_rate.pct (pty)": 33.25,
                "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)": 12.5,
                "est_bytes": 6442450944.0, "est_flops": 536870912.0}),
            gk("hwm_matmul", 400000, 1, **{
                "hw:launches": 1,
                "hw:smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 8589934592.0,
                "hw:dram__bytes_read.sum": 50331648.0, "hw:dram__bytes_write.sum": 16777216.0,
                "hw:lts__t_sector_hit_rate.pct (pty)": 91.5,
                "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)": 71.0,
                "est_flops": 17179869184.0, "est_bytes": 50331648.0}),
        ]),
        gk("tiny_add", 30000, 10, est_bytes=491520.0, est_flops=40960.0),
    ],
)
write("flagprism-hwm.json", ours_dump([root, {"CUDA": {"0": HWM_DEV}}]))

# Malformed inputs: truncated, foreign (a Chrome trace), not JSON, empty, a bad node.
text = proton_dump(h100_run())
write("bad-truncated.json", text[: int(len(text) * 0.6)])
write(
    "bad-foreign.json", '{"traceEvents":[{"ph":"X","name":"k","ts":0,"dur":1,"pid":1,"tid":1}]}\n'
)
write("bad-notjson.txt", "time (ns)  name\n183000     add_kernel\n")
write("bad-empty.json", "")
write(
    "bad-node.json",
    """[
 {"frame": {"name": "ROOT", "type": "function"},
  "metrics": {"time (ns)": 0},
  "children": [
   {"frame": "add_kernel",
    "metrics": {"time (ns)": 1000},
    "children": []}]},
 {"CPU": {"0": {"arch": "interpreter"}}}]
""",
)
