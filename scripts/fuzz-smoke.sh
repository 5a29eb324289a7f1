#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Build every libFuzzer harness (tests/fuzz) with clang + ASan + UBSan in build-fuzz and run each
# on its seed corpus for a bounded time. Exits non-zero if a harness does not build or any run
# finds a crash, leak, timeout or sanitizer report. For CI and for a quick local check; long
# fuzzing campaigns should run the fuzz-<name> binaries directly.
#
# Environment:
#   FP_FUZZ_SECONDS  seconds per fuzzer (default 30)
#   FP_FUZZ_BUILD    build directory (default <repo>/build-fuzz)
#   FP_FUZZ_CC       C compiler (default clang)
#   FP_FUZZ_WERROR   ON/OFF, passed as FP_WERROR (default ON)
#   FP_FUZZ_ONLY     run only this fuzzer name (e.g. json)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${FP_FUZZ_BUILD:-$root/build-fuzz}
secs=${FP_FUZZ_SECONDS:-30}
cc=${FP_FUZZ_CC:-clang}
werror=${FP_FUZZ_WERROR:-ON}
only=${FP_FUZZ_ONLY:-}

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
cmake --build "$build" --target fuzzers

status=0
found=0
summary=
for exe in "$build"/tests/fuzz/fuzz-*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue
	name=${exe##*/fuzz-}
	if [ -n "$only" ] && [ "$name" != "$only" ]; then
		continue
	fi
	found=$((found + 1))
	work="$build/tests/fuzz/work/$name"
	mkdir -p "$work/corpus" "$work/artifacts"
	seeds="$root/tests/fuzz/corpus/$name"
	[ -d "$seeds" ] || seeds=
	echo "fuzz-smoke: fuzz-$name for ${secs}s"
	# new inputs go to the scratch corpus (first directory), never into the seeds
	# shellcheck disable=SC2086 # $seeds is empty or one path
	if (cd "$work" && "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" $seeds \
		>"$work/log.txt" 2>&1); then
		tail -n 12 "$work/log.txt" | grep -E "^stat::number_of_executed_units|^Done" || true
		# Coverage at the start (seeds loaded) and at the end: a target whose edges never grow
		# is not reaching its parser's branches.
		start=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$work/log.txt" | head -n 1)
		end=$(sed -n 's/.*DONE *cov: \([0-9]*\).*/\1/p' "$work/log.txt" | tail -n 1)
		summary="$summary
  fuzz-$name: edges ${start:-?} -> ${end:-?}"
		echo "fuzz-smoke: fuzz-$name OK (edges ${start:-?} -> ${end:-?})"
	else
		tail -n 40 "$work/log.txt" >&2
		echo "fuzz-smoke: fuzz-$name FAILED; log: $work/log.txt, inputs: $work/artifacts/" >&2
		status=1
	fi
done
if [ "$found" -eq 0 ]; then
	echo "fuzz-smoke: no fuzzers were built in $build/tests/fuzz" >&2
	exit 2
fi
if [ -n "$summary" ]; then
	echo "fuzz-smoke: coverage (edges at start -> end):$summary"
fi
exit $status
