/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_internal.h — the serializer's state: words, per-connection state,
 * stubs.  Shared by ser_word.c (word state machine), ser_core.c (life
 * cycle, connection state), ser_req.c (request path), ser_resp.c
 * (response path).  Connections themselves (identity, incarnation, PSN
 * window, age) live in lib/rc.
 */
#ifndef SWORD_SER_INTERNAL_H
#define SWORD_SER_INTERNAL_H

#include <stdint.h>

#include "rc.h"
#include "serializer.h"

#define SER_NO_WORD UINT32_MAX
/* Owners of word effects are connection incarnations (lib/rc): unique,
 * never reused, so what an ended life still holds is foreign to the next. */
#define SER_NO_OWNER 0u
#define SER_MIXED UINT32_MAX  /* several owners / domains (lib/rc never hands it out) */
#define SER_DEG_SLOTS 4

/* What an operation does to a word (decoded once from the request). */
enum ser_op_kind {
	SER_OP_NONE = 0,
	SER_OP_CAS,
	SER_OP_FAA,
	SER_OP_MCAS,   /* masked CAS 0x18 */
	SER_OP_WRITE,  /* plain 8-byte write of arg[0] */
};

struct ser_op {
	uint8_t kind;
	uint64_t arg[4]; /* CAS: swap, compare; FAA: add; MCAS: swap, compare, swap_mask, compare_mask; WRITE: value */
};

enum ser_word_st { W_UNKNOWN = 0, W_KNOWN = 1 };

#define WF_DIRTY      0x01 /* an unmodelled mix happened: forget at quiescence */
#define WF_NOREWRITE  0x02 /* the server refused a rewritten write: never again */
#define WF_START_KNOWN 0x04 /* current busy period started from a known value */
#define WF_SELF_MIXED 0x08 /* self-loop origs in this busy period differ */
#define WF_ANY_EDGE   0x10 /* busy period has seen a value-changing real op */
#define WF_ANY_ORIG   0x20 /* busy period has seen at least one orig */
#define WF_SHARED     0x80 /* unfailable ops from several connections: no local writes */
#define WF_FOLDED     0x100 /* known from a fold: busy ops are all before in fold_dom */
#define WF_FOLD_SEALED 0x200 /* folded, then decided on: no real op joins the fold */
#define WF_READ_SINCE 0x400 /* READ sent while a modelled write was un-ACKed (ser_word_read) */
#define WF_PEND_ORPHAN 0x800 /* an un-ACKed modelled write's connection ended: it may never land */

struct ser_word {
	uint64_t shadow;      /* value once every forwarded modelled write landed */
	uint64_t committed;   /* value before the un-ACKed modelled writes */
	uint64_t pend_since;  /* now of the first un-ACKed modelled write */
	uint64_t gate_since;  /* now of the first refusal */
	uint64_t start;       /* busy period: value it started from (WF_START_KNOWN) */
	uint64_t self_orig;   /* busy period: orig of self-loop ops */
	uint64_t deg_v[SER_DEG_SLOTS];
	uint64_t hold_until;  /* no decision before (an orphaned op may run) */
	int16_t deg_d[SER_DEG_SLOTS];
	/* the connection and the ordering domain of all un-ACKed modelled
	 * writes (SER_MIXED: several), of the last FAA */
	uint32_t pend_owner, pend_dom;
	uint32_t faa_owner, faa_dom;
	/* who changed the value: chg_seq counts changes, chg_owner made the
	 * latest, streak_seq is where chg_owner's run of changes began
	 * (SER_NO_OWNER: the server, i.e. unmodelled ops and relearning) */
	uint32_t chg_seq, chg_owner, streak_seq;
	uint32_t other_seq;   /* chg_seq of the last change decided for an owner */
	uint16_t shared_left; /* ops until WF_SHARED decays */
	uint16_t pend_cnt;    /* modelled value-changing writes un-ACKed */
	uint16_t busy;        /* unmodelled ops in flight (real atomics, odd writes) */
	uint16_t pend_gen;    /* bumped when pending writes are abandoned */
	uint16_t refusals;
	/* FAA folding (ser_word.c, S4 on a lane): the busy period's real FAAs
	 * all in one ordering domain, the sum of their adds, the value before
	 * the period once an answer told it */
	uint16_t fold_gen;
	uint32_t fold_dom;
	uint64_t fold_sum, fold_base;
	/* in-flight unmodelled ops of one ordering domain (tag_dom) */
	uint32_t tag_dom;
	uint16_t tag_n;
	uint8_t last_take;
	uint8_t state;
	uint16_t flags;
};

/* Stub kinds */
enum ser_stub_kind {
	ST_EMPTY = 0,
	ST_PLAIN,      /* not touching a managed word (or a READ/SEND) */
	ST_CONT,       /* continuation PSN of a multi-PSN READ */
	ST_REWRITTEN,  /* atomic decided here, forwarded as WRITE */
	ST_REAL,       /* atomic on a managed word forwarded as is */
	ST_WRITE,      /* plain write to managed word(s) */
};

#define SF_MSG_END   0x01 /* ends a message (server MSN counts it) */
#define SF_MSN_VALID 0x02 /* msg_seq meaningful */
#define SF_ANSWERED  0x04 /* client got (or was sent) its answer */
#define SF_PENDING   0x08 /* holds a word's pend_cnt (modelled write) */
#define SF_BUSY      0x10 /* holds busy on words [word, word+nwords) */
#define SF_ZERO_LEN  0x20 /* rewritten as zero-length WRITE */
#define SF_SENT_MSN  0x40 /* msn_sent valid */
#define SF_ACKREQ    0x80 /* AckReq was added by us */
#define SF_NOLEARN   0x100 /* REAL whose answer may be a replay of an older execution */
#define SF_FOLD      0x800 /* REAL FAA counted in its word's fold */
#define SF_DOMTAG    0x1000 /* REAL counted in its word's tag_n */
#define SF_PROBE     0x2000 /* REWRITTEN replayed as the client's own atomic
                             * (ser_req.c replay_probe): the server's ATOMIC
                             * ACK or the recorded answer, whichever comes */
#define SF_PIPED     0x4000 /* REWRITTEN followed by a request of its client
                             * on its word before its answer left: the
                             * client pipelines over it (ser_req.c, with
                             * remapping on only) */
#define SF_MINE_AFTER 0x8000 /* REWRITTEN whose client sent a request on its
                              * word after its answer had left */
#define SF_UNTRACKED 0x200 /* holds its words by time, not by this stub: its
                            * connection was unpaired (answers unseen) */
#define SF_UNSURE    0x400 /* a re-decided replay: the server may take it for
                            * a duplicate, so its ACK proves nothing */

struct ser_stub {
	uint32_t psn;
	uint32_t msg_seq;
	uint32_t word;
	uint32_t msn_sent;
	uint64_t orig;     /* REWRITTEN: value the ATOMIC ACK carries */
	uint64_t wval;     /* value the modelled write leaves in the word */
	struct ser_op op;  /* atomics, 8-byte writes: the op (content, learning) */
	/* the request's content: a PSN seen again with other content is a
	 * new incarnation, never a retransmission */
	uint64_t va;
	uint32_t rkey, dlen;
	uint32_t chg_seq;  /* the word's chg_seq after this request's decision */
	uint32_t nwords;
	uint16_t pend_gen;
	uint16_t flags;
	uint8_t kind;
	uint8_t opcode;
	uint8_t npsn;
	uint8_t on_lane;   /* decided in a remapping lane's domain */
	/* a real FAA in a fold (SF_FOLD): the period and its fold_sum with it */
	uint16_t fold_gen;
	uint64_t fold_after;
	/* SF_PROBE, remapping on (no_poke): the newest PSN the connection
	 * had sent when it was probed (an ACK beyond it may be the new
	 * QP's, ser_resp.c) */
	uint32_t probe_hi;
	uint8_t probe_step; /* SF_PROBE, remapping off: enum ser_probe_step */
};

/* A probe of a copy of a decision, remapping off (ser_req.c replay_probe):
 * first the server is asked whether its QP has the copy's PSN, and only
 * once it has said no is the client's atomic sent. */
enum ser_probe_step {
	PROBE_ASK = 0,  /* the duplicate WRITE alone: a plain ACK covering the
			 * PSN can only be a QP that ran the recorded WRITE */
	PROBE_LACKS,    /* the server's QP acknowledged only PSNs before it:
			 * the client's next copy sends its atomic */
	PROBE_SENT,     /* the atomic went to the server: only its ATOMIC ACK
			 * answers (a plain ACK may follow a lost one) */
};

/* The serializer's state of one connection (lib/rc slot), valid while
 * inc equals the slot's incarnation.  The PSN window (next_psn, una) and
 * the pairing are the connection's own (struct rc_conn). */
struct ser_conn {
	uint32_t inc;         /* rc incarnation this state is of; 0 = none */
	uint32_t walk_from;   /* lowest PSN that may still need an answer */
	uint32_t msgs;        /* messages seen (relative MSN) */
	uint32_t msn_off;     /* server MSN - msgs */
	/* an offset a READ response or ATOMIC ACK proposed (ser_resp.c
	 * resp_learn_msn), and the message it came from */
	uint32_t msn_cand;
	uint32_t msn_cand_seq;
	/* open multi-packet write overlapping managed words */
	uint32_t open_word;
	uint32_t open_nwords;
	uint8_t msn_known;
	uint8_t msn_cand_set;
	uint8_t nodecide;     /* PSN sequence re-synchronized: decide nothing ... */
	uint8_t last_was_read;
	uint8_t untracked;    /* unpaired and ambiguous: its answers may never
	                       * be seen, so its ops hold words by time (S7) */
	uint32_t nodecide_until; /* ... until the server has answered up to here */
	/* the client resent a request the server had answered (ser_req.c
	 * copy_of_answered): decide nothing until an answer that came after
	 * it covers copy_hold_psn */
	uint8_t copy_hold;
	uint32_t copy_hold_psn;
	uint32_t read_psn;    /* last READ's PSN */
	uint32_t read_maxend; /* last READ: first PSN after its longest possible span */
	/* ser_ask.c: a dropped request the client is to be asked to resend */
	uint32_t ask_psn;     /* from where */
	uint32_t cl_msn;      /* the MSN of the newest response the client got */
	uint32_t cl_msn_psn;  /* the PSN it came at (a NAK's: the one before) */
	uint8_t cl_msn_set;
	uint8_t ask;          /* an ask is due once una reaches ask_psn */
	/* una is known to hold for this life: a response of it covered the
	 * PSNs before (or the life began there: CM, life_began_at_first).
	 * An ask acknowledges every PSN before its own, so none goes before
	 * (ser_ask.c) */
	uint8_t una_known;
	uint8_t ask_n;        /* asks at ask_psn so far (the timer grows) */
	/* a request before the first PSN swordd saw of this connection (met
	 * mid-life) was dropped: nothing says its server got it, and an ask
	 * at a later PSN would acknowledge it to the client (an RNR NAK
	 * completes what lies before its PSN).  No ask until a response of
	 * the server at or past ask_held_psn shows it ran. */
	uint8_t ask_held;
	uint32_t ask_held_psn;
	uint8_t poked;        /* unpaired: asked through its server, whose
	                       * NAK may come after the client resent all */
	uint32_t poke_psn;    /* ... the PSN it was asked from */
	/* replay_probe's duplicate WRITE: a new QP that ran the probed
	 * atomic ACKs it at that atomic's PSN, maybe after the client's next
	 * request began a new life here (kept across new lives of the QPN,
	 * ser_conn_state; ended by that ACK, the next probe, or any other
	 * end of the connection, conn_end.  If the ACK is lost it lingers,
	 * harmless: only a plain ACK at exactly that PSN with no stub of
	 * its own is dropped) */
	uint32_t dup_ack_psn;
	uint8_t dup_ack_due;
	uint8_t last_dec_set;
	/* the client has resent its connection's first request and every
	 * request since is a copy (a go-back-N from the start, or a new life
	 * of the QPs out of band repeating the old one's requests): copies of
	 * decisions the server has not acknowledged are probed (ser_req.c
	 * probe_copy).  Ended by the next new request. */
	uint8_t copies_from_first;
	/* the newest decided atomic (ser_req.c note_piped, remapping on) */
	uint32_t last_dec_psn;
	uint32_t last_dec_word;
	struct ser_stub *ring;
};

/* What a process killed in the middle of a frame may have left half
 * changed (ser_state.c adopts the rest): the connections between the
 * frame's two hosts and the words it named. */
enum ser_torn_what { TORN_NONE = 0, TORN_REQUEST, TORN_RESPONSE, TORN_REGIONS };

/* A connection a torn restart gave up (ser_state.c adopt): the PSNs its
 * client had sent.  Its client goes on, resending requests the server may
 * have run already, and swordd meets it as a new connection: nothing of
 * it is decided until the server has answered past them (ser_req.c).
 * Ended when the connection is met again, or overwritten by a later one
 * (the oldest goes). */
#define SER_GIVEN_UP_MAX 64

struct ser_given_up {
	uint32_t cl_ip, srv_ip, srv_qpn;
	uint32_t next_psn;   /* the first PSN the server cannot have seen */
	uint8_t valid;
};

struct ser_torn {
	uint8_t what;          /* enum ser_torn_what */
	uint32_t ip_a, ip_b;   /* the frame's source and destination */
	uint32_t word, nwords; /* a request's words, once classified */
	/* the frame's connection (slot, incarnation) once it is looked up
	 * (UINT32_MAX before): from there on the frame changes that
	 * connection, its words and the words above, nothing else */
	uint32_t conn, inc;
};

struct ser_region_rt {
	struct ser_region r;
	uint32_t first_word;
};

struct ser {
	struct ser_params prm;
	struct ser_region_rt *regions;
	uint32_t n_regions, max_regions;
	uint32_t *servers;    /* distinct server IPs */
	uint32_t n_servers;
	struct ser_word *words;
	uint32_t n_words;     /* handed out to regions (removed ones' included) */
	uint32_t words_cap;
	struct rc_table *rc;  /* the connections */
	bool own_rc;
	struct ser_conn *conns;   /* by rc slot */
	struct ser_stub *stubs;
	uint32_t ring_mask;
	uint64_t orphan_tsc;  /* how long an orphaned op may still run */
	uint8_t pair_opcode;  /* the response being paired (ser_resp.c) */
	uint64_t epoch;       /* now of the first packet since create/reset */
	bool epoch_set;
	uint64_t quiet_until; /* ser_start: no managed op passes before this */
	/* The frame being handled has a good ICRC, verified by the caller
	 * (swordd's worker checks a burst's ICRCs together): set by ser_fn
	 * around one ser_on_request/ser_on_response, false otherwise. */
	bool icrc_known_good;
	/* ser_ask.c: the frame to send after the one being handled */
	struct ser_emit after;
	uint8_t n_after;
	bool drop_unasked;    /* the request is dropped for its place, not asked back */
	bool drain;           /* upgrade drain (ser_set_drain): decide nothing new */
	struct ser_counters c;
	/* In a state segment (ser_state.c): the frame being handled, for the
	 * next process should this one die in the middle of it.  Set before
	 * anything changes, cleared after. */
	bool in_state;
	struct ser_torn torn;
	struct ser_adopt_info adopted;   /* what ser_create adopted */
	struct ser_given_up given_up[SER_GIVEN_UP_MAX];
	uint32_t given_up_next;          /* the slot the next one takes */
};

/* May swordd send this connection's server QP a frame of its own in the
 * connection's PSN space (an ask poke, a probe's duplicate WRITE)?  Not
 * where remapping may place the connection on a lane (ser_params.no_poke,
 * poke_out_of_band). */
static inline bool
ser_may_poke(const struct ser *s, const struct rc_conn *c)
{
	return !s->prm.no_poke || (s->prm.poke_out_of_band && !c->by_cm);
}

static inline void
ser_torn_begin(struct ser *s, uint8_t what, uint32_t ip_a, uint32_t ip_b)
{
	s->torn.ip_a = ip_a;
	s->torn.ip_b = ip_b;
	s->torn.word = UINT32_MAX;
	s->torn.nwords = 0;
	s->torn.conn = UINT32_MAX;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->torn.what = what;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The frame's connection is known, and nothing after this changes another
 * one: a frame torn from here on costs this connection alone, not every
 * connection between its two hosts (ser_state.c). */
static inline void
ser_torn_conn(struct ser *s, const struct rc_conn *c)
{
	if (!s->in_state)
		return;
	s->torn.inc = c->incarnation;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->torn.conn = rc_index(s->rc, c);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void
ser_torn_end(struct ser *s)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->torn.what = TORN_NONE;
}

/* The frame's ICRC is what its sender sent (I7): the caller's verdict if
 * it has one, else checked here. */
static inline bool
ser_icrc_good(const struct ser *s, uint8_t *f, const struct roce_pkt *p)
{
	return s->icrc_known_good || roce_icrc_verify(f, p);
}

/* ser_core.c: creation, shared with ser_state.c */
int ser_shape_of(const struct ser_params *prm, struct ser_params *p, uint32_t *max_regions,
		 uint32_t *words_cap);
int ser_regions_init(struct ser *s, const struct ser_params *prm);
struct rc_params ser_rc_params(const struct ser_params *p);
void ser_finish_create(struct ser *s);
/* ser_reset; tables_zero: the stubs and connection states are known to be
 * all zero bytes (a fresh state block), so they are not cleared again. */
void ser_reset_known(struct ser *s, bool tables_zero);
void ser_conn_end(void *ctx, struct rc_conn *c, enum rc_end_why why, uint64_t now);
/* ser_state.c */
struct ser *ser_create_in_state(const struct ser_params *prm);

/* ser_core.c */
const struct ser_region_rt *ser_region_find(const struct ser *s, uint32_t server,
					    uint32_t rkey, uint64_t va, uint64_t len);
/* The serializer's state of c, (re)initialized for a new incarnation. */
struct ser_conn *ser_conn_state(struct ser *s, const struct rc_conn *c);
/* End c's life now (content mismatch, PSN jump): what its stubs hold is
 * orphaned; a new incarnation starts at psn. */
struct ser_conn *ser_conn_new_life(struct ser *s, struct rc_conn *c, uint32_t psn,
				   uint64_t now);
void ser_stub_orphan(struct ser *s, struct ser_stub *st, uint64_t now);
/* The connection's open multi-packet write will never see its LAST (its
 * life ended, or a new WRITE message began): give its words back as
 * orphans (S7). */
void ser_close_open_write(struct ser *s, struct ser_conn *sc, uint64_t now);
/* Responses between these hosts cannot be paired: the unpaired
 * connections' outstanding ops will not be seen answered. */
void ser_untrack_unpaired(struct ser *s, uint32_t srv_ip, uint32_t cl_ip,
			  uint64_t now);
bool ser_handle_cm(struct ser *s, const uint8_t *f, const struct roce_pkt *p,
		   uint64_t now);

static inline struct ser_stub *
ser_slot(struct ser *s, struct ser_conn *sc, uint32_t psn)
{
	return &sc->ring[psn & s->ring_mask];
}

/* The live stub for psn, or NULL. */
static inline struct ser_stub *
ser_stub_at(struct ser *s, struct ser_conn *sc, uint32_t psn)
{
	struct ser_stub *st = ser_slot(s, sc, psn);

	return st->kind != ST_EMPTY && st->psn == psn ? st : NULL;
}

/* ser_ask.c */
/* A zero-length WRITE from c's client at psn, to leave after request f
 * (s->after). */
bool ser_after_zero_write(struct ser *s, const struct rc_conn *c, const uint8_t *f,
			  const struct roce_pkt *p, uint32_t psn);
bool ser_poke_nak_beyond(struct ser *s, const uint8_t *f, const struct roce_pkt *p);
bool ser_poke_nak_is_beyond(const struct rc_conn *c, const struct ser_conn *sc, uint32_t psn);
/* Request f of c was dropped: ask its client to resend it (now, into
 * s->after, if every earlier PSN is answered; else once they are). */
void ser_ask_arm(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
		 const uint8_t *f, const struct roce_pkt *p);
/* The same, but never now: behind the server's next response (s->after
 * is taken by the request's own follower). */
void ser_ask_arm_later(struct ser_conn *sc, const struct rc_conn *c, uint32_t psn);
/* Response f of c leaves for the client: note its MSN, and ask now if the
 * last answer before a dropped request just went. */
void ser_ask_after_response(struct ser *s, const struct rc_conn *c,
			    struct ser_conn *sc, const uint8_t *f,
			    const struct roce_pkt *p);
/* Only the ask, if due, behind response f that does not reach the client
 * (its MSN is not the client's). */
void ser_ask_due(struct ser *s, const struct rc_conn *c, struct ser_conn *sc,
		 const uint8_t *f, const struct roce_pkt *p);

/* ser_word.c */
void ser_word_reset(struct ser_word *w);
void ser_word_forget_moved(struct ser_word *w);
uint64_t ser_op_apply(const struct ser_op *op, uint64_t old);
bool ser_op_changes(const struct ser_op *op, uint64_t old);

enum ser_decision {
	SD_PASS_REAL,   /* forward the atomic unchanged (unmodelled) */
	SD_WRITE,       /* forward WRITE(wval) */
	SD_ZERO,        /* forward a zero-length WRITE */
	SD_DROP,
};

/* Who asks: the connection incarnation (owner of the effect, S8) and the
 * ordering domain its request is executed in (the owner itself, or a
 * remapping lane: ser_word.c, "Ordering domains"). */
struct ser_who {
	uint32_t owner, dom;
	uint32_t adom;   /* the domain were it forwarded as a real atomic */
};

/* Decide an atomic on word w for who.  Fills *orig, *wval and
 * sets up pending/busy accounting on the word (the stub records it). */
enum ser_decision ser_word_decide(struct ser *s, uint32_t wi, const struct ser_who *who,
				  const struct ser_op *op, uint64_t now,
				  bool may_rewrite, uint64_t *orig, uint64_t *wval,
				  bool *pending);
/* A plain write of one whole word from who: true if modelled
 * (pending taken), false if unmodelled (busy taken). */
bool ser_word_write(struct ser *s, uint32_t wi, const struct ser_who *who, uint64_t v,
		    uint64_t now, bool *pending);
void ser_word_busy_take(struct ser *s, uint32_t wi);
/* An op whose outcome swordd will never see (its connection ended) may
 * still run: give its busy back but decide nothing on the word for
 * orphan_tsc. */
void ser_word_orphan_busy(struct ser *s, uint32_t wi, uint64_t now);
/* A blind write is pending on the word that is not ordered before who's
 * request: a write by who could be overwritten by it (S2).  Pending
 * writes older than pending_expire are given up first: a gate must not
 * wait for good on a write whose QP died. */
bool ser_word_foreign_pending(struct ser *s, uint32_t wi, const struct ser_who *who,
			      uint64_t now);
/* Could who decide on the word now (known, nothing in flight that is not
 * ordered before it)? */
bool ser_word_settled_for(const struct ser *s, uint32_t wi, const struct ser_who *who,
			  uint64_t now);
/* Would ser_word_decide() decide op for who here (not pass it real)? */
bool ser_word_decidable(const struct ser *s, uint32_t wi, const struct ser_who *who,
			const struct ser_op *op, uint64_t now);
/* Did anyone but ci change the word after the change recorded as seq? */
bool ser_word_changed_by_other(const struct ser *s, uint32_t wi, uint32_t ci,
			       uint32_t seq);
/* Right after ser_word_decide() said SD_PASS_REAL: the stub flags of the
 * real op it took (SF_DOMTAG, SF_FOLD with *gen and *after: S4 on a
 * lane).  who.adom = 0 never takes part (not known to be in order). */
uint16_t ser_word_took(const struct ser *s, uint32_t wi, uint16_t *gen, uint64_t *after);
/* Before a real op's busy is given back (answered, refused, orphaned):
 * its part in the word's domain count and fold. */
void ser_word_untag(struct ser *s, struct ser_stub *st, bool executed);
/* The ATOMIC ACK of an SF_FOLD stub: learn the word from it, or check it. */
void ser_word_fold_answer(struct ser *s, uint32_t wi, uint16_t gen, uint64_t after,
			  const struct ser_op *op, uint64_t orig);
/* Completion of an unmodelled op: executed (orig valid) or not. */
void ser_word_real_done(struct ser *s, uint32_t wi, const struct ser_op *op,
			bool have_orig, uint64_t orig);
void ser_word_busy_done(struct ser *s, uint32_t wi, bool dirty);
/* A modelled write was ACKed (executed) / will never be known. */
void ser_word_pending_done(struct ser *s, uint32_t wi, uint16_t gen,
			   uint64_t wval, bool executed, uint64_t now);
void ser_word_mark_dirty(struct ser *s, uint32_t wi);
/* A word a killed process may have left half changed: nothing is decided
 * on it until what it holds has run out and it is learned again. */
void ser_word_torn(struct ser *s, uint32_t wi, uint64_t now);
void ser_word_read(struct ser *s, uint32_t wi, uint32_t n);
void ser_word_pending_orphan(struct ser *s, uint32_t wi);
void ser_word_norewrite(struct ser *s, uint32_t wi);
/* A replay of an answered real op or unmodelled write (ser_req.c): may
 * it pass (S2), and if so, busy on the word until the server answers it,
 * the word then relearned (it may have run as a new life's request).
 * owner: the copy's connection, whose own pending writes never gate it
 * (SER_NO_OWNER: none known). */
bool ser_word_replay_allowed(struct ser *s, uint32_t wi, const struct ser_op *op,
			     uint32_t owner, uint64_t now);
void ser_word_replay_take(struct ser *s, uint32_t wi);
/* An op on the word that no stub can track (connection table full): true
 * if it may pass; the word is then not decided on for orphan_tsc.  owner:
 * the op's connection (its own pending writes never gate it), or
 * SER_NO_OWNER. */
bool ser_word_untracked(struct ser *s, uint32_t wi, const struct ser_op *op,
			uint32_t owner, uint64_t now);
/* The same hold for an op already let through by its own gate (a write
 * no other connection's pending blind write gates, write_gated). */
void ser_word_hold_unseen(struct ser *s, uint32_t wi, uint64_t now);

#endif /* SWORD_SER_INTERNAL_H */
