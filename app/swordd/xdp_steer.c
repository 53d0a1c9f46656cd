/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_steer — see xdp_steer.h.
 *
 * Why swordd does it: the program's sword_servers map starts empty each
 * time net_af_xdp loads it (xdp_prog devarg, at queue setup), and an empty
 * map passes every frame to the kernel, so a freshly started swordd in AF_XDP
 * host mode received nothing until someone ran sword-xdp-servers.  The
 * managed servers are swordd's own config; it writes them as soon as the
 * program is attached.  [server.*] sections are fixed at start, so a SIGHUP
 * writes the same set again: that repairs a map emptied by hand.
 */
#include <net/if.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "xdp_steer.h"
#ifdef SWORDD_HAVE_LIBBPF
#include "sword_xdp_map.h"
#endif

/* app/swordd/main.c: swordd.port */
extern int swordd_logtype_port;
#define PORT_LOG(level, port, fmt, ...) \
	rte_log(RTE_LOG_ ## level, swordd_logtype_port, "swordd: port %u: " fmt "\n", \
		(unsigned int)(port), ##__VA_ARGS__)

/* installed path of the program, for the messages (meson sets it) */
#ifndef SWORD_XDP_PROG_PATH
#define SWORD_XDP_PROG_PATH "sword_xdp.bpf.o"
#endif

static void
steer_port(uint16_t port, const struct sword_config *cfg)
{
	struct rte_eth_dev_info info;
	char ifname[IF_NAMESIZE] = "?";

	if (rte_eth_dev_info_get(port, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_af_xdp") != 0)
		return;
	if (info.if_index == 0 || if_indextoname(info.if_index, ifname) == NULL) {
		PORT_LOG(WARNING, port, "net_af_xdp without an interface index: XDP "
			 "steering not filled (run sword-xdp-servers)");
		return;
	}
#ifdef SWORDD_HAVE_LIBBPF
	{
		char err[256];
		int fd = sword_xdp_map_find(info.if_index, err, sizeof(err)), n = -1;

		if (fd == SWORD_XDP_NO_PROG || fd == SWORD_XDP_NOT_SWORD) {
			/* DPDK's default program (no xdp_prog=): everything on the
			 * interface comes to swordd, which may be what a dedicated NIC
			 * wants; say how to share it with the host */
			PORT_LOG(INFO, port, "%s: every frame on %s goes to swordd; to keep "
				 "the host's own traffic in its kernel, add xdp_prog=%s",
				 err, ifname, SWORD_XDP_PROG_PATH);
			return;
		}
		if (fd >= 0)
			n = sword_xdp_map_fill(fd, cfg, err, sizeof(err));
		if (fd >= 0)
			close(fd);
		if (n < 0)
			PORT_LOG(WARNING, port, "XDP steering on %s not filled: %s (RoCE of "
				 "the managed servers goes to the kernel, not swordd)",
				 ifname, err);
		else if (n == 0)
			PORT_LOG(WARNING, port, "XDP steering on %s: no managed server in the "
				 "config: the program passes every frame to the kernel, swordd "
				 "receives nothing", ifname);
		else
			PORT_LOG(INFO, port, "XDP steering on %s: %d managed server(s) in %s",
				 ifname, n, SWORD_XDP_MAP_NAME);
	}
#else
	(void)cfg;
	PORT_LOG(WARNING, port, "swordd was built without libbpf: cannot fill the XDP "
		 "steering map on %s; run sword-xdp-servers -c FILE --iface %s", ifname,
		 ifname);
#endif
}

void
swordd_xdp_steer(const struct sword_daemon *d)
{
	unsigned int s;

	for (s = 0; s < d->n_slots; s++) {
		if (s == 1 && d->slots[1].port_id == d->slots[0].port_id)
			continue;
		steer_port(d->slots[s].port_id, &d->cfg);
	}
}
