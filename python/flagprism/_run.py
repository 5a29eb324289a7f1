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

Signals. SIGTERM and SIGHUP (what batch schedulers, ``timeout`` and a closed terminal send) end
the program the way SIGINT does: they raise ``Terminated``, a KeyboardInterrupt, in the main
thread, so programs and pytest stop as they stop on Ctrl-C. The tool then writes what was
recorded, told through ``_cli_incomplete(reason)`` (when the module has it) that the program did
not finish, and the process exits with 128 + the signal's number. A signal that arrives while the
outputs are written is caught in C (``_ext.guard_signals``: a Python handler could not run while
C writes) and gives the writing one more second: what is complete by then stays, a file still
being written is not replaced (its temporary file is removed), nothing is left to be written
after it, and no stalled reader of a FIFO holds the process. Outputs are never left half written
or mixed with temporary files, and the signal is never swallowed: it decides the exit status. A
signal the parent set to be ignored (nohup) stays ignored.

This module parses no user-facing options (the C command did) and knows nothing about what a
tool does.
"""

from __future__ import annotations

import importlib
import os
import runpy
import signal
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

#: Signals that end the program with the outputs written, marked incomplete.
SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread: a KeyboardInterrupt, so that programs and
    pytest stop on it as on Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"ended by {signal.Signals(signum).name}")
        self.signum = signum


class _SignalState:
    received: int | None = None  # the first of SIGNALS that arrived
    writing = False  # the outputs are being written: note signals, raise nothing


def _on_signal(signum: int, frame: Any) -> None:
    if _SignalState.received is None:
        _SignalState.received = signum
    if _SignalState.writing:
        return  # finish the outputs first; the exit status says what happened
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _install_signal_handlers() -> None:
    for name in SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        current = signal.getsignal(sig)
        if current is signal.SIG_IGN:
            continue  # ignored by the parent (nohup, a background job): keep it so
        if sig == signal.SIGINT and current is not signal.default_int_handler:
            continue  # someone else's handler
        signal.signal(sig, _on_signal)


def _signal_reason(signum: int) -> str:
    name = signal.Signals(signum).name
    return f"the program was ended by {name} (signal {signum}) before it finished"


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


def _say(text: str) -> None:
    """Write to stderr; a terminal that hung up (SIGHUP) must not stop the outputs."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _run_program(target: str, args: list[str]) -> int:
    """Run the program; its exit status (128 + N when a signal ended it)."""
    try:
        if target == "pytest":
            return _run_pytest(args)
        _run_script(target, args)
        return 0
    except SystemExit as e:
        return _exit_status(e)
    except Terminated as e:
        _say(f"flagprism: {e}\n")
        return 128 + e.signum
    except KeyboardInterrupt as e:
        _print_exception(e)
        return EXIT_INTERRUPTED
    except BaseException as e:  # noqa: BLE001 - the program's own failure: report, then exit 1
        _print_exception(e)
        return EXIT_FAILURE


def main(argv: list[str] | None = None) -> NoReturn:
    tool, options, target, args = parse(sys.argv[1:] if argv is None else argv)
    if _no_gpu_driver():
        _die(f"{NO_DRIVER} ({tool} ran nothing and wrote nothing)")
    module: Any = importlib.import_module(TOOLS[tool])
    _install_signal_handlers()
    status = 0
    try:
        try:
            module._cli_begin(options)
        except Exception as e:  # noqa: BLE001 - a bad option or environment: say it, run nothing
            _die(f"{tool}: {type(e).__name__}: {e}")
        status = _run_program(target, args)
        try:
            _join_threads()
        except KeyboardInterrupt:
            status = status or EXIT_INTERRUPTED
    except KeyboardInterrupt:
        # A signal between the program and the outputs (or while the tool started).
        status = status or EXIT_INTERRUPTED
    # From here on a signal is noted, not raised: the outputs are written whole.
    _SignalState.writing = True
    received = _SignalState.received
    if received is not None:
        status = 128 + received
        reason = _signal_reason(received)
        mark = getattr(module, "_cli_incomplete", None)
        try:
            if mark is not None:
                mark(reason)
        except Exception as e:  # noqa: BLE001 - the outputs come first
            _say(f"flagprism: warning: {tool}: cannot mark the outputs incomplete: {e}\n")
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    from flagprism import _ext

    _ext.guard_signals()
    try:
        lines = module._cli_end(status)
    except Exception as e:  # noqa: BLE001
        _say(f"flagprism: error: {tool}: writing the outputs failed: {type(e).__name__}: {e}\n")
        status = status or EXIT_FAILURE
        lines = []
    finally:
        caught = _ext.release_signals()
    if caught and _SignalState.received is None:
        _SignalState.received = caught
    # A tool may turn its results into the exit status (`debug --sanitize` with findings).
    exit_status = getattr(module, "_cli_exit_status", None)
    if exit_status is not None:
        status = int(exit_status(status))
    if received is not None:
        lines.append(
            f"flagprism: {tool}: {_signal_reason(received)}; what it recorded until then was "
            "written, marked incomplete"
        )
    late = _SignalState.received if received is None else None
    if late is not None:
        # The program had finished; the outputs are whole. The signal still decides the status.
        status = 128 + late
        lines.append(
            f"flagprism: {tool}: {signal.Signals(late).name} arrived while the outputs were "
            "written; what was complete within a second of it was kept"
        )
    _say("".join(line + "\n" for line in lines))
    raise SystemExit(status)


if __name__ == "__main__":
    main()
