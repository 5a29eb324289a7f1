# SPDX-License-Identifier: Apache-2.0
"""`flagprism advise` on profiles of the Triton interpreter, for the rules that need no hardware:
a launch-bound loop of tiny kernels (and the same work in one launch), autotuners (the fastest
config at the edge of the configs, configs that all measure the same), and float32 math on
float16 data where tl.dot could take the narrow inputs (and the tl.dot fix). Each slow version
must get its planted cause as its kernel's first advice, on the right line; the fixed version
must not get it. The advice of each scenario is compared with a golden file
(tests/data/golden/advise-<case>.txt) after one normalisation: times and shares are masked, what
the IR and the autotuner said is kept. The rules that need a GPU must say they could not run and
the plan must name the runs that would let them. Also the command line: --help, exit codes,
-o, --plan, --with, errors naming the place. FP_UPDATE_GOLDEN=1 rewrites the golden files.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _advisekernels as K  # noqa: E402

import flagprism.profiler as profiler  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "data" / "golden"
KERNELS = Path(K.__file__).resolve()

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def line_of(text: str) -> int:
    """1-based line of _advisekernels.py holding `text`."""
    for i, line in enumerate(KERNELS.read_text().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(f"no line with {text!r}")


def profile(tmp_path: Path, name: str, fn: Any) -> Path:
    profiler.start(str(tmp_path / name), context="python", data="trace")
    try:
        fn()
    finally:
        profiler.finalize()
    return tmp_path / f"{name}.hatchet"


def advise(
    cli: Path, prof: Path, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(cli), "advise", *args, str(prof)], capture_output=True, text=True, timeout=120
    )
    if check:
        assert proc.returncode == EXIT_OK, proc.stderr
    return proc


def advice(cli: Path, prof: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / f"{prof.stem}.advice.json"
    advise(cli, prof, "-q", "-o", str(out), *args)
    return json.loads(out.read_text())


def first_for(a: dict[str, Any], kernel: str) -> dict[str, Any] | None:
    for f in a["findings"]:
        if f["kernel_name"] == kernel:
            return f
    return None


def rules_of(a: dict[str, Any], kernel: str | None) -> list[str]:
    return [f["rule"] for f in a["findings"] if f["kernel_name"] == kernel]


# numbers, not digits inside names (float32, H100, tf32) nor factors (2x)
_NUM = re.compile(r"(?<![A-Za-z_\d.])-?\d+(?:[.,]\d+)*(?:e[+-]?\d+)?(?![A-Za-z_\d])")
_DETERMINED = {"ir", "autotune", "compiled"}  # what the IR and the tuner said: the same everywhere


def normalise(a: dict[str, Any]) -> str:
    """The advice with what varies between runs masked: times, shares and counts of the trace
    and the tree become N; the IR's and the autotuner's numbers stay (not its benchmarking
    time); paths are basenames. Kernels are listed by their text (nodes of similar time swap
    places between runs), and the run's outside_triton findings are left out: on the
    interpreter they follow the host's timing (the tests check them)."""

    def mask(s: str | None) -> str:
        return _NUM.sub("N", s or "")

    blocks = []
    for k in a["kernels"]:
        lines = [f"kernel {k['name']} (triton={k['triton']}, device {k['device_type']})"]
        for i in k["findings"]:
            f = a["findings"][i - 1]
            lines.append(f"  [{f['rule']}] {f['kind']}: {mask(f['title'])}")
            if f["line"]:
                ln = f["line"]
                lines.append(f"    at {Path(ln['file']).name}:{ln['line']} ({ln['source']})")
            for e in f["evidence"]:
                value = e.get("text") if "text" in e else e.get("value")
                if e["source"] not in _DETERMINED or e["name"] == "benchmarking time":
                    value = "N"
                lines.append(f"    evidence {e['name']} = {value} {e['unit']} ({e['source']})")
            s = f["saving"]
            lines.append(
                f"    saving {'estimated' if s['ns'] is not None else 'not estimated'}: "
                f"{mask(s['method'])}"
            )
            lines.append(f"    try: {mask(f['suggestion'])}")
        blocks.append("\n".join(lines))
    out = [f"advice on {Path(a['profile']).name}", *sorted(blocks)]
    for f in a["findings"]:
        if f["kernel"] is None and f["rule"] != "outside_triton":
            out.append(f"run [{f['rule']}]: {mask(f['title'])}")
    for r in a["rules"]:
        out.append(f"rule {r['name']}: {r['status']}")
    for p in a["plan"]:
        out.append("plan: " + re.sub(r"\S*/([^/\s]+)", r"\1", p["command"]))
    # absolute paths in titles to basenames
    return re.sub(r"/\S*/([^/\s:]+\.py)", r"\1", "\n".join(out)) + "\n"


def check_golden(name: str, a: dict[str, Any]) -> None:
    text = normalise(a)
    golden = GOLDEN / f"advise-{name}.txt"
    if os.environ.get("FP_UPDATE_GOLDEN") == "1":
        golden.write_text(text)
        return
    assert golden.is_file(), f"{golden.name} is missing: run with FP_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), text.splitlines(True), golden.name, "now"
            )
        )
        pytest.fail(f"the advice differs from {golden.name}:\n{diff[:6000]}")


def test_launch_bound_loop(cli: Path, tmp_path: Path) -> None:
    x = torch.zeros(16 * 12)
    slow = profile(tmp_path, "loop", lambda: K.launch_bound(x, 12, 0.02))
    a = advice(cli, slow, tmp_path)
    first = first_for(a, "adv_tiny")
    assert first is not None and first["rule"] == "launch_bound", a["findings"]
    assert first["line"]["line"] == line_of("adv_tiny[(1,)](x, i, BLOCK=16)")
    assert Path(first["line"]["file"]).name == KERNELS.name
    ev = {e["name"]: e["value"] for e in first["evidence"] if "value" in e}
    assert ev["launches"] == 12
    assert ev["median gap before a launch"] > ev["median kernel time"]
    assert first["saving"]["ns"] > 0
    # the 20 ms of host work per step: the saving counts 11 gaps of at least that much
    assert first["saving"]["ns"] >= 11 * 0.02e9 * 0.9
    check_golden("interp-launch-bound", a)
    # the fixed version: one launch, nothing launch-bound
    fixed = profile(tmp_path, "batched", lambda: K.batched(x, 12))
    b = advice(cli, fixed, tmp_path)
    assert "launch_bound" not in [f["rule"] for f in b["findings"]]
    status = {r["name"]: r["status"] for r in b["rules"]}
    assert status["launch_bound"] == "ran"


def test_autotune_comparison(cli: Path, tmp_path: Path) -> None:
    def run() -> None:
        K.tuned(torch.zeros(256), K.adv_tuned_edge)
        K.tuned(torch.zeros(256), K.adv_tuned_flat)

    prof = profile(tmp_path, "tuned", run)
    meta = json.loads((tmp_path / "tuned.meta.json").read_text())
    edge = json.loads(meta["environment"]["autotune:adv_tuned_edge"])
    assert [c["ms"][0] for c in edge["configs"]] == [3.0, 2.0, 1.0] and edge["chosen"] == 2
    a = advice(cli, prof, tmp_path)
    f = first_for(a, "adv_tuned_edge")
    assert f is not None and f["rule"] == "autotune"
    assert "largest BLOCK measured (64)" in f["title"]
    assert f["line"]["line"] == line_of("def adv_tuned_edge")
    # said once per kernel, on its heaviest node (the autotuner's benchmark launches are another)
    assert sum(1 for g in a["findings"] if g["rule"] == "autotune" and "BLOCK" in g["title"]) == 1
    g = first_for(a, "adv_tuned_flat")
    assert g is not None and g["rule"] == "autotune" and "within 0%" in g["title"]
    assert g["saving"]["ns"] is not None and g["saving"]["ns"] > 0  # the benchmarking time
    check_golden("interp-autotune", a)


def test_half_precision_math(cli: Path, tmp_path: Path) -> None:
    prof = profile(tmp_path, "mm", lambda: K.matmul(K.adv_mm_wide))
    a = advice(cli, prof, tmp_path)
    f = first_for(a, "adv_mm_wide")
    assert f is not None and f["rule"] == "half_math", a["findings"]
    assert f["line"]["line"] == line_of("c = tl.sum(a[:, :, None] * b[None, :, :], axis=1)")
    assert f["line"]["source"] == "ir: the dot"
    assert f["saving"]["ns"] is None and "no peaks" in f["saving"]["method"]
    ev = {e["name"]: e.get("value", e.get("text")) for e in f["evidence"]}
    assert ev["narrow type"] == "fp16" and ev["widened dot FLOPs per program"] == 2 * 16**3
    check_golden("interp-half-math", a)
    # the fix: tl.dot on the float16 tiles
    fixed = profile(tmp_path, "mmdot", lambda: K.matmul(K.adv_mm_dot))
    b = advice(cli, fixed, tmp_path)
    assert "half_math" not in rules_of(b, "adv_mm_dot")
    assert {r["name"]: r["status"] for r in b["rules"]}["half_math"] == "ran"


def test_hardware_rules_say_why_and_plan(cli: Path, tmp_path: Path) -> None:
    prof = profile(tmp_path, "mmplan", lambda: K.matmul(K.adv_mm_dot))
    a = advice(cli, prof, tmp_path)
    status = {r["name"]: r for r in a["rules"]}
    for name in ("roofline", "uncoalesced", "spills", "occupancy", "tail_effect", "stall"):
        assert status[name]["status"] == "could_not_run", name
        assert status[name]["why"] and status[name]["enable"]
    assert "interpreter" in status["roofline"]["why"]
    assert status["ranks"]["status"] == "not_applicable"
    plan = advise(cli, prof, "--plan").stdout
    stem = str(tmp_path / "mmplan")
    assert f"flagprism profile -n {stem}-gpu -b cupti -c python -d trace SCRIPT" in plan
    assert f"flagprism profile -n {stem}-metrics -b cupti -m dram__bytes_read.sum" in plan
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in plan
    assert f"flagprism profile -n {stem}-pcs --mode pcsampling SCRIPT" in plan
    assert (
        f"flagprism advise {stem}-gpu.hatchet --with {stem}-metrics.hatchet "
        f"--with {stem}-pcs.hatchet" in plan
    )
    # the text says the same
    text = advise(cli, prof).stdout
    assert "stall           could not run" in text and "--plan prints" in text


def test_cli(cli: Path, tmp_path: Path) -> None:
    prof = profile(tmp_path, "c", lambda: K.matmul(K.adv_mm_wide))
    h = subprocess.run([str(cli), "advise", "--help"], capture_output=True, text=True)
    assert h.returncode == EXIT_OK and "--plan" in h.stdout and "--with" in h.stdout
    assert "advise" in subprocess.run([str(cli), "--help"], capture_output=True, text=True).stdout
    for bad in (
        [],
        ["--top", "0", str(prof)],
        ["--min-share", "2", str(prof)],
        ["--plan", "-o", "x.json", str(prof)],
        [str(prof), str(prof)],
        ["--bogus", str(prof)],
    ):
        r = subprocess.run([str(cli), "advise", *bad], capture_output=True, text=True)
        assert r.returncode == EXIT_USAGE, (bad, r.stderr)
    r = subprocess.run(
        [str(cli), "advise", str(tmp_path / "none.hatchet")], capture_output=True, text=True
    )
    assert r.returncode == EXIT_FAILURE and "none.hatchet" in r.stderr
    # -o - is JSON on stdout, nothing else
    r = advise(cli, prof, "-o", "-")
    assert json.loads(r.stdout)["format"] == "flagprism-advice"
    # a broken meta file beside the profile: an error naming it and the place
    meta = tmp_path / "c.meta.json"
    meta.write_text('{"format": "flagprism-profile-meta", "environment": {')
    r = advise(cli, prof, check=False)
    assert r.returncode == EXIT_FAILURE and f"{meta}:1:" in r.stderr, r.stderr
    meta.write_text(
        json.dumps(
            {
                "format": "flagprism-profile-meta",
                "environment": {"estimate:adv_mm_wide": "x\nfacts: [1,"},
            }
        )
    )
    r = advise(cli, prof, check=False)
    assert r.returncode == EXIT_FAILURE and 'environment["estimate:adv_mm_wide"]' in r.stderr
    meta.unlink()
    # a broken trace: an error naming it; --no-trace reads the tree alone
    trace = tmp_path / "c.chrome_trace.json"
    trace.write_text("{")
    r = advise(cli, prof, check=False)
    assert r.returncode == EXIT_FAILURE and f"{trace}:" in r.stderr
    r = advise(cli, prof, "--no-trace")
    assert "no trace" in r.stdout
    # --with: another profile's evidence; a missing one is an error
    r = advise(cli, prof, "--no-trace", "--with", str(prof))
    assert f"with evidence from {prof}" in r.stdout
    r = advise(cli, prof, "--with", str(tmp_path / "nope.hatchet"), check=False)
    assert r.returncode == EXIT_FAILURE


def test_report_has_the_advice(cli: Path, tmp_path: Path) -> None:
    prof = profile(tmp_path, "rep", lambda: K.matmul(K.adv_mm_wide))
    page = tmp_path / "rep.html"
    r = subprocess.run(
        [str(cli), "report", "-q", str(prof), "-o", str(page)], capture_output=True, text=True
    )
    assert r.returncode == EXIT_OK, r.stderr
    text = page.read_text()
    assert '"format":"flagprism-advice"' in text and "half_math" in text
    r = subprocess.run(
        [str(cli), "report", "-q", "--no-advice", str(prof), "-o", str(page)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == EXIT_OK and "flagprism-advice" not in page.read_text()


def test_gpu_cases_mark_their_lines() -> None:
    """tests/gpu/_advise_cases.py marks the line each planted cause must be advised on (the GPU
    acceptance test reads them): every rule it plants has such a line."""
    text = (REPO / "tests" / "gpu" / "_advise_cases.py").read_text()
    for rule in ("uncoalesced", "spills", "tail_effect", "half_math", "launch_bound", "stall"):
        assert f"# planted: {rule}" in text, rule
