/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_worker.c — classify a burst and decide where each frame goes.
 *
 * The decision, per frame:
 *   not RoCEv2 (status > 0)         → forward unchanged (non_roce)
 *   malformed RoCEv2 (status < 0)   → forward unchanged (malformed_<reason>);
 *                                     never repaired, never re-signed
 *   RoCEv2, server not managed      → forward unchanged (unmanaged)
 *   RoCEv2, managed, other owner    → hand off to the owner worker
 *   RoCEv2, managed, ours           → function chain (managed_rx), then
 *                                     forward unless a function took it
 * "Forward" means: out of the other side (two-port) or back out of the
 * same port (one-port).
 *
 * Staged bursts (issue #13).  Checking an ICRC one frame at a time is a
 * latency-bound chain of carry-less multiplies; several frames at once
 * (roce_icrc_verify_burst) overlap those chains or use wider vectors.  So
 * a burst goes through in three passes:
 *   1. classify every frame (counters, hand-off as above); frames for the
 *      functions, and everything after the first of them, are held back so
 *      that each side's output keeps the arrival order;
 *   2. verify together the ICRCs the functions would check
 *      (sword_fn_ops.checks_icrc);
 *   3. in arrival order, forward the held frames and run the functions on
 *      theirs with the verdict in ctx->icrc_ok (a frame whose ICRC is bad
 *      gets false, exactly as before: the functions check and count it,
 *      and nothing re-signs it).  Arrival order is PSN order per
 *      connection, so every decision is the one the frame would have got
 *      alone.
 * w->one_at_a_time keeps the former path (classify and act per frame),
 * the reference the tests compare against and, measured, still the faster
 * one: staging is on only with [cores] staged_bursts = on.  A worker whose
 * functions check no ICRC (checks_icrc) takes it anyway, since staging
 * would buy it nothing.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "sword_log.h"
#include "sword_worker.h"

static const struct sword_fn_ops *feature_ops[SWORD_FEATURE_NUM];

const char *
sword_feature_name(enum sword_feature f)
{
	static const char *const names[SWORD_FEATURE_NUM] = {
		[SWORD_FEATURE_ATOMIC_REPLACEMENT] = "atomic_replacement",
		[SWORD_FEATURE_REMAPPING] = "remapping",
		[SWORD_FEATURE_CLOVER] = "clover",
	};

	return (unsigned int)f < SWORD_FEATURE_NUM ? names[f] : "?";
}

void
sword_feature_register(enum sword_feature f, const struct sword_fn_ops *ops)
{
	if ((unsigned int)f < SWORD_FEATURE_NUM)
		feature_ops[f] = ops;
}

const struct sword_fn_ops *
sword_feature_ops(enum sword_feature f)
{
	return (unsigned int)f < SWORD_FEATURE_NUM ? feature_ops[f] : NULL;
}

void
sword_shard_map_build(struct sword_shard_map *sm, const struct sword_config *cfg)
{
	unsigned int i, k;

	memset(sm, 0, sizeof(*sm));
	sm->n_servers = cfg->n_servers;
	for (i = 0; i < cfg->n_servers; i++) {
		uint32_t ip = cfg->servers[i].ip;
		uint32_t h = (rte_be_to_cpu_32(ip) * 2654435761u) >> 24;

		sm->owner[i] = (uint16_t)sword_config_server_worker(cfg, i);
		/* a FREE slot (a server a reload removed) is no one's */
		if (ip == 0 || cfg->servers[i].state == SWORD_INST_FREE)
			continue;
		for (k = 0; k < SWORD_SHARD_SLOTS; k++) {
			uint32_t s = (h + k) & (SWORD_SHARD_SLOTS - 1);

			if (sm->ip[s] == 0) {
				sm->ip[s] = ip;
				sm->server[s] = (int16_t)i;
				break;
			}
		}
	}
}

static void note_icrc_checks(struct sword_worker *w, const struct sword_fn_ops *ops,
			     const void *state);

void
sword_worker_reconfigure(struct sword_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_fn; i++)
		if (w->fn[i].ops->reconfigure != NULL)
			w->fn[i].ops->reconfigure(w->fn[i].state, w->cfg);
	/* servers may have come or gone (a live reload) */
	memset(w->icrc_ahead, 0, sizeof(w->icrc_ahead));
	w->icrc_ahead_servers = 0;
	w->icrc_ahead_any = false;
	for (i = 0; i < w->n_fn; i++)
		note_icrc_checks(w, w->fn[i].ops, w->fn[i].state);
}

void
sword_worker_init(struct sword_worker *w, const struct sword_config *cfg,
		  const struct sword_shard_map *shards, unsigned int id)
{
	memset(w, 0, sizeof(*w));
	w->id = (uint16_t)id;
	w->n_workers = cfg->workers;
	w->cfg = cfg;
	w->shards = shards;
	w->one_port = cfg->mode == SWORD_MODE_ONE_PORT;
	w->one_at_a_time = !cfg->staged_bursts;
	w->port_of_side[SWORD_SIDE_CLIENT] = cfg->client_port;
	w->port_of_side[SWORD_SIDE_SERVER] = w->one_port ? cfg->client_port
							 : cfg->server_port;
}

/* Which frames' ICRCs a burst verifies ahead for this function (its
 * answers asked once here, so the hot path reads two words, not a call). */
static void
note_icrc_checks(struct sword_worker *w, const struct sword_fn_ops *ops,
		 const void *state)
{
	const struct sword_config *cfg = w->cfg;
	unsigned int srv, dir, op;

	RTE_BUILD_BUG_ON(SWORD_MAX_SERVERS > 64);
	if (ops->checks_icrc == NULL)
		return;
	for (srv = 0; srv < cfg->n_servers; srv++)
		for (dir = 0; dir < 2 && cfg->servers[srv].state != SWORD_INST_FREE; dir++)
			for (op = 0; op < 256; op++) {
				if (!ops->checks_icrc(state, cfg->servers[srv].ip,
						      (uint8_t)op, dir == 1))
					continue;
				w->icrc_ahead[dir][op] = 1;
				w->icrc_ahead_servers |= UINT64_C(1) << srv;
				w->icrc_ahead_any = true;
			}
}

int
sword_worker_attach_fn(struct sword_worker *w, const struct sword_fn_ops *ops,
		       int socket_id)
{
	unsigned int base = 0, i;
	void *state = NULL;

	if (w->n_fn >= SWORD_MAX_FNS) {
		SWORD_LOG(ERR, "%s: more than %d functions", ops->name, SWORD_MAX_FNS);
		return -1;
	}
	for (i = 0; i < w->n_fn; i++)
		base += w->fn[i].ops->n_counters;
	if (base + ops->n_counters > SWORD_FN_MAX_COUNTERS) {
		SWORD_LOG(ERR, "%s: its %u counters do not fit (%u of %d used)", ops->name,
			  ops->n_counters, base, SWORD_FN_MAX_COUNTERS);
		return -1;
	}
	if (ops->create != NULL) {
		state = ops->create(w->cfg, w, socket_id);
		if (state == NULL) {
			SWORD_LOG(ERR, "%s: cannot create worker %u's state", ops->name, w->id);
			return -1;
		}
	}
	w->fn[w->n_fn].ops = ops;
	w->fn[w->n_fn].state = state;
	w->fn[w->n_fn].counter_base = base;
	w->fn[w->n_fn].process = ops->process;
	w->fn[w->n_fn].counters = &w->stats.fn[base];
	w->n_fn++;
	if (ops->tick != NULL) {
		w->has_tick = true;
		w->tick_tsc = rte_get_tsc_hz() / 1000000 * SWORD_TICK_US;
	}
	note_icrc_checks(w, ops, state);
	sword_stats_set_fn_names(base, ops->n_counters, ops->counter_names);
	return 0;
}

void
sword_worker_detach_all(struct sword_worker *w)
{
	unsigned int i;

	/* last first: a later function may use a table an earlier one
	 * keeps (the connection table in the serializer's state segment) */
	for (i = w->n_fn; i-- > 0;)
		if (w->fn[i].ops->destroy != NULL && w->fn[i].state != NULL)
			w->fn[i].ops->destroy(w->fn[i].state);
	w->n_fn = 0;
	memset(w->icrc_ahead, 0, sizeof(w->icrc_ahead));
	w->icrc_ahead_servers = 0;
	w->icrc_ahead_any = false;
	if (!w->rc_borrowed)
		rc_destroy(w->rc);
	w->rc = NULL;
	w->rc_borrowed = false;
	w->rc_adopted = false;
}

static inline void
forward(struct sword_worker *w, struct sword_tx_batch *out, enum sword_side side,
	struct rte_mbuf *m)
{
	if (likely(sword_tx_batch_add(out, side, m) == 0))
		return;
	w->stats.tx_dropped++;
	w->stats.port_tx_dropped[sword_worker_slot_of_side(w, side)]++;
	rte_pktmbuf_free(m);
}

/* A function, timed (one frame in SWORD_FN_SAMPLE_EVERY): out of line so
 * the untimed call in the chain loop keeps its registers. */
static __rte_noinline enum sword_fn_verdict
call_fn_timed(struct sword_worker *w, unsigned int k, struct sword_fn_ctx *ctx)
{
	const uint64_t t0 = rte_rdtsc();
	const enum sword_fn_verdict v = w->fn[k].process(w->fn[k].state, w, ctx);

	w->stats.fn_sample_cycles[k] += rte_rdtsc() - t0;
	w->stats.fn_samples[k]++;
	return v;
}

static __rte_always_inline enum sword_fn_verdict
call_fn(struct sword_worker *w, unsigned int k, struct sword_fn_ctx *ctx, bool timed)
{
	ctx->stage = k;
	ctx->counters = w->fn[k].counters;
	if (likely(!timed))
		return w->fn[k].process(w->fn[k].state, w, ctx);
	return call_fn_timed(w, k, ctx);
}

static int emit_from(struct sword_worker *w, const struct sword_fn_ctx *ctx,
		     struct rte_mbuf *m, bool to_server, unsigned int stage,
		     bool unsigned_in);

/*
 * The functions from position `from` of the frame's direction on (requests
 * in chain order, responses in reverse), then the frame leaves unless one
 * took or dropped it.  Returns false if it did not leave.
 *
 * ctx->resign_due: each function is called with it 0 and with sign_state
 * saying what the stored ICRC is worth; after a MODIFIED, what it set
 * says what the frame now needs: one that re-signed in full (left it 0)
 * clears an earlier one's debt, a full re-sign makes one due, a header
 * change makes a patch due (a function asks for that only where the
 * ICRC was right or a patch was due already, so no full re-sign is lost),
 * and a PASS changes nothing.  Kept in `state` (enum sword_sign_state)
 * so that one register crosses the calls; a frame created unsigned
 * (sword_fn_emit_unsigned) starts with a re-sign due.
 */
static __rte_always_inline bool
run_chain_once(struct sword_worker *w, struct sword_fn_ctx *ctx, unsigned int from,
	       bool timed, bool unsigned_in)
{
	/* n_fn and the direction do not change while a frame runs (attach
	 * is not called from a function; emit_from makes a ctx of its own):
	 * k walks the slots in the frame's direction, no fn_at per call */
	const unsigned int n = w->n_fn;
	const int step = ctx->to_server ? 1 : -1;
	unsigned int k = ctx->to_server ? from : n - 1 - from;
	unsigned int state = unsigned_in ? SWORD_SIGN_DUE : SWORD_UNCHANGED, i;
	bool modified = false;     /* unsigned_in only (else state != 0) */

	RTE_BUILD_BUG_ON(SWORD_MAX_FNS > SWORD_FN_MAX_TIMED);
	ctx->sign_state = (uint8_t)state;
	for (i = from; i < n; i++, k += step) {
		enum sword_fn_verdict v;

		ctx->resign_due = 0;
		v = call_fn(w, k, ctx, timed);
		/* PASS and MODIFIED go on with one test; the rest stop */
		if (likely((unsigned int)v <= SWORD_FN_MODIFIED)) {
			if (v == SWORD_FN_MODIFIED) {
				/* 0, SWORD_RESIGN_FULL, SWORD_RESIGN_HEADERS:
				 * SIGNED, SIGN_DUE, SIGN_HEADERS_DUE */
				modified = unsigned_in;
				state = SWORD_SIGNED + ctx->resign_due;
				ctx->sign_state = (uint8_t)state;
			}
			continue;
		}
		if (v == SWORD_FN_CONSUMED) {
			w->stats.consumed++;
		} else {        /* SWORD_FN_DROP, or what no function returns */
			w->stats.filtered++;
			rte_pktmbuf_free(ctx->m);
		}
		return false;
	}
	if (state == SWORD_SIGN_DUE)
		roce_resign(ctx->frame, ctx->p);
	else if (unlikely(state == SWORD_SIGN_HEADERS_DUE))
		roce_resign_headers(ctx->frame, ctx->p, &ctx->hdr_before);
	if (unsigned_in ? modified : state != SWORD_UNCHANGED) {
		ctx->resign_due = 0;
		w->stats.rewritten++;
		w->stats.server_rewritten[ctx->server]++;
	} else {
		w->stats.passthrough++;
	}
	forward(w, ctx->out, ctx->out_side, ctx->m);
	return true;
}

/* The frame a function asked to follow this one (sword_fn_emit_after):
 * rare, out of the inlined chain. */
static __rte_noinline void
emit_after_frame(struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	struct rte_mbuf *a = ctx->after;

	ctx->after = NULL;
	emit_from(w, ctx, a, ctx->after_to_server, ctx->after_stage, false);
}

/*
 * run_chain_once, then the frame a function asked to follow it
 * (sword_fn_emit_after).  Returns false if the frame did not leave.
 */
static __rte_always_inline bool
run_chain(struct sword_worker *w, struct sword_fn_ctx *ctx, unsigned int from, bool timed,
	  bool unsigned_in)
{
	bool left = run_chain_once(w, ctx, from, timed, unsigned_in);

	if (unlikely(ctx->after != NULL))
		emit_after_frame(w, ctx);
	return left;
}

/* The chain for a frame whose functions are timed (one in
 * SWORD_FN_SAMPLE_EVERY): a loop of its own, out of line, so the untimed
 * one tests nothing per call. */
static __rte_noinline void
run_chain_timed(struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	run_chain(w, ctx, 0, true, false);
}

/*
 * Run the function chain on a managed frame we own.  Always inlined into
 * the burst loops, whose registers are saved already: as a call of its
 * own it paid a prologue, an epilogue and nine arguments per frame.
 * ctx is filled field by field, not zeroed whole: stage, counters and
 * resign_due are set before each call (call_fn, run_chain_once),
 * after_stage and after_to_server are read only with after set.
 */
static __rte_always_inline void
run_functions(struct sword_worker *w, struct rte_mbuf *m, struct roce_pkt *p,
	      int server, bool to_server, enum sword_side out_side,
	      struct sword_tx_batch *out, uint64_t now, bool icrc_ok)
{
	struct sword_fn_ctx ctx;

	ctx.m = m;
	ctx.p = p;
	ctx.frame = rte_pktmbuf_mtod(m, uint8_t *);
	ctx.server = server;
	ctx.to_server = to_server;
	ctx.icrc_ok = icrc_ok;
	ctx.out_side = out_side;
	ctx.out = out;
	ctx.after = NULL;
	ctx.pool = w->pool;
	ctx.now = now;
	/* per-function latency, sampled: a timestamp pair on every frame would
	 * cost more than the functions themselves */
	if (likely((++w->fn_sample_tick & (SWORD_FN_SAMPLE_EVERY - 1)) != 0))
		run_chain(w, &ctx, 0, false, false);
	else
		run_chain_timed(w, &ctx);
}

int
sword_fn_emit(struct sword_worker *w, const struct sword_fn_ctx *ctx,
	      struct rte_mbuf *m, bool to_server)
{
	return emit_from(w, ctx, m, to_server, ctx->stage, false);
}

int
sword_fn_emit_unsigned(struct sword_worker *w, const struct sword_fn_ctx *ctx,
		       struct rte_mbuf *m, bool to_server)
{
	return emit_from(w, ctx, m, to_server, ctx->stage, true);
}

int
sword_fn_emit_after(struct sword_worker *w, struct sword_fn_ctx *ctx,
		    struct rte_mbuf *m, bool to_server)
{
	if (ctx->after != NULL) {
		w->stats.filtered++;
		rte_pktmbuf_free(m);
		return -1;
	}
	ctx->after = m;
	ctx->after_to_server = to_server;
	ctx->after_stage = ctx->stage;
	return 0;
}

/* A created frame enters the chain after the function at stage. */
static int
emit_from(struct sword_worker *w, const struct sword_fn_ctx *ctx,
	  struct rte_mbuf *m, bool to_server, unsigned int stage, bool unsigned_in)
{
	struct roce_pkt p;
	struct sword_fn_ctx e = {
		.m = m, .p = &p, .frame = rte_pktmbuf_mtod(m, uint8_t *),
		.server = ctx->server, .to_server = to_server, .icrc_ok = true,
		.out_side = ctx->out_side,
		.out = ctx->out, .pool = ctx->pool, .now = ctx->now,
	};
	unsigned int pos;

	/* the other direction leaves by the other port (two-port mode); one
	 * port carries both, in one order */
	if (to_server != ctx->to_server && !w->one_port)
		e.out_side = ctx->out_side == SWORD_SIDE_SERVER ? SWORD_SIDE_CLIENT
								: SWORD_SIDE_SERVER;

	/* the caller's place in this direction's order; later ones follow */
	pos = to_server ? stage : w->n_fn - 1 - stage;
	if (roce_parse(e.frame, rte_pktmbuf_data_len(m), &p) != ROCE_OK) {
		w->stats.filtered++;
		rte_pktmbuf_free(m);
		return -1;
	}
	return run_chain(w, &e, pos + 1, false, unsigned_in) ? 0 : -1;
}

struct rc_params
sword_worker_rc_params(const struct sword_worker *w)
{
	const struct sword_config *cfg = w->cfg;
	const uint64_t ms = rte_get_tsc_hz() / 1000;

	return (struct rc_params){
		.max_conns = cfg->qps,
		.idle_tsc = (uint64_t)cfg->atomic.conn_idle_ms * ms,
		.holdoff_tsc = (uint64_t)cfg->atomic.learn_holdoff_ms * ms,
		.history = cfg->stub_ring };
}

struct rc_table *
sword_worker_rc(struct sword_worker *w)
{
	if (w->rc == NULL) {
		const struct rc_params rp = sword_worker_rc_params(w);

		w->rc = rc_create(&rp);
	}
	return w->rc;
}

int
sword_worker_use_rc(struct sword_worker *w, struct rc_table *rc, bool adopted)
{
	if (w->rc != NULL && w->rc != rc)
		return -1;
	w->rc = rc;
	w->rc_borrowed = true;
	w->rc_adopted = adopted;
	return 0;
}

static void
publish_fn_counters(struct sword_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_fn; i++)
		if (w->fn[i].ops->publish != NULL)
			w->fn[i].ops->publish(w->fn[i].state,
					      w->fn[i].counters);
}

/* Frames whose headers are prefetched ahead of the one being classified. */
#define PREFETCH_AHEAD 4

/*
 * Per-burst tallies of the common outcomes, added to the worker's stats
 * once per burst (fewer read-modify-writes of shared cache lines per frame;
 * the main lcore reads stats while we run).
 */
struct burst_tally {
	uint32_t non_roce;
	uint32_t malformed;
	uint32_t unmanaged;
	uint32_t managed_rx;
	uint32_t passthrough;
};

static __rte_noinline void
forward_full(struct sword_worker *w, enum sword_side side, struct rte_mbuf *m)
{
	w->stats.tx_dropped++;
	w->stats.port_tx_dropped[sword_worker_slot_of_side(w, side)]++;
	rte_pktmbuf_free(m);
}

/* forward() for the hot loop: the full-batch case out of line. */
static __rte_always_inline void
forward_fast(struct sword_worker *w, struct sword_tx_batch *out, enum sword_side side,
	     struct rte_mbuf *m)
{
	uint16_t k = out->n[side];

	if (unlikely(k >= SWORD_TX_BATCH_MAX)) {
		forward_full(w, side, m);
		return;
	}
	out->pkts[side][k] = m;
	out->n[side] = (uint16_t)(k + 1);
}

/* What classify() made of a frame. */
enum frame_class {
	FRAME_FORWARD,          /* leaves unchanged (counted passthrough) */
	FRAME_TAKEN,            /* handed off to its owner, or dropped */
	FRAME_FUNCTIONS,        /* managed, ours: through the function chain */
};

/* Parse a frame into *p, count it, hand it off if another worker owns it
 * (see the top comment).  Always inlined: a call per frame costs more
 * than what it does. */
static __rte_always_inline enum frame_class
classify(struct sword_worker *w, struct rte_mbuf *m, uint16_t port, bool managed_any,
	 struct sword_tx_batch *out, struct burst_tally *t, struct roce_pkt *p,
	 int *server_out, bool *to_server_out)
{
	struct sword_worker_stats *st = &w->stats;
	const struct sword_shard_map *sm = w->shards;
	int status, server;
	bool to_server;

	/* roce_parse_mbuf() is roce_parse() plus the chained-mbuf case */
	if (likely(m->nb_segs == 1))
		status = roce_parse(rte_pktmbuf_mtod(m, const uint8_t *),
				    rte_pktmbuf_data_len(m), p);
	else
		status = roce_parse_mbuf(m, p);
	if (status > 0) {
		t->non_roce++;
		if (status < ROCE_NOT_NUM)
			st->non_roce_by[status]++;
		t->passthrough++;
		return FRAME_FORWARD;
	}
	if (unlikely(status < 0)) {
		t->malformed++;
		if (-status < ROCE_ERR_NUM)
			st->malformed_by[-status]++;
		t->passthrough++;
		return FRAME_FORWARD;
	}

	/* Requests by destination, responses by source. */
	server = -1;
	to_server = true;
	if (managed_any && p->ip_version == 4) {
		server = sword_shard_lookup(sm, p->dst_ip4);
		if (server < 0) {
			server = sword_shard_lookup(sm, p->src_ip4);
			to_server = false;
		}
	}
	if (server < 0) {
		st->opcode[p->opcode]++;
		t->unmanaged++;
		t->passthrough++;
		return FRAME_FORWARD;
	}
	if (sm->owner[server] != w->id && sm->owner[server] < w->n_workers) {
		uint16_t o = sm->owner[server];

		m->port = port;        /* the owner routes by it */
		if (likely(out->n_handoff[o] < SWORD_MAX_BURST)) {
			out->handoff[o][out->n_handoff[o]++] = m;
			st->dispatched++;
		} else {
			st->dispatch_dropped++;
			rte_pktmbuf_free(m);
		}
		return FRAME_TAKEN;
	}
	st->opcode[p->opcode]++;
	st->server_managed_rx[server]++;
	t->managed_rx++;
	if (w->n_fn == 0) {
		t->passthrough++;
		return FRAME_FORWARD;
	}
	*server_out = server;
	*to_server_out = to_server;
	return FRAME_FUNCTIONS;
}

/* Classify one frame and send it on its way at once (the reference path). */
static __rte_always_inline void
process_one(struct sword_worker *w, struct rte_mbuf *m, uint16_t port,
	    enum sword_side out_side, bool managed_any, struct sword_tx_batch *out,
	    struct burst_tally *t, uint64_t *now)
{
	struct roce_pkt p;
	int server = -1;
	bool to_server = true;

	switch (classify(w, m, port, managed_any, out, t, &p, &server, &to_server)) {
	case FRAME_FORWARD:
		forward_fast(w, out, out_side, m);
		return;
	case FRAME_TAKEN:
		return;
	case FRAME_FUNCTIONS:
	default:
		break;
	}
	if (*now == 0)
		*now = rte_rdtsc();
	run_functions(w, m, &p, server, to_server, out_side, out, *now, false);
}

/*
 * A staged burst (top comment): the frames held back in pass 1, in arrival
 * order, and the ICRCs pass 2 verifies.  At most SWORD_MAX_BURST frames a
 * pass; on the lcore's stack (about 10 KiB), not in the worker, so the
 * main lcore reading the stats never shares its cache lines.
 */
struct held {
	struct rte_mbuf *m;
	int16_t server;                          /* -1: forward unchanged */
	uint8_t out_side;
	bool to_server;
	bool icrc_ok;
};

struct stage {
	struct held h[SWORD_MAX_BURST];
	struct roce_pkt p[SWORD_MAX_BURST];
	uint8_t *vframe[SWORD_MAX_BURST];        /* to verify: frame, parse, */
	const struct roce_pkt *vpkt[SWORD_MAX_BURST];
	uint16_t vheld[SWORD_MAX_BURST];         /* and its place in h[] */
	bool vok[SWORD_MAX_BURST];
};

/* How full the stage is: apart from it, so that the compiler keeps these
 * in registers (the stage's address goes to roce_parse, theirs does not). */
struct stage_count {
	uint16_t n;                              /* frames held */
	uint16_t n_fn;                           /* of them, for the functions */
	uint16_t n_verify;
};

static __rte_always_inline bool
icrc_ahead(const struct sword_worker *w, int server, uint8_t opcode, bool to_server)
{
	return (w->icrc_ahead[to_server][opcode] & (w->icrc_ahead_servers >> server)) != 0;
}

/* Pass 1 for one frame: classify it, and hold it back if it is for the
 * functions or comes after one that is. */
static __rte_always_inline void
stage_one(struct sword_worker *w, struct stage *s, struct stage_count *c,
	  struct rte_mbuf *m, uint16_t port, enum sword_side out_side, bool managed_any,
	  struct sword_tx_batch *out, struct burst_tally *t)
{
	const uint16_t k = c->n;
	int server = -1;
	bool to_server = true;

	switch (classify(w, m, port, managed_any, out, t, &s->p[k], &server, &to_server)) {
	case FRAME_TAKEN:
		return;
	case FRAME_FORWARD:
		if (c->n_fn == 0) {
			/* nothing held before it: leaving now keeps the order */
			forward_fast(w, out, out_side, m);
			return;
		}
		server = -1;
		break;
	case FRAME_FUNCTIONS:
	default:
		c->n_fn++;
		if (icrc_ahead(w, server, s->p[k].opcode, to_server)) {
			s->vframe[c->n_verify] = rte_pktmbuf_mtod(m, uint8_t *);
			s->vpkt[c->n_verify] = &s->p[k];
			s->vheld[c->n_verify] = k;
			c->n_verify++;
		}
		break;
	}
	s->h[k] = (struct held){ .m = m, .server = (int16_t)server,
				 .out_side = (uint8_t)out_side, .to_server = to_server };
	c->n = (uint16_t)(k + 1);
}

/* Passes 2 and 3: verify the held frames' ICRCs together, then forward
 * the held frames and run the functions, in arrival order. */
static void
stage_run(struct sword_worker *w, struct stage *s, struct stage_count c,
	  struct sword_tx_batch *out, uint64_t *now)
{
	uint16_t k;

	if (c.n == 0)
		return;
	if (c.n_verify > 0) {
		roce_icrc_verify_burst(s->vframe, s->vpkt, c.n_verify, s->vok);
		for (k = 0; k < c.n_verify; k++)
			s->h[s->vheld[k]].icrc_ok = s->vok[k];
	}
	if (*now == 0)
		*now = rte_rdtsc();
	for (k = 0; k < c.n; k++) {
		const struct held *h = &s->h[k];
		const enum sword_side side = (enum sword_side)h->out_side;

		if (h->server < 0)
			forward_fast(w, out, side, h->m);
		else
			run_functions(w, h->m, &s->p[k], h->server, h->to_server, side, out,
				      *now, h->icrc_ok);
	}
}

static inline enum sword_side
out_side_of_port(const struct sword_worker *w, uint16_t port)
{
	return sword_worker_side_of_port(w, port) == SWORD_SIDE_CLIENT
		? SWORD_SIDE_SERVER : SWORD_SIDE_CLIENT;
}

/*
 * Every frame of pkts[0..n) through process_one (s == NULL) or stage_one
 * (pass 1).  Inlined with s a constant NULL or not, so each path gets its
 * own loop.
 */
static __rte_always_inline void
classify_all(struct sword_worker *w, uint16_t in_port, struct rte_mbuf **pkts,
	     uint16_t n, struct sword_tx_batch *out, struct burst_tally *t,
	     uint64_t *now, struct stage *s, struct stage_count *c)
{
	const bool managed_any = w->shards->n_servers > 0;
	uint16_t i;

	/* l3fwd's pattern: headers of the first frames now, then each loop
	 * turn prefetches the one PREFETCH_AHEAD ahead (no per-frame test) */
	for (i = 0; i < n && i < PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	if (in_port != SWORD_PORT_FROM_MBUF) {
		const enum sword_side out_side = out_side_of_port(w, in_port);

		for (i = 0; i + PREFETCH_AHEAD < n; i++) {
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
			if (s == NULL)
				process_one(w, pkts[i], in_port, out_side, managed_any, out,
					    t, now);
			else
				stage_one(w, s, c, pkts[i], in_port, out_side, managed_any, out, t);
		}
		for (; i < n; i++) {
			if (s == NULL)
				process_one(w, pkts[i], in_port, out_side, managed_any, out,
					    t, now);
			else
				stage_one(w, s, c, pkts[i], in_port, out_side, managed_any, out, t);
		}
		return;
	}
	/* hand-off ring: frames of both ports, routed by ->port */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const enum sword_side out_side = out_side_of_port(w, m->port);

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
		if (s == NULL)
			process_one(w, m, m->port, out_side, managed_any, out, t, now);
		else
			stage_one(w, s, c, m, m->port, out_side, managed_any, out, t);
	}
}

/* The staged path, SWORD_MAX_BURST frames (one stage) at a time. */
static void
process_staged(struct sword_worker *w, uint16_t in_port, struct rte_mbuf **pkts,
	       uint16_t n, struct sword_tx_batch *out, struct burst_tally *t,
	       uint64_t *now)
{
	struct stage s;
	uint16_t done, chunk;

	for (done = 0; done < n; done = (uint16_t)(done + chunk)) {
		chunk = (uint16_t)RTE_MIN(n - done, SWORD_MAX_BURST);
		struct stage_count c = { 0, 0, 0 };

		classify_all(w, in_port, pkts + done, chunk, out, t, now, &s, &c);
		stage_run(w, &s, c, out, now);
	}
}

uint32_t sword_drain_requested;

uint16_t
sword_worker_process(struct sword_worker *w, uint16_t in_port,
		     struct rte_mbuf **pkts, uint16_t n, struct sword_tx_batch *out)
{
	struct sword_worker_stats *st = &w->stats;
	const unsigned int before = out->n[SWORD_SIDE_CLIENT] + out->n[SWORD_SIDE_SERVER];
	struct burst_tally t = { 0 };
	uint64_t now = 0;

	/* one load per burst (a plain load on x86) */
	w->draining = __atomic_load_n(&sword_drain_requested, __ATOMIC_ACQUIRE) != 0;
	if (w->icrc_ahead_any && !w->one_at_a_time)
		process_staged(w, in_port, pkts, n, out, &t, &now);
	else
		classify_all(w, in_port, pkts, n, out, &t, &now, NULL, NULL);
	st->non_roce += t.non_roce;
	st->malformed += t.malformed;
	st->unmanaged += t.unmanaged;
	st->managed_rx += t.managed_rx;
	st->passthrough += t.passthrough;
	if (now != 0)
		publish_fn_counters(w);
	/* functions may have added frames of their own: count what is queued */
	return (uint16_t)(out->n[SWORD_SIDE_CLIENT] + out->n[SWORD_SIDE_SERVER] - before);
}

void
sword_worker_forget(struct sword_worker *w, uint64_t now)
{
	for (unsigned int k = 0; k < w->n_fn; k++)
		if (w->fn[k].ops->forget != NULL)
			w->fn[k].ops->forget(w->fn[k].state, now);
	publish_fn_counters(w);
}

uint16_t
sword_worker_tick(struct sword_worker *w, uint64_t now, struct sword_tx_batch *out)
{
	const unsigned int before = out->n[SWORD_SIDE_CLIENT] + out->n[SWORD_SIDE_SERVER];
	unsigned int k;

	if (likely(!w->has_tick) || now - w->last_tick < w->tick_tsc)
		return 0;
	w->last_tick = now;
	for (k = 0; k < w->n_fn; k++) {
		struct sword_fn_ctx ctx = {
			.server = -1, .to_server = true, .icrc_ok = true,
			.out_side = SWORD_SIDE_SERVER, .out = out, .pool = w->pool,
			.now = now, .stage = k,
			.counters = w->fn[k].counters,
		};

		if (w->fn[k].ops->tick != NULL)
			w->fn[k].ops->tick(w->fn[k].state, w, &ctx);
	}
	publish_fn_counters(w);
	return (uint16_t)(out->n[SWORD_SIDE_CLIENT] + out->n[SWORD_SIDE_SERVER] - before);
}
