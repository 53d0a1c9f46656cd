/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_resp.c — the response path of remapping: a lane's answers mapped
 * back to the clients that asked, like a NAT.
 *
 *   find       the lane the response is addressed to (its owner's client
 *              IP and QPN); not a lane → the connection's own answer:
 *              passed (its MSN noted, for a later binding).
 *   check      ICRC: a lane response is re-addressed and re-signed, so a
 *              bad one is dropped (the client would drop it anyway).
 *   expand     everything the response acknowledges before its own PSN:
 *              each client with WRITE/SEND PSNs in that range gets one ACK
 *              at its highest one, unless a READ or atomic of its own
 *              before it is still unanswered (an answer lost between the
 *              server and swordd: the client must retransmit it, so it is
 *              not acknowledged past it, I3).
 *   own        the response's own PSN: mapped in place to its client's
 *              QPN, PSN and MSN; ACKs, ATOMIC ACKs, each READ response
 *              packet and NAKs alike.
 *
 * NAKs.  A sequence NAK or RNR NAK at lane PSN L acknowledges everything
 * before L; L's client gets the NAK; the lane recovers (remap_req.c): its
 * server discards everything after L until L comes again.  A remote
 * access, invalid request or operational NAK breaks the server's QP: the
 * lane is closed; its clients lose what they had outstanding there and
 * reconnect.
 *
 * Duplicates.  A server answers a retransmitted WRITE with an ACK of its
 * latest PSN, which may belong to another client; the stub of the
 * retransmitted PSN is flagged (RS_REACK) so that its own client gets its
 * ACK again.  ATOMIC ACKs and READ responses to duplicates are mapped
 * like originals.
 */
#include <string.h>

#include "remap_internal.h"

#define ACC_MAX 64

/* What one lane response acknowledges, per client. */
struct acc {
	uint32_t conn;
	uint32_t cpsn, cmsn;
	uint8_t has, blocked;
};

struct resp_ctx {
	struct remap *r;
	struct rmp_lane *l;
	uint8_t *f;
	struct roce_pkt *p;
	uint8_t syndrome;
	struct remap_emit *emit;
	uint32_t emit_cap, *n_emit;
	struct acc acc[ACC_MAX];
	uint32_t n_acc;
};

void
rmp_release(struct rmp_lane *l, struct rmp_stub *st)
{
	if (st->kind == RK_ACKABLE || !(st->flags & RS_ENDS_MSG) ||
	    (st->flags & RS_RELEASED))
		return;
	st->flags |= RS_RELEASED;
	if (l->rd_out)
		l->rd_out--;
}

static struct acc *
acc_of(struct resp_ctx *x, uint32_t conn)
{
	for (uint32_t i = 0; i < x->n_acc; i++)
		if (x->acc[i].conn == conn)
			return &x->acc[i];
	if (x->n_acc == ACC_MAX) {
		x->r->c.emit_full++;
		return NULL;
	}
	x->acc[x->n_acc] = (struct acc){ .conn = conn };
	return &x->acc[x->n_acc++];
}

/* Lane PSNs [una, upto) are done: note what each client may be told. */
static void
expand(struct resp_ctx *x, uint32_t upto)
{
	struct remap *r = x->r;
	struct rmp_lane *l = x->l;

	for (uint32_t q = l->una; roce_psn_diff(q, upto) < 0; q = roce_psn_add(q, 1)) {
		struct rmp_stub *st = rmp_stub_get(r, l, q);
		struct rmp_conn *rcn;
		struct acc *a;

		if (st == NULL)
			continue;
		rmp_release(l, st);   /* a READ/atomic before: the server is done */
		if (rmp_stub_client(r, st, &rcn) == NULL || (a = acc_of(x, st->conn)) == NULL)
			continue;
		if (st->kind != RK_ACKABLE) {
			/* (a READ placed anew whose client an earlier placement
			 * answered blocks nothing: it asks no more) */
			if (!(st->flags & RS_ANSWERED) &&
			    roce_psn_diff(st->cpsn, rcn->acked) >= 0) {
				a->blocked = 1;
				/* done, its answer lost: the client will ask again */
				if (st->kind == RK_ATOMIC && !l->unans_set)
					rmp_unans_rescan(r, l, q, upto);
			}
			continue;
		}
		if (!a->blocked) {
			a->has = 1;
			a->cpsn = st->cpsn;
			a->cmsn = st->cmsn;
		}
	}
	if (roce_psn_diff(upto, l->una) > 0)
		l->una = upto;
}

static void
emit_aeth(struct resp_ctx *x, struct rc_conn *c, struct rmp_conn *rcn, uint32_t cpsn,
	  uint8_t syndrome, uint32_t msn)
{
	if (*x->n_emit >= x->emit_cap) {
		x->r->c.emit_full++;
		return;
	}
	if (rmp_build_aeth(x->r, x->l, c, rcn, cpsn, syndrome, msn, NULL,
			   &x->emit[*x->n_emit]) == 0)
		(*x->n_emit)++;
}

static void
note_acked(struct rmp_conn *rcn, uint32_t cpsn)
{
	if (roce_psn_diff(roce_psn_add(cpsn, 1), rcn->acked) > 0)
		rcn->acked = roce_psn_add(cpsn, 1);
}

/* Send each client its ACK, except skip_conn (answered in place). */
static void
emit_acks(struct resp_ctx *x, uint32_t skip_conn)
{
	const uint8_t syn = roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID);

	for (uint32_t i = 0; i < x->n_acc; i++) {
		struct acc *a = &x->acc[i];
		struct rmp_conn *rcn = &x->r->conns[a->conn];
		struct rc_conn *c = rc_at(x->r->rc, a->conn);

		if (!a->has || a->conn == skip_conn || c == NULL)
			continue;
		emit_aeth(x, c, rcn, a->cpsn, syn, a->cmsn);
		note_acked(rcn, a->cpsn);
		x->r->c.acks_expanded++;
	}
}

/*
 * Is a READ or atomic of rcn's before client PSN cpsn unanswered on lane l
 * (placed anew after a go-back-N: lane order is no longer the client's)?
 * An ACK at cpsn would acknowledge it (I3).  Walks its reverse index back
 * to its binding or to what the index no longer holds (answered long ago).
 */
static bool
unanswered_before(struct remap *r, struct rmp_lane *l, uint32_t conn, const struct rmp_conn *rcn,
		  uint32_t cpsn)
{
	uint32_t q = cpsn;

	for (uint32_t k = 0; k <= r->crev_mask; k++) {
		const struct rmp_rev *rv;
		const struct rmp_stub *st;

		q = roce_psn_add(q, ROCE_PSN_MASK);
		/* before its binding, or answered to it already (a READ
		 * placed anew after an earlier placement answered it) */
		if (roce_psn_diff(q, rcn->bind_psn) < 0 || roce_psn_diff(q, rcn->acked) < 0)
			return false;
		rv = &rcn->rev[q & r->crev_mask];
		if (!rv->valid || rv->cpsn != q)
			return false;
		if (rv->kind == RK_ACKABLE)
			continue;
		st = rmp_stub_get(r, l, rv->lpsn);
		if (st != NULL && st->conn == conn && st->inc == rcn->inc && st->cpsn == q &&
		    !(st->flags & RS_ANSWERED))
			return true;
	}
	return false;
}

/*
 * Answered duplicates whose client retransmitted them: ACK them again,
 * one ACK per client at its highest such PSN (the lane's order of them
 * is not the client's once a READ was placed anew: one at a time, the
 * MSNs went back), and none past a READ or atomic of its still
 * unanswered: that client retransmits again after it is answered (issue
 * #29: an owner's go-back-N got ACK 104 with MSN 5 and then ACK 103 with
 * MSN 4, both past its READ 102 placed anew).
 */
static void
reack(struct resp_ctx *x, uint32_t upto_incl)
{
	struct remap *r = x->r;
	struct rmp_lane *l = x->l;
	const uint8_t syn = roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID);
	struct reack_best { uint32_t conn, cpsn, cmsn; } best[ACC_MAX];
	uint32_t n = 0, q = upto_incl;

	for (uint32_t k = 0; l->reack && k <= r->ring_mask; k++, q = roce_psn_add(q, ROCE_PSN_MASK)) {
		struct rmp_stub *st = rmp_stub_get(r, l, q);
		struct rmp_conn *rcn;
		uint32_t i;

		if (st == NULL || !(st->flags & RS_REACK))
			continue;
		st->flags &= (uint8_t)~RS_REACK;
		l->reack--;
		if (rmp_stub_client(r, st, &rcn) == NULL ||
		    unanswered_before(r, l, st->conn, rcn, st->cpsn))
			continue;
		for (i = 0; i < n && best[i].conn != st->conn; i++)
			;
		if (i == n) {
			if (n == ACC_MAX) {
				r->c.emit_full++;
				continue;
			}
			best[n++] = (struct reack_best){ st->conn, st->cpsn, st->cmsn };
		} else if (roce_psn_diff(st->cpsn, best[i].cpsn) > 0) {
			best[i].cpsn = st->cpsn;
			best[i].cmsn = st->cmsn;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct rmp_conn *rcn = &r->conns[best[i].conn];
		struct rc_conn *c = rc_at(r->rc, best[i].conn);

		if (c == NULL)
			continue;
		emit_aeth(x, c, rcn, best[i].cpsn, syn, best[i].cmsn);
		note_acked(rcn, best[i].cpsn);
		r->c.reacked++;
	}
}

/*
 * A READ or atomic answered late (its first answer was lost, the client
 * asked again): the client's WRITE/SENDs the lane completed after it were
 * held back from it (expand); acknowledge them now, up to its next
 * unanswered READ or atomic, instead of waiting for its timeout.
 */
static void
catch_up(struct resp_ctx *x, const struct rmp_stub *answered)
{
	struct remap *r = x->r;
	struct rmp_lane *l = x->l;
	const struct rmp_stub *best = NULL;
	struct rmp_conn *rcn = NULL;
	struct rc_conn *c;

	for (uint32_t q = roce_psn_add(answered->lpsn, 1); roce_psn_diff(q, l->una) < 0;
	     q = roce_psn_add(q, 1)) {
		const struct rmp_stub *st = rmp_stub_get(r, l, q);

		if (st == NULL || st->conn != answered->conn || st->inc != answered->inc)
			continue;
		if (st->kind != RK_ACKABLE) {
			if (!(st->flags & RS_ANSWERED))
				break;
			continue;
		}
		best = st;
	}
	if (best == NULL || (c = rmp_stub_client(r, best, &rcn)) == NULL ||
	    roce_psn_diff(best->cpsn, rcn->acked) < 0)
		return;
	emit_aeth(x, c, rcn, best->cpsn,
		  roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID), best->cmsn);
	note_acked(rcn, best->cpsn);
	r->c.acks_expanded++;
}

/* The response becomes its client's: addresses, QPN, PSN, MSN. */
static __rte_always_inline void
rewrite_to_client(struct remap *r, uint8_t *f, struct roce_pkt *p, const struct rc_conn *c,
		  const struct rmp_conn *rcn, uint32_t cpsn, uint32_t msn)
{
	rmp_set_dst(f, p, rcn->mac, c->cl_ip);
	roce_set_qpn_psn(f, p, c->cl_qpn, cpsn);
	p->qpn = c->cl_qpn;
	p->psn = cpsn;
	if (roce_has(p->oi, ROCE_HDR_AETH)) {
		/* the MSN only: the syndrome byte stays as the server sent it */
		uint8_t *aeth = f + p->bth_off + p->oi->off[ROCE_HDR_AETH];

		roce_st32(aeth, ((uint32_t)aeth[0] << 24) | (msn & ROCE_PSN_MASK));
	}
	if (!r->prm.defer_resign)
		rmp_resign(f, p);
	r->c.resp_mapped++;
	rc_note_resp(r->rc, c);   /* atomic replacement looks it up next */
}

static enum remap_verdict
map_own(struct resp_ctx *x, struct rc_conn *c, struct rmp_conn *rcn, uint32_t cpsn,
	uint32_t msn)
{
	rewrite_to_client(x->r, x->f, x->p, c, rcn, cpsn, msn);
	return REMAP_MODIFIED;
}

static enum remap_verdict
resp_ack(struct resp_ctx *x, uint32_t L)
{
	struct remap *r = x->r;
	struct rmp_lane *l = x->l;
	struct rmp_stub *st;
	struct rmp_conn *rcn;
	struct rc_conn *c;
	struct acc *a = NULL;

	if (roce_psn_diff(L, l->una) < 0) {   /* a duplicate's answer */
		reack(x, L);
		return REMAP_DROP;
	}
	expand(x, roce_psn_add(L, 1));
	st = rmp_stub_get(r, l, L);
	c = st ? rmp_stub_client(r, st, &rcn) : NULL;
	if (c != NULL)
		for (uint32_t i = 0; i < x->n_acc; i++)
			if (x->acc[i].conn == st->conn && x->acc[i].has &&
			    x->acc[i].cpsn == st->cpsn)
				a = &x->acc[i];
	emit_acks(x, a ? a->conn : RMP_NONE);
	if (l->reack)
		reack(x, L);
	if (a == NULL)
		return REMAP_DROP;
	if (rcn->waiting && roce_psn_add(a->cpsn, 1) == rcn->next) {
		/* it may be asked to resend now: its ACK goes first, emitted
		 * like the NAK (emitted frames leave before this one) */
		emit_aeth(x, c, rcn, a->cpsn,
			  roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID), a->cmsn);
		note_acked(rcn, a->cpsn);
		return REMAP_DROP;
	}
	note_acked(rcn, a->cpsn);
	return map_own(x, c, rcn, a->cpsn, a->cmsn);
}

static enum remap_verdict
resp_atomic_ack(struct resp_ctx *x, uint32_t L, struct rmp_stub *st)
{
	struct rmp_conn *rcn;
	struct rc_conn *c;
	struct rmp_rev *rv;

	if (st->kind != RK_ATOMIC) {
		x->r->c.resp_unknown_psn++;
		return REMAP_DROP;
	}
	if (roce_psn_diff(L, x->l->una) >= 0) {
		expand(x, L);
		emit_acks(x, RMP_NONE);
		x->l->una = roce_psn_add(L, 1);
	} else if (!(st->flags & RS_ANSWERED)) {
		catch_up(x, st);
	}
	st->flags |= RS_ANSWERED;
	rmp_release(x->l, st);
	if (x->l->unans_set && x->l->unans_first == L)
		rmp_unans_rescan(x->r, x->l, roce_psn_add(L, 1), x->l->una);
	if ((c = rmp_stub_client(x->r, st, &rcn)) == NULL) {
		x->r->c.resp_orphan++;
		return REMAP_DROP;
	}
	/* its result, for a retransmission swordd then answers itself */
	rv = rmp_rev_of(x->r, rcn, st);
	if (rv != NULL) {
		rv->orig = roce_ld64(x->f + x->p->bth_off + ROCE_BTH_LEN + ROCE_AETH_LEN);
		rv->answered = 1;
	}
	note_acked(rcn, st->cpsn);
	return map_own(x, c, rcn, st->cpsn, st->cmsn);
}

/*
 * A READ response packet ends its message (LAST, ONLY) exactly at the
 * last PSN of the READ's span, wherever it starts (a requester may resume
 * a READ from a later PSN, and the server's response then starts there).
 * Spans are counted in [atomic] pmtu bytes: where that is not the path
 * MTU, a response runs past its span, onto PSNs of other requests (or
 * ends before it), and the first packet that does not fit says so.
 */
static inline bool
read_span_fits(const struct roce_pkt *p, const struct rmp_stub *st)
{
	return !(p->oi->flags & ROCE_F_LAST) == !(st->flags & RS_ENDS_MSG);
}

/*
 * A READ response packet that does not fit the span its READ was given,
 * or that lands on another request's lane PSN: the server's READ took
 * another number of PSNs than swordd counted, so its QP expects another
 * PSN than the lane's next.  Counted short (a path MTU below the one
 * spans are counted in), the server takes the lane's next requests for
 * duplicates: it does not execute them and ACKs them with its latest
 * PSN, which would tell their clients they were done.  Counted long, it
 * NAKs the next one as out of sequence, and the clients' resends never
 * fit.  Nothing mends the lane's PSN space behind requests already sent:
 * it closes (its clients are told, their QPs fail and reconnect, nothing
 * is acknowledged that did not run), and the lanes after it count in
 * the path MTU this packet shows (rmp_learn_pmtu took it from a FIRST or
 * MIDDLE packet; an ONLY or LAST before its span's end says it is
 * larger).
 */
static enum remap_verdict
read_span_broken(struct resp_ctx *x, const struct rmp_stub *st)
{
	struct remap *r = x->r;

	r->c.read_span_mismatch++;
	if (st->kind == RK_READ && (x->p->oi->flags & ROCE_F_LAST) && !(st->flags & RS_ENDS_MSG))
		rmp_pmtu_too_small(r, x->l->server);
	rmp_lane_close(r, x->l);
	return REMAP_DROP;
}

static enum remap_verdict
resp_read(struct resp_ctx *x, uint32_t L, struct rmp_stub *st)
{
	const uint32_t fl = x->p->oi->flags;
	struct rmp_conn *rcn;
	struct rc_conn *c;

	if (st->kind != RK_READ || !read_span_fits(x->p, st))
		return read_span_broken(x, st);
	if (roce_psn_diff(L, x->l->una) >= 0) {
		/* everything up to L is done (a server answers in PSN order),
		 * also when response packets before it were lost: a MIDDLE or
		 * LAST after a lost FIRST moved una past another READ's or an
		 * atomic's end without giving its responder resource back,
		 * for good (fuzz_remap, regress-read-middle-skips) */
		expand(x, roce_psn_add(L, 1));
		emit_acks(x, RMP_NONE);
		st->flags |= RS_ANSWERED;
	} else if ((fl & ROCE_F_LAST) && !(st->flags & RS_ANSWERED)) {
		st->flags |= RS_ANSWERED;
		catch_up(x, st);
	}
	if ((c = rmp_stub_client(x->r, st, &rcn)) == NULL) {
		x->r->c.resp_orphan++;
		return REMAP_DROP;
	}
	if (fl & ROCE_F_LAST)
		note_acked(rcn, st->cpsn);
	return map_own(x, c, rcn, st->cpsn, st->cmsn);
}

/* A fatal NAK at L: the lane's server QP is in error.  It goes to L's
 * client (its QP fails, as it would without swordd); the lane moves onto
 * a rider's own QP and the others resend there (remap_move.c), or, with
 * nobody to host it, closes.  Emitted frames (the asks, a no-op WRITE
 * for L) leave before the NAK. */
static enum remap_verdict
resp_fatal(struct resp_ctx *x, uint32_t L, struct rmp_stub *st, struct rc_conn *c,
	   struct rmp_conn *rcn)
{
	struct remap *r = x->r;
	const uint32_t cpsn = st ? st->cpsn : 0;
	const uint32_t msn = st == NULL ? 0 : (st->flags & RS_ENDS_MSG)
		? roce_psn_add(st->cmsn, ROCE_PSN_MASK) : st->cmsn;

	r->c.naks_fatal++;
	if (rmp_lane_move(r, x->l, L, c ? st->conn : RMP_NONE))
		rmp_prompt(r, x->l, x->emit, x->emit_cap, x->n_emit, true);
	else
		rmp_lane_close(r, x->l);
	if (c == NULL) {
		r->c.resp_orphan++;
		return REMAP_DROP;
	}
	rcn->dead_told = 1;   /* this NAK tells it (rmp_tell_dead) */
	return map_own(x, c, rcn, cpsn, msn);
}

static enum remap_verdict
resp_nak(struct resp_ctx *x, uint32_t L, enum roce_aeth_kind kind, uint8_t code)
{
	struct remap *r = x->r;
	struct rmp_lane *l = x->l;
	struct rmp_stub *st;
	struct rmp_conn *rcn;
	struct rc_conn *c;
	const bool recover = kind == ROCE_AETH_RNR_NAK || code == ROCE_NAK_PSN_SEQ_ERR;

	if (roce_psn_diff(L, l->una) < 0) {
		r->c.resp_unknown_psn++;
		return REMAP_DROP;
	}
	expand(x, L);
	emit_acks(x, RMP_NONE);
	st = rmp_stub_get(r, l, L);
	c = st ? rmp_stub_client(r, st, &rcn) : NULL;
	if (recover) {
		if (kind == ROCE_AETH_RNR_NAK)
			r->c.naks_rnr++;
		else
			r->c.naks_seq++;
		l->recovering = 1;
		l->resend = L;
		/* the client that owns L is told by this very NAK */
		l->prompted = L;
		l->prompted_set = c != NULL;
		if (c == NULL)
			rmp_prompt(r, l, x->emit, x->emit_cap, x->n_emit, true);
		if (c == NULL) {
			r->c.resp_orphan++;
			return REMAP_DROP;
		}
		return map_own(x, c, rcn, st->cpsn, (st->flags & RS_ENDS_MSG)
			       ? roce_psn_add(st->cmsn, ROCE_PSN_MASK) : st->cmsn);
	}
	return resp_fatal(x, L, st, c, rcn);
}

void
rmp_unans_rescan(struct remap *r, struct rmp_lane *l, uint32_t from, uint32_t upto)
{
	l->unans_set = 0;
	for (uint32_t q = from; roce_psn_diff(q, upto) < 0; q = roce_psn_add(q, 1)) {
		struct rmp_stub *st = rmp_stub_get(r, l, q);
		struct rmp_conn *rcn;

		if (st == NULL || st->kind != RK_ATOMIC || (st->flags & RS_ANSWERED) ||
		    rmp_stub_client(r, st, &rcn) == NULL)
			continue;
		l->unans_set = 1;
		l->unans_first = q;
		l->atom_since = 0;
		for (uint32_t k = q; roce_psn_diff(k, l->next) < 0; k = roce_psn_add(k, 1)) {
			const struct rmp_stub *s2 = rmp_stub_get(r, l, k);

			l->atom_since += s2 != NULL && s2->kind != RK_ACKABLE &&
					 (s2->flags & RS_FIRST);
		}
		return;
	}
}

/* Does the client of stub st still want lane PSN st->lpsn sent again? */
static bool
still_wanted(struct remap *r, const struct rmp_stub *st, struct rmp_conn **rcn)
{
	if (rmp_stub_client(r, st, rcn) == NULL)
		return false;
	if (st->kind == RK_ATOMIC)
		return !(st->flags & RS_ANSWERED);
	/* a READ placed again (or anything) the client has its answer for */
	return roce_psn_diff(st->cpsn, (*rcn)->acked) >= 0;
}

/*
 * A recovering lane's server waits for lane PSN resend.  Its client is
 * asked to send it again (a sequence NAK in its own PSN space) once its
 * answers before it are in.  A PSN nobody will send again (its client is
 * gone, or already has its answer: a READ placed twice) is filled by a
 * zero-length WRITE of swordd's own, so the lane never waits forever.
 */
void
rmp_prompt(struct remap *r, struct rmp_lane *l, struct remap_emit *emit,
	   uint32_t emit_cap, uint32_t *n_emit, bool fill)
{
	struct resp_ctx x;

	/* not an initializer: it would clear the whole accumulator array */
	x.r = r;
	x.l = l;
	x.emit = emit;
	x.emit_cap = emit_cap;
	x.n_emit = n_emit;
	x.n_acc = 0;

	for (uint32_t k = 0; k < 64 && l->recovering; k++) {
		struct rmp_stub *st = rmp_stub_get(r, l, l->resend);
		struct rmp_conn *rcn;
		struct rc_conn *c;

		if (st != NULL && still_wanted(r, st, &rcn)) {
			if (l->prompted_set && l->prompted == l->resend)
				return;   /* asked already */
			if (rcn->acked != st->cpsn) {
				return;   /* answers to it are still due: asked on a later one */
			}
			c = rc_at(r->rc, st->conn);
			emit_aeth(&x, c, rcn, st->cpsn,
				  roce_syndrome_make(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR),
				  (st->flags & RS_ENDS_MSG) ? roce_psn_add(st->cmsn, ROCE_PSN_MASK)
							    : st->cmsn);
			l->prompted = l->resend;
			l->prompted_set = 1;
			r->c.resends_asked++;
			return;
		}
		if (!fill || *n_emit >= emit_cap ||
		    rmp_build_filler(l, l->resend, &emit[*n_emit]) != 0)
			return;
		(*n_emit)++;
		r->c.holes_filled++;
		if (st != NULL) {
			rmp_release(l, st);
			st->inc = 0;      /* its answer is nobody's */
		}
		l->resend = roce_psn_add(l->resend, 1);
		if (roce_psn_diff(l->resend, l->next) >= 0)
			l->recovering = 0;
	}
}

static struct rmp_lane *
lane_of(struct remap *r, const struct rmp_server *sv, const struct roce_pkt *p,
	uint64_t now)
{
	for (uint32_t i = 0; i < sv->n_lanes; i++) {
		struct rmp_lane *l = &r->lanes[sv->first_lane + i];

		const struct rc_conn *now_c;

		if (l->cl_ip != p->dst_ip4 || l->cl_qpn != p->qpn || l->srv_qpn == 0)
			continue;
		/* a closed lane's late answers are dropped, unless the QPN lives
		 * again as another connection (a reconnect): then they are its */
		if (!l->open && (now_c = rc_find_resp(r->rc, p->src_ip4, p->dst_ip4,
						      p->qpn)) != NULL &&
		    now_c->incarnation != l->owner_inc)
			continue;
		/* the same once the owner's QP, re-created out of band (no
		 * pairing yet: its answers pair it, resp_direct), has had
		 * the time a late answer of the lane could take */
		if (!l->open && l->owner_reborn &&
		    now - l->reborn_tsc >= r->prm.resend_timeout_tsc)
			continue;
		return l;
	}
	return NULL;
}

/*
 * A drained connection found no open lane to bind to (it closed while the
 * connection drained): its own server QP waits for drain_psn, which
 * swordd dropped with everything after it.  It is asked to resend from
 * there, to its own QP, as a lane asks (an RNR NAK with the shortest
 * timer): a client with no retransmit timer (rxe over the RDMA CM) would
 * otherwise wait forever.  From its own QP's answer, the template at
 * hand; after it (a NAK acknowledges all before it: this answer overtaken
 * would be lost to the client).
 */
static void
ask_drained_back(const struct rmp_conn *rcn, const uint8_t *f, const struct roce_pkt *p,
		 struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	struct remap_emit *e;
	struct roce_pkt op;
	int n;

	if (*n_emit >= emit_cap)
		return;
	e = &emit[*n_emit];
	n = roce_build_ack(e->buf, sizeof(e->buf), f, p, rcn->drain_psn,
			   roce_syndrome_make(ROCE_AETH_RNR_NAK, 1), rcn->msn, false, 0, &op);
	if (n < 0)
		return;
	e->len = (uint32_t)n;
	e->to_server = false;
	e->after = true;
	e->unsigned_icrc = false;
	(*n_emit)++;
}

/* Not a lane: the connection's own answer.  Its MSN is what the client
 * expects next if it binds now. */
static void
resp_direct(struct remap *r, const struct rmp_server *sv, uint8_t *f,
	    const struct roce_pkt *p, bool icrc_ok, uint64_t now, struct remap_emit *emit,
	    uint32_t emit_cap, uint32_t *n_emit)
{
	struct rc_conn *c;
	struct rmp_conn *rcn;
	uint32_t psn = p->psn;

	/* only a verified answer pairs, moves the window or gives the MSN: a
	 * corrupted PSN or MSN would bind the client at the wrong place or
	 * with the wrong MSN (fuzz_remap, regress-direct-bad-icrc) */
	if (!icrc_ok && !roce_icrc_verify(f, p))
		return;
	if (sv->keep_conns)
		rmp_keep_response(r, sv, f, p, now);
	c = rc_find_resp(r->rc, p->src_ip4, p->dst_ip4, p->qpn);
	if (c == NULL || !roce_has(p->oi, ROCE_HDR_AETH))
		return;
	rcn = rmp_conn_of(r, c);
	/* the newest answer's: a late duplicate of an older one must not
	 * take the MSN back */
	/* a NAK's MSN counts what completed before its PSN */
	if (roce_syndrome_kind(roce_get_syndrome(f, p)) != ROCE_AETH_ACK)
		psn = roce_psn_add(psn, ROCE_PSN_MASK);
	if (rcn->state == RC_DIRECT &&
	    (!rcn->msn_known || roce_psn_diff(psn, rcn->msn_psn) >= 0)) {
		rcn->msn = roce_get_msn(f, p);
		rcn->msn_psn = psn;
		rcn->msn_known = 1;
	}
	/* draining to bind, and this was the answer it waited for: bound and
	 * queued.  It is asked to resend what was dropped by the lane's next
	 * frame or remap_tick, after this answer: the RNR NAK acknowledges
	 * everything before it, and emitted frames leave before this one (a
	 * READ response or ATOMIC ACK overtaken by it would be lost to the
	 * client) */
	if (rcn->state == RC_DIRECT && rmp_drained(rcn) &&
	    rmp_bind_drained(r, c, rcn, (int)(sv - r->servers)) == NULL)
		ask_drained_back(rcn, f, p, emit, emit_cap, n_emit);
}

static enum remap_verdict
resp_lane(struct resp_ctx *x)
{
	struct roce_pkt *p = x->p;
	const uint32_t L = p->psn;
	struct rmp_lane *l = x->l;
	struct rmp_stub *st;
	struct roce_pkt tp;
	enum remap_verdict v;

	if (l->tmpl_len == 0) {
		int n = roce_build_ack(l->tmpl, sizeof(l->tmpl), x->f, p, L,
				       roce_syndrome_make(ROCE_AETH_ACK, 0), 0, false, 0, &tp);

		l->tmpl_len = n > 0 ? (uint32_t)n : 0;
		l->tmpl_p = tp;
	}
	if (roce_psn_diff(L, l->next) >= 0) {
		x->r->c.resp_unknown_psn++;
		return REMAP_DROP;
	}
	if (roce_has(p->oi, ROCE_HDR_AETH)) {
		uint8_t syn = roce_get_syndrome(x->f, p);
		enum roce_aeth_kind k = roce_syndrome_kind(syn);

		if (k == ROCE_AETH_NAK || k == ROCE_AETH_RNR_NAK)
			return resp_nak(x, L, k, roce_syndrome_value(syn));
	}
	if (p->opcode == ROCE_RC_ACKNOWLEDGE)
		v = resp_ack(x, L);
	else if ((st = rmp_stub_get(x->r, l, L)) == NULL) {
		x->r->c.resp_unknown_psn++;
		v = REMAP_DROP;
	} else if (p->opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE) {
		v = resp_atomic_ack(x, L, st);
	} else {
		v = resp_read(x, L, st);
	}
	if (l->recovering) {
		/* an answer past the resend point: the server took it after all
		 * (its NAK was for a request that was late, not lost) */
		if (roce_psn_diff(l->una, l->resend) > 0)
			l->resend = l->una;
		if (roce_psn_diff(l->resend, l->next) >= 0)
			l->recovering = 0;
		else
			rmp_prompt(x->r, l, x->emit, x->emit_cap, x->n_emit, true);
	}
	return v;
}

/*
 * The common case, without the general steps (issue #12's cost budget):
 * an ACK or a READ response packet of exactly the lane's oldest
 * unanswered PSN, a WRITE/SEND (a READ) of a client that still lives
 * (and, for an ACK, waits for nothing), on an open lane that is not
 * recovering, owes no duplicate its ACK again and that nobody waits on or
 * holds, out of the start hold-off.  It is what remap_response_general ->
 * resp_lane -> resp_ack (resp_read) -> expand -> map_own does for it, step
 * for step, and nothing else happens there (emit_acks has no one else to
 * tell: a READ's own stub blocks its client, rmp_wake returns at once);
 * fuzz_remap runs every script both ways and compares what leaves.  One
 * body for both kinds (a constant: each compiles to its own path).
 */
static __rte_always_inline bool
answer_fast(struct remap *r, uint8_t *f, struct roce_pkt *p, bool *icrc_ok, uint64_t now,
	    const uint8_t kind)
{
	const uint32_t L = p->psn;
	const struct rmp_server *sv;
	struct rmp_lane *l;
	struct rmp_stub *st;
	struct rmp_conn *rcn;
	struct rc_conn *c;
	int server;

	if (p->ip_version != 4 || r->prm.general_only ||
	    (server = rmp_server_of(r, p->src_ip4)) < 0 ||
	    (rmp_in_start_holdoff(r, now) && r->servers[server].held))
		return false;
	sv = &r->servers[server];
	l = &r->lanes[sv->first_lane];
	for (uint32_t i = 0;; i++, l++) {
		if (i == sv->n_lanes)
			return false;
		if (l->cl_qpn == p->qpn && l->cl_ip == p->dst_ip4 && l->srv_qpn != 0)
			break;     /* lane_of's answer if open (else: general) */
	}
	if (!rmp_lane_quiet(l) || L != l->una || L == l->next || l->tmpl_len == 0 ||
	    l->reack != 0)
		return false;
	st = rmp_stub_at(r, l, L);
	if (st->lpsn != L || st->kind != kind || st->inc == 0 ||
	    (kind == RK_READ && !read_span_fits(p, st)) ||
	    (c = rmp_stub_client(r, st, &rcn)) == NULL ||
	    (kind == RK_ACKABLE && rcn->waiting))
		return false;
	if (!*icrc_ok && !(*icrc_ok = roce_icrc_verify(f, p)))
		return false;  /* the general steps count and drop it */
	if ((kind == RK_ACKABLE || roce_has(p->oi, ROCE_HDR_AETH)) &&
	    roce_syndrome_kind(roce_get_syndrome(f, p)) != ROCE_AETH_ACK)
		return false;
	rmp_torn_begin(r, p->src_ip4);
	r->c.resp_seen++;
	l->una = roce_psn_add(L, 1);
	if (kind == RK_READ) {
		rmp_learn_pmtu(r, (uint32_t)server, f, p, icrc_ok);
		rmp_release(l, st);   /* its last PSN: the server is done */
		st->flags |= RS_ANSWERED;
		if (p->oi->flags & ROCE_F_LAST)
			note_acked(rcn, st->cpsn);
	} else {
		note_acked(rcn, st->cpsn);
		st->flags |= RS_ACKED;
	}
	rewrite_to_client(r, f, p, c, rcn, st->cpsn, st->cmsn);
	rmp_torn_end(r);
	return true;
}

/* READ response packets: their own copy, out of line (the ACK's is the
 * budget's path). */
static __rte_noinline bool
read_answer_fast(struct remap *r, uint8_t *f, struct roce_pkt *p, bool *icrc_ok,
		 uint64_t now)
{
	return answer_fast(r, f, p, icrc_ok, now, RK_READ);
}

bool
remap_response_fast(struct remap *r, uint8_t *f, struct roce_pkt *p, bool *icrc_ok,
		    uint64_t now)
{
	rmp_forget_told(r);
	if (p->opcode == ROCE_RC_ACKNOWLEDGE)
		return answer_fast(r, f, p, icrc_ok, now, RK_ACKABLE);
	if (p->opcode >= ROCE_RC_READ_RESPONSE_FIRST && p->opcode <= ROCE_RC_READ_RESPONSE_ONLY)
		return read_answer_fast(r, f, p, icrc_ok, now);
	return false;
}

static enum remap_verdict
response_general(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
		 struct roce_pkt *p, bool icrc_ok, uint64_t now,
		 struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	struct resp_ctx x;
	const struct rmp_server *sv;
	enum remap_verdict v;
	struct rmp_lane *l;
	int server;

	(void)len;
	(void)cap;
	*n_emit = 0;
	rmp_forget_told(r);
	if (!(p->oi->flags & ROCE_F_RC))
		return rmp_on_cm(r, f, p, false, now, emit, emit_cap, n_emit);
	if ((server = rmp_managed(r, p, false)) < 0)
		return REMAP_PASS;
	sv = &r->servers[server];
	r->c.resp_seen++;
	rmp_learn_pmtu(r, (uint32_t)server, f, p, &icrc_ok);
	if (rmp_in_start_holdoff(r, now) && sv->held &&
	    rmp_held_at_start(r, rc_find_resp(r->rc, p->src_ip4, p->dst_ip4, p->qpn), now)) {
		/* an answer from a lane of before the restart could carry any
		 * client's data to the lane's owner */
		r->c.start_held++;
		return REMAP_DROP;
	}
	l = lane_of(r, sv, p, now);
	if (l == NULL && rmp_ghost_answer(r, sv, p, now)) {
		/* the lost owner QP's late answer: no life of its client's */
		r->c.resp_orphan++;
		return REMAP_DROP;
	}
	/* before the lane started: its owner's own answers */
	if (l == NULL || (roce_psn_diff(p->psn, l->start) < 0 &&
			  rmp_stub_get(r, l, p->psn) == NULL)) {
		resp_direct(r, sv, f, p, icrc_ok, now, emit, emit_cap, n_emit);
		return REMAP_PASS;
	}
	if (!l->open) {
		r->c.resp_orphan++;
		return REMAP_DROP;
	}
	if (!icrc_ok && !roce_icrc_verify(f, p)) {
		r->c.resp_bad_icrc++;
		return REMAP_DROP;
	}
	/* not an initializer: it would clear the whole accumulator array */
	x.r = r;
	x.l = l;
	x.f = f;
	x.p = p;
	x.emit = emit;
	x.emit_cap = emit_cap;
	x.n_emit = n_emit;
	x.n_acc = 0;
	v = resp_lane(&x);
	/* answers in, room freed: the first waiting client may be asked.
	 * Emitted frames leave before this one: if it is that client's
	 * answer, it must go first (a NAK acknowledges all before it), as an
	 * emitted copy, or the asking waits for the next event. */
	if (l->wait_n && v == REMAP_MODIFIED &&
	    rmp_head_is(r, l, p->dst_ip4, p->qpn)) {
		if (*len > REMAP_EMIT_BUF || *n_emit >= emit_cap)
			return v;
		memcpy(emit[*n_emit].buf, f, *len);
		if (r->prm.defer_resign)
			rmp_resign(emit[*n_emit].buf, p);   /* a copy leaves signed */
		emit[*n_emit].len = *len;
		emit[*n_emit].to_server = false;
		emit[*n_emit].after = false;
		emit[*n_emit].unsigned_icrc = false;
		(*n_emit)++;
		v = REMAP_DROP;
	}
	rmp_wake(r, l, now, emit, emit_cap, n_emit);
	return v;
}

/* What may change is the server's the answer is from (remap_state.c). */
enum remap_verdict
remap_response_general(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
		       struct roce_pkt *p, bool icrc_ok, uint64_t now,
		       struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	enum remap_verdict v;

	rmp_torn_begin(r, p->ip_version == 4 ? p->src_ip4 : RMP_TORN_ALL);
	v = response_general(r, f, len, cap, p, icrc_ok, now, emit, emit_cap, n_emit);
	rmp_torn_end(r);
	return v;
}

enum remap_verdict
remap_on_response(struct remap *r, uint8_t *f, uint32_t *len, uint32_t cap,
		  struct roce_pkt *p, bool icrc_ok, uint64_t now, struct remap_emit *emit,
		  uint32_t emit_cap, uint32_t *n_emit)
{
	*n_emit = 0;
	if (remap_response_fast(r, f, p, &icrc_ok, now))
		return REMAP_MODIFIED;
	return remap_response_general(r, f, len, cap, p, icrc_ok, now, emit, emit_cap,
				      n_emit);
}
