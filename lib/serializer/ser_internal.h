/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_internal.h — the serializer's state: words, connections, stubs.
 * Shared by ser_word.c (word state machine) and ser_conn.c (packets).
 */
#ifndef SWORD_SER_INTERNAL_H
#define SWORD_SER_INTERNAL_H

#include <stdint.h>

#include "serializer.h"

#define SER_NO_WORD UINT32_MAX
#define SER_NO_CONN UINT32_MAX
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

struct ser_word {
	uint64_t shadow;      /* value once every forwarded modelled write landed */
	uint64_t committed;   /* value before the un-ACKed modelled writes */
	uint64_t pend_since;  /* now of the first un-ACKed modelled write */
	uint64_t gate_since;  /* now of the first refusal */
	uint64_t start;       /* busy period: value it started from (WF_START_KNOWN) */
	uint64_t self_orig;   /* busy period: orig of self-loop ops */
	uint64_t deg_v[SER_DEG_SLOTS];
	int16_t deg_d[SER_DEG_SLOTS];
	uint32_t pend_conn;   /* connection owning the modelled writes */
	uint32_t faa_conn;    /* connection of the last FAA */
	uint16_t shared_left; /* ops until WF_SHARED decays */
	uint16_t pend_cnt;    /* modelled value-changing writes un-ACKed */
	uint16_t busy;        /* unmodelled ops in flight (real atomics, odd writes) */
	uint16_t pend_gen;    /* bumped when pending writes are abandoned */
	uint16_t refusals;
	uint8_t state;
	uint8_t flags;
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

struct ser_stub {
	uint32_t psn;
	uint32_t msg_seq;
	uint32_t word;
	uint32_t msn_sent;
	uint64_t orig;     /* REWRITTEN: value the ATOMIC ACK carries */
	uint64_t wval;     /* value the modelled write leaves in the word */
	struct ser_op op;  /* REAL: the op, to learn from its orig */
	uint16_t nwords;
	uint16_t pend_gen;
	uint16_t flags;
	uint8_t kind;
	uint8_t opcode;
	uint8_t npsn;
};

struct ser_conn {
	uint32_t cl_ip, srv_ip, srv_qpn, cl_qpn;
	uint32_t next_psn;    /* next in-order request PSN */
	uint32_t una;         /* lowest PSN no response has covered yet */
	uint32_t walk_from;   /* lowest PSN that may still need an answer */
	uint32_t msgs;        /* messages seen (relative MSN) */
	uint32_t msn_off;     /* server MSN - msgs */
	uint32_t untracked_until; /* no rewrites until una passes this */
	/* open multi-packet write overlapping managed words */
	uint32_t open_word;
	uint16_t open_nwords;
	uint8_t paired;
	uint8_t msn_known;
	uint8_t untracked;
	uint8_t in_write;     /* inside a multi-packet WRITE/SEND message */
	uint8_t nodecide;     /* PSN sequence re-synchronized: decide nothing ... */
	uint8_t last_was_read;
	uint32_t nodecide_until; /* ... until the server has answered up to here */
	uint32_t read_maxend; /* last READ: first PSN after its longest possible span */
	struct ser_stub *ring;
};

struct ser_region_rt {
	struct ser_region r;
	uint32_t first_word;
};

struct ser {
	struct ser_params prm;
	struct ser_region_rt *regions;
	uint32_t n_regions;
	uint32_t *servers;    /* distinct server IPs */
	uint32_t n_servers;
	struct ser_word *words;
	uint32_t n_words;
	struct ser_conn *conns;
	uint32_t n_conns;
	struct ser_stub *stubs;
	uint32_t ring_mask;
	/* open addressing: slot → conn index + 1 (0 = free) */
	uint32_t *req_map;
	uint32_t *resp_map;
	uint32_t map_mask;
	uint64_t epoch;       /* now of the first packet since create/reset */
	bool epoch_set;
	struct ser_counters c;
};

/* ser_word.c */
void ser_word_reset(struct ser_word *w);
uint64_t ser_op_apply(const struct ser_op *op, uint64_t old);
bool ser_op_changes(const struct ser_op *op, uint64_t old);

enum ser_decision {
	SD_PASS_REAL,   /* forward the atomic unchanged (unmodelled) */
	SD_WRITE,       /* forward WRITE(wval) */
	SD_ZERO,        /* forward a zero-length WRITE */
	SD_DROP,
};

/* Decide an atomic on word w from connection ci.  Fills *orig, *wval and
 * sets up pending/busy accounting on the word (the stub records it). */
enum ser_decision ser_word_decide(struct ser *s, uint32_t wi, uint32_t ci,
				  const struct ser_op *op, uint64_t now,
				  bool may_rewrite, uint64_t *orig, uint64_t *wval,
				  bool *pending);
/* A plain write of one whole word from connection ci: true if modelled
 * (pending taken), false if unmodelled (busy taken). */
bool ser_word_write(struct ser *s, uint32_t wi, uint32_t ci, uint64_t v,
		    uint64_t now, bool *pending);
void ser_word_busy_take(struct ser *s, uint32_t wi);
/* Completion of an unmodelled op: executed (orig valid) or not. */
void ser_word_real_done(struct ser *s, uint32_t wi, const struct ser_op *op,
			bool have_orig, uint64_t orig);
void ser_word_busy_done(struct ser *s, uint32_t wi, bool dirty);
/* A modelled write was ACKed (executed) / will never be known. */
void ser_word_pending_done(struct ser *s, uint32_t wi, uint16_t gen,
			   uint64_t wval, bool executed);
void ser_word_mark_dirty(struct ser *s, uint32_t wi);
void ser_word_norewrite(struct ser *s, uint32_t wi);
/* An op on the word that no stub can track (connection table full): true
 * if it may pass; the word is then never decided on again. */
bool ser_word_untracked(struct ser *s, uint32_t wi, const struct ser_op *op);

#endif /* SWORD_SER_INTERNAL_H */
