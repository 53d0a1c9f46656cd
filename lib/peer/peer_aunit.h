/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_aunit.h — internal to lib/peer: the bookkeeping behind the
 * responder's model of an RNIC atomic unit (peer_resp_cfg.atomic_unit_ns).
 *
 * Why it exists: an RNIC executes atomics on one address one at a time, at
 * a rate far below its packet rate (ConnectX-5: about 2.93 M atomics/s on
 * one address), which is what lock acceleration takes off the memory
 * server; the software responder has no such unit, so the demo could not
 * show it.  This is a model, not a NIC: each 8-byte word has a timeline
 * (when its unit is next free), and the frames a QP receives while one of
 * its atomics waits are held, in arrival order, in a pool sized at start.
 * Nothing here touches memory or the wire; peer_responder.c decides.
 */
#ifndef SWORD_PEER_AUNIT_H
#define SWORD_PEER_AUNIT_H

#include <stdbool.h>
#include <stdint.h>

#include "peer.h"

/* A request held behind its QP's waiting atomic. */
struct aunit_frame {
	uint32_t next;          /* 1-based pool index of the next held frame, 0 = none */
	uint32_t len;
	uint64_t t_arr;         /* when it arrived (ns, peer_now_ns) */
	struct roce_pkt p;      /* parsed once, on arrival (offsets into f) */
	uint8_t f[PEER_FRAME_MAX];
};

/* A QP's held frames, oldest first; all-zero is the empty FIFO, so a QP
 * reset by memset starts empty (after aunit_fifo_clear). */
struct aunit_fifo {
	uint32_t head, tail;    /* 1-based pool indexes, 0 = none */
};

struct aunit;

/* period_ns: unit time one atomic takes; pool_frames: frames held at most,
 * over all QPs; slots: words whose unit may be busy at once.  NULL if out
 * of memory. */
struct aunit *aunit_create(uint64_t period_ns, uint32_t pool_frames, uint32_t slots);
void aunit_destroy(struct aunit *u);

/*
 * Book the unit of the word at addr (its address in server memory: the
 * physical word, whatever rkey or VA named it) for one atomic that reaches
 * it at t: it executes at *exec_at = max(t, when the unit is free) and
 * holds the unit for period_ns from then.  False when the table has no
 * room for another busy word (nothing booked).
 */
bool aunit_book(struct aunit *u, const void *addr, uint64_t t, uint64_t *exec_at);

/* Append a copy of frame f (len bytes, parsed as p) arrived at t; false
 * when the pool is full or the frame does not fit a slot. */
bool aunit_fifo_push(struct aunit *u, struct aunit_fifo *q, const uint8_t *f, uint32_t len,
		     const struct roce_pkt *p, uint64_t t);
/* The oldest held frame, NULL if none; valid until it is popped. */
struct aunit_frame *aunit_fifo_head(struct aunit *u, const struct aunit_fifo *q);
void aunit_fifo_pop(struct aunit *u, struct aunit_fifo *q);
/* Drop every held frame of q; returns how many. */
uint32_t aunit_fifo_clear(struct aunit *u, struct aunit_fifo *q);
/* Frames held now, over all QPs. */
uint32_t aunit_held(const struct aunit *u);

#endif /* SWORD_PEER_AUNIT_H */
