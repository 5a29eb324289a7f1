#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Offline SASS counts of the Debugger's instrumented twins (no GPU needed).

Triton 3.6 compiles for a CUDA target without a GPU; this script builds the twin the Debugger
would launch for the benchmark kernels of bench/bench_debugger.py (from bench/_debugger_bench.py,
which needs neither torch nor a GPU), compiles it for sm_90 with the launch's
specialisation (16-byte aligned pointers, sizes divisible by 16), disassembles the cubin with the
cuobjdump/nvdisasm shipped in the Triton wheel and counts instructions.

Two counts per kernel: `static` is every instruction of the function; `hot` is the same twin
compiled with the record helpers' rare fallbacks removed (the float NaN/Inf recomputation and
the 4 GiB-straddling address path become dead code), which for a kernel without loops is the
number of instructions one thread issues on the common path (what docs/benchmarks.md calls
"instructions per thread"). Also: warp shuffles (SHFL), REDUX, barriers (BAR), fp64 adds/FMAs
(DADD/DFMA/DMUL), conversions to fp64 (F2F.F64/I2F.F64), registers and spills, and the predicted
ratio max(1, hot * warps / (657 * 4)) (657 instructions per thread of a 4-warp program fit in
the uninstrumented 64M add's time at one instruction per clock per scheduler on an H200;
docs/benchmarks.md; a twin of w warps issues hot * w warp instructions per program).

The twin is compiled with the warps the Debugger gives it (--num-warps auto, the default: the
decision of flagprism._warps for the case's num_warps and constexprs, as a Debugger launch makes
it), or with the case's own (--num-warps same), or with N (--num-warps N, where allowed); the
`warps` column says which. The uninstrumented kernel keeps the case's warps.

Usage:
  python bench/sass_count.py [--baseline-dir DIR] [--cases add,softmax,matmul,attn] [--modes 1:1,0:1]
                             [--num-warps auto|same|N]
DIR holds a baseline's _rewrite.py and _records.py (e.g. `git show HEAD:python/flagprism/_records.py`).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

os.environ.pop("TRITON_INTERPRET", None)

import triton  # noqa: E402
from _debugger_bench import add_kernel, load_module, matmul_kernel, softmax_kernel  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from flagprism import _records, _rewrite, _warps  # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
BASE_INSTR = 657  # per thread in the uninstrumented 64M add's time (docs/benchmarks.md)


# name -> (kernel, signature, constexprs, 16-divisible argument names, num_warps, num_stages)
CASES: dict[str, tuple[Any, dict[str, str], dict[str, Any], list[str], int, int]] = {
    "add": (
        add_kernel,
        {
            "x_ptr": "*fp32",
            "y_ptr": "*fp32",
            "out_ptr": "*fp32",
            "n_elements": "i32",
            "BLOCK": "constexpr",
        },
        {"BLOCK": 1024},
        ["x_ptr", "y_ptr", "out_ptr", "n_elements"],
        4,
        3,
    ),
    "softmax": (
        softmax_kernel,
        {
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "in_stride": "i32",
            "out_stride": "i32",
            "n_cols": "i32",
            "BLOCK": "constexpr",
        },
        {"BLOCK": 1024},
        ["out_ptr", "in_ptr", "in_stride", "out_stride", "n_cols"],
        4,
        3,
    ),
    "matmul": (
        matmul_kernel,
        {
            "a_ptr": "*fp16",
            "b_ptr": "*fp16",
            "c_ptr": "*fp32",
            "M": "i32",
            "N": "i32",
            "K": "i32",
            "stride_am": "i32",
            "stride_ak": "constexpr",
            "stride_bk": "i32",
            "stride_bn": "constexpr",
            "stride_cm": "i32",
            "stride_cn": "constexpr",
            "BLOCK_M": "constexpr",
            "BLOCK_N": "constexpr",
            "BLOCK_K": "constexpr",
        },
        {
            "stride_ak": 1,
            "stride_bn": 1,
            "stride_cn": 1,
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
        },
        ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"],
        8,
        3,
    ),
}


def _hot(src: str) -> str:
    """The record helpers without their rare fallbacks (dead code after this patch)."""
    out = src.replace("            if not ok:\n", "            if False:\n")
    out = out.replace("            if (hmn == hmx) | (cnt == 0):\n", "            if True:\n")
    return out


def _helpers(mod: Any, rw: Any) -> dict[str, Any]:
    h = {
        rw.H_BEGIN: mod.begin,
        rw.H_VALUE: mod.value_fused,
        rw.H_ADDR: mod.addr_fused,
        rw.H_DESC: mod.desc_access,
    }
    for attr, fn in (
        ("H_VAFF", "value_affine_fused"),
        ("H_VCMP", "value_compare_fused"),
        ("H_ADDRC", "addr_closed_fused"),
        ("H_BPMAKE", "bp_make"),
        ("H_BPADV", "bp_advance"),
        ("H_BPADDR", "bp_addr_fused"),
        ("H_DESCADDR", "desc_addr_fused"),
        ("H_DESCGATHER", "desc_gather_fused"),
        ("H_DEXT", "desc_extent_fused"),
        ("H_MAND", "mask_and"),
    ):
        if hasattr(rw, attr) and hasattr(mod, fn):
            h[getattr(rw, attr)] = getattr(mod, fn)
    return h


def _compile(
    fn: Any,
    sig: dict[str, str],
    consts: dict[str, Any],
    div16: list[str],
    warps: int,
    stages: int,
    twin: bool,
) -> Any:
    sig = dict(sig)
    if twin:
        sig[_rewrite.CTX] = "*i64"
        div16 = div16 + [_rewrite.CTX]
    names = list(sig)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in div16}
    src = ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    return triton.compile(
        src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages}
    )


def _sass(cubin: bytes) -> tuple[list[str], int, int]:
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        text = subprocess.run(
            [os.path.join(BIN, "cuobjdump"), "-sass", path],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        res = subprocess.run(
            [os.path.join(BIN, "cuobjdump"), "-res-usage", path],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        os.unlink(path)
    ins = []
    for line in text.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if m:
            ins.append(m.group(1))
    regs = re.search(r"REG:(\d+)", res)
    stack = re.search(r"STACK:(\d+)", res)
    return ins, int(regs.group(1)) if regs else -1, int(stack.group(1)) if stack else -1


def _opcode(i: str) -> str:
    i = re.sub(r"^@!?U?P[T0-9]\s+", "", i.strip())
    return i.split()[0] if i else ""


def count(ins: list[str]) -> dict[str, int]:
    ops = [_opcode(i) for i in ins]
    ops = [o for o in ops if o and o != "NOP"]
    c = {"instr": len(ops)}
    c["shfl"] = sum(o.startswith("SHFL") for o in ops)
    c["redux"] = sum(o.startswith("REDUX") for o in ops)
    c["bar"] = sum(o.startswith("BAR") for o in ops)
    c["fp64"] = sum(o.split(".")[0] in ("DADD", "DFMA", "DMUL") for o in ops)
    c["cvt64"] = sum((o.startswith("F2F.F64") or o.startswith("I2F.F64")) for o in ops)
    c["stl"] = sum(o.startswith("STL") for o in ops)  # register spills (local stores)
    c["ldl"] = sum(o.startswith("LDL") for o in ops)
    return c


def _attn_case() -> tuple[Any, dict[str, str], dict[str, Any], list[str], int, int]:
    """The tutorial-style attention forward of bench/bench_whole.py --quick (block pointers, the
    K/V loop in a helper; N_CTX 1024, HEAD_DIM 64, BLOCK_M 128, BLOCK_N 64, fp16, 4 warps, 2
    stages). Imported on demand: tests/python/kernels/tutorial_style.py needs torch."""
    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python")
    )
    from kernels import tutorial_style

    fn = tutorial_style.attn_fwd_kernel
    consts = {
        "N_CTX": 1024,
        "HEAD_DIM": 64,
        "BLOCK_M": 128,
        "BLOCK_N": 64,
        "STAGE": 1,
        "OVERRUN": 0,
    }
    sig: dict[str, str] = {}
    for n in fn.arg_names:
        if n in consts:
            sig[n] = "constexpr"
        elif n in ("Q", "K", "V", "Out"):
            sig[n] = "*fp16"
        elif n == "M":
            sig[n] = "*fp32"
        else:
            sig[n] = "fp32" if n == "sm_scale" else "i32"
    div16 = [n for n, t in sig.items() if t not in ("constexpr", "fp32")]
    return fn, sig, consts, div16, 4, 2


def measure(
    case: str,
    level: int,
    addr: int,
    rw: Any,
    rec: Any,
    hot_rec: Any,
    twin: bool = True,
    twin_num_warps: str | int = "auto",
) -> dict:
    if case == "attn" and case not in CASES:
        CASES[case] = _attn_case()
    kern, sig, consts, div16, warps, stages = CASES[case]
    row: dict[str, Any] = {"case": case, "level": level, "addr_level": addr, "warps": warps}
    if not twin:
        k = _compile(kern, sig, consts, div16, warps, stages, False)
        ins, regs, stack = _sass(k.asm["cubin"])
        row.update(count(ins), regs=regs, stack=stack)
        return row
    warps = _warps.decide(kern, warps, dict(consts), twin_num_warps)["twin"]
    row["warps"] = warps
    t = rw.build(kern, level, addr, _helpers(rec, rw))
    k = _compile(t.jit, sig, consts, div16, warps, stages, True)
    ins, regs, stack = _sass(k.asm["cubin"])
    row.update({f"static_{a}": b for a, b in count(ins).items()}, regs=regs, stack=stack)
    th = rw.build(kern, level, addr, _helpers(hot_rec, rw))
    kh = _compile(th.jit, sig, consts, div16, warps, stages, True)
    insh, _r, _s = _sass(kh.asm["cubin"])
    row.update(count(insh))
    row["predicted_ratio"] = round(max(1.0, row["instr"] * warps / (BASE_INSTR * 4)), 2)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--baseline-dir", help="directory with a baseline's _rewrite.py and _records.py"
    )
    ap.add_argument("--cases", default="add,softmax,matmul")
    ap.add_argument(
        "--modes",
        default="1:1,0:1,1:0,2:2",
        help="level:addr_level pairs (add only for the others)",
    )
    ap.add_argument(
        "--num-warps",
        default="auto",
        help="warps of the twin: auto (the Debugger's decision), same (the case's), or N",
    )
    args = ap.parse_args()
    tw: str | int = int(args.num_warps) if args.num_warps.isdigit() else args.num_warps
    try:
        tw = _warps.check_setting(tw)
    except ValueError as e:
        ap.error(str(e))
    variants: list[tuple[str, Any, Any, Any]] = []
    if args.baseline_dir:
        rw0 = load_module("fp_sass_rewrite_base", os.path.join(args.baseline_dir, "_rewrite.py"))
        rec0 = load_module("fp_sass_records_base", os.path.join(args.baseline_dir, "_records.py"))
        hot0 = load_module(
            "fp_sass_records_base_hot", os.path.join(args.baseline_dir, "_records.py"), _hot
        )
        variants.append(("baseline", rw0, rec0, hot0))
    hot = load_module("fp_sass_records_hot", _records.__file__, _hot)
    variants.append(("new", _rewrite, _records, hot))
    modes = [tuple(int(x) for x in m.split(":")) for m in args.modes.split(",")]
    cols = [
        "warps",
        "instr",
        "shfl",
        "redux",
        "bar",
        "fp64",
        "cvt64",
        "static_instr",
        "static_stl",
        "stl",
        "regs",
        "stack",
        "predicted_ratio",
    ]
    print("| case | level | addr | variant | " + " | ".join(cols) + " |")
    print("|---|---:|---:|---|" + "---:|" * len(cols))
    for case in args.cases.split(","):
        base = measure(case, 0, 0, None, None, None, twin=False)
        print(
            f"| {case} | - | - | uninstrumented | "
            + " | ".join(str(base.get(c, "")) for c in cols)
            + " |",
            flush=True,
        )
        for level, addr in modes:
            if case != "add" and (level, addr) != (1, 1):
                continue
            for name, rw, rec, hrec in variants:
                row = measure(case, level, addr, rw, rec, hrec, twin_num_warps=tw)
                print(
                    f"| {case} | {level} | {addr} | {name} | "
                    + " | ".join(str(row.get(c, "")) for c in cols)
                    + " |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
