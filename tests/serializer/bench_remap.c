/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_remap.c — what remapping adds per frame, in-process: 8 client
 * connections on one lane; each pair is a client's 8-byte WRITE (ICRC
 * check, stitch onto the lane, re-sign) and the lane's ACK for it (ICRC
 * check, map back to the client, re-sign), through remap_on_request /
 * remap_on_response.  The baseline times what any rewriting function pays
 * for the same two frames anyway: one ICRC check and one re-sign each.
 * Not a test: prints ns per pair for both, per run, and the medians.
 *
 *   bench_remap [pairs-per-run] [runs]
 *
 * Under valgrind --tool=callgrind --collect-atstart=no only the remapped
 * loop is counted: divide the total by the pairs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include <rte_byteorder.h>

#include "rc.h"
#include "rdma_model.h"
#include "remap.h"
#include "roce.h"

#define NCL 8
#define SRV_IP RTE_BE32(0xc6120001)
#define CL_IP(i) RTE_BE32(0xc6120010 + (i))

struct env {
	struct rc_table *rc;
	struct remap *r;
	struct rm_addr up[NCL], down;
	uint32_t cpsn[NCL], lane_psn;
	uint64_t t;
};

static void
request(struct env *e, int i, uint8_t *f, uint32_t *len)
{
	uint8_t ext[16] = { 0 }, data[8] = { 1 };

	ext[15] = 8;   /* DMA length 8 */
	*len = rm_build(f, &e->up[i], ROCE_RC_WRITE_ONLY, e->cpsn[i], true, ext, 16, data, 8);
}

static void
ack(struct env *e, uint32_t lpsn, uint8_t *f, uint32_t *len)
{
	uint8_t aeth[4] = { 0, 0, 0, 1 };

	*len = rm_build(f, &e->down, ROCE_RC_ACKNOWLEDGE, lpsn, false, aeth, 4, NULL, 0);
}

/* Bind the NCL connections (pairing comes from one direct answer each). */
static int
setup(struct env *e)
{
	struct remap_server sv = { .ip = SRV_IP, .lanes = 1, .keep_conns = true };
	struct remap_emit em[8];
	uint8_t f[256];
	uint32_t len, n;
	struct roce_pkt p;

	e->rc = rc_create(&(struct rc_params){ .max_conns = 64 });
	e->r = remap_create(&(struct remap_params){ .servers = &sv, .n_servers = 1,
						   .rc = e->rc, .out_of_band = true });
	if (!e->rc || !e->r)
		return -1;
	for (int i = 0; i < NCL; i++) {
		e->up[i] = (struct rm_addr){ .src_mac = { 2, 0, 0, 0, 0, (uint8_t)(i + 1) },
			.dst_mac = { 2, 0, 0, 0, 0, 0x99 }, .src_ip = CL_IP(i),
			.dst_ip = SRV_IP, .dest_qpn = 0x100 + (uint32_t)i };
		e->cpsn[i] = 1000u * (uint32_t)(i + 1);
		/* a direct request and its answer: paired, MSN known */
		request(e, i, f, &len);
		roce_parse(f, len, &p);
		remap_on_request(e->r, f, &len, sizeof(f), &p, false, ++e->t, em, 8, &n);
		e->down = (struct rm_addr){ .src_mac = { 2, 0, 0, 0, 0, 0x99 },
			.dst_mac = { 2, 0, 0, 0, 0, (uint8_t)(i + 1) }, .src_ip = SRV_IP,
			.dst_ip = CL_IP(i), .dest_qpn = 0x200 + (uint32_t)i };
		ack(e, e->cpsn[i], f, &len);
		roce_parse(f, len, &p);
		remap_on_response(e->r, f, &len, sizeof(f), &p, false, ++e->t, em, 8, &n);
		e->cpsn[i]++;
	}
	/* the lane's answers go to its owner, connection 0 */
	e->down.dst_ip = CL_IP(0);
	e->down.dest_qpn = 0x200;
	memcpy(e->down.dst_mac, e->up[0].src_mac, 6);
	return 0;
}

int
main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 200000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	double rm[64], base[64];
	struct env e = { 0 };
	uint8_t f[256], g[256];
	struct remap_emit em[8];
	uint64_t unmapped = 0;

	roce_crc_init();
	if (runs > 64)
		runs = 64;
	if (setup(&e)) {
		fprintf(stderr, "bench_remap: setup failed\n");
		return 1;
	}
	for (int run = 0; run < runs; run++) {
		double t0, t1;
		uint32_t len, glen, n;
		struct roce_pkt p, q;

		/* remapped: request stitched, its ACK mapped back */
		if (run == 0)
			CALLGRIND_TOGGLE_COLLECT;
		t0 = (now_s() * 1e9);
		for (long k = 0; k < pairs; k++) {
			int i = (int)(k % NCL);

			request(&e, i, f, &len);
			roce_parse(f, len, &p);
			if (remap_on_request(e.r, f, &len, sizeof(f), &p, false, ++e.t, em, 8, &n)
			    != REMAP_MODIFIED)
				unmapped++;
			ack(&e, p.psn, g, &glen);
			roce_parse(g, glen, &q);
			if (remap_on_response(e.r, g, &glen, sizeof(g), &q, false, ++e.t, em, 8, &n)
			    != REMAP_MODIFIED)
				unmapped++;
			e.cpsn[i] = (e.cpsn[i] + 1) & ROCE_PSN_MASK;
		}
		t1 = (now_s() * 1e9);
		if (run == 0)
			CALLGRIND_TOGGLE_COLLECT;
		rm[run] = (t1 - t0) / pairs;
		/* baseline: the same frames, one ICRC check and one re-sign each */
		t0 = (now_s() * 1e9);
		for (long k = 0; k < pairs; k++) {
			int i = (int)(k % NCL);

			request(&e, i, f, &len);
			roce_parse(f, len, &p);
			if (roce_icrc_verify(f, &p))
				roce_resign(f, &p);
			ack(&e, e.lane_psn, g, &glen);
			roce_parse(g, glen, &q);
			if (roce_icrc_verify(g, &q))
				roce_resign(g, &q);
		}
		t1 = (now_s() * 1e9);
		base[run] = (t1 - t0) / pairs;
		printf("run %d: remapped %.1f ns/pair, baseline (check + re-sign both) %.1f ns/pair\n",
		       run, rm[run], base[run]);
	}
	qsort(rm, (size_t)runs, sizeof(double), cmp_d);
	qsort(base, (size_t)runs, sizeof(double), cmp_d);
	printf("median: remapped %.1f ns/pair, baseline %.1f ns/pair, remapping's own %.1f ns/pair "
	       "(%.1f ns/frame); frame building included in both; %llu not mapped\n",
	       rm[runs / 2], base[runs / 2], rm[runs / 2] - base[runs / 2],
	       (rm[runs / 2] - base[runs / 2]) / 2, (unsigned long long)unmapped);
	remap_destroy(e.r);
	rc_destroy(e.rc);
	return unmapped ? 1 : 0;
}
