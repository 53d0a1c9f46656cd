/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_regions.c — the lock-region table at run time: regions added and
 * removed while the serializer runs (swordd's live reload, issue #32).
 *
 * Why it is safe: a region is added with fresh words (W_UNKNOWN: nothing
 * is decided on them before they are learned from the server's own
 * answers, as after a start); a region is removed only after it was
 * retired (every word marked as after a refused rewrite: never decided on
 * again, so new ops pass real) and nothing it decided is owed any more
 * (ser_region_owed == 0, which the caller waits for).  The words of a
 * removed region are not handed out again: a stub of a connection that
 * outlives the region still names them and may give back what it held;
 * on words nobody uses that is harmless.  The request and response paths
 * are untouched: they only ever see the table as it is between frames.
 */
#include <errno.h>
#include <string.h>

#include "ser_internal.h"

static bool
same_region(const struct ser_region *a, const struct ser_region *b)
{
	return a->server_ip4 == b->server_ip4 && a->any_rkey == b->any_rkey &&
	       (a->any_rkey || a->rkey == b->rkey) && a->base == b->base &&
	       a->len == b->len;
}

static int
region_index(const struct ser *s, const struct ser_region *r)
{
	for (uint32_t i = 0; i < s->n_regions; i++)
		if (same_region(&s->regions[i].r, r))
			return (int)i;
	return -1;
}

bool
ser_region_present(const struct ser *s, const struct ser_region *r)
{
	return region_index(s, r) >= 0;
}

/* The distinct servers of the regions (ser_is_server). */
static void
servers_rebuild(struct ser *s)
{
	s->n_servers = 0;
	for (uint32_t i = 0; i < s->n_regions; i++)
		if (!ser_is_server(s, s->regions[i].r.server_ip4))
			s->servers[s->n_servers++] = s->regions[i].r.server_ip4;
}

void
ser_room(const struct ser *s, uint32_t *regions, uint32_t *words)
{
	if (regions != NULL)
		*regions = s->max_regions - s->n_regions;
	if (words != NULL)
		*words = s->words_cap - s->n_words;
}

static int
region_add_(struct ser *s, const struct ser_region *r)
{
	uint64_t n;

	if ((r->base & 7) || (r->len & 7) || r->len == 0 || r->base + r->len < r->base)
		return -EINVAL;
	if (region_index(s, r) >= 0)
		return -EEXIST;
	for (uint32_t i = 0; i < s->n_regions; i++) {
		const struct ser_region *o = &s->regions[i].r;

		if (o->server_ip4 != r->server_ip4 ||
		    (!o->any_rkey && !r->any_rkey && o->rkey != r->rkey))
			continue;
		if (r->base < o->base + o->len && o->base < r->base + r->len)
			return -EINVAL;
	}
	n = r->len / 8;
	if (s->n_regions >= s->max_regions || n > s->words_cap - s->n_words)
		return -ENOSPC;
	for (uint32_t i = 0; i < n; i++)
		ser_word_reset(&s->words[s->n_words + i]);
	s->regions[s->n_regions].r = *r;
	s->regions[s->n_regions].first_word = s->n_words;
	s->n_words += (uint32_t)n;
	s->n_regions++;
	servers_rebuild(s);
	return 0;
}

static int
region_retire_(struct ser *s, const struct ser_region *r)
{
	int i = region_index(s, r);
	const uint64_t relearn = s->c.relearn;

	if (i < 0)
		return -ENOENT;
	for (uint64_t k = 0; k < r->len / 8; k++) {
		uint32_t wi = s->regions[i].first_word + (uint32_t)k;

		if (!(s->words[wi].flags & WF_NOREWRITE))
			ser_word_norewrite(s, wi);
	}
	/* forgetting the words is not the relearning that counter counts */
	s->c.relearn = relearn;
	return 0;
}

uint64_t
ser_region_owed(const struct ser *s, const struct ser_region *r)
{
	struct rc_table *rc = s->rc;
	uint64_t owed = 0;
	uint32_t first, end;
	int i = region_index(s, r);

	if (i < 0)
		return 0;
	first = s->regions[i].first_word;
	end = first + (uint32_t)(r->len / 8);
	for (uint32_t c = 0; c < rc_capacity(rc) && c < s->prm.max_conns; c++) {
		const struct rc_conn *cn = rc_at(rc, c);
		const struct ser_stub *ring = &s->stubs[(size_t)c * s->prm.ring_size];

		if (cn == NULL || s->conns[c].inc != cn->incarnation)
			continue;
		for (uint32_t k = 0; k < s->prm.ring_size; k++)
			if (ring[k].kind == ST_REWRITTEN && !(ring[k].flags & SF_ANSWERED) &&
			    ring[k].word >= first && ring[k].word < end)
				owed++;
	}
	for (uint32_t w = first; w < end; w++)
		owed += s->words[w].pend_cnt;
	return owed;
}

static int
region_remove_(struct ser *s, const struct ser_region *r)
{
	int i = region_index(s, r);

	if (i < 0)
		return -ENOENT;
	/* keep the others' order (ser_region_find takes the first match) */
	memmove(&s->regions[i], &s->regions[i + 1],
		(s->n_regions - (uint32_t)i - 1) * sizeof(s->regions[0]));
	s->n_regions--;
	servers_rebuild(s);
	return 0;
}

/* A change of the regions, marked for the next process should this one
 * die in the middle of it (ser_state.c refuses such a block). */
static int
marked(struct ser *s, const struct ser_region *r,
       int (*change)(struct ser *, const struct ser_region *))
{
	int rc;

	ser_torn_begin(s, TORN_REGIONS, 0, 0);
	rc = change(s, r);
	ser_torn_end(s);
	return rc;
}

int
ser_region_add(struct ser *s, const struct ser_region *r)
{
	return marked(s, r, region_add_);
}

int
ser_region_retire(struct ser *s, const struct ser_region *r)
{
	return marked(s, r, region_retire_);
}

int
ser_region_remove(struct ser *s, const struct ser_region *r)
{
	return marked(s, r, region_remove_);
}
