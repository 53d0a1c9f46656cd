/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_cm.h — the RDMA CM (librdmacm) side of the verbs programs (-C):
 * connections set up and torn down by CM messages on the wire (REQ, REP,
 * RTU; DREQ, DREP) instead of QP info swapped over TCP.
 *
 * Why it exists: swordd follows the CM (remapping keeps a lane when its
 * owner's application disconnects: lib/remap/remap_cm.c).  Only a real
 * rdma_cm peer that disconnects one QP while its others keep working can
 * judge that; perftest tears everything down at once.
 *
 * QPs keep the TCP mode's shape: the same CQ and depth (rc_cq_create),
 * remote READ/WRITE/ATOMIC (the CM grants READ and ATOMIC when responder
 * resources are offered: CM_RD_ATOMIC each way, as verbs_rc.c's
 * RC_RD_ATOMIC), the same retry counts, and the local ACK timeout set
 * through the CM (RDMA_OPTION_ID_ACK_TIMEOUT; 0 = none, see verbs_rc.h).
 */
#ifndef SWORD_VERBS_CM_H
#define SWORD_VERBS_CM_H

#include <stdint.h>

#include <rdma/rdma_cma.h>

#include "verbs_rc.h"

#define CM_RD_ATOMIC 16      /* responder resources / initiator depth */
#define CM_RETRY 7           /* retry_count and rnr_retry_count */

/* The memory server's region, in the private data of its accept (REP). */
struct cm_region {
	uint64_t addr;
	uint32_t rkey;
	uint32_t length;
} __attribute__((packed));

/*
 * Open librdmacm's context of device `name` (NULL = the first) into d:
 * its cm_ids' QPs must come from a PD of that very context.  0 or -1.
 */
int cm_dev_open(struct rc_dev *d, const char *name, int gid_index);

/* rdma_create_qp on id with rc_cq_create's CQ and attributes, in d's PD. */
int cm_qp_create(struct rc_qp *q, struct rc_dev *d, struct rdma_cm_id *id, int with_events,
		 unsigned int depth);
/* Undo cm_qp_create (the QP through rdma_destroy_qp). */
void cm_qp_destroy(struct rc_qp *q, struct rdma_cm_id *id);

/* RDMA_OPTION_ID_ACK_TIMEOUT, before rdma_connect/rdma_accept.  0 or -1. */
int cm_set_ack_timeout(struct rdma_cm_id *id, uint8_t exponent);

/* Connection parameters of both sides; private data optional. */
void cm_conn_param(struct rdma_conn_param *cp, const void *priv, uint8_t priv_len);

/*
 * The next event on ch within timeout_ms: 1 with *ev (rdma_ack_cm_event
 * it), 0 on timeout, -1 on error.
 */
int cm_next_event(struct rdma_event_channel *ch, int timeout_ms, struct rdma_cm_event **ev);

/*
 * The next event must be `want` with status 0: 0 with *ev (ack it), or -1
 * with a message naming `who` and what came instead (event acked).
 */
int cm_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int timeout_ms,
	      const char *who, struct rdma_cm_event **ev);

/*
 * rdma_disconnect, then wait for RDMA_CM_EVENT_DISCONNECTED with status 0,
 * i.e. the peer's DREP (the kernel CM reports a DREQ that timed out as
 * DISCONNECTED too, with -ETIMEDOUT).  Returns the milliseconds it took,
 * or -1 with a message naming `who`.
 */
double cm_disconnect(struct rdma_event_channel *ch, struct rdma_cm_id *id, int timeout_ms,
		     const char *who);

/* "ack_timeout=N access=RWA rd_atomic=N/N" of a connected QP, for logs. */
void cm_qp_describe(struct ibv_qp *qp, char *buf, size_t len);

#endif /* SWORD_VERBS_CM_H */
