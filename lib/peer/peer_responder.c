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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

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
};

struct peer_resp {
	struct peer_resp_cfg cfg;
	struct peer_link *link;
	struct resp_qp *qps;
	uint16_t ip_id;
	struct peer_resp_stats st;
	uint8_t out[PEER_FRAME_MAX];
};

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

int
peer_resp_reset_qp(struct peer_resp *r, uint32_t g, uint32_t psn)
{
	struct resp_qp *q;

	if (g >= r->cfg.max_qps)
		return -EINVAL;
	q = &r->qps[g];
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

void
peer_resp_input(struct peer_resp *r, uint8_t *f, uint32_t len)
{
	struct roce_pkt p;
	const struct roce_opcode_info *oi;
	struct resp_qp *q;
	uint32_t g;
	int32_t d;
	uint8_t *bth;
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
	if (p.ip_version != 4 || p.dst_ip4 != r->cfg.self.ip) {
		r->st.rx_not_mine++;
		return;
	}
	if (!roce_icrc_verify(f, &p)) {
		r->st.rx_bad_icrc++;
		return;
	}
	oi = p.oi;
	if (!(oi->flags & ROCE_F_REQUEST) || !(oi->flags & ROCE_F_RC)) {
		r->st.rx_not_request++;
		return;
	}
	g = p.qpn - r->cfg.qpn_base;
	if (p.qpn < r->cfg.qpn_base || g >= r->cfg.max_qps) {
		r->st.unknown_qp++;
		return;
	}
	q = &r->qps[g];
	if (!q->bound) {
		/* an RNIC's QP is in RTR with its peer before anything arrives,
		 * so even a first request past the initial PSN (the one before it
		 * was lost) gets its PSN-sequence NAK: bind on whatever comes first */
		q->bound = true;
		memcpy(q->peer.mac, f + 6, 6);
		q->peer.ip = p.src_ip4;
		q->peer.udp_sport = (uint16_t)(f[p.l4_off] << 8 | f[p.l4_off + 1]);
	} else if (p.src_ip4 != q->peer.ip) {
		r->st.peer_mismatch++;
		return;
	}
	bth = f + p.bth_off;

	d = roce_psn_diff(p.psn, q->epsn);
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
		duplicate(r, q, g, &p);
		return;
	}
	q->nak_sent = false;
	q->executed++;

	if (oi->flags & ROCE_F_WRITE) {
		uint32_t plen = p.payload_len - p.pad;

		if (oi->flags & ROCE_F_FIRST) {
			const uint8_t *reth = bth + oi->off[ROCE_HDR_RETH];
			uint64_t va = roce_ld64(reth);
			uint32_t rkey = roce_ld32(reth + 8), dlen = roce_ld32(reth + 12);

			q->wr_cursor = dlen ? mr_find(r, rkey, false, va, dlen) : NULL;
			if (dlen && !q->wr_cursor) {
				send_nak(r, q, g, p.psn, ROCE_NAK_REMOTE_ACCESS);
				return;
			}
			q->wr_left = dlen;
		}
		if (plen > q->wr_left || ((oi->flags & ROCE_F_LAST) && plen != q->wr_left) ||
		    (!(oi->flags & ROCE_F_LAST) && plen != r->cfg.pmtu)) {
			send_nak(r, q, g, p.psn, ROCE_NAK_INVALID_REQ);
			return;
		}
		if (plen) {
			memcpy(q->wr_cursor, f + p.payload_off, plen);
			q->wr_cursor += plen;
		}
		q->wr_left -= plen;
		q->epsn = roce_psn_add(q->epsn, 1);
		if (oi->flags & ROCE_F_LAST) {
			r->st.writes++;
			q->msn = (q->msn + 1) & ROCE_PSN_MASK;
			ack_message(r, q, g, p.psn, roce_get_ackreq(f, &p));
		}
		return;
	}
	if (oi->flags & ROCE_F_SEND) {
		/* no receive queue semantics needed here: accept and ACK */
		q->epsn = roce_psn_add(q->epsn, 1);
		if (oi->flags & ROCE_F_LAST) {
			r->st.sends++;
			q->msn = (q->msn + 1) & ROCE_PSN_MASK;
			ack_message(r, q, g, p.psn, roce_get_ackreq(f, &p));
		}
		return;
	}
	if (oi->flags & ROCE_F_READ) {
		const uint8_t *reth = bth + oi->off[ROCE_HDR_RETH];
		struct rd_res *res;
		uint64_t va = roce_ld64(reth);
		uint32_t rkey = roce_ld32(reth + 8), dlen = roce_ld32(reth + 12);

		if (dlen && !mr_find(r, rkey, false, va, dlen)) {
			send_nak(r, q, g, p.psn, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		r->st.reads++;
		q->unacked = 0;
		q->msn = (q->msn + 1) & ROCE_PSN_MASK;
		res = res_alloc(q);
		res->psn = p.psn;
		res->npsn = dlen ? (dlen + r->cfg.pmtu - 1) / r->cfg.pmtu : 1;
		res->msn = q->msn;
		res->va = va;
		res->rkey = rkey;
		res->len = dlen;
		q->epsn = roce_psn_add(q->epsn, res->npsn);
		send_read(r, q, g, res, p.psn);
		return;
	}
	if (oi->flags & ROCE_F_ATOMIC) {
		const uint8_t *eth = bth + ROCE_BTH_LEN;
		uint64_t va = roce_ld64(eth), old;
		uint32_t rkey = roce_ld32(eth + 8);
		uint8_t *w;
		struct rd_res *res;

		if (va & 7) {
			send_nak(r, q, g, p.psn, ROCE_NAK_INVALID_REQ);
			return;
		}
		w = mr_find(r, rkey, false, va, 8);
		if (!w) {
			send_nak(r, q, g, p.psn, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		old = roce_ld64(w);
		roce_st64(w, atomic_exec(p.opcode, eth, old));
		r->st.atomics++;
		q->unacked = 0;
		q->msn = (q->msn + 1) & ROCE_PSN_MASK;
		q->epsn = roce_psn_add(q->epsn, 1);
		res = res_alloc(q);
		res->atomic = true;
		res->psn = p.psn;
		res->npsn = 1;
		res->msn = q->msn;
		res->orig = old;
		send_resp(r, q, g, ROCE_RC_ATOMIC_ACKNOWLEDGE, p.psn, SYN_ACK, q->msn, &old,
			  NULL, 0);
		return;
	}
	send_nak(r, q, g, p.psn, ROCE_NAK_INVALID_REQ);
}
