/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_remap_frame.c — remapping's frame builder (remap_frame.c) against
 * lib/roce's: an ACK or NAK swordd gives a client (an expanded lane ACK,
 * an ask to resend) is copied from the lane's template ACK, PSN and AETH
 * set, not built by roce_build_ack; it must be the same frame, byte for
 * byte, for any template a lane can have (built from an ACK, an ATOMIC
 * ACK, a READ response, with or without AckReq or a UDP checksum), and
 * signed once whether the caller signs it (defer_resign) or not.
 * roce_build_ack itself is checked against scapy in tests/unit/test_roce.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "rdma_model.h"
#include "remap_internal.h"
#include "roce.h"

static const struct rm_addr down = {
	.src_mac = { 2, 0, 0, 0, 0, 0x99 }, .dst_mac = { 2, 0, 0, 0, 0, 0x10 },
	.src_ip = RTE_BE32(0xc6120001), .dst_ip = RTE_BE32(0xc6120010), .dest_qpn = 0x200,
};

static uint32_t rnd_state = 12345;

static uint32_t
rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* A server answer of kind k (0 ACK, 1 ATOMIC ACK, 2 READ response, 3 the
 * same with a UDP checksum) at psn, parsed into *p. */
static uint32_t
answer(int k, uint32_t psn, uint8_t *f, struct roce_pkt *p)
{
	uint8_t ext[12] = { 0x1f, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t data[40];
	uint32_t n;

	memset(data, 0xa5, sizeof(data));
	if (k == 0)
		n = rm_build(f, &down, ROCE_RC_ACKNOWLEDGE, psn, rnd() & 1, ext, 4, NULL, 0);
	else if (k == 1)
		n = rm_build(f, &down, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, false, ext, 12, NULL, 0);
	else
		n = rm_build(f, &down, ROCE_RC_READ_RESPONSE_ONLY, psn, false, ext, 4, data,
			     sizeof(data));
	ck_assert_int_eq(roce_parse(f, n, p), ROCE_OK);
	if (k == 3) {
		roce_st16(f + p->l4_off + 6, 1);   /* a checksum: redone with the ICRC */
		roce_resign(f, p);
	}
	return n;
}

/* The lane's template, as resp_lane makes it from its first answer. */
static void
lane_from(struct rmp_lane *l, int k)
{
	uint8_t f[256];
	struct roce_pkt p;
	int n;

	answer(k, rnd() & ROCE_PSN_MASK, f, &p);
	memset(l, 0, sizeof(*l));
	n = roce_build_ack(l->tmpl, sizeof(l->tmpl), f, &p, p.psn,
			   roce_syndrome_make(ROCE_AETH_ACK, 0), 0, false, 0, &l->tmpl_p);
	ck_assert_int_gt(n, 0);
	l->tmpl_len = (uint32_t)n;
}

/* What rmp_build_aeth gives, by roce_build_ack, then the client's address
 * and a signature. */
static int
reference(const struct rmp_lane *l, const struct rc_conn *c, const struct rmp_conn *rcn,
	  uint32_t psn, uint8_t syn, uint32_t msn, const uint64_t *orig, uint8_t *out)
{
	struct roce_pkt op;
	int n = roce_build_ack(out, REMAP_EMIT_BUF, l->tmpl, &l->tmpl_p, psn, syn, msn,
			       orig != NULL, orig ? *orig : 0, &op);

	ck_assert_int_gt(n, 0);
	rmp_set_dst(out, &op, rcn->mac, c->cl_ip);
	roce_set_qpn(out, &op, c->cl_qpn);
	op.qpn = c->cl_qpn;
	rmp_resign(out, &op);
	return n;
}

START_TEST(aeth_from_the_template_is_roce_build_ack)
{
	static struct remap r;
	static struct rmp_lane l;
	struct rc_conn c = { .cl_ip = RTE_BE32(0xc6120022), .cl_qpn = 0x345 };
	struct rmp_conn rcn = { .mac = { 2, 0, 0, 0, 0, 0x22 } };
	const uint8_t syns[] = {
		roce_syndrome_make(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID),
		roce_syndrome_make(ROCE_AETH_ACK, 3),
		roce_syndrome_make(ROCE_AETH_RNR_NAK, 1),
		roce_syndrome_make(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR),
	};

	for (int round = 0; round < 200; round++) {
		const int k = round % 4;
		const uint32_t psn = rnd() & ROCE_PSN_MASK, msn = rnd() & ROCE_PSN_MASK;
		const uint8_t syn = syns[rnd() % RTE_DIM(syns)];
		const uint64_t orig = ((uint64_t)rnd() << 32) | rnd();
		const bool with_orig = (round / 4) % 2 && roce_syndrome_kind(syn) == ROCE_AETH_ACK;
		uint8_t ref[REMAP_EMIT_BUF];
		struct remap_emit e;
		struct roce_pkt p;
		int n;

		lane_from(&l, k);
		n = reference(&l, &c, &rcn, psn, syn, msn, with_orig ? &orig : NULL, ref);
		for (int defer = 0; defer < 2; defer++) {
			r.prm.defer_resign = defer;
			memset(&e, 0x5a, sizeof(e));
			ck_assert_int_eq(rmp_build_aeth(&r, &l, &c, &rcn, psn, syn, msn,
							with_orig ? &orig : NULL, &e), 0);
			ck_assert_uint_eq(e.len, (uint32_t)n);
			ck_assert(!e.to_server && !e.after);
			ck_assert(e.unsigned_icrc == (bool)defer);
			if (defer) {   /* signed by its caller (the worker) */
				ck_assert_int_eq(roce_parse(e.buf, e.len, &p), ROCE_OK);
				roce_resign(e.buf, &p);
			}
			ck_assert_mem_eq(e.buf, ref, (size_t)n);
		}
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("remap-frame");
	TCase *tc = tcase_create("builders");
	SRunner *sr;
	int failed;

	roce_crc_init();
	tcase_add_test(tc, aeth_from_the_template_is_roce_build_ack);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
