# SPDX-License-Identifier: Apache-2.0
"""The native extension and the packaging around it: version, status-to-exception mapping,
exception attributes, and the `flagprism` / `python -m flagprism` entry points."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import flagprism
from flagprism import _ext

# (status code, symbolic name, exception type) for every status of include/flagprism/status.h.
STATUS_TABLE = [
    (-1, "FP_ENOMEM", MemoryError),
    (-2, "FP_EINVAL", ValueError),
    (-3, "FP_EIO", OSError),
    (-4, "FP_EFORMAT", flagprism.FormatError),
    (-5, "FP_EVERSION", flagprism.FormatError),
    (-6, "FP_ENOTSUP", flagprism.NotSupportedError),
    (-7, "FP_EVENDOR", flagprism.VendorError),
    (-8, "FP_ELIMIT", flagprism.LimitError),
    (-9, "FP_ENOENT", OSError),
    (-10, "FP_ESTATE", flagprism.Error),
    (-11, "FP_EOVERFLOW", flagprism.OverflowRecordsError),
    (-12, "FP_EBUSY", flagprism.Error),
]


def version_from_header(repo_root: Path) -> str:
    text = (repo_root / "include" / "flagprism" / "version.h").read_text()
    parts = [re.search(rf"#define FP_VERSION_{p} (\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    assert all(parts), "version.h lost one of its FP_VERSION_* lines"
    return ".".join(m.group(1) for m in parts if m)


def test_ext_version_matches_header_and_metadata(repo_root: Path) -> None:
    from importlib.metadata import version

    assert flagprism.__version__ == _ext.version()
    assert _ext.version() == version_from_header(repo_root)
    assert version("flagprism") == _ext.version()


def test_ext_exception_hierarchy() -> None:
    assert issubclass(flagprism.Error, Exception)
    for cls in (
        flagprism.FormatError,
        flagprism.LimitError,
        flagprism.OverflowRecordsError,
        flagprism.VendorError,
        flagprism.NotSupportedError,
    ):
        assert issubclass(cls, flagprism.Error)
        assert cls.__module__ == "flagprism._ext"
        assert cls is getattr(_ext, cls.__name__)
    assert issubclass(flagprism.FormatError, ValueError)
    assert not issubclass(flagprism.LimitError, ValueError)


@pytest.mark.parametrize("code,name,exc_type", STATUS_TABLE, ids=[row[1] for row in STATUS_TABLE])
def test_ext_status_maps_to_exception(code: int, name: str, exc_type: type) -> None:
    assert _ext.status_name(code) == name
    with pytest.raises(exc_type) as info:
        _ext._raise_status(code)
    exc = info.value
    # The exact type: a FlagPrism error must not surface as a sibling class.
    assert type(exc) is exc_type
    assert exc.status == code
    assert exc.status_name == name
    assert exc.detail is None and exc.offset is None
    assert exc.line is None and exc.column is None
    assert str(exc) == _ext.strerror(code)


def test_ext_exception_text_position() -> None:
    with pytest.raises(flagprism.FormatError) as info:
        _ext._raise_status(-4, "expected ','", offset=17, line=3, col=5)
    exc = info.value
    assert str(exc) == "malformed input: expected ',' (line 3, column 5)"
    assert (exc.detail, exc.offset, exc.line, exc.column) == ("expected ','", 17, 3, 5)
    assert isinstance(exc, ValueError)


def test_ext_exception_byte_offset() -> None:
    with pytest.raises(flagprism.LimitError) as info:
        _ext._raise_status(-8, "record larger than the buffer", offset=4096)
    exc = info.value
    assert str(exc) == "size limit exceeded: record larger than the buffer (byte offset 4096)"
    assert (exc.offset, exc.line, exc.column) == (4096, None, None)


def test_ext_exception_builtin_types_carry_attributes() -> None:
    with pytest.raises(OSError) as info:
        _ext._raise_status(-3, "cannot open 'x.json'")
    assert info.value.status_name == "FP_EIO"
    assert info.value.detail == "cannot open 'x.json'"
    assert info.value.offset == 0
    assert str(info.value) == "input/output error: cannot open 'x.json'"


def test_ext_exception_keeps_context() -> None:
    with pytest.raises(flagprism.Error) as info:
        try:
            raise KeyError("inner")
        except KeyError:
            _ext._raise_status(-10)
    assert isinstance(info.value.__context__, KeyError)


def test_ext_bad_status_arguments() -> None:
    assert _ext.status_name(0) == "FP_OK"
    assert _ext.strerror(0) == "success"
    assert _ext.status_name(-1000) == "FP_EUNKNOWN"
    assert _ext.strerror(12345) == "unknown status"
    with pytest.raises(SystemError):
        _ext._raise_status(0)
    with pytest.raises(OverflowError):
        _ext.status_name(1 << 40)
    with pytest.raises(TypeError):
        _ext.strerror("FP_EIO")
    with pytest.raises(flagprism.Error, match="unknown status"):
        _ext._raise_status(-1000)


def test_ext_module_reimport_is_isolated() -> None:
    # Multi-phase init: a second module object built from the same spec gets its own types.
    import importlib.util

    spec = importlib.util.find_spec("flagprism._ext")
    assert spec is not None
    other = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(other)
    assert other.Error is not _ext.Error
    with pytest.raises(other.FormatError):
        other._raise_status(-4)


def run(cmd: list[str | os.PathLike[str]]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def test_ext_python_m_flagprism_version(cli: Path, installed_cli: Path) -> None:
    via_python = run([sys.executable, "-m", "flagprism", "--version"])
    assert via_python.returncode == 0, via_python.stderr
    assert _ext.version() in via_python.stdout
    for binary in {cli, installed_cli}:
        direct = run([binary, "--version"])
        assert direct.returncode == 0, direct.stderr
        assert via_python.stdout == direct.stdout


def _installed_command() -> Path:
    """The `flagprism` command the package installed into its environment's scripts directory
    (bin/), found through the installed distribution's file list (RECORD)."""
    from importlib.metadata import distribution

    dist = distribution("flagprism")
    hits = [
        f for f in dist.files or [] if f.name == "flagprism" and f.parent.name in ("bin", "scripts")
    ]
    assert len(hits) == 1, f"the installed flagprism has no single command in bin/: {hits}"
    return Path(dist.locate_file(hits[0])).resolve()


def test_ext_installed_command_is_the_native_binary(installed_cli: Path) -> None:
    """`flagprism` on the environment's PATH is the C program itself (no Python start-up for
    commands that need no Python), byte for byte the one in the package (`python -m flagprism`
    runs that), and it runs."""
    command = _installed_command()
    head = command.read_bytes()[:4]
    assert head == b"\x7fELF", f"{command} is not an ELF executable (starts {head!r})"
    assert os.access(command, os.X_OK), command
    assert command.read_bytes() == installed_cli.read_bytes()
    out = run([command, "--version"])
    assert out.returncode == 0, out.stderr
    assert _ext.version() in out.stdout


def test_ext_launcher_execs_binary_with_python(work_dir: Path) -> None:
    # The launcher replaces itself with the binary, passing the arguments and FLAGPRISM_PYTHON.
    fake = work_dir / "fake-flagprism"
    fake.write_text('#!/bin/sh\necho "python=$FLAGPRISM_PYTHON args=$*"\nexit 3\n')
    fake.chmod(0o755)
    code = (
        "import sys, pathlib, flagprism.cli as c\n"
        f"c.binary_path = lambda: pathlib.Path({str(fake)!r})\n"
        "c.main()\n"
    )
    out = run([sys.executable, "-c", code, "doctor", "--json"])
    assert out.returncode == 3
    assert out.stdout == f"python={sys.executable} args=doctor --json\n"


def test_ext_launcher_missing_binary(work_dir: Path) -> None:
    code = (
        "import pathlib, flagprism.cli as c\n"
        "c.binary_path = lambda: pathlib.Path('/nonexistent/flagprism')\n"
        "c.main()\n"
    )
    out = run([sys.executable, "-c", code, "--version"])
    assert out.returncode == 127
    assert "binary is missing: /nonexistent/flagprism" in out.stderr
