#!/usr/bin/env bash
# One-call GPU session: build FlagPrism from source with what the GPU machine has (no package
# index), run the GPU tests and the benchmarks, and leave logs and results under $OUT.
# Usage (on the lent GPU machine, from the repository root): bash tests/gpu/run.sh [STEPS]
# STEPS is a comma list of: build,doctor,tests,bench (default: all).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
steps=${1:-build,doctor,tests,bench}
PY=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
status=0
has() { [[ ",$steps," == *",$1,"* ]]; }
log() { echo "== $(date +%H:%M:%S) $*"; }

if has build; then
	log "build: pip install --no-build-isolation --no-deps ."
	if ! $PY -m pip install --no-build-isolation --no-deps . >"$OUT/build.log" 2>&1; then
		tail -40 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
	fi
	tail -2 "$OUT/build.log"
	log "C unit tests"
	cmake -S . -B build-gpu -G Ninja -DFP_WERROR=ON >"$OUT/ctest.log" 2>&1 &&
		cmake --build build-gpu >>"$OUT/ctest.log" 2>&1 &&
		(cd build-gpu && ctest --output-on-failure) >>"$OUT/ctest.log" 2>&1 || status=1
	tail -3 "$OUT/ctest.log"
fi
if has doctor; then
	log "doctor"
	flagprism doctor 2>&1 | tee "$OUT/doctor.txt" | head -60
fi
if has tests; then
	log "pytest tests/gpu -m gpu"
	FLAGPRISM_CLI=$(command -v flagprism) $PY -m pytest -q -m gpu tests/gpu -p no:cacheprovider \
		--junitxml="$OUT/gpu-tests.xml" >"$OUT/gpu-tests.log" 2>&1 || status=1
	tail -30 "$OUT/gpu-tests.log"
fi
if has bench; then
	for b in bench/bench_debugger.py bench/bench_profiler.py; do
		[ -f "$b" ] || continue
		log "bench $b"
		timeout 300 $PY "$b" --out "$OUT" 2>&1 | tee "$OUT/$(basename "$b" .py).log" | tail -25 || status=1
	done
fi
log "done, status $status"
exit $status
