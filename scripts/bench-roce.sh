#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# bench-roce.sh — cost per packet of the lib/roce hot path (not a test).
#
# Why it exists: SPEC §4 budgets the CAS→WRITE path; this measures it on
# a real 86-byte RC CAS (frame 14 of rcuckoo-connectx.pcap) two ways:
#   1. instructions per packet under valgrind --tool=callgrind: each mode
#      runs N and 2N iterations with collection switched on only around the
#      loop (callgrind client requests), and the difference / N is reported,
#      so set-up is excluded twice over; plus callgrind's inclusive count of
#      the library functions themselves (no loop or call overhead).
#   2. ns per packet natively, median of R runs per mode, next to a baseline
#      measured in the same process (a plain copy of the frame).
#
# Usage: scripts/bench-roce.sh [BUILD_DIR]        (default: build)
# Env:   PCAP (default ../shared/captures/rcuckoo-connectx.pcap next to the
#        repository), FRAME (14), N (20000), RUNS (9), ITERS (2000000)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
bench=$build/app/tools/roce_bench
pcap=${PCAP:-$root/../shared/captures/rcuckoo-connectx.pcap}
frame=${FRAME:-14}
n=${N:-20000}
runs=${RUNS:-9}
iters=${ITERS:-2000000}

[ -x "$bench" ] || { echo "no $bench (ninja -C $build app/tools/roce_bench)" >&2; exit 2; }
[ -r "$pcap" ] || { echo "no capture $pcap (set PCAP=)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Ir of one callgrind run
ir() { # mode iters
	valgrind --tool=callgrind --collect-atstart=no \
		--callgrind-out-file="$tmp/cg.$1.$2" \
		"$bench" --pcap "$pcap" --frame "$frame" --mode "$1" \
		--iters "$2" >/dev/null 2>"$tmp/err.$1.$2" ||
		{ cat "$tmp/err.$1.$2" >&2; exit 1; }
	sed -n 's/^summary: *//p' "$tmp/cg.$1.$2"
}

# inclusive Ir of one function per call, from the 2N run
incl() { # mode function
	callgrind_annotate --inclusive=yes "$tmp/cg.$1.$((2 * n))" 2>/dev/null |
		awk -v f=":$2 " -v n="$((2 * n))" '
			index($0, f) { gsub(",", "", $1); printf "%.1f", $1 / n; exit }'
}

echo "frame $frame of $pcap; callgrind N=$n vs 2N"
for m in empty copy parse verify rewrite; do
	a=$(ir $m "$n")
	b=$(ir $m $((2 * n)))
	eval "ipp_$m=$(( (b - a) / n ))"
done
printf 'instructions per loop iteration: empty %d copy %d parse %d verify %d rewrite %d\n' \
	"$ipp_empty" "$ipp_copy" "$ipp_parse" "$ipp_verify" "$ipp_rewrite"
printf '(a) parse                                 %4d instr/pkt (loop - empty loop; target <= 60)\n' \
	$((ipp_parse - ipp_empty))
printf '    roce_parse inclusive                  %s\n' "$(incl parse roce_parse)"
printf '(b) parse + ICRC verify                   %4d instr/pkt\n' $((ipp_verify - ipp_empty))
# the CRC core: lib/roce's folding CRC, or rte_net_crc where it is not used
core=
for fn in icrc_fold_avx icrc_fold_sse rte_net_crc_calc; do
	v=$(incl verify $fn)
	[ -n "$v" ] && core="$core${core:+, }$fn $v"
done
printf '    roce_icrc_verify inclusive            %s (%s)\n' \
	"$(incl verify roce_icrc_verify)" "${core:-CRC core not seen}"
printf '(c) ICRC verify + CAS->WRITE + ICRC redo  %4d instr/pkt (rewrite - copy; target <= 250)\n' \
	$((ipp_rewrite - ipp_copy))
printf '    roce_icrc_verify %s + roce_atomic_to_write %s inclusive\n' \
	"$(incl rewrite roce_icrc_verify)" "$(incl rewrite roce_atomic_to_write)"

echo
echo "native, median of $runs runs of $iters packets (baseline: copy)"
"$bench" --pcap "$pcap" --frame "$frame" --mode all --runs "$runs" \
	--iters "$iters" 2>/dev/null | tee "$tmp/native"
awk '
	{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	  ns[v["mode"]] = v["ns_per_pkt_median"] }
	END {
		printf "copy baseline %.2f ns; parse %.2f ns; verify %.2f ns; " \
		       "verify+rewrite %.2f ns (minus copy: %.2f ns, %.1fx the copy)\n",
		       ns["copy"], ns["parse"], ns["verify"], ns["rewrite"],
		       ns["rewrite"] - ns["copy"], ns["rewrite"] / ns["copy"]
	}' "$tmp/native"
