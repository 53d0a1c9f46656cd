/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover.h — conflict avoidance for Clover (SPEC F4): write steering and
 * read steering on RoCEv2 frames in flight.
 *
 * Why it exists: Clover commits a write by CAS-ing the next pointer of what
 * the client believes is the tail of the key's version chain, and reads by
 * walking the chain from a hinted address.  Under contention most of those
 * hints are stale: the CAS fails and the read needs more round trips.
 * swordd sees every write go by in the order the server will execute it,
 * so it can re-aim stale requests at the current tail.  Everything here is
 * a hint: the server still decides, a wrong guess costs the client a
 * retry, and losing this state (restart) only turns steering off until it
 * is learned again.
 *
 * What is recognised (per region, from the [clover.NAME] config):
 *   data WRITE   WRITE_FIRST/ONLY(_IMM) into the region, DMA length >=
 *                write_min; the key is key_width bytes (little-endian, as
 *                the client's memory holds them) at key_offset of the value.
 *                Remembered as the "pending node" of the client QP.
 *   tail CAS     COMPARE_SWAP whose va - next_offset is a node in the
 *                region; its key and new node are the pending node of the
 *                same QP (Clover writes the value, then commits it on the
 *                same QP), cross-checked against the read table.
 *   value READ   READ into the region with DMA length >= read_min.
 *
 * Tables (fixed, sized at clover_create, never grown):
 *   tail cache   (region, key) -> tail address, open addressing, 2x keys.
 *   read table   keys * read_factor slots indexed by murmur3's fmix64 of a
 *                node address, holding (address, key); collisions overwrite
 *                (read_ways 1, the paper's table) or, in buckets of
 *                read_ways slots, the oldest entry of the bucket goes.
 *                Learned from every data WRITE, and relearned when a CAS
 *                is aimed past a key's tail: the superseded tail is what
 *                the clients that touched the key lately hold as their
 *                cursor, so it is what they will READ next.
 *   qp table     client QP -> its last data WRITE (key, node).
 *   cas table    outstanding tail CAS by (client IP, server, PSN): the
 *                target it was given (a retransmission gets the same one)
 *                and what its ATOMIC ACK teaches.
 *
 * Tail knowledge: a key's tail is "known" after a CAS answer proved it, or
 * after swordd itself forwarded a CAS at the known tail (it is then ahead
 * of the server: the server executes that key's CAS in the order swordd
 * sends them).  Any CAS swordd could not aim (key or tail unknown) makes the
 * tail unknown until every such CAS is answered and exactly one of them
 * succeeded (a window of such CAS whose answers never came is given up
 * after `cas` more tail CAS; a late answer of one counts for no window).
 * A steered CAS that fails anyway (something changed memory behind
 * swordd's back) makes the tail unknown again.
 *
 * I7: a frame is rewritten only after its arriving ICRC verified; a bad
 * frame passes unchanged (counted) and teaches nothing (data WRITEs, tail
 * CAS and their answers are verified before anything is learned from
 * them: the server drops a bad frame, the client's retransmission is
 * what counts).
 *
 * No EAL, no locks, no allocation after clover_create: one instance per
 * worker, used by that worker only.
 */
#ifndef SWORD_CLOVER_H
#define SWORD_CLOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "roce.h"

#define CLOVER_MAX_REGIONS 16
#define CLOVER_MAX_READ_WAYS 16   /* slots per read table bucket */

struct clover_region {
	int server;                /* server index the frames are matched with */
	bool rkey_any;
	uint32_t rkey;
	uint64_t base;
	uint64_t last;             /* last byte of the region (inclusive) */
	uint32_t write_min;
	uint32_t key_offset;
	uint32_t key_width;        /* 1..8 */
	uint32_t next_offset;
	uint32_t read_min;
};

struct clover_params {
	unsigned int n_regions;
	struct clover_region regions[CLOVER_MAX_REGIONS];
	uint32_t keys;             /* expected key space */
	uint32_t read_factor;      /* read table = keys * read_factor slots */
	uint32_t read_ways;        /* slots per bucket, 0/1 = direct-mapped */
	uint32_t qps;              /* power of two */
	uint32_t cas;              /* power of two */
	bool write_steering;
	bool read_steering;
};

/* Counters (ctr[] of clover_process); names in clover_counter_names. */
enum clover_counter {
	CLOVER_DATA_WRITES,        /* data WRITEs learned (key, node) */
	CLOVER_TAIL_CAS,           /* tail CAS requests seen (ICRC good) */
	CLOVER_STEERED_WRITES,     /* tail CAS redirected to the cached tail */
	CLOVER_CAS_AT_TAIL,        /* tail CAS already aimed at the cached tail */
	CLOVER_CAS_UNSTEERED,      /* tail CAS passed: tail unknown or unsure */
	CLOVER_CAS_NO_KEY,         /* tail CAS whose key could not be inferred */
	CLOVER_CAS_RETRANSMIT,     /* retransmitted CAS: original's target again */
	CLOVER_CAS_OK,             /* ATOMIC ACK: a tail CAS succeeded */
	CLOVER_CAS_FAILED,         /* ATOMIC ACK: a tail CAS failed */
	CLOVER_STEERED_FAILED,     /* ... though swordd aimed it: tail forgotten */
	CLOVER_VALUE_READS,        /* value READs seen */
	CLOVER_STEERED_READS,      /* value READs redirected to the tail */
	CLOVER_READ_AT_TAIL,       /* value READ hit, already at the tail */
	CLOVER_READ_MISSES,        /* value READ: address not in the read table */
	CLOVER_READ_TAIL_UNKNOWN,  /* value READ hit, but the key's tail is unsure */
	CLOVER_COLLISIONS,         /* read table slot taken over by another node */
	CLOVER_KEYS_FULL,          /* tail cache full: key not tracked */
	CLOVER_CAS_EVICTED,        /* unanswered CAS record overwritten/expired */
	CLOVER_BAD_ICRC_PASSED,    /* arriving ICRC wrong: passed unchanged */
	CLOVER_COUNTER_NUM
};

extern const char *const clover_counter_names[CLOVER_COUNTER_NUM];

struct clover;

/* Allocate every table (the only allocation).  NULL on bad params / ENOMEM. */
struct clover *clover_create(const struct clover_params *prm);
void clover_destroy(struct clover *cl);

/*
 * Look at one well-formed RoCE frame (roce_parse() == ROCE_OK) to or from
 * managed server index `server`.  Returns true if the frame was rewritten
 * in place (a va changed, ICRC and any UDP checksum recomputed; lengths
 * and offsets in *p stay valid), false if it is unchanged.  ctr has
 * CLOVER_COUNTER_NUM slots.
 */
bool clover_process(struct clover *cl, uint8_t *frame, const struct roce_pkt *p,
		    int server, bool to_server, uint64_t *ctr);
/* The same for a frame whose ICRC the caller knows good when icrc_ok
 * (swordd: ctx->icrc_ok): its own checks are then skipped.  With icrc_ok
 * false it is clover_process. */
bool clover_process_verified(struct clover *cl, uint8_t *frame, const struct roce_pkt *p,
			     int server, bool to_server, bool icrc_ok, uint64_t *ctr);

/* murmur3's 64-bit finalizer (fmix64): the read table's index hash. */
static inline uint64_t
clover_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/*
 * Regions at run time (swordd's live reload, issue #32), between frames on
 * the thread that owns cl.  A region is named by its value.  add: a new
 * slot (-ENOSPC: CLOVER_MAX_REGIONS used, counting removed ones: their
 * slots are never reused, table entries may still name them).  retire:
 * nothing new is learned or steered in it; a retransmission of a tail CAS
 * steered before still goes where the original went.  owed: steered tail
 * CAS not answered yet (read-only, any thread).  remove: matches nothing
 * any more.  state: CLOVER_REGION_* of a slot (< 0: no such slot).
 */
enum { CLOVER_REGION_LIVE = 0, CLOVER_REGION_RETIRED, CLOVER_REGION_DEAD };
int clover_region_add(struct clover *cl, const struct clover_region *r);
int clover_region_find(const struct clover *cl, const struct clover_region *r);
unsigned int clover_region_room(const struct clover *cl);
int clover_region_state(const struct clover *cl, unsigned int slot,
			const struct clover_region **r);
void clover_region_retire(struct clover *cl, unsigned int slot);
void clover_region_remove(struct clover *cl, unsigned int slot);
uint64_t clover_region_owed(const struct clover *cl, unsigned int slot);

/* Introspection for tests: the cached tail of (region, key), if known. */
bool clover_tail(const struct clover *cl, unsigned int region, uint64_t key,
		 uint64_t *tail);

/* Introspection for tests: the key the read table holds for node va. */
bool clover_read_key(const struct clover *cl, unsigned int region, uint64_t va,
		     uint64_t *key);

#endif /* SWORD_CLOVER_H */
