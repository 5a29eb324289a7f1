#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first command of the README: makes a working FlagPrism from a fresh checkout and shows it
# working. It finds or makes the Python environment (scripts/env.sh says how), builds and installs
# the package (C library, CLI, CPython extension), then runs `flagprism doctor` and
# examples/quickstart.py. Safe to run again: what is already done is skipped (the environment
# when requirements-dev.txt did not change, the build and install when no source did).
#
#   scripts/setup.sh [--link]   --link (or FP_LINK=1): also put a link to the `flagprism` command
#                               in ~/.local/bin, so that it is on PATH without activating the
#                               environment
# Not for testing: that is scripts/test.sh.
set -euo pipefail

link=${FP_LINK:-0}
for arg in "$@"; do
	case $arg in
	--link) link=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		printf 'setup.sh: unknown argument %s (try --help)\n' "$arg" >&2
		exit 2
		;;
	esac
done

# The PATH the user's shell has, before env.sh puts the environment's bin/ first.
user_path=$PATH

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$FP_ROOT"

fp_env_setup
fp_install_package

bin_dir=$(dirname "$FP_PY")
command_path="$bin_dir/flagprism"
fp_say "flagprism doctor"
if [ -x "$command_path" ]; then
	"$command_path" doctor || fp_die "flagprism doctor failed"
else
	"$FP_PY" -m flagprism doctor || fp_die "flagprism doctor failed"
fi

fp_say "examples/quickstart.py"
"$FP_PY" examples/quickstart.py || fp_die "examples/quickstart.py failed"

if [ "$link" = 1 ]; then
	[ -x "$command_path" ] || fp_die "no flagprism command at $command_path to link to"
	mkdir -p "$HOME/.local/bin"
	ln -sfn "$command_path" "$HOME/.local/bin/flagprism"
fi

fp_say "FlagPrism is set up"
fp_note "python:  $FP_PY"
fp_note "command: $command_path"
# Is that command what a new shell finds as `flagprism`? Say how to make it so when not.
found=$(PATH=$user_path command -v flagprism 2>/dev/null || true)
if [ -n "$found" ] && [ "$(realpath "$found" 2>/dev/null)" = "$(realpath "$command_path" 2>/dev/null)" ]; then
	fp_note "on PATH: $found"
else
	if [ "$link" = 1 ]; then
		fp_note "linked:  $HOME/.local/bin/flagprism -> $command_path"
		case ":$user_path:" in
		*":$HOME/.local/bin:"*) fp_note "         (but a new shell finds $found first on PATH)" ;;
		*) fp_note "         (add ~/.local/bin to PATH: it is not on this shell's)" ;;
		esac
	elif [ -n "$found" ]; then
		fp_note "PATH:    a new shell finds another flagprism first ($found); to use this one:"
	else
		fp_note "PATH:    a new shell does not find 'flagprism' yet; either"
	fi
	if [ "$link" != 1 ]; then
		if [ -f "$bin_dir/activate" ]; then
			fp_note "           source $bin_dir/activate    (this shell: flagprism, python, pytest)"
		else
			fp_note "           export PATH=\"$bin_dir:\$PATH\""
		fi
		fp_note "         or scripts/setup.sh --link             (a link in ~/.local/bin, once)"
	fi
fi
if ! fp_find_chromium >/dev/null; then
	fp_note "browser: no Chromium, so scripts/test.sh will not render the HTML report's pages;"
	fp_note "         $FP_CHROMIUM_HOW"
fi
fp_note "next:    scripts/test.sh (builds with -Werror and sanitizers, runs every test)"
