# SPDX-License-Identifier: Apache-2.0
"""The planted-bug corpus (tests/python/corpus/) on a CUDA GPU, and the differential test against
Triton's interpreter.

* every planted bug is found on the GPU exactly as its case says (the same table the interpreter
  test, tests/python/test_corpus.py, checks), every launch complete;
* every correct version gives no finding under every check, its results are torch's, and they are
  bit for bit those of the uninstrumented run under `bounds` (close to them under the value
  checks, which may change what ptxas contracts; exact where the kernel's atomics make the order
  of additions vary from run to run is not asked);
* differential: each case runs on the GPU in this process and on the interpreter in a child
  process (tests/gpu/_corpus_child.py: the interpreter mode is fixed at import), and the findings
  agree on kind, kernel, line, helper chain, parameter, location, bytes, lanes, first program and
  address (relative to the view), loop iteration, counts. The corpus chooses its memory layout (an
  arena per case) so locations agree too; where one still differs, the GPU's must be what its own
  layout gives (corpus.explain_location), nothing else may differ.

One call: `pytest -m gpu tests/gpu/test_corpus_gpu.py -q`. Without a GPU the tests are collected
and skipped; the interpreter half (the child) is exercised by tests/python/test_corpus.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PYTESTS = HERE.parent / "python"
sys.path.insert(0, str(PYTESTS))

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

import corpus  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402


def _cuda() -> bool:
    return os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available()


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU (and TRITON_INTERPRET unset)"),
]

DEV = "cuda"
INTERPRETED = [c for c in corpus.CASES if c.interpreter]
#: cases whose results depend on the order in which atomics land (float sums): not bit for bit
ATOMIC_ORDER = {"embedding_bwd_padding_idx", "layer_norm_bwd_lock_array_short"}


def _params(cases):
    return [pytest.param(c, id=c.name, marks=[pytest.mark.compat(f) for f in c.features]) for c in cases]


@pytest.fixture(scope="module", autouse=True)
def _descriptor_scratch():
    """Device-made tensor descriptors need global scratch memory."""
    if not _cuda():
        yield
        return

    def alloc(size: int, alignment: int, stream):
        return torch.empty(size, device=DEV, dtype=torch.int8)

    triton.set_allocator(alloc)
    yield


@pytest.fixture
def dbg(tmp_path):
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger.configure(output_dir=str(tmp_path / "fp_debug"))
    debugger.reset_summary()
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger.reset_summary()


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory):
    """The whole corpus on the interpreter, in a child process (CPU only)."""
    out = tmp_path_factory.mktemp("corpus_interp") / "findings.json"
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    # FP_INTERPRETER_PYTHONPATH: packages for the interpreter's process only (tests/gpu/run.sh
    # puts NumPy < 2.4 there: Triton 3.6's interpreter fails on loops with loaded bounds under
    # NumPy 2.4, known-bad row triton3.6-interpreter-numpy2.4; the GPU keeps the machine's NumPy)
    extra = os.environ.get("FP_INTERPRETER_PYTHONPATH")
    if extra:
        env["PYTHONPATH"] = extra + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # the known-bad table decides whether the interpreter's process can run the corpus
    probe = subprocess.run(
        [sys.executable, "-c", "from flagprism import compat\n"
         "print('\\n'.join(i.message() for i in compat.known_issues('interpreter')\n"
         "                 if i.id == compat.ROW_NUMPY_SCALARS))"],
        env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert not probe.stdout.strip(), (
        f"the interpreter half cannot run here: {probe.stdout.strip()} (put a NumPy 2.3 wheel in "
        ".whl/, which tests/gpu/run.sh installs for it, or name a folder holding one in "
        "FP_INTERPRETER_PYTHONPATH)")
    proc = subprocess.run([sys.executable, str(HERE / "_corpus_child.py"), str(out)], env=env, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def _complete(runs, setup) -> None:
    assert len(runs) == len(setup.launches), [r["kernel"] for r in runs]
    bad = [(r["kernel"], r.get("error"), r.get("overflow_count")) for r in runs if not r["complete"]]
    assert not bad, f"incomplete launches: {bad}"


def _explainer(setup):
    """explain(finding): (location, other_param) from where this run's tensors lie."""
    def explain(f):
        t = setup.tensors.get(f["param"])
        if t is None or f.get("addr") is None:
            return None
        return corpus.explain_location(f["param"], t.data_ptr() + f["addr"], setup.tensors)

    return explain


# ------------------------------------------------------------------------------------------------
# The corpus on the GPU
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", _params(corpus.CASES))
def test_planted_bug_gpu(dbg, case):
    setup, runs = corpus.run_checked(dbg, case, DEV, planted=True)
    _complete(runs, setup)
    found = corpus.findings_of(runs)
    problems = corpus.compare(case.expect(setup), found)
    assert not problems, f"{case.name}:\n  " + "\n  ".join(problems)
    # the location the GPU reports is the one its own layout gives
    explain = _explainer(setup)
    for f in found:
        if f["kind"] == "out_of_bounds" and f["param_known"]:
            assert explain(f) == (f["location"], f["other_param"]), f
    if setup.verify is not None:
        setup.verify()


@pytest.mark.parametrize("case", _params(corpus.CASES))
def test_correct_version_gpu(dbg, case):
    plain = corpus.run_plain(case, DEV, planted=False)
    plain.verify()
    # bounds only: addresses are observed, nothing else changes: bit for bit
    setup, runs = corpus.run_checked(dbg, case, DEV, planted=False, checks="bounds")
    _complete(runs, setup)
    assert corpus.findings_of(runs) == []
    setup.verify()
    for a, b in zip(plain.outputs, setup.outputs):
        if case.name in ATOMIC_ORDER:
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-5)
        else:
            assert torch.equal(a, b), f"{case.name}: bounds-checked results differ from the plain run"
    # every check: no finding, the same results up to contraction
    setup, runs = corpus.run_checked(dbg, case, DEV, planted=False, checks=corpus.ALL_CHECKS)
    _complete(runs, setup)
    assert corpus.compare([], corpus.findings_of(runs)) == []
    setup.verify()
    for a, b in zip(plain.outputs, setup.outputs):
        if a.is_floating_point():
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-5)
        else:
            assert int((a.int() - b.int()).abs().max()) <= 1


# ------------------------------------------------------------------------------------------------
# Differential: the GPU against the interpreter
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("planted", [True, False], ids=["planted", "correct"])
@pytest.mark.parametrize("case", _params(INTERPRETED))
def test_gpu_matches_interpreter(dbg, interpreted, case, planted):
    other = interpreted[case.name]["planted" if planted else "correct"]
    assert other["error"] is None, f"the interpreter run failed: {other['error']}"
    assert other["complete"]
    setup, runs = corpus.run_checked(dbg, case, DEV, planted=planted)
    _complete(runs, setup)
    assert [r["kernel"] for r in runs] == other["kernels"]
    gpu = corpus.jsonable(corpus.findings_of(runs))
    problems = corpus.differences(gpu, other["findings"], _explainer(setup))
    assert not problems, f"{case.name} ({'planted' if planted else 'correct'}), GPU vs interpreter:\n  " + \
        "\n  ".join(problems)
