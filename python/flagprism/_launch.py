# SPDX-License-Identifier: Apache-2.0
"""One instrumented launch: bind the arguments, size and allocate the record buffer, launch the
twin, copy the buffer back and describe the launch for the report writer.

Sizing (documented for users in docs/guide/debugger.md): a program gets S record slots, the number of
records its sites would write if every site outside a loop ran once and every site inside loops
ran once per iteration. Trip counts come from ``range(...)``/``tl.range(...)`` bounds evaluated on
the host from the launch's scalar and constexpr arguments (and simple top-level assignments such
as ``num_k = tl.cdiv(K, BLOCK_K)``); a loop whose bounds cannot be evaluated there, and every
``while`` loop, counts ``LOOP_TRIPS`` iterations. ``record_capacity`` replaces the total
(``S = record_capacity // P``). The record area is capped at ``MAX_RECORD_BYTES``. Records that do
not fit are counted exactly in the header (overflow), never dropped silently.

This module does not rewrite kernels (``_rewrite.py``) nor write reports (the C library does).
"""

from __future__ import annotations

import math
import struct
import types
from dataclasses import dataclass
from typing import Any

from flagprism import _devbuf
from flagprism._rewrite import CTX, Twin

HEADER_WORDS = 8  # the record buffer's header (read_header)

#: Iterations assumed for a loop whose trip count is not known on the host.
LOOP_TRIPS = 64
#: The record area's default cap (bytes), the dump words wanted per dumping record and the dump
#: arena's default cap (words) are the library's (FP_DBG_MAX_RECORD_BYTES and its neighbours in
#: include/flagprism/debug.h): buffer_layout() sizes through it.


class PoolSlice:
    """A record buffer that is a slice of a launch pipeline's device pool (_dbgexport.allocator),
    without a tensor view per launch: what Triton's launcher reads of a pointer argument
    (data_ptr()) and what the Debugger reads (numel(), device); tensor() makes the view (int64)
    for what needs a tensor (JITFunction.run's specialization, reading the buffer back)."""

    __slots__ = ("_pool", "_first", "_words", "_ptr", "device", "_view")

    def __init__(self, pool: Any, base: int, first: int, words: int) -> None:
        self._pool = pool
        self._first = first
        self._words = words
        self._ptr = base + first * 8
        self.device = pool.device
        self._view = None

    def data_ptr(self) -> int:
        return self._ptr

    def numel(self) -> int:
        return self._words

    def tensor(self) -> Any:
        if self._view is None:
            self._view = self._pool[self._first : self._first + self._words]
        return self._view


def buffer_tensor(buf: Any) -> Any:
    """A launch's record buffer as a tensor (a PoolSlice's view)."""
    return buf.tensor() if isinstance(buf, PoolSlice) else buf


@dataclass
class Launch:
    """A prepared instrumented launch."""

    bound: dict[str, Any]
    grid: tuple[int, int, int]
    programs: int
    slots: int
    arena_words: int
    buffer: Any  # torch.Tensor (int64), or a PoolSlice of the pipeline's device pool
    backend: str
    #: warps of the kernel as launched and of the twin, and why ({"kernel", "twin", "reason"};
    #: _warps.decide); the twin is launched with num_warps=twin (launch_kwargs)
    num_warps: dict[str, Any] | None = None
    num_warps_given: bool = False
    #: the twin's register cap on NVIDIA GPUs ({"cap", "uncapped", "reason"}; _regs.decide), or
    #: None (not decided: other backends); the twin is launched with maxnreg=cap (launch_kwargs)
    registers: dict[str, Any] | None = None
    #: the device the record buffer lives on
    buffer_device: Any = None
    #: byte offset of the buffer in the launch pipeline's device pool, or None (its own buffer)
    pipe_offset: int | None = None
    #: extra twin arguments: the base tensor of each host TensorDescriptor argument
    #: (``__fp_db_<param>``, _memforms.py)
    extra: dict[str, Any] | None = None
    #: the stream the record buffer was prepared on (a device pool's slice), or None
    stream: int | None = None
    #: per parameter, what changes in its launch JSON entry between launches of one plan
    #: (_plans.scan), or None
    args_dyn: list[str] | None = None


def bind(
    jitfn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(parameter values with defaults applied, launch options) of a call like Triton's binder."""
    import inspect

    sig = inspect.signature(jitfn.fn)
    names = list(sig.parameters)
    params = {k: v for k, v in kwargs.items() if k in names}
    options = {k: v for k, v in kwargs.items() if k not in names}
    ba = sig.bind(*args, **params)
    ba.apply_defaults()
    return dict(ba.arguments), options


def eval_grid(grid: Any, bound: dict[str, Any]) -> tuple[int, int, int]:
    g = grid(bound) if callable(grid) else grid
    if isinstance(g, int) or not hasattr(g, "__len__"):
        g = (g,)
    g = tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {g}")
    return g + (1,) * (3 - len(g))  # type: ignore[return-value]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


_codes: dict[str, Any] = {}  # expression text -> its code object (compiled once)


def _code(expr: str) -> Any:
    """The code object of a host expression, compiled once (a bounded cache)."""
    c = _codes.get(expr)
    if c is None:
        c = compile(expr, "<flagprism-sizing>", "eval")
        if len(_codes) >= 4096:
            _codes.clear()
        _codes[expr] = c
    return c


def _scope_env(twin: Twin) -> dict[str, Any]:
    """The names of the kernel's scope a loop bound may use on the host (constexpr globals,
    triton/tl, cdiv), made once per twin (its scope is a copy taken when it was built)."""
    env = twin.extra.get("host_scope_env")
    if env is not None:
        return env
    import triton
    import triton.language as tl

    env = {
        "min": min,
        "max": max,
        "abs": abs,
        "int": int,
        "float": float,
        "len": len,
        "range": range,
    }
    scope = twin.extra.get("scope", {})
    lang = types.SimpleNamespace(cdiv=_cdiv, minimum=min, maximum=max, constexpr=lambda v: v)
    for name, val in scope.items():
        if val is tl or val is tl.core:
            env[name] = lang
        elif val is triton:
            env[name] = types.SimpleNamespace(cdiv=_cdiv, language=lang)
        elif isinstance(val, tl.constexpr):
            env[name] = val.value
        elif getattr(val, "__name__", None) == "cdiv" and getattr(val, "__module__", "").startswith(
            "triton"
        ):
            env[name] = _cdiv
    twin.extra["host_scope_env"] = env
    return env


def _host_env(twin: Twin, bound: dict[str, Any], upto_line: int) -> dict[str, Any]:
    """Names a loop bound may use on the host: scalar and constexpr arguments, constexpr
    globals, cdiv/min/max, and earlier top-level assignments that evaluate."""
    import triton.language as tl

    env = dict(_scope_env(twin))
    for name, val in bound.items():
        if isinstance(val, tl.constexpr):
            val = val.value
        if isinstance(val, (bool, int, float)):
            env[name] = val
        else:
            env.pop(name, None)
    for line, name, expr in twin.host_defs:
        if line >= upto_line:
            break
        try:
            v = eval(_code(expr), {"__builtins__": {}}, env) if expr else None
        except Exception:  # noqa: BLE001 - any failure means "not known on the host"
            v = None
        if isinstance(v, tl.constexpr):
            v = v.value
        if isinstance(v, (bool, int, float)):
            env[name] = v
        else:
            env.pop(name, None)
    return env


def _frame_env(
    twin: Twin,
    bound: dict[str, Any],
    frame: int,
    upto_line: int,
    memo: dict[tuple[int, int], dict[str, Any]],
) -> dict[str, Any]:
    """Names a loop bound inside a helper's twin (frame) may use on the host: the helper's
    parameters, evaluated from the call's argument expressions in the caller's names, and the
    helper's earlier top-level assignments."""
    key = (frame, upto_line)
    if key in memo:
        return memo[key]
    frames = getattr(twin, "frames", [])
    f = frames[frame - 1] if 0 < frame <= len(frames) else None
    if f is None:
        return {}
    caller = (
        _host_env(twin, bound, f.call_line)
        if f.parent == 0
        else _frame_env(twin, bound, f.parent, f.call_line, memo)
    )
    env: dict[str, Any] = {k: v for k, v in caller.items() if not isinstance(v, (bool, int, float))}
    for p, expr in f.arg_exprs.items():
        try:
            v = eval(_code(expr), {"__builtins__": {}}, caller)
        except Exception:  # noqa: BLE001 - not known on the host
            continue
        v = v.value if hasattr(v, "value") else v
        if isinstance(v, (bool, int, float)):
            env[p] = v
    for line, name, expr in f.host_defs:
        if line >= upto_line:
            break
        try:
            v = eval(_code(expr), {"__builtins__": {}}, env) if expr else None
        except Exception:  # noqa: BLE001
            v = None
        v = v.value if hasattr(v, "value") else v
        if isinstance(v, (bool, int, float)):
            env[name] = v
        else:
            env.pop(name, None)
    memo[key] = env
    return env


def loop_trips(twin: Twin, bound: dict[str, Any]) -> dict[int, int | None]:
    """Host-evaluated trip count of every loop of the twin (None: not known on the host). A
    `while` test's loop (extra_trip) runs once more than its body."""
    out: dict[int, int | None] = {}
    memo: dict[tuple[int, int], dict[str, Any]] = {}
    for loop in twin.loops:
        trips = None
        if loop.range_args is not None and 1 <= len(loop.range_args) <= 3:
            frame = getattr(loop, "frame", 0)
            env = (
                _host_env(twin, bound, loop.line)
                if not frame
                else _frame_env(twin, bound, frame, loop.line, memo)
            )
            try:
                vals = [eval(_code(a), {"__builtins__": {}}, env) for a in loop.range_args]
                vals = [v.value if hasattr(v, "value") else v for v in vals]
                if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
                    trips = len(range(*vals))
            except Exception:  # noqa: BLE001
                trips = None
        if getattr(loop, "extra_trip", False):
            trips = (LOOP_TRIPS if trips is None else trips) + 1
        out[loop.id] = trips
    return out


def runs_per_program(trips: dict[int, int | None], loops: tuple[int, ...]) -> int:
    """How often a statement inside `loops` (loop ids, outermost first) runs in one program:
    the product of their trip counts, LOOP_TRIPS for one not known on the host."""
    mult = 1
    for lid in loops:
        t = trips.get(lid)
        mult *= LOOP_TRIPS if t is None else max(t, 0)
    return mult


def sites_per_program(twin: Twin, bound: dict[str, Any]) -> tuple[int, int]:
    """(records, dump records) one program of this launch would write: each site's executions,
    loop trips evaluated on the host (loop_trips)."""
    trips = loop_trips(twin, bound)
    rpp = sum(runs_per_program(trips, s.loops) for s in twin.sites)
    dpp = (
        sum(runs_per_program(trips, s.loops) for s in twin.sites if s.dumps)
        if twin.has_dumps
        else 0
    )
    return rpp, dpp


def buffer_layout(
    twin: Twin,
    programs: int,
    per_program: tuple[int, int],
    bound: dict[str, Any],
    backend: str,
    record_capacity: int | None,
    dump_capacity: int | None,
) -> tuple[int, int, int, list[int]]:
    """(record slots per program, dump arena words, total words, the words the host writes first)
    of a launch's record buffer, as the library sizes it (fp_dbg_buffer_layout: the replayed
    launch, python/ext/dbgfast.c, sizes through the same function). per_program:
    sites_per_program(); the tensor table is made from the launch's arguments (`bound`)."""
    from flagprism import _ext

    return _ext.debug_buffer_layout(
        programs=programs,
        records_per_program=per_program[0],
        dump_records_per_program=per_program[1],
        record_capacity=record_capacity,
        dump_capacity=dump_capacity,
        nsites=len(twin.sites),
        nparams=twin.nparams,
        nchecks=twin.nchecks,
        records=bool(twin.records),
        dumps=bool(twin.has_dumps),
        suppress=bool(twin.extra.get("suppress", False)),
        values=tuple(bound.get(p) for p in twin.checks.params) if twin.nchecks else (),
        interp=backend == "interpreter",
    )


def backend_of(jitfn: Any) -> str:
    from triton.runtime.interpreter import InterpretedFunction

    if isinstance(jitfn, InterpretedFunction):
        return "interpreter"
    try:
        from triton.runtime.driver import driver

        return str(driver.active.get_current_target().backend)
    except Exception:  # noqa: BLE001
        return "unknown"


_devices: dict[Any, Any] = {}  # ("cpu" | device index) -> torch.device


def buffer_device(backend: str) -> Any:
    """The device of a launch's record buffer: the host on the interpreter, else the driver's
    active torch device (for CUDA and HIP, PyTorch's current device, read without asking
    Triton's driver: once per instrumented launch)."""
    import torch

    if backend == "interpreter":
        d = _devices.get("cpu")
        if d is None:
            d = _devices["cpu"] = torch.device("cpu")
        return d
    if backend in ("cuda", "hip"):
        idx = torch.cuda.current_device()
        d = _devices.get(idx)
        if d is None:
            d = _devices[idx] = torch.device("cuda", idx)
        return d
    from triton.runtime.driver import driver

    get = getattr(driver.active, "get_active_torch_device", None)
    if get is not None:
        return get()
    return torch.device("cuda", torch.cuda.current_device())


def alloc_buffer(
    words: int, device: Any, settings: str, header_words: list[int] | None = None
) -> Any:
    """An int64 buffer of `words` on `device`, zero but for `header_words` at its start
    (_devbuf.new: no framework operator touches it); one that does not fit raises MemoryError
    naming its size and the settings that sized it, not the allocator's raw error."""
    try:
        return _devbuf.new(words, list(header_words or []), device)
    except (RuntimeError, MemoryError) as e:  # torch.OutOfMemoryError is a RuntimeError
        raise MemoryError(
            f"flagprism: the {words * 8:,}-byte record buffer of this launch does not fit "
            f"on {device} ({settings}): {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        ) from e


def _settings(record_capacity: int | None, dump_capacity: int | None) -> str:
    """The capacity settings an allocation error names (made only when one is raised)."""
    return f"record_capacity={record_capacity}, dump_capacity={dump_capacity}; None: sized from the launch"


def allocate(
    words: int,
    hdr: list[int],
    dev: Any,
    record_capacity: int | None,
    dump_capacity: int | None,
    alloc: Any = None,
) -> tuple[Any, int | None]:
    """The record buffer of a launch and its pool offset (None: a buffer of its own); alloc: see
    prepare(). A buffer that does not fit raises MemoryError naming its size and the settings."""
    if alloc is None:
        return alloc_buffer(words, dev, _settings(record_capacity, dump_capacity), hdr), None
    try:
        return alloc(words, hdr, dev)
    except (RuntimeError, MemoryError) as e:
        raise MemoryError(
            f"flagprism: the {words * 8:,}-byte record buffer of this launch does not fit "
            f"on {dev} ({_settings(record_capacity, dump_capacity)}): {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        ) from e


def host_descriptors(twin: Twin, bound: dict[str, Any]) -> dict[str, Any]:
    """The twin's extra arguments: the base tensor of each host TensorDescriptor argument."""
    return {
        f"__fp_db_{p}": bound[p].base
        for p in getattr(twin, "desc_params", [])
        if _is_host_descriptor(bound.get(p))
    }


def _is_host_descriptor(v: Any) -> bool:
    """A triton.tools.tensor_descriptor.TensorDescriptor (duck-typed: base tensor, block shape)."""
    return (
        hasattr(v, "base")
        and hasattr(v, "block_shape")
        and hasattr(getattr(v, "base", None), "data_ptr")
    )


def launch_kwargs(plan: Launch, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments the twin is launched with: the kernel's, the record buffer,
    num_warps when the twin's differs from the kernel's (or the kernel's was given), and the
    register cap when one was decided."""
    kw = dict(kwargs)
    kw[CTX] = buffer_tensor(plan.buffer)
    kw.update(plan.extra or {})
    nw = plan.num_warps
    if nw is not None and (plan.num_warps_given or nw["twin"] != nw["kernel"]):
        kw["num_warps"] = nw["twin"]
    if plan.registers and plan.registers.get("cap") and "maxnreg" not in kw:
        kw["maxnreg"] = plan.registers["cap"]
    return kw


def launch(twin: Twin, plan: Launch, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run the twin with the record buffer; returns what the twin's run returns."""
    return twin.jit.run(*args, grid=plan.grid, warmup=False, **launch_kwargs(plan, kwargs))


def buffer_bytes(plan: Launch) -> Any:
    """The record buffer on the host, as an object with the buffer protocol (a NumPy array)."""
    return _devbuf.read(buffer_tensor(plan.buffer))


# ------------------------------------------------------------------------------------------------
# Describing the launch for the report
# ------------------------------------------------------------------------------------------------

_TORCH_DTYPE_NAMES = {
    "float8_e4m3fn": "float8e4nv",
    "float8_e5m2": "float8e5",
}


def _dtype_name(dt: Any) -> str:
    name = str(dt).split(".")[-1]
    return _TORCH_DTYPE_NAMES.get(name, name)


def _json_value(v: Any) -> Any:
    import triton.language as tl

    if isinstance(v, tl.constexpr):
        v = v.value
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, (tuple, list)):
        return [_json_value(x) for x in v]
    return str(v)


def _scalar_dtype(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return (
            "int32" if -(2**31) <= v < 2**31 else ("int64" if -(2**63) <= v < 2**63 else "uint64")
        )
    if isinstance(v, float):
        return "float32"
    return type(v).__name__


def _tensor_entry(name: str, t: Any, backend: str | None = None) -> dict[str, Any]:
    """A tensor argument: dtype, shape, strides and the byte ranges the out-of-bounds check needs
    (data_ptr, element_size; storage_ptr/storage_nbytes: the whole allocation it lives in)."""
    entry: dict[str, Any] = {
        "name": name,
        "kind": "tensor",
        "dtype": _dtype_name(getattr(t, "dtype", "")),
        "shape": None,
        "strides": None,
        "data_ptr": int(t.data_ptr()),
        "storage_ptr": None,
        "storage_nbytes": None,
        "element_size": None,
        "value": None,
    }
    try:
        entry["shape"] = [int(x) for x in t.shape]
        entry["strides"] = [int(x) for x in t.stride()]
        entry["element_size"] = int(t.element_size())
        st = t.untyped_storage()
        entry["storage_ptr"] = int(st.data_ptr())
        entry["storage_nbytes"] = int(st.nbytes())
    except Exception:  # noqa: BLE001 - duck-typed pointer arguments
        pass
    dev = getattr(getattr(t, "device", None), "type", "cpu")
    if backend == "interpreter" and dev != "cpu":
        # The interpreter runs on host copies of device tensors: the kernel never sees these
        # addresses, so they cannot be compared with the recorded ones.
        entry["data_ptr"] = entry["storage_ptr"] = None
    return entry


def describe_args(
    jitfn: Any, bound: dict[str, Any], backend: str | None = None
) -> list[dict[str, Any]]:
    import inspect

    import triton.language as tl

    sig = inspect.signature(jitfn.fn)
    out: list[dict[str, Any]] = []
    for name, param in sig.parameters.items():
        ann = param.annotation
        is_cx = ann is tl.constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")
        out.append(describe_arg(name, bound.get(name), is_cx, backend))
    return out


def describe_arg(name: str, v: Any, is_cx: bool, backend: str | None = None) -> dict[str, Any]:
    """One argument of the launch JSON (docs/formats/debugger-report-schema.md)."""
    if is_cx:
        return {
            "name": name,
            "kind": "constexpr",
            "dtype": None,
            "shape": None,
            "strides": None,
            "data_ptr": None,
            "storage_ptr": None,
            "storage_nbytes": None,
            "element_size": None,
            "value": _json_value(v),
        }
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        return _tensor_entry(name, v, backend)
    if _is_host_descriptor(v):
        e = _tensor_entry(
            name, v.base, backend
        )  # host-side TensorDescriptor: its base is the allocation
        e["value"] = {"block_shape": _json_value(list(v.block_shape))}
        e["descriptor"] = {
            "shape": [int(x) for x in v.shape],
            "strides": [int(x) for x in v.strides],
            "block_shape": [int(x) for x in v.block_shape],
            "padding": str(getattr(v, "padding", "zero")),
        }
        return e
    return {
        "name": name,
        "kind": "scalar",
        "dtype": _scalar_dtype(v),
        "shape": None,
        "strides": None,
        "data_ptr": None,
        "storage_ptr": None,
        "storage_nbytes": None,
        "element_size": None,
        "value": _json_value(v),
    }


def read_header(raw: Any) -> list[int]:
    b = bytes(memoryview(raw).cast("B")[: HEADER_WORDS * 8])
    return list(struct.unpack("<8q", b))
