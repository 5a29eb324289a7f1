# SPDX-License-Identifier: Apache-2.0
"""`flagprism profile` end to end on the Triton interpreter: a script (its arguments, its exit
status, its own start()/finalize() calls becoming no-ops, a failing script still writing the
profile), pytest as the program, and the command's usage errors. Runs the `cli` binary of
conftest.py with this interpreter as FLAGPRISM_PYTHON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _profkernels as pk  # noqa: E402
import trace_event_check  # noqa: E402

HERE = Path(__file__).resolve().parent

SCRIPT = textwrap.dedent(f"""\
    import sys
    sys.path.insert(0, {str(HERE)!r})
    import torch
    import flagprism.profiler as profiler
    import _profkernels as pk

    def main():
        sid = profiler.start("ignored_by_the_cli", context="shadow")
        with profiler.scope("work"):
            pk.add(torch.rand(2048), torch.rand(2048))
            pk.chain_outer(torch.rand(1024))
        assert profiler.finalize(sid) == []
        print("args:", sys.argv[1:], "main:", __name__)
        if sys.argv[1:2] == ["raise"]:
            raise RuntimeError("the script failed")
        return int(sys.argv[1]) if sys.argv[1:] else 0

    sys.exit(main())
    """)


def run(cli: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable, TRITON_INTERPRET="1")
    return subprocess.run(
        [str(cli), "profile", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    return path


def test_profile_a_script(cli: Path, script: Path, tmp_path: Path) -> None:
    r = run(
        cli,
        "-n",
        "out/prof",
        "-c",
        "python",
        "-d",
        "trace",
        "-k",
        "triton",
        str(script),
        "7",
        "--flag",
        cwd=tmp_path,
    )
    assert r.returncode == 7, r.stderr
    assert "args: ['7', '--flag'] main: __main__" in r.stdout
    assert (
        "flagprism: profile written: out/prof.hatchet, out/prof.chrome_trace.json, "
        "out/prof.meta.json"
    ) in r.stderr
    assert not (tmp_path / "ignored_by_the_cli.hatchet").exists()
    tree = pk.read_tree(tmp_path / "out/prof.hatchet")
    ks = pk.kernels(tree)
    assert sum(m["count"] for m in ks.values()) == 2
    launch = next(p for p in ks if p[-1] == "add_kernel[n=2048]")
    # The script's own frames, exactly: nothing of the bootstrap, runpy, flagprism or Triton.
    lines = SCRIPT.splitlines()
    module_line = lines.index("sys.exit(main())") + 1
    add_line = next(i for i, t in enumerate(lines, 1) if "pk.add(" in t)
    # python context: the scope first (its metrics sit above its kernels), then the call path
    assert launch == (
        "work",
        f"{script}:<module>@{module_line}",
        f"{script}:main@{add_line}",
        f"{pk.__file__}:add@{pk.LINES['add']}",
        "add_kernel[n=2048]",
    )
    assert ks[launch]["bytes"] == 3 * 4 * 2048 and ks[launch]["est_bytes"] == 2 * 12288
    assert trace_event_check.check_file(str(tmp_path / "out/prof.chrome_trace.json")) == []
    meta = json.loads((tmp_path / "out/prof.meta.json").read_text())
    assert meta["session"]["context"] == "python" and meta["session"]["hook"] == "triton"
    assert meta["environment"]["command"] == "flagprism profile"
    assert meta["environment"]["script_exit_status"] == "7"


def test_default_options(cli: Path, script: Path, tmp_path: Path) -> None:
    r = run(cli, str(script), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "flagprism: profile written: flagprism.hatchet, flagprism.meta.json" in r.stderr
    ks = pk.kernels(pk.read_tree(tmp_path / "flagprism.hatchet"))
    assert {p: m["count"] for p, m in ks.items()} == {
        ("work", "add_kernel"): 1,
        ("work", "add_plain"): 1,
    }


def test_failing_script_still_writes(cli: Path, script: Path, tmp_path: Path) -> None:
    r = run(cli, "-n", "failed", str(script), "raise", cwd=tmp_path)
    assert r.returncode == 1
    assert "RuntimeError: the script failed" in r.stderr
    assert "flagprism._run" not in r.stderr and "runpy" not in r.stderr  # the script's traceback
    assert "flagprism: profile written: failed.hatchet, failed.meta.json" in r.stderr
    meta = json.loads((tmp_path / "failed.meta.json").read_text())
    assert meta["counts"]["kernels"] == 2 and meta["environment"]["script_exit_status"] == "1"


def test_profile_pytest(cli: Path, tmp_path: Path) -> None:
    tests = tmp_path / "suite"
    tests.mkdir()
    (tests / "test_k.py").write_text(
        textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import torch
        import _profkernels as pk

        def test_one():
            pk.add(torch.rand(1024), torch.rand(1024))

        def test_two():
            pk.scale(torch.rand(1024), 3.0)
            pk.scale(torch.rand(1024), 3.0)
        """)
    )
    r = run(cli, "-n", "pt", "pytest", "-q", "-p", "no:cacheprovider", str(tests), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout
    assert "flagprism: profile written: pt.hatchet, pt.meta.json" in r.stderr
    ks = pk.kernels(pk.read_tree(tmp_path / "pt.hatchet"))
    assert {p: m["count"] for p, m in ks.items()} == {("add_kernel",): 1, ("scale_kernel",): 2}
    (tests / "test_bad.py").write_text("def test_bad():\n    assert False\n")
    r = run(cli, "-n", "pt2", "pytest", "-q", "-p", "no:cacheprovider", str(tests), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert (tmp_path / "pt2.hatchet").exists()


def _cuda_device() -> bool:
    """Whether PyTorch sees a CUDA device, TRITON_INTERPRET or not."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available()) and torch.version.hip is None


def test_usage_errors(cli: Path, tmp_path: Path) -> None:
    r = run(cli, cwd=tmp_path)
    assert r.returncode == 2 and "missing the script" in r.stderr
    r = run(cli, "-c", "pyton", "x.py", cwd=tmp_path)
    assert r.returncode == 2 and "did you mean 'python'?" in r.stderr
    r = run(cli, "-d", "timeline", "x.py", cwd=tmp_path)
    assert r.returncode == 2 and "takes tree or trace" in r.stderr
    r = run(cli, "-k", "launch", "x.py", cwd=tmp_path)
    assert r.returncode == 2
    r = run(cli, "nonexistent.py", cwd=tmp_path)
    assert r.returncode == 1 and "cannot read script 'nonexistent.py'" in r.stderr
    script = tmp_path / "ok.py"
    script.write_text("print('ran')\n")
    r = run(cli, "-b", "cupti", str(script), cwd=tmp_path)
    if _cuda_device():
        # A GPU machine (the tests still run with TRITON_INTERPRET=1): the backend starts.
        assert r.returncode == 0 and "ran" in r.stdout, r.stderr
    else:
        assert r.returncode == 1 and "the CUPTI backend cannot run: " in r.stderr, r.stderr
        assert "FP_ENOTSUP" in r.stderr or "not supported" in r.stderr, r.stderr
        assert "ran" not in r.stdout
    # Options after the script belong to the script.
    r = run(cli, str(script), "-c", "nonsense", cwd=tmp_path)
    assert r.returncode == 0 and "ran" in r.stdout


@pytest.mark.parametrize("tool", ["profile", "debug"])
def test_no_gpu_driver(cli: Path, tmp_path: Path, tool: str) -> None:
    """Without TRITON_INTERPRET and without a GPU driver, the program would die in Triton's
    "0 active drivers" error: the command says what to do instead, runs nothing, writes
    nothing. Where there is a GPU the same command just runs."""
    prog = tmp_path / "kernel_user.py"
    prog.write_text("print('ran')\n")
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable)
    for name in ("TRITON_INTERPRET", "FLAGPRISM_CUDA_DRIVER_PATH"):
        env.pop(name, None)
    r = subprocess.run(
        [str(cli), tool, str(prog)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    if _cuda_device():
        assert r.returncode == 0 and "ran" in r.stdout, r.stderr
        return
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(
        "flagprism: error: no GPU driver: run with TRITON_INTERPRET=1 to use Triton's interpreter"
    ), r.stderr
    assert "Traceback" not in r.stderr and "ran" not in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel_user.py"]
