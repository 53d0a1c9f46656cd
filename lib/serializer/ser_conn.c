/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_conn.c — per-packet entry points of the serializer: connections,
 * stub rings, the request path (decide, rewrite, replay) and the response
 * path (ACK → ATOMIC ACK, coalesced-ACK expansion, learning).
 *
 * Why it exists: a decision made in ser_word.c is only useful if the
 * client sees it exactly as a real atomic would have answered — once per
 * PSN, in PSN order, with the MSN it expects, identical on retransmission.
 *
 * Connections.  A request names (client IP, server IP, server QPN); its
 * responses name (server IP, client IP, client QPN).  A connection is
 * created by its first request and *paired* with its client QPN by the
 * first response whose PSN matches a stub of exactly one unpaired
 * connection between those two IPs (24-bit random initial PSNs make a
 * collision unlikely; an ambiguous match just waits for the next
 * response).  Until paired, and until the server's MSN offset is known,
 * nothing on the connection is rewritten (its atomics go real).
 *
 * Stubs.  Every request of a connection leaves a stub at ring[psn % n]:
 * opcode, whether it ends a message, the relative message count msg_seq,
 * and for managed words the decision (orig to return, value written,
 * pending/busy ownership).  Decisions are made only for the next in-order
 * PSN (the server executes nothing else); a PSN seen again while its stub
 * is live is a retransmission and gets the recorded decision (I6); a PSN
 * ahead of the sequence is forwarded untouched (the server will NAK it) or
 * dropped if it touches a managed word; a jump beyond the ring is a new
 * incarnation of the QPN and resets the connection.
 *
 * MSN.  The server's MSN after request q is msg_seq(q) + offset, the
 * offset learned from every fresh response that hits a stub.  A
 * synthesized ATOMIC ACK for q carries msg_seq(q) + offset (or, when it is
 * sent again for a retransmission, the MSN it carried the first time).
 *
 * Responses.  A response for PSN P (ACK, ATOMIC ACK, READ response with
 * AETH; NAKs for P-1) completes every PSN up to it: for each rewritten
 * atomic in [walk_from, P] not yet answered an ATOMIC ACK is synthesized
 * from the response as template and emitted before it, in PSN order; an ACK
 * whose own PSN is a rewritten atomic becomes that ATOMIC ACK in place.
 * So an ACK never implicitly acknowledges an atomic from the client's view.
 * Responses whose ICRC is bad are forwarded untouched and teach nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "ser_internal.h"

#define MAP_TOMB UINT32_MAX

/* ------------------------------------------------------------------ */
/* helpers */

static inline uint32_t
hash3(uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15ull) ^
		     ((uint64_t)b * 0xc2b2ae3d27d4eb4full) ^
		     ((uint64_t)c * 0x165667b19e3779f9ull);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

static inline struct ser_stub *
slot_of(struct ser *s, struct ser_conn *c, uint32_t psn)
{
	return &c->ring[psn & s->ring_mask];
}

/* The live stub for psn, or NULL. */
static inline struct ser_stub *
stub_at(struct ser *s, struct ser_conn *c, uint32_t psn)
{
	struct ser_stub *st = slot_of(s, c, psn);

	return st->kind != ST_EMPTY && st->psn == psn ? st : NULL;
}

bool
ser_is_server(const struct ser *s, uint32_t ip4)
{
	for (uint32_t i = 0; i < s->n_servers; i++)
		if (s->servers[i] == ip4)
			return true;
	return false;
}

static const struct ser_region_rt *
region_find(const struct ser *s, uint32_t server, uint32_t rkey, uint64_t va,
	    uint64_t len)
{
	for (uint32_t i = 0; i < s->n_regions; i++) {
		const struct ser_region *r = &s->regions[i].r;

		if (r->server_ip4 != server || (!r->any_rkey && r->rkey != rkey))
			continue;
		if (va < r->base + r->len && va + len > r->base)
			return &s->regions[i];
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* create / destroy */

static uint32_t
pow2_ge(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

struct ser *
ser_create(const struct ser_params *prm)
{
	struct ser *s;
	uint64_t words = 0;

	if (prm == NULL || (prm->n_regions && prm->regions == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s->prm = *prm;
	if (s->prm.max_words == 0)
		s->prm.max_words = 1u << 20;
	if (s->prm.max_conns == 0)
		s->prm.max_conns = 1024;
	if (s->prm.ring_size == 0)
		s->prm.ring_size = 256;
	if (s->prm.pmtu == 0)
		s->prm.pmtu = 4096;
	if (s->prm.max_refusals == 0)
		s->prm.max_refusals = 64;
	if ((s->prm.ring_size & (s->prm.ring_size - 1)) || s->prm.ring_size < 2 ||
	    s->prm.ring_size > (1u << 20))
		goto einval;

	s->regions = calloc(prm->n_regions ? prm->n_regions : 1, sizeof(*s->regions));
	s->servers = calloc(prm->n_regions ? prm->n_regions : 1, sizeof(*s->servers));
	if (s->regions == NULL || s->servers == NULL)
		goto enomem;
	for (uint32_t i = 0; i < prm->n_regions; i++) {
		const struct ser_region *r = &prm->regions[i];

		if ((r->base & 7) || (r->len & 7) || r->len == 0 ||
		    r->base + r->len < r->base)
			goto einval;
		s->regions[i].r = *r;
		s->regions[i].first_word = (uint32_t)words;
		words += r->len / 8;
		if (words > s->prm.max_words)
			goto einval;
		if (!ser_is_server(s, r->server_ip4))
			s->servers[s->n_servers++] = r->server_ip4;
	}
	s->n_regions = prm->n_regions;
	s->n_words = (uint32_t)words;
	s->words = calloc(words ? words : 1, sizeof(*s->words));
	s->conns = calloc(s->prm.max_conns, sizeof(*s->conns));
	s->stubs = calloc((size_t)s->prm.max_conns * s->prm.ring_size,
			  sizeof(*s->stubs));
	s->map_mask = pow2_ge(s->prm.max_conns * 2) - 1;
	s->req_map = calloc(s->map_mask + 1, sizeof(uint32_t));
	s->resp_map = calloc(s->map_mask + 1, sizeof(uint32_t));
	if (!s->words || !s->conns || !s->stubs || !s->req_map || !s->resp_map)
		goto enomem;
	s->ring_mask = s->prm.ring_size - 1;
	ser_reset(s);
	return s;
einval:
	ser_destroy(s);
	errno = EINVAL;
	return NULL;
enomem:
	ser_destroy(s);
	errno = ENOMEM;
	return NULL;
}

void
ser_destroy(struct ser *s)
{
	if (s == NULL)
		return;
	free(s->regions);
	free(s->servers);
	free(s->words);
	free(s->conns);
	free(s->stubs);
	free(s->req_map);
	free(s->resp_map);
	free(s);
}

void
ser_reset(struct ser *s)
{
	for (uint32_t i = 0; i < s->n_words; i++)
		ser_word_reset(&s->words[i]);
	memset(s->stubs, 0, (size_t)s->prm.max_conns * s->prm.ring_size *
	       sizeof(*s->stubs));
	memset(s->conns, 0, s->prm.max_conns * sizeof(*s->conns));
	memset(s->req_map, 0, (s->map_mask + 1) * sizeof(uint32_t));
	memset(s->resp_map, 0, (s->map_mask + 1) * sizeof(uint32_t));
	s->n_conns = 0;
	s->epoch_set = false;
}

const struct ser_counters *
ser_counters(const struct ser *s)
{
	return &s->c;
}

uint32_t
ser_conn_count(const struct ser *s)
{
	return s->n_conns;
}

enum ser_word_state
ser_word_get(const struct ser *s, uint32_t server_ip4, uint32_t rkey,
	     uint64_t va, uint64_t *value, uint32_t *inflight)
{
	const struct ser_region_rt *r = region_find(s, server_ip4, rkey, va, 8);
	const struct ser_word *w;

	if (r == NULL || (va & 7))
		return SER_WORD_NONE;
	w = &s->words[r->first_word + (va - r->r.base) / 8];
	if (value)
		*value = w->shadow;
	if (inflight)
		*inflight = (uint32_t)w->pend_cnt + w->busy;
	return w->state == W_KNOWN ? SER_WORD_KNOWN : SER_WORD_UNKNOWN;
}

/* ------------------------------------------------------------------ */
/* connection maps (open addressing, tombstones on unpair) */

static struct ser_conn *
map_find(struct ser *s, uint32_t *map, uint32_t a, uint32_t b, uint32_t q,
	 bool resp)
{
	uint32_t i = hash3(a, b, q) & s->map_mask;

	for (uint32_t n = 0; n <= s->map_mask; n++, i = (i + 1) & s->map_mask) {
		uint32_t v = map[i];
		struct ser_conn *c;

		if (v == 0)
			return NULL;
		if (v == MAP_TOMB)
			continue;
		c = &s->conns[v - 1];
		if (!resp && c->cl_ip == a && c->srv_ip == b && c->srv_qpn == q)
			return c;
		if (resp && c->paired && c->srv_ip == a && c->cl_ip == b &&
		    c->cl_qpn == q)
			return c;
	}
	return NULL;
}

static bool
map_insert(struct ser *s, uint32_t *map, uint32_t a, uint32_t b, uint32_t q,
	   uint32_t ci)
{
	uint32_t i = hash3(a, b, q) & s->map_mask;

	for (uint32_t n = 0; n <= s->map_mask; n++, i = (i + 1) & s->map_mask) {
		if (map[i] == 0 || map[i] == MAP_TOMB) {
			map[i] = ci + 1;
			return true;
		}
	}
	return false;
}

static void
map_remove(struct ser *s, uint32_t *map, uint32_t a, uint32_t b, uint32_t q,
	   uint32_t ci)
{
	uint32_t i = hash3(a, b, q) & s->map_mask;

	for (uint32_t n = 0; n <= s->map_mask; n++, i = (i + 1) & s->map_mask) {
		if (map[i] == 0)
			return;
		if (map[i] == ci + 1) {
			map[i] = MAP_TOMB;
			return;
		}
	}
}

static struct ser_conn *
conn_get(struct ser *s, uint32_t cl, uint32_t srv, uint32_t qpn, uint32_t psn)
{
	struct ser_conn *c = map_find(s, s->req_map, cl, srv, qpn, false);
	uint32_t ci;

	if (c != NULL)
		return c;
	if (s->n_conns >= s->prm.max_conns)
		return NULL;
	ci = s->n_conns;
	if (!map_insert(s, s->req_map, cl, srv, qpn, ci))
		return NULL;
	s->n_conns++;
	c = &s->conns[ci];
	memset(c, 0, sizeof(*c));
	c->cl_ip = cl;
	c->srv_ip = srv;
	c->srv_qpn = qpn;
	c->next_psn = psn;
	c->una = psn;
	c->walk_from = psn;
	c->open_word = SER_NO_WORD;
	c->ring = &s->stubs[(size_t)ci * s->prm.ring_size];
	memset(c->ring, 0, s->prm.ring_size * sizeof(*c->ring));
	return c;
}

static inline uint32_t
conn_index(const struct ser *s, const struct ser_conn *c)
{
	return (uint32_t)(c - s->conns);
}

/* Give back whatever a stub holds on words; the outcome is unknown. */
static void
stub_abandon(struct ser *s, struct ser_stub *st)
{
	if (st->flags & SF_PENDING)
		ser_word_pending_done(s, st->word, st->pend_gen, st->wval, false);
	if (st->flags & SF_BUSY)
		for (uint32_t i = 0; i < st->nwords; i++)
			ser_word_busy_done(s, st->word + i, true);
	if (st->kind == ST_REAL && !(st->flags & SF_ANSWERED))
		ser_word_busy_done(s, st->word, true);
	st->flags &= (uint16_t)~(SF_PENDING | SF_BUSY);
	st->kind = ST_EMPTY;
}

static void
conn_restart(struct ser *s, struct ser_conn *c, uint32_t psn)
{
	for (uint32_t i = 0; i < s->prm.ring_size; i++)
		if (c->ring[i].kind != ST_EMPTY)
			stub_abandon(s, &c->ring[i]);
	if (c->open_word != SER_NO_WORD)
		for (uint32_t i = 0; i < c->open_nwords; i++)
			ser_word_busy_done(s, c->open_word + i, true);
	if (c->paired)
		map_remove(s, s->resp_map, c->srv_ip, c->cl_ip, c->cl_qpn,
			   conn_index(s, c));
	c->paired = 0;
	c->msn_known = 0;
	c->in_write = 0;
	c->nodecide = 0;
	c->last_was_read = 0;
	c->open_word = SER_NO_WORD;
	c->open_nwords = 0;
	c->next_psn = c->una = c->walk_from = psn;
	c->msgs = 0;
	s->c.conn_reset++;
}

/* ------------------------------------------------------------------ */
/* request path */

struct req_class {
	uint32_t word;    /* first word touched, SER_NO_WORD if none */
	uint16_t nwords;
	bool atomic;      /* atomic on exactly one aligned word */
	bool single_write;/* 8-byte aligned WRITE_ONLY of one word */
	struct ser_op op;
};

static void
classify(struct ser *s, uint8_t *f, const struct roce_pkt *p,
	 struct ser_conn *c, struct req_class *rc)
{
	const struct roce_opcode_info *oi = p->oi;
	const struct ser_region_rt *r;

	memset(rc, 0, sizeof(*rc));
	rc->word = SER_NO_WORD;
	if (oi->flags & ROCE_F_ATOMIC) {
		const uint8_t *eth = f + p->bth_off +
			oi->off[p->opcode == ROCE_RC_MASKED_COMPARE_SWAP ?
				ROCE_HDR_MASKED_ATOMIC_ETH : ROCE_HDR_ATOMIC_ETH];
		uint64_t va = roce_ld64(eth);
		uint32_t rkey = roce_ld32(eth + 8);

		r = region_find(s, p->dst_ip4, rkey, va, 8);
		if (r == NULL)
			return;
		if (va & 7) {
			/* the server NAKs a misaligned atomic but would
			 * accept a WRITE: never rewrite it */
			s->c.misaligned_passed++;
			return;
		}
		rc->word = r->first_word + (uint32_t)((va - r->r.base) / 8);
		rc->nwords = 1;
		rc->atomic = true;
		if (p->opcode == ROCE_RC_COMPARE_SWAP) {
			rc->op.kind = SER_OP_CAS;
			rc->op.arg[0] = roce_ld64(eth + 12);
			rc->op.arg[1] = roce_ld64(eth + 20);
		} else if (p->opcode == ROCE_RC_FETCH_ADD) {
			rc->op.kind = SER_OP_FAA;
			rc->op.arg[0] = roce_ld64(eth + 12);
		} else {
			rc->op.kind = SER_OP_MCAS;
			for (int i = 0; i < 4; i++)
				rc->op.arg[i] = roce_ld64(eth + 12 + 8 * i);
		}
		return;
	}
	if (!(oi->flags & ROCE_F_WRITE))
		return;
	if (roce_has(oi, ROCE_HDR_RETH)) {
		const uint8_t *reth = f + p->bth_off + oi->off[ROCE_HDR_RETH];
		uint64_t va = roce_ld64(reth), lo, hi;
		uint32_t rkey = roce_ld32(reth + 8), len = roce_ld32(reth + 12);
		uint64_t nw;

		if (len == 0)
			return;
		r = region_find(s, p->dst_ip4, rkey, va, len);
		if (r == NULL)
			return;
		lo = RTE_MAX(va, r->r.base);
		hi = RTE_MIN(va + len, r->r.base + r->r.len);
		rc->word = r->first_word + (uint32_t)((lo - r->r.base) / 8);
		nw = (hi - r->r.base + 7) / 8 - (lo - r->r.base) / 8;
		rc->nwords = (uint16_t)RTE_MIN(nw, (uint64_t)UINT16_MAX);
		if ((oi->flags & ROCE_F_ONLY) == ROCE_F_ONLY && len == 8 &&
		    !(va & 7) && p->payload_len >= 8 + p->pad) {
			rc->single_write = true;
			rc->op.kind = SER_OP_WRITE;
			rc->op.arg[0] = roce_ld64(f + p->payload_off);
		}
		return;
	}
	/* WRITE_MIDDLE/LAST: part of the connection's open write */
	if (c->open_word != SER_NO_WORD) {
		rc->word = c->open_word;
		rc->nwords = c->open_nwords;
	}
}

static inline void
set_ackreq(uint8_t *f, const struct roce_pkt *p)
{
	f[p->bth_off + 8] |= 0x80;
}

/* Rewrite a decided atomic (fresh or replayed) into its WRITE. */
static int
apply_rewrite(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	      struct roce_pkt *p, const struct ser_stub *st)
{
	if (!s->prm.no_force_ackreq)
		set_ackreq(f, p);
	return roce_atomic_to_write(f, len, cap, p,
				    (st->flags & SF_ZERO_LEN) ? NULL : &st->wval);
}

static enum ser_verdict
replay(struct ser *s, struct ser_conn *c, struct ser_stub *st, uint8_t *f,
       uint32_t *len, uint32_t cap, struct roce_pkt *p)
{
	if (st->opcode != p->opcode) {
		/* Not the request this PSN carried (e.g. a READ's span was
		 * overestimated: pmtu below the path MTU).  Decisions after
		 * it were made without it: nothing can repair that, so it
		 * must not reach a managed word. */
		struct req_class rc;

		classify(s, f, p, c, &rc);
		s->c.psn_out_of_window++;
		if (rc.word != SER_NO_WORD || st->kind == ST_REWRITTEN ||
		    st->kind == ST_REAL || st->kind == ST_WRITE) {
			s->c.dropped++;
			return SER_DROP;
		}
		return SER_FORWARD;
	}
	if (st->kind == ST_REWRITTEN) {
		if (!roce_icrc_verify(f, p)) {
			s->c.bad_icrc_passed++;
			return SER_FORWARD;
		}
		s->c.dup_replayed++;
		st->flags &= (uint16_t)~SF_ANSWERED;
		if (roce_psn_diff(st->psn, c->walk_from) < 0)
			c->walk_from = st->psn;
		if (apply_rewrite(s, f, len, cap, p, st) != 0) {
			s->c.dropped++;
			return SER_DROP;
		}
		return SER_FORWARD_REWRITTEN;
	}
	if (st->kind == ST_REAL) {
		s->c.dup_replayed++;
		return SER_FORWARD;
	}
	if ((st->flags & SF_ACKREQ) && !roce_get_ackreq(f, p)) {
		if (!roce_icrc_verify(f, p)) {
			s->c.bad_icrc_passed++;
			return SER_FORWARD;
		}
		set_ackreq(f, p);
		roce_icrc_update(f, p);
		s->c.dup_replayed++;
		return SER_FORWARD_REWRITTEN;
	}
	return SER_FORWARD;
}

/*
 * The last READ spanned more PSNs than the configured pmtu implies: take
 * psn (ahead) as the next in-order PSN.  Unseen PSNs may lie before it, so no
 * decision is made on this connection until the server has answered
 * everything up to psn (then nothing unseen can still execute before a
 * decision).
 */
static void
read_span_fix(struct ser *s, struct ser_conn *c, uint32_t psn)
{
	c->next_psn = psn;
	c->nodecide = 1;
	c->nodecide_until = psn;
	c->last_was_read = 0;
	s->c.read_span_fixed++;
}

/*
 * A PSN below the sequence that left no stub: it was sent before the
 * connection's first request reached us (a new connection whose first
 * packet was lost or reordered, or a retransmission from before a
 * restart).  Nothing is decided for it: an atomic goes real, a write to a
 * word is unmodelled, both tracked in a stub so their effect on the words
 * is accounted for; it does not count towards the MSN (the offset
 * re-learned from the next response absorbs it).
 */
static enum ser_verdict
behind(struct ser *s, struct ser_conn *c, uint8_t *f, struct roce_pkt *p,
       const struct req_class *rc, uint64_t now)
{
	struct ser_stub *st = slot_of(s, c, p->psn);
	uint64_t orig, wval;
	bool pending;

	if (rc->word == SER_NO_WORD)
		return SER_FORWARD;
	if (st->kind != ST_EMPTY && roce_psn_diff(st->psn, c->una) >= 0) {
		s->c.psn_out_of_window++;
		s->c.dropped++;
		return SER_DROP;
	}
	if (!rc->atomic && !rc->single_write) {
		s->c.psn_out_of_window++;
		s->c.dropped++;
		return SER_DROP;
	}
	if (!roce_icrc_verify(f, p)) {
		s->c.bad_icrc_passed++;
		return SER_FORWARD;
	}
	if (rc->atomic &&
	    ser_word_decide(s, rc->word, conn_index(s, c), &rc->op, now, false,
			    &orig, &wval, &pending) == SD_DROP) {
		s->c.dropped++;
		return SER_DROP;
	}
	if (st->kind != ST_EMPTY)
		stub_abandon(s, st);
	memset(st, 0, sizeof(*st));
	st->psn = p->psn;
	st->opcode = p->opcode;
	st->word = rc->word;
	st->nwords = 1;
	st->npsn = 1;
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
	return SER_FORWARD;
}

enum ser_verdict
ser_on_request(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
	       struct roce_pkt *p, uint64_t now)
{
	const struct roce_opcode_info *oi = p->oi;
	struct ser_conn *c;
	struct ser_stub *st;
	struct req_class rc;
	uint32_t psn, npsn, ci;
	int32_t d;
	bool msg_end, may_rewrite, storable, pending;
	enum ser_verdict v = SER_FORWARD;

	if (p->ip_version != 4 || (oi->flags & (ROCE_F_REQUEST | ROCE_F_RC)) !=
	    (ROCE_F_REQUEST | ROCE_F_RC) || !ser_is_server(s, p->dst_ip4))
		return SER_FORWARD;
	s->c.req_seen++;
	if (!s->epoch_set) {
		s->epoch = now;
		s->epoch_set = true;
	}
	psn = p->psn;
	c = conn_get(s, p->src_ip4, p->dst_ip4, p->qpn, psn);
	if (c == NULL) {
		/* No state for this QP: nothing on it is decided.  Its ops on
		 * managed words pass as they are if that cannot race another
		 * connection's pending write; those words are then given up
		 * (never decided on again: their changes are invisible). */
		s->c.table_full++;
		classify(s, f, p, &(struct ser_conn){ .open_word = SER_NO_WORD }, &rc);
		for (uint32_t i = 0; rc.word != SER_NO_WORD && i < rc.nwords; i++) {
			if (!ser_word_untracked(s, rc.word + i, rc.atomic || rc.single_write ?
						&rc.op : &(struct ser_op){ 0 })) {
				s->c.dropped++;
				return SER_DROP;
			}
		}
		return SER_FORWARD;
	}
	ci = conn_index(s, c);

	st = stub_at(s, c, psn);
	d = roce_psn_diff(psn, c->next_psn);
	if (st != NULL && d < 0)
		return replay(s, c, st, f, len, cap, p);
	if (d > 0 && c->last_was_read && roce_psn_diff(psn, c->read_maxend) < 0) {
		/* the READ was longer than pmtu said (pmtu is an upper
		 * bound: spans are never overestimated) */
		read_span_fix(s, c, psn);
		d = 0;
	}
	if (d > (int32_t)s->prm.ring_size || d < -(int32_t)s->prm.ring_size) {
		conn_restart(s, c, psn);
		d = 0;
	}
	classify(s, f, p, c, &rc);
	if (d < 0)
		return behind(s, c, f, p, &rc, now);
	if (d != 0) {
		/* ahead: the server will NAK it; behind with no stub: we
		 * cannot know what it was.  Either way decide nothing. */
		s->c.psn_out_of_window++;
		if (rc.word != SER_NO_WORD) {
			s->c.dropped++;
			return SER_DROP;
		}
		return SER_FORWARD;
	}

	/* in order: a fresh request */
	if (rc.word != SER_NO_WORD && (rc.atomic || rc.single_write) &&
	    !roce_icrc_verify(f, p)) {
		/* the server drops it: it consumes no PSN, gets no stub */
		s->c.bad_icrc_passed++;
		return SER_FORWARD;
	}
	st = slot_of(s, c, psn);
	storable = st->kind == ST_EMPTY || roce_psn_diff(st->psn, c->una) < 0;
	if (!storable) {
		s->c.stub_ring_full++;
		if (rc.word != SER_NO_WORD) {
			s->c.dropped++;
			return SER_DROP;
		}
	} else if (st->kind != ST_EMPTY) {
		stub_abandon(s, st);
	}
	npsn = (oi->flags & ROCE_F_READ) ? roce_req_psns(f, p, s->prm.pmtu) : 1;
	if (npsn == 0 || npsn > s->prm.ring_size)
		npsn = 1;
	msg_end = (oi->flags & (ROCE_F_LAST | ROCE_F_READ | ROCE_F_ATOMIC)) != 0;

	if (!storable) {
		/* forwarded untracked; the message count stays right */
		c->msgs += msg_end;
		c->next_psn = roce_psn_add(psn, npsn);
		return SER_FORWARD;
	}

	memset(st, 0, sizeof(*st));
	st->psn = psn;
	st->opcode = p->opcode;
	st->kind = ST_PLAIN;
	st->word = SER_NO_WORD;
	st->npsn = (uint8_t)RTE_MIN(npsn, 255u);

	if (rc.atomic) {
		uint64_t orig = 0, wval = 0;
		enum ser_decision dec;

		if (c->nodecide && roce_psn_diff(c->una, c->nodecide_until) > 0)
			c->nodecide = 0;
		may_rewrite = c->paired && c->msn_known && !c->nodecide;
		dec = ser_word_decide(s, rc.word, ci, &rc.op, now, may_rewrite,
				      &orig, &wval, &pending);
		if (dec == SD_DROP) {
			st->kind = ST_EMPTY;
			s->c.dropped++;
			return SER_DROP;
		}
		st->word = rc.word;
		st->nwords = 1;
		st->op = rc.op;
		if (dec == SD_PASS_REAL) {
			st->kind = ST_REAL;
			if (now - s->epoch < s->prm.learn_holdoff_tsc)
				st->flags |= SF_NOLEARN;
		} else {
			st->kind = ST_REWRITTEN;
			st->orig = orig;
			if (dec == SD_ZERO) {
				st->flags |= SF_ZERO_LEN;
			} else {
				st->wval = wval;
				if (pending) {
					st->flags |= SF_PENDING;
					st->pend_gen = s->words[rc.word].pend_gen;
				}
			}
			if (apply_rewrite(s, f, len, cap, p, st) != 0) {
				/* cannot happen (the frame shrinks); stay safe */
				stub_abandon(s, st);
				s->c.dropped++;
				return SER_DROP;
			}
			v = SER_FORWARD_REWRITTEN;
		}
	} else if (rc.single_write) {
		st->kind = ST_WRITE;
		st->word = rc.word;
		st->nwords = 1;
		st->wval = rc.op.arg[0];
		if (ser_word_write(s, rc.word, ci, rc.op.arg[0], now, &pending)) {
			if (pending) {
				st->flags |= SF_PENDING;
				st->pend_gen = s->words[rc.word].pend_gen;
			}
		} else {
			st->flags |= SF_BUSY;
		}
		if (!s->prm.no_force_ackreq && !roce_get_ackreq(f, p)) {
			set_ackreq(f, p);
			roce_icrc_update(f, p);
			st->flags |= SF_ACKREQ;
			s->c.ackreq_set++;
			v = SER_FORWARD_REWRITTEN;
		}
	} else if (rc.word != SER_NO_WORD) {
		/* a write the shadow cannot follow: words stay busy until
		 * the ACK covering its last packet */
		if (roce_has(oi, ROCE_HDR_RETH)) {
			for (uint32_t i = 0; i < rc.nwords; i++)
				ser_word_busy_take(s, rc.word + i);
			for (uint32_t i = 0; i < rc.nwords; i++)
				s->words[rc.word + i].flags |= WF_DIRTY;
			s->c.write_unmodelled++;
		}
		if (oi->flags & ROCE_F_LAST) {
			st->kind = ST_WRITE;
			st->word = rc.word;
			st->nwords = rc.nwords;
			st->flags |= SF_BUSY;
			c->open_word = SER_NO_WORD;
			c->open_nwords = 0;
		} else if (oi->flags & ROCE_F_FIRST) {
			c->open_word = rc.word;
			c->open_nwords = rc.nwords;
		}
	}

	if (msg_end) {
		c->msgs++;
		st->flags |= SF_MSG_END;
	}
	st->msg_seq = c->msgs;
	st->flags |= SF_MSN_VALID;
	/* continuation PSNs of a multi-PSN READ */
	for (uint32_t i = 1; i < npsn; i++) {
		struct ser_stub *cs = slot_of(s, c, roce_psn_add(psn, i));

		if (cs->kind != ST_EMPTY) {
			if (roce_psn_diff(cs->psn, c->una) >= 0)
				continue; /* live: leave it alone */
			stub_abandon(s, cs);
		}
		memset(cs, 0, sizeof(*cs));
		cs->kind = ST_CONT;
		cs->psn = roce_psn_add(psn, i);
		cs->opcode = p->opcode;
		cs->word = SER_NO_WORD;
		cs->msg_seq = st->msg_seq;
		cs->flags = SF_MSN_VALID;
	}
	c->next_psn = roce_psn_add(psn, npsn);
	c->last_was_read = 0;
	if (oi->flags & ROCE_F_READ) {
		/* its span for the smallest MTU (256): a later PSN up to
		 * here may still be the next request */
		const uint8_t *reth = f + p->bth_off + oi->off[ROCE_HDR_RETH];
		uint32_t l = roce_ld32(reth + 12);

		c->last_was_read = 1;
		c->read_maxend = roce_psn_add(psn, l ? (l + 255) / 256 + 1 : 2);
	}
	return v;
}

/* ------------------------------------------------------------------ */
/* response path */

/* Pair a response with the one unpaired connection that has a stub at
 * its PSN. */
static struct ser_conn *
conn_pair(struct ser *s, const struct roce_pkt *p)
{
	struct ser_conn *found = NULL;

	for (uint32_t i = 0; i < s->n_conns; i++) {
		struct ser_conn *c = &s->conns[i];

		if (c->paired || c->srv_ip != p->src_ip4 || c->cl_ip != p->dst_ip4)
			continue;
		if (stub_at(s, c, p->psn) == NULL)
			continue;
		if (found != NULL)
			return NULL; /* ambiguous: wait for another response */
		found = c;
	}
	if (found == NULL)
		return NULL;
	if (!map_insert(s, s->resp_map, p->src_ip4, p->dst_ip4, p->qpn,
			conn_index(s, found)))
		return NULL;
	found->cl_qpn = p->qpn;
	found->paired = 1;
	s->c.paired++;
	return found;
}

static inline bool
needs_answer(const struct ser_stub *st)
{
	return st->kind == ST_REWRITTEN && !(st->flags & SF_ANSWERED);
}

enum ser_verdict
ser_on_response(struct ser *s, uint8_t *f, uint32_t *len, uint32_t cap,
		struct roce_pkt *p, uint64_t now, struct ser_emit *emit,
		uint32_t emit_cap, uint32_t *n_emit)
{
	const struct roce_opcode_info *oi = p->oi;
	struct ser_conn *c;
	struct ser_stub *sp, *st;
	uint32_t P = p->psn, upto, from, msn = 0, off;
	uint8_t syn = 0, kind = ROCE_AETH_ACK, ack_syn;
	bool has_aeth, fresh, inplace = false, ack_point, cut = false;
	int32_t span;
	enum ser_verdict v = SER_FORWARD;

	(void)now;
	*n_emit = 0;
	if (p->ip_version != 4 || (oi->flags & (ROCE_F_RESPONSE | ROCE_F_RC)) !=
	    (ROCE_F_RESPONSE | ROCE_F_RC) || !ser_is_server(s, p->src_ip4))
		return SER_FORWARD;
	s->c.resp_seen++;
	c = map_find(s, s->resp_map, p->src_ip4, p->dst_ip4, p->qpn, true);
	if (c == NULL)
		c = conn_pair(s, p);
	if (c == NULL) {
		s->c.unknown_qp++;
		return SER_FORWARD;
	}
	if (!roce_icrc_verify(f, p)) {
		s->c.resp_bad_icrc++;
		return SER_FORWARD;
	}
	has_aeth = roce_has(oi, ROCE_HDR_AETH);
	if (has_aeth) {
		syn = roce_get_syndrome(f, p);
		kind = roce_syndrome_kind(syn);
		msn = roce_get_msn(f, p);
	}
	/* the last PSN this response completes */
	ack_point = has_aeth;
	if (!has_aeth)
		upto = 0;
	else if (kind != ROCE_AETH_ACK || p->opcode == ROCE_RC_READ_RESPONSE_FIRST)
		upto = roce_psn_add(P, ROCE_PSN_MASK); /* P - 1 */
	else
		upto = P;
	if (ack_point && roce_psn_diff(upto, c->next_psn) >= 0)
		upto = roce_psn_add(c->next_psn, ROCE_PSN_MASK); /* never past what we sent */
	fresh = roce_psn_diff(P, c->una) >= 0;
	sp = stub_at(s, c, P);

	/* the server's MSN offset, from a fresh completion hitting a stub */
	if (has_aeth && kind == ROCE_AETH_ACK && fresh && sp != NULL &&
	    (sp->flags & SF_MSN_VALID) && p->opcode != ROCE_RC_READ_RESPONSE_FIRST) {
		c->msn_off = (msn - sp->msg_seq) & ROCE_PSN_MASK;
		c->msn_known = 1;
	}
	off = c->msn_off;
	inplace = p->opcode == ROCE_RC_ACKNOWLEDGE && kind == ROCE_AETH_ACK &&
		  sp != NULL && sp->kind == ST_REWRITTEN;
	ack_syn = kind == ROCE_AETH_ACK && has_aeth ? syn :
		  roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID);

	/* walk [walk_from, upto]: retire word effects, answer rewritten atomics */
	if (ack_point && (span = roce_psn_diff(upto, c->walk_from)) >= 0) {
		from = c->walk_from;
		if (span >= (int32_t)s->prm.ring_size)
			from = roce_psn_add(upto, ROCE_PSN_MASK - s->prm.ring_size + 2);
		for (uint32_t q = from;; q = roce_psn_add(q, 1)) {
			st = stub_at(s, c, q);
			if (st != NULL) {
				if (st->flags & SF_PENDING) {
					ser_word_pending_done(s, st->word, st->pend_gen,
							      st->wval, true);
					st->flags &= (uint16_t)~SF_PENDING;
				}
				if (st->flags & SF_BUSY) {
					for (uint32_t i = 0; i < st->nwords; i++)
						ser_word_busy_done(s, st->word + i, false);
					st->flags &= (uint16_t)~SF_BUSY;
				}
				if (needs_answer(st) && !(inplace && q == P)) {
					struct roce_pkt op;
					uint32_t m = (st->flags & SF_SENT_MSN) ? st->msn_sent :
						     (st->msg_seq + off) & ROCE_PSN_MASK;
					int n;

					if (*n_emit >= emit_cap) {
						cut = true;
						break;
					}
					n = roce_build_ack(emit[*n_emit].buf, SER_EMIT_BUF, f, p,
							   q, ack_syn, m, true, st->orig, &op);
					if (n < 0) {
						cut = true;
						break;
					}
					emit[*n_emit].len = (uint32_t)n;
					(*n_emit)++;
					st->flags |= SF_ANSWERED | SF_SENT_MSN;
					st->msn_sent = m;
					s->c.acks_synthesized++;
				}
			}
			if (q == upto)
				break;
		}
		if (cut) {
			/* Out of emit room: the response must not acknowledge
			 * the atomics left unanswered.  The client will time
			 * out and retransmit; the replay answers them. */
			s->c.emit_full++;
			for (uint32_t q = from;; q = roce_psn_add(q, 1)) {
				st = stub_at(s, c, q);
				if (st != NULL && needs_answer(st) && !(inplace && q == P)) {
					c->walk_from = q;
					break;
				}
				if (q == upto)
					break;
			}
			if (roce_psn_diff(c->una, c->walk_from) > 0)
				c->una = c->walk_from;
			return SER_DROP;
		}
		c->walk_from = roce_psn_add(upto, 1);
		if (roce_psn_diff(c->walk_from, c->una) > 0)
			c->una = c->walk_from;
	}

	if (sp == NULL)
		return SER_FORWARD;

	/* the response's own PSN */
	if (p->opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE) {
		uint64_t orig = roce_ld64(f + p->bth_off + oi->off[ROCE_HDR_ATOMIC_ACK_ETH]);

		if (sp->kind == ST_REAL) {
			if (sp->flags & SF_ANSWERED)
				;
			else if (sp->flags & SF_NOLEARN)
				ser_word_busy_done(s, sp->word, true);
			else
				ser_word_real_done(s, sp->word, &sp->op, true, orig);
		} else if (sp->kind == ST_REWRITTEN) {
			/* the server ran an atomic we replaced: our model of
			 * this word is not what happened */
			s->c.resp_mismatch++;
			ser_word_mark_dirty(s, sp->word);
		}
		sp->flags |= SF_ANSWERED;
		return SER_FORWARD;
	}
	if (has_aeth && kind != ROCE_AETH_ACK) {
		uint8_t code = roce_syndrome_value(syn);

		s->c.naks++;
		if (kind == ROCE_AETH_NAK && code != ROCE_NAK_PSN_SEQ_ERR) {
			/* P was refused, not executed */
			if (sp->kind == ST_REWRITTEN) {
				s->c.nak_on_rewritten++;
				if (sp->flags & SF_PENDING) {
					ser_word_pending_done(s, sp->word, sp->pend_gen,
							      sp->wval, false);
					sp->flags &= (uint16_t)~SF_PENDING;
				}
				ser_word_norewrite(s, sp->word);
			} else if (sp->kind == ST_REAL && !(sp->flags & SF_ANSWERED)) {
				ser_word_real_done(s, sp->word, &sp->op, false, 0);
			} else if (sp->flags & SF_PENDING) {
				ser_word_pending_done(s, sp->word, sp->pend_gen,
						      sp->wval, false);
				sp->flags &= (uint16_t)~SF_PENDING;
			}
			sp->flags |= SF_ANSWERED;
		}
		return SER_FORWARD;
	}
	if (!fresh && p->opcode == ROCE_RC_ACKNOWLEDGE && !inplace &&
	    (sp->kind == ST_REAL || sp->kind == ST_CONT ||
	     (roce_opcode(sp->opcode)->flags & ROCE_F_READ))) {
		/* A plain ACK naming a READ's or an atomic's PSN that an
		 * earlier response already covered: a responder's answer to
		 * a duplicate WRITE is an ACK of its latest PSN (rxe's
		 * duplicate_request), whatever that PSN was.  It completes
		 * nothing the client has not been answered, and a plain ACK
		 * is not an answer a client can take for a READ or an atomic
		 * (I3): the client must not see it. */
		s->c.dup_ack_dropped++;
		return SER_DROP;
	}
	if (sp->kind == ST_REAL && p->opcode == ROCE_RC_ACKNOWLEDGE &&
	    !(sp->flags & SF_ANSWERED)) {
		/* a plain ACK where the server owed an ATOMIC ACK */
		s->c.resp_mismatch++;
		ser_word_real_done(s, sp->word, &sp->op, false, 0);
		ser_word_mark_dirty(s, sp->word);
		sp->flags |= SF_ANSWERED;
		return SER_FORWARD;
	}
	if (inplace) {
		uint32_t m = (sp->flags & SF_SENT_MSN) ? sp->msn_sent : msn;

		if (m != msn)
			roce_set_aeth(f, p, syn, m);
		if (roce_ack_to_atomic_ack(f, len, cap, p, sp->orig) != 0) {
			if (m != msn) {
				roce_set_aeth(f, p, syn, msn);
			}
			s->c.emit_full++;
			return SER_DROP;
		}
		sp->flags |= SF_ANSWERED | SF_SENT_MSN;
		sp->msn_sent = m;
		s->c.ack_to_atomic_ack++;
		v = SER_FORWARD_REWRITTEN;
	}
	return v;
}
