#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench.sh — Clover steering benchmark (not a test).
#
#   tests/clover/bench.sh BUILD_DIR [clients keys ops_per_client]
#
# 1. Retries and round trips per operation, steering off vs on, in one run:
#    YCSB-A-like (50% PUT) and write-only, uniform and Zipf(0.99) keys, over
#    the closed loop of clover_sim (16 clients, 64 keys, 2000 ops each by
#    default; real RoCEv2 frames, responder with real memory).  Twice: with
#    the paper's read table (keys x 3, direct-mapped; with the breakdown of
#    what read steering did with each GET's first READ) and with one that
#    holds the cursors clients keep (keys x 64, 8-way).
# 1b. YCSB-A GETs needing a second round trip against read table size and
#    ways (steering on).
# 2. Per-packet cost of lib/clover in instructions: callgrind over a
#    steering-on YCSB-A run, instructions inclusive in clover_process divided
#    by the frames it saw (requests and responses).  Build with
#    --buildtype=release (or debugoptimized) for numbers that mean anything.
set -eu
build=${1:?usage: bench.sh BUILD_DIR [clients keys ops]}
shift
bench=$build/tests/clover/clover_bench
[ -x "$bench" ] || { echo "no $bench: ninja -C $build tests/clover/clover_bench" >&2; exit 1; }

echo "== retries / round trips per op (closed loop), paper's read table"
"$bench" -v "$@" 2>/dev/null
echo
echo "== the same, read table keys x 64, 8-way"
"$bench" -f 64 -w 8 "$@" 2>/dev/null

echo
echo "== YCSB-A GETs needing a 2nd round trip (steering on) by read_factor / read_ways"
printf "%-7s %-5s %9s %9s\n" factor ways uniform zipf.99
for f in 3 6 12 24 48 64; do
	for w in 1 8; do
		"$bench" -f $f -w $w "$@" 2>/dev/null |
			awk -v f=$f -v w=$w '$1 == "ycsb-a" && $3 == "on" { g[$2] = $8 }
				END { printf "%-7s %-5s %9s %9s\n", f, w, g["uniform"], g["zipf.99"] }'
	done
done

echo
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# cost TABLE_ARGS...: callgrind over a steering-on YCSB-A uniform run
cost() {
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
		--toggle-collect=clover_process "$bench" "$@" --cost 1000 \
		>"$out/run.txt" 2>"$out/vg.txt"
	cat "$out/run.txt"
	frames=$(sed -n 's/^frames \([0-9]*\) .*/\1/p' "$out/run.txt")
	ir=$(callgrind_annotate "$out/cg.out" 2>/dev/null |
		sed -n 's/^ *\([0-9,]*\) *([^)]*) *PROGRAM TOTALS.*/\1/p' | tr -d ,)
	echo "instructions in clover_process (inclusive): $ir over $frames frames"
	awk -v ir="$ir" -v n="$frames" \
		'BEGIN { printf "=> %.1f instructions per frame (average over all frames)\n", ir / n }'
	rm -f "$out/cg.out"
}
echo "== per-packet cost (callgrind, steering on, YCSB-A uniform, 16 clients, 64 keys)"
echo "-- read table keys x 3, 1-way"
cost
echo "-- read table keys x 64, 8-way"
cost -f 64 -w 8
