# SPDX-License-Identifier: Apache-2.0
# Shared by scripts/setup.sh and scripts/test.sh (sourced, not run): finds or makes the Python
# environment FlagPrism is built and tested with, and installs the package into it. Not a place
# for build or test steps.
#
# Which Python:
#   FP_PYTHON=/path/to/python   use exactly that interpreter (nothing is installed into it
#                               except FlagPrism itself)
#   FP_VENV=/path/to/venv       use (and create if needed) that virtual environment
#   neither                     if `python3` already imports torch, triton and scikit_build_core
#                               (the GPU machine: /opt/torch/.venv, no package index), use it as
#                               is; otherwise use ./.venv, created with `python3 -m venv` and
#                               filled from requirements-dev.txt.
# After fp_env_setup: FP_PY is the interpreter, its bin directory is first on PATH (cmake, ninja,
# pytest and the `flagprism` command come from there).

FP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FP_REQUIREMENTS="$FP_ROOT/requirements-dev.txt"
# Modules that must import for an environment to count as ready; keep in step with the file.
FP_REQUIRED_MODULES="torch triton numpy pytest xdist scikit_build_core cmake ninja hatchet pandas"

# Bold and red only on a terminal, so CI logs stay plain text.
if [ -t 1 ]; then
	FP_B=$'\033[1m' FP_R=$'\033[1;31m' FP_N=$'\033[0m'
else
	FP_B='' FP_R='' FP_N=''
fi

fp_say() {
	printf '\n%s==> %s%s\n' "$FP_B" "$*" "$FP_N"
}

fp_note() {
	printf '    %s\n' "$*"
}

fp_die() {
	printf '\n%serror:%s %s\n' "$FP_R" "$FP_N" "$*" >&2
	exit 1
}

# fp_imports PYTHON MODULE... : true when PYTHON finds every MODULE (without importing them,
# which would take seconds for torch; a broken install shows up in the steps that use it).
fp_imports() {
	local py=$1
	shift
	"$py" - "$@" >/dev/null 2>&1 <<'PY'
import importlib.util, sys
sys.exit(any(importlib.util.find_spec(name) is None for name in sys.argv[1:]))
PY
}

# Stamp of what a venv was filled from: the requirements file and the interpreter version.
fp_requirements_stamp() {
	local py=$1
	{
		cat "$FP_REQUIREMENTS"
		"$py" -c 'import sys; print(sys.version)'
	} | sha256sum | cut -d' ' -f1
}

fp_venv_setup() {
	local venv=$1 stamp_file="$1/.flagprism-requirements" stamp

	if [ ! -x "$venv/bin/python" ]; then
		command -v python3 >/dev/null || fp_die "python3 not found; install Python 3.10 or newer"
		python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
			fp_die "python3 is $(python3 -V 2>&1); FlagPrism needs 3.10 or newer"
		fp_say "creating the virtual environment $venv"
		python3 -m venv "$venv" || fp_die "python3 -m venv $venv failed (is python3-venv installed?)"
	fi
	FP_PY="$venv/bin/python"
	stamp=$(fp_requirements_stamp "$FP_PY")
	# shellcheck disable=SC2086
	if [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ] &&
		fp_imports "$FP_PY" $FP_REQUIRED_MODULES; then
		fp_note "the environment $venv is up to date with requirements-dev.txt"
		return 0
	fi
	fp_say "installing requirements-dev.txt into $venv (first time: a few minutes)"
	"$FP_PY" -m pip install --upgrade-strategy only-if-needed -r "$FP_REQUIREMENTS" ||
		fp_die "pip install -r requirements-dev.txt failed"
	# shellcheck disable=SC2086
	fp_imports "$FP_PY" $FP_REQUIRED_MODULES ||
		fp_die "after installing, one of these still does not import: $FP_REQUIRED_MODULES"
	printf '%s\n' "$stamp" >"$stamp_file"
}

fp_env_setup() {
	if [ -n "${FP_PYTHON:-}" ]; then
		FP_PY=$FP_PYTHON
		fp_say "using FP_PYTHON=$FP_PY as is"
		"$FP_PY" -c 'import sys' 2>/dev/null || fp_die "FP_PYTHON=$FP_PY does not run"
	elif [ -n "${FP_VENV:-}" ]; then
		fp_venv_setup "$FP_VENV"
	elif command -v python3 >/dev/null && fp_imports python3 torch triton scikit_build_core; then
		FP_PY=$(python3 -c 'import sys; print(sys.executable)')
		fp_say "python3 ($FP_PY) has torch, triton and scikit-build-core: using it as is"
	else
		fp_venv_setup "$FP_ROOT/.venv"
	fi
	PATH="$(dirname "$FP_PY"):$PATH"
	export PATH FP_PY
	fp_note "python: $FP_PY ($("$FP_PY" -c 'import sys; print(sys.version.split()[0])'))"
	fp_note "$("$FP_PY" - 2>/dev/null <<'PY' || echo "torch/triton: not importable"
import torch, triton, numpy
print(f"torch {torch.__version__}, triton {triton.__version__}, numpy {numpy.__version__}, "
      f"CUDA GPU: {'yes' if torch.cuda.is_available() else 'no'}")
PY
)"
}

# What an install of the package is made from: every file of the sources that go into the wheel
# (C sources and headers, the CLI, the extension, the Python package, the build files), and the
# interpreter it is installed for. Hashing them takes a few milliseconds.
fp_install_stamp() {
	(
		cd "$FP_ROOT" &&
			find CMakeLists.txt pyproject.toml README.md cmake include src tools python \
				-type f ! -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
		"$FP_PY" -c 'import sys; print(sys.executable, sys.prefix, sys.version)'
	) | sha256sum | cut -d' ' -f1
}

# Build the CPython extension and the CLI with scikit-build-core and install the package into
# FP_PY's environment. The build tree is kept in build-py/ (see pyproject.toml), so a re-install
# after a small change is quick. No downloads: build isolation and dependencies are off.
# Skipped when nothing it is made from changed since the last install into this environment and
# that install is still there (the stamp is build-py/.installed-<hash of the interpreter's path>);
# FP_REINSTALL=1 installs anyway.
fp_install_package() {
	local stamp stamp_file
	stamp=$(fp_install_stamp)
	stamp_file="$FP_ROOT/build-py/.installed-$(printf '%s' "$FP_PY" | sha256sum | cut -c1-16)"
	if [ "${FP_REINSTALL:-0}" != 1 ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ] &&
		"$FP_PY" -c 'import flagprism as f; print("    installed", f.__version__, "at", f.__path__[0])' \
			2>/dev/null; then
		fp_note "the flagprism package is up to date with the sources: not rebuilt (FP_REINSTALL=1 forces it)"
		return 0
	fi
	fp_say "building and installing the flagprism package"
	fp_note "pip install --no-build-isolation --no-deps ."
	rm -f "$stamp_file"
	"$FP_PY" -m pip install --no-build-isolation --no-deps ${FP_PIP_QUIET:+--quiet} "$FP_ROOT" ||
		fp_die "installing the flagprism package failed"
	"$FP_PY" -c 'import flagprism as f; print("    installed", f.__version__, "at", f.__path__[0])' ||
		fp_die "the package installed but 'import flagprism' fails"
	mkdir -p "$FP_ROOT/build-py" && printf '%s\n' "$stamp" >"$stamp_file"
}

# The browser the HTML report's tests open its pages in (tests/python/_browser.py finds it the
# same way): $FP_CHROMIUM, else the first of chromium, chromium-browser, google-chrome,
# google-chrome-stable on PATH. Prints its path; false when there is none.
fp_find_chromium() {
	local name
	if [ -n "${FP_CHROMIUM:-}" ]; then
		command -v "$FP_CHROMIUM"
		return
	fi
	for name in chromium chromium-browser google-chrome google-chrome-stable; do
		command -v "$name" && return 0
	done
	return 1
}

# How to get that browser, for the notes of setup.sh and test.sh.
FP_CHROMIUM_HOW="apt-get install chromium (Debian, Ubuntu), or FP_CHROMIUM=/path/to/chrome"

# Does clang build and link a libFuzzer target? (clang needs compiler-rt's libFuzzer.)
fp_have_libfuzzer() {
	local cc=${FP_FUZZ_CC:-clang} dir rc
	command -v "$cc" >/dev/null || return 1
	dir=$(mktemp -d) || return 1
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
		>"$dir/probe.c"
	"$cc" -fsanitize=fuzzer,address,undefined "$dir/probe.c" -o "$dir/probe" >/dev/null 2>&1
	rc=$?
	rm -rf "$dir"
	return $rc
}
