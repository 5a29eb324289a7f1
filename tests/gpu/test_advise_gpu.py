# SPDX-License-Identifier: Apache-2.0
"""`flagprism advise` on a GPU: the acceptance of issue #36, on kernels written for it, each in a
slow version with one planted cause and a fixed version that applies the advice
(_advise_cases.py): a transposed (uncoalesced) load, a block that spills, a reduction launched
with too few programs (tail effect), a float32 GEMM from float16 inputs that does not give
tl.dot the float16 tiles, a launch-bound loop of tiny kernels, a loop run with num_stages=1
whose loads stall.

For each case both versions run under `flagprism profile -b cupti -c python -d trace` (the times,
the grids, the launching lines, the compiled kernels), plus the evidence run the rule needs
(hardware counters, or PC sampling), and `flagprism advise BASE --with EVIDENCE -o advice.json`
reads them. Then:

* the planted cause is the first advice for the slow version's kernel, on the line marked
  `# planted: <rule>` in _advise_cases.py;
* the fixed version saves at least the estimated saving within 30%: measured (slow - fixed, per
  launch from the cupti times; per loop step from the trace for the launch-bound loop) >= 0.7 x
  the estimate per launch (the finding's saving / its kernel's launches);
* the fixed version no longer gets that advice.

Each profiled program is its own process. Skipped without a CUDA GPU; the counter and PC-sampling
cases skip when the driver restricts counters to administrators. What each case measured is
saved to $FP_GPU_RESULTS_DIR (or $OUT) as advise-<case>.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest


def _gpu() -> bool:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return False
    try:
        import torch
    except Exception:  # noqa: BLE001 - no torch: no GPU tests
        return False
    return bool(torch.cuda.is_available())


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _gpu(), reason="needs a CUDA GPU (and TRITON_INTERPRET unset)"),
]

HERE = Path(__file__).resolve().parent
CASES_PY = HERE / "_advise_cases.py"
REPS = 20

#: the evidence run each case needs besides the base run (flagprism profile options)
EVIDENCE: dict[str, list[str] | None] = {
    "uncoalesced": [
        "-m",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,"
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,"
        "dram__bytes_read.sum,dram__bytes_write.sum",
    ],
    "spills": [
        "-m",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,"
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,"
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ],
    "tail_effect": None,
    "half_math": None,
    "launch_bound": None,
    "stall": ["--mode", "pcsampling"],
}

#: (slow kernel, fixed kernel), as _advise_cases.KERNELS names them
KERNELS: dict[str, tuple[str, str]] = {
    "uncoalesced": ("colsum_strided", "colsum_contig"),
    "spills": ("row_softmax", "row_softmax"),
    "tail_effect": ("chunk_sum", "chunk_sum"),
    "half_math": ("gemm_wide", "gemm_dot"),
    "launch_bound": ("bump", "bump_all"),
    "stall": ("dot_loop", "dot_loop"),
}


def planted_lines(rule: str) -> set[int]:
    """Lines of _advise_cases.py marked `# planted: <rule>`."""
    return {
        i
        for i, line in enumerate(CASES_PY.read_text().splitlines(), 1)
        if line.rstrip().endswith(f"# planted: {rule}")
    }


def cli_path() -> Path:
    value = os.environ.get("FLAGPRISM_CLI")
    if value:
        return Path(value)
    from flagprism.cli import binary_path

    return Path(binary_path())


def _save(name: str, data: Any) -> None:
    out = os.environ.get("FP_GPU_RESULTS_DIR") or os.environ.get("OUT")
    if out:
        Path(out, f"advise-{name}.json").write_text(json.dumps(data, indent=1))


def _profile(cli: Path, name: Path, case: str, variant: str, extra: list[str]) -> Path:
    cmd = [str(cli), "profile", "-n", str(name), "-b", "cupti", "-c", "python", *extra]
    cmd += [str(CASES_PY), case, variant, str(REPS)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=os.environ.copy())
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 and any(
        s in text for s in ("RmProfilingAdminOnly", "ERR_NVGPUCTRPERM", "INSUFFICIENT_PRIVILEGES")
    ):
        pytest.skip(f"performance counters are restricted on this machine: {text[-300:]}")
    assert proc.returncode == 0, text[-4000:]
    return name.with_suffix(".hatchet")


def _advise(cli: Path, base: Path, withs: list[Path], out: Path) -> dict[str, Any]:
    cmd = [str(cli), "advise", "-q", "-o", str(out), str(base)]
    for w in withs:
        cmd += ["--with", str(w)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _kernel_times(hatchet: Path, kernel: str) -> tuple[float, float]:
    """(time in ns, launches) of every node named `kernel`."""
    data = json.loads(hatchet.read_text())
    t = n = 0.0

    def walk(node: dict[str, Any]) -> None:
        nonlocal t, n
        if node["frame"]["name"] == kernel:
            t += node["metrics"].get("time (ns)", 0)
            n += node["metrics"].get("count", 0)
        for c in node.get("children", []):
            walk(c)

    walk(data[0])
    assert n > 0, f"no launch of {kernel} in {hatchet}"
    return t, n


def _loop_step_ns(trace: Path, kernel: str, per_step: int) -> float:
    """Time of one step of the launch-bound loop from the trace: the span of the measured
    steps' launches (the warm-up step left out) divided by their number."""
    evs = [
        e
        for e in json.loads(trace.read_text())["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") == "kernel" and e.get("name") == kernel
    ]
    evs.sort(key=lambda e: e["ts"])
    assert len(evs) == per_step * (REPS + 1), (kernel, len(evs))
    measured = evs[per_step:]
    span_us = measured[-1]["ts"] + measured[-1]["dur"] - measured[0]["ts"]
    return span_us * 1e3 / REPS


@pytest.fixture(scope="module")
def cli() -> Path:
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built")
    return path


@pytest.mark.parametrize("case", list(EVIDENCE))
def test_planted_cause(case: str, cli: Path, tmp_path: Path) -> None:
    if case == "stall" and shutil.which("nvidia-smi") is None:
        pytest.skip("PC sampling needs the NVIDIA driver's tools")
    slow_k, fixed_k = KERNELS[case]
    results: dict[str, Any] = {"case": case}
    advice: dict[str, dict[str, Any]] = {}
    bases: dict[str, Path] = {}
    for variant in ("slow", "fixed"):
        base = _profile(cli, tmp_path / f"{case}-{variant}", case, variant, ["-d", "trace"])
        withs = []
        if EVIDENCE[case] is not None:
            withs.append(
                _profile(cli, tmp_path / f"{case}-{variant}-ev", case, variant, EVIDENCE[case])
            )
        bases[variant] = base
        advice[variant] = _advise(cli, base, withs, tmp_path / f"{case}-{variant}.advice.json")
    results["advice"] = advice

    # 1. the planted cause is the slow kernel's first advice, on the marked line
    slow = advice["slow"]
    first = None
    for f in slow["findings"]:
        if f["kernel"] is not None and slow["kernels"][f["kernel"]]["frame"] == slow_k:
            first = f
            break
    _save(case, results)
    assert first is not None, f"no advice for {slow_k}: {slow['findings']}"
    assert first["rule"] == case, f"first advice for {slow_k} is {first['rule']}: {first['title']}"
    assert first["line"] is not None, first
    assert Path(first["line"]["file"]).name == CASES_PY.name, first["line"]
    assert first["line"]["line"] in planted_lines(case), (first["line"], planted_lines(case))

    # 2. the fix saves at least the estimate within 30%
    est = first["saving"]["ns"]
    assert est is not None and est > 0, first["saving"]
    if case == "launch_bound":
        per_step = 256  # _advise_cases.launch_bound's items
        slow_step = _loop_step_ns(bases["slow"].with_suffix(".chrome_trace.json"), slow_k, per_step)
        fixed_step = _loop_step_ns(bases["fixed"].with_suffix(".chrome_trace.json"), fixed_k, 1)
        measured = slow_step - fixed_step
        est_per = est / (REPS + 1)
    else:
        t_slow, n_slow = _kernel_times(bases["slow"], slow_k)
        t_fixed, n_fixed = _kernel_times(bases["fixed"], fixed_k)
        measured = t_slow / n_slow - t_fixed / n_fixed
        est_per = est / slow["kernels"][first["kernel"]]["launches"]
    results.update({"estimated_per_launch_ns": est_per, "measured_per_launch_ns": measured})
    _save(case, results)
    assert measured >= 0.7 * est_per, (
        f"{case}: the fix saved {measured:.0f} ns per launch, the advice estimated {est_per:.0f}"
    )

    # 3. the fixed version no longer gets that advice
    fixed = advice["fixed"]
    again = [
        f
        for f in fixed["findings"]
        if f["rule"] == case
        and (f["kernel"] is None or fixed["kernels"][f["kernel"]]["frame"] == fixed_k)
    ]
    assert not again, f"the fixed {fixed_k} still gets {case}: {again}"

