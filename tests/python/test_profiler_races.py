# SPDX-License-Identifier: Apache-2.0
"""Nothing recorded is lost by the Profiler's Python layer, on the Triton interpreter (issue 17):
launches racing activate()/deactivate() from other threads are each recorded or counted as
ignored, exactly; a launch racing finalize() from another thread never raises into the program
and is counted when it is still running; two sessions never share a name; the output location,
the name's type and length and the capacities are checked at start(), before anything runs."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import triton.language as tl  # noqa: E402

import flagprism.profiler as profiler  # noqa: E402


@triton.jit
def tiny_kernel(x_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@pytest.fixture(autouse=True)
def clean(work_dir: Path):
    yield
    open_ids = [s["id"] for s in profiler.sessions()]
    for sid in open_ids:
        profiler.finalize(sid)
    assert not open_ids, f"test left sessions open: {open_ids}"


def meta(name: str) -> dict[str, Any]:
    return json.loads(Path(f"{name}.meta.json").read_text())


def hatchet_count(name: str) -> int:
    """Launches in a .hatchet file: the sum of "count" over its nodes."""
    total = 0

    def walk(node: dict[str, Any]) -> None:
        nonlocal total
        total += int(node["metrics"].get("count", 0))
        for c in node["children"]:
            walk(c)

    walk(json.loads(Path(f"{name}.hatchet").read_text())[0])
    return total


@pytest.fixture
def serial_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton's interpreter cannot run two kernels at once (it patches triton.language while
    one runs): serialize the interpreted run itself, below the Profiler's launch wrapper, so
    that threads still race in everything the Profiler does around it."""
    from triton.runtime import interpreter

    assert not profiler.sessions()  # the Profiler's wrapper is not installed yet
    run = interpreter.GridExecutor.__call__
    lock = threading.Lock()

    def serialized(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            return run(self, *args, **kwargs)

    monkeypatch.setattr(interpreter.GridExecutor, "__call__", serialized)


def _toggle_run(name: str, threads: int, per_thread: int) -> None:
    """`threads` threads launch `per_thread` kernels each while another flips the session
    between active and inactive as fast as it can; every launch must be recorded or counted as
    ignored, and the file must agree with the metadata."""
    sid = profiler.start(name, estimates=False)
    done = threading.Event()
    errors: list[BaseException] = []
    toggles = 0

    def toggler() -> None:
        nonlocal toggles
        while not done.is_set():
            profiler.deactivate(sid)
            profiler.activate(sid)
            toggles += 1

    def worker() -> None:
        x = torch.zeros(16)
        try:
            for _ in range(per_thread):
                tiny_kernel[(1,)](x, 16)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    tt = threading.Thread(target=toggler)
    tt.start()
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    done.set()
    tt.join()
    profiler.finalize(sid)
    assert not errors, errors
    m = meta(name)
    recorded = m["counts"]["kernels"]
    ignored = m["lost"]["ignored_while_inactive"]
    assert recorded + ignored == threads * per_thread, (recorded, ignored, toggles)
    assert hatchet_count(name) == recorded
    assert toggles > 0
    assert m["incomplete"] is False, m["incomplete_reasons"]


def test_toggle_race_one_thread_every_launch_accounted(work_dir: Path) -> None:
    _toggle_run("toggle1", threads=1, per_thread=200)


def test_toggle_race_eight_threads_every_launch_accounted(
    work_dir: Path, serial_interpreter: None
) -> None:
    _toggle_run("toggle8", threads=8, per_thread=25)


def test_launch_paused_at_begin_resumed_at_end_is_recorded(work_dir: Path) -> None:
    """A launch that begins while the session is paused and ends after activate() is filed by
    the state at its end: recorded (it used to vanish: neither recorded nor ignored)."""
    sid = profiler.start("resumed", estimates=False)
    profiler.deactivate(sid)
    x = torch.zeros(16)

    def grid(meta: dict[str, Any]) -> tuple[int]:
        profiler.activate(sid)  # evaluated inside the launch, after it began
        return (1,)

    tiny_kernel[grid](x, 16)
    profiler.deactivate(sid)
    tiny_kernel[(1,)](x, 16)  # paused all along: ignored
    profiler.finalize(sid)
    m = meta("resumed")
    assert (m["counts"]["kernels"], m["lost"]["ignored_while_inactive"]) == (1, 1)


def test_finalize_racing_a_launch_never_raises_and_counts_it(work_dir: Path) -> None:
    """finalize() from another thread while a launch is running: the launch neither raises into
    the program (the estimate note and the filing used to raise OSError: not found) nor is
    lost silently: the metadata says one launch was still running."""
    sid = profiler.start("racing", estimates=True)
    began, release = threading.Event(), threading.Event()
    result: dict[str, Any] = {}
    x = torch.zeros(16)

    def grid(meta: dict[str, Any]) -> tuple[int]:
        began.set()
        release.wait(30)
        return (1,)

    def worker() -> None:
        try:
            tiny_kernel[grid](x, 16)
            result["ok"] = True
        except BaseException as e:  # noqa: BLE001
            result["error"] = e

    t = threading.Thread(target=worker)
    t.start()
    assert began.wait(30)
    paths = profiler.finalize(sid)
    release.set()
    t.join()
    assert result == {"ok": True}, result
    assert paths == ["racing.hatchet", "racing.meta.json"]
    m = meta("racing")
    assert m["counts"]["kernels"] == 0
    assert m["incomplete"] is True
    assert any(
        "1 launch began while the session was open and were still running" in r
        for r in m["incomplete_reasons"]
    ), m["incomplete_reasons"]
    assert torch.equal(x, torch.ones(16))  # the kernel itself ran


def test_finalize_racing_many_launches(work_dir: Path, serial_interpreter: None) -> None:
    """Threads launching while the main thread finalizes: no launch raises, and what the file
    holds plus what the metadata says was running never exceeds what was launched."""
    sid = profiler.start("many", estimates=True)
    stop = threading.Event()
    errors: list[BaseException] = []
    launched = [0] * 4

    def worker(i: int) -> None:
        x = torch.zeros(16)
        try:
            while not stop.is_set():
                tiny_kernel[(1,)](x, 16)
                launched[i] += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    while sum(launched) < 20:
        threading.Event().wait(0.01)
    profiler.finalize(sid)
    stop.set()
    for t in ts:
        t.join()
    assert not errors, errors
    m = meta("many")
    running = 0
    for r in m["incomplete_reasons"]:
        if "still running at finalize" in r:
            running = int(r.split()[0])
    assert 0 < m["counts"]["kernels"] and m["counts"]["kernels"] + running <= sum(launched)
    assert hatchet_count("many") == m["counts"]["kernels"]


def test_two_sessions_with_one_name_refused(work_dir: Path) -> None:
    a = profiler.start("same", estimates=False)
    with pytest.raises(ValueError, match=r"session \d+ already writes 'same'"):
        profiler.start("same")
    with pytest.raises(ValueError, match="already writes"):
        profiler.start("./same")  # the same files by another spelling
    with pytest.raises(ValueError, match="already writes"):
        profiler.start(str(work_dir / "same"))
    assert [s["id"] for s in profiler.sessions()] == [a]
    b = profiler.start("other", estimates=False)
    x = torch.zeros(16)
    for _ in range(4):
        tiny_kernel[(1,)](x, 16)
    paths = profiler.finalize()
    assert len(paths) == len(set(paths)) == 4
    assert meta("same")["counts"]["kernels"] == 4 and meta("other")["counts"]["kernels"] == 4
    del b


def test_start_checks_the_output_location_first(work_dir: Path) -> None:
    Path("plainfile").write_text("x")
    with pytest.raises(OSError, match="cannot create the directory 'plainfile/sub'"):
        profiler.start("plainfile/sub/p")
    with pytest.raises(OSError, match="ENAMETOOLONG"):
        profiler.start("p" * 10_000)
    with pytest.raises(OSError, match="ENAMETOOLONG"):
        profiler.start("q" * 240)  # + ".chrome_trace.json" is over 255 bytes
    with pytest.raises(TypeError, match="str path"):
        profiler.start(b"bytes-name")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NUL"):
        profiler.start("a\0b")
    assert profiler.sessions() == []
    assert sorted(os.listdir(".")) == ["plainfile"]  # nothing written, no probe left behind
    sid = profiler.start("r" * 200, estimates=False)  # long, but every file name fits
    assert profiler.finalize(sid) == ["r" * 200 + ".hatchet", "r" * 200 + ".meta.json"]


@pytest.mark.parametrize("bad", [0, -1, 2**24 + 1, 2**31, 10**30, 1.5, True, "8"])
def test_timeline_capacity_range(work_dir: Path, bad: Any) -> None:
    with pytest.raises(
        ValueError, match=r"timeline_capacity must be None or an int from 1 to 16777216"
    ):
        profiler.start("tl", timeline_capacity=bad)
    assert profiler.sessions() == []


def test_scope_and_state_outliving_their_session_exit_quietly(work_dir: Path) -> None:
    """A `with scope(..., session=sid)` or `state` whose session is finalized while it is open
    (by another thread, say) exits without raising; the scope is counted as unfinished."""
    sid = profiler.start("outlived", estimates=False)
    done = threading.Event()
    with profiler.scope("outer", session=sid):
        with profiler.state("st", session=sid):
            t = threading.Thread(target=lambda: (profiler.finalize(sid), done.set()))
            t.start()
            t.join()
    assert done.is_set()
    m = meta("outlived")
    assert m["lost"]["unfinished_scopes"] == 1 and m["incomplete"] is True
    with pytest.raises(ValueError, match="no open profiling session"):
        profiler.enter_scope("x", session=sid + 1000)  # an id that never existed still raises
