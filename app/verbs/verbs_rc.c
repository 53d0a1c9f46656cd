/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_rc.c — RC connection set-up shared by the lock client and the
 * memory server (see verbs_rc.h).
 */
#include "verbs_rc.h"

#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Values every connection uses; RoCE through swordd must not depend on them. */
#define RC_MTU IBV_MTU_1024
#define RC_RD_ATOMIC 16        /* outstanding READ/atomic per QP, each way */
#define RC_RETRY 7
#define RC_RNR_RETRY 7
#define RC_MIN_RNR_TIMER 12

static int
gid_is_ipv4_mapped(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

int
rc_dev_open(struct rc_dev *d, const char *name, int gid_index)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n, i;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		fprintf(stderr, "no RDMA device (is rdma_rxe loaded and rxe0 added?)\n");
		if (list)
			ibv_free_device_list(list);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0)
			break;
	if (i == n) {
		fprintf(stderr, "RDMA device %s not found\n", name);
		ibv_free_device_list(list);
		return -1;
	}
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (ctx == NULL) {
		fprintf(stderr, "ibv_open_device: %s\n", strerror(errno));
		return -1;
	}
	return rc_dev_init(d, ctx, 1, gid_index);
}

int
rc_dev_init(struct rc_dev *d, struct ibv_context *ctx, int owns_ctx, int gid_index)
{
	struct ibv_port_attr pa;
	int i;

	memset(d, 0, sizeof(*d));
	d->port = 1;
	d->ctx = ctx;
	d->owns_ctx = owns_ctx;
	if (ibv_query_port(d->ctx, d->port, &pa) != 0) {
		fprintf(stderr, "ibv_query_port: %s\n", strerror(errno));
		goto fail;
	}
	if (gid_index < 0) {
		for (i = 0; i < pa.gid_tbl_len; i++) {
			union ibv_gid g;

			if (ibv_query_gid(d->ctx, d->port, i, &g) == 0 && gid_is_ipv4_mapped(&g)) {
				gid_index = i;
				break;
			}
		}
		if (gid_index < 0) {
			fprintf(stderr, "no IPv4-mapped RoCEv2 GID on port %u\n", d->port);
			goto fail;
		}
	}
	d->gid_index = gid_index;
	if (ibv_query_gid(d->ctx, d->port, gid_index, &d->gid) != 0) {
		fprintf(stderr, "ibv_query_gid %d: %s\n", gid_index, strerror(errno));
		goto fail;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (d->pd == NULL) {
		fprintf(stderr, "ibv_alloc_pd: %s\n", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (owns_ctx)
		ibv_close_device(d->ctx);
	d->ctx = NULL;
	return -1;
}

void
rc_dev_close(struct rc_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx && d->owns_ctx)
		ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
}

int
rc_cq_create(struct rc_qp *q, struct rc_dev *d, int with_events, unsigned int depth,
	     struct ibv_qp_init_attr *ia)
{
	memset(q, 0, sizeof(*q));
	if (with_events) {
		q->channel = ibv_create_comp_channel(d->ctx);
		if (q->channel == NULL) {
			fprintf(stderr, "ibv_create_comp_channel: %s\n", strerror(errno));
			return -1;
		}
	}
	q->cq = ibv_create_cq(d->ctx, (int)depth * 2, NULL, q->channel, 0);
	if (q->cq == NULL) {
		fprintf(stderr, "ibv_create_cq: %s\n", strerror(errno));
		rc_qp_destroy(q);
		return -1;
	}
	memset(ia, 0, sizeof(*ia));
	ia->send_cq = q->cq;
	ia->recv_cq = q->cq;
	ia->qp_type = IBV_QPT_RC;
	ia->sq_sig_all = 0;
	ia->cap.max_send_wr = depth;
	ia->cap.max_recv_wr = 1;
	ia->cap.max_send_sge = 1;
	ia->cap.max_recv_sge = 1;
	return 0;
}

int
rc_qp_create(struct rc_qp *q, struct rc_dev *d, int with_events, unsigned int depth)
{
	struct ibv_qp_init_attr ia;

	if (rc_cq_create(q, d, with_events, depth, &ia) != 0)
		return -1;
	q->qp = ibv_create_qp(d->pd, &ia);
	if (q->qp == NULL) {
		fprintf(stderr, "ibv_create_qp: %s\n", strerror(errno));
		rc_qp_destroy(q);
		return -1;
	}
	/* Random start PSN, as real stacks do: swordd must not assume zero. */
	q->psn = (uint32_t)(rand() & 0xffffff);
	return 0;
}

void
rc_qp_destroy(struct rc_qp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->channel)
		ibv_destroy_comp_channel(q->channel);
	memset(q, 0, sizeof(*q));
}

void
rc_qp_info(const struct rc_qp *q, const struct rc_dev *d, struct rc_info *out)
{
	memset(out, 0, sizeof(*out));
	out->qpn = q->qp->qp_num;
	out->psn = q->psn;
	memcpy(out->gid, d->gid.raw, sizeof(out->gid));
}

int
rc_qp_connect(struct rc_qp *q, const struct rc_dev *d, const struct rc_info *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = d->port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0) {
		fprintf(stderr, "modify QP to INIT: %s\n", strerror(errno));
		return -1;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = RC_MTU;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = RC_RD_ATOMIC;
	a.min_rnr_timer = RC_MIN_RNR_TIMER;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, sizeof(peer->gid));
	a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = d->port;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0) {
		fprintf(stderr, "modify QP to RTR: %s\n", strerror(errno));
		return -1;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->psn;
	a.timeout = q->ack_timeout;
	a.retry_cnt = RC_RETRY;
	a.rnr_retry = RC_RNR_RETRY;
	a.max_rd_atomic = RC_RD_ATOMIC;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
		fprintf(stderr, "modify QP to RTS: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int64_t
rc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
rc_wait(struct rc_qp *q, struct ibv_wc *wc, int timeout_ms)
{
	int64_t deadline = rc_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(q->cq, 1, wc);
		if (n != 0)
			return n < 0 ? -1 : 1;
		if (rc_now_ms() >= deadline)
			return 0;
		if (q->channel == NULL)
			continue;
		/* Arm, then poll once more: a completion may have slipped in between. */
		if (ibv_req_notify_cq(q->cq, 0) != 0)
			return -1;
		n = ibv_poll_cq(q->cq, 1, wc);
		if (n != 0)
			return n < 0 ? -1 : 1;

		struct pollfd p = { .fd = q->channel->fd, .events = POLLIN };
		int left = (int)(deadline - rc_now_ms());

		if (left < 0)
			left = 0;
		n = poll(&p, 1, left);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0) {
			struct ibv_cq *cq;
			void *cq_ctx;

			if (ibv_get_cq_event(q->channel, &cq, &cq_ctx) != 0)
				return -1;
			ibv_ack_cq_events(cq, 1);
		}
	}
}

static int
write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
rc_send_info(int fd, const struct rc_info *mine)
{
	struct rc_info w = *mine;

	w.qpn = htobe32(mine->qpn);
	w.psn = htobe32(mine->psn);
	w.addr = htobe64(mine->addr);
	w.rkey = htobe32(mine->rkey);
	w.length = htobe32(mine->length);
	return write_full(fd, &w, sizeof(w));
}

int
rc_recv_info(int fd, struct rc_info *theirs)
{
	if (read_full(fd, theirs, sizeof(*theirs)) != 0)
		return -1;
	theirs->qpn = be32toh(theirs->qpn);
	theirs->psn = be32toh(theirs->psn);
	theirs->addr = be64toh(theirs->addr);
	theirs->rkey = be32toh(theirs->rkey);
	theirs->length = be32toh(theirs->length);
	return 0;
}

int
rc_exchange(int fd, const struct rc_info *mine, struct rc_info *theirs)
{
	if (rc_send_info(fd, mine) != 0 || rc_recv_info(fd, theirs) != 0)
		return -1;
	return 0;
}

int
tcp_connect(const char *host, int port)
{
	struct addrinfo hints, *res, *ai;
	char service[16];
	int fd = -1, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &res) != 0) {
		fprintf(stderr, "cannot resolve %s\n", host);
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "cannot connect to %s:%d: %s\n", host, port, strerror(errno));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int
tcp_listen(int port)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) != 0) {
		fprintf(stderr, "cannot listen on port %d: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
