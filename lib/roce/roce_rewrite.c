/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_rewrite.c — in-place frame rewriters for atomic replacement.
 *
 * Why it exists: swordd turns a decided CAS into a WRITE and the WRITE's
 * ACK back into the ATOMIC ACK the client waits for, and it synthesizes
 * per-client ACKs.  Each rewrite changes only what it must (opcode, the
 * extension headers, lengths) and then re-derives what depends on them
 * (IPv4 checksum, UDP checksum if one was used, ICRC), so the frame stays
 * byte-identical to the original everywhere else.
 *
 * A CAS's AtomicETH starts with va and rkey exactly where a RETH has them,
 * so CAS → WRITE only writes the DMA length and the payload in place and
 * moves the ICRC (and any Ethernet padding) down.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "roce.h"
#include "roce_icrc_impl.h"

/*
 * Recompute a UDP checksum that the sender chose to use (RoCEv2 senders
 * normally leave it 0, which IPv4 allows; it is masked out of the ICRC).
 */
__rte_noinline void
roce_udp_cksum_redo(uint8_t *f, const struct roce_pkt *p)
{
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + p->l4_off);
	uint16_t cs;

	udp->dgram_cksum = 0;
	if (p->ip_version == 4)
		cs = rte_ipv4_udptcp_cksum(
			(const struct rte_ipv4_hdr *)(f + p->l3_off), udp);
	else
		cs = rte_ipv6_udptcp_cksum(
			(const struct rte_ipv6_hdr *)(f + p->l3_off), udp);
	udp->dgram_cksum = cs;
}

void
roce_resign(uint8_t *frame, const struct roce_pkt *p)
{
	roce_icrc_update(frame, p);     /* the UDP checksum covers the ICRC */
	roce_udp_cksum_fix(frame, p);
}

/*
 * Add delta to a 16-bit length field and, for the IPv4 total length, fold
 * the change into the header checksum incrementally (RFC 1624, eqn. 3):
 * cheaper than a full rte_ipv4_cksum, and a checksum that was wrong on
 * arrival stays wrong rather than being "repaired".
 */
static inline void
len_add(uint8_t *at, int32_t delta, uint8_t *ip4_cksum)
{
	uint16_t old = roce_ld16(at), new = (uint16_t)(old + delta);
	uint32_t sum;

	roce_st16(at, new);
	if (ip4_cksum == NULL)
		return;
	sum = (uint16_t)~roce_ld16(ip4_cksum) + (uint32_t)(uint16_t)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	roce_st16(ip4_cksum, (uint16_t)~sum);
}

/*
 * The datagram grew or shrank by delta bytes at its end: fix the IP and
 * UDP lengths (and the IPv4 checksum) and the offsets in *p.
 */
static inline void
set_lengths(uint8_t *f, struct roce_pkt *p, int32_t delta)
{
	uint8_t *ip = f + p->l3_off;

	len_add(f + p->l4_off + 4, delta, NULL);
	if (p->ip_version == 4)
		len_add(ip + 2, delta, ip + 10);
	else
		len_add(ip + 4, delta, NULL);
	p->frame_len = (uint16_t)(p->frame_len + delta);
	p->icrc_off = (uint16_t)(p->frame_len - ROCE_ICRC_LEN);
	p->payload_off = (uint16_t)(p->bth_off + p->oi->hdr_len);
	p->payload_len = (uint16_t)(p->icrc_off - p->payload_off);
}

/*
 * Resize the datagram from its current end (p->frame_len) by delta bytes,
 * moving the Ethernet trailer (bytes up to *len_io) along.
 */
static inline int
resize(uint8_t *f, uint32_t *len_io, uint32_t cap, const struct roce_pkt *p,
       int32_t delta)
{
	uint32_t old_end = p->frame_len;
	uint32_t new_len = *len_io + delta;

	if (unlikely(new_len > cap || new_len > UINT16_MAX))
		return -ENOSPC;
	if (unlikely(*len_io != old_end)) {
		if (*len_io < old_end)
			return -EINVAL;
		memmove(f + old_end + delta, f + old_end, *len_io - old_end);
	}
	*len_io = new_len;
	return 0;
}

static __rte_always_inline void
set_opcode(uint8_t *f, struct roce_pkt *p, uint8_t opcode)
{
	f[p->bth_off] = opcode;
	p->opcode = opcode;
	p->oi = roce_opcode(opcode);
}

/* sign: false leaves the ICRC and a UDP checksum to roce_icrc_sign_burst */
static __rte_always_inline int
atomic_to_write(uint8_t *frame, uint32_t *frame_len_io, uint32_t cap,
		struct roce_pkt *p, const uint64_t *write_value, bool sign)
{
	uint32_t old_hdr = p->oi->hdr_len;
	uint32_t new_bth_len = ROCE_BTH_LEN + ROCE_RETH_LEN +
			       (write_value ? sizeof(uint64_t) : 0) +
			       ROCE_ICRC_LEN;
	uint8_t *reth;
	int32_t delta;
	int rc;

	if (unlikely(!(p->oi->flags & ROCE_F_ATOMIC) ||
		     !(p->oi->flags & ROCE_F_REQUEST) || p->payload_len))
		return -EINVAL;
	delta = (int32_t)new_bth_len - (int32_t)(old_hdr + ROCE_ICRC_LEN);
	rc = resize(frame, frame_len_io, cap, p, delta);
	if (unlikely(rc))
		return rc;

	/* va and rkey stay where the AtomicETH had them. */
	reth = frame + p->bth_off + ROCE_BTH_LEN;
	if (write_value) {
		roce_st32(reth + 12, sizeof(uint64_t));
		roce_st64(reth + ROCE_RETH_LEN, *write_value);
	} else {
		roce_st32(reth + 12, 0);
	}
	set_opcode(frame, p, ROCE_RC_WRITE_ONLY);
	frame[p->bth_off + 1] &= (uint8_t)~ROCE_BTH_PAD_MASK;
	p->pad = 0;
	set_lengths(frame, p, delta);
	if (sign)
		roce_resign(frame, p);
	return 0;
}

int
roce_atomic_to_write(uint8_t *frame, uint32_t *frame_len_io, uint32_t cap,
		     struct roce_pkt *p, const uint64_t *write_value)
{
	return atomic_to_write(frame, frame_len_io, cap, p, write_value, true);
}

int
roce_atomic_to_write_defer(uint8_t *frame, uint32_t *frame_len_io,
			   uint32_t cap, struct roce_pkt *p,
			   const uint64_t *write_value)
{
	return atomic_to_write(frame, frame_len_io, cap, p, write_value, false);
}

static __rte_always_inline int
ack_to_atomic_ack(uint8_t *frame, uint32_t *frame_len_io, uint32_t cap,
		  struct roce_pkt *p, uint64_t orig, bool sign)
{
	int rc;

	/* Only a positive ACK can become an ATOMIC ACK: a NAK stays a NAK. */
	if (unlikely(p->opcode != ROCE_RC_ACKNOWLEDGE ||
		     roce_syndrome_kind(roce_get_syndrome(frame, p)) !=
		     ROCE_AETH_ACK))
		return -EINVAL;
	rc = resize(frame, frame_len_io, cap, p, ROCE_ATOMIC_ACK_ETH_LEN);
	if (unlikely(rc))
		return rc;
	roce_st64(frame + p->bth_off + ROCE_BTH_LEN + ROCE_AETH_LEN, orig);
	set_opcode(frame, p, ROCE_RC_ATOMIC_ACKNOWLEDGE);
	set_lengths(frame, p, ROCE_ATOMIC_ACK_ETH_LEN);
	if (sign)
		roce_resign(frame, p);
	return 0;
}

int
roce_ack_to_atomic_ack(uint8_t *frame, uint32_t *frame_len_io, uint32_t cap,
		       struct roce_pkt *p, uint64_t orig)
{
	return ack_to_atomic_ack(frame, frame_len_io, cap, p, orig, true);
}

int
roce_ack_to_atomic_ack_defer(uint8_t *frame, uint32_t *frame_len_io,
			     uint32_t cap, struct roce_pkt *p, uint64_t orig)
{
	return ack_to_atomic_ack(frame, frame_len_io, cap, p, orig, false);
}

int
roce_build_ack_unsigned(uint8_t *out, uint32_t cap, const uint8_t *tmpl,
			const struct roce_pkt *tmpl_p, uint32_t psn, uint8_t syndrome,
			uint32_t msn, bool with_orig, uint64_t orig,
			struct roce_pkt *out_p)
{
	uint32_t hdrs = tmpl_p->bth_off + ROCE_BTH_LEN;
	uint32_t bth_len = ROCE_BTH_LEN + ROCE_AETH_LEN +
			   (with_orig ? ROCE_ATOMIC_ACK_ETH_LEN : 0) +
			   ROCE_ICRC_LEN;
	uint8_t *bth;

	if (unlikely(tmpl_p->oi == NULL || tmpl_p->bth_off == 0))
		return -EINVAL;
	/* A NAK cannot carry an atomic result. */
	if (unlikely(with_orig && roce_syndrome_kind(syndrome) != ROCE_AETH_ACK))
		return -EINVAL;
	if (unlikely(tmpl_p->bth_off + bth_len > cap))
		return -ENOSPC;

	memcpy(out, tmpl, hdrs);
	*out_p = *tmpl_p;
	set_opcode(out, out_p, with_orig ? ROCE_RC_ATOMIC_ACKNOWLEDGE :
					   ROCE_RC_ACKNOWLEDGE);
	bth = out + out_p->bth_off;
	bth[1] &= (uint8_t)~ROCE_BTH_PAD_MASK;   /* no payload, no pad */
	out_p->pad = 0;
	roce_set_psn(out, out_p, psn);
	out_p->psn = psn & ROCE_PSN_MASK;
	roce_set_aeth(out, out_p, syndrome, msn);
	if (with_orig)
		roce_st64(bth + ROCE_BTH_LEN + ROCE_AETH_LEN, orig);
	set_lengths(out, out_p, (int32_t)(out_p->bth_off + bth_len) -
				(int32_t)out_p->frame_len);
	/* a new packet: its IPv4 checksum is computed, not carried over */
	roce_ip_cksum_update(out, out_p);
	return out_p->frame_len;
}

int
roce_build_ack(uint8_t *out, uint32_t cap, const uint8_t *tmpl,
	       const struct roce_pkt *tmpl_p, uint32_t psn, uint8_t syndrome,
	       uint32_t msn, bool with_orig, uint64_t orig,
	       struct roce_pkt *out_p)
{
	int n = roce_build_ack_unsigned(out, cap, tmpl, tmpl_p, psn, syndrome, msn,
					with_orig, orig, out_p);

	if (n >= 0)
		roce_resign(out, out_p);
	return n;
}


int
roce_build_zero_write(uint8_t *out, uint32_t cap, const uint8_t *tmpl,
		      uint32_t hdrs, uint32_t l3_off, uint32_t l4_off,
		      uint32_t qpn, uint32_t psn, struct roce_pkt *out_p)
{
	const uint32_t len = hdrs + ROCE_RETH_LEN + ROCE_ICRC_LEN;
	uint8_t *bth;

	if (unlikely(hdrs < ROCE_BTH_LEN || l4_off + 8 > hdrs || len > cap))
		return -ENOSPC;
	memcpy(out, tmpl, hdrs);
	memset(out + hdrs, 0, ROCE_RETH_LEN + ROCE_ICRC_LEN);
	roce_st16(out + l3_off + 2, (uint16_t)(len - l3_off));   /* IPv4 total */
	roce_st16(out + l4_off + 4, (uint16_t)(len - l4_off));   /* UDP length */
	roce_st16(out + l4_off + 6, 0);                          /* no UDP csum */
	bth = out + hdrs - ROCE_BTH_LEN;
	bth[0] = ROCE_RC_WRITE_ONLY;
	bth[1] &= (uint8_t)~ROCE_BTH_PAD_MASK;
	roce_st32(bth + 4, (roce_ld32(bth + 4) & ~ROCE_QPN_MASK) | (qpn & ROCE_QPN_MASK));
	roce_st32(bth + 8, ROCE_BTH_ACKREQ | (psn & ROCE_PSN_MASK));
	if (roce_parse(out, len, out_p) != ROCE_OK)
		return -EINVAL;
	roce_ip_cksum_update(out, out_p);   /* a new length */
	roce_resign(out, out_p);
	return (int)len;
}

/* ---------------------------------------------------------------------- */
/* mbuf wrappers: the frame is the first (only) segment's data. */

static int
mbuf_apply(struct rte_mbuf *m, uint32_t new_len)
{
	uint32_t old_len = rte_pktmbuf_data_len(m);

	if (new_len > old_len) {
		if (rte_pktmbuf_append(m, (uint16_t)(new_len - old_len)) == NULL)
			return -ENOSPC;
	} else if (new_len < old_len) {
		if (rte_pktmbuf_trim(m, (uint16_t)(old_len - new_len)) != 0)
			return -EINVAL;
	}
	return 0;
}

int
roce_mbuf_atomic_to_write(struct rte_mbuf *m, struct roce_pkt *p,
			  const uint64_t *write_value)
{
	uint32_t len = rte_pktmbuf_data_len(m);
	int rc;

	if (unlikely(m->nb_segs != 1))
		return -EINVAL;
	rc = roce_atomic_to_write(rte_pktmbuf_mtod(m, uint8_t *), &len,
				  len + rte_pktmbuf_tailroom(m), p,
				  write_value);
	return rc ? rc : mbuf_apply(m, len);
}

int
roce_mbuf_ack_to_atomic_ack(struct rte_mbuf *m, struct roce_pkt *p,
			    uint64_t orig)
{
	uint32_t len = rte_pktmbuf_data_len(m);
	int rc;

	if (unlikely(m->nb_segs != 1))
		return -EINVAL;
	rc = roce_ack_to_atomic_ack(rte_pktmbuf_mtod(m, uint8_t *), &len,
				    len + rte_pktmbuf_tailroom(m), p, orig);
	return rc ? rc : mbuf_apply(m, len);
}
