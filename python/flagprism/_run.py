# SPDX-License-Identifier: Apache-2.0
"""Run a user's program under a FlagPrism tool: the bootstrap behind ``flagprism profile`` and
``flagprism debug``.

The C command checks its options and execs Python with this module (see
tools/flagprism/cmd-profile.c); the command line it passes is

    TOOL [--OPTION VALUE]... -- TARGET [ARGS...]

TOOL names a row of ``TOOLS``: a module with ``_cli_begin(options: dict[str, str])``, called
before the program runs, and ``_cli_end(status: int) -> list[str]``, called after it ended in
any way (returned, raised, called ``sys.exit``), which writes the tool's outputs and returns
lines to print, and optionally ``_cli_exit_status(status) -> int``, which may turn the tool's
results into the exit status (``debug --sanitize`` exits non-zero on findings). TARGET is a
script, run as ``python SCRIPT ARGS`` would run it (``__main__``, ``sys.argv``, the script's
directory first on ``sys.path``), or ``pytest``, which runs ``pytest.main(ARGS)``. The process
exits with the program's status (or what ``_cli_exit_status`` made of it).

Before anything else, a machine where the program could launch no kernel (no active Triton
driver and TRITON_INTERPRET unset) is refused with ``NO_DRIVER`` and exit status 1: the tool is
not started and writes nothing.

This module parses no user-facing options (the C command did) and knows nothing about what a
tool does.
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
import threading
import traceback
from types import TracebackType
from typing import Any, NoReturn

#: tool name -> module providing _cli_begin(options) and _cli_end(status).
TOOLS = {
    "profile": "flagprism.profiler",
    "debug": "flagprism.debugger",
}

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Said instead of Triton's "0 active drivers" traceback, before the program runs.
NO_DRIVER = "no GPU driver: run with TRITON_INTERPRET=1 to use Triton's interpreter"


def _die(msg: str, status: int = EXIT_FAILURE) -> NoReturn:
    sys.stderr.write(f"flagprism: error: {msg}\n")
    sys.stderr.flush()
    raise SystemExit(status)


def parse(argv: list[str]) -> tuple[str, dict[str, str], str, list[str]]:
    """(tool, options, target, target's args) from the bootstrap's command line."""
    if not argv or argv[0] not in TOOLS:
        _die(
            f"flagprism._run: expected a tool ({', '.join(TOOLS)}) first, got {argv[:1]}",
            EXIT_USAGE,
        )
    tool, rest = argv[0], argv[1:]
    options: dict[str, str] = {}
    i = 0
    while i < len(rest) and rest[i] != "--":
        key = rest[i]
        if not key.startswith("--") or i + 1 >= len(rest):
            _die(f"flagprism._run: malformed option list near {key!r}", EXIT_USAGE)
        options[key[2:]] = rest[i + 1]
        i += 2
    if i + 1 >= len(rest):
        _die("flagprism._run: expected '-- TARGET [ARGS...]'", EXIT_USAGE)
    return tool, options, rest[i + 1], rest[i + 2 :]


def _exit_status(e: SystemExit) -> int:
    """The status `python` would exit with for this SystemExit (printing a message code)."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    sys.stderr.write(f"{code}\n")
    return EXIT_FAILURE


def _print_exception(exc: BaseException) -> None:
    """Print a traceback as Python would, without this module's and runpy's frames."""
    own = {
        os.path.abspath(__file__),
        os.path.abspath(getattr(runpy, "__file__", "") or ""),
        "<frozen runpy>",
    }
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        file = tb.tb_frame.f_code.co_filename
        if file not in own and os.path.abspath(file) not in own:
            break
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def _no_gpu_driver() -> bool:
    """True when Triton's interpreter is off and none of Triton's backends has an active driver,
    so the program's first kernel launch would fail with Triton's "0 active drivers" error. The
    check is Triton's own (each backend's ``driver.is_active()``), made before the program runs
    so that a tool writes nothing for a run that cannot launch anything. Without Triton there is
    nothing to check."""
    try:
        from triton import knobs

        interpret = bool(knobs.runtime.interpret)
    except Exception:  # noqa: BLE001 - an older Triton without knobs, or none at all
        interpret = os.environ.get("TRITON_INTERPRET", "").lower() in ("1", "true", "on", "yes")
    # A CUDA driver named for FlagPrism's CUPTI backend (FLAGPRISM_CUDA_DRIVER_PATH, docs/
    # cupti-backend.md; the fake-GPU tests use it) is taken as the user's word that there is one.
    if interpret or os.environ.get("FLAGPRISM_CUDA_DRIVER_PATH"):
        return False
    try:
        from triton.backends import backends
    except Exception:  # noqa: BLE001 - no (working) Triton: the program's own import will say
        return False
    for backend in backends.values():
        try:
            if backend.driver.is_active():
                return False
        except Exception:  # noqa: BLE001 - a broken backend counts as inactive, as in Triton
            continue
    return True


def _run_script(path: str, args: list[str]) -> None:
    sys.argv = [path, *args]
    script_dir = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, script_dir)
    runpy.run_path(path, run_name="__main__")


def _run_pytest(args: list[str]) -> int:
    try:
        import pytest
    except ImportError as e:
        _die(f"cannot run pytest: {e}")
    sys.argv = ["pytest", *args]
    return int(pytest.main(list(args)))


def _join_threads() -> None:
    """Wait for the program's non-daemon threads, as the interpreter does before exiting, so
    their work is part of the outputs."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon and t.is_alive():
            t.join()


def main(argv: list[str] | None = None) -> NoReturn:
    tool, options, target, args = parse(sys.argv[1:] if argv is None else argv)
    if _no_gpu_driver():
        _die(f"{NO_DRIVER} ({tool} ran nothing and wrote nothing)")
    module: Any = importlib.import_module(TOOLS[tool])
    try:
        module._cli_begin(options)
    except Exception as e:  # noqa: BLE001 - a bad option or environment: say it, run nothing
        _die(f"{tool}: {type(e).__name__}: {e}")
    status = 0
    try:
        if target == "pytest":
            status = _run_pytest(args)
        else:
            _run_script(target, args)
    except SystemExit as e:
        status = _exit_status(e)
    except KeyboardInterrupt as e:
        _print_exception(e)
        status = EXIT_INTERRUPTED
    except BaseException as e:  # noqa: BLE001 - the program's own failure: report, then exit 1
        _print_exception(e)
        status = EXIT_FAILURE
    try:
        _join_threads()
    except KeyboardInterrupt:
        status = status or EXIT_INTERRUPTED
    sys.stdout.flush()
    try:
        lines = module._cli_end(status)
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(
            f"flagprism: error: {tool}: writing the outputs failed: {type(e).__name__}: {e}\n"
        )
        status = status or EXIT_FAILURE
        lines = []
    # A tool may turn its results into the exit status (`debug --sanitize` with findings).
    exit_status = getattr(module, "_cli_exit_status", None)
    if exit_status is not None:
        status = int(exit_status(status))
    for line in lines:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    raise SystemExit(status)


if __name__ == "__main__":
    main()
