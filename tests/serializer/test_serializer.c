/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_serializer.c — closed-loop scenarios for atomic replacement
 * (SPEC F2/F5; invariants I1, I3–I7), plus the open-loop replay of a real
 * ConnectX capture.
 *
 * Every scenario runs clients → serializer → responder → serializer →
 * clients (sim.c) and asserts: no client saw a wrong response type, PSN
 * order, MSN or value (I3, checked inside rdma_model.c); no two holders and
 * no write landing out of protocol (I4, at the clients and at the memory);
 * shadow == memory at the end (I5); the same answer for every
 * retransmission (I6); every emitted frame valid for scapy (I1).
 */
#include <check.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "roce.h"
#include "serializer.h"
#include "sim.h"

static char errbuf[8192];


static void
dump_counters(const char *what, struct sim *s)
{
	const struct ser_counters *c;

	if (!getenv("SER_VERBOSE") || s->ser == NULL)
		return;
	c = ser_counters(s->ser);
	fprintf(stderr, "%s: granted %llu failed %llu faa %llu gated_failed %llu "
		"gated_real %llu gated_drop %llu real %llu release %llu unmod %llu "
		"dup %llu badicrc %llu ringfull %llu oow %llu reset %llu drop %llu | "
		"a2aa %llu synth %llu emitfull %llu badresp %llu mismatch %llu naks %llu "
		"| learned %llu relearn %llu | srv atomics %llu writes %llu dups %llu "
		"seqnak %llu | link drop %llu dup %llu timeouts %llu steps %llu\n",
		what,
		(unsigned long long)c->granted, (unsigned long long)c->failed_local,
		(unsigned long long)c->faa_local, (unsigned long long)c->gated_failed,
		(unsigned long long)c->gated_real, (unsigned long long)c->gated_drop,
		(unsigned long long)c->passed_real_atomic, (unsigned long long)c->release_seen,
		(unsigned long long)c->write_unmodelled, (unsigned long long)c->dup_replayed,
		(unsigned long long)c->bad_icrc_passed, (unsigned long long)c->stub_ring_full,
		(unsigned long long)c->psn_out_of_window, (unsigned long long)c->conn_reincarnated,
		(unsigned long long)c->dropped, (unsigned long long)c->ack_to_atomic_ack,
		(unsigned long long)c->acks_synthesized, (unsigned long long)c->emit_full,
		(unsigned long long)c->resp_bad_icrc, (unsigned long long)c->resp_mismatch,
		(unsigned long long)c->naks, (unsigned long long)c->learned,
		(unsigned long long)c->relearn, (unsigned long long)s->srv.atomics,
		(unsigned long long)s->srv.writes, (unsigned long long)s->srv.duplicates,
		(unsigned long long)s->srv.seq_naks, (unsigned long long)s->dropped_link,
		(unsigned long long)s->duplicated_link, (unsigned long long)s->timeouts,
		(unsigned long long)s->steps);
}

static const struct ser_counters *
C(struct sim *s)
{
	return ser_counters(s->ser);
}

static uint64_t
lock_va(int i)
{
	return SIM_LOCKS + 8 * (uint64_t)i;
}

/* ------------------------------------------------------------------ */

START_TEST(t_model_sanity)
{
	/* the models alone (no swordd): contention must be clean, so any
	 * error in the other tests is swordd's */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 4, false, _i, NULL), 0);
	sim_sherman_start(&s, 10, lock_va(0));
	ck_assert(sim_run(&s, 2000000, 100));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s.acquired[i], 10);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(0)), 0);
	ck_assert_uint_gt(s.srv.atomics, 40);
	sim_free(&s);
}
END_TEST

START_TEST(t_single_lock)
{
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 1, true, false, "ser-single"), 0);
	sim_sherman_start(&s, 10, lock_va(0));
	ck_assert(sim_run(&s, 100000, 0));
	ASSERT_CLEAN(&s);
	ck_assert_int_eq(s.acquired[0], 10);
	/* the first CAS teaches the word (real), the other nine are WRITEs */
	ck_assert_uint_eq(C(&s)->passed_real_atomic, 1);
	ck_assert_uint_eq(C(&s)->learned, 1);
	ck_assert_uint_eq(C(&s)->granted, 9);
	ck_assert_uint_eq(C(&s)->ack_to_atomic_ack, 9);
	ck_assert_uint_eq(C(&s)->release_seen, 10);
	ck_assert_uint_eq(s.srv.atomics, 1);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(0)), 0);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_contend)
{
	/* _i: 0 = every write ACKed at once, 1 = the responder coalesces */
	struct sim s;
	char name[64];

	snprintf(name, sizeof(name), "ser-contend-%d", _i);
	ck_assert_int_eq(sim_init(&s, 4, true, _i, name), 0);
	sim_sherman_start(&s, 20, lock_va(1));
	ck_assert(sim_run(&s, 4000000, 0));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s.acquired[i], 20);
	ck_assert_uint_gt(C(&s)->granted, 40);
	ck_assert_uint_gt(C(&s)->failed_local + C(&s)->gated_failed, 0);
	ck_assert_uint_gt(C(&s)->gated_failed, 0);
	/* most CAS never reached the atomic unit (each connection's first
	 * two answers teach its MSN offset: ser_resp.c resp_learn_msn) */
	ck_assert_uint_lt(s.srv.atomics, 24);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_faa)
{
	/* _i = 0: one client, every FAA after the first two decided here
	 * (their answers teach the word and the server's MSN offset);
	 * _i = 1: three clients on one word: shared, so the server's atomic
	 * unit serializes them (S6); tickets must still be unique */
	struct sim s;
	int ncl = _i ? 3 : 1, per = 20;
	bool seen[3 * 20] = { false };
	char name[32];

	snprintf(name, sizeof(name), "ser-faa-%d", _i);
	ck_assert_int_eq(sim_init(&s, ncl, true, false, name), 0);
	sim_faa_start(&s, per, lock_va(2));
	ck_assert(sim_run(&s, 1000000, 20));
	ASSERT_CLEAN(&s);
	ck_assert_int_eq(s.n_tickets, ncl * per);
	for (int i = 0; i < s.n_tickets; i++) {
		ck_assert_uint_lt(s.tickets[i], (uint64_t)(ncl * per));
		ck_assert_msg(!seen[s.tickets[i]], "ticket %llu twice",
			      (unsigned long long)s.tickets[i]);
		seen[s.tickets[i]] = true;
	}
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(2)), (uint64_t)(ncl * per));
	if (_i == 0) {
		ck_assert_uint_eq(C(&s)->faa_local, per - 2);
		ck_assert_uint_eq(s.srv.atomics, 2);
	} else {
		ck_assert_uint_gt(C(&s)->passed_real_atomic, 0);
	}
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_mcas_bits)
{
	/* RCuckoo bit locks in one word whose other bits hold unrelated
	 * state.  _i = 0: one client takes and frees bit 0 (every op after
	 * the first decided here); _i = 1: four clients, 0 and 2 on bit 0, 1
	 * and 3 on bit 7 (cross-bit contention: shared word, S6) */
	struct sim s;
	int ncl = _i ? 4 : 1;
	char name[32];

	snprintf(name, sizeof(name), "ser-mcas-%d", _i);
	ck_assert_int_eq(sim_init(&s, ncl, true, false, name), 0);
	rm_mem_set(&s.srv, lock_va(3), 0x5500);
	sim_mcas_start(&s, 15, lock_va(3));
	ck_assert(sim_run(&s, 2000000, 50));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < ncl; i++)
		ck_assert_int_eq(s.acquired[i], 15);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(3)), 0x5500);
	if (_i == 0)
		ck_assert_uint_eq(C(&s)->granted, 29); /* 15 acquires + 15 releases - 1 learned */
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* Drop the first frame of a kind on a queue. */
struct drop_spec {
	int q;
	uint8_t opcode;
	int skip;       /* let this many matching frames pass first */
	int dropped;
	int want;       /* how many to drop */
	bool corrupt;   /* flip an ICRC byte instead of dropping */
};

static struct drop_spec g_drop;

static bool
drop_filter(struct sim *s, int q, const struct rm_frame *f)
{
	struct roce_pkt p;
	uint8_t b[RM_FRAME_MAX];

	(void)s;
	if (q != g_drop.q || g_drop.dropped >= g_drop.want)
		return false;
	memcpy(b, f->buf, f->len);
	if (roce_parse(b, f->len, &p) != ROCE_OK || p.opcode != g_drop.opcode)
		return false;
	if (g_drop.skip-- > 0)
		return false;
	g_drop.dropped++;
	if (g_drop.corrupt) {
		/* re-inject the frame with its ICRC broken */
		b[f->len - 1] ^= 0x5a;
		rm_queue_push(&s->q[q], b, f->len);
	}
	return true;
}

START_TEST(t_retransmit_cas)
{
	/* a granted CAS whose ATOMIC ACK is lost on the way to the client:
	 * the client retransmits, swordd replays the recorded WRITE, the
	 * server re-ACKs the duplicate, the client gets the same orig */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 1, true, false, "ser-retrans"), 0);
	g_drop = (struct drop_spec){ .q = Q_S2C, .opcode = ROCE_RC_ATOMIC_ACKNOWLEDGE,
				     .skip = 2, .want = 1 };
	s.filter = drop_filter;
	sim_sherman_start(&s, 5, lock_va(4));
	ck_assert(sim_run(&s, 100000, 10));
	ASSERT_CLEAN(&s);
	ck_assert_int_eq(g_drop.dropped, 1);
	ck_assert_int_eq(s.acquired[0], 5);
	ck_assert_uint_ge(C(&s)->dup_replayed, 1);
	ck_assert_uint_ge(s.srv.duplicates, 1);
	ck_assert_uint_eq(s.srv.atomics, 1);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_coalesced_three)
{
	/* three rewritten CAS answered by one coalesced ACK: swordd emits two
	 * ATOMIC ACKs and turns the ACK into the third, in PSN order, MSNs
	 * checked by the client */
	struct sim s;
	struct rm_client *c;

	ck_assert_int_eq(sim_init(&s, 1, true, true, "ser-coalesced"), 0);
	c = &s.cl[0];
	for (int i = 0; i < 3; i++) /* learn the three words */
		ck_assert(rm_client_post(c, &(struct rm_op){ .type = RM_CAS,
			.va = lock_va(10 + i), .a = { 0, 0 } }, &s.q[Q_C2S]));
	ck_assert(sim_run(&s, 10000, 0));
	ck_assert_uint_eq(C(&s)->learned, 3);
	for (int i = 0; i < 3; i++)
		ck_assert(rm_client_post(c, &(struct rm_op){ .type = RM_CAS,
			.va = lock_va(10 + i), .a = { 7, 0 } }, &s.q[Q_C2S]));
	/* all three requests through to the server before any response */
	while (s.q[Q_C2S].n || s.q[Q_S2M].n) {
		struct rm_frame f;
		int qi = s.q[Q_C2S].n ? Q_C2S : Q_S2M;

		rm_queue_take(&s.q[qi], 0, &f);
		if (qi == Q_C2S) {
			struct roce_pkt p;

			ck_assert_int_eq(roce_parse(f.buf, f.len, &p), ROCE_OK);
			ck_assert_int_eq(ser_on_request(s.ser, f.buf, &f.len, RM_FRAME_MAX,
							&p, 0), SER_FORWARD_REWRITTEN);
			ck_assert_uint_eq(p.opcode, ROCE_RC_WRITE_ONLY);
			rm_queue_push(&s.q[Q_S2M], f.buf, f.len);
		} else {
			rm_responder_rx(&s.srv, f.buf, f.len, &s.q[Q_M2S]);
		}
	}
	ck_assert_uint_eq(s.q[Q_M2S].n, 0); /* coalescing: nothing yet */
	ck_assert_uint_eq(rm_responder_flush(&s.srv, &s.q[Q_M2S]), 1);
	ck_assert(sim_run(&s, 10000, 0));
	ASSERT_CLEAN(&s);
	ck_assert_uint_eq(C(&s)->acks_synthesized, 2);
	ck_assert_uint_eq(C(&s)->ack_to_atomic_ack, 1);
	for (int i = 0; i < 3; i++) {
		struct rm_op *op = &c->ops[(c->next_psn - 3 + (uint32_t)i) % RM_WIN];

		ck_assert_uint_eq(op->state, 2);
		ck_assert_uint_eq(op->result, 0);
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(10 + i)), 7);
	}
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_batch_coalesced)
{
	/* pipelined CAS batches on private words through a coalescing
	 * responder: most ACKs cover several rewritten CAS */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 3, true, true, "ser-batch"), 0);
	sim_batch_start(&s, 10, lock_va(16));
	ck_assert(sim_run(&s, 1000000, 0));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(16 + i)), 40);
	ck_assert_uint_gt(C(&s)->acks_synthesized, 20);
	ck_assert_uint_eq(C(&s)->learned, 3);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_emit_full)
{
	/* room for one synthesized ATOMIC ACK only: the rest of a coalesced
	 * ACK's atomics are answered after the client's retransmission, and
	 * no ACK ever covers an unanswered atomic (the client checks) */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 2, true, true, "ser-emitfull"), 0);
	s.emit_cap = 1;
	sim_batch_start(&s, 6, lock_va(16));
	ck_assert(sim_run(&s, 1000000, 200));
	ASSERT_CLEAN(&s);
	ck_assert_uint_gt(C(&s)->emit_full, 0);
	ck_assert_uint_gt(C(&s)->dup_replayed, 0);
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(16 + i)), 24);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_ring_full)
{
	/* a stub ring smaller than the client's window: requests on managed
	 * words that find no free stub are dropped (counted), the client
	 * retransmits, everything completes right */
	struct sim s;
	struct rm_client *c;

	ck_assert_int_eq(sim_init(&s, 1, true, true, "ser-ringfull"), 0);
	s.prm.ring_size = 8;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	c = &s.cl[0];
	for (int i = 0; i < 3; i++)
		rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(30 + i),
						   .a = { 0, 0 } }, &s.q[Q_C2S]);
	ck_assert(sim_run(&s, 10000, 0));
	for (int i = 0; i < 12; i++)
		rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(30 + i % 3),
						   .a = { (uint64_t)i / 3 + 1, (uint64_t)i / 3 } },
			       &s.q[Q_C2S]);
	ck_assert(sim_run(&s, 100000, 50));
	ASSERT_CLEAN(&s);
	ck_assert_uint_gt(C(&s)->stub_ring_full, 0);
	for (int i = 0; i < 12; i++)
		ck_assert_uint_eq(c->ops[(c->next_psn - 12 + (uint32_t)i) % RM_WIN].result,
				  (uint64_t)i / 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(30 + i)), 4);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_table_full)
{
	/* room for two connections, four clients: the untracked ones pass
	 * their atomics unchanged once no tracked write is pending, and the
	 * word is never decided on again; the lock stays a lock */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 4, true, false, "ser-tablefull"), 0);
	s.prm.max_conns = 2;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	sim_sherman_start(&s, 10, lock_va(40));
	ck_assert(sim_run(&s, 2000000, 200));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s.acquired[i], 10);
	ck_assert_uint_gt(C(&s)->table_full, 0);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(40),
				      NULL, NULL), SER_WORD_UNKNOWN);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_nak_rewritten)
{
	/* the lock memory takes atomics but refuses WRITEs: the first
	 * rewritten CAS is NAKed (remote access) and reaches the client as
	 * that NAK (its QP would now be in error); swordd never rewrites that
	 * word again: another client's ops on it go real */
	struct sim s;
	struct rm_client *c;
	char buf[512];

	ck_assert_int_eq(sim_init(&s, 2, true, false, "ser-nak"), 0);
	c = &s.cl[0];
	s.srv.wr_deny_lo = lock_va(50);
	s.srv.wr_deny_hi = lock_va(51);
	/* its answer and the CAS's teach the server's MSN offset */
	rm_client_post(c, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA, .len = 8 },
		       &s.q[Q_C2S]);
	rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(50),
					   .a = { 1, 0 } }, &s.q[Q_C2S]);
	ck_assert(sim_run(&s, 10000, 0));
	rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(50),
					   .a = { 0, 1 } }, &s.q[Q_C2S]);
	ck_assert(sim_run(&s, 10000, 0));
	ck_assert_uint_eq(C(&s)->nak_on_rewritten, 1);
	ck_assert_uint_eq(sim_client_errors(&s, buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "NAK code 2") != NULL, "%s", buf);
	c->errors = 0;
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(50)), 1);
	c = &s.cl[1];
	for (int i = 0; i < 2; i++) /* real from now on: CAS(1,0), CAS(0,1) */
		rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(50),
						   .a = { (uint64_t)i, 1 - (uint64_t)i } },
			       &s.q[Q_C2S]);
	ck_assert(sim_run(&s, 10000, 0));
	ASSERT_CLEAN(&s);
	ck_assert_uint_eq(C(&s)->passed_real_atomic, 3);
	ck_assert_uint_eq(s.srv.atomics, 3);
	ck_assert_uint_eq(c->ops[(c->next_psn - 2) % RM_WIN].result, 1);
	ck_assert_uint_eq(c->ops[(c->next_psn - 1) % RM_WIN].result, 0);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(50)), 1);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(50),
				      NULL, NULL), SER_WORD_UNKNOWN);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_pmtu_wrong)
{
	/* pmtu configured below the path MTU (a configuration error): every
	 * 8-byte READ looks like two PSNs, so the data WRITE after it lands
	 * on a PSN taken for the READ's second packet.  Nothing was decided
	 * past the READ, so the span is repaired there (counted).  The lock
	 * stays a lock. */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 2, true, false, "ser-pmtu"), 0);
	s.prm.pmtu = 4;
	ck_assert_int_eq(sim_reconfigure(&s), 0);
	sim_sherman_start(&s, 8, lock_va(60));
	ck_assert(sim_run(&s, 1000000, 20));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(s.acquired[i], 8);
	ck_assert_uint_gt(C(&s)->read_span_fixed, 0);
	ck_assert_uint_gt(C(&s)->granted, 0);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_lost_release_ack)
{
	/* the ACK of a release WRITE(0) is lost: other clients are refused
	 * (never granted) until the release is ACKed on retransmission */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 3, true, false, "ser-lostack"), 0);
	g_drop = (struct drop_spec){ .q = Q_M2S, .opcode = ROCE_RC_ACKNOWLEDGE,
				     .skip = 6, .want = 2 };
	s.filter = drop_filter;
	sim_sherman_start(&s, 8, lock_va(5));
	ck_assert(sim_run(&s, 2000000, 20));
	ASSERT_CLEAN(&s);
	ck_assert_int_eq(g_drop.dropped, 2);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(s.acquired[i], 8);
	ck_assert_uint_gt(C(&s)->gated_failed, 0);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_bad_icrc)
{
	/* a CAS corrupted before swordd: passed unchanged (never re-signed),
	 * the server drops it, the retransmission goes through */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 1, true, false, "ser-badicrc"), 0);
	g_drop = (struct drop_spec){ .q = Q_C2S, .opcode = ROCE_RC_COMPARE_SWAP,
				     .skip = 3, .want = 1, .corrupt = true };
	s.filter = drop_filter;
	sim_sherman_start(&s, 6, lock_va(6));
	ck_assert(sim_run(&s, 100000, 10));
	ASSERT_CLEAN(&s);
	ck_assert_int_eq(s.acquired[0], 6);
	ck_assert_uint_eq(C(&s)->bad_icrc_passed, 1);
	ck_assert_uint_ge(s.srv.dropped, 1);
	ck_assert_str_ne(s.allow_bad, "");
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s); /* the bad frame is allowed by number, checked bad */
	sim_free(&s);
}
END_TEST

START_TEST(t_unknown_learning)
{
	/* words holding values swordd never saw: CAS and FAA learn them */
	struct sim s;
	struct rm_client *c;
	uint64_t v;

	ck_assert_int_eq(sim_init(&s, 1, true, false, "ser-learn"), 0);
	c = &s.cl[0];
	rm_mem_set(&s.srv, lock_va(20), 5);
	rm_mem_set(&s.srv, lock_va(21), 100);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(20),
				      &v, NULL), SER_WORD_UNKNOWN);
	rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(20),
					   .a = { 6, 5 } }, &s.q[Q_C2S]);
	rm_client_post(c, &(struct rm_op){ .type = RM_FAA, .va = lock_va(21),
					   .a = { 3 } }, &s.q[Q_C2S]);
	rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(22),
					   .a = { 1, 9 } }, &s.q[Q_C2S]); /* fails: 0 */
	ck_assert(sim_run(&s, 10000, 0));
	ck_assert_uint_eq(C(&s)->passed_real_atomic, 3);
	ck_assert_uint_eq(C(&s)->learned, 3);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(20),
				      &v, NULL), SER_WORD_KNOWN);
	ck_assert_uint_eq(v, 6);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(21),
				      &v, NULL), SER_WORD_KNOWN);
	ck_assert_uint_eq(v, 103);
	ck_assert_int_eq(ser_word_get(s.ser, SIM_SERVER_IP, SIM_RKEY, lock_va(22),
				      &v, NULL), SER_WORD_KNOWN);
	ck_assert_uint_eq(v, 0);
	/* now decided locally */
	rm_client_post(c, &(struct rm_op){ .type = RM_CAS, .va = lock_va(20),
					   .a = { 7, 6 } }, &s.q[Q_C2S]);
	rm_client_post(c, &(struct rm_op){ .type = RM_FAA, .va = lock_va(21),
					   .a = { 3 } }, &s.q[Q_C2S]);
	ck_assert(sim_run(&s, 10000, 0));
	ck_assert_uint_eq(C(&s)->passed_real_atomic, 3);
	ck_assert_uint_eq(C(&s)->granted, 1);
	ck_assert_uint_eq(C(&s)->faa_local, 1);
	ck_assert_uint_eq(c->ops[(c->next_psn - 1) % RM_WIN].result, 103);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(20)), 7);
	ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(21)), 106);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

START_TEST(t_restart)
{
	/* swordd loses all state (restart) at a quiet moment mid-workload:
	 * connections are re-created and re-paired, words relearned */
	struct sim s;

	ck_assert_int_eq(sim_init(&s, 3, true, false, "ser-restart"), 0);
	sim_sherman_start(&s, 12, lock_va(7));
	/* run a while, then restart at a moment when nothing swordd
	 * forwarded is still unanswered: the server-side and client-bound
	 * queues are empty (requests not yet seen by swordd may wait) */
	for (int k = 0; k < 3; k++) {
		uint64_t stop = s.steps + 300;

		for (;;) {
			bool quiet = s.q[Q_S2M].n == 0 && s.q[Q_M2S].n == 0 &&
				     s.q[Q_S2C].n == 0;

			if (s.steps >= stop && quiet)
				break;
			ck_assert_msg(sim_step(&s), "workload stalled before restart %d", k);
		}
		ser_reset(s.ser);
	}
	ck_assert(sim_run(&s, 4000000, 50));
	ASSERT_CLEAN(&s);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(s.acquired[i], 12);
	ck_assert_uint_ge(C(&s)->learned, 2);
	ck_assert_uint_ge(C(&s)->granted, 5);
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ASSERT_CLEAN(&s);
	ASSERT_VALID(&s);
	sim_free(&s);
}
END_TEST

/* Randomized interleavings with loss, duplication and reordering. */
static void
random_run(uint64_t seed, bool pcap)
{
	struct sim s;
	char name[64];
	int ncl = 2 + (int)(seed % 3);
	bool coalesce = (seed >> 2) & 1;
	uint64_t mode;

	snprintf(name, sizeof(name), "ser-random-%llu", (unsigned long long)seed);
	ck_assert_int_eq(sim_init(&s, ncl, true, coalesce, pcap ? name : NULL), 0);
	s.rng = seed * 7919 + 1;
	mode = sim_rand(&s) % 4;
	s.loss_ppm = (uint32_t)(sim_rand(&s) % 30000);
	s.dup_ppm = (uint32_t)(sim_rand(&s) % 30000);
	s.reorder = (uint32_t)(sim_rand(&s) % 3);
	if (seed % 4 == 0) {
		/* a clean network (duplicates only): every implicit NAK
		 * would be swordd's fault */
		s.loss_ppm = 0;
		s.reorder = 0;
	}
	for (int i = 0; i < ncl; i++) /* loss/reordering below swordd can hide an answer */
		s.cl[i].strict = s.loss_ppm == 0 && s.reorder == 0;
	if (mode == 0)
		sim_sherman_start(&s, 6, lock_va(8));
	else if (mode == 1)
		sim_mcas_start(&s, 6, lock_va(9));
	else if (mode == 2)
		sim_faa_start(&s, 8, lock_va(12));
	else
		sim_batch_start(&s, 5, lock_va(16));
	if (!sim_run(&s, 3000000, 3000)) {
		dump_counters("stuck", &s);
		for (int i = 0; i < ncl; i++)
			fprintf(stderr, "client %d oldest %u next %u out %u\n", i,
				s.cl[i].oldest, s.cl[i].next_psn,
				rm_client_outstanding(&s.cl[i]));
		for (uint32_t i = 0; i < s.srv.n_qps; i++)
			fprintf(stderr, "srv qp %u epsn %u msn %u\n", i, s.srv.qps[i].epsn,
				s.srv.qps[i].msn);
	}
	ck_assert_msg(s.timeouts < 3000 && sim_idle(&s), "seed %llu did not finish "
		      "(steps %llu timeouts %llu)", (unsigned long long)seed,
		      (unsigned long long)s.steps, (unsigned long long)s.timeouts);
	{
		uint32_t n = sim_client_errors(&s, errbuf, sizeof(errbuf));

		ck_assert_msg(n == 0, "seed %llu: %u errors:\n%s",
			      (unsigned long long)seed, n, errbuf);
	}
	if (mode == 2) {
		ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(12)), 8 * (uint64_t)ncl);
	} else if (mode == 3) {
		for (int i = 0; i < ncl; i++)
			ck_assert_uint_eq(rm_mem_get(&s.srv, lock_va(16 + i)), 20);
	} else {
		for (int i = 0; i < ncl; i++)
			ck_assert_int_eq(s.acquired[i], 6);
	}
	dump_counters(__func__, &s);
	sim_check_shadow(&s);
	ck_assert_msg(s.errors == 0, "seed %llu: %s", (unsigned long long)seed, s.err[0]);
	if (pcap)
		ASSERT_VALID(&s);
	sim_free(&s);
}

START_TEST(t_random)
{
	/* each _i runs 25 seeds (SER_SEEDS_PER overrides, for soaking); the
	 * first seeds of the first loop write pcaps */
	uint64_t per = getenv("SER_SEEDS_PER") ? strtoull(getenv("SER_SEEDS_PER"), NULL, 0) : 25;

	if (getenv("SER_SEED")) { /* reproduce one seed */
		if (_i == 0)
			random_run(strtoull(getenv("SER_SEED"), NULL, 0), true);
		return;
	}

	for (uint64_t k = 0; k < per; k++)
		random_run((uint64_t)_i * per + k + 1, _i == 0 && k < 4);
	/* seeds a soak once failed on: 3416 (a duplicated WRITE answered
	 * with a plain ACK of a real atomic's PSN, which must not reach
	 * the client) */
	if (_i == 0)
		random_run(3416, false);
}
END_TEST

/* ------------------------------------------------------------------ */
/* open-loop replay of a real ConnectX capture */

START_TEST(t_capture_replay)
{
	const char *dir = getenv("CAPTURES_DIR");
	char path[512], errb[PCAP_ERRBUF_SIZE];
	pcap_t *pc;
	struct pcap_pkthdr *h;
	const u_char *data;
	struct ser_region reg[2] = {
		/* the masked-CAS bit locks (va 0.., rkey 0x2521) and the CAS
		 * lock at 0x5562cc8a7ab0 (rkey 0x2a583) */
		{ .server_ip4 = RTE_BE32(0xc0a8010c), .rkey = 0x2521, .base = 0,
		  .len = 64 },
		{ .server_ip4 = RTE_BE32(0xc0a8010c), .any_rkey = true,
		  .base = 0x5562cc8a7a00ull, .len = 0x400 },
	};
	struct ser_params prm = { .regions = reg, .n_regions = 2 };
	struct ser *ser;
	struct sim out; /* only for its pcap writer and validator */
	int frames = 0, roce = 0;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/rcuckoo-connectx.pcap", dir);
	pc = pcap_open_offline(path, errb);
	ck_assert_msg(pc != NULL, "%s", errb);
	ser = ser_create(&prm);
	ck_assert_ptr_nonnull(ser);
	memset(&out, 0, sizeof(out));
	snprintf(out.pcap_out, sizeof(out.pcap_out), "%s/ser-capture-out.pcap",
		 getenv("SER_OUT_DIR") ? getenv("SER_OUT_DIR") : ".");
	out.pc = pcap_open_dead(DLT_EN10MB, 65535);
	out.pd_out = pcap_dump_open(out.pc, out.pcap_out);
	ck_assert_ptr_nonnull(out.pd_out);

	while (pcap_next_ex(pc, &h, &data) == 1) {
		uint8_t buf[2048];
		uint32_t len = h->caplen;
		struct roce_pkt p;
		struct ser_emit emit[8];
		uint32_t n_emit = 0;
		enum ser_verdict v = SER_FORWARD;
		struct pcap_pkthdr oh = *h;

		frames++;
		memcpy(buf, data, len);
		if (roce_parse(buf, len, &p) == ROCE_OK) {
			roce++;
			if (p.oi->flags & ROCE_F_REQUEST)
				v = ser_on_request(ser, buf, &len, sizeof(buf), &p,
						   (uint64_t)frames);
			else
				v = ser_on_response(ser, buf, &len, sizeof(buf), &p,
						    (uint64_t)frames, emit, 8, &n_emit);
		}
		for (uint32_t i = 0; i < n_emit; i++) {
			oh.caplen = oh.len = emit[i].len;
			pcap_dump((u_char *)out.pd_out, &oh, emit[i].buf);
			out.n_out++;
		}
		if (v != SER_DROP) {
			oh.caplen = oh.len = len;
			pcap_dump((u_char *)out.pd_out, &oh, buf);
			out.n_out++;
		}
		if (v == SER_FORWARD)
			ck_assert_msg(len == h->caplen && !memcmp(buf, data, len),
				      "frame %d changed but reported unchanged", frames);
	}
	pcap_close(pc);
	ck_assert_int_eq(frames, 24);
	ck_assert_int_eq(roce, 16);
	{
		const struct ser_counters *c = ser_counters(ser);
		uint64_t v;

		/* frame 10 (masked CAS, word 0 unknown) and 14 (CAS) go real
		 * and are learned from frames 12 and 15; frame 16 (masked CAS
		 * release on the now known word) is decided here and its
		 * capture answer (a real ATOMIC ACK) disagrees: passed and
		 * counted, word forgotten; frame 18 is misaligned (va 1):
		 * passed, and the server NAKs it in frame 20 */
		if (getenv("SER_VERBOSE"))
			fprintf(stderr, "capture: real %llu learned %llu granted %llu mismatch %llu "
				"paired %llu cm %llu/%llu closed %llu naks %llu oow %llu\n",
				(unsigned long long)c->passed_real_atomic,
				(unsigned long long)c->learned, (unsigned long long)c->granted,
				(unsigned long long)c->resp_mismatch, (unsigned long long)c->paired,
				(unsigned long long)c->cm_seen, (unsigned long long)c->cm_paired,
				(unsigned long long)c->conn_closed, (unsigned long long)c->naks,
				(unsigned long long)c->psn_out_of_window);
		ck_assert_uint_eq(c->passed_real_atomic, 2);
		ck_assert_uint_eq(c->learned, 2);
		ck_assert_uint_eq(c->granted, 1);
		ck_assert_uint_eq(c->resp_mismatch, 1);
		ck_assert_uint_eq(c->misaligned_passed, 1);
		ck_assert_uint_eq(c->paired, 1);
		/* identity from the capture's RDMA CM exchange: REQ/REP
		 * (frames 6, 7) pair it exactly, DREQ (21) closes it */
		ck_assert_uint_eq(c->cm_paired, 1);
		ck_assert_uint_eq(c->conn_closed, 1);
		ck_assert_uint_eq(c->naks, 1);
		ck_assert_int_eq(ser_word_get(ser, RTE_BE32(0xc0a8010c), 0x2a583,
					      0x5562cc8a7ab0ull, &v, NULL),
				 SER_WORD_KNOWN);
		ck_assert_uint_eq(v, 1);
		ck_assert_int_eq(ser_word_get(ser, RTE_BE32(0xc0a8010c), 0x2521, 0,
					      &v, NULL), SER_WORD_UNKNOWN);
	}
	ser_destroy(ser);
	ck_assert_msg(sim_validate(&out) == 0, "validate_pcap.py rejected %s",
		      out.pcap_out);
	pcap_close(out.pc);
}
END_TEST

/* Bad parameters are refused, not crashed on. */
START_TEST(t_params)
{
	struct ser_region r = { .server_ip4 = 1, .base = 4, .len = 8 };
	struct ser_params prm = { .regions = &r, .n_regions = 1 };

	ck_assert_ptr_null(ser_create(NULL));
	ck_assert_ptr_null(ser_create(&prm)); /* misaligned base */
	r.base = 8;
	prm.ring_size = 100;                   /* not a power of two */
	ck_assert_ptr_null(ser_create(&prm));
	prm.ring_size = 0;
	r.len = 1ull << 40;                    /* too many words */
	ck_assert_ptr_null(ser_create(&prm));
	r.len = 64;
	{
		struct ser *s = ser_create(&prm);

		ck_assert_ptr_nonnull(s);
		ck_assert(ser_is_server(s, 1));
		ck_assert(!ser_is_server(s, 2));
		ser_destroy(s);
	}
}
END_TEST

static Suite *
serializer_suite(void)
{
	Suite *s = suite_create("serializer");
	TCase *tc = tcase_create("closed-loop");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, t_params);
	tcase_add_loop_test(tc, t_model_sanity, 0, 2);
	tcase_add_test(tc, t_single_lock);
	tcase_add_loop_test(tc, t_contend, 0, 2);
	tcase_add_loop_test(tc, t_faa, 0, 2);
	tcase_add_loop_test(tc, t_mcas_bits, 0, 2);
	tcase_add_test(tc, t_retransmit_cas);
	tcase_add_test(tc, t_coalesced_three);
	tcase_add_test(tc, t_batch_coalesced);
	tcase_add_test(tc, t_emit_full);
	tcase_add_test(tc, t_ring_full);
	tcase_add_test(tc, t_table_full);
	tcase_add_test(tc, t_nak_rewritten);
	tcase_add_test(tc, t_pmtu_wrong);
	tcase_add_test(tc, t_lost_release_ack);
	tcase_add_test(tc, t_bad_icrc);
	tcase_add_test(tc, t_unknown_learning);
	tcase_add_test(tc, t_restart);
	tcase_add_loop_test(tc, t_random, 0, 8);
	tcase_add_test(tc, t_capture_replay);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(serializer_suite());
	int failed;

	roce_crc_init();
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
