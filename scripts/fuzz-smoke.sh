#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Build every libFuzzer harness (tests/fuzz) with clang + ASan + UBSan in build-fuzz and run each
# on its seed corpus for a bounded time, FP_FUZZ_JOBS of them at once (each fuzzer is one
# process on one core). Exits non-zero if a harness does not build or any run finds a crash,
# leak, timeout or sanitizer report. For CI and for a quick local check; long fuzzing campaigns
# should run the fuzz-<name> binaries directly.
#
# How long each target runs is in tests/fuzz/smoke-seconds (default 20 s for a target it does not
# list), chosen from where each target's coverage stops growing in a smoke run from its seeds:
# the summary prints, per target, the edges at the start and the end and when the last new edge
# came, which is what to look at when changing them.
#
# Environment:
#   FP_FUZZ_SECONDS  seconds per fuzzer for every target (overrides tests/fuzz/smoke-seconds)
#   FP_FUZZ_JOBS     fuzzers run at once (default: the number of cores)
#   FP_FUZZ_BUILD    build directory (default <repo>/build-fuzz)
#   FP_FUZZ_CC       C compiler (default clang)
#   FP_FUZZ_WERROR   ON/OFF, passed as FP_WERROR (default ON)
#   FP_FUZZ_ONLY     run only this fuzzer name (e.g. json)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${FP_FUZZ_BUILD:-$root/build-fuzz}
cc=${FP_FUZZ_CC:-clang}
werror=${FP_FUZZ_WERROR:-ON}
only=${FP_FUZZ_ONLY:-}
jobs=${FP_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
table=$root/tests/fuzz/smoke-seconds

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz-smoke: $cc not found; libFuzzer needs clang" >&2
	exit 2
fi
generator=
if command -v ninja >/dev/null 2>&1; then
	generator="-G Ninja"
fi

# shellcheck disable=SC2086 # $generator is empty or two words on purpose
cmake -S "$root" -B "$build" $generator -DCMAKE_C_COMPILER="$cc" -DFP_BUILD_FUZZ=ON \
	-DFP_BUILD_TESTS=OFF -DFP_BUILD_BENCH=OFF -DFP_WERROR="$werror" >/dev/null
cmake --build "$build" --target fuzzers -j "$jobs"

# seconds NAME: how long target NAME runs.
seconds() {
	local s
	if [ -n "${FP_FUZZ_SECONDS:-}" ]; then
		echo "$FP_FUZZ_SECONDS"
		return
	fi
	s=$(sed -n "s/^$1[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" "$table" 2>/dev/null | head -n 1)
	echo "${s:-20}"
}

# One target, in the background: its log in $work/log.txt, its verdict in $work/result.
run_one() {
	local name=$1 exe=$2 secs=$3 work=$4 seeds
	seeds="$root/tests/fuzz/corpus/$name"
	[ -d "$seeds" ] || seeds=
	# new inputs go to the scratch corpus (first directory), never into the seeds
	# shellcheck disable=SC2086 # $seeds is empty or one path
	if (cd "$work" && "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" $seeds \
		>"$work/log.txt" 2>&1); then
		echo OK >"$work/result"
	else
		echo FAILED >"$work/result"
	fi
}

# Coverage at the start (seeds loaded), at the end, and about when the last new edge came
# (the input count over the executions per second of that line): a target whose edges never
# grow is not reaching its parser's branches; one that still grows at the end could use more.
coverage() {
	awk '
		/INITED cov:/ { for (i = 1; i <= NF; i++) if ($i == "cov:") start = $(i + 1) }
		/cov:/ {
			n = substr($1, 2) + 0; c = 0; e = 0
			for (i = 1; i <= NF; i++) {
				if ($i == "cov:") c = $(i + 1) + 0
				if ($i == "exec/s:") e = $(i + 1) + 0
			}
			if (c > last) { last = c; t = e > 0 ? n / e : 0 }
		}
		END { printf "edges %s -> %s, last new edge at ~%.0f s", start ? start : "?", last ? last : "?", t }
	' "$1"
}

status=0
found=0
names=()
running=0
for exe in "$build"/tests/fuzz/fuzz-*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue
	name=${exe##*/fuzz-}
	if [ -n "$only" ] && [ "$name" != "$only" ]; then
		continue
	fi
	found=$((found + 1))
	names+=("$name")
	work="$build/tests/fuzz/work/$name"
	mkdir -p "$work/corpus" "$work/artifacts"
	rm -f "$work/result"
	secs=$(seconds "$name")
	echo "fuzz-smoke: fuzz-$name for ${secs}s"
	run_one "$name" "$exe" "$secs" "$work" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
wait
if [ "$found" -eq 0 ]; then
	echo "fuzz-smoke: no fuzzers were built in $build/tests/fuzz" >&2
	exit 2
fi
summary=
for name in "${names[@]}"; do
	work="$build/tests/fuzz/work/$name"
	if [ "$(cat "$work/result" 2>/dev/null)" = OK ]; then
		cov=$(coverage "$work/log.txt")
		summary="$summary
  fuzz-$name ($(seconds "$name") s): $cov"
		echo "fuzz-smoke: fuzz-$name OK ($cov)"
	else
		tail -n 40 "$work/log.txt" >&2
		echo "fuzz-smoke: fuzz-$name FAILED; log: $work/log.txt, inputs: $work/artifacts/" >&2
		status=1
	fi
done
echo "fuzz-smoke: coverage (edges at start -> end):$summary"
exit $status
