/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_rc.h — the small amount of libibverbs plumbing both verbs programs
 * need: open the device, pick the RoCEv2 IPv4 GID, create an RC QP, swap
 * QP numbers/PSNs/GIDs (and the server's rkey) over a TCP socket, and
 * walk the QP through INIT -> RTR -> RTS.
 *
 * Why it exists: the lock client and the memory server must set up their
 * connections identically (MTU, atomic depth, timeouts), so that code is
 * written once.  Nothing here is specific to locks.
 */
#ifndef SWORD_VERBS_RC_H
#define SWORD_VERBS_RC_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* What each side tells the other over TCP (big-endian on the wire). */
struct rc_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;       /* memory server: region VA; client: 0 */
	uint32_t rkey;       /* memory server: region rkey; client: 0 */
	uint32_t length;     /* memory server: region length; client: 0 */
} __attribute__((packed));

struct rc_dev {
	struct ibv_context *ctx;
	int owns_ctx;        /* 0: the context is librdmacm's (rc_dev_init) */
	struct ibv_pd *pd;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
};

/*
 * Open device `name` (NULL = first device) on port 1.  gid_index < 0 picks
 * the first IPv4-mapped RoCEv2 GID (::ffff:a.b.c.d).  Returns 0 or -1
 * with a message on stderr.
 */
int rc_dev_open(struct rc_dev *d, const char *name, int gid_index);
/*
 * The same on a context opened elsewhere (librdmacm's: its QPs must be
 * made in a PD of the context its cm_ids use).  owns_ctx: close it in
 * rc_dev_close, and on failure here.
 */
int rc_dev_init(struct rc_dev *d, struct ibv_context *ctx, int owns_ctx, int gid_index);
void rc_dev_close(struct rc_dev *d);

/* An RC QP on its own CQ, optionally with a completion channel. */
struct rc_qp {
	struct ibv_comp_channel *channel;   /* NULL when created without events */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t psn;                       /* our initial send PSN */
	/*
	 * Local ACK timeout, 4.096 us * 2^n; 0 (the default) = never time out.
	 * In the rig 0 is deliberate: Linux 6.1 rxe's retransmit timer is not
	 * restarted per request, so any finite value makes it fire now and
	 * then on a healthy link.  With 0, a retry can only come from a NAK,
	 * i.e. a real loss or reordering, and a lost last packet shows up as
	 * the client's own completion timeout.
	 */
	uint8_t ack_timeout;
};

int rc_qp_create(struct rc_qp *q, struct rc_dev *d, int with_events, unsigned int depth);
/*
 * The first half of rc_qp_create: the CQ (and channel) in q, and in *ia
 * the attributes every QP of ours is created with.  For a QP someone else
 * creates (rdma_create_qp); rc_qp_destroy undoes it.
 */
int rc_cq_create(struct rc_qp *q, struct rc_dev *d, int with_events, unsigned int depth,
		 struct ibv_qp_init_attr *ia);
void rc_qp_destroy(struct rc_qp *q);
void rc_qp_info(const struct rc_qp *q, const struct rc_dev *d, struct rc_info *out);

/* INIT -> RTR -> RTS towards peer (q->ack_timeout applies).  0 or -1. */
int rc_qp_connect(struct rc_qp *q, const struct rc_dev *d, const struct rc_info *peer);

/*
 * Wait for one work completion, up to timeout_ms.  Returns 1 with *wc
 * filled, 0 on timeout, -1 on a CQ/channel error.  Uses the completion
 * channel when there is one (an emulated one-vCPU guest must not spin).
 */
int rc_wait(struct rc_qp *q, struct ibv_wc *wc, int timeout_ms);
/* CLOCK_MONOTONIC in milliseconds (deadlines of the waits here and in
 * verbs_cm.c). */
int64_t rc_now_ms(void);

/* Exchange rc_info over a connected socket: send ours, read theirs. */
int rc_exchange(int fd, const struct rc_info *mine, struct rc_info *theirs);
/* One direction of it (a reconnect: the server already has the rest). */
int rc_send_info(int fd, const struct rc_info *mine);
int rc_recv_info(int fd, struct rc_info *theirs);

/* TCP helpers: connect to host:port, or listen on port (any address). */
int tcp_connect(const char *host, int port);
int tcp_listen(int port);

#endif /* SWORD_VERBS_RC_H */
