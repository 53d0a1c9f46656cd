#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang-14, ASan+UBSan, in
# build-fuzz/) and runs them: each first replays its committed corpus
# (tests/fuzz/corpus/NAME: seeds and the regression inputs of past
# findings), then fuzzes for its budget.  Fails on any crash, sanitizer
# report, oracle failure or timeout, and prints how to reproduce it.
# Ends with one line per harness: executions, exec/s, libFuzzer's
# coverage (cov = edges, ft = features) and corpus size.
#
#   scripts/fuzz.sh [--short] [--time SECS] [--runs N] [--build DIR]
#                   [--keep-corpus DIR] [--jobs N] [--coverage] [--fast]
#                   [NAME...]
#
# --short             CI budget: every harness FUZZ_SHORT_SECS (default 45) s
# --time SECS         every harness this long (default 600)
# --runs N            every harness stops after N executions (with --time as
#                     a bound too, if given)
# --build DIR         the fuzz build directory (default build-fuzz/)
# --keep-corpus DIR   keep the grown corpora in DIR/NAME (default: a
#                     temporary directory, removed; the committed corpus is
#                     never written to)
# --jobs N            run N harnesses at once (default 1)
# --coverage          afterwards, replay each corpus (grown and committed)
#                     through a source-coverage build (build-fuzz-cov/) and
#                     print llvm-cov's line and branch coverage per library file
# --fast              fuzz without ASan and UBSan (build-fuzz-fast/, about
#                     2.7 times the executions per second: for long
#                     campaigns), then replay each grown corpus through the
#                     sanitized build; the oracles judge in both
# NAME                parse, serializer, remap, clover, config, closed
#                     (default: these; under --short closed replays its
#                     corpus only, judged: it is not yet clean in 45 s,
#                     tests/fuzz/findings/closed/README.md)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bdir="$top/build-fuzz"
secs=600
runs=0
keep=""
jobs=1
coverage=0
short=0
fast=0
names=()
while [ $# -gt 0 ]; do
	case "$1" in
	--short) secs=${FUZZ_SHORT_SECS:-45}; short=1 ;;
	--time) secs=$2; shift ;;
	--runs) runs=$2; shift ;;
	--build) bdir=$2; shift ;;
	--keep-corpus) keep=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--coverage) coverage=1 ;;
	--fast) fast=1 ;;
	-h|--help) sed -n '2,33p' "$0"; exit 0 ;;
	-*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
	*) names+=("$1") ;;
	esac
	shift
done
[ ${#names[@]} -gt 0 ] || names=(parse serializer remap clover config closed)

cc=$(command -v clang-14 || true)
if [ -z "$cc" ]; then
	echo "fuzz.sh: clang-14 not found (scripts/setup.sh installs clang-14 and libfuzzer-14-dev)" >&2
	exit 1
fi

# Build (one builder at a time: other runs may share build-fuzz/).
build() { # dir [meson options]
	local dir=$1; shift
	mkdir -p "$dir"
	(
		flock 9
		if [ ! -f "$dir/build.ninja" ]; then
			CC="$cc" meson setup "$dir" "$top" -Dfuzz=true "$@" \
				>"$dir/setup.log" 2>&1 || { cat "$dir/setup.log"; exit 1; }
		fi
		ninja -C "$dir" >/dev/null || ninja -C "$dir"
	) 9<"$dir" || { echo "fuzz.sh: building $dir failed" >&2; exit 1; }
}
build "$bdir" || exit 1
sandir="$bdir"
if [ "$fast" -eq 1 ]; then
	bdir="${bdir%/}-fast"
	build "$bdir" -Dfuzz_sanitize=false || exit 1
fi

work=$(mktemp -d /tmp/sword-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

run_one() { # name -> writes $work/name.log, $work/name.rc
	local name=$1 bin="$bdir/tests/fuzz/fuzz_$1" seeds="$top/tests/fuzz/corpus/$1"
	local corpus="$work/corpus-$name" args=()

	[ -n "$keep" ] && corpus="$keep/$name"
	mkdir -p "$corpus" "$work/artifacts"
	args=(-max_total_time="$secs" -timeout=60 -rss_limit_mb=2048
	      -print_final_stats=1 -artifact_prefix="$work/artifacts/$name-")
	[ "$runs" -gt 0 ] && args+=(-runs="$runs")
	# scripts of at most 128 steps: longer ones mostly repeat themselves
	# and run slower; frames and configs get libFuzzer's default 4096
	case "$name" in
	serializer|remap|clover) args+=(-max_len=1026) ;;
	# a config byte and 128 steps of 4
	closed) args+=(-max_len=513)
		# the closed loop's regressions (fixed findings), judged, and
		# its liveness too (O5: stuck with swordd, quiescent without;
		# every input of the corpus passes it, campaigns count it);
		# fuzzing it finds open ones within minutes
		[ "$short" -eq 1 ] && args+=(-runs=0) && export FUZZ_CLOSED_LIVE=1 ;;
	esac
	[ -f "$top/tests/fuzz/$name.dict" ] && args+=(-dict="$top/tests/fuzz/$name.dict")
	"$bin" "${args[@]}" "$corpus" "$seeds" >"$work/$name.log" 2>&1
	echo $? >"$work/$name.rc"
}

running=0
for n in "${names[@]}"; do
	if [ ! -x "$bdir/tests/fuzz/fuzz_$n" ]; then
		echo "fuzz.sh: no harness $n" >&2
		exit 2
	fi
	echo "fuzz.sh: $n: ${secs}s$([ "$runs" -gt 0 ] && echo ", at most $runs runs")"
	run_one "$n" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
printf '%-11s %12s %8s %7s %7s %8s  %s\n' harness execs exec/s cov ft corpus result
for n in "${names[@]}"; do
	log="$work/$n.log"
	rc=$(cat "$work/$n.rc" 2>/dev/null || echo 99)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
	cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	result=ok
	if [ "$rc" -ne 0 ]; then
		result="FAILED (exit $rc)"
		failed=$((failed + 1))
	fi
	printf '%-11s %12s %8s %7s %7s %8s  %s\n' "$n" "${execs:-?}" "${eps:-?}" \
		"${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
# --fast: what the unsanitized campaign grew, through ASan and UBSan
if [ "$fast" -eq 1 ]; then
	for n in "${names[@]}"; do
		[ "$(cat "$work/$n.rc" 2>/dev/null || echo 99)" -eq 0 ] || continue
		corpus="$work/corpus-$n"
		[ -n "$keep" ] && corpus="$keep/$n"
		if ! "$sandir/tests/fuzz/fuzz_$n" -runs=0 -timeout=60 -rss_limit_mb=2048 \
			-artifact_prefix="$work/artifacts/$n-" "$corpus" \
			>"$work/$n-sanitized.log" 2>&1; then
			echo "fuzz.sh: $n: the corpus fails under ASan/UBSan" >&2
			tail -40 "$work/$n-sanitized.log" >&2
			failed=$((failed + 1))
		else
			echo "fuzz.sh: $n: corpus ($(ls "$corpus" | wc -l) inputs) replayed under ASan/UBSan: ok"
		fi
	done
fi
for n in "${names[@]}"; do
	rc=$(cat "$work/$n.rc" 2>/dev/null || echo 99)
	[ "$rc" -eq 0 ] && continue
	echo "== $n: last lines of its log"
	tail -60 "$work/$n.log"
	for a in "$work/artifacts/$n-"*; do
		[ -e "$a" ] || continue
		mkdir -p "$bdir/artifacts"
		cp "$a" "$bdir/artifacts/"
		echo "== reproduce: $bdir/tests/fuzz/fuzz_$n $bdir/artifacts/$(basename "$a")"
	done
done

# Source coverage of the libraries by everything the corpora reach.
if [ "$coverage" -eq 1 ]; then
	cdir="${bdir%/}-cov"
	prof="-fprofile-instr-generate -fcoverage-mapping"
	build "$cdir" -Dc_args="$prof" -Dc_link_args="$prof" || exit 1
	objs=()
	for n in "${names[@]}"; do
		corpus="$work/corpus-$n"
		[ -n "$keep" ] && corpus="$keep/$n"
		LLVM_PROFILE_FILE="$work/cov-$n.profraw" "$cdir/tests/fuzz/fuzz_$n" \
			-runs=0 "$corpus" "$top/tests/fuzz/corpus/$n" >"$work/cov-$n.log" 2>&1
		objs+=(-object "$cdir/tests/fuzz/fuzz_$n")
	done
	llvm-profdata-14 merge -o "$work/cov.profdata" "$work"/cov-*.profraw &&
	# the libraries only: not DPDK's headers, not the harnesses
	llvm-cov-14 report "${objs[@]:1}" -instr-profile="$work/cov.profdata" \
		-ignore-filename-regex='^/usr/|/tests/|\.h$'

fi
[ "$failed" -eq 0 ]
