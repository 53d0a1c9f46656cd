/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_internal.h — lib/roce entry points for its own tests and
 * benchmarks only.
 *
 * Why it exists: roce_parse() has a fast path for the common frame shape
 * and falls back to a general parser, and the ICRC has its own CRC next
 * to rte_net_crc, in several implementations; the tests check that all
 * give the same answer on every input, which needs the general ones by
 * themselves and a way to force each implementation, and the benchmarks
 * compare the implementations.
 */
#ifndef SWORD_ROCE_INTERNAL_H
#define SWORD_ROCE_INTERNAL_H

#include "roce.h"

/* roce_parse() without its fast path. */
int roce_parse_full(const uint8_t *frame, uint32_t len, struct roce_pkt *p);

/*
 * The CRC-32 behind the ICRC, zlib-style: crc is a previous result (0 to
 * start), so a CRC can be continued over more bytes.  On x86 with
 * PCLMULQDQ (roce_crc32_clmul()) buffers of 16 bytes or more take the
 * carry-less-multiply path the ICRC uses; the tests hold it against zlib
 * and rte_net_crc.
 */
uint32_t roce_crc32(uint32_t crc, const uint8_t *buf, uint32_t len);
bool roce_crc32_clmul(void);

/* roce_icrc_compute() through rte_net_crc only (the reference path). */
uint32_t roce_icrc_compute_generic(uint8_t *frame, const struct roce_pkt *p);

/*
 * The ICRC implementations (roce_icrc.c, roce_icrc_burst.c).  One is in
 * use at a time, for single frames and bursts alike; the tests force each
 * one the CPU offers in turn, the benchmarks compare them.
 */
enum roce_icrc_path {
	ROCE_ICRC_PATH_AUTO,    /* set_path: the best one (see roce_crc_init) */
	ROCE_ICRC_PATH_GENERIC, /* rte_net_crc over a masked copy, any CPU */
	ROCE_ICRC_PATH_FOLD_SSE,/* PCLMULQDQ fold, one frame after the other */
	ROCE_ICRC_PATH_FOLD_AVX,/* the same, VEX-encoded */
	ROCE_ICRC_PATH_MB4_SSE, /* bursts: four frames' folds interleaved */
	ROCE_ICRC_PATH_MB4_AVX, /* the same, VEX-encoded */
	ROCE_ICRC_PATH_AVX512,  /* bursts: VPCLMULQDQ, 64 bytes a step */
	ROCE_ICRC_PATH_NUM,
};

/* 0, or -ENOTSUP if this CPU (or build) lacks the path. */
int roce_icrc_set_path(enum roce_icrc_path path);
enum roce_icrc_path roce_icrc_get_path(void);
bool roce_icrc_path_supported(enum roce_icrc_path path);
const char *roce_icrc_path_name(enum roce_icrc_path path);

/*
 * zlib's crc32(0, buf[i], len[i]) of buffers that each start with four
 * 0xFF bytes (not read: the ICRC's LRH stand-in has them), through the
 * current path's ICRC kernel with no mask: what the tests hold against
 * zlib and rte_net_crc on every length.  Lengths under 20 go through the
 * byte table (no kernel takes them; no RoCEv2 frame is that short).
 */
void roce_crc32_ff_burst(const uint8_t *const buf[], const uint32_t len[],
			 uint32_t n, uint32_t crc_out[]);

#endif /* SWORD_ROCE_INTERNAL_H */
