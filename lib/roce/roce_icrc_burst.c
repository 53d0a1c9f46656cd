/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_icrc_burst.c — the ICRCs of a whole burst of frames at once.
 *
 * Why it exists: every frame swordd rewrites needs two ICRCs, a check on
 * arrival and a new one after the rewrite, and one frame's fold is a
 * chain of carry-less multiplies, each waiting for the one before
 * (roce_icrc.c).  Across a burst the chains are independent, so this file
 * runs several at once (the multi-buffer technique of hashing libraries):
 *
 *   mb4-sse, mb4-avx   four frames' folds in lock-step, one 16-byte block
 *                      of each per round, as long as all four have blocks
 *                      left; then each one's rest alone, and four
 *                      independent final reductions.
 *   avx512-vpclmulqdq  (AVX-512 + VPCLMULQDQ) one frame at a time, but 64
 *                      bytes per step: a masked load takes the front of
 *                      the frame up to a 64-byte boundary from its end (no
 *                      padding, no out-of-bounds read), each step folds
 *                      four blocks by 64 bytes, and the last multiplies
 *                      the four lanes by their distance to the end, so a
 *                      frame of up to 64 bytes is one load and two
 *                      multiplies; four frames' accumulators are gathered
 *                      into the lanes of one register by a transpose and
 *                      reduced together.
 *
 * What it buys (AMD EPYC with AVX-512, 2 shared cores, other jobs running;
 * scripts/bench-roce.sh and bench_serializer, ratios from one run):
 * - A tight loop of single-frame folds is not latency-bound after all: the
 *   CPU overlaps the independent chains of successive frames by itself.
 *   roce_bench's 86-byte CAS: one roce_icrc_compute 8.9 ns, a burst of 32
 *   per frame 9.1 ns with mb4-avx (93 against 100 instructions), 5.9 ns
 *   with avx512 (fewer instructions: 64 bytes and four reductions a step).
 * - In the serializer's flow it is: bench_serializer's probe checks and
 *   re-signs the frames of each burst of 32 right after the serializer
 *   handled them; the two ICRCs of a CAS->WRITE take 28.5 ns one at a
 *   time, 21.6 ns by burst with mb4-avx, 15.3 ns with avx512 (ACK->ATOMIC
 *   ACK: 26.0, 19.1, 12.2 ns).
 * - Staging also keeps a frame's re-sign away from its rewrite's stores: a
 *   fold's 16-byte load over an 8-byte store made just before waits for
 *   it.  verify + CAS->WRITE + re-sign (roce_bench rloop against rburst,
 *   fastest of 21 runs): 34.1 ns one frame at a time, 30.2 ns staged with
 *   mb4-avx, 23.7 ns with avx512.
 * So roce_crc_init picks avx512 where the CPU has it and 512-bit vectors
 * are allowed, else mb4.  Single frames keep the 16-byte fold on every
 * path (roce_icrc.c says why).
 *
 * Frames the folds do not take (IPv4 with options, or a CPU without
 * PCLMULQDQ) go through rte_net_crc one by one, as roce_icrc_compute does.
 *
 * The invariant that a frame whose ICRC was wrong on arrival is never
 * re-signed is in the API: roce_icrc_sign_burst signs only the frames its
 * caller marks, and the caller marks them from roce_icrc_verify_burst's
 * verdicts (see roce.h).
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "roce.h"
#include "roce_icrc_impl.h"
#include "roce_internal.h"

#define BURST_CHUNK 64 /* frames staged per kernel call */

#ifdef RTE_ARCH_X86
/* ---------------------------------------------------------------------- */
/* Four frames in lock-step, 16 bytes at a time (SSE4.1 / AVX + PCLMULQDQ) */

/*
 * Each lane is the single-buffer fold (roce_icrc.c): block 0 is the first
 * 16 bytes moved up by the pad, block j >= 1 is at 16 j - pad.  Blocks
 * 1..4 may hold masked bytes (16 * 4 - 15 < ICRC_MASK_SPAN - 4 <= 16 * 5 -
 * 15), so the rounds up to 4 OR the mask rows in and later ones do not.
 */
#define MB_MASKED_ROUNDS 4
_Static_assert(16 * (MB_MASKED_ROUNDS + 1) - 15 >= ICRC_MASK_SPAN - 4,
	       "rounds after MB_MASKED_ROUNDS hold no masked byte");
_Static_assert(4 + 16 + 16 * MB_MASKED_ROUNDS <= ICRC_MASK_ROW,
	       "the masked rounds' loads stay in the mask rows");

static __rte_always_inline CLMUL_FN __m128i
mb_ld(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/* block 0 of frame i into a, and where its block 1 and mask are */
#define MB_FIRST(i, a, p, q, n) do {					\
		const struct roce_pkt *pk_ = pkts[i];			\
		uint32_t len_ = icrc_fold_len(pk_), pad_ = (0u - len_) & 15; \
		const uint8_t *s_ = icrc_fold_start(frames[i], pk_);	\
		const uint8_t *m_ = roce_icrc_mask_ver[pk_->ip_version & 7] + 4; \
									\
		a = _mm_shuffle_epi8(_mm_or_si128(mb_ld(s_), mb_ld(m_)), \
				     mb_ld(roce_crc_shl_tab + 16 - pad_)); \
		p = s_ + 16 - pad_;					\
		q = m_ + 16 - pad_;					\
		n = (len_ + 15) >> 4;					\
	} while (0)

/* frames i0..i0+3 (i3 may repeat one of them) */
static __rte_always_inline CLMUL_FN void
mb4_group(uint8_t *const frames[], const struct roce_pkt *const pkts[],
	  uint32_t i0, uint32_t i3, uint32_t icrc[])
{
	const __m128i k = roce_crc_k_fold;
	const uint8_t *p0, *p1, *p2, *p3, *q0, *q1, *q2, *q3;
	__m128i a0, a1, a2, a3;
	uint32_t n0, n1, n2, n3, nmin, j, off;

	MB_FIRST(i0, a0, p0, q0, n0);
	MB_FIRST(i0 + 1, a1, p1, q1, n1);
	MB_FIRST(i0 + 2, a2, p2, q2, n2);
	MB_FIRST(i3, a3, p3, q3, n3);
	nmin = RTE_MIN(RTE_MIN(n0, n1), RTE_MIN(n2, n3));

	/* the rounds all four lanes have: their chains interleave */
	for (j = 1, off = 0; j < nmin && j <= MB_MASKED_ROUNDS; j++, off += 16) {
		a0 = crc_fold16(a0, k, _mm_or_si128(mb_ld(p0 + off), mb_ld(q0 + off)));
		a1 = crc_fold16(a1, k, _mm_or_si128(mb_ld(p1 + off), mb_ld(q1 + off)));
		a2 = crc_fold16(a2, k, _mm_or_si128(mb_ld(p2 + off), mb_ld(q2 + off)));
		a3 = crc_fold16(a3, k, _mm_or_si128(mb_ld(p3 + off), mb_ld(q3 + off)));
	}
	for (; j < nmin; j++, off += 16) {
		a0 = crc_fold16(a0, k, mb_ld(p0 + off));
		a1 = crc_fold16(a1, k, mb_ld(p1 + off));
		a2 = crc_fold16(a2, k, mb_ld(p2 + off));
		a3 = crc_fold16(a3, k, mb_ld(p3 + off));
	}
	/* the longer lanes' remaining blocks, each alone */
#define MB_REST(a, p, q, n) do {					\
		uint32_t j_ = j, o_ = off;				\
									\
		for (; j_ < n; j_++, o_ += 16) {			\
			__m128i x_ = mb_ld(p + o_);			\
									\
			if (j_ <= MB_MASKED_ROUNDS)			\
				x_ = _mm_or_si128(x_, mb_ld(q + o_));	\
			a = crc_fold16(a, k, x_);			\
		}							\
	} while (0)
	MB_REST(a0, p0, q0, n0);
	MB_REST(a1, p1, q1, n1);
	MB_REST(a2, p2, q2, n2);
	MB_REST(a3, p3, q3, n3);
#undef MB_REST
	icrc[i0] = ~crc_reduce(a0);
	icrc[i0 + 1] = ~crc_reduce(a1);
	icrc[i0 + 2] = ~crc_reduce(a2);
	icrc[i3] = ~crc_reduce(a3);
}

static __rte_always_inline CLMUL_FN void
mb1(uint8_t *const frames[], const struct roce_pkt *const pkts[], uint32_t i,
    uint32_t icrc[])
{
	const __m128i k = roce_crc_k_fold;
	const uint8_t *p, *q;
	__m128i a;
	uint32_t n;

	MB_FIRST(i, a, p, q, n);
	for (uint32_t j = 1; j < n; j++, p += 16, q += 16)
		a = crc_fold16(a, k, j <= MB_MASKED_ROUNDS ?
			       _mm_or_si128(mb_ld(p), mb_ld(q)) : mb_ld(p));
	icrc[i] = ~crc_reduce(a);
}
#undef MB_FIRST

static __rte_always_inline CLMUL_FN void
mb4_body(uint8_t *const frames[], const struct roce_pkt *const pkts[],
	 uint32_t n, uint32_t icrc[])
{
	uint32_t i = 0;

	for (; i + 4 <= n; i += 4)
		mb4_group(frames, pkts, i, i + 3, icrc);
	if (n - i == 3) {
		/* three frames: a fourth lane repeating one costs less than
		 * two chains waiting on themselves */
		mb4_group(frames, pkts, i, i + 2, icrc);
		return;
	}
	for (; i < n; i++)
		mb1(frames, pkts, i, icrc);
}

void __rte_noinline CLMUL_FN
roce_icrc_mb4_sse(uint8_t *const frames[], const struct roce_pkt *const pkts[],
		  uint32_t n, uint32_t icrc[])
{
	mb4_body(frames, pkts, n, icrc);
}

void __rte_noinline __attribute__((target("avx,pclmul")))
roce_icrc_mb4_avx(uint8_t *const frames[], const struct roce_pkt *const pkts[],
		  uint32_t n, uint32_t icrc[])
{
	mb4_body(frames, pkts, n, icrc);
}

/* ---------------------------------------------------------------------- */
/* AVX-512 + VPCLMULQDQ: 64 bytes per step, four reductions per register */

/* (every CPU with VPCLMULQDQ has BMI2: shlx for the load masks) */
#define AVX512_FN __attribute__((target( \
	"avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,bmi2")))

static __rte_always_inline AVX512_FN __m512i
z_fold(__m512i acc, __m512i k, __m512i x)
{
	/* 0x96: a ^ b ^ c in one instruction */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00),
					 _mm512_clmulepi64_epi128(acc, k, 0x11),
					 x, 0x96);
}

/*
 * The 128-bit accumulator of one frame (as the single-buffer fold would
 * end with it), as four lanes whose XOR it is.  The frame is cut into
 * 64-byte chunks counted from its end; the first, shorter one is loaded
 * by a masked load that leaves the bytes before the frame alone and zero
 * (leading zeros add nothing).  k4 folds by 64 bytes; kd multiplies lanes
 * 0..2 by 3..1 blocks.
 */
static __rte_always_inline AVX512_FN __m512i
z_frame(const uint8_t *f, const struct roce_pkt *pk, __m512i k4, __m512i kd)
{
	uint32_t len = icrc_fold_len(pk), z = (0u - len) & 63;
	uint32_t nc = (len + 63) >> 6;
	const uint8_t *m = roce_icrc_mask64_ver[pk->ip_version & 7] +
			   ICRC_MASK64_PRE - z;
	/* chunk c is at b + 64 c; b itself may lie before the buffer, and
	 * only the masked load reads there (no fault, nothing read) */
	const uint8_t *b = (const uint8_t *)((uintptr_t)icrc_fold_start(f, pk) - z);
	__m512i acc;

	acc = _mm512_or_si512(_mm512_maskz_loadu_epi8(~0ull << z, b),
			      _mm512_loadu_si512(m));
	if (nc > 1) {
		/* chunk 1 may still hold masked bytes (chunk 0 held at least
		 * one byte of the message), none after it does */
		acc = z_fold(acc, k4, _mm512_or_si512(_mm512_loadu_si512(b + 64),
						      _mm512_loadu_si512(m + 64)));
		for (uint32_t c = 2; c < nc; c++)
			acc = z_fold(acc, k4, _mm512_loadu_si512(b + 64 * c));
	}
	/* lanes 0..2 moved on to the end, lane 3 is there already */
	return _mm512_mask_xor_epi64(acc, 0x3f,
				     _mm512_clmulepi64_epi128(acc, kd, 0x00),
				     _mm512_clmulepi64_epi128(acc, kd, 0x11));
}
_Static_assert(ICRC_MASK64_PRE >= 63 &&
	       ICRC_MASK64_ROW >= ICRC_MASK64_PRE + 64 + 64,
	       "mask loads of chunks 0 and 1 stay in the rows");

/*
 * ~crc_reduce (roce_icrc_impl.h) of four frames' accumulators t0..t3,
 * each the XOR of its four lanes: first a transpose that XORs lanes
 * together, leaving frame i's accumulator in lane i, then the reduction
 * of all four lanes at once.
 */
static __rte_always_inline AVX512_FN void
z_reduce4(__m512i t0, __m512i t1, __m512i t2, __m512i t3, uint32_t *icrc)
{
	__m512i k = _mm512_broadcast_i32x4(roce_crc_k_tail), acc, t, u, v;

	/* u = [t0 l0^l2, t0 l1^l3, t1 l0^l2, t1 l1^l3], v the same of t2, t3 */
	u = _mm512_xor_si512(_mm512_shuffle_i64x2(t0, t1, 0x44),
			     _mm512_shuffle_i64x2(t0, t1, 0xee));
	v = _mm512_xor_si512(_mm512_shuffle_i64x2(t2, t3, 0x44),
			     _mm512_shuffle_i64x2(t2, t3, 0xee));
	acc = _mm512_xor_si512(_mm512_shuffle_i64x2(u, v, 0x88),
			       _mm512_shuffle_i64x2(u, v, 0xdd));
	acc = _mm512_xor_si512(_mm512_clmulepi64_epi128(acc, k, 0x00),
			       _mm512_bsrli_epi128(acc, 8));
	acc = _mm512_xor_si512(_mm512_clmulepi64_epi128(
				       _mm512_bslli_epi128(acc, 4), k, 0x10), acc);
	k = _mm512_broadcast_i32x4(roce_crc_k_barrett);
	acc = _mm512_maskz_mov_epi32(0xeeee, acc);
	t = _mm512_xor_si512(_mm512_clmulepi64_epi128(acc, k, 0x00), acc);
	t = _mm512_xor_si512(_mm512_clmulepi64_epi128(t, k, 0x10), acc);
	/* dword 2 of each lane, inverted */
	_mm_storeu_si128((__m128i *)icrc, _mm_xor_si128(
				 _mm512_castsi512_si128(
					 _mm512_maskz_compress_epi32(0x4444, t)),
				 _mm_set1_epi32(-1)));
}

void __rte_noinline AVX512_FN
roce_icrc_mb_avx512(uint8_t *const frames[],
		    const struct roce_pkt *const pkts[], uint32_t n,
		    uint32_t icrc[])
{
	__m512i k4 = _mm512_broadcast_i32x4(roce_crc_k_fold4), kd;
	uint32_t i = 0;

	kd = _mm512_castsi128_si512(roce_crc_k_dist[0]);
	kd = _mm512_inserti32x4(kd, roce_crc_k_dist[1], 1);
	kd = _mm512_inserti32x4(kd, roce_crc_k_dist[2], 2);
	for (; i + 4 <= n; i += 4)
		z_reduce4(z_frame(frames[i], pkts[i], k4, kd),
			  z_frame(frames[i + 1], pkts[i + 1], k4, kd),
			  z_frame(frames[i + 2], pkts[i + 2], k4, kd),
			  z_frame(frames[i + 3], pkts[i + 3], k4, kd), icrc + i);
	if (i < n) {
		__m512i a[4] = { _mm512_setzero_si512(), _mm512_setzero_si512(),
				 _mm512_setzero_si512(), _mm512_setzero_si512() };
		uint32_t c[4];

		for (uint32_t j = 0; i + j < n; j++)
			a[j] = z_frame(frames[i + j], pkts[i + j], k4, kd);
		z_reduce4(a[0], a[1], a[2], a[3], c);
		memcpy(icrc + i, c, (n - i) * sizeof(c[0]));
	}
}

/* The kernel of a path. */
static icrc_kernel_fn *
path_kernel(enum roce_icrc_path path)
{
	switch (path) {
	case ROCE_ICRC_PATH_AVX512:
		return roce_icrc_mb_avx512;
	case ROCE_ICRC_PATH_MB4_AVX:
		return roce_icrc_mb4_avx;
	case ROCE_ICRC_PATH_MB4_SSE:
		return roce_icrc_mb4_sse;
	case ROCE_ICRC_PATH_FOLD_AVX:
		return roce_icrc_fold_avx_burst;
	case ROCE_ICRC_PATH_FOLD_SSE:
		return roce_icrc_fold_sse_burst;
	default:
		return NULL;
	}
}
#endif /* RTE_ARCH_X86 */

/* ---------------------------------------------------------------------- */
/* The front end: stage the frames, run the kernel, hand out the ICRCs. */

/* icrc[i] = roce_icrc_compute(frames[i], pkts[i]) for every i < n. */
static void
icrc_burst(uint8_t *const frames[], const struct roce_pkt *const pkts[],
	   uint32_t n, uint32_t icrc[])
{
#ifdef RTE_ARCH_X86
	icrc_kernel_fn *k = path_kernel(roce_icrc_get_path());

	if (likely(k != NULL)) {
		k(frames, pkts, n, icrc);
		/* the folds took IPv4 with options for plain IPv4 */
		for (uint32_t i = 0; i < n; i++)
			if (unlikely(icrc_odd(pkts[i])))
				icrc[i] = roce_icrc_compute_generic(frames[i], pkts[i]);
		return;
	}
#endif
	for (uint32_t i = 0; i < n; i++)
		icrc[i] = roce_icrc_compute_generic(frames[i], pkts[i]);
}

void
roce_icrc_compute_burst(uint8_t *const frames[],
			const struct roce_pkt *const pkts[], uint32_t n,
			uint32_t icrc_out[])
{
	icrc_burst(frames, pkts, n, icrc_out);
}

uint32_t
roce_icrc_verify_burst(uint8_t *const frames[],
		       const struct roce_pkt *const pkts[], uint32_t n,
		       bool ok_out[])
{
	uint32_t icrc[BURST_CHUNK], good = 0;

	for (uint32_t i0 = 0; i0 < n; i0 += BURST_CHUNK) {
		uint32_t m = RTE_MIN(n - i0, (uint32_t)BURST_CHUNK);

		icrc_burst(frames + i0, pkts + i0, m, icrc);
		for (uint32_t i = 0; i < m; i++) {
			bool ok = icrc[i] == roce_icrc_stored(frames[i0 + i],
							      pkts[i0 + i]);

			ok_out[i0 + i] = ok;
			good += ok;
		}
	}
	return good;
}

uint32_t
roce_icrc_sign_burst(uint8_t *const frames[],
		     const struct roce_pkt *const pkts[], uint32_t n,
		     const bool sign[])
{
	uint8_t *f[BURST_CHUNK];
	const struct roce_pkt *p[BURST_CHUNK];
	uint32_t icrc[BURST_CHUNK], done = 0;

	for (uint32_t i0 = 0; i0 < n; i0 += BURST_CHUNK) {
		uint32_t end = RTE_MIN(n, i0 + BURST_CHUNK), m = 0;

		/* only the frames to sign are computed, let alone written */
		for (uint32_t i = i0; i < end; i++) {
			f[m] = frames[i];
			p[m] = pkts[i];
			m += sign[i];
		}
		icrc_burst(f, p, m, icrc);
		for (uint32_t j = 0; j < m; j++) {
			uint32_t v = rte_cpu_to_le_32(icrc[j]);

			memcpy(f[j] + p[j]->icrc_off, &v, sizeof(v));
			/* a UDP checksum, if the sender used one, covers it */
			roce_udp_cksum_fix(f[j], p[j]);
		}
		done += m;
	}
	return done;
}

/* ---------------------------------------------------------------------- */

/* zlib's CRC of four 0xFF bytes and what follows them: with the
 * register at 0 after the four, crc32(0xffffffff, rest). */
static uint32_t
crc32_ff(const uint8_t *buf, uint32_t len)
{
	static const uint8_t ff[4] = { 0xff, 0xff, 0xff, 0xff };

	return len < 4 ? roce_crc32(0, ff, len) :
			 roce_crc32(0xffffffffu, buf + 4, len - 4);
}

void
roce_crc32_ff_burst(const uint8_t *const buf[], const uint32_t len[],
		    uint32_t n, uint32_t crc_out[])
{
	uint32_t i = 0;

#ifdef RTE_ARCH_X86
	icrc_kernel_fn *k = path_kernel(roce_icrc_get_path());

	if (k != NULL) {
		/* each buffer as a frame whose pseudo-frame is all of it, with
		 * IP version 0: the row without a mask */
		uint8_t *f[BURST_CHUNK];
		struct roce_pkt pk[BURST_CHUNK];
		const struct roce_pkt *p[BURST_CHUNK];
		uint32_t crc[BURST_CHUNK];
		uint16_t at[BURST_CHUNK];

		for (uint32_t i0 = 0; i0 < n; i0 += BURST_CHUNK) {
			uint32_t end = RTE_MIN(n, i0 + BURST_CHUNK), m = 0;

			for (i = i0; i < end; i++) {
				if (len[i] < 20) {
					crc_out[i] = crc32_ff(buf[i], len[i]);
					continue;
				}
				memset(&pk[m], 0, sizeof(pk[m]));
				pk[m].l3_off = ICRC_LRH_LEN;
				pk[m].l4_off = ICRC_LRH_LEN + 20;
				pk[m].icrc_off = (uint16_t)len[i];
				f[m] = (uint8_t *)(uintptr_t)buf[i];
				p[m] = &pk[m];
				at[m++] = (uint16_t)i;
			}
			k(f, p, m, crc);
			for (uint32_t j = 0; j < m; j++)
				crc_out[at[j]] = crc[j];
		}
		return;
	}
#endif
	/* rte_net_crc has no initial value to continue from: the generic
	 * path's plain CRC is roce_crc32 */
	for (; i < n; i++)
		crc_out[i] = crc32_ff(buf[i], len[i]);
}
