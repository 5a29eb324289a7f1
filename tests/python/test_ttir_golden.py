# SPDX-License-Identifier: Apache-2.0
"""Golden tests for the TTIR parser and estimator through `fp-test-tool`.

For every checked-in sample tests/data/ttir/<name>.ttir, `fp-test-tool ttir-dump` and
`fp-test-tool ttir-estimate` and `fp-test-tool ttir-facts` must print exactly
tests/data/golden/ttir-<name>.dump.txt, ttir-<name>.estimate.txt and ttir-<name>.facts.txt. The tool is taken from $FP_TEST_TOOL (default
build/tests/helper/fp-test-tool); the tests skip when it has not been built. After an intended
change, regenerate the golden files with FP_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
GOLDEN = DATA / "golden"
SAMPLES = sorted((DATA / "ttir").glob("*.ttir"))
COMMANDS = {"ttir-dump": "dump", "ttir-estimate": "estimate", "ttir-facts": "facts"}


def tool_path() -> Path:
    path = Path(os.environ.get("FP_TEST_TOOL", "build/tests/helper/fp-test-tool"))
    return path if path.is_absolute() else REPO / path


def run_tool(command: str, sample: Path) -> str:
    tool = tool_path()
    if not tool.is_file():
        pytest.skip(f"{tool} is not built (set FP_TEST_TOOL to the fp-test-tool binary)")
    proc = subprocess.run(
        [str(tool), command, str(sample)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"{command} {sample.name} failed: {proc.stderr}"
    return proc.stdout


def test_samples_exist() -> None:
    assert len(SAMPLES) >= 10


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_ttir_golden(command: str, sample: Path) -> None:
    out = run_tool(command, sample)
    golden = GOLDEN / f"ttir-{sample.stem}.{COMMANDS[command]}.txt"
    if os.environ.get("FP_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
        return
    assert golden.is_file(), f"{golden.name} is missing: run with FP_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    if out != expected:
        import difflib

        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True),
                out.splitlines(True),
                str(golden.name),
                "fp-test-tool",
                n=1,
            )
        )
        pytest.fail(f"{command} {sample.name} differs from {golden.name}:\n{diff[:4000]}")


def test_tool_rejects_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttir"
    bad.write_text("tt.func @k() {\n  tt.return loc(#loc9)\n}\n")
    tool = tool_path()
    if not tool.is_file():
        pytest.skip(f"{tool} is not built")
    proc = subprocess.run(
        [str(tool), "ttir-dump", str(bad)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert "bad.ttir:2:17: FP_EFORMAT: undefined location alias #loc9" in proc.stderr
