#!/usr/bin/env bash
# demo.sh — contending Sherman-style lock clients through swordd, live.
#
#   netns client (198.18.0.1): N roce-peer clients (sherman-lock)
#        | tap
#   swordd two-port (conf generated: server.mem0 = 198.18.0.2, one lock region)
#        | tap
#   netns server (198.18.0.2): roce-peer memory server
#
# Runs the same load twice — swordd pass-through (atomic_replacement = off)
# and lock acceleration (atomic_replacement = on) — printing live progress
# every second (lock ops/s, retries, retransmissions, swordd managed frames
# and rewrites), then a summary comparing the two, with the checks the
# clients and the memory server make (violations, QP errors, per-lock
# counters in memory = critical sections completed).  If this swordd build
# has no atomic_replacement implementation yet, the second run says so (it
# then passes through too).  Everything it creates (namespaces, taps,
# processes, DPDK runtime files, temp files) is removed at exit, also on
# Ctrl-C.
#
# Options:
#   --duration SEC   seconds per run (default 10)
#   --clients N      contending client processes (default 4)
#   --qps N          QPs per client (default 1)
#   --locks N        lock words (default 4; fewer = more contention)
#   --mode M         both | passthrough | accel (default both)
#   --build DIR      meson build directory (default: build/)
#   --keep           keep the temp directory with logs and JSON summaries
#                    (a failed run always keeps it)
#   --pcap           swordd writes pcapng of what it receives and sends
#                    (<run>/swordd-in.pcapng, swordd-out.pcapng; implies --keep)
#   -h, --help
# Environment: DEMO_CLIENT_ARGS — extra roce-peer client options (e.g.
#   "--rto-us 2000" to provoke retransmissions, or fault injection).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
duration=10
clients=4
qps=1
locks=4
mode=both
keep=0
pcap=0

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) duration=$2; shift ;;
	--clients) clients=$2; shift ;;
	--qps) qps=$2; shift ;;
	--locks) locks=$2; shift ;;
	--mode) mode=$2; shift ;;
	--build) build=$2; shift ;;
	--keep) keep=1 ;;
	--pcap) pcap=1; keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "demo.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
for v in "$duration" "$clients" "$qps" "$locks"; do
	case "$v" in ''|*[!0-9]*|0) echo "demo.sh: --duration/--clients/--qps/--locks want positive integers" >&2; exit 2 ;; esac
done
case "$mode" in both|passthrough|accel) ;; *) echo "demo.sh: --mode both|passthrough|accel" >&2; exit 2 ;; esac
if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: must run as root (network namespaces, tap devices, AF_PACKET, DPDK)" >&2
	exit 1
fi
build=$(cd "$build" 2>/dev/null && pwd) || { echo "demo.sh: no build directory $build (pass --build DIR)" >&2; exit 1; }
swordd="$build/app/swordd/swordd"
peer="$build/app/roce-peer/roce-peer"
for b in "$swordd" "$peer"; do
	[ -x "$b" ] || { echo "demo.sh: $b not built (ninja -C $build)" >&2; exit 1; }
done

# shellcheck source=scripts/netns.sh
. "$top/scripts/netns.sh"

id=$$
ns_c="demoC$id" ns_s="demoS$id"
if_c="dmc$id" if_s="dms$id"
prefix="demo$id"
work=$(mktemp -d "/tmp/sword-demo-$id-XXXX")
pids=()

cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	pids=()
	netns_delete "$ns_c"
	netns_delete "$ns_s"
	ip link del "$if_c" 2>/dev/null || true
	ip link del "$if_s" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
	# a failed run keeps its logs: intermittent failures are rare to catch
	if [ "$keep" -eq 1 ] || [ "$rc" -ne 0 ]; then
		echo "demo.sh: logs kept in $work"
	else
		rm -rf "$work"
	fi
}
interrupted=0
trap cleanup EXIT
# Ctrl-C reaches the whole process group: the children stop by themselves,
# we notice at the next tick, say so, and exit (the EXIT trap cleans up).
trap 'interrupted=1' INT TERM
check_interrupt() {
	if [ "$interrupted" -eq 1 ]; then
		echo
		echo "demo.sh: interrupted, cleaning up"
		exit 130
	fi
}

tel() { # telemetry query -> "managed rewritten" (0 0 if not available)
	/usr/bin/python3 - "/var/run/dpdk/$prefix/dpdk_telemetry.v2" <<'EOF' 2>/dev/null || echo "0 0"
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(2)
s.connect(sys.argv[1])
s.recv(65536)
s.send(b"/sword/stats")
d = json.loads(s.recv(1 << 20).decode())["/sword/stats"]
print(d.get("managed_rx", 0), d.get("rewritten", 0))
EOF
}

# one run: $1 = on|off; leaves $work/<label>/*.json
run_once() {
	local accel=$1 label dir i t sw_pid srv_pid c_pids=() smac ops rate prev=0 retries retx viol
	label=$([ "$accel" = on ] && echo accel || echo passthrough)
	dir="$work/$label"
	mkdir -p "$dir"
	cat > "$dir/swordd.conf" <<EOF
[ports]
mode = two-port
client = 0
server = 1
mbufs = 8191
[cores]
workers = 1
[server.mem0]
ip = 198.18.0.2
[lock.table0]
server = mem0
base = 0x10000000
length = 0x10000
word_size = 8
[features]
atomic_replacement = $accel
EOF
	netns_create "$ns_c"
	netns_create "$ns_s"
	"$swordd" --no-pci --no-huge --no-shconf -m 512 --file-prefix "$prefix" -l 0-1 \
		--vdev "net_tap0,iface=$if_c" --vdev "net_tap1,iface=$if_s" \
		-- -c "$dir/swordd.conf" --stats-json "$dir/swordd.json" \
		$([ "$pcap" -eq 1 ] && echo "--pcap-in $dir/swordd-in.pcapng --pcap-out $dir/swordd-out.pcapng") \
		> "$dir/swordd.log" 2>&1 &
	sw_pid=$!
	pids+=("$sw_pid")
	if ! { tap_wait_up "$if_c" 30 "$sw_pid" && tap_wait_up "$if_s" 30 "$sw_pid"; }; then
		cat "$dir/swordd.log" >&2
		return 1
	fi
	iface_to_netns "$if_c" "$ns_c" 198.18.0.1/24
	iface_to_netns "$if_s" "$ns_s" 198.18.0.2/24
	smac=$(iface_mac "$ns_s" "$if_s")
	if [ "$accel" = on ] && grep -q "has no implementation" "$dir/swordd.log"; then
		echo "  (this swordd has no atomic_replacement implementation yet: it passes through)"
		echo noimpl > "$dir/noimpl"
	fi

	ip netns exec "$ns_s" "$peer" server --iface "$if_s" --ip 198.18.0.2 \
		--max-qps $((clients * qps + 16)) --dump-locks "$locks" --progress 0 \
		--json "$dir/server.json" --ready-file "$dir/server.ready" > "$dir/server.log" 2>&1 &
	srv_pid=$!
	pids+=("$srv_pid")
	for ((t = 0; t < 100; t++)); do [ -e "$dir/server.ready" ] && break; sleep 0.1; done
	[ -e "$dir/server.ready" ] || { cat "$dir/server.log" >&2; return 1; }

	for ((i = 0; i < clients; i++)); do
		ip netns exec "$ns_c" "$peer" client --iface "$if_c" --ip 198.18.0.1 \
			--server-ip 198.18.0.2 --server-mac "$smac" --client-id "$i" \
			--qps "$qps" --workload sherman-lock --locks "$locks" \
			--duration "$duration" --progress 1 --json "$dir/client$i.json" \
			${DEMO_CLIENT_ARGS:-} \
			> "$dir/client$i.log" 2>&1 &
		c_pids+=($!)
		pids+=($!)
	done

	printf '  %5s %12s %10s %10s %8s %12s %10s\n' time "lock ops/s" retries retx viol \
		"swordd mgd" rewrites
	for ((t = 1; ; t++)); do
		sleep 1 || true
		check_interrupt
		ops=0 retries=0 retx=0 viol=0
		for ((i = 0; i < clients; i++)); do
			# last progress line of each client: "... ops=N ops/s=R retries=N retx=N violations=N"
			read -r o r x v < <(grep -o 'ops=[0-9]* .*retries=[0-9]* retx=[0-9]* violations=[0-9]*' \
				"$dir/client$i.log" 2>/dev/null | tail -1 |
				sed 's/ops=\([0-9]*\) .*retries=\([0-9]*\) retx=\([0-9]*\) violations=\([0-9]*\)/\1 \2 \3 \4/') || true
			ops=$((ops + ${o:-0})) retries=$((retries + ${r:-0}))
			retx=$((retx + ${x:-0})) viol=$((viol + ${v:-0}))
		done
		rate=$((ops - prev)); prev=$ops
		read -r mgd rw < <(tel)
		printf '  %4ds %12d %10d %10d %8d %12s %10s\n' "$t" "$rate" "$retries" "$retx" "$viol" "$mgd" "$rw"
		local alive=0
		for i in "${c_pids[@]}"; do kill -0 "$i" 2>/dev/null && alive=1; done
		[ "$alive" -eq 1 ] || break
	done
	local crc=0
	for i in "${c_pids[@]}"; do wait "$i" || crc=1; done
	check_interrupt
	echo "$crc" > "$dir/clients.rc"
	kill -TERM "$srv_pid" 2>/dev/null || true
	wait "$srv_pid" || true
	kill -TERM "$sw_pid" 2>/dev/null || true
	wait "$sw_pid" || true
	pids=()
	netns_delete "$ns_c"
	netns_delete "$ns_s"
	rm -rf "/var/run/dpdk/$prefix"
}

echo "sword demo: $clients Sherman-style clients x $qps QP, $locks locks, ${duration}s per run"
echo "  client netns $ns_c (198.18.0.1) -- swordd two-port (net_tap) -- server netns $ns_s (198.18.0.2)"
runs=()
[ "$mode" = accel ] || runs+=(off)
[ "$mode" = passthrough ] || runs+=(on)
for a in "${runs[@]}"; do
	echo
	echo "== swordd $([ "$a" = on ] && echo "lock acceleration (atomic_replacement = on)" || echo "pass-through (atomic_replacement = off)")"
	run_once "$a"
done

echo
echo "== summary"
/usr/bin/python3 - "$work" "$locks" <<'EOF'
import json, os, sys
work, locks = sys.argv[1], int(sys.argv[2])
rows, ok = [], True
for label in ("passthrough", "accel"):
    d = os.path.join(work, label)
    if not os.path.isdir(d):
        continue
    cl = []
    for f in sorted(os.listdir(d)):
        if f.startswith("client") and f.endswith(".json"):
            cl.append(json.load(open(os.path.join(d, f))))
    srv = json.load(open(os.path.join(d, "server.json")))
    sw = json.load(open(os.path.join(d, "swordd.json"))) if os.path.exists(os.path.join(d, "swordd.json")) else {}
    ops = sum(c["ops"] for c in cl)
    secs = max(c["seconds"] for c in cl) if cl else 1
    cs = [sum(c["cs_per_lock"][i] for c in cl) for i in range(locks)]
    mem_ok = [r[1] for r in srv["records"][:locks]] == cs and all(w == 0 for w in srv["lock_words"][:locks])
    viol = sum(c["violations"] for c in cl)
    qpe = sum(c["qp_errors"] for c in cl)
    good = mem_ok and viol == 0 and qpe == 0 and not any(c["retry_storm"] for c in cl) \
        and open(os.path.join(d, "clients.rc")).read().strip() == "0"
    ok = ok and good
    name = label + (" (no impl: passed through)" if os.path.exists(os.path.join(d, "noimpl")) else "")
    rows.append((name, ops / secs, max((c["lat_p99_us"] for c in cl), default=0),
                 sorted(c["lat_p50_us"] for c in cl)[len(cl) // 2] if cl else 0,
                 sum(c["retries"] for c in cl), sum(c["retx_pkts"] for c in cl),
                 viol, qpe, sw.get("rewritten", 0), "ok" if good else "FAILED"))
print("  %-34s %11s %9s %9s %9s %6s %5s %6s %9s %s" % ("run", "lock ops/s", "p50 us", "p99 us*",
      "retries", "retx", "viol", "qperr", "rewrites", "checks"))
for r in rows:
    print("  %-34s %11.0f %9.0f %9.0f %9d %6d %5d %6d %9d %s" % (r[0], r[1], r[3], r[2], *r[4:]))
print("  (* worst client's p99; checks = no violation, no QP error, no retry storm,")
print("     every lock word free and every lock's counter in server memory equal")
print("     to the critical sections all clients completed)")
if len(rows) == 2 and rows[0][1] > 0:
    if "no impl" in rows[1][0]:
        print("  no acceleration ratio: this swordd passed the 'accel' run through too")
    else:
        print("  acceleration / pass-through: %.2fx lock ops/s" % (rows[1][1] / rows[0][1]))
sys.exit(0 if ok else 1)
EOF
