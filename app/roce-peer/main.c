/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce-peer — userspace RoCEv2 RC endpoints for the network: a memory
 * server and contending clients (lib/peer), run inside network namespaces
 * to test, load and demo swordd without RDMA hardware.
 *
 *   roce-peer server --iface IF --ip A [options]
 *   roce-peer client --iface IF --ip A --server-ip B --server-mac M [options]
 *
 * QP setup is static (no connection manager): client C with Q QPs owns the
 * global QP indexes g = C*Q .. C*Q+Q-1; QP g is client QPN
 * client-qpn-base+g and server QPN server-qpn-base+g, both sides start at
 * PSN peer_qp_psn0(psn-seed, g) (or --initial-psn N on every QP, as
 * Sherman), and the server binds QP g to the first address that sends it
 * a request.  Both sides must agree on the bases, the seed (or initial PSN)
 * and the PMTU; the server's --max-qps must cover every g in use.  A client
 * with --reconnect-every re-creates its QPs and tells the server out of
 * band (UDP port 4792, see lib/peer/peer_ctl.c).
 *
 * Exit status: 0 ok; 1 violation, QP error, retry storm, or incomplete run;
 * 2 usage or setup error.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "roce_peer.h"

volatile int rp_stop;

static void
on_signal(int sig)
{
	(void)sig;
	rp_stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
"usage: roce-peer server|client [options]\n"
"common:\n"
"  --iface IF            interface (AF_PACKET; needs CAP_NET_RAW)\n"
"  --ip A                own IPv4 address\n"
"  --psn-seed N          initial PSN seed both sides agree on (default 1)\n"
"  --initial-psn N       every QP starts at PSN N instead (Sherman: 3185)\n"
"  --pmtu N              256..4096 (default 1024)\n"
"  --server-qpn-base N   (default 0x100)   --client-qpn-base N (default 0x10000)\n"
"  --duration S          seconds (server: 0 = until SIGINT/SIGTERM)\n"
"  --progress S          progress line every S seconds (0 = off, default 1)\n"
"  --json FILE           machine-readable summary ('-' = stdout)\n"
"  --quiet               no human summary\n"
"  faults (seeded, on frames this endpoint sends):\n"
"  --loss P --dup P --reorder P --reorder-us N --delay-us N --fault-seed N\n"
"server:\n"
"  --mr RKEY:BASE:LEN    memory region (repeatable; default 0x1234:0x10000000:0x1000000)\n"
"  --max-qps N           global QP indexes served (default 256)\n"
"  --ack every|ackreq|K  ACK every message, AckReq only, or every K (default every)\n"
"  --dump-locks N        include N lock words/records in the summary\n"
"  --dump-clover K       walk the clover chains of keys 0..K-1 into the summary\n"
"  --ready-file F        create F once listening\n"
"  --atomic-unit RATE    a MODEL of an RNIC atomic unit (this is not a NIC): atomics\n"
"                        on one 8-byte word run one at a time, RATE per second per\n"
"                        word (a ConnectX-5 does about 2.93e6); an atomic waits for\n"
"                        its word's unit and its QP's later requests wait behind it\n"
"                        (default: off, atomics run on arrival)\n"
"  --atomic-unit-queue N requests held behind waiting atomics, all QPs together\n"
"                        (default 1024); one that finds it full is dropped and the\n"
"                        client retransmits it\n"
"client:\n"
"  --server-ip A --server-mac M\n"
"  --client-id C         (default 0)     --qps Q (default 1)\n"
"  --window W            outstanding WQEs per QP (default 16)\n"
"  --rto-us N            retransmission timeout (default 20000)\n"
"  --max-retries N       per WQE before QP error (default 64)\n"
"  --workload sherman-lock|rcuckoo-lock|cas-bench|clover  (default sherman-lock)\n"
"  --locks N             lock count, or clover keys (default 4)\n"
"  --ops N               lock/bench ops per QP (default: run for --duration)\n"
"  --rkey N --base VA    remote MR (defaults match the server's default MR)\n"
"  --ackreq all|last     AckReq on every WRITE or on the last of a batch\n"
"  --retry-storm N       consecutive failed acquires = storm (default 1000000)\n"
"  --backoff-us N        wait before retrying a failed acquire (default 0)\n"
"  --reconnect-every N   after every N ops a QP is re-created (same QPNs, same\n"
"                        initial PSN) and the server told out of band (default 0: never)\n"
"  --reconnect-qps LIST  with --reconnect-every: only these global QP indexes (client C\n"
"                        with Q QPs has C*Q..C*Q+Q-1) re-create, LIST = I or LO-HI,\n"
"                        comma-separated (default: every QP)\n"
"  --read-before-acquire lock workloads: each acquire is READ record + CAS lock, one\n"
"                        batch (two pipelined requests from the first op on)\n");
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	*v = strtoull(s, &end, 0);
	return (*s && !*end) ? 0 : -1;
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

enum {
	O_IFACE = 256, O_IP, O_SEED, O_PMTU, O_SQB, O_CQB, O_DURATION, O_PROGRESS, O_JSON,
	O_QUIET, O_LOSS, O_DUP, O_REORDER, O_REORDER_US, O_DELAY_US, O_FSEED, O_MR,
	O_MAXQPS, O_ACK, O_DUMP, O_READY, O_SIP, O_SMAC, O_CID, O_QPS, O_WINDOW, O_RTO,
	O_MAXRETRY, O_WORKLOAD, O_LOCKS, O_OPS, O_RKEY, O_BASE, O_ACKREQ, O_STORM,
	O_BACKOFF, O_DUMP_CLOVER, O_INIT_PSN, O_RECONNECT, O_READ_FIRST, O_AUNIT,
	O_AUNIT_QUEUE, O_RECONNECT_QPS, O_HELP,
};

static const struct option longopts[] = {
	{ "iface", 1, NULL, O_IFACE }, { "ip", 1, NULL, O_IP },
	{ "psn-seed", 1, NULL, O_SEED }, { "pmtu", 1, NULL, O_PMTU },
	{ "server-qpn-base", 1, NULL, O_SQB }, { "client-qpn-base", 1, NULL, O_CQB },
	{ "duration", 1, NULL, O_DURATION }, { "progress", 1, NULL, O_PROGRESS },
	{ "json", 1, NULL, O_JSON }, { "quiet", 0, NULL, O_QUIET },
	{ "loss", 1, NULL, O_LOSS }, { "dup", 1, NULL, O_DUP },
	{ "reorder", 1, NULL, O_REORDER }, { "reorder-us", 1, NULL, O_REORDER_US },
	{ "delay-us", 1, NULL, O_DELAY_US }, { "fault-seed", 1, NULL, O_FSEED },
	{ "mr", 1, NULL, O_MR }, { "max-qps", 1, NULL, O_MAXQPS },
	{ "ack", 1, NULL, O_ACK }, { "dump-locks", 1, NULL, O_DUMP },
	{ "ready-file", 1, NULL, O_READY }, { "server-ip", 1, NULL, O_SIP },
	{ "server-mac", 1, NULL, O_SMAC }, { "client-id", 1, NULL, O_CID },
	{ "qps", 1, NULL, O_QPS }, { "window", 1, NULL, O_WINDOW },
	{ "rto-us", 1, NULL, O_RTO }, { "max-retries", 1, NULL, O_MAXRETRY },
	{ "workload", 1, NULL, O_WORKLOAD }, { "locks", 1, NULL, O_LOCKS },
	{ "ops", 1, NULL, O_OPS }, { "rkey", 1, NULL, O_RKEY }, { "base", 1, NULL, O_BASE },
	{ "ackreq", 1, NULL, O_ACKREQ }, { "retry-storm", 1, NULL, O_STORM },
	{ "backoff-us", 1, NULL, O_BACKOFF }, { "dump-clover", 1, NULL, O_DUMP_CLOVER },
	{ "initial-psn", 1, NULL, O_INIT_PSN }, { "reconnect-every", 1, NULL, O_RECONNECT },
	{ "read-before-acquire", 0, NULL, O_READ_FIRST },
	{ "atomic-unit", 1, NULL, O_AUNIT }, { "atomic-unit-queue", 1, NULL, O_AUNIT_QUEUE },
	{ "reconnect-qps", 1, NULL, O_RECONNECT_QPS },
	{ "help", 0, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static int
bad(const char *opt, const char *val)
{
	fprintf(stderr, "roce-peer: bad value for --%s: '%s'\n", opt, val);
	return 2;
}

/* The modelled unit's rate: atomics per second on one word.  Its period
 * is kept in whole ns, so more than 1e9 cannot be modelled. */
/* --reconnect-qps: "I" or "LO-HI", comma-separated */
static int
parse_qp_list(const char *s, struct rp_opts *o)
{
	const char *p = s;

	o->n_reconnect_ranges = 0;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 0), hi;

		if (end == p || o->n_reconnect_ranges == RP_MAX_RECONNECT_RANGES)
			return -1;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtoul(++p, &end, 0);
			if (end == p || hi < lo)
				return -1;
			p = end;
		}
		if (hi > (1ul << 16))
			return -1;
		o->reconnect_lo[o->n_reconnect_ranges] = (uint32_t)lo;
		o->reconnect_hi[o->n_reconnect_ranges++] = (uint32_t)hi;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return o->n_reconnect_ranges ? 0 : -1;
}

static int
parse_atomic_unit(const char *s, double *rate)
{
	char *end;
	double d = strtod(s, &end);

	if (!*s || *end || !isfinite(d) || d <= 0 || d > 1e9) {
		fprintf(stderr, "roce-peer: bad value for --atomic-unit: '%s' (wants the modelled "
			"unit's rate in atomics per second per 8-byte word, a number > 0 and "
			"<= 1e9, e.g. 2.93e6)\n", s);
		return 2;
	}
	*rate = d;
	return 0;
}

int
main(int argc, char **argv)
{
	struct rp_opts o = {
		.psn_seed = 1, .pmtu = 1024, .server_qpn_base = 0x100,
		.client_qpn_base = 0x10000, .progress_s = 1, .max_qps = 256,
		.ack_mode = PEER_ACK_EVERY, .n_qps = 1, .window = 16, .rto_us = 20000,
		.max_retries = 64, .workload = WL_SHERMAN, .locks = 4,
		.rkey = RP_DEFAULT_RKEY, .base = RP_DEFAULT_BASE, .retry_storm = 1000000,
	};
	struct sigaction sa;
	bool server;
	int c, idx;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "server"))
		server = true;
	else if (!strcmp(argv[1], "client"))
		server = false;
	else {
		fprintf(stderr, "roce-peer: role must be 'server' or 'client', not '%s'\n", argv[1]);
		return 2;
	}
	argc--;
	argv++;
	idx = 0;
	while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
		const char *name = longopts[idx].name;
		struct in_addr a;
		uint64_t v = 0;
		char *end;
		double d;

		switch (c) {
		case O_IFACE: o.iface = optarg; continue;
		case O_JSON: o.json = optarg; continue;
		case O_READY: o.ready_file = optarg; continue;
		case O_QUIET: o.quiet = true; continue;
		case O_READ_FIRST: o.read_before_acquire = true; continue;
		case O_RECONNECT_QPS:
			if (parse_qp_list(optarg, &o))
				return bad(name, optarg);
			continue;
		case O_AUNIT:
			if (parse_atomic_unit(optarg, &o.atomic_unit_rate))
				return 2;
			continue;
		case O_HELP: usage(stdout); return 0;
		case O_IP: case O_SIP:
			if (inet_pton(AF_INET, optarg, &a) != 1)
				return bad(name, optarg);
			*(c == O_IP ? &o.ip : &o.server_ip) = a.s_addr;
			continue;
		case O_SMAC:
			if (parse_mac(optarg, o.server_mac))
				return bad(name, optarg);
			o.have_server_mac = true;
			continue;
		case O_DURATION: case O_PROGRESS: case O_LOSS: case O_DUP: case O_REORDER:
			d = strtod(optarg, &end);
			if (!*optarg || *end || d < 0 || ((c == O_LOSS || c == O_DUP || c == O_REORDER) && d > 1))
				return bad(name, optarg);
			if (c == O_DURATION) o.duration_s = d;
			else if (c == O_PROGRESS) o.progress_s = d;
			else if (c == O_LOSS) o.faults.loss = d;
			else if (c == O_DUP) o.faults.dup = d;
			else o.faults.reorder = d;
			continue;
		case O_MR: {
			unsigned long long rk, b, l;
			char tail;

			if (o.n_mrs == PEER_MAX_MRS ||
			    sscanf(optarg, "%lli:%lli:%lli%c", &rk, &b, &l, &tail) != 3 ||
			    rk > UINT32_MAX || l == 0 || l > (1ull << 30))
				return bad(name, optarg);
			o.mrs[o.n_mrs++] = (struct peer_mr){ .rkey = (uint32_t)rk, .base = b, .length = l };
			continue;
		}
		case O_ACK:
			if (!strcmp(optarg, "every"))
				o.ack_mode = PEER_ACK_EVERY;
			else if (!strcmp(optarg, "ackreq"))
				o.ack_mode = PEER_ACK_ACKREQ;
			else if (!parse_u64(optarg, &v) && v >= 1 && v <= 1024) {
				o.ack_mode = PEER_ACK_EVERY_K;
				o.ack_k = (uint32_t)v;
			} else
				return bad(name, optarg);
			continue;
		case O_WORKLOAD:
			if (!strcmp(optarg, "sherman-lock"))
				o.workload = WL_SHERMAN;
			else if (!strcmp(optarg, "rcuckoo-lock"))
				o.workload = WL_RCUCKOO;
			else if (!strcmp(optarg, "cas-bench"))
				o.workload = WL_CASBENCH;
			else if (!strcmp(optarg, "clover"))
				o.workload = WL_CLOVER;
			else
				return bad(name, optarg);
			continue;
		case O_ACKREQ:
			if (!strcmp(optarg, "all"))
				o.ackreq_all = true;
			else if (!strcmp(optarg, "last"))
				o.ackreq_all = false;
			else
				return bad(name, optarg);
			continue;
		default:
			break;
		}
		idx = 0;
		if (c < 256 || c > O_HELP) {
			usage(stderr);
			return 2;
		}
		if (parse_u64(optarg, &v))
			return bad(name, optarg);
		switch (c) {
		case O_SEED: o.psn_seed = (uint32_t)v; break;
		case O_PMTU: o.pmtu = (uint32_t)v; break;
		case O_SQB: if (v > ROCE_QPN_MASK) return bad(name, optarg); o.server_qpn_base = (uint32_t)v; break;
		case O_CQB: if (v > ROCE_QPN_MASK) return bad(name, optarg); o.client_qpn_base = (uint32_t)v; break;
		case O_REORDER_US: o.faults.reorder_us = (uint32_t)v; break;
		case O_DELAY_US: o.faults.delay_us = (uint32_t)v; break;
		case O_FSEED: o.faults.seed = v; break;
		case O_MAXQPS: if (!v || v > (1u << 16)) return bad(name, optarg); o.max_qps = (uint32_t)v; break;
		case O_DUMP: if (v > RP_MAX_LOCKS) return bad(name, optarg); o.dump_locks = (uint32_t)v; break;
		case O_CID: o.client_id = (uint32_t)v; break;
		case O_QPS: if (!v || v > 1024) return bad(name, optarg); o.n_qps = (uint32_t)v; break;
		case O_WINDOW: if (v < 4 || v > PEER_SQ_SIZE) return bad(name, optarg); o.window = (uint32_t)v; break;
		case O_RTO: if (!v) return bad(name, optarg); o.rto_us = v; break;
		case O_MAXRETRY: o.max_retries = (uint32_t)v; break;
		case O_LOCKS: if (!v || v > RP_MAX_LOCKS) return bad(name, optarg); o.locks = (uint32_t)v; break;
		case O_OPS: o.ops_per_qp = v; break;
		case O_RKEY: if (v > UINT32_MAX) return bad(name, optarg); o.rkey = (uint32_t)v; break;
		case O_BASE: o.base = v; break;
		case O_STORM: if (!v) return bad(name, optarg); o.retry_storm = v; break;
		case O_BACKOFF: o.backoff_us = (uint32_t)v; break;
		case O_INIT_PSN:
			if (v > ROCE_PSN_MASK)
				return bad(name, optarg);
			o.fixed_psn = true;
			o.initial_psn = (uint32_t)v;
			break;
		case O_RECONNECT: o.reconnect_every = v; break;
		case O_DUMP_CLOVER: if (v > RP_CLOVER_MAX_KEYS) return bad(name, optarg); o.dump_clover = (uint32_t)v; break;
		case O_AUNIT_QUEUE: if (!v || v > (1u << 20)) return bad(name, optarg); o.atomic_unit_queue = (uint32_t)v; break;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "roce-peer: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o.iface || !o.ip) {
		fprintf(stderr, "roce-peer: --iface and --ip are required\n");
		return 2;
	}
	if (!server && (o.atomic_unit_rate > 0 || o.atomic_unit_queue)) {
		fprintf(stderr, "roce-peer: --atomic-unit and --atomic-unit-queue are server options\n");
		return 2;
	}
	if (o.atomic_unit_queue && !(o.atomic_unit_rate > 0)) {
		fprintf(stderr, "roce-peer: --atomic-unit-queue needs --atomic-unit\n");
		return 2;
	}
	if (o.faults.seed == 0)
		o.faults.seed = 0x5eed0000ull + o.client_id * 7919u + (server ? 1 : 0);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* no EAL here: keep DPDK's CRC probing quiet (it logs at INFO) */
	rte_log_set_global_level(RTE_LOG_WARNING);
	roce_crc_init();
	if (server) {
		if (o.n_mrs == 0)
			o.mrs[o.n_mrs++] = (struct peer_mr){ .rkey = RP_DEFAULT_RKEY,
				.base = RP_DEFAULT_BASE, .length = RP_DEFAULT_LEN };
		return rp_server(&o);
	}
	if (!o.server_ip || !o.have_server_mac) {
		fprintf(stderr, "roce-peer: client needs --server-ip and --server-mac\n");
		return 2;
	}
	if (o.n_reconnect_ranges && !o.reconnect_every) {
		fprintf(stderr, "roce-peer: --reconnect-qps needs --reconnect-every\n");
		return 2;
	}
	if (o.duration_s <= 0 && o.ops_per_qp == 0) {
		fprintf(stderr, "roce-peer: client needs --duration or --ops\n");
		return 2;
	}
	if (o.workload == WL_CASBENCH && (uint64_t)(o.client_id + 1) * o.n_qps > RP_BENCH_MAX_QPS) {
		fprintf(stderr, "roce-peer: cas-bench: at most %u QPs in all\n", RP_BENCH_MAX_QPS);
		return 2;
	}
	if (o.workload == WL_CLOVER && o.locks > RP_CLOVER_MAX_KEYS)
		return bad("locks", "more than 1024 clover keys");
	if (o.workload == WL_CLOVER &&
	    (uint64_t)(o.client_id + 1) * o.n_qps * RP_CLOVER_SLOTS_PER_QP * RP_CLOVER_NODE +
	    RP_CLOVER_OFF + RP_CLOVER_MAX_KEYS * RP_CLOVER_NODE > RP_DEFAULT_LEN) {
		fprintf(stderr, "roce-peer: clover: too many QPs for the node area\n");
		return 2;
	}
	return rp_client(&o);
}
