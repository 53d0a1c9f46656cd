/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_model.c — RC requester and responder models (see rdma_model.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "roce.h"
#include "rdma_model.h"

/* ---------------------------------------------------------------- */
/* queue */

int
rm_queue_init(struct rm_queue *q, uint32_t cap)
{
	/* not zeroed: a slot is written (rm_queue_push) before it is read */
	q->f = malloc((size_t)cap * sizeof(*q->f));
	q->cap = cap;
	q->head = q->n = 0;
	return q->f ? 0 : -1;
}

void
rm_queue_free(struct rm_queue *q)
{
	free(q->f);
	q->f = NULL;
}

bool
rm_queue_push(struct rm_queue *q, const uint8_t *buf, uint32_t len)
{
	struct rm_frame *f;

	if (q->n == q->cap || len > RM_FRAME_MAX)
		return false;
	f = &q->f[(q->head + q->n) % q->cap];
	memcpy(f->buf, buf, len);
	f->len = len;
	q->n++;
	return true;
}

/* A frame's bytes only, not the whole buffer: copying 1.6 KB buffers was
 * an eighth of a closed fuzzer run's time (perf). */
static inline void
frame_copy(struct rm_frame *dst, const struct rm_frame *src)
{
	memcpy(dst->buf, src->buf, src->len);
	dst->len = src->len;
}

bool
rm_queue_take(struct rm_queue *q, uint32_t i, struct rm_frame *out)
{
	if (i >= q->n)
		return false;
	frame_copy(out, &q->f[(q->head + i) % q->cap]);
	/* close the gap: shift the older ones up by one */
	for (uint32_t k = i; k > 0; k--)
		frame_copy(&q->f[(q->head + k) % q->cap], &q->f[(q->head + k - 1) % q->cap]);
	q->head = (q->head + 1) % q->cap;
	q->n--;
	return true;
}

/* ---------------------------------------------------------------- */
/* frames */

static void
put16(uint8_t *p, uint16_t v)
{
	v = rte_cpu_to_be_16(v);
	memcpy(p, &v, 2);
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
}

static void
put64(uint8_t *p, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p, &v, 8);
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return rte_be_to_cpu_64(v);
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return rte_be_to_cpu_32(v);
}

uint32_t
rm_build(uint8_t *out, const struct rm_addr *a, uint8_t opcode, uint32_t psn,
	 bool ackreq, const uint8_t *ext, uint32_t ext_len,
	 const uint8_t *payload, uint32_t plen)
{
	uint32_t pad = (4 - (plen & 3)) & 3;
	uint32_t udp_len = 8 + 12 + ext_len + plen + pad + 4;
	uint32_t ip_len = 20 + udp_len;
	uint8_t *ip = out + 14, *udp = ip + 20, *bth = udp + 8;
	struct roce_pkt p;

	memcpy(out, a->dst_mac, 6);
	memcpy(out + 6, a->src_mac, 6);
	put16(out + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0x02;
	put16(ip + 2, (uint16_t)ip_len);
	put16(ip + 4, 0x1234);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	put16(ip + 10, 0);
	memcpy(ip + 12, &a->src_ip, 4);
	memcpy(ip + 16, &a->dst_ip, 4);
	put16(udp, 0xc000);
	put16(udp + 2, ROCE_UDP_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	put16(udp + 6, 0);
	bth[0] = opcode;
	bth[1] = (uint8_t)(0x40 | (pad << 4));
	put16(bth + 2, 0xffff);
	put32(bth + 4, a->dest_qpn & ROCE_QPN_MASK);
	put32(bth + 8, (ackreq ? ROCE_BTH_ACKREQ : 0) | (psn & ROCE_PSN_MASK));
	if (ext_len)
		memcpy(bth + 12, ext, ext_len);
	if (plen)
		memcpy(bth + 12 + ext_len, payload, plen);
	memset(bth + 12 + ext_len + plen, 0, pad + 4);
	if (roce_parse(out, 14 + ip_len, &p) != ROCE_OK) {
		fprintf(stderr, "rm_build: opcode 0x%x does not parse\n", opcode);
		abort();
	}
	roce_ip_cksum_update(out, &p);
	roce_icrc_update(out, &p);
	return 14 + ip_len;
}

/* ---------------------------------------------------------------- */
/* responder */

int
rm_responder_init(struct rm_responder *r, uint32_t ip, uint64_t base,
		  uint32_t mem_len, uint32_t rkey, bool coalesce)
{
	memset(r, 0, sizeof(*r));
	r->ip = ip;
	memcpy(r->mac, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x99 }, 6);
	r->base = base;
	r->mem_len = mem_len;
	r->rkey = rkey;
	r->coalesce = coalesce;
	r->pmtu = 1024;
	r->mem = calloc(1, mem_len);
	return r->mem ? 0 : -1;
}

void
rm_responder_free(struct rm_responder *r)
{
	free(r->mem);
	r->mem = NULL;
}

struct rm_resp_qp *
rm_responder_add_qp(struct rm_responder *r, uint32_t qpn,
		    const struct rm_addr *to_client, uint32_t start_psn)
{
	struct rm_resp_qp *q;

	if (r->n_qps == RM_MAX_QPS)
		return NULL;
	q = &r->qps[r->n_qps++];
	memset(q, 0, sizeof(*q));
	q->qpn = qpn;
	q->to_client = *to_client;
	q->epsn = start_psn;
	return q;
}

void
rm_responder_reset_qp(struct rm_resp_qp *q, uint32_t start_psn)
{
	struct rm_addr a = q->to_client;
	uint32_t qpn = q->qpn;

	memset(q, 0, sizeof(*q));
	q->qpn = qpn;
	q->to_client = a;
	q->epsn = start_psn & ROCE_PSN_MASK;
}

uint64_t
rm_mem_get(const struct rm_responder *r, uint64_t va)
{
	return get64(r->mem + (va - r->base));
}

void
rm_mem_set(struct rm_responder *r, uint64_t va, uint64_t v)
{
	put64(r->mem + (va - r->base), v);
}

static void
send_aeth(struct rm_resp_qp *q, struct rm_queue *out, uint8_t opcode,
	  uint32_t psn, uint8_t syn, uint32_t msn, const uint64_t *orig,
	  const uint8_t *payload, uint32_t plen)
{
	uint8_t ext[12], fr[RM_FRAME_MAX];
	uint32_t n;

	put32(ext, ((uint32_t)syn << 24) | (msn & ROCE_PSN_MASK));
	if (orig)
		put64(ext + 4, *orig);
	n = rm_build(fr, &q->to_client, opcode, psn, false, ext, orig ? 12 : 4,
		     payload, plen);
	rm_queue_push(out, fr, n);
}

#define SYN_ACK 0x1f
#define SYN_NAK(code) ((uint8_t)(0x60 | (code)))

static bool
in_mr(const struct rm_responder *r, uint64_t va, uint32_t len, uint32_t rkey)
{
	return rkey == r->rkey && va >= r->base && va + len <= r->base + r->mem_len;
}

static uint64_t
atomic_apply(uint8_t opcode, const uint8_t *eth, uint64_t old)
{
	uint64_t a0 = get64(eth + 12), a1 = get64(eth + 20);

	if (opcode == ROCE_RC_COMPARE_SWAP)
		return old == a1 ? a0 : old;
	if (opcode == ROCE_RC_FETCH_ADD)
		return old + a0;
	/* masked: swap, compare, swap_mask, compare_mask */
	{
		uint64_t sm = get64(eth + 28), cm = get64(eth + 36);

		if ((old & cm) == (a1 & cm))
			return (old & ~sm) | (a0 & sm);
		return old;
	}
}

/* A remote access or invalid request NAK: with qp_errors, the QP is in
 * error from now on (as an RNIC's, or rxe's), executing nothing more. */
static void
nak_fatal(struct rm_responder *r, struct rm_resp_qp *q, struct rm_queue *out,
	  uint32_t psn, uint8_t code)
{
	send_aeth(q, out, ROCE_RC_ACKNOWLEDGE, psn, SYN_NAK(code), q->msn, NULL, NULL, 0);
	if (r->qp_errors)
		q->err = true;
}

void
rm_responder_rx(struct rm_responder *r, const uint8_t *frame, uint32_t len,
		struct rm_queue *out)
{
	uint8_t f[RM_FRAME_MAX];
	struct roce_pkt p;
	struct rm_resp_qp *q = NULL;
	const uint8_t *bth;
	uint32_t client_ip;
	int32_t d;

	if (len > RM_FRAME_MAX)
		return;
	memcpy(f, frame, len);
	if (roce_parse(f, len, &p) != ROCE_OK || !(p.oi->flags & ROCE_F_REQUEST) ||
	    p.dst_ip4 != r->ip)
		return;
	for (uint32_t i = 0; i < r->n_qps; i++)
		if (r->qps[i].qpn == p.qpn)
			q = &r->qps[i];
	if (q == NULL || !roce_icrc_verify(f, &p)) {
		r->dropped++;
		return;
	}
	if (q->err) {
		r->err_dropped++;
		r->dropped++;
		return;
	}
	/* rxe checks an RC packet's source address against the QP's peer */
	if (p.src_ip4 != q->to_client.dst_ip) {
		r->wrong_peer++;
		r->dropped++;
		return;
	}
	client_ip = p.src_ip4;
	r->cur_psn = p.psn;
	bth = f + p.bth_off;
	d = roce_psn_diff(p.psn, q->epsn);
	if (d > 0) {
		if (!q->nak_sent) {
			send_aeth(q, out, ROCE_RC_ACKNOWLEDGE, q->epsn,
				  SYN_NAK(ROCE_NAK_PSN_SEQ_ERR),
				  q->msn, NULL, NULL, 0);
			q->nak_sent = true;
			r->seq_naks++;
		}
		return;
	}
	if (d == 0 && r->rnr_every && ++r->rnr_count % r->rnr_every == 0) {
		send_aeth(q, out, ROCE_RC_ACKNOWLEDGE, p.psn,
			  roce_syndrome_make(ROCE_AETH_RNR_NAK, 1), q->msn, NULL, NULL, 0);
		r->rnr_naks++;
		return;
	}
	if (d < 0) {
		r->duplicates++;
		if (p.oi->flags & ROCE_F_ATOMIC) {
			struct rm_replay *e = &q->replay[p.psn % RM_REPLAY];

			if (e->valid && e->psn == p.psn)
				send_aeth(q, out, ROCE_RC_ATOMIC_ACKNOWLEDGE, p.psn,
					  SYN_ACK, e->msn, &e->orig, NULL, 0);
			else
				r->dropped++; /* no saved result: class D, drop */
			return;
		}
		if (p.opcode == ROCE_RC_READ_REQUEST) {
			const uint8_t *reth = bth + p.oi->off[ROCE_HDR_RETH];
			uint64_t va = get64(reth);
			uint32_t l = get32(reth + 12);

			if (in_mr(r, va, l, get32(reth + 8)) && l <= 64)
				send_aeth(q, out, ROCE_RC_READ_RESPONSE_ONLY, p.psn,
					  SYN_ACK, q->msn, NULL,
					  r->mem + (va - r->base), l);
			return;
		}
		/* duplicate WRITE/SEND: not executed again; ACK the latest */
		send_aeth(q, out, ROCE_RC_ACKNOWLEDGE,
			  roce_psn_add(q->epsn, ROCE_PSN_MASK), SYN_ACK, q->msn,
			  NULL, NULL, 0);
		return;
	}
	q->nak_sent = false;
	if (p.opcode == ROCE_RC_WRITE_ONLY) {
		const uint8_t *reth = bth + p.oi->off[ROCE_HDR_RETH];
		uint64_t va = get64(reth);
		uint32_t l = get32(reth + 12), rk = get32(reth + 8);

		if (l != (uint32_t)(p.payload_len - p.pad) ||
		    (l && !in_mr(r, va, l, rk)) ||
		    (l && va < r->wr_deny_hi && va + l > r->wr_deny_lo)) {
			nak_fatal(r, q, out, p.psn, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		for (uint32_t o = 0; o < l; o += 8) {
			uint64_t w = va + o, old = 0;

			if ((w & 7) || o + 8 > l) {
				memcpy(r->mem + (w - r->base), f + p.payload_off + o,
				       l - o < 8 ? l - o : 8);
				continue;
			}
			old = rm_mem_get(r, w);
			memcpy(r->mem + (w - r->base), f + p.payload_off + o, 8);
			if (r->on_exec)
				r->on_exec(r->ctx, r, client_ip, q->qpn, p.opcode, w, old,
					   rm_mem_get(r, w));
		}
		r->writes++;
		r->executed++;
		q->msn++;
		q->epsn = roce_psn_add(q->epsn, 1);
		if (roce_get_ackreq(f, &p)) {
			if (r->coalesce)
				q->ack_due = true;
			else
				send_aeth(q, out, ROCE_RC_ACKNOWLEDGE, p.psn, SYN_ACK,
					  q->msn, NULL, NULL, 0);
		} else if (r->coalesce) {
			q->ack_due = q->ack_due; /* nothing owed yet */
		}
		return;
	}
	if (p.opcode == ROCE_RC_READ_REQUEST) {
		const uint8_t *reth = bth + p.oi->off[ROCE_HDR_RETH];
		uint64_t va = get64(reth);
		uint32_t l = get32(reth + 12);

		if (!in_mr(r, va, l, get32(reth + 8)) || l > 64) {
			nak_fatal(r, q, out, p.psn, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		r->executed++;
		q->msn++;
		q->epsn = roce_psn_add(q->epsn, 1);
		q->ack_due = false;
		send_aeth(q, out, ROCE_RC_READ_RESPONSE_ONLY, p.psn, SYN_ACK, q->msn,
			  NULL, r->mem + (va - r->base), l);
		return;
	}
	if (p.oi->flags & ROCE_F_ATOMIC) {
		const uint8_t *eth = bth + 12;
		uint64_t va = get64(eth), old, nv;

		if (va & 7) {
			nak_fatal(r, q, out, p.psn, ROCE_NAK_INVALID_REQ);
			return;
		}
		if (!in_mr(r, va, 8, get32(eth + 8))) {
			nak_fatal(r, q, out, p.psn, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		old = rm_mem_get(r, va);
		nv = atomic_apply(p.opcode, eth, old);
		rm_mem_set(r, va, nv);
		if (r->on_exec)
			r->on_exec(r->ctx, r, client_ip, q->qpn, p.opcode, va, old, nv);
		r->atomics++;
		r->executed++;
		q->msn++;
		q->epsn = roce_psn_add(q->epsn, 1);
		q->replay[p.psn % RM_REPLAY] = (struct rm_replay){
			.psn = p.psn, .msn = q->msn, .orig = old, .valid = true };
		q->ack_due = false;
		send_aeth(q, out, ROCE_RC_ATOMIC_ACKNOWLEDGE, p.psn, SYN_ACK, q->msn,
			  &old, NULL, 0);
		return;
	}
	/* anything else: invalid request for this model */
	nak_fatal(r, q, out, p.psn, ROCE_NAK_INVALID_REQ);
}

uint32_t
rm_responder_flush(struct rm_responder *r, struct rm_queue *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->n_qps; i++) {
		struct rm_resp_qp *q = &r->qps[i];

		if (!q->ack_due)
			continue;
		send_aeth(q, out, ROCE_RC_ACKNOWLEDGE,
			  roce_psn_add(q->epsn, ROCE_PSN_MASK), SYN_ACK, q->msn,
			  NULL, NULL, 0);
		q->ack_due = false;
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- */
/* requester */

void
rm_client_error(struct rm_client *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors < RM_ERRS) {
		va_start(ap, fmt);
		vsnprintf(c->err[c->errors], sizeof(c->err[0]), fmt, ap);
		va_end(ap);
	}
	c->errors++;
}

void
rm_client_init(struct rm_client *c, int id, const struct rm_addr *to_server,
	       uint32_t qpn, uint32_t rkey, uint32_t start_psn)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->to_server = *to_server;
	c->qpn = qpn;
	c->rkey = rkey;
	c->next_psn = c->oldest = start_psn & ROCE_PSN_MASK;
	c->strict = true;
}

uint32_t
rm_client_outstanding(const struct rm_client *c)
{
	return (uint32_t)roce_psn_diff(c->next_psn, c->oldest);
}

static void
send_op(struct rm_client *c, const struct rm_op *op, struct rm_queue *out)
{
	const uint32_t k = op->psn % RM_WIN;
	uint8_t ext[44], fr[RM_FRAME_MAX];
	uint32_t n = 0;

	if (c->fc_len[k] && c->fc_psn[k] == op->psn && c->fc_qpn[k] == c->to_server.dest_qpn) {
		rm_queue_push(out, c->fc_buf[k], c->fc_len[k]);
		return;
	}

	switch (op->type) {
	case RM_CAS:
	case RM_FAA:
		put64(ext, op->va);
		put32(ext + 8, c->rkey);
		put64(ext + 12, op->a[0]);
		put64(ext + 20, op->type == RM_CAS ? op->a[1] : 0);
		n = rm_build(fr, &c->to_server, op->type == RM_CAS ?
			     ROCE_RC_COMPARE_SWAP : ROCE_RC_FETCH_ADD,
			     op->psn, true, ext, 28, NULL, 0);
		break;
	case RM_MCAS:
		put64(ext, op->va);
		put32(ext + 8, c->rkey);
		for (int i = 0; i < 4; i++)
			put64(ext + 12 + 8 * i, op->a[i]);
		n = rm_build(fr, &c->to_server, ROCE_RC_MASKED_COMPARE_SWAP,
			     op->psn, true, ext, 44, NULL, 0);
		break;
	case RM_WRITE:
	case RM_READ:
		put64(ext, op->va);
		put32(ext + 8, c->rkey);
		put32(ext + 12, op->len);
		if (op->type == RM_WRITE)
			n = rm_build(fr, &c->to_server, ROCE_RC_WRITE_ONLY, op->psn,
				     op->ackreq, ext, 16, op->data, op->len);
		else
			n = rm_build(fr, &c->to_server, ROCE_RC_READ_REQUEST,
				     op->psn, true, ext, 16, NULL, 0);
		break;
	}
	if (n <= RM_FC_MAX) {
		memcpy(c->fc_buf[k], fr, n);
		c->fc_len[k] = (uint8_t)n;
		c->fc_psn[k] = op->psn;
		c->fc_qpn[k] = c->to_server.dest_qpn;
	}
	rm_queue_push(out, fr, n);
}

bool
rm_client_post(struct rm_client *c, const struct rm_op *op, struct rm_queue *out)
{
	struct rm_op *slot = &c->ops[c->next_psn % RM_WIN];

	if (rm_client_outstanding(c) >= RM_WIN - 1 || slot->state == 1)
		return false;
	*slot = *op;
	slot->psn = c->next_psn;
	slot->msg_idx = ++c->msgs;
	slot->state = 1;
	slot->answers = 0;
	c->fc_len[slot->psn % RM_WIN] = 0;   /* a new op: its own frame */
	c->next_psn = roce_psn_add(c->next_psn, 1);
	send_op(c, slot, out);
	return true;
}

static void
retransmit_from(struct rm_client *c, uint32_t psn, struct rm_queue *out)
{
	for (uint32_t q = psn; q != c->next_psn; q = roce_psn_add(q, 1)) {
		struct rm_op *op = &c->ops[q % RM_WIN];

		if (op->state == 1 && op->psn == q) {
			send_op(c, op, out);
			c->retransmits++;
		}
	}
}

uint32_t
rm_client_timeout(struct rm_client *c, struct rm_queue *out)
{
	uint32_t n = rm_client_outstanding(c);

	if (n)
		retransmit_from(c, c->oldest, out);
	return n;
}

static void
complete(struct rm_client *c, struct rm_op *op)
{
	op->state = 2;
	op->answers++;
	c->completed++;
	c->oldest = roce_psn_add(op->psn, 1);
	if (c->done)
		c->done(c->ctx, c, op);
}

static void
check_msn(struct rm_client *c, uint32_t msn, uint32_t want, uint32_t psn,
	  const char *what)
{
	if ((msn & ROCE_PSN_MASK) != (want & ROCE_PSN_MASK))
		rm_client_error(c, "client %d: %s PSN %u MSN %u, expected %u",
				c->id, what, psn, msn, want);
	if (c->have_msn && roce_psn_diff(msn, c->last_msn) < 0)
		rm_client_error(c, "client %d: %s PSN %u MSN %u went back from %u",
				c->id, what, psn, msn, c->last_msn);
	c->last_msn = msn;
	c->have_msn = true;
}

/* Complete the writes before psn (exclusive) that a response covers.
 * Returns false if an atomic/read is among them (implicit NAK). */
static bool
complete_writes_before(struct rm_client *c, uint32_t psn, uint32_t resp_psn,
		       struct rm_queue *out)
{
	while (c->oldest != psn && rm_client_outstanding(c)) {
		struct rm_op *op = &c->ops[c->oldest % RM_WIN];

		if (op->type != RM_WRITE) {
			c->implicit_naks++;
			if (c->strict)
				rm_client_error(c, "client %d: response PSN %u covers "
						"outstanding %s PSN %u", c->id,
						resp_psn, op->type == RM_READ ?
						"READ" : "atomic", op->psn);
			retransmit_from(c, c->oldest, out);
			return false;
		}
		complete(c, op);
	}
	return true;
}

void
rm_client_rx(struct rm_client *c, const uint8_t *frame, uint32_t len,
	     struct rm_queue *out)
{
	uint8_t f[RM_FRAME_MAX];
	struct roce_pkt p;
	uint32_t P, msn = 0;
	uint8_t syn = 0;
	struct rm_op *op;

	if (len > RM_FRAME_MAX)
		return;
	memcpy(f, frame, len);
	if (roce_parse(f, len, &p) != ROCE_OK || !(p.oi->flags & ROCE_F_RESPONSE))
		return;
	if (!roce_icrc_verify(f, &p)) {
		rm_client_error(c, "client %d: response PSN %u with bad ICRC",
				c->id, p.psn);
		return;
	}
	if (p.qpn != c->qpn) {
		rm_client_error(c, "client %d: response for QPN 0x%x", c->id, p.qpn);
		return;
	}
	P = p.psn;
	if (roce_has(p.oi, ROCE_HDR_AETH)) {
		syn = roce_get_syndrome(f, &p);
		msn = roce_get_msn(f, &p);
	}
	op = &c->ops[P % RM_WIN];
	if (rm_client_outstanding(c) == 0 || roce_psn_diff(P, c->oldest) < 0 ||
	    roce_psn_diff(P, c->next_psn) >= 0) {
		/* duplicate or ghost: a requester drops it; I6 check */
		c->dup_responses++;
		if (roce_psn_diff(P, c->next_psn) >= 0) {
			c->beyond_responses++;
			c->beyond_psn = P;
		}
		/* A different value for a PSN the requester completed is a
		 * stale copy of the request answered afresh (ser_word.c S8),
		 * which a requester discards: counted, not an error.  What a
		 * requester still waiting gets is I6, judged in sim.c. */
		if (p.opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE && op->psn == P &&
		    op->state == 2 && get64(f + p.bth_off + 16) != op->result)
			c->dup_changed++;
		if (p.opcode == ROCE_RC_ACKNOWLEDGE &&
		    roce_syndrome_kind(syn) == ROCE_AETH_ACK && op->psn == P &&
		    op->state == 2 && op->type != RM_WRITE && c->strict)
			rm_client_error(c, "client %d: plain ACK for done atomic/read "
					"PSN %u", c->id, P);
		return;
	}
	if (roce_syndrome_kind(syn) == ROCE_AETH_NAK ||
	    roce_syndrome_kind(syn) == ROCE_AETH_RNR_NAK) {
		uint8_t code = roce_syndrome_value(syn);

		if (!complete_writes_before(c, P, P, out))
			return;
		if (roce_syndrome_kind(syn) == ROCE_AETH_NAK &&
		    code == ROCE_NAK_PSN_SEQ_ERR) {
			check_msn(c, msn, op->msg_idx - 1, P, "NAK");
			retransmit_from(c, P, out);
			return;
		}
		if (roce_syndrome_kind(syn) == ROCE_AETH_RNR_NAK) {
			/* what completed before P: never behind what it saw */
			if (c->have_msn && roce_psn_diff(msn, c->last_msn) < 0)
				rm_client_error(c, "client %d: RNR NAK PSN %u MSN %u went "
						"back from %u", c->id, P, msn, c->last_msn);
			retransmit_from(c, P, out);
			return;
		}
		rm_client_error(c, "client %d: NAK code %u at PSN %u", c->id, code, P);
		op->result = UINT64_MAX;
		complete(c, op);
		return;
	}
	switch (p.opcode) {
	case ROCE_RC_ACKNOWLEDGE:
		/* completes every write up to and including P */
		if (!complete_writes_before(c, roce_psn_add(P, 1), P, out))
			return;
		check_msn(c, msn, op->msg_idx, P, "ACK");
		return;
	case ROCE_RC_ATOMIC_ACKNOWLEDGE:
	case ROCE_RC_READ_RESPONSE_ONLY:
		if (!complete_writes_before(c, P, P, out))
			return;
		if ((p.opcode == ROCE_RC_READ_RESPONSE_ONLY) != (op->type == RM_READ) ||
		    (p.opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE &&
		     op->type != RM_CAS && op->type != RM_FAA && op->type != RM_MCAS)) {
			rm_client_error(c, "client %d: %s for op type %d at PSN %u",
					c->id, p.oi->name, op->type, P);
			return;
		}
		check_msn(c, msn, op->msg_idx, P, p.oi->name);
		if (p.opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE) {
			op->result = get64(f + p.bth_off + 16);
		} else {
			uint32_t l = (uint32_t)(p.payload_len - p.pad);

			memcpy(op->rdata, f + p.payload_off, l > 64 ? 64 : l);
			op->result = l >= 8 ? get64(f + p.payload_off) : 0;
		}
		complete(c, op);
		return;
	default:
		rm_client_error(c, "client %d: unexpected %s", c->id, p.oi->name);
	}
}
