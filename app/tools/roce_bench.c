/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_bench.c — per-packet cost of the lib/roce hot path.
 *
 * Why it exists: the CAS→WRITE path has a budget (SPEC §4: well under
 * 100 ns per packet per core; parse ≤ 60 and verify+rewrite+recompute ≤ 250
 * instructions).  This tool runs one operation in a tight loop on one real
 * frame (by default the 86-byte RC CAS, frame 14 of rcuckoo-connectx.pcap)
 * so that scripts/bench-roce.sh can count instructions under callgrind
 * (collection is switched on only around the loop) and time it natively
 * against a baseline measured in the same process: a plain copy of the
 * frame.
 *
 * Modes (--mode):
 *   empty      the loop alone
 *   copy       memcpy the frame into a work buffer + reset the parsed view
 *              (what "rewrite" needs per packet to start from the original)
 *   parse      roce_parse
 *   verify     roce_parse + roce_icrc_verify
 *   rewrite    copy + roce_icrc_verify + roce_atomic_to_write (which
 *              recomputes IPv4 checksum and ICRC); subtract "copy"
 *   compute    roce_icrc_compute on the parsed frame (the ICRC alone)
 *   cburst     roce_icrc_compute_burst on bursts of --burst copies of it
 *   vburst     roce_parse of a burst + roce_icrc_verify_burst
 *   rloop      copy a burst, then each frame: roce_icrc_verify +
 *              roce_atomic_to_write ("rewrite" with the copy out of the
 *              way: a frame's loads do not meet its copy's stores)
 *   rburst     copy a burst + roce_icrc_verify_burst +
 *              roce_atomic_to_write_defer each + roce_icrc_sign_burst:
 *              "rewrite" staged as a worker does it; subtract "copy"
 *   resign     on a burst of frames with valid ICRCs: change the 8-byte
 *              va of each (Clover's steering) and roce_icrc_update it
 *   patch      the same, re-signed with roce_icrc_patch (the ICRC moved
 *              by the change, from the stored one)
 *   all        time every mode natively (default)
 * The burst modes count packets, not bursts (--iters rounded down to
 * whole bursts).  --path forces an ICRC implementation (fold-avx,
 * mb4-avx, avx512-vpclmulqdq, ...; default: what roce_crc_init picks),
 * "--path all" every one the CPU offers in turn.  Timed (--mode all, or
 * --runs > 1), each run runs every (path, mode) pair once, one after the
 * other, so that all pairs share the machine's load of the moment; a
 * single mode with one run is one untimed pass (what callgrind counts).
 *
 * Output (one line per mode):
 *   mode=parse path=P iters=N ns_per_pkt_median=X ns_per_pkt_min=Y
 *   ns_runs=a,b,c...
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include "roce.h"
#include "roce_internal.h"

#ifdef HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)
#endif

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static uint8_t frame[2048];
static uint32_t frame_len;
static uint8_t work[2048] __rte_aligned(64);
static struct roce_pkt p0;
static volatile uint64_t sink;

/* a burst: copies of the frame in their own (cache-line) buffers */
#define BURST_MAX 64
#define SLOT 256
static uint8_t burst_in[BURST_MAX][SLOT] __rte_aligned(64);
static uint8_t burst_work[BURST_MAX][SLOT] __rte_aligned(64);
static uint8_t burst_va[BURST_MAX][SLOT] __rte_aligned(64);
static uint8_t *burst_in_p[BURST_MAX], *burst_work_p[BURST_MAX];
static struct roce_pkt burst_pkt[BURST_MAX];
static const struct roce_pkt *burst_pkt_p[BURST_MAX];
static uint32_t burst = 32;

enum mode {
	M_EMPTY, M_COPY, M_PARSE, M_VERIFY, M_REWRITE, M_COMPUTE, M_CBURST,
	M_VBURST, M_RLOOP, M_RBURST, M_RESIGN, M_PATCH, M_NUM
};
static const char *const mode_names[M_NUM] = {
	"empty", "copy", "parse", "verify", "rewrite", "compute", "cburst",
	"vburst", "rloop", "rburst", "resign", "patch",
};

static uint64_t
run_mode(enum mode m, uint64_t iters)
{
	static const uint64_t value = 1;
	struct roce_pkt p;
	uint64_t acc = 0;

	CALLGRIND_TOGGLE_COLLECT;
	switch (m) {
	case M_EMPTY:
		for (uint64_t i = 0; i < iters; i++)
			BARRIER();
		break;
	case M_COPY:
		for (uint64_t i = 0; i < iters; i++) {
			memcpy(work, frame, frame_len);
			p = p0;
			BARRIER();
			acc += p.frame_len;
		}
		break;
	case M_PARSE:
		for (uint64_t i = 0; i < iters; i++) {
			acc += (uint64_t)roce_parse(frame, frame_len, &p);
			BARRIER();
		}
		break;
	case M_VERIFY:
		for (uint64_t i = 0; i < iters; i++) {
			acc += (uint64_t)roce_parse(frame, frame_len, &p);
			acc += roce_icrc_verify(frame, &p);
			BARRIER();
		}
		break;
	case M_REWRITE:
		for (uint64_t i = 0; i < iters; i++) {
			uint32_t len = frame_len;

			memcpy(work, frame, frame_len);
			p = p0;
			BARRIER();
			acc += roce_icrc_verify(work, &p);
			acc += (uint64_t)roce_atomic_to_write(work, &len,
							      sizeof(work), &p,
							      &value);
			BARRIER();
		}
		break;
	case M_COMPUTE:
		p = p0;
		for (uint64_t i = 0; i < iters; i++) {
			acc += roce_icrc_compute(frame, &p);
			BARRIER();
		}
		break;
	case M_CBURST:
		for (uint32_t j = 0; j < burst; j++)
			burst_pkt[j] = p0; /* rburst leaves them rewritten */
		for (uint64_t i = 0; i + burst <= iters; i += burst) {
			uint32_t icrc[BURST_MAX];

			roce_icrc_compute_burst(burst_in_p, burst_pkt_p, burst, icrc);
			acc += icrc[0];
			BARRIER();
		}
		break;
	case M_VBURST:
		for (uint64_t i = 0; i + burst <= iters; i += burst) {
			bool ok[BURST_MAX];

			for (uint32_t j = 0; j < burst; j++)
				acc += (uint64_t)roce_parse(burst_in_p[j], frame_len,
							    &burst_pkt[j]);
			acc += roce_icrc_verify_burst(burst_in_p, burst_pkt_p,
						      burst, ok);
			BARRIER();
		}
		break;
	case M_RLOOP:
		for (uint64_t i = 0; i + burst <= iters; i += burst) {
			for (uint32_t j = 0; j < burst; j++) {
				memcpy(burst_work[j], frame, frame_len);
				burst_pkt[j] = p0;
			}
			BARRIER();
			for (uint32_t j = 0; j < burst; j++) {
				uint32_t len = frame_len;

				if (roce_icrc_verify(burst_work[j], &burst_pkt[j]))
					acc += roce_atomic_to_write(burst_work[j], &len,
								    SLOT, &burst_pkt[j],
								    &value) == 0;
			}
			BARRIER();
		}
		break;
	case M_RESIGN:
	case M_PATCH:
		/* burst_va[] frames stay valid: each pass re-signs them */
		for (uint64_t i = 0; i + burst <= iters; i += burst) {
			for (uint32_t j = 0; j < burst; j++) {
				uint8_t *va = burst_va[j] + p0.bth_off + ROCE_BTH_LEN;
				uint64_t w, d = (i + 1) << 3;

				memcpy(&w, va, sizeof(w));
				w ^= d;
				memcpy(va, &w, sizeof(w));
				if (m == M_PATCH)
					roce_icrc_patch(burst_va[j], &p0,
							p0.bth_off + ROCE_BTH_LEN, d);
				else
					roce_icrc_update(burst_va[j], &p0);
			}
			BARRIER();
		}
		acc += burst_va[0][p0.icrc_off];
		break;
	case M_RBURST:
		for (uint64_t i = 0; i + burst <= iters; i += burst) {
			bool ok[BURST_MAX];

			for (uint32_t j = 0; j < burst; j++) {
				memcpy(burst_work[j], frame, frame_len);
				burst_pkt[j] = p0;
			}
			BARRIER();
			roce_icrc_verify_burst(burst_work_p, burst_pkt_p, burst, ok);
			for (uint32_t j = 0; j < burst; j++) {
				uint32_t len = frame_len;

				if (ok[j])
					ok[j] = roce_atomic_to_write_defer(
						burst_work[j], &len, SLOT,
						&burst_pkt[j], &value) == 0;
			}
			acc += roce_icrc_sign_burst(burst_work_p, burst_pkt_p,
						    burst, ok);
			BARRIER();
		}
		break;
	default:
		break;
	}
	CALLGRIND_TOGGLE_COLLECT;
	sink = acc;
	return acc;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
load_frame(const char *path, int want)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc = pcap_open_offline(path, err);
	int n = 0;

	if (pc == NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		exit(2);
	}
	while (pcap_next_ex(pc, &h, &data) == 1)
		if (++n == want) {
			frame_len = RTE_MIN(h->caplen, (uint32_t)sizeof(frame));
			memcpy(frame, data, frame_len);
			break;
		}
	pcap_close(pc);
	if (n != want) {
		fprintf(stderr, "%s has no frame %d\n", path, want);
		exit(2);
	}
}

/*
 * Time every (path, mode) pair: run r times each pair once, in turn, so
 * that every pair sees the same share of whatever else the machine does;
 * report each pair's median and minimum.
 */
#define PAIRS_MAX (ROCE_ICRC_PATH_NUM * M_NUM)

static void
time_pairs(const int *paths, int npaths, const char *mode, uint64_t iters,
	   int runs)
{
	static double ns[PAIRS_MAX][100];
	int pm[PAIRS_MAX][2], np = 0;

	for (int pi = 0; pi < npaths; pi++)
		for (int m = 0; m < M_NUM; m++)
			if (!strcmp(mode, "all") || !strcmp(mode, mode_names[m])) {
				pm[np][0] = paths[pi];
				pm[np++][1] = m;
			}
	for (int i = 0; i < np; i++) {         /* warm up */
		if (pm[i][0] >= 0)
			roce_icrc_set_path(pm[i][0]);
		run_mode(pm[i][1], iters / 10);
	}
	for (int r = 0; r < runs; r++)
		for (int i = 0; i < np; i++) {
			double t0;

			if (pm[i][0] >= 0)
				roce_icrc_set_path(pm[i][0]);
			t0 = now_ns();
			run_mode(pm[i][1], iters);
			ns[i][r] = (now_ns() - t0) / (double)iters;
		}
	for (int i = 0; i < np; i++) {
		double sorted[100];

		memcpy(sorted, ns[i], sizeof(double) * runs);
		qsort(sorted, runs, sizeof(double), cmp_double);
		printf("mode=%s path=%s iters=%" PRIu64 " ns_per_pkt_median=%.2f "
		       "ns_per_pkt_min=%.2f ns_runs=", mode_names[pm[i][1]],
		       pm[i][0] >= 0 ? roce_icrc_path_name(pm[i][0]) :
				       roce_icrc_impl(),
		       iters, sorted[runs / 2], sorted[0]);
		for (int r = 0; r < runs; r++)
			printf("%s%.2f", r ? "," : "", ns[i][r]);
		printf("\n");
	}
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --pcap FILE [--frame N] [--mode empty|copy|parse|"
		"verify|rewrite|compute|cburst|vburst|rburst|all] [--iters N] "
		"[--runs R] [--burst B] [--path NAME|all]\n", prog);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pcap", required_argument, NULL, 'p' },
		{ "frame", required_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		{ "iters", required_argument, NULL, 'n' },
		{ "runs", required_argument, NULL, 'r' },
		{ "burst", required_argument, NULL, 'b' },
		{ "path", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pcap_path = NULL, *mode = "all", *path = NULL;
	uint64_t iters = 2000000;
	int frameno = 14, runs = 0, c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pcap_path = optarg; break;
		case 'f': frameno = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'n': iters = strtoull(optarg, NULL, 0); break;
		case 'r': runs = atoi(optarg); break;
		case 'b': burst = (uint32_t)atoi(optarg); break;
		case 'P': path = optarg; break;
		default: usage(argv[0]);
		}
	}
	if (runs == 0)
		runs = strcmp(mode, "all") ? 1 : 7;
	if (pcap_path == NULL || runs < 1 || runs > 99 || iters == 0 ||
	    burst < 1 || burst > BURST_MAX)
		usage(argv[0]);
	roce_crc_init();
	load_frame(pcap_path, frameno);
	rc = roce_parse(frame, frame_len, &p0);
	if (rc != ROCE_OK || !(p0.oi->flags & ROCE_F_ATOMIC) ||
	    !roce_icrc_verify(frame, &p0)) {
		fprintf(stderr, "frame %d: %s, opcode 0x%x: need a valid atomic\n",
			frameno, roce_status_str(rc), p0.opcode);
		return 2;
	}
	fprintf(stderr, "frame %d: %u bytes, %s\n", frameno, frame_len,
		p0.oi->name);
	if (frame_len > SLOT - 8) {
		fprintf(stderr, "frame %d: longer than %d bytes\n", frameno, SLOT - 8);
		return 2;
	}
	for (uint32_t j = 0; j < BURST_MAX; j++) {
		memcpy(burst_in[j], frame, frame_len);
		memcpy(burst_va[j], frame, frame_len);
		burst_in_p[j] = burst_in[j];
		burst_work_p[j] = burst_work[j];
		burst_pkt[j] = p0;
		burst_pkt_p[j] = &burst_pkt[j];
	}

	{
		int paths[ROCE_ICRC_PATH_NUM], npaths = 0;

		if (path == NULL) {
			paths[npaths++] = -1; /* what roce_crc_init chose */
		} else {
			for (int pi = ROCE_ICRC_PATH_GENERIC;
			     pi < ROCE_ICRC_PATH_NUM; pi++)
				if (!strcmp(path, "all") ||
				    !strcmp(path, roce_icrc_path_name(pi))) {
					if (roce_icrc_set_path(pi) == 0)
						paths[npaths++] = pi;
					else if (strcmp(path, "all"))
						fprintf(stderr, "ICRC path %s: not on "
							"this CPU\n", path);
				}
			if (npaths == 0)
				return 3;
		}
		if (strcmp(mode, "all") && runs == 1 && npaths == 1) {
			int m;

			/* one mode, one pass (what callgrind measures) */
			for (m = 0; m < M_NUM && strcmp(mode, mode_names[m]); m++)
				;
			if (m == M_NUM)
				usage(argv[0]);
			if (paths[0] >= 0)
				roce_icrc_set_path(paths[0]);
			run_mode(m, iters);
			printf("mode=%s path=%s iters=%" PRIu64 "\n", mode,
			       roce_icrc_impl(), iters);
		} else {
			time_pairs(paths, npaths, mode, iters, runs);
		}
	}
	return 0;
}
