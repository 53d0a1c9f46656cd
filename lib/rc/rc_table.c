/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rc_table.c — connection slots, their two lookup maps, aging, and
 * pairing by evidence.  The rules are in rc.h's top comment.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

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

static uint32_t
pow2_ge(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

static inline uint32_t req_home(const struct rc_table *t, const struct rc_conn *c);
static inline uint32_t resp_home(const struct rc_table *t, const struct rc_conn *c);
static void map_add(struct rc_table *t, uint32_t *map, struct rc_conn *c,
		    uint32_t (*home)(const struct rc_table *, const struct rc_conn *));

static int
params_settle(struct rc_params *p)
{
	if (p->max_conns == 0)
		p->max_conns = 1024;
	if (p->history == 0)
		p->history = 256;
	return p->max_conns > (1u << 24) ? -EINVAL : 0;
}

/* Where rc_create_at puts the table, its slots and its two maps in one
 * block (offsets from its start, each cache-line aligned). */
struct rc_layout {
	size_t conns, req_map, resp_map, len;
	uint32_t map_mask;
};

#define RC_ALIGN(x) (((x) + 63) & ~(size_t)63)

static void
layout(const struct rc_params *p, struct rc_layout *l)
{
	l->map_mask = pow2_ge(p->max_conns * 2) - 1;
	l->conns = RC_ALIGN(sizeof(struct rc_table));
	l->req_map = l->conns + RC_ALIGN((size_t)p->max_conns * sizeof(struct rc_conn));
	l->resp_map = l->req_map + RC_ALIGN(((size_t)l->map_mask + 1) * sizeof(uint32_t));
	l->len = l->resp_map + RC_ALIGN(((size_t)l->map_mask + 1) * sizeof(uint32_t));
}

struct rc_table *
rc_create(const struct rc_params *prm)
{
	struct rc_table *t;

	if (prm == NULL) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	t->prm = *prm;
	if (params_settle(&t->prm) != 0) {
		free(t);
		errno = EINVAL;
		return NULL;
	}
	t->map_mask = pow2_ge(t->prm.max_conns * 2) - 1;
	t->head.conns = calloc(t->prm.max_conns, sizeof(*t->head.conns));
	t->req_map = calloc(t->map_mask + 1, sizeof(uint32_t));
	t->resp_map = calloc(t->map_mask + 1, sizeof(uint32_t));
	if (!t->head.conns || !t->req_map || !t->resp_map) {
		rc_destroy(t);
		errno = ENOMEM;
		return NULL;
	}
	_Static_assert(offsetof(struct rc_table, head) == 0, "rc.h reads the head");
	t->head.max_conns = t->prm.max_conns;
	rc_reset(t);
	return t;
}

size_t
rc_state_size(const struct rc_params *prm)
{
	struct rc_params p = *prm;
	struct rc_layout l;

	if (params_settle(&p) != 0)
		return 0;
	layout(&p, &l);
	return l.len;
}

/* The maps, the count of live slots and the next incarnation follow from
 * the slots alone: an adopted table rebuilds them, so a process killed in
 * the middle of an update leaves no map entry without its slot. */
static void
rebuild(struct rc_table *t)
{
	uint32_t top = 0;

	memset(t->req_map, 0, (t->map_mask + 1) * sizeof(uint32_t));
	memset(t->resp_map, 0, (t->map_mask + 1) * sizeof(uint32_t));
	t->n_live = 0;
	for (uint32_t i = 0; i < t->prm.max_conns; i++) {
		struct rc_conn *c = &t->head.conns[i];

		if (c->incarnation == 0) {
			memset(c, 0, sizeof(*c));
			continue;
		}
		t->n_live++;
		map_add(t, t->req_map, c, req_home);
		if (c->paired)
			map_add(t, t->resp_map, c, resp_home);
		if (c->incarnation != UINT32_MAX && c->incarnation > top)
			top = c->incarnation;
	}
	if (t->incarnations < top)
		t->incarnations = top;
	t->next_free %= t->prm.max_conns;
	t->head.last_req = t->head.last_resp = 0;
}

struct rc_table *
rc_create_at(const struct rc_params *prm, void *mem, size_t len, bool adopt)
{
	struct rc_table *t = mem;
	struct rc_params p;
	struct rc_layout l;

	if (prm == NULL || mem == NULL || ((uintptr_t)mem & 63)) {
		errno = EINVAL;
		return NULL;
	}
	p = *prm;
	if (params_settle(&p) != 0) {
		errno = EINVAL;
		return NULL;
	}
	layout(&p, &l);
	if (len < l.len) {
		errno = ENOSPC;
		return NULL;
	}
	if (adopt && (t->prm.max_conns != p.max_conns || t->map_mask != l.map_mask ||
		      t->head.max_conns != p.max_conns)) {
		errno = EINVAL;   /* another shape: not ours to adopt */
		return NULL;
	}
	if (!adopt)
		memset(t, 0, sizeof(*t));
	t->prm = p;
	t->in_place = true;
	t->head.conns = (struct rc_conn *)(void *)((uint8_t *)mem + l.conns);
	t->head.max_conns = p.max_conns;
	t->head.order_fn = NULL;   /* pointers into the previous process */
	t->head.order_ctx = NULL;
	t->req_map = (uint32_t *)(void *)((uint8_t *)mem + l.req_map);
	t->resp_map = (uint32_t *)(void *)((uint8_t *)mem + l.resp_map);
	t->map_mask = l.map_mask;
	t->n_listeners = 0;
	memset(t->listeners, 0, sizeof(t->listeners));
	memset(&t->c, 0, sizeof(t->c));   /* counters are the process's */
	if (!adopt) {
		rc_reset(t);
		return t;
	}
	/* a CM exchange in flight is the previous process's: the CM
	 * retransmits it */
	memset(t->cm, 0, sizeof(t->cm));
	rebuild(t);
	return t;
}

void
rc_destroy(struct rc_table *t)
{
	if (t == NULL || t->in_place)
		return;
	free(t->head.conns);
	free(t->req_map);
	free(t->resp_map);
	free(t);
}

void
rc_reset(struct rc_table *t)
{
	/* incarnation numbers keep counting: state tagged with an old one
	 * must never match a new connection */
	memset(t->head.conns, 0, t->prm.max_conns * sizeof(*t->head.conns));
	memset(t->req_map, 0, (t->map_mask + 1) * sizeof(uint32_t));
	memset(t->resp_map, 0, (t->map_mask + 1) * sizeof(uint32_t));
	memset(t->cm, 0, sizeof(t->cm));
	t->n_live = 0;
	t->next_free = 0;
	t->epoch_set = false;
	t->untracked_until = 0;
}

void
rc_hold_pairing(struct rc_table *t, uint64_t until)
{
	if (until > t->untracked_until)
		t->untracked_until = until;
}

void
rc_epoch(struct rc_table *t, uint64_t now)
{
	if (!t->epoch_set) {
		t->epoch = now;
		t->epoch_set = true;
	}
}

uint32_t
rc_count(const struct rc_table *t)
{
	return t->n_live;
}

const struct rc_counters *
rc_counters(const struct rc_table *t)
{
	return &t->c;
}

/* ------------------------------------------------------------------ */
/* maps: linear probing, backward-shift deletion */

static inline uint32_t
req_home(const struct rc_table *t, const struct rc_conn *c)
{
	return hash3(c->cl_ip, c->srv_ip, c->srv_qpn) & t->map_mask;
}

static inline uint32_t
resp_home(const struct rc_table *t, const struct rc_conn *c)
{
	return hash3(c->srv_ip, c->cl_ip, c->cl_qpn) & t->map_mask;
}

typedef uint32_t (*home_fn)(const struct rc_table *t, const struct rc_conn *c);

static void
map_add(struct rc_table *t, uint32_t *map, struct rc_conn *c, home_fn home)
{
	uint32_t i = home(t, c);

	/* the map has twice the slots of the table: never full */
	while (map[i] != 0)
		i = (i + 1) & t->map_mask;
	map[i] = rc_index(t, c) + 1;
}

static void
map_del(struct rc_table *t, uint32_t *map, struct rc_conn *c, home_fn home)
{
	uint32_t i = home(t, c), want = rc_index(t, c) + 1, j;

	while (map[i] != want) {
		if (map[i] == 0)
			return;
		i = (i + 1) & t->map_mask;
	}
	for (;;) {
		map[i] = 0;
		j = i;
		for (;;) {
			uint32_t h;

			j = (j + 1) & t->map_mask;
			if (map[j] == 0)
				return;
			h = home(t, &t->head.conns[map[j] - 1]);
			/* the entry at j may move to i unless its home lies
			 * cyclically in (i, j] */
			if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
				continue;
			map[i] = map[j];
			i = j;
			break;
		}
	}
}

void
rc_resp_map_add(struct rc_table *t, struct rc_conn *c)
{
	map_add(t, t->resp_map, c, resp_home);
}

void
rc_resp_map_del(struct rc_table *t, struct rc_conn *c)
{
	map_del(t, t->resp_map, c, resp_home);
}

struct rc_conn *
rc_find_req_hashed(struct rc_table *t, uint32_t cl_ip, uint32_t srv_ip, uint32_t srv_qpn)
{
	uint32_t i = hash3(cl_ip, srv_ip, srv_qpn) & t->map_mask;

	for (uint32_t v; (v = t->req_map[i]) != 0; i = (i + 1) & t->map_mask) {
		struct rc_conn *c = &t->head.conns[v - 1];

		if (c->cl_ip == cl_ip && c->srv_ip == srv_ip && c->srv_qpn == srv_qpn) {
			t->head.last_req = v - 1;
			return c;
		}
	}
	return NULL;
}

struct rc_conn *
rc_find_resp_hashed(struct rc_table *t, uint32_t srv_ip, uint32_t cl_ip, uint32_t cl_qpn)
{
	uint32_t i = hash3(srv_ip, cl_ip, cl_qpn) & t->map_mask;

	for (uint32_t v; (v = t->resp_map[i]) != 0; i = (i + 1) & t->map_mask) {
		struct rc_conn *c = &t->head.conns[v - 1];

		if (c->srv_ip == srv_ip && c->cl_ip == cl_ip && c->cl_qpn == cl_qpn) {
			t->head.last_resp = v - 1;
			return c;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* slots */

int
rc_listen(struct rc_table *t, rc_end_fn fn, void *ctx)
{
	if (t->n_listeners >= RC_MAX_LISTENERS)
		return -ENOSPC;
	t->listeners[t->n_listeners].fn = fn;
	t->listeners[t->n_listeners].ctx = ctx;
	t->n_listeners++;
	return 0;
}

void
rc_end_life(struct rc_table *t, struct rc_conn *c, enum rc_end_why why, uint64_t now)
{
	for (uint32_t i = 0; i < t->n_listeners; i++)
		t->listeners[i].fn(t->listeners[i].ctx, c, why, now);
}

static void
slot_free(struct rc_table *t, struct rc_conn *c)
{
	if (c->paired)
		rc_resp_map_del(t, c);
	map_del(t, t->req_map, c, req_home);
	memset(c, 0, sizeof(*c));
	t->n_live--;
}

/* The longest-idle connection, if it has been idle for idle_tsc. */
static struct rc_conn *
idle_victim(struct rc_table *t, uint64_t now)
{
	struct rc_conn *v = NULL;

	if (t->prm.idle_tsc == 0)
		return NULL;
	for (uint32_t i = 0; i < t->prm.max_conns; i++) {
		struct rc_conn *c = &t->head.conns[i];

		if (c->incarnation && (v == NULL || c->last_seen < v->last_seen))
			v = c;
	}
	if (v == NULL || now - v->last_seen < t->prm.idle_tsc)
		return NULL;
	return v;
}

static struct rc_conn *
free_slot(struct rc_table *t)
{
	for (uint32_t n = 0; n < t->prm.max_conns; n++) {
		uint32_t i = (t->next_free + n) % t->prm.max_conns;

		if (t->head.conns[i].incarnation == 0) {
			t->next_free = (i + 1) % t->prm.max_conns;
			return &t->head.conns[i];
		}
	}
	return NULL;
}

static void
window_start(struct rc_conn *c, uint32_t psn)
{
	c->first_psn = c->next_psn = c->una = psn & ROCE_PSN_MASK;
}

static uint32_t
next_incarnation(struct rc_table *t)
{
	/* 0 and UINT32_MAX never name a life: users keep them as "nobody"
	 * and "several" */
	if (++t->incarnations == 0 || t->incarnations == UINT32_MAX)
		t->incarnations = 1;
	return t->incarnations;
}

void
rc_unlisten(struct rc_table *t, void *ctx)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < t->n_listeners; i++)
		if (t->listeners[i].ctx != ctx)
			t->listeners[k++] = t->listeners[i];
	t->n_listeners = k;
	if (t->head.order_ctx == ctx) {
		t->head.order_fn = NULL;
		t->head.order_ctx = NULL;
	}
}

uint32_t
rc_new_domain(struct rc_table *t)
{
	return next_incarnation(t);
}

void
rc_set_order(struct rc_table *t, rc_order_fn fn, void *ctx)
{
	t->head.order_fn = fn;
	t->head.order_ctx = ctx;
}

struct rc_conn *
rc_open(struct rc_table *t, uint32_t cl_ip, uint32_t srv_ip, uint32_t srv_qpn,
	uint32_t psn, uint64_t now)
{
	struct rc_conn *c;

	rc_epoch(t, now);
	if (t->n_live >= t->prm.max_conns) {
		c = idle_victim(t, now);
		if (c == NULL) {
			t->c.table_full++;
			return NULL;
		}
		rc_end_life(t, c, RC_END_IDLE, now);
		slot_free(t, c);
		t->c.evicted++;
	}
	c = free_slot(t);
	if (c == NULL) {
		t->c.table_full++;
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->cl_ip = cl_ip;
	c->srv_ip = srv_ip;
	c->srv_qpn = srv_qpn;
	c->incarnation = next_incarnation(t);
	c->last_seen = now;
	window_start(c, psn);
	c->initial_psn = c->first_psn;
	map_add(t, t->req_map, c, req_home);
	t->n_live++;
	t->c.created++;
	return c;
}

void
rc_note_untracked(struct rc_table *t, uint64_t now)
{
	uint64_t until = now + (t->prm.idle_tsc ? t->prm.idle_tsc : t->prm.holdoff_tsc);

	if (until > t->untracked_until)
		t->untracked_until = until;
}

void
rc_reincarnate(struct rc_table *t, struct rc_conn *c, uint32_t psn, uint64_t now,
	       bool keep_identity)
{
	rc_end_life(t, c, RC_END_NEW_LIFE, now);
	if (c->paired && !keep_identity) {
		rc_resp_map_del(t, c);
		c->paired = 0;
		c->by_cm = 0;
	}
	c->incarnation = next_incarnation(t);
	c->last_seen = now;
	window_start(c, psn);
	t->c.reincarnated++;
}

bool
rc_expire_idle(struct rc_table *t, struct rc_conn *c, uint64_t now)
{
	if (t->prm.idle_tsc == 0 || now - c->last_seen < t->prm.idle_tsc)
		return false;
	rc_end_life(t, c, RC_END_IDLE, now);
	slot_free(t, c);
	t->c.evicted++;
	return true;
}

void
rc_close_why(struct rc_table *t, struct rc_conn *c, enum rc_end_why why, uint64_t now)
{
	rc_end_life(t, c, why, now);
	slot_free(t, c);
	t->c.closed++;
}

void
rc_close(struct rc_table *t, struct rc_conn *c, uint64_t now)
{
	rc_close_why(t, c, RC_END_CLOSED, now);
}

/* ------------------------------------------------------------------ */
/* pairing by evidence */

struct rc_conn *
rc_unpaired_only(struct rc_table *t, uint32_t srv_ip, uint32_t cl_ip, uint32_t psn,
		 rc_pick_fn pick, void *ctx)
{
	struct rc_conn *found = NULL;

	for (uint32_t i = 0; i < t->prm.max_conns; i++) {
		struct rc_conn *c = &t->head.conns[i];

		if (c->incarnation == 0 || c->paired || c->srv_ip != srv_ip ||
		    c->cl_ip != cl_ip)
			continue;
		if (pick(ctx, c)) {
			if (found != NULL)
				return NULL;
			found = c;
		} else if (roce_psn_diff(psn, c->next_psn) < 0 &&
			   roce_psn_diff(psn, c->first_psn) >= -(int32_t)t->prm.history) {
			return NULL;  /* psn may be this one's */
		}
	}
	return found;
}

struct rc_conn *
rc_pair_evidence(struct rc_table *t, uint32_t srv_ip, uint32_t cl_ip,
		 uint32_t cl_qpn, uint32_t psn, uint64_t now, rc_owns_fn may_own,
		 void *ctx, bool *ambiguous)
{
	struct rc_conn *found = NULL;

	*ambiguous = false;
	rc_epoch(t, now);
	/* a response to a request swordd never saw may still be in flight */
	if (now - t->epoch < t->prm.holdoff_tsc || now < t->untracked_until) {
		*ambiguous = true;
		return NULL;
	}
	for (uint32_t i = 0; i < t->prm.max_conns; i++) {
		struct rc_conn *c = &t->head.conns[i];

		if (c->incarnation == 0 || c->paired || c->srv_ip != srv_ip ||
		    c->cl_ip != cl_ip)
			continue;
		/* could c have sent psn?  Its window, or the history before
		 * it that swordd did not see (at most one window's worth) */
		if (roce_psn_diff(psn, c->next_psn) >= 0 ||
		    roce_psn_diff(psn, c->first_psn) < -(int32_t)t->prm.history)
			continue;
		if (found != NULL) {
			t->c.pair_ambiguous++;
			*ambiguous = true;
			return NULL;
		}
		found = c;
	}
	if (found == NULL)
		return NULL;
	/* the function must have seen the request at psn (a stub of the
	 * response's kind); otherwise the response stays unattributed */
	if (!may_own(ctx, found, psn)) {
		*ambiguous = true;
		return NULL;
	}
	found->cl_qpn = cl_qpn;
	found->paired = 1;
	rc_resp_map_add(t, found);
	t->c.paired++;
	return found;
}
