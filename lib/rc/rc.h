/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rc.h — RC connections as swordd sees them (SPEC F0): one shared layer
 * that every function (atomic replacement now, remapping next) builds on.
 *
 * Why it exists: lock safety depends on knowing which server QP and which
 * client QP are the two ends of one connection, which life of a QPN a
 * request belongs to, and when a connection is gone.  Getting that wrong
 * by coincidence (Sherman starts every QP at PSN 3185; applications
 * re-create QPs with the same QPNs) hands one client's decisions to
 * another.  So identity here is exact or absent, never guessed:
 *
 * Identity.  A connection is (client IP, client QPN) <-> (server IP, server
 *   QPN).  Requests name the server QP, responses the client QP.  The pair
 *   is known exactly when swordd sees the RDMA CM exchange (REQ/REP carry
 *   both local QPNs and the starting PSN); otherwise a response is paired
 *   only on evidence that cannot be a coincidence (rc_pair_evidence()):
 *   its ICRC verified, exactly one unpaired connection between those two
 *   hosts could have sent its PSN, no QP between them is untracked, and
 *   no pre-restart response can still be in flight.  Unpaired, a
 *   connection is passed through by the functions (nothing rewritten).
 *
 * Incarnations.  Every life of a connection slot has a number, unique in
 *   the table and never reused: a new connection, a CM REQ or REP for a
 *   known QP, a request that reuses a PSN with other content, or a PSN
 *   jump beyond any window starts a new one.  Functions keep per-slot
 *   state tagged with the incarnation it belongs to and drop it (giving
 *   back what it held) when the numbers differ.
 *
 * Aging.  A connection with no frame for idle_tsc is evicted when its
 *   slot is needed; CM DREQ/DREP end one at once.  The maps use linear
 *   probing with backward-shift deletion (no tombstones), so churn never
 *   degrades lookups.  Nothing here is created from a frame whose ICRC
 *   was not verified: callers verify first.
 *
 * No EAL, no allocation after rc_create(); one table per worker.
 */
#ifndef SWORD_RC_H
#define SWORD_RC_H

#include <stdbool.h>
#include <stdint.h>

#include "roce.h"

#define RC_NO_CONN UINT32_MAX

struct rc_params {
	uint32_t max_conns;   /* default 1024 */
	uint64_t idle_tsc;    /* evict after this long idle (0: 30e9, i.e. "long") */
	/* After a (re)start nothing is paired by evidence for this long: a
	 * response to a request sent before swordd saw the QP may still
	 * arrive.  0 = at once. */
	uint64_t holdoff_tsc;
	/* How far before its first seen PSN a connection may have sent
	 * requests swordd did not see (its largest window of outstanding
	 * PSNs; default 256).  Past that, a PSN is no coincidence for it. */
	uint32_t history;
};

struct rc_conn {
	/* identity */
	uint32_t cl_ip, srv_ip;   /* network order */
	uint32_t srv_qpn;         /* requests' destination QP */
	uint32_t cl_qpn;          /* responses' destination QP, once paired */
	uint32_t incarnation;     /* unique per life of the slot; 0 = free */
	/* requester PSN window of this incarnation (the functions move it) */
	uint32_t first_psn;       /* first request PSN seen in this life */
	uint32_t initial_psn;     /* where the slot's first life started (or CM's) */
	uint32_t next_psn;        /* next in-order request PSN */
	uint32_t una;             /* lowest PSN no response has covered yet */
	uint64_t last_seen;
	uint8_t paired;
	uint8_t by_cm;            /* identity from the RDMA CM exchange */
	/* from CM (valid if by_cm) */
	uint8_t cm_responder_resources;
	uint8_t cm_initiator_depth;
};

struct rc_counters {
	uint64_t created;
	uint64_t evicted;         /* idle connection aged out for a new one */
	uint64_t closed;          /* CM DREQ/DREP */
	uint64_t reincarnated;    /* same QP, new life */
	uint64_t table_full;      /* no slot (every connection active) */
	uint64_t paired;          /* by evidence */
	uint64_t pair_ambiguous;  /* not paired: another QP could own the PSN */
	uint64_t cm_seen;
	uint64_t cm_bad;          /* CM MAD too short / unknown layout */
	uint64_t cm_paired;       /* connections identified by CM */
};

struct rc_table;

struct rc_table *rc_create(const struct rc_params *prm);
/*
 * The table in caller-owned memory (a state segment that outlives the
 * process): len >= rc_state_size(prm), 64-byte aligned.  adopt: the block
 * holds a table an earlier process made with the same max_conns; its
 * connections go on (the maps are rebuilt from the slots, listeners,
 * ordering function, CM exchanges in flight and counters start empty).
 * rc_destroy leaves the memory alone.
 */
size_t rc_state_size(const struct rc_params *prm);
/* RC_SHAPE_SEED folded with v (FNV-1a over its 8 bytes): the shape hash a
 * function's state block is checked by (ser_state_shape,
 * remap_state_shape) is built from its layout version, structure sizes
 * and configured counts this way. */
#define RC_SHAPE_SEED 0xcbf29ce484222325ull
static inline uint64_t
rc_shape_fold(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}
struct rc_table *rc_create_at(const struct rc_params *prm, void *mem, size_t len,
			      bool adopt);
void rc_destroy(struct rc_table *t);
void rc_reset(struct rc_table *t);       /* forget everything (restart) */
/* Pair nothing by evidence before `until` (a restart's hold-off, taken
 * again after rc_reset without a new process). */
void rc_hold_pairing(struct rc_table *t, uint64_t until);

/* The connection a request names, or NULL (rc_find_req, below). */
struct rc_conn *rc_find_req_hashed(struct rc_table *t, uint32_t cl_ip, uint32_t srv_ip,
				   uint32_t srv_qpn);
/* The paired connection a response names, or NULL (rc_find_resp, below). */
struct rc_conn *rc_find_resp_hashed(struct rc_table *t, uint32_t srv_ip, uint32_t cl_ip,
				    uint32_t cl_qpn);
/*
 * A new connection for a request (ICRC verified by the caller) at psn.
 * Evicts the longest-idle connection if the table is full and it has been
 * idle for idle_tsc; NULL (counted) if none has.
 */
struct rc_conn *rc_open(struct rc_table *t, uint32_t cl_ip, uint32_t srv_ip,
			uint32_t srv_qpn, uint32_t psn, uint64_t now);
/* A request on a connection swordd could not track (table full): until
 * idle_tsc has passed, no response between any hosts is paired by
 * evidence (the untracked QP could own its PSN). */
void rc_note_untracked(struct rc_table *t, uint64_t now);
/* A new life of c, requester window starting at psn; unpaired unless
 * keep_identity (CM told us the peer QPN again). */
void rc_reincarnate(struct rc_table *t, struct rc_conn *c, uint32_t psn,
		    uint64_t now, bool keep_identity);
/* Close c if no request came on it for idle_tsc (a response addressed to
 * its client QPN is then not its own: the QPN was reused).  true if
 * closed. */
bool rc_expire_idle(struct rc_table *t, struct rc_conn *c, uint64_t now);
/* Give the slot back (CM disconnect). */
void rc_close(struct rc_table *t, struct rc_conn *c, uint64_t now);

/* Why a life ends.  Only a disconnect the client asked for (its CM DREQ)
 * says the server's QP is still there: the server has not heard of it
 * yet, so a function that borrowed that QP may keep it for others a
 * while (lib/remap keeps a lane for its riders and holds the DREQ). */
enum rc_end_why {
	RC_END_IDLE = 0,          /* aged out */
	RC_END_NEW_LIFE,          /* re-incarnated: the QP was re-created */
	RC_END_CLOSED,            /* the server disconnected, or the CM gave
	                           * its client QPN to a new connection */
	RC_END_CLIENT_DISCONNECT, /* the client's CM DREQ */
};

/*
 * Called with a connection about to end a life (evicted, closed, or
 * re-incarnated), before its identity or number change: the functions give
 * back what their per-connection state holds.  At most RC_MAX_LISTENERS.
 */
#define RC_MAX_LISTENERS 4
typedef void (*rc_end_fn)(void *ctx, struct rc_conn *c, enum rc_end_why why,
			  uint64_t now);
int rc_listen(struct rc_table *t, rc_end_fn fn, void *ctx);
/* Forget every listener and ordering function registered with ctx (a
 * function's state being destroyed while the table lives on). */
void rc_unlisten(struct rc_table *t, void *ctx);

/*
 * Ordering domains.  The serializer may decide an op on a word while
 * other writes to it are in flight only if the server executes them all
 * in the order swordd forwards them: RC guarantees that within one server
 * connection.  Without remapping that is one client connection (its
 * incarnation number); with remapping, every client connection on one
 * lane.  The function that places requests on shared server connections
 * registers an rc_order_fn: it names the domain a connection's request at
 * psn will be executed in if forwarded now as a one-PSN WRITE (*dom) and,
 * if atomic, as an atomic (*adom; else *adom = *dom), each 0 when that is
 * not sure (not on a lane, not the next PSN, no room: the request may be
 * held and overtaken).  Both in one call: the serializer asks both for
 * every atomic, and most of the answer is common.  Domain numbers come
 * from rc_new_domain(), the counter incarnations come from, so they never
 * name a connection.
 */
typedef void (*rc_order_fn)(void *ctx, const struct rc_conn *c, uint32_t psn,
			    bool atomic, uint32_t *dom, uint32_t *adom);
void rc_set_order(struct rc_table *t, rc_order_fn fn, void *ctx);
uint32_t rc_new_domain(struct rc_table *t);
/* The domains of c's request at psn (as a WRITE, as an atomic): a lane's,
 * or c's own incarnation.  Inline, below. */

/* A request (or CM) on c: it is alive.  Responses do not count: a stale
 * pairing must be able to age out while another QP's answers hit it. */
static inline void
rc_touch(struct rc_conn *c, uint64_t now)
{
	c->last_seen = now;
}

/*
 * Pair a response (ICRC verified by the caller) for PSN psn from srv_ip to
 * (cl_ip, cl_qpn) with the one connection that can have sent psn.
 * may_own(ctx, c, psn) is the function's own check that c really sent a
 * request at psn that this response can answer (a live stub of the right
 * kind).  Returns the paired connection or NULL; *ambiguous is set when
 * an unpaired connection between the hosts could own psn but the response
 * cannot be given to it (several could, its request was not seen, or
 * pairing is suspended): such answers are never attributed.
 */
typedef bool (*rc_owns_fn)(void *ctx, const struct rc_conn *c, uint32_t psn);
struct rc_conn *rc_pair_evidence(struct rc_table *t, uint32_t srv_ip,
				 uint32_t cl_ip, uint32_t cl_qpn, uint32_t psn,
				 uint64_t now, rc_owns_fn may_own, void *ctx,
				 bool *ambiguous);

/*
 * The one unpaired connection between cl_ip and srv_ip for which
 * pick(ctx, c) holds, or NULL, also when another unpaired connection
 * between the hosts could have sent psn (its window, as in
 * rc_pair_evidence): a response no connection is known for is given to
 * none while it may be another's.  A scan of the table: for the rare
 * response that finds no connection, never for one that does.
 */
typedef bool (*rc_pick_fn)(void *ctx, const struct rc_conn *c);
struct rc_conn *rc_unpaired_only(struct rc_table *t, uint32_t srv_ip, uint32_t cl_ip,
				 uint32_t psn, rc_pick_fn pick, void *ctx);

/* The first member of every rc_table (C11 6.7.2.1: a pointer to a
 * structure, converted, points to its first member), so the accessors
 * below inline: functions call them several times per frame, and as calls
 * into rc_table.c they were a tenth of remapping's cost per frame. */
struct rc_table_head {
	struct rc_conn *conns;
	uint32_t max_conns;
	uint32_t last_req;    /* slot of rc_find_req's last answer */
	uint32_t last_resp;   /* slot of rc_find_resp's (or rc_note_resp's) */
	rc_order_fn order_fn; /* rc_set_order */
	void *order_ctx;
};

/* Index of c in the table (0..max_conns-1): functions key per-connection
 * state on it, tagged with c->incarnation. */
static inline uint32_t
rc_index(const struct rc_table *t, const struct rc_conn *c)
{
	return (uint32_t)(c - ((const struct rc_table_head *)(const void *)t)->conns);
}

/* The live connection at index i, or NULL. */
static inline struct rc_conn *
rc_at(struct rc_table *t, uint32_t i)
{
	const struct rc_table_head *h = (const struct rc_table_head *)(void *)t;

	return i < h->max_conns && h->conns[i].incarnation ? &h->conns[i] : NULL;
}

/*
 * The connection a request names, or NULL.  Its last answer is tried
 * first: the functions of one frame ask in turn (atomic replacement, then
 * remapping).  That is exact, not a guess: every live connection is in
 * the request map, and no two live ones have the same key (rc_open only
 * for a key rc_find_req does not know), so a live slot with the key is
 * the one the map would give.
 */
static inline struct rc_conn *
rc_find_req(struct rc_table *t, uint32_t cl_ip, uint32_t srv_ip, uint32_t srv_qpn)
{
	const struct rc_table_head *h = (const struct rc_table_head *)(void *)t;
	struct rc_conn *c = &h->conns[h->last_req];

	if (c->incarnation != 0 && c->srv_qpn == srv_qpn && c->cl_ip == cl_ip &&
	    c->srv_ip == srv_ip)
		return c;
	return rc_find_req_hashed(t, cl_ip, srv_ip, srv_qpn);
}

/*
 * The paired connection a response names, or NULL.  Its last answer is
 * tried first, as in rc_find_req: exact because paired connections have
 * unique response keys (rc_pair_evidence pairs only a key rc_find_resp
 * does not know; the CM closes the stale owner of a key it pairs).
 */
static inline struct rc_conn *
rc_find_resp(struct rc_table *t, uint32_t srv_ip, uint32_t cl_ip, uint32_t cl_qpn)
{
	const struct rc_table_head *h = (const struct rc_table_head *)(void *)t;
	struct rc_conn *c = &h->conns[h->last_resp];

	if (c->incarnation != 0 && c->paired && c->cl_qpn == cl_qpn && c->cl_ip == cl_ip &&
	    c->srv_ip == srv_ip)
		return c;
	return rc_find_resp_hashed(t, srv_ip, cl_ip, cl_qpn);
}

/* A function made a response c's (remapping maps a lane's answer to its
 * client): the next function's rc_find_resp for it is then one compare. */
static inline void
rc_note_resp(struct rc_table *t, const struct rc_conn *c)
{
	((struct rc_table_head *)(void *)t)->last_resp = rc_index(t, c);
}

/* rc_order_fn's answer, else c's own incarnation (no function places
 * requests on shared connections, or this one is not sure).  Inline: the
 * serializer asks for every atomic. */
static inline void
rc_order_domains(const struct rc_table *t, const struct rc_conn *c, uint32_t psn,
		 bool atomic, uint32_t *dom, uint32_t *adom)
{
	const struct rc_table_head *h = (const struct rc_table_head *)(const void *)t;

	*dom = *adom = 0;
	if (h->order_fn != NULL)
		h->order_fn(h->order_ctx, c, psn, atomic, dom, adom);
	if (*dom == 0)
		*dom = c->incarnation;
	if (*adom == 0)
		*adom = c->incarnation;
}

static inline uint32_t
rc_capacity(const struct rc_table *t)
{
	return ((const struct rc_table_head *)(const void *)t)->max_conns;
}
uint32_t rc_count(const struct rc_table *t);
const struct rc_counters *rc_counters(const struct rc_table *t);

/* ---------------------------------------------------------------- */
/* RDMA CM (rc_cm.c) */

/* Is this frame a CM MAD (UD SEND to QP1 carrying management class 7)? */
bool rc_cm_is_cm(const uint8_t *frame, const struct roce_pkt *p);

/*
 * Learn from a CM message (ICRC verified by the caller).  is_server(ip)
 * says which end is the memory server.  A REP (or, for a REQ whose REP is
 * missed, nothing) establishes the exact identity of a connection and
 * starts a new incarnation of it; DREQ/DREP close it.
 */
typedef bool (*rc_is_server_fn)(void *ctx, uint32_t ip4);
void rc_cm_rx(struct rc_table *t, const uint8_t *frame, const struct roce_pkt *p,
	      uint64_t now, rc_is_server_fn is_server, void *ctx);

/* Fields of one CM message, as parsed (exposed for tests). */
enum rc_cm_kind { RC_CM_OTHER = 0, RC_CM_REQ, RC_CM_REP, RC_CM_RTU, RC_CM_DREQ,
		  RC_CM_DREP, RC_CM_REJ };
struct rc_cm_msg {
	enum rc_cm_kind kind;
	uint32_t local_comm_id, remote_comm_id;
	uint32_t local_qpn;       /* REQ, REP */
	uint32_t starting_psn;    /* REQ, REP */
	uint32_t remote_qpn;      /* DREQ */
	uint8_t responder_resources, initiator_depth;
	uint16_t path_mtu;        /* REQ: bytes (256..4096), 0 if not a valid code */
};
/* 0 on success, -1 if the frame is not a well-formed CM MAD. */
int rc_cm_parse(const uint8_t *frame, const struct roce_pkt *p,
		struct rc_cm_msg *m);

/*
 * The DREP its receiver would send for the DREQ `dreq` (parsed as p): the
 * same addresses the other way, the same transaction ID, P_Key, Q_Key and
 * UDP source port, communication IDs swapped, no private data, signed
 * (as a ConnectX answers: shared/captures/rcuckoo-connectx.pcap, DREQ 21
 * and its DREP).  Its length, or -1 if dreq is not a CM DREQ or out is
 * too small.
 */
int rc_cm_build_drep(uint8_t *out, uint32_t cap, const uint8_t *dreq,
		     const struct roce_pkt *p);

#endif /* SWORD_RC_H */
