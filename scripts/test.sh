#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The second command of the README, and what CI runs (.ci/run): every test FlagPrism has.
#   format    the C files are as clang-format makes them, the Python files as ruff (check and
#             format) makes them, both at the versions requirements-dev.txt pins:
#             scripts/check-format.sh
#   build     -Werror build (library, CLI, extension, unit tests, benchmarks) in build/ + ctest
#   asan      AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/ + ctest
#   fuzz      scripts/fuzz-smoke.sh when clang has libFuzzer: each target for its seconds in
#             tests/fuzz/smoke-seconds (FP_FUZZ_SECONDS: all alike), one per core at once
#   clib      the C library as C users get it, built with a second compiler (clang when build/
#             is gcc's, else gcc): -Werror Release build + ctest, cmake --install, examples/c
#             against the installed package (find_package and pkg-config), add_subdirectory
#   install   pip install --no-build-isolation --no-deps . into the environment (skipped when no
#             source changed since the last install: scripts/env.sh, fp_install_package)
#   python    pytest tests/python -m "not gpu" on the Triton interpreter (TRITON_INTERPRET=1), in
#             FP_PYTEST_JOBS pytest-xdist workers (default auto: one per core), then the tests
#             marked serial alone; the HTML report's pages in headless Chromium when there is one
#             (it says when not, and the summary says so again)
#   example   examples/quickstart.py
#   gpu       pytest tests/gpu -m gpu, only where PyTorch sees a CUDA GPU: the tests that can share
#             the GPU in FP_GPU_JOBS workers (default: half the cores, 2 to 8), then those
#             marked exclusive_gpu (hardware counters, PC sampling, timings) one after another
#   matrix    the python step and the quickstart again on each Triton in FP_TRITON_MATRIX (e.g.
#             "3.4.0 3.9.0", as .ci/run sets it), each in its own environment under
#             .cache/triton-matrix/ (scripts/triton-matrix.sh); skipped when it is empty
#   ascend    Triton-Ascend's compile tests (tests/python/test_ascend.py) in their own environment
#             under .cache/ascend/ (scripts/ascend.sh), when FP_ASCEND=1 (.ci/run sets it); skipped,
#             saying why, when the triton-ascend wheel cannot be fetched
#   scripts/test.sh --triton-matrix [VERSION...]: only build, install and the matrix, on every
#             supported Triton (3.4.0 3.5.1 3.6.0 3.7.1 3.8.0 3.9.0) unless versions are given
# Every step runs even after one fails (FP_FAIL_FAST=1 stops at the first failure); the exit
# status is non-zero when any step failed. Knobs: FP_BUILD_DIR, FP_ASAN_BUILD_DIR, FP_JOBS,
# FP_PYTEST_JOBS, FP_GPU_JOBS, FP_FUZZ_SECONDS, FP_SKIP="asan fuzz ..." (steps to leave out), and
# those of scripts/env.sh.
set -uo pipefail

if [ "${1:-}" = --triton-matrix ]; then
	shift
	FP_TRITON_MATRIX=${*:-3.4.0 3.5.1 3.6.0 3.7.1 3.8.0 3.9.0}
	FP_SKIP="${FP_SKIP:-} asan fuzz clib python example gpu ascend"
fi

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$FP_ROOT"

BUILD=${FP_BUILD_DIR:-build}
ASAN_BUILD=${FP_ASAN_BUILD_DIR:-build-asan}
JOBS=${FP_JOBS:-$(nproc 2>/dev/null || echo 2)}

passed=()
failed=()
skipped=()
notes=()
installed=0

# run_step NAME FUNCTION: runs FUNCTION; 0 passed, 77 skipped (it says why), anything else failed.
run_step() {
	local name=$1 fn=$2 rc start
	case " ${FP_SKIP:-} " in
	*" $name "*)
		fp_say "[$name] skipped (FP_SKIP)"
		skipped+=("$name")
		return
		;;
	esac
	start=$SECONDS
	"$fn"
	rc=$?
	case $rc in
	0)
		fp_say "[$name] passed ($((SECONDS - start)) s)"
		passed+=("$name")
		;;
	77) skipped+=("$name") ;;
	*)
		printf '\n%s==> [%s] FAILED (exit %d, %d s)%s\n' "$FP_R" "$name" "$rc" \
			"$((SECONDS - start))" "$FP_N"
		failed+=("$name")
		if [ "${FP_FAIL_FAST:-0}" = 1 ]; then
			summary
		fi
		;;
	esac
}

summary() {
	fp_say "summary"
	fp_note "passed:  ${passed[*]:-none}"
	fp_note "failed:  ${failed[*]:-none}"
	fp_note "skipped: ${skipped[*]:-none}"
	local n
	for n in "${notes[@]}"; do
		fp_note "note:    $n"
	done
	# The plain closing line CI reads; it counts steps, each of which ran its own test suite.
	printf 'test.sh: %d passed, %d failed, %d skipped\n' \
		"${#passed[@]}" "${#failed[@]}" "${#skipped[@]}"
	if [ "${#failed[@]}" -ne 0 ]; then
		exit 1
	fi
	exit 0
}

generator_args() {
	# Keep whatever generator an existing tree was made with; prefer Ninja for new ones.
	if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null; then
		echo "-G Ninja"
	fi
}

# CUDA 13.0's CUPTI headers, so that the unit tests check our re-declared CUPTI structs (range
# profiler, PC sampling) against the real layouts: $FP_CUPTI13_HEADERS_DIR; else those of an
# nvidia-cuda-cupti (cu13) wheel already installed in FP_PY's environment; else the wheel is
# downloaded from the package index, one try of at most 30 s, and only its headers are unpacked
# under .cache/ (nothing is installed). Without them the checks are skipped and it says so. The
# README says this too.
cupti13_headers() {
	if [ -n "${FP_CUPTI13_HEADERS_DIR:-}" ]; then
		echo "$FP_CUPTI13_HEADERS_DIR"
		return
	fi
	local dir=.cache/cupti13 inc=.cache/cupti13/nvidia/cu13/include have
	have=$("$FP_PY" - 2>/dev/null <<'PY'
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
for loc in (spec.submodule_search_locations or []) if spec else []:
    inc = os.path.join(loc, "cu13", "include")
    if os.path.isfile(os.path.join(inc, "cupti_profiler_host.h")):
        print(inc)
        break
PY
)
	if [ -n "$have" ]; then
		fp_note "CUDA 13 CUPTI headers: $have (installed wheel)" >&2
		echo "$have"
		return
	fi
	if [ ! -f "$inc/cupti_profiler_host.h" ]; then
		fp_note "downloading the nvidia-cuda-cupti==13.0.85 wheel's headers into $dir (one try)" >&2
		mkdir -p "$dir/wheel" &&
			timeout 30 "$FP_PY" -m pip download -q --no-deps --retries 0 --timeout 10 \
				-d "$dir/wheel" "nvidia-cuda-cupti==13.0.85" >&2 &&
			"$FP_PY" -c 'import sys, zipfile, glob
z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0])
z.extractall(sys.argv[1] + "/..", [n for n in z.namelist() if "/include/" in n])' "$dir/wheel" ||
			fp_note "no CUDA 13.0 CUPTI headers (no package index, or the download failed):" \
				"the ABI checks against them are skipped (FP_CUPTI13_HEADERS_DIR names a copy)" >&2
	fi
	[ -f "$inc/cupti_profiler_host.h" ] && echo "$PWD/$inc"
}

step_format() {
	fp_say "[format] C as .clang-format says, Python as ruff says (scripts/check-format.sh)"
	bash scripts/check-format.sh
}

step_build() {
	fp_say "[build] -Werror build in $BUILD/ (library, CLI, extension, unit tests) + ctest"
	local cupti13
	cupti13=$(cupti13_headers)
	# shellcheck disable=SC2046
	cmake -S . -B "$BUILD" $(generator_args "$BUILD") -DFP_WERROR=ON -DFP_BUILD_PYTHON=ON \
		-DPython_EXECUTABLE="$FP_PY" ${cupti13:+-DFP_CUPTI13_HEADERS_DIR="$cupti13"} &&
		cmake --build "$BUILD" -j "$JOBS" &&
		(cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --no-tests=error)
}

step_asan() {
	fp_say "[asan] ASan+UBSan build in $ASAN_BUILD/ + ctest"
	# shellcheck disable=SC2046
	cmake -S . -B "$ASAN_BUILD" $(generator_args "$ASAN_BUILD") -DCMAKE_BUILD_TYPE=Debug \
		-DFP_WERROR=ON -DFP_ASAN=ON -DFP_UBSAN=ON -DFP_BUILD_BENCH=OFF &&
		cmake --build "$ASAN_BUILD" -j "$JOBS" &&
		(cd "$ASAN_BUILD" &&
			ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
			UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
			ctest --output-on-failure -j "$JOBS" --no-tests=error)
}

step_fuzz() {
	if [ ! -f scripts/fuzz-smoke.sh ]; then
		fp_say "[fuzz] skipped: scripts/fuzz-smoke.sh does not exist yet"
		return 77
	fi
	if ! fp_have_libfuzzer; then
		fp_say "[fuzz] skipped: ${FP_FUZZ_CC:-clang} cannot link a libFuzzer target"
		fp_note "(.ci/run installs clang's libFuzzer with apt-get)"
		return 77
	fi
	fp_say "[fuzz] scripts/fuzz-smoke.sh, ${FP_FUZZ_SECONDS:-the seconds of tests/fuzz/smoke-seconds} per target, $JOBS at once"
	FP_FUZZ_JOBS=${FP_FUZZ_JOBS:-$JOBS} bash scripts/fuzz-smoke.sh
}

# The compiler the clib step uses: the other of gcc and clang than build/'s, or FP_CLIB_CC.
second_compiler() {
	local id
	if [ -n "${FP_CLIB_CC:-}" ]; then
		echo "$FP_CLIB_CC"
		return
	fi
	id=$(build_compiler_id)
	case $id in
	Clang) command -v gcc ;;
	*) command -v clang || command -v gcc ;;
	esac
}

# The compiler build/ was made with: GNU, Clang, ... (empty when unknown).
build_compiler_id() {
	sed -n 's/^set(CMAKE_C_COMPILER_ID "\(.*\)")$/\1/p' \
		"$BUILD"/CMakeFiles/*/CMakeCCompiler.cmake 2>/dev/null | head -n1
}

step_clib() {
	local cc
	cc=$(second_compiler)
	if [ -z "$cc" ]; then
		fp_say "[clib] skipped: neither clang nor gcc found"
		return 77
	fi
	# A second compiler builds at -O3 (Release); without one (no clang here), the same
	# compiler keeps build/'s optimisation level and the step tests what C users get.
	local btype=Release
	case "$(build_compiler_id):$("$cc" --version 2>/dev/null | head -n1)" in
	GNU:*clang*) ;;
	Clang:*clang*|GNU:*) btype=RelWithDebInfo; fp_note "no second compiler: $cc again" ;;
	esac
	fp_say "[clib] the C library for C users, built with $cc: install, examples/c, add_subdirectory"
	FP_CLIB_BUILD_TYPE=${FP_CLIB_BUILD_TYPE:-$btype} \
		bash tests/abi/clib-consumers.sh "$cc" "${FP_CLIB_BUILD_DIR:-build-clib}" "$JOBS"
}

step_install() {
	fp_say "[install] the flagprism package"
	(fp_install_package) && installed=1
}

# pytest_groups DIR MARKS SERIAL_MARK JOBS ARGS...: the tests of DIR selected by MARKS that are
# not marked SERIAL_MARK in JOBS pytest-xdist workers (--dist loadgroup: an xdist_group stays on
# one worker; one process when JOBS is 0 or 1, or when
# pytest-xdist is missing), then those marked SERIAL_MARK in one process, after the others, so
# that nothing else runs beside them. Fails when either part fails or when neither collects a
# test; a part that selects no test is fine.
pytest_groups() {
	local dir=$1 marks=$2 serial=$3 jobs=$4 rc1 rc2
	shift 4
	local workers=()
	if [ "$jobs" != 0 ] && [ "$jobs" != 1 ]; then
		if fp_imports "$FP_PY" xdist; then
			workers=(-n "$jobs" --dist loadgroup)
		else
			fp_note "pytest-xdist is not installed: the tests run in one process"
		fi
	fi
	if ! compgen -G "$dir/test_*.py" >/dev/null; then
		fp_say "skipped: no test files in $dir"
		return 77
	fi
	fp_note "pytest $dir -m '$marks and not $serial' ${workers[*]}"
	"$FP_PY" -m pytest "$dir" -m "($marks) and not $serial" "${workers[@]}" "$@"
	rc1=$?
	fp_note "pytest $dir -m '$marks and $serial' (one at a time, nothing beside them)"
	"$FP_PY" -m pytest "$dir" -m "($marks) and $serial" "$@"
	rc2=$?
	if [ "$rc1" -eq 5 ] && [ "$rc2" -eq 5 ]; then
		printf 'pytest collected no test in %s, which has test files: treated as a failure\n' "$dir"
		return 1
	fi
	[ "$rc1" -eq 5 ] && rc1=0
	[ "$rc2" -eq 5 ] && rc2=0
	[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ]
}

test_env() {
	local cli unit
	cli=$(find "$BUILD" -maxdepth 3 -type f -name flagprism -perm -u+x 2>/dev/null | head -n1)
	unit=$(find "$BUILD" -maxdepth 4 -type f -name fp_unit_tests -perm -u+x 2>/dev/null | head -n1)
	if [ -n "$cli" ]; then export FLAGPRISM_CLI="$(realpath "$cli")"; fi
	if [ -n "$unit" ]; then export FP_UNIT_TESTS="$(realpath "$unit")"; fi
	# The build tree itself, for tests that need another of its programs.
	FP_BUILD_DIR=$(realpath "$BUILD")
	export FP_BUILD_DIR
	if [ -x "$BUILD/bench/bench-prof" ]; then export FP_BENCH_PROF="$FP_BUILD_DIR/bench/bench-prof"; fi
	if [ -x "$BUILD/tests/helper/fp-test-tool" ]; then
		export FP_TEST_TOOL="$FP_BUILD_DIR/tests/helper/fp-test-tool"
	fi
	# The stand-in libcupti of the C unit tests, for the Python CUPTI-backend tests.
	if [ -f "$BUILD/tests/unit/fake-cupti/libfakecupti.so" ]; then
		export FP_FAKE_CUPTI="$FP_BUILD_DIR/tests/unit/fake-cupti/libfakecupti.so"
	fi
	fp_note "FLAGPRISM_CLI=${FLAGPRISM_CLI:-<not built>}"
	fp_note "FP_UNIT_TESTS=${FP_UNIT_TESTS:-<not built>}"
	fp_note "FP_BUILD_DIR=$FP_BUILD_DIR"
}

need_install() {
	if [ "$installed" != 1 ]; then
		fp_say "cannot run: the package did not install (see the install step)"
		return 1
	fi
	if ! fp_imports "$FP_PY" pytest; then
		fp_say "pytest is not installed in $FP_PY's environment"
		return 1
	fi
}

# Say, before pytest runs, whether the HTML report's browser tests can run (never a silent skip),
# and remember it for the summary.
browser_note() {
	local exe
	if exe=$(fp_find_chromium); then
		fp_note "browser tests (tests/python/test_report.py): $("$exe" --version 2>/dev/null | head -n1)"
	elif [ "${FP_REQUIRE_BROWSER:-0}" = 1 ]; then
		fp_note "browser tests: FP_REQUIRE_BROWSER=1 but no chromium: they will FAIL"
	else
		fp_note "browser tests (tests/python/test_report.py) will be SKIPPED: no chromium on PATH"
		fp_note "($FP_CHROMIUM_HOW; .ci/run installs it)"
		notes+=("the HTML report's pages were not rendered in a browser (no Chromium): $FP_CHROMIUM_HOW, then run scripts/test.sh again")
	fi
}

# Workers for the interpreter suite: FP_PYTEST_JOBS, default auto (one per core).
python_jobs() {
	echo "${FP_PYTEST_JOBS:-auto}"
}

# Workers sharing the GPU: FP_GPU_JOBS, default half the cores, at least 2 and at most 8 (each
# worker holds a CUDA context and its tensors; each compiles its kernels on the cores).
gpu_jobs() {
	local n
	if [ -n "${FP_GPU_JOBS:-}" ]; then
		echo "$FP_GPU_JOBS"
		return
	fi
	n=$(($(nproc 2>/dev/null || echo 2) / 2))
	[ "$n" -lt 2 ] && n=2
	[ "$n" -gt 8 ] && n=8
	echo "$n"
}

step_python() {
	need_install || return 1
	fp_say "[python] pytest tests/python -m 'not gpu' on the Triton interpreter"
	browser_note
	test_env
	TRITON_INTERPRET=1 pytest_groups tests/python "not gpu" serial "$(python_jobs)"
}

step_example() {
	need_install || return 1
	fp_say "[example] examples/quickstart.py"
	"$FP_PY" examples/quickstart.py
}

step_gpu() {
	if ! "$FP_PY" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
		fp_say "[gpu] skipped: no CUDA GPU visible to PyTorch"
		return 77
	fi
	need_install || return 1
	fp_say "[gpu] pytest tests/gpu -m gpu"
	test_env
	(unset TRITON_INTERPRET && pytest_groups tests/gpu gpu exclusive_gpu "$(gpu_jobs)")
}

step_matrix() {
	if [ -z "${FP_TRITON_MATRIX:-}" ]; then
		fp_say "[matrix] skipped: FP_TRITON_MATRIX is empty (scripts/test.sh --triton-matrix runs it)"
		return 77
	fi
	need_install || return 1
	fp_say "[matrix] the interpreter suite and the quickstart on Triton $FP_TRITON_MATRIX"
	FP_BUILD_DIR=$BUILD bash scripts/triton-matrix.sh $FP_TRITON_MATRIX
}

step_ascend() {
	if [ "${FP_ASCEND:-0}" != 1 ]; then
		fp_say "[ascend] skipped: FP_ASCEND is not 1 (scripts/ascend.sh runs it; .ci/run sets it)"
		return 77
	fi
	need_install || return 1
	FP_BUILD_DIR=$BUILD bash scripts/ascend.sh
}

fp_env_setup
run_step format step_format
run_step build step_build
run_step asan step_asan
run_step fuzz step_fuzz
run_step clib step_clib
run_step install step_install
run_step python step_python
run_step example step_example
run_step gpu step_gpu
run_step matrix step_matrix
run_step ascend step_ascend
summary
