/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_state.c — the serializer in a block of memory that outlives the
 * process (swordd maps it from a file: lib/sword/sword_state.c), and the
 * adoption of what an earlier process left there.
 *
 * Why: a CAS that swordd answered itself ran at the server as a WRITE.  If
 * the answer is lost and swordd restarts empty, nobody can answer the
 * client's retransmission any more (the server keeps no atomic result for
 * a WRITE) and its QP dies; a lock granted that way leaks.  With the
 * table, its connections, their stubs and every word's shadow kept, a
 * restart is a pause: what was on the wire during it is lost, as any
 * loss, and the rules that cover loss cover it.
 *
 * Which life owns the block: the swordd process that maps it, one worker's
 * table, a layout fixed by ser_state_shape (this build's structures and
 * the configured sizes).  A process killed at an arbitrary instruction
 * can leave one frame's changes half made.  ser_torn_begin records the
 * frame's two hosts (and the request's words once known) before anything
 * changes, and ser_torn_conn the frame's connection once it is looked up
 * (from there on a frame changes that connection and words, nothing
 * else).  The adopter gives up that connection, or every connection
 * between the two hosts if the frame ended before its connection was
 * known, and forgets every word the frame or those connections touched,
 * so nothing half made is ever decided on.  Every index read from the block is range
 * checked before use: a damaged block costs state, never a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ser_internal.h"

/* Bump when a structure in the block changes meaning without changing
 * size (a size change changes the shape by itself). */
#define SER_STATE_LAYOUT 6

#define STATE_ALIGN(x) (((x) + 63) & ~(size_t)63)

struct state_layout {
	struct ser_params p;
	uint32_t max_regions, words_cap;
	size_t regions, servers, words, conns, stubs, rc, len;
};

static int
state_layout(const struct ser_params *prm, struct state_layout *l)
{
	struct rc_params rp;
	size_t off, rc_len;
	int rc;

	if (prm->rc != NULL)
		return -EINVAL;   /* the block holds its own connection table */
	rc = ser_shape_of(prm, &l->p, &l->max_regions, &l->words_cap);
	if (rc != 0)
		return rc;
	rp = ser_rc_params(&l->p);
	rc_len = rc_state_size(&rp);
	if (rc_len == 0)
		return -EINVAL;
	off = STATE_ALIGN(sizeof(struct ser));
	l->regions = off;
	off += STATE_ALIGN((size_t)(l->max_regions ? l->max_regions : 1) *
			   sizeof(struct ser_region_rt));
	l->servers = off;
	off += STATE_ALIGN((size_t)(l->max_regions ? l->max_regions : 1) * sizeof(uint32_t));
	l->words = off;
	off += STATE_ALIGN((size_t)(l->words_cap ? l->words_cap : 1) * sizeof(struct ser_word));
	l->conns = off;
	off += STATE_ALIGN((size_t)l->p.max_conns * sizeof(struct ser_conn));
	l->stubs = off;
	off += STATE_ALIGN((size_t)l->p.max_conns * l->p.ring_size * sizeof(struct ser_stub));
	l->rc = off;
	off += STATE_ALIGN(rc_len);
	l->len = off;
	return 0;
}

size_t
ser_state_size(const struct ser_params *prm)
{
	struct state_layout l;

	return prm != NULL && state_layout(prm, &l) == 0 ? l.len : 0;
}

uint64_t
ser_state_shape(const struct ser_params *prm)
{
	struct state_layout l;
	uint64_t h = RC_SHAPE_SEED;

	if (prm == NULL || state_layout(prm, &l) != 0)
		return 0;
	h = rc_shape_fold(h, SER_STATE_LAYOUT);
	h = rc_shape_fold(h, sizeof(struct ser));
	h = rc_shape_fold(h, sizeof(struct ser_word));
	h = rc_shape_fold(h, sizeof(struct ser_stub));
	h = rc_shape_fold(h, sizeof(struct ser_conn));
	h = rc_shape_fold(h, sizeof(struct ser_region_rt));
	h = rc_shape_fold(h, sizeof(struct rc_conn));
	h = rc_shape_fold(h, l.p.max_conns);
	h = rc_shape_fold(h, l.p.ring_size);
	h = rc_shape_fold(h, l.words_cap);
	h = rc_shape_fold(h, l.max_regions);
	h = rc_shape_fold(h, l.len);
	return h;
}

void
ser_adopt_info(const struct ser *s, struct ser_adopt_info *ai)
{
	*ai = s->adopted;
}

static bool
words_ok(const struct ser *s, uint32_t word, uint32_t n)
{
	return word < s->n_words && n <= s->n_words - word;
}

/* A stub whose words are out of range (a damaged block) is dropped, with
 * nothing given back: it never held anything real. */
static bool
stub_ok(const struct ser *s, const struct ser_stub *st)
{
	bool uses_words = (st->flags & (SF_PENDING | SF_BUSY)) ||
			  st->kind == ST_REWRITTEN || st->kind == ST_REAL || st->kind == ST_WRITE;

	if (st->kind > ST_WRITE)
		return false;
	return !uses_words || words_ok(s, st->word, st->nwords ? st->nwords : 1);
}

static void
forget_words_of(struct ser *s, const struct ser_stub *st, uint64_t now)
{
	uint32_t n = st->nwords ? st->nwords : 1;

	if (st->kind == ST_EMPTY || !words_ok(s, st->word, n))
		return;
	for (uint32_t i = 0; i < n; i++)
		if (!(s->words[st->word + i].flags & WF_DIRTY) ||
		    s->words[st->word + i].state == W_KNOWN)
			s->adopted.words_given_up++;
	for (uint32_t i = 0; i < n; i++)
		ser_word_torn(s, st->word + i, now);
}

/* c is given up: what its client sent may run again as copies (closed
 * fuzzer state-torn-given-up-copy-decided) */
static void
note_given_up(struct ser *s, const struct rc_conn *c)
{
	struct ser_given_up *g = &s->given_up[s->given_up_next % SER_GIVEN_UP_MAX];

	*g = (struct ser_given_up){ .cl_ip = c->cl_ip, .srv_ip = c->srv_ip,
				    .srv_qpn = c->srv_qpn, .next_psn = c->next_psn,
				    .valid = 1 };
	s->given_up_next = (s->given_up_next + 1) % SER_GIVEN_UP_MAX;
}

static bool
between(const struct rc_conn *c, uint32_t a, uint32_t b)
{
	return (c->cl_ip == a && c->srv_ip == b) || (c->cl_ip == b && c->srv_ip == a);
}

/* Range checks, then what the previous process was in the middle of. */
static int
adopt(struct ser *s, const struct ser_params *prm, uint64_t now)
{
	struct rc_table *t = s->rc;
	const uint32_t ring = s->prm.ring_size;

	if (s->n_regions > s->max_regions || s->n_servers > s->max_regions ||
	    s->n_words > s->words_cap || s->torn.what > TORN_REGIONS)
		return -EBADMSG;
	for (uint32_t i = 0; i < s->n_regions; i++) {
		const struct ser_region_rt *r = &s->regions[i];

		if ((r->r.len & 7) || r->r.len == 0 ||
		    !words_ok(s, r->first_word, (uint32_t)(r->r.len / 8)))
			return -EBADMSG;
	}
	/* a reload torn in the middle: the words no longer say whose they are */
	if (s->torn.what == TORN_REGIONS)
		return -EBADMSG;
	/* Only a block some client may still be waiting on: its newest
	 * request within conn_idle (above the clients' retry budget).  An
	 * older one has nothing left to answer, and its words may have
	 * moved since (a worker that did not run in between, with its
	 * server on another: swordd started with fewer workers). */
	{
		uint64_t newest = 0;

		for (uint32_t i = 0; i < s->prm.max_conns; i++) {
			const struct rc_conn *c = rc_at(t, i);

			if (c != NULL && c->last_seen > newest)
				newest = c->last_seen;
		}
		if (newest == 0 || now < newest ||
		    (s->prm.conn_idle_tsc && now - newest > s->prm.conn_idle_tsc))
			return -ESTALE;
	}
	memset(&s->adopted, 0, sizeof(s->adopted));
	for (uint32_t i = 0; i < s->prm.max_conns; i++) {
		struct ser_conn *sc = &s->conns[i];
		const struct rc_conn *c = rc_at(t, i);
		bool live = c != NULL && sc->inc != 0 && sc->inc == c->incarnation;

		sc->ring = &s->stubs[(size_t)i * ring];
		if (sc->open_word != SER_NO_WORD &&
		    (!live || !words_ok(s, sc->open_word, sc->open_nwords))) {
			sc->open_word = SER_NO_WORD;
			sc->open_nwords = 0;
		}
		for (uint32_t k = 0; k < ring; k++) {
			struct ser_stub *st = &sc->ring[k];

			if (st->kind == ST_EMPTY)
				continue;
			if (!stub_ok(s, st)) {
				memset(st, 0, sizeof(*st));
				continue;
			}
			if (!live) {
				/* a life that ended half way (an eviction
				 * torn in two): what it held is unknown */
				forget_words_of(s, st, now);
				memset(st, 0, sizeof(*st));
			}
		}
		if (!live)
			sc->inc = 0;
	}
	if (s->torn.what != TORN_NONE) {
		if (words_ok(s, s->torn.word, s->torn.nwords ? s->torn.nwords : 1))
			for (uint32_t i = 0; i < (s->torn.nwords ? s->torn.nwords : 1); i++) {
				s->adopted.words_given_up++;
				ser_word_torn(s, s->torn.word + i, now);
			}
		/* the frame's own connection if it got that far and is still
		 * that life; else every one it may have touched */
		struct rc_conn *own = s->torn.conn < s->prm.max_conns ?
				      rc_at(t, s->torn.conn) : NULL;

		if (own != NULL && (own->incarnation != s->torn.inc ||
				    !between(own, s->torn.ip_a, s->torn.ip_b)))
			own = NULL;
		for (uint32_t i = 0; i < s->prm.max_conns; i++) {
			struct rc_conn *c = rc_at(t, i);
			struct ser_conn *sc = &s->conns[i];

			if (c == NULL || !between(c, s->torn.ip_a, s->torn.ip_b) ||
			    (own != NULL && c != own))
				continue;
			if (sc->inc == c->incarnation)
				for (uint32_t k = 0; k < ring; k++)
					forget_words_of(s, &sc->ring[k], now);
			note_given_up(s, c);
			rc_close(t, c, now);
			s->adopted.conns_given_up++;
		}
		s->torn.what = TORN_NONE;
	}
	/* the regions become the configuration's */
	for (uint32_t i = 0; i < s->n_regions;) {
		bool keep = false;

		for (uint32_t k = 0; k < prm->n_regions && !keep; k++) {
			const struct ser_region *a = &prm->regions[k], *b = &s->regions[i].r;

			keep = a->server_ip4 == b->server_ip4 && a->any_rkey == b->any_rkey &&
			       (a->any_rkey || a->rkey == b->rkey) && a->base == b->base &&
			       a->len == b->len;
		}
		if (keep) {
			i++;
			continue;
		}
		struct ser_region r = s->regions[i].r;

		if (ser_region_remove(s, &r) != 0)
			return -EBADMSG;
	}
	for (uint32_t k = 0; k < prm->n_regions; k++) {
		int rc;

		if (ser_region_present(s, &prm->regions[k]))
			continue;
		rc = ser_region_add(s, &prm->regions[k]);
		if (rc != 0)
			return rc;
	}
	s->adopted.conns = rc_count(t);
	for (uint32_t i = 0; i < s->n_words; i++)
		if (s->words[i].state == W_KNOWN)
			s->adopted.words_known++;
	return 0;
}

struct ser *
ser_create_in_state(const struct ser_params *prm)
{
	struct state_layout l;
	uint8_t *m = prm->state_mem;
	struct ser *s = prm->state_mem;
	const bool adopting = prm->state_adopt;
	struct rc_params rp;
	int rc;

	rc = state_layout(prm, &l);
	if (rc == 0 && (prm->state_len < l.len || ((uintptr_t)m & 63)))
		rc = -ENOSPC;
	if (rc == 0 && adopting &&
	    (!s->in_state || s->prm.max_conns != l.p.max_conns ||
	     s->prm.ring_size != l.p.ring_size || s->words_cap != l.words_cap ||
	     s->max_regions != l.max_regions))
		rc = -EBADMSG;
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	if (!adopting)
		memset(s, 0, sizeof(*s));
	/* this process's parameters; nothing points into the caller's */
	s->prm = l.p;
	s->prm.regions = NULL;
	s->prm.n_regions = 0;
	s->prm.state_mem = NULL;
	s->in_state = true;
	s->own_rc = true;
	s->max_regions = l.max_regions;
	s->words_cap = l.words_cap;
	s->regions = (struct ser_region_rt *)(void *)(m + l.regions);
	s->servers = (uint32_t *)(void *)(m + l.servers);
	s->words = (struct ser_word *)(void *)(m + l.words);
	s->conns = (struct ser_conn *)(void *)(m + l.conns);
	s->stubs = (struct ser_stub *)(void *)(m + l.stubs);
	rp = ser_rc_params(&s->prm);
	s->rc = rc_create_at(&rp, m + l.rc, l.len - l.rc, adopting);
	if (s->rc == NULL)
		return NULL;
	ser_finish_create(s);
	memset(&s->c, 0, sizeof(s->c));
	memset(&s->after, 0, sizeof(s->after));
	s->n_after = 0;
	s->icrc_known_good = false;
	s->drop_unasked = false;
	s->drain = false;
	if (rc_listen(s->rc, ser_conn_end, s) != 0) {
		errno = ENOSPC;
		return NULL;
	}
	if (!adopting) {
		s->n_servers = 0;
		rc = ser_regions_init(s, prm);
		if (rc == 0)
			ser_reset_known(s, prm->state_zero);
	} else {
		rc = adopt(s, prm, prm->state_now);
	}
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return s;
}
