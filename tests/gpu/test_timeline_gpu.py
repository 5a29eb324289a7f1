# SPDX-License-Identifier: Apache-2.0
"""Intra-kernel timelines on a CUDA GPU (pytest -m gpu): the proof of docs/guide/intra-kernel.md.

What the interpreter tests (tests/python/test_timeline.py) cannot show:

* the twin compiles and runs on the device, reading %globaltimer, %clock64 and %smid, one
  record per program (scalar stores from one thread);
* a kernel with two scopes of known relative cost, a loop of loads then a loop of arithmetic,
  shows the expected split: quadrupling the arithmetic loop's trip count multiplies the "math"
  scope's time by about 4 and leaves the "loads" scope about where it was;
* with one program per SM (one wave), each program's total scope time is consistent with the
  kernel's CUPTI duration (below it, and most of it);
* the tree and the trace agree (intervals, nanoseconds), the slices sit inside the kernel's
  CUPTI event once aligned, and SM ids are real SM ids;
* %globaltimer's update granularity on this GPU (recorded, not asserted).

The numbers go to $FP_GPU_RESULTS_DIR/timeline_gpu.json for docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402

# Scope times compared with each other and with the kernel's: another process's kernels on the
# GPU would change them.
pytestmark = [pytest.mark.gpu, pytest.mark.exclusive_gpu]

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import flagprism.language as fpl  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402


@triton.jit
def two_phase(x_ptr, y_ptr, n_loads, n_math, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    with fpl.scope("loads"):
        for i in range(0, n_loads):
            acc += tl.load(x_ptr + (pid * n_loads + i) * stride + offs)
    with fpl.scope("math"):
        for i in range(0, n_math):
            acc = acc * 0.999 + 0.5
    tl.store(y_ptr + pid * BLOCK + offs, acc)


def _sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def _profile(tmp: Path, n_loads: int, n_math: int) -> dict[str, Any]:
    progs = _sms()
    block = 128
    stride = 4096  # each load touches its own lines: latency-bound loads
    x = torch.rand(progs * n_loads * stride + block, device="cuda")
    y = torch.empty(progs * block, device="cuda")
    two_phase[(progs,)](x, y, n_loads, n_math, stride, BLOCK=block)  # compile outside
    torch.cuda.synchronize()
    name = tmp / f"tl_{n_loads}_{n_math}"
    profiler.start(str(name), backend="cupti", instrumentation=True, data="trace")
    try:
        two_phase[(progs,)](x, y, n_loads, n_math, stride, BLOCK=block)
        torch.cuda.synchronize()
    finally:
        profiler.finalize()
    return {
        "hatchet": json.loads(Path(f"{name}.hatchet").read_text()),
        "trace": json.loads(Path(f"{name}.chrome_trace.json").read_text()),
        "meta": json.loads(Path(f"{name}.meta.json").read_text()),
        "programs": progs,
    }


def _kernel(root: dict[str, Any]) -> dict[str, Any]:
    stack = [root]
    while stack:
        n = stack.pop()
        if n["frame"]["name"] == "two_phase":
            return n
        stack.extend(n["children"])
    raise AssertionError("no two_phase node")


def _scopes(k: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {c["frame"]["name"]: c["metrics"] for c in k["children"]}


def _save(what: dict[str, Any]) -> None:
    d = os.environ.get("FP_GPU_RESULTS_DIR")
    if d:
        p = Path(d) / "timeline_gpu.json"
        old = json.loads(p.read_text()) if p.exists() else {}
        old.update(what)
        p.write_text(json.dumps(old, indent=1, sort_keys=True))


def test_two_scopes_show_the_expected_split(tmp_path: Path) -> None:
    a = _profile(tmp_path, 64, 2048)
    b = _profile(tmp_path, 64, 8192)
    sa, sb = _scopes(_kernel(a["hatchet"][0])), _scopes(_kernel(b["hatchet"][0]))
    mean = "scope_time_mean (ns) (pty)"
    math_ratio = sb["math"][mean] / sa["math"][mean]
    load_ratio = sb["loads"][mean] / sa["loads"][mean]
    cyc_ratio = sb["math"]["scope_cycles_mean (pty)"] / sa["math"]["scope_cycles_mean (pty)"]
    _save({"split": {"a_loads_ns": sa["loads"][mean], "a_math_ns": sa["math"][mean],
                     "b_loads_ns": sb["loads"][mean], "b_math_ns": sb["math"][mean],
                     "math_ratio": math_ratio, "loads_ratio": load_ratio, "math_cycles_ratio": cyc_ratio}})
    assert 3.0 < math_ratio < 5.0, (sa, sb)
    assert 3.0 < cyc_ratio < 5.0
    assert 0.5 < load_ratio < 2.0, (sa, sb)
    for s in (sa, sb):
        assert s["loads"]["scope_programs(exc)"] == a["programs"]
        assert s["math"]["scope_programs(exc)"] == a["programs"]


def test_scope_time_is_consistent_with_the_kernel_and_the_trace(tmp_path: Path) -> None:
    r = _profile(tmp_path, 64, 4096)
    k = _kernel(r["hatchet"][0])
    s = _scopes(k)
    kernel_ns = k["metrics"]["time (ns)"]
    assert k["metrics"]["count"] == 1
    per_program = s["loads"]["scope_time_mean (ns) (pty)"] + s["math"]["scope_time_mean (ns) (pty)"]
    worst = s["loads"]["scope_time (ns) (max)"] + s["math"]["scope_time (ns) (max)"]
    _save({"consistency": {"kernel_ns": kernel_ns, "per_program_scopes_ns": per_program,
                           "worst_program_ns": worst, "programs": r["programs"]}})
    # one wave: every program runs from about the kernel's start to about its end
    assert per_program <= kernel_ns * 1.02, (per_program, kernel_ns)
    assert per_program >= 0.5 * kernel_ns, (per_program, kernel_ns)
    ik = r["meta"]["intra_kernel"]
    assert ik["aligned_to_kernel_event"] == 1 and ik["overflow_records"] == 0
    assert ik["intervals"] == 2 * r["programs"]
    ev = r["trace"]["traceEvents"]
    kern = [e for e in ev if e.get("cat") == "kernel" and e["name"] == "two_phase"]
    assert len(kern) == 1
    k0, k1 = float(kern[0]["ts"]), float(kern[0]["ts"]) + float(kern[0]["dur"])
    sl = [e for e in ev if e.get("cat") == "kernel_scope"]
    assert len(sl) == ik["intervals"]
    for name in ("loads", "math"):
        mine = [e for e in sl if e["name"] == name]
        assert len(mine) == s[name]["scope_count(exc)"]
        total_ns = sum(round(float(e["dur"]) * 1000) for e in mine)
        assert abs(total_ns - s[name]["scope_time (ns)(exc)"]) <= len(mine), name
    # aligned on the kernel's start; the device clocks drift by far less than a microsecond here
    assert all(k0 - 1.0 <= float(e["ts"]) and float(e["ts"]) + float(e["dur"]) <= k1 + 2.0 for e in sl)
    # %globaltimer's update granularity, for docs/guide/intra-kernel.md: the gcd of the durations
    import math

    durs = [round(float(e["dur"]) * 1000) for e in sl]
    nz = [d for d in durs if d > 0]
    _save({"globaltimer": {"gcd_of_durations_ns": math.gcd(*nz) if nz else 0,
                           "min_nonzero_duration_ns": min(nz) if nz else 0,
                           "zero_durations": len(durs) - len(nz), "intervals": len(durs)}})
    sms = {e["args"]["smid"] for e in sl}
    assert sms <= set(range(_sms())) and len(sms) > _sms() // 2
