# SPDX-License-Identifier: Apache-2.0
"""The Debugger on the ways real programs launch kernels, on the interpreter: an operator library
that serves PyTorch's own operators with Triton kernels (as FlagGems does) must not make the
Debugger re-enter itself, and its kernels are checked like any other; torch.compile's Inductor
kernels are observed through CachingAutotuner; the summary lists every kernel launched, with the
reason for every launch not instrumented; `flagprism debug --strict` fails on a launch it could
not observe; a kernel that raises is named with its exception. GPU-only paths (FlagGems itself,
CUDA graphs, compiled kernels called directly) are in tests/gpu/test_launch_paths_gpu.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from kernels import planted, vector_add

from flagprism import debugger

S = debugger


@triton.jit
def _lib_fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


class FakeOpLibrary:
    """Serves aten::zeros and aten::zero_ on the CPU with a Triton kernel, as FlagGems serves
    them on a GPU (use_gems())."""

    def __init__(self) -> None:
        self.calls = 0
        self.lib = torch.library.Library("aten", "IMPL")
        with warnings.catch_warnings():
            # replacing ATen's kernels is the point (FlagGems does it); torch says so once
            warnings.filterwarnings("ignore", "Warning only once for all operators", UserWarning)
            self.lib.impl("zeros", self.zeros, "CPU")
            self.lib.impl("zero_", self.zero_, "CPU")

    def _fill(self, out: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        n = out.numel()
        _lib_fill[(triton.cdiv(max(n, 1), 64),)](out, n, BLOCK=64)
        return out

    def zeros(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
        return self._fill(torch.empty(size, dtype=dtype or torch.float32, device=device))

    def zero_(self, t):
        return self._fill(t)

    def close(self) -> None:
        self.lib._destroy()


@pytest.fixture
def oplib():
    lib = FakeOpLibrary()
    yield lib
    lib.close()


def _summary_kernels() -> dict[str, dict]:
    return {k["name"]: k for k in debugger.summary()["json"]["kernels"]}


def test_operator_library_served_by_triton_no_reentry(dbg, oplib):
    """The Debugger's own record buffers never go through the operator library; the library's
    kernels launched by the user's own torch.zeros are checked like any kernel; results are the
    same as without the Debugger."""
    x = torch.randn(300)
    want = x + x
    dbg.activate(sanitize=True)
    dbg.reset_summary()
    out = torch.zeros(300)  # the user's call: served by the library's Triton kernel
    assert oplib.calls == 1
    vector_add.add_kernel[(3,)](x, x, out, 300, BLOCK=128)
    dbg.deactivate()
    assert oplib.calls == 1  # nothing FlagPrism did for itself reached the library
    assert torch.equal(out, want)
    ks = _summary_kernels()
    assert ks["_lib_fill"]["instrumented"] == 1 and ks["add_kernel"]["instrumented"] == 1
    assert debugger.summary()["totals"]["findings"] == 0


def test_markers_mode_lists_unmarked_kernels_with_reason(dbg, oplib):
    dbg.activate()  # marker mode
    dbg.reset_summary()
    out = torch.zeros(100)
    x = torch.randn(100)
    vector_add.add_kernel[(1,)](x, x, out, 100, BLOCK=128)  # has markers
    planted.BY_NAME  # noqa: B018 - the module imports cleanly
    ks = _summary_kernels()
    assert ks["add_kernel"]["instrumented"] == 1
    (why,) = ks["_lib_fill"]["not_instrumented"]
    assert why["status"] == "excluded" and "markers" in why["reason"] and why["launches"] == 1
    text = debugger.summary()["text"]
    assert "_lib_fill: 1 launch excluded: no fpl.collect_start()" in text


def test_unreadable_source_is_listed_as_failed(dbg, tmp_path, monkeypatch):
    src = tmp_path / "gone_kernel.py"
    src.write_text(
        textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def gone(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import gone_kernel

    src.unlink()
    import linecache

    linecache.clearcache()
    x = torch.zeros(16)
    dbg.activate(sanitize=True)
    dbg.reset_summary()
    with pytest.warns(RuntimeWarning, match="runs unobserved"):
        gone_kernel.gone[(1,)](x, 16, BLOCK=16)
    assert torch.equal(x, torch.ones(16))  # it still ran
    (why,) = _summary_kernels()["gone"]["not_instrumented"]
    assert why["status"] == "failed" and "source" in why["reason"]
    sys.modules.pop("gone_kernel", None)


def test_torch_compile_kernels_are_observed(dbg, inductor_on_interpreter, monkeypatch, tmp_path):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()

    def block(x, w):
        return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, (64,)) @ w)

    x = torch.randn(32, 64)
    w = torch.randn(64, 64)
    want = torch.compile(block)(x, w)
    torch._dynamo.reset()
    dbg.activate(sanitize=True)
    dbg.reset_summary()
    got = torch.compile(block)(x, w)
    dbg.deactivate()
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    ks = _summary_kernels()
    inductor = {n: k for n, k in ks.items() if n.startswith("triton_")}
    assert len(inductor) >= 2, ks
    for name, k in inductor.items():
        assert k["instrumented"] == k["launches"] >= 1, (name, k)
        assert (k["source_file"] or "").startswith(str(tmp_path / "inductor")), k
    assert debugger.summary()["totals"]["findings"] == 0
    runs = dbg.take_exported_runs()
    from _refdecode import launch_info

    assert {launch_info(r)["launch_path"] for r in runs} == {"torch.compile (Inductor)"}
    torch._dynamo.reset()


def test_torch_compile_kernels_without_their_function(
    dbg, inductor_on_interpreter, monkeypatch, tmp_path
):
    """Kernels Inductor compiled in a worker process or loaded from its cache have their
    JITFunction's Python function dropped (CachingAutotuner.prepare_for_pickle): the Debugger
    takes it back from the kernel's generated file and observes them like the others."""
    import gc

    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()

    def block(x):
        return torch.nn.functional.gelu(x * 2.0 + 1.0).sum(-1)

    x = torch.randn(16, 32)
    compiled = torch.compile(block)
    want = compiled(x)
    tuners = []
    for o in gc.get_objects():
        try:
            # type(), not isinstance(): that reads __class__, which deprecated objects among
            # them (torch.distributed.reduce_op, torch.jit's) answer with a warning
            if issubclass(type(o), CachingAutotuner) and str(o.filename or "").startswith(
                str(tmp_path / "inductor")
            ):
                tuners.append(o)
        except ReferenceError:  # a dead weak proxy among the objects
            continue
    assert tuners
    for t in tuners:
        t.fn.fn = None  # what prepare_for_pickle leaves
    dbg.activate(sanitize=True)
    dbg.reset_summary()
    got = compiled(x)
    dbg.deactivate()
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    inductor = {n: k for n, k in _summary_kernels().items() if n.startswith("triton_")}
    assert len(inductor) == len({t.inductor_meta.get("kernel_name") for t in tuners}), inductor
    for name, k in inductor.items():
        assert k["instrumented"] == k["launches"] >= 1, (name, k, debugger.summary()["text"])
    torch._dynamo.reset()


def test_dropped_user_kernel_taken_back_by_its_own_name(tmp_path):
    """A user's kernel in compiled code (a triton_op) whose function Inductor dropped (compiled
    in a worker process, loaded from its cache) is defined in its file under its own name, while
    its kernel name has a suffix (_user_scale_0): it is taken back by either name; a file with
    neither says both."""
    from types import SimpleNamespace

    from flagprism import _paths

    path = tmp_path / "user_kernel.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def _user_scale(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n"
    )
    dropped = SimpleNamespace(fn=None, __name__="_user_scale")
    tuner = SimpleNamespace(filename=str(path), inductor_meta={"kernel_name": "_user_scale_0"})
    got = _paths._restore_inductor_fn(tuner, dropped)
    assert _paths.kernel_name(got) == "_user_scale" and got.fn is not None
    other = tmp_path / "other.py"
    other.write_text(path.read_text().replace("_user_scale", "_renamed"))
    tuner = SimpleNamespace(filename=str(other), inductor_meta={"kernel_name": "_user_scale_0"})
    with pytest.raises(
        _paths.Unsupported, match="no @triton.jit function _user_scale_0 or _user_scale"
    ):
        _paths._restore_inductor_fn(tuner, dropped)


# ------------------------------------------------------------------------------------------------
# The CLI
# ------------------------------------------------------------------------------------------------

GONE_SCRIPT = textwrap.dedent("""\
    import linecache, os, sys, tempfile
    import torch, triton, triton.language as tl
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "gone2.py"), "w") as f:
        f.write("import triton\\nimport triton.language as tl\\n@triton.jit\\n"
                "def gone2(x_ptr, n, BLOCK: tl.constexpr):\\n"
                "    offs = tl.arange(0, BLOCK)\\n"
                "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\\n")
    sys.path.insert(0, d)
    import gone2
    os.unlink(os.path.join(d, "gone2.py"))
    linecache.clearcache()
    x = torch.zeros(16)
    gone2.gone2[(1,)](x, 16, BLOCK=16)
    print("sum", float(x.sum()))
    """)

RAISING_SCRIPT = textwrap.dedent("""\
    import torch, triton, triton.language as tl
    import flagprism.language as fpl

    @triton.jit
    def shaped(x_ptr, BLOCK: tl.constexpr):
        fpl.collect_start()
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.reshape(x, (3, 5))
        tl.store(x_ptr + offs, x)
        fpl.collect_end()

    shaped[(1,)](torch.zeros(16), BLOCK=16)
    """)


def _debug(cli: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable, TRITON_INTERPRET="1")
    return subprocess.run(
        [str(cli), "debug", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


def test_cli_strict_fails_on_unobserved_launch(cli, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(GONE_SCRIPT)
    r = _debug(cli, "--sanitize", "-o", "rep", str(script), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "sum 16.0" in r.stdout
    assert "gone2: 1 launch failed: cannot instrument" in r.stderr, r.stderr
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert summary["totals"]["failed"] == 1 and summary["exit_status"] == 0
    r = _debug(cli, "--sanitize", "--strict", "-o", "rep", str(script), cwd=tmp_path)
    assert r.returncode == 4, r.stderr
    assert "--strict: 1 launch(es) could not be observed" in r.stderr


def test_cli_kernel_that_raises_is_named(cli, tmp_path):
    script = tmp_path / "raise.py"
    script.write_text(RAISING_SCRIPT)
    r = _debug(cli, "-o", "rep", str(script), cwd=tmp_path)
    assert r.returncode == 1
    assert "shaped: 1 launch failed: the launch raised" in r.stderr, r.stderr
    assert "no kernel with fpl.collect_start()" not in r.stderr
    r = _debug(cli, "--export-on-error", "-o", "rep2", str(script), cwd=tmp_path)
    assert r.returncode == 1
    assert "partial records: " in r.stderr, r.stderr
    (rep,) = [
        p for p in (tmp_path / "rep2").glob("raise_shaped_*_run*.json") if "op_log" not in p.name
    ]
    j = json.loads(rep.read_text())
    assert j["complete"] is False and "partial_reason" in j and j["partial_reason"]
    txt = rep.with_suffix(".txt").read_text()
    assert "status:          INCOMPLETE" in txt and "the launch raised" in txt


def test_torch_compile_dynamic_sizes_get_their_own_grids(
    dbg, inductor_on_interpreter, monkeypatch, tmp_path
):
    """One Inductor kernel launched with different sizes (dynamic shapes): the translation works
    out its parameters once per kernel and config, and the grid once per distinct size, and
    every launch gets its own."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()

    def f(x):
        return torch.nn.functional.gelu(x) * 2 + 1

    sizes = (1000, 3000, 1000, 5000)
    xs = [torch.randn(n) for n in sizes]
    want = [f(x) for x in xs]
    g = torch.compile(f, dynamic=True)
    for x in xs:
        g(x)  # compile outside the Debugger
    dbg.activate(sanitize=True)
    dbg.reset_summary()
    got = [g(x) for x in xs]
    dbg.deactivate()
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    runs = dbg.take_exported_runs()
    assert len(runs) == len(sizes) and len({r["kernel"] for r in runs}) == 1
    from _refdecode import launch_info

    cx = {a["name"]: a["value"] for a in launch_info(runs[0])["args"] if a["kind"] == "constexpr"}
    block = cx["XBLOCK"]
    assert [r["grid"] for r in runs] == [[-(-n // block), 1, 1] for n in sizes]
    assert debugger.summary()["totals"]["findings"] == 0
    torch._dynamo.reset()


def test_cuda_graph_tree_warm_up_launches_are_listed_not_instrumented(dbg):
    """torch.compile's CUDA graph trees (mode="reduce-overhead") run the compiled graph once to
    warm up, with every allocation going to the graph's private memory pool; PyTorch fails the run
    when a tensor there outlives it, so the Debugger must not allocate its record buffers there:
    launches inside CUDAWarmupNode.run are listed as unobservable with the reason, and launches
    after it are instrumented again."""
    import importlib

    from flagprism import _intercept

    x = torch.randn(300)
    out = torch.empty_like(x)

    def launch():
        vector_add.add_kernel[(triton.cdiv(300, 128),)](x, x, out, 300, BLOCK=128)

    dbg.activate(sanitize=True)
    dbg.reset_summary()
    trees = importlib.import_module("torch._inductor.cudagraph_trees")
    assert _intercept.installed("cudagraph.warmup") and "debugger" in _intercept.names(
        "cudagraph.warmup"
    ), _intercept.status()
    assert trees.CUDAWarmupNode.run is not _intercept.original("cudagraph.warmup")
    S._graph_warmup(lambda _node: launch(), None)
    torch.testing.assert_close(out, x + x)
    launch()
    dbg.deactivate()
    k = _summary_kernels()["add_kernel"]
    assert k["launches"] == 2 and k["instrumented"] == 1, k
    (why,) = k["not_instrumented"]
    assert why["status"] == "unobservable" and "warm-up run" in why["reason"], why
    assert "memory pool" in why["reason"]
