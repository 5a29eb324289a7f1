# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the `flagprism` command-line tool: global options, the command table,
per-command help, usage errors and exit codes, and `flagprism doctor` (text and JSON).

They run the built binary: $FLAGPRISM_CLI if set, else `flagprism` on PATH, else they are
skipped. The doctor is pointed at this interpreter through $FLAGPRISM_PYTHON.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLI = os.environ.get("FLAGPRISM_CLI") or shutil.which("flagprism")

pytestmark = pytest.mark.skipif(
    not CLI, reason="no flagprism CLI: set FLAGPRISM_CLI to the built binary or put it on PATH"
)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.setdefault("FLAGPRISM_PYTHON", sys.executable)
    if env:
        full_env.update(env)
    assert CLI is not None
    return subprocess.run(
        [CLI, *args], capture_output=True, text=True, env=full_env, timeout=timeout, check=False
    )


def commands() -> list[str]:
    """Command names as `flagprism --help` lists them (the same table the dispatcher uses)."""
    out = run("--help").stdout
    section = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in section.splitlines() if line.strip()]
    assert names, out
    return names


def test_help() -> None:
    r = run("--help")
    assert r.returncode == EXIT_OK
    assert r.stdout.startswith("usage: flagprism ")
    assert "doctor" in r.stdout and "version" in r.stdout
    assert r.stderr == ""
    assert run("-h").stdout == r.stdout
    assert run("help").stdout == r.stdout


def test_no_command_is_a_usage_error() -> None:
    r = run()
    assert r.returncode == EXIT_USAGE
    assert "usage: flagprism" in r.stderr


def test_version() -> None:
    r = run("--version")
    assert r.returncode == EXIT_OK
    assert re.fullmatch(r"flagprism \d+\.\d+\.\d+\n", r.stdout)
    assert run("-V").stdout == r.stdout
    assert run("version").stdout == r.stdout
    j = json.loads(run("version", "--json").stdout)
    assert r.stdout.split()[1] == j["version"]


def test_every_command_has_help() -> None:
    names = commands()
    assert {"doctor", "version", "help"} <= set(names)
    for name in names:
        r = run(name, "--help")
        assert r.returncode == EXIT_OK, (name, r.stderr)
        assert r.stdout.startswith(f"usage: flagprism {name}"), (name, r.stdout)
        assert "--help" in r.stdout
        assert run(name, "-h").stdout == r.stdout
        assert run("help", name).stdout == r.stdout


# An option as a synopsis writes it: after a space, a '[' that follows a space, or a '|'
# ("N[-M]" and "DEBUG-DIR" hold no option).
_SYN_OPTION = re.compile(r"(?:(?<=\s)|(?<=\s\[)|(?<=^\[)|(?<=\|)|^)(--?[A-Za-z][\w-]*)")
_HELP_OPTION = re.compile(r"^  (-\w)?(?:, )?(--[\w-]+)?(?:=\S+)?(?:\s{2,}(.*))?$")


def _forms(lines: list[str]) -> list[str]:
    """Synopsis forms: a line that starts at column 0 begins one, an indented line continues it;
    whitespace normalised."""
    forms: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if line[0].isspace() and forms:
            forms[-1] += " " + line.strip()
        else:
            forms.append(line.strip())
    return [" ".join(f.split()) for f in forms]


def _help_forms(text: str) -> list[str]:
    """The usage forms `--help` prints: "usage: ...", "   or: ...", continuation lines."""
    lines = []
    for line in text.split("\n\n", 1)[0].splitlines():
        if line.startswith(("usage: ", "   or: ")):
            lines.append(line[7:])
        else:
            lines.append(" " + line)
    return _forms(lines)


def _doc_forms(page: Path) -> list[str]:
    text = page.read_text()
    m = re.search(r"^## Synopsis\n+```\n(.*?)^```", text, re.S | re.M)
    assert m, f"{page}: no Synopsis block"
    return _forms(m.group(1).splitlines())


def _help_options(text: str) -> dict[str, str]:
    """{spelling: its row's help text} for every option of the Options table, both spellings."""
    out: dict[str, str] = {}
    lines = text.split("\nOptions:\n", 1)[1].splitlines()
    for i, line in enumerate(lines):
        m = _HELP_OPTION.match(line)
        if m and (m.group(1) or m.group(2)):
            # a label too long for the column has its help on the next line
            help_text = m.group(3) if m.group(3) is not None else lines[i + 1].strip()
            for spelling in (m.group(1), m.group(2)):
                if spelling:
                    out[spelling] = help_text
    return out


@pytest.mark.parametrize(
    "name",
    [
        "flagprism",
        "profile",
        "debug",
        "doctor",
        "version",
        "view",
        "diff",
        "merge",
        "report",
        "import-ncu",
        "advise",
    ],
)
def test_help_synopsis_is_the_docs_synopsis(name: str, repo_root: Path) -> None:
    """Each command's `--help` prints the synopsis of its page in docs/cli/ (the forms that start
    with `flagprism COMMAND`, wrapped alike), and every option of its Options table is in that
    synopsis (aliases, whose help says "the same as", apart), and nothing else is."""
    assert set(commands()) - {"help"} <= {
        "profile",
        "debug",
        "doctor",
        "version",
        "view",
        "diff",
        "merge",
        "report",
        "import-ncu",
        "advise",
    }, "a new command: add it to this test's list"
    if name == "flagprism":
        page, r = repo_root / "docs/cli/flagprism.md", run("--help")
        prefix = "flagprism ["
    else:
        page, r = repo_root / f"docs/cli/flagprism-{name}.md", run(name, "--help")
        prefix = f"flagprism {name} "
    assert r.returncode == EXIT_OK, r.stderr
    helps, docs = _help_forms(r.stdout), _doc_forms(page)
    assert helps == [f for f in docs if f.startswith(prefix)], (helps, docs)
    if name == "flagprism":
        return
    options = _help_options(r.stdout)
    named = {o for form in helps for o in _SYN_OPTION.findall(form)}
    assert named <= set(options), f"{page.name}'s synopsis names options --help does not have"
    rows: dict[str, set[str]] = {}
    for spelling, text in options.items():
        rows.setdefault(text, set()).add(spelling)
    for text, spellings in rows.items():
        if spellings & {"-h", "--help"} or text.startswith("the same as"):
            continue
        assert spellings & named, f"{page.name}'s synopsis leaves out {sorted(spellings)}"


def test_unknown_command_suggests() -> None:
    r = run("doctr")
    assert r.returncode == EXIT_USAGE
    assert r.stdout == ""
    assert "flagprism: 'doctr' is not a command. Did you mean 'doctor'?" in r.stderr
    r = run("verison")
    assert r.returncode == EXIT_USAGE
    assert "Did you mean 'version'?" in r.stderr
    r = run("xyzzyq")
    assert r.returncode == EXIT_USAGE
    assert "'xyzzyq' is not a command" in r.stderr
    assert "Did you mean" not in r.stderr
    assert run("help", "doctr").returncode == EXIT_USAGE


@pytest.mark.parametrize(
    "args, message",
    [
        (("--bogus",), "unknown option '--bogus'"),
        (("doctor", "--jsn"), "did you mean '--json'?"),
        (("doctor", "-q"), "unknown option '-q'"),
        (("doctor", "--json=yes"), "takes no value"),
        (("doctor", "--timeout"), "needs a value"),
        (("doctor", "--timeout=abc"), "expects an integer"),
        (("doctor", "--timeout", "0"), "must be between"),
        (("doctor", "stray"), "unexpected argument 'stray'"),
        (("version", "--nope"), "unknown option '--nope'"),
        (("--version", "extra"), "unexpected argument"),
    ],
)
def test_bad_options_are_usage_errors(args: tuple[str, ...], message: str) -> None:
    r = run(*args)
    assert r.returncode == EXIT_USAGE, r
    assert message in r.stderr
    assert "usage: flagprism" in r.stderr
    assert r.stdout == ""


def test_doctor_text() -> None:
    r = run("doctor")
    assert r.returncode == EXIT_OK, r.stderr
    for area in (
        "Debugger on interpreter",
        "Debugger on GPU",
        "Profiler (host backend)",
        "Profiler (CUPTI backend)",
    ):
        pattern = rf"^  {re.escape(area)} +(ready|not ready)"
        assert re.search(pattern, r.stdout, re.MULTILINE), r.stdout
    assert sys.version.split()[0] in r.stdout


def test_doctor_json() -> None:
    r = run("doctor", "--json")
    assert r.returncode == EXIT_OK, r.stderr
    d = json.loads(r.stdout)
    assert set(d) >= {
        "flagprism_cli",
        "python",
        "packages",
        "env",
        "gpu",
        "cupti",
        "verdicts",
        "notes",
    }
    assert d["python"]["version"] == sys.version.split()[0]
    assert d["python"]["origin"] == "$FLAGPRISM_PYTHON"
    assert d["python"]["probe_complete"] is True
    assert set(d["packages"]) >= {
        "flagprism",
        "flagprism._ext",
        "triton",
        "triton.runtime.interpreter",
        "torch",
        "numpy",
    }
    for pkg in d["packages"].values():
        assert isinstance(pkg["installed"], bool)
    assert set(d["gpu"]) >= {"available", "device_count", "cuda_runtime", "device0"}
    assert set(d["cupti"]) >= {
        "found",
        "status",
        "path",
        "api_version",
        "already_loaded",
        "nvperf_host",
        "pcsampling_api",
        "error",
    }
    counters = d["cupti"]["counters"]
    assert counters["access"] in ("allowed", "admin-only", "unknown")
    assert counters["admin_only"] in (0, 1, None) and isinstance(counters["privileged"], bool)
    assert counters["detail"]
    assert set(d["verdicts"]) == {
        "debugger_interpreter",
        "debugger_gpu",
        "profiler_host",
        "profiler_cupti",
    }
    for v in d["verdicts"].values():
        assert isinstance(v["ready"], bool) and isinstance(v["reason"], str)
    # What this interpreter has, the probe must have seen.
    for name in ("triton", "torch", "numpy"):
        try:
            mod = __import__(name)
        except ImportError:
            assert d["packages"][name]["installed"] is False
        else:
            assert d["packages"][name]["version"] == mod.__version__


def test_doctor_bad_cupti_path_is_reported_not_fatal() -> None:
    r = run("doctor", "--json", env={"FLAGPRISM_CUPTI_PATH": "/nonexistent/libcupti.so"})
    assert r.returncode == EXIT_OK, r.stderr
    cupti = json.loads(r.stdout)["cupti"]
    if cupti["status"] == "FP_OK":
        # The process already held a libcupti (it wins over the variable, by design).
        assert cupti["already_loaded"] is True
    else:
        assert cupti["found"] is False
        assert "/nonexistent/libcupti.so" in cupti["error"]
        assert json.loads(r.stdout)["verdicts"]["profiler_cupti"]["ready"] is False


def test_doctor_without_python_fails(tmp_path: Path) -> None:
    # A path made here, so it cannot exist (`/nonexistent` does on some machines).
    missing = str(tmp_path / "no-such-python")
    r = run("doctor", env={"FLAGPRISM_PYTHON": missing})
    assert r.returncode == EXIT_FAILURE
    assert r.stdout == ""
    assert "flagprism: error:" in r.stderr
    assert f"FLAGPRISM_PYTHON={missing}" in r.stderr
    r = run("doctor", "--json", env={"FLAGPRISM_PYTHON": missing})
    assert r.returncode == EXIT_FAILURE
    assert r.stdout == ""


def test_python_m_flagprism_keeps_the_users_flagprism_python(tmp_path: Path) -> None:
    """`python -m flagprism` sets FLAGPRISM_PYTHON only when the user has not: a choice that does not work is an error."""
    missing = str(tmp_path / "no-such-python")
    env = {**os.environ, "FLAGPRISM_PYTHON": missing}
    r = subprocess.run(
        [sys.executable, "-m", "flagprism", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert r.returncode == EXIT_FAILURE, r.stdout + r.stderr
    assert f"FLAGPRISM_PYTHON={missing}" in r.stderr
    env["FLAGPRISM_PYTHON"] = ""
    r = subprocess.run(
        [sys.executable, "-m", "flagprism", "doctor", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert json.loads(r.stdout)["python"]["executable"] == sys.executable, r.stderr
