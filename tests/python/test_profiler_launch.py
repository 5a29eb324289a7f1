# SPDX-License-Identifier: Apache-2.0
"""What the Profiler records per launch on the Triton interpreter: Triton launch metadata
(hook="triton"), IR estimates (est_bytes/est_flops against the TTIR estimate x grid), Python call
paths read in C (exact frames), concurrent launches from threads (exact counts), and living next
to the Debugger."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _profkernels as pk  # noqa: E402
import trace_event_check  # noqa: E402

import flagprism.profiler as profiler  # noqa: E402
from flagprism import _ext, _profhook, _ttir  # noqa: E402

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def clean(work_dir: Path):
    yield
    open_ids = [s["id"] for s in profiler.sessions()]
    for sid in open_ids:
        profiler.finalize(sid)
    assert not open_ids, f"test left sessions open: {open_ids}"


def meta(name: str) -> dict:
    return json.loads(Path(f"{name}.meta.json").read_text())


def test_launch_metadata_hook(work_dir: Path) -> None:
    a, b = torch.rand(3000), torch.rand(5000)
    profiler.start("hooked", hook="triton", estimates=False)
    profiler.start("plain", estimates=False)
    pk.add(a, a)
    pk.add(a, a)
    pk.add(b, b)
    pk.add(b, b, pk.add_plain)  # no launch_metadata function: nothing to add
    profiler.finalize()
    hk = pk.kernels(pk.read_tree("hooked.hatchet"))
    assert set(hk) == {("add_kernel[n=3000]",), ("add_kernel[n=5000]",), ("add_plain",)}
    m3 = hk[("add_kernel[n=3000]",)]
    assert (m3["count"], m3["bytes"], m3["flops32"]) == (2, 2 * 3 * 4 * 3000, 2 * 3000)
    m5 = hk[("add_kernel[n=5000]",)]
    assert (m5["count"], m5["bytes"], m5["flops32"]) == (1, 3 * 4 * 5000, 5000)
    assert "bytes" not in hk[("add_plain",)]
    pl = pk.kernels(pk.read_tree("plain.hatchet"))
    assert {p: m["count"] for p, m in pl.items()} == {("add_kernel",): 3, ("add_plain",): 1}
    assert all("bytes" not in m and "flops32" not in m for m in pl.values())
    assert meta("hooked")["session"]["hook"] == "triton"


def test_launch_metadata_errors_propagate(work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def bad(grid, metadata, args):  # noqa: ANN001, ANN202
        return {"bytes": "lots"}

    from flagprism import compat

    # the decorator's options (InterpretedFunction.kwargs; its rewriter's on Triton 3.4)
    monkeypatch.setitem(compat.interpreted_options(pk.add_kernel), "launch_metadata", bad)
    profiler.start("p", hook="triton", estimates=False)
    with pytest.raises(TypeError, match="launch metadata 'bytes' must be a number"):
        pk.add(torch.rand(10), torch.rand(10))
    profiler.finalize()


def _expected_estimate(n: int) -> tuple[float, float, int]:
    """(bytes, flops) per program from the kernel's own TTIR, and the number of programs."""
    x = torch.rand(n)
    bound = {"x_ptr": x, "y_ptr": x, "out_ptr": x, "n_elements": n, "BLOCK_SIZE": pk.BLOCK}
    text, reason = _ttir.interpreter_ttir(pk.add_kernel.fn, bound)
    assert text is not None, reason
    est = _ext.ttir_estimate(text)
    return float(est["bytes"]), float(est["total_flops"]), triton.cdiv(n, pk.BLOCK)


def test_estimates_equal_ttir_estimate_times_grid(work_dir: Path) -> None:
    per_bytes, per_flops, programs = _expected_estimate(5000)
    # docs/internals/ir-estimates.md, worked example: two 1024 x fp32 loads and one store, one add.
    assert (per_bytes, per_flops) == (3 * 1024 * 4, 1024)
    x = torch.rand(5000)
    profiler.start("est")
    pk.add(x, x)
    pk.add(x, x)
    profiler.finalize()
    k = pk.kernels(pk.read_tree("est.hatchet"))[("add_kernel",)]
    assert k["count"] == 2
    assert k["est_bytes"] == 2 * per_bytes * programs == 2 * 5 * 12288
    assert k["est_flops"] == 2 * per_flops * programs == 2 * 5 * 1024
    note = meta("est")["environment"]["estimate:add_kernel"]
    assert note.startswith("per program: bytes=12288") and "upper bound" in note


def test_estimates_follow_the_grid(work_dir: Path) -> None:
    profiler.start("grid")
    pk.add(torch.rand(1000), torch.rand(1000))  # 1 program
    pk.add(torch.rand(4096), torch.rand(4096))  # 4 programs
    profiler.finalize()
    k = pk.kernels(pk.read_tree("grid.hatchet"))[("add_kernel",)]
    assert k["est_bytes"] == (1 + 4) * 12288 and k["est_flops"] == (1 + 4) * 1024


def test_estimates_off(work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.rand(2000)
    profiler.start("off", estimates=False)
    on = profiler.start("on")
    pk.add(x, x)
    profiler.finalize()
    assert "est_bytes" not in pk.kernels(pk.read_tree("off.hatchet"))[("add_kernel",)]
    assert "est_bytes" in pk.kernels(pk.read_tree("on.hatchet"))[("add_kernel",)]
    assert on >= 0
    monkeypatch.setenv("FLAGPRISM_PROF_ESTIMATES", "0")
    profiler.start("env_off")
    pk.add(x, x)
    profiler.finalize()
    assert "est_bytes" not in pk.kernels(pk.read_tree("env_off.hatchet"))[("add_kernel",)]


def test_estimate_failure_is_explained(work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        _ttir, "interpreter_ttir", lambda fn, bound, *a, **k: (None, "no compiler today")
    )
    _profhook.forget_estimates()
    try:
        profiler.start("fail")
        pk.scale(torch.rand(100), 2.0)
        profiler.finalize()
    finally:
        _profhook.forget_estimates()
    k = pk.kernels(pk.read_tree("fail.hatchet"))[("scale_kernel",)]
    assert k["count"] == 1 and "est_bytes" not in k
    assert meta("fail")["environment"]["estimate:scale_kernel"] == "unavailable: no compiler today"


def test_python_context_frames(work_dir: Path) -> None:
    x = torch.rand(1024)
    profiler.start("py", context="python", estimates=False)
    line = sys._getframe().f_lineno + 1
    pk.chain_outer(x)
    with profiler.scope("inside"):
        pk.chain_inner(x)
    profiler.finalize()
    ks = pk.kernels(pk.read_tree("py.hatchet"))
    f = pk.__file__
    chain = (
        f"{__file__}:test_python_context_frames@{line}",
        f"{f}:chain_outer@{pk.LINES['chain_outer']}",
        f"{f}:chain_middle@{pk.LINES['chain_middle']}",
        f"{f}:chain_inner@{pk.LINES['chain_inner']}",
        f"{f}:add@{pk.LINES['add']}",
        "add_plain",
    )
    hits = [p for p in ks if p[-len(chain) :] == chain]
    assert len(hits) == 1, list(ks)
    # Nothing of flagprism or Triton is in a path; pytest's frames come first.
    assert not any("flagprism" in fr or "/triton/" in fr for p in ks for fr in p[:-1])
    scoped = [p for p in ks if "inside" in p]
    assert len(scoped) == 1
    # ROOT / scopes / call path / kernel: the scope above everything launched inside it
    assert scoped[0][0] == "inside"
    assert scoped[0][-3:] == (
        f"{f}:chain_inner@{pk.LINES['chain_inner']}",
        f"{f}:add@{pk.LINES['add']}",
        "add_plain",
    )


def test_callpath_read_in_c_skips_our_frames() -> None:
    def probe() -> tuple[str, ...]:
        return _ext.prof_callpath()

    line = sys._getframe().f_lineno + 1
    path = probe()
    assert path[-1] == f"{__file__}:probe@{line - 3}"
    assert path[-2] == f"{__file__}:test_callpath_read_in_c_skips_our_frames@{line}"


def _frame_shapes() -> list[tuple[str, ...]]:
    """Call paths read from frames of every kind CPython links: a generator resumed twice, a
    coroutine driven by send(), a lambda called back from C (sorted, map), a class body, an
    except block, and a recursion deeper than the cache's first frames."""
    out: list[tuple[str, ...]] = []

    def gen():  # noqa: ANN202
        yield _ext.prof_callpath()
        yield _ext.prof_callpath()

    async def coro() -> tuple[str, ...]:
        return _ext.prof_callpath()

    def in_except() -> tuple[str, ...]:
        try:
            raise ValueError("x")
        except ValueError:
            return _ext.prof_callpath()

    def rec(n: int) -> tuple[str, ...]:
        return _ext.prof_callpath() if n == 0 else rec(n - 1)

    g = gen()
    out += [next(g), next(g)]
    c = coro()
    try:
        c.send(None)
    except StopIteration as e:
        out.append(e.value)
    sorted([2, 1], key=lambda x: (out.append(_ext.prof_callpath()), x)[1])
    out.append(next(map(lambda _: _ext.prof_callpath(), [0])))

    class Body:
        path = _ext.prof_callpath()

    out += [Body.path, in_except(), rec(40)]
    return out


def test_callpath_frames_interpreter_chain_equals_public_api() -> None:
    # The direct read of the interpreter's frame chain (CPython 3.11-3.13) must give the call
    # paths the public frame API gives, for every kind of frame.
    before = _ext.prof_frames()
    try:
        used = {}
        paths = {}
        for method in ("auto", "public"):  # one line: the test's own frame is the same
            used[method], paths[method] = _ext.prof_frames(method), _frame_shapes()
        if sys.version_info[:2] in ((3, 11), (3, 12), (3, 13)) and not sysconfig.get_config_var(
            "Py_GIL_DISABLED"
        ):
            assert used["auto"] == ("interpreter", None)
        assert used["public"] == ("public", "selected")
        a, b = paths["auto"], paths["public"]
        assert len(a) == 9
        assert a == b
        assert a[0][-1].endswith(":gen@" + a[0][-1].rsplit("@", 1)[1])
        assert a[0] != a[1]  # the two resumptions stop on different lines
        assert any(":rec@" in fr for fr in a[-1]) and len(a[-1]) > 40
    finally:
        _ext.prof_frames("public" if before[0] == "public" else "auto")


def test_callpath_frames_env_selects_public_api() -> None:
    code = "from flagprism import _ext; print(_ext.prof_frames()); print(_ext.prof_callpath()[-1])"
    env = dict(os.environ, FLAGPRISM_PY_FRAMES="public")
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert r.stdout.splitlines()[0] == "('public', 'FLAGPRISM_PY_FRAMES=public')"
    with pytest.raises(ValueError, match="auto"):
        _ext.prof_frames("fast")


def test_python_context_exact_path_in_a_script(tmp_path: Path) -> None:
    script = tmp_path / "chain_script.py"
    script.write_text(
        textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import torch
        import flagprism.profiler as profiler
        import _profkernels as pk

        def main():
            profiler.start({str(tmp_path / "chain")!r}, context="python", estimates=False)
            pk.chain_outer(torch.rand(1024))
            profiler.finalize()

        main()
        """)
    )
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    ks = pk.kernels(pk.read_tree(tmp_path / "chain.hatchet"))
    f = pk.__file__
    assert list(ks) == [
        (
            f"{script}:<module>@12",
            f"{script}:main@9",
            f"{f}:chain_outer@{pk.LINES['chain_outer']}",
            f"{f}:chain_middle@{pk.LINES['chain_middle']}",
            f"{f}:chain_inner@{pk.LINES['chain_inner']}",
            f"{f}:add@{pk.LINES['add']}",
            "add_plain",
        )
    ]


def test_threads_launch_concurrently(work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Triton's interpreter is not thread-safe (it patches triton.language per launch), so the
    # interpreted kernel itself runs under a lock; everything FlagPrism does (timing, call
    # paths, recording, scopes) runs concurrently around it.
    from triton.runtime import interpreter

    orig = interpreter.GridExecutor.__call__
    kernel_lock = threading.Lock()

    def locked(self, *args, **kwargs):  # noqa: ANN001, ANN202
        with kernel_lock:
            return orig(self, *args, **kwargs)

    monkeypatch.setattr(interpreter.GridExecutor, "__call__", locked)
    threads, launches = 4, 12
    x = torch.rand(1024)
    pk.add(x, x)  # compile the estimate once, before the threads
    profiler.start("threads", context="python", data="trace")
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)

    def work(i: int) -> None:
        try:
            barrier.wait()
            with profiler.scope(f"worker{i}"):
                for j in range(launches):
                    with profiler.state("even" if j % 2 == 0 else "odd"):
                        pk.add(x, x)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    profiler.finalize()
    assert not errors, errors
    assert interpreter.GridExecutor.__call__ is locked  # the profiler put back what it found
    ks = pk.kernels(pk.read_tree("threads.hatchet"))
    per: dict[tuple[str, str], int] = {}
    for p, m in ks.items():
        # ROOT / scope / call path / state / kernel
        assert p[-1] == "add_kernel" and p[-2] in ("even", "odd")
        per[(p[0], p[-2])] = per.get((p[0], p[-2]), 0) + m["count"]
    assert per == {
        (f"worker{i}", s): launches // 2 for i in range(threads) for s in ("even", "odd")
    }
    m = meta("threads")
    assert m["counts"]["kernels"] == threads * launches
    assert m["counts"]["scopes"] == threads
    assert all(v == 0 for v in m["lost"].values() if isinstance(v, int))
    assert trace_event_check.check_file("threads.chrome_trace.json") == []
    doc = json.loads(Path("threads.chrome_trace.json").read_text())
    kernels = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    assert len(kernels) == threads * launches
    assert len({e["tid"] for e in kernels}) == threads  # one track per launching thread


def test_hooks_removed_after_finalize(work_dir: Path) -> None:
    from triton import knobs
    from triton.runtime import interpreter

    from flagprism import _intercept, compat

    before = interpreter.GridExecutor.__call__
    knobs_before = (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook)
    enter, leave = compat.hook_chain("launch_enter_hook"), compat.hook_chain("launch_exit_hook")
    sid = profiler.start("h")
    assert _intercept.installed("interp.grid")
    assert interpreter.GridExecutor.__call__ is not before
    assert _profhook._gpu_enter in enter.calls
    if not compat.hook_chains_native():  # Triton 3.4: the knob holds compat's dispatcher
        assert knobs.runtime.launch_enter_hook is not knobs_before[0]
    profiler.finalize(sid)
    assert interpreter.GridExecutor.__call__ is before
    assert _profhook._gpu_enter not in enter.calls
    assert _profhook._gpu_exit not in leave.calls
    # whatever the knobs held (a chain, or 3.4's None) is what they hold again
    assert (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook) == knobs_before


def test_profiler_and_debugger_together(work_dir: Path, tmp_path: Path) -> None:
    debugger = pytest.importorskip("flagprism.debugger")
    from kernels import vector_add

    x = torch.rand(2048)
    out = torch.empty_like(x)
    debugger.configure(output_dir=tmp_path / "dbg")
    profiler.start("both")
    debugger.activate()
    try:
        vector_add.add_kernel[(2,)](x, x, out, x.numel(), BLOCK=1024)
    finally:
        debugger.deactivate()
        debugger.clear_exported_runs()
    vector_add.add_kernel[(2,)](x, x, out, x.numel(), BLOCK=1024)
    profiler.finalize()
    k = pk.kernels(pk.read_tree("both.hatchet"))[("add_kernel",)]
    assert k["count"] == 2
    note = meta("both")["environment"]["estimate:add_kernel"]
    assert note.startswith("per program") or "twin" in note


def test_compiled_launch_hooks_without_gpu(work_dir: Path, data_dir: Path) -> None:
    """The compiled-kernel path, driven the way Triton's launcher drives it: the enter and exit
    hook chains called from a frame holding gridX/gridY/gridZ, below JITFunction.run's frame
    holding the CompiledKernel (whose asm["ttir"] feeds the estimate)."""
    from types import SimpleNamespace

    from triton import knobs
    from triton.compiler.compiler import LazyDict

    kernel = SimpleNamespace(
        name="add_kernel",
        hash="fake-hash-1",
        asm={"ttir": (data_dir / "ttir" / "add.ttir").read_text()},
    )

    def launcher(gridX: int, gridY: int, gridZ: int, md: LazyDict) -> None:  # noqa: N803
        knobs.runtime.launch_enter_hook(md)
        knobs.runtime.launch_exit_hook(md)

    def jit_run(kernel: SimpleNamespace, n: int) -> None:
        md = LazyDict({"name": kernel.name, "function": 1234, "stream": 0})
        md.add(pk.add_metadata, ((3, 1, 1), kernel, {"n_elements": n}))
        launcher(3, 1, 1, md)

    _profhook.forget_estimates()
    profiler.start("gpu_hooked", hook="triton")
    profiler.start("gpu_plain", context="python")
    with profiler.scope("s"):
        jit_run(kernel, 3000)
    profiler.finalize()
    hk = pk.kernels(pk.read_tree("gpu_hooked.hatchet"))
    assert list(hk) == [("s", "add_kernel[n=3000]")]
    k = hk[("s", "add_kernel[n=3000]")]
    assert (k["count"], k["bytes"], k["flops32"]) == (1, 36000, 3000)
    assert (k["est_bytes"], k["est_flops"]) == (3 * 12288, 3 * 1024)
    pl = pk.kernels(pk.read_tree("gpu_plain.hatchet"))
    ((path, m),) = pl.items()
    assert path[0] == "s" and path[-1] == "add_kernel" and "bytes" not in m
    # (Triton's real launcher and JITFunction.run are in the triton package: skipped.)
    assert path[-2].startswith(f"{__file__}:launcher@")
    assert path[-3].startswith(f"{__file__}:jit_run@")
    assert path[-4].startswith(f"{__file__}:test_compiled_launch_hooks_without_gpu@")
    assert m["est_bytes"] == 3 * 12288
