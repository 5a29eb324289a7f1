# SPDX-License-Identifier: Apache-2.0
"""Where the Profiler meets Triton's launch path: each launch is timed, named, given its grid,
its launch metadata and its IR estimate, and handed to the C core (``flagprism._ext``).

Two paths, both installed while a session is open and removed when the last one finalizes:

* **Interpreter** (``TRITON_INTERPRET=1``): Triton's interpreter calls no launch hook, so
  ``GridExecutor.__call__`` (the object ``InterpretedFunction.run`` builds and calls for every
  launch) is wrapped: the host clock is read around the interpreted launch and the launch is
  recorded with ``prof_host_launch``. The wrapper sits below ``InterpretedFunction.run``, which
  the Debugger wraps, so neither tool can undo the other's patch. The launching
  ``InterpretedFunction`` (for ``launch_metadata=`` and the kernel's source) is noted by a
  pass-through interceptor of ``InterpretedFunction.run`` (on Triton 3.4/3.5 the registry routes
  ``kernel[grid]`` through it), else found as the ``self`` of a caller's frame.
* **Compiled kernels**: ``knobs.runtime.launch_enter_hook``/``launch_exit_hook`` (Triton's hook
  chains, added to and removed from, never assigned; on Triton 3.4, whose knobs hold one
  callable each, ``flagprism.compat.hook_chain`` chains them), holding only what the open sessions need
  (``_sync_chains``). For sessions on the host backend, ``_gpu_enter``/``_gpu_exit``: times are
  host-measured launch times (enter to exit hook); the grid and the ``CompiledKernel`` (for
  ``asm["ttir"]``) come from the launcher's and ``JITFunction.run``'s frames. Sessions on the
  CUPTI backend get their kernel events from the device and never a host-timed launch (that
  would count every kernel twice). In shadow context nothing is added to the launch chains for
  them: the backend's launch callback reads scopes and state itself, and finds the kernel's
  per-program IR estimate in a table keyed by CUfunction that ``_kernel_loaded`` fills once
  per kernel from ``knobs.runtime.kernel_load_end_hook`` (kernels loaded before the session:
  ``_walk_loaded``, from Triton's caches). With hook="triton" or context="python" the
  extension's C hook ``cupti_hook`` hands the launch's per-program estimate, launch metadata
  and Python call path to the backend, in C for kernels it already knows (keyed by
  CUfunction), through ``_device_slow`` for a kernel's first launch. Interpreted launches run
  on the CPU and are not recorded in CUPTI sessions.

Estimates: TTIR is parsed and estimated in C (``ttir_estimate``), once per kernel and
specialization; on the interpreter the TTIR comes from compiling for a CUDA target without a GPU
(``_ttir.py``). The per-program bytes and FLOPs go to C, which multiplies them by the grid. Why an
estimate is missing, or what bounds it, is written to the metadata (``estimate:<kernel>``).

Nothing here aggregates or formats: that is C's work.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from flagprism import _ext, _files, _intercept, _proffacts, _profinductor, compat

# What the hooks read, without a lock. publish() replaces all of it whenever a session starts,
# finalizes, activates or deactivates (profiler.py calls it with its lock held).

#: The active sessions (profiler._Session objects), every backend.
view: tuple[Any, ...] = ()
#: The active sessions whose launches this module times and files (HOST_TIMED backends).
host_view: tuple[Any, ...] = ()
#: The active sessions on the CUPTI backend, and what any of them asks for. When none asks for
#: anything (shadow context, no hook, no estimates) the hooks leave CUPTI launches alone: the
#: backend reads the scopes and state itself.
device_view: tuple[Any, ...] = ()
device_hook = False
device_estimates = False
device_python = False
device_needs = False
#: Shadow-context estimates through the backend's per-kernel table (no launch hook): on while a
#: CUPTI session wants estimates and none needs the launch hook.
device_kest = False
#: Ids of open, deactivated, host-timed sessions: they count the launches they ignore.
host_inactive: tuple[int, ...] = ()
#: Every open host-timed session, active or not, read ONCE by a launch when it begins: each of
#: them gets the launch when it ends (recorded if active then, else counted as ignored, by C).
host_open: tuple[Any, ...] = ()

#: File-name prefixes left out of Python call paths besides flagprism's and Triton's own.
extra_skip: list[str] = []

#: Backends whose kernel events this module makes (host clock). A session on any other backend
#: (CUPTI) gets compiled kernels' events from its device activity source instead.
HOST_TIMED = frozenset({"host", "null"})
#: Backends that are told about each compiled launch through cupti_set_launch().
CUPTI = "cupti"

_lock = threading.RLock()
_installed = False
_notes: list[str] = []  # what install() could not hook, for every session's metadata
_grid_orig: _intercept.Handle | None = None  # our interceptor of GridExecutor.__call__
_run_h: _intercept.Handle | None = None  # ours of InterpretedFunction.run (notes the launcher)
_hooks_added = False
_tls = threading.local()
#: Launches in flight and the sessions finalize closes: a launch's end and a session's close
#: take this lock, so that each launch is filed in a session exactly once, or counted by its
#: finalize as still running (see _flight_begin/_flight_end/session_closing).
_flight = threading.Lock()

# (id(fn) or kernel hash, specialization) -> (fn or kernel, per-program (bytes, flops) or None,
# note for the metadata)
_est_cache: dict[tuple[Any, str], tuple[Any, tuple[float, float] | None, str]] = {}

# The backend's estimate table, as taught (process-wide, like the table): CUfunction -> (kernel
# name, note for the metadata).
_kest: dict[int, tuple[str, str]] = {}
_kest_ok = False  # Triton has kernel_load_end_hook (3.5+): the table path is usable
_kest_hooked = False  # _kernel_loaded sits in kernel_load_end_hook
#: Session id -> the table's epoch when the session appeared (kernels seen since: notes).
_kest_epochs: dict[int, int] = {}


def _estimates_disabled() -> bool:
    return os.environ.get("FLAGPRISM_PROF_ESTIMATES", "1") == "0"


# ------------------------------------------------------------------------------------------------
# Installation
# ------------------------------------------------------------------------------------------------


def skip_prefixes() -> list[str]:
    """Directories whose frames are not part of Python call paths."""
    import flagprism

    out = [os.path.dirname(os.path.abspath(flagprism.__file__)) + os.sep]
    triton = sys.modules.get("triton")
    if triton is not None and getattr(triton, "__file__", None):
        out.append(os.path.dirname(os.path.abspath(triton.__file__)) + os.sep)
    out.extend(extra_skip)
    return out[:16]


def install() -> list[str]:
    """Hook Triton's launch paths (idempotent). Returns notes for the metadata: what could not
    be hooked and why."""
    global _installed, _grid_orig, _run_h, _hooks_added, _kest_ok
    with _lock:
        if _installed:
            return list(_notes)
        notes = _notes
        notes.clear()
        try:
            import triton  # noqa: F401
            from triton.runtime import interpreter  # noqa: F401 - is the interpreter importable
        except Exception as e:  # noqa: BLE001 - no Triton: scopes still work
            _ext.prof_set_skip_prefixes(skip_prefixes())
            notes.append(
                f"Triton is not importable ({type(e).__name__}: {e}); no kernel is recorded"
            )
            _installed = True
            return list(notes)
        _grid_orig = _intercept.add("interp.grid", "profiler", _grid_call, 300)
        if _grid_orig.note is not None:
            notes.append(f"interpreted launches are not recorded: {_grid_orig.note}")
        _run_h = _intercept.add("interp.run", "profiler", _interp_run, 300)
        enter = compat.hook_chain("launch_enter_hook")
        leave = compat.hook_chain("launch_exit_hook")
        if enter is None or leave is None:
            notes.append(
                "Triton has no launch hooks (knobs.runtime.launch_enter_hook): "
                "compiled launches are not recorded"
            )
        else:
            _hooks_added = True  # which hooks sit in the chains: _sync_chains()
            _kest_ok = compat.hook_chain("kernel_load_end_hook") is not None
        _ext.prof_set_skip_prefixes(skip_prefixes())
        # torch.compile's launches: call paths and model lines (patched on import)
        notes.extend(_profinductor.install())
        _installed = True
        if _hooks_added:
            _sync_chains()
        return list(notes)


def _sync_chains() -> None:
    """Put in Triton's hook chains exactly what the open sessions need (lock held, or from
    install/uninstall). Nothing in the launch chains for CUPTI sessions in shadow context: the
    backend's launch callback reads the scopes and state by itself, and, with estimates, the
    kernel's estimate from the table that _kernel_loaded fills (kernel_load_end_hook, once per
    kernel). For CUPTI sessions with hook="triton" or context="python", the extension's C hook
    (cupti_hook), last in the enter chain so that it hands over after anything else the chain
    runs. The Python hooks only for host-timed sessions (open, or deactivated and counting what
    they ignore)."""
    global _kest_hooked
    enter = compat.hook_chain("launch_enter_hook")
    leave = compat.hook_chain("launch_exit_hook")
    want_py = _installed and (bool(host_view) or bool(host_inactive))
    want_c = _installed and device_needs
    want_kest = _installed and device_kest
    if _kest_ok:
        load = compat.hook_chain("kernel_load_end_hook")
        if want_kest and not _kest_hooked:
            load.add(_kernel_loaded)
            _kest_hooked = True
            _walk_loaded()  # kernels loaded while the hook was out
        elif not want_kest and _kest_hooked:
            load.remove(_kernel_loaded)
            _kest_hooked = False
    _ext.cupti_kest_enable(want_kest)
    if want_py:
        enter.add(_gpu_enter)
        leave.add(_gpu_exit)
    else:
        enter.remove(_gpu_enter)
        leave.remove(_gpu_exit)
    enter.remove(_ext.cupti_hook)
    if want_c:
        _ext.cupti_hook_config(
            _device_slow,
            python=device_python,
            estimates=device_estimates,
            metadata=device_hook,
        )
        enter.add(_ext.cupti_hook)  # last
    else:
        _ext.cupti_hook_config(None)


def uninstall() -> None:
    """Put Triton's launch path back as it was (idempotent)."""
    global _installed, _grid_orig, _run_h, _hooks_added
    with _lock:
        if not _installed:
            return
        if _grid_orig is not None:
            _intercept.remove(_grid_orig)
            _grid_orig = None
        if _run_h is not None:
            _intercept.remove(_run_h)
            _run_h = None
        _profinductor.uninstall()
        _installed = False
        if _hooks_added:
            _sync_chains()  # removes everything: not installed
            _hooks_added = False


def forget_estimates() -> None:
    with _lock:
        _est_cache.clear()


def publish(open_sessions: tuple[Any, ...]) -> None:
    """Give the hooks a new picture of the open sessions (profiler._Session objects)."""
    global view, host_view, device_view, device_hook, device_estimates, device_python
    global device_needs, device_kest, host_inactive, host_open
    active = tuple(s for s in open_sessions if s.active)
    dev = tuple(s for s in active if s.backend == CUPTI)
    # A launch racing with publish() may see old values of some of these and new values of
    # others; each on its own describes sessions that were open, which is all a hook needs.
    device_hook = any(s.hook for s in dev)
    device_estimates = any(s.estimates for s in dev) and not _estimates_disabled()
    device_python = any(s.context == "python" for s in dev)
    # Estimates alone go through the backend's table (no launch hook) where Triton can fill it.
    device_kest = device_estimates and _kest_ok and not (device_hook or device_python)
    device_needs = device_hook or device_python or (device_estimates and not device_kest)
    device_view = dev
    host_view = tuple(s for s in active if s.backend in HOST_TIMED)
    host_inactive = tuple(s.id for s in open_sessions if not s.active and s.backend in HOST_TIMED)
    host_open = tuple(s for s in open_sessions if s.backend in HOST_TIMED)
    view = active
    with _lock:
        ids = {s.id for s in open_sessions}
        for sid in [k for k in _kest_epochs if k not in ids]:
            del _kest_epochs[sid]
        for s in open_sessions:
            if s.backend == CUPTI and s.estimates and s.id not in _kest_epochs:
                _kest_epochs[s.id] = _ext.cupti_kest_epoch()
        if _installed and _hooks_added:
            _sync_chains()


def _flight_begin(sessions: tuple[Any, ...]) -> None:
    """A launch begins while `sessions` are open: each counts it as in flight."""
    with _flight:
        for s in sessions:
            s.inflight += 1


def _flight_end(
    sessions: tuple[Any, ...], deliver: Callable[[tuple[Any, ...]], None] | None
) -> None:
    """The launch that began with `sessions` ended: deliver(live) files it in those not closed
    since (under the lock, so that a finalize cannot come between the check and the filing);
    deliver=None when the launch raised (nothing to file)."""
    with _flight:
        closed = False
        for s in sessions:
            s.inflight -= 1
            closed = closed or s.closed
        if deliver is not None:
            live = tuple(s for s in sessions if not s.closed) if closed else sessions
            if live:
                deliver(live)


def session_closing(s: Any) -> int:
    """Finalize is about to write session `s`: no launch files anything in it from now on.
    Returns how many launches that began while it was open are still running (they are not in
    its files; finalize says so in the metadata)."""
    with _flight:
        s.closed = True
        return int(s.inflight)


def session_ending(s: Any) -> None:
    """Before session `s` is finalized: the metadata notes of the kernels whose estimates the
    backend's table attached since the session appeared (the launch hook's path writes its
    own notes at each kernel's first launch)."""
    with _lock:
        epoch = _kest_epochs.pop(s.id, None)
    try:  # what the autotuners measured, for `flagprism advise`
        for key, value in _proffacts.autotune_notes().items():
            _ext.prof_set_meta(s.id, key, value)
    except Exception:  # noqa: BLE001 - notes are extras: the session's files come first
        pass
    if epoch is None or not s.estimates or _estimates_disabled():
        return
    try:
        for fn in _ext.cupti_kest_seen(epoch):
            known = _kest.get(fn)
            if known is not None:
                _note_estimate((s,), known[0], known[1])
    except Exception:  # noqa: BLE001 - notes are extras: the session's files come first
        pass


# ------------------------------------------------------------------------------------------------
# Recording
# ------------------------------------------------------------------------------------------------


def _note_estimate(sessions: tuple[Any, ...], kernel: str, note: str) -> None:
    """Say once per session and kernel what bounds its estimate, or why it has none."""
    key = f"estimate:{kernel}"
    for s in sessions:
        if s.notes.get(key) != note:
            s.notes[key] = note
            try:
                _ext.prof_set_meta(s.id, key, note)
            except Exception:  # noqa: BLE001 - finalized meanwhile, or the metadata is full
                pass  # (counted by C in lost.dropped_metadata): a note, never the launch's error


def _record(
    sessions: tuple[Any, ...],
    kernel: str,
    grid: tuple[int, int, int],
    t0: int,
    t1: int,
    md: dict[str, Any] | None,
    est: tuple[float, float] | None,
    device: int = 0,
) -> None:
    """File one launch in `sessions` (host-timed, open when the launch began, not closed since):
    C records it in each that is active now and counts it as ignored in each that is not, one
    call per session, so that a session started meanwhile gets nothing and a toggle racing the
    launch cannot lose it. With hook="triton" a session takes the launch metadata, whose "name"
    (if a str) replaces the kernel's, as on Triton's GPU path."""
    named = md["name"] if md and isinstance(md.get("name"), str) else kernel
    for s in sessions:
        try:
            _ext.prof_host_launch(
                s.id,
                named if s.hook else kernel,
                grid,
                t0,
                t1,
                md if s.hook else None,
                est if s.estimates else None,
                s.context == "python",
                device,
            )
        except OSError:
            pass  # finalized from C directly (shutdown): nothing to file it in


def _summary(e: dict[str, Any]) -> str:
    """One line for the metadata: the per-program counts and what bounds them."""
    parts = [
        f"per program: bytes={e['bytes']} (loads {e['loads']}, stores {e['stores']}, "
        f"atomics {e['atomics']}), flops={e['total_flops']} (dots {e['dots']})"
    ]
    if e["masked_loads"] or e["masked_stores"]:
        parts.append("masked loads/stores: est_bytes is an upper bound")
    if e["has_dynamic_loops"]:
        parts.append(
            f"{e['dynamic_loops']} loop(s) without a static trip count counted once: "
            "a lower bound for those loops"
        )
    if e["conditionals"]:
        parts.append("both branches of every scf.if counted: an upper bound for that code")
    if e["unresolved_calls"]:
        parts.append(f"{e['unresolved_calls']} call(s) not followed")
    if e["saturated"]:
        parts.append("a count saturated at 2^64-1")
    return "; ".join(parts)


def _estimate_from_ttir(text: str, kernel: Any = None) -> tuple[tuple[float, float] | None, str]:
    """The per-program estimate and the metadata note, which carries the IR's facts for
    `flagprism advise` (and the compiled kernel's, given its CompiledKernel)."""
    try:
        e = _ext.ttir_estimate(text)
    except Exception as ex:  # noqa: BLE001 - the launch itself is fine: say why, move on
        return None, _proffacts.with_facts(
            f"unavailable: the TTIR could not be parsed: {ex}", None, kernel
        )
    note = _proffacts.with_facts(_summary(e), e.get("facts"), kernel)
    return (float(e["bytes"]), float(e["total_flops"])), note


# ------------------------------------------------------------------------------------------------
# Interpreter
# ------------------------------------------------------------------------------------------------


def _interp_run(call_next: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    """InterpretedFunction.run, passed straight through: notes which InterpretedFunction the
    GridExecutor below belongs to (its launch_metadata and source)."""
    stack = _tls.__dict__.setdefault("ifns", [])
    stack.append(self)
    try:
        return call_next(self, *args, **kwargs)
    finally:
        stack.pop()


def _interpreted_function(frame: Any) -> Any:
    """The InterpretedFunction whose run() called GridExecutor.__call__: the one _interp_run
    noted, else the ``self`` of a frame a few up (the interception registry's wrappers sit
    between them), or None."""
    from triton.runtime.interpreter import InterpretedFunction

    stack = getattr(_tls, "ifns", None)
    if stack:
        return stack[-1]
    for _ in range(8):
        if frame is None:
            return None
        try:
            obj = frame.f_locals.get("self")
        except Exception:  # noqa: BLE001
            return None
        if isinstance(obj, InterpretedFunction):
            return obj
        frame = frame.f_back
    return None


_signatures: dict[Any, inspect.Signature] = {}


def _bind(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    sig = _signatures.get(fn)
    if sig is None:
        sig = _signatures[fn] = inspect.signature(fn)
    params = {k: v for k, v in kwargs.items() if k in sig.parameters}
    ba = sig.bind(*args, **params)
    ba.apply_defaults()
    return dict(ba.arguments)


def _grid3(grid: Any, bound: dict[str, Any]) -> tuple[int, int, int]:
    g = grid(bound) if callable(grid) else grid
    if not isinstance(g, (tuple, list)):
        g = (g,)
    g = tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {g}")
    return g + (1,) * (3 - len(g))  # type: ignore[return-value]


def _interp_estimate(ifn: Any, bound: dict[str, Any]) -> tuple[tuple[float, float] | None, str]:
    from flagprism import _ttir

    if getattr(ifn, "_fp_twin", False):
        return None, "unavailable: the launch ran the Debugger's instrumented twin"
    fn = ifn.fn
    key = (id(fn), _ttir.signature_key(fn, bound))
    with _lock:
        hit = _est_cache.get(key)
    if hit is not None and hit[0] is fn:
        return hit[1], hit[2]
    text, reason = _ttir.interpreter_ttir(fn, bound)
    if text is None:
        est, note = None, f"unavailable: {reason}"
    else:
        est, note = _estimate_from_ttir(text)
    with _lock:
        _est_cache[key] = (fn, est, note)  # the function stays referenced: its id stays valid
    return est, note


class _Metadata(types.SimpleNamespace):
    """What a launch_metadata function gets as its `metadata` argument on the interpreter (the
    compiled path passes Triton's KernelMetadata): the kernel name and the launch options."""


def _launch_metadata(
    ifn: Any, kernel: str, grid: tuple[int, int, int], bound: dict[str, Any], kwargs: dict[str, Any]
) -> dict[str, Any] | None:
    fn = compat.interpreted_options(ifn).get("launch_metadata")
    if fn is None:
        return None
    meta = _Metadata(
        name=kernel,
        num_warps=kwargs.get("num_warps", 4),
        num_stages=kwargs.get("num_stages", 3),
        num_ctas=kwargs.get("num_ctas", 1),
    )
    out = fn(grid, meta, dict(bound))
    if out is None:
        return None
    if not isinstance(out, dict):
        raise TypeError(f"launch_metadata of {kernel} returned {type(out).__name__}, not a dict")
    return out


def _grid_call(orig: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    """GridExecutor.__call__ (every interpreted launch), through the interception registry.
    Interpreted kernels run on the CPU: only host-timed sessions record them, and FlagPrism's own
    launches never. The open sessions are read once; each gets the launch when it ends (recorded
    if active then, else counted as ignored), whatever activate, deactivate or finalize do
    meanwhile."""
    opened = host_open
    if not opened or _intercept.in_internal():
        with compat.language_lock:
            return orig(self, *args, **kwargs)
    sessions = tuple(s for s in opened if s.active)  # what the launch is prepared for
    ifn = _interpreted_function(sys._getframe(1))
    kernel = getattr(getattr(ifn, "fn", None), "__name__", None) or getattr(
        self.fn, "__name__", "kernel"
    )
    _flight_begin(opened)
    filed = False
    try:
        try:
            bound = _bind(ifn.fn if ifn is not None else self.fn, args, kwargs)
            grid: tuple[int, int, int] | None = _grid3(self.grid, bound)
        except Exception:  # noqa: BLE001 - the launch reports its own argument errors
            bound, grid = {}, None
        md = None
        if grid is not None and ifn is not None and any(s.hook for s in sessions):
            md = _launch_metadata(ifn, kernel, grid, bound, kwargs)
        with compat.language_lock:  # the estimate of another thread's kernel compiles meanwhile
            t0 = _ext.prof_clock_ns()
            ret = orig(self, *args, **kwargs)
            t1 = _ext.prof_clock_ns()
        est, note = None, None
        if any(s.estimates for s in sessions) and not _estimates_disabled():
            if ifn is None:
                note = "unavailable: the launch did not come through InterpretedFunction.run"
            elif grid is None:
                note = "unavailable: the launch grid could not be evaluated"
            else:
                est, note = _interp_estimate(ifn, bound)

        def deliver(live: tuple[Any, ...]) -> None:
            if note is not None:
                _note_estimate(tuple(s for s in live if s.estimates), kernel, note)
            _record(live, kernel, grid or (0, 0, 0), t0, t1, md, est)

        _flight_end(opened, deliver)
        filed = True
        return ret
    finally:
        if not filed:
            _flight_end(opened, None)  # the launch raised: nothing to file


# ------------------------------------------------------------------------------------------------
# Compiled kernels (launch hook chains)
# ------------------------------------------------------------------------------------------------


def _gpu_launch_info(frame: Any) -> tuple[tuple[int, int, int] | None, Any]:
    """(grid, CompiledKernel) read from the launcher's and JITFunction.run's frames above the
    enter hook (the C launcher calls the hook without a frame of its own)."""
    grid, kernel = None, None
    for _ in range(6):
        if frame is None:
            break
        try:
            loc = frame.f_locals
        except Exception:  # noqa: BLE001
            break
        # gridX.. in a Python launcher (the tests'), grid_0.. in Triton 3.6's JITFunction.run
        for gx, gy, gz in (("gridX", "gridY", "gridZ"), ("grid_0", "grid_1", "grid_2")):
            if grid is None and gx in loc:
                try:
                    grid = (int(loc[gx]), int(loc[gy]), int(loc[gz]))
                except Exception:  # noqa: BLE001
                    grid = None
        k = loc.get("kernel")
        if kernel is None and k is not None and hasattr(k, "asm"):
            kernel = k
        if grid is not None and kernel is not None:
            break
        frame = frame.f_back
    return grid, kernel


def _gpu_estimate(kernel: Any) -> tuple[tuple[float, float] | None, str]:
    key = (getattr(kernel, "hash", None) or id(kernel), "compiled")
    with _lock:
        hit = _est_cache.get(key)
    if hit is not None:
        return hit[1], hit[2]
    try:
        text = kernel.asm["ttir"]
    except Exception as e:  # noqa: BLE001
        est, note = None, f"unavailable: the compiled kernel has no TTIR: {e}"
    else:
        est, note = _estimate_from_ttir(str(text), kernel)
    with _lock:
        _est_cache[key] = (kernel, est, note)
    return est, note


def _gpu_enter(launch_metadata: Any) -> None:
    """Enter hook of host-timed sessions (in the chain only while one is open): note the
    launch, the sessions open now and its start time for _gpu_exit, which files it. CUPTI
    sessions have their own hook, cupti_hook."""
    opened = host_open
    stack = _tls.__dict__.setdefault("launches", [])
    if not opened:
        stack.append(None)  # every enter has its entry, so that exits pair with them
        return
    raw = getattr(launch_metadata, "data", None) or {}
    base = raw.get("name")  # the kernel's symbol, before launch_metadata may rename it
    data: dict[str, Any] | None = None
    if launch_metadata is not None and any(s.hook and s.active for s in opened):
        # LazyDict.get() runs the kernel's launch_metadata function, as Proton's hook does. It
        # may launch kernels itself: those are done before this launch is described below.
        data = dict(launch_metadata.get())
    grid, kernel = _gpu_launch_info(sys._getframe(1))
    name = base if isinstance(base, str) else str(getattr(kernel, "name", "kernel"))
    _flight_begin(opened)
    stack.append((opened, name, data, grid, kernel, _ext.prof_clock_ns()))


def _gpu_kernel(frame: Any) -> Any:
    """The CompiledKernel in JITFunction.run's frame above the enter hook, or None."""
    for _ in range(6):
        if frame is None:
            break
        try:
            k = frame.f_locals.get("kernel")
        except Exception:  # noqa: BLE001
            break
        if k is not None and hasattr(k, "asm"):
            return k
        frame = frame.f_back
    return None


def _device_slow(launch_metadata: Any) -> None:
    """The slow path of the C launch hook (``_ext.cupti_hook``) of CUPTI sessions: a kernel it
    does not know yet (its first launch since the sessions last changed). Finds the compiled
    kernel, its per-program IR estimate and the metadata notes once, teaches the C hook the
    kernel (``cupti_hook_learn``, keyed by its CUfunction) so that its later launches stay in C,
    and hands this launch over like the fast path: as the very last step before Triton's
    launcher calls cuLaunchKernelEx on this thread (the hand-over is one-shot and would go to
    whatever kernel this thread launches next). The estimate is per program: the backend
    multiplies it by the grid of the kernel's record. One record feeds every CUPTI session, so
    what any of them asks for (metadata, estimates) reaches all of them."""
    sessions = device_view
    if not sessions or not device_needs:
        return
    raw = getattr(launch_metadata, "data", None) or {}
    base = raw.get("name")
    fn = raw.get("function")
    data: dict[str, Any] | None = None
    if device_hook and launch_metadata is not None:
        data = dict(launch_metadata.get())
    kernel = None
    if device_estimates or not isinstance(base, str):
        # frame 1 is Triton's hook chain (the C hook has no frame of its own)
        kernel = _gpu_kernel(sys._getframe(1))
    name = base if isinstance(base, str) else str(getattr(kernel, "name", "kernel"))
    est = None
    if device_estimates:
        if kernel is None:
            note = "unavailable: the launch's compiled kernel was not found"
        else:
            est, note = _gpu_estimate(kernel)
        _note_estimate(tuple(s for s in sessions if s.estimates), name, note)
    if isinstance(fn, int) and fn > 0:
        # Also without an estimate: a kernel whose frames do not show it would otherwise take
        # this path (and its frame walk) at every launch.
        _ext.cupti_hook_learn(fn, est)
    _ext.cupti_set_launch(
        None,
        data if device_hook else None,
        est,
        read_callpath=device_python,
        per_program=True,
    )


def _kest_learn(function: Any, name: str, est: tuple[float, float] | None, note: str) -> None:
    """Teach the backend's table kernel `function` (a CUfunction) and remember its note."""
    if not isinstance(function, int) or function <= 0 or function in _kest:
        return
    # A kernel the full table refuses (counted there) is remembered too, so that it is not
    # offered again at every start; never looked up, it never gets a note.
    _ext.cupti_kest_set(function, est)
    _kest[function] = (name, note)


def _ttir_of_group(name: str, metadata_group: Any) -> str | None:
    """The TTIR text of a kernel from its cache group ({file name: path}), or None."""
    if not isinstance(metadata_group, dict):
        return None
    path = metadata_group.get(f"{name}.ttir")
    if path is None:
        path = next((p for f, p in metadata_group.items() if str(f).endswith(".ttir")), None)
    if path is None:
        return None
    return _files.read_regular(path)


def _kernel_loaded(module: Any, function: Any, name: Any, metadata_group: Any, hash: Any) -> None:
    """knobs.runtime.kernel_load_end_hook (in the chain while shadow-context CUPTI sessions want
    estimates): estimate the kernel Triton just loaded, once, and put its per-program estimate
    into the backend's table under its CUfunction, where the launch callback finds it. Never
    fails the load: a kernel it cannot estimate is taught without an estimate."""
    try:
        if not isinstance(function, int) or function <= 0 or function in _kest:
            return
        kname = name if isinstance(name, str) else "kernel"
        key = (hash or f"fn:{function}", "compiled")
        with _lock:
            hit = _est_cache.get(key)
        if hit is not None:
            est, note = hit[1], hit[2]
        else:
            try:
                text = _ttir_of_group(kname, metadata_group)
            except OSError as e:
                text, why = None, f"the kernel's TTIR could not be read: {e}"
            else:
                why = "the kernel's cache group has no TTIR"
            if text is None:
                est, note = None, f"unavailable: {why}"
            else:  # frame 1 is the hook chain's; above it, CompiledKernel._init_handles
                est, note = _estimate_from_ttir(
                    text, _proffacts.compiled_kernel_in(sys._getframe(1))
                )
            with _lock:
                _est_cache[key] = (None, est, note)
        _kest_learn(function, kname, est, note)
    except Exception:  # noqa: BLE001 - a profiler must not break Triton's kernel load
        pass


def jit_functions() -> list[Any]:
    """Every live ``JITFunction`` (one walk of the garbage collector's objects). Only the
    objects' types are looked at: ``isinstance`` would read ``__class__`` through an unrelated
    object's own ``__getattribute__``, which may warn (``torch.distributed.reduce_op`` raises a
    FutureWarning at every access) or worse."""
    try:
        import gc

        from triton.runtime.jit import JITFunction
    except Exception:  # noqa: BLE001 - no Triton: nothing was compiled
        return []
    return [obj for obj in gc.get_objects() if issubclass(type(obj), JITFunction)]


def _walk_loaded() -> None:
    """Teach the table the kernels Triton loaded while _kernel_loaded was not in the chain
    (before the first session, between sessions): every JITFunction's compiled kernels whose
    module is loaded. One walk of the garbage collector's objects per session start that puts
    the load hook back."""
    for obj in jit_functions():
        try:
            kernels = [k for c in obj.device_caches.values() for k in c[0].values()]
        except Exception:  # noqa: BLE001 - another Triton's layout: loads still reach the hook
            continue
        for kernel in kernels:
            fn = getattr(kernel, "function", None)
            if getattr(kernel, "module", None) is None or not isinstance(fn, int) or fn in _kest:
                continue
            try:
                est, note = _gpu_estimate(kernel)
                _kest_learn(fn, str(getattr(kernel, "name", "kernel")), est, note)
            except Exception:  # noqa: BLE001 - its launches go without an estimate, counted
                continue


def _gpu_exit(launch_metadata: Any) -> None:
    t1 = _ext.prof_clock_ns()
    stack = getattr(_tls, "launches", None)
    if not stack:
        return
    entry = stack.pop()
    if entry is None:
        return
    opened, name, data, grid, kernel, t0 = entry
    est, note = None, None
    if any(s.estimates and s.active for s in opened) and not _estimates_disabled():
        if kernel is None or grid is None:
            note = "unavailable: the launch's grid or compiled kernel was not found"
        else:
            est, note = _gpu_estimate(kernel)
    device = 0
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            device = int(torch.cuda.current_device())
        except Exception:  # noqa: BLE001
            pass

    def deliver(live: tuple[Any, ...]) -> None:
        if note is not None:
            _note_estimate(tuple(s for s in live if s.estimates), name, note)
        _record(live, name, grid or (0, 0, 0), t0, t1, data, est, device)

    _flight_end(opened, deliver)
