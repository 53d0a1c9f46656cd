/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rc_internal.h — the connection table's layout, shared by rc_table.c
 * (slots, maps, aging, pairing) and rc_cm.c (the RDMA CM exchange).
 */
#ifndef SWORD_RC_INTERNAL_H
#define SWORD_RC_INTERNAL_H

#include "rc.h"

/* A CM REQ waiting for its REP (matched by communication ID and hosts). */
#define RC_CM_PENDING 64
struct rc_cm_req {
	uint32_t req_ip, rep_ip;  /* sender of the REQ / of the REP */
	uint32_t comm_id;         /* REQ's local communication ID */
	uint32_t qpn, psn;        /* the REQ sender's QPN and starting PSN */
	uint64_t at;
	uint8_t rr, depth;
	uint8_t used;
};

struct rc_table {
	/* first: rc.h's inline accessors read it.  head.conns is the slot
	 * array; head.max_conns is prm.max_conns once rc_create settled it */
	struct rc_table_head head;
	struct rc_params prm;
	uint32_t n_live;
	uint32_t next_free;       /* first slot to try when opening */
	uint32_t incarnations;    /* last incarnation number handed out */
	/* open addressing, slot index + 1 (0 = empty) */
	uint32_t *req_map, *resp_map;
	uint32_t map_mask;
	uint64_t epoch;           /* now of the first frame since create/reset */
	bool epoch_set;
	uint64_t untracked_until;
	struct rc_cm_req cm[RC_CM_PENDING];
	struct { rc_end_fn fn; void *ctx; } listeners[RC_MAX_LISTENERS];
	uint32_t n_listeners;
	struct rc_counters c;
	bool in_place;            /* rc_create_at: the caller owns the memory */
};

void rc_epoch(struct rc_table *t, uint64_t now);
void rc_end_life(struct rc_table *t, struct rc_conn *c, enum rc_end_why why, uint64_t now);
/* rc_close, saying why */
void rc_close_why(struct rc_table *t, struct rc_conn *c, enum rc_end_why why, uint64_t now);
/* Map maintenance (rc_table.c), used by rc_cm.c to set identities. */
void rc_resp_map_add(struct rc_table *t, struct rc_conn *c);
void rc_resp_map_del(struct rc_table *t, struct rc_conn *c);

#endif /* SWORD_RC_INTERNAL_H */
