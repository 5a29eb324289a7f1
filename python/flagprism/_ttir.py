# SPDX-License-Identifier: Apache-2.0
"""TTIR of a ``@triton.jit`` function on a machine without a GPU, by compiling it for a CUDA
target without running it.

The Triton interpreter never builds IR, but the Debugger's op log joins records with TTIR ops and
the Profiler derives per-program estimates from TTIR. The function can still go through Triton's
front end for ``GPUTarget("cuda", 90, 32)``: this module re-creates it and every ``@triton.jit``
helper it reaches as compiled-mode ``JITFunction`` objects (the interpreter's
``InterpretedFunction`` cannot be compiled), builds the argument signature from a launch's
values, and runs the code generator and the TTIR passes only. Anything that fails yields
``(None, reason)``; callers say why the IR is missing. It is not used on GPU backends, where the
launched kernel has its TTIR (``kernel.asm["ttir"]``).
"""

from __future__ import annotations

import inspect
import threading
import types
from collections.abc import Callable
from typing import Any

from flagprism import compat

TARGET_BACKEND = "cuda"
TARGET_ARCH = 90
TARGET_WARP = 32

# Compiling flips process-wide Triton state (the interpret knob, patched language functions):
# one compilation at a time.
_compile_lock = threading.Lock()


def _scalar_sig(v: Any) -> str | None:
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        if -(2**31) <= v < 2**31:
            return "i32"
        if 2**31 <= v < 2**32:
            return "u32"
        if -(2**63) <= v < 2**63:
            return "i64"
        return "u64"
    if isinstance(v, float):
        return "fp32"
    return None


_TORCH_TO_TRITON = {
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}


def signature(
    fn: Callable[..., Any], bound: dict[str, Any], fixed: dict[str, str] | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """(signature, constexprs) of Python function ``fn`` for ASTSource, from a launch's bound
    arguments (defaults applied). ``fixed`` gives the type of parameters the caller adds
    itself (the Debugger's context pointer)."""
    import triton.language as tl

    sig: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    for name, p in inspect.signature(fn).parameters.items():
        if fixed and name in fixed:
            sig[name] = fixed[name]
            continue
        v = bound.get(name)
        ann = p.annotation
        if (
            ann is tl.constexpr
            or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")
            or v is None
        ):
            sig[name] = "constexpr"
            constexprs[name] = v.value if isinstance(v, tl.constexpr) else v
        elif hasattr(v, "data_ptr") and hasattr(v, "dtype"):
            tname = _TORCH_TO_TRITON.get(str(v.dtype).split(".")[-1])
            if tname is None:
                raise TypeError(f"argument {name}: dtype {v.dtype} has no Triton pointer type")
            sig[name] = "*" + tname
        else:
            s = _scalar_sig(v)
            if s is None:
                raise TypeError(
                    f"argument {name}: {type(v).__name__} values are not supported here"
                )
            if isinstance(v, int) and not isinstance(v, bool) and v == 1:
                # Triton specialises an int equal to 1 as a constant; do the same.
                sig[name] = "constexpr"
                constexprs[name] = 1
            else:
                sig[name] = s
    return sig, constexprs


def signature_key(
    fn: Callable[..., Any], bound: dict[str, Any], fixed: dict[str, str] | None = None
) -> str:
    """A string naming the specialization ``signature()`` gives (a cache key)."""
    try:
        sig, cx = signature(fn, bound, fixed)
    except Exception as e:  # noqa: BLE001
        return f"error:{e}"
    return repr((sorted(sig.items()), sorted((k, repr(v)) for k, v in cx.items())))


class Converter:
    """Maps interpreter objects (InterpretedFunction, modules holding them) to compiled-mode
    equivalents, sharing one converted copy of every module dictionary. A caller with objects of
    its own to map (the Debugger's record helpers) subclasses it and extends value()."""

    def __init__(self) -> None:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        self.IF = InterpretedFunction
        self.JF = JITFunction
        self.memo: dict[int, Any] = {}
        self.scopes: dict[int, dict[str, Any]] = {}

    def scope(self, g: dict[str, Any]) -> dict[str, Any]:
        key = id(g)
        hit = self.scopes.get(key)
        if hit is not None:
            return hit
        out: dict[str, Any] = dict(g)
        self.scopes[key] = out
        for k, v in g.items():
            out[k] = self.value(v)
        return out

    def value(self, v: Any) -> Any:
        if isinstance(v, self.IF):
            return self.function(v)
        if isinstance(v, types.ModuleType):
            return self.module(v)
        return v

    def function(self, f: Any) -> Any:
        key = id(f)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        jf = self.JF(f.fn, **dict(compat.interpreted_options(f)))
        self.memo[key] = jf
        jf.__globals__ = self.scope(f.fn.__globals__)
        return jf

    def module(self, m: types.ModuleType) -> Any:
        name = getattr(m, "__name__", "") or ""
        if name.split(".")[0] in ("builtins", "numpy", "torch") or name in ("triton",):
            return m
        key = id(m)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.memo[key] = m  # provisional: a cycle back to this module sees the original
        attrs = dict(vars(m))
        subs = {
            k: self.module(v)
            for k, v in attrs.items()
            if isinstance(v, types.ModuleType) and getattr(v, "__name__", "").startswith(name + ".")
        }
        if not any(isinstance(v, self.IF) for v in attrs.values()) and all(
            subs[k] is attrs[k] for k in subs
        ):
            return m
        proxy = types.ModuleType(name)
        self.memo[key] = proxy
        for k, v in attrs.items():
            if isinstance(v, self.IF):
                v = self.function(v)
            elif k in subs:
                v = subs[k]
            setattr(proxy, k, v)
        return proxy


def _ttir_only(src: Any, target: Any) -> str:
    """Run the code generator and the TTIR passes of the backend, nothing after."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(target)
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    codegen_fns = backend.get_codegen_implementation(options)
    module_map = backend.get_module_map()
    module = compat.make_ir(src, target, options, codegen_fns, module_map, context)
    stages: dict[str, Any] = {}
    backend.add_stages(stages, options, src.language)
    metadata = {"hash": "flagprism-ttir", "target": target, **options.__dict__}
    return str(stages["ttir"](module, metadata))


def interpreter_ttir(
    fn: Callable[..., Any],
    bound: dict[str, Any],
    fixed: dict[str, str] | None = None,
    what: str = "the kernel",
    converter: type[Converter] | None = None,
) -> tuple[str | None, str | None]:
    """(TTIR text, None) or (None, reason) for Python function ``fn`` (the ``.fn`` of a
    ``@triton.jit`` object) specialised for ``bound``. ``fixed``: see signature(). ``what``
    names it in reasons; ``converter`` replaces Converter."""
    try:
        from triton import knobs
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except Exception as e:  # noqa: BLE001
        return None, f"Triton's compiler is not importable: {e}"
    try:
        sig, constexprs = signature(fn, bound, fixed)
    except Exception as e:  # noqa: BLE001
        return None, f"cannot build a compile signature for {what}: {e}"
    try:
        # Importing the code generator pulls in Gluon, which checks Triton's own helpers against
        # the interpreter setting: import it while that setting is still on.
        import triton.compiler.code_generator  # noqa: F401

        # The interpreter leaves triton.language patched (3.4/3.5 after every launch, 3.6+ after
        # a @jit helper called from host code): compiling needs the real language back.
        with _compile_lock, knobs.runtime.scope(), compat.pristine_language():
            knobs.runtime.interpret = False
            conv = (converter or Converter)()
            jf = conv.JF(fn)
            jf.__globals__ = conv.scope(fn.__globals__)
            src = ASTSource(fn=jf, signature=sig, constexprs=constexprs)
            target = GPUTarget(TARGET_BACKEND, TARGET_ARCH, TARGET_WARP)
            return _ttir_only(src, target), None
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()
        return (
            None,
            f"compiling {what} for {TARGET_BACKEND}:{TARGET_ARCH} failed: {type(e).__name__}: "
            + (msg[-1] if msg else ""),
        )
