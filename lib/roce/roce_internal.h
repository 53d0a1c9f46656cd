/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_internal.h — lib/roce entry points for its own tests only.
 *
 * Why it exists: roce_parse() has a fast path for the common frame shape
 * and falls back to a general parser; the tests check that both give the
 * same answer on every input, which needs the general one by itself.
 */
#ifndef SWORD_ROCE_INTERNAL_H
#define SWORD_ROCE_INTERNAL_H

#include "roce.h"

/* roce_parse() without its fast path. */
int roce_parse_full(const uint8_t *frame, uint32_t len, struct roce_pkt *p);

#endif /* SWORD_ROCE_INTERNAL_H */
