# SPDX-License-Identifier: Apache-2.0
"""The Debugger's findings on a CUDA GPU: the planted suite of tests/python/kernels/planted.py
(each planted bug found with the right statement and parameter, nothing reported for the correct
kernels) in marker mode and in sanitize mode, and each planted kernel under compute-sanitizer
memcheck (when `compute-sanitizer` is on PATH) with what it reports, side by side.

The memcheck results are recorded, not asserted (memcheck does not see out-of-bounds accesses
that stay inside PyTorch's caching-allocator segments, and it has no NaN or precision checks):
they go to `$FP_GPU_RESULTS_DIR/findings_memcheck.json` (default: the test's temporary
directory) and into the test output (`-s` shows them).

Run as a script, `python tests/gpu/test_findings_gpu.py --case NAME` launches one case without
the Debugger (what memcheck runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PYTESTS = HERE.parent / "python"
sys.path.insert(0, str(PYTESTS))


def _run_case(name: str) -> int:
    import torch

    from kernels import planted

    planted.launch(planted.BY_NAME[name], "cuda")
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--case":
    raise SystemExit(_run_case(sys.argv[2]))

import pytest  # noqa: E402

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import flagprism.debugger as debugger  # noqa: E402

from kernels import planted  # noqa: E402

MARKED = [c for c in planted.CASES if not c.sanitize_only]
PLANTED = [c for c in planted.CASES if c.planted]


@pytest.fixture
def dbg(tmp_path):
    debugger.configure(output_dir=str(tmp_path / "fp_debug"))
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()




@pytest.mark.parametrize("addr_level", [1, 2])
@pytest.mark.parametrize("case", MARKED, ids=[c.name for c in MARKED])
def test_planted_suite_gpu(dbg, case, addr_level):
    dbg.activate(level=1, addr_level=addr_level)
    planted.launch(case, "cuda")
    torch.cuda.synchronize()
    run = planted.one_run(dbg)
    assert run["backend"] == "cuda" and run["complete"]
    planted.check(case, run["findings"])


@pytest.mark.parametrize("case", planted.CASES, ids=[c.name for c in planted.CASES])
def test_sanitize_suite_gpu(dbg, case):
    dbg.activate(sanitize=True)
    planted.launch(case, "cuda")
    torch.cuda.synchronize()
    run = planted.one_run(dbg)
    assert run["sanitize"] and run["complete"]
    assert {f["kind"] for f in run["findings"]} <= {"out_of_bounds"}
    planted.check(case, run["findings"], {"out_of_bounds"})
    if not run["findings_count"]:
        # check mode writes a launch's report only when it has findings (all_reports=True: always)
        assert run["report"] is None and run["txt"] is None
    else:
        assert run["report"]["statements"] == []


def _memcheck(name: str, timeout: float = 600) -> dict[str, Any]:
    exe = shutil.which("compute-sanitizer")
    assert exe is not None
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    t0 = time.perf_counter()
    r = subprocess.run([exe, "--tool", "memcheck", sys.executable, str(Path(__file__).resolve()), "--case", name],
                       capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - t0
    text = r.stdout + r.stderr
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    kinds = sorted(set(re.findall(r"========= (Invalid __global__ \w+ of size \d+ bytes)", text)))
    return {"case": name, "memcheck_errors": int(m.group(1)) if m else None, "memcheck_kinds": kinds[:5],
            "returncode": r.returncode, "wall_s": round(wall, 2),
            "tail": text[-600:] if m is None else ""}


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="compute-sanitizer is not on PATH")
def test_memcheck_side_by_side(dbg, tmp_path):
    rows = []
    for case in PLANTED:
        dbg.activate(level=1, addr_level=1)
        planted.launch(case, "cuda")
        torch.cuda.synchronize()
        run = planted.one_run(dbg)
        dbg.deactivate()
        missing, _extra = planted.unmatched(case, run["findings"])
        row = _memcheck(case.name)
        row.update(flagprism_found=not missing, flagprism_kinds=sorted({f["kind"] for f in run["findings"]}),
                   planted_kinds=sorted({e.kind for e in case.expect}))
        rows.append(row)
    out_dir = Path(os.environ.get("FP_GPU_RESULTS_DIR", str(tmp_path)))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "findings_memcheck.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"\n{'case':28} {'flagprism':10} {'memcheck errors':16} planted kinds")
    for r in rows:
        print(f"{r['case']:28} {'found' if r['flagprism_found'] else 'MISSED':10} "
              f"{str(r['memcheck_errors']):16} {','.join(r['planted_kinds'])}")
    # every memcheck run finished and printed its summary
    assert all(r["memcheck_errors"] is not None for r in rows), rows
    assert all(r["flagprism_found"] for r in rows)
