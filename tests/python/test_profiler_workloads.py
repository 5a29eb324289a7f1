# SPDX-License-Identifier: Apache-2.0
"""The Profiler on real workloads, on Triton's interpreter: torch.compile's kernels with their
call paths, model lines and ATen ops; C++ kernel names shown short; launches FlagPrism makes for
itself; no warnings of our own; scopes above their kernels in python context; and what `view`,
`diff` and `merge` make of such profiles (rates from estimates, empty nodes, sum or mean).
The GPU side (CUPTI, Liger-Kernel, CUDA graphs) is tests/gpu/test_profiler_workloads_gpu.py."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import _profkernels as pk
import pytest
import torch

import flagprism.profiler as profiler
from flagprism import _ext, _intercept, _profhook, _profinductor

ABS_MANGLED = (
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEE"
    "viT0_T1_"
)
ABS_FULL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
    "std::array<char*, 2ul> >(int, at::native::AbsFunctor<float>, std::array<char*, 2ul>)"
)
ABS_SHORT = "at::native::vectorized_elementwise_kernel<...>"


def _meta(stem: str) -> dict[str, Any]:
    return json.loads(Path(f"{stem}.meta.json").read_text())


def _strings(tree_path: str | Path) -> dict[tuple[str, ...], dict[str, str]]:
    return {
        p: {k: v for k, v in m.items() if isinstance(v, str)}
        for p, m in pk.read_tree(tree_path).items()
    }


# ------------------------------------------------------------------------------------------------
# torch.compile on the interpreter
# ------------------------------------------------------------------------------------------------


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64, 64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.layer_norm(x, (64,))  # LINE_NORM
        h = h @ self.w
        return torch.nn.functional.gelu(h) * 2  # LINE_GELU


def _line(marker: str) -> int:
    return next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if marker in t)


def test_torch_compile_kernels_have_call_paths_and_model_lines(
    work_dir: Path, inductor_on_interpreter: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(work_dir / "inductor"))
    torch._dynamo.reset()
    _profinductor.forget()
    block = Block()
    x = torch.randn(32, 64)
    compiled = torch.compile(block)
    with torch.no_grad():
        want = compiled(x)  # compiled before the session: the origin is read at run time
        profiler.start("py", context="python", data="trace")
        profiler.start("sh", context="shadow")
        with profiler.scope("fwd", {"flops": 1.0}):
            call_line = sys._getframe().f_lineno + 1
            got = compiled(x)
        profiler.finalize()
    torch.testing.assert_close(got, want)
    torch._dynamo.reset()
    assert _profinductor.stats["launches"] == 2 and _profinductor.stats["no_origin"] == 0

    gelu = f"{__file__}:forward@{_line('# LINE_GELU')}"
    norm = f"{__file__}:forward@{_line('# LINE_NORM')}"
    ks = pk.kernels(pk.read_tree("py.hatchet"))
    assert len(ks) == 2, list(ks)
    me = f"{__file__}:test_torch_compile_kernels_have_call_paths_and_model_lines@{call_line}"
    for path in ks:
        # ROOT / scope / the program's frames (pytest's, this test's, the module's forward; none
        # of PyTorch's) / the generated call() / the model line / kernel
        assert path[0] == "fwd"
        assert path[-5] == me, path
        assert path[-4].startswith(f"{__file__}:forward@"), path
        assert path[-3].startswith(str(work_dir / "inductor")) and ":call@" in path[-3]
        assert not any("/torch/" in f for f in path), path
    by_kernel = {p[-1]: p for p in ks}
    assert by_kernel["triton_poi_fused_gelu_mul_1"][-2] == gelu
    assert by_kernel["triton_per_fused_native_layer_norm_0"][-2] == norm
    # the scope's own metric sits above the kernels' time (no separate branch)
    tree = pk.read_tree("py.hatchet")
    assert list(p for p in tree if len(p) == 1) == [("fwd",)]
    assert tree[("fwd",)]["flops"] == 1.0

    # shadow context: no frames, the origin as node metadata
    sh = _strings("sh.hatchet")
    gelu_k = sh[("fwd", "triton_poi_fused_gelu_mul_1")]
    assert gelu_k["aten_ops"] == "aten.gelu, aten.mul"
    assert gelu_k["source_nodes"] == "gelu, mul"
    assert gelu_k["source_lines"] == (
        f"{__file__}:{_line('# LINE_GELU')} in forward: "
        "return torch.nn.functional.gelu(h) * 2  # LINE_GELU"
    )
    assert (
        sh[("fwd", "triton_per_fused_native_layer_norm_0")]["aten_ops"] == "aten.native_layer_norm"
    )

    # the trace's kernel slices carry the same
    events = json.loads(Path("py.chrome_trace.json").read_text())["traceEvents"]
    slices = [e for e in events if e.get("cat") == "kernel"]
    assert {e["name"] for e in slices} == {
        "triton_poi_fused_gelu_mul_1",
        "triton_per_fused_native_layer_norm_0",
    }
    for e in slices:
        assert "aten_ops" in e["args"] and "source_lines" in e["args"], e
        assert "full_name" not in e["args"]  # a Triton name is shown as it is


def test_graph_replay_carries_the_replaying_call_path(work_dir: Path) -> None:
    """CUDAGraph.replay's interceptor (no CUDA here: the interceptor alone): the replay runs
    with the caller's call path as the thread's, and the previous one comes back."""
    seen: list[int] = []
    profiler.start("g")
    try:
        here = _ext.prof_callpath_id()
        _profinductor._graph_replay(lambda self: seen.append(_ext.prof_callpath_id()), object())
        assert _ext.prof_callpath_override(None) is None  # restored
    finally:
        profiler.finalize()
    assert len(seen) == 1
    assert _ext.prof_callpath_frames(seen[0])[:-1] == _ext.prof_callpath_frames(here)[:-1]
    # outside any session the interceptor does nothing
    _profinductor._graph_replay(lambda self: seen.append(-1), object())
    assert seen[-1] == -1


# ------------------------------------------------------------------------------------------------
# FlagPrism's own launches, warnings, scopes in python context
# ------------------------------------------------------------------------------------------------


def test_internal_launches_are_dropped_and_counted(work_dir: Path) -> None:
    profiler.start("own")
    with _intercept.internal():
        _ext.prof_host_launch(None, "record_buffer_zero", (1,), 0, 10)
        pk.add(torch.rand(64), torch.rand(64))  # interpreted, inside the mark
    pk.add(torch.rand(64), torch.rand(64))
    profiler.finalize()
    ks = pk.kernels(pk.read_tree("own.hatchet"))
    assert list(ks) == [("add_kernel",)] and ks[("add_kernel",)]["count"] == 1
    assert _meta("own")["lost"]["flagprism_internal_launches"] == 1
    with pytest.raises(ValueError):
        _ext.internal_mark(-1)  # below 0: refused, nothing changed
    assert _ext.internal_mark(1) == 1 and _ext.internal_mark(-1) == 0


class _Noisy:
    """Like torch.distributed.reduce_op: any attribute read warns."""

    def __getattribute__(self, key: str) -> Any:
        warnings.warn("reading an attribute of _Noisy", FutureWarning, stacklevel=2)
        return object.__getattribute__(self, key)


def test_scanning_for_kernels_touches_no_other_object() -> None:
    noisy = _Noisy()
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = _profhook.jit_functions()
    from triton.runtime.jit import JITFunction

    # (on the interpreter user kernels are InterpretedFunctions; Triton's own helpers are not)
    assert found and all(isinstance(f, JITFunction) for f in found) and noisy is not None


def test_start_and_finalize_print_no_warning(work_dir: Path) -> None:
    noisy = _Noisy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profiler.start("quiet", context="python", hook="triton")
        pk.add(torch.rand(64), torch.rand(64))
        profiler.finalize()
    assert noisy is not None


# ------------------------------------------------------------------------------------------------
# C++ names, view, diff, merge
# ------------------------------------------------------------------------------------------------


def test_cpp_kernel_names_in_tree_trace_and_view(work_dir: Path, cli: Path) -> None:
    profiler.start("cpp", data="trace", backend="host")
    _ext.prof_host_launch(None, ABS_MANGLED, (4,), 100, 300)
    _ext.prof_host_launch(None, ABS_MANGLED, (4,), 400, 500)
    profiler.finalize()
    tree = pk.read_tree("cpp.hatchet")
    assert tree[(ABS_FULL,)]["count"] == 2
    assert tree[(ABS_FULL,)]["mangled_name"] == ABS_MANGLED
    slices = [
        e
        for e in json.loads(Path("cpp.chrome_trace.json").read_text())["traceEvents"]
        if e.get("cat") == "kernel"
    ]
    assert [e["name"] for e in slices] == [ABS_SHORT, ABS_SHORT]
    assert slices[0]["args"]["full_name"] == ABS_FULL
    assert slices[0]["args"]["mangled_name"] == ABS_MANGLED

    def view(*args: str) -> str:
        r = subprocess.run([str(cli), *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = view("view", "-m", "count", "cpp.hatchet")
    assert f"└─ {ABS_SHORT}\n" in out and "_ZN2at" not in out
    assert f"└─ {ABS_FULL}\n" in view("view", "-m", "count", "--full-names", "cpp.hatchet")
    assert ABS_SHORT in view("diff", "-m", "count", "cpp.hatchet", "cpp.hatchet")
    # a profile that kept the mangled name as the frame (another tool's, an older one's)
    doc = json.loads(Path("cpp.hatchet").read_text())
    doc[0]["children"][0]["frame"]["name"] = ABS_MANGLED
    Path("old.hatchet").write_text(json.dumps(doc))
    assert f"└─ {ABS_SHORT}\n" in view("view", "-m", "count", "old.hatchet")
    assert "--full-names" in view("view", "--help")


def test_view_rates_without_launch_metadata(work_dir: Path, cli: Path) -> None:
    """The README's `view -m time/ms,gbyte/s` on a profile made without launch_metadata."""
    profiler.start("plain")
    pk.add(torch.rand(4096), torch.rand(4096), kernel=pk.add_plain)
    with profiler.scope("nothing_here"):
        pass
    profiler.finalize()
    r = subprocess.run(
        [str(cli), "view", "-m", "time/ms,gbyte/s", "plain.hatchet"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert "note: gbyte/s: no measured bytes in this profile" in r.stdout
    assert "est_bytes" in r.stdout
    # the scope that got nothing is not shown
    assert "nothing_here" not in r.stdout
    assert "1 node without any metric value in its subtree hidden" in r.stdout
    bad = subprocess.run(
        [str(cli), "view", "-m", "tflop16/s", "plain.hatchet"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "est_tflop/s" in bad.stderr


def test_merge_sum_and_mean(work_dir: Path, cli: Path) -> None:
    for name, n in (("r0", 1), ("r1", 3)):
        profiler.start(name)
        for _ in range(n):
            pk.add(torch.rand(64), torch.rand(64), kernel=pk.add_plain)
        profiler.finalize()
    for op, count, what in (("sum", 4, "sum of 2 profiles"), ("mean", 2, "mean of 2 profiles")):
        r = subprocess.run(
            [
                str(cli),
                "merge",
                "-q",
                "--op",
                op,
                "-o",
                f"{op}.hatchet",
                "r0.hatchet",
                "r1.hatchet",
            ],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        tree = pk.read_tree(f"{op}.hatchet")
        assert tree[("add_plain",)]["count"] == count
        assert tree[()]["merged"] == what
    r = subprocess.run(
        [str(cli), "merge", "--op", "max", "-o", "x.hatchet", "r0.hatchet"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "'mean' or 'sum'" in r.stderr
