# SPDX-License-Identifier: Apache-2.0
"""The replayed launch: a launch of a specialization and sizing that an earlier launch already
took through the whole Python path (debugger._instrumented) is done in one call of the extension
(python/ext/dbgfast.c, debug_fast_launch). This module builds what that call repeats, from what
the Python path decided, and nothing else:

* per kernel, F: how to bind and scan its arguments and make the plan key (_plans), its plan
  table, the pipeline and its pool, the launch JSON's constant part and stem, where run dicts go;
* per plan, ``Plan.fast`` (P): the sizing parameters and sizings, the argument templates, the
  kernel's own compiled kernel (what the launch returns);
* per sizing, ``Sizing.fast`` (S): the compiled twin and its launcher, the direct launch's checks
  (_plans._direct), the launch JSON's and run dict's parts for that twin, warps and registers.

Only plain launches (JITFunction.run), FlagGems' LibEntry's and those of an autotuner's chosen
config, of CUDA kernels whose records go to a pipeline's device pool, are replayed
(route_token()); every other launch, and any launch
where the extension finds something different from what these hold, takes the Python path,
which is the reference (docs/guide/debugger.md, "The launch fast path")."""

from __future__ import annotations

import functools
import json
import os
import sys
import weakref
from typing import Any

from flagprism import _dbgexport, _intercept, _launch, _plans

#: id(kernel) -> (weak reference, F, the Debugger's epoch, the pipeline entry, plan generation,
#: the record buffer's device); F None: the kernel was replayed before its pipeline closed
#: (refresh() makes it again for the pipeline of now)
kernels: dict[int, tuple[Any, tuple[Any, ...] | None, int, Any, int, Any]] = {}

_STACK_LIMIT = 12  # as debugger._launch_stack
_CONSTS = (
    _launch.MAX_RECORD_BYTES,
    _launch.RECORD_WORDS,
    _launch.HEADER_WORDS,
    _launch.MAX_DUMP_WORDS,
    _launch.DUMP_WORDS_PER_RECORD,
    _launch.MAGIC,
    _launch.VERSION,
)

_launch_fn: Any = _plans.UNSET


def available() -> bool:
    global _launch_fn
    if _launch_fn is _plans.UNSET:
        _launch_fn = _plans._ext_fn("debug_fast_launch")
    return _launch_fn is not None


def forget() -> None:
    kernels.clear()


def _drop_pipes() -> None:
    """Before a pipeline closes: no F may keep it (or its pool) alive; what F was for is kept,
    for refresh()."""
    for key, hit in list(kernels.items()):
        if hit[1] is not None:
            kernels[key] = (hit[0], None, -1, None, -1, hit[5])


_dbgexport.on_close.append(_drop_pipes)


def stale_device(fn: Any) -> Any:
    """The record buffer's device of a kernel that was replayed before and may be again once
    refresh() makes its F for the Debugger of now, or None."""
    hit = kernels.get(id(fn))
    if hit is None or hit[0]() is not fn:
        return None
    return hit[5]


def refresh(fn: Any, twin: Any, cfg: Any, entry: Any, epoch: int) -> tuple[Any, ...] | None:
    """F of a kernel replayed before (stale_device()), made again for the twin, configuration
    and pipeline of now (after deactivate() and activate(), say): its plans and sizings kept
    what they learnt, so its next launch is replayed without going through Python first. None
    (and forgotten) where it cannot be."""
    hit = kernels.get(id(fn))
    if hit is None or hit[0]() is not fn:
        return None
    F = None
    if entry is not None and entry[0] is not None and available():
        F = _kernel(fn, twin, "cuda", hit[5], cfg, entry)
    if F is None:
        kernels.pop(id(fn), None)
        return None
    kernels[id(fn)] = (hit[0], F, epoch, _dbgexport._last_pipe[0], _plans._generation, hit[5])
    return F


def lookup(fn: Any, epoch: int) -> tuple[Any, ...] | None:
    """F of `fn` when it still holds: the same Debugger epoch, pipeline and plan generation."""
    hit = kernels.get(id(fn))
    if (
        hit is None
        or hit[1] is None
        or hit[2] != epoch
        or hit[3] is not _dbgexport._last_pipe[0]
        or hit[4] != _plans._generation
        or hit[0]() is not fn
    ):
        return None
    return hit[1]


def current(F: tuple[Any, ...]) -> bool:
    """Whether F's launch JSON still names the script and working directory of now (the
    extension declines launches after a chdir, say, until F is made again)."""
    return F[18] == (sys.argv[0] if sys.argv else "") and F[19] == os.fsencode(os.getcwd())


#: route_token()'s answer for a route whose launches are not replayed
NO = object()

_CHOSEN_KEYS = frozenset(("path", "role", "tuner", "config", "autotuner"))


def route_token(route: dict[str, Any], config_text: Any) -> Any:
    """What a replayed launch on this route must match of the launch its sizing was learnt from
    (the launch JSON's "launch_path" and "autotune"), or NO. A plain launch: None; one through
    a library that only names its path (FlagGems' LibEntry): the path; the config an autotuner
    chose: the path and the config's text (config_text(route) gives it, the launch's
    description has it); not the autotuner's benchmark launches, nor Inductor's (translated,
    never through here)."""
    if not route:
        return None
    if len(route) == 1 and "path" in route:
        return route["path"]
    if route.get("role") == "chosen" and route.keys() <= _CHOSEN_KEYS:
        return f"{route.get('path')}\n{config_text(route)}"
    return NO


def run(
    F: tuple[Any, ...],
    args: Any,
    kwargs: Any,
    grid: Any,
    index: int,
    test: str | None,
    token: str | None = None,
) -> Any:
    """The replayed launch: the kernel's own compiled kernel, or None (nothing was done: take the
    Python path). token: route_token() of the launch's route."""
    return _launch_fn(
        F, args, kwargs, grid, index, "null" if test is None else json.dumps(test), token
    )


def learn(
    fn: Any,
    twin: Any,
    launch: _launch.Launch,
    plan: _plans.Plan | None,
    sizing: _plans.Sizing | None,
    cfg: Any,
    entry: Any,
    ret: Any,
    route: dict[str, Any],
    ttir: tuple[str | None, str | None],
    epoch: int,
    config_text: Any = None,
) -> bool:
    """After a launch that took the Python path: remember what the next launches of its plan and
    sizing need to be replayed. False where they cannot be (they keep taking the Python path).
    config_text(route): the autotuner's config as the launch JSON names it."""
    cfg_text = config_text or (lambda r: None)
    token = route_token(route, cfg_text)
    if (
        token is NO
        or plan is None
        or sizing is None
        or entry is None
        or entry[0] is None
        or launch.backend != "cuda"
        or launch.pipe_offset is None
        or launch.extra
        or launch.args_dyn is None
        or plan.args_tpl is None
        or plan.original is _plans.UNSET
        or not available()
    ):
        return False
    d = sizing.direct
    if not isinstance(d, _plans._Direct) or d.split is None or d.kernel is not ret:
        return False
    F = lookup(fn, epoch)
    if F is None or not current(F):
        F = _kernel(fn, twin, launch.backend, launch.buffer_device, cfg, entry)
        if F is None:
            return False
        try:
            ref = weakref.ref(fn, lambda _r, k=id(fn): kernels.pop(k, None))
        except TypeError:
            return False
        kernels[id(fn)] = (
            ref,
            F,
            epoch,
            _dbgexport._last_pipe[0],
            _plans._generation,
            launch.buffer_device,
        )
    if F[10] is not twin.extra.get("plans"):
        return False
    if plan.fast is None:
        plan.fast = (
            plan.sizing_params,
            plan.sizings,
            tuple(plan.args_tpl),
            plan.nsites,
            plan.has_dumps,
            plan.original,
            twin.nparams,
            twin.nchecks,
            bool(twin.extra.get("suppress", False)),
            bool(twin.records),
        )
    if sizing.fast is None:
        k = d.kernel
        text, reason = ttir
        pre, post = _dbgexport.mid_parts(
            twin, text, reason, launch.num_warps, launch.registers, route, cfg_text(route)
        )
        sizing.fast = (
            sizing.records_per_program,
            sizing.dump_records_per_program,
            k,
            k.run,
            k.function,
            k.packed_metadata,
            d.device,
            d.get_device,
            d.get_stream,
            d.globals_,
            d.knobs,
            d.modes,
            d.metadata_fn,
            d.split[0],
            d.split[1],
            pre,
            post,
            _dbgexport.ttir_tail(ret, text),
            _dbgexport.run_template(twin, launch, ret),
            launch.num_warps,
            launch.registers,
            token,
        )
    return True


def _kernel(
    fn: Any, twin: Any, backend: str, dev: Any, cfg: Any, entry: Any
) -> tuple[Any, ...] | None:
    const, stem = _dbgexport._constant_part(twin, backend, cfg)
    if not stem.isidentifier():
        return None  # a stem the launch JSON must escape: the Python path
    plans = twin.extra.get("plans")
    if plans is None:
        return None
    info = _plans.kernel_info(fn)
    tensor, cx = _plans._classes()
    pool, pipe, _flags = entry
    return (
        info.names,
        info.index,
        info.defaults,
        info.knames,
        info.kbytes,
        tensor,
        cx,
        dev,
        (cfg.twin_num_warps, cfg.twin_maxnreg),
        _plans._generation,
        plans,
        pipe,
        int(pool.data_ptr()),
        twin.kernel_name,
        twin.source_file or "",
        _dbgexport.site_table_json(twin),
        const,
        f'"stem": "{stem}_',
        sys.argv[0] if sys.argv else "",
        os.fsencode(os.getcwd()),
        _dbgexport._pending,
        _dbgexport._runs,
        cfg.max_runs,
        _dbgexport._keep,
        _dbgexport.Run,
        _plans.counters,
        _intercept.only,
        _STACK_LIMIT,
        json.dumps,
        cfg.record_capacity,
        cfg.dump_capacity,
        _CONSTS,
        functools.partial(_plans.scan_py, info),
    )
