/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_icrc.c — RoCEv2 invariant CRC and the IPv4 header checksum.
 *
 * Why it exists: every frame swordd changes must carry a new ICRC that a
 * real RNIC accepts, and every frame it rewrites must have had a valid one
 * on arrival (a broken packet is never re-signed).  The ICRC is a plain
 * CRC-32 (the Ethernet one, as rte_net_crc computes it) over a masked copy
 * of the frame.  Instead of copying, the masked bytes and the 8 bytes in
 * front of the IP header (the tail of the Ethernet header, standing in for
 * the InfiniBand LRH) are overwritten in place for the duration of one
 * rte_net_crc_calc call and then restored.
 */
/* rte_vect_{get,set}_max_simd_bitwidth are still experimental in 22.11. */
#define ALLOW_EXPERIMENTAL_API 1

#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "roce.h"

#define ICRC_LRH_LEN 8 /* the 8 bytes of 0xFF that stand in for the LRH */

/*
 * The masked fields, as OR-masks over 8-byte words (byte k of a word is
 * bits 8k..8k+7 of its little-endian value):
 *   IP word 0   v4: TOS (byte 1)   v6: traffic class, flow label (bytes
 *               0 low nibble, 1-3), hop limit (byte 7)
 *   IP word 1   v4: TTL (byte 0), header checksum (bytes 2-3)
 *   L4 word     at UDP+6: UDP checksum (bytes 0-1), BTH byte 4 (byte 6)
 */
#define MASK_IP4_W0 0x000000000000ff00ull
#define MASK_IP4_W1 0x00000000ffff00ffull
#define MASK_IP6_W0 0xff000000ffffff0full
#define MASK_L4     0x00ff00000000ffffull

static inline uint64_t
mask_word(uint8_t *at, uint64_t mask_le)
{
	uint64_t saved, v;

	memcpy(&saved, at, sizeof(saved));
	v = saved | rte_cpu_to_le_64(mask_le);
	memcpy(at, &v, sizeof(v));
	return saved;
}

static inline void
restore_word(uint8_t *at, uint64_t saved)
{
	memcpy(at, &saved, sizeof(saved));
}

static uint32_t
icrc_calc_in_place(uint8_t *f, const struct roce_pkt *p)
{
	uint8_t *ip = f + p->l3_off;
	uint8_t *start = ip - ICRC_LRH_LEN;
	uint8_t *l4w = f + p->l4_off + 6;
	uint64_t s_lrh, s_ip0, s_ip1 = 0, s_l4;
	uint32_t crc;

	/* l3_off >= 14, and UDP + BTH follow the IP header, so every word
	 * below lies inside the parsed frame. */
	s_lrh = mask_word(start, UINT64_MAX);
	s_l4 = mask_word(l4w, MASK_L4);
	if (p->ip_version == 4) {
		s_ip0 = mask_word(ip, MASK_IP4_W0);
		s_ip1 = mask_word(ip + 8, MASK_IP4_W1);
	} else {
		s_ip0 = mask_word(ip, MASK_IP6_W0);
	}

	crc = rte_net_crc_calc(start, p->icrc_off - (p->l3_off - ICRC_LRH_LEN),
			       RTE_NET_CRC32_ETH);

	if (p->ip_version == 4)
		restore_word(ip + 8, s_ip1);
	restore_word(ip, s_ip0);
	restore_word(l4w, s_l4);
	restore_word(start, s_lrh);
	return crc;
}

/*
 * Short frames (atomics, ACKs, READ requests: the hot path) are instead
 * copied, masked 16 bytes at a time, into a stack buffer for the common
 * layouts (IPv4 without options, IPv6).  That avoids the restores, and
 * each 16-byte store is read back by exactly one 16-byte load of the CRC
 * code, so no store-forwarding stall (the in-place masking costs several).
 */
#define ICRC_COPY_MAX 128

/* OR-masks over the pseudo-frame from the LRH stand-in on: [0] IPv4 with
 * a 20-byte header, [1] IPv6. */
static uint8_t copy_mask[2][ICRC_COPY_MAX] __rte_aligned(16);

RTE_INIT(roce_icrc_masks_init)
{
	for (int v6 = 0; v6 < 2; v6++) {
		uint8_t *m = copy_mask[v6];
		uint64_t w[2];
		uint32_t l4 = ICRC_LRH_LEN + (v6 ? 40 : 20);
		uint64_t l4mask = rte_cpu_to_le_64(MASK_L4);

		memset(m, 0xff, ICRC_LRH_LEN);
		w[0] = rte_cpu_to_le_64(v6 ? MASK_IP6_W0 : MASK_IP4_W0);
		w[1] = rte_cpu_to_le_64(v6 ? 0 : MASK_IP4_W1);
		memcpy(m + ICRC_LRH_LEN, w, sizeof(w));
		memcpy(m + l4 + 6, &l4mask, sizeof(l4mask));
	}
}

static inline uint32_t
icrc_calc(uint8_t *f, const struct roce_pkt *p)
{
#ifdef RTE_ARCH_X86
	uint32_t len = p->icrc_off - (p->l3_off - ICRC_LRH_LEN);

	if (likely(len <= ICRC_COPY_MAX &&
		   (p->ip_version == 6 || p->l4_off - p->l3_off == 20))) {
		uint8_t buf[ICRC_COPY_MAX] __rte_aligned(16);
		const uint8_t *src = f + p->l3_off - ICRC_LRH_LEN;
		const uint8_t *m = copy_mask[p->ip_version == 6];
		uint32_t i;

		/* len >= 8 + 20 + 8 + 16: at least three blocks */
		for (i = 0; i + 16 <= len; i += 16)
			_mm_store_si128((__m128i *)(buf + i),
				_mm_or_si128(_mm_loadu_si128((const __m128i *)(src + i)),
					     _mm_load_si128((const __m128i *)(m + i))));
		if (i < len) {
			/* the last 16 bytes, overlapping the previous block */
			i = len - 16;
			_mm_storeu_si128((__m128i *)(buf + i),
				_mm_or_si128(_mm_loadu_si128((const __m128i *)(src + i)),
					     _mm_loadu_si128((const __m128i *)(m + i))));
		}
		return rte_net_crc_calc(buf, len, RTE_NET_CRC32_ETH);
	}
#endif
	return icrc_calc_in_place(f, p);
}

uint32_t
roce_icrc_compute(uint8_t *frame, const struct roce_pkt *p)
{
	return icrc_calc(frame, p);
}

static inline uint32_t
icrc_stored(const uint8_t *f, const struct roce_pkt *p)
{
	uint32_t v;

	memcpy(&v, f + p->icrc_off, sizeof(v));
	return rte_le_to_cpu_32(v);
}

bool
roce_icrc_verify(uint8_t *frame, const struct roce_pkt *p)
{
	return icrc_calc(frame, p) == icrc_stored(frame, p);
}

void
roce_icrc_update(uint8_t *frame, const struct roce_pkt *p)
{
	uint32_t v = rte_cpu_to_le_32(icrc_calc(frame, p));

	memcpy(frame + p->icrc_off, &v, sizeof(v));
}

/*
 * rte_net_crc picks its implementation from the CPU flags *and* the EAL's
 * max SIMD bitwidth, which is 0 until rte_eal_init() runs; asked before
 * that, it settles for the byte-table version.  So when the EAL is not up
 * (tools, tests without ports) allow 128-bit vectors first; rte_eal_init()
 * resets the setting anyway.  Asking for AVX512 falls back to SSE4.2 +
 * PCLMULQDQ when the CPU or --force-max-simd-bitwidth does not allow it.
 */
void
roce_crc_init(void)
{
	if (rte_vect_get_max_simd_bitwidth() == 0)
		rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_128);
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
}

void
roce_ip_cksum_update(uint8_t *frame, const struct roce_pkt *p)
{
	struct rte_ipv4_hdr *ip;

	if (p->ip_version != 4)
		return;
	ip = (struct rte_ipv4_hdr *)(frame + p->l3_off);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}
