# SPDX-License-Identifier: Apache-2.0
"""The Profiler's Python API on the "cupti" backend, end to end, without a GPU.

The backend runs on libfakecupti.so (tests/unit/fake-cupti, built with the C unit tests), and
_cuptifake.py plays Triton's launcher and the GPU through the fake's control functions (see
there). Each scenario runs in a child process, since a process keeps its CUPTI subscriber for
life. Checked: kernels filed under scopes and states, Python call paths (context="python"),
hook="triton" launch metadata and IR estimates on the device's records, exact counts (no launch
counted twice by the host path), PyTorch's runtime-API launches, launches made while evaluating
launch metadata, host and CUPTI sessions side by side with deactivation, backend=None choosing
CUPTI, another CUPTI subscriber (an error when asked for by name, a fallback to "host" with
a warning for backend=None), $FLAGPRISM_CUPTI_CAPTURE (raw activity buffers written to files;
bad values refused at start), and per mode what sits in Triton's hook chains: nothing per launch
in shadow context, with IR estimates looked up by the CUPTI callback in a table filled at kernel
load (or from Triton's caches at start), the C launch hook for hook="triton".

The fake library is found through $FP_FAKE_CUPTI (scripts/test.sh sets it), else in
$FP_BUILD_DIR or build/ under tests/unit/fake-cupti/; without it the tests are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import _cuptifake
import _profkernels as pk
import pytest
import trace_event_check

HERE = Path(__file__).resolve().parent
HELPER = (HERE / "_cuptifake.py").resolve()
FAKE_NAME = "libfakecupti.so"


def _fake_library() -> Path | None:
    env = os.environ.get("FP_FAKE_CUPTI")
    if env:
        if not Path(env).is_file():
            pytest.fail(f"FP_FAKE_CUPTI={env} is not a file")
        return Path(env)
    dirs = [os.environ.get("FP_BUILD_DIR"), str(HERE.parents[1] / "build")]
    for d in dirs:
        if d:
            p = Path(d) / "tests" / "unit" / "fake-cupti" / FAKE_NAME
            if p.is_file():
                return p
    return None


FAKE = _fake_library()

pytestmark = pytest.mark.skipif(
    FAKE is None,
    reason=f"{FAKE_NAME} is not built (the C unit tests build it: cmake --build build; or set "
    "FP_FAKE_CUPTI to it)",
)

LINES = _cuptifake.marker_lines()


def frame(func: str, marker: str) -> str:
    return f"{HELPER}:{func}@{LINES[marker]}"


def run_scenario(name: str, out: Path, helper: Path = HELPER) -> dict[str, Any]:
    """Run scenario `name` of `helper` (a script of the fake-libcupti scenarios) in a child process
    on libfakecupti.so; return the facts it printed last."""
    env = dict(os.environ)
    env["FLAGPRISM_CUPTI_PATH"] = str(FAKE)
    env["FLAGPRISM_CUDA_DRIVER_PATH"] = str(FAKE)
    # Compiled launches are what the fake plays; nothing here runs on the interpreter.
    env.pop("TRITON_INTERPRET", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    r = subprocess.run(
        [sys.executable, str(helper), name, str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(out),
    )
    assert r.returncode == 0, f"scenario {name} failed:\n{r.stdout}\n{r.stderr}"
    facts = [line for line in r.stdout.splitlines() if line.startswith("FACTS ")]
    assert facts, r.stdout + r.stderr
    return json.loads(facts[-1][len("FACTS ") :])


def meta(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_scopes_states_counts_and_times(tmp_path: Path) -> None:
    facts = run_scenario("scopes", tmp_path)
    d = facts["durations"]
    assert len(d) == 8
    doc = json.loads((tmp_path / "scopes.hatchet").read_text())
    assert doc[1]["CUDA"]["0"]["arch"] == "90"  # the fake driver's device table
    ks = pk.kernels(pk.read_tree(tmp_path / "scopes.hatchet"))
    assert set(ks) == {
        ("outer", "add_kernel"),
        ("outer", "fwd", "add_kernel"),
        ("outer", "inner", "torch_relu"),
        ("add_kernel",),
    }
    expect = {
        ("outer", "add_kernel"): (3, d[0:3], 3 * 4),
        ("outer", "fwd", "add_kernel"): (2, d[3:5], 2 * 4),
        ("outer", "inner", "torch_relu"): (2, d[5:7], 0),
        ("add_kernel",): (1, d[7:8], 2),
    }
    for path, (count, durs, programs) in expect.items():
        m = ks[path]
        assert m["count"] == count, (path, m)  # each kernel once: no host-timed copy
        assert m["time (ns)"] == sum(durs), (path, m)
        assert m["device_type"] == "CUDA", (path, m)
        if programs:
            # add.ttir: 12288 bytes and 1024 FLOPs per program, times the grid's programs.
            assert (m["est_bytes"], m["est_flops"]) == (programs * 12288, programs * 1024)
        else:
            assert "est_bytes" not in m  # PyTorch's kernels have no IR estimate
        assert "bytes" not in m and "flops32" not in m  # no hook: no launch metadata
    m = meta(tmp_path / "scopes.meta.json")
    assert m["session"]["backend"] == "cupti"
    assert m["counts"]["kernels"] == 8
    assert all(v == 0 for v in m["lost"].values() if isinstance(v, int)), m["lost"]
    env = m["environment"]
    assert "CUPTI" in env["kernel_times"]
    assert FAKE_NAME in env["cupti_library"] and "130001" in env["cupti_library"]
    assert "cupti_note" not in env and "backend_fallback" not in env
    assert env["estimate:add_kernel"].startswith("per program: bytes=12288")
    # The timeline has the device's times, exactly.
    trace = tmp_path / "scopes.chrome_trace.json"
    assert trace_event_check.check_file(str(trace)) == []
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert len(events) == 8
    assert all(e["args"]["device_type"] == "CUDA" for e in events)
    assert sorted(round(float(e["dur"]) * 1000) for e in events) == sorted(d)
    # A second session in the same process.
    ks2 = pk.kernels(pk.read_tree(tmp_path / "again.hatchet"))
    assert list(ks2) == [("second", "add_kernel")]
    assert ks2[("second", "add_kernel")]["time (ns)"] == facts["second"][0]
    st = facts["stats"]
    assert (st["kernels"], st["misses"], st["md_lost"], st["orphaned"]) == (9, 0, 0, 0), st
    assert st["subscribed"] and not st["enabled"] and st["sessions"] == 0, st


def test_launch_path_per_mode_and_c_fast_path(tmp_path: Path) -> None:
    from flagprism import compat

    facts = run_scenario("lean", tmp_path)
    none: dict[str, list[str]] = {"enter": [], "exit": []}
    # Triton 3.4 has no kernel_load_end_hook: estimates reach the backend's table through the C
    # launch hook instead (one call per launch), and there is no load chain to look at.
    load_hook = compat.hook_chain("kernel_load_end_hook") is not None
    empty = [] if load_hook else None
    # No session, and shadow context without hook and estimates: nothing of ours per launch.
    assert facts["idle"] == none and facts["bare"] == none and facts["after_bare"] == none
    assert facts["idle_load"] == empty
    ks = pk.kernels(pk.read_tree(tmp_path / "bare.hatchet"))
    assert list(ks) == [("s", "add_kernel")] and ks[("s", "add_kernel")]["count"] == 3
    assert "est_bytes" not in ks[("s", "add_kernel")]
    # Shadow context with estimates (the default): nothing in the launch chains either, and no
    # launch hook call; the load hook teaches the backend's table once per kernel.
    if load_hook:
        assert facts["est"] == none, facts["est"]
        assert facts["est_load"] == ["_kernel_loaded"]
        assert facts["est_hook_calls"] == 0
        # add_kernel was loaded before the session: the walk of Triton's caches taught it at start.
        assert facts["est_known_at_start"] == 1
        assert (facts["est_kest"]["known"], facts["est_kest"]["misses"]) == (2, 0), facts[
            "est_kest"
        ]
    else:
        assert facts["est"] == {"enter": ["cupti_hook"], "exit": []}, facts["est"]
        assert facts["est_load"] is None and facts["est_hook_calls"] == 9
        assert (facts["est_kest"]["known"], facts["est_kest"]["misses"]) == (0, 0), facts[
            "est_kest"
        ]
    ks = pk.kernels(pk.read_tree(tmp_path / "est.hatchet"))
    add, mul = ks[("s", "add_kernel")], ks[("s", "mul_kernel")]
    # Per-program estimates times each record's grid: 1+2+3+4+5 programs, then 4 x 2.
    assert (add["count"], add["est_bytes"], add["est_flops"]) == (5, 15 * 12288, 15 * 1024)
    assert (mul["count"], mul["est_bytes"], mul["est_flops"]) == (4, 8 * 12288, 8 * 1024)
    env = meta(tmp_path / "est.meta.json")["environment"]
    assert env["estimate:add_kernel"].startswith("per program: bytes=12288")
    assert env["estimate:mul_kernel"].startswith("per program: bytes=12288")
    # With a host-timed session open too, its Python hooks join; estimates stay in the table.
    mixed_enter = ["_gpu_enter"] if load_hook else ["_gpu_enter", "cupti_hook"]
    assert facts["mixed"] == {"enter": mixed_enter, "exit": ["_gpu_exit"]}, facts["mixed"]
    assert facts["after"] == none and facts["after_load"] == empty
    # A kernel loaded between sessions (no load hook then) is found by the next start's walk;
    # the notes are those of the session's own kernels.
    ks = pk.kernels(pk.read_tree(tmp_path / "again.hatchet"))
    sub, add = ks[("s", "sub_kernel")], ks[("s", "add_kernel")]
    assert (sub["count"], sub["est_bytes"], sub["est_flops"]) == (1, 3 * 12288, 3 * 1024)
    assert (add["count"], add["est_bytes"]) == (1, 2 * 12288)
    env = meta(tmp_path / "again.meta.json")["environment"]
    assert "estimate:sub_kernel" in env and "estimate:add_kernel" in env
    assert "estimate:mul_kernel" not in env
    # hook="triton": the C hook, last; the first launch of each kernel takes the Python path.
    assert facts["hook"] == {"enter": ["cupti_hook"], "exit": []}, facts["hook"]
    assert facts["hook_load"] == empty
    assert (facts["hook_slow"], facts["hook_fast"], facts["hook_known"]) == (2, 2, 2), facts
    ks = pk.kernels(pk.read_tree(tmp_path / "hook.hatchet"))
    hk, add = ks[("s", "hook_kernel")], ks[("s", "add_kernel")]
    assert (hk["count"], hk["est_bytes"], hk["est_flops"]) == (3, 6 * 12288, 6 * 1024)
    assert (add["count"], add["est_bytes"]) == (1, 4 * 12288)
    assert "estimate:hook_kernel" in meta(tmp_path / "hook.meta.json")["environment"]
    assert facts["final_load"] == empty
    assert not facts["kest"]["enabled"] and facts["kest"]["misses"] == 0, facts["kest"]
    st = facts["stats"]
    assert (st["kernels"], st["misses"], st["md_lost"]) == (18, 0, 0), st


def test_python_context_and_launch_metadata(tmp_path: Path) -> None:
    facts = run_scenario("python", tmp_path)
    ks = pk.kernels(pk.read_tree(tmp_path / "python.hatchet"))
    outer = (frame("<module>", "module"), frame("main", "main"))
    launch = (frame("triton_launch", "triton_launch"), frame("_launcher", "launcher"))
    # python context: the scope first, then the call path
    path_a = ("step",) + outer + (frame("scenario_python", "call_a"), frame("site_a", "site_a"))
    path_a += launch + ("add_kernel",)
    path_b = ("step",) + outer + (frame("scenario_python", "call_b"), frame("site_b", "site_b"))
    path_b += launch + ("add_kernel",)
    path_outer = outer + (frame("scenario_python", "scenario_python"),) + launch
    path_inner = path_outer + (frame("nested_metadata", "nested"),) + launch + ("inner_kernel",)
    path_outer += ("outer_kernel",)
    assert set(ks) == {path_a, path_b, ("step", "torch_mm"), path_outer, path_inner}, list(ks)
    a, b = ks[path_a], ks[path_b]
    assert (a["count"], a["flops32"], a["bytes"]) == (2, 6000, 72000)
    assert (b["count"], b["flops32"], b["bytes"]) == (1, 1000, 12000)
    assert (a["est_bytes"], a["est_flops"]) == (2 * 3 * 12288, 2 * 3 * 1024)
    # PyTorch's kernel: the open scopes, no Python call path, no metadata.
    torch_mm = ks[("step", "torch_mm")]
    assert torch_mm["count"] == 1 and "flops32" not in torch_mm
    # A kernel launched while the launch metadata of another was evaluated keeps its own.
    assert ks[path_outer]["flops32"] == 7 and ks[path_outer]["count"] == 1
    assert "flops32" not in ks[path_inner] and ks[path_inner]["count"] == 1
    # The device's kernel name stays: launch_metadata's "name" does not rename CUPTI kernels.
    assert not any(p[-1].startswith("add_kernel[") for p in ks)
    st = facts["stats"]
    assert (st["kernels"], st["misses"], st["md_lost"]) == (6, 0, 0), st


def test_host_and_cupti_sessions_together(tmp_path: Path) -> None:
    run_scenario("mixed", tmp_path)
    host = pk.kernels(pk.read_tree(tmp_path / "host.hatchet"))
    dev = pk.kernels(pk.read_tree(tmp_path / "dev.hatchet"))
    assert list(host) == [("s", "add_kernel")] and list(dev) == [("s", "add_kernel")]
    # Host session: active for 3 + 2 launches, deactivated for 1; host-timed on the CPU.
    assert host[("s", "add_kernel")]["count"] == 5
    assert host[("s", "add_kernel")]["device_type"] == "CPU"
    assert meta(tmp_path / "host.meta.json")["lost"]["ignored_while_inactive"] == 1
    # CUPTI session: the device's records only, 2 of them while deactivated.
    assert dev[("s", "add_kernel")]["count"] == 4
    assert dev[("s", "add_kernel")]["device_type"] == "CUDA"
    assert meta(tmp_path / "dev.meta.json")["lost"]["ignored_while_inactive"] == 2


def test_another_subscriber(tmp_path: Path) -> None:
    facts = run_scenario("busy", tmp_path)
    e = facts["explicit"]
    assert e["status"] == "FP_EBUSY", e
    assert 'another CUPTI subscriber is active in this process: "Proton"' in e["message"], e
    assert facts["sessions_after_error"] == [] and facts["hook_left"] is False
    # backend=None falls back to the host backend and says why.
    (w,) = facts["warnings"]
    assert w.startswith("RuntimeWarning: ") and "CUPTI backend cannot start" in w, w
    assert "FP_EBUSY" in w and "Proton" in w and "'host' backend" in w, w
    assert facts["auto_backend"] == "host"
    ks = pk.kernels(pk.read_tree(tmp_path / "auto.hatchet"))
    assert ks[("add_kernel",)]["count"] == 1 and ks[("add_kernel",)]["device_type"] == "CPU"
    m = meta(tmp_path / "auto.meta.json")
    assert m["session"]["backend"] == "host"
    assert "Proton" in m["environment"]["backend_fallback"]
    assert facts["subscribed"] == 0


def test_backend_none_picks_cupti(tmp_path: Path) -> None:
    facts = run_scenario("auto", tmp_path)
    assert facts["backend"] == "cupti" and facts["warnings"] == []
    assert facts["stats"]["path"].endswith(FAKE_NAME)
    assert all(os.path.isdir(d) for d in facts["search_dirs"])
    ks = pk.kernels(pk.read_tree(tmp_path / "auto.hatchet"))
    assert ks[("add_kernel",)]["count"] == 1 and ks[("add_kernel",)]["device_type"] == "CUDA"


def test_capture_env(tmp_path: Path) -> None:
    facts = run_scenario("capture", tmp_path)
    errs = facts["errors"]
    for key in ("missing", "file"):
        e = errs[key]
        assert e is not None and e["type"] == "OSError", (key, e)
        assert "FLAGPRISM_CUPTI_CAPTURE=" in e["message"] and key in e["message"], e
    assert "ENOENT" in errs["missing"]["message"]
    assert "ENOTDIR" in errs["file"]["message"]
    for key in ("bytes", "zero"):
        e = errs[key]
        assert e is not None and e["type"] == "ValueError", (key, e)
        assert "FLAGPRISM_CUPTI_CAPTURE_BYTES=" in e["message"], e
    assert facts["sessions_after_error"] == []
    st = facts["stats"]
    assert st["active"] and st["files"] == 2 and st["failures"] == 0 and st["skipped"] == 0, st
    assert st["max_bytes"] == 4 << 20 and st["dir"] == str(tmp_path / "cap"), st
    api, pid = facts["api_version"], facts["pid"]
    names = sorted(facts["files"])
    assert names == [f"cupti-{api}-{pid}-{i}.rec" for i in range(2)], names
    assert [len(facts["files"][n]) for n in names] == [3, 1]
    # Unset at the next start: the capture stops, nothing more is written.
    assert not facts["stats_after"]["active"] and facts["files_after"] == 2
