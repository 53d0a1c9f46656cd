/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rc_cm.c — the RDMA CM exchange as a source of exact connection identity.
 *
 * Why it exists: without CM, swordd can only pair a server QP with a client
 * QP on evidence (rc_table.c), and a reconnect that reuses QPNs and PSNs
 * looks like a retransmission.  The CM tells both: ConnectRequest (REQ)
 * carries the requester's local QPN and starting PSN, ConnectReply (REP)
 * the responder's, matched by communication ID; DREQ/DREP end the
 * connection.  CM messages are MADs (management class 7) in UD SENDs to
 * QP1 on UDP 4791 (IBTA vol.1 §12.6; field offsets below are from the MAD
 * start, checked against tshark's infiniband.cm dissector in the tests).
 */
#include <string.h>

#include "rc_internal.h"

#define MAD_LEN 256
#define MAD_CLASS_CM 0x07
#define MAD_OFF_CLASS 1
#define MAD_OFF_ATTR 16
#define MAD_DATA 24

enum {
	ATTR_REQ = 0x0010, ATTR_REJ = 0x0012, ATTR_REP = 0x0013,
	ATTR_RTU = 0x0014, ATTR_DREQ = 0x0015, ATTR_DREP = 0x0016,
};

static inline uint32_t
ld24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static const uint8_t *
mad_of(const uint8_t *frame, const struct roce_pkt *p)
{
	if (p->opcode != ROCE_UD_SEND_ONLY || p->qpn != 1 ||
	    (uint32_t)p->payload_len - p->pad < MAD_LEN)
		return NULL;
	return frame + p->payload_off;
}

bool
rc_cm_is_cm(const uint8_t *frame, const struct roce_pkt *p)
{
	const uint8_t *mad = mad_of(frame, p);

	return mad != NULL && mad[MAD_OFF_CLASS] == MAD_CLASS_CM;
}

int
rc_cm_parse(const uint8_t *frame, const struct roce_pkt *p, struct rc_cm_msg *m)
{
	const uint8_t *mad = mad_of(frame, p), *d;

	memset(m, 0, sizeof(*m));
	if (mad == NULL || mad[MAD_OFF_CLASS] != MAD_CLASS_CM)
		return -1;
	d = mad + MAD_DATA;
	m->local_comm_id = roce_ld32(d);
	m->remote_comm_id = roce_ld32(d + 4);
	switch (roce_ld16(mad + MAD_OFF_ATTR)) {
	case ATTR_REQ:
		m->kind = RC_CM_REQ;
		m->remote_comm_id = 0;
		m->local_qpn = ld24(mad + 56);
		m->responder_resources = mad[59];
		m->initiator_depth = mad[63];
		m->starting_psn = ld24(mad + 68);
		/* Path Packet Payload MTU, the high nibble: 1..5 = 256..4096 */
		if ((mad[74] >> 4) >= 1 && (mad[74] >> 4) <= 5)
			m->path_mtu = (uint16_t)(128u << (mad[74] >> 4));
		break;
	case ATTR_REP:
		m->kind = RC_CM_REP;
		m->local_qpn = ld24(mad + 36);
		m->starting_psn = ld24(mad + 44);
		m->responder_resources = mad[48];
		m->initiator_depth = mad[49];
		break;
	case ATTR_RTU:
		m->kind = RC_CM_RTU;
		break;
	case ATTR_DREQ:
		m->kind = RC_CM_DREQ;
		m->remote_qpn = ld24(mad + 32);
		break;
	case ATTR_DREP:
		m->kind = RC_CM_DREP;
		break;
	case ATTR_REJ:
		m->kind = RC_CM_REJ;
		break;
	default:
		m->kind = RC_CM_OTHER;
		break;
	}
	return 0;
}

/* The entry for a REQ: its own (a retransmitted REQ), a free one, or the
 * oldest (a REQ whose REP never came). */
static struct rc_cm_req *
req_slot(struct rc_table *t, const struct roce_pkt *p, uint32_t comm_id)
{
	struct rc_cm_req *free_e = NULL, *oldest = &t->cm[0];

	for (uint32_t i = 0; i < RC_CM_PENDING; i++) {
		struct rc_cm_req *e = &t->cm[i];

		if (!e->used) {
			if (free_e == NULL)
				free_e = e;
			continue;
		}
		if (e->req_ip == p->src_ip4 && e->rep_ip == p->dst_ip4 &&
		    e->comm_id == comm_id)
			return e;
		if (e->at < oldest->at)
			oldest = e;
	}
	return free_e ? free_e : oldest;
}

static void
remember_req(struct rc_table *t, const struct roce_pkt *p,
	     const struct rc_cm_msg *m, uint64_t now)
{
	*req_slot(t, p, m->local_comm_id) = (struct rc_cm_req){
		.req_ip = p->src_ip4, .rep_ip = p->dst_ip4, .comm_id = m->local_comm_id,
		.qpn = m->local_qpn, .psn = m->starting_psn, .at = now,
		.rr = m->responder_resources, .depth = m->initiator_depth, .used = 1,
	};
}

static struct rc_cm_req *
find_req(struct rc_table *t, const struct roce_pkt *p, uint32_t comm_id)
{
	for (uint32_t i = 0; i < RC_CM_PENDING; i++) {
		struct rc_cm_req *e = &t->cm[i];

		if (e->used && e->req_ip == p->dst_ip4 && e->rep_ip == p->src_ip4 &&
		    e->comm_id == comm_id)
			return e;
	}
	return NULL;
}

/* Both ends known: (client IP, client QPN, its first PSN) <-> (server IP,
 * server QPN, its responder resources).  Starts a new life of the
 * connection, paired. */
static void
establish(struct rc_table *t, uint32_t cl_ip, uint32_t cl_qpn, uint32_t cl_psn,
	  uint32_t srv_ip, uint32_t srv_qpn, uint8_t rr, uint8_t depth, uint64_t now)
{
	struct rc_conn *c = rc_find_req(t, cl_ip, srv_ip, srv_qpn);
	struct rc_conn *stale = rc_find_resp(t, srv_ip, cl_ip, cl_qpn);

	/* the client QPN belonged to an older QP: that one is gone */
	if (stale != NULL && stale != c)
		rc_close(t, stale, now);
	if (c != NULL) {
		rc_reincarnate(t, c, cl_psn, now, false);
	} else {
		c = rc_open(t, cl_ip, srv_ip, srv_qpn, cl_psn, now);
		if (c == NULL)
			return;
	}
	c->cl_qpn = cl_qpn;
	c->initial_psn = cl_psn & ROCE_PSN_MASK;
	c->paired = 1;
	c->by_cm = 1;
	c->cm_responder_resources = rr;
	c->cm_initiator_depth = depth;
	rc_resp_map_add(t, c);
	t->c.cm_paired++;
}

static void
on_rep(struct rc_table *t, const struct roce_pkt *p, const struct rc_cm_msg *m,
       uint64_t now, rc_is_server_fn is_server, void *ctx)
{
	struct rc_cm_req *rq = find_req(t, p, m->remote_comm_id);

	if (rq == NULL)
		return;  /* its REQ was not seen: stay with evidence */
	/* Each side's Starting PSN is the first PSN it expects to receive:
	 * the active side sends from the REP's, the passive side from the
	 * REQ's (so a ConnectX client's first request carries the REP's
	 * Starting PSN: shared/captures/rcuckoo-connectx.pcap, frames 7, 10). */
	if (is_server(ctx, p->src_ip4))   /* client connected to the server */
		establish(t, p->dst_ip4, rq->qpn, m->starting_psn, p->src_ip4,
			  m->local_qpn, m->responder_resources, rq->depth, now);
	else if (is_server(ctx, p->dst_ip4))  /* the server connected out */
		establish(t, p->src_ip4, m->local_qpn, rq->psn, p->dst_ip4,
			  rq->qpn, rq->rr, m->initiator_depth, now);
	rq->used = 0;
}

static void
on_dreq(struct rc_table *t, const struct roce_pkt *p, const struct rc_cm_msg *m,
	uint64_t now, rc_is_server_fn is_server, void *ctx)
{
	struct rc_conn *c = NULL;

	/* RemoteQPN is the QPN of the DREQ's receiver */
	if (is_server(ctx, p->dst_ip4)) {
		c = rc_find_req(t, p->src_ip4, p->dst_ip4, m->remote_qpn);
		if (c != NULL)
			rc_close_why(t, c, RC_END_CLIENT_DISCONNECT, now);
	} else if (is_server(ctx, p->src_ip4)) {
		c = rc_find_resp(t, p->src_ip4, p->dst_ip4, m->remote_qpn);
		if (c != NULL)
			rc_close(t, c, now);
	}
}

void
rc_cm_rx(struct rc_table *t, const uint8_t *frame, const struct roce_pkt *p,
	 uint64_t now, rc_is_server_fn is_server, void *ctx)
{
	struct rc_cm_msg m;

	rc_epoch(t, now);
	if (p->ip_version != 4 || rc_cm_parse(frame, p, &m) != 0) {
		t->c.cm_bad++;
		return;
	}
	t->c.cm_seen++;
	switch (m.kind) {
	case RC_CM_REQ:
		remember_req(t, p, &m, now);
		break;
	case RC_CM_REP:
		on_rep(t, p, &m, now, is_server, ctx);
		break;
	case RC_CM_DREQ:
		on_dreq(t, p, &m, now, is_server, ctx);
		break;
	default:
		break;
	}
}

int
rc_cm_build_drep(uint8_t *out, uint32_t cap, const uint8_t *dreq, const struct roce_pkt *p)
{
	const uint32_t len = p->frame_len;
	struct rc_cm_msg m;
	uint8_t *mad, tmp[6];
	uint32_t ip;

	if (p->ip_version != 4 || rc_cm_parse(dreq, p, &m) != 0 || m.kind != RC_CM_DREQ ||
	    len > cap)
		return -1;
	memcpy(out, dreq, len);
	memcpy(tmp, out, 6);                   /* Ethernet: the other way */
	memcpy(out, out + 6, 6);
	memcpy(out + 6, tmp, 6);
	/* IPv4: the other way (the header checksum does not change) */
	memcpy(&ip, out + p->l3_off + 12, 4);
	memcpy(out + p->l3_off + 12, out + p->l3_off + 16, 4);
	memcpy(out + p->l3_off + 16, &ip, 4);
	mad = out + p->payload_off;
	roce_st16(mad + MAD_OFF_ATTR, ATTR_DREP);
	roce_st32(mad + MAD_DATA, m.remote_comm_id);      /* local: the receiver's */
	roce_st32(mad + MAD_DATA + 4, m.local_comm_id);   /* remote: the sender's */
	memset(mad + MAD_DATA + 8, 0, MAD_LEN - MAD_DATA - 8);
	roce_resign(out, p);
	return (int)len;
}
