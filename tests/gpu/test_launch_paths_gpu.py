# SPDX-License-Identifier: Apache-2.0
"""The Debugger and the Profiler on programs nobody here wrote, on a CUDA GPU: FlagGems'
operators under use_gems() (its LibEntry launches and its Triton kernels serving torch.zeros),
Liger-Kernel's ops forward and backward with a planted bug in a copy of one of its kernels,
torch.compile (Inductor) in default and reduce-overhead (CUDA graph) modes with a user
triton_op that has a planted out-of-bounds load, CUDA graphs captured by hand, and a compiled
kernel called directly. Every launch is instrumented or listed with its reason; results equal
the runs without FlagPrism, bitwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import triton.language as tl  # noqa: E402

import _workloads as wl  # noqa: E402
import flagprism.debugger as debugger  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402
from kernels import vector_add  # noqa: E402


@pytest.fixture
def dbg(tmp_path: Path):
    debugger.deactivate()
    debugger.reset_config()
    # every launch keeps its report (sanitize mode writes only reports with findings otherwise):
    # the tests read each report's origin
    debugger.configure(output_dir=tmp_path / "fp_debug", all_reports=True)
    debugger.clear_exported_runs()
    debugger.reset_summary()
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()


def _kernels() -> dict[str, dict[str, Any]]:
    return {k["name"]: k for k in debugger.summary()["json"]["kernels"]}


def _equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), f"{k} differs under FlagPrism"


def _need(module: str) -> None:
    why = wl.missing(module)
    if why:
        pytest.skip(why)


# ------------------------------------------------------------------------------------------------
# FlagGems
# ------------------------------------------------------------------------------------------------


def test_flaggems_under_sanitize(dbg):
    _need("flag_gems")
    t = wl.gems_inputs()
    native = wl.gems_ops(t)
    bare = wl.gems_run(t)
    for k in wl.GEMS_OPS:
        torch.testing.assert_close(bare[k], native[k], rtol=2e-4, atol=2e-4, msg=f"FlagGems {k} vs PyTorch")
    dbg.activate(sanitize=True)
    got = wl.gems_run(t)
    dbg.deactivate()
    _equal(got, bare)
    s = debugger.summary()
    tot = s["totals"]
    assert tot["findings"] == 0, s["text"]
    assert tot["by_status"]["instrumented"] >= len(wl.GEMS_OPS) - 1, s["text"]  # mm may be cuBLAS
    assert tot["by_status"]["failed"] == 0 and tot["by_status"]["unobservable"] == 0, s["text"]
    # the launches went through FlagGems' LibEntry
    paths = {r["report"]["origin"]["launch_path"] for r in dbg.take_exported_runs() if r.get("report")}
    assert any("LibEntry" in p for p in paths), paths


@pytest.mark.parametrize("checks", ["bounds", "bounds,nan,inf,domain"])
def test_flaggems_wide_clean_under_checks(dbg, checks):
    """At least 30 FlagGems operators (softmax with -inf padding, max/min with dtype-limit
    identities, log_softmax, cross entropy among them) under check mode: no finding, results
    as without the Debugger (bit for bit under bounds; within rounding under value checks, which
    read every intermediate: docs/guide/debugger.md, "Results under value checks")."""
    _need("flag_gems")
    t = wl.gems_inputs()
    bare = wl.gems_wide_run(t)
    assert len(wl.GEMS_WIDE) >= 30
    dbg.activate(check=checks)
    got = wl.gems_wide_run(t)
    dbg.deactivate()
    for k in wl.GEMS_WIDE:
        if checks == "bounds":
            assert torch.equal(got[k], bare[k]), k
        else:
            torch.testing.assert_close(got[k], bare[k], rtol=1e-5, atol=1e-5, msg=k)
    s = debugger.summary()
    tot = s["totals"]
    assert tot["findings"] == 0, s["text"]
    assert tot["by_status"]["instrumented"] >= 30, s["text"]
    assert tot["by_status"]["failed"] == 0, s["text"]
    names = {k["name"] for k in s["json"]["kernels"] if k["instrumented"]}
    print(f"\n{checks}: {len(names)} kernels, {tot['by_status']['instrumented']} launches checked")


def test_flaggems_use_gems_while_buffers_are_made(dbg):
    """The Debugger's own buffers are made while FlagGems serves torch.zeros: nothing of
    FlagPrism's reaches FlagGems (no recursion; the summary has only the user's launches)."""
    _need("flag_gems")
    import flag_gems

    x = torch.randn(10000, device="cuda")
    dbg.activate(sanitize=True)
    with flag_gems.use_gems():
        z = torch.zeros(10000, device="cuda")
        out = torch.empty_like(x)
        vector_add.add_kernel[(triton.cdiv(10000, 1024),)](x, z, out, 10000, BLOCK=1024)
        torch.cuda.synchronize()
    dbg.deactivate()
    assert torch.equal(out, x)
    ks = _kernels()
    assert ks["add_kernel"]["instrumented"] == 1
    zero_kernels = [n for n in ks if n != "add_kernel"]
    assert sum(ks[n]["launches"] for n in zero_kernels) == 1, ks  # the user's torch.zeros only


def test_flaggems_cli_debug_and_profile(tmp_path):
    _need("flag_gems")
    script = tmp_path / "gems_prog.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "import _workloads as wl\n"
        "t = wl.gems_inputs()\n"
        "out = wl.gems_run(t)\n"
        "print('ops', len(out))\n")
    env = dict(os.environ)
    r = subprocess.run(["flagprism", "debug", "--sanitize", "--strict", "-o", str(tmp_path / "dbg"), str(script)],
                       capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "ops 9" in r.stdout and "no findings" in r.stderr
    summary = json.loads((tmp_path / "dbg" / "summary.json").read_text())
    assert summary["totals"]["instrumented"] > 0 and summary["totals"]["failed"] == 0
    # the Profiler: every FlagGems kernel launched is in the tree, as often as it was launched
    ref = tmp_path / "ref.py"
    ref.write_text(
        "import collections, json, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from triton import knobs\n"
        "import _workloads as wl\n"
        "t = wl.gems_inputs()\n"
        "wl.gems_run(t)\n"
        "seen = collections.Counter()\n"
        "hook = lambda md: seen.update([md.data['name'] if hasattr(md, 'data') else md['name']])\n"
        "knobs.runtime.launch_enter_hook.add(hook)\n"
        "wl.gems_run(t)\n"
        "knobs.runtime.launch_enter_hook.remove(hook)\n"
        "print(json.dumps(seen))\n")
    r = subprocess.run([sys.executable, str(ref)], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    want = json.loads(r.stdout.strip().splitlines()[-1])
    prof = tmp_path / "gems"
    body = ("import sys\n"
            f"sys.path.insert(0, {str(HERE)!r})\n"
            "import _workloads as wl\n"
            "import flagprism.profiler as profiler\n"
            "t = wl.gems_inputs()\n"
            "wl.gems_run(t)\n"
            f"sid = profiler.start({str(prof)!r})\n"
            "wl.gems_run(t)\n"
            "profiler.finalize(sid)\n")
    (tmp_path / "prof.py").write_text(body)
    r = subprocess.run([sys.executable, str(tmp_path / "prof.py")], capture_output=True, text=True,
                       timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    tree = json.loads((tmp_path / "gems.hatchet").read_text())[0]
    counts: dict[str, int] = {}

    def walk(n: dict[str, Any]) -> None:
        name = n.get("frame", {}).get("name", "")
        if n.get("frame", {}).get("type") == "function" or "count" in n.get("metrics", {}):
            counts[name] = counts.get(name, 0) + int(n.get("metrics", {}).get("count", 0))
        for c in n.get("children", []):
            walk(c)

    walk(tree)
    for name, n in want.items():
        assert counts.get(name, 0) >= n, (name, n, counts.get(name))


# ------------------------------------------------------------------------------------------------
# Liger-Kernel
# ------------------------------------------------------------------------------------------------


def test_liger_ops_clean_under_sanitize(dbg):
    _need("liger_kernel")
    t = wl.liger_inputs()
    bare = wl.liger_pass(t)
    dbg.activate(sanitize=True)
    got = wl.liger_pass(t)
    dbg.deactivate()
    _equal(got, bare)
    s = debugger.summary()
    assert s["totals"]["findings"] == 0, s["text"]
    assert s["totals"]["by_status"]["instrumented"] >= 9, s["text"]
    assert s["totals"]["by_status"]["failed"] == 0, s["text"]


def test_liger_clean_under_every_check(dbg):
    """Liger-Kernel forward and backward under bounds,nan,inf,domain: no finding."""
    _need("liger_kernel")
    t = wl.liger_inputs()
    bare = wl.liger_pass(t)
    dbg.activate(check="bounds,nan,inf,domain")
    got = wl.liger_pass(t)
    dbg.deactivate()
    for k in bare:
        torch.testing.assert_close(got[k], bare[k], rtol=1e-5, atol=1e-5, msg=k)
    s = debugger.summary()
    assert s["totals"]["findings"] == 0, s["text"]
    assert s["totals"]["by_status"]["instrumented"] >= 9, s["text"]
    assert s["totals"]["by_status"]["failed"] == 0, s["text"]


def test_liger_planted_bug_found_with_its_line(dbg, tmp_path, monkeypatch):
    """A copy of Liger's rms_norm.py with the mask of the row load removed, found at that line."""
    _need("liger_kernel")
    import importlib.util

    import liger_kernel.ops.rms_norm as rms

    src = Path(rms.__file__).read_text()
    good = "X_row = tl.load(x_base + col_offsets, mask=mask, other=0)"
    assert good in src, "Liger's rms_norm.py changed: update the planted line"
    planted = src.replace(good, "X_row = tl.load(x_base + col_offsets)", 1)
    line = planted.splitlines().index(next(ln for ln in planted.splitlines()
                                           if "X_row = tl.load(x_base + col_offsets)" in ln)) + 1
    path = tmp_path / "planted_rms_norm.py"
    path.write_text(planted)
    spec = importlib.util.spec_from_file_location("planted_rms_norm", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "planted_rms_norm", mod)
    spec.loader.exec_module(mod)
    x = torch.randn(64, 1000, device="cuda")  # 1000 columns in blocks of 1024: the last 24 lanes
    w = torch.randn(1000, device="cuda")
    dbg.activate(sanitize=True)
    mod.LigerRMSNormFunction.apply(x, w, 1e-6)
    torch.cuda.synchronize()
    dbg.deactivate()
    f = [f for f in debugger.summary()["json"]["findings"] if f["kind"] == "out_of_bounds"]
    assert f, debugger.summary()["text"]
    assert f[0]["line"] == line and f[0]["file"] == str(path) and f[0]["kernel"] == "_rms_norm_forward_kernel"


# ------------------------------------------------------------------------------------------------
# torch.compile
# ------------------------------------------------------------------------------------------------


def test_torch_compile_default_mode(dbg):
    torch._dynamo.reset()
    model, x = wl.compiled_block()
    with torch.no_grad():
        want = model(x).clone()
        dbg.activate(sanitize=True)
        got = model(x).clone()
        dbg.deactivate()
    assert torch.equal(got, want)
    ks = _kernels()
    inductor = {n: k for n, k in ks.items() if n.startswith("triton_")}
    assert inductor, debugger.summary()["text"]
    for n, k in inductor.items():
        assert k["instrumented"] == k["launches"], (n, k, debugger.summary()["text"])
    assert debugger.summary()["totals"]["findings"] == 0
    runs = dbg.take_exported_runs()
    assert {r["report"]["origin"]["launch_path"] for r in runs} == {"torch.compile (Inductor)"}
    torch._dynamo.reset()


def test_torch_compile_reduce_overhead_names_graph_launches(dbg):
    torch._dynamo.reset()
    model, x = wl.compiled_block(mode="reduce-overhead")
    with torch.no_grad():
        want = [model(x).clone() for _ in range(4)]
        torch._dynamo.reset()
        model, x = wl.compiled_block(mode="reduce-overhead")
        dbg.activate(sanitize=True)
        got = [model(x).clone() for _ in range(4)]
        torch.cuda.synchronize()
        dbg.deactivate()
    for a, b in zip(got, want):
        assert torch.equal(a, b)
    s = debugger.summary()
    reasons = [r["reason"] for k in s["json"]["kernels"] for r in k["not_instrumented"]]
    assert any("CUDA graph capture" in r for r in reasons), s["text"]
    assert any("replayed from a CUDA graph" in r for r in reasons), s["text"]
    torch._dynamo.reset()


@triton.jit
def _oob_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # planted: no mask
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


_OOB_LINE = _oob_scale.fn.__code__.co_firstlineno + 3


def test_user_triton_op_in_compiled_code_planted_oob(dbg):
    from torch.library import triton_op, wrap_triton

    @triton_op("fptest::oob_scale", mutates_args={})
    def oob_scale(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        wrap_triton(_oob_scale)[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        return out

    torch._dynamo.reset()
    f = torch.compile(lambda x: oob_scale(x) + 1)
    x = torch.randn(1000, device="cuda")
    dbg.activate(sanitize=True)
    y = f(x)
    torch.cuda.synchronize()
    dbg.deactivate()
    torch.testing.assert_close(y, x * 2 + 1)
    s = debugger.summary()
    fs = [f for f in s["json"]["findings"] if f["kernel"] == "_oob_scale"]
    assert fs and fs[0]["kind"] == "out_of_bounds" and fs[0]["line"] == _OOB_LINE, s["text"]
    k = _kernels()["_oob_scale"]
    assert k["instrumented"] >= 1, s["text"]
    torch._dynamo.reset()


# ------------------------------------------------------------------------------------------------
# CUDA graphs by hand, and a compiled kernel called directly
# ------------------------------------------------------------------------------------------------


def test_cuda_graph_capture_and_replay_are_listed(dbg):
    n = 4096
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    dbg.activate(sanitize=True)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vector_add.add_kernel[grid](x, x, out, n, BLOCK=1024)  # warm-up: observed
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        vector_add.add_kernel[grid](x, x, out, n, BLOCK=1024)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    dbg.deactivate()
    assert torch.equal(out, x + x)
    k = _kernels()["add_kernel"]
    assert k["instrumented"] == 1 and k["launches"] == 5, k
    why = {r["reason"].split(":")[0]: r["launches"] for r in k["not_instrumented"]}
    assert why.get("launched during CUDA graph capture") == 1, k
    assert sum(v for r, v in why.items() if r.startswith("replayed from a CUDA graph")) == 3, k


def test_compiled_kernel_called_directly_is_listed(dbg):
    n = 1000
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    k = vector_add.add_kernel.warmup(x, x, out, n, BLOCK=1024, grid=(1,))
    dbg.activate(sanitize=True)
    k[(1, 1, 1)](x, x, out, n, 1024)
    torch.cuda.synchronize()
    dbg.deactivate()
    assert torch.equal(out, x + x)
    ks = _kernels()
    (why,) = ks["add_kernel"]["not_instrumented"]
    assert why["status"] == "unobservable" and "does not hook" in why["reason"]
