/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_log.h — the "sword" rte_log logtype of the pipeline library.
 * (The daemon's own messages use the "swordd" logtype, see app/swordd.)
 */
#ifndef SWORD_LOG_H
#define SWORD_LOG_H

#include <rte_log.h>

extern int sword_logtype;

#define SWORD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sword_logtype, "sword: " fmt "\n", ##__VA_ARGS__)

#endif /* SWORD_LOG_H */
