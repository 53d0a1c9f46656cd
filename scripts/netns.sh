# shellcheck shell=bash
# netns.sh — network-namespace plumbing for putting hosts on either side of a
# DPDK net_tap port.  Sourced by scripts/run.sh (and anything else that wants
# a client and a server around swordd); defines functions only.
#
# Why it exists: the kernel side of a net_tap port is created by the PMD in
# the daemon's namespace when the EAL probes it, and is brought UP by
# rte_eth_dev_start.  Until then the PMD configures it by name (ioctls in its
# own namespace), so moving it into another namespace early breaks the PMD.
# The robust order is: create the namespaces, start the daemon, wait until
# the tap is UP, then move it and give it an address.
#
# Functions (all return non-zero on failure, print why on stderr):
#   netns_create NAME                 new netns, lo up, IPv6 off (no RS/MLD noise)
#   netns_delete NAME                 delete if it exists (quiet)
#   tap_wait_up IFACE TIMEOUT [PID]   wait for IFACE to exist and be UP in this
#                                     netns; give up early if PID dies
#   iface_to_netns IFACE NAME CIDR    move, address, bring up
#   iface_mac NAME IFACE              print the MAC of IFACE inside netns NAME

netns_create() {
	local ns=$1
	ip netns add "$ns" || return 1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null || return 1
	ip -n "$ns" link set lo up
}

netns_delete() {
	ip netns del "$1" 2>/dev/null || true
}

tap_wait_up() {
	local ifname=$1 timeout=${2:-30} pid=${3:-} i flags
	for ((i = 0; i < timeout * 10; i++)); do
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			echo "netns.sh: process $pid exited before $ifname came up" >&2
			return 1
		fi
		flags=$(ip -o link show dev "$ifname" 2>/dev/null | sed -n 's/^[^<]*<\([^>]*\)>.*/\1/p')
		case ",$flags," in
		*,UP,*) return 0 ;;
		esac
		sleep 0.1
	done
	echo "netns.sh: $ifname not UP after ${timeout}s" >&2
	return 1
}

iface_to_netns() {
	local ifname=$1 ns=$2 cidr=$3
	ip link set "$ifname" netns "$ns" &&
		ip -n "$ns" addr add "$cidr" dev "$ifname" &&
		ip -n "$ns" link set "$ifname" up
}

iface_mac() {
	ip -n "$1" -o link show dev "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'
}
