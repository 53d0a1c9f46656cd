/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_daemon.h — the running daemon: workers on lcores, their queues and
 * rings, the main-lcore housekeeping loop, shutdown drain, reports.
 *
 * Why it exists: main.c (like DPDK's l3fwd) only brings up EAL, ports and
 * lcores; how workers poll, hand frames to each other and transmit is here.
 *
 * Queue ownership (never two lcores on one queue):
 *   Each port slot has nq = min(workers, port's max queues) RX/TX queue
 *   pairs.  Worker w < nq owns queue w (polls RX, transmits on TX).  A
 *   worker w >= nq polls no RX queue on that port; it transmits through an
 *   MP/SC ring drained by the owner of queue (w % nq).
 *   So with net_pcap (one queue): worker 0 polls and dispatches, other
 *   workers only process the managed frames handed to them.
 * Dispatch: frames of a managed server received by a worker that does not
 *   own the server go through the owner's MP/SC hand-off ring
 *   (software dispatcher); rte_flow rules per server steer them to the
 *   owner's queue directly where the port supports it, so the software path
 *   is then only a fallback.
 * Capture: workers rte_pcapng_copy frames into per-worker SP/SC rings (no
 *   syscall on a worker); the main lcore writes them to the pcapng files.
 */
#ifndef SWORD_DAEMON_H
#define SWORD_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "sword_capture.h"
#include "sword_config.h"
#include "sword_worker.h"
#include "sword_kstats.h"

struct rte_pcapng;

/* Largest frame a packet mbuf holds: RoCE MTU 4096 + all headers (Ethernet,
 * VLAN, IPv6, UDP, BTH, extension headers, ICRC fit in 256). */
#define SWORD_FRAME_MAX (4096 + 256)

struct sword_port_slot {
	uint16_t port_id;
	uint16_t n_queues;          /* RX = TX queue pairs configured */
	const char *role;           /* "client", "server", "hairpin" */
	bool flow_steering;         /* rte_flow rules per server installed */
	bool final_valid;           /* final_eth captured before stop */
	struct rte_eth_stats final_eth;
	/* kernel-level drops under the PMD, read at the same time */
	struct sword_kstats final_k;
};

struct sword_lane;

struct sword_daemon {
	struct sword_config cfg;
	/* Shard maps: the one the workers use (shards_live) and a spare a
	 * live reload builds the next one in; a worker takes the new one
	 * between two bursts (cfg_gen), never mid-burst. */
	struct sword_shard_map shards;
	struct sword_shard_map shards_spare;
	struct sword_shard_map *shards_live;
	unsigned int n_polling;                     /* workers with RX queues */
	unsigned int n_workers;
	struct sword_worker *workers[SWORD_MAX_WORKERS];
	struct sword_lane *lanes[SWORD_MAX_WORKERS];
	unsigned int worker_lcore[SWORD_MAX_WORKERS];
	struct rte_mempool *pool;                   /* packet pool (set before setup) */
	unsigned int n_slots;                       /* 1 (one-port) or 2 */
	struct sword_port_slot slots[SWORD_MAX_PORTS];

	/* captures: the files on the main lcore, started and stopped by
	 * main.c or the telemetry thread under cap_lock */
	struct rte_mempool *capture_pool;           /* created at the first start */
	struct sword_capture cap[SWORD_CAP_NUM];
	struct sword_capture_limits cap_lim;
	pthread_mutex_t cap_lock;

	volatile int quit;                          /* set by signals / idle exit */
	volatile int reload;                        /* set by SIGHUP */
	/* called on the main lcore, between housekeeping rounds, after a
	 * SIGHUP (NULL: reload requests are ignored) */
	void (*on_reload)(struct sword_daemon *d);
	/* called on the main lcore every housekeeping round (about 1 ms;
	 * NULL: none): swordd's heartbeat and watchdog */
	void (*on_round)(struct sword_daemon *d);
	uint64_t loops_seen[SWORD_MAX_WORKERS];     /* sword_daemon_workers_progressed */
	uint64_t reloads, reloads_refused;          /* SIGHUPs applied, refused */
	uint32_t cfg_gen;                           /* bumped when live keys change */
	/* Live sections (issue #32): something RETIRING waits to be dropped
	 * (checked every retire_check_ms by sword_daemon_main_loop); the
	 * telemetry thread reads cfg's sections under cfg_lock while the
	 * main lcore changes them. */
	bool retiring;
	uint64_t retire_next_tsc;
	unsigned int retire_zero;                   /* consecutive checks at 0 */
	pthread_mutex_t cfg_lock;
	/* The last reload's outcome (main lcore writes, telemetry reads after
	 * reload_seq moved): 1 applied, 0 nothing to do, -1 refused. */
	uint64_t reload_seq;
	int reload_status;
	char reload_msg[1024];
	uint64_t start_tsc;
	bool running;                               /* lcores launched */
	/* A fail-over bypass's epoch (swordd's guardian bumps it when a hang
	 * set the links down; NULL: no bypass to follow).  Each worker
	 * forgets what it knows when it moves (sword_worker_forget) and drops
	 * the frames it had decided before; see sword_daemon_bypass_forgotten. */
	const uint32_t *bypass_epoch;
	/* The bypass epoch after which the links are up again (NULL with
	 * bypass_epoch): answers a worker kept while they were down go then. */
	const uint32_t *bypass_up;
};

/* The daemon instance (telemetry callbacks read it). */
extern struct sword_daemon sword_daemon;

/*
 * Prepare workers, lanes and rings for a validated config whose ports
 * (d->slots[], d->n_slots) are already configured and started.
 * Returns 0 or -1 with err filled.
 */
int sword_daemon_setup(struct sword_daemon *d, const struct sword_config *cfg,
		       char *err, size_t errlen);

/* Try rte_flow rules steering each managed server to its owner's queue
 * (logged per port: rules installed, or software dispatch). */
void sword_daemon_install_flows(struct sword_daemon *d);

/*
 * Start capturing direction dir into path (sword_capture.h: the overwrite
 * guard, d->cap_lim's limit and ring).  After setup; any thread (the
 * telemetry thread starts and stops captures at run time).  0, or -1 with
 * err (nothing started).
 */
int sword_daemon_capture_start(struct sword_daemon *d, enum sword_cap_dir dir,
			       const char *path, char *err, size_t errlen);

/* Stop capturing direction dir: what the workers already copied is written,
 * the file closed.  Any thread.  0, or -1 if it was not capturing. */
int sword_daemon_capture_stop(struct sword_daemon *d, enum sword_cap_dir dir);

/* lcore entry point: arg is d->lanes[i]. */
int sword_worker_loop(void *arg);

/* Has worker w's lcore entered sword_worker_loop (it polls from then on, or
 * has nothing to poll and returned)?  For readiness (sd_notify). */
bool sword_daemon_worker_started(const struct sword_daemon *d, unsigned int w);
/* Worker w's poll rounds so far (a round ends after its bursts), and
 * whether it polls at all: telemetry tells from them when every worker
 * has begun a burst after a flag was set (/sword/drain). */
uint64_t sword_daemon_worker_loops(const struct sword_daemon *d, unsigned int w);
bool sword_daemon_worker_polling(const struct sword_daemon *d, unsigned int w);

/* Has every polling worker gone round its loop since the last call that
 * returned true?  A wedged worker (or a stopped process) never makes it
 * true again.  Main lcore only; reads one counter per worker. */
bool sword_daemon_workers_progressed(struct sword_daemon *d);

/* The bypass epoch every polling worker has forgotten up to (*epoch), and
 * true if that is d->bypass_epoch's value now: the switch may carry the
 * servers' traffic through swordd again.  Main lcore. */
bool sword_daemon_bypass_forgotten(const struct sword_daemon *d, uint32_t *epoch);

/*
 * Apply the live keys of next (sword_config_reload_plan said yes) to the
 * running daemon: wait until every polling worker took the previous
 * change, write them into d->cfg, then wait until every polling worker has
 * run its functions' reconfigure between two bursts.  Main lcore only.
 * 0, or -1 if the daemon started quitting meanwhile.
 */
int sword_daemon_apply_live(struct sword_daemon *d, const struct sword_config *next);

/*
 * A reload that adds or removes [server/lock.NAME] sections
 * (sword_config_reload_plan said yes): merge next into the running config
 * (sword_config_reload_merge), let every attached function prepare for it
 * on this lcore (allocate, check room: a refusal changes nothing), build
 * the next shard map, then hand both to the workers between two bursts as
 * sword_daemon_apply_live does.  Sections next removes are RETIRING: the
 * functions stop deciding for them at once, and the main loop drops them
 * (sword_daemon_retire_poll) when nothing they decided is owed.  Main
 * lcore only.  0, or -1 with err (nothing changed).
 */
int sword_daemon_apply_reload(struct sword_daemon *d, const struct sword_config *next,
			      char *err, size_t errlen);

/* If something is RETIRING and nothing is owed for it any more, drop it
 * (workers first, then the config).  Main lcore.  Returns the number of
 * sections dropped. */
unsigned int sword_daemon_retire_poll(struct sword_daemon *d);

/* Main lcore loop until d->quit: capture writing, stats lines every
 * d->cfg.stats_interval seconds (read every round: SIGHUP may change it),
 * reload requests, idle exit. */
void sword_daemon_main_loop(struct sword_daemon *d, unsigned int idle_exit_s);
/* Sleep us microseconds on a non-worker thread, to an absolute deadline:
 * rte_delay_us_sleep restarts nanosleep with a remainder the kernel rounds
 * up by the timer slack, so under a storm of signals (net_tap raises one on
 * the main thread per frame it receives) a 1 ms sleep grew to seconds (a
 * SIGHUP reload applied 15 s late, e2e-live-config); this one cannot. */
void sword_sleep_us(unsigned int us);

/* After the worker lcores returned: process and transmit what is still in
 * the rings, flush capture, close capture files. */
void sword_daemon_drain(struct sword_daemon *d);

/* Record rte_eth_stats of every port (call before stopping ports). */
void sword_daemon_snapshot_ports(struct sword_daemon *d);

/* Totals over all workers. */
void sword_daemon_totals(const struct sword_daemon *d, struct sword_worker_stats *sum);

/* Final report: readable text / one JSON object. */
void sword_daemon_print(const struct sword_daemon *d, FILE *f);
int sword_daemon_write_json(const struct sword_daemon *d, FILE *f);

/* Free rings, pools, worker state. */
void sword_daemon_free(struct sword_daemon *d);

/* Register /sword/... telemetry commands. */
int sword_telemetry_register(struct sword_daemon *d);

#endif /* SWORD_DAEMON_H */
