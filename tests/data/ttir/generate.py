# SPDX-License-Identifier: Apache-2.0
"""Regenerate the checked-in TTIR samples from kernels.py, without a GPU.

Run from anywhere with the project's virtual environment:

    CUDA_VISIBLE_DEVICES="" /work/main/.venv/bin/python tests/data/ttir/generate.py

Each kernel is cross-compiled for sm_90 with `triton.compile(ASTSource(...), target=GPUTarget(...))`
and its `asm["ttir"]` is written to tests/data/ttir/<name>.ttir (block_ptr also keeps the
pre-pass `asm["source"]` as block_ptr_source.ttir, the only stage where tt.make_tensor_ptr
survives). Locations name files by absolute path; kernels.py is rewritten to its repository-
relative path and Triton's own files to a path relative to site-packages ("triton/language/..."),
so the samples do not depend on where the checkout or the virtual environment lives. The
vector-add and matmul samples are also copied to the TTIR fuzz corpus. This script only refreshes
test data; nothing runs it at test time.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
FUZZ_CORPUS = REPO / "tests" / "fuzz" / "corpus" / "ttir"

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
sys.path.insert(0, str(HERE))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import kernels as k  # noqa: E402

P32 = "*fp32"
P16 = "*fp16"
DIV16 = [["tt.divisibility", 16]]

# name -> (kernel, signature, constexprs). Pointer arguments get tt.divisibility = 16 the way the
# JIT specialises 16-byte-aligned tensors; integer arguments stay unspecialised.
SAMPLES: dict[str, tuple[Any, dict[str, str], dict[str, Any]]] = {
    "add": (k.add_kernel,
            {"x_ptr": P32, "y_ptr": P32, "out_ptr": P32, "n_elements": "i32",
             "BLOCK": "constexpr"},
            {"BLOCK": 1024}),
    "softmax": (k.softmax_kernel,
                {"out_ptr": P32, "in_ptr": P32, "in_stride": "i32", "out_stride": "i32",
                 "n_cols": "i32", "BLOCK": "constexpr"},
                {"BLOCK": 1024}),
    "layernorm": (k.layernorm_kernel,
                  {"x_ptr": P16, "y_ptr": P32, "w_ptr": P32, "b_ptr": P32, "stride": "i32",
                   "n_cols": "i32", "eps": "fp32", "BLOCK": "constexpr"},
                  {"BLOCK": 512}),
    "matmul": (k.matmul_kernel,
               {"a_ptr": P16, "b_ptr": P16, "c_ptr": P16, "M": "i32", "N": "i32",
                "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
                "stride_cm": "i32", "stride_cn": "i32", "K": "constexpr",
                "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
               {"K": 256, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}),
    "matmul_dynk": (k.matmul_dynk_kernel,
                    {"a_ptr": P16, "b_ptr": P16, "c_ptr": P32, "K": "i32",
                     "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
                    {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}),
    "control_flow": (k.control_flow_kernel,
                     {"x_ptr": P32, "out_ptr": P32, "n": "i32", "limit": "fp32",
                      "BLOCK": "constexpr"},
                     {"BLOCK": 256}),
    "helpers": (k.helpers_kernel,
                {"x_ptr": P32, "out_ptr": P32, "n": "i32", "BLOCK": "constexpr"},
                {"BLOCK": 128}),
    "block_ptr": (k.block_ptr_kernel,
                  {"x_ptr": P32, "out_ptr": P32, "M": "i32", "N": "i32", "stride_m": "i32",
                   "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
                  {"BLOCK_M": 32, "BLOCK_N": 64}),
    "reductions": (k.reductions_kernel,
                   {"x_ptr": P32, "sum_ptr": P32, "max_ptr": P32, "argmax_ptr": "*i32",
                    "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
                   {"BLOCK_M": 16, "BLOCK_N": 64}),
    "atomics": (k.atomics_kernel,
                {"x_ptr": "*i32", "counter_ptr": "*i32", "hist_ptr": "*i32", "n": "i32",
                 "BLOCK": "constexpr"},
                {"BLOCK": 256}),
    "casts": (k.casts_kernel,
              {"x_ptr": P32, "i8_ptr": "*i8", "bf_ptr": "*bf16", "f8_ptr": "*fp8e4nv",
               "n": "i32", "BLOCK": "constexpr"},
              {"BLOCK": 256}),
    "widened": (k.widened_kernel,
                {"a_ptr": P16, "b_ptr": P16, "c_ptr": P32, "s_ptr": P32,
                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
                {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}),
}

FUZZ_SEEDS = ("add", "matmul")


# Samples that also keep the initial, pre-pass IR (asm["source"]) as <name>_source.ttir.
KEEP_SOURCE = ("block_ptr",)


def compile_asm(fn: Any, signature: dict[str, str], constexprs: dict[str, Any]) -> dict[str, str]:
    names = fn.arg_names
    attrs = {(names.index(n),): DIV16 for n, t in signature.items() if t.startswith("*")}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    return {"ttir": compiled.asm["ttir"], "source": compiled.asm["source"]}


def normalise(text: str) -> str:
    site = Path(triton.__file__).resolve().parent.parent
    text = text.replace(f'"{HERE / "kernels.py"}"', '"tests/data/ttir/kernels.py"')
    return text.replace(f'"{site}/', '"')


def write(name: str, text: str) -> None:
    (HERE / f"{name}.ttir").write_text(text)
    print(f"{name}.ttir: {len(text)} bytes")


def main() -> int:
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="fp-ttir-cache-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        for name, (fn, sig, consts) in SAMPLES.items():
            if only and name not in only:
                continue
            asm = compile_asm(fn, sig, consts)
            write(name, normalise(asm["ttir"]))
            if name in KEEP_SOURCE:
                write(f"{name}_source", normalise(asm["source"]))
            if name in FUZZ_SEEDS:
                FUZZ_CORPUS.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(HERE / f"{name}.ttir", FUZZ_CORPUS / f"{name}.ttir")
    return 0


if __name__ == "__main__":
    sys.exit(main())
