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
 *   all        time every mode natively (default)
 *
 * Output (one line per mode):
 *   mode=parse iters=N ns_per_pkt_median=X ns_runs=a,b,c...
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include "roce.h"

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

enum mode { M_EMPTY, M_COPY, M_PARSE, M_VERIFY, M_REWRITE, M_NUM };
static const char *const mode_names[M_NUM] = {
	"empty", "copy", "parse", "verify", "rewrite",
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

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --pcap FILE [--frame N] [--mode empty|copy|parse|"
		"verify|rewrite|all] [--iters N] [--runs R]\n", prog);
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
		{ NULL, 0, NULL, 0 },
	};
	const char *pcap_path = NULL, *mode = "all";
	uint64_t iters = 2000000;
	int frameno = 14, runs = 7, c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pcap_path = optarg; break;
		case 'f': frameno = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'n': iters = strtoull(optarg, NULL, 0); break;
		case 'r': runs = atoi(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (pcap_path == NULL || runs < 1 || runs > 99 || iters == 0)
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

	for (int m = 0; m < M_NUM; m++) {
		double ns[100];

		if (strcmp(mode, "all") && strcmp(mode, mode_names[m]))
			continue;
		if (strcmp(mode, "all")) {
			/* single mode: one pass (what callgrind measures) */
			run_mode(m, iters);
			printf("mode=%s iters=%" PRIu64 "\n", mode_names[m], iters);
			continue;
		}
		run_mode(m, iters / 10);      /* warm up */
		for (int r = 0; r < runs; r++) {
			double t0 = now_ns();

			run_mode(m, iters);
			ns[r] = (now_ns() - t0) / (double)iters;
		}
		{
			double sorted[100];

			memcpy(sorted, ns, sizeof(double) * runs);
			qsort(sorted, runs, sizeof(double), cmp_double);
			printf("mode=%s iters=%" PRIu64 " ns_per_pkt_median=%.2f "
			       "ns_runs=", mode_names[m], iters, sorted[runs / 2]);
			for (int r = 0; r < runs; r++)
				printf("%s%.2f", r ? "," : "", ns[r]);
			printf("\n");
		}
	}
	return 0;
}
