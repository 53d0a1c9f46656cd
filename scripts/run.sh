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
swordd_pid=""   # swordd itself: where signals go
swordd_job=""   # our child running it (swordd, or setsid waiting for it)
bg_pids=()
cleaned=0

# Waiting, the robust way.  Bash's `wait` builtin, when a trapped SIGINT
# interrupts it, longjmps out of its waitpid loop: a child reaped in that
# same instant (Ctrl-C goes to the whole process group, so ping and the
# endpoints die together with the interrupt) loses its exit status, bash
# believes it still runs, and a later `wait PID` on it blocks in wait4()
# forever.  So nothing here ever sits in `wait` while a signal can come:
# we poll with kill -0 and short foreground sleeps (a trap runs at the
# next command, within ~0.2 s), and call `wait` only on a child already
# known to be gone, only to collect swordd's exit status.
# shellcheck disable=SC2317  # helpers used from the EXIT trap too
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
# shellcheck disable=SC2317
wait_gone() {   # PID TENTHS: wait up to TENTHS/10 s; 0 if gone
	local i
	for ((i = 0; i < $2; i++)); do
		alive "$1" || return 0
		sleep 0.1 || true
	done
	! alive "$1"
}

# shellcheck disable=SC2317
wait_file() {   # FILE TENTHS: wait up to TENTHS/10 s for FILE to have data
	local i
	for ((i = 0; i < $2; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1 || true
	done
	[ -s "$1" ]
}

# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
	local rc=$? p st
	[ "$cleaned" -eq 0 ] || return 0
	cleaned=1
	trap '' INT TERM
	# traffic first, so the final counters are quiet (bounded: nothing
	# may keep us from stopping swordd; ping and the endpoints handle
	# SIGINT themselves, printing their summaries)
	for p in "${bg_pids[@]}"; do
		kill -INT "$p" 2>/dev/null || true
	done
	for p in "${bg_pids[@]}"; do
		wait_gone "$p" 30 && continue
		kill -TERM "$p" 2>/dev/null || true
		wait_gone "$p" 20 || kill -KILL "$p" 2>/dev/null || true
	done
	if [ -z "$swordd_pid" ] && alive "$swordd_job"; then
		# stopped while swordd was starting: it writes its pid first thing
		wait_file "$work/swordd.pid" 20
		swordd_pid=$(cat "$work/swordd.pid" 2>/dev/null) || swordd_pid=$swordd_job
	fi
	if alive "$swordd_pid"; then
		log "stopping swordd (SIGTERM)"
		kill -TERM "$swordd_pid" 2>/dev/null || true
		if ! wait_gone "$swordd_pid" 200; then
			log "swordd did not stop, killing it"
			kill -KILL "$swordd_pid" 2>/dev/null || true
			wait_gone "$swordd_pid" 50 || true
			rc=1
		fi
	fi
	if [ -n "$swordd_job" ]; then
		# gone (or going: setsid -w exits right after swordd); bounded
		if wait_gone "$swordd_job" 50; then
			wait "$swordd_job" 2>/dev/null || { st=$?; [ "$st" -eq 127 ] || rc=$st; }
		fi
		[ "$rc" -eq 0 ] || { log "swordd exited $rc; its log:"; tail -20 "$work/swordd.log" >&2 || true; }
	fi
	# (reports only: under set -e a failing one would abort the cleanup)
	tail -1 "$work/server.log" 2>/dev/null | sed 's/^/run.sh: /' || true
	tail -1 "$work/client.log" 2>/dev/null | sed 's/^/run.sh: /' || true
	grep -E 'packets transmitted' "$work/ping.log" 2>/dev/null | sed 's/^/run.sh: ping: /' || true
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

# Handlers first: scapy takes seconds to import on a busy machine, and a
# background job of a script starts with SIGINT ignored.
stop = False
def on_signal(*_):
    global stop
    stop = True
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)

role, ifname, my_mac, peer_mac, my_ip, peer_ip, helpers, rate = sys.argv[1:9]
sys.path.insert(0, helpers)
import roce_scapy as rs

raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
raw.bind((ifname, 0))
# Hold UDP/4791 open so the kernel drops our frames quietly instead of
# answering them with ICMP port unreachable.
hold = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
hold.bind((my_ip, 4791))
peer = socket.inet_aton(peer_ip)
print("%s: ready" % role, flush=True)
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
# traffic before swordd, so the final counters add up.  setsid forks when
# its caller leads a process group (then $! is not swordd): swordd writes
# its own pid, and -w makes setsid wait and pass on swordd's exit status.
# shellcheck disable=SC2016  # $$ and $@ are the inner bash's
setsid -w bash -c 'echo $$ >"$0" && exec "$@"' "$work/swordd.pid" "${cmd[@]}" \
	2>"$work/swordd.log" &
swordd_job=$!

if ! tap_wait_up "$if_c" 60 "$swordd_job" || ! tap_wait_up "$if_s" 60 "$swordd_job"; then
	log "swordd did not start its ports; its log:"
	tail -20 "$work/swordd.log" >&2
	exit 1
fi
wait_file "$work/swordd.pid" 50 || { log "swordd did not write its pid"; exit 1; }
swordd_pid=$(cat "$work/swordd.pid")
iface_to_netns "$if_c" "$ns_c" "$ip_c/24"
iface_to_netns "$if_s" "$ns_s" "$ip_s/24"
mac_c=$(iface_mac "$ns_c" "$if_c")
mac_s=$(iface_mac "$ns_s" "$if_s")

py=/usr/bin/python3
helpers="$top/tests/helpers"
ip netns exec "$ns_s" "$py" "$work/endpoint.py" server "$if_s" "$mac_s" "$mac_c" "$ip_s" "$ip_c" "$helpers" 0 \
	>"$work/server.log" 2>&1 &
bg_pids+=($!)
# the server must listen before the first request (scapy takes a while to
# import on a busy machine): wait for it, bounded
wait_file_line() {   # FILE TEXT TENTHS
	local i
	for ((i = 0; i < $3; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		alive "$swordd_job" || return 1
		sleep 0.1 || true
	done
	return 1
}
wait_file_line "$work/server.log" "server: ready" 300 ||
	log "warning: the demo server did not start within 30 s"
ip netns exec "$ns_c" "$py" "$work/endpoint.py" client "$if_c" "$mac_c" "$mac_s" "$ip_c" "$ip_s" "$helpers" "$rate" \
	>"$work/client.log" 2>&1 &
bg_pids+=($!)
if command -v ping >/dev/null; then
	ip netns exec "$ns_c" ping -i 0.5 "$ip_s" >"$work/ping.log" 2>&1 &
	bg_pids+=($!)
	# "running" means traffic flows: wait (bounded) for the first echo
	# reply through swordd
	wait_file_line "$work/ping.log" "bytes from" 300 ||
		log "warning: no ping reply through swordd after 30 s"
else
	log "ping not installed (apt-get install iputils-ping): no ICMP traffic"
fi

wait_file_line "$work/client.log" "client: ready" 300 ||
	log "warning: the demo client did not start within 30 s"

# Poll (see "Waiting, the robust way" above): Ctrl-C, SIGTERM, the end of
# --duration or swordd exiting on its own each stop us within ~0.2 s.
if [ "$duration" -gt 0 ]; then
	log "running for ${duration}s"
	end=$((SECONDS + duration))
else
	log "running; Ctrl-C to stop"
	end=-1
fi
while alive "$swordd_job"; do
	if [ "$end" -ge 0 ] && [ "$SECONDS" -ge "$end" ]; then
		exit 0
	fi
	sleep 0.2 || true
done
swordd_pid=""
trap '' INT TERM        # this wait must not be interrupted (see above)
rc=0
wait "$swordd_job" || rc=$?
swordd_job=""
log "swordd exited on its own (status $rc)"
exit "$rc"
