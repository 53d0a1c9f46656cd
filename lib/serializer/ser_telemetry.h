/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_telemetry.h — /sword/lock on the DPDK telemetry socket (see the .c).
 */
#ifndef SWORD_SER_TELEMETRY_H
#define SWORD_SER_TELEMETRY_H

#include "sword_daemon.h"

/* Register /sword/lock for daemon d (after sword_daemon_setup). 0 or <0. */
int ser_telemetry_register(const struct sword_daemon *d);

#endif /* SWORD_SER_TELEMETRY_H */
