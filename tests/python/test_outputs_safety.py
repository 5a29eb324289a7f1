# SPDX-License-Identifier: Apache-2.0
"""No file of the user's is replaced and nothing waits on a FIFO (issue 32): every command that
writes (`profile`, `debug`, `diff`, `merge`, `report`, `import-ncu`) against every hostile
target where its output goes (a character device, /dev/full, a FIFO without a reader, a
symbolic link to a file, a dangling link, and temporary names planted as links to a victim),
and `view` against the same things as its input. The one rule is docs/cli/flagprism.md, "Output
files": a device or FIFO is written through and stays what it was, a link's target is written
and the link kept, a planted name is never followed. Also: inputs and sidecars that are FIFOs
(a profile's metadata or trace, a report's source file) are refused at once, never waited on.
These run as root in CI: a device made with mknod stays a device."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "tests" / "data" / "profiles"
H100 = PROFILES / "proton-h100.json"
RUN2 = PROFILES / "proton-h100-run2.json"
NCU_CSV = REPO / "tests" / "data" / "ncu" / "raw-base.csv"

KINDS = ["device", "full", "fifo", "symlink", "dangling", "planted"]
COMMANDS = ["profile", "debug", "diff", "merge", "report", "import-ncu"]
PLANTED = 16  # temporary names planted per target: <target>.tmp.<pid>.0 ... 15, and .tmp.<pid>


def env(tmp_path: Path) -> dict[str, str]:
    rescue = tmp_path / "rescue"
    rescue.mkdir(exist_ok=True)
    return dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        TRITON_INTERPRET="1",
        TMPDIR=str(rescue),  # where `profile` rescues what it cannot write
    )


def command(cli: Path, name: str, work: Path) -> tuple[list[str], Path]:
    """The command line of `name` run in `work`, and the output file it writes."""
    if name in ("profile", "debug"):
        (work / "prog.py").write_text("print('ran')\n")
    if name == "profile":
        return [str(cli), "profile", "-n", "p", "prog.py"], work / "p.hatchet"
    if name == "debug":
        (work / "dbg").mkdir()
        return [str(cli), "debug", "-o", "dbg", "prog.py"], work / "dbg" / "summary.json"
    if name == "merge":
        return [str(cli), "merge", "-q", "-o", "out.hatchet", str(H100)], work / "out.hatchet"
    if name == "diff":
        return [str(cli), "diff", "-o", "out.hatchet", str(H100), str(RUN2)], work / "out.hatchet"
    if name == "report":
        return [str(cli), "report", "-q", "-o", "out.html", str(H100)], work / "out.html"
    assert name == "import-ncu"
    shutil.copy(PROFILES / "ncu-demo.hatchet", work / "prof.hatchet")
    args = ["import-ncu", "-q", "-i", "prof.hatchet", "-o", "out.hatchet", str(NCU_CSV)]
    return [str(cli), *args], work / "out.hatchet"


def make_device(path: Path) -> None:
    """A character device at `path`: the null device made with mknod where we may (root), else a
    link to /dev/null."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        path.symlink_to("/dev/null")


def char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


def leftovers(work: Path) -> list[str]:
    """Temporary or lock files left in `work` (planted links excluded)."""
    out = []
    for f in work.rglob("*"):
        if f.is_symlink() and os.readlink(f) == "victim.txt":
            continue
        if ".tmp" in f.name or f.name.startswith(".flagprism") or f.name.endswith(".lock"):
            out.append(str(f.relative_to(work)))
    return sorted(out)


def output_ok(cmd: str, path: Path) -> None:
    """The output is a whole file of its kind."""
    text = path.read_text()
    if cmd == "report":
        assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    else:
        json.loads(text)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cmd", COMMANDS)
def test_hostile_output_targets(cli: Path, tmp_path: Path, cmd: str, kind: str) -> None:
    if kind == "full" and not os.path.exists("/dev/full"):
        pytest.skip("this container has no /dev/full")
    work = tmp_path / "w"
    work.mkdir()
    argv, target = command(cli, cmd, work)
    victim = target.parent / "victim.txt"
    victim.write_text("precious")
    check: Callable[[subprocess.CompletedProcess[str]], None]

    if kind == "device":
        make_device(target)

        def check(r: subprocess.CompletedProcess[str]) -> None:
            assert r.returncode == 0, r.stderr
            assert char_device(target)  # written through, never replaced

    elif kind == "full":
        target.symlink_to("/dev/full")

        def check(r: subprocess.CompletedProcess[str]) -> None:
            assert r.returncode == 1, r.stderr
            assert "No space left on device (ENOSPC)" in r.stderr, r.stderr
            assert target.is_symlink() and char_device(Path("/dev/full"))
            if cmd == "profile":  # nothing recorded is lost: the profile went elsewhere
                assert "flagprism-rescue-" in r.stderr, r.stderr
                (rescued,) = (tmp_path / "rescue").glob("flagprism-rescue-*/p.hatchet")
                json.loads(rescued.read_text())

    elif kind == "fifo":
        os.mkfifo(target)

        def check(r: subprocess.CompletedProcess[str]) -> None:
            assert r.returncode == 1, r.stderr
            assert "no process is reading this FIFO (ENXIO)" in r.stderr, r.stderr
            assert stat.S_ISFIFO(os.lstat(target).st_mode)

    elif kind == "symlink":
        target.symlink_to("victim.txt")

        def check(r: subprocess.CompletedProcess[str]) -> None:
            assert r.returncode == 0, r.stderr
            assert target.is_symlink()  # the link stays; its target is written
            output_ok(cmd, victim)

    elif kind == "dangling":
        target.symlink_to("made-by-link")

        def check(r: subprocess.CompletedProcess[str]) -> None:
            assert r.returncode == 0, r.stderr
            assert target.is_symlink()
            output_ok(cmd, target.parent / "made-by-link")
            assert victim.read_text() == "precious"

    else:
        # The process plants links named as its own temporary files would be (it learns its pid
        # from the shell that execs it), the old name and the new ones, all to the victim.
        names = [f"{target}.tmp.$$"] + [f"{target}.tmp.$$.{n}" for n in range(PLANTED)]
        plant = "; ".join(f'ln -s victim.txt "{n}"' for n in names)
        argv = ["sh", "-c", f"{plant}; exec {shlex.join(argv)}"]

        def check(r: subprocess.CompletedProcess[str]) -> None:
            assert r.returncode == 0, r.stderr
            assert victim.read_text() == "precious"  # never written through a planted name
            planted = [f for f in target.parent.iterdir() if ".tmp." in f.name]
            assert len(planted) == PLANTED + 1 and all(f.is_symlink() for f in planted)
            assert not target.is_symlink()
            output_ok(cmd, target)

    r = subprocess.run(
        argv, cwd=work, env=env(tmp_path), capture_output=True, text=True, timeout=120
    )
    check(r)
    assert "Traceback" not in r.stderr, r.stderr
    assert leftovers(work) == []


@pytest.mark.parametrize("cmd", ["merge", "diff", "report"])
def test_stdout_and_dev_null_by_name(cli: Path, tmp_path: Path, cmd: str) -> None:
    """The devices a user names on purpose: /dev/null and /dev/stdout are written through."""
    for out in ("/dev/null", "/dev/stdout"):
        args = {
            "merge": ["merge", "-q", "-o", out, str(H100)],
            "diff": ["diff", "-o", out, str(H100), str(RUN2)],
            "report": ["report", "-q", "-o", out, str(H100)],
        }[cmd]
        r = subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        if out == "/dev/stdout":
            assert r.stdout.strip()[:1] in ("[", "<"), r.stdout[:80]
    assert char_device(Path("/dev/null"))


def test_report_default_page_in_a_debug_dir_is_safe(cli: Path, tmp_path: Path) -> None:
    """The default `<debugdir>/report.html`: a link planted there to a victim is followed as a
    link (the victim gets the page, the link stays), a FIFO there is refused, never replaced."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "prog.py").write_text("print('ran')\n")
    r = subprocess.run(
        [str(cli), "debug", "-o", "dbg", "prog.py"],
        cwd=work,
        env=env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    os.mkfifo(work / "dbg" / "report.html")
    r = subprocess.run(
        [str(cli), "report", "-q", "dbg"], cwd=work, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 1 and "(ENXIO)" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.lstat(work / "dbg" / "report.html").st_mode)


# ---- view: the same things as its input ------------------------------------------------------


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink", "dangling", "fifo-meta"])
def test_view_hostile_inputs(cli: Path, tmp_path: Path, kind: str) -> None:
    inp = tmp_path / "p.hatchet"
    if kind == "device":
        make_device(inp)
        want_rc, want = 1, "it is a character device, not a file"
    elif kind == "fifo":
        os.mkfifo(inp)  # nobody writes to it: refused at once, not waited on
        want_rc, want = 1, "it is a FIFO or pipe and no process wrote to it"
    elif kind == "symlink":
        shutil.copy(H100, tmp_path / "real.hatchet")
        inp.symlink_to("real.hatchet")
        want_rc, want = 0, ""
    elif kind == "dangling":
        inp.symlink_to("nothing.hatchet")
        want_rc, want = 1, "cannot open"
    else:
        shutil.copy(H100, inp)
        os.mkfifo(tmp_path / "p.meta.json")
        want_rc, want = 0, "p.meta.json: not a regular file (a FIFO); not read"
    r = subprocess.run([str(cli), "view", str(inp)], capture_output=True, text=True, timeout=30)
    assert r.returncode == want_rc, r.stderr
    assert want in r.stderr, r.stderr


# ---- sidecars that are FIFOs: refused, never waited on -----------------------------------------


def test_merge_with_a_fifo_meta_does_not_hang(cli: Path, tmp_path: Path) -> None:
    shutil.copy(H100, tmp_path / "x.hatchet")
    os.mkfifo(tmp_path / "x.meta.json")
    r = subprocess.run(
        [str(cli), "merge", "-q", "-o", "m.hatchet", "x.hatchet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 1, r.stderr
    assert "x.meta.json': it is a FIFO, not a regular file" in r.stderr, r.stderr


def test_report_with_a_fifo_trace_keeps_the_tree(cli: Path, tmp_path: Path) -> None:
    shutil.copy(H100, tmp_path / "x.hatchet")
    os.mkfifo(tmp_path / "x.chrome_trace.json")
    r = subprocess.run(
        [str(cli), "report", "x.hatchet"], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert r.returncode == 0, r.stderr
    assert "timeline is left out" in r.stderr and "a FIFO, not a regular file" in r.stderr
    assert (tmp_path / "x.html").read_text().startswith("<!DOCTYPE html>")


def test_report_on_a_debug_dir_naming_a_fifo_source(cli: Path, tmp_path: Path) -> None:
    """A Debugger report whose kernel.source_file is a FIFO: the page is made without the
    source, which it says, instead of waiting for a writer."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    script = tmp_path / "make.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import flagprism.debugger as debugger\n"
        "from kernels import planted\n"
        "debugger.configure(output_dir='dbg')\n"
        "debugger.activate(level=1, addr_level=1)\n"
        "planted.launch(planted.BY_NAME['off_by_one_mask'], 'cpu')\n"
        "debugger.deactivate()\n"
        "print(debugger.take_exported_runs()[0]['json'])\n"
    )
    r = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    report = Path(tmp_path, r.stdout.strip().splitlines()[-1])
    doc = json.loads(report.read_text())
    fifo = tmp_path / "kernel_src.py"
    os.mkfifo(fifo)
    doc["kernel"]["source_file"] = str(fifo)
    report.write_text(json.dumps(doc))
    r = subprocess.run(
        [str(cli), "report", "-o", "page.html", "dbg"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "page.html").read_text()
    assert "it is a FIFO, not a regular file" in page
