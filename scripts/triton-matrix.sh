#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The interpreter suite (pytest tests/python -m "not gpu", TRITON_INTERPRET=1) and the quickstart
# on each supported Triton release, each in its own virtual environment. Run through
# `scripts/test.sh --triton-matrix [VERSION...]` (which builds build/ and the default environment
# first) or on its own after a build:
#
#   scripts/triton-matrix.sh [VERSION...]   default: FP_TRITON_MATRIX, else every supported one
#
# Environments live under FP_MATRIX_DIR (default .cache/triton-matrix/), one per version
# (t3.4.0/ ...), made once with `python3 -m venv` and holding only that Triton and FlagPrism:
# everything else (PyTorch, NumPy, pytest, pytest-xdist, ...) is the default environment's, read
# through a .pth file that puts its site-packages after the version's own (so the same packages
# as requirements-dev.txt, with the triton line replaced, without installing PyTorch once per
# version). A stamp (Triton version, interpreter, default environment) says when one is up to
# date. FlagPrism goes in as one wheel built once from this tree (pip wheel, no build isolation,
# with FP_PY: every environment uses the same python3, so the extension fits all).
# The CLI and the unit-test binary come from build/ (FP_BUILD_DIR), as in test.sh's python step.
# Not for: the GPU suite (the GPU machine has one Triton; the compiled path's differences are
# covered by tests/python/test_cross_compile.py, which runs in every one of these suites).
#
# FP_MATRIX_TESTS: the test files or directories to run (default tests/python, the whole suite);
# FP_MATRIX_PYTEST_ARGS: more pytest arguments (--deselect, -k ...); FP_PYTEST_JOBS: pytest-xdist
# workers (default auto, one per core).
# Exit status: 0 when every version passed, 1 otherwise; one line per version says what ran.
set -uo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$FP_ROOT"

#: Every release FlagPrism supports, oldest first (docs/guide/compatibility.md, pyproject.toml).
ALL_VERSIONS="3.4.0 3.5.1 3.6.0 3.7.1 3.8.0 3.9.0"

versions=${*:-${FP_TRITON_MATRIX:-$ALL_VERSIONS}}
dir=${FP_MATRIX_DIR:-$FP_ROOT/.cache/triton-matrix}
build=${FP_BUILD_DIR:-build}
# the default environment (scripts/env.sh) builds the wheel; test.sh has set it up already
if [ -z "${FP_PY:-}" ]; then
	fp_env_setup
fi
py=$FP_PY
mkdir -p "$dir"

# site-packages of an interpreter (the first of purelib and platlib; they are one in a venv).
site_of() {
	"$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
}

matrix_env() {
	local v=$1 venv="$dir/t$1" stamp base
	base=$(site_of "$py") || return 1
	stamp=$({
		echo "triton==$v overlay"
		echo "$base"
		"$py" -c 'import sys; print(sys.version)'
	} | sha256sum | cut -d' ' -f1)
	if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.flagprism-matrix" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	fp_note "making $venv (Triton $v; the rest from $base)"
	rm -rf "$venv"
	"$py" -m venv "$venv" || return 1
	# after the version's own site-packages: its Triton and FlagPrism come first
	printf '%s\n' "$base" >"$(site_of "$venv/bin/python")/zz-flagprism-base.pth"
	"$venv/bin/python" -m pip install -q --no-deps --ignore-installed "triton==$v" || return 1
	printf '%s\n' "$stamp" >"$venv/.flagprism-matrix"
}

wheel_dir="$dir/wheel"
fp_say "[triton-matrix] the flagprism wheel (built once, installed into each environment)"
rm -rf "$wheel_dir"
"$py" -m pip wheel -q --no-build-isolation --no-deps -w "$wheel_dir" . || fp_die "pip wheel . failed"
wheel=$(ls "$wheel_dir"/flagprism-*.whl)

export TRITON_INTERPRET=1
cli=$(find "$build" -maxdepth 3 -type f -name flagprism -perm -u+x 2>/dev/null | head -n1)
unit=$(find "$build" -maxdepth 4 -type f -name fp_unit_tests -perm -u+x 2>/dev/null | head -n1)
[ -n "$cli" ] && export FLAGPRISM_CLI="$(realpath "$cli")"
[ -n "$unit" ] && export FP_UNIT_TESTS="$(realpath "$unit")"
[ -d "$build" ] && export FP_BUILD_DIR="$(realpath "$build")"
if [ -f "$build/tests/unit/fake-cupti/libfakecupti.so" ]; then
	export FP_FAKE_CUPTI="$FP_BUILD_DIR/tests/unit/fake-cupti/libfakecupti.so"
fi
if [ -x "$build/tests/helper/fp-test-tool" ]; then
	export FP_TEST_TOOL="$FP_BUILD_DIR/tests/helper/fp-test-tool"
fi

results=()
status=0
for v in $versions; do
	start=$SECONDS
	fp_say "[triton-matrix] Triton $v"
	if ! matrix_env "$v"; then
		results+=("triton $v: environment FAILED")
		status=1
		continue
	fi
	vpy="$dir/t$v/bin/python"
	"$vpy" -m pip install -q --no-deps --force-reinstall --ignore-installed "$wheel" || {
		results+=("triton $v: install FAILED")
		status=1
		continue
	}
	log="$dir/t$v/pytest.log"
	# shellcheck disable=SC2086
	# as test.sh's python step: pytest-xdist workers, then the tests marked serial alone
	workers=()
	if [ "${FP_PYTEST_JOBS:-auto}" != 1 ] && "$vpy" -c 'import xdist' 2>/dev/null; then
		workers=(-n "${FP_PYTEST_JOBS:-auto}" --dist loadgroup)
	fi
	PATH="$dir/t$v/bin:$PATH" "$vpy" -m pytest ${FP_MATRIX_TESTS:-tests/python} -q \
		-p no:cacheprovider -m "not gpu and not serial" "${workers[@]}" \
		${FP_MATRIX_PYTEST_ARGS:-} 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	PATH="$dir/t$v/bin:$PATH" "$vpy" -m pytest ${FP_MATRIX_TESTS:-tests/python} -q \
		-p no:cacheprovider -m "not gpu and serial" ${FP_MATRIX_PYTEST_ARGS:-} 2>&1 | tee -a "$log"
	rc2=${PIPESTATUS[0]}
	if [ "$rc" = 5 ] && [ "$rc2" = 5 ]; then
		rc=1 # neither part collected a test
	else
		[ "$rc" = 5 ] && rc=0
		[ "$rc2" = 5 ] && rc2=0
		[ "$rc" = 0 ] && rc=$rc2
	fi
	# pytest's closing lines of both parts ("=== 3 failed, 210 passed in 99.1s ===" or, with -q,
	# without the ='s), not the failure output's
	line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error).* in [0-9.]+s' "$log" | tr -d '=' |
		sed 's/^ *//; s/ *$//' | paste -sd ';' -)
	PATH="$dir/t$v/bin:$PATH" "$vpy" examples/quickstart.py --out "$dir/t$v/quickstart" \
		>"$dir/t$v/quickstart.log" 2>&1
	qrc=$?
	q=$([ "$qrc" = 0 ] && echo ok || echo "FAILED (see $dir/t$v/quickstart.log)")
	results+=("triton $v: pytest${line:+ $line} (exit $rc); quickstart $q; $((SECONDS - start)) s")
	if [ "$rc" != 0 ] || [ "$qrc" != 0 ]; then
		status=1
	fi
done

fp_say "[triton-matrix] summary"
for r in "${results[@]}"; do
	fp_note "$r"
done
exit $status
