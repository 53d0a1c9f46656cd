/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * links.h — fail-open (issue #30): a swordd that stops, crashes or hangs
 * must take its ports' links down, so that a switch with fast-failover
 * groups (sword-openflow --failover) sends the traffic around it instead of
 * into it.
 *
 *   - swordd_port_link_set: a port's link down (or up), through the PMD and,
 *     for a port backed by a kernel interface (net_af_packet, net_af_xdp,
 *     net_tap), the interface's IFF_UP;
 *   - the guardian: a process forked before rte_eal_init that does it when
 *     swordd cannot (SIGKILL, a crash, SIGSTOP, a wedged main loop);
 *   - swordd_eal_ifaces: the interfaces named by EAL --vdev arguments, for
 *     `swordd ... -- --links-down` (systemd's ExecStopPost).
 */
#ifndef SWORDD_LINKS_H
#define SWORDD_LINKS_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWORDD_GUARD_MAX_IFS 8

/* Set a kernel interface's IFF_UP on or off (ioctl).  *was_up (may be
 * NULL) says how it was.  0, or -1 with err filled. */
int swordd_if_set(const char *ifname, bool up, bool *was_up, char *err, size_t errlen);

/* The kernel interface behind a DPDK port (dev_info if_index), or 0. */
int swordd_port_ifname(uint16_t port, char name[IF_NAMESIZE]);

/* A started port's link down (or up) through the PMD where it supports it
 * and through its kernel interface; one log line.  0 or -1 (logged). */
int swordd_port_link_set(uint16_t port, bool up);

/* Fork the guardian (before rte_eal_init: no DPDK thread exists yet).
 * stale_ms as [ports] guard_ms.  0, or -1 with a message on stderr. */
int swordd_guard_start(uint32_t stale_ms);

/* Ports are up and every worker forwards: watch these interfaces from now
 * on (n = 0: nothing to guard, the guardian leaves). */
void swordd_guard_arm(char names[][IF_NAMESIZE], unsigned int n);

/* The main lcore saw every worker progress (no-op without a guardian). */
void swordd_guard_beat(void);

/* The guardian's bypass epoch (a hang that set the links down bumps it;
 * links.c says why), for the workers to read; NULL without a guardian. */
const uint32_t *swordd_guard_bypass_epoch(void);

/* Every worker forgot what it knew for bypass epoch `epoch`: the guardian
 * may set the links up again once the workers progress. */
void swordd_guard_forgot(uint32_t epoch);

/* The bypass epoch after which the guardian set the links up again (the
 * answers the workers kept while they were down may go); NULL without a
 * guardian. */
const uint32_t *swordd_guard_up_epoch(void);

/* Interfaces of the net_af_packet / net_af_xdp --vdev arguments in
 * argv[1..argc) ("iface=NAME"); returns how many (at most max). */
unsigned int swordd_eal_ifaces(int argc, char **argv, char names[][IF_NAMESIZE],
			       unsigned int max);

#endif /* SWORDD_LINKS_H */
