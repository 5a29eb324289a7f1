# SPDX-License-Identifier: Apache-2.0
"""The Debugger's public API: configure, activate, and collect exported runs.

While the Debugger is active, every launch of a ``@triton.jit`` kernel whose source holds
``fpl.collect_start()``/``fpl.collect_end()`` markers runs the kernel's instrumented twin instead
(see ``_rewrite.py``), with a record buffer the twin fills; the buffer is then decoded and written
as reports by the C library (``flagprism._ext.debug_report``). Kernels without markers, and all
kernels while the Debugger is inactive, take Triton's own launch path unchanged: activation
wraps ``JITFunction.run`` (and the interpreter's ``InterpretedFunction.run``) and
``deactivate()`` puts the originals back. Autotuner benchmarking runs the uninstrumented kernel;
only the launch with the chosen configuration is recorded.

Nothing here decodes records or formats reports; that is C's work.
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from flagprism import (
    _checkgen,
    _dbgexport,
    _devbuf,
    _dist,
    _intercept,
    _launch,
    _paths,
    _plans,
    _regs,
    _replay,
    _rewrite,
    _warps,
    compat,
)
from flagprism._rewrite import MarkerError, RewriteError, UnsupportedError

__all__ = [
    "configure",
    "activate",
    "deactivate",
    "get_config",
    "reset_config",
    "is_available",
    "take_exported_runs",
    "peek_exported_runs",
    "clear_exported_runs",
    "summary",
    "write_summary",
    "reset_summary",
    "RewriteError",
    "MarkerError",
    "UnsupportedError",
]


def _check_registry() -> dict[str, dict[str, Any]]:
    """The library's registry of checks (fp_dbg_check_at, through flagprism._ext.debug_checks):
    name -> its finding kinds and what it needs recorded. Empty without the extension."""
    try:
        from flagprism import _ext  # type: ignore[attr-defined]

        return {c["name"]: c for c in _ext.debug_checks()}
    except (ImportError, AttributeError):
        return {}


_CHECK_INFO = _check_registry()
#: The checks of check mode (docs/guide/debugger.md, "Check mode"), in the library's order;
#: "bounds" is what sanitize does.
CHECKS = tuple(_CHECK_INFO)
#: Default bytes of the launch pipeline's pool per device (record buffers of launches in flight).
POOL_BYTES = 256 << 20


@dataclass
class _Config:
    output_dir: str = "fp_debug"
    record_capacity: int | None = None
    export_on_error: bool = False
    export_raw_records: bool = False
    dump_capacity: int | None = None
    twin_num_warps: str | int = "auto"
    twin_maxnreg: str | int | None = "auto"
    pipeline: bool = True
    pool_bytes: int = POOL_BYTES
    all_reports: bool | None = None
    max_reports: int | None = None
    kernel: str | None = None
    launch: tuple[int, int] | None = None
    max_runs: int = 10000
    check_continue: str = "suppress"


_lock = threading.RLock()
_config = _Config()
_kernel_re: Any = None  # compiled _config.kernel
_active = False
_level = 1
_addr_level = 1
_exact_sums = False  # level 1's float sums in float64 per element (activate(exact_sums=True))
_sanitize = False
_checks: frozenset[str] = frozenset()
_sanitize_skipped: dict[str, str] = {}  # kernels sanitize mode could not instrument: name -> why
_summary: Any = None  # the whole-program summary (a capsule of flagprism._ext), made on first use

#: Launch statuses of the summary (<flagprism/debug-summary.h>, enum fp_dbg_launch_status).
S_INSTRUMENTED, S_EXCLUDED, S_UNOBSERVABLE, S_FAILED, S_NOTHING = range(5)
_bypass: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "flagprism_debugger_bypass", default=False
)

# id(kernel) -> (weakref to kernel, has-markers flag);
# id(kernel) -> {(level, addr, flavour, checks, suppress, exact_sums): Twin}
_TwinKey = tuple[int, int, str, frozenset[str], bool, bool]
_marker_cache: dict[int, tuple[Any, bool]] = {}
_twin_cache: dict[int, tuple[Any, dict[_TwinKey, _rewrite.Twin | None]]] = {}
_ttir_cache: dict[tuple[int, str], tuple[str | None, str | None]] = {}


def _check_level(name: str, v: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 2:
        raise ValueError(f"{name} must be 0, 1 or 2, got {v!r}")
    return v


#: Largest record_capacity (records of one launch, 64 bytes each: a 16 GiB buffer) and
#: dump_capacity (8-byte words: 16 GiB) that configure() accepts.
MAX_RECORD_CAPACITY = 1 << 28
MAX_DUMP_CAPACITY = 1 << 31
_CAPACITY_MAX = {"record_capacity": MAX_RECORD_CAPACITY, "dump_capacity": MAX_DUMP_CAPACITY}


def _check_capacity(name: str, v: int | None) -> int | None:
    top = _CAPACITY_MAX[name]
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
        raise ValueError(
            f"{name} must be None or an integer from 0 to {top} (2**{top.bit_length() - 1}), "
            f"got {v!r}"
        )
    return v


def _check_launch(v: Any) -> tuple[int, int] | None:
    """None, N, (N, M), "N" or "N-M": the launch indices to instrument (inclusive)."""
    if v is None:
        return None
    lo: Any
    hi: Any
    if isinstance(v, str):
        parts = v.split("-", 1)
        try:
            lo = int(parts[0])
            hi = int(parts[1]) if len(parts) == 2 else lo
        except ValueError:
            raise ValueError(
                f"launch must be N or N-M (launch indices from 0), got {v!r}"
            ) from None
    elif isinstance(v, int) and not isinstance(v, bool):
        lo = hi = v
    elif isinstance(v, (tuple, list)) and len(v) == 2:
        lo, hi = v
    else:
        raise ValueError(f'launch must be None, N, (N, M) or "N-M", got {v!r}')
    if (
        not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi))
        or not 0 <= lo <= hi
    ):
        raise ValueError(f"launch must name indices 0 <= N <= M, got {v!r}")
    return (lo, hi)


def _check_output_dir(v: Any) -> str:
    """output_dir as a str path: bytes (or a PathLike of bytes) and empty paths are refused here,
    not at the first launch."""
    path = os.fspath(v) if isinstance(v, (str, os.PathLike)) else v
    if not isinstance(path, str):
        raise TypeError(
            f"output_dir must be a str path or os.PathLike of str, not {type(v).__name__}"
        )
    if not path or "\0" in path:
        raise ValueError(
            f"output_dir must be a non-empty path without NUL characters, got {path!r}"
        )
    return path


def configure(
    output_dir: str | os.PathLike[str] = "fp_debug",
    record_capacity: int | None = None,
    export_on_error: bool = False,
    export_raw_records: bool = False,
    dump_capacity: int | None = None,
    twin_num_warps: str | int = "auto",
    twin_maxnreg: str | int | None = "auto",
    pipeline: bool = True,
    pool_bytes: int = POOL_BYTES,
    all_reports: bool | None = None,
    max_reports: int | None = None,
    kernel: str | None = None,
    launch: Any = None,
    max_runs: int = 10000,
    check_continue: str = "suppress",
) -> None:
    """Set every option of the Debugger (options not given take their default).

    output_dir: where reports are written (a str path). record_capacity: total records of one
    launch, 0 to 2**28 (None: sized from the launch). export_on_error: export what was captured
    when the kernel raises. export_raw_records: also write the raw record buffer. dump_capacity:
    words of the level-2 dump arena of one launch, 0 to 2**31 (None: sized from the launch; 0:
    every dump is counted as overflow). twin_num_warps: warps of the instrumented
    twin: "auto" (fewer than the kernel's where its results cannot depend on the warp count, see
    docs/guide/debugger.md), "same" (the kernel's), or a power of two from 1 to 32 (used where results
    cannot depend on it, else the kernel's). twin_maxnreg: register cap of the twin on NVIDIA GPUs
    (Triton's maxnreg): "auto" (cap at the next occupancy step where that step is close and the
    capped build does not spill, see docs/guide/debugger.md), None (never cap) or an integer from 16 to
    255 (always that cap). pipeline: report launches in the background without waiting for each
    (the default; docs/guide/debugger.md, "The launch pipeline"). pool_bytes: the pipeline's pool per
    device (records of launches in flight; 1 MiB to 64 GiB). all_reports: write every launch's
    report files (default: yes in marker mode, only launches with findings in check mode).
    max_reports: per-launch reports written at most (None: no limit; findings of later launches
    still reach the summary). kernel: a regular expression; only kernels whose name it finds
    (re.search) are instrumented. launch: N, (N, M) or "N-M": only those launch indices (from 0,
    in the order the Debugger sees launches) are instrumented. max_runs: run dicts kept for
    take_exported_runs() (older ones are dropped and counted). check_continue: what a lane found
    out of bounds does: "suppress" (the default: the access is not performed; a load yields
    `other`, a store or atomic is dropped, so the program survives the bug it reports) or "run"
    (the access is performed, as without the Debugger)."""
    global _config, _kernel_re
    import re

    if (
        not isinstance(pool_bytes, int)
        or isinstance(pool_bytes, bool)
        or not (1 << 20) <= pool_bytes <= (64 << 30)
    ):
        raise ValueError(f"pool_bytes must be an integer from 1 MiB to 64 GiB, got {pool_bytes!r}")
    if max_reports is not None and (
        isinstance(max_reports, bool) or not isinstance(max_reports, int) or max_reports < 0
    ):
        raise ValueError(f"max_reports must be None or an integer >= 0, got {max_reports!r}")
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise ValueError(f"max_runs must be an integer >= 1, got {max_runs!r}")
    if check_continue not in ("suppress", "run"):
        raise ValueError(f'check_continue must be "suppress" or "run", got {check_continue!r}')
    kre = None
    if kernel is not None:
        try:
            kre = re.compile(kernel)
        except (re.error, TypeError) as e:
            raise ValueError(f"kernel must be a regular expression, got {kernel!r}: {e}") from None
    cfg = _Config(
        output_dir=_dist.output_dir(_check_output_dir(output_dir)),
        record_capacity=_check_capacity("record_capacity", record_capacity),
        export_on_error=bool(export_on_error),
        export_raw_records=bool(export_raw_records),
        dump_capacity=_check_capacity("dump_capacity", dump_capacity),
        twin_num_warps=_warps.check_setting(twin_num_warps),
        twin_maxnreg=_regs.check_setting(twin_maxnreg),
        pipeline=bool(pipeline),
        pool_bytes=pool_bytes,
        all_reports=None if all_reports is None else bool(all_reports),
        max_reports=max_reports,
        kernel=kernel,
        launch=_check_launch(launch),
        max_runs=max_runs,
        check_continue=check_continue,
    )
    with _lock:
        _config = cfg
        _kernel_re = kre
        _new_epoch()


def get_config() -> dict[str, Any]:
    """The current options plus activation state (``active``, ``level``, ``addr_level``,
    ``exact_sums``, ``sanitize``, ``check``)."""
    with _lock:
        d = asdict(_config)
        d.update(
            active=_active,
            level=_level,
            addr_level=_addr_level,
            exact_sums=_exact_sums,
            sanitize=_sanitize,
            check=tuple(c for c in CHECKS if c in _checks),
        )
        return d


def reset_config() -> None:
    """Restore every ``configure()`` option to its default (activation is left as it is)."""
    global _config, _kernel_re
    with _lock:
        _config = _Config()
        _kernel_re = None
        _new_epoch()


#: Changes whenever what a launch's path depends on may change (configure, activate,
#: deactivate): replayed launches (_replay) remember the epoch they were learnt in.
_epoch = 0


def _new_epoch() -> None:
    global _epoch
    _epoch += 1


def _check_checks(check: Any) -> frozenset[str]:
    if check is None:
        return frozenset()
    items = [c.strip() for c in check.split(",")] if isinstance(check, str) else list(check)
    if not CHECKS:
        raise RuntimeError(
            "flagprism: check mode needs the native extension flagprism._ext, which did not import"
        )
    bad = [c for c in items if c not in CHECKS]
    if bad or not items:
        raise ValueError(f"check must name one or more of {', '.join(CHECKS)}, got {check!r}")
    return frozenset(items)


def activate(
    level: int = 1,
    addr_level: int = 1,
    sanitize: bool = False,
    check: Any = None,
    exact_sums: bool = False,
) -> None:
    """Start instrumenting kernels with markers. level: 0 no values, 1 value summaries, 2 summaries
    and full dumps. addr_level: 0 no addresses, 1 address summaries, 2 summaries and every lane.
    check: instead, check mode: every launch of every kernel, markers or not, over its whole body,
    recording only what the checks need; a comma list or iterable of "bounds" (every load and
    store against the tensors' extents), "nan", "inf" (where NaN/Inf first appear),
    "precision" (narrowing casts, cancellation), "domain" (division by zero, log/sqrt/pow
    outside their domain); reports are written only for launches with findings (see
    docs/guide/debugger.md, "Check mode"). sanitize=True is check=("bounds",). exact_sums: the
    sums behind a float value summary's mean and L2 norm in float64 per element (the records of earlier
    releases, bit for bit) instead of float32 per block and program (docs/guide/debugger.md, "Accuracy")."""
    global _active, _level, _addr_level, _sanitize, _checks, _exact_sums
    lv = _check_level("level", level)
    al = _check_level("addr_level", addr_level)
    checks = _check_checks(check)
    if not isinstance(exact_sums, bool):
        raise TypeError(f"exact_sums must be True or False, got {exact_sums!r}")
    if sanitize:
        checks = checks | {"bounds"}
    with _lock:
        _level, _addr_level, _checks, _exact_sums = lv, al, checks, exact_sums
        _sanitize = bool(checks)
        _new_epoch()
        if not _active:
            _install()
            _active = True


def deactivate(release_memory: bool = False) -> None:
    """Stop instrumenting; every kernel launches through Triton's own path again. Launches still
    in the pipeline are finished first. The pipeline's device pool goes back to PyTorch's
    allocator; its page-locked host half is kept for the next activate() (page-locking 256 MiB
    costs about 0.1 s) unless release_memory is true, which frees it."""
    global _active
    with _lock:
        if _active:
            _uninstall()
            _active = False
        _new_epoch()
    _dbgexport.close_all()
    if release_memory:
        _dbgexport.release_spare()


def is_available() -> bool:
    """True when Triton, PyTorch and the native report writer (flagprism._ext) are all usable."""
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401

        from flagprism import _ext  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001
        return False
    return callable(getattr(_ext, "debug_report", None))


def take_exported_runs() -> list[dict[str, Any]]:
    """The runs exported since the last take/clear, oldest first (launches still in the pipeline
    are finished first); the list is then emptied. At most ``max_runs`` are kept."""
    _dbgexport.drain()
    with _dbgexport._lock:
        out = list(_dbgexport._runs)
        _dbgexport._runs.clear()
        return out


def peek_exported_runs() -> list[dict[str, Any]]:
    """The runs exported since the last take/clear, without removing them."""
    _dbgexport.drain()
    with _dbgexport._lock:
        return list(_dbgexport._runs)


def clear_exported_runs() -> None:
    _dbgexport.drain()
    with _dbgexport._lock:
        _dbgexport._runs.clear()


def stats() -> dict[str, Any]:
    """The pipeline's counters per device (launches submitted, done, failed, waits for the pool,
    results dropped, reports suppressed by max_reports, pool bytes in use), ``runs_dropped``
    (run dicts beyond max_runs) and ``launch``: how instrumented launches were prepared
    (docs/guide/debugger.md, "The launch fast path": twins built, plans built and reused, sizings
    built and reused, launches that took the slow path and why (``slow_reasons``), compiled
    kernels and register decisions reused)."""
    out = _dbgexport.stats()
    out["launch"] = dict(_plans.counters)
    out["launch"]["slow_reasons"] = dict(_plans.slow_reasons)
    return out


def _summary_obj() -> Any:
    global _summary
    if _summary is None:
        with _lock:
            if _summary is None:
                from flagprism import _ext  # type: ignore[attr-defined]

                _summary = _ext.debug_summary_new()
    return _summary


def summary() -> dict[str, Any]:
    """The account of every launch since the last reset_summary(): totals (kernels, launches,
    by status: instrumented, excluded, unobservable, failed, nothing_to_observe; findings) and
    the whole summary as summary.json has it (``summary()["json"]``), and its text."""
    from flagprism import _ext  # type: ignore[attr-defined]

    _dbgexport.drain()
    s = _summary_obj()
    return {
        "totals": _ext.debug_summary_totals(s),
        "json": json.loads(_ext.debug_summary_format(s, "json")),
        "text": _ext.debug_summary_format(s, "txt"),
    }


def write_summary(output_dir: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """Write summary.json and summary.txt into output_dir (default: the configured one)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    with _lock:
        out = os.fspath(output_dir) if output_dir is not None else _config.output_dir
    _dbgexport.drain()
    _dist.describe_summary(_summary_obj())  # its rank, in a multi-process job
    os.makedirs(out, exist_ok=True)
    _ext.debug_summary_write(_summary_obj(), out)
    return os.path.join(out, "summary.json"), os.path.join(out, "summary.txt")


def _report_names(tag: str | None) -> None:
    """Start report names with `tag` instead of the script's name (None: the script's again):
    the pytest plugin's test names. A replayed launch is made again for the new names."""
    with _lock:
        if _dbgexport.report_tag[0] != tag:
            _dbgexport.report_tag[0] = tag
            _new_epoch()


def _summary_worker(worker: str | None, count: int | None) -> None:
    """Mark the summary as pytest-xdist worker `worker`'s part of a test session of `count`
    workers (None: not a worker's)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    s = _summary_obj()
    _ext.debug_summary_set(s, "worker", worker)
    _ext.debug_summary_set(s, "worker_count", -1 if count is None else int(count))


def _write_parts(
    output_dir: str, parts: list[str], expected: list[str]
) -> tuple[dict[str, Any], str]:
    """Write output_dir/summary.json and summary.txt: the summaries of a pytest-xdist session's
    workers (`parts`; `expected`: the workers that ran) merged under this process's own
    (fp_dbg_summary_write_parts()). Returns the merged totals (debug_summary_totals() plus
    parts, missing, nmissing, incomplete) and summary.txt's text."""
    from flagprism import _ext  # type: ignore[attr-defined]

    _dbgexport.drain()
    _dist.describe_summary(_summary_obj())
    os.makedirs(output_dir, exist_ok=True)
    res = _ext.debug_summary_write_parts(_summary_obj(), output_dir, parts, expected)
    with open(os.path.join(output_dir, "summary.txt"), encoding="utf-8", errors="replace") as f:
        return res, f.read()


def reset_summary() -> None:
    """Forget every launch of the summary (launch indices start at 0 again)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    _dbgexport.drain()
    _ext.debug_summary_clear(_summary_obj())
    with _lock:
        _bench_seen.clear()


# ------------------------------------------------------------------------------------------------
# Interception: one interceptor per launch path, through the shared registry (_intercept.py)
# ------------------------------------------------------------------------------------------------

#: What the Debugger does on each path (order 100: outside the timelines' interceptors).
_ORDER = 100
_handles: list[_intercept.Handle] = []
_hook_added = False
_tls = threading.local()  # .within: depth of Debugger interceptors on this thread
#: Set by the outer interceptors for the JITFunction launch below them: the launch path, and the
#: autotuner's role ("benchmark"/"chosen") and config.
_route: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "flagprism_debugger_route", default=None
)
_bench_seen: set[tuple[int, str]] = set()  # (id(autotuner), config) observed while benchmarking
#: CUDA graphs being captured on this thread (graph objects), and the kernels each graph holds.
_graph_kernels: dict[int, tuple[Any, list[tuple[str, str]]]] = {}


class _Within:
    """Marks a launch the Debugger has accounted for (the launch-hook observer skips it)."""

    def __enter__(self) -> None:
        _tls.within = getattr(_tls, "within", 0) + 1

    def __exit__(self, *exc: Any) -> None:
        _tls.within -= 1


def _account(
    fn: Any, status: int, reason: str | None, count: int = 1, index: int | None = None
) -> int:
    """Put launches of `fn` into the summary; returns the index of the first."""
    name, file = _identity(fn)
    return _summary_launch(name, file, status, reason, count, index)


def _summary_launch(
    name: str, file: str, status: int, reason: str | None, count: int = 1, index: int | None = None
) -> int:
    from flagprism import _ext  # type: ignore[attr-defined]

    return int(_ext.debug_summary_launch(_summary_obj(), name, file, status, reason, count, index))


def _identity(fn: Any) -> tuple[str, str]:
    key = id(fn)
    hit = _ident_cache.get(key)
    if hit is not None and hit[0]() is fn:
        return hit[1]
    ident = (_paths.kernel_name(fn), _paths.source_file(fn))
    try:
        _ident_cache[key] = (weakref.ref(fn), ident)
    except TypeError:
        pass
    return ident


_ident_cache: dict[int, tuple[Any, tuple[str, str]]] = {}


#: what _capturing() returns during a CUDA graph tree's warm-up run (_graph_warmup)
_WARMUP = object()


def _capturing(fn: Any) -> Any:
    """The CUDA graph being captured on this thread's current stream, True when one is captured
    but not through torch.cuda.graph, _WARMUP inside a CUDA graph tree's warm-up run (its
    allocations go to the graph's memory pool), or None."""
    graph = getattr(_tls, "graph", None)
    if graph is not None:
        return graph
    if getattr(_tls, "warmup", False):
        return _WARMUP
    global _is_capturing
    f = _is_capturing
    if f is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        # what torch.cuda.is_current_stream_capturing() calls, without its Python frame
        f = _is_capturing = getattr(
            torch._C, "_cuda_isCurrentStreamCapturing", torch.cuda.is_current_stream_capturing
        )
    if _plans.backend_of(fn) == "interpreter":
        return None
    try:
        return True if f() else None
    except Exception:  # noqa: BLE001 - no CUDA
        return None


_is_capturing: Any = None


def _note_captured(fn: Any, graph: Any) -> None:
    if graph is _WARMUP:
        _account(
            fn,
            S_UNOBSERVABLE,
            "launched during a CUDA graph's warm-up run (torch.compile "
            'mode="reduce-overhead"): what is allocated there goes to the graph\'s private '
            "memory pool, where the Debugger's record buffers must not live; the kernel is "
            "then captured and replayed from the graph (run without graphs to check it)",
            index=_reserve(),
        )
        return
    _account(
        fn,
        S_UNOBSERVABLE,
        "launched during CUDA graph capture: it runs at each replay of the graph, "
        "where kernels cannot be instrumented (replays are counted separately)",
        index=_reserve(),
    )
    if graph is not True:
        entry = _graph_kernels.get(id(graph))
        if entry is not None:
            entry[1].append(_identity(fn))


def _reserve() -> int:
    from flagprism import _ext  # type: ignore[attr-defined]

    return int(_ext.debug_summary_reserve(_summary_obj()))


def _decide(fn: Any, index: int) -> tuple[int, str] | None:
    """Why launch `index` of `fn` is not instrumented (status, reason), or None: instrument it."""
    kre = _kernel_re
    if kre is not None and not kre.search(_paths.kernel_name(fn)):
        return (
            S_EXCLUDED,
            f"filtered out: the kernel's name does not match --kernel {kre.pattern!r}",
        )
    rng = _config.launch
    if rng is not None and not rng[0] <= index <= rng[1]:
        return S_EXCLUDED, f"filtered out: --launch {rng[0]}-{rng[1]} (launch indices from 0)"
    if not (_sanitize or _has_markers(fn)):
        return (
            S_EXCLUDED,
            "no fpl.collect_start()/collect_end() markers (only marked kernels are observed; "
            "--sanitize observes every kernel)",
        )
    return None


def _jit_run(call_next: Any, self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
    """JITFunction.run / InterpretedFunction.run: every Triton launch that reaches Triton's own path."""
    if (
        warmup
        or not _active
        or _bypass.get()
        or _intercept.in_internal()
        or getattr(self, "_fp_twin", False)
    ):
        return call_next(self, *args, grid=grid, warmup=warmup, **kwargs)
    with _Within():
        graph = _capturing(self)
        if graph is not None:
            _note_captured(self, graph)
            return call_next(self, *args, grid=grid, warmup=warmup, **kwargs)
        route = _route.get() or {}
        index = _reserve()
        if route.get("role") == "benchmark":
            key = (route["tuner"], route["config"])
            if key in _bench_seen:
                _account(
                    self,
                    S_EXCLUDED,
                    "autotuner benchmark repetition (the first launch of each config is observed)",
                    index=index,
                )
                return call_next(self, *args, grid=grid, warmup=warmup, **kwargs)
            _bench_seen.add(key)
        why = _decide(self, index)
        if why is not None:
            _account(self, why[0], why[1], index=index)
            return call_next(self, *args, grid=grid, warmup=warmup, **kwargs)
        if _report_fn is _ext_report:
            K = _replay.lookup(self, _epoch)
            if K is None:
                dev = _replay.stale_device(self)
                if dev is not None:
                    K = _refresh_replay(self, dev)
            if K is not None:  # the route's token only then: an autotuner's is its config's text
                token = _replay.route_token(route, _config_text)
                if token is not _replay.NO:
                    ret = _replayed(self, K, args, kwargs, grid, index, token)
                    if ret is not None:
                        return ret
        return _instrumented(self, args, kwargs, grid, call_next, route, index)


def _refresh_replay(fn: Any, dev: Any) -> Any:
    """The ReplayKernel of a kernel replayed before the Debugger changed (_replay.refresh), for the twin,
    configuration and pipeline of now (dev: _replay.stale_device(fn)); None: its next launch
    takes the Python path."""
    twin, _why = _twin_or_reason(fn)
    cfg = _config
    if twin is None or not cfg.pipeline:
        return _replay.refresh(fn, None, cfg, None, _epoch)
    findings_only = _sanitize if cfg.all_reports is None else not cfg.all_reports
    entry = _dbgexport.pipeline_for(dev, _summary_obj(), cfg, findings_only)
    return _replay.refresh(fn, twin, cfg, entry, _epoch)


def _replayed(
    fn: Any, K: Any, args: Any, kwargs: Any, grid: Any, index: int, token: str | None
) -> Any:
    """Launch `index` replayed (_replay; K: the kernel's ReplayKernel): the kernel's own compiled kernel, or None when it
    must take the Python path (nothing was done). A launch that raises is accounted for as the
    Python path does."""
    try:
        return _replay.run(K, args, kwargs, grid, index, _current_test(), token)
    except Exception as e:
        hint = _note_triton_error(e)
        _summary_launch(
            *_identity(fn),
            S_FAILED,
            f"the launch raised {type(e).__name__}: {str(e)[:300]}" + (f"; {hint}" if hint else ""),
            index=index,
        )
        raise


def _interp_run(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    """InterpretedFunction.run: _jit_run; an error that the installed Triton's interpreter itself
    causes (Triton 3.9's integer masks) gets a note with the workaround (flagprism.compat)."""
    try:
        return _jit_run(call_next, self, *args, **kwargs)
    except Exception as e:
        _note_triton_error(e)
        raise


def _note_triton_error(e: BaseException) -> str | None:
    hint = compat.explain_interpreter_error(e)
    if hint is not None and hasattr(e, "add_note") and not getattr(e, "_fp_noted", False):
        e.add_note(f"flagprism: {hint}")
        try:
            e._fp_noted = True  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return hint


def _autotune_run(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    """Autotuner.run: the launch below it runs the chosen config."""
    if not _active or _intercept.in_internal():
        return call_next(self, *args, **kwargs)
    outer = _route.get() or {}
    path = " > ".join(p for p in (outer.get("path"), "triton.autotune") if p)
    token = _route.set(
        {
            **outer,
            "path": path,
            "role": "chosen",
            "tuner": id(self),
            "config": None,
            "autotuner": self,
        }
    )
    try:
        return call_next(self, *args, **kwargs)
    finally:
        _route.reset(token)


def _autotune_bench(call_next: Any, self: Any, *args: Any, config: Any, **kwargs: Any) -> Any:
    """Autotuner._bench: the launches below it time one config; the first is observed."""
    if not _active or _intercept.in_internal():
        return call_next(self, *args, config=config, **kwargs)
    outer = _route.get() or {}
    path = " > ".join(p for p in (outer.get("path"), "triton.autotune") if p)
    token = _route.set(
        {
            **outer,
            "path": path,
            "role": "benchmark",
            "tuner": id(self),
            "config": str(config),
            "autotuner": None,
        }
    )
    try:
        return call_next(self, *args, config=config, **kwargs)
    finally:
        _route.reset(token)


def _libentry_run(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    """FlagGems' LibEntry.run: its cached path calls a CompiledKernel directly, so a launch the
    Debugger observes goes the way LibEntry's first launch does (self.fn.run)."""
    if not _active or _intercept.in_internal() or kwargs.get("warmup"):
        return call_next(self, *args, **kwargs)
    jit = getattr(self, "jit_function", None) or _paths.jit_function(self)
    if jit is None:
        with _Within():
            return call_next(self, *args, **kwargs)
    with _Within():
        if _capturing(jit) is None and not (_sanitize or _has_markers(jit)):
            # not selected whatever the launch index: LibEntry's own path (cached kernel)
            _account(
                jit,
                S_EXCLUDED,
                "no fpl.collect_start()/collect_end() markers (only marked kernels are "
                "observed; --sanitize observes every kernel)",
                index=_reserve(),
            )
            return call_next(self, *args, **kwargs)
        token = _route.set({**(_route.get() or {}), "path": "FlagGems LibEntry"})
        try:
            ret = self.fn.run(*args, **kwargs)
        finally:
            _route.reset(token)
        return ret, {}


def _inductor_run(
    call_next: Any,
    self: Any,
    *args: Any,
    stream: Any = None,
    benchmark_run: bool = False,
    **kwargs: Any,
) -> Any:
    """PyTorch Inductor's CachingAutotuner.run: launches through its own launchers (or PyTorch's
    static CUDA launcher), never JITFunction.run; translated here (_paths.inductor_launch)."""
    if benchmark_run or not _active or _intercept.in_internal():
        return call_next(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
    fn = getattr(self, "fn", None)
    with _Within():
        if fn is None:
            _summary_launch(
                str(getattr(self, "inductor_meta", {}).get("kernel_name", "inductor kernel")),
                "",
                S_FAILED,
                "the Inductor kernel has no Triton function",
                index=_reserve(),
            )
            return call_next(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        graph = _capturing(fn)
        if graph is not None:
            _note_captured(fn, graph)
            return call_next(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        index = _reserve()
        why = _decide(fn, index)
        if why is not None:
            _account(fn, why[0], why[1], index=index)
            return call_next(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        try:
            spec = _paths.inductor_launch(self, args, kwargs)
        except _paths.Unsupported as e:
            _account(fn, S_FAILED, f"Inductor launch not translatable: {e}", index=index)
            _warn_once(_paths.kernel_name(fn), f"runs unobserved: {e}")
            return call_next(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        route = {"path": "torch.compile (Inductor)", "role": None, "config": spec.config}
        try:
            _instrumented(spec.fn, (), spec.kwargs, spec.grid, None, route, index)
        except _NotInstrumented:
            return call_next(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        return None


def _graph_capture_begin(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    ret = call_next(self, *args, **kwargs)
    if _active:
        _tls.graph = self
        entry = _graph_kernels.get(id(self))
        if entry is None or entry[0]() is not self:
            try:
                _graph_kernels[id(self)] = (weakref.ref(self), [])
            except TypeError:
                pass
    return ret


def _graph_capture_end(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    if getattr(_tls, "graph", None) is self:
        _tls.graph = None
    return call_next(self, *args, **kwargs)


def _graph_warmup(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    """CUDAWarmupNode.run of torch.compile's CUDA graph trees: its launches allocate into the
    graph's private memory pool (torch checks that no tensor there outlives the run), so they
    are listed as not observable instead of instrumented (_capturing)."""
    if not _active:
        return call_next(self, *args, **kwargs)
    prev = getattr(_tls, "warmup", False)
    _tls.warmup = True
    try:
        return call_next(self, *args, **kwargs)
    finally:
        _tls.warmup = prev


def _graph_replay(call_next: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
    if _active and not _intercept.in_internal():
        entry = _graph_kernels.get(id(self))
        if entry is not None and entry[0]() is self:
            for name, file in entry[1]:
                _summary_launch(
                    name,
                    file,
                    S_UNOBSERVABLE,
                    "replayed from a CUDA graph (kernels inside a graph cannot be instrumented; "
                    "run the program without graphs, e.g. torch.compile without "
                    'mode="reduce-overhead", to check them)',
                )
    return call_next(self, *args, **kwargs)


def _observe_launch(metadata: Any) -> None:
    """Triton's launch_enter_hook, while the Debugger is active on a GPU: a compiled launch that
    none of the Debugger's interceptors accounted for was launched some other way (a
    CompiledKernel called directly); it is listed, never silently missing."""
    if not _active or getattr(_tls, "within", 0) or _intercept.in_internal():
        return
    try:
        data = metadata.data if hasattr(metadata, "data") else dict(metadata or {})
        name = str(data.get("name") or "kernel")
    except Exception:  # noqa: BLE001
        name = "kernel"
    _summary_launch(
        name,
        "",
        S_UNOBSERVABLE,
        "launched through a path FlagPrism does not hook (a compiled kernel called directly, "
        "not through JITFunction.run, an autotuner, FlagGems' LibEntry or torch.compile)",
    )


def _install() -> None:
    global _hook_added
    add = _intercept.add
    _handles.extend(
        [
            add("jit.run", "debugger", _jit_run, _ORDER),
            add("interp.run", "debugger", _interp_run, _ORDER),
            add("autotune.run", "debugger", _autotune_run, _ORDER),
            add("autotune.bench", "debugger", _autotune_bench, _ORDER),
            add("libentry.run", "debugger", _libentry_run, _ORDER),
            add("inductor.run", "debugger", _inductor_run, _ORDER),
            add("cudagraph.capture_begin", "debugger", _graph_capture_begin, _ORDER),
            add("cudagraph.capture_end", "debugger", _graph_capture_end, _ORDER),
            add("cudagraph.replay", "debugger", _graph_replay, _ORDER),
            add("cudagraph.warmup", "debugger", _graph_warmup, _ORDER),
        ]
    )
    chain = compat.hook_chain("launch_enter_hook")  # Triton's chain, or compat's over 3.4's knob
    if chain is not None:
        chain.add(_observe_launch)
        _hook_added = True
    else:
        _hook_added = False


def _uninstall() -> None:
    global _hook_added
    while _handles:
        _intercept.remove(_handles.pop())
    if _hook_added:
        chain = compat.hook_chain("launch_enter_hook")
        if chain is not None:
            chain.remove(_observe_launch)
        _hook_added = False


def install_notes() -> dict[str, str | None]:
    """Which launch paths the Debugger hooks now (None) and why not (text): for doctor and tests."""
    with _lock:
        return {h.site: _intercept.note(h.site) for h in _handles}


def _forget(key: int) -> Callable[[Any], None]:
    def cb(_ref: Any) -> None:
        _marker_cache.pop(key, None)
        _twin_cache.pop(key, None)

    return cb


def _has_markers(fn: Any) -> bool:
    key = id(fn)
    hit = _marker_cache.get(key)
    if hit is not None and hit[0]() is fn:
        return hit[1]
    flag = _rewrite.has_markers(fn)
    try:
        ref = weakref.ref(fn, _forget(key))
    except TypeError:
        return flag
    _marker_cache[key] = (ref, flag)
    return flag


def _flavour(fn: Any) -> str:
    """Which record helpers a twin calls: "fused" (one tuple reduction per record; the GPU
    form), "np" (NumPy-backed reductions; on the interpreter as plain Python functions) or
    "np-jit" (the same through the interpreter's @jit machinery). FLAGPRISM_DBG_REDUCE forces one."""
    forced = os.environ.get("FLAGPRISM_DBG_REDUCE")
    if forced in ("fused", "np", "np-jit"):
        return forced
    return "np" if _plans.backend_of(fn) == "interpreter" else "fused"


def _helpers(fn: Any, flavour: str, counts: bool = False, exact: bool = False) -> dict[str, Any]:
    from flagprism import _records as R

    if not isinstance(fn, type(R.begin)):
        raise RuntimeError(
            "flagprism: the kernel and flagprism's record helpers were created in different "
            "Triton modes (TRITON_INTERPRET changed after flagprism._records was imported)"
        )
    ns: dict[str, Any] = vars(R)
    if flavour == "np" and _plans.backend_of(fn) == "interpreter":
        ns = R.interpreter_helpers()
    fused = flavour == "fused"
    ex = "_exact" if exact else ""  # float64 sums per element (activate(exact_sums=True))
    return {
        _rewrite.H_BEGIN: ns["begin"],
        _rewrite.H_VALUE: ns[
            ("value_counts_fused" if fused else "value_counts_np")
            if counts
            else ("value_fused" if fused else "value_np") + ex
        ],
        _rewrite.H_ADDR: ns["addr_fused" if fused else "addr_np"],
        _rewrite.H_DESC: ns["desc_access"],
        _rewrite.H_VAFF: ns[("value_affine_fused" if fused else "value_affine_np") + ex],
        _rewrite.H_VCMP: ns["value_compare_fused" if fused else "value_compare_np"],
        _rewrite.H_ADDRC: ns["addr_closed_fused" if fused else "addr_closed_np"],
        _rewrite.H_BPMAKE: ns["bp_make"],
        _rewrite.H_BPADV: ns["bp_advance"],
        _rewrite.H_BPADDR: ns["bp_addr_fused" if fused else "bp_addr_np"],
        _rewrite.H_DESCADDR: ns["desc_addr_fused" if fused else "desc_addr_np"],
        _rewrite.H_DESCGATHER: ns["desc_gather_fused" if fused else "desc_gather_np"],
        _rewrite.H_DEXT: ns["desc_extent_fused" if fused else "desc_extent_np"],
        _rewrite.H_MAND: ns["mask_and"],
        **_check_helpers(flavour == "np" and _plans.backend_of(fn) == "interpreter"),
    }


def _check_helpers(plain: bool) -> dict[str, Any]:
    """The check helpers (_checks.py) by their names in the twin; plain: as Python functions
    for the interpreter."""
    from flagprism import _checks as C

    ns: dict[str, Any] = C.interpreter_helpers() if plain else vars(C)
    return {h: ns[f] for h, f in _checkgen.HELPERS.items()}


def _twin_for(fn: Any) -> _rewrite.Twin:
    key = id(fn)
    flavour = _flavour(fn)
    suppress = _config.check_continue == "suppress"
    tkey = (_level, _addr_level, flavour, _checks, suppress, _exact_sums)
    hit = _twin_cache.get(key)
    if hit is not None and hit[0]() is fn and tkey in hit[1]:
        twin = hit[1][tkey]
        if twin is None:
            raise RuntimeError(f"flagprism: {_paths.kernel_name(fn)} cannot be sanitized")
        return twin
    if _sanitize:
        # check mode: the whole body, recording only what the checks need (docs/guide/debugger.md,
        # "Check mode"): addresses for bounds; values for the others, NaN/Inf counts only when
        # nothing else is asked of them
        values = any(_CHECK_INFO[c]["values"] for c in _checks)
        counts = values and not any(_CHECK_INFO[c]["full_values"] for c in _checks)
        twin = _rewrite.build(
            fn,
            1 if values else 0,
            1 if any(_CHECK_INFO[c]["addresses"] for c in _checks) else 0,
            _helpers(fn, flavour, counts, _exact_sums),
            sanitize=True,
            rules=_checks,
            suppress=suppress,
        )
        twin.extra["sanitize"] = True
        twin.extra["checks"] = sorted(_checks)
    else:
        twin = _rewrite.build(
            fn,
            _level,
            _addr_level,
            _helpers(fn, flavour, exact=_exact_sums),
            rules=frozenset(CHECKS),
            suppress=suppress,
        )
    twin.extra["suppress"] = suppress
    twin.extra["exact_sums"] = _exact_sums
    _plans.counters["twins_built"] += 1
    _remember(fn, tkey, twin)
    return twin


def _remember(fn: Any, tkey: _TwinKey, twin: _rewrite.Twin | None) -> None:
    key = id(fn)
    hit = _twin_cache.get(key)
    if hit is None or hit[0]() is not fn:
        try:
            hit = (weakref.ref(fn, _forget(key)), {})
        except TypeError:
            return
        _twin_cache[key] = hit
    hit[1][tkey] = twin


_warned: set[str] = set()


def _warn_once(name: str, msg: str) -> None:
    import warnings

    if name in _warned:
        return
    _warned.add(name)
    warnings.warn(f"flagprism: {name} {msg}", RuntimeWarning, stacklevel=4)


def _twin_or_reason(fn: Any) -> tuple[_rewrite.Twin | None, tuple[int, str] | None]:
    """The kernel's twin, or None and why it is not instrumented (a rewrite error is warned once;
    in sanitize mode a kernel without loads or stores has nothing to check)."""
    try:
        twin = _twin_for(fn)
    except (RewriteError, OSError, TypeError) as e:
        name = _paths.kernel_name(fn)
        if _sanitize:
            _remember(
                fn,
                (
                    _level,
                    _addr_level,
                    _flavour(fn),
                    _checks,
                    _config.check_continue == "suppress",
                    _exact_sums,
                ),
                None,
            )
            with _lock:
                _sanitize_skipped[name] = str(e)
        kind = (
            "cannot read the kernel's source"
            if isinstance(e, (OSError, TypeError))
            else "cannot instrument"
        )
        _warn_once(name, f"runs unobserved: {e}")
        return None, (S_FAILED, f"{kind}: {e}")
    except RuntimeError as e:  # remembered as not instrumentable
        return None, (
            S_FAILED,
            f"cannot instrument: {_sanitize_skipped.get(_paths.kernel_name(fn), e)}",
        )
    if _sanitize and not twin.sites:
        return None, (S_NOTHING, "no load or store to check")
    return twin, None


def _compile_error(e: BaseException) -> bool:
    try:
        from triton.compiler.errors import CompilationError
    except Exception:  # noqa: BLE001
        return False
    return isinstance(e, CompilationError)


def _instrumented(
    fn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    grid: Any,
    call_next: Any,
    route: dict[str, Any],
    index: int,
) -> Any:
    """Launch `fn`'s twin in place of `fn` as launch `index`, account for it and export its
    records. `call_next` (None for paths that translated the launch) launches the original:
    used when the twin cannot be built, when it fails to compile, and to return the original's
    compiled kernel to callers that cache it (FlagGems' LibEntry)."""

    def original() -> Any:
        if call_next is None:
            raise RuntimeError("flagprism: no original launch for a translated path")
        return call_next(fn, *args, grid=grid, warmup=False, **kwargs)

    twin, why = _twin_or_reason(fn)
    if twin is None:
        assert why is not None
        _account(fn, why[0], why[1], index=index)
        if call_next is None:
            raise _NotInstrumented(why[1])
        return original()
    cfg = _config  # configure() replaces it whole: a consistent snapshot
    findings_only = _sanitize if cfg.all_reports is None else not cfg.all_reports
    info = _plans.kernel_info(fn)
    dev = _launch.buffer_device(info.backend)
    entry = None
    if cfg.pipeline and _report_fn is _ext_report:
        entry = _dbgexport.pipeline_for(dev, _summary_obj(), cfg, findings_only)
    stream = None
    if entry is not None and entry[0] is not None and dev.type != "cpu":
        stream = _devbuf._stream(
            dev
        )  # the launch's stream: the slice is prepared and read back on it
    plan, fast, sizing = _plans.prepare(
        twin,
        fn,
        args,
        kwargs,
        grid,
        cfg,
        dev,
        alloc=_dbgexport.allocator(entry, stream) if entry is not None else None,
    )
    plan.stream = stream
    try:
        if plan.backend == "cuda":
            if sizing is not None and sizing.registers is not None:
                plan.registers = sizing.registers
                _plans.counters["registers_reused"] += 1
            else:
                try:
                    plan.registers = _regs.decide(
                        twin.jit,
                        args,
                        plan.grid,
                        _launch.launch_kwargs(plan, kwargs),
                        cfg.twin_maxnreg,
                        plan.buffer.device,
                    )
                    if sizing is not None:
                        sizing.registers = plan.registers
                except Exception as e:  # noqa: BLE001 - the launch below raises a real compile error itself
                    plan.registers = {
                        "cap": None,
                        "uncapped": None,
                        "reason": f"no register cap: the decision failed ({type(e).__name__}: {e})"[
                            :300
                        ],
                    }
        ret = _plans.launch(twin, plan, args, kwargs, sizing)
    except Exception as e:
        partial = None
        if cfg.export_on_error:
            try:
                partial = _export(
                    fn, twin, plan, cfg, None, e, index, route, None, findings_only, fast
                )
            except Exception as ee:  # noqa: BLE001 - the kernel's own error matters more
                if hasattr(e, "add_note"):
                    e.add_note(f"flagprism: exporting the captured records failed too: {ee}")
        _dbgexport.unreserve(entry, plan)
        where = f"; partial records: {partial.get('txt')}" if partial and partial.get("txt") else ""
        if _compile_error(e):
            # the instrumented kernel did not compile: run the kernel itself, say so (and why,
            # when the installed Triton itself is the cause: a known-bad row)
            why = compat.explain_compile_error(e)
            _summary_launch(
                *_identity(fn),
                S_FAILED,
                f"the instrumented kernel failed to compile ({type(e).__name__}: "
                f"{str(e).splitlines()[0][:200] if str(e) else ''}); the kernel ran uninstrumented"
                + (f"; {why}" if why else ""),
                index=index,
            )
            _warn_once(
                _paths.kernel_name(fn),
                f"runs unobserved: its instrumented twin failed to compile: {e}"
                + (f"; {why}" if why else ""),
            )
            if call_next is None:
                raise _NotInstrumented(str(e)) from e
            return original()
        hint = _note_triton_error(e)
        _summary_launch(
            *_identity(fn),
            S_FAILED,
            f"the launch raised {type(e).__name__}: {str(e)[:300]}{where}"
            + (f"; {hint}" if hint else ""),
            index=index,
        )
        raise
    try:
        _export(fn, twin, plan, cfg, ret, None, index, route, entry, findings_only, fast)
    except OSError as e:
        # The kernel ran: a report that cannot be written (read-only directory, full disk) is
        # said, counted and reported at the end, never raised into the program.
        _note_write_failure(twin.kernel_name, e)
    if call_next is None:
        return ret
    # what the caller gets is the kernel's own compiled kernel, as without the Debugger (LibEntry
    # caches it and launches it directly later): the same for every launch of one plan, whose key
    # holds everything Triton specializes a compiled kernel on
    if fast is not None and fast.original is not _plans.UNSET:
        _plans.counters["originals_reused"] += 1
        _learn_replay(fn, twin, plan, fast, sizing, cfg, entry, ret, route)
        return fast.original
    orig = call_next(fn, *args, grid=grid, warmup=True, **kwargs)
    if fast is not None:
        fast.original = orig
        _learn_replay(fn, twin, plan, fast, sizing, cfg, entry, ret, route)
    return orig


def _learn_replay(
    fn: Any,
    twin: _rewrite.Twin,
    plan: _launch.Launch,
    fast: _plans.Plan,
    sizing: _plans.Sizing | None,
    cfg: _Config,
    entry: Any,
    ret: Any,
    route: dict[str, Any],
) -> None:
    """After a launch that took the Python path: let the next ones of its plan and sizing be
    replayed (_replay), where they can be."""
    if entry is None or plan.backend != "cuda" or sizing is None:
        return
    if _report_fn is not _ext_report:
        return
    if sizing.fast is not None and fast.fast is not None:
        K = _replay.lookup(fn, _epoch)
        if K is not None and _replay.current(K):
            return  # learnt already
    _replay.learn(
        fn,
        twin,
        plan,
        fast,
        sizing,
        cfg,
        entry,
        ret,
        route,
        _ttir_of(fn, twin, plan, ret, None),
        _epoch,
        _config_text,
    )


class _NotInstrumented(Exception):
    """A translated launch (Inductor) whose twin cannot be built: the caller launches the
    original its own way."""


#: Launches whose reports could not be written: count and the first few causes.
_write_failures: dict[str, Any] = {"count": 0, "causes": []}


def _pipeline_write_failure(kernel: str, message: str) -> None:
    """A launch the pipeline decoded but whose reports it could not write."""
    _note_write_failure(kernel, OSError(message))


_dbgexport.on_write_failure = _pipeline_write_failure


def _note_write_failure(kernel: str, e: OSError) -> None:
    import warnings

    cause = f"{kernel}: {e}"
    with _lock:
        _write_failures["count"] += 1
        first = cause not in _write_failures["causes"]
        if first and len(_write_failures["causes"]) < 4:
            _write_failures["causes"].append(cause)
    if first:
        warnings.warn(
            f"flagprism: the Debugger's reports of a launch could not be written: {cause}",
            RuntimeWarning,
            stacklevel=4,
        )


# ------------------------------------------------------------------------------------------------
# Export
# ------------------------------------------------------------------------------------------------


def _ext_report(buffer: Any, site_table_json: str, launch_json: str) -> dict[str, Any]:
    try:
        from flagprism import _ext  # type: ignore[attr-defined]
    except ImportError as e:
        raise RuntimeError(
            "flagprism: the native extension flagprism._ext is missing, so Debugger reports "
            "cannot be written; install FlagPrism with its native part"
        ) from e
    report = getattr(_ext, "debug_report", None)
    if report is None:
        raise RuntimeError(
            "flagprism: this build of flagprism._ext has no debug_report(); rebuild FlagPrism"
        )
    # the summary and launch index of the launch being exported (_export sets them)
    ctx = getattr(_tls, "report", None) or {}
    return report(
        buffer,
        site_table_json,
        launch_json,
        _summary_obj(),
        int(ctx.get("index", 0)),
        bool(ctx.get("findings_only", False)),
    )


#: The function that decodes a record buffer and writes the reports. Tests may replace it.
_report_fn: Callable[[Any, str, str], dict[str, Any]] = _ext_report


def _ttir(
    fn: Any, twin: _rewrite.Twin, plan: _launch.Launch, ret: Any
) -> tuple[str | None, str | None]:
    asm = getattr(ret, "asm", None)
    if asm is not None:
        try:
            return str(asm["ttir"]), None
        except Exception as e:  # noqa: BLE001
            return None, f"the compiled kernel has no TTIR: {e}"
    if plan.backend != "interpreter":
        return None, "the launch returned no compiled kernel"
    if os.environ.get("FLAGPRISM_DBG_TTIR", "1") == "0":
        return None, "TTIR cross-compilation disabled by FLAGPRISM_DBG_TTIR=0"
    from flagprism import _dbgttir

    key = (id(twin), _dbgttir.signature_key(twin, plan.bound))
    hit = _ttir_cache.get(key)
    if hit is None:
        hit = _dbgttir.interpreter_ttir(twin, plan.bound)
        _ttir_cache[key] = hit
    return hit


def _ttir_of(
    fn: Any, twin: _rewrite.Twin, plan: _launch.Launch, ret: Any, error: BaseException | None
) -> tuple[str | None, str | None]:
    """The launch JSON's TTIR: (text, None) or (None, why there is none)."""
    if twin.extra.get("sanitize"):
        return None, "sanitize run: no op log"
    if error is not None:
        return None, "the launch raised an exception"
    return _ttir(fn, twin, plan, ret)


def _current_test() -> str | None:
    """The pytest node id of the test running in this process, or None (a child process of a
    test inherits PYTEST_CURRENT_TEST without running the test)."""
    if "_pytest.runner" not in sys.modules:
        return None
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] or None


def _config_text(route: dict[str, Any]) -> str | None:
    if route.get("config"):
        return str(route["config"])
    tuner = route.get("autotuner")
    best = getattr(tuner, "best_config", None) if tuner is not None else None
    return None if best is None else str(best)


def _launch_stack(limit: int = 12) -> Any:
    """The Python frames of the launch, outermost first, without FlagPrism's, Triton's and the
    launching libraries' own (what the user's code called): the `limit` innermost of them, as
    "file:line function" (a tuple the extension caches per call site)."""
    skip = _stack_skip()
    ext = _stack_ext
    if ext is not None:
        return ext(limit)
    out: list[str] = []
    f = sys._getframe(1)
    while f is not None and len(out) < limit:
        file = f.f_code.co_filename
        if not file.startswith(skip) and not file.startswith("<"):
            out.append(f"{file}:{f.f_lineno} {f.f_code.co_name}")
        f = f.f_back  # type: ignore[assignment]
    out.reverse()
    return out


_skip_prefixes: tuple[str, ...] | None = None
_stack_ext: Any = None  # flagprism._ext.debug_stack once the prefixes are given to it


def _stack_skip() -> tuple[str, ...]:
    global _skip_prefixes, _stack_ext
    if _skip_prefixes is None:
        import flagprism

        dirs = [os.path.dirname(os.path.abspath(flagprism.__file__))]
        for mod in (
            "triton",
            "torch",
            "flag_gems",
            "runpy",
            "_pytest",
            "pluggy",
            "xdist",  # a pytest-xdist worker's test loop
            "execnet",
        ):
            m = sys.modules.get(mod)
            if m is not None and getattr(m, "__file__", None):
                dirs.append(os.path.dirname(os.path.abspath(m.__file__)))
        _skip_prefixes = tuple(d + os.sep for d in dirs)
        try:
            from flagprism import _ext  # type: ignore[attr-defined]

            _ext.debug_stack_skip(_skip_prefixes)
            _stack_ext = _ext.debug_stack
        except (ImportError, AttributeError):
            _stack_ext = None
    return _skip_prefixes


def _export(
    fn: Any,
    twin: _rewrite.Twin,
    plan: _launch.Launch,
    cfg: _Config,
    ret: Any,
    error: BaseException | None,
    index: int,
    route: dict[str, Any],
    entry: Any,
    findings_only: bool,
    fast: _plans.Plan | None = None,
) -> dict[str, Any]:
    """Describe the launch and hand its records to the pipeline (`entry`) or, without one, to the
    report function now; the launch is accounted for in the summary either way. fast: the
    launch's plan (_plans.prepare), whose templates describe its arguments."""
    ttir = _ttir_of(fn, twin, plan, ret, error)
    launch = _dbgexport.launch_json(
        fn,
        twin,
        plan,
        cfg,
        ret if error is None else None,
        error,
        index,
        route,
        ttir,
        _launch_stack(),
        _current_test(),
        _config_text(route),
        args=_plans.args_json(fast, fn, plan),
    )
    sites = _dbgexport.site_table_json(twin)
    run = _dbgexport.new_run(twin, plan, index, ret, error)
    _dbgexport.ensure_dir(cfg.output_dir)
    if (
        error is None
        and entry is not None
        and _dbgexport.submit(entry, plan, launch, sites, twin, index, run, cfg.max_runs)
    ):
        return run  # the pipeline's thread accounts for it
    _tls.report = {"index": index, "findings_only": findings_only}
    try:
        _dbgexport.report_sync(_report_fn, plan, launch, sites, run, cfg.max_runs)
    finally:
        _tls.report = None
    if error is None:
        _summary_launch(*_identity(fn), S_INSTRUMENTED, None, index=index)
    return run


# ------------------------------------------------------------------------------------------------
# `flagprism debug` (tools/flagprism/cmd-debug.c runs the program through flagprism._run)
# ------------------------------------------------------------------------------------------------

#: Exit status of `flagprism debug --sanitize` when the program succeeded but findings exist.
EXIT_FINDINGS = 3

_cli_state: dict[str, Any] = {}


def _check_output_location(out: str) -> None:
    """Before the program runs: the report directory exists (or is made) and takes files, so a
    read-only or unwritable -o fails now rather than at the first launch."""
    import errno

    from flagprism import _ext

    if os.path.lexists(out) and not os.path.isdir(out):
        raise FileExistsError(
            errno.EEXIST,
            f"cannot create the report directory {out}: a file of that name is in the way (EEXIST)",
        )
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        name = errno.errorcode.get(e.errno or 0, str(e.errno))
        raise OSError(
            e.errno, f"cannot create the report directory {out}: {e.strerror} ({name})"
        ) from None
    if not os.path.isdir(out):
        raise OSError(f"the report directory {out} is not a directory")
    _ext.check_output(os.path.join(out, "report.json"))


def _cli_begin(options: dict[str, str]) -> None:
    """Configure and activate from the command's options (--level, --addr-level, --output,
    --sanitize 0|1, --check LIST|"", --strict 0|1, --all-reports 0|1, --kernel REGEX|"",
    --launch N[-M]|"", --max-reports N|"", --export-on-error 0|1, --record-capacity N|"",
    --check-continue suppress|run, --exact-sums 0|1)."""
    level = int(options.get("level", "1"))
    addr_level = int(options.get("addr-level", "1"))
    check = options.get("check") or None
    sanitize = options.get("sanitize", "0") == "1"
    out = os.path.abspath(options.get("output", "fp_debug"))
    _check_output_location(out)
    cap = options.get("record-capacity", "")
    maxr = options.get("max-reports", "")
    configure(
        output_dir=out,
        export_on_error=options.get("export-on-error", "0") == "1",
        record_capacity=int(cap) if cap else None,
        all_reports=True if options.get("all-reports", "0") == "1" else None,
        max_reports=int(maxr) if maxr else None,
        kernel=options.get("kernel") or None,
        launch=options.get("launch") or None,
        check_continue=options.get("check-continue") or "suppress",
    )
    out = _config.output_dir  # out/rank<R> in a torchrun job
    clear_exported_runs()
    _sanitize_skipped.clear()
    _warned.clear()
    reset_summary()
    from flagprism import _ext  # type: ignore[attr-defined]

    checks = _check_checks(check) | ({"bounds"} if sanitize else set())
    if check:
        tag = f"flagprism debug --check {','.join(c for c in CHECKS if c in checks)}"
    else:
        tag = "flagprism debug" + (" --sanitize" if sanitize else "")
    _ext.debug_summary_set(
        _summary_obj(), "mode", ("check" if check else "sanitize") if checks else "markers"
    )
    _ext.debug_summary_set(
        _summary_obj(), "checks", ",".join(c for c in CHECKS if c in checks) or None
    )
    _ext.debug_summary_set(_summary_obj(), "command", tag)
    _ext.debug_summary_set(_summary_obj(), "output_dir", out)
    activate(
        level=level,
        addr_level=addr_level,
        check=checks or None,
        exact_sums=options.get("exact-sums", "0") == "1",
    )
    # `flagprism debug ... pytest`: the pytest plugin attributes findings to tests, this command
    # owns the Debugger (flagprism/pytest_plugin.py)
    os.environ["FLAGPRISM_DEBUG_MANAGED"] = "1"
    _cli_state.clear()
    _cli_state.update(
        output=out,
        sanitize=bool(checks),
        strict=options.get("strict", "0") == "1",
        findings=0,
        tag=tag,
        options=dict(options),  # for the workers of a pytest-xdist session (pytest_plugin)
        xdist=None,
    )
    _write_failures.update(count=0, causes=[])


def _cli_end(status: int) -> list[str]:
    """Deactivate, write summary.json/summary.txt and return the summary's text to print: every
    kernel launched, how many launches were instrumented, why the others were not, and every
    finding (the C library writes all of it)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    deactivate()
    take_exported_runs()  # the run dicts are not kept past the command
    out = _cli_state.get("output", "fp_debug")
    tag = _cli_state.get("tag", "flagprism debug")
    s = _summary_obj()
    _ext.debug_summary_set(s, "exit_status", int(status))
    # pytest -n N: the workers ran the program, each wrote its part (flagprism/pytest_plugin.py);
    # this process's summary is only the session's settings
    session = _cli_state.get("xdist")
    totals = _ext.debug_summary_totals(s)
    text = None
    lines: list[str] = []
    if session is not None:
        _write_failures["count"] += session["write_failures"]
        _write_failures["causes"].extend(
            session["causes"][: max(0, 3 - len(_write_failures["causes"]))]
        )
        try:
            totals, text = _write_parts(out, list(session["parts"].values()), session["started"])
            where = (
                f"{tag}: summary in {os.path.join(out, 'summary.txt')} (and summary.json), "
                f"merged from {totals['parts']} pytest-xdist worker part(s) in {out}/<worker>/"
            )
        except Exception as e:  # noqa: BLE001 - the parts are still there
            _write_failures["count"] += 1
            _write_failures["causes"].append(f"the workers' summaries could not be merged: {e}")
            _cli_state["summary_failed"] = True
            where = (
                f"{tag}: error: the workers' summaries could not be merged into {out}: {e} "
                f"(each worker's is in {out}/<worker>/summary.json)"
            )
    else:
        try:
            write_summary(out)
            where = f"{tag}: summary in {os.path.join(out, 'summary.txt')} (and summary.json)"
        except Exception as e:  # noqa: BLE001 - still print the summary
            where = f"{tag}: error: the summary could not be written to {out}: {e}"
            _cli_state["summary_failed"] = True
    _cli_state["findings"] = int(totals["findings"])
    _cli_state["not_observed"] = int(totals["by_status"]["unobservable"]) + int(
        totals["by_status"]["failed"]
    )
    if text is None:
        text = _ext.debug_summary_format(s, "txt")
    lines.extend(text.rstrip("\n").split("\n"))
    if totals["launches"] == 0:
        lines.append(f"{tag}: no Triton kernel was launched while the Debugger was active")
    elif int(totals["by_status"]["excluded"]) == int(totals["launches"]) and not _cli_state.get(
        "sanitize"
    ):
        lines.append(
            f"{tag}: no kernel with fpl.collect_start()/collect_end() markers was launched "
            "(use --check to check every kernel without markers)"
        )
    # the summary counts them (summary.json complete: false, summary.txt INCOMPLETE lines)
    incomplete = int(totals.get("incomplete_launches", 0))
    if session is not None:
        incomplete = max(incomplete, int(session["incomplete_runs"]))
    _cli_state["incomplete_runs"] = incomplete
    if incomplete:
        lines.append(
            f"{tag}: warning: {incomplete} launch(es) did not fit their record buffer; what they "
            "did not record was not checked (raise --record-capacity)"
            + (": exit status 4 (--strict)" if _cli_state.get("strict") else "")
        )
    if _write_failures["count"]:
        n = _write_failures["count"]
        lines.append(
            f"{tag}: error: the reports of {n} launch{'es' if n != 1 else ''} could not be written: "
            + "; ".join(_write_failures["causes"])
        )
    if _cli_state.get("strict") and _cli_state["not_observed"]:
        lines.append(
            f"{tag} --strict: {_cli_state['not_observed']} launch(es) could not be observed (listed "
            "above): exit status " + str(EXIT_NOT_OBSERVED)
        )
    lines.append(where)
    return lines


def _cli_incomplete(reason: str) -> None:
    """The program did not finish (a signal ended it): the summary says so (flagprism._run)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    _ext.debug_summary_set(_summary_obj(), "incomplete", reason)


#: Exit status of `flagprism debug --strict` when a launch the Debugger was asked to observe was not.
EXIT_NOT_OBSERVED = 4


def _cli_exit_status(status: int) -> int:
    """The process's exit status: the program's own when it failed; 1 when it succeeded but
    reports or the summary could not be written; with --sanitize/--check, EXIT_FINDINGS when it succeeded but
    findings were reported (so the command can gate CI); with --strict, EXIT_NOT_OBSERVED when it
    succeeded, had no findings, but a launch could not be observed."""
    if status != 0:
        return status
    if _write_failures["count"] or _cli_state.get("summary_failed"):
        return 1  # reports are missing: the run did not give what it was asked for
    if _cli_state.get("sanitize") and _cli_state.get("findings"):
        return EXIT_FINDINGS
    if _cli_state.get("strict") and (
        _cli_state.get("not_observed") or _cli_state.get("incomplete_runs")
    ):
        return EXIT_NOT_OBSERVED
    return status
