/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swordd — the sword daemon: EAL, ports, lcores.  Everything that decides
 * what happens to a frame lives in lib/sword (like DPDK's l3fwd, this file
 * only brings the machine up and down).
 *
 *   swordd [EAL args] -- [options]
 *
 * Options are parsed (and the config validated) before rte_eal_init, so
 * --help and --check-config need no EAL.  Exit codes: 0 clean shutdown,
 * 2 usage/config error, 1 runtime error (EAL, ports).
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>
#include <rte_version.h>

#include <systemd/sd-daemon.h>

#include "clover_fn.h"
#include "links.h"
#include "port_mbuf.h"
#include "tsc_calibration.h"
#include "remap_fn.h"
#include "ser_fn.h"
#include "remap_telemetry.h"
#include "ser_telemetry.h"
#include "roce.h"
#include "sword_capture.h"
#include "sword_config.h"
#include "sword_daemon.h"
#include "sword_log.h"
#include "sword_version.h"
#include "xdp_steer.h"

/*
 * After rte_eal_init every message goes through rte_log: "swordd" for the
 * daemon's life cycle, "swordd.port" for port bring-up (lib/sword has its
 * own types, sword_log.h).  Before it, usage and config errors go to stderr.
 * The "swordd: " prefix stays: scripts wait for "swordd: running".
 */
RTE_LOG_REGISTER(swordd_logtype, swordd, INFO);
RTE_LOG_REGISTER(swordd_logtype_port, swordd.port, INFO);   /* links.c too */
#define LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, swordd_logtype, "swordd: " fmt "\n", ##__VA_ARGS__)
#define PORT_LOG(level, port, fmt, ...) \
	rte_log(RTE_LOG_ ## level, swordd_logtype_port, "swordd: port %u: " fmt "\n", \
		(unsigned int)(port), ##__VA_ARGS__)

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

#define MAX_SETS 64

struct options {
	const char *config;
	const char *mode;
	long workers;              /* -1 = from config */
	const char *sets[MAX_SETS];
	unsigned int n_sets;
	long stats_interval;       /* -1 = from config */
	const char *capture[SWORD_CAP_NUM];     /* rx, tx */
	struct sword_capture_limits capture_lim;
	const char *stats_json;
	const char *state;
	unsigned int idle_exit;
	bool check_config;
	bool version;
	bool config_keys;
	bool links_down;
};

static void
usage(const char *prog, FILE *f)
{
	fprintf(f,
"Usage: %s [EAL args] -- [options]\n"
"\n"
"sword on-path serializer daemon for RoCEv2 disaggregated memory.\n"
"\n"
"Options:\n"
"  -c, --config FILE          INI configuration (default: built-in: one-port on\n"
"                             port 0, 1 worker, no managed servers)\n"
"      --mode one-port|two-port   override [ports] mode\n"
"      --workers N            override [cores] workers (needs N+1 lcores: the\n"
"                             main lcore does housekeeping, N lcores forward)\n"
"      --set SECTION.KEY=VALUE    override any config key (repeatable), e.g.\n"
"                             --set server.mem0.ip=198.18.0.2\n"
"      --stats-interval SEC   print rx/tx/drops/malformed/managed per second\n"
"                             every SEC seconds (0 = off)\n"
"      --capture-rx FILE      write a pcapng of every frame received to FILE\n"
"      --capture-tx FILE      write a pcapng of every frame transmitted to FILE\n"
"      --capture-max-mb N     at most N MB per capture file (default %d)\n"
"      --capture-files K      keep a ring of K files: FILE, FILE.1 .. FILE.<K-1>\n"
"                             (default %d: the capture stops when FILE is full)\n"
"      --capture-force        overwrite capture files swordd did not write\n"
"                             (otherwise an existing file must be a swordd pcapng)\n"
"      --stats-json FILE      write the final counters as one JSON object\n"
"      --state PATH           keep atomic replacement's tables in PATH.w<worker>\n"
"                             (a file on a tmpfs, e.g. /run/sword/swordd): a\n"
"                             restart, also after SIGKILL, goes on from them\n"
"                             (doc/operating.md, Restart); not with remapping\n"
"      --idle-exit SEC        exit cleanly after SEC seconds without any frame\n"
"                             received\n"
"      --check-config         validate the configuration, print every key's\n"
"                             value and the config hash, exit\n"
"      --config-keys          list every config key (section, key, type and\n"
"                             range, default, live|restart on SIGHUP, doc)\n"
"      --links-down           with [ports] failover_bypass = on, set the kernel\n"
"                             interfaces of the EAL arguments' net_af_packet/\n"
"                             net_af_xdp --vdev iface= down and exit (systemd\n"
"                             ExecStopPost, after a crash)\n"
"  -V, --version              print the version and exit\n"
"  -h, --help                 this text\n"
"\n"
"Exit status: 0 clean shutdown, 2 usage or configuration error, 1 runtime\n"
"error (EAL, ports).  SIGINT/SIGTERM stop the daemon cleanly.  With [ports]\n"
"failover_bypass = on, however swordd ends (exit, crash, SIGKILL) or hangs\n"
"(SIGSTOP, a wedged worker: [ports] guard_ms), its ports' links go down, so\n"
"that the switch's bypass takes over (fail-open: doc/deploying.md, Fail-open).\n"
"\n"
"Telemetry: /sword/stats, /sword/workers[,N], /sword/ports[,P], /sword/config,\n"
"/sword/servers, /sword/version, /sword/lock,SERVER,VA, /sword/conns[,SERVER],\n"
"/sword/lanes[,SERVER], /sword/drain[,status],\n"
"/sword/capture[,rx|tx,/ABS/PATH | ,stop[,rx|tx]], /sword/log_level[,GLOB,LEVEL]\n"
"on the EAL telemetry socket, /var/run/dpdk/<file-prefix>/dpdk_telemetry.v2\n"
"(dpdk-telemetry.py -f <file-prefix>).  DPDK 22.11 refuses --in-memory with\n"
"--no-huge; without hugepages use --no-huge --no-shconf --file-prefix NAME.\n"
"Example: %s --no-pci --no-huge --no-shconf -m 512 -l 0-1 \\\n"
"           --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap -- --idle-exit 1\n"
"Live capture: dpdk-dumpcap --file-prefix <file-prefix> -i 0 -w FILE (rte_pdump;\n"
"swordd must run without --no-shconf).\n",
		prog, SWORD_CAPTURE_MAX_MB_DEFAULT, SWORD_CAPTURE_FILES_DEFAULT, prog);
}

static int
parse_ulong(const char *opt, const char *s, unsigned long max, long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0 || v > max) {
		fprintf(stderr, "swordd: %s: expected a number 0..%lu: \"%s\"\n", opt, max, s);
		return -1;
	}
	*out = (long)v;
	return 0;
}

/*
 * Files swordd will write, checked before anything starts: a capture must
 * not overwrite what swordd did not write (sword_capture.h), and a
 * --stats-json that cannot be written would only fail at exit, after the run.
 */
static int
check_files(const struct options *o)
{
	char err[512];
	enum sword_cap_dir dir;

	if (o->capture[SWORD_CAP_RX] != NULL && o->capture[SWORD_CAP_TX] != NULL &&
	    strcmp(o->capture[SWORD_CAP_RX], o->capture[SWORD_CAP_TX]) == 0) {
		fprintf(stderr, "swordd: --capture-rx and --capture-tx: same file %s\n",
			o->capture[SWORD_CAP_RX]);
		return -1;
	}
	for (dir = 0; dir < SWORD_CAP_NUM; dir++)
		if (o->capture[dir] != NULL &&
		    sword_capture_check_path(o->capture[dir], &o->capture_lim, err,
					     sizeof(err)) < 0) {
			fprintf(stderr, "swordd: --capture-%s: %s\n", sword_cap_dir_name[dir],
				err);
			return -1;
		}
	if (o->stats_json != NULL) {
		/* open for append: changes nothing in it; one made by the check
		 * goes again (a file there before exit would read as a run that
		 * wrote nothing: test_shutdown) */
		const bool existed = access(o->stats_json, F_OK) == 0;
		FILE *f = fopen(o->stats_json, "a");

		if (f == NULL) {
			fprintf(stderr, "swordd: --stats-json: %s: cannot write: %s\n",
				o->stats_json, strerror(errno));
			return -1;
		}
		fclose(f);
		if (!existed)
			unlink(o->stats_json);
	}
	return 0;
}

/* Returns 0 to continue, 1 when --help was handled, -1 on a usage error. */
static int
parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_MODE = 256, OPT_WORKERS, OPT_SET, OPT_STATS_INTERVAL, OPT_PCAP_OLD,
	       OPT_CAPTURE_RX, OPT_CAPTURE_TX, OPT_CAPTURE_MAX_MB, OPT_CAPTURE_FILES,
	       OPT_CAPTURE_FORCE, OPT_STATS_JSON, OPT_IDLE_EXIT, OPT_CHECK_CONFIG,
	       OPT_CONFIG_KEYS, OPT_LINKS_DOWN, OPT_STATE };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "set", required_argument, NULL, OPT_SET },
		{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
		{ "pcap-in", required_argument, NULL, OPT_PCAP_OLD },
		{ "pcap-out", required_argument, NULL, OPT_PCAP_OLD },
		{ "capture-rx", required_argument, NULL, OPT_CAPTURE_RX },
		{ "capture-tx", required_argument, NULL, OPT_CAPTURE_TX },
		{ "capture-max-mb", required_argument, NULL, OPT_CAPTURE_MAX_MB },
		{ "capture-files", required_argument, NULL, OPT_CAPTURE_FILES },
		{ "capture-force", no_argument, NULL, OPT_CAPTURE_FORCE },
		{ "stats-json", required_argument, NULL, OPT_STATS_JSON },
		{ "idle-exit", required_argument, NULL, OPT_IDLE_EXIT },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "config-keys", no_argument, NULL, OPT_CONFIG_KEYS },
		{ "links-down", no_argument, NULL, OPT_LINKS_DOWN },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->workers = -1;
	o->stats_interval = -1;
	o->capture_lim.max_bytes = (uint64_t)SWORD_CAPTURE_MAX_MB_DEFAULT << 20;
	o->capture_lim.files = SWORD_CAPTURE_FILES_DEFAULT;
	opterr = 0;
	optind = 1;
	int li = 0;

	while ((c = getopt_long(argc, argv, ":c:hV", longopts, &li)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "one-port") != 0 && strcmp(optarg, "two-port") != 0) {
				fprintf(stderr, "swordd: --mode: expected one-port|two-port: "
					"\"%s\"\n", optarg);
				return -1;
			}
			o->mode = optarg;
			break;
		case OPT_WORKERS:
			if (parse_ulong("--workers", optarg, SWORD_MAX_WORKERS, &v) < 0)
				return -1;
			if (v < 1) {
				fprintf(stderr, "swordd: --workers: must be 1..%d\n",
					SWORD_MAX_WORKERS);
				return -1;
			}
			o->workers = v;
			break;
		case OPT_SET:
			if (o->n_sets >= MAX_SETS) {
				fprintf(stderr, "swordd: --set: at most %d\n", MAX_SETS);
				return -1;
			}
			o->sets[o->n_sets++] = optarg;
			break;
		case OPT_STATS_INTERVAL:
			if (parse_ulong("--stats-interval", optarg, 86400, &v) < 0)
				return -1;
			o->stats_interval = v;
			break;
		case OPT_PCAP_OLD:
			/* they truncated FILE, and "in" read as "replay this" */
			fprintf(stderr, "swordd: --%s is gone: use --capture-rx FILE (frames "
				"received) or --capture-tx FILE (frames sent)\n",
				longopts[li].name);
			return -1;
		case OPT_CAPTURE_RX:
			o->capture[SWORD_CAP_RX] = optarg;
			break;
		case OPT_CAPTURE_TX:
			o->capture[SWORD_CAP_TX] = optarg;
			break;
		case OPT_CAPTURE_MAX_MB:
			if (parse_ulong("--capture-max-mb", optarg, SWORD_CAPTURE_MAX_MB_MAX, &v) < 0)
				return -1;
			if (v < 1) {
				fprintf(stderr, "swordd: --capture-max-mb: must be 1..%d\n",
					SWORD_CAPTURE_MAX_MB_MAX);
				return -1;
			}
			o->capture_lim.max_bytes = (uint64_t)v << 20;
			break;
		case OPT_CAPTURE_FILES:
			if (parse_ulong("--capture-files", optarg, SWORD_CAPTURE_FILES_MAX, &v) < 0)
				return -1;
			if (v < 1) {
				fprintf(stderr, "swordd: --capture-files: must be 1..%d\n",
					SWORD_CAPTURE_FILES_MAX);
				return -1;
			}
			o->capture_lim.files = (unsigned int)v;
			break;
		case OPT_CAPTURE_FORCE:
			o->capture_lim.force = true;
			break;
		case OPT_STATS_JSON:
			o->stats_json = optarg;
			break;
		case OPT_STATE:
			if (optarg[0] == '\0' || strlen(optarg) >= sizeof(((struct sword_config *)0)->state_path) - 8) {
				fprintf(stderr, "swordd: --state: a path of 1..%zu characters\n",
					sizeof(((struct sword_config *)0)->state_path) - 9);
				return -1;
			}
			o->state = optarg;
			break;
		case OPT_IDLE_EXIT:
			if (parse_ulong("--idle-exit", optarg, 86400 * 365, &v) < 0)
				return -1;
			o->idle_exit = (unsigned int)v;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = true;
			break;
		case OPT_CONFIG_KEYS:
			o->config_keys = true;
			break;
		case OPT_LINKS_DOWN:
			o->links_down = true;
			break;
		case 'V':
			o->version = true;
			break;
		case 'h':
			usage("swordd", stdout);
			return 1;
		case ':':
			fprintf(stderr, "swordd: option %s needs an argument (see --help)\n",
				argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "swordd: unknown option %s (see --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "swordd: unexpected argument \"%s\" (see --help)\n",
			argv[optind]);
		return -1;
	}
	return check_files(o);
}

/* Defaults, file, --set, CLI shortcuts, then one validation. */
static int
build_config(const struct options *o, struct sword_config *c, char *err, size_t errlen)
{
	char buf[64];
	unsigned int i;

	sword_config_defaults(c);
	if (o->config != NULL && sword_config_parse_file(c, o->config, err, errlen) < 0)
		goto bad;
	for (i = 0; i < o->n_sets; i++)
		if (sword_config_set(c, o->sets[i], err, errlen) < 0)
			goto bad;
	if (o->mode != NULL) {
		snprintf(buf, sizeof(buf), "ports.mode=%s", o->mode);
		if (sword_config_set(c, buf, err, errlen) < 0)
			goto bad;
	}
	if (o->workers > 0) {
		snprintf(buf, sizeof(buf), "cores.workers=%ld", o->workers);
		if (sword_config_set(c, buf, err, errlen) < 0)
			goto bad;
	}
	if (o->stats_interval >= 0)
		c->stats_interval = (uint32_t)o->stats_interval;
	if (o->state != NULL)
		snprintf(c->state_path, sizeof(c->state_path), "%s", o->state);
	if (sword_config_validate(c, err, errlen) < 0)
		goto bad;
	return 0;
bad:
	return -1;
}

/* ---------------------------------------------------------------------- */
/* Ports */

static int
port_init(uint16_t port, uint16_t want_queues, struct rte_mempool *pool,
	  const struct sword_config *cfg, uint16_t *nq_out)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	uint16_t nq, q, nb_rxd = cfg->rx_desc, nb_txd = cfg->tx_desc;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		PORT_LOG(ERR, port, "cannot get device info: %s",
			rte_strerror(-rc));
		return -1;
	}
	nq = RTE_MIN(want_queues, RTE_MIN(info.max_rx_queues, info.max_tx_queues));
	if (nq == 0)
		nq = 1;
	if (nq > 1) {
		uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;

		if (hf != 0) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
		}
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;

	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	if (rc != 0) {
		PORT_LOG(ERR, port, "configure (%u queues): %s", nq,
			rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc != 0) {
		PORT_LOG(ERR, port, "descriptors: %s", rte_strerror(-rc));
		return -1;
	}
	txconf = info.default_txconf;
	txconf.offloads = conf.txmode.offloads;
	for (q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_rxd, rte_eth_dev_socket_id(port),
					    NULL, pool);
		if (rc != 0) {
			PORT_LOG(ERR, port, "RX queue %u: %s", q,
				rte_strerror(-rc));
			return -1;
		}
		rc = rte_eth_tx_queue_setup(port, q, nb_txd, rte_eth_dev_socket_id(port),
					    &txconf);
		if (rc != 0) {
			PORT_LOG(ERR, port, "TX queue %u: %s", q,
				rte_strerror(-rc));
			return -1;
		}
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0) {
		PORT_LOG(ERR, port, "start: %s", rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_promiscuous_enable(port);
	if (rc != 0 && rc != -ENOTSUP)
		PORT_LOG(WARNING, port, "promiscuous mode: %s", rte_strerror(-rc));
	PORT_LOG(INFO, port, "%s: %u RX/TX queue(s), %u/%u descriptors%s",
		 info.driver_name, nq, nb_rxd, nb_txd,
	    conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ? ", RSS" : "");
	*nq_out = nq;
	return 0;
}

/* ---------------------------------------------------------------------- */

/*
 * As l3fwd does: give the links up to [ports] link_wait_ms to come up, then
 * say how each one is and start anyway (a link that comes up later simply
 * starts receiving; READY=1 is sent after this).
 */
static void
wait_links(const struct sword_daemon *d, uint32_t wait_ms)
{
	const uint64_t hz = rte_get_timer_hz();
	const uint64_t deadline = rte_get_timer_cycles() + (uint64_t)wait_ms * hz / 1000;
	struct rte_eth_link link;
	char text[RTE_ETH_LINK_MAX_STR_LEN];
	unsigned int s;
	bool all_up;

	do {
		all_up = true;
		for (s = 0; s < d->n_slots; s++)
			if (rte_eth_link_get_nowait(d->slots[s].port_id, &link) == 0 &&
			    link.link_status == RTE_ETH_LINK_DOWN)
				all_up = false;
		if (all_up || __atomic_load_n(&d->quit, __ATOMIC_RELAXED))
			break;
		sword_sleep_us(100 * 1000);
	} while (rte_get_timer_cycles() < deadline);
	for (s = 0; s < d->n_slots; s++) {
		if (s == 1 && d->slots[1].port_id == d->slots[0].port_id)
			continue;
		if (rte_eth_link_get_nowait(d->slots[s].port_id, &link) != 0) {
			PORT_LOG(INFO, d->slots[s].port_id, "link status unknown");
			continue;
		}
		rte_eth_link_to_str(text, sizeof(text), &link);
		if (link.link_status == RTE_ETH_LINK_DOWN)
			PORT_LOG(WARNING, d->slots[s].port_id, "%s after %u ms: starting anyway",
				 text, wait_ms);
		else
			PORT_LOG(INFO, d->slots[s].port_id, "%s", text);
	}
}

/* Readiness means forwarding: wait until every launched worker entered its
 * loop (a worker with nothing to poll returns at once: that counts), or we
 * are told to quit first. */
static void
wait_workers_running(const struct sword_daemon *d)
{
	unsigned int w;

	for (w = 0; w < d->n_workers; w++)
		while (!sword_daemon_worker_started(d, w) &&
		       !__atomic_load_n(&d->quit, __ATOMIC_RELAXED))
			sword_sleep_us(1000);
}

static double
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The shutdown summary, one sword.stats log line per line of it. */
static void
log_final_counters(const struct sword_daemon *d)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL) {
		sword_daemon_print(d, stdout);
		return;
	}
	sword_daemon_print(d, f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		rte_log(RTE_LOG_INFO, sword_logtype_stats, "%s\n", line);
	free(text);
}

/* The options swordd started with: SIGHUP rebuilds the config from them. */
static struct options start_opts;

/*
 * SIGHUP, on the main lcore: re-read the file with the same --set and CLI
 * overrides, validate, and apply only if every changed key is live; else
 * log what was refused and change nothing.
 */
static void
reload_config(struct sword_daemon *d)
{
	struct sword_config *next = malloc(sizeof(*next));
	char err[512], msg[1024], retiring[512];
	int n, status = -1;

	sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
	msg[0] = '\0';
	if (next == NULL) {
		snprintf(msg, sizeof(msg), "out of memory");
		SWORD_LOG_TO(config, ERR, "reload refused: out of memory");
		d->reloads_refused++;
	} else if (build_config(&start_opts, next, err, sizeof(err)) < 0) {
		snprintf(msg, sizeof(msg), "%s", err);
		SWORD_LOG_TO(config, ERR, "reload refused, nothing changed: %s", err);
		d->reloads_refused++;
	} else if ((n = sword_config_reload_plan(&d->cfg, next, msg, sizeof(msg))) < 0) {
		SWORD_LOG_TO(config, ERR, "reload refused, nothing changed: needs a "
			     "restart: %s", msg);
		d->reloads_refused++;
	} else if (n > 0 && sword_config_sections_change(&d->cfg, next) &&
		   sword_daemon_apply_reload(d, next, err, sizeof(err)) < 0) {
		/* sections added or removed: the workers' tables must take them */
		SWORD_LOG_TO(config, ERR, "reload refused, nothing changed: %s", err);
		snprintf(msg, sizeof(msg), "%s", err);
		d->reloads_refused++;
	} else if (n > 0 && !sword_config_sections_change(&d->cfg, next) &&
		   sword_daemon_apply_live(d, next) < 0) {
		snprintf(msg, sizeof(msg), "interrupted by shutdown");
		SWORD_LOG_TO(config, WARNING, "reload interrupted by shutdown");
	} else {
		d->reloads++;
		status = n > 0;
		sword_config_retiring_text(&d->cfg, retiring, sizeof(retiring));
		SWORD_LOG_TO(config, INFO, "reload applied (%d change(s)%s%s), "
			     "config hash %016" PRIx64 "%s%s", n, n ? ": " : "", msg,
			     sword_config_hash(&d->cfg), retiring[0] ? "; draining " : "",
			     retiring);
	}
	free(next);
	swordd_xdp_steer(d);
	/* what /sword/reload answers (its thread waits for reload_seq) */
	d->reload_status = status;
	snprintf(d->reload_msg, sizeof(d->reload_msg), "%s", msg);
	__atomic_store_n(&d->reload_seq, d->reload_seq + 1, __ATOMIC_RELEASE);
	sd_notifyf(0, "READY=1\nSTATUS=forwarding, config hash %016" PRIx64,
		   sword_config_hash(&d->cfg));
}

/*
 * Every main-loop round: while every worker goes round its loop, the
 * guardian's heartbeat (links.c) and, under systemd with WatchdogSec=, the
 * watchdog (every quarter of its period).  A wedged worker stops both: the
 * guardian takes the links down after [ports] guard_ms, systemd kills and
 * restarts swordd after WatchdogSec.
 */
static void
on_round(struct sword_daemon *d)
{
	static uint64_t wd_period, wd_last;
	static int wd_state = -1;       /* -1 unknown, 0 off, 1 on */
	uint64_t usec, now;

	uint32_t forgot;

	/* after a bypass: the guardian sets the links up again only once
	 * every worker forgot what it knew (links.c) */
	if (sword_daemon_bypass_forgotten(d, &forgot))
		swordd_guard_forgot(forgot);
	if (!sword_daemon_workers_progressed(d))
		return;
	swordd_guard_beat();
	if (wd_state < 0) {
		wd_state = sd_watchdog_enabled(0, &usec) > 0;
		if (wd_state)
			wd_period = usec * rte_get_timer_hz() / 4000000;
	}
	now = rte_get_timer_cycles();
	if (wd_state && now - wd_last >= wd_period) {
		sd_notify(0, "WATCHDOG=1");
		wd_last = now;
	}
}

/* --links-down (the config said failover_bypass = on): no EAL; every
 * interface named by the EAL arguments, even if one fails.  0, or 1 if
 * one could not be set down. */
static int
links_down(int argc, char **argv)
{
	char names[16][IF_NAMESIZE], err[160];
	unsigned int n = swordd_eal_ifaces(argc, argv, names, 16), i;
	bool was_up;
	int rc = 0;

	if (n == 0)
		printf("swordd: --links-down: no net_af_packet/net_af_xdp --vdev with "
		       "iface= in the EAL arguments: nothing to do\n");
	for (i = 0; i < n; i++) {
		if (swordd_if_set(names[i], false, &was_up, err, sizeof(err)) < 0) {
			fprintf(stderr, "swordd: --links-down: %s\n", err);
			rc = EXIT_RUNTIME;
			continue;
		}
		printf("swordd: interface %s %s down\n", names[i], was_up ? "set" : "was already");
	}
	return rc;
}

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		__atomic_store_n(&sword_daemon.reload, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&sword_daemon.quit, 1, __ATOMIC_RELAXED);
}

int
main(int argc, char **argv)
{
	struct sword_daemon *d = &sword_daemon;
	struct sword_config cfg;
	struct options o;
	struct rte_mempool *pool;
	char *app_argv[256], *eal_argv[256];
	char tap_quiet[] = "--log-level=pmd.net.tap:crit";
	int app_argc = 0, eal_argc, i, rc, sep = -1;
	unsigned int s, w, nb_ports;
	uint16_t data_room;
	char err[512];
	int exit_code = 0;
	bool pdump = false;
	/* how long a start takes, by phase: a restart's outage is this */
	const double t_main = mono_s();
	double t_eal = t_main, t_tables = t_main;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	/* Without "--" everything is ours (e.g. swordd --help). */
	eal_argc = sep < 0 ? 1 : sep;
	app_argv[app_argc++] = argv[0];
	for (i = sep < 0 ? 1 : sep + 1; i < argc && app_argc < 255; i++)
		app_argv[app_argc++] = argv[i];
	app_argv[app_argc] = NULL;

	rc = parse_options(app_argc, app_argv, &o);
	if (rc > 0)
		return 0;
	if (rc < 0)
		return EXIT_USAGE;
	if (o.version) {
		printf("swordd %s, %s\n", SWORD_VERSION, rte_version());
		return 0;
	}
	if (o.config_keys) {
		sword_config_print_keys(stdout);
		return 0;
	}
	if (build_config(&o, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "swordd: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.check_config) {
		sword_config_print(&cfg, stdout);
		printf("config OK\n");
		return 0;
	}
	if (o.links_down) {
		if (!cfg.failover_bypass) {
			printf("swordd: --links-down: [ports] failover_bypass is off in %s: "
			       "links left alone, nothing to do\n", cfg.source);
			return 0;
		}
		return links_down(eal_argc, argv);
	}

	/*
	 * Fail-open only where a bypass exists ([ports] failover_bypass, which
	 * sword-openflow --failover requires): without one a port going down
	 * saves no RoCE frame, and a host NIC shared with the host's own
	 * traffic (net_af_xdp with the steering program) would cut the host
	 * off.  Before rte_eal_init: the guardian is forked from a process
	 * without DPDK threads (links.c says why it exists).
	 */
	if (cfg.failover_bypass && cfg.guard_ms > 0 && swordd_guard_start(cfg.guard_ms) < 0)
		return EXIT_RUNTIME;

	start_opts = o;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	/*
	 * Before the EAL, so its own messages take the same path: each message
	 * once, on stderr (sword_log.c), with its priority when that is the
	 * journal.  net_tap reports at ERR what is routine for a tap (no multiq
	 * qdisc, hence no rte_flow; no secondary process to tell): only its
	 * critical messages, unless a --log-level names it.  As an EAL
	 * argument, because net_tap registers its log type while the EAL
	 * loads drivers; the last one, because of two --log-level patterns
	 * matching a type registered later the first wins (22.11).
	 */
	{
		FILE *logs = sword_log_open_stream(sword_log_stderr_is_journal());

		if (logs != NULL)
			rte_openlog_stream(logs);
	}
	for (i = 0; i < eal_argc && i < 254; i++)
		eal_argv[i] = argv[i];  /* EAL sees only its own arguments */
	eal_argv[i++] = tap_quiet;
	eal_argc = i;
	eal_argv[eal_argc] = NULL;
	swordd_tsc_calibration_fast(true);
	rc = rte_eal_init(eal_argc, eal_argv);
	swordd_tsc_calibration_fast(false);
	if (rc < 0) {
		fprintf(stderr, "swordd: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return EXIT_RUNTIME;
	}
	t_eal = mono_s();
	roce_crc_init();
	/* avx512-vpclmulqdq needs --force-max-simd-bitwidth=512 (lib/roce) */
	LOG(INFO, "ICRC: %s", roce_icrc_impl());
	LOG(INFO, "TSC: %" PRIu64 " Hz", rte_get_tsc_hz());

	if (rte_lcore_count() < (unsigned int)cfg.workers + 1) {
		LOG(ERR, "%u worker(s) need %u lcores (one main lcore for "
			"housekeeping + one per worker), EAL has %u: use e.g. -l 0-%u, or "
			"--lcores '(0-%u)@(0-1)' to share CPUs 0-1", cfg.workers,
			cfg.workers + 1, rte_lcore_count(), cfg.workers, cfg.workers);
		rte_eal_cleanup();
		return EXIT_USAGE;
	}

	nb_ports = rte_eth_dev_count_avail();
	d->n_slots = cfg.mode == SWORD_MODE_TWO_PORT ? 2 : 1;
	d->slots[0].port_id = cfg.client_port;
	d->slots[0].role = cfg.mode == SWORD_MODE_TWO_PORT ? "client" : "hairpin";
	d->slots[1].port_id = cfg.server_port;
	d->slots[1].role = "server";
	for (s = 0; s < d->n_slots; s++)
		if (!rte_eth_dev_is_valid_port(d->slots[s].port_id)) {
			LOG(ERR, "%s mode needs port %u (%s side), but the EAL "
				"found %u port(s): add --vdev/PCI devices or fix [ports]",
				sword_mode_name(cfg.mode), d->slots[s].port_id, d->slots[s].role,
				nb_ports);
			rte_eal_cleanup();
			return EXIT_RUNTIME;
		}

	{
		uint16_t ports[2] = { d->slots[0].port_id, d->slots[1].port_id };

		if (swordd_mbuf_data_room(ports, d->n_slots, cfg.atomic.pmtu, &data_room,
					  err, sizeof(err)) < 0) {
			LOG(ERR, "%s", err);
			rte_eal_cleanup();
			return EXIT_USAGE;
		}
	}
	pool = rte_pktmbuf_pool_create("sword_mbufs", cfg.mbufs,
				       256, 0,
				       data_room, (int)rte_socket_id());
	if (pool == NULL) {
		LOG(ERR, "cannot create mbuf pool (%u mbufs of %u bytes): %s",
			cfg.mbufs, data_room, rte_strerror(rte_errno));
		rte_eal_cleanup();
		return EXIT_RUNTIME;
	}

	d->pool = pool;
	for (s = 0; s < d->n_slots; s++)
		if (port_init(d->slots[s].port_id, cfg.workers, pool, &cfg,
			      &d->slots[s].n_queues) < 0) {
			exit_code = EXIT_RUNTIME;
			goto out_ports;
		}
	/* a previous swordd (or its guardian) took the links down at its end */
	for (s = 0; s < d->n_slots; s++)
		if (s == 0 || d->slots[1].port_id != d->slots[0].port_id)
			swordd_port_link_set(d->slots[s].port_id, true);

	{
		/* Every RX descriptor holds an mbuf; TX rings, bursts and per-lcore
		 * caches hold more.  Too few mbufs shows up as rx_nombuf. */
		unsigned long need = (unsigned long)rte_lcore_count() * 256 +
			(unsigned long)cfg.workers * 2 * SWORD_TX_BATCH_MAX;

		for (s = 0; s < d->n_slots; s++)
			need += (unsigned long)d->slots[s].n_queues * (cfg.rx_desc + cfg.tx_desc);
		if (cfg.mbufs < need)
			LOG(WARNING, "[ports] mbufs = %u may be too few for %u queue(s) of "
			    "%u+%u descriptors (about %lu needed): expect rx_nombuf",
			    cfg.mbufs, d->slots[0].n_queues, cfg.rx_desc, cfg.tx_desc, need);
	}

	/*
	 * HOOK: register feature implementations before setup, e.g.
	 *   sword_feature_register(SWORD_FEATURE_ATOMIC_REPLACEMENT, &<serializer ops>);
	 * setup attaches them to every worker when the config enables them.
	 */
	sword_feature_register(SWORD_FEATURE_ATOMIC_REPLACEMENT, &ser_fn_ops);
	sword_feature_register(SWORD_FEATURE_CLOVER, &clover_fn_ops);
	sword_feature_register(SWORD_FEATURE_REMAPPING, &remap_fn_ops);
	d->cap_lim = o.capture_lim;
	t_tables = mono_s();
	if (sword_daemon_setup(d, &cfg, err, sizeof(err)) < 0) {
		LOG(ERR, "%s", err);
		exit_code = EXIT_RUNTIME;
		goto out_ports;
	}
	t_tables = mono_s() - t_tables;
	for (i = 0; i < SWORD_CAP_NUM; i++)
		if (o.capture[i] != NULL &&
		    sword_daemon_capture_start(d, (enum sword_cap_dir)i, o.capture[i], err,
					       sizeof(err)) < 0) {
			LOG(ERR, "--capture-%s: %s", sword_cap_dir_name[i], err);
			exit_code = EXIT_RUNTIME;
			goto out_ports;
		}
	/* dpdk-dumpcap (a secondary process) asks us through rte_pdump */
	rc = rte_pdump_init();
	if (rc != 0)
		LOG(WARNING, "live capture (rte_pdump) unavailable: %s", rte_strerror(rte_errno));
	else
		pdump = true;
	sword_daemon_install_flows(d);
	if (sword_telemetry_register(d) != 0 || ser_telemetry_register(d) != 0 ||
	    remap_telemetry_register(d) != 0)
		LOG(WARNING, "telemetry commands not registered");

	/* before READY: an AF_XDP port with sword's program receives nothing
	 * until its server map is filled */
	swordd_xdp_steer(d);
	wait_links(d, cfg.link_wait_ms);

	/* a fail-over bypass while the process makes no progress: the
	 * workers follow its epoch (links.c, sword_daemon.h) */
	d->bypass_epoch = swordd_guard_bypass_epoch();
	d->bypass_up = swordd_guard_up_epoch();
	/* on the lcores sword_daemon_setup placed each worker's memory for */
	for (w = 0; w < d->n_workers; w++)
		rte_eal_remote_launch(sword_worker_loop, d->lanes[w], d->worker_lcore[w]);
	d->running = true;
	wait_workers_running(d);
	LOG(INFO, "running: %s, %u worker(s), %u managed server(s) (ready %.3f s after "
	    "main: EAL %.3f s, tables %.3f s)", sword_mode_name(cfg.mode), d->n_workers,
	    cfg.n_servers, mono_s() - t_main, t_eal - t_main, t_tables);
	/* systemd (Type=notify): ports are started and every worker is in its
	 * loop.  No-op without $NOTIFY_SOCKET. */
	sd_notifyf(0, "READY=1\nMAINPID=%lu\nSTATUS=forwarding: %s, %u worker(s), "
		   "%u managed server(s)", (unsigned long)getpid(),
		   sword_mode_name(cfg.mode), d->n_workers, cfg.n_servers);

	{
		char names[SWORD_MAX_PORTS][IF_NAMESIZE];
		unsigned int n = 0;

		for (s = 0; s < d->n_slots; s++)
			if ((s == 0 || d->slots[1].port_id != d->slots[0].port_id) &&
			    swordd_port_ifname(d->slots[s].port_id, names[n]))
				n++;
		swordd_guard_arm(names, n);
	}
	d->on_reload = reload_config;
	d->on_round = on_round;
	sword_daemon_main_loop(d, o.idle_exit);

	LOG(INFO, "stopping");
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: draining");
	rte_eal_mp_wait_lcore();
	sword_daemon_drain(d);
	sword_daemon_snapshot_ports(d);

out_ports:
	for (s = 0; s < d->n_slots; s++) {
		if (d->slots[s].n_queues == 0 && exit_code == 0)
			continue;
		if (s == 1 && d->slots[1].port_id == d->slots[0].port_id)
			continue;
		/* fail-open: a switch with a fail-over bypass must see the port
		 * down, or it keeps redirecting into a swordd that is gone.
		 * After the drain (its frames went out), before the stop. */
		if (d->slots[s].n_queues != 0 && cfg.failover_bypass)
			swordd_port_link_set(d->slots[s].port_id, false);
		rte_eth_dev_stop(d->slots[s].port_id);
		rte_eth_dev_close(d->slots[s].port_id);
	}
	if (exit_code == 0) {
		log_final_counters(d);
		if (o.stats_json != NULL) {
			FILE *f = fopen(o.stats_json, "w");

			if (f == NULL || sword_daemon_write_json(d, f) < 0) {
				LOG(ERR, "%s: cannot write: %s", o.stats_json,
					strerror(errno));
				exit_code = EXIT_RUNTIME;
			}
			if (f != NULL)
				fclose(f);
		}
		fflush(stdout);
	}
	if (pdump)
		rte_pdump_uninit();
	sword_daemon_free(d);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return exit_code;
}
