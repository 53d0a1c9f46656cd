/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_layout.h — where the lock client's locks and records live in the
 * memory server's region.
 *
 * Why it exists: swordd is configured with the lock region's address
 * ([lock.X] base/length), so the memory server maps its region at a fixed
 * address and both programs agree on one layout: a dense array of 8-byte
 * lock words (the only words swordd manages) followed by the records they
 * protect, one cache line each, well away from the lock words.
 */
#ifndef SWORD_LOCK_LAYOUT_H
#define SWORD_LOCK_LAYOUT_H

#include <stdint.h>

#define LOCK_REGION_ADDR 0x600000000000ull  /* memory server's default VA */
#define LOCK_REGION_SIZE (1u << 20)
#define LOCK_TCP_PORT 18600                 /* out-of-band QP exchange */

#define LOCK_ARRAY_OFFSET 0                 /* lock word i at 8 * i */
#define LOCK_MAX 512                        /* lock array = 4 KiB */
#define RECORD_OFFSET 4096                  /* record i at 4096 + 64 * i */
#define RECORD_STRIDE 64

/* The protected record: written only by the lock's holder. */
struct lock_record {
	uint64_t holder;     /* tag of the client inside the critical section, 0 if none */
	uint64_t counter;    /* critical sections completed on this lock, ever */
	uint64_t last_tag;   /* tag of the last holder that incremented counter */
};

static inline uint64_t
lock_word_offset(unsigned int i)
{
	return LOCK_ARRAY_OFFSET + 8ull * i;
}

static inline uint64_t
record_offset(unsigned int i)
{
	return RECORD_OFFSET + (uint64_t)RECORD_STRIDE * i;
}

#endif /* SWORD_LOCK_LAYOUT_H */
