/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_udp_cksum.c — a RoCEv2 frame that arrives with a non-zero, correct
 * UDP checksum and is rewritten leaves with a correct one (issue #16).
 *
 * Why it exists: RoCEv2 senders normally put 0 in the UDP checksum, but a
 * sender may fill it in (and IPv6 needs it), and a receiver that checks it
 * drops a frame whose checksum no longer matches.  The decision: swordd
 * keeps the sender's choice — 0 stays 0, a checksum that was used is
 * recomputed (roce_resign()) — on every path that edits a frame: lib/roce's
 * rewriters, the serializer's CAS→WRITE, forced AckReq and ACK→ATOMIC ACK
 * and synthesized ACKs, Clover's steered CAS and READ.  Before the fix the
 * AckReq and Clover paths only recomputed the ICRC.
 *
 * The checksums are judged by tests/fuzz/fuzz_ref.c (plain RFC 1071 sums
 * and zlib's crc32), not by lib/roce; frames are built with
 * tests/serializer's rm_build.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "clover.h"
#include "fuzz_ref.h"
#include "rdma_model.h"
#include "roce.h"
#include "serializer.h"

#define SRV RTE_BE32(0xc6120001)     /* 198.18.0.1 */
#define CLI RTE_BE32(0xc6120010)
#define RKEY 0x2521
#define LOCKS 0x10000ull
#define SRV_QPN 0x100
#define CL_QPN 0x200

static const struct rm_addr up = {
	.src_mac = { 2, 0, 0, 0, 0, 0x10 }, .dst_mac = { 2, 0, 0, 0, 0, 0x99 },
	.src_ip = CLI, .dst_ip = SRV, .dest_qpn = SRV_QPN,
};
static const struct rm_addr down = {
	.src_mac = { 2, 0, 0, 0, 0, 0x99 }, .dst_mac = { 2, 0, 0, 0, 0, 0x10 },
	.src_ip = SRV, .dst_ip = CLI, .dest_qpn = CL_QPN,
};

/* UDP checksum state by the reference: 0 absent, 1 right, -1 wrong. */
static int
udp_state(const uint8_t *f, uint32_t len)
{
	struct ref_frame r;

	ck_assert(ref_locate(f, len, &r));
	return ref_udp_cksum_state(f, &r);
}

/* Fill in a real UDP checksum (the ICRC masks it: still valid). */
static void
with_cksum(uint8_t *f, uint32_t len)
{
	struct ref_frame r;

	ck_assert(ref_locate(f, len, &r));
	ref_udp_cksum_set(f, &r);
	ck_assert_int_eq(ref_udp_cksum_state(f, &r), 1);
	ck_assert_ptr_null(ref_check_frame(f, len));
}

/* A rewritten frame: valid for the reference, its UDP checksum as promised
 * (want 1: recomputed, 0: still absent). */
static void
expect_out(const uint8_t *f, uint32_t len, int want, const char *what)
{
	const char *bad = ref_check_frame(f, len);

	ck_assert_msg(bad == NULL, "%s: %s", what, bad);
	ck_assert_msg(udp_state(f, len) == want, "%s: UDP checksum state %d, want %d",
		      what, udp_state(f, len), want);
}

static uint32_t
atomic(uint8_t *out, uint8_t opcode, uint32_t psn, uint64_t va, uint64_t swap,
       uint64_t cmp)
{
	uint8_t eth[28];

	roce_st64(eth, va);
	roce_st32(eth + 8, RKEY);
	roce_st64(eth + 12, swap);
	roce_st64(eth + 20, cmp);
	return rm_build(out, &up, opcode, psn, true, eth, sizeof(eth), NULL, 0);
}

static uint32_t
write8(uint8_t *out, uint32_t psn, bool ackreq, uint64_t va, uint64_t v)
{
	uint8_t reth[16], pl[8];

	roce_st64(reth, va);
	roce_st32(reth + 8, RKEY);
	roce_st32(reth + 12, 8);
	roce_st64(pl, v);
	return rm_build(out, &up, ROCE_RC_WRITE_ONLY, psn, ackreq, reth, 16, pl, 8);
}

static uint32_t
ack(uint8_t *out, uint32_t psn, uint32_t msn)
{
	uint8_t aeth[4];

	roce_st32(aeth, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | msn);
	return rm_build(out, &down, ROCE_RC_ACKNOWLEDGE, psn, false, aeth, 4, NULL, 0);
}

static uint32_t
atomic_ack(uint8_t *out, uint32_t psn, uint32_t msn, uint64_t orig)
{
	uint8_t e[12];

	roce_st32(e, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | msn);
	roce_st64(e + 4, orig);
	return rm_build(out, &down, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, false, e, 12, NULL, 0);
}

/* ------------------------------------------------------------------ */

START_TEST(roce_rewriters_keep_a_used_checksum_right)
{
	for (int used = 0; used < 2; used++) {
		uint8_t f[256], out[128];
		uint32_t len, l;
		uint64_t v = 1;
		struct roce_pkt p;

		/* CAS → WRITE(v) and → zero-length WRITE */
		for (int zero = 0; zero < 2; zero++) {
			len = atomic(f, ROCE_RC_COMPARE_SWAP, 7, LOCKS, 1, 0);
			if (used)
				with_cksum(f, len);
			ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
			l = len;
			ck_assert_int_eq(roce_atomic_to_write(f, &l, sizeof(f), &p,
							      zero ? NULL : &v), 0);
			expect_out(f, l, used, "CAS -> WRITE");
		}
		/* ACK → ATOMIC ACK */
		len = ack(f, 7, 3);
		if (used)
			with_cksum(f, len);
		ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
		l = len;
		ck_assert_int_eq(roce_ack_to_atomic_ack(f, &l, sizeof(f), &p, 5), 0);
		expect_out(f, l, used, "ACK -> ATOMIC ACK");
		/* an ATOMIC ACK built on that ACK as template */
		len = ack(f, 7, 3);
		if (used)
			with_cksum(f, len);
		ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
		l = (uint32_t)roce_build_ack(out, sizeof(out), f, &p, 6, 0x1f, 4, true, 9,
					     &(struct roce_pkt){ 0 });
		expect_out(out, l, used, "synthesized ATOMIC ACK");
		/* an in-place edit and roce_resign */
		len = atomic(f, ROCE_RC_FETCH_ADD, 7, LOCKS, 1, 0);
		if (used)
			with_cksum(f, len);
		ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
		roce_set_psn(f, &p, 8);
		roce_resign(f, &p);
		expect_out(f, len, used, "PSN edit + roce_resign");
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* the serializer: forced AckReq, CAS → WRITE, ACK → ATOMIC ACK */

static struct ser *
ser_new(void)
{
	static const struct ser_region reg = { .server_ip4 = SRV, .rkey = RKEY,
					       .base = LOCKS, .len = 64 };
	struct ser_params prm = { .regions = &reg, .n_regions = 1, .max_conns = 8,
				  .ring_size = 16,
				  .out_of_band = true };   /* QPs set up out of band */
	struct ser *s = ser_create(&prm);

	ck_assert_ptr_nonnull(s);
	return s;
}

static enum ser_verdict
req(struct ser *s, uint8_t *f, uint32_t *len, uint64_t now)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, *len, &p), ROCE_OK);
	return ser_on_request(s, f, len, 256, &p, now);
}

static enum ser_verdict
resp(struct ser *s, uint8_t *f, uint32_t *len, uint64_t now, struct ser_emit *emit,
     uint32_t *n_emit)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, *len, &p), ROCE_OK);
	return ser_on_response(s, f, len, 256, &p, now, emit, 8, n_emit);
}

START_TEST(serializer_keeps_a_used_checksum_right)
{
	for (int used = 0; used < 2; used++) {
		struct ser *s = ser_new();
		struct ser_emit emit[8];
		uint32_t len, n_emit;
		uint8_t f[256];

		/* a release-style WRITE without AckReq: swordd sets AckReq */
		len = write8(f, 100, false, LOCKS + 8, 0);
		if (used)
			with_cksum(f, len);
		ck_assert_int_eq(req(s, f, &len, 1), SER_FORWARD_REWRITTEN);
		ck_assert(f[14 + 20 + 8 + 8] & 0x80);
		expect_out(f, len, used, "forced AckReq");
		len = ack(f, 100, 1);
		ck_assert_int_eq(resp(s, f, &len, 2, emit, &n_emit), SER_FORWARD);

		/* a real CAS teaches the word (and pairs the connection) */
		len = atomic(f, ROCE_RC_COMPARE_SWAP, 101, LOCKS, 1, 0);
		ck_assert_int_eq(req(s, f, &len, 3), SER_FORWARD);
		len = atomic_ack(f, 101, 2, 0);
		ck_assert_int_eq(resp(s, f, &len, 4, emit, &n_emit), SER_FORWARD);

		/* the release, then a CAS decided here: a WRITE */
		len = write8(f, 102, true, LOCKS, 0);
		ck_assert_int_eq(req(s, f, &len, 5), SER_FORWARD);
		len = ack(f, 102, 3);
		ck_assert_int_eq(resp(s, f, &len, 6, emit, &n_emit), SER_FORWARD);
		len = atomic(f, ROCE_RC_COMPARE_SWAP, 103, LOCKS, 1, 0);
		if (used)
			with_cksum(f, len);
		ck_assert_int_eq(req(s, f, &len, 7), SER_FORWARD_REWRITTEN);
		ck_assert_uint_eq(f[14 + 20 + 8], ROCE_RC_WRITE_ONLY);
		expect_out(f, len, used, "serializer CAS -> WRITE");

		/* its ACK goes back as the ATOMIC ACK */
		len = ack(f, 103, 4);
		if (used)
			with_cksum(f, len);
		ck_assert_int_eq(resp(s, f, &len, 8, emit, &n_emit), SER_FORWARD_REWRITTEN);
		ck_assert_uint_eq(f[14 + 20 + 8], ROCE_RC_ATOMIC_ACKNOWLEDGE);
		expect_out(f, len, used, "serializer ACK -> ATOMIC ACK");
		ser_destroy(s);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Clover: a steered CAS and a steered READ */

#define CL_BASE 0x100000ull
#define NODE(i) (CL_BASE + 64ull * (i))
#define NEXT 56

static uint32_t
cl_write(uint8_t *out, uint32_t qpn, uint32_t psn, uint64_t node, uint8_t key)
{
	uint8_t reth[16], val[64] = { 0 };
	struct rm_addr a = up;

	a.dest_qpn = qpn;
	roce_st64(reth, node);
	roce_st32(reth + 8, RKEY);
	roce_st32(reth + 12, sizeof(val));
	val[8] = key;
	return rm_build(out, &a, ROCE_RC_WRITE_ONLY, psn, true, reth, 16, val,
			sizeof(val));
}

static uint32_t
cl_cas(uint8_t *out, uint32_t qpn, uint32_t psn, uint64_t tail, uint64_t node)
{
	struct rm_addr a = up;
	uint8_t eth[28];

	a.dest_qpn = qpn;
	roce_st64(eth, tail + NEXT);
	roce_st32(eth + 8, RKEY);
	roce_st64(eth + 12, node);
	roce_st64(eth + 20, 0);
	return rm_build(out, &a, ROCE_RC_COMPARE_SWAP, psn, true, eth, 28, NULL, 0);
}

static uint32_t
cl_read(uint8_t *out, uint32_t psn, uint64_t node)
{
	uint8_t reth[16];

	roce_st64(reth, node);
	roce_st32(reth + 8, RKEY);
	roce_st32(reth + 12, 64);
	return rm_build(out, &up, ROCE_RC_READ_REQUEST, psn, true, reth, 16, NULL, 0);
}

static bool
cl_run(struct clover *cl, uint8_t *f, uint32_t len, bool to_server, uint64_t *ctr)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	return clover_process(cl, f, &p, 0, to_server, ctr);
}

START_TEST(clover_keeps_a_used_checksum_right)
{
	for (int used = 0; used < 2; used++) {
		struct clover_params prm = { .n_regions = 1, .keys = 16,
			.read_factor = 3, .qps = 16, .cas = 16,
			.write_steering = true, .read_steering = true };
		uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 };
		struct clover *cl;
		uint8_t f[256];
		uint32_t len;

		prm.regions[0] = (struct clover_region){ .server = 0, .rkey = RKEY,
			.base = CL_BASE, .last = NODE(64) - 1, .write_min = 64,
			.key_offset = 8, .key_width = 1, .next_offset = NEXT,
			.read_min = 64 };
		cl = clover_create(&prm);
		ck_assert_ptr_nonnull(cl);
		/* QP A writes node 1 of key 7 and links it after node 0; the
		 * answer (success) makes node 1 the known tail */
		len = cl_write(f, 0x100, 10, NODE(1), 7);
		ck_assert(!cl_run(cl, f, len, true, ctr));
		len = cl_cas(f, 0x100, 11, NODE(0), NODE(1));
		ck_assert(!cl_run(cl, f, len, true, ctr));
		len = atomic_ack(f, 11, 2, 0);
		ck_assert(!cl_run(cl, f, len, false, ctr));
		/* QP A appends node 2 at the tail (aimed there already) */
		len = cl_write(f, 0x100, 12, NODE(2), 7);
		ck_assert(!cl_run(cl, f, len, true, ctr));
		len = cl_cas(f, 0x100, 13, NODE(1), NODE(2));
		ck_assert(!cl_run(cl, f, len, true, ctr));
		/* QP B, behind: its CAS at node 1 is steered to node 2 */
		len = cl_write(f, 0x101, 20, NODE(3), 7);
		ck_assert(!cl_run(cl, f, len, true, ctr));
		len = cl_cas(f, 0x101, 21, NODE(1), NODE(3));
		if (used)
			with_cksum(f, len);
		ck_assert(cl_run(cl, f, len, true, ctr));
		ck_assert_uint_eq(roce_ld64(f + 14 + 20 + 8 + 12), NODE(2) + NEXT);
		expect_out(f, len, used, "steered CAS");
		/* a READ of the old tail (node 1) goes to node 3, the tail now */
		len = cl_read(f, 30, NODE(1));
		if (used)
			with_cksum(f, len);
		ck_assert(cl_run(cl, f, len, true, ctr));
		ck_assert_uint_eq(roce_ld64(f + 14 + 20 + 8 + 12), NODE(3));
		expect_out(f, len, used, "steered READ");
		clover_destroy(cl);
	}
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("udp_cksum");
	TCase *tc = tcase_create("rewrites");
	SRunner *sr;
	int failed;

	roce_crc_init();
	tcase_add_test(tc, roce_rewriters_keep_a_used_checksum_right);
	tcase_add_test(tc, serializer_keeps_a_used_checksum_right);
	tcase_add_test(tc, clover_keeps_a_used_checksum_right);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
