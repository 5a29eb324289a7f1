# SPDX-License-Identifier: Apache-2.0
"""The one registry of launch interceptors: every place where FlagPrism wraps a method on a
launch path (Triton's, PyTorch Inductor's, a kernel library's) goes through here.

Each *site* is one method of one class (``JITFunction.run``, ``CachingAutotuner.run``, ...). A
tool adds an *interceptor* to a site: ``interceptor(call_next, self, *args, **kwargs)``, which
either calls ``call_next(self, *args, **kwargs)`` (the next interceptor, or the original method)
or does the launch its own way. While a site has interceptors, one wrapper sits on the class and
dispatches through them in ``order`` (lower first, i.e. outermost); when the last one is removed
the original method is put back, unless something else has wrapped the method since (then our
wrapper stays and passes straight through, so nobody's wrapper is lost). Adding and removing are
reference counted per interceptor handle, safe from any thread and in any order: the wrapper reads
one immutable tuple, replaced whole under the lock.

Sites whose module is not imported yet (PyTorch Inductor, FlagGems) are patched when the module
is first imported, through a ``sys.meta_path`` finder, so nothing is imported on a tool's behalf.
A site whose class or method does not exist in the installed version is reported by
``add(...).note`` and skipped.

One site has two shapes, chosen by flagprism.compat's probe: ``interp.run`` is the method
``InterpretedFunction.run`` on Triton 3.6+; on 3.4 and 3.5 ``run`` is an attribute each instance
sets in ``__init__`` (autotuners call it) and ``kernel[grid](...)`` bypasses it. There the site
puts a data descriptor named ``run`` on the class (reads get the wrapper bound to the instance,
the instance's own ``run`` stays in its ``__dict__`` and is what the wrapper ends in) and makes
``__getitem__`` launch through ``run`` as 3.6 does, so both paths reach the interceptors with the
same arguments (``*args, grid, warmup, **kwargs``). Both are undone when the last interceptor goes.

``internal()`` marks FlagPrism's own work (allocating, zeroing and copying record buffers,
reading results back): every interceptor lets launches inside it pass through untouched, so no
tool observes or records what FlagPrism does for itself, whatever library serves PyTorch's
operators. The Profiler's CUPTI backend honours the same mark in C.

Nothing here decides what to do with a launch: the Debugger, the Profiler and timelines do.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Interceptor = Callable[..., Any]

#: The sites FlagPrism knows: key -> (module, class, method). Absent modules are patched on import.
SITES: dict[str, tuple[str, str, str]] = {
    "jit.run": ("triton.runtime.jit", "JITFunction", "run"),
    "interp.run": ("triton.runtime.interpreter", "InterpretedFunction", "run"),
    "interp.grid": ("triton.runtime.interpreter", "GridExecutor", "__call__"),
    "autotune.run": ("triton.runtime.autotuner", "Autotuner", "run"),
    "autotune.bench": ("triton.runtime.autotuner", "Autotuner", "_bench"),
    "inductor.run": ("torch._inductor.runtime.triton_heuristics", "CachingAutotuner", "run"),
    "libentry.run": ("flag_gems.utils.libentry", "LibEntry", "run"),
    "cudagraph.capture_begin": ("torch.cuda.graphs", "CUDAGraph", "capture_begin"),
    "cudagraph.capture_end": ("torch.cuda.graphs", "CUDAGraph", "capture_end"),
    "cudagraph.replay": ("torch.cuda.graphs", "CUDAGraph", "replay"),
    "cudagraph.warmup": ("torch._inductor.cudagraph_trees", "CUDAWarmupNode", "run"),
}


@dataclass
class Handle:
    """What add() returns: pass it to remove(). ``note`` says why the site is not (yet) hooked:
    None once it is; "pending import" while its module is not imported; else the reason."""

    site: str
    name: str
    fn: Interceptor
    order: int
    note: str | None = None
    removed: bool = False


@dataclass
class _Site:
    key: str
    module: str
    cls_name: str
    attr: str
    handles: tuple[Handle, ...] = ()
    cls: Any = None
    original: Any = None  # the attribute as found in cls.__dict__ (None: inherited)
    inherited: bool = False
    wrapper: Any = None
    dispatch: Any = None  # original composed with the interceptors (what the wrapper calls)
    note: str | None = "pending import"
    pending: bool = False
    orig_fn: Any = None
    stats: dict[str, int] = field(default_factory=dict)
    placed: Any = None  # what the site put in cls.__dict__[attr] (the wrapper, or a descriptor)
    extra: list[tuple[Any, str, Any, Any]] = field(
        default_factory=list
    )  # (cls, attr, original, placed)


_lock = threading.RLock()
_sites: dict[str, _Site] = {}
_tls = threading.local()
_import_callbacks: dict[str, list[Callable[[Any], None]]] = {}


# ------------------------------------------------------------------------------------------------
# FlagPrism's own work
# ------------------------------------------------------------------------------------------------


def in_internal() -> bool:
    """True inside internal(): launches here are FlagPrism's own and pass every interceptor."""
    return getattr(_tls, "depth", 0) > 0


@contextlib.contextmanager
def internal() -> Iterator[None]:
    """Mark FlagPrism's own work on this thread (nestable); tell the C library too, so that the
    CUPTI backend does not record kernels launched inside it."""
    depth = getattr(_tls, "depth", 0)
    _tls.depth = depth + 1
    ext = _ext_mark()
    if ext is not None:
        ext(1)
    try:
        yield
    finally:
        _tls.depth = depth
        if ext is not None:
            ext(-1)


def _ext_mark() -> Callable[[int], Any] | None:
    try:
        from flagprism import _ext  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(_ext, "internal_mark", None)


# ------------------------------------------------------------------------------------------------
# The registry
# ------------------------------------------------------------------------------------------------


def add(site: str, name: str, fn: Interceptor, order: int = 100) -> Handle:
    """Add interceptor `fn` (named `name`, for notes) to `site` at `order` (lower = outer)."""
    if site not in SITES:
        raise KeyError(f"flagprism: unknown interception site {site!r}")
    h = Handle(site, name, fn, order)
    with _lock:
        s = _sites.get(site)
        if s is None:
            module, cls_name, attr = SITES[site]
            s = _Site(site, module, cls_name, attr)
            _sites[site] = s
        s.handles = tuple(sorted(s.handles + (h,), key=lambda x: x.order))
        _refresh(s)
        h.note = s.note
    return h


def remove(h: Handle | None) -> None:
    """Remove an interceptor added by add() (idempotent)."""
    if h is None:
        return
    with _lock:
        if h.removed:
            return
        h.removed = True
        s = _sites.get(h.site)
        if s is None:
            return
        s.handles = tuple(x for x in s.handles if x is not h)
        _refresh(s)


def note(site: str) -> str | None:
    """Why `site` is not hooked now (None when it is, or when nothing asked for it)."""
    with _lock:
        s = _sites.get(site)
        return None if s is None else s.note


def installed(site: str) -> bool:
    with _lock:
        s = _sites.get(site)
        return (
            s is not None
            and s.wrapper is not None
            and s.cls is not None
            and s.cls.__dict__.get(s.attr) is s.placed
        )


def names(site: str) -> list[str]:
    """The names of the interceptors at a site, outermost first (empty when none)."""
    with _lock:
        s = _sites.get(site)
        return [h.name for h in s.handles] if s is not None else []


def only(site: str, name: str) -> bool:
    """Whether `name` is the one interceptor at `site` (no lock: the handles are one immutable
    tuple, replaced whole)."""
    s = _sites.get(site)
    h = s.handles if s is not None else ()
    return len(h) == 1 and h[0].name == name


def original(site: str) -> Any:
    """The method the site's wrapper ends in (the class's own while not hooked), or None."""
    with _lock:
        s = _sites.get(site)
        if s is not None and s.orig_fn is not None:
            return s.orig_fn
        module, cls_name, attr = SITES[site]
    mod = sys.modules.get(module)
    cls = getattr(mod, cls_name, None) if mod is not None else None
    return getattr(cls, attr, None) if cls is not None else None


def _refresh(s: _Site) -> None:
    """Bring the class in line with the site's handles (lock held)."""
    if s.handles:
        if s.wrapper is None or s.cls is None:
            _patch(s)
        if s.cls is not None:
            s.dispatch = _compose(s.orig_fn, s.handles)
    else:
        s.dispatch = s.orig_fn
        if s.cls is not None and s.wrapper is not None:
            if s.cls.__dict__.get(s.attr) is s.placed:
                if s.inherited:
                    delattr(s.cls, s.attr)
                else:
                    setattr(s.cls, s.attr, s.original)
                for cls, attr, original, placed in s.extra:
                    if cls.__dict__.get(attr) is placed:
                        setattr(cls, attr, original)
                s.extra = []
                s.wrapper = None
                s.placed = None
                s.cls = None
                s.orig_fn = None
            # else: something wrapped ours since; ours stays and passes straight through
        if s.pending:
            _Finder.forget(s.module)
            s.pending = False
        s.note = None


def _compose(orig: Any, handles: tuple[Handle, ...]) -> Any:
    call = orig
    for h in reversed(handles):
        call = _link(h.fn, call)
    return call


def _link(fn: Interceptor, nxt: Any) -> Any:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(nxt, self, *args, **kwargs)

    return call


def _patch(s: _Site) -> None:
    mod = sys.modules.get(s.module)
    if mod is None:
        s.note = "pending import"
        if not s.pending:
            _Finder.watch(s.module)
            s.pending = True
        return
    cls = getattr(mod, s.cls_name, None)
    if cls is None:
        if getattr(getattr(mod, "__spec__", None), "_initializing", False):
            s.note = f"{s.module} was still being imported when the tool started"
        else:
            s.note = f"{s.module}.{s.cls_name} does not exist in this version"
        return
    if s.key == "interp.run" and s.attr not in cls.__dict__ and _instance_run(cls):
        _patch_instance_run(s, cls)
        return
    if s.attr in cls.__dict__:
        original, inherited = cls.__dict__[s.attr], False
    elif hasattr(cls, s.attr):
        original, inherited = None, True
    else:
        s.note = f"{s.module}.{s.cls_name}.{s.attr} does not exist in this version"
        return
    orig_fn = getattr(cls, s.attr) if inherited else original
    if isinstance(orig_fn, (staticmethod, classmethod)):
        s.note = f"{s.module}.{s.cls_name}.{s.attr} is not a plain method"
        return
    site = s

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return site.dispatch(self, *args, **kwargs)

    wrapper.__name__ = getattr(orig_fn, "__name__", s.attr)
    wrapper.__qualname__ = getattr(orig_fn, "__qualname__", s.attr)
    wrapper.__doc__ = getattr(orig_fn, "__doc__", None)
    wrapper.__wrapped__ = orig_fn  # type: ignore[attr-defined]
    wrapper._fp_site = s.key  # type: ignore[attr-defined]
    if inherited:
        # a method bound through the base class: call it as the base does
        base_attr = orig_fn

        def orig_call(self: Any, *args: Any, **kwargs: Any) -> Any:
            return base_attr(self, *args, **kwargs)

        s.orig_fn = orig_call
    else:
        s.orig_fn = orig_fn
    s.cls, s.original, s.inherited, s.wrapper, s.placed = cls, original, inherited, wrapper, wrapper
    s.dispatch = s.orig_fn
    setattr(cls, s.attr, wrapper)
    s.note = None
    if s.pending:
        _Finder.forget(s.module)
        s.pending = False


def _instance_run(cls: Any) -> bool:
    """InterpretedFunction without a run method (Triton 3.4, 3.5: flagprism.compat's probe)."""
    from flagprism import compat

    try:
        return not compat.interpreter_run_is_method()
    except Exception:  # noqa: BLE001 - not Triton's interpreter as we know it
        return False


class _RunSlot:
    """``InterpretedFunction.run`` where each instance sets its own ``run`` (Triton 3.4, 3.5): a data
    descriptor, so reads of ``obj.run`` get the site's wrapper bound to obj, while ``__init__``'s
    ``self.run = run`` still lands in the instance's ``__dict__``, where the wrapper finds it."""

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self.wrapper
        return self.wrapper.__get__(obj, cls)

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__["run"] = value

    def __delete__(self, obj: Any) -> None:
        obj.__dict__.pop("run", None)


def _patch_instance_run(s: _Site, cls: Any) -> None:
    """The interp.run site on Triton 3.4/3.5 (see the module's docstring)."""
    site = s

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return site.dispatch(self, *args, **kwargs)

    def orig_run(self: Any, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        if warmup:
            return None  # as 3.6's run: nothing is built or run (the instance's would make a
            # GridExecutor that returns at once, which the Profiler would count as a launch)
        own = self.__dict__.get("run")
        if own is None:
            raise AttributeError(f"{type(self).__name__} has no run")
        # the instance's run reads kwargs["grid"]; GridExecutor drops warmup
        return own(*args, grid=grid, warmup=False, **kwargs)

    def getitem(self: Any, grid: Any) -> Any:
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    wrapper.__name__ = "run"
    wrapper.__qualname__ = f"{cls.__name__}.run"
    wrapper._fp_site = s.key  # type: ignore[attr-defined]
    slot = _RunSlot(wrapper)
    old_getitem = cls.__dict__.get("__getitem__")
    getitem.__name__ = "__getitem__"
    getitem.__qualname__ = f"{cls.__name__}.__getitem__"
    getitem.__wrapped__ = old_getitem  # type: ignore[attr-defined]
    s.orig_fn = orig_run
    s.cls, s.original, s.inherited, s.wrapper, s.placed = cls, None, True, wrapper, slot
    s.dispatch = s.orig_fn
    setattr(cls, s.attr, slot)
    s.extra = []
    if old_getitem is not None:
        setattr(cls, "__getitem__", getitem)
        s.extra.append((cls, "__getitem__", old_getitem, getitem))
    s.note = None
    if s.pending:
        _Finder.forget(s.module)
        s.pending = False


def on_import(module: str, fn: Callable[[Any], None]) -> None:
    """Call fn(module object) once, right after `module` is first imported (for hooks on module
    functions rather than methods: torch.distributed's collectives, _dist.py). A module imported
    already is not watched: the caller patches it itself."""
    with _lock:
        _import_callbacks.setdefault(module, []).append(fn)
        _Finder.watch(module)


def _imported(module: str) -> None:
    """A watched module finished importing: patch the sites waiting for it."""
    with _lock:
        _Finder.forget(module)
        callbacks = _import_callbacks.pop(module, [])
        for s in _sites.values():
            if s.module == module and s.handles and s.pending:
                s.pending = False
                _patch(s)
                if s.cls is not None:
                    s.dispatch = _compose(s.orig_fn, s.handles)
                for h in s.handles:
                    h.note = s.note
    mod = sys.modules.get(module)
    for fn in callbacks:
        if mod is not None:
            fn(mod)


def status() -> dict[str, str | None]:
    """Every site asked for, with None (hooked) or why not: for notes and `flagprism doctor`."""
    with _lock:
        return {k: s.note for k, s in _sites.items() if s.handles}


# ------------------------------------------------------------------------------------------------
# Patching modules when they are imported
# ------------------------------------------------------------------------------------------------


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a watched module it asks the other finders, then wraps the
    loader so that the module's sites are patched right after it executes."""

    watched: set[str] = set()
    _inst: _Finder | None = None

    @classmethod
    def watch(cls, module: str) -> None:
        cls.watched.add(module)
        if cls._inst is None:
            cls._inst = cls()
        if cls._inst not in sys.meta_path:
            sys.meta_path.insert(0, cls._inst)

    @classmethod
    def forget(cls, module: str) -> None:
        cls.watched.discard(module)
        if not cls.watched and cls._inst is not None and cls._inst in sys.meta_path:
            sys.meta_path.remove(cls._inst)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.watched:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(loader, fullname)
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = name

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        # the module's own loader, for anything that inspects it (source, resources)
        module.__loader__ = self.inner
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.inner
        self.inner.exec_module(module)
        _imported(self.name)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)
