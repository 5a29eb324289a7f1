# SPDX-License-Identifier: Apache-2.0
"""``mode="pcsampling"`` of the "cupti" backend on a CUDA GPU (pytest -m gpu).

What the unit tests (tests/unit/test-pcsampling.c, test-cupti-pcsampling.c on a fake libcupti)
cannot show: that the real CUPTI's samples, through the real cubin's line table, land on the
Triton source lines that run. One child process (a process keeps its CUPTI subscriber for life)
runs two sessions on a kernel with a known hot loop (lines marked ``# HOT``):

* ``warm``: the kernel ran before start, before the process first used CUPTI (its cubin is handed
  over by profiler.start from Triton's caches);
* ``fresh``: in a second session, the kernel is compiled and its module loaded after start (the
  backend copies the cubin from CUPTI's module-load callback).

(CUPTI gives no PC records for a module loaded while CUPTI is attached but not sampling, e.g.
between two sessions: its samples are counted as non-user samples; docs/internals/cupti-backend.md.)

Checked for each: the kernel node has one child per source line of this file; the loop's lines
get most of the samples; stall-reason metrics are there; every sample CUPTI counted is
accounted for (samples filed + lost == totalSamples - droppedSamples - non-user samples); the
kernel's launch count is exact. Where the driver denies counter access, the refusal must name
the fix (NVreg_RestrictProfilingToAdminUsers) and the test is skipped saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

# PC sampling takes the GPU's counters (one user at a time).
pytestmark = [pytest.mark.gpu, pytest.mark.exclusive_gpu]

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

HERE = Path(__file__).resolve()

CHILD = r'''
import json, sys
import torch
import triton
import triton.language as tl
import flagprism.profiler as prof


@triton.jit
def hot_fresh(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.load(x_ptr + offs, mask=m)
    for i in range(ITERS):
        acc = acc * 1.0001 + 0.5  # HOT
        acc = tl.sqrt(acc * acc + 1.0)  # HOT
    tl.store(y_ptr + offs, acc, mask=m)


@triton.jit
def hot_warm(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.load(x_ptr + offs, mask=m)
    for i in range(ITERS):
        acc = acc * 0.9999 + 0.25  # HOT
        acc = tl.sqrt(acc * acc + 2.0)  # HOT
    tl.store(y_ptr + offs, acc, mask=m)


def run(kernel, out, launches):
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    try:
        sid = prof.start(out, backend="cupti", mode="pcsampling")
    except Exception as e:  # the refusal is checked by the parent
        return {"error": f"{type(e).__name__}: {e}"}
    with prof.scope("work"):
        for _ in range(launches):
            kernel[grid](x, y, n, ITERS=2048, BLOCK=1024)
    torch.cuda.synchronize()
    prof.finalize(sid)
    return {"stats": prof.pcsampling_stats()}


def main():
    outdir = sys.argv[1]
    facts = {}
    # compiled and loaded before the session starts (and before CUPTI was first used: CUPTI
    # gives no PC records for a module loaded while it is attached but not sampling)
    n = 1024
    x = torch.rand(n, device="cuda")
    hot_warm[(1,)](x, torch.empty_like(x), n, ITERS=2048, BLOCK=1024)
    torch.cuda.synchronize()
    facts["warm"] = run(hot_warm, outdir + "/warm", 5)
    # compiled and loaded while the (second) session samples
    facts["fresh"] = run(hot_fresh, outdir + "/fresh", 5)
    print(json.dumps(facts))


main()
'''


def _hot_lines(script: str) -> set[int]:
    return {i + 1 for i, line in enumerate(script.splitlines()) if line.endswith("# HOT")}


def _child(node: dict, name: str) -> dict | None:
    for c in node.get("children", []):
        if c["frame"]["name"] == name:
            return c
    return None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("pcs")
    script = d / "pcs_child.py"
    script.write_text(CHILD)
    # a fresh Triton cache: a cached cubin's line table names the file it was compiled from,
    # which is another temporary path on a machine that ran this test before
    env = dict(os.environ, TRITON_CACHE_DIR=str(d / "triton-cache"))
    r = subprocess.run(
        [sys.executable, str(script), str(d)], capture_output=True, text=True, timeout=300, env=env
    )
    assert r.returncode == 0, r.stdout + r.stderr
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    results = os.environ.get("FP_GPU_RESULTS_DIR")
    if results:  # the stats (CUPTI's statuses, GetData counts) travel with the run's results
        Path(results, "pcsampling_gpu_facts.json").write_text(json.dumps(facts, indent=1))
    return d, script, facts


@pytest.mark.parametrize("case, kernel", [("fresh", "hot_fresh"), ("warm", "hot_warm")])
def test_samples_land_on_the_hot_loop(run, case, kernel):
    d, script, facts = run
    f = facts[case]
    if "error" in f:
        if "NVreg_RestrictProfilingToAdminUsers" in f["error"]:
            pytest.skip(f"PC sampling not permitted on this machine: {f['error']}")
        pytest.fail(f"start(mode='pcsampling') failed: {f['error']}")
    st = f["stats"]
    tree = json.loads((d / f"{case}.hatchet").read_text())[0]
    work = _child(tree, "work")
    assert work is not None
    node = _child(work, kernel)
    assert node is not None, [c["frame"]["name"] for c in work.get("children", [])]
    assert node["metrics"]["count"] == 5  # launches counted exactly, sampling or not
    prefix = f"{script}:"
    lines: dict[int, dict] = {}
    other = 0.0
    for c in node.get("children", []):
        name = c["frame"]["name"]
        if name.startswith(prefix):
            lines[int(name[len(prefix) :])] = c["metrics"]
        else:
            other += c["metrics"].get("num_samples", 0)
    names = [c["frame"]["name"] for c in node.get("children", [])]
    assert lines, f"no source-line children: {names}; stats: {st}"
    total = sum(m.get("num_samples", 0) for m in lines.values()) + other
    hot = sum(m.get("num_samples", 0) for ln, m in lines.items() if ln in _hot_lines(CHILD))
    assert total > 100, st
    assert hot / total > 0.5, (hot, total, sorted(lines))
    reasons = {k for m in lines.values() for k in m if k.startswith("stalled_") and m[k] > 0}
    assert reasons, lines
    assert any(m.get("num_stalled_samples", 0) > 0 for m in lines.values())
    # every sample CUPTI counted is somewhere (or counted as lost), never silently dropped
    assert st["samples"] + st["lost"] == (
        st["total_samples"] - st["dropped_samples"] - st["nonuser_samples"]
    ), st
    assert st["on_lines"] + st["no_line"] + st["no_cubin"] + st["unfiled"] == st["samples"], st
    assert st["no_cubin"] == 0, st
    meta = json.loads((d / f"{case}.meta.json").read_text())
    assert "pcsampling_dropped_samples" in json.dumps(meta)
