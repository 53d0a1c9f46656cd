/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_serializer.c — cost of the CAS→WRITE path in-process: one
 * request (ICRC check, decision, rewrite, new ICRC) plus its response
 * (ICRC check, ACK → ATOMIC ACK, new ICRC) through the library entry
 * points, no ports.  Not a test: prints Mpps (request+response pairs per
 * second on one core) for several runs and their median.
 *
 *   bench_serializer [pairs-per-run] [runs]
 *
 * Under valgrind --tool=callgrind --collect-atstart=no only the
 * request/response loop is counted (frame building is not): divide the
 * total by the pairs, or read roce_parse / ser_on_request /
 * ser_on_response per call from callgrind_annotate --inclusive=yes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)
#endif

#include "rdma_model.h"
#include "roce.h"
#include "serializer.h"

#define BATCH 1024

/* compact frames: a NIC hands the worker packets that are in cache */
struct frame128 {
	uint32_t len;
	uint8_t buf[124];
};

struct pair {
	struct frame128 req, ack;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	uint64_t pairs = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	struct ser_region reg = { .server_ip4 = RTE_BE32(0xc6120001), .rkey = 0x2521,
				  .base = 0x10000, .len = 4096 };
	struct ser_params prm = { .regions = &reg, .n_regions = 1 };
	struct rm_addr up = { .src_ip = RTE_BE32(0xc6120010), .dst_ip = reg.server_ip4,
			      .dest_qpn = 0x100 };
	struct rm_addr down = { .src_ip = reg.server_ip4, .dst_ip = up.src_ip,
				.dest_qpn = 0x200 };
	struct pair *pp = calloc(BATCH, sizeof(*pp));
	struct ser *s;
	struct ser_emit emit[32];
	uint32_t psn = 100, msn = 0, n_emit;
	double *mpps = calloc((size_t)runs, sizeof(double));
	uint64_t value = 0;

	roce_crc_init();
	s = ser_create(&prm);
	if (!s || !pp || !mpps)
		return 1;
	/* build a batch of CAS requests and the server's answers */
	for (int r = 0; r < runs; r++) {
		double busy = 0;
		uint64_t done = 0;

		while (done < pairs) {
			double t0;

			for (int i = 0; i < BATCH; i++) {
				uint8_t ext[28], aeth[12];
				uint64_t v;

				v = rte_cpu_to_be_64(0x10000);
				memcpy(ext, &v, 8);
				v = rte_cpu_to_be_32(0x2521);
				memcpy(ext + 8, &v, 4);
				v = rte_cpu_to_be_64(value ^ 1); /* swap */
				memcpy(ext + 12, &v, 8);
				v = rte_cpu_to_be_64(value);     /* compare */
				memcpy(ext + 20, &v, 8);
				value ^= 1;
				pp[i].req.len = rm_build(pp[i].req.buf, &up,
							 ROCE_RC_COMPARE_SWAP, psn, true,
							 ext, 28, NULL, 0);
				msn++;
				v = rte_cpu_to_be_32((0x1fu << 24) | (msn & 0xffffff));
				memcpy(aeth, &v, 4);
				if (done == 0 && i == 0 && r == 0) {
					/* the first is learned from a real ATOMIC ACK */
					uint64_t o = 0;

					memcpy(aeth + 4, &o, 8);
					pp[i].ack.len = rm_build(pp[i].ack.buf, &down,
								 ROCE_RC_ATOMIC_ACKNOWLEDGE,
								 psn, false, aeth, 12, NULL, 0);
				} else {
					pp[i].ack.len = rm_build(pp[i].ack.buf, &down,
								 ROCE_RC_ACKNOWLEDGE, psn,
								 false, aeth, 4, NULL, 0);
				}
				psn = (psn + 1) & 0xffffff;
			}
			t0 = now_s();
			CALLGRIND_TOGGLE_COLLECT;
			for (int i = 0; i < BATCH; i++) {
				struct roce_pkt p;

				if (roce_parse(pp[i].req.buf, pp[i].req.len, &p) != ROCE_OK)
					return 2;
				ser_on_request(s, pp[i].req.buf, &pp[i].req.len,
					       sizeof(pp[i].req.buf), &p, 0);
				if (roce_parse(pp[i].ack.buf, pp[i].ack.len, &p) != ROCE_OK)
					return 2;
				ser_on_response(s, pp[i].ack.buf, &pp[i].ack.len,
						sizeof(pp[i].ack.buf), &p, 0, emit, 32, &n_emit);
			}
			CALLGRIND_TOGGLE_COLLECT;
			busy += now_s() - t0;
			done += BATCH;
		}
		mpps[r] = (double)done / busy / 1e6;
		printf("run %d: %.2f Mpps (%.1f ns per request+response)\n", r,
		       mpps[r], 1e3 / mpps[r]);
	}
	qsort(mpps, (size_t)runs, sizeof(double), cmp_d);
	printf("median: %.2f Mpps per core; granted %llu, ack_to_atomic_ack %llu\n",
	       mpps[runs / 2], (unsigned long long)ser_counters(s)->granted,
	       (unsigned long long)ser_counters(s)->ack_to_atomic_ack);
	ser_destroy(s);
	free(pp);
	free(mpps);
	return 0;
}
