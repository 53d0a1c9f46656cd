/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_findings.c — what the fuzz harnesses (tests/fuzz) found in
 * lib/serializer and lib/rc, one hand-written scenario each.
 *
 * Why it exists: the corpus files tests/fuzz/corpus/serializer/regress-*
 * replay each finding in the fuzz suite, but a script of fuzzer bytes says
 * nothing to a reader; these tests state the bug and its fix in frames.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "rdma_model.h"
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

static struct ser *
ser_new_expiring(uint64_t pending_expire_tsc)
{
	static const struct ser_region reg = { .server_ip4 = SRV, .rkey = RKEY,
					       .base = BASE, .len = 8 * WORDS };
	struct ser_params prm = { .regions = &reg, .n_regions = 1, .max_conns = 8,
				  .ring_size = 16,
				  .pending_expire_tsc = pending_expire_tsc };
	struct ser *s = ser_create(&prm);

	ck_assert_ptr_nonnull(s);
	return s;
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
	struct ser *s = ser_new_expiring(1000);
	uint8_t f[2048], cas12[2048];
	uint32_t len, len12;

	/* A learns the word from a real CAS, releases it, then takes it with
	 * a CAS decided here (WRITE 1) and releases it again */
	len = cas_from(f, &up, 10, 1, 0);
	ck_assert_int_eq(req(s, f, len, 1), SER_FORWARD);
	len = atomic_ack_to(f, &down, 10, 1, 0);
	ck_assert_int_eq(resp(s, f, len, 2), SER_FORWARD);
	len = write8_from(f, &up, 11, 0);
	ck_assert_int_eq(req(s, f, len, 3), SER_FORWARD);
	len = ack(f, 11, 2);
	ck_assert_int_eq(resp(s, f, len, 4), SER_FORWARD);
	len12 = cas_from(cas12, &up, 12, 1, 0);
	memcpy(f, cas12, len12);
	ck_assert_int_eq(req(s, f, len12, 5), SER_FORWARD_REWRITTEN);
	len = ack(f, 12, 3);
	ck_assert_int_eq(resp(s, f, len, 6), SER_FORWARD_REWRITTEN);
	len = write8_from(f, &up, 13, 0);
	ck_assert_int_eq(req(s, f, len, 7), SER_FORWARD);
	len = ack(f, 13, 4);
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
	/* long after, A's CAS at 12 again: stale, decided afresh, but its
	 * decision expires A's write and goes real: it is dropped */
	ck_assert_int_eq(req(s, cas12, len12, 5000), SER_DROP);
	ck_assert_uint_eq(inflight(s, BASE), 0);
	ser_destroy(s);
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
	tcase_add_test(tc, redecide_that_goes_real_gives_its_hold_back);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
