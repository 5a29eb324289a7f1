# SPDX-License-Identifier: Apache-2.0
"""One real-program workload, run in a child process by tests/gpu/test_profiler_workloads_gpu.py,
profiled either by FlagPrism (CUPTI backend, python context, trace) or by torch.profiler as the
reference (both need CUPTI, which allows one subscriber per process: hence two processes).

    python _workload_child.py flagprism|kineto OUT_STEM

The workload: Liger-Kernel's RMSNorm, SwiGLU and cross-entropy (forward and backward), a
torch.compile'd block (default mode) and the same block compiled with mode="reduce-overhead"
(CUDA graphs). Three warm-up steps (compilation, autotuning, CUDA-graph recording), then
MEASURED steps under the profiler. Writes OUT_STEM.counts.json: {"kernels": {name: launches},
"liger": bool}. Prints "SKIP: reason" and exits 3 when Liger-Kernel is not importable.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path
from typing import Any

import torch

MEASURED = 4


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(256, 256, device="cuda") / 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.layer_norm(x, (256,))  # MODEL_NORM
        h = h @ self.w
        return torch.nn.functional.gelu(h) * 2  # MODEL_GELU


def run(step: Any, n: int) -> None:
    for _ in range(n):
        step()
    torch.cuda.synchronize()


def main() -> int:
    mode, stem = sys.argv[1], sys.argv[2]
    try:
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction
    except Exception as e:  # noqa: BLE001
        print(f"SKIP: liger-kernel is not importable ({type(e).__name__}: {e})")
        return 3
    torch.manual_seed(0)
    x = torch.randn(64, 512, device="cuda", requires_grad=True)
    w = torch.ones(512, device="cuda", requires_grad=True)
    a = torch.randn(64, 1024, device="cuda", requires_grad=True)
    b = torch.randn(64, 1024, device="cuda", requires_grad=True)
    logits = torch.randn(64, 1000, device="cuda", requires_grad=True)
    tgt = torch.randint(0, 1000, (64,), device="cuda")
    xb = torch.randn(128, 256, device="cuda")
    block = Block()
    compiled = torch.compile(block)
    graphed = torch.compile(Block(), mode="reduce-overhead")

    def liger_step() -> None:
        y = LigerRMSNormFunction.apply(x, w, 1e-6)
        c = LigerSiLUMulFunction.apply(a, b)
        loss = LigerCrossEntropyFunction.apply(logits, tgt, None)[0]
        (y.float().sum() + c.float().sum() + loss).backward()

    def compiled_step() -> None:
        with torch.no_grad():
            compiled(xb)  # CALL_COMPILED
            graphed(xb)  # CALL_GRAPHED

    def step() -> None:
        liger_step()
        compiled_step()

    counts: dict[str, int] = collections.Counter()
    if mode == "flagprism":
        import flagprism.profiler as profiler

        # Warm-up inside a session too, so the CUDA graphs are captured while FlagPrism watches
        # (their kernels then keep the capture's model lines); not compared. Both phases run
        # from the same line, so the replaying and capturing call paths share their frames.
        for phase, n in (("warmup", 3), ("measured", MEASURED)):
            profiler.start(
                stem + (".warmup" if phase == "warmup" else ""),
                backend="cupti",
                context="python",
                data="trace",
            )
            run(step, n)
            profiler.finalize()
        doc = json.loads(Path(stem + ".hatchet").read_text())

        def walk(n: dict[str, Any]) -> None:
            m = n.get("metrics", {})
            if m.get("count") and "device_id" in m:
                # a C++ kernel is compared by its mangled name (what the reference shows)
                counts[m.get("mangled_name") or n["frame"]["name"]] += int(m["count"])
            for c in n.get("children", []):
                walk(c)

        walk(doc[0])
    elif mode == "kineto":
        from torch.profiler import ProfilerActivity, profile

        run(step, 3)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            run(step, MEASURED)
        prof.export_chrome_trace(stem + ".kineto.json")
        trace = json.loads(Path(stem + ".kineto.json").read_text())
        for e in trace.get("traceEvents", []):
            if e.get("cat") == "kernel" and e.get("ph") == "X":
                counts[e["name"]] += 1
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    Path(stem + ".counts.json").write_text(
        json.dumps({"kernels": dict(counts), "measured": MEASURED, "liger": True})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
