/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_worker.c — CAS→WRITE and ACK→ATOMIC ACK through swordd's worker
 * (sword_worker_process with atomic replacement attached), one frame at a
 * time (the reference path, w->one_at_a_time) against staged bursts
 * (issue #13).  Not a test: prints ns per frame.
 *
 *   bench_worker [pairs-per-run] [runs] [ref|staged|both|pass] [ICRC path]
 *
 * pass: the same frames to and from a memory server swordd does not
 * manage, one frame at a time: what the worker costs a frame it forwards
 * untouched (classify, shard lookup, counters, TX batching), the part of
 * swordd's pass-through that testpmd io does not do.
 * Each run sends bursts of 32 CAS requests (one word, CAS(v, v^1)
 * toggling it), then their 32 ACKs, through each worker in turn (both:
 * the two share the machine's load).  Only sword_worker_process is timed,
 * and counted under valgrind --tool=callgrind --collect-atstart=no
 * (mbufs are filled and the output freed outside): total instructions /
 * (2 x pairs) is the cost per frame of the whole worker path: classify,
 * ICRC check, decision, rewrite, re-sign, counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "bench_util.h"

#include "rdma_model.h"
#include "roce.h"
#include "roce_internal.h"
#include "ser_fn.h"
#include "sword_config.h"
#include "sword_worker.h"

#define CHUNK 32
#define SRV_IP RTE_BE32(0xc6120001)
#define CL_IP RTE_BE32(0xc6120010)
#define UNMANAGED_IP RTE_BE32(0xc6120002)

static struct rte_mempool *pool;
static struct sword_config cfg;
static struct sword_shard_map shards;

/* One worker and the connection it serves. */
struct bench {
	struct sword_worker w;
	struct rm_addr up, down;
	uint32_t psn, msn;
	uint64_t value;
	double *chunk_ns;          /* per chunk of CHUNK frames */
	size_t n_chunks;
};

/* CAS(value, value^1) and the server's answer to it (as bench_serializer:
 * an ATOMIC ACK the first time, to learn the word, then the WRITE's ACK). */
static void
build_pair(struct bench *b, uint8_t *req, uint32_t *req_len, uint8_t *ack,
	   uint32_t *ack_len, bool atomic_ack)
{
	uint8_t ext[28], aeth[12];
	uint64_t v;

	v = rte_cpu_to_be_64(0x10000);
	memcpy(ext, &v, 8);
	v = rte_cpu_to_be_32(0x2521);
	memcpy(ext + 8, &v, 4);
	v = rte_cpu_to_be_64(b->value ^ 1);
	memcpy(ext + 12, &v, 8);
	v = rte_cpu_to_be_64(b->value);
	memcpy(ext + 20, &v, 8);
	*req_len = rm_build(req, &b->up, ROCE_RC_COMPARE_SWAP, b->psn, true, ext, 28,
			    NULL, 0);
	b->msn++;
	v = rte_cpu_to_be_32((0x1fu << 24) | (b->msn & 0xffffff));
	memcpy(aeth, &v, 4);
	if (atomic_ack) {
		v = rte_cpu_to_be_64(b->value);
		memcpy(aeth + 4, &v, 8);
		*ack_len = rm_build(ack, &b->down, ROCE_RC_ATOMIC_ACKNOWLEDGE, b->psn,
				    false, aeth, 12, NULL, 0);
	} else {
		*ack_len = rm_build(ack, &b->down, ROCE_RC_ACKNOWLEDGE, b->psn, false,
				    aeth, 4, NULL, 0);
	}
	b->value ^= 1;
	b->psn = (b->psn + 1) & 0xffffff;
}

static struct rte_mbuf *
mbuf_of(const uint8_t *buf, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (m == NULL)
		abort();
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	m->port = 0;
	return m;
}

/* n frames through the worker as one burst; the time it took. */
static double
through(struct bench *b, uint8_t (*bufs)[128], const uint32_t *lens, unsigned int n)
{
	static struct sword_tx_batch tx;
	struct rte_mbuf *pkts[CHUNK];
	double t0, t;

	for (unsigned int i = 0; i < n; i++)
		pkts[i] = mbuf_of(bufs[i], lens[i]);
	sword_tx_batch_reset(&tx);
	t0 = now_s();
	CALLGRIND_TOGGLE_COLLECT;
	sword_worker_process(&b->w, 0, pkts, (uint16_t)n, &tx);
	CALLGRIND_TOGGLE_COLLECT;
	t = now_s() - t0;
	for (unsigned int s = 0; s < SWORD_SIDE_NUM; s++)
		rte_pktmbuf_free_bulk(tx.pkts[s], tx.n[s]);
	return t;
}

/* pairs request+response pairs, CHUNK requests then their CHUNK ACKs. */
static void
run(struct bench *b, uint64_t pairs)
{
	uint8_t req[CHUNK][128], ack[CHUNK][128];
	uint32_t req_len[CHUNK], ack_len[CHUNK];

	for (uint64_t done = 0; done < pairs; done += CHUNK) {
		for (unsigned int i = 0; i < CHUNK; i++)
			build_pair(b, req[i], &req_len[i], ack[i], &ack_len[i], false);
		b->chunk_ns[b->n_chunks++] = through(b, req, req_len, CHUNK) * 1e9 / CHUNK;
		b->chunk_ns[b->n_chunks++] = through(b, ack, ack_len, CHUNK) * 1e9 / CHUNK;
	}
}

static void
bench_init(struct bench *b, bool one_at_a_time, size_t max_chunks, rte_be32_t srv_ip)
{
	uint8_t req[1][128], ack[1][128];
	uint32_t req_len[1], ack_len[1];

	sword_worker_init(&b->w, &cfg, &shards, 0);
	b->w.pool = pool;
	b->w.one_at_a_time = one_at_a_time;
	if (sword_worker_attach_fn(&b->w, &ser_fn_ops, SOCKET_ID_ANY) != 0)
		abort();
	b->up = (struct rm_addr){ .src_ip = CL_IP, .dst_ip = srv_ip, .dest_qpn = 0x100 };
	b->down = (struct rm_addr){ .src_ip = srv_ip, .dst_ip = CL_IP, .dest_qpn = 0x200 };
	b->psn = 1000;
	b->chunk_ns = calloc(max_chunks, sizeof(double));
	if (b->chunk_ns == NULL)
		abort();
	/* the word is learned from a real ATOMIC ACK, and the server's MSN
	 * offset from two (ser_resp.c resp_learn_msn), not counted */
	for (int i = 0; i < 2; i++) {
		build_pair(b, req[0], &req_len[0], ack[0], &ack_len[0], true);
		CALLGRIND_TOGGLE_COLLECT;
		through(b, req, req_len, 1);
		through(b, ack, ack_len, 1);
		CALLGRIND_TOGGLE_COLLECT;
	}
}

static void
config_load(void)
{
	const char *sets[] = {
		"ports.mode=one-port", "server.mem0.ip=198.18.0.1",
		"lock.l0.server=mem0", "lock.l0.rkey=0x2521", "lock.l0.base=0x10000",
		"lock.l0.length=1024", "lock.l0.word_size=8",
		"features.atomic_replacement=on", "atomic.learn_holdoff_ms=0",
		"atomic.out_of_band=on",   /* the frames' QPs are set up out of band */
	};
	char err[256];

	sword_config_defaults(&cfg);
	for (unsigned int i = 0; i < RTE_DIM(sets); i++)
		if (sword_config_set(&cfg, sets[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: %s\n", sets[i], err);
			exit(1);
		}
	if (sword_config_validate(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	sword_shard_map_build(&shards, &cfg);
}

static uint64_t
granted(struct sword_worker *w)
{
	const struct sword_fn_ops *ops = w->fn[0].ops;

	ops->publish(w->fn[0].state, &w->stats.fn[w->fn[0].counter_base]);
	for (unsigned int i = 0; i < ops->n_counters; i++)
		if (!strcmp(ops->counter_names[i], "atomic_granted"))
			return w->stats.fn[w->fn[0].counter_base + i];
	return 0;
}

/* The median over runs of each run's median chunk, requests and ACKs. */
static void
report(const char *name, struct bench *b, int runs, size_t per_run)
{
	double *req = calloc((size_t)runs, sizeof(double));
	double *ack = calloc((size_t)runs, sizeof(double));
	double *tmp = calloc(per_run, sizeof(double));

	for (int r = 0; r < runs; r++) {
		const double *c = b->chunk_ns + (size_t)r * per_run;

		for (int kind = 0; kind < 2; kind++) {
			size_t n = 0;

			for (size_t i = (size_t)kind; i < per_run; i += 2)
				tmp[n++] = c[i];
			qsort(tmp, n, sizeof(double), cmp_d);
			(kind == 0 ? req : ack)[r] = tmp[n / 2];
		}
	}
	qsort(req, (size_t)runs, sizeof(double), cmp_d);
	qsort(ack, (size_t)runs, sizeof(double), cmp_d);
	printf("%-7s ICRC %s: %s %.1f ns, %s %.1f ns per frame "
	       "(median chunk of %d, median of %d runs; fastest %.1f / %.1f); granted %llu\n",
	       name, roce_icrc_impl(), b->w.fn[0].ops && strcmp(name, "pass-through") ?
	       "CAS->WRITE" : "CAS", req[runs / 2], strcmp(name, "pass-through") ?
	       "ACK->ATOMIC ACK" : "ACK", ack[runs / 2], CHUNK, runs, req[0],
	       ack[0], (unsigned long long)granted(&b->w));
	free(req);
	free(ack);
	free(tmp);
}

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-pci", "--no-shconf", "--no-huge", "-m", "256",
			"--log-level", "lib.eal:error", "--log-level", "user1:error", NULL };
	uint64_t pairs = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *mode = argc > 3 ? argv[3] : "both";
	bool pass = strcmp(mode, "pass") == 0;
	bool do_ref = strcmp(mode, "staged") != 0, do_staged = !pass && strcmp(mode, "ref") != 0;
	static struct bench ref, staged;
	size_t per_run;

	pairs = (pairs + CHUNK - 1) / CHUNK * CHUNK;
	per_run = (size_t)(pairs / CHUNK) * 2;
	if (runs < 1 || pairs < 1 || rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0)
		return 1;
	roce_crc_init();
	if (argc > 4) {
		int pi;

		for (pi = ROCE_ICRC_PATH_GENERIC; pi < ROCE_ICRC_PATH_NUM; pi++)
			if (strcmp(argv[4], roce_icrc_path_name(pi)) == 0)
				break;
		if (pi == ROCE_ICRC_PATH_NUM || !roce_icrc_path_supported(pi)) {
			fprintf(stderr, "ICRC path %s: unknown or not on this CPU\n", argv[4]);
			return 1;
		}
		roce_icrc_set_path(pi);
	}
	pool = rte_pktmbuf_pool_create("bench", 1023, 0, 0, 2048 + 128, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	config_load();
	if (do_ref)
		bench_init(&ref, true, per_run * (size_t)runs, pass ? UNMANAGED_IP : SRV_IP);
	if (do_staged)
		bench_init(&staged, false, per_run * (size_t)runs, SRV_IP);
	for (int r = 0; r < runs; r++) {
		if (do_ref)
			run(&ref, pairs);
		if (do_staged)
			run(&staged, pairs);
	}
	if (do_ref)
		report(pass ? "pass-through" : "one-at-a-time", &ref, runs, per_run);
	if (do_staged)
		report("staged", &staged, runs, per_run);
	rte_eal_cleanup();
	return 0;
}
