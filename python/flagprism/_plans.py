# SPDX-License-Identifier: Apache-2.0
"""The fast path of an instrumented launch: what depends only on the kernel, the launch's
specialization, the configuration and the checks is worked out once and cached
(docs/internals/debugger.md, "The launch fast path").

A launch is bound by a binder made once per kernel (its parameter names and defaults) and keyed
by its *specialization*: per parameter, a tensor's dtype and whether its address is 16-byte
aligned; an integer's width (32, 64 bits or unsigned), whether it is 1 and whether 16 divides
it; the type of a float, bool or None; a constexpr's value; a host tensor descriptor's dtype,
alignment, shape, strides and block shape; then the launch options (num_warps, ...) and the
device. Everything Triton specializes a compiled kernel on is in the key, so one key means one
compiled twin and one compiled kernel. The twin's warp and register settings are part of it too.

A *plan* per key holds what the key decides:

* per values of the few arguments the sizing reads (host-evaluated loop bounds, block sizes:
  ``sizing_params``), the records per program, the twin's warps (``_warps.decide``) and, on
  NVIDIA GPUs, its register cap (``_regs.decide``);
* the kernel's own compiled kernel, which the launch returns as Triton would;
* the launch JSON's argument templates: per launch, only pointers, shapes, strides and scalar
  values are read.

A launch the key cannot describe (tuple or string arguments, objects of other classes, a keyword
the binder cannot place) takes the slow path: bound by Triton's own binder and sized afresh,
without a plan; the first launch of each key is sized afresh too. Both size the record buffer
as the replayed launch does (``_launch.buffer_layout``: the library's
``fp_dbg_buffer_layout``). ``counters`` (``debugger.stats()["launch"]``) say how often each
happened.

Not here: the rewriting (``_rewrite.py``), the sizing rules (``_launch.py``), the warp and
register decisions (``_warps.py``, ``_regs.py``), the launch JSON's other fields
(``_dbgexport.py``).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import operator
import weakref
from dataclasses import dataclass, field
from typing import Any

from flagprism import _intercept, _launch

#: Plans kept per twin; past it they are all dropped (and counted) and made again as needed.
MAX_PLANS = 256
#: Sizings kept per plan (distinct values of the arguments the sizing reads), likewise.
MAX_SIZINGS = 64

#: What happened to the Debugger's launches since the process started (or reset()).
counters: dict[str, int] = {}


_generation = 0  # part of every key: forget=True makes every plan made before unreachable


#: why launches took the slow path: reason -> count (at most MAX_SLOW_REASONS reasons; the rest
#: are counted under "other")
slow_reasons: dict[str, int] = {}
MAX_SLOW_REASONS = 32


def reset(forget: bool = False) -> None:
    """Zero the counters; forget=True also makes every launch from now on build its plan anew
    (tests; the plans made before are dropped as their twins' plan tables fill)."""
    global _generation
    if forget:
        _generation += 1
    slow_reasons.clear()
    counters.clear()
    counters.update(
        twins_built=0,
        plans_built=0,
        plan_hits=0,
        sizings_built=0,
        sizing_hits=0,
        slow_launches=0,
        plans_dropped=0,
        originals_reused=0,
        registers_reused=0,
        direct_launches=0,
        fast_launches=0,
    )


reset()

UNSET = object()


# ------------------------------------------------------------------------------------------------
# The kernel: its parameters, once
# ------------------------------------------------------------------------------------------------


@dataclass
class KernelInfo:
    """What the fast binder and the key need of a kernel (a JITFunction or InterpretedFunction)."""

    names: tuple[str, ...]
    index: dict[str, int]
    defaults: dict[str, Any]
    constexprs: frozenset[str]
    #: only positional-or-keyword parameters: the fast binder applies
    simple: bool
    backend: str
    #: per parameter: (name, 0 for an argument, 1 for a constexpr the launch JSON describes as
    #: one, 2 for a constexpr only Triton knows as one)
    kinds: tuple[tuple[str, int], ...] = ()
    #: the same as two columns, for the extension's scan
    knames: tuple[str, ...] = ()
    kbytes: bytes = b""


_kinfo: dict[int, tuple[Any, KernelInfo]] = {}
_backends: dict[int, tuple[Any, str]] = {}


def backend_of(jitfn: Any) -> str:
    """_launch.backend_of, once per kernel."""
    key = id(jitfn)
    hit = _backends.get(key)
    if hit is not None and hit[0]() is jitfn:
        return hit[1]
    backend = _launch.backend_of(jitfn)
    try:
        _backends[key] = (weakref.ref(jitfn, lambda _r, k=key: _backends.pop(k, None)), backend)
    except TypeError:
        pass
    return backend


def kernel_info(jitfn: Any) -> KernelInfo:
    key = id(jitfn)
    hit = _kinfo.get(key)
    if hit is not None and hit[0]() is jitfn:
        return hit[1]
    import triton.language as tl

    from flagprism import _paths

    sig = inspect.signature(jitfn.fn)
    params = list(sig.parameters.values())
    names = tuple(p.name for p in params)
    triton_cx = frozenset(_paths._constexpr_names(jitfn))
    kinds = []
    for p in params:
        ann = p.annotation  # as _launch.describe_args tells a constexpr
        described = ann is tl.constexpr or (
            isinstance(ann, str) and ann.split(".")[-1] == "constexpr"
        )
        kinds.append((p.name, 1 if described else (2 if p.name in triton_cx else 0)))
    info = KernelInfo(
        names=names,
        index={n: i for i, n in enumerate(names)},
        defaults={p.name: p.default for p in params if p.default is not inspect.Parameter.empty},
        constexprs=triton_cx | frozenset(n for n, k in kinds if k),
        simple=all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params),
        backend=backend_of(jitfn),
        kinds=tuple(kinds),
        knames=tuple(n for n, _k in kinds),
        kbytes=bytes(k for _n, k in kinds),
    )
    try:
        _kinfo[key] = (weakref.ref(jitfn, lambda _r, k=key: _kinfo.pop(k, None)), info)
    except TypeError:
        pass
    return info


def _ext_fn(name: str) -> Any:
    """The extension's function `name`, or None without the extension (or an older one)."""
    try:
        from flagprism import _ext  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(_ext, name, None)


_bind_ext: Any = UNSET


def bind(
    info: KernelInfo, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(parameter values in signature order with defaults applied, launch options), as
    _launch.bind gives them; None where that binder would raise (it then says why). The
    extension's debug_bind() does it where it can (bind_py is the reference)."""
    global _bind_ext
    if _bind_ext is UNSET:
        _bind_ext = _ext_fn("debug_bind")
    if _bind_ext is not None and info.simple and args.__class__ is tuple:
        return _bind_ext(info.names, info.index, info.defaults, args, kwargs)  # type: ignore[no-any-return]
    return bind_py(info, args, kwargs)


def bind_py(
    info: KernelInfo, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """bind() in Python: the reference the extension's must equal."""
    names = info.names
    n = len(args)
    if not info.simple or n > len(names):
        return None
    bound = dict(zip(names, args))
    options: dict[str, Any] = {}
    by_name = False
    for k, v in kwargs.items():
        i = info.index.get(k)
        if i is None:
            options[k] = v
        elif i < n:
            return None  # given twice
        else:
            bound[k] = v
            by_name = True
    if len(bound) < len(names):
        for name in names[n:]:
            if name not in bound:
                if name not in info.defaults:
                    return None  # missing
                bound[name] = info.defaults[name]
        by_name = True
    if by_name:
        bound = {k: bound[k] for k in names}
    return bound, options


# ------------------------------------------------------------------------------------------------
# The key
# ------------------------------------------------------------------------------------------------

_tensor_cls: Any = None
_constexpr_cls: Any = None


def _classes() -> tuple[Any, Any]:
    global _tensor_cls, _constexpr_cls
    if _tensor_cls is None:
        import torch
        import triton.language as tl

        _tensor_cls, _constexpr_cls = torch.Tensor, tl.constexpr
    return _tensor_cls, _constexpr_cls


def _int_class(v: int) -> int:
    return 0 if -(2**31) <= v < 2**31 else (1 if -(2**63) <= v < 2**63 else 2)


def _value_json(v: Any) -> str:
    """A scalar's "value" in the launch JSON, as json.dumps(_launch._json_value(v)) writes it."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v.__class__ is int:
        return str(v)
    return json.dumps(_launch._json_value(v))


_scan_ext: Any = UNSET


def scan(info: KernelInfo, bound: dict[str, Any]) -> tuple[tuple[Any, ...], list[str]] | None:
    """The arguments' part of the launch's specialization (module text) and, per parameter, the
    part of its launch JSON entry that changes between launches of one specialization (see
    args_json); None when an argument is of a kind the key does not describe. The extension's
    debug_scan_args() does it in one pass where it can (scan_py is the reference)."""
    global _scan_ext
    if _scan_ext is UNSET:
        _scan_ext = _ext_fn("debug_scan_args")
    if _scan_ext is not None:
        tensor, cx = _classes()
        got = _scan_ext(info.knames, info.kbytes, bound, info.backend == "interpreter", tensor, cx)
        if got is not None:
            return got
    return scan_py(info, bound)


def scan_py(info: KernelInfo, bound: dict[str, Any]) -> tuple[tuple[Any, ...], list[str]] | None:
    """scan() in Python: descriptors, and the reference the extension's scan must equal."""
    tensor, cx = _classes()
    interp = info.backend == "interpreter"
    parts: list[Any] = []
    dyn: list[str] = []
    for name, kind in info.kinds:
        v = bound[name]
        if kind:
            if isinstance(v, cx):
                v = v.value
            parts.append((v.__class__, v))
            if kind == 1:
                dyn.append("")
                continue
            # a constexpr to Triton that the launch JSON describes as an argument
        t = v.__class__
        if t is int:
            if kind == 0:
                parts.append((int, _int_class(v), v == 1, v % 16 == 0))
            dyn.append(str(v) + "}")
        elif t is float or t is bool or v is None:
            if kind == 0:
                parts.append(t)
            dyn.append(_value_json(v) + "}")
        elif isinstance(v, tensor):
            ptr = v.data_ptr()
            if kind == 0:
                parts.append((v.dtype, ptr % 16 == 0))
            try:
                st = v.untyped_storage()
                if interp and v.device.type != "cpu":
                    ptrs = '"data_ptr": null, "storage_ptr": null'
                else:
                    ptrs = f'"data_ptr": {ptr}, "storage_ptr": {st.data_ptr()}'
                dyn.append(
                    f'"shape": {list(v.shape)}, "strides": {list(v.stride())}, {ptrs}, '
                    f'"storage_nbytes": {st.nbytes()}}}'
                )
            except Exception:  # noqa: BLE001 - a tensor without a storage: the slow path describes it
                return None
        elif _launch._is_host_descriptor(v) and isinstance(v.base, tensor):
            if kind == 0:
                try:
                    parts.append(
                        (
                            "desc",
                            v.base.dtype,
                            v.base.data_ptr() % 16 == 0,
                            tuple(int(x) for x in v.shape),
                            tuple(int(x) for x in v.strides),
                            tuple(int(x) for x in v.block_shape),
                            str(getattr(v, "padding", "zero")),
                        )
                    )
                except (TypeError, ValueError):
                    return None
            dyn.append(json.dumps(_launch.describe_arg(name, v, False, info.backend)))
        elif hasattr(v, "data_ptr") and hasattr(v, "dtype"):
            # a duck-typed pointer Triton takes as a tensor (FlagGems' StridedBuffer and
            # TypedPtr): its class is in the key, so the template's constant part (dtype,
            # element size) is the same for every launch of the plan
            try:
                e = _launch.describe_arg(name, v, False, info.backend)
                if kind == 0:
                    parts.append(
                        (v.__class__, v.dtype, int(v.data_ptr()) % 16 == 0, e["element_size"])
                    )
            except Exception:  # noqa: BLE001 - the slow path describes what it can
                return None
            dyn.append(
                ", ".join(
                    f"{json.dumps(k)}: {json.dumps(e[k])}"
                    for k in ("shape", "strides", "data_ptr", "storage_ptr", "storage_nbytes")
                )
                + "}"
            )
        else:
            return None
    return tuple(parts), dyn


def slow_reason(
    info: KernelInfo,
    b: tuple[dict[str, Any], dict[str, Any]] | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> str:
    """Why a launch's specialization has no key (bind, scan or spec_key said None), in words:
    the slow path only, so it may take its time."""
    if not info.simple:
        return "the kernel has keyword-only or variadic parameters"
    if b is None:
        if len(args) > len(info.names):
            return "more positional arguments than parameters"
        given = set(info.names[: len(args)])
        twice = sorted(k for k in kwargs if k in given)
        if twice:
            return f"argument {twice[0]!r} given by position and by name"
        missing = [n for n in info.names[len(args) :] if n not in kwargs and n not in info.defaults]
        return f"argument {missing[0]!r} missing" if missing else "arguments do not bind"
    bound, options = b
    for name, _kind in info.kinds:
        v = bound[name]
        if scan_py(dataclasses.replace(info, kinds=((name, _kind),)), {name: v}) is None:
            return f"argument {name!r} of type {type(v).__module__}.{type(v).__qualname__}"
    for k, v in options.items():
        try:
            hash(v)
        except TypeError:
            return f"launch option {k!r} of unhashable type {type(v).__qualname__}"
    return "a part of the specialization is not hashable"


def spec_key(
    info: KernelInfo,
    parts: tuple[Any, ...],
    options: dict[str, Any],
    device: Any,
    settings: tuple[Any, ...],
) -> tuple[Any, ...] | None:
    """The launch's specialization (module text): the arguments' part (scan), the launch options
    and the device; settings: the Debugger's options the plan depends on. None when a part is
    not hashable."""
    key = (device, parts, tuple(sorted(options.items())) if options else (), settings, _generation)
    try:
        hash(key)
    except TypeError:
        return None
    return key


# ------------------------------------------------------------------------------------------------
# Plans
# ------------------------------------------------------------------------------------------------


@dataclass
class Sizing:
    """What the values of a plan's sizing parameters decide."""

    records_per_program: int
    dump_records_per_program: int
    num_warps: dict[str, Any]
    #: the register decision on NVIDIA GPUs (_regs.decide), made at the first launch
    registers: dict[str, Any] | None = None
    #: how later launches reach the twin's compiled kernel without JITFunction.run (_Direct),
    #: None where they cannot, UNSET before the first launch
    direct: Any = UNSET
    #: what a replayed launch of this sizing repeats (_replay.learn), or None
    fast: Any = None


@dataclass
class Plan:
    """What one specialization of one twin decides (module text)."""

    key: tuple[Any, ...]
    sizing_params: tuple[str, ...]
    sizings: dict[tuple[Any, ...], Sizing] = field(default_factory=dict)
    #: the kernel's own compiled kernel (what its launch returns), once known
    original: Any = UNSET
    #: per parameter, the constant part of its launch JSON entry, made at the first launch
    args_tpl: list[str] | None = None
    #: the twin's sites and whether it dumps
    nsites: int = 0
    has_dumps: bool = False
    #: what a replayed launch of this plan repeats (_replay.learn), or None
    fast: Any = None


def _names_in(exprs: list[str]) -> set[str] | None:
    out: set[str] = set()
    for e in exprs:
        if not e:
            continue
        try:
            tree = ast.parse(e, mode="eval")
        except SyntaxError:
            return None
        out.update(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    return out


def sizing_params(twin: Any, jitfn: Any, info: KernelInfo) -> tuple[str, ...]:
    """The kernel's parameters whose values the records per program and the twin's warps may
    read beyond the key: the names in host-evaluated loop bounds and in tl.arange extents and
    shapes, and, through the top-level assignments and helper call arguments that define them,
    the names those read (all parameters when an expression does not parse). Other values (a
    mask's bound, say) do not change the sizing. An assignment that evaluates on the host for
    some values and not others only types a name as an integer when it does (_warps.decide):
    the sizing made with that knowledge stays right for the others."""
    hit = twin.extra.get("sizing_params")
    if hit is not None and hit[0] is jitfn:
        return hit[1]
    from flagprism import _warps

    roots: list[str] = []
    for loop in twin.loops:
        roots.extend(loop.range_args or [])
    defs: list[tuple[str, str]] = [(n, e) for _l, n, e in twin.host_defs]
    for f in getattr(twin, "frames", []):
        defs.extend(f.arg_exprs.items())
        defs.extend((n, e) for _l, n, e in f.host_defs)
    needed = _names_in(roots)
    reads = [(n, _names_in([e])) for n, e in defs]
    if needed is None or any(r is None for _n, r in reads):
        out = info.names
    else:
        needed |= _warps.names_read(jitfn)
        grew = True
        while grew:  # to a fixed point: what the needed names are computed from
            grew = False
            for name, r in reads:
                if name in needed and r and not r <= needed:
                    needed |= r
                    grew = True
        out = tuple(n for n in info.names if n in needed)
    twin.extra["sizing_params"] = (jitfn, out)
    return out


def _sizing_key(plan: Plan, bound: dict[str, Any]) -> tuple[Any, ...]:
    _t, cx = _classes()
    out = []
    for name in plan.sizing_params:
        v = bound[name]
        if isinstance(v, cx):
            v = v.value
        out.append((v.__class__, v) if isinstance(v, (bool, int, float)) else v.__class__)
    return tuple(out)


def prepare(
    twin: Any,
    jitfn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    grid: Any,
    cfg: Any,
    dev: Any,
    alloc: Any = None,
) -> tuple[_launch.Launch, Plan | None, Sizing | None]:
    """Bind, size and allocate one launch through the twin's plans: (the launch, its plan and
    sizing, or None and None for a launch that took the slow path). cfg: the Debugger's configuration; dev: the
    device of the record buffer (_launch.buffer_device)."""
    info = kernel_info(jitfn)
    b = bind(info, args, kwargs)
    key = None
    if b is not None:
        bound, options = b
        sc = scan(info, bound)
        if sc is not None:
            key = spec_key(info, sc[0], options, dev, (cfg.twin_num_warps, cfg.twin_maxnreg))
    if key is None:
        counters["slow_launches"] += 1
        why = slow_reason(info, b, args, kwargs)
        if why not in slow_reasons and len(slow_reasons) >= MAX_SLOW_REASONS:
            why = "other"
        slow_reasons[why] = slow_reasons.get(why, 0) + 1
        # Triton's own binder (raises as the launch would); everything worked out afresh
        bound, options = _launch.bind(jitfn, args, kwargs)
        sz = _size(twin, jitfn, bound, options, cfg)
        return _finish(twin, info, bound, options, grid, sz, cfg, dev, alloc), None, None
    plans = twin.extra.get("plans")
    if plans is None:
        plans = twin.extra["plans"] = {}
    plan = plans.get(key)
    if plan is None:
        if len(plans) >= MAX_PLANS:
            counters["plans_dropped"] += len(plans)
            plans.clear()
        plan = plans[key] = Plan(
            key=key,
            sizing_params=sizing_params(twin, jitfn, info),
            nsites=len(twin.sites),
            has_dumps=twin.has_dumps,
        )
        counters["plans_built"] += 1
    else:
        counters["plan_hits"] += 1
    skey = _sizing_key(plan, bound)
    sz = plan.sizings.get(skey)
    if sz is None:
        sz = _size(twin, jitfn, bound, options, cfg)
        if len(plan.sizings) >= MAX_SIZINGS:
            plan.sizings.clear()
        plan.sizings[skey] = sz
        counters["sizings_built"] += 1
    else:
        counters["sizing_hits"] += 1
    launch = _finish(twin, info, bound, options, grid, sz, cfg, dev, alloc)
    launch.args_dyn = sc[1]
    return launch, plan, sz


def _finish(
    twin: Any,
    info: KernelInfo,
    bound: dict[str, Any],
    options: dict[str, Any],
    grid: Any,
    sz: Sizing,
    cfg: Any,
    dev: Any,
    alloc: Any,
) -> _launch.Launch:
    """The launch of a sizing: its grid, its record buffer (sized by the library, as the replayed
    launch sizes it) allocated with its header, and the twin's extra arguments."""
    g = _launch.eval_grid(grid, bound)
    programs = g[0] * g[1] * g[2]
    slots, arena, words, hdr = _launch.buffer_layout(
        twin,
        programs,
        (sz.records_per_program, sz.dump_records_per_program),
        bound,
        info.backend,
        cfg.record_capacity,
        cfg.dump_capacity,
    )
    buf, offset = _launch.allocate(words, hdr, dev, cfg.record_capacity, cfg.dump_capacity, alloc)
    return _launch.Launch(
        bound=bound,
        grid=g,
        programs=programs,
        slots=slots,
        arena_words=arena,
        buffer=buf,
        backend=info.backend,
        num_warps=sz.num_warps,
        num_warps_given=options.get("num_warps") is not None,
        buffer_device=dev,
        pipe_offset=offset,
        extra=_launch.host_descriptors(twin, bound) if twin.desc_params else {},
    )


def _size(
    twin: Any, jitfn: Any, bound: dict[str, Any], options: dict[str, Any], cfg: Any
) -> Sizing:
    from flagprism import _warps

    rpp, dpp = _launch.sites_per_program(twin, bound)
    nw = _warps.decide(
        jitfn,
        options.get("num_warps"),
        _launch._host_env(twin, bound, 1 << 62),
        cfg.twin_num_warps,
        maxnreg=options.get("maxnreg"),
        pointers=frozenset(k for k, v in bound.items() if hasattr(v, "data_ptr")),
    )
    return Sizing(records_per_program=rpp, dump_records_per_program=dpp, num_warps=nw)


# ------------------------------------------------------------------------------------------------
# The launch JSON's arguments
# ------------------------------------------------------------------------------------------------


def args_json(plan: Plan | None, jitfn: Any, launch: _launch.Launch) -> str:
    """The launch JSON's "args" (JSON text), equal to json.dumps(_launch.describe_args(...)):
    the plan's templates joined with what scan() read of this launch's arguments."""
    dyn = getattr(launch, "args_dyn", None)
    if plan is None or dyn is None:
        return json.dumps(_launch.describe_args(jitfn, launch.bound, launch.backend))
    tpl = plan.args_tpl
    if tpl is None:
        tpl = plan.args_tpl = _template(_launch.describe_args(jitfn, launch.bound, launch.backend))
    return "[" + ", ".join([p + d for p, d in zip(tpl, dyn)]) + "]"


def _template(entries: list[dict[str, Any]]) -> list[str]:
    """Per argument, the part of its launch JSON entry that does not change between launches of
    one plan (scan() gives the rest)."""
    out: list[str] = []
    for e in entries:
        if e["kind"] == "constexpr":
            out.append(json.dumps(e))
        elif e["kind"] == "scalar":
            rest = {k: v for k, v in e.items() if k != "value"}
            out.append(json.dumps(rest)[:-1] + ', "value": ')
        elif e["kind"] == "tensor" and "descriptor" not in e:
            const = {
                "name": e["name"],
                "kind": "tensor",
                "dtype": e["dtype"],
                "element_size": e["element_size"],
                "value": e["value"],
            }
            out.append(json.dumps(const)[:-1] + ", ")
        else:
            out.append("")  # described whole at each launch
    return out


# ------------------------------------------------------------------------------------------------
# The twin's launch
# ------------------------------------------------------------------------------------------------


@dataclass
class _Direct:
    """One compiled twin and how to call its launcher: what JITFunction.run does after its cache
    lookup (Triton 3.4 to 3.9 alike), for launches whose plan and sizing decided that kernel."""

    kernel: Any
    device: int
    #: per twin parameter, in order: (0, name) from the bound arguments, (1, "") the record
    #: buffer, (2, name) from the launch's extra arguments (descriptor bases)
    order: tuple[tuple[int, str], ...]
    #: the globals the twin read at compile time: (name, value, the dict it was read from)
    globals_: tuple[tuple[str, Any, dict[str, Any]], ...]
    get_device: Any
    get_stream: Any
    #: triton.knobs: its `runtime` (the launch hooks) is read at each launch
    knobs: Any
    #: the compile-affecting knobs JITFunction.run reads at each launch, as when the twin was
    #: compiled (knobs.runtime.debug, knobs.compilation.instrumentation_mode)
    modes: tuple[Any, Any] = (None, None)
    #: the twin has a launch_metadata function of its own (it reads the launch's arguments)
    metadata_fn: bool = False
    #: where the parameters are the bound arguments and the record buffer only: getters of the
    #: arguments before and after the buffer (tuples), else None (order says)
    split: tuple[Any, Any] | None = None


_MISSING = object()


def launch(
    twin: Any,
    plan: _launch.Launch,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    sz: Sizing | None,
) -> Any:
    """Launch the twin: through its compiled kernel's launcher when an earlier launch of the same
    plan and sizing compiled it (JITFunction.run's binding, key and cache lookup are what the
    plan already decided; its checks of globals and device are repeated), else through
    JITFunction.run, after which the next launches of that sizing go direct where they can: on
    NVIDIA GPUs, with no other tool intercepting JITFunction.run, no pre-run hooks, and every
    twin parameter known."""
    d = sz.direct if sz is not None else None
    if d is not None and d is not UNSET:
        ret = _direct(d, plan)
        if ret is not None:
            counters["direct_launches"] += 1
            return ret
    ret = _launch.launch(twin, plan, args, kwargs)
    if sz is not None and d is UNSET:
        sz.direct = _learn(twin, plan, kwargs, ret)
    return ret


def _direct(d: _Direct, plan: _launch.Launch) -> Any:
    """The launch through d's launcher, or None when it must go through JITFunction.run."""
    if not _intercept.only("jit.run", "debugger") or d.get_device() != d.device:
        return None
    for name, val, gd in d.globals_:
        if gd.get(name, _MISSING) != val:
            return None  # JITFunction.run raises for that; let it
    if _modes(d.knobs) != d.modes:
        return None  # another compiled kernel: JITFunction.run compiles or finds it
    b = plan.bound
    ex = plan.extra
    buf = plan.buffer
    k = d.kernel
    stream = d.get_stream(d.device)
    g = plan.grid
    rt = d.knobs.runtime
    enter = rt.launch_enter_hook
    # a pool slice goes as its address (Triton's launchers take an int for a pointer as it is),
    # but the kernel's own launch_metadata function (run for a launch hook) sees the tensor
    if buf.__class__ is _launch.PoolSlice:
        buf = buf.tensor() if enter is not None and d.metadata_fn else buf.data_ptr()
    split = d.split
    if split is not None:  # the bound arguments around the buffer, taken in C
        vals = [*split[0](b), buf, *split[1](b)]
    else:
        vals = [b[n] if src == 0 else (buf if src == 1 else ex[n]) for src, n in d.order]
    md = k.launch_metadata(g, stream, *vals) if enter is not None else None
    k.run(
        g[0],
        g[1],
        g[2],
        stream,
        k.function,
        k.packed_metadata,
        md,
        enter,
        rt.launch_exit_hook,
        *vals,
    )
    return k


def _learn(twin: Any, plan: _launch.Launch, kwargs: dict[str, Any], ret: Any) -> _Direct | None:
    """How later launches of this sizing reach `ret` directly, or None."""
    if plan.backend != "cuda" or ret is None:
        return None
    if not all(hasattr(ret, a) for a in ("run", "function", "packed_metadata", "launch_metadata")):
        return None  # not a compiled kernel (an asynchronous compile's future, another Triton)
    jit = twin.jit
    if getattr(jit, "pre_run_hooks", None):
        return None
    order: list[tuple[int, str]] = []
    extra = plan.extra or {}
    for name in getattr(jit, "arg_names", ()):
        if name == _launch.CTX:
            order.append((1, ""))
        elif name in extra:
            order.append((2, name))
        elif name in plan.bound:
            order.append((0, name))
        else:
            return None
    if not order:
        return None
    try:
        from triton import knobs
        from triton.runtime import driver

        gd_items = tuple(
            (name, val, gd)
            for (name, _k), (val, gd) in getattr(jit, "used_global_vals", {}).items()
        )
        drv = driver.active
        return _Direct(
            kernel=ret,
            device=drv.get_current_device(),
            order=tuple(order),
            globals_=gd_items,
            get_device=drv.get_current_device,
            get_stream=drv.get_current_stream,
            knobs=knobs,
            modes=_modes(knobs),
            metadata_fn=getattr(jit, "launch_metadata", None) is not None,
            split=_split(order),
        )
    except Exception:  # noqa: BLE001 - a Triton without these: JITFunction.run every time
        return None


def _getter(names: list[str]) -> Any:
    """A function of the bound arguments giving the values of `names` as a tuple."""
    if len(names) >= 2:
        return operator.itemgetter(*names)
    if names:
        name = names[0]
        return lambda b: (b[name],)
    return lambda b: ()


def _split(order: list[tuple[int, str]]) -> tuple[Any, Any] | None:
    srcs = [src for src, _n in order]
    if srcs.count(1) != 1 or 2 in srcs:
        return None
    at = srcs.index(1)
    return (_getter([n for _s, n in order[:at]]), _getter([n for _s, n in order[at + 1 :]]))


def _modes(knobs: Any) -> tuple[Any, Any]:
    """What JITFunction.run adds to a launch's options from the knobs (Triton 3.7 on also the
    instrumentation mode)."""
    comp = getattr(knobs, "compilation", None)
    return (knobs.runtime.debug, getattr(comp, "instrumentation_mode", None))
