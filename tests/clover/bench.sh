#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench.sh — Clover steering benchmark (not a test).
#
#   tests/clover/bench.sh BUILD_DIR [clients keys ops_per_client]
#
# 1. Retries and round trips per operation, steering off vs on, in one run:
#    YCSB-A-like (50% PUT) and write-only, uniform and Zipf(0.99) keys, over
#    the closed loop of clover_sim (16 clients, 64 keys, 2000 ops each by
#    default; real RoCEv2 frames, responder with real memory).
# 2. Per-packet cost of lib/clover in instructions: callgrind over a
#    steering-on YCSB-A run, instructions inclusive in clover_process divided
#    by the frames it saw (requests and responses).  Build with
#    --buildtype=release (or debugoptimized) for numbers that mean anything.
set -eu
build=${1:?usage: bench.sh BUILD_DIR [clients keys ops]}
shift
bench=$build/tests/clover/clover_bench
[ -x "$bench" ] || { echo "no $bench: ninja -C $build tests/clover/clover_bench" >&2; exit 1; }

echo "== retries / round trips per op (closed loop)"
"$bench" "$@" 2>/dev/null

echo
echo "== per-packet cost (callgrind, steering on, YCSB-A uniform, 16 clients)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
	--toggle-collect=clover_process "$bench" --cost 1000 >"$out/run.txt" 2>"$out/vg.txt"
cat "$out/run.txt"
frames=$(sed -n 's/^frames \([0-9]*\) .*/\1/p' "$out/run.txt")
ir=$(callgrind_annotate "$out/cg.out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) *([^)]*) *PROGRAM TOTALS.*/\1/p' | tr -d ,)
echo "instructions in clover_process (inclusive): $ir over $frames frames"
awk -v ir="$ir" -v n="$frames" 'BEGIN { printf "=> %.1f instructions per frame (average over all frames)\n", ir / n }'
echo "top functions (inclusive):"
callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null | grep -E "clover|roce|crc" | head -8
