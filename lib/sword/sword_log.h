/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_log.h — rte_log types of the pipeline, one per component, so an
 * operator can turn one up or down (EAL --log-level=sword.flow:debug) and
 * a log collector can tell them apart:
 *
 *   sword          library messages without a more specific component
 *   sword.worker   worker lcores (queues, idle workers)
 *   sword.flow     rte_flow steering of servers to workers
 *   sword.stats    the periodic rate lines and the final counters
 *   sword.config   configuration reloads (SIGHUP)
 *
 * The daemon's own messages use "swordd" and "swordd.port" (app/swordd).
 * After rte_eal_init everything goes through rte_log; before it (usage and
 * configuration errors) swordd writes to stderr.
 */
#ifndef SWORD_LOG_H
#define SWORD_LOG_H

#include <stdbool.h>
#include <stdio.h>

#include <rte_log.h>

extern int sword_logtype;
extern int sword_logtype_worker;
extern int sword_logtype_flow;
extern int sword_logtype_stats;
extern int sword_logtype_config;

#define SWORD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sword_logtype, "sword: " fmt "\n", ##__VA_ARGS__)

/* SWORD_LOG_TO(flow, INFO, "...") logs on sword.flow. */
#define SWORD_LOG_TO(comp, level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sword_logtype_ ## comp, "sword." #comp ": " fmt "\n", \
		##__VA_ARGS__)

/* Does stderr go to the journal (JOURNAL_STREAM matches it)? */
bool sword_log_stderr_is_journal(void);

/*
 * A stream for rte_openlog_stream: each message to stderr once (no syslog
 * copy), one line per line, each prefixed with its sd-daemon priority
 * ("<3>") when journal.  NULL if it cannot be made.
 */
FILE *sword_log_open_stream(bool journal);

#endif /* SWORD_LOG_H */
