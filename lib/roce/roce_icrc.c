/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_icrc.c — RoCEv2 invariant CRC and the IPv4 header checksum.
 *
 * Why it exists: every frame swordd changes must carry a new ICRC that a
 * real RNIC accepts, and every frame it rewrites must have had a valid one
 * on arrival (a broken packet is never re-signed).  The ICRC is a plain
 * CRC-32 (the Ethernet one, as rte_net_crc computes it, = zlib crc32) over
 * a masked copy of the frame: 8 bytes of 0xFF standing in for the
 * InfiniBand LRH, then the IP datagram up to the ICRC with the variant
 * fields set to ones.
 *
 * Why not just rte_net_crc_calc: the CAS->WRITE path computes two ICRCs
 * per packet (verify, then re-sign) and they dominated its cost.
 * Measured with callgrind on the 86-byte RC CAS of rcuckoo-connectx.pcap
 * (scripts/bench-roce.sh), per packet: rte_net_crc_calc 99 instructions,
 * plus ~80 to build the masked copy it needs (178 per roce_icrc_verify);
 * verify + CAS->WRITE + re-sign 489.  The masks are constant per header
 * layout, so on x86 with PCLMULQDQ the CRC below ORs them into each
 * 16-byte block as it folds it (no copy, no call through a function
 * pointer): 71 instructions for the fold, 105 per roce_icrc_verify, and
 * verify + CAS->WRITE + re-sign 345; in lib/serializer's bench 866 instead
 * of 1010 per CAS request and 667 instead of 789 per ACK.  It is the
 * standard carry-less-multiply folding of a reflected CRC; its constants
 * are derived from the polynomial at start-up, and tests/unit/test_crc.c
 * holds it against zlib's crc32 and rte_net_crc_calc on every length
 * 0..2048 with random initial states, and its ICRC against the
 * rte_net_crc path on frames of every payload length.  Everything else
 * (no PCLMULQDQ, IPv4 options, other architectures) still goes through
 * rte_net_crc.
 *
 * Bursts of frames have their own kernels (roce_icrc_burst.c).  Which
 * implementation runs, for single frames and bursts, is chosen at start-up
 * from the CPU (roce_crc_init) and can be forced (roce_icrc_set_path, for
 * the tests and benchmarks).
 *
 * A change of a few bytes that keeps the length (Clover's va steering, the
 * serializer's AckReq bit) need not fold the frame again: roce_icrc_patch
 * moves the stored ICRC by the change's own CRC (linearity).  After an
 * 8-byte va change (roce_bench resign against patch): 116 against 99
 * instructions with the change itself, 16.7 against 6.8 ns, most of it
 * because the fold's loads wait for the change's store and the patch reads
 * none of the frame.  CAS->WRITE changes most of its 72 bytes and its
 * length: a fold stays cheaper there.
 */
/* rte_vect_{get,set}_max_simd_bitwidth are still experimental in 22.11. */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "roce.h"
#include "roce_icrc_impl.h"
#include "roce_internal.h"

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
 * (Only used where the folding CRC below is not available.)
 */
#define ICRC_COPY_MAX 128

/* OR-masks over the pseudo-frame from the LRH stand-in on (rows in
 * roce_icrc_impl.h; IPv6: 8 + 40 + 6 + 8 = 62 bytes masked at most). */
/* the folding CRC ORs a mask into every block of pseudo-frames up to
 * ICRC_UNROLL_MAX bytes (no test of where the masked bytes end) */
#define ICRC_UNROLL_MAX (8 * 16 + 4)
uint8_t roce_icrc_mask[ICRC_ROWS][ICRC_MASK_ROW] __rte_aligned(16);
uint8_t roce_icrc_mask64[ICRC_ROWS][ICRC_MASK64_ROW] __rte_aligned(64);
const uint8_t *roce_icrc_mask_ver[8], *roce_icrc_mask64_ver[8];
_Static_assert(ICRC_MASK_ROW >= ICRC_UNROLL_MAX + 16 &&
	       ICRC_MASK_ROW >= ICRC_COPY_MAX && ICRC_MASK_ROW % 16 == 0,
	       "mask rows cover every load");
_Static_assert(ICRC_MASK64_ROW - ICRC_MASK64_PRE >= 64 + ICRC_MASK_SPAN,
	       "a 64-byte load that starts in the masked span stays in its row");

RTE_INIT(roce_icrc_masks_init)
{
	for (int v6 = 0; v6 < 2; v6++) {
		uint8_t *m = roce_icrc_mask[v6];
		uint64_t w[2];
		uint32_t l4 = ICRC_LRH_LEN + (v6 ? 40 : 20);
		uint64_t l4mask = rte_cpu_to_le_64(MASK_L4);

		memset(m, 0xff, ICRC_LRH_LEN);
		w[0] = rte_cpu_to_le_64(v6 ? MASK_IP6_W0 : MASK_IP4_W0);
		w[1] = rte_cpu_to_le_64(v6 ? 0 : MASK_IP4_W1);
		memcpy(m + ICRC_LRH_LEN, w, sizeof(w));
		memcpy(m + l4 + 6, &l4mask, sizeof(l4mask));
		/* the 64-byte rows start at the fold's start, byte 4 */
		memcpy(roce_icrc_mask64[v6] + ICRC_MASK64_PRE, m + 4,
		       ICRC_MASK_SPAN - 4);
	}
	/* row ICRC_ROW_NONE stays all zeros */
	for (int v = 0; v < 8; v++) {
		int row = v == 4 ? ICRC_ROW_V4 : v == 6 ? ICRC_ROW_V6 :
						      ICRC_ROW_NONE;

		roce_icrc_mask_ver[v] = roce_icrc_mask[row];
		roce_icrc_mask64_ver[v] = roce_icrc_mask64[row];
	}
}

/* ---------------------------------------------------------------------- */
/*
 * CRC-32 by carry-less multiplication (x86 PCLMULQDQ), for the ICRC.
 *
 * The CRC is reflected: bit j of a 16-byte block loaded little-endian is
 * the j-th message bit, and message bits that come earlier are higher
 * powers of x.  A 128-bit accumulator A stands for the part of the
 * message read so far, reduced: A(x) * x^(8 * bytes still to come) is
 * congruent to it mod P.  Its low quadword L holds the powers 127..64, the
 * high one H the powers 63..0, so appending a block B is
 *   A' = L * (x^192 mod P) + H * (x^128 mod P) + B,
 * two carry-less multiplies.  The constants are stored bit-reflected in 33
 * bits (x^e at bit 32 - e), which puts the 95-degree product at the right
 * offset if the constant is x^(n - 32) mod P instead of x^n mod P.  At the
 * end A * x^32 mod P is the CRC register: fold 128 -> 96 -> 64 bits the
 * same way, then a Barrett reduction with mu = x^64 div P.
 *
 * A message of any length >= 16 is processed as whole blocks by
 * prepending zero bytes: with the initial register already XORed into the
 * first four message bytes, leading zeros do not change a CRC.  So the
 * first block is the first 16 bytes shifted up by the pad (zeros shifted
 * in), and block k >= 1 is loaded at 16k - pad: no load leaves the
 * message, and there is no partial block at the end to treat specially.
 */
#ifdef RTE_ARCH_X86
#include <rte_cpuflags.h>

#define CRC32_POLY 0x04c11db7u /* normal form, x^32 implied */

static bool crc_clmul_ok, crc_avx_ok, crc_avx512_ok;
__m128i roce_crc_k_fold, roce_crc_k_tail, roce_crc_k_barrett;
__m128i roce_crc_k_fold4, roce_crc_k_dist[3];
/* pshufb controls: loaded at 16 - pad, roce_crc_shl_tab moves each byte
 * up by pad (zeros in) and crc_shr_tab moves the bytes that fall off the
 * top down to the bottom of the next block */
const uint8_t roce_crc_shl_tab[32] __rte_aligned(16) = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};
static const uint8_t crc_shr_tab[32] __rte_aligned(16) = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

static uint32_t
reflect32(uint32_t v)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i++)
		r |= ((v >> i) & 1u) << (31 - i);
	return r;
}

/* x^n mod P in normal form (bit i = x^i) */
static uint32_t
xpow_mod(unsigned int n)
{
	uint32_t v = 1;

	while (n--)
		v = (v << 1) ^ ((v & 0x80000000u) ? CRC32_POLY : 0);
	return v;
}

/* a polynomial of degree <= 31 in the 33-bit reflected layout */
static uint64_t
k33(uint32_t normal)
{
	return (uint64_t)reflect32(normal) << 1;
}

/* v * x^n mod P, normal form */
static uint32_t
xmul_pow(uint32_t v, unsigned int n)
{
	while (n--)
		v = (v << 1) ^ ((v & 0x80000000u) ? CRC32_POLY : 0);
	return v;
}

/* roce_icrc_patch: [q] moves an accumulator on by q >= 1 blocks, for
 * changes up to 16 KB before the end of a pseudo-frame */
#define PATCH_SKIP_MAX 1024
static __m128i crc_k_skip[PATCH_SKIP_MAX];

/* the pair that moves an accumulator on by `blocks` 16-byte blocks */
static __m128i
k_fold_by(unsigned int blocks)
{
	return _mm_set_epi64x((long long)k33(xpow_mod(128 * blocks - 32)),
			      (long long)k33(xpow_mod(128 * blocks + 32)));
}

RTE_INIT(roce_crc_clmul_init)
{
	__extension__ unsigned __int128 r = (unsigned __int128)1 << 64;
	__extension__ unsigned __int128 pf = ((unsigned __int128)1 << 32) |
					     CRC32_POLY;
	uint64_t mu = 0;

	/* mu = x^64 div P, by long division */
	for (int i = 32; i >= 0; i--)
		if ((uint64_t)(r >> (32 + i)) & 1) {
			mu |= 1ull << i;
			r ^= pf << i;
		}
	roce_crc_k_fold = k_fold_by(1);
	roce_crc_k_fold4 = k_fold_by(4);
	{
		uint32_t lo = xpow_mod(128 + 32), hi = xpow_mod(128 - 32);

		for (unsigned int q = 1; q < PATCH_SKIP_MAX; q++) {
			crc_k_skip[q] = _mm_set_epi64x((long long)k33(hi),
						       (long long)k33(lo));
			lo = xmul_pow(lo, 128);
			hi = xmul_pow(hi, 128);
		}
	}
	for (unsigned int d = 0; d < 3; d++)
		roce_crc_k_dist[d] = k_fold_by(3 - d);
	roce_crc_k_tail = _mm_set_epi64x((long long)k33(xpow_mod(64)),
					 (long long)k33(xpow_mod(96)));
	roce_crc_k_barrett = _mm_set_epi64x((long long)(k33(CRC32_POLY) | 1),
					    (long long)k33((uint32_t)mu));
	crc_clmul_ok = rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
	/* (in a constructor, GCC wants __builtin_cpu_init first).  Unlike
	 * rte_cpu_get_flag_enabled, __builtin_cpu_supports also asks the OS
	 * (XCR0) whether it saves the AVX and AVX-512 registers. */
	__builtin_cpu_init();
	crc_avx_ok = crc_clmul_ok && __builtin_cpu_supports("avx");
	crc_avx512_ok = crc_avx_ok && __builtin_cpu_supports("avx512f") &&
			__builtin_cpu_supports("avx512bw") &&
			__builtin_cpu_supports("avx512vl") &&
			__builtin_cpu_supports("vpclmulqdq");
}

/* The CRC register after len >= 16 bytes from register value reg (the
 * complement of a zlib / rte_net_crc result). */
static __rte_noinline CLMUL_FN uint32_t
crc_fold_plain(const uint8_t *s, uint32_t len, uint32_t reg)
{
	uint32_t pad = (0u - len) & 15, pos = 16 - pad;
	__m128i k = roce_crc_k_fold, acc, r;

	/* the register goes into the first four message bytes; with a pad
	 * above 12 some of them land in the second block */
	r = _mm_cvtsi32_si128((int)reg);
	acc = _mm_xor_si128(crc_load_pad(s, pad),
			    _mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)
							(roce_crc_shl_tab + 16 - pad))));
	if (pos < len) {
		r = _mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)
							(crc_shr_tab + 16 - pad)));
		acc = crc_fold16(acc, k, _mm_xor_si128(
			_mm_loadu_si128((const __m128i *)(s + pos)), r));
		for (pos += 16; pos < len; pos += 16)
			acc = crc_fold16(acc, k, _mm_loadu_si128(
						 (const __m128i *)(s + pos)));
	}
	return crc_reduce(acc);
}

/*
 * The CRC register of the pseudo-frame at s (len >= 20 bytes, the first 8
 * the LRH stand-in) with the OR-mask m.  The initial register 0xffffffff
 * turns the first four 0xff bytes into zeros, which add nothing: so start
 * four bytes in with register 0, and no register has to be injected.
 */
static __rte_always_inline CLMUL_FN uint32_t
icrc_fold_body(const uint8_t *s, uint32_t len, const uint8_t *m)
{
	uint32_t pad, pos, masked;
	const uint8_t *e, *me;
	__m128i k = roce_crc_k_fold, acc;

	s += 4;
	m += 4;
	len -= 4;
	pad = (0u - len) & 15;
	acc = _mm_shuffle_epi8(_mm_or_si128(_mm_loadu_si128((const __m128i *)s),
					    _mm_loadu_si128((const __m128i *)m)),
			       _mm_loadu_si128((const __m128i *)
					       (roce_crc_shl_tab + 16 - pad)));
	if (likely(len <= ICRC_UNROLL_MAX - 4)) {
		/* blocks 1.. end at the end of the message: counted from
		 * there, a fall-through switch folds them in order */
		e = s + len;
		me = m + len;
#define ICRC_BLOCK(j) \
		acc = crc_fold16(acc, k, _mm_or_si128( \
			_mm_loadu_si128((const __m128i *)(e - 16 * (j))), \
			_mm_loadu_si128((const __m128i *)(me - 16 * (j)))))
		switch ((len + 15) >> 4) {
		case 8: ICRC_BLOCK(7); /* fall through */
		case 7: ICRC_BLOCK(6); /* fall through */
		case 6: ICRC_BLOCK(5); /* fall through */
		case 5: ICRC_BLOCK(4); /* fall through */
		case 4: ICRC_BLOCK(3); /* fall through */
		case 3: ICRC_BLOCK(2); /* fall through */
		case 2: ICRC_BLOCK(1); /* fall through */
		default: break;
		}
#undef ICRC_BLOCK
		return crc_reduce(acc);
	}
	masked = (uint32_t)ICRC_MASK_SPAN - 4;
	for (pos = 16 - pad; pos < masked; pos += 16)
		acc = crc_fold16(acc, k, _mm_or_si128(
			_mm_loadu_si128((const __m128i *)(s + pos)),
			_mm_loadu_si128((const __m128i *)(m + pos))));
	for (; pos < len; pos += 16)
		acc = crc_fold16(acc, k, _mm_loadu_si128((const __m128i *)(s + pos)));
	return crc_reduce(acc);
}

static __rte_noinline CLMUL_FN uint32_t
icrc_fold_sse(const uint8_t *s, uint32_t len, const uint8_t *m)
{
	return ~icrc_fold_body(s, len, m);
}

/* The same with VEX encoding: three-operand forms and unaligned memory
 * operands save a register copy or a load per block. */
static __rte_noinline __attribute__((target("avx,pclmul"))) uint32_t
icrc_fold_avx(const uint8_t *s, uint32_t len, const uint8_t *m)
{
	return ~icrc_fold_body(s, len, m);
}

/* The single-buffer fold as a burst kernel: one frame after the other. */
void
roce_icrc_fold_sse_burst(uint8_t *const frames[],
			 const struct roce_pkt *const pkts[], uint32_t n,
			 uint32_t icrc[])
{
	for (uint32_t i = 0; i < n; i++) {
		const struct roce_pkt *p = pkts[i];

		icrc[i] = icrc_fold_sse(frames[i] + p->l3_off - ICRC_LRH_LEN,
					icrc_fold_len(p) + 4,
					roce_icrc_mask_ver[p->ip_version & 7]);
	}
}

void
roce_icrc_fold_avx_burst(uint8_t *const frames[],
			 const struct roce_pkt *const pkts[], uint32_t n,
			 uint32_t icrc[])
{
	for (uint32_t i = 0; i < n; i++) {
		const struct roce_pkt *p = pkts[i];

		icrc[i] = icrc_fold_avx(frames[i] + p->l3_off - ICRC_LRH_LEN,
					icrc_fold_len(p) + 4,
					roce_icrc_mask_ver[p->ip_version & 7]);
	}
}

/* The OR-mask byte at frame offset off (>= l3_off) of any layout. */
static uint8_t
mask_byte(const struct roce_pkt *p, uint32_t off)
{
	uint32_t ip = off - p->l3_off, l4 = off - p->l4_off;

	if (off >= p->l4_off)
		return l4 == 6 || l4 == 7 || l4 == 8 + 4 ? 0xff : 0;
	if (p->ip_version == 4)
		return ip == 1 || ip == 8 || ip == 10 || ip == 11 ? 0xff : 0;
	return ip == 0 ? 0x0f : (ip >= 1 && ip <= 3) || ip == 7 ? 0xff : 0;
}

/*
 * The CRC of the pseudo-frame is linear: for equal lengths and a zero
 * register, crc0(A ^ D) = crc0(A) ^ crc0(D), and the ICRC is crc0 plus a
 * constant of the length.  So a change D confined to 8 bytes moves the
 * ICRC by crc0(D) = D * x^(8 * bytes after it) mod P: the 8 bytes placed
 * in a 32-byte window so that r = t mod 16 of the t bytes after them fall
 * inside it, the window's accumulator moved on by the q = t / 16 blocks
 * that are left (one multiply by a table entry), one reduction.
 */
static __rte_noinline CLMUL_FN uint32_t
icrc_patch_delta(const struct roce_pkt *p, uint32_t off, uint64_t delta)
{
	uint32_t t = p->icrc_off - off - 8, q = t >> 4, sh = 24 - (t & 15);
	__m128i x = _mm_cvtsi64_si128((long long)delta), acc;

	if (sh >= 16) {
		/* all 8 bytes in the window's second block */
		acc = _mm_shuffle_epi8(x, _mm_loadu_si128((const __m128i *)
					(roce_crc_shl_tab + 16 - (sh - 16))));
	} else {
		/* its first block takes the bytes up to its end, the
		 * second the rest */
		acc = crc_fold16(_mm_shuffle_epi8(x, _mm_loadu_si128(
				(const __m128i *)(roce_crc_shl_tab + 16 - sh))),
				 roce_crc_k_fold,
				 _mm_shuffle_epi8(x, _mm_loadu_si128(
				(const __m128i *)(crc_shr_tab + 16 - sh))));
	}
	if (q != 0)
		acc = crc_fold16(acc, crc_k_skip[q], _mm_setzero_si128());
	return crc_reduce(acc);
}
#endif /* RTE_ARCH_X86 */

/* zlib-style CRC-32 (crc = the previous result, 0 to start). */
static uint32_t crc_table[256];

RTE_INIT(roce_crc_table_init)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int b = 0; b < 8; b++)
			c = (c >> 1) ^ ((c & 1) ? 0xedb88320u : 0);
		crc_table[i] = c;
	}
}

uint32_t
roce_crc32(uint32_t crc, const uint8_t *buf, uint32_t len)
{
	uint32_t reg = ~crc;

#ifdef RTE_ARCH_X86
	if (crc_clmul_ok && len >= 16)
		return ~crc_fold_plain(buf, len, reg);
#endif
	while (len--)
		reg = (reg >> 8) ^ crc_table[(reg ^ *buf++) & 0xff];
	return ~reg;
}

bool
roce_crc32_clmul(void)
{
#ifdef RTE_ARCH_X86
	return crc_clmul_ok;
#else
	return false;
#endif
}

/* Through rte_net_crc: a masked copy for the common layouts, else in place. */
static __rte_noinline uint32_t
icrc_calc_generic(uint8_t *f, const struct roce_pkt *p)
{
#ifdef RTE_ARCH_X86
	uint32_t len = p->icrc_off - (p->l3_off - ICRC_LRH_LEN);

	if (likely(len <= ICRC_COPY_MAX &&
		   (p->ip_version == 6 || p->l4_off - p->l3_off == 20))) {
		uint8_t buf[ICRC_COPY_MAX] __rte_aligned(16);
		const uint8_t *src = f + p->l3_off - ICRC_LRH_LEN;
		const uint8_t *m = roce_icrc_mask[p->ip_version == 6];
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

/* ---------------------------------------------------------------------- */
/* Which implementation: set at start-up, by roce_crc_init(), or forced. */

static enum roce_icrc_path icrc_path = ROCE_ICRC_PATH_GENERIC;
/* what single frames use under icrc_path: 0 rte_net_crc, 1 SSE fold,
 * 2 AVX fold (the bursts read icrc_path itself).  The AVX-512 path folds
 * single frames 16 bytes at a time too: 64 at a time was faster on
 * frames that arrived (roce_bench compute: 8.0 against 9.5 ns), slower
 * on frames just rewritten, whose stores a 64-byte load waits for
 * (resign: 20.9 against 16.7 ns), and no faster in verify + CAS->WRITE +
 * re-sign (rloop: 34.4-35.4 against 34.6-34.9 ns). */
static uint8_t icrc_single;

static const char *const icrc_path_names[ROCE_ICRC_PATH_NUM] = {
	[ROCE_ICRC_PATH_AUTO] = "auto",
	[ROCE_ICRC_PATH_GENERIC] = "rte_net_crc",
	[ROCE_ICRC_PATH_FOLD_SSE] = "fold-sse",
	[ROCE_ICRC_PATH_FOLD_AVX] = "fold-avx",
	[ROCE_ICRC_PATH_MB4_SSE] = "mb4-sse",
	[ROCE_ICRC_PATH_MB4_AVX] = "mb4-avx",
	[ROCE_ICRC_PATH_AVX512] = "avx512-vpclmulqdq",
};

const char *
roce_icrc_path_name(enum roce_icrc_path path)
{
	return (unsigned int)path < ROCE_ICRC_PATH_NUM ? icrc_path_names[path] :
							  "?";
}

const char *
roce_icrc_impl(void)
{
	return icrc_path_names[icrc_path];
}

bool
roce_icrc_path_supported(enum roce_icrc_path path)
{
	switch (path) {
	case ROCE_ICRC_PATH_AUTO:
	case ROCE_ICRC_PATH_GENERIC:
		return true;
#ifdef RTE_ARCH_X86
	case ROCE_ICRC_PATH_FOLD_SSE:
	case ROCE_ICRC_PATH_MB4_SSE:
		return crc_clmul_ok;
	case ROCE_ICRC_PATH_FOLD_AVX:
	case ROCE_ICRC_PATH_MB4_AVX:
		return crc_avx_ok;
	case ROCE_ICRC_PATH_AVX512:
		return crc_avx512_ok;
#endif
	default:
		return false;
	}
}

/* The best path, allowing 512-bit vectors or not. */
static enum roce_icrc_path
icrc_best(bool zmm)
{
	if (zmm && roce_icrc_path_supported(ROCE_ICRC_PATH_AVX512))
		return ROCE_ICRC_PATH_AVX512;
	if (roce_icrc_path_supported(ROCE_ICRC_PATH_MB4_AVX))
		return ROCE_ICRC_PATH_MB4_AVX;
	if (roce_icrc_path_supported(ROCE_ICRC_PATH_MB4_SSE))
		return ROCE_ICRC_PATH_MB4_SSE;
	return ROCE_ICRC_PATH_GENERIC;
}

static void
icrc_use(enum roce_icrc_path path)
{
	icrc_path = path;
	switch (path) {
	case ROCE_ICRC_PATH_FOLD_SSE:
	case ROCE_ICRC_PATH_MB4_SSE:
		icrc_single = 1;
		break;
	case ROCE_ICRC_PATH_FOLD_AVX:
	case ROCE_ICRC_PATH_MB4_AVX:
	case ROCE_ICRC_PATH_AVX512:
		icrc_single = 2;
		break;
	default:
		icrc_single = 0;
	}
}

int
roce_icrc_set_path(enum roce_icrc_path path)
{
	if (path == ROCE_ICRC_PATH_AUTO)
		path = icrc_best(rte_vect_get_max_simd_bitwidth() >=
				 RTE_VECT_SIMD_512);
	if (!roce_icrc_path_supported(path))
		return -ENOTSUP;
	icrc_use(path);
	return 0;
}

enum roce_icrc_path
roce_icrc_get_path(void)
{
	return icrc_path;
}

/* Before roce_crc_init() (or without it): everything but 512-bit vectors,
 * which wait for the EAL's say (see roce_crc_init). */
RTE_INIT(roce_icrc_path_init)
{
	icrc_use(icrc_best(false));
}

static inline uint32_t
icrc_calc(uint8_t *f, const struct roce_pkt *p)
{
#ifdef RTE_ARCH_X86
	/* IPv4 without options or IPv6, on a CPU with PCLMULQDQ */
	if (likely((p->l4_off - p->l3_off == 20 || p->ip_version == 6) &&
		   icrc_single != 0)) {
		const uint8_t *s = f + p->l3_off - ICRC_LRH_LEN;
		uint32_t len = p->icrc_off - p->l3_off + ICRC_LRH_LEN;
		const uint8_t *m = roce_icrc_mask_ver[p->ip_version & 7];

		return icrc_single == 2 ? icrc_fold_avx(s, len, m) :
					  icrc_fold_sse(s, len, m);
	}
#endif
	return icrc_calc_generic(f, p);
}

uint32_t
roce_icrc_compute(uint8_t *frame, const struct roce_pkt *p)
{
	return icrc_calc(frame, p);
}

uint32_t
roce_icrc_compute_generic(uint8_t *frame, const struct roce_pkt *p)
{
	return icrc_calc_generic(frame, p);
}

bool
roce_icrc_verify(uint8_t *frame, const struct roce_pkt *p)
{
	return icrc_calc(frame, p) == roce_icrc_stored(frame, p);
}

void
roce_icrc_update(uint8_t *frame, const struct roce_pkt *p)
{
	uint32_t v = rte_cpu_to_le_32(icrc_calc(frame, p));

	memcpy(frame + p->icrc_off, &v, sizeof(v));
}

int
roce_icrc_patch(uint8_t *frame, const struct roce_pkt *p, uint32_t off,
		uint64_t delta)
{
	uint32_t v;

	if (unlikely(off < p->l3_off || off + 8 > p->icrc_off))
		return -EINVAL;
#ifdef RTE_ARCH_X86
	if (likely(icrc_single != 0 &&
		   p->icrc_off - off - 8 < 16 * PATCH_SKIP_MAX)) {
		uint32_t o = off - p->l3_off + ICRC_LRH_LEN; /* in the pseudo-frame */

		/* masked bytes are ones whatever they hold: no change */
		if (unlikely(off < (uint32_t)p->bth_off + 5)) {
			if (likely(!icrc_odd(p))) {
				uint64_t m;

				memcpy(&m, roce_icrc_mask_ver[p->ip_version & 7] + o,
				       sizeof(m));
				delta &= ~m;
			} else {
				for (uint32_t i = 0; i < 8; i++)
					delta &= ~((uint64_t)mask_byte(p, off + i) <<
						   (8 * i));
			}
		}
		v = roce_icrc_stored(frame, p) ^ icrc_patch_delta(p, off, delta);
		v = rte_cpu_to_le_32(v);
		memcpy(frame + p->icrc_off, &v, sizeof(v));
		return 0;
	}
#endif
	RTE_SET_USED(delta);
	roce_icrc_update(frame, p);
	return 0;
}

bool
roce_hdr_words_patchable(const struct roce_pkt *p)
{
#ifdef RTE_ARCH_X86
	return icrc_single != 0 && p->ip_version == 4 &&
	       (uint32_t)p->bth_off + 16 <= p->icrc_off &&
	       p->icrc_off - (p->l3_off + 12u) - 8 < 16 * PATCH_SKIP_MAX;
#else
	RTE_SET_USED(p);
	return false;
#endif
}

#ifdef RTE_ARCH_X86
/*
 * roce_resign_headers' change in one: on an IPv4 header of 20 bytes its
 * four words are the 32 bytes from the IP source address to the BTH's
 * end, so their change D moves the ICRC by crc0(D followed by the t bytes
 * to the ICRC) (icrc_patch_delta's reasoning): D and the t mod 16 bytes
 * after it folded as a message of their own (crc_fold_plain's steps, from
 * a zero register), moved on by the t / 16 blocks left, one reduction;
 * the masked bytes (UDP checksum, BTH byte 4) taken out of D first.
 */
static __rte_noinline CLMUL_FN uint32_t
icrc_span32_delta(const struct roce_pkt *p, const uint64_t d[4])
{
	const uint32_t t = p->icrc_off - (p->l3_off + 12u) - 32, q = t >> 4;
	const uint32_t len = 32 + (t & 15), pad = (0u - len) & 15;
	uint8_t m[48] __rte_aligned(16) = { 0 };
	__m128i acc;

	memcpy(m, d, 32);
	m[14] = m[15] = 0;           /* UDP checksum */
	m[20] = 0;                   /* BTH byte 4: FECN, BECN, reserved */
	acc = crc_load_pad(m, pad);
	for (uint32_t pos = 16 - pad; pos < len; pos += 16)
		acc = crc_fold16(acc, roce_crc_k_fold,
				 _mm_loadu_si128((const __m128i *)(m + pos)));
	if (q != 0)
		acc = crc_fold16(acc, crc_k_skip[q], _mm_setzero_si128());
	return crc_reduce(acc);
}
#endif

void
roce_resign_headers(uint8_t *frame, const struct roce_pkt *p,
		    const struct roce_hdr_words *before)
{
	const uint32_t off[4] = { p->l3_off + 12u, p->l4_off, p->bth_off, p->bth_off + 8u };
	uint64_t d[4];

	for (unsigned int i = 0; i < RTE_DIM(off); i++) {
		memcpy(&d[i], frame + off[i], sizeof(d[i]));
		d[i] ^= before->w[i];
	}
#ifdef RTE_ARCH_X86
	if (likely(icrc_single != 0 && !icrc_odd(p) && p->ip_version == 4)) {
		uint32_t v = roce_icrc_stored(frame, p) ^ icrc_span32_delta(p, d);

		v = rte_cpu_to_le_32(v);
		memcpy(frame + p->icrc_off, &v, sizeof(v));
		roce_udp_cksum_fix(frame, p);   /* it covers the ICRC */
		return;
	}
#endif
	for (unsigned int i = 0; i < RTE_DIM(off); i++)
		if (d[i] != 0)
			roce_icrc_patch(frame, p, off[i], d[i]);
	roce_udp_cksum_fix(frame, p);     /* it covers the ICRC */
}

/*
 * rte_net_crc picks its implementation from the CPU flags *and* the EAL's
 * max SIMD bitwidth, which is 0 until rte_eal_init() runs; asked before
 * that, it settles for the byte-table version.  So when the EAL is not up
 * (tools, tests without ports) allow vectors first; rte_eal_init() resets
 * the setting anyway.  Asking for AVX512 falls back to SSE4.2 + PCLMULQDQ
 * when the CPU or --force-max-simd-bitwidth does not allow it.
 *
 * The ICRC's own 512-bit path follows the same rule as DPDK's: under the
 * EAL it is used only if 512-bit vectors are allowed
 * (--force-max-simd-bitwidth=512; the EAL's default is 256 on x86, for
 * the CPUs that slow their clock for them), otherwise the best 128-bit
 * path is.  Programs without the EAL get every path the CPU has.
 */
void
roce_crc_init(void)
{
	if (rte_vect_get_max_simd_bitwidth() == 0)
		rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	icrc_use(icrc_best(rte_vect_get_max_simd_bitwidth() >=
			   RTE_VECT_SIMD_512));
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
