# SPDX-License-Identifier: Apache-2.0
"""Signals that end `flagprism profile` and `flagprism debug` (issue 17), on the Triton
interpreter with real signals: SIGTERM, SIGHUP and SIGINT while the program runs write what was
recorded, marked incomplete, leave no temporary file and exit with 128 + the signal's number; a
signal while the outputs are written gives them a second more (what is whole then stays, never a
half-written file or a mix; test_profiler_safety.py stalls the writing on a FIFO); a signal the
parent ignores stays ignored. Also the command's checks before the program runs: an output
location that cannot be written and a directory as the script fail at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

HERE = Path(__file__).resolve().parent

# Launches kernels until a signal ends it; says "ready" once some are recorded.
LOOP = textwrap.dedent(f"""\
    import sys, time
    sys.path.insert(0, {str(HERE)!r})
    import torch
    import _profkernels as pk

    x = torch.rand(1024)
    n = 0
    while True:
        pk.add(x, x)
        n += 1
        if n == 3:
            print("ready", flush=True)
        time.sleep(0.005)
    """)

# Many scopes, so that writing the Chrome trace takes a while; says "end" as its last act.
MANY_SCOPES = textwrap.dedent("""\
    import flagprism.profiler as profiler

    for i in range(300000):
        with profiler.scope("s%d" % (i % 1000)):
            pass
    print("end", flush=True)
    """)


def env() -> dict[str, str]:
    return dict(os.environ, FLAGPRISM_PYTHON=sys.executable, TRITON_INTERPRET="1")


def start(cli: Path, cwd: Path, *args: str, **kw: Any) -> subprocess.Popen[str]:
    # A session of its own, so that a hung run can be killed with everything it started.
    return subprocess.Popen(
        [str(cli), *args],
        cwd=cwd,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,
    )


def wait_for(p: subprocess.Popen[str], word: str) -> None:
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.strip() == word, (line, p.stderr.read() if p.poll() is not None else "")


def finish(p: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return p.returncode, err


def leftovers(d: Path) -> list[str]:
    return sorted(
        f.name for f in d.iterdir() if ".tmp" in f.name or f.name.startswith(".flagprism")
    )


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_signal_during_the_program_writes_the_profile(cli: Path, tmp_path: Path, sig: str) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    p = start(cli, tmp_path, "profile", "-n", "p", "-d", "trace", "loop.py")
    wait_for(p, "ready")
    p.send_signal(getattr(signal, sig))
    rc, err = finish(p)
    num = int(getattr(signal, sig))
    assert rc == 128 + num, err
    assert f"ended by {sig}" in err, err
    assert "profile written: p.hatchet, p.chrome_trace.json, p.meta.json" in err, err
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    assert meta["incomplete"] is True
    assert any(f"ended by {sig} (signal {num})" in r for r in meta["incomplete_reasons"]), meta
    assert meta["counts"]["kernels"] >= 3
    assert meta["environment"]["script_exit_status"] == str(128 + num)
    json.loads((tmp_path / "p.hatchet").read_text())
    json.loads((tmp_path / "p.chrome_trace.json").read_text())
    assert leftovers(tmp_path) == []


def test_signal_while_writing_keeps_what_is_whole(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "many.py").write_text(MANY_SCOPES)
    p = start(cli, tmp_path, "profile", "-n", "p", "-d", "trace", "many.py")
    wait_for(p, "end")
    p.send_signal(signal.SIGTERM)  # the program is done: this lands in the writing (or just before)
    rc, err = finish(p)
    assert rc == 128 + signal.SIGTERM, err
    # Every output there is whole; the metadata lists exactly those; no temporary file is left.
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    json.loads((tmp_path / "p.hatchet").read_text())
    if "chrome_trace" in meta["outputs"]:
        trace = json.loads((tmp_path / "p.chrome_trace.json").read_text())
        assert len(trace["traceEvents"]) >= 300000
    assert leftovers(tmp_path) == []
    if "arrived while the outputs were written" in err:
        # the program had finished: the outputs are whole if they were done within the second
        assert meta["incomplete"] is (set(meta["outputs"]) != {"hatchet", "chrome_trace"})
    else:
        assert meta["incomplete"] is True  # it came a moment earlier, before the writing


def test_ignored_signal_stays_ignored(cli: Path, tmp_path: Path) -> None:
    """nohup (SIGHUP ignored by the parent): the program keeps running through a SIGHUP."""
    (tmp_path / "loop.py").write_text(LOOP)
    p = start(
        cli,
        tmp_path,
        "profile",
        "-n",
        "p",
        "loop.py",
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    wait_for(p, "ready")
    p.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    assert p.poll() is None  # still running
    p.send_signal(signal.SIGTERM)
    rc, err = finish(p)
    assert rc == 128 + signal.SIGTERM, err


def test_signal_during_debug_prints_the_summary(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    p = start(cli, tmp_path, "debug", "--sanitize", "-o", "dbg", "loop.py")
    wait_for(p, "ready")
    p.send_signal(signal.SIGTERM)
    rc, err = finish(p)
    assert rc == 128 + signal.SIGTERM, err
    assert "flagprism debug --sanitize:" in err and "3 instrumented" in err, err
    assert "INCOMPLETE: the program was ended by SIGTERM" in err, err
    assert "ended by SIGTERM" in err, err
    assert leftovers(tmp_path / "dbg") == []


def test_profile_checks_the_output_location_before_running(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("open('ran', 'w').write('yes')\n")
    (tmp_path / "plainfile").write_text("x")
    cases = [("plainfile/p", "cannot create the directory"), ("n" * 300, "ENAMETOOLONG")]
    if os.path.isdir("/sys"):
        # sysfs takes no new file, even from root: read-only (EROFS) or refused (EACCES/EPERM)
        cases.append(("/sys/p", ""))
    for name, why in cases:
        r = subprocess.run(
            [str(cli), "profile", "-n", name, "prog.py"],
            cwd=tmp_path,
            env=env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 1, r.stderr
        assert why in r.stderr, r.stderr
        if name == "/sys/p":
            assert any(e in r.stderr for e in ("(EROFS)", "(EACCES)", "(EPERM)")), r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "ran").exists()  # the program never ran


def test_debug_checks_the_output_location_before_running(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("open('ran', 'w').write('yes')\n")
    (tmp_path / "plainfile").write_text("x")
    r = subprocess.run(
        [str(cli), "debug", "-o", "plainfile/reports", "prog.py"],
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1, r.stderr
    assert "cannot create the report directory" in r.stderr and "ENOTDIR" in r.stderr, r.stderr
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("command", ["profile", "debug"])
def test_a_directory_is_not_a_script(cli: Path, tmp_path: Path, command: str) -> None:
    (tmp_path / "pkg").mkdir()
    r = subprocess.run(
        [str(cli), command, "pkg"],
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1, r.stderr
    assert "'pkg' is a directory without a __main__.py" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_profile_write_failure_at_the_end_names_the_cause(cli: Path, tmp_path: Path) -> None:
    """The program ran fine but its outputs cannot be written (it put a file where the output
    directory was): the cause is named with its errno, the exit status says so, and the profile
    is written to a rescue directory instead."""
    (tmp_path / "prog.py").write_text(
        "import shutil\nshutil.rmtree('out')\nopen('out', 'w').write('in the way')\n"
    )
    rescue = tmp_path / "rescue"
    rescue.mkdir()
    r = subprocess.run(
        [str(cli), "profile", "-n", "out/p", "prog.py"],
        cwd=tmp_path,
        env=dict(env(), TMPDIR=str(rescue)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1, r.stderr
    assert "writing the outputs failed" in r.stderr and "(ENOTDIR)" in r.stderr, r.stderr
    # nothing recorded is lost: the profile went to a private rescue directory, which it names
    (meta,) = rescue.glob("flagprism-rescue-*/p.meta.json")
    assert str(meta.parent) in r.stderr, r.stderr
    assert json.loads(meta.read_text())["outputs"]["hatchet"] == str(meta.parent / "p.hatchet")
    assert leftovers(tmp_path) == []
