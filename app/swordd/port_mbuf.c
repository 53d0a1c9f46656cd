/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_mbuf — why swordd's mbuf data room depends on its ports.
 *
 * swordd's mbufs normally hold a whole 4096 path-MTU RoCE frame
 * (SWORD_FRAME_MAX, 4352 bytes, plus headroom).  net_af_xdp in DPDK 22.11
 * registers the mbuf pool itself as the AF_XDP UMEM (zero copy between UMEM
 * and mbuf), and the kernel takes UMEM chunks of at most one 4 KiB page: a
 * pool object (mempool header + struct rte_mbuf + data room) larger than
 * that fails with "xdp_umem_configure(): Failed to create umem".  The
 * kernel also writes each frame XDP_PACKET_HEADROOM (256) bytes into the
 * buffer.  So with an af_xdp port the data room is cut to what a 2048
 * path MTU needs, and a configured larger path MTU is refused at start-up
 * instead of dropping the large frames silently.
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "port_mbuf.h"
#include "sword_daemon.h"

#define AF_XDP_PMTU_MAX 2048
#define AF_XDP_FRAME_MAX (AF_XDP_PMTU_MAX + 256)   /* + every header, as SWORD_FRAME_MAX */
#define AF_XDP_KERNEL_HEADROOM 256                 /* XDP_PACKET_HEADROOM */

static int
port_is_af_xdp(uint16_t port)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port, &info) == 0 && info.driver_name != NULL &&
	       strcmp(info.driver_name, "net_af_xdp") == 0;
}

int
swordd_mbuf_data_room(const uint16_t *ports, unsigned int n_ports, uint32_t pmtu,
		      uint16_t *room, char *err, size_t errlen)
{
	unsigned int i;

	*room = RTE_PKTMBUF_HEADROOM + SWORD_FRAME_MAX;
	for (i = 0; i < n_ports; i++) {
		if (!port_is_af_xdp(ports[i]))
			continue;
		if (pmtu > AF_XDP_PMTU_MAX) {
			snprintf(err, errlen, "port %u is net_af_xdp: frames are limited to "
				 "one 4 KiB UMEM chunk, so the path MTU must be at most %u, "
				 "but [atomic] pmtu = %u (set pmtu = %u and the RDMA path MTU "
				 "to match)", ports[i], AF_XDP_PMTU_MAX, pmtu, AF_XDP_PMTU_MAX);
			return -1;
		}
		*room = RTE_PKTMBUF_HEADROOM + AF_XDP_KERNEL_HEADROOM + AF_XDP_FRAME_MAX;
	}
	return 0;
}
