/* SPDX-License-Identifier: BSD-3-Clause */
/* The pipeline's rte_log types (see sword_log.h). */
#include "sword_log.h"

RTE_LOG_REGISTER(sword_logtype, sword, INFO);
RTE_LOG_REGISTER(sword_logtype_worker, sword.worker, INFO);
RTE_LOG_REGISTER(sword_logtype_flow, sword.flow, INFO);
RTE_LOG_REGISTER(sword_logtype_stats, sword.stats, INFO);
RTE_LOG_REGISTER(sword_logtype_config, sword.config, INFO);

/*
 * One copy of every message, on stderr.  DPDK 22.11's default stream
 * writes each message to stderr and to syslog; under systemd both reach the
 * journal (twice), and the stderr copy has no priority.  With this stream a
 * message goes to stderr only, one line per line, and when stderr is the
 * journal (JOURNAL_STREAM names it, sd-daemon(3)) each line starts with its
 * priority, "<3>" for an error ... "<7>" for debug.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool log_journal;

bool
sword_log_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (e == NULL || sscanf(e, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static ssize_t
log_write(void *cookie __rte_unused, const char *buf, size_t size)
{
	/* rte_log levels are syslog's + 1 (RTE_LOG_EMERG = 1) */
	int prio = (int)rte_log_cur_msg_loglevel() - 1;
	const char *p = buf, *end = buf + size;
	char pre[8] = "";

	if (prio < 0 || prio > 7)
		prio = 6;
	if (log_journal)
		snprintf(pre, sizeof(pre), "<%d>", prio);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len > 0)          /* empty lines carry nothing */
			dprintf(STDERR_FILENO, "%s%.*s\n", pre, (int)len, p);
		p += len + 1;
	}
	return (ssize_t)size;
}

FILE *
sword_log_open_stream(bool journal)
{
	static const cookie_io_functions_t fns = { .write = log_write };
	FILE *f;

	log_journal = journal;
	f = fopencookie(NULL, "w", fns);
	if (f != NULL)
		setvbuf(f, NULL, _IOFBF, 8192);   /* rte_vlog flushes every message */
	return f;
}
