/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * serializer.h — atomic replacement (SPEC F2/F5): CAS/FAA/masked-CAS on
 * managed lock words are decided against a shadow of the word and reach the
 * memory server as RDMA WRITEs; the WRITE's ACK goes back to the client as
 * the ATOMIC ACK it asked for.
 *
 * Why it exists: the memory server's atomic unit is the bottleneck of
 * lock-based disaggregated memory (Sherman, RCuckoo).  A WRITE is cheap for
 * the server; the decision the atomic unit would have made is made here, in
 * the order the requests pass, and RC ordering on each connection plus the
 * gating rules in ser_word.c make that order the one the server applies.
 *
 * No EAL, no mbufs: the caller (lib/sword's worker, or a test) parses a
 * frame with roce_parse() and hands the byte buffer here.  All state is
 * allocated in ser_create(); nothing is allocated per packet.  One
 * struct ser per worker (per memory-server shard); not thread-safe.
 *
 * The safety argument (why the shadow never grants a word twice and why
 * passing real atomics is always allowed when it is) is at the top of
 * ser_word.c; the response-side bookkeeping (stubs, MSN, coalesced ACK
 * expansion) is explained at the top of ser_req.c and ser_resp.c;
 * connections (identity, incarnations, aging) in lib/rc/rc.h.
 */
#ifndef SWORD_SERIALIZER_H
#define SWORD_SERIALIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "roce.h"

struct rc_table;

/* A lock region: the 8-byte words [base, base+len) of one memory server. */
struct ser_region {
	uint32_t server_ip4;  /* network order */
	uint32_t rkey;        /* host order; ignored if any_rkey */
	bool any_rkey;        /* va alone names the memory (VA-based MRs) */
	uint64_t base;        /* 8-byte aligned */
	uint64_t len;         /* multiple of 8 */
};

struct ser_params {
	const struct ser_region *regions;
	uint32_t n_regions;
	uint32_t max_words;     /* total words over all regions must fit (default 1<<20) */
	/* Regions the table can hold for ser_region_add (swordd's live
	 * reload); 0 = exactly n_regions and no room for more.  With room,
	 * the shadow is sized max_words up front (calloc: pages are touched
	 * only once words are handed out). */
	uint32_t max_regions;
	uint32_t max_conns;     /* client connections (default 1024) */
	uint32_t ring_size;     /* stubs per connection, power of two (default 256);
	                         * must exceed any client's outstanding PSNs */
	/* Path MTU for READ PSN spans (default 4096).  Must not be below the
	 * real path MTU: an overestimated span cannot be repaired once later
	 * requests were decided (requests inside it are dropped if they touch
	 * a word); an underestimated one is resynchronized safely. */
	uint32_t pmtu;
	/*
	 * Bound on how long a word may be refused to other connections while a
	 * modelled write on it is un-ACKed (I4 gate): after max_refusals
	 * refusals or gate_tsc cycles, acquires that cannot be lost are passed
	 * through as real atomics instead.  Defaults: 64 refusals, 0 = no
	 * time bound.
	 */
	uint32_t max_refusals;
	uint64_t gate_tsc;
	/*
	 * A modelled write un-ACKed for this long is abandoned (the word is
	 * forgotten and relearned).  Must exceed the clients' RC retry budget
	 * (timeout x retry_cnt).  0 = never.
	 */
	uint64_t pending_expire_tsc;
	/*
	 * After a (re)start, answers to real atomics are not learned from for
	 * this long: a retransmission of a request the server executed
	 * before the restart is answered from the server's replay cache with
	 * an old value.  Set it to the clients' RC retry budget.  0 = learn
	 * at once (only right for a first start with no traffic before).
	 */
	uint64_t learn_holdoff_tsc;
	/*
	 * After a (re)start (ser_start), no request on a managed word goes to
	 * the server for this long (dropped and asked back): a WRITE the
	 * previous instance made of a granted CAS may still be on its way to
	 * the server, and another client's CAS passed real ahead of it would
	 * be granted too (two holders).  Must exceed the time a frame can
	 * spend between swordd and the server.  0 = off.
	 */
	uint64_t start_quiet_tsc;
	/*
	 * A connection with no frame for this long is evicted (its slot
	 * and stubs are reused; what it still held on words is given up as
	 * an orphan, see ser_word.c S7).  Must exceed the clients' RC retry
	 * budget.  0 = 30 s worth of... nothing: never (tests only).
	 */
	uint64_t conn_idle_tsc;
	/* swordd sets AckReq on writes it forwards to managed words (rewritten
	 * atomics, releases) so they are ACKed promptly; true turns that off. */
	bool no_force_ackreq;
	/*
	 * Decide atomics (CAS, masked CAS, FAA) here also for connections
	 * the RDMA CM did not identify (QPNs exchanged out of band) and that
	 * ride no lane.  Off by default: such connections' atomics go to the
	 * server as they came.  Why: a QP re-created with its old QPN and
	 * PSNs (an out-of-band deployment after an error or a server
	 * restart) whose first requests repeat, byte for byte, answered ones
	 * at their PSNs cannot be told from the old life's retransmissions
	 * on the wire.  A recorded answer would then answer the new life
	 * (an FAA's increment lost: test_conn t_faa_new_life_runs; a CAS
	 * granted on a word it no longer held: t_cas_new_life_runs), and the
	 * probes that ask the server which life a copy is (README, "A new
	 * life's copy of a decided atomic") have open findings when such a
	 * life's copies come out of order (tests/fuzz/findings/closed).
	 * Passed real, the server's own replay rules tell the lives apart.
	 * True is the promise that no QP is re-created with the QPN of a
	 * connection swordd may still know (within conn_idle of its last
	 * request): what real NICs do (they assign QPNs cyclically), but
	 * not what a QP reset to RTS with its QPN does.
	 */
	bool out_of_band;
	/* An unpaired connection's dropped request is asked back through its
	 * server (ser_ask.c: a zero-length WRITE far ahead in its PSN space,
	 * which the server NAKs to the client); true turns that off.  swordd
	 * sets it with remapping on (the WRITE would reach remapping). */
	bool no_poke;
	/* With no_poke: a connection the RDMA CM did not set up is poked
	 * anyway.  swordd sets it with remapping on and [remap] out_of_band
	 * off: remapping keeps every such connection on its own server QP
	 * for its whole life, so the WRITE reaches that QP as it would
	 * without remapping.  Without it, an unpaired out-of-band client
	 * whose request was dropped was never asked back, and one with no
	 * retransmit timer (rxe, timeout 0) waited for ever (the rig's
	 * lock_client_accel_recreate_remap_default). */
	bool poke_out_of_band;
	/* A request or response rewritten in place (SER_FORWARD_REWRITTEN)
	 * is left with its ICRC (and a UDP checksum) stale, for a caller that
	 * re-signs it once after every stage (swordd's worker:
	 * sword_fn_ctx.resign_due).  Frames it builds are always signed. */
	bool defer_resign;
	/* The connection table to work on, shared with other functions (the
	 * serializer keeps it: opens, pairs, ages); NULL: a table of its own
	 * with max_conns, conn_idle_tsc, learn_holdoff_tsc and ring_size. */
	struct rc_table *rc;
	/*
	 * State that outlives the process (swordd --state): the table, its
	 * connections (its own, rc must be NULL) and every word in one block
	 * of state_len >= ser_state_size() bytes, 64-byte aligned, zero when
	 * new (a fresh file).  state_adopt: the block holds what an earlier
	 * process left (same ser_state_shape); ser_create goes on from it:
	 * what that process was in the middle of when it died is given up
	 * (ser_state.c), the regions become prm's, counters start at 0.
	 * A block whose newest request is older than conn_idle_tsc is
	 * refused (ESTALE; EBADMSG: damaged or torn in a reload).
	 * state_now: the clock at create (holds on given-up words start
	 * here).  state_zero (not adopting): every byte of the block is
	 * known to be zero (a file just sized), so it is not cleared again.
	 * ser_destroy leaves the block alone.
	 */
	void *state_mem;
	size_t state_len;
	bool state_adopt;
	bool state_zero;
	uint64_t state_now;
};

enum ser_verdict {
	SER_FORWARD = 0,        /* frame unchanged */
	SER_FORWARD_REWRITTEN,  /* frame rewritten in place; *len updated */
	SER_DROP,               /* do not forward (counted) */
};

/* Extra frames to send to the client before the response (ATOMIC ACKs
 * synthesized from a coalesced ACK).  Caller-owned, reused per call. */
#define SER_EMIT_BUF 128
struct ser_emit {
	uint8_t buf[SER_EMIT_BUF];
	uint32_t len;
	bool to_server;   /* ser_after's frame only: it goes to the server */
};

struct ser_counters {
	/* request path */
	uint64_t req_seen;          /* requests to managed servers */
	uint64_t granted;           /* CAS/masked CAS decided as success → WRITE(v) */
	uint64_t failed_local;      /* decided as failure → zero-length WRITE */
	uint64_t faa_local;         /* FAA decided → WRITE(old+add) */
	uint64_t lane_ordered;      /* decisions in a remapping lane's domain (ser_word.c) */
	uint64_t fold_learned;      /* of learned: from one answer of a one-domain FAA run */
	uint64_t fold_mismatch;     /* a later answer of that run disagreed: relearned */
	uint64_t gated_failed;      /* failed because another connection's write is un-ACKed */
	uint64_t gated_real;        /* gate bound reached: passed as real atomic */
	uint64_t gated_read_seen;   /* no failure from before the write: a READ may have seen it */
	uint64_t gated_drop;        /* could neither decide nor pass safely: dropped */
	uint64_t passed_real_atomic;/* atomics on managed words passed unchanged */
	uint64_t out_of_band_real;  /* of those: a connection the RDMA CM did not set
	                             * up, not decided (ser_params.out_of_band off) */
	uint64_t misaligned_passed; /* atomic with va % 8 != 0 in a region */
	uint64_t release_seen;      /* plain 8-byte WRITE to a managed word (modelled) */
	uint64_t write_unmodelled;  /* other writes overlapping managed words */
	uint64_t ackreq_set;        /* AckReq added to a forwarded write */
	uint64_t dup_replayed;      /* retransmission given the recorded decision */
	uint64_t bad_icrc_passed;   /* ICRC wrong on arrival: passed, never re-signed */
	uint64_t stub_ring_full;
	uint64_t psn_out_of_window;
	uint64_t table_full;        /* connection table full: QP untracked */
	uint64_t read_span_fixed;   /* a READ spanned other PSNs than pmtu said */
	uint64_t dropped;           /* total SER_DROP on requests */
	/* response path */
	uint64_t resp_seen;
	uint64_t unknown_qp;        /* response of no known connection: passed */
	uint64_t paired;            /* connections paired with their client QPN */
	uint64_t ack_to_atomic_ack; /* in-place ACK → ATOMIC ACK */
	uint64_t acks_synthesized;  /* extra ATOMIC ACKs from coalesced ACKs/NAKs */
	uint64_t emit_full;         /* expansion cut short by the emit array */
	uint64_t resp_bad_icrc;     /* response with bad ICRC: passed, not used */
	uint64_t resp_mismatch;     /* response type disagrees with the stub */
	uint64_t dup_ack_dropped;   /* stale plain ACK at a READ/atomic PSN: dropped */
	uint64_t naks;
	uint64_t nak_on_rewritten;  /* remote access/invalid NAK on a rewritten op */
	/* words */
	uint64_t learned;           /* word value learned from real atomics */
	uint64_t relearn;           /* word forgotten (ambiguous), will relearn */
	uint64_t pending_expired;
	/* connections */
	uint64_t conn_created;
	uint64_t conn_evicted;      /* idle connection aged out */
	uint64_t conn_reincarnated; /* same QPN, new incarnation (CM, content, jump) */
	uint64_t conn_closed;       /* CM disconnect */
	uint64_t cm_seen;           /* RDMA CM messages parsed */
	uint64_t cm_paired;         /* connections identified exactly by CM */
	uint64_t pair_ambiguous;    /* response not paired: another QP could own its PSN */
	uint64_t resp_out_of_window;/* response beyond anything sent: ignored */
	uint64_t write_gated_drop;  /* write dropped: another connection's blind write pending */
	uint64_t replay_zeroed;     /* replay of a decision the word moved past: no value re-sent */
	uint64_t replay_redecided;  /* stale copy or new life of an answered decision: decided afresh */
	uint64_t probe_asked;       /* copy of a decision that may be a new life's, no CM: the
	                             * server asked (a duplicate WRITE) whether its QP has the PSN */
	uint64_t probe_lacked;      /* ... and it has not: the next copy runs as the real atomic */
	uint64_t replay_probed;     /* ... copies sent as the real atomic */
	uint64_t replay_ran;        /* ... and the server ran it: a new life of the QPs */
	uint64_t probe_cover_held;  /* ... an answer covering it that may not be the old QP's
	                             * (one after the atomic left): held back, not answered */
	uint64_t start_quiet_drop;  /* op on a lock word dropped (asked back) in the start quiet */
	uint64_t given_up_met;      /* a connection a torn restart gave up, met again behind
	                             * what it had sent: nothing decided until answered past it */
	uint64_t copy_holds;        /* a client resent a request the server had
	                             * answered: nothing of its connection decided
	                             * until the server answers after it (ser_req.c
	                             * copy_of_answered) */
	uint64_t asked_back;        /* RNR NAKs asking a client to resend a dropped request */
	uint64_t poked;             /* the same for an unpaired client, through its server */
	uint64_t nak_beyond_dropped; /* a poked client's sequence-error NAK past every
	                             * PSN it sent (it had resent all): dropped */
	uint64_t ask_failed;        /* such a NAK could not be built */
};

struct ser;

/* NULL on bad parameters (errno set: EINVAL, ENOMEM). */
struct ser *ser_create(const struct ser_params *prm);
void ser_destroy(struct ser *s);
/* The block a state segment needs for prm (0: prm is refused), and a hash
 * of everything the block's layout depends on (this build's structures
 * and prm's sizes): a block made under another shape is never adopted. */
size_t ser_state_size(const struct ser_params *prm);
uint64_t ser_state_shape(const struct ser_params *prm);
/* What the last adoption gave up (ser_state.c): connections ended and
 * words forgotten because the previous process died in the middle of a
 * frame that touched them. */
struct ser_adopt_info {
	uint32_t conns, conns_given_up, words_known, words_given_up;
};
void ser_adopt_info(const struct ser *s, struct ser_adopt_info *ai);

/* Drop all state (what a restart does): words unknown, no connections. */
void ser_reset(struct ser *s);

/* The instance starts (its process, or a reset) at now: no request on a
 * managed word goes to the server until now + start_quiet_tsc. */
void ser_start(struct ser *s, uint64_t now);

/* The traffic went around swordd meanwhile (a fail-over bypass): what the
 * frames taught may be stale.  ser_reset, then as after an empty restart
 * learn nothing from real atomics' answers and pair nothing by evidence
 * for holdoff_tsc from now (an answer may replay a decision made before,
 * a response may answer a request seen before), and ser_start. */
void ser_forget(struct ser *s, uint64_t now, uint64_t holdoff_tsc);

/*
 * The same for tables adopted after the traffic went around swordd (a
 * restart with failover_bypass), keeping what the server is known to have
 * run: every word is forgotten (changed by someone unknown), and so is
 * every decision the server had not acknowledged (its WRITE may never
 * have run, and the client's own atomic may have run in its place while
 * the switch bypassed swordd: its copy now goes to the server as itself).
 * Decisions the server acknowledged stay, so a client whose answer was
 * lost gets it when it asks again (the server, which ran a WRITE there,
 * has no answer for it); other unacknowledged requests on words (real
 * atomics, writes) go too: their copies are met as new.  Returns the
 * decisions given up.
 */
uint32_t ser_forget_unacked(struct ser *s, uint64_t now, uint64_t holdoff_tsc);

/*
 * A client→server frame.  p must be a successful roce_parse() of
 * frame[0..*len).  cap = bytes usable from frame start.  now = the
 * caller's clock (rte_rdtsc()) in the unit of gate_tsc.  Frames not to a
 * managed server, or not RC requests, return SER_FORWARD untouched.
 * On SER_FORWARD_REWRITTEN, *len and *p describe the new frame.
 */
enum ser_verdict ser_on_request(struct ser *s, uint8_t *frame, uint32_t *len,
				uint32_t cap, struct roce_pkt *p, uint64_t now);

/*
 * A server→client frame.  May rewrite it (ACK → ATOMIC ACK) and may fill
 * emit[0..*n_emit) with frames the caller must send to the client BEFORE
 * this one (same port/direction).  emit_cap ≥ the largest number of
 * atomics a client keeps outstanding (16 is typical; 32 recommended).
 */
enum ser_verdict ser_on_response(struct ser *s, uint8_t *frame, uint32_t *len,
				 uint32_t cap, struct roce_pkt *p, uint64_t now,
				 struct ser_emit *emit, uint32_t emit_cap,
				 uint32_t *n_emit);

/*
 * A frame to send AFTER the one just handled, or NULL: the RNR NAK asking
 * a client to resend a request swordd dropped (ser_ask.c), or for an
 * unpaired client the zero-length WRITE that makes its server ask
 * (to_server set).  After ser_on_request (which dropped the request) it
 * goes instead of it; after ser_on_response, behind the response.  Valid
 * until the next ser_on_request/ser_on_response.
 */
const struct ser_emit *ser_after(const struct ser *s);

/* Is this IPv4 address (network order) a managed memory server? */
bool ser_is_server(const struct ser *s, uint32_t ip4);

const struct ser_counters *ser_counters(const struct ser *s);

/* Introspection for tests and telemetry. */
enum ser_word_state { SER_WORD_NONE = -1, SER_WORD_UNKNOWN = 0, SER_WORD_KNOWN = 1 };
/* State of the word at (server, rkey, va); *value = shadow if KNOWN;
 * *inflight = modelled un-ACKed writes + unmodelled ops in flight. */
enum ser_word_state ser_word_get(const struct ser *s, uint32_t server_ip4,
				 uint32_t rkey, uint64_t va, uint64_t *value,
				 uint32_t *inflight);
uint32_t ser_conn_count(const struct ser *s);

/*
 * Upgrade drain (swordd's /sword/drain, README "Upgrade drain"): while on,
 * no atomic is decided here any more, new ones pass to the server as real
 * atomics as soon as S2 allows (a word whose rewritten write is un-ACKed
 * keeps gating other connections until that ACK), and no failure is
 * answered locally.  Retransmissions of decisions made before are still
 * replayed from their stubs (passing them real would run them twice).
 * Not thread-safe: call it on the thread that owns s.
 */
void ser_set_drain(struct ser *s, bool on);
bool ser_draining(const struct ser *s);
/* Rewritten operations still unanswered: stubs of rewritten atomics not yet
 * answered to their client (*stubs) + modelled writes not yet ACKed
 * (*pending); either pointer may be NULL.  Returns the sum; 0 = drained. */
uint64_t ser_unanswered(const struct ser *s, uint64_t *stubs, uint64_t *pending);
/*
 * Live region table (swordd's SIGHUP / swordctl reload, lib/serializer
 * README "Live regions").  Regions are named by their value (server, rkey,
 * base, len).  Not thread-safe: call them on the thread that owns s,
 * between frames; ser_region_owed is read-only (any thread, as
 * ser_unanswered).
 *
 * add: the region's words come from the shadow's free end (a removed
 * region's words are never handed out again: a stub of a connection that
 * outlives the region may still name them).  0, -EEXIST (already there),
 * -EINVAL (misaligned, overlaps a region of the same memory), -ENOSPC (no
 * region slot or too few words left: ser_room says how many).
 * retire: nothing on the region is decided any more; new ops pass real
 * (each word as after a refused rewrite: never trusted again), while a
 * word whose rewritten write is un-ACKed keeps gating (S2).
 * owed: what is still owed on a retired region: rewritten atomics of live
 * connections not answered to their client, modelled writes un-ACKed.
 * remove: the region leaves the table; its frames are no business of the
 * serializer any more.  0 or -ENOENT.
 */
int ser_region_add(struct ser *s, const struct ser_region *r);
int ser_region_retire(struct ser *s, const struct ser_region *r);
uint64_t ser_region_owed(const struct ser *s, const struct ser_region *r);
int ser_region_remove(struct ser *s, const struct ser_region *r);
bool ser_region_present(const struct ser *s, const struct ser_region *r);
/* Room left for ser_region_add: region slots and words. */
void ser_room(const struct ser *s, uint32_t *regions, uint32_t *words);

/* The connection table the serializer works on (lib/rc). */
struct rc_table *ser_rc(struct ser *s);

#endif /* SWORD_SERIALIZER_H */
