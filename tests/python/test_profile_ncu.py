# SPDX-License-Identifier: Apache-2.0
"""`flagprism profile --ncu`, without Nsight Compute: a fake `ncu` (a Python script written
here) records its command line, runs the target command as ncu would, then writes a raw-page
CSV in ncu's format with one row per kernel launch the program made (names and grids read from
the profile's Chrome trace, values chosen here). Checked: the ncu flags (CSV, raw page, base
units, no clock control, the metric list, --ncu-args before the target), the target being the
same Python bootstrap as a plain `flagprism profile`, the import of every launch into the
profile, the vendor file, exit statuses, and the option conflicts. Runs on the interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("runs on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True)

HERE = Path(__file__).resolve().parent

SCRIPT = textwrap.dedent(f"""\
    import sys
    sys.path.insert(0, {str(HERE)!r})
    import torch
    import flagprism.profiler as profiler
    import _profkernels as pk

    with profiler.scope("work"):
        for n in (1024, 4096, 4096):
            pk.add(torch.rand(n), torch.rand(n))
    sys.exit(int(sys.argv[1]) if sys.argv[1:] else 0)
    """)

HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
    '"Block Size","Grid Size","Device","CC","dram__bytes_read.sum",'
    '"gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed"'
)
UNITS = '"","","","","","","","","","","","byte","nsecond","%"'

FAKE_NCU = textwrap.dedent(f"""\
    #!{sys.executable}
    import json, os, signal, subprocess, sys
    args = sys.argv[1:]
    log = args[args.index("--log-file") + 1]
    with open(os.environ["FAKE_NCU_ARGV"], "w") as f:
        json.dump(args, f)
    # The target starts at the interpreter (ncu's own options and --ncu-args come first).
    t = next(i for i, a in enumerate(args) if a == {sys.executable!r})
    child = subprocess.Popen(args[t:])
    # Like a profiler that runs a program: a signal is passed on, then the report is written.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    rc = child.wait()
    rc = 128 - rc if rc < 0 else rc
    trace = log[: -len(".ncu.csv")] + ".chrome_trace.json"
    events = [e for e in json.load(open(trace))["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "kernel"]
    events.sort(key=lambda e: e["args"].get("correlation", 0))
    with open(log, "w") as f:
        f.write('==PROF== Connected to process 1 (python)\\n')
        f.write({HEADER!r} + "\\n" + {UNITS!r} + "\\n")
        for i, e in enumerate(events):
            g = e["args"]["grid"]
            f.write('"%d","1","python","h","%s","1","7","(1024, 1, 1)","(%d, %d, %d)",'
                    '"0","9.0","%d","%d","%d"\\n' % (i, e["name"], g[0], g[1], g[2],
                    1000 * (i + 1), 100 * (i + 1), 10 * (i + 1)))
    sys.exit(rc)
    """)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"
    ncu.write_text(FAKE_NCU)
    ncu.chmod(0o755)
    (tmp_path / "prog.py").write_text(SCRIPT)
    return dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        TRITON_INTERPRET="1",
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        FAKE_NCU_ARGV=str(tmp_path / "ncu-argv.json"),
    )


def run(cli: Path, env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cli), "profile", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


def _kernel_node(path: Path) -> dict[str, float]:
    root = json.loads(path.read_text())[0]
    work = next(c for c in root["children"] if c["frame"]["name"] == "work")
    return next(c for c in work["children"] if c["frame"]["name"] == "add_kernel")["metrics"]


def test_profile_ncu_runs_and_imports(cli: Path, env: dict[str, str], tmp_path: Path) -> None:
    r = run(
        cli,
        env,
        tmp_path,
        "--ncu",
        "--ncu-metrics",
        "dram__bytes_read.sum",
        "--ncu-args",
        "--launch-count 10  --cache-control all",
        "-n",
        "out",
        "prog.py",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    argv = json.loads((tmp_path / "ncu-argv.json").read_text())
    t = argv.index(sys.executable)
    ncu_opts, target = argv[:t], argv[t:]
    for flag in ("--csv", "--print-units", "--target-processes"):
        assert flag in ncu_opts
    assert ncu_opts[ncu_opts.index("--page") + 1] == "raw"
    assert ncu_opts[ncu_opts.index("--clock-control") + 1] == "none"
    assert ncu_opts[ncu_opts.index("--metrics") + 1] == "dram__bytes_read.sum"
    assert ncu_opts[ncu_opts.index("--log-file") + 1] == "out.ncu.csv"
    assert ncu_opts[-4:] == ["--launch-count", "10", "--cache-control", "all"]
    # The same bootstrap as a plain run, with the host backend and a trace for launch order.
    assert target[1] == "-c" and "flagprism._run" in target[2]
    words = target[3 : target.index("--")]
    assert words[0] == "profile"
    assert words[words.index("--backend") + 1] == "host"
    assert words[words.index("--data") + 1] == "trace"
    assert target[-1] == "prog.py"
    # Every launch imported: 3 launches of add_kernel, values 1000 + 2000 + 3000.
    m = _kernel_node(tmp_path / "out.hatchet")
    assert m["count"] == 3
    assert m["ncu:dram__bytes_read.sum (byte)"] == 6000
    assert m["ncu:gpu__time_duration.sum (nsecond)"] == 600
    vendor = json.loads((tmp_path / "out.vendor.json").read_text())
    assert len(vendor["launches"]) == 3
    assert all(lc.get("node") for lc in vendor["launches"]), vendor["launches"]


def test_profile_ncu_script_status_and_errors(
    cli: Path, env: dict[str, str], tmp_path: Path
) -> None:
    r = run(cli, env, tmp_path, "--ncu", "-n", "bad", "prog.py", "3")
    assert r.returncode == 3, r.stderr
    assert "exited with status 3" in r.stderr
    assert (tmp_path / "bad.vendor.json").exists()
    r = run(cli, env, tmp_path, "--ncu", "--metrics", "default", "prog.py")
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = run(cli, env, tmp_path, "--ncu", "-b", "cupti", "prog.py")
    assert r.returncode == 2 and "host backend" in r.stderr
    r = run(cli, env, tmp_path, "--ncu-args", "-x", "prog.py")
    assert r.returncode == 2 and "need '--ncu'" in r.stderr
    r = run(cli, env, tmp_path, "--ncu", "--ncu-path", str(tmp_path / "no-ncu"), "prog.py")
    assert r.returncode == 1 and "cannot run" in r.stderr
    r = run(cli, env, tmp_path, "-m", "default", "-b", "host", "prog.py")
    assert r.returncode == 2 and "needs the cupti backend" in r.stderr


def test_profile_ncu_passes_a_signal_on(cli: Path, env: dict[str, str], tmp_path: Path) -> None:
    """SIGTERM to `flagprism profile --ncu` goes on to ncu and the program (which writes what
    it recorded) instead of ending the command and orphaning them; the import still runs and
    the command exits with 128 + 15."""
    import signal as sig

    (tmp_path / "loop.py").write_text(
        textwrap.dedent(f"""\
        import sys, time
        sys.path.insert(0, {str(HERE)!r})
        import torch
        import _profkernels as pk
        x = torch.rand(1024)
        for n in range(1, 1000000):
            pk.add(x, x)
            if n == 2:
                print("ready", flush=True)
            time.sleep(0.005)
        """)
    )
    p = subprocess.Popen(
        [str(cli), "profile", "--ncu", "-n", "sig", "loop.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready"
        p.send_signal(sig.SIGTERM)
        _out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:  # ncu or the program left running: stop them all
            os.killpg(p.pid, sig.SIGKILL)
            p.communicate()
    assert p.returncode == 128 + sig.SIGTERM, err
    assert "ended by signal 15" in err, err
    meta = json.loads((tmp_path / "sig.meta.json").read_text())
    assert meta["incomplete"] is True and "SIGTERM" in meta["incomplete_reasons"][0]
    root = json.loads((tmp_path / "sig.hatchet").read_text())[0]
    add = next(c for c in root["children"] if c["frame"]["name"] == "add_kernel")["metrics"]
    assert add["count"] >= 2 and add["ncu:dram__bytes_read.sum (byte)"] > 0
