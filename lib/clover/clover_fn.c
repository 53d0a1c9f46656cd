/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover_fn.c — lib/clover as a swordd function (sword_fn_ops): builds the
 * steering tables of each worker from [clover] / [clover.NAME] and runs
 * clover_process on every managed frame.
 */
#include <stdint.h>

#include "clover.h"
#include "clover_fn.h"

_Static_assert(SWORD_CLOVER_READ_WAYS == CLOVER_MAX_READ_WAYS,
	       "[clover] read_ways range must match lib/clover's");

void
clover_params_from_config(struct clover_params *prm, const struct sword_config *cfg)
{
	unsigned int i;

	memset(prm, 0, sizeof(*prm));
	for (i = 0; i < cfg->n_clover && i < CLOVER_MAX_REGIONS; i++) {
		const struct sword_clover_conf *l = &cfg->clover_layouts[i];
		struct clover_region *r = &prm->regions[prm->n_regions++];

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

const struct sword_fn_ops clover_fn_ops = {
	.name = "clover",
	.create = fn_create,
	.destroy = fn_destroy,
	.process = fn_process,
	.n_counters = CLOVER_COUNTER_NUM,
	.counter_names = clover_counter_names,
};
