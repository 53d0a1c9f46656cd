/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_daemon.c — worker lcore loop, hand-off and TX rings, main-lcore
 * housekeeping (capture, stats lines, idle exit), shutdown drain, reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "sword_daemon.h"
#include "sword_log.h"

struct sword_daemon sword_daemon;

#define HANDOFF_RING_SIZE 4096
#define TX_RING_SIZE 4096
#define CAPTURE_RING_SIZE 4096
#define CAPTURE_POOL_SIZE 8191
#define CAPTURE_BURST 64

struct sword_lane_rx {
	uint16_t port;
	uint16_t queue;
	uint8_t slot;
};

/* Answers a lane keeps while a bypass has its links down (lane_forget),
 * and the tries at sending them once the links are up (lane_send_kept). */
#define SWORD_KEPT_MAX 512
#define SWORD_KEPT_TRIES 3

/* One worker's view of queues and rings.  Only its lcore touches it while
 * running (the main lcore after the lcores returned, for the drain). */
struct sword_lane {
	struct sword_worker *w;
	struct sword_daemon *d;
	uint16_t burst;
	unsigned int n_rx;
	struct sword_lane_rx rx[SWORD_MAX_PORTS];
	uint16_t port[SWORD_MAX_PORTS];          /* port id per slot */
	int txq[SWORD_MAX_PORTS];                /* owned TX queue per slot, or -1 */
	struct rte_ring *tx_to_owner[SWORD_MAX_PORTS];  /* when txq < 0 */
	struct rte_ring *tx_ring_in[SWORD_MAX_PORTS];   /* others' frames for our queue */
	struct rte_ring *handoff_in;             /* frames of servers we own */
	struct rte_ring *handoff_to[SWORD_MAX_WORKERS];
	/* pcapng copies to the main lcore: cap[] is what the worker uses
	 * (atomic: NULL while that capture is off), cap_ring[] what it owns */
	struct rte_ring *cap[SWORD_CAP_NUM];
	struct rte_ring *cap_ring[SWORD_CAP_NUM];
	struct rte_mempool *cap_pool;
	bool has_handoff;                        /* handoff_to[] may be used */
	bool flush_per_burst;                    /* else one flush per poll */
	struct sword_tx_batch batch;
	bool started;                            /* its lcore entered the loop function */
	bool polling;                            /* in its loop (reload waits) */
	uint32_t cfg_gen_seen;                   /* d->cfg_gen last reconfigured to */
	uint32_t bypass_seen;                    /* *d->bypass_epoch last forgotten */
	/* answers taken from the old life's last frames while the links were
	 * down, sent once they are up (lane_forget) */
	uint16_t n_kept;
	struct rte_mbuf *kept[SWORD_KEPT_MAX];
	uint64_t loops;                          /* loop rounds: the main lcore's heartbeat */
} __rte_cache_aligned;

/* Has a fail-over bypass begun since this lane last forgot (a plain load
 * on x86; false without a guardian)? */
static inline bool
bypass_moved(const struct sword_lane *ln)
{
	const uint32_t *e = ln->d->bypass_epoch;

	return unlikely(e != NULL && __atomic_load_n(e, __ATOMIC_ACQUIRE) != ln->bypass_seen);
}

static inline bool
quitting(const struct sword_daemon *d)
{
	return __atomic_load_n(&d->quit, __ATOMIC_RELAXED) != 0;
}

/* ---------------------------------------------------------------------- */
/* Setup */

static struct rte_ring *
mk_ring(const char *what, unsigned int a, unsigned int b, unsigned int size,
	int socket, unsigned int flags)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "sw_%s_%u_%u", what, a, b);
	return rte_ring_create(name, size, socket, flags);
}

/*
 * Worker w runs on the w-th worker lcore (main.c launches it there), so its
 * state, its functions' tables and the rings it reads live on that lcore's
 * NUMA socket, not on the main lcore's.
 */
static void
assign_lcores(struct sword_daemon *d)
{
	unsigned int w = 0, lcore;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (w >= d->n_workers)
			break;
		d->worker_lcore[w++] = lcore;
	}
	for (; w < d->n_workers; w++)      /* too few lcores: main.c refuses to run */
		d->worker_lcore[w] = rte_get_main_lcore();
}

static int
worker_socket(const struct sword_daemon *d, unsigned int w)
{
	unsigned int sock = rte_lcore_to_socket_id(d->worker_lcore[w]);

	return sock == (unsigned int)SOCKET_ID_ANY ? (int)rte_socket_id() : (int)sock;
}

int
sword_daemon_setup(struct sword_daemon *d, const struct sword_config *cfg,
		   char *err, size_t errlen)
{
	unsigned int w, s, o, n_polling = 0;
	bool need_handoff = false;
	struct rte_ring *txr[SWORD_MAX_PORTS][SWORD_MAX_WORKERS];

	memset(txr, 0, sizeof(txr));
	d->cfg = *cfg;
	pthread_mutex_init(&d->cap_lock, NULL);
	pthread_mutex_init(&d->cfg_lock, NULL);
	d->cap[SWORD_CAP_RX].fd = d->cap[SWORD_CAP_TX].fd = -1;
	if (d->cap_lim.files == 0) {
		d->cap_lim.files = SWORD_CAPTURE_FILES_DEFAULT;
		d->cap_lim.max_bytes = (uint64_t)SWORD_CAPTURE_MAX_MB_DEFAULT << 20;
	}
	d->n_workers = cfg->workers;
	sword_shard_map_build(&d->shards, &d->cfg);
	d->shards_live = &d->shards;
	assign_lcores(d);

	for (w = 0; w < d->n_workers; w++) {
		struct sword_worker *wk;
		struct sword_lane *ln;

		wk = rte_zmalloc_socket("sword_worker", sizeof(*wk), RTE_CACHE_LINE_SIZE,
					worker_socket(d, w));
		ln = rte_zmalloc_socket("sword_lane", sizeof(*ln), RTE_CACHE_LINE_SIZE,
					worker_socket(d, w));
		if (wk == NULL || ln == NULL) {
			snprintf(err, errlen, "out of memory for worker %u", w);
			return -1;
		}
		sword_worker_init(wk, &d->cfg, &d->shards, w);
		wk->pool = d->pool;
		wk->daemon_priv = ln;
		ln->w = wk;
		ln->d = d;
		ln->burst = cfg->burst;
		d->workers[w] = wk;
		d->lanes[w] = ln;
	}

	for (s = 0; s < d->n_slots; s++) {
		uint16_t nq = d->slots[s].n_queues;

		for (w = 0; w < d->n_workers; w++) {
			struct sword_lane *ln = d->lanes[w];

			ln->port[s] = d->slots[s].port_id;
			if (w < nq) {
				ln->rx[ln->n_rx].port = d->slots[s].port_id;
				ln->rx[ln->n_rx].queue = (uint16_t)w;
				ln->rx[ln->n_rx].slot = (uint8_t)s;
				ln->n_rx++;
				ln->txq[s] = (int)w;
				continue;
			}
			/* No queue of our own on this port: TX via the owner's ring. */
			ln->txq[s] = -1;
			o = w % nq;
			if (txr[s][o] == NULL) {
				/* read by its owner o: on o's socket */
				txr[s][o] = mk_ring("tx", s, o, TX_RING_SIZE,
						    worker_socket(d, o), RING_F_SC_DEQ);
				if (txr[s][o] == NULL) {
					snprintf(err, errlen, "cannot create TX ring: %s",
						 rte_strerror(rte_errno));
					return -1;
				}
				d->lanes[o]->tx_ring_in[s] = txr[s][o];
			}
			ln->tx_to_owner[s] = txr[s][o];
		}
	}

	/*
	 * A worker without an RX queue (more workers than a port has queues)
	 * only ever sees hand-offs.  Owning a server there would bounce all its
	 * frames through two rings and a second core for nothing, so servers
	 * not pinned in the config ([server.X] worker) go round robin over the
	 * workers that receive: those are 0..n_polling-1.
	 */
	for (w = 0; w < d->n_workers; w++)
		if (d->lanes[w]->n_rx > 0)
			n_polling++;
	{
		unsigned int i;

		d->n_polling = n_polling;
		if (n_polling > 0 && n_polling < d->n_workers && cfg->n_servers > 0) {
			/* in the config, so that the functions (which take their
			 * servers' state from it) agree with the shard map */
			for (i = 0; i < cfg->n_servers; i++)
				if (cfg->servers[i].worker < 0)
					d->cfg.servers[i].owner = (int16_t)(i % n_polling);
			sword_shard_map_build(&d->shards, &d->cfg);
			SWORD_LOG(INFO, "%u of %u workers have RX queues: servers without a "
				  "[server] worker go round robin over those", n_polling,
				  d->n_workers);
		}
	}

	/* Hand-off rings only matter when frames can reach a worker that does
	 * not own their server (several receive, or a server is pinned to one
	 * that does not), and only for workers that own a server. */
	/* With several workers receiving, a server a reload adds may be any
	 * of theirs: each has its ring from the start (a reload cannot give
	 * the others a ring to one that has none). */
	for (s = 0; s < cfg->n_servers; s++)
		need_handoff |= d->n_workers > 1 && (n_polling > 1 || d->shards.owner[s] != 0);
	need_handoff |= d->n_workers > 1 && n_polling > 1;
	if (need_handoff) {
		for (w = 0; w < d->n_workers; w++) {
			unsigned int i;
			bool owns = n_polling > 1 && d->lanes[w]->n_rx > 0;

			for (i = 0; i < cfg->n_servers; i++)
				owns |= d->shards.owner[i] == w;
			if (!owns)
				continue;
			d->lanes[w]->handoff_in = mk_ring("ho", w, 0, HANDOFF_RING_SIZE,
							  worker_socket(d, w), RING_F_SC_DEQ);
			if (d->lanes[w]->handoff_in == NULL) {
				snprintf(err, errlen, "cannot create hand-off ring: %s",
					 rte_strerror(rte_errno));
				return -1;
			}
		}
		for (w = 0; w < d->n_workers; w++) {
			for (o = 0; o < d->n_workers; o++)
				d->lanes[w]->handoff_to[o] = d->lanes[o]->handoff_in;
			d->lanes[w]->has_handoff = true;
		}
	}

	/*
	 * HOOK (features): the function chain of every worker.  An enabled
	 * feature whose implementation was registered (sword_feature_register,
	 * e.g. lib/serializer for atomic_replacement) is attached to each
	 * worker; otherwise managed traffic passes through unchanged
	 * (counted managed_rx).
	 */
	{
		const bool on[SWORD_FEATURE_NUM] = {
			[SWORD_FEATURE_ATOMIC_REPLACEMENT] = cfg->atomic_replacement,
			[SWORD_FEATURE_REMAPPING] = cfg->remapping,
			[SWORD_FEATURE_CLOVER] = cfg->clover,
		};
		unsigned int f;

		for (f = 0; f < SWORD_FEATURE_NUM; f++) {
			const struct sword_fn_ops *ops = sword_feature_ops(f);

			if (!on[f])
				continue;
			if (ops == NULL) {
				SWORD_LOG(WARNING, "features.%s = on, but this build has no "
					  "implementation: managed traffic passes through "
					  "unchanged", sword_feature_name(f));
				continue;
			}
			for (w = 0; w < d->n_workers; w++)
				if (sword_worker_attach_fn(d->workers[w], ops,
							   worker_socket(d, w)) < 0) {
					snprintf(err, errlen, "features.%s: cannot attach to "
						 "worker %u", sword_feature_name(f), w);
					return -1;
				}
			SWORD_LOG(INFO, "features.%s attached to %u worker(s)",
				  sword_feature_name(f), d->n_workers);
		}
	}

	/* One TX flush per poll (each side's frames of all RX queues in one
	 * tx_burst) unless the batch could overflow: hand-off arrays hold one
	 * burst, and functions may add frames of their own. */
	for (w = 0; w < d->n_workers; w++)
		d->lanes[w]->flush_per_burst = d->lanes[w]->has_handoff ||
			d->workers[w]->n_fn > 0;

	for (s = 0; s < d->n_slots; s++)
		SWORD_LOG(INFO, "port %u (%s): %u queue(s) for %u worker(s)%s",
			  d->slots[s].port_id, d->slots[s].role, d->slots[s].n_queues,
			  d->n_workers, d->slots[s].n_queues < d->n_workers
			  ? "; workers without a queue transmit through the owner's ring" : "");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* rte_flow steering per managed server */

static struct rte_flow *
flow_server(uint16_t port, uint32_t ip, bool by_dst, uint16_t queue, bool validate_only,
	    struct rte_flow_error *fe)
{
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_ipv4 ip_spec = { 0 }, ip_mask = { 0 };
	struct rte_flow_item_udp udp_spec = { 0 }, udp_mask = { 0 };
	struct rte_flow_action_queue q = { .index = queue };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &ip_spec, .mask = &ip_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp_spec, .mask = &udp_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};

	if (by_dst) {
		ip_spec.hdr.dst_addr = ip;
		ip_mask.hdr.dst_addr = RTE_BE32(0xffffffff);
	} else {
		ip_spec.hdr.src_addr = ip;
		ip_mask.hdr.src_addr = RTE_BE32(0xffffffff);
	}
	udp_spec.hdr.dst_port = RTE_BE16(ROCE_UDP_PORT);
	udp_mask.hdr.dst_port = RTE_BE16(0xffff);
	if (validate_only)
		return rte_flow_validate(port, &attr, pattern, actions, fe) == 0
			? (struct rte_flow *)1 : NULL;
	return rte_flow_create(port, &attr, pattern, actions, fe);
}

void
sword_daemon_install_flows(struct sword_daemon *d)
{
	unsigned int s, i, dir;

	for (s = 0; s < d->n_slots; s++) {
		struct sword_port_slot *ps = &d->slots[s];
		struct rte_flow_error fe;
		bool ok = true;

		ps->flow_steering = false;
		if (d->cfg.n_servers == 0 || d->n_workers == 1)
			continue;
		if (ps->n_queues < d->n_workers) {
			SWORD_LOG_TO(flow, INFO, "port %u: %u queue(s) < %u workers: software dispatch",
				  ps->port_id, ps->n_queues, d->n_workers);
			continue;
		}
		memset(&fe, 0, sizeof(fe));
		for (i = 0; i < d->cfg.n_servers && ok; i++)
			for (dir = 0; dir < 2 && ok; dir++)
				ok = flow_server(ps->port_id, d->cfg.servers[i].ip, dir == 0,
						 d->shards.owner[i], true, &fe) != NULL;
		if (!ok) {
			SWORD_LOG_TO(flow, INFO, "port %u: rte_flow not usable (%s): software dispatch",
				  ps->port_id, fe.message ? fe.message : rte_strerror(rte_errno));
			continue;
		}
		for (i = 0; i < d->cfg.n_servers && ok; i++)
			for (dir = 0; dir < 2 && ok; dir++)
				ok = flow_server(ps->port_id, d->cfg.servers[i].ip, dir == 0,
						 d->shards.owner[i], false, &fe) != NULL;
		if (!ok) {
			SWORD_LOG_TO(flow, WARNING, "port %u: rte_flow_create failed (%s): flushing, "
				  "software dispatch", ps->port_id,
				  fe.message ? fe.message : rte_strerror(rte_errno));
			rte_flow_flush(ps->port_id, &fe);
			continue;
		}
		ps->flow_steering = true;
		SWORD_LOG_TO(flow, INFO, "port %u: rte_flow steers %u server(s) to their workers "
			  "(software dispatch stays as fallback)", ps->port_id,
			  d->cfg.n_servers);
	}
}

/* ---------------------------------------------------------------------- */
/* Capture */

static void cap_clock_init(void);

/* Frames a worker copied after its capture was stopped, or before it was
 * started again: nobody wants them. */
static void
capture_discard_ring(struct rte_ring *r)
{
	struct rte_mbuf *pkts[CAPTURE_BURST];
	unsigned int n;

	if (r == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(r, (void **)pkts, CAPTURE_BURST, NULL)) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
}

/* Pool and rings exist from the first start to the end: a worker may still
 * hold a ring it loaded just before a stop. */
static int
capture_resources(struct sword_daemon *d, enum sword_cap_dir dir, char *err, size_t errlen)
{
	int socket = (int)rte_socket_id();
	unsigned int w;

	if (d->capture_pool == NULL) {
		cap_clock_init();
		d->capture_pool = rte_pktmbuf_pool_create("sword_capture", CAPTURE_POOL_SIZE,
			RTE_MEMPOOL_CACHE_MAX_SIZE, 0,
			rte_pcapng_mbuf_size(SWORD_FRAME_MAX), socket);
		if (d->capture_pool == NULL) {
			snprintf(err, errlen, "cannot create capture mbuf pool: %s",
				 rte_strerror(rte_errno));
			return -1;
		}
	}
	for (w = 0; w < d->n_workers; w++) {
		struct sword_lane *ln = d->lanes[w];

		ln->cap_pool = d->capture_pool;
		if (ln->cap_ring[dir] != NULL)
			continue;
		ln->cap_ring[dir] = mk_ring(dir == SWORD_CAP_RX ? "ci" : "co", w, 0,
					    CAPTURE_RING_SIZE, socket,
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ln->cap_ring[dir] == NULL) {
			snprintf(err, errlen, "cannot create capture ring: %s",
				 rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

static void
capture_publish(struct sword_daemon *d, enum sword_cap_dir dir, bool on)
{
	unsigned int w;

	for (w = 0; w < d->n_workers; w++)
		__atomic_store_n(&d->lanes[w]->cap[dir], on ? d->lanes[w]->cap_ring[dir] : NULL,
				 __ATOMIC_RELEASE);
}

int
sword_daemon_capture_start(struct sword_daemon *d, enum sword_cap_dir dir,
			   const char *path, char *err, size_t errlen)
{
	struct sword_capture *c = &d->cap[dir];
	unsigned int w;
	int rc = -1;

	pthread_mutex_lock(&d->cap_lock);
	if (c->pcapng != NULL) {
		snprintf(err, errlen, "already capturing %s to %s: stop it first",
			 sword_cap_dir_name[dir], c->path);
		goto out;
	}
	/* a full capture keeps its file until it is stopped: the frames it
	 * holds are what an operator asked for and has not read yet */
	if (strcmp(d->cap[!dir].path, path) == 0 &&
	    (d->cap[!dir].pcapng != NULL || d->cap[!dir].full)) {
		snprintf(err, errlen, "%s: already the %s capture%s", path,
			 sword_cap_dir_name[!dir], d->cap[!dir].full ? " (full)" : "");
		goto out;
	}
	if (sword_capture_check_path(path, &d->cap_lim, err, errlen) < 0 ||
	    capture_resources(d, dir, err, errlen) < 0)
		goto out;
	for (w = 0; w < d->n_workers; w++)
		capture_discard_ring(d->lanes[w]->cap_ring[dir]);
	c->frames = c->write_errors = c->rotations = 0;
	if (sword_capture_file_open(c, path, err, errlen) < 0)
		goto out;
	capture_publish(d, dir, true);
	SWORD_LOG(INFO, "capture %s: writing %s (at most %" PRIu64 " MB per file, %u file(s))",
		  sword_cap_dir_name[dir], c->path, d->cap_lim.max_bytes >> 20,
		  d->cap_lim.files);
	rc = 0;
out:
	pthread_mutex_unlock(&d->cap_lock);
	return rc;
}

/* Under cap_lock. */
static void
capture_drain_dir(struct sword_daemon *d, enum sword_cap_dir dir)
{
	struct sword_capture *c = &d->cap[dir];
	struct rte_mbuf *pkts[CAPTURE_BURST];
	unsigned int w, n, taken;

	for (w = 0; w < d->n_workers; w++) {
		struct rte_ring *r = d->lanes[w]->cap_ring[dir];

		if (r == NULL)
			continue;
		/* at most one ring's worth under cap_lock: workers refill the
		 * ring as fast as we write, and /sword/capture waits on the
		 * lock (CI saw its query time out while a drain never ended) */
		for (taken = 0; taken < CAPTURE_RING_SIZE &&
		     (n = rte_ring_dequeue_burst(r, (void **)pkts, CAPTURE_BURST,
						 NULL)) > 0; taken += n) {
			/* rte_pcapng_write_packets() copies into the file and
			 * leaves the mbufs to us (as dpdk-dumpcap frees them) */
			if (!sword_capture_write(c, &d->cap_lim, pkts, n))
				capture_publish(d, dir, false);
			rte_pktmbuf_free_bulk(pkts, n);
		}
	}
}

static void
capture_stop_locked(struct sword_daemon *d, enum sword_cap_dir dir)
{
	struct sword_capture *c = &d->cap[dir];

	capture_publish(d, dir, false);
	capture_drain_dir(d, dir);
	if (c->pcapng != NULL)
		SWORD_LOG(INFO, "capture %s: %s closed: %" PRIu64 " frame(s), %" PRIu64
			  " rotation(s)", sword_cap_dir_name[dir], c->path, c->frames,
			  c->rotations);
	sword_capture_file_close(c);
}

int
sword_daemon_capture_stop(struct sword_daemon *d, enum sword_cap_dir dir)
{
	int rc = 0;

	pthread_mutex_lock(&d->cap_lock);
	if (d->cap[dir].pcapng == NULL && !d->cap[dir].full)
		rc = -1;
	else
		capture_stop_locked(d, dir);
	d->cap[dir].full = false;
	pthread_mutex_unlock(&d->cap_lock);
	return rc;
}

/*
 * Wall-clock time of capture.  DPDK 22.11's rte_pcapng converts TSC to ns
 * with a clock calibrated before the EAL knows the TSC rate (timestamps
 * land in the 23rd century), so we stamp the Enhanced Packet Block
 * ourselves: ns = wall clock at open + TSC delta.
 */
static struct {
	uint64_t tsc0;
	uint64_t ns0;
	uint64_t hz;
} cap_clock;

static void
cap_clock_init(void)
{
	struct timespec ts;

	cap_clock.hz = rte_get_tsc_hz();
	cap_clock.tsc0 = rte_get_tsc_cycles();
	clock_gettime(CLOCK_REALTIME, &ts);
	cap_clock.ns0 = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
cap_clock_ns(uint64_t tsc)
{
	uint64_t d = tsc - cap_clock.tsc0;

	return cap_clock.ns0 + d / cap_clock.hz * NS_PER_S +
	       d % cap_clock.hz * NS_PER_S / cap_clock.hz;
}

/* pcapng Enhanced Packet Block header (what rte_pcapng_copy prepends). */
struct epb_hdr {
	uint32_t block_type;
	uint32_t block_length;
	uint32_t interface_id;
	uint32_t timestamp_hi;
	uint32_t timestamp_lo;
} __rte_packed;

/*
 * On a worker: pcapng copies of pkts[0..n) into copies[] (NULL where the
 * capture pool ran dry).  No syscall.
 */
static inline void
capture_copy(struct sword_lane *ln, uint16_t port, uint16_t queue,
	     struct rte_mbuf **pkts, uint16_t n, enum rte_pcapng_direction dir,
	     struct rte_mbuf **copies)
{
	uint64_t now = rte_get_tsc_cycles();
	uint64_t ns = cap_clock_ns(now);
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *c = rte_pcapng_copy(port, queue, pkts[i], ln->cap_pool,
						     UINT32_MAX, now, dir);
		if (c != NULL) {
			struct epb_hdr *epb = rte_pktmbuf_mtod(c, struct epb_hdr *);

			epb->timestamp_hi = (uint32_t)(ns >> 32);
			epb->timestamp_lo = (uint32_t)ns;
		}
		copies[i] = c;
	}
}

/* Queue copies[0..keep) for the main lcore, free copies[keep..n). */
static inline void
capture_commit(struct sword_lane *ln, struct rte_ring *r, struct rte_mbuf **copies,
	       uint16_t keep, uint16_t n)
{
	uint16_t i, k = 0, q;

	for (i = 0; i < n; i++) {
		if (copies[i] == NULL)
			continue;
		if (i < keep)
			copies[k++] = copies[i];
		else
			rte_pktmbuf_free(copies[i]);
	}
	q = (uint16_t)rte_ring_enqueue_burst(r, (void **)copies, k, NULL);
	if (q < k)
		rte_pktmbuf_free_bulk(&copies[q], k - q);
	ln->w->stats.capture_dropped += keep - q;
}

static void
capture_drain(struct sword_daemon *d)
{
	enum sword_cap_dir dir;

	if (d->capture_pool == NULL)
		return;
	pthread_mutex_lock(&d->cap_lock);
	for (dir = 0; dir < SWORD_CAP_NUM; dir++)
		if (d->cap[dir].pcapng != NULL)
			capture_drain_dir(d, dir);
		else
			for (unsigned int w = 0; w < d->n_workers; w++)
				capture_discard_ring(d->lanes[w]->cap_ring[dir]);
	pthread_mutex_unlock(&d->cap_lock);
}

/* ---------------------------------------------------------------------- */
/* Worker loop */

/* Transmit on a port slot: our own queue, or the queue owner's ring. */
static inline void
lane_tx(struct sword_lane *ln, unsigned int slot, struct rte_mbuf **pkts, uint16_t n)
{
	struct sword_worker_stats *st = &ln->w->stats;
	uint16_t sent;

	if (n == 0)
		return;
	if (likely(ln->txq[slot] >= 0)) {
		struct rte_ring *cap = __atomic_load_n(&ln->cap[SWORD_CAP_TX],
						       __ATOMIC_ACQUIRE);

		if (unlikely(cap != NULL)) {
			/* copy before the PMD may free them; keep only what was sent */
			struct rte_mbuf *copies[SWORD_TX_BATCH_MAX];

			capture_copy(ln, ln->port[slot], (uint16_t)ln->txq[slot], pkts, n,
				     RTE_PCAPNG_DIRECTION_OUT, copies);
			sent = rte_eth_tx_burst(ln->port[slot], (uint16_t)ln->txq[slot],
						pkts, n);
			capture_commit(ln, cap, copies, sent, n);
		} else {
			sent = rte_eth_tx_burst(ln->port[slot], (uint16_t)ln->txq[slot],
						pkts, n);
		}
		st->tx += sent;
		st->port_tx[slot] += sent;
	} else {
		sent = (uint16_t)rte_ring_enqueue_burst(ln->tx_to_owner[slot],
							(void **)pkts, n, NULL);
	}
	if (unlikely(sent < n)) {
		st->tx_dropped += n - sent;
		st->port_tx_dropped[slot] += n - sent;
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
	}
}

/*
 * The bypass case of lane_flush: what the lane decided from frames that
 * came before the bypass.  Answers to clients go out once the links are
 * up again: each answers a request sent before it, the server's answer or
 * one swordd could give then (a late answer is still that request's, as
 * one the network held as long).  Requests to the server
 * are dropped: one decided then (a grant's blind WRITE) could land after
 * the traffic that went around swordd moved the word on (a release and
 * a new holder: two holders); the clients resend them.  Frames for other
 * workers are dropped too (they forget as well).
 */
static void
lane_release_answers(struct sword_lane *ln)
{
	struct sword_tx_batch *b = &ln->batch;
	struct sword_worker *w = ln->w;
	unsigned int o, i;

	/* The links are down until every worker forgot (app/swordd/links.c):
	 * sent now, the answers would be lost, and once forgotten nothing
	 * could give them again (a grant's WRITE ran at the server).  They
	 * are kept and go when the links are up (lane_send_kept), as if the
	 * network had held them that long.  Past SWORD_KEPT_MAX: dropped. */
	for (i = 0; i < b->n[SWORD_SIDE_CLIENT]; i++) {
		if (ln->n_kept < SWORD_KEPT_MAX) {
			ln->kept[ln->n_kept++] = b->pkts[SWORD_SIDE_CLIENT][i];
		} else {
			rte_pktmbuf_free(b->pkts[SWORD_SIDE_CLIENT][i]);
			w->stats.bypass_dropped++;
		}
	}
	rte_pktmbuf_free_bulk(b->pkts[SWORD_SIDE_SERVER], b->n[SWORD_SIDE_SERVER]);
	w->stats.bypass_dropped += b->n[SWORD_SIDE_SERVER];
	for (o = 0; ln->has_handoff && o < w->n_workers; o++) {
		rte_pktmbuf_free_bulk(b->handoff[o], b->n_handoff[o]);
		w->stats.bypass_dropped += b->n_handoff[o];
	}
	sword_tx_batch_reset(b);
}

static inline void
lane_flush(struct sword_lane *ln)
{
	struct sword_tx_batch *b = &ln->batch;
	struct sword_worker *w = ln->w;
	unsigned int side, o;

	/* The process stopped in the middle of this burst and the switch
	 * carried the traffic around it meanwhile: the requests decided here
	 * are stale (lane_release_answers); the worker forgets before it
	 * sees the clients' copies (sword_worker_loop, lane_forget). */
	if (bypass_moved(ln)) {
		lane_release_answers(ln);
		return;
	}
	for (side = 0; side < SWORD_SIDE_NUM; side++)
		lane_tx(ln, sword_worker_slot_of_side(w, side), b->pkts[side], b->n[side]);
	b->n[SWORD_SIDE_CLIENT] = b->n[SWORD_SIDE_SERVER] = 0;
	if (!ln->has_handoff)
		return;
	for (o = 0; o < w->n_workers; o++) {
		uint16_t n = b->n_handoff[o], q;

		if (n == 0)
			continue;
		q = ln->handoff_to[o] == NULL ? 0 :
			(uint16_t)rte_ring_enqueue_burst(ln->handoff_to[o],
							 (void **)b->handoff[o], n, NULL);
		if (unlikely(q < n)) {
			w->stats.dispatched -= n - q;
			w->stats.dispatch_dropped += n - q;
			rte_pktmbuf_free_bulk(&b->handoff[o][q], n - q);
		}
	}
	sword_tx_batch_reset(b);
}

/* One pass over everything a lane polls.  Returns frames handled. */
static inline unsigned int
lane_poll(struct sword_lane *ln)
{
	struct rte_mbuf *pkts[SWORD_MAX_BURST];
	struct sword_worker *w = ln->w;
	unsigned int i, total = 0;
	uint64_t t0;
	uint16_t n;

	for (i = 0; i < ln->n_rx; i++) {
		const struct sword_lane_rx *rx = &ln->rx[i];

		n = rte_eth_rx_burst(rx->port, rx->queue, pkts, ln->burst);
		if (n == 0)
			continue;
		w->stats.rx += n;
		w->stats.port_rx[rx->slot] += n;
		struct rte_ring *cap = __atomic_load_n(&ln->cap[SWORD_CAP_RX],
						       __ATOMIC_ACQUIRE);

		if (unlikely(cap != NULL)) {
			struct rte_mbuf *copies[SWORD_MAX_BURST];

			capture_copy(ln, rx->port, rx->queue, pkts, n,
				     RTE_PCAPNG_DIRECTION_IN, copies);
			capture_commit(ln, cap, copies, n, n);
		}
		t0 = rte_rdtsc();
		sword_worker_process(w, rx->port, pkts, n, &ln->batch);
		w->stats.proc_cycles += rte_rdtsc() - t0;
		w->stats.proc_frames += n;
		if (ln->flush_per_burst)
			lane_flush(ln);
		total += n;
	}
	if (!ln->flush_per_burst && total > 0)
		lane_flush(ln);
	if (ln->handoff_in != NULL) {
		n = (uint16_t)rte_ring_dequeue_burst(ln->handoff_in, (void **)pkts,
						     ln->burst, NULL);
		if (n > 0) {
			t0 = rte_rdtsc();
			sword_worker_process(w, SWORD_PORT_FROM_MBUF, pkts, n, &ln->batch);
			w->stats.proc_cycles += rte_rdtsc() - t0;
			w->stats.proc_frames += n;
			lane_flush(ln);
			total += n;
		}
	}
	for (i = 0; i < SWORD_MAX_PORTS; i++) {
		if (ln->tx_ring_in[i] == NULL)
			continue;
		n = (uint16_t)rte_ring_dequeue_burst(ln->tx_ring_in[i], (void **)pkts,
						     ln->burst, NULL);
		if (n > 0) {
			lane_tx(ln, i, pkts, n);
			total += n;
		}
	}
	return total;
}

/* Bursts of its RX queues a lane takes, at most, to end a life (a queue
 * holds frames from before the links went down only: none come after). */
#define BYPASS_DRAIN_BURSTS 64

/*
 * A fail-over bypass began (the guardian set the links down while this
 * process made no progress): the servers' traffic went around swordd, so
 * the lock words and connections the functions know may have changed
 * unseen.  First the frames that reached the ports before the links went
 * down, the old life's last: decided on what it knew, their answers go to
 * the clients (the server's ACK of a grant's WRITE becomes its ATOMIC
 * ACK: without it that client would wait on an answer nothing can give
 * any more), their requests are dropped (lane_release_answers).  Then
 * forget it all, as an empty start would, before the next frame; and drop
 * what other workers decided before and left in the rings to this one (a
 * software ring, unlike a NIC's, does not drain while the process is
 * stopped).  Then say so: the links come up again only once every worker
 * has (sword_daemon_bypass_forgotten).
 */
static void
lane_forget(struct sword_lane *ln)
{
	const uint32_t epoch = __atomic_load_n(ln->d->bypass_epoch, __ATOMIC_ACQUIRE);
	struct rte_mbuf *pkts[SWORD_MAX_BURST];
	unsigned int i, k;
	unsigned int n;

	lane_release_answers(ln);
	for (i = 0; i < ln->n_rx; i++) {
		const struct sword_lane_rx *rx = &ln->rx[i];

		for (k = 0; k < BYPASS_DRAIN_BURSTS; k++) {
			n = rte_eth_rx_burst(rx->port, rx->queue, pkts, ln->burst);
			if (n == 0)
				break;
			ln->w->stats.rx += n;
			ln->w->stats.port_rx[rx->slot] += n;
			sword_worker_process(ln->w, rx->port, pkts, (uint16_t)n, &ln->batch);
			lane_release_answers(ln);
		}
	}
	for (i = 0; i < SWORD_MAX_PORTS; i++)
		while (ln->tx_ring_in[i] != NULL &&
		       (n = rte_ring_dequeue_burst(ln->tx_ring_in[i], (void **)pkts,
						   SWORD_MAX_BURST, NULL)) > 0) {
			rte_pktmbuf_free_bulk(pkts, n);
			ln->w->stats.bypass_dropped += n;
		}
	sword_worker_forget(ln->w, rte_rdtsc());
	ln->w->stats.bypass_forgets++;
	SWORD_LOG_TO(worker, WARNING, "worker %u: the switch bypassed swordd while it "
		     "made no progress (epoch %u): every function forgot what it knew, "
		     "%" PRIu64 " frame(s) decided before dropped so far", ln->w->id, epoch,
		     ln->w->stats.bypass_dropped);
	__atomic_store_n(&ln->bypass_seen, epoch, __ATOMIC_RELEASE);
}

/* A port's TX errors so far (0 if the PMD cannot say). */
static uint64_t
port_oerrors(uint16_t port)
{
	struct rte_eth_stats s;

	return rte_eth_stats_get(port, &s) == 0 ? s.oerrors : 0;
}

/*
 * The links are up again after the bypass the lane forgot: the answers it
 * kept go (one burst at a time; a full TX queue drops, counted).
 *
 * Nothing could give those answers again, and the first send after a
 * link comes back up can fail as a whole: an AF_PACKET socket keeps the
 * ENETDOWN of the link going down and returns it to its next send
 * (net_af_packet counts the burst in oerrors; tor-failover-stop-accel
 * lost a run's 4 answers, and their QPs, that way in 2 of 42 runs
 * here and once in CI).  So while the port counts a TX error in a try,
 * the next try sends copies again (up to SWORD_KEPT_TRIES; a client
 * takes a second copy of an answer it has as a duplicate response and
 * ignores it).  Through another lane's TX ring the errors are not this
 * lane's to see: one try.
 */
static void
lane_send_kept(struct sword_lane *ln)
{
	const uint32_t *up = ln->d->bypass_up;
	const unsigned int slot = sword_worker_slot_of_side(ln->w, SWORD_SIDE_CLIENT);
	struct rte_mbuf *copies[SWORD_KEPT_MAX];
	struct rte_mbuf **out;
	unsigned int try;
	uint64_t errors;
	uint16_t i, n;

	if (likely(ln->n_kept == 0) || up == NULL ||
	    __atomic_load_n(up, __ATOMIC_ACQUIRE) != ln->bypass_seen)
		return;
	ln->w->stats.bypass_kept += ln->n_kept;
	for (try = 1; ; try++) {
		bool last = try == SWORD_KEPT_TRIES || ln->txq[slot] < 0;

		out = ln->kept;
		for (i = 0; !last && i < ln->n_kept; i++) {
			copies[i] = rte_pktmbuf_copy(ln->kept[i], ln->w->pool, 0, UINT32_MAX);
			if (copies[i] == NULL) {        /* no mbuf: this try is the last */
				rte_pktmbuf_free_bulk(copies, i);
				last = true;
			}
		}
		if (!last)
			out = copies;
		errors = port_oerrors(ln->port[slot]);
		for (i = 0; i < ln->n_kept; i += n) {
			n = (uint16_t)RTE_MIN(ln->n_kept - i, SWORD_TX_BATCH_MAX);
			lane_tx(ln, slot, out + i, n);
		}
		if (last)
			break;
		if (port_oerrors(ln->port[slot]) == errors) {
			rte_pktmbuf_free_bulk(ln->kept, ln->n_kept);
			break;
		}
		ln->w->stats.bypass_kept_resent += ln->n_kept;
	}
	ln->n_kept = 0;
}

int
sword_worker_loop(void *arg)
{
	struct sword_lane *ln = arg;

	__atomic_store_n(&ln->started, true, __ATOMIC_RELEASE);
	if (ln->n_rx == 0 && ln->handoff_in == NULL) {
		/* Nothing can ever arrive (TX rings are only for queue owners):
		 * leave the CPU to the others, as testpmd does with lcores
		 * without streams.  The final drain covers our (empty) rings. */
		SWORD_LOG_TO(worker, INFO, "worker %u on lcore %u: no RX queue, no hand-off ring: idle",
			  ln->w->id, rte_lcore_id());
		return 0;
	}
	SWORD_LOG_TO(worker, INFO, "worker %u on lcore %u: %u RX queue(s)%s", ln->w->id,
		  rte_lcore_id(), ln->n_rx, ln->handoff_in ? ", hand-off ring" : "");
	__atomic_store_n(&ln->polling, true, __ATOMIC_RELEASE);
	while (!quitting(ln->d)) {
		uint32_t gen = __atomic_load_n(&ln->d->cfg_gen, __ATOMIC_ACQUIRE);

		if (bypass_moved(ln))
			lane_forget(ln);
		lane_send_kept(ln);
		if (unlikely(gen != ln->cfg_gen_seen)) {
			/* a reload changed live keys or sections: take them
			 * between bursts, the shard map first (the functions
			 * reconfigure to the servers it routes to them) */
			ln->w->shards = __atomic_load_n(&ln->d->shards_live, __ATOMIC_ACQUIRE);
			sword_worker_reconfigure(ln->w);
			__atomic_store_n(&ln->cfg_gen_seen, gen, __ATOMIC_RELEASE);
		}
		lane_poll(ln);
		/* a plain store on x86: the main lcore reads it to tell a
		 * wedged worker from a busy one */
		__atomic_store_n(&ln->loops, ln->loops + 1, __ATOMIC_RELAXED);
		/* the functions' timers (one branch when none has any) */
		if (ln->w->has_tick && sword_worker_tick(ln->w, rte_rdtsc(), &ln->batch) > 0)
			lane_flush(ln);
	}
	/* answers still kept for links that never came up again */
	rte_pktmbuf_free_bulk(ln->kept, ln->n_kept);
	ln->w->stats.bypass_dropped += ln->n_kept;
	ln->n_kept = 0;
	__atomic_store_n(&ln->polling, false, __ATOMIC_RELEASE);
	return 0;
}

bool
sword_daemon_worker_started(const struct sword_daemon *d, unsigned int w)
{
	return __atomic_load_n(&d->lanes[w]->started, __ATOMIC_ACQUIRE);
}

uint64_t
sword_daemon_worker_loops(const struct sword_daemon *d, unsigned int w)
{
	return __atomic_load_n(&d->lanes[w]->loops, __ATOMIC_ACQUIRE);
}

bool
sword_daemon_worker_polling(const struct sword_daemon *d, unsigned int w)
{
	return __atomic_load_n(&d->lanes[w]->polling, __ATOMIC_ACQUIRE);
}

bool
sword_daemon_workers_progressed(struct sword_daemon *d)
{
	uint64_t now[SWORD_MAX_WORKERS];
	unsigned int w;

	for (w = 0; w < d->n_workers; w++) {
		now[w] = __atomic_load_n(&d->lanes[w]->loops, __ATOMIC_RELAXED);
		if (__atomic_load_n(&d->lanes[w]->polling, __ATOMIC_ACQUIRE) &&
		    now[w] == d->loops_seen[w])
			return false;
	}
	memcpy(d->loops_seen, now, sizeof(now[0]) * d->n_workers);
	return true;
}

bool
sword_daemon_bypass_forgotten(const struct sword_daemon *d, uint32_t *epoch)
{
	uint32_t want;
	unsigned int w;

	if (d->bypass_epoch == NULL)
		return false;
	want = __atomic_load_n(d->bypass_epoch, __ATOMIC_ACQUIRE);
	for (w = 0; w < d->n_workers; w++)
		if (__atomic_load_n(&d->lanes[w]->polling, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&d->lanes[w]->bypass_seen, __ATOMIC_ACQUIRE) != want)
			return false;
	*epoch = want;
	return true;
}

/* Every polling worker has reconfigured to generation gen (or we quit). */
static bool
workers_at_gen(struct sword_daemon *d, uint32_t gen)
{
	unsigned int w;

	for (;;) {
		bool all = true;

		if (quitting(d))
			return false;
		for (w = 0; w < d->n_workers; w++)
			if (__atomic_load_n(&d->lanes[w]->polling, __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&d->lanes[w]->cfg_gen_seen, __ATOMIC_ACQUIRE) != gen)
				all = false;
		if (all)
			return true;
		sword_sleep_us(100);
	}
}

int
sword_daemon_apply_live(struct sword_daemon *d, const struct sword_config *next)
{
	uint32_t gen = __atomic_load_n(&d->cfg_gen, __ATOMIC_RELAXED);

	if (!workers_at_gen(d, gen))
		return -1;
	sword_config_apply_live(&d->cfg, next);
	__atomic_store_n(&d->cfg_gen, gen + 1, __ATOMIC_RELEASE);
	return workers_at_gen(d, gen + 1) ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* Live sections (issue #32) */

/* Undo the prepares of workers [0, nw) and, on worker nw, of its first nf
 * functions. */
static void
unprepare_fns(struct sword_daemon *d, unsigned int nw, unsigned int nf)
{
	for (unsigned int w = 0; w <= nw && w < d->n_workers; w++) {
		struct sword_worker *wk = d->workers[w];
		unsigned int n = w < nw ? wk->n_fn : nf;

		for (unsigned int i = 0; i < n; i++)
			if (wk->fn[i].ops->unprepare != NULL)
				wk->fn[i].ops->unprepare(wk->fn[i].state);
	}
}

/* Would a frame of server i reach a worker that does not own it, and can
 * it be handed to its owner? */
static bool
owner_reachable(const struct sword_daemon *d, unsigned int owner)
{
	if (d->n_workers == 1 || (d->n_polling <= 1 && owner == 0))
		return true;
	return d->lanes[owner]->handoff_in != NULL && d->lanes[0]->has_handoff;
}

/* Hand the running config's sections and d->shards_live to the workers:
 * every polling worker takes them between two bursts.  The sections are
 * written under cfg_lock (the telemetry thread reads them). */
static int
publish_sections(struct sword_daemon *d, const struct sword_config *c,
		 struct sword_shard_map *sm, const struct sword_config *live)
{
	uint32_t gen = __atomic_load_n(&d->cfg_gen, __ATOMIC_RELAXED);

	if (!workers_at_gen(d, gen))
		return -1;
	if (live != NULL)   /* as sword_daemon_apply_live: one word each */
		sword_config_apply_live(&d->cfg, live);
	pthread_mutex_lock(&d->cfg_lock);
	memcpy(d->cfg.servers, c->servers, sizeof(c->servers));
	memcpy(d->cfg.locks, c->locks, sizeof(c->locks));
	memcpy(d->cfg.clover_layouts, c->clover_layouts, sizeof(c->clover_layouts));
	d->cfg.n_servers = c->n_servers;
	d->cfg.n_locks = c->n_locks;
	d->cfg.n_clover = c->n_clover;
	memcpy(d->cfg.source, c->source, sizeof(c->source));
	pthread_mutex_unlock(&d->cfg_lock);
	__atomic_store_n(&d->shards_live, sm, __ATOMIC_RELEASE);
	/* a worker that does not poll never reconfigures: it routes nothing */
	for (unsigned int w = 0; w < d->n_workers; w++)
		if (!__atomic_load_n(&d->lanes[w]->polling, __ATOMIC_ACQUIRE))
			d->workers[w]->shards = sm;
	__atomic_store_n(&d->cfg_gen, gen + 1, __ATOMIC_RELEASE);
	return workers_at_gen(d, gen + 1) ? 0 : -1;
}

static struct sword_shard_map *
spare_shards(struct sword_daemon *d)
{
	return d->shards_live == &d->shards ? &d->shards_spare : &d->shards;
}

int
sword_daemon_apply_reload(struct sword_daemon *d, const struct sword_config *next,
			  char *err, size_t errlen)
{
	struct sword_config *m = malloc(sizeof(*m));
	struct sword_shard_map *sm = spare_shards(d);
	unsigned int w, i;
	int rc = -1;

	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (sword_config_reload_merge(&d->cfg, next, d->n_polling, m, err, errlen) < 0)
		goto out;
	for (i = 0; i < m->n_servers; i++) {
		if (m->servers[i].state != SWORD_INST_ACTIVE ||
		    (i < d->cfg.n_servers && d->cfg.servers[i].state == SWORD_INST_ACTIVE))
			continue;
		if (m->servers[i].owner >= (int)d->n_workers || !owner_reachable(d,
				(unsigned int)m->servers[i].owner)) {
			snprintf(err, errlen, "%s: [server.%s] worker: %d has no hand-off ring "
				 "(swordd started with one receiving worker): needs a restart",
				 next->source, m->servers[i].name, m->servers[i].owner);
			goto out;
		}
	}
	/* every function must be able to take the new sections */
	for (w = 0; w < d->n_workers; w++) {
		struct sword_worker *wk = d->workers[w];

		for (i = 0; i < wk->n_fn; i++) {
			const struct sword_fn_ops *ops = wk->fn[i].ops;

			if (ops->prepare == NULL) {
				snprintf(err, errlen, "%s: [features] %s: takes no server or lock "
					 "section change at run time: needs a restart",
					 next->source, ops->name);
			} else if (ops->prepare(wk->fn[i].state, wk, m, worker_socket(d, w),
						err, errlen) == 0) {
				continue;
			}
			unprepare_fns(d, w, i);
			goto out;
		}
	}
	sword_shard_map_build(sm, m);
	if (publish_sections(d, m, sm, next) < 0) {
		snprintf(err, errlen, "interrupted by shutdown");
		goto out;
	}
	d->retiring = false;
	for (i = 0; i < m->n_servers; i++)
		d->retiring |= m->servers[i].state == SWORD_INST_RETIRING;
	for (i = 0; i < m->n_locks; i++)
		d->retiring |= m->locks[i].state == SWORD_INST_RETIRING;
	for (i = 0; i < m->n_clover; i++)
		d->retiring |= m->clover_layouts[i].state == SWORD_INST_RETIRING;
	d->retire_zero = 0;
	d->retire_next_tsc = 0;
	rc = 0;
out:
	free(m);
	return rc;
}

/* What the functions still owe for RETIRING sections, over all workers. */
static uint64_t
retiring_owed(const struct sword_daemon *d)
{
	uint64_t owed = 0;

	for (unsigned int w = 0; w < d->n_workers; w++) {
		const struct sword_worker *wk = d->workers[w];

		for (unsigned int i = 0; i < wk->n_fn; i++)
			if (wk->fn[i].ops->owed != NULL)
				owed += wk->fn[i].ops->owed(wk->fn[i].state, &d->cfg);
	}
	return owed;
}

/* How often the main lcore scans for what is owed, and how many scans in
 * a row must find nothing (a scan reads the workers' state as they change
 * it: twice, apart, leaves no answer in flight between them unseen). */
#define RETIRE_CHECK_MS 20
#define RETIRE_ZERO_SCANS 2

unsigned int
sword_daemon_retire_poll(struct sword_daemon *d)
{
	const uint64_t now = rte_get_tsc_cycles();
	struct sword_config *m;
	char what[512];
	unsigned int n;

	if (!d->retiring || now < d->retire_next_tsc)
		return 0;
	d->retire_next_tsc = now + rte_get_tsc_hz() / 1000 * RETIRE_CHECK_MS;
	if (retiring_owed(d) != 0) {
		d->retire_zero = 0;
		return 0;
	}
	if (++d->retire_zero < RETIRE_ZERO_SCANS)
		return 0;
	m = malloc(sizeof(*m));
	if (m == NULL)
		return 0;      /* next round */
	*m = d->cfg;
	sword_config_retiring_text(m, what, sizeof(what));
	n = sword_config_drop_retiring(m);
	sword_shard_map_build(spare_shards(d), m);
	if (publish_sections(d, m, spare_shards(d), NULL) == 0) {
		d->retiring = false;
		SWORD_LOG_TO(config, INFO, "reload: drained and removed %s, config hash "
			     "%016" PRIx64, what, sword_config_hash(&d->cfg));
	} else {
		n = 0;
	}
	free(m);
	return n;
}

/* ---------------------------------------------------------------------- */
/* Main lcore */

void
sword_daemon_totals(const struct sword_daemon *d, struct sword_worker_stats *sum)
{
	sword_stats_sum(sum, (const struct sword_worker_stats *const *)d->workers,
			d->n_workers);
}

static uint64_t
total_rx(const struct sword_daemon *d)
{
	uint64_t rx = 0;
	unsigned int w;

	for (w = 0; w < d->n_workers; w++)
		rx += __atomic_load_n(&d->workers[w]->stats.rx, __ATOMIC_RELAXED);
	return rx;
}

void
sword_sleep_us(unsigned int us)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += us / 1000000u;
	until.tv_nsec += (long)(us % 1000000u) * 1000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

void
sword_daemon_main_loop(struct sword_daemon *d, unsigned int idle_exit_s)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t now = rte_get_tsc_cycles();
	uint64_t last_rx_change = now, last_stats = now;
	uint64_t last_rx = total_rx(d);
	struct sword_worker_stats prev, cur;
	unsigned int stats_interval_s;

	sword_daemon_totals(d, &prev);
	while (!quitting(d)) {
		uint64_t rx;

		capture_drain(d);
		sword_sleep_us(1000);
		now = rte_get_tsc_cycles();

		if (__atomic_exchange_n(&d->reload, 0, __ATOMIC_RELAXED) &&
		    d->on_reload != NULL)
			d->on_reload(d);
		if (d->on_round != NULL)
			d->on_round(d);
		sword_daemon_retire_poll(d);
		stats_interval_s = __atomic_load_n(&d->cfg.stats_interval, __ATOMIC_RELAXED);

		rx = total_rx(d);
		if (rx != last_rx) {
			last_rx = rx;
			last_rx_change = now;
		} else if (idle_exit_s > 0 && now - last_rx_change >= idle_exit_s * hz) {
			SWORD_LOG(INFO, "no frame received for %u s: exiting", idle_exit_s);
			__atomic_store_n(&d->quit, 1, __ATOMIC_RELAXED);
		}

		if (stats_interval_s > 0 && now - last_stats >= stats_interval_s * hz) {
			double dt = (double)(now - last_stats) / (double)hz;

			sword_daemon_totals(d, &cur);
			SWORD_LOG_TO(stats, INFO, "rx=%.0f/s tx=%.0f/s drops=%.0f/s "
				     "malformed=%.0f/s managed=%.0f/s",
				     (double)(cur.rx - prev.rx) / dt,
				     (double)(cur.tx - prev.tx) / dt,
				     (double)(sword_stats_dropped(&cur) -
					      sword_stats_dropped(&prev)) / dt,
				     (double)(cur.malformed - prev.malformed) / dt,
				     (double)(cur.managed_rx - prev.managed_rx) / dt);
			prev = cur;
			last_stats = now;
		}
	}
}

void
sword_daemon_drain(struct sword_daemon *d)
{
	unsigned int w, pass;

	/* Worker lcores have returned: their lanes are ours now.  Hand-offs
	 * may feed TX rings, so loop until everything is still. */
	for (pass = 0; pass < 16; pass++) {
		unsigned int moved = 0;

		for (w = 0; w < d->n_workers; w++) {
			struct sword_lane *ln = d->lanes[w];
			unsigned int saved = ln->n_rx;

			ln->n_rx = 0;                  /* drain rings, do not poll ports */
			moved += lane_poll(ln);
			ln->n_rx = saved;
		}
		if (moved == 0)
			break;
	}
	pthread_mutex_lock(&d->cap_lock);
	capture_stop_locked(d, SWORD_CAP_RX);
	capture_stop_locked(d, SWORD_CAP_TX);
	pthread_mutex_unlock(&d->cap_lock);
}

void
sword_daemon_snapshot_ports(struct sword_daemon *d)
{
	unsigned int s;

	for (s = 0; s < d->n_slots; s++) {
		d->slots[s].final_valid =
			rte_eth_stats_get(d->slots[s].port_id, &d->slots[s].final_eth) == 0;
		/* before the ports stop: that closes the AF_PACKET sockets */
		sword_kstats_read(d->slots[s].port_id, &d->slots[s].final_k);
	}
}

void
sword_daemon_free(struct sword_daemon *d)
{
	unsigned int w, s;

	for (w = 0; w < d->n_workers; w++) {
		struct sword_lane *ln = d->lanes[w];

		if (ln == NULL)
			continue;
		sword_worker_detach_all(d->workers[w]);
		rte_ring_free(ln->handoff_in);
		for (s = 0; s < SWORD_MAX_PORTS; s++)
			rte_ring_free(ln->tx_ring_in[s]);
		rte_ring_free(ln->cap_ring[SWORD_CAP_RX]);
		rte_ring_free(ln->cap_ring[SWORD_CAP_TX]);
	}
	/* Workers and lanes stay allocated: a telemetry request may still be
	 * reading their counters until the process exits. */
	rte_mempool_free(d->capture_pool);
	d->capture_pool = NULL;
}

/* ---------------------------------------------------------------------- */
/* Reports */

struct print_ctx {
	FILE *f;
	bool json;
	bool all;
	bool first;
};

static void
print_counter(void *arg, const char *key, uint64_t v)
{
	struct print_ctx *pc = arg;

	if (pc->json) {
		fprintf(pc->f, "%s\"%s\": %" PRIu64, pc->first ? "" : ", ", key, v);
		pc->first = false;
		return;
	}
	/* Keep the text short: per-reason/opcode keys only when nonzero. */
	if (!pc->all && v == 0 &&
	    (strncmp(key, "malformed_", 10) == 0 || strncmp(key, "opcode_", 7) == 0 ||
	     strncmp(key, "non_roce_", 9) == 0 || strncmp(key, "fn_", 3) == 0))
		return;
	fprintf(pc->f, "  %-28s %" PRIu64 "\n", key, v);
}

static void
port_counters(const struct sword_daemon *d, unsigned int s, uint64_t *rx, uint64_t *tx,
	      uint64_t *txd)
{
	unsigned int w;

	*rx = *tx = *txd = 0;
	for (w = 0; w < d->n_workers; w++) {
		const struct sword_worker_stats *st = &d->workers[w]->stats;

		*rx += __atomic_load_n(&st->port_rx[s], __ATOMIC_RELAXED);
		*tx += __atomic_load_n(&st->port_tx[s], __ATOMIC_RELAXED);
		*txd += __atomic_load_n(&st->port_tx_dropped[s], __ATOMIC_RELAXED);
	}
}

void
sword_daemon_print(const struct sword_daemon *d, FILE *f)
{
	struct sword_worker_stats sum;
	struct print_ctx pc = { .f = f };
	unsigned int s, w;

	sword_daemon_totals(d, &sum);
	fprintf(f, "swordd: final counters (%u worker(s), %s)\n", d->n_workers,
		sword_mode_name(d->cfg.mode));
	sword_stats_foreach(&sum, print_counter, &pc);
	for (s = 0; s < d->n_slots; s++) {
		const struct sword_port_slot *ps = &d->slots[s];
		uint64_t rx, tx, txd;

		port_counters(d, s, &rx, &tx, &txd);
		fprintf(f, "  port %u (%s): rx %" PRIu64 " tx %" PRIu64 " tx_dropped %"
			PRIu64, ps->port_id, ps->role, rx, tx, txd);
		if (ps->final_valid)
			fprintf(f, " | ethdev ipackets %" PRIu64 " opackets %" PRIu64
				" imissed %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64
				" rx_nombuf %" PRIu64, ps->final_eth.ipackets,
				ps->final_eth.opackets, ps->final_eth.imissed,
				ps->final_eth.ierrors, ps->final_eth.oerrors,
				ps->final_eth.rx_nombuf);
		if (ps->final_k.valid) {
			fprintf(f, " | kernel %s rx_dropped %" PRIu64 " tx_dropped %" PRIu64,
				ps->final_k.ifname, ps->final_k.if_rx_dropped,
				ps->final_k.if_tx_dropped);
			if (ps->final_k.sock_count > 0)
				fprintf(f, " af_packet drops %" PRIu64, ps->final_k.sock_drops);
		}
		fprintf(f, "\n");
	}
	if (d->n_workers > 1)
		for (w = 0; w < d->n_workers; w++) {
			const struct sword_worker_stats *st = &d->workers[w]->stats;

			fprintf(f, "  worker %u: rx %" PRIu64 " tx %" PRIu64 " managed_rx %"
				PRIu64 " dispatched %" PRIu64 "\n", w, st->rx, st->tx,
				st->managed_rx, st->dispatched);
		}
	if (d->cap[SWORD_CAP_RX].path[0])
		fprintf(f, "  capture rx %s: %" PRIu64 " frames\n", d->cap[SWORD_CAP_RX].path,
			d->cap[SWORD_CAP_RX].frames);
	if (d->cap[SWORD_CAP_TX].path[0])
		fprintf(f, "  capture tx %s: %" PRIu64 " frames\n", d->cap[SWORD_CAP_TX].path,
			d->cap[SWORD_CAP_TX].frames);
}

/* The kernel's view of a port (sword_kstats.h), as "kernel_*" keys. */
static void
kstats_json(FILE *f, const struct sword_kstats *k)
{
	fprintf(f, ", \"kernel_iface\": \"%s\", \"kernel_rx_packets\": %" PRIu64
		", \"kernel_tx_packets\": %" PRIu64 ", \"kernel_rx_dropped\": %" PRIu64
		", \"kernel_tx_dropped\": %" PRIu64, k->ifname, k->if_rx_packets,
		k->if_tx_packets, k->if_rx_dropped, k->if_tx_dropped);
	if (k->sock_count > 0)
		fprintf(f, ", \"kernel_sockets\": %d, \"kernel_sock_packets\": %" PRIu64
			", \"kernel_sock_drops\": %" PRIu64, k->sock_count,
			k->sock_packets, k->sock_drops);
}

int
sword_daemon_write_json(const struct sword_daemon *d, FILE *f)
{
	struct sword_worker_stats sum;
	struct print_ctx pc = { .f = f, .json = true, .first = true };
	unsigned int s, w;

	sword_daemon_totals(d, &sum);
	fprintf(f, "{");
	sword_stats_foreach(&sum, print_counter, &pc);
	fprintf(f, ", \"workers\": %u, \"mode\": \"%s\", \"ports\": [", d->n_workers,
		sword_mode_name(d->cfg.mode));
	for (s = 0; s < d->n_slots; s++) {
		const struct sword_port_slot *ps = &d->slots[s];
		uint64_t rx, tx, txd;

		port_counters(d, s, &rx, &tx, &txd);
		fprintf(f, "%s{\"port\": %u, \"role\": \"%s\", \"queues\": %u, "
			"\"flow_steering\": %s, \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"tx_dropped\": %" PRIu64, s ? ", " : "", ps->port_id, ps->role,
			ps->n_queues, ps->flow_steering ? "true" : "false", rx, tx, txd);
		if (ps->final_valid)
			fprintf(f, ", \"eth_ipackets\": %" PRIu64 ", \"eth_opackets\": %" PRIu64
				", \"eth_ibytes\": %" PRIu64 ", \"eth_obytes\": %" PRIu64
				", \"eth_imissed\": %" PRIu64 ", \"eth_ierrors\": %" PRIu64
				", \"eth_oerrors\": %" PRIu64 ", \"eth_rx_nombuf\": %" PRIu64,
				ps->final_eth.ipackets, ps->final_eth.opackets,
				ps->final_eth.ibytes, ps->final_eth.obytes,
				ps->final_eth.imissed, ps->final_eth.ierrors,
				ps->final_eth.oerrors, ps->final_eth.rx_nombuf);
		if (ps->final_k.valid)
			kstats_json(f, &ps->final_k);
		fprintf(f, "}");
	}
	fprintf(f, "], \"per_worker\": [");
	for (w = 0; w < d->n_workers; w++) {
		struct print_ctx wc = { .f = f, .json = true, .first = true };

		fprintf(f, "%s{", w ? ", " : "");
		sword_stats_foreach(&d->workers[w]->stats, print_counter, &wc);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	if (d->cap[SWORD_CAP_RX].path[0] || d->cap[SWORD_CAP_TX].path[0])
		fprintf(f, ", \"capture_rx_frames\": %" PRIu64 ", \"capture_tx_frames\": %"
			PRIu64, d->cap[SWORD_CAP_RX].frames, d->cap[SWORD_CAP_TX].frames);
	fprintf(f, "}\n");
	return ferror(f) ? -1 : 0;
}
