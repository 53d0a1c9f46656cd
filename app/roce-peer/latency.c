/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * latency.c — a fixed histogram for per-operation latency (1 us buckets up
 * to 100 ms): no per-sample memory, exact enough for p50/p99 of software
 * endpoints whose latencies are tens of microseconds.
 */
#include <stdlib.h>

#include "roce_peer.h"

void
lat_init(struct rp_lat *l)
{
	l->n = 0;
	l->max_ns = 0;
	l->b = calloc(LAT_BUCKETS, sizeof(*l->b));
}

void
lat_free(struct rp_lat *l)
{
	free(l->b);
	l->b = NULL;
}

void
lat_add(struct rp_lat *l, uint64_t ns)
{
	uint64_t us = ns / 1000;

	if (!l->b)
		return;
	l->b[us < LAT_BUCKETS - 1 ? us : LAT_BUCKETS - 1]++;
	l->n++;
	if (ns > l->max_ns)
		l->max_ns = ns;
}

/* Upper edge of the bucket holding the pct-th percentile, in us. */
double
lat_pct_us(const struct rp_lat *l, double pct)
{
	uint64_t want, seen = 0;

	if (!l->b || l->n == 0)
		return 0;
	want = (uint64_t)(pct / 100.0 * (double)l->n + 0.5);
	if (want == 0)
		want = 1;
	for (uint32_t i = 0; i < LAT_BUCKETS; i++) {
		seen += l->b[i];
		if (seen >= want)
			return i == LAT_BUCKETS - 1 ? l->max_ns / 1000.0 : i + 1.0;
	}
	return l->max_ns / 1000.0;
}
