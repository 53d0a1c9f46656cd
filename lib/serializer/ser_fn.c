/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_fn.c — lib/serializer as a swordd function (sword_fn_ops).
 *
 * Why it exists: the serializer works on byte buffers and knows nothing of
 * mbufs, workers or config files; this file is the thin glue.  Each worker
 * gets its own struct ser holding only the lock regions of the memory
 * servers that worker owns (SPEC "Sharding"), so no state is shared.
 * Frames the serializer synthesizes (ATOMIC ACKs expanded from a coalesced
 * ACK) are copied into mbufs from the worker's pool and queued to the
 * client before the response that carried them.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "ser_fn.h"
#include "ser_internal.h"
#include "serializer.h"
#include "sword_log.h"
#include "sword_state.h"

#define SER_FN_EMIT_MAX 32

struct ser_fn {
	struct ser *ser;
	struct ser *staged;                 /* made by prepare for a worker that
					     * had no region: reconfigure takes it */
	uint16_t worker;
	bool in_state;                      /* ser lives in state (swordd --state) */
	bool adopted;                       /* ... and goes on from an earlier process's */
	struct sword_state state;
	uint64_t emit_lost;                 /* no mbuf for a synthesized frame */
	struct ser_emit emit[SER_FN_EMIT_MAX];
};

/* Order and names of the counters published as fn_<name>. */
#define SER_FN_COUNTERS(X)                                                    \
	X(req_seen) X(granted) X(failed_local) X(faa_local) X(gated_failed)  \
	X(lane_ordered) X(fold_learned) X(fold_mismatch)                     \
	X(gated_real) X(gated_read_seen) X(gated_drop) X(passed_real_atomic) \
	X(out_of_band_real)                                                   \
	X(misaligned_passed) X(release_seen) X(write_unmodelled)              \
	X(ackreq_set) X(dup_replayed) X(bad_icrc_passed) X(stub_ring_full)    \
	X(psn_out_of_window) X(table_full) X(read_span_fixed)   \
	X(dropped)                                                            \
	X(resp_seen) X(unknown_qp) X(paired) X(ack_to_atomic_ack)             \
	X(acks_synthesized) X(emit_full) X(resp_bad_icrc) X(resp_mismatch)    \
	X(dup_ack_dropped)                                                     \
	X(naks) X(nak_on_rewritten) X(learned) X(relearn) X(pending_expired) \
	X(conn_created) X(conn_evicted) X(conn_reincarnated) X(conn_closed)   \
	X(cm_seen) X(cm_paired) X(pair_ambiguous) X(resp_out_of_window)       \
	X(write_gated_drop) X(replay_zeroed) X(replay_redecided)              \
	X(probe_asked) X(probe_lacked) X(replay_probed)                       \
	X(replay_ran) X(probe_cover_held) X(start_quiet_drop) X(given_up_met) \
	X(copy_holds)                                                        \
	X(asked_back) X(poked) X(nak_beyond_dropped) X(ask_failed)

#define NAME(f) "atomic_" #f,
static const char *const ser_fn_counter_names[] = {
	SER_FN_COUNTERS(NAME) "atomic_emit_lost",
};
#undef NAME
#define N_COUNTERS RTE_DIM(ser_fn_counter_names)

static uint64_t
ms_to_tsc(uint32_t ms)
{
	return (uint64_t)ms * rte_get_tsc_hz() / 1000;
}

int
ser_fn_params(struct ser_params *prm, struct ser_region *regions,
	      unsigned int max_regions, const struct sword_config *cfg,
	      int worker_id)
{
	unsigned int i;

	memset(prm, 0, sizeof(*prm));
	prm->regions = regions;
	for (i = 0; regions != NULL && i < cfg->n_locks; i++) {
		const struct sword_lock_conf *l = &cfg->locks[i];
		struct ser_region *r;

		if (worker_id >= 0 &&
		    (int)sword_config_server_worker(cfg, l->server_idx) != worker_id)
			continue;
		if (prm->n_regions >= max_regions)
			return -ENOSPC;
		r = &regions[prm->n_regions++];
		r->server_ip4 = cfg->servers[l->server_idx].ip;
		r->any_rkey = l->rkey_any;
		r->rkey = l->rkey;
		r->base = l->base;
		r->len = l->length;
	}
	prm->max_words = cfg->lock_words;
	prm->max_conns = cfg->qps;
	prm->ring_size = cfg->stub_ring;
	prm->pmtu = cfg->atomic.pmtu;
	prm->max_refusals = cfg->atomic.max_refusals;
	prm->gate_tsc = ms_to_tsc(cfg->atomic.gate_ms);
	prm->pending_expire_tsc = ms_to_tsc(cfg->atomic.pending_expire_ms);
	prm->out_of_band = cfg->atomic.out_of_band;
	prm->learn_holdoff_tsc = ms_to_tsc(cfg->atomic.learn_holdoff_ms);
	prm->start_quiet_tsc = ms_to_tsc(cfg->atomic.start_quiet_ms);
	prm->conn_idle_tsc = ms_to_tsc(cfg->atomic.conn_idle_ms);
	prm->no_force_ackreq = !cfg->atomic.force_ackreq;
	prm->no_poke = cfg->remapping;
	/* remapping keeps out-of-band connections on their own QPs then */
	prm->poke_out_of_band = cfg->remapping && !cfg->remap.out_of_band;
	/* room for regions a live reload adds (ser_fn_prepare checks it) */
	prm->max_regions = SWORD_MAX_LOCKS;
	return 0;
}

/*
 * A start that is not the first on this traffic (another swordd held these
 * segments: a previous run) and does not go on from its tables must not
 * learn from real-atomic answers at once: they may be the server's
 * replays of decisions the previous process made, and a CAS decided on
 * such a value is answered wrong (tests/fuzz/findings/closed,
 * restart-empty-cas-decided-on-stale).  [atomic] learn_holdoff_ms = 0 is
 * for a first start only (conf/swordd.conf); here it is raised to the
 * default for this start.
 */
#define RESTART_HOLDOFF_MS 1000

static void
empty_restart_holdoff(struct ser_params *prm, const char *path)
{
	const uint64_t floor = ms_to_tsc(RESTART_HOLDOFF_MS);

	if (prm->learn_holdoff_tsc >= floor)
		return;
	prm->learn_holdoff_tsc = floor;
	SWORD_LOG(WARNING, "state: %s: starting empty after another swordd ran here: "
		  "[atomic] learn_holdoff_ms raised to %u for this start (answers may replay "
		  "the previous process's decisions)", path, RESTART_HOLDOFF_MS);
}

/*
 * The worker's table in its state segment (swordd --state PATH: PATH.wN).
 * A segment the previous process left is adopted; if the switch may have
 * carried traffic around swordd while it was gone (failover_bypass), only
 * what the server acknowledged is kept (after_bypass).  One the serializer cannot
 * adopt is refused with a line and started over.  -1: no segment at all
 * (another swordd holds it, no directory): swordd does not start.
 */
/*
 * Adopted with failover_bypass: while this process was not forwarding
 * (it died, or was stopped), the switch carried the clients' traffic
 * around swordd, and the words moved unseen.  They are forgotten, and so
 * is every decision the server had not acknowledged: its WRITE may not
 * have run, and its client's own atomic may have run there instead.  What
 * the server acknowledged stays: a client whose answer died with the old
 * process gets it when it asks again, where the server, which ran a WRITE
 * at that PSN, has none to give (the client's QP would run out of
 * retries).  Before, such a segment was not adopted at all.
 */
static void
after_bypass(struct ser_fn *f, const char *path)
{
	const uint64_t holdoff = ms_to_tsc(RESTART_HOLDOFF_MS);
	const uint32_t n = ser_forget_unacked(f->ser, rte_rdtsc(), holdoff);

	SWORD_LOG(WARNING, "state: %s: adopted after a fail-over bypass (failover_bypass): "
		  "every lock word forgotten, %u decision(s) the server had not acknowledged "
		  "given up (their clients' copies go to the server), the acknowledged kept; "
		  "learning held off for %u ms", path, n, RESTART_HOLDOFF_MS);
}

static int
create_in_state(struct ser_fn *f, const struct ser_params *base,
		const struct sword_config *cfg)
{
	struct ser_params prm = *base;
	struct ser_adopt_info ai;
	char path[256], why[512];
	size_t len;

	uint64_t prev_run;

	prm.rc = NULL;   /* the segment holds the connection table too */
	len = ser_state_size(&prm);
	snprintf(path, sizeof(path), "%s.w%u", cfg->state_path, f->worker);
	if (len == 0) {
		SWORD_LOG(ERR, "state: %s: no layout for this configuration", path);
		return -1;
	}
	if (sword_state_open_chain(&f->state, cfg->state_path, path, ser_state_shape(&prm), len,
				   true, &prev_run, why, sizeof(why)) != 0) {
		SWORD_LOG(ERR, "state: %s", why);
		return -1;
	}
	f->in_state = true;
	prm.state_mem = f->state.data;
	prm.state_len = f->state.data_len;
	prm.state_adopt = f->state.adopted;
	prm.state_zero = !f->state.adopted;   /* a segment not adopted was started over */
	prm.state_now = rte_rdtsc();
	if (!prm.state_adopt && prev_run != 0)
		empty_restart_holdoff(&prm, path);
	f->ser = ser_create(&prm);
	if (f->ser == NULL && prm.state_adopt) {
		SWORD_LOG(WARNING, "state: %s: the previous process's tables are refused (%s): "
			  "starting empty", path, errno == ESTALE ?
			  "no request for longer than [atomic] conn_idle_ms: nothing in them is "
			  "still awaited" : strerror(errno));
		prm.state_adopt = false;
		prm.state_zero = false;   /* the refused tables are still there */
		if (prev_run != 0)
			empty_restart_holdoff(&prm, path);
		f->ser = ser_create(&prm);
	}
	if (f->ser == NULL) {
		sword_state_close(&f->state);
		f->in_state = false;
		return -1;
	}
	if (!f->state.adopted)
		SWORD_LOG(INFO, "state: %s", why);
	if (!prm.state_adopt)
		return 0;   /* new, or refused above */
	f->adopted = true;
	ser_adopt_info(f->ser, &ai);
	SWORD_LOG(INFO, "state: %s: %u connection(s), %u word(s) known; given up (a frame "
		  "in progress when it ended): %u connection(s), %u word(s)", why, ai.conns,
		  ai.words_known, ai.conns_given_up, ai.words_given_up);
	if (cfg->failover_bypass)
		after_bypass(f, path);
	return 0;
}

static void *
fn_create(const struct sword_config *cfg, struct sword_worker *w, int socket_id)
{
	struct ser_region regions[SWORD_MAX_LOCKS];
	struct ser_params prm;
	struct ser_fn *f;
	const unsigned int worker_id = w->id;

	if (ser_fn_params(&prm, regions, RTE_DIM(regions), cfg, (int)worker_id) < 0)
		return NULL;
	f = rte_zmalloc_socket("ser_fn", sizeof(*f), RTE_CACHE_LINE_SIZE, socket_id);
	if (f == NULL)
		return NULL;
	f->worker = (uint16_t)worker_id;
	if (prm.n_regions == 0) {
		char why[400];

		/* a process that keeps no segment is a link of the chain too:
		 * the segments of the one before are older than this one */
		if (cfg->state_path[0] != '\0' &&
		    sword_state_run_commit(cfg->state_path, why, sizeof(why)) != 0) {
			SWORD_LOG(ERR, "state: %s", why);
			rte_free(f);
			return NULL;
		}
		return f;       /* this worker owns no lock region */
	}
	prm.defer_resign = true;   /* the worker re-signs once (ctx->resign_due) */
	if (cfg->state_path[0] != '\0') {
		/* the segment holds the worker's connection table, which
		 * remapping shares */
		if (create_in_state(f, &prm, cfg) != 0 ||
		    sword_worker_use_rc(w, ser_rc(f->ser), f->adopted) != 0) {
			if (f->ser != NULL) {
				ser_destroy(f->ser);
				sword_state_close(&f->state);
			}
			rte_free(f);
			return NULL;
		}
	} else {
		/* the worker's connection table, shared with remapping */
		prm.rc = sword_worker_rc(w);
		if (prm.rc == NULL) {
			rte_free(f);
			return NULL;
		}
		f->ser = ser_create(&prm);
	}
	if (f->ser == NULL) {
		SWORD_LOG(ERR, "atomic replacement: cannot create worker %u state: %s",
			  worker_id, strerror(errno));
		rte_free(f);
		return NULL;
	}
	/* the start quiet runs from the process's start: a restart is the
	 * time since the previous instance's last frame, and traffic that
	 * comes later than the quiet pays nothing */
	ser_start(f->ser, rte_rdtsc());
	return f;
}

static void
fn_destroy(void *state)
{
	struct ser_fn *f = state;

	ser_destroy(f->ser);
	ser_destroy(f->staged);
	if (f->in_state)
		sword_state_close(&f->state);
	rte_free(f);
}

static inline void
set_len(struct rte_mbuf *m, uint32_t len)
{
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
}

/*
 * Send the synthesized ATOMIC ACKs before the response (through the
 * functions after this one).  false if one could not be sent: then neither
 * the later ones nor the response may go (the response would acknowledge
 * an atomic the client was not answered); the client retransmits and the
 * replay answers it again.
 */
static __rte_noinline bool
emit_frames(struct ser_fn *f, struct sword_worker *w, struct sword_fn_ctx *ctx,
	    uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = ctx->pool ? rte_pktmbuf_alloc(ctx->pool) : NULL;
		uint8_t *d;

		if (m == NULL || (d = (uint8_t *)rte_pktmbuf_append(m,
				(uint16_t)f->emit[i].len)) == NULL) {
			rte_pktmbuf_free(m);
			f->emit_lost += n - i;
			return false;
		}
		memcpy(d, f->emit[i].buf, f->emit[i].len);
		m->port = ctx->m->port;
		if (sword_fn_emit(w, ctx, m, ctx->to_server) < 0) {
			f->emit_lost += n - i;
			return false;
		}
	}
	return true;
}

/*
 * The RNR NAK asking the client to resend a request the serializer dropped
 * (ser_after): instead of the dropped request (or the zero-length WRITE
 * that makes the server ask an unpaired client), or behind the response
 * that answered the last PSN before it.
 */
static __rte_noinline void
send_after(struct ser_fn *f, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	const struct ser_emit *e = ser_after(f->ser);
	struct rte_mbuf *m;
	uint8_t *d;

	if (e == NULL)
		return;
	m = ctx->pool ? rte_pktmbuf_alloc(ctx->pool) : NULL;
	if (m == NULL || (d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)e->len)) == NULL) {
		rte_pktmbuf_free(m);
		f->emit_lost++;
		return;
	}
	memcpy(d, e->buf, e->len);
	m->port = ctx->m->port;
	if ((ctx->to_server ? sword_fn_emit(w, ctx, m, e->to_server) :
			      sword_fn_emit_after(w, ctx, m, false)) < 0)
		f->emit_lost++;
}

/*
 * Runs on every frame of the servers this worker owns: the hot path keeps
 * to the call and the verdict.  emit_frames and send_after stay out of line
 * (noinline above), so this frame needs few saved registers; the
 * NAK-to-send test reads s->n_after (what ser_after tests) rather than
 * calling across files for it on every frame.
 */
static enum sword_fn_verdict
fn_process(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	struct ser_fn *f = state;
	struct ser *s = f->ser;
	const struct rte_mbuf *m = ctx->m;   /* ctx->m again after the call:
					      * one register fewer to save */
	uint32_t len = rte_pktmbuf_data_len(m);
	const uint32_t cap = m->buf_len - m->data_off;
	enum ser_verdict v;

	if (unlikely(s == NULL))
		return SWORD_FN_PASS;
	/* the worker (or an earlier function) may have verified it already:
	 * the serializer's own check is then skipped, never its verdict */
	s->icrc_known_good = ctx->icrc_ok;
	/* the burst's copy of the upgrade drain flag: a plain store */
	s->drain = w->draining;
	if (ctx->to_server) {
		v = ser_on_request(s, ctx->frame, &len, cap, ctx->p, ctx->now);
		s->icrc_known_good = false;
		if (unlikely(s->n_after != 0))
			send_after(f, w, ctx);
	} else {
		uint32_t n_emit = 0;

		v = ser_on_response(s, ctx->frame, &len, cap, ctx->p, ctx->now,
				    f->emit, SER_FN_EMIT_MAX, &n_emit);
		s->icrc_known_good = false;
		if (n_emit && !emit_frames(f, w, ctx, n_emit))
			v = SER_DROP;   /* (and no NAK after it: it acknowledges) */
		else if (unlikely(s->n_after != 0))
			send_after(f, w, ctx);
	}
	switch (v) {
	case SER_FORWARD_REWRITTEN:
		set_len(ctx->m, len);
		ctx->icrc_ok = true;    /* rewritten only after its ICRC verified */
		ctx->resign_due = true; /* the worker re-signs (prm.defer_resign) */
		return SWORD_FN_MODIFIED;
	case SER_DROP:
		return SWORD_FN_DROP;
	case SER_FORWARD:
	default:
		return SWORD_FN_PASS;
	}
}

/*
 * The frames whose ICRC the serializer checks (ser_on_request: every RC
 * request to its servers; ser_on_response: every RC response from them
 * but a READ_RESPONSE_MIDDLE): the worker verifies them a burst at a time
 * ahead (sword_fn_ops.checks_icrc).  RDMA CM (UD) is left to the
 * serializer: rare, and only CM messages are checked.
 */
static bool
fn_checks_icrc(const void *state, uint32_t server_ip4, uint8_t opcode, bool to_server)
{
	const struct ser_fn *f = state;
	const struct roce_opcode_info *oi = roce_opcode(opcode);
	const uint32_t want = ROCE_F_RC | (to_server ? ROCE_F_REQUEST : ROCE_F_RESPONSE);

	if (f == NULL || f->ser == NULL || !ser_is_server(f->ser, server_ip4))
		return false;
	if (!to_server && opcode == ROCE_RC_READ_RESPONSE_MIDDLE)
		return false;
	return (oi->flags & want) == want;
}

static void
fn_publish(void *state, uint64_t *counters)
{
	struct ser_fn *f = state;
	unsigned int i = 0;

	if (f->ser != NULL) {
		const struct ser_counters *c = ser_counters(f->ser);

#define COPY(x) counters[i++] = c->x;
		SER_FN_COUNTERS(COPY)
#undef COPY
	}
	counters[N_COUNTERS - 1] = f->emit_lost;
}

/*
 * SIGHUP changed live [atomic] keys: the I4 gate's bounds and the pending
 * write expiry.  Runs on this worker's lcore between bursts (sword_fn_ops
 * contract), so the serializer never sees a half-changed set.  The bounds
 * only decide when a refusal or a pending write is given up, so a new value
 * applies to words already gated without breaking the safety argument.
 */
/* Lock region l of cfg as the serializer names it. */
static void
lock_region(const struct sword_config *cfg, const struct sword_lock_conf *l,
	    struct ser_region *r)
{
	memset(r, 0, sizeof(*r));
	r->server_ip4 = cfg->servers[l->server_idx].ip;
	r->any_rkey = l->rkey_any;
	r->rkey = l->rkey;
	r->base = l->base;
	r->len = l->length;
}

static bool
lock_is_mine(const struct ser_fn *f, const struct sword_config *cfg,
	     const struct sword_lock_conf *l)
{
	return l->server_idx >= 0 &&
	       sword_config_server_worker(cfg, (unsigned int)l->server_idx) == f->worker;
}

/*
 * Live sections (main lcore, before the workers see next): the regions
 * next gives this worker that its serializer does not have must fit in
 * what is left of its table; a worker that had no region gets a
 * serializer made here (calloc and the connection table: not on its
 * lcore), installed by fn_reconfigure.
 */
static int
fn_prepare(void *state, struct sword_worker *w, const struct sword_config *next,
	   int socket_id __rte_unused, char *err, size_t errlen)
{
	struct ser_fn *f = state;
	struct ser_region r;
	uint32_t room_regions = SWORD_MAX_LOCKS, room_words = next->lock_words;
	uint64_t words = 0, regions = 0;
	const char *first = NULL;

	if (f == NULL)
		return 0;
	for (unsigned int i = 0; i < next->n_locks; i++) {
		const struct sword_lock_conf *l = &next->locks[i];

		if (l->state != SWORD_INST_ACTIVE || !lock_is_mine(f, next, l))
			continue;
		lock_region(next, l, &r);
		if (f->ser != NULL && ser_region_present(f->ser, &r))
			continue;
		words += r.len / 8;
		regions++;
		if (first == NULL)
			first = l->name;
	}
	if (regions == 0)
		return 0;
	if (f->ser != NULL)
		ser_room(f->ser, &room_regions, &room_words);
	if (regions > room_regions || words > room_words) {
		snprintf(err, errlen, "%s: [lock.%s] length: worker %u has room for %u "
			 "more lock word(s) in %u region(s), the new regions need %" PRIu64
			 " in %" PRIu64 " ([tables] lock_words = %u; a removed region's "
			 "words come back at a restart)", next->source, first, f->worker,
			 room_words, room_regions, words, regions, next->lock_words);
		return -1;
	}
	if (f->ser == NULL) {
		struct ser_params prm;

		ser_fn_params(&prm, NULL, 0, next, (int)f->worker);   /* no region yet */
		prm.rc = sword_worker_rc(w);
		prm.defer_resign = true;
		f->staged = prm.rc != NULL ? ser_create(&prm) : NULL;
		if (f->staged == NULL) {
			snprintf(err, errlen, "%s: [lock.%s]: cannot create atomic replacement's "
				 "state on worker %u: %s", next->source, first, f->worker,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void
fn_unprepare(void *state)
{
	struct ser_fn *f = state;

	if (f != NULL) {
		ser_destroy(f->staged);
		f->staged = NULL;
	}
}

/* The serializer's regions become cfg's for this worker: new ones added
 * (fn_prepare made room), RETIRING ones retired, the others removed. */
static void
regions_follow(struct ser_fn *f, const struct sword_config *cfg)
{
	struct ser *s = f->ser;
	struct ser_region r;

	for (unsigned int i = 0; i < cfg->n_locks; i++) {
		const struct sword_lock_conf *l = &cfg->locks[i];

		if (!lock_is_mine(f, cfg, l))
			continue;
		lock_region(cfg, l, &r);
		if (l->state == SWORD_INST_ACTIVE && !ser_region_present(s, &r))
			ser_region_add(s, &r);
		else if (l->state == SWORD_INST_RETIRING)
			ser_region_retire(s, &r);
	}
	for (uint32_t k = 0; k < s->n_regions;) {
		bool keep = false;

		for (unsigned int i = 0; i < cfg->n_locks && !keep; i++) {
			if (!lock_is_mine(f, cfg, &cfg->locks[i]))
				continue;
			lock_region(cfg, &cfg->locks[i], &r);
			keep = r.server_ip4 == s->regions[k].r.server_ip4 &&
			       r.any_rkey == s->regions[k].r.any_rkey &&
			       (r.any_rkey || r.rkey == s->regions[k].r.rkey) &&
			       r.base == s->regions[k].r.base && r.len == s->regions[k].r.len;
		}
		if (keep) {
			k++;
			continue;
		}
		r = s->regions[k].r;
		ser_region_remove(s, &r);
	}
}

/*
 * SIGHUP changed live [atomic] keys: the I4 gate's bounds and the pending
 * write expiry.  Runs on this worker's lcore between bursts (sword_fn_ops
 * contract), so the serializer never sees a half-changed set.  The bounds
 * only decide when a refusal or a pending write is given up, so a new value
 * applies to words already gated without breaking the safety argument.
 * A reload that added or removed lock regions: the table follows cfg.
 */
static void
fn_reconfigure(void *state, const struct sword_config *cfg)
{
	struct ser_fn *f = state;

	if (f == NULL)
		return;
	if (f->ser == NULL && f->staged != NULL) {
		f->ser = f->staged;
		f->staged = NULL;
	}
	if (f->ser == NULL)
		return;
	f->ser->prm.max_refusals = cfg->atomic.max_refusals;
	f->ser->prm.gate_tsc = ms_to_tsc(cfg->atomic.gate_ms);
	f->ser->prm.pending_expire_tsc = ms_to_tsc(cfg->atomic.pending_expire_ms);
	/* how long an orphaned op may still run follows the expiry (S7) */
	f->ser->orphan_tsc = RTE_MAX(f->ser->prm.pending_expire_tsc,
				     f->ser->prm.learn_holdoff_tsc);
	regions_follow(f, cfg);
}

/*
 * The switch carried the traffic around swordd while it made no progress
 * (sword_fn_ops.forget): a lock the shadow holds free may have been taken
 * meanwhile, and a grant decided on it would make two holders.  Start
 * over as an empty restart does, with its learning hold-off.  A client
 * whose rewritten atomic was still unanswered gets no answer now and
 * times out, as after an empty restart; nothing is decided on a value
 * the bypass may have changed.
 */
static void
fn_forget(void *state, uint64_t now)
{
	struct ser_fn *f = state;

	if (f == NULL || f->ser == NULL)
		return;
	ser_forget(f->ser, now, ms_to_tsc(RESTART_HOLDOFF_MS));
}

/* What this worker still owes for its RETIRING regions (main lcore). */
static uint64_t
fn_owed(const void *state, const struct sword_config *cfg)
{
	const struct ser_fn *f = state;
	struct ser_region r;
	uint64_t owed = 0;

	if (f == NULL || f->ser == NULL)
		return 0;
	for (unsigned int i = 0; i < cfg->n_locks; i++) {
		const struct sword_lock_conf *l = &cfg->locks[i];

		if (l->state != SWORD_INST_RETIRING || !lock_is_mine(f, cfg, l))
			continue;
		lock_region(cfg, l, &r);
		owed += ser_region_owed(f->ser, &r);
	}
	return owed;
}

const struct sword_fn_ops ser_fn_ops = {
	.name = "atomic_replacement",
	.create = fn_create,
	.destroy = fn_destroy,
	.process = fn_process,
	.publish = fn_publish,
	.reconfigure = fn_reconfigure,
	.prepare = fn_prepare,
	.unprepare = fn_unprepare,
	.owed = fn_owed,
	.forget = fn_forget,
	.checks_icrc = fn_checks_icrc,
	.n_counters = N_COUNTERS,
	.counter_names = ser_fn_counter_names,
};

/* Read-only introspection (telemetry /sword/lock): this worker's
 * serializer, NULL if it owns no lock region. */
const struct ser *
ser_fn_ser(const void *state)
{
	return state != NULL ? ((const struct ser_fn *)state)->ser : NULL;
}
