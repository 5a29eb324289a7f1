# SPDX-License-Identifier: Apache-2.0
"""Diagnostic, run by hand on a GPU machine: which sequence of FlagPrism sessions leaves a tl.dot
kernel's PC samples without PC records (CUPTI's "non-user" samples)? Found with it on the H200:
the matmul launched unprofiled after sessions had begun (the "bench" sequence), until
start(mode="pcsampling") made Triton load its kernels' modules again while sampling
("bench_noreload" shows the old behaviour).

The ctypes probe (_pcs_probe.py) gets PC records for the same matmul in a fresh process, and in
a second sampling session; bench/bench_pcsampling.py did not (softmax's sessions first, then the
matmul's: a plain cupti session, then sampling). Each sequence runs in its own child process with
the kernels of bench/bench_pcsampling.py, all compiled and loaded before the first session, and
prints pcsampling_stats() of every sampling session.

    python tests/gpu/_pcs_seq.py [--out FILE] [SEQUENCE ...]     (no sequence: all of them)
"""

from __future__ import annotations

import os
import sys
import tempfile

SEQUENCES = {
    "dot": ["pcs:matmul"],
    "softmax_dot": ["pcs:softmax", "pcs:matmul"],
    "cupti_dot": ["cupti:matmul", "pcs:matmul"],
    "cupti_softmax_dot": ["cupti:softmax", "pcs:softmax", "cupti:matmul", "pcs:matmul"],
    "dot_dot": ["pcs:matmul", "pcs:matmul"],
    "softmax3_dot": ["pcs:softmax"] * 3 + ["pcs:matmul"],
    # bench/bench_pcsampling.py --quick's order: per case, rounds of (bare, cupti, pcs) rotated
    "bench": ["bare:softmax", "cupti:softmax", "pcs:softmax", "cupti:softmax", "pcs:softmax", "bare:softmax",
              "pcs:softmax", "bare:softmax", "cupti:softmax",
              "bare:matmul", "cupti:matmul", "pcs:matmul", "cupti:matmul", "pcs:matmul", "bare:matmul",
              "pcs:matmul", "bare:matmul", "cupti:matmul"],
    "cupti3_dot": ["cupti:softmax"] * 3 + ["pcs:matmul"],
}
# the same without the module reload of start(mode="pcsampling") (FLAGPRISM_PCS_RELOAD=0)
SEQUENCES["bench_noreload"] = SEQUENCES["bench"]


def child(name: str) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "bench"))
    import bench_pcsampling as bp
    import torch

    from flagprism import profiler as prof

    if name.endswith("_noreload"):
        os.environ["FLAGPRISM_PCS_RELOAD"] = "0"

    fns = bp.cases()
    for fn in fns.values():
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    out: dict = {"sequence": name, "sessions": []}
    tmp = tempfile.mkdtemp(prefix="fp-pcs-seq-")
    for i, step in enumerate(SEQUENCES[name]):
        mode, case = step.split(":")
        if mode == "bare":
            for _ in range(50):
                fns[case]()
            torch.cuda.synchronize()
            continue
        kw = {"backend": "cupti"}
        if mode == "pcs":
            kw["mode"] = "pcsampling"
        sid = prof.start(os.path.join(tmp, f"s{i}"), **kw)
        for _ in range(50):
            fns[case]()
        torch.cuda.synchronize()
        prof.finalize(sid)
        if mode == "pcs":
            st = prof.pcsampling_stats()
            out["sessions"].append({"step": step, **{k: st.get(k) for k in (
                "total_samples", "nonuser_samples", "samples", "on_lines", "no_line", "no_cubin",
                "no_launch", "getdata_records", "cubins", "launches", "modules_reloaded")}})
    return out


def main() -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _pcs_probe import run_children

    return run_children(__file__, child, list(SEQUENCES), 120)


if __name__ == "__main__":
    sys.exit(main())
