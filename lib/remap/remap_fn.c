/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_fn.c — lib/remap as a swordd function (sword_fn_ops).
 *
 * Why it exists: lib/remap works on byte buffers; this is the glue.  Each
 * worker remaps the managed servers it owns (SPEC "Sharding": a lane and
 * every connection on it belong to one server, so to one worker), on the
 * worker's connection table.  Where atomic replacement manages a server
 * (it has lock regions) it keeps that table and runs before remapping on
 * requests, after it on responses; for the other servers remapping keeps
 * the table itself.  Frames remapping creates (a client's share of a
 * coalesced lane ACK, a NAK asking a client to resend, an answer given
 * again) go to the client side through the functions after it, so atomic
 * replacement turns an expanded ACK into the ATOMIC ACK its client waits
 * for.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "remap_fn.h"
#include "sword_log.h"
#include "sword_state.h"

#define REMAP_FN_EMIT_MAX 32

struct remap_fn {
	struct remap *remap;
	bool in_state;                 /* remap lives in state (swordd --state) */
	struct sword_state state;
	bool draining;                 /* what remap_set_drain was told */
	uint64_t emit_lost;            /* no mbuf (or no room) for a created frame */
	/* the path MTUs learned (remap_counters.pmtu_learned) that were told
	 * to the operator, for the servers of this worker */
	uint64_t pmtu_told;
	uint32_t cfg_pmtu;
	uint32_t n_servers;
	uint32_t server_ip[SWORD_MAX_SERVERS];
	struct remap_emit emit[REMAP_FN_EMIT_MAX];
};

#define NAME(n) "remap_" #n,
static const char *const remap_fn_counter_names[] = {
	REMAP_COUNTERS(NAME) "remap_emit_lost",
};
#undef NAME
#define N_COUNTERS RTE_DIM(remap_fn_counter_names)

/* Does atomic replacement keep server i's connections on this worker? */
static bool
serializer_keeps(const struct sword_config *cfg, unsigned int i)
{
	if (!cfg->atomic_replacement)
		return false;
	for (unsigned int k = 0; k < cfg->n_locks; k++)
		if (cfg->locks[k].server_idx == (int)i)
			return true;
	return false;
}

/*
 * The worker's remapping in its state segment (swordd --state PATH:
 * PATH.rN), on the connection table the serializer keeps in its own
 * segment, or in this one where no function keeps one (no lock region on
 * this worker).  A segment the previous process left is adopted unless
 * the switch may have carried traffic around swordd while it was gone
 * (failover_bypass: the lanes' server QPs may have seen other PSNs) or
 * the connection table it refers to was not adopted with it; else it is
 * refused with a line and started over (the start hold-off then covers
 * every connection, as without state).  -1: no segment at all.
 */
static int
create_in_state(struct remap_fn *f, struct remap_params *prm, const struct sword_config *cfg,
		struct sword_worker *w)
{
	const bool own_rc = w->rc == NULL;
	struct remap_adopt_info ai;
	uint64_t prev_run;
	char path[256], why[512];
	size_t len;

	if (own_rc) {
		prm->rc = NULL;   /* the segment holds the connection table too */
		prm->own_rc = sword_worker_rc_params(w);
	} else {
		prm->rc = w->rc;
		prm->rc_adopted = w->rc_borrowed && w->rc_adopted;
	}
	len = remap_state_size(prm);
	snprintf(path, sizeof(path), "%s.r%u", cfg->state_path, w->id);
	if (len == 0) {
		SWORD_LOG(ERR, "state: %s: no layout for this configuration", path);
		return -1;
	}
	if (sword_state_open_chain(&f->state, cfg->state_path, path, remap_state_shape(prm), len,
				   !cfg->failover_bypass, &prev_run, why, sizeof(why)) != 0) {
		SWORD_LOG(ERR, "state: %s", why);
		return -1;
	}
	f->in_state = true;
	prm->state_mem = f->state.data;
	prm->state_len = f->state.data_len;
	prm->state_adopt = f->state.adopted;
	prm->state_now = rte_rdtsc();
	f->remap = remap_create(prm);
	if (f->remap == NULL && prm->state_adopt) {
		SWORD_LOG(WARNING, "state: %s: the previous process's lanes are refused (%s): "
			  "starting empty (the start hold-off covers every connection)", path,
			  errno == ESTALE ? "the connection table they refer to was not adopted"
					  : strerror(errno));
		prm->state_adopt = false;
		f->remap = remap_create(prm);
	}
	if (f->remap == NULL ||
	    (own_rc && sword_worker_use_rc(w, remap_rc(f->remap), prm->state_adopt) != 0)) {
		remap_destroy(f->remap);
		f->remap = NULL;
		sword_state_close(&f->state);
		f->in_state = false;
		return -1;
	}
	remap_adopt_info(f->remap, &ai);
	if (!prm->state_adopt) {
		if (!f->state.adopted)
			SWORD_LOG(INFO, "state: %s", why);
		if (ai.conns_given_up)
			SWORD_LOG(WARNING, "state: %s: %u adopted connection(s) of remapped "
				  "servers given up: their lanes were not kept", path,
				  ai.conns_given_up);
		return 0;
	}
	SWORD_LOG(INFO, "state: %s: %u lane(s) open, %u connection(s) on them; given up (a "
		  "frame in progress when it ended%s): %u server(s), %u connection(s)", why,
		  ai.lanes_open, ai.conns_bound, ai.torn ? ": yes" : ": none",
		  ai.servers_given_up, ai.conns_given_up);
	return 0;
}

static void *
fn_create(const struct sword_config *cfg, struct sword_worker *w, int socket_id)
{
	struct remap_server servers[SWORD_MAX_SERVERS];
	struct remap_params prm = { .servers = servers };
	struct remap_fn *f;

	for (unsigned int i = 0; i < cfg->n_servers; i++) {
		if (sword_config_server_worker(cfg, i) != w->id)
			continue;
		servers[prm.n_servers++] = (struct remap_server){
			.ip = cfg->servers[i].ip,
			.lanes = cfg->servers[i].lanes ? cfg->servers[i].lanes
						       : cfg->remap.lanes,
			.keep_conns = !serializer_keeps(cfg, i),
		};
	}
	f = rte_zmalloc_socket("remap_fn", sizeof(*f), RTE_CACHE_LINE_SIZE, socket_id);
	if (f == NULL)
		return NULL;
	if (prm.n_servers == 0)
		return f;              /* this worker owns no server */
	f->cfg_pmtu = cfg->atomic.pmtu;
	f->n_servers = prm.n_servers;
	for (uint32_t i = 0; i < prm.n_servers; i++)
		f->server_ip[i] = servers[i].ip;
	prm.ring = cfg->remap.ring;
	prm.client_ring = cfg->remap.client_ring;
	prm.pmtu = cfg->atomic.pmtu;
	prm.responder_resources = cfg->remap.responder_resources;
	prm.start_holdoff_tsc = (uint64_t)cfg->remap.start_holdoff_ms * rte_get_tsc_hz() / 1000;
	prm.resend_timeout_tsc = rte_get_tsc_hz() / 10;
	prm.stream_quiet_tsc = (uint64_t)cfg->remap.stream_quiet_us * rte_get_tsc_hz() / 1000000;
	prm.out_of_band = cfg->remap.out_of_band;
	if (!prm.out_of_band && w->id == sword_config_server_worker(cfg, 0))
		SWORD_LOG(NOTICE, "remapping: only connections set up by the RDMA CM are remapped; "
			  "others stay on their own server QP ([remap] out_of_band = off)");
	prm.defer_resign = true;   /* the worker re-signs once (ctx->resign_due) */
	if (cfg->state_path[0] != '\0') {
		if (create_in_state(f, &prm, cfg, w) != 0) {
			rte_free(f);
			return NULL;
		}
		return f;
	}
	prm.rc = sword_worker_rc(w);
	if (prm.rc == NULL || (f->remap = remap_create(&prm)) == NULL) {
		SWORD_LOG(ERR, "remapping: cannot create worker %u state: %s", w->id,
			  strerror(prm.rc == NULL ? ENOMEM : errno));
		rte_free(f);
		return NULL;
	}
	return f;
}

static void
fn_destroy(void *state)
{
	struct remap_fn *f = state;

	remap_destroy(f->remap);
	if (f->in_state)
		sword_state_close(&f->state);
	rte_free(f);
}

/* The configured server a created frame is to (to_server) or from. */
static int
server_of_frame(const struct sword_config *cfg, const uint8_t *frame, uint32_t len,
		bool to_server)
{
	struct roce_pkt p;

	if (roce_parse(frame, len, &p) != ROCE_OK || p.ip_version != 4)
		return -1;
	for (unsigned int i = 0; i < cfg->n_servers; i++)
		if (cfg->servers[i].ip == (to_server ? p.dst_ip4 : p.src_ip4))
			return (int)i;
	return -1;
}

/* An unsigned created frame that is to follow the frame of the call
 * (sword_fn_emit_after takes signed frames only): signed here. */
static int
sign_now(uint8_t *d, uint32_t len)
{
	struct roce_pkt p;

	if (roce_parse(d, len, &p) != ROCE_OK)
		return -1;
	roce_resign(d, &p);
	return 0;
}

/* Created frames, each through the functions after this in its direction
 * (one marked `after` leaves after the frame of the call); an unsigned
 * one is signed by the worker as it leaves. */
static void
emit_frames(struct remap_fn *f, struct sword_worker *w, struct sword_fn_ctx *ctx,
	    uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *m = ctx->pool ? rte_pktmbuf_alloc(ctx->pool) : NULL;
		uint8_t *d;

		if (m == NULL || (d = (uint8_t *)rte_pktmbuf_append(m,
				(uint16_t)f->emit[i].len)) == NULL) {
			rte_pktmbuf_free(m);
			f->emit_lost++;
			continue;
		}
		memcpy(d, f->emit[i].buf, f->emit[i].len);
		m->port = ctx->m != NULL ? ctx->m->port
			: w->port_of_side[f->emit[i].to_server ? SWORD_SIDE_SERVER
							       : SWORD_SIDE_CLIENT];
		if (ctx->m == NULL)
			ctx->server = server_of_frame(w->cfg, d, f->emit[i].len,
						      f->emit[i].to_server);
		if (f->emit[i].unsigned_icrc && f->emit[i].after && ctx->m != NULL &&
		    sign_now(d, f->emit[i].len) != 0) {
			rte_pktmbuf_free(m);
			f->emit_lost++;
			continue;
		}
		if (ctx->server < 0 ||
		    (f->emit[i].after && ctx->m != NULL
			     ? sword_fn_emit_after(w, ctx, m, f->emit[i].to_server)
		     : f->emit[i].unsigned_icrc
			     ? sword_fn_emit_unsigned(w, ctx, m, f->emit[i].to_server)
			     : sword_fn_emit(w, ctx, m, f->emit[i].to_server)) < 0) {
			if (ctx->server < 0)
				rte_pktmbuf_free(m);
			f->emit_lost++;
		}
	}
}

/*
 * Remapping rewrites a frame's addressing only (remap_frame.c: addresses,
 * UDP source port, QPN, PSN, MSN), so a frame whose ICRC was right may be
 * re-signed by patching it for the words that changed
 * (SWORD_RESIGN_HEADERS) instead of computing it over the whole frame,
 * which for a READ response of 1 KB was most of remapping's cost.  For a
 * small frame a full re-sign costs about what the patches do, and atomic
 * replacement re-signs an ACK it makes an ATOMIC ACK in full anyway, so
 * only frames of PATCH_MIN bytes or more are patched.
 */
#define PATCH_MIN 320

/* Keep the header words as signed, before a rewrite that may then be
 * re-signed by patching (a frame of PATCH_MIN bytes or more).  A frame
 * whose header change an earlier function left due
 * (SWORD_SIGN_HEADERS_DUE) is re-signed in full: none does that before
 * remapping. */
static inline bool
take_words_big(struct sword_fn_ctx *ctx)
{
	if (ctx->sign_state >= SWORD_SIGN_DUE || !roce_hdr_words_patchable(ctx->p))
		return false;
	roce_hdr_words_take(ctx->frame, ctx->p, &ctx->hdr_before);
	return true;
}

/* ctx->resign_due after remapping rewrote the frame (took: take_words_big). */
static inline uint8_t
resign_of(bool took)
{
	return took ? SWORD_RESIGN_HEADERS : SWORD_RESIGN_FULL;
}

/* Every frame the common case did not take (out of line: fn_process
 * then saves no registers for it). */
static __rte_noinline enum sword_fn_verdict
fn_process_general(struct remap_fn *f, struct sword_worker *w, struct sword_fn_ctx *ctx,
		   bool took)
{
	struct rte_mbuf *m = ctx->m;
	uint32_t len = rte_pktmbuf_data_len(m), cap = m->buf_len - m->data_off;
	uint32_t n_emit = 0;
	enum remap_verdict v;

	if (ctx->to_server)
		v = remap_request_general(f->remap, ctx->frame, &len, cap, ctx->p, ctx->icrc_ok,
					  ctx->now, f->emit, REMAP_FN_EMIT_MAX, &n_emit);
	else
		v = remap_response_general(f->remap, ctx->frame, &len, cap, ctx->p,
					   ctx->icrc_ok, ctx->now, f->emit, REMAP_FN_EMIT_MAX,
					   &n_emit);
	if (n_emit)
		emit_frames(f, w, ctx, n_emit);
	switch (v) {
	case REMAP_MODIFIED:
		ctx->icrc_ok = true;
		ctx->resign_due = resign_of(took);
		return SWORD_FN_MODIFIED;
	case REMAP_DROP:
		return SWORD_FN_DROP;
	case REMAP_PASS:
	default:
		return SWORD_FN_PASS;
	}
}

/* The common case first, with what it needs only (issue #12's cost
 * budget); took: take_words_big. */
static inline enum sword_fn_verdict
fn_process_frame(struct remap_fn *f, struct sword_worker *w, struct sword_fn_ctx *ctx,
		 bool took)
{
	if (ctx->to_server ? remap_request_fast(f->remap, ctx->frame, ctx->p, &ctx->icrc_ok,
						ctx->now)
			   : remap_response_fast(f->remap, ctx->frame, ctx->p, &ctx->icrc_ok,
						 ctx->now)) {
		ctx->resign_due = resign_of(took);
		return SWORD_FN_MODIFIED;
	}
	return fn_process_general(f, w, ctx, took);
}

/* A frame that may be re-signed by patching (out of line: a small one
 * keeps nothing across the call). */
static __rte_noinline enum sword_fn_verdict
fn_process_big(struct remap_fn *f, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	return fn_process_frame(f, w, ctx, take_words_big(ctx));
}

static enum sword_fn_verdict
fn_process(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	struct remap_fn *f = state;

	if (unlikely(f->remap == NULL))
		return SWORD_FN_PASS;
	if (unlikely(w->draining != f->draining)) {
		/* upgrade drain began: bind no new connection to a lane */
		f->draining = w->draining;
		remap_set_drain(f->remap, f->draining);
	}
	if (unlikely(ctx->p->frame_len >= PATCH_MIN))
		return fn_process_big(f, w, ctx);
	return fn_process_frame(f, w, ctx, false);
}

/* Clients waiting on a lane that fell quiet are asked back (remap_tick). */
/*
 * A server's path MTU learned from its frames that is not [atomic] pmtu:
 * told once per change (a rare event: a log line here is no cost).  Until
 * the frames showed it, a READ counted in the wrong one closed its lane
 * (remap_resp.c, read_span_broken).
 */
static __rte_noinline void
tell_pmtu(struct remap_fn *f, uint64_t learned)
{
	struct remap_lane_info li;

	f->pmtu_told = learned;
	for (uint32_t i = 0; i < f->n_servers; i++) {
		struct in_addr a = { .s_addr = f->server_ip[i] };
		char ip[INET_ADDRSTRLEN];

		if (remap_lane_info(f->remap, f->server_ip[i], 0, &li) != 0 ||
		    li.pmtu == f->cfg_pmtu)
			continue;
		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		SWORD_LOG(WARNING, "remapping: server %s: path MTU %u (from its frames), "
			  "[atomic] pmtu = %u: READ spans are counted in %u; set pmtu = %u",
			  ip, li.pmtu, f->cfg_pmtu, li.pmtu, li.pmtu);
	}
}

static void
fn_tick(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	struct remap_fn *f = state;
	uint32_t n_emit = 0;

	if (f->remap == NULL)
		return;
	if (unlikely(remap_counters(f->remap)->pmtu_learned != f->pmtu_told))
		tell_pmtu(f, remap_counters(f->remap)->pmtu_learned);
	remap_tick(f->remap, ctx->now, f->emit, REMAP_FN_EMIT_MAX, &n_emit);
	if (n_emit)
		emit_frames(f, w, ctx, n_emit);
}

/*
 * Remapping checks the ICRC of every RC frame of the servers it manages
 * before it learns anything from it (a lane's answers, READ response
 * MIDDLE packets included, which atomic replacement leaves unchecked; the
 * requests of its clients): the worker verifies those a burst at a time
 * (sword_fn_ops.checks_icrc), cheaper per frame than one by one here.
 */
static bool
fn_checks_icrc(const void *state, uint32_t server_ip4, uint8_t opcode, bool to_server)
{
	const struct remap_fn *f = state;
	const uint32_t want = ROCE_F_RC | (to_server ? ROCE_F_REQUEST : ROCE_F_RESPONSE);

	return f != NULL && f->remap != NULL && remap_is_server(f->remap, server_ip4) &&
	       (roce_opcode(opcode)->flags & want) == want;
}

static void
fn_publish(void *state, uint64_t *counters)
{
	struct remap_fn *f = state;
	unsigned int i = 0;

	if (f->remap != NULL) {
		const struct remap_counters *c = remap_counters(f->remap);

#define COPY(n) counters[i++] = c->n;
		REMAP_COUNTERS(COPY)
#undef COPY
	}
	counters[N_COUNTERS - 1] = f->emit_lost;
}

const struct sword_fn_ops remap_fn_ops = {
	.name = "remapping",
	.create = fn_create,
	.destroy = fn_destroy,
	.process = fn_process,
	.publish = fn_publish,
	.tick = fn_tick,
	.checks_icrc = fn_checks_icrc,
	.n_counters = N_COUNTERS,
	.counter_names = remap_fn_counter_names,
};

const struct remap *
remap_fn_remap(const void *state)
{
	return state ? ((const struct remap_fn *)state)->remap : NULL;
}
