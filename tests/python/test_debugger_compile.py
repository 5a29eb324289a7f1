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


HERE = Path(__file__).resolve().parent

# (module, kernel, args as (kind, value) and constexprs); pointer args are given by dtype.
CASES = [
    ("vector_add", "add_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": 1000},
     {"BLOCK": 1024}),
    ("softmax", "softmax_kernel", {"out_ptr": "*fp32", "in_ptr": "*fp16", "in_stride": 100, "out_stride": 100,
                                   "n_cols": 100}, {"BLOCK": 128}),
    ("layernorm", "layernorm_kernel", {"x_ptr": "*bf16", "y_ptr": "*bf16", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                       "stride": 300, "N": 300, "eps": 1e-5}, {"BLOCK": 128}),
    ("matmul", "matmul_kernel", {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": 40, "N": 24, "K": 48,
                                 "stride_am": 48, "stride_ak": 1, "stride_bk": 24, "stride_bn": 1, "stride_cm": 24,
                                 "stride_cn": 1}, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}),
    ("control", "control_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 200, "steps": 3},
     {"BLOCK": 64, "USE_HELPER": True}),
    ("control", "two_regions_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 100}, {"BLOCK": 64}),
    ("control", "masked_loop_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 100}, {"ITERS": 4, "BLOCK": 32}),
    ("tuned", "heur_scale", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": 300}, {"BLOCK": 128, "EVEN": False}),
    ("extra", "dtypes_kernel", {"i8_ptr": "*i8", "u8_ptr": "*u8", "i64_ptr": "*i64", "u64_ptr": "*u64",
                                "f64_ptr": "*fp64", "out_ptr": "*fp32"}, {"BLOCK": 64}),
    ("extra", "block_ptr_kernel", {"a_ptr": "*fp32", "out_ptr": "*fp32", "M": 64, "N": 64},
     {"BM": 32, "BN": 32}),
    ("extra", "nd_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"A": 2, "B": 4, "C": 8, "D": 4}),
]


def _child(levels: list[tuple[int, int]]) -> int:
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from flagprism import _rewrite, debugger

    sys.path.insert(0, str(HERE))
    results = []
    for mod_name, kname, args, cx in CASES:
        mod = importlib.import_module(f"kernels.{mod_name}")
        fn = getattr(mod, kname)
        while not isinstance(fn, triton.runtime.jit.JITFunction):
            fn = fn.fn
        for level, addr in levels:
            t0 = time.perf_counter()
            twin = _rewrite.build(fn, level, addr, debugger._helpers(fn, "fused"))
            sig = {}
            for p in twin.jit.arg_names:
                if p == _rewrite.CTX:
                    sig[p] = "*i64"
                elif p in cx:
                    sig[p] = "constexpr"
                else:
                    v = args[p]
                    sig[p] = v if isinstance(v, str) else ("fp32" if isinstance(v, float) else "i32")
            src = ASTSource(fn=twin.jit, signature=sig, constexprs=dict(cx))
            try:
                k = triton.compile(src, target=GPUTarget("cuda", 90, 32))
                ok, err = "cubin" in k.asm, ""
            except Exception as e:  # noqa: BLE001
                ok, err = False, f"{type(e).__name__}: {e}"[-2000:]
            results.append({"kernel": kname, "level": level, "addr_level": addr, "ok": ok, "error": err,
                            "seconds": round(time.perf_counter() - t0, 2)})
    print(json.dumps(results))
    return 0


def test_twins_compile_for_cuda():
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["CUDA_VISIBLE_DEVICES"] = ""
    proc = subprocess.run([sys.executable, __file__, "1,1", "2,2"], env=env, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    bad = [r for r in results if not r["ok"]]
    assert not bad, json.dumps(bad, indent=1)
    assert len(results) == 2 * len(CASES)


if __name__ == "__main__":
    lv = [tuple(int(x) for x in a.split(",")) for a in sys.argv[1:]] or [(1, 1)]
    sys.exit(_child(lv))
