#!/usr/bin/env bash
# bench-passthrough.sh — swordd pass-through throughput vs dpdk-testpmd
# io-forwarding on the same in-memory ports, in the same run (SPEC §4: whole
# daemon within 80% of testpmd, and scaling with cores).
#
#   scripts/bench-passthrough.sh [--build DIR] [--runs N] [--seconds S]
#                                [--warmup S] [--workers "1 2"]
#                                [--ports "null pcap1 pcap2"] [--capture FILE]
#                                [--modes "io"] [--no-huge] [--reserve-hugepages]
#                                [--baseline SWORDD] [--locks]
#
# Port setups (swordd: no config = built-in defaults, nothing managed):
#   null   one net_null port, hairpin (testpmd --port-topology=loop); frames
#          are 64 bytes of nothing: the non-RoCE path
#   pcap1  one net_pcap port replaying --capture (default: the Clover
#          capture, all RoCEv2) with infinite_rx=1, hairpin; tx dropped by the PMD
#   pcap2  two such ports, two-port mode (testpmd paired topology)
# --modes: testpmd forwarding modes to compare with (default io, the SPEC's
# baseline; io never touches packet data, while swordd parses every header:
# add macswap for a baseline that also reads and writes each frame).
# --baseline SWORDD: also measure another swordd binary (e.g. a copy of the
# previous build) in the same runs, as "swordd-base": before/after numbers
# taken under the same conditions.
# --locks: the lock path.  The capture becomes a generated one
# (scripts/gen-lock-pcap.py: 4 connections toggling lock words with CAS,
# each followed by the server's answer) and a third program is measured on
# the pcap1 setup, "swordd-locks": swordd with conf/swordd.conf and
# atomic_replacement on, so every CAS is decided, rewritten to a WRITE and
# re-signed, and every ACK becomes an ATOMIC ACK (its granted/rewritten
# counters are printed, so a run that rewrote nothing shows).  Compare it
# with plain swordd (pass-through of the same frames) and testpmd.  With
# --baseline too, the baseline binary runs the lock path as well
# ("swordd-locks-base"): before/after of the lock path in the same runs.
# Workers W: swordd --workers W; testpmd --nb-cores W with W queues per port
# where the PMD has them (net_pcap infinite_rx: 1 queue per port).  Both get
# the same lcores (main + W), descriptors (1024), burst (32).
#
# Rate: sum of opackets over all ports from /ethdev/stats (DPDK telemetry,
# the same query for both programs) at the end of the warmup and S seconds
# later: start-up is excluded.  Over the same interval the program's CPU time
# (user+system, all threads, /proc/PID/stat) gives Mpps per CPU-second: on a
# machine shared with other work the wall-clock rate mostly measures how much
# CPU the program got, the per-CPU-second rate how well it used it.  Each run
# measures swordd and testpmd back to back (alternating which goes first);
# the report gives per-run rates, medians and the ratios swordd/testpmd.
# Needs root.  It is a benchmark, not a test: no pass/fail.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
runs=5
seconds=5
warmup=2
workers="1 2"
ports="null pcap1 pcap2"
capture="$top/../shared/captures/clover-1thread-100pkt.pcap"
huge=auto
reserve=0
modes=io
baseline=""
locks=0
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift ;;
	--runs) runs=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--workers) workers=$2; shift ;;
	--ports) ports=$2; shift ;;
	--capture) capture=$2; shift ;;
	--modes) modes=$2; shift ;;
	--baseline) baseline=$(readlink -f "$2"); shift ;;
	--no-huge) huge=no ;;
	--locks) locks=1 ;;
	--reserve-hugepages) reserve=1 ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "bench-passthrough.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench-passthrough.sh: run as root" >&2; exit 1; }
swordd="$build/app/swordd/swordd"
[ -x "$swordd" ] || { echo "bench-passthrough.sh: no $swordd (build first)" >&2; exit 1; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "bench-passthrough.sh: no $baseline" >&2; exit 1; }
command -v dpdk-testpmd >/dev/null || { echo "bench-passthrough.sh: dpdk-testpmd not found (apt-get install dpdk)" >&2; exit 1; }

if [ "$reserve" -eq 1 ]; then
	cur=$(cat /proc/sys/vm/nr_hugepages)
	[ "$cur" -ge 512 ] || echo 512 >/proc/sys/vm/nr_hugepages
	mkdir -p /dev/hugepages
	grep -q '/dev/hugepages hugetlbfs' /proc/mounts || mount -t hugetlbfs none /dev/hugepages
fi
lockpcap=""
if [ "$locks" -eq 1 ]; then
	lockpcap=$(mktemp /tmp/sword-locks-XXXXXX.pcap)
	trap 'rm -f "$lockpcap"' EXIT
	/usr/bin/python3 "$top/scripts/gen-lock-pcap.py" "$lockpcap" >/dev/null
	capture=$lockpcap
	case " $ports " in *" pcap1 "*) ;; *) ports="$ports pcap1" ;; esac
fi
if [ "$huge" = auto ]; then
	free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
	if [ "${free:-0}" -ge 256 ] && grep -q hugetlbfs /proc/mounts; then huge=yes; else huge=no; fi
fi

/usr/bin/python3 "$top/scripts/bench_passthrough.py" "$swordd" "$runs" "$seconds" "$warmup" "$workers" "$ports" \
	"$(readlink -f "$capture")" "$huge" "$modes" "$baseline" "$locks" "$top/conf/swordd.conf"
