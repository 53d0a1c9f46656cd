/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernel-level counters of a port's Linux interface: frames the kernel
 * dropped before swordd ever saw them (or after it handed them over).
 *
 * Why: with a kernel-backed PMD (net_af_packet, net_tap) swordd's own
 * counters can say rx == tx, no drop, while frames were lost underneath:
 * an AF_PACKET receive ring that overflowed while swordd was descheduled
 * (PACKET_STATISTICS tp_drops), or a tap whose queue towards its reader
 * overflowed (/sys/class/net/IF/statistics tx_dropped).  The rig and the
 * e2e tests compare these with what the endpoints saw.
 */
#ifndef SWORD_KSTATS_H
#define SWORD_KSTATS_H

#include <stdbool.h>
#include <stdint.h>

struct sword_kstats {
	bool valid;              /* the port has a kernel interface */
	char ifname[32];
	/* /sys/class/net/IF/statistics, absolute (since the interface exists) */
	uint64_t if_rx_packets, if_tx_packets, if_rx_dropped, if_tx_dropped;
	/* this process's AF_PACKET sockets bound to IF, summed over sockets
	 * and accumulated since swordd started (the kernel resets them at
	 * every read); -1 in sock_count when none is bound (net_tap) */
	int sock_count;
	uint64_t sock_packets, sock_drops;
};

/* Fill *ks for DPDK port `port_id` (if_index from its dev_info).  Safe from
 * the main lcore and the telemetry thread (one lock inside); never from a
 * worker's fast path (it walks /proc/self/fd). */
void sword_kstats_read(uint16_t port_id, struct sword_kstats *ks);

#endif
