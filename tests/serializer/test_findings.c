/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_findings.c — what the fuzz harnesses (tests/fuzz) found in
 * lib/serializer, lib/rc and lib/remap, one hand-written scenario each.
 *
 * Why it exists: the corpus files tests/fuzz/corpus/{serializer,remap}/
 * regress-* replay each finding in the fuzz suite, but a script of fuzzer
 * bytes says nothing to a reader; these tests state the bug and its fix in
 * frames.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "rc.h"
#include "rdma_model.h"
#include "remap_internal.h"
#include "roce.h"
#include "serializer.h"

#define SRV RTE_BE32(0xc6120001)
#define CLI RTE_BE32(0xc6120010)
#define RKEY 0x2521
#define BASE 0x10000ull
#define WORDS 16

static const struct rm_addr up = {
	.src_mac = { 2, 0, 0, 0, 0, 0x10 }, .dst_mac = { 2, 0, 0, 0, 0, 0x99 },
	.src_ip = CLI, .dst_ip = SRV, .dest_qpn = 0x100,
};
static const struct rm_addr down = {
	.src_mac = { 2, 0, 0, 0, 0, 0x99 }, .dst_mac = { 2, 0, 0, 0, 0, 0x10 },
	.src_ip = SRV, .dst_ip = CLI, .dest_qpn = 0x200,
};
/* a second client (another host) */
static const struct rm_addr up_b = {
	.src_mac = { 2, 0, 0, 0, 0, 0x11 }, .dst_mac = { 2, 0, 0, 0, 0, 0x99 },
	.src_ip = CLI + RTE_BE32(1), .dst_ip = SRV, .dest_qpn = 0x101,
};
static const struct rm_addr down_b = {
	.src_mac = { 2, 0, 0, 0, 0, 0x99 }, .dst_mac = { 2, 0, 0, 0, 0, 0x11 },
	.src_ip = SRV, .dst_ip = CLI + RTE_BE32(1), .dest_qpn = 0x201,
};

/* a third client (another host) */
static const struct rm_addr up_c = {
	.src_mac = { 2, 0, 0, 0, 0, 0x12 }, .dst_mac = { 2, 0, 0, 0, 0, 0x99 },
	.src_ip = CLI + RTE_BE32(2), .dst_ip = SRV, .dest_qpn = 0x102,
};
static const struct rm_addr down_c = {
	.src_mac = { 2, 0, 0, 0, 0, 0x99 }, .dst_mac = { 2, 0, 0, 0, 0, 0x12 },
	.src_ip = SRV, .dst_ip = CLI + RTE_BE32(2), .dest_qpn = 0x202,
};

/* no_poke: as with remapping on (ser_fn.c), swordd cannot ask the server
 * which life a copy is of */
static struct ser *
ser_new_with(uint64_t pending_expire_tsc, bool no_poke)
{
	static const struct ser_region reg = { .server_ip4 = SRV, .rkey = RKEY,
					       .base = BASE, .len = 8 * WORDS };
	struct ser_params prm = { .regions = &reg, .n_regions = 1, .max_conns = 8,
				  .ring_size = 16,
				  .pending_expire_tsc = pending_expire_tsc,
				  .no_poke = no_poke,
				  /* the frames' QPs are set up out of band */
				  .out_of_band = true };
	struct ser *s = ser_create(&prm);

	ck_assert_ptr_nonnull(s);
	return s;
}

static struct ser *
ser_new_expiring(uint64_t pending_expire_tsc)
{
	return ser_new_with(pending_expire_tsc, false);
}

static struct ser *
ser_new(void)
{
	return ser_new_expiring(0);
}

static enum ser_verdict
req(struct ser *s, uint8_t *f, uint32_t len, uint64_t now)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	return ser_on_request(s, f, &len, 256, &p, now);
}

static enum ser_verdict
resp(struct ser *s, uint8_t *f, uint32_t len, uint64_t now)
{
	struct ser_emit emit[8];
	struct roce_pkt p;
	uint32_t n;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	return ser_on_response(s, f, &len, 256, &p, now, emit, 8, &n);
}

static uint32_t
write_req(uint8_t *out, uint8_t opcode, uint32_t psn, uint64_t va, uint32_t dlen,
	  uint32_t plen)
{
	uint8_t reth[16], pl[64] = { 0 };

	roce_st64(reth, va);
	roce_st32(reth + 8, RKEY);
	roce_st32(reth + 12, dlen);
	return rm_build(out, &up, opcode, psn, true, reth, 16, pl, plen);
}

static uint32_t
ack_to(uint8_t *out, const struct rm_addr *a, uint32_t psn, uint32_t msn)
{
	uint8_t aeth[4];

	roce_st32(aeth, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | msn);
	return rm_build(out, a, ROCE_RC_ACKNOWLEDGE, psn, false, aeth, 4, NULL, 0);
}

static uint32_t
ack(uint8_t *out, uint32_t psn, uint32_t msn)
{
	return ack_to(out, &down, psn, msn);
}

static uint32_t
atomic_ack_to(uint8_t *out, const struct rm_addr *a, uint32_t psn, uint32_t msn,
	      uint64_t orig)
{
	uint8_t e[12];

	roce_st32(e, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | msn);
	roce_st64(e + 4, orig);
	return rm_build(out, a, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, false, e, 12, NULL, 0);
}

static uint32_t
cas_from(uint8_t *out, const struct rm_addr *a, uint32_t psn, uint64_t swap,
	 uint64_t cmp)
{
	uint8_t eth[28];

	roce_st64(eth, BASE);
	roce_st32(eth + 8, RKEY);
	roce_st64(eth + 12, swap);
	roce_st64(eth + 20, cmp);
	return rm_build(out, a, ROCE_RC_COMPARE_SWAP, psn, true, eth, 28, NULL, 0);
}

static uint32_t
write8_from(uint8_t *out, const struct rm_addr *a, uint32_t psn, uint64_t v)
{
	uint8_t reth[16], pl[8];

	roce_st64(reth, BASE);
	roce_st32(reth + 8, RKEY);
	roce_st32(reth + 12, 8);
	roce_st64(pl, v);
	return rm_build(out, a, ROCE_RC_WRITE_ONLY, psn, true, reth, 16, pl, 8);
}

static uint32_t
inflight(const struct ser *s, uint64_t va)
{
	uint32_t n = 0;

	ser_word_get(s, SRV, RKEY, va, NULL, &n);
	return n;
}

/*
 * Finding 1 (fuzz_serializer, regress-open-write-leak): a WRITE_FIRST over
 * lock words makes them busy until its WRITE_LAST.  If the client starts
 * another WRITE message instead (its responder NAKs the out-of-sequence
 * opcode), the open write was overwritten without giving its words back:
 * they stayed busy for good, so no atomic on them was ever decided again.
 */
START_TEST(open_write_replaced_gives_its_words_back)
{
	struct ser *s = ser_new();
	uint8_t f[2048];
	uint32_t len;

	len = write_req(f, ROCE_RC_WRITE_FIRST, 10, BASE, 8 * WORDS + 4096, 64);
	ck_assert_int_eq(req(s, f, len, 1), SER_FORWARD);
	ck_assert_uint_eq(inflight(s, BASE), 1);
	/* a 16-byte WRITE_ONLY on words 2-3 (not a single-word write) */
	len = write_req(f, ROCE_RC_WRITE_ONLY, 11, BASE + 16, 16, 16);
	ck_assert_int_eq(req(s, f, len, 2), SER_FORWARD);
	len = ack(f, 11, 1);
	ck_assert_int_eq(resp(s, f, len, 3), SER_FORWARD);
	/* the FIRST's hold on word 0 was given back; nothing is in flight */
	ck_assert_uint_eq(inflight(s, BASE), 0);
	ck_assert_uint_eq(inflight(s, BASE + 16), 0);
	ser_destroy(s);
}
END_TEST

/*
 * The scenario of finding 2: A learns the word from a real CAS at 10,
 * releases it, takes it with a CAS decided here at 12 (its frame in
 * cas12, its length returned) and releases it again; B changes the word
 * and releases it; A writes 5 at 14 and that ACK never comes.  msn0: the
 * MSN A's server QP had before (its answers count on from it).
 */
static uint32_t
stale_grant_scenario(struct ser *s, uint8_t *cas12, uint32_t msn0)
{
	uint8_t f[2048];
	uint32_t len, len12;

	len = cas_from(f, &up, 10, 1, 0);
	ck_assert_int_eq(req(s, f, len, 1), SER_FORWARD);
	len = atomic_ack_to(f, &down, 10, msn0 + 1, 0);
	ck_assert_int_eq(resp(s, f, len, 2), SER_FORWARD);
	len = write8_from(f, &up, 11, 0);
	ck_assert_int_eq(req(s, f, len, 3), SER_FORWARD);
	len = ack(f, 11, msn0 + 2);
	ck_assert_int_eq(resp(s, f, len, 4), SER_FORWARD);
	len12 = cas_from(cas12, &up, 12, 1, 0);
	memcpy(f, cas12, len12);
	ck_assert_int_eq(req(s, f, len12, 5), SER_FORWARD_REWRITTEN);
	len = ack(f, 12, msn0 + 3);
	ck_assert_int_eq(resp(s, f, len, 6), SER_FORWARD_REWRITTEN);
	len = write8_from(f, &up, 13, 0);
	ck_assert_int_eq(req(s, f, len, 7), SER_FORWARD);
	len = ack(f, 13, msn0 + 4);
	ck_assert_int_eq(resp(s, f, len, 8), SER_FORWARD);
	/* B changes the word (a real CAS, 0 -> 2) and releases it */
	len = cas_from(f, &up_b, 100, 2, 0);
	ck_assert_int_eq(req(s, f, len, 9), SER_FORWARD);
	len = atomic_ack_to(f, &down_b, 100, 1, 0);
	ck_assert_int_eq(resp(s, f, len, 10), SER_FORWARD);
	len = write8_from(f, &up_b, 101, 0);
	ck_assert_int_eq(req(s, f, len, 11), SER_FORWARD);
	len = ack_to(f, &down_b, 101, 2);
	ck_assert_int_eq(resp(s, f, len, 12), SER_FORWARD);
	/* A writes 5 and its ACK never comes */
	len = write8_from(f, &up, 14, 5);
	ck_assert_int_eq(req(s, f, len, 13), SER_FORWARD);
	ck_assert_uint_eq(inflight(s, BASE), 1);
	return len12;
}

/*
 * Finding 2 (fuzz_serializer, regress-redecide-busy-leak): a replay of an
 * answered decision, after another owner changed the word, is decided
 * afresh (ser_word.c S8) when ser_word_decidable() says the word is
 * settled for its connection.  But ser_word_decide() first expires the
 * word's pending writes (pending_expire_tsc), which can unsettle it; it
 * then chose the real atomic and took a busy hold for it, and
 * replay_redecide() dropped the request without giving the hold back: the
 * word stayed busy for good and was never decided again.
 */
START_TEST(redecide_that_goes_real_gives_its_hold_back)
{
	/* _i 0: where swordd cannot ask the server (remapping on), the
	 * stale copy is decided afresh (since 2026-11-29 only in a run of
	 * copies from the connection's first request: the _remap test
	 * below; this one's copy of 12 now gets the recorded answer);
	 * 1: it asks (replay_probe), after the expired write no longer
	 * gates the word */
	struct ser *s = ser_new_with(1000, _i == 0);
	uint8_t f[2048], cas12[2048];
	uint32_t len, len12;

	len12 = stale_grant_scenario(s, cas12, 0);
	/* long after, A's CAS at 12 again: stale, decided afresh, but its
	 * decision expires A's write and goes real: it is dropped */
	if (_i == 0) {
		/* a go-back-N from further on: the recorded answer */
		ck_assert_int_eq(req(s, cas12, len12, 5000), SER_FORWARD_REWRITTEN);
		ck_assert_uint_eq(ser_counters(s)->replay_redecided, 0);
		ck_assert_uint_eq(ser_counters(s)->replay_probed, 0);
	} else {
		/* probed: the server is asked first whether A's QP has 12 */
		ck_assert_int_eq(req(s, cas12, len12, 5000), SER_DROP);
		ck_assert_uint_eq(ser_counters(s)->probe_asked, 1);
		/* its answer: an ACK at 11, so the QP lacks 12 (a new life);
		 * the next copy goes as the CAS itself */
		len = ack(f, 11, 2);
		ck_assert_int_eq(resp(s, f, len, 5001), SER_FORWARD);
		ck_assert_uint_eq(ser_counters(s)->probe_lacked, 1);
		ck_assert_int_eq(req(s, cas12, len12, 5002), SER_FORWARD);
		ck_assert_uint_eq(ser_counters(s)->replay_probed, 1);
		ck_assert_uint_eq(ser_counters(s)->pending_expired, 1);
	}
	ser_destroy(s);
}
END_TEST

/*
 * The same with remapping on (no probe), where S8 decides afresh only a
 * copy in a run of copies from the connection's first request (a new
 * life's server QP runs nothing before its first request): A's first
 * request is a WRITE outside the lock words, and A resends from it.
 */
START_TEST(redecide_that_goes_real_gives_its_hold_back_remap)
{
	struct ser *s = ser_new_with(1000, true);
	const uint64_t outside = BASE + 8 * WORDS + 64;
	uint8_t f[2048], cas12[2048], w9[2048];
	uint32_t len, len12, len9;

	/* A's first request, answered: A is paired */
	len9 = write_req(w9, ROCE_RC_WRITE_ONLY, 9, outside, 8, 8);
	memcpy(f, w9, len9);
	ck_assert_int_eq(req(s, f, len9, 1), SER_FORWARD);
	len = ack(f, 9, 1);
	ck_assert_int_eq(resp(s, f, len, 1), SER_FORWARD);
	len12 = stale_grant_scenario(s, cas12, 1);
	/* long after, A resends from its first request on: its CAS at 12
	 * is stale, decided afresh, but its decision expires A's write and
	 * goes real: it is dropped, its hold given back */
	memcpy(f, w9, len9);
	ck_assert_int_eq(req(s, f, len9, 4999), SER_FORWARD);
	ck_assert_int_eq(req(s, cas12, len12, 5000), SER_DROP);
	ck_assert_uint_eq(inflight(s, BASE), 0);
	ser_destroy(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* lib/remap (fuzz_remap): remapping alone, keeping its own table, 1 lane */

struct rmp_world {
	struct rc_table *rc;
	struct remap *r;
	struct remap_server srv;
	struct remap_emit emit[8];
	uint32_t n_emit;
};

/* READ spans by a path MTU of 1024; rr: responder resources (0: 16) */
static void
rmp_new_rr(struct rmp_world *w, uint32_t rr)
{
	w->rc = rc_create(&(struct rc_params){ .max_conns = 16 });
	ck_assert_ptr_nonnull(w->rc);
	w->srv = (struct remap_server){ .ip = SRV, .lanes = 1, .keep_conns = true };
	w->r = remap_create(&(struct remap_params){ .servers = &w->srv, .n_servers = 1,
						    .rc = w->rc, .ring = 64, .pmtu = 1024,
						    .responder_resources = rr, .out_of_band = true });
	ck_assert_ptr_nonnull(w->r);
}

static void
rmp_new(struct rmp_world *w)
{
	rmp_new_rr(w, 0);
}

static void
rmp_free(struct rmp_world *w)
{
	remap_destroy(w->r);
	rc_destroy(w->rc);
}

static enum remap_verdict
rmp_req(struct rmp_world *w, uint8_t *f, uint32_t len, uint64_t now)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	return remap_on_request(w->r, f, &len, 2048, &p, false, now, w->emit, 8, &w->n_emit);
}

static enum remap_verdict
rmp_resp(struct rmp_world *w, uint8_t *f, uint32_t len, uint64_t now)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	return remap_on_response(w->r, f, &len, 2048, &p, false, now, w->emit, 8, &w->n_emit);
}

/* A client's connection paired on evidence (a WRITE at psn on its own QP,
 * answered there with MSN 1), then bound onto the lane by its next WRITE. */
static void
rmp_bind_client(struct rmp_world *w, const struct rm_addr *u, const struct rm_addr *d,
		uint32_t psn)
{
	uint8_t f[2048];
	uint32_t len;

	len = write8_from(f, u, psn, 0);
	ck_assert_int_eq(rmp_req(w, f, len, 1), REMAP_PASS);
	len = ack_to(f, d, psn, 1);
	ck_assert_int_eq(rmp_resp(w, f, len, 2), REMAP_PASS);
	len = write8_from(f, u, psn + 1, 0);
	ck_assert_int_eq(rmp_req(w, f, len, 3), REMAP_MODIFIED);
}

/*
 * Finding 3 (fuzz_remap, regress-direct-bad-icrc): an answer from a
 * connection's own server QP (not on a lane yet) moved its window (una)
 * and set the MSN it would bind with before any ICRC check.  A corrupted
 * one could bind the client while a request of its own was still
 * outstanding on its own QP, or with an MSN it never had (I8).
 */
START_TEST(remap_direct_answer_with_bad_icrc_teaches_nothing)
{
	struct rmp_world w;
	uint8_t f[2048];
	uint32_t len;

	rmp_new(&w);
	len = write8_from(f, &up, 10, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 1), REMAP_PASS);
	len = write8_from(f, &up, 11, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 2), REMAP_PASS);
	len = ack(f, 10, 1);
	ck_assert_int_eq(rmp_resp(&w, f, len, 3), REMAP_PASS);      /* paired */
	/* the answer to 11, corrupted on the way (MSN 7, bad ICRC) */
	len = ack(f, 11, 7);
	f[len - 1] ^= 1;
	ck_assert_int_eq(rmp_resp(&w, f, len, 4), REMAP_PASS);
	/* 11 is still outstanding: 12 must not bind */
	len = write8_from(f, &up, 12, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 5), REMAP_PASS);
	ck_assert_uint_eq(remap_counters(w.r)->bound, 0);
	/* the real answers: it binds at its next request */
	len = ack(f, 11, 2);
	ck_assert_int_eq(rmp_resp(&w, f, len, 6), REMAP_PASS);
	len = ack(f, 12, 3);
	ck_assert_int_eq(rmp_resp(&w, f, len, 7), REMAP_PASS);
	len = write8_from(f, &up, 13, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 8), REMAP_MODIFIED);
	ck_assert_uint_eq(remap_counters(w.r)->bound, 1);
	rmp_free(&w);
}
END_TEST

/*
 * Finding 4 (fuzz_remap, regress-cm-bad-icrc-record): a request of a
 * connection remapping had no record of yet (opened by the RDMA CM, or by
 * the serializer in front) made that record before its ICRC was checked:
 * a bad frame created state (I8).
 */
START_TEST(remap_request_with_bad_icrc_creates_no_record)
{
	struct rmp_world w;
	struct rc_conn *c;
	uint8_t f[2048];
	uint32_t len;

	rmp_new(&w);
	c = rc_open(w.rc, up.src_ip, up.dst_ip, up.dest_qpn, 10, 1);
	ck_assert_ptr_nonnull(c);
	len = write8_from(f, &up, 10, 0);
	f[len - 1] ^= 1;
	ck_assert_int_eq(rmp_req(&w, f, len, 2), REMAP_PASS);
	ck_assert_uint_eq(w.r->conns[rc_index(w.rc, c)].inc, 0);
	len = write8_from(f, &up, 10, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 3), REMAP_PASS);
	ck_assert_uint_eq(w.r->conns[rc_index(w.rc, c)].inc, c->incarnation);
	rmp_free(&w);
}
END_TEST

/*
 * Finding 5 (fuzz_remap, regress-lane-reopened): a fatal NAK closes a
 * lane; its clients stay bound to it and their requests are dropped until
 * they reconnect.  But the next connection to bind reopened the same lane
 * slot as its own, and the closed lane's clients silently rode the new
 * owner's QP: a request of theirs executed and ACKed there acknowledged
 * to the client the ones lost with the old lane (a lost write).
 */
START_TEST(remap_clients_of_a_closed_lane_stay_off_its_next_life)
{
	struct rmp_world w;
	uint8_t f[2048], aeth[4];
	uint32_t len;
	struct roce_pkt p;

	rmp_new(&w);
	rmp_bind_client(&w, &up, &down, 10);         /* A: the lane, from 11 */
	rmp_bind_client(&w, &up_b, &down_b, 100);    /* B rides it (lane PSN 12) */
	/* the server's QP fails: a remote-access NAK at lane PSN 12, B's
	 * (the lane's only other rider is its owner, whose QP it is: the
	 * lane cannot move, remap_move.c, and closes) */
	roce_st32(aeth, ((uint32_t)roce_syndrome_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_ACCESS)
			 << 24) | 1);
	len = rm_build(f, &down, ROCE_RC_ACKNOWLEDGE, 12, false, aeth, 4, NULL, 0);
	rmp_resp(&w, f, len, 4);
	ck_assert_uint_eq(remap_counters(w.r)->lanes_closed, 1);
	/* C binds: the lane opens again, on C's QP */
	rmp_bind_client(&w, &up_c, &down_c, 200);
	ck_assert_uint_eq(remap_counters(w.r)->lanes_opened, 2);
	/* B's next WRITE (its 101 was lost with the old lane) stays off it */
	len = write8_from(f, &up_b, 102, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 5), REMAP_DROP);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ck_assert_uint_eq(p.qpn, up_b.dest_qpn);
	len = write8_from(f, &up, 12, 0);           /* A, the old owner, too */
	ck_assert_int_eq(rmp_req(&w, f, len, 6), REMAP_DROP);
	ck_assert_uint_eq(remap_counters(w.r)->dead_lane_dropped, 2);
	rmp_free(&w);
}
END_TEST

static uint32_t
read_req(uint8_t *out, uint32_t psn, uint32_t dlen)
{
	uint8_t reth[16];

	roce_st64(reth, BASE);
	roce_st32(reth + 8, RKEY);
	roce_st32(reth + 12, dlen);
	return rm_build(out, &up, ROCE_RC_READ_REQUEST, psn, true, reth, 16, NULL, 0);
}

static uint32_t
lane_rd_out(const struct rmp_world *w)
{
	struct remap_lane_info li;

	ck_assert_int_eq(remap_lane_info(w->r, SRV, 0, &li), 0);
	return li.rd_outstanding;
}

/*
 * Finding 6 (fuzz_remap, regress-read-middle-skips): a READ response
 * MIDDLE or LAST whose FIRST was lost moved the lane's una past the PSNs
 * before it without looking at them (only FIRST and ONLY did): a READ or
 * an atomic that ended there kept its responder resource for good.  Each
 * such pair of losses took one resource from the lane until it refused
 * every READ and atomic.
 */
START_TEST(remap_read_response_after_lost_first_gives_resources_back)
{
	struct rmp_world w;
	uint8_t f[2048], aeth[4], pl[1024] = { 0 };
	uint32_t len;

	rmp_new_rr(&w, 2);
	rmp_bind_client(&w, &up, &down, 10);         /* the lane, from 11 */
	len = ack(f, 11, 2);
	ck_assert_int_eq(rmp_resp(&w, f, len, 4), REMAP_MODIFIED);
	len = read_req(f, 12, 8);                    /* lane PSN 12 */
	ck_assert_int_eq(rmp_req(&w, f, len, 5), REMAP_MODIFIED);
	len = read_req(f, 13, 3000);                 /* lane PSNs 13..15 */
	ck_assert_int_eq(rmp_req(&w, f, len, 6), REMAP_MODIFIED);
	ck_assert_uint_eq(lane_rd_out(&w), 2);
	/* 12's ONLY and 13's FIRST are lost; 14's MIDDLE and 15's LAST come */
	len = rm_build(f, &down, ROCE_RC_READ_RESPONSE_MIDDLE, 14, false, NULL, 0, pl, 1024);
	ck_assert_int_eq(rmp_resp(&w, f, len, 7), REMAP_MODIFIED);
	ck_assert_uint_eq(lane_rd_out(&w), 1);
	roce_st32(aeth, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | 4);
	len = rm_build(f, &down, ROCE_RC_READ_RESPONSE_LAST, 15, false, aeth, 4, pl, 952);
	ck_assert_int_eq(rmp_resp(&w, f, len, 8), REMAP_MODIFIED);
	ck_assert_uint_eq(lane_rd_out(&w), 0);
	rmp_free(&w);
}
END_TEST

/* Lane requests remapping emitted in the last call, the first one's PSN. */
static uint32_t
emitted_to_lane(const struct rmp_world *w, uint32_t *psn)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < w->n_emit; i++) {
		struct roce_pkt p;

		if (!w->emit[i].to_server)
			continue;
		ck_assert_int_eq(roce_parse(w->emit[i].buf, w->emit[i].len, &p), ROCE_OK);
		if (n++ == 0)
			*psn = p.psn;
	}
	return n;
}

/*
 * Finding 7 (fuzz_remap, regress-filler-before-resend): a lane recovers
 * from a sequence NAK at lane PSN R; the client that owns R resends it,
 * and the next PSN's client is gone, so swordd fills that PSN with a
 * no-op WRITE of its own.  It emitted the filler in the same call, and
 * emitted frames leave before the call's frame: the server got R+1
 * before R, a gap on the lane.  The filler now waits for the server's
 * answer to R.
 */
START_TEST(remap_filler_goes_after_the_resend_it_follows)
{
	struct rmp_world w;
	uint8_t f[2048], aeth[4];
	uint32_t len, psn = 0;

	rmp_new(&w);
	rmp_bind_client(&w, &up, &down, 10);         /* A: the lane, from 11 */
	rmp_bind_client(&w, &up_b, &down_b, 100);    /* B: lane PSN 12 */
	len = ack(f, 11, 2);
	ck_assert_int_eq(rmp_resp(&w, f, len, 4), REMAP_MODIFIED);
	/* 12 was lost: the server NAKs it, the lane recovers from 12 */
	roce_st32(aeth, ((uint32_t)roce_syndrome_make(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR)
			 << 24) | 2);
	len = rm_build(f, &down, ROCE_RC_ACKNOWLEDGE, 12, false, aeth, 4, NULL, 0);
	ck_assert_int_eq(rmp_resp(&w, f, len, 5), REMAP_MODIFIED);
	/* C binds meanwhile: its WRITE gets lane PSN 13 and is held back */
	len = write8_from(f, &up_c, 200, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 6), REMAP_PASS);
	len = ack_to(f, &down_c, 200, 1);
	ck_assert_int_eq(rmp_resp(&w, f, len, 7), REMAP_PASS);
	len = write8_from(f, &up_c, 201, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 8), REMAP_DROP);
	/* C disconnects: nobody will send 13 again */
	rc_close(w.rc, rc_find_req(w.rc, up_c.src_ip, SRV, up_c.dest_qpn), 9);
	/* B resends 12: it goes, and nothing for 13 goes before it */
	len = write8_from(f, &up_b, 101, 0);
	ck_assert_int_eq(rmp_req(&w, f, len, 10), REMAP_MODIFIED);
	ck_assert_uint_eq(emitted_to_lane(&w, &psn), 0);
	/* the server's answer to 12: now 13 is filled */
	len = ack(f, 12, 3);
	rmp_resp(&w, f, len, 11);
	ck_assert_uint_eq(emitted_to_lane(&w, &psn), 1);
	ck_assert_uint_eq(psn, 13);
	rmp_free(&w);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("findings");
	TCase *tc = tcase_create("fuzz");
	SRunner *sr;
	int failed;

	roce_crc_init();
	tcase_add_test(tc, open_write_replaced_gives_its_words_back);
	tcase_add_loop_test(tc, redecide_that_goes_real_gives_its_hold_back, 0, 2);
	tcase_add_test(tc, redecide_that_goes_real_gives_its_hold_back_remap);
	tcase_add_test(tc, remap_direct_answer_with_bad_icrc_teaches_nothing);
	tcase_add_test(tc, remap_request_with_bad_icrc_creates_no_record);
	tcase_add_test(tc, remap_clients_of_a_closed_lane_stay_off_its_next_life);
	tcase_add_test(tc, remap_read_response_after_lost_first_gives_resources_back);
	tcase_add_test(tc, remap_filler_goes_after_the_resend_it_follows);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
