/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_stats.h — counters: plain uint64 per worker, summed on read.
 *
 * Why it exists: workers must share nothing on the hot path, so each owns
 * its counters and readers (telemetry thread, --stats-interval, the final
 * report) add them up.  One enumeration (sword_stats_foreach) defines every
 * counter name, so /sword/stats, --stats-json and the final print can never
 * disagree on keys.
 */
#ifndef SWORD_STATS_H
#define SWORD_STATS_H

#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>

#include "roce.h"
#include "sword_config.h"

#define SWORD_FN_MAX_COUNTERS 192

#define SWORD_FN_MAX_TIMED 4        /* >= SWORD_MAX_FNS (checked in sword_worker.c) */
#define SWORD_FN_SAMPLE_EVERY 64     /* power of two: 2 rdtsc per 64 frames */

struct sword_worker_stats {
	uint64_t rx;                 /* frames received from ports by this worker */
	uint64_t tx;                 /* frames handed to the NIC by this worker */
	uint64_t tx_dropped;         /* TX queue (or TX hand-off ring) full */
	uint64_t dispatched;         /* handed to the worker owning their server */
	uint64_t dispatch_dropped;   /* that worker's ring was full */
	uint64_t bypass_forgets;     /* a fail-over bypass: the functions forgot all */
	uint64_t bypass_dropped;     /* frames decided before such a bypass, not sent */
	uint64_t bypass_kept;        /* answers held while the links were down, then sent */
	uint64_t bypass_kept_resent; /* ... sent again: the port counted a TX error */
	uint64_t filtered;           /* dropped on a function's verdict */
	uint64_t passthrough;        /* forwarded unchanged */
	uint64_t rewritten;          /* forwarded after a function changed them */
	uint64_t consumed;           /* taken over by a function */
	uint64_t non_roce;
	uint64_t non_roce_by[ROCE_NOT_NUM];    /* by roce_status > 0 */
	uint64_t unmanaged;          /* well-formed RoCE, server not managed */
	uint64_t managed_rx;         /* well-formed RoCE to/from a managed server */
	uint64_t malformed;
	uint64_t malformed_by[ROCE_ERR_NUM];   /* by -roce_status */
	uint64_t capture_dropped;    /* pcapng copy failed or ring full */
	uint64_t proc_frames;        /* frames through sword_worker_process in the loop */
	uint64_t proc_cycles;        /* TSC cycles spent in it (latency per frame) */
	uint64_t opcode[256];        /* well-formed RoCE frames by BTH opcode */
	uint64_t port_rx[SWORD_MAX_PORTS];      /* by port slot (0 client, 1 server) */
	uint64_t port_tx[SWORD_MAX_PORTS];
	uint64_t port_tx_dropped[SWORD_MAX_PORTS];
	uint64_t fn[SWORD_FN_MAX_COUNTERS];     /* function-defined, see sword_fn_ops */
	/* per attached function (chain order): every SWORD_FN_SAMPLE_EVERY-th
	 * managed frame is timed around the function's process() */
	uint64_t fn_samples[SWORD_FN_MAX_TIMED];
	uint64_t fn_sample_cycles[SWORD_FN_MAX_TIMED];
	/* per managed server (config index), by its owner: /sword/servers */
	uint64_t server_managed_rx[SWORD_MAX_SERVERS];
	uint64_t server_rewritten[SWORD_MAX_SERVERS];
} __rte_cache_aligned;

/* Sum n worker stats into *sum (reads each field once, racy-but-atomic u64 loads). */
void sword_stats_sum(struct sword_worker_stats *sum,
		     const struct sword_worker_stats *const *w, unsigned int n);

/*
 * Call cb for every scalar counter of s, in a fixed order, with its
 * external name: rx, tx, dropped, tx_dropped, dispatched, dispatch_dropped,
 * bypass_forgets, bypass_dropped, bypass_kept, bypass_kept_resent, filtered, passthrough, rewritten, consumed, non_roce, non_roce_<reason>,
 * unmanaged, managed_rx, malformed, malformed_<reason> (every reason),
 * capture_dropped, proc_frames, proc_cycles, proc_ns_per_frame (average
 * processing time per frame, derived), opcode_0x.. (every valid opcode),
 * fn_<name> (function counters, names from the attached functions, if any).
 * Port counters are not scalars; see sword_daemon.
 */
typedef void (*sword_stats_cb)(void *arg, const char *key, uint64_t value);
void sword_stats_foreach(const struct sword_worker_stats *s, sword_stats_cb cb, void *arg);

/* Names of function counters, registered by sword_worker_attach_fn. */
void sword_stats_set_fn_names(unsigned int first, unsigned int n, const char *const *names);

static inline uint64_t
sword_stats_dropped(const struct sword_worker_stats *s)
{
	return s->tx_dropped + s->dispatch_dropped + s->bypass_dropped + s->filtered;
}

#endif /* SWORD_STATS_H */
