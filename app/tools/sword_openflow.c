/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword-openflow — print the OpenFlow rules (ovs-ofctl flow syntax) that make
 * a top-of-rack switch send the RoCEv2 traffic of swordd's managed memory
 * servers through swordd (SPEC F6).
 *
 * Why it exists: the redirect must match exactly what swordd manages (the
 * [server.NAME] sections of its config), and frames coming back from swordd
 * must not be forwarded with NORMAL: they carry the clients' and servers'
 * source MACs, so a learning switch would move those hosts onto swordd's port.
 * Frames from swordd are therefore forwarded by destination IP to the host's
 * port, which the operator lists with --host.
 *
 *   sword-openflow -c conf/swordd.conf --sword 5 [--sword-server 6]
 *                  --host 198.18.0.1=1 --host 198.18.0.2=2 [--table 0]
 *   ... | ovs-ofctl add-flows br0 -
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sword_config.h"

#define MAX_HOSTS 1024
#define SWORD_COOKIE "0x5304d"  /* "sword": lets `ovs-ofctl del-flows br0 cookie=0x5304d/-1` remove them */

struct host {
	char ip[INET_ADDRSTRLEN];
	unsigned long port;
};

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: sword-openflow -c FILE --sword PORT [--sword-server PORT]\n"
		"                      --host IP=PORT [--host IP=PORT]... [--table N]\n"
		"Prints ovs-ofctl flows that redirect RoCEv2 (UDP 4791) to and from the\n"
		"managed memory servers of FILE through swordd.\n"
		"  --sword PORT         OpenFlow port of swordd (one-port mode), or of its\n"
		"                       client side (two-port mode)\n"
		"  --sword-server PORT  OpenFlow port of swordd's server side (two-port)\n"
		"  --host IP=PORT       OpenFlow port of a client or memory server; frames\n"
		"                       leaving swordd are forwarded by destination IP\n"
		"  --table N            OpenFlow table (default 0)\n"
		"Exit status: 0, or 2 on a usage or configuration error.\n");
}

static int
parse_port(const char *s, unsigned long *out)
{
	char *end;

	*out = strtoul(s, &end, 0);
	return (*s == '\0' || *end != '\0' || *out == 0 || *out > 0xfeff) ? -1 : 0;
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct sword_config cfg;
	static struct host hosts[MAX_HOSTS];
	unsigned long sw = 0, sw_server = 0, table = 0;
	const char *config = NULL;
	unsigned int n_hosts = 0, i, h;
	char err[512], ip[INET_ADDRSTRLEN];
	int opt;

	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 's':
		case 'S':
			if (parse_port(optarg, opt == 's' ? &sw : &sw_server) < 0) {
				fprintf(stderr, "sword-openflow: --%s: not an OpenFlow port "
					"number: \"%s\"\n", opt == 's' ? "sword" : "sword-server",
					optarg);
				return 2;
			}
			break;
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
			if (*optarg == '\0' || *end != '\0' || table > 254) {
				fprintf(stderr, "sword-openflow: --table: 0..254: \"%s\"\n", optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || config == NULL || sw == 0) {
		fprintf(stderr, "sword-openflow: -c FILE and --sword PORT are required\n");
		usage(stderr);
		return 2;
	}
	if (sword_config_load(config, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sword-openflow: %s\n", err);
		return 2;
	}
	if (cfg.mode == SWORD_MODE_TWO_PORT && sw_server == 0) {
		fprintf(stderr, "sword-openflow: %s is two-port: --sword-server PORT is "
			"required\n", config);
		return 2;
	}
	if (cfg.mode == SWORD_MODE_ONE_PORT)
		sw_server = sw;
	if (cfg.n_servers == 0) {
		fprintf(stderr, "sword-openflow: %s manages no memory server "
			"([server.NAME]): nothing to redirect\n", config);
		return 2;
	}
	for (i = 0; i < cfg.n_servers; i++) {
		inet_ntop(AF_INET, &cfg.servers[i].ip, ip, sizeof(ip));
		for (h = 0; h < n_hosts && strcmp(hosts[h].ip, ip) != 0; h++)
			;
		if (h == n_hosts) {
			fprintf(stderr, "sword-openflow: server.%s (%s) has no --host %s=PORT\n",
				cfg.servers[i].name, ip, ip);
			return 2;
		}
	}

	printf("# sword: RoCEv2 of the memory servers in %s through swordd (%s,\n"
	       "# OpenFlow port %lu%s).  Load: ovs-ofctl add-flows BRIDGE FILE;\n"
	       "# remove: ovs-ofctl del-flows BRIDGE cookie=%s/-1\n",
	       config, cfg.mode == SWORD_MODE_TWO_PORT ? "two-port" : "one-port", sw,
	       cfg.mode == SWORD_MODE_TWO_PORT ? " client side" : "", SWORD_COOKIE);
	if (cfg.mode == SWORD_MODE_TWO_PORT)
		printf("# server side: OpenFlow port %lu\n", sw_server);

	/* Frames leaving swordd: by destination IP, never NORMAL (no MAC
	 * learning on swordd's port); anything else from swordd is dropped. */
	printf("# from swordd: to the destination's port\n");
	for (h = 0; h < n_hosts; h++) {
		printf("cookie=%s,table=%lu,priority=200,in_port=%lu,ip,nw_dst=%s,"
		       "actions=output:%lu\n", SWORD_COOKIE, table, sw, hosts[h].ip,
		       hosts[h].port);
		if (sw_server != sw)
			printf("cookie=%s,table=%lu,priority=200,in_port=%lu,ip,nw_dst=%s,"
			       "actions=output:%lu\n", SWORD_COOKIE, table, sw_server,
			       hosts[h].ip, hosts[h].port);
	}
	printf("cookie=%s,table=%lu,priority=190,in_port=%lu,actions=drop\n",
	       SWORD_COOKIE, table, sw);
	if (sw_server != sw)
		printf("cookie=%s,table=%lu,priority=190,in_port=%lu,actions=drop\n",
		       SWORD_COOKIE, table, sw_server);

	/* Into swordd: requests by destination, responses by source (the same
	 * split swordd shards by).  RoCEv2 uses UDP destination port 4791 both
	 * ways. */
	printf("# to swordd: requests to and responses from each managed server\n");
	for (i = 0; i < cfg.n_servers; i++) {
		inet_ntop(AF_INET, &cfg.servers[i].ip, ip, sizeof(ip));
		printf("cookie=%s,table=%lu,priority=100,udp,nw_dst=%s,tp_dst=%u,"
		       "actions=output:%lu\n", SWORD_COOKIE, table, ip,
		       cfg.servers[i].udp_port, sw);
		printf("cookie=%s,table=%lu,priority=100,udp,nw_src=%s,tp_dst=%u,"
		       "actions=output:%lu\n", SWORD_COOKIE, table, ip,
		       cfg.servers[i].udp_port, sw_server);
	}
	return 0;
}
