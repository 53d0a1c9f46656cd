/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword-xdp-servers — fill the sword_servers map of the XDP steering
 * program (sword_xdp.bpf.c) attached to an interface from a swordd config.
 *
 * swordd fills the map itself at start and on SIGHUP (sword_xdp_map.c);
 * this tool is for by hand: to inspect or repair the steering without a
 * restart, or for the program attached by something other than swordd.
 * It finds the program on the interface, its map by name, and writes one
 * entry per [server.NAME]: IPv4 -> RoCE UDP port.  Entries of servers no
 * longer in the config are removed, so re-running is always safe.
 *
 *   sword-xdp-servers -c conf/swordd.conf --iface IF [--iface IF2]
 *
 * Exit status: 0, 1 when the program or map is not found or cannot be
 * written, 2 on a usage or configuration error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "sword_config.h"
#include "sword_xdp_map.h"

#define MAX_IFACES 8

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: sword-xdp-servers -c FILE --iface IF [--iface IF]...\n"
		"Writes the managed servers of FILE (IPv4 -> RoCE UDP port) into the\n"
		"%s map of the sword XDP program attached to each IF.\n"
		"Exit status: 0, 1 on a BPF error, 2 on a usage or configuration error.\n",
		SWORD_XDP_MAP_NAME);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "iface", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct sword_config cfg;
	const char *config = NULL, *ifaces[MAX_IFACES];
	unsigned int n_ifaces = 0, k;
	char err[512];
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, "c:i:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'i':
			if (n_ifaces == MAX_IFACES) {
				fprintf(stderr, "sword-xdp-servers: at most %d --iface\n",
					MAX_IFACES);
				return 2;
			}
			ifaces[n_ifaces++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || config == NULL || n_ifaces == 0) {
		usage(stderr);
		return 2;
	}
	if (sword_config_load(config, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sword-xdp-servers: %s\n", err);
		return 2;
	}
	libbpf_set_print(NULL);
	for (k = 0; k < n_ifaces; k++) {
		unsigned int ifindex = if_nametoindex(ifaces[k]);
		int fd = -1, n = -1;

		if (ifindex == 0)
			snprintf(err, sizeof(err), "%s: no such interface", ifaces[k]);
		else if ((fd = sword_xdp_map_find(ifindex, err, sizeof(err))) >= 0)
			n = sword_xdp_map_fill(fd, &cfg, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "sword-xdp-servers: %s%s\n", err,
				fd == SWORD_XDP_NO_PROG ? " (is swordd running with "
				"xdp_prog=sword_xdp.bpf.o?)" : "");
			rc = 1;
		} else {
			printf("sword-xdp-servers: %s: %d managed server(s) steered to "
			       "swordd\n", ifaces[k], n);
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}
