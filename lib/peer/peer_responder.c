/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_responder.c — the memory server: RC responder QPs over registered
 * memory regions, following IBTA vol.1 §9.7 (C9 rules) the way RNICs and
 * Linux rxe (rxe_resp.c) do.
 *
 * Why it exists: swordd's correctness depends on how real responders treat
 * what it forwards — a PSN gap gets one NAK and then silence until the
 * expected PSN shows up, duplicates are answered without re-execution (WRITE
 * re-ACKed; READ and atomics replayed from the responder resources), ACKs
 * may be coalesced, MSN counts messages.  This file is that behaviour and
 * nothing else; memory is the ground truth the tests check.
 *
 * QPs are static (see peer.h): QP g answers on qpn_base + g, sends to
 * peer_qpn_base + g, expects its initial PSN first (peer_qp_first_psn), and
 * binds to the MAC/IP of the first request that reaches it (whatever its
 * PSN: a first request past the initial PSN is NAKed, as by an RNIC).
 * A reconnect (peer_resp_reset_qp) puts it back in that unbound state.
 *
 * With cfg.atomic_unit_ns set, atomics go through a model of an RNIC
 * atomic unit (peer_aunit.h): an atomic whose word's unit is busy waits
 * for it, and its QP's later requests wait behind it in arrival order, so
 * each QP is still executed and answered in PSN order; other QPs go on.
 * peer_resp_poll runs what has become due.  Off, nothing of it runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"
#include "peer_aunit.h"

struct rd_res {
	bool valid;
	bool atomic;
	uint32_t psn;       /* first PSN */
	uint32_t npsn;
	uint32_t msn;       /* MSN after the message */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint64_t orig;
};

/* An atomic waiting for its word's unit (model), as it arrived. */
struct held_atomic {
	uint8_t opcode;
	uint32_t psn;
	uint8_t *word;
	uint8_t eth[ROCE_MASKED_ATOMIC_ETH_LEN];
};

struct resp_qp {
	bool bound;
	bool nak_sent;
	struct peer_addr peer;
	uint32_t epsn;
	uint32_t msn;
	uint32_t unacked;
	/* multi-packet WRITE in progress */
	uint8_t *wr_cursor;
	uint32_t wr_left;
	struct rd_res res[PEER_RD_ATOMIC];
	uint32_t res_next;
	uint64_t executed;        /* in-sequence requests taken on this QP */
	/* atomic unit model: this QP's atomic waiting for its unit until
	 * exec_at, and the frames that arrived behind it */
	bool waiting;
	uint32_t wait_idx;        /* in peer_resp.waiting */
	uint64_t exec_at;
	struct held_atomic atom;
	struct aunit_fifo held;
};

struct peer_resp {
	struct peer_resp_cfg cfg;
	struct peer_link *link;
	struct resp_qp *qps;
	uint16_t ip_id;
	struct peer_resp_stats st;
	uint8_t out[PEER_FRAME_MAX];
	struct aunit *unit;       /* NULL: no atomic unit model */
	uint32_t *waiting;        /* QPs whose atomic waits (max_qps entries) */
	uint32_t n_waiting;
};

/* Words whose unit may be busy at once: every QP's waiting atomic, and
 * room for the atomics that ran within the last unit time. */
static uint32_t
unit_slots(uint32_t max_qps)
{
	return max_qps > 1024 ? 4 * max_qps : 4096;
}

static int
unit_create(struct peer_resp *r, const struct peer_resp_cfg *cfg)
{
	uint32_t frames = cfg->atomic_unit_queue ? cfg->atomic_unit_queue
						 : PEER_AUNIT_QUEUE_DEFAULT;

	if (!cfg->atomic_unit_ns)
		return 0;
	r->unit = aunit_create(cfg->atomic_unit_ns, frames, unit_slots(cfg->max_qps));
	r->waiting = calloc(cfg->max_qps, sizeof(*r->waiting));
	return r->unit && r->waiting ? 0 : -ENOMEM;
}

struct peer_resp *
peer_resp_create(const struct peer_resp_cfg *cfg, struct peer_link *link,
		 char *err, int errlen)
{
	struct peer_resp *r;

	if (cfg->pmtu < 256 || cfg->pmtu > 4096 || (cfg->pmtu & (cfg->pmtu - 1))) {
		snprintf(err, errlen, "pmtu %u: must be 256, 512, 1024, 2048 or 4096", cfg->pmtu);
		return NULL;
	}
	if (cfg->max_qps == 0 || cfg->max_qps > (1u << 20)) {
		snprintf(err, errlen, "max QPs %u out of range", cfg->max_qps);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->cfg = *cfg;
	r->link = link;
	r->qps = calloc(cfg->max_qps, sizeof(*r->qps));
	if (!r->qps)
		goto nomem;
	for (uint32_t g = 0; g < cfg->max_qps; g++)
		r->qps[g].epsn = peer_qp_first_psn(cfg->fixed_psn, cfg->initial_psn,
						   cfg->psn_seed, g);
	if (unit_create(r, cfg))
		goto nomem;
	for (uint32_t i = 0; i < cfg->n_mrs; i++) {
		r->cfg.mrs[i].mem = calloc(1, cfg->mrs[i].length);
		if (!r->cfg.mrs[i].mem)
			goto nomem;
	}
	return r;
nomem:
	snprintf(err, errlen, "out of memory");
	peer_resp_destroy(r);
	return NULL;
}

void
peer_resp_destroy(struct peer_resp *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->cfg.n_mrs; i++)
		free(r->cfg.mrs[i].mem);
	aunit_destroy(r->unit);
	free(r->waiting);
	free(r->qps);
	free(r);
}

const struct peer_resp_stats *
peer_resp_stats(const struct peer_resp *r)
{
	return &r->st;
}

uint32_t
peer_resp_active_qps(const struct peer_resp *r)
{
	uint32_t n = 0;

	for (uint32_t g = 0; g < r->cfg.max_qps; g++)
		n += r->qps[g].bound;
	return n;
}

uint64_t
peer_resp_qp_executed(const struct peer_resp *r, uint32_t g)
{
	return g < r->cfg.max_qps ? r->qps[g].executed : 0;
}

static void
waiting_add(struct peer_resp *r, struct resp_qp *q, uint32_t g)
{
	q->waiting = true;
	q->wait_idx = r->n_waiting;
	r->waiting[r->n_waiting++] = g;
}

static void
waiting_remove(struct peer_resp *r, struct resp_qp *q)
{
	uint32_t last = r->waiting[--r->n_waiting];

	r->waiting[q->wait_idx] = last;
	r->qps[last].wait_idx = q->wait_idx;
	q->waiting = false;
}

/* A reset QP's waiting atomic and held frames belong to the incarnation
 * that is gone: dropped, as an RNIC's QP reset drops its queues (the unit
 * time the atomic booked stays spent). */
static void
forget_held(struct peer_resp *r, struct resp_qp *q)
{
	if (!r->unit)
		return;
	r->st.aunit_flushed += aunit_fifo_clear(r->unit, &q->held);
	if (q->waiting) {
		waiting_remove(r, q);
		r->st.aunit_flushed++;
	}
}

int
peer_resp_reset_qp(struct peer_resp *r, uint32_t g, uint32_t psn)
{
	struct resp_qp *q;

	if (g >= r->cfg.max_qps)
		return -EINVAL;
	q = &r->qps[g];
	forget_held(r, q);
	memset(q, 0, sizeof(*q));
	q->epsn = psn & ROCE_PSN_MASK;
	r->st.qp_resets++;
	return 0;
}

static uint8_t *
mr_find(struct peer_resp *r, uint32_t rkey, bool any_key, uint64_t va, uint64_t len)
{
	for (uint32_t i = 0; i < r->cfg.n_mrs; i++) {
		struct peer_mr *m = &r->cfg.mrs[i];

		if (!any_key && m->rkey != rkey)
			continue;
		if (va >= m->base && len <= m->length && va - m->base <= m->length - len)
			return m->mem + (va - m->base);
	}
	return NULL;
}

uint8_t *
peer_resp_mem(struct peer_resp *r, uint64_t va, uint64_t len)
{
	return mr_find(r, 0, true, va, len);
}

static void
send_resp(struct peer_resp *r, struct resp_qp *q, uint32_t g, uint8_t opcode,
	  uint32_t psn, uint8_t syndrome, uint32_t msn, const uint64_t *orig,
	  const uint8_t *payload, uint32_t plen)
{
	uint8_t ext[ROCE_AETH_LEN + ROCE_ATOMIC_ACK_ETH_LEN];
	uint32_t ext_len = 0, n;

	if (opcode != ROCE_RC_READ_RESPONSE_MIDDLE) {
		roce_st32(ext, (uint32_t)syndrome << 24 | (msn & ROCE_PSN_MASK));
		ext_len = ROCE_AETH_LEN;
	}
	if (orig) {
		roce_st64(ext + ext_len, *orig);
		ext_len += ROCE_ATOMIC_ACK_ETH_LEN;
	}
	n = peer_build(r->out, sizeof(r->out), &r->cfg.self, &q->peer, &r->ip_id,
		       opcode, r->cfg.peer_qpn_base + g, psn, false, ext, ext_len,
		       payload, plen);
	if (n)
		peer_link_send(r->link, r->out, n);
}

#define SYN_ACK roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID)
#define SYN_NAK(c) roce_syndrome_make(ROCE_AETH_NAK, (c))

static void
send_nak(struct peer_resp *r, struct resp_qp *q, uint32_t g, uint32_t psn,
	 enum roce_nak_code code)
{
	if (code == ROCE_NAK_PSN_SEQ_ERR)
		r->st.naks_seq++;
	else if (code == ROCE_NAK_REMOTE_ACCESS)
		r->st.naks_access++;
	else
		r->st.naks_invalid++;
	send_resp(r, q, g, ROCE_RC_ACKNOWLEDGE, psn, SYN_NAK(code), q->msn, NULL, NULL, 0);
}

/* READ response packets psn_from..res end, from memory at their offset. */
static void
send_read(struct peer_resp *r, struct resp_qp *q, uint32_t g, const struct rd_res *res,
	  uint32_t psn_from)
{
	uint32_t pmtu = r->cfg.pmtu;
	uint32_t k0 = (uint32_t)roce_psn_diff(psn_from, res->psn);
	const uint8_t *mem = res->len ? mr_find(r, res->rkey, false, res->va, res->len) : NULL;

	for (uint32_t k = k0; k < res->npsn; k++) {
		uint32_t off = k * pmtu;
		uint32_t plen = res->len - off < pmtu ? res->len - off : pmtu;
		uint8_t op;

		if (res->npsn == 1)
			op = ROCE_RC_READ_RESPONSE_ONLY;
		else if (k == 0)
			op = ROCE_RC_READ_RESPONSE_FIRST;
		else if (k == res->npsn - 1)
			op = ROCE_RC_READ_RESPONSE_LAST;
		else
			op = ROCE_RC_READ_RESPONSE_MIDDLE;
		if (res->len == 0)
			plen = 0;
		r->st.read_resp_pkts++;
		send_resp(r, q, g, op, roce_psn_add(res->psn, k), SYN_ACK, res->msn, NULL,
			  mem ? mem + off : NULL, plen);
	}
}

static void
ack_message(struct peer_resp *r, struct resp_qp *q, uint32_t g, uint32_t psn, bool ackreq)
{
	bool ack;

	switch (r->cfg.ack_mode) {
	case PEER_ACK_ACKREQ:
		ack = ackreq;
		break;
	case PEER_ACK_EVERY_K:
		ack = ackreq || q->unacked + 1 >= r->cfg.ack_k;
		break;
	default:
		ack = true;
	}
	if (!ack) {
		q->unacked++;
		r->st.coalesced++;
		return;
	}
	q->unacked = 0;
	r->st.acks++;
	send_resp(r, q, g, ROCE_RC_ACKNOWLEDGE, psn, SYN_ACK, q->msn, NULL, NULL, 0);
}

static struct rd_res *
res_alloc(struct resp_qp *q)
{
	struct rd_res *res = &q->res[q->res_next];

	q->res_next = (q->res_next + 1) % PEER_RD_ATOMIC;
	memset(res, 0, sizeof(*res));
	res->valid = true;
	return res;
}

static void
duplicate(struct peer_resp *r, struct resp_qp *q, uint32_t g, const struct roce_pkt *p)
{
	const struct roce_opcode_info *oi = p->oi;

	if (!(oi->flags & (ROCE_F_READ | ROCE_F_ATOMIC))) {
		/* C9-105: ACK again (as of the last PSN done), do not execute */
		r->st.dup_writes++;
		r->st.acks++;
		q->unacked = 0;
		send_resp(r, q, g, ROCE_RC_ACKNOWLEDGE, roce_psn_add(q->epsn, ROCE_PSN_MASK),
			  SYN_ACK, q->msn, NULL, NULL, 0);
		return;
	}
	for (uint32_t i = 0; i < PEER_RD_ATOMIC; i++) {
		struct rd_res *res = &q->res[i];
		int32_t d;

		if (!res->valid)
			continue;
		d = roce_psn_diff(p->psn, res->psn);
		if (oi->flags & ROCE_F_ATOMIC) {
			if (res->atomic && d == 0) {
				r->st.dup_atomics++;
				send_resp(r, q, g, ROCE_RC_ATOMIC_ACKNOWLEDGE, res->psn, SYN_ACK,
					  res->msn, &res->orig, NULL, 0);
				return;
			}
		} else if (!res->atomic && d >= 0 && (uint32_t)d < res->npsn) {
			r->st.dup_reads++;
			send_read(r, q, g, res, p->psn);
			return;
		}
	}
	/* older than the resources we keep: drop (IBTA: class D, silently) */
	r->st.dup_unknown++;
}

static uint64_t
atomic_exec(uint8_t opcode, const uint8_t *eth, uint64_t old)
{
	uint64_t swap = roce_ld64(eth + 12), cmp = roce_ld64(eth + 20);

	if (opcode == ROCE_RC_COMPARE_SWAP)
		return old == cmp ? swap : old;
	if (opcode == ROCE_RC_FETCH_ADD)
		return old + swap;
	{
		uint64_t sm = roce_ld64(eth + 28), cm = roce_ld64(eth + 36);

		if ((old & cm) == (cmp & cm))
			return (old & ~sm) | (swap & sm);
		return old;
	}
}

/* Parse, verify and find the QP of a received frame; binds an unbound QP.
 * False (counted) when it is not a request for one of our QPs. */
static bool
accept_request(struct peer_resp *r, uint8_t *f, uint32_t len, struct roce_pkt *p,
	       uint32_t *gp)
{
	struct resp_qp *q;
	uint32_t g;
	int rc;

	r->st.rx_frames++;
	rc = roce_parse(f, len, p);
	if (rc > 0) {
		r->st.rx_not_mine++;
		return false;
	}
	if (rc < 0) {
		r->st.rx_malformed++;
		return false;
	}
	if (p->ip_version != 4 || p->dst_ip4 != r->cfg.self.ip) {
		r->st.rx_not_mine++;
		return false;
	}
	if (!roce_icrc_verify(f, p)) {
		r->st.rx_bad_icrc++;
		return false;
	}
	if (!(p->oi->flags & ROCE_F_REQUEST) || !(p->oi->flags & ROCE_F_RC)) {
		r->st.rx_not_request++;
		return false;
	}
	g = p->qpn - r->cfg.qpn_base;
	if (p->qpn < r->cfg.qpn_base || g >= r->cfg.max_qps) {
		r->st.unknown_qp++;
		return false;
	}
	q = &r->qps[g];
	if (!q->bound) {
		/* an RNIC's QP is in RTR with its peer before anything arrives,
		 * so even a first request past the initial PSN (the one before it
		 * was lost) gets its PSN-sequence NAK: bind on whatever comes first */
		q->bound = true;
		memcpy(q->peer.mac, f + 6, 6);
		q->peer.ip = p->src_ip4;
		q->peer.udp_sport = (uint16_t)(f[p->l4_off] << 8 | f[p->l4_off + 1]);
	} else if (p->src_ip4 != q->peer.ip) {
		r->st.peer_mismatch++;
		return false;
	}
	*gp = g;
	return true;
}

static void
take_write(struct peer_resp *r, struct resp_qp *q, uint32_t g, const uint8_t *f,
	   const struct roce_pkt *p)
{
	const struct roce_opcode_info *oi = p->oi;
	uint32_t plen = p->payload_len - p->pad;

	if (oi->flags & ROCE_F_FIRST) {
		const uint8_t *reth = f + p->bth_off + oi->off[ROCE_HDR_RETH];
		uint64_t va = roce_ld64(reth);
		uint32_t rkey = roce_ld32(reth + 8), dlen = roce_ld32(reth + 12);

		q->wr_cursor = dlen ? mr_find(r, rkey, false, va, dlen) : NULL;
		if (dlen && !q->wr_cursor) {
			send_nak(r, q, g, p->psn, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		q->wr_left = dlen;
	}
	if (plen > q->wr_left || ((oi->flags & ROCE_F_LAST) && plen != q->wr_left) ||
	    (!(oi->flags & ROCE_F_LAST) && plen != r->cfg.pmtu)) {
		send_nak(r, q, g, p->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	if (plen) {
		memcpy(q->wr_cursor, f + p->payload_off, plen);
		q->wr_cursor += plen;
	}
	q->wr_left -= plen;
	q->epsn = roce_psn_add(q->epsn, 1);
	if (oi->flags & ROCE_F_LAST) {
		r->st.writes++;
		q->msn = (q->msn + 1) & ROCE_PSN_MASK;
		ack_message(r, q, g, p->psn, roce_get_ackreq(f, p));
	}
}

static void
take_send(struct peer_resp *r, struct resp_qp *q, uint32_t g, const uint8_t *f,
	  const struct roce_pkt *p)
{
	/* no receive queue semantics needed here: accept and ACK */
	q->epsn = roce_psn_add(q->epsn, 1);
	if (p->oi->flags & ROCE_F_LAST) {
		r->st.sends++;
		q->msn = (q->msn + 1) & ROCE_PSN_MASK;
		ack_message(r, q, g, p->psn, roce_get_ackreq(f, p));
	}
}

static void
take_read(struct peer_resp *r, struct resp_qp *q, uint32_t g, const uint8_t *f,
	  const struct roce_pkt *p)
{
	const uint8_t *reth = f + p->bth_off + p->oi->off[ROCE_HDR_RETH];
	struct rd_res *res;
	uint64_t va = roce_ld64(reth);
	uint32_t rkey = roce_ld32(reth + 8), dlen = roce_ld32(reth + 12);

	if (dlen && !mr_find(r, rkey, false, va, dlen)) {
		send_nak(r, q, g, p->psn, ROCE_NAK_REMOTE_ACCESS);
		return;
	}
	r->st.reads++;
	q->unacked = 0;
	q->msn = (q->msn + 1) & ROCE_PSN_MASK;
	res = res_alloc(q);
	res->psn = p->psn;
	res->npsn = dlen ? (dlen + r->cfg.pmtu - 1) / r->cfg.pmtu : 1;
	res->msn = q->msn;
	res->va = va;
	res->rkey = rkey;
	res->len = dlen;
	q->epsn = roce_psn_add(q->epsn, res->npsn);
	send_read(r, q, g, res, p->psn);
}

/* Execute an atomic on its word, keep its result for replays, answer. */
static void
atomic_run(struct peer_resp *r, struct resp_qp *q, uint32_t g, uint8_t opcode,
	   const uint8_t *eth, uint8_t *w, uint32_t psn)
{
	uint64_t old = roce_ld64(w);
	struct rd_res *res;

	roce_st64(w, atomic_exec(opcode, eth, old));
	r->st.atomics++;
	q->unacked = 0;
	q->msn = (q->msn + 1) & ROCE_PSN_MASK;
	q->epsn = roce_psn_add(q->epsn, 1);
	res = res_alloc(q);
	res->atomic = true;
	res->psn = psn;
	res->npsn = 1;
	res->msn = q->msn;
	res->orig = old;
	send_resp(r, q, g, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, SYN_ACK, q->msn, &old, NULL, 0);
}

/* The atomic waits for its word's unit until exec_at; nothing of the QP
 * moves (PSN, MSN) until it has run. */
static void
atomic_wait(struct peer_resp *r, struct resp_qp *q, uint32_t g, const struct roce_pkt *p,
	    const uint8_t *eth, uint8_t *w, uint64_t t, uint64_t exec_at)
{
	q->atom.opcode = p->opcode;
	q->atom.psn = p->psn;
	q->atom.word = w;
	memcpy(q->atom.eth, eth, p->opcode == ROCE_RC_MASKED_COMPARE_SWAP ?
	       ROCE_MASKED_ATOMIC_ETH_LEN : ROCE_ATOMIC_ETH_LEN);
	q->exec_at = exec_at;
	waiting_add(r, q, g);
	r->st.aunit_waited++;
	r->st.aunit_wait_ns += exec_at - t;
}

/* t: when the atomic reaches the responder's head of line (model only). */
static void
take_atomic(struct peer_resp *r, struct resp_qp *q, uint32_t g, const uint8_t *f,
	    const struct roce_pkt *p, uint64_t t)
{
	const uint8_t *eth = f + p->bth_off + ROCE_BTH_LEN;
	uint64_t va = roce_ld64(eth), exec_at;
	uint8_t *w;

	if (va & 7) {
		send_nak(r, q, g, p->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	w = mr_find(r, roce_ld32(eth + 8), false, va, 8);
	if (!w) {
		send_nak(r, q, g, p->psn, ROCE_NAK_REMOTE_ACCESS);
		return;
	}
	if (r->unit) {
		if (!aunit_book(r->unit, w, t, &exec_at)) {
			/* not taken: the requester retransmits it */
			r->st.aunit_table_full++;
			return;
		}
		if (exec_at > t) {
			atomic_wait(r, q, g, p, eth, w, t, exec_at);
			return;
		}
	}
	atomic_run(r, q, g, p->opcode, eth, w, p->psn);
}

/* One request of QP g, parsed and verified, in arrival order; t is when
 * the responder takes it (the atomic unit model's clock). */
static void
take_request(struct peer_resp *r, struct resp_qp *q, uint32_t g, const uint8_t *f,
	     const struct roce_pkt *p, uint64_t t)
{
	const struct roce_opcode_info *oi = p->oi;
	int32_t d = roce_psn_diff(p->psn, q->epsn);

	if (d > 0) {
		/* C9-110: NAK the first out-of-sequence request, then drop quietly */
		r->st.seq_dropped++;
		if (!q->nak_sent) {
			q->nak_sent = true;
			send_nak(r, q, g, q->epsn, ROCE_NAK_PSN_SEQ_ERR);
		}
		return;
	}
	if (d < 0) {
		duplicate(r, q, g, p);
		return;
	}
	q->nak_sent = false;
	q->executed++;
	if (oi->flags & ROCE_F_WRITE)
		take_write(r, q, g, f, p);
	else if (oi->flags & ROCE_F_SEND)
		take_send(r, q, g, f, p);
	else if (oi->flags & ROCE_F_READ)
		take_read(r, q, g, f, p);
	else if (oi->flags & ROCE_F_ATOMIC)
		take_atomic(r, q, g, f, p, t);
	else
		send_nak(r, q, g, p->psn, ROCE_NAK_INVALID_REQ);
}

/* A request that arrived while its QP's atomic waits: it waits behind it
 * (dropped and counted when the pool is full, as by a responder out of
 * buffers; the requester's retransmission brings it back). */
static void
hold_behind(struct peer_resp *r, struct resp_qp *q, const uint8_t *f, const struct roce_pkt *p,
	    uint64_t now)
{
	if (!aunit_fifo_push(r->unit, &q->held, f, p->frame_len, p, now)) {
		r->st.aunit_queue_full++;
		return;
	}
	r->st.aunit_held++;
	if (aunit_held(r->unit) > r->st.aunit_held_max)
		r->st.aunit_held_max = aunit_held(r->unit);
}

void
peer_resp_input(struct peer_resp *r, uint8_t *f, uint32_t len)
{
	struct roce_pkt p;
	uint32_t g;
	uint64_t now;

	if (!accept_request(r, f, len, &p, &g))
		return;
	if (!r->unit) {
		take_request(r, &r->qps[g], g, f, &p, 0);
		return;
	}
	now = peer_now_ns();
	if (r->qps[g].waiting)
		hold_behind(r, &r->qps[g], f, &p, now);
	else
		take_request(r, &r->qps[g], g, f, &p, now);
}

/* The waiting QP whose atomic is due first; UINT32_MAX if none waits. */
static uint32_t
first_due(const struct peer_resp *r)
{
	uint32_t best = UINT32_MAX;

	for (uint32_t i = 0; i < r->n_waiting; i++) {
		uint32_t g = r->waiting[i];

		if (best == UINT32_MAX || r->qps[g].exec_at < r->qps[best].exec_at)
			best = g;
	}
	return best;
}

/* QP g's atomic has its unit: run it, then what arrived behind it, each
 * taken no earlier than it arrived, until one more atomic has to wait. */
static void
resume_qp(struct peer_resp *r, struct resp_qp *q, uint32_t g)
{
	uint64_t t = q->exec_at;
	struct aunit_frame *h;

	waiting_remove(r, q);
	atomic_run(r, q, g, q->atom.opcode, q->atom.eth, q->atom.word, q->atom.psn);
	while (!q->waiting && (h = aunit_fifo_head(r->unit, &q->held))) {
		if (h->t_arr > t)
			t = h->t_arr;
		take_request(r, q, g, h->f, &h->p, t);
		aunit_fifo_pop(r->unit, &q->held);
	}
}

uint64_t
peer_resp_poll(struct peer_resp *r, uint64_t now)
{
	uint32_t g;

	if (!r->unit)
		return UINT64_MAX;
	while ((g = first_due(r)) != UINT32_MAX) {
		if (r->qps[g].exec_at > now)
			return r->qps[g].exec_at - now;
		resume_qp(r, &r->qps[g], g);
	}
	return UINT64_MAX;
}
