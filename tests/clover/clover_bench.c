/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover_bench.c — retries and round trips per operation, steering off vs
 * on, in one run (benchmark, not a test): YCSB-A-like (50% writes) and
 * write-only, uniform and Zipf keys, over the closed loop of clover_sim.
 *
 *   clover_bench [-v] [-f read_factor] [-w read_ways] [clients keys ops_per_client]
 *                (default 16 64 2000, read table keys x 3, 1-way)
 *   -v           also say what read steering did with each GET's first READ
 *   clover_bench --cost N   steer N ops only (for callgrind, see bench.sh)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clover_sim.h"

static void
row(const char *mix, const char *dist, const char *mode, const struct csim_result *r)
{
	uint64_t ops = r->puts + r->gets;

	printf("%-8s %-8s %-4s %8lu %9.4f %9.4f %9.4f %9.4f %8lu %8lu %6lu %s\n", mix, dist,
	       mode, (unsigned long)ops,
	       r->puts ? (double)r->cas_failed / r->puts : 0.0,
	       ops ? (double)r->cas_failed / ops : 0.0,
	       ops ? (double)r->round_trips / ops : 0.0,
	       r->gets ? (double)r->gets_multi_rt / r->gets : 0.0,
	       (unsigned long)r->ctr[CLOVER_STEERED_WRITES],
	       (unsigned long)r->ctr[CLOVER_STEERED_READS],
	       (unsigned long)r->ctr[CLOVER_READ_MISSES],
	       r->lost_writes || r->bad_reads || r->chain_errors || r->bad_frames ?
	       "ERRORS" : "ok");
}

/* Why GETs needed a second round trip: what lib/clover did with their
 * first READ (the cursor). */
static void
diag(const struct csim_result *r)
{
	static const char *const names[CSIM_GET_NCLASS] = {
		[CSIM_GET_STEERED] = "steered", [CSIM_GET_AT_TAIL] = "at-tail",
		[CSIM_GET_TAIL_UNKNOWN] = "tail-unsure",
		[CSIM_GET_MISS_EVICTED] = "miss-overwritten",
		[CSIM_GET_MISS_NEVER] = "miss-never-learned",
		[CSIM_GET_UNSTEERED] = "not-steering",
	};
	unsigned int i;

	if (r->gets == 0)
		return;
	printf("    GET cursor READs: stale when sent %.3f;", (double)r->cursor_stale / r->gets);
	for (i = 0; i < CSIM_GET_NCLASS; i++)
		if (r->get_class[i][0])
			printf(" %s %.3f (>1RT %.3f)", names[i],
			       (double)r->get_class[i][0] / r->gets,
			       (double)r->get_class[i][1] / r->gets);
	if (r->hint_samples)
		printf("; cursors held: %.0f distinct, %.0f stale; best table of this "
		       "size covers %.3f of stale cursors",
		       (double)r->hint_distinct_sum / r->hint_samples,
		       (double)r->hint_stale_sum / r->hint_samples,
		       r->hint_oracle_sum / r->hint_samples);
	printf("\n");
}

int
main(int argc, char **argv)
{
	struct csim_params prm = {
		.clients = 16, .keys = 64, .ops = 2000, .value_size = 1024,
		.clover = true, .seed = 42,
	};
	static const struct { const char *name; unsigned int pct; } mixes[] = {
		{ "ycsb-a", 50 }, { "write", 100 },
	};
	static const struct { const char *name; double theta; } dists[] = {
		{ "uniform", 0 }, { "zipf.99", 0.99 },
	};
	struct csim_result r;
	unsigned int m, d, s;
	int bad = 0, verbose = 0;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		argc--;
		argv++;
	}
	for (;;) {
		if (argc > 2 && strcmp(argv[1], "-f") == 0)
			prm.read_factor = (unsigned int)atoi(argv[2]);
		else if (argc > 2 && strcmp(argv[1], "-w") == 0)
			prm.read_ways = (unsigned int)atoi(argv[2]);
		else
			break;
		argc -= 2;
		argv += 2;
	}

	if (argc == 3 && strcmp(argv[1], "--cost") == 0) {
		/* one steering-on run, for instruction counts under callgrind */
		prm.ops = (unsigned int)atoi(argv[2]);
		prm.write_pct = 50;
		prm.write_steering = prm.read_steering = true;
		if (csim_run(&prm, &r) < 0)
			return 1;
		printf("frames %lu rewritten %lu (writes %lu reads %lu)\n",
		       (unsigned long)r.frames, (unsigned long)r.rewritten,
		       (unsigned long)r.ctr[CLOVER_STEERED_WRITES],
		       (unsigned long)r.ctr[CLOVER_STEERED_READS]);
		return 0;
	}
	if (argc == 4) {
		prm.clients = (unsigned int)atoi(argv[1]);
		prm.keys = (unsigned int)atoi(argv[2]);
		prm.ops = (unsigned int)atoi(argv[3]);
	}
	printf("clients %u, keys %u, ops/client %u, values %u B, read table keys x %u, "
	       "%u-way\n", prm.clients, prm.keys, prm.ops, prm.value_size,
	       prm.read_factor ? prm.read_factor : 3, prm.read_ways ? prm.read_ways : 1);
	printf("%-8s %-8s %-4s %8s %9s %9s %9s %9s %8s %8s %6s\n", "mix", "keys", "steer",
	       "ops", "retry/put", "retry/op", "rt/op", "get>1rt", "st_wr", "st_rd", "miss");
	for (m = 0; m < 2; m++)
		for (d = 0; d < 2; d++)
			for (s = 0; s < 2; s++) {
				prm.write_pct = mixes[m].pct;
				prm.zipf = dists[d].theta;
				prm.write_steering = prm.read_steering = s == 1;
				if (csim_run(&prm, &r) < 0) {
					fprintf(stderr, "%s\n", r.err);
					return 1;
				}
				row(mixes[m].name, dists[d].name, s ? "on" : "off", &r);
				if (verbose)
					diag(&r);
				bad |= r.lost_writes || r.bad_reads || r.chain_errors || r.bad_frames;
			}
	return bad;
}
