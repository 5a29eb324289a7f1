# SPDX-License-Identifier: Apache-2.0
"""Every test kernel's instrumented twin compiles for a CUDA target (sm_90) without a GPU.

The Debugger's device helpers must compile on real backends, not only run on the interpreter.
Triton decides interpreter or compiler when a kernel is decorated, so the compilation runs in a
child process without TRITON_INTERPRET (and with CUDA_VISIBLE_DEVICES empty); this file is also
that child's program.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# (module, kernel, args as (kind, value) and constexprs); pointer args are given by dtype.
CASES = [
    (
        "vector_add",
        "add_kernel",
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": 1000},
        {"BLOCK": 1024},
    ),
    (
        "softmax",
        "softmax_kernel",
        {"out_ptr": "*fp32", "in_ptr": "*fp16", "in_stride": 100, "out_stride": 100, "n_cols": 100},
        {"BLOCK": 128},
    ),
    (
        "layernorm",
        "layernorm_kernel",
        {
            "x_ptr": "*bf16",
            "y_ptr": "*bf16",
            "w_ptr": "*fp32",
            "b_ptr": "*fp32",
            "stride": 300,
            "N": 300,
            "eps": 1e-5,
        },
        {"BLOCK": 128},
    ),
    (
        "matmul",
        "matmul_kernel",
        {
            "a_ptr": "*fp16",
            "b_ptr": "*fp16",
            "c_ptr": "*fp32",
            "M": 40,
            "N": 24,
            "K": 48,
            "stride_am": 48,
            "stride_ak": 1,
            "stride_bk": 24,
            "stride_bn": 1,
            "stride_cm": 24,
            "stride_cn": 1,
        },
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
    ),
    (
        "control",
        "control_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 200, "steps": 3},
        {"BLOCK": 64, "USE_HELPER": True},
    ),
    (
        "control",
        "two_regions_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 100},
        {"BLOCK": 64},
    ),
    (
        "control",
        "masked_loop_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 100},
        {"ITERS": 4, "BLOCK": 32},
    ),
    (
        "tuned",
        "heur_scale",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 300},
        {"BLOCK": 128, "EVEN": False},
    ),
    (
        "extra",
        "dtypes_kernel",
        {
            "i8_ptr": "*i8",
            "u8_ptr": "*u8",
            "i64_ptr": "*i64",
            "u64_ptr": "*u64",
            "f64_ptr": "*fp64",
            "out_ptr": "*fp32",
        },
        {"BLOCK": 64},
    ),
    (
        "extra",
        "block_ptr_kernel",
        {"a_ptr": "*fp32", "out_ptr": "*fp32", "M": 64, "N": 64},
        {"BM": 32, "BN": 32},
    ),
    (
        "extra",
        "nd_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32"},
        {"A": 2, "B": 4, "C": 8, "D": 4},
    ),
]

#: Kernels written with tl.make_block_ptr, which Triton 3.9 removed: compiled where it exists.
BLOCK_POINTER_KERNELS = frozenset({"block_ptr_kernel", "bp_rows_kernel", "attn_fwd_kernel"})

_F16 = "*fp16"
_ATTN = {
    "Q": _F16,
    "K": _F16,
    "V": _F16,
    "sm_scale": 0.5,
    "M": "*fp32",
    "Out": _F16,
    "H": 4,
    **{f"stride_{t}{d}": 64 for t in "qkvo" for d in ("z", "h", "m", "k", "n")},
}
# Kernels with helpers, block pointers, descriptors and atomics (kernels/whole.py,
# kernels/tutorial_style.py): host descriptor parameters are "tensordesc<...>", and their twins
# take the descriptor's base as `__fp_db_<name>`.
WHOLE_CASES = [
    (
        "whole",
        "helper_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 100},
        {"BLOCK": 64, "BUGGY": False},
    ),
    (
        "whole",
        "bp_rows_kernel",
        {"a_ptr": "*fp32", "out_ptr": "*fp32", "M": 10, "N": 32, "stride_m": 32},
        {"BM": 16, "BN": 32, "CHECK": True},
    ),
    (
        "whole",
        "hist_kernel",
        {"x_ptr": "*i32", "bins_ptr": "*i32", "n": 100},
        {"NB": 8, "BLOCK": 64, "RANGE_CHECK": True},
    ),
    (
        "whole",
        "host_desc_kernel",
        {
            "a_desc": "tensordesc<fp32[16,16]>",
            "out_desc": "tensordesc<fp32[16,16]>",
            "__fp_db_a_desc": "*fp32",
            "__fp_db_out_desc": "*fp32",
        },
        {"BM": 16},
    ),
    (
        "whole",
        "nan_helper_kernel",
        {"x_ptr": "*fp32", "d_ptr": "*fp32", "out_ptr": "*fp32", "n": 100},
        {"BLOCK": 64},
    ),
    (
        "whole",
        "lock_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "lock_ptr": "*i32", "n": 32},
        {"BLOCK": 32},
    ),
    (
        "whole",
        "ifexp_kernel",
        {"x_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32", "n": 50},
        {"HAS_B": True, "BLOCK": 64},
    ),
    (
        "whole",
        "dev_desc_kernel",
        {"a_ptr": "*fp32", "out_ptr": "*fp32", "M": 20, "N": 16},
        {"EXTRA": 0, "BM": 16, "BN": 16},
    ),
    (
        "whole",
        "awkward_kernel",
        {"x_ptr": "*fp32", "n_ptr": "*i32", "out_ptr": "*fp32"},
        {"BLOCK": 16},
    ),
    ("whole", "desc_atomic_kernel", {"a_ptr": "*fp32", "M": 64, "N": 32}, {"BM": 16, "BN": 32}),
    (
        "whole",
        "none_mask_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 64},
        {"EVEN": True, "BLOCK": 64},
    ),
    (
        "tutorial_style",
        "attn_fwd_kernel",
        _ATTN,
        {"N_CTX": 256, "HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32, "STAGE": 3, "OVERRUN": 0},
    ),
    (
        "tutorial_style",
        "attn_bwd_kernel",
        {
            "Q": _F16,
            "K": _F16,
            "V": _F16,
            "sm_scale": 0.5,
            "DO": _F16,
            "DQ": "*fp32",
            "DK": _F16,
            "DV": _F16,
            "M": "*fp32",
            "D": "*fp32",
            "stride_z": 64,
            "stride_h": 64,
            "stride_tok": 64,
            "stride_d": 2,
            "H": 2,
        },
        {
            "N_CTX": 128,
            "BLOCK_M1": 32,
            "BLOCK_N1": 32,
            "BLOCK_M2": 32,
            "BLOCK_N2": 32,
            "HEAD_DIM": 64,
            "OVERRUN": 0,
        },
    ),
    (
        "tutorial_style",
        "matmul_tma_persistent_kernel",
        {
            "a_desc": "tensordesc<fp16[128,64]>",
            "b_desc": "tensordesc<fp16[128,64]>",
            "c_desc": "tensordesc<fp16[128,128]>",
            "__fp_db_a_desc": _F16,
            "__fp_db_b_desc": _F16,
            "__fp_db_c_desc": _F16,
            "M": 512,
            "N": 512,
            "K": 512,
        },
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 8, "NUM_SMS": 8},
    ),
    (
        "tutorial_style",
        "layer_norm_bwd_dx_kernel",
        {
            "DX": "*fp32",
            "DY": "*fp32",
            "DW": "*fp32",
            "DB": "*fp32",
            "X": "*fp32",
            "W": "*fp32",
            "Mean": "*fp32",
            "Rstd": "*fp32",
            "Lock": "*i32",
            "stride": 512,
            "N": 512,
        },
        {"GROUP_SIZE_M": 16, "BLOCK_SIZE_N": 512, "COUNT_OFF": 0},
    ),
]


def _child(levels: list[tuple[int, int, bool, bool]], cases: list[Any]) -> int:
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from flagprism import _rewrite, compat, debugger

    sys.path.insert(0, str(HERE))
    results = []
    for mod_name, kname, args, cx in cases:
        if kname in BLOCK_POINTER_KERNELS and not compat.block_pointers():
            continue  # Triton 3.9 removed tl.make_block_ptr (row triton3.9-no-block-pointers)
        mod = importlib.import_module(f"kernels.{mod_name}")
        fn = getattr(mod, kname)
        while not isinstance(fn, triton.runtime.jit.JITFunction):
            fn = fn.fn
        for level, addr, sanitize, counts in levels:
            t0 = time.perf_counter()
            twin = _rewrite.build(
                fn, level, addr, debugger._helpers(fn, "fused", counts), sanitize=sanitize
            )
            sig = {}
            for p in twin.jit.arg_names:
                if p == _rewrite.CTX:
                    sig[p] = "*i64"
                elif p in cx:
                    sig[p] = "constexpr"
                else:
                    v = args[p]
                    sig[p] = (
                        v if isinstance(v, str) else ("fp32" if isinstance(v, float) else "i32")
                    )
            src = ASTSource(fn=twin.jit, signature=sig, constexprs=dict(cx))
            try:
                k = triton.compile(src, target=GPUTarget("cuda", 90, 32))
                ok, err = "cubin" in k.asm, ""
            except Exception as e:  # noqa: BLE001
                ok, err = False, f"{type(e).__name__}: {e}"[-2000:]
            results.append(
                {
                    "kernel": kname,
                    "level": level,
                    "addr_level": addr,
                    "sanitize": sanitize,
                    "counts": counts,
                    "ok": ok,
                    "error": err,
                    "seconds": round(time.perf_counter() - t0, 2),
                }
            )
    print(json.dumps(results))
    return 0


def _compile_in_child(which: str, levels: list[str], n_cases: int) -> None:
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["CUDA_VISIBLE_DEVICES"] = ""
    proc = subprocess.run(
        [sys.executable, __file__, which, *levels],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    bad = [r for r in results if not r["ok"]]
    assert not bad, json.dumps(bad, indent=1)
    from flagprism import compat

    if not compat.block_pointers():
        n_cases -= sum(
            1 for c in (WHOLE_CASES if which == "whole" else CASES) if c[1] in BLOCK_POINTER_KERNELS
        )
    assert len(results) == len(levels) * n_cases


def test_twins_compile_for_cuda():
    """Marker mode at levels 1 and 2, and check mode's counts-only value records (--check
    nan,inf: blocks of 1 to 4 dimensions)."""
    _compile_in_child("base", ["1,1", "2,2", "1,0,c"], len(CASES))


def test_whole_kernel_twins_compile_for_cuda():
    """Helper twins, block-pointer and descriptor shadows, atomics and the lock's `while` test
    compile (marker mode at level 1, and sanitize mode)."""
    _compile_in_child("whole", ["1,1", "0,1,s"], len(WHOLE_CASES))


if __name__ == "__main__":
    cases = WHOLE_CASES if sys.argv[1:2] == ["whole"] else CASES
    # "level,addr_level[,s|c]": s sanitize mode, c sanitize mode with counts-only value records
    lv = [
        (int(a.split(",")[0]), int(a.split(",")[1]), a.endswith((",s", ",c")), a.endswith(",c"))
        for a in sys.argv[2:]
    ] or [(1, 1, False, False)]
    sys.exit(_child(lv, cases))
