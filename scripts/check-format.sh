#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The formatting gate. C: every tracked .c and .h file (tests/data excluded) must be what
# clang-format makes of it with the repository's .clang-format, run by the clang-format version
# that requirements-dev.txt pins (another version formats some lines differently, so it is
# refused rather than trusted). Python: `ruff check` and `ruff format --check` with the rules of
# pyproject.toml's [tool.ruff], run by the pinned ruff. Exit 0: formatted; 1: files to reformat (listed, with the command
# that fixes them); 77: no clang-format of the pinned version on PATH (scripts/test.sh reports
# the step as skipped; under CI=true that is a failure). Run by scripts/test.sh (step "format");
# usable alone. --fix reformats the files in place (and applies ruff's safe fixes) instead of
# checking them.
#
# It checks the goto labels first, with or without clang-format (CONTRIBUTING.md, "C style"): a
# failure exit is named after the step that failed (fail_<step>), so the labels that name no step
# (fail, err, error, oom, bad, cleanup) are refused.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

labels=$(git ls-files '*.c' '*.h' | grep -v '^tests/data/' |
	xargs grep -nE '^[[:space:]]*(fail|err|error|oom|bad|cleanup):[[:space:]]*$')
if [ -n "$labels" ]; then
	echo "check-format: labels that name no step (use fail_<step>, or out for the shared exit):" >&2
	printf '    %s\n' "$labels" >&2
	exit 1
fi

want=$(sed -n 's/^clang-format==\([0-9.]*\).*/\1/p' requirements-dev.txt)
if [ -z "$want" ]; then
	echo "check-format: requirements-dev.txt pins no clang-format==X" >&2
	exit 1
fi
cf=${FP_CLANG_FORMAT:-clang-format}
have=$("$cf" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9.]*\).*/\1/p')
if [ "$have" != "$want" ]; then
	echo "check-format: clang-format $want needed (requirements-dev.txt), found '${have:-none}'" \
		"as $cf; pip install clang-format==$want" >&2
	if [ "${CI:-}" = true ]; then
		exit 1
	fi
	exit 77
fi

mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^tests/data/')
if [ "${1:-}" = --fix ]; then
	"$cf" -i --style=file "${files[@]}" || exit 1
else
	bad=()
	for f in "${files[@]}"; do
		if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
			bad+=("$f")
		fi
	done
	if [ "${#bad[@]}" -ne 0 ]; then
		printf 'check-format: not formatted with clang-format %s:\n' "$want" >&2
		printf '    %s\n' "${bad[@]}" >&2
		echo "fix: scripts/check-format.sh --fix (or clang-format -i --style=file FILE...)" >&2
		exit 1
	fi
	echo "check-format: ${#files[@]} C files formatted (clang-format $want)"
fi

# Python: the same rules for the package, tests, benchmarks and scripts.
rwant=$(sed -n 's/^ruff==\([0-9.]*\).*/\1/p' requirements-dev.txt)
rf=${FP_RUFF:-ruff}
rhave=$("$rf" --version 2>/dev/null | sed -n 's/^ruff \([0-9.]*\).*/\1/p')
if [ -z "$rwant" ] || [ "$rhave" != "$rwant" ]; then
	echo "check-format: ruff ${rwant:-(no pin in requirements-dev.txt)} needed, found" \
		"'${rhave:-none}' as $rf; pip install ruff==$rwant" >&2
	if [ "${CI:-}" = true ] || [ -z "$rwant" ]; then
		exit 1
	fi
	exit 77
fi
py=(python tests bench scripts examples)
if [ "${1:-}" = --fix ]; then
	"$rf" check --fix "${py[@]}" && "$rf" format "${py[@]}"
	exit $?
fi
if ! "$rf" check --output-format concise "${py[@]}" >&2; then
	echo "fix: scripts/check-format.sh --fix (or ruff check --fix; what remains is yours)" >&2
	exit 1
fi
if ! "$rf" format --check "${py[@]}" >&2; then
	echo "fix: scripts/check-format.sh --fix (or ruff format FILE...)" >&2
	exit 1
fi
echo "check-format: Python clean (ruff $rwant: check and format)"
