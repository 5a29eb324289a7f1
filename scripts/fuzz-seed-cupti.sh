#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Turn raw CUPTI activity buffers captured by the backend (FLAGPRISM_CUPTI_CAPTURE=DIR, files
# cupti-<api_version>-<pid>-<seq>.rec; docs/internals/cupti-backend.md, "Capturing raw activity
# records") into seeds of the cupti-records fuzz target: one byte 0x80 | layout index (the raw
# mode of tests/fuzz/fuzz-cupti-records.c; the index of the API version in its `versions`
# table), then the buffer. Seeds are written to tests/fuzz/corpus/cupti-records/ as
# <prefix>-<n>, n counting on from the highest one there. A buffer longer than the cap is cut to
# the cap, rounded down to whole kernel records of its layout (the backend enables kernel
# records only), so libFuzzer's inputs stay small.
#
# Usage: scripts/fuzz-seed-cupti.sh CAPTURE_DIR
# Environment:
#   FP_SEED_PREFIX     seed name prefix (default h200)
#   FP_SEED_MAX_BYTES  the cap on a seed's buffer (default 65536)
#   FP_SEED_CORPUS     the corpus directory (default <repo>/tests/fuzz/corpus/cupti-records)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${FP_SEED_CORPUS:-$root/tests/fuzz/corpus/cupti-records}
prefix=${FP_SEED_PREFIX:-h200}
max=${FP_SEED_MAX_BYTES:-65536}

if [ $# -ne 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
	echo "usage: $0 CAPTURE_DIR" >&2
	exit 2
fi
capture=$1
if [ ! -d "$capture" ]; then
	echo "fuzz-seed-cupti: $capture is not a directory" >&2
	exit 2
fi
case $max in
'' | *[!0-9]*)
	echo "fuzz-seed-cupti: FP_SEED_MAX_BYTES=$max is not a number of bytes" >&2
	exit 2
	;;
esac
case $prefix in
'' | *[!A-Za-z0-9_.-]*)
	echo "fuzz-seed-cupti: FP_SEED_PREFIX=$prefix: use letters, digits, '.', '_' and '-'" >&2
	exit 2
	;;
esac
mkdir -p "$corpus"

# API version -> "layout index:kernel record size"; the same order as `versions` in
# tests/fuzz/fuzz-cupti-records.c (CUDA 11.8, 12.0, 12.8, 13.0, 13.1).
layout_of() {
	case $1 in
	18) echo "0:200" ;;
	19) echo "1:208" ;;
	26) echo "2:208" ;;
	130000) echo "3:216" ;;
	130001) echo "4:216" ;;
	*) return 1 ;;
	esac
}

# the next free seed number
n=0
for f in "$corpus/$prefix"-*; do
	[ -e "$f" ] || continue
	k=${f##*/"$prefix"-}
	case $k in
	'' | *[!0-9]*) continue ;;
	esac
	k=$((10#$k))
	if [ "$k" -ge "$n" ]; then
		n=$((k + 1))
	fi
done

shopt -s nullglob
files=("$capture"/cupti-*-*-*.rec)
if [ ${#files[@]} -eq 0 ]; then
	echo "fuzz-seed-cupti: no capture files (cupti-<api>-<pid>-<seq>.rec) in $capture" >&2
	exit 1
fi

status=0
made=0
for f in "${files[@]}"; do
	base=${f##*/}
	api=${base#cupti-}
	api=${api%%-*}
	if ! spec=$(layout_of "$api"); then
		echo "fuzz-seed-cupti: $base: CUPTI API version $api is not one the fuzz target" \
			"knows (18, 19, 26, 130000, 130001: CUDA 11.8, 12.0, 12.8, 13.0, 13.1); add its" \
			"layout to tests/fuzz/fuzz-cupti-records.c and this script first" >&2
		status=1
		continue
	fi
	index=${spec%%:*}
	rec=${spec##*:}
	size=$(stat -c %s "$f")
	if [ "$size" -eq 0 ]; then
		echo "fuzz-seed-cupti: $base: empty, skipped" >&2
		continue
	fi
	take=$size
	if [ "$size" -gt "$max" ]; then
		take=$((max / rec * rec))
		if [ "$take" -eq 0 ]; then
			take=$max
		fi
		echo "fuzz-seed-cupti: $base: $size bytes, keeping the first $take" >&2
	fi
	out="$corpus/$prefix-$n"
	{
		printf "\\$(printf '%03o' $((0x80 | index)))"
		head -c "$take" "$f"
	} >"$out.tmp"
	mv "$out.tmp" "$out"
	echo "fuzz-seed-cupti: $base -> ${out#"$root"/} (API $api, layout $index, $take bytes)"
	n=$((n + 1))
	made=$((made + 1))
done
echo "fuzz-seed-cupti: $made seed(s) written to ${corpus#"$root"/}"
exit $status
