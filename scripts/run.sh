#!/usr/bin/env bash
# run.sh — the sword demo: two network namespaces joined through swordd.
#
#   netns client (198.18.0.1) -- tap -- swordd two-port -- tap -- netns server (198.18.0.2)
#
# As root on a fresh Debian 12 machine:  scripts/run.sh
# It runs scripts/setup.sh (packages, hugepages, build into build/), creates
# the two namespaces, starts swordd with conf/swordd.conf (two-port over
# net_tap, a stats line every second), and generates demo traffic: ping, and
# a small RoCEv2 requester in the client namespace talking to an emulated
# memory server in the server namespace (CAS lock / WRITE / READ / release
# WRITE, frames built by scapy with valid ICRCs; 198.18.0.2 is server.mem0 in
# conf/swordd.conf, so its traffic is managed).  Ctrl-C (or --duration)
# stops everything, prints the final counters, and removes all it created.
#
# Options:
#   --duration SEC     stop after SEC seconds (default: run until Ctrl-C)
#   --no-setup         do not run scripts/setup.sh (use an existing build)
#   --build DIR        build directory (default: build/)
#   --config FILE      swordd configuration (default: conf/swordd.conf)
#   --rate N           RoCE requests per second from the client (default 10)
#   --stats-json FILE  keep swordd's final counters (JSON) in FILE
#   -h, --help
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
config="$top/conf/swordd.conf"
duration=0
setup=1
rate=10
stats_json=""

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) duration=$2; shift ;;
	--no-setup) setup=0 ;;
	--build) build=$2; shift ;;
	--config) config=$2; shift ;;
	--rate) rate=$2; shift ;;
	--stats-json) stats_json=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case "$duration" in ''|*[!0-9]*) echo "run.sh: --duration wants whole seconds" >&2; exit 2 ;; esac

if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: must run as root (network namespaces, tap devices, DPDK)" >&2
	exit 1
fi

log() { echo "run.sh: $*"; }

if [ "$setup" -eq 1 ]; then
	"$top/scripts/setup.sh" --build "$build"
fi
build=$(cd "$build" 2>/dev/null && pwd) || { echo "run.sh: no build directory $build (run without --no-setup, or pass --build)" >&2; exit 1; }
swordd="$build/app/swordd/swordd"
[ -x "$swordd" ] || { echo "run.sh: $swordd not built (run scripts/setup.sh)" >&2; exit 1; }
[ -r "$config" ] || { echo "run.sh: cannot read $config" >&2; exit 1; }

# shellcheck source=scripts/netns.sh
. "$top/scripts/netns.sh"

# Everything we create is named after our pid: several demos (or the test
# suite) can run side by side.
id=$$
ns_c="sword-client-$id"
ns_s="sword-server-$id"
if_c="swc$id"
if_s="sws$id"
ip_c=198.18.0.1
ip_s=198.18.0.2
prefix="sword-demo-$id"
work=$(mktemp -d "/tmp/sword-demo-$id.XXXXXX")
swordd_pid=""
bg_pids=()
cleaned=0

# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
	local rc=$?
	[ "$cleaned" -eq 0 ] || return 0
	cleaned=1
	trap '' INT TERM
	# traffic first, so the final counters are quiet (bounded: nothing
	# may keep us from stopping swordd)
	for p in "${bg_pids[@]}"; do
		kill -INT "$p" 2>/dev/null || true
	done
	for p in "${bg_pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ -n "$swordd_pid" ] && kill -0 "$swordd_pid" 2>/dev/null; then
		log "stopping swordd (SIGTERM)"
		kill -TERM "$swordd_pid" 2>/dev/null || true
		for _ in $(seq 200); do
			kill -0 "$swordd_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$swordd_pid" 2>/dev/null; then
			log "swordd did not stop, killing it"
			kill -KILL "$swordd_pid" 2>/dev/null || true
			rc=1
		fi
		wait "$swordd_pid" 2>/dev/null || rc=$?
		[ "$rc" -eq 0 ] || { log "swordd exited $rc; its log:"; tail -20 "$work/swordd.log" >&2; }
	fi
	[ -s "$work/server.log" ] && tail -1 "$work/server.log" | sed 's/^/run.sh: /'
	[ -s "$work/ping.log" ] && grep -E 'packets transmitted' "$work/ping.log" | sed 's/^/run.sh: ping: /'
	if [ -n "$stats_json" ] && [ -f "$work/stats.json" ]; then
		cp "$work/stats.json" "$stats_json"
	fi
	netns_delete "$ns_c"
	netns_delete "$ns_s"
	rm -rf "$work" "/var/run/dpdk/$prefix"
	log "cleaned up (namespaces $ns_c $ns_s, taps $if_c $if_s)"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# The demo endpoints (only what a demo needs: one RC connection, no
# retransmission; real RDMA endpoints come with the rxe tests).
cat >"$work/endpoint.py" <<'EOF'
import os, select, signal, socket, struct, sys, time
role, ifname, my_mac, peer_mac, my_ip, peer_ip, helpers, rate = sys.argv[1:9]
sys.path.insert(0, helpers)
import roce_scapy as rs

stop = False
def on_signal(*_):
    global stop
    stop = True
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)

raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
raw.bind((ifname, 0))
# Hold UDP/4791 open so the kernel drops our frames quietly instead of
# answering them with ICMP port unreachable.
hold = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
hold.bind((my_ip, 4791))
peer = socket.inet_aton(peer_ip)
CLIENT_QP, SERVER_QP = 0x11, 0x22
LOCK, DATA, RKEY = 0x10000000, 0x10001000, 0x1234
kw = dict(src_mac=my_mac, dst_mac=peer_mac, src_ip=my_ip, dst_ip=peer_ip,
          qpn=SERVER_QP if role == "client" else CLIENT_QP)

def roce_in(f):
    """(opcode, psn, frame) of a RoCEv2 frame from the peer, else None."""
    if len(f) < 58 or f[12:14] != b"\x08\x00" or f[23] != 17 or f[26:30] != peer:
        return None
    if struct.unpack_from("!H", f, 36)[0] != 4791:
        return None
    return f[42], struct.unpack_from("!I", f, 50)[0] & 0xffffff, f

def send(opcode, **k):
    global stop
    try:
        raw.send(rs.make_frame(opcode, **kw, **k))
    except OSError:     # the tap went away: swordd stopped
        stop = True

def server():
    mem, msn, served = {}, 0, 0
    while not stop:
        if not select.select([raw], [], [], 0.2)[0]:
            continue
        r = roce_in(raw.recv(4096))
        if r is None:
            continue
        op, psn, f = r
        va = struct.unpack_from("!Q", f, 54)[0]
        if op == 0x13:                                   # CAS
            swap, cmp_ = struct.unpack_from("!QQ", f, 66)
            old = mem.get(va, 0)
            if old == cmp_:
                mem[va] = swap
            msn += 1
            send(0x12, psn=psn, msn=msn, orig=old)
        elif op == 0x0A:                                 # WRITE_ONLY
            data = f[70:len(f) - 4]
            if len(data) >= 8:
                mem[va] = struct.unpack_from("!Q", data)[0]
            msn += 1
            if f[50] & 0x80:
                send(0x11, psn=psn, msn=msn)
        elif op == 0x0C:                                 # READ
            dma_len = min(struct.unpack_from("!I", f, 66)[0], 1024)
            msn += 1
            send(0x10, psn=psn, msn=msn, payload=struct.pack("!Q", mem.get(va, 0)).ljust(dma_len, b"\0"))
        else:
            continue
        served += 1
        if served % 50 == 0:
            print("server: served %d requests" % served, flush=True)
    print("server: served %d requests in total" % served, flush=True)

def client():
    psn, sent, got, acquired = 0, 0, {}, 0
    step, period = 0, 1.0 / max(1, int(rate))
    last_report = next_send = time.monotonic()
    while not stop:
        now = time.monotonic()
        if now >= next_send:
            next_send += period
            if step == 0:
                send(0x13, psn=psn, va=LOCK, rkey=RKEY, compare=0, swap=1)
            elif step == 1:
                send(0x0A, psn=psn, va=DATA, rkey=RKEY, payload=struct.pack("!Q", sent) * 8, ackreq=True)
            elif step == 2:
                send(0x0C, psn=psn, va=DATA, rkey=RKEY, dma_len=64)
            else:
                send(0x0A, psn=psn, va=LOCK, rkey=RKEY, payload=bytes(8), ackreq=True)
            step, psn, sent = (step + 1) % 4, (psn + 1) & 0xffffff, sent + 1
        if select.select([raw], [], [], max(0, min(next_send - time.monotonic(), 0.2)))[0]:
            r = roce_in(raw.recv(4096))
            if r is not None:
                got[r[0]] = got.get(r[0], 0) + 1
                if r[0] == 0x12 and struct.unpack_from("!Q", r[2], 58)[0] == 0:
                    acquired += 1
        if now - last_report >= 5:
            last_report = now
            print("client: sent %d requests, %d responses" % (sent, sum(got.values())), flush=True)
    print("client: sent %d requests, %d responses (%d ATOMIC ACK, %d locks acquired, %d ACK, %d READ RESPONSE)"
          % (sent, sum(got.values()), got.get(0x12, 0), acquired, got.get(0x11, 0), got.get(0x10, 0)), flush=True)

server() if role == "server" else client()
EOF

# EAL memory: hugepages when setup.sh reserved some, else plain memory.
huge_free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${huge_free:-0}" -ge 256 ] && grep -q hugetlbfs /proc/mounts; then
	eal_mem=(--in-memory)
else
	eal_mem=(--no-huge -m 512 --no-shconf)
fi

netns_create "$ns_c"
netns_create "$ns_s"
log "namespaces $ns_c ($ip_c) and $ns_s ($ip_s); swordd config $config"

cmd=("$swordd" --no-pci "${eal_mem[@]}" --file-prefix "$prefix"
	--vdev "net_tap0,iface=$if_c" --vdev "net_tap1,iface=$if_s"
	-- -c "$config" --mode two-port --stats-interval 1 --stats-json "$work/stats.json")
log "${cmd[*]}"
# stdout (stats lines, final counters) to the terminal; EAL/PMD logs to a
# file.  Its own session: Ctrl-C reaches only us, and cleanup stops the
# traffic before swordd, so the final counters add up.
setsid "${cmd[@]}" 2>"$work/swordd.log" &
swordd_pid=$!

if ! tap_wait_up "$if_c" 60 "$swordd_pid" || ! tap_wait_up "$if_s" 60 "$swordd_pid"; then
	log "swordd did not start its ports; its log:"
	tail -20 "$work/swordd.log" >&2
	exit 1
fi
iface_to_netns "$if_c" "$ns_c" "$ip_c/24"
iface_to_netns "$if_s" "$ns_s" "$ip_s/24"
mac_c=$(iface_mac "$ns_c" "$if_c")
mac_s=$(iface_mac "$ns_s" "$if_s")

py=/usr/bin/python3
helpers="$top/tests/helpers"
ip netns exec "$ns_s" "$py" "$work/endpoint.py" server "$if_s" "$mac_s" "$mac_c" "$ip_s" "$ip_c" "$helpers" 0 \
	>"$work/server.log" 2>&1 &
bg_pids+=($!)
sleep 1 # let the server open its socket before the first request
ip netns exec "$ns_c" "$py" "$work/endpoint.py" client "$if_c" "$mac_c" "$mac_s" "$ip_c" "$ip_s" "$helpers" "$rate" \
	> >(tee "$work/client.log") 2>&1 &
bg_pids+=($!)
if command -v ping >/dev/null; then
	ip netns exec "$ns_c" ping -i 0.5 "$ip_s" >"$work/ping.log" 2>&1 &
	bg_pids+=($!)
else
	log "ping not installed (apt-get install iputils-ping): no ICMP traffic"
fi

if [ "$duration" -gt 0 ]; then
	log "running for ${duration}s"
	sleep "$duration" &
	wait $! || true
else
	log "running; Ctrl-C to stop"
	if wait "$swordd_pid"; then rc=0; else rc=$?; fi
	swordd_pid=""
	log "swordd exited on its own (status $rc)"
	exit "$rc"
fi
exit 0
