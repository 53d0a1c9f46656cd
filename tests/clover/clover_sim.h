/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover_sim.h — a closed-loop Clover world in one process: clients that
 * follow Clover's protocol, a memory server with real memory, lib/clover in
 * the middle, all speaking real RoCEv2 frames.
 *
 * Why it exists: steering is only worth something if Clover clients retry
 * less and read in fewer round trips, and it is only safe if no write is
 * lost and no read returns a value that was never committed.  Both need the
 * whole loop: frames built here are parsed by lib/roce, steered by
 * lib/clover, executed by the responder, answered, steered back through.
 *
 * Clover's protocol as modelled (one op at a time per client, like a Clover
 * client thread):
 *   PUT k,v  WRITE a new node {next = NULL, key k, value v} at a fresh
 *            address; CAS the next pointer of the client's hint for k
 *            (compare NULL, swap = new node).  On failure the CAS returns
 *            the next pointer found: READ along the chain to the node whose
 *            next is NULL and CAS there again (each failed CAS is a retry).
 *   GET k    READ the node at the client's hint; while its next is not
 *            NULL, READ the next one (each extra READ is a round trip).
 *   The hint is the client's own: the last node it linked or believes is
 *   the tail.  Node layout: next at 0, key at 8, value id at 16 (the
 *   [clover.NAME] defaults), value_size bytes.
 *
 * The scheduler interleaves at random (seeded): the server executes its
 * queue in arrival order (one link), so many requests are in flight.
 */
#ifndef CLOVER_SIM_H
#define CLOVER_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "clover.h"

struct csim_params {
	unsigned int clients;      /* 1..1000 */
	unsigned int keys;
	unsigned int ops;          /* per client */
	unsigned int write_pct;    /* 50 = YCSB-A, 100 = write-only */
	double zipf;               /* 0 = uniform, else Zipf theta (e.g. 0.99) */
	uint32_t value_size;       /* node bytes (>= 24), <= 4096 */
	bool clover;               /* lib/clover in the path at all */
	bool write_steering;
	bool read_steering;
	uint32_t table_keys;       /* [clover] keys (0 = keys) */
	uint32_t read_factor;      /* [clover] read_factor (0 = 3) */
	uint32_t read_ways;        /* [clover] read_ways (0 = 1) */
	uint64_t seed;
	const char *steered_pcap;  /* every frame lib/clover rewrote (NULL = none) */
	bool tiny_tables;          /* 2-entry qp/cas tables: evictions everywhere */
};

/* What lib/clover did with the first READ of a GET (the cursor), and why. */
enum csim_get_class {
	CSIM_GET_STEERED,          /* redirected to the cached tail */
	CSIM_GET_AT_TAIL,          /* hit, already aimed at the cached tail */
	CSIM_GET_TAIL_UNKNOWN,     /* hit, but the key's tail was unsure */
	CSIM_GET_MISS_EVICTED,     /* miss: the address was learned, then overwritten */
	CSIM_GET_MISS_NEVER,       /* miss: the address was never learned */
	CSIM_GET_UNSTEERED,        /* read steering off (or no lib/clover) */
	CSIM_GET_NCLASS
};

struct csim_result {
	uint64_t puts, gets;
	uint64_t cas_sent, cas_failed;       /* tail CAS, and how many failed */
	uint64_t reads_sent;
	uint64_t gets_multi_rt;              /* GETs that needed > 1 READ */
	uint64_t round_trips;                /* every request: one round trip */
	uint64_t frames, rewritten;
	uint64_t ctr[CLOVER_COUNTER_NUM];
	/* diagnostics: [class][0] GETs, [class][1] of those needing > 1 READ */
	uint64_t get_class[CSIM_GET_NCLASS][2];
	uint64_t cursor_stale;               /* GET cursor not the key's tail when sent */
	uint64_t hint_samples;               /* snapshots of what clients hold: */
	uint64_t hint_distinct_sum;          /*   distinct cursors over all (client, key) */
	uint64_t hint_stale_sum;             /*   ... of which not their key's tail */
	double hint_oracle_sum;              /*   share of stale cursors a table of
						  keys x read_factor could hold at best */
	/* correctness */
	uint64_t lost_writes;                /* committed node not in its chain */
	uint64_t bad_reads;                  /* GET value never committed / wrong key */
	uint64_t chain_errors;               /* cycles, foreign nodes, orphan links */
	uint64_t bad_frames;                 /* a frame lib/roce would not parse */
	char err[256];
};

/* A RoCEv2 IPv4 frame (BTH, ext, payload, ICRC and checksum by lib/roce).
 * ips in network order.  Returns the length (0 on error). */
uint32_t csim_build(uint8_t *out, uint32_t src_ip, uint32_t dst_ip, uint32_t dqpn,
		    uint8_t opcode, uint32_t psn, const uint8_t *ext, uint32_t ext_len,
		    const uint8_t *pl, uint32_t plen);

/* Run one world to completion.  0, or -1 on a setup error (err filled). */
int csim_run(const struct csim_params *prm, struct csim_result *res);

#endif /* CLOVER_SIM_H */
