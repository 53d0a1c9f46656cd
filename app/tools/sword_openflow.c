/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword-openflow — print the OpenFlow rules (ovs-ofctl flow syntax) that make
 * a top-of-rack switch send the RoCEv2 traffic of swordd's managed memory
 * servers through swordd (SPEC F6), for one swordd instance or several.
 *
 * Why it exists: the redirect must match exactly what swordd manages (the
 * [server.NAME] sections of its config), and frames coming back from swordd
 * must not be forwarded with NORMAL: they carry the clients' and servers'
 * source MACs, so a learning switch would move those hosts onto swordd's port.
 *
 * How frames from swordd find their way without a host list: a second
 * OpenFlow table (the --table after the rules' own, "the learned table") is
 * a MAC table that OVS fills itself with the learn() action, from frames
 * arriving on host ports only, and that frames from swordd are looked up in
 * but never learn into (see print_instance()).  --host IP=PORT remains as a
 * static alternative: RoCEv2 from swordd to that IP goes to PORT directly.
 *
 * Scale-out: each -c FILE is one swordd instance owning the servers of its
 * config; the --sword/--sword-server options after it give its ports.  The
 * switch fabric is then the distributor: each server's traffic goes to the
 * instance that owns it, and only there.
 *
 * Fail-over (--failover GROUPFILE): the redirect rules output to OpenFlow
 * fast-failover groups (type=ff), one per swordd port, whose first bucket
 * watches that port and whose second bucket is NORMAL: when an instance's
 * port goes down, its servers' traffic gets the switch's normal forwarding,
 * as if swordd were not there.
 *
 *   sword-openflow -c conf/swordd.conf --sword 5 [--sword-server 6]
 *                  [-c other.conf --sword 7 [--sword-server 8]]...
 *                  [--host 198.18.0.1=1]... [--table 0] [--failover groups.txt]
 *   ... | ovs-ofctl add-flows br0 -
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sword_config.h"

#define MAX_HOSTS 1024
#define MAX_INSTANCES 64
#define MAX_GROUPS 65536
#define SWORD_COOKIE "0x5304d"  /* "sword": lets `ovs-ofctl del-flows br0 cookie=0x5304d/-1` remove them */
#define GROUP_ID_BASE 0x5300    /* fast-failover group ids start here */
#define GROUP_ID_LIVE 0x52ff    /* the always-live group the NORMAL buckets watch */

struct host {
	char ip[INET_ADDRSTRLEN];
	unsigned long port;
};

/* One swordd instance: its config and its switch port(s). */
struct instance {
	const char *config;
	unsigned long sw;          /* client side (two-port) or the one port */
	unsigned long sw_server;   /* server side (two-port); = sw in one-port */
	struct sword_config cfg;
};

/* A fast-failover group: to swordd's port while it is up, else NORMAL. */
struct ff_group {
	unsigned long primary;
};

static struct host hosts[MAX_HOSTS];
static unsigned int n_hosts;
static struct instance inst[MAX_INSTANCES];
static unsigned int n_inst;
static struct ff_group groups[MAX_GROUPS];
static unsigned int n_groups;
static unsigned long table;    /* the rules' table; table + 1 is the learned one */
static FILE *group_file;       /* non-NULL with --failover */

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: sword-openflow -c FILE --sword PORT [--sword-server PORT]\n"
		"                      [-c FILE --sword PORT [--sword-server PORT]]...\n"
		"                      [--host IP=PORT]... [--table N]\n"
		"                      [--failover GROUPFILE]\n"
		"Prints ovs-ofctl flows that redirect RoCEv2 (UDP 4791) to and from the\n"
		"managed memory servers of each FILE through that swordd instance.\n"
		"  -c FILE              a swordd config: one instance; the --sword and\n"
		"                       --sword-server after it are its ports\n"
		"  --sword PORT         OpenFlow port of swordd (one-port mode), or of its\n"
		"                       client side (two-port mode)\n"
		"  --sword-server PORT  OpenFlow port of swordd's server side (two-port)\n"
		"  --host IP=PORT       optional: RoCEv2 leaving swordd for IP goes to PORT\n"
		"                       (static); without it, the destination's port is\n"
		"                       learned (OVS learn()) from frames of host ports\n"
		"  --table N            OpenFlow table of the rules (default 0); table N+1\n"
		"                       holds the learned host MACs (N: 0..253)\n"
		"  --failover GROUPFILE redirect through fast-failover groups written to\n"
		"                       GROUPFILE (load it first: ovs-ofctl -O OpenFlow13\n"
		"                       add-groups BRIDGE GROUPFILE); while swordd's port\n"
		"                       is down its servers' traffic is forwarded NORMAL;\n"
"                       each FILE must say [ports] failover_bypass = on and\n"
"                       must not enable [features] remapping\n"
		"Exit status: 0, or 2 on a usage or configuration error.\n");
}

static int
parse_port(const char *s, unsigned long *out)
{
	char *end;

	*out = strtoul(s, &end, 0);
	return (*s == '\0' || *end != '\0' || *out == 0 || *out > 0xfeff) ? -1 : 0;
}

static const struct host *
host_by_ip(const char *ip)
{
	unsigned int h;

	for (h = 0; h < n_hosts; h++)
		if (strcmp(hosts[h].ip, ip) == 0)
			return &hosts[h];
	return NULL;
}

static int
is_sword_port(unsigned long port)
{
	unsigned int k;

	for (k = 0; k < n_inst; k++)
		if (inst[k].sw == port || inst[k].sw_server == port)
			return 1;
	return 0;
}

/* The action sending a redirected frame to swordd port `sw`: plain output,
 * or with --failover the ff group of that port (NORMAL while it is down). */
static void
print_to_sword(unsigned long sw, char *buf, size_t len)
{
	unsigned int g;

	if (group_file == NULL) {
		snprintf(buf, len, "output:%lu", sw);
		return;
	}
	for (g = 0; g < n_groups; g++)
		if (groups[g].primary == sw)
			break;
	if (g == n_groups) {
		/* OVS requires a watch on every ff bucket; the NORMAL bucket
		 * watches GROUP_ID_LIVE, an indirect group whose one bucket has
		 * no watch and is therefore always live.  OVS takes the first
		 * live bucket: swordd's port while it is up, else NORMAL. */
		if (n_groups == 0)
			fprintf(group_file, "group_id=%u,type=indirect,bucket=actions=NORMAL\n",
				GROUP_ID_LIVE);
		groups[n_groups++].primary = sw;
		fprintf(group_file,
			"group_id=%u,type=ff,bucket=watch_port:%lu,actions=output:%lu,"
			"bucket=watch_group:%u,actions=NORMAL\n", GROUP_ID_BASE + g, sw, sw,
			GROUP_ID_LIVE);
	}
	snprintf(buf, len, "group:%u", GROUP_ID_BASE + g);
}

/* How long a learned MAC stays without a frame from its host: OVS's own
 * default MAC aging (other_config:mac-aging-time). */
#define LEARN_AGING_S 300

/*
 * The learn() action put in every rule that a frame from a host port can
 * match (never in one that a frame from swordd's ports can): it adds, or
 * refreshes, in the learned table (table + 1) the flow
 *     vlan = this frame's VLAN, dl_dst = this frame's source MAC
 *         -> output: the port this frame came in on.
 * hard_timeout: a re-learn resets it, so an entry dies LEARN_AGING_S after
 * its host was last heard from (NORMAL's aging); a host seen on another
 * port replaces it at once (same match, new action).  delete_learned: the
 * learned flows go with `ovs-ofctl del-flows BR cookie=0x5304d/-1`, and
 * they carry the cookie themselves.
 */
static void
print_learn(char *buf, size_t len)
{
	snprintf(buf, len,
		 "learn(table=%lu,hard_timeout=%u,priority=10,cookie=%s,delete_learned,"
		 "NXM_OF_VLAN_TCI[0..11],NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],"
		 "output:NXM_OF_IN_PORT[])", table + 1, LEARN_AGING_S, SWORD_COOKIE);
}

/*
 * Rules of one instance.
 *
 * Frames leaving swordd are matched narrowly: only RoCEv2 (UDP to the
 * server's RoCE port) of this instance's servers, requests by destination
 * on the server side, responses by source on the client side; everything
 * else from swordd's ports is dropped.  Why not `ip,nw_dst` (the first
 * version): the switch's NORMAL rule floods frames for unknown MACs (and
 * every broadcast, ARP) to swordd's ports too, swordd passes non-RoCE
 * frames through, and forwarding them by destination delivered them a
 * second (two-port: third) time.  Matching only what swordd is there for
 * makes every flooded copy die at the switch, whatever the switch's port
 * options are; `no-flood` on swordd's ports (an OVS port setting, not a
 * flow) would also spare swordd the copies, and can be added, but the rule
 * set must be correct without it (hardware switches differ there).
 *
 * Where a frame from swordd goes: NORMAL is out (its MAC learning would
 * see the hosts' source MACs arrive on swordd's port and send their later
 * traffic there), and OVS has no per-port switch to turn NORMAL's learning
 * off (no-flood, no-forward and no-receive are about forwarding; a rewrite
 * of in_port before NORMAL would learn the MAC on whatever port it names).
 * So the switch keeps a MAC table of its own in OpenFlow: print_learn()'s
 * learn() sits in the rules frames from host ports hit (the redirect rules
 * and a priority-1 `learn, NORMAL` rule for everything else, above OVS's
 * default priority-0 NORMAL), while frames from swordd's ports only hit the
 * priority 190-200 rules here, which `resubmit` them to the learned table
 * and contain no learn().  The learned table's miss drops: a destination
 * that never sent a frame on a host port within LEARN_AGING_S cannot be in
 * a RoCE conversation through this switch (the client's request and the
 * server's ARP reply or responses are such frames).  A --host IP=PORT
 * overrides the lookup for that IP with a static output.
 */
static int
print_instance(const struct instance *in)
{
	const struct sword_config *cfg = &in->cfg;
	char ip[INET_ADDRSTRLEN], act[64], learn[256];
	const struct host *srv;
	unsigned int i, h;

	print_learn(learn, sizeof(learn));
	printf("# sword: RoCEv2 of the memory servers in %s through swordd (%s,\n"
	       "# OpenFlow port %lu%s).\n",
	       in->config, cfg->mode == SWORD_MODE_TWO_PORT ? "two-port" : "one-port",
	       in->sw, cfg->mode == SWORD_MODE_TWO_PORT ? " client side" : "");
	if (cfg->mode == SWORD_MODE_TWO_PORT)
		printf("# server side: OpenFlow port %lu\n", in->sw_server);

	printf("# from swordd: its servers' RoCEv2 to the destination's port (--host, or\n"
	       "# the learned table %lu), the rest dropped; nothing from here learns\n",
	       table + 1);
	for (i = 0; i < cfg->n_servers; i++) {
		inet_ntop(AF_INET, &cfg->servers[i].ip, ip, sizeof(ip));
		srv = host_by_ip(ip);
		if (srv != NULL)
			snprintf(act, sizeof(act), "output:%lu", srv->port);
		else
			snprintf(act, sizeof(act), "resubmit(,%lu)", table + 1);
		printf("cookie=%s,table=%lu,priority=200,in_port=%lu,udp,nw_dst=%s,tp_dst=%u,"
		       "actions=%s\n", SWORD_COOKIE, table, in->sw_server, ip,
		       cfg->servers[i].udp_port, act);
		for (h = 0; h < n_hosts; h++) {
			if (&hosts[h] == srv)
				continue;
			printf("cookie=%s,table=%lu,priority=200,in_port=%lu,udp,nw_src=%s,"
			       "nw_dst=%s,tp_dst=%u,actions=output:%lu\n", SWORD_COOKIE, table,
			       in->sw, ip, hosts[h].ip, cfg->servers[i].udp_port, hosts[h].port);
		}
		printf("cookie=%s,table=%lu,priority=195,in_port=%lu,udp,nw_src=%s,tp_dst=%u,"
		       "actions=resubmit(,%lu)\n", SWORD_COOKIE, table, in->sw, ip,
		       cfg->servers[i].udp_port, table + 1);
	}
	printf("cookie=%s,table=%lu,priority=190,in_port=%lu,actions=drop\n",
	       SWORD_COOKIE, table, in->sw);
	if (in->sw_server != in->sw)
		printf("cookie=%s,table=%lu,priority=190,in_port=%lu,actions=drop\n",
		       SWORD_COOKIE, table, in->sw_server);

	/* Into swordd: requests by destination, responses by source (the same
	 * split swordd shards by).  RoCEv2 uses UDP destination port 4791 both
	 * ways.  Each learns its sender's MAC first. */
	printf("# to swordd: requests to and responses from each managed server\n");
	for (i = 0; i < cfg->n_servers; i++) {
		inet_ntop(AF_INET, &cfg->servers[i].ip, ip, sizeof(ip));
		print_to_sword(in->sw, act, sizeof(act));
		printf("cookie=%s,table=%lu,priority=100,udp,nw_dst=%s,tp_dst=%u,"
		       "actions=%s,%s\n", SWORD_COOKIE, table, ip, cfg->servers[i].udp_port,
		       learn, act);
		print_to_sword(in->sw_server, act, sizeof(act));
		printf("cookie=%s,table=%lu,priority=100,udp,nw_src=%s,tp_dst=%u,"
		       "actions=%s,%s\n", SWORD_COOKIE, table, ip, cfg->servers[i].udp_port,
		       learn, act);
	}
	return 0;
}

/* Once for all instances: the learning rule for all other frames from host
 * ports, and the learned table's miss. */
static void
print_learning(void)
{
	char learn[256];

	print_learn(learn, sizeof(learn));
	printf("# everything else from host ports: learn its source MAC, then the\n"
	       "# switch's normal forwarding (swordd's ports never get here: the\n"
	       "# priority-190 drops above)\n");
	printf("cookie=%s,table=%lu,priority=1,actions=%s,NORMAL\n", SWORD_COOKIE, table,
	       learn);
	printf("# learned table: filled by learn() (priority 10); a miss is dropped\n");
	printf("cookie=%s,table=%lu,priority=0,actions=drop\n", SWORD_COOKIE, table + 1);
}

/* Loads and cross-checks every instance (failover: --failover was given);
 * 0 or -1 after a message. */
static int
load_instances(bool failover)
{
	char err[512], ip[INET_ADDRSTRLEN];
	unsigned int k, k2, i, i2;

	for (k = 0; k < n_inst; k++) {
		struct instance *in = &inst[k];

		if (in->sw == 0) {
			fprintf(stderr, "sword-openflow: %s: --sword PORT is required\n",
				in->config);
			return -1;
		}
		if (sword_config_load(in->config, &in->cfg, err, sizeof(err)) < 0) {
			fprintf(stderr, "sword-openflow: %s\n", err);
			return -1;
		}
		/*
		 * A bypass around a remapping swordd cannot be made safe: a
		 * release a lane ran, retransmitted through the bypass onto the
		 * rider's own server QP, runs a second time (two lock holders).
		 * And swordd must know a bypass exists ([ports] failover_bypass,
		 * which it refuses with remapping), so the two agree.
		 */
		if (failover && in->cfg.remapping) {
			fprintf(stderr, "sword-openflow: %s: [features] remapping: on: "
				"--failover refuses it (a request a lane ran would run "
				"again on the client's own QP after the bypass)\n",
				in->config);
			return -1;
		}
		if (failover && !in->cfg.failover_bypass) {
			fprintf(stderr, "sword-openflow: %s: [ports] failover_bypass: off: "
				"--failover needs it on, so that swordd knows of the "
				"bypass\n", in->config);
			return -1;
		}
		if (in->cfg.mode == SWORD_MODE_TWO_PORT && in->sw_server == 0) {
			fprintf(stderr, "sword-openflow: %s is two-port: --sword-server PORT "
				"is required\n", in->config);
			return -1;
		}
		if (in->cfg.mode == SWORD_MODE_ONE_PORT)
			in->sw_server = in->sw;
		if (in->cfg.n_servers == 0) {
			fprintf(stderr, "sword-openflow: %s manages no memory server "
				"([server.NAME]): nothing to redirect\n", in->config);
			return -1;
		}
	}
	/* A server owned by two instances would get two redirect rules of the
	 * same priority and match: which one wins is undefined. */
	for (k = 0; k < n_inst; k++)
		for (k2 = k + 1; k2 < n_inst; k2++)
			for (i = 0; i < inst[k].cfg.n_servers; i++)
				for (i2 = 0; i2 < inst[k2].cfg.n_servers; i2++)
					if (inst[k].cfg.servers[i].ip == inst[k2].cfg.servers[i2].ip) {
						inet_ntop(AF_INET, &inst[k].cfg.servers[i].ip, ip,
							  sizeof(ip));
						fprintf(stderr, "sword-openflow: server %s is managed "
							"by both %s and %s: each server belongs to one "
							"instance\n", ip, inst[k].config, inst[k2].config);
						return -1;
					}
	for (k = 0; k < n_inst; k++)
		for (k2 = 0; k2 < n_inst; k2++)
			if (k != k2 && (inst[k].sw == inst[k2].sw ||
					inst[k].sw == inst[k2].sw_server)) {
				fprintf(stderr, "sword-openflow: %s and %s share OpenFlow port "
					"%lu: each instance needs its own port(s)\n",
					inst[k].config, inst[k2].config, inst[k].sw);
				return -1;
			}
	for (i = 0; i < n_hosts; i++) {
		if (is_sword_port(hosts[i].port)) {
			fprintf(stderr, "sword-openflow: --host %s=%lu is a swordd port\n",
				hosts[i].ip, hosts[i].port);
			return -1;
		}
		for (i2 = i + 1; i2 < n_hosts; i2++)
			if (strcmp(hosts[i].ip, hosts[i2].ip) == 0) {
				fprintf(stderr, "sword-openflow: --host %s given twice\n",
					hosts[i].ip);
				return -1;
			}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "sword", required_argument, NULL, 's' },
		{ "sword-server", required_argument, NULL, 'S' },
		{ "host", required_argument, NULL, 'H' },
		{ "table", required_argument, NULL, 't' },
		{ "failover", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *failover = NULL;
	unsigned int k;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			/* a new instance, unless the ports came first (-c last) */
			if (n_inst > 0 && inst[n_inst - 1].config == NULL) {
				inst[n_inst - 1].config = optarg;
				break;
			}
			if (n_inst == MAX_INSTANCES) {
				fprintf(stderr, "sword-openflow: at most %d instances (-c)\n",
					MAX_INSTANCES);
				return 2;
			}
			inst[n_inst++].config = optarg;
			break;
		case 's':
		case 'S': {
			struct instance *in;
			unsigned long *p;

			if (n_inst == 0)
				n_inst = 1;     /* --sword before -c: the first instance */
			in = &inst[n_inst - 1];
			p = opt == 's' ? &in->sw : &in->sw_server;
			if (*p != 0) {
				fprintf(stderr, "sword-openflow: --%s given twice for %s\n",
					opt == 's' ? "sword" : "sword-server",
					in->config ? in->config : "the first instance");
				return 2;
			}
			if (parse_port(optarg, p) < 0) {
				fprintf(stderr, "sword-openflow: --%s: not an OpenFlow port "
					"number: \"%s\"\n", opt == 's' ? "sword" : "sword-server",
					optarg);
				return 2;
			}
			break;
		}
		case 'H': {
			const char *eq = strchr(optarg, '=');
			struct in_addr a;

			if (n_hosts == MAX_HOSTS || eq == NULL ||
			    (size_t)(eq - optarg) >= sizeof(hosts[0].ip)) {
				fprintf(stderr, "sword-openflow: --host: want IP=PORT: \"%s\"\n",
					optarg);
				return 2;
			}
			memcpy(hosts[n_hosts].ip, optarg, (size_t)(eq - optarg));
			hosts[n_hosts].ip[eq - optarg] = '\0';
			if (inet_pton(AF_INET, hosts[n_hosts].ip, &a) != 1 ||
			    parse_port(eq + 1, &hosts[n_hosts].port) < 0) {
				fprintf(stderr, "sword-openflow: --host: want IPv4=PORT: \"%s\"\n",
					optarg);
				return 2;
			}
			n_hosts++;
			break;
		}
		case 't': {
			char *end;

			table = strtoul(optarg, &end, 0);
			/* table + 1 is the learned table */
			if (*optarg == '\0' || *end != '\0' || table > 253) {
				fprintf(stderr, "sword-openflow: --table: 0..253: \"%s\"\n", optarg);
				return 2;
			}
			break;
		}
		case 'f':
			failover = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || n_inst == 0 || inst[0].config == NULL ||
	    inst[n_inst - 1].config == NULL || inst[0].sw == 0) {
		fprintf(stderr, "sword-openflow: -c FILE and --sword PORT are required\n");
		usage(stderr);
		return 2;
	}
	if (load_instances(failover != NULL) < 0)
		return 2;
	if (failover != NULL) {
		group_file = fopen(failover, "w");
		if (group_file == NULL) {
			perror(failover);
			return 2;
		}
	}

	printf("# sword: %u swordd instance(s).  Load: ovs-ofctl%s add-flows BRIDGE FILE;\n"
	       "# remove: ovs-ofctl del-flows BRIDGE cookie=%s/-1\n", n_inst,
	       failover ? " -O OpenFlow13" : "", SWORD_COOKIE);
	if (failover != NULL)
		printf("# fast-failover groups in %s: load them first with\n"
		       "# ovs-ofctl -O OpenFlow13 add-groups BRIDGE %s\n", failover, failover);
	for (k = 0; k < n_inst; k++)
		print_instance(&inst[k]);
	print_learning();
	if (group_file != NULL && fclose(group_file) != 0) {
		perror(failover);
		return 2;
	}
	return 0;
}
