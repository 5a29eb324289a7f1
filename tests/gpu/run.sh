#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One call on the lent GPU machine: build FlagPrism from source with what that machine has (no
# package index: pip --no-build-isolation --no-deps), run the GPU tests and the benchmarks, and
# leave logs and results under $OUT (files at most one folder down, for the device tool).
#
#   bash tests/gpu/run.sh [STEPS]      STEPS: comma list of build,ctest,doctor,tests,bench
#                                       (default build,doctor,tests,bench)
# Knobs: FP_GPU_TESTS (pytest paths, default tests/gpu), FP_TESTS_S / FP_BENCH_S (time limits),
# FP_BENCHES (which bench scripts, default "debugger profiler sanitize metrics timeline pcsampling
# launch_paths whole"), FP_BENCH_ARGS.
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
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
	log "wheels: $(ls .whl | tr '\n' ' ')"
	$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
		.whl/*.whl >"$OUT/wheels.log" 2>&1 || { echo "wheel install failed"; tail -5 "$OUT/wheels.log"; }
	export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
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
if has tests; then
	log "pytest -m gpu ${FP_GPU_TESTS:-tests/gpu}"
	# shellcheck disable=SC2086
	timeout "${FP_TESTS_S:-300}" $PY -m pytest -m gpu -q -p no:cacheprovider -rs \
		--junitxml="$OUT/gpu-tests.xml" ${FP_GPU_TESTS:-tests/gpu} >"$OUT/gpu-tests.log" 2>&1 || status=1
	grep -E "passed|failed|FAILED|ERROR|SKIPPED" "$OUT/gpu-tests.log" | tail -40
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
log "done, status $status"
cp "$OUT"/*.log "$OUT"/doctor.txt "$FINAL"/ 2>/dev/null
tar -C "$OUT" -czf "$FINAL/gpu-results.tar.gz" . 2>/dev/null
exit $status
