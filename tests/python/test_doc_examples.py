# SPDX-License-Identifier: Apache-2.0
"""Run every marked CLI example of README.md and docs/ and compare what it prints with the docs,
so that documented output cannot drift from the real one (as git's documentation tests do).

An example is a fenced block right after an HTML comment that starts with `doc-example`:

    <!-- doc-example file:rank0.hatchet=tests/data/profiles/proton-rank0.json env:TRITON_INTERPRET=1 -->
    ```
    $ flagprism merge -o job.hatchet rank0.hatchet
    merged 1 profile (rank 0 of world size 1) into job.hatchet (mean): 5 nodes
    ```

Words of the comment: `file:NAME=PATH` copies PATH (relative to the checkout) into the example's
directory as NAME; `env:KEY=VALUE` sets a variable for its commands. Each line starting with
`$ ` is a command, run with bash in a fresh directory with the built `flagprism` first on PATH
(FLAGPRISM_CLI, else the installed one) and this Python as FLAGPRISM_PYTHON; the lines up to the
next command are what it prints (standard output and error together, as on a terminal). The
exit status is not compared: an example may show an error.

Comparison, after normalising both sides: the example's directory is shown as `/w`, timestamps
like 20261201T120000Z as <TIMESTAMP>, trailing blanks are dropped. In the docs, `...` inside a
line matches any text, and a line that is only `...` matches any number of lines.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MARKED = re.compile(
    r"<!--\s*doc-example\b(?P<words>[^>]*?)-->[ \t]*\n```[\w-]*\n(?P<body>.*?)```", re.S
)
TIMESTAMP = re.compile(r"(?<![0-9])[0-9]{8}T[0-9]{6}Z")


@dataclass
class Command:
    line: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Example:
    where: str  # "docs/cli/flagprism-merge.md:27"
    files: dict[str, str]
    env: dict[str, str]
    commands: list[Command]


def _doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def collect(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    out = []
    for m in MARKED.finditer(text):
        files, env = {}, {}
        for word in m.group("words").split():
            kind, _, rest = word.partition(":")
            key, eq, value = rest.partition("=")
            if kind not in ("file", "env") or not eq or not key:
                raise ValueError(f"{path}: doc-example: cannot read '{word}'")
            (files if kind == "file" else env)[key] = value
        commands: list[Command] = []
        for line in m.group("body").splitlines():
            if line.startswith("$ "):
                commands.append(Command(line[2:]))
            elif commands:
                commands[-1].expected.append(line)
            elif line.strip():
                raise ValueError(f"{path}: doc-example: output before the first '$ ' command")
        line_no = text.count("\n", 0, m.start()) + 1
        out.append(Example(f"{path.relative_to(REPO)}:{line_no}", files, env, commands))
    return out


EXAMPLES = [ex for p in _doc_files() for ex in collect(p)]


def _normalise(lines: list[str], workdir: str | None) -> list[str]:
    out = []
    for line in lines:
        if workdir:
            line = line.replace(workdir, "/w")
        out.append(TIMESTAMP.sub("<TIMESTAMP>", line).rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def _line_matches(pattern: str, line: str) -> bool:
    if "..." not in pattern:
        return pattern == line
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("...")), line) is not None


def matches(expected: list[str], got: list[str]) -> bool:
    """`expected` (with ... lines and ... inside lines) against `got`, all lines."""
    memo: dict[tuple[int, int], bool] = {}

    def at(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(expected):
                r = j == len(got)
            elif expected[i] == "...":
                r = any(at(i + 1, k) for k in range(j, len(got) + 1))
            else:
                r = j < len(got) and _line_matches(expected[i], got[j]) and at(i + 1, j + 1)
            memo[(i, j)] = r
        return memo[(i, j)]

    return at(0, 0)


def test_examples_are_marked() -> None:
    """The README and the command pages keep marked examples (a lost marker is a lost test)."""
    where = {ex.where.split(":")[0] for ex in EXAMPLES}
    assert "README.md" in where
    assert {
        "docs/cli/flagprism.md",
        "docs/cli/flagprism-merge.md",
        "docs/cli/flagprism-diff.md",
        "docs/cli/flagprism-view.md",
        "docs/cli/flagprism-debug.md",
    } <= where
    assert all(ex.commands for ex in EXAMPLES)


def test_matcher() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert matches(["x 0x...)."], ["x 0x55a7)."])
    assert not matches(["a", "b"], ["a", "c"])
    assert not matches(["a"], ["a", "extra"])
    assert not matches(["x 0x...)."], ["x 0x55a7]"])


@pytest.fixture(scope="module")
def cli_dir(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding `flagprism` (a link to the CLI under test), for PATH."""
    d = tmp_path_factory.mktemp("bin")
    (d / "flagprism").symlink_to(cli)
    return d


@pytest.mark.parametrize("example", EXAMPLES, ids=[ex.where for ex in EXAMPLES])
def test_doc_example(example: Example, cli_dir: Path, tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    for name, src in example.files.items():
        dst = work / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / src, dst)
    env = dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        PATH=f"{cli_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        COLUMNS="100",
    )
    env.update(example.env)
    for cmd in example.commands:
        r = subprocess.run(
            ["bash", "-c", cmd.line],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
            check=False,
        )
        got = _normalise(r.stdout.splitlines(), str(work))
        want = _normalise(cmd.expected, None)
        assert matches(want, got), (
            f"{example.where}: `$ {cmd.line}` printed (exit {r.returncode}):\n"
            + "\n".join(got)
            + "\n\nbut the docs say:\n"
            + "\n".join(want)
        )
