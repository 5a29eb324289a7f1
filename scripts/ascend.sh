#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Triton-Ascend's compile tests (tests/python/test_ascend.py) in an environment of their own, where
# the `triton` package is Triton-Ascend's: scripts/test.sh's ascend step (FP_ASCEND=1, as .ci/run
# sets it) or on its own after a build:
#
#   scripts/ascend.sh
#
# The environment lives in FP_ASCEND_DIR (default .cache/ascend/), made once with
# `python3 -m venv` and filled with triton-ascend (FP_ASCEND_VERSION, default 3.2.0: the x86-64
# wheel, about 54 MB), the CPU torch of requirements-dev.txt, numpy<2.4, pytest and pybind11
# (Triton-Ascend's backend imports it); a stamp (those requirements and the Python version) says
# when it is up to date. FlagPrism goes in as a wheel built from this tree (pip wheel, no build
# isolation, with FP_PY: the same python3, so the extension fits). Where the wheel cannot be had
# (no package index, no wheel for this Python or machine), the step is skipped and says why
# (exit 77). Not for: running kernels (there is no NPU here, and CANN's bishengir-compile, which
# makes the NPU binary, is not on any package index: the tests stop there and say so).
set -uo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$FP_ROOT"

version=${FP_ASCEND_VERSION:-3.2.0}
dir=${FP_ASCEND_DIR:-$FP_ROOT/.cache/ascend}
build=${FP_BUILD_DIR:-build}
if [ -z "${FP_PY:-}" ]; then
	fp_env_setup
fi
py=$FP_PY
venv="$dir/venv"
mkdir -p "$dir"

torch_req=$(grep -E '^torch==' "$FP_REQUIREMENTS" || echo torch)
requirements() {
	printf '%s\n' "triton-ascend==$version" "$torch_req" 'numpy<2.4' pytest pybind11
}

make_env() {
	local stamp
	stamp=$({
		requirements
		"$py" -c 'import sys; print(sys.version)'
	} | sha256sum | cut -d' ' -f1)
	if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.flagprism-ascend" 2>/dev/null)" = "$stamp" ]; then
		fp_note "the environment $venv is up to date (triton-ascend $version)"
		return 0
	fi
	fp_note "making $venv (triton-ascend $version)"
	rm -rf "$venv"
	"$py" -m venv "$venv" || return 1
	# the wheel first, alone: when it cannot be had, nothing else is downloaded
	if ! "$venv/bin/python" -m pip install -q --retries 1 --timeout 30 "triton-ascend==$version"; then
		rm -rf "$venv"
		return 77
	fi
	requirements >"$venv/requirements.txt"
	"$venv/bin/python" -m pip install -q -r "$venv/requirements.txt" || return 1
	printf '%s\n' "$stamp" >"$venv/.flagprism-ascend"
}

start=$SECONDS
fp_say "[ascend] the environment (triton-ascend $version)"
make_env
rc=$?
if [ "$rc" = 77 ]; then
	fp_say "[ascend] skipped: pip could not install triton-ascend==$version" \
		"(no package index here, or no wheel for $("$py" -V 2>&1) on $(uname -m));" \
		"tests/python/test_ascend.py did not run"
	exit 77
elif [ "$rc" != 0 ]; then
	fp_die "making $venv failed"
fi
fp_note "environment ready in $((SECONDS - start)) s"

fp_say "[ascend] the flagprism wheel"
rm -rf "$dir/wheel"
"$py" -m pip wheel -q --no-build-isolation --no-deps -w "$dir/wheel" . || fp_die "pip wheel . failed"
"$venv/bin/python" -m pip install -q --no-deps --force-reinstall "$dir"/wheel/flagprism-*.whl ||
	fp_die "installing the flagprism wheel into $venv failed"

cli=$(find "$build" -maxdepth 3 -type f -name flagprism -perm -u+x 2>/dev/null | head -n1)
[ -n "$cli" ] && export FLAGPRISM_CLI="$(realpath "$cli")"
fp_say "[ascend] tests/python/test_ascend.py (compiled, not run: no NPU, no CANN)"
# Triton's cache of its own beside the environment, not the user's ~/.triton
unset TRITON_INTERPRET
TRITON_CACHE_DIR="$dir/triton-cache" PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest \
	tests/python/test_ascend.py -q -p no:cacheprovider -s 2>&1 | grep -v 'ccec\|warnings.warn' |
	tee "$dir/pytest.log"
rc=${PIPESTATUS[0]}
fp_note "ascend: pytest exit $rc, $((SECONDS - start)) s in all (log: $dir/pytest.log)"
exit "$rc"
