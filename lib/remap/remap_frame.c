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
	struct roce_pkt op;
	int n;

	if (l->tmpl_len == 0)
		return -1;
	/* from the lane's ACK as it was parsed when built (l->tmpl_p), and
	 * signed once, after the client's address: by the caller where it
	 * re-signs what it sends anyway (defer_resign: the worker, after
	 * atomic replacement made it an ATOMIC ACK), else here.  An ACK or
	 * NAK is the template with its PSN and AETH: what roce_build_ack
	 * makes of it, whose lengths and IPv4 checksum it already has. */
	if (orig == NULL) {
		memcpy(out->buf, l->tmpl, l->tmpl_len);
		op = l->tmpl_p;
		roce_set_psn(out->buf, &op, psn);
		op.psn = psn & ROCE_PSN_MASK;
		roce_set_aeth(out->buf, &op, syndrome, msn);
		n = (int)l->tmpl_len;
	} else {
		n = roce_build_ack_unsigned(out->buf, sizeof(out->buf), l->tmpl, &l->tmpl_p,
					    psn, syndrome, msn, true, *orig, &op);
		if (n < 0)
			return -1;
	}
	rmp_set_dst(out->buf, &op, rcn->mac, c->cl_ip);
	roce_set_qpn(out->buf, &op, c->cl_qpn);
	op.qpn = c->cl_qpn;
	out->unsigned_icrc = r->prm.defer_resign;
	if (!out->unsigned_icrc)
		rmp_resign(out->buf, &op);
	out->len = (uint32_t)n;
	out->to_server = false;
	out->after = false;
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
	out->after = false;
	out->unsigned_icrc = false;
	return 0;
}

