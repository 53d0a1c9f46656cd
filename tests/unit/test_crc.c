/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_crc.c — lib/roce's own CRC-32 (carry-less-multiply folding, used
 * for the ICRC) against CRCs we did not write: zlib's crc32 and DPDK's
 * rte_net_crc_calc (CRC32_ETH), on every length 0..2048, random initial
 * states and alignments; and the ICRC it gives against the rte_net_crc
 * path on generated RoCEv2 frames of every payload length (IPv4, IPv6,
 * VLAN), which the capture and bit-flip tests in test_roce.c cannot reach.
 *
 * The burst ICRC (roce_icrc_*_burst) has several kernels, one chosen by
 * the CPU; every test of it runs on every path this CPU offers, forced
 * in turn with roce_icrc_set_path: its kernels against zlib and
 * rte_net_crc on every length 0..2048 and on random bursts of 1..64
 * buffers of mixed lengths and alignments, its ICRCs against the
 * rte_net_crc path, and its verdicts on bursts that mix good and bad
 * frames (a bad one is reported bad and never re-signed).
 */
#include <errno.h>
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
 * A RoCEv2 frame with opcode and after_bth bytes after the BTH (extension
 * headers and payload) and random everything else (masked fields, UDP
 * checksum included), IPv4 (with a 4-byte option if opt) or IPv6, with or
 * without a VLAN tag.  Returns its length.
 */
static uint32_t
make_roce(uint8_t *f, bool v6, bool vlan, bool opt, uint8_t opcode,
	  uint32_t after_bth)
{
	uint32_t l3 = vlan ? 18 : 14, l4, bth, len;
	uint16_t udp_len = (uint16_t)(8 + 12 + after_bth + 4);

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
		uint32_t ihl = opt ? 24 : 20;
		uint16_t tot = (uint16_t)(ihl + udp_len);

		f[l3] = (uint8_t)(0x40 | ihl / 4);
		f[l3 + 2] = (uint8_t)(tot >> 8);
		f[l3 + 3] = (uint8_t)tot;
		f[l3 + 6] = 0x40; /* DF, no fragment */
		f[l3 + 7] = 0;
		f[l3 + 9] = 17;
		l4 = l3 + ihl;
	}
	f[l4 + 2] = ROCE_UDP_PORT >> 8;
	f[l4 + 3] = ROCE_UDP_PORT & 0xff;
	f[l4 + 4] = (uint8_t)(udp_len >> 8);
	f[l4 + 5] = (uint8_t)udp_len;
	bth = l4 + 8;
	f[bth] = opcode;
	f[bth + 1] = 0; /* no pad, TVer 0 */
	if (opcode == ROCE_RC_ACKNOWLEDGE)
		f[bth + 12] &= 0x1f; /* AETH syndrome: an ACK, not a NAK */
	len = bth + 12 + after_bth + 4;
	return len;
}

/* A SEND_ONLY of payload bytes. */
static uint32_t
make_frame(uint8_t *f, bool v6, bool vlan, uint32_t payload)
{
	return make_roce(f, v6, vlan, false, ROCE_RC_SEND_ONLY, payload);
}

/* ------------------------------------------------------------------ */
/* Forcing each path */

/* Force path if this CPU has it. */
static bool
force_path(int path)
{
	if (!roce_icrc_path_supported(path))
		return false;
	ck_assert_int_eq(roce_icrc_set_path(path), 0);
	ck_assert_int_eq(roce_icrc_get_path(), path);
	return true;
}

/* Every path this CPU offers, forced in turn; the default back after. */
#define FOR_EACH_PATH(path)						\
	for (int path = ROCE_ICRC_PATH_GENERIC; path <= ROCE_ICRC_PATH_NUM;	\
	     path++)							\
		if (path == ROCE_ICRC_PATH_NUM)				\
			roce_crc_init();				\
		else if (force_path(path))

START_TEST(icrc_matches_rte_net_crc_path)
{
	static uint8_t f[2200], g[2200];
	int frames = 0;

	FOR_EACH_PATH(path) {
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
				ck_assert_msg(fast == ref,
					      "%s: v6 %d vlan %d payload %u: %08x != %08x",
					      roce_icrc_path_name(path), v6, vlan,
					      payload, fast, ref);
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
	}
	ck_assert_int_gt(frames, 1000);
}
END_TEST

START_TEST(every_path_offered)
{
	int n = 0;

	ck_assert(roce_icrc_path_supported(ROCE_ICRC_PATH_GENERIC));
#if defined(RTE_ARCH_X86)
	{
		bool clmul = __builtin_cpu_supports("pclmul") &&
			     __builtin_cpu_supports("sse4.1");
		bool avx = clmul && __builtin_cpu_supports("avx");
		bool zmm = avx && __builtin_cpu_supports("avx512f") &&
			   __builtin_cpu_supports("avx512bw") &&
			   __builtin_cpu_supports("avx512vl") &&
			   __builtin_cpu_supports("vpclmulqdq");

		ck_assert_int_eq(roce_icrc_path_supported(ROCE_ICRC_PATH_FOLD_SSE), clmul);
		ck_assert_int_eq(roce_icrc_path_supported(ROCE_ICRC_PATH_MB4_SSE), clmul);
		ck_assert_int_eq(roce_icrc_path_supported(ROCE_ICRC_PATH_FOLD_AVX), avx);
		ck_assert_int_eq(roce_icrc_path_supported(ROCE_ICRC_PATH_MB4_AVX), avx);
		ck_assert_int_eq(roce_icrc_path_supported(ROCE_ICRC_PATH_AVX512), zmm);
		/* without the EAL roce_crc_init takes the widest there is */
		roce_crc_init();
		ck_assert_int_eq(roce_icrc_get_path(),
				 zmm ? ROCE_ICRC_PATH_AVX512 :
				 avx ? ROCE_ICRC_PATH_MB4_AVX :
				 clmul ? ROCE_ICRC_PATH_MB4_SSE :
				 ROCE_ICRC_PATH_GENERIC);
	}
#endif
	for (int path = ROCE_ICRC_PATH_GENERIC; path < ROCE_ICRC_PATH_NUM; path++) {
		if (roce_icrc_path_supported(path)) {
			fprintf(stderr, "ICRC path %s: tested\n",
				roce_icrc_path_name(path));
			n++;
		} else {
			enum roce_icrc_path was = roce_icrc_get_path();

			fprintf(stderr, "ICRC path %s: not on this CPU\n",
				roce_icrc_path_name(path));
			ck_assert_int_eq(roce_icrc_set_path(path), -ENOTSUP);
			ck_assert_int_eq(roce_icrc_get_path(), was);
		}
	}
	ck_assert_int_eq(roce_icrc_set_path(ROCE_ICRC_PATH_NUM), -ENOTSUP);
	ck_assert_int_ge(n, 2);
	roce_crc_init();
}
END_TEST

/* ------------------------------------------------------------------ */
/* The burst kernels on plain buffers: every length, random bursts */

#define ARENA_SLOT (MAX_LEN + 128)
#define BURST_MAX 64
static uint8_t arena[BURST_MAX][ARENA_SLOT];

/*
 * Burst buffer i: four 0xFF bytes (the LRH stand-in the kernels assume)
 * and len random bytes, at a random alignment; want[i] = zlib's CRC-32
 * of the whole, which is also crc32(0xffffffff, the len bytes).
 */
static void
stage_buffer(uint32_t i, uint32_t len, const uint8_t *bufs[], uint32_t lens[],
	     uint32_t want[])
{
	uint8_t *b = arena[i] + rnd() % 64;

	memset(b, 0xff, 4);
	fill_random(b + 4, len);
	bufs[i] = b;
	lens[i] = len + 4;
	want[i] = (uint32_t)crc32(0, b, len + 4);
	ck_assert_uint_eq(want[i], (uint32_t)crc32(0xffffffffu, b + 4, len));
	ck_assert_uint_eq(want[i], rte_net_crc_calc(b, len + 4, RTE_NET_CRC32_ETH));
}

static uint32_t
check_burst(const uint8_t *const bufs[], const uint32_t lens[], uint32_t n,
	    const uint32_t want[], int path)
{
	uint32_t got[BURST_MAX], bad = 0;

	memset(got, 0x5a, sizeof(got));
	roce_crc32_ff_burst(bufs, lens, n, got);
	for (uint32_t i = 0; i < n; i++)
		if (got[i] != want[i] && bad++ < 5)
			fprintf(stderr, "%s: burst of %u, buffer %u of %u bytes "
				"(+4): %08x != zlib %08x\n", roce_icrc_path_name(path),
				n, i, lens[i] - 4, got[i], want[i]);
	return bad;
}

START_TEST(burst_matches_zlib_every_length)
{
	const uint8_t *bufs[BURST_MAX];
	uint32_t lens[BURST_MAX], want[BURST_MAX], bad = 0, n = 0;

	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
	/* each length as a burst of 1..9 buffers of that length (a full
	 * group of four lanes, a group of three, a lone one, ...) at
	 * different alignments */
	for (uint32_t len = 0; len <= MAX_LEN; len++) {
		n = n % 9 + 1;
		for (uint32_t i = 0; i < n; i++)
			stage_buffer(i, len, bufs, lens, want);
		FOR_EACH_PATH(path)
			bad += check_burst(bufs, lens, n, want, path);
	}
	roce_crc_init();
	ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(burst_matches_zlib_random_bursts)
{
	const uint8_t *bufs[BURST_MAX];
	uint32_t lens[BURST_MAX], want[BURST_MAX], bad = 0, bursts = 0;

	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
	for (int round = 0; round < 6; round++) {
		for (uint32_t n = 1; n <= BURST_MAX; n++) {
			for (uint32_t i = 0; i < n; i++) {
				uint32_t r = rnd() % 8, len;

				/* mostly frame-sized, some anything, a few
				 * around the kernels' block and chunk sizes */
				if (r < 4)
					len = 40 + rnd() % 120;
				else if (r < 6)
					len = rnd() % (MAX_LEN + 1);
				else
					len = (rnd() % 8) * 64 + rnd() % 20 - 10 + 16;
				if (len > MAX_LEN)
					len = MAX_LEN;
				stage_buffer(i, len, bufs, lens, want);
			}
			FOR_EACH_PATH(path)
				bad += check_burst(bufs, lens, n, want, path);
			bursts++;
		}
	}
	roce_crc_init();
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(bursts, 6 * BURST_MAX);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The burst ICRC on frames */

static uint8_t frame_arena[BURST_MAX][2400];
static uint8_t copy_buf[2400];

/* A random frame of a random shape at a random alignment in slot i:
 * mostly the hot path's CAS and ACK, some SENDs of any size, a few with
 * IPv4 options (which no fold takes). */
static uint8_t *
stage_frame(uint32_t i, struct roce_pkt *p, uint32_t *len_out)
{
	uint8_t *f = frame_arena[i] + rnd() % 64;
	uint32_t r = rnd() % 16, len;
	bool v6 = rnd() % 4 == 0, vlan = rnd() % 4 == 0;
	bool opt = !v6 && rnd() % 8 == 0;

	if (r < 5)
		len = make_roce(f, v6, vlan, opt, ROCE_RC_COMPARE_SWAP,
				ROCE_ATOMIC_ETH_LEN);
	else if (r < 10)
		len = make_roce(f, v6, vlan, opt, ROCE_RC_ACKNOWLEDGE,
				ROCE_AETH_LEN);
	else if (r < 13)
		len = make_roce(f, v6, vlan, opt, ROCE_RC_SEND_ONLY,
				4 * (rnd() % 40));
	else
		len = make_roce(f, v6, vlan, opt, ROCE_RC_SEND_ONLY,
				4 * (rnd() % 376));
	ck_assert_int_eq(roce_parse(f, len, p), ROCE_OK);
	if (len_out)
		*len_out = len;
	return f;
}

START_TEST(icrc_burst_matches_rte_net_crc_path)
{
	uint8_t *frames[BURST_MAX];
	struct roce_pkt pk[BURST_MAX];
	const struct roce_pkt *pkts[BURST_MAX];
	uint32_t want[BURST_MAX], got[BURST_MAX], bursts = 0;
	bool ok[BURST_MAX];

	for (int round = 0; round < 4; round++) {
		for (uint32_t n = 1; n <= BURST_MAX; n++) {
			for (uint32_t i = 0; i < n; i++) {
				frames[i] = stage_frame(i, &pk[i], NULL);
				pkts[i] = &pk[i];
				want[i] = roce_icrc_compute_generic(frames[i], &pk[i]);
			}
			FOR_EACH_PATH(path) {
				memset(got, 0x5a, sizeof(got));
				roce_icrc_compute_burst(frames, pkts, n, got);
				for (uint32_t i = 0; i < n; i++) {
					ck_assert_msg(got[i] == want[i],
						      "%s: burst of %u, frame %u (%s, v%u, "
						      "%u bytes): %08x != %08x",
						      roce_icrc_path_name(path), n, i,
						      pk[i].oi->name, pk[i].ip_version,
						      pk[i].frame_len, got[i], want[i]);
					ck_assert_uint_eq(roce_icrc_compute(frames[i], &pk[i]),
							  want[i]);
				}
				/* random stored ICRCs: all bad, but for luck */
				ck_assert_uint_eq(roce_icrc_verify_burst(frames, pkts,
									 n, ok), 0);
			}
			bursts++;
		}
	}
	ck_assert_uint_eq(bursts, 4 * BURST_MAX);
}
END_TEST

/*
 * A burst mixing good and bad frames, staged as a worker does it: verify
 * all, rewrite the good CAS and ACK frames without signing, sign the
 * rewritten ones.  Every verdict is the frame's own; the good ones end
 * up byte for byte as the signing rewriters make them; the bad ones are
 * left exactly as they came, still failing the check.
 */
START_TEST(burst_mixed_good_and_bad)
{
	static uint8_t copy[BURST_MAX][2400];
	uint8_t *frames[BURST_MAX];
	struct roce_pkt pk[BURST_MAX], pk_ref[BURST_MAX];
	const struct roce_pkt *pkts[BURST_MAX];
	uint32_t len[BURST_MAX], cap = 2300, bursts = 0, bad_seen = 0;
	bool ok[BURST_MAX], corrupt[BURST_MAX], sign[BURST_MAX];

	FOR_EACH_PATH(path) {
		for (int round = 0; round < 3; round++) {
			for (uint32_t n = 1; n <= BURST_MAX; n++) {
				uint32_t good = 0, signed_, rewrote = 0;

				for (uint32_t i = 0; i < n; i++) {
					frames[i] = stage_frame(i, &pk[i], &len[i]);
					pkts[i] = &pk[i];
					roce_icrc_update(frames[i], &pk[i]);
					corrupt[i] = rnd() % 3 == 0;
					if (corrupt[i]) {
						/* a flipped bit anywhere the ICRC covers
						 * and does not mask, or in the ICRC */
						uint32_t at = pk[i].l4_off + 8 + 12 +
							rnd() % (pk[i].icrc_off + 4 -
								 pk[i].l4_off - 20);

						frames[i][at] ^= (uint8_t)(1u << (rnd() % 8));
					}
					good += !corrupt[i];
					memcpy(copy[i], frames[i], len[i]);
					pk_ref[i] = pk[i];
				}
				ck_assert_uint_eq(roce_icrc_verify_burst(frames, pkts, n, ok),
						  good);
				for (uint32_t i = 0; i < n; i++) {
					uint64_t v = 0x0102030405060708ull;
					uint32_t l = len[i];
					int rc = -1;

					ck_assert_msg(ok[i] == !corrupt[i],
						      "%s: burst of %u, frame %u: verdict %d",
						      roce_icrc_path_name(path), n, i, ok[i]);
					ck_assert_int_eq(ok[i], roce_icrc_verify(frames[i], &pk[i]));
					sign[i] = false;
					if (!ok[i]) {
						bad_seen++;
						continue;
					}
					/* the good CAS and ACK frames are rewritten */
					if (pk[i].opcode == ROCE_RC_COMPARE_SWAP) {
						rc = roce_atomic_to_write_defer(frames[i], &len[i],
										cap, &pk[i], &v);
						ck_assert_int_eq(roce_atomic_to_write(
							copy[i], &l, cap, &pk_ref[i], &v), 0);
					} else if (pk[i].opcode == ROCE_RC_ACKNOWLEDGE) {
						rc = roce_ack_to_atomic_ack_defer(frames[i], &len[i],
										  cap, &pk[i], v);
						ck_assert_int_eq(roce_ack_to_atomic_ack(
							copy[i], &l, cap, &pk_ref[i], v), 0);
					}
					if (rc == 0) {
						ck_assert_uint_eq(len[i], l);
						sign[i] = true;
						rewrote++;
					}
				}
				signed_ = roce_icrc_sign_burst(frames, pkts, n, sign);
				ck_assert_uint_eq(signed_, rewrote);
				for (uint32_t i = 0; i < n; i++) {
					/* as the signing rewriters leave it, or as it
					 * came; good ones check, bad ones do not */
					ck_assert_mem_eq(frames[i], copy[i], len[i]);
					ck_assert_int_eq(roce_icrc_verify(frames[i], &pk[i]),
							 !corrupt[i]);
				}
				ck_assert_uint_eq(roce_icrc_verify_burst(frames, pkts, n, ok),
						  good);
				bursts++;
			}
		}
	}
	/* an empty burst is nothing to do */
	ck_assert_uint_eq(roce_icrc_verify_burst(frames, pkts, 0, ok), 0);
	ck_assert_uint_eq(roce_icrc_sign_burst(frames, pkts, 0, sign), 0);
	ck_assert_uint_gt(bursts, 2 * 3 * BURST_MAX - 1);
	ck_assert_uint_gt(bad_seen, 1000);
}
END_TEST

/*
 * roce_icrc_patch (the ICRC moved by the change, from the stored one)
 * against a full recompute through rte_net_crc: random frames of every
 * shape, random 8-byte windows anywhere from the IP header to the ICRC
 * (masked fields included), random changes of one bit to all 64.  On
 * the paths that patch, a frame whose ICRC was wrong stays wrong by the
 * same error.
 */
START_TEST(patch_matches_full_recompute)
{
	uint32_t frames = 0, masked_windows = 0;

	FOR_EACH_PATH(path) {
		for (int i = 0; i < 20000; i++) {
			struct roce_pkt pk;
			uint8_t *f = stage_frame(i % BURST_MAX, &pk, NULL);
			uint32_t off = pk.l3_off +
				rnd() % (pk.icrc_off - 8 - pk.l3_off + 1);
			uint32_t err = rnd() % 4 == 0 ? rnd() | 1 : 0, want, got;
			uint64_t delta, w;

			switch (rnd() % 3) {
			case 0: delta = 1ull << (rnd() % 64); break;
			case 1: delta = (uint64_t)(rnd() & 0xff) << (8 * (rnd() % 8)); break;
			default: delta = ((uint64_t)rnd() << 32) ^ rnd() ^
					 ((uint64_t)rnd() << 17);
			}
			masked_windows += off < pk.bth_off + 5u;
			roce_icrc_update(f, &pk);
			if (err) {
				/* a wrong ICRC on arrival */
				uint32_t v;

				memcpy(&v, f + pk.icrc_off, 4);
				v ^= err;
				memcpy(f + pk.icrc_off, &v, 4);
			}
			memcpy(&w, f + off, 8);
			w ^= delta;
			memcpy(f + off, &w, 8);
			ck_assert_int_eq(roce_icrc_patch(f, &pk, off, delta), 0);
			want = roce_icrc_compute_generic(f, &pk);
			memcpy(&got, f + pk.icrc_off, 4);
			got = rte_le_to_cpu_32(got);
			if (path == ROCE_ICRC_PATH_GENERIC || !err) {
				/* rte_net_crc forced: a plain re-sign */
				ck_assert_msg(got == want, "%s: %s v%u len %u off %u "
					      "delta %016llx: %08x != %08x",
					      roce_icrc_path_name(path), pk.oi->name,
					      pk.ip_version, pk.frame_len, off,
					      (unsigned long long)delta, got, want);
			} else {
				ck_assert_uint_eq(got, want ^ err);
				ck_assert(!roce_icrc_verify(f, &pk));
			}
			frames++;
		}
	}
	{
		/* windows outside [l3_off, icrc_off) are refused, untouched */
		struct roce_pkt pk;
		uint32_t len;
		uint8_t *f = stage_frame(0, &pk, &len);

		memcpy(copy_buf, f, len);
		ck_assert_int_eq(roce_icrc_patch(f, &pk, pk.l3_off - 1, 1), -EINVAL);
		ck_assert_int_eq(roce_icrc_patch(f, &pk, pk.icrc_off - 7, 1), -EINVAL);
		ck_assert_mem_eq(f, copy_buf, len);
	}
	ck_assert_uint_gt(frames, 20000);
	ck_assert_uint_gt(masked_windows, 100);
}
END_TEST

/*
 * roce_resign_headers (remapping's re-sign) against a full recompute:
 * random frames of every shape the patch takes, random changes to the
 * bytes of its four header words (addresses, UDP header, BTH and AETH,
 * masked bytes included, several words at once or none), a UDP checksum
 * in some; where patching is refused (IPv6, no 16 bytes after the BTH,
 * the generic path) nothing is asked of it.  A frame whose ICRC was
 * wrong stays wrong by the same error.
 */
START_TEST(resign_headers_matches_full_recompute)
{
	uint32_t frames = 0, refused = 0;

	FOR_EACH_PATH(path) {
		for (int i = 0; i < 20000; i++) {
			struct roce_pkt pk;
			uint8_t *f = stage_frame(i % BURST_MAX, &pk, NULL);
			const uint32_t off[4] = { pk.l3_off + 12u, pk.l4_off, pk.bth_off,
						  pk.bth_off + 8u };
			uint32_t err = rnd() % 4 == 0 ? rnd() | 1 : 0, want, got;
			struct roce_hdr_words before;

			if (!roce_hdr_words_patchable(&pk)) {
				refused++;
				continue;
			}
			if (rnd() % 8 == 0)
				roce_st16(f + pk.l4_off + 6, (uint16_t)(rnd() | 1));
			roce_resign(f, &pk);
			if (err) {
				uint32_t v;

				memcpy(&v, f + pk.icrc_off, 4);
				v ^= err;
				memcpy(f + pk.icrc_off, &v, 4);
			}
			roce_hdr_words_take(f, &pk, &before);
			for (int k = 0; k < 4; k++) {
				uint64_t w;

				if (rnd() % 2)
					continue;
				memcpy(&w, f + off[k], 8);
				w ^= ((uint64_t)rnd() << 32) ^ rnd();
				memcpy(f + off[k], &w, 8);
			}
			roce_resign_headers(f, &pk, &before);
			want = roce_icrc_compute_generic(f, &pk);
			memcpy(&got, f + pk.icrc_off, 4);
			got = rte_le_to_cpu_32(got);
			ck_assert_uint_eq(got, want ^ err);
			if (roce_ld16(f + pk.l4_off + 6) != 0 && !err) {
				/* the UDP checksum, redone over the new ICRC */
				uint8_t *g = copy_buf;

				memcpy(g, f, pk.frame_len);
				roce_resign(g, &pk);
				ck_assert_mem_eq(g, f, pk.frame_len);
			}
			frames++;
		}
	}
	ck_assert_uint_gt(frames, 10000);
	ck_assert_uint_gt(refused, 0);
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
	tcase_add_test(tc, every_path_offered);
	tcase_add_test(tc, burst_matches_zlib_every_length);
	tcase_add_test(tc, burst_matches_zlib_random_bursts);
	tcase_add_test(tc, icrc_burst_matches_rte_net_crc_path);
	tcase_add_test(tc, burst_mixed_good_and_bad);
	tcase_add_test(tc, patch_matches_full_recompute);
	tcase_add_test(tc, resign_headers_matches_full_recompute);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
