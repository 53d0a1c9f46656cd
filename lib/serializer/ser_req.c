/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_req.c — the request path: client → server frames of managed
 * servers, as named steps (the model is rxe's responder state machine).
 *
 * Why it exists: a decision made in ser_word.c must be made once per
 * request of one connection's life, in that connection's PSN order, and
 * given again, unchanged, to that request's retransmissions only (I6).
 *
 *   check      ICRC first: a frame that fails it is forwarded untouched
 *              (the server drops it) and creates, pairs or ages nothing.
 *   connect    find the connection (lib/rc) or open one; none free →
 *              untracked (its ops pass only if S2 allows).
 *   route      by PSN against the connection's window:
 *     replay     a PSN with a live stub and the same content (opcode,
 *                RETH/AtomicETH) → the recorded decision (or a fresh one,
 *                below);
 *     new life   the same PSN with other content, or a jump beyond any
 *                window → a new incarnation, then fresh;
 *     behind     before the window, no stub → decided by the server;
 *     far        further back than the ring → nothing decided or learned
 *                (a go-back-N wider than the ring), unless it is back at
 *                the connection's first PSN or beyond 8 rings: a new life;
 *     ahead      a gap (the server will NAK) → nothing decided;
 *     fresh      the next in-order PSN → decide, rewrite, leave a stub.
 *
 * Stubs.  Every request of a connection leaves a stub at ring[psn % n]:
 * its content, opcode, whether it ends a message, the relative message
 * count msg_seq, and for managed words the decision (orig to return, value
 * written, pending/busy ownership, the word's change count after it).
 *
 * Replays of decisions the server has already acknowledged are the one
 * place a retransmission, a stale copy and a new incarnation with
 * identical content (an application that re-creates its QPs with the same
 * QPNs and PSNs) look alike.  None may change memory wrongly or hand out
 * a stale grant (ser_word.c S8): such a replay is sent with its value only
 * while nobody changed the word since; if only this connection did, as a
 * zero-length WRITE with the recorded answer (the server treats a true
 * retransmission as a duplicate whatever its content); if another
 * connection did, no client can still be waiting for the old answer, and
 * the request is decided afresh at its PSN.
 */
#include <string.h>

#include <rte_common.h>

#include "ser_internal.h"

struct req_class {
	uint32_t word;    /* first word touched, SER_NO_WORD if none */
	uint32_t nwords;
	bool atomic;      /* atomic on exactly one aligned word */
	bool single_write;/* 8-byte aligned WRITE_ONLY of one word */
	struct ser_op op;
};

/* What the request asks of the memory (content, for replay matching). */
struct req_content {
	uint64_t va;
	uint32_t rkey, dlen;
	struct ser_op op;
};

static inline uint32_t
owner_of(const struct rc_conn *c)
{
	return c->incarnation;
}

/* c deciding on its own: the domain is the connection (a retransmission
 * keeps the place it had, a request out of order may be overtaken). */
static inline struct ser_who
who_own(const struct rc_conn *c)
{
	return (struct ser_who){ .owner = c->incarnation, .dom = c->incarnation,
				 .adom = 0 };
}

/* c's next request: a remapping lane's domain if it gets its lane PSN
 * now, as a WRITE and (atomic) as the atomic itself (ser_word.c,
 * "Ordering domains"). */
static inline struct ser_who
who_fresh(const struct ser *s, const struct rc_conn *c, uint32_t psn, bool atomic)
{
	uint32_t dom, adom;

	rc_order_domains(s->rc, c, psn, atomic, &dom, &adom);
	return (struct ser_who){ .owner = c->incarnation, .dom = dom, .adom = adom };
}

static void
read_content(const uint8_t *f, const struct roce_pkt *p, struct req_content *rq)
{
	const struct roce_opcode_info *oi = p->oi;

	memset(rq, 0, sizeof(*rq));
	if (oi->flags & ROCE_F_ATOMIC) {
		bool masked = p->opcode == ROCE_RC_MASKED_COMPARE_SWAP;
		const uint8_t *eth = f + p->bth_off +
			oi->off[masked ? ROCE_HDR_MASKED_ATOMIC_ETH : ROCE_HDR_ATOMIC_ETH];

		rq->va = roce_ld64(eth);
		rq->rkey = roce_ld32(eth + 8);
		rq->dlen = 8;
		for (int i = 0; i < (masked ? 4 : 2); i++)
			rq->op.arg[i] = roce_ld64(eth + 12 + 8 * i);
		return;
	}
	if (roce_has(oi, ROCE_HDR_RETH)) {
		const uint8_t *reth = f + p->bth_off + oi->off[ROCE_HDR_RETH];

		rq->va = roce_ld64(reth);
		rq->rkey = roce_ld32(reth + 8);
		rq->dlen = roce_ld32(reth + 12);
		if ((oi->flags & ROCE_F_WRITE) && rq->dlen == 8 &&
		    p->payload_len >= 8 + p->pad)
			rq->op.arg[0] = roce_ld64(f + p->payload_off);
	}
}

static bool
same_request(const struct ser_stub *st, const uint8_t *f, const struct roce_pkt *p)
{
	struct req_content rq;

	if (st->opcode != p->opcode)
		return false;
	read_content(f, p, &rq);
	return st->va == rq.va && st->rkey == rq.rkey && st->dlen == rq.dlen &&
	       memcmp(st->op.arg, rq.op.arg, sizeof(rq.op.arg)) == 0;
}

static void
classify(struct ser *s, const uint8_t *f, const struct roce_pkt *p,
	 const struct ser_conn *sc, struct req_class *rc)
{
	const struct roce_opcode_info *oi = p->oi;
	const struct ser_region_rt *r;
	struct req_content rq;

	memset(rc, 0, sizeof(*rc));
	rc->word = SER_NO_WORD;
	read_content(f, p, &rq);
	if (oi->flags & ROCE_F_ATOMIC) {
		r = ser_region_find(s, p->dst_ip4, rq.rkey, rq.va, 8);
		if (r == NULL)
			return;
		if (rq.va & 7) {
			/* the server NAKs a misaligned atomic but would
			 * accept a WRITE: never rewrite it */
			s->c.misaligned_passed++;
			return;
		}
		rc->word = r->first_word + (uint32_t)((rq.va - r->r.base) / 8);
		rc->nwords = 1;
		s->torn.word = rc->word;
		s->torn.nwords = rc->nwords;
		rc->atomic = true;
		rc->op = rq.op;
		rc->op.kind = p->opcode == ROCE_RC_COMPARE_SWAP ? SER_OP_CAS :
			      p->opcode == ROCE_RC_FETCH_ADD ? SER_OP_FAA : SER_OP_MCAS;
		return;
	}
	if (!(oi->flags & ROCE_F_WRITE))
		return;
	if (roce_has(oi, ROCE_HDR_RETH)) {
		uint64_t lo, hi;

		if (rq.dlen == 0)
			return;
		r = ser_region_find(s, p->dst_ip4, rq.rkey, rq.va, rq.dlen);
		if (r == NULL)
			return;
		lo = RTE_MAX(rq.va, r->r.base);
		hi = RTE_MIN(rq.va + rq.dlen, r->r.base + r->r.len);
		rc->word = r->first_word + (uint32_t)((lo - r->r.base) / 8);
		rc->nwords = (uint32_t)((hi - r->r.base + 7) / 8 - (lo - r->r.base) / 8);
		s->torn.word = rc->word;
		s->torn.nwords = rc->nwords;
		if ((oi->flags & ROCE_F_ONLY) == ROCE_F_ONLY && rq.dlen == 8 &&
		    !(rq.va & 7) && p->payload_len >= 8 + p->pad) {
			rc->single_write = true;
			rc->op.kind = SER_OP_WRITE;
			rc->op.arg[0] = rq.op.arg[0];
		}
		return;
	}
	/* WRITE_MIDDLE/LAST: part of the connection's open write */
	if (sc != NULL && sc->open_word != SER_NO_WORD) {
		rc->word = sc->open_word;
		rc->nwords = sc->open_nwords;
		s->torn.word = rc->word;
		s->torn.nwords = rc->nwords;
	}
}

/* A READ of managed words, of any connection, fresh or a copy: its
 * reader may see a modelled write land, so the S2 gate must not answer
 * from the value before it any more (ser_word.c). */
static void
note_read(struct ser *s, const uint8_t *f, const struct roce_pkt *p)
{
	struct req_content rq;

	read_content(f, p, &rq);
	if (rq.dlen == 0)
		return;
	for (uint32_t i = 0; i < s->n_regions; i++) {
		const struct ser_region *r = &s->regions[i].r;
		uint64_t lo, hi;

		if (r->server_ip4 != p->dst_ip4 || (!r->any_rkey && r->rkey != rq.rkey) ||
		    rq.va >= r->base + r->len || rq.va + rq.dlen <= r->base)
			continue;
		lo = RTE_MAX(rq.va, r->base) - r->base;
		hi = RTE_MIN(rq.va + rq.dlen, r->base + r->len) - r->base;
		ser_word_read(s, s->regions[i].first_word + (uint32_t)(lo / 8),
			      (uint32_t)((hi + 7) / 8 - lo / 8));
	}
}

static inline void
set_ackreq(uint8_t *f, const struct roce_pkt *p)
{
	f[p->bth_off + 8] |= 0x80;
}

/* Rewrite a decided atomic into its WRITE (zero-length if zero). */
static int
apply_rewrite(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	      struct roce_pkt *p, const struct ser_stub *st, bool zero)
{
	const uint64_t *wval = zero || (st->flags & SF_ZERO_LEN) ? NULL : &st->wval;

	if (!s->prm.no_force_ackreq)
		set_ackreq(f, p);
	return s->prm.defer_resign ? roce_atomic_to_write_defer(f, len, cap, p, wval)
				   : roce_atomic_to_write(f, len, cap, p, wval);
}

static enum ser_verdict
drop(struct ser *s)
{
	s->c.dropped++;
	return SER_DROP;
}

/* A request whose place in the connection is unknown: decide nothing. */
static enum ser_verdict
out_of_window(struct ser *s, const struct req_class *rc)
{
	s->c.psn_out_of_window++;
	s->drop_unasked = true;   /* the client's own recovery (ser_ask.c) */
	return rc->word != SER_NO_WORD ? drop(s) : SER_FORWARD;
}

/* Another domain's blind write is pending on a word this write touches:
 * it could land after this one and erase it (S7). */
static bool
words_gated(struct ser *s, uint32_t word, uint32_t nwords, const struct ser_who *who,
	    uint64_t now)
{
	for (uint32_t i = 0; word != SER_NO_WORD && i < nwords; i++)
		if (ser_word_foreign_pending(s, word + i, who, now)) {
			s->c.write_gated_drop++;
			return true;
		}
	return false;
}

static bool
write_gated(struct ser *s, const struct req_class *rc, const struct ser_who *who,
	    uint64_t now)
{
	return words_gated(s, rc->word, rc->nwords, who, now);
}

/* ------------------------------------------------------------------ */
/* untracked: no connection slot, or no pairing yet */

/* Ops on words whose answers swordd may never see hold the words by time,
 * not by a stub (S7): false if S2 forbids passing them (then none is
 * held).  op: the op's effect on one word (NULL: not modelled). */
static bool
hold_range(struct ser *s, uint32_t word, uint32_t nwords, const struct ser_op *op,
	   uint64_t now)
{
	const struct ser_op none = { 0 };

	for (uint32_t i = 0; word != SER_NO_WORD && i < nwords; i++)
		if (!ser_word_replay_allowed(s, word + i, op != NULL ? op : &none,
					     SER_NO_OWNER, now))
			return false;
	for (uint32_t i = 0; word != SER_NO_WORD && i < nwords; i++)
		ser_word_hold_unseen(s, word + i, now);
	return true;
}

static bool
hold_words(struct ser *s, const struct req_class *rc, uint64_t now)
{
	return hold_range(s, rc->word, rc->nwords,
			  rc->atomic || rc->single_write ? &rc->op : NULL, now);
}

/* A write of such a connection goes once write_gated() let it (no other
 * connection's blind write pending on its words; its own run in its PSN
 * order): every word it touches is held.  (Before, the atomics' S2 check
 * ran on it too and its refusal was ignored, which left the refusing
 * word and those after it unheld.) */
static void
hold_write_words(struct ser *s, uint32_t word, uint32_t nwords, uint64_t now)
{
	for (uint32_t i = 0; word != SER_NO_WORD && i < nwords; i++)
		ser_word_hold_unseen(s, word + i, now);
}

/* The stub of such an op: it answers and retires nothing itself. */
static void
stub_untracked(struct ser *s, struct ser_stub *st, const struct req_class *rc)
{
	st->kind = rc->atomic ? ST_REAL : ST_WRITE;
	st->word = rc->word;
	st->nwords = rc->nwords;
	st->op = rc->op;
	st->flags |= SF_UNTRACKED | SF_ANSWERED | SF_NOLEARN;
	st->chg_seq = s->words[rc->word].chg_seq;
	if (rc->atomic)
		s->c.passed_real_atomic++;
	else
		s->c.write_unmodelled++;
}

/* The start quiet (ser_params.start_quiet_tsc): an op on a managed word
 * waits until whatever the previous instance sent must have landed. */
static bool
start_quiet(struct ser *s, const struct req_class *rc, uint64_t now)
{
	if (rc->word == SER_NO_WORD || now >= s->quiet_until)
		return false;
	s->c.start_quiet_drop++;
	return true;
}

static enum ser_verdict
req_untracked(struct ser *s, const uint8_t *f, const struct roce_pkt *p,
	      uint64_t now)
{
	struct req_class rc;

	/* Nothing on this QP is decided; its ops on managed words pass if
	 * that cannot race another connection's pending write, and the words
	 * are held undecided until they must have run (S7). */
	classify(s, f, p, NULL, &rc);
	rc_note_untracked(s->rc, now);
	if (start_quiet(s, &rc, now))
		return drop(s);
	return hold_words(s, &rc, now) ? SER_FORWARD : drop(s);
}

/* ------------------------------------------------------------------ */
/* replay */

static enum ser_verdict
restore_ackreq(struct ser *s, struct ser_stub *st, uint8_t *f, struct roce_pkt *p)
{
	if ((st->flags & SF_ACKREQ) && !roce_get_ackreq(f, p)) {
		set_ackreq(f, p);
		if (!s->prm.defer_resign)
			roce_resign(f, p);
		s->c.dup_replayed++;
		return SER_FORWARD_REWRITTEN;
	}
	return SER_FORWARD;
}

static enum ser_verdict
replay_rewritten(struct ser *s, struct ser_conn *sc, struct ser_stub *st,
		 uint8_t *f, uint32_t *len, uint32_t cap, struct roce_pkt *p,
		 bool zero)
{
	s->c.dup_replayed++;
	st->flags &= (uint16_t)~SF_ANSWERED;
	if (roce_psn_diff(st->psn, sc->walk_from) < 0)
		sc->walk_from = st->psn;
	if (apply_rewrite(s, f, len, cap, p, st, zero) != 0)
		return drop(s);
	return SER_FORWARD_REWRITTEN;
}

/*
 * A replayed real atomic or word write whose first execution the server
 * already answered.  The server answers it from its replay cache (a
 * retransmission: the client's timer fired while the answer was on its
 * way, or the answer was lost) or runs it again (a new life of the QPs
 * with the same QPNs, PSNs and content).  A response that covers its
 * PSN after it left says the server has processed it (RC order): the
 * stub holds the words busy until then, and the word is relearned after
 * (S4: it may have run).  The one response that could cover it sooner is
 * one the server sent before it: an answer to a later request of the same
 * life (harmless: then it is no new life), or one of an old life, which
 * would have had to outlive the re-creation of both QPs on its way.  If no
 * response ever comes, the connection's end or the stub's reuse hands
 * the hold to time (S7).  Before, the words were held by time at once:
 * each spurious retransmission kept its word from being decided for the
 * whole orphan hold (2 s by default), and on a loaded rack with 10 ms
 * client timers acceleration stopped altogether.
 */
static enum ser_verdict
replay_unmodelled(struct ser *s, struct ser_conn *sc, struct ser_stub *st,
		  uint8_t *f, struct roce_pkt *p, uint64_t now)
{
	const bool one_op = st->kind == ST_REAL || st->nwords == 1;
	const struct ser_op none = { 0 };

	if (!(st->flags & SF_BUSY)) {
		for (uint32_t i = 0; i < st->nwords; i++)
			if (!ser_word_replay_allowed(s, st->word + i, one_op ? &st->op : &none,
						     sc->inc, now))
				return drop(s);
		for (uint32_t i = 0; i < st->nwords; i++)
			ser_word_replay_take(s, st->word + i);
		st->flags |= SF_BUSY;
		if (roce_psn_diff(st->psn, sc->walk_from) < 0)
			sc->walk_from = st->psn;
	}
	s->c.dup_replayed++;
	return st->kind == ST_REAL ? SER_FORWARD : restore_ackreq(s, st, f, p);
}

/* true if the replay of st cannot be a retransmission the client still
 * waits on (ser_word.c S8): a decision swordd answered itself,
 * acknowledged by the server, on a word another connection has changed
 * since.  Real atomics and writes need no such test: the server answers
 * them, whichever life they are.  S8's argument holds for a lock taken
 * by CAS, not for an FAA or a masked CAS on its own bits: others change
 * the word while their answer may still be owed (on a lane they are
 * decided side by side), and deciding them again would add twice or fail
 * a bit its client holds.  They are taken for retransmissions, except at
 * the connection's first PSN (a reconnect reusing it, Sherman's 3185).
 * Never a lane's: remapping answers a copy at its lane PSN, and one
 * decided again ran a second time elsewhere (closed fuzzer
 * both-rider-cas-run-twice-after-gated-release). */
static bool
replay_is_stale(const struct ser *s, const struct rc_conn *c,
		   const struct ser_stub *st)
{
	/* (with the RDMA CM a new life is a new connection: a copy is
	 * always a retransmission of this one) */
	if (st->kind != ST_REWRITTEN || (st->flags & SF_ZERO_LEN) || c->by_cm ||
	    st->on_lane || roce_psn_diff(st->psn, c->una) >= 0)
		return false;
	if (st->op.kind != SER_OP_CAS && st->psn != c->initial_psn)
		return false;
	return ser_word_changed_by_other(s, st->word, owner_of(c), st->chg_seq);
}

/*
 * A stale copy of an answered decision or a new life's identical request
 * (S8): decide it afresh at its PSN.  The window stays (a new life walks
 * through the old one's stubs and parts from it where its content
 * differs).  Not decidable now (unsettled word): -1, the caller takes it
 * as a new life (dropping it would kill a new life that the word's
 * unsettled state could keep from a decision for longer than its retry
 * budget; a stale copy arriving after another connection changed the word
 * is the rarer case, see README limits).
 */
static enum ser_verdict
replay_redecide(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
		struct ser_stub *st, uint8_t *f, uint32_t *len, uint32_t cap,
		struct roce_pkt *p, uint64_t now)
{
	const struct ser_who who = who_own(c);
	uint64_t orig = 0, wval = 0;
	bool pending;
	enum ser_decision dec;

	if (!c->paired || !sc->msn_known ||
	    !ser_word_decidable(s, st->word, &who, &st->op, now))
		return (enum ser_verdict)-1;
	dec = ser_word_decide(s, st->word, &who, &st->op, now, true,
			      &orig, &wval, &pending);
	if (dec != SD_WRITE && dec != SD_ZERO) {
		/* Decidable a moment ago, yet ser_word_decide expired the
		 * word's pending writes or found it shared and chose the real
		 * atomic, taking a busy hold for it.  It is dropped, not sent:
		 * give the hold back, or nothing ever would and the word could
		 * never be decided again. */
		if (dec == SD_PASS_REAL)
			ser_word_busy_done(s, st->word, false);
		return drop(s);
	}
	st->flags &= (uint16_t)~(SF_ZERO_LEN | SF_PENDING | SF_SENT_MSN | SF_UNSURE);
	st->orig = orig;
	st->wval = wval;
	if (dec == SD_ZERO) {
		st->flags |= SF_ZERO_LEN;
	} else if (pending) {
		st->flags |= SF_PENDING | SF_UNSURE;
		st->pend_gen = s->words[st->word].pend_gen;
	}
	st->chg_seq = s->words[st->word].chg_seq;
	s->c.replay_redecided++;
	return replay_rewritten(s, sc, st, f, len, cap, p, false);
}

/* The PSN of a probe's duplicate WRITE: 2^22 behind psn, far behind any
 * QP's newest PSN yet inside the duplicate half of its window. */
static uint32_t
dup_write_psn(uint32_t psn)
{
	return roce_psn_add(psn, ROCE_PSN_MASK + 1 - (1u << 22));
}

/*
 * A copy of an answered decision (a grant, a failure, an add), on a word
 * that moved since (by this connection's own later writes: another's
 * change is replay_is_stale's), of a connection the RDMA CM did not
 * identify.  It is one of:
 * - the old life's retransmission (its client lost the answer) or a
 *   network duplicate: the recorded answer is the one it needs;
 * - a new life of the QPs (same QPN, same PSNs, out of band) sending the
 *   same request: it must run, on what memory holds now.  Given the
 *   recorded answer (a zero-length WRITE and "granted") a new life held
 *   a lock its own old life had released and another client could take
 *   too: two holders (CI's e2e-sherman-accel-samepsn-reconnect); a new
 *   life repeating a CAS chain was told the old life's failures.
 * The server tells them apart.  With remapping off, in two steps:
 * - it is asked first whether its QP has this PSN: a zero-length WRITE
 *   far behind (2^22), a duplicate for any QP, which a responder ACKs
 *   again at its newest PSN and never executes (C9-105); the copy itself
 *   is dropped.  Only a QP that ran the recorded WRITE has this PSN (a new
 *   QP takes none past it before the atomic, which swordd alone sends
 *   it), so an ACK covering it answers the client with the recorded answer,
 *   as for the first copy (ser_resp.c).  An ACK or sequence NAK behind it
 *   says the QP lacks it (PROBE_LACKS: a new QP, or an old one that lost
 *   the WRITE);
 * - then the client's next copy goes to the server unchanged, its word
 *   busy (others' atomics pass real) until an answer covers it, and
 *   relearned after, since it may have run: the QP runs it and answers
 *   with an ATOMIC ACK, which goes to the client (fn_atomic_replay_ran).
 *   From here on only that answer is the client's: a plain ACK covering
 *   the PSN may follow an ATOMIC ACK lost on the way, so it is held back
 *   (probe_cover_held), and the next copy is sent as the atomic again, a
 *   duplicate whose ATOMIC ACK the QP replays.
 * Sent at once with the atomic (as it was until 2026-11-28), the question
 * had no answer that told the lives apart when the new QP's ATOMIC ACK was
 * lost: its ACK to the duplicate WRITE named the probed PSN as the old
 * QP's would (closed fuzzer state-probe-newqp-atomic-ack-lost, "success,
 * orig 0" where memory held 0x80), and the bound that replaced it
 * (probe_hi, an ACK beyond the connection's newest PSN at the probe) moved
 * with each copy (state-probe-hi-moved-by-recopy).  The price: a new life
 * waits longer for each decision it repeats (asked with an RNR NAK once
 * the question is answered, its client resends at once; where the old
 * life had gone past the copy, on its own timer).
 * With remapping on (no_poke) the duplicate WRITE would reach remapping as
 * a request far behind its window: the atomic goes at once and a plain ACK
 * at or behind probe_hi answers as recorded.  Not on a remapping lane
 * (remapping takes the atomic at a PSN where it placed a WRITE for no
 * retransmission, and [remap] out_of_band promises no new lives).  What is
 * not told apart (lib/serializer/README): an ACK the old server QP sent
 * before the QPs were re-created that reaches swordd after the question,
 * which covers the copy as the old QP's answer would
 * (findings/closed/state-probe-inflight-old-ack); and an old QP whose
 * recorded WRITE reaches it after it answered the question (it then drops
 * the atomic, and its client, never answered, runs out of retries).
 */
static enum ser_verdict
replay_probe(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
	     struct ser_stub *st, const uint8_t *f, const struct roce_pkt *p,
	     uint64_t now)
{
	if (!(st->flags & SF_PROBE))
		st->probe_step = PROBE_ASK;
	st->flags = (uint16_t)((st->flags & ~SF_ANSWERED) | SF_PROBE);
	if (roce_psn_diff(st->psn, sc->walk_from) < 0)
		sc->walk_from = st->psn;
	if (!s->prm.no_poke && st->probe_step == PROBE_ASK) {
		if (ser_after_zero_write(s, c, f, p, dup_write_psn(st->psn))) {
			sc->dup_ack_due = 1;
			sc->dup_ack_psn = st->psn;
		}
		/* the client is asked to resend behind the server's answer
		 * (an RNR NAK at this PSN, ser_ask.c), unless that answer
		 * covers the copy: then the recorded answer is its own */
		ser_ask_arm_later(sc, c, st->psn);
		s->drop_unasked = true;
		s->c.probe_asked++;
		return drop(s);
	}
	/* held undecided by time, as an untracked op (S7): a copy its old
	 * QP drops, whose covering ACK is lost, would otherwise hold the
	 * word for good once its client is idle */
	if (!ser_word_untracked(s, st->word, &st->op, owner_of(c), now))
		return drop(s);
	/* an unacknowledged decision's WRITE may never run (the old QP
	 * lost it and runs the atomic instead, or a new QP never had it):
	 * its ACK no longer proves the word holds its value */
	if (st->flags & SF_PENDING)
		st->flags |= SF_UNSURE;
	st->probe_hi = roce_psn_add(c->next_psn, ROCE_PSN_MASK);
	st->probe_step = PROBE_SENT;
	s->c.replay_probed++;
	if (s->prm.no_poke)
		return SER_FORWARD;
	/* the duplicate WRITE again, behind the atomic: a QP that ran the
	 * atomic replays its ATOMIC ACK for the duplicate and ACKs the WRITE
	 * at its newest PSN, which tells a client with a chain of such copies
	 * how far the server got */
	if (ser_after_zero_write(s, c, f, p, dup_write_psn(st->psn))) {
		sc->dup_ack_due = 1;
		sc->dup_ack_psn = st->psn;
	}
	return SER_FORWARD;
}

/*
 * Is this copy of a decision sent to the server as the client's own
 * atomic (replay_probe)?  Copies of answered decisions on a word that
 * moved since (moved), and copies of decisions the server has not
 * acknowledged yet in a run of copies from the connection's first
 * request on (unacked).  The latter are the old life's go-back-N from its
 * start or a new life of the QPs repeating its first requests byte for
 * byte, out of band, before the old server QP answered: sent again as
 * the recorded WRITE, the new QP ran it and the client was told
 * "granted, original 0" where memory held the bit set (closed fuzzer
 * accel-newlife-unanswered-grant-replayed).  A new life sends from its
 * first PSN on, in order, so its copies always follow a copy of the
 * first request (one lost before swordd makes the server NAK the rest
 * unexecuted, and the client sends it again); an old life's go-back-N
 * from further on is no new life and keeps the recorded WRITE (a probe
 * holds the word undecided by time: probing every go-back-N under loss
 * would stop acceleration).  Probed, the old QP drops the atomic if it
 * ran the WRITE (the duplicate WRITE's ACK then answers as recorded) or
 * runs the atomic if the WRITE never reached it, and a new QP runs it:
 * the server answers in the last two.
 * With remapping on (no_poke) there is no duplicate WRITE behind the
 * probe (it would reach remapping as a request far behind its window),
 * so an old QP that ran the WRITE and lost its ACK would never answer:
 * only answered copies whose old life's retransmission could not wait
 * on the recorded answer are probed there: its client acted on the
 * answer (SF_MINE_AFTER) and did not pipeline over it (SF_PIPED).
 */
static bool
probe_copy(const struct ser *s, const struct rc_conn *c, const struct ser_stub *st,
	   bool moved, bool unacked)
{
	/* a lane's stub may be sent anew at another lane PSN: a copy
	 * there runs a second time (remapping answers a lane copy) */
	if (c->by_cm || st->on_lane)
		return false;
	if (st->flags & SF_PROBE)
		return true;
	if (!s->prm.no_poke)
		return moved || unacked;
	return !(st->flags & SF_PENDING) && moved &&
	       !(st->flags & (SF_ZERO_LEN | SF_PIPED)) && (st->flags & SF_MINE_AFTER);
}

/*
 * A copy of an untracked op its server has not answered yet.  Its words
 * are held by time from when the first copy left (S7: it must have run
 * by then); but the first copy may never have run (a sequence NAK, a
 * loss) and this one may run now, after the hold, on a word learned or
 * folded again meanwhile (closed fuzzer accel-untracked-retransmit-
 * after-hold: a masked CAS resent after a NAK ran on a word an FAA's
 * fold had made known, and another client's CAS was decided on the old
 * value).  So the hold starts again, and the word is forgotten as it was
 * for the first copy.  false: it must wait (another's blind write).
 */
static bool
rehold_untracked(struct ser *s, const struct rc_conn *c, const struct ser_stub *st,
		 uint64_t now)
{
	const uint32_t n = st->nwords ? st->nwords : 1;

	if (!(st->flags & SF_UNTRACKED))
		return true;
	if (st->kind == ST_WRITE) {
		/* gated as its first copy was (req_fresh, req_behind): an
		 * immediate retransmission of a WRITE that went was dropped
		 * for a pending write of its own connection (fuzz_serializer
		 * i6-retransmission-answered-differently) */
		const struct ser_who own = who_own(c);

		if (words_gated(s, st->word, n, &own, now))
			return false;
		hold_write_words(s, st->word, n, now);
		return true;
	}
	return hold_range(s, st->word, n, &st->op, now);
}

static enum ser_verdict
req_replay(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
	   struct ser_stub *st, uint8_t *f, uint32_t *len, uint32_t cap,
	   struct roce_pkt *p, uint64_t now)
{
	const struct ser_who own = who_own(c);
	bool retired = roce_psn_diff(st->psn, c->una) < 0;

	switch (st->kind) {
	case ST_REWRITTEN: {
		bool moved, probe;

		moved = retired && (s->words[st->word].chg_seq != st->chg_seq ||
				    !ser_word_settled_for(s, st->word, &own, now));
		probe = probe_copy(s, c, st, moved, !retired && sc->copies_from_first) &&
			who_fresh(s, c, st->psn, true).dom == c->incarnation;
		if (probe && !s->prm.no_poke) {
			/* The server tells a stale copy's life from a new one,
			 * so neither S8's guess (nobody changes a word its
			 * holder has not released: closed fuzzer
			 * accel-cas-taken-answer-lost, a grant's retransmission
			 * told "failed" after another CAS took the word) nor
			 * the recorded answer (a new life told it holds what
			 * it released: accel-mcas-newlife-gated) is needed.
			 * Asked only once another's write on the word is ACKed
			 * (S2: the atomic could run before that write lands);
			 * until then the copy is dropped and the client's
			 * next one asks. */
			if (ser_word_replay_allowed(s, st->word, &st->op, c->incarnation, now))
				return replay_probe(s, c, sc, st, f, p, now);
			s->c.gated_drop++;
			return drop(s);
		}
		/* A new life's server QP runs nothing before its first
		 * request, so a copy that follows no copy of the connection's
		 * first request is the old life's go-back-N, whose client waits
		 * on the recorded answer.  Taken for a stale copy or new life,
		 * it was re-decided, or (undecidable) began a new life that
		 * forgot the old one's unanswered decisions: their ACKs
		 * became no ATOMIC ACK and the client waited for good (closed
		 * fuzzer live-accel-remap-gobackn-*: a go-back-N from further
		 * on met an answered grant on a word another client had
		 * written since).  Only with remapping on does a copy get
		 * here: without, such a copy was probed above. */
		if (sc->copies_from_first && replay_is_stale(s, c, st))
			return replay_redecide(s, c, sc, st, f, len, cap, p, now);
		/* (with remapping: a word another's blind write gates keeps
		 * the recorded answer; so does a copy that follows no copy of
		 * the first request, for the reason above: sent as the atomic,
		 * it reached the old QP as a duplicate of another request at
		 * its PSN, e2e matrix rcuckoo/accel+remap2/re=both/f=clients) */
		if (probe && sc->copies_from_first &&
		    ser_word_replay_allowed(s, st->word, &st->op, c->incarnation, now))
			return replay_probe(s, c, sc, st, f, p, now);
		moved = moved && !(st->flags & SF_ZERO_LEN);
		if (moved)
			s->c.replay_zeroed++;
		/* a decision whose WRITE remapping held back (it never left)
		 * may be placed on a lane now, as the connection binds at it:
		 * a copy of it there is remapping's to answer, never decided
		 * again (closed fuzzer both-rider-cas-run-twice-after-gated-
		 * release: re-decided as a new life, it ran a second time at
		 * the rider's own server QP, where its PSN was fresh) */
		if (!retired && who_fresh(s, c, st->psn, true).dom != c->incarnation)
			st->on_lane = 1;
		return replay_rewritten(s, sc, st, f, len, cap, p, moved);
	}
	case ST_REAL:
		if (retired && (st->flags & SF_ANSWERED))
			return replay_unmodelled(s, sc, st, f, p, now);
		if (!rehold_untracked(s, c, st, now))
			return drop(s);
		s->c.dup_replayed++;
		return SER_FORWARD;
	case ST_WRITE:
		if (retired && !(st->flags & SF_PENDING))
			return replay_unmodelled(s, sc, st, f, p, now);
		if (!rehold_untracked(s, c, st, now))
			return drop(s);
		return restore_ackreq(s, st, f, p);
	default:
		return restore_ackreq(s, st, f, p);
	}
}

/* ------------------------------------------------------------------ */
/* READ spans */

/*
 * The last READ spanned more PSNs than the configured pmtu implies: take
 * psn (ahead) as the next in-order PSN.  Unseen PSNs may lie before it, so
 * no decision is made on this connection until the server has answered
 * everything up to psn.
 */
static void
read_span_grow(struct ser *s, struct rc_conn *c, struct ser_conn *sc, uint32_t psn)
{
	c->next_psn = psn;
	sc->nodecide = 1;
	sc->nodecide_until = psn;
	sc->last_was_read = 0;
	s->c.read_span_fixed++;
}

/*
 * A new request lands on a continuation PSN of the last READ: its span was
 * overestimated (pmtu below the path MTU).  Nothing was decided past the
 * READ, so the span simply ends here.
 */
static bool
read_span_shrink(struct ser *s, struct rc_conn *c, struct ser_conn *sc,
		 const struct ser_stub *st, uint32_t psn)
{
	if (st->kind != ST_CONT || !sc->last_was_read ||
	    roce_psn_diff(psn, sc->read_psn) <= 0)
		return false;
	for (uint32_t q = psn; q != c->next_psn; q = roce_psn_add(q, 1)) {
		struct ser_stub *cs = ser_stub_at(s, sc, q);

		if (cs != NULL && cs->kind == ST_CONT)
			cs->kind = ST_EMPTY;
	}
	c->next_psn = psn;
	sc->last_was_read = 0;
	s->c.read_span_fixed++;
	return true;
}

/* ------------------------------------------------------------------ */
/* behind the window: sent before swordd saw the connection */

static void stub_init(struct ser_stub *st, const uint8_t *f,
		      const struct roce_pkt *p, uint32_t npsn);

static enum ser_verdict
req_behind(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
	   const uint8_t *f, const struct roce_pkt *p, const struct req_class *rc,
	   uint64_t now)
{
	struct ser_stub *st = ser_slot(s, sc, p->psn);
	const struct ser_who who = who_own(c);
	uint64_t orig, wval;
	bool pending;

	/* A PSN below the window that left no stub: a new connection whose
	 * first packets swordd missed, or a retransmission from before a
	 * restart.  Nothing is decided for it: an atomic goes real, a write
	 * to a word is unmodelled, both tracked in a stub so their effect on
	 * the words is accounted for; it does not count towards the MSN (the
	 * offset re-learned from the next response absorbs it). */
	if (rc->word == SER_NO_WORD)
		return SER_FORWARD;
	if ((st->kind != ST_EMPTY && roce_psn_diff(st->psn, c->una) >= 0) ||
	    (!rc->atomic && !rc->single_write))
		return out_of_window(s, rc);
	if (!rc->atomic && write_gated(s, rc, &who, now))
		return drop(s);
	if (!c->paired && sc->untracked) {
		if (!rc->atomic)
			hold_write_words(s, rc->word, rc->nwords, now);
		else if (!hold_words(s, rc, now))
			return drop(s);
		if (st->kind != ST_EMPTY)
			ser_stub_orphan(s, st, now);
		stub_init(st, f, p, 1);
		stub_untracked(s, st, rc);
		return SER_FORWARD;
	}
	if (rc->atomic &&
	    ser_word_decide(s, rc->word, &who, &rc->op, now, false,
			    &orig, &wval, &pending) == SD_DROP)
		return drop(s);
	if (st->kind != ST_EMPTY)
		ser_stub_orphan(s, st, now);
	stub_init(st, f, p, 1);
	st->word = rc->word;
	st->nwords = 1;
	st->op = rc->op;
	if (rc->atomic) {
		st->kind = ST_REAL;
		st->flags = SF_NOLEARN;
	} else {
		st->kind = ST_WRITE;
		st->flags = SF_BUSY;
		ser_word_busy_take(s, rc->word);
		s->words[rc->word].flags |= WF_DIRTY;
		s->c.write_unmodelled++;
	}
	st->chg_seq = s->words[rc->word].chg_seq;
	return SER_FORWARD;
}

/* ------------------------------------------------------------------ */

/* An atomic of a connection set up out of band, on no lane: a new life of
 * its QPN that sends the same atomic at an answered PSN looks like its
 * retransmission, and a recorded answer would answer the new life (an
 * FAA's increment lost, a CAS granted on a word it no longer held); the
 * server tells them apart (ser_params.out_of_band). */
static inline bool
out_of_band_in_doubt(const struct ser *s, const struct rc_conn *c, const struct ser_who *who)
{
	return !c->by_cm && who->dom == who->owner && !s->prm.out_of_band;
}

/* fresh: the next in-order request */

static void
stub_init(struct ser_stub *st, const uint8_t *f, const struct roce_pkt *p,
	  uint32_t npsn)
{
	struct req_content rq;

	read_content(f, p, &rq);
	memset(st, 0, sizeof(*st));
	st->psn = p->psn;
	st->opcode = p->opcode;
	st->kind = ST_PLAIN;
	st->word = SER_NO_WORD;
	st->npsn = (uint8_t)RTE_MIN(npsn, 255u);
	st->va = rq.va;
	st->rkey = rq.rkey;
	st->dlen = rq.dlen;
	st->op = rq.op;
}

static enum ser_verdict
fresh_atomic(struct ser *s, struct rc_conn *c, struct ser_conn *sc,
	     struct ser_stub *st, const struct req_class *rc, const struct ser_who *who,
	     uint8_t *f, uint32_t *len, uint32_t cap, struct roce_pkt *p, uint64_t now)
{
	uint64_t orig = 0, wval = 0;
	enum ser_decision dec;
	bool may_rewrite, pending, oob;

	if (!c->paired && sc->untracked) {
		/* its answers may never be seen: hold, do not busy (S7) */
		if (!hold_words(s, rc, now)) {
			st->kind = ST_EMPTY;
			return drop(s);
		}
		stub_untracked(s, st, rc);
		return SER_FORWARD;
	}
	if (sc->nodecide && roce_psn_diff(c->una, sc->nodecide_until) > 0)
		sc->nodecide = 0;
	may_rewrite = c->paired && sc->msn_known && !sc->nodecide && !sc->copy_hold;
	oob = may_rewrite && out_of_band_in_doubt(s, c, who);
	dec = ser_word_decide(s, rc->word, who, &rc->op, now, may_rewrite && !oob,
			      &orig, &wval, &pending);
	if (oob && dec == SD_PASS_REAL)
		s->c.out_of_band_real++;
	if (dec == SD_DROP) {
		st->kind = ST_EMPTY;
		return drop(s);
	}
	st->word = rc->word;
	st->nwords = 1;
	st->op = rc->op;
	st->on_lane = who->dom != who->owner;
	st->chg_seq = s->words[rc->word].chg_seq;
	if (dec == SD_PASS_REAL) {
		st->kind = ST_REAL;
		/* a copy behind a re-synchronized sequence (a connection a
		 * torn restart gave up, met_given_up): the server may answer
		 * it from its replay cache, a value of before (closed fuzzer
		 * state-torn-given-up-replay-learned: learned so, a word was
		 * granted again to the client that held it) */
		if (now - s->epoch < s->prm.learn_holdoff_tsc || sc->copy_hold ||
		    (sc->nodecide && roce_psn_diff(p->psn, sc->nodecide_until) <= 0))
			st->flags |= SF_NOLEARN;
		/* its part in the word's domain count and fold, also when
		 * its answer will not be learned from */
		st->flags |= ser_word_took(s, rc->word, &st->fold_gen, &st->fold_after);
		return SER_FORWARD;
	}
	st->kind = ST_REWRITTEN;
	st->orig = orig;
	if (dec == SD_ZERO) {
		st->flags |= SF_ZERO_LEN;
	} else {
		st->wval = wval;
		if (pending) {
			st->flags |= SF_PENDING;
			st->pend_gen = s->words[rc->word].pend_gen;
		}
	}
	if (apply_rewrite(s, f, len, cap, p, st, false) != 0) {
		/* cannot happen (the frame shrinks); stay safe */
		ser_stub_orphan(s, st, now);
		return drop(s);
	}
	return SER_FORWARD_REWRITTEN;
}

static enum ser_verdict
fresh_word_write(struct ser *s, const struct rc_conn *c, const struct ser_conn *sc,
		 struct ser_stub *st, const struct req_class *rc, const struct ser_who *who,
		 uint8_t *f, struct roce_pkt *p, uint64_t now)
{
	bool pending;

	if (!c->paired && sc->untracked) {
		hold_write_words(s, rc->word, rc->nwords, now);
		stub_untracked(s, st, rc);
	} else if (sc->copy_hold) {
		/* it may never run as sent (copy_of_answered): not a pending
		 * write the shadow counts on */
		st->kind = ST_WRITE;
		st->word = rc->word;
		st->nwords = 1;
		st->flags |= SF_BUSY;
		ser_word_busy_take(s, rc->word);
		s->words[rc->word].flags |= WF_DIRTY;
		s->c.write_unmodelled++;
	} else {
		st->kind = ST_WRITE;
		st->word = rc->word;
		st->nwords = 1;
		st->wval = rc->op.arg[0];
		if (!ser_word_write(s, rc->word, who, rc->op.arg[0], now,
				    &pending)) {
			st->flags |= SF_BUSY;
		} else if (pending) {
			st->flags |= SF_PENDING;
			st->pend_gen = s->words[rc->word].pend_gen;
		}
	}
	st->chg_seq = s->words[rc->word].chg_seq;
	if (!s->prm.no_force_ackreq && !roce_get_ackreq(f, p)) {
		set_ackreq(f, p);
		if (!s->prm.defer_resign)
			roce_resign(f, p);
		st->flags |= SF_ACKREQ;
		s->c.ackreq_set++;
		return SER_FORWARD_REWRITTEN;
	}
	return SER_FORWARD;
}

/* A write the shadow cannot follow: words stay busy until the ACK
 * covering its last packet. */
static void
fresh_span_write(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
		 struct ser_stub *st, const struct req_class *rc,
		 const struct roce_pkt *p, uint64_t now)
{
	const struct roce_opcode_info *oi = p->oi;

	if (!c->paired && sc->untracked) {
		/* held by time from its first packet; no open write */
		if (roce_has(oi, ROCE_HDR_RETH)) {
			hold_write_words(s, rc->word, rc->nwords, now);
			stub_untracked(s, st, rc);
		}
		return;
	}
	if (roce_has(oi, ROCE_HDR_RETH)) {
		/* A new WRITE message while another is open: the open one gets
		 * no LAST any more (its responder NAKs the out-of-sequence
		 * opcode), so nothing would ever give back the words its FIRST
		 * made busy, and they could never be decided again.  Its FIRST
		 * may have written memory: release them as orphans. */
		ser_close_open_write(s, sc, now);
		for (uint32_t i = 0; i < rc->nwords; i++) {
			ser_word_busy_take(s, rc->word + i);
			s->words[rc->word + i].flags |= WF_DIRTY;
		}
		s->c.write_unmodelled++;
	}
	if (oi->flags & ROCE_F_LAST) {
		st->kind = ST_WRITE;
		st->word = rc->word;
		st->nwords = rc->nwords;
		st->flags |= SF_BUSY;
		st->chg_seq = s->words[rc->word].chg_seq;
		sc->open_word = SER_NO_WORD;
		sc->open_nwords = 0;
	} else if (oi->flags & ROCE_F_FIRST) {
		sc->open_word = rc->word;
		sc->open_nwords = rc->nwords;
	}
}

/* Message count, continuation stubs of a multi-PSN READ, the window. */
static void
fresh_account(struct ser *s, struct rc_conn *c, struct ser_conn *sc,
	      struct ser_stub *st, const uint8_t *f, const struct roce_pkt *p,
	      uint32_t npsn, uint64_t now)
{
	const struct roce_opcode_info *oi = p->oi;

	if (oi->flags & (ROCE_F_LAST | ROCE_F_READ | ROCE_F_ATOMIC)) {
		sc->msgs++;
		st->flags |= SF_MSG_END;
	}
	st->msg_seq = sc->msgs;
	st->flags |= SF_MSN_VALID;
	for (uint32_t i = 1; i < npsn; i++) {
		struct ser_stub *cs = ser_slot(s, sc, roce_psn_add(p->psn, i));

		if (cs->kind != ST_EMPTY) {
			if (roce_psn_diff(cs->psn, c->una) >= 0)
				continue; /* live: leave it alone */
			ser_stub_orphan(s, cs, now);
		}
		memset(cs, 0, sizeof(*cs));
		cs->kind = ST_CONT;
		cs->psn = roce_psn_add(p->psn, i);
		cs->opcode = p->opcode;
		cs->word = SER_NO_WORD;
		cs->msg_seq = st->msg_seq;
		cs->flags = SF_MSN_VALID;
	}
	c->next_psn = roce_psn_add(p->psn, npsn);
	sc->last_was_read = 0;
	if (oi->flags & ROCE_F_READ) {
		/* its span for the smallest MTU (256): a later PSN up to
		 * here may still be the next request */
		uint32_t l = st->dlen;

		sc->last_was_read = 1;
		sc->read_psn = p->psn;
		sc->read_maxend = roce_psn_add(p->psn, l ? (l + 255) / 256 + 1 : 2);
	}
	(void)f;
}

/*
 * A request over the word of the connection's newest decided atomic.
 * Before that atomic's answer left (SF_PIPED), the client pipelines over
 * the word, and if it loses that answer it retransmits the atomic after
 * its own change: a copy replay_probe must not send to the server (its
 * old QP would drop it and never answer).  After (SF_MINE_AFTER), the
 * client acted on the answer, as a lock client releases what its CAS
 * took: a copy of the atomic after that is no retransmission its client
 * waits on.
 */
static void
note_piped(struct ser *s, struct ser_conn *sc, const struct req_class *rc)
{
	struct ser_stub *prev;

	if (!sc->last_dec_set || sc->last_dec_word < rc->word ||
	    sc->last_dec_word >= rc->word + rc->nwords)
		return;
	prev = ser_stub_at(s, sc, sc->last_dec_psn);
	if (prev != NULL && prev->kind == ST_REWRITTEN && prev->psn == sc->last_dec_psn)
		prev->flags |= (prev->flags & SF_ANSWERED) ? SF_MINE_AFTER : SF_PIPED;
}

static enum ser_verdict
req_fresh(struct ser *s, struct rc_conn *c, struct ser_conn *sc, uint8_t *f,
	  uint32_t *len, uint32_t cap, struct roce_pkt *p,
	  const struct req_class *rc, uint64_t now)
{
	const struct roce_opcode_info *oi = p->oi;
	struct ser_stub *st = ser_slot(s, sc, p->psn);
	const struct ser_who who = who_fresh(s, c, p->psn, rc->atomic);
	enum ser_verdict v = SER_FORWARD;
	uint32_t npsn;

	if (start_quiet(s, rc, now) || (!rc->atomic && write_gated(s, rc, &who, now)))
		return drop(s);
	npsn = (oi->flags & ROCE_F_READ) ? roce_req_psns(f, p, s->prm.pmtu) : 1;
	if (npsn == 0 || npsn > s->prm.ring_size)
		npsn = 1;
	/* (an unpaired connection whose answers cannot be attributed holds
	 * nothing in its stubs: they are reused as its window moves) */
	if (st->kind != ST_EMPTY && roce_psn_diff(st->psn, c->una) >= 0 &&
	    (c->paired || !sc->untracked)) {
		/* the ring holds nothing older that is still live */
		s->c.stub_ring_full++;
		if (rc->word != SER_NO_WORD)
			return drop(s);
		/* forwarded untracked; the message count stays right */
		sc->msgs += (oi->flags & (ROCE_F_LAST | ROCE_F_READ | ROCE_F_ATOMIC)) != 0;
		c->next_psn = roce_psn_add(p->psn, npsn);
		return SER_FORWARD;
	}
	if (st->kind != ST_EMPTY)
		ser_stub_orphan(s, st, now);
	if (rc->word != SER_NO_WORD && s->prm.no_poke)
		note_piped(s, sc, rc);
	stub_init(st, f, p, npsn);
	if (rc->atomic) {
		v = fresh_atomic(s, c, sc, st, rc, &who, f, len, cap, p, now);
		if (v == SER_DROP)
			return v;
		if (st->kind == ST_REWRITTEN) {
			sc->last_dec_set = 1;
			sc->last_dec_psn = p->psn;
			sc->last_dec_word = rc->word;
		}
	} else if (rc->single_write) {
		v = fresh_word_write(s, c, sc, st, rc, &who, f, p, now);
	} else if (rc->word != SER_NO_WORD) {
		fresh_span_write(s, c, sc, st, rc, p, now);
	}
	fresh_account(s, c, sc, st, f, p, npsn, now);
	return v;
}

/* ------------------------------------------------------------------ */
/* route */

/*
 * A new life told from the old one only at a request that differs, after
 * it had resent the connection's first request and every one since: an
 * out-of-band re-creation at the same PSN whose first requests repeat the
 * old life's byte for byte.  Those copies were this life's own, and their
 * answers may still be to come (one was dropped at a gate).  So its window
 * opens where it began, not at the request that told it apart: an ask
 * there would complete them to the client (an RNR NAK acknowledges every
 * PSN before its own; closed fuzzer state-newlife-write-acked-by-ask: a
 * WRITE dropped at the gate acknowledged by the ask for the next PSN,
 * never run).  Its next PSN stays past them.
 */
static void
life_began_at_first(struct rc_conn *c, struct ser_conn *sc)
{
	c->una = c->first_psn = c->initial_psn;
	sc->walk_from = c->initial_psn;
	sc->una_known = 1;
}

/*
 * The client resent a request the server had answered.  Its answer was
 * lost, or this is a new life of the QPs (out of band, the same QPN and
 * PSNs) repeating the old one's requests, whose server QP has run none of
 * them yet: then the requests that life sent before this copy and swordd
 * has not seen again (reordered, or lost before it) run at the server
 * before anything it sends next, on any word.  A decision on its next
 * request would leave them out (closed fuzzer newlife-copy-then-decided:
 * a new life's copy of an answered masked CAS, overtaking the copy of its
 * CAS before it, then its next masked CAS granted on the word as the old
 * life had left it; its WRITE never ran as decided, and another client's
 * CAS was answered "failed" with that value, which memory never held).
 * So nothing of the connection is decided, and its writes are not
 * modelled, until an answer that came after the copy covers everything
 * it had sent: the server's replay of the lost answer (then no new life),
 * or, for a new life, its answer to that life's requests run in order.
 */
static void
copy_of_answered(struct ser *s, const struct rc_conn *c, struct ser_conn *sc)
{
	const uint32_t last = roce_psn_add(c->next_psn, ROCE_PSN_MASK);

	/* Not with remapping on (no_poke): held so, test_remap t_random seed
	 * 31 stopped making progress; the class stays open there
	 * (tests/fuzz/findings/closed/README.md) */
	if (s->prm.no_poke)
		return;

	if (!sc->copy_hold || roce_psn_diff(last, sc->copy_hold_psn) > 0)
		sc->copy_hold_psn = last;
	if (!sc->copy_hold)
		s->c.copy_holds++;
	sc->copy_hold = 1;
}

static enum ser_verdict
req_route(struct ser *s, struct rc_conn *c, struct ser_conn *sc, uint8_t *f,
	  uint32_t *len, uint32_t cap, struct roce_pkt *p, uint64_t now)
{
	uint32_t psn = p->psn;
	int32_t d = roce_psn_diff(psn, c->next_psn);
	int32_t ring = (int32_t)s->prm.ring_size;
	struct ser_stub *st = ser_stub_at(s, sc, psn);
	struct req_class rc;

	if (d >= 0) {
		sc->copies_from_first = 0;
	} else if (psn == c->initial_psn) {
		sc->copies_from_first = 1;
		/* An ask for a request further on (ser_ask.c) may be another
		 * life's: a new life of the QPs out of band that never sent that
		 * PSN got an RNR NAK there (closed fuzzer accel-newlife-asked-
		 * past-its-requests, O3).  A go-back-N from the start resends it
		 * anyway. */
		if (sc->ask && roce_psn_diff(sc->ask_psn, psn) > 0)
			sc->ask = 0;
	}
	if (d < 0 && st != NULL) {
		if (same_request(st, f, p)) {
			enum ser_verdict v;

			if (roce_psn_diff(psn, c->una) < 0)
				copy_of_answered(s, c, sc);
			v = req_replay(s, c, sc, st, f, len, cap, p, now);

			if ((int)v >= 0)
				return v;
			st = NULL;  /* undecidable stale-or-new: a new life */
		}
		if (st == NULL || !read_span_shrink(s, c, sc, st, psn)) {
			const bool from_first = sc->copies_from_first;

			sc = ser_conn_new_life(s, c, psn, now);
			if (from_first)
				life_began_at_first(c, sc);
		}
		d = 0;
	} else if (d < 0 && d >= -ring) {
		classify(s, f, p, sc, &rc);
		return req_behind(s, c, sc, f, p, &rc, now);
	} else if (d < 0 && psn != c->initial_psn && d >= -8 * ring) {
		/* further back than the ring: a go-back-N wider than the ring
		 * (no stub to answer it from) decides and learns nothing */
		classify(s, f, p, sc, &rc);
		return out_of_window(s, &rc);
	} else if (d < 0) {
		/* back to where this connection started (a reconnect reusing
		 * its QPN and initial PSN, Sherman's 3185), or further back
		 * than any window: a new life */
		sc = ser_conn_new_life(s, c, psn, now);
		d = 0;
	} else if (d > 0) {
		if (sc->last_was_read && roce_psn_diff(psn, sc->read_maxend) < 0) {
			read_span_grow(s, c, sc, psn);
		} else if (d > ring) {
			/* a jump no window explains: a new life of the QPN */
			sc = ser_conn_new_life(s, c, psn, now);
		} else {
			/* a gap: the server will NAK it */
			classify(s, f, p, sc, &rc);
			return out_of_window(s, &rc);
		}
		d = 0;
	}
	classify(s, f, p, sc, &rc);
	return req_fresh(s, c, sc, f, len, cap, p, &rc, now);
}

/*
 * c, just opened at psn, may be a connection a torn restart gave up
 * (struct ser_given_up): its requests behind the PSNs the old one had sent
 * may be copies of ones the server ran, whose stubs are gone.  Decided
 * afresh, a CAS that had run was answered a second time, on the word as it
 * was by then (closed fuzzer state-torn-given-up-copy-decided: "success,
 * orig 0", then "failed, orig 1", I6).  Nothing of it is decided until the
 * server has answered past them, as after a re-synchronized PSN sequence:
 * atomics pass real, and the server replays its answers to copies.
 */
static void
met_given_up(struct ser *s, const struct rc_conn *c, struct ser_conn *sc, uint32_t psn)
{
	for (uint32_t i = 0; i < SER_GIVEN_UP_MAX; i++) {
		struct ser_given_up *g = &s->given_up[i];
		int32_t behind;

		if (!g->valid || g->cl_ip != c->cl_ip || g->srv_ip != c->srv_ip ||
		    g->srv_qpn != c->srv_qpn)
			continue;
		g->valid = 0;
		behind = roce_psn_diff(g->next_psn, psn);
		if (behind <= 0 || behind >= (1 << 22))
			return;   /* past all it sent: fresh */
		sc->nodecide = 1;
		sc->nodecide_until = roce_psn_add(g->next_psn, ROCE_PSN_MASK);
		s->c.given_up_met++;
		return;
	}
}

static enum ser_verdict
on_request(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	   struct roce_pkt *p, uint64_t now)
{
	const struct roce_opcode_info *oi = p->oi;
	struct rc_conn *c;
	struct ser_conn *sc;
	enum ser_verdict v;
	bool opened = false;

	s->n_after = 0;
	s->drop_unasked = false;
	if (ser_handle_cm(s, f, p, now))
		return SER_FORWARD;
	if (p->ip_version != 4 || (oi->flags & (ROCE_F_REQUEST | ROCE_F_RC)) !=
	    (ROCE_F_REQUEST | ROCE_F_RC) || !ser_is_server(s, p->dst_ip4))
		return SER_FORWARD;
	s->c.req_seen++;
	if (!s->epoch_set) {
		s->epoch = now;
		s->epoch_set = true;
	}
	/* check: nothing is learned from, or created by, a frame that is not
	 * what its sender sent (I7, I8); the server drops it too */
	if (!ser_icrc_good(s, f, p)) {
		s->c.bad_icrc_passed++;
		return SER_FORWARD;
	}
	if (oi->flags & ROCE_F_READ)
		note_read(s, f, p);
	c = rc_find_req(s->rc, p->src_ip4, p->dst_ip4, p->qpn);
	if (c == NULL) {
		c = rc_open(s->rc, p->src_ip4, p->dst_ip4, p->qpn, p->psn, now);
		opened = c != NULL;
	}
	if (c == NULL)
		return req_untracked(s, f, p, now);
	ser_torn_conn(s, c);
	rc_touch(c, now);
	sc = ser_conn_state(s, c);
	if (opened)
		met_given_up(s, c, sc, p->psn);
	v = req_route(s, c, sc, f, len, cap, p, now);
	/* (a new life keeps sc: it is the slot's state, reset) */
	if (v == SER_DROP && !s->drop_unasked)
		ser_ask_arm(s, c, sc, f, p);
	else if (v != SER_DROP && sc->ask && p->psn == sc->ask_psn)
		sc->ask = 0;   /* it goes to the server after all */
	return v;
}

enum ser_verdict
ser_on_request(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	       struct roce_pkt *p, uint64_t now)
{
	enum ser_verdict v;

	if (!s->in_state)
		return on_request(s, f, len, cap, p, now);
	ser_torn_begin(s, TORN_REQUEST, p->src_ip4, p->dst_ip4);
	v = on_request(s, f, len, cap, p, now);
	ser_torn_end(s);
	return v;
}
