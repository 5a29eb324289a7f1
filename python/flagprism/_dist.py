# SPDX-License-Identifier: Apache-2.0
"""Multi-process jobs (torch.distributed launched by torchrun, or any job that sets ``RANK`` and
``WORLD_SIZE``): who this process is, where its outputs go, and what its collectives do.

* **Identity.** ``job()`` reads torchrun's environment (``RANK``, ``WORLD_SIZE``,
  ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``) and the host name (``FLAGPRISM_HOST`` overrides it, for
  tests that pretend to be on several hosts).
* **Names.** ``output_name()`` / ``output_dir()`` give each rank its own outputs
  (``out/prof.rank3``, ``out/rank3``; ``{rank}`` in a name places it) through the C library's
  rule (``fp_ranks_name``), so ranks never overwrite each other.
* **Collectives.** While a profiling session is open, torch.distributed's collective functions
  (``all_reduce``, ``all_gather_into_tensor``, ``broadcast``, ... in
  ``torch.distributed.distributed_c10d``, which ``torch.distributed`` re-exports) are wrapped:
  each call opens a collective scope in C (``comm_enter``: kind, bytes of this rank's message,
  the communicator's ranks) around the original and closes it after (``comm_exit``); kernels it
  launches (NCCL's) land under it. The group's backend and ranks are looked up once per group.
  When torch.distributed is not imported yet, the wrapping happens right after it is. Calls
  that bypass the module's functions (DDP's gradient buckets in C++, functional collectives
  under torch.compile) are not seen here; their NCCL kernels still reach the tree through CUPTI.
* **Clock alignment.** When ``init_process_group`` returns inside a session, the ranks meet at
  a barrier on the job's own store (twice: the first settles them, the second is measured);
  each rank keeps when it left and how long the barrier took, which ``flagprism merge`` uses to
  align traces across hosts (docs/guide/profiler.md, "Multi-process jobs").

What the identity, the merge and the views mean is the C library's (include/flagprism/ranks.h,
comm.h); this module only reads Python-side facts and installs hooks.
"""

from __future__ import annotations

import inspect
import os
import socket
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _x() -> Any:
    """flagprism._ext, imported on first use (the Debugger imports this module without it)."""
    from flagprism import _ext  # type: ignore[attr-defined]

    return _ext


#: The module whose functions are wrapped (torch.distributed re-exports them).
C10D = "torch.distributed.distributed_c10d"

#: Collective -> the parameter holding this rank's message (its bytes are the call's "bytes";
#: None: no tensor message). isend/irecv/batch_isend_irecv are asynchronous by nature.
COLLECTIVES: dict[str, str | None] = {
    "all_reduce": "tensor",
    "all_reduce_coalesced": "tensors",
    "broadcast": "tensor",
    "reduce": "tensor",
    "all_gather": "tensor",
    "all_gather_into_tensor": "input_tensor",
    "all_gather_single": "input_tensor",
    "all_gather_coalesced": "input_tensor_list",
    "reduce_scatter": "input_list",
    "reduce_scatter_tensor": "input",
    "reduce_scatter_single": "input",
    "all_to_all": "input_tensor_list",
    "all_to_all_single": "input",
    "gather": "tensor",
    "scatter": "tensor",
    "send": "tensor",
    "recv": "tensor",
    "isend": "tensor",
    "irecv": "tensor",
    "batch_isend_irecv": "p2p_op_list",
    "barrier": None,
    "monitored_barrier": None,
    "all_gather_object": None,
    "broadcast_object_list": None,
    "gather_object": None,
    "scatter_object_list": None,
    "send_object_list": None,
    "recv_object_list": None,
}
ASYNC_BY_NATURE = frozenset({"isend", "irecv", "batch_isend_irecv"})

#: Seconds a rank waits for the others at the clock barrier before giving up (with a warning;
#: traces are then aligned on wall clocks). The ranks have just left init_process_group, itself
#: a rendezvous, so they arrive within moments of each other; a rank waits this long only when
#: some ranks are not profiled. FLAGPRISM_BARRIER_TIMEOUT overrides; 0 disables the barrier.
BARRIER_TIMEOUT_S = 10.0


#: Ranks of one job at most (FP_RANKS_MAX in include/flagprism/ranks.h).
MAX_RANKS = 65536


@dataclass(frozen=True)
class Job:
    rank: int
    world_size: int
    local_rank: int | None
    local_world_size: int | None
    host: str


def _env_int(name: str) -> int | None:
    v = os.environ.get(name, "").strip()
    if not v:
        return None
    try:
        return int(v)
    except ValueError:
        return None


def job() -> Job | None:
    """This process's place in a job, from torchrun's environment; None outside one (RANK or
    WORLD_SIZE unset or unusable)."""
    rank, world = _env_int("RANK"), _env_int("WORLD_SIZE")
    if rank is None or world is None or not 1 <= world <= MAX_RANKS or not 0 <= rank < world:
        return None
    host = os.environ.get("FLAGPRISM_HOST") or socket.gethostname()
    return Job(rank, world, _env_int("LOCAL_RANK"), _env_int("LOCAL_WORLD_SIZE"), host)


def _check_job_env() -> None:
    """Refuse a job environment that names no rank clearly (``RANK=abc``, ``1/2``, ``-1``, a
    rank not below ``WORLD_SIZE``): read as "no job", its ranks would all write the same files.
    Unset or empty variables are no job."""
    raw = {k: os.environ.get(k, "").strip() for k in ("RANK", "WORLD_SIZE")}
    rank, world = _env_int("RANK"), _env_int("WORLD_SIZE")
    problem = None
    if raw["RANK"] and (rank is None or not 0 <= rank < MAX_RANKS):
        problem = f"RANK={raw['RANK']!r} is not a rank (an integer from 0 to {MAX_RANKS - 1})"
    elif raw["WORLD_SIZE"] and (world is None or not 1 <= world <= MAX_RANKS):
        problem = f"WORLD_SIZE={raw['WORLD_SIZE']!r} is not a number of ranks (1 to {MAX_RANKS})"
    elif rank is not None and world is not None and rank >= world:
        problem = f"RANK={rank} is not below WORLD_SIZE={world}"
    if problem:
        raise ValueError(
            f"{problem}: each rank's outputs are named after its rank, so with this "
            "environment the ranks would overwrite each other's files; set RANK and "
            "WORLD_SIZE as torchrun does, or unset them for a single process"
        )


def output_name(name: str) -> str:
    """A profile's output path for this rank: ``out/prof`` -> ``out/prof.rank3`` in a job,
    ``{rank}`` placing the rank explicitly (rank 0 outside a job); unchanged otherwise. Raises
    ValueError for a job environment that names no rank clearly (_check_job_env)."""
    _check_job_env()
    j = job()
    if j is not None:
        return _x().ranks_name(name, j.rank)
    if "{rank}" in name:
        return _x().ranks_name(name, 0)
    return name


def output_dir(path: str) -> str:
    """The Debugger's output directory for this rank: ``out`` -> ``out/rank3`` in a job. Raises
    ValueError as output_name() does."""
    _check_job_env()
    j = job()
    if j is not None:
        return _x().ranks_name(path, j.rank, subdir=True)
    if "{rank}" in path:
        return _x().ranks_name(path, 0, subdir=True)
    return path


# ------------------------------------------------------------------------------------------------
# What this process learned about its job (for the metadata)
# ------------------------------------------------------------------------------------------------

_lock = threading.RLock()
_barrier: tuple[int, int] | None = None  # (exit clock ns, duration ns) of the clock barrier
_backend: str | None = None  # the default group's backend, once seen
_barriers_done = 0
notes: list[str] = []


def _boot_id() -> str | None:
    """The host's boot id: processes that share it share CLOCK_MONOTONIC (Linux); None
    elsewhere."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _device() -> str | None:
    """The device this process computed on: "cuda:N" when CUDA is initialised, else "cpu";
    None when torch is not imported (nothing is imported here)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_initialized():
            return f"cuda:{torch.cuda.current_device()}"
    except Exception:  # noqa: BLE001 - a broken CUDA setup: say cpu
        pass
    return "cpu"


def _default_backend() -> str | None:
    global _backend
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            _backend = str(dist.get_backend())
    except Exception:  # noqa: BLE001 - informative only
        pass
    return _backend


def attach(session: int | None) -> None:
    """Attach this rank's identity (and what is known so far: device, backend, the clock
    barrier) to a profiling session (None: every open one). Nothing outside a job. Never
    raises: a session without its identity is better than none (a warning says so)."""
    try:
        _attach(session)
    except Exception as e:  # noqa: BLE001
        warnings.warn(
            f"flagprism: the rank's identity could not be recorded: {e}",
            RuntimeWarning,
            stacklevel=2,
        )


def _attach(session: int | None) -> None:
    j = job()
    if j is None:
        return
    with _lock:
        barrier = _barrier
    _x().ranks_attach(
        session,
        j.rank,
        j.world_size,
        local_rank=j.local_rank,
        local_world_size=j.local_world_size,
        host=j.host,
        device=_device(),
        backend=_default_backend(),
        barrier_exit_ns=barrier[0] if barrier else None,
        barrier_ns=barrier[1] if barrier else None,
        boot_id=_boot_id(),
    )


def describe_summary(summary: Any) -> None:
    """Put this rank's identity into the Debugger's summary (its "distributed" object)."""
    j = job()
    if j is None:
        return
    _x().debug_summary_set(summary, "rank", j.rank)
    _x().debug_summary_set(summary, "world_size", j.world_size)
    _x().debug_summary_set(summary, "local_rank", -1 if j.local_rank is None else j.local_rank)
    _x().debug_summary_set(summary, "host", j.host)
    _x().debug_summary_set(summary, "device", _device())


# ------------------------------------------------------------------------------------------------
# The clock barrier
# ------------------------------------------------------------------------------------------------


def _barrier_timeout() -> float:
    v = os.environ.get("FLAGPRISM_BARRIER_TIMEOUT")
    if v is None:
        return BARRIER_TIMEOUT_S
    try:
        return max(0.0, float(v))
    except ValueError:
        return BARRIER_TIMEOUT_S


def clock_barrier() -> tuple[int, int] | None:
    """Meet every rank on the default group's store, twice; returns (the profiler clock when
    this rank left the second meeting, how long it took) or None when it could not (no store,
    a timeout: then a warning). No rank leaves a meeting before the last one arrived, so no two
    ranks left it further apart than the longest meeting: the alignment error bound."""
    global _barrier, _barriers_done
    timeout = _barrier_timeout()
    if timeout <= 0:
        return None
    import datetime

    dist = sys.modules.get("torch.distributed")
    c10d = sys.modules.get(C10D)
    if dist is None or c10d is None or not dist.is_initialized():
        return None
    try:
        store = c10d._get_default_store()
        world = dist.get_world_size()
        with _lock:
            n = _barriers_done
            _barriers_done += 1
        result = None
        for rnd in (0, 1):
            key = f"flagprism/clock/{n}/{rnd}"
            t0 = _x().prof_clock_ns()
            if store.add(key, 1) == world:
                store.set(key + "/all", "1")
            store.wait([key + "/all"], datetime.timedelta(seconds=timeout))
            t1 = _x().prof_clock_ns()
            result = (t1, t1 - t0)
    except Exception as e:  # noqa: BLE001 - a timeout or a store without add: say it, go on
        msg = (
            f"flagprism: rank {dist.get_rank()}: the clock barrier after init_process_group "
            f"failed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); are all "
            "ranks profiled? Traces of several hosts will be aligned on wall clocks"
        )
        notes.append(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
        return None
    with _lock:
        _barrier = result
    return result


# ------------------------------------------------------------------------------------------------
# The torch.distributed hooks
# ------------------------------------------------------------------------------------------------


@dataclass
class _Op:
    name: str
    msg_index: int | None  # positional index of the message parameter
    msg_name: str | None
    group_index: int | None
    async_index: int | None
    original: Any


_installed: dict[str, _Op] = {}  # function name -> what the wrapper needs
_wrappers: dict[str, Any] = {}  # function name -> our wrapper (to take it out again)
_groups: dict[int, tuple[str, str | None, int]] = {}  # id(group) -> (backend, ranks, size)
_active = False  # a session wants collectives
_tls = threading.local()  # .inside: this thread is in a hooked collective
_refs = 0  # sessions that asked
_watching = False


def _nbytes(x: Any) -> int:
    """Bytes of a tensor, a list of tensors, or P2P ops; 0 for anything else."""
    try:
        return int(x.nbytes)  # a tensor: one attribute, the common case
    except AttributeError:
        pass
    except Exception:  # noqa: BLE001 - a fake or meta tensor: no size
        return 0
    if isinstance(x, (list, tuple)):
        total = 0
        for t in x:
            try:
                total += int(getattr(t, "tensor", t).nbytes)  # P2POp holds .tensor
            except Exception:  # noqa: BLE001
                continue
        return total
    return 0


def _first_tensor(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        x = x[0] if x else None
        x = getattr(x, "tensor", x)
    return x


def _group_info(group: Any, msg: Any) -> tuple[str, str | None, int]:
    """(backend for this message, ranks as text, size) of a group, looked up once per group."""
    key = id(group)
    info = _groups.get(key)
    if info is None:
        dist = sys.modules["torch.distributed"]
        g = group if group is not None else dist.group.WORLD
        try:
            backend = str(dist.get_backend(g))
        except Exception:  # noqa: BLE001 - not initialised: the call itself will say so
            backend = "c10d"
        try:
            ranks = list(dist.get_process_group_ranks(g))
            text: str | None = _x().ranks_format(ranks)
            size = len(ranks)
        except Exception:  # noqa: BLE001
            text, size = None, 0
        info = (backend, text, size)
        _groups[key] = info
    backend = info[0]
    if "," in backend or ":" in backend:
        # "cpu:gloo,cuda:nccl": the backend serving this message's device
        t = _first_tensor(msg)
        dev = getattr(getattr(t, "device", None), "type", "cpu")
        for part in backend.split(","):
            d, _, b = part.partition(":")
            if d == dev and b:
                return (b, info[1], info[2])
    return info


def _wrap(op: _Op) -> Callable[..., Any]:
    original = op.original
    name = op.name
    msg_index, msg_name = op.msg_index, op.msg_name
    group_index, async_index = op.group_index, op.async_index
    always_async = name in ASYNC_BY_NATURE
    ext = _x()

    def collective(*args: Any, **kwargs: Any) -> Any:
        if not _active or getattr(_tls, "inside", False):
            # a collective made by another one (all_gather_object's all_gather, a deprecated
            # name calling its successor) belongs to the outer call
            return original(*args, **kwargs)
        msg = None
        if msg_name is not None:
            msg = (
                kwargs.get(msg_name)
                if msg_name in kwargs
                else (args[msg_index] if msg_index is not None and msg_index < len(args) else None)
            )
        group = (
            kwargs.get("group")
            if "group" in kwargs
            else (
                args[group_index] if group_index is not None and group_index < len(args) else None
            )
        )
        if always_async:
            is_async = True
        else:
            is_async = bool(
                kwargs.get("async_op")
                if "async_op" in kwargs
                else (
                    args[async_index]
                    if async_index is not None and async_index < len(args)
                    else False
                )
            )
        try:
            backend, ranks, size = _group_info(group, msg)
            ext.comm_enter(None, backend, name, _nbytes(msg), ranks, size, is_async)
        except Exception:  # noqa: BLE001 - never let profiling break the job's collective
            return original(*args, **kwargs)
        _tls.inside = True
        try:
            return original(*args, **kwargs)
        finally:
            _tls.inside = False
            try:
                ext.comm_exit(None)
            except Exception:  # noqa: BLE001 - a session finalized meanwhile
                pass

    collective.__wrapped__ = original  # type: ignore[attr-defined]
    collective.__name__ = getattr(original, "__name__", name)
    collective.__qualname__ = getattr(original, "__qualname__", name)
    collective.__doc__ = getattr(original, "__doc__", None)
    collective._flagprism = True  # type: ignore[attr-defined]
    return collective


def _wrap_init(original: Any) -> Callable[..., Any]:
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _groups.clear()
        if _active:
            clock_barrier()
            _default_backend()
        return result

    init_process_group.__wrapped__ = original  # type: ignore[attr-defined]
    init_process_group.__name__ = "init_process_group"
    init_process_group.__doc__ = getattr(original, "__doc__", None)
    init_process_group._flagprism = True  # type: ignore[attr-defined]
    return init_process_group


def _wrap_destroy(original: Any) -> Callable[..., Any]:
    def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
        _default_backend()  # remember it for the metadata
        try:
            return original(*args, **kwargs)
        finally:
            _groups.clear()

    destroy_process_group.__wrapped__ = original  # type: ignore[attr-defined]
    destroy_process_group.__name__ = "destroy_process_group"
    destroy_process_group.__doc__ = getattr(original, "__doc__", None)
    destroy_process_group._flagprism = True  # type: ignore[attr-defined]
    return destroy_process_group


def _param_index(sig: inspect.Signature | None, name: str | None) -> int | None:
    if sig is None or name is None:
        return None
    for i, p in enumerate(sig.parameters.values()):
        if p.name == name:
            return i if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) else None
    return None


def _set(modules: list[Any], name: str, old: Any, new: Any) -> None:
    """Replace `old` by `new` as attribute `name` of each module that holds `old`."""
    for m in modules:
        if m is not None and getattr(m, name, None) is old:
            setattr(m, name, new)


def _patch_now() -> None:
    """Wrap the collectives of the imported torch.distributed (lock held)."""
    c10d = sys.modules.get(C10D)
    if c10d is None or _installed:
        return
    mods = [c10d, sys.modules.get("torch.distributed")]
    for name, msg_param in COLLECTIVES.items():
        fn = getattr(c10d, name, None)
        if fn is None or getattr(fn, "_flagprism", False):
            continue
        try:
            sig: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        op = _Op(
            name,
            _param_index(sig, msg_param),
            msg_param,
            _param_index(sig, "group"),
            _param_index(sig, "async_op"),
            fn,
        )
        w = _wrap(op)
        _installed[name] = op
        _wrappers[name] = w
        _set(mods, name, fn, w)
    for name, make in (
        ("init_process_group", _wrap_init),
        ("destroy_process_group", _wrap_destroy),
    ):
        fn = getattr(c10d, name, None)
        if fn is None or getattr(fn, "_flagprism", False):
            continue
        w = make(fn)
        _installed[name] = _Op(name, None, None, None, None, fn)
        _wrappers[name] = w
        _set(mods, name, fn, w)


def _unpatch() -> None:
    """Put the originals back where our wrappers still are (lock held)."""
    mods = [sys.modules.get(C10D), sys.modules.get("torch.distributed")]
    for name, op in _installed.items():
        _set(mods, name, _wrappers[name], op.original)
    _installed.clear()
    _wrappers.clear()
    _groups.clear()


def _on_import(module: Any) -> None:
    with _lock:
        if _refs > 0:
            _patch_now()


def install() -> None:
    """A session that wants collectives started: wrap torch.distributed now, or when it is
    imported (nothing is imported here)."""
    global _refs, _active, _watching
    with _lock:
        _refs += 1
        _active = True
        if C10D in sys.modules:
            _patch_now()
        elif not _watching:
            from flagprism import _intercept

            _intercept.on_import(C10D, _on_import)
            _watching = True


def uninstall() -> None:
    """A session that wanted collectives ended: unwrap when it was the last one."""
    global _refs, _active
    with _lock:
        _refs = max(0, _refs - 1)
        if _refs:
            return
        _active = False
        _unpatch()
