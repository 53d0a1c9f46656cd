/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_xdp_map — find the sword_servers map of the XDP steering program
 * (sword_xdp.bpf.c) attached to an interface and fill it from a swordd
 * config.  Shared by swordd (which fills it at start and on SIGHUP, so an
 * AF_XDP port receives its servers' RoCE from the first frame) and the
 * sword-xdp-servers tool (by hand, e.g. for a program loaded by another
 * process).
 */
#ifndef SWORD_XDP_MAP_H
#define SWORD_XDP_MAP_H

#include <stddef.h>

#include "sword_config.h"

#define SWORD_XDP_MAP_NAME "sword_servers"

/* sword_xdp_map_find's failures, negative */
enum sword_xdp_map_err {
	SWORD_XDP_NO_IFACE = -1,    /* no interface of that index */
	SWORD_XDP_NO_PROG = -2,     /* no XDP program attached */
	SWORD_XDP_NOT_SWORD = -3,   /* a program without the sword_servers map */
	SWORD_XDP_BPF_ERROR = -4,   /* bpf(2) refused: see err */
};

/*
 * fd of the sword_servers map of the XDP program attached to ifindex (the
 * caller closes it), or a negative enum sword_xdp_map_err with err filled.
 */
int sword_xdp_map_find(unsigned int ifindex, char *err, size_t errlen);

/*
 * Make the map hold exactly cfg's managed servers (IPv4 -> RoCE UDP port):
 * entries of servers no longer configured are removed.  Returns the number
 * of servers written, or -1 with err filled.
 */
int sword_xdp_map_fill(int fd, const struct sword_config *cfg, char *err, size_t errlen);

#endif
