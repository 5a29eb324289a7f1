# SPDX-License-Identifier: Apache-2.0
"""A GPU played in Python for the Profiler's CUPTI backend, without a GPU: the child-process side
of tests/python/test_profiler_cupti_fake.py.

The backend loads libfakecupti.so (tests/unit/fake-cupti, built with the unit tests) through
FLAGPRISM_CUPTI_PATH, and FLAGPRISM_CUDA_DRIVER_PATH points its driver calls at the same file.
The fake cannot see launches made from Python, so this module does, through ctypes and the
fake's control functions (here only, never in FlagPrism), what Triton's launcher and the GPU
would do: load a kernel at its first launch (a new CUfunction handle, then Triton's
kernel_load_end_hook chain, as CompiledKernel._init_handles does), call Triton's launch-enter
hook chain from a frame holding gridX/gridY/gridZ below a
frame holding the CompiledKernel (as Triton's launcher and JITFunction.run do), fire the
cuLaunchKernelEx API callbacks with a new correlation id where the launcher would call the
driver, call the exit hook chain; later write one kernel activity record per launch and hand
the buffer back. PyTorch's launches are runtime-API callbacks without any Python hook.

Each scenario runs in a process of its own (a process keeps its CUPTI subscriber for life),
writes its profiles into the output directory and prints one JSON line of facts for the test to
check. Usage: python _cuptifake.py SCENARIO OUTDIR (with the two variables above set).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve()
DATA_DIR = HERE.parents[1] / "data"

DRIVER, RUNTIME = 1, 2  # CUPTI callback domains
CU_LAUNCH_KERNEL_EX = 652  # CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: Triton's launch
CUDA_LAUNCH_KERNEL = 211  # CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: PyTorch's


class FakeKernel(ctypes.Structure):
    """struct fake_kernel of tests/unit/fake-cupti/fake-cupti.h."""

    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("corr", ctypes.c_uint32),
        ("start", ctypes.c_uint64),
        ("end", ctypes.c_uint64),
        ("device", ctypes.c_uint32),
        ("context", ctypes.c_uint32),
        ("stream", ctypes.c_uint32),
        ("grid", ctypes.c_int32 * 3),
        ("block", ctypes.c_int32 * 3),
        ("registers", ctypes.c_uint16),
        ("static_smem", ctypes.c_int32),
        ("dynamic_smem", ctypes.c_int32),
        ("graph_node", ctypes.c_uint64),
        ("graph_id", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
    ]


def marker_lines() -> dict[str, int]:
    """{"name": line} of the lines of this file that end with "  # @name"."""
    out = {}
    for i, line in enumerate(HERE.read_text().splitlines(), 1):
        m = re.search(r"  # @(\w+)$", line)
        if m:
            out[m.group(1)] = i
    return out


class Gpu:
    """The fake libcupti's control side, and the launches waiting for their records."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        for name in ("fake_cupti_launch",):
            getattr(lib, name).argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32]
            getattr(lib, name).restype = None
        lib.fake_cupti_launch_kernel.argtypes = [
            ctypes.c_int,
            ctypes.c_uint32,
            ctypes.c_uint32,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.c_int,
            ctypes.c_int,
        ]
        lib.fake_cupti_launch_kernel.restype = None
        lib.fake_cupti_set_launch_function.argtypes = [ctypes.c_uint64]
        lib.fake_cupti_set_launch_function.restype = None
        lib.fake_cupti_kernel.argtypes = [ctypes.POINTER(FakeKernel)]
        lib.fake_cupti_kernel.restype = ctypes.c_int
        lib.fake_cupti_complete.argtypes = []
        lib.fake_cupti_complete.restype = None
        lib.fake_cupti_set_busy.argtypes = [ctypes.c_char_p]
        lib.fake_cupti_set_busy.restype = None
        lib.fake_cupti_subscribed.restype = ctypes.c_int
        self.lib = lib
        self.corr = 0
        self.pending: list[tuple[int, str, tuple[int, int, int]]] = []
        self.durations: list[int] = []

    def api_launch(
        self, domain: int, cbid: int, name: str, grid: tuple[int, int, int], fn: int = 0
    ) -> None:
        """The API enter and exit callbacks of one launch call, with a new correlation id, the
        kernel's symbol name and (cuLaunchKernelEx) its grid and CUfunction `fn`, in the
        current context."""
        self.corr += 1
        g = (ctypes.c_uint32 * 3)(*grid)
        self.lib.fake_cupti_set_launch_function(fn)
        self.lib.fake_cupti_launch_kernel(domain, cbid, self.corr, name.encode(), g, 0, 0)
        self.lib.fake_cupti_set_launch_function(0)
        self.pending.append((self.corr, name, grid))

    def torch_launch(self, name: str, grid: tuple[int, int, int] = (8, 1, 1)) -> None:
        """A PyTorch kernel: cudaLaunchKernel, no Python hook."""
        self.api_launch(RUNTIME, CUDA_LAUNCH_KERNEL, name, grid)

    def run(self, base_ns: int = 1000) -> None:
        """The GPU runs every pending launch, one after the other: one activity record each,
        launch i lasting base_ns + i ns (i counts from 0 over this Gpu's life)."""
        from flagprism import _ext

        t = _ext.prof_clock_ns() + 1000
        for corr, name, grid in self.pending:
            dur = base_ns + len(self.durations)
            k = FakeKernel()
            k.corr = corr
            k.start = t
            k.end = t + dur
            k.stream = 7
            k.grid[:] = grid
            k.block[:] = (128, 1, 1)
            k.name = name.encode()
            assert self.lib.fake_cupti_kernel(ctypes.byref(k)) == 0, "the fake lost a record"
            self.durations.append(dur)
            t += dur + 10
        self.pending.clear()

    def deliver(self) -> None:
        """run(), then hand the buffer back now (as CUPTI does when one fills up)."""
        self.run()
        self.lib.fake_cupti_complete()


_next_function = [0x7F0000001000]


def compiled_kernel(name: str) -> SimpleNamespace:
    """What Triton's JITFunction.run holds as `kernel`: a name, a hash, the TTIR, and (once
    loaded: load_kernel) its module and CUfunction handles."""
    return SimpleNamespace(
        name=name,
        hash=f"fake-{name}",
        asm={"ttir": (DATA_DIR / "ttir" / "add.ttir").read_text()},
        metadata_group={f"{name}.ttir": str(DATA_DIR / "ttir" / "add.ttir")},
        module=None,
        function=None,
    )


def load_kernel(kernel: SimpleNamespace) -> None:
    """CompiledKernel._init_handles: load the module once (a new CUfunction), then call
    knobs.runtime.kernel_load_end_hook as Triton 3.5+ does (3.4 has no such hook)."""
    from triton import knobs

    if kernel.module is not None:
        return
    kernel.function = _next_function[0]
    _next_function[0] += 0x40
    kernel.module = kernel.function - 8
    load = getattr(knobs.runtime, "kernel_load_end_hook", None)
    if load is not None:
        load(kernel.module, kernel.function, kernel.name, kernel.metadata_group, kernel.hash)


def triton_cache(*kernels: SimpleNamespace) -> Any:
    """A JITFunction whose device cache holds `kernels` (as JITFunction.run leaves them), so
    that FlagPrism's walk of Triton's caches finds them. Returned: keep it alive."""
    import triton

    @triton.jit
    def cached_kernel(x):  # noqa: ANN001
        pass

    cached_kernel.device_caches[0] = ({k.name: k for k in kernels}, {}, None, None, None)
    return cached_kernel


def _launcher(
    gpu: Gpu,
    gridX: int,
    gridY: int,
    gridZ: int,
    md: Any,
    symbol: str,
    fn: int,  # noqa: N803
) -> None:
    """Triton's launcher: enter hook, cuLaunchKernelEx of CUfunction `fn` (the device names the
    kernel by its symbol, whatever launch_metadata says), exit hook."""
    from triton import knobs

    # the knobs as JITFunction.run passes them: chains (3.5+) or one callable or None (3.4)
    enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    if enter is not None:
        enter(md)  # @launcher
    gpu.api_launch(DRIVER, CU_LAUNCH_KERNEL_EX, symbol, (gridX, gridY, gridZ), fn)
    if leave is not None:
        leave(md)


def triton_launch(
    gpu: Gpu,
    kernel: SimpleNamespace,
    grid: tuple[int, int, int],
    metadata: Callable[..., dict[str, Any]] | None = None,
    args: dict[str, Any] | None = None,
) -> None:
    """JITFunction.run: CompiledKernel.launch_metadata loads the kernel at its first launch,
    then builds the LazyDict that the hook may evaluate."""
    from triton.compiler.compiler import LazyDict

    load_kernel(kernel)
    md = LazyDict({"name": kernel.name, "function": kernel.function, "stream": 0})
    if metadata is not None:
        md.add(metadata, (grid, kernel, args or {}))
    _launcher(gpu, grid[0], grid[1], grid[2], md, kernel.name, kernel.function)  # @triton_launch


def add_metadata(grid: Any, kernel: Any, args: dict[str, Any]) -> dict[str, Any]:
    n = args["n"]
    return {"name": f"{kernel.name}[n={n}]", "flops32": n, "bytes": 12 * n}


# ------------------------------------------------------------------------------------------------
# Scenarios
# ------------------------------------------------------------------------------------------------


def scenario_scopes(gpu: Gpu, out: Path) -> dict[str, Any]:
    import flagprism.profiler as profiler
    from flagprism import _ext

    add = compiled_kernel("add_kernel")
    sid = profiler.start(str(out / "scopes"), data="trace", backend="cupti")
    assert profiler.sessions()[0]["backend"] == "cupti"
    with profiler.scope("outer"):
        for _ in range(3):
            triton_launch(gpu, add, (4, 1, 1))
        with profiler.state("fwd"):
            for _ in range(2):
                triton_launch(gpu, add, (4, 1, 1))
        with profiler.scope("inner"):
            gpu.torch_launch("torch_relu")
            gpu.torch_launch("torch_relu")
    triton_launch(gpu, add, (2, 1, 1))
    gpu.run()
    profiler.finalize(sid)
    first = list(gpu.durations)
    # A second session in the same process: the subscription is kept, callbacks re-enabled.
    profiler.start(str(out / "again"), backend="cupti")
    with profiler.scope("second"):
        triton_launch(gpu, add, (1, 1, 1))
    gpu.run()
    profiler.finalize()
    return {"durations": first, "second": gpu.durations[len(first) :], "stats": _ext.cupti_stats()}


def site_a(gpu: Gpu, kernel: SimpleNamespace) -> None:
    triton_launch(gpu, kernel, (3, 1, 1), add_metadata, {"n": 3000})  # @site_a


def site_b(gpu: Gpu, kernel: SimpleNamespace) -> None:
    triton_launch(gpu, kernel, (3, 1, 1), add_metadata, {"n": 1000})  # @site_b


def scenario_python(gpu: Gpu, out: Path) -> dict[str, Any]:
    import flagprism.profiler as profiler
    from flagprism import _ext

    add = compiled_kernel("add_kernel")
    inner = compiled_kernel("inner_kernel")

    def nested_metadata(grid: Any, kernel: Any, args: dict[str, Any]) -> dict[str, Any]:
        # Evaluating launch metadata may launch kernels itself: each must get its own context.
        triton_launch(gpu, inner, (1, 1, 1))  # @nested
        return {"flops32": 7.0}

    outer = compiled_kernel("outer_kernel")
    profiler.start(str(out / "python"), context="python", hook="triton", backend="cupti")
    with profiler.scope("step"):
        for _ in range(2):
            site_a(gpu, add)  # @call_a
        site_b(gpu, add)  # @call_b
        gpu.torch_launch("torch_mm")
    triton_launch(gpu, outer, (2, 1, 1), nested_metadata)  # @scenario_python
    gpu.run()
    profiler.finalize()
    return {"stats": _ext.cupti_stats()}


def scenario_mixed(gpu: Gpu, out: Path) -> dict[str, Any]:
    """A host session and a CUPTI session together, each deactivated for a while."""
    import flagprism.profiler as profiler

    add = compiled_kernel("add_kernel")
    host = profiler.start(str(out / "host"), backend="host", estimates=False)
    dev = profiler.start(str(out / "dev"), backend="cupti", estimates=False)
    with profiler.scope("s"):
        for _ in range(3):
            triton_launch(gpu, add, (4, 1, 1))
        gpu.deliver()
        profiler.deactivate(dev)
        for _ in range(2):
            triton_launch(gpu, add, (4, 1, 1))
        gpu.deliver()  # the device records come while the CUPTI session is deactivated
        profiler.activate(dev)
        profiler.deactivate(host)
        triton_launch(gpu, add, (4, 1, 1))
        gpu.deliver()
        profiler.activate(host)
    profiler.finalize()
    return {}


def scenario_busy(gpu: Gpu, out: Path) -> dict[str, Any]:
    """Another CUPTI subscriber (Proton, say) holds the process's slot."""
    import flagprism
    import flagprism.profiler as profiler
    from flagprism import _profhook, compat

    gpu.lib.fake_cupti_set_busy(b"Proton")
    res: dict[str, Any] = {}
    try:
        profiler.start(str(out / "explicit"), backend="cupti")
    except flagprism.Error as e:
        res["explicit"] = {"type": type(e).__name__, "status": e.status_name, "message": str(e)}
    res["sessions_after_error"] = profiler.sessions()
    res["hook_left"] = _profhook._gpu_enter in compat.hook_chain("launch_enter_hook").calls
    # backend=None on a "CUDA machine": gives way to the host backend, with a warning.
    profiler._cuda_present = lambda: True  # type: ignore[assignment]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiler.start(str(out / "auto"))
    res["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    res["auto_backend"] = profiler.sessions()[0]["backend"]
    triton_launch(gpu, compiled_kernel("add_kernel"), (4, 1, 1))
    profiler.finalize()
    res["subscribed"] = gpu.lib.fake_cupti_subscribed()
    return res


def scenario_auto(gpu: Gpu, out: Path) -> dict[str, Any]:
    """backend=None where a CUDA device is present: the CUPTI backend."""
    import flagprism.profiler as profiler
    from flagprism import _ext

    profiler._cuda_present = lambda: True  # type: ignore[assignment]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiler.start(str(out / "auto"))
    backend = profiler.sessions()[0]["backend"]
    triton_launch(gpu, compiled_kernel("add_kernel"), (4, 1, 1))
    gpu.run()
    profiler.finalize()
    return {
        "backend": backend,
        "warnings": [str(w.message) for w in caught],
        "stats": _ext.cupti_stats(),
        "search_dirs": profiler.cupti_search_dirs(),
    }


def scenario_capture(gpu: Gpu, out: Path) -> dict[str, Any]:
    """$FLAGPRISM_CUPTI_CAPTURE: bad values refused at start, naming the variable; a good one
    gets the raw activity buffers as files that FlagPrism's reader walks; unset, it stops."""
    import flagprism.profiler as profiler
    from flagprism import _ext

    res: dict[str, Any] = {"errors": {}}
    cap = out / "cap"
    cap.mkdir()
    (out / "file").write_text("")
    bad = {
        "missing": {"FLAGPRISM_CUPTI_CAPTURE": str(out / "missing")},
        "file": {"FLAGPRISM_CUPTI_CAPTURE": str(out / "file")},
        "bytes": {"FLAGPRISM_CUPTI_CAPTURE": str(cap), "FLAGPRISM_CUPTI_CAPTURE_BYTES": "4M"},
        "zero": {"FLAGPRISM_CUPTI_CAPTURE": str(cap), "FLAGPRISM_CUPTI_CAPTURE_BYTES": "0"},
    }
    for key, env in bad.items():
        os.environ.update(env)
        try:
            profiler.start(str(out / key), backend="cupti")
            res["errors"][key] = None
        except Exception as e:  # noqa: BLE001 - reported to the test
            res["errors"][key] = {"type": type(e).__name__, "message": str(e)}
        for k in env:
            del os.environ[k]
        res.setdefault("sessions_after_error", []).extend(profiler.sessions())
    os.environ["FLAGPRISM_CUPTI_CAPTURE"] = str(cap)
    add = compiled_kernel("add_kernel")
    profiler.start(str(out / "captured"), backend="cupti")
    for _ in range(3):
        triton_launch(gpu, add, (4, 1, 1))
    gpu.deliver()
    triton_launch(gpu, add, (2, 1, 1))
    gpu.deliver()
    profiler.finalize()
    res["stats"] = _ext.cupti_capture_stats()
    api = _ext.cupti_stats()["api_version"]
    res["files"] = {}
    for f in sorted(cap.iterdir()):
        res["files"][f.name] = [
            k["correlation"] for k in _ext.cupti_read_records(f.read_bytes(), api)
        ]
    res["api_version"] = api
    res["pid"] = os.getpid()
    del os.environ["FLAGPRISM_CUPTI_CAPTURE"]
    profiler.start(str(out / "after"), backend="cupti")
    triton_launch(gpu, add, (4, 1, 1))
    gpu.deliver()
    profiler.finalize()
    res["stats_after"] = _ext.cupti_capture_stats()
    res["files_after"] = len(list(cap.iterdir()))
    return res


def _ours_in_chains() -> dict[str, list[str]]:
    """FlagPrism's callables in Triton's launch hook chains, by chain (compat's chains over
    Triton 3.4's single-callable knobs)."""
    from flagprism import compat

    return {
        "enter": [
            getattr(f, "__name__", "?") for f in compat.hook_chain("launch_enter_hook").calls
        ],
        "exit": [getattr(f, "__name__", "?") for f in compat.hook_chain("launch_exit_hook").calls],
    }


def _in_load_chain() -> list[str]:
    """FlagPrism's callables in kernel_load_end_hook (None: Triton 3.4 has no such hook)."""
    from flagprism import compat

    chain = compat.hook_chain("kernel_load_end_hook")
    if chain is None:
        return None  # type: ignore[return-value]
    return [getattr(f, "__name__", "?") for f in chain.calls]


def scenario_lean(gpu: Gpu, out: Path) -> dict[str, Any]:
    """What sits on the launch path per mode. Shadow context: nothing in the launch chains,
    with estimates too (the backend's table, filled at kernel load or from Triton's caches).
    hook="triton": the C hook's fast path, kernels it knows (by CUfunction) handed over in C,
    the first launch of each through Python."""
    import flagprism.profiler as profiler
    from flagprism import _ext

    add, mul = compiled_kernel("add_kernel"), compiled_kernel("mul_kernel")
    sub, hk = compiled_kernel("sub_kernel"), compiled_kernel("hook_kernel")
    cache = triton_cache(add, sub)  # noqa: F841 - Triton's cache keeps them; so must we
    # add_kernel is compiled and loaded before any session: only the walk can teach it.
    triton_launch(gpu, add, (1, 1, 1))
    gpu.pending.clear()  # no session: its record would reach none
    facts: dict[str, Any] = {"idle": _ours_in_chains(), "idle_load": _in_load_chain()}
    # Shadow context, no hook, no estimates: nothing per launch but CUPTI's callback.
    profiler.start(str(out / "bare"), backend="cupti", estimates=False)
    facts["bare"] = _ours_in_chains()
    with profiler.scope("s"):
        for _ in range(3):
            triton_launch(gpu, add, (4, 1, 1))
    gpu.run()
    profiler.finalize()
    facts["after_bare"] = _ours_in_chains()
    # Estimates (the default): still nothing per launch in Python. add_kernel (loaded before)
    # is taught by the walk at start, mul_kernel by the load hook at its first launch.
    s0 = _ext.cupti_hook_stats()
    profiler.start(str(out / "est"), backend="cupti")
    facts["est"] = _ours_in_chains()
    facts["est_load"] = _in_load_chain()
    facts["est_known_at_start"] = _ext.cupti_kest_stats()["known"]
    with profiler.scope("s"):
        for g in (1, 2, 3, 4, 5):
            triton_launch(gpu, add, (g, 1, 1))
        for _ in range(4):
            triton_launch(gpu, mul, (2, 1, 1))
    gpu.run()
    s1 = _ext.cupti_hook_stats()
    facts["est_hook_calls"] = s1["slow"] + s1["fast"] - s0["slow"] - s0["fast"]
    facts["est_kest"] = _ext.cupti_kest_stats()
    # A host session next to it: the Python hooks join; estimates stay in the table.
    profiler.start(str(out / "host"), backend="host")
    facts["mixed"] = _ours_in_chains()
    profiler.finalize()
    facts["after"] = _ours_in_chains()
    facts["after_load"] = _in_load_chain()
    # Between sessions sub_kernel is loaded (no load hook then); the next start walks again.
    triton_launch(gpu, sub, (1, 1, 1))
    gpu.pending.clear()
    profiler.start(str(out / "again"), backend="cupti")
    with profiler.scope("s"):
        triton_launch(gpu, sub, (3, 1, 1))
        triton_launch(gpu, add, (2, 1, 1))
    gpu.run()
    profiler.finalize()
    # hook="triton": the C hook, learning each kernel at its first launch.
    s0 = _ext.cupti_hook_stats()
    profiler.start(str(out / "hook"), backend="cupti", hook="triton")
    facts["hook"] = _ours_in_chains()
    facts["hook_load"] = _in_load_chain()
    with profiler.scope("s"):
        for g in (1, 2, 3):
            triton_launch(gpu, hk, (g, 1, 1))
        triton_launch(gpu, add, (4, 1, 1))
    gpu.run()
    s1 = _ext.cupti_hook_stats()
    facts["hook_slow"] = s1["slow"] - s0["slow"]
    facts["hook_fast"] = s1["fast"] - s0["fast"]
    facts["hook_known"] = s1["known"]
    profiler.finalize()
    facts["final_load"] = _in_load_chain()
    facts["kest"] = _ext.cupti_kest_stats()
    facts["stats"] = _ext.cupti_stats()
    return facts


SCENARIOS = {
    "lean": scenario_lean,
    "scopes": scenario_scopes,
    "python": scenario_python,
    "mixed": scenario_mixed,
    "busy": scenario_busy,
    "auto": scenario_auto,
    "capture": scenario_capture,
}


def main() -> int:
    name, out = sys.argv[1], Path(sys.argv[2])
    gpu = Gpu(os.environ["FLAGPRISM_CUPTI_PATH"])
    try:
        facts = SCENARIOS[name](gpu, out)  # @main
    except BaseException:  # noqa: BLE001 - reported to the test
        traceback.print_exc()
        return 1
    print("FACTS " + json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())  # @module
