/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_mbuf — the data room of swordd's packet mbufs, chosen by the ports it
 * drives (see port_mbuf.c for why it is not a constant).
 */
#ifndef SWORDD_PORT_MBUF_H
#define SWORDD_PORT_MBUF_H

#include <stddef.h>
#include <stdint.h>

/*
 * Data room (headroom included) for a pool shared by `ports`: the default
 * holds a 4096 path-MTU RoCE frame; with a net_af_xdp port, what fits a
 * 4 KiB UMEM chunk (path MTU 2048).  pmtu is [atomic] pmtu.  Returns 0, or
 * -1 with err filled when the configured path MTU cannot fit.
 */
int swordd_mbuf_data_room(const uint16_t *ports, unsigned int n_ports, uint32_t pmtu,
			  uint16_t *room, char *err, size_t errlen);

#endif
