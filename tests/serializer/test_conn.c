/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conn.c — the connection layer under atomic replacement: the nine
 * scenarios of the lock-safety review, each a hand-ordered sequence over
 * the closed loop of sim.c (client and responder models, scapy on every
 * frame swordd emits), then the loop left to run to the end so that every
 * downstream effect is checked by the models (I3 at the clients, I4 at the
 * clients and at the memory, I5 shadow == memory, I6 same answer per PSN).
 *
 * Why it exists: each scenario broke lock safety in an earlier serializer
 * whose word state machine was right but whose notion of a connection
 * (identity, incarnation, age) was not.  Several QPs per client host, the
 * same initial PSN on every QP (Sherman: 3185), reconnects reusing QPNs
 * and PSNs are what real deployments do.
 */
#include <check.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "rc.h"
#include "roce.h"
#include "ser_internal.h"
#include "serializer.h"
#include "sim.h"

#define SHERMAN_PSN 3185
#define MANUAL 0xffull   /* an op the workload callbacks ignore */

static char errbuf[8192];


static uint64_t
lock_va(int i)
{
	return SIM_LOCKS + 8 * (uint64_t)i;
}

static const struct ser_counters *
C(struct sim *s)
{
	return ser_counters(s->ser);
}

/* A sim with every QP at Sherman's PSN, the given client IPs, and the
 * timing bounds a deployment sets (in sim time units: 10 per frame). */
static void
init(struct sim *s, int ncl, int ips, bool coalesce, const char *name)
{
	struct sim_opts o = { .ips = ips, .fixed_psn = true,
			      .start_psn = SHERMAN_PSN };

	ck_assert_int_eq(sim_init_ex(s, ncl, true, coalesce, name, &o), 0);
	s->prm.pending_expire_tsc = 50000000;
	s->prm.conn_idle_tsc = 100000000;
	ck_assert_int_eq(sim_reconfigure(s), 0);
}

static void
post(struct sim *s, int i, const struct rm_op *op)
{
	ck_assert(rm_client_post(&s->cl[i], op, &s->q[Q_C2S]));
}

static void
post_cas(struct sim *s, int i, uint64_t va, uint64_t swap, uint64_t cmp)
{
	post(s, i, &(struct rm_op){ .type = RM_CAS, .va = va, .a = { swap, cmp },
				    .user = MANUAL });
}

static void
post_write(struct sim *s, int i, uint64_t va, uint64_t v)
{
	struct rm_op op = { .type = RM_WRITE, .va = va, .len = 8, .ackreq = true,
			    .user = MANUAL };
	uint64_t be = rte_cpu_to_be_64(v);

	memcpy(op.data, &be, 8);
	post(s, i, &op);
}

/* Pass every queue's frames on until nothing is left; then let the
 * clients retransmit what is outstanding until all is done. */
static void
finish(struct sim *s)
{
	sim_flow(s, 100000);
	if (!sim_run(s, 4000000, 400)) {
		uint32_t n = sim_client_errors(s, errbuf, sizeof(errbuf));

		ck_abort_msg("run did not finish: %u errors: %s", n, errbuf);
	}
	sim_check_shadow(s);
	ASSERT_CLEAN(s);
}

static void
post_read(struct sim *s, int i)
{
	post(s, i, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA, .len = 8,
				    .user = MANUAL });
}

/* Two READs: the first answer pairs client i's connection, the second,
 * of another message, confirms the server's MSN offset the first one
 * proposed (ser_resp.c resp_learn_msn); its atomics are decided after
 * that.  Uses 2 PSNs. */
static void
pair(struct sim *s, int i)
{
	post_read(s, i);
	post_read(s, i);
}

/* Teach swordd lock word va so later ops on it are decided, not passed:
 * a READ pairs client i's connection (its answer is the evidence), then a
 * real CAS that changes nothing teaches the value.  Uses 2 PSNs. */
static void
learn(struct sim *s, int i, uint64_t va)
{
	post_read(s, i);
	post_cas(s, i, va, 0, 0);
	sim_flow(s, 1000);
	ck_assert_int_eq(ser_word_get(s->ser, SIM_SERVER_IP, SIM_RKEY, va, NULL, NULL),
			 SER_WORD_KNOWN);
}

/* ------------------------------------------------------------------ */

START_TEST(t_s1_crossed_by_psn)
{
	/* Two QPs of one host, both starting at 3185 (clients 0 and 2 share
	 * an IP; client 1 is a third host).  A1's READ 3185 is lost before
	 * swordd; A2's READ 3185 passes; A1's CAS 3186 reaches the server,
	 * which NAKs 3185 (sequence); A2's CAS 3186 is answered.  A PSN that
	 * both QPs use must never pair A1's server QP with A2's QPN.  Then
	 * everyone runs the Sherman lock to the end. */
	struct sim s;
	const int A1 = 0, A2 = 2, B = 1;
	uint32_t n;

	init(&s, 3, 2, false, "conn-s1");
	sim_sherman_setup(&s, 6);
	/* the word is known (a previous client taught it) */
	learn(&s, B, lock_va(0));
	/* 3185 on both QPs: A1's is lost */
	post(&s, A1, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA, .len = 8,
				      .user = MANUAL });
	ck_assert(sim_drop(&s, Q_C2S, 0));
	post(&s, A2, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA, .len = 8,
				      .user = MANUAL });
	ck_assert(sim_deliver(&s, Q_C2S, 0));   /* swordd */
	ck_assert(sim_deliver(&s, Q_S2M, 0));   /* server: READ resp 3185 held */
	/* 3186: A1's CAS acquire */
	sim_sherman_acquire(&s, A1, lock_va(0));
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));   /* server QP of A1: NAK-seq 3185 */
	n = s.q[Q_M2S].n;
	ck_assert_uint_eq(n, 2);
	ck_assert(sim_deliver(&s, Q_M2S, 1));   /* the NAK first */
	ck_assert(sim_deliver(&s, Q_M2S, 0));   /* then A2's READ response */
	/* A2's CAS 3186 */
	sim_sherman_acquire(&s, A2, lock_va(0));
	sim_sherman_acquire(&s, B, lock_va(0));
	finish(&s);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(s.acquired[i], i == B ? 6 : 6);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(0)), 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s1_same_psn_many_qps)
{
	/* Sherman's deployment: 3 hosts x 2 QPs, every QP at PSN 3185,
	 * contending on one lock with loss, duplication and reordering. */
	struct sim s;
	char name[32];

	snprintf(name, sizeof(name), "conn-s1-many-%d", _i);
	init(&s, 6, 3, _i & 1, name);
	s.rng = 7 + (uint64_t)_i;
	s.loss_ppm = 10000;
	s.dup_ppm = 10000;
	s.reorder = 3;
	sim_sherman_setup(&s, 8);
	for (int i = 0; i < 6; i++)
		sim_sherman_acquire(&s, i, lock_va(0));
	ck_assert(sim_run(&s, 8000000, 4000));
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(s.acquired[i], 8);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_same_psn_no_force_ackreq)
{
	/* The same-PSN deployment with a responder that coalesces ACKs and
	 * swordd not adding AckReq (force_ackreq off): releases may go
	 * un-ACKed for a while; the gate and the refusal bound keep the lock
	 * live and single-held. */
	struct sim s;

	init(&s, 4, 2, true, "conn-noackreq");
	s.prm.no_force_ackreq = true;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	s.rng = 5;
	sim_sherman_setup(&s, 8);
	for (int i = 0; i < 4; i++)
		sim_sherman_acquire(&s, i, lock_va(0));
	ck_assert(sim_run(&s, 4000000, 2000));
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s.acquired[i], 8);
	ck_assert_uint_eq(C(&s)->ackreq_set, 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_same_psn_rnr_nak)
{
	/* The responder refuses every 7th fresh request with an RNR NAK: it
	 * acknowledges the PSNs before it and nothing of its own; rewritten
	 * CASes retried after it are answered once, as ATOMIC ACKs. */
	struct sim s;

	init(&s, 4, 2, false, "conn-rnr");
	s.srv.rnr_every = 7;
	sim_sherman_setup(&s, 8);
	for (int i = 0; i < 4; i++)
		sim_sherman_acquire(&s, i, lock_va(0));
	ck_assert(sim_run(&s, 4000000, 4000));
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s.acquired[i], 8);
	ck_assert_uint_gt(s.srv.rnr_naks, 10);
	ck_assert_uint_gt(C(&s)->naks, 10);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s2_reconnect_same_qpn_psn)
{
	/* Client 0 takes and releases the lock through swordd (its CAS at
	 * 3187 is rewritten); client 1 then holds it.  Client 0 re-creates
	 * its QP with the same QPN and initial PSN and sends the same CAS at
	 * 3187: a new incarnation, not a retransmission — it must not be
	 * granted the lock client 1 holds. */
	struct sim s;

	init(&s, 2, 0, false, "conn-s2");
	sim_sherman_setup(&s, 1);
	post_read(&s, 1);                         /* pairs client 1 */
	sim_sherman_acquire(&s, 1, lock_va(0));   /* teaches the word (real) */
	sim_flow(&s, 10000);
	ck_assert_int_eq(s.acquired[1], 1);
	/* client 0: READs at 3185 and 3186 pair its connection, the CAS at
	 * 3187 is rewritten */
	pair(&s, 0);
	sim_sherman_acquire(&s, 0, lock_va(0));
	sim_flow(&s, 10000);
	ck_assert_int_eq(s.acquired[0], 1);
	ck_assert_uint_ge(C(&s)->granted, 1);
	/* client 1 holds the lock */
	post_cas(&s, 1, lock_va(0), 2, 0);
	sim_flow(&s, 10000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(0)), 2);
	s.holder[0] = 1;
	/* client 0 restarts: same QPN, PSN 3185, same READs, same CAS */
	sim_reconnect(&s, 0);
	s.target = 2;
	pair(&s, 0);
	sim_sherman_acquire(&s, 0, lock_va(0));
	sim_flow(&s, 2000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(0)), 2);
	/* client 1 releases; client 0 gets it */
	s.holder[0] = -1;
	post_write(&s, 1, lock_va(0), 0);
	finish(&s);
	ck_assert_int_eq(s.acquired[0], 2);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(0)), 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s2_reconnect_loop)
{
	/* Reconnects with the same QPN and PSN every few acquisitions, two
	 * QPs per host, contending. */
	struct sim s;
	char name[32];

	snprintf(name, sizeof(name), "conn-s2-loop-%d", _i);
	init(&s, 4, 2, false, name);
	s.rng = 11 + (uint64_t)_i;
	sim_sherman_setup(&s, 3);
	for (int round = 0; round < 4; round++) {
		s.target += round ? 3 : 0;
		for (int i = 0; i < 4; i++)
			sim_sherman_acquire(&s, i, lock_va(0));
		ck_assert(sim_run(&s, 4000000, 400));
		ASSERT_CLEAN(&s);
		for (int i = 0; i < 4; i++)
			sim_reconnect(&s, i);
	}
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s.acquired[i], 12);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s3_pipelined_faa_outlives_expiry)
{
	/* One connection pipelines FAAs on one word for longer than
	 * pending_expire: each write is ACKed well within the bound, so none
	 * may be abandoned.  5 FAAs from 0 leave 5 and tickets 0..4. */
	struct sim s;
	uint64_t got[5];

	init(&s, 1, 0, false, "conn-s3");
	s.prm.pending_expire_tsc = 100;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	learn(&s, 0, lock_va(1));
	for (int k = 0; k < 5; k++) {
		post(&s, 0, &(struct rm_op){ .type = RM_FAA, .va = lock_va(1),
					     .a = { 1 }, .user = MANUAL });
		ck_assert(sim_deliver(&s, Q_C2S, 0));
		ck_assert(sim_deliver(&s, Q_S2M, 0));
		s.now += 60;
		if (k > 0) {        /* the previous FAA's ACK arrives now */
			ck_assert(sim_deliver(&s, Q_M2S, 0));
			ck_assert(sim_deliver(&s, Q_S2C, 0));
		}
	}
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(1)), 5);
	for (int k = 0; k < 5; k++)
		got[k] = s.cl[0].ops[(SHERMAN_PSN + 2 + k) % RM_WIN].result;
	for (int k = 0; k < 5; k++)
		ck_assert_uint_eq(got[k], (uint64_t)k);
	ck_assert_uint_eq(C(&s)->pending_expired, 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s4_foreign_write_vs_blind_write)
{
	/* A's FAA on a known word is forwarded as a blind WRITE(6); B's
	 * plain WRITE(100) to the word must not overtake it at the server:
	 * a real FAA leaves 100 or 101, never 6. */
	struct sim s;
	uint64_t m;

	init(&s, 2, 0, false, "conn-s4");
	learn(&s, 0, lock_va(2));
	post_write(&s, 0, lock_va(2), 5);
	sim_flow(&s, 1000);
	post(&s, 0, &(struct rm_op){ .type = RM_FAA, .va = lock_va(2), .a = { 1 },
				     .user = MANUAL });
	ck_assert(sim_deliver(&s, Q_C2S, 0));          /* A's WRITE(6) held */
	post_write(&s, 1, lock_va(2), 100);
	ck_assert(sim_deliver(&s, Q_C2S, 0));          /* B's write */
	/* B's write (if swordd let it pass) reaches memory first */
	if (s.q[Q_S2M].n == 2)
		ck_assert(sim_deliver(&s, Q_S2M, 1));
	finish(&s);
	m = rm_mem_get(&s.srv, lock_va(2));
	ck_assert_msg(m == 100 || m == 101, "memory %llu: A's blind write erased B's",
		      (unsigned long long)m);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/*
 * Issue #29 finding 7 (MSN goes back).  The serializer's RNR NAK asking a
 * client to resend (ser_ask.c) carried the MSN of the last response it
 * had passed to that client, whatever its PSN.  With remapping in front,
 * a response at an older PSN with an older MSN does reach a client after
 * newer ones: a READ placed anew on its lane (remap_req.c read_again) is
 * answered again with its own MSN, after the client was given later
 * MSNs.  Here B's READ is answered (MSN m), its WRITE is ACKed (m + 1),
 * then the READ's answer comes again with m (as remapping delivers the
 * re-placed READ's answer; B drops it as a duplicate).  B's CAS is then
 * dropped at the S2 gate and asked back at once: the RNR NAK must not
 * carry m, behind the m + 1 B already has.  (Fails before: "client 1:
 * RNR NAK PSN 3190 MSN 3 went back from 4".)
 */
static struct rm_frame f7_read_answer;
static bool f7_have;

static bool
f7_keep_read_answer(struct sim *s, int q, const struct rm_frame *f)
{
	struct roce_pkt p;

	(void)s;
	if (q == Q_M2S && !f7_have && roce_parse((uint8_t *)f->buf, f->len, &p) == ROCE_OK &&
	    p.opcode == ROCE_RC_READ_RESPONSE_ONLY && p.qpn == SIM_CL_QPN(1)) {
		f7_read_answer = *f;
		f7_have = true;
	}
	return false;
}

START_TEST(t_ask_msn_never_back)
{
	struct sim s;

	init(&s, 2, 0, false, "conn-ask-msn-back");
	learn(&s, 0, lock_va(3));
	f7_have = false;
	s.filter = f7_keep_read_answer;
	post_read(&s, 1);                          /* pairs B: MSN m */
	sim_flow(&s, 1000);
	s.filter = NULL;
	ck_assert(f7_have);
	post(&s, 1, &(struct rm_op){ .type = RM_WRITE, .va = SIM_DATA, .len = 8,
				     .ackreq = true, .user = MANUAL });
	sim_flow(&s, 1000);                        /* ACKed: m + 1 */
	/* the READ's answer again, with m */
	ck_assert(rm_queue_push(&s.q[Q_M2S], f7_read_answer.buf, f7_read_answer.len));
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(3), 1, 0);         /* A: acquire ... */
	post_write(&s, 0, lock_va(3), 0);          /* ... and release */
	post_cas(&s, 1, lock_va(3), 2, 0);         /* B: dropped (S2), asked */
	while (s.q[Q_C2S].n)
		ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_ge(C(&s)->gated_drop, 1);
	ck_assert(sim_run(&s, 4000000, 0));
	ck_assert_uint_ge(C(&s)->asked_back, 1);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_gated_drop_asks_back)
{
	/* A takes and releases the lock in one pipelined burst: two of its
	 * modelled writes are un-ACKed when B's CAS comes, which can be
	 * neither answered here nor passed real (S2): it is dropped.  B's QP
	 * has no retransmit timer (rxe with timeout 0, the rig's lock
	 * client): the run allows no timeout at all, so B completes only if
	 * swordd asks it to resend.  _i: what B has outstanding before the
	 * CAS: 0 nothing (asked at once), 1 a READ, 2 a WRITE (asked right
	 * after their answers); 3: B is not paired yet (its first request,
	 * no RDMA CM), so its server asks it, poked by swordd. */
	struct sim s;
	char name[32];

	snprintf(name, sizeof(name), "conn-gated-ask-%d", _i);
	init(&s, 2, 0, false, name);
	learn(&s, 0, lock_va(3));
	if (_i < 3) {
		post_read(&s, 1);                  /* pairs B */
		sim_flow(&s, 1000);
	}
	post_cas(&s, 0, lock_va(3), 1, 0);         /* A: acquire ... */
	post_write(&s, 0, lock_va(3), 0);          /* ... and release */
	if (_i == 1)
		post_read(&s, 1);
	else if (_i == 2)
		post(&s, 1, &(struct rm_op){ .type = RM_WRITE, .va = SIM_DATA, .len = 8,
					     .ackreq = true, .user = MANUAL });
	post_cas(&s, 1, lock_va(3), 2, 0);         /* B: acquire */
	while (s.q[Q_C2S].n)                       /* all before any answer */
		ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_ge(C(&s)->gated_drop, 1);
	ck_assert_msg(sim_run(&s, 4000000, 0),
		      "B waits forever for its dropped CAS: %u errors",
		      sim_client_errors(&s, errbuf, sizeof(errbuf)));
	if (_i < 3) {
		ck_assert_uint_ge(C(&s)->asked_back, 1);
	} else {
		ck_assert_uint_eq(C(&s)->asked_back, 0);
		ck_assert_uint_ge(C(&s)->poked, 1);
		ck_assert_uint_ge(s.srv.seq_naks, 1);
	}
	ck_assert_uint_eq(C(&s)->asked_back + C(&s)->poked, s.asked_back);
	/* B's CAS ran once: it took the lock, or found A's grant */
	ck_assert(rm_mem_get(&s.srv, lock_va(3)) == 2 || rm_mem_get(&s.srv, lock_va(3)) == 0);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* The server's answers on to the clients (nothing new to the server). */
static void
deliver_answers(struct sim *s)
{
	while (s->q[Q_M2S].n || s->q[Q_S2C].n) {
		if (s->q[Q_M2S].n)
			sim_deliver(s, Q_M2S, 0);
		if (s->q[Q_S2C].n)
			sim_deliver(s, Q_S2C, 0);
	}
}

START_TEST(t_poke_nak_after_resend)
{
	/* Issue #29, closed fuzzer accel-poke-nak-beyond.  B is not paired
	 * (its first request, no RDMA CM) when its CAS meets A's un-ACKed
	 * writes: dropped, and asked back through its server (the poke: a
	 * zero-length WRITE 2^22 ahead).  The poke is slow; B's own timer
	 * resends the CAS first, which now runs, is answered and pairs B.
	 * Then the poke reaches the server, which NAKs a sequence error at
	 * the PSN it expects: B's next, one B never sent.  That NAK would
	 * tell B to go back to a PSN beyond its requests (a requester takes
	 * it as a lost answer and retries); swordd drops it. */
	struct sim s;
	uint32_t poke;

	init(&s, 2, 0, false, "conn-poke-nak-after-resend");
	learn(&s, 0, lock_va(3));
	post_cas(&s, 0, lock_va(3), 1, 0);         /* A: acquire ... */
	post_write(&s, 0, lock_va(3), 0);          /* ... and release */
	post_cas(&s, 1, lock_va(3), 2, 0);         /* B: acquire */
	while (s.q[Q_C2S].n)
		ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(C(&s)->poked, 1);
	/* A's frames go on, the poke (the last frame to the server) waits */
	poke = s.q[Q_S2M].n - 1;
	for (uint32_t i = 0; i < poke; i++)
		ck_assert(sim_deliver(&s, Q_S2M, 0));
	deliver_answers(&s);
	/* B's timer: the CAS again, now run and answered */
	rm_client_timeout(&s.cl[1], &s.q[Q_C2S]);
	while (s.q[Q_C2S].n)
		ck_assert(sim_deliver(&s, Q_C2S, 0));
	while (s.q[Q_S2M].n > 1)
		ck_assert(sim_deliver(&s, Q_S2M, 1));
	deliver_answers(&s);
	ck_assert_uint_eq(rm_client_outstanding(&s.cl[1]), 0);
	/* now the poke */
	ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert_uint_ge(s.srv.seq_naks, 1);
	finish(&s);
	ck_assert_msg(s.cl[1].beyond_responses == 0,
		      "B got %llu responses at PSNs it never sent (last %u)",
		      (unsigned long long)s.cl[1].beyond_responses, s.cl[1].beyond_psn);
	ck_assert_uint_eq(C(&s)->nak_beyond_dropped, 1);
	ck_assert(rm_mem_get(&s.srv, lock_va(3)) == 2 || rm_mem_get(&s.srv, lock_va(3)) == 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* Every frame in flight on to its next hop, until none is left: no
 * client timer fires. */
static void
drain_queues(struct sim *s)
{
	for (bool moved = true; moved;) {
		moved = false;
		for (int q = 0; q < Q_N; q++)
			while (s->q[q].n) {
				sim_deliver(s, q, 0);
				moved = true;
			}
	}
}

/* Client 0's CAS(0->1) on a learned word, granted here; its WRITE ran
 * and its answer is the one frame on its way to client 0 (Q_S2C).
 * Client 1 is paired.  Returns the CAS's PSN. */
static uint32_t
granted_answer_on_way(struct sim *s, const char *name)
{
	uint32_t psn;

	init(s, 2, 0, false, name);
	learn(s, 0, lock_va(3));
	post_read(s, 1);                           /* pairs client 1 */
	sim_flow(s, 1000);
	psn = s->cl[0].next_psn;
	post_cas(s, 0, lock_va(3), 1, 0);
	while (s->q[Q_C2S].n || s->q[Q_S2M].n || s->q[Q_M2S].n) {
		for (int q = Q_C2S; q <= Q_M2S; q++)
			if (s->q[q].n)
				sim_deliver(s, q, 0);
	}
	ck_assert_uint_eq(rm_mem_get(&s->srv, lock_va(3)), 1);
	ck_assert_uint_eq(s->q[Q_S2C].n, 1);
	return psn;
}

START_TEST(t_grant_answer_lost_word_taken)
{
	/* Issue #29, closed fuzzer accel-cas-taken-answer-lost.  Client 0's
	 * CAS(0->1) is granted here and its WRITE runs; the answer is lost
	 * on its way to client 0.  Client 1's CAS(1->4) then takes the
	 * word (a CAS that is no lock protocol, as CAS-based structures
	 * do).  Client 0 resends its CAS.  S8 took that copy for a stale
	 * one or a new life ("nobody changes a word its holder has not
	 * released") and decided it afresh: "failed, orig 4", a second and
	 * false answer for a CAS that ran.  The copy is now probed: asked
	 * whether it has the PSN (a duplicate WRITE), the old QP ACKs it,
	 * and client 0 gets the recorded "granted". */
	struct sim s;
	const uint32_t psn = granted_answer_on_way(&s, "conn-grant-lost-taken");

	ck_assert(sim_drop(&s, Q_S2C, 0));         /* client 0's answer */
	post_cas(&s, 1, lock_va(3), 4, 1);         /* client 1 takes it */
	drain_queues(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), 4);
	ck_assert_uint_eq(rm_client_outstanding(&s.cl[1]), 0);
	rm_client_timeout(&s.cl[0], &s.q[Q_C2S]);  /* client 0 resends */
	finish(&s);
	ck_assert_msg(s.cl[0].ops[psn % RM_WIN].psn == psn &&
		      s.cl[0].ops[psn % RM_WIN].result == 0,
		      "client 0's CAS ran (memory 0 -> 1) but it was told orig %#llx",
		      (unsigned long long)s.cl[0].ops[psn % RM_WIN].result);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), 4);
	ck_assert_uint_ge(C(&s)->probe_asked, 1);
	ck_assert_uint_eq(C(&s)->replay_probed, 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_probe_question_lost_next_answered)
{
	/* CI's e2e-soak-short (2026-11-29): client 0's CAS at P is decided
	 * here; client 1's CAS then takes the word.  Client 0's timer fires
	 * while its answer is on the way: the copy is probed, asked with a
	 * duplicate WRITE (PROBE_ASK), and the answer then reaches client
	 * 0.  The question is lost.  Client 0 goes on with a CAS at P+1,
	 * which the server runs and answers; that ATOMIC ACK covers P too,
	 * and was held back there for good (probe_cover_held): client 0 has
	 * its answer for P and never resends it, so nothing asked again,
	 * and its QP ran out of retries at P+1. */
	struct sim s;
	const uint32_t psn = granted_answer_on_way(&s, "conn-probe-question-lost");

	post_cas(&s, 1, lock_va(3), 4, 1);         /* client 1 takes the word */
	while (s.q[Q_C2S].n || s.q[Q_S2M].n || s.q[Q_M2S].n || s.q[Q_S2C].n > 1) {
		for (int q = Q_C2S; q <= Q_M2S; q++)
			if (s.q[q].n)
				sim_deliver(&s, q, 0);
		if (s.q[Q_S2C].n > 1)
			sim_deliver(&s, Q_S2C, 1);
	}
	ck_assert_uint_eq(rm_client_outstanding(&s.cl[1]), 0);
	rm_client_timeout(&s.cl[0], &s.q[Q_C2S]);  /* client 0 resends P */
	ck_assert(sim_deliver(&s, Q_C2S, 0));      /* probed: asked */
	ck_assert_uint_eq(C(&s)->probe_asked, 1);
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);
	ck_assert(sim_drop(&s, Q_S2M, 0));         /* the question, lost */
	ck_assert(sim_deliver(&s, Q_S2C, 0));      /* P's answer arrives */
	ck_assert_uint_eq(rm_client_outstanding(&s.cl[0]), 0);
	post_cas(&s, 0, lock_va(3), 1, 0);         /* P+1 */
	finish(&s);
	ck_assert_msg(s.cl[0].ops[psn % RM_WIN].psn == psn &&
		      s.cl[0].ops[psn % RM_WIN].result == 0,
		      "client 0's CAS at P ran (0 -> 1) but it was told orig %#llx",
		      (unsigned long long)s.cl[0].ops[psn % RM_WIN].result);
	ck_assert_uint_eq(s.cl[0].ops[(psn + 1) % RM_WIN].result, 4);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), 4);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_dup_write_ack_at_real_atomic)
{
	/* A WRITE, then a CAS on a word swordd does not know (passed real).
	 * The WRITE is duplicated on its way to the server, which answers
	 * the copy with an ACK of its latest PSN: the CAS's (rxe's
	 * duplicate_request).  That ACK overtakes the ATOMIC ACK.  A plain
	 * ACK is no answer to an atomic (I3): the client, strict, must not
	 * see it; the ATOMIC ACK after it completes both. */
	struct sim s;
	struct rm_frame w, cas, ack;

	init(&s, 1, 0, false, "conn-dupack");
	post_read(&s, 0);                         /* pairs the connection */
	sim_flow(&s, 1000);
	post(&s, 0, &(struct rm_op){ .type = RM_WRITE, .va = SIM_DATA, .len = 8,
				     .ackreq = true, .user = MANUAL });
	post_cas(&s, 0, lock_va(5), 1, 0);
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(C(&s)->passed_real_atomic, 1);
	ck_assert(rm_queue_take(&s.q[Q_S2M], 0, &w));
	ck_assert(rm_queue_take(&s.q[Q_S2M], 0, &cas));
	rm_queue_push(&s.q[Q_S2M], w.buf, w.len);
	rm_queue_push(&s.q[Q_S2M], cas.buf, cas.len);
	rm_queue_push(&s.q[Q_S2M], w.buf, w.len);  /* the duplicate */
	for (int i = 0; i < 3; i++)
		ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert_uint_eq(s.q[Q_M2S].n, 3);       /* ACK, ATOMIC ACK, ACK */
	ck_assert(rm_queue_take(&s.q[Q_M2S], 2, &ack));
	rm_queue_push(&s.q[Q_M2S], ack.buf, ack.len);
	ck_assert(sim_deliver(&s, Q_M2S, 2));     /* the duplicate's ACK first */
	ck_assert_uint_eq(C(&s)->dup_ack_dropped, 1);
	ck_assert_msg(sim_run(&s, 100000, 0), "run did not finish: %u errors",
		      sim_client_errors(&s, errbuf, sizeof(errbuf)));
	ASSERT_CLEAN(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s5_read_span_overestimated)
{
	/* pmtu below the path MTU: a READ is taken for more PSNs than it
	 * uses.  The request after it touches a lock word; it must be
	 * accepted (the span is repaired), not dropped on every
	 * retransmission until the client's QP dies. */
	struct sim s;

	init(&s, 2, 0, false, "conn-s5");
	s.prm.pmtu = 4;   /* every 8-byte READ looks like 2 PSNs */
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	learn(&s, 1, lock_va(3));
	post(&s, 0, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA, .len = 8,
				     .user = MANUAL });
	post_cas(&s, 0, lock_va(3), 9, 0);
	sim_flow(&s, 1000);
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), 9);
	ck_assert_uint_ge(C(&s)->read_span_fixed, 1);
	ck_assert_uint_eq(s.timeouts, 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

static bool
drop_to_client0(struct sim *s, int q, const struct rm_frame *f)
{
	uint8_t buf[RM_FRAME_MAX];
	struct roce_pkt p;

	if (q != Q_S2C || *(int *)s->filter_ctx <= 0)
		return false;
	memcpy(buf, f->buf, f->len);
	if (roce_parse(buf, f->len, &p) != ROCE_OK || p.qpn != SIM_CL_QPN(0))
		return false;
	return true;
}

START_TEST(t_s6_go_back_n_beyond_ring)
{
	/* Every response to client 0 is lost after swordd while 24 requests
	 * are outstanding (ring of 16 stubs), the last a rewritten CAS.  Its
	 * go-back-N starts 24 PSNs back: the connection must not be reset —
	 * the CAS is answered as the same ATOMIC ACK, never a plain ACK, and
	 * never reaches the server as a real atomic. */
	struct sim s;
	int dropping = 1;

	init(&s, 1, 0, false, "conn-s6");
	s.prm.ring_size = 16;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	learn(&s, 0, lock_va(4));
	s.filter = drop_to_client0;
	s.filter_ctx = &dropping;
	for (int k = 0; k < 23; k++) {
		post_write(&s, 0, SIM_DATA + 8 * (uint64_t)(k % 8), (uint64_t)k);
		sim_flow(&s, 100);
	}
	post_cas(&s, 0, lock_va(4), 7, 0);
	sim_flow(&s, 100);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 7);
	dropping = 0;
	finish(&s);
	ck_assert_uint_eq(C(&s)->conn_reincarnated, 0);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 7);
	ck_assert_uint_eq(s.cl[0].ops[(SHERMAN_PSN + 25) % RM_WIN].result, 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* Build a request from client i with arbitrary PSN (ICRC good or not). */
static uint32_t
frame_for(struct sim *s, int i, uint8_t *buf, uint8_t opcode, uint32_t psn,
	  uint64_t va, uint64_t a0, uint64_t a1, bool bad_icrc)
{
	uint8_t ext[28];
	uint32_t n;
	uint64_t be;

	be = rte_cpu_to_be_64(va);
	memcpy(ext, &be, 8);
	*(uint32_t *)(ext + 8) = rte_cpu_to_be_32(SIM_RKEY);
	be = rte_cpu_to_be_64(a0);
	memcpy(ext + 12, &be, 8);
	be = rte_cpu_to_be_64(a1);
	memcpy(ext + 20, &be, 8);
	n = rm_build(buf, &s->cl[i].to_server, opcode, psn, true, ext, 28, NULL, 0);
	if (bad_icrc)
		buf[n - 1] ^= 0x5a;
	return n;
}

START_TEST(t_s7_bad_icrc_creates_nothing)
{
	/* a request with a bad ICRC (and a spoofed QP) takes no slot */
	struct sim s;
	uint8_t f[RM_FRAME_MAX];
	uint32_t len;
	struct roce_pkt p;

	init(&s, 1, 0, false, NULL);
	for (uint32_t k = 0; k < 200; k++) {
		s.cl[0].to_server.dest_qpn = 0x4000 + k;
		len = frame_for(&s, 0, f, ROCE_RC_COMPARE_SWAP, 77 + k, lock_va(5), 1, 0, true);
		ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
		ck_assert_int_eq(ser_on_request(s.ser, f, &len, sizeof(f), &p, s.now),
				 SER_FORWARD);
	}
	ck_assert_uint_eq(ser_conn_count(s.ser), 0);
	ck_assert_uint_ge(C(&s)->bad_icrc_passed, 200);
	sim_free(&s);
}
END_TEST

START_TEST(t_s7_table_churn_recovers)
{
	/* QP churn fills a table of 4 connections; idle ones age out and the
	 * next QPs' words are decided again (nothing given up for good). */
	struct sim s;
	struct rm_addr up;

	init(&s, 2, 0, false, "conn-s7");
	s.prm.max_conns = 4;
	s.prm.conn_idle_tsc = 1000;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	for (int round = 0; round < 6; round++) {
		/* a new QP number for client 0 each round (its server end too) */
		s.cl[0].to_server.dest_qpn = SIM_SRV_QPN(0) + 0x1000u * (uint32_t)(round + 1);
		for (uint32_t k = 0; k < s.srv.n_qps; k++)
			if (s.srv.qps[k].to_client.dest_qpn == SIM_CL_QPN(0)) {
				s.srv.qps[k].qpn = s.cl[0].to_server.dest_qpn;
				rm_responder_reset_qp(&s.srv.qps[k], SHERMAN_PSN);
			}
		up = s.cl[0].to_server;
		rm_client_init(&s.cl[0], 0, &up, SIM_CL_QPN(0), SIM_RKEY, SHERMAN_PSN);
		s.cl[0].ctx = &s;
		post_read(&s, 0);                    /* pairs the new QP */
		post_cas(&s, 0, lock_va(6), 0, 0);   /* learns or confirms 0 */
		post_cas(&s, 0, lock_va(6), 1, 0);
		post_cas(&s, 0, lock_va(6), 0, 1);
		sim_flow(&s, 1000);
		s.now += 5000;                       /* everything idle */
	}
	ck_assert_uint_le(ser_conn_count(s.ser), 4);
	ck_assert_msg(C(&s)->conn_evicted > 0, "created %llu evicted %llu full %llu",
		      (unsigned long long)C(&s)->conn_created,
		      (unsigned long long)C(&s)->conn_evicted,
		      (unsigned long long)C(&s)->table_full);
	ck_assert_uint_gt(C(&s)->granted, 0);
	if (getenv("SER_VERBOSE"))
		fprintf(stderr, "granted %llu failed %llu real %llu relearn %llu learned %llu "
			"paired %llu reinc %llu\n",
			(unsigned long long)C(&s)->granted, (unsigned long long)C(&s)->failed_local,
			(unsigned long long)C(&s)->passed_real_atomic,
			(unsigned long long)C(&s)->relearn, (unsigned long long)C(&s)->learned,
			(unsigned long long)C(&s)->paired, (unsigned long long)C(&s)->conn_reincarnated);
	/* the last round's CASes were decided here */
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(6), NULL,
				      NULL), SER_WORD_KNOWN);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s7_huge_write_over_words)
{
	/* a WRITE covering more than 65,535 lock words: every one is busy */
	struct ser_region r = { .server_ip4 = SIM_SERVER_IP, .rkey = SIM_RKEY,
				.base = 0x100000, .len = 8 * 70000 };
	struct ser_params prm = { .regions = &r, .n_regions = 1, .max_conns = 4,
				  .ring_size = 16 };
	struct ser *ser = ser_create(&prm);
	struct rm_addr a = { .src_ip = SIM_CLIENT_IP(0), .dst_ip = SIM_SERVER_IP,
			     .dest_qpn = 0x100 };
	uint8_t f[RM_FRAME_MAX], reth[16];
	uint32_t len, inflight = 0;
	struct roce_pkt p;
	uint64_t be = rte_cpu_to_be_64(r.base);

	struct rm_addr down = { .src_ip = SIM_SERVER_IP, .dst_ip = SIM_CLIENT_IP(0),
				.dest_qpn = 0x200 };
	uint8_t aeth[4] = { 0, 0, 0, 1 };
	struct ser_emit emit[4];
	uint32_t n_emit;

	ck_assert_ptr_nonnull(ser);
	memcpy(reth, &be, 8);
	*(uint32_t *)(reth + 8) = rte_cpu_to_be_32(SIM_RKEY);
	/* a READ and its answer pair the connection */
	*(uint32_t *)(reth + 12) = rte_cpu_to_be_32(8);
	len = rm_build(f, &a, ROCE_RC_READ_REQUEST, 9, true, reth, 16, NULL, 0);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ser_on_request(ser, f, &len, sizeof(f), &p, 1);
	len = rm_build(f, &down, ROCE_RC_READ_RESPONSE_ONLY, 9, false, aeth, 4,
		       (const uint8_t *)"01234567", 8);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ser_on_response(ser, f, &len, sizeof(f), &p, 1, emit, 4, &n_emit);
	ck_assert_uint_eq(ser_counters(ser)->paired, 1);
	*(uint32_t *)(reth + 12) = rte_cpu_to_be_32(8 * 70000);
	len = rm_build(f, &a, ROCE_RC_WRITE_FIRST, 10, false, reth, 16,
		       (const uint8_t *)"01234567", 8);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ser_on_request(ser, f, &len, sizeof(f), &p, 1);
	ser_word_get(ser, SIM_SERVER_IP, SIM_RKEY, r.base + 8 * 69999, NULL, &inflight);
	ck_assert_uint_eq(inflight, 1);
	ser_destroy(ser);
}
END_TEST

START_TEST(t_s8_response_ahead_of_window)
{
	/* Client 0 releases with WRITE(0), not yet ACKed.  One response to
	 * client 0 with a PSN beyond anything it sent must acknowledge
	 * nothing: client 1's CAS stays refused until the real ACK. */
	struct sim s;
	uint8_t f[RM_FRAME_MAX];
	uint32_t len, n_emit;
	struct roce_pkt p;
	struct ser_emit emit[8];
	struct rm_addr down = { .src_ip = SIM_SERVER_IP, .dst_ip = SIM_CLIENT_IP(0),
				.dest_qpn = SIM_CL_QPN(0) };
	uint8_t aeth[4] = { 0, 0, 0, 50 };

	init(&s, 2, 0, false, "conn-s8");
	sim_sherman_setup(&s, 1);
	learn(&s, 1, lock_va(7));
	pair(&s, 0);                                /* pairs client 0 */
	post_cas(&s, 0, lock_va(7), 1, 0);          /* client 0 takes it */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(7)), 1);
	post_write(&s, 0, lock_va(7), 0);           /* release, held */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	/* the spoofed (well-formed) ACK, 1000 PSNs ahead */
	len = rm_build(f, &down, ROCE_RC_ACKNOWLEDGE,
		       (SHERMAN_PSN + 1000) & ROCE_PSN_MASK, false, aeth, 4, NULL, 0);
	ck_assert_uint_eq(C(&s)->granted, 1);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ser_on_response(s.ser, f, &len, sizeof(f), &p, s.now, emit, 8, &n_emit);
	/* client 1's CAS(2, 0): must not be granted before the release lands */
	post_cas(&s, 1, lock_va(7), 2, 0);
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	if (s.q[Q_S2M].n == 2)                      /* it passed: runs first */
		ck_assert(sim_deliver(&s, Q_S2M, 1));
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(7)) == 2 ||
			  rm_mem_get(&s.srv, lock_va(7)) == 0, 1);
	/* client 1's answer agrees with memory */
	ck_assert(s.cl[1].ops[(SHERMAN_PSN + 2) % RM_WIN].result != 0 ||
		  rm_mem_get(&s.srv, lock_va(7)) == 2);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_s9_replay_other_content)
{
	/* A "retransmission" of a rewritten CAS's PSN with another address
	 * (outside every lock region) is not a retransmission: it must not
	 * be turned into the recorded WRITE. */
	struct sim s;
	uint8_t f[RM_FRAME_MAX];
	uint32_t len;
	struct roce_pkt p;
	enum ser_verdict v;

	init(&s, 1, 0, false, NULL);
	learn(&s, 0, lock_va(8));
	post_cas(&s, 0, lock_va(8), 1, 0);          /* rewritten at 3187 */
	sim_flow(&s, 1000);
	ck_assert_uint_ge(C(&s)->granted, 1);
	len = frame_for(&s, 0, f, ROCE_RC_COMPARE_SWAP, SHERMAN_PSN + 2, SIM_DATA,
			1, 0, false);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	v = ser_on_request(s.ser, f, &len, sizeof(f), &p, s.now);
	ck_assert_int_ne(v, SER_FORWARD_REWRITTEN);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ck_assert_uint_eq(p.opcode, ROCE_RC_COMPARE_SWAP);
	sim_free(&s);
}
END_TEST

/* A real CAS, answered; its request sent again (the client's timer fired
 * while the answer was on its way): the copy goes to the server, which
 * answers it from its replay cache. */
static void
real_cas_sent_twice(struct sim *s, int i, uint64_t va, uint64_t swap, uint64_t cmp)
{
	struct rm_frame cas;

	post_cas(s, i, va, swap, cmp);
	ck_assert_uint_eq(s->q[Q_C2S].n, 1);
	ck_assert(rm_queue_take(&s->q[Q_C2S], 0, &cas));
	rm_queue_push(&s->q[Q_C2S], cas.buf, cas.len);
	sim_flow(s, 1000);
	rm_queue_push(&s->q[Q_C2S], cas.buf, cas.len);
	sim_flow(s, 1000);
}

START_TEST(t_replay_of_real_atomic_held_until_answered)
{
	/* A spurious retransmission of a real CAS the server has answered
	 * holds the word only until the server answers the copy: the word
	 * is relearned by the next op and decided again at once, not after
	 * the orphan hold (pending_expire: 50,000,000 here).  Before, every
	 * such copy held the word for the whole orphan hold, and on a loaded
	 * rack (10 ms client timers) acceleration stopped altogether. */
	struct sim s;
	uint64_t real;

	init(&s, 2, 0, false, "conn-replay-real");
	post_read(&s, 0);
	post_read(&s, 1);
	sim_flow(&s, 1000);                       /* pairs both */
	real_cas_sent_twice(&s, 0, lock_va(1), 1, 0);
	ck_assert_uint_eq(s.srv.atomics, 1);
	ck_assert_uint_ge(s.srv.duplicates, 1);
	ck_assert_uint_ge(C(&s)->dup_replayed, 1);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(1)), 1);
	/* the copy may have run (a new life with the same content): the
	 * next op relearns the word */
	real = C(&s)->passed_real_atomic;
	post_cas(&s, 1, lock_va(1), 2, 0);
	sim_flow(&s, 1000);
	ck_assert_uint_eq(C(&s)->passed_real_atomic, real + 1);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(1), NULL, NULL),
			 SER_WORD_KNOWN);
	/* and then decides */
	post_cas(&s, 1, lock_va(1), 2, 0);
	sim_flow(&s, 1000);
	ck_assert_uint_eq(C(&s)->passed_real_atomic, real + 1);
	ck_assert_uint_eq(C(&s)->failed_local, 1);
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(1)), 1);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_replay_of_real_atomic_new_life_runs)
{
	/* What the hold is for.  Client 0 takes the lock by a real CAS at
	 * 3186 and releases it.  It re-creates its QP (same QPN, PSN 3185)
	 * and sends the same READ and the same CAS: to swordd a replay of an
	 * answered real atomic, to the server's new QP a fresh CAS, which
	 * takes the lock.  Until the server answers it, swordd must not
	 * decide the word from what it knew (free): client 1's CAS must not
	 * be granted. */
	struct sim s;
	uint64_t granted;

	init(&s, 2, 0, false, "conn-replay-new-life");
	post_read(&s, 0);
	post_read(&s, 1);
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(2), 1, 0);        /* 3186: real, learns 1 */
	sim_flow(&s, 1000);
	post_write(&s, 0, lock_va(2), 0);         /* modelled release */
	sim_flow(&s, 1000);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(2), NULL, NULL),
			 SER_WORD_KNOWN);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(2)), 0);
	sim_reconnect(&s, 0);
	post_read(&s, 0);                         /* 3185 */
	post_cas(&s, 0, lock_va(2), 1, 0);        /* 3186, same content */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));     /* the new QP runs it */
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(2)), 1);
	/* its answer has not reached swordd yet */
	granted = C(&s)->granted;
	post_cas(&s, 1, lock_va(2), 2, 0);
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(C(&s)->granted, granted);
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(2)), 1);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* Two clients, both paired; client 0 holds lock word va by a CAS(0->1)
 * granted here, its WRITE 1 run and ACKed. */
static void
zero_holds(struct sim *s, const char *name, uint64_t va)
{
	init(s, 2, 0, false, name);
	learn(s, 0, va);
	post_read(s, 1);                          /* pairs client 1 */
	sim_flow(s, 1000);
	post_cas(s, 0, va, 1, 0);
	sim_flow(s, 1000);
	ck_assert_uint_eq(rm_mem_get(&s->srv, va), 1);
}

/*
 * closed fuzzer finding accel-newlife-release-rolled-back, without its
 * re-creation.  A holds the lock by a grant decided here and releases it
 * (WRITE 0); the server runs the release, its ACK is still on its way.
 * B READs the word (0: free) and then CASes 0->2.  The S2 gate used to
 * answer B "failed, orig 1" from the value before the release: after
 * B's own READ of 0 that is not a value memory held any more (not
 * linearizable; B spins on a free lock).  B's READ went to the server
 * after the release did, so the gate may not answer from before it: B's
 * CAS goes real (one write pending, it cannot change a word holding 1)
 * and takes the free lock.
 */
START_TEST(t_gate_after_read_of_release)
{
	struct sim s;

	zero_holds(&s, "conn-gate-read-release", lock_va(5));
	post_write(&s, 0, lock_va(5), 0);         /* A: release */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));     /* runs; its ACK waits */
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 0);
	post(&s, 1, &(struct rm_op){ .type = RM_READ, .va = lock_va(5), .len = 8,
				     .user = MANUAL });
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert_uint_eq(s.q[Q_M2S].n, 2);
	ck_assert(sim_deliver(&s, Q_M2S, 1));     /* B's READ answer: 0 */
	ck_assert(sim_deliver(&s, Q_S2C, 0));
	post_cas(&s, 1, lock_va(5), 2, 0);        /* B: the lock is free */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_ge(C(&s)->gated_read_seen, 1);
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 2);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/*
 * The closed fuzzer's both-blind-writes-grant-over-held, without
 * remapping.  Client 1 WRITEs 1 to a word that holds 1 (modelled: it
 * changes nothing if it lands now) and the WRITE is lost on its way to
 * the server; client 0 then WRITEs 0.  Client 1's resent WRITE 1 lands
 * after client 0's 0: memory 1.  It used to be modelled as no write at
 * all, so client 0's WRITE was not gated and the shadow said 0 (a later
 * CAS(0->x) granted over 1).  A write of the value the word holds gates
 * like any other until its ACK: client 0's WRITE waits, memory and
 * shadow agree.
 */
START_TEST(t_noop_write_overtaken)
{
	struct sim s;

	zero_holds(&s, "conn-noop-write-overtaken", lock_va(7));
	post_write(&s, 1, lock_va(7), 1);         /* the value it holds */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_drop(&s, Q_S2M, 0));        /* lost before the server */
	post_write(&s, 0, lock_va(7), 0);
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_ge(C(&s)->write_gated_drop, 1);
	finish(&s);                               /* checks shadow == memory */
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* The answer client i's current life got at psn (an atomic's orig). */
static uint64_t
answer_at(struct sim *s, int i, uint32_t psn)
{
	for (int k = 0; k < RM_WIN; k++)
		if (s->cl[i].ops[k].psn == psn && s->cl[i].ops[k].state == 2)
			return s->cl[i].ops[k].result;
	ck_abort_msg("client %d PSN %u not answered", i, psn);
	return 0;
}

/*
 * The closed fuzzer's accel-many-lives-cas-answer-never-held, by hand.
 * Client 0's CAS(0->1) is granted here and its WRITE 1 is lost on its way
 * to the server; client 0's QP is then re-created (a new life: the old
 * QP and its WRITE are gone).  Client 1's CAS(0->2) used to be answered
 * "failed, orig 1" from the shadow, as if the WRITE would still land:
 * memory holds 0.  Once the write's connection ended the shadow is no
 * answer: the CAS waits (asked back) until the write expires, then runs
 * at the server and takes the lock.
 */
START_TEST(t_orphan_pending_no_shadow_answer)
{
	struct sim s;
	uint32_t psn;

	init(&s, 2, 0, false, "conn-orphan-pending");
	s.prm.pending_expire_tsc = 200000;        /* the wait, short */
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	learn(&s, 0, lock_va(8));
	post_read(&s, 1);                         /* pairs client 1 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(8), 1, 0);        /* granted here */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_drop(&s, Q_S2M, 0));        /* its WRITE 1 is lost */
	sim_reconnect(&s, 0);
	post(&s, 0, &(struct rm_op){ .type = RM_READ, .va = lock_va(9), .len = 8,
				     .user = MANUAL });  /* the new life */
	sim_flow(&s, 1000);
	psn = s.cl[1].next_psn;
	post_cas(&s, 1, lock_va(8), 2, 0);
	finish(&s);
	ck_assert_uint_eq(answer_at(&s, 1, psn), 0);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(8)), 2);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/*
 * The open safety bug of 2026-11-27 (CI's e2e-sherman-accel-samepsn-
 * reconnect, a lock counter one short).  Client 0 (out of band, no RDMA
 * CM) is granted the lock by a CAS decided here (3187, WRITE 1) and
 * releases it (3188, WRITE 0).  It re-creates its QP with the same QPN
 * and PSNs and sends the same READs and the same CAS: to swordd a copy of
 * the answered grant, on a word that moved since (its own release); to
 * the server's new QP a fresh CAS.  Replayed as a zero-length WRITE with
 * the recorded "granted", the new life held a lock memory did not show,
 * and client 1's CAS(0->2) was granted too: two holders.  It must run as
 * the real CAS: memory 1, client 1's CAS fails.
 */
START_TEST(t_new_life_cas_after_own_release)
{
	struct sim s;

	init(&s, 2, 0, false, "conn-new-life-cas-own-release");
	learn(&s, 1, lock_va(4));
	pair(&s, 0);                              /* 3185, 3186 */
	post_cas(&s, 0, lock_va(4), 1, 0);        /* 3187: decided, granted */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 1);
	post_write(&s, 0, lock_va(4), 0);         /* 3188: the release */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 0);
	sim_reconnect(&s, 0);
	pair(&s, 0);                              /* 3185, 3186 */
	post_cas(&s, 0, lock_va(4), 1, 0);        /* 3187, same content */
	sim_flow(&s, 1000);
	/* the server was asked whether its QP has 3187: the new one has
	 * not.  Nothing asks the client to resend (an RNR NAK there would
	 * carry the old life's MSN): its next copy, on its timer, runs */
	ck_assert_uint_eq(ser_counters(s.ser)->probe_lacked, 1);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 0);
	rm_client_timeout(&s.cl[0], &s.q[Q_C2S]);
	sim_flow(&s, 1000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 1);
	ck_assert_uint_eq(ser_counters(s.ser)->replay_ran, 1);
	post_cas(&s, 1, lock_va(4), 2, 0);        /* must fail: 0 holds it */
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(4)), 1);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/*
 * The closed fuzzer's accel-newlife-unanswered-grant-replayed, by hand.
 * Client 0's CAS(0->1) at 3187 is granted here and its WRITE 1 runs, but
 * the server's ACK is lost: the decision is unacknowledged when client
 * 0's QP is re-created out of band (same QPN, same PSNs) and the new
 * life repeats its requests byte for byte.  Its copy of 3187 met a stub
 * the server had not acknowledged and was sent again as the recorded
 * WRITE: the new QP ran it and the client was told "granted, orig 0"
 * where memory held the old life's 1 (the server would fail it).  A copy
 * of an unacknowledged decision in a run of copies from the first PSN is
 * probed: the new QP runs the CAS itself and answers "failed, orig 1".
 */
START_TEST(t_new_life_copy_of_unacked_grant)
{
	struct sim s;

	init(&s, 2, 0, false, "conn-new-life-copy-unacked-grant");
	learn(&s, 1, lock_va(10));
	pair(&s, 0);                              /* 3185, 3186 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(10), 1, 0);       /* 3187: decided, granted */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));     /* WRITE 1 runs */
	ck_assert(sim_drop(&s, Q_M2S, 0));        /* its ACK is lost */
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(10)), 1);
	sim_reconnect(&s, 0);
	pair(&s, 0);                              /* 3185, 3186 */
	post_cas(&s, 0, lock_va(10), 1, 0);       /* 3187, same content */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(ser_counters(s.ser)->probe_lacked, 1);
	ck_assert_uint_eq(answer_at(&s, 0, 3187), 1);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(10)), 1);
	ck_assert_uint_ge(ser_counters(s.ser)->replay_probed, 1);
	finish(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* The answer client i got for its atomic at psn (RM_WIN ops kept). */
static uint64_t
atomic_result(struct sim *s, int i, uint32_t psn)
{
	for (unsigned int k = 0; k < RM_WIN; k++)
		if (s->cl[i].ops[k].psn == psn && s->cl[i].ops[k].type == RM_CAS &&
		    s->cl[i].ops[k].state == 2)
			return s->cl[i].ops[k].result;
	ck_abort_msg("client %d: no answered CAS at %u", i, psn);
	return 0;
}


/*
 * The closed fuzzer's accel-newlife-stale-answer-58d663, by hand.  Client
 * 0 pipelines a CAS chain on a lock word (both reach swordd before the
 * first answer leaves): CAS(0->1), granted here (WRITE 1), and CAS(0->1)
 * again, failed here (zero-length WRITE, orig 1); later it releases
 * (WRITE 0) and writes 5 itself.  Its QP is re-created out of band and
 * the new life repeats the chain at the same PSNs.  Both copies used to
 * get the old life's answers (a pipelined grant's retransmission seemed
 * to need them; a failure's copy was never sent): "granted, orig 0" for
 * a word holding 5.  Every copy on the moved word must run at the
 * server: both fail with orig 5.
 */
START_TEST(t_new_life_repeats_cas_chain)
{
	struct sim s;

	init(&s, 2, 0, false, "conn-new-life-cas-chain");
	learn(&s, 0, lock_va(6));                 /* 3185, 3186 */
	post_cas(&s, 0, lock_va(6), 1, 0);        /* 3187: granted */
	post_cas(&s, 0, lock_va(6), 1, 0);        /* 3188: fails, orig 1 */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_C2S, 0));     /* before any answer */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(answer_at(&s, 0, 3187), 0);
	ck_assert_uint_eq(answer_at(&s, 0, 3188), 1);
	post_write(&s, 0, lock_va(6), 0);         /* 3189: release */
	post_write(&s, 0, lock_va(6), 5);         /* 3190 */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(6)), 5);
	sim_reconnect(&s, 0);
	post_read(&s, 0);                         /* 3185 */
	post_cas(&s, 0, lock_va(6), 0, 0);        /* 3186 */
	post_cas(&s, 0, lock_va(6), 1, 0);        /* 3187 */
	post_cas(&s, 0, lock_va(6), 1, 0);        /* 3188 */
	finish(&s);
	ck_assert_uint_eq(answer_at(&s, 0, 3187), 5);
	ck_assert_uint_eq(answer_at(&s, 0, 3188), 5);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(6)), 5);
	ck_assert_uint_ge(C(&s)->replay_ran, 1);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/*
 * The server's MSN offset from a duplicate READ (closed fuzzer
 * state-restart-atomic-ack-msn-ahead, here with no restart).  A CAS
 * granted here (run as a WRITE), a READ and a WRITE all run at the
 * server and every answer is lost before swordd.  The client goes back
 * N: the server ACKs the duplicate WRITE at its newest PSN (lost too) and
 * re-executes the READ, answering with its current MSN, one message
 * ahead of the READ's own.  Taken as the offset, it made the ATOMIC ACK
 * synthesized for the grant one ahead of the server's MSN.
 */
START_TEST(t_msn_not_from_duplicate_read)
{
	struct sim s;
	char buf[512];
	uint32_t acks = 0;

	init(&s, 1, 0, false, "conn-msn-dup-read");
	learn(&s, 0, lock_va(9));                 /* 3185, 3186: MSN 1, 2 */
	post_cas(&s, 0, lock_va(9), 1, 0);        /* 3187: 3, granted here */
	post_read(&s, 0);                         /* 3188: 4 */
	post_write(&s, 0, SIM_DATA, 7);           /* 3189: 5 */
	for (int i = 0; i < 3; i++)
		ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(C(&s)->granted, 1);
	for (int i = 0; i < 3; i++)
		ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(9)), 1);
	while (s.q[Q_M2S].n)                      /* every answer lost */
		ck_assert(sim_drop(&s, Q_M2S, 0));
	rm_client_timeout(&s.cl[0], &s.q[Q_C2S]); /* go-back-N */
	while (s.q[Q_C2S].n)
		ck_assert(sim_deliver(&s, Q_C2S, 0));
	while (s.q[Q_S2M].n)
		ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert_uint_eq(s.q[Q_M2S].n, 3);
	ck_assert(sim_drop(&s, Q_M2S, 0));        /* the duplicate WRITE's ACK */
	ck_assert(sim_deliver(&s, Q_M2S, 0));     /* the READ's, MSN 5 */
	for (uint32_t i = 0; i < s.q[Q_S2C].n; i++) {
		const struct rm_frame *o = &s.q[Q_S2C].f[(s.q[Q_S2C].head + i) % s.q[Q_S2C].cap];
		struct roce_pkt p;

		ck_assert_int_eq(roce_parse(o->buf, o->len, &p), ROCE_OK);
		if (p.opcode != ROCE_RC_ATOMIC_ACKNOWLEDGE)
			continue;
		ck_assert_uint_eq(p.psn, 3187);
		ck_assert_uint_eq(roce_get_msn(o->buf, &p), 3);  /* the server's */
		acks++;
	}
	ck_assert_uint_eq(acks, 1);
	sim_flow(&s, 100000);
	/* what the client model says of the server's own re-executed READ,
	 * in pass-through too */
	if (sim_client_errors(&s, buf, sizeof(buf))) {
		ck_assert_msg(strstr(buf, "RC_READ_RESPONSE_ONLY PSN 3188 MSN 5, expected 4") != NULL,
			      "%s", buf);
		s.cl[0].errors = 0;
	}
	finish(&s);
	ck_assert_uint_eq(atomic_result(&s, 0, 3187), 0);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(9)), 1);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/*
 * Issue #30's audit: a restart with a granted WRITE in flight.  A's CAS
 * (0->1) is granted here; the WRITE swordd made of it is on its way to
 * the server when swordd restarts (all state lost).  B's CAS(0->2)
 * reaches the new instance, which knows nothing of the word: passed real
 * and run ahead of A's WRITE, it is granted (original 0), then A's WRITE
 * lands: two holders.  With the start quiet (ser_params.start_quiet_tsc)
 * B's CAS waits (dropped, asked back) until A's WRITE must have landed,
 * and fails on A's value.  _i: 0 the quiet on, 1 off (the bug, as with
 * learn_holdoff alone).
 */
START_TEST(t_restart_granted_write_in_flight)
{
	struct sim s;

	init(&s, 2, 0, false, _i ? "conn-restart-write-inflight-noquiet" :
	     "conn-restart-write-inflight");
	s.prm.start_quiet_tsc = _i ? 0 : 20000;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	learn(&s, 1, lock_va(5));                 /* B: 3185, 3186 */
	pair(&s, 0);                              /* A: 3185, 3186 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(5), 1, 0);        /* A: 3187, decided */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);       /* A's WRITE(1), on its way */
	ser_reset(s.ser);                         /* the restart */
	ser_start(s.ser, s.now);
	post_cas(&s, 1, lock_va(5), 2, 0);        /* B: 3187 */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	/* whatever the new instance sent goes first */
	ck_assert(sim_deliver(&s, Q_S2M, s.q[Q_S2M].n - 1));
	/* A's answer is lost with the old instance (a plain ACK for its CAS:
	 * the restart limit the state segment is for); B must finish */
	sim_run(&s, 200000, 100);
	ck_assert_int_eq(s.cl[1].next_psn, s.cl[1].oldest);
	if (_i == 0) {
		ck_assert_uint_ge(C(&s)->start_quiet_drop, 1);
		ck_assert_uint_eq(atomic_result(&s, 1, 3187), 1);  /* B fails */
	} else {
		ck_assert_uint_eq(atomic_result(&s, 1, 3187), 0);  /* two holders */
	}
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
	sim_free(&s);
}
END_TEST

/*
 * Issue #30: a fail-over bypass.  swordd hangs, its guardian sets the
 * links down and the switch carries the traffic around it; meanwhile a
 * client takes a lock swordd's shadow holds free (here: memory changed
 * behind its back).  swordd resumes: granting on the shadow would make
 * two holders.  ser_forget (swordd calls it before its links come up
 * again, sword_fn_ops.forget) starts over, so the next CAS goes real and
 * fails on the holder's value.  _i: 0 forgotten, 1 not (the bug).
 */
START_TEST(t_forget_after_bypass)
{
	struct sim s;

	init(&s, 2, 0, false, _i ? "conn-bypass-not-forgotten" : "conn-bypass-forgotten");
	learn(&s, 1, lock_va(5));                 /* C: 3185, 3186 */
	pair(&s, 0);                              /* A: 3185, 3186 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(5), 1, 0);        /* A takes it: 3187, decided */
	post_write(&s, 0, lock_va(5), 0);         /* and gives it back: 3188 */
	finish(&s);
	ck_assert_uint_ge(C(&s)->granted, 1);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 0);
	/* the bypass: another client takes the lock at the server */
	rm_mem_set(&s.srv, lock_va(5), 7);
	if (_i == 0)
		ser_forget(s.ser, s.now, 1000);
	post_cas(&s, 1, lock_va(5), 2, 0);        /* C: 3187 */
	finish(&s);
	if (_i == 0) {
		ck_assert_uint_eq(atomic_result(&s, 1, 3187), 7);  /* C fails */
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 7);
	} else {
		ck_assert_uint_eq(atomic_result(&s, 1, 3187), 0);  /* two holders */
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 2);
	}
	sim_free(&s);
}
END_TEST

/* One frame around swordd: taken from queue from, put on queue to (the
 * switch's fast-failover bucket while swordd is down). */
static void
bypass_one(struct sim *s, int from, int to)
{
	struct rm_frame f;

	ck_assert(rm_queue_take(&s->q[from], 0, &f));
	ck_assert(rm_queue_push(&s->q[to], f.buf, f.len));
}

/*
 * Issue #30: swordd dies with failover_bypass on, the switch carries the
 * traffic around it, and a new swordd adopts the dead one's tables
 * (ser_forget_unacked).  _i 0: A's CAS was granted here and the server
 * acknowledged its WRITE, but A's answer died with the process.  During
 * the bypass A's copy reaches the server, which ran a WRITE at that PSN
 * and has no answer to give (a responder drops a duplicate atomic it has
 * no result for: rxe's duplicate_request); without the adopted decision A
 * would retry until its QP fails.  The new swordd answers it as decided.
 * _i 1: A's grant never reached the server (its WRITE lost), and in the
 * bypass C took the lock at the server and A's copy ran there as itself
 * (failed, orig 7) and that answer was lost too: the decision is given up,
 * and A's next copy goes to the server, which answers it from its replay
 * cache.  Answering the decision would make two holders.
 */
START_TEST(t_adopt_after_bypass)
{
	struct sim s;

	init(&s, 2, 0, false, _i ? "conn-adopt-bypass-unacked" : "conn-adopt-bypass-acked");
	learn(&s, 1, lock_va(5));                 /* C: 3185, 3186 */
	pair(&s, 0);                              /* A: 3185, 3186 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(5), 1, 0);        /* A: 3187, decided */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);       /* its WRITE(1) */
	ck_assert_uint_eq(C(&s)->granted, 1);
	if (_i == 0) {
		ck_assert(sim_deliver(&s, Q_S2M, 0));
		ck_assert_uint_eq(s.q[Q_M2S].n, 1);  /* the server's ACK */
		ck_assert(sim_deliver(&s, Q_M2S, 0));
		ck_assert_uint_eq(s.q[Q_S2C].n, 1);  /* A's answer, */
		sim_drop(&s, Q_S2C, 0);              /* dying with swordd */
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
		/* the bypass: A's copy at the server, dropped there */
		rm_client_timeout(&s.cl[0], &s.q[Q_C2S]);
		bypass_one(&s, Q_C2S, Q_S2M);
		ck_assert(sim_deliver(&s, Q_S2M, 0));
		ck_assert_uint_eq(s.q[Q_M2S].n, 0);
	} else {
		sim_drop(&s, Q_S2M, 0);              /* the grant's WRITE lost */
		rm_mem_set(&s.srv, lock_va(5), 7);   /* C holds it */
		rm_client_timeout(&s.cl[0], &s.q[Q_C2S]);
		bypass_one(&s, Q_C2S, Q_S2M);        /* A's copy runs as itself */
		ck_assert(sim_deliver(&s, Q_S2M, 0));
		ck_assert_uint_eq(s.q[Q_M2S].n, 1);
		sim_drop(&s, Q_M2S, 0);              /* and its answer is lost */
	}
	/* the new swordd, on the old one's tables */
	ck_assert_uint_eq(ser_forget_unacked(s.ser, s.now, 1000), (uint32_t)_i);
	finish(&s);
	if (_i == 0) {
		ck_assert_uint_eq(atomic_result(&s, 0, 3187), 0);  /* granted */
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
	} else {
		ck_assert_uint_eq(atomic_result(&s, 0, 3187), 7);  /* the server's */
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 7);
	}
	ck_assert_uint_eq(s.cl[0].errors, 0);
	sim_free(&s);
}
END_TEST

/* A sim whose serializer lives in a state block (swordd --state). */
static void *
state_init_ips(struct sim *s, const char *name, int ips)
{
	size_t len;
	void *mem;

	init(s, 2, ips, false, name);
	len = (ser_state_size(&s->prm) + 63) & ~(size_t)63;
	ck_assert_uint_gt(len, 0);
	mem = aligned_alloc(64, len);
	ck_assert_ptr_nonnull(mem);
	memset(mem, 0, len);
	s->prm.state_mem = mem;
	s->prm.state_len = len;
	ck_assert_int_eq(sim_reconfigure(s), 0);
	return mem;
}

static void *
state_init(struct sim *s, const char *name)
{
	return state_init_ips(s, name, 0);
}

/* swordd killed and started again on its state block: nothing of the old
 * process is destroyed, the new one adopts the block. */
static void
state_restart(struct sim *s, struct ser_adopt_info *ai)
{
	s->prm.state_adopt = true;
	s->prm.state_now = s->now;
	s->ser = ser_create(&s->prm);
	s->prm.state_adopt = false;
	ck_assert_msg(s->ser != NULL, "adoption refused: %s", strerror(errno));
	ser_start(s->ser, s->now);
	ser_adopt_info(s->ser, ai);
}

/*
 * The restart limit the state segment is for (doc/operating.md,
 * "Restart"): A's CAS is granted here and runs at the server as a WRITE,
 * its answer is lost, swordd restarts.  _i 0: the new instance adopts the
 * old one's state (swordd --state): A's retransmission gets "granted"
 * and B's CAS later fails on A's value.  _i 1: it starts empty, as
 * without --state: the server has no atomic result for a WRITE, nobody
 * can answer A any more, and A's QP hangs on it.
 */
START_TEST(t_restart_adopts_state)
{
	struct sim s;
	struct ser_adopt_info ai;
	void *mem = state_init(&s, _i ? "conn-restart-empty" : "conn-restart-adopt");

	learn(&s, 1, lock_va(5));                 /* B: 3185, 3186 */
	pair(&s, 0);                              /* A: 3185, 3186 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(5), 1, 0);        /* A: 3187, granted here */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);       /* its WRITE(1) */
	ck_assert(sim_deliver(&s, Q_S2M, 0));
	ck_assert_uint_eq(s.q[Q_M2S].n, 1);       /* the server's ACK */
	ck_assert(sim_deliver(&s, Q_M2S, 0));
	ck_assert_uint_eq(s.q[Q_S2C].n, 1);       /* A's ATOMIC ACK ... */
	ck_assert(sim_drop(&s, Q_S2C, 0));        /* ... lost */
	if (_i == 0) {
		/* a block nobody can still be waiting on is refused */
		const uint64_t now = s.now;

		s.now += s.prm.conn_idle_tsc + 1;
		s.prm.state_adopt = true;
		s.prm.state_now = s.now;
		ck_assert_ptr_null(ser_create(&s.prm));
		ck_assert_int_eq(errno, ESTALE);
		s.prm.state_adopt = false;
		s.now = now;
		state_restart(&s, &ai);
		ck_assert_uint_eq(ai.conns, 2);
		ck_assert_uint_eq(ai.conns_given_up, 0);
		ck_assert_uint_ge(ai.words_known, 1);
	} else {
		ser_reset(s.ser);
		ser_start(s.ser, s.now);
	}
	sim_run(&s, 400000, 40);                  /* A's timer resends */
	if (_i == 0) {
		ck_assert_int_eq(s.cl[0].next_psn, s.cl[0].oldest);
		ck_assert_uint_eq(atomic_result(&s, 0, 3187), 0);   /* granted */
		post_cas(&s, 1, lock_va(5), 2, 0);                  /* B: 3187 */
		finish(&s);
		ck_assert_uint_eq(atomic_result(&s, 1, 3187), 1);   /* A holds it */
		ck_assert_uint_eq(C(&s)->failed_local, 1);          /* B: decided on A's value */
	} else {
		ck_assert_int_ne(s.cl[0].next_psn, s.cl[0].oldest);
	}
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
	sim_free(&s);
	free(mem);
}
END_TEST

/*
 * swordd killed in the middle of A's CAS: the block holds the state from
 * before the frame (_i 0: its WRITE never left) or after it (_i 1: it
 * left and ran), with the frame marked as in progress, as ser_on_request
 * leaves it at any instruction between.  The new instance must give up
 * A's connection and forget the word (nothing half made is decided on):
 * B's CAS then goes to the server as a real atomic and its answer is the
 * server's.  Never two holders: memory holds exactly the winner's value.
 */
START_TEST(t_restart_torn_frame)
{
	struct sim s;
	struct ser_adopt_info ai;
	void *mem = state_init(&s, _i ? "conn-restart-torn-after" : "conn-restart-torn-before");
	size_t len = s.prm.state_len;
	void *before = malloc(len);
	struct ser *old;
	uint64_t b;
	uint32_t wi;

	ck_assert_ptr_nonnull(before);
	learn(&s, 1, lock_va(5));                 /* B: 3185, 3186 */
	pair(&s, 0);                              /* A: 3185, 3186 */
	sim_flow(&s, 1000);
	memcpy(before, mem, len);
	post_cas(&s, 0, lock_va(5), 1, 0);        /* A: 3187, decided */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);
	if (_i == 0) {
		memcpy(mem, before, len);
		ck_assert(sim_drop(&s, Q_S2M, 0));
	} else {
		ck_assert(sim_deliver(&s, Q_S2M, 0));
		ck_assert(sim_drop(&s, Q_M2S, 0));   /* its ACK reaches no swordd */
	}
	old = mem;
	ser_torn_begin(old, TORN_REQUEST, sim_client_ip(&s, 0), SIM_SERVER_IP);
	old->torn.word = old->regions[0].first_word + (uint32_t)((lock_va(5) - SIM_LOCKS) / 8);
	old->torn.nwords = 1;
	state_restart(&s, &ai);
	ck_assert_uint_eq(ai.conns_given_up, 1);
	ck_assert_uint_ge(ai.words_given_up, 1);
	/* forgotten, or dirty until what it holds runs out: never decided on */
	wi = s.ser->regions[0].first_word + (uint32_t)((lock_va(5) - SIM_LOCKS) / 8);
	ck_assert(s.ser->words[wi].state != W_KNOWN || (s.ser->words[wi].flags & WF_DIRTY));
	post_cas(&s, 1, lock_va(5), 2, 0);        /* B: 3187 */
	sim_flow(&s, 100000);
	/* _i 1: A's WRITE, orphaned with A's connection, gates the word
	 * until it expires (pending_expire: 50 M here; the sim's clients retry
	 * for good) */
	sim_run(&s, 8000000, 1000);
	b = atomic_result(&s, 1, 3187);
	if (_i == 0) {
		/* A's CAS reaches the server as a real atomic, B's too: one wins */
		ck_assert_int_eq(s.cl[0].next_psn, s.cl[0].oldest);
		if (b == 0)
			ck_assert_uint_eq(atomic_result(&s, 0, 3187), 2);
		else
			ck_assert_uint_eq(atomic_result(&s, 0, 3187), 0);
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), b == 0 ? 2 : 1);
	} else {
		/* A's WRITE ran: B fails on A's value (A's own answer is given
		 * up with its connection: the cost of a torn frame) */
		ck_assert_uint_eq(b, 1);
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
	}
	sim_free(&s);
	free(before);
	free(mem);
}
END_TEST

/*
 * Two QPs of one client host (Sherman's are 4 per host): A's CAS granted
 * here ran as a WRITE and its answer was lost; then swordd is killed in
 * the middle of B's READ, after B's connection was looked up (the frame
 * marked with it, all its changes made).  Only B's connection is given
 * up: A's retransmission gets its recorded answer, granted.  Giving up
 * every connection between the two hosts (all a frame torn before its
 * connection is known can be charged with) cost A's QP: nobody can
 * answer a CAS that ran as a WRITE.  _i 1: torn before the lookup, the
 * hosts' connections are all given up.
 */
START_TEST(t_restart_torn_own_conn)
{
	struct sim s;
	struct ser_adopt_info ai;
	void *mem = state_init_ips(&s, _i ? "conn-restart-torn-hosts" : "conn-restart-torn-own", 1);

	ck_assert_uint_eq(sim_client_ip(&s, 0), sim_client_ip(&s, 1));
	learn(&s, 1, lock_va(5));                 /* B: 3185, 3186 */
	pair(&s, 0);                              /* A: 3185, 3186 */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(5), 1, 0);        /* A: 3187, granted here */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert(sim_deliver(&s, Q_S2M, 0));     /* its WRITE(1) ran */
	ck_assert(sim_deliver(&s, Q_M2S, 0));
	ck_assert_uint_eq(s.q[Q_S2C].n, 1);
	ck_assert(sim_drop(&s, Q_S2C, 0));        /* A's ATOMIC ACK lost */
	post_read(&s, 1);                         /* B: 3187 */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	if (_i == 0) {
		ck_assert_uint_lt(s.ser->torn.conn, s.prm.max_conns);
		s.ser->torn.what = TORN_REQUEST;  /* killed before its end */
	} else {
		ser_torn_begin(s.ser, TORN_REQUEST, sim_client_ip(&s, 1), SIM_SERVER_IP);
	}
	state_restart(&s, &ai);
	ck_assert_uint_eq(ai.conns_given_up, _i ? 2 : 1);
	sim_run(&s, 400000, 40);                  /* A's timer resends */
	if (_i == 0) {
		ck_assert_int_eq(s.cl[0].next_psn, s.cl[0].oldest);
		ck_assert_uint_eq(atomic_result(&s, 0, 3187), 0);   /* granted */
	} else {
		ck_assert_int_ne(s.cl[0].next_psn, s.cl[0].oldest); /* A hangs */
	}
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(5)), 1);
	sim_free(&s);
	free(mem);
}
END_TEST

/*
 * An atomic decided here, then the QP re-created out of band (same QPN,
 * same PSNs) and the same requests sent again: two READs and the same
 * atomic, on a word another client taught.  To swordd the atomic is byte
 * for byte the answered one at its PSN; to the server's new QP it is a new
 * one.  The server must run it: with the old life's answer replayed as its
 * WRITE, an FAA(+1) moved the counter once for two acknowledged FAAs (a
 * lost increment).  So an atomic of a connection the RDMA CM did not
 * identify is not decided here (ser_params.out_of_band off, swordd's
 * default): the server's atomic unit decides it, and its own replay rules
 * tell a retransmission from a new one.  _i: 0 FAA, the default (memory
 * 2), 1 FAA with out_of_band on (documented: for deployments that never
 * reuse a QPN), where the lost increment shows (memory 1), 2 CAS(0 -> 5),
 * the default: the first life's CAS runs at the server, the new life's
 * finds 5 there and fails (memory 5, nothing decided here).
 */
START_TEST(t_oob_new_life_runs)
{
	static const char *const names[] = { "conn-faa-new-life", "conn-faa-new-life-oob",
					     "conn-cas-new-life" };
	bool cas = _i == 2, oob = _i == 1;
	struct rm_op op = { .type = cas ? RM_CAS : RM_FAA, .va = lock_va(3),
			    .a = { cas ? 5 : 1, 0 }, .user = MANUAL };
	struct sim s;

	init(&s, 2, 0, false, names[_i]);
	s.prm.out_of_band = oob;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	learn(&s, 1, lock_va(3));
	post_read(&s, 0);                                    /* 3185 */
	post_read(&s, 0);                                    /* 3186 */
	post(&s, 0, &op);                                    /* 3187 */
	sim_flow(&s, 1000);
	ck_assert_uint_eq(C(&s)->faa_local + C(&s)->granted + C(&s)->failed_local, oob ? 1 : 0);
	ck_assert_uint_eq(C(&s)->out_of_band_real, oob ? 0 : 1);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), cas ? 5 : 1);
	sim_reconnect(&s, 0);
	post_read(&s, 0);
	post_read(&s, 0);
	post(&s, 0, &op);
	finish(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), cas ? 5 : oob ? 1 : 2);
	ck_assert_uint_eq(C(&s)->faa_local + C(&s)->granted + C(&s)->failed_local, oob ? 1 : 0);
	sim_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* RDMA CM, on the ConnectX capture */

#define CAP_SERVER RTE_BE32(0xc0a8010c)  /* 192.168.1.12 */

/* Frame n of the capture (1-based) into buf; its length. */
static uint32_t
cap_frame(const char *path, int n, uint8_t *buf, uint32_t cap)
{
	char errb[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, errb);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t len = 0;

	ck_assert_msg(pc != NULL, "%s", errb);
	for (int i = 1; pcap_next_ex(pc, &h, &data) == 1; i++)
		if (i == n) {
			len = h->caplen < cap ? h->caplen : cap;
			memcpy(buf, data, len);
			break;
		}
	pcap_close(pc);
	return len;
}

/* rc_find_req tries its last answer first: that slot, freed or living
 * again under another key, must never answer for the old key. */
START_TEST(t_rc_find_req_last_answer)
{
	const uint32_t cl = RTE_BE32(0x0a000001), cl2 = RTE_BE32(0x0a000002),
		       srv = RTE_BE32(0x0a000064);
	struct rc_params one = { .max_conns = 1 }, two = { .max_conns = 2 };
	struct rc_table *t = rc_create(&one);
	struct rc_conn *a, *b;

	ck_assert_ptr_nonnull(t);
	a = rc_open(t, cl, srv, 0x11, 100, 1);
	ck_assert_ptr_eq(rc_find_req(t, cl, srv, 0x11), a);
	ck_assert_ptr_null(rc_find_req(t, cl, srv, 0x12));
	ck_assert_ptr_null(rc_find_req(t, cl2, srv, 0x11));
	rc_close(t, a, 2);
	ck_assert_ptr_null(rc_find_req(t, cl, srv, 0x11));
	b = rc_open(t, cl2, srv, 0x22, 200, 3);       /* the same slot */
	ck_assert_ptr_eq(b, a);
	ck_assert_ptr_null(rc_find_req(t, cl, srv, 0x11));
	ck_assert_ptr_eq(rc_find_req(t, cl2, srv, 0x22), b);
	rc_reset(t);
	ck_assert_ptr_null(rc_find_req(t, cl2, srv, 0x22));
	rc_destroy(t);

	t = rc_create(&two);
	ck_assert_ptr_nonnull(t);
	a = rc_open(t, cl, srv, 0x11, 100, 1);
	b = rc_open(t, cl2, srv, 0x22, 200, 1);
	for (int k = 0; k < 3; k++) {
		ck_assert_ptr_eq(rc_find_req(t, cl, srv, 0x11), a);
		ck_assert_ptr_eq(rc_find_req(t, cl, srv, 0x11), a);
		ck_assert_ptr_eq(rc_find_req(t, cl2, srv, 0x22), b);
	}
	rc_reincarnate(t, a, 500, 2, false);      /* same key, new life */
	ck_assert_ptr_eq(rc_find_req(t, cl, srv, 0x11), a);
	rc_destroy(t);
}
END_TEST

static bool
owns_any(void *ctx, const struct rc_conn *c, uint32_t psn)
{
	(void)ctx;
	(void)c;
	(void)psn;
	return true;
}

/* rc_find_resp tries its last answer (or the one rc_note_resp names)
 * first: never a slot that is free, unpaired, or has another key. */
START_TEST(t_rc_find_resp_last_answer)
{
	const uint32_t cl = RTE_BE32(0x0a000001), cl2 = RTE_BE32(0x0a000002),
		       srv = RTE_BE32(0x0a000064), srv2 = RTE_BE32(0x0a000065);
	struct rc_table *t = rc_create(&(struct rc_params){ .max_conns = 1 });
	struct rc_conn *a, *b;
	bool amb;

	ck_assert_ptr_nonnull(t);
	a = rc_open(t, cl, srv, 0x11, 100, 1);
	ck_assert_ptr_nonnull(a);
	a->next_psn = 101;                             /* its request at 100 seen */
	ck_assert_ptr_null(rc_find_resp(t, srv, cl, 0x211));     /* not paired */
	ck_assert_ptr_eq(rc_pair_evidence(t, srv, cl, 0x211, 100, 2, owns_any, NULL, &amb), a);
	ck_assert_ptr_eq(rc_find_resp(t, srv, cl, 0x211), a);
	ck_assert_ptr_eq(rc_find_resp(t, srv, cl, 0x211), a);
	ck_assert_ptr_null(rc_find_resp(t, srv, cl, 0x212));
	ck_assert_ptr_null(rc_find_resp(t, srv, cl2, 0x211));
	ck_assert_ptr_null(rc_find_resp(t, srv2, cl, 0x211));
	rc_note_resp(t, a);
	ck_assert_ptr_eq(rc_find_resp(t, srv, cl, 0x211), a);
	rc_reincarnate(t, a, 500, 3, false);          /* a new life, unpaired */
	ck_assert_ptr_null(rc_find_resp(t, srv, cl, 0x211));
	rc_close(t, a, 4);
	ck_assert_ptr_null(rc_find_resp(t, srv, cl, 0x211));
	b = rc_open(t, cl2, srv, 0x22, 200, 5);        /* the same slot */
	ck_assert_ptr_eq(b, a);
	b->next_psn = 201;
	ck_assert_ptr_eq(rc_pair_evidence(t, srv, cl2, 0x222, 200, 6, owns_any, NULL, &amb), b);
	ck_assert_ptr_null(rc_find_resp(t, srv, cl, 0x211));
	ck_assert_ptr_eq(rc_find_resp(t, srv, cl2, 0x222), b);
	rc_reset(t);
	ck_assert_ptr_null(rc_find_resp(t, srv, cl2, 0x222));
	rc_destroy(t);
}
END_TEST

START_TEST(t_cm_fields_vs_tshark)
{
	/* rc_cm_parse against tshark's infiniband.cm dissector on every CM
	 * message of a real ConnectX rdma_cm exchange (REQ 6, REP 7, DREQ 21) */
	const char *dir = getenv("CAPTURES_DIR");
	char path[512], cmd[1024], line[512];
	FILE *tp;
	int n = 0;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/rcuckoo-connectx.pcap", dir);
	snprintf(cmd, sizeof(cmd), "tshark -r %s -Y 'frame.number==6 or frame.number==7 or "
		 "frame.number==21' -T fields -E separator=, -e frame.number "
		 "-e infiniband.cm.req.localqpn -e infiniband.cm.req.startpsn "
		 "-e infiniband.cm.req.responderres -e infiniband.cm.req.initdepth "
		 "-e infiniband.cm.rep.remotecommid -e infiniband.cm.rep.localqpn "
		 "-e infiniband.cm.rep.startpsn -e infiniband.cm.rep.respres "
		 "-e infiniband.cm.rep.initdepth -e infiniband.cm.dreq.remotecommid "
		 "-e infiniband.cm.req.remoteqpneecn -e infiniband.cm.req.pppmtu 2>/dev/null",
		 path);
	tp = popen(cmd, "r");
	ck_assert_ptr_nonnull(tp);
	while (fgets(line, sizeof(line), tp)) {
		unsigned long v[13] = { 0 };
		char *tok = line;
		uint8_t buf[2048];
		uint32_t len;
		struct roce_pkt p;
		struct rc_cm_msg m;
		int k = 0;

		/* empty fields are kept: split on every comma */
		for (char *c = line; k < 13; c++) {
			if (*c == ',' || *c == '\n' || *c == 0) {
				char e = *c;

				*c = 0;
				v[k++] = strtoul(tok, NULL, 0);
				tok = c + 1;
				if (e == 0 || e == '\n')
					break;
			}
		}
		len = cap_frame(path, (int)v[0], buf, sizeof(buf));
		ck_assert_int_eq(roce_parse(buf, len, &p), ROCE_OK);
		ck_assert(rc_cm_is_cm(buf, &p));
		ck_assert_int_eq(rc_cm_parse(buf, &p, &m), 0);
		if (v[0] == 6) {
			ck_assert_int_eq(m.kind, RC_CM_REQ);
			ck_assert_uint_eq(m.local_qpn, v[1]);
			ck_assert_uint_eq(m.starting_psn, v[2]);
			ck_assert_uint_eq(m.responder_resources, v[3]);
			ck_assert_uint_eq(m.initiator_depth, v[4]);
			/* IBTA's MTU code: 1..5 = 256..4096 bytes */
			ck_assert_uint_ge(v[12], 1);
			ck_assert_uint_eq(m.path_mtu, 128u << v[12]);
		} else if (v[0] == 7) {
			ck_assert_int_eq(m.kind, RC_CM_REP);
			ck_assert_uint_eq(m.remote_comm_id, v[5]);
			ck_assert_uint_eq(m.local_qpn, v[6]);
			ck_assert_uint_eq(m.starting_psn, v[7]);
			ck_assert_uint_eq(m.responder_resources, v[8]);
			ck_assert_uint_eq(m.initiator_depth, v[9]);
		} else {
			ck_assert_int_eq(m.kind, RC_CM_DREQ);
			ck_assert_uint_eq(m.remote_comm_id, v[10]);
			ck_assert_uint_eq(m.remote_qpn, v[11]);
		}
		n++;
	}
	ck_assert_int_eq(pclose(tp), 0);
	ck_assert_int_eq(n, 3);
}
END_TEST

/* The path MTU a connection's REQ carries (the capture's: code 3, 1024
 * bytes, which tshark shows) is what remapping counts READ spans in for
 * that server from then on, not [atomic] pmtu (4096 here); a REQ whose
 * ICRC fails teaches nothing. */
START_TEST(t_cm_req_path_mtu_teaches_remap)
{
	const char *dir = getenv("CAPTURES_DIR");
	const struct remap_server sv = { .ip = CAP_SERVER, .lanes = 1, .keep_conns = true };
	struct rc_table *rc = rc_create(&(struct rc_params){ .max_conns = 16 });
	struct remap *r;
	struct remap_lane_info li;
	struct remap_emit emit[4];
	uint8_t buf[2048];
	char path[512];
	struct roce_pkt p;
	uint32_t len, n_emit;

	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(rc);
	r = remap_create(&(struct remap_params){ .servers = &sv, .n_servers = 1, .rc = rc,
						 .out_of_band = true });
	ck_assert_ptr_nonnull(r);
	snprintf(path, sizeof(path), "%s/rcuckoo-connectx.pcap", dir);
	len = cap_frame(path, 6, buf, sizeof(buf));
	buf[len - 5] ^= 1;          /* the ICRC */
	ck_assert_int_eq(roce_parse(buf, len, &p), ROCE_OK);
	remap_on_request(r, buf, &len, sizeof(buf), &p, false, 1, emit, 4, &n_emit);
	ck_assert_int_eq(remap_lane_info(r, CAP_SERVER, 0, &li), 0);
	ck_assert_uint_eq(li.pmtu, 4096);
	ck_assert_uint_eq(remap_counters(r)->pmtu_learned, 0);
	len = cap_frame(path, 6, buf, sizeof(buf));
	ck_assert_int_eq(roce_parse(buf, len, &p), ROCE_OK);
	remap_on_request(r, buf, &len, sizeof(buf), &p, false, 1, emit, 4, &n_emit);
	ck_assert_int_eq(remap_lane_info(r, CAP_SERVER, 0, &li), 0);
	ck_assert_uint_eq(li.pmtu, 1024);
	ck_assert_uint_eq(remap_counters(r)->pmtu_learned, 1);
	remap_destroy(r);
	rc_destroy(rc);
}
END_TEST

/*
 * [remap] out_of_band (remap_params.out_of_band) on the rig's capture of
 * ib_read_lat over the RDMA CM (tests/captures/rdmacm-read-lat.pcap: a
 * control QP of SENDs, a data QP of five READs, each set up by a CM
 * REQ/REP/RTU), replayed through remapping in both directions.  _i: 0
 * the capture as it is, out_of_band off (swordd's default): the data
 * connection, identified by its CM exchange, binds; 1 without its CM
 * frames, off: set up out of band as far as swordd can see, it stays on
 * its own QP, counted once (a QP re-created with its QPN and PSNs would
 * be a new life nothing shows); 2 without its CM frames, on: it binds
 * (what swordd did before the key, for every connection).
 */
START_TEST(t_out_of_band_default)
{
	const char *dir = getenv("OWN_CAPTURES_DIR");
	const struct remap_server sv = { .ip = RTE_BE32(0xc6120002), .lanes = 1,
					 .keep_conns = true };
	struct rc_table *rc = rc_create(&(struct rc_params){ .max_conns = 16 });
	const struct remap_counters *rcnt;
	struct remap_emit emit[4];
	struct remap *r;
	uint8_t buf[2048];
	char path[512];
	uint32_t n_emit, n_frames = 0;

	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(rc);
	r = remap_create(&(struct remap_params){ .servers = &sv, .n_servers = 1, .rc = rc,
						 .out_of_band = _i == 2 });
	ck_assert_ptr_nonnull(r);
	snprintf(path, sizeof(path), "%s/rdmacm-read-lat.pcap", dir);
	for (int n = 1; n <= 65; n++) {
		uint32_t len = cap_frame(path, n, buf, sizeof(buf));
		struct roce_pkt p;

		ck_assert_uint_gt(len, 0);
		ck_assert_int_eq(roce_parse(buf, len, &p), ROCE_OK);
		if (_i != 0 && rc_cm_is_cm(buf, &p))
			continue;
		if (p.dst_ip4 == sv.ip)
			remap_on_request(r, buf, &len, sizeof(buf), &p, false, (uint64_t)n,
					 emit, 4, &n_emit);
		else
			remap_on_response(r, buf, &len, sizeof(buf), &p, false, (uint64_t)n,
					  emit, 4, &n_emit);
		n_frames++;
	}
	ck_assert_uint_eq(n_frames, _i == 0 ? 65 : 54);   /* 11 CM MADs */
	rcnt = remap_counters(r);
	/* the control QP's 11 SENDs: never bound, whatever the key */
	ck_assert_uint_eq(rcnt->two_sided_direct, 11);
	ck_assert_uint_eq(rcnt->bound, _i == 1 ? 0 : 1);
	ck_assert_uint_eq(rcnt->lanes_opened, _i == 1 ? 0 : 1);
	ck_assert_uint_eq(rcnt->out_of_band_direct, _i == 1 ? 1 : 0);
	remap_destroy(r);
	rc_destroy(rc);
}
END_TEST

/* The DREP swordd answers an owner's DREQ with (lib/remap keeps a lane
 * for its riders): built from the capture's DREQ (frame 21), with the two
 * fields a sender picks for itself (its GSI QP's PSN, the IPv4 ID) set to
 * the ConnectX's, it is the ConnectX's own DREP (frame 24) byte for byte:
 * addresses, MAD, IPv4 checksum and ICRC.  A DREQ is the only thing it
 * answers. */
START_TEST(t_cm_drep_vs_connectx)
{
	const char *dir = getenv("CAPTURES_DIR");
	char path[512];
	uint8_t dreq[2048], real[2048], out[512];
	uint32_t n_dreq, n_real;
	struct roce_pkt p, q;
	struct rc_cm_msg m;
	int n;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/rcuckoo-connectx.pcap", dir);
	n_dreq = cap_frame(path, 21, dreq, sizeof(dreq));
	n_real = cap_frame(path, 24, real, sizeof(real));
	ck_assert_int_eq(roce_parse(dreq, n_dreq, &p), ROCE_OK);
	ck_assert_int_eq(roce_parse(real, n_real, &q), ROCE_OK);
	n = rc_cm_build_drep(out, sizeof(out), dreq, &p);
	ck_assert_int_eq(n, (int)n_real);
	ck_assert_int_eq(roce_parse(out, (uint32_t)n, &q), ROCE_OK);
	ck_assert(roce_icrc_verify(out, &q));
	ck_assert_int_eq(rc_cm_parse(out, &q, &m), 0);
	ck_assert_int_eq(m.kind, RC_CM_DREP);
	/* the sender's own choices, then the whole frame */
	roce_set_psn(out, &q, roce_get_psn(real, &q));
	memcpy(out + q.l3_off + 4, real + q.l3_off + 4, 2);
	roce_ip_cksum_update(out, &q);
	roce_resign(out, &q);
	ck_assert_int_eq(memcmp(out, real, n_real), 0);
	/* not a DREQ (the DREP itself), or no room: nothing */
	ck_assert_int_eq(rc_cm_build_drep(out, sizeof(out), real, &q), -1);
	ck_assert_int_eq(rc_cm_build_drep(out, 100, dreq, &p), -1);
}
END_TEST

static void
cap_feed(struct ser *ser, const char *path, int from, int to)
{
	for (int i = from; i <= to; i++) {
		uint8_t buf[2048];
		uint32_t len = cap_frame(path, i, buf, sizeof(buf)), n_emit;
		struct roce_pkt p;
		struct ser_emit emit[8];

		if (roce_parse(buf, len, &p) != ROCE_OK)
			continue;
		if (p.dst_ip4 == CAP_SERVER)
			ser_on_request(ser, buf, &len, sizeof(buf), &p, (uint64_t)i);
		else
			ser_on_response(ser, buf, &len, sizeof(buf), &p, (uint64_t)i, emit,
					8, &n_emit);
	}
}

START_TEST(t_cm_reconnect_new_incarnation)
{
	/* The capture's exchange, then the same REQ/REP again (a reconnect
	 * reusing both QPNs): a new incarnation, identified by CM again; its
	 * requests from the REP's starting PSN are in order. */
	const char *dir = getenv("CAPTURES_DIR");
	char path[512];
	struct ser_region reg = { .server_ip4 = CAP_SERVER, .any_rkey = true,
				  .base = 0x5562cc8a7a00ull, .len = 0x400 };
	struct ser_params prm = { .regions = &reg, .n_regions = 1 };
	struct ser *ser = ser_create(&prm);
	const struct ser_counters *c;

	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(ser);
	snprintf(path, sizeof(path), "%s/rcuckoo-connectx.pcap", dir);
	cap_feed(ser, path, 6, 17);
	c = ser_counters(ser);
	ck_assert_uint_eq(c->cm_paired, 1);
	ck_assert_uint_eq(c->conn_reincarnated, 0);
	ck_assert_uint_eq(c->psn_out_of_window, 0);
	cap_feed(ser, path, 6, 8);                  /* REQ, REP, RTU again */
	c = ser_counters(ser);
	ck_assert_uint_eq(c->cm_paired, 2);
	ck_assert_uint_eq(c->conn_reincarnated, 1);
	cap_feed(ser, path, 10, 17);                /* same requests, new life */
	c = ser_counters(ser);
	ck_assert_uint_eq(c->psn_out_of_window, 0);
	ck_assert_uint_eq(c->dup_replayed, 0);      /* not taken for retransmissions */
	ck_assert_uint_eq(ser_conn_count(ser), 1);
	cap_feed(ser, path, 21, 21);                /* DREQ */
	ck_assert_uint_eq(ser_conn_count(ser), 0);
	ser_destroy(ser);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Upgrade drain (issue #30, ser_set_drain) */

START_TEST(t_drain_known_word_passes_real)
{
	/* A CAS on a word swordd knows would be granted here and sent as a
	 * WRITE; draining, it reaches the server as the real atomic, and
	 * nothing is left unanswered once it is answered. */
	struct sim s;
	uint64_t granted, real, stubs = 1, pend = 1;

	init(&s, 1, 0, false, "conn-drain-real");
	learn(&s, 0, lock_va(6));
	granted = C(&s)->granted;
	real = C(&s)->passed_real_atomic;
	ck_assert(!ser_draining(s.ser));
	ser_set_drain(s.ser, true);
	ck_assert(ser_draining(s.ser));
	post_cas(&s, 0, lock_va(6), 1, 0);
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(C(&s)->passed_real_atomic, real + 1);
	ck_assert_uint_eq(C(&s)->granted, granted);
	ck_assert_uint_eq(ser_unanswered(s.ser, &stubs, &pend), 0);
	finish(&s);
	ck_assert_uint_eq(C(&s)->granted, granted);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(6)), 1);
	ck_assert_uint_eq(ser_unanswered(s.ser, &stubs, &pend), 0);
	ck_assert_uint_eq(stubs + pend, 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_drain_pending_write_keeps_gating)
{
	/* A's CAS was granted before the drain: its WRITE(1) is un-ACKed
	 * (held on its way to the server).  Draining, B's CAS that would
	 * take the lock if it ran before A's WRITE lands must neither be
	 * passed real (S2: A's blind write would erase it) nor be answered
	 * here (drain decides nothing, not even a failure): it is dropped
	 * until A's WRITE is ACKed, then passes real and fails at the
	 * server.  The counts fall to 0 once A is answered. */
	struct sim s;
	uint64_t granted, real, failed, stubs = 0, pend = 0;

	init(&s, 2, 0, false, "conn-drain-gate");
	learn(&s, 0, lock_va(7));
	post_read(&s, 1);                          /* pairs B */
	sim_flow(&s, 1000);
	post_cas(&s, 0, lock_va(7), 1, 0);         /* A: acquire, granted here */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);        /* A's WRITE(1), held */
	ck_assert_uint_eq(ser_unanswered(s.ser, &stubs, &pend), 2);
	ck_assert_uint_eq(stubs, 1);               /* A's ATOMIC ACK owed */
	ck_assert_uint_eq(pend, 1);                /* A's WRITE un-ACKed */

	ser_set_drain(s.ser, true);
	granted = C(&s)->granted;
	real = C(&s)->passed_real_atomic + C(&s)->gated_real;
	failed = C(&s)->gated_failed + C(&s)->failed_local;
	post_cas(&s, 1, lock_va(7), 2, 0);         /* B: acquire */
	ck_assert(sim_deliver(&s, Q_C2S, 0));
	ck_assert_uint_eq(s.q[Q_S2M].n, 1);        /* B's CAS did not pass */
	ck_assert_uint_ge(C(&s)->gated_drop, 1);
	ck_assert_uint_eq(C(&s)->passed_real_atomic + C(&s)->gated_real, real);
	ck_assert_uint_eq(C(&s)->gated_failed + C(&s)->failed_local, failed);
	ck_assert_uint_eq(ser_unanswered(s.ser, NULL, NULL), 2);

	/* A's WRITE lands and is ACKed (A answered): nothing is owed now */
	ck_assert(sim_deliver(&s, Q_S2M, 0));
	while (s.q[Q_M2S].n)
		ck_assert(sim_deliver(&s, Q_M2S, 0));
	ck_assert_uint_eq(ser_unanswered(s.ser, &stubs, &pend), 0);
	ck_assert_uint_eq(stubs + pend, 0);

	/* B, asked back or retransmitting, now passes real */
	finish(&s);
	ck_assert_uint_gt(C(&s)->passed_real_atomic + C(&s)->gated_real, real);
	ck_assert_uint_eq(C(&s)->granted, granted);
	ck_assert_uint_eq(C(&s)->gated_failed + C(&s)->failed_local, failed);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(7)), 1);   /* A holds it */
	ck_assert_uint_eq(ser_unanswered(s.ser, NULL, NULL), 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

static Suite *
conn_suite(void)
{
	Suite *su = suite_create("conn");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, t_s1_crossed_by_psn);
	tcase_add_loop_test(tc, t_s1_same_psn_many_qps, 0, 2);
	tcase_add_test(tc, t_same_psn_no_force_ackreq);
	tcase_add_test(tc, t_same_psn_rnr_nak);
	tcase_add_test(tc, t_s2_reconnect_same_qpn_psn);
	tcase_add_loop_test(tc, t_s2_reconnect_loop, 0, 2);
	tcase_add_test(tc, t_s3_pipelined_faa_outlives_expiry);
	tcase_add_test(tc, t_s4_foreign_write_vs_blind_write);
	tcase_add_loop_test(tc, t_gated_drop_asks_back, 0, 4);
	tcase_add_test(tc, t_poke_nak_after_resend);
	tcase_add_test(tc, t_grant_answer_lost_word_taken);
	tcase_add_test(tc, t_probe_question_lost_next_answered);
	tcase_add_test(tc, t_ask_msn_never_back);
	tcase_add_test(tc, t_dup_write_ack_at_real_atomic);
	tcase_add_test(tc, t_s5_read_span_overestimated);
	tcase_add_test(tc, t_s6_go_back_n_beyond_ring);
	tcase_add_test(tc, t_s7_bad_icrc_creates_nothing);
	tcase_add_test(tc, t_s7_table_churn_recovers);
	tcase_add_test(tc, t_s7_huge_write_over_words);
	tcase_add_test(tc, t_s8_response_ahead_of_window);
	tcase_add_test(tc, t_s9_replay_other_content);
	tcase_add_test(tc, t_replay_of_real_atomic_held_until_answered);
	tcase_add_test(tc, t_replay_of_real_atomic_new_life_runs);
	tcase_add_test(tc, t_gate_after_read_of_release);
	tcase_add_test(tc, t_noop_write_overtaken);
	tcase_add_test(tc, t_orphan_pending_no_shadow_answer);
	tcase_add_test(tc, t_new_life_cas_after_own_release);
	tcase_add_test(tc, t_new_life_copy_of_unacked_grant);
	tcase_add_test(tc, t_msn_not_from_duplicate_read);
	tcase_add_test(tc, t_new_life_repeats_cas_chain);
	tcase_add_loop_test(tc, t_restart_granted_write_in_flight, 0, 2);
	tcase_add_loop_test(tc, t_forget_after_bypass, 0, 2);
	tcase_add_loop_test(tc, t_adopt_after_bypass, 0, 2);
	tcase_add_loop_test(tc, t_oob_new_life_runs, 0, 3);
	tcase_add_test(tc, t_drain_known_word_passes_real);
	tcase_add_test(tc, t_drain_pending_write_keeps_gating);
	suite_add_tcase(su, tc);
	tc = tcase_create("state");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, t_restart_adopts_state, 0, 2);
	tcase_add_loop_test(tc, t_restart_torn_frame, 0, 2);
	tcase_add_loop_test(tc, t_restart_torn_own_conn, 0, 2);
	suite_add_tcase(su, tc);
	tc = tcase_create("cm");
	tcase_add_test(tc, t_rc_find_req_last_answer);
	tcase_add_test(tc, t_rc_find_resp_last_answer);
	tcase_add_test(tc, t_cm_fields_vs_tshark);
	tcase_add_test(tc, t_cm_req_path_mtu_teaches_remap);
	tcase_add_loop_test(tc, t_out_of_band_default, 0, 3);
	tcase_add_test(tc, t_cm_drep_vs_connectx);
	tcase_add_test(tc, t_cm_reconnect_new_incarnation);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(conn_suite());
	int failed;

	roce_crc_init();
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
