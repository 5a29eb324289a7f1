# SPDX-License-Identifier: Apache-2.0
"""A set of Debugger twins compiles, without a GPU, for every target the installed Triton can
compile for: CUDA sm_90 (warp size 32) always, and AMD gfx942 and gfx90a (wavefronts of 64)
where the wheel ships the AMD backend (flagprism.compat.backends()).

The set: add, softmax, matmul with a K loop, a @jit helper, block pointers (where the Triton
has them: compat.block_pointers()), a device-side tensor descriptor, and a mask that is a local
None (FlagGems' bmm for divisible shapes), each at level 2 with
address records and every findings check, in sanitize mode, and in check mode with every
check. The device helpers are plain triton.language, so the
same twin must compile for either warp size; only the timeline twin reads vendor clocks, and it
is compiled for the targets whose vendor has a timer flavour (_tlrecords.helpers: NVIDIA's inline
PTX, AMD's inline AMDGCN), and its assembly must read the vendor's timer at every record.

As in test_debugger_compile.py, the compile runs in a child process without TRITON_INTERPRET
(Triton chooses interpreter or compiler when a kernel is decorated); this file is also that
child's program.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent

sys.path.insert(0, str(HERE))
from test_debugger_compile import BLOCK_POINTER_KERNELS, CASES, WHOLE_CASES  # noqa: E402

#: The twins compiled per target, by kernel name: the cases test_debugger_compile.py compiles for
#: CUDA (argument types and constexprs are theirs).
_NAMES = (
    "add_kernel",
    "softmax_kernel",
    "matmul_kernel",
    "helper_kernel",
    "block_ptr_kernel",
    "dev_desc_kernel",
    "none_mask_kernel",
)
_BY_NAME = {c[1]: c for c in CASES + WHOLE_CASES}
#: (module, kernel, argument types, constexprs, needs): `needs` names a compat probe.
TWINS = [(*_BY_NAME[n], "block_pointers" if n in BLOCK_POINTER_KERNELS else None) for n in _NAMES]

#: (name, backend, arch, warp size): the targets; AMD ones only where the backend is shipped.
TARGETS = [
    ("cuda-sm90", "cuda", 90, 32),
    ("hip-gfx942", "hip", "gfx942", 64),
    ("hip-gfx90a", "hip", "gfx90a", 64),
]

#: The timeline twin's timer reads, counted in the final assembly: name -> (assembly, needle).
TIMER_READS = {
    "cuda": {
        "globaltimer": ("ptx", "%globaltimer"),
        "clock64": ("ptx", "%clock64"),
        "smid": ("ptx", "%smid"),
    },
    "hip": {
        "s_memrealtime": ("amdgcn", "s_memrealtime"),
        "s_memtime": ("amdgcn", "s_memtime"),
        "hw_id": ("amdgcn", "hwreg(HW_REG_HW_ID"),
    },
}

#: (level, addr_level, sanitize, checks): marker mode at level 2 with addresses and every findings
#: rule, sanitize mode (bounds only), and check mode with every check (nan, inf, precision and
#: domain observe values too).
_ALL = ("bounds", "nan", "inf", "precision", "domain")
MODES = [(2, 2, False, _ALL), (0, 1, True, ("bounds",)), (1, 1, True, _ALL)]


def _binary(backend: str, asm: dict) -> bool:
    if backend == "cuda":
        return "cubin" in asm
    return "hsaco" in asm and ".amdhsa_kernel" in str(asm.get("amdgcn", ""))


# Linking an AMD code object: Triton 3.9 links in-process; before, the backend runs ROCm's
# ld.lld (TRITON_HIP_LLD_PATH, the wheel's llvm/bin, /opt/rocm/llvm/bin; Debian's lld 14 is too
# old for code object v5: "unknown abi version"). Where none is there, a stand-in that copies the
# assembled object takes its place: the twin still goes through every compiler stage (TTIR,
# TTGIR, LLVM IR, AMDGCN assembly, the assembler), only the final link is not checked.
_NO_LINK_SHIM = """#!/bin/sh
# flagprism test stand-in for ld.lld: copies the object it is given (no link)
[ "$1" = --version ] && { echo "flagprism no-link stand-in"; exit 0; }
out=; src=
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift ;; -flavor) shift ;; -*) ;; *) src=$1 ;; esac
  shift
done
cp "$src" "$out"
"""


def _amd_link(tmp: Path) -> str:
    """'in-process', 'rocm' or 'stand-in' (the stand-in is installed through the environment)."""
    import triton
    from triton._C.libtriton import amd

    if hasattr(amd, "link_hsaco"):
        return "in-process"
    here = Path(triton.__file__).parent / "backends" / "amd" / "llvm" / "bin" / "ld.lld"
    for p in (os.environ.get("TRITON_HIP_LLD_PATH"), here, "/opt/rocm/llvm/bin/ld.lld"):
        if p and Path(p).is_file():
            return "rocm"
    shim = tmp / "ld.lld"
    shim.write_text(_NO_LINK_SHIM)
    shim.chmod(0o755)
    os.environ["TRITON_HIP_LLD_PATH"] = str(shim)
    return "stand-in"


def _child(target_name: str) -> int:
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from flagprism import _rewrite, _timeline, compat, debugger

    _, backend, arch, warp = next(t for t in TARGETS if t[0] == target_name)
    target = GPUTarget(backend, arch, warp)
    sys.path.insert(0, str(HERE))
    results: list[dict[str, Any]] = []
    if backend == "hip":
        import tempfile

        results.append({"kernel": "link", "skipped": _amd_link(Path(tempfile.mkdtemp()))})
    for mod_name, kname, args, cx, needs in TWINS:
        if needs and not getattr(compat, needs)():
            results.append(
                {"kernel": kname, "skipped": f"this Triton has no {needs.replace('_', ' ')}"}
            )
            continue
        fn = getattr(importlib.import_module(f"kernels.{mod_name}"), kname)
        while not isinstance(fn, triton.runtime.jit.JITFunction):
            fn = fn.fn
        for level, addr, sanitize, checks in MODES:
            t0 = time.perf_counter()
            twin = _rewrite.build(
                fn,
                level,
                addr,
                debugger._helpers(fn, "fused", False),
                sanitize=sanitize,
                rules=frozenset(checks),
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
            try:
                k = triton.compile(
                    ASTSource(fn=twin.jit, signature=sig, constexprs=dict(cx)), target=target
                )
                ok, err = _binary(backend, k.asm), ""
            except Exception as e:  # noqa: BLE001
                ok, err = False, f"{type(e).__name__}: {e}"[-2000:]
            results.append(
                {
                    "kernel": kname,
                    "level": level,
                    "sanitize": sanitize,
                    "checks": ",".join(checks),
                    "check_slots": twin.nchecks,
                    "ok": ok,
                    "error": err,
                    "seconds": round(time.perf_counter() - t0, 2),
                }
            )
    # the timeline twin, where this vendor has a timer flavour
    flavour = {"cuda": "nvidia", "hip": "amd"}[backend]
    import _tlkernels as tk

    if flavour in _timeline.device_flavours():
        sig = {
            "x_ptr": "*fp32",
            "y_ptr": "*fp32",
            "n": "i32",
            "K": "i32",
            "BLOCK": "constexpr",
            _rewrite.CTX: "*i64",
        }
        try:
            tw = _timeline.build(tk.scoped_kernel, False, flavour)
            k = triton.compile(
                ASTSource(fn=tw.jit, signature=sig, constexprs={"BLOCK": 64}), target=target
            )
            ok, err = _binary(backend, k.asm), ""
            reads = {
                name: str(k.asm.get(asm, "")).count(needle)
                for name, (asm, needle) in TIMER_READS[backend].items()
            }
        except Exception as e:  # noqa: BLE001
            ok, err, reads = False, f"{type(e).__name__}: {e}"[-2000:], {}
        results.append(
            {"kernel": "timeline:scoped_kernel", "ok": ok, "error": err, "timer_reads": reads}
        )
    else:
        results.append(
            {"kernel": "timeline:scoped_kernel", "skipped": f"no {flavour} timer flavour"}
        )
    print(json.dumps(results))
    return 0


def _available(backend: str) -> str | None:
    """Why `backend` cannot be compiled for here, or None."""
    from flagprism import compat

    have = compat.backends()
    name = {"cuda": "nvidia", "hip": "amd"}[backend]
    if name not in have:
        return f"this Triton wheel ships no {name} backend (it has: {', '.join(have) or 'none'})"
    return None


@pytest.mark.parametrize("target", [t[0] for t in TARGETS])
def test_twins_cross_compile(target: str) -> None:
    backend = next(t[1] for t in TARGETS if t[0] == target)
    why = _available(backend)
    if why:
        pytest.skip(why)
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["HIP_VISIBLE_DEVICES"] = ""
    proc = subprocess.run(
        [sys.executable, __file__, target],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0 and backend == "cuda" and "ptxas" in proc.stderr:
        pytest.skip("no ptxas to cross-compile with")
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    bad = [r for r in results if "skipped" not in r and not r["ok"]]
    assert not bad, json.dumps(bad, indent=1)
    # the twins hold their checks (the device helpers of _checks.py compile for this target)
    assert all(r["check_slots"] > 0 for r in results if "level" in r), results
    compiled = {r["kernel"] for r in results if "skipped" not in r}
    assert {
        "add_kernel",
        "softmax_kernel",
        "matmul_kernel",
        "helper_kernel",
        "dev_desc_kernel",
        "timeline:scoped_kernel",
    } <= compiled
    # 3 scopes: 6 record sites and the begin record each read the timer and the cycle counter;
    # the SM / CU id is pure, so the compiler may read it once
    reads = next(r for r in results if r["kernel"] == "timeline:scoped_kernel")["timer_reads"]
    counts = list(reads.values())
    assert counts[0] >= 7 and counts[1] >= 7 and counts[2] >= 1, reads
    print(json.dumps([r for r in results if "skipped" in r]))


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
