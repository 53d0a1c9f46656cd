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

/* Put the frame on lane l at lane PSN lpsn. */
static __rte_always_inline void
stitch(struct remap *r, struct rmp_lane *l, uint8_t *f, struct roce_pkt *p,
       uint32_t lpsn, uint64_t now)
{
	struct rc_conn *owner = rc_at(r->rc, l->owner);

	memcpy(f, l->eth, sizeof(l->eth));
	if (p->src_ip4 != l->cl_ip)
		rmp_set_ip4_addr(f, p, 12, l->cl_ip);
	roce_st16(f + p->l4_off, l->sport);
	p->src_ip4 = l->cl_ip;
	roce_set_qpn_psn(f, p, l->srv_qpn, lpsn);
	p->qpn = l->srv_qpn;
	p->psn = lpsn;
	if (!r->prm.defer_resign)
		rmp_resign(f, p);
	/* the borrowed connection is in use while its lane carries traffic */
	if (owner != NULL && owner->incarnation == l->owner_inc)
		rc_touch(owner, now);
}

/* May lane PSN lpsn's slot be given to a new request?  Not while its
 * stub is still the only way to answer its client: a real atomic the
 * server completed without swordd seeing the answer, or a WRITE/SEND the
 * client has not been acknowledged (a READ can be placed anew). */
static __rte_noinline bool
slot_needed_by_client(struct remap *r, const struct rmp_stub *st)
{
	struct rmp_conn *rcn;

	if (rmp_stub_client(r, st, &rcn) == NULL)
		return false;
	if (st->kind == RK_ATOMIC)
		return !(st->flags & RS_ANSWERED);
	if (st->kind == RK_ACKABLE)
		return roce_psn_diff(st->cpsn, rcn->acked) >= 0;
	return false;
}

static inline bool
slot_needed(struct remap *r, struct rmp_lane *l, uint32_t lpsn)
{
	const struct rmp_stub *st = rmp_stub_at(r, l, lpsn);

	/* answered (an atomic, a READ) or acknowledged (RS_ACKED): the
	 * common case, told by the flags alone (the rest out of line: the
	 * ordering question is then a leaf with no registers to save) */
	return st->inc != 0 && !(st->flags & (RS_ANSWERED | RS_ACKED)) &&
	       slot_needed_by_client(r, st);
}

/* A READ or atomic may go out: a responder resource is free, also for
 * the answer of an unanswered completed atomic (struct rmp_lane). */
static inline bool
rd_room(const struct rmp_lane *l)
{
	return l->rd_out < l->rd_max && !(l->unans_set && l->atom_since >= l->rd_max);
}

/* The ring can take span more lane PSNs (span 0: it is not overfull). */
static inline bool
ring_room(const struct remap *r, const struct rmp_lane *l, uint32_t span)
{
	return (uint32_t)roce_psn_diff(roce_psn_add(l->next, span), l->una) <= r->prm.ring;
}

/* rmp_lane_fit(r, l, RK_ACKABLE, 1) == RMP_FITS, inline for the common case */
static inline bool
one_psn_room(struct remap *r, struct rmp_lane *l)
{
	return ring_room(r, l, 1) && !slot_needed(r, l, l->next);
}

enum rmp_fit
rmp_lane_fit(struct remap *r, struct rmp_lane *l, uint8_t kind, uint32_t span)
{
	if (kind != RK_ACKABLE && !rd_room(l))
		return RMP_RD_LIMIT;
	if (!ring_room(r, l, span))
		return RMP_RING_FULL;
	for (uint32_t k = 0; k < span; k++)
		if (slot_needed(r, l, roce_psn_add(l->next, k)))
			return RMP_RING_FULL;
	return RMP_FITS;
}

/* rmp_lane_fit, counted */
static bool
lane_room(struct remap *r, struct rmp_lane *l, uint8_t kind, uint32_t span)
{
	switch (rmp_lane_fit(r, l, kind, span)) {
	case RMP_RD_LIMIT:
		r->c.rd_limit_dropped++;
		return false;
	case RMP_RING_FULL:
		r->c.ring_full++;
		return false;
	default:
		return true;
	}
}

/* rc_order_fn: a bound connection's next request, were it a one-PSN
 * WRITE (or an atomic), gets its lane PSN now (req_fresh), and everything the lane
 * carries is executed by the server in lane PSN order, also after a loss
 * (each client resends at its original lane PSN).  Anything else (not
 * bound yet, a closed lane, a gap, no room) may be dropped here and come
 * back after requests decided later: then it is the connection's own. */
static bool
placed_now(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint8_t kind)
{
	/* its turn (rmp_turn: another's open message, room kept for a
	 * waiting or reserved client), and room */
	return rmp_turn_allows(r, l, c, kind, 1, false) &&
	       rmp_lane_fit(r, l, kind, 1) == RMP_FITS;
}

/* rmp_order_domains on a lane somebody waits on, holds, or has a message
 * open on: the turn decides (out of line: the common case is a leaf). */
static __rte_noinline void
order_busy(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, bool atomic,
	   uint32_t *dom, uint32_t *adom)
{
	if (!atomic) {
		*dom = *adom = placed_now(r, l, c, RK_ACKABLE) ? l->dom : 0;
		return;
	}
	*dom = placed_now(r, l, c, RK_ACKABLE) ? l->dom : 0;
	*adom = placed_now(r, l, c, RK_ATOMIC) ? l->dom : 0;
}

/* rmp_order_domains on a free lane with room for one PSN: c's request
 * at psn is placed now (remembered for remap_request_fast: told). */
static __rte_always_inline void
order_free(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint32_t psn,
	   bool atomic, uint32_t *dom, uint32_t *adom)
{
	const bool rd = rd_room(l);

	r->told.conn = rc_index(r->rc, c);
	r->told.inc = c->incarnation;
	r->told.psn = psn;
	r->told.rd_room = rd;
	r->told.set = true;
	*dom = l->dom;
	if (!atomic || (rd && ring_room(r, l, 0)))
		*adom = l->dom;
}

/* The same where the lane's next slot may still be needed by its client
 * (out of line, as order_busy). */
static __rte_noinline void
order_slot(struct remap *r, const struct rc_conn *c, uint32_t psn, bool atomic,
	   uint32_t *dom, uint32_t *adom)
{
	struct rmp_lane *l = &r->lanes[r->conns[rc_index(r->rc, c)].lane];

	if (!slot_needed_by_client(r, rmp_stub_at(r, l, l->next)))
		order_free(r, l, c, psn, atomic, dom, adom);
}

/* Every call out of it is its last step: the common case saves no
 * register. */
void
rmp_order_domains(void *ctx, const struct rc_conn *c, uint32_t psn, bool atomic,
		  uint32_t *dom, uint32_t *adom)
{
	struct remap *r = ctx;
	const struct rmp_conn *rcn = &r->conns[rc_index(r->rc, c)];
	const struct rmp_stub *st;
	struct rmp_lane *l;

	*dom = *adom = 0;
	if (rcn->inc != c->incarnation || rcn->state != RC_BOUND ||
	    rcn->next != psn || roce_psn_diff(psn, rcn->bind_psn) < 0)
		return;
	l = &r->lanes[rcn->lane];
	if (!rmp_lane_quiet(l)) {
		if (l->open && !l->recovering)
			order_busy(r, l, c, atomic, dom, adom);
		return;
	}
	/* every turn allowed; an atomic's room is a WRITE's plus a responder
	 * resource (rmp_lane_fit); one_psn_room, its slot check split */
	if (!ring_room(r, l, 1))
		return;
	st = rmp_stub_at(r, l, l->next);
	if (st->inc != 0 && !(st->flags & (RS_ANSWERED | RS_ACKED))) {
		order_slot(r, c, psn, atomic, dom, adom);
		return;
	}
	order_free(r, l, c, psn, atomic, dom, adom);
}

/* Stubs for client PSNs cpsn.. at the lane's next PSNs; cmsn is the
 * client's MSN once the last one completes.  Field by field, here and in
 * rev_set: initializers are compiled to rep stos (GCC's generic tuning),
 * which was a third of the request path's time (perf, bench_lanes). */
static __rte_always_inline uint32_t
place(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint32_t cpsn,
      uint32_t span, uint8_t kind, bool ends, uint32_t cmsn)
{
	const uint32_t lpsn = l->next;

	for (uint32_t k = 0; k < span; k++) {
		struct rmp_stub *st = rmp_stub_at(r, l, roce_psn_add(lpsn, k));
		const bool last = k + 1 == span;

		st->lpsn = roce_psn_add(lpsn, k);
		st->conn = rc_index(r->rc, c);
		st->inc = c->incarnation;
		st->cpsn = roce_psn_add(cpsn, k);
		st->kind = kind;
		st->orig = 0;
		st->flags = (uint8_t)((k == 0 ? RS_FIRST : 0) | (last && ends ? RS_ENDS_MSG : 0));
		st->cmsn = last ? cmsn : roce_psn_add(cmsn, ends ? ROCE_PSN_MASK : 0);
	}
	l->next = roce_psn_add(l->next, span);
	if (kind != RK_ACKABLE)
		l->rd_out++;
	if (kind != RK_ACKABLE && l->unans_set)
		l->atom_since++;
	return lpsn;
}

/* c placed on l: the streaming turn (rmp_wake) counts from its first. */
static __rte_always_inline void
placed_by(struct remap *r, struct rmp_lane *l, const struct rc_conn *c)
{
	const uint32_t slot = rc_index(r->rc, c);

	if (l->msg_conn != slot || l->msg_inc != c->incarnation) {
		l->streak = 0;
		l->opener = 0;
	}
	l->msg_conn = slot;
	l->msg_inc = c->incarnation;
}

/* The reverse entry of client PSN cpsn: it went out at lane PSN lpsn. */
static inline void
rev_set(struct rmp_rev *rv, uint32_t cpsn, uint32_t lpsn, uint8_t kind, uint32_t cmsn,
	uint64_t fp)
{
	rv->orig = 0;
	rv->fp = fp;
	rv->cpsn = cpsn;
	rv->lpsn = lpsn;
	rv->cmsn = cmsn;
	rv->valid = 1;
	rv->kind = kind;
	rv->answered = 0;
}

/* Sent now, or (the lane recovering) its place kept until it is asked
 * for again. */
static enum remap_verdict
send_or_hold(struct remap *r, struct rmp_lane *l, uint8_t *f, struct roce_pkt *p,
	     uint32_t lpsn, uint64_t now)
{
	if (l->recovering) {
		r->c.recovery_held++;
		return REMAP_DROP;
	}
	stitch(r, l, f, p, lpsn, now);
	return REMAP_MODIFIED;
}

/* The client's next request: a new lane PSN and its stubs. */
static enum remap_verdict
req_fresh(struct remap *r, struct rmp_lane *l, struct rc_conn *c, struct rmp_conn *rcn,
	  uint8_t *f, struct roce_pkt *p, uint64_t now)
{
	const uint8_t kind = rmp_kind_of(p);
	const uint32_t span = rmp_span(r, l->server, f, p);
	const bool ends = kind != RK_ACKABLE || (p->oi->flags & ROCE_F_LAST);
	const uint32_t cpsn = p->psn;
	uint32_t lpsn, cmsn;
	uint64_t fp;

	if (!rmp_turn(r, l, c, kind, span, !ends, now) || !lane_room(r, l, kind, span))
		return REMAP_DROP;
	/* what it asked, to tell a new life from a retransmission
	 * (rmp_new_life), where no other function keeps the table */
	fp = r->servers[l->server].keep_conns ? rmp_content_fp(f, p) : 0;
	rmp_served(r, l, c);
	cmsn = ends ? roce_psn_add(rcn->msn, 1) : rcn->msn;
	lpsn = place(r, l, c, cpsn, span, kind, ends, cmsn);
	l->msg_open = !ends;
	placed_by(r, l, c);
	if (!ends) {
		l->opener = 1;
		l->opened_tsc = now;
	}
	rcn->msn = cmsn;
	/* every PSN of a READ span: a requester may resume a READ from the
	 * first response packet it is missing */
	for (uint32_t k = 0; k < span && k <= r->crev_mask; k++) {
		const uint32_t q = roce_psn_add(cpsn, k);

		rev_set(&rcn->rev[q & r->crev_mask], q, roce_psn_add(lpsn, k), kind,
			k + 1 == span ? cmsn
				      : ends ? roce_psn_add(cmsn, ROCE_PSN_MASK) : rcn->msn,
			fp);
	}
	rcn->next = roce_psn_add(cpsn, span);
	r->c.stitched++;
	return send_or_hold(r, l, f, p, lpsn, now);
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
	/* the next client is asked now; a PSN nobody will resend is filled
	 * only once this request has left (at the server's next answer):
	 * emitted frames go before it, and a filler after its PSN would
	 * reach the server first (fuzz_remap, regress-filler-before-resend) */
	rmp_prompt(r, l, emit, emit_cap, n_emit, false);
}

/*
 * An answer the client already had, asked again (it was lost on the way
 * to the client): given here from what swordd recorded, as the server's
 * duplicate handling would: a real atomic's result (forwarded, it could
 * find the server's replay cache overwritten by other clients' atomics on
 * the same lane), or the ACK of a WRITE/SEND whose stub is gone.
 */
static enum remap_verdict
answer_again(struct remap *r, struct rmp_lane *l, const struct rc_conn *c,
	     const struct rmp_conn *rcn, const struct rmp_rev *rv,
	     struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	const bool atomic = rv->kind == RK_ATOMIC;

	if (*n_emit < emit_cap &&
	    rmp_build_aeth(r, l, c, rcn, rv->cpsn,
			   roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID),
			   rv->cmsn, atomic ? &rv->orig : NULL, &emit[*n_emit]) == 0) {
		(*n_emit)++;
		if (atomic)
			r->c.atomic_replayed++;
		else
			r->c.reacked++;
	}
	return REMAP_DROP;
}

/* A READ asked again whose stub is gone or that the server has completed:
 * placed anew at the lane's next PSN (the server would execute a duplicate
 * READ again anyway, on memory as it is then). */
static enum remap_verdict
read_again(struct remap *r, struct rmp_lane *l, struct rc_conn *c, struct rmp_conn *rcn,
	   uint8_t *f, struct roce_pkt *p, uint64_t now)
{
	const uint32_t span = rmp_span(r, l->server, f, p);
	const struct rmp_rev *last = &rcn->rev[roce_psn_add(p->psn, span - 1) & r->crev_mask];
	uint32_t lpsn;

	if (!last->valid || last->cpsn != roce_psn_add(p->psn, span - 1)) {
		r->c.retrans_expired++;
		return REMAP_DROP;
	}
	if (!lane_room(r, l, RK_READ, span))
		return REMAP_DROP;
	lpsn = place(r, l, c, p->psn, span, RK_READ, true, last->cmsn);
	for (uint32_t k = 0; k < span && k <= r->crev_mask; k++)
		rcn->rev[roce_psn_add(p->psn, k) & r->crev_mask].lpsn = roce_psn_add(lpsn, k);
	r->c.retransmitted++;
	return send_or_hold(r, l, f, p, lpsn, now);
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

	if (!rv->valid || rv->cpsn != p->psn || rv->kind != rmp_kind_of(p)) {
		r->c.retrans_expired++;
		return REMAP_DROP;
	}
	if (rv->kind == RK_ATOMIC && rv->answered)
		return answer_again(r, l, c, rcn, rv, emit, emit_cap, n_emit);
	lpsn = rv->lpsn;
	st = rmp_stub_get(r, l, lpsn);
	if (st != NULL && (st->conn != rc_index(r->rc, c) || st->inc != c->incarnation ||
			   st->cpsn != p->psn))
		st = NULL;
	if (st == NULL) {
		if (rv->kind == RK_ACKABLE && roce_psn_diff(p->psn, rcn->acked) < 0)
			return answer_again(r, l, c, rcn, rv, emit, emit_cap, n_emit);
		if (rv->kind == RK_READ)
			return read_again(r, l, c, rcn, f, p, now);
		r->c.retrans_expired++;
		return REMAP_DROP;
	}
	/* a READ the server has completed: asked again at its old PSN, the
	 * server could only answer from responder resources that other
	 * clients' READs and atomics on the lane may have recycled */
	if (rv->kind == RK_READ && roce_psn_diff(lpsn, l->una) < 0 && !l->recovering)
		return read_again(r, l, c, rcn, f, p, now);
	if (l->recovering) {
		int32_t d = roce_psn_diff(lpsn, l->resend);

		if (d > 0) {
			/* the one it waits for may have been answered since it
			 * was asked for (a READ placed twice): fill it then */
			rmp_prompt(r, l, emit, emit_cap, n_emit, true);
			r->c.recovery_held++;
			return REMAP_DROP;
		}
		if (d == 0)
			recovery_advance(r, l, lpsn, rmp_span(r, l->server, f, p), emit, emit_cap, n_emit);
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
	enum remap_verdict v;
	int32_t d;

	if (roce_psn_diff(p->psn, rcn->bind_psn) < 0) {
		r->c.before_binding++;  /* sent before the binding: its own QP */
		/* rmp_new_life; a frame that fails its ICRC changes nothing */
		if (p->psn == c->initial_psn && (icrc_ok || roce_icrc_verify(f, p)))
			rcn->initial_again = 1;
		return REMAP_PASS;
	}
	if (!l->open || rcn->state == RC_LOST) {
		r->c.dead_lane_dropped++;
		if (icrc_ok || roce_icrc_verify(f, p))   /* a bad frame creates nothing */
			rmp_tell_dead(r, l, c, rcn, emit, emit_cap, n_emit);
		return REMAP_DROP;
	}
	if (!icrc_ok && !roce_icrc_verify(f, p)) {
		r->c.bad_icrc_dropped++;
		return REMAP_DROP;
	}
	if (rmp_two_sided(p)) {
		/* the lane's receive queue is another client's, its own QP
		 * is behind in PSNs: nowhere to deliver it (README) */
		r->c.two_sided_dropped++;
		return REMAP_DROP;
	}
	d = roce_psn_diff(p->psn, rcn->next);
	if (d < 0)
		return req_retransmit(r, l, c, rcn, f, p, now, emit, emit_cap, n_emit);
	if (d > 0) {
		/* what it sent before was refused or lost: its turn comes */
		r->c.gap_dropped++;
		rmp_wait(r, l, c, rcn, RK_UNSEEN);
		v = REMAP_DROP;
	} else {
		v = req_fresh(r, l, c, rcn, f, p, now);
		if (v == REMAP_DROP && rcn->next == p->psn)   /* refused, not held */
			rmp_wait(r, l, c, rcn, rmp_kind_of(p));
	}
	rmp_wake(r, l, now, emit, emit_cap, n_emit);
	return v;
}

enum direct { DIRECT_PASS, DIRECT_DROP, DIRECT_BOUND };

/* Not on a lane yet: note how far it has sent; bind at a fresh request
 * (one never sent before) when that is allowed (rmp_bind), or drain a
 * busy connection to bind it (rmp_drain_start).  Only a verified frame
 * gets here: it moves the window or binds. */
static enum direct
req_direct(struct remap *r, struct rc_conn *c, struct rmp_conn *rcn, int server,
	   uint8_t *f, const struct roce_pkt *p, uint64_t now)
{
	const uint32_t end = roce_psn_add(p->psn, rmp_span(r, (uint32_t)server, f, p));
	const bool fresh = rcn->dnext_set && rcn->dnext == p->psn;

	if (rmp_two_sided(p)) {
		rcn->two_sided = 1;
		r->c.two_sided_direct++;
	}
	if (!rcn->dnext_set || roce_psn_diff(end, rcn->dnext) > 0) {
		rcn->dnext = end;
		rcn->dnext_set = 1;
	}
	if (rcn->draining) {
		/* before the drain point: its own QP still completes them */
		if (roce_psn_diff(p->psn, rcn->drain_psn) < 0)
			return DIRECT_PASS;
		if (rmp_drained(rcn) && rmp_bind_drained(r, c, rcn, server) != NULL)
			return DIRECT_BOUND;   /* routed: the resend, or a gap */
		if (!rcn->draining)
			return DIRECT_PASS;    /* abandoned */
		r->c.drain_dropped++;
		return DIRECT_DROP;
	}
	if (!fresh || rcn->two_sided)
		return DIRECT_PASS;
	if (!c->by_cm && !r->prm.out_of_band) {
		/* its QPN may come back in a new life nothing on the wire
		 * shows (remap_params.out_of_band): its own QP decides */
		if (!rcn->out_of_band) {
			rcn->out_of_band = 1;
			r->c.out_of_band_direct++;
		}
		return DIRECT_PASS;
	}
	if (rmp_bind(r, c, rcn, server, f, p, now))
		return DIRECT_BOUND;
	if (roce_psn_diff(p->psn, c->una) > 0 && rmp_drain_start(r, c, rcn, server, f, p)) {
		r->c.drain_dropped++;
		return DIRECT_DROP;
	}
	return DIRECT_PASS;
}

/*
 * The common case, without the general steps (issue #12's cost budget):
 * a bound connection's next request, one PSN that is a whole one-sided
 * message (a WRITE only, or an atomic), verified, on an open lane that is
 * not recovering and that nobody waits on or holds, with room.  It is
 * what remap_request_general -> req_route -> req_fresh -> stitch does for
 * it, step for step, and nothing else happens there (rmp_turn allows,
 * rmp_served only clears waiting, the lane stays free so rmp_wake returns
 * at once); fuzz_remap runs every script both ways and compares what
 * leaves.
 */

/* Which stub a common-case request leaves (RK_EMPTY: not one): a WRITE
 * only without immediate, or an atomic.  By opcode: a handful of
 * compares where the flags took a dozen. */
static inline uint8_t
fast_kind(const struct roce_pkt *p)
{
	switch (p->opcode) {
	case ROCE_RC_WRITE_ONLY:
		return RK_ACKABLE;
	case ROCE_RC_COMPARE_SWAP:
	case ROCE_RC_FETCH_ADD:
		return RK_ATOMIC;
	default:
		return RK_EMPTY;
	}
}

/* The connection p is the next request of, on a free lane with room for
 * it (kind), found and checked here; else NULL. */
static __rte_noinline struct rc_conn *
fast_conn_untold(struct remap *r, const struct roce_pkt *p, uint8_t kind, uint64_t now)
{
	const struct rmp_conn *rcn;
	struct rmp_lane *l;
	struct rc_conn *c;

	if (p->ip_version != 4 || rmp_server_of(r, p->dst_ip4) < 0 ||
	    (c = rc_find_req(r->rc, p->src_ip4, p->dst_ip4, p->qpn)) == NULL ||
	    rmp_held_at_start(r, c, now))
		return NULL;
	rcn = &r->conns[rc_index(r->rc, c)];
	if (rcn->inc != c->incarnation || rcn->state != RC_BOUND || p->psn != rcn->next ||
	    roce_psn_diff(p->psn, rcn->bind_psn) < 0)
		return NULL;
	l = &r->lanes[rcn->lane];
	if (!rmp_lane_quiet(l) || (kind != RK_ACKABLE && !rd_room(l)) || !one_psn_room(r, l))
		return NULL;
	return c;
}

/* The same from rmp_order_domains' answer for this very request (told:
 * it checked the rest when the serializer asked, and nothing of
 * remapping ran since); else NULL. */
static inline struct rc_conn *
fast_conn_told(struct remap *r, const struct roce_pkt *p, uint8_t kind, uint64_t now)
{
	struct rc_conn *c = &((struct rc_table_head *)(void *)r->rc)->conns[r->told.conn];

	if (c->incarnation != r->told.inc || p->psn != r->told.psn || c->srv_qpn != p->qpn ||
	    c->cl_ip != p->src_ip4 || c->srv_ip != p->dst_ip4 || p->ip_version != 4 ||
	    (kind != RK_ACKABLE && !r->told.rd_room) || rmp_held_at_start(r, c, now))
		return NULL;
	return c;
}

/*
 * A bound connection's next READ on a quiet lane with room for its span
 * (one lane PSN per path MTU of data) and a responder resource: what
 * remap_request_general -> req_route -> req_fresh does for it, step for
 * step (fuzz_remap compares the two on every script).  Out of line: the
 * budget's path is the WRITE and the atomic, and never told (the
 * serializer asks about atomics only, and its answer covers one PSN).
 */
static __rte_noinline bool
read_request_fast(struct remap *r, uint8_t *f, struct roce_pkt *p, bool *icrc_ok,
		  uint64_t now)
{
	const uint32_t cpsn = p->psn;
	struct rmp_conn *rcn;
	struct rmp_lane *l;
	struct rc_conn *c;
	uint32_t lpsn, cmsn, span;
	uint64_t fp = 0;

	rmp_forget_told(r);
	if (p->ip_version != 4 || rmp_server_of(r, p->dst_ip4) < 0 ||
	    (c = rc_find_req(r->rc, p->src_ip4, p->dst_ip4, p->qpn)) == NULL ||
	    rmp_held_at_start(r, c, now))
		return false;
	rcn = &r->conns[rc_index(r->rc, c)];
	if (rcn->inc != c->incarnation || rcn->state != RC_BOUND || cpsn != rcn->next ||
	    roce_psn_diff(cpsn, rcn->bind_psn) < 0)
		return false;
	l = &r->lanes[rcn->lane];
	span = rmp_span(r, l->server, f, p);
	if (!rmp_lane_quiet(l) || rmp_lane_fit(r, l, RK_READ, span) != RMP_FITS)
		return false;
	if (!*icrc_ok && !(*icrc_ok = roce_icrc_verify(f, p)))
		return false;  /* the general steps count and drop it */
	rmp_torn_begin(r, p->dst_ip4);
	if (unlikely(r->servers[l->server].keep_conns)) {
		/* rmp_keep_request's upkeep of a known connection */
		rc_touch(c, now);
		if (roce_psn_diff(roce_psn_add(cpsn, span), c->next_psn) > 0)
			c->next_psn = roce_psn_add(cpsn, span);
		fp = rmp_content_fp(f, p);
	}
	r->c.req_seen++;
	r->c.stitched++;
	rcn->waiting = 0;                  /* rmp_served on a free lane */
	cmsn = roce_psn_add(rcn->msn, 1);
	lpsn = place(r, l, c, cpsn, span, RK_READ, true, cmsn);
	placed_by(r, l, c);
	/* every PSN of its span (req_fresh: a requester may resume a READ
	 * from the first response packet it is missing) */
	for (uint32_t k = 0; k < span && k <= r->crev_mask; k++) {
		const uint32_t q = roce_psn_add(cpsn, k);

		rev_set(&rcn->rev[q & r->crev_mask], q, roce_psn_add(lpsn, k), RK_READ,
			k + 1 == span ? cmsn : rcn->msn, fp);
	}
	rcn->msn = cmsn;
	rcn->next = roce_psn_add(cpsn, span);
	stitch(r, l, f, p, lpsn, now);
	rmp_torn_end(r);
	return true;
}

bool
remap_request_fast(struct remap *r, uint8_t *f, struct roce_pkt *p, bool *icrc_ok,
		   uint64_t now)
{
	const uint32_t cpsn = p->psn;
	const uint8_t kind = fast_kind(p);
	struct rmp_conn *rcn;
	struct rmp_lane *l;
	struct rc_conn *c;
	uint32_t slot, lpsn, cmsn;
	uint64_t fp = 0;

	if (kind == RK_EMPTY || r->prm.general_only) {
		if (p->opcode == ROCE_RC_READ_REQUEST && !r->prm.general_only)
			return read_request_fast(r, f, p, icrc_ok, now);
		rmp_forget_told(r);
		return false;
	}
	c = r->told.set ? fast_conn_told(r, p, kind, now) : NULL;
	rmp_forget_told(r);
	if (c == NULL && (c = fast_conn_untold(r, p, kind, now)) == NULL)
		return false;
	if (!*icrc_ok && !(*icrc_ok = roce_icrc_verify(f, p)))
		return false;  /* the general steps count and drop it */
	rmp_torn_begin(r, p->dst_ip4);
	slot = rc_index(r->rc, c);
	rcn = &r->conns[slot];
	l = &r->lanes[rcn->lane];
	if (unlikely(r->servers[l->server].keep_conns)) {
		/* rmp_keep_request's upkeep of a known connection */
		rc_touch(c, now);
		if (roce_psn_diff(roce_psn_add(cpsn, 1), c->next_psn) > 0)
			c->next_psn = roce_psn_add(cpsn, 1);
		fp = rmp_content_fp(f, p);
	}
	r->c.req_seen++;
	r->c.stitched++;
	rcn->waiting = 0;                  /* rmp_served on a free lane */
	cmsn = roce_psn_add(rcn->msn, 1);
	rcn->msn = cmsn;
	rcn->next = roce_psn_add(cpsn, 1);
	lpsn = place(r, l, c, cpsn, 1, kind, true, cmsn);
	placed_by(r, l, c);
	rev_set(&rcn->rev[cpsn & r->crev_mask], cpsn, lpsn, kind, cmsn, fp);
	stitch(r, l, f, p, lpsn, now);
	rmp_torn_end(r);
	return true;
}

static enum remap_verdict
request_general(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
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
	rmp_forget_told(r);
	if (!(p->oi->flags & ROCE_F_RC))
		return rmp_on_cm(r, f, p, true, now, emit, emit_cap, n_emit);
	if ((server = rmp_managed(r, p, true)) < 0)
		return REMAP_PASS;
	sv = &r->servers[server];
	r->c.req_seen++;
	rmp_learn_pmtu(r, (uint32_t)server, f, p, &icrc_ok);
	c = rc_find_req(r->rc, p->src_ip4, p->dst_ip4, p->qpn);
	if (sv->keep_conns)
		c = rmp_keep_request(r, c, f, p, &icrc_ok, now);
	if (sv->held && rmp_held_at_start(r, c, now)) {
		r->c.start_held++;
		return REMAP_DROP;
	}
	if (c == NULL) {
		r->c.unbound_direct++;
		return REMAP_PASS;
	}
	rcn = &r->conns[rc_index(r->rc, c)];
	if (sv->keep_conns && icrc_ok && rcn->inc == c->incarnation &&
	    rcn->state != RC_DIRECT && rmp_new_life(r, rcn, f, p)) {
		/* its QP was re-created out of band: the old life ends (its
		 * lane closes if it owned one, lib/rc's listeners) and this
		 * one starts on its own QP, which the server has reset */
		rc_reincarnate(r->rc, c, p->psn, now, false);
		rmp_keep_request(r, c, f, p, &icrc_ok, now);   /* its first PSN */
		r->c.new_lives++;
	}
	if (rcn->inc != c->incarnation || rcn->state == RC_DIRECT) {
		/* a frame that fails its ICRC check creates nothing (I8),
		 * not even remapping's record of the connection */
		if (!icrc_ok && !roce_icrc_verify(f, p)) {
			r->c.unbound_direct++;
			return REMAP_PASS;
		}
		switch (req_direct(r, c, rmp_conn_of(r, c), server, f, p, now)) {
		case DIRECT_DROP:
			return REMAP_DROP;
		case DIRECT_PASS:
			r->c.unbound_direct++;
			return REMAP_PASS;
		case DIRECT_BOUND:
		default:
			break;
		}
		icrc_ok = true;
		rcn = rmp_conn_of(r, c);
	}
	return req_route(r, c, rcn, f, p, icrc_ok, now, emit, emit_cap, n_emit);
}

/* What may change is the server's the request is to (remap_state.c). */
enum remap_verdict
remap_request_general(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
		      struct roce_pkt *p, bool icrc_ok, uint64_t now,
		      struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	enum remap_verdict v;

	rmp_torn_begin(r, p->ip_version == 4 ? p->dst_ip4 : RMP_TORN_ALL);
	v = request_general(r, f, len, cap, p, icrc_ok, now, emit, emit_cap, n_emit);
	rmp_torn_end(r);
	return v;
}

enum remap_verdict
remap_on_request(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
		 struct roce_pkt *p, bool icrc_ok, uint64_t now,
		 struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	*n_emit = 0;
	if (remap_request_fast(r, f, p, &icrc_ok, now))
		return REMAP_MODIFIED;
	return remap_request_general(r, f, len, cap, p, icrc_ok, now, emit, emit_cap,
				     n_emit);
}
