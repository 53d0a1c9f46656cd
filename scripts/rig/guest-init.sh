#!/bin/sh
# PID 1 of a rig guest (see rig.sh).  Brings up Soft-RoCE on eth0 and then
# serves the host on ttyS1: one line "<timeout_s> <shell command>" at a
# time, answered by the command's output and a line "__RC__ <status>"
# (guestctl.py is the other end).  A command still running at its timeout
# is killed (status 137), so one hung test cannot block the agent.
export PATH=/usr/local/bin:/sbin:/usr/sbin:/bin:/usr/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /tmp
for o in $(cat /proc/cmdline); do
	case "$o" in rig_ip=*) IP=${o#rig_ip=};; rig_name=*) NAME=${o#rig_name=};; esac
done
hostname "${NAME:-guest}"
echo "rig-init: kernel up at $(cut -d' ' -f1 /proc/uptime)s"
for m in virtio_pci virtio_net crc32_pclmul crc32_generic rdma_rxe ib_uverbs rdma_ucm; do
	modprobe "$m" 2>/dev/null || echo "rig-init: modprobe $m failed"
done
# IPv4 only: no ND/MLD chatter on the wire, and a single RoCEv2 GID to pick.
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip link set lo up
i=0; while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
ip link set eth0 up
ip addr add "$IP" dev eth0
if rdma link add rxe0 type rxe netdev eth0; then
	echo "rig-init: READY $(cut -d' ' -f1 /proc/uptime)s"
else
	echo "rig-init: FAILED to add rxe0"
fi
(
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	exec 3<>/dev/ttyS1
	while IFS= read -r line <&3; do
		t=${line%% *}
		case $t in ''|*[!0-9]*) t=120 ;; *) line=${line#* } ;; esac
		timeout -s KILL "$t" sh -c "$line" </dev/null >&3 2>&1
		echo "__RC__ $?" >&3
	done
) &
while true; do setsid sh -c 'exec sh </dev/ttyS0 >/dev/ttyS0 2>&1'; done
