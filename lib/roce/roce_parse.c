/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_parse.c — classify a frame and locate its RoCEv2 headers.
 *
 * Why it exists: every packet swordd sees goes through here first, so it
 * must be cheap (a straight line of loads and compares, the opcode table
 * for everything after the BTH) and safe on hostile input: each header is
 * checked against the buffer *and* against the IP/UDP lengths before it is
 * read, and each inconsistency has its own status so drops can be counted
 * by reason.
 *
 * Order of decisions: a frame is "not RoCE" (> 0) as soon as it provably
 * is not IP, not UDP, or not to port 4791; lengths of non-UDP IP packets
 * are not judged.  For UDP the IP lengths are checked before the port is
 * read (the port must lie inside the datagram to mean anything).  A
 * non-first IPv4 fragment has no UDP header and is "not RoCE port".
 *
 * roce_parse() first tries the shape nearly all RoCEv2 traffic has
 * (untagged IPv4, 20-byte header) with a few wide loads and a per-opcode
 * table; anything else falls back to parse_full(), which covers VLAN,
 * IPv4 options, IPv6 and every error.  The tests check that both agree.
 */
#include <stddef.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "roce.h"
#include "roce_internal.h"

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define UDP_HLEN 8
#define IPPROTO_UDP_ 17
#define IPV4_MF 0x2000
#define IPV4_OFFMASK 0x1fff

/*
 * Payload rules: pad count within the payload; payload + pad a multiple of
 * 4 on the wire (IBTA 9.2.1.3); none for opcodes that carry none; CNP has
 * exactly its 16 reserved bytes.
 */
static inline int
payload_status(const struct roce_opcode_info *oi, uint32_t payload_len,
	       uint32_t pad)
{
	if (unlikely(pad > payload_len))
		return ROCE_ERR_BAD_PAD;
	if (oi->fixed_payload)
		return payload_len == oi->fixed_payload ? ROCE_OK :
		       ROCE_ERR_BAD_PAYLOAD;
	if (payload_len && (!(oi->flags & ROCE_F_PAYLOAD) || (payload_len & 3)))
		return ROCE_ERR_BAD_PAYLOAD;
	return ROCE_OK;
}

/*
 * After L3: l4 is the UDP header offset, l4_len the UDP datagram length
 * the IP header announces (already known to fit the buffer).
 */
static inline int
parse_l4(const uint8_t *f, uint32_t l4, uint32_t l4_len, struct roce_pkt *p)
{
	const struct roce_opcode_info *oi;
	uint32_t bth, bth_len, hdr_len, payload_len, w;
	uint8_t opcode, flags;
	int rc;

	bth = l4 + UDP_HLEN;
	p->l4_off = (uint16_t)l4;
	p->bth_off = (uint16_t)bth;
	if (unlikely(roce_ld16(f + l4 + 4) != l4_len))
		return ROCE_ERR_BAD_UDP_LEN;
	bth_len = l4_len - UDP_HLEN;            /* BTH .. ICRC */
	if (unlikely(bth_len < ROCE_BTH_LEN + ROCE_ICRC_LEN))
		return ROCE_ERR_TRUNC_BTH;

	opcode = f[bth];
	flags = f[bth + 1];
	p->opcode = opcode;
	if (unlikely(flags & ROCE_BTH_TVER_MASK))
		return ROCE_ERR_BAD_TVER;
	oi = roce_opcode(opcode);
	p->oi = oi;
	if (unlikely(!(oi->flags & ROCE_F_VALID)))
		return ROCE_ERR_UNKNOWN_OPCODE;
	hdr_len = oi->hdr_len;
	if (unlikely(bth_len < hdr_len + ROCE_ICRC_LEN))
		return ROCE_ERR_TRUNC_EXT;
	payload_len = bth_len - hdr_len - ROCE_ICRC_LEN;
	p->pad = (flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	rc = payload_status(oi, payload_len, p->pad);
	if (unlikely(rc != ROCE_OK))
		return rc;

	p->payload_off = (uint16_t)(bth + hdr_len);
	p->payload_len = (uint16_t)payload_len;
	p->icrc_off = (uint16_t)(l4 + l4_len - ROCE_ICRC_LEN);
	p->frame_len = (uint16_t)(l4 + l4_len);
	w = roce_ld32(f + bth + 4);
	p->qpn = w & ROCE_QPN_MASK;
	w = roce_ld32(f + bth + 8);
	p->psn = w & ROCE_PSN_MASK;
	return ROCE_OK;
}

static inline int
parse_ipv4(const uint8_t *f, uint32_t len, uint32_t l3, struct roce_pkt *p)
{
	uint32_t ihl, tot_len, frag, l4;
	uint8_t vihl;

	p->ip_version = 4;
	if (unlikely(len < l3 + IPV4_HLEN))
		return ROCE_ERR_TRUNC_L3;
	vihl = f[l3];
	ihl = (vihl & 0x0f) << 2;
	if (unlikely((vihl >> 4) != 4 || ihl < IPV4_HLEN))
		return ROCE_ERR_BAD_IP_HDR;
	if (f[l3 + 9] != IPPROTO_UDP_)
		return ROCE_NOT_UDP;
	if (unlikely(len < l3 + ihl))
		return ROCE_ERR_TRUNC_L3;
	tot_len = roce_ld16(f + l3 + 2);
	if (unlikely(tot_len < ihl || l3 + tot_len > len))
		return ROCE_ERR_BAD_IP_LEN;
	frag = roce_ld16(f + l3 + 6);
	/* A later fragment has no UDP header: nothing says it is RoCE. */
	if (unlikely(frag & IPV4_OFFMASK))
		return ROCE_NOT_ROCE_PORT;
	if (unlikely(tot_len < ihl + UDP_HLEN))
		return ROCE_ERR_TRUNC_L4;
	l4 = l3 + ihl;
	if (roce_ld16(f + l4 + 2) != ROCE_UDP_PORT)
		return ROCE_NOT_ROCE_PORT;
	if (unlikely(frag & IPV4_MF))
		return ROCE_ERR_IP_FRAGMENT;
	memcpy(&p->src_ip4, f + l3 + 12, 4);
	memcpy(&p->dst_ip4, f + l3 + 16, 4);
	return parse_l4(f, l4, tot_len - ihl, p);
}

static inline int
parse_ipv6(const uint8_t *f, uint32_t len, uint32_t l3, struct roce_pkt *p)
{
	uint32_t plen, l4;

	p->ip_version = 6;
	p->src_ip4 = 0;
	p->dst_ip4 = 0;
	if (unlikely(len < l3 + IPV6_HLEN))
		return ROCE_ERR_TRUNC_L3;
	if (unlikely((f[l3] >> 4) != 6))
		return ROCE_ERR_BAD_IP_HDR;
	/* RoCEv2 puts UDP right after the fixed header; anything else
	 * (extension headers) is not ours. */
	if (f[l3 + 6] != IPPROTO_UDP_)
		return ROCE_NOT_UDP;
	plen = roce_ld16(f + l3 + 4);
	if (unlikely(l3 + IPV6_HLEN + plen > len))
		return ROCE_ERR_BAD_IP_LEN;
	if (unlikely(plen < UDP_HLEN))
		return ROCE_ERR_TRUNC_L4;
	l4 = l3 + IPV6_HLEN;
	if (roce_ld16(f + l4 + 2) != ROCE_UDP_PORT)
		return ROCE_NOT_ROCE_PORT;
	return parse_l4(f, l4, plen, p);
}

/* Every case, with a precise status for each way a frame can be wrong. */
static int
parse_full(const uint8_t *f, uint32_t len, struct roce_pkt *p)
{
	uint32_t l3 = ETH_HLEN;
	uint16_t type;

	p->has_vlan = 0;
	p->vlan_tci = 0;
	if (unlikely(len < ETH_HLEN))
		return ROCE_ERR_TRUNC_L2;
	/* Frames are bounded by 16-bit offsets in struct roce_pkt. */
	if (unlikely(len > UINT16_MAX))
		len = UINT16_MAX;
	type = roce_ld16(f + 12);
	if (type == ETHERTYPE_VLAN) {
		if (unlikely(len < ETH_HLEN + VLAN_HLEN))
			return ROCE_ERR_TRUNC_L2;
		p->has_vlan = 1;
		p->vlan_tci = roce_ld16(f + 14);
		type = roce_ld16(f + 16);
		l3 = ETH_HLEN + VLAN_HLEN;
	}
	p->l3_off = (uint16_t)l3;
	if (likely(type == ETHERTYPE_IPV4))
		return parse_ipv4(f, len, l3, p);
	if (type == ETHERTYPE_IPV6)
		return parse_ipv6(f, len, l3, p);
	return ROCE_NOT_IP;
}

int
roce_parse_full(const uint8_t *frame, uint32_t len, struct roce_pkt *p)
{
	return parse_full(frame, len, p);
}

/*
 * The common case — untagged IPv4 without options, not fragmented, UDP to
 * 4791 with consistent lengths, a known opcode whose payload needs no
 * further checks — tested with a few wide loads.  Anything else (including
 * every malformed frame) goes through parse_full, which gives the same
 * answer for well-formed frames and a precise status for the rest.
 */
#define FAST_MIN_LEN (ETH_HLEN + IPV4_HLEN + UDP_HLEN + ROCE_BTH_LEN + \
		      ROCE_ICRC_LEN)
#define FAST_L4 (ETH_HLEN + IPV4_HLEN)
#define FAST_BTH (FAST_L4 + UDP_HLEN)

static inline uint64_t
ld64le(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return rte_le_to_cpu_64(v);
}

static inline uint32_t
ld32le(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_le_to_cpu_32(v);
}

/*
 * Per opcode, what the fast path needs in one cache line pair: the header
 * offsets word as stored in struct roce_pkt, the least BTH..ICRC length
 * (0xffff for opcodes we do not know, so they always fall back), and the
 * payload rule as "(payload & mask) == fixed", which also refuses frames
 * too short for the opcode's headers.  Derived from the opcode
 * table once at start-up.
 */
struct fast_op {
	const struct roce_opcode_info *oi;
	uint64_t offs;          /* l3_off, l4_off, bth_off, payload_off */
	uint32_t min_bth_len;
	/* the payload length is computed as bth_len - min_bth_len in 32
	 * bits: a frame too short for the headers wraps it to a value with
	 * the high 16 bits set, which the mask catches too */
	uint32_t pay_mask;
	uint32_t pay_fixed;
	uint32_t unused;        /* 32 bytes: the index is a shift */
};

static struct fast_op fast_ops[256];

RTE_INIT(roce_fast_ops_init)
{
	for (unsigned int op = 0; op < 256; op++) {
		const struct roce_opcode_info *oi = roce_opcode((uint8_t)op);
		struct fast_op *fo = &fast_ops[op];
		struct roce_pkt p = {
			.l3_off = ETH_HLEN, .l4_off = FAST_L4,
			.bth_off = FAST_BTH,
			.payload_off = (uint16_t)(FAST_BTH + oi->hdr_len),
		};

		fo->oi = oi;
		memcpy(&fo->offs, (const uint8_t *)&p +
		       offsetof(struct roce_pkt, l3_off), sizeof(fo->offs));
		if (!(oi->flags & ROCE_F_VALID)) {
			fo->min_bth_len = UINT16_MAX;
			fo->pay_mask = UINT32_MAX;
			fo->pay_fixed = 0;
			continue;
		}
		fo->min_bth_len = oi->hdr_len + ROCE_ICRC_LEN;
		if (oi->fixed_payload || !(oi->flags & ROCE_F_PAYLOAD)) {
			fo->pay_mask = UINT32_MAX;
			fo->pay_fixed = oi->fixed_payload;
		} else {
			fo->pay_mask = 0xffff0000u | 3;
			fo->pay_fixed = 0;
		}
	}
}

/* The fast path stores four offsets as one word. */
_Static_assert(sizeof(struct fast_op) == 32, "fast_op is 32 bytes");
_Static_assert(offsetof(struct roce_pkt, l4_off) ==
	       offsetof(struct roce_pkt, l3_off) + 2 &&
	       offsetof(struct roce_pkt, bth_off) ==
	       offsetof(struct roce_pkt, l3_off) + 4 &&
	       offsetof(struct roce_pkt, payload_off) ==
	       offsetof(struct roce_pkt, l3_off) + 6, "roce_pkt layout");

int
roce_parse(const uint8_t *f, uint32_t len, struct roce_pkt *p)
{
	const struct fast_op *fo;
	uint32_t tot, bth_len, payload_len, w;
	uint64_t q, a;
	uint8_t opcode;

	/* FAST_MIN_LEN <= len <= UINT16_MAX (offsets in *p are 16 bit) */
	if (unlikely(len - FAST_MIN_LEN > UINT16_MAX - FAST_MIN_LEN))
		return parse_full(f, len, p);
	/* bytes 12..14: ethertype 0x0800, version 4 + IHL 5 */
	if (unlikely((ld32le(f + 12) & 0x00ffffff) != 0x00450008))
		return parse_full(f, len, p);
	/* bytes 16..23: total length, id, flags+fragment, TTL, protocol:
	 * no MF, no fragment offset, protocol UDP */
	q = ld64le(f + 16);
	if (unlikely((q & 0xff00ff3f00000000ull) != (17ull << 56)))
		return parse_full(f, len, p);
	tot = rte_be_to_cpu_16((uint16_t)q);
	/* UDP destination port and length, in wire order, in one compare */
	w = rte_cpu_to_be_16((uint16_t)(tot - IPV4_HLEN));
	if (unlikely(ld32le(f + FAST_L4 + 2) !=
		     ((w << 16) | rte_cpu_to_be_16(ROCE_UDP_PORT)) ||
		     ETH_HLEN + tot > len))
		return parse_full(f, len, p);
	/* BTH: TVer 0 and no pad (padded payloads take the long way), a
	 * known opcode whose headers fit, an allowed payload length */
	opcode = f[FAST_BTH];
	fo = &fast_ops[opcode];
	bth_len = tot - (IPV4_HLEN + UDP_HLEN);
	payload_len = bth_len - fo->min_bth_len;
	if (unlikely((f[FAST_BTH + 1] & (ROCE_BTH_TVER_MASK |
					 ROCE_BTH_PAD_MASK)) ||
		     (payload_len & fo->pay_mask) != fo->pay_fixed))
		return parse_full(f, len, p);

	p->oi = fo->oi;
	memcpy((uint8_t *)p + offsetof(struct roce_pkt, l3_off), &fo->offs,
	       sizeof(fo->offs));
	p->payload_len = (uint16_t)payload_len;
	p->icrc_off = (uint16_t)(ETH_HLEN + tot - ROCE_ICRC_LEN);
	p->frame_len = (uint16_t)(ETH_HLEN + tot);
	p->vlan_tci = 0;
	p->has_vlan = 0;
	p->ip_version = 4;
	p->opcode = opcode;
	p->pad = 0;
	a = ld64le(f + FAST_BTH + 4);
	p->qpn = rte_be_to_cpu_32((uint32_t)a) & ROCE_QPN_MASK;
	p->psn = rte_be_to_cpu_32((uint32_t)(a >> 32)) & ROCE_PSN_MASK;
	a = ld64le(f + ETH_HLEN + 12);
	p->src_ip4 = (uint32_t)a;
	p->dst_ip4 = (uint32_t)(a >> 32);
	return ROCE_OK;
}

/*
 * A chained mbuf can still be classified: copy the first bytes (enough for
 * Ethernet, a VLAN tag, a full IPv4 header or an IPv6 header, and UDP)
 * and read only the protocol fields.  If it is provably not RoCE, say so;
 * if it is RoCE, it is refused as ROCE_ERR_SEGMENTED (the ICRC and the
 * rewriters work on contiguous bytes), never judged on partial lengths.
 */
static int
classify_chained(const struct rte_mbuf *m)
{
	uint8_t hdr[ETH_HLEN + VLAN_HLEN + 60 + UDP_HLEN];
	uint32_t n = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)sizeof(hdr));
	const uint8_t *f = rte_pktmbuf_read(m, 0, n, hdr);
	uint32_t l3 = ETH_HLEN, l4;
	uint16_t type;

	if (f == NULL || n < ETH_HLEN)
		return ROCE_ERR_SEGMENTED;
	type = roce_ld16(f + 12);
	if (type == ETHERTYPE_VLAN) {
		if (n < ETH_HLEN + VLAN_HLEN)
			return ROCE_ERR_SEGMENTED;
		type = roce_ld16(f + 16);
		l3 += VLAN_HLEN;
	}
	if (type == ETHERTYPE_IPV4) {
		if (n < l3 + IPV4_HLEN)
			return ROCE_ERR_SEGMENTED;
		if (f[l3 + 9] != IPPROTO_UDP_)
			return ROCE_NOT_UDP;
		if (roce_ld16(f + l3 + 6) & IPV4_OFFMASK)
			return ROCE_NOT_ROCE_PORT;
		l4 = l3 + ((f[l3] & 0x0f) << 2);
	} else if (type == ETHERTYPE_IPV6) {
		if (n < l3 + IPV6_HLEN)
			return ROCE_ERR_SEGMENTED;
		if (f[l3 + 6] != IPPROTO_UDP_)
			return ROCE_NOT_UDP;
		l4 = l3 + IPV6_HLEN;
	} else {
		return ROCE_NOT_IP;
	}
	if (n < l4 + UDP_HLEN)
		return ROCE_ERR_SEGMENTED;
	return roce_ld16(f + l4 + 2) == ROCE_UDP_PORT ? ROCE_ERR_SEGMENTED
						 : ROCE_NOT_ROCE_PORT;
}

int
roce_parse_mbuf(const struct rte_mbuf *m, struct roce_pkt *p)
{
	int rc = roce_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			    rte_pktmbuf_data_len(m), p);

	if (unlikely(m->nb_segs > 1) && rc <= 0)
		return classify_chained(m);
	return rc;
}

uint32_t
roce_req_psns(const uint8_t *frame, const struct roce_pkt *p, uint32_t pmtu)
{
	uint32_t dma_len;

	if (!(p->oi->flags & ROCE_F_REQUEST))
		return 0;
	if (p->opcode != ROCE_RC_READ_REQUEST || pmtu == 0)
		return p->oi->psns;
	dma_len = roce_ld32(frame + p->bth_off + p->oi->off[ROCE_HDR_RETH] + 12);
	if (dma_len == 0)
		return 1;
	return (uint32_t)(((uint64_t)dma_len + pmtu - 1) / pmtu);
}
