# SPDX-License-Identifier: Apache-2.0
"""Nothing recorded is lost, on a CUDA GPU (pytest -m gpu; issue 17). What the interpreter tests
(tests/python/test_profiler_races.py, test_signals.py, test_debugger_capacity.py) cannot show:

* compiled launches go through Triton's launch hook chains (_gpu_enter/_gpu_exit), not the
  interpreter's GridExecutor: with 8 threads launching while another toggles activate()/
  deactivate(), every launch of a host-backend session is recorded or counted as ignored,
  exactly, and a finalize() racing the launches never raises into them;
* SIGTERM to `flagprism profile` on the CUPTI backend writes the device's kernel records that
  were recorded (CUPTI's buffers are flushed at finalize), marked incomplete, exit 143;
* dump_capacity=0 at level 2 with a compiled twin counts every dump as overflow (the compiled
  dump helper advances the same cursor as the interpreter's).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import flagprism.debugger as debugger  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402

HERE = Path(__file__).resolve().parent


@triton.jit
def tiny_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def meta(path: Path) -> dict[str, Any]:
    return json.loads(path.with_suffix(".meta.json").read_text())


def hatchet_count(path: Path) -> int:
    total = 0

    def walk(node: dict[str, Any]) -> None:
        nonlocal total
        total += int(node["metrics"].get("count", 0))
        for c in node["children"]:
            walk(c)

    walk(json.loads(path.with_suffix(".hatchet").read_text())[0])
    return total


@pytest.fixture(autouse=True)
def no_session_left():
    yield
    for s in profiler.sessions():
        profiler.finalize(s["id"])


def test_toggle_race_compiled_launches_every_launch_accounted(tmp_path: Path) -> None:
    x = torch.zeros(64, device="cuda")
    tiny_kernel[(1,)](x, 64, BLOCK=64)  # compiled before the session
    torch.cuda.synchronize()
    name = tmp_path / "toggle"
    sid = profiler.start(str(name), backend="host", estimates=False)
    threads, per_thread = 8, 200
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
        y = torch.zeros(64, device="cuda")
        try:
            for _ in range(per_thread):
                tiny_kernel[(1,)](y, 64, BLOCK=64)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=toggler)
    t.start()
    ws = [threading.Thread(target=worker) for _ in range(threads)]
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    done.set()
    t.join()
    torch.cuda.synchronize()
    profiler.finalize(sid)
    assert not errors, errors
    m = meta(name)
    recorded, ignored = m["counts"]["kernels"], m["lost"]["ignored_while_inactive"]
    assert recorded + ignored == threads * per_thread, (recorded, ignored, toggles)
    assert hatchet_count(name) == recorded
    assert toggles > 0 and m["incomplete"] is False


def test_finalize_racing_compiled_launches_never_raises(tmp_path: Path) -> None:
    x = torch.zeros(64, device="cuda")
    tiny_kernel[(1,)](x, 64, BLOCK=64)
    torch.cuda.synchronize()
    name = tmp_path / "racing"
    sid = profiler.start(str(name), backend="host", estimates=True)
    stop = threading.Event()
    errors: list[BaseException] = []
    launched = [0] * 8

    def worker(i: int) -> None:
        y = torch.zeros(64, device="cuda")
        try:
            while not stop.is_set():
                tiny_kernel[(1,)](y, 64, BLOCK=64)
                launched[i] += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ws = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for w in ws:
        w.start()
    while sum(launched) < 2000:
        threading.Event().wait(0.001)
    profiler.finalize(sid)
    stop.set()
    for w in ws:
        w.join()
    torch.cuda.synchronize()
    assert not errors, errors
    m = meta(name)
    running = 0
    for r in m["incomplete_reasons"]:
        if "still running at finalize" in r:
            running = int(r.split()[0])
    assert 0 < m["counts"]["kernels"] and m["counts"]["kernels"] + running <= sum(launched)
    assert hatchet_count(name) == m["counts"]["kernels"]


LOOP = textwrap.dedent("""\
    import time
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def tiny_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


    x = torch.zeros(64, device="cuda")
    n = 0
    while True:
        tiny_kernel[(1,)](x, 64, BLOCK=64)
        n += 1
        if n == 100:
            torch.cuda.synchronize()
            print("ready", flush=True)
        time.sleep(0.001)
    """)


def test_sigterm_writes_the_cupti_profile(tmp_path: Path) -> None:
    from flagprism.cli import binary_path

    cli = os.environ.get("FLAGPRISM_CLI") or str(binary_path())
    (tmp_path / "loop.py").write_text(LOOP)
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable)
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.Popen(
        [cli, "profile", "-b", "cupti", "-n", "p", "-d", "trace", "loop.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready", p.stderr.read() if p.stderr else ""
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 128 + signal.SIGTERM, err
    m = meta(tmp_path / "p")
    assert m["session"]["backend"] == "cupti"
    assert m["incomplete"] is True
    assert any("ended by SIGTERM" in r for r in m["incomplete_reasons"]), m
    assert m["counts"]["kernels"] >= 100  # the device records up to the signal were flushed
    json.loads((tmp_path / "p.chrome_trace.json").read_text())
    assert not [f for f in tmp_path.iterdir() if ".tmp" in f.name]


def test_dump_capacity_zero_compiled_twin(tmp_path: Path) -> None:
    import flagprism.language as fpl  # noqa: F401 - the kernel's markers

    src = tmp_path / "dumping.py"
    src.write_text(
        textwrap.dedent("""\
        import triton
        import triton.language as tl
        import flagprism.language as fpl


        @triton.jit
        def dumping(x_ptr, n, BLOCK: tl.constexpr):
            fpl.collect_start()
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(x_ptr + offs, x * 2, mask=offs < n)
            fpl.collect_end()
        """)
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("dumping_gpu", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger.configure(output_dir=str(tmp_path / "reports"), dump_capacity=0)
    try:
        debugger.activate(level=2, addr_level=0)
        x = torch.ones(256, device="cuda")
        mod.dumping[(1,)](x, 256, BLOCK=256)
        torch.cuda.synchronize()
        (run,) = debugger.take_exported_runs()
    finally:
        debugger.deactivate()
        debugger.reset_config()
    assert torch.equal(x, torch.full((256,), 2.0, device="cuda"))
    assert run["backend"] == "cuda" and run["dump_capacity_words"] == 0
    assert run["dump_words_requested"] > 0 and run["complete"] is False
    assert run["report"]["dump_overflow_words"] == run["dump_words_requested"]
