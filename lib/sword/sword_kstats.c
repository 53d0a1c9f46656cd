/* SPDX-License-Identifier: BSD-3-Clause */
#include "sword_kstats.h"

#include <dirent.h>
#include <inttypes.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include <rte_ethdev.h>

/* PACKET_STATISTICS resets the socket's counters at every read, so the
 * totals are kept here, per interface index.  The PMD (DPDK 22.11
 * net_af_packet) never reads them itself, so nothing else consumes them. */
#define KSTATS_MAX_IF 16

static pthread_mutex_t ks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned int ifindex;
	uint64_t packets, drops;
} ks_acc[KSTATS_MAX_IF];

static uint64_t
read_sysfs_u64(const char *ifname, const char *what)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", ifname, what);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Walk this process's fds; add the statistics of every AF_PACKET socket
 * bound to ifindex into the accumulator.  Returns the sockets found. */
static int
poll_packet_sockets(unsigned int ifindex, uint64_t *packets, uint64_t *drops)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (dir == NULL)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		struct tpacket_stats_v3 st;   /* v1/v2 sockets fill the first two fields */
		socklen_t stl = sizeof(st);
		int domain = 0;
		socklen_t dl = sizeof(domain);
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || fd < 0 || fd == dirfd(dir))
			continue;
		if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) != 0 ||
		    domain != AF_PACKET)
			continue;
		if (getsockname((int)fd, (struct sockaddr *)&sll, &sl) != 0 ||
		    (unsigned int)sll.sll_ifindex != ifindex)
			continue;
		memset(&st, 0, sizeof(st));
		if (getsockopt((int)fd, SOL_PACKET, PACKET_STATISTICS, &st, &stl) != 0)
			continue;
		*packets += st.tp_packets;
		*drops += st.tp_drops;
		n++;
	}
	closedir(dir);
	return n;
}

void
sword_kstats_read(uint16_t port_id, struct sword_kstats *ks)
{
	struct rte_eth_dev_info di;
	uint64_t p = 0, dr = 0;
	unsigned int i, slot = KSTATS_MAX_IF;
	int n;

	memset(ks, 0, sizeof(*ks));
	ks->sock_count = -1;
	if (rte_eth_dev_info_get(port_id, &di) != 0 || di.if_index == 0 ||
	    if_indextoname(di.if_index, ks->ifname) == NULL)
		return;
	ks->valid = true;
	ks->if_rx_packets = read_sysfs_u64(ks->ifname, "rx_packets");
	ks->if_tx_packets = read_sysfs_u64(ks->ifname, "tx_packets");
	ks->if_rx_dropped = read_sysfs_u64(ks->ifname, "rx_dropped");
	ks->if_tx_dropped = read_sysfs_u64(ks->ifname, "tx_dropped");

	pthread_mutex_lock(&ks_lock);
	n = poll_packet_sockets(di.if_index, &p, &dr);
	for (i = 0; i < KSTATS_MAX_IF; i++) {
		if (ks_acc[i].ifindex == di.if_index) {
			slot = i;
			break;
		}
		if (ks_acc[i].ifindex == 0 && slot == KSTATS_MAX_IF)
			slot = i;
	}
	if (slot < KSTATS_MAX_IF) {
		ks_acc[slot].ifindex = di.if_index;
		ks_acc[slot].packets += p;
		ks_acc[slot].drops += dr;
		ks->sock_packets = ks_acc[slot].packets;
		ks->sock_drops = ks_acc[slot].drops;
	}
	pthread_mutex_unlock(&ks_lock);
	ks->sock_count = n > 0 ? n : -1;
}
