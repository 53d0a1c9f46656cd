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

static struct ser *
ser_new(void)
{
	static const struct ser_region reg = { .server_ip4 = SRV, .rkey = RKEY,
					       .base = BASE, .len = 8 * WORDS };
	struct ser_params prm = { .regions = &reg, .n_regions = 1, .max_conns = 8,
				  .ring_size = 16 };
	struct ser *s = ser_create(&prm);

	ck_assert_ptr_nonnull(s);
	return s;
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
ack(uint8_t *out, uint32_t psn, uint32_t msn)
{
	uint8_t aeth[4];

	roce_st32(aeth, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | msn);
	return rm_build(out, &down, ROCE_RC_ACKNOWLEDGE, psn, false, aeth, 4, NULL, 0);
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

int
main(void)
{
	Suite *su = suite_create("findings");
	TCase *tc = tcase_create("fuzz");
	SRunner *sr;
	int failed;

	roce_crc_init();
	tcase_add_test(tc, open_write_replaced_gives_its_words_back);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
