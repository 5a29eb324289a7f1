# SPDX-License-Identifier: Apache-2.0
"""GPU test session helpers: each failure is written, as it happens, to
`$FP_GPU_RESULTS_DIR/failures.txt` (tests/gpu/run.sh brings that folder back), so a run cut off
by the lent machine's time limit still says why every test that failed before the cut failed."""

from __future__ import annotations

import os
from pathlib import Path


def pytest_runtest_logreport(report):
    out = os.environ.get("FP_GPU_RESULTS_DIR")
    if not out or not report.failed:
        return
    with open(Path(out) / "failures.txt", "a", encoding="utf-8") as f:
        f.write(f"===== {report.nodeid} ({report.when}, {report.duration:.1f} s)\n")
        f.write(report.longreprtext[-6000:] + "\n")
