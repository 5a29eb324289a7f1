# SPDX-License-Identifier: Apache-2.0
"""The Debugger as a pytest plugin: ``pytest --flagprism-check=bounds,nan tests/``.

Registered through the ``pytest11`` entry point, so installing FlagPrism is enough; it does
nothing unless one of its options is given (it imports nothing heavy until then). With
``--flagprism-check=LIST`` the Debugger runs in check mode for the whole session (see
docs/guide/debugger.md, "Check mode"); each finding names the test that launched the kernel (its node
id, in the summary, the reports and a "flagprism" section of that test's report), and reports
are named after the test; ``--flagprism-fail`` fails a test that launched a kernel with a
finding. The output directory (``--flagprism-output``, default ``fp_debug``) is checked before
any test runs. At the end of the session the summary is written there and printed.

``flagprism debug --check LIST pytest ...`` loads this plugin too: the command then owns the
Debugger (activation, summary, exit status) and the plugin only attributes findings to tests.

Under pytest-xdist (``-n N``) the tests run in worker processes: each worker runs the Debugger
(with the plugin's options, or the command's, which the controlling process hands it) and
writes its part, reports and a summary marked as that worker's, in ``OUTPUT/<worker>/``; the
controlling process runs no test and records none, and when the session ends it merges the
parts it was told of into ``OUTPUT/summary.json`` (fp_dbg_summary_write_parts(), which says the
workers that died without writing theirs). Merging and formatting are the C library's.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

#: Set by `flagprism debug` when it runs pytest: the command owns the Debugger.
MANAGED_ENV = "FLAGPRISM_DEBUG_MANAGED"

#: What the controlling process hands each pytest-xdist worker (its workerinput), and what the
#: worker hands back (its workeroutput).
_XDIST_KEY = "flagprism_debug"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("flagprism", "FlagPrism Debugger")
    group.addoption(
        "--flagprism-check",
        metavar="LIST",
        default=None,
        help="check every Triton kernel the tests launch: a comma list of bounds, nan, inf, "
        "precision, domain",
    )
    group.addoption(
        "--flagprism-fail",
        action="store_true",
        default=False,
        help="fail a test that launched a kernel with a finding",
    )
    group.addoption(
        "--flagprism-output",
        metavar="DIR",
        default="fp_debug",
        help="where the summary and the reports of launches with findings go (default fp_debug)",
    )
    group.addoption(
        "--flagprism-all-reports",
        action="store_true",
        default=False,
        help="write every launch's report, not only those with findings",
    )


def pytest_configure(config: Any) -> None:
    managed = os.environ.get(MANAGED_ENV) == "1"
    check = config.getoption("flagprism_check")
    if not check and not managed:
        if config.getoption("flagprism_fail"):
            raise pytest.UsageError("--flagprism-fail needs --flagprism-check=LIST")
        return
    if _is_xdist_controller(config):
        plugin: Any = _Controller(config, check, managed)
    else:
        plugin = _Session(config, check, managed)
    config.pluginmanager.register(plugin, "flagprism-debugger")


def _is_xdist_controller(config: Any) -> bool:
    """Whether this process hands the tests to pytest-xdist workers and runs none itself (as
    xdist decides it: a distribution mode and workers, not only collecting)."""
    if hasattr(config, "workerinput"):
        return False
    return (
        config.getoption("dist", "no") != "no"
        and bool(config.getoption("tx", None))
        and not config.getoption("collectonly", False)
    )


def _checked_output(path: str, option: str) -> str:
    """The output directory as an absolute path, made and checked now: a usage error, before
    any test runs, when it cannot take the reports (a regular file, a read-only directory)."""
    from flagprism import debugger

    out = os.path.abspath(path)
    try:
        debugger._check_output_location(out)
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise pytest.UsageError(f"{option} {out}: the Debugger cannot write there: {why}") from None
    return out


def _test_tag(item: Any, worker: str | None) -> str:
    """What this test's reports are named after: its name (parameters included), made of
    letters, digits and '_' only (the launch JSON carries it unescaped), after its worker's id."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", str(getattr(item, "name", "") or "test")).strip("_")
    name = name[:80].rstrip("_") or "test"
    if not (name[0].isalpha() or name[0] == "_"):
        name = "test_" + name
    return f"{worker}_{name}" if worker else name


class _Session:
    """The plugin in a process that runs tests: alone, or as a pytest-xdist worker."""

    def __init__(self, config: Any, check: str | None, managed: bool) -> None:
        from flagprism import debugger

        self.debugger = debugger
        self.config = config
        self.managed = managed
        self.fail = bool(config.getoption("flagprism_fail"))
        self.text = ""
        winput = getattr(config, "workerinput", None)
        handed = winput.get(_XDIST_KEY) if winput is not None else None
        # a worker: its id, and what the controlling process handed it (None: a worker of a
        # session this plugin does not run, such as an inner pytest under `flagprism debug`)
        self.worker = str(winput.get("workerid", "gw")) if handed is not None else None
        self.owns = not managed or self.worker is not None  # this process runs the Debugger
        if handed is not None:
            self.output = _checked_output(
                os.path.join(handed["output"], self.worker), "--flagprism-output"
            )
        elif not managed:
            self.output = _checked_output(
                config.getoption("flagprism_output"), "--flagprism-output"
            )
        else:
            self.output = ""  # the command's (`flagprism debug -o`)
        if not self.owns:
            return
        if self.worker is not None:
            # the part this worker writes, never an earlier session's under its name
            for name in ("summary.json", "summary.txt"):
                try:
                    os.remove(os.path.join(self.output, name))
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise pytest.UsageError(
                        f"--flagprism-output: cannot replace {self.output}/{name}: {e}"
                    ) from None
        try:
            if handed is not None and handed.get("options") is not None:
                # `flagprism debug ... pytest -n N`: the command's options, in this worker
                debugger._cli_begin(dict(handed["options"], output=self.output))
            else:
                self._begin(check)
        except (OSError, ValueError) as e:
            what = "flagprism debug" if managed else "--flagprism-check"
            raise pytest.UsageError(f"{what}: {e}") from None
        if self.worker is not None:
            debugger._summary_worker(self.worker, winput.get("workercount"))
            debugger._report_names(self.worker)

    def _begin(self, check: str | None) -> None:
        from flagprism import _ext  # type: ignore[attr-defined]

        debugger = self.debugger
        debugger.configure(
            output_dir=self.output,
            all_reports=True if self.config.getoption("flagprism_all_reports") else None,
        )
        debugger.reset_summary()
        debugger.activate(check=check)
        s = debugger._summary_obj()
        _ext.debug_summary_set(s, "mode", "check")
        _ext.debug_summary_set(
            s,
            "checks",
            ",".join(c for c in debugger.CHECKS if c in debugger.get_config()["check"]),
        )
        _ext.debug_summary_set(s, "command", f"pytest --flagprism-check={check}")
        _ext.debug_summary_set(s, "output_dir", self.output)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.debugger._report_names(_test_tag(item, self.worker))
        try:
            yield
        finally:
            self.debugger._report_names(self.worker)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
        outcome = yield
        rep = outcome.get_result()
        runs = self.debugger.take_exported_runs()  # finishes this phase's launches
        bad = [r for r in runs if r.get("findings_count")]
        if not bad:
            return
        lines = []
        for r in bad:
            for f in r["findings"] or []:
                where = f"{os.path.basename(r.get('source_file') or '')}:{f.get('line')}"
                lines.append(f"{f.get('kind')} in {r['kernel']} at {where}: {f.get('message')}")
            if not r["findings"]:
                lines.append(
                    f"{r['findings_count']} finding(s) in {r['kernel']} (launch {r['run_index']}; "
                    "its report was not written: max_reports)"
                )
            if r.get("txt"):
                lines.append(f"    report: {r['txt']}")
        text = "\n".join(lines)
        rep.sections.append(("flagprism", text))
        if self.fail and rep.passed:
            rep.outcome = "failed"
            rep.longrepr = f"flagprism: kernels launched by {item.nodeid} have findings:\n{text}"

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        if not self.owns:
            return
        from flagprism import _ext  # type: ignore[attr-defined]

        debugger = self.debugger
        debugger._report_names(None)
        error = None
        if self.managed:
            lines = debugger._cli_end(int(exitstatus))  # writes the summary
            if not os.path.isfile(os.path.join(self.output, "summary.json")):
                error = "; ".join(x for x in lines if ": error: " in x) or "not written"
        else:
            debugger.deactivate()
            s = debugger._summary_obj()
            _ext.debug_summary_set(s, "exit_status", int(exitstatus))
            try:
                debugger.write_summary(self.output)
            except OSError as e:
                error = str(e)
                self.text = f"flagprism: the summary could not be written to {self.output}: {e}\n"
            self.text += _ext.debug_summary_format(s, "txt")
        if self.worker is not None:
            # what the controlling process merges (pytest_testnodedown)
            self.config.workeroutput[_XDIST_KEY] = {
                "summary": None if error else os.path.join(self.output, "summary.json"),
                "error": error,
                "write_failures": int(debugger._write_failures["count"]),
                "causes": [str(c) for c in debugger._write_failures["causes"][:3]],
                "incomplete_runs": int(debugger._cli_state.get("incomplete_runs", 0) or 0),
            }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.text:
            terminalreporter.section("flagprism")
            for line in self.text.rstrip("\n").split("\n"):
                terminalreporter.write_line(line)


class _Controller:
    """The plugin in the process that hands the tests to pytest-xdist workers: it checks the
    output directory, hands the workers where to write (and, under `flagprism debug`, the
    command's options), records which workers ran and which wrote their part, and merges the
    parts at the end (itself, or through `flagprism debug`, which owns the summary then). It
    runs no test and writes no summary of its own."""

    def __init__(self, config: Any, check: str | None, managed: bool) -> None:
        from flagprism import debugger

        self.debugger = debugger
        self.managed = managed
        self.text = ""
        # what `flagprism debug` merges at its end (debugger._cli_end), or this plugin
        self.session: dict[str, Any] = {
            "parts": {},  # worker id -> its summary.json
            "started": [],
            "write_failures": 0,
            "causes": [],
            "incomplete_runs": 0,
        }
        self.options = None
        if managed:
            state = debugger._cli_state
            if not state.get("options"):
                self.output = None  # not under `flagprism debug` itself: nothing to run
                return
            self.output = state["output"]  # checked by the command
            self.options = state["options"]
            state["xdist"] = self.session
            return
        self.check = check
        self.output = _checked_output(config.getoption("flagprism_output"), "--flagprism-output")
        try:
            checks = debugger._check_checks(check)
        except ValueError as e:
            raise pytest.UsageError(f"--flagprism-check: {e}") from None
        self.checks = ",".join(c for c in debugger.CHECKS if c in checks)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.output is None:
            return
        node.workerinput[_XDIST_KEY] = {"output": self.output, "options": self.options}
        self.session["started"].append(str(node.gateway.id))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        part = (getattr(node, "workeroutput", None) or {}).get(_XDIST_KEY)
        if not part:
            return  # it died before writing its part: the merge says it is missing
        wid = str(node.gateway.id)
        if wid in self.session["parts"]:
            return  # told twice
        if part.get("summary"):
            self.session["parts"][wid] = part["summary"]
        self.session["write_failures"] += int(part.get("write_failures") or 0)
        self.session["causes"].extend(part.get("causes") or [])
        if part.get("error"):
            self.session["write_failures"] += 1
            self.session["causes"].append(
                f"worker {wid}'s summary could not be written: {part['error']}"
            )
        self.session["incomplete_runs"] += int(part.get("incomplete_runs") or 0)

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        if self.managed or self.output is None:
            return  # `flagprism debug` merges the parts when pytest returns
        from flagprism import _ext  # type: ignore[attr-defined]

        debugger = self.debugger
        s = debugger._summary_obj()
        _ext.debug_summary_set(s, "mode", "check")
        _ext.debug_summary_set(s, "checks", self.checks)
        _ext.debug_summary_set(s, "command", f"pytest --flagprism-check={self.check}")
        _ext.debug_summary_set(s, "output_dir", self.output)
        _ext.debug_summary_set(s, "exit_status", int(exitstatus))
        try:
            _totals, text = debugger._write_parts(
                self.output, list(self.session["parts"].values()), self.session["started"]
            )
            self.text = text
        except Exception as e:  # noqa: BLE001 - the parts are still there
            self.text = (
                f"flagprism: the workers' summaries could not be merged into {self.output}: "
                f"{e} (each worker's is in {self.output}/<worker>/summary.json)\n"
            )
        if self.session["write_failures"]:
            self.text += (
                f"flagprism: error: {self.session['write_failures']} report(s) or summaries "
                "could not be written: " + "; ".join(self.session["causes"][:3]) + "\n"
            )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.text:
            terminalreporter.section("flagprism")
            for line in self.text.rstrip("\n").split("\n"):
                terminalreporter.write_line(line)
