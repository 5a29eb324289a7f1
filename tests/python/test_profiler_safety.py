# SPDX-License-Identifier: Apache-2.0
"""The Profiler's guarantees on names, signals, full disks, concurrency and hostile input
(issue 32), on the Triton interpreter: a relative name is resolved at start (a chdir later loses
nothing); another path to the same place, or another process, cannot take a name a session
writes; an invalid RANK is refused; two threads finalizing at once; scopes deeper than the limit
are counted and dropped with one warning; a lone surrogate in a scope name; a full disk loses
nothing (the profile is rescued, the metadata gives the real reason); a FIFO where the metadata
goes neither hangs nor swallows SIGTERM; SIGTERM while the outputs are written ends the writing
within a second with what was complete. Also the twin cache's fallback directory (owner and mode
checked), metric names with '/', and control characters in the Debugger's text summary."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import flagprism.profiler as profiler  # noqa: E402


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    rescue = tmp_path / "rescue"
    rescue.mkdir(exist_ok=True)
    return dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        TRITON_INTERPRET="1",
        TMPDIR=str(rescue),
        **extra,
    )


def run(cli: Path, cwd: Path, *args: str, timeout: float = 120, **extra: str) -> Any:
    return subprocess.run(
        [str(cli), *args],
        cwd=cwd,
        env=env(cwd, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def no_leftovers(d: Path) -> None:
    left = [
        f.name
        for f in d.iterdir()
        if ".tmp" in f.name or f.name.startswith(".flagprism") or f.name.endswith(".lock")
    ]
    assert left == [], left


# ---- names: resolved at start, one writer per place ---------------------------------------------


def test_relative_name_survives_a_chdir(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "prog.py").write_text("import os\nos.chdir('elsewhere')\n")
    r = run(cli, tmp_path, "profile", "-n", "out/prof", "prog.py")
    assert r.returncode == 0, r.stderr
    assert "profile written: out/prof.hatchet, out/prof.meta.json" in r.stderr, r.stderr
    json.loads((tmp_path / "out" / "prof.hatchet").read_text())
    assert not (tmp_path / "elsewhere" / "out").exists()
    no_leftovers(tmp_path / "out")


def test_same_place_through_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r" / "real").mkdir(parents=True)
    (tmp_path / "r" / "alias").symlink_to("real")
    sid = profiler.start(str(tmp_path / "r" / "real" / "q"), backend="host")
    try:
        with pytest.raises(ValueError, match="already writes"):
            profiler.start(str(tmp_path / "r" / "alias" / "q"), backend="host")
    finally:
        profiler.finalize(sid)
    no_leftovers(tmp_path / "r" / "real")


def test_two_processes_with_one_name(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "wait.py").write_text("import sys\nprint('ready', flush=True)\nsys.stdin.read()\n")
    (tmp_path / "prog.py").write_text("open('ran', 'w').write('yes')\n")
    first = subprocess.Popen(
        [str(cli), "profile", "-n", "p", "wait.py"],
        cwd=tmp_path,
        env=env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "ready"
        r = run(cli, tmp_path, "profile", "-n", "p", "prog.py")
        assert r.returncode == 1, r.stderr
        assert f"another profiling session (process {first.pid}) already writes 'p'" in r.stderr
        assert not (tmp_path / "ran").exists()  # refused before the program ran
    finally:
        _out, err = first.communicate("", timeout=120)
    assert first.returncode == 0, err
    json.loads((tmp_path / "p.hatchet").read_text())
    no_leftovers(tmp_path)


@pytest.mark.parametrize("rank", ["abc", "1/2", "-1", "4"])
def test_invalid_rank_is_refused(cli: Path, tmp_path: Path, rank: str) -> None:
    (tmp_path / "prog.py").write_text("open('ran', 'w').write('yes')\n")
    for cmd in (["profile", "-n", "p"], ["debug", "-o", "dbg"]):
        r = run(cli, tmp_path, *cmd, "prog.py", RANK=rank, WORLD_SIZE="4")
        assert r.returncode == 1, r.stderr
        assert "the ranks would overwrite each other's files" in r.stderr, r.stderr
        assert not (tmp_path / "ran").exists()


# ---- threads ------------------------------------------------------------------------------------


def test_concurrent_finalize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads call finalize() at once, both after listing the session: the second finds it
    finalized and skips it (it raised KeyError)."""
    barrier = threading.Barrier(2)
    original = profiler._finalize

    def both_listed(targets: list[int], fmt: str) -> list[str]:
        barrier.wait(timeout=30)
        return original(targets, fmt)

    monkeypatch.setattr(profiler, "_finalize", both_listed)
    profiler.start(str(tmp_path / "p"), backend="host")
    results: list[Any] = []

    def fin() -> None:
        try:
            results.append(profiler.finalize())
        except BaseException as e:  # noqa: BLE001
            results.append(e)

    threads = [threading.Thread(target=fin) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(map(repr, results)) == sorted(
        [repr([]), repr([str(tmp_path / "p.hatchet"), str(tmp_path / "p.meta.json")])]
    ), results


# ---- scopes -------------------------------------------------------------------------------------


def test_scopes_too_deep_are_counted_and_dropped(tmp_path: Path) -> None:
    sid = profiler.start(str(tmp_path / "p"), backend="host")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            profiler._warned_too_deep = False
            for i in range(300):
                profiler.enter_scope(f"s{i}", metrics={"bytes": 1})
            for i in reversed(range(300)):
                profiler.exit_scope(f"s{i}")
    finally:
        profiler.finalize(sid)
    too_deep = [w for w in caught if "nested deeper than" in str(w.message)]
    assert len(too_deep) == 1, [str(w.message) for w in caught]
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    assert meta["lost"]["scopes_too_deep"] == 44
    assert meta["incomplete"] is False


def test_lone_surrogate_in_a_scope_name(tmp_path: Path) -> None:
    sid = profiler.start(str(tmp_path / "p"), backend="host")
    try:
        with profiler.scope("bad\ud800name", {"x\udcff": 1}):
            profiler.enter_state("st\ud801")
            profiler.exit_state()
    finally:
        profiler.finalize(sid)
    names = json.dumps(json.loads((tmp_path / "p.hatchet").read_text()))
    assert "bad\\\\ud800name" in names, names


def test_metric_name_with_a_slash(cli: Path, tmp_path: Path) -> None:
    sid = profiler.start(str(tmp_path / "p"), backend="host")
    try:
        with profiler.scope("step", {"bytes/iter": 3}):
            pass
    finally:
        profiler.finalize(sid)
    for args in (
        ["view", "p.hatchet"],
        ["view", "-m", "bytes/iter", "p.hatchet"],
        ["view", "-m", "bytes/iter/%", "p.hatchet"],
        ["report", "-q", "-m", "bytes/iter", "p.hatchet"],
    ):
        r = run(cli, tmp_path, *args)
        assert r.returncode == 0, (args, r.stderr)
    r = run(cli, tmp_path, "view", "-m", "bytes/iter", "p.hatchet")
    assert "bytes/iter" in r.stdout and " 3 " in r.stdout, r.stdout


# ---- full disks, FIFOs and signals ---------------------------------------------------------------


def test_full_disk_loses_nothing_and_says_why(cli: Path, tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("this container has no /dev/full")
    (tmp_path / "prog.py").write_text("print('ran')\n")
    (tmp_path / "p.hatchet").symlink_to("/dev/full")
    r = run(cli, tmp_path, "profile", "-n", "p", "prog.py")
    assert r.returncode == 1, r.stderr
    assert "No space left on device (ENOSPC)" in r.stderr, r.stderr
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    assert meta["incomplete"] is True
    (why,) = meta["incomplete_reasons"]
    assert "(ENOSPC)" in why and "written to" in why, why
    assert "process ended" not in why
    rescued = Path(meta["outputs"]["hatchet"])
    assert rescued.parent.parent == tmp_path / "rescue"
    assert stat.S_IMODE(os.stat(rescued.parent).st_mode) == 0o700
    json.loads(rescued.read_text())
    no_leftovers(tmp_path)


def test_fifo_where_the_metadata_goes(cli: Path, tmp_path: Path) -> None:
    """Nothing reads the FIFO back (it hung there) and nothing waits on it: the metadata is
    refused there (no reader) and goes to the rescue directory."""
    (tmp_path / "prog.py").write_text("print('ran')\n")
    os.mkfifo(tmp_path / "p.meta.json")
    r = run(cli, tmp_path, "profile", "-n", "p", "prog.py", timeout=60)
    assert r.returncode == 1, r.stderr
    assert "no process is reading this FIFO (ENXIO)" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "p.meta.json").st_mode)
    (meta,) = (tmp_path / "rescue").glob("flagprism-rescue-*/p.meta.json")
    assert json.loads(meta.read_text())["outputs"]["hatchet"] == "p.hatchet"
    json.loads((tmp_path / "p.hatchet").read_text())


MANY_SCOPES = textwrap.dedent("""\
    import flagprism.profiler as profiler

    for i in range(20000):
        with profiler.scope("s%d" % (i % 100)):
            pass
    print("end", flush=True)
    """)


@pytest.mark.serial  # times the end after SIGTERM (5 s): nothing else may load the machine
def test_sigterm_while_writing_to_a_stalled_reader(cli: Path, tmp_path: Path) -> None:
    """The trace goes to a FIFO whose reader never reads: the writing waits. SIGTERM ends it
    within a second: what was complete (the Hatchet file) stays, the FIFO is not replaced, the
    metadata says the writing did not finish, the signal decides the exit status."""
    (tmp_path / "many.py").write_text(MANY_SCOPES)
    fifo = tmp_path / "p.chrome_trace.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # opens, never reads
    p = subprocess.Popen(
        [str(cli), "profile", "-n", "p", "-d", "trace", "many.py"],
        cwd=tmp_path,
        env=env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "end"
        time.sleep(1.0)  # the writing has begun and waits on the FIFO
        assert p.poll() is None
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        os.close(reader)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert took < 5, took  # one second of grace, then Python's exit
    assert "SIGTERM arrived while the outputs were written" in err, err
    assert "a signal ended the writing (EINTR)" in err, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    json.loads((tmp_path / "p.hatchet").read_text())
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    assert meta["incomplete"] is True
    no_leftovers(tmp_path)


# ---- the twin cache's fallback ------------------------------------------------------------------


class _Twin:
    kernel_name = "k"
    text = "def k():\n    pass\n"


@pytest.mark.parametrize("planted", ["link", "open-dir"])
def test_twin_cache_fallback_must_be_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    from flagprism import _twinfile

    (tmp_path / "not-a-dir").write_text("x")
    monkeypatch.setenv("FLAGPRISM_CACHE_DIR", str(tmp_path / "not-a-dir"))  # unusable
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(_twinfile, "_fallback_dir", None)
    other = tmp_path / "someone-elses"
    other.mkdir(mode=0o777)
    os.chmod(other, 0o777)
    shared = tmp / f"flagprism-twins-{os.geteuid()}"
    if planted == "link":
        shared.symlink_to(other)
    else:
        shared.mkdir()
        os.chmod(shared, 0o777)
    path = Path(_twinfile.write_twin_file(_Twin()))
    assert list(other.iterdir()) == []
    assert path.parent != shared and path.parent.parent == tmp
    st = os.lstat(path.parent)
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
    assert stat.S_IMODE(st.st_mode) == 0o700
    assert path.read_text() == _Twin.text
    # once the planted one is gone, the shared name is made private and used
    if shared.is_symlink():
        shared.unlink()
    else:
        shared.rmdir()
    monkeypatch.setattr(_twinfile, "_fallback_dir", None)
    path = Path(_twinfile.write_twin_file(_Twin()))
    assert path.parent == shared and stat.S_IMODE(os.stat(shared).st_mode) == 0o700


# ---- the Debugger's text summary ---------------------------------------------------------------


def test_debug_summary_text_cleans_kernel_names() -> None:
    from flagprism import debugger

    debugger.reset_summary()
    try:
        debugger._summary_launch("k\x1b]0;owned\x07\nfake line", "/x.py", 3, "why\x1b[2J")
        text = debugger.summary()["text"]
        assert "\x1b" not in text and "\x07" not in text, repr(text)
        assert "k?]0;owned??fake line" in text, text
        assert debugger.summary()["json"]["kernels"][0]["name"].startswith("k\x1b]0;owned")
    finally:
        debugger.reset_summary()
