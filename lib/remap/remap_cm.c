/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_cm.c — a lane outlives its owner's disconnect.
 *
 * Why: a lane is a server QP borrowed from one client connection, its
 * owner.  When the owner's application disconnects (rdma_disconnect: a CM
 * DREQ to the server), the server's QP would be torn down with it, and
 * every other client riding the lane would lose what it had outstanding
 * there and have to reconnect: one client leaving would fail them all.
 * But the server only learns of the disconnect from the DREQ, and its QP
 * does not care whether the owner's QP still exists (it answers to the
 * owner's address and QPN, which swordd maps back to the riders anyway).
 * So, while others ride the lane:
 *
 *   keep      the lane stays open with no owner (rmp_lane_keep, called
 *             from conn_end for an end the client asked for; any other
 *             end — the server disconnecting, the QPN given to a new
 *             connection, idle eviction, a new life — may mean the
 *             server's QP is gone, and closes the lane as before);
 *   hold      the owner's DREQ is held (one per lane) and answered with
 *             the DREP the server would send, so the owner's CM completes
 *             its disconnect at once (a retransmitted DREQ is answered
 *             again);
 *   release   once the lane closes (its last rider gone, or a fatal NAK),
 *             the held DREQ goes on to the server (remap_tick), which
 *             ends its QP as it would have; its DREP to the owner finds
 *             no connection there and is dropped by the owner's CM.
 *
 * Limits: the owner's client QPN given to a new connection to the same
 * server makes the lane's answers ambiguous (answers name the client QP,
 * not the server's), so a CM REQ for it closes the kept lane; the same
 * reuse set up out of band is not seen (as for a live owner).  A restart
 * of swordd loses the held DREQ: the server keeps that QP until its
 * application closes it.
 */
#include <string.h>

#include "remap_internal.h"

bool
rmp_lane_keep(struct remap *r, struct rmp_lane *l, const struct rc_conn *owner,
	      enum rc_end_why why)
{
	const uint32_t i = rc_index(r->rc, owner);
	const struct rmp_conn *rcn = &r->conns[i];
	const bool rides = rcn->inc == owner->incarnation && rcn->state == RC_BOUND &&
			   rcn->lane == (uint32_t)(l - r->lanes);

	if (why != RC_END_CLIENT_DISCONNECT || l->bound <= (rides ? 1u : 0u))
		return false;
	l->kept = 1;
	l->owner = RMP_NONE;
	l->owner_inc = 0;
	r->c.lanes_kept++;
	r->some_kept = true;
	return true;
}

/* The open kept lane a DREQ (its receiver's QPN: m->remote_qpn) or a REQ
 * (its sender's QPN: m->local_qpn) is about, else NULL. */
static struct rmp_lane *
kept_lane_of(struct remap *r, const struct roce_pkt *p, const struct rc_cm_msg *m,
	     bool to_server)
{
	const int s = rmp_server_of(r, to_server ? p->dst_ip4 : p->src_ip4);
	const uint32_t cl_ip = to_server ? p->src_ip4 : p->dst_ip4;

	if (s < 0)
		return NULL;
	for (uint32_t i = 0; i < r->servers[s].n_lanes; i++) {
		struct rmp_lane *l = &r->lanes[r->servers[s].first_lane + i];

		if (!l->open || !l->kept || l->cl_ip != cl_ip)
			continue;
		if (m->kind == RC_CM_REQ ? l->cl_qpn == m->local_qpn
		    : to_server ? l->srv_qpn == m->remote_qpn : l->cl_qpn == m->remote_qpn)
			return l;
	}
	return NULL;
}

/* The owner's DREQ (or its retransmission): held, answered with a DREP. */
static enum remap_verdict
hold_dreq(struct remap *r, struct rmp_lane *l, const uint8_t *f, const struct roce_pkt *p,
	  struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	struct remap_emit *e;
	int n;

	if (p->frame_len > sizeof(l->dreq))
		return REMAP_PASS;   /* cannot be held: the lane closes with it */
	if (l->dreq_len == 0) {
		memcpy(l->dreq, f, p->frame_len);
		l->dreq_len = p->frame_len;
		r->c.dreq_held++;
	}
	if (*n_emit < emit_cap) {
		e = &emit[*n_emit];
		n = rc_cm_build_drep(e->buf, sizeof(e->buf), f, p);
		if (n > 0) {
			e->len = (uint32_t)n;
			e->to_server = false;
			e->after = false;
			e->unsigned_icrc = false;
			(*n_emit)++;
			r->c.drep_sent++;
		}
	}
	return REMAP_DROP;
}

/*
 * A connection's REQ says its path MTU (Path Packet Payload MTU): READ
 * spans on the server's lanes are counted in it before any READ needs
 * it.  Only a verified REQ of a connection with a managed server.
 */
static void
learn_pmtu_from_req(struct remap *r, uint8_t *f, const struct roce_pkt *p, bool to_server)
{
	struct rc_cm_msg m;
	int server;

	if (p->ip_version != 4 || !(p->oi->flags & ROCE_F_UD) || rc_cm_parse(f, p, &m) != 0 ||
	    m.kind != RC_CM_REQ || m.path_mtu == 0 ||
	    (server = rmp_server_of(r, to_server ? p->dst_ip4 : p->src_ip4)) < 0 ||
	    r->servers[server].pmtu == m.path_mtu || !roce_icrc_verify(f, p))
		return;
	rmp_set_pmtu(r, (uint32_t)server, m.path_mtu);
}

enum remap_verdict
rmp_on_cm(struct remap *r, uint8_t *f, const struct roce_pkt *p, bool to_server,
	  uint64_t now, struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	struct rc_cm_msg m;
	struct rmp_lane *l;

	learn_pmtu_from_req(r, f, p, to_server);
	/* the table learns first: an owner's DREQ ends its connection, and
	 * conn_end keeps its lane (or closes it) before the frame is looked at */
	rmp_keep_cm(r, f, p, now);
	if (!r->some_kept || p->ip_version != 4 || !(p->oi->flags & ROCE_F_UD) ||
	    rc_cm_parse(f, p, &m) != 0 || (m.kind != RC_CM_DREQ && m.kind != RC_CM_REQ) ||
	    (l = kept_lane_of(r, p, &m, to_server)) == NULL)
		return REMAP_PASS;
	/* a forged or corrupted CM message changes nothing (I8) */
	if (!roce_icrc_verify(f, p))
		return REMAP_PASS;
	if (m.kind == RC_CM_DREQ && to_server)
		return hold_dreq(r, l, f, p, emit, emit_cap, n_emit);
	/* The server disconnects the lane's QP, or the owner's client QPN
	 * comes back as a new connection to the server (its answers would
	 * be the lane's): the lane ends.  The server ended it itself: the
	 * held DREQ is not sent. */
	if (m.kind == RC_CM_DREQ)
		l->dreq_len = 0;
	if (!rmp_lane_rescue(r, l, now))
		rmp_lane_close(r, l);
	return REMAP_PASS;
}

void
rmp_send_dreqs(struct remap *r, struct remap_emit *emit, uint32_t emit_cap,
	       uint32_t *n_emit)
{
	for (uint32_t k = 0; k < r->n_lanes; k++) {
		struct rmp_lane *l = &r->lanes[k];

		if (!l->dreq_due)
			continue;
		if (*n_emit >= emit_cap)
			return;           /* the rest at the next tick */
		memcpy(emit[*n_emit].buf, l->dreq, l->dreq_len);
		emit[*n_emit].len = l->dreq_len;
		emit[*n_emit].to_server = true;
		emit[*n_emit].after = false;
		emit[*n_emit].unsigned_icrc = false;
		(*n_emit)++;
		l->dreq_due = 0;
		l->dreq_len = 0;
		r->c.dreq_released++;
	}
	r->dreq_pending = false;
}
