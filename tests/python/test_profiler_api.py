# SPDX-License-Identifier: Apache-2.0
"""The Profiler's Python API on the Triton interpreter: sessions, nested scopes and states, scope
metrics, cpu_timed_scope, several sessions at once, deactivate/activate, the profile decorator,
argument checks and scope misuse errors. Trees are read back from the `.hatchet` files."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _profkernels as pk  # noqa: E402

import flagprism  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402


@pytest.fixture(autouse=True)
def clean(work_dir: Path):
    """Each test in a fresh directory; no session survives a test."""
    yield
    open_ids = [s["id"] for s in profiler.sessions()]
    for sid in open_ids:
        profiler.finalize(sid)
    assert not open_ids, f"test left sessions open: {open_ids}"


def meta(name: str) -> dict:
    return json.loads(Path(f"{name}.meta.json").read_text())


def test_start_finalize_outputs(work_dir: Path) -> None:
    x = torch.rand(3000)
    sid = profiler.start("out/run", estimates=False)
    assert isinstance(sid, int)
    assert [s["id"] for s in profiler.sessions()] == [sid]
    pk.add(x, x)
    paths = profiler.finalize()
    assert paths == ["out/run.hatchet", "out/run.meta.json"]
    assert profiler.sessions() == []
    tree = pk.read_tree("out/run.hatchet")
    k = tree[("add_kernel",)]
    assert k["count"] == 1 and k["time (ns)"] > 0
    assert k["device_type"] == "CPU" and k["device_id"] == "0"
    m = meta("out/run")
    assert m["session"]["backend"] == "host" and m["session"]["context"] == "shadow"
    assert m["counts"]["kernels"] == 1 and m["incomplete"] is False
    assert m["environment"]["triton"] == triton.__version__


def test_finalize_output_formats(work_dir: Path) -> None:
    profiler.start("both", estimates=False)
    assert profiler.finalize(output_format="hatchet,chrome_trace") == [
        "both.hatchet",
        "both.chrome_trace.json",
        "both.meta.json",
    ]
    profiler.start("bad", estimates=False)
    with pytest.raises(ValueError, match="unknown output format 'bogus'"):
        profiler.finalize(output_format="bogus")
    assert profiler.sessions() == []  # finalized all the same, and marked incomplete
    assert meta("bad")["incomplete_reasons"] == ["unknown output format requested"]


def test_nested_scopes_and_states(work_dir: Path) -> None:
    x = torch.rand(2048)
    profiler.start("p", estimates=False)
    with profiler.scope("outer"):
        pk.add(x, x)
        with profiler.scope("inner"):
            pk.add(x, x)
            pk.add(x, x)
            with profiler.state("fwd"):
                pk.scale(x, 2.0)
        profiler.enter_scope("manual")
        with profiler.state("bwd"):
            pk.scale(x, 3.0)
        profiler.exit_scope("manual")
    pk.add(x, x)
    profiler.finalize()
    ks = pk.kernels(pk.read_tree("p.hatchet"))
    assert {p: m["count"] for p, m in ks.items()} == {
        ("outer", "add_kernel"): 1,
        ("outer", "inner", "add_kernel"): 2,
        ("outer", "inner", "fwd", "scale_kernel"): 1,
        ("outer", "manual", "bwd", "scale_kernel"): 1,
        ("add_kernel",): 1,
    }
    m = meta("p")
    assert m["counts"]["kernels"] == 6 and m["counts"]["scopes"] == 3
    assert m["lost"]["unfinished_scopes"] == 0


def test_state_replaces_and_decorators(work_dir: Path) -> None:
    x = torch.rand(1024)

    @profiler.scope("deco")
    def step() -> None:
        pk.add(x, x)

    @profiler.state("st")
    def tagged() -> None:
        pk.add(x, x)

    profiler.start("p", estimates=False)
    step()
    step()
    tagged()
    profiler.enter_state("a")
    profiler.enter_state("b")  # states do not nest: b replaces a
    pk.add(x, x)
    profiler.exit_state()
    pk.add(x, x)
    profiler.finalize()
    ks = pk.kernels(pk.read_tree("p.hatchet"))
    assert {p: m["count"] for p, m in ks.items()} == {
        ("deco", "add_kernel"): 2,
        ("st", "add_kernel"): 1,
        ("b", "add_kernel"): 1,
        ("add_kernel",): 1,
    }


def test_scope_metrics_and_cpu_timed_scope(work_dir: Path) -> None:
    profiler.start("p", estimates=False)
    with profiler.scope("io", {"bytes": 1000, "flops16": 5}):
        with profiler.cpu_timed_scope("busy", {"items (pty)": 7}):
            sum(range(20000))
    profiler.enter_scope("late")
    profiler.exit_scope("late", metrics={"bytes": 24})
    with profiler.scope("io", {"bytes": 1}):
        pass
    profiler.finalize()
    tree = pk.read_tree("p.hatchet")
    assert tree[("io",)]["bytes"] == 1001 and tree[("io",)]["flops16"] == 5
    busy = tree[("io", "busy")]
    assert busy["cpu_time (ns)(exc)"] > 0
    assert busy["items (pty)"] == 7
    assert "cpu_time (ns)(exc)" not in tree[("io",)]
    assert tree[("late",)]["bytes"] == 24
    # The root lists summable metrics for Hatchet with its own (zero) value.
    assert tree[()]["bytes"] == 0


def test_metric_values_are_checked(work_dir: Path) -> None:
    profiler.start("p", estimates=False)
    with pytest.raises(TypeError, match="must be a number"):
        with profiler.scope("s", {"bytes": "many"}):
            pass
    with pytest.raises(TypeError, match="mapping"):
        profiler.enter_scope("t", metrics=[("bytes", 1)])  # type: ignore[arg-type]
    # Bad metrics are refused before the scope opens: nothing is left open.
    with pytest.raises(flagprism.Error, match="without a matching enter"):
        profiler.exit_scope()
    with pytest.raises(TypeError):
        profiler.scope("")
    profiler.finalize()


def test_multiple_sessions(work_dir: Path) -> None:
    x = torch.rand(2048)
    a = profiler.start("a", estimates=False)
    pk.add(x, x)
    with profiler.scope("s"):
        b = profiler.start("b", context="python", data="trace", estimates=False)
        pk.add(x, x)
    pk.add(x, x)
    assert profiler.finalize(b) == ["b.hatchet", "b.chrome_trace.json", "b.meta.json"]
    pk.add(x, x)
    assert profiler.finalize(a) == ["a.hatchet", "a.meta.json"]
    ka = pk.kernels(pk.read_tree("a.hatchet"))
    assert {p: m["count"] for p, m in ka.items()} == {("add_kernel",): 3, ("s", "add_kernel"): 1}
    kb = pk.kernels(pk.read_tree("b.hatchet"))
    assert sum(m["count"] for m in kb.values()) == 2
    # b started inside scope "s": it never saw it open, so its exit is counted, not an error.
    assert meta("b")["lost"]["exits_without_enter"] == 1
    for path in kb:  # pytest's own frames, this test's line, add()'s launch, the kernel
        assert path[-1] == "add_kernel", path
        assert path[-2] == f"{pk.__file__}:add@{pk.LINES['add']}"
        assert re.fullmatch(r".*test_profiler_api\.py:test_multiple_sessions@\d+", path[-3]), path
        assert "s" not in path


def test_deactivate_activate(work_dir: Path) -> None:
    x = torch.rand(2048)
    profiler.start("a", estimates=False)
    b = profiler.start("b", estimates=False)
    pk.add(x, x)
    profiler.deactivate(b)
    assert [s["active"] for s in profiler.sessions()] == [True, False]
    with profiler.scope("while_b_off"):
        pk.add(x, x)
        profiler.activate(b)
        pk.add(x, x)  # b is active again inside a scope it saw open
    profiler.deactivate()  # all
    pk.add(x, x)
    profiler.activate()
    pk.add(x, x)
    profiler.finalize()
    ka = {p: m["count"] for p, m in pk.kernels(pk.read_tree("a.hatchet")).items()}
    kb = {p: m["count"] for p, m in pk.kernels(pk.read_tree("b.hatchet")).items()}
    assert ka == {("add_kernel",): 2, ("while_b_off", "add_kernel"): 2}
    assert kb == {("add_kernel",): 2, ("while_b_off", "add_kernel"): 1}
    assert meta("a")["lost"]["ignored_while_inactive"] == 1
    assert meta("b")["lost"]["ignored_while_inactive"] == 2
    assert meta("b")["lost"]["exits_without_enter"] == 0


def test_deactivated_session_counts_scope_exits_as_ignored(work_dir: Path) -> None:
    """A scope that closes while its session is paused is dropped and counted in
    lost.ignored_while_inactive (docs/formats/profiler-formats.md), like a launch made then."""
    x = torch.rand(2048)
    profiler.start("c", estimates=False)
    with profiler.scope("closes_while_off"):
        pk.add(x, x)
        profiler.deactivate()
        pk.add(x, x)  # ignored: 1
    # the scope's exit: ignored: 2
    profiler.activate()
    profiler.finalize()
    assert meta("c")["lost"]["ignored_while_inactive"] == 2
    assert meta("c")["counts"]["kernels"] == 1


def test_profile_decorator(work_dir: Path) -> None:
    x = torch.rand(1024)

    def work(n: int) -> int:
        for _ in range(n):
            pk.add(x, x)
        return n

    assert profiler.profile(work, name="deco")(3) == 3
    assert profiler.sessions() == []
    assert pk.kernels(pk.read_tree("deco.hatchet"))[("add_kernel",)]["count"] == 3

    @profiler.profile(name="deco2", context="python")
    def failing() -> None:
        pk.add(x, x)
        raise KeyError("boom")

    with pytest.raises(KeyError):
        failing()
    assert profiler.sessions() == []
    assert meta("deco2")["counts"]["kernels"] == 1


def _cuda_device() -> bool:
    """Whether PyTorch sees a CUDA device, TRITON_INTERPRET or not."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available()) and torch.version.hip is None


def test_start_arguments(work_dir: Path) -> None:
    with pytest.raises(ValueError, match="context"):
        profiler.start("x", context="pyton")
    with pytest.raises(ValueError, match="data"):
        profiler.start("x", data="timeline")
    with pytest.raises(ValueError, match="hook"):
        profiler.start("x", hook="launch")
    with pytest.raises(ValueError, match="unknown profiler backend 'nope'"):
        profiler.start("x", backend="nope")
    # Without a CUDA GPU the CUPTI backend exists but says why it cannot run (no libcupti, or
    # no CUDA driver), and nothing is left open. With one (TRITON_INTERPRET=1 on a GPU machine)
    # it starts, and finalize closes it.
    if _cuda_device():
        profiler.finalize(profiler.start("x", backend="cupti"))
    else:
        with pytest.raises(
            flagprism.NotSupportedError, match="the CUPTI backend cannot run: "
        ) as ei:
            profiler.start("x", backend="cupti")
        assert ei.value.status_name == "FP_ENOTSUP"
    with pytest.raises(ValueError, match="no open profiling session 12345"):
        profiler.finalize(12345)
    with pytest.raises(ValueError, match="no open profiling session"):
        profiler.activate(777)
    assert profiler.sessions() == []
    sid = profiler.start("x", backend="null")
    assert profiler.sessions()[0]["backend"] == "null"
    profiler.finalize(sid)


def test_scope_misuse_errors(work_dir: Path) -> None:
    with pytest.raises(flagprism.Error, match="without a matching enter") as ei:
        profiler.exit_scope("never")
    assert ei.value.status_name == "FP_ESTATE"
    sid = profiler.start("p", estimates=False)
    with pytest.raises(flagprism.Error, match="scope exit without a matching enter"):
        profiler.exit_scope()
    profiler.enter_scope("a")
    profiler.enter_scope("b")
    with pytest.raises(
        flagprism.Error, match="scope exit 'a' does not match the innermost open scope 'b'"
    ) as ei:
        profiler.exit_scope("a")
    assert ei.value.status_name == "FP_ESTATE"
    # Nothing changed: b then a still close cleanly.
    assert profiler.depth(sid) == 2
    profiler.exit_scope("b")
    profiler.exit_scope("a")
    assert profiler.depth(sid) == 0
    with pytest.raises(flagprism.Error, match="without a matching enter on this thread in session"):
        profiler.exit_scope("a", session=sid)
    # Misuse through the context manager too.
    with pytest.raises(flagprism.Error, match="does not match"):
        with profiler.scope("x"):
            profiler.enter_scope("y")
    profiler.exit_scope("y")
    profiler.exit_scope("x")
    profiler.finalize()
    m = meta("p")
    assert m["lost"]["unfinished_scopes"] == 0 and m["incomplete"] is False
    assert m["counts"]["scopes"] == 4


def test_scopes_without_a_session_are_paired(work_dir: Path) -> None:
    # No session: scopes cost nothing but are still checked.
    with profiler.scope("free"):
        pass
    with pytest.raises(flagprism.Error, match="does not match"):
        profiler.enter_scope("p")
        profiler.exit_scope("q")
    profiler.exit_scope("p")


def test_unfinished_scope_is_reported(work_dir: Path) -> None:
    profiler.start("p", estimates=False)
    profiler.enter_scope("left_open")
    profiler.finalize()
    m = meta("p")
    assert m["incomplete"] is True
    assert m["lost"]["unfinished_scopes"] == 1
    profiler.exit_scope("left_open")  # still paired for the thread
