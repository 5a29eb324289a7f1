# SPDX-License-Identifier: Apache-2.0
"""`flagprism report` on what a CUDA GPU produces (pytest -m gpu), which the interpreter tests
(tests/python/test_report.py) cannot make:

* a real Debugger run of 65,536 programs (the 64M-element vector add, level 1 + addr_level 1):
  the page has one heatmap cell per program, every load and store is placed inside the tensor
  it addresses (device addresses, matched by extent), and nothing reaches outside;
* a real profile with CUPTI kernel times, the device's peaks, launch metadata and an
  intra-kernel timeline: the page has devices with known peaks, a memory-bound vector add under
  its roof on the roofline, and per-SM tracks of scope slices.

When Chromium is on the machine, both pages are opened in it too (no console error, no request,
interactive within 2 s); without it that part is skipped and says so. Numbers go to
$FP_GPU_RESULTS_DIR/report_gpu.json for docs/benchmarks.md.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import _browser  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402
import flagprism.language as fpl  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402
from flagprism.cli import binary_path  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
    fpl.collect_end()


def _add_meta(grid, kernel, args):
    n = args["n"]
    return {"name": f"add_meta [{n}]", "bytes": 12 * n, "flops32": n}


@triton.jit(launch_metadata=_add_meta)
def add_meta(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


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


def _save(what: dict[str, Any]) -> None:
    d = os.environ.get("FP_GPU_RESULTS_DIR")
    if d:
        p = Path(d) / "report_gpu.json"
        # both tests add to it, perhaps from two pytest-xdist workers at once
        with open(Path(d) / ".report_gpu.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            old = json.loads(p.read_text()) if p.exists() else {}
            old.update(what)
            p.write_text(json.dumps(old, indent=1, sort_keys=True))


def _report(*args: str) -> float:
    t0 = time.monotonic()
    r = subprocess.run([str(binary_path()), "report", *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return time.monotonic() - t0


def _blocks(page: Path) -> dict[str, Any]:
    """Every data block of a page, parsed (the \\u003c escapes are plain JSON)."""
    text = page.read_text()
    out = {m.group(1): json.loads(m.group(2)) for m in
           re.finditer(r'<script type="application/json" id="([^"]+)">(.*?)</script>', text, re.S)}
    assert "<img" not in text
    return out


def _open_in_browser(page: Path) -> float | None:
    exe = _browser.find_chromium()
    if exe is None:
        return None
    with _browser.Browser(exe) as b:
        t = b.open(page, timeout=60)
        assert b.console_errors() == []
        assert b.requests() == [page.resolve().as_uri()]
        return t


def test_debugger_page_of_65536_programs(tmp_path: Path) -> None:
    block, programs = 1024, 65536
    n = block * programs
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    out_dir = tmp_path / "fp_debug"
    debugger.configure(output_dir=str(out_dir))
    debugger.activate(level=1, addr_level=1)
    try:
        add_kernel[(programs,)](x, y, out, n, BLOCK=block)
        torch.cuda.synchronize()
    finally:
        debugger.deactivate()
        runs = debugger.take_exported_runs()
        debugger.reset_config()
    assert len(runs) == 1 and runs[0]["complete"]
    page = tmp_path / "debug.html"
    seconds = _report(str(out_dir), "-o", str(page))
    data = _blocks(page)
    main = data["fp-data"]
    assert main["findings"] == [] and len(main["launches"]) == 1
    launch = data[main["launches"][0]["block"]]
    assert launch["cells"] == {"nx": programs, "ny": 1, "bx": 1, "by": 1}
    assert launch["args_from"] == "report"
    extents = {a["name"]: a["view"] for a in launch["args"]}
    assert extents["x_ptr"] == [x.data_ptr(), x.data_ptr() + 4 * n]
    sites = [s for st in launch["statements"] for s in st["sites"]]
    accesses = [s for s in sites if s["kind"] in ("load", "store")]
    assert {s["param"] for s in accesses} == {"x_ptr", "y_ptr", "out_ptr"}
    for s in accesses:
        assert s["param_how"] == "view", s
        lo, hi = extents[s["param"]]
        assert lo <= s["agg"]["lo"] and s["agg"]["hi"] + 4 <= hi
        cells = data[s["block"]]["cells"]
        assert len(cells["count"]) == programs and min(cells["count"]) == 1
        assert cells["active"][0] == block
    value = next(s for s in sites if s["kind"] == "value" and s["name"] == "x")
    assert 0 <= value["agg"]["min"] <= value["agg"]["max"] < 1 and value["agg"]["elements"] == n
    opened = _open_in_browser(page)
    _save({"debugger_65536": {"report_s": seconds, "page_mb": page.stat().st_size / 1e6,
                              "open_s": opened, "browser": opened is not None}})
    if opened is not None:
        assert opened < 2.0, opened


def test_profile_page_with_peaks_roofline_and_sm_tracks(tmp_path: Path) -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    block, stride, n_loads = 128, 4096, 16
    x = torch.rand(sms * n_loads * stride + block, device="cuda")
    y = torch.empty(sms * block, device="cuda")
    n = 1 << 24
    a, b = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    c = torch.empty_like(a)
    two_phase[(sms,)](x, y, n_loads, 512, stride, BLOCK=block)  # compile outside
    add_meta[(n // 1024,)](a, b, c, n, BLOCK=1024)
    torch.cuda.synchronize()
    name = tmp_path / "prof"
    # kernel times from CUPTI, launch metadata (add_meta's flops and bytes), a scope timeline
    profiler.start(str(name), backend="cupti", instrumentation=True, data="trace", hook="triton")
    try:
        with profiler.scope("step"):
            two_phase[(sms,)](x, y, n_loads, 512, stride, BLOCK=block)
            for _ in range(3):
                add_meta[(n // 1024,)](a, b, c, n, BLOCK=1024)
            torch.cuda.synchronize()
    finally:
        profiler.finalize()
    page = tmp_path / "prof.html"
    seconds = _report(f"{name}.hatchet", "-o", str(page))
    data = _blocks(page)
    prof = data["fp-data"]["profile"]
    assert any(d["type"] == "CUDA" and d["peaks_known"] for d in prof["devices"]), prof["devices"]
    tree = data[prof["tree"]]
    kinds = dict(zip(tree["name"], tree["kind"]))
    assert kinds["two_phase"] == "k" and kinds["loads"] == "i" and kinds["math"] == "i"
    points = {p["name"]: p for p in prof["roofline"]["points"]}
    # CUPTI names the kernel by its symbol: launch_metadata's "name" does not rename it
    meta = points["add_meta"]
    assert meta["peaks_known"] and meta["flops_src"] == "metadata" and meta["bytes_src"] == "metadata"
    assert abs(meta["intensity"] - 1 / 12) < 1e-9
    assert 0 < meta["flop_per_s"] <= meta["roof"] * 1.001 and meta["bound"] == "memory"
    tl_data = data[data["fp-data"]["timeline"]]
    sm_tracks = [t for t in tl_data["tracks"] if t["name"].startswith("SM ")]
    assert len(sm_tracks) >= min(sms, 8)
    names = [tl_data["names"][i] for i in tl_data["name"]]
    assert names.count("loads") == sms and names.count("math") == sms
    opened = _open_in_browser(page)
    _save({"profile_gpu": {"report_s": seconds, "page_mb": page.stat().st_size / 1e6, "open_s": opened,
                           "sm_tracks": len(sm_tracks), "add_pct_of_roof": meta["pct_of_roof"]}})
    if opened is not None:
        assert opened < 2.0, opened
