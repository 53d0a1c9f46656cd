/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_peer.h — what the roles of roce-peer share: options, the memory
 * layout the lock workloads agree on with the server dump, latency
 * histograms.
 */
#ifndef SWORD_ROCE_PEER_H
#define SWORD_ROCE_PEER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "peer.h"

/* Default layout: lock words at the base of swordd's example lock region
 * (conf/swordd.conf [lock.table0]), records and bench words after it, in
 * the same MR but outside the lock region. */
#define RP_DEFAULT_RKEY 0x1234u
#define RP_DEFAULT_BASE 0x10000000ull
#define RP_DEFAULT_LEN 0x1000000ull
#define RP_LOCK_OFF 0x0ull
#define RP_RECORD_OFF 0x100000ull
#define RP_RECORD_STRIDE 64u
/* cas-bench atomics live in the lock region (swordd serves them with
 * atomic_replacement on): the shared FAA counter, then one CAS word per QP;
 * its 64-byte WRITE/READ areas are outside it */
#define RP_BENCH_OFF 0x8000ull
#define RP_BENCH_CAS_OFF 0x8008ull
#define RP_BENCH_MAX_QPS 4000u
#define RP_BENCH_PRIV_OFF 0x181000ull
#define RP_BENCH_PRIV_STRIDE 128u
#define RP_MAX_LOCKS 16384u
/* clover: key k's head node at CLOVER_OFF + k * NODE; QP g allocates its
 * nodes from CLOVER_OFF + (MAX_KEYS + g * SLOTS_PER_QP) * NODE.  A node is
 * {next pointer (BE va, 0 = end), key (8 bytes LE, as Clover), tag, seq,
 * padding}; a commit is CAS(tail.next, 0, new node). */
#define RP_CLOVER_OFF 0x200000ull
#define RP_CLOVER_NODE 64u
#define RP_CLOVER_MAX_KEYS 1024u
#define RP_CLOVER_SLOTS_PER_QP 2048u

enum rp_workload { WL_SHERMAN, WL_RCUCKOO, WL_CASBENCH, WL_CLOVER };

#define RP_MAX_RECONNECT_RANGES 16

struct rp_opts {
	const char *iface;
	uint32_t ip;            /* network order */
	uint32_t psn_seed;
	bool fixed_psn;         /* --initial-psn given: every QP starts at initial_psn */
	uint32_t initial_psn;
	uint32_t pmtu;
	uint32_t server_qpn_base, client_qpn_base;
	struct peer_faults faults;
	const char *json;
	double progress_s;
	double duration_s;
	bool quiet;
	/* server */
	uint32_t n_mrs;
	struct peer_mr mrs[PEER_MAX_MRS];
	uint32_t max_qps;
	enum peer_ack_mode ack_mode;
	uint32_t ack_k;
	uint32_t dump_locks;
	uint32_t dump_clover;   /* keys whose chains the server walks at exit */
	const char *ready_file;
	double atomic_unit_rate;    /* modelled RNIC atomic unit, atomics/s per word (0: off) */
	uint32_t atomic_unit_queue; /* frames held behind waiting atomics (0: library default) */
	/* client */
	uint32_t server_ip;
	uint8_t server_mac[6];
	bool have_server_mac;
	uint32_t client_id, n_qps, window;
	uint64_t rto_us;
	uint32_t max_retries;
	enum rp_workload workload;
	uint32_t locks;
	uint64_t ops_per_qp;    /* 0: run for duration */
	uint32_t rkey;
	uint64_t base;          /* MR base the layout offsets apply to */
	bool ackreq_all;
	uint64_t retry_storm;   /* consecutive failed acquires that count as a storm */
	uint32_t backoff_us;
	uint64_t reconnect_every; /* ops per QP between QP re-creations (0: never) */
	/* --reconnect-qps: the global QP indexes that re-create (ranges lo..hi);
	 * none given: every QP does */
	uint32_t n_reconnect_ranges;
	uint32_t reconnect_lo[RP_MAX_RECONNECT_RANGES], reconnect_hi[RP_MAX_RECONNECT_RANGES];
	bool read_before_acquire; /* lock workloads: READ record + CAS lock in one batch */
};

/* Out-of-band control socket: UDP on ip:port (port 0 = any), tiny receive
 * buffer, never read (both roles take the datagrams from their AF_PACKET
 * stream, in wire order).  Returns the fd and the bound port, or -1. */
int rp_ctl_socket(uint32_t ip, uint16_t port, uint16_t *bound_port);
int rp_ctl_send(int fd, uint32_t ip, uint16_t port, const struct peer_ctl_msg *m);

/* Latency histogram: 1 us buckets up to 100 ms, then one overflow bucket. */
#define LAT_BUCKETS 100001u
struct rp_lat {
	uint64_t n;
	uint64_t max_ns;
	uint32_t *b;
};
void lat_init(struct rp_lat *l);
void lat_free(struct rp_lat *l);
void lat_add(struct rp_lat *l, uint64_t ns);
double lat_pct_us(const struct rp_lat *l, double pct);

int rp_server(const struct rp_opts *o);
int rp_client(const struct rp_opts *o);

extern volatile int rp_stop;

#endif /* SWORD_ROCE_PEER_H */
