# SPDX-License-Identifier: Apache-2.0
"""Golden tests of `flagprism view`, `diff` and `merge` on the example profiles.

Every case runs the built CLI in tests/data/profiles (so file names in the output are short and
stable) and compares its standard output with tests/data/golden/view-<case>.txt. The CLI is
$FLAGPRISM_CLI, else build/flagprism; the tests skip when neither exists. After an intended change
regenerate the golden files with FP_UPDATE_GOLDEN=1 and review the diff. Malformed, truncated,
foreign and empty inputs must fail with exit status 1 and a "FILE:LINE:COL: message" error.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "tests" / "data" / "profiles"
GOLDEN = REPO / "tests" / "data" / "golden"

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

H100 = "proton-h100.json"
INTERP = "flagprism-interp.json"

# case name -> command line after `flagprism` (run in tests/data/profiles)
CASES: dict[str, list[str]] = {
    "h100-default": ["view", H100],
    "h100-util": ["view", "-m", "time/ms,tflop16/s,gbyte/s,util", H100],
    "h100-percent": ["view", "-m", "time/%,count/%,avg_time/us", H100],
    "h100-case-units": ["view", "-m", "TIME (ns),Count", H100],
    "h100-keep-metadata": ["view", "--keep-launch-metadata", "-s", "name", H100],
    "h100-depth1": ["view", "-d", "1", H100],
    "h100-threshold": ["view", "-m", "time/ms", "-t", "10%", H100],
    "h100-include": ["view", "-m", "time/ms,time/%", "-i", "matmul|gelu", H100],
    "h100-exclude": ["view", "-m", "time/ms", "-e", "^optimizer", H100],
    "h100-sorted": ["view", "-m", "time/us,count", "--print-sorted", H100],
    "h100-list": ["view", "-l", H100],
    "archs-util": ["view", "-m", "util,tflop/s,tbyte/s", "proton-archs.json"],
    "archs-list": ["view", "--list", "proton-archs.json"],
    "python-full": ["view", "-m", "time/ms,cpu_time/ms", "proton-python.json"],
    "python-file_function_line": ["view", "-f", "file_function_line", "proton-python.json"],
    "python-function_line": ["view", "-f", "function_line", "proton-python.json"],
    "python-file_function": ["view", "-f", "file_function", "proton-python.json"],
    "python-cpu-percent": ["view", "-m", "cpu_time/%,time/%", "proton-python.json"],
    "interp-default": ["view", INTERP],
    "interp-estimates": [
        "view",
        "-m",
        "time/us,est_gbyte/s,est_tflop/s,gbyte/s,util,est_util",
        INTERP,
    ],
    "interp-list": ["view", "-l", INTERP],
    "hwm-roofline": ["view", "--roofline", "flagprism-hwm.json"],
    "hwm-columns": [
        "view",
        "-m",
        "time/us,hw:dram__bytes_read.sum,hw:lts__t_sector_hit_rate.pct,hw:launches",
        "flagprism-hwm.json",
    ],
    "h100-roofline": ["view", "--roofline", H100],
    "interp-roofline": ["view", "--roofline", INTERP],
    "gpu-estimates": ["view", "flagprism-gpu-est.json"],
    "gpu-est-util": ["view", "-m", "time/us,est_util,util,est_bytes/%", "flagprism-gpu-est.json"],
    "crashed": ["view", "flagprism-crashed.json"],
    "diff-view": ["view", "-m", "time/ms,count,util", H100, "--diff", "proton-h100-run2.json"],
    "diff-command": ["diff", "-m", "time/%", H100, "proton-h100-run2.json"],
    "diff-threshold": ["diff", "-t", "0.05", "-m", "time/ms", H100, "proton-h100-run2.json"],
    "merge-ranks": [
        "merge",
        "-o",
        "{tmp}/merged.hatchet",
        "proton-rank0.json",
        "proton-rank1.json",
        "proton-rank2.json",
    ],
    "merge-ranks-imbalance": [
        "merge",
        "--world-size",
        "4",
        "-o",
        "{tmp}/merged.hatchet",
        "proton-rank0.json",
        "proton-rank1.json",
        "proton-rank2.json",
    ],
}

# Cases whose output file is viewed afterwards: case -> (file, view arguments)
READ_BACK: dict[str, tuple[str, list[str]]] = {
    "merge-ranks": (
        "merged.hatchet",
        ["-m", "time/ms,time (ns) (min),time (ns) (max),count,count (max)"],
    ),
    "merge-ranks-imbalance": ("merged.hatchet", ["--ranks"]),
}


def cli_path() -> Path:
    value = os.environ.get("FLAGPRISM_CLI")
    return Path(value) if value else REPO / "build" / "flagprism"


def run(args: list[str], cwd: Path = PROFILES) -> subprocess.CompletedProcess[str]:
    cli = cli_path()
    if not os.access(cli, os.X_OK):
        pytest.skip(f"{cli} is not built (set FLAGPRISM_CLI to the flagprism binary)")
    return subprocess.run(
        [str(cli), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def check_golden(name: str, out: str) -> None:
    golden = GOLDEN / f"view-{name}.txt"
    if os.environ.get("FP_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
        return
    assert golden.is_file(), f"{golden.name} is missing: run with FP_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    if out != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), out.splitlines(True), golden.name, "flagprism", n=1
            )
        )
        pytest.fail(f"output differs from {golden.name}:\n{diff[:6000]}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_view_golden(name: str, tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in CASES[name]]
    r = run(args)
    assert r.returncode == EXIT_OK, r.stderr
    out = r.stdout.replace(str(tmp_path), "TMP")
    if name in READ_BACK:
        file, view_args = READ_BACK[name]
        v = run(["view", *view_args, str(tmp_path / file)])
        assert v.returncode == EXIT_OK, v.stderr
        out += "---\n" + v.stdout
    check_golden(name, out)


def test_crashed_profile_is_reported_incomplete() -> None:
    r = run(["view", "flagprism-crashed.json"])
    assert r.returncode == EXIT_OK
    assert (
        "flagprism: warning: flagprism-crashed.json: the profile is incomplete: "
        "shutdown without finalize; scopes still open at finalize"
    ) in r.stderr
    # Given the meta file, the missing Hatchet file is an error that says why.
    r = run(["view", "flagprism-crashed.meta.json"])
    assert r.returncode == EXIT_FAILURE
    assert "flagprism-crashed.hatchet" in r.stderr
    assert "the meta file says the profile is incomplete" in r.stderr


POSITIONED = re.compile(
    r"^flagprism: error: (?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): .+", re.MULTILINE
)

BAD = {
    "bad-truncated.json": (1, None, "unexpected end of input"),
    "bad-foreign.json": (1, 1, "expected an array [root, device_info], not an object"),
    "bad-notjson.txt": (1, 1, "invalid literal"),
    "bad-empty.json": (1, 1, "empty file"),
    "bad-node.json": (5, 14, "'frame' must be an object, not a string"),
}


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("command", ["view", "diff", "merge"])
def test_bad_inputs_fail_with_a_position(bad: str, command: str, tmp_path: Path) -> None:
    line, col, what = BAD[bad]
    if command == "view":
        args = ["view", bad]
    elif command == "diff":
        args = ["diff", H100, bad]
    else:
        args = ["merge", "-o", str(tmp_path / "m.hatchet"), H100, bad]
    r = run(args)
    assert r.returncode == EXIT_FAILURE, r.stderr
    m = POSITIONED.search(r.stderr)
    assert m, r.stderr
    assert m["file"] == bad and int(m["line"]) == line
    if col is not None:
        assert int(m["col"]) <= col + 1
    assert what in r.stderr
    assert r.stdout == ""
    assert not (tmp_path / "m.hatchet").exists()
    if bad in ("bad-truncated.json", "bad-empty.json"):
        assert "ends early: the profile is incomplete" in r.stderr


def test_missing_file_and_usage_errors(tmp_path: Path) -> None:
    r = run(["view", "no-such.json"])
    assert r.returncode == EXIT_FAILURE
    assert "cannot open 'no-such.json'" in r.stderr
    for args, what in [
        (["view"], "expected a profile FILE"),
        (["view", "-m", "nosuch", H100], "unknown metric 'nosuch'"),
        (["view", "-m", "time/h", H100], "unsupported unit"),
        (["view", "-i", "(", H100], "bad include regex"),
        (["view", "-t", "2", H100], "between 0 and 1"),
        (["view", "-f", "short", H100], "option '--format' expects"),
        (["view", "-s", "size", H100], "option '--sort' expects"),
        (["view", "-d", "-1", H100], "between 0 and 1000000"),
        (["view", "-m", "util", "-t", "0.1", H100], "threshold"),
        (["diff", H100], "expected two profiles"),
        (["merge", H100], "option '--output OUT' is required"),
        (["merge", "-o", str(tmp_path / "x")], "expected the profiles to merge"),
    ]:
        r = run(args)
        assert r.returncode == EXIT_USAGE, (args, r.stderr)
        assert what in r.stderr, (args, r.stderr)
        assert "usage: flagprism " in r.stderr


def test_util_is_na_on_the_interpreter() -> None:
    r = run(["view", "-m", "util", INTERP])
    assert r.returncode == EXIT_OK
    rows = [line for line in r.stdout.splitlines() if line.endswith("kernel")]
    assert rows and all(line.split()[0] == "n/a" for line in rows)
    assert "note: CPU 0 (interpreter) has no device peaks: util shows n/a" in r.stdout


def test_diff_and_merge_outputs_read_back(tmp_path: Path) -> None:
    d = tmp_path / "d.hatchet"
    r = run(["diff", "-o", str(d), H100, "proton-h100-run2.json"])
    assert r.returncode == EXIT_OK, r.stderr
    assert r.stdout == ""
    tree = json.loads(d.read_text())
    assert isinstance(tree, list) and tree[0]["frame"]["name"] == "ROOT"
    v = run(["view", "-m", "time (ns)", "--keep-launch-metadata", str(d)])
    assert v.returncode == EXIT_OK, v.stderr
    root = v.stdout.splitlines()[1].split()
    assert root == ["-290000", "ROOT"]
    # The diff file, viewed, equals the comparison view.
    cmp = run(
        [
            "view",
            "-m",
            "time (ns)",
            "--keep-launch-metadata",
            H100,
            "--diff",
            "proton-h100-run2.json",
        ]
    )
    assert cmp.stdout.splitlines()[2].split()[:2] == ["-290000", "ROOT"]

    m = tmp_path / "m.hatchet"
    r = run(["merge", "-q", "--pretty", "-o", str(m), "proton-rank0.json", "proton-rank1.json"])
    assert r.returncode == EXIT_OK and r.stdout == ""
    merged = json.loads(m.read_text())
    names = [c["frame"]["name"] for c in merged[0]["children"]]
    assert names == ["train_step"]
    v = run(["view", "-m", "time (ns),time (ns) (min),time (ns) (max)", str(m)])
    root = v.stdout.splitlines()[1].split()
    # mean of 1.2 ms and 1.35 ms; min and max of the per-rank totals
    assert root[:3] == ["1275000", "1200000", "1350000"], v.stdout
    # A merged file merges again (min/max metrics combine as min/max).
    m2 = tmp_path / "m2.hatchet"
    r = run(["merge", "-q", "-o", str(m2), str(m), "proton-rank2.json"])
    assert r.returncode == EXIT_OK, r.stderr


def test_proton_viewer_agrees_on_derived_metrics() -> None:
    """Where Proton's own viewer is installed (it needs llnl-hatchet), its numbers for the
    shared metrics match ours on the same Proton-format file."""
    viewer = Path(os.environ.get("PROTON_VIEWER", REPO / ".venv" / "bin" / "proton-viewer"))
    if not os.access(viewer, os.X_OK):
        pytest.skip("proton-viewer is not installed")
    r = subprocess.run(
        [str(viewer), "-m", "time/ms,util", str(PROFILES / H100)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if r.returncode != 0:
        pytest.skip(f"proton-viewer failed: {r.stderr[-300:]}")
    theirs = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^[\s│├└─]*([0-9.]+|nan)\s+([0-9.]+|nan)\s+(\S+)", line)
        if m and m[3].endswith("_kernel"):
            theirs[m[3]] = (float(m[1]), float(m[2]))
    ours = {}
    for line in run(["view", "-m", "time/ms,util", H100]).stdout.splitlines()[1:]:
        parts = line.split()
        if parts and parts[-1].endswith("_kernel"):
            ours[parts[-1]] = (float(parts[0]), float(parts[1]))
    assert theirs, r.stdout
    for name, (t, u) in theirs.items():
        assert name in ours
        assert ours[name][0] == pytest.approx(t, rel=1e-3)
        assert ours[name][1] == pytest.approx(u, rel=1e-3)
