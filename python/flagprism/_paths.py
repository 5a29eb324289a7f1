# SPDX-License-Identifier: Apache-2.0
"""Launch paths that do not go through ``JITFunction.run``, translated into one that does.

A tool that instruments a kernel (the Debugger's twin) launches it through Triton's own
``JITFunction.run`` with the kernel's arguments, constexprs, launch options and grid. Kernel
libraries and compilers launch differently:

* **PyTorch Inductor** (``torch.compile``): ``CachingAutotuner.run(*args, stream=...)`` calls a
  generated launcher (or PyTorch's static CUDA launcher) with the non-constexpr arguments only;
  the config (block sizes, warps, stages) comes from autotuning and the grid from the config and
  the sizes. ``inductor_launch()`` recovers the whole launch.
  A kernel Inductor compiled in a worker process or loaded from its cache arrives with its
  ``JITFunction.fn`` dropped (``CachingAutotuner.prepare_for_pickle``); ``inductor_launch()``
  gets the function back from the kernel's own generated file (``CachingAutotuner.filename``).
* **FlagGems** ``LibEntry.run``: after the first launch of a specialisation it calls the cached
  ``CompiledKernel`` directly; its first launch goes through the wrapped function's ``run``
  (Autotuner, Heuristics, JITFunction), which is the path a tool can follow every time.

Each function raises ``Unsupported`` with a reason when the installed version does not look as
expected, so that the caller can say why a launch was not observed instead of skipping it.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any


class Unsupported(Exception):
    """This launch cannot be translated; str(e) says why, for the Debugger's summary."""


@dataclass
class Spec:
    """A launch as JITFunction.run would take it."""

    fn: Any  # the JITFunction (or InterpretedFunction)
    kwargs: dict[str, Any]  # every parameter by name, constexprs and launch options included
    grid: tuple[int, ...]
    config: str  # the chosen config, for the report


_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _param_names(fn: Any) -> list[str]:
    names = getattr(fn, "arg_names", None)
    if names:
        return list(names)
    return list(inspect.signature(fn.fn).parameters)


def _constexpr_names(fn: Any) -> set[str]:
    params = getattr(fn, "params", None)
    if params is not None:
        return {p.name for p in params if getattr(p, "is_constexpr", False)}
    import triton.language as tl

    out = set()
    for name, p in inspect.signature(fn.fn).parameters.items():
        ann = p.annotation
        if ann is tl.constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr"):
            out.add(name)
    return out


def _config_text(cfg: Any) -> str:
    parts = [f"{k}={v}" for k, v in sorted(getattr(cfg, "kwargs", {}).items())]
    for k in _OPTIONS:
        v = getattr(cfg, k, None)
        if v is not None:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def inductor_config(autotuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The config Inductor will launch with, autotuning first when it has not yet (its benchmark
    launches go through its own launchers, which nothing intercepts)."""
    if getattr(autotuner, "triton_interpret", False):
        configs = getattr(autotuner, "configs", None)
        if not configs:
            raise Unsupported("the Inductor kernel has no config")
        return configs[0]
    launchers = getattr(autotuner, "launchers", None)
    if launchers is None:
        raise Unsupported("this PyTorch's CachingAutotuner has no launchers")
    if len(launchers) == 0:
        autotuner.precompile()
        launchers = autotuner.launchers
    if len(launchers) > 1:
        autotuner.autotune_to_one_config(*args, **kwargs)
        launchers = autotuner.launchers
    if len(launchers) != 1:
        raise Unsupported(f"Inductor has {len(launchers)} configs left after autotuning")
    cfg = getattr(launchers[0], "config", None)
    if cfg is None:
        raise Unsupported("Inductor's launcher carries no config")
    return cfg


def user_kernel(fn: Any) -> Any:
    """For a user's kernel that torch.compile copied into its generated module (a triton_op or
    wrap_triton kernel), the user's own JITFunction (same name and source), so that reports name
    the user's file and lines; else `fn` itself."""
    mod = sys.modules.get("torch._higher_order_ops.triton_kernel_wrap")
    table = getattr(getattr(mod, "kernel_side_table", None), "id_to_kernel", None) if mod else None
    src = getattr(fn, "src", None)
    if not table or not src:
        return fn
    name = kernel_name(fn)
    for k in list(table.values()):
        orig = jit_function(k)
        if (
            orig is not None
            and orig is not fn
            and kernel_name(orig) == name
            and getattr(orig, "src", None) == src
        ):
            return orig
    return fn


# generated kernel file -> the JITFunction it defines, loaded once (guarded: launches of one
# kernel from several threads load it once)
_restored: dict[tuple[str, str], Any] = {}
_restored_lock = threading.Lock()


def _restore_inductor_fn(autotuner: Any, fn: Any) -> Any:
    """The JITFunction of an Inductor kernel whose Python function was dropped for pickling
    (compiled in a worker process, or loaded from Inductor's cache): the one its generated file
    (`autotuner.filename`) defines, with its source and globals. Raises Unsupported."""
    path = getattr(autotuner, "filename", None)
    meta = getattr(autotuner, "inductor_meta", None) or {}
    name = meta.get("kernel_name") or getattr(fn, "__name__", None)
    if not isinstance(path, str) or not path or not isinstance(name, str):
        raise Unsupported(
            "the Inductor kernel's function was dropped for pickling and its file is not known"
        )
    if not os.path.isfile(path):
        raise Unsupported(
            f"the Inductor kernel's function was dropped for pickling and its file {path} is gone"
        )
    key = (path, name)
    with _restored_lock:
        hit = _restored.get(key)
        if hit is not None:
            return hit
        try:
            spec = importlib.util.spec_from_file_location(
                f"_flagprism_inductor_{abs(hash(key)):x}", path
            )
            if spec is None or spec.loader is None:
                raise ImportError("no loader")
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        except Exception as e:  # noqa: BLE001 (the generated file is not ours to trust)
            raise Unsupported(
                f"reloading the Inductor kernel from {path} failed ({type(e).__name__}: {e})"
            ) from e
        # Inductor's own kernels are defined under their kernel name; a user's kernel (a
        # triton_op) keeps its own name, its kernel name has a suffix (_oob_scale_0)
        got = None
        for cand in (name, getattr(fn, "__name__", None)):
            got = jit_function(getattr(mod, cand, None)) if isinstance(cand, str) else None
            if got is not None and getattr(got, "fn", None) is not None:
                break
            got = None
        if got is None:
            named = f"{name} or {fn.__name__}" if getattr(fn, "__name__", name) != name else name
            raise Unsupported(f"{path} defines no @triton.jit function {named}")
        _restored[key] = got
        return got


@dataclass
class _InductorStatic:
    """What inductor_launch() works out once per Inductor kernel and config."""

    src: Any  # the Inductor kernel's JITFunction (restored where it was dropped)
    fn: Any  # the JITFunction launched (the user's, for a user kernel)
    cfg: Any
    plain: list[str]  # the parameters Inductor passes, in its order
    fixed: dict[str, Any]  # constexprs, the config's values and launch options
    config: str
    #: the launch's numbers (None for other arguments) -> (grid, arguments Inductor passes)
    grids: dict[tuple[Any, ...], tuple[tuple[int, ...], int]] = field(default_factory=dict)


_inductor_static: dict[int, tuple[Any, _InductorStatic]] = {}  # id(autotuner) -> (weakref, static)


def inductor_launch(autotuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Spec:
    """The launch `CachingAutotuner.run(*args, **kwargs)` is about to make, as a Spec. What does
    not change between its launches (parameter lists, constants, the config's values) is worked
    out once per kernel and config."""
    fn = getattr(autotuner, "fn", None)
    if fn is None or not hasattr(fn, "fn"):
        raise Unsupported("the Inductor kernel is not a @triton.jit function")
    if fn.fn is None:
        fn = _restore_inductor_fn(autotuner, fn)
    if kwargs:
        raise Unsupported(f"Inductor passed keyword arguments {sorted(kwargs)}")
    cfg = inductor_config(autotuner, args, kwargs)
    split = getattr(autotuner, "_interpret_args_grid", None)
    if split is None:
        raise Unsupported(
            "this PyTorch's CachingAutotuner cannot evaluate its grid (no _interpret_args_grid)"
        )
    hit = _inductor_static.get(id(autotuner))
    st = hit[1] if hit is not None and hit[0]() is autotuner else None
    if st is None or st.cfg is not cfg or st.src is not fn:
        st = _inductor_fixed(autotuner, fn, cfg)
        try:
            _inductor_static[id(autotuner)] = (weakref.ref(autotuner), st)
        except TypeError:
            pass
    # The grid is a function of the config and the launch's numbers (sizes): Inductor's own
    # evaluation (it generates and executes its grid expressions at each call) runs once per
    # distinct numbers; tensors are not read by it.
    args = tuple(args)
    gkey = tuple(a if a.__class__ in (int, float, bool) else None for a in args)
    got = st.grids.get(gkey)
    if got is None:
        try:
            call_args, grid = split(args, cfg)
        except Exception as e:
            raise Unsupported(f"evaluating Inductor's grid failed ({type(e).__name__}: {e})") from e
        got = (tuple(int(x) for x in grid), len(call_args))
        if len(st.grids) >= 256:
            st.grids.clear()
        st.grids[gkey] = got
    g, ncall = got
    call_args = args[:ncall]
    if len(call_args) != len(st.plain):
        raise Unsupported(
            f"Inductor passed {len(call_args)} arguments for {len(st.plain)} parameters"
        )
    out: dict[str, Any] = dict(zip(st.plain, call_args))
    out.update(st.fixed)
    return Spec(fn=st.fn, kwargs=out, grid=g, config=st.config)


def _inductor_fixed(autotuner: Any, fn: Any, cfg: Any) -> _InductorStatic:
    names = _param_names(fn)
    cx = _constexpr_names(fn)
    plain = [n for n in names if n not in cx]
    meta = getattr(autotuner, "triton_meta", {}) or {}
    sig = list((meta.get("signature") or {}).keys())
    if sig:
        plain = [n for n in sig if n not in cx and n in names]
    fixed: dict[str, Any] = {}
    constants = meta.get("constants") or {}
    for key, val in constants.items():
        name = key
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, int) and 0 <= key < len(names):
            name = names[key]
        if isinstance(name, str) and name in cx:
            fixed[name] = val
    for k, v in getattr(cfg, "kwargs", {}).items():
        fixed[k] = v
    have = set(plain) | set(fixed)
    missing = [
        n for n in names if n not in have and n in cx and _default(fn, n) is inspect.Parameter.empty
    ]
    if missing:
        raise Unsupported(f"the values of constexprs {missing} are not known")
    for k in _OPTIONS:
        v = getattr(cfg, k, None)
        if v is not None and not getattr(autotuner, "triton_interpret", False):
            fixed[k] = v
    if "enable_fp_fusion" in meta and not getattr(autotuner, "triton_interpret", False):
        fixed["enable_fp_fusion"] = meta["enable_fp_fusion"]
    return _InductorStatic(
        src=fn, fn=user_kernel(fn), cfg=cfg, plain=plain, fixed=fixed, config=_config_text(cfg)
    )


def _default(fn: Any, name: str) -> Any:
    try:
        return inspect.signature(fn.fn).parameters[name].default
    except Exception:  # noqa: BLE001
        return inspect.Parameter.empty


def jit_function(obj: Any) -> Any:
    """The JITFunction (or InterpretedFunction) under Autotuner/Heuristics/LibEntry wrappers, or
    None."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    kinds = (JITFunction, InterpretedFunction)
    seen = 0
    while obj is not None and not isinstance(obj, kinds) and seen < 8:
        obj = getattr(obj, "fn", None)
        seen += 1
    return obj if isinstance(obj, kinds) else None


def kernel_name(fn: Any) -> str:
    inner = getattr(fn, "fn", fn)
    return str(getattr(inner, "__name__", None) or getattr(fn, "__name__", None) or "kernel")


def source_file(fn: Any) -> str:
    inner = getattr(fn, "fn", fn)
    try:
        return inspect.getsourcefile(inner) or ""
    except (TypeError, OSError):
        return ""
