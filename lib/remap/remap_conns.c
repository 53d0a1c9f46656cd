/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_conns.c — keeping the shared connection table (lib/rc) for the
 * servers no other function keeps it for (remap_server.keep_conns).
 *
 * Why it exists: remapping needs each connection's exact identity (the
 * client QPN its answers go to) but, unlike atomic replacement, no view of
 * what the requests do.  Where atomic replacement manages a server it
 * keeps the table (its request stubs make the stronger evidence); for the
 * other servers this file does the same upkeep with what remapping sees:
 * connections are opened by requests whose ICRC verified, the RDMA CM
 * identifies them exactly, and otherwise a response pairs a connection
 * only under lib/rc's evidence rule (one unpaired connection between the
 * hosts whose window holds the PSN).  Once bound to a lane the window is
 * remapping's own; the table is still told the connection is alive.
 */
#include <rte_common.h>

#include "remap_internal.h"

struct rc_conn *
rmp_keep_request(struct remap *r, struct rc_conn *c, uint8_t *f,
		 const struct roce_pkt *p, bool *icrc_ok, uint64_t now)
{
	uint32_t end;

	if (!*icrc_ok) {
		if (!roce_icrc_verify(f, p))
			return c;      /* creates, pairs and ages nothing */
		*icrc_ok = true;
	}
	if (c == NULL) {
		c = rc_open(r->rc, p->src_ip4, p->dst_ip4, p->qpn, p->psn, now);
		if (c == NULL) {
			rc_note_untracked(r->rc, now);
			return NULL;
		}
	}
	rc_touch(c, now);
	end = roce_psn_add(p->psn, (p->oi->flags & ROCE_F_READ) ?
			   rmp_span(r, (uint32_t)rmp_server_of(r, p->dst_ip4), f, p) : 1);
	if (roce_psn_diff(end, c->next_psn) > 0)
		c->next_psn = end;
	return c;
}

/*
 * What a request asks for, folded to 64 bits: its opcode, its payload
 * length and the first 32 bytes after its BTH (the RETH or AtomicETH and
 * the start of the data).  A retransmission repeats all of it; a new life
 * of the QPN that reuses the PSN for another request does not (a 64-bit
 * mix: two different requests agree by chance once in 2^64).  Never 0.
 */
uint64_t
rmp_content_fp(const uint8_t *f, const struct roce_pkt *p)
{
	const uint32_t from = (uint32_t)p->bth_off + ROCE_BTH_LEN;
	const uint32_t end = (uint32_t)p->payload_off + p->payload_len;
	uint64_t w[4] = { 0 }, h;
	uint32_t n = end > from ? end - from : 0;

	if (n > sizeof(w))
		n = sizeof(w);
	memcpy(w, f + from, n);
	h = (uint64_t)p->opcode | (uint64_t)p->payload_len << 8 | (uint64_t)n << 24;
	for (unsigned int i = 0; i < RTE_DIM(w); i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/*
 * Does p, a verified request of bound connection rcn (of a server whose
 * table remapping keeps), begin a new life of its QPN: its application
 * re-created the QP out of band, reusing QPN and PSNs (Sherman's 3185),
 * and the server reset its end?  Taken for a retransmission, its request
 * would be answered from the old life (a WRITE acknowledged and never
 * executed, an atomic given another request's result).  lib/rc's rules,
 * as the serializer applies them with its stubs, where no retransmission
 * explains it: a PSN it sent on the lane before with another opcode kind
 * or other content (a READ may be resumed from a later PSN with another
 * address: its kind only), a jump ahead wider than its reverse index, or
 * a PSN whose reverse entry is gone further back than eight of them, or
 * at all once it has sent its first PSN again (initial_again: a window no
 * wider than the reverse index cannot go back that far and on).  A PSN
 * from before its binding goes to its own QP, which decides, as ever.
 */
bool
rmp_new_life(const struct remap *r, const struct rmp_conn *rcn, const uint8_t *f,
	     const struct roce_pkt *p)
{
	const int32_t ring = (int32_t)r->crev_mask + 1;
	const int32_t d = roce_psn_diff(p->psn, rcn->next);
	const struct rmp_rev *rv = &rcn->rev[p->psn & r->crev_mask];
	const uint8_t kind = rmp_kind_of(p);

	if (roce_psn_diff(p->psn, rcn->bind_psn) < 0)
		return false;
	if (d >= 0)
		return d > ring;
	if (!rv->valid || rv->cpsn != p->psn)
		return d < -8 * ring || rcn->initial_again;
	if (rv->kind != kind)
		return true;
	return kind != RK_READ && rv->fp != 0 && rv->fp != rmp_content_fp(f, p);
}

static bool
in_window(void *ctx, const struct rc_conn *c, uint32_t psn)
{
	(void)ctx;
	return roce_psn_diff(psn, c->first_psn) >= 0 &&
	       roce_psn_diff(psn, c->next_psn) < 0;
}

/* A verified response (resp_direct checks it). */
void
rmp_keep_response(struct remap *r, const struct rmp_server *sv, uint8_t *f,
		  const struct roce_pkt *p, uint64_t now)
{
	struct rc_conn *c = rc_find_resp(r->rc, p->src_ip4, p->dst_ip4, p->qpn);
	uint32_t done;

	(void)sv;
	if (c == NULL) {
		bool ambiguous;

		c = rc_pair_evidence(r->rc, p->src_ip4, p->dst_ip4, p->qpn, p->psn, now,
				     in_window, r, &ambiguous);
		if (c == NULL)
			return;
		r->c.conn_paired++;
	}
	/* answers come in PSN order: everything before this one is done, and
	 * this one too unless it is a NAK or a READ response before its last */
	done = p->psn;
	if (roce_has(p->oi, ROCE_HDR_AETH)) {
		enum roce_aeth_kind k = roce_syndrome_kind(roce_get_syndrome(f, p));

		if (k == ROCE_AETH_ACK && (p->oi->flags & ROCE_F_LAST || p->opcode ==
					   ROCE_RC_ACKNOWLEDGE || p->opcode ==
					   ROCE_RC_ATOMIC_ACKNOWLEDGE))
			done = roce_psn_add(p->psn, 1);
	}
	if (roce_psn_diff(done, c->una) > 0 && roce_psn_diff(done, c->next_psn) <= 0)
		c->una = done;
}

static bool
is_server_cb(void *ctx, uint32_t ip4)
{
	return remap_is_server(ctx, ip4);
}

bool
rmp_keep_cm(struct remap *r, uint8_t *f, const struct roce_pkt *p, uint64_t now)
{
	int s;

	if (p->ip_version != 4 || !(p->oi->flags & ROCE_F_UD) || !rc_cm_is_cm(f, p))
		return false;
	s = rmp_server_of(r, p->src_ip4);
	if (s < 0)
		s = rmp_server_of(r, p->dst_ip4);
	if (s < 0 || !r->servers[s].keep_conns)
		return false;
	if (!roce_icrc_verify(f, p))
		return true;
	rc_cm_rx(r->rc, f, p, now, is_server_cb, r);
	return true;
}
