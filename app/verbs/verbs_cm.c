/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_cm.c — RDMA CM plumbing shared by the lock client and the memory
 * server (see verbs_cm.h).
 */
#include "verbs_cm.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

int
cm_dev_open(struct rc_dev *d, const char *name, int gid_index)
{
	struct ibv_context **list, *ctx = NULL;
	int n, i;

	list = rdma_get_devices(&n);
	if (list == NULL || n == 0) {
		fprintf(stderr, "librdmacm sees no RDMA device (rdma_ucm loaded? rxe0 added?)\n");
		if (list)
			rdma_free_devices(list);
		return -1;
	}
	for (i = 0; i < n && ctx == NULL; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]->device), name) == 0)
			ctx = list[i];
	/* the array is ours to free; the contexts stay librdmacm's */
	rdma_free_devices(list);
	if (ctx == NULL) {
		fprintf(stderr, "RDMA device %s not found by librdmacm\n", name);
		return -1;
	}
	return rc_dev_init(d, ctx, 0, gid_index);
}

int
cm_qp_create(struct rc_qp *q, struct rc_dev *d, struct rdma_cm_id *id, int with_events,
	     unsigned int depth)
{
	struct ibv_qp_init_attr ia;

	if (id->verbs != d->ctx) {
		fprintf(stderr, "cm_id on another device context than the PD's\n");
		return -1;
	}
	if (rc_cq_create(q, d, with_events, depth, &ia) != 0)
		return -1;
	if (rdma_create_qp(id, d->pd, &ia) != 0) {
		fprintf(stderr, "rdma_create_qp: %s\n", strerror(errno));
		rc_qp_destroy(q);
		return -1;
	}
	q->qp = id->qp;
	return 0;
}

void
cm_qp_destroy(struct rc_qp *q, struct rdma_cm_id *id)
{
	if (q->qp != NULL) {
		rdma_destroy_qp(id);
		q->qp = NULL;       /* rc_qp_destroy must not destroy it again */
	}
	rc_qp_destroy(q);
}

int
cm_set_ack_timeout(struct rdma_cm_id *id, uint8_t exponent)
{
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &exponent,
			    sizeof(exponent)) != 0) {
		fprintf(stderr, "rdma_set_option(ACK_TIMEOUT=%u): %s\n", exponent, strerror(errno));
		return -1;
	}
	return 0;
}

void
cm_conn_param(struct rdma_conn_param *cp, const void *priv, uint8_t priv_len)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = priv_len;
	/* offering responder resources is what makes the CM grant remote
	 * READ and ATOMIC at INIT (without them: WRITE only) */
	cp->responder_resources = CM_RD_ATOMIC;
	cp->initiator_depth = CM_RD_ATOMIC;
	cp->retry_count = CM_RETRY;
	cp->rnr_retry_count = CM_RETRY;
}

int
cm_next_event(struct rdma_event_channel *ch, int timeout_ms, struct rdma_cm_event **ev)
{
	int64_t deadline = rc_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		int left = (int)(deadline - rc_now_ms()), n;

		n = poll(&p, 1, left < 0 ? 0 : left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		return rdma_get_cm_event(ch, ev) == 0 ? 1 : -1;
	}
}

int
cm_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int timeout_ms,
	  const char *who, struct rdma_cm_event **ev)
{
	int n = cm_next_event(ch, timeout_ms, ev);

	if (n <= 0) {
		fprintf(stderr, "%s: no %s within %d ms%s\n", who, rdma_event_str(want), timeout_ms,
			n < 0 ? " (event channel error)" : "");
		return -1;
	}
	if ((*ev)->event != want || (*ev)->status != 0) {
		fprintf(stderr, "%s: %s (status %d) instead of %s\n", who,
			rdma_event_str((*ev)->event), (*ev)->status, rdma_event_str(want));
		rdma_ack_cm_event(*ev);
		return -1;
	}
	return 0;
}

double
cm_disconnect(struct rdma_event_channel *ch, struct rdma_cm_id *id, int timeout_ms,
	      const char *who)
{
	struct timespec t0, t1;
	struct rdma_cm_event *ev;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rdma_disconnect(id) != 0) {
		fprintf(stderr, "%s: rdma_disconnect: %s\n", who, strerror(errno));
		return -1;
	}
	if (cm_expect(ch, RDMA_CM_EVENT_DISCONNECTED, timeout_ms, who, &ev) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

void
cm_qp_describe(struct ibv_qp *qp, char *buf, size_t len)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_TIMEOUT | IBV_QP_ACCESS_FLAGS | IBV_QP_MAX_QP_RD_ATOMIC |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_SQ_PSN | IBV_QP_PATH_MTU, &ia) != 0) {
		snprintf(buf, len, "(ibv_query_qp: %s)", strerror(errno));
		return;
	}
	snprintf(buf, len, "ack_timeout=%u access=%s%s%s rd_atomic=%u/%u mtu=%d sq_psn=%u",
		 a.timeout, a.qp_access_flags & IBV_ACCESS_REMOTE_READ ? "R" : "-",
		 a.qp_access_flags & IBV_ACCESS_REMOTE_WRITE ? "W" : "-",
		 a.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC ? "A" : "-",
		 a.max_rd_atomic, a.max_dest_rd_atomic, 128 << a.path_mtu, a.sq_psn);
}
