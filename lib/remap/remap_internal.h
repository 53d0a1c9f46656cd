/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_internal.h — the state behind remap.h: lanes with their stub
 * rings, and each client connection's place on a lane (by lib/rc slot,
 * tagged with the incarnation it belongs to).
 */
#ifndef SWORD_REMAP_INTERNAL_H
#define SWORD_REMAP_INTERNAL_H

#include <string.h>

#include <rte_branch_prediction.h>

#include "remap.h"

#define RMP_NONE UINT32_MAX

/* What a lane PSN carries, for mapping its answer back. */
enum rmp_kind {
	RK_EMPTY = 0,
	RK_ACKABLE,   /* WRITE/SEND packet: an ACK at or after it covers it */
	RK_READ,      /* one PSN of a READ's response span */
	RK_ATOMIC,    /* a real atomic: answered by an ATOMIC ACK */
	/* rmp_conn.wait_kind only: the request a client waits to place was
	 * never seen (it was lost before a later one came): room is kept as
	 * for a READ or an atomic, or the others could take the last
	 * responder resource it needs */
	RK_UNSEEN,
};

#define RS_ENDS_MSG 0x01  /* last PSN of a message: the client's MSN moves */
#define RS_ANSWERED 0x02  /* READ/atomic: its response passed */
#define RS_REACK    0x04  /* answered, then retransmitted: ACK it again */
#define RS_FIRST    0x08  /* first PSN of a request (READ span, atomic) */
#define RS_RELEASED 0x10  /* its responder resource is given back */
/* WRITE/SEND: its client was acknowledged for it (set where the common
 * case answers it; the slot may then be reused at once, slot_needed) */
#define RS_ACKED    0x20

struct rmp_stub {
	uint64_t orig;        /* an answered real atomic's result */
	uint32_t lpsn;        /* lane PSN (tag of the slot) */
	uint32_t conn;        /* rc slot of the client connection */
	uint32_t inc;         /* its incarnation; 0 = slot empty */
	uint32_t cpsn;        /* the client's PSN for this lane PSN */
	uint32_t cmsn;        /* client MSN once this PSN completes */
	uint8_t kind;         /* enum rmp_kind */
	uint8_t flags;
};

struct rmp_lane {
	/* Four state bytes, also read as one word: the common case
	 * (remap_*_fast) is a lane open and nothing else (rmp_lane_quiet). */
	union {
		struct {
			uint8_t open;
			uint8_t recovering;   /* the server NAKed: requests beyond
					       * resend wait */
			/* a multi-packet WRITE/SEND under way: its packets must
			 * follow each other on the lane (a responder takes
			 * another message's first packet there for an invalid
			 * request, a fatal NAK) */
			uint8_t msg_open;
			uint8_t resv_set;     /* held for a client (resv_conn) */
		};
		uint32_t state4;
	};
	uint16_t server;
	uint32_t owner, owner_inc;     /* borrowed connection (rc slot, life) */
	uint32_t dom;         /* its ordering domain (rc_new_domain) */
	uint32_t msg_conn, msg_inc;   /* whose, or who placed last (rc slot, life) */
	/* Clients whose request swordd refused (no room, another's message
	 * open), first come first served: the head is asked to resend once
	 * its request fits, and the lane is then reserved for it until it
	 * comes (or resend_timeout_tsc).  Without the order a client could
	 * be refused forever; without the NAK a client with no retransmit
	 * timer (rxe, timeout 0) would wait forever, and rxe ignores a second
	 * NAK while retrying, so it is sent only when its resend will fit. */
	uint32_t wait_head, wait_n;   /* queue in wait (below) */
	uint16_t streak;      /* placed by msg_conn while others waited */
	uint8_t opener;       /* msg_conn has opened a multi-packet message */
	uint64_t opened_tsc;  /* when it last did */
	uint32_t resv_conn, resv_inc;
	uint64_t resv_tsc;
	/* what the server QP checks about its peer, from the owner's frames */
	uint32_t cl_ip, cl_qpn, srv_qpn;
	/* the Ethernet addresses its requests carry: the server's, then the
	 * owner's (one copy into a stitched frame) */
	uint8_t eth[12];
	uint16_t sport;
	uint32_t start;       /* first lane PSN */
	uint32_t next;        /* next lane PSN to give out */
	uint32_t una;         /* lowest lane PSN not yet answered */
	uint32_t resend;      /* recovering: the PSN the server waits for */
	uint32_t rd_out, rd_max;
	uint32_t bound;       /* client connections on this lane */
	uint32_t reack;       /* stubs flagged RS_REACK */
	uint32_t prompted;    /* recovering: lane PSN whose client was asked */
	uint8_t prompted_set;
	/* A real atomic the server completed whose answer swordd never saw:
	 * its client will ask again, and the server answers from its
	 * responder resources, which hold only its last rd_max READs and
	 * atomics.  So from the oldest such one on, at most rd_max READs and
	 * atomics ride the lane until it is answered. */
	uint8_t unans_set;
	uint32_t unans_first;  /* its lane PSN */
	uint32_t atom_since;   /* READs and atomics sent from it on (it included) */
	/* a server→client frame of this lane (headers only), to build NAKs
	 * asking a client to resend */
	uint8_t tmpl[REMAP_EMIT_BUF];
	uint32_t tmpl_len;
	struct roce_pkt tmpl_p;   /* tmpl, parsed */
	/* the owner's request headers (Ethernet to BTH), for no-op WRITEs */
	uint8_t rtmpl[REMAP_EMIT_BUF];
	uint32_t rtmpl_len;
	uint16_t rt_l3, rt_l4;   /* its IP and UDP header offsets */
	/* Kept (remap_cm.c): the owner disconnected (CM DREQ) while others
	 * rode the lane.  Its DREQ is held, answered with a DREP, and sent on
	 * once the lane closes (dreq_due: by remap_tick); owner is RMP_NONE. */
	uint8_t kept;
	uint8_t moved;        /* moved onto a rider's QP (remap_move.c) */
	/* moved where no frame was at hand to ask or fill with
	 * (rmp_lane_rescue): remap_tick prompts it while it recovers */
	uint8_t prompt_due;
	/* Closed by a new life of its owner's connection (its QP re-created,
	 * the server's end reset): answers to the owner's address are the
	 * closed lane's late ones until resend_timeout_tsc after reborn_tsc,
	 * then the new life's (lane_of) */
	uint8_t owner_reborn;
	uint64_t reborn_tsc;
	uint8_t dreq_due;
	uint16_t dreq_len;    /* 0: none held */
	uint8_t dreq[REMAP_EMIT_BUF];
	struct rmp_stub *stubs;
	uint32_t *wait;       /* rc slots of waiting clients, rc capacity entries */
	/* Moved off its owner's QP when that QP was lost with its owner's
	 * life (rmp_lane_rescue): answers to the old owner's address are the
	 * old QP's late ones, which could carry a rider's PSN into the
	 * owner's new life, until ghost_until (resend_timeout_tsc); then its
	 * new life's.  Outside the memset of lane_open: a lane opened again
	 * in the slot meanwhile does not end the hold. */
	uint32_t ghost_ip, ghost_qpn;
	uint64_t ghost_until;
};

/* RC_LOST: it rode a lane that closed and has opened again for another
 * owner; dropped like a closed lane's clients until it reconnects */
enum rmp_conn_state { RC_DIRECT = 0, RC_BOUND, RC_LOST };

/* What swordd remembers of one client PSN, after its stub may be gone:
 * enough to answer a retransmission of something already answered. */
struct rmp_rev {
	uint64_t orig;        /* answered real atomic: its result */
	/* what the request asked (rmp_content_fp), where remapping keeps the
	 * connection table (keep_conns); 0: not recorded (another function
	 * keeps the table and judges new lives with the content it keeps) */
	uint64_t fp;
	uint32_t cpsn, lpsn;
	uint32_t cmsn;
	uint8_t valid;
	uint8_t kind;         /* enum rmp_kind */
	uint8_t answered;     /* atomic: orig is valid */
};

struct rmp_conn {
	uint32_t inc;         /* rc incarnation; 0 = nothing known */
	uint8_t state;        /* enum rmp_conn_state */
	uint8_t msn_known;
	uint8_t mac[6];       /* the client's MAC (its requests' source) */
	uint32_t lane;        /* global lane index when bound */
	uint32_t msn;         /* MSN the client sees once all it sent completes */
	uint32_t msn_psn;     /* direct: PSN of the answer msn came from */
	uint32_t dnext;       /* direct: next PSN never sent (valid if dnext_set) */
	uint8_t dnext_set;
	uint8_t two_sided;    /* sent a SEND or WRITE with immediate: never bound */
	/* swordd refused the request the lane waits for from it (no room,
	 * another's message open, or it is missing): it waits in the lane's
	 * queue (wait_kind: what it asked for) to be asked to resend */
	uint8_t waiting, wait_kind;
	uint8_t queued;       /* entries of it in the lane's queue (stale ones
				 * are skipped: waiting is what counts) */
	/* Draining to bind (remap_core.c, rmp_drain_start): a busy
	 * connection never has nothing outstanding at a fresh request, the
	 * moment it can bind at.  So its requests from drain_psn on are
	 * dropped until the answer before drain_psn is in; then it binds at
	 * drain_psn and waits on the lane to be asked to resend from there. */
	uint8_t draining, drain_kind;
	uint32_t drain_psn;
	uint8_t dead_told;    /* its lane closed, and it was told (rmp_tell_dead) */
	uint16_t sport;       /* its requests' UDP source port (a lane moving
			       * onto its own QP sends from it) */
	uint8_t own_qp_dead;  /* its own server QP was a lane that failed */
	/* bound, it sent its first PSN again (to its own QP: before its
	 * binding): a new life's start, unless a go-back-N reaches that far;
	 * a later PSN whose reverse entry is gone is then a new life */
	uint8_t initial_again;
	uint8_t out_of_band;  /* never bound: set up without the CM (counted once) */
	uint8_t stuck;        /* remap_move.c, within one move only */
	uint32_t bind_psn;    /* first client PSN on the lane */
	uint32_t next;        /* next client PSN expected on the lane */
	uint32_t acked;       /* client PSNs before this are answered to it */
	struct rmp_rev *rev;  /* client PSN → lane PSN, client_ring entries */
};

struct rmp_server {
	uint32_t ip;
	/* READ spans are counted in this: [atomic] pmtu until the server's
	 * frames show its path MTU (rmp_learn_pmtu) */
	uint32_t pmtu;
	uint16_t n_lanes;
	uint16_t first_lane;  /* index into r->lanes */
	bool keep_conns;
	/* the start hold-off covers its connections: every server after an
	 * empty start, only those given up after an adopting one
	 * (remap_state.c) */
	bool held;
	bool given_up;        /* by this adoption (remap_state.c) */
};

struct remap {
	struct remap_params prm;
	/* upgrade drain (remap_set_drain): bind no new connection */
	bool no_bind;
	struct rc_table *rc;
	struct rmp_server *servers;
	uint32_t n_servers;
	struct rmp_lane *lanes;
	uint32_t n_lanes;
	uint32_t ring_mask, crev_mask;
	struct rmp_conn *conns;        /* by rc slot */
	struct rmp_stub *stub_mem;
	struct rmp_rev *rev_mem;
	uint32_t *wait_mem;
	struct remap_counters c;
	uint64_t start_tsc;            /* first frame seen (start_holdoff) */
	bool started;
	bool holdoff_over;             /* the start hold-off has passed */
	bool dead_pending;             /* a lane closed: remap_tick tells its clients */
	bool dreq_pending;             /* a lane with a held DREQ closed: remap_tick sends it */
	bool prompt_pending;           /* a lane has prompt_due: remap_tick prompts it */
	/* a lane was ever kept (remap_cm.c): CM messages are looked at for
	 * it from then on (not a counter: counters are the process's) */
	bool some_kept;
	/* rmp_order_domains' last "placed now on a free lane" answer, for
	 * the request it was asked about (remap_request_fast then skips the checks it
	 * made).  Valid only until remapping next runs: every entry point
	 * (a frame, a tick, a connection's end) forgets it first, so the
	 * lane and the connection are as they were when it was given. */
	struct rmp_told {
		uint32_t conn, inc, psn;
		bool set, rd_room;
	} told;
	/* In a state segment (remap_state.c): the servers whose lanes and
	 * connections the frame, tick or connection end in progress may be
	 * changing ([0]: the frame's or tick's, [1]: a connection ending
	 * within it; RMP_TORN_ALL: every server; 0: none).  A process killed
	 * there leaves them half made: the next one gives those servers up. */
	uint32_t torn_ip[2];
	bool in_state;
	bool own_rc;          /* the connection table is in the block too */
	struct remap_adopt_info adopted;
};

#define RMP_TORN_ALL UINT32_MAX

/* What follows may change server_ip's lanes and connections (compiler
 * fences: a kill sees the mark before any of the changes). */
static inline void
rmp_torn_begin(struct remap *r, uint32_t server_ip)
{
	r->torn_ip[0] = server_ip;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void
rmp_torn_end(struct remap *r)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->torn_ip[0] = 0;
}

/* The stub a request leaves (enum rmp_kind), by its opcode. */
static inline uint8_t
rmp_kind_of(const struct roce_pkt *p)
{
	if (p->oi->flags & ROCE_F_READ)
		return RK_READ;
	if (p->oi->flags & ROCE_F_ATOMIC)
		return RK_ATOMIC;
	return RK_ACKABLE;
}

/* Every entry point of remapping, first: the order answer is stale. */
static inline void
rmp_forget_told(struct remap *r)
{
	r->told.set = false;
}

/* Within the start hold-off (counted from the first frame)? */
static inline bool
rmp_in_start_holdoff(struct remap *r, uint64_t now)
{
	if (likely(r->holdoff_over))
		return false;
	if (!r->started) {
		r->started = true;
		r->start_tsc = now;
	}
	if (r->prm.start_holdoff_tsc != 0 && now - r->start_tsc < r->prm.start_holdoff_tsc)
		return true;
	r->holdoff_over = true;    /* once: every frame asks */
	return false;
}

static inline int rmp_server_of(const struct remap *r, uint32_t ip4);

/* Within the start hold-off, a connection not set up by the CM since, of
 * a server the hold-off covers (an unknown one: any). */
static inline bool
rmp_held_at_start(struct remap *r, const struct rc_conn *c, uint64_t now)
{
	int s;

	if (!rmp_in_start_holdoff(r, now))
		return false;
	if (c == NULL)
		return true;
	s = rmp_server_of(r, c->srv_ip);
	return !c->by_cm && (s < 0 || r->servers[s].held);
}

/* The responder resources of c's server QP (the CM's, else the
 * configured default): what a lane on it may have outstanding. */
static inline uint32_t
rmp_rd_max(const struct remap *r, const struct rc_conn *c)
{
	uint32_t rr = c->by_cm && c->cm_responder_resources
		? c->cm_responder_resources : r->prm.responder_resources;

	return rr ? rr : 1;
}

/* Open, not recovering, nobody waits on it or has it held, no message is
 * open on it: rmp_lane_free on an open lane that is not recovering, in
 * two compares (the state bytes as one word). */
static inline bool
rmp_lane_quiet(const struct rmp_lane *l)
{
	static const uint8_t quiet[4] = { 1, 0, 0, 0 };   /* open only */
	uint32_t w;

	memcpy(&w, quiet, sizeof(w));
	return l->state4 == w && l->wait_n == 0;
}

/* Nobody waits on l, nobody has it held, no message is open on it: every
 * client may place (the common case, decided without the queue). */
static inline bool
rmp_lane_free(const struct rmp_lane *l)
{
	return !l->msg_open && !l->resv_set && l->wait_n == 0;
}

/* remap_req.c: the rc_order_fn of remapping (rc.h, ordering domains) */
void rmp_order_domains(void *ctx, const struct rc_conn *c, uint32_t psn, bool atomic,
		       uint32_t *dom, uint32_t *adom);

/* A SEND or a WRITE with immediate: it consumes a receive WQE of the
 * server QP it reaches, so on a lane it would go to another client's
 * receive queue.  Connections that use them are never remapped. */
static inline bool
rmp_two_sided(const struct roce_pkt *p)
{
	return (p->oi->flags & ROCE_F_SEND) ||
	       ((p->oi->flags & ROCE_F_WRITE) && p->oi->off[ROCE_HDR_IMMDT]);
}

/* remap_conns.c: a frame outside RC (the RDMA CM's MADs) */
bool rmp_keep_cm(struct remap *r, uint8_t *f, const struct roce_pkt *p, uint64_t now);
/* remap_cm.c: a frame outside RC, either way: the connection table learns
 * from the CM; an owner's DREQ to a kept lane is held and answered. */
enum remap_verdict rmp_on_cm(struct remap *r, uint8_t *f, const struct roce_pkt *p,
			     bool to_server, uint64_t now, struct remap_emit *emit,
			     uint32_t emit_cap, uint32_t *n_emit);
/* The owner of lane l ends (why): keep the lane for its other riders
 * (true) or not. */
bool rmp_lane_keep(struct remap *r, struct rmp_lane *l, const struct rc_conn *owner,
		   enum rc_end_why why);
/* remap_tick: held DREQs of closed lanes go to their servers. */
void rmp_send_dreqs(struct remap *r, struct remap_emit *emit, uint32_t emit_cap,
		    uint32_t *n_emit);

/* The index of the managed server at ip4, else -1.  Inline: every frame
 * asks (a handful of servers per worker). */
static inline int
rmp_server_of(const struct remap *r, uint32_t ip4)
{
	for (uint32_t i = 0; i < r->n_servers; i++)
		if (r->servers[i].ip == ip4)
			return (int)i;
	return -1;
}

/* The lane PSNs a request takes on server's lanes: a READ one per path
 * MTU of data, anything else one. */
static inline uint32_t
rmp_span(const struct remap *r, uint32_t server, const uint8_t *f, const struct roce_pkt *p)
{
	return (p->oi->flags & ROCE_F_READ) ? roce_req_psns(f, p, r->servers[server].pmtu) : 1;
}

/* remap_core.c: a frame to or from server that may show its path MTU (a
 * FIRST or MIDDLE packet of a multi-packet message; verified here unless
 * *icrc_ok), and a READ answered in fewer packets than its span. */
void rmp_learn_pmtu(struct remap *r, uint32_t server, uint8_t *f, const struct roce_pkt *p,
		    bool *icrc_ok);
void rmp_pmtu_too_small(struct remap *r, uint32_t server);
/* ... and the one a verified CM REQ of a connection with server says. */
void rmp_set_pmtu(struct remap *r, uint32_t server, uint32_t pmtu);

/* The managed server a request (to it) or response (from it) of an RC
 * connection belongs to, else -1 (passed). */
static inline int
rmp_managed(const struct remap *r, const struct roce_pkt *p, bool request)
{
	int server;

	if (p->ip_version != 4 || !(p->oi->flags & ROCE_F_RC))
		return -1;      /* the CM: rmp_on_cm, before */
	server = rmp_server_of(r, request ? p->dst_ip4 : p->src_ip4);
	if (server < 0 || !(p->oi->flags & (request ? ROCE_F_REQUEST : ROCE_F_RESPONSE)))
		return -1;
	return server;
}

/* remap_core.c: remap_create's steps, shared with remap_state.c */
int rmp_params(const struct remap_params *in, struct remap_params *p);
void rmp_set_servers(struct remap *r, const struct remap_params *prm);
void rmp_wire(struct remap *r);
int rmp_listen(struct remap *r);
/* remap_state.c: remap_create in a state block */
struct remap *rmp_create_in_state(const struct remap_params *prm);

/* remap_core.c */
struct rmp_conn *rmp_conn_of(struct remap *r, const struct rc_conn *c);
bool rmp_bind(struct remap *r, struct rc_conn *c, struct rmp_conn *rcn, int server,
	      const uint8_t *f, const struct roce_pkt *p, uint64_t now);
/* A fresh request p of a busy unbound connection: start draining it
 * (true: drop p) if it can bind once drained. */
bool rmp_drain_start(struct remap *r, const struct rc_conn *c, struct rmp_conn *rcn,
		     int server, const uint8_t *f, const struct roce_pkt *p);
/* Drained (the answer before drain_psn is in)? */
static inline bool
rmp_drained(const struct rmp_conn *rcn)
{
	return rcn->draining && rcn->msn_known &&
	       roce_psn_add(rcn->msn_psn, 1) == rcn->drain_psn;
}
/* Bind a drained connection at drain_psn and queue it to be asked to
 * resend from there; the lane, or NULL (no open lane: drain abandoned). */
struct rmp_lane *rmp_bind_drained(struct remap *r, struct rc_conn *c, struct rmp_conn *rcn,
				  int server);
void rmp_lane_close(struct remap *r, struct rmp_lane *l);
/* A fatal NAK at lane PSN L (the lane's server QP is in error) from the
 * client at rc slot failed (RMP_NONE: nobody's): move the lane onto a
 * rider's own server QP and recover there; false if none can host it. */
bool rmp_lane_move(struct remap *r, struct rmp_lane *l, uint32_t L, uint32_t failed);
bool rmp_lane_rescue(struct remap *r, struct rmp_lane *l, uint64_t now);
bool rmp_ghost_answer(const struct remap *r, const struct rmp_server *sv,
		      const struct roce_pkt *p, uint64_t now);
/* c rides a closed lane (or one it lost): tell it, once, that its oldest
 * unanswered request failed (remap_core.c). */
void rmp_tell_dead(struct remap *r, struct rmp_lane *l, struct rc_conn *c,
		   struct rmp_conn *rcn, struct remap_emit *emit, uint32_t emit_cap,
		   uint32_t *n_emit);
/* remap_tick: tell the clients of closed lanes that wait for answers */
void rmp_tell_dead_all(struct remap *r, struct remap_emit *emit, uint32_t emit_cap,
		       uint32_t *n_emit);
static inline struct rmp_stub *
rmp_stub_at(struct remap *r, struct rmp_lane *l, uint32_t lpsn)
{
	return &l->stubs[lpsn & r->ring_mask];
}
/* The stub of lane PSN lpsn if the slot still holds it. */
static inline struct rmp_stub *
rmp_stub_get(struct remap *r, struct rmp_lane *l, uint32_t lpsn)
{
	struct rmp_stub *s = rmp_stub_at(r, l, lpsn);

	return (s->inc != 0 && s->lpsn == lpsn) ? s : NULL;
}
/* The client connection a stub belongs to, if it still lives (always
 * inline, as the rewrites below: the common-case paths are built of
 * them, and GCC called them out of line once those were two). */
static __rte_always_inline struct rc_conn *
rmp_stub_client(struct remap *r, const struct rmp_stub *s, struct rmp_conn **rcn)
{
	struct rc_conn *c = rc_at(r->rc, s->conn);

	if (c == NULL || c->incarnation != s->inc || r->conns[s->conn].inc != s->inc ||
	    r->conns[s->conn].state != RC_BOUND)
		return NULL;
	*rcn = &r->conns[s->conn];
	return c;
}

/* remap_resp.c: ask the client whose turn it is on a recovering lane;
 * fill: PSNs nobody will resend may be filled now (not when the call's
 * own frame is a lane request before them: emitted frames leave first) */
void rmp_prompt(struct remap *r, struct rmp_lane *l, struct remap_emit *emit,
		uint32_t emit_cap, uint32_t *n_emit, bool fill);
void rmp_release(struct rmp_lane *l, struct rmp_stub *st);
/* remap_wait.c: refused clients wait their turn (struct rmp_lane.wait) */
void rmp_wait(struct remap *r, struct rmp_lane *l, const struct rc_conn *c,
	      struct rmp_conn *rcn, uint8_t kind);
/* May c place a request of this kind and span on l now (another's open
 * message, room kept for the client the lane is held for or that heads
 * its queue)?  opens: a first packet that does not end its message.
 * rmp_turn_allows only asks (rmp_order_domains, which has no clock: yes
 * only if yes whether a reservation has expired or not); rmp_turn
 * decides and counts. */
bool rmp_turn_allows(struct remap *r, struct rmp_lane *l, const struct rc_conn *c,
		     uint8_t kind, uint32_t span, bool opens);
bool rmp_turn(struct remap *r, struct rmp_lane *l, const struct rc_conn *c, uint8_t kind,
	      uint32_t span, bool opens, uint64_t now);
/* c placed a request: its reservation, its wait and its place at the
 * head end. */
void rmp_served(struct remap *r, struct rmp_lane *l, const struct rc_conn *c);
/* Is the client (IP, QPN) the head of l's queue? */
bool rmp_head_is(struct remap *r, struct rmp_lane *l, uint32_t cl_ip, uint32_t cl_qpn);
/* Ask the head of l's queue to resend if its request fits now. */
void rmp_wake(struct remap *r, struct rmp_lane *l, uint64_t now, struct remap_emit *emit,
	      uint32_t emit_cap, uint32_t *n_emit);
enum rmp_fit { RMP_FITS, RMP_RD_LIMIT, RMP_RING_FULL };
/* remap_req.c: could l take span more PSNs of this kind now? */
enum rmp_fit rmp_lane_fit(struct remap *r, struct rmp_lane *l, uint8_t kind, uint32_t span);
/* The oldest unanswered completed atomic of l in lane PSNs [from, upto). */
void rmp_unans_rescan(struct remap *r, struct rmp_lane *l, uint32_t from, uint32_t upto);
/* The reverse entry of a stub, if it still describes it. */
static inline struct rmp_rev *
rmp_rev_of(struct remap *r, struct rmp_conn *rcn, const struct rmp_stub *st)
{
	struct rmp_rev *rv = &rcn->rev[st->cpsn & r->crev_mask];

	return (rv->valid && rv->cpsn == st->cpsn && rv->lpsn == st->lpsn) ? rv : NULL;
}

/* remap_conns.c: keeping connections when no other function does */
struct rc_conn *rmp_keep_request(struct remap *r, struct rc_conn *c, uint8_t *f,
				 const struct roce_pkt *p, bool *icrc_ok, uint64_t now);
void rmp_keep_response(struct remap *r, const struct rmp_server *sv, uint8_t *f,
		       const struct roce_pkt *p, uint64_t now);
uint64_t rmp_content_fp(const uint8_t *f, const struct roce_pkt *p);
bool rmp_new_life(const struct remap *r, const struct rmp_conn *rcn, const uint8_t *f,
		  const struct roce_pkt *p);
/* A zero-length RDMA WRITE on lane l at lane PSN lpsn, AckReq set: a
 * request any responder takes without touching memory (IBTA C9-88: a
 * zero-length transfer needs no valid address or R_Key). */
int rmp_build_filler(const struct rmp_lane *l, uint32_t lpsn, struct remap_emit *out);

/* Header rewrites (inline: every stitched request and mapped answer) */
/*
 * Replace the IPv4 address at ip_off + at and fold the change into the
 * header checksum (RFC 1624 eqn. 3): cheaper than summing the header
 * again, and a checksum that was wrong on arrival stays wrong.  On the
 * words as they lie in memory: a one's-complement sum comes out the same
 * in either byte order (RFC 1071 2.(B)), so nothing is swapped; and the
 * same summed as 32-bit words then folded (2^16 = 1 in it), so the
 * address is taken whole.
 */
static __rte_always_inline void
rmp_set_ip4_addr(uint8_t *f, const struct roce_pkt *p, unsigned int at, uint32_t addr)
{
	uint8_t *a = f + p->l3_off + at, *ck = f + p->l3_off + 10;
	uint32_t old;
	uint64_t sum;
	uint16_t c;

	memcpy(&old, a, 4);
	memcpy(&c, ck, 2);
	sum = (uint64_t)(uint16_t)~c + (uint32_t)~old + addr;   /* < 2^34 */
	sum = (sum & 0xffffffff) + (sum >> 32);                 /* < 2^32 + 4 */
	sum = (sum & 0xffff) + (sum >> 16);                     /* < 2^17 + 1 */
	sum = (sum & 0xffff) + (sum >> 16);                     /* <= 0x10000 */
	sum = (sum & 0xffff) + (sum >> 16);
	c = (uint16_t)~sum;
	memcpy(a, &addr, 4);
	memcpy(ck, &c, 2);
}

static __rte_always_inline void
rmp_set_src(uint8_t *f, const struct roce_pkt *p, const uint8_t *src_mac,
	    const uint8_t *dst_mac, uint32_t src_ip, uint16_t sport)
{
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	if (p->src_ip4 != src_ip)
		rmp_set_ip4_addr(f, p, 12, src_ip);
	roce_st16(f + p->l4_off, sport);
}

static __rte_always_inline void
rmp_set_dst(uint8_t *f, struct roce_pkt *p, const uint8_t *dst_mac, uint32_t dst_ip)
{
	memcpy(f, dst_mac, 6);
	if (p->dst_ip4 != dst_ip)
		rmp_set_ip4_addr(f, p, 16, dst_ip);
	p->dst_ip4 = dst_ip;
}

/* remap_frame.c */
void rmp_resign(uint8_t *f, const struct roce_pkt *p);
/* A PSN-sequence NAK (or ACK) for a client, from a lane's template. */
int rmp_build_aeth(struct remap *r, const struct rmp_lane *l, const struct rc_conn *c,
		   const struct rmp_conn *rcn, uint32_t psn, uint8_t syndrome,
		   uint32_t msn, const uint64_t *orig, struct remap_emit *out);

#endif /* SWORD_REMAP_INTERNAL_H */
