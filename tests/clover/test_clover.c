/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_clover.c — Clover steering (SPEC F4): the [clover] config, the
 * per-frame rules (retransmissions, bad ICRC, unknown keys), and closed-loop
 * Clover worlds (clover_sim) with steering off and on in the same test.
 *
 * Environment (meson sets it): SYSTEM_PYTHON, TEST_HELPERS_DIR (scapy's
 * validate_pcap.py checks every steered frame), CLOVER_OUT_DIR.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>

#include "clover.h"
#include "clover_fn.h"
#include "clover_sim.h"
#include "roce.h"
#include "sword_config.h"

static void
report(const char *what, const struct csim_result *r)
{
	printf("%-28s puts %5lu gets %5lu failed-CAS/put %.4f gets>1RT %.4f RT/op %.3f "
	       "steered W %lu R %lu misses %lu lost %lu bad_reads %lu chain %lu frames %lu\n",
	       what, (unsigned long)r->puts, (unsigned long)r->gets,
	       r->puts ? (double)r->cas_failed / r->puts : 0.0,
	       r->gets ? (double)r->gets_multi_rt / r->gets : 0.0,
	       (double)r->round_trips / (double)(r->puts + r->gets),
	       (unsigned long)r->ctr[CLOVER_STEERED_WRITES],
	       (unsigned long)r->ctr[CLOVER_STEERED_READS],
	       (unsigned long)r->ctr[CLOVER_READ_MISSES],
	       (unsigned long)r->lost_writes, (unsigned long)r->bad_reads,
	       (unsigned long)r->chain_errors, (unsigned long)r->bad_frames);
	fflush(stdout);
}

static void
expect_correct(const char *what, const struct csim_result *r)
{
	ck_assert_msg(r->bad_frames == 0, "%s: %lu bad frames (%s)", what,
		      (unsigned long)r->bad_frames, r->err);
	ck_assert_msg(r->lost_writes == 0, "%s: %lu committed writes lost", what,
		      (unsigned long)r->lost_writes);
	ck_assert_msg(r->bad_reads == 0, "%s: %lu reads returned a value never "
		      "committed to that key", what, (unsigned long)r->bad_reads);
	ck_assert_msg(r->chain_errors == 0, "%s: %lu broken chains", what,
		      (unsigned long)r->chain_errors);
	ck_assert_msg(r->puts > 0, "%s: no PUTs", what);
}

static double
ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/*
 * Read steering's own rules, whatever the table size: every address a
 * client READs was learned (no GET misses on a never-learned address), a
 * steered READ or one already at the cached tail never needs a second
 * round trip (the redirect target is right), so every GET that needed one
 * missed the table (overwritten) or found the key's tail unsure.
 */
static void
expect_read_rules(const char *what, const struct csim_result *r)
{
	ck_assert_msg(r->get_class[CSIM_GET_MISS_NEVER][0] == 0,
		      "%s: %lu GET cursors were never learned", what,
		      (unsigned long)r->get_class[CSIM_GET_MISS_NEVER][0]);
	ck_assert_msg(r->get_class[CSIM_GET_STEERED][1] == 0 &&
		      r->get_class[CSIM_GET_AT_TAIL][1] == 0,
		      "%s: %lu steered / %lu at-tail GETs needed a 2nd round trip", what,
		      (unsigned long)r->get_class[CSIM_GET_STEERED][1],
		      (unsigned long)r->get_class[CSIM_GET_AT_TAIL][1]);
	ck_assert_uint_eq(r->gets_multi_rt, r->get_class[CSIM_GET_MISS_EVICTED][1] +
			  r->get_class[CSIM_GET_TAIL_UNKNOWN][1]);
}

/* Steering off (lib/clover in the path, both halves off) vs on, same seed. */
static void
off_vs_on(const char *name, struct csim_params prm, struct csim_result *off,
	  struct csim_result *on)
{
	char what[64];

	prm.clover = true;
	prm.write_steering = prm.read_steering = false;
	ck_assert_int_eq(csim_run(&prm, off), 0);
	snprintf(what, sizeof(what), "%s off", name);
	report(what, off);
	expect_correct(what, off);
	ck_assert_msg(off->rewritten == 0, "%s: steering off rewrote %lu frames", what,
		      (unsigned long)off->rewritten);

	prm.write_steering = prm.read_steering = true;
	ck_assert_int_eq(csim_run(&prm, on), 0);
	snprintf(what, sizeof(what), "%s on", name);
	report(what, on);
	expect_correct(what, on);
	expect_read_rules(what, on);
}

/* ---------------------------------------------------------------------- */

START_TEST(tc_contention_ycsb_a)
{
	/* 16 clients on 64 keys, half PUTs: most CAS race */
	struct csim_params prm = {
		.clients = 16, .keys = 64, .ops = 400, .write_pct = 50,
		.value_size = 1024, .seed = 7,
	};
	struct csim_result off, on;

	off_vs_on("ycsb-a uniform", prm, &off, &on);
	/* baseline: contention is real */
	ck_assert_msg(ratio(off.cas_failed, off.puts) > 0.3,
		      "baseline failed-CAS/put %.3f: no contention?",
		      ratio(off.cas_failed, off.puts));
	ck_assert_msg(ratio(off.gets_multi_rt, off.gets) > 0.3,
		      "baseline GETs needing a 2nd round trip %.3f",
		      ratio(off.gets_multi_rt, off.gets));
	/* write steering: failed tail CAS near zero (only a key's first,
	 * blind CAS can fail) */
	ck_assert_msg(on.cas_failed <= prm.keys && ratio(on.cas_failed, on.puts) < 0.02,
		      "failed CAS with steering: %lu of %lu PUTs",
		      (unsigned long)on.cas_failed, (unsigned long)on.puts);
	ck_assert_msg(on.ctr[CLOVER_STEERED_WRITES] > on.puts / 2,
		      "steered writes %lu", (unsigned long)on.ctr[CLOVER_STEERED_WRITES]);
	ck_assert_msg(on.ctr[CLOVER_STEERED_FAILED] == 0, "a steered CAS failed");
	/* read steering: fewer GETs need a second round trip, and fewer
	 * round trips per operation overall */
	ck_assert_msg(on.ctr[CLOVER_STEERED_READS] > 0, "no read steered");
	ck_assert_msg(ratio(on.gets_multi_rt, on.gets) < ratio(off.gets_multi_rt, off.gets),
		      "read steering did not reduce multi-RT GETs");
	ck_assert_msg(on.round_trips * 10 < off.round_trips * 7,
		      "round trips: %lu on vs %lu off", (unsigned long)on.round_trips,
		      (unsigned long)off.round_trips);
	/* Why "near zero" is out of reach for the paper's 3x here: the clients
	 * hold several times more distinct stale cursors than the table has
	 * slots, so even a table that knew the future could cover only part of
	 * them (tc_read_steering_live_cursors sizes the table to hold them). */
	ck_assert_msg((double)on.hint_stale_sum / on.hint_samples > 2.0 * prm.keys * 3,
		      "stale cursors held %.0f: fit in the 3x table?",
		      (double)on.hint_stale_sum / on.hint_samples);
	ck_assert_msg(on.hint_oracle_sum / on.hint_samples < 0.75,
		      "best 3x table would cover %.3f of stale cursors",
		      on.hint_oracle_sum / on.hint_samples);
}
END_TEST

/*
 * The same contended worlds with a read table that holds the cursors the
 * clients keep (read_factor 64, 8-way buckets: 4096 slots for ~700 live
 * cursors): both a failed tail CAS and a GET needing a second round trip
 * become rare, against steering off in the same test.
 */
START_TEST(tc_read_steering_live_cursors)
{
	static const struct { const char *name; double zipf; uint64_t seed; } w[] = {
		{ "ycsb-a uniform, big table", 0, 7 },
		{ "ycsb-a zipf, big table", 0.99, 17 },
	};
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct csim_params prm = {
			.clients = 16, .keys = 64, .ops = 400, .write_pct = 50,
			.zipf = w[i].zipf, .value_size = 1024, .seed = w[i].seed,
			.read_factor = 64, .read_ways = 8,
		};
		struct csim_result off, on;

		off_vs_on(w[i].name, prm, &off, &on);
		ck_assert_msg(ratio(off.cas_failed, off.puts) > 0.3 &&
			      ratio(off.gets_multi_rt, off.gets) > 0.3,
			      "%s: baseline failed-CAS/put %.3f, GETs>1RT %.3f", w[i].name,
			      ratio(off.cas_failed, off.puts),
			      ratio(off.gets_multi_rt, off.gets));
		ck_assert_msg(ratio(on.cas_failed, on.puts) < 0.05,
			      "%s: failed CAS/put %.4f", w[i].name,
			      ratio(on.cas_failed, on.puts));
		ck_assert_msg(ratio(on.gets_multi_rt, on.gets) < 0.05,
			      "%s: GETs needing a 2nd round trip %.4f (off %.4f)", w[i].name,
			      ratio(on.gets_multi_rt, on.gets),
			      ratio(off.gets_multi_rt, off.gets));
	}
}
END_TEST

START_TEST(tc_contention_write_only_zipf)
{
	struct csim_params prm = {
		.clients = 16, .keys = 256, .ops = 400, .write_pct = 100, .zipf = 0.99,
		.value_size = 1024, .seed = 11,
	};
	struct csim_result off, on;

	off_vs_on("write-only zipf", prm, &off, &on);
	ck_assert_msg(ratio(off.cas_failed, off.puts) > 0.3, "baseline %.3f",
		      ratio(off.cas_failed, off.puts));
	ck_assert_msg(ratio(on.cas_failed, on.puts) < 0.02, "failed CAS/put with "
		      "steering %.4f", ratio(on.cas_failed, on.puts));
	/* a PUT is WRITE + CAS: two round trips when nothing is retried */
	ck_assert_msg(ratio(on.round_trips, on.puts) < 2.05, "RT/PUT %.3f",
		      ratio(on.round_trips, on.puts));
}
END_TEST

/* Hot keys under Zipf: the read table keeps their history, reads hit. */
START_TEST(tc_read_steering_hot_keys)
{
	struct csim_params prm = {
		.clients = 8, .keys = 1024, .ops = 500, .write_pct = 50, .zipf = 0.99,
		.value_size = 1024, .seed = 3,
	};
	struct csim_result off, on;

	off_vs_on("ycsb-a zipf", prm, &off, &on);
	ck_assert_msg(ratio(on.gets_multi_rt, on.gets) * 2 < ratio(off.gets_multi_rt, off.gets),
		      "multi-RT GETs: %.3f on vs %.3f off", ratio(on.gets_multi_rt, on.gets),
		      ratio(off.gets_multi_rt, off.gets));
	ck_assert_msg(ratio(on.cas_failed, on.puts) < 0.02, "failed CAS/put %.4f",
		      ratio(on.cas_failed, on.puts));
}
END_TEST

/* One client: nothing is ever stale, nothing is rewritten. */
START_TEST(tc_single_client_untouched)
{
	struct csim_params prm = {
		.clients = 1, .keys = 16, .ops = 2000, .write_pct = 50,
		.value_size = 1024, .seed = 5, .clover = true,
		.write_steering = true, .read_steering = true,
	};
	struct csim_result r;

	ck_assert_int_eq(csim_run(&prm, &r), 0);
	report("single client", &r);
	expect_correct("single client", &r);
	ck_assert_uint_eq(r.rewritten, 0);
	ck_assert_uint_eq(r.cas_failed, 0);
	ck_assert_uint_eq(r.gets_multi_rt, 0);
}
END_TEST

/* Tables far too small: evictions, collisions, full key cache — steering
 * degrades, correctness does not. */
START_TEST(tc_tiny_tables)
{
	struct csim_params prm = {
		.clients = 16, .keys = 64, .ops = 300, .write_pct = 50,
		.value_size = 256, .seed = 9, .clover = true, .write_steering = true,
		.read_steering = true, .table_keys = 4, .read_factor = 1,
		.tiny_tables = true,
	};
	struct csim_result r;

	ck_assert_int_eq(csim_run(&prm, &r), 0);
	report("tiny tables", &r);
	expect_correct("tiny tables", &r);
	expect_read_rules("tiny tables", &r);
	ck_assert_msg(r.ctr[CLOVER_KEYS_FULL] > 0, "tail cache never full");
	ck_assert_msg(r.ctr[CLOVER_COLLISIONS] > 0, "no read table collision");
}
END_TEST

/* Every frame lib/clover rewrote, checked by scapy (ICRC, lengths). */
START_TEST(tc_steered_frames_scapy)
{
	const char *py = getenv("SYSTEM_PYTHON"), *helpers = getenv("TEST_HELPERS_DIR");
	const char *dir = getenv("CLOVER_OUT_DIR");
	char path[512], cmd[1400];
	struct csim_params prm = {
		.clients = 8, .keys = 16, .ops = 150, .write_pct = 50,
		.value_size = 1024, .seed = 13, .clover = true,
		.write_steering = true, .read_steering = true,
	};
	struct csim_result r;
	unsigned int i;
	int rc;

	ck_assert_msg(py != NULL && helpers != NULL, "SYSTEM_PYTHON/TEST_HELPERS_DIR unset");
	/* the paper's read table, then a large 8-way one (more READs steered) */
	for (i = 0; i < 2; i++) {
		prm.read_factor = i ? 64 : 3;
		prm.read_ways = i ? 8 : 1;
		snprintf(path, sizeof(path), "%s/clover-steered-%d-%u.pcap",
			 dir ? dir : "/tmp", (int)getpid(), i);
		prm.steered_pcap = path;
		ck_assert_int_eq(csim_run(&prm, &r), 0);
		report(i ? "steered frames, 64x 8-way" : "steered frames", &r);
		expect_correct("steered frames", &r);
		ck_assert_msg(r.ctr[CLOVER_STEERED_WRITES] > 0 &&
			      r.ctr[CLOVER_STEERED_READS] > 0,
			      "need both kinds of steered frames");
		snprintf(cmd, sizeof(cmd), "%s %s/validate_pcap.py --expect %lu %s", py,
			 helpers, (unsigned long)r.rewritten, path);
		rc = system(cmd);
		ck_assert_msg(rc == 0, "validate_pcap.py rejected steered frames (%s)", cmd);
		unlink(path);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Per-frame rules on hand-made frames */

#define CLIENT_IP RTE_BE32(0xc6120101)
#define SRV_IP RTE_BE32(0xc6120002)

static struct clover *
one_region(bool steer)
{
	struct clover_params cp = {
		.n_regions = 1, .keys = 64, .read_factor = 3, .qps = 64, .cas = 64,
		.write_steering = steer, .read_steering = steer,
	};

	cp.regions[0] = (struct clover_region){
		.server = 0, .rkey_any = true, .base = 0x1000, .last = 0xffffff,
		.write_min = 64, .key_offset = 8, .key_width = 8, .next_offset = 0,
		.read_min = 64,
	};
	return clover_create(&cp);
}

static void
be64_at(uint8_t *p, uint64_t v)
{
	rte_be64_t be = rte_cpu_to_be_64(v);

	memcpy(p, &be, 8);
}

static void
be32_at(uint8_t *p, uint32_t v)
{
	rte_be32_t be = rte_cpu_to_be_32(v);

	memcpy(p, &be, 4);
}

static uint32_t
mk_write(uint8_t *f, uint32_t psn, uint64_t va, uint64_t key)
{
	uint8_t reth[16], val[64];

	memset(val, 0, sizeof(val));
	memcpy(val + 8, &key, 8);               /* little-endian host */
	be64_at(reth, va);
	be32_at(reth + 8, 1);
	be32_at(reth + 12, 64);
	return csim_build(f, CLIENT_IP, SRV_IP, 0x11, ROCE_RC_WRITE_ONLY, psn, reth, 16,
			  val, 64);
}

static uint32_t
mk_cas(uint8_t *f, uint32_t psn, uint64_t va, uint64_t swap)
{
	uint8_t ae[28];

	be64_at(ae, va);
	be32_at(ae + 8, 1);
	be64_at(ae + 12, swap);
	be64_at(ae + 20, 0);
	return csim_build(f, CLIENT_IP, SRV_IP, 0x11, ROCE_RC_COMPARE_SWAP, psn, ae, 28,
			  NULL, 0);
}

static uint32_t
mk_atomic_ack(uint8_t *f, uint32_t psn, uint64_t orig)
{
	uint8_t ext[12];

	be32_at(ext, 0x1f000000u | psn);
	be64_at(ext + 4, orig);
	return csim_build(f, SRV_IP, CLIENT_IP, 0x22, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, ext,
			  12, NULL, 0);
}

static bool
feed(struct clover *cl, uint8_t *f, uint32_t len, bool to_server, uint64_t *ctr)
{
	struct roce_pkt p;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	return clover_process(cl, f, &p, 0, to_server, ctr);
}

static uint64_t
va_of(const uint8_t *f)
{
	rte_be64_t be;

	memcpy(&be, f + 14 + 20 + 8 + 12, 8);
	return rte_be_to_cpu_64(be);
}

/* Learn key 5: node A committed (blind CAS on the head H answered OK), then
 * node B written: its CAS aimed at the stale H goes to A. */
static void
learn_then_stale(struct clover *cl, uint64_t *ctr, uint8_t *f, uint32_t *len)
{
	const uint64_t H = 0x1000, A = 0x2000, B = 0x3000;
	uint8_t g[256];
	uint32_t n;

	n = mk_write(g, 1, H, 5);
	ck_assert(!feed(cl, g, n, true, ctr));
	n = mk_write(g, 2, A, 5);
	ck_assert(!feed(cl, g, n, true, ctr));
	n = mk_cas(g, 3, H, A);
	ck_assert(!feed(cl, g, n, true, ctr));        /* blind: tail unknown */
	ck_assert_uint_eq(ctr[CLOVER_CAS_UNSTEERED], 1);
	n = mk_atomic_ack(g, 3, 0);
	ck_assert(!feed(cl, g, n, false, ctr));
	ck_assert_uint_eq(ctr[CLOVER_CAS_OK], 1);
	n = mk_write(g, 4, B, 5);
	ck_assert(!feed(cl, g, n, true, ctr));
	*len = mk_cas(f, 5, H, B);                    /* stale: H is not the tail */
}

START_TEST(tc_steer_and_retransmit)
{
	struct clover *cl = one_region(true);
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 }, tail;
	uint8_t f[256], orig[256];
	uint32_t len;
	struct roce_pkt p;

	ck_assert_ptr_nonnull(cl);
	learn_then_stale(cl, ctr, f, &len);
	memcpy(orig, f, len);
	ck_assert(feed(cl, f, len, true, ctr));
	ck_assert_uint_eq(va_of(f), 0x2000);
	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ck_assert(roce_icrc_verify(f, &p));
	ck_assert_uint_eq(ctr[CLOVER_STEERED_WRITES], 1);
	ck_assert(clover_tail(cl, 0, 5, &tail));
	ck_assert_uint_eq(tail, 0x3000);
	/* the client retransmits the same CAS (same PSN): same target, even
	 * though the cached tail has moved on to B */
	ck_assert(feed(cl, orig, len, true, ctr));
	ck_assert_uint_eq(va_of(orig), 0x2000);
	ck_assert_uint_eq(ctr[CLOVER_CAS_RETRANSMIT], 1);
	ck_assert_uint_eq(ctr[CLOVER_STEERED_WRITES], 1);
	clover_destroy(cl);
}
END_TEST

START_TEST(tc_bad_icrc_never_resigned)
{
	struct clover *cl = one_region(true);
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 };
	uint8_t f[256], before[256];
	uint32_t len;

	ck_assert_ptr_nonnull(cl);
	learn_then_stale(cl, ctr, f, &len);
	f[len - 1] ^= 0xff;                         /* break the ICRC */
	memcpy(before, f, len);
	ck_assert(!feed(cl, f, len, true, ctr));
	ck_assert_mem_eq(f, before, len);
	ck_assert_uint_eq(ctr[CLOVER_BAD_ICRC_PASSED], 1);
	ck_assert_uint_eq(ctr[CLOVER_STEERED_WRITES], 0);
	clover_destroy(cl);
}
END_TEST

START_TEST(tc_steering_off_never_rewrites)
{
	struct clover *cl = one_region(false);
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 };
	uint8_t f[256], before[256];
	uint32_t len;

	ck_assert_ptr_nonnull(cl);
	learn_then_stale(cl, ctr, f, &len);
	memcpy(before, f, len);
	ck_assert(!feed(cl, f, len, true, ctr));
	ck_assert_mem_eq(f, before, len);
	clover_destroy(cl);
}
END_TEST

/* A data WRITE with a bad ICRC teaches nothing: the CAS after it has no key. */
START_TEST(tc_bad_icrc_write_not_learned)
{
	struct clover *cl = one_region(true);
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 };
	uint8_t f[256];
	uint32_t len;

	ck_assert_ptr_nonnull(cl);
	len = mk_write(f, 1, 0x2000, 5);
	f[len - 2] ^= 0x01;
	ck_assert(!feed(cl, f, len, true, ctr));
	ck_assert_uint_eq(ctr[CLOVER_BAD_ICRC_PASSED], 1);
	ck_assert_uint_eq(ctr[CLOVER_DATA_WRITES], 0);
	len = mk_cas(f, 2, 0x1000, 0x2000);
	ck_assert(!feed(cl, f, len, true, ctr));
	ck_assert_uint_eq(ctr[CLOVER_CAS_NO_KEY], 1);
	clover_destroy(cl);
}
END_TEST

/* One bucket of 4 ways (keys 1 x factor 4): four nodes fit; a fifth evicts
 * the oldest learned; relearning a node makes it the newest. */
START_TEST(tc_read_table_buckets)
{
	struct clover_params cp = {
		.n_regions = 1, .keys = 1, .read_factor = 4, .read_ways = 4, .qps = 64,
		.cas = 64, .write_steering = true, .read_steering = true,
	};
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 }, key;
	struct clover *cl;
	uint8_t f[256];
	unsigned int i;

	cp.regions[0] = (struct clover_region){
		.server = 0, .rkey_any = true, .base = 0x1000, .last = 0xffffff,
		.write_min = 64, .key_offset = 8, .key_width = 8, .next_offset = 0,
		.read_min = 64,
	};
	cl = clover_create(&cp);
	ck_assert_ptr_nonnull(cl);
	for (i = 0; i < 4; i++)
		ck_assert(!feed(cl, f, mk_write(f, i, 0x1000 * (i + 1), 10 + i), true, ctr));
	for (i = 0; i < 4; i++) {
		ck_assert(clover_read_key(cl, 0, 0x1000 * (i + 1), &key));
		ck_assert_uint_eq(key, 10 + i);
	}
	ck_assert_uint_eq(ctr[CLOVER_COLLISIONS], 0);
	/* relearn node 1 (now the newest), then a fifth node: node 2 goes */
	ck_assert(!feed(cl, f, mk_write(f, 4, 0x1000, 10), true, ctr));
	ck_assert(!feed(cl, f, mk_write(f, 5, 0x5000, 14), true, ctr));
	ck_assert_uint_eq(ctr[CLOVER_COLLISIONS], 1);
	ck_assert(clover_read_key(cl, 0, 0x1000, &key));
	ck_assert(!clover_read_key(cl, 0, 0x2000, &key));
	ck_assert(clover_read_key(cl, 0, 0x3000, &key));
	ck_assert(clover_read_key(cl, 0, 0x4000, &key));
	ck_assert(clover_read_key(cl, 0, 0x5000, &key));
	ck_assert_uint_eq(key, 14);
	clover_destroy(cl);
	/* more ways than slots is refused */
	cp.read_ways = CLOVER_MAX_READ_WAYS + 1;
	ck_assert_ptr_null(clover_create(&cp));
}
END_TEST

/* A steered CAS relearns the tail it supersedes: clients that read that
 * tail while it was current will READ it next.  A one-slot read table: B's
 * data WRITE overwrote A, the CAS linking B after A brings A back. */
START_TEST(tc_superseded_tail_relearned)
{
	struct clover_params cp = {
		.n_regions = 1, .keys = 1, .read_factor = 1, .qps = 64, .cas = 64,
		.write_steering = true, .read_steering = true,
	};
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 }, key;
	struct clover *cl;
	uint8_t f[256];
	uint32_t len;

	cp.regions[0] = (struct clover_region){
		.server = 0, .rkey_any = true, .base = 0x1000, .last = 0xffffff,
		.write_min = 64, .key_offset = 8, .key_width = 8, .next_offset = 0,
		.read_min = 64,
	};
	cl = clover_create(&cp);
	ck_assert_ptr_nonnull(cl);
	learn_then_stale(cl, ctr, f, &len);          /* tail A = 0x2000, B written */
	ck_assert(!clover_read_key(cl, 0, 0x2000, &key));
	ck_assert(clover_read_key(cl, 0, 0x3000, &key));
	ck_assert(feed(cl, f, len, true, ctr));      /* steered to A, tail now B */
	ck_assert(clover_read_key(cl, 0, 0x2000, &key));
	ck_assert_uint_eq(key, 5);
	/* a READ of the superseded A is steered to B */
	{
		uint8_t reth[16];

		be64_at(reth, 0x2000);
		be32_at(reth + 8, 1);
		be32_at(reth + 12, 64);
		len = csim_build(f, CLIENT_IP, SRV_IP, 0x11, ROCE_RC_READ_REQUEST, 6, reth, 16,
				 NULL, 0);
		ck_assert(feed(cl, f, len, true, ctr));
		ck_assert_uint_eq(va_of(f), 0x3000);
		ck_assert_uint_eq(ctr[CLOVER_STEERED_READS], 1);
	}
	clover_destroy(cl);
}
END_TEST

/* A CAS from a QP that wrote nothing: key unknown, passed, counted. */
START_TEST(tc_cas_without_write)
{
	struct clover *cl = one_region(true);
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 };
	uint8_t f[256];
	uint32_t len = mk_cas(f, 9, 0x1000, 0x2000);

	ck_assert_ptr_nonnull(cl);
	ck_assert(!feed(cl, f, len, true, ctr));
	ck_assert_uint_eq(ctr[CLOVER_CAS_NO_KEY], 1);
	clover_destroy(cl);
}
END_TEST

/*
 * fuzz_clover finding: a blind CAS window whose answers never came is given
 * up after `cas` more tail CAS; an answer of one of its CAS that comes
 * after all used to be counted against the *new* window, closing it while
 * the new window's own blind CAS was unanswered and declaring a tail that
 * CAS may still move (clover.h: the tail stays unknown until every blind
 * CAS is answered).  Now the late answer counts for no window.
 */
#define OTHER_IP RTE_BE32(0xc6120109)

static uint32_t
mk_cas_from(uint8_t *f, uint32_t ip, uint32_t qpn, uint32_t psn, uint64_t va,
	    uint64_t swap)
{
	uint8_t ae[28];

	be64_at(ae, va);
	be32_at(ae + 8, 1);
	be64_at(ae + 12, swap);
	be64_at(ae + 20, 0);
	return csim_build(f, ip, SRV_IP, qpn, ROCE_RC_COMPARE_SWAP, psn, ae, 28, NULL, 0);
}

static struct clover *
four_cas_slots(void)
{
	struct clover_params cp = {
		.n_regions = 1, .keys = 64, .read_factor = 3, .qps = 64, .cas = 4,
		.write_steering = true, .read_steering = true,
	};

	cp.regions[0] = (struct clover_region){
		.server = 0, .rkey_any = true, .base = 0x1000, .last = 0xffffff,
		.write_min = 64, .key_offset = 8, .key_width = 8, .next_offset = 0,
		.read_min = 64,
	};
	return clover_create(&cp);
}

static uint32_t
mk_answer_to(uint8_t *f, uint32_t ip, uint32_t psn, uint64_t orig)
{
	uint8_t ext[12];

	be32_at(ext, 0x1f000000u | psn);
	be64_at(ext + 4, orig);
	return csim_build(f, SRV_IP, ip, 0x44, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, ext, 12,
			  NULL, 0);
}

static uint32_t
mk_write_from(uint8_t *f, uint32_t ip, uint32_t qpn, uint32_t psn, uint64_t va,
	      uint64_t key)
{
	uint8_t reth[16], val[64] = { 0 };

	memcpy(val + 8, &key, 8);
	be64_at(reth, va);
	be32_at(reth + 8, 1);
	be32_at(reth + 12, 64);
	return csim_build(f, ip, SRV_IP, qpn, ROCE_RC_WRITE_ONLY, psn, reth, 16, val, 64);
}

/*
 * A PSN >= from for a CAS from ip whose record takes none of the slots of
 * the unanswered CAS (ips[i], psns[i]): found on a scratch instance (a
 * record's slot depends on client IP, PSN and server only, and the hash is
 * clover.c's own).
 */
static uint32_t
psn_beside(uint32_t ip, uint32_t from, const uint32_t *ips, const uint32_t *psns,
	   int n)
{
	for (uint32_t psn = from; psn < from + 1000; psn++) {
		struct clover *cl = four_cas_slots();
		uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 };
		uint8_t f[256];

		ck_assert_ptr_nonnull(cl);
		for (int i = 0; i < n; i++)
			feed(cl, f, mk_cas_from(f, ips[i], 0x77, psns[i], 0x5000, 1),
			     true, ctr);
		feed(cl, f, mk_cas_from(f, ip, 0x77, psn, 0x5000, 1), true, ctr);
		clover_destroy(cl);
		if (ctr[CLOVER_CAS_EVICTED] == 0)
			return psn;
	}
	ck_abort_msg("no PSN beside the others' CAS slots");
	return 0;
}

START_TEST(tc_late_answer_of_given_up_window)
{
	struct clover *cl = four_cas_slots();
	uint64_t ctr[CLOVER_COUNTER_NUM] = { 0 }, tail;
	uint32_t ips[2] = { CLIENT_IP, OTHER_IP }, psns[2] = { 3, 0 }, pi = 100;
	uint32_t pb, pc;
	uint8_t f[256];

	ck_assert_ptr_nonnull(cl);
	/* the client's QP writes node A of key 5 and links it, blind */
	ck_assert(!feed(cl, f, mk_write(f, 2, 0x2000, 5), true, ctr));
	ck_assert(!feed(cl, f, mk_cas(f, 3, 0x1000, 0x2000), true, ctr));
	/* four answered tail CAS of nobody's key: the window of key 5 is now
	 * older than the CAS table, its answer presumed lost */
	for (int i = 0; i < 4; i++) {
		pi = psn_beside(OTHER_IP, pi + 1, ips, psns, 1);
		ck_assert(!feed(cl, f, mk_cas_from(f, OTHER_IP, 0x33, pi, 0x5000, 1),
				true, ctr));
		ck_assert(!feed(cl, f, mk_answer_to(f, OTHER_IP, pi, 0), false, ctr));
	}
	/* QPs B and C of another client link nodes B and C after A: the old
	 * window is given up and B's CAS opens a new one, C's joins it */
	pb = psn_beside(OTHER_IP, pi + 1, ips, psns, 1);
	psns[1] = pb;
	pc = psn_beside(OTHER_IP, pb + 1, ips, psns, 2);
	ck_assert(!feed(cl, f, mk_write_from(f, OTHER_IP, 0x34, 1, 0x3000, 5), true, ctr));
	ck_assert(!feed(cl, f, mk_cas_from(f, OTHER_IP, 0x34, pb, 0x2000, 0x3000), true,
			ctr));
	ck_assert(!feed(cl, f, mk_write_from(f, OTHER_IP, 0x35, 1, 0x4000, 5), true, ctr));
	ck_assert(!feed(cl, f, mk_cas_from(f, OTHER_IP, 0x35, pc, 0x2000, 0x4000), true,
			ctr));
	ck_assert_uint_eq(ctr[CLOVER_CAS_UNSTEERED], 3);
	ck_assert_uint_eq(ctr[CLOVER_CAS_EVICTED], 0);   /* every record is there */
	/* B linked B */
	ck_assert(!feed(cl, f, mk_answer_to(f, OTHER_IP, pb, 0), false, ctr));
	ck_assert(!clover_tail(cl, 0, 5, &tail));
	/* the first CAS's answer comes after all (it failed): C is still
	 * out and may link C after B, so the tail must stay unknown */
	ck_assert(!feed(cl, f, mk_answer_to(f, CLIENT_IP, 3, 0x9999), false, ctr));
	ck_assert(!clover_tail(cl, 0, 5, &tail));
	/* C failed (B was there first): B is the tail */
	ck_assert(!feed(cl, f, mk_answer_to(f, OTHER_IP, pc, 0x3000), false, ctr));
	ck_assert(clover_tail(cl, 0, 5, &tail));
	ck_assert_uint_eq(tail, 0x3000);
	clover_destroy(cl);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Config */

static int
set(struct sword_config *c, const char *a, char *err, size_t n)
{
	return sword_config_set(c, a, err, n);
}

START_TEST(tc_config)
{
	struct sword_config c;
	struct clover_params prm;
	char err[512];

	sword_config_defaults(&c);
	ck_assert_int_eq(set(&c, "server.m.ip=198.18.0.2", err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "features.clover=on", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[features] clover") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.v.server=m", err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "clover.v.rkey=0x53716", err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "clover.keys=1000", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), 0);
	clover_params_from_config(&prm, &c);
	ck_assert_uint_eq(prm.n_regions, 1);
	ck_assert_uint_eq(prm.regions[0].write_min, 1024);
	ck_assert_uint_eq(prm.regions[0].key_offset, 8);
	ck_assert_uint_eq(prm.regions[0].key_width, 8);
	ck_assert_uint_eq(prm.regions[0].next_offset, 0);
	ck_assert_uint_eq(prm.regions[0].read_min, 1024);
	ck_assert_uint_eq(prm.regions[0].last, UINT64_MAX);
	ck_assert(!prm.regions[0].rkey_any);
	ck_assert_uint_eq(prm.regions[0].rkey, 0x53716);
	ck_assert_uint_eq(prm.keys, 1000);
	ck_assert_uint_eq(prm.read_factor, 3);
	ck_assert_uint_eq(prm.read_ways, 1);
	ck_assert_int_eq(set(&c, "clover.read_factor=64", err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "clover.read_ways=8", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), 0);
	clover_params_from_config(&prm, &c);
	ck_assert_uint_eq(prm.read_factor, 64);
	ck_assert_uint_eq(prm.read_ways, 8);
	ck_assert_int_eq(set(&c, "clover.read_ways=17", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover] read_ways: out of range") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.read_factor=257", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover] read_factor: out of range") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.keys=67108864", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "exceeds 2^28 slots") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.keys=1000", err, sizeof(err)), 0);

	ck_assert_int_eq(set(&c, "clover.v.bogus=1", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: [clover.v] bogus: unknown key");
	ck_assert_int_eq(set(&c, "clover.nope=1", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: [clover] nope: unknown key");
	ck_assert_int_eq(set(&c, "clover.qps=1000", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover] qps: must be a power of two") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.v.key_width=9", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover.v] key_width: out of range") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.v.key_offset=1020", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover.v] key_offset") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.v.key_offset=8", err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "clover.v.next_offset=4", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover.v] next_offset") != NULL, "%s", err);
	ck_assert_int_eq(set(&c, "clover.v.next_offset=0", err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "clover.w.server=m", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover.w] base: region overlaps clover.v") != NULL,
		      "%s", err);
	ck_assert_int_eq(set(&c, "clover.w.rkey=7", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(set(&c, "clover.w.server=other", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "[clover.w] server: no [server.other] section") != NULL,
		      "%s", err);
}
END_TEST

START_TEST(tc_config_file)
{
	const char *root = getenv("SOURCE_ROOT");
	struct sword_config c;
	char path[512], err[512];

	snprintf(path, sizeof(path), "%s/conf/clover.conf", root ? root : ".");
	ck_assert_msg(sword_config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert(c.clover);
	ck_assert_uint_eq(c.n_clover, 1);
	ck_assert_uint_eq(c.clover_layouts[0].write_min, 1024);
	ck_assert_uint_eq(c.clover_layouts[0].key_offset, 8);
	ck_assert_uint_eq(c.clover_read_factor, 3);
	ck_assert_uint_eq(c.clover_read_ways, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("clover");
	TCase *tc = tcase_create("frames");
	TCase *loop = tcase_create("closed-loop");
	SRunner *sr;
	int failed;

	roce_crc_init();
	tcase_add_test(tc, tc_config);
	tcase_add_test(tc, tc_config_file);
	tcase_add_test(tc, tc_steer_and_retransmit);
	tcase_add_test(tc, tc_bad_icrc_never_resigned);
	tcase_add_test(tc, tc_steering_off_never_rewrites);
	tcase_add_test(tc, tc_cas_without_write);
	tcase_add_test(tc, tc_bad_icrc_write_not_learned);
	tcase_add_test(tc, tc_read_table_buckets);
	tcase_add_test(tc, tc_superseded_tail_relearned);
	tcase_add_test(tc, tc_late_answer_of_given_up_window);
	suite_add_tcase(s, tc);
	tcase_set_timeout(loop, 1200);
	tcase_add_test(loop, tc_single_client_untouched);
	tcase_add_test(loop, tc_contention_ycsb_a);
	tcase_add_test(loop, tc_read_steering_live_cursors);
	tcase_add_test(loop, tc_contention_write_only_zipf);
	tcase_add_test(loop, tc_read_steering_hot_keys);
	tcase_add_test(loop, tc_tiny_tables);
	tcase_add_test(loop, tc_steered_frames_scapy);
	suite_add_tcase(s, loop);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
