# SPDX-License-Identifier: Apache-2.0
"""The Profiler's view of ``torch.compile``: each Inductor kernel launch gets the Python call path
of the compiled module's call and a note saying which model lines and ATen ops the kernel was
generated from; a CUDA graph replay gets the call path of the code that replays it.

Inductor launches its Triton kernels through ``CachingAutotuner.run``, with launchers that
captured Triton's launch-hook chain when they were built (later hooks see no launch metadata) or
through PyTorch's static CUDA launcher, which calls no Triton hook at all; either way the
frames below the launch are Inductor's. So the interceptor of "inductor.run" (the registry in
``_intercept.py``) reads the call path where the generated ``call()`` launches the kernel, adds
the kernel's first model line as a frame and its origin as the path's note, and makes that path
the thread's call path for the duration of the run (``_ext.prof_callpath_override``): the host
backend, the CUPTI launch callback and Triton's launch hooks all use it. The origin is read in C
(``_ext.inductor_origin``, include/flagprism/inductor.h) from the generated module's source and
the compiled graph's post-grad graph text, once per kernel.

PyTorch's own frames between the program and the generated ``call()`` (Dynamo's and
AOTAutograd's wrappers, ``nn.Module.__call__``) are left out of these paths.

The interceptor of "cudagraph.replay" does the same for ``torch.cuda.CUDAGraph.replay`` with the
replaying call path; the CUPTI backend joins it with the path each kernel was captured under.

Nothing here aggregates or formats: that is C's work.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from flagprism import _ext, _files, _intercept

_lock = threading.Lock()
_handles: list[_intercept.Handle] = []
_PROF_ORDER = 300  # innermost of the tools: the Debugger (100) may run a twin instead
_MAX_PATHS = 1 << 16

# id(autotuner) -> (weakref to it, frames to append, note): read once per kernel
_origins: dict[int, tuple[Any, tuple[str, ...], str | None]] = {}
# (base call path, id(autotuner)) -> (weakref to it, the extended call path's id)
_paths: dict[tuple[int, int], tuple[Any, int]] = {}
# generated module file -> the post-grad graph text of its compiled graph
_graphs: dict[str, str] = {}
# replaying call path -> the same without PyTorch's frames
_replay_paths: dict[int, int] = {}
# generated module file -> its text (None: unreadable)
_sources: dict[str, str | None] = {}

#: What the interceptors saw, for tests and the metadata: launches given a call path, kernels
#: whose origin was read, and kernels whose module did not define them.
stats = {"launches": 0, "kernels": 0, "no_origin": 0, "replays": 0}


def active() -> bool:
    """Whether any open session records launches (the profiler's published view)."""
    from flagprism import _profhook

    return bool(_profhook.view)


def install() -> list[str]:
    """Add the interceptors (idempotent). Returns notes for sites that cannot be hooked."""
    notes: list[str] = []
    with _lock:
        if _handles:
            return notes
        for site, fn in (("inductor.run", _inductor_run), ("cudagraph.replay", _graph_replay)):
            h = _intercept.add(site, "profiler", fn, _PROF_ORDER)
            _handles.append(h)
            if h.note not in (None, "pending import"):
                notes.append(f"{site} is not hooked: {h.note}")
    return notes


def uninstall() -> None:
    with _lock:
        for h in _handles:
            _intercept.remove(h)
        _handles.clear()


def _own_dir() -> str:
    import flagprism

    return os.path.dirname(os.path.abspath(flagprism.__file__)) + os.sep


def _caller(frame: Any) -> Any:
    """The first frame that is not FlagPrism's (the registry's wrapper sits between): the
    generated module's ``call()`` that launches the kernel."""
    own = _own_dir()
    for _ in range(8):
        if frame is None:
            return None
        if not frame.f_code.co_filename.startswith(own):
            return frame
        frame = frame.f_back
    return None


def _module_text(path: str) -> str | None:
    with _lock:
        if path in _sources:
            return _sources[path]
    try:
        text: str | None = _files.read_regular(path, errors="replace")
    except OSError:
        text = None
    with _lock:
        if len(_sources) > 4096:
            _sources.clear()
        _sources[path] = text
    return text


def _post_grad_graph(frame: Any) -> str | None:
    """The post-grad graph text of the compiled graph whose ``__call__`` is up the stack
    (``CompiledFxGraph.inductor_post_grad_graph_str``, torch 2.5+; CUDA-graph trees put a dozen
    frames of their own in between while they record), or None. Remembered per generated
    module, for launches from it whose stack does not show the compiled graph."""
    path = frame.f_code.co_filename if frame is not None else None
    text = _graph_walk(frame)
    with _lock:
        if text is not None and path:
            _graphs[path] = text
        elif path:
            text = _graphs.get(path)
    return text


def _graph_walk(frame: Any) -> str | None:
    for _ in range(48):
        if frame is None:
            return None
        try:
            obj = frame.f_locals.get("self")
        except Exception:  # noqa: BLE001
            obj = None
        if obj is not None and type(obj).__name__ == "CompiledFxGraph":
            text = getattr(obj, "inductor_post_grad_graph_str", None)
            return text if isinstance(text, str) and text else None
        frame = frame.f_back
    return None


def _kernel_name(autotuner: Any) -> str | None:
    meta = getattr(autotuner, "inductor_meta", None)
    name = meta.get("kernel_name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        fn = getattr(autotuner, "fn", None)
        name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name else None


def _ref(obj: Any) -> Callable[[], Any]:
    """A weak reference (a cache entry of a dead autotuner whose id was reused never matches),
    or a strong one for objects without weakref support."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _origin(autotuner: Any, caller: Any) -> tuple[tuple[str, ...], str | None]:
    """(frames to append, note) for this autotuner's kernel, read once."""
    key = id(autotuner)
    with _lock:
        hit = _origins.get(key)
    if hit is not None and hit[0]() is autotuner:
        return hit[1], hit[2]
    frames: tuple[str, ...] = ()
    note: str | None = None
    name = _kernel_name(autotuner)
    text = _module_text(caller.f_code.co_filename) if caller is not None else None
    if name and text:
        try:
            got = _ext.inductor_origin(text, name, _post_grad_graph(caller))
        except Exception:  # noqa: BLE001 - the launch is fine without its origin
            got = None
        if got is not None:
            note = got[0] or None
            frames = (got[1],) if got[1] else ()
    with _lock:
        if note is None and not frames:
            stats["no_origin"] += 1
        stats["kernels"] += 1
        _origins[key] = (_ref(autotuner), frames, note)
    return frames, note


def _torch_dir() -> str | None:
    torch = sys.modules.get("torch")
    f = getattr(torch, "__file__", None)
    return os.path.dirname(os.path.abspath(f)) + os.sep if isinstance(f, str) else None


def _user_frames(base: int) -> tuple[str, ...]:
    """The frames of call path `base` without PyTorch's own (Dynamo's and AOTAutograd's
    wrappers, nn.Module's __call__ machinery): what is left is the program's frames down to the
    generated module's ``call()``."""
    path = _ext.prof_callpath_frames(base)
    tdir = _torch_dir()
    if not tdir:
        return tuple(path)
    return tuple(f for f in path if not f.startswith(tdir))


def _path(autotuner: Any, caller: Any) -> int:
    """The call path of this launch: where it is made from, the kernel's model line, its note
    (interned once per calling place and kernel)."""
    base = _ext.prof_callpath_id()
    key = (base, id(autotuner))
    with _lock:
        hit = _paths.get(key)
    if hit is not None and hit[0]() is autotuner:
        return hit[1]
    frames, note = _origin(autotuner, caller)
    cp = _ext.prof_callpath_extend(None, _user_frames(base) + frames, note)
    with _lock:
        if len(_paths) >= _MAX_PATHS:
            _paths.clear()
        _paths[key] = (_ref(autotuner), cp)
    return cp


def _inductor_run(call_next: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    """CachingAutotuner.run: launch with the compiled module's call path (and the kernel's
    model lines) as this thread's call path."""
    if not active() or _intercept.in_internal():
        return call_next(self, *args, **kwargs)
    try:
        cp = _path(self, _caller(sys._getframe(1)))
    except Exception:  # noqa: BLE001 - the launch goes on with the frames' path
        return call_next(self, *args, **kwargs)
    prev = _ext.prof_callpath_override(cp)
    stats["launches"] += 1
    try:
        return call_next(self, *args, **kwargs)
    finally:
        _ext.prof_callpath_override(prev)


def _graph_replay(call_next: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    """CUDAGraph.replay: the graph launch carries the replaying call path (PyTorch's frames left
    out, as for Inductor's launches: cudagraph trees replay from deep inside torch); each kernel
    of the graph is filed under it, then under the path it was captured with."""
    if not active() or _intercept.in_internal():
        return call_next(self, *args, **kwargs)
    try:
        base = _ext.prof_callpath_id()
        with _lock:
            cp = _replay_paths.get(base)
        if cp is None:
            cp = _ext.prof_callpath_extend(None, _user_frames(base), None)
            with _lock:
                if len(_replay_paths) >= _MAX_PATHS:
                    _replay_paths.clear()
                _replay_paths[base] = cp
    except Exception:  # noqa: BLE001
        return call_next(self, *args, **kwargs)
    prev = _ext.prof_callpath_override(cp)
    stats["replays"] += 1
    try:
        return call_next(self, *args, **kwargs)
    finally:
        _ext.prof_callpath_override(prev)


def forget() -> None:
    """Drop what was read (tests)."""
    with _lock:
        _origins.clear()
        _paths.clear()
        _replay_paths.clear()
        _graphs.clear()
        _sources.clear()
        for k in stats:
            stats[k] = 0
