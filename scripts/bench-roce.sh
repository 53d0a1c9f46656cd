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
# Then the ICRC implementations (lib/roce/roce_icrc_burst.c), one frame at
# a time against bursts of BURST, per path: instructions per frame under
# callgrind (valgrind has no AVX-512, so not that path), and ns per frame
# natively with every (path, mode) pair timed in turn within each of
# RUNS_PATHS runs, so that their ratios share the machine's load.
#
# Usage: scripts/bench-roce.sh [BUILD_DIR]        (default: build)
# Env:   PCAP (default ../shared/captures/rcuckoo-connectx.pcap next to the
#        repository), FRAME (14), N (20000), RUNS (9), ITERS (2000000),
#        BURST (32), RUNS_PATHS (21), ITERS_PATHS (64000)
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
burst=${BURST:-32}
runs_paths=${RUNS_PATHS:-21}
iters_paths=${ITERS_PATHS:-64000}

[ -x "$bench" ] || { echo "no $bench (ninja -C $build app/tools/roce_bench)" >&2; exit 2; }
[ -r "$pcap" ] || { echo "no capture $pcap (set PCAP=)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Ir of one callgrind run
ir() { # mode iters [path]
	valgrind --tool=callgrind --collect-atstart=no \
		--callgrind-out-file="$tmp/cg.$1.$2" \
		"$bench" --pcap "$pcap" --frame "$frame" --mode "$1" \
		--iters "$2" --burst "$burst" ${3:+--path "$3"} \
		>/dev/null 2>"$tmp/err.$1.$2" || return 1
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
	a=$(ir $m "$n") || { cat "$tmp/err.$m.$n" >&2; exit 1; }
	b=$(ir $m $((2 * n))) || { cat "$tmp/err.$m.$((2 * n))" >&2; exit 1; }
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
	--iters "$iters" 2>/dev/null |
	grep -E '^mode=(empty|copy|parse|verify|rewrite) ' | tee "$tmp/native"
awk '
	{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	  ns[v["mode"]] = v["ns_per_pkt_median"] }
	END {
		printf "copy baseline %.2f ns; parse %.2f ns; verify %.2f ns; " \
		       "verify+rewrite %.2f ns (minus copy: %.2f ns, %.1fx the copy)\n",
		       ns["copy"], ns["parse"], ns["verify"], ns["rewrite"],
		       ns["rewrite"] - ns["copy"], ns["rewrite"] / ns["copy"]
	}' "$tmp/native"

# ---------------------------------------------------------------------------
# The ICRC paths: one frame at a time against bursts
paths="rte_net_crc fold-sse fold-avx mb4-sse mb4-avx avx512-vpclmulqdq"
modes="compute cburst rloop rburst resign patch"
echo
echo "ICRC per path, bursts of $burst; instructions per frame (callgrind, N=$n vs 2N):"
echo "  compute: one roce_icrc_compute   cburst: roce_icrc_compute_burst"
echo "  rloop:   verify + CAS->WRITE + re-sign, one frame at a time (roce_icrc_verify,"
echo "           roce_atomic_to_write)"
echo "  rburst:  the same staged: roce_icrc_verify_burst, roce_atomic_to_write_defer each,"
echo "           roce_icrc_sign_burst"
echo "  resign:  change the va, roce_icrc_update   patch: the same with roce_icrc_patch"
printf '  %-18s' path
for m in $modes; do printf '%8s' "$m"; done
echo
for p in $paths; do
	printf '  %-18s' "$p"
	for m in $modes; do
		if a=$(ir "$m" "$n" "$p") && b=$(ir "$m" $((2 * n)) "$p"); then
			printf '%8d' $(( (b - a) / n ))
		else
			printf '%8s' n/a
		fi
	done
	echo
done
echo "  (n/a: not on this CPU as valgrind presents it)"

echo
echo "ns per frame natively, each (path, mode) pair once per run, $runs_paths runs of $iters_paths frames:"
"$bench" --pcap "$pcap" --frame "$frame" --mode all --path all --burst "$burst" \
	--runs "$runs_paths" --iters "$iters_paths" 2>/dev/null >"$tmp/paths"
awk -v modes="$modes" '
	{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	  med[v["path"], v["mode"]] = v["ns_per_pkt_median"]
	  min[v["path"], v["mode"]] = v["ns_per_pkt_min"]
	  if (!(v["path"] in seen)) { seen[v["path"]] = 1; order[np++] = v["path"] } }
	END {
		nm = split(modes, m, " ")
		printf "  %-18s", "median (min)"
		for (j = 1; j <= nm; j++) printf "%15s", m[j]
		printf "\n"
		for (i = 0; i < np; i++) {
			p = order[i]
			printf "  %-18s", p
			for (j = 1; j <= nm; j++)
				printf "%15s", sprintf("%.2f (%.2f)", med[p, m[j]], min[p, m[j]])
			printf "\n"
		}
		# on a shared machine the runs of a pair either share the CPU or do
		# not, and the medians jump between the two; the fastest run is
		# the least disturbed one, so the ratios are of minima (and of
		# medians, for comparison)
		b = "fold-avx"
		if (!((b, "compute") in min)) exit
		printf "ratios, min (median): burst/single per path; against one frame at a time on %s\n", b
		for (i = 0; i < np; i++) {
			p = order[i]
			printf "  %-18s cburst/compute %.2f (%.2f)  rburst/rloop %.2f (%.2f)" \
			       "  patch/resign %.2f (%.2f)  cburst/%s-compute %.2f (%.2f)" \
			       "  rburst/%s-rloop %.2f (%.2f)\n", p,
			       min[p, "cburst"] / min[p, "compute"],
			       med[p, "cburst"] / med[p, "compute"],
			       min[p, "rburst"] / min[p, "rloop"],
			       med[p, "rburst"] / med[p, "rloop"],
			       min[p, "patch"] / min[p, "resign"],
			       med[p, "patch"] / med[p, "resign"],
			       b, min[p, "cburst"] / min[b, "compute"],
			       med[p, "cburst"] / med[b, "compute"],
			       b, min[p, "rburst"] / min[b, "rloop"],
			       med[p, "rburst"] / med[b, "rloop"]
		}
	}' "$tmp/paths"
