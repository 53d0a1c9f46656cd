/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_wait.c — clients a lane had to refuse, and asking them back.
 *
 * Why it exists: swordd keeps no payloads, so a request it cannot place
 * now (no responder resource left, another client's multi-packet message
 * open on the lane, a gap before it) is dropped and must come again.  Two
 * things go wrong if that is left to the client: a client without a
 * retransmit timer (rxe with timeout 0, perftest -u 0) waits for a NAK
 * forever, and one that does retry can be refused forever while others
 * take every free place.  So refused clients queue per lane, first come
 * first served; the head gets an RNR NAK at the PSN the lane waits for
 * from it once its request fits and every answer before it is in (a NAK
 * acknowledges everything before it), and the lane is held for it until
 * it comes (for resend_timeout_tsc; a client whose resend did not come
 * queues again, or a lost NAK would leave it waiting for ever).  Asking
 * happens on every frame of the lane and on remap_tick: with frames
 * alone, a lane that fell quiet with clients waiting stayed quiet
 * (perftest ib_atomic_bw -q 4 on rxe over rdma_cm stalled so).  One NAK
 * per turn, sent only when the resend will be taken: rxe ignores a sequence NAK while a retry it
 * started has not completed a SEND/WRITE, so sequence NAKs left
 * atomic-only clients stuck; RNR NAKs are retried on their own timer.
 *
 * Holding the lane means keeping room for that client, not stopping
 * everyone else: others still place requests that leave room for it (a
 * responder resource if it waits to place a READ or an atomic, a lane
 * PSN) and open no message.  Stopping everyone made a convoy: under
 * load each refused client queued behind the head, every request then
 * cost a refusal and an RNR NAK round trip, and a 1%-loss soak of 16
 * QPs on one lane ran at 31 lock ops/s.
 *
 * The client that placed last may go on a little (RMP_STREAK) while
 * others wait, and one streaming multi-packet messages is not cut short
 * by asking the head as soon as its message closes (streaming()): each
 * change of turn costs a refusal, an RNR NAK and a window sent again.
 */
#include "remap_internal.h"

/* Requests the last placer may still place while others wait. */
#define RMP_STREAK 64

static bool
is(const struct remap *r, const struct rc_conn *c, uint32_t slot, uint32_t inc)
{
	return rc_index(r->rc, c) == slot && c->incarnation == inc;
}

void
rmp_wait(struct remap *r, struct rmp_lane *l, const struct rc_conn *c,
	 struct rmp_conn *rcn, uint8_t kind)
{
	uint32_t cap = rc_capacity(r->rc);

	/* asked back, and the resend it was asked for refused (the room kept
	 * went to a request it did not fit beside): its turn is over, it
	 * queues anew, the lane is not held for a resend that has come.  Not
	 * for a gap: those are its frames sent before it got the NAK, still
	 * arriving; asked again for them, it would roll back over what its
	 * resend places meanwhile, and the server take that for duplicates
	 * (the full rig: 415 in one atomic_bw_q4_remap_rdmacm run) */
	if (kind != RK_UNSEEN && l->resv_set && is(r, c, l->resv_conn, l->resv_inc))
		l->resv_set = 0;
	if (rcn->waiting) {
		/* the request it waits to place, seen now: what room it needs */
		if (kind != RK_UNSEEN)
			rcn->wait_kind = kind;
		return;
	}
	/* still in the queue from before (it placed a request by itself
	 * since, so it was not waiting): it keeps that place */
	if (!rcn->queued) {
		if (l->wait_n >= cap)
			return;
		l->wait[(l->wait_head + l->wait_n) % cap] = rc_index(r->rc, c);
		l->wait_n++;
		rcn->queued = 1;
	}
	rcn->waiting = 1;
	rcn->wait_kind = kind;
	r->c.waited++;
}

static void
pop(struct remap *r, struct rmp_lane *l, struct rmp_conn *rcn)
{
	rcn->waiting = 0;
	if (rcn->queued)
		rcn->queued--;
	l->wait_head = (l->wait_head + 1) % rc_capacity(r->rc);
	l->wait_n--;
}

/* The queue's head, dead entries skipped (their client's life ended or
 * it got its place meanwhile). */
static struct rmp_conn *
head(struct remap *r, struct rmp_lane *l, struct rc_conn **c)
{
	while (l->wait_n) {
		uint32_t slot = l->wait[l->wait_head];
		struct rmp_conn *rcn = &r->conns[slot];

		*c = rc_at(r->rc, slot);
		if (*c != NULL && rcn->waiting && rcn->inc == (*c)->incarnation &&
		    rcn->state == RC_BOUND && &r->lanes[rcn->lane] == l)
			return rcn;
		pop(r, l, rcn);
	}
	return NULL;
}

/* Would a request of this kind and span leave room on l for the one w
 * waits to place (a responder resource if a READ or an atomic, one lane
 * PSN)? */
static bool
fits_beside(const struct remap *r, const struct rmp_lane *l, const struct rmp_conn *w,
	    uint8_t kind, uint32_t span)
{
	const uint32_t rd_need = w->wait_kind != RK_ACKABLE ? 1 : 0;

	if (kind != RK_ACKABLE) {
		if (l->rd_out + rd_need + 1 > l->rd_max)
			return false;
		if (l->unans_set && l->atom_since + rd_need + 1 > l->rd_max)
			return false;
	}
	return (uint32_t)roce_psn_diff(roce_psn_add(l->next, span + 1), l->una) <= r->prm.ring;
}

/*
 * Is l held for a client asked back (its resend not come yet)?  Not once
 * resend_timeout_tsc has passed: its NAK or its resend was lost, or it
 * stopped.  It queues again then (at the back: the others waited too),
 * or it would never be asked again: a client without a retransmit timer
 * would wait for ever.
 */
static bool
resv_live(struct remap *r, struct rmp_lane *l, uint64_t now)
{
	struct rc_conn *c;
	struct rmp_conn *rcn;

	if (!l->resv_set)
		return false;
	if (now - l->resv_tsc <= r->prm.resend_timeout_tsc)
		return true;
	l->resv_set = 0;
	r->c.resv_expired++;
	c = rc_at(r->rc, l->resv_conn);
	rcn = &r->conns[l->resv_conn];
	if (c != NULL && c->incarnation == l->resv_inc && rcn->inc == c->incarnation &&
	    rcn->state == RC_BOUND && &r->lanes[rcn->lane] == l)
		rmp_wait(r, l, c, rcn, rcn->wait_kind);
	return false;
}

enum turn { TURN_YES, TURN_STREAK, TURN_NO };

/* rmp_turn's answer, the reservation taken as live or as expired. */
static enum turn
turn_of(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint8_t kind,
	uint32_t span, bool opens, bool resv_live)
{
	struct rc_conn *hc;
	struct rmp_conn *h;

	/* a message under way goes on: nobody else can use the lane before
	 * its last packet anyway */
	if (l->msg_open)
		return is(r, c, l->msg_conn, l->msg_inc) ? TURN_YES : TURN_NO;
	if (l->resv_set && resv_live) {
		if (is(r, c, l->resv_conn, l->resv_inc))
			return TURN_YES;
		return !opens && fits_beside(r, l, &r->conns[l->resv_conn], kind, span) ?
		       TURN_YES : TURN_NO;
	}
	if ((h = head(r, l, &hc)) == NULL || hc == c)
		return TURN_YES;
	if (!opens && fits_beside(r, l, h, kind, span))
		return TURN_YES;
	/* no room beside it: the client that placed the last request may
	 * go on a little while others wait (each change of turn costs a
	 * refusal, a NAK and the refused client's window sent again) */
	if (is(r, c, l->msg_conn, l->msg_inc) && l->streak < RMP_STREAK)
		return TURN_STREAK;
	return TURN_NO;
}

bool
rmp_turn_allows(struct remap *r, struct rmp_lane *l, const struct rc_conn *c,
		uint8_t kind, uint32_t span, bool opens)
{
	if (rmp_lane_free(l))
		return true;
	return turn_of(r, l, c, kind, span, opens, true) != TURN_NO &&
	       (!l->resv_set || turn_of(r, l, c, kind, span, opens, false) != TURN_NO);
}

bool
rmp_turn(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint8_t kind,
	 uint32_t span, bool opens, uint64_t now)
{
	enum turn t;

	if (rmp_lane_free(l))
		return true;
	(void)resv_live(r, l, now);
	t = turn_of(r, l, c, kind, span, opens, true);
	if (t == TURN_STREAK)
		l->streak++;
	if (t != TURN_NO)
		return true;
	if (l->msg_open)
		r->c.msg_open_held++;
	else
		r->c.turn_waited++;
	return false;
}

void
rmp_served(struct remap *r, struct rmp_lane *l, const struct rc_conn *c)
{
	struct rc_conn *hc;
	struct rmp_conn *h;

	if (l->resv_set && is(r, c, l->resv_conn, l->resv_inc))
		l->resv_set = 0;
	if ((h = head(r, l, &hc)) != NULL && hc == c) {
		pop(r, l, h);
		return;
	}
	/* placed by itself from further back: not waiting any more (its
	 * entry is skipped when it comes to the head) */
	r->conns[rc_index(r->rc, c)].waiting = 0;
}

bool
rmp_head_is(struct remap *r, struct rmp_lane *l, uint32_t cl_ip, uint32_t cl_qpn)
{
	struct rc_conn *c;

	return head(r, l, &c) != NULL && c->cl_ip == cl_ip && c->cl_qpn == cl_qpn;
}

/*
 * Is the client that placed last streaming multi-packet messages, with
 * turn left (RMP_STREAK) and not waiting itself?  Then the head is not
 * asked yet.  Asked as soon as that client's message closed, the head got
 * the lane reserved, the streamer's next message was refused, and every
 * change of turn cost a message: perftest ib_write_bw -q 4 (4 KiB, MTU
 * 1024) remapped onto one lane on the rig placed about one message per
 * refusal, each refusal dropping a window (127 frames), 44-98 ops/s
 * against 1,477 unremapped.  A streamer that falls quiet
 * (stream_quiet_tsc; remap_tick looks) or ends its turn is not waited for.
 */
static bool
streaming(struct remap *r, struct rmp_lane *l, const struct rc_conn *hc, uint64_t now)
{
	const struct rc_conn *mc;

	if (r->prm.stream_quiet_tsc == 0 || !l->opener || l->streak >= RMP_STREAK ||
	    now - l->opened_tsc > r->prm.stream_quiet_tsc)
		return false;
	mc = rc_at(r->rc, l->msg_conn);
	return mc != NULL && mc != hc && mc->incarnation == l->msg_inc &&
	       !r->conns[l->msg_conn].waiting;
}

void
rmp_wake(struct remap *r, struct rmp_lane *l, uint64_t now, struct remap_emit *emit,
	 uint32_t emit_cap, uint32_t *n_emit)
{
	struct rc_conn *c;
	struct rmp_conn *h;

	if (rmp_lane_free(l) || resv_live(r, l, now) || l->wait_n == 0)
		return;
	if ((h = head(r, l, &c)) == NULL || *n_emit >= emit_cap)
		return;
	if (streaming(r, l, c, now))
		return;
	/* its answers first (the NAK acknowledges all before it), and its
	 * request must fit when it comes */
	if (h->acked != h->next ||
	    (l->msg_open && !is(r, c, l->msg_conn, l->msg_inc)) ||
	    rmp_lane_fit(r, l, h->wait_kind, 1) != RMP_FITS)
		return;
	/* an RNR NAK with the shortest timer (0.01 ms): "resend from here",
	 * like a sequence NAK, but rxe's requester takes every one (its
	 * sequence-NAK retries are ignored while one is started, and an
	 * atomic-only QP never resets that; rnr_retry 7 is unlimited) */
	if (rmp_build_aeth(r, l, c, h, h->next, roce_syndrome_make(ROCE_AETH_RNR_NAK, 1),
			   h->msn, NULL, &emit[*n_emit]) != 0)
		return;
	(*n_emit)++;
	pop(r, l, h);
	l->resv_set = 1;
	l->resv_conn = rc_index(r->rc, c);
	l->resv_inc = c->incarnation;
	l->resv_tsc = now;
	r->c.resends_nakked++;
}

void
remap_tick(struct remap *r, uint64_t now, struct remap_emit *emit, uint32_t emit_cap,
	   uint32_t *n_emit)
{
	*n_emit = 0;
	rmp_forget_told(r);
	for (uint32_t k = 0; k < r->n_lanes; k++) {
		struct rmp_lane *l = &r->lanes[k];

		if (l->open && (l->wait_n || l->resv_set)) {
			rmp_torn_begin(r, r->servers[l->server].ip);
			rmp_wake(r, l, now, emit, emit_cap, n_emit);
		}
	}
	if (r->prompt_pending || r->dead_pending || r->dreq_pending)
		rmp_torn_begin(r, RMP_TORN_ALL);
	if (r->prompt_pending) {
		r->prompt_pending = false;
		for (uint32_t k = 0; k < r->n_lanes; k++) {
			struct rmp_lane *l = &r->lanes[k];

			if (!l->prompt_due)
				continue;
			if (l->open && l->recovering)
				rmp_prompt(r, l, emit, emit_cap, n_emit, true);
			l->prompt_due = l->open && l->recovering;
			r->prompt_pending |= l->prompt_due;
		}
	}
	if (r->dead_pending)
		rmp_tell_dead_all(r, emit, emit_cap, n_emit);
	if (r->dreq_pending)
		rmp_send_dreqs(r, emit, emit_cap, n_emit);
	rmp_torn_end(r);
}
