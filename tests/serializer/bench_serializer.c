/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_serializer.c — cost of the CAS→WRITE path in-process: one
 * request (ICRC check, decision, rewrite, new ICRC) plus its response
 * (ICRC check, ACK → ATOMIC ACK, new ICRC) through the library entry
 * points, no ports.  Not a test: prints Mpps (request+response pairs per
 * second on one core) for several runs and their median.
 *
 *   bench_serializer [pairs-per-run] [runs] [ICRC paths]
 *
 * ICRC paths: a comma-separated list of lib/roce ICRC implementations
 * (roce_internal.h: rte_net_crc, fold-sse, fold-avx, mb4-sse, mb4-avx,
 * avx512-vpclmulqdq; default: the one roce_crc_init picks).  With several,
 * each run times every path in turn, so that their ratios are measured
 * under the same load, and each path gets its own medians.
 *
 * The serializer checks and re-signs one frame at a time.  So that a run
 * also shows what a worker staging its bursts would pay for the same two
 * ICRCs, each burst's frames, once through, are checked and re-signed
 * again (not counted above, nor by callgrind) one at a time
 * (roce_icrc_verify + roce_icrc_update) and as a burst
 * (roce_icrc_verify_burst + roce_icrc_sign_burst), both timed; the
 * "staged" figure is the measured path with the first replaced by the
 * second: a projection, not a measurement of a staged serializer.
 *
 * Under valgrind --tool=callgrind --collect-atstart=no only the
 * request/response loop is counted (frame building is not): divide the
 * total by the pairs, or read roce_parse / ser_on_request /
 * ser_on_response per call from callgrind_annotate --inclusive=yes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>

#include "bench_util.h"

#include "rdma_model.h"
#include "roce.h"
#include "roce_internal.h"
#include "serializer.h"

#define BATCH 1024
#define CHUNK 32 /* a burst */

/* compact frames: a NIC hands the worker packets that are in cache */
struct frame128 {
	uint32_t len;
	uint8_t buf[124];
};

struct pair {
	struct frame128 req, ack;
};

/* CAS(value, value^1) at psn and the server's ACK for it (an ATOMIC ACK
 * with orig = value if atomic_ack, else the plain ACK of the WRITE). */
static void
build_pair(struct pair *pp, const struct rm_addr *up, const struct rm_addr *down,
	   uint32_t *psn, uint64_t *value, uint32_t *msn, bool atomic_ack)
{
	uint8_t ext[28], aeth[12];
	uint64_t v;

	v = rte_cpu_to_be_64(0x10000);
	memcpy(ext, &v, 8);
	v = rte_cpu_to_be_32(0x2521);
	memcpy(ext + 8, &v, 4);
	v = rte_cpu_to_be_64(*value ^ 1); /* swap */
	memcpy(ext + 12, &v, 8);
	v = rte_cpu_to_be_64(*value);     /* compare */
	memcpy(ext + 20, &v, 8);
	pp->req.len = rm_build(pp->req.buf, up, ROCE_RC_COMPARE_SWAP, *psn, true,
			       ext, 28, NULL, 0);
	(*msn)++;
	v = rte_cpu_to_be_32((0x1fu << 24) | (*msn & 0xffffff));
	memcpy(aeth, &v, 4);
	if (atomic_ack) {
		v = rte_cpu_to_be_64(*value);
		memcpy(aeth + 4, &v, 8);
		pp->ack.len = rm_build(pp->ack.buf, down, ROCE_RC_ATOMIC_ACKNOWLEDGE,
				       *psn, false, aeth, 12, NULL, 0);
	} else {
		pp->ack.len = rm_build(pp->ack.buf, down, ROCE_RC_ACKNOWLEDGE, *psn,
				       false, aeth, 4, NULL, 0);
	}
	*value ^= 1;
	*psn = (*psn + 1) & 0xffffff;
}

#define PATHS_MAX ROCE_ICRC_PATH_NUM

/*
 * What a run times, each CHUNK frames at a time: the serializer's request
 * and response paths, and the probe's two ICRCs of the same requests and
 * responses one at a time and by burst.
 */
enum { T_REQ, T_RESP, T_REQ_ONE, T_REQ_BURST, T_RESP_ONE, T_RESP_BURST, T_NUM };

/* ns per frame of one run: all chunks' time / frames, and the median
 * chunk / CHUNK (a chunk takes a microsecond or two: one that a context
 * switch lands in takes milliseconds, which a sum cannot shrug off on a
 * shared machine, a median can) */
struct run_times {
	double sum[T_NUM], med[T_NUM];
};

/* The time of checking and re-signing n frames one at a time, and as a
 * burst (the ICRCs they hold stay what they were). */
static void
icrc_probe(struct frame128 *const fr[], uint32_t n, double *t_one, double *t_burst)
{
	struct roce_pkt pk[CHUNK];
	const struct roce_pkt *pp[CHUNK];
	uint8_t *f[CHUNK];
	bool ok[CHUNK];
	double t0, t1;

	for (uint32_t i = 0; i < n; i++) {
		if (roce_parse(fr[i]->buf, fr[i]->len, &pk[i]) != ROCE_OK)
			abort();
		f[i] = fr[i]->buf;
		pp[i] = &pk[i];
	}
	t0 = now_s();
	for (uint32_t i = 0; i < n; i++)
		if (roce_icrc_verify(f[i], &pk[i]))
			roce_icrc_update(f[i], &pk[i]);
	t1 = now_s();
	roce_icrc_verify_burst(f, pp, n, ok);
	roce_icrc_sign_burst(f, pp, n, ok);
	*t_burst = now_s() - t1;
	*t_one = t1 - t0;
}

static double
median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_d);
	return v[n / 2];
}

/* One run's worth of request+response pairs.  chunk[t] has room for a
 * time per chunk. */
static int
run_pairs(struct ser *s, struct pair *pp, uint64_t pairs, const struct rm_addr *up,
	  const struct rm_addr *down, uint32_t *psn, uint64_t *value, uint32_t *msn,
	  double *chunk[T_NUM], struct run_times *rt)
{
	struct ser_emit emit[32];
	uint32_t n_emit;
	uint64_t done = 0;
	size_t nc = 0;

	memset(rt, 0, sizeof(*rt));
	while (done < pairs) {
		for (int i = 0; i < BATCH; i++)
			build_pair(&pp[i], up, down, psn, value, msn, false);
		/* bursts of CHUNK requests, then their CHUNK responses,
		 * as a worker sees them; each path timed on its own */
		for (int c0 = 0; c0 < BATCH; c0 += CHUNK, nc++) {
			struct frame128 *fr[CHUNK];
			double t0 = now_s(), t1, t2;

			CALLGRIND_TOGGLE_COLLECT;
			for (int i = c0; i < c0 + CHUNK; i++) {
				struct roce_pkt p;

				if (roce_parse(pp[i].req.buf, pp[i].req.len, &p) != ROCE_OK)
					return 2;
				ser_on_request(s, pp[i].req.buf, &pp[i].req.len,
					       sizeof(pp[i].req.buf), &p, 0);
			}
			CALLGRIND_TOGGLE_COLLECT;
			t1 = now_s();
			CALLGRIND_TOGGLE_COLLECT;
			for (int i = c0; i < c0 + CHUNK; i++) {
				struct roce_pkt p;

				if (roce_parse(pp[i].ack.buf, pp[i].ack.len, &p) != ROCE_OK)
					return 2;
				ser_on_response(s, pp[i].ack.buf, &pp[i].ack.len,
						sizeof(pp[i].ack.buf), &p, 0, emit, 32,
						&n_emit);
			}
			CALLGRIND_TOGGLE_COLLECT;
			t2 = now_s();
			chunk[T_REQ][nc] = t1 - t0;
			chunk[T_RESP][nc] = t2 - t1;
			/* the probe: not in the times above, nor in callgrind's */
			for (int i = 0; i < CHUNK; i++)
				fr[i] = &pp[c0 + i].req;
			icrc_probe(fr, CHUNK, &chunk[T_REQ_ONE][nc],
				   &chunk[T_REQ_BURST][nc]);
			for (int i = 0; i < CHUNK; i++)
				fr[i] = &pp[c0 + i].ack;
			icrc_probe(fr, CHUNK, &chunk[T_RESP_ONE][nc],
				   &chunk[T_RESP_BURST][nc]);
		}
		done += BATCH;
	}
	for (int t = 0; t < T_NUM; t++) {
		for (size_t c = 0; c < nc; c++)
			rt->sum[t] += chunk[t][c];
		rt->sum[t] *= 1e9 / (double)done;
		rt->med[t] = median_of(chunk[t], nc) * 1e9 / CHUNK;
	}
	return 0;
}

/* The paths named in list, or -1 (roce_crc_init's choice); their count. */
static int
parse_paths(const char *list, int *paths)
{
	char buf[256], *save = NULL;
	int n = 0;

	if (list == NULL) {
		paths[0] = -1;
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t != NULL && n < PATHS_MAX;
	     t = strtok_r(NULL, ",", &save)) {
		int pi;

		for (pi = ROCE_ICRC_PATH_GENERIC; pi < ROCE_ICRC_PATH_NUM; pi++)
			if (strcmp(t, roce_icrc_path_name(pi)) == 0)
				break;
		if (pi == ROCE_ICRC_PATH_NUM || !roce_icrc_path_supported(pi)) {
			fprintf(stderr, "ICRC path %s: unknown or not on this CPU\n", t);
			return -1;
		}
		paths[n++] = pi;
	}
	return n;
}

int
main(int argc, char **argv)
{
	uint64_t pairs = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	struct ser_region reg = { .server_ip4 = RTE_BE32(0xc6120001), .rkey = 0x2521,
				  .base = 0x10000, .len = 4096 };
	struct ser_params prm = { .regions = &reg, .n_regions = 1,
				  .out_of_band = true };   /* QPs set up out of band */
	struct rm_addr up = { .src_ip = RTE_BE32(0xc6120010), .dst_ip = reg.server_ip4,
			      .dest_qpn = 0x100 };
	struct rm_addr down = { .src_ip = reg.server_ip4, .dst_ip = up.src_ip,
				.dest_qpn = 0x200 };
	struct pair *pp = calloc(BATCH, sizeof(*pp));
	struct ser *s;
	struct ser_emit emit[32];
	uint32_t psn = 100, msn = 0, n_emit;
	int paths[PATHS_MAX], npaths;
	size_t nchunks = (pairs + BATCH - 1) / BATCH * (BATCH / CHUNK);
	double *chunk[T_NUM];
	/* per path and run */
	double *sum[PATHS_MAX][T_NUM], *med[PATHS_MAX][T_NUM];
	double *st_req[PATHS_MAX], *st_resp[PATHS_MAX];
	uint64_t value = 0;

	roce_crc_init();
	npaths = parse_paths(argc > 3 ? argv[3] : NULL, paths);
	if (npaths < 1 || runs < 1 || pairs < 1)
		return 1;
	s = ser_create(&prm);
	if (!s || !pp)
		return 1;
	for (int t = 0; t < T_NUM; t++)
		if ((chunk[t] = calloc(nchunks, sizeof(double))) == NULL)
			return 1;
	for (int pi = 0; pi < npaths; pi++) {
		for (int t = 0; t < T_NUM; t++) {
			sum[pi][t] = calloc((size_t)runs, sizeof(double));
			med[pi][t] = calloc((size_t)runs, sizeof(double));
			if (!sum[pi][t] || !med[pi][t])
				return 1;
		}
		st_req[pi] = calloc((size_t)runs, sizeof(double));
		st_resp[pi] = calloc((size_t)runs, sizeof(double));
		if (!st_req[pi] || !st_resp[pi])
			return 1;
	}
	/* the word is learned from a real ATOMIC ACK, and the server's MSN
	 * offset from two (ser_resp.c resp_learn_msn), untimed */
	for (int i = 0; i < 2; i++) {
		struct roce_pkt p;

		build_pair(&pp[0], &up, &down, &psn, &value, &msn, true);
		if (roce_parse(pp[0].req.buf, pp[0].req.len, &p) != ROCE_OK ||
		    ser_on_request(s, pp[0].req.buf, &pp[0].req.len,
				   sizeof(pp[0].req.buf), &p, 0) != SER_FORWARD ||
		    roce_parse(pp[0].ack.buf, pp[0].ack.len, &p) != ROCE_OK)
			return 2;
		ser_on_response(s, pp[0].ack.buf, &pp[0].ack.len,
				sizeof(pp[0].ack.buf), &p, 0, emit, 32, &n_emit);
	}
	for (int r = 0; r < runs; r++) {
		for (int pi = 0; pi < npaths; pi++) {
			struct run_times rt;

			if (paths[pi] >= 0)
				roce_icrc_set_path(paths[pi]);
			if (run_pairs(s, pp, pairs, &up, &down, &psn, &value, &msn,
				      chunk, &rt))
				return 2;
			for (int t = 0; t < T_NUM; t++) {
				sum[pi][t][r] = rt.sum[t];
				med[pi][t][r] = rt.med[t];
			}
			/* a staged worker: the two ICRCs by burst instead */
			st_req[pi][r] = rt.med[T_REQ] - rt.med[T_REQ_ONE] +
					rt.med[T_REQ_BURST];
			st_resp[pi][r] = rt.med[T_RESP] - rt.med[T_RESP_ONE] +
					 rt.med[T_RESP_BURST];
			printf("run %d, ICRC %s: %.2f M pairs/s: CAS request %.1f ns "
			       "(%.1f Mpps), ACK %.1f ns (%.1f Mpps); median chunk: "
			       "%.1f / %.1f ns, their two ICRCs %.1f / %.1f ns one at "
			       "a time, %.1f / %.1f ns by burst\n", r, roce_icrc_impl(),
			       1e3 / (rt.sum[T_REQ] + rt.sum[T_RESP]), rt.sum[T_REQ],
			       1e3 / rt.sum[T_REQ], rt.sum[T_RESP], 1e3 / rt.sum[T_RESP],
			       rt.med[T_REQ], rt.med[T_RESP], rt.med[T_REQ_ONE],
			       rt.med[T_RESP_ONE], rt.med[T_REQ_BURST],
			       rt.med[T_RESP_BURST]);
		}
	}
	for (int pi = 0; pi < npaths; pi++) {
		double mq, ms;

		if (paths[pi] >= 0)
			roce_icrc_set_path(paths[pi]);
		mq = median_of(sum[pi][T_REQ], (size_t)runs);
		ms = median_of(sum[pi][T_RESP], (size_t)runs);
		printf("median, ICRC %s: %.2f M request+response pairs/s per core "
		       "(%.1f Mpps of frames); CAS->WRITE %.1f ns = %.1f Mpps, "
		       "ACK->ATOMIC ACK %.1f ns = %.1f Mpps\n", roce_icrc_impl(),
		       1e3 / (mq + ms), 2e3 / (mq + ms), mq, 1e3 / mq, ms, 1e3 / ms);
		/* on a shared machine the fastest run is the least disturbed */
		printf("fastest, ICRC %s: CAS->WRITE %.1f ns, ACK->ATOMIC ACK "
		       "%.1f ns\n", roce_icrc_impl(), sum[pi][T_REQ][0],
		       sum[pi][T_RESP][0]);
		printf("median chunk, ICRC %s: CAS->WRITE %.1f ns, ACK->ATOMIC ACK "
		       "%.1f ns; their two ICRCs one at a time %.1f / %.1f ns, by "
		       "burst %.1f / %.1f ns; staged (projection): CAS->WRITE %.1f "
		       "ns, ACK->ATOMIC ACK %.1f ns\n", roce_icrc_impl(),
		       median_of(med[pi][T_REQ], (size_t)runs),
		       median_of(med[pi][T_RESP], (size_t)runs),
		       median_of(med[pi][T_REQ_ONE], (size_t)runs),
		       median_of(med[pi][T_RESP_ONE], (size_t)runs),
		       median_of(med[pi][T_REQ_BURST], (size_t)runs),
		       median_of(med[pi][T_RESP_BURST], (size_t)runs),
		       median_of(st_req[pi], (size_t)runs),
		       median_of(st_resp[pi], (size_t)runs));
		for (int t = 0; t < T_NUM; t++) {
			free(sum[pi][t]);
			free(med[pi][t]);
		}
		free(st_req[pi]);
		free(st_resp[pi]);
	}
	printf("granted %llu, ack_to_atomic_ack %llu\n",
	       (unsigned long long)ser_counters(s)->granted,
	       (unsigned long long)ser_counters(s)->ack_to_atomic_ack);
	for (int t = 0; t < T_NUM; t++)
		free(chunk[t]);
	ser_destroy(s);
	free(pp);
	return 0;
}
