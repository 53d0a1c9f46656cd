/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_frame.c — the header rewrites of stitching: a request takes the
 * lane's addressing (what the server QP checks about its peer: Linux rxe
 * compares the source address of an RC packet with the QP's; ConnectX
 * the GID), a response its client's.  IPv4 only: servers are managed by
 * IPv4 address.
 */
#include <string.h>

#include "remap_internal.h"

/*
 * Replace the IPv4 address at ip_off + at and fold the change into the
 * header checksum (RFC 1624 eqn. 3): cheaper than summing the header
 * again, and a checksum that was wrong on arrival stays wrong.  On the
 * 16-bit words as they lie in memory: a one's-complement sum comes out
 * the same in either byte order (RFC 1071 2.(B)), so nothing is swapped.
 */
static void
set_ip4_addr(uint8_t *f, const struct roce_pkt *p, unsigned int at, uint32_t addr)
{
	uint8_t *a = f + p->l3_off + at, *ck = f + p->l3_off + 10;
	uint32_t old, sum;
	uint16_t c;

	memcpy(&old, a, 4);
	memcpy(&c, ck, 2);
	sum = (uint32_t)(uint16_t)~c + (uint16_t)~old + (uint16_t)~(old >> 16) +
	      (uint16_t)addr + (addr >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	c = (uint16_t)~sum;
	memcpy(a, &addr, 4);
	memcpy(ck, &c, 2);
}

void
rmp_set_src(uint8_t *f, const struct roce_pkt *p, const uint8_t *src_mac,
	    const uint8_t *dst_mac, uint32_t src_ip, uint16_t sport)
{
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	if (p->src_ip4 != src_ip)
		set_ip4_addr(f, p, 12, src_ip);
	roce_st16(f + p->l4_off, sport);
}

void
rmp_set_dst(uint8_t *f, struct roce_pkt *p, const uint8_t *dst_mac, uint32_t dst_ip)
{
	memcpy(f, dst_mac, 6);
	if (p->dst_ip4 != dst_ip)
		set_ip4_addr(f, p, 16, dst_ip);
	p->dst_ip4 = dst_ip;
}

/* The ICRC after the change (the IPv4 checksum was kept by set_ip4_addr);
 * a non-zero UDP checksum is computed again too. */
void
rmp_resign(uint8_t *f, const struct roce_pkt *p)
{
	uint16_t ucs;

	memcpy(&ucs, f + p->l4_off + 6, sizeof(ucs));
	if (ucs != 0) {
		roce_resign(f, p);
		return;
	}
	roce_icrc_update(f, p);
}

int
rmp_build_aeth(struct remap *r, const struct rmp_lane *l, const struct rc_conn *c,
	       const struct rmp_conn *rcn, uint32_t psn, uint8_t syndrome,
	       uint32_t msn, const uint64_t *orig, struct remap_emit *out)
{
	struct roce_pkt tp, op;
	uint8_t tmpl[REMAP_EMIT_BUF];
	int n;

	(void)r;
	if (l->tmpl_len == 0)
		return -1;
	/* parse a copy: roce_parse wants the whole datagram, the template
	 * keeps only the headers, so give it its own lengths back */
	memcpy(tmpl, l->tmpl, l->tmpl_len);
	if (roce_parse(tmpl, l->tmpl_len, &tp) != ROCE_OK)
		return -1;
	n = roce_build_ack(out->buf, sizeof(out->buf), tmpl, &tp, psn, syndrome, msn,
			   orig != NULL, orig ? *orig : 0, &op);
	if (n < 0)
		return -1;
	rmp_set_dst(out->buf, &op, rcn->mac, c->cl_ip);
	roce_set_qpn(out->buf, &op, c->cl_qpn);
	op.qpn = c->cl_qpn;
	rmp_resign(out->buf, &op);
	out->len = (uint32_t)n;
	out->to_server = false;
	return 0;
}

int
rmp_build_filler(const struct rmp_lane *l, uint32_t lpsn, struct remap_emit *out)
{
	struct roce_pkt p;
	int n;

	if (l->rtmpl_len == 0)
		return -1;
	n = roce_build_zero_write(out->buf, sizeof(out->buf), l->rtmpl, l->rtmpl_len,
				  l->rt_l3, l->rt_l4, l->srv_qpn, lpsn, &p);
	if (n < 0)
		return -1;
	out->len = (uint32_t)n;
	out->to_server = true;
	return 0;
}

