/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_script.h — what the stateful harnesses (fuzz_serializer,
 * fuzz_remap) share: the 8-byte script step and the well-formed RoCEv2
 * frame it builds, the bad-ICRC / corrupted-byte / UDP-checksum mangling,
 * the clock steps, and the oracles over lib/rc's connection table (a
 * snapshot to prove a bad frame changed nothing, the table's consistency).
 *
 * Why it exists: raw bytes almost never get past the ICRC check, so each
 * harness reads its input as a script.  One step is
 *
 *   b[0] operation (enum fz_op, modulo FZ_OP_NUM)
 *   b[1] connection (low nibble) and server (bits 4-5); bits 6-7 are the
 *        harness's own
 *   b[2] PSN: the connection's counter, a small delta from it, a jump of
 *        a ring, back to its initial PSN, or half the PSN space away
 *   b[3] address (word, misaligned, outside, other rkey) and sizes
 *   b[4] AckReq (bit 0), bad ICRC (1), corrupted byte (2), real UDP
 *        checksum (3), time passing (bits 4-7, fz_dts)
 *   b[5] values / the MSN step of a response; bits 3-7 of a response's
 *        are the harness's own
 *   b[6] more values, the place of the bad ICRC bit / corrupted byte
 *   b[7] NAK kind, CM variants, which earlier request to retransmit
 *
 * The harness decides the addressing and the PSN base of each step
 * (struct fz_target); fz_build turns the step into the frame, with
 * correct lengths, IPv4 checksum and ICRC (rm_build from tests/serializer).
 */
#ifndef SWORD_FUZZ_SCRIPT_H
#define SWORD_FUZZ_SCRIPT_H

#include <stdbool.h>
#include <stdint.h>

#include "fuzz_ref.h"
#include "rc_internal.h"
#include "rdma_model.h"

#define FZ_FRAME_MAX 1600
#define FZ_HIST 4              /* requests a connection can retransmit */
#define FZ_REGION_WORDS 16
#define FZ_PMTU 1024           /* the script's idea of READ spans */
#define FZ_RKEY 0x2521
#define FZ_STEP 8
#define FZ_NIP 3               /* client hosts */
#define FZ_NQP 3               /* QPs per client host and server */
#define FZ_NCONN (FZ_NIP * FZ_NQP)
#define FZ_NSRV 3              /* servers 0 and 1 have lock regions; 2 none */

enum fz_op {
	FZ_CAS, FZ_FAA, FZ_MCAS, FZ_WRITE, FZ_WRITE_FIRST, FZ_WRITE_MIDDLE,
	FZ_WRITE_LAST, FZ_READ, FZ_SEND, FZ_WRITE_IMM,
	FZ_ACK, FZ_NAK, FZ_ATOMIC_ACK, FZ_RR_FIRST, FZ_RR_MIDDLE, FZ_RR_LAST,
	FZ_RR_ONLY,
	FZ_CM_REQ, FZ_CM_REP, FZ_CM_DREQ, FZ_CM_DREP, FZ_CM_RTU,
	FZ_RETRANSMIT, FZ_RESEND_RESP, FZ_RESET,
	FZ_OP_NUM
};

struct fz_frame {
	uint32_t len;
	uint8_t buf[FZ_FRAME_MAX];
};

/* FUZZ_TRACE=1 in the environment: the harness prints every call (for
 * triage).  fuzz_script.c's LLVMFuzzerInitialize sets it (and the CRC
 * tables) for the harnesses that use these steps. */
extern bool fz_trace;
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* What one server QP has sent (the MSN it counts, its last response). */
struct fz_side {
	uint32_t msn;
	struct fz_frame last;
};

/* The script's view of one client connection. */
struct fz_conn {
	uint32_t next;             /* next request PSN */
	uint32_t initial;
	struct fz_frame hist[FZ_HIST];   /* last requests, as built (clean) */
	uint32_t hn;
	struct fz_side srv;        /* its own server QP's responses */
};

/* Where a step's frame goes, as the harness decides. */
struct fz_target {
	struct fz_conn *c;         /* requests, CM, retransmissions */
	struct fz_side *srv;       /* the server QP that answers */
	struct rm_addr up, down;   /* client→server, server→client */
	uint32_t cl_qpn, srv_qpn;  /* for the CM messages */
	uint32_t cm_cid, cm_sid;   /* CM communication IDs of the two sides */
	uint64_t va_base;          /* the lock region (words at 8-byte steps) */
	uint32_t ring;             /* the PSN jump unit */
	uint32_t resp_psn;         /* what a response's PSN is picked around */
};

extern const uint32_t fz_srv_ip[FZ_NSRV];     /* network order */
extern const uint64_t fz_region_base[2];        /* lock regions of servers 0, 1 */

/* Connection i (0..FZ_NCONN) of server srv: its client's IP (network
 * order), its client QPN (responses' destination), its server QPN
 * (requests' destination), and the addressing of one direction. */
uint32_t fz_cl_ip(int i);
uint32_t fz_cl_qpn(int i, int srv);
uint32_t fz_srv_qpn(int i, int srv);
struct rm_addr fz_addr(int i, int srv, bool to_server);

/* Step b's connection (*ci) and server (*si), from c[FZ_NCONN][FZ_NSRV],
 * answered by its own server QP, PSN jumps of ring. */
struct fz_target fz_target(const uint8_t *b, struct fz_conn (*c)[FZ_NSRV], uint32_t ring,
			   int *ci, int *si);

/*
 * Build step b into f.  *to_server says which side sends it.  Updates the
 * script's counters (t->c, t->srv).  Returns false if the step sends
 * nothing (FZ_RESET, nothing to retransmit).
 */
bool fz_build(const uint8_t *b, const struct fz_target *t, struct fz_frame *f,
	      bool *to_server);

/* The harness's part of running a script. */
struct fz_driver {
	void (*setup)(uint8_t h0, uint8_t h1);   /* the input's two header bytes */
	void (*teardown)(void);
	uint64_t *now;             /* its clock: fz_dt(b) passes before step b */
	/* FZ_RESET (b7 == 0xff: a restart); the previous call is no
	 * original for a retransmission after it */
	void (*reset)(uint8_t b7);
	bool (*build)(const uint8_t *b, struct fz_frame *f, int *ci, int *si,
		      bool *to_server);
	void (*call)(const uint8_t *in, uint32_t len, bool to_server, int ci, int si,
		     uint8_t b7, bool is_retransmit, uint64_t dt);
};

/* One input: setup from its two header bytes, then every step (FZ_STEP
 * bytes each): time passes, a reset, or the step's frame built, mangled
 * (fz_mangle) and handed to call; teardown.  Returns 0 (libFuzzer's). */
int fz_run(const struct fz_driver *d, const uint8_t *data, size_t size);

/* A PSN from b: base, base + a small delta, a ring away, back to initial,
 * half the PSN space away. */
uint32_t fz_pick_psn(uint32_t base, uint32_t initial, uint32_t ring, uint8_t b);

/* The step's UDP checksum, bad ICRC and corrupted byte, if it asks. */
void fz_mangle(const uint8_t *b, struct fz_frame *f);

/* How much time passes before step b. */
uint64_t fz_dt(const uint8_t *b);

/* Connection i of server s starts at a PSN of mode (0: Sherman's 3185 on
 * every QP, 1: just before the wrap, 2: scattered, 3: zero). */
void fz_conn_init(struct fz_conn *c, unsigned int mode, int i, int s, int nsrv);

/* lib/rc's connection table, byte for byte (I7, I8). */
struct fz_rc_snap {
	struct rc_table rt;
	struct rc_conn *conns;
	uint32_t *req_map, *resp_map;
};

FUZZ_ORACLE void fz_rc_snap_take(struct fz_rc_snap *n, const struct rc_table *t);
FUZZ_ORACLE void fz_rc_snap_same(const struct fz_rc_snap *n, const struct rc_table *t,
				 const uint8_t *f, uint32_t len);
FUZZ_ORACLE void fz_rc_snap_free(struct fz_rc_snap *n);

/* Bounded and consistent: live slots <= capacity, every live connection
 * found by its request key and, once paired, by its response key, no two
 * sharing a key, map sizes right. */
FUZZ_ORACLE void fz_check_table(struct rc_table *t);

/* A frame the code under test produced from in: valid RoCEv2 (I1, by
 * fuzz_ref), parses, and, if keep_udp, its UDP checksum absent as it came
 * or right.  *out_p gets its parse. */
FUZZ_ORACLE void fz_check_frame(const uint8_t *in, uint32_t in_len, const uint8_t *out,
				uint32_t out_len, bool keep_udp, struct roce_pkt *out_p);

/* I6: a request call kept as the original of a retransmission. */
struct fz_prev {
	bool valid;
	int conn, srv, v;          /* connection, server, verdict */
	uint32_t hn;               /* its connection's history count then */
	uint64_t t;                /* the script's time then */
	struct fz_frame in, out;
};

/*
 * After a request call of connection (ci, si), whose history count is now
 * hn, answered v with out[0..out_len) at script time now: if repeat (a
 * retransmission of the latest request, good ICRC, its own entry point),
 * no time passed since the original (a step that built no frame may still
 * have advanced the clock: after conn_idle a resend is a new life's) and
 * the original's answer is comparable (the caller says, from pv->v), the
 * same verdict and bytes are due; then the call becomes the original if
 * keep.
 */
FUZZ_ORACLE void fz_i6(struct fz_prev *pv, int ci, int si, uint32_t hn, uint64_t now,
		       bool repeat, bool comparable, bool keep, const uint8_t *in, uint32_t len,
		       int v, const uint8_t *out, uint32_t out_len);

/* Snapshot helper: a copy of n bytes, or abort. */
FUZZ_ORACLE void *fz_dup(const void *src, size_t n);

#endif /* SWORD_FUZZ_SCRIPT_H */
