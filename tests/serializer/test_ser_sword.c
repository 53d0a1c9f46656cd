/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ser_sword.c — the serializer inside swordd's worker pipeline
 * (ser_fn_ops attached to a sword_worker, frames as mbufs through
 * sword_worker_process), between the RC client and responder models.
 *
 * Why it exists: test_serializer.c proves the state machines on byte
 * buffers; this proves the adapter — mbuf lengths after a rewrite,
 * synthesized ATOMIC ACKs queued before the response, counters published —
 * with the daemon's own per-burst entry point and EAL memory.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "rdma_model.h"
#include "roce.h"
#include "ser_fn.h"
#include "ser_internal.h"
#include "sword_config.h"
#include "sword_worker.h"

static struct rte_mempool *pool;

#define SRV_IP RTE_BE32(0xc6120001)
#define CL_IP RTE_BE32(0xc6120010)

/* Push every frame of q through the worker; outputs go to out. */
static void
through(struct sword_worker *w, struct rm_queue *q, struct rm_queue *out,
	bool coalesce_check)
{
	struct rm_frame f;

	(void)coalesce_check;
	while (rm_queue_take(q, 0, &f)) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		struct sword_tx_batch b;

		ck_assert_ptr_nonnull(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)f.len), f.buf, f.len);
		m->port = 0;
		sword_tx_batch_reset(&b);
		sword_worker_process(w, 0, &m, 1, &b);
		for (int side = 0; side < SWORD_SIDE_NUM; side++)
			for (unsigned int i = 0; i < b.n[side]; i++) {
				struct rte_mbuf *o = b.pkts[side][i];

				ck_assert(rm_queue_push(out, rte_pktmbuf_mtod(o, uint8_t *),
							rte_pktmbuf_data_len(o)));
				rte_pktmbuf_free(o);
			}
	}
}

/*
 * swordd's built-in defaults, through ser_fn_params, are what the library
 * picks for itself (ser_create with zeroes): the daemon once defaulted pmtu
 * to 1024, below the library's 4096 and below a 4096-byte path MTU, which
 * makes READ spans overestimated (ser_params.pmtu must never be below the
 * path MTU).  max_words is left out: the daemon sizes its shadow smaller on
 * purpose ([tables] lock_words), which is not a safety bound.
 */
START_TEST(t_defaults_match_library)
{
	struct sword_config cfg;
	struct ser_params daemon_prm, lib_prm;
	struct ser_region regions[1];
	struct ser *lib;

	sword_config_defaults(&cfg);
	ck_assert_int_eq(ser_fn_params(&daemon_prm, regions, 1, &cfg, -1), 0);
	memset(&lib_prm, 0, sizeof(lib_prm));
	lib = ser_create(&lib_prm);
	ck_assert_ptr_nonnull(lib);
	ck_assert_uint_eq(daemon_prm.pmtu, lib->prm.pmtu);
	ck_assert_uint_eq(daemon_prm.max_refusals, lib->prm.max_refusals);
	ck_assert_uint_eq(daemon_prm.ring_size, lib->prm.ring_size);
	ck_assert_uint_eq(daemon_prm.max_conns, lib->prm.max_conns);
	ser_destroy(lib);
}
END_TEST

/* SIGHUP's live [atomic] keys reach the worker's serializer through
 * sword_worker_reconfigure (what the worker lcore runs between bursts). */
START_TEST(t_reconfigure)
{
	static struct sword_config cfg;
	static struct sword_worker w;
	struct sword_shard_map sm;
	const struct ser *s;
	char err[256];
	const char *sets[] = {
		"server.mem0.ip=198.18.0.1", "lock.l0.server=mem0", "lock.l0.base=0x10000",
		"lock.l0.length=1024", "features.atomic_replacement=on",
	};

	sword_config_defaults(&cfg);
	for (unsigned int i = 0; i < RTE_DIM(sets); i++)
		ck_assert_msg(sword_config_set(&cfg, sets[i], err, sizeof(err)) == 0,
			      "%s: %s", sets[i], err);
	ck_assert_msg(sword_config_validate(&cfg, err, sizeof(err)) == 0, "%s", err);
	sword_shard_map_build(&sm, &cfg);
	sword_worker_init(&w, &cfg, &sm, 0);
	w.pool = pool;
	ck_assert_int_eq(sword_worker_attach_fn(&w, &ser_fn_ops, SOCKET_ID_ANY), 0);
	s = ser_fn_ser(w.fn[0].state);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->prm.max_refusals, 64);
	ck_assert_uint_eq(s->prm.gate_tsc, 0);

	cfg.atomic.max_refusals = 5;
	cfg.atomic.gate_ms = 1000;
	cfg.atomic.pending_expire_ms = 0;
	sword_worker_reconfigure(&w);
	ck_assert_uint_eq(s->prm.max_refusals, 5);
	ck_assert_uint_eq(s->prm.gate_tsc, rte_get_tsc_hz());
	ck_assert_uint_eq(s->prm.pending_expire_tsc, 0);
	sword_worker_detach_all(&w);
}
END_TEST

/* A one-port worker with the serializer on one lock region at 0x10000
 * (its config and shard map live as long as the worker: static). */
static void
worker_up(struct sword_worker *w)
{
	static struct sword_config cfg;
	static struct sword_shard_map sm;
	char err[256];
	const char *sets[] = {
		"ports.mode=one-port", "server.mem0.ip=198.18.0.1",
		"lock.l0.server=mem0", "lock.l0.rkey=0x2521", "lock.l0.base=0x10000",
		"lock.l0.length=1024", "lock.l0.word_size=8",
		"features.atomic_replacement=on", "atomic.learn_holdoff_ms=0",
		"atomic.out_of_band=on",   /* the frames' QPs are set up out of band */
	};

	sword_config_defaults(&cfg);
	for (unsigned int i = 0; i < RTE_DIM(sets); i++)
		ck_assert_msg(sword_config_set(&cfg, sets[i], err, sizeof(err)) == 0,
			      "%s: %s", sets[i], err);
	ck_assert_msg(sword_config_validate(&cfg, err, sizeof(err)) == 0, "%s", err);
	sword_shard_map_build(&sm, &cfg);
	sword_worker_init(w, &cfg, &sm, 0);
	w->pool = pool;
	ck_assert_int_eq(sword_worker_attach_fn(w, &ser_fn_ops, SOCKET_ID_ANY), 0);
}

START_TEST(t_pipeline)
{
	static struct sword_worker w;
	struct rm_responder srv;
	struct rm_client cl;
	struct rm_queue c2s, s2m, m2s, s2c;
	struct rm_addr up = { .src_ip = CL_IP, .dst_ip = SRV_IP, .dest_qpn = 0x100 };
	struct rm_addr down = { .src_ip = SRV_IP, .dst_ip = CL_IP, .dest_qpn = 0x200 };
	unsigned int fn_base;
	const uint64_t *fc;

	worker_up(&w);
	fn_base = w.fn[0].counter_base;

	ck_assert_int_eq(rm_responder_init(&srv, SRV_IP, 0x10000, 4096, 0x2521, true), 0);
	rm_responder_add_qp(&srv, 0x100, &down, 1000);
	rm_client_init(&cl, 0, &up, 0x200, 0x2521, 1000);
	rm_queue_init(&c2s, 64);
	rm_queue_init(&s2m, 64);
	rm_queue_init(&m2s, 64);
	rm_queue_init(&s2c, 64);

	/* 1: learn the word (real CAS); its answer and the READ's teach the
	 * server's MSN offset (ser_resp.c resp_learn_msn) */
	rm_client_post(&cl, &(struct rm_op){ .type = RM_READ, .va = 0x10800, .len = 8 }, &c2s);
	rm_client_post(&cl, &(struct rm_op){ .type = RM_CAS, .va = 0x10000,
					     .a = { 1, 0 } }, &c2s);
	through(&w, &c2s, &s2m, false);
	while (s2m.n) {
		struct rm_frame f;

		rm_queue_take(&s2m, 0, &f);
		rm_responder_rx(&srv, f.buf, f.len, &m2s);
	}
	through(&w, &m2s, &s2c, false);
	while (s2c.n) {
		struct rm_frame f;

		rm_queue_take(&s2c, 0, &f);
		rm_client_rx(&cl, f.buf, f.len, &c2s);
	}
	ck_assert_uint_eq(cl.ops[1001 % RM_WIN].state, 2);
	ck_assert_uint_eq(srv.atomics, 1);

	/* 2: three CAS decided by swordd, the responder coalesces their ACKs */
	for (int i = 0; i < 3; i++)
		rm_client_post(&cl, &(struct rm_op){ .type = RM_CAS, .va = 0x10000,
				.a = { (uint64_t)(i % 2 == 0 ? 0 : 1), (uint64_t)(i % 2 == 0 ? 1 : 0) } },
			       &c2s);
	through(&w, &c2s, &s2m, false);
	ck_assert_uint_eq(s2m.n, 3);
	while (s2m.n) {
		struct rm_frame f;
		struct roce_pkt p;

		rm_queue_take(&s2m, 0, &f);
		ck_assert_int_eq(roce_parse(f.buf, f.len, &p), ROCE_OK);
		ck_assert_uint_eq(p.opcode, ROCE_RC_WRITE_ONLY);
		ck_assert(roce_icrc_verify(f.buf, &p));
		rm_responder_rx(&srv, f.buf, f.len, &m2s);
	}
	ck_assert_uint_eq(rm_responder_flush(&srv, &m2s), 1);
	through(&w, &m2s, &s2c, false);
	ck_assert_uint_eq(s2c.n, 3); /* two synthesized + the converted ACK */
	while (s2c.n) {
		struct rm_frame f;

		rm_queue_take(&s2c, 0, &f);
		rm_client_rx(&cl, f.buf, f.len, &c2s);
	}
	ck_assert_msg(cl.errors == 0, "%s", cl.err[0]);
	ck_assert_uint_eq(cl.ops[1002 % RM_WIN].result, 1);
	ck_assert_uint_eq(cl.ops[1003 % RM_WIN].result, 0);
	ck_assert_uint_eq(cl.ops[1004 % RM_WIN].result, 1);
	ck_assert_uint_eq(rm_mem_get(&srv, 0x10000), 0);
	ck_assert_uint_eq(srv.atomics, 1);

	/* counters published under the function's names */
	w.fn[0].ops->publish(w.fn[0].state, &w.stats.fn[fn_base]);
	fc = &w.stats.fn[fn_base];
	for (unsigned int i = 0; i < w.fn[0].ops->n_counters; i++) {
		if (!strcmp(w.fn[0].ops->counter_names[i], "atomic_granted"))
			ck_assert_uint_eq(fc[i], 3);
		if (!strcmp(w.fn[0].ops->counter_names[i], "atomic_failed_local"))
			ck_assert_uint_eq(fc[i], 0);
		if (!strcmp(w.fn[0].ops->counter_names[i], "atomic_acks_synthesized"))
			ck_assert_uint_eq(fc[i], 2);
		if (!strcmp(w.fn[0].ops->counter_names[i], "atomic_learned"))
			ck_assert_uint_eq(fc[i], 1);
	}
	ck_assert_uint_eq(w.stats.rewritten, 4); /* 3 WRITEs + the converted ACK */

	sword_worker_detach_all(&w);
	rm_responder_free(&srv);
	rm_queue_free(&c2s);
	rm_queue_free(&s2m);
	rm_queue_free(&m2s);
	rm_queue_free(&s2c);
}
END_TEST

/* Frames in q to the responder; its answers (ACKs coalesced or not)
 * appended to out. */
static void
to_responder(struct rm_responder *srv, struct rm_queue *q, struct rm_queue *out)
{
	struct rm_frame f;

	while (rm_queue_take(q, 0, &f))
		rm_responder_rx(srv, f.buf, f.len, out);
	rm_responder_flush(srv, out);
}

/* Frames in q to whichever of the clients they name (by QPN). */
static void
to_clients(struct rm_client **cl, int n, struct rm_queue *q, struct rm_queue *c2s)
{
	struct rm_frame f;
	struct roce_pkt p;

	while (rm_queue_take(q, 0, &f)) {
		ck_assert_int_eq(roce_parse(f.buf, f.len, &p), ROCE_OK);
		for (int i = 0; i < n; i++)
			if (cl[i]->qpn == p.qpn)
				rm_client_rx(cl[i], f.buf, f.len, c2s);
	}
}

static uint64_t
fn_counter(const struct sword_worker *w, const char *name)
{
	uint64_t c[64];

	ck_assert_uint_le(w->fn[0].ops->n_counters, RTE_DIM(c));
	w->fn[0].ops->publish(w->fn[0].state, c);
	for (unsigned int i = 0; i < w->fn[0].ops->n_counters; i++)
		if (!strcmp(w->fn[0].ops->counter_names[i], name))
			return c[i];
	ck_abort_msg("no counter %s", name);
	return 0;
}

/*
 * The ask-back through the worker (ser_ask.c, sword_fn_emit_after): B's
 * CAS comes while A's grant and release are un-ACKed, and is dropped (S2).
 * B's WRITE before it is still unanswered, so the RNR NAK that asks B to
 * resend must leave right behind that WRITE's ACK, never before it (it
 * acknowledges every PSN before its own).  B, asked, resends and gets the
 * lock.
 */
START_TEST(t_ask_after_response)
{
	static struct sword_worker w;
	struct rm_responder srv;
	struct rm_client a, b, *cl[2] = { &a, &b };
	struct rm_queue c2s, s2m, m2s, s2c;
	struct rm_addr up_a = { .src_ip = CL_IP, .dst_ip = SRV_IP, .dest_qpn = 0x100 };
	struct rm_addr down_a = { .src_ip = SRV_IP, .dst_ip = CL_IP, .dest_qpn = 0x200 };
	struct rm_addr up_b = { .src_ip = CL_IP, .dst_ip = SRV_IP, .dest_qpn = 0x101 };
	struct rm_addr down_b = { .src_ip = SRV_IP, .dst_ip = CL_IP, .dest_qpn = 0x201 };
	struct rm_op data = { .type = RM_WRITE, .va = 0x10800, .len = 8, .ackreq = true };
	struct rm_op rel = { .type = RM_WRITE, .va = 0x10000, .len = 8, .ackreq = true };
	struct roce_pkt p;
	bool acked_b = false, asked_b = false;

	worker_up(&w);
	ck_assert_int_eq(rm_responder_init(&srv, SRV_IP, 0x10000, 4096, 0x2521, false), 0);
	rm_responder_add_qp(&srv, 0x100, &down_a, 1000);
	rm_responder_add_qp(&srv, 0x101, &down_b, 2000);
	rm_client_init(&a, 0, &up_a, 0x200, 0x2521, 1000);
	rm_client_init(&b, 1, &up_b, 0x201, 0x2521, 2000);
	rm_queue_init(&c2s, 64);
	rm_queue_init(&s2m, 64);
	rm_queue_init(&m2s, 64);
	rm_queue_init(&s2c, 64);

	/* 1: A's CAS that changes nothing teaches the word (0) and pairs A
	 * (its answer and the READ's, the server's MSN offset); B's WRITE
	 * pairs B */
	rm_client_post(&a, &(struct rm_op){ .type = RM_READ, .va = 0x10800, .len = 8 }, &c2s);
	rm_client_post(&a, &(struct rm_op){ .type = RM_CAS, .va = 0x10000 }, &c2s);
	rm_client_post(&b, &data, &c2s);
	through(&w, &c2s, &s2m, false);
	to_responder(&srv, &s2m, &m2s);
	through(&w, &m2s, &s2c, false);
	to_clients(cl, 2, &s2c, &c2s);
	ck_assert_uint_eq(c2s.n, 0);

	/* 2: A takes and releases the lock; B writes, then tries the lock */
	rm_client_post(&a, &(struct rm_op){ .type = RM_CAS, .va = 0x10000, .a = { 1, 0 } },
		       &c2s);
	rm_client_post(&a, &rel, &c2s);
	rm_client_post(&b, &data, &c2s);
	rm_client_post(&b, &(struct rm_op){ .type = RM_CAS, .va = 0x10000, .a = { 2, 0 } },
		       &c2s);
	through(&w, &c2s, &s2m, false);
	ck_assert_uint_eq(s2m.n, 3);                 /* B's CAS dropped, nothing asked yet */
	ck_assert_uint_eq(fn_counter(&w, "atomic_gated_drop"), 1);
	ck_assert_uint_eq(fn_counter(&w, "atomic_asked_back"), 0);
	to_responder(&srv, &s2m, &m2s);
	through(&w, &m2s, &s2c, false);
	/* B's ACK at 2001, then the ask at 2002 */
	for (uint32_t i = 0; i < s2c.n; i++) {
		struct rm_frame *o = &s2c.f[(s2c.head + i) % s2c.cap];

		ck_assert_int_eq(roce_parse(o->buf, o->len, &p), ROCE_OK);
		if (p.qpn != 0x201)
			continue;
		ck_assert(roce_icrc_verify(o->buf, &p));
		if (roce_syndrome_kind(roce_get_syndrome(o->buf, &p)) == ROCE_AETH_ACK) {
			ck_assert_uint_eq(p.psn, 2001);
			acked_b = true;
		} else {
			ck_assert_msg(acked_b, "the ask overtook the ACK it follows");
			ck_assert_uint_eq(roce_syndrome_kind(roce_get_syndrome(o->buf, &p)),
					  ROCE_AETH_RNR_NAK);
			ck_assert_uint_eq(p.psn, 2002);
			ck_assert_uint_eq(p.dst_ip4, CL_IP);
			asked_b = true;
		}
	}
	ck_assert(acked_b && asked_b);
	ck_assert_uint_eq(fn_counter(&w, "atomic_asked_back"), 1);
	to_clients(cl, 2, &s2c, &c2s);
	ck_assert_uint_eq(c2s.n, 1);                 /* B's CAS again */

	/* 3: A's writes are answered: B's CAS goes on (real, the word being
	 * shared after the drop), B holds the lock */
	through(&w, &c2s, &s2m, false);
	ck_assert_uint_eq(s2m.n, 1);
	to_responder(&srv, &s2m, &m2s);
	through(&w, &m2s, &s2c, false);
	to_clients(cl, 2, &s2c, &c2s);
	ck_assert_msg(a.errors == 0, "%s", a.err[0]);
	ck_assert_msg(b.errors == 0, "%s", b.err[0]);
	ck_assert_uint_eq(b.ops[2002 % RM_WIN].state, 2);
	ck_assert_uint_eq(b.ops[2002 % RM_WIN].result, 0);
	ck_assert_uint_eq(rm_mem_get(&srv, 0x10000), 2);

	sword_worker_detach_all(&w);
	rm_responder_free(&srv);
	rm_queue_free(&c2s);
	rm_queue_free(&s2m);
	rm_queue_free(&m2s);
	rm_queue_free(&s2c);
}
END_TEST

/* A function with a timer: each tick emits one RNR NAK to the client. */
static unsigned int ticks_seen;

static void
tick_emit(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	struct rm_addr down = { .src_ip = SRV_IP, .dst_ip = CL_IP, .dest_qpn = 0x200 };
	uint8_t aeth[4] = { 0x21, 0, 0, 7 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(ctx->pool);
	uint8_t *d;

	(void)state;
	ticks_seen++;
	ck_assert_ptr_null(ctx->m);
	ck_assert_ptr_nonnull(m);
	d = (uint8_t *)rte_pktmbuf_append(m, 256);
	ck_assert_ptr_nonnull(d);
	rte_pktmbuf_trim(m, (uint16_t)(256 - rm_build(d, &down, ROCE_RC_ACKNOWLEDGE, 2002,
							  false, aeth, 4, NULL, 0)));
	ctx->server = 0;
	ck_assert_int_eq(sword_fn_emit(w, ctx, m, false), 0);
}

static enum sword_fn_verdict
tick_pass(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	(void)state;
	(void)w;
	(void)ctx;
	return SWORD_FN_PASS;
}

static const struct sword_fn_ops tick_fn_ops = {
	.name = "tick_test", .process = tick_pass, .tick = tick_emit,
};

/* sword_worker_tick runs tick ops once per SWORD_TICK_US; what they emit
 * goes through the functions after them in its direction (here the
 * serializer's response path) and leaves. */
START_TEST(t_tick)
{
	static struct sword_worker w;
	struct sword_tx_batch out;
	uint64_t now = rte_get_tsc_hz() * 10;

	worker_up(&w);
	sword_tx_batch_reset(&out);
	ck_assert_uint_eq(sword_worker_tick(&w, now, &out), 0);   /* no tick op yet */
	ck_assert_int_eq(sword_worker_attach_fn(&w, &tick_fn_ops, SOCKET_ID_ANY), 0);
	ticks_seen = 0;
	ck_assert_uint_eq(sword_worker_tick(&w, now, &out), 1);
	ck_assert_uint_eq(ticks_seen, 1);
	ck_assert_uint_eq(sword_worker_tick(&w, now + 1, &out), 0);   /* too soon */
	ck_assert_uint_eq(ticks_seen, 1);
	ck_assert_uint_eq(sword_worker_tick(&w, now + rte_get_tsc_hz() / 1000000 *
					    SWORD_TICK_US, &out), 1);
	ck_assert_uint_eq(ticks_seen, 2);
	ck_assert_uint_eq(out.n[SWORD_SIDE_CLIENT] + out.n[SWORD_SIDE_SERVER], 2);
	for (unsigned int side = 0; side < SWORD_SIDE_NUM; side++)
		for (uint16_t i = 0; i < out.n[side]; i++) {
			struct rte_mbuf *m = out.pkts[side][i];
			struct roce_pkt p;

			ck_assert_int_eq(roce_parse(rte_pktmbuf_mtod(m, uint8_t *),
						    rte_pktmbuf_data_len(m), &p), ROCE_OK);
			ck_assert_uint_eq(p.qpn, 0x200);
			ck_assert_uint_eq(p.psn, 2002);
			rte_pktmbuf_free(m);
		}
	sword_worker_detach_all(&w);
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
	pool = rte_pktmbuf_pool_create("ser_sword", 1023, 0, 0, 2048 + 128,
				       SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	s = suite_create("ser_sword");
	tc = tcase_create("pipeline");
	tcase_add_test(tc, t_pipeline);
	tcase_add_test(tc, t_ask_after_response);
	tcase_add_test(tc, t_tick);
	suite_add_tcase(s, tc);
	tc = tcase_create("defaults");
	tcase_add_test(tc, t_defaults_match_library);
	tcase_add_test(tc, t_reconfigure);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK); /* EAL state lives in this process */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_eal_cleanup();
	return failed ? 1 : 0;
}
