# SPDX-License-Identifier: Apache-2.0
"""What the Debugger does after an instrumented launch: describe it (the launch JSON), hand its
record buffer to the C library, and keep a small run dict for ``take_exported_runs()``.

Two ways, the same result:

* **The pipeline** (default with the native report writer): the record buffer is a slice of a
  bounded pool (``include/flagprism/debug-pipe.h``). On a GPU the slice is zeroed, given its
  header and read back on the launch's stream, so the host never waits for a launch (only for
  the oldest one when the pool is full); one C thread decodes it, writes the reports and
  accounts for the launch in the summary. On the interpreter the twin's host buffer is copied
  into the slice after the launch. Results join their run dicts when the caller drains
  (``take_exported_runs()``, ``summary()``, ``deactivate()``).
* **Synchronously**, through ``debugger._report_fn`` (a replaced report function, as the tests
  use; a launch whose buffer does not fit the pool; ``configure(pipeline=False)``).

A run dict holds paths and counts; its ``report`` (the statement report JSON) and ``findings``
are read from the report file on first access, so a big launch costs no JSON round trip and
thousands of runs stay small. At most ``max_runs`` runs are kept (the oldest are dropped and
counted).

Nothing here decodes or formats records: that is C's work.
"""

from __future__ import annotations

import datetime
import json
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from flagprism import _devbuf, _files, _intercept, _launch, _rewrite

_lock = threading.RLock()
_runs: list[dict[str, Any]] = []
_pending: dict[int, dict[str, Any]] = {}  # launch index -> run waiting for its pipeline result
runs_dropped = 0
#: device key -> (pool tensor or None, pipeline capsule, flags the pipeline was made with)
_pipes: dict[Any, tuple[Any, Any, tuple[Any, ...]]] = {}
_ttir_json: dict[int, tuple[Any, str]] = {}  # id(compiled kernel) -> (kernel, its TTIR as JSON)


class Run(dict):  # type: ignore[type-arg]
    """A run dict whose "report" and "findings" are read from the JSON report when first used."""

    _LAZY = ("report", "findings", "coverage")

    def _load(self) -> None:
        path = dict.get(self, "json")
        report = None
        if path and os.path.exists(path):
            report = json.loads(_files.read_regular(path))
        dict.__setitem__(self, "report", report)
        dict.__setitem__(
            self, "findings", list(report.get("findings", [])) if isinstance(report, dict) else []
        )
        # what was observed out of what exists (docs/guide/debugger.md, "Coverage")
        dict.__setitem__(
            self, "coverage", report.get("coverage") if isinstance(report, dict) else None
        )

    def __getitem__(self, key: Any) -> Any:
        if key in self._LAZY and dict.get(self, key, _UNLOADED) is _UNLOADED:
            self._load()
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self._LAZY and dict.get(self, key, _UNLOADED) is _UNLOADED:
            self._load()
        return dict.get(self, key, default)


_UNLOADED = object()


def _keep(run: dict[str, Any], max_runs: int) -> None:
    global runs_dropped
    with _lock:
        _runs.append(run)
        over = len(_runs) - max_runs
        if over > 0:
            del _runs[:over]
            runs_dropped += over


# ------------------------------------------------------------------------------------------------
# Describing a launch
# ------------------------------------------------------------------------------------------------


def _ttir_text(ret: Any) -> str | None:
    asm = getattr(ret, "asm", None)
    if asm is None:
        return None
    try:
        return str(asm["ttir"])
    except Exception:  # noqa: BLE001
        return None


_clock: list[Any] = [None, "", ""]  # [second, compact UTC stamp, ISO timestamp]


def _now() -> tuple[str, str]:
    """(compact UTC stamp, ISO timestamp) of the current second, formatted once a second."""
    sec = int(time.time())
    if _clock[0] != sec:
        now = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
        _clock[:] = [sec, now.strftime("%Y%m%dT%H%M%SZ"), now.isoformat(timespec="seconds")]
    return _clock[1], _clock[2]


_const_json: dict[tuple[Any, ...], str] = {}  # -> the launch JSON's fields that do not change

#: What report names start with instead of the script's name, or None: the pytest plugin's
#: test name (after its pytest-xdist worker's id), set through debugger._report_names(), which
#: also ends the replays whose launch JSON still names the previous one.
report_tag: list[str | None] = [None]


def _constant_part(twin: Any, backend: str, cfg: Any) -> tuple[str, str]:
    """(the launch JSON's constant fields as JSON text without braces, the reports' stem: the
    script's name, or report_tag, then the kernel's)."""
    argv0 = sys.argv[0] if sys.argv else ""
    cwd = os.getcwd()
    tag = report_tag[0]
    key = (id(twin), backend, cfg.output_dir, cfg.export_raw_records, argv0, cwd, tag)
    hit = _const_json.get(key)
    if hit is None or hit[0] is not twin:
        script = os.path.abspath(argv0) if argv0 else ""
        const = {
            "kernel": twin.kernel_name,
            "backend": backend,
            "script": script,
            "output_dir": os.path.abspath(cfg.output_dir),
            "level": twin.level,
            "addr_level": twin.addr_level,
            "export_raw_records": cfg.export_raw_records,
            "source_file": twin.source_file,
            "twin_file": twin.path,
            "frame_files": _rewrite.frame_files(twin),
            "sanitize": bool(twin.extra.get("sanitize", False)),
            "checks": twin.extra.get("checks"),
        }
        # <script>_<kernel>_<timestamp>_run<N>: the report names users search for
        # (docs/guide/debugger.md, "Reports"); under pytest <test> or <worker>_<test>.
        name = tag or os.path.splitext(os.path.basename(script))[0] or "python"
        stem = f"{name}_{twin.kernel_name}"
        if len(_const_json) > 256:
            _const_json.clear()
        hit = (twin, json.dumps(const)[1:-1], stem)
        _const_json[key] = hit  # type: ignore[assignment]
    return hit[1], hit[2]  # type: ignore[return-value]


_json_memo: dict[int, tuple[Any, str]] = {}  # id(obj) -> (obj, its JSON): stacks, decisions


def _memo_json(obj: Any) -> str:
    """json.dumps(obj) for objects that come back unchanged at every launch (the extension's
    cached stack tuples, a plan's warp and register decisions): encoded once per object."""
    if obj is None:
        return "null"
    hit = _json_memo.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    text = json.dumps(obj)
    if len(_json_memo) >= 4096:
        _json_memo.clear()
    _json_memo[id(obj)] = (obj, text)
    return text


def launch_json(
    fn: Any,
    twin: Any,
    plan: _launch.Launch,
    cfg: Any,
    ret: Any,
    error: BaseException | None,
    index: int,
    route: dict[str, Any],
    ttir: tuple[str | None, str | None],
    stack: Any,
    test: str | None,
    config_text: str | None,
    args: str | None = None,
) -> str:
    """The launch JSON (docs/formats/debugger-report-schema.md); the fields that do not change between
    launches of a twin are encoded once, and a compiled twin's TTIR once per compiled kernel.
    args: the "args" field as JSON text (default: json.dumps(_launch.describe_args(...))); the
    stack, num_warps and registers may be objects that come back unchanged at every launch (they
    are encoded once), which the caller must not change afterwards."""
    stamp, iso = _now()
    const, stem = _constant_part(twin, plan.backend, cfg)
    text, reason = ttir
    g = plan.grid
    if args is None:
        args = json.dumps(_launch.describe_args(fn, plan.bound, plan.backend))
    pre, post = mid_parts(twin, text, reason, plan.num_warps, plan.registers, route, config_text)
    parts = [
        "{",
        const,
        f', "grid": [{g[0]}, {g[1]}, {g[2]}], "timestamp": "{iso}", "run_index": {index}, "run": {index}, ',
        f'"stem": "{stem}_{stamp}_run{index}"'
        if stem.isidentifier()
        else '"stem": ' + json.dumps(f"{stem}_{stamp}_run{index}"),
        pre,
        str(plan.slots),
        post,
        _memo_json(stack),
        ', "test": ',
        "null" if test is None else json.dumps(test),
        ', "error": ',
        "null" if error is None else json.dumps(f"{type(error).__name__}: {error}"[:2000]),
        ', "args": ',
        args,
        ttir_tail(ret, text),
    ]
    return "".join(parts)


def mid_parts(
    twin: Any,
    text: str | None,
    reason: str | None,
    nw: Any,
    regs: Any,
    route: dict[str, Any],
    config_text: str | None,
) -> tuple[str, str]:
    """The launch JSON's fields from "ttir_unavailable_reason" to "stack", around the record
    capacity's value: what changes with the twin, its TTIR, warps, registers and route, not with
    each launch (made once per set). nw, regs: objects that come back unchanged."""
    path = route.get("path")
    role = route.get("role")
    mkey = (id(twin), reason if text is None else None, id(nw), id(regs), path, role, config_text)
    hit = _mid_json.get(mkey)
    if hit is None or hit[0] is not twin or hit[1] is not nw or hit[2] is not regs:
        pre = "".join(
            (
                ', "ttir_unavailable_reason": ',
                "null" if text is not None else json.dumps(reason or "unknown"),
                ', "record_capacity": ',
            )
        )
        post = "".join(
            (
                ', "num_warps": ',
                _memo_json(nw),
                ', "registers": ',
                _memo_json(regs),
                ', "launch_path": ',
                json.dumps(path) if path else '"JITFunction.run"',
                ', "autotune": ',
                json.dumps({"role": role, "config": config_text}) if role else "null",
                ', "stack": ',
            )
        )
        if len(_mid_json) >= 1024:
            _mid_json.clear()
        hit = _mid_json[mkey] = (twin, nw, regs, (pre, post))
    return hit[3]


def ttir_tail(ret: Any, text: str | None) -> str:
    """The launch JSON's last field and its closing brace: the TTIR (encoded once per compiled
    kernel) or null."""
    if text is None:
        return ', "ttir": null}'
    key = id(ret) if ret is not None else id(text)
    hit = _ttir_json.get(key)
    if hit is None or hit[0] is not (ret if ret is not None else text):
        hit = (ret if ret is not None else text, json.dumps(text))
        if len(_ttir_json) > 256:
            _ttir_json.clear()
        _ttir_json[key] = hit
    return ', "ttir": ' + hit[1] + "}"


#: (twin, reason, warps, registers, route) -> the launch JSON's fields between "stem" and "stack",
#: around the record capacity
_mid_json: dict[tuple[Any, ...], tuple[Any, Any, Any, tuple[str, str]]] = {}

_dirs_made: set[str] = set()


def ensure_dir(path: str) -> None:
    """Make the report directory, once per path (the report writer makes its last level again
    if it was removed since)."""
    if path not in _dirs_made:
        os.makedirs(path, exist_ok=True)
        _dirs_made.add(path)


def site_table_json(twin: Any) -> str:
    s = twin.extra.get("site_table_json")
    if s is None:
        s = json.dumps(twin.site_table())
        twin.extra["site_table_json"] = s
    return s


def run_template(twin: Any, plan: _launch.Launch, ret: Any) -> dict[str, Any]:
    """The run dict's fields that do not change between launches of one twin, compiled kernel,
    warp and register decision, sizing and grid (the rest is None until new_run fills it); made
    once per set. Not to be changed: copy it."""
    nw, regs = plan.num_warps, plan.registers
    key = (id(twin), id(ret), id(nw), id(regs), plan.backend, plan.slots, plan.arena_words)
    hit = _run_tpl.get(key)
    if (
        hit is None
        or hit[0] is not twin
        or hit[1] is not ret
        or hit[2] is not nw
        or hit[3] is not regs
    ):
        tpl = {
            "kernel": twin.kernel_name,
            "run_index": None,
            "backend": plan.backend,
            "grid": None,
            "programs": None,
            "slots_per_program": plan.slots,
            "dump_capacity_words": plan.arena_words,
            "level": twin.level,
            "addr_level": twin.addr_level,
            "source_file": twin.source_file,
            "twin_file": twin.path,
            "overflow_count": None,
            "dump_words_requested": None,
            "error": None,
            "paths": None,
            "report": _UNLOADED,
            "findings": _UNLOADED,
            "coverage": _UNLOADED,
            "sanitize": bool(twin.extra.get("sanitize", False)),
            # float sums in float64 per element (activate(exact_sums=True)), else float32 per block
            "exact_sums": bool(twin.extra.get("exact_sums", False)),
            "complete": None,
            "num_warps": None,
            # what the compiled twin really ran with (None on the interpreter)
            "num_warps_compiled": getattr(getattr(ret, "metadata", None), "num_warps", None),
            # the twin's register cap on NVIDIA GPUs ({"cap", "uncapped", "reason"}; None elsewhere)
            "registers": None,
            "registers_compiled": getattr(ret, "n_regs", None),
        }
        if len(_run_tpl) >= 256:
            _run_tpl.clear()
        hit = _run_tpl[key] = (twin, ret, nw, regs, tpl)
    return hit[4]


def new_run(
    twin: Any, plan: _launch.Launch, index: int, ret: Any, error: BaseException | None
) -> Run:
    """The run dict of a launch: its template (run_template) copied, the launch's own fields set.
    python/ext/dbgfast.c makes the same for a replayed launch."""
    nw, regs = plan.num_warps, plan.registers
    run = Run(run_template(twin, plan, ret))
    g = plan.grid
    dict.update(
        run,
        run_index=index,
        grid=list(g),
        programs=plan.programs,
        paths={},
        # copies: a caller may change its run dict
        num_warps=dict(nw) if nw else None,
        registers=dict(regs) if regs else None,
    )
    if error is not None:
        dict.__setitem__(run, "error", repr(error))
    return run


#: (twin, compiled kernel, warps, registers) -> the run dict's fields common to their launches
_run_tpl: dict[tuple[Any, ...], tuple[Any, Any, Any, Any, dict[str, Any]]] = {}


def fill_run(run: Run, result: dict[str, Any], header: list[int] | None) -> None:
    """Join a report writer's result (sync or pipeline) with its run dict."""
    dict.update(
        run,
        {
            "paths": dict(result),
            "overflow_count": int(result.get("overflow_count", header[4] if header else 0)),
            "complete": bool(result.get("complete", True)),
            "findings_count": int(result.get("findings", 0)),
        },
    )
    if header is not None:
        dict.__setitem__(run, "dump_words_requested", header[5])
    elif "dump_words_requested" in result:
        dict.__setitem__(run, "dump_words_requested", int(result["dump_words_requested"]))
    if result.get("error"):
        dict.__setitem__(run, "report_error", result["error"])
    for k in ("txt", "json", "op_log_txt", "op_log_json", "raw", "artifacts_dir"):
        dict.__setitem__(run, k, result.get(k))


# ------------------------------------------------------------------------------------------------
# The pipeline
# ------------------------------------------------------------------------------------------------


_last_pipe: list[Any] = [None]  # (device, cfg, findings_only, summary, entry) of the last launch


def pipeline_for(dev: Any, summary: Any, cfg: Any, findings_only: bool) -> Any:
    """The pipeline of a device (made on first use), or None when it cannot be used there."""
    last = _last_pipe[0]
    if (
        last is not None
        and last[1] is cfg
        and last[3] is summary
        and last[2] == findings_only
        and last[0] == dev
    ):
        return last[4]  # the same as the last launch's (forgotten when a pipeline closes)
    entry = _pipeline_for(dev, summary, cfg, findings_only)
    _last_pipe[0] = (dev, cfg, findings_only, summary, entry)
    return entry


def _pipeline_for(dev: Any, summary: Any, cfg: Any, findings_only: bool) -> Any:
    from flagprism import _ext  # type: ignore[attr-defined]

    key = (str(dev),)
    flags = (cfg.pool_bytes, findings_only, cfg.max_reports)
    with _lock:
        hit = _pipes.get(key)
        if hit is not None and hit[2] == flags:
            return hit
        if hit is not None:
            _close(key)
        pool = None
        dptr = 0
        if dev.type != "cpu":
            if not (_devbuf._is_nvidia(dev) and _devbuf._driver_ok()):
                return None
            import torch

            with _intercept.internal():
                pool = torch.empty(cfg.pool_bytes // 8, dtype=torch.int64, device=dev)
            dptr = int(pool.data_ptr())
        pipe = _ext.debug_pipe_new(
            summary, int(cfg.pool_bytes), dptr, bool(findings_only), int(cfg.max_reports or 0)
        )
        _pipes[key] = (pool, pipe, flags)
        return _pipes[key]


def _close(key: Any) -> None:
    from flagprism import _ext  # type: ignore[attr-defined]

    _last_pipe[0] = None
    _allocs.clear()  # they hold the pipelines' pools
    for hook in on_close:
        hook()  # _replay: forgets its references to pipelines
    pool, pipe, _flags = _pipes.pop(key)
    _ext.debug_pipe_drain(pipe)
    _merge(pipe)
    del pipe, pool  # the pipeline (which forgets its pool's span) before the pool


#: Called (no arguments) before a pipeline closes, to drop references to it.
on_close: list[Callable[[], None]] = []

#: Called with (kernel, message) for a launch whose reports the pipeline could not write.
on_write_failure: Callable[[str, str], None] | None = None


def _merge(pipe: Any) -> None:
    from flagprism import _ext  # type: ignore[attr-defined]

    for res in _ext.debug_pipe_take(pipe):
        with _lock:
            run = _pending.pop(int(res["launch_index"]), None)
        if run is not None:
            fill_run(run, res, None)
        if res.get("status") == "FP_EIO" and on_write_failure is not None:
            on_write_failure(run["kernel"] if run is not None else "kernel", str(res.get("error")))


def drain() -> None:
    """Wait for every launch in the pipelines and join their results with their run dicts."""
    from flagprism import _ext  # type: ignore[attr-defined]

    with _lock:
        pipes = [p for _pool, p, _f in _pipes.values()]
    for pipe in pipes:
        _ext.debug_pipe_drain(pipe)
        _merge(pipe)


def release_spare() -> int:
    """Free the page-locked pool closed pipelines keep for the next one; its bytes (0: none)."""
    try:
        from flagprism import _ext  # type: ignore[attr-defined]
    except ImportError:
        return 0
    fn = getattr(_ext, "debug_pipe_release_spare", None)
    return int(fn()) if fn is not None else 0


def close_all() -> None:
    with _lock:
        for key in list(_pipes):
            _close(key)


def stats() -> dict[str, Any]:
    from flagprism import _ext  # type: ignore[attr-defined]

    out: dict[str, Any] = {"runs_dropped": runs_dropped, "pipelines": {}}
    with _lock:
        for key, (_pool, pipe, _f) in _pipes.items():
            out["pipelines"][key[0]] = _ext.debug_pipe_stats(pipe)
    return out


def stream_of(buf: Any) -> int:
    dev = buf.device
    if dev.type == "cpu":
        return 0
    return _devbuf._stream(dev)


def allocator(
    entry: Any, stream: int | None = None
) -> Callable[[int, list[int], Any], tuple[Any, int | None]]:
    """alloc() for _plans.prepare: on a device, a slice of the pipeline's pool, zeroed and given
    its header on `stream` (None: the device's current stream); on the host (or when it does
    not fit), a buffer of its own (a host buffer is copied into a slice after the launch)."""
    key = (id(entry), stream)
    hit = _allocs.get(key)
    if hit is not None and hit[0] is entry:
        return hit[1]
    from flagprism import _ext  # type: ignore[attr-defined]

    pool, pipe, _f = entry
    base = int(pool.data_ptr()) if pool is not None else 0

    def alloc(words: int, header: list[int], dev: Any) -> tuple[Any, int | None]:
        if pool is not None and dev.type != "cpu":
            off = _ext.debug_pipe_reserve_prepare(
                pipe,
                words * 8,
                header_bytes(header),
                _devbuf._stream(dev) if stream is None else stream,
            )
            if off is not None:
                return _launch.PoolSlice(pool, base, off // 8, words), off
        return _devbuf.new(words, header, dev), None

    if len(_allocs) >= 64:
        _allocs.clear()
    _allocs[key] = (entry, alloc)
    return alloc


#: (id(pipeline entry), stream) -> (entry, its alloc()): made once, not per launch
_allocs: dict[tuple[int, int | None], tuple[Any, Any]] = {}


def unreserve(entry: Any, plan: _launch.Launch) -> None:
    """Give back a launch's slice when it will not be submitted (the launch raised)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    if entry is not None and plan.pipe_offset is not None:
        _ext.debug_pipe_unreserve(entry[1], plan.pipe_offset)


def submit(
    pipe_entry: Any,
    plan: _launch.Launch,
    launch: str,
    sites: str,
    twin: Any,
    index: int,
    run: Run,
    max_runs: int,
) -> bool:
    """Hand the launch to the pipeline (after the twin ran); False when its buffer does not fit
    the pool (then the caller reports it synchronously)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    _pool, pipe, _f = pipe_entry
    nbytes = plan.buffer.numel() * 8
    off = plan.pipe_offset
    if off is None:
        # a host buffer (the interpreter): copy it into a slice now
        off = _ext.debug_pipe_reserve(pipe, nbytes)
        if off is None:
            return False
        with _intercept.internal():
            _ext.debug_pipe_fill(pipe, off, plan.buffer.detach().numpy())
    with _lock:
        _pending[index] = run
    _keep(run, max_runs)
    stream = (
        plan.stream
        if plan.stream is not None and plan.pipe_offset is not None
        else stream_of(plan.buffer)
    )
    _ext.debug_pipe_submit(
        pipe, off, nbytes, stream, twin.kernel_name, twin.source_file or "", sites, launch, index
    )
    return True


def report_sync(
    report_fn: Callable[..., Any],
    plan: _launch.Launch,
    launch: str,
    sites: str,
    run: Run,
    max_runs: int,
) -> Run:
    raw = _launch.buffer_bytes(plan)
    result = report_fn(raw, sites, launch)
    fill_run(run, result if isinstance(result, dict) else {}, _launch.read_header(raw))
    _keep(run, max_runs)
    return run


def header_bytes(words: list[int]) -> bytes:
    if len(words) == 8:
        return _HDR8.pack(*words)
    return struct.pack(f"<{len(words)}q", *words)


_HDR8 = struct.Struct("<8q")  # the record buffer's header (_launch.buffer_layout)
