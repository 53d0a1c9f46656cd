/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_move.c — a lane survives a fatal NAK by moving onto a rider's
 * own server QP.
 *
 * Why: a remote access, invalid request or remote operational NAK puts
 * the server's QP in error.  The request NAKed was one client's fault,
 * but the lane carries everyone: closed, every rider would lose what it
 * had outstanding and have to reconnect.  The NAK is an exact boundary:
 * the server executed every lane PSN before L (the NAK acknowledges them)
 * and nothing from L on (its QP executes nothing more).  And every rider
 * still has its own server QP, idle since it bound, expecting exactly
 * that rider's binding PSN (it bound with nothing outstanding; later
 * retransmissions of earlier PSNs only ever reach it as duplicates).
 *
 * So the lane moves there: its identity (server QPN, client address, MAC,
 * UDP source port) becomes the host's; lane PSNs from L on are renumbered
 * to start at the host's binding PSN (the stub ring rotated, each moved
 * stub's reverse entry too); and the lane recovers as after a sequence
 * NAK (remap_resp.c rmp_prompt): each client is asked, in lane order, to
 * resend from its first PSN at or after L; the failed client, which gets
 * the fatal NAK itself (its QP goes to error, as without swordd), and
 * anyone else who will not resend, is filled with zero-length WRITEs.
 * Nothing is executed twice: PSNs before L are not sent again, those
 * from L on were never executed.
 *
 * Who cannot move: a client with a READ or real atomic before L whose
 * answer was lost (the new QP cannot answer it again) is told its QP
 * failed, as on a closed lane.  No rider to host the lane (the owner
 * alone, or everyone else failed), or a host whose QP offers fewer
 * responder resources than the READs and atomics to send again need:
 * the lane closes as before.
 */
#include <string.h>

#include "remap_internal.h"

/* A rider of l that can host it: alive, bound, not the failed client,
 * not the lane's own (broken) QP nor one that broke before (a lane moved
 * off it), one-sided only. */
static int32_t
pick_host(struct remap *r, const struct rmp_lane *l, uint32_t failed)
{
	const uint32_t k = (uint32_t)(l - r->lanes);

	for (uint32_t i = 0; i < rc_capacity(r->rc); i++) {
		const struct rmp_conn *rcn = &r->conns[i];
		const struct rc_conn *c = rc_at(r->rc, i);

		if (c == NULL || rcn->inc != c->incarnation || rcn->state != RC_BOUND ||
		    rcn->lane != k || i == failed || rcn->two_sided || !c->paired ||
		    rcn->own_qp_dead || rcn->stuck ||
		    (c->cl_ip == l->cl_ip && c->cl_qpn == l->cl_qpn) ||
		    (i == l->owner && c->incarnation == l->owner_inc))
			continue;
		return (int32_t)i;
	}
	return -1;
}

/* rcn's QP failed (the NAK told it) or cannot go on: off the lane, its
 * stubs nobody's (rmp_stub_client), its later requests dropped. */
static void
lose(struct remap *r, struct rmp_lane *l, struct rmp_conn *rcn)
{
	if (rcn->state != RC_BOUND)
		return;         /* lost already (the failed client, say) */
	rcn->state = RC_LOST;
	rcn->waiting = 0;
	if (l->bound)
		l->bound--;
	r->dead_pending = true;
}

/* Clients with a READ or real atomic the old QP executed and whose
 * answer was lost (before L): the old QP would have answered their
 * retransmission from its responder resources; the new one never saw
 * it, and the lane would wait for their answers before asking them to
 * resend.  They cannot go on, nor host the lane.  STUCK_MARK flags them
 * (rmp_conn.stuck, for pick_host), STUCK_CLEAR takes the flags back (no
 * move after all: the lane closes and tells everyone), STUCK_LOSE takes
 * them off the lane. */
enum stuck_op { STUCK_MARK, STUCK_CLEAR, STUCK_LOSE };

static void
stuck(struct remap *r, struct rmp_lane *l, uint32_t L, enum stuck_op op)
{
	for (uint32_t k = 0; k <= r->ring_mask; k++) {
		struct rmp_stub *st = &l->stubs[k];
		struct rmp_conn *rcn;

		if (st->inc == 0 || st->kind == RK_ACKABLE || (st->flags & RS_ANSWERED) ||
		    roce_psn_diff(st->lpsn, L) >= 0 || roce_psn_diff(st->lpsn, l->start) < 0 ||
		    rmp_stub_client(r, st, &rcn) == NULL)
			continue;
		rcn->stuck = op == STUCK_MARK;
		if (op == STUCK_LOSE)
			lose(r, l, rcn);
	}
}

static void
reverse(struct rmp_stub *s, uint32_t n)
{
	for (uint32_t i = 0, j = n - 1; n && i < j; i++, j--) {
		struct rmp_stub t = s[i];

		s[i] = s[j];
		s[j] = t;
	}
}

/* Lane PSNs [L, next) become [L + delta, next + delta): each stub to its
 * new slot (the ring rotated by delta), retagged; every other stub is
 * dropped (answered, or a retired PSN of the old QP). */
static void
renumber(struct remap *r, struct rmp_lane *l, uint32_t L, uint32_t delta)
{
	const uint32_t n = r->ring_mask + 1, d = delta & r->ring_mask;

	/* reverse entries first, while stubs still describe them */
	for (uint32_t q = L; roce_psn_diff(q, l->next) < 0; q = roce_psn_add(q, 1)) {
		struct rmp_stub *st = rmp_stub_get(r, l, q);
		struct rmp_conn *rcn;
		struct rmp_rev *rv;

		if (st != NULL && rmp_stub_client(r, st, &rcn) != NULL &&
		    (rv = rmp_rev_of(r, rcn, st)) != NULL)
			rv->lpsn = roce_psn_add(q, delta);
	}
	/* rotate right by d: slot j goes to (j + d) mod n */
	reverse(l->stubs, n);
	reverse(l->stubs, d);
	reverse(l->stubs + d, n - d);
	l->rd_out = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct rmp_stub *st = &l->stubs[k];

		if (st->inc == 0 || roce_psn_diff(st->lpsn, L) < 0 ||
		    roce_psn_diff(st->lpsn, l->next) >= 0) {
			memset(st, 0, sizeof(*st));
			continue;
		}
		st->lpsn = roce_psn_add(st->lpsn, delta);
		st->flags &= (uint8_t)~RS_REACK;
		/* a READ or atomic to send again holds a responder resource */
		if (st->kind != RK_ACKABLE && (st->flags & RS_ENDS_MSG) &&
		    !(st->flags & RS_RELEASED))
			l->rd_out++;
	}
	l->reack = 0;
	l->unans_set = 0;
}

/* The lane takes the host's identity: what its server QP checks. */
static void
take_identity(struct remap *r, struct rmp_lane *l, const struct rc_conn *h,
	      const struct rmp_conn *hn)
{
	uint8_t *t = l->rtmpl;

	l->cl_ip = h->cl_ip;
	l->cl_qpn = h->cl_qpn;
	l->srv_qpn = h->srv_qpn;
	memcpy(l->eth + 6, hn->mac, 6);
	l->sport = hn->sport;
	l->owner = rc_index(r->rc, h);
	l->owner_inc = h->incarnation;
	l->rd_max = rmp_rd_max(r, h);
	/* the no-op WRITE template: the host's source (roce_build_zero_write
	 * sets lengths, checksum and the destination QPN) */
	if (l->rtmpl_len) {
		memcpy(t + 6, hn->mac, 6);
		memcpy(t + l->rt_l3 + 12, &h->cl_ip, 4);
		roce_st16(t + l->rt_l4, hn->sport);
	}
}

/* READs and atomics of lane PSNs [L, next): each holds a responder
 * resource of the new QP once sent again. */
static uint32_t
held_from(struct remap *r, struct rmp_lane *l, uint32_t L)
{
	uint32_t n = 0;

	for (uint32_t q = L; roce_psn_diff(q, l->next) < 0; q = roce_psn_add(q, 1)) {
		const struct rmp_stub *st = rmp_stub_get(r, l, q);

		n += st != NULL && st->kind != RK_ACKABLE && (st->flags & RS_ENDS_MSG) &&
		     !(st->flags & RS_RELEASED);
	}
	return n;
}

bool
rmp_lane_move(struct remap *r, struct rmp_lane *l, uint32_t L, uint32_t failed)
{
	struct rmp_conn *hn, *fn;
	struct rc_conn *h;
	uint32_t delta;
	int32_t host;

	if (l->tmpl_len == 0)
		return false;
	stuck(r, l, L, STUCK_MARK);
	host = pick_host(r, l, failed);
	h = host < 0 ? NULL : rc_at(r->rc, (uint32_t)host);
	/* the new QP may offer fewer responder resources than the READs and
	 * atomics to send again there need (connections set up apart) */
	if (h == NULL || held_from(r, l, L) > rmp_rd_max(r, h)) {
		stuck(r, l, L, STUCK_CLEAR);
		return false;
	}
	stuck(r, l, L, STUCK_LOSE);
	hn = &r->conns[host];
	if (failed != RMP_NONE) {
		fn = &r->conns[failed];
		lose(r, l, fn);             /* told by the NAK itself */
		if (l->msg_conn == failed)
			l->msg_open = 0;    /* its message will not go on */
		if (l->resv_set && l->resv_conn == failed)
			l->resv_set = 0;
	}
	/* the failed QP is its owner's own: never a host again */
	if (rc_at(r->rc, l->owner) != NULL && r->conns[l->owner].inc == l->owner_inc)
		r->conns[l->owner].own_qp_dead = 1;
	delta = roce_psn_add(hn->bind_psn, (ROCE_PSN_MASK + 1 - L) & ROCE_PSN_MASK);
	renumber(r, l, L, delta);
	take_identity(r, l, h, hn);
	/* the old QP is in error: a held DREQ of its owner may go now */
	if (l->kept) {
		l->kept = 0;
		if (l->dreq_len) {
			l->dreq_due = 1;
			r->dreq_pending = true;
		}
	}
	l->start = l->una = l->resend = hn->bind_psn;
	l->next = roce_psn_add(l->next, delta);
	l->recovering = roce_psn_diff(l->resend, l->next) < 0;
	l->prompted_set = 0;
	/* A new ordering domain: a WRITE of before the move that ran on the
	 * old QP or not (a fill took its PSN) may be in atomic replacement's
	 * shadow; decided in the same domain, a grant after it would trust
	 * it.  In another domain the S2 gate holds such a word until the
	 * write is ACKed or abandoned (ser_word.c). */
	l->dom = rc_new_domain(r->rc);
	l->moved = 1;
	r->c.lanes_moved++;
	return true;
}

/*
 * The lane's server QP was lost with its owner's life (a new life of the
 * owner's QPN, the server disconnecting it, the owner's client QPN in a
 * new CM REQ): unlike a fatal NAK, no exact boundary.  Lane PSNs before
 * una were executed and answered; what went out from una on may or may
 * not have run on the old QP.  A READ there runs again harmlessly (it
 * changes nothing, and its client has no answer yet); a WRITE, SEND or
 * atomic there is in doubt: its client is the one QP that must fail (told
 * as on a closed lane; counted), its PSNs filled with no-ops on the new
 * QP.  Every other rider goes on: the lane moves from una onto one of
 * their own QPs (rmp_lane_move), those with READs from una on asked to
 * send them again.  Before, every rider was told its QP failed, also
 * those with nothing outstanding (issue #29, finding 3).  false: nobody
 * to host it; the caller closes it.
 */
bool
rmp_lane_rescue(struct remap *r, struct rmp_lane *l, uint64_t now)
{
	const uint32_t L = l->una, ghost_ip = l->cl_ip, ghost_qpn = l->cl_qpn;
	uint32_t lost = 0;

	if (!l->open || l->tmpl_len == 0)
		return false;
	/* the owner's stubs are its ended life's: nobody's (filled) */
	for (uint32_t q = L; roce_psn_diff(q, l->next) < 0; q = roce_psn_add(q, 1)) {
		const struct rmp_stub *st = rmp_stub_get(r, l, q);
		struct rmp_conn *rcn;

		if (st == NULL || st->kind == RK_READ || st->conn == l->owner ||
		    rmp_stub_client(r, st, &rcn) == NULL || rcn->state != RC_BOUND)
			continue;
		lose(r, l, rcn);
		lost++;
	}
	/* a message left open by the owner or a lost client will not go on
	 * (its PSNs are filled): the lane is not theirs any more */
	if (l->msg_open && (l->msg_conn == l->owner || l->msg_conn >= rc_capacity(r->rc) ||
			    r->conns[l->msg_conn].state != RC_BOUND))
		l->msg_open = 0;
	if (!rmp_lane_move(r, l, L, RMP_NONE))
		return false;
	r->c.in_doubt_failed += lost;
	r->c.lanes_rescued++;
	l->ghost_ip = ghost_ip;
	l->ghost_qpn = ghost_qpn;
	l->ghost_until = now + r->prm.resend_timeout_tsc;
	/* no frame at hand to emit on: the asks and fills go by remap_tick */
	l->prompt_due = l->recovering;
	r->prompt_pending |= l->recovering;
	return true;
}

/* An answer to the address of a lane's lost owner QP while its late
 * answers may still come (rmp_lane_rescue): not its new life's. */
bool
rmp_ghost_answer(const struct remap *r, const struct rmp_server *sv,
		 const struct roce_pkt *p, uint64_t now)
{
	for (uint32_t i = 0; i < sv->n_lanes; i++) {
		const struct rmp_lane *l = &r->lanes[sv->first_lane + i];

		if (l->ghost_until != 0 && now < l->ghost_until &&
		    l->ghost_ip == p->dst_ip4 && l->ghost_qpn == p->qpn)
			return true;
	}
	return false;
}
