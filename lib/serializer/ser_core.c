/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_core.c — the serializer's life cycle and its per-connection state.
 *
 * Why it exists: connections (identity, incarnation, window, age) are
 * lib/rc's; what the serializer keeps per connection (stub ring, MSN
 * offset, answer walk) must follow their lives exactly.  State is tagged
 * with the incarnation it belongs to; when a life ends (lib/rc calls
 * conn_end before it changes anything) every stub's hold on a word is
 * orphaned (ser_word.c S7) so nothing outlives its connection, and nothing
 * of one life is ever read as another's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ser_internal.h"

bool
ser_is_server(const struct ser *s, uint32_t ip4)
{
	for (uint32_t i = 0; i < s->n_servers; i++)
		if (s->servers[i] == ip4)
			return true;
	return false;
}

const struct ser_region_rt *
ser_region_find(const struct ser *s, uint32_t server, uint32_t rkey, uint64_t va,
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
/* connection lives */

/* Give back whatever a stub holds on words; swordd will never see its
 * outcome. */
void
ser_stub_orphan(struct ser *s, struct ser_stub *st, uint64_t now)
{
	/* a pending write keeps gating under its old owner until it
	 * expires (S7): it may still land, or never */
	if (st->flags & SF_PENDING)
		ser_word_pending_orphan(s, st->word);
	if (st->flags & SF_BUSY)
		for (uint32_t i = 0; i < st->nwords; i++)
			ser_word_orphan_busy(s, st->word + i, now);
	if (st->kind == ST_REAL && !(st->flags & SF_ANSWERED)) {
		ser_word_untag(s, st, false);
		ser_word_orphan_busy(s, st->word, now);
	}
	st->flags &= (uint16_t)~(SF_PENDING | SF_BUSY);
	st->kind = ST_EMPTY;
}

void
ser_close_open_write(struct ser *s, struct ser_conn *sc, uint64_t now)
{
	for (uint32_t w = 0; sc->open_word != SER_NO_WORD && w < sc->open_nwords; w++)
		ser_word_orphan_busy(s, sc->open_word + w, now);
	sc->open_word = SER_NO_WORD;
	sc->open_nwords = 0;
}

void
ser_untrack_unpaired(struct ser *s, uint32_t srv_ip, uint32_t cl_ip, uint64_t now)
{
	for (uint32_t i = 0; i < rc_capacity(s->rc); i++) {
		struct rc_conn *c = rc_at(s->rc, i);
		struct ser_conn *sc = &s->conns[i];

		if (c == NULL || c->paired || c->srv_ip != srv_ip || c->cl_ip != cl_ip ||
		    sc->inc != c->incarnation || sc->untracked)
			continue;
		sc->untracked = 1;
		for (uint32_t k = 0; k < s->prm.ring_size; k++) {
			struct ser_stub *st = &sc->ring[k];
			bool real = st->kind == ST_REAL && !(st->flags & SF_ANSWERED);

			if (!real && !(st->flags & SF_BUSY))
				continue;
			if (st->flags & SF_BUSY)
				for (uint32_t w = 0; w < st->nwords; w++)
					ser_word_orphan_busy(s, st->word + w, now);
			if (real) {
				ser_word_untag(s, st, false);
				ser_word_orphan_busy(s, st->word, now);
			}
			st->flags = (uint16_t)((st->flags & ~SF_BUSY) | SF_UNTRACKED |
					       SF_ANSWERED | SF_NOLEARN);
		}
		ser_close_open_write(s, sc, now);
	}
}

void
ser_conn_end(void *ctx, struct rc_conn *c, enum rc_end_why why, uint64_t now)
{
	struct ser *s = ctx;
	struct ser_conn *sc = &s->conns[rc_index(s->rc, c)];

	/* every end gives its stubs' holds back alike; only a new life of
	 * the same QPs may still get the server's ACK to a probe's
	 * duplicate WRITE (ser_conn_state) */
	if (why != RC_END_NEW_LIFE)
		sc->dup_ack_due = 0;
	if (sc->inc != c->incarnation)
		return;  /* never seen by the serializer */
	for (uint32_t i = 0; i < s->prm.ring_size; i++)
		if (sc->ring[i].kind != ST_EMPTY)
			ser_stub_orphan(s, &sc->ring[i], now);
	ser_close_open_write(s, sc, now);
	sc->inc = 0;
}

struct ser_conn *
ser_conn_state(struct ser *s, const struct rc_conn *c)
{
	uint32_t i = rc_index(s->rc, c);
	struct ser_conn *sc = &s->conns[i];
	uint32_t dup_ack_psn;
	uint8_t dup_ack_due;

	if (sc->inc == c->incarnation)
		return sc;
	/* the previous life's probe ACK may still come (ser_resp.c); an
	 * end other than a new life cleared it (conn_end) */
	dup_ack_due = sc->dup_ack_due;
	dup_ack_psn = sc->dup_ack_psn;
	memset(sc, 0, sizeof(*sc));
	sc->dup_ack_due = dup_ack_due;
	sc->dup_ack_psn = dup_ack_psn;
	sc->inc = c->incarnation;
	sc->walk_from = c->una;
	sc->open_word = SER_NO_WORD;
	sc->ring = &s->stubs[(size_t)i * s->prm.ring_size];
	memset(sc->ring, 0, s->prm.ring_size * sizeof(*sc->ring));
	return sc;
}

struct ser_conn *
ser_conn_new_life(struct ser *s, struct rc_conn *c, uint32_t psn, uint64_t now)
{
	rc_reincarnate(s->rc, c, psn, now, false);
	return ser_conn_state(s, c);
}

static bool
is_server_cb(void *ctx, uint32_t ip4)
{
	return ser_is_server(ctx, ip4);
}

/* RDMA CM between a managed server and anyone: learn identities.  true if
 * the frame was a CM message (forward it unchanged). */
bool
ser_handle_cm(struct ser *s, const uint8_t *f, const struct roce_pkt *p,
	      uint64_t now)
{
	uint8_t *mf = (uint8_t *)(uintptr_t)f;

	if (p->ip_version != 4 || !(p->oi->flags & ROCE_F_UD) ||
	    !rc_cm_is_cm(f, p) ||
	    !(ser_is_server(s, p->src_ip4) || ser_is_server(s, p->dst_ip4)))
		return false;
	if (!ser_icrc_good(s, mf, p)) {
		s->c.bad_icrc_passed++;
		return true;
	}
	rc_cm_rx(s->rc, f, p, now, is_server_cb, s);
	return true;
}

/* ------------------------------------------------------------------ */
/* create / destroy */

static void defaults(struct ser_params *p);

/* The table's sizes, settled from prm (ser_create and the state layout
 * agree on them). */
int
ser_shape_of(const struct ser_params *prm, struct ser_params *p, uint32_t *max_regions,
	 uint32_t *words_cap)
{
	uint64_t words = 0;

	*p = *prm;
	defaults(p);
	if ((p->ring_size & (p->ring_size - 1)) || p->ring_size < 2 ||
	    p->ring_size > (1u << 20))
		return -EINVAL;
	for (uint32_t i = 0; i < prm->n_regions; i++)
		words += prm->regions[i].len / 8;
	if (words > p->max_words)
		return -EINVAL;
	*max_regions = prm->max_regions > prm->n_regions ? prm->max_regions : prm->n_regions;
	*words_cap = prm->max_regions ? p->max_words : (uint32_t)words;
	return 0;
}

int
ser_regions_init(struct ser *s, const struct ser_params *prm)
{
	uint64_t words = 0;

	for (uint32_t i = 0; i < prm->n_regions; i++) {
		const struct ser_region *r = &prm->regions[i];

		if ((r->base & 7) || (r->len & 7) || r->len == 0 ||
		    r->base + r->len < r->base)
			return -EINVAL;
		s->regions[i].r = *r;
		s->regions[i].first_word = (uint32_t)words;
		words += r->len / 8;
		if (words > s->prm.max_words)
			return -EINVAL;
		if (!ser_is_server(s, r->server_ip4))
			s->servers[s->n_servers++] = r->server_ip4;
	}
	s->n_regions = prm->n_regions;
	s->n_words = (uint32_t)words;
	return 0;
}

static void
defaults(struct ser_params *p)
{
	if (p->max_words == 0)
		p->max_words = 1u << 20;
	if (p->max_conns == 0)
		p->max_conns = 1024;
	if (p->ring_size == 0)
		p->ring_size = 256;
	if (p->pmtu == 0)
		p->pmtu = 4096;
	if (p->max_refusals == 0)
		p->max_refusals = 64;
}

struct rc_params
ser_rc_params(const struct ser_params *p)
{
	return (struct rc_params){ .max_conns = p->max_conns,
		.idle_tsc = p->conn_idle_tsc,
		.holdoff_tsc = p->learn_holdoff_tsc,
		.history = p->ring_size };
}

void
ser_finish_create(struct ser *s)
{
	s->orphan_tsc = s->prm.pending_expire_tsc > s->prm.learn_holdoff_tsc ?
			s->prm.pending_expire_tsc : s->prm.learn_holdoff_tsc;
	s->ring_mask = s->prm.ring_size - 1;
}

struct ser *
ser_create(const struct ser_params *prm)
{
	struct ser_params p;
	struct ser *s;
	int rc;

	if (prm == NULL || (prm->n_regions && prm->regions == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if (prm->state_mem != NULL)
		return ser_create_in_state(prm);
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = ser_shape_of(prm, &p, &s->max_regions, &s->words_cap);
	s->prm = p;
	if (rc != 0)
		goto fail;
	rc = -ENOMEM;
	s->regions = calloc(s->max_regions ? s->max_regions : 1, sizeof(*s->regions));
	s->servers = calloc(s->max_regions ? s->max_regions : 1, sizeof(*s->servers));
	if (s->regions == NULL || s->servers == NULL)
		goto fail;
	rc = ser_regions_init(s, prm);
	if (rc != 0)
		goto fail;
	if (prm->rc != NULL) {
		s->rc = prm->rc;
		s->prm.max_conns = rc_capacity(prm->rc);
	} else {
		struct rc_params rp = ser_rc_params(&s->prm);

		s->rc = rc_create(&rp);
		s->own_rc = true;
	}
	rc = -ENOMEM;
	if (s->rc == NULL)
		goto fail;
	s->words = calloc(s->words_cap ? s->words_cap : 1, sizeof(*s->words));
	s->conns = calloc(s->prm.max_conns, sizeof(*s->conns));
	s->stubs = calloc((size_t)s->prm.max_conns * s->prm.ring_size,
			  sizeof(*s->stubs));
	if (!s->words || !s->conns || !s->stubs)
		goto fail;
	if (rc_listen(s->rc, ser_conn_end, s) != 0)
		goto fail;
	ser_finish_create(s);
	ser_reset(s);
	return s;
fail:
	ser_destroy(s);
	errno = -rc;
	return NULL;
}

void
ser_destroy(struct ser *s)
{
	if (s == NULL)
		return;
	if (s->own_rc)
		rc_destroy(s->rc);
	else if (s->rc != NULL)
		rc_unlisten(s->rc, s);
	if (s->in_state)
		return;   /* the state segment's: it outlives the process */
	free(s->regions);
	free(s->servers);
	free(s->words);
	free(s->conns);
	free(s->stubs);
	free(s);
}

void
ser_reset(struct ser *s)
{
	ser_reset_known(s, false);
}

void
ser_reset_known(struct ser *s, bool tables_zero)
{
	for (uint32_t i = 0; i < s->n_words; i++)
		ser_word_reset(&s->words[i]);
	/* the stubs are most of a state block (32 MB by default): a fresh
	 * file is zero already, and clearing it again is a restart's
	 * largest cost after the EAL's */
	if (!tables_zero) {
		memset(s->stubs, 0, (size_t)s->prm.max_conns * s->prm.ring_size *
		       sizeof(*s->stubs));
		memset(s->conns, 0, s->prm.max_conns * sizeof(*s->conns));
	}
	rc_reset(s->rc);
	s->epoch_set = false;
	s->quiet_until = 0;
}

void
ser_start(struct ser *s, uint64_t now)
{
	s->quiet_until = now + s->prm.start_quiet_tsc;
}

void
ser_forget(struct ser *s, uint64_t now, uint64_t holdoff_tsc)
{
	ser_reset(s);
	if (s->prm.learn_holdoff_tsc < holdoff_tsc)
		s->prm.learn_holdoff_tsc = holdoff_tsc;
	ser_finish_create(s);   /* how long an orphan may run follows it (S7) */
	s->epoch = now;
	s->epoch_set = true;
	rc_hold_pairing(s->rc, now + holdoff_tsc);
	ser_start(s, now);
}

uint32_t
ser_forget_unacked(struct ser *s, uint64_t now, uint64_t holdoff_tsc)
{
	/* the flags that count a stub on its words, whose counts go */
	const uint16_t on_words = SF_PENDING | SF_BUSY | SF_DOMTAG | SF_FOLD | SF_UNTRACKED;
	uint32_t given_up = 0;

	for (uint32_t i = 0; i < s->n_words; i++)
		ser_word_forget_moved(&s->words[i]);
	for (uint32_t i = 0; i < rc_capacity(s->rc); i++) {
		const struct rc_conn *c = rc_at(s->rc, i);
		struct ser_conn *sc = &s->conns[i];

		if (c == NULL || sc->inc == 0 || sc->inc != c->incarnation)
			continue;
		for (uint32_t k = 0; k < s->prm.ring_size; k++) {
			struct ser_stub *st = &sc->ring[k];

			if (st->kind == ST_EMPTY)
				continue;
			st->flags &= (uint16_t)~on_words;
			/* an acknowledged request ran at the server (RC runs in
			 * order, and the server's answer covered its PSN).  One
			 * on words that was not is forgotten: a decision may
			 * not have run (above), and a real atomic's or a
			 * write's answer would settle counts that are gone; a
			 * copy of either is then met as one from before the
			 * window (ser_req.c req_behind) */
			if ((st->kind == ST_REWRITTEN || st->kind == ST_REAL ||
			     st->kind == ST_WRITE) && roce_psn_diff(st->psn, c->una) >= 0) {
				given_up += st->kind == ST_REWRITTEN;
				st->kind = ST_EMPTY;
			}
		}
		sc->open_word = SER_NO_WORD;
		sc->open_nwords = 0;
		sc->dup_ack_due = 0;
	}
	if (s->prm.learn_holdoff_tsc < holdoff_tsc)
		s->prm.learn_holdoff_tsc = holdoff_tsc;
	ser_finish_create(s);
	s->epoch = now;
	s->epoch_set = true;
	rc_hold_pairing(s->rc, now + holdoff_tsc);
	ser_start(s, now);
	return given_up;
}

/* ------------------------------------------------------------------ */
/* introspection */

const struct ser_counters *
ser_counters(const struct ser *s)
{
	struct ser *m = (struct ser *)(uintptr_t)s;
	const struct rc_counters *rc = rc_counters(s->rc);

	/* the connection layer's own counters, under the serializer's names */
	m->c.conn_created = rc->created;
	m->c.conn_evicted = rc->evicted;
	m->c.table_full = rc->table_full;
	m->c.paired = rc->paired + rc->cm_paired;
	m->c.cm_paired = rc->cm_paired;
	m->c.cm_seen = rc->cm_seen;
	m->c.pair_ambiguous = rc->pair_ambiguous;
	m->c.conn_closed = rc->closed;
	m->c.conn_reincarnated = rc->reincarnated;
	return &s->c;
}

uint32_t
ser_conn_count(const struct ser *s)
{
	return rc_count(s->rc);
}

void
ser_set_drain(struct ser *s, bool on)
{
	s->drain = on;
}

bool
ser_draining(const struct ser *s)
{
	return s->drain;
}

/*
 * What an upgrade must still wait for: ATOMIC answers swordd owes (stubs
 * of rewritten atomics of live connections not yet answered to their
 * client) and modelled writes not yet ACKed (which keep their words
 * gated, S2; a dead connection's count until pending_expire_tsc).  A
 * scan, not a counter: the hot path pays nothing for it, and it is only
 * asked for while draining.
 */
uint64_t
ser_unanswered(const struct ser *s, uint64_t *stubs_out, uint64_t *pending_out)
{
	struct rc_table *rc = s->rc;
	uint64_t stubs = 0, pending = 0;

	for (uint32_t i = 0; i < rc_capacity(rc) && i < s->prm.max_conns; i++) {
		const struct rc_conn *c = rc_at(rc, i);
		const struct ser_stub *ring = &s->stubs[(size_t)i * s->prm.ring_size];

		if (c == NULL || s->conns[i].inc != c->incarnation)
			continue;
		for (uint32_t k = 0; k < s->prm.ring_size; k++)
			if (ring[k].kind == ST_REWRITTEN && !(ring[k].flags & SF_ANSWERED))
				stubs++;
	}
	for (uint32_t i = 0; i < s->n_words; i++)
		pending += s->words[i].pend_cnt;
	if (stubs_out != NULL)
		*stubs_out = stubs;
	if (pending_out != NULL)
		*pending_out = pending;
	return stubs + pending;
}

struct rc_table *
ser_rc(struct ser *s)
{
	return s->rc;
}

enum ser_word_state
ser_word_get(const struct ser *s, uint32_t server_ip4, uint32_t rkey,
	     uint64_t va, uint64_t *value, uint32_t *inflight)
{
	const struct ser_region_rt *r = ser_region_find(s, server_ip4, rkey, va, 8);
	const struct ser_word *w;

	if (r == NULL || (va & 7))
		return SER_WORD_NONE;
	/* telemetry reads the table while its worker may change it between
	 * bursts (a live reload): never index past the words handed out */
	if (r->first_word + (va - r->r.base) / 8 >= s->n_words)
		return SER_WORD_NONE;
	w = &s->words[r->first_word + (va - r->r.base) / 8];
	if (value)
		*value = w->shadow;
	if (inflight)
		*inflight = (uint32_t)w->pend_cnt + w->busy;
	return w->state == W_KNOWN ? SER_WORD_KNOWN : SER_WORD_UNKNOWN;
}

