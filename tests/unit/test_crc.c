/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_crc.c — lib/roce's own CRC-32 (carry-less-multiply folding, used
 * for the ICRC) against CRCs we did not write: zlib's crc32 and DPDK's
 * rte_net_crc_calc (CRC32_ETH), on every length 0..2048, random initial
 * states and alignments; and the ICRC it gives against the rte_net_crc
 * path on generated RoCEv2 frames of every payload length (IPv4, IPv6,
 * VLAN), which the capture and bit-flip tests in test_roce.c cannot reach.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <zlib.h>

#include <rte_byteorder.h>
#include <rte_net_crc.h>

#include "roce.h"
#include "roce_internal.h"

#define MAX_LEN 2048

static uint8_t data[MAX_LEN + 64];

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void
fill_random(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

START_TEST(fast_path_in_use)
{
#if defined(RTE_ARCH_X86)
	/* the folding CRC is what the other tests exercise on this CPU */
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
		ck_assert(roce_crc32_clmul());
#endif
	ck_assert_uint_eq(roce_crc32(0, (const uint8_t *)"123456789", 9),
			  0xcbf43926u); /* the CRC-32 check value */
}
END_TEST

START_TEST(matches_zlib_every_length)
{
	uint32_t bad = 0;

	fill_random(data, sizeof(data));
	for (uint32_t len = 0; len <= MAX_LEN; len++) {
		for (int t = 0; t < 4; t++) {
			uint32_t init = t == 0 ? 0 : rnd() ^ (rnd() << 16);
			uint32_t off = rnd() % 64;
			uint32_t want = (uint32_t)crc32(init, data + off, len);
			uint32_t got = roce_crc32(init, data + off, len);

			if (got != want && bad++ < 5)
				fprintf(stderr, "len %u init %08x off %u: %08x != zlib %08x\n",
					len, init, off, got, want);
		}
	}
	ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(matches_rte_net_crc_every_length)
{
	static const enum rte_net_crc_alg algs[] = {
		RTE_NET_CRC_SCALAR, RTE_NET_CRC_SSE42,
	};

	fill_random(data, sizeof(data));
	for (unsigned int a = 0; a < RTE_DIM(algs); a++) {
		uint32_t bad = 0;

		rte_net_crc_set_alg(algs[a]);
		for (uint32_t len = 0; len <= MAX_LEN; len++) {
			uint32_t off = rnd() % 64;
			uint32_t want = rte_net_crc_calc(data + off, len,
							 RTE_NET_CRC32_ETH);

			if (roce_crc32(0, data + off, len) != want && bad++ < 5)
				fprintf(stderr, "alg %d len %u: differs\n", algs[a], len);
		}
		ck_assert_uint_eq(bad, 0);
	}
	roce_crc_init();
}
END_TEST

START_TEST(continues_from_a_saved_state)
{
	fill_random(data, sizeof(data));
	for (uint32_t len = 0; len <= 300; len++) {
		uint32_t want = (uint32_t)crc32(0, data, len);

		for (uint32_t cut = 0; cut <= len; cut++) {
			uint32_t c = roce_crc32(0, data, cut);

			ck_assert_uint_eq(roce_crc32(c, data + cut, len - cut), want);
		}
	}
}
END_TEST

/*
 * A RoCEv2 SEND_ONLY of payload bytes with random everything else (masked
 * fields included), IPv4 or IPv6, with or without a VLAN tag.
 */
static uint32_t
make_frame(uint8_t *f, bool v6, bool vlan, uint32_t payload)
{
	uint32_t l3 = vlan ? 18 : 14, l4, bth, len;
	uint16_t udp_len = (uint16_t)(8 + 12 + payload + 4);

	fill_random(f, 2200);
	if (vlan) {
		f[12] = 0x81;
		f[13] = 0x00;
		f[16] = v6 ? 0x86 : 0x08;
		f[17] = v6 ? 0xdd : 0x00;
	} else {
		f[12] = v6 ? 0x86 : 0x08;
		f[13] = v6 ? 0xdd : 0x00;
	}
	if (v6) {
		f[l3] = (uint8_t)(0x60 | (f[l3] & 0x0f));
		f[l3 + 4] = (uint8_t)(udp_len >> 8);
		f[l3 + 5] = (uint8_t)udp_len;
		f[l3 + 6] = 17;
		l4 = l3 + 40;
	} else {
		uint16_t tot = (uint16_t)(20 + udp_len);

		f[l3] = 0x45;
		f[l3 + 2] = (uint8_t)(tot >> 8);
		f[l3 + 3] = (uint8_t)tot;
		f[l3 + 6] = 0x40; /* DF, no fragment */
		f[l3 + 7] = 0;
		f[l3 + 9] = 17;
		l4 = l3 + 20;
	}
	f[l4 + 2] = ROCE_UDP_PORT >> 8;
	f[l4 + 3] = ROCE_UDP_PORT & 0xff;
	f[l4 + 4] = (uint8_t)(udp_len >> 8);
	f[l4 + 5] = (uint8_t)udp_len;
	bth = l4 + 8;
	f[bth] = ROCE_RC_SEND_ONLY;
	f[bth + 1] = 0; /* no pad, TVer 0 */
	len = bth + 12 + payload + 4;
	return len;
}

START_TEST(icrc_matches_rte_net_crc_path)
{
	static uint8_t f[2200], g[2200];
	int frames = 0;

	for (int shape = 0; shape < 4; shape++) {
		bool v6 = shape & 1, vlan = shape & 2;

		for (uint32_t payload = 0; payload <= 1500; payload += 4) {
			uint32_t len = make_frame(f, v6, vlan, payload);
			struct roce_pkt p;
			uint32_t fast, ref;

			ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
			memcpy(g, f, len);
			fast = roce_icrc_compute(f, &p);
			ref = roce_icrc_compute_generic(f, &p);
			ck_assert_msg(fast == ref, "v6 %d vlan %d payload %u: %08x != %08x",
				      v6, vlan, payload, fast, ref);
			/* the frame is left as it was */
			ck_assert_mem_eq(f, g, len);
			/* and the stored value round-trips */
			roce_icrc_update(f, &p);
			ck_assert(roce_icrc_verify(f, &p));
			f[p.payload_off - 1] ^= 1; /* last BTH byte: not masked */
			ck_assert(!roce_icrc_verify(f, &p));
			frames++;
		}
	}
	ck_assert_int_gt(frames, 1000);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("crc");
	TCase *tc = tcase_create("crc32");
	SRunner *sr;
	int failed;

	roce_crc_init();
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, fast_path_in_use);
	tcase_add_test(tc, matches_zlib_every_length);
	tcase_add_test(tc, matches_rte_net_crc_every_length);
	tcase_add_test(tc, continues_from_a_saved_state);
	tcase_add_test(tc, icrc_matches_rte_net_crc_path);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
