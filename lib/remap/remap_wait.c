/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_wait.c — clients a lane had to refuse, and asking them back.
 *
 * Why it exists: swordd keeps no payloads, so a request it cannot place
 * now (no responder resource left, another client's multi-packet message
 * open on the lane) is dropped and must come again.  Two things go wrong
 * if that is left to the client: a client without a retransmit timer
 * (rxe with timeout 0, perftest -u 0) waits for a NAK forever, and one
 * that does retry can be refused forever while others take every free
 * place.  So refused clients queue per lane, first come first served;
 * the head gets an RNR NAK at the PSN the lane waits for from it once
 * its request fits and every answer before it is in (a NAK acknowledges
 * everything before it), and the lane is held for it until it comes
 * (resend_timeout_tsc).  One NAK per turn, sent only when the resend
 * will be taken: rxe ignores a sequence NAK while a retry it started has
 * not completed a SEND/WRITE, so sequence NAKs left atomic-only clients
 * stuck; RNR NAKs are retried on their own timer.
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

	if (rcn->waiting || l->wait_n >= cap)
		return;
	rcn->waiting = 1;
	rcn->wait_kind = kind;
	l->wait[(l->wait_head + l->wait_n) % cap] = rc_index(r->rc, c);
	l->wait_n++;
	r->c.waited++;
}

/* The queue's head, dead entries skipped (their client's life ended or
 * it got its place meanwhile). */
static struct rmp_conn *
head(struct remap *r, struct rmp_lane *l, struct rc_conn **c)
{
	uint32_t cap = rc_capacity(r->rc);

	while (l->wait_n) {
		uint32_t slot = l->wait[l->wait_head];
		struct rmp_conn *rcn = &r->conns[slot];

		*c = rc_at(r->rc, slot);
		if (*c != NULL && rcn->waiting && rcn->inc == (*c)->incarnation &&
		    rcn->state == RC_BOUND && &r->lanes[rcn->lane] == l)
			return rcn;
		rcn->waiting = 0;
		l->wait_head = (l->wait_head + 1) % cap;
		l->wait_n--;
	}
	return NULL;
}

static void
pop(struct remap *r, struct rmp_lane *l, struct rmp_conn *rcn)
{
	rcn->waiting = 0;
	l->wait_head = (l->wait_head + 1) % rc_capacity(r->rc);
	l->wait_n--;
}

bool
rmp_turn(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint64_t now)
{
	struct rc_conn *hc;

	/* a message under way goes on: nobody else can use the lane before
	 * its last packet anyway */
	if (l->msg_open) {
		if (is(r, c, l->msg_conn, l->msg_inc))
			return true;
		r->c.msg_open_held++;
		return false;
	}
	if (l->resv_set && now - l->resv_tsc > r->prm.resend_timeout_tsc) {
		l->resv_set = 0;
		r->c.resv_expired++;
	}
	if (l->resv_set && !is(r, c, l->resv_conn, l->resv_inc)) {
		r->c.turn_waited++;
		return false;
	}
	if (!l->resv_set && head(r, l, &hc) != NULL && hc != c) {
		/* the client that placed the last request may go on a little
		 * while others wait: each change of turn costs a refusal, a
		 * NAK and the refused client's whole window sent again */
		if (is(r, c, l->msg_conn, l->msg_inc) && l->streak < RMP_STREAK) {
			l->streak++;
			return true;
		}
		r->c.turn_waited++;
		return false;
	}
	return true;
}

void
rmp_served(struct remap *r, struct rmp_lane *l, const struct rc_conn *c)
{
	struct rc_conn *hc;
	struct rmp_conn *h;

	if (l->resv_set && is(r, c, l->resv_conn, l->resv_inc))
		l->resv_set = 0;
	if ((h = head(r, l, &hc)) != NULL && hc == c)
		pop(r, l, h);
}

bool
rmp_head_is(struct remap *r, struct rmp_lane *l, uint32_t cl_ip, uint32_t cl_qpn)
{
	struct rc_conn *c;

	return head(r, l, &c) != NULL && c->cl_ip == cl_ip && c->cl_qpn == cl_qpn;
}

void
rmp_wake(struct remap *r, struct rmp_lane *l, uint64_t now, struct remap_emit *emit,
	 uint32_t emit_cap, uint32_t *n_emit)
{
	struct rc_conn *c;
	struct rmp_conn *h;

	if (l->wait_n == 0 || (l->resv_set && now - l->resv_tsc <= r->prm.resend_timeout_tsc))
		return;
	l->resv_set = 0;
	if ((h = head(r, l, &c)) == NULL || *n_emit >= emit_cap)
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
