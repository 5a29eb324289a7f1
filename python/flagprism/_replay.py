# SPDX-License-Identifier: Apache-2.0
"""The replayed launch: a launch of a specialization and sizing that an earlier launch already
took through the whole Python path (debugger._instrumented) is done in one call of the extension
(python/ext/dbgfast.c, debug_fast_launch). This module builds what that call repeats, from what
the Python path decided, and nothing else:

* per kernel, a ``ReplayKernel``: how to bind and scan its arguments and make the plan key
  (_plans), its plan table, the pipeline and its pool, the launch JSON's constant part and stem,
  where run dicts go;
* per plan, ``Plan.fast``, a ``ReplayPlan``: the sizing parameters and sizings, the argument
  templates, the kernel's own compiled kernel (what the launch returns), the check area;
* per sizing, ``Sizing.fast``, a ``ReplaySizing``: the compiled twin and its launcher, the direct
  launch's checks (_plans._direct), the launch JSON's and run dict's parts for that twin, warps
  and registers.

The three are typed objects of the extension (python/ext/dbgdesc.h lists their fields): made here
by keyword, each field's kind checked once, read by name in C. The record buffer is sized on both
paths by the library (fp_dbg_buffer_layout, through _launch.buffer_layout here).

Only plain launches (JITFunction.run), FlagGems' LibEntry's and those of an autotuner's chosen
config, of CUDA kernels whose records go to a pipeline's device pool, are replayed
(route_token()); every other launch, and any launch
where the extension finds something different from what these hold, takes the Python path,
which is the reference (docs/internals/debugger.md, "The launch fast path")."""

from __future__ import annotations

import functools
import json
import os
import sys
import weakref
from typing import Any

from flagprism import _dbgexport, _intercept, _launch, _plans

#: id(kernel) -> (weak reference, its ReplayKernel, the Debugger's epoch, the pipeline entry,
#: plan generation, the record buffer's device); None for the ReplayKernel: the kernel was
#: replayed before its pipeline closed (refresh() makes it again for the pipeline of now)
kernels: dict[int, tuple[Any, Any, int, Any, int, Any]] = {}

_STACK_LIMIT = 12  # as debugger._launch_stack

_launch_fn: Any = _plans.UNSET


def available() -> bool:
    global _launch_fn
    if _launch_fn is _plans.UNSET:
        _launch_fn = _plans._ext_fn("debug_fast_launch")
    return _launch_fn is not None


def forget() -> None:
    kernels.clear()


def _drop_pipes() -> None:
    """Before a pipeline closes: no ReplayKernel may keep it (or its pool) alive; what it was
    for is kept, for refresh()."""
    for key, hit in list(kernels.items()):
        if hit[1] is not None:
            kernels[key] = (hit[0], None, -1, None, -1, hit[5])


_dbgexport.on_close.append(_drop_pipes)


def stale_device(fn: Any) -> Any:
    """The record buffer's device of a kernel that was replayed before and may be again once
    refresh() makes its ReplayKernel for the Debugger of now, or None."""
    hit = kernels.get(id(fn))
    if hit is None or hit[0]() is not fn:
        return None
    return hit[5]


def refresh(fn: Any, twin: Any, cfg: Any, entry: Any, epoch: int) -> Any:
    """The ReplayKernel of a kernel replayed before (stale_device()), made again for the twin, configuration
    and pipeline of now (after deactivate() and activate(), say): its plans and sizings kept
    what they learnt, so its next launch is replayed without going through Python first. None
    (and forgotten) where it cannot be."""
    hit = kernels.get(id(fn))
    if hit is None or hit[0]() is not fn:
        return None
    K = None
    if entry is not None and entry[0] is not None and available():
        K = _kernel(fn, twin, "cuda", hit[5], cfg, entry)
    if K is None:
        kernels.pop(id(fn), None)
        return None
    kernels[id(fn)] = (hit[0], K, epoch, _dbgexport._last_pipe[0], _plans._generation, hit[5])
    return K


def lookup(fn: Any, epoch: int) -> Any:
    """The ReplayKernel of `fn` when it still holds: the same Debugger epoch, pipeline and plan generation."""
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


def current(K: Any) -> bool:
    """Whether a ReplayKernel's launch JSON still names the script and working directory of now
    (the extension declines launches after a chdir, say, until it is made again)."""
    return K.argv0 == (sys.argv[0] if sys.argv else "") and K.cwd == os.fsencode(os.getcwd())


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
    K: Any,
    args: Any,
    kwargs: Any,
    grid: Any,
    index: int,
    test: str | None,
    token: str | None = None,
) -> Any:
    """The replayed launch of ReplayKernel K: the kernel's own compiled kernel, or None (nothing
    was done: take the Python path). token: route_token() of the launch's route."""
    return _launch_fn(
        K, args, kwargs, grid, index, "null" if test is None else json.dumps(test), token
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
    K = lookup(fn, epoch)
    if K is None or not current(K):
        K = _kernel(fn, twin, launch.backend, launch.buffer_device, cfg, entry)
        if K is None:
            return False
        try:
            ref = weakref.ref(fn, lambda _r, k=id(fn): kernels.pop(k, None))
        except TypeError:
            return False
        kernels[id(fn)] = (
            ref,
            K,
            epoch,
            _dbgexport._last_pipe[0],
            _plans._generation,
            launch.buffer_device,
        )
    if K.plans is not twin.extra.get("plans"):
        return False
    from flagprism import _ext

    if plan.fast is None:
        plan.fast = _ext.ReplayPlan(
            sizing_params=tuple(plan.sizing_params),
            sizings=plan.sizings,
            args_tpl=tuple(plan.args_tpl),
            nsites=plan.nsites,
            has_dumps=bool(plan.has_dumps),
            original=plan.original,
            nparams=twin.nparams,
            nchecks=twin.nchecks,
            suppress=bool(twin.extra.get("suppress", False)),
            records=bool(twin.records),
        )
    if sizing.fast is None:
        k = d.kernel
        text, reason = ttir
        pre, post = _dbgexport.mid_parts(
            twin, text, reason, launch.num_warps, launch.registers, route, cfg_text(route)
        )
        sizing.fast = _ext.ReplaySizing(
            records_per_program=sizing.records_per_program,
            dump_records_per_program=sizing.dump_records_per_program,
            kernel=k,
            run=k.run,
            function=k.function,
            packed_metadata=k.packed_metadata,
            device=d.device,
            get_device=d.get_device,
            get_stream=d.get_stream,
            globals=tuple(d.globals_),
            knobs=d.knobs,
            modes=tuple(d.modes),
            metadata_fn=d.metadata_fn,
            split0=d.split[0],
            split1=d.split[1],
            json_mid_a=pre,
            json_mid_b=post,
            json_tail=_dbgexport.ttir_tail(ret, text),
            run_template=_dbgexport.run_template(twin, launch, ret),
            num_warps=launch.num_warps,
            registers=launch.registers,
            path=token,
        )
    return True


def _capacity(v: int | None) -> int:
    """A capacity setting as the ReplayKernel holds it: -1 for None (sized from the launch)."""
    return -1 if v is None else max(0, int(v))


def _kernel(fn: Any, twin: Any, backend: str, dev: Any, cfg: Any, entry: Any) -> Any:
    """The ReplayKernel of a kernel (python/ext/dbgdesc.h), or None where its launches cannot
    be replayed."""
    from flagprism import _ext

    const, stem = _dbgexport._constant_part(twin, backend, cfg)
    plans = twin.extra.get("plans")
    if plans is None:
        return None
    info = _plans.kernel_info(fn)
    tensor, cx = _plans._classes()
    pool, pipe, _flags = entry
    return _ext.ReplayKernel(
        names=info.names,
        index=info.index,
        defaults=info.defaults,
        knames=info.knames,
        kbytes=info.kbytes,
        tensor_type=tensor,
        constexpr_type=cx,
        device=dev,
        settings=(cfg.twin_num_warps, cfg.twin_maxnreg),
        generation=_plans._generation,
        plans=plans,
        pipe=pipe,
        pool_base=int(pool.data_ptr()),
        kernel_name=twin.kernel_name,
        source_file=twin.source_file or "",
        site_table=_dbgexport.site_table_json(twin),
        constant_part=const,
        # the "stem" field up to the clock, escaped as json.dumps escapes the whole stem (the
        # clock and run index the launch adds are ASCII digits and letters)
        stem='"stem": ' + json.dumps(stem + "_")[:-1],
        argv0=sys.argv[0] if sys.argv else "",
        cwd=os.fsencode(os.getcwd()),
        pending=_dbgexport._pending,
        runs=_dbgexport._runs,
        max_runs=cfg.max_runs,
        keep=_dbgexport._keep,
        run_type=_dbgexport.Run,
        counters=_plans.counters,
        only=_intercept.only,
        stack_limit=_STACK_LIMIT,
        dumps=json.dumps,
        record_capacity=_capacity(cfg.record_capacity),
        dump_capacity=_capacity(cfg.dump_capacity),
        scan_py=functools.partial(_plans.scan_py, info),
    )
