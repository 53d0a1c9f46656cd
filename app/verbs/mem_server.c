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
 *   sword-mem-server [-d DEV] [-x GID_INDEX] [-p PORT] [-a ADDR] [-s BYTES] [-l LOCKS]
 */
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
#include "verbs_rc.h"

#define MAX_CLIENTS 64

struct client {
	int fd;              /* -1 = free slot */
	struct rc_qp q;
	unsigned int reconnects;
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
		"usage: sword-mem-server [-d DEV] [-x GID_INDEX] [-p PORT] [-a ADDR] [-s BYTES] [-l LOCKS]\n"
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

int
main(int argc, char **argv)
{
	const char *dev = NULL;
	int gid_index = -1, port = LOCK_TCP_PORT, opt, lfd, i;
	unsigned long long addr = LOCK_REGION_ADDR;
	size_t size = LOCK_REGION_SIZE;
	unsigned int print_locks = 4, served = 0, reconnects = 0;
	struct client clients[MAX_CLIENTS];
	struct rc_dev d;
	struct ibv_mr *mr;
	void *region;

	while ((opt = getopt(argc, argv, "d:x:p:a:s:l:h")) != -1) {
		switch (opt) {
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
	if (rc_dev_open(&d, dev, gid_index) != 0)
		return 1;
	mr = ibv_reg_mr(d.pd, region, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (mr == NULL) {
		fprintf(stderr, "mem-server: ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	lfd = tcp_listen(port);
	if (lfd < 0)
		return 1;
	for (i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("mem-server: ready port=%d addr=0x%" PRIxPTR " rkey=0x%x length=%zu gid_index=%d\n",
	       port, (uintptr_t)region, mr->rkey, size, d.gid_index);

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
				} else if (accept_client(lfd, &clients[slot], &d, mr) == 0) {
					served++;
				}
				continue;
			}
			/* 'X' reconnects; any other byte or EOF ends the connection. */
			struct client *c = &clients[idx[i]];
			char b;
			ssize_t got = read(c->fd, &b, 1);

			if (got == 1 && b == 'X' && reconnect_client(c, &d) == 0) {
				reconnects++;
				continue;
			}
			rc_qp_destroy(&c->q);
			close(c->fd);
			c->fd = -1;
		}
	}

	printf("mem-server: exiting, %u connections served, %u reconnects\n", served, reconnects);
	for (unsigned int l = 0; l < print_locks; l++) {
		const volatile uint64_t *word = (const volatile uint64_t *)
			((char *)region + lock_word_offset(l));
		const volatile struct lock_record *r = (const volatile struct lock_record *)
			((char *)region + record_offset(l));

		printf("mem-server: lock %u word=0x%" PRIx64 " holder=0x%" PRIx64
		       " counter=%" PRIu64 " last_tag=0x%" PRIx64 "\n",
		       l, *word, r->holder, r->counter, r->last_tag);
	}
	for (i = 0; i < MAX_CLIENTS; i++) {
		if (clients[i].fd >= 0) {
			rc_qp_destroy(&clients[i].q);
			close(clients[i].fd);
		}
	}
	ibv_dereg_mr(mr);
	rc_dev_close(&d);
	return 0;
}
