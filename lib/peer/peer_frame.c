/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_frame.c — build one RoCEv2 RC frame from scratch.
 *
 * Why it exists: responder and requester both emit frames; the headers,
 * lengths, IPv4 checksum and ICRC are done once here, and the result is
 * checked by lib/roce's own parser before it goes out (a frame we cannot
 * parse back is a bug, not something to send).
 */
#include <string.h>

#include <rte_byteorder.h>

#include "peer.h"

#define ETH_LEN 14
#define IP4_LEN 20
#define UDP_LEN 8

uint32_t
peer_build(uint8_t *out, uint32_t cap, const struct peer_addr *src,
	   const struct peer_addr *dst, uint16_t *ip_id, uint8_t opcode,
	   uint32_t dqpn, uint32_t psn, bool ackreq, const uint8_t *ext,
	   uint32_t ext_len, const uint8_t *payload, uint32_t payload_len)
{
	uint32_t pad = (4 - (payload_len & 3)) & 3;
	uint32_t bth_off = ETH_LEN + IP4_LEN + UDP_LEN;
	uint32_t len = bth_off + ROCE_BTH_LEN + ext_len + payload_len + pad + ROCE_ICRC_LEN;
	uint8_t *ip = out + ETH_LEN, *udp = ip + IP4_LEN, *bth = udp + UDP_LEN;
	struct roce_pkt p;

	if (len > cap)
		return 0;
	memcpy(out, dst->mac, 6);
	memcpy(out + 6, src->mac, 6);
	roce_st16(out + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	roce_st16(ip + 2, (uint16_t)(len - ETH_LEN));
	roce_st16(ip + 4, (*ip_id)++);
	roce_st16(ip + 6, 0x4000); /* DF, as RNICs send */
	ip[8] = 64;
	ip[9] = 17;
	roce_st16(ip + 10, 0);
	memcpy(ip + 12, &src->ip, 4);
	memcpy(ip + 16, &dst->ip, 4);
	roce_st16(udp, src->udp_sport);
	roce_st16(udp + 2, ROCE_UDP_PORT);
	roce_st16(udp + 4, (uint16_t)(len - ETH_LEN - IP4_LEN));
	roce_st16(udp + 6, 0);
	bth[0] = opcode;
	bth[1] = (uint8_t)(pad << ROCE_BTH_PAD_SHIFT);
	roce_st16(bth + 2, 0xffff);
	roce_st32(bth + 4, dqpn & ROCE_QPN_MASK);
	roce_st32(bth + 8, (ackreq ? ROCE_BTH_ACKREQ : 0) | (psn & ROCE_PSN_MASK));
	if (ext_len)
		memcpy(bth + ROCE_BTH_LEN, ext, ext_len);
	if (payload_len)
		memcpy(bth + ROCE_BTH_LEN + ext_len, payload, payload_len);
	memset(bth + ROCE_BTH_LEN + ext_len + payload_len, 0, pad + ROCE_ICRC_LEN);
	if (roce_parse(out, len, &p) != ROCE_OK)
		return 0;
	roce_ip_cksum_update(out, &p);
	roce_icrc_update(out, &p);
	return len;
}
