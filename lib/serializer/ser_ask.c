/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_ask.c — asking a client to resend a request swordd dropped.
 *
 * Why it exists: the request path drops a request it can neither decide
 * nor pass safely (the S2 gate of ser_word.c, a word held by an orphan, a
 * full stub ring).  The server never sees it, so it
 * never NAKs it, and a client QP with no retransmit timer (timeout 0:
 * rxe's perftest -u 0, the rig's lock client) waits for its answer
 * forever.  The full rig hit it: 1 drop in ~14k requests hung a client.
 *
 * The ask is what a responder says when it cannot take a request yet: an
 * RNR NAK at the dropped PSN, in the client's own PSN space.  The client
 * waits the NAK's timer and resends from there (go-back-N).  An RNR NAK
 * acknowledges every PSN before it, so it is sent only once all of them
 * are answered: at once if they are (the drop itself), else right after
 * the response that answers the last of them.  remapping asks the same way
 * (lib/remap/remap_wait.c); rxe takes an RNR NAK at any time, and counts
 * it against rnr_retry (7: unlimited).
 *
 * An unpaired connection (a new life no response has answered yet, no
 * RDMA CM) has no client QPN to send the NAK to.  Its server has: swordd
 * sends the server a zero-length WRITE far ahead in the connection's PSN
 * space (2^22), which the server takes for a sequence error and NAKs, to
 * the client, at the PSN it expects.  The WRITE itself is never executed
 * (its PSN is millions of requests away) and would change nothing if it
 * were.  A responder NAKs a sequence error once until the expected PSN
 * arrives, so this asks once per stall: a client asked, resending into a
 * gate still closed, is dropped unasked (README, limits).
 *
 * A request dropped for its place (beyond a gap, further back than the
 * window) is not asked for: the gap is a loss the client recovers from as
 * on any link, and under reordering the missing request is only late; an
 * ask would make it resend a window it is already sending.
 *
 * One ask per drop, at the earliest PSN the client must resend from.  A
 * gate can outlast several resends (an orphan's hold, a write whose ACK
 * is slow): each ask at the same PSN doubles the timer, from 0.01 ms up
 * to 1.28 ms, so a long gate costs a few NAKs, not a storm.
 */
#include <string.h>

#include "ser_internal.h"

/* RNR timer codes (IBTA table 45): 0.01, 0.02, 0.04, 0.08, 0.16, 0.32,
 * 0.64, 1.28 ms */
static const uint8_t ask_timer[] = { 1, 2, 4, 6, 8, 10, 12, 14 };

/* The RNR NAK at sc->ask_psn, built on tmpl (a frame to the client, or the
 * dropped request mirrored), into s->after. */
static void
ask_build(struct ser *s, struct ser_conn *sc, const uint8_t *tmpl,
	  const struct roce_pkt *tp)
{
	const uint8_t code = ask_timer[RTE_MIN(sc->ask_n, RTE_DIM(ask_timer) - 1)];
	struct roce_pkt op;
	int n = roce_build_ack(s->after.buf, SER_EMIT_BUF, tmpl, tp, sc->ask_psn,
			       roce_syndrome_make(ROCE_AETH_RNR_NAK, code),
			       sc->cl_msn, false, 0, &op);

	if (n < 0) {
		s->c.ask_failed++;
		return;
	}
	s->after.len = (uint32_t)n;
	s->after.to_server = false;
	s->n_after = 1;
	sc->ask = 0;
	if (sc->ask_n < UINT8_MAX)
		sc->ask_n++;
	s->c.asked_back++;
}

/* The request f turned around: server to client, to the client's QPN. */
static void
ask_build_mirrored(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
		   const uint8_t *f, const struct roce_pkt *p)
{
	const uint32_t hdrs = p->bth_off + ROCE_BTH_LEN;
	uint8_t tmpl[SER_EMIT_BUF];
	struct roce_pkt tp = *p;
	uint8_t mac[6];

	if (hdrs > sizeof(tmpl)) {
		s->c.ask_failed++;
		return;
	}
	memcpy(tmpl, f, hdrs);
	memcpy(mac, tmpl, 6);
	memcpy(tmpl, tmpl + 6, 6);
	memcpy(tmpl + 6, mac, 6);
	/* the IPv4 header checksum is a sum: swapping the addresses keeps it */
	memcpy(tmpl + p->l3_off + 12, f + p->l3_off + 16, 4);
	memcpy(tmpl + p->l3_off + 16, f + p->l3_off + 12, 4);
	tp.src_ip4 = p->dst_ip4;
	tp.dst_ip4 = p->src_ip4;
	roce_set_qpn(tmpl, &tp, c->cl_qpn);
	tp.qpn = c->cl_qpn;
	ask_build(s, sc, tmpl, &tp);
}

/* A zero-length WRITE from the client to its server QP at psn, to go out
 * after the current frame: false if it could not be built (counted).
 * Ahead of the server's PSN it is NAKed (the ask poke below); behind it
 * it is ACKed again at the server's newest PSN, never executed (the
 * probe of a replayed copy, ser_req.c). */
bool
ser_after_zero_write(struct ser *s, const struct rc_conn *c, const uint8_t *f,
		     const struct roce_pkt *p, uint32_t psn)
{
	struct roce_pkt op;
	int n = roce_build_zero_write(s->after.buf, SER_EMIT_BUF, f,
				      p->bth_off + ROCE_BTH_LEN, p->l3_off, p->l4_off,
				      c->srv_qpn, psn, &op);

	if (n < 0) {
		s->c.ask_failed++;
		return false;
	}
	s->after.len = (uint32_t)n;
	s->after.to_server = true;
	s->n_after = 1;
	return true;
}

/* The zero-length WRITE, from the client, that the server will NAK. */
static void
ask_poke(struct ser *s, const struct rc_conn *c, struct ser_conn *sc, const uint8_t *f,
	 const struct roce_pkt *p)
{
	if (ser_after_zero_write(s, c, f, p, roce_psn_add(p->psn, 1u << 22))) {
		sc->poked = 1;
		sc->poke_psn = p->psn;
		s->c.poked++;
	}
}

struct poke_nak {
	const struct ser *s;
	uint32_t psn;
};

/*
 * Is a sequence-error NAK at psn the answer to c's ask poke after the
 * client resent everything?  The client sent the poked PSN and everything
 * before its next in-order one; a server expects a PSN only once it got
 * the one before, so a real NAK names one of those (or one the client
 * sent beyond a gap and swordd dropped: then the poked one, at most).
 */
bool
ser_poke_nak_is_beyond(const struct rc_conn *c, const struct ser_conn *sc, uint32_t psn)
{
	return sc->poked && roce_psn_diff(psn, sc->poke_psn) > 0 &&
	       roce_psn_diff(psn, c->next_psn) >= 0;
}

/* The one candidate for a NAK no connection is known for. */
static bool
poked_at_next(void *ctx, const struct rc_conn *c)
{
	const struct poke_nak *k = ctx;
	const struct ser_conn *sc = &k->s->conns[rc_index(k->s->rc, c)];

	return sc->inc == c->incarnation && ser_poke_nak_is_beyond(c, sc, k->psn);
}

/*
 * A sequence-error NAK no connection is known for (its client QPN is
 * not paired yet): the answer to an ask poke that came after the client
 * had resent everything on its own?  The server then expects the
 * client's next PSN, one the client never sent, and a NAK there would
 * acknowledge the atomics and READs still waiting for their answers
 * (the requester retries, at the cost of its retry budget; closed
 * fuzzer accel-poke-nak-beyond).  A real sequence error names a PSN the
 * client sent (the server expects one it has not got, before one it
 * has), so a NAK at a poked connection's next PSN is the poke's, as long
 * as no other unpaired connection of the hosts could have sent that PSN.
 */
bool
ser_poke_nak_beyond(struct ser *s, const uint8_t *f, const struct roce_pkt *p)
{
	struct poke_nak k = { .s = s, .psn = p->psn };
	uint8_t syn;
	struct rc_conn *c;

	if (!roce_has(p->oi, ROCE_HDR_AETH))
		return false;
	syn = roce_get_syndrome(f, p);
	if (roce_syndrome_kind(syn) != ROCE_AETH_NAK ||
	    roce_syndrome_value(syn) != ROCE_NAK_PSN_SEQ_ERR)
		return false;
	c = rc_unpaired_only(s->rc, p->src_ip4, p->dst_ip4, p->psn, poked_at_next, &k);
	if (c == NULL)
		return false;
	/* (poked stays: every poke is answered, and a copy poked twice got
	 * a second NAK past everything the client sent, forwarded once the
	 * first had cleared it: closed fuzzer state-poked-twice-second-nak,
	 * O3.  No real sequence error names a PSN past the client's) */
	s->c.nak_beyond_dropped++;
	return true;
}

/* Is an ask at psn due for paired connection c (its dropped request)?
 * Sets it up if so. */
static bool
ask_set(struct ser_conn *sc, const struct rc_conn *c, uint32_t psn)
{
	/* the client QPN is needed, and a PSN whose answers are all in or
	 * still to come (an older one is a duplicate the client no longer
	 * waits for) */
	if (sc->untracked)
		return false;
	if (roce_psn_diff(psn, c->una) < 0) {
		/* behind the first PSN swordd saw of this life: swordd never
		 * saw its answer, so it may be one the client still waits on
		 * (closed fuzzer state-torn-ask-acks-dropped-write: after a
		 * torn restart the connection was met at the next PSN, and
		 * the ask there acknowledged a release WRITE swordd had
		 * dropped; a new life told apart mid-stream is met there too) */
		if (roce_psn_diff(psn, c->first_psn) < 0 &&
		    (!sc->ask_held || roce_psn_diff(psn, sc->ask_held_psn) < 0)) {
			sc->ask_held = 1;
			sc->ask_held_psn = psn;
			sc->ask = 0;
		}
		return false;
	}
	if (sc->ask_held)
		return false;
	if (sc->ask && roce_psn_diff(sc->ask_psn, psn) <= 0)
		return false;    /* an earlier ask stands */
	if (psn != sc->ask_psn)
		sc->ask_n = 0;
	sc->ask_psn = psn;
	sc->ask = 1;
	return true;
}

/*
 * May an ask go at una?  Only once this life's una is known: a response of
 * it covered what lies before, or the life began there (the RDMA CM said
 * where; a new life of the QPs out of band told apart after its client
 * resent the connection's first request, ser_req.c life_began_at_first).
 * A life met or told apart at some later PSN (a new life whose first
 * copies swordd did not see again before one differed; a connection first
 * seen mid-life) may have requests before it that never ran: an ask there
 * would acknowledge them (closed fuzzer newlife-told-midway-ask: a WRITE
 * dropped at the gate, acknowledged by the asks for a later PSN).  The ask
 * then waits for the server's next answer (ser_ask_due).
 */
static bool
una_known(const struct rc_conn *c, const struct ser_conn *sc)
{
	return sc->una_known || (c->by_cm && c->una == c->initial_psn);
}

void
ser_ask_arm(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
	    const uint8_t *f, const struct roce_pkt *p)
{
	if (!c->paired) {
		if (ser_may_poke(s, c))
			ask_poke(s, c, sc, f, p);
		return;
	}
	if (ask_set(sc, c, p->psn) && c->una == p->psn && una_known(c, sc))
		ask_build_mirrored(s, c, sc, f, p);
}

void
ser_ask_arm_later(struct ser_conn *sc, const struct rc_conn *c, uint32_t psn)
{
	if (c->paired)
		(void)ask_set(sc, c, psn);
}

void
ser_ask_after_response(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
		       const uint8_t *f, const struct roce_pkt *p)
{
	uint32_t psn = p->psn;

	if (!roce_has(p->oi, ROCE_HDR_AETH))
		return;
	/* the newest answer's MSN only: with remapping in front, an answer
	 * at an older PSN reaches the client after newer ones (a READ placed
	 * anew on its lane is answered again with its own, older MSN), and an
	 * ask carrying it would take the client's MSN back (issue #29 finding
	 * 7).  A NAK's MSN counts what completed before its PSN. */
	if (roce_syndrome_kind(roce_get_syndrome(f, p)) != ROCE_AETH_ACK)
		psn = roce_psn_add(psn, ROCE_PSN_MASK);
	if (!sc->cl_msn_set || roce_psn_diff(psn, sc->cl_msn_psn) >= 0) {
		sc->cl_msn = roce_get_msn(f, p);
		sc->cl_msn_psn = psn;
		sc->cl_msn_set = 1;
	}
	if (sc->ask_held && roce_syndrome_kind(roce_get_syndrome(f, p)) == ROCE_AETH_ACK &&
	    roce_psn_diff(p->psn, sc->ask_held_psn) >= 0)
		sc->ask_held = 0;  /* the server ran it: RC runs in order */
	ser_ask_due(s, c, sc, f, p);
}

void
ser_ask_due(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
	    const uint8_t *f, const struct roce_pkt *p)
{
	if (!roce_has(p->oi, ROCE_HDR_AETH) || !sc->ask || sc->ask_held)
		return;
	if (roce_psn_diff(c->una, sc->ask_psn) > 0) {
		sc->ask = 0;     /* answered: the client resent it on its own */
		sc->ask_n = 0;
	} else if (c->una == sc->ask_psn && una_known(c, sc)) {
		ask_build(s, sc, f, p);
	}
}

const struct ser_emit *
ser_after(const struct ser *s)
{
	return s->n_after ? &s->after : NULL;
}
