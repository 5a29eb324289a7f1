# SPDX-License-Identifier: Apache-2.0
"""The Debugger sees real kernels whole on a CUDA GPU (Hopper or newer for the TMA descriptors):
the tutorial-style fused attention forward (block pointers, the K/V loop in a helper) and
backward (helpers walking pointer blocks), the persistent matmul through host tensor
descriptors, and the layer-norm backward with its lock (atomic_cas / atomic_xchg), from
tests/python/kernels/tutorial_style.py; and the small acceptance kernels of kernels/whole.py.

For each real kernel: the correct version gives no findings, unchanged results and 100% of its
memory sites observed, in sanitize mode and at level 1 + addr_level 1 (markers around the body);
its planted bug is found at the right lines (sanitize mode). What each run observed (coverage,
records, findings, time) goes to `$FP_GPU_RESULTS_DIR/whole_gpu.json` when that is set.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

# One worker runs them all (pytest-xdist --dist loadgroup): they gather whole_gpu.json together.
pytestmark = [pytest.mark.gpu, pytest.mark.xdist_group("whole_gpu")]

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import flagprism.debugger as debugger  # noqa: E402

from kernels import planted, tutorial_style, whole  # noqa: E402

_RESULTS: list[dict[str, Any]] = []


def _hopper() -> bool:
    return torch.cuda.get_device_capability()[0] >= 9


def _line(fn: Any, needle: str) -> int:
    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return first + next(i for i, ln in enumerate(lines) if needle in ln)


def _alloc(size: int, alignment: int, stream: Any) -> torch.Tensor:
    return torch.empty(size, device="cuda", dtype=torch.int8)


@pytest.fixture
def dbg(tmp_path):
    triton.set_allocator(_alloc)  # device-made tensor descriptors need global scratch memory
    debugger.configure(output_dir=str(tmp_path / "fp_debug"), all_reports=True)
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()


@pytest.fixture(scope="module", autouse=True)
def _write_results():
    yield
    out = os.environ.get("FP_GPU_RESULTS_DIR")
    if out and _RESULTS:
        Path(out, "whole_gpu.json").write_text(json.dumps(_RESULTS, indent=1))


def _observed(dbg, launch, name: str, **activate: Any) -> list[dict[str, Any]]:
    dbg.activate(**activate)
    t0 = time.perf_counter()
    launch()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    dbg.deactivate()
    runs = dbg.take_exported_runs()
    assert runs, "no instrumented launch"
    for r in runs:
        cov = r["report"]["coverage"]
        _RESULTS.append({"case": name, "mode": activate, "kernel": r["kernel"], "seconds": round(seconds, 3),
                         "complete": r["complete"], "overflow": r["overflow_count"],
                         "records": r["report"]["record_count"],
                         "coverage": {k: v for k, v in cov.items() if k != "unobserved"},
                         "unobserved": cov["unobserved"],
                         "findings": [(f["kind"], f["line"], f["message"]) for f in r["findings"]]})
    return runs


REAL = {
    # name: (factory(planted) -> (launch, check), expected planted findings (kind, function, needle, param))
    "attn_fwd": (lambda pl: tutorial_style.make_attn_fwd("cuda", z=2, h=2, n_ctx=512, head_dim=64, overrun=pl),
                 [("out_of_bounds", "_attn_fwd_inner", "k = tl.load(K_block_ptr)", "K"),
                  ("out_of_bounds", "_attn_fwd_inner", "v = tl.load(V_block_ptr)", "V")]),
    "attn_fwd_causal": (lambda pl: tutorial_style.make_attn_fwd("cuda", z=2, h=2, n_ctx=512, head_dim=64,
                                                                causal=True), []),
    "attn_bwd": (lambda pl: tutorial_style.make_attn_bwd("cuda", z=1, h=2, n_ctx=256, head_dim=64, overrun=pl),
                 [("out_of_bounds", "_attn_bwd_dkdv", "qT = tl.load(qT_ptrs)", "Q"),
                  ("out_of_bounds", "_attn_bwd_dkdv", "m = tl.load(M + offs_m)", "M"),
                  ("out_of_bounds", "_attn_bwd_dkdv", "do = tl.load(do_ptrs)", "DO"),
                  ("out_of_bounds", "_attn_bwd_dkdv", "Di = tl.load(D + offs_m)", "D")]),
    "matmul_tma": (lambda pl: tutorial_style.make_matmul("cuda", m=1024, n=1024, k=512, planted=pl, num_sms=16),
                   [("out_of_bounds", "matmul_tma_persistent_kernel", "a = a_desc.load", "a_desc"),
                    ("descriptor_extent", "matmul_tma_persistent_kernel", "a = a_desc.load", "a_desc")]),
    "layer_norm_bwd": (lambda pl: tutorial_style.make_layer_norm_bwd("cuda", m=1024, n=1024, group=16,
                                                                     count_off=pl),
                       [("out_of_bounds", "layer_norm_bwd_dx_kernel", "count = tl.load(Count)", "Lock"),
                        ("out_of_bounds", "layer_norm_bwd_dx_kernel", "tl.atomic_xchg(Count, 1)", "Lock")]),
}


def _skip_unless_supported(name: str) -> None:
    if name == "matmul_tma" and not _hopper():
        pytest.skip("tensor descriptors (TMA) need compute capability 9.0 or newer")


def _full_coverage(runs: list[dict[str, Any]]) -> None:
    for r in runs:
        cov = r["report"]["coverage"]
        assert cov["memory_sites"] == cov["memory_sites_observed"] > 0, (r["kernel"], cov)
        assert cov["unobserved"] == [], (r["kernel"], cov["unobserved"])


@pytest.mark.parametrize("mode", ["sanitize", "level1"])
@pytest.mark.parametrize("name", list(REAL))
def test_real_kernel_correct_version_gpu(dbg, name, mode):
    _skip_unless_supported(name)
    make, _expect = REAL[name]
    launch, check = make(False)
    launch()
    torch.cuda.synchronize()
    check()
    act = {"sanitize": True} if mode == "sanitize" else {"level": 1, "addr_level": 1}
    runs = _observed(dbg, launch, f"{name}/correct", **act)
    torch.cuda.synchronize()
    check()
    assert all(r["complete"] for r in runs), [(r["kernel"], r["overflow_count"]) for r in runs]
    assert all(r["findings"] == [] for r in runs), [r["findings"] for r in runs]
    _full_coverage(runs)


@pytest.mark.parametrize("name", [n for n, (_m, e) in REAL.items() if e])
def test_real_kernel_planted_bug_found_gpu(dbg, name):
    _skip_unless_supported(name)
    make, expect = REAL[name]
    launch, _check = make(True)
    runs = _observed(dbg, launch, f"{name}/planted", sanitize=True)
    found = sorted((f["kind"], f["function"], f["line"], f["param"]) for r in runs for f in r["findings"])
    want = sorted((k, fn, _line(getattr(tutorial_style, fn), needle), p) for k, fn, needle, p in expect)
    assert found == want


def test_attention_nan_observed_inside_the_helper_gpu(dbg):
    """Level 1 on the attention forward: the statements of the K/V loop inside the helper
    (qk, m_ij, p, alpha) have value records, per program and per iteration."""
    launch, check = tutorial_style.make_attn_fwd("cuda", z=1, h=2, n_ctx=256, head_dim=64)
    (run,) = _observed(dbg, launch, "attn_fwd/values", level=1, addr_level=1)
    check()
    stmts = [s for s in run["report"]["statements"] if s["function"] == "_attn_fwd_inner"]
    names = {r["name"] for s in stmts for r in s["results"] if r["instance_count"]}
    assert {"qk", "m_ij", "p", "alpha", "l_i", "acc"} <= names
    loads = [m for s in stmts for m in s["memory"]]
    assert {m["form"] for m in loads} == {"block_pointer"}
    assert all(i["address_summary"]["status"] == "complete" for m in loads for i in m["instances"])


# ------------------------------------------------------------------------------------------------
# The small acceptance kernels of kernels/whole.py, on the GPU (sanitize mode)
# ------------------------------------------------------------------------------------------------


def _helper(buggy: bool):
    n = 100
    x = planted.outside(n, "cuda", fill=planted._randn(n))
    out = torch.zeros(n, device="cuda")
    whole.helper_kernel[(2,)](x, out, n, BLOCK=64, BUGGY=buggy)
    return lambda: torch.equal(out, x * 2.0)


def _bp(check: bool):
    m, n = 10, 32
    a = planted.inside(m * n, "cuda", fill=planted._randn(m * n)).view(m, n)
    out = torch.zeros(m, n, device="cuda")
    whole.bp_rows_kernel[(2,)](a, out, m, n, a.stride(0), BM=8, BN=32, CHECK=check)
    return lambda: torch.equal(out, a)


def _hist(range_check: bool):
    x = torch.randint(0, 8, (100,), generator=planted._gen(3), dtype=torch.int32)
    x[70] = 8
    x = x.cuda()
    parent = torch.zeros(16 + 8 + 64, dtype=torch.int32, device="cuda")
    bins = parent[16:24]
    whole.hist_kernel[(2,)](x, bins, 100, NB=8, BLOCK=64, RANGE_CHECK=range_check)
    return lambda: torch.equal(bins, torch.bincount(x[x < 8], minlength=8).to(torch.int32))


def _host_desc(extra: int):
    from triton.tools.tensor_descriptor import TensorDescriptor

    m, n = 20, 16
    a = planted.inside(m * n, "cuda", off=16, pad=2048, fill=planted._randn(m * n)).view(m, n)
    out = torch.zeros(m, n, device="cuda")
    whole.host_desc_kernel[(2,)](TensorDescriptor(a, [m + extra, n], [n, 1], [16, 16]),
                                 TensorDescriptor.from_tensor(out, [16, 16]), BM=16)
    return lambda: torch.equal(out, a * 2.0)


def _dev_desc(extra: int):
    m, n = 20, 16
    a = planted.inside(m * n, "cuda", off=16, pad=2048, fill=planted._randn(m * n)).view(m, n)
    out = torch.zeros(m, n, device="cuda")
    whole.dev_desc_kernel[(2,)](a, out, m, n, EXTRA=extra, BM=16, BN=16)
    return lambda: torch.equal(out, a + 1.0)


SMALL = {
    "helper": (_helper, False, True, ["out_of_bounds"]),
    "block_pointer": (_bp, True, False, ["out_of_bounds"]),
    "histogram": (_hist, True, False, ["out_of_bounds"]),
    "host_descriptor": (_host_desc, 0, 8, ["descriptor_extent", "out_of_bounds"]),
    "device_descriptor": (_dev_desc, 0, 8, ["descriptor_extent", "out_of_bounds"]),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_small_acceptance_kernels_gpu(dbg, name):
    if "descriptor" in name and not _hopper():
        pytest.skip("tensor descriptors (TMA) need compute capability 9.0 or newer")
    fn, good, bad, kinds = SMALL[name]
    dbg.activate(sanitize=True)
    ok = fn(good)
    torch.cuda.synchronize()
    dbg.deactivate()
    (run,) = dbg.take_exported_runs()
    assert ok() and run["findings"] == [] and run["complete"]
    _full_coverage([run])
    dbg.activate(sanitize=True)
    fn(bad)
    torch.cuda.synchronize()
    dbg.deactivate()
    (run,) = dbg.take_exported_runs()
    assert sorted(f["kind"] for f in run["findings"]) == kinds, [f["message"] for f in run["findings"]]
    _RESULTS.append({"case": f"small/{name}", "findings": [(f["kind"], f["line"]) for f in run["findings"]]})


def test_block_pointer_closed_form_matches_every_lane_gpu(dbg):
    """The closed-form summary of block-pointer accesses equals the one reduced from every lane
    (addr_level 2 materialises the lanes)."""

    def summaries(addr_level: int):
        m, n = 10, 32
        a = planted.inside(m * n, "cuda", fill=planted._randn(m * n)).view(m, n)
        out = torch.zeros(m, n, device="cuda")
        dbg.activate(level=0, addr_level=addr_level)
        whole.bp_rows_kernel[(2,)](a, out, m, n, a.stride(0), BM=8, BN=32, CHECK=True)
        torch.cuda.synchronize()
        dbg.deactivate()
        (run,) = dbg.take_exported_runs()
        out_rows = []
        for s in run["report"]["statements"]:
            for mem in s["memory"]:
                for i in mem["instances"]:
                    a_s = dict(i["address_summary"])
                    for k in ("first_addr", "last_addr", "min_addr", "max_addr"):
                        if a_s[k] is not None:
                            a_s[k] -= a.data_ptr() if mem["access"] == "load" else out.data_ptr()
                    out_rows.append((s["line"], i["program"], i["execution"], a_s))
        return out_rows

    assert summaries(1) == summaries(2)


def test_descriptor_atomic_gpu(dbg):
    """A descriptor atomic (TMA reduce), which the interpreter cannot run: observed as an atomic
    site (op add, through the descriptor), with exact addresses and no finding."""
    if not _hopper():
        pytest.skip("tensor descriptors (TMA) need compute capability 9.0 or newer")
    a = torch.zeros(64, 32, device="cuda")
    dbg.activate(level=1, addr_level=1)
    whole.desc_atomic_kernel[(4,)](a, 64, 32, BM=16, BN=32)
    torch.cuda.synchronize()
    dbg.deactivate()
    (run,) = dbg.take_exported_runs()
    assert torch.equal(a, torch.ones(64, 32, device="cuda"))
    assert run["findings"] == [] and run["complete"]
    _full_coverage([run])
    (m,) = [m for s in run["report"]["statements"] for m in s["memory"] if m["access"] == "atomic"]
    assert m["op"] == "add" and m["form"] == "tensor_descriptor"
    s1 = next(i["address_summary"] for i in m["instances"] if i["program"][0] == 1)
    assert s1["first_addr"] == a.data_ptr() + 16 * 32 * 4 and s1["active_lane_count"] == 16 * 32
