/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_server.c — the passive side of the lock test: a memory server.
 *
 * Why it exists: in disaggregated memory the server's CPU does nothing but
 * register memory and hand out QPs; every lock and record access is a
 * one-sided READ/WRITE/atomic from a client.  This program is exactly that:
 * it maps a zeroed region at a fixed address (so swordd's [lock.X] base is
 * known in advance), registers it for remote READ, WRITE and ATOMIC, and
 * for each TCP connection creates one RC QP and swaps QP info.  The QP
 * lives until the TCP connection closes.  A client that reconnects its QP
 * (same QPN, its initial PSN again: sword-lock-client -R) sends 'X' and its
 * QP info on that connection; our QP then goes through RESET back to RTS
 * at the client's PSN, as a real out-of-band reconnect does, and we answer
 * 'R'.  On SIGTERM/SIGINT it prints the
 * lock words and record counters it holds, which is the ground truth a
 * test can compare with the client's count.
 *
 * -C: the RDMA CM instead of TCP (verbs_cm.h).  It listens with rdma_cm on
 * the same port, accepts each connection on its own QP and hands the
 * region (addr, rkey, length: struct cm_region) to the client in the
 * accept's private data.  A QP lives until its client disconnects (CM
 * DREQ: RDMA_CM_EVENT_DISCONNECTED), which is counted and printed
 * ("disconnected N"), and again at exit: a test can tell that every
 * client's disconnect, a held one included, reached this server.
 *
 *   sword-mem-server [-C] [-d DEV] [-x GID_INDEX] [-p PORT] [-a ADDR] [-s BYTES]
 *                    [-l LOCKS]
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lock_layout.h"
#include "verbs_cm.h"
#include "verbs_rc.h"

#define MAX_CLIENTS 64

struct client {
	int fd;              /* -1 = free slot */
	struct rc_qp q;
	unsigned int reconnects;
	struct rdma_cm_id *id;   /* -C: the connection's cm_id, NULL = free slot */
	uint32_t peer_qpn;       /* -C: the client's QPN, from its REQ */
};

/* What main reports at exit. */
struct served {
	unsigned int connections, reconnects, disconnects;
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: sword-mem-server [-C] [-d DEV] [-x GID_INDEX] [-p PORT] [-a ADDR] [-s BYTES]\n"
		"                        [-l LOCKS]\n"
		"  -C        RDMA CM: listen with rdma_cm on PORT, one QP per connection,\n"
		"            the region in the accept's private data (default: TCP)\n"
		"  -a ADDR   map the region at this address (default 0x%llx)\n"
		"  -s BYTES  region size (default %u)\n"
		"  -l LOCKS  lock words/records to print at exit (default 4)\n",
		LOCK_REGION_ADDR, LOCK_REGION_SIZE);
	exit(2);
}

/* Accept one client: read its QP info, create and connect our QP, answer. */
static int
accept_client(int lfd, struct client *c, struct rc_dev *d, struct ibv_mr *mr)
{
	struct rc_info mine, peer;

	c->fd = accept(lfd, NULL, NULL);
	if (c->fd < 0)
		return -1;
	if (rc_qp_create(&c->q, d, 0, 16) != 0)
		goto fail;
	rc_qp_info(&c->q, d, &mine);
	mine.addr = (uintptr_t)mr->addr;
	mine.rkey = mr->rkey;
	mine.length = (uint32_t)mr->length;
	/* The client sends first; rc_exchange writes then reads, which is fine
	 * on a socket both ends write to before reading. */
	if (rc_exchange(c->fd, &mine, &peer) != 0) {
		fprintf(stderr, "mem-server: QP info exchange failed\n");
		goto fail;
	}
	if (rc_qp_connect(&c->q, d, &peer) != 0)
		goto fail;
	/* Tell the client our QP is in RTS: only now may it post. */
	if (write(c->fd, "R", 1) != 1)
		goto fail;
	printf("mem-server: client QP 0x%x <-> our QP 0x%x\n", peer.qpn, c->q.qp->qp_num);
	return 0;
fail:
	rc_qp_destroy(&c->q);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	return -1;
}

/* 'X' from a client: read its QP info, RESET our QP, connect it again. */
static int
reconnect_client(struct client *c, struct rc_dev *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct rc_info peer;

	if (rc_recv_info(c->fd, &peer) != 0) {
		fprintf(stderr, "mem-server: reconnect: no QP info\n");
		return -1;
	}
	if (ibv_modify_qp(c->q.qp, &a, IBV_QP_STATE) != 0) {
		fprintf(stderr, "mem-server: modify QP to RESET: %s\n", strerror(errno));
		return -1;
	}
	if (rc_qp_connect(&c->q, d, &peer) != 0 || write(c->fd, "R", 1) != 1)
		return -1;
	c->reconnects++;
	return 0;
}

/* 'N' from a client that re-created its QP: read its new QP's info, destroy
 * ours and make a new one (a new QPN), send its info, connect it, answer. */
static int
recreate_client(struct client *c, struct rc_dev *d, struct ibv_mr *mr)
{
	struct rc_info mine, peer;

	if (rc_recv_info(c->fd, &peer) != 0) {
		fprintf(stderr, "mem-server: re-create: no QP info\n");
		return -1;
	}
	rc_qp_destroy(&c->q);
	if (rc_qp_create(&c->q, d, 0, 16) != 0)
		return -1;
	rc_qp_info(&c->q, d, &mine);
	mine.addr = (uintptr_t)mr->addr;
	mine.rkey = mr->rkey;
	mine.length = (uint32_t)mr->length;
	if (rc_send_info(c->fd, &mine) != 0 || rc_qp_connect(&c->q, d, &peer) != 0 ||
	    write(c->fd, "R", 1) != 1)
		return -1;
	c->reconnects++;
	printf("mem-server: client QP 0x%x <-> our QP 0x%x (re-created)\n", peer.qpn,
	       c->q.qp->qp_num);
	return 0;
}

/* The TCP mode: one QP per TCP connection, until that connection closes. */
static int
serve_tcp(int port, struct rc_dev *d, struct ibv_mr *mr, struct client *clients,
	  struct served *sv)
{
	int lfd = tcp_listen(port), i;

	if (lfd < 0)
		return -1;
	printf("mem-server: ready port=%d addr=0x%" PRIxPTR " rkey=0x%x length=%zu gid_index=%d\n",
	       port, (uintptr_t)mr->addr, mr->rkey, mr->length, d->gid_index);
	while (!stop) {
		struct pollfd p[MAX_CLIENTS + 1];
		int idx[MAX_CLIENTS + 1], n = 0;

		p[n].fd = lfd;
		p[n].events = POLLIN;
		idx[n++] = -1;
		for (i = 0; i < MAX_CLIENTS; i++) {
			if (clients[i].fd < 0)
				continue;
			p[n].fd = clients[i].fd;
			p[n].events = POLLIN;
			idx[n++] = i;
		}
		if (poll(p, (nfds_t)n, 1000) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (idx[i] < 0) {
				int slot;

				for (slot = 0; slot < MAX_CLIENTS && clients[slot].fd >= 0; slot++)
					;
				if (slot == MAX_CLIENTS) {
					close(accept(lfd, NULL, NULL));
					fprintf(stderr, "mem-server: too many clients\n");
				} else if (accept_client(lfd, &clients[slot], d, mr) == 0) {
					sv->connections++;
				}
				continue;
			}
			/* 'X' reconnects, 'N' re-creates; any other byte or EOF
			 * ends the connection. */
			struct client *c = &clients[idx[i]];
			char b;
			ssize_t got = read(c->fd, &b, 1);

			if (got == 1 && b == 'X' && reconnect_client(c, d) == 0) {
				sv->reconnects++;
				continue;
			}
			if (got == 1 && b == 'N' && recreate_client(c, d, mr) == 0) {
				sv->reconnects++;
				continue;
			}
			rc_qp_destroy(&c->q);
			close(c->fd);
			c->fd = -1;
		}
	}
	for (i = 0; i < MAX_CLIENTS; i++) {
		if (clients[i].fd >= 0) {
			rc_qp_destroy(&clients[i].q);
			close(clients[i].fd);
		}
	}
	close(lfd);
	return 0;
}

/* -C: a connect request gets its own QP and the region in the accept. */
static void
cm_accept_client(struct rdma_cm_event *ev, struct rc_dev *d, struct ibv_mr *mr,
		 struct client *clients)
{
	const struct rdma_conn_param *req = &ev->param.conn;
	struct cm_region reg = {
		.addr = htobe64((uintptr_t)mr->addr), .rkey = htobe32(mr->rkey),
		.length = htobe32((uint32_t)mr->length),
	};
	struct rdma_conn_param cp;
	struct client *c = NULL;
	int i;

	for (i = 0; i < MAX_CLIENTS && c == NULL; i++)
		if (clients[i].id == NULL)
			c = &clients[i];
	if (c == NULL) {
		fprintf(stderr, "mem-server: too many clients\n");
		rdma_reject(ev->id, NULL, 0);
		return;
	}
	/* no ACK timeout, as the TCP mode's QPs (verbs_rc.h: ack_timeout) */
	if (cm_qp_create(&c->q, d, ev->id, 0, 16) != 0 || cm_set_ack_timeout(ev->id, 0) != 0)
		goto fail;
	cm_conn_param(&cp, &reg, sizeof(reg));
	/* never more than the client asked for: its initiator depth bounds
	 * our responder resources, and the other way round */
	if (req->initiator_depth < cp.responder_resources)
		cp.responder_resources = req->initiator_depth;
	if (req->responder_resources < cp.initiator_depth)
		cp.initiator_depth = req->responder_resources;
	if (rdma_accept(ev->id, &cp) != 0) {
		fprintf(stderr, "mem-server: rdma_accept: %s\n", strerror(errno));
		goto fail;
	}
	c->id = ev->id;
	c->peer_qpn = req->qp_num;   /* the passive side's ESTABLISHED does not say */
	ev->id->context = c;
	return;
fail:
	cm_qp_destroy(&c->q, ev->id);
	rdma_reject(ev->id, NULL, 0);
}

/* A connection's end (its DISCONNECTED, or a failed set-up): the QP and the
 * cm_id go.  The event that said so must be acked before rdma_destroy_id. */
static void
cm_drop_client(struct client *c)
{
	/* our side too: moves the QP to ERROR; the CM already answered the
	 * client's DREQ, so an error here (nothing to disconnect) is fine */
	rdma_disconnect(c->id);
	cm_qp_destroy(&c->q, c->id);
	rdma_destroy_id(c->id);
	c->id = NULL;
}

/* One CM event on the listener's channel (children share it). */
static void
cm_event(struct rdma_cm_event *ev, struct rc_dev *d, struct ibv_mr *mr, struct client *clients,
	 struct served *sv)
{
	struct client *c = ev->id->context;
	enum rdma_cm_event_type type = ev->event;
	char desc[128];

	if (c == NULL && type != RDMA_CM_EVENT_CONNECT_REQUEST) {
		rdma_ack_cm_event(ev);   /* the listener's own, or a rejected child's */
		return;
	}
	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		cm_accept_client(ev, d, mr, clients);
		rdma_ack_cm_event(ev);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		sv->connections++;
		cm_qp_describe(c->q.qp, desc, sizeof(desc));
		printf("mem-server: client QP 0x%x <-> our QP 0x%x (rdma_cm, %s)\n",
		       c->peer_qpn, c->q.qp->qp_num, desc);
		rdma_ack_cm_event(ev);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		sv->disconnects++;
		printf("mem-server: disconnected %u (client QP 0x%x, our QP 0x%x, status %d)\n",
		       sv->disconnects, c->peer_qpn, c->q.qp->qp_num, ev->status);
		rdma_ack_cm_event(ev);
		cm_drop_client(c);
		return;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		fprintf(stderr, "mem-server: %s (status %d)\n", rdma_event_str(type), ev->status);
		rdma_ack_cm_event(ev);
		if (c != NULL && c->id != NULL)
			cm_drop_client(c);
		return;
	default:   /* TIMEWAIT_EXIT and the like: nothing to do */
		rdma_ack_cm_event(ev);
		return;
	}
}

/* The -C mode: rdma_cm listener on port, every connection on its own QP. */
static int
serve_cm(int port, struct rc_dev *d, struct ibv_mr *mr, struct client *clients,
	 struct served *sv)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct rdma_cm_id *listener = NULL;
	int i;

	if (ch == NULL || rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(listener, (struct sockaddr *)&sa) != 0 || rdma_listen(listener, 64) != 0) {
		fprintf(stderr, "mem-server: cannot listen with rdma_cm on port %d: %s\n", port,
			strerror(errno));
		return -1;
	}
	printf("mem-server: ready (rdma_cm) port=%d addr=0x%" PRIxPTR " rkey=0x%x length=%zu "
	       "gid_index=%d\n", port, (uintptr_t)mr->addr, mr->rkey, mr->length, d->gid_index);
	while (!stop) {
		struct rdma_cm_event *ev;
		int n = cm_next_event(ch, 1000, &ev);

		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "mem-server: rdma_cm event channel: %s\n", strerror(errno));
			break;
		}
		if (n > 0)
			cm_event(ev, d, mr, clients, sv);
	}
	for (i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].id != NULL)
			cm_drop_client(&clients[i]);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(ch);
	return 0;
}

/* At exit: the lock words and records, the ground truth for the test. */
static void
report(int cm, const struct served *sv, const void *region, unsigned int print_locks)
{
	printf("mem-server: exiting, %u connections served, %u reconnects", sv->connections,
	       sv->reconnects);
	if (cm)
		printf(", %u disconnects", sv->disconnects);
	printf("\n");
	for (unsigned int l = 0; l < print_locks; l++) {
		const volatile uint64_t *word = (const volatile uint64_t *)
			((const char *)region + lock_word_offset(l));
		const volatile struct lock_record *r = (const volatile struct lock_record *)
			((const char *)region + record_offset(l));

		printf("mem-server: lock %u word=0x%" PRIx64 " holder=0x%" PRIx64
		       " counter=%" PRIu64 " last_tag=0x%" PRIx64 "\n",
		       l, *word, r->holder, r->counter, r->last_tag);
	}
}

int
main(int argc, char **argv)
{
	const char *dev = NULL;
	int gid_index = -1, port = LOCK_TCP_PORT, opt, cm = 0, i, rc;
	unsigned long long addr = LOCK_REGION_ADDR;
	size_t size = LOCK_REGION_SIZE;
	unsigned int print_locks = 4;
	static struct client clients[MAX_CLIENTS];
	struct served sv = { 0 };
	struct rc_dev d;
	struct ibv_mr *mr;
	void *region;

	while ((opt = getopt(argc, argv, "Cd:x:p:a:s:l:h")) != -1) {
		switch (opt) {
		case 'C': cm = 1; break;
		case 'd': dev = optarg; break;
		case 'x': gid_index = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'a': addr = strtoull(optarg, NULL, 0); break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'l': print_locks = (unsigned int)atoi(optarg); break;
		default: usage();
		}
	}
	if (size < RECORD_OFFSET + (size_t)RECORD_STRIDE * LOCK_MAX || print_locks > LOCK_MAX)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand((unsigned int)time(NULL) ^ (unsigned int)getpid());

	region = mmap((void *)(uintptr_t)addr, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (region == MAP_FAILED || (uintptr_t)region != addr) {
		fprintf(stderr, "mem-server: cannot map %zu bytes at 0x%llx: %s\n",
			size, addr, strerror(errno));
		return 1;
	}
	if ((cm ? cm_dev_open(&d, dev, gid_index) : rc_dev_open(&d, dev, gid_index)) != 0)
		return 1;
	mr = ibv_reg_mr(d.pd, region, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (mr == NULL) {
		fprintf(stderr, "mem-server: ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	rc = cm ? serve_cm(port, &d, mr, clients, &sv) : serve_tcp(port, &d, mr, clients, &sv);
	if (rc != 0)
		return 1;
	report(cm, &sv, region, print_locks);
	ibv_dereg_mr(mr);
	rc_dev_close(&d);
	return 0;
}
