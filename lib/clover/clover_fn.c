/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover_fn.c — lib/clover as a swordd function (sword_fn_ops): builds the
 * steering tables of each worker from [clover] / [clover.NAME] and runs
 * clover_process on every managed frame.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clover.h"
#include "clover_fn.h"

_Static_assert(SWORD_CLOVER_READ_WAYS == CLOVER_MAX_READ_WAYS,
	       "[clover] read_ways range must match lib/clover's");

/* A [clover.NAME] layout as lib/clover's region. */
static void
layout_region(const struct sword_clover_conf *l, struct clover_region *r)
{
	memset(r, 0, sizeof(*r));
	r->server = l->server_idx;
	r->rkey_any = l->rkey_any;
	r->rkey = l->rkey;
	r->base = l->base;
	r->last = l->length ? l->base + l->length - 1 : UINT64_MAX;
	r->write_min = l->write_min;
	r->key_offset = l->key_offset;
	r->key_width = l->key_width;
	r->next_offset = l->next_offset;
	r->read_min = l->read_min;
}

void
clover_params_from_config(struct clover_params *prm, const struct sword_config *cfg)
{
	unsigned int i;

	memset(prm, 0, sizeof(*prm));
	for (i = 0; i < cfg->n_clover && i < CLOVER_MAX_REGIONS; i++)
		layout_region(&cfg->clover_layouts[i], &prm->regions[prm->n_regions++]);
	prm->keys = cfg->clover_keys;
	prm->read_factor = cfg->clover_read_factor;
	prm->read_ways = cfg->clover_read_ways;
	prm->qps = cfg->clover_qps;
	prm->cas = cfg->clover_cas;
	prm->write_steering = cfg->clover_write_steering;
	prm->read_steering = cfg->clover_read_steering;
}

static void *
fn_create(const struct sword_config *cfg, struct sword_worker *w, int socket_id)
{
	struct clover_params prm;

	(void)w;
	(void)socket_id;
	clover_params_from_config(&prm, cfg);
	return clover_create(&prm);
}

static void
fn_destroy(void *state)
{
	clover_destroy(state);
}

static enum sword_fn_verdict
fn_process(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	(void)w;
	if (!clover_process_verified(state, ctx->frame, ctx->p, ctx->server, ctx->to_server,
				     ctx->icrc_ok, ctx->counters))
		return SWORD_FN_PASS;
	ctx->icrc_ok = true;    /* steered only after its ICRC verified */
	return SWORD_FN_MODIFIED;
}

/*
 * Live sections (a reload added or removed [clover.NAME] layouts, or
 * servers): the tables are sized by [clover] at start and take any
 * layout; only the region slots are counted (lib/clover never reuses a
 * removed one's).
 */
static int
fn_prepare(void *state, struct sword_worker *w, const struct sword_config *next,
	   int socket_id, char *err, size_t errlen)
{
	struct clover_region r;
	unsigned int n = 0;
	const char *first = NULL;

	(void)w;
	(void)socket_id;
	for (unsigned int i = 0; i < next->n_clover; i++) {
		if (next->clover_layouts[i].state != SWORD_INST_ACTIVE)
			continue;
		layout_region(&next->clover_layouts[i], &r);
		if (clover_region_find(state, &r) >= 0)
			continue;
		n++;
		if (first == NULL)
			first = next->clover_layouts[i].name;
	}
	if (n > clover_region_room(state)) {
		snprintf(err, errlen, "%s: [clover.%s]: room for %u more Clover layout(s) "
			 "until a restart (%d, counting removed ones), the reload adds %u",
			 next->source, first, clover_region_room(state), CLOVER_MAX_REGIONS, n);
		return -1;
	}
	return 0;
}

/* On the worker's lcore between bursts: the slots follow cfg's layouts. */
static void
fn_reconfigure(void *state, const struct sword_config *cfg)
{
	const struct clover_region *have;
	struct clover_region r;
	int slot, st;

	for (unsigned int i = 0; i < cfg->n_clover; i++) {
		const struct sword_clover_conf *l = &cfg->clover_layouts[i];

		layout_region(l, &r);
		slot = clover_region_find(state, &r);
		if (l->state == SWORD_INST_ACTIVE && slot < 0)
			clover_region_add(state, &r);
		else if (l->state == SWORD_INST_RETIRING && slot >= 0)
			clover_region_retire(state, (unsigned int)slot);
	}
	for (unsigned int k = 0; (st = clover_region_state(state, k, &have)) >= 0; k++) {
		bool keep = false;

		if (st == CLOVER_REGION_DEAD)
			continue;
		for (unsigned int i = 0; i < cfg->n_clover && !keep; i++) {
			layout_region(&cfg->clover_layouts[i], &r);
			keep = clover_region_find(state, &r) == (int)k;
		}
		if (!keep)
			clover_region_remove(state, k);
	}
}

static uint64_t
fn_owed(const void *state, const struct sword_config *cfg)
{
	struct clover_region r;
	uint64_t owed = 0;
	int slot;

	for (unsigned int i = 0; i < cfg->n_clover; i++) {
		if (cfg->clover_layouts[i].state != SWORD_INST_RETIRING)
			continue;
		layout_region(&cfg->clover_layouts[i], &r);
		slot = clover_region_find(state, &r);
		if (slot >= 0)
			owed += clover_region_owed(state, (unsigned int)slot);
	}
	return owed;
}

const struct sword_fn_ops clover_fn_ops = {
	.name = "clover",
	.create = fn_create,
	.destroy = fn_destroy,
	.process = fn_process,
	.reconfigure = fn_reconfigure,
	.prepare = fn_prepare,
	.owed = fn_owed,
	.n_counters = CLOVER_COUNTER_NUM,
	.counter_names = clover_counter_names,
};
