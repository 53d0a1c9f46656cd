/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_worker_burst.c — swordd's staged bursts (sword_worker.c top
 * comment, issue #13) against the one-frame-at-a-time reference path.
 *
 * Why it exists: staging classifies a whole burst, verifies the ICRCs the
 * functions would check together and passes the verdicts as
 * ctx->icrc_ok.  Nothing of that may be visible outside: the same frames
 * must leave, byte for byte, in the same order on each side, go to the
 * same hand-off lists, and every counter must be the same.  The input
 * mixes what a worker meets: atomic replacement's whole cycle (CAS →
 * WRITE, coalesced ACKs expanded into ATOMIC ACKs) from the RC models,
 * retransmissions, copies with a bad ICRC (never rewritten nor
 * re-signed), truncated RoCE (malformed), non-RoCE, frames another
 * worker owns, and the ConnectX capture (RDMA CM, masked CAS, READs).
 * It goes through a reference worker and a staged one in bursts of 1 to
 * 64 frames, from one port and from the hand-off ring (mixed ports).
 * A second set adds Clover (first on requests, last on responses) and
 * its capture, with atomic replacement on the same server, so that
 * Clover too gets frames the worker verified.
 */
#include <check.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "clover_fn.h"
#include "rdma_model.h"
#include "roce.h"
#include "ser_fn.h"
#include "sword_config.h"
#include "sword_worker.h"

static struct rte_mempool *pool;

#define SRV_IP RTE_BE32(0xc6120001)     /* 198.18.0.1: the models' server */
#define OTHER_IP RTE_BE32(0xc6120009)   /* 198.18.0.9: worker 1's server */
#define CL_IP RTE_BE32(0xc6120010)
#define CLIENT_PORT 0
#define SERVER_PORT 1
#define MAX_IN 2048

struct in_frame {
	uint16_t port;
	uint16_t len;
	uint8_t buf[RM_FRAME_MAX];
};

/* The input every worker gets, in order. */
static struct in_frame *input;
static unsigned int n_input;

/* What a worker sent: per side and per hand-off target, in order. */
struct out_log {
	unsigned int n[SWORD_SIDE_NUM + 2];
	struct in_frame *f[SWORD_SIDE_NUM + 2];
};

static const char *const config[] = {
	"ports.mode=two-port", "ports.client=0", "ports.server=1", "cores.workers=2",
	"server.mem0.ip=198.18.0.1", "server.mem0.worker=0",
	"server.other.ip=198.18.0.9", "server.other.worker=1",
	"server.m.ip=192.168.1.12", "server.m.worker=0",
	"lock.l0.server=mem0", "lock.l0.rkey=0x2521", "lock.l0.base=0x10000",
	"lock.l0.length=1024", "lock.l0.word_size=8",
	/* the ConnectX capture's lock words (as tests/serializer/test_daemon_replay.py) */
	"lock.masked.server=m", "lock.masked.rkey=0x2521", "lock.masked.base=0",
	"lock.masked.length=0x1000", "lock.masked.word_size=8",
	"lock.cas.server=m", "lock.cas.rkey=0x2a583", "lock.cas.base=0x5562cc8a7000",
	"lock.cas.length=0x1000", "lock.cas.word_size=8",
	"features.atomic_replacement=on", "atomic.learn_holdoff_ms=0",
	"atomic.out_of_band=on",   /* the frames' QPs are set up out of band */
};

/* The Clover set: conf/clover.conf's layout for the Clover captures'
 * server, and a lock region there (apart from Clover's nodes) so that
 * atomic replacement checks that server's frames (and the worker stages
 * them). */
static const char *const config_clover[] = {
	"server.clover0.ip=192.168.1.13", "server.clover0.worker=0",
	"lock.cl.server=clover0", "lock.cl.rkey=0x2521", "lock.cl.base=0x10000",
	"lock.cl.length=1024", "lock.cl.word_size=8",
	"features.clover=on", "clover.keys=1024", "clover.qps=64", "clover.cas=64",
	"clover.values.server=clover0", "clover.values.rkey=any", "clover.values.base=0",
	"clover.values.length=0", "clover.values.write_min=1024",
	"clover.values.key_offset=8", "clover.values.key_width=8",
	"clover.values.next_offset=0", "clover.values.read_min=1024",
};

static bool with_clover;

static struct sword_config cfg;
static struct sword_shard_map shards;

static void
config_load(void)
{
	char err[256];

	sword_config_defaults(&cfg);
	for (unsigned int i = 0; i < RTE_DIM(config); i++)
		ck_assert_msg(sword_config_set(&cfg, config[i], err, sizeof(err)) == 0,
			      "%s: %s", config[i], err);
	for (unsigned int i = 0; with_clover && i < RTE_DIM(config_clover); i++)
		ck_assert_msg(sword_config_set(&cfg, config_clover[i], err, sizeof(err)) == 0,
			      "%s: %s", config_clover[i], err);
	ck_assert_msg(sword_config_validate(&cfg, err, sizeof(err)) == 0, "%s", err);
	sword_shard_map_build(&shards, &cfg);
}

static void
worker_start(struct sword_worker *w, bool one_at_a_time)
{
	sword_worker_init(w, &cfg, &shards, 0);
	w->pool = pool;
	w->one_at_a_time = one_at_a_time;
	/* in chain order (sword_feature) */
	if (with_clover)
		ck_assert_int_eq(sword_worker_attach_fn(w, &clover_fn_ops, SOCKET_ID_ANY), 0);
	ck_assert_int_eq(sword_worker_attach_fn(w, &ser_fn_ops, SOCKET_ID_ANY), 0);
}

static void
add_input(uint16_t port, const uint8_t *buf, uint32_t len)
{
	ck_assert_uint_lt(n_input, MAX_IN);
	ck_assert_uint_le(len, RM_FRAME_MAX);
	input[n_input].port = port;
	input[n_input].len = (uint16_t)len;
	memcpy(input[n_input].buf, buf, len);
	n_input++;
}

static struct rte_mbuf *
mbuf_of(const uint8_t *buf, uint32_t len, uint16_t port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	ck_assert_ptr_nonnull(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	m->port = port;
	return m;
}

static void
log_push(struct out_log *log, unsigned int k, struct rte_mbuf *m)
{
	struct in_frame *f;

	ck_assert_uint_lt(log->n[k], MAX_IN * 2);
	f = &log->f[k][log->n[k]++];
	f->port = k;
	f->len = (uint16_t)rte_pktmbuf_data_len(m);
	memcpy(f->buf, rte_pktmbuf_mtod(m, uint8_t *), f->len);
	rte_pktmbuf_free(m);
}

/* One burst through w; what leaves goes to log (if any) and is freed. */
static void
burst(struct sword_worker *w, uint16_t in_port, const struct in_frame *in,
      unsigned int n, struct out_log *log)
{
	struct rte_mbuf *pkts[64];
	static struct sword_tx_batch b;

	ck_assert_uint_le(n, RTE_DIM(pkts));
	for (unsigned int i = 0; i < n; i++)
		pkts[i] = mbuf_of(in[i].buf, in[i].len, in[i].port);
	sword_tx_batch_reset(&b);
	sword_worker_process(w, in_port, pkts, (uint16_t)n, &b);
	for (unsigned int s = 0; s < SWORD_SIDE_NUM; s++)
		for (unsigned int i = 0; i < b.n[s]; i++) {
			if (log != NULL)
				log_push(log, s, b.pkts[s][i]);
			else
				rte_pktmbuf_free(b.pkts[s][i]);
		}
	for (unsigned int o = 0; o < 2; o++)
		for (unsigned int i = 0; i < b.n_handoff[o]; i++) {
			if (log != NULL)
				log_push(log, SWORD_SIDE_NUM + o, b.handoff[o][i]);
			else
				rte_pktmbuf_free(b.handoff[o][i]);
		}
}

static void log_init(struct out_log *log);
static void log_free(struct out_log *log);

/* ------------------------------------------------------------------ */
/* the input */

/* Frames of q through the recording worker (one burst), into the input. */
static void
record(struct sword_worker *w, struct rm_queue *q, uint16_t port, struct rm_queue *out)
{
	struct in_frame in[64];
	struct out_log log;
	struct rm_frame f;
	unsigned int n = 0;

	log_init(&log);
	while (rm_queue_take(q, 0, &f)) {
		add_input(port, f.buf, f.len);
		in[n].port = port;
		in[n].len = (uint16_t)f.len;
		memcpy(in[n].buf, f.buf, f.len);
		if (++n == RTE_DIM(in)) {
			burst(w, port, in, n, &log);
			n = 0;
		}
	}
	if (n)
		burst(w, port, in, n, &log);
	for (unsigned int k = 0; k < SWORD_SIDE_NUM; k++)
		for (unsigned int i = 0; i < log.n[k]; i++)
			ck_assert(rm_queue_push(out, log.f[k][i].buf, log.f[k][i].len));
	log_free(&log);
}

/* Two clients toggling a lock word with CAS through a worker, the server
 * coalescing its ACKs; every other round the clients time out before the
 * answers and retransmit (go-back-N).  Every frame the worker got is the
 * input's first part. */
static void
input_from_models(void)
{
	static struct sword_worker w;
	struct rm_responder srv;
	struct rm_client cl[2];
	struct rm_queue c2s, s2m, m2s, s2c;
	struct rm_frame f;

	worker_start(&w, true);
	ck_assert_int_eq(rm_responder_init(&srv, SRV_IP, 0x10000, 4096, 0x2521, true), 0);
	rm_queue_init(&c2s, 256);
	rm_queue_init(&s2m, 256);
	rm_queue_init(&m2s, 256);
	rm_queue_init(&s2c, 256);
	for (int c = 0; c < 2; c++) {
		struct rm_addr up = { .src_ip = CL_IP, .dst_ip = SRV_IP,
				      .dest_qpn = 0x100 + (uint32_t)c };
		struct rm_addr down = { .src_ip = SRV_IP, .dst_ip = CL_IP,
					.dest_qpn = 0x200 + (uint32_t)c };

		rm_responder_add_qp(&srv, 0x100 + (uint32_t)c, &down, 1000 + 5000 * (uint32_t)c);
		rm_client_init(&cl[c], c, &up, 0x200 + (uint32_t)c, 0x2521,
			       1000 + 5000 * (uint32_t)c);
	}
	uint64_t word[2] = { 0, 0 };  /* what each word holds if every CAS succeeds */

	for (int round = 0; round < 12; round++) {
		for (int c = 0; c < 2; c++)
			for (int i = 0; i < 4; i++) {
				uint64_t *v = &word[c];

				/* a word per client (no gating between them);
				 * one CAS in 4 fails: compare with a stale value */
				rm_client_post(&cl[c], &(struct rm_op){ .type = RM_CAS,
					.va = 0x10000 + 8 * (uint64_t)c,
					.a = { *v ^ 1, i == 3 ? *v ^ 1 : *v } }, &c2s);
				if (i != 3)
					*v ^= 1;
			}
		record(&w, &c2s, CLIENT_PORT, &s2m);
		if (round % 2 == 1) {
			for (int c = 0; c < 2; c++)
				rm_client_timeout(&cl[c], &c2s);
			record(&w, &c2s, CLIENT_PORT, &s2m);
		}
		while (rm_queue_take(&s2m, 0, &f))
			rm_responder_rx(&srv, f.buf, f.len, &m2s);
		rm_responder_flush(&srv, &m2s);
		record(&w, &m2s, SERVER_PORT, &s2c);
		while (rm_queue_take(&s2c, 0, &f)) {
			struct roce_pkt p;

			ck_assert_int_eq(roce_parse(f.buf, f.len, &p), ROCE_OK);
			ck_assert(p.qpn == 0x200 || p.qpn == 0x201);
			rm_client_rx(&cl[p.qpn - 0x200], f.buf, f.len, &c2s);
		}
		/* answers to retransmissions may make the clients send more */
		while (rm_queue_take(&c2s, 0, &f))
			;
	}
	sword_worker_detach_all(&w);
	rm_responder_free(&srv);
	rm_queue_free(&c2s);
	rm_queue_free(&s2m);
	rm_queue_free(&m2s);
	rm_queue_free(&s2c);
}

/* The ConnectX capture's frames (CM, masked CAS, CAS, READs, IGMP):
 * requests from the client port, the server's frames from the other. */
static void
input_from_capture(const char *name, uint32_t server_ip)
{
	char path[512], errb[PCAP_ERRBUF_SIZE];
	const char *dir = getenv("CAPTURES_DIR");
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "../shared/captures", name);
	pc = pcap_open_offline(path, errb);
	ck_assert_msg(pc != NULL, "%s: %s", path, errb);
	while (pcap_next_ex(pc, &h, &data) == 1) {
		struct roce_pkt p;
		bool from_srv = roce_parse(data, h->caplen, &p) == ROCE_OK &&
				p.ip_version == 4 && p.src_ip4 == server_ip;

		add_input(from_srv ? SERVER_PORT : CLIENT_PORT, data, h->caplen);
	}
	pcap_close(pc);
}

static uint32_t lcg = 12345;

static uint32_t
rnd(uint32_t n)
{
	lcg = lcg * 1103515245u + 12345u;
	return (lcg >> 8) % n;
}

/* Copy input[i] to the end, changed by how: 0 a payload/header byte
 * flipped (bad ICRC), 1 the ICRC flipped, 2 truncated inside the BTH
 * (malformed), 3 unchanged (a retransmission, later). */
static void
add_variant(unsigned int i, int how)
{
	struct in_frame v = input[i];
	struct roce_pkt p;

	if (roce_parse(v.buf, v.len, &p) != ROCE_OK)
		return;
	switch (how) {
	case 0:
		v.buf[p.bth_off + 12 + rnd(p.icrc_off - p.bth_off - 12)] ^= 0x10;
		break;
	case 1:
		v.buf[p.icrc_off] ^= 0x01;
		break;
	case 2:
		v.len = (uint16_t)(p.bth_off + 6);
		break;
	default:
		break;
	}
	add_input(v.port, v.buf, v.len);
}

/* Non-RoCE frames: ARP, and IPv4 UDP to another port. */
static void
add_non_roce(void)
{
	uint8_t arp[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06,
			    0, 1, 8, 0, 6, 4, 0, 1 };
	uint8_t udp[64];
	struct rm_addr a = { .src_ip = CL_IP, .dst_ip = SRV_IP, .dest_qpn = 0x100 };
	uint32_t len = rm_build(udp, &a, ROCE_RC_SEND_ONLY, 1, false, NULL, 0, NULL, 0);

	add_input(CLIENT_PORT, arp, sizeof(arp));
	udp[14 + 20 + 3] = 0;         /* UDP destination port 4791 → 0x1200 */
	add_input(SERVER_PORT, udp, len);
}

/* A CAS to worker 1's server: handed off. */
static void
add_other_worker(uint32_t psn)
{
	uint8_t buf[128], ext[28] = { 0 };
	struct rm_addr a = { .src_ip = CL_IP, .dst_ip = OTHER_IP, .dest_qpn = 0x300 };
	uint32_t len = rm_build(buf, &a, ROCE_RC_COMPARE_SWAP, psn, true, ext, sizeof(ext),
				NULL, 0);

	add_input(CLIENT_PORT, buf, len);
}

/* The models' and the capture's frames, then variants of them spread
 * through the whole (deterministic: a fixed LCG). */
static void
build_input(void)
{
	struct in_frame *mixed;
	unsigned int base, n_mixed = 0, extra;

	input = calloc(MAX_IN, sizeof(*input));
	mixed = calloc(MAX_IN, sizeof(*mixed));
	ck_assert(input != NULL && mixed != NULL);
	input_from_models();
	input_from_capture("rcuckoo-connectx.pcap", RTE_BE32(0xc0a8010c));
	if (with_clover)
		input_from_capture("clover-1thread-100pkt.pcap", RTE_BE32(0xc0a8010d));
	base = n_input;
	for (unsigned int k = 0; k < base / 4; k++)
		add_variant(rnd(base), (int)rnd(4));
	for (unsigned int k = 0; k < 6; k++) {
		add_non_roce();
		add_other_worker(100 + k);
	}
	/* interleave: the first `base` frames keep their order (PSN order),
	 * the extra ones land at random places among them, after their
	 * original as often as before it */
	extra = n_input - base;
	for (unsigned int i = 0, j = 0; i < base || j < extra;) {
		if (j < extra && (i == base || rnd(base + extra) < extra))
			mixed[n_mixed++] = input[base + j++];
		else
			mixed[n_mixed++] = input[i++];
	}
	memcpy(input, mixed, sizeof(*input) * n_mixed);
	free(mixed);
}

/* ------------------------------------------------------------------ */
/* the comparison */

static void
log_init(struct out_log *log)
{
	memset(log, 0, sizeof(*log));
	for (unsigned int k = 0; k < SWORD_SIDE_NUM + 2; k++) {
		log->f[k] = malloc(sizeof(struct in_frame) * MAX_IN * 2);
		ck_assert_ptr_nonnull(log->f[k]);
	}
}

static void
log_free(struct out_log *log)
{
	for (unsigned int k = 0; k < SWORD_SIDE_NUM + 2; k++)
		free(log->f[k]);
}

/* The whole input through w, bursts of up to bsz frames: from one port
 * (a burst ends where the port changes), or, from_ring, as the hand-off
 * ring delivers them (ports mixed, routed by mbuf->port). */
static void
run(struct sword_worker *w, unsigned int bsz, bool from_ring, struct out_log *log)
{
	unsigned int i = 0;

	while (i < n_input) {
		unsigned int n = 1;

		while (i + n < n_input && n < bsz &&
		       (from_ring || input[i + n].port == input[i].port))
			n++;
		burst(w, from_ring ? SWORD_PORT_FROM_MBUF : input[i].port, &input[i], n, log);
		i += n;
	}
	for (unsigned int k = 0; k < w->n_fn; k++)
		if (w->fn[k].ops->publish != NULL)
			w->fn[k].ops->publish(w->fn[k].state,
					      &w->stats.fn[w->fn[k].counter_base]);
}

static void
compare_logs(const struct out_log *ref, const struct out_log *st, unsigned int bsz,
	     bool ring)
{
	for (unsigned int k = 0; k < SWORD_SIDE_NUM + 2; k++) {
		ck_assert_msg(ref->n[k] == st->n[k], "burst %u%s, output %u: %u frames, staged %u",
			      bsz, ring ? " (ring)" : "", k, ref->n[k], st->n[k]);
		for (unsigned int i = 0; i < ref->n[k]; i++)
			ck_assert_msg(ref->f[k][i].len == st->f[k][i].len &&
				      !memcmp(ref->f[k][i].buf, st->f[k][i].buf, ref->f[k][i].len),
				      "burst %u%s, output %u, frame %u differs", bsz,
				      ring ? " (ring)" : "", k, i);
	}
}

/* Every counter but the sampled cycle counts (timing) must match. */
static void
compare_stats(struct sword_worker_stats *ref, struct sword_worker_stats *st,
	      unsigned int bsz, bool ring)
{
	const uint64_t *a = (const uint64_t *)ref, *b = (const uint64_t *)st;

	memset(ref->fn_sample_cycles, 0, sizeof(ref->fn_sample_cycles));
	memset(st->fn_sample_cycles, 0, sizeof(st->fn_sample_cycles));
	for (size_t i = 0; i < sizeof(*ref) / sizeof(uint64_t); i++)
		ck_assert_msg(a[i] == b[i], "burst %u%s: counter word %zu: %" PRIu64
			      " one at a time, %" PRIu64 " staged", bsz, ring ? " (ring)" : "",
			      i, a[i], b[i]);
}

static uint64_t
fn_counter(const struct sword_worker *w, const char *name)
{
	for (unsigned int k = 0; k < w->n_fn; k++) {
		const struct sword_fn_ops *ops = w->fn[k].ops;

		for (unsigned int i = 0; i < ops->n_counters; i++)
			if (!strcmp(ops->counter_names[i], name))
				return w->stats.fn[w->fn[k].counter_base + i];
	}
	ck_abort_msg("no counter %s", name);
	return 0;
}

/* The input covers what it claims to (else a pass proves little). */
static void
check_coverage(const struct sword_worker *w)
{
	const struct sword_worker_stats *s = &w->stats;

	if (getenv("BURST_DEBUG") != NULL)
		for (unsigned int i = 0; i < w->fn[0].ops->n_counters; i++)
			printf("%s %" PRIu64 "\n", w->fn[0].ops->counter_names[i],
			       w->stats.fn[w->fn[0].counter_base + i]);

	ck_assert_uint_gt(s->rewritten, 50);
	ck_assert_uint_gt(s->malformed, 0);
	ck_assert_uint_gt(s->non_roce, 0);
	ck_assert_uint_gt(s->dispatched, 0);
	ck_assert_uint_gt(fn_counter(w, "atomic_granted"), 20);
	ck_assert_uint_gt(fn_counter(w, "atomic_bad_icrc_passed"), 5);
	ck_assert_uint_gt(fn_counter(w, "atomic_resp_bad_icrc"), 5);
	ck_assert_uint_gt(fn_counter(w, "atomic_acks_synthesized"), 5);
	ck_assert_uint_gt(fn_counter(w, "atomic_dup_replayed"), 5);
	ck_assert_uint_gt(fn_counter(w, "atomic_cm_seen"), 0);
	if (with_clover) {
		/* one client thread: Clover learns tails and finds every CAS
		 * and READ already at it (nothing to steer) */
		ck_assert_uint_gt(fn_counter(w, "clover_tail_cas"), 5);
		ck_assert_uint_gt(fn_counter(w, "clover_cas_at_tail") +
				  fn_counter(w, "clover_read_at_tail"), 5);
		ck_assert_uint_gt(fn_counter(w, "clover_bad_icrc_passed"), 0);
	}
}

static void
staged_equals_reference(int i, bool clover)
{
	static struct sword_worker ref, st;
	const unsigned int bsz = (unsigned int)i / 2 + 1;
	const bool ring = i % 2 == 1;
	struct out_log lr, ls;

	if (input == NULL || with_clover != clover) {
		/* here, not in main: a failed check needs a running test */
		with_clover = clover;
		free(input);
		n_input = 0;
		lcg = 12345;
		config_load();
		build_input();
	}
	log_init(&lr);
	log_init(&ls);
	worker_start(&ref, true);
	worker_start(&st, false);
	ck_assert(st.icrc_ahead_any);  /* the serializer asked for staging */
	run(&ref, bsz, ring, &lr);
	run(&st, bsz, ring, &ls);
	if (bsz == 32 && !ring)
		check_coverage(&ref);
	compare_logs(&lr, &ls, bsz, ring);
	compare_stats(&ref.stats, &st.stats, bsz, ring);
	sword_worker_detach_all(&ref);
	sword_worker_detach_all(&st);
	log_free(&lr);
	log_free(&ls);
}

START_TEST(t_staged_equals_reference)
{
	staged_equals_reference(_i, false);
}
END_TEST

START_TEST(t_staged_equals_reference_clover)
{
	staged_equals_reference(_i, true);
}
END_TEST

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-pci", "--no-shconf", "--no-huge", "-m", "512",
			"--log-level", "lib.eal:error", NULL };
	SRunner *sr;
	Suite *s;
	TCase *tc;
	int failed;

	(void)argc;
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	roce_crc_init();
	pool = rte_pktmbuf_pool_create("burst", 8191, 0, 0, 2048 + 128, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	s = suite_create("worker_burst");
	tc = tcase_create("staged");
	tcase_set_timeout(tc, 120);
	/* bursts of 1..64 frames, each from one port and from the ring */
	tcase_add_loop_test(tc, t_staged_equals_reference, 0, 128);
	suite_add_tcase(s, tc);
	tc = tcase_create("clover");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, t_staged_equals_reference_clover, 0, 128);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK); /* EAL state lives in this process */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_eal_cleanup();
	return failed ? 1 : 0;
}
