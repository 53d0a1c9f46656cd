#!/usr/bin/env bash
# The real-peer rig: two Linux Soft-RoCE (rdma_rxe) endpoints in QEMU guests
# whose NICs are joined by swordd (or, for a baseline, a kernel bridge).
#
#   client guest 198.18.0.1 == tapA ==+                  +== tapB == server guest 198.18.0.2
#                                     | netns $RIG_NS    |
#                                     +-- swordd --------+   (--path swordd: net_af_packet on
#                                     |   port 0 = tapA     both taps, two-port mode)
#                                     |   port 1 = tapB  |
#                                     +-- br0 -----------+   (--path bridge)
#
# Why it exists: our own encoders and models can share our own mistakes; an
# RDMA stack nobody here wrote (Linux rxe, rdma-core, perftest) is the judge
# of "the endpoints never notice".  The host kernel has no RDMA, so the
# endpoints are Debian's kernel in TCG guests (KVM does not work on these
# machines: the host is itself a PVM guest).
#
# Usage: rig.sh [--build DIR] COMMAND [ARGS]
#   build                      build (or reuse) the cached guest: kernel + initramfs
#   up [--path swordd|bridge] [--accel on|off]
#                              create the netns, start the path, boot both guests
#   path swordd|bridge|none [--accel on|off] [--remap on|off] [--label NAME] [--pcap]
#        [--set KEY=VALUE]...   (swordd's config, after the rig's own)
#                              replace the path between the taps while the guests run;
#                              stopping swordd writes its final counters to
#                              $RIG_RUN/stats/NAME.json (--pcap: and what it sent
#                              to $RIG_RUN/pcap/NAME.out.pcapng)
#   exec client|server 'CMD' [TIMEOUT_S]   run a shell command in a guest
#   counters client|server     the guest's rxe hw counters, NAME=VALUE per line
#   reboot client|server       stop a (wedged) guest and boot it again; the
#                              path and the other guest keep running
#   status                     what is running
#   down                       stop guests and path, delete the netns (always safe)
#   test [short|full] [--accel on|off] [--compare-bridge]
#                              up, run tests/rig/realpeer.py, down
#
# --build DIR: meson build directory holding app/swordd/swordd and
# app/verbs/sword-{lock-client,mem-server} (default: <repo>/build).  Without
# the verbs programs there, they are compiled here with cc.
#
# Environment: RIG_CACHE (default /var/cache/sword-rig: kernel, initramfs),
# RIG_NS (netns, default sword-rig), RIG_RUN (pids, sockets, logs; default
# /run/sword-rig/$RIG_NS), RIG_SMP (vCPUs per guest, 1), RIG_MEM (MiB, 512),
# RIG_SWORDD (the binary), RIG_SWORDD_ARGS (extra swordd options),
# RIG_PCAP_IN=1 (each case's input to $RIG_RUN/pcap/LABEL.in.pcapng),
# RIG_LCORES (swordd's EAL -l, 0-1), RIG_NICE (swordd's nice, 19).
#
# Host packages (scripts/setup.sh installs them): qemu-system-x86 rdma-core
# ibverbs-providers ibverbs-utils libibverbs-dev perftest busybox-static kmod
# cpio zstd iproute2 ethtool.  Only Debian packages are used;
# the kernel is `apt-get download`ed and unpacked, never installed.
set -euo pipefail
PATH_SETS=()   # swordd --set KEY=VALUE of the path being started (cmd_path)

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$top/scripts/rig
build=$top/build

CACHE=${RIG_CACHE:-/var/cache/sword-rig}
NS=${RIG_NS:-sword-rig}
RUN=${RIG_RUN:-/run/sword-rig/$NS}
SMP=${RIG_SMP:-1}
MEM=${RIG_MEM:-512}
# swordd busy-polls; on a 2-core host running two TCG guests it would take
# a core from their vCPUs, so it yields to them (forwarding is unaffected).
NICE=${RIG_NICE:-19}
LCORES=${RIG_LCORES:-0-1}   # swordd: main lcore (housekeeping) + one worker

# Addresses exist only on the guests' NICs, inside the netns (RFC 2544 range).
CLIENT_IP=198.18.0.1
SERVER_IP=198.18.0.2
CLIENT_MAC=52:54:00:5e:00:01
SERVER_MAC=52:54:00:5e:00:02
LOCK_BASE=0x600000000000     # app/verbs/lock_layout.h: LOCK_REGION_ADDR
LOCK_LENGTH=4096             # the lock word array (LOCK_MAX * 8)

# Bump when the guest recipe changes: invalidates the cached base image.
RECIPE=4

log() { printf 'rig: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
nsx() { ip netns exec "$NS" "$@"; }
guest_tap() { case $1 in client) echo tapA ;; server) echo tapB ;; *) die "no guest $1" ;; esac; }

need() {
	local m=() c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || m+=("$c"); done
	[ ${#m[@]} -eq 0 ] || die "missing programs: ${m[*]} (run scripts/setup.sh)"
}

# ---------------------------------------------------------------- build
# The base image (kernel + busybox, iproute2's ip/rdma, rdma-core, perftest,
# the rxe provider and the kernel modules) is cached: it depends only on
# Debian package versions.  Our own programs and /init go into a small
# uncompressed cpio placed in front of it at boot (the kernel unpacks
# concatenated archives in order), so they never force a rebuild.

host_versions() {
	dpkg-query -W -f='${Package}=${Version} ' iproute2 rdma-core ibverbs-providers \
		libibverbs1 perftest busybox-static kmod 2>/dev/null
}

kernel_package() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

copy_with_libs() { # ROOT FILE...: copy files and the shared libraries they need
	local root=$1 f lib
	shift
	for f in "$@"; do
		[ -e "$root$f" ] || { mkdir -p "$root$(dirname "$f")"; cp -L "$f" "$root$f"; }
		for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
			[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
		done
	done
}

build_base() {
	need apt-get dpkg-deb cpio zstd ldd depmod modprobe busybox
	mkdir -p "$CACHE/debs"
	local kpkg stamp
	kpkg=$(kernel_package)
	if [ -z "$kpkg" ]; then
		# No apt lists yet (fresh machine) or no network: reuse a cached kernel.
		kpkg=$(ls "$CACHE/debs" 2>/dev/null | sed -n 's/^\(linux-image-[0-9][^_]*\)_.*/\1/p' | head -1)
		[ -n "$kpkg" ] || { apt-get update -qq && kpkg=$(kernel_package); }
		[ -n "$kpkg" ] || die "cannot find Debian's kernel package (linux-image-amd64)"
	fi
	stamp="recipe=$RECIPE kernel=$kpkg $(host_versions)"
	if [ -f "$CACHE/stamp" ] && [ "$(cat "$CACHE/stamp")" = "$stamp" ] &&
		[ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/base.cpio.zst" ]; then
		return 0
	fi
	local t0=$SECONDS
	log "building the guest base image in $CACHE ($kpkg)"
	if ! ls "$CACHE/debs/${kpkg}"_*.deb >/dev/null 2>&1; then
		rm -f "$CACHE"/debs/linux-image-*.deb
		(cd "$CACHE/debs" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
			die "apt-get download $kpkg failed"
	fi
	local work=$CACHE/work
	local kroot=$work/kernel root=$work/root kver
	rm -rf "$work"
	mkdir -p "$kroot" "$root"
	dpkg-deb -x "$CACHE/debs/${kpkg}"_*.deb "$kroot"
	kver=$(ls "$kroot/lib/modules")
	depmod -b "$kroot" "$kver"

	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,usr/bin,usr/sbin,usr/local/bin}
	mkdir -p "$root/lib/x86_64-linux-gnu" "$root/usr/lib/x86_64-linux-gnu" "$root/lib64"
	cp /bin/busybox "$root/bin/busybox"
	local a
	for a in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	local bins=() b
	for b in rdma ip kmod ibv_devices ibv_devinfo ibv_rc_pingpong ib_atomic_lat ib_atomic_bw \
		ib_read_lat ib_read_bw ib_write_lat ib_write_bw ib_send_lat ib_send_bw; do
		bins+=("$(command -v "$b")") || die "missing $b on the host"
	done
	local provider
	provider=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so)
	copy_with_libs "$root" "${bins[@]}" "$provider"
	mkdir -p "$root/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	for a in modprobe insmod rmmod lsmod modinfo depmod; do
		rm -f "$root/bin/$a"; ln -sf "$(command -v kmod)" "$root/sbin/$a"
	done
	printf '/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' > "$root/etc/ld.so.conf"
	ldconfig -r "$root"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
	echo 'root:x:0:' > "$root/etc/group"

	# rdma_rxe, the rdma_cm stack (-R), virtio-net, crc32 and their dependencies
	local m
	for m in $(modprobe -d "$kroot" -S "$kver" --show-depends -a virtio_pci virtio_net \
		rdma_rxe ib_uverbs rdma_ucm crc32_generic crc32_pclmul | awk '$1 == "insmod" { print $2 }' | sort -u); do
		mkdir -p "$root$(dirname "${m#"$kroot"}")"
		cp "$m" "$root${m#"$kroot"}"
	done
	cp "$kroot/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/"
	depmod -b "$root" "$kver"

	cp "$kroot/boot/vmlinuz-$kver" "$CACHE/vmlinuz.new"
	(cd "$root" && find . | cpio -o -H newc --quiet | zstd -q -3 -T0) > "$CACHE/base.cpio.zst.new"
	mv "$CACHE/vmlinuz.new" "$CACHE/vmlinuz"
	mv "$CACHE/base.cpio.zst.new" "$CACHE/base.cpio.zst"
	(cd "$root" && find . ) > "$CACHE/base.list"
	rm -rf "$work"
	echo "$stamp" > "$CACHE/stamp"
	log "guest base image built in $((SECONDS - t0)) s: kernel $kver, initramfs $(du -h "$CACHE/base.cpio.zst" | cut -f1)"
}

cmd_build() {
	mkdir -p "$CACHE"
	exec 8>"$CACHE/.lock"
	flock 8               # one builder at a time; the others then reuse its result
	build_base
	exec 8>&-
}

# The overlay: /init, gidx and our verbs programs (built by meson, or here).
verbs_dir() {
	if [ -x "$build/app/verbs/sword-lock-client" ] && [ -x "$build/app/verbs/sword-mem-server" ] &&
		[ -f "$build/app/verbs/libsword-cm-timeout.so" ]; then
		echo "$build/app/verbs"
		return
	fi
	local out=$RUN/verbs src=$top/app/verbs
	mkdir -p "$out"
	need cc
	cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$out/sword-lock-client" \
		"$src/lock_client.c" "$src/verbs_rc.c" "$src/verbs_cm.c" -libverbs -lrdmacm -lpthread ||
		die "cannot build the lock client (libibverbs-dev, librdmacm-dev installed?)"
	cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$out/sword-mem-server" \
		"$src/mem_server.c" "$src/verbs_rc.c" "$src/verbs_cm.c" -libverbs -lrdmacm ||
		die "cannot build the memory server"
	cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -shared -fPIC \
		-o "$out/libsword-cm-timeout.so" "$src/cm_ack_timeout.c" -lrdmacm -ldl ||
		die "cannot build the rdma_cm ACK timeout shim (librdmacm-dev installed?)"
	echo "$out"
}

make_initrd() {
	local ov=$RUN/overlay vd
	vd=$(verbs_dir)
	rm -rf "$ov"
	mkdir -p "$ov/usr/local/bin" "$ov/usr/local/lib" "$ov/bin"
	install -m 0755 "$here/guest-init.sh" "$ov/init"
	install -m 0755 "$here/gidx" "$ov/bin/gidx"
	install -m 0755 "$vd/sword-lock-client" "$vd/sword-mem-server" "$ov/usr/local/bin/"
	# preloaded into perftest's rdma_cm cases (tests/rig/realpeer.py, CM_SHIM)
	install -m 0755 "$vd/libsword-cm-timeout.so" "$ov/usr/local/lib/"
	# Any library they need beyond the base image's (normally none).
	local lib
	for lib in $( (ldd "$vd/sword-lock-client"; ldd "$vd/sword-mem-server"
		ldd "$vd/libsword-cm-timeout.so") | grep -o '/[^ ]*' | sort -u); do
		grep -qxF ".$lib" "$CACHE/base.list" && continue
		mkdir -p "$ov$(dirname "$lib")"; cp -L "$lib" "$ov$lib"
	done
	{
		(cd "$ov" && find . | cpio -o -H newc --quiet)
		cat "$CACHE/base.cpio.zst"
	} > "$RUN/initrd.img"
}

# ---------------------------------------------------------------- net + path
net_up() {
	ip netns add "$NS" 2>/dev/null || ip netns list | grep -qw "$NS" || die "cannot create netns $NS"
	nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	nsx ip link set lo up
	local t
	for t in tapA tapB; do
		nsx ip link show "$t" >/dev/null 2>&1 || nsx ip tuntap add dev "$t" mode tap
		nsx ip link set "$t" mtu 1500 up
		# af_packet on a tap: no checksum offload to leave half-done frames
		nsx ethtool -K "$t" tx off >/dev/null 2>&1 || true
	done
}

swordd_bin() {
	local b=${RIG_SWORDD:-$build/app/swordd/swordd}
	[ -x "$b" ] || die "no swordd at $b (build it, or pass --build DIR, or use --path bridge)"
	echo "$b"
}

write_swordd_conf() {
	cat > "$RUN/swordd.conf" <<EOF
; written by scripts/rig/rig.sh: the memory server guest and its lock array
[server.mem]
ip = $SERVER_IP

[lock.rig]
server = mem
rkey = any
base = $LOCK_BASE
length = $LOCK_LENGTH
word_size = 8

[atomic]
; the guests' RoCE path MTU (rxe: the largest IB MTU within the links'
; 1500): READ spans are counted in it, and remapping maps a READ's
; response packets by them
pmtu = 1024
EOF
}

path_stop() {
	local p
	if [ -f "$RUN/swordd.pid" ]; then
		p=$(cat "$RUN/swordd.pid")
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			local i
			for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			if kill -0 "$p" 2>/dev/null; then
				log "swordd $p ignored SIGTERM for 10 s, killing it"
				kill -KILL "$p" 2>/dev/null || true
			fi
		fi
		rm -f "$RUN/swordd.pid"
	fi
	if ip netns list 2>/dev/null | grep -qw "$NS"; then
		nsx ip link del br0 2>/dev/null || true
	fi
	rm -f "$RUN/path"
}

# path_start swordd|bridge|none ACCEL LABEL [PCAP] [REMAP]; swordd also
# gets PATH_SETS (cmd_path's --set KEY=VALUE, after the rig's own)
path_start() {
	local path=$1 accel=$2 label=$3 pcap=${4:-0} remap=${5:-off} pcap_args=()
	path_stop
	case $path in
	bridge)
		nsx ip link add br0 type bridge stp_state 0 forward_delay 0
		nsx ip link set br0 up
		nsx ip link set tapA master br0
		nsx ip link set tapB master br0
		;;
	swordd)
		local bin holdoff=()
		bin=$(swordd_bin)
		# swordd starts before the case's traffic, so no answer it sees can
		# be to a request it missed (as in e2e): with remapping, no learn
		# hold-off either, or QPs that finish within its 1 s are never
		# paired by evidence, hence never bound
		[ "$remap" = on ] && holdoff=(--set atomic.learn_holdoff_ms=0)
		# the lock client and perftest without -R exchange QPNs out of
		# band: remapped only with [remap] out_of_band (no remapped case
		# re-creates a QP with a QPN swordd knows)
		[ "$remap" = on ] && holdoff+=(--set remap.out_of_band=on)
		# the same promise for atomic replacement: a case whose QPs are
		# reset with their QPNs (lock client -R) sets it off again
		# (tests/rig/realpeer.py same_psn_case)
		holdoff+=(--set atomic.out_of_band=on)
		write_swordd_conf
		mkdir -p "$RUN/stats" "$RUN/logs"
		rm -f "$RUN/stats/$label.json"
		if [ "$pcap" = 1 ]; then
			mkdir -p "$RUN/pcap"
			rm -f "$RUN/pcap/$label.out.pcapng"
			pcap_args=(--capture-tx "$RUN/pcap/$label.out.pcapng")
		fi
		# RIG_PCAP_IN=1: keep what swordd received too, per case (a
		# failure's evidence, not overwritten by its rerun)
		if [ "${RIG_PCAP_IN:-0}" = 1 ]; then
			mkdir -p "$RUN/pcap"
			pcap_args+=(--capture-rx "$RUN/pcap/$label.in.pcapng")
		fi
		# shellcheck disable=SC2086
		# --no-shconf, not --in-memory: DPDK 22.11 refuses --in-memory with --no-huge
		# started directly (not through nsx, a function): $! must be swordd itself
		ip netns exec "$NS" nice -n "$NICE" "$bin" --no-pci --no-huge --no-shconf --file-prefix "$NS" \
			-m 512 -l "$LCORES" \
			--vdev net_af_packet0,iface=tapA --vdev net_af_packet1,iface=tapB \
			-- --mode two-port -c "$RUN/swordd.conf" \
			--set "features.atomic_replacement=$accel" \
			--set "features.remapping=$remap" --set remap.start_holdoff_ms=0 "${holdoff[@]}" \
			--stats-json "$RUN/stats/$label.json" "${pcap_args[@]}" "${PATH_SETS[@]}" \
			${RIG_SWORDD_ARGS:-} \
			> "$RUN/logs/swordd-$label.log" 2>&1 &
		echo $! > "$RUN/swordd.pid"
		# Ready when it says so ("swordd: running ..."), after EAL and ports.
		local i
		for i in $(seq 1 300); do
			grep -q '^swordd: running' "$RUN/logs/swordd-$label.log" 2>/dev/null && break
			kill -0 "$(cat "$RUN/swordd.pid")" 2>/dev/null ||
				die "swordd exited at start: $(tail -5 "$RUN/logs/swordd-$label.log")"
			[ "$i" -lt 300 ] || die "swordd did not start in 30 s"
			sleep 0.1
		done
		# the pid we will signal must be swordd's own, or it would outlive the rig
		grep -q swordd "/proc/$(cat "$RUN/swordd.pid")/cmdline" ||
			die "swordd.pid is not swordd's pid"
		;;
	none) ;;
	*) die "unknown path $path (swordd|bridge|none)" ;;
	esac
	echo "$path accel=$accel remap=$remap label=$label" > "$RUN/path"
}

# ---------------------------------------------------------------- guests
boot_guest() { # name ip mac
	local name=$1 ip=$2 mac=$3 tap
	tap=$(guest_tap "$name")
	rm -f "$RUN/logs/$name.console" "$RUN/$name.ctl" "$RUN/$name.pid"
	nsx qemu-system-x86_64 -accel tcg -cpu max -m "$MEM" -smp "$SMP" \
		-nodefaults -no-user-config -display none \
		-kernel "$CACHE/vmlinuz" -initrd "$RUN/initrd.img" \
		-append "console=ttyS0 quiet panic=-1 rig_ip=$ip/24 rig_name=$name" \
		-serial "file:$RUN/logs/$name.console" \
		-serial "unix:$RUN/$name.ctl,server=on,wait=off" \
		-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,csum=off,guest_csum=off" \
		-no-reboot -daemonize -pidfile "$RUN/$name.pid"
}

guest_exec() { # name cmd [timeout]
	/usr/bin/python3 "$here/guestctl.py" "$RUN/$1.ctl" "$2" "${3:-120}"
}

guests_ready() { # [name...] (default: both)
	local n t0=$SECONDS
	[ $# -gt 0 ] || set -- client server
	for n in "$@"; do
		until grep -q 'rig-init: READY' "$RUN/logs/$n.console" 2>/dev/null; do
			grep -q 'rig-init: FAILED' "$RUN/logs/$n.console" 2>/dev/null && die "$n: rxe0 failed"
			[ -f "$RUN/$n.pid" ] && kill -0 "$(cat "$RUN/$n.pid")" 2>/dev/null ||
				die "$n guest died: $(tail -5 "$RUN/logs/$n.console" 2>/dev/null)"
			[ $((SECONDS - t0)) -lt 300 ] || die "$n guest did not boot in 300 s"
			sleep 0.2
		done
	done
}

stop_guest() { # name: only a qemu we started (its pid file, and it is a qemu)
	local p i
	[ -f "$RUN/$1.pid" ] || return 0
	p=$(cat "$RUN/$1.pid")
	if grep -q qemu "/proc/$p/cmdline" 2>/dev/null; then
		kill "$p" 2>/dev/null || true
		for i in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
	fi
	rm -f "$RUN/$1.pid"
}

# A wedged guest (agent silent, rxe0 down, unreachable): stop it and boot it
# again on the same tap; the path and the other guest stay as they are.  Its
# console up to now is kept (logs/NAME.console.HHMMSS): the evidence.
cmd_reboot() {
	local name=${1:-} ip mac
	case $name in
	client) ip=$CLIENT_IP mac=$CLIENT_MAC ;;
	server) ip=$SERVER_IP mac=$SERVER_MAC ;;
	*) die "reboot client|server" ;;
	esac
	ip netns list | grep -qw "$NS" || die "rig is not up"
	[ -f "$RUN/initrd.img" ] || die "no initrd (rig was never up)"
	local t0=$SECONDS
	stop_guest "$name"
	[ -f "$RUN/logs/$name.console" ] &&
		mv "$RUN/logs/$name.console" "$RUN/logs/$name.console.$(date +%H%M%S)"
	boot_guest "$name" "$ip" "$mac"
	guests_ready "$name"
	log "$name rebooted in $((SECONDS - t0)) s"
}

# The path works when the guests reach each other (ARP + ICMP through it).
path_check() {
	local i
	for i in 1 2 3 4 5; do
		guest_exec client "ping -c 1 -W 2 $SERVER_IP >/dev/null" 10 && return 0
		sleep 1
	done
	die "client cannot reach the server guest through the $(cut -d' ' -f1 "$RUN/path" 2>/dev/null) path"
}

cmd_up() {
	local path=swordd accel=off
	while [ $# -gt 0 ]; do
		case $1 in
		--path) path=$2; shift ;;
		--accel) accel=$2; shift ;;
		*) die "up: unknown option $1" ;;
		esac
		shift
	done
	need ip qemu-system-x86_64 /usr/bin/python3
	[ "$(id -u)" -eq 0 ] || die "must run as root (netns, taps)"
	cmd_down quiet
	local t0=$SECONDS
	trap 'log "interrupted or failed: tearing down"; cmd_down quiet' EXIT
	trap 'exit 130' INT TERM
	cmd_build
	mkdir -p "$RUN/logs"
	make_initrd
	net_up
	path_start "$path" "$accel" up
	boot_guest client "$CLIENT_IP" "$CLIENT_MAC"
	boot_guest server "$SERVER_IP" "$SERVER_MAC"
	guests_ready
	path_check
	trap - EXIT INT TERM
	log "up in $((SECONDS - t0)) s: path $path (accel $accel), netns $NS, run dir $RUN"
}

cmd_path() {
	local path=${1:-}; shift || true
	local accel=off label pcap=0 remap=off
	label=$path-$(date +%H%M%S)
	PATH_SETS=()
	while [ $# -gt 0 ]; do
		case $1 in
		--accel) accel=$2; shift ;;
		--remap) remap=$2; shift ;;
		--set) PATH_SETS+=(--set "$2"); shift ;;
		--pcap) pcap=1 ;;
		--label) label=$2; shift ;;
		*) die "path: unknown option $1" ;;
		esac
		shift
	done
	[ -n "$path" ] || die "path: swordd|bridge|none"
	ip netns list | grep -qw "$NS" || die "rig is not up"
	path_start "$path" "$accel" "$label" "$pcap" "$remap"
	[ "$path" = none ] || path_check
}

cmd_down() {
	local n
	for n in client server; do stop_guest "$n"; done
	path_stop
	if ip netns list 2>/dev/null | grep -qw "$NS"; then
		sleep 0.3
		ip netns del "$NS" 2>/dev/null || true
	fi
	rm -f "$RUN"/*.ctl
	[ "${1:-}" = quiet ] || log "down: guests stopped, netns $NS deleted"
}

cmd_status() {
	local n p
	ip netns list 2>/dev/null | grep -qw "$NS" && echo "netns $NS: present" || echo "netns $NS: absent"
	echo "path: $(cat "$RUN/path" 2>/dev/null || echo none)"
	for n in client server; do
		p=$(cat "$RUN/$n.pid" 2>/dev/null || true)
		if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then echo "$n: running (pid $p)"; else echo "$n: stopped"; fi
	done
}

cmd_counters() {
	guest_exec "$1" 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters && for f in *; do echo "$f=$(cat $f)"; done' 20
}

cmd_test() {
	exec /usr/bin/python3 "$top/tests/rig/realpeer.py" --rig "$0" --build "$build" "$@"
}

# ---------------------------------------------------------------- main
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(realpath -m "$2"); shift ;;
	-h|--help) sed -n '2,49p' "$0"; exit 0 ;;
	*) break ;;
	esac
	shift
done
cmd=${1:-}; shift || true
mkdir -p "$RUN"
case $cmd in
build) cmd_build ;;
up) cmd_up "$@" ;;
path) cmd_path "$@" ;;
exec) [ $# -ge 2 ] || die "exec client|server 'CMD' [TIMEOUT]"; guest_tap "$1" >/dev/null; guest_exec "$@" ;;
counters) cmd_counters "${1:?client|server}" ;;
reboot) cmd_reboot "${1:-}" ;;
status) cmd_status ;;
down) cmd_down ;;
test) cmd_test "$@" ;;
*) sed -n '2,49p' "$0" >&2; exit 2 ;;
esac
