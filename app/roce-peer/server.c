/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c — the memory server role: a peer_resp on one interface until
 * told to stop, then a summary with the lock words and records the lock
 * workloads keep, so the run can be judged by memory, the ground truth.
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

static void
json_stats(FILE *f, const struct peer_resp_stats *s, const struct peer_link_stats *ls)
{
#define S(x) fprintf(f, "\"%s\": %llu, ", #x, (unsigned long long)s->x)
	S(rx_frames); S(rx_not_mine); S(rx_bad_icrc); S(rx_malformed); S(rx_not_request);
	S(unknown_qp); S(peer_mismatch); S(writes); S(reads); S(atomics); S(sends);
	S(read_resp_pkts); S(acks); S(naks_seq); S(naks_access); S(naks_invalid);
	S(seq_dropped); S(dup_writes); S(dup_reads); S(dup_atomics); S(dup_unknown);
	S(coalesced);
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

int
rp_server(const struct rp_opts *o)
{
	struct peer_resp_cfg cfg = { 0 };
	struct peer_link *link;
	struct peer_resp *r;
	static uint8_t buf[65536];
	char err[256];
	uint64_t t0, next_progress, end;
	int guard;

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
	cfg.pmtu = o->pmtu;
	cfg.ack_mode = o->ack_mode;
	cfg.ack_k = o->ack_k;
	cfg.n_mrs = o->n_mrs;
	memcpy(cfg.mrs, o->mrs, sizeof(cfg.mrs));
	r = peer_resp_create(&cfg, link, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "roce-peer server: %s\n", err);
		peer_link_close(link);
		return 2;
	}
	guard = rp_udp_guard();
	if (guard < 0)
		fprintf(stderr, "roce-peer server: warning: cannot bind UDP/%d (%s): the kernel "
			"may answer with ICMP\n", ROCE_UDP_PORT, strerror(errno));
	if (o->ready_file) {
		FILE *f = fopen(o->ready_file, "w");

		if (f)
			fclose(f);
	}
	t0 = peer_now_ns();
	next_progress = o->progress_s > 0 ? t0 + (uint64_t)(o->progress_s * 1e9) : UINT64_MAX;
	end = o->duration_s > 0 ? t0 + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	while (!rp_stop) {
		int n = peer_link_recv(link, buf, sizeof(buf), 50000000);
		uint64_t now;

		if (n > 0)
			peer_resp_input(r, buf, (uint32_t)n);
		else if (n < 0) {
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
	}
	if (o->json) {
		FILE *f = strcmp(o->json, "-") ? fopen(o->json, "w") : stdout;
		uint64_t base = o->mrs[0].base;

		if (!f) {
			fprintf(stderr, "roce-peer server: %s: %s\n", o->json, strerror(errno));
		} else {
			fprintf(f, "{\"role\": \"server\", \"active_qps\": %u, ", peer_resp_active_qps(r));
			json_stats(f, peer_resp_stats(r), peer_link_stats(link));
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
	peer_resp_destroy(r);
	peer_link_close(link);
	return 0;
}
