/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_stats.c — the one list of counter names and their aggregation.
 */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "sword_stats.h"

static const char *fn_names[SWORD_FN_MAX_COUNTERS];

void
sword_stats_set_fn_names(unsigned int first, unsigned int n, const char *const *names)
{
	unsigned int i;

	for (i = 0; i < n && first + i < SWORD_FN_MAX_COUNTERS; i++)
		fn_names[first + i] = names[i];
}

static inline uint64_t
ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void
sword_stats_sum(struct sword_worker_stats *sum,
		const struct sword_worker_stats *const *w, unsigned int n)
{
	const size_t words = sizeof(*sum) / sizeof(uint64_t);
	uint64_t *d = (uint64_t *)sum;
	unsigned int i;
	size_t k;

	RTE_BUILD_BUG_ON(sizeof(*sum) % sizeof(uint64_t) != 0);
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		const uint64_t *s = (const uint64_t *)w[i];

		for (k = 0; k < words; k++)
			d[k] += ld(&s[k]);
	}
}

void
sword_stats_foreach(const struct sword_worker_stats *s, sword_stats_cb cb, void *arg)
{
	char key[64];
	int i;

	cb(arg, "rx", s->rx);
	cb(arg, "tx", s->tx);
	cb(arg, "dropped", sword_stats_dropped(s));
	cb(arg, "tx_dropped", s->tx_dropped);
	cb(arg, "dispatched", s->dispatched);
	cb(arg, "dispatch_dropped", s->dispatch_dropped);
	cb(arg, "bypass_forgets", s->bypass_forgets);
	cb(arg, "bypass_dropped", s->bypass_dropped);
	cb(arg, "bypass_kept", s->bypass_kept);
	cb(arg, "bypass_kept_resent", s->bypass_kept_resent);
	cb(arg, "filtered", s->filtered);
	cb(arg, "passthrough", s->passthrough);
	cb(arg, "rewritten", s->rewritten);
	cb(arg, "consumed", s->consumed);
	cb(arg, "non_roce", s->non_roce);
	for (i = 1; i < ROCE_NOT_NUM; i++) {
		snprintf(key, sizeof(key), "non_roce_%s", roce_status_name(i));
		cb(arg, key, s->non_roce_by[i]);
	}
	cb(arg, "unmanaged", s->unmanaged);
	cb(arg, "managed_rx", s->managed_rx);
	cb(arg, "malformed", s->malformed);
	for (i = 1; i < ROCE_ERR_NUM; i++) {
		snprintf(key, sizeof(key), "malformed_%s", roce_status_name(-i));
		cb(arg, key, s->malformed_by[i]);
	}
	cb(arg, "capture_dropped", s->capture_dropped);
	cb(arg, "proc_frames", s->proc_frames);
	cb(arg, "proc_cycles", s->proc_cycles);
	{
		uint64_t hz = rte_get_tsc_hz();

		cb(arg, "proc_ns_per_frame", s->proc_frames && hz
		   ? (uint64_t)((double)s->proc_cycles * 1e9 / (double)hz /
				(double)s->proc_frames) : 0);
	}
	for (i = 0; i < 256; i++) {
		if (!(roce_opcode(i)->flags & ROCE_F_VALID) && s->opcode[i] == 0)
			continue;
		snprintf(key, sizeof(key), "opcode_0x%02x", i);
		cb(arg, key, s->opcode[i]);
	}
	for (i = 0; i < SWORD_FN_MAX_COUNTERS; i++) {
		if (fn_names[i] == NULL)
			continue;
		snprintf(key, sizeof(key), "fn_%s", fn_names[i]);
		cb(arg, key, s->fn[i]);
	}
}
