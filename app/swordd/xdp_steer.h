/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_steer — swordd fills the server map of sword's XDP steering program
 * (app/xdp/sword_xdp.bpf.c) on its net_af_xdp ports.
 */
#ifndef SWORDD_XDP_STEER_H
#define SWORDD_XDP_STEER_H

#include "sword_daemon.h"

/*
 * For every started net_af_xdp port of d: write d->cfg's managed servers
 * into the sword_servers map of the XDP program on its interface and log
 * how many.  Called once the ports are started and again on each SIGHUP.
 * Never fails swordd: what it cannot do is logged with what to do instead.
 */
void swordd_xdp_steer(const struct sword_daemon *d);

#endif
