/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_telemetry.h — /sword/lanes on the DPDK telemetry socket (see the .c).
 */
#ifndef SWORD_REMAP_TELEMETRY_H
#define SWORD_REMAP_TELEMETRY_H

#include "sword_daemon.h"

/* Register /sword/lanes for daemon d (after sword_daemon_setup). 0 or <0. */
int remap_telemetry_register(const struct sword_daemon *d);

#endif /* SWORD_REMAP_TELEMETRY_H */
