# SPDX-License-Identifier: Apache-2.0
"""Where `merge`, `diff` and `import-ncu` write (-o) and what `view` reads, adversarially (issue
17): a device or FIFO is written through and stays what it was, /dev/stdout and `-o -` write
standard output, a symbolic link's target is written and the link kept, a directory or an
empty path is refused with a clear message, a full device names ENOSPC; a FIFO where the meta
file would be does not block `view`, a device as the profile is refused before it is read;
mismatched metric kinds name the metric. These run as root in CI too: every device is checked
to still be a device afterwards."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "tests" / "data" / "profiles"
H100 = PROFILES / "proton-h100.json"
RUN2 = PROFILES / "proton-h100-run2.json"


def run(
    cli: Path, *args: str | Path, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(cli), *map(str, args)], cwd=cwd, capture_output=True, timeout=timeout, check=False
    )


def device_id(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_mode, st.st_ino, st.st_rdev


@pytest.mark.parametrize("command", ["merge", "diff"])
def test_dev_null_is_written_through_never_replaced(cli: Path, command: str) -> None:
    before = device_id("/dev/null")
    args = (
        ["merge", "-q", "-o", "/dev/null", H100]
        if command == "merge"
        else ["diff", "-o", "/dev/null", H100, RUN2]
    )
    r = run(cli, *args)
    assert r.returncode == 0, r.stderr
    assert device_id("/dev/null") == before
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dev_full_names_enospc(cli: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("this container has no /dev/full")
    before = device_id("/dev/full")
    r = run(cli, "merge", "-q", "-o", "/dev/full", H100)
    assert r.returncode == 1
    assert b"/dev/full: cannot write: No space left on device (ENOSPC)" in r.stderr, r.stderr
    assert device_id("/dev/full") == before


@pytest.mark.parametrize("target", ["-", "/dev/stdout"])
def test_standard_output(cli: Path, target: str) -> None:
    r = run(cli, "merge", "-o", target, H100, RUN2)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # the profile alone on stdout
    assert doc[0]["frame"]["name"] == "ROOT"
    if target == "-":
        assert b"into standard output (mean)" in r.stderr and r.stderr.startswith(
            b"merged 2 profiles"
        )
    r = run(cli, "diff", "-o", target, H100, RUN2)
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)


def test_fifo_is_written_through(cli: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: dict[str, bytes] = {}

    def reader() -> None:
        with open(fifo, "rb") as f:
            got["data"] = f.read()

    t = threading.Thread(target=reader)
    t.start()
    # let the reader open the FIFO first: without one the write is refused (ENXIO), not hung
    for _ in range(200):
        r = run(cli, "merge", "-q", "-o", fifo, H100)
        if r.returncode == 0 or b"no process is reading" not in r.stderr:
            break
        threading.Event().wait(0.05)
    t.join(30)
    assert r.returncode == 0, r.stderr
    assert json.loads(got["data"])[0]["frame"]["name"] == "ROOT"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_fifo_without_a_reader_is_refused(cli: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = run(cli, "merge", "-q", "-o", fifo, H100)
    assert r.returncode == 1
    assert b"no process is reading this FIFO (ENXIO)" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_target_written_link_kept(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "real.hatchet").write_text("old")
    (tmp_path / "link.hatchet").symlink_to("real.hatchet")
    (tmp_path / "dangling.hatchet").symlink_to("made.hatchet")
    for link in ("link.hatchet", "dangling.hatchet"):
        r = run(cli, "merge", "-q", "-o", link, H100, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / link).is_symlink()
    assert json.loads((tmp_path / "real.hatchet").read_text())[0]["frame"]["name"] == "ROOT"
    assert json.loads((tmp_path / "made.hatchet").read_text())[0]["frame"]["name"] == "ROOT"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "dangling.hatchet",
        "link.hatchet",
        "made.hatchet",
        "real.hatchet",
    ]


@pytest.mark.parametrize("command", ["merge", "diff", "import-ncu"])
def test_empty_output_and_directory_refused(cli: Path, command: str, tmp_path: Path) -> None:
    shutil.copy(PROFILES / "ncu-demo.hatchet", tmp_path / "prof.hatchet")
    args = {
        "merge": ["merge", "-o", "{o}", H100],
        "diff": ["diff", "-o", "{o}", H100, RUN2],
        "import-ncu": [
            "import-ncu",
            "-i",
            tmp_path / "prof.hatchet",
            "-o",
            "{o}",
            REPO / "tests" / "data" / "ncu" / "raw-base.csv",
        ],
    }[command]
    r = run(cli, *[str(a).replace("{o}", "") for a in args])
    assert r.returncode == 2
    assert b"option '--output' needs a path (or '-' for standard output)" in r.stderr, r.stderr
    r = run(cli, *[str(a).replace("{o}", str(tmp_path)) for a in args])
    assert r.returncode == 1, r.stderr
    assert b"is a directory; refusing to write a file onto it" in r.stderr, r.stderr


def test_import_ncu_to_standard_output(cli: Path, tmp_path: Path) -> None:
    for suffix in (".hatchet", ".chrome_trace.json"):
        shutil.copy(PROFILES / f"ncu-demo{suffix}", tmp_path / f"prof{suffix}")
    csv = REPO / "tests" / "data" / "ncu" / "raw-base.csv"
    r = run(cli, "import-ncu", "-i", "prof.hatchet", "-o", "-", csv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["frame"]["name"] == "ROOT"  # the profile, no summary
    assert (tmp_path / "prof.vendor.json").exists()  # next to --into
    assert (tmp_path / "prof.hatchet").read_bytes() == (PROFILES / "ncu-demo.hatchet").read_bytes()
    r = run(cli, "import-ncu", "-i", "prof.hatchet", "-o", "-", "--json", csv, cwd=tmp_path)
    assert r.returncode == 2 and b"both write to standard output" in r.stderr


def test_view_does_not_block_on_a_fifo_meta(cli: Path, tmp_path: Path) -> None:
    shutil.copy(H100, tmp_path / "p.hatchet")
    os.mkfifo(tmp_path / "p.meta.json")
    r = run(cli, "view", "p.hatchet", cwd=tmp_path, timeout=30)
    assert r.returncode == 0, r.stderr
    assert b"p.meta.json: not a regular file (a FIFO); not read" in r.stderr, r.stderr


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_view_refuses_a_device_before_reading(cli: Path, device: str) -> None:
    r = run(cli, "view", device, timeout=30)
    assert r.returncode == 1
    assert f"cannot read '{device}': it is a character device, not a file".encode() in r.stderr


def test_kind_mismatch_names_the_metric(cli: Path, tmp_path: Path) -> None:
    a = [{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 5, "count": 1}, "children": []}, {}]
    b = [
        {"frame": {"name": "ROOT"}, "metrics": {"time (ns)": "slow", "count": 2}, "children": []},
        {},
    ]
    (tmp_path / "a.hatchet").write_text(json.dumps(a))
    (tmp_path / "b.hatchet").write_text(json.dumps(b))
    for args in (
        ["diff", "-o", "d.hatchet", "a.hatchet", "b.hatchet"],
        ["merge", "-o", "m.hatchet", "a.hatchet", "b.hatchet"],
    ):
        r = run(cli, *args, cwd=tmp_path)
        assert r.returncode == 1, r.stderr
        msg = r.stderr.decode()
        assert f"cannot {args[0]}: metric 'time (ns)' is" in msg, msg
        assert "in a.hatchet but" in msg and "in b.hatchet" in msg, msg


def test_duplicate_metric_keys_keep_the_last(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "d.hatchet").write_text(
        '[{"frame":{"name":"ROOT"},"metrics":{"count":1,"count":7},"children":[]}]'
    )
    r = run(cli, "merge", "-o", "-", "d.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["metrics"]["count"] == 7
