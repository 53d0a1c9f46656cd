/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_xdp_map — see sword_xdp_map.h.  The map is not pinned (so no bpffs
 * is needed, also inside `ip netns exec`): it is found through the program
 * attached to the interface, by name and shape.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sword_xdp_map.h"

#define MAX_MAPS 16

int
sword_xdp_map_find(unsigned int ifindex, char *err, size_t errlen)
{
	struct bpf_prog_info pinfo;
	__u32 map_ids[MAX_MAPS], len = sizeof(pinfo), prog_id = 0, i;
	char ifname[IF_NAMESIZE] = "?";
	int prog_fd, map_fd = -1;

	if (if_indextoname(ifindex, ifname) == NULL) {
		snprintf(err, errlen, "interface index %u: no such interface", ifindex);
		return SWORD_XDP_NO_IFACE;
	}
	if (bpf_xdp_query_id((int)ifindex, 0, &prog_id) < 0 || prog_id == 0) {
		snprintf(err, errlen, "%s: no XDP program attached", ifname);
		return SWORD_XDP_NO_PROG;
	}
	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0) {
		snprintf(err, errlen, "%s: XDP program %u: %s", ifname, prog_id,
			 strerror(errno));
		return SWORD_XDP_BPF_ERROR;
	}
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = MAX_MAPS;
	pinfo.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pinfo, &len) < 0) {
		snprintf(err, errlen, "%s: XDP program %u: info: %s", ifname, prog_id,
			 strerror(errno));
		close(prog_fd);
		return SWORD_XDP_BPF_ERROR;
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
		    strcmp(minfo.name, SWORD_XDP_MAP_NAME) == 0 && minfo.key_size == 4 &&
		    minfo.value_size == 2)
			map_fd = fd;
		else
			close(fd);
	}
	if (map_fd < 0) {
		snprintf(err, errlen, "%s: the XDP program (id %u) has no %s map: not "
			 "sword_xdp.bpf.o", ifname, prog_id, SWORD_XDP_MAP_NAME);
		return SWORD_XDP_NOT_SWORD;
	}
	return map_fd;
}

int
sword_xdp_map_fill(int fd, const struct sword_config *cfg, char *err, size_t errlen)
{
	__u32 key, next;
	unsigned int i;
	int more;

	/* drop servers no longer managed */
	for (more = bpf_map_get_next_key(fd, NULL, &key) == 0; more; key = next) {
		int keep = 0;

		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		for (i = 0; i < cfg->n_servers; i++)
			keep |= cfg->servers[i].state != SWORD_INST_FREE &&
				cfg->servers[i].ip == key;
		if (!keep)
			bpf_map_delete_elem(fd, &key);
	}
	for (i = 0; i < cfg->n_servers; i++) {
		__u16 port = cfg->servers[i].udp_port;

		/* a slot a live reload freed (its server removed) */
		if (cfg->servers[i].state == SWORD_INST_FREE)
			continue;
		key = cfg->servers[i].ip;
		if (bpf_map_update_elem(fd, &key, &port, BPF_ANY) < 0) {
			snprintf(err, errlen, "server.%s: %s map update: %s",
				 cfg->servers[i].name, SWORD_XDP_MAP_NAME, strerror(errno));
			return -1;
		}
	}
	return (int)cfg->n_servers;
}
