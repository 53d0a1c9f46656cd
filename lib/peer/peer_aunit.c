/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_aunit.c — word timelines and the held-frame pool of the responder's
 * atomic unit model (see peer_aunit.h for why).
 *
 * Memory is fixed at start.  A word's unit is busy until free_at; a slot
 * whose free_at has passed is as good as empty, so the table never needs a
 * sweep: a word lives within PROBE slots of its hash, and booking reuses
 * the first idle slot there.  It only fills when more than PROBE words
 * near one hash are busy at the same moment, and then the atomic is not
 * booked (the responder drops it and counts it).
 */
#include <stdlib.h>
#include <string.h>

#include "peer_aunit.h"

#define PROBE 32u

struct unit_slot {
	uintptr_t addr;         /* 0 = never used (server memory is never at 0) */
	uint64_t free_at;
};

struct aunit {
	uint64_t period_ns;
	uint32_t mask;          /* slots - 1 */
	struct unit_slot *slot;
	struct aunit_frame *pool;
	uint32_t n_pool;
	uint32_t free_list;     /* 1-based, 0 = pool exhausted */
	uint32_t held;
};

struct aunit *
aunit_create(uint64_t period_ns, uint32_t pool_frames, uint32_t slots)
{
	struct aunit *u = calloc(1, sizeof(*u));
	uint32_t n = PROBE;

	if (!u)
		return NULL;
	while (n < slots && n < (1u << 30))
		n <<= 1;
	u->period_ns = period_ns;
	u->mask = n - 1;
	u->slot = calloc(n, sizeof(*u->slot));
	u->pool = calloc(pool_frames ? pool_frames : 1, sizeof(*u->pool));
	u->n_pool = pool_frames;
	if (!u->slot || !u->pool) {
		aunit_destroy(u);
		return NULL;
	}
	for (uint32_t i = 0; i < pool_frames; i++)
		u->pool[i].next = i + 2 <= pool_frames ? i + 2 : 0;
	u->free_list = pool_frames ? 1 : 0;
	return u;
}

void
aunit_destroy(struct aunit *u)
{
	if (!u)
		return;
	free(u->slot);
	free(u->pool);
	free(u);
}

static uint32_t
slot_hash(const struct aunit *u, uintptr_t addr)
{
	return (uint32_t)(((uint64_t)addr >> 3) * 0x9e3779b97f4a7c15ull >> 32) & u->mask;
}

/* The word's own slot if it has one within PROBE, else the first idle one
 * (never used, or its unit free by t); NULL if neither. */
static struct unit_slot *
slot_for(struct aunit *u, uintptr_t addr, uint64_t t)
{
	struct unit_slot *idle = NULL;
	uint32_t h = slot_hash(u, addr);

	for (uint32_t i = 0; i < PROBE; i++) {
		struct unit_slot *s = &u->slot[(h + i) & u->mask];

		if (s->addr == addr)
			return s;
		if (!idle && (s->addr == 0 || s->free_at <= t))
			idle = s;
	}
	return idle;
}

bool
aunit_book(struct aunit *u, const void *addr, uint64_t t, uint64_t *exec_at)
{
	uintptr_t a = (uintptr_t)addr;
	struct unit_slot *s = slot_for(u, a, t);

	if (!s)
		return false;
	if (s->addr != a) {
		s->addr = a;
		s->free_at = 0;
	}
	*exec_at = s->free_at > t ? s->free_at : t;
	s->free_at = *exec_at + u->period_ns;
	return true;
}

bool
aunit_fifo_push(struct aunit *u, struct aunit_fifo *q, const uint8_t *f, uint32_t len,
		const struct roce_pkt *p, uint64_t t)
{
	uint32_t i = u->free_list;
	struct aunit_frame *h;

	if (!i || len > sizeof(h->f))
		return false;
	h = &u->pool[i - 1];
	u->free_list = h->next;
	h->next = 0;
	h->len = len;
	h->t_arr = t;
	h->p = *p;
	memcpy(h->f, f, len);
	if (q->tail)
		u->pool[q->tail - 1].next = i;
	else
		q->head = i;
	q->tail = i;
	u->held++;
	return true;
}

struct aunit_frame *
aunit_fifo_head(struct aunit *u, const struct aunit_fifo *q)
{
	return q->head ? &u->pool[q->head - 1] : NULL;
}

void
aunit_fifo_pop(struct aunit *u, struct aunit_fifo *q)
{
	uint32_t i = q->head;
	struct aunit_frame *h;

	if (!i)
		return;
	h = &u->pool[i - 1];
	q->head = h->next;
	if (!q->head)
		q->tail = 0;
	h->next = u->free_list;
	u->free_list = i;
	u->held--;
}

uint32_t
aunit_fifo_clear(struct aunit *u, struct aunit_fifo *q)
{
	uint32_t n = 0;

	for (; q->head; n++)
		aunit_fifo_pop(u, q);
	return n;
}

uint32_t
aunit_held(const struct aunit *u)
{
	return u->held;
}
