# SPDX-License-Identifier: Apache-2.0
"""The replayed launch (python/flagprism/_replay.py, python/ext/dbgfast.c): what the extension
does in one call must be what the Python path does for the same plan and sizing. On the
interpreter there is no compiled twin, so these tests give the replay what a CUDA launch would
have left (a compiled kernel that records its launcher's arguments, Triton's driver and knobs)
and a host pipeline; the GPU tests run it for real (tests/gpu/test_check_gpu.py)."""

from __future__ import annotations

import datetime
import json
import sys
import textwrap
from types import SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

import flagprism.debugger as debugger  # noqa: E402
from flagprism import _dbgexport, _intercept, _launch, _plans, _replay  # noqa: E402

_ext = pytest.importorskip("flagprism._ext")

KERNEL = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def scale(x, y, n, alpha, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        tl.store(y + o, tl.load(x + o, mask=m) * alpha, mask=m)
    """
)


class _Compiled:
    """A compiled twin as far as its launcher is used: records each launch's arguments."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.function = "fn-handle"
        self.packed_metadata = ("packed",)
        self.fail = fail

    def launch_metadata(self, grid, stream, *args):  # noqa: ANN001, ANN201
        return {"grid": grid, "stream": stream, "n": len(args)}

    @property
    def run(self):  # noqa: ANN201
        def go(*a: Any) -> None:
            if self.fail:
                raise RuntimeError("the launcher failed")
            self.calls.append(a)

        return go


class _Strided:
    """A duck-typed pointer as FlagGems' StridedBuffer is (the C scan leaves it to Python)."""

    def __init__(self, base):
        self._base, self.dtype, self.device = base, base.dtype, base.device
        self.shape, self._strides = tuple(base.shape), tuple(base.stride())

    def data_ptr(self):  # noqa: ANN201
        return self._base.data_ptr()

    def stride(self):  # noqa: ANN201
        return self._strides

    def element_size(self):  # noqa: ANN201
        return self.dtype.itemsize

    def untyped_storage(self):  # noqa: ANN201
        return self._base.untyped_storage()


@pytest.fixture
def setup(tmp_path, monkeypatch, request):
    """A kernel's plan and sizing as a CUDA launch of it leaves them, learnt by _replay
    (request.param true: its first argument a duck-typed pointer)."""
    (tmp_path / "rp_kernels.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    # a script's name, as a program has: a pytest-xdist worker runs as `python -c`, whose "-c"
    # makes report names the launch JSON must escape, which the replay leaves to the Python path
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "prog.py"), *sys.argv[1:]])
    import rp_kernels  # noqa: PLC0415

    debugger.deactivate()
    debugger.reset_config()
    debugger.configure(output_dir=tmp_path / "out")
    debugger.activate(check="bounds")
    _plans.reset()
    _replay.forget()
    _dbgexport._pending.clear()
    _dbgexport._runs.clear()
    # the one interceptor of JITFunction.run, as the direct launch asks
    monkeypatch.setattr(_intercept, "only", lambda site, name: site == "jit.run")
    fn = rp_kernels.scale
    twin = debugger._twin_for(fn)
    cfg = debugger._config
    dev = torch.device("cpu")
    x, y = torch.randn(64), torch.empty(64)
    if getattr(request, "param", False):
        x = _Strided(x)
        assert _ext.debug_scan_args(*_scan_args(rp_kernels.scale, x, y)) is None
    args = (x, y, 64, 2.0)
    kwargs = {"BLOCK": 32}
    info = _plans.kernel_info(fn)
    bound, options = _plans.bind(info, args, kwargs)
    parts, dyn = _plans.scan(info, bound)
    key = _plans.spec_key(info, parts, options, dev, (cfg.twin_num_warps, cfg.twin_maxnreg))
    plan = _plans.Plan(
        key=key,
        sizing_params=_plans.sizing_params(twin, fn, info),
        nsites=len(twin.sites),
        has_dumps=twin.has_dumps,
    )
    twin.extra.setdefault("plans", {})[key] = plan
    sizing = _plans.Sizing(records_per_program=3, dump_records_per_program=0, num_warps=None)
    plan.sizings[_plans._sizing_key(plan, bound)] = sizing
    kernel = _Compiled()
    order = [(0, "x"), (0, "y"), (0, "n"), (0, "alpha"), (0, "BLOCK"), (1, "")]
    knobs = SimpleNamespace(
        runtime=SimpleNamespace(launch_enter_hook=None, launch_exit_hook=None, debug=False),
        compilation=SimpleNamespace(instrumentation_mode=None),
    )
    gdict = {"SCALE": 2}
    sizing.direct = _plans._Direct(
        kernel=kernel,
        device=0,
        order=tuple(order),
        globals_=(("SCALE", 2, gdict),),
        get_device=lambda: 0,
        get_stream=lambda d: 0,
        knobs=knobs,
        modes=(False, None),
        metadata_fn=False,
        split=_plans._split(order),
    )
    sizing.registers = {"cap": 128, "uncapped": 168, "reason": "test"}
    summary = _ext.debug_summary_new()
    pipe = _ext.debug_pipe_new(summary, 1 << 20, 0, False, 0)  # host pipeline, every report
    pool = torch.zeros(8, dtype=torch.int64)
    entry = (pool, pipe, (1 << 20, False, None))
    grid = (2,)
    g = _launch.eval_grid(grid, bound)
    programs = g[0] * g[1] * g[2]
    # check mode: no record slots (the checks fold into the check area)
    slots = _launch.buffer_layout(twin, programs, (3, 0), bound, "cuda", None, None)[0]
    launch = _launch.Launch(
        bound=bound,
        grid=g,
        programs=programs,
        slots=slots,
        arena_words=0,
        buffer=None,
        backend="cuda",
        buffer_device=dev,
        pipe_offset=0,
        registers=sizing.registers,
    )
    launch.args_dyn = dyn
    _plans.args_json(plan, fn, launch)  # the argument templates, as the first launch makes them
    plan.original = "ORIGINAL"
    ttir = (None, "sanitize run: no op log")
    assert _replay.learn(fn, twin, launch, plan, sizing, cfg, entry, kernel, {}, ttir, 7)
    K = _replay.lookup(fn, 7)
    assert K is not None
    yield SimpleNamespace(
        fn=fn,
        twin=twin,
        cfg=cfg,
        K=K,
        plan=plan,
        sizing=sizing,
        launch=launch,
        kernel=kernel,
        knobs=knobs,
        gdict=gdict,
        pipe=pipe,
        pool=pool,
        args=args,
        kwargs=kwargs,
        grid=grid,
        dyn=dyn,
        ttir=ttir,
        tmp=tmp_path,
    )
    _ext.debug_pipe_drain(pipe)
    debugger.deactivate()
    debugger.reset_config()
    _replay.forget()
    _dbgexport._pending.clear()
    _dbgexport._runs.clear()
    sys.modules.pop("rp_kernels", None)


def _replace(desc, **changes):  # noqa: ANN001, ANN003, ANN202
    """A copy of a Replay* description with some fields changed (they are read-only)."""
    t = type(desc)
    names = [n for n in dir(t) if type(getattr(t, n)).__name__ == "member_descriptor"]
    return t(**{n: changes.get(n, getattr(desc, n)) for n in names})


def _scan_args(fn, x, y):  # noqa: ANN001, ANN202
    info = _plans.kernel_info(fn)
    bound, _opts = _plans.bind(info, (x, y, 64, 2.0), {"BLOCK": 32})
    tensor, cx = _plans._classes()
    return info.knames, info.kbytes, bound, False, tensor, cx


@pytest.mark.parametrize("setup", [True], indirect=True)
def test_arguments_the_c_scan_leaves_to_python_are_replayed(setup, monkeypatch):
    """A duck-typed pointer (FlagGems' StridedBuffer) is scanned by _plans.scan_py inside the
    replayed launch: the launch is replayed, and its launch JSON describes the argument as the
    Python path does."""
    s = setup
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 5, None) == "ORIGINAL"
    assert s.kernel.calls[-1][9] is s.args[0]
    want, got = _both_jsons(s, monkeypatch, 5, {}, (), None)
    assert got == want and json.loads(got)["args"][0]["data_ptr"] == s.args[0].data_ptr()


_SEC = 1_796_212_345  # the clock both launch JSONs are written at


def _both_jsons(s, monkeypatch, index, route, stack, test, config_text=None):  # noqa: ANN001, ANN202
    """(the Python path's launch JSON, the extension's) for the same launch of `s`."""
    monkeypatch.setattr(_dbgexport, "_now", lambda: _ext.debug_fast_stamp(_SEC))
    want = _dbgexport.launch_json(
        s.fn,
        s.twin,
        s.launch,
        s.cfg,
        s.kernel,
        None,
        index,
        route,
        s.ttir,
        stack,
        test,
        config_text,
        args=_plans.args_json(s.plan, s.fn, s.launch),
    )
    got = _ext.debug_fast_launch_json(
        s.K,
        s.plan.fast,
        s.sizing.fast,
        s.launch.grid,
        index,
        s.launch.slots,
        json.dumps(stack),
        "null" if test is None else json.dumps(test),
        s.dyn,
        _SEC,
    )
    return want, got


def _learn(s, entry, route=None, config_text=None):  # noqa: ANN001, ANN202
    """_replay.learn() for the fixture's launch, on `route` (default: plain), into `entry`."""
    return _replay.learn(
        s.fn,
        s.twin,
        s.launch,
        s.plan,
        s.sizing,
        s.cfg,
        entry,
        s.kernel,
        route or {},
        s.ttir,
        7,
        config_text,
    )


def test_stamp_formats_as_the_python_clock():
    for sec in (0, 1_700_000_000, 1_796_212_345, 4_102_444_799):
        now = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
        assert _ext.debug_fast_stamp(sec) == (
            now.strftime("%Y%m%dT%H%M%SZ"),
            now.isoformat(timespec="seconds"),
        )


def test_launch_json_equals_the_python_path(setup, monkeypatch):
    """The launch JSON the extension writes is _dbgexport.launch_json()'s, byte for byte."""
    s = setup
    stack = ("/home/u/train.py:12 <module>", 'odd "file".py:3 step\u00e9')
    for test in (None, "tests/test_x.py::test_y[a\\b]"):
        want, got = _both_jsons(s, monkeypatch, 41, {}, stack, test)
        assert got == want
        json.loads(got)


def test_a_stem_the_launch_json_escapes_is_replayed(setup, monkeypatch):
    """Under pytest the reports' stem is the test's name (pytest-xdist: the worker's too), with
    brackets, quotes or non-ASCII characters: such launches are replayed, and the replayed
    launch JSON escapes the stem as the Python path's does."""
    s = setup
    monkeypatch.setattr(_dbgexport, "report_tag", ['gw1_test_x[a-"b"\u00e9\\c]'])
    entry = (s.pool, s.pipe, (1 << 20, False, None))
    s.sizing.fast = None
    args = (s.fn, s.twin, s.launch, s.plan, s.sizing, s.cfg, entry, s.kernel, {}, s.ttir, 8)
    assert _replay.learn(*args)
    s.K = _replay.lookup(s.fn, 8)
    assert s.K is not None and '\\"b\\"' in s.K.stem
    want, got = _both_jsons(s, monkeypatch, 6, {}, ("a.py:1 f",), None)
    assert got == want
    assert json.loads(got)["stem"].startswith('gw1_test_x[a-"b"\u00e9\\c]_scale_')
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 6, None) == "ORIGINAL"


def test_replayed_launch_does_what_the_python_path_does(setup):
    """A replayed launch calls the compiled twin's launcher with the record buffer's address in
    the pool, keeps the run dict the Python path keeps, hands the launch to the pipeline (whose
    report has the launch's index, grid and stack) and counts itself; it returns the kernel's
    own compiled kernel."""
    s = setup
    before = dict(_plans.counters)
    ret = _replay.run(s.K, s.args, s.kwargs, s.grid, 9, None)
    assert ret == "ORIGINAL"
    assert len(s.kernel.calls) == 1
    call = s.kernel.calls[0]
    assert call[:9] == (2, 1, 1, 0, "fn-handle", ("packed",), None, None, None)
    x, y, n, alpha = s.args
    assert call[9:13] == (x, y, 64, 2.0) and call[13] == 32  # BLOCK
    addr = call[14]
    assert isinstance(addr, int) and addr >= s.pool.data_ptr()
    run = _dbgexport._pending[9]
    assert _dbgexport._runs[-1] is run and isinstance(run, _dbgexport.Run)
    assert run["run_index"] == 9 and run["grid"] == [2, 1, 1] and run["programs"] == 2
    assert run["slots_per_program"] == s.launch.slots and run["kernel"] == "scale"
    assert run["registers"] == s.sizing.registers and run["registers"] is not s.sizing.registers
    for k in ("plan_hits", "sizing_hits", "registers_reused", "direct_launches", "fast_launches"):
        assert _plans.counters[k] == before[k] + 1, k
    assert _plans.counters["originals_reused"] == before["originals_reused"] + 1
    _ext.debug_pipe_drain(s.pipe)
    (res,) = _ext.debug_pipe_take(s.pipe)
    assert res["launch_index"] == 9 and res["status"] == "FP_OK", res
    with open(res["json"], encoding="utf-8") as f:
        report = json.load(f)
    assert report["run"]["index"] == 9
    origin = report["origin"]
    assert origin["launch_path"] == "JITFunction.run" and origin["test"] is None
    assert any("test_replayed_launch_does_what" in f for f in origin["stack"]), origin
    assert report["kernel"]["grid"] == [2, 1, 1] and report["kernel"]["backend"] == "cuda"
    assert report["kernel"]["registers"] == s.sizing.registers
    assert report["run"]["stem"].endswith("_run9")
    assert _ext.debug_pipe_stats(s.pipe)["in_flight_bytes"] == 0


def test_replay_declines_what_it_was_not_taught(setup):
    """Another specialization, a changed global, another device or a launch hook that reads
    the buffer as a tensor: None, and nothing done (no launch, no run dict, no slice)."""
    s = setup

    def nothing_done() -> None:
        assert s.kernel.calls == [] and _dbgexport._pending == {} and _dbgexport._runs == []
        assert _ext.debug_pipe_stats(s.pipe)["in_flight_bytes"] == 0

    x, y, n, alpha = s.args
    other = (x.double(), y, n, alpha)  # another dtype: another specialization
    assert _replay.run(s.K, other, s.kwargs, s.grid, 1, None) is None
    nothing_done()
    assert _replay.run(s.K, s.args, {"BLOCK": 64}, s.grid, 1, None) is None  # another plan
    nothing_done()
    for bad in (lambda meta: ("x",), lambda meta: (2.0,), lambda meta: 2.5, lambda meta: ()):
        assert _replay.run(s.K, s.args, s.kwargs, bad, 1, None) is None  # the Python path's
    nothing_done()
    s.gdict["SCALE"] = 3
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 1, None) is None
    nothing_done()
    s.gdict["SCALE"] = 2
    s.knobs.runtime.debug = True  # Triton would compile a debug kernel
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 1, None) is None
    nothing_done()
    s.knobs.runtime.debug = False
    s.knobs.runtime.launch_enter_hook = enter = object()
    s.sizing.fast = _replace(s.sizing.fast, metadata_fn=True)
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 1, None) is None
    nothing_done()
    # a launch hook without the kernel's own metadata function: Triton's metadata is made
    s.sizing.fast = _replace(s.sizing.fast, metadata_fn=False)
    np = pytest.importorskip("numpy")
    assert _replay.run(s.K, s.args, s.kwargs, lambda meta: (np.int64(2),), 1, None) == "ORIGINAL"
    call = s.kernel.calls[-1]
    assert call[6] == {"grid": (2, 1, 1), "stream": 0, "n": 6} and call[7] is enter


@pytest.mark.parametrize(
    "route",
    [
        {"path": "FlagGems LibEntry"},
        {"path": "triton.autotune", "role": "chosen", "tuner": 1, "config": None, "autotuner": 0},
    ],
    ids=["libentry", "autotune"],
)
def test_a_route_is_replayed_on_its_own_route(setup, monkeypatch, route):
    """A sizing learnt on FlagGems' LibEntry path, or for the config an autotuner chose,
    replays launches on that route only (the same path; for the autotuner the same config), and
    its launch JSON names the route as the Python path's does; the autotuner's benchmark
    launches are never replayed."""
    s = setup
    configs = {0: "BLOCK: 32, num_warps: 4"}

    def config_text(r):  # noqa: ANN001, ANN202 - debugger._config_text for these routes
        return configs.get(r.get("autotuner")) if r.get("role") else None

    token = _replay.route_token(route, config_text)
    s.sizing.fast = None
    assert not _learn(s, None, route, config_text)  # no pipeline: nothing to replay into
    entry = (s.pool, s.pipe, (1 << 20, False, None))
    assert _learn(s, entry, route, config_text)
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 2, None) is None
    other = "triton.autotune\nBLOCK: 64, num_warps: 4"
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 2, None, other) is None
    assert s.kernel.calls == [] and _dbgexport._pending == {}
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 2, None, token) == "ORIGINAL"
    want, got = _both_jsons(s, monkeypatch, 3, route, ("a.py:1 f",), None, config_text(route))
    assert got == want and f'"launch_path": "{route["path"]}"' in got
    if "role" in route:
        assert json.loads(got)["autotune"] == {"role": "chosen", "config": configs[0]}
    bench = {"path": "triton.autotune", "role": "benchmark", "tuner": 1, "config": "c"}
    assert _replay.route_token(bench, config_text) is _replay.NO
    assert _replay.route_token({}, config_text) is None


def test_replayed_launch_that_raises_gives_everything_back(setup):
    s = setup
    s.kernel.fail = True
    with pytest.raises(RuntimeError, match="the launcher failed"):
        _replay.run(s.K, s.args, s.kwargs, s.grid, 3, None)
    assert _dbgexport._pending == {} and _dbgexport._runs == []
    assert _ext.debug_pipe_stats(s.pipe)["in_flight_bytes"] == 0


def test_a_new_working_directory_is_learnt_again(setup, monkeypatch, tmp_path):
    """After a chdir the launch JSON's constant part (the script, the output directory) is no
    longer what the kernel's ReplayKernel holds: the extension declines, and the next launch
    through Python makes it again for the directory of now."""
    s = setup
    monkeypatch.chdir(tmp_path)
    assert not _replay.current(s.K)
    assert _replay.run(s.K, s.args, s.kwargs, s.grid, 1, None) is None
    entry = (s.pool, s.pipe, (1 << 20, False, None))
    assert _learn(s, entry)
    K = _replay.lookup(s.fn, 7)
    assert K is not s.K and _replay.current(K)
    assert _replay.run(K, s.args, s.kwargs, s.grid, 1, None) == "ORIGINAL"


def test_no_replay_without_the_extension_s_call(setup, monkeypatch):
    """An extension without debug_fast_launch: nothing is learnt or made again."""
    s = setup
    for hook in _dbgexport.on_close:
        hook()
    monkeypatch.setattr(_replay, "_launch_fn", None)
    entry = (s.pool, s.pipe, (1 << 20, False, None))
    assert _replay.refresh(s.fn, s.twin, s.cfg, entry, 9) is None
    s.sizing.fast = None
    assert not _learn(s, entry)


def test_replay_is_forgotten_when_the_debugger_changes(setup):
    """configure(), activate() and a new pipeline end the kernel's ReplayKernel: the next launch makes it
    again for the Debugger of now (or takes the Python path and learns again)."""
    s = setup
    assert _replay.lookup(s.fn, 7) is not None
    assert _replay.lookup(s.fn, 8) is None  # another epoch
    old = _dbgexport._last_pipe[0]
    _dbgexport._last_pipe[0] = ("another pipeline",)
    assert _replay.lookup(s.fn, 7) is None
    _dbgexport._last_pipe[0] = old
    # a pipeline that closes is not kept alive by what was learnt; the ReplayKernel is made again
    # for the next pipeline without a launch through Python (its plans and sizings kept theirs)
    for hook in _dbgexport.on_close:
        hook()
    assert all(h[1] is None and h[3] is None for h in _replay.kernels.values())
    assert _replay.lookup(s.fn, 7) is None and _replay.stale_device(s.fn) == torch.device("cpu")
    entry = (s.pool, s.pipe, (1 << 20, False, None))
    K = _replay.refresh(s.fn, s.twin, s.cfg, entry, 9)
    assert K is not None and _replay.lookup(s.fn, 9) is K
    assert _replay.run(K, s.args, s.kwargs, s.grid, 4, None) == "ORIGINAL"
    assert _replay.refresh(s.fn, None, s.cfg, None, 10) is None  # no twin: forgotten
    assert _replay.stale_device(s.fn) is None
    epoch = debugger._epoch
    debugger.configure(output_dir=s.tmp / "other")
    assert debugger._epoch != epoch
    epoch = debugger._epoch
    debugger.activate(check="bounds")
    assert debugger._epoch != epoch


def test_replayed_launches_from_several_threads(setup):
    """Replays from four threads at once (the pipeline's reserve and hand-over let other
    threads run): every launch is kept, handed over once and reported, none is lost or mixed."""
    import threading

    s = setup
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for i in range(50):
                assert _replay.run(s.K, s.args, s.kwargs, s.grid, 1000 * t + i, None) == "ORIGINAL"
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ws = [threading.Thread(target=worker, args=(t + 1,)) for t in range(4)]
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    assert not errors, errors
    _ext.debug_pipe_drain(s.pipe)
    results = _ext.debug_pipe_take(s.pipe)
    want = {1000 * t + i for t in range(1, 5) for i in range(50)}
    assert sorted(r["launch_index"] for r in results) == sorted(want)
    assert all(r["status"] == "FP_OK" for r in results)
    assert set(_dbgexport._pending) == want and len(_dbgexport._runs) == 200
    assert {r["run_index"] for r in _dbgexport._runs} == want
    assert len(s.kernel.calls) == 200 and _plans.counters["fast_launches"] == 200
    assert _ext.debug_pipe_stats(s.pipe)["in_flight_bytes"] == 0
