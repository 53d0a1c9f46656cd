/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_worker.h — one worker's context and the per-burst processing entry
 * point: classify every frame and decide where it goes.
 *
 * Why it exists: the whole forwarding decision lives in
 * sword_worker_process(), which needs no ports and no lcores, so unit tests
 * and benchmarks drive exactly the code the daemon runs.  Ports, queues and
 * rings are sword_daemon's business.
 *
 * Sharding (SPEC "Sharding"): the unit of state is the memory server.  A
 * well-formed RoCE frame whose destination IP (request) or source IP
 * (response) is a managed server belongs to that server's owner worker; if
 * another worker receives it, the frame goes to the owner through
 * out->handoff[owner].  Everything else (non-RoCE, malformed, unmanaged) is
 * stateless and handled by whichever worker received it.
 *
 * Function chain: managed frames on their owner run through the attached
 * functions (sword_fn_ops) in order.  lib/serializer plugs in here when
 * features.atomic_replacement = on; with no function attached, managed
 * frames pass through unchanged (counted as managed_rx and passthrough).
 */
#ifndef SWORD_WORKER_H
#define SWORD_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "rc.h"
#include "roce.h"
#include "sword_config.h"
#include "sword_stats.h"

/* Port slot a frame goes out of.  In one-port mode both are the same port. */
enum sword_side {
	SWORD_SIDE_CLIENT = 0,
	SWORD_SIDE_SERVER = 1,
	SWORD_SIDE_NUM = 2,
};

/* Room per side: a function may emit more frames than it received (ACK
 * expansion), so twice a burst. */
#define SWORD_TX_BATCH_MAX (2 * SWORD_MAX_BURST)

struct sword_tx_batch {
	uint16_t n[SWORD_SIDE_NUM];
	uint16_t n_handoff[SWORD_MAX_WORKERS];
	struct rte_mbuf *pkts[SWORD_SIDE_NUM][SWORD_TX_BATCH_MAX];
	struct rte_mbuf *handoff[SWORD_MAX_WORKERS][SWORD_MAX_BURST];
};

static inline void
sword_tx_batch_reset(struct sword_tx_batch *b)
{
	memset(b->n, 0, sizeof(b->n));
	memset(b->n_handoff, 0, sizeof(b->n_handoff));
}

/* Queue m for transmission on a side.  -1 (m untouched) if the batch is full. */
static inline int
sword_tx_batch_add(struct sword_tx_batch *b, enum sword_side side, struct rte_mbuf *m)
{
	if (b->n[side] >= SWORD_TX_BATCH_MAX)
		return -1;
	b->pkts[side][b->n[side]++] = m;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Functions (the hook for lib/serializer and later F3/F4) */

struct sword_worker;

/*
 * The chain is direction-aware: requests visit the functions in chain
 * order, responses in reverse, so a function that rewrites a request for
 * the server (remapping, last on requests) is the first to see the
 * server's answer and maps it back before the others read it.
 */
enum sword_fn_verdict {
	SWORD_FN_PASS = 0,      /* not changed: on to the next function */
	SWORD_FN_MODIFIED,      /* changed in place (ctx->p kept in sync) and either
				 * re-signed in full (ICRC, UDP checksum) or left
				 * for the worker with ctx->resign_due: on to the
				 * next function, then forwarded (counted rewritten) */
	SWORD_FN_CONSUMED,      /* the function owns m now (kept, freed, or queued
				 * itself with sword_tx_batch_add).  None does
				 * today; a function that will must re-sign
				 * frames an earlier one left unsigned
				 * (ctx->sign_state) */
	SWORD_FN_DROP,          /* free it (counted filtered) */
};

/* ctx->sign_state: what the frame's stored ICRC is worth when a function
 * is called (right: below SWORD_SIGN_DUE). */
enum sword_sign_state {
	SWORD_UNCHANGED = 0,     /* as it came (or was created, signed) */
	SWORD_SIGNED,            /* changed and re-signed by whoever changed it */
	SWORD_SIGN_DUE,          /* stale: the worker signs it in full as it
				  * leaves */
	SWORD_SIGN_HEADERS_DUE,  /* stale in its header words only
				  * (roce_hdr_words), which ctx->hdr_before
				  * holds as last signed: the worker patches */
};

/* ctx->resign_due after SWORD_FN_MODIFIED */
#define SWORD_RESIGN_FULL 1      /* (true) the worker signs it in full */
#define SWORD_RESIGN_HEADERS 2   /* only its header words changed: see
				  * struct sword_fn_ctx */

/* What the function is told about the frame. */
struct sword_fn_ctx {
	struct rte_mbuf *m;
	struct roce_pkt *p;            /* parsed, ROCE_OK; keep it in sync if you rewrite */
	uint8_t *frame;                /* rte_pktmbuf_mtod(m) */
	/* process leaves server and to_server as they are (the worker reads
	 * them once per frame); only tick sets server, see sword_fn_ops */
	int server;                    /* index into cfg->servers */
	bool to_server;                /* request (client → server) or response */
	/* The frame's ICRC is known good: an earlier function verified it
	 * (and re-signed whatever it changed).  A function that verifies sets
	 * it; none may re-sign a frame whose ICRC it has not seen good. */
	bool icrc_ok;
	/* The function changed the frame and left its re-sign to the worker
	 * (set it with SWORD_FN_MODIFIED only): SWORD_RESIGN_FULL (true).
	 * The worker re-signs once, before the frame leaves, unless a later
	 * function re-signs it in full (returns SWORD_FN_MODIFIED without
	 * setting it): a frame two functions rewrite (a CAS made a WRITE and
	 * stitched onto a lane) is signed once, not twice.  A function that
	 * sets it must not copy the frame out unsigned (sign the copy), and a
	 * later one that reads the ICRC must not trust it: icrc_ok stays true,
	 * so none verifies.
	 * SWORD_RESIGN_HEADERS: it changed the frame's header words only
	 * (roce_hdr_words: addresses, UDP header, BTH, AETH; its length
	 * kept), after an ICRC it had seen good, and ctx->hdr_before holds
	 * them as last signed: it took them itself (roce_hdr_words_take,
	 * before its change) if it was called with a right ICRC (sign_state
	 * below SWORD_SIGN_DUE) and roce_hdr_words_patchable, or it was called with
	 * SWORD_SIGN_HEADERS_DUE and left them (never where a full re-sign
	 * is due: that would be lost).  The worker then patches the ICRC for
	 * the words that changed, unless a later function asks for a full
	 * re-sign: a READ response of 1 KB remapped costs no CRC over its
	 * data. */
	uint8_t resign_due;
	uint8_t sign_state;            /* enum sword_sign_state, for this call */
	struct roce_hdr_words hdr_before;
	unsigned int stage;            /* this function's place in the chain */
	enum sword_side out_side;      /* where the frame leaves */
	struct sword_tx_batch *out;    /* extra frames: sword_fn_emit (they leave
					* before m) */
	struct rte_mbuf *after;        /* sword_fn_emit_after: leaves after m */
	unsigned int after_stage;
	bool after_to_server;
	struct rte_mempool *pool;      /* for frames a function creates (may be NULL) */
	uint64_t now;                  /* rte_rdtsc() at the start of the burst */
	uint64_t *counters;            /* this function's n_counters counters */
};

/*
 * A frame a function creates (an expanded ACK, a NAK for a client): it
 * visits the functions that come after the caller in its own direction's
 * order (to_server: requests' order; else responses'), then leaves on that
 * direction's side.  0, or -1 if it was dropped (by a later function or a
 * full batch; counted).
 */
struct sword_worker;
int sword_fn_emit(struct sword_worker *w, const struct sword_fn_ctx *ctx,
		  struct rte_mbuf *m, bool to_server);
/*
 * The same for a frame whose ICRC (and UDP checksum) its creator left
 * undone: the worker signs it once, as it leaves, whether the functions
 * after the caller change it or not (an expanded ACK that atomic
 * replacement then makes an ATOMIC ACK is signed once, not twice).  They
 * see it as verified (icrc_ok) and must not read its ICRC, as after
 * ctx->resign_due.
 */
int sword_fn_emit_unsigned(struct sword_worker *w, const struct sword_fn_ctx *ctx,
			   struct rte_mbuf *m, bool to_server);
/*
 * The same, but the frame leaves after m (or after m was dropped), not
 * before it: e.g. a NAK that must not overtake the response it follows.
 * One per frame; 0, or -1 if it was dropped (counted).
 */
int sword_fn_emit_after(struct sword_worker *w, struct sword_fn_ctx *ctx,
			struct rte_mbuf *m, bool to_server);

struct sword_fn_ops {
	const char *name;              /* e.g. "atomic_replacement" */
	/* Per-worker state, created before the worker runs (NULL = error).
	 * w is the worker (its id, config, shared connection table). */
	void *(*create)(const struct sword_config *cfg, struct sword_worker *w,
			int socket_id);
	void (*destroy)(void *state);
	enum sword_fn_verdict (*process)(void *state, struct sword_worker *w,
					 struct sword_fn_ctx *ctx);
	/* Optional: copy counters the function keeps itself into counters[]
	 * (its n_counters slots).  Called at the end of every burst in which
	 * the function ran, so readers see them without a per-frame cost. */
	void (*publish)(void *state, uint64_t *counters);
	/* Optional: take the live keys (SWORD_KEY_LIVE) of cfg after a SIGHUP
	 * changed them.  Called on the worker's own lcore between bursts, so
	 * it may write the state the hot path reads without any locking. */
	void (*reconfigure)(void *state, const struct sword_config *cfg);
	/* Optional: live sections (a reload adds or removes [server.NAME] or
	 * [lock.NAME]; sword_config.h enum sword_inst_state).  prepare runs
	 * on the main lcore before the workers see next: check that the
	 * function's tables can take it and allocate what they will need
	 * (no malloc on the worker's lcore); 0, or -1 with err (the reload is
	 * refused and unprepare undoes it).  Then reconfigure(state, cfg)
	 * takes it on the worker's lcore: adds what is new, stops deciding
	 * for what is RETIRING, drops what cfg no longer has.  owed (main
	 * lcore, a read-only scan like /sword/drain's) counts what the
	 * function decided for RETIRING sections and still owes a client;
	 * the daemon drops them at 0.  Without prepare a function takes no
	 * section change: the daemon refuses such reloads. */
	int (*prepare)(void *state, struct sword_worker *w, const struct sword_config *next,
		       int socket_id, char *err, size_t errlen);
	void (*unprepare)(void *state);
	uint64_t (*owed)(const void *state, const struct sword_config *cfg);
	/* Optional: time passed, frames or not (sword_worker_tick, about
	 * every SWORD_TICK_US on the worker's lcore): work a function must
	 * do when no frame comes to hang it on, e.g. asking back a client
	 * that waits on a lane that fell quiet.  ctx carries no frame (m, p
	 * and frame are NULL) and leaves to_server true; before each
	 * sword_fn_emit the function sets ctx->server (the frame's server,
	 * index into cfg->servers). */
	void (*tick)(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx);
	/* Optional: the switch carried the servers' traffic around swordd
	 * (a fail-over bypass while swordd made no progress): forget what
	 * the frames taught (lock words, connections, recorded decisions),
	 * as an empty start would, for its traffic has moved on unseen.  On
	 * the worker's lcore, between bursts; rare (no hot-path rules). */
	void (*forget)(void *state, uint64_t now);
	/* Optional: does the function check the ICRC of a frame of the
	 * managed server server_ip4 (network order) with this opcode going
	 * this way (to_server: requests) whenever ctx->icrc_ok is false, and
	 * skip that check when it is true?  Asked for every server, opcode
	 * and direction when the function is attached.  Such frames are
	 * verified by the worker a burst at a time (roce_icrc_verify_burst,
	 * cheaper per frame than one by one) before any function runs, and
	 * reach the chain with the verdict in ctx->icrc_ok.  Answer yes only
	 * for frames the function nearly always checks: a frame verified
	 * ahead and never looked at is pure cost.  (The worker keeps the
	 * servers and the opcodes as two sets, so with several functions
	 * answering differently it may verify a few such frames; never a
	 * correctness matter.) */
	bool (*checks_icrc)(const void *state, uint32_t server_ip4, uint8_t opcode,
			    bool to_server);
	/* Counters the function increments as ctx->counters[i]; reported as
	 * fn_<counter_names[i]> in /sword/stats and --stats-json. */
	unsigned int n_counters;
	const char *const *counter_names;
};

#define SWORD_MAX_FNS 4

/*
 * Features a config can turn on ([features] keys), in chain order: a
 * request visits the attached functions in this order, a response in the
 * reverse.  Clover steers what a request asks for, atomic replacement
 * decides it, remapping puts the result on a lane.
 */
enum sword_feature {
	SWORD_FEATURE_CLOVER = 0,               /* F4, lib/clover */
	SWORD_FEATURE_ATOMIC_REPLACEMENT,       /* F2, lib/serializer */
	SWORD_FEATURE_REMAPPING,                /* F3, lib/remap */
	SWORD_FEATURE_NUM,
};

const char *sword_feature_name(enum sword_feature f);

/*
 * Make a feature's implementation known (call before sword_daemon_setup,
 * e.g. from main.c).  When the config turns the feature on, the daemon
 * attaches ops to every worker; if nothing was registered for an enabled
 * feature, the daemon logs a warning and managed frames pass unchanged.
 */
void sword_feature_register(enum sword_feature f, const struct sword_fn_ops *ops);
const struct sword_fn_ops *sword_feature_ops(enum sword_feature f);

/* ---------------------------------------------------------------------- */
/* Shard map: managed server IPs → server index (read-only, shared) */

#define SWORD_SHARD_SLOTS 256      /* power of two, >= 4 * SWORD_MAX_SERVERS */

struct sword_shard_map {
	uint32_t ip[SWORD_SHARD_SLOTS];        /* network order; 0 = empty */
	int16_t server[SWORD_SHARD_SLOTS];
	uint16_t owner[SWORD_MAX_SERVERS];     /* worker id per server */
	unsigned int n_servers;
};

void sword_shard_map_build(struct sword_shard_map *sm, const struct sword_config *cfg);

static inline int
sword_shard_lookup(const struct sword_shard_map *sm, uint32_t ip)
{
	uint32_t h;
	unsigned int i;

	if (sm->n_servers == 0 || ip == 0)
		return -1;
	h = (rte_be_to_cpu_32(ip) * 2654435761u) >> 24;
	for (i = 0; i < SWORD_SHARD_SLOTS; i++) {
		uint32_t s = (h + i) & (SWORD_SHARD_SLOTS - 1);

		if (sm->ip[s] == ip)
			return sm->server[s];
		if (sm->ip[s] == 0)
			return -1;
	}
	return -1;
}

/* ---------------------------------------------------------------------- */
/* Worker */

/*
 * Upgrade drain (issue #30), set by the main lcore (telemetry /sword/drain)
 * with an atomic store and loaded by each worker once per burst into
 * sword_worker.draining: no lock and no syscall on the hot path, and a
 * burst sees one value throughout.  Only ever turned on (a restart ends it).
 */
extern uint32_t sword_drain_requested;
static inline void
sword_drain_request(void)
{
	/* seq_cst: the caller reads the workers' loop counts next, and that
	 * load must not be ordered before this store */
	__atomic_store_n(&sword_drain_requested, 1, __ATOMIC_SEQ_CST);
}
static inline bool
sword_drain_is_requested(void)
{
	return __atomic_load_n(&sword_drain_requested, __ATOMIC_ACQUIRE) != 0;
}

struct sword_worker {
	struct sword_worker_stats stats;       /* first: own cache lines */
	uint16_t id;
	uint16_t n_workers;
	bool one_port;
	uint16_t port_of_side[SWORD_SIDE_NUM]; /* DPDK port ids */
	const struct sword_config *cfg;
	const struct sword_shard_map *shards;
	struct rte_mempool *pool;              /* packet pool, for functions */
	unsigned int n_fn;
	struct {
		const struct sword_fn_ops *ops;
		void *state;
		unsigned int counter_base;
		/* Set at attach, read on every frame (one load each, not
		 * ops->process and &stats.fn[counter_base] per call).
		 * counters points into this worker: w is never copied. */
		enum sword_fn_verdict (*process)(void *state, struct sword_worker *w,
						 struct sword_fn_ctx *ctx);
		uint64_t *counters;            /* &stats.fn[counter_base] */
	} fn[SWORD_MAX_FNS];
	void *daemon_priv;                     /* sword_daemon's per-worker lanes */
	/* Upgrade drain (/sword/drain): sword_drain_requested as read at the
	 * start of this burst; the functions read this plain copy per frame */
	bool draining;
	uint32_t fn_sample_tick;               /* managed frames, for latency samples */
	struct rc_table *rc;                   /* connections (lib/rc), shared by the
						* functions; sword_worker_rc() */
	/* rc lives in a function's state segment (sword_worker_use_rc): that
	 * function ends it; adopted: an earlier process's table */
	bool rc_borrowed, rc_adopted;
	/* What a burst verifies ahead (checks_icrc): frames of a server in
	 * icrc_ahead_servers (bit = server index) with an opcode whose
	 * icrc_ahead[direction][opcode] is 1 ([1] requests, [0] responses;
	 * bytes, not bits: one load on the hot path). */
	uint8_t icrc_ahead[2][256];
	uint64_t icrc_ahead_servers;
	bool icrc_ahead_any;
	/* The reference path: every frame classified and run through the
	 * functions alone, each function checking its own ICRC, as before
	 * bursts were staged.  sword_worker_init sets it from [cores]
	 * staged_bursts (off: true); tests and benchmarks set it after. */
	bool one_at_a_time;
	/* sword_worker_tick: some function has a tick op; when it last ran */
	bool has_tick;
	uint64_t tick_tsc, last_tick;
} __rte_cache_aligned;

/* The state function ops keeps on worker wk, or NULL (no such function
 * there, or no worker): for telemetry, which reads it from the main lcore. */
static inline void *
sword_worker_fn_state(const struct sword_worker *wk, const struct sword_fn_ops *ops)
{
	for (unsigned int i = 0; wk != NULL && i < wk->n_fn; i++)
		if (wk->fn[i].ops == ops)
			return wk->fn[i].state;
	return NULL;
}

/* The worker's connection table, created on first use from cfg ([tables]
 * qps, [atomic] conn_idle_ms and learn_holdoff_ms, [tables] stub_ring);
 * NULL if it cannot be allocated. */
struct rc_table *sword_worker_rc(struct sword_worker *w);
/* The parameters of that table (for one a function keeps in its segment). */
struct rc_params sword_worker_rc_params(const struct sword_worker *w);
/* A function that keeps the connection table in its state segment
 * (swordd --state) makes it the worker's, before any other function has
 * asked for one; adopted: the table is an earlier process's (the other
 * functions' segments refer to its connections).  -1: the worker has
 * another table already. */
int sword_worker_use_rc(struct sword_worker *w, struct rc_table *rc, bool adopted);

/* Every attached function's reconfigure(w->cfg), on w's lcore; the
 * frames verified ahead follow the servers the functions now have. */
void sword_worker_reconfigure(struct sword_worker *w);

/* Set up w (zeroed stats, no functions).  cfg and shards must outlive w. */
void sword_worker_init(struct sword_worker *w, const struct sword_config *cfg,
		       const struct sword_shard_map *shards, unsigned int id);

/*
 * Append a function to w's chain and create its per-worker state.
 * Returns 0, or -1 (chain full, counters exhausted, create failed).
 */
int sword_worker_attach_fn(struct sword_worker *w, const struct sword_fn_ops *ops,
			   int socket_id);
void sword_worker_detach_all(struct sword_worker *w);

/* Port slot (side) of a DPDK port id for this worker's configuration. */
static inline enum sword_side
sword_worker_side_of_port(const struct sword_worker *w, uint16_t port)
{
	return (!w->one_port && port == w->port_of_side[SWORD_SIDE_SERVER])
		? SWORD_SIDE_SERVER : SWORD_SIDE_CLIENT;
}

/* Port slot (index into per-port counters) a side transmits on. */
static inline unsigned int
sword_worker_slot_of_side(const struct sword_worker *w, enum sword_side side)
{
	return w->one_port ? 0 : (unsigned int)side;
}

#define SWORD_PORT_FROM_MBUF UINT16_MAX

/*
 * Process a burst of n frames received on in_port (SWORD_PORT_FROM_MBUF: use
 * each mbuf's ->port).  Staged ([cores] staged_bursts, sword_worker.c top
 * comment): all frames are classified first, then the ICRCs the functions
 * would check are verified together, then the functions run in arrival
 * order; what leaves, in which order, and every counter are the same as
 * one_at_a_time's.  Every mbuf ends up in exactly one place: appended
 * to out->pkts[side] (transmit), out->handoff[worker] (belongs to another
 * worker's server), freed (dropped, counted), or kept by a function.
 * out is NOT reset first (callers may accumulate).  Does not count rx
 * (the receive loop does).  Returns the number of frames queued for TX.
 */
uint16_t sword_worker_process(struct sword_worker *w, uint16_t in_port,
			      struct rte_mbuf **pkts, uint16_t n,
			      struct sword_tx_batch *out);

/* How often sword_worker_tick runs the functions' tick ops. */
#define SWORD_TICK_US 1000

/*
 * The functions' tick ops, if SWORD_TICK_US have passed since they last
 * ran (now: rte_rdtsc()); frames they create go to out as with
 * sword_worker_process.  Returns the number of frames queued for TX.
 * The receive loop calls it on every turn: without a tick op it is one
 * branch.
 */
uint16_t sword_worker_tick(struct sword_worker *w, uint64_t now,
			   struct sword_tx_batch *out);

/* Every function forgets what it knows (sword_fn_ops.forget): a fail-over
 * bypass carried the traffic around swordd.  The worker's lcore. */
void sword_worker_forget(struct sword_worker *w, uint64_t now);

#endif /* SWORD_WORKER_H */
