# SPDX-License-Identifier: Apache-2.0
"""Child-process side of tests/python/test_profiler_metrics_fake.py: the Profiler's hardware
metrics (``start(metrics=...)``) on libfakecupti.so's fake range profiler.

_cuptifake.py plays Triton's launcher and the GPU's activity records; this module adds what the
range profiler would measure: one range of metric values per kernel, in launch order, given
through the fake's fake_prof_* controls (ctypes, in the test only). Each scenario prints one
JSON line of facts. Usage: python _metricsfake.py SCENARIO OUTDIR (FLAGPRISM_CUPTI_PATH and
FLAGPRISM_CUDA_DRIVER_PATH set to the fake).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import _cuptifake as cf


def _controls(gpu: cf.Gpu) -> Any:
    lib = gpu.lib
    lib.fake_prof_add_range.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_size_t]
    lib.fake_prof_add_range.restype = ctypes.c_int
    lib.fake_prof_set_error.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.fake_prof_set_error.restype = None
    lib.fake_prof_set_passes.argtypes = [ctypes.c_size_t]
    lib.fake_prof_set_unsupported.argtypes = [ctypes.c_char_p]
    lib.fake_prof_state.argtypes = [ctypes.c_int]
    lib.fake_prof_state.restype = ctypes.c_int
    lib.fake_prof_reset()
    return lib


def _range(lib: Any, *values: float) -> None:
    arr = (ctypes.c_double * len(values))(*values)
    assert lib.fake_prof_add_range(arr, len(values)) == 0, "the fake refused a range"


def scenario_metrics(gpu: cf.Gpu, out: Path) -> dict[str, Any]:
    import flagprism.profiler as profiler

    lib = _controls(gpu)
    lib.fake_prof_set_passes(2)
    lib.fake_prof_set_unsupported(b"nope__x.sum")
    add, mm = cf.compiled_kernel("add_kernel"), cf.compiled_kernel("mm_kernel")
    sid = profiler.start(
        str(out / "hwm"),
        backend="cupti",
        metrics=["dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", "nope__x.sum"],
    )
    with profiler.scope("step"):
        cf.triton_launch(gpu, add, (4, 1, 1))
        cf.triton_launch(gpu, add, (4, 1, 1))
    cf.triton_launch(gpu, mm, (2, 1, 1))
    # The kernel records come while the range profiler runs: without times, as CUPTI 13.0's
    # do on the H200 (the fake's default), so the kernel times are the ranges' own.
    gpu.run(base_ns=1000)
    d = [float(x) for x in gpu.durations]
    # What the range profiler measured, kernel by kernel in launch order: the two requested
    # metrics the chip knows, then gpu__time_duration.sum (always collected).
    _range(lib, 4096.0, 10.0, d[0])
    _range(lib, 8192.0, 40.0, d[1])
    _range(lib, 100.0, 90.0, d[2])
    profiler.finalize(sid)
    return {
        "durations": gpu.durations,
        "status": profiler.metrics_status(),
        "torn_down": [lib.fake_prof_state(i) for i in range(4)],
    }


def scenario_errors(gpu: cf.Gpu, out: Path) -> dict[str, Any]:
    import flagprism.profiler as profiler
    from flagprism import _ext

    lib = _controls(gpu)
    res: dict[str, Any] = {}
    try:
        profiler.start(str(out / "host"), backend="host", metrics="default")
    except ValueError as e:
        res["host"] = str(e)
    try:
        profiler.start(str(out / "bad"), backend="cupti", metrics="dram bytes")
    except ValueError as e:
        res["bad_name"] = str(e)
    lib.fake_prof_set_error(b"cuptiRangeProfilerEnable", 35)
    try:
        profiler.start(str(out / "noperm"), metrics="default")
    except _ext.Error as e:
        res["noperm"] = [type(e).__name__, str(e)]
    res["sessions_after"] = len(profiler.sessions())
    lib.fake_prof_set_error(None, 0)
    # The failed request is not left for the next session.
    sid = profiler.start(str(out / "plain"), backend="cupti")
    cf.triton_launch(gpu, cf.compiled_kernel("add_kernel"), (1, 1, 1))
    gpu.run()
    profiler.finalize(sid)
    res["plain_hw"] = "hw:" in (out / "plain.hatchet").read_text()
    res["torn_down"] = [lib.fake_prof_state(i) for i in range(4)]
    return res


SCENARIOS = {"metrics": scenario_metrics, "errors": scenario_errors}


def main() -> int:
    name, out = sys.argv[1], Path(sys.argv[2])
    gpu = cf.Gpu(os.environ["FLAGPRISM_CUPTI_PATH"])
    try:
        facts = SCENARIOS[name](gpu, out)
    except BaseException:  # noqa: BLE001 - reported to the test
        traceback.print_exc()
        return 1
    print("FACTS " + json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
