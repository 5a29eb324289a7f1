# SPDX-License-Identifier: Apache-2.0
"""The Debugger as a pytest plugin: ``pytest --flagprism-check=bounds,nan tests/``.

Registered through the ``pytest11`` entry point, so installing FlagPrism is enough; it does
nothing unless one of its options is given (it imports nothing heavy until then). With
``--flagprism-check=LIST`` the Debugger runs in check mode for the whole session (see
docs/guide/debugger.md, "Check mode"); each finding names the test that launched the kernel (its node
id, in the summary, the reports and a "flagprism" section of that test's report);
``--flagprism-fail`` fails a test that launched a kernel with a finding. At the end of the
session the summary is written to ``--flagprism-output`` (default ``fp_debug``) and printed.

``flagprism debug --check LIST pytest ...`` loads this plugin too: the command then owns the
Debugger (activation, summary, exit status) and the plugin only attributes findings to tests.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: Set by `flagprism debug` when it runs pytest: the command owns the Debugger.
MANAGED_ENV = "FLAGPRISM_DEBUG_MANAGED"


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
    config.pluginmanager.register(_Session(config, check, managed), "flagprism-debugger")


class _Session:
    def __init__(self, config: Any, check: str | None, managed: bool) -> None:
        from flagprism import debugger

        self.debugger = debugger
        self.config = config
        self.managed = managed
        self.fail = bool(config.getoption("flagprism_fail"))
        self.output = os.path.abspath(config.getoption("flagprism_output"))
        self.text = ""
        if not managed:
            try:
                debugger.configure(
                    output_dir=self.output,
                    all_reports=True if config.getoption("flagprism_all_reports") else None,
                )
                debugger.reset_summary()
                debugger.activate(check=check)
            except ValueError as e:
                raise pytest.UsageError(f"--flagprism-check: {e}") from None
            from flagprism import _ext  # type: ignore[attr-defined]

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
        if self.managed:
            return
        from flagprism import _ext  # type: ignore[attr-defined]

        self.debugger.deactivate()
        s = self.debugger._summary_obj()
        _ext.debug_summary_set(s, "exit_status", int(exitstatus))
        try:
            self.debugger.write_summary(self.output)
        except OSError as e:
            self.text = f"flagprism: the summary could not be written to {self.output}: {e}\n"
        self.text += _ext.debug_summary_format(s, "txt")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.text:
            terminalreporter.section("flagprism")
            for line in self.text.rstrip("\n").split("\n"):
                terminalreporter.write_line(line)
