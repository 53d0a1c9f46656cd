/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_model.h — in-process RDMA RC endpoints for closed-loop tests: a
 * requester (client) model that checks every response it gets, and a
 * responder (memory server) model that follows IBTA C9: expected PSN, one
 * PSN-sequence NAK per gap, duplicate WRITE re-ACKed without re-execution
 * (ACKing its latest PSN, as rxe does), an atomic replay cache, optional ACK
 * coalescing, real memory.
 *
 * Why it exists: swordd must be invisible to unmodified RNICs.  These
 * models are strict versions of them, so a test can drive client →
 * swordd → server → swordd → client with loss, duplication and reordering
 * and see every deviation (I3, I4, I6).  No EAL, no sockets; a later suite
 * can put them behind real ports.
 */
#ifndef SWORD_RDMA_MODEL_H
#define SWORD_RDMA_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define RM_FRAME_MAX 1600
#define RM_WIN 64          /* client ops outstanding (PSN ring) */
#define RM_FC_MAX 128      /* a request frame a client keeps to resend */
#define RM_REPLAY 32       /* responder atomic replay cache entries */
#define RM_MAX_QPS 32
#define RM_ERRS 8

struct rm_frame {
	uint32_t len;
	uint8_t buf[RM_FRAME_MAX];
};

/* A FIFO of frames (fixed capacity; push fails when full). */
struct rm_queue {
	struct rm_frame *f;
	uint32_t cap, head, n;
};
int rm_queue_init(struct rm_queue *q, uint32_t cap);
void rm_queue_free(struct rm_queue *q);
bool rm_queue_push(struct rm_queue *q, const uint8_t *buf, uint32_t len);
/* Remove and copy out the i-th frame (0 = oldest). */
bool rm_queue_take(struct rm_queue *q, uint32_t i, struct rm_frame *out);

/* Addressing of one direction of a connection. */
struct rm_addr {
	uint8_t src_mac[6], dst_mac[6];
	uint32_t src_ip, dst_ip;  /* network order */
	uint32_t dest_qpn;
};

/* Build a RoCEv2 frame (IPv4, ICRC and checksum computed): the BTH is
 * followed by ext[0..ext_len) and payload[0..plen) (padded to 4). */
uint32_t rm_build(uint8_t *out, const struct rm_addr *a, uint8_t opcode,
		  uint32_t psn, bool ackreq, const uint8_t *ext, uint32_t ext_len,
		  const uint8_t *payload, uint32_t plen);

/* ---------------------------------------------------------------- */
/* responder */

struct rm_replay {
	uint32_t psn, msn;
	uint64_t orig;
	bool valid;
};

struct rm_resp_qp {
	uint32_t qpn;             /* our QPN (requests' dest QP) */
	struct rm_addr to_client; /* for responses */
	uint32_t epsn, msn;
	bool nak_sent;
	bool ack_due;             /* coalescing: an ACK owed for epsn-1 */
	bool err;                 /* in error after a fatal NAK (qp_errors) */
	struct rm_replay replay[RM_REPLAY];
};

struct rm_responder;
/* Called for every executed memory change (tests check lock protocols). */
typedef void (*rm_exec_cb)(void *ctx, struct rm_responder *r, uint32_t client_ip,
			   uint32_t qpn, uint8_t opcode, uint64_t va, uint64_t old,
			   uint64_t new_v);

struct rm_responder {
	uint32_t ip;
	uint8_t mac[6];
	uint64_t base;
	uint32_t rkey;
	uint32_t mem_len;
	uint8_t *mem;
	bool coalesce;            /* defer write ACKs to rm_responder_flush */
	uint32_t pmtu;
	struct rm_resp_qp qps[RM_MAX_QPS];
	uint32_t n_qps;
	/* [wr_deny_lo, wr_deny_hi): RDMA WRITE refused (remote access NAK),
	 * atomics allowed — an MR registered without REMOTE_WRITE */
	uint64_t wr_deny_lo, wr_deny_hi;
	/* every rnr_every-th fresh request is refused with an RNR NAK (not
	 * executed; the requester retries from its PSN), 0 = never.  An RNIC
	 * does that only to requests that need a receive buffer; here any
	 * request, to drive a NAK that acknowledges everything before it. */
	uint32_t rnr_every, rnr_count;
	/* a QP that sent a remote access or invalid request NAK goes to
	 * error and drops every later request (err_dropped), as an RNIC's */
	bool qp_errors;
	rm_exec_cb on_exec;
	void *ctx;
	uint32_t cur_psn;         /* PSN of the request being executed (on_exec) */
	/* statistics */
	uint64_t executed, duplicates, seq_naks, dropped, atomics, writes, rnr_naks;
	uint64_t wrong_peer;      /* RC request from another address than the QP's peer */
	uint64_t err_dropped;     /* request to a QP in error */
};

int rm_responder_init(struct rm_responder *r, uint32_t ip, uint64_t base,
		      uint32_t mem_len, uint32_t rkey, bool coalesce);
void rm_responder_free(struct rm_responder *r);
struct rm_resp_qp *rm_responder_add_qp(struct rm_responder *r, uint32_t qpn,
				       const struct rm_addr *to_client,
				       uint32_t start_psn);
/* The responder side of a reconnect: the QP is re-created with the same
 * QPN and expects start_psn again (MSN 0, empty replay cache). */
void rm_responder_reset_qp(struct rm_resp_qp *q, uint32_t start_psn);
void rm_responder_rx(struct rm_responder *r, const uint8_t *frame, uint32_t len,
		     struct rm_queue *out);
/* Send ACKs held back by coalescing.  Returns how many. */
uint32_t rm_responder_flush(struct rm_responder *r, struct rm_queue *out);
uint64_t rm_mem_get(const struct rm_responder *r, uint64_t va);
void rm_mem_set(struct rm_responder *r, uint64_t va, uint64_t v);

/* ---------------------------------------------------------------- */
/* requester */

enum rm_op_type { RM_CAS, RM_FAA, RM_MCAS, RM_WRITE, RM_READ };

struct rm_op {
	uint8_t type;
	bool ackreq;              /* writes: AckReq (atomics/reads always) */
	uint64_t va;
	uint64_t a[4];            /* CAS: swap, compare; FAA: add; MCAS: swap, compare, smask, cmask */
	uint32_t len;             /* WRITE/READ length (≤ 64) */
	uint8_t data[64];         /* WRITE payload */
	uint64_t user;            /* test's tag */
	/* filled by the model */
	uint32_t psn, msg_idx;
	uint8_t state;            /* 0 free, 1 outstanding, 2 done */
	uint64_t result;          /* atomic orig; READ: first 8 bytes (BE) */
	uint8_t rdata[64];
	uint32_t answers;         /* responses seen for it */
};

struct rm_client;
typedef void (*rm_done_cb)(void *ctx, struct rm_client *c, struct rm_op *op);

struct rm_client {
	int id;
	struct rm_addr to_server;
	uint32_t qpn;             /* our QPN (responses' dest QP) */
	uint32_t rkey;
	uint32_t next_psn, oldest; /* oldest outstanding PSN (== next if none) */
	uint32_t msgs;
	uint32_t last_msn;
	bool have_msn;
	struct rm_op ops[RM_WIN];
	/* each op's request frame as first built (ops[] slot), resent as is:
	 * rebuilding it (ICRC) on every go-back-N was a sixth of a closed
	 * fuzzer run (perf).  Valid while fc_len and fc_psn/fc_qpn match. */
	uint8_t fc_buf[RM_WIN][RM_FC_MAX];
	uint8_t fc_len[RM_WIN];
	uint32_t fc_psn[RM_WIN], fc_qpn[RM_WIN];
	rm_done_cb done;
	void *ctx;
	/* checks (I3, I6) */
	uint32_t errors;
	char err[RM_ERRS][160];
	uint64_t implicit_naks;   /* response covered an outstanding atomic/read */
	uint64_t retransmits, completed, dup_responses;
	/* responses at a PSN it never sent (at or beyond its next PSN): a
	 * requester drops them, but swordd must never send one (every frame
	 * reaching a client is in its PSN space) */
	uint64_t beyond_responses;
	uint32_t beyond_psn;
	uint64_t dup_changed;   /* a completed atomic's duplicate answer differed */
	bool strict;              /* implicit NAKs are errors (no loss below swordd) */
};

void rm_client_init(struct rm_client *c, int id, const struct rm_addr *to_server,
		    uint32_t qpn, uint32_t rkey, uint32_t start_psn);
/* Post one op (1 PSN).  Returns false if the window is full. */
bool rm_client_post(struct rm_client *c, const struct rm_op *op, struct rm_queue *out);
void rm_client_rx(struct rm_client *c, const uint8_t *frame, uint32_t len,
		  struct rm_queue *out);
/* Requester timeout: go-back-N from the oldest outstanding PSN. */
uint32_t rm_client_timeout(struct rm_client *c, struct rm_queue *out);
uint32_t rm_client_outstanding(const struct rm_client *c);
void rm_client_error(struct rm_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* SWORD_RDMA_MODEL_H */
