# SPDX-License-Identifier: Apache-2.0
"""The launch fast path (python/flagprism/_plans.py, docs/guide/debugger.md "The launch fast path"),
on the interpreter: a kernel's twin is built once, later launches of the same specialization
reuse its plan (sizing, warps, argument templates, the kernel's own compiled kernel), and a
launch whose specialization, options, settings or loop-bound values differ never reuses a
stale one. The fast path's launch JSON equals what the slow path describes, and the call stack
the extension caches per call site equals the one Python walks. Counters come from
debugger.stats()["launch"]."""

from __future__ import annotations

import importlib
import json
import math
import os
import sys
import textwrap
import uuid
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import flagprism.debugger as debugger  # noqa: E402
from flagprism import _launch, _plans  # noqa: E402

KERNELS = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


    @triton.jit
    def rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros((BLOCK,), tl.float32)
        for start in range(0, n_cols, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0)
        tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)


    @triton.jit
    def mixed(x_ptr, out_ptr, n, alpha, flag, nothing, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        if flag:
            x = x * alpha
        tl.store(out_ptr + offs, x, mask=m)
    """)


@pytest.fixture
def kmod(tmp_path, monkeypatch):
    """A fresh module of kernels (new JITFunctions: no twin of theirs exists yet)."""
    name = f"plan_kernels_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    yield mod
    sys.modules.pop(name, None)


@pytest.fixture
def fresh(tmp_path):
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger._report_fn = debugger._ext_report
    debugger.configure(output_dir=tmp_path / "out")
    debugger.reset_summary()
    _plans.reset()
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()


def _counts() -> dict[str, int]:
    return debugger.stats()["launch"]


def _scale(kmod, x, n=None, block=64, **kw):
    n = x.numel() if n is None else n
    out = torch.empty_like(x)
    kmod.scale[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, **kw)
    return out


def test_twin_built_once_later_launches_take_the_fast_path(fresh, kmod):
    fresh.activate(check="bounds")
    x = torch.randn(200)
    for _ in range(4):
        out = _scale(kmod, x)
        torch.testing.assert_close(out, x * 2)
    c = _counts()
    assert c["twins_built"] == 1
    assert c["plans_built"] == 1 and c["plan_hits"] == 3
    assert c["sizings_built"] == 1 and c["sizing_hits"] == 3
    assert c["slow_launches"] == 0
    # the kernel's own compiled kernel (the interpreter's: None) was asked for once
    assert c["originals_reused"] == 3
    runs = fresh.take_exported_runs()
    assert [r["slots_per_program"] for r in runs] == [runs[0]["slots_per_program"]] * 4
    assert fresh.summary()["totals"]["by_status"]["instrumented"] == 4


def test_a_changed_specialization_never_reuses_a_plan(fresh, kmod):
    fresh.activate(check="bounds")
    x = torch.randn(256)
    _scale(kmod, x)
    assert _counts()["plans_built"] == 1
    _scale(kmod, x.half())  # dtype
    assert _counts()["plans_built"] == 2
    _scale(kmod, x, block=32)  # a constexpr
    assert _counts()["plans_built"] == 3
    _scale(kmod, x[1:])  # a pointer no longer 16-byte aligned
    assert _counts()["plans_built"] == 4
    _scale(kmod, x, n=1)  # an integer equal to 1 (Triton specializes it)
    assert _counts()["plans_built"] == 5
    _scale(kmod, x, n=17)  # an integer 16 does not divide
    assert _counts()["plans_built"] == 6
    _scale(kmod, x, num_warps=2)  # a launch option
    assert _counts()["plans_built"] == 7
    _scale(kmod, x)  # the first specialization again
    c = _counts()
    assert c["plans_built"] == 7 and c["plan_hits"] == 1 and c["twins_built"] == 1
    warps = [r["num_warps"]["kernel"] for r in fresh.take_exported_runs()]
    assert warps == [4, 4, 4, 4, 4, 4, 2, 4]


def test_settings_are_part_of_the_plan_and_capacities_apply_at_once(fresh, kmod, tmp_path):
    fresh.activate(check="bounds")
    x = torch.randn(256)
    _scale(kmod, x)
    fresh.configure(output_dir=tmp_path / "out", twin_num_warps="same")
    _scale(kmod, x)
    assert _counts()["plans_built"] == 2
    fresh.configure(output_dir=tmp_path / "out", twin_num_warps="same", record_capacity=4)
    _scale(kmod, x)
    assert _counts()["plans_built"] == 2  # record_capacity is applied per launch, not planned
    runs = fresh.take_exported_runs()
    assert runs[0]["num_warps"]["twin"] == 1 and runs[1]["num_warps"]["twin"] == 4
    # check mode keeps no record slots (its checks fold into the check area): a record
    # capacity changes nothing there
    assert [r["slots_per_program"] for r in runs] == [0, 0, 0]


@pytest.mark.compat("runtime-loops")
def test_sizing_follows_the_values_loop_bounds_read(fresh, kmod):
    fresh.activate(check="bounds")
    out = torch.empty(4 * 32)
    seen = []
    for n_cols in (64, 200, 64, 32):
        x = torch.randn(4, n_cols)
        kmod.rows[(4,)](x, out, n_cols, x.stride(0), BLOCK=32)
        seen.append(n_cols)
    c = _counts()
    # n_cols = 64 and 32 are the same specialization (16 divides both); 200 is not
    assert c["plans_built"] == 2
    assert c["sizings_built"] == 3 and c["sizing_hits"] == 1
    runs = fresh.take_exported_runs()
    twin = debugger._twin_for(kmod.rows)
    # what the sizings computed (the records a marker-mode twin of these sites would need);
    # check mode itself keeps no record slots, whatever the trip counts
    rpp = []
    for n_cols in seen:
        x = torch.randn(4, n_cols)
        bound = {"x_ptr": x, "out_ptr": out, "n_cols": n_cols, "stride": n_cols, "BLOCK": 32}
        per = _launch.sites_per_program(twin, bound)
        rpp.append(per[0])
        assert _launch.buffer_layout(twin, 4, per, bound, "interpreter", None, None)[0] == 0
    assert rpp[0] < rpp[1] and rpp[0] == rpp[2] and rpp[3] < rpp[0]
    assert all(r["slots_per_program"] == 0 and r["complete"] for r in runs)


def test_sizing_params_are_the_names_loop_bounds_and_shapes_read(fresh, kmod):
    fresh.activate(check="bounds")
    info = _plans.kernel_info(kmod.rows)
    assert _plans.sizing_params(debugger._twin_for(kmod.rows), kmod.rows, info) == (
        "n_cols",
        "BLOCK",
    )
    info = _plans.kernel_info(kmod.scale)
    assert _plans.sizing_params(debugger._twin_for(kmod.scale), kmod.scale, info) == ("BLOCK",)


class _Count(int):
    """An int of another class: not a kind the key describes."""


def test_arguments_the_key_cannot_describe_take_the_slow_path(fresh, kmod):
    fresh.activate(check="bounds")
    x = torch.randn(100)
    out = torch.empty(100)
    kmod.scale[(2,)](x, out, _Count(100), BLOCK=64)
    kmod.scale[(2,)](x, out, _Count(100), BLOCK=64)
    c = _counts()
    assert c["slow_launches"] == 2 and c["plans_built"] == 0
    # and why, by parameter and class
    assert c["slow_reasons"] == {f"argument 'n' of type {__name__}._Count": 2}, c
    torch.testing.assert_close(out, x * 2)
    assert fresh.summary()["totals"]["by_status"]["instrumented"] == 2


def test_a_binding_error_is_triton_s_own(fresh, kmod):
    fresh.activate(check="bounds")
    x = torch.randn(100)
    with pytest.raises(TypeError):
        kmod.scale[(2,)](x, x, 100, 5, BLOCK=64)  # BLOCK twice
    with pytest.raises(TypeError):
        kmod.scale[(2,)](x, x, BLOCK=64)  # n missing


def test_the_kernel_s_compiled_kernel_is_asked_for_once_per_plan(fresh, kmod):
    """What a launch returns is the kernel's own compiled kernel (LibEntry caches it): the first
    launch of each plan asks Triton's warmup for it, later ones return the same object."""
    fresh.activate(check="bounds")
    calls = []

    def call_next(fn, *args, grid, warmup, **kwargs):
        assert warmup
        calls.append(kwargs.get("BLOCK"))
        return object()

    x = torch.randn(128)
    out = torch.empty(128)
    got = []
    for block in (64, 64, 32, 64, 32):
        index = debugger._reserve()
        got.append(
            debugger._instrumented(
                kmod.scale, (x, out, 128), {"BLOCK": block}, (128 // block,), call_next, {}, index
            )
        )
    assert calls == [64, 32]
    assert got[0] is got[1] is got[3] and got[2] is got[4] and got[0] is not got[2]
    assert _counts()["originals_reused"] == 3


def _describe(fn, bound, backend="interpreter"):
    return json.loads(json.dumps(_launch.describe_args(fn, bound, backend)))


def _scanned(info, bound):
    """(the key's part scan() made of `bound`, a one-program launch carrying what it read)."""
    parts, dyn = _plans.scan(info, bound)
    launch = _launch.Launch(
        bound=bound,
        grid=(1, 1, 1),
        programs=1,
        slots=0,
        arena_words=0,
        buffer=None,
        backend="interpreter",
        args_dyn=dyn,
    )
    return parts, launch


@pytest.mark.parametrize("case", ["plain", "view", "scalars", "nonfinite", "wide-int", "none"])
def test_argument_templates_describe_what_the_slow_path_does(fresh, kmod, case):
    fn = kmod.mixed
    base = torch.randn(64, 8)
    x = {
        "plain": torch.randn(100),
        "view": base[3:, 2],
        "scalars": torch.randn(10).half(),
        "nonfinite": torch.randn(10),
        "wide-int": torch.randn(10),
        "none": torch.randn(10),
    }[case]
    alpha = {"nonfinite": math.nan, "scalars": 0.1}.get(case, 2.5)
    n = {"wide-int": 2**40, "scalars": 1}.get(case, x.numel())
    flag = case != "scalars"
    nothing = 3 if case == "none" else None
    info = _plans.kernel_info(fn)
    plan = _plans.Plan(key=(), sizing_params=())
    for k in range(2):  # the first launch makes the templates, the second uses them
        y = x.clone() if k else x
        bound = {
            "x_ptr": y,
            "out_ptr": base,
            "n": n,
            "alpha": alpha if k else -alpha,
            "flag": flag,
            "nothing": nothing,
            "BLOCK": 64,
        }
        _parts, launch = _scanned(info, bound)
        assert json.loads(_plans.args_json(plan, fn, launch)) == _describe(fn, bound)
    assert json.loads(_plans.args_json(None, fn, launch)) == _describe(fn, bound)


class _Strided:
    """A duck-typed pointer as FlagGems' StridedBuffer is: a base tensor seen with its own shape,
    strides and offset; Triton takes it as a tensor (data_ptr and dtype)."""

    def __init__(self, base, shape, strides, offset=0):
        self._base, self.dtype, self.device = base, base.dtype, base.device
        self.shape, self._strides = tuple(shape), tuple(strides)
        self._ptr = base.data_ptr() + offset * base.element_size()

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def element_size(self):
        return self.dtype.itemsize

    def untyped_storage(self):
        return self._base.untyped_storage()


class _TypedPtr:
    """FlagGems' TypedPtr: a pointer and a dtype, nothing else."""

    def __init__(self, t):
        self.dtype, self._ptr = t.dtype, t.data_ptr()

    def data_ptr(self):
        return self._ptr


@pytest.mark.parametrize("duck", [_Strided, _TypedPtr])
def test_duck_typed_pointers_take_the_fast_path(fresh, kmod, duck):
    """FlagGems' generated pointwise kernels are launched with StridedBuffer (and TypedPtr)
    arguments: the key describes them (their class, dtype and alignment), the templates give
    what the slow path describes, and launches of one specialization share a plan."""
    fn = kmod.mixed
    info = _plans.kernel_info(fn)
    base = torch.randn(64, 8)
    plan = _plans.Plan(key=(), sizing_params=())
    keys = []
    for k in range(3):
        t = base.clone()
        x = _Strided(t, (32,), (2,), offset=k) if duck is _Strided else _TypedPtr(t)
        bound = {
            "x_ptr": x,
            "out_ptr": base,
            "n": 32,
            "alpha": 0.5,
            "flag": True,
            "nothing": None,
            "BLOCK": 64,
        }
        parts, launch = _scanned(info, bound)
        keys.append(parts)
        assert json.loads(_plans.args_json(plan, fn, launch)) == _describe(fn, bound)
    # offset 0 is 16-byte aligned, offsets 1 and 2 (floats) are not: two specializations
    if duck is _Strided:
        assert keys[0] != keys[1] == keys[2] and keys[0][0][0] is _Strided
    else:
        assert keys[0] == keys[1] == keys[2]
    e = _describe(fn, bound)[0]
    assert e["kind"] == "tensor" and e["data_ptr"] == x.data_ptr()


def test_stack_is_cached_per_call_site_and_equals_python_s_walk(fresh):
    from flagprism import _ext

    debugger._stack_skip()

    def site_a():
        return debugger._launch_stack()

    def site_b():
        return debugger._launch_stack(limit=2)

    a1, a2 = [site_a() for _ in range(2)]
    assert a1 is a2  # one cached tuple for one call site
    b = site_b()
    assert len(b) == 2 and b[-1].endswith(" site_b") and b != a1[-2:]
    assert a1[-1].endswith(" site_a") and f"{__file__}:" in a1[-1]
    saved = debugger._stack_ext
    try:
        debugger._stack_ext = None  # the Python walk
        py = [site_a() for _ in range(1)][0]
    finally:
        debugger._stack_ext = saved

    def where(stack):
        return [(f.rsplit(":", 1)[0], f.rsplit(" ", 1)[1]) for f in stack]

    assert where(a1) == where(py)  # the same frames (the test's own lines differ: other calls)
    assert list(a1[:-3]) == py[:-3] and a1[-1] == py[-1]
    st = _ext.debug_stack_stats()
    assert st["hits"] >= 1 and st["cached"] >= 2


def test_stack_of_a_deep_recursion_keeps_the_innermost_frames(fresh):
    def down(k):
        return down(k - 1) if k else debugger._launch_stack(limit=5)

    s = down(400)  # deeper than the frames the extension reads
    assert len(s) == 5 and all(f.endswith(" down") for f in s)
    with pytest.raises(ValueError):
        from flagprism import _ext

        _ext.debug_stack(0)


def _info(kinds):
    names = tuple(n for n, _k in kinds)
    return _plans.KernelInfo(
        names=names,
        index={n: i for i, n in enumerate(names)},
        defaults={},
        constexprs=frozenset(n for n, k in kinds if k),
        simple=True,
        backend="interpreter",
        kinds=tuple(kinds),
        knames=names,
        kbytes=bytes(k for _n, k in kinds),
    )


@pytest.mark.parametrize("interp", [True, False])
def test_the_extension_s_scan_equals_python_s(interp):
    import triton.language as tl

    from flagprism import _ext

    base = torch.randn(6, 10)
    values = [
        0,
        1,
        -1,
        16,
        -16,
        17,
        2**31 - 1,
        2**31,
        -(2**31) - 1,
        2**63 - 1,
        2**63,
        2**64 + 16,
        -(2**70),
        0.0,
        -2.5,
        1e300,
        math.nan,
        math.inf,
        -math.inf,
        True,
        False,
        None,
        base,
        base[2:, 3],
        base.t(),
        torch.tensor(3.0),
        torch.empty(0),
        base.half()[1:],
    ]
    for kind in (0, 1, 2):
        for v in values + [tl.constexpr(7), tl.constexpr(None)]:
            info = _info([("a", kind), ("b", 0)])
            bound = {"a": v, "b": 5}
            got = _ext.debug_scan_args(
                info.knames, info.kbytes, bound, interp, torch.Tensor, tl.constexpr
            )
            info.backend = "interpreter" if interp else "cuda"
            want = _plans.scan_py(info, bound)
            assert got == want, (kind, v)
            if got is not None:
                assert [hash(p) for p in got[0]] == [hash(p) for p in want[0]]


def test_the_extension_s_scan_leaves_what_it_does_not_describe_to_python():
    import triton.language as tl

    from flagprism import _ext

    info = _info([("a", 0)])
    for v in (_Count(3), "text", (1, 2), object()):
        assert (
            _ext.debug_scan_args(
                info.knames, info.kbytes, {"a": v}, True, torch.Tensor, tl.constexpr
            )
            is None
        )
        assert _plans.scan_py(info, {"a": v}) is None
    with pytest.raises(TypeError):
        _ext.debug_scan_args(info.knames, b"", {"a": 1}, True, torch.Tensor, tl.constexpr)


def test_the_extension_s_bind_equals_python_s():
    """debug_bind() gives what bind_py() gives, for every way a launch binds or fails to."""
    from flagprism import _ext

    def sig(a, b, c=3, d=None):  # noqa: ANN001, ANN202 - only its signature is read
        return None

    import inspect

    params = list(inspect.signature(sig).parameters.values())
    names = tuple(p.name for p in params)
    info = _plans.KernelInfo(
        names=names,
        index={n: i for i, n in enumerate(names)},
        defaults={p.name: p.default for p in params if p.default is not inspect.Parameter.empty},
        constexprs=frozenset(),
        simple=True,
        backend="cuda",
    )
    cases = [
        ((1, 2), {}),
        ((1, 2, 5, 6), {}),
        ((1,), {"b": 2}),
        ((), {"b": 2, "a": 1}),
        ((1, 2), {"d": 9, "num_warps": 4}),
        ((1, 2), {"num_warps": 4, "num_stages": 2}),
        ((1, 2, 3, 4, 5), {}),  # too many
        ((1, 2), {"a": 0}),  # given twice
        ((1,), {}),  # b missing
        ((), {"c": 1}),  # a missing
    ]
    for args, kwargs in cases:
        got = _ext.debug_bind(info.names, info.index, info.defaults, args, dict(kwargs))
        want = _plans.bind_py(info, args, kwargs)
        assert got == want, (args, kwargs)
        if got is not None:  # the same order: the key and the launch JSON follow it
            assert list(got[0]) == list(want[0]) and list(got[1]) == list(want[1])
    with pytest.raises(TypeError):
        _ext.debug_bind(info.names, info.index, info.defaults, [1, 2], {})


class _FakeCompiled:
    """What JITFunction.run returns, as far as the direct launch uses it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.function = "fn-handle"
        self.packed_metadata = ("packed",)

    def launch_metadata(self, grid, stream, *args):  # noqa: ANN001, ANN201
        return {"grid": grid, "stream": stream}

    @property
    def run(self):  # noqa: ANN201
        return lambda *a: self.calls.append(a)


def _fake_triton(monkeypatch, get_device, get_stream, only):  # noqa: ANN001, ANN202
    """Triton's active driver, its runtime knobs (returned: set a launch hook there) and the
    interception check, as the direct launch reads them."""
    from types import SimpleNamespace

    import triton
    from triton.runtime import driver

    from flagprism import _intercept

    fake = SimpleNamespace(get_current_device=get_device, get_current_stream=get_stream)
    monkeypatch.setattr(type(driver), "active", property(lambda self: fake), raising=False)
    rt = SimpleNamespace(launch_enter_hook=None, launch_exit_hook=None, debug=False)
    monkeypatch.setattr(triton.knobs, "runtime", rt)
    monkeypatch.setattr(_intercept, "only", only)
    return rt


def test_direct_launch_repeats_what_jit_run_does(monkeypatch):
    """A sizing's later launches call the compiled twin's launcher with JITFunction.run's
    arguments (grid, stream, handles, hooks, then every parameter in order, the record buffer
    and descriptor bases included), and fall back to JITFunction.run when a global the twin read
    changed, the device changed, another tool intercepts JITFunction.run, or it is not CUDA."""
    from types import SimpleNamespace

    kernel = _FakeCompiled()
    gdict = {"SCALE": 2}
    jit = SimpleNamespace(
        arg_names=["x", "n", "BLOCK", "__fp_ctx", "__fp_db_d"],
        pre_run_hooks=[],
        used_global_vals={("SCALE", id(gdict)): (2, gdict)},
    )
    twin = SimpleNamespace(jit=jit)
    dev = {"now": 0}
    rt = _fake_triton(
        monkeypatch,
        lambda: dev["now"],
        lambda d: 77 + d,
        lambda site, name: site == "jit.run" and not dev.get("other"),
    )
    slow = []
    monkeypatch.setattr(_launch, "launch", lambda *a: slow.append(a) or kernel)
    plan = _launch.Launch(
        bound={"x": "X", "n": 4, "BLOCK": 64},
        grid=(3, 2, 1),
        programs=6,
        slots=1,
        arena_words=0,
        buffer="BUF",
        backend="cuda",
        extra={"__fp_db_d": "BASE"},
    )
    sz = _plans.Sizing(records_per_program=1, dump_records_per_program=0, num_warps=None)
    _plans.reset()
    assert _plans.launch(twin, plan, (), {}, sz) is kernel and len(slow) == 1
    assert _plans.launch(twin, plan, (), {}, sz) is kernel and len(slow) == 1
    assert kernel.calls == [
        (3, 2, 1, 77, "fn-handle", ("packed",), None, None, None, "X", 4, 64, "BUF", "BASE")
    ]
    assert _plans.counters["direct_launches"] == 1
    rt.launch_enter_hook = enter = object()  # a tool's launch hook gets Triton's metadata
    _plans.launch(twin, plan, (), {}, sz)
    assert kernel.calls[-1][6] == {"grid": (3, 2, 1), "stream": 77} and kernel.calls[-1][7] is enter
    for change in ("global", "device", "debug", "other"):
        if change == "global":
            gdict["SCALE"] = 3
        elif change == "device":
            gdict["SCALE"], dev["now"] = 2, 1
        elif change == "debug":
            dev["now"], rt.debug = 0, True  # Triton would compile a debug kernel
        else:
            rt.debug, dev["other"] = False, True
        _plans.launch(twin, plan, (), {}, sz)
        assert len(kernel.calls) == 2, change
    assert len(slow) == 5
    plan.backend = "hip"
    other = _plans.Sizing(records_per_program=1, dump_records_per_program=0, num_warps=None)
    _plans.launch(twin, plan, (), {}, other)
    assert other.direct is None
    jit.arg_names.append("unknown")
    plan.backend = "cuda"
    third = _plans.Sizing(records_per_program=1, dump_records_per_program=0, num_warps=None)
    _plans.launch(twin, plan, (), {}, third)
    assert third.direct is None  # a parameter the plan does not know: JITFunction.run always


def test_direct_launch_passes_a_pool_slice_as_its_address(monkeypatch):
    """A record buffer that is a slice of the pipeline's device pool goes to the launcher as its
    address (an int, which Triton's launchers take as it is), the bound arguments around it in
    parameter order; a twin with a launch_metadata function of its own gets the slice's tensor
    view when a launch hook makes the metadata."""
    from types import SimpleNamespace

    kernel = _FakeCompiled()
    jit = SimpleNamespace(
        arg_names=["x", "__fp_ctx", "n", "BLOCK"],
        pre_run_hooks=[],
        used_global_vals={},
        launch_metadata=None,
    )
    twin = SimpleNamespace(jit=jit)
    rt = _fake_triton(monkeypatch, lambda: 0, lambda d: 5, lambda site, name: site == "jit.run")
    monkeypatch.setattr(_launch, "launch", lambda *a: kernel)
    pool = torch.zeros(64, dtype=torch.int64)
    base = pool.data_ptr()
    buf = _launch.PoolSlice(pool, base, 8, 16)
    assert buf.data_ptr() == base + 64 and buf.numel() == 16 and buf.device == pool.device
    plan = _launch.Launch(
        bound={"x": "X", "n": 4, "BLOCK": 64},
        grid=(1, 1, 1),
        programs=1,
        slots=1,
        arena_words=0,
        buffer=buf,
        backend="cuda",
    )
    for metadata_fn in (False, True):
        jit.launch_metadata = (lambda *a: {}) if metadata_fn else None
        sz = _plans.Sizing(records_per_program=1, dump_records_per_program=0, num_warps=None)
        _plans.launch(twin, plan, (), {}, sz)  # through JITFunction.run: learns the launcher
        assert sz.direct.split is not None
        _plans.launch(twin, plan, (), {}, sz)
        assert kernel.calls[-1][9:] == ("X", base + 64, 4, 64)
        rt.launch_enter_hook = object()
        _plans.launch(twin, plan, (), {}, sz)
        got = kernel.calls[-1][10]
        if metadata_fn:  # the tensor view of the slice, once made
            assert torch.is_tensor(got) and got.data_ptr() == base + 64 and got.numel() == 16
            assert buf.tensor() is got
        else:
            assert got == base + 64
        rt.launch_enter_hook = None


def _layout(**kw: Any) -> tuple[int, int, int, list[int]]:
    from flagprism import _ext

    args = dict(
        programs=4,
        records_per_program=10,
        dump_records_per_program=0,
        record_capacity=None,
        dump_capacity=None,
        nsites=3,
        nparams=0,
        nchecks=0,
        records=True,
        dumps=False,
        suppress=False,
    )
    args.update(kw)
    return _ext.debug_buffer_layout(**args)


def test_the_buffer_layout_is_the_library_s():
    """Both launch paths size the record buffer through fp_dbg_buffer_layout (the replayed one
    in C, the Python one through debug_buffer_layout): slots, arena, total words and the header
    with the tensor table made from the launch's values."""
    slots, arena, words, hdr = _layout()
    assert (slots, arena, words) == (10, 0, 8 + 4 * 10 * 8)
    assert hdr[:4] == [0x0031764742445046, 1 | (8 << 16) | (8 << 32), 10, 4] and len(hdr) == 8
    assert _layout(record_capacity=7)[0] == 1 and _layout(record_capacity=-5)[0] == 0
    assert _layout(records=False, record_capacity=100)[0] == 0  # check mode: no slots
    assert _layout(dumps=True, dump_records_per_program=2)[1] == 4 * 2 * 4096
    assert _layout(dumps=True)[1] == 1 and _layout(dumps=True, dump_capacity=0)[1] == 0
    # the check area: extended header, then one entry per parameter from its value
    x = torch.arange(12, dtype=torch.float32)
    view = x[2:10:2]
    vals = (view, 7, None)
    slots, arena, words, hdr = _layout(nparams=3, nchecks=2, suppress=True, values=vals)
    assert words == 16 + 4 * 3 + 32 * 2 + 4 * 10 * 8 and len(hdr) == 16 + 4 * 3
    assert hdr[8:12] == [3, 2, 1, 16 + 4 * 3 + 32 * 2] and hdr[12:16] == [0, 0, 0, 0]
    lo = view.data_ptr()
    assert hdr[16:20] == [lo, lo + (3 * 2 + 1) * 4, x.data_ptr(), x.data_ptr() + 48]
    assert hdr[20:28] == [0] * 8  # an int and None: no entry
    # on the interpreter a device tensor has no address the checks could compare with
    meta = torch.empty(4, device="meta")
    assert _layout(nparams=1, nchecks=1, values=(meta,), interp=True)[3][16:20] == [0] * 4
    with pytest.raises(ValueError, match="2 values for 3 parameters"):
        _layout(nparams=3, nchecks=1, values=(x, x))
    with pytest.raises(ValueError, match="debug_buffer_layout"):
        _layout(programs=-1)
    with pytest.raises(MemoryError, match="does not fit"):
        _layout(programs=1 << 40, record_capacity=(1 << 63) - 1)
