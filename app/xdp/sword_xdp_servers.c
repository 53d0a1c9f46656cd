/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword-xdp-servers — fill the sword_servers map of the XDP steering
 * program (sword_xdp.bpf.c) attached to an interface from a swordd config.
 *
 * Why it exists: DPDK's net_af_xdp loads the program (xdp_prog devarg) but
 * knows nothing of swordd's managed servers, and the map is not pinned (so
 * no bpffs is needed, also inside `ip netns exec`).  This tool finds the
 * program on the interface, its map by name, and writes one entry per
 * [server.NAME]: IPv4 -> RoCE UDP port.  Entries of servers no longer in
 * the config are removed, so re-running after a config change is enough.
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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "sword_config.h"

#define MAP_NAME "sword_servers"
#define MAX_IFACES 8
#define MAX_MAPS 16

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: sword-xdp-servers -c FILE --iface IF [--iface IF]...\n"
		"Writes the managed servers of FILE (IPv4 -> RoCE UDP port) into the\n"
		"%s map of the sword XDP program attached to each IF.\n"
		"Exit status: 0, 1 on a BPF error, 2 on a usage or configuration error.\n",
		MAP_NAME);
}

/* fd of the sword_servers map used by the XDP program on ifname, or -1. */
static int
find_map(const char *ifname)
{
	struct bpf_prog_info pinfo;
	__u32 map_ids[MAX_MAPS], len = sizeof(pinfo), prog_id = 0, i;
	int ifindex = (int)if_nametoindex(ifname), prog_fd, map_fd = -1;

	if (ifindex == 0) {
		fprintf(stderr, "sword-xdp-servers: %s: no such interface\n", ifname);
		return -1;
	}
	if (bpf_xdp_query_id(ifindex, 0, &prog_id) < 0 || prog_id == 0) {
		fprintf(stderr, "sword-xdp-servers: %s: no XDP program attached (is swordd "
			"running with xdp_prog=sword_xdp.bpf.o?)\n", ifname);
		return -1;
	}
	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0) {
		fprintf(stderr, "sword-xdp-servers: %s: XDP program %u: %s\n", ifname,
			prog_id, strerror(errno));
		return -1;
	}
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = MAX_MAPS;
	pinfo.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pinfo, &len) < 0) {
		fprintf(stderr, "sword-xdp-servers: %s: program info: %s\n", ifname,
			strerror(errno));
		close(prog_fd);
		return -1;
	}
	close(prog_fd);
	for (i = 0; i < pinfo.nr_map_ids && i < MAX_MAPS && map_fd < 0; i++) {
		struct bpf_map_info minfo;
		__u32 mlen = sizeof(minfo);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);

		if (fd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		if (bpf_obj_get_info_by_fd(fd, &minfo, &mlen) == 0 &&
		    strcmp(minfo.name, MAP_NAME) == 0 && minfo.key_size == 4 &&
		    minfo.value_size == 2)
			map_fd = fd;
		else
			close(fd);
	}
	if (map_fd < 0)
		fprintf(stderr, "sword-xdp-servers: %s: the XDP program (id %u) has no %s "
			"map: not sword_xdp.bpf.o\n", ifname, prog_id, MAP_NAME);
	return map_fd;
}

static int
fill_map(int fd, const struct sword_config *cfg)
{
	__u32 key, next;
	unsigned int i;
	int more;

	/* drop servers no longer managed */
	for (more = bpf_map_get_next_key(fd, NULL, &key) == 0; more; key = next) {
		int keep = 0;

		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		for (i = 0; i < cfg->n_servers; i++)
			keep |= cfg->servers[i].ip == key;
		if (!keep)
			bpf_map_delete_elem(fd, &key);
	}
	for (i = 0; i < cfg->n_servers; i++) {
		__u16 port = cfg->servers[i].udp_port;

		key = cfg->servers[i].ip;
		if (bpf_map_update_elem(fd, &key, &port, BPF_ANY) < 0) {
			fprintf(stderr, "sword-xdp-servers: server.%s: map update: %s\n",
				cfg->servers[i].name, strerror(errno));
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
		int fd = find_map(ifaces[k]);

		if (fd < 0 || fill_map(fd, &cfg) < 0) {
			rc = 1;
		} else {
			printf("sword-xdp-servers: %s: %u managed server(s) steered to "
			       "swordd\n", ifaces[k], cfg.n_servers);
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}
