# SPDX-License-Identifier: Apache-2.0
"""In-process hardware metrics (``profiler.start(metrics=...)``, CUPTI range profiler) on a
real GPU, and `flagprism profile --ncu` with the real Nsight Compute.

* The C re-declaration of CUPTI 13.0's profiling ABI (src/backend/cuda/cupti-profiler-abi.h) compiles
  against this machine's headers (tests/unit/cupti-profiler-abi-check.h: static assertions).
* A 2^29-element float32 vector add must move 6 GiB: DRAM bytes read + written within 2% of it
  (read alone within 2% of 4 GiB), and bytes / gpu__time_duration a bandwidth between 25% and
  110% of the H200's 4.8 TB/s datasheet peak. The size is chosen so that what the L2 (about
  60 MB on the H200) keeps at the kernel's end (dirty lines not yet written back) or already
  holds at its start is under 1% of the bytes moved (see _metrics_child.py). The kernel is in
  the tree exactly once, under its launch, with its count, and its time is the one the metrics
  session filed: the activity record's when it has times, else gpu__time_duration.sum (CUPTI
  13.0 on the H200 gives profiled kernels records without times).
* A 2048^3 float32 matmul (tl.dot, input_precision="ieee": FFMA on the CUDA cores, no tensor
  cores, so every multiply-add is one counted FFMA thread instruction; a tensor-core matmul has
  no comparably exact FLOP counter): 2 x the FFMA thread instructions
  (smsp__sass_thread_inst_executed_op_ffma_pred_on.sum, or its sm__ rollup) within 2% of
  2 x 2048^3 FLOP, and the IR estimate (est_flops, from the TTIR's dot; K is a constexpr so
  the loop is static) within 10% of it, so est_flops / time and the measured FLOP/s agree.
* With ncu on PATH: the same vector add under `flagprism profile --ncu`; ncu's DRAM bytes and
  the in-process ones agree within 2%.

Each measurement runs in its own process (_metrics_child.py). Skipped without a CUDA GPU; a
system that restricts counters to admins makes the metric tests skip with the reason.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

# The range profiler counts what the whole GPU does during a kernel: nothing else may run.
pytestmark = [pytest.mark.gpu, pytest.mark.exclusive_gpu]

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().parent / "_metrics_child.py"
VADD = "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FFMA_SM = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"  # the same count, SM rollup
MATMUL = (f"{FFMA},{FFMA_SM},gpu__time_duration.sum,"
          "sm__throughput.avg.pct_of_peak_sustained_elapsed")
H200_PEAK_BPS = 4.8e12


def _save(path: Path) -> None:
    out = os.environ.get("FP_GPU_RESULTS_DIR") or os.environ.get("OUT")
    if out and path.exists():
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(out) / f"metrics-{path.name}")


def _child(tmp_path: Path, kernel: str, name: str, metrics: str) -> dict:
    r = subprocess.run([sys.executable, str(CHILD), kernel, str(tmp_path / name), metrics],
                       capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    if r.returncode != 0 and ("NVreg_RestrictProfilingToAdminUsers" in r.stderr):
        pytest.skip("hardware counters are restricted to admins on this machine: " +
                    r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    for suffix in (".hatchet", ".meta.json"):
        _save(tmp_path / f"{name}{suffix}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _kernel(path: Path, name: str) -> dict:
    def walk(node: dict):
        if node["frame"]["name"] == name:
            return node["metrics"]
        for c in node.get("children", []):
            m = walk(c)
            if m is not None:
                return m
        return None

    m = walk(json.loads(path.read_text())[0])
    assert m is not None, f"no node {name} in {path}"
    return m


def _header_dirs() -> tuple[str, str] | None:
    """(directory with CUDA 13's cupti_profiler_host.h, directory with cuda.h)."""
    cands = [os.environ.get("FP_CUPTI13_HEADERS_DIR"), "/usr/local/cuda/extras/CUPTI/include",
             "/usr/local/cuda/include"]
    for sp in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        cands += glob.glob(os.path.join(sp, "nvidia", "cu13", "include"))
        cands += glob.glob(os.path.join(sp, "nvidia", "cuda_cupti", "include"))
    cupti = next((d for d in cands if d and os.path.isfile(os.path.join(d, "cupti_profiler_host.h"))),
                 None)
    cuda = next((d for d in [cupti, "/usr/local/cuda/include", *cands]
                 if d and os.path.isfile(os.path.join(d, "cuda.h"))), None)
    return (cupti, cuda) if cupti and cuda else None


def test_profiler_abi_against_this_machines_headers(tmp_path: Path) -> None:
    dirs = _header_dirs()
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if dirs is None or cc is None:
        pytest.skip("no CUDA 13 CUPTI headers (cupti_profiler_host.h) or no C compiler")
    src = tmp_path / "abi.c"
    src.write_text('#include "cupti-profiler-abi-check.h"\nint fp_abi_checked;\n')
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", str(REPO / "tests/unit/abi-stub"),
                        "-I", str(REPO / "tests/unit"), "-I", str(REPO / "src"),
                        "-isystem", dirs[0], "-isystem", dirs[1], str(src)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"ABI mismatch against {dirs[0]}:\n{r.stderr}"


def test_vector_add_dram_bytes_in_process(tmp_path: Path) -> None:
    info = _child(tmp_path, "vadd", "vadd", VADD)
    st = info["status"]
    assert st["collected"] and st["attached"] >= 1, st
    assert not [r for r in st["reasons"] if "unsupported" in r], st["reasons"]
    assert st["kernels"] == 1 and st["attached"] == 1, st
    m = _kernel(tmp_path / "vadd.hatchet", "hwm_vadd")
    assert m["count"] == 1 and m["hw:launches"] == 1
    read, write = m["hw:dram__bytes_read.sum"], m["hw:dram__bytes_write.sum"]
    assert read == pytest.approx(info["read"], rel=0.02), (read, info["read"])
    assert read + write == pytest.approx(info["bytes"], rel=0.02), (read, write, info["bytes"])
    t = m["hw:gpu__time_duration.sum"]
    if st["records_timed"]:
        # a record with times: the tree's time is the record's, the counter agrees with it
        assert t == pytest.approx(m["time (ns)"], rel=0.30), (t, m["time (ns)"])
    else:
        assert m["time (ns)"] == pytest.approx(t, abs=1), (t, m["time (ns)"])
    bw = (read + write) / (t * 1e-9)
    assert 0.25 * H200_PEAK_BPS < bw < 1.10 * H200_PEAK_BPS, bw
    print(f"vadd: {read + write:.4g} B in {t:.0f} ns = {bw / 1e12:.3f} TB/s, "
          f"{st['passes']} pass(es)")


def test_matmul_flops_against_ir_estimate(tmp_path: Path) -> None:
    info = _child(tmp_path, "matmul", "mm", MATMUL)
    st = info["status"]
    assert st["collected"] and st["attached"] >= 1, st
    m = _kernel(tmp_path / "mm.hatchet", "hwm_matmul")
    # Either spelling of the FFMA count must exist on the GPU (an unknown one is a reason).
    name = FFMA if f"hw:{FFMA}" in m else FFMA_SM
    assert f"hw:{name}" in m, (st["reasons"], sorted(m))
    flops = 2 * m[f"hw:{name}"]
    assert flops == pytest.approx(info["flops"], rel=0.02), (flops, info["flops"])
    est = m.get("est_flops")
    assert est, f"no IR estimate on the node: {sorted(m)}"
    assert est == pytest.approx(flops, rel=0.10), (est, flops)
    t = m["hw:gpu__time_duration.sum"]
    print(f"matmul: {flops / t:.4g} GFLOP/s measured, {est / t:.4g} GFLOP/s from the IR, "
          f"SM {m['hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)']:.1f}% of peak, "
          f"{st['passes']} pass(es)")


def test_default_metric_set_on_this_gpu(tmp_path: Path) -> None:
    info = _child(tmp_path, "vadd", "dflt", "default")
    st = info["status"]
    assert st["collected"] and st["metrics"] == 7, st  # the six, and gpu__time_duration.sum
    assert st["reasons"] == [], st["reasons"]
    assert st["kernels"] == 1 and st["attached"] == 1, st
    m = _kernel(tmp_path / "dflt.hatchet", "hwm_vadd")
    for name in ("sm__throughput.avg.pct_of_peak_sustained_elapsed",
                 "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                 "lts__t_sector_hit_rate.pct", "sm__warps_active.avg.pct_of_peak_sustained_active"):
        v = m[f"hw:{name} (pty)"]
        assert 0 <= v <= 100.5, (name, v)
    print(f"default set: {st['passes']} pass(es) on {st['chip']}")


def _ncu() -> str | None:
    for cand in (os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def test_in_process_agrees_with_ncu(tmp_path: Path) -> None:
    ncu = _ncu()
    cli = os.environ.get("FLAGPRISM_CLI") or shutil.which("flagprism")
    if not ncu or not cli:
        pytest.skip("needs ncu and the flagprism CLI")
    ours = _child(tmp_path, "vadd", "ours", VADD)
    r = subprocess.run([cli, "profile", "--ncu", "--ncu-path", ncu, "--ncu-metrics", VADD,
                        "--ncu-args", "--kernel-name regex:hwm_vadd", "-n", str(tmp_path / "ncu"),
                        str(CHILD), "vadd", str(tmp_path / "unused"), "host"],
                       capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    _save(tmp_path / "ncu.ncu.csv")
    _save(tmp_path / "ncu.vendor.json")
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    if "ERR_NVGPUCTRPERM" in (tmp_path / "ncu.ncu.csv").read_text():
        pytest.skip("no permission for GPU performance counters (ERR_NVGPUCTRPERM)")
    theirs = _kernel(tmp_path / "ncu.hatchet", "hwm_vadd")
    mine = _kernel(tmp_path / "ours.hatchet", "hwm_vadd")
    rows = []
    # Under `profile --ncu` the child's warm-up launch is profiled too: compare per launch.
    per = theirs["ncu:launches"]
    assert per >= 1 and theirs["count"] == per, theirs
    for name in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
        a, b = mine[f"hw:{name}"], theirs[f"ncu:{name} (byte)"] / per
        rows.append(f"{name}: in-process {a:.6g}, ncu {b:.6g}")
        assert a == pytest.approx(b, rel=0.02), (name, a, b)
    t_ours = mine["hw:gpu__time_duration.sum"]
    t_ncu = theirs["ncu:gpu__time_duration.sum (nsecond)"] / per
    rows.append(f"gpu__time_duration.sum: in-process {t_ours:.6g} ns, ncu {t_ncu:.6g} ns")
    print("\n".join(rows))
    assert ours["bytes"] == 3 * 4 * (1 << 29)
