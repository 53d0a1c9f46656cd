/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_xdp — XDP steering program for swordd on net_af_xdp.
 *
 * Why it exists: a middlebox host keeps its own traffic (management, ssh,
 * ARP, ping) in the kernel on the same NIC that swordd uses.  This program
 * sends to swordd's AF_XDP socket only the RoCEv2 frames of the memory
 * servers swordd manages (IPv4, UDP to the server's RoCE port, the server
 * as destination or source) and passes every other frame to the kernel.
 *
 * Loaded by DPDK: --vdev net_af_xdp0,iface=IF,xdp_prog=sword_xdp.bpf.o
 * (DPDK inserts its socket into the map named xsks_map).  The managed
 * servers come from swordd's config: sword-xdp-servers -c FILE --iface IF
 * fills sword_servers once the program is attached.  An empty map passes
 * everything to the kernel.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define VLAN_TPID 0x8100
#define MAX_QUEUES 64
#define MAX_SERVERS 1024

/* rx queue -> AF_XDP socket (filled by DPDK's net_af_xdp) */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* managed server IPv4 (network order) -> its RoCE UDP port (host order) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_SERVERS);
	__type(key, __u32);
	__type(value, __u16);
} sword_servers SEC(".maps");

SEC("xdp")
int sword_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u16 proto, *port;
	void *l3;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(VLAN_TPID)) {
		/* one 802.1Q tag: TCI, then the inner EtherType */
		if (l3 + 4 > end)
			return XDP_PASS;
		proto = *(__u16 *)(l3 + 2);
		l3 += 4;
	}
	if (proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = l3;
	if ((void *)(ip + 1) > end || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	/* a fragment has no UDP header of its own: the kernel reassembles */
	if (ip->frag_off & bpf_htons(0x3fff))
		return XDP_PASS;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	port = bpf_map_lookup_elem(&sword_servers, &ip->daddr);
	if (port == NULL || *port != bpf_ntohs(udp->dest))
		port = bpf_map_lookup_elem(&sword_servers, &ip->saddr);
	if (port == NULL || *port != bpf_ntohs(udp->dest))
		return XDP_PASS;
	/* no socket on this queue: the kernel, rather than a drop */
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
