/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c — the memory server role: a peer_resp on one interface until
 * told to stop, then a summary with the lock words and records the lock
 * workloads keep, so the run can be judged by memory, the ground truth.
 * With --atomic-unit the responder models an RNIC atomic unit
 * (lib/peer/peer_aunit.h) and the loop wakes when a waiting atomic is due.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roce_peer.h"

/*
 * The kernel in our netns owns the same IP address and would answer every
 * RoCE frame with an ICMP port unreachable.  A bound UDP/4791 socket that is
 * never read keeps it quiet (its queue fills, the rest is dropped).
 */
int rp_udp_guard(void);
int
rp_udp_guard(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(ROCE_UDP_PORT) };
	int one = 1, small = 4096;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
rp_ctl_socket(uint32_t ip, uint16_t port, uint16_t *bound_port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = ip };
	socklen_t sl = sizeof(sin);
	int small = 4096;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) < 0) {
		close(fd);
		return -1;
	}
	*bound_port = ntohs(sin.sin_port);
	return fd;
}

int
rp_ctl_send(int fd, uint32_t ip, uint16_t port, const struct peer_ctl_msg *m)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = ip };
	uint8_t buf[PEER_CTL_LEN];
	uint32_t n = peer_ctl_encode(buf, sizeof(buf), m);

	return sendto(fd, buf, n, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)n ? 0 : -1;
}

/*
 * A client re-created QP g and asks us to do the same (RTR at m->psn).  A
 * resent request of an incarnation already done is only answered again: the
 * new incarnation may have started sending by then.  Frames this server
 * still holds back (fault delay) belong to the old incarnation: they leave
 * before the answer, as they would have left a real NIC before the reset.
 */
static void
on_ctl(const struct rp_opts *o, struct peer_resp *r, struct peer_link *link, int ctl_fd,
       uint32_t *incarnation, const struct peer_ctl_msg *m, uint32_t src_ip,
       uint16_t src_port, uint64_t *bad)
{
	struct peer_ctl_msg ans = *m;
	uint32_t g = m->server_qpn - o->server_qpn_base;

	if (m->type != PEER_CTL_RECONNECT || m->server_qpn < o->server_qpn_base ||
	    g >= o->max_qps || m->client_qpn != ((o->client_qpn_base + g) & ROCE_QPN_MASK) ||
	    m->incarnation == 0 || ctl_fd < 0) {
		(*bad)++;
		return;
	}
	if (m->incarnation < incarnation[g])
		return;    /* older than the incarnation running now */
	if (m->incarnation > incarnation[g]) {
		peer_link_flush(link, UINT64_MAX);
		peer_resp_reset_qp(r, g, m->psn);
		incarnation[g] = m->incarnation;
	}
	ans.type = PEER_CTL_RECONNECTED;
	if (rp_ctl_send(ctl_fd, src_ip, src_port, &ans))
		(*bad)++;
}

static void
json_stats(FILE *f, const struct peer_resp_stats *s, const struct peer_link_stats *ls)
{
#define S(x) fprintf(f, "\"%s\": %llu, ", #x, (unsigned long long)s->x)
	S(rx_frames); S(rx_not_mine); S(rx_bad_icrc); S(rx_malformed); S(rx_not_request);
	S(unknown_qp); S(peer_mismatch); S(writes); S(reads); S(atomics); S(sends);
	S(read_resp_pkts); S(acks); S(naks_seq); S(naks_access); S(naks_invalid);
	S(seq_dropped); S(dup_writes); S(dup_reads); S(dup_atomics); S(dup_unknown);
	S(coalesced); S(qp_resets);
	S(aunit_waited); S(aunit_wait_ns); S(aunit_held); S(aunit_held_max);
	S(aunit_queue_full); S(aunit_table_full); S(aunit_flushed);
#undef S
#define L(x) fprintf(f, "\"link_%s\": %llu, ", #x, (unsigned long long)ls->x)
	L(tx); L(rx); L(tx_err); L(fault_lost); L(fault_dup); L(fault_reordered);
	L(fault_delayed); L(rx_dropped);
#undef L
}

/* Walk each key's version chain in memory: its length (without the head)
 * must equal the commits all clients made; every node must hold its key. */
static void
dump_clover(FILE *f, struct peer_resp *r, const struct rp_opts *o)
{
	uint64_t base = o->mrs[0].base + RP_CLOVER_OFF, bad = 0;

	fprintf(f, "\"clover_chain_len\": [");
	for (uint32_t k = 0; k < o->dump_clover; k++) {
		uint64_t va = base + (uint64_t)k * RP_CLOVER_NODE, len = 0;
		uint8_t *n;

		while ((n = peer_resp_mem(r, va, RP_CLOVER_NODE)) && len < 10000000) {
			uint64_t next = roce_ld64(n), key = 0;

			for (int i = 7; i >= 0; i--)
				key = key << 8 | n[8 + i];
			if (len && key != k)
				bad++;
			if (!next)
				break;
			va = next;
			len++;
		}
		if (!n)
			bad++;
		fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)len);
	}
	fprintf(f, "], \"clover_bad_nodes\": %llu}\n", (unsigned long long)bad);
}

/* Longest the loop sleeps in one receive: how soon it notices a stop. */
#define RP_IDLE_NS 50000000ull

/* Unit time of one atomic, whole ns (0: no model). */
static uint64_t
atomic_unit_ns(const struct rp_opts *o)
{
	uint64_t ns;

	if (!(o->atomic_unit_rate > 0))
		return 0;
	ns = (uint64_t)(1e9 / o->atomic_unit_rate + 0.5);
	return ns ? ns : 1;
}

/* Run the modelled atomics that are due; returns how long the next receive
 * may sleep: until the next one is due (it runs then, not when the next
 * frame happens to come), else the idle tick. */
static uint64_t
run_due_atomics(struct peer_resp *r, bool model)
{
	uint64_t due;

	if (!model)
		return RP_IDLE_NS;
	due = peer_resp_poll(r, peer_now_ns());
	return due < RP_IDLE_NS ? due : RP_IDLE_NS;
}

/* Said on every summary the model is on for: it is not a NIC. */
static void
print_atomic_unit(const struct rp_opts *o, const struct peer_resp_stats *s)
{
	printf("server atomic unit: MODEL of an RNIC atomic unit (not a NIC), %g atomics/s per "
	       "8-byte word (%llu ns each): %llu of %llu atomics waited, %.3f s modelled wait "
	       "in all; %llu requests held behind them (at most %llu at once), %llu dropped "
	       "(held queue full), %llu dropped (unit table full)\n",
	       o->atomic_unit_rate, (unsigned long long)atomic_unit_ns(o),
	       (unsigned long long)s->aunit_waited, (unsigned long long)s->atomics,
	       s->aunit_wait_ns / 1e9, (unsigned long long)s->aunit_held,
	       (unsigned long long)s->aunit_held_max, (unsigned long long)s->aunit_queue_full,
	       (unsigned long long)s->aunit_table_full);
}

int
rp_server(const struct rp_opts *o)
{
	struct peer_resp_cfg cfg = { 0 };
	struct peer_link *link;
	struct peer_resp *r;
	static uint8_t buf[65536];
	char err[256];
	uint64_t t0, next_progress, end, ctl_bad = 0;
	uint32_t *incarnation;
	uint16_t ctl_port;
	int guard, ctl_fd;

	link = peer_link_open(o->iface, &o->faults, cfg.self.mac, err, sizeof(err));
	if (!link) {
		fprintf(stderr, "roce-peer server: %s\n", err);
		return 2;
	}
	cfg.self.ip = o->ip;
	cfg.self.udp_sport = 0xc000 | (o->psn_seed & 0x3fff);
	cfg.qpn_base = o->server_qpn_base;
	cfg.peer_qpn_base = o->client_qpn_base;
	cfg.max_qps = o->max_qps;
	cfg.psn_seed = o->psn_seed;
	cfg.fixed_psn = o->fixed_psn;
	cfg.initial_psn = o->initial_psn;
	cfg.pmtu = o->pmtu;
	cfg.ack_mode = o->ack_mode;
	cfg.ack_k = o->ack_k;
	cfg.n_mrs = o->n_mrs;
	memcpy(cfg.mrs, o->mrs, sizeof(cfg.mrs));
	cfg.atomic_unit_ns = atomic_unit_ns(o);
	cfg.atomic_unit_queue = o->atomic_unit_queue;
	r = peer_resp_create(&cfg, link, err, sizeof(err));
	incarnation = calloc(o->max_qps, sizeof(*incarnation));
	if (r && !incarnation)
		snprintf(err, sizeof(err), "out of memory");
	if (!r || !incarnation) {
		free(incarnation);
		peer_resp_destroy(r);
		fprintf(stderr, "roce-peer server: %s\n", err);
		peer_link_close(link);
		return 2;
	}
	guard = rp_udp_guard();
	if (guard < 0)
		fprintf(stderr, "roce-peer server: warning: cannot bind UDP/%d (%s): the kernel "
			"may answer with ICMP\n", ROCE_UDP_PORT, strerror(errno));
	ctl_fd = rp_ctl_socket(o->ip, PEER_CTL_PORT, &ctl_port);
	if (ctl_fd < 0)
		fprintf(stderr, "roce-peer server: warning: cannot bind UDP/%d (%s): clients "
			"cannot reconnect\n", PEER_CTL_PORT, strerror(errno));
	if (o->ready_file) {
		FILE *f = fopen(o->ready_file, "w");

		if (f)
			fclose(f);
	}
	t0 = peer_now_ns();
	next_progress = o->progress_s > 0 ? t0 + (uint64_t)(o->progress_s * 1e9) : UINT64_MAX;
	end = o->duration_s > 0 ? t0 + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	while (!rp_stop) {
		int n = peer_link_recv(link, buf, sizeof(buf), run_due_atomics(r, cfg.atomic_unit_ns));
		uint64_t now;

		if (n > 0) {
			struct peer_ctl_msg m;
			uint32_t sip, dip;
			uint16_t sport, dport;

			if (peer_ctl_from_frame(buf, (uint32_t)n, PEER_CTL_PORT, &m, &sip, &dip,
						&sport, &dport)) {
				if (dip == o->ip && dport == PEER_CTL_PORT)
					on_ctl(o, r, link, ctl_fd, incarnation, &m, sip, sport,
					       &ctl_bad);
			} else {
				peer_resp_input(r, buf, (uint32_t)n);
			}
		} else if (n < 0) {
			fprintf(stderr, "roce-peer server: receive: %s\n", strerror(-n));
			break;
		}
		now = peer_now_ns();
		if (now >= end)
			break;
		if (now >= next_progress) {
			const struct peer_resp_stats *s = peer_resp_stats(r);

			next_progress += (uint64_t)(o->progress_s * 1e9);
			printf("server t=%.1fs rx=%llu writes=%llu reads=%llu atomics=%llu "
			       "naks=%llu dups=%llu bad_icrc=%llu qps=%u\n", (now - t0) / 1e9,
			       (unsigned long long)s->rx_frames, (unsigned long long)s->writes,
			       (unsigned long long)s->reads, (unsigned long long)s->atomics,
			       (unsigned long long)s->naks_seq,
			       (unsigned long long)(s->dup_writes + s->dup_reads + s->dup_atomics),
			       (unsigned long long)s->rx_bad_icrc, peer_resp_active_qps(r));
			if (cfg.atomic_unit_ns)
				printf("server t=%.1fs atomic unit (model): waited=%llu wait=%.3fs "
				       "held_now=%llu\n", (now - t0) / 1e9,
				       (unsigned long long)s->aunit_waited, s->aunit_wait_ns / 1e9,
				       (unsigned long long)s->aunit_held);
			fflush(stdout);
		}
	}
	peer_link_flush(link, UINT64_MAX);

	if (!o->quiet) {
		const struct peer_resp_stats *s = peer_resp_stats(r);

		printf("server done: rx=%llu writes=%llu reads=%llu atomics=%llu acks=%llu "
		       "coalesced=%llu naks_seq=%llu dups=%llu/%llu/%llu bad_icrc=%llu qps=%u\n",
		       (unsigned long long)s->rx_frames, (unsigned long long)s->writes,
		       (unsigned long long)s->reads, (unsigned long long)s->atomics,
		       (unsigned long long)s->acks, (unsigned long long)s->coalesced,
		       (unsigned long long)s->naks_seq, (unsigned long long)s->dup_writes,
		       (unsigned long long)s->dup_reads, (unsigned long long)s->dup_atomics,
		       (unsigned long long)s->rx_bad_icrc, peer_resp_active_qps(r));
		if (cfg.atomic_unit_ns)
			print_atomic_unit(o, s);
	}
	if (o->json) {
		FILE *f = strcmp(o->json, "-") ? fopen(o->json, "w") : stdout;
		uint64_t base = o->mrs[0].base;

		if (!f) {
			fprintf(stderr, "roce-peer server: %s: %s\n", o->json, strerror(errno));
		} else {
			fprintf(f, "{\"role\": \"server\", \"active_qps\": %u, \"ctl_bad\": %llu, ",
				peer_resp_active_qps(r), (unsigned long long)ctl_bad);
			/* the model's rate (0: off) and its unit time */
			fprintf(f, "\"atomic_unit_model\": %s, \"atomic_unit_rate\": %.17g, "
				"\"atomic_unit_ns\": %llu, ", cfg.atomic_unit_ns ? "true" : "false",
				o->atomic_unit_rate, (unsigned long long)cfg.atomic_unit_ns);
			json_stats(f, peer_resp_stats(r), peer_link_stats(link));
			/* requests each QP took: which QPs carried the load */
			fprintf(f, "\"qp_executed\": [");
			for (uint32_t g = 0, n = 0; g < o->max_qps; g++)
				if (peer_resp_qp_executed(r, g))
					fprintf(f, "%s%llu", n++ ? ", " : "",
						(unsigned long long)peer_resp_qp_executed(r, g));
			fprintf(f, "], ");
			fprintf(f, "\"lock_words\": [");
			for (uint32_t i = 0; i < o->dump_locks; i++) {
				uint8_t *w = peer_resp_mem(r, base + RP_LOCK_OFF + 8ull * i, 8);

				fprintf(f, "%s%llu", i ? ", " : "",
					(unsigned long long)(w ? roce_ld64(w) : 0));
			}
			fprintf(f, "], \"records\": [");
			for (uint32_t i = 0; i < o->dump_locks; i++) {
				uint8_t *w = peer_resp_mem(r, base + RP_RECORD_OFF +
							   (uint64_t)RP_RECORD_STRIDE * i, 24);

				fprintf(f, "%s[%llu, %llu, %llu]", i ? ", " : "",
					(unsigned long long)(w ? roce_ld64(w) : 0),
					(unsigned long long)(w ? roce_ld64(w + 8) : 0),
					(unsigned long long)(w ? roce_ld64(w + 16) : 0));
			}
			{
				uint8_t *w = peer_resp_mem(r, base + RP_BENCH_OFF, 8);

				fprintf(f, "], \"bench_counter\": %llu, ",
					(unsigned long long)(w ? roce_ld64(w) : 0));
			}
			dump_clover(f, r, o);
			if (f != stdout)
				fclose(f);
		}
	}
	if (guard >= 0)
		close(guard);
	if (ctl_fd >= 0)
		close(ctl_fd);
	free(incarnation);
	peer_resp_destroy(r);
	peer_link_close(link);
	return 0;
}
