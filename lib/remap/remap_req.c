/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_req.c — the request path of remapping, as named steps:
 *
 *   connect    the connection (lib/rc; kept here for servers no other
 *              function keeps); not paired → passed to its own server QP.
 *   bind       a connection not on a lane yet binds at a request with
 *              nothing outstanding before it (remap_core.c says why).
 *   check      a bound connection's frame must have a good ICRC: it will
 *              be re-signed for the lane; a bad one is dropped (counted).
 *   route      by client PSN against the connection's next PSN:
 *     before the binding  → its own server QP, unchanged (a duplicate);
 *     behind              → a retransmission: its original lane PSN (I6),
 *                           or dropped if that stub is gone;
 *     ahead               → a gap (a request lost before swordd): dropped,
 *                           the client's timeout resends it in order;
 *     next                → stitched at the lane's next PSN.
 *   stitch     lane PSN, lane QPN, the lane's addressing; a stub per PSN.
 *
 * Why a gap is dropped rather than forwarded: the lane has no gap for the
 * server to see, so the server would execute the client's later request
 * before the missing one.  Why READs and atomics wait at the responder
 * resources: the server would answer a READ or atomic beyond them with an
 * invalid-request NAK that closes the lane for every client on it.  They
 * are dropped (the client resends after its timeout), and with them every
 * later request of that client, which keeps its order.
 *
 * Recovery: after a sequence or RNR NAK the server discards every request
 * after the PSN it waits for (l->resend).  Requests beyond it are held
 * back (dropped; a new one still takes its lane PSN, a place in line) and
 * each client is asked to resend, by a NAK in its own PSN space, when its
 * turn comes (rmp_prompt).
 */
#include <string.h>

#include "remap_internal.h"

static uint8_t
kind_of(const struct roce_pkt *p)
{
	if (p->oi->flags & ROCE_F_READ)
		return RK_READ;
	if (p->oi->flags & ROCE_F_ATOMIC)
		return RK_ATOMIC;
	return RK_ACKABLE;
}

/* Put the frame on lane l at lane PSN lpsn. */
static void
stitch(struct remap *r, struct rmp_lane *l, uint8_t *f, struct roce_pkt *p,
       uint32_t lpsn, uint64_t now)
{
	struct rc_conn *owner = rc_at(r->rc, l->owner);

	rmp_set_src(f, p, l->cl_mac, l->srv_mac, l->cl_ip, l->sport);
	p->src_ip4 = l->cl_ip;
	roce_set_qpn(f, p, l->srv_qpn);
	p->qpn = l->srv_qpn;
	roce_set_psn(f, p, lpsn);
	p->psn = lpsn;
	rmp_resign(f, p);
	/* the borrowed connection is in use while its lane carries traffic */
	if (owner != NULL && owner->incarnation == l->owner_inc)
		rc_touch(owner, now);
}

static uint32_t
span_of(struct remap *r, const uint8_t *f, const struct roce_pkt *p)
{
	return (p->oi->flags & ROCE_F_READ) ? roce_req_psns(f, p, r->prm.pmtu) : 1;
}

/* The client's next request: a new lane PSN and its stubs. */
static enum remap_verdict
req_fresh(struct remap *r, struct rmp_lane *l, struct rc_conn *c, struct rmp_conn *rcn,
	  uint8_t *f, struct roce_pkt *p, uint64_t now)
{
	const uint8_t kind = kind_of(p);
	const uint32_t span = span_of(r, f, p);
	const bool ends = kind != RK_ACKABLE || (p->oi->flags & ROCE_F_LAST);
	const uint32_t lpsn = l->next, cpsn = p->psn;
	struct rmp_rev *rv;

	if (kind != RK_ACKABLE && l->rd_out >= l->rd_max) {
		r->c.rd_limit_dropped++;
		return REMAP_DROP;
	}
	if ((uint32_t)roce_psn_diff(roce_psn_add(l->next, span), l->una) > r->prm.ring) {
		r->c.ring_full++;
		return REMAP_DROP;
	}
	for (uint32_t k = 0; k < span; k++) {
		struct rmp_stub *st = rmp_stub_at(r, l, roce_psn_add(lpsn, k));
		const bool last = k + 1 == span;

		st->lpsn = roce_psn_add(lpsn, k);
		st->conn = rc_index(r->rc, c);
		st->inc = c->incarnation;
		st->cpsn = roce_psn_add(cpsn, k);
		st->kind = kind;
		st->flags = (uint8_t)((k == 0 ? RS_FIRST : 0) | (last && ends ? RS_ENDS_MSG : 0));
		st->cmsn = last && ends ? roce_psn_add(rcn->msn, 1) : rcn->msn;
	}
	if (ends)
		rcn->msn = roce_psn_add(rcn->msn, 1);
	/* every PSN of a READ span: a requester may resume a READ from the
	 * first response packet it is missing */
	for (uint32_t k = 0; k < span && k <= r->crev_mask; k++) {
		rv = &rcn->rev[roce_psn_add(cpsn, k) & r->crev_mask];
		rv->cpsn = roce_psn_add(cpsn, k);
		rv->lpsn = roce_psn_add(lpsn, k);
		rv->valid = 1;
	}
	rcn->next = roce_psn_add(cpsn, span);
	l->next = roce_psn_add(l->next, span);
	if (kind != RK_ACKABLE)
		l->rd_out++;
	if (l->recovering) {
		/* its place in line is kept; it is asked for when its turn comes */
		r->c.recovery_held++;
		return REMAP_DROP;
	}
	stitch(r, l, f, p, lpsn, now);
	r->c.stitched++;
	return REMAP_MODIFIED;
}

/* A recovering lane got the request it waits for: the next one waits. */
static void
recovery_advance(struct remap *r, struct rmp_lane *l, uint32_t lpsn, uint32_t span,
		 struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	l->resend = roce_psn_add(lpsn, span);
	if (roce_psn_diff(l->resend, l->next) >= 0) {
		l->recovering = 0;
		return;
	}
	rmp_prompt(r, l, emit, emit_cap, n_emit);
}

/* A PSN the client sent before: the same lane PSN as the first time. */
static enum remap_verdict
req_retransmit(struct remap *r, struct rmp_lane *l, struct rc_conn *c,
	       struct rmp_conn *rcn, uint8_t *f, struct roce_pkt *p, uint64_t now,
	       struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	const struct rmp_rev *rv = &rcn->rev[p->psn & r->crev_mask];
	struct rmp_stub *st;
	uint32_t lpsn;

	if (!rv->valid || rv->cpsn != p->psn ||
	    (st = rmp_stub_get(r, l, rv->lpsn)) == NULL ||
	    st->conn != rc_index(r->rc, c) || st->inc != c->incarnation ||
	    st->cpsn != p->psn || st->kind != kind_of(p)) {
		r->c.retrans_expired++;
		return REMAP_DROP;
	}
	lpsn = rv->lpsn;
	if (l->recovering) {
		int32_t d = roce_psn_diff(lpsn, l->resend);

		if (d > 0) {
			r->c.recovery_held++;
			return REMAP_DROP;
		}
		if (d == 0)
			recovery_advance(r, l, lpsn, span_of(r, f, p), emit, emit_cap, n_emit);
	}
	/* answered already: the server answers the duplicate with its latest
	 * PSN, which may belong to another client; this one is ACKed again */
	if (st->kind == RK_ACKABLE && roce_psn_diff(lpsn, l->una) < 0 &&
	    !(st->flags & RS_REACK)) {
		st->flags |= RS_REACK;
		l->reack++;
	}
	stitch(r, l, f, p, lpsn, now);
	r->c.retransmitted++;
	return REMAP_MODIFIED;
}

static enum remap_verdict
req_route(struct remap *r, struct rc_conn *c, struct rmp_conn *rcn, uint8_t *f,
	  struct roce_pkt *p, bool icrc_ok, uint64_t now, struct remap_emit *emit,
	  uint32_t emit_cap, uint32_t *n_emit)
{
	struct rmp_lane *l = &r->lanes[rcn->lane];
	int32_t d;

	if (roce_psn_diff(p->psn, rcn->bind_psn) < 0)
		return REMAP_PASS;      /* sent before the binding: its own QP */
	if (!l->open) {
		r->c.dead_lane_dropped++;
		return REMAP_DROP;
	}
	if (!icrc_ok && !roce_icrc_verify(f, p)) {
		r->c.bad_icrc_dropped++;
		return REMAP_DROP;
	}
	d = roce_psn_diff(p->psn, rcn->next);
	if (d < 0)
		return req_retransmit(r, l, c, rcn, f, p, now, emit, emit_cap, n_emit);
	if (d > 0) {
		r->c.gap_dropped++;
		return REMAP_DROP;
	}
	return req_fresh(r, l, c, rcn, f, p, now);
}

enum remap_verdict
remap_on_request(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
		 struct roce_pkt *p, bool icrc_ok, uint64_t now,
		 struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	const struct rmp_server *sv;
	struct rc_conn *c;
	struct rmp_conn *rcn;
	int server;

	(void)len;
	(void)cap;
	*n_emit = 0;
	if (p->ip_version != 4)
		return REMAP_PASS;
	if (!(p->oi->flags & ROCE_F_RC)) {
		rmp_keep_cm(r, f, p, now);
		return REMAP_PASS;
	}
	server = rmp_server_of(r, p->dst_ip4);
	if (server < 0 || !(p->oi->flags & ROCE_F_REQUEST))
		return REMAP_PASS;
	sv = &r->servers[server];
	r->c.req_seen++;
	c = rc_find_req(r->rc, p->src_ip4, p->dst_ip4, p->qpn);
	if (sv->keep_conns)
		c = rmp_keep_request(r, c, f, p, &icrc_ok, now);
	if (c == NULL || !c->paired) {
		r->c.unbound_direct++;
		return REMAP_PASS;
	}
	rcn = rmp_conn_of(r, c);
	if (rcn->state != RC_BOUND) {
		/* a binding is decided on a verified frame only */
		if (!icrc_ok && !roce_icrc_verify(f, p)) {
			r->c.unbound_direct++;
			return REMAP_PASS;
		}
		icrc_ok = true;
		if (!rmp_bind(r, c, rcn, server, f, p, now)) {
			r->c.unbound_direct++;
			return REMAP_PASS;
		}
	}
	return req_route(r, c, rcn, f, p, icrc_ok, now, emit, emit_cap, n_emit);
}
