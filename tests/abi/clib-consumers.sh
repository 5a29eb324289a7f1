#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libflagprism as C users get it, built with a given compiler (scripts/test.sh step `clib` uses a
# second one: clang when the main build is gcc's, gcc otherwise):
#   1. a -Werror Release build of the library, CLI and unit tests + ctest (ABI test included);
#   2. `cmake --install` into a prefix: static and shared library, headers, FlagPrismConfig.cmake,
#      flagprism.pc;
#   3. examples/c built out of tree against that prefix with find_package(FlagPrism), shared and
#      static, and with pkg-config (shared and --static); each run on a test profile and its output
#      compared with tests/abi/top-kernels.expected;
#   4. tests/abi/parent: a parent project that add_subdirectory()s FlagPrism with FP_LIBRARY_ONLY.
# Usage: tests/abi/clib-consumers.sh CC WORKDIR [JOBS]; FP_CLIB_BUILD_TYPE (default Release)
# picks the build type of step 1. Not a place for unit tests.
set -euo pipefail

cc=${1:?usage: clib-consumers.sh CC WORKDIR [JOBS]}
work=${2:?usage: clib-consumers.sh CC WORKDIR [JOBS]}
jobs=${3:-2}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
profile=$root/tests/data/profiles/flagprism-interp.json
expected=$root/tests/abi/top-kernels.expected
gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi

say() { printf '\n--> %s\n' "$*"; }

# check NAME PROGRAM: run the example on the test profile and compare with the expected output.
check() {
	local name=$1 prog=$2 got
	got=$("$prog" "$profile" | sed -E '1s/\(libflagprism [0-9]+\.[0-9]+\.[0-9]+\)/(libflagprism VERSION)/;1s#^[^:]*/##')
	if ! diff -u "$expected" <(printf '%s\n' "$got"); then
		echo "clib: $name: the output differs from $expected"
		return 1
	fi
	echo "clib: $name: output as expected"
}

btype=${FP_CLIB_BUILD_TYPE:-Release}
say "build with $cc ($btype, -Werror) in $work/build + ctest"
rm -rf "$work/build" "$prefix"
cmake -S "$root" -B "$work/build" "${gen[@]}" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$btype" \
	-DFP_WERROR=ON -DFP_BUILD_BENCH=OFF -DFP_BUILD_PYTHON=OFF >/dev/null
cmake --build "$work/build" -j "$jobs"
(cd "$work/build" && ctest -j "$jobs" --output-on-failure --no-tests=error | tail -n 3)

say "cmake --install into $prefix"
cmake --install "$work/build" --prefix "$prefix" >/dev/null
for f in include/flagprism/calltree.h lib/libflagprism.a lib/libflagprism.so \
	lib/cmake/FlagPrism/FlagPrismConfig.cmake lib/pkgconfig/flagprism.pc bin/flagprism; do
	[ -e "$prefix/$f" ] || { echo "clib: $prefix/$f was not installed"; exit 1; }
done

for kind in shared static; do
	say "examples/c with find_package(FlagPrism), $kind"
	rm -rf "$work/example-$kind"
	cmake -S "$root/examples/c" -B "$work/example-$kind" "${gen[@]}" -DCMAKE_C_COMPILER="$cc" \
		-DCMAKE_PREFIX_PATH="$prefix" -DFP_EXAMPLE_STATIC=$([ $kind = static ] && echo ON || echo OFF) \
		>/dev/null
	cmake --build "$work/example-$kind"
	check "find_package, $kind" "$work/example-$kind/top-kernels"
done
if ldd "$work/example-static/top-kernels" | grep -q libflagprism; then
	echo "clib: the static example links libflagprism.so"
	exit 1
fi

if command -v pkg-config >/dev/null; then
	say "examples/c with pkg-config"
	export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
	# shellcheck disable=SC2046
	"$cc" -std=c11 -Wall -Wextra -Werror "$root/examples/c/top-kernels.c" \
		$(pkg-config --cflags --libs flagprism) -Wl,-rpath,"$prefix/lib" -o "$work/tk-pc"
	check "pkg-config, shared" "$work/tk-pc"
	# shellcheck disable=SC2046
	"$cc" -std=c11 -Wall -Wextra -Werror "$root/examples/c/top-kernels.c" \
		$(pkg-config --cflags flagprism) "$prefix/lib/libflagprism.a" \
		$(pkg-config --libs-only-other --libs-only-l --static flagprism | sed 's/-lflagprism//') \
		-o "$work/tk-pc-static"
	check "pkg-config, static" "$work/tk-pc-static"
else
	echo "clib: pkg-config not found: the pkg-config build is left out"
fi

say "a parent project with add_subdirectory(FlagPrism) and FP_LIBRARY_ONLY"
rm -rf "$work/parent"
cmake -S "$root/tests/abi/parent" -B "$work/parent" "${gen[@]}" -DCMAKE_C_COMPILER="$cc" \
	-DFLAGPRISM_SOURCE_DIR="$root" >/dev/null
cmake --build "$work/parent" -j "$jobs"
check "add_subdirectory" "$work/parent/top-kernels"
echo "clib: all consumers built and ran"
