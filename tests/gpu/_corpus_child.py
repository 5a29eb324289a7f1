# SPDX-License-Identifier: Apache-2.0
"""The interpreter half of tests/gpu/test_corpus_gpu.py's differential test: runs the corpus
(tests/python/corpus/) on Triton's interpreter in check mode, in a process of its own (whether
Triton interprets is fixed when it is imported, so the GPU test cannot do it in its own process),
and writes each case's normalised findings as JSON.

    TRITON_INTERPRET=1 python tests/gpu/_corpus_child.py OUT.json [CASE ...]

OUT.json: {case: {"correct": RUN, "planted": RUN}}, RUN = {"findings": [...], "kernels": [...],
"complete": bool, "error": str | None}. The correct version runs under every check, the planted
one under its case's checks (as tests/python/test_corpus.py does). A case that raises is recorded
with its error; the others still run.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str]) -> int:
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("run with TRITON_INTERPRET=1", file=sys.stderr)
        return 2
    out = Path(argv[1])
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import corpus

    import flagprism.debugger as debugger

    names = argv[2:] or [c.name for c in corpus.CASES if c.interpreter]
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        debugger.configure(output_dir=tmp)
        for name in names:
            case = corpus.BY_NAME[name]
            entry: dict[str, object] = {}
            for planted in (False, True):
                debugger.reset_summary()  # every case as its own program
                try:
                    _setup, runs = corpus.run_checked(debugger, case, "cpu", planted)
                    entry["planted" if planted else "correct"] = {
                        "findings": corpus.jsonable(corpus.findings_of(runs)),
                        "kernels": [r["kernel"] for r in runs],
                        "complete": all(r["complete"] for r in runs),
                        "error": None,
                    }
                except Exception as e:  # noqa: BLE001 - recorded, the other cases still run
                    debugger.deactivate()
                    debugger.clear_exported_runs()
                    entry["planted" if planted else "correct"] = {
                        "findings": [], "kernels": [], "complete": False, "error": f"{type(e).__name__}: {e}"}
            results[name] = entry
    out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
