# SPDX-License-Identifier: Apache-2.0
"""Check mode on a CUDA GPU: the launch pipeline (record buffers in a device pool, read back on the
launch's stream, decoded in the background) gives the same summary as the synchronous path, keeps
the program's results bitwise, bounds its memory (a pool smaller than a burst of launches makes
the host wait, never drop), and still attributes a kernel that faults: the launches before it
are reported, the faulting one is named. Value checks (nan, inf) on Liger-Kernel's ops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import _workloads as wl  # noqa: E402
import flagprism.debugger as debugger  # noqa: E402
from kernels import planted, vector_add  # noqa: E402


@pytest.fixture
def dbg(tmp_path: Path):
    debugger.deactivate()
    debugger.reset_config()
    debugger._report_fn = debugger._ext_report
    debugger.clear_exported_runs()
    debugger.configure(output_dir=tmp_path / "fp_debug")
    debugger.reset_summary()
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()


def _burst(n: int = 64) -> torch.Tensor:
    size = 1 << 20
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(size, device="cuda", generator=g)
    out = torch.zeros_like(x)
    for _ in range(n):
        vector_add.add_kernel[(triton.cdiv(size, 1024),)](x, out, out, size, BLOCK=1024)
    torch.cuda.synchronize()
    return out


def test_pipeline_matches_sync_and_keeps_results(dbg, tmp_path):
    want = _burst()
    counts = {}
    for pipeline in (True, False):
        dbg.configure(output_dir=tmp_path / f"o{pipeline}", pipeline=pipeline)
        dbg.reset_summary()
        dbg.activate(check="bounds")
        got = _burst()
        dbg.deactivate()
        assert torch.equal(got, want)
        runs = dbg.take_exported_runs()
        counts[pipeline] = (len(runs), dbg.summary()["totals"]["by_status"]["instrumented"],
                            sum(r["findings_count"] for r in runs))
    assert counts[True] == counts[False] == (64, 64, 0)


def test_small_pool_waits_never_drops(dbg):
    # a pool of 1 MiB holds few of these 256-program buffers: the host must wait for the oldest
    dbg.configure(pool_bytes=1 << 20)
    dbg.activate(check="bounds")
    _burst(200)
    st = dbg.stats()["pipelines"]
    dbg.deactivate()
    (dev,) = st.values()
    assert dev["submitted"] == 200 and dev["failed"] == 0
    assert dbg.summary()["totals"]["by_status"]["instrumented"] == 200


def test_page_locked_pool_kept_across_activations(dbg):
    """deactivate() keeps the pipeline's page-locked pool as the spare, the next activation
    takes it (launches reported as before), release_memory=True frees it."""
    from flagprism import _ext

    _ext.debug_pipe_release_spare()
    dbg.configure(pool_bytes=8 << 20)
    want = _burst(4)
    for i in range(2):
        dbg.activate(check="bounds")
        assert torch.equal(_burst(4), want)
        assert dbg.stats()["pipelines"]["cuda:0"]["pool_bytes"] == 8 << 20
        dbg.deactivate(release_memory=i == 1)
    assert dbg.summary()["totals"]["by_status"]["instrumented"] == 8
    assert _ext.debug_pipe_release_spare() == 0  # release_memory freed it
    dbg.activate(check="bounds")
    _burst(1)
    dbg.deactivate()
    assert _ext.debug_pipe_release_spare() == 8 << 20  # kept after a plain deactivate


def test_planted_bounds_through_the_pipeline(dbg):
    dbg.activate(check="bounds")
    oob = [c for c in planted.CASES if any(e.kind == "out_of_bounds" for e in c.expect)]
    for case in oob:
        planted.launch(case, "cuda")
    torch.cuda.synchronize()
    dbg.deactivate()
    kinds = {(f["kernel"], f["kind"]) for f in dbg.summary()["json"]["findings"]}
    want = {(getattr(c.kernel, "fn", c.kernel).__name__, "out_of_bounds") for c in oob}
    assert want <= kinds, (want, kinds)


FAULT = """\
import sys
sys.path.insert(0, {py!r})
import torch, triton, triton.language as tl
from kernels import vector_add

@triton.jit
def wild(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs + (1 << 40), tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)

x = torch.randn(4096, device="cuda")
out = torch.empty_like(x)
for _ in range(2):
    vector_add.add_kernel[(4,)](x, x, out, 4096, BLOCK=1024)
torch.cuda.synchronize()
print("before", flush=True)
wild[(1,)](x, 1024, BLOCK=1024)
torch.cuda.synchronize()
print("not reached")
"""


def test_wild_store_is_suppressed_and_the_program_survives(tmp_path):
    """A store 1 TiB past its tensor: the check finds it, does not perform it, and the program
    reaches its end (no illegal-address error ending the CUDA context)."""
    prog = tmp_path / "fault.py"
    prog.write_text(FAULT.format(py=str(HERE.parent / "python")))
    r = subprocess.run(["flagprism", "debug", "--check", "bounds", "-o", str(tmp_path / "out"), str(prog)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 3 and "before" in r.stdout and "not reached" in r.stdout, r.stderr[-3000:]
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    (f,) = [f for f in s["findings"] if f["kernel"] == "wild"]
    assert f["kind"] == "out_of_bounds", f
    rep = json.loads(Path(f["report"].replace(".txt", ".json")).read_text())
    (g,) = rep["findings"]
    assert g["suppressed"] == g["lanes_out"] == 1024 and g["location"] == "outside_allocations"


def test_faulting_kernel_is_attributed(tmp_path):
    """With --check-continue run the store is performed, as without the Debugger: the fault is
    named on the faulting launch."""
    prog = tmp_path / "fault.py"
    prog.write_text(FAULT.format(py=str(HERE.parent / "python")))
    r = subprocess.run(["flagprism", "debug", "--check", "bounds", "--check-continue", "run",
                        "-o", str(tmp_path / "out"), str(prog)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode != 0 and "before" in r.stdout and "not reached" not in r.stdout
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    k = {x["name"]: x for x in s["kernels"]}
    assert k["add_kernel"]["instrumented"] == 2, s
    assert "wild" in k, s
    # the fault is named on the faulting launch (or found by its bounds check first)
    wild = k["wild"]
    assert wild["instrumented"] + sum(x["launches"] for x in wild["not_instrumented"]) == 1
    reasons = " ".join(x["reason"] for x in wild["not_instrumented"])
    found = [f for f in s["findings"] if f["kernel"] == "wild"]
    assert found or "the device reported an error" in reasons or "raised" in reasons, s


def test_nan_check_on_liger(dbg):
    if wl.missing("liger_kernel"):
        pytest.skip(wl.missing("liger_kernel"))
    t = wl.liger_inputs()
    bare = wl.liger_pass(t)
    dbg.activate(check="nan,inf")
    got = wl.liger_pass(t)
    dbg.deactivate()
    # a value check reads every intermediate, which limits ptxas's fused multiply-adds: results
    # may differ in the last bits (docs/guide/debugger.md, "Results under value checks")
    for k in bare:
        torch.testing.assert_close(got[k], bare[k], rtol=1e-5, atol=1e-5, msg=k)
    s = dbg.summary()
    assert s["totals"]["findings"] == 0, s["text"]
    assert s["totals"]["by_status"]["instrumented"] >= 9 and s["totals"]["by_status"]["failed"] == 0, s["text"]
    # a NaN planted in the input of the cross entropy is found where it enters
    t["logits"][3, 7] = float("nan")
    dbg.reset_summary()
    dbg.activate(check="nan")
    wl.liger_pass(t)
    dbg.deactivate()
    f = dbg.summary()["json"]["findings"]
    assert any(x["kind"] == "nan_origin" for x in f), dbg.summary()["text"]
