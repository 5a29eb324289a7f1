# SPDX-License-Identifier: Apache-2.0
"""Shared pytest set-up for tests/python: the `gpu` marker, fixtures for the built programs and
the Debugger fixture `dbg`.

Tests run against the *installed* package (scripts/test.sh installs it first). The C programs
come from the CMake build tree, named by environment variables that scripts/test.sh sets:
FLAGPRISM_CLI (the `flagprism` binary) and FP_UNIT_TESTS (the C unit-test runner). Without
them, `cli` falls back to the binary installed inside the package and `unit_tests` skips.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "tests" / "data"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA GPU (torch.cuda.is_available()); skipped elsewhere"
    )
    config.addinivalue_line(
        "markers",
        "compat(feature): needs `feature` (e.g. 'runtime-loops'); skipped, with the row's words,"
        " where a row of flagprism's known-bad table (flagprism.compat) stops it",
    )


def _cuda_available() -> bool:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _skip_known_bad(items: list[pytest.Item]) -> None:
    """Skip tests marked compat(feature) where the known-bad table says the feature cannot work
    with the installed versions, in the mode the tests run in (TRITON_INTERPRET)."""
    reasons: dict[str, str | None] = {}
    for item in items:
        for mark in item.iter_markers("compat"):
            feature = mark.args[0]
            if feature not in reasons:
                from flagprism.compat import skip_reason

                reasons[feature] = skip_reason(feature)
            if reasons[feature]:
                item.add_marker(
                    pytest.mark.skip(reason=f"known-bad combination: {reasons[feature]}")
                )


#: What Inductor says when it makes Triton kernels for CPU tensors without a CPU backend: the
#: tests that use `inductor_on_interpreter` run those kernels on Triton's interpreter instead.
_INDUCTOR_NO_CPU_BACKEND = (
    "ignore:Could not find an active CPU backend. Generated kernels will not be executable"
    ":UserWarning"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _skip_known_bad(items)
    for item in items:
        if "inductor_on_interpreter" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.filterwarnings(_INDUCTOR_NO_CPU_BACKEND))
    # The tests marked slow first (in their order): pytest-xdist hands tests out in this order,
    # so the long ones start early instead of leaving one worker busy after the others are done.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items or _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (and TRITON_INTERPRET unset)")
    for item in gpu_items:
        item.add_marker(skip)


def _program(env: str, fallback: Path | None) -> Path | None:
    value = os.environ.get(env)
    if value:
        path = Path(value)
        if not os.access(path, os.X_OK):
            pytest.fail(f"{env}={value} is not an executable file")
        return path
    if fallback is not None and os.access(fallback, os.X_OK):
        return fallback
    return None


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout the tests come from."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: checked-in inputs and golden files."""
    return DATA_DIR


@pytest.fixture(scope="session")
def installed_cli() -> Path:
    """The `flagprism` binary shipped inside the installed package (flagprism/_bin)."""
    from flagprism.cli import binary_path

    path = binary_path()
    if not os.access(path, os.X_OK):
        pytest.fail(f"the installed package has no CLI binary at {path}")
    return path


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `flagprism` binary under test: $FLAGPRISM_CLI, else the installed one."""
    from flagprism.cli import binary_path

    path = _program("FLAGPRISM_CLI", binary_path())
    if path is None:
        pytest.fail("no flagprism binary: set FLAGPRISM_CLI or install the package")
    return path


@pytest.fixture(scope="session")
def unit_tests() -> Path:
    """The C unit-test runner ($FP_UNIT_TESTS); skips the test when it is not set."""
    path = _program("FP_UNIT_TESTS", None)
    if path is None:
        pytest.skip("FP_UNIT_TESTS is not set (scripts/test.sh sets it)")
    return path


@pytest.fixture
def inductor_on_interpreter(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Let Inductor generate Triton kernels for CPU tensors on Triton's interpreter: what it
    lacks without a GPU driver is a backend name for its cache key and a libdevice the
    interpreter knows. Inductor's config is changed through its own ``patch()`` (monkeypatch
    would delete the option afterwards: pytest finds no ``cpu_backend`` in the config module's
    ``__dict__`` and undoes by deleting it, breaking every later test that compiles)."""
    import torch._inductor.config as ic
    import torch._inductor.runtime.triton_helpers as th
    import torch.utils._triton as ut
    import triton.language as tl

    monkeypatch.setattr(ut, "triton_hash_with_backend", lambda: "flagprism-interpreter")
    monkeypatch.setattr(ut, "triton_backend", lambda: None)
    monkeypatch.setattr(th, "libdevice", tl.math)
    with ic.patch(cpu_backend="triton"):
        yield


@pytest.fixture
def work_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh empty directory, made the current directory for the test (outputs such as
    fp_debug/ land there, never in the checkout)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def dbg(tmp_path: Path) -> Iterator[Any]:
    """flagprism.debugger, reset, exporting to tmp_path/fp_debug with its reports routed through
    the reference decoder (_refdecode.install); reset again afterwards."""
    import _refdecode

    import flagprism.debugger as debugger

    yield from _refdecode.installed(debugger, str(tmp_path / "fp_debug"))


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The interpreter running the tests (what the CLI gets as FLAGPRISM_PYTHON)."""
    return sys.executable
