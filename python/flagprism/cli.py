# SPDX-License-Identifier: Apache-2.0
"""``python -m flagprism``: hands over to the C binary shipped in the package.

The CLI is the C program. pip installs it as the environment's ``flagprism`` command (its
``bin/``, no Python involved: the program finds the Python beside itself) and as
``flagprism/_bin/flagprism``, which this module finds, tells which Python to use for commands that
need one (``FLAGPRISM_PYTHON``: the interpreter running this module, unless the user set it), and
replaces the current process with, so exit codes, signals and output are the binary's own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def binary_path() -> Path:
    """Path of the CLI binary installed next to this package (it may not exist)."""
    return Path(__file__).resolve().parent / "_bin" / "flagprism"


def main() -> None:
    exe = binary_path()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"flagprism: the command-line binary is missing: {exe}\n"
            "flagprism: the package was not installed with its native part; reinstall it with\n"
            "flagprism:   python3 -m pip install --no-build-isolation --no-deps .\n"
            "flagprism: from a FlagPrism checkout (or run scripts/setup.sh).\n"
        )
        raise SystemExit(127)
    env = dict(os.environ)
    # the user's own choice wins (the binary then fails on it when it does not work)
    if not env.get("FLAGPRISM_PYTHON"):
        env["FLAGPRISM_PYTHON"] = sys.executable
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(exe, ["flagprism", *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
