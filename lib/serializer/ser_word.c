/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_word.c — the lock-word state machine: when swordd may decide an
 * atomic itself, when it must let the server's atomic unit decide, and how
 * it learns a word's value back.
 *
 * Why it exists: this is the part of atomic replacement that must be right
 * for locks to stay locks.  Everything else (stubs, MSN, ACK expansion)
 * only has to present the decisions to the clients faithfully.
 *
 * SAFETY ARGUMENT
 *
 * Vocabulary.  A *modelled* op is one swordd decided (a rewritten atomic,
 * forwarded as WRITE(v) or as a zero-length WRITE) or a plain 8-byte WRITE
 * whose effect swordd tracks; a modelled op that changes the word is a
 * *pending write* until the server's ACK covering it comes back.  An
 * *unmodelled* op is one the server decides: a real atomic passed through,
 * or a write swordd cannot model (multi-word, multi-packet, racing).
 * Per word: shadow = value once every forwarded modelled write has landed;
 * committed = value before the pending writes; busy = unmodelled ops in
 * flight; pend_owner = the one connection owning all pending writes,
 * pend_dom = the one ordering domain they were all decided in (each
 * SER_MIXED when they are several).
 *
 * Ordering domains (lib/rc, rc_order_domains).  A domain is a set of
 * requests the server executes in the order swordd forwards them: one
 * client connection (RC executes its requests in PSN order), or, with
 * remapping, every connection on one lane (one server connection, lane
 * PSNs given in forwarding order, kept by retransmissions).  A request is
 * counted in its lane's domain only when remapping will give it its lane
 * PSN at once; anything that may be held and overtaken is its
 * connection's own.  A request is after every pending write of its own
 * connection (client order is kept on a lane) and, in a lane's domain,
 * after every write decided in that domain.  Below, "A's write is
 * pending" means one that is not ordered before the request that way.
 *
 * S1 (decisions are in server order).  swordd decides an op only when
 *   the word is KNOWN, busy == 0, not dirty, and every pending write on it
 *   is on the requester's own connection.  The server executes that
 *   connection's requests in PSN order (RC), decisions are made only for
 *   the next in-order PSN of a connection (ser_req.c), and no other
 *   connection has a value-changing op in flight on the word, so the
 *   server applies the writes in exactly the order swordd decided them and
 *   memory passes through the same values as the shadow.  A failed CAS is
 *   forwarded as a zero-length WRITE: it cannot change memory, so it can
 *   never race anything.
 *
 * S2 (grant after release ACK, I4).  While connection A has a pending
 *   write on w, a request from B ≠ A is never decided against the shadow
 *   as a success.  It gets one of:
 *   - a failure answer with orig = committed, if the op would not change
 *     a word holding committed (memory holds committed until A's write
 *     lands: an honest read), but not once a READ of the word went to
 *     the server after A's write did (WF_READ_SINCE: its reader may have
 *     seen the write land, and committed is then a value memory no
 *     longer holds); or orig = shadow, if the op would not change a word
 *     holding shadow (A's write is already ordered on A's connection;
 *     this is the value every later reader sees), but not once A's
 *     connection ended (WF_PEND_ORPHAN: the write may never land).
 *     Failures change nothing, so they cannot be lost or lose anything;
 *   - after the refusal bound, the real atomic, but only when exactly one
 *     write is pending and the op would not change a word holding
 *     committed.  Then if the server runs it before A's write lands it is
 *     a no-op (nothing for A's blind write to overwrite), and if after, A
 *     is finished with the word: the server's own atomic serializes B
 *     correctly.  The word is marked dirty and relearned;
 *   - otherwise (FAA, a CAS that would succeed on either value): dropped.
 *     The client retransmits; dropping is never a wrong answer.
 *   Passing an arbitrary real atomic here would be wrong: it could execute
 *   before A's blind WRITE lands and be overwritten (two holders).
 *
 * S3 (releases never stall).  Writes swordd forwards to managed words get
 *   AckReq set (their ICRC was verified first), so the server ACKs them at
 *   once; the refusal bound covers lost ACKs; pending_expire_tsc abandons a
 *   write whose connection died (the word is then relearned; it must
 *   exceed the clients' RC retry budget so the write cannot still land).
 *
 * S4 (unmodelled mixes are forgotten).  Unmodelled ops are executed by the
 *   server in an order swordd does not see.  swordd decides nothing while
 *   any is in flight (busy > 0).  At quiescence (busy == 0, no pending
 *   write) the word is relearned from the ATOMIC ACKs of the real atomics
 *   of that busy period: each is an edge orig → apply(op, orig) on the
 *   values; the server's execution is an Euler trail through them, whose
 *   end is the vertex with one more in- than out-edge (or the start, when
 *   balanced and the start was known; or the common value when every op
 *   left the word unchanged).  Anything else — a blind write in the
 *   period, a real op mixed with pending writes, a NAK, an inconsistent
 *   degree — makes the word UNKNOWN and the next op relearns it.  Under
 *   CAS-only contention this resolves every busy period, so learning does
 *   not livelock.
 *
 * S6 (contention between connections).  An op that cannot fail (FAA,
 *   a masked CAS on other bits) from B while A's write is pending can only
 *   be dropped (S2).  So a word where that happened, or where FAAs come
 *   from two domains, is marked shared for a while: value-changing ops on
 *   it go real (the server serializes them), only failures are still
 *   answered locally.  Remapping lifts it: connections on one lane are
 *   one domain, so their FAAs, masked CAS and grants after a release are
 *   decided without a gate (the release and the grant reach the server in
 *   that order on one server connection).  Between lanes S2 still holds.
 *
 * S7 (connections end).  A connection whose life ends (evicted idle, CM
 *   disconnect, a new incarnation of its QPN) may leave ops in flight that
 *   swordd will never see answered.  Its pending writes stay pending under
 *   its owner number, which no later life shares, so they keep gating
 *   every other owner (S2) until pending_expire_tsc; its unmodelled ops
 *   give their busy back but hold the word undecided for orphan_tsc (the
 *   longer of the expiry and the learning hold-off), long enough for
 *   anything still in flight to have run or died.  A write to a word from
 *   one owner while another owner's blind write is pending is dropped
 *   (the client retransmits): it could land first and be overwritten.
 *
 * S8 (who changed a word).  Each value change is counted with its owner:
 *   swordd's own decisions and modelled writes under the deciding
 *   connection's incarnation, a value learned different from the shadow
 *   under nobody's.  A retransmission replays a decision the server has
 *   already acknowledged only while no other owner changed the word since
 *   (ser_req.c); its value is re-sent only if nobody changed the word
 *   since and it is settled, otherwise a zero-length WRITE carries the
 *   recorded answer (a server treats a true retransmission as a duplicate
 *   whatever it carries, and must not run a stale value again).  If
 *   another owner changed it, the request is decided afresh at its PSN:
 *   a client still waiting for the old answer is impossible then (for a
 *   lock, nobody else changes a word its holder has not released), so it
 *   is either a stale copy whose answer the client discards or a new life
 *   of the QP that needs the fresh one.  The fresh write is unsure (the
 *   server may take it for a duplicate and not run it): its ACK makes the
 *   word relearned, not trusted.
 *
 * S5 (soft state, F5).  UNKNOWN is always safe: every op passes real.  The
 *   shadow is only ever trusted after S1/S4 justified it; losing all of it
 *   (restart, ser_reset) returns every word to UNKNOWN.
 *
 * Retransmissions (I6) never reach this file: ser_req.c replays the
 * decision recorded in the stub.  Re-sending the same WRITE is harmless:
 * the responder sees a duplicate PSN and ACKs it without executing it again
 * (IBTA C9-*), and if it was never executed it is executed in its PSN
 * place, which S1 accounted for when it was decided.
 */
#include <string.h>

#include "ser_internal.h"

#define WF_SELF_SEEN 0x40
/* what the last busy_take did (ser_word_took) */
#define TAKE_TAGGED 0x01
#define TAKE_MEMBER 0x02
#define WF_PERIOD (WF_START_KNOWN | WF_SELF_MIXED | WF_ANY_EDGE | WF_ANY_ORIG | WF_SELF_SEEN)

void
ser_word_reset(struct ser_word *w)
{
	memset(w, 0, sizeof(*w));
	w->pend_owner = w->pend_dom = SER_NO_OWNER;
	w->faa_owner = w->faa_dom = SER_NO_OWNER;
	w->fold_dom = SER_MIXED;
	w->chg_owner = SER_NO_OWNER;
}

/* Forgotten after the traffic went around swordd: unknown, and changed
 * by someone unknown since every change swordd saw (a copy of a decision
 * on it is not answered as recorded without asking: ser_req.c). */
void
ser_word_forget_moved(struct ser_word *w)
{
	const uint32_t seq = w->chg_seq + 1;

	ser_word_reset(w);
	w->chg_seq = w->streak_seq = w->other_seq = seq;
}

/* The value changes (or may have changed) by owner's doing. */
static void
changed_by(struct ser_word *w, uint32_t owner)
{
	w->chg_seq++;
	if (owner == SER_NO_OWNER || owner != w->chg_owner) {
		w->chg_owner = owner;
		w->streak_seq = w->chg_seq;
	}
	/* the last change swordd decided for some connection */
	if (owner != SER_NO_OWNER)
		w->other_seq = w->chg_seq;
}

bool
ser_word_changed_by_other(const struct ser *s, uint32_t wi, uint32_t ci,
			  uint32_t seq)
{
	const struct ser_word *w = &s->words[wi];

	if (w->chg_seq == seq)
		return false;
	/* changes since seq: only ci's own run, or someone else's */
	return !(w->chg_owner == ci && (int32_t)(w->streak_seq - seq) <= 0) &&
	       (int32_t)(w->other_seq - seq) > 0;
}

/* Is every unmodelled op in flight on w executed before who's request?
 * Only when the word is known from a fold in who's domain (S4 on a lane). */
static bool
busy_before(const struct ser_word *w, const struct ser_who *who)
{
	return w->busy == 0 || ((w->flags & WF_FOLDED) && w->fold_dom == who->dom);
}

/* Is every pending write of w executed before who's request? */
static bool
pending_before(const struct ser_word *w, const struct ser_who *who)
{
	return w->pend_cnt == 0 || w->pend_owner == who->owner ||
	       (w->pend_dom == who->dom && w->pend_dom != SER_MIXED);
}

bool
ser_word_settled_for(const struct ser *s, uint32_t wi, const struct ser_who *who,
		     uint64_t now)
{
	const struct ser_word *w = &s->words[wi];

	return w->state == W_KNOWN && busy_before(w, who) && now >= w->hold_until &&
	       !(w->flags & (WF_DIRTY | WF_NOREWRITE)) && pending_before(w, who);
}

bool
ser_word_decidable(const struct ser *s, uint32_t wi, const struct ser_who *who,
		   const struct ser_op *op, uint64_t now)
{
	const struct ser_word *w = &s->words[wi];

	/* drain: a stale copy or new life is not decided afresh either; the
	 * caller then treats it as the fresh request it passes real */
	return !s->drain && ser_word_settled_for(s, wi, who, now) &&
	       !((w->flags & WF_SHARED) && ser_op_changes(op, w->shadow));
}

static void pending_expire(struct ser *s, struct ser_word *w, uint64_t now);

bool
ser_word_foreign_pending(struct ser *s, uint32_t wi, const struct ser_who *who,
			 uint64_t now)
{
	pending_expire(s, &s->words[wi], now);
	return !pending_before(&s->words[wi], who);
}

uint64_t
ser_op_apply(const struct ser_op *op, uint64_t old)
{
	switch (op->kind) {
	case SER_OP_CAS:
		return old == op->arg[1] ? op->arg[0] : old;
	case SER_OP_FAA:
		return old + op->arg[0];
	case SER_OP_MCAS:
		/* ConnectX masked compare-and-swap: compare under compare_mask,
		 * replace only the swap_mask bits. */
		if ((old & op->arg[3]) == (op->arg[1] & op->arg[3]))
			return (old & ~op->arg[2]) | (op->arg[0] & op->arg[2]);
		return old;
	case SER_OP_WRITE:
		return op->arg[0];
	default:
		return old;
	}
}

bool
ser_op_changes(const struct ser_op *op, uint64_t old)
{
	return ser_op_apply(op, old) != old;
}

static void
deg_add(struct ser_word *w, uint64_t v, int d)
{
	int free_slot = -1;

	for (int i = 0; i < SER_DEG_SLOTS; i++) {
		if (w->deg_d[i] != 0 && w->deg_v[i] == v) {
			w->deg_d[i] = (int16_t)(w->deg_d[i] + d);
			return;
		}
		if (w->deg_d[i] == 0 && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		w->flags |= WF_DIRTY; /* too many distinct values to track */
		return;
	}
	w->deg_v[free_slot] = v;
	w->deg_d[free_slot] = (int16_t)d;
}

/* Resolve a finished busy period (S4).  Returns true and *v if unique. */
static bool
period_resolve(const struct ser_word *w, uint64_t *v)
{
	int nz = 0, plus = -1, minus = -1;

	for (int i = 0; i < SER_DEG_SLOTS; i++) {
		if (w->deg_d[i] == 0)
			continue;
		nz++;
		if (w->deg_d[i] == 1)
			plus = i;
		else if (w->deg_d[i] == -1)
			minus = i;
		else
			return false;
	}
	if (nz == 2 && plus >= 0 && minus >= 0) {
		if ((w->flags & WF_START_KNOWN) && w->deg_v[minus] != w->start)
			return false;
		*v = w->deg_v[plus];
		return true;
	}
	if (nz != 0)
		return false;
	if (w->flags & WF_ANY_EDGE) {
		if (!(w->flags & WF_START_KNOWN))
			return false; /* a cycle from an unknown start */
		*v = w->start;
		return true;
	}
	/* only ops that left the word unchanged */
	if (w->flags & WF_SELF_MIXED)
		return false;
	if ((w->flags & WF_START_KNOWN) && w->self_orig != w->start)
		return false;
	*v = w->self_orig;
	return true;
}

static void
quiesce(struct ser *s, struct ser_word *w)
{
	uint64_t v;

	if (w->busy || w->pend_cnt)
		return;
	if (w->flags & (WF_DIRTY | WF_NOREWRITE)) {
		/* a NOREWRITE word is never trusted again: nothing decides
		 * on it, and untracked ops may change it at any time */
		if (w->state == W_KNOWN || (w->flags & WF_DIRTY))
			s->c.relearn++;
		w->state = W_UNKNOWN;
	} else if (w->flags & WF_FOLDED) {
		/* the fold already made it known, and every answer agreed */
	} else if (w->flags & WF_ANY_ORIG) {
		if (period_resolve(w, &v)) {
			/* the server's ops moved the value (S8) */
			if (v != w->shadow)
				changed_by(w, SER_NO_OWNER);
			w->state = W_KNOWN;
			w->shadow = v;
			w->committed = v;
			s->c.learned++;
		} else {
			w->state = W_UNKNOWN;
			s->c.relearn++;
		}
	}
	w->flags &= (uint16_t)~(WF_DIRTY | WF_PERIOD | WF_FOLDED | WF_FOLD_SEALED);
	w->fold_dom = SER_MIXED;
	w->tag_n = 0;
	memset(w->deg_d, 0, sizeof(w->deg_d));
	w->refusals = 0;
	w->gate_since = 0;
	w->pend_owner = w->pend_dom = SER_NO_OWNER;
}

/*
 * An unmodelled op goes out: busy, and its place in the word's fold (S4
 * on a lane).  fdom is the ordering domain of a real FAA that may be
 * folded, else SER_MIXED.  The op joins the running fold of its domain,
 * or starts one when everything in flight is of its domain (all of it
 * then runs before it), or ends the fold: a folded word then becomes
 * dirty, its in-flight ops no longer in a known order.
 */
static void
busy_take(struct ser_word *w, uint32_t fdom, uint64_t add)
{
	const bool all_in = w->busy == w->tag_n && (w->tag_n == 0 || w->tag_dom == fdom);

	if (w->busy == 0 && w->pend_cnt == 0 && !(w->flags & WF_DIRTY)) {
		/* a new busy period */
		w->flags &= (uint16_t)~WF_PERIOD;
		memset(w->deg_d, 0, sizeof(w->deg_d));
		if (w->state == W_KNOWN) {
			w->flags |= WF_START_KNOWN;
			w->start = w->shadow;
		}
	}
	w->last_take = 0;
	if (fdom != SER_MIXED) {
		if (w->tag_n == 0)
			w->tag_dom = fdom;
		if (w->tag_dom == fdom && w->tag_n < UINT16_MAX) {
			w->tag_n++;
			w->last_take |= TAKE_TAGGED;
		}
	}
	if (fdom != SER_MIXED && fdom == w->fold_dom && !(w->flags & WF_FOLD_SEALED)) {
		w->fold_sum += add;
		w->last_take |= TAKE_MEMBER;
		if (w->flags & WF_FOLDED) {
			/* known, and this one runs after the folded ones */
			w->shadow += add;
			w->committed = w->shadow;
			changed_by(w, SER_NO_OWNER);
		}
	} else if (fdom != SER_MIXED && all_in && (w->last_take & TAKE_TAGGED) &&
		   !(w->flags & WF_FOLDED)) {
		w->fold_gen++;
		w->fold_dom = fdom;
		w->fold_sum = add;
		w->flags &= (uint16_t)~WF_FOLD_SEALED;
		w->last_take |= TAKE_MEMBER;
	} else {
		w->fold_dom = SER_MIXED;
		if (w->flags & WF_FOLDED)
			w->flags = (uint16_t)((w->flags & ~WF_FOLDED) | WF_DIRTY);
	}
	if (w->pend_cnt)
		w->flags |= WF_DIRTY; /* unmodelled op mixed with modelled writes */
	if (w->busy == UINT16_MAX)
		w->flags |= WF_DIRTY;
	else
		w->busy++;
}

void
ser_word_busy_take(struct ser *s, uint32_t wi)
{
	busy_take(&s->words[wi], SER_MIXED, 0);
}

uint16_t
ser_word_took(const struct ser *s, uint32_t wi, uint16_t *gen, uint64_t *after)
{
	const struct ser_word *w = &s->words[wi];
	uint16_t sf = 0;

	if (w->last_take & TAKE_TAGGED)
		sf |= SF_DOMTAG;
	if (w->last_take & TAKE_MEMBER) {
		sf |= SF_FOLD;
		*gen = w->fold_gen;
		*after = w->fold_sum;
	}
	return sf;
}

void
ser_word_untag(struct ser *s, struct ser_stub *st, bool executed)
{
	struct ser_word *w = &s->words[st->word];

	if ((st->flags & SF_DOMTAG) && w->tag_n)
		w->tag_n--;
	/* a folded add that did not run: the fold counted it */
	if ((st->flags & SF_FOLD) && !executed && st->fold_gen == w->fold_gen &&
	    w->fold_dom != SER_MIXED) {
		w->fold_dom = SER_MIXED;
		w->flags = (uint16_t)((w->flags & ~WF_FOLDED) | WF_DIRTY);
	}
	st->flags &= (uint16_t)~(SF_DOMTAG | SF_FOLD);
}

/*
 * S4 on a lane.  While every real op of a busy period is an FAA of one
 * ordering domain, the server executes them in the order swordd sent
 * them, so one answer tells the value before the period:
 * base = orig + add - (sum of the adds up to and including it), and the
 * value after everything sent is base + fold_sum, without waiting for the
 * word to quiesce (under steady FAA contention it never does).  The word
 * is then known to requests of that domain (busy_before): they run after
 * all of it.  Every later answer of the period must agree on base, or the
 * word is dirty.
 */
void
ser_word_fold_answer(struct ser *s, uint32_t wi, uint16_t gen, uint64_t after,
		     const struct ser_op *op, uint64_t orig)
{
	struct ser_word *w = &s->words[wi];
	const uint64_t base = orig + op->arg[0] - after;

	if (gen != w->fold_gen || w->fold_dom == SER_MIXED ||
	    (w->flags & (WF_DIRTY | WF_NOREWRITE)))
		return;
	if (w->flags & WF_FOLDED) {
		if (base == w->fold_base)
			return;
		w->fold_dom = SER_MIXED;
		w->flags = (uint16_t)((w->flags & ~WF_FOLDED) | WF_DIRTY);
		s->c.fold_mismatch++;
		return;
	}
	if (w->pend_cnt)
		return;
	if (w->state != W_KNOWN || w->shadow != base + w->fold_sum)
		changed_by(w, SER_NO_OWNER);
	w->state = W_KNOWN;
	w->shadow = w->committed = base + w->fold_sum;
	w->fold_base = base;
	w->flags |= WF_FOLDED;
	s->c.learned++;
	s->c.fold_learned++;
}

static void
pending_expire(struct ser *s, struct ser_word *w, uint64_t now)
{
	if (w->pend_cnt && s->prm.pending_expire_tsc &&
	    now - w->pend_since > s->prm.pending_expire_tsc) {
		w->pend_cnt = 0;
		w->pend_gen++;
		w->flags |= WF_DIRTY;
		s->c.pending_expired++;
		quiesce(s, w);
	}
}

static void
pending_take(struct ser_word *w, const struct ser_who *who, uint64_t now, uint64_t nv)
{
	const bool changes = nv != w->shadow;

	if (w->flags & WF_FOLDED)
		w->flags |= WF_FOLD_SEALED;  /* a real op now would run after it */
	if (w->pend_cnt == 0) {
		w->flags &= (uint16_t)~(WF_READ_SINCE | WF_PEND_ORPHAN);
		w->committed = w->shadow;
		w->pend_owner = who->owner;
		w->pend_dom = who->dom;
		w->pend_since = now;
		w->refusals = 0;
		w->gate_since = 0;
	}
	if (w->pend_owner != who->owner)
		w->pend_owner = SER_MIXED;
	if (w->pend_dom != who->dom)
		w->pend_dom = SER_MIXED;
	w->pend_cnt++;
	w->shadow = nv;
	if (changes)
		changed_by(w, who->owner);
}

/* How many ops a word stays shared after the last sign of contention. */
#define SER_SHARED_OPS 256

static void
set_shared(struct ser_word *w)
{
	w->flags |= WF_SHARED;
	w->shared_left = SER_SHARED_OPS;
}

enum ser_decision
ser_word_decide(struct ser *s, uint32_t wi, const struct ser_who *who, const struct ser_op *op,
		uint64_t now, bool may_rewrite, uint64_t *orig, uint64_t *wval,
		bool *pending)
{
	struct ser_word *w = &s->words[wi];
	bool settled;
	uint64_t old, nv;

	*pending = false;
	pending_expire(s, w, now);
	/* S6: an FAA from a second ordering domain can never be refused
	 * honestly while another's write is pending; stop making such writes
	 * on this word for a while instead of dropping its FAAs */
	if (op->kind == SER_OP_FAA) {
		if (w->faa_owner != SER_NO_OWNER && w->faa_owner != who->owner &&
		    w->faa_dom != who->dom)
			set_shared(w);
		else if (who->dom != who->owner && w->faa_dom == who->dom)
			/* two in a row on one lane: the contention that made
			 * it shared is ordered now */
			w->flags &= (uint16_t)~WF_SHARED;
		w->faa_owner = who->owner;
		w->faa_dom = who->dom;
	}
	if ((w->flags & WF_SHARED) && --w->shared_left == 0)
		w->flags &= (uint16_t)~WF_SHARED;
	settled = w->state == W_KNOWN && busy_before(w, who) && now >= w->hold_until &&
		  !(w->flags & (WF_DIRTY | WF_NOREWRITE)) && may_rewrite && !s->drain;
	/* Upgrade drain (s->drain): nothing is settled, so nothing is
	 * decided here, not even a failure.  With another domain's write
	 * un-ACKed that leaves S2's own choice between the real atomic (one
	 * pending write and an op that cannot change committed) and a drop;
	 * otherwise the op passes real, as for any unsettled word (S5). */

	if (!pending_before(w, who)) {
		/* S2: another domain's write is un-ACKed */
		bool real_safe = w->pend_cnt == 1 && !ser_op_changes(op, w->committed);

		if (settled) {
			bool over = w->refusals >= s->prm.max_refusals ||
				    (s->prm.gate_tsc && w->refusals &&
				     now - w->gate_since >= s->prm.gate_tsc);

			/* a reader may have seen the write land */
			const bool seen = w->flags & WF_READ_SINCE;

			if (seen)
				s->c.gated_read_seen++;
			if (!ser_op_changes(op, w->committed) && !seen &&
			    !(over && real_safe)) {
				if (w->refusals == 0)
					w->gate_since = now;
				if (w->refusals < UINT16_MAX)
					w->refusals++;
				*orig = w->committed;
				s->c.gated_failed++;
				return SD_ZERO;
			}
			/* the shadow only once every pending write lands: not
			 * after one's connection ended (it may never land) */
			if (!real_safe && !ser_op_changes(op, w->shadow) &&
			    !(w->flags & WF_PEND_ORPHAN)) {
				*orig = w->shadow;
				s->c.gated_failed++;
				return SD_ZERO;
			}
		}
		if (real_safe) {
			ser_word_busy_take(s, wi);
			w->flags |= WF_DIRTY;
			s->c.gated_real++;
			return SD_PASS_REAL;
		}
		set_shared(w);
		s->c.gated_drop++;
		return SD_DROP;
	}

	if (!settled || ((w->flags & WF_SHARED) && ser_op_changes(op, w->shadow))) {
		busy_take(w, op->kind == SER_OP_FAA && who->adom ? who->adom : SER_MIXED,
			  op->kind == SER_OP_FAA ? op->arg[0] : 0);
		s->c.passed_real_atomic++;
		return SD_PASS_REAL;
	}

	/* S1: decide against the shadow */
	old = w->shadow;
	nv = ser_op_apply(op, old);
	*orig = old;
	if (op->kind == SER_OP_FAA)
		s->c.faa_local++;
	else if (op->kind == SER_OP_CAS ? old == op->arg[1]
		 : (old & op->arg[3]) == (op->arg[1] & op->arg[3]))
		s->c.granted++;
	else
		s->c.failed_local++;
	if (who->dom != who->owner)
		s->c.lane_ordered++;
	if (nv == old)
		return SD_ZERO;
	pending_take(w, who, now, nv);
	*wval = nv;
	*pending = true;
	return SD_WRITE;
}

bool
ser_word_write(struct ser *s, uint32_t wi, const struct ser_who *who, uint64_t v,
	       uint64_t now, bool *pending)
{
	struct ser_word *w = &s->words[wi];

	*pending = false;
	pending_expire(s, w, now);
	if (w->state == W_KNOWN && busy_before(w, who) && !(w->flags & WF_DIRTY) &&
	    now >= w->hold_until && pending_before(w, who)) {
		/* also a write of the value the word holds: it changes
		 * nothing only if it lands before anything else another
		 * domain decides, so it gates like any other until its ACK
		 * (closed fuzzer both-blind-writes-grant-over-held: a WRITE 1
		 * on a word holding 1, dropped by remapping and resent after
		 * another's WRITE 0, ran last while the shadow said 0) */
		pending_take(w, who, now, v);
		*pending = true;
		s->c.release_seen++;
		return true;
	}
	ser_word_busy_take(s, wi);
	w->flags |= WF_DIRTY;
	s->c.write_unmodelled++;
	return false;
}

void
ser_word_real_done(struct ser *s, uint32_t wi, const struct ser_op *op,
		   bool have_orig, uint64_t orig)
{
	struct ser_word *w = &s->words[wi];

	if (have_orig) {
		uint64_t after = ser_op_apply(op, orig);

		w->flags |= WF_ANY_ORIG;
		if (after == orig) {
			if (!(w->flags & WF_SELF_SEEN)) {
				w->flags |= WF_SELF_SEEN;
				w->self_orig = orig;
			} else if (w->self_orig != orig) {
				w->flags |= WF_SELF_MIXED;
			}
		} else {
			w->flags |= WF_ANY_EDGE;
			deg_add(w, orig, -1);
			deg_add(w, after, +1);
		}
	}
	ser_word_busy_done(s, wi, false);
}

void
ser_word_busy_done(struct ser *s, uint32_t wi, bool dirty)
{
	struct ser_word *w = &s->words[wi];

	if (dirty)
		w->flags |= WF_DIRTY;
	if (w->busy)
		w->busy--;
	quiesce(s, w);
}

void
ser_word_pending_done(struct ser *s, uint32_t wi, uint16_t gen, uint64_t wval,
		      bool executed, uint64_t now)
{
	struct ser_word *w = &s->words[wi];

	if (gen != w->pend_gen || w->pend_cnt == 0)
		return; /* abandoned earlier (expiry, reset) */
	w->pend_cnt--;
	/* the expiry bound runs from the oldest write still un-ACKed: a
	 * healthy pipeline is never abandoned */
	w->pend_since = now;
	if (executed)
		w->committed = wval;
	else
		w->flags |= WF_DIRTY;
	if (w->pend_cnt == 0) {
		w->refusals = 0;
		w->gate_since = 0;
		quiesce(s, w);
	}
}

/* A pending write on wi belongs to a connection that ended (S7): it
 * keeps gating until its expiry, but may never land. */
void
ser_word_pending_orphan(struct ser *s, uint32_t wi)
{
	if (s->words[wi].pend_cnt)
		s->words[wi].flags |= WF_PEND_ORPHAN;
}

/* A READ covering words [wi, wi + n) goes to the server (S2). */
void
ser_word_read(struct ser *s, uint32_t wi, uint32_t n)
{
	for (uint32_t i = wi; i < wi + n; i++)
		if (s->words[i].pend_cnt)
			s->words[i].flags |= WF_READ_SINCE;
}

void
ser_word_mark_dirty(struct ser *s, uint32_t wi)
{
	s->words[wi].flags |= WF_DIRTY;
	quiesce(s, &s->words[wi]);
}

void
ser_word_norewrite(struct ser *s, uint32_t wi)
{
	s->words[wi].flags |= WF_NOREWRITE;
	ser_word_mark_dirty(s, wi);
}

static void
hold(struct ser *s, struct ser_word *w, uint64_t now)
{
	if (now + s->orphan_tsc > w->hold_until)
		w->hold_until = now + s->orphan_tsc;
}

void
ser_word_torn(struct ser *s, uint32_t wi, uint64_t now)
{
	s->words[wi].flags |= WF_DIRTY;
	hold(s, &s->words[wi], now);
	quiesce(s, &s->words[wi]);
}

void
ser_word_orphan_busy(struct ser *s, uint32_t wi, uint64_t now)
{
	hold(s, &s->words[wi], now);
	ser_word_busy_done(s, wi, true);
}

/* S2 for an op swordd does not decide that may change the word: it must
 * not be able to run before another connection's blind write lands and
 * be overwritten. */
static bool
may_pass_unowned(const struct ser_word *w, const struct ser_op *op, uint32_t owner)
{
	/* pending writes all of the op's own connection: the server runs
	 * them and the op in that connection's PSN order, whatever it is, so
	 * none can overwrite the op unasked.  (Gating a copy on them dead-
	 * locked: its own later WRITEs cannot land before it runs; closed
	 * fuzzer newlife-copy-gated-by-own-writes.) */
	if (owner != SER_NO_OWNER && owner != SER_MIXED && w->pend_owner == owner)
		return true;
	return !w->pend_cnt || (w->pend_cnt == 1 && op->kind != SER_OP_NONE &&
				!ser_op_changes(op, w->committed));
}

bool
ser_word_replay_allowed(struct ser *s, uint32_t wi, const struct ser_op *op,
			uint32_t owner, uint64_t now)
{
	pending_expire(s, &s->words[wi], now);
	return may_pass_unowned(&s->words[wi], op, owner);
}

void
ser_word_replay_take(struct ser *s, uint32_t wi)
{
	ser_word_busy_take(s, wi);
	s->words[wi].flags |= WF_DIRTY;
}

bool
ser_word_untracked(struct ser *s, uint32_t wi, const struct ser_op *op,
		   uint32_t owner, uint64_t now)
{
	struct ser_word *w = &s->words[wi];

	/* a pending write whose ACK never comes (its QP gone) is given up
	 * before every gate on it, not only at decisions: else an op no one
	 * decides waited on it for good, when no decision on the word came
	 * (closed fuzzer O5, accel-cas-answer-never-held-367b05: a
	 * re-created client's CAS dropped 1,616 times over 20 s) */
	pending_expire(s, w, now);
	if (!may_pass_unowned(w, op, owner))
		return false;
	ser_word_hold_unseen(s, wi, now);
	return true;
}

void
ser_word_hold_unseen(struct ser *s, uint32_t wi, uint64_t now)
{
	/* S7: its effect is invisible; relearn once it must have run */
	hold(s, &s->words[wi], now);
	ser_word_mark_dirty(s, wi);
}
