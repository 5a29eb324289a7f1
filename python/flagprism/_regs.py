# SPDX-License-Identifier: Apache-2.0
"""The register cap of a Debugger twin on NVIDIA GPUs (Triton's `maxnreg` option).

A twin computes statistics beside the kernel's own work, and ptxas, told only that a program has
`num_warps * 32` threads, gives each thread as many registers as it likes (up to 255). Registers
decide how many programs share an SM: an SM's 65,536 registers are split over its four
schedulers, a warp takes its registers from one of them (in steps of 8 per thread), so a
scheduler holds floor(16384 / (32 * regs)) warps. The 64M add's twin at 1 warp took 197 registers:
2 warps per scheduler, 8 programs per SM; capped at 168 it keeps 3 warps per scheduler (12 per
SM) and ran in 1.17x of the plain kernel's time instead of 1.39x (docs/benchmarks.md).

`twin_maxnreg="auto"` (the default) compiles the twin as is and reads its register count; when
fewer than MAX_OCCUPANCY of the SM's warps are resident, it caps the twin at the next occupancy
step if that step is close (at least MIN_FRACTION of the registers it took) and the capped build
spills at most MAX_EXTRA_SPILL_BYTES more per thread; otherwise the twin runs uncapped. The decision is recorded in every report (`kernel.registers`)."""

from __future__ import annotations

from typing import Any

#: Registers of an SM, its schedulers (sub-partitions) and the allocation step per thread.
REGS_PER_SM = 65536
SCHEDULERS = 4
REG_STEP = 8
#: The cap must keep at least this fraction of the registers the twin took on its own: 168 of
#: 197 (0.85) ran 1.17x; 144 (0.73) 1.33x and 128 (0.65) 1.48x, spilling (H200, 64M add twin).
MIN_FRACTION = 0.8
#: Only a twin with fewer resident warps per SM than this fraction of the SM's limit is capped:
#: the add twin at 8 of 64 warps gained (1.41x -> 1.19x), its address-only twin at 28 of 64 lost
#: (1.03x -> 1.08x capped at 64 registers) and the softmax twin at 32 of 64 did not change.
MAX_OCCUPANCY = 0.25
#: A capped build that spills more than this per thread (beyond the uncapped build's own local
#: memory) is not used.
MAX_EXTRA_SPILL_BYTES = 128

#: (max resident warps, max resident blocks) per SM by compute capability (CUDA programming
#: guide, "Technical specifications per compute capability").
_SM_LIMITS: dict[tuple[int, int], tuple[int, int]] = {
    (7, 0): (64, 32),
    (7, 2): (64, 32),
    (7, 5): (32, 16),
    (8, 0): (64, 32),
    (8, 6): (48, 16),
    (8, 7): (48, 16),
    (8, 9): (48, 24),
    (9, 0): (64, 32),
    (10, 0): (64, 32),
    (10, 3): (64, 32),
    (11, 0): (48, 24),
    (12, 0): (48, 32),
    (12, 1): (48, 32),
}


def check_setting(value: Any) -> Any:
    """A valid twin_maxnreg setting ("auto", None or an int from 16 to 255), else ValueError."""
    if value is None or value == "auto":
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 16 <= value <= 255:
        raise ValueError(
            f"twin_maxnreg must be 'auto', None or an integer from 16 to 255, not {value!r}"
        )
    return value


def _alloc(regs: int) -> int:
    return -(-regs // REG_STEP) * REG_STEP


def _per_scheduler(regs: int) -> int:
    """Warps one scheduler holds at `regs` registers per thread."""
    return (REGS_PER_SM // SCHEDULERS) // (32 * _alloc(regs))


def programs_per_sm(regs: int, warps: int, limits: tuple[int, int]) -> int:
    """Programs of `warps` warps at `regs` registers per thread that fit on one SM."""
    max_warps, max_blocks = limits
    return min(max_blocks, min(_per_scheduler(regs) * SCHEDULERS, max_warps) // warps)


def propose(regs: int, warps: int, cc: tuple[int, int]) -> tuple[int | None, str]:
    """(cap, reason): the register cap at the next occupancy step, or None and why not."""
    limits = _SM_LIMITS.get(tuple(cc))
    if limits is None:
        return (
            None,
            f"no register cap: occupancy limits of compute capability {cc[0]}.{cc[1]} not known",
        )
    now = programs_per_sm(regs, warps, limits)
    if now * warps >= MAX_OCCUPANCY * limits[0]:
        return None, (
            f"no register cap: {now * warps} of the SM's {limits[0]} warps are resident at {regs} "
            f"registers per thread"
        )
    per_sched = _per_scheduler(regs)
    # the largest cap that fits one more program per SM (several warps per scheduler more, for
    # programs of several warps)
    while True:
        per_sched += 1
        cap = (REGS_PER_SM // SCHEDULERS) // (32 * per_sched) // REG_STEP * REG_STEP
        if cap < 16:
            return (
                None,
                f"no register cap: {now} programs per SM is the SM's limit at {warps} warps",
            )
        then = programs_per_sm(cap, warps, limits)
        if then > now:
            break
        if per_sched * SCHEDULERS >= limits[0]:
            return (
                None,
                f"no register cap: {now} programs per SM is the SM's limit at {warps} warps",
            )
    if cap < MIN_FRACTION * regs:
        return None, (
            f"no register cap: the next step ({then} programs per SM) needs {cap} registers per "
            f"thread, {100 - 100 * cap // regs}% below the {regs} the twin takes"
        )
    return cap, f"{then} programs per SM instead of {now}"


#: id(uncapped compiled twin) -> (that kernel, decision): a kernel Triton already built gets the
#: decision made for it, without building the capped variant again at every launch.
_decided: dict[int, tuple[Any, dict[str, Any]]] = {}


def decide(
    jit: Any, args: tuple[Any, ...], grid: Any, kw: dict[str, Any], setting: Any, device: Any
) -> dict[str, Any] | None:
    """The twin's register decision for a launch on an NVIDIA GPU: {"cap", "uncapped", "reason"}
    (cap None: launch without one). Compiles (and loads) the twin without a cap, and with the
    proposed cap, through Triton's warmup; both builds stay in Triton's caches for the launch."""
    if "maxnreg" in kw:
        return {"cap": kw["maxnreg"], "uncapped": None, "reason": "the launch's own maxnreg"}
    if setting is None:
        return {"cap": None, "uncapped": None, "reason": "twin_maxnreg=None"}
    if isinstance(setting, int):
        return {"cap": setting, "uncapped": None, "reason": f"twin_maxnreg={setting}"}
    import torch

    def build(extra: dict[str, Any]) -> tuple[Any, int | None, int | None, int]:
        k = jit.warmup(*args, grid=grid, **kw, **extra)
        init = getattr(k, "_init_handles", None)
        if init is not None:
            init()
        regs = getattr(k, "n_regs", None)
        spills = getattr(k, "n_spills", None)  # 4-byte words of local memory per thread
        warps = getattr(getattr(k, "metadata", None), "num_warps", None) or kw.get("num_warps", 4)
        return k, regs, spills, int(warps)

    k, regs, spills, warps = build({})
    hit = _decided.get(id(k))
    if hit is not None and hit[0] is k:
        return dict(hit[1])
    decision = _decide_built(build, regs, spills, warps, torch.cuda.get_device_capability(device))
    _decided[id(k)] = (k, decision)
    return dict(decision)


def _decide_built(
    build: Any, regs: int | None, spills: int | None, warps: int, cc: tuple[int, int]
) -> dict[str, Any]:
    """decide() for a twin built without a cap (regs, spills, warps); build({"maxnreg": N})
    builds the capped variant."""
    if not regs:
        return {
            "cap": None,
            "uncapped": None,
            "reason": "no register cap: the register count is not known",
        }
    cap, why = propose(int(regs), warps, cc)
    if cap is None:
        return {"cap": None, "uncapped": int(regs), "reason": why}
    _k2, _r2, spills2, _w = build({"maxnreg": cap})
    extra = 4 * ((spills2 or 0) - (spills or 0))
    if extra > MAX_EXTRA_SPILL_BYTES:
        return {
            "cap": None,
            "uncapped": int(regs),
            "reason": f"no register cap: at {cap} registers per thread the twin spills {extra} more bytes "
            f"per thread",
        }
    return {"cap": cap, "uncapped": int(regs), "reason": why}
