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
import datetime
import json
import os
import sys
import threading
import weakref
from dataclasses import asdict, dataclass
from typing import Any, Callable

from flagprism import _launch, _regs, _rewrite, _warps
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
    "RewriteError",
    "MarkerError",
    "UnsupportedError",
]


@dataclass
class _Config:
    output_dir: str = "fp_debug"
    record_capacity: int | None = None
    export_on_error: bool = False
    export_raw_records: bool = False
    dump_capacity: int | None = None
    twin_num_warps: str | int = "auto"
    twin_maxnreg: str | int | None = "auto"


_lock = threading.RLock()
_config = _Config()
_active = False
_level = 1
_addr_level = 1
_sanitize = False
_sanitize_skipped: dict[str, str] = {}  # kernels sanitize mode could not instrument: name -> why
_runs: list[dict[str, Any]] = []
_run_counter = 0
_bypass: contextvars.ContextVar[bool] = contextvars.ContextVar("flagprism_debugger_bypass", default=False)

# id(kernel) -> (weakref to kernel, has-markers flag); id(kernel) -> {(level, addr, flavour, sanitize): Twin}
_marker_cache: dict[int, tuple[Any, bool]] = {}
_twin_cache: dict[int, tuple[Any, dict[tuple[int, int, str, bool], _rewrite.Twin | None]]] = {}
_ttir_cache: dict[tuple[int, str], tuple[str | None, str | None]] = {}
_patches: list[tuple[Any, str, Any]] = []


def _check_level(name: str, v: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 2:
        raise ValueError(f"{name} must be 0, 1 or 2, got {v!r}")
    return v


def _check_capacity(name: str, v: int | None) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{name} must be None or an integer >= 0, got {v!r}")
    return v


def configure(output_dir: str | os.PathLike[str] = "fp_debug", record_capacity: int | None = None,
              export_on_error: bool = False, export_raw_records: bool = False,
              dump_capacity: int | None = None, twin_num_warps: str | int = "auto",
              twin_maxnreg: str | int | None = "auto") -> None:
    """Set every option of the Debugger (options not given take their default).

    output_dir: where reports are written. record_capacity: total records of one launch (None:
    sized from the launch). export_on_error: export what was captured when the kernel raises.
    export_raw_records: also write the raw record buffer. dump_capacity: words of the level-2 dump
    arena of one launch (None: sized from the launch). twin_num_warps: warps of the instrumented
    twin: "auto" (fewer than the kernel's where its results cannot depend on the warp count, see
    docs/debugger.md), "same" (the kernel's), or a power of two from 1 to 32 (used where results
    cannot depend on it, else the kernel's). twin_maxnreg: register cap of the twin on NVIDIA GPUs
    (Triton's maxnreg): "auto" (cap at the next occupancy step where that step is close and the
    capped build does not spill, see docs/debugger.md), None (never cap) or an integer from 16 to
    255 (always that cap)."""
    global _config
    cfg = _Config(output_dir=os.fspath(output_dir), record_capacity=_check_capacity("record_capacity", record_capacity),
                  export_on_error=bool(export_on_error), export_raw_records=bool(export_raw_records),
                  dump_capacity=_check_capacity("dump_capacity", dump_capacity),
                  twin_num_warps=_warps.check_setting(twin_num_warps),
                  twin_maxnreg=_regs.check_setting(twin_maxnreg))
    with _lock:
        _config = cfg


def get_config() -> dict[str, Any]:
    """The current options plus activation state (``active``, ``level``, ``addr_level``,
    ``sanitize``)."""
    with _lock:
        d = asdict(_config)
        d.update(active=_active, level=_level, addr_level=_addr_level, sanitize=_sanitize)
        return d


def reset_config() -> None:
    """Restore every ``configure()`` option to its default (activation is left as it is)."""
    global _config
    with _lock:
        _config = _Config()


def activate(level: int = 1, addr_level: int = 1, sanitize: bool = False) -> None:
    """Start instrumenting kernels with markers. level: 0 no values, 1 value summaries, 2 summaries
    and full dumps. addr_level: 0 no addresses, 1 address summaries, 2 summaries and every lane.
    sanitize: instead, observe every load and store of every kernel (markers or not) with address
    summaries only and report only the findings (out-of-bounds accesses); level and addr_level
    are then ignored."""
    global _active, _level, _addr_level, _sanitize
    lv = _check_level("level", level)
    al = _check_level("addr_level", addr_level)
    with _lock:
        _level, _addr_level, _sanitize = lv, al, bool(sanitize)
        if not _active:
            _install()
            _active = True


def deactivate() -> None:
    """Stop instrumenting; every kernel launches through Triton's own path again."""
    global _active
    with _lock:
        if _active:
            _uninstall()
            _active = False


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
    """The runs exported since the last take/clear, oldest first; the list is then emptied."""
    with _lock:
        out = list(_runs)
        _runs.clear()
        return out


def peek_exported_runs() -> list[dict[str, Any]]:
    """The runs exported since the last take/clear, without removing them."""
    with _lock:
        return list(_runs)


def clear_exported_runs() -> None:
    with _lock:
        _runs.clear()


# ------------------------------------------------------------------------------------------------
# Interception
# ------------------------------------------------------------------------------------------------


def _make_run(orig: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        if warmup or not _active or _bypass.get() or getattr(self, "_fp_twin", False) or \
                not (_sanitize or _has_markers(self)):
            return orig(self, *args, grid=grid, warmup=warmup, **kwargs)
        if _sanitize and _sanitize_twin(self) is None:
            return orig(self, *args, grid=grid, warmup=warmup, **kwargs)
        return _instrumented(self, args, kwargs, grid)

    run._fp_original = orig  # type: ignore[attr-defined]
    return run


def _install() -> None:
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    for cls in (JITFunction, InterpretedFunction):
        orig = cls.__dict__["run"]
        _patches.append((cls, "run", orig))
        setattr(cls, "run", _make_run(orig))
    orig_bench = Autotuner.__dict__.get("_bench")
    if orig_bench is not None:
        _patches.append((Autotuner, "_bench", orig_bench))
        Autotuner._bench = _launch.bypassing(orig_bench, _bypass)


def _uninstall() -> None:
    while _patches:
        cls, name, orig = _patches.pop()
        setattr(cls, name, orig)


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
    return "np" if _launch.backend_of(fn) == "interpreter" else "fused"


def _helpers(fn: Any, flavour: str) -> dict[str, Any]:
    from flagprism import _records as R

    if not isinstance(fn, type(R.begin)):
        raise RuntimeError("flagprism: the kernel and flagprism's record helpers were created in different "
                           "Triton modes (TRITON_INTERPRET changed after flagprism._records was imported)")
    ns: dict[str, Any] = vars(R)
    if flavour == "np" and _launch.backend_of(fn) == "interpreter":
        ns = R.interpreter_helpers()
    fused = flavour == "fused"
    return {
        _rewrite.H_BEGIN: ns["begin"],
        _rewrite.H_VALUE: ns["value_fused" if fused else "value_np"],
        _rewrite.H_ADDR: ns["addr_fused" if fused else "addr_np"],
        _rewrite.H_DESC: ns["desc_access"],
        _rewrite.H_VAFF: ns["value_affine_fused" if fused else "value_affine_np"],
        _rewrite.H_VCMP: ns["value_compare_fused" if fused else "value_compare_np"],
        _rewrite.H_ADDRC: ns["addr_closed_fused" if fused else "addr_closed_np"],
        _rewrite.H_BPMAKE: ns["bp_make"],
        _rewrite.H_BPADV: ns["bp_advance"],
        _rewrite.H_BPADDR: ns["bp_addr_fused" if fused else "bp_addr_np"],
        _rewrite.H_DESCADDR: ns["desc_addr_fused" if fused else "desc_addr_np"],
        _rewrite.H_DESCGATHER: ns["desc_gather_fused" if fused else "desc_gather_np"],
        _rewrite.H_DEXT: ns["desc_extent_fused" if fused else "desc_extent_np"],
        _rewrite.H_MAND: ns["mask_and"],
    }


def _twin_for(fn: Any) -> _rewrite.Twin:
    key = id(fn)
    flavour = _flavour(fn)
    tkey = (_level, _addr_level, flavour, _sanitize)
    hit = _twin_cache.get(key)
    if hit is not None and hit[0]() is fn and tkey in hit[1]:
        twin = hit[1][tkey]
        if twin is None:
            raise RuntimeError(f"flagprism: {fn.fn.__name__} cannot be sanitized")
        return twin
    if _sanitize:
        twin = _rewrite.build(fn, 0, 1, _helpers(fn, flavour), sanitize=True)
        twin.extra["sanitize"] = True
    else:
        twin = _rewrite.build(fn, _level, _addr_level, _helpers(fn, flavour))
    _remember(fn, tkey, twin)
    return twin


def _remember(fn: Any, tkey: tuple[int, int, str, bool], twin: _rewrite.Twin | None) -> None:
    key = id(fn)
    hit = _twin_cache.get(key)
    if hit is None or hit[0]() is not fn:
        try:
            hit = (weakref.ref(fn, _forget(key)), {})
        except TypeError:
            return
        _twin_cache[key] = hit
    hit[1][tkey] = twin


def _sanitize_twin(fn: Any) -> _rewrite.Twin | None:
    """The sanitize twin of a kernel, or None (launch the original) when the kernel cannot be
    instrumented or has no load or store; the reason is kept for the summary and warned once."""
    import warnings

    name = getattr(getattr(fn, "fn", None), "__name__", repr(fn))
    try:
        twin = _twin_for(fn)
    except RuntimeError:
        return None
    except RewriteError as e:
        _remember(fn, (_level, _addr_level, _flavour(fn), True), None)
        with _lock:
            _sanitize_skipped[name] = str(e)
        warnings.warn(f"flagprism: sanitize: {name} runs unobserved: {e}", RuntimeWarning, stacklevel=3)
        return None
    if not twin.sites:
        return None
    return twin


def _instrumented(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> Any:
    with _lock:
        cfg = _Config(**asdict(_config))
    twin = _twin_for(fn)
    plan = _launch.prepare(twin, fn, args, kwargs, grid, cfg.record_capacity, cfg.dump_capacity,
                           twin_num_warps=cfg.twin_num_warps)
    try:
        if plan.backend == "cuda":
            try:
                plan.registers = _regs.decide(twin.jit, args, plan.grid, _launch.launch_kwargs(plan, kwargs),
                                              cfg.twin_maxnreg, plan.buffer.device)
            except Exception as e:  # noqa: BLE001 - the launch below raises a real compile error itself
                plan.registers = {"cap": None, "uncapped": None,
                                  "reason": f"no register cap: the decision failed ({type(e).__name__}: {e})"[:300]}
        ret = _launch.launch(twin, plan, args, kwargs)
    except Exception as e:
        if cfg.export_on_error:
            try:
                _export(fn, twin, plan, cfg, None, error=e)
            except Exception as ee:  # noqa: BLE001 - the kernel's own error matters more
                if hasattr(e, "add_note"):
                    e.add_note(f"flagprism: exporting the captured records failed too: {ee}")
        raise
    _export(fn, twin, plan, cfg, ret, error=None)
    return ret


# ------------------------------------------------------------------------------------------------
# Export
# ------------------------------------------------------------------------------------------------


def _ext_report(buffer: Any, site_table_json: str, launch_json: str) -> dict[str, Any]:
    try:
        from flagprism import _ext  # type: ignore[attr-defined]
    except ImportError as e:
        raise RuntimeError("flagprism: the native extension flagprism._ext is missing, so Debugger reports "
                           "cannot be written; install FlagPrism with its native part") from e
    report = getattr(_ext, "debug_report", None)
    if report is None:
        raise RuntimeError("flagprism: this build of flagprism._ext has no debug_report(); rebuild FlagPrism")
    return report(buffer, site_table_json, launch_json)


#: The function that decodes a record buffer and writes the reports. Tests may replace it.
_report_fn: Callable[[Any, str, str], dict[str, Any]] = _ext_report


def _ttir(fn: Any, twin: _rewrite.Twin, plan: _launch.Launch, ret: Any) -> tuple[str | None, str | None]:
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


def _export(fn: Any, twin: _rewrite.Twin, plan: _launch.Launch, cfg: _Config, ret: Any,
            error: BaseException | None) -> dict[str, Any]:
    global _run_counter
    with _lock:
        index = _run_counter
        _run_counter += 1
    raw = _launch.buffer_bytes(plan)
    if twin.extra.get("sanitize"):
        ttir, reason = None, "sanitize run: no op log"
    else:
        ttir, reason = _ttir(fn, twin, plan, ret) if error is None else (None, "the launch raised an exception")
    now = datetime.datetime.now(datetime.timezone.utc)
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    # <script>_<kernel>_<timestamp>_run<N>: the report names users search for (docs/debugger.md).
    script_stem = os.path.splitext(os.path.basename(script))[0] or "python"
    stem = f"{script_stem}_{twin.kernel_name}_{now.strftime('%Y%m%dT%H%M%SZ')}_run{index}"
    launch_info = {
        "kernel": twin.kernel_name,
        "grid": list(plan.grid),
        "backend": plan.backend,
        "script": script,
        "timestamp": now.isoformat(timespec="seconds"),
        "run_index": index,
        "run": index,
        "output_dir": os.path.abspath(cfg.output_dir),
        "stem": stem,
        "level": twin.level,
        "addr_level": twin.addr_level,
        "export_raw_records": cfg.export_raw_records,
        "ttir": ttir,
        "ttir_unavailable_reason": None if ttir is not None else (reason or "unknown"),
        "source_file": twin.source_file,
        "twin_file": twin.path,
        "frame_files": _rewrite.frame_files(twin),
        "record_capacity": plan.slots,
        "args": _launch.describe_args(fn, plan.bound, plan.backend),
        "sanitize": bool(twin.extra.get("sanitize", False)),
        "num_warps": plan.num_warps,
        "registers": plan.registers,
    }
    os.makedirs(cfg.output_dir, exist_ok=True)
    result = _report_fn(raw, json.dumps(twin.site_table()), json.dumps(launch_info))
    report = None
    jpath = result.get("json") if isinstance(result, dict) else None
    if jpath and os.path.exists(jpath):
        with open(jpath, encoding="utf-8") as f:
            report = json.load(f)
    header = _launch.read_header(raw)
    run: dict[str, Any] = {
        "kernel": twin.kernel_name,
        "run_index": index,
        "backend": plan.backend,
        "grid": list(plan.grid),
        "programs": plan.programs,
        "slots_per_program": plan.slots,
        "dump_capacity_words": plan.arena_words,
        "level": twin.level,
        "addr_level": twin.addr_level,
        "source_file": twin.source_file,
        "twin_file": twin.path,
        "overflow_count": int(result.get("overflow_count", header[4])) if isinstance(result, dict) else header[4],
        "dump_words_requested": header[5],
        "error": None if error is None else repr(error),
        "paths": dict(result) if isinstance(result, dict) else {},
        "report": report,
        "findings": list(report.get("findings", [])) if isinstance(report, dict) else [],
        # what was observed out of what exists (docs/debugger.md, "Coverage")
        "coverage": report.get("coverage") if isinstance(report, dict) else None,
        "sanitize": launch_info["sanitize"],
        "complete": bool(result.get("complete", True)) if isinstance(result, dict) else True,
        "num_warps": dict(plan.num_warps) if plan.num_warps else None,
        # what the compiled twin really ran with (None on the interpreter)
        "num_warps_compiled": getattr(getattr(ret, "metadata", None), "num_warps", None),
        # the twin's register cap on NVIDIA GPUs ({"cap", "uncapped", "reason"}; None elsewhere)
        "registers": dict(plan.registers) if plan.registers else None,
        "registers_compiled": getattr(ret, "n_regs", None),
    }
    if isinstance(result, dict):
        for k in ("txt", "json", "op_log_txt", "op_log_json", "raw", "artifacts_dir"):
            run[k] = result.get(k)
    with _lock:
        _runs.append(run)
    return run


# ------------------------------------------------------------------------------------------------
# `flagprism debug` (tools/flagprism/cmd-debug.c runs the program through flagprism._run)
# ------------------------------------------------------------------------------------------------

#: Exit status of `flagprism debug --sanitize` when the program succeeded but findings exist.
EXIT_FINDINGS = 3

_cli_state: dict[str, Any] = {}


def _cli_begin(options: dict[str, str]) -> None:
    """Configure and activate from the command's options (--level, --addr-level, --output,
    --sanitize 0|1)."""
    level = int(options.get("level", "1"))
    addr_level = int(options.get("addr-level", "1"))
    sanitize = options.get("sanitize", "0") == "1"
    out = os.path.abspath(options.get("output", "fp_debug"))
    configure(output_dir=out)
    clear_exported_runs()
    _sanitize_skipped.clear()
    activate(level=level, addr_level=addr_level, sanitize=sanitize)
    _cli_state.clear()
    _cli_state.update(output=out, sanitize=sanitize, findings=0)


def _cli_end(status: int) -> list[str]:
    """Deactivate and summarise: launches recorded, where the reports are, the findings."""
    deactivate()
    runs = take_exported_runs()
    out = _cli_state.get("output", "fp_debug")
    sanitize = bool(_cli_state.get("sanitize"))
    tag = "flagprism debug" + (" --sanitize" if sanitize else "")
    kernels = sorted({r["kernel"] for r in runs})
    of = f" of {len(kernels)} kernel{'s' if len(kernels) != 1 else ''} ({', '.join(kernels)})" if kernels else ""
    lines = [f"{tag}: {len(runs)} instrumented launch{'es' if len(runs) != 1 else ''}{of}; reports in {out}"]
    if not runs and not sanitize:
        lines.append(f"{tag}: no kernel with fpl.collect_start()/collect_end() markers was launched "
                     "(or use --sanitize to observe every kernel)")
    unobserved = {(r["kernel"], u.get("file"), u.get("line"), u.get("reason")) for r in runs
                  for u in (r.get("coverage") or {}).get("unobserved", [])}
    if runs:
        cov = [r["coverage"] for r in runs if r.get("coverage")]
        lines.append(f"{tag}: coverage: {sum(c['memory_sites_observed'] for c in cov)} of "
                     f"{sum(c['memory_sites'] for c in cov)} memory sites, "
                     f"{sum(c['statements_observed'] for c in cov)} of {sum(c['statements'] for c in cov)} "
                     f"statements observed over {len(cov)} launch{'es' if len(cov) != 1 else ''}"
                     + (f"; {len(unobserved)} place(s) not observed (see the reports' coverage)" if unobserved
                        else ""))
    # the same finding in many launches of a kernel is listed once
    groups: dict[tuple[str, str, int, str, str, str], list[Any]] = {}
    for r in runs:
        for f in r.get("findings", []):
            key = (r["kernel"], f.get("kind", ""), int(f.get("line", 0)), str(f.get("subject", "")),
                   str(f.get("location", "")), str(f.get("file", "")))
            groups.setdefault(key, [f, r, 0])[2] += 1
    _cli_state["findings"] = len(groups)
    if groups:
        lines.append(f"{tag}: {len(groups)} finding{'s' if len(groups) != 1 else ''}:")
        for (kernel, kind, line, _subj, _loc, _file), (f, r, n) in groups.items():
            # a helper's line is a line of the helper's file
            where = f"{os.path.basename(str(f.get('file') or r.get('source_file') or ''))}:{line}"
            times = f" (in {n} launches)" if n > 1 else ""
            lines.append(f"  {kind} in {kernel} at {where}{times}: {f.get('message', '')}")
            lines.append(f"      report: {r.get('txt')}")
    elif runs:
        lines.append(f"{tag}: no findings")
    incomplete = [r for r in runs if not r.get("complete", True)]
    if incomplete:
        lines.append(f"{tag}: warning: {len(incomplete)} launch(es) did not fit their record buffer; what they "
                     "did not record was not checked")
    for name, why in sorted(_sanitize_skipped.items()):
        lines.append(f"{tag}: warning: {name} was not observed: {why}")
    return lines


def _cli_exit_status(status: int) -> int:
    """The process's exit status: the program's own when it failed; with --sanitize, EXIT_FINDINGS
    when it succeeded but findings were reported (so the command can gate CI)."""
    if status == 0 and _cli_state.get("sanitize") and _cli_state.get("findings"):
        return EXIT_FINDINGS
    return status
