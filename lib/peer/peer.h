/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h — userspace RoCEv2 RC endpoints: a memory server (responder) and
 * requesters, speaking exact RoCEv2 frames over AF_PACKET.
 *
 * Why it exists: there is no RDMA NIC here, yet swordd must be exercised
 * over a real network path by endpoints that react to what it emits the
 * way RNICs do (IBTA vol.1 ch.9 C9 rules: PSN checking, NAK once, duplicate
 * replay, MSN, ACK coalescing, go-back-N).  The library has no EAL and no
 * threads: one process, one interface, a poll loop the caller drives.
 *
 * Wire truth comes from lib/roce (parser, opcode table, ICRC); this library
 * only decides what to send.  Memory words are big-endian, as on ConnectX
 * (atomics and swordd's CAS->WRITE rewrite agree on that).
 *
 * QP setup is out of band and static: both sides derive every QP from its
 * global index g (see peer_qp_psn0 and the QPN bases in the configs), so a
 * command line is all the "connection manager" there is.  A client that
 * re-creates a QP (same QPNs, same initial PSN) tells the server with a
 * RECONNECT datagram (peer_ctl_*), as applications do through memcached or
 * TCP, and the server resets its QP to that PSN.
 */
#ifndef SWORD_PEER_H
#define SWORD_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "roce.h"

#define PEER_FRAME_MAX 4200      /* 4096 PMTU + headers */
#define PEER_MAX_MRS 8
#define PEER_RD_ATOMIC 16        /* responder resources (max_dest_rd_atomic) */
#define PEER_SQ_SIZE 64          /* WQEs per requester QP (power of two) */
#define PEER_AUNIT_QUEUE_DEFAULT 1024  /* frames held behind waiting atomics (model) */

uint64_t peer_now_ns(void);

/* Initial PSN of QP g, agreed by both sides through the seed. */
static inline uint32_t
peer_qp_psn0(uint32_t seed, uint32_t g)
{
	uint32_t x = (g + 1) * 0x9e3779b1u ^ seed * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return x & ROCE_PSN_MASK;
}

/* Initial PSN of QP g: a fixed one when configured (Sherman starts every QP
 * at 3185), else the seeded one. */
static inline uint32_t
peer_qp_first_psn(bool fixed, uint32_t fixed_psn, uint32_t seed, uint32_t g)
{
	return fixed ? (fixed_psn & ROCE_PSN_MASK) : peer_qp_psn0(seed, g);
}

/* xorshift64*: seeded, reproducible, no libc state. */
static inline uint64_t
peer_rand(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ---------------------------------------------------------------------- */
/* Link: one AF_PACKET socket on one interface, with seeded egress faults. */

struct peer_faults {
	double loss;        /* probability a frame is not sent */
	double dup;         /* probability a frame is sent twice */
	double reorder;     /* probability a frame is held back reorder_us */
	uint32_t reorder_us;
	uint32_t delay_us;  /* every frame held this long (order kept) */
	uint64_t seed;
};

struct peer_link_stats {
	uint64_t tx, rx, tx_err;
	uint64_t fault_lost, fault_dup, fault_reordered, fault_delayed;
	uint64_t delay_queue_full;
	uint64_t rx_dropped;    /* dropped by the kernel: socket receive buffer full */
};

struct peer_link;

/* Opens ifname; fills mac with the interface's MAC.  NULL + message on error. */
struct peer_link *peer_link_open(const char *ifname, const struct peer_faults *f,
				 uint8_t mac[6], char *err, int errlen);
void peer_link_close(struct peer_link *l);
/* Send one frame (faults applied). */
void peer_link_send(struct peer_link *l, const uint8_t *frame, uint32_t len);
/* Receive one frame not sent by this host: length, 0 if none within
 * timeout_ns (0 = do not wait), < 0 on error.  Also releases delayed frames. */
int peer_link_recv(struct peer_link *l, uint8_t *buf, uint32_t cap, uint64_t timeout_ns);
/* Release delayed frames that are due; returns ns until the next one (or UINT64_MAX). */
uint64_t peer_link_flush(struct peer_link *l, uint64_t now);
/* Counters; reads the kernel's drop count for the socket first. */
const struct peer_link_stats *peer_link_stats(struct peer_link *l);

/* ---------------------------------------------------------------------- */
/* Frames */

struct peer_addr {
	uint8_t mac[6];
	uint32_t ip;        /* network order */
	uint16_t udp_sport; /* host order */
};

/*
 * Build an RC frame src -> dst: Ethernet/IPv4/UDP/BTH, ext headers (raw,
 * ext_len bytes, already big-endian), payload (padded to 4), ICRC.
 * Returns frame length (0 if it does not fit).  *ip_id advances.
 */
uint32_t peer_build(uint8_t *out, uint32_t cap, const struct peer_addr *src,
		    const struct peer_addr *dst, uint16_t *ip_id, uint8_t opcode,
		    uint32_t dqpn, uint32_t psn, bool ackreq, const uint8_t *ext,
		    uint32_t ext_len, const uint8_t *payload, uint32_t payload_len);

/* ---------------------------------------------------------------------- */
/* Responder (memory server) */

enum peer_ack_mode {
	PEER_ACK_EVERY,   /* ACK every WRITE/SEND message */
	PEER_ACK_ACKREQ,  /* ACK only messages with AckReq set */
	PEER_ACK_EVERY_K, /* ACK when AckReq set or k messages unacknowledged */
};

struct peer_mr {
	uint32_t rkey;
	uint64_t base;
	uint64_t length;
	uint8_t *mem;     /* owned by the responder */
};

struct peer_resp_cfg {
	struct peer_addr self;
	uint32_t qpn_base;       /* server QPN of global QP g: qpn_base + g */
	uint32_t peer_qpn_base;  /* client QPN of g: peer_qpn_base + g */
	uint32_t max_qps;
	uint32_t psn_seed;
	bool fixed_psn;          /* every QP starts at initial_psn, not the seeded PSN */
	uint32_t initial_psn;
	uint32_t pmtu;           /* 256..4096 */
	enum peer_ack_mode ack_mode;
	uint32_t ack_k;
	uint32_t n_mrs;
	struct peer_mr mrs[PEER_MAX_MRS];  /* mem allocated by peer_resp_create */
	/* A model of an RNIC atomic unit, not a NIC (0 = off: atomics run on
	 * arrival, as without it): atomics on one 8-byte word run one at a
	 * time, each holding the word's unit this long; while a QP's atomic
	 * waits, the QP's later requests wait behind it (held in a pool of
	 * atomic_unit_queue frames over all QPs; a request that finds it full
	 * is dropped, as by a responder out of buffers, and the requester
	 * retransmits).  The caller drives it with peer_resp_poll. */
	uint64_t atomic_unit_ns;
	uint32_t atomic_unit_queue;  /* 0: PEER_AUNIT_QUEUE_DEFAULT */
};

struct peer_resp_stats {
	uint64_t rx_frames, rx_not_mine, rx_bad_icrc, rx_malformed, rx_not_request;
	uint64_t unknown_qp, peer_mismatch;
	uint64_t writes, reads, atomics, sends, read_resp_pkts;
	uint64_t acks, naks_seq, naks_access, naks_invalid;
	uint64_t seq_dropped, dup_writes, dup_reads, dup_atomics, dup_unknown;
	uint64_t coalesced;
	uint64_t qp_resets;      /* QPs moved back to their initial PSN (reconnects) */
	/* atomic unit model (all 0 when it is off) */
	uint64_t aunit_waited;   /* atomics that found their word's unit busy */
	uint64_t aunit_wait_ns;  /* their modelled waits, summed */
	uint64_t aunit_held;     /* requests held behind a waiting atomic of their QP */
	uint64_t aunit_held_max; /* most frames held at once */
	uint64_t aunit_queue_full; /* requests dropped: the held-frame pool was full */
	uint64_t aunit_table_full; /* atomics dropped: too many busy words near one hash */
	uint64_t aunit_flushed;  /* held frames dropped by a QP reset (reconnect) */
};

struct peer_resp;

struct peer_resp *peer_resp_create(const struct peer_resp_cfg *cfg,
				   struct peer_link *link, char *err, int errlen);
void peer_resp_destroy(struct peer_resp *r);
/* Handle one received frame (frame is scratch: may be modified). */
void peer_resp_input(struct peer_resp *r, uint8_t *frame, uint32_t len);
/* Atomic unit model: run the atomics whose unit time has come (and what
 * their QPs held behind them).  Returns ns until the next one is due,
 * UINT64_MAX when none waits (always, with the model off). */
uint64_t peer_resp_poll(struct peer_resp *r, uint64_t now);
const struct peer_resp_stats *peer_resp_stats(const struct peer_resp *r);
/* Memory access for checks and dumps (NULL if va..va+len is not in an MR). */
uint8_t *peer_resp_mem(struct peer_resp *r, uint64_t va, uint64_t len);
uint32_t peer_resp_active_qps(const struct peer_resp *r);
/* In-sequence requests QP g took (what remapping moves onto lanes). */
uint64_t peer_resp_qp_executed(const struct peer_resp *r, uint32_t g);
/* A reconnect of QP g (modify to RESET, then RTR at psn): forget the peer
 * binding, the expected PSN, the MSN, the responder resources and any
 * WRITE in progress.  -EINVAL if g is not served. */
int peer_resp_reset_qp(struct peer_resp *r, uint32_t g, uint32_t psn);

/* ---------------------------------------------------------------------- */
/* Requester (client QPs) */

struct peer_wqe {
	uint8_t opcode;           /* WRITE_ONLY (split by PMTU), READ_REQUEST, CAS, FAA, MASKED CAS */
	bool ackreq;              /* AckReq on the (last packet of the) request */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;             /* WRITE/READ length */
	uint8_t *buf;             /* WRITE source / READ destination (caller owned) */
	uint64_t swap_add, compare, swap_mask, compare_mask;
	uint64_t user;            /* passed back on completion */
	/* set by the requester */
	uint64_t orig;            /* atomic result */
	uint64_t t_post, t_done;
};

struct peer_req_cfg {
	struct peer_addr self;
	struct peer_addr server;
	uint32_t qpn_base;        /* this side's QPN of g: qpn_base + g */
	uint32_t server_qpn_base; /* server's QPN of g */
	uint32_t first_qp;        /* global index of our QP 0 */
	uint32_t n_qps;
	uint32_t psn_seed;
	bool fixed_psn;           /* every QP starts at initial_psn */
	uint32_t initial_psn;
	uint32_t pmtu;
	uint32_t window;          /* outstanding WQEs per QP, <= PEER_SQ_SIZE */
	uint64_t rto_ns;          /* retransmission timeout */
	uint32_t max_retries;     /* per WQE before the QP goes to error */
};

struct peer_req_stats {
	uint64_t rx_frames, rx_not_mine, rx_bad_icrc, rx_malformed;
	uint64_t tx_pkts, retx_pkts, timeouts, naks_seq, implied_naks, rnr_naks;
	uint64_t stale_responses, completions, qp_errors;
	uint64_t msn_mismatch;     /* response MSN != messages completed up to its PSN */
	uint64_t qp_resets;        /* QPs re-created (same QPN, initial PSN again) */
};

struct peer_req;
typedef void (*peer_complete_fn)(void *ctx, uint32_t qp, struct peer_wqe *w);

struct peer_req *peer_req_create(const struct peer_req_cfg *cfg, struct peer_link *link,
				 peer_complete_fn fn, void *ctx, char *err, int errlen);
void peer_req_destroy(struct peer_req *r);
/* Post a work request on local QP qp (0..n_qps-1); 0, -ENOBUFS when the
 * window is full, -EIO when the QP is in error. The wqe is copied. */
int peer_req_post(struct peer_req *r, uint32_t qp, const struct peer_wqe *w);
uint32_t peer_req_outstanding(const struct peer_req *r, uint32_t qp);
void peer_req_input(struct peer_req *r, uint8_t *frame, uint32_t len);
/* Timers: retransmit on timeout.  Call often. */
void peer_req_poll(struct peer_req *r, uint64_t now);
bool peer_req_qp_error(const struct peer_req *r, uint32_t qp, const char **why);
const struct peer_req_stats *peer_req_stats(const struct peer_req *r);
/* Re-create local QP qp as a restarted application would: same QPN, send
 * queue empty, next PSN back to the initial PSN, MSN 0, error cleared.
 * -EBUSY while requests are outstanding (the caller drains first). */
int peer_req_reset_qp(struct peer_req *r, uint32_t qp);
uint32_t peer_req_first_psn(const struct peer_req *r, uint32_t qp);

/* ---------------------------------------------------------------------- */
/* Out-of-band QP reconnect messages (UDP, not RoCE): peer_ctl.c */

#define PEER_CTL_PORT 4792
#define PEER_CTL_LEN 24

enum peer_ctl_type {
	PEER_CTL_RECONNECT = 1,    /* client -> server: reset your QP to psn */
	PEER_CTL_RECONNECTED = 2,  /* server -> client: done, send at will */
};

struct peer_ctl_msg {
	uint8_t type;
	uint32_t incarnation;      /* 1, 2, ... per QP: a resent request is not a new reset */
	uint32_t client_qpn, server_qpn;
	uint32_t psn;              /* initial PSN of the new incarnation (both directions) */
};

uint32_t peer_ctl_encode(uint8_t *buf, uint32_t cap, const struct peer_ctl_msg *m);
bool peer_ctl_decode(const uint8_t *buf, uint32_t len, struct peer_ctl_msg *m);
/* A control datagram to or from UDP port `port` in an Ethernet/IPv4 frame;
 * addresses in network order, ports in host order. */
bool peer_ctl_from_frame(const uint8_t *f, uint32_t len, uint16_t port, struct peer_ctl_msg *m,
			 uint32_t *src_ip, uint32_t *dst_ip, uint16_t *src_port,
			 uint16_t *dst_port);

#endif /* SWORD_PEER_H */
