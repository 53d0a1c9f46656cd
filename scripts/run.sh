#!/usr/bin/env bash
# run.sh — the sword demo: contending Sherman-style lock clients through
# swordd, pass-through vs lock acceleration (and connection remapping), live.
#
#   netns client (198.18.0.1): N roce-peer clients (sherman-lock)
#        | tap
#   swordd two-port (net_tap; config generated: server.mem0 = 198.18.0.2,
#        | tap       one lock region)
#   netns server (198.18.0.2): roce-peer memory server
#
# As root on a fresh Debian 12 machine:  scripts/run.sh
# It runs scripts/setup.sh (packages, hugepages, build into build/), then
# runs the same load through swordd pass-through (atomic_replacement = off)
# and lock acceleration (atomic_replacement = on), each --repeat times
# (interleaved: a busy machine slows both alike), printing live progress
# every second (lock ops/s, retries, retransmissions, violations, swordd
# managed frames and rewrites), then a summary comparing the runs (with what
# each takes off the memory server: atomics it executed per second, server
# QPs that carried the requests) and the median and min-max of each mode's
# ratio to pass-through, with the
# checks the clients and the memory server make (violations, QP errors,
# per-lock counters in memory = critical sections completed).  Everything it
# creates (namespaces, taps, processes, DPDK runtime files, temp files) is
# removed at exit, also on Ctrl-C.
#
# Exit status: 0 when every run passed its checks; 1 when a check failed or
# something did not start; 130 after Ctrl-C (or 143 after SIGTERM) — the
# clients of the interrupted run finish their critical sections, and the
# summary covers what ran (a failed check still exits 1).
#
# Options:
#   --duration SEC   seconds per run (default 5)
#   --repeat N       runs of each mode, interleaved (default 3): the summary
#                    gives the median and min-max over them
#   --clients N      contending client processes (default 4)
#   --qps N          QPs per client (default 1)
#   --locks N        lock words (default 4; fewer = more contention)
#   --mode M         both | passthrough | accel | remap | accel-remap | all
#                    | direct, or a comma list of these runs
#                    (default both = passthrough + accel; remap: every client
#                    QP onto one server QP, remapping = on; accel-remap: both
#                    functions; all: the four runs; direct: no swordd,
#                    a veth pair between the namespaces)
#   --atomic-unit RATE  the memory server models an RNIC atomic unit:
#                    atomics on one 8-byte word run one at a time, RATE per
#                    second (roce-peer server --atomic-unit; a MODEL, not a
#                    NIC).  Default 80: a ConnectX-5's same-address CAS to
#                    WRITE ratio scaled to these software endpoints (see
#                    aunit_default below).  0 turns it off: the software
#                    server is then never bound by its atomics, and
#                    acceleration shows no gain here
#   --no-atomic-unit the same as --atomic-unit 0
#   --plot FILE      draw lock ops/s per mode over time and server atomics/s
#                    (FILE.svg or FILE.png; python3-matplotlib)
#   --no-setup       do not run scripts/setup.sh (use an existing build)
#   --build DIR      meson build directory (default: build/)
#   --json FILE      write the summary as JSON to FILE: every run with its
#                    per-second series (lock ops/s, server atomics/s), each
#                    mode's median and min-max, the model (or none)
#   --keep           keep the temp directory with logs and JSON summaries
#                    (a failed run always keeps it)
#   --pcap           swordd writes pcapng of what it receives and sends
#                    (<run>/swordd-in.pcapng, swordd-out.pcapng; implies --keep)
#   -h, --help
# Environment: DEMO_CLIENT_ARGS — extra roce-peer client options (e.g.
#   "--rto-us 2000" to provoke retransmissions, or fault injection:
#   "--loss 0.02 --dup 0.02 --reorder 0.02").
set -euo pipefail

argv=("$@")
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
duration=5
repeat=3
plot=""
clients=4
qps=1
locks=4
mode=both
setup=1
json=""
keep=0
pcap=0
# The modelled atomic unit's default rate, from a real NIC's ratio of
# same-address CAS to WRITE throughput.  A ConnectX-5 runs ~2.93 M CAS/s on
# one word in host memory (app/roce-peer/README.md; ~8.97 M in its on-chip
# device memory, which only Sherman-style designs use, 256 KB of it) against
# up to 200 M messages/s for small WRITEs (its product brief's message rate):
# one address's atomics run at ~1.5% of the NIC's WRITE rate.  These
# software endpoints move ~5,300 requests/s in all (4 clients, any verb: the
# software server is the "NIC" here), so the same ratio gives
# 5,300 x 2.93 / 200 = ~78, rounded to 80 atomics/s per address (device
# memory's ratio would give ~240: README, Benchmarks).  A model, not a NIC.
aunit_default=80
aunit=$aunit_default

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) duration=$2; shift ;;
	--clients) clients=$2; shift ;;
	--qps) qps=$2; shift ;;
	--locks) locks=$2; shift ;;
	--mode) mode=$2; shift ;;
	--atomic-unit) aunit=$2; shift ;;
	--no-atomic-unit) aunit=0 ;;
	--repeat) repeat=$2; shift ;;
	--plot) plot=$2; shift ;;
	--no-setup) setup=0 ;;
	--build) build=$2; shift ;;
	--json) json=$2; shift ;;
	--keep) keep=1 ;;
	--pcap) pcap=1; keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
for v in "$duration" "$clients" "$qps" "$locks" "$repeat"; do
	case "$v" in ''|*[!0-9]*|0) echo "run.sh: --duration/--clients/--qps/--locks/--repeat want positive integers" >&2; exit 2 ;; esac
done
case "$mode" in
both) runs=(passthrough accel) ;;
all) runs=(passthrough accel remap accel-remap) ;;
*) IFS=, read -r -a runs <<< "$mode" ;;
esac
for a in "${runs[@]}"; do
	case "$a" in passthrough|accel|remap|accel-remap|direct) ;;
	*) echo "run.sh: --mode both|all|M[,M...] (M: direct passthrough accel remap accel-remap), not '$mode'" >&2; exit 2 ;;
	esac
done
case "$plot" in ''|*.svg|*.png) ;; *) echo "run.sh: --plot wants a file ending .svg or .png, not '$plot'" >&2; exit 2 ;; esac
if [ -n "$plot" ] && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	echo "run.sh: --plot needs python3-matplotlib (scripts/setup.sh installs it)" >&2
	exit 2
fi
# roce-peer judges the value too; here it fails before anything is set up
if ! [[ "$aunit" =~ ^[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?$ ]] ||
   ! awk -v r="$aunit" 'BEGIN { exit !(r >= 0 && r <= 1e9) }'; then
	echo "run.sh: --atomic-unit wants atomics per second per address, a number >= 0 (0: no model) and <= 1e9 (e.g. 2.93e6), not '$aunit'" >&2
	exit 2
fi
aunit_args=()
rto_args=()
if awk -v r="$aunit" 'BEGIN { exit !(r > 0) }'; then
	aunit_args=(--atomic-unit "$aunit")
	# The clients' retransmission timer must outlast the model's queueing,
	# as a real RNIC's (milliseconds) outlasts its atomic unit's (a fraction
	# of a microsecond a CAS): else every wait becomes a retransmission
	# (held behind the waiting atomic too) and pass-through measures retry
	# storms.  Twice the wait of each client QP's full window of atomics
	# spread over the lock words, 20 ms at least (roce-peer's default).
	rto_args=(--rto-us "$(awk -v c="$clients" -v q="$qps" -v l="$locks" -v r="$aunit" \
		'BEGIN { t = 2e6 * c * q * 16 / l / r; printf "%d", (t > 20000 ? t : 20000) }')")
else
	aunit=""
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: must run as root (network namespaces, tap devices, AF_PACKET, DPDK)" >&2
	exit 1
fi
if [ "$setup" -eq 1 ]; then
	"$top/scripts/setup.sh" --build "$build"
fi
build=$(cd "$build" 2>/dev/null && pwd) || { echo "run.sh: no build directory $build (run without --no-setup, or pass --build DIR)" >&2; exit 1; }
swordd="$build/app/swordd/swordd"
peer="$build/app/roce-peer/roce-peer"
for b in "$swordd" "$peer"; do
	[ -x "$b" ] || { echo "run.sh: $b not built (run scripts/setup.sh, or ninja -C $build)" >&2; exit 1; }
done
[ -z "$json" ] || json=$(realpath -m "$json")
[ -z "$plot" ] || plot=$(realpath -m "$plot")

# Ctrl-C.  Bash drops a trapped SIGINT that arrives while it waits for a
# foreground child which then exits normally: it takes the signal as the
# child's to handle ("wait and cooperative exit").  The run below forks a
# child every tenth of a second, so a loaded machine lost about one Ctrl-C
# in a hundred, and the run went on to its end.  So run.sh is two processes:
# this guard forks nothing while it waits and turns SIGINT into SIGUSR1 for
# the worker, which runs in the background — where bash ignores SIGINT, for
# it and for everything it starts — and does the run.
if [ "${SWORD_RUN_GUARD:-}" != "$PPID" ]; then
	guard_dir=$(mktemp -d /tmp/sword-run-XXXXXX)
	mkfifo "$guard_dir/tick"
	# read's timeout on a FIFO that nobody writes: a sleep without a child
	exec {tick}<>"$guard_dir/tick"
	SWORD_RUN_GUARD=$$ SWORD_RUN_RC="$guard_dir/rc" "$BASH" "$0" "${argv[@]}" --no-setup <&0 &
	worker=$!
	trap 'kill -USR1 "$worker" 2>/dev/null || true' INT
	trap 'kill -TERM "$worker" 2>/dev/null || true' TERM
	while kill -0 "$worker" 2>/dev/null; do
		read -r -t 0.2 -u "$tick" _ || true
	done
	rc=1   # the worker writes its status at exit; none: it died before that
	[ -s "$guard_dir/rc" ] && read -r rc < "$guard_dir/rc"
	rm -rf "$guard_dir"
	exit "$rc"
fi

# shellcheck source=scripts/netns.sh
. "$top/scripts/netns.sh"

# Everything we create is named after our pid: several demos (or the test
# suite) can run side by side.
id=$$
ns_c="demoC$id" ns_s="demoS$id"
if_c="dmc$id" if_s="dms$id"
prefix="demo$id"
work=$(mktemp -d "/tmp/sword-demo-$id-XXXX")
declare -A pid_of=()   # role -> pid of the running process

# Processes.  Each endpoint and swordd runs in its own session: Ctrl-C
# reaches only this script, which then stops them in order — clients first
# (SIGINT: they finish the critical section they are in and write their
# summaries), then the memory server, then swordd (SIGTERM: each prints and
# writes its summary) — so an interrupted run still adds up.
#
# Nothing here ever calls bash's `wait`: when a trapped signal interrupts
# it, a child reaped in that instant loses its status and a later `wait PID`
# blocks forever.  We poll with kill -0 and short sleeps (a trap runs within
# ~0.2 s) and judge each process by the summary it writes, not by its exit
# status.  Bash reaps its children by itself.
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
wait_gone() {   # PID TENTHS: wait up to TENTHS/10 s; 0 if gone
	local i
	for ((i = 0; i < $2; i++)); do
		alive "$1" || return 0
		sleep 0.1 || true
	done
	! alive "$1"
}
spawn() {   # ROLE LOG CMD...: start CMD in its own session, remember its pid
	local role=$1 log=$2 pidf="$work/$1.pid" i
	shift 2
	rm -f "$pidf"
	# setsid forks only when its caller leads a process group; the pid
	# file gives the real pid either way
	# shellcheck disable=SC2016  # $$ and $@ are the inner bash's
	setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidf" "$@" \
		</dev/null >"$log" 2>&1 &
	for ((i = 0; i < 100; i++)); do
		[ -s "$pidf" ] && break
		sleep 0.05 || true
	done
	pid_of[$role]=$(cat "$pidf" 2>/dev/null) || { echo "run.sh: $role did not start" >&2; return 1; }
}
stop() {   # ROLE SIGNAL TENTHS: signal, wait bounded, then SIGKILL
	local p=${pid_of[$1]:-}
	unset "pid_of[$1]"
	alive "$p" || return 0
	kill "-$2" "$p" 2>/dev/null || true
	wait_gone "$p" "$3" && return 0
	echo "run.sh: $1 did not stop on SIG$2, killing it" >&2
	kill -KILL "$p" 2>/dev/null || true
	wait_gone "$p" 50 || true
	return 1
}
stop_run() {   # clients, server, swordd; 1 if one had to be killed
	local r rc=0
	for r in "${!pid_of[@]}"; do
		case "$r" in client*) stop "$r" INT 300 || rc=1 ;; esac
	done
	stop server TERM 100 || rc=1
	stop swordd TERM 200 || rc=1
	netns_delete "$ns_c"
	netns_delete "$ns_s"
	ip link del "$if_c" 2>/dev/null || true
	ip link del "$if_s" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
	return "$rc"
}

cleanup() {
	local rc=$?
	trap '' USR1 TERM
	trap - EXIT
	stop_run || true
	# a failed run keeps its logs: intermittent failures are rare to catch
	if [ "$keep" -eq 1 ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ] && [ "$rc" -ne 143 ]; }; then
		echo "run.sh: logs kept in $work"
	else
		rm -rf "$work"
	fi
	echo "$rc" > "$SWORD_RUN_RC"
	exit "$rc"
}
interrupted=0
trap cleanup EXIT
trap 'interrupted=130' USR1   # the guard's word for Ctrl-C
trap 'interrupted=143' TERM

tel() { # telemetry query -> "managed rewritten" (0 0 if not available)
	/usr/bin/python3 "$top/scripts/sword_telemetry.py" -f "$prefix" /sword/stats \
		managed_rx rewritten 2>/dev/null || echo "0 0"
}

# one run: $1 = passthrough|accel|remap|accel-remap|direct, $2 = its number;
# leaves $work/$1/run$2/*.json, the endpoints' logs and server-t0
run_once() {
	local label=$1 accel=off remap=off dir i t smac ops rate prev=0 retries retx viol mgd rw o r x v n t0 prev_ms now_ms
	local atom prev_atom=0 arate telpid=
	case "$label" in *accel*) accel=on ;; esac
	case "$label" in *remap*) remap=on ;; esac
	dir="$work/$label/run$2"
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
[atomic]
; swordd starts before any RDMA traffic exists, so no answer it sees can be
; a replay of a request executed before it ran: learn word values at once
learn_holdoff_ms = 0
; the demo's clients exchange QPNs out of band and never re-create a QP
out_of_band = on
[features]
atomic_replacement = $accel
remapping = $remap
[remap]
lanes = 1
start_holdoff_ms = 0
; the demo's clients exchange QPNs out of band and never re-create a QP
out_of_band = on
EOF
	netns_create "$ns_c"
	netns_create "$ns_s"
	local pcap_args=()
	[ "$pcap" -eq 0 ] || pcap_args=(--capture-rx "$dir/swordd-in.pcapng" --capture-tx "$dir/swordd-out.pcapng")
	if [ "$label" = direct ]; then
		# no swordd: a veth pair joins the namespaces
		ip link add "$if_c" type veth peer name "$if_s" || return 1
	else
	spawn swordd "$dir/swordd.log" "$swordd" --no-pci --no-huge --no-shconf -m 512 \
		--file-prefix "$prefix" -l 0-1 \
		--vdev "net_tap0,iface=$if_c" --vdev "net_tap1,iface=$if_s" \
		-- -c "$dir/swordd.conf" --stats-json "$dir/swordd.json" "${pcap_args[@]}"
	if ! { tap_wait_up "$if_c" 30 "${pid_of[swordd]}" && tap_wait_up "$if_s" 30 "${pid_of[swordd]}"; }; then
		tail -20 "$dir/swordd.log" >&2
		return 1
	fi
	fi
	iface_to_netns "$if_c" "$ns_c" 198.18.0.1/24
	iface_to_netns "$if_s" "$ns_s" 198.18.0.2/24
	smac=$(iface_mac "$ns_s" "$if_s")
	if [ "$accel" = on ] && grep -q "has no implementation" "$dir/swordd.log"; then
		echo "  (this swordd has no atomic_replacement implementation: it passes through)"
		echo noimpl > "$dir/noimpl"
	fi

	spawn server "$dir/server.log" ip netns exec "$ns_s" "$peer" server --iface "$if_s" \
		--ip 198.18.0.2 --max-qps $((clients * qps + 16)) --dump-locks "$locks" --progress 0.25 \
		--json "$dir/server.json" --ready-file "$dir/server.ready" "${aunit_args[@]}"
	for ((t = 0; t < 100; t++)); do
		[ -e "$dir/server.ready" ] || ! alive "${pid_of[server]}" && break
		sleep 0.1 || true
	done
	[ -e "$dir/server.ready" ] || { tail -20 "$dir/server.log" >&2; return 1; }
	# the path must carry frames before the clients start (a client whose
	# first requests vanish spends its retry budget at start-up)
	for ((t = 0; t < 100; t++)); do
		[ "$interrupted" -eq 0 ] || break
		ip netns exec "$ns_c" ping -c 1 -W 1 198.18.0.2 >/dev/null 2>&1 && break
	done

	# the clock starts with the clients (their --duration does); the
	# per-second series comes from the endpoints' own progress lines
	# (run_summary.py), the server's shifted by its clock now
	t0=$(date +%s%3N) prev_ms=$t0
	grep -o '^server t=[0-9.]*s rx=' "$dir/server.log" 2>/dev/null | tail -1 |
		sed 's/server t=\([0-9.]*\)s.*/\1/' > "$dir/server-t0" || true
	for ((i = 0; i < clients; i++)); do
		# shellcheck disable=SC2086  # DEMO_CLIENT_ARGS is a list of options
		spawn "client$i" "$dir/client$i.log" ip netns exec "$ns_c" "$peer" client \
			--iface "$if_c" --ip 198.18.0.1 \
			--server-ip 198.18.0.2 --server-mac "$smac" --client-id "$i" \
			--qps "$qps" --workload sherman-lock --locks "$locks" \
			--duration "$duration" --progress 0.25 --json "$dir/client$i.json" \
			"${rto_args[@]}" ${DEMO_CLIENT_ARGS:-}
		# when it started, ms after t0: the series puts the clients on one clock
		echo $(( $(date +%s%3N) - t0 )) >> "$dir/client-starts"
	done

	printf '  %5s %12s %10s %10s %8s %12s %10s %11s\n' time "lock ops/s" retries retx viol \
		"swordd mgd" rewrites "srv atom/s"
	# a line can take over a second on a loaded machine: time and rate
	# from the clock, not from the line count
	for ((t = 1; ; t++)); do
		# sample on the second (the telemetry query takes a while)
		while [ "$interrupted" -eq 0 ] && [ "$(date +%s%3N)" -lt $((t0 + t * 1000)) ]; do
			sleep 0.1 || true
		done
		if [ "$interrupted" -ne 0 ]; then
			echo "  interrupted: the clients finish their critical sections, then the summary"
			echo interrupted > "$dir/interrupted"
			break
		fi
		ops=0 retries=0 retx=0 viol=0
		for ((i = 0; i < clients; i++)); do
			# last progress line of each client: "... ops=N ops/s=R retries=N retx=N violations=N"
			read -r o r x v < <(grep -o 'ops=[0-9]* .*retries=[0-9]* retx=[0-9]* violations=[0-9]*' \
				"$dir/client$i.log" 2>/dev/null | tail -1 |
				sed 's/ops=\([0-9]*\) .*retries=\([0-9]*\) retx=\([0-9]*\) violations=\([0-9]*\)/\1 \2 \3 \4/') || true
			ops=$((ops + ${o:-0})) retries=$((retries + ${r:-0}))
			retx=$((retx + ${x:-0})) viol=$((viol + ${v:-0}))
		done
		now_ms=$(date +%s%3N)
		rate=$(( (ops - prev) * 1000 / (now_ms > prev_ms ? now_ms - prev_ms : 1) ))
		# the memory server's last progress line: cumulative atomics executed
		atom=$(grep -o 'server t=[0-9.]*s rx=.* atomics=[0-9]*' "$dir/server.log" 2>/dev/null |
			tail -1 | sed 's/.* atomics=//') || true
		atom=${atom:-0}
		arate=$(( (atom - prev_atom) * 1000 / (now_ms > prev_ms ? now_ms - prev_ms : 1) ))
		prev_atom=$atom
		prev=$ops prev_ms=$now_ms
		# swordd's counters: the query runs in the background (it can take
		# over a second on a busy machine); the line shows its last answer
		mgd=- rw=-
		if [ "$label" != direct ]; then
			[ -s "$dir/tel.last" ] && read -r mgd rw < "$dir/tel.last"
			if ! alive "$telpid"; then
				{ tel > "$dir/tel.tmp" && mv "$dir/tel.tmp" "$dir/tel.last"; } &
				telpid=$!
			fi
		fi
		printf '  %4ds %12d %10d %10d %8d %12s %10s %11d\n' $(( (now_ms - t0 + 500) / 1000 )) \
			"$rate" "$retries" "$retx" "$viol" "$mgd" "$rw" "$arate"
		n=0
		for ((i = 0; i < clients; i++)); do alive "${pid_of[client$i]}" && n=$((n + 1)); done
		[ "$n" -gt 0 ] || break
	done
	wait_gone "$telpid" 50 || kill "$telpid" 2>/dev/null || true
	stop_run || echo killed > "$dir/killed"
}

echo "sword demo: $clients Sherman-style clients x $qps QP, $locks locks, ${duration}s per run, $repeat run(s) per mode"
if [ "${runs[*]}" = direct ]; then
	echo "  client netns $ns_c (198.18.0.1) -- veth pair, no swordd -- server netns $ns_s (198.18.0.2)"
else
	echo "  client netns $ns_c (198.18.0.1) -- swordd two-port (net_tap) -- server netns $ns_s (198.18.0.2)"
fi
if [ -n "$aunit" ]; then
	echo "  memory server: modelled atomic unit, $aunit atomics/s per address (a model of an RNIC's, not a NIC)"
	echo "    (clients' retransmission timeout ${rto_args[1]} us: longer than the model's queueing)"
	[ "$aunit" != "$aunit_default" ] ||
		echo "    (the default: a ConnectX-5's same-address CAS / WRITE rate ratio scaled to this software server; --no-atomic-unit: off)"
else
	echo "  memory server: no modelled atomic unit (software: never bound by its atomics)"
fi
for ((k = 1; k <= repeat; k++)); do
for a in "${runs[@]}"; do
	[ "$interrupted" -eq 0 ] || break 2
	echo
	case "$a" in
	passthrough) echo -n "== swordd pass-through (atomic_replacement = off)" ;;
	accel) echo -n "== swordd lock acceleration (atomic_replacement = on)" ;;
	remap) echo -n "== swordd connection remapping (remapping = on, 1 lane: every client QP onto one server QP)" ;;
	accel-remap) echo -n "== swordd lock acceleration + connection remapping (both on, 1 lane)" ;;
	direct) echo -n "== direct: no swordd (veth pair)" ;;
	esac
	echo ", run $k of $repeat"
	run_once "$a" "$k"
done
done

echo
echo "== summary"
sum_rc=0
/usr/bin/python3 "$top/scripts/run_summary.py" "$work" "$locks" "$clients" "$work/summary.json" || sum_rc=$?
[ -z "$json" ] || [ ! -s "$work/summary.json" ] || cp "$work/summary.json" "$json"
if [ -n "$plot" ] && [ -s "$work/summary.json" ]; then
	if /usr/bin/python3 "$top/scripts/run_plot.py" "$work/summary.json" "$plot"; then
		echo "  plot: $plot"
	else
		echo "run.sh: could not draw $plot" >&2
		sum_rc=1
	fi
fi
if [ "$sum_rc" -ne 0 ]; then
	exit 1
fi
if [ "$interrupted" -ne 0 ]; then
	echo "run.sh: interrupted; cleaned up"
	exit "$interrupted"
fi
