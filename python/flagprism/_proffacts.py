# SPDX-License-Identifier: Apache-2.0
"""What only Python can see for ``flagprism advise``: the compiled kernel's resources and an
autotuner's measurements, written into the profile's metadata (docs/formats/profiler-formats.md,
"Facts for advice"). The IR's facts are C's (``_ext.ttir_estimate(...)["facts"]``); this module
only adds the compiled kernel's numbers to them and reads autotuners at finalize. Nothing here
judges a number: the advice (C, ``include/flagprism/advise.h``) does.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: Where the facts ride: after this marker in the "estimate:<kernel>" note (FP_TTIR_FACTS_MARK).
FACTS_MARK = "\nfacts: "
#: Autotuner configs kept per kernel (the rest counted in "configs_left_out").
MAX_CONFIGS = 64


def compiled_facts(kernel: Any) -> dict[str, int]:
    """A CompiledKernel's resources: warps, stages, registers and local memory per thread (the
    driver's CU_FUNC_ATTRIBUTE_NUM_REGS / LOCAL_SIZE_BYTES, read from the cubin when the kernel
    was loaded) and shared memory per program. Missing ones are left out."""
    out: dict[str, int] = {}
    md = getattr(kernel, "metadata", None)
    for key, value in (
        ("num_warps", getattr(md, "num_warps", None)),
        ("num_stages", getattr(md, "num_stages", None)),
        ("shared_bytes", getattr(md, "shared", None)),
        ("registers", getattr(kernel, "n_regs", None)),
        ("spill_bytes", None if getattr(kernel, "n_spills", None) is None else kernel.n_spills * 4),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[key] = value
    return out


def with_facts(note: str, facts_json: str | None, kernel: Any = None) -> str:
    """The estimate note followed by the facts object: the IR's (C's JSON text) with the compiled
    kernel's under "compiled" when `kernel` is a CompiledKernel."""
    try:
        facts = json.loads(facts_json) if facts_json else {}
    except ValueError:
        facts = {}
    if kernel is not None:
        compiled = compiled_facts(kernel)
        if compiled:
            facts["compiled"] = compiled
    if not facts:
        return note
    return note + FACTS_MARK + json.dumps(facts, sort_keys=True, separators=(",", ":"))


def compiled_kernel_in(frame: Any, depth: int = 6) -> Any:
    """The CompiledKernel whose _init_handles() called the load hook (its ``self``), or None."""
    for _ in range(depth):
        if frame is None:
            return None
        try:
            obj = frame.f_locals.get("self")
        except Exception:  # noqa: BLE001
            return None
        if obj is not None and hasattr(obj, "n_regs") and hasattr(obj, "metadata"):
            return obj
        frame = frame.f_back
    return None


def _number(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _config(cfg: Any) -> dict[str, Any]:
    try:
        kw = dict(cfg.all_kwargs())
    except Exception:  # noqa: BLE001 - another Triton's Config
        kw = dict(getattr(cfg, "kwargs", {}) or {})
    return {
        str(k): v
        for k, v in kw.items()
        if isinstance(v, (int, float, str, bool))
        and not (isinstance(v, float) and not math.isfinite(v))
    }


def _timings(t: Any) -> list[float | None]:
    seq = t if isinstance(t, (list, tuple)) else [t]
    return [_number(x) for x in seq[:3]]


def autotune_facts(tuner: Any) -> dict[str, Any] | None:
    """What one triton.runtime.autotuner.Autotuner measured: every config of its last
    benchmark with its times (ms: median, 20th and 80th percentile as do_bench gives them), the
    config it chose, the benchmark's wall time, its key's argument names and how many keys it
    tuned. None when it never benchmarked."""
    timings = getattr(tuner, "configs_timings", None)
    if not isinstance(timings, dict) or not timings:
        return None
    best = getattr(tuner, "best_config", None)
    configs, chosen = [], None
    for i, (cfg, t) in enumerate(timings.items()):
        if i >= MAX_CONFIGS:
            break
        if cfg is best or (best is not None and chosen is None and cfg == best):
            chosen = i
        configs.append({"config": _config(cfg), "ms": _timings(t)})
    fn = getattr(tuner, "base_fn", None)
    return {
        "kernel": getattr(fn, "__name__", "kernel"),
        "key": [str(k) for k in (getattr(tuner, "keys", None) or [])][:16],
        "configs": configs,
        "configs_left_out": max(0, len(timings) - MAX_CONFIGS),
        "chosen": chosen,
        "bench_s": _number(getattr(tuner, "bench_time", None)),
        "keys_tuned": len(getattr(tuner, "cache", {}) or {}),
    }


def autotune_notes(objects: list[Any] | None = None) -> dict[str, str]:
    """{"autotune:<kernel>": JSON text} for every autotuner among `objects` (None: every live
    object, one walk of the garbage collector's, types only) that benchmarked."""
    try:
        from triton.runtime.autotuner import Autotuner
    except Exception:  # noqa: BLE001 - no Triton: nothing was tuned
        return {}
    if objects is None:
        import gc

        objects = [o for o in gc.get_objects() if issubclass(type(o), Autotuner)]
    out: dict[str, str] = {}
    for obj in objects:
        if not issubclass(type(obj), Autotuner):
            continue
        try:
            facts = autotune_facts(obj)
        except Exception:  # noqa: BLE001 - a note, never the program's error
            continue
        if facts is not None:
            out[f"autotune:{facts['kernel']}"] = json.dumps(
                facts, sort_keys=True, separators=(",", ":")
            )
    return out
