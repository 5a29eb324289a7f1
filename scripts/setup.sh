#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first command of the README: makes a working FlagPrism from a fresh checkout and shows it
# working. It finds or makes the Python environment (scripts/env.sh says how), builds and installs
# the package (C library, CLI, CPython extension), then runs `flagprism doctor` and
# examples/quickstart.py. Safe to run again: what is already done is skipped.
# Not for testing: that is scripts/test.sh.
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$FP_ROOT"

fp_env_setup
fp_install_package

fp_say "flagprism doctor"
if [ -x "$(dirname "$FP_PY")/flagprism" ]; then
	"$(dirname "$FP_PY")/flagprism" doctor || fp_die "flagprism doctor failed"
else
	"$FP_PY" -m flagprism doctor || fp_die "flagprism doctor failed"
fi

fp_say "examples/quickstart.py"
"$FP_PY" examples/quickstart.py || fp_die "examples/quickstart.py failed"

fp_say "FlagPrism is set up"
fp_note "python:  $FP_PY"
fp_note "command: $(dirname "$FP_PY")/flagprism"
fp_note "next:    scripts/test.sh (builds with -Werror and sanitizers, runs every test)"
