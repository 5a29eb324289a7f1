#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU cost of the Debugger's instrumented twins, measured against the uninstrumented kernels.

For each case the script launches the kernel as written and its instrumented twin (the exact
kernel the Debugger launches while active) with a record buffer sized as the Debugger sizes it,
alternating them (A B A B ...) in one process, each timed with triton.testing.do_bench
(median), and reports the median time of each and the median ratio over the rounds. Cases:
a 64M-element fp32 vector add (BLOCK 1024, level 1 + addr_level 1 over the whole body: the
issue's target is a ratio of at most 1.3), a row softmax, a matmul with a K loop, level-2 dumps,
and, where `compute-sanitizer` is on PATH, the uninstrumented add under memcheck (run in a child
process) for comparison. It also times one whole Debugger launch (twin, buffer copy back and
report) when the native report writer is available.

--variants compares several builds of the twin side by side in the same rounds (base, v1, v2,
...): `new` (this checkout), `head` (the rewriter and record helpers of another checkout, given
by --baseline-dir holding its _rewrite.py and _records.py), `new-noshare` (this checkout's
helpers under the baseline's rewriter: no shared offsets summaries, no replayed records, no
closed-form records of index arithmetic) and
`new-split` (this checkout with float min/max as separate integer reductions instead of in the
statistics' one tuple reduction). The twin runs with the warps the Debugger gives it
(`_launch.prepare` decides, `_launch.launch_kwargs` passes them: the same code path as a
Debugger launch): `new` is the default setting (twin_num_warps="auto": fewer warps than the
kernel's where its results cannot depend on them), `new-same` the twin at the kernel's own
warps, `new-wN` at N warps (where allowed); every variant takes the Debugger's register decision
(twin_maxnreg="auto": a cap at the next occupancy step, flagprism/_regs.py), a `-rN` suffix
(`new-r128`, `new-w2-r64`) caps the twin at N registers per thread instead and `-rnone` runs it
uncapped. Each row also gives the twin's registers and
spills and its warps (`twin_num_warps`, `kernel_num_warps`, `num_warps_reason`).

Instruction counts of the same twins, offline and without a GPU: bench/sass_count.py.

Output: one JSON object per line (stdout, and --out FILE), then a table. Needs a CUDA GPU.
Usage: python bench/bench_debugger.py [--rounds 5] [--quick] [--out results.jsonl]
           [--variants new,new-same,head --baseline-dir DIR] [--cases add,softmax,...]
A warp sweep of the add: --variants new-w1,new-w2,new-same,new-w8 --cases add,add_values,add_addresses
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import triton
from _debugger_bench import add_kernel, event_median_ms, load_module, matmul_kernel, softmax_kernel

from flagprism import _launch, _regs, _rewrite, debugger


def _bench(fn: Callable[[], Any]) -> float:
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


_VARIANTS: dict[str, tuple[Any, Callable[[Any], dict]]] = {}
#: the twin_num_warps setting of each variant (debugger.configure(twin_num_warps=...))
_VARIANT_WARPS: dict[str, str | int] = {}
#: the twin_maxnreg setting of each variant (default "auto"), from a -rN / -rnone suffix
_VARIANT_MAXNREG: dict[str, int | None] = {}


def _helpers_of(mod: Any) -> Callable[[Any], dict]:
    h = {
        _rewrite.H_BEGIN: mod.begin,
        _rewrite.H_VALUE: mod.value_fused,
        _rewrite.H_ADDR: mod.addr_fused,
        _rewrite.H_DESC: mod.desc_access,
    }
    # closed-form records of index arithmetic, where the module has them (a baseline may not)
    for name, fn in (
        ("H_VAFF", "value_affine_fused"),
        ("H_VCMP", "value_compare_fused"),
        ("H_ADDRC", "addr_closed_fused"),
    ):
        if hasattr(_rewrite, name) and hasattr(mod, fn):
            h[getattr(_rewrite, name)] = getattr(mod, fn)
    return lambda _fn: h


def setup_variants(names: list[str], baseline_dir: str | None) -> None:
    """Register the twin builds to compare: (rewriter module, helpers for a kernel)."""
    from flagprism import _records

    new_helpers = lambda fn: debugger._helpers(fn, "fused")  # noqa: E731
    head_rw = head_rec = None
    if any(n in ("head", "new-noshare") for n in names):
        if not baseline_dir:
            raise SystemExit("--variants head/new-noshare need --baseline-dir")
        head_rw = load_module("fp_bench_rewrite_head", os.path.join(baseline_dir, "_rewrite.py"))
        head_rec = load_module("fp_bench_records_head", os.path.join(baseline_dir, "_records.py"))
    for n in names:
        full = n
        if "-r" in n and (n.rsplit("-r", 1)[1].isdigit() or n.endswith("-rnone")):
            n, cap = n.rsplit("-r", 1)
            _VARIANT_MAXNREG[full] = None if cap == "none" else int(cap)
        if n == "new":
            _VARIANTS[full] = (_rewrite, new_helpers)
        elif n == "new-same":
            _VARIANTS[full] = (_rewrite, new_helpers)
            _VARIANT_WARPS[full] = "same"
        elif n.startswith("new-w") and n[5:].isdigit():
            _VARIANTS[full] = (_rewrite, new_helpers)
            _VARIANT_WARPS[full] = int(n[5:])
        elif n == "head":
            _VARIANTS[full] = (head_rw, _helpers_of(head_rec))
        elif n == "new-noshare":
            _VARIANTS[full] = (head_rw, new_helpers)
        elif n == "new-split":

            def split(src: str) -> str:
                assert "_ONE_TUPLE = tl.constexpr(True)" in src
                return src.replace(
                    "_ONE_TUPLE = tl.constexpr(True)", "_ONE_TUPLE = tl.constexpr(False)"
                )

            mod = load_module("fp_bench_records_split", _records.__file__, split)
            _VARIANTS[full] = (_rewrite, _helpers_of(mod))
        else:
            raise SystemExit(f"unknown variant {n!r}")


def _twin_call(
    kernel: Any,
    args: tuple,
    kwargs: dict,
    grid: tuple,
    level: int,
    addr_level: int,
    dump_capacity: int | None = None,
    variant: str = "new",
) -> tuple[Callable[[], Any], Any, dict]:
    rw, helpers = _VARIANTS[variant]
    twin = rw.build(kernel, level, addr_level, helpers(kernel))
    # the Debugger's own sizing, warp decision and launch arguments (debugger._instrumented)
    plan = _launch.prepare(
        twin,
        kernel,
        args,
        kwargs,
        grid,
        None,
        dump_capacity,
        twin_num_warps=_VARIANT_WARPS.get(variant, "auto"),
    )
    buf = plan.buffer
    plan.registers = _regs.decide(
        twin.jit,
        args,
        grid,
        _launch.launch_kwargs(plan, kwargs),
        _VARIANT_MAXNREG.get(variant, "auto"),
        torch.device("cuda"),
    )
    kw = _launch.launch_kwargs(plan, kwargs)
    resets = twin.has_dumps
    info: dict = {
        "twin_num_warps": plan.num_warps["twin"],
        "kernel_num_warps": plan.num_warps["kernel"],
        "num_warps_reason": plan.num_warps["reason"],
        "maxnreg": plan.registers.get("cap"),
        "regs_uncapped": plan.registers.get("uncapped"),
        "maxnreg_reason": plan.registers.get("reason"),
    }

    def call() -> None:
        if resets:
            buf[4:6].zero_()  # the dump cursor grows at every launch; start each one afresh
        k = twin.jit[grid](*args, **kw)
        if "n_regs" not in info and k is not None:
            info.update(
                n_regs=getattr(k, "n_regs", None),
                n_spills=getattr(k, "n_spills", None),
                compiled_num_warps=getattr(getattr(k, "metadata", None), "num_warps", None),
            )

    return call, plan, info


def compare(
    name: str,
    base: Callable[[], Any],
    insts: dict[str, Callable[[], Any]],
    rounds: int,
    extra: dict,
    infos: dict[str, dict] | None = None,
) -> list[dict]:
    """Time base and every variant in turn, `rounds` times; one row per variant."""
    base()
    for f in insts.values():
        f()
    torch.cuda.synchronize()
    tb: list[float] = []
    ti: dict[str, list[float]] = {v: [] for v in insts}
    ratios: dict[str, list[float]] = {v: [] for v in insts}
    for _ in range(rounds):
        b = _bench(base)
        tb.append(b)
        for v, f in insts.items():
            t = _bench(f)
            ti[v].append(t)
            ratios[v].append(t / b)
    rows = []
    for v in insts:
        row = {
            "case": name,
            "variant": v,
            "base_ms": statistics.median(tb),
            "instrumented_ms": statistics.median(ti[v]),
            "ratio": statistics.median(ratios[v]),
            "ratio_min": min(ratios[v]),
            "ratio_max": max(ratios[v]),
            "rounds": rounds,
        }
        row.update(extra)
        if infos and v in infos:
            row.update(infos[v])
        rows.append(row)
    return rows


def _check_add_records(
    plan: Any, x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, n: int, block: int
) -> None:
    """Spot-check the records of an add twin (level 1, addr_level 1) against the inputs, with the
    tests' reference decoder (tests/python/_refdecode.py), when it is there."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "tests", "python"))
    try:
        import _refdecode as ref
    except ImportError:
        return
    import numpy as np

    dec = ref.decode(_launch.buffer_bytes(plan), only=(0, 1, plan.programs - 1))
    xs, ys = x.cpu().numpy(), y.cpu().numpy()
    for p in (0, 1, plan.programs - 1):
        recs = [r for r in dec.records if r.program == p]
        assert len(recs) == 10, len(recs)
        offs = p * block + np.arange(block)
        mask = offs < n
        xv = np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        yv = np.where(mask, ys[np.minimum(offs, n - 1)], 0).astype(np.float32)
        ref.check_value(recs[0], np.int32(p))
        ref.check_value(recs[1], offs.astype(np.int32))
        ref.check_value(recs[2], mask)
        ref.check_addr(recs[3], 2, x.data_ptr(), offs, mask, 4, 12)
        ref.check_value(recs[4], xv)
        ref.check_addr(recs[5], 2, y.data_ptr(), offs, mask, 4, 12)
        ref.check_value(recs[6], yv)
        ref.check_value(recs[7], xv + yv)
        ref.check_addr(recs[8], 3, out.data_ptr(), offs, mask, 4, 12)
        ref.check_value(recs[9], xv + yv)


def case_add(
    n: int,
    level: int,
    addr: int,
    rounds: int,
    variants: list[str],
    dump_capacity: int | None = None,
) -> list[dict]:
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    x[1500] = float("nan")  # programs 0 and 1 take the NaN/Inf fallback (checked below)
    y[7] = float("inf")
    out = torch.empty(n, device="cuda")
    block = 1024
    grid = (triton.cdiv(n, block),)
    base = lambda: add_kernel[grid](x, y, out, n, BLOCK=block)  # noqa: E731
    insts, infos, plans = {}, {}, {}
    failed = []
    for v in variants:
        insts[v], plans[v], infos[v] = _twin_call(
            add_kernel, (x, y, out, n), {"BLOCK": block}, grid, level, addr, dump_capacity, v
        )
        out.fill_(-7.0)
        insts[v]()
        torch.cuda.synchronize()
        assert torch.equal(out, x + y) or torch.allclose(out, x + y, equal_nan=True), v
        if level == 1 and addr == 1:
            try:
                _check_add_records(plans[v], x, y, out, n, block)
                infos[v]["records_checked"] = True
            except AssertionError as e:  # report it and time the others
                failed.append({"case": f"add n={n}", "variant": v, "records_check": f"FAILED: {e}"})
                del insts[v]
    for row in failed:
        print(json.dumps(row), flush=True)
    plan = plans[variants[0]]
    if plan.arena_words:
        base_plain = base
        scratch = torch.zeros(2, dtype=torch.int64, device="cuda")

        def base() -> None:  # the same small reset as the instrumented call, for fairness
            scratch.zero_()
            base_plain()

    hdr = plan.buffer[:8].cpu().tolist()
    return compare(
        f"add n={n} level={level} addr_level={addr}",
        base,
        insts,
        rounds,
        {
            "programs": plan.programs,
            "slots": plan.slots,
            "overflow": hdr[4],
            "dump_words": plan.arena_words,
            "dump_cursor": hdr[5],
        },
        infos,
    )


def case_softmax(rows: int, cols: int, rounds: int, variants: list[str]) -> list[dict]:
    x = torch.randn(rows, cols, device="cuda")
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    grid = (rows,)
    args = (out, x, x.stride(0), out.stride(0), cols)
    base = lambda: softmax_kernel[grid](*args, BLOCK=block)  # noqa: E731
    insts, infos = {}, {}
    for v in variants:
        insts[v], plan, infos[v] = _twin_call(
            softmax_kernel, args, {"BLOCK": block}, grid, 1, 1, None, v
        )
        out.fill_(-7.0)
        insts[v]()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, torch.softmax(x, dim=1))
    return compare(
        f"softmax {rows}x{cols} level=1 addr_level=1",
        base,
        insts,
        rounds,
        {"programs": plan.programs, "slots": plan.slots},
        infos,
    )


def case_matmul(m: int, n: int, k: int, rounds: int, variants: list[str]) -> list[dict]:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    bm, bn, bk = 128, 128, 64
    grid = (m // bm, n // bn)
    args = (
        a,
        b,
        c,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
    )
    kw = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": 8, "num_stages": 3}
    base = lambda: matmul_kernel[grid](*args, **kw)  # noqa: E731
    insts, infos = {}, {}
    for v in variants:
        insts[v], plan, infos[v] = _twin_call(matmul_kernel, args, kw, grid, 1, 1, None, v)
        c.fill_(-7.0)
        insts[v]()
        torch.cuda.synchronize()
        torch.testing.assert_close(c, (a.float() @ b.float()), rtol=2e-2, atol=2e-1)
    hdr = plan.buffer[:8].cpu().tolist()
    return compare(
        f"matmul {m}x{n}x{k} fp16 level=1 addr_level=1",
        base,
        insts,
        rounds,
        {"programs": plan.programs, "slots": plan.slots, "overflow": hdr[4]},
        infos,
    )


def case_end_to_end(n: int, reps: int = 5) -> dict | None:
    """Wall time of whole Debugger launches (twin + copy back + decode and reports + the run dict),
    when reports can be written, with the native decode-and-write step timed on its own."""
    if not debugger.is_available():
        return None
    import tempfile

    x = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    grid = (triton.cdiv(n, 1024),)
    native: list[float] = []
    report_fn = debugger._report_fn

    def timed_report(*a: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return report_fn(*a)
        finally:
            native.append(time.perf_counter() - t0)

    debugger._report_fn = timed_report
    try:
        with tempfile.TemporaryDirectory() as d:
            debugger.configure(output_dir=d)
            debugger.activate()
            add_kernel[grid](x, x, out, n, BLOCK=1024)  # compile
            runs = debugger.take_exported_runs()
            sizes = {
                k: os.path.getsize(runs[0][k]) for k in ("txt", "json") if runs and runs[0].get(k)
            }
            native.clear()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(reps):
                add_kernel[grid](x, x, out, n, BLOCK=1024)
                debugger.clear_exported_runs()
            dt = (time.perf_counter() - t) / reps
            debugger.deactivate()
            debugger.clear_exported_runs()
    finally:
        debugger._report_fn = report_fn
    return {
        "case": f"debugger launch end to end n={n}",
        "seconds_per_launch": dt,
        "native_decode_and_write_s": statistics.median(native) if native else None,
        "report_bytes": sizes,
        "reps": reps,
    }


def _child_plain_add(n: int) -> None:
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    grid = (triton.cdiv(n, 1024),)
    ms = event_median_ms(lambda: add_kernel[grid](x, y, out, n, BLOCK=1024))
    print(json.dumps({"memcheck_ms": ms}))


def case_sanitizer(n: int, base_ms: float | None) -> dict | None:
    exe = shutil.which("compute-sanitizer")
    if exe is None:
        return {"case": "compute-sanitizer memcheck", "skipped": "compute-sanitizer is not on PATH"}
    cmd = [
        exe,
        "--tool",
        "memcheck",
        sys.executable,
        os.path.abspath(__file__),
        "--child-plain-add",
        str(n),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"case": "compute-sanitizer memcheck", "skipped": "timed out after 600 s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            ms = json.loads(line)["memcheck_ms"]
            row = {
                "case": f"uninstrumented add under compute-sanitizer memcheck n={n}",
                "memcheck_ms": ms,
            }
            if base_ms:
                row["ratio_vs_plain"] = ms / base_ms
            return row
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return {
        "case": "compute-sanitizer memcheck",
        "skipped": f"did not run (rc {proc.returncode}): {' | '.join(tail)}",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--rounds", type=int, default=None, help="timing rounds (default 5; 3 with --quick)"
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the 64M add and level 2 as in full mode, smaller softmax/matmul, 3 rounds",
    )
    ap.add_argument(
        "--out",
        help="also append the JSON lines to this file (or to bench_debugger.jsonl in "
        "this directory)",
    )
    ap.add_argument("--child-plain-add", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument(
        "--variants",
        default="new,new-same",
        help="comma-separated twin builds to compare (see the top)",
    )
    ap.add_argument(
        "--baseline-dir", help="directory with the baseline's _rewrite.py and _records.py"
    )
    ap.add_argument(
        "--cases",
        default="add,add_values,add_addresses,add_small,softmax,matmul,level2,end_to_end,end_to_end_64m",
        help="comma-separated cases to run",
    )
    ap.add_argument(
        "--all-variants-for",
        default="add",
        help="cases that get every variant (the others get the first two)",
    )
    args = ap.parse_args()
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    if args.child_plain_add:
        _child_plain_add(args.child_plain_add)
        return 0
    if not torch.cuda.is_available():
        print("bench_debugger: needs a CUDA GPU", file=sys.stderr)
        return 77
    variants = [v for v in args.variants.split(",") if v]
    setup_variants(variants, args.baseline_dir)
    cases = set(args.cases.split(","))
    full = set(args.all_variants_for.split(","))
    few = variants[:2]
    n = 1 << 26  # the case: 64M fp32 elements (quick mode too: it is the target)
    rows: list[dict] = []

    def emit(row: dict | list[dict] | None) -> None:
        if row is None:
            return
        for r in row if isinstance(row, list) else [row]:
            rows.append(r)
            line = json.dumps(r)
            print(line, flush=True)
            if args.out:
                path = (
                    os.path.join(args.out, "bench_debugger.jsonl")
                    if os.path.isdir(args.out)
                    else args.out
                )
                with open(path, "a") as f:
                    f.write(line + "\n")

    def pick(case: str) -> list[str]:
        return variants if case in full else few

    emit(
        {
            "case": "environment",
            "gpu": torch.cuda.get_device_name(),
            "triton": triton.__version__,
            "torch": torch.__version__,
            "variants": variants,
        }
    )
    add = None
    if "add" in cases:
        add = case_add(n, 1, 1, args.rounds, pick("add"))
        emit(add)
    if "add_values" in cases:
        emit(case_add(n, 1, 0, args.rounds, pick("add_values")))
    if "add_addresses" in cases:
        emit(case_add(n, 0, 1, args.rounds, pick("add_addresses")))
    if "add_small" in cases and not args.quick:
        emit(case_add(1 << 22, 1, 1, args.rounds, pick("add_small")))
    if "softmax" in cases:
        emit(case_softmax(4096 if args.quick else 32768, 1024, args.rounds, pick("softmax")))
    if "matmul" in cases:
        emit(
            case_matmul(1024, 1024, 1024, args.rounds, pick("matmul"))
            if args.quick
            else case_matmul(4096, 4096, 4096, args.rounds, pick("matmul"))
        )
    n2 = 1 << 22
    if "level2" in cases:
        emit(
            case_add(n2, 2, 2, args.rounds, pick("level2"), dump_capacity=(n2 // 1024) * 10 * 1024)
        )
    if "end_to_end" in cases:
        emit(case_end_to_end(n2))
    if "end_to_end_64m" in cases:  # the launch: 65,536 programs, reports of ~100 MB
        emit(case_end_to_end(n, reps=2))
    if not args.no_sanitizer and add:
        emit(case_sanitizer(n, add[0]["base_ms"]))

    print()
    print(
        f"{'case':50} {'variant':12} {'base ms':>9} {'instr ms':>9} {'ratio':>7} {'regs':>5} {'warps':>5}"
    )
    for r in rows:
        if "ratio" in r:
            warps = f"{r.get('kernel_num_warps', '')}>{r.get('twin_num_warps', '')}"
            print(
                f"{r['case']:50} {r.get('variant', ''):12} {r['base_ms']:9.4f} {r['instrumented_ms']:9.4f} "
                f"{r['ratio']:7.3f} {str(r.get('n_regs', '')):>5} {warps:>5}"
            )
        elif "memcheck_ms" in r:
            print(
                f"{r['case']:63} {'':9} {r['memcheck_ms']:9.4f} {r.get('ratio_vs_plain', 0):7.2f}"
            )
        elif "seconds_per_launch" in r:
            nat = r.get("native_decode_and_write_s")
            nat_s = f" (decode and reports in C: {nat * 1e3:.0f} ms)" if nat is not None else ""
            print(f"{r['case']:63} {r['seconds_per_launch'] * 1e3:9.2f} ms per launch{nat_s}")
        elif "skipped" in r:
            print(f"{r['case']:63} skipped: {r['skipped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
