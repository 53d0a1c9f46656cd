/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_ctl.c — the out-of-band QP (re)connect messages of roce-peer.
 *
 * Why it exists: a real application that re-creates its QPs tells the
 * memory server out of band (Sherman: memcached; others: TCP or RDMA CM)
 * so that the server moves its own QP back to RTR at the agreed initial
 * PSN.  roce-peer models that exchange with one small UDP datagram each
 * way (RECONNECT from the client, RECONNECTED back), outside RoCE
 * (UDP port PEER_CTL_PORT, not 4791), so swordd forwards it untouched and
 * sees only its effect: the same QPNs starting again at the same PSN.
 *
 * Both ends read the datagrams from their AF_PACKET stream rather than
 * from the UDP socket, so that a reset takes effect exactly between the
 * frames that arrived before and after it on the wire.
 *
 * Message (big-endian, 24 bytes):
 *   "SWQP" | version 1 | type | 0 0 | incarnation | client QPN | server QPN | PSN
 */
#include <string.h>

#include "peer.h"

#define CTL_MAGIC "SWQP"
#define CTL_VERSION 1
#define ETH_LEN 14
#define UDP_LEN 8

uint32_t
peer_ctl_encode(uint8_t *buf, uint32_t cap, const struct peer_ctl_msg *m)
{
	if (cap < PEER_CTL_LEN)
		return 0;
	memcpy(buf, CTL_MAGIC, 4);
	buf[4] = CTL_VERSION;
	buf[5] = m->type;
	buf[6] = buf[7] = 0;
	roce_st32(buf + 8, m->incarnation);
	roce_st32(buf + 12, m->client_qpn);
	roce_st32(buf + 16, m->server_qpn);
	roce_st32(buf + 20, m->psn);
	return PEER_CTL_LEN;
}

bool
peer_ctl_decode(const uint8_t *buf, uint32_t len, struct peer_ctl_msg *m)
{
	if (len < PEER_CTL_LEN || memcmp(buf, CTL_MAGIC, 4) || buf[4] != CTL_VERSION ||
	    (buf[5] != PEER_CTL_RECONNECT && buf[5] != PEER_CTL_RECONNECTED))
		return false;
	m->type = buf[5];
	m->incarnation = roce_ld32(buf + 8);
	m->client_qpn = roce_ld32(buf + 12) & ROCE_QPN_MASK;
	m->server_qpn = roce_ld32(buf + 16) & ROCE_QPN_MASK;
	m->psn = roce_ld32(buf + 20) & ROCE_PSN_MASK;
	return true;
}

bool
peer_ctl_from_frame(const uint8_t *f, uint32_t len, uint16_t port, struct peer_ctl_msg *m,
		    uint32_t *src_ip, uint32_t *dst_ip, uint16_t *src_port, uint16_t *dst_port)
{
	const uint8_t *ip = f + ETH_LEN, *udp;
	uint32_t ihl;

	if (len < ETH_LEN + 20 + UDP_LEN || roce_ld16(f + 12) != 0x0800 || (ip[0] >> 4) != 4)
		return false;
	ihl = (uint32_t)(ip[0] & 15) * 4;
	if (ihl < 20 || ip[9] != 17 || (roce_ld16(ip + 6) & 0x3fff) != 0 ||
	    len < ETH_LEN + ihl + UDP_LEN)
		return false;   /* not UDP, or a fragment */
	udp = ip + ihl;
	if (roce_ld16(udp) != port && roce_ld16(udp + 2) != port)
		return false;
	if (roce_ld16(udp + 4) < UDP_LEN || ETH_LEN + ihl + roce_ld16(udp + 4) > len ||
	    !peer_ctl_decode(udp + UDP_LEN, roce_ld16(udp + 4) - UDP_LEN, m))
		return false;
	memcpy(src_ip, ip + 12, 4);
	memcpy(dst_ip, ip + 16, 4);
	*src_port = roce_ld16(udp);
	*dst_port = roce_ld16(udp + 2);
	return true;
}
