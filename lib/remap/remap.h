/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap.h — connection remapping with sequence-space stitching (SPEC F3):
 * the requests of many client connections to one memory server ride a few
 * server-side connections ("lanes") borrowed from the clients' own, so RC
 * ordering on a lane serializes them; responses are mapped back like a
 * NAT, each client seeing its own QPN, PSNs and MSNs.
 *
 * Why it exists: it is the seed paper's key insight.  One server QP
 * carrying every lock operation needs no atomic unit and no gate, and N
 * client QPs folded onto k lanes relieve the server NIC's QP cache.
 *
 * The rules (the reasoning for each is at the top of the file named):
 *
 * Binding (remap_core.c).  A client connection (lib/rc, exactly
 *   identified: by the RDMA CM or on evidence) moves onto a lane at a
 *   request that has nothing outstanding before it, so no answer from its
 *   own server QP can still be on the way; earlier PSNs (retransmissions
 *   of what it sent before) still go to its own server QP.  The first
 *   `lanes` connections to a server that bind become its lanes: the
 *   server QP expects exactly the owner's next PSN then.  Swordd owns no
 *   QP.
 *
 * Stitching (remap_req.c).  Per lane swordd owns the next PSN; each
 *   forwarded request gets it (a READ one per path-MTU of data), the lane's
 *   destination QPN and source addresses, and leaves a stub per lane PSN:
 *   client, client PSN, the MSN the client will see once it completes,
 *   and what it is.  A per-client reverse index makes a retransmission
 *   reuse its lane PSN (I6).  A lane never carries more outstanding READs
 *   and atomics than the server's responder resources.
 *
 * Responses (remap_resp.c).  A lane ACK covering requests of several
 *   clients is expanded into one ACK per client; READs and atomics are
 *   never implicitly acknowledged to a client; READ responses, ATOMIC
 *   ACKs and NAKs go to the client that owns their PSN.  A PSN-sequence
 *   NAK or RNR NAK puts the lane in recovery: the server discards
 *   everything after the PSN it NAKed, so swordd holds back every request
 *   beyond the lane's resend point and asks each client to resend (a
 *   PSN-sequence NAK in its own PSN space) when its turn comes.
 *
 * No EAL, no allocation after remap_create(); one instance per worker;
 * the connection table (lib/rc) is shared with the other functions.
 */
#ifndef SWORD_REMAP_H
#define SWORD_REMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "rc.h"
#include "roce.h"

#define REMAP_MAX_LANES 16     /* per server */

struct remap_server {
	uint32_t ip;          /* network order */
	uint16_t lanes;       /* 1..REMAP_MAX_LANES */
	/* true: remapping keeps this server's connections in the rc table
	 * itself (opens them on verified requests, pairs them on evidence,
	 * learns from the RDMA CM).  false: another function that runs
	 * before it on requests and after it on responses does (the
	 * serializer, for servers with lock regions). */
	bool keep_conns;
};

struct remap_params {
	const struct remap_server *servers;
	uint32_t n_servers;
	struct rc_table *rc;          /* shared connection table (required) */
	uint32_t ring;                /* stubs per lane, power of two (default 4096) */
	uint32_t client_ring;         /* reverse index per client, power of two (default 256) */
	uint32_t pmtu;                /* READ PSN spans (default 4096) */
	/* Outstanding READs/atomics a lane may carry when the RDMA CM did not
	 * say (REP's responder resources); default 16. */
	uint32_t responder_resources;
	/*
	 * After a (re)start, for this long nothing of a connection the RDMA CM
	 * did not set up since is forwarded, either way.  A connection that
	 * rode a lane before the restart would reach its server QP with its
	 * own PSNs, which the lane's server takes for duplicates (a WRITE
	 * ACKed, not executed; another client's atomic result): its client
	 * must time out and reconnect instead.  Set it above the clients' RC
	 * retry budget; 0 only when swordd starts before any traffic.
	 */
	uint64_t start_holdoff_tsc;
	/* A client asked to resend (a sequence NAK, after swordd had to
	 * refuse its request) has its lane reserved this long for it
	 * (default 100000: 100 ms in microseconds, the tests' clock). */
	uint64_t resend_timeout_tsc;
	/* A client streaming multi-packet messages on a lane keeps its turn
	 * (RMP_STREAK messages) while others wait, unless it has opened none
	 * for this long.  0 (default): off, the head is asked as soon as the
	 * streamer's message closes (README: why off in swordd for now). */
	uint64_t stream_quiet_tsc;
	/* A frame remapped in place (REMAP_MODIFIED) is left with its ICRC
	 * (and a UDP checksum) stale, for a caller that re-signs it once
	 * after every stage (swordd's worker: sword_fn_ctx.resign_due).
	 * Frames remap builds (emit) are always signed. */
	bool defer_resign;
	/*
	 * Also remap connections the RDMA CM did not set up (QPNs and PSNs
	 * exchanged out of band, identified on lib/rc's evidence).  Off by
	 * default: such a QP re-created with its old QPN and PSNs starts a
	 * new life the wire does not show until a request differs from the
	 * old life's at its PSN, and until then the lane takes its requests
	 * for retransmissions (a WRITE acknowledged as a duplicate and never
	 * run, an atomic answered with the old life's result).  Only for
	 * deployments that never re-create a QP with the QPN of one swordd
	 * may still know (README "Limits").
	 */
	bool out_of_band;
	/* Tests only: every frame through the general steps, none through
	 * the common-case paths (remap_request_fast, remap_response_fast:
	 * they decline every frame), so that a harness can run a script both ways and
	 * compare what leaves (fuzz_remap does). */
	bool general_only;
	/*
	 * In a block of caller memory that outlives the process (swordd
	 * --state: a state segment), state_len >= remap_state_size(), 64-byte
	 * aligned; NULL: on the heap.  state_adopt: the block holds what an
	 * earlier process with the same shape (remap_state_shape) left; its
	 * lanes and bindings go on (remap_state.c says what is given up).
	 * With rc NULL the block holds the connection table too, made from
	 * own_rc; else rc_adopted says whether rc is the table the block's
	 * connections refer to (adopted with it), which adoption needs.
	 */
	void *state_mem;
	size_t state_len;
	bool state_adopt;
	uint64_t state_now;
	struct rc_params own_rc;
	bool rc_adopted;
};

/* What an adopting remap_create found and gave up (remap_adopt_info). */
struct remap_adopt_info {
	uint32_t lanes_open;       /* lanes going on */
	uint32_t conns_bound;      /* connections riding them */
	/* servers whose lanes and connections were given up (a frame in
	 * progress when the process ended, a connection that ended unseen,
	 * a damaged record): their clients see what an empty start costs */
	uint32_t servers_given_up;
	uint32_t conns_given_up;
	bool torn;                 /* a frame, tick or connection end was in progress */
};

enum remap_verdict {
	REMAP_PASS = 0,        /* not remapped: unchanged */
	REMAP_MODIFIED,        /* rewritten in place (*len, *p updated) */
	REMAP_DROP,            /* do not forward (counted) */
};

/* Frames remapping creates, to send before the frame of the call (after
 * it if `after`; at most one such per call): for the client side
 * (expanded ACKs, NAKs asking a client to resend, answers given again) or,
 * to_server, for a lane (a zero-length WRITE filling a lane PSN no client
 * will send again).  Caller-owned, reused per call. */
/* room for a CM MAD (a held DREQ sent on, the DREP answering it: 322
 * bytes over IPv4) */
#define REMAP_EMIT_BUF 384
struct remap_emit {
	uint8_t buf[REMAP_EMIT_BUF];
	uint32_t len;
	bool to_server;
	bool after;
	/* prm.defer_resign only: its ICRC (and a UDP checksum) is left to
	 * the caller, who signs it once, after any later rewrite */
	bool unsigned_icrc;
};

#define REMAP_COUNTERS(X)                                                     \
	X(req_seen)          /* requests of managed servers */                \
	X(bound)             /* client connections moved onto a lane */       \
	X(lanes_opened)      /* connections that became a lane */             \
	X(lanes_closed)      /* lanes ended (owner gone, fatal NAK) */        \
	X(stitched)          /* requests forwarded on a lane */               \
	X(retransmitted)     /* client retransmissions at their lane PSN */   \
	X(retrans_expired)   /* retransmission whose stub is gone: dropped */ \
	X(atomic_replayed)   /* answered atomic asked again: answered here */ \
	X(gap_dropped)       /* client request ahead of its next PSN */       \
	X(bad_icrc_dropped)  /* request of a bound connection, bad ICRC */    \
	X(rd_limit_dropped)  /* READ/atomic beyond the responder resources */ \
	X(msg_open_held)     /* another client's multi-packet message is open on the lane */ \
	X(two_sided_direct)  /* SEND/WRITE-with-immediate of an unbound connection: never bound */ \
	X(two_sided_dropped) /* SEND/WRITE-with-immediate of a bound connection: refused */ \
	X(waited)            /* clients queued after a refusal (remap_wait.c) */  \
	X(turn_waited)       /* requests refused: another client's turn */    \
	X(resends_nakked)    /* RNR NAKs asking a queued client to resend */ \
	X(resv_expired)      /* an asked client did not come back in time */  \
	X(recovery_held)     /* request beyond a recovering lane's resend point */ \
	X(ring_full)         /* lane stub ring full of unanswered PSNs */     \
	X(dead_lane_dropped) /* request of a client on a closed lane */       \
	X(dead_lane_told)    /* its client told (NAK remote operational error) */ \
	X(unbound_direct)    /* request of a connection not (yet) on a lane */ \
	/* connections set up out of band (no RDMA CM seen) left on their \
	 * own QP: remap_params.out_of_band is off */                      \
	X(out_of_band_direct)                                             \
	X(start_held)        /* frame of a connection from before a restart */ \
	X(before_binding)    /* bound connection's PSN from before its binding */ \
	X(resp_seen)                                                          \
	X(resp_mapped)       /* lane responses given to their client */       \
	X(acks_expanded)     /* extra client ACKs from one lane ACK */        \
	X(resends_asked)     /* NAKs asking a client to resend (recovery) */  \
	X(holes_filled)      /* lane PSNs no client would resend: no-op WRITE */ \
	X(reacked)           /* ACKs re-sent for answered retransmissions */  \
	X(resp_orphan)       /* lane response whose client is gone */         \
	X(resp_unknown_psn)  /* lane response at a PSN with no stub */        \
	/* a READ response packet that ends its message where the READ's \
	 * span does not, or the reverse: [atomic] pmtu is not the path   \
	 * MTU (dropped: it would be another request's PSN) */            \
	X(read_span_mismatch)                                             \
	/* a server's path MTU changed what READ spans are counted in: from \
	 * its multi-packet frames (WRITE/SEND and READ response FIRST and  \
	 * MIDDLE packets carry exactly the path MTU), or doubled after a   \
	 * READ answered in fewer packets than its span */                  \
	X(pmtu_learned)                                                   \
	X(resp_bad_icrc)     /* lane response with a bad ICRC: dropped */     \
	X(naks_seq)                                                           \
	X(naks_rnr)                                                           \
	X(naks_fatal)        /* access/invalid/operational NAK: lane closed */ \
	X(emit_full)         /* expansion cut short (emit array full) */      \
	X(conn_paired)       /* connections paired here (keep_conns) */         \
	X(drains)            /* busy unbound connections drained to bind */   \
	X(drain_dropped)     /* their requests dropped while their own QP drained */ \
	X(drain_abandoned)   /* drained, no open lane: asked back to its own QP */ \
	X(lanes_kept)        /* owner disconnected, lane kept for its riders */ \
	X(dreq_held)         /* an owner's CM DREQ held (answered with a DREP) */ \
	X(drep_sent)         /* DREPs swordd sent for held DREQs */           \
	X(dreq_released)     /* held DREQs sent on once their lane emptied */ \
	X(lanes_moved)       /* lanes moved onto a rider's QP (a fatal NAK, its owner's QP lost) */ \
	/* a lane's server QP lost with its owner's life: the lane moved \
	 * onto a rider's own QP instead of closing (rmp_lane_rescue) */   \
	X(lanes_rescued)                                                  \
	/* clients of such a lane with a WRITE or atomic sent on it and not \
	 * answered (it may or may not have run): told their QP failed */  \
	X(in_doubt_failed)                                                \
	X(new_lives)         /* bound connections whose QP was re-created out of band */

struct remap_counters {
#define REMAP_FIELD(n) uint64_t n;
	REMAP_COUNTERS(REMAP_FIELD)
#undef REMAP_FIELD
};

struct remap;

/* NULL on bad parameters (errno: EINVAL, ENOMEM). */
struct remap *remap_create(const struct remap_params *prm);
void remap_destroy(struct remap *r);

/*
 * A client→server frame that a function before it may have rewritten.
 * icrc_ok: the frame's ICRC is known good (verified or re-signed after a
 * verification by an earlier stage); false: remap verifies it.
 * emit[0..*n_emit) gets frames to send before it (struct remap_emit).
 */
enum remap_verdict remap_on_request(struct remap *r, uint8_t *frame, uint32_t *len,
				    uint32_t cap, struct roce_pkt *p, bool icrc_ok,
				    uint64_t now, struct remap_emit *emit,
				    uint32_t emit_cap, uint32_t *n_emit);
/*
 * A server→client frame.  A lane response is mapped to its client's view
 * (in place), and emit[0..*n_emit) gets frames for other clients to send
 * before it; all of them are client-view frames later stages may handle.
 * icrc_ok as for remap_on_request (swordd's worker verifies a burst's
 * frames together: checked again here it cost an answer ~100
 * instructions).
 */
enum remap_verdict remap_on_response(struct remap *r, uint8_t *frame, uint32_t *len,
				     uint32_t cap, struct roce_pkt *p, bool icrc_ok,
				     uint64_t now, struct remap_emit *emit,
				     uint32_t emit_cap, uint32_t *n_emit);

/*
 * remap_on_request and remap_on_response in two steps, for a caller that
 * counts instructions (swordd's worker): the common case alone (a bound
 * connection's next one-PSN WRITE or atomic on a free lane; the lane's
 * ACK of its oldest PSN), true if it was remapped (REMAP_MODIFIED,
 * nothing emitted); false: nothing was changed but *icrc_ok (true once
 * verified), and the general step must take the frame.  remap_on_* is
 * the one, then the other.
 */
bool remap_request_fast(struct remap *r, uint8_t *frame, struct roce_pkt *p,
			bool *icrc_ok, uint64_t now);
enum remap_verdict remap_request_general(struct remap *r, uint8_t *frame, uint32_t *len,
					 uint32_t cap, struct roce_pkt *p, bool icrc_ok,
					 uint64_t now, struct remap_emit *emit,
					 uint32_t emit_cap, uint32_t *n_emit);
bool remap_response_fast(struct remap *r, uint8_t *frame, struct roce_pkt *p,
			 bool *icrc_ok, uint64_t now);
enum remap_verdict remap_response_general(struct remap *r, uint8_t *frame, uint32_t *len,
					  uint32_t cap, struct roce_pkt *p, bool icrc_ok,
					  uint64_t now, struct remap_emit *emit,
					  uint32_t emit_cap, uint32_t *n_emit);

/*
 * Time passed with no frame to hang work on: a client asked back whose
 * resend did not come in time is queued again, and the first waiting
 * client of a lane that has room is asked (RNR NAK), and the clients of a
 * lane that closed with requests outstanding are told it failed.  Without
 * it a lane that fell quiet with clients waiting (they have no retransmit
 * timer, the server has nothing left to answer) would wait for ever.  Call it every
 * millisecond or so; it costs a look at each lane.  emit as for
 * remap_on_response (frames to clients).
 */
void remap_tick(struct remap *r, uint64_t now, struct remap_emit *emit,
		uint32_t emit_cap, uint32_t *n_emit);

bool remap_is_server(const struct remap *r, uint32_t ip4);
/* The block a state_mem remap_create needs (0: no layout for prm), and a
 * hash of what it holds (this build's structures, the sizes, the servers
 * and their lanes): a block of another shape is not adopted. */
size_t remap_state_size(const struct remap_params *prm);
uint64_t remap_state_shape(const struct remap_params *prm);
/* The connection table remapping uses (its own where the block holds it). */
struct rc_table *remap_rc(struct remap *r);
void remap_adopt_info(const struct remap *r, struct remap_adopt_info *ai);
const struct remap_counters *remap_counters(const struct remap *r);

/*
 * Upgrade drain (swordd's /sword/drain): while on, no connection is bound
 * to a lane any more (rmp_bind refuses; one waiting for its own QP to be
 * answered before binding is asked back to its own QP instead).
 * Connections already bound stay on their lanes: moving them off is
 * not something remapping can do safely mid-stream.  Not thread-safe:
 * call it on the worker that owns r (swordd does, once per burst).
 */
void remap_set_drain(struct remap *r, bool on);

/* Introspection (tests, telemetry): lane i of server ip. */
struct remap_lane_info {
	bool open;
	uint32_t cl_ip, cl_qpn, srv_qpn;
	uint32_t next_psn, una;
	uint32_t bound;          /* client connections on it */
	uint32_t rd_outstanding;
	bool recovering;
	bool kept;               /* its owner disconnected; kept for the others */
	bool dreq_held;          /* the owner's DREQ waits to be sent on */
	uint32_t pmtu;           /* its server's READ spans are counted in this */
};
int remap_lane_info(const struct remap *r, uint32_t server_ip4, unsigned int lane,
		    struct remap_lane_info *out);

#endif /* SWORD_REMAP_H */
