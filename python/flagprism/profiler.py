# SPDX-License-Identifier: Apache-2.0
"""The Profiler's public API: sessions, scopes, states and the ``profile`` decorator.

    import flagprism.profiler as profiler
    sid = profiler.start("run", context="python", data="trace", hook="triton")
    with profiler.scope("step", {"bytes": 4096}):
        kernel[grid](...)
    profiler.finalize()          # writes run.hatchet, run.chrome_trace.json, run.meta.json

Sessions, scopes, call paths, aggregation and the output files are the C core's
(``include/flagprism/prof.h``, reached through ``flagprism._ext``). This module checks arguments,
picks the backend (and, for CUPTI, where its library is looked for), keeps the list of open
sessions that the launch hooks (``_profhook.py``) read, and turns C statuses into exceptions
(through the extension). Several sessions may be open and active at once; every call that takes
a ``session`` applies to all open sessions when it is None. docs/guide/profiler.md is the user guide.
"""

from __future__ import annotations

import atexit
import errno
import functools
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flagprism import _dist, _ext, _profhook, _timeline

__all__ = [
    "DEFAULT_PROFILE_NAME",
    "start",
    "activate",
    "deactivate",
    "finalize",
    "profile",
    "scope",
    "cpu_timed_scope",
    "enter_scope",
    "exit_scope",
    "state",
    "enter_state",
    "exit_state",
    "depth",
    "sessions",
    "cupti_search_dirs",
    "metrics_status",
    "pcsampling_stats",
]

#: Output path (without suffix) of a session started without a name.
DEFAULT_PROFILE_NAME = "flagprism"
#: Largest timeline_capacity start() accepts (records per program).
MAX_TIMELINE_CAPACITY = 1 << 24
#: Scopes open per thread and session that are kept (FP_PROF_DEFAULT_MAX_SCOPE_DEPTH); deeper
#: ones are counted and dropped.
_MAX_SCOPE_DEPTH = 256

#: The names a session's context, data and launch hook take: the library's
#: (fp_prof_context_name and its neighbours, src/prof/choices.c).
_CHOICES = _ext.prof_choices()
CONTEXTS: tuple[str, ...] = _CHOICES["context"]
DATA: tuple[str, ...] = _CHOICES["data"]
HOOKS: tuple[str, ...] = _CHOICES["hook"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class _Session:
    id: int
    name: str
    context: str
    data: str
    backend: str
    hook: str | None
    estimates: bool
    active: bool = True
    notes: dict[str, str] = field(default_factory=dict)  # metadata keys already written
    # intra-kernel timelines (_timeline.py, docs/guide/intra-kernel.md)
    instrumentation: bool = False
    auto_scopes: bool = False
    timeline_tracks: str = "sm"
    timeline_capacity: int | None = None
    # launches in flight that began while the session was open, and whether finalize closed it
    # (_profhook._flight_begin/_flight_end/session_closing; both under _profhook._flight)
    inflight: int = 0
    closed: bool = False


_lock = threading.RLock()
_sessions: dict[int, _Session] = {}
#: Ids of finalized sessions: a scope or state context left after its session was finalized
#: (from another thread, say) exits quietly; its scope was counted as unfinished there.
_finalized: set[int] = set()
_cli_session: int | None = None  # set by `flagprism profile` (flagprism._run)
_atexit_registered = False


def _refresh() -> None:
    """Publish the open sessions to the launch hooks (lock held)."""
    _profhook.publish(tuple(_sessions.values()))
    _timeline.publish(tuple(_sessions.values()))


def _choice(what: str, value: Any, allowed: Iterable[Any]) -> None:
    allowed = tuple(allowed)
    if value not in allowed:
        names = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{what} must be one of {names}; got {value!r}")


def _session_id(session: int | None) -> int | None:
    """Check a session argument: None (all) or an open session's id."""
    if session is None:
        return None
    if isinstance(session, bool) or not isinstance(session, int):
        raise TypeError(f"session must be an int id or None, not {type(session).__name__}")
    with _lock:
        if session not in _sessions:
            raise ValueError(f"no open profiling session {session}")
    return session


def _cuda_present() -> bool:
    """A CUDA device that compiled (not interpreted) Triton kernels would run on."""
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        return False
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


def _pick_backend(backend: str | None) -> tuple[str, bool]:
    """The backend to start, and whether it was chosen here (backend=None), in which case a
    CUPTI backend that cannot start falls back to "host"."""
    registered = _ext.prof_backends()
    if backend is None:
        if _cuda_present() and "cupti" in registered:
            return "cupti", True
        return "host", True
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a str or None, not {type(backend).__name__}")
    if backend == "cupti" and "cupti" not in registered:
        _ext._raise_status(
            -6,
            "the CUPTI backend cannot run: this build of the flagprism extension does not "
            "have it; use backend='host' (host-measured launch times) or backend=None",
        )
    if backend not in registered:
        names = ", ".join(repr(b) for b in registered)
        raise ValueError(f"unknown profiler backend {backend!r}; registered: {names}")
    return backend, False


def _torch_cuda_version() -> str | None:
    """PyTorch's CUDA runtime version ("13.0"), read without importing torch when it is not
    imported yet (torch/version.py is a few assignments)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        v = getattr(getattr(torch, "version", None), "cuda", None)
        return v if isinstance(v, str) else None
    try:
        import importlib.util
        import re

        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            return None
        path = os.path.join(os.path.dirname(spec.origin), "version.py")
        with open(path, encoding="utf-8") as f:
            m = re.search(r"^cuda\b[^=\n]*=\s*['\"]([^'\"]+)['\"]", f.read(), re.MULTILINE)
        return m.group(1) if m else None
    except Exception:  # noqa: BLE001 - no answer is an answer
        return None


def cupti_search_dirs() -> list[str]:
    """Directories the CUPTI backend looks in for libcupti (after a copy the process already
    holds and $FLAGPRISM_CUPTI_PATH, before /usr/local/cuda), best first: the copy that matches
    the CUDA runtime PyTorch uses (``torch.version.cuda``), since CUPTI must match the driver
    and runtime that launch the kernels. CUDA 13: the ``nvidia/cu13/lib`` wheel, Triton's
    bundled CUPTI 12.8, ``nvidia/cuda_cupti/lib``. CUDA 12: ``nvidia/cuda_cupti/lib``, Triton's,
    ``nvidia/cu13/lib``. No CUDA PyTorch: Triton's (the one Proton uses), then the wheels.
    Only existing directories are listed."""
    import importlib.util

    cu13: list[str] = []
    cu12: list[str] = []
    try:
        spec = importlib.util.find_spec("nvidia")
        for root in (spec.submodule_search_locations or []) if spec else []:
            cu13.append(os.path.join(root, "cu13", "lib"))
            cu12.append(os.path.join(root, "cuda_cupti", "lib"))
    except Exception:  # noqa: BLE001 - no nvidia wheels
        pass
    bundled: list[str] = []
    try:
        spec = importlib.util.find_spec("triton")
        if spec is not None and spec.origin:
            root = os.path.dirname(spec.origin)
            bundled.append(os.path.join(root, "backends", "nvidia", "lib", "cupti"))
    except Exception:  # noqa: BLE001 - no Triton
        pass
    cuda = _torch_cuda_version() or ""
    major = cuda.split(".", 1)[0]
    if major == "13":
        order = cu13 + bundled + cu12
    elif major == "12":
        order = cu12 + bundled + cu13
    else:
        order = bundled + cu13 + cu12
    seen: list[str] = []
    for d in order:
        if d not in seen and os.path.isdir(d):
            seen.append(d)
    return seen


_cupti_configured = False


def _configure_cupti() -> None:
    """Tell the CUPTI backend where to look for libcupti, once, before its first start (lock
    held). A backend that already started in this process keeps what it has."""
    global _cupti_configured
    if _cupti_configured:
        return
    try:
        _ext.cupti_configure(search_dirs=cupti_search_dirs())
    except _ext.Error as e:
        if getattr(e, "status_name", "") != "FP_ESTATE":
            raise
    _cupti_configured = True


#: $FLAGPRISM_CUPTI_CAPTURE: a directory the CUPTI backend writes its raw activity buffers to
#: (docs/internals/cupti-backend.md, "Capturing raw activity records"), at most
#: $FLAGPRISM_CUPTI_CAPTURE_BYTES bytes in all.
CUPTI_CAPTURE_ENV = "FLAGPRISM_CUPTI_CAPTURE"
CUPTI_CAPTURE_BYTES_ENV = "FLAGPRISM_CUPTI_CAPTURE_BYTES"
DEFAULT_CUPTI_CAPTURE_BYTES = 4 << 20

# The capture last set from the environment: (directory, cap), or None.
_cupti_capture: tuple[str, int] | None = None


def _configure_cupti_capture() -> None:
    """Set or stop the CUPTI backend's capture of raw activity buffers from the environment at
    a "cupti" start (lock held). The cap is the process's, not each session's: an unchanged
    setting is left running. A value that cannot be used raises, naming the variable."""
    global _cupti_capture
    where = os.environ.get(CUPTI_CAPTURE_ENV, "")
    if not where:
        if _cupti_capture is not None:
            _ext.cupti_capture(None)
            _cupti_capture = None
        return
    raw = os.environ.get(CUPTI_CAPTURE_BYTES_ENV, "")
    try:
        cap = int(raw, 0) if raw else DEFAULT_CUPTI_CAPTURE_BYTES
    except ValueError:
        cap = 0
    if cap <= 0 or cap >= 1 << 64:
        raise ValueError(
            f"{CUPTI_CAPTURE_BYTES_ENV}={raw!r}: expected a positive number of bytes "
            f"(the cap on what {CUPTI_CAPTURE_ENV} captures; default {DEFAULT_CUPTI_CAPTURE_BYTES})"
        )
    want = (os.path.abspath(where), cap)
    if want == _cupti_capture:
        return
    try:
        _ext.cupti_capture(want[0], cap)
    except (OSError, ValueError) as e:  # FP_EIO, FP_EINVAL
        detail = getattr(e, "detail", "") or str(e)
        raise type(e)(
            f"{CUPTI_CAPTURE_ENV}={where!r} cannot be used to capture CUPTI activity records: "
            f"{detail}; set it to an existing writable directory, or unset it"
        ) from None
    _cupti_capture = want


def _environment(sid: int, backend: str, notes: list[str], fallback: str | None = None) -> None:
    """Versions and timing notes for the metadata file's "environment" object."""
    import platform

    from flagprism import __version__

    env = {
        "python": platform.python_version(),
        "flagprism": __version__,
        "platform": platform.platform(),
    }
    for mod in ("triton", "torch", "numpy"):
        m = sys.modules.get(mod)
        if m is not None and isinstance(getattr(m, "__version__", None), str):
            env[mod] = m.__version__
    if backend == "host":
        env["kernel_times"] = (
            "host clock around each interpreted launch (TRITON_INTERPRET=1); "
            "for compiled kernels, host-measured launch times"
        )
    elif backend == "cupti":
        env["kernel_times"] = (
            "device timestamps of CUPTI kernel activity records, on the host monotonic clock"
        )
        try:
            st = _ext.cupti_stats()
            env["cupti_library"] = f"{st['path']} (API version {st['api_version']})"
        except Exception:  # noqa: BLE001 - the metadata is informative only
            pass
        if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
            env["cupti_note"] = (
                "TRITON_INTERPRET is set: interpreted Triton launches run on the CPU and are "
                "not recorded by the cupti backend"
            )
    if fallback:
        env["backend_fallback"] = fallback
    if os.environ.get("TRITON_INTERPRET"):
        env["TRITON_INTERPRET"] = os.environ["TRITON_INTERPRET"]
    for i, note in enumerate(notes):
        env[f"hook_note_{i}"] = note
    for k, v in env.items():
        _ext.prof_set_meta(sid, k, v)


def _at_exit() -> None:
    with _lock:
        left = sorted(_sessions)
        closing = list(_sessions.values())
        _sessions.clear()
        _refresh()
    for s in closing:
        _profhook.session_closing(s)  # a daemon thread's launch files nothing from now on
    if left:
        sys.stderr.write(
            f"flagprism: profiling session(s) {', '.join(map(str, left))} were never finalized; "
            "writing them now, marked incomplete\n"
        )
        _dist.attach(None)
        _ext.prof_shutdown()
    _profhook.uninstall()


def metrics_status() -> dict[str, Any]:
    """What the last session with ``metrics=`` did: metrics and replay passes per kernel,
    ranges profiled and dropped, kernels attached, the chip, and degradation reasons (metrics
    this GPU lacks, ranges that could not be paired with kernels)."""
    return _ext.cupti_metrics_last()


def _metrics_list(metrics: str | Sequence[str] | None) -> str | None:
    """The metric request as the C layer takes it (comma list or "default"), None for none."""
    if metrics is None:
        return None
    if isinstance(metrics, str):
        return metrics if metrics.strip() else None
    if not all(isinstance(m, str) for m in metrics):
        raise TypeError("metrics must be a str, a sequence of str, or None")
    return ",".join(metrics) if metrics else None


def _metrics_backend(backend: str | None) -> str:
    """Hardware metrics exist only in the CUPTI backend: backend=None means it, others refuse."""
    if backend in (None, "cupti"):
        return "cupti"
    raise ValueError(
        f"metrics need backend='cupti' (hardware counters through CUPTI's range profiler); "
        f"backend={backend!r} cannot collect them"
    )


def pcsampling_stats() -> dict[str, Any]:
    """What the last (or running) ``mode="pcsampling"`` session saw: total_samples and
    dropped_samples as CUPTI counted them, samples in PC records, how many landed on source
    lines (on_lines) and under "<no line info>" / "<unknown cubin>" / "<pc samples without a
    launch>" (no_line, no_cubin, no_launch), lost, cubins, launches; and what CUPTI answered
    (enable_status, config_status, getdata_calls, getdata_records, ...), so that a session
    without samples explains itself. ``nonuser_samples`` close to ``total_samples`` means the
    kernels' modules were loaded while CUPTI was attached but not sampling (start() makes Triton's
    kernels load again while sampling: modules_reloaded says how many; a module loaded by other
    code is not)."""
    st = dict(_ext.cupti_pcsampling_stats())
    st["modules_reloaded"] = _pcs_reloaded
    return st


#: Triton kernels whose module the last mode="pcsampling" start made load again (_pcsampling_prepare).
_pcs_reloaded = 0


def _pcsampling_mode(mode: str | None, period: int | None, metrics: bool) -> bool:
    """Whether mode asks for PC sampling; refuses what cannot work with it."""
    if mode is None:
        if period is not None:
            raise ValueError("sampling_period needs mode='pcsampling'")
        return False
    if mode != "pcsampling":
        raise ValueError(f"mode must be None or 'pcsampling', got {mode!r}")
    if metrics:
        raise ValueError(
            "mode='pcsampling' and metrics= cannot run in one session: both need the GPU's "
            "profiling hardware; profile them in separate runs"
        )
    if period is not None and (
        isinstance(period, bool) or not isinstance(period, int) or not 5 <= period <= 31
    ):
        raise ValueError(f"sampling_period must be an int in 5..31 (2^N cycles), got {period!r}")
    return True


def _pcsampling_backend(backend: str | None) -> str:
    """PC sampling exists only in the CUPTI backend: backend=None means it, others refuse."""
    if backend in (None, "cupti"):
        return "cupti"
    raise ValueError(
        f"mode='pcsampling' needs backend='cupti' (CUPTI's PC sampling); backend={backend!r} "
        "cannot sample"
    )


def _pcsampling_prepare(period: int | None) -> None:
    """Ask the next CUPTI start to sample, hand over the cubins of the Triton kernels compiled so
    far (their modules may be loaded already, before CUPTI could copy them), and make Triton load
    each of their modules again at its next launch, i.e. while sampling is on: CUPTI gives PC
    records only for modules it saw loaded before its first use or while sampling, and a kernel
    launched in between (between two sessions, in a plain cupti session or unprofiled after one)
    would otherwise have all its samples counted as "non-user" (measured on the H200: a tl.dot
    kernel run unprofiled between sessions, 137,000 samples and no PC record). The previous
    module stays loaded (a CUDA graph may hold its functions); the new load goes through
    Triton's kernel-load hooks as any load does. FLAGPRISM_PCS_RELOAD=0 turns the reload off."""
    global _pcs_reloaded
    reload = os.environ.get("FLAGPRISM_PCS_RELOAD", "1") != "0"
    _pcs_reloaded = 0
    # every compiled Triton kernel (none without Triton: CUDA module loads are still copied)
    for obj in _profhook.jit_functions():
        try:
            kernels = [k for c in obj.device_caches.values() for k in c[0].values()]
        except Exception:  # noqa: BLE001 - another Triton's layout: module loads still work
            continue
        for kernel in kernels:
            try:
                cubin = kernel.asm.get("cubin")
                if isinstance(cubin, bytes | bytearray):
                    _ext.cupti_pcsampling_add_cubin(cubin)
            except Exception:  # noqa: BLE001 - its samples go to "<unknown cubin>", counted
                continue
            if reload and getattr(kernel, "module", None) is not None and hasattr(kernel, "_run"):
                # CompiledKernel._init_handles loads the binary again when module is None
                kernel.module = kernel.function = kernel._run = None
                _pcs_reloaded += 1
    _ext.cupti_pcsampling_request(sampling_period=period or 0)


def start(
    name: str | os.PathLike[str] | None = None,
    *,
    context: str = "shadow",
    data: str = "tree",
    backend: str | None = None,
    hook: str | None = None,
    estimates: bool = True,
    metrics: str | Sequence[str] | None = None,
    instrumentation: bool = False,
    auto_scopes: bool = False,
    timeline_tracks: str = "sm",
    timeline_capacity: int | None = None,
    mode: str | None = None,
    sampling_period: int | None = None,
) -> int:
    """Start and activate a profiling session; returns its id.

    name: output path without suffix (default ``"flagprism"``; parent directories are created).
    context: ``"shadow"`` (kernels under the open scopes) or ``"python"`` (under the launching
    Python call path, then scopes). data: ``"tree"`` (``<name>.hatchet``) or ``"trace"`` (also
    ``<name>.chrome_trace.json``). backend: None picks one ("cupti" where a CUDA device is
    present and CUPTI can start, else "host", with a warning when it had to give up CUPTI),
    ``"host"``, or ``"cupti"`` (device times; raises when it cannot start: NotSupportedError
    without a GPU or libcupti, flagprism.Error FP_EBUSY with another CUPTI subscriber). hook:
    None or ``"triton"`` (record each kernel's ``launch_metadata`` values). estimates: attach
    ``est_bytes``/``est_flops`` derived from the kernel's TTIR (``FLAGPRISM_PROF_ESTIMATES=0``
    turns them off process-wide). metrics: hardware counters per kernel through CUPTI's range
    profiler (needs the "cupti" backend, which it implies for backend=None): a list of metric
    names, a comma-separated string, or ``"default"`` (DRAM bytes read/written, SM and memory
    throughput %, L2 hit rate, achieved occupancy). Kernels are serialised and replayed once per
    pass; see docs/guide/profiler.md ("Hardware metrics").

    Intra-kernel timelines (docs/guide/intra-kernel.md): ``backend="instrumentation"`` (kernel times
    from the backend None would pick) or ``instrumentation=True`` with any backend runs kernels
    with ``fpl.scope`` scopes as instrumented twins recording each program's scope times.
    auto_scopes: instead, one scope per top-level statement of each ``fpl.collect_start()``/
    ``collect_end()`` region (implies instrumentation). timeline_tracks: ``"sm"`` (one trace
    track per SM) or ``"program"``. timeline_capacity: records per program, 1 to 2**24 (None:
    sized from the launch; what does not fit is counted).

    mode: None (kernel times) or ``"pcsampling"``: CUPTI PC sampling with stall reasons, filed
    under each kernel as one child per source line (``file:line``) with ``num_samples``,
    ``num_stalled_samples`` and ``stalled_<reason>`` (needs the "cupti" backend, which it implies
    for backend=None, and access to the GPU's performance counters; not with ``metrics``).
    A kernel's samples are split among the scopes that launched it by GPU time; kernels whose
    module was loaded while CUPTI was attached but not sampling give no PC records (counted as
    ``nonuser_samples``). sampling_period: 2^N cycles between samples per SM, N in 5..31
    (None: CUPTI's default). See docs/internals/cupti-backend.md ("PC sampling").

    Under ``flagprism profile`` this returns the command's session and starts nothing."""
    global _atexit_registered
    with _lock:
        if _cli_session is not None and _cli_session in _sessions:
            return _cli_session
        _choice("context", context, CONTEXTS)
        _choice("data", data, DATA)
        if hook is not None:
            _choice("hook", hook, HOOKS)
        _choice("timeline_tracks", timeline_tracks, ("sm", "program"))
        if timeline_capacity is not None and (
            isinstance(timeline_capacity, bool)
            or not isinstance(timeline_capacity, int)
            or not 1 <= timeline_capacity <= MAX_TIMELINE_CAPACITY
        ):
            raise ValueError(
                f"timeline_capacity must be None or an int from 1 to {MAX_TIMELINE_CAPACITY} "
                f"(2**24 records per program), got {timeline_capacity!r}"
            )
        if backend == "instrumentation":
            # timelines, with kernel times from the best backend there is (as backend=None)
            backend, instrumentation = None, True
        instrumentation = bool(instrumentation or auto_scopes)
        mlist = _metrics_list(metrics)
        if mlist is not None:
            backend = _metrics_backend(backend)
        pcs = _pcsampling_mode(mode, sampling_period, mlist is not None)
        if pcs:
            backend = _pcsampling_backend(backend)
        be, auto = _pick_backend(backend)
        path = _check_name_path(name)
        notes = _profhook.install()
        try:
            if mlist is not None:
                _ext.cupti_metrics_request(mlist)
            if pcs:
                _pcsampling_prepare(sampling_period)
            sid, be, fallback = _start_backend(path, context, data, be, auto and not pcs, hook)
        except BaseException:
            if not _sessions:
                _profhook.uninstall()
            raise
        finally:
            if mlist is not None:
                _ext.cupti_metrics_request(None)
            if pcs:
                _ext.cupti_pcsampling_cancel()
        s = _Session(
            id=sid,
            name=path,
            context=context,
            data=data,
            backend=be,
            hook=hook,
            estimates=bool(estimates),
            instrumentation=instrumentation,
            auto_scopes=bool(auto_scopes),
            timeline_tracks=timeline_tracks,
            timeline_capacity=timeline_capacity,
        )
        try:
            _environment(sid, be, notes, fallback)
            _dist.attach(sid)
            if instrumentation:
                _ext.prof_set_meta(sid, "intra_kernel", _timeline.describe(s))
        except BaseException:
            _ext.prof_finalize(sid)
            if not _sessions:
                _profhook.uninstall()
            raise
        _sessions[sid] = s
        _refresh()
        _dist.install()
        if not _atexit_registered:
            atexit.register(_at_exit)
            _atexit_registered = True
        return sid


def _real(path: str) -> str:
    """A session name's place: its directory resolved (links, ".."), the last part as given."""
    head, tail = os.path.split(path)
    return os.path.join(os.path.realpath(head or "."), tail)


def _check_name_path(name: Any) -> str:
    """The session's output path (without suffix), checked before anything starts (lock held):
    a str (bytes are refused), not the place of an open session (the two would overwrite each
    other's files, also through a link to the same directory), its directory made. The C core
    resolves the name's directory at start (a later chdir changes nothing), locks the name
    against other processes, and checks that files can be written there and that the names fit
    the file system."""
    if name is None:
        path: Any = DEFAULT_PROFILE_NAME
    elif isinstance(name, (str, os.PathLike)):
        path = os.fspath(name)
    else:
        path = name
    if not isinstance(path, str):
        raise TypeError(f"name must be a str path or os.PathLike of str, not {type(path).__name__}")
    if not path or "\0" in path:
        raise ValueError(f"name must be a non-empty path without NUL characters, got {path!r}")
    path = _dist.output_name(path)  # out/prof.rank<R> in a torchrun job
    parent = os.path.dirname(path)
    if parent:
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            code = errno.errorcode.get(e.errno or 0, str(e.errno))
            raise OSError(
                e.errno,
                f"cannot create the directory {parent!r} for the profile: {e.strerror} ({code})",
            ) from None
    full = _real(path)
    for s in _sessions.values():
        if _real(s.name) == full:
            raise ValueError(
                f"profiling session {s.id} already writes {s.name!r}"
                + ("" if s.name == path else f" (the same place as {path!r})")
                + ": finalize it first or give this session another name"
            )
    return path


def _start_backend(
    path: str, context: str, data: str, be: str, auto: bool, hook: str | None
) -> tuple[int, str, str | None]:
    """prof_start() on `be` (lock held): (session id, backend, why it fell back or None). A
    CUPTI backend picked by backend=None that cannot start (no libcupti or driver, another
    CUPTI subscriber such as Proton) gives way to "host" with a warning; asked for by name, it
    raises."""
    if be != "cupti":
        return _ext.prof_start(path, context, data, be, hook), be, None
    _configure_cupti()
    _configure_cupti_capture()
    try:
        return _ext.prof_start(path, context, data, be, hook), be, None
    except _ext.Error as e:
        if not auto:
            raise
        reason = f"{e.status_name}: {e.detail or e}"
    warnings.warn(
        "flagprism.profiler: a CUDA device is present but the CUPTI backend cannot start "
        f"({reason}); using the 'host' backend: kernel times are host-measured launch times "
        "(launch enter to exit hook), not device execution times. backend='cupti' makes this "
        "an error",
        RuntimeWarning,
        stacklevel=3,
    )
    sid = _ext.prof_start(path, context, data, "host", hook)
    return sid, "host", f"backend=None fell back from 'cupti' to 'host': {reason}"


def activate(session: int | None = None) -> None:
    """Resume recording in a session (None: every open session)."""
    sid = _session_id(session)
    with _lock:
        _ext.prof_activate(sid)
        for s in _sessions.values():
            if sid is None or s.id == sid:
                s.active = True
        _refresh()


def deactivate(session: int | None = None) -> None:
    """Pause a session (None: every open one): launches and metrics are ignored (and counted),
    scopes stay paired."""
    sid = _session_id(session)
    with _lock:
        _ext.prof_deactivate(sid)
        for s in _sessions.values():
            if sid is None or s.id == sid:
                s.active = False
        _refresh()


def _finalize(targets: list[int], output_format: str) -> list[str]:
    """Finalize the sessions `targets` that are still open (lock taken here): another thread may
    have finalized one since the caller listed it; that one is skipped. The paths come from the
    C core as it wrote them (a rescued file has its rescue path); no output is read back, so a
    FIFO planted where one was written cannot make this wait."""
    paths: list[str] = []
    error: BaseException | None = None
    with _lock:
        for sid in targets:
            s = _sessions.pop(sid, None)
            if s is None:
                continue  # finalized meanwhile by another thread
            _profhook.session_ending(s)  # estimate notes, before the files
            _finalized.add(sid)
            _refresh()
            _dist.uninstall()
            _dist.attach(sid)  # device, backend and clock barrier, known by now
            try:
                running = _profhook.session_closing(s)
                if running:
                    _ext.prof_mark_incomplete(
                        sid,
                        f"{running} launch{'es' if running != 1 else ''} began while the "
                        "session was open and were still running at finalize: not recorded",
                    )
                written = _ext.prof_finalize(sid, output_format or None)
                paths.extend(path for _writer, path in written)
            except Exception as e:  # noqa: BLE001 - finalize the others, then raise the first
                error = error or e
        if not _sessions:
            _profhook.uninstall()
    if error is not None:
        raise error
    return paths


def finalize(session: int | None = None, output_format: str = "") -> list[str]:
    """Stop a session (None: every open one), write its files and return their paths.

    output_format: "" for the data option's files, or ``"hatchet"``, ``"chrome_trace"`` (a
    comma list). ``<name>.meta.json`` is always written. Under ``flagprism profile`` the
    command's session is finalized by the command when the script ends; this returns []."""
    sid = _session_id(session)
    with _lock:
        if _cli_session is not None and (sid is None or sid == _cli_session):
            return []
        targets = sorted(_sessions) if sid is None else [sid]
    return _finalize(targets, output_format)


def depth(session: int) -> int:
    """Scopes open on this thread in one session."""
    sid = _session_id(session)
    if sid is None:
        raise ValueError("depth() needs a session id")
    return int(_ext.prof_scope_depth(sid))


def sessions() -> list[dict[str, Any]]:
    """The open sessions: id, name, context, data, backend, hook, estimates, active."""
    with _lock:
        return [
            {
                "id": s.id,
                "name": s.name,
                "context": s.context,
                "data": s.data,
                "backend": s.backend,
                "hook": s.hook,
                "estimates": s.estimates,
                "active": s.active,
                "instrumentation": s.instrumentation,
                "auto_scopes": s.auto_scopes,
            }
            for s in _sessions.values()
        ]


# ------------------------------------------------------------------------------------------------
# Scopes and states
# ------------------------------------------------------------------------------------------------


def _finalized_meanwhile(session: int | None) -> bool:
    """Whether a context manager's explicit session was finalized while it was open."""
    if session is None or isinstance(session, bool) or not isinstance(session, int):
        return False
    with _lock:
        return session in _finalized


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a scope or state name must be a non-empty str, not {name!r}")
    return name


def _metrics(metrics: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """Checked (name, value) pairs, before anything is entered or added."""
    if not metrics:
        return []
    if not isinstance(metrics, Mapping):
        raise TypeError(
            f"metrics must be a mapping of name to number, not {type(metrics).__name__}"
        )
    out = []
    for key, value in metrics.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"metric names must be non-empty str, not {key!r}")
        try:
            if isinstance(value, (str, bytes, bool)):
                raise TypeError
            out.append((key, float(value)))  # ints, floats, numpy scalars, 0-d tensors
        except (TypeError, ValueError):
            raise TypeError(
                f"metric {key!r} must be a number, not {type(value).__name__}"
            ) from None
    return out


_warned_too_deep = False


def _too_deep(name: str) -> None:
    """A scope was deeper than a session's limit (256): C counted and dropped it; say so once."""
    global _warned_too_deep
    if _warned_too_deep:
        return
    _warned_too_deep = True
    warnings.warn(
        f"flagprism.profiler: scope {name!r} is nested deeper than the session's limit "
        f"({_MAX_SCOPE_DEPTH} open scopes per thread): it and any deeper ones are counted "
        "(lost.scopes_too_deep in the metadata) and dropped, their kernels filed under the "
        "deepest scope kept; this warning is given once",
        RuntimeWarning,
        stacklevel=3,
    )


def _add_metrics(session: int | None, metrics: list[tuple[str, float]]) -> None:
    for key, value in metrics:
        _ext.prof_scope_metric(session, key, value)


def enter_scope(
    name: str, *, metrics: Mapping[str, float] | None = None, session: int | None = None
) -> None:
    """Open scope ``name`` on this thread; ``metrics`` are added to it."""
    sid = _session_id(session)
    values = _metrics(metrics)
    if _ext.prof_scope_enter(sid, _check_name(name)):
        _too_deep(name)
    _add_metrics(sid, values)


def exit_scope(
    name: str | None = None,
    *,
    metrics: Mapping[str, float] | None = None,
    session: int | None = None,
) -> None:
    """Close this thread's innermost scope (named ``name``, when given); ``metrics`` are added to
    it first. An exit without an enter, or a name that is not the innermost open scope's, raises
    flagprism.Error (status ``FP_ESTATE``) and changes nothing."""
    sid = _session_id(session)
    if name is not None:
        _check_name(name)
    values = _metrics(metrics)
    _add_metrics(sid, values)
    _ext.prof_scope_exit(sid, name)


class scope:
    """A context manager and decorator that wraps code in a scope:

    with scope("attention", {"bytes": 4096}): ...
    @scope("step")
    def step(): ...
    """

    _cpu_time = False

    def __init__(
        self, name: str, metrics: Mapping[str, float] | None = None, *, session: int | None = None
    ) -> None:
        self.name = _check_name(name)
        self.metrics = metrics
        self.session = session

    def __enter__(self) -> scope:
        sid = _session_id(self.session)
        values = _metrics(self.metrics)
        if _ext.prof_scope_enter(sid, self.name, self._cpu_time):
            _too_deep(self.name)
        _add_metrics(sid, values)
        return self

    def __exit__(self, *exc: Any) -> None:
        if _finalized_meanwhile(self.session):
            return
        _ext.prof_scope_exit(_session_id(self.session), self.name)

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)(self.name, self.metrics, session=self.session):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class cpu_timed_scope(scope):
    """A scope that also records its host time as ``cpu_time (ns)(exc)`` on its node."""

    _cpu_time = True


def enter_state(name: str, *, session: int | None = None) -> None:
    """Tag this thread's launches with state ``name`` (a node just above the kernels) until
    exit_state(). States do not nest: entering one replaces the current one."""
    _ext.prof_state_enter(_session_id(session), _check_name(name))


def exit_state(*, session: int | None = None) -> None:
    _ext.prof_state_exit(_session_id(session))


class state:
    """A context manager and decorator for enter_state()/exit_state()."""

    def __init__(self, name: str, *, session: int | None = None) -> None:
        self.name = _check_name(name)
        self.session = session

    def __enter__(self) -> state:
        enter_state(self.name, session=self.session)
        return self

    def __exit__(self, *exc: Any) -> None:
        if _finalized_meanwhile(self.session):
            return
        exit_state(session=self.session)

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with state(self.name, session=self.session):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def profile(
    func: F | None = None,
    *,
    name: str | None = None,
    context: str = "shadow",
    data: str = "tree",
    backend: str | None = None,
    hook: str | None = None,
    estimates: bool = True,
    metrics: str | Sequence[str] | None = None,
) -> Any:
    """Profile each call of ``func`` in its own session (finalized when the call returns or
    raises): ``profile(fn, name="run")(*args)`` or ``@profile(name="run")``."""
    opts = {
        "name": name,
        "context": context,
        "data": data,
        "backend": backend,
        "hook": hook,
        "estimates": estimates,
        "metrics": metrics,
    }
    if func is None:
        return functools.partial(profile, **opts)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        sid = start(**opts)  # type: ignore[arg-type]
        try:
            return func(*args, **kwargs)
        finally:
            finalize(sid)

    return wrapper


# ------------------------------------------------------------------------------------------------
# `flagprism profile` (flagprism._run calls these)
# ------------------------------------------------------------------------------------------------


def _cli_begin(options: Mapping[str, str]) -> None:
    """Start the command's session from its options; start()/finalize() in the script then
    return this session and do nothing."""
    global _cli_session
    import runpy

    # runpy runs the script; "<string>" is the `python -c` bootstrap of the command (and, the
    # price of that, any code compiled from a string is left out of call paths too).
    runpy_file = getattr(runpy, "__file__", None)
    for prefix in (runpy_file, "<frozen runpy>", "<string>"):
        if prefix and prefix not in _profhook.extra_skip:
            _profhook.extra_skip.append(prefix)
    sid = start(
        options.get("name") or DEFAULT_PROFILE_NAME,
        context=options.get("context") or "shadow",
        data=options.get("data") or "tree",
        backend=options.get("backend") or None,
        hook=options.get("hook") or None,
        metrics=options.get("metrics") or None,
        mode=options.get("mode") or None,
        sampling_period=int(options["sampling-period"]) if options.get("sampling-period") else None,
    )
    _ext.prof_set_meta(sid, "command", "flagprism profile")
    with _lock:
        _cli_session = sid


def _cli_incomplete(reason: str) -> None:
    """The program did not finish (a signal ended it): the command's session is written marked
    incomplete with `reason`."""
    with _lock:
        sid = _cli_session
        if sid is None or sid not in _sessions:
            return
        _ext.prof_mark_incomplete(sid, reason)


def _cli_end(status: int) -> list[str]:
    """Finalize the command's session; returns lines to print (where the outputs are)."""
    global _cli_session
    with _lock:
        sid, _cli_session = _cli_session, None
        if sid is None or sid not in _sessions:
            return []
        if status != 0:
            _ext.prof_set_meta(sid, "script_exit_status", str(status))
    paths = _finalize([sid], "")
    if not paths:
        return ["flagprism: profile: no output was written"]
    return ["flagprism: profile written: " + ", ".join(paths)]
