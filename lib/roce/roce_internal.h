/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_internal.h — lib/roce entry points for its own tests only.
 *
 * Why it exists: roce_parse() has a fast path for the common frame shape
 * and falls back to a general parser, and the ICRC has its own CRC next
 * to rte_net_crc; the tests check that both give the same answer on every
 * input, which needs the general ones by themselves.
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

#endif /* SWORD_ROCE_INTERNAL_H */
