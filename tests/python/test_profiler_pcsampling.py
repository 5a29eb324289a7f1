# SPDX-License-Identifier: Apache-2.0
"""The Profiler's ``mode="pcsampling"`` from Python, without a GPU.

Argument checks run everywhere. The end-to-end scenario runs in a child process (a process keeps
its CUPTI subscriber for life) on libfakecupti.so (tests/unit/fake-cupti, whose PC-sampling part
is fake-cupti-pcs.c): the child starts a session, plays a module load with a real Triton cubin
(tests/data/cubin/hot_loop.cubin), a launch under a scope, PC records and the kernel record,
finalizes, and the test reads the Hatchet file: the samples must sit under the kernel, one child
per Triton source line, and the unmappable ones under "<no line info>", counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import flagprism.profiler as prof

HERE = Path(__file__).resolve().parent
CUBIN = HERE.parent / "data" / "cubin" / "hot_loop.cubin"


def _fake_library() -> Path | None:
    env = os.environ.get("FP_FAKE_CUPTI")
    if env:
        return Path(env) if Path(env).is_file() else None
    for d in (os.environ.get("FP_BUILD_DIR"), str(HERE.parents[1] / "build")):
        if d:
            p = Path(d) / "tests" / "unit" / "fake-cupti" / "libfakecupti.so"
            if p.is_file():
                return p
    return None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"mode": "bogus"}, "mode must be None or 'pcsampling'"),
        ({"mode": "pcsampling", "metrics": "default"}, "cannot run in one session"),
        ({"mode": "pcsampling", "backend": "host"}, "needs backend='cupti'"),
        ({"mode": "pcsampling", "sampling_period": 3}, "5..31"),
        ({"sampling_period": 10}, "needs mode='pcsampling'"),
    ],
)
def test_pcsampling_arguments_are_checked(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        prof.start(str(tmp_path / "p"), **kwargs)
    assert prof.sessions() == []


CHILD = textwrap.dedent(
    r"""
    import ctypes, json, sys
    import flagprism.profiler as prof
    from flagprism import _ext

    out, fake, cubin_path = sys.argv[1], sys.argv[2], sys.argv[3]
    lib = ctypes.CDLL(fake)
    cubin = open(cubin_path, "rb").read()

    class Crc(ctypes.Structure):
        _fields_ = [("size", ctypes.c_size_t), ("cubin_size", ctypes.c_size_t),
                    ("cubin", ctypes.c_char_p), ("crc", ctypes.c_uint64)]

    class Module(ctypes.Structure):
        _fields_ = [("id", ctypes.c_uint32), ("size", ctypes.c_size_t), ("cubin", ctypes.c_char_p)]

    class Kernel(ctypes.Structure):
        _fields_ = [("kind", ctypes.c_uint32), ("corr", ctypes.c_uint32),
                    ("start", ctypes.c_uint64), ("end", ctypes.c_uint64),
                    ("device", ctypes.c_uint32), ("context", ctypes.c_uint32),
                    ("stream", ctypes.c_uint32), ("grid", ctypes.c_int32 * 3),
                    ("block", ctypes.c_int32 * 3), ("registers", ctypes.c_uint16),
                    ("static_smem", ctypes.c_int32), ("dynamic_smem", ctypes.c_int32),
                    ("graph_node", ctypes.c_uint64), ("graph_id", ctypes.c_uint32),
                    ("name", ctypes.c_char_p)]

    crc = Crc(ctypes.sizeof(Crc), len(cubin), cubin, 0)
    assert lib.cuptiGetCubinCrc(ctypes.byref(crc)) == 0
    lib.fake_pcs_push.argtypes = [ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64,
                                  ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32]
    lib.fake_cupti_now.restype = ctypes.c_uint64
    walk = len(sys.argv) > 5 and sys.argv[5] == "walk"
    if walk:
        # a kernel compiled before start: start() finds its cubin in Triton's caches
        sys.path.insert(0, sys.argv[6])
        import walkmod
        compiled = type("Compiled", (), {"asm": {"cubin": cubin}})()
        walkmod.kern.device_caches = {0: ({"key": compiled}, {}, None, None, None)}
    sid = prof.start(out, backend="cupti", mode="pcsampling", sampling_period=9)
    facts = {"active": prof.pcsampling_stats()["active"]}
    if not walk:
        mod = Module(1, len(cubin), cubin)
        lib.fake_cupti_resource(6, ctypes.byref(mod))
    with prof.scope("step"):
        lib.fake_cupti_launch(1, 652, 41)
    # hot_loop's loop body: make_cubins.py line 28 starts at the PC the line table gives
    pc28 = int(sys.argv[4])
    assert lib.fake_pcs_push(41, crc.crc, pc28, b"hot_loop", 7, 25) == 0
    assert lib.fake_pcs_push(41, crc.crc, 1 << 26, b"hot_loop", 3, 5) == 0
    k = Kernel()
    k.kind, k.corr = 10, 41
    k.start = lib.fake_cupti_now() + 1000
    k.end = k.start + 4000
    k.grid[:] = [1, 1, 1]
    k.block[:] = [128, 1, 1]
    k.name = b"hot_loop"
    lib.fake_cupti_kernel.argtypes = [ctypes.POINTER(Kernel)]
    assert lib.fake_cupti_kernel(ctypes.byref(k)) == 0
    lib.fake_cupti_complete()
    prof.finalize(sid)
    facts["stats"] = prof.pcsampling_stats()
    print(json.dumps(facts))
    """
)


def _line_pc(line: int) -> int:
    from flagprism import _ext  # noqa: F401  (the package must import)

    data = (HERE.parent / "data" / "cubin" / "hot_loop.lines.txt").read_text().split("\n")
    for row in data:
        if row.strip():
            off, ln = row.split()
            if int(ln) == line:
                return int(off)
    raise AssertionError(f"no line {line}")


def _find(node: dict, suffix: str) -> dict | None:
    for c in node.get("children", []):
        if c["frame"]["name"].endswith(suffix):
            return c
    return None


@pytest.mark.parametrize("how", ["module-load", "walk"])
def test_pcsampling_end_to_end_on_the_fake(tmp_path, how):
    """module-load: the cubin comes from CUPTI's MODULE_LOADED callback; walk: from the
    compiled kernels Triton cached before start()."""
    fake = _fake_library()
    if fake is None:
        pytest.skip("libfakecupti.so is not built (cmake --build build; or set FP_FAKE_CUPTI)")
    env = dict(os.environ, FLAGPRISM_CUPTI_PATH=str(fake), FLAGPRISM_CUDA_DRIVER_PATH=str(fake))
    out = tmp_path / "pcs"
    extra = []
    if how == "walk":
        (tmp_path / "walkmod.py").write_text(
            "import triton\n\n\n@triton.jit\ndef kern(x):\n    pass\n"
        )
        extra = ["walk", str(tmp_path)]
        env.pop("TRITON_INTERPRET", None)  # a JITFunction, as on a GPU (none is compiled)
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), str(fake), str(CUBIN), str(_line_pc(28)), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    assert facts["active"] is True
    st = facts["stats"]
    assert st["samples"] == 30 and st["on_lines"] == 25 and st["no_line"] == 5
    assert st["active"] is False
    # what CUPTI answered: a session without samples explains itself
    assert st["enable_status"] == 0 and st["config_status"] == 0 and st["disable_status"] == 0
    assert st["serialized"] is False and st["sampling_period"] == 9 and st["stall_reasons"] == 4
    assert st["getdata_calls"] >= 1 and st["getdata_errors"] == 0
    assert st["getdata_records"] == 1  # the fake's worker never ran: Disable handed them over
    assert st["launches"] == 1
    tree = json.loads((tmp_path / "pcs.hatchet").read_text())[0]
    step = _find(tree, "step")
    kernel = _find(step, "hot_loop")
    assert kernel is not None
    line = _find(kernel, "tests/data/cubin/make_cubins.py:28")
    assert line is not None, [c["frame"]["name"] for c in kernel.get("children", [])]
    assert line["metrics"]["num_samples"] == 25
    assert line["metrics"]["stalled_math_pipe_throttle"] == 25
    assert line["metrics"]["num_stalled_samples"] == 25
    none = _find(kernel, "<no line info>")
    assert none["metrics"]["num_samples"] == 5
    assert none["metrics"]["stalled_long_scoreboard"] == 5
    meta = json.loads((tmp_path / "pcs.meta.json").read_text())
    text = json.dumps(meta)
    assert "pcsampling_samples_on_lines" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mode", "bogus"], "takes 'pcsampling'"),
        (["--mode", "pcsampling", "--metrics", "default"], "exclude each other"),
        (["--mode", "pcsampling", "--backend", "host"], "needs the cupti backend"),
        (["--sampling-period", "10"], "needs '--mode pcsampling'"),
        (["--mode", "pcsampling", "--sampling-period", "40"], "5 to 31"),
    ],
)
def test_cli_pcsampling_usage_errors(cli, work_dir, args, message):
    (work_dir / "s.py").write_text("pass\n")
    r = subprocess.run([str(cli), "profile", *args, "s.py"], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr


def test_pcsampling_start_reloads_loaded_triton_kernels(monkeypatch):
    """start(mode="pcsampling") makes every loaded Triton kernel load its module again at its next
    launch (CUPTI gives PC records only for modules loaded while sampling), hands over every
    cubin, and leaves kernels not loaded yet alone; FLAGPRISM_PCS_RELOAD=0 turns the reload off.
    Triton's cache layout is played by a JITFunction whose device cache holds stand-in kernels."""
    from triton.runtime.jit import JITFunction

    class Kernel:
        def __init__(self, loaded):
            self.asm = {"cubin": b"\x7fELF-cubin"}
            self.module = 0x1000 if loaded else None
            self.function = 0x2000 if loaded else None
            self._run = object() if loaded else None

    def body(x):
        return x

    jf = JITFunction(body)
    loaded, cold = Kernel(True), Kernel(False)
    jf.device_caches = {0: ({"k1": loaded, "k2": cold}, {}, None, None, None)}
    handed: list[bytes] = []
    requests: list[int] = []
    monkeypatch.setattr(prof._ext, "cupti_pcsampling_add_cubin", handed.append)
    monkeypatch.setattr(
        prof._ext,
        "cupti_pcsampling_request",
        lambda sampling_period: requests.append(sampling_period),
    )
    monkeypatch.setenv("FLAGPRISM_PCS_RELOAD", "0")
    prof._pcsampling_prepare(None)
    assert loaded.module == 0x1000 and prof._pcs_reloaded == 0
    monkeypatch.delenv("FLAGPRISM_PCS_RELOAD")
    prof._pcsampling_prepare(11)
    assert loaded.module is None and loaded.function is None and loaded._run is None
    assert cold.module is None and cold._run is None
    assert prof._pcs_reloaded >= 1  # this test's kernel (other JITFunctions may exist)
    assert handed.count(b"\x7fELF-cubin") == 4 and requests == [0, 11]
