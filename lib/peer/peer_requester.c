/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_requester.c — RC requester QPs: a send queue per QP, a window of
 * outstanding requests, in-order completion, retransmission on timeout and
 * go-back-N on NAK or implied NAK (IBTA vol.1 §9.7.5, like rxe_comp.c).
 *
 * Why it exists: the clients that load swordd must react to what it sends
 * back exactly as an RNIC would — a coalesced ACK completes every WRITE up
 * to its PSN, an ACK past an unanswered READ or atomic means that answer was
 * lost, a PSN-sequence NAK rewinds to the PSN it names — so that anything
 * swordd gets wrong shows up as a retransmission, an error or a violation
 * in the workload, not as silence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

struct sq_entry {
	struct peer_wqe w;
	uint32_t psn;
	uint32_t npsn;
	uint32_t read_next;   /* READ: next response PSN expected */
	uint32_t read_got;    /* READ: bytes received */
	uint32_t retries;
	uint32_t msn;         /* this message's MSN: the responder's count once done */
	bool sent;
};

struct req_qp {
	uint32_t head, tail, send_next;  /* free-running SQ indexes */
	uint32_t next_psn;
	uint32_t next_msn;
	uint64_t timer;                  /* last progress or (re)transmission */
	uint64_t rnr_until;
	bool guard;                      /* went back already; wait for progress */
	bool error;
	const char *why;
	char why_buf[128];
	struct sq_entry sq[PEER_SQ_SIZE];
};

struct peer_req {
	struct peer_req_cfg cfg;
	struct peer_link *link;
	peer_complete_fn fn;
	void *ctx;
	struct req_qp *qps;
	uint16_t ip_id;
	struct peer_req_stats st;
	uint8_t out[PEER_FRAME_MAX];
};

#define SQ(q, i) (&(q)->sq[(i) & (PEER_SQ_SIZE - 1)])

struct peer_req *
peer_req_create(const struct peer_req_cfg *cfg, struct peer_link *link,
		peer_complete_fn fn, void *ctx, char *err, int errlen)
{
	struct peer_req *r;

	if (cfg->pmtu < 256 || cfg->pmtu > 4096 || (cfg->pmtu & (cfg->pmtu - 1))) {
		snprintf(err, errlen, "pmtu %u: must be 256, 512, 1024, 2048 or 4096", cfg->pmtu);
		return NULL;
	}
	if (cfg->window == 0 || cfg->window > PEER_SQ_SIZE) {
		snprintf(err, errlen, "window %u: must be 1..%u", cfg->window, PEER_SQ_SIZE);
		return NULL;
	}
	if (cfg->n_qps == 0 || cfg->n_qps > 4096) {
		snprintf(err, errlen, "QPs %u: must be 1..4096", cfg->n_qps);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r)
		r->qps = calloc(cfg->n_qps, sizeof(*r->qps));
	if (!r || !r->qps) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->cfg = *cfg;
	r->link = link;
	r->fn = fn;
	r->ctx = ctx;
	for (uint32_t i = 0; i < cfg->n_qps; i++)
		r->qps[i].next_psn = peer_req_first_psn(r, i);
	return r;
}

uint32_t
peer_req_first_psn(const struct peer_req *r, uint32_t qp)
{
	return peer_qp_first_psn(r->cfg.fixed_psn, r->cfg.initial_psn, r->cfg.psn_seed,
				 r->cfg.first_qp + qp);
}

int
peer_req_reset_qp(struct peer_req *r, uint32_t qpi)
{
	struct req_qp *q;

	if (qpi >= r->cfg.n_qps)
		return -EINVAL;
	q = &r->qps[qpi];
	if (q->head != q->tail)
		return -EBUSY;
	/* the ring too: an ACK of the old incarnation must not find a
	 * recently completed entry at its PSN */
	memset(q, 0, sizeof(*q));
	q->next_psn = peer_req_first_psn(r, qpi);
	r->st.qp_resets++;
	return 0;
}

void
peer_req_destroy(struct peer_req *r)
{
	if (!r)
		return;
	free(r->qps);
	free(r);
}

const struct peer_req_stats *
peer_req_stats(const struct peer_req *r)
{
	return &r->st;
}

bool
peer_req_qp_error(const struct peer_req *r, uint32_t qp, const char **why)
{
	if (why)
		*why = r->qps[qp].why;
	return r->qps[qp].error;
}

uint32_t
peer_req_outstanding(const struct peer_req *r, uint32_t qp)
{
	return r->qps[qp].tail - r->qps[qp].head;
}

static void
qp_fail(struct peer_req *r, struct req_qp *q, const char *why)
{
	if (q->error)
		return;
	q->error = true;
	q->why = why;
	r->st.qp_errors++;
}

static uint32_t
wqe_psns(const struct peer_req *r, const struct peer_wqe *w)
{
	if (w->opcode == ROCE_RC_WRITE_ONLY || w->opcode == ROCE_RC_READ_REQUEST)
		return w->len ? (w->len + r->cfg.pmtu - 1) / r->cfg.pmtu : 1;
	return 1;
}

static void
xmit(struct peer_req *r, uint32_t qpi, struct sq_entry *e)
{
	const struct peer_wqe *w = &e->w;
	uint32_t dqpn = r->cfg.server_qpn_base + r->cfg.first_qp + qpi;
	uint32_t pmtu = r->cfg.pmtu, n;
	uint8_t ext[ROCE_MASKED_ATOMIC_ETH_LEN];

	if (e->sent)
		r->st.retx_pkts++;
	e->sent = true;
	if (w->opcode == ROCE_RC_WRITE_ONLY) {
		for (uint32_t k = 0; k < e->npsn; k++) {
			uint32_t off = k * pmtu;
			uint32_t plen = w->len - off < pmtu ? w->len - off : pmtu;
			bool last = k == e->npsn - 1;
			uint32_t ext_len = 0;
			uint8_t op;

			if (e->npsn == 1)
				op = ROCE_RC_WRITE_ONLY;
			else if (k == 0)
				op = ROCE_RC_WRITE_FIRST;
			else
				op = last ? ROCE_RC_WRITE_LAST : ROCE_RC_WRITE_MIDDLE;
			if (k == 0) {
				roce_st64(ext, w->va);
				roce_st32(ext + 8, w->rkey);
				roce_st32(ext + 12, w->len);
				ext_len = ROCE_RETH_LEN;
			}
			if (w->len == 0)
				plen = 0;
			n = peer_build(r->out, sizeof(r->out), &r->cfg.self, &r->cfg.server,
				       &r->ip_id, op, dqpn, roce_psn_add(e->psn, k),
				       last && w->ackreq, ext, ext_len, w->buf ? w->buf + off : NULL,
				       plen);
			if (n) {
				peer_link_send(r->link, r->out, n);
				r->st.tx_pkts++;
			}
		}
		return;
	}
	if (w->opcode == ROCE_RC_READ_REQUEST) {
		uint32_t k = (uint32_t)roce_psn_diff(e->read_next, e->psn);

		roce_st64(ext, w->va + (uint64_t)k * pmtu);
		roce_st32(ext + 8, w->rkey);
		roce_st32(ext + 12, w->len ? w->len - k * pmtu : 0);
		n = peer_build(r->out, sizeof(r->out), &r->cfg.self, &r->cfg.server, &r->ip_id,
			       ROCE_RC_READ_REQUEST, dqpn, e->read_next, true, ext,
			       ROCE_RETH_LEN, NULL, 0);
	} else {
		uint32_t ext_len = ROCE_ATOMIC_ETH_LEN;

		roce_st64(ext, w->va);
		roce_st32(ext + 8, w->rkey);
		roce_st64(ext + 12, w->swap_add);
		roce_st64(ext + 20, w->compare);
		if (w->opcode == ROCE_RC_MASKED_COMPARE_SWAP) {
			roce_st64(ext + 28, w->swap_mask);
			roce_st64(ext + 36, w->compare_mask);
			ext_len = ROCE_MASKED_ATOMIC_ETH_LEN;
		}
		n = peer_build(r->out, sizeof(r->out), &r->cfg.self, &r->cfg.server, &r->ip_id,
			       w->opcode, dqpn, e->psn, true, ext, ext_len, NULL, 0);
	}
	if (n) {
		peer_link_send(r->link, r->out, n);
		r->st.tx_pkts++;
	}
}

static void
kick(struct peer_req *r, uint32_t qpi, uint64_t now)
{
	struct req_qp *q = &r->qps[qpi];

	if (q->error || (q->rnr_until && now < q->rnr_until))
		return;
	q->rnr_until = 0;
	while (q->send_next != q->tail) {
		if (q->send_next == q->head)
			q->timer = now;
		xmit(r, qpi, SQ(q, q->send_next));
		q->send_next++;
	}
}

int
peer_req_post(struct peer_req *r, uint32_t qpi, const struct peer_wqe *w)
{
	struct req_qp *q = &r->qps[qpi];
	struct sq_entry *e;

	if (q->error)
		return -EIO;
	if (q->tail - q->head >= r->cfg.window)
		return -ENOBUFS;
	if (w->opcode != ROCE_RC_WRITE_ONLY && w->opcode != ROCE_RC_READ_REQUEST &&
	    w->opcode != ROCE_RC_COMPARE_SWAP && w->opcode != ROCE_RC_FETCH_ADD &&
	    w->opcode != ROCE_RC_MASKED_COMPARE_SWAP)
		return -EINVAL;
	e = SQ(q, q->tail);
	memset(e, 0, sizeof(*e));
	e->w = *w;
	e->w.t_post = peer_now_ns();
	e->psn = q->next_psn;
	e->npsn = wqe_psns(r, w);
	e->read_next = e->psn;
	q->next_msn = (q->next_msn + 1) & ROCE_PSN_MASK;
	e->msn = q->next_msn;
	q->next_psn = roce_psn_add(q->next_psn, e->npsn);
	q->tail++;
	kick(r, qpi, e->w.t_post);
	return 0;
}

static void
go_back(struct peer_req *r, uint32_t qpi, uint64_t now)
{
	struct req_qp *q = &r->qps[qpi];

	q->guard = true;
	q->send_next = q->head;
	kick(r, qpi, now);
}

static void
complete_head(struct peer_req *r, uint32_t qpi, uint64_t now)
{
	struct req_qp *q = &r->qps[qpi];
	struct sq_entry *e = SQ(q, q->head);
	struct peer_wqe w = e->w;

	q->head++;
	if ((int32_t)(q->send_next - q->head) < 0)
		q->send_next = q->head;
	q->timer = now;
	q->guard = false;
	r->st.completions++;
	w.t_done = now;
	r->fn(r->ctx, qpi, &w);
}

static bool
is_write(const struct sq_entry *e)
{
	return e->w.opcode == ROCE_RC_WRITE_ONLY;
}

/* Complete WRITEs at the head whose last PSN is before psn (or at it). */
static void
ack_writes(struct peer_req *r, uint32_t qpi, uint32_t psn, bool inclusive, uint64_t now)
{
	struct req_qp *q = &r->qps[qpi];

	while (!q->error && q->head != q->tail) {
		struct sq_entry *e = SQ(q, q->head);
		int32_t d;

		if (!is_write(e) || !e->sent)
			break;
		d = roce_psn_diff(roce_psn_add(e->psn, e->npsn - 1), psn);
		if (d > 0 || (d == 0 && !inclusive))
			break;
		complete_head(r, qpi, now);
	}
}

/* IBTA 9.7.5.1.2: the AETH MSN counts the messages the responder has
 * completed; a response for message e (or an ACK ending at it) must carry e's. */
static void
check_msn(struct peer_req *r, uint32_t want, const uint8_t *f, const struct roce_pkt *p)
{
	if (!roce_has(p->oi, ROCE_HDR_AETH))
		return;
	if (roce_get_msn(f, p) != (want & ROCE_PSN_MASK))
		r->st.msn_mismatch++;
}

static void
implied_nak(struct peer_req *r, uint32_t qpi, uint64_t now)
{
	struct req_qp *q = &r->qps[qpi];

	r->st.implied_naks++;
	if (!q->guard)
		go_back(r, qpi, now);
}

void
peer_req_input(struct peer_req *r, uint8_t *f, uint32_t len)
{
	struct roce_pkt p;
	struct req_qp *q;
	struct sq_entry *e;
	uint32_t qpi, psn;
	uint64_t now;
	int rc;

	r->st.rx_frames++;
	rc = roce_parse(f, len, &p);
	if (rc > 0) {
		r->st.rx_not_mine++;
		return;
	}
	if (rc < 0) {
		r->st.rx_malformed++;
		return;
	}
	qpi = p.qpn - r->cfg.qpn_base - r->cfg.first_qp;
	if (p.ip_version != 4 || p.dst_ip4 != r->cfg.self.ip ||
	    !(p.oi->flags & ROCE_F_RESPONSE) || p.qpn < r->cfg.qpn_base + r->cfg.first_qp ||
	    qpi >= r->cfg.n_qps) {
		r->st.rx_not_mine++;
		return;
	}
	if (!roce_icrc_verify(f, &p)) {
		r->st.rx_bad_icrc++;
		return;
	}
	q = &r->qps[qpi];
	if (q->error)
		return;
	now = peer_now_ns();
	psn = p.psn;
	/* nothing outstanding, or a PSN we never sent: stale */
	if (q->head == q->tail || roce_psn_diff(psn, q->next_psn) >= 0 ||
	    roce_psn_diff(psn, SQ(q, q->head)->psn) < 0) {
		r->st.stale_responses++;
		return;
	}

	if (p.opcode == ROCE_RC_ACKNOWLEDGE) {
		uint8_t syn = roce_get_syndrome(f, &p);

		switch (roce_syndrome_kind(syn)) {
		case ROCE_AETH_ACK: {
			/* the message this ACK ends at: outstanding, or completed
			 * recently enough that its ring slot was not reused */
			uint32_t back = PEER_SQ_SIZE - (q->tail - q->head);

			for (uint32_t i = q->head - back; i != q->tail; i++) {
				struct sq_entry *x = SQ(q, i);

				if (x->sent && roce_psn_add(x->psn, x->npsn - 1) == psn) {
					check_msn(r, x->msn, f, &p);
					break;
				}
			}
			ack_writes(r, qpi, psn, true, now);
			if (q->head != q->tail && !is_write(SQ(q, q->head)) &&
			    roce_psn_diff(psn, SQ(q, q->head)->psn) >= 0)
				implied_nak(r, qpi, now);
			return;
		}
		case ROCE_AETH_RNR_NAK:
			r->st.rnr_naks++;
			ack_writes(r, qpi, psn, false, now);
			q->rnr_until = now + 1000000;
			q->send_next = q->head;
			return;
		case ROCE_AETH_NAK:
			if (roce_syndrome_value(syn) == ROCE_NAK_PSN_SEQ_ERR) {
				r->st.naks_seq++;
				ack_writes(r, qpi, psn, false, now);
				if (q->head != q->tail)
					go_back(r, qpi, now);
				return;
			}
			qp_fail(r, q, roce_syndrome_value(syn) == ROCE_NAK_REMOTE_ACCESS ?
				"remote access error NAK" : "invalid request / remote operation NAK");
			return;
		default:
			qp_fail(r, q, "reserved AETH syndrome");
			return;
		}
	}

	ack_writes(r, qpi, psn, false, now);
	if (q->head == q->tail)
		return;
	e = SQ(q, q->head);
	if (roce_psn_diff(psn, e->psn) < 0) {
		r->st.stale_responses++;
		return;
	}
	if (p.opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE) {
		const uint8_t *aa = f + p.bth_off + p.oi->off[ROCE_HDR_ATOMIC_ACK_ETH];

		if (e->psn == psn && (e->w.opcode == ROCE_RC_COMPARE_SWAP ||
				      e->w.opcode == ROCE_RC_FETCH_ADD ||
				      e->w.opcode == ROCE_RC_MASKED_COMPARE_SWAP)) {
			check_msn(r, e->msn, f, &p);
			e->w.orig = roce_ld64(aa);
			complete_head(r, qpi, now);
			return;
		}
		if (roce_psn_diff(psn, e->psn) > 0 && !is_write(e)) {
			implied_nak(r, qpi, now);
			return;
		}
		qp_fail(r, q, "ATOMIC ACKNOWLEDGE for a PSN that is not an atomic");
		return;
	}
	if (p.opcode < ROCE_RC_READ_RESPONSE_FIRST || p.opcode > ROCE_RC_READ_RESPONSE_ONLY) {
		qp_fail(r, q, "unexpected response opcode");
		return;
	}
	/* READ response packets */
	if (e->w.opcode != ROCE_RC_READ_REQUEST || roce_psn_diff(psn, e->psn) >= (int32_t)e->npsn) {
		if (!is_write(e))
			implied_nak(r, qpi, now);
		else
			qp_fail(r, q, "READ response for a PSN that is not a READ");
		return;
	}
	{
		int32_t d = roce_psn_diff(psn, e->read_next);
		uint32_t k = (uint32_t)roce_psn_diff(psn, e->psn);
		uint32_t plen = p.payload_len - p.pad;
		bool last = k == e->npsn - 1;
		uint32_t want = e->w.len ? (last ? e->w.len - k * r->cfg.pmtu : r->cfg.pmtu) : 0;
		bool op_ok;

		if (d < 0) {
			r->st.stale_responses++;
			return;
		}
		if (d > 0) {
			implied_nak(r, qpi, now);
			return;
		}
		if (e->npsn == 1)
			op_ok = p.opcode == ROCE_RC_READ_RESPONSE_ONLY;
		else if (k == 0)
			op_ok = p.opcode == ROCE_RC_READ_RESPONSE_FIRST;
		else
			op_ok = p.opcode == (last ? ROCE_RC_READ_RESPONSE_LAST :
					     ROCE_RC_READ_RESPONSE_MIDDLE);
		if (!op_ok || plen != want) {
			qp_fail(r, q, "READ response with wrong opcode or length");
			return;
		}
		check_msn(r, e->msn, f, &p);
		if (plen && e->w.buf)
			memcpy(e->w.buf + (size_t)k * r->cfg.pmtu, f + p.payload_off, plen);
		e->read_next = roce_psn_add(e->read_next, 1);
		q->timer = now;
		q->guard = false;
		if (last)
			complete_head(r, qpi, now);
	}
}

void
peer_req_poll(struct peer_req *r, uint64_t now)
{
	for (uint32_t i = 0; i < r->cfg.n_qps; i++) {
		struct req_qp *q = &r->qps[i];

		if (q->error || q->head == q->tail)
			continue;
		if (q->rnr_until) {
			kick(r, i, now);
			continue;
		}
		if (now - q->timer < r->cfg.rto_ns)
			continue;
		r->st.timeouts++;
		if (++SQ(q, q->head)->retries > r->cfg.max_retries) {
			/* say which request never got its answer: the hunt for
			 * a rare hang starts from here */
			snprintf(q->why_buf, sizeof(q->why_buf),
				 "retry count exceeded (head: opcode 0x%02x PSN %u, %u outstanding)",
				 SQ(q, q->head)->w.opcode, SQ(q, q->head)->psn, q->tail - q->head);
			qp_fail(r, q, q->why_buf);
			continue;
		}
		go_back(r, i, now);
	}
}
