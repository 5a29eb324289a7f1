#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One call on the lent GPU machine: build FlagPrism from source with what that machine has (no
# package index: pip --no-build-isolation --no-deps), run the GPU tests and the benchmarks, and
# leave logs and results under $OUT (files at most one folder down, for the device tool).
#
#   bash tests/gpu/run.sh [STEPS]      STEPS: comma list of build,ctest,doctor,suite,tests,bench
#                                       (default build,doctor,tests,bench; suite: the README's
#                                       test command, scripts/test.sh, beside the GPU tests)
# Knobs: FP_GPU_TESTS (pytest paths, default tests/gpu), FP_GPU_JOBS (pytest-xdist workers for
# the tests that can share the GPU; the exclusive_gpu ones then run alone), FP_TESTS_S /
# FP_TESTS_EXCLUSIVE_S (the exclusive part) / FP_BENCH_S / FP_SUITE_S
# (time limits), FP_TEST_HANG_S (pytest prints the stacks of a test running longer), FP_BENCHES
# (which bench scripts, default "debugger profiler sanitize metrics timeline pcsampling
# launch_paths whole"), FP_BENCH_ARGS. Each failing GPU test's traceback is also written as it
# happens to failures.txt (tests/gpu/conftest.py), so a run cut off by a time limit keeps them.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
FINAL=${OUT:-$PWD/gpu-out}
# Everything is written to a work folder; at the end the main logs and one tarball of the rest
# go to $OUT (the device tool brings back at most 8 files).
OUT=$(mktemp -d /tmp/fp-gpu-XXXXXX)
mkdir -p "$FINAL"
steps=${1:-build,doctor,tests,bench}
PY=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export FP_GPU_RESULTS_DIR=$OUT
status=0
t0=$SECONDS
has() { [[ ",$steps," == *",$1,"* ]]; }
log() { echo "== +$((SECONDS - t0))s $*"; }

# Third-party kernel libraries the GPU tests run (FlagGems, Liger-Kernel) travel as wheels in
# .whl/ (the machine reaches no package index); installed without their pinned dependencies.
# A NumPy wheel there is for the interpreter runs of the differential tests only (Triton 3.6's
# interpreter needs NumPy < 2.4, known-bad row triton3.6-interpreter-numpy2.4; the GPU tests keep
# the machine's NumPy): it goes to its own folder, FP_INTERPRETER_PYTHONPATH.
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
	log "wheels: $(ls .whl | tr '\n' ' ')"
	libs=() interp=()
	for w in .whl/*.whl; do
		case $(basename "$w") in
		numpy-*) interp+=("$w") ;;
		*) libs+=("$w") ;;
		esac
	done
	if [ ${#libs[@]} -gt 0 ]; then
		$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
			"${libs[@]}" >"$OUT/wheels.log" 2>&1 || { echo "wheel install failed"; tail -5 "$OUT/wheels.log"; }
		export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
	fi
	if [ ${#interp[@]} -gt 0 ]; then
		$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-interp \
			"${interp[@]}" >>"$OUT/wheels.log" 2>&1 || { echo "wheel install failed"; tail -5 "$OUT/wheels.log"; }
		export FP_INTERPRETER_PYTHONPATH=/tmp/site-interp
	fi
fi
if has build; then
	log "build: $PY -m pip install --no-build-isolation --no-deps ."
	if ! $PY -m pip install --no-build-isolation --no-deps . >"$OUT/build.log" 2>&1; then
		tail -40 "$OUT/build.log"
		echo "BUILD FAILED"
		exit 1
	fi
fi
if has ctest; then
	log "C unit tests"
	{ cmake -S . -B build-gpu -G Ninja -DFP_WERROR=ON && cmake --build build-gpu &&
		(cd build-gpu && ctest --output-on-failure -j8); } >"$OUT/ctest.log" 2>&1 || status=1
	tail -3 "$OUT/ctest.log"
fi
if has doctor; then
	log "doctor"
	(cd /tmp && flagprism doctor) >"$OUT/doctor.txt" 2>&1
	cat "$OUT/doctor.txt"
fi
if has suite; then
	# The README's test command (scripts/test.sh) on this machine, niced, in the background beside
	# the GPU tests (its own gpu step is the tests step here): on a copy of the tree in /tmp, with
	# its package installed under its own prefix, so the install the GPU tests use is not touched.
	log "suite: scripts/test.sh in the background (FP_SKIP=gpu; log suite.log)"
	rm -rf /tmp/fp-suite /tmp/fp-suite-prefix && mkdir -p /tmp/fp-suite
	tar --exclude=./build --exclude=./build-asan --exclude=./build-clib --exclude=./build-gpu \
		--exclude=./build-py --exclude=./.cache --exclude=./.whl -cf - . | tar -C /tmp/fp-suite -xf -
	site=/tmp/fp-suite-prefix/lib/python$($PY -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages
	(cd /tmp/fp-suite && PIP_PREFIX=/tmp/fp-suite-prefix PIP_IGNORE_INSTALLED=1 \
		PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} PATH=/tmp/fp-suite-prefix/bin:$PATH FP_SKIP=${FP_SUITE_SKIP:-gpu} \
		timeout -s INT -k 20 "${FP_SUITE_S:-540}" nice -n 15 bash scripts/test.sh) >"$OUT/suite.log" 2>&1 &
	suite_pid=$!
fi
if has tests; then
	# FP_GPU_JOBS=N: N pytest-xdist workers share the GPU for the tests that can (-m "gpu and not
	# exclusive_gpu", --dist loadgroup keeps an xdist_group on one worker); then the tests marked
	# exclusive_gpu (hardware counters, PC sampling, ncu, timings) run one at a time, nothing
	# beside them, as scripts/test.sh's gpu step runs them. Without FP_GPU_JOBS: one process.
	pytest_gpu() { # NAME LIMIT MARKS [ARGS...]: logs NAME.log, junit NAME.xml
		local name=$1 limit=$2 marks=$3
		shift 3
		log "pytest -m '$marks' $* ${FP_GPU_TESTS:-tests/gpu}"
		# shellcheck disable=SC2086
		timeout -s INT -k 20 "$limit" $PY -m pytest -m "$marks" "$@" -v --tb=short --durations=25 \
			-p no:cacheprovider -rs -o faulthandler_timeout="${FP_TEST_HANG_S:-240}" \
			--junitxml="$OUT/$name.xml" ${FP_GPU_TESTS:-tests/gpu} >"$OUT/$name.log" 2>&1
		local rc=$?
		[ "$rc" = 5 ] && rc=0 # this part selected no test
		grep -E "passed|failed|FAILED|ERROR|SKIPPED" "$OUT/$name.log" | tail -60
		return $rc
	}
	if [ -n "${FP_GPU_JOBS:-}" ] && $PY -c "import xdist" 2>/dev/null; then
		pytest_gpu gpu-tests "${FP_TESTS_S:-300}" "gpu and not exclusive_gpu" \
			-n "$FP_GPU_JOBS" --dist loadgroup || status=1
		pytest_gpu gpu-tests-exclusive "${FP_TESTS_EXCLUSIVE_S:-300}" "gpu and exclusive_gpu" ||
			status=1
	else
		pytest_gpu gpu-tests "${FP_TESTS_S:-300}" gpu || status=1
	fi
fi
if has bench; then
	for b in ${FP_BENCHES:-debugger profiler sanitize metrics timeline pcsampling launch_paths whole}; do
		f=bench/bench_$b.py
		[ -f "$f" ] || continue
		log "bench $f"
		# shellcheck disable=SC2086
		(cd /tmp && timeout "${FP_BENCH_S:-200}" $PY "$OLDPWD/$f" --quick --out "$OUT/bench_$b.jsonl" \
			${FP_BENCH_ARGS:-}) >"$OUT/bench_$b.log" 2>&1 || status=1
		grep -v '^{' "$OUT/bench_$b.log" | tail -25
	done
fi
if [ -n "${suite_pid:-}" ]; then
	log "waiting for the suite"
	wait "$suite_pid" || status=1
	grep -E "^==> |passed|failed|FAILED|error:|skipped" "$OUT/suite.log" | tail -40
fi
if [ -s "$OUT/failures.txt" ]; then
	log "failures (failures.txt)"
	head -c 6000 "$OUT/failures.txt"
fi
log "done, status $status"
cp "$OUT"/*.log "$OUT"/doctor.txt "$OUT"/failures.txt "$FINAL"/ 2>/dev/null
tar -C "$OUT" -czf "$FINAL/gpu-results.tar.gz" . 2>/dev/null
exit $status
