# SPDX-License-Identifier: Apache-2.0
"""Triton-Ascend: how far kernels written in its tutorials' style, and the Debugger's twins of
them, get through its compiler stages on a machine without an NPU or CANN, and what FlagPrism's
compatibility layer does with its Triton (3.2 base). Runs only where the installed ``triton``
package is Triton-Ascend's (flagprism.compat.triton_vendor(): scripts/ascend.sh makes such an
environment under .cache/ascend/, CI runs it); skipped elsewhere with the reason.

Triton-Ascend's stages (triton/backends/ascend/compiler.py), each asserted:
* target ``npu``: ``ttir`` (Triton's own passes), ``ttadapter`` (the bundled triton-adapter-opt:
  Triton IR to Linalg), ``npubin`` (CANN's ``bishengir-compile``, not in the wheel: the test stops
  there and says "stopped here: needs CANN's bishengir-compile", unless it is on PATH);
* target ``cpu``: ``ttir``, ``ttadapter``, ``llir`` (MLIR_ROOT's mlir-opt), ``cpuasm`` (LLVM_ROOT's
  llc). In triton-ascend 3.2.0 this path stops before ``llir`` for every kernel, the plain ones
  too: its CPU options lack fields the code generator and ``ttadapter`` read
  ('sanitize_overflow', 'enable_nd2nz_on_vector'); and
  its CPU launcher is an empty template, so nothing could run there anyway.

The twins (level 1, level 2, check mode with every check, sanitize mode) stop before ``ttir``,
in the code generator: Triton 3.2's language has no tuple values, which the device helpers use,
and Triton-Ascend's `|`/`&`/`^` reject a Python int on the left, which they also do (known-bad
row triton-ascend3.2-no-tuple-values). The test asserts exactly that while the
language lacks them (compat.tuple_values()), and that the twins go through ``ttir`` and
``ttadapter`` like the kernels once it has them. As in test_cross_compile.py, compiling runs in a
child process without TRITON_INTERPRET; this file is also that child's program.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent

#: (kernel, argument types, constexprs) of kernels/ascend_style.py.
KERNELS = [
    (
        "asc_add_kernel",
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
        {"NUM_CORES": 20, "BLOCK": 1024},
    ),
    (
        "asc_softmax_kernel",
        {
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "in_stride": "i32",
            "out_stride": "i32",
            "n_rows": "i32",
            "n_cols": "i32",
        },
        {"NUM_CORES": 20, "BLOCK": 128},
    ),
    (
        "asc_layer_norm_kernel",
        {
            "x_ptr": "*fp32",
            "y_ptr": "*fp32",
            "w_ptr": "*fp32",
            "b_ptr": "*fp32",
            "mean_ptr": "*fp32",
            "rstd_ptr": "*fp32",
            "stride": "i32",
            "n_rows": "i32",
            "N": "i32",
            "eps": "fp32",
        },
        {"NUM_CORES": 20, "BLOCK": 256},
    ),
    (
        "asc_matmul_kernel",
        {
            "a_ptr": "*fp16",
            "b_ptr": "*fp16",
            "c_ptr": "*fp32",
            **{p: "i32" for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk")},
            **{p: "i32" for p in ("stride_bn", "stride_cm", "stride_cn")},
        },
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
    ),
    (
        "asc_attn_fwd_kernel",
        {
            "Q": "*fp16",
            "K": "*fp16",
            "V": "*fp16",
            "Out": "*fp16",
            "sm_scale": "fp32",
            "stride_m": "i32",
            "stride_d": "i32",
        },
        {"N_CTX": 128, "HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32},
    ),
    (
        "asc_hist_kernel",
        {"x_ptr": "*i32", "bins_ptr": "*i32", "n": "i32"},
        {"NB": 8, "NUM_CORES": 20, "BLOCK": 256},
    ),
]

_ALL = ("bounds", "nan", "inf", "precision", "domain")
#: name -> (level, addr_level, sanitize, checks), or None for the kernel itself.
MODES: dict[str, tuple[int, int, bool, tuple[str, ...]] | None] = {
    "kernel": None,
    "level1": (1, 1, False, ()),
    "level2": (2, 2, False, ()),
    "check": (1, 1, True, _ALL),
    "sanitize": (0, 1, True, ("bounds",)),
}

NPU = ("npu", "Ascend910B3", 0)
CPU = ("cpu", "x86", 0)
CANN_STOP = "stopped here: needs CANN's bishengir-compile"


def _why_not_ascend() -> str | None:
    from flagprism import compat

    if compat.triton_vendor() != "ascend":
        return (
            "the installed triton is not Triton-Ascend's (no ascend backend): run "
            "scripts/ascend.sh, which makes a triton-ascend environment under .cache/ascend/"
        )
    return None


def _have_cann() -> bool:
    return shutil.which("bishengir-compile") is not None and bool(
        os.environ.get("ASCEND_HOME_PATH")
    )


def _run_stages(src: Any, target: Any) -> list[dict[str, Any]]:
    """triton.compile's pipeline (Triton-Ascend 3.2's compile()), one stage at a time: the code
    generator ("source"), then every stage the backend adds, each recorded as ok (with the size
    of what it made), failed (the error) or stopped (why it cannot run here)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    from flagprism import compat

    out: list[dict[str, Any]] = []
    backend = make_backend(target)
    options = backend.parse_options({})
    metadata = {"hash": src.hash(), "target": target, **options.__dict__}
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        module = compat.make_ir(
            src,
            target,
            options,
            backend.get_codegen_implementation(),
            backend.get_module_map(),
            context,
        )
    except Exception as e:  # noqa: BLE001
        out.append({"stage": "source", "ok": False, "error": _inner(e)})
        return out
    out.append({"stage": "source", "ok": True})
    stages: dict[str, Any] = {}
    backend.add_stages(stages, options)
    for name, fn in stages.items():
        if name == "npubin" and not _have_cann():
            out.append({"stage": name, "stopped": CANN_STOP})
            break
        if name == "llir" and not os.environ.get("MLIR_ROOT"):
            out.append({"stage": name, "stopped": "stopped here: needs MLIR_ROOT's mlir-opt"})
            break
        try:
            module = fn(module, metadata)
        except Exception as e:  # noqa: BLE001
            detail = getattr(e, "stderr", None)
            err = detail.decode(errors="replace")[-600:] if isinstance(detail, bytes) else ""
            out.append({"stage": name, "ok": False, "error": err or _inner(e)})
            break
        text = module if isinstance(module, (str, bytes)) else str(module)
        out.append({"stage": name, "ok": True, "size": len(text), "head": str(text)[:4000]})
    return out


def _inner(e: BaseException) -> str:
    """The innermost cause's message (the code generator wraps each call level's error)."""
    while (e.__cause__ or e.__context__) is not None:
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
    return f"{type(e).__name__}: {str(e)[:400]}"


def _child() -> int:
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget

    from flagprism import _rewrite, compat, debugger

    sys.path.insert(0, str(HERE))
    mod = importlib.import_module("kernels.ascend_style")
    results: list[dict[str, Any]] = []
    for kname, args, cx in KERNELS:
        fn = getattr(mod, kname)
        for mode, spec in MODES.items():
            t0 = time.perf_counter()
            row: dict[str, Any] = {"kernel": kname, "mode": mode, "target": "npu"}
            jf, nchecks = fn, None
            if spec is not None:
                level, addr, sanitize, checks = spec
                twin = _rewrite.build(
                    fn,
                    level,
                    addr,
                    debugger._helpers(fn, "fused", False),
                    sanitize=sanitize,
                    rules=frozenset(checks),
                )
                jf, nchecks = twin.jit, twin.nchecks
            sig = {
                p: ("*i64" if p == _rewrite.CTX else args.get(p, "constexpr")) for p in jf.arg_names
            }
            row["stages"] = _run_stages(compat.ast_source(jf, sig, cx), GPUTarget(*NPU))
            row["check_slots"] = nchecks
            row["seconds"] = round(time.perf_counter() - t0, 2)
            results.append(row)
    # the CPU path, with the plain vector add
    kname, args, cx = KERNELS[0]
    sig = {p: args.get(p, "constexpr") for p in getattr(mod, kname).arg_names}
    results.append(
        {
            "kernel": kname,
            "mode": "kernel",
            "target": "cpu",
            "stages": _run_stages(compat.ast_source(getattr(mod, kname), sig, cx), GPUTarget(*CPU)),
        }
    )
    # an intra-kernel timeline record's clock read (inline assembly)
    results.append(
        {
            "kernel": "asc_timer_kernel",
            "mode": "kernel",
            "target": "npu",
            "stages": _run_stages(
                compat.ast_source(mod.asc_timer_kernel, {"out_ptr": "*i64"}, {}), GPUTarget(*NPU)
            ),
        }
    )
    from triton.backends.ascend import cpu_driver

    results.append(
        {
            "kernel": "cpu_launcher",
            "template": cpu_driver.generate_cpu_wrapper_src({}, {"0": "*fp32"}, "k").strip(),
        }
    )
    del triton
    print(json.dumps(results))
    return 0


_results: list[dict[str, Any]] | None = None


def _compiled() -> list[dict[str, Any]]:
    """The child's results (run once per session: a few seconds on 2 cores)."""
    global _results
    if _results is None:
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        proc = subprocess.run(
            [sys.executable, __file__],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-4000:]
        _results = json.loads(proc.stdout.strip().splitlines()[-1])
        _report(_results)
    return _results


def _report(results: list[dict[str, Any]]) -> None:
    """One line per kernel, mode and target: how far it got (pytest -s shows it; CI logs it)."""
    for r in results:
        if "stages" not in r:
            continue
        cells = []
        for s in r["stages"]:
            if s.get("ok"):
                cells.append(f"{s['stage']} ok")
            elif "stopped" in s:
                cells.append(f"{s['stage']}: {s['stopped']}")
            else:
                cells.append(f"{s['stage']} FAILED ({s['error'][:120]})")
        print(f"ascend {r['target']} {r['kernel']} {r['mode']}: " + "; ".join(cells))


def _stage(r: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((s for s in r["stages"] if s["stage"] == name), None)


@pytest.fixture(scope="module")
def ascend() -> None:
    why = _why_not_ascend()
    if why:
        pytest.skip(why)


def test_kernels_compile_to_linalg(ascend: None) -> None:
    """The tutorial-style kernels themselves: ttir and ttadapter (Linalg) for the NPU target, then
    npubin stops for want of CANN (or, where CANN is installed, makes the binary)."""
    rows = [r for r in _compiled() if r.get("mode") == "kernel" and r.get("target") == "npu"]
    rows = [r for r in rows if r["kernel"] != "asc_timer_kernel"]
    assert len(rows) == len(KERNELS)
    for r in rows:
        ttir, ttad = _stage(r, "ttir"), _stage(r, "ttadapter")
        assert ttir and ttir["ok"], r
        assert "tt.func" in ttir["head"], r
        assert ttad and ttad["ok"], r
        assert "func.func" in ttad["head"] and "tt.load" not in ttad["head"], r
        last = r["stages"][-1]
        if _have_cann():
            assert last["stage"] == "npubin" and last.get("ok"), r
        else:
            assert last == {"stage": "npubin", "stopped": CANN_STOP}, r


def test_twins_stop_where_the_language_lacks_tuple_values(ascend: None) -> None:
    """Every twin is written (the rewriter, the check slots) and then: without tuple values in the
    language (Triton-Ascend 3.2), the code generator rejects the device helpers, with the error the
    known-bad row names; with them, the twin goes as far as its kernel."""
    from flagprism import compat

    twins = [r for r in _compiled() if r.get("mode") not in (None, "kernel")]
    assert len(twins) == len(KERNELS) * (len(MODES) - 1)
    for r in twins:
        if r["mode"] in ("check", "sanitize"):
            assert r["check_slots"] > 0, r
        if not compat.tuple_values():
            assert r["stages"][0]["stage"] == "source" and not r["stages"][0]["ok"], r
            assert any(m in r["stages"][0]["error"] for m in compat.NO_TUPLE_MESSAGES), r
        else:
            kernel = next(
                k for k in _compiled() if k["kernel"] == r["kernel"] and k["mode"] == "kernel"
            )
            assert [s["stage"] for s in r["stages"]] == [s["stage"] for s in kernel["stages"]], r
            assert all(s.get("ok") or "stopped" in s for s in r["stages"]), r
    if not compat.tuple_values():
        row = {i.id: i for i in compat.known_issues("gpu")}
        assert compat.ROW_ASCEND_TUPLES in row
        why = compat.explain_compile_error(RuntimeError("x"))
        assert why and compat.ROW_ASCEND_TUPLES in why


def test_cpu_path_stops_in_triton_ascend_itself(ascend: None) -> None:
    """The CPU target: in triton-ascend 3.2.0 the plain vector add stops in the code generator or
    at ttadapter because the wheel's CPUOptions lack fields they read (sanitize_overflow,
    enable_nd2nz_on_vector), and the CPU launcher has no code: nothing
    could run on the CPU driver. When a release fixes either, this test says so (fails) and the
    matrix in docs/guide/backends.md moves."""
    cpu = next(r for r in _compiled() if r.get("target") == "cpu")
    # the code generator reads NPU options too (sanitize_overflow), so this kernel stops there;
    # one without integer arithmetic in the code generator's checks gets to ttadapter
    failed = [s for s in cpu["stages"] if s.get("ok") is False]
    assert len(failed) == 1 and failed[0]["stage"] in ("source", "ttadapter"), cpu
    assert any(f in failed[0]["error"] for f in ("CPUOptions", "enable_nd2nz_on_vector")), cpu
    assert _stage(cpu, "llir") is None, cpu
    launcher = next(r for r in _compiled() if r["kernel"] == "cpu_launcher")
    assert launcher["template"] == "", launcher


def test_timeline_clock_read_is_refused_on_ascend(ascend: None, monkeypatch: Any) -> None:
    """An intra-kernel timeline needs a device clock read; inline assembly does not get through
    triton-adapter-opt (it crashes in ttadapter), and the timeline refuses the npu backend with
    the reason rather than trying."""
    from flagprism import _launch, _timeline

    timer = next(r for r in _compiled() if r["kernel"] == "asc_timer_kernel")
    assert _stage(timer, "ttir")["ok"], timer
    assert not _stage(timer, "ttadapter")["ok"], timer
    monkeypatch.setattr(_launch, "backend_of", lambda fn: "npu")
    why = _timeline._flavour(object())
    assert why.startswith("unsupported:") and "Triton-Ascend" in why, why


def test_compat_probes_triton_ascend(ascend: None) -> None:
    """What flagprism.compat finds in Triton-Ascend 3.2, by feature: its own component in the
    known-bad table (never upstream's range rows), no knobs (launch hooks are CompiledKernel's
    class attributes, chained), the 3.2 ASTSource and make_ir, no tuple values."""
    from flagprism import compat

    feats = compat.triton_features()
    assert feats["vendor"] == "ascend" and feats["supported"] is None, feats
    v = compat.installed_versions()
    assert v["triton"] is None and v["triton-ascend"], v
    ids = {i.id for i in compat.known_issues("any")}
    assert compat.ROW_TRITON_OLD not in ids and compat.ROW_TRITON_NEW not in ids, ids
    assert feats["ascend_tested"] == ">= {}, < {}".format(*compat.ascend_tested())
    assert feats["make_ir_takes_target"] is False and feats["hook_chains"] is False


def test_profiler_launch_hooks_chain_on_compiled_kernel(ascend: None) -> None:
    """Triton 3.2 has no knobs: its launchers call CompiledKernel.launch_enter_hook/_exit_hook
    (class attributes). compat.hook_chain chains them, the Profiler hooks them, and taking the
    hooks out puts back what was there."""
    from triton.compiler.compiler import CompiledKernel

    from flagprism import _profhook, compat

    seen: list[Any] = []
    prev = CompiledKernel.launch_enter_hook
    chain = compat.hook_chain("launch_enter_hook")
    assert chain is not None and compat.hook_chain("kernel_load_end_hook") is None
    chain.add(seen.append)
    assert CompiledKernel.launch_enter_hook is not prev
    CompiledKernel.launch_enter_hook({"name": "k"})
    chain.remove(seen.append)
    assert seen == [{"name": "k"}] and CompiledKernel.launch_enter_hook is prev
    notes = _profhook.install()
    assert not any("no launch hooks" in n for n in notes), notes


def test_doctor_names_triton_ascend(ascend: None) -> None:
    """`flagprism doctor --json`: the triton package is Triton-Ascend's, in its tested range, and
    the tuple-values row is among the known issues (not upstream's range rows)."""
    cli = os.environ.get("FLAGPRISM_CLI") or str(
        Path(__import__("flagprism").__file__).parent / "_bin" / "flagprism"
    )
    if not os.access(cli, os.X_OK):
        pytest.skip(f"no flagprism CLI at {cli}")
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable)
    proc = subprocess.run(
        [cli, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    doc = json.loads(proc.stdout)
    tri = doc["packages"]["triton"]
    assert tri["vendor"] == "ascend" and tri["ascend_tested"] is True, tri
    ids = {i["id"] for i in doc["known_issues"]}
    assert "triton-ascend3.2-no-tuple-values" in ids and "triton-older-than-supported" not in ids


if __name__ == "__main__":
    sys.exit(_child())
