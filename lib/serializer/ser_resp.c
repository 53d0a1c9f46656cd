/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_resp.c — the response path: server → client frames of managed
 * servers, as named steps (the model is rxe's completer state machine).
 *
 * Why it exists: the client must see each decision exactly as a real
 * atomic would have answered it — once per PSN, in PSN order, with the
 * MSN it expects — and the words must learn only from answers that are
 * what the server sent for requests swordd saw.
 *
 *   check     ICRC first (READ middles carry no state and are passed);
 *             a bad frame is forwarded untouched and teaches nothing.
 *   connect   the paired connection, or pairing by evidence (lib/rc).
 *   window    a response that completes PSNs beyond anything the client
 *             sent (a spoofed frame, a late answer to an older life) is
 *             forwarded and acknowledges nothing; only an underestimated
 *             READ span legitimately extends the window.
 *   msn       the server's MSN offset, from a fresh completion of a stub.
 *   walk      a response for PSN P (ACK, ATOMIC ACK, READ response with
 *             AETH; NAKs for P-1) completes every PSN up to it: word
 *             effects are retired, and for each rewritten atomic not yet
 *             answered an ATOMIC ACK is synthesized (emitted before the
 *             response, in PSN order).  An ACK never implicitly
 *             acknowledges an atomic from the client's view.
 *   own psn   what the response says of its own PSN: an ATOMIC ACK
 *             teaches the word; a NAK refuses it; an ACK at a rewritten
 *             atomic's PSN becomes that ATOMIC ACK in place; a plain ACK
 *             at a READ's or real atomic's PSN (a duplicate WRITE's
 *             answer) is dropped.
 *
 * MSN.  The server's MSN after request q is msg_seq(q) + offset; a
 * synthesized ATOMIC ACK for q carries that (or, when sent again for a
 * retransmission, the MSN it carried the first time).
 */
#include <string.h>

#include "ser_internal.h"

struct resp {
	uint32_t P;          /* the response's PSN */
	uint32_t upto;       /* last PSN it completes (ack_point) */
	uint32_t msn;
	uint8_t syn, kind, ack_syn;
	bool has_aeth, ack_point, fresh, inplace, dup_ack, atomic_ack;
	struct ser_stub *sp; /* the stub at P */
};

/* ------------------------------------------------------------------ */
/* connect */

/* Can this response be the answer to c's request at psn?  (Its own kind
 * must match the stub's: this is part of the pairing evidence.) */
static bool
may_own(void *ctx, const struct rc_conn *c, uint32_t psn)
{
	struct ser *s = ctx;
	uint8_t opc = s->pair_opcode;
	struct ser_conn *sc = ser_conn_state(s, c);
	const struct ser_stub *st = ser_stub_at(s, sc, psn);
	uint32_t f;

	if (st == NULL)
		return false;
	f = roce_opcode(st->opcode)->flags;
	switch (opc) {
	case ROCE_RC_ATOMIC_ACKNOWLEDGE:
		return (f & ROCE_F_ATOMIC) && st->kind != ST_CONT;
	case ROCE_RC_READ_RESPONSE_ONLY:
	case ROCE_RC_READ_RESPONSE_FIRST:
		return (f & ROCE_F_READ) && st->kind != ST_CONT;
	case ROCE_RC_READ_RESPONSE_LAST:
		return (f & ROCE_F_READ) != 0;
	case ROCE_RC_ACKNOWLEDGE:
		return !(f & (ROCE_F_READ | ROCE_F_ATOMIC));
	default:
		return false;
	}
}

static struct rc_conn *
resp_connect(struct ser *s, const uint8_t *f, const struct roce_pkt *p,
	     uint64_t now)
{
	struct rc_conn *c = rc_find_resp(s->rc, p->src_ip4, p->dst_ip4, p->qpn);
	bool ambiguous;

	if (c != NULL && !rc_expire_idle(s->rc, c, now))
		return c;
	/* only a positive completion of P itself is evidence */
	if (roce_has(p->oi, ROCE_HDR_AETH) &&
	    roce_syndrome_kind(roce_get_syndrome(f, p)) != ROCE_AETH_ACK)
		return NULL;
	s->pair_opcode = p->opcode;
	c = rc_pair_evidence(s->rc, p->src_ip4, p->dst_ip4, p->qpn, p->psn, now,
			     may_own, s, &ambiguous);
	if (ambiguous)
		ser_untrack_unpaired(s, p->src_ip4, p->dst_ip4, now);
	return c;
}

/* ------------------------------------------------------------------ */
/* decode, window, msn */

static void
resp_decode(struct ser *s, struct ser_conn *sc, const uint8_t *f,
	    const struct roce_pkt *p, struct resp *r)
{
	memset(r, 0, sizeof(*r));
	r->P = p->psn;
	r->has_aeth = roce_has(p->oi, ROCE_HDR_AETH);
	r->kind = ROCE_AETH_ACK;
	if (r->has_aeth) {
		r->syn = roce_get_syndrome(f, p);
		r->kind = roce_syndrome_kind(r->syn);
		r->msn = roce_get_msn(f, p);
	}
	r->ack_point = r->has_aeth;
	if (r->kind != ROCE_AETH_ACK || p->opcode == ROCE_RC_READ_RESPONSE_FIRST)
		r->upto = roce_psn_add(r->P, ROCE_PSN_MASK); /* P - 1 */
	else
		r->upto = r->P;
	r->sp = ser_stub_at(s, sc, r->P);
	/* the server's own answer to P: the walk must not make one */
	r->atomic_ack = p->opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE;
	r->inplace = p->opcode == ROCE_RC_ACKNOWLEDGE && r->kind == ROCE_AETH_ACK &&
		     r->sp != NULL && r->sp->kind == ST_REWRITTEN;
	/* A plain ACK naming a READ's or a real atomic's PSN is not its
	 * answer: a responder answers a duplicate WRITE with an ACK of its
	 * latest PSN (rxe's duplicate_request), whatever that PSN was, and it
	 * may overtake the real answer.  It completes what lies before P. */
	r->dup_ack = p->opcode == ROCE_RC_ACKNOWLEDGE && r->kind == ROCE_AETH_ACK &&
		     r->sp != NULL && !r->inplace &&
		     (r->sp->kind == ST_REAL || r->sp->kind == ST_CONT ||
		      (roce_opcode(r->sp->opcode)->flags & ROCE_F_READ));
	if (r->dup_ack)
		r->upto = roce_psn_add(r->P, ROCE_PSN_MASK); /* P - 1 */
	r->ack_syn = r->kind == ROCE_AETH_ACK && r->has_aeth ? r->syn :
		     roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID);
}

/* Does the response complete only PSNs the client sent?  An
 * underestimated READ span (pmtu above the path MTU) is the one honest
 * case of a response past the window: the READ was the last request. */
static bool
resp_in_window(struct ser *s, struct rc_conn *c, struct ser_conn *sc,
	       const struct roce_pkt *p, struct resp *r)
{
	if (!r->ack_point || roce_psn_diff(r->upto, c->next_psn) < 0)
		return true;
	if ((p->oi->flags & ROCE_F_READ) == 0 && p->opcode != ROCE_RC_READ_RESPONSE_LAST &&
	    p->opcode != ROCE_RC_READ_RESPONSE_ONLY)
		goto out;
	if (sc->last_was_read && roce_psn_diff(r->P, sc->read_maxend) < 0 &&
	    roce_psn_diff(r->P, sc->read_psn) > 0 && r->kind == ROCE_AETH_ACK &&
	    (p->opcode == ROCE_RC_READ_RESPONSE_LAST ||
	     p->opcode == ROCE_RC_READ_RESPONSE_ONLY)) {
		c->next_psn = roce_psn_add(r->P, 1);
		s->c.read_span_fixed++;
		return true;
	}
out:
	s->c.resp_out_of_window++;
	return false;
}

/*
 * The server's MSN offset (its MSN after request q is msg_seq(q) + off),
 * from a fresh completion of a stub.  A plain ACK at P carries the MSN
 * after P exactly: a fresh or coalesced ACK, or a duplicate WRITE's
 * answer, which names the server's newest PSN with its current MSN.  A
 * READ response or ATOMIC ACK at P need not: a responder re-executes a
 * duplicate READ, and rxe replays a duplicate atomic, with its current
 * MSN, that of its newest request E beyond P.  swordd sees such a
 * duplicate as fresh when it never saw P's first answer (a connection
 * met mid-life: after an eviction, a restart, a torn frame given up; or
 * every answer from P to E lost before swordd), and an offset taken from
 * it makes every ATOMIC ACK it synthesizes carry an MSN ahead of the
 * server's (closed fuzzer state-restart-atomic-ack-msn-ahead: MSN 27
 * where the server's is 10).  So such a response only proposes an
 * offset, taken when the next one, of another message, proposes the same:
 * a duplicate's proposal is too high by the messages between P and E,
 * two duplicates of one go-back-N stretch never agree (the server
 * executes nothing new between them, so their MSN is the same and their
 * messages differ), and a duplicate agrees with a fresh answer only at E,
 * where it is exact.
 */
static void
resp_learn_msn(struct ser_conn *sc, const struct rc_conn *c,
	       const struct roce_pkt *p, const struct resp *r)
{
	uint32_t off;

	if (!r->has_aeth || r->kind != ROCE_AETH_ACK ||
	    roce_psn_diff(r->P, c->una) < 0 || r->sp == NULL ||
	    !(r->sp->flags & SF_MSN_VALID) || p->opcode == ROCE_RC_READ_RESPONSE_FIRST)
		return;
	off = (r->msn - r->sp->msg_seq) & ROCE_PSN_MASK;
	if (p->opcode == ROCE_RC_ACKNOWLEDGE ||
	    (sc->msn_cand_set && sc->msn_cand == off && sc->msn_cand_seq != r->sp->msg_seq)) {
		sc->msn_off = off;
		sc->msn_known = 1;
	}
	sc->msn_cand = off;
	sc->msn_cand_seq = r->sp->msg_seq;
	sc->msn_cand_set = 1;
}

/* ------------------------------------------------------------------ */
/* walk */

static inline bool
needs_answer(const struct ser_stub *st)
{
	return st->kind == ST_REWRITTEN && !(st->flags & SF_ANSWERED);
}

/* The modelled write or unmodelled op of st ran (it is covered). */
static void
retire(struct ser *s, struct ser_stub *st, uint64_t now)
{
	if (st->flags & SF_PENDING) {
		/* an unsure write may have been taken for a duplicate */
		ser_word_pending_done(s, st->word, st->pend_gen, st->wval,
				      !(st->flags & SF_UNSURE), now);
		st->flags &= (uint16_t)~(SF_PENDING | SF_UNSURE);
	}
	if (st->flags & SF_BUSY) {
		for (uint32_t i = 0; i < st->nwords; i++)
			ser_word_busy_done(s, st->word + i, false);
		st->flags &= (uint16_t)~SF_BUSY;
	}
}

/* The ATOMIC ACK for rewritten atomic st at q, built on the response. */
static bool
answer(struct ser *s, struct ser_conn *sc, struct ser_stub *st, uint32_t q,
       uint8_t *f, const struct roce_pkt *p, const struct resp *r,
       struct ser_emit *e)
{
	struct roce_pkt op;
	uint32_t m = (st->flags & SF_SENT_MSN) ? st->msn_sent :
		     (st->msg_seq + sc->msn_off) & ROCE_PSN_MASK;
	int n = roce_build_ack(e->buf, SER_EMIT_BUF, f, p, q, r->ack_syn, m, true,
			       st->orig, &op);

	if (n < 0)
		return false;
	e->len = (uint32_t)n;
	st->flags |= SF_ANSWERED | SF_SENT_MSN;
	st->msn_sent = m;
	s->c.acks_synthesized++;
	return true;
}

/* Out of emit room: the response must not acknowledge the atomics left
 * unanswered.  The client will time out and retransmit; the replay
 * answers them. */
static enum ser_verdict
walk_cut(struct ser *s, struct rc_conn *c, struct ser_conn *sc, uint32_t from,
	 const struct resp *r)
{
	for (uint32_t q = from;; q = roce_psn_add(q, 1)) {
		struct ser_stub *st = ser_stub_at(s, sc, q);

		if (st != NULL && needs_answer(st) && !(r->inplace && q == r->P)) {
			sc->walk_from = q;
			break;
		}
		if (q == r->upto)
			break;
	}
	if (roce_psn_diff(c->una, sc->walk_from) > 0)
		c->una = sc->walk_from;
	sc->una_known = 1;   /* r covered what lies before walk_from */
	return SER_DROP;
}

/*
 * A probed copy of a decision (ser_req.c replay_probe) covered by response
 * r: is r no proof that the server's QP ran the recorded WRITE?  With
 * remapping off, nothing is once the atomic has gone to the server
 * (PROBE_SENT): a plain ACK covering it then may follow the QP's ATOMIC
 * ACK lost on the way (state-probe-newqp-atomic-ack-lost), and a READ
 * response or ATOMIC ACK may be a new QP's answer to a request the new
 * life repeated at its old PSN (closed fuzzer state-probe-covered-by-
 * next-atomic).  Before that, any answer covering it is (below).  With
 * remapping on the atomic goes at once, and only a plain ACK beyond what
 * the connection had sent at the probe (probe_hi) is surely not the old
 * QP's (state-probe-covered-newlife).
 */
static bool
probe_held(const struct ser *s, const struct ser_stub *st, const struct roce_pkt *p,
	   const struct resp *r)
{
	if (s->prm.no_poke)
		return p->opcode != ROCE_RC_ACKNOWLEDGE || r->kind != ROCE_AETH_ACK ||
		       roce_psn_diff(r->upto, st->probe_hi) > 0;
	/* Before the atomic goes (PROBE_ASK, PROBE_LACKS) no QP has the
	 * probed PSN but one that took it as the recorded WRITE: the copies
	 * are dropped, and an earlier probe's atomic was answered before
	 * this one began (own_atomic_ack ends it).  So any answer covering
	 * it, an ATOMIC ACK or READ response at a later PSN too, says what
	 * the duplicate WRITE's ACK would: held so, a client that had its
	 * answer from the first copy, whose question was lost, never resent
	 * the probed PSN, and the server's answers to its next request were
	 * held for good (CI's e2e-soak-short, test_conn
	 * t_probe_question_lost_next_answered: the QP ran out of retries). */
	if (st->probe_step != PROBE_SENT)
		return r->kind != ROCE_AETH_ACK;
	return true;
}

/*
 * The server's answer to a probe's question (ser_req.c replay_probe,
 * PROBE_ASK): a plain ACK or a sequence NAK that completes only PSNs
 * before the probed one says its QP never took that PSN (a responder ACKs
 * a duplicate at its newest PSN, and NAKs at the one it expects).  The
 * client's next copy then goes as its atomic.  An ACK the QP sent before
 * it took the PSN says the same, but the atomic waits for the next copy,
 * and an ACK covering the PSN before then still answers as recorded.
 */
static void
probe_answer(struct ser *s, struct ser_conn *sc, const struct roce_pkt *p,
	     const struct resp *r)
{
	struct ser_stub *st;

	if (!sc->dup_ack_due || !r->has_aeth ||
	    roce_psn_diff(r->upto, sc->dup_ack_psn) >= 0)
		return;
	if (r->kind == ROCE_AETH_ACK ? p->opcode != ROCE_RC_ACKNOWLEDGE :
	    r->kind != ROCE_AETH_NAK || roce_syndrome_value(r->syn) != ROCE_NAK_PSN_SEQ_ERR)
		return;
	st = ser_stub_at(s, sc, sc->dup_ack_psn);
	if (st == NULL || st->kind != ST_REWRITTEN || !(st->flags & SF_PROBE) ||
	    st->probe_step != PROBE_ASK)
		return;
	st->probe_step = PROBE_LACKS;
	s->c.probe_lacked++;
}

static enum ser_verdict
resp_walk(struct ser *s, struct rc_conn *c, struct ser_conn *sc, uint8_t *f,
	  const struct roce_pkt *p, const struct resp *r, uint64_t now,
	  struct ser_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	int32_t span;
	uint32_t from;

	if (!r->ack_point || (span = roce_psn_diff(r->upto, sc->walk_from)) < 0)
		return SER_FORWARD;
	from = sc->walk_from;
	if (span >= (int32_t)s->prm.ring_size)
		from = roce_psn_add(r->upto, ROCE_PSN_MASK - s->prm.ring_size + 2);
	for (uint32_t q = from;; q = roce_psn_add(q, 1)) {
		struct ser_stub *st = ser_stub_at(s, sc, q);

		if (st != NULL) {
			retire(s, st, now);
			if (needs_answer(st) && !(q == r->P && r->atomic_ack)) {
				if ((st->flags & SF_PROBE) && probe_held(s, st, p, r)) {
					s->c.probe_cover_held++;
					return walk_cut(s, c, sc, from, r);
				}
				/* a probed copy: the old QP ran the recorded
				 * WRITE, so it is answered as it was, and a
				 * later copy asks again */
				if (st->flags & SF_PROBE)
					st->probe_step = PROBE_ASK;
				if (q == r->P && r->inplace)
					goto next;   /* resp_own_psn answers in place */
				if (*n_emit >= emit_cap ||
				    !answer(s, sc, st, q, f, p, r, &emit[*n_emit])) {
					s->c.emit_full++;
					return walk_cut(s, c, sc, from, r);
				}
				(*n_emit)++;
			}
		}
next:
		if (q == r->upto)
			break;
	}
	sc->walk_from = roce_psn_add(r->upto, 1);
	if (roce_psn_diff(sc->walk_from, c->una) > 0)
		c->una = sc->walk_from;
	sc->una_known = 1;   /* r covered every PSN before una */
	return SER_FORWARD;
}

/* ------------------------------------------------------------------ */
/* own psn */

static enum ser_verdict
own_atomic_ack(struct ser *s, struct ser_stub *sp, const uint8_t *f,
	       const struct roce_pkt *p)
{
	uint64_t orig = roce_ld64(f + p->bth_off + p->oi->off[ROCE_HDR_ATOMIC_ACK_ETH]);

	if (sp->kind == ST_REAL) {
		const bool fold = sp->flags & SF_FOLD;

		if (!(sp->flags & SF_ANSWERED))
			ser_word_untag(s, sp, true);
		if (sp->flags & SF_ANSWERED)
			;
		else if (sp->flags & SF_NOLEARN)
			ser_word_busy_done(s, sp->word, true);
		else {
			if (fold)
				ser_word_fold_answer(s, sp->word, sp->fold_gen, sp->fold_after,
						     &sp->op, orig);
			ser_word_real_done(s, sp->word, &sp->op, true, orig);
		}
	} else if (sp->kind == ST_REWRITTEN && (sp->flags & SF_PROBE)) {
		/* a new life ran it (replay_probe): its answer is the server's,
		 * and the word is learned again */
		s->c.replay_ran++;
		sp->flags &= (uint16_t)~SF_PROBE;
		/* its answer from now on (the duplicate WRITE's ACK naming
		 * this PSN, a retransmission): the server's, not the old
		 * life's (I6) */
		sp->orig = orig;
		ser_word_mark_dirty(s, sp->word);
	} else if (sp->kind == ST_REWRITTEN) {
		/* the server ran an atomic we replaced: our model of this
		 * word is not what happened */
		s->c.resp_mismatch++;
		ser_word_mark_dirty(s, sp->word);
	}
	sp->flags |= SF_ANSWERED;
	return SER_FORWARD;
}

static enum ser_verdict
own_nak(struct ser *s, struct ser_stub *sp, const struct resp *r, uint64_t now)
{
	uint8_t code = roce_syndrome_value(r->syn);

	s->c.naks++;
	if (r->kind != ROCE_AETH_NAK || code == ROCE_NAK_PSN_SEQ_ERR)
		return SER_FORWARD;
	/* P was refused, not executed */
	if (sp->kind == ST_REWRITTEN) {
		s->c.nak_on_rewritten++;
		if (sp->flags & SF_PENDING) {
			ser_word_pending_done(s, sp->word, sp->pend_gen, sp->wval, false, now);
			sp->flags &= (uint16_t)~SF_PENDING;
		}
		ser_word_norewrite(s, sp->word);
	} else if (sp->kind == ST_REAL && !(sp->flags & SF_ANSWERED)) {
		ser_word_untag(s, sp, false);
		ser_word_real_done(s, sp->word, &sp->op, false, 0);
	} else if (sp->flags & SF_PENDING) {
		ser_word_pending_done(s, sp->word, sp->pend_gen, sp->wval, false, now);
		sp->flags &= (uint16_t)~SF_PENDING;
	}
	sp->flags |= SF_ANSWERED;
	return SER_FORWARD;
}

static enum ser_verdict
own_ack_inplace(struct ser *s, struct ser_stub *sp, uint8_t *f, uint32_t *len,
		uint32_t cap, struct roce_pkt *p, const struct resp *r)
{
	uint32_t m = (sp->flags & SF_SENT_MSN) ? sp->msn_sent : r->msn;

	if (m != r->msn)
		roce_set_aeth(f, p, r->syn, m);
	if ((s->prm.defer_resign ? roce_ack_to_atomic_ack_defer(f, len, cap, p, sp->orig)
				 : roce_ack_to_atomic_ack(f, len, cap, p, sp->orig)) != 0) {
		if (m != r->msn)
			roce_set_aeth(f, p, r->syn, r->msn);
		s->c.emit_full++;
		return SER_DROP;
	}
	sp->flags |= SF_ANSWERED | SF_SENT_MSN;
	sp->msn_sent = m;
	s->c.ack_to_atomic_ack++;
	return SER_FORWARD_REWRITTEN;
}

static enum ser_verdict
resp_own_psn(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	     struct roce_pkt *p, const struct resp *r, uint64_t now)
{
	struct ser_stub *sp = r->sp;

	if (p->opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE)
		return own_atomic_ack(s, sp, f, p);
	if (r->has_aeth && r->kind != ROCE_AETH_ACK)
		return own_nak(s, sp, r, now);
	if (r->dup_ack) {
		/* a duplicate's ACK (resp_decode): a plain ACK is not an
		 * answer a client can take for a READ or an atomic (I3).  The
		 * real answer, or the client's retransmission, follows. */
		s->c.dup_ack_dropped++;
		return SER_DROP;
	}
	if (r->inplace)
		return own_ack_inplace(s, sp, f, len, cap, p, r);
	return SER_FORWARD;
}

/*
 * The ACK of replay_probe's duplicate WRITE from a new QP, which ran the
 * probed atomic and answered it with its ATOMIC ACK: it names that
 * atomic's PSN.  When the client's next request has begun a new life
 * here since, no stub is left to make it the answer again, and a plain
 * ACK at an atomic's PSN is no answer a client should see (I3; a
 * requester drops it as a duplicate, but it says the server took an
 * atomic for a write).  Dropped.
 */
static bool
probe_dup_ack(struct ser_conn *sc, const struct roce_pkt *p, const struct resp *r)
{
	if (!sc->dup_ack_due || p->opcode != ROCE_RC_ACKNOWLEDGE ||
	    r->kind != ROCE_AETH_ACK || r->P != sc->dup_ack_psn)
		return false;
	sc->dup_ack_due = 0;
	return true;
}

struct dup_ack_key {
	struct ser *s;
	const struct roce_pkt *p;
};

static bool
probed_here(void *ctx, const struct rc_conn *c)
{
	const struct dup_ack_key *k = ctx;
	const struct ser_conn *sc = &k->s->conns[rc_index(k->s->rc, c)];

	return sc->inc == c->incarnation && sc->dup_ack_due && sc->dup_ack_psn == k->p->psn;
}

/* probe_dup_ack, the new life not paired yet (no connection found) */
static bool
probe_dup_ack_unpaired(struct ser *s, const uint8_t *f, const struct roce_pkt *p)
{
	struct dup_ack_key k = { .s = s, .p = p };
	struct rc_conn *c;

	if (p->opcode != ROCE_RC_ACKNOWLEDGE ||
	    roce_syndrome_kind(roce_get_syndrome(f, p)) != ROCE_AETH_ACK)
		return false;
	c = rc_unpaired_only(s->rc, p->src_ip4, p->dst_ip4, p->psn, probed_here, &k);
	if (c == NULL)
		return false;
	s->conns[rc_index(s->rc, c)].dup_ack_due = 0;
	s->c.dup_ack_dropped++;
	return true;
}

static enum ser_verdict
on_response(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	    struct roce_pkt *p, uint64_t now, struct ser_emit *emit,
	    uint32_t emit_cap, uint32_t *n_emit)
{
	const struct roce_opcode_info *oi = p->oi;
	struct rc_conn *c;
	struct ser_conn *sc;
	struct resp r;
	enum ser_verdict v;

	*n_emit = 0;
	s->n_after = 0;
	if (ser_handle_cm(s, f, p, now))
		return SER_FORWARD;
	if (p->ip_version != 4 || (oi->flags & (ROCE_F_RESPONSE | ROCE_F_RC)) !=
	    (ROCE_F_RESPONSE | ROCE_F_RC) || !ser_is_server(s, p->src_ip4))
		return SER_FORWARD;
	s->c.resp_seen++;
	if (p->opcode == ROCE_RC_READ_RESPONSE_MIDDLE)
		return SER_FORWARD;  /* completes nothing, teaches nothing */
	if (!ser_icrc_good(s, f, p)) {
		s->c.resp_bad_icrc++;
		return SER_FORWARD;
	}
	c = resp_connect(s, f, p, now);
	if (c == NULL) {
		if (ser_poke_nak_beyond(s, f, p) || probe_dup_ack_unpaired(s, f, p))
			return SER_DROP;
		s->c.unknown_qp++;
		return SER_FORWARD;
	}
	ser_torn_conn(s, c);
	sc = ser_conn_state(s, c);
	resp_decode(s, sc, f, p, &r);
	if (r.kind == ROCE_AETH_NAK && roce_syndrome_value(r.syn) == ROCE_NAK_PSN_SEQ_ERR &&
	    ser_poke_nak_is_beyond(c, sc, r.P)) {
		/* the connection paired since it was poked (ser_ask.c).  Before
		 * the window test: the NAK names the server's next PSN, which
		 * can lie past every request swordd let through (the client's
		 * copies it dropped), and out of the window it was passed on,
		 * a response at a PSN the client never sent (closed fuzzer
		 * state-torn-poke-nak-past-window; poked stays, as there) */
		s->c.nak_beyond_dropped++;
		return SER_DROP;
	}
	if (!resp_in_window(s, c, sc, p, &r))
		return SER_FORWARD;
	if (r.sp == NULL && probe_dup_ack(sc, p, &r)) {
		/* a new life began here since the probe that the server ran */
		s->c.dup_ack_dropped++;
		return SER_DROP;
	}
	if (!s->prm.no_poke)
		probe_answer(s, sc, p, &r);
	r.fresh = roce_psn_diff(r.P, c->una) >= 0;
	/* an answer after a copy of an answered request, covering all the
	 * client had sent: the server's QP is in step (ser_req.c
	 * copy_of_answered) */
	if (sc->copy_hold && r.ack_point && r.kind == ROCE_AETH_ACK &&
	    roce_psn_diff(r.upto, sc->copy_hold_psn) >= 0)
		sc->copy_hold = 0;
	resp_learn_msn(sc, c, p, &r);
	v = resp_walk(s, c, sc, f, p, &r, now, emit, emit_cap, n_emit);
	if (v != SER_DROP && r.sp != NULL)
		v = resp_own_psn(s, f, len, cap, p, &r, now);
	if (v != SER_DROP)
		ser_ask_after_response(s, c, sc, f, p);
	else if (r.dup_ack)
		/* a duplicate's ACK, not the client's: an ask it makes due
		 * (the answer to a probe's question, ser_req.c) still goes */
		ser_ask_due(s, c, sc, f, p);
	return v;
}

enum ser_verdict
ser_on_response(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
		struct roce_pkt *p, uint64_t now, struct ser_emit *emit,
		uint32_t emit_cap, uint32_t *n_emit)
{
	enum ser_verdict v;

	if (!s->in_state)
		return on_response(s, f, len, cap, p, now, emit, emit_cap, n_emit);
	ser_torn_begin(s, TORN_RESPONSE, p->src_ip4, p->dst_ip4);
	v = on_response(s, f, len, cap, p, now, emit, emit_cap, n_emit);
	ser_torn_end(s);
	return v;
}
