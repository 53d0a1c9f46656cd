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
 * flight; pend_conn = the one connection owning all pending writes.
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
 *     lands: an honest read), or orig = shadow if the op would not change
 *     a word holding shadow (A's write is already ordered on A's
 *     connection; this is the value every later reader sees).  Failures
 *     change nothing, so they cannot be lost or lose anything;
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
 *   from two connections, is marked shared for a while: value-changing
 *   ops on it go real (the server serializes them), only failures are
 *   still answered locally.  Ordering all of a word's ops on one server
 *   connection (remapping, F3) is what removes this limit.
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
#define WF_PERIOD (WF_START_KNOWN | WF_SELF_MIXED | WF_ANY_EDGE | WF_ANY_ORIG | WF_SELF_SEEN)

void
ser_word_reset(struct ser_word *w)
{
	memset(w, 0, sizeof(*w));
	w->pend_conn = SER_NO_OWNER;
	w->faa_conn = SER_NO_OWNER;
	w->chg_owner = SER_NO_OWNER;
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

bool
ser_word_settled_for(const struct ser *s, uint32_t wi, uint32_t ci, uint64_t now)
{
	const struct ser_word *w = &s->words[wi];

	return w->state == W_KNOWN && w->busy == 0 && now >= w->hold_until &&
	       !(w->flags & (WF_DIRTY | WF_NOREWRITE)) &&
	       (w->pend_cnt == 0 || w->pend_conn == ci);
}

bool
ser_word_decidable(const struct ser *s, uint32_t wi, uint32_t ci,
		   const struct ser_op *op, uint64_t now)
{
	const struct ser_word *w = &s->words[wi];

	return ser_word_settled_for(s, wi, ci, now) &&
	       !((w->flags & WF_SHARED) && ser_op_changes(op, w->shadow));
}

bool
ser_word_foreign_pending(const struct ser *s, uint32_t wi, uint32_t ci)
{
	const struct ser_word *w = &s->words[wi];

	return w->pend_cnt && w->pend_conn != ci;
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
	w->flags &= (uint8_t)~(WF_DIRTY | WF_PERIOD);
	memset(w->deg_d, 0, sizeof(w->deg_d));
	w->refusals = 0;
	w->gate_since = 0;
	w->pend_conn = SER_NO_OWNER;
}

void
ser_word_busy_take(struct ser *s, uint32_t wi)
{
	struct ser_word *w = &s->words[wi];

	(void)s;
	if (w->busy == 0 && w->pend_cnt == 0 && !(w->flags & WF_DIRTY)) {
		/* a new busy period */
		w->flags &= (uint8_t)~WF_PERIOD;
		memset(w->deg_d, 0, sizeof(w->deg_d));
		if (w->state == W_KNOWN) {
			w->flags |= WF_START_KNOWN;
			w->start = w->shadow;
		}
	}
	if (w->pend_cnt)
		w->flags |= WF_DIRTY; /* unmodelled op mixed with modelled writes */
	if (w->busy == UINT16_MAX)
		w->flags |= WF_DIRTY;
	else
		w->busy++;
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
pending_take(struct ser_word *w, uint32_t ci, uint64_t now, uint64_t nv)
{
	if (w->pend_cnt == 0) {
		w->committed = w->shadow;
		w->pend_conn = ci;
		w->pend_since = now;
		w->refusals = 0;
		w->gate_since = 0;
	}
	w->pend_cnt++;
	w->shadow = nv;
	changed_by(w, ci);
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
ser_word_decide(struct ser *s, uint32_t wi, uint32_t ci, const struct ser_op *op,
		uint64_t now, bool may_rewrite, uint64_t *orig, uint64_t *wval,
		bool *pending)
{
	struct ser_word *w = &s->words[wi];
	bool settled;
	uint64_t old, nv;

	*pending = false;
	pending_expire(s, w, now);
	/* S6: an FAA from a second connection can never be refused
	 * honestly while another's write is pending; stop making such writes
	 * on this word for a while instead of dropping its FAAs */
	if (op->kind == SER_OP_FAA) {
		if (w->faa_conn != SER_NO_OWNER && w->faa_conn != ci)
			set_shared(w);
		w->faa_conn = ci;
	}
	if ((w->flags & WF_SHARED) && --w->shared_left == 0)
		w->flags &= (uint8_t)~WF_SHARED;
	settled = w->state == W_KNOWN && w->busy == 0 && now >= w->hold_until &&
		  !(w->flags & (WF_DIRTY | WF_NOREWRITE)) && may_rewrite;

	if (w->pend_cnt && w->pend_conn != ci) {
		/* S2: another connection's write is un-ACKed */
		bool real_safe = w->pend_cnt == 1 && !ser_op_changes(op, w->committed);

		if (settled) {
			bool over = w->refusals >= s->prm.max_refusals ||
				    (s->prm.gate_tsc && w->refusals &&
				     now - w->gate_since >= s->prm.gate_tsc);

			if (!ser_op_changes(op, w->committed) && !(over && real_safe)) {
				if (w->refusals == 0)
					w->gate_since = now;
				if (w->refusals < UINT16_MAX)
					w->refusals++;
				*orig = w->committed;
				s->c.gated_failed++;
				return SD_ZERO;
			}
			if (!real_safe && !ser_op_changes(op, w->shadow)) {
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
		ser_word_busy_take(s, wi);
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
	if (nv == old)
		return SD_ZERO;
	pending_take(w, ci, now, nv);
	*wval = nv;
	*pending = true;
	return SD_WRITE;
}

bool
ser_word_write(struct ser *s, uint32_t wi, uint32_t ci, uint64_t v, uint64_t now,
	       bool *pending)
{
	struct ser_word *w = &s->words[wi];

	*pending = false;
	pending_expire(s, w, now);
	if (w->state == W_KNOWN && w->busy == 0 && !(w->flags & WF_DIRTY) &&
	    now >= w->hold_until && (w->pend_cnt == 0 || w->pend_conn == ci)) {
		if (v != w->shadow) {
			pending_take(w, ci, now, v);
			*pending = true;
		}
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
ser_word_orphan_busy(struct ser *s, uint32_t wi, uint64_t now)
{
	hold(s, &s->words[wi], now);
	ser_word_busy_done(s, wi, true);
}

bool
ser_word_untracked(struct ser *s, uint32_t wi, const struct ser_op *op,
		   uint64_t now)
{
	struct ser_word *w = &s->words[wi];

	/* S2 still applies: it must not be able to run before another
	 * connection's blind write lands and be overwritten */
	if (w->pend_cnt && (w->pend_cnt > 1 || op->kind == SER_OP_NONE ||
			    ser_op_changes(op, w->committed)))
		return false;
	/* S7: its effect is invisible; relearn once it must have run */
	hold(s, w, now);
	ser_word_mark_dirty(s, wi);
	return true;
}
