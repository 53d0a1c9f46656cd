#!/usr/bin/env bash
# Prepares a Debian 12 machine (as root) to build, run and test sword:
# installs packages, reserves and mounts hugepages, configures and builds.
# Idempotent: every step checks before it acts, so re-running is cheap.
#
#   scripts/setup.sh [--sanitize] [--no-build] [--build DIR]
#
# --sanitize  also configure/build an ASan+UBSan tree in build-asan/
# --no-build  only packages and hugepages
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
sanitize=0
do_build=1
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitize) sanitize=1 ;;
	--no-build) do_build=0 ;;
	--build) build=$2; shift ;;
	-h|--help) sed -n '2,10p' "$0"; exit 0 ;;
	*) echo "setup.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

log() { echo "setup: $*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: must run as root (installs packages, reserves hugepages)" >&2
	exit 1
fi

# 1. Packages.  python3-scapy is used from /usr/bin/python3 by the tests.
packages=(
	build-essential pkg-config meson ninja-build
	dpdk dpdk-dev libdpdk-dev
	check libsubunit-dev libpcap-dev openvswitch-common
	# the tor suite runs its own ovsdb-server/ovs-vswitchd (userspace datapath,
	# and the DPDK build, which stays an alternative: ovs-vswitchd remains
	# the plain one)
	openvswitch-switch openvswitch-switch-dpdk
	# AF_XDP: the XDP steering program (clang -target bpf, libbpf) and the
	# PMD (part of dpdk); bpftool and libxdp-dev to inspect and extend it
	clang libbpf-dev libxdp-dev bpftool librte-net-af-xdp23
	# swordd: sd_notify readiness (libsystemd), the man page (scdoc);
	# promtool (package prometheus) checks the exporter's metrics in the
	# daemon suite; the prometheus service is not started by anything here
	libsystemd-dev scdoc prometheus
	# the Debian packages (debian/, tests/daemon/test_deb.py): dpkg-buildpackage
	# and dh; man to read the installed pages
	debhelper dpkg-dev man-db
	# the fuzz suite (tests/fuzz, scripts/fuzz.sh): libFuzzer from clang 14
	# (its runtime is in libclang-rt-14-dev), zlib for the harnesses' ICRC
	clang-14 libfuzzer-14-dev libclang-rt-14-dev zlib1g-dev
	python3 python3-scapy tshark tcpdump
	# scripts/run.sh --plot and scripts/bench-locks.sh draw with matplotlib
	python3-matplotlib
	iproute2 iputils-ping ethtool procps valgrind
	# the Soft-RoCE rig (tests/rig): guests built from these
	qemu-system-x86 rdma-core ibverbs-providers ibverbs-utils libibverbs-dev librdmacm-dev
	perftest busybox-static kmod cpio zstd
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	log "packages present"
fi

# 2. Hugepages: 512 x 2 MiB, mounted on /dev/hugepages.  Tests run with
# --no-huge too, so a machine that refuses hugepages still works (slower).
want=512
have=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
if [ "$have" -lt "$want" ]; then
	echo "$want" > /proc/sys/vm/nr_hugepages 2>/dev/null || true
	have=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
	[ "$have" -ge "$want" ] || log "warning: only $have hugepages could be reserved"
fi
mkdir -p /dev/hugepages
if ! mountpoint -q /dev/hugepages; then
	mount -t hugetlbfs nodev /dev/hugepages || log "warning: could not mount hugetlbfs"
fi
log "hugepages: $(cat /proc/sys/vm/nr_hugepages) reserved"

# 3. Build.
[ "$do_build" -eq 1 ] || exit 0
configure() { # dir [meson options...]
	local dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$top" "$@" >/dev/null
	fi
	ninja -C "$dir" >/dev/null || ninja -C "$dir"
	log "built $dir"
}
configure "$build"
[ "$sanitize" -eq 0 ] || configure "$top/build-asan" -Dsanitize=true
