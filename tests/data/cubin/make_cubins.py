# SPDX-License-Identifier: Apache-2.0
"""Regenerate the cubins of tests/data/cubin/ (no GPU needed: Triton compiles for sm_90).

python tests/data/cubin/make_cubins.py  (then TRITON_DISABLE_LINE_INFO=1 ... --nolines)
Also writes <name>.lines.txt, "offset line" per SASS instruction, from nvdisasm -g: the
independent reference that tests/unit/test-cubin-lines.c checks the decoder against.
"""

import os
import re
import subprocess
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def hot_loop(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    acc = x
    for i in range(ITERS):
        acc = acc * 1.0001 + 0.5
        acc = tl.sqrt(acc * acc + 1.0)
    tl.store(y_ptr + offs, acc, mask=m)


@triton.jit
def add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def nvdisasm_lines(path: str) -> str:
    tool = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    out = subprocess.run([tool, "-g", "-c", path], check=True, capture_output=True, text=True)
    rows, line = [], 0
    for t in out.stdout.splitlines():
        m = re.search(r'//## File ".*", line (\d+)', t)
        if m:
            line = int(m.group(1))
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s", t)
        if m:
            rows.append(f"{int(m.group(1), 16)} {line}")
    return "\n".join(rows) + "\n"


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    target = GPUTarget("cuda", 90, 32)
    nolines = "--nolines" in sys.argv
    kernels = [
        ("hot_loop", hot_loop, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32",
                                "ITERS": "constexpr", "BLOCK": "constexpr"},
         {"ITERS": 64, "BLOCK": 1024}),
        ("add", add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "n": "i32",
                      "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    ]
    for name, fn, sig, consts in kernels:
        if nolines and name != "add":
            continue
        k = triton.compile(ASTSource(fn, sig, consts), target=target)
        base = os.path.join(here, name + ("_nolines" if nolines else ""))
        with open(base + ".cubin", "wb") as f:
            f.write(k.asm["cubin"])
        if not nolines:
            with open(base + ".lines.txt", "w") as f:
                f.write(nvdisasm_lines(base + ".cubin"))


if __name__ == "__main__":
    main()
