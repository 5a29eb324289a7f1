# SPDX-License-Identifier: Apache-2.0
"""Known-bad combinations of Triton, NumPy, PyTorch and Python, for Python code.

The table lives in the C library (``include/flagprism/compat.h``, one row per combination, read
by ``flagprism doctor`` too); this module finds the installed versions and asks the library which
rows apply::

    import flagprism.compat as compat
    for issue in compat.known_issues(mode="interpreter"):
        print(issue.message())

The test suite marks tests with ``@pytest.mark.compat("runtime-loops")`` and skips them, with the
row's words as the reason, where a row for that feature applies (tests/python/conftest.py).
Nothing in that half changes any setting or installs anything.

The other half is **the one place where Triton versions differ** (``docs/architecture.md``,
"Triton versions"). FlagPrism supports Triton ``SUPPORTED_TRITON`` (3.4 up to, not including,
3.10; ``pyproject.toml`` and the C library's table say the same). Every difference between those
versions that FlagPrism's code meets is handled by a function below, chosen by probing the
installed Triton for the feature (an attribute, an import, a signature, a tiny call), never by
its version string: a FlagTree or nightly build that has a feature gets it. ``triton_features()``
lists what was found (``flagprism doctor`` and the tests print it). Nothing else in the package
tests what Triton has; modules ask here.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import inspect
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flagprism import _ext

#: Distribution names that provide a component, first match wins. "triton" is upstream Triton
#: (and builds of it); where the installed ``triton`` package is Triton-Ascend's (triton_vendor()),
#: it is the component "triton-ascend" instead, with its own rows and range.
_DISTRIBUTIONS = {
    "triton": ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-nightly"),
    "triton-ascend": ("triton-ascend",),
    "torch": ("torch",),
    "numpy": ("numpy",),
}

_TRUTHY = {"1", "true", "yes", "on", "y"}


@dataclass(frozen=True)
class Issue:
    """One row of the table: see include/flagprism/compat.h for the fields."""

    id: str
    modes: tuple[str, ...]
    when: tuple[tuple[str, str | None, str | None], ...]
    feature: str
    breaks: str
    workaround: str

    def message(self, versions: dict[str, str | None] | None = None) -> str:
        """One line for people: what breaks, with the installed versions, and what to do."""
        found = versions if versions is not None else installed_versions()
        have = ", ".join(f"{c} {found.get(c) or '?'}" for c, _, _ in self.when)
        return f"{self.breaks} (installed: {have}); {self.workaround} [{self.id}]"


def _issue(d: dict) -> Issue:
    return Issue(
        id=d["id"],
        modes=tuple(d["modes"]),
        when=tuple(tuple(w) for w in d["when"]),
        feature=d["feature"],
        breaks=d["breaks"],
        workaround=d["workaround"],
    )


def issues() -> list[Issue]:
    """Every row of the table, in its order."""
    return [_issue(d) for d in _ext.compat_issues()]


def _version_of(component: str) -> str | None:
    if component == "python":
        return ".".join(str(p) for p in sys.version_info[:3])
    module = component
    if component in ("triton", "triton-ascend"):
        # one `triton` package, two components: which one it is comes from what it ships
        if (triton_vendor() == "ascend") != (component == "triton-ascend"):
            return None
        module = "triton"
    mod = sys.modules.get(module)
    v = getattr(mod, "__version__", None) if mod is not None else None
    if isinstance(v, str):
        return v
    for dist in _DISTRIBUTIONS.get(component, (component,)):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def installed_versions() -> dict[str, str | None]:
    """The installed version (or None) of every component the table names."""
    names = {c for d in _ext.compat_issues() for c, _, _ in d["when"]}
    return {c: _version_of(c) for c in sorted(names)}


def current_mode() -> str:
    """'interpreter' when TRITON_INTERPRET is set to a true value, else 'gpu'."""
    return "interpreter" if os.environ.get("TRITON_INTERPRET", "").lower() in _TRUTHY else "gpu"


def known_issues(
    mode: str | None = None, versions: dict[str, str | None] | None = None
) -> list[Issue]:
    """The rows that apply here: to `versions` (default: the installed ones) where kernels run in
    `mode` ('interpreter', 'gpu', 'any'; default: current_mode())."""
    found = versions if versions is not None else installed_versions()
    ids = set(_ext.compat_check(dict(found), mode or current_mode()))
    return [i for i in issues() if i.id in ids]


def skip_reason(feature: str, mode: str | None = None) -> str | None:
    """Why `feature` cannot work here (a row's message), or None when no row stops it."""
    found = installed_versions()
    for issue in known_issues(mode, found):
        if issue.feature == feature:
            return issue.message(found)
    return None


# ================================================================================================
# Triton: the supported range, and every difference between the supported versions
# ================================================================================================

#: Ids of the table's rows that bound the supported Triton range (src/core/compat.c).
ROW_TRITON_OLD = "triton-older-than-supported"
ROW_TRITON_NEW = "triton-newer-than-supported"
#: Ids of the rows that bound the Triton-Ascend releases FlagPrism is tested with.
ROW_ASCEND_NEW = "triton-ascend-newer-than-tested"
ROW_ASCEND_TUPLES = "triton-ascend3.2-no-tuple-values"


def supported_triton() -> tuple[str, str]:
    """(min, below): the Triton versions FlagPrism supports, min <= version < below, as the C
    library's table says (its two range rows); pyproject.toml's ``triton`` extra says the same."""
    rows = {r["id"]: r for r in _ext.compat_issues()}
    lo = rows[ROW_TRITON_OLD]["when"][0][2]
    hi = rows[ROW_TRITON_NEW]["when"][0][1]
    return str(lo), str(hi)


def ascend_tested() -> tuple[str, str]:
    """(min, below): the Triton-Ascend releases FlagPrism's Ascend tests run with
    (tests/python/test_ascend.py, docs/guide/backends.md), as the C library's rows say."""
    rows = {r["id"]: r for r in _ext.compat_issues()}
    lo = rows[ROW_ASCEND_TUPLES]["when"][0][1]
    hi = rows[ROW_ASCEND_NEW]["when"][0][1]
    return str(lo), str(hi)


def triton_vendor() -> str | None:
    """'ascend' when the installed ``triton`` package is Triton-Ascend's (it ships the ``ascend``
    compiler backend: probed, not read from a version string), else None (upstream Triton or a
    build of it, or no Triton)."""

    def probe() -> str | None:
        # looked for on disk, without importing Triton (the known-bad table is asked before)
        import importlib.util

        try:
            spec = importlib.util.find_spec("triton")
        except (ImportError, ValueError):
            return None
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            if os.path.isfile(os.path.join(loc, "backends", "ascend", "compiler.py")):
                return "ascend"
        return None

    return _probe("triton_vendor", probe)


def triton_supported(version: str | None = None) -> bool | None:
    """Whether Triton `version` (default: the installed one) is in the supported range; None when
    there is no upstream Triton (none, or Triton-Ascend's: triton_vendor()) or its version has no
    leading number."""
    v = version if version is not None else _version_of("triton")
    if not v or not v[0].isdigit():
        return None
    out = set(_ext.compat_check({"triton": v}, "any"))
    return not ({ROW_TRITON_OLD, ROW_TRITON_NEW} & out)


_MISSING = object()
_probe_lock = threading.RLock()
_probes: dict[str, Any] = {}


def _probe(name: str, fn: Callable[[], Any]) -> Any:
    """fn() once per process (a probe of the installed Triton, which does not change)."""
    with _probe_lock:
        hit = _probes.get(name, _MISSING)
        if hit is _MISSING:
            hit = _probes[name] = fn()
        return hit


# --- @constexpr_function --------------------------------------------------------------------------


def _constexpr_function_shim(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Triton 3.5's ``constexpr_function`` for a Triton without ``triton.runtime.jit.
    constexpr_function`` (3.4, whose ``tl.constexpr_function`` wraps every result, host calls
    included, in a constexpr): called by the code generator (``_semantic`` given) the result is a
    constexpr; called from Python (other constexpr functions, the interpreter) it is the plain
    value. Marked as a Triton builtin, which is what lets a @jit function reference it."""
    from triton.language.core import _unwrap_if_constexpr, constexpr

    @functools.wraps(fn)
    def wrapper(*args: Any, _semantic: Any = None, _builder: Any = None, **kwargs: Any) -> Any:
        res = fn(
            *[_unwrap_if_constexpr(a) for a in args],
            **{k: _unwrap_if_constexpr(v) for k, v in kwargs.items()},
        )
        # the code generator passes its semantic (3.4) or, before 3.4 (Triton-Ascend's 3.2), its
        # IR builder: either way the call is being compiled
        return res if _semantic is None and _builder is None else constexpr(res)

    wrapper.__triton_builtin__ = True  # type: ignore[attr-defined]
    return wrapper


def _constexpr_impl() -> Callable[..., Any]:
    def probe() -> Callable[..., Any]:
        try:
            from triton.runtime.jit import constexpr_function as cf
        except ImportError:
            return _constexpr_function_shim
        return cf

    return _probe("constexpr_function", probe)


def constexpr_function(fn: Callable[..., Any]) -> Any:
    """Decorator: a Python function that @jit code calls at compile time on constexprs (Triton's
    ``triton.runtime.jit.constexpr_function`` where it exists, 3.5+; an equivalent otherwise)."""
    return _constexpr_impl()(fn)


# --- the interpreter's launch path ----------------------------------------------------------------


def interpreter_run_is_method() -> bool:
    """True when ``InterpretedFunction.run(*args, grid, warmup, **kw)`` is a method and
    ``kernel[grid](...)`` goes through it (Triton 3.6+). Before, ``run`` is an attribute each
    instance sets in ``__init__`` (used by autotuners) and ``kernel[grid]`` builds the
    ``GridExecutor`` itself; the launch-interceptor registry (_intercept.py) then routes both
    through one ``run`` so that launches can be intercepted the same way."""

    def probe() -> bool:
        from triton.runtime.interpreter import InterpretedFunction

        return callable(getattr(InterpretedFunction, "run", None))

    return _probe("interpreter_run_is_method", probe)


def interpreted_options(fn: Any) -> dict[str, Any]:
    """The options an ``InterpretedFunction`` was decorated with (``launch_metadata``,
    ``do_not_specialize``...): its ``kwargs`` (3.5+), else its rewriter's (3.4)."""
    for holder in (fn, getattr(fn, "rewriter", None)):
        kw = getattr(holder, "kwargs", None)
        if isinstance(kw, dict):
            return kw
    return {}


# --- launch hooks -----------------------------------------------------------------------------------


class _SlotChain:
    """A hook chain (add/remove, like Triton's ``knobs.HookChain``) over a knob that holds one
    callable (Triton 3.4's ``launch_enter_hook``/``launch_exit_hook``; before 3.4, as in
    Triton-Ascend 3.2, class attributes of ``CompiledKernel``). While it has hooks, the
    knob holds its dispatcher, which calls whatever the knob held before first (last for a
    reversed chain, as exit hooks are); when the last hook goes, the previous value is put back,
    unless someone replaced the dispatcher meanwhile (then theirs stays)."""

    def __init__(self, name: str, reversed_: bool, holder: Callable[[], Any] | None = None) -> None:
        self.name = name
        self.holder = holder
        self.reversed = reversed_
        self.calls: list[Callable[..., Any]] = []
        self.prev: Any = None
        self.order: tuple[Callable[..., Any], ...] = ()
        self.hook = self._dispatch  # one bound method, so the knob's value can be recognised
        self.lock = threading.Lock()

    def _runtime(self) -> Any:
        if self.holder is not None:
            return self.holder()
        from triton import knobs

        return knobs.runtime

    def _dispatch(self, *args: Any, **kwargs: Any) -> None:
        for call in self.order:
            call(*args, **kwargs)

    def _reorder(self) -> None:
        calls = ([self.prev] if callable(self.prev) else []) + list(self.calls)
        self.order = tuple(reversed(calls)) if self.reversed else tuple(calls)

    def add(self, fn: Callable[..., Any]) -> None:
        with self.lock:
            if fn in self.calls:
                return
            rt = self._runtime()
            if getattr(rt, self.name, None) is not self.hook:
                self.prev = getattr(rt, self.name, None)
                self.calls = []
                setattr(rt, self.name, self.hook)
            self.calls.append(fn)
            self._reorder()

    def remove(self, fn: Callable[..., Any]) -> None:
        with self.lock:
            if fn not in self.calls:
                return
            self.calls.remove(fn)
            self._reorder()
            if not self.calls:
                rt = self._runtime()
                if getattr(rt, self.name, None) is self.hook:
                    setattr(rt, self.name, self.prev)
                self.prev = None
                self._reorder()

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self._dispatch(*args, **kwargs)


_slot_chains: dict[str, _SlotChain] = {}


def _compiled_kernel_class() -> Any:
    from triton.compiler.compiler import CompiledKernel

    return CompiledKernel


def hook_chain(name: str) -> Any:
    """Triton's hook chain ``knobs.runtime.<name>`` (an object with ``add``/``remove``: 3.5+),
    a _SlotChain over it where the knob holds a single callable (3.4), a _SlotChain over the
    class attribute ``CompiledKernel.<name>`` where Triton has no knobs (before 3.4: Triton-Ascend
    3.2, whose launchers read ``CompiledKernel.launch_enter_hook``/``launch_exit_hook``), or
    None where the hook does not exist (``kernel_load_end_hook`` before 3.5) or there is no
    Triton."""
    try:
        from triton import knobs
    except Exception:  # noqa: BLE001 - no Triton, or one without knobs
        try:
            ck = _compiled_kernel_class()
        except Exception:  # noqa: BLE001 - no Triton
            return None
        if name not in vars(ck):
            return None
        with _probe_lock:
            chain = _slot_chains.get(name)
            if chain is None:
                chain = _slot_chains[name] = _SlotChain(
                    name, reversed_=name.endswith("exit_hook"), holder=_compiled_kernel_class
                )
            return chain
    rt = knobs.runtime
    cur = getattr(rt, name, _MISSING)
    if cur is _MISSING:
        return None
    if callable(getattr(cur, "add", None)) and callable(getattr(cur, "remove", None)):
        return cur
    with _probe_lock:
        chain = _slot_chains.get(name)
        if chain is None:
            chain = _slot_chains[name] = _SlotChain(name, reversed_=name.endswith("exit_hook"))
        return chain


def hook_chains_native() -> bool:
    """Triton's launch hooks are add/remove chains (3.5+), not single callables (3.4, and the
    class attributes of Triton-Ascend 3.2)."""
    chain = hook_chain("launch_enter_hook")
    return chain is not None and not isinstance(chain, _SlotChain)


# --- compiling ------------------------------------------------------------------------------------


def make_ir(
    src: Any, target: Any, options: Any, codegen_fns: Any, module_map: Any, context: Any
) -> Any:
    """``ASTSource.make_ir``, which takes the target first from Triton 3.5 on."""
    params = _probe(
        "make_ir_target", lambda: "target" in inspect.signature(type(src).make_ir).parameters
    )
    if params:
        return src.make_ir(target, options, codegen_fns, module_map, context)
    return src.make_ir(options, codegen_fns, module_map, context)


def backends() -> tuple[str, ...]:
    """The compiler backends the installed Triton ships ("nvidia", "amd"...)."""

    def probe() -> tuple[str, ...]:
        try:
            from triton.backends import backends as found
        except Exception:  # noqa: BLE001
            return ()
        return tuple(sorted(found))

    return _probe("backends", probe)


def ast_source(fn: Any, signature: dict[str, str], constexprs: dict[str, Any]) -> Any:
    """``triton.compiler.ASTSource`` for `fn`: `signature` names every parameter's type
    ("constexpr" for those in `constexprs`). Triton 3.3+ takes the constexprs as ``constexprs=``
    with them in the signature; before (Triton-Ascend 3.2), as ``constants=`` without them."""
    from triton.compiler import ASTSource

    params = _probe(
        "ast_source_constexprs", lambda: "constexprs" in inspect.signature(ASTSource).parameters
    )
    if params:
        return ASTSource(fn=fn, signature=dict(signature), constexprs=dict(constexprs))
    sig = {k: v for k, v in signature.items() if k not in constexprs and v != "constexpr"}
    return ASTSource(fn=fn, signature=sig, constants=dict(constexprs))


# --- the language ---------------------------------------------------------------------------------


def tuple_values() -> bool:
    """The language has tuples as values (Triton 3.3+: ``tl.tuple``): passed to and returned
    from @jit functions, indexed there, constexpr tuples too. FlagPrism's device helpers use them
    (record words, block-pointer shapes, check candidates), so without them (Triton-Ascend 3.2,
    Triton 3.2's language) no twin compiles: known-bad row triton-ascend3.2-no-tuple-values."""

    def probe() -> bool:
        import triton.language as tl

        return isinstance(getattr(tl.core, "tuple", None), type)

    return _probe("tuple_values", probe)


#: What a twin's compile error says where the language is Triton-Ascend 3.2's (checked): tuple
#: values missing, and its own `|`/`&`/`^` rejecting a Python int on the left (`W | x`).
NO_TUPLE_MESSAGES = (
    "unsupported tensor index: constexpr",
    "'constexpr' object is not subscriptable",
    "'int' object has no attribute 'type'",
)


def explain_compile_error(e: BaseException) -> str | None:
    """The known-bad row behind an instrumented kernel's compile error, when the installed Triton
    itself is the cause (its language lacks what the device helpers use), or None."""
    if tuple_values():
        return None
    row = {r.id: r for r in issues()}.get(ROW_ASCEND_TUPLES)
    if triton_vendor() == "ascend" and row is not None:
        return row.message()
    return (
        "this Triton's language has no tuple values (Triton 3.3+), which FlagPrism's device "
        "helpers use: instrumented kernels cannot compile with it"
    )


class _ProbeSemantic:
    """Stands in for the code generator's semantic in the probes: any use of it fails."""


def block_pointers() -> bool:
    """``tl.make_block_ptr``/``tl.advance`` exist and work (Triton 3.9 removed them: they raise
    NotImplementedError before touching their arguments)."""

    def probe() -> bool:
        import triton.language as tl

        f = unpatched(getattr(tl.core, "make_block_ptr", None))
        if f is None:
            return False
        try:
            f(None, None, None, None, None, None, _semantic=_ProbeSemantic())
        except NotImplementedError:
            return False
        except Exception:  # noqa: BLE001 - it went on to use its arguments: implemented
            return True
        return True

    return _probe("block_pointers", probe)


def block_pointer_objects() -> bool:
    """Block pointers are Python aggregates (``__triton_block_ptr__``: Triton 3.8) rather than
    ``tl.tensor`` values of pointer-to-block type (3.4 to 3.7). Device helpers test values with
    ``getattr(x, "__triton_block_ptr__", False)`` themselves; this is for notes."""

    def probe() -> bool:
        import triton.language as tl

        return any(
            getattr(v, "__triton_block_ptr__", False) is True and isinstance(v, type)
            for v in vars(tl.core).values()
        )

    return _probe("block_pointer_objects", probe)


def reshape_can_reorder() -> bool:
    """``tl.reshape(..., can_reorder=True)`` is there and not deprecated (3.9 warns that it
    goes away in 3.10): the record helpers use it for reductions in any element order."""

    def probe() -> bool:
        import triton.language as tl

        f = unpatched(tl.core.reshape)
        try:
            params = inspect.signature(f).parameters
        except (TypeError, ValueError):
            return False
        return "can_reorder" in params and not hasattr(tl.core, "RESHAPE_CAN_REORDER_WARNING")

    return _probe("reshape_can_reorder", probe)


def interpreter_int_masks() -> bool:
    """The interpreter's loads accept a mask whose data is not boolean. Triton 3.9's (a C++ load)
    rejects it with "mask has unsupported dtype"; its own comparisons of scalars keep the
    operands' integer dtype, so a scalar condition broadcast to a block (``mask=pid < n`` on a
    block pointer, ``mask=offs_ok & (pid < n)``) fails there (known-bad row
    triton3.9-interpreter-scalar-masks). Probed with one masked load of a local word."""

    def probe() -> bool:
        try:
            import numpy as np
            from triton.runtime import interpreter as interp
        except Exception:  # noqa: BLE001
            return True
        load = getattr(getattr(interp, "_interpreter", None), "load", None)
        if load is None:
            return True  # a NumPy load: any mask NumPy takes
        word = np.zeros(1, dtype=np.int32)
        ptrs = np.array([word.ctypes.data], dtype=np.uint64)
        try:
            load(ptrs, np.ones(1, dtype=np.int32), np.zeros(1, dtype=np.int32), np.dtype(np.int32))
        except ValueError:
            return False
        return True

    return _probe("interpreter_int_masks", probe)


#: Where a launch of Triton 3.9's interpreter fails on a mask that is not boolean.
INT_MASK_MESSAGE = "mask has unsupported dtype"
INT_MASK_WORKAROUND = (
    "Triton 3.9's interpreter rejects masks that are not boolean, and its comparisons of scalars "
    "(`pid < n`) stay integers when broadcast to a block: compare a block instead, e.g. "
    "`mask = (pid + tl.zeros_like(offs)) < n` rather than `mask = pid < n`, or "
    "`offs_ok & (pid + tl.zeros_like(offs) < n)`; or run the interpreter with Triton 3.8, or the "
    "kernel on a GPU [triton3.9-interpreter-scalar-masks]"
)


#: Where a launch of Triton 3.6's interpreter fails on a loop bound under NumPy 2.4+ (the row
#: of the known-bad table that says so, which decides whether it applies here).
NUMPY_SCALAR_MESSAGE = "only 0-dimensional arrays can be converted to Python scalars"
ROW_NUMPY_SCALARS = "triton3.6-interpreter-numpy2.4"


def explain_interpreter_error(e: BaseException) -> str | None:
    """The workaround for an error a launch on the interpreter raised that comes from the
    installed Triton itself rather than from the kernel, or None."""
    text = f"{e!r} {e!s}"
    cause = e.__cause__ or e.__context__
    if cause is not None:
        text += f" {cause!r}"
    if INT_MASK_MESSAGE in text and not interpreter_int_masks():
        return INT_MASK_WORKAROUND
    if NUMPY_SCALAR_MESSAGE in text:
        found = installed_versions()
        for issue in known_issues("interpreter", found):
            if issue.id == ROW_NUMPY_SCALARS:
                return issue.message(found)
    return None


# --- the interpreter's patches of triton.language ---------------------------------------------------
#
# The interpreter runs kernels as Python by replacing triton.language's builtins with functions
# of its own. Triton 3.6+ scope that to a launch (but leave triton.language.core patched after a
# @jit helper is called from host code); 3.4 and 3.5 never put anything back. Compiling (TTIR
# on the interpreter, _ttir.py) and recognising Triton's functions (_warps.py) need the real
# ones: pristine_language() puts them back for a while, unpatched() finds one.


def _language_holders() -> list[Any]:
    import triton.language as tl

    out = [
        tl,
        tl.core,
        getattr(tl, "math", None),
        tl.core.tensor,
        tl.core.dtype,
        getattr(tl.core, "tensor_descriptor_base", None),
    ]
    return [o for o in out if o is not None]


def _qualname(v: Any) -> str:
    return str(
        getattr(v, "__qualname__", "")
        or getattr(getattr(v, "func", None), "__qualname__", "")
        or ""
    )


def _is_patch(v: Any) -> bool:
    """A value the interpreter put in place of a language object."""
    qn = _qualname(v)
    if qn.startswith(
        (
            "_patch_attr.",
            "_patch_lang_core.",
            "_patch_reduce_scan.",
            "_patch_lang_tensor.",
            "_patch_lang.",
        )
    ):
        return True
    if isinstance(v, property):
        return _is_patch(v.fget)
    return False


def unpatched(v: Any) -> Any:
    """The language object behind an interpreter patch of it (a builtin wrapped to call the
    interpreter's semantic keeps it as a default argument), else `v` itself."""
    seen = 0
    while callable(v) and seen < 64:
        kwd = getattr(v, "__kwdefaults__", None)
        if _qualname(v).startswith("_patch_attr.") and isinstance(kwd, dict) and "member" in kwd:
            v = kwd["member"]
            seen += 1
            continue
        break
    return v


class _Snapshot:
    """The language holders' attributes as they were before any interpreted launch (or as near
    as they can be recovered), and what could not be recovered."""

    def __init__(self) -> None:
        self.values: dict[int, tuple[Any, dict[str, Any]]] = {}
        self.lost: list[str] = []
        holders = _language_holders()
        current = {id(h): dict(vars(h)) for h in holders}
        for h in holders:
            vals: dict[str, Any] = {}
            for name, v in current[id(h)].items():
                if not _is_patch(v):
                    vals[name] = v
                    continue
                u = unpatched(v)
                if u is not v and not _is_patch(u):
                    vals[name] = u
                    continue
                # a replacement without the original in it: the same name in another holder
                for other in holders:
                    ov = unpatched(current[id(other)].get(name, _MISSING))
                    if other is not h and ov is not _MISSING and not _is_patch(ov) and callable(ov):
                        vals[name] = ov
                        break
                else:
                    self.lost.append(f"{getattr(h, '__name__', h)}.{name}")
            self.values[id(h)] = (h, vals)


_snapshot: _Snapshot | None = None


def remember_language() -> None:
    """Take the snapshot of triton.language that pristine_language() restores, if not taken yet.
    Called as early as possible: when flagprism is imported after Triton, or right after Triton's
    language is imported, and again before anything that needs it."""
    global _snapshot
    if _snapshot is not None or "triton.language" not in sys.modules:
        return
    with _probe_lock:
        if _snapshot is None:
            try:
                _snapshot = _Snapshot()
            except Exception:  # noqa: BLE001 - a Triton without these holders: nothing to restore
                _snapshot = None


def language_lost() -> list[str]:
    """Language attributes whose originals could not be found (flagprism imported after an
    interpreted launch of Triton 3.4/3.5): compiling may fail while they stay patched."""
    remember_language()
    return list(_snapshot.lost) if _snapshot is not None else []


# Triton's interpreter patches triton.language for the length of a launch; pristine_language()
# takes the patches off. Both hold this lock (the interpreted kernel through _profhook's
# interceptor of GridExecutor.__call__), so they never overlap on two threads.
language_lock = threading.RLock()


@contextlib.contextmanager
def pristine_language() -> Iterator[None]:
    """Put triton.language's own objects back for the duration (to compile on the interpreter),
    then the interpreter's patches again. Holds language_lock, which FlagPrism's interceptor of
    interpreted launches holds around the kernel: a twin or an estimate compiled on one thread
    never unpatches the language under a kernel another thread is interpreting."""
    with language_lock:
        with _pristine():
            yield


@contextlib.contextmanager
def _pristine() -> Iterator[None]:
    remember_language()
    snap = _snapshot
    saved: list[tuple[Any, str, Any]] = []
    added: list[tuple[Any, str, Any]] = []
    if snap is not None:
        for h, vals in snap.values.values():
            now = dict(vars(h))
            for name, v in now.items():
                if name in vals:
                    if vals[name] is not v:
                        saved.append((h, name, v))
                        setattr(h, name, vals[name])
                elif _is_patch(v):  # added by the interpreter (tensor.__bool__, __index__...)
                    added.append((h, name, v))
                    delattr(h, name)
    try:
        yield
    finally:
        for h, name, v in reversed(added):
            setattr(h, name, v)
        for h, name, v in reversed(saved):
            setattr(h, name, v)


def _watch_language() -> None:
    """Snapshot triton.language now if it is imported, else right after it is."""
    if "triton.language" in sys.modules:
        remember_language()
        return
    from flagprism import _intercept

    _intercept.on_import("triton.language", lambda _mod: remember_language())


# --- all of it ------------------------------------------------------------------------------------


def triton_features() -> dict[str, Any]:
    """What the installed Triton has, as probed (for doctor, notes and tests): every key is one
    of the differences above; values are booleans or short strings."""
    try:
        import triton
    except Exception as e:  # noqa: BLE001
        return {"triton": None, "error": f"{type(e).__name__}: {e}"}
    lo, hi = supported_triton()
    cf = _constexpr_impl()
    return {
        "triton": getattr(triton, "__version__", None),
        "supported_range": f">= {lo}, < {hi}",
        "supported": (
            None if triton_vendor() else triton_supported(getattr(triton, "__version__", None))
        ),
        "backends": list(backends()),
        "constexpr_function": "flagprism" if cf is _constexpr_function_shim else "triton",
        "interpreter_run_method": interpreter_run_is_method(),
        "hook_chains": hook_chains_native(),
        "kernel_load_hook": hook_chain("kernel_load_end_hook") is not None,
        "make_ir_takes_target": _probe(
            "make_ir_target",
            lambda: (
                "target"
                in inspect.signature(
                    __import__("triton.compiler", fromlist=["ASTSource"]).ASTSource.make_ir
                ).parameters
            ),
        ),
        "vendor": triton_vendor(),
        "ascend_tested": ">= {}, < {}".format(*ascend_tested()),
        "tuple_values": tuple_values(),
        "block_pointers": block_pointers(),
        "block_pointer_objects": block_pointer_objects(),
        "reshape_can_reorder": reshape_can_reorder(),
        "interpreter_int_masks": interpreter_int_masks(),
        "language_scoped_patches": _probe(
            "language_scoped_patches",
            lambda: hasattr(
                __import__("triton.runtime.interpreter", fromlist=["x"]), "_LangPatchScope"
            ),
        ),
    }


__all__ = [
    "Issue",
    "ascend_tested",
    "ast_source",
    "backends",
    "block_pointer_objects",
    "block_pointers",
    "constexpr_function",
    "current_mode",
    "explain_compile_error",
    "explain_interpreter_error",
    "hook_chain",
    "hook_chains_native",
    "installed_versions",
    "interpreted_options",
    "interpreter_int_masks",
    "interpreter_run_is_method",
    "issues",
    "known_issues",
    "make_ir",
    "pristine_language",
    "remember_language",
    "reshape_can_reorder",
    "skip_reason",
    "supported_triton",
    "triton_features",
    "triton_supported",
    "triton_vendor",
    "tuple_values",
    "unpatched",
]
