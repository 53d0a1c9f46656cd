/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_link.c — one AF_PACKET socket on one interface, plus seeded egress
 * faults (loss, duplication, reordering, delay).
 *
 * Why it exists: the endpoints must put exact RoCEv2 frames on the wire
 * (the ICRC covers the IP header, so the kernel may not build it), and the
 * tests need reproducible misbehaving links.  Faults are applied on the
 * sending side of every endpoint, so enabling them on both client and
 * server covers both directions.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "peer.h"

#define DELAY_SLOTS 1024

struct delayed {
	uint64_t due;
	uint32_t len;
	uint8_t frame[PEER_FRAME_MAX];
};

struct peer_link {
	int fd;
	int ifindex;
	struct peer_faults f;
	uint64_t rng;
	struct peer_link_stats st;
	uint32_t n_delayed;
	struct delayed *q;      /* DELAY_SLOTS, unordered; scanned (small) */
};

uint64_t
peer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct peer_link *
peer_link_open(const char *ifname, const struct peer_faults *f, uint8_t mac[6],
	       char *err, int errlen)
{
	struct peer_link *l = calloc(1, sizeof(*l));
	struct sockaddr_ll sll;
	struct ifreq ifr;
	int one = 1, rcvbuf = 8 << 20;

	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->q = calloc(DELAY_SLOTS, sizeof(*l->q));
	l->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (!l->q || l->fd < 0) {
		snprintf(err, errlen, "AF_PACKET socket: %s", strerror(errno));
		goto fail;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(l->fd, SIOCGIFINDEX, &ifr) < 0) {
		snprintf(err, errlen, "interface %s: %s", ifname, strerror(errno));
		goto fail;
	}
	l->ifindex = ifr.ifr_ifindex;
	if (ioctl(l->fd, SIOCGIFHWADDR, &ifr) < 0) {
		snprintf(err, errlen, "MAC of %s: %s", ifname, strerror(errno));
		goto fail;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = l->ifindex;
	if (bind(l->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		snprintf(err, errlen, "bind to %s: %s", ifname, strerror(errno));
		goto fail;
	}
	/* our own transmissions must not come back to us */
	setsockopt(l->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(l->fd, SOL_SOCKET, SO_SNDBUF, &rcvbuf, sizeof(rcvbuf));
	if (f)
		l->f = *f;
	l->rng = l->f.seed ? l->f.seed : 1;
	return l;
fail:
	if (l->fd >= 0)
		close(l->fd);
	free(l->q);
	free(l);
	return NULL;
}

void
peer_link_close(struct peer_link *l)
{
	if (!l)
		return;
	peer_link_flush(l, UINT64_MAX);
	close(l->fd);
	free(l->q);
	free(l);
}

static void
raw_send(struct peer_link *l, const uint8_t *frame, uint32_t len)
{
	for (int tries = 0; tries < 1000; tries++) {
		if (send(l->fd, frame, len, 0) == (ssize_t)len) {
			l->st.tx++;
			return;
		}
		if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
			break;
		usleep(10);
	}
	l->st.tx_err++;
}

static double
uniform(struct peer_link *l)
{
	return (double)(peer_rand(&l->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static void
hold(struct peer_link *l, const uint8_t *frame, uint32_t len, uint64_t due)
{
	if (l->n_delayed == DELAY_SLOTS) {
		l->st.delay_queue_full++;
		raw_send(l, frame, len);
		return;
	}
	l->q[l->n_delayed].due = due;
	l->q[l->n_delayed].len = len;
	memcpy(l->q[l->n_delayed].frame, frame, len);
	l->n_delayed++;
}

uint64_t
peer_link_flush(struct peer_link *l, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	/* release in due order (stable: earliest due, then earliest held) */
	for (;;) {
		uint32_t best = UINT32_MAX;

		for (uint32_t i = 0; i < l->n_delayed; i++)
			if (l->q[i].due <= now &&
			    (best == UINT32_MAX || l->q[i].due < l->q[best].due))
				best = i;
		if (best == UINT32_MAX)
			break;
		raw_send(l, l->q[best].frame, l->q[best].len);
		/* keep insertion order of the rest: shift down */
		memmove(&l->q[best], &l->q[best + 1],
			(l->n_delayed - best - 1) * sizeof(l->q[0]));
		l->n_delayed--;
	}
	for (uint32_t i = 0; i < l->n_delayed; i++)
		if (l->q[i].due - now < next)
			next = l->q[i].due - now;
	return next;
}

void
peer_link_send(struct peer_link *l, const uint8_t *frame, uint32_t len)
{
	uint64_t now, due;
	int copies = 1;

	if (l->f.loss > 0 && uniform(l) < l->f.loss) {
		l->st.fault_lost++;
		return;
	}
	if (l->f.dup > 0 && uniform(l) < l->f.dup) {
		l->st.fault_dup++;
		copies = 2;
	}
	if (l->f.delay_us == 0 && !(l->f.reorder > 0)) {
		while (copies--)
			raw_send(l, frame, len);
		return;
	}
	now = peer_now_ns();
	due = now + (uint64_t)l->f.delay_us * 1000;
	if (l->f.delay_us)
		l->st.fault_delayed++;
	if (l->f.reorder > 0 && uniform(l) < l->f.reorder) {
		l->st.fault_reordered++;
		due += (uint64_t)(l->f.reorder_us ? l->f.reorder_us : 200) * 1000;
	}
	while (copies--) {
		if (due <= now)
			raw_send(l, frame, len);
		else
			hold(l, frame, len, due);
	}
	peer_link_flush(l, now);
}

int
peer_link_recv(struct peer_link *l, uint8_t *buf, uint32_t cap, uint64_t timeout_ns)
{
	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(l->fd, buf, cap, 0, (struct sockaddr *)&from, &fl);
		uint64_t now, wait;
		struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
		struct timespec ts;

		if (n > 0) {
			if (from.sll_pkttype == PACKET_OUTGOING)
				continue;
			l->st.rx++;
			return (int)n;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n == 0)
			continue;
		now = peer_now_ns();
		wait = peer_link_flush(l, now);
		if (timeout_ns == 0)
			return 0;
		if (wait > timeout_ns)
			wait = timeout_ns;
		ts.tv_sec = (time_t)(wait / 1000000000ull);
		ts.tv_nsec = (long)(wait % 1000000000ull);
		if (ppoll(&pfd, 1, &ts, NULL) <= 0) {
			peer_link_flush(l, peer_now_ns());
			return 0;
		}
		timeout_ns = 1; /* data is there: take it, do not wait again */
	}
}

const struct peer_link_stats *
peer_link_stats(struct peer_link *l)
{
	struct tpacket_stats ks;
	socklen_t kl = sizeof(ks);

	/* (the kernel resets its counters on every read) */
	if (getsockopt(l->fd, SOL_PACKET, PACKET_STATISTICS, &ks, &kl) == 0)
		l->st.rx_dropped += ks.tp_drops;
	return &l->st;
}
