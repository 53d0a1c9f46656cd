/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_icrc_impl.h — what roce_icrc.c (one frame at a time) and
 * roce_icrc_burst.c (many frames at once) share: the carry-less-multiply
 * constants, the OR-mask rows of the ICRC's variant fields, and the
 * folding steps, as inline functions each file compiles for the
 * instruction sets it dispatches to.
 *
 * Why it exists: the burst kernels are the single-buffer fold of
 * roce_icrc.c run on several frames at once; keeping one copy of its
 * arithmetic (and of its explanation, in roce_icrc.c) means the two cannot
 * drift apart, and the tests hold every kernel against zlib and
 * rte_net_crc anyway.  Only lib/roce includes it.
 */
#ifndef SWORD_ROCE_ICRC_IMPL_H
#define SWORD_ROCE_ICRC_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>

#include "roce.h"

#define ICRC_LRH_LEN 8 /* the 8 bytes of 0xFF that stand in for the LRH */

/* lib/roce's own: hidden, so that its PIC code reaches them directly
 * rather than through the GOT (a load more per constant per fold) */
#define ICRC_HIDDEN __attribute__((visibility("hidden")))

/* The pseudo-frame's OR-mask rows (see roce_icrc.c): [0] IPv4 with a
 * 20-byte header, [1] IPv6, [2] no mask at all (the tests' plain CRC).
 * Every masked byte lies in the first ICRC_MASK_SPAN bytes. */
#define ICRC_ROW_V4 0
#define ICRC_ROW_V6 1
#define ICRC_ROW_NONE 2
#define ICRC_ROWS 3
#define ICRC_MASK_SPAN 64
#define ICRC_MASK_ROW 160 /* covers every 16-byte load of the folds */
extern ICRC_HIDDEN uint8_t roce_icrc_mask[ICRC_ROWS][ICRC_MASK_ROW];
/* The same rows as the 512-bit kernel loads them: from the pseudo-frame's
 * fifth byte (the folds start there, see icrc_fold_body), with 64 zero
 * bytes before, so a 64-byte load may start up to 63 bytes early. */
#define ICRC_MASK64_PRE 64
#define ICRC_MASK64_ROW (ICRC_MASK64_PRE + 128)
extern ICRC_HIDDEN uint8_t roce_icrc_mask64[ICRC_ROWS][ICRC_MASK64_ROW];
/* Both by roce_pkt.ip_version & 7: one load finds a frame's row.  4 and 6
 * are the IP versions; every other index is the row without a mask (the
 * tests' plain CRC passes version 0). */
extern ICRC_HIDDEN const uint8_t *roce_icrc_mask_ver[8];
extern ICRC_HIDDEN const uint8_t *roce_icrc_mask64_ver[8];

/*
 * The burst kernels take parsed frames as the API does and write
 * icrc[i], the ICRC of frames[i], for every i < n.  They fold the
 * pseudo-frame from the LRH stand-in (frame + l3_off - 8) to the ICRC
 * with the mask of roce_icrc_mask_ver[ip_version], so a frame of a layout
 * the masks do not describe (IPv4 with options) gets a wrong value, which
 * the caller replaces (icrc_odd()).  They do not read the pseudo-frame's
 * first four bytes: those are 0xFF, which turn the initial register of
 * 0xffffffff into 0, so every fold starts at byte 4 with a register of 0.
 */
typedef void icrc_kernel_fn(uint8_t *const frames[],
			    const struct roce_pkt *const pkts[], uint32_t n,
			    uint32_t icrc[]);

/* A layout the folds' masks do not describe: IPv4 with options. */
static inline bool
icrc_odd(const struct roce_pkt *p)
{
	return p->ip_version == 4 && p->l4_off - p->l3_off != 20;
}

/* Where a kernel's fold of frame f starts (byte 4 of the pseudo-frame),
 * and how many bytes it folds (>= 44 for any RoCEv2 frame, >= 16 for
 * the tests' plain CRC). */
static __rte_always_inline const uint8_t *
icrc_fold_start(const uint8_t *f, const struct roce_pkt *p)
{
	return f + p->l3_off - ICRC_LRH_LEN + 4;
}

static __rte_always_inline uint32_t
icrc_fold_len(const struct roce_pkt *p)
{
	return (uint32_t)p->icrc_off - p->l3_off + ICRC_LRH_LEN - 4;
}

/* The ICRC as stored on the wire, read little-endian (roce.h). */
static inline uint32_t
roce_icrc_stored(const uint8_t *f, const struct roce_pkt *p)
{
	uint32_t v;

	memcpy(&v, f + p->icrc_off, sizeof(v));
	return rte_le_to_cpu_32(v);
}

/* Recompute a UDP checksum if the sender used one (RoCEv2 senders
 * normally leave it 0, which IPv4 allows; it is masked out of the ICRC,
 * but covers it, so it is redone after every new ICRC). */
void roce_udp_cksum_redo(uint8_t *f, const struct roce_pkt *p);

static inline void
roce_udp_cksum_fix(uint8_t *f, const struct roce_pkt *p)
{
	uint16_t cs;

	memcpy(&cs, f + p->l4_off + 6, sizeof(cs));
	if (unlikely(cs != 0))
		roce_udp_cksum_redo(f, p);
}

#ifdef RTE_ARCH_X86
#include <rte_vect.h>

#define CLMUL_FN __attribute__((target("sse4.1,pclmul")))

/* fold: [lo] x^160 mod P, [hi] x^96 mod P; tail: [lo] x^96, [hi] x^64;
 * barrett: [lo] mu without its x^32 term, [hi] P (see roce_icrc.c) */
extern ICRC_HIDDEN __m128i roce_crc_k_fold, roce_crc_k_tail, roce_crc_k_barrett;
/* fold by 64 bytes: [lo] x^544, [hi] x^480; the 512-bit kernel's last
 * step multiplies its four lanes by 3, 2, 1 blocks (k_dist[0..2]) */
extern ICRC_HIDDEN __m128i roce_crc_k_fold4, roce_crc_k_dist[3];
extern ICRC_HIDDEN const uint8_t roce_crc_shl_tab[32];

/* Append block x to accumulator acc (k = roce_crc_k_fold). */
static __rte_always_inline CLMUL_FN __m128i
crc_fold16(__m128i acc, __m128i k, __m128i x)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(acc, k, 0x00),
					   _mm_clmulepi64_si128(acc, k, 0x11)),
			     x);
}

/* The CRC register for an accumulator at the end of the message. */
static __rte_always_inline CLMUL_FN uint32_t
crc_reduce(__m128i acc)
{
	__m128i k = roce_crc_k_tail, t;

	/* A * x^32 = L * x^96 + H * x^32: 96 bits (offset 95) */
	acc = _mm_xor_si128(_mm_clmulepi64_si128(acc, k, 0x00),
			    _mm_srli_si128(acc, 8));
	/* its top 32 bits (low dword) times x^64 mod P: 64 bits in
	 * dwords 1..2; dword 0 is left over and cleared below */
	acc = _mm_xor_si128(_mm_clmulepi64_si128(_mm_slli_si128(acc, 4), k,
						 0x10), acc);
	/* Barrett: q = T_hi * mu div x^32, CRC = T_lo + (q * P mod x^32) */
	k = roce_crc_k_barrett;
	acc = _mm_blend_epi16(acc, _mm_setzero_si128(), 0x03);
	t = _mm_xor_si128(_mm_clmulepi64_si128(acc, k, 0x00), acc);
	t = _mm_xor_si128(_mm_clmulepi64_si128(t, k, 0x10), acc);
	return (uint32_t)_mm_extract_epi32(t, 2);
}

/* 16 bytes at s moved up by pad bytes, zeros shifted in (the first block
 * of a message padded in front to whole blocks). */
static __rte_always_inline CLMUL_FN __m128i
crc_load_pad(const uint8_t *s, uint32_t pad)
{
	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)s),
				_mm_loadu_si128((const __m128i *)
						(roce_crc_shl_tab + 16 - pad)));
}

/* The burst kernels (roce_icrc_burst.c), and the single-buffer fold run
 * over a burst one frame after the other (roce_icrc.c). */
icrc_kernel_fn roce_icrc_mb4_sse, roce_icrc_mb4_avx, roce_icrc_mb_avx512,
	roce_icrc_fold_sse_burst, roce_icrc_fold_avx_burst;
#endif /* RTE_ARCH_X86 */

#endif /* SWORD_ROCE_ICRC_IMPL_H */
