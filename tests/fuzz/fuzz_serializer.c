/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_serializer.c — libFuzzer harness: one serializer instance (lib/
 * serializer over lib/rc) driven by a script of well-formed frames.
 *
 * Why it exists: raw bytes almost never get past the ICRC check, so the
 * input is a script: each 8-byte step names an operation (CAS, FAA, masked
 * CAS, WRITEs of 8 and other sizes, multi-packet WRITE parts, READ, SEND,
 * ACK, the NAK kinds, ATOMIC ACK, READ responses, CM REQ/REP/DREQ/DREP/RTU,
 * a retransmission of an earlier request, a restart), a connection (3
 * client IPs x 3 QPs, against two managed servers and one unmanaged), a
 * PSN as a small delta from that connection's counter or a jump (wrap at
 * 2^24 comes from the starting PSNs), an address (lock words, misaligned,
 * outside the region, another rkey), values, AckReq, a real UDP checksum,
 * a bad ICRC or a corrupted byte, and how much time passes.  The harness
 * builds each frame with correct lengths, IPv4 checksum and ICRC so the
 * fuzzer gets deep (fuzz_script.c, shared with fuzz_remap; the byte
 * layout of a step is in fuzz_script.h).
 *
 * Oracles after every call, judged by fuzz_ref.c and by counting the
 * serializer's state from the outside:
 *   - the verdict is one of the three; the length stays within cap;
 *   - SER_FORWARD leaves the frame byte for byte as it came (F1);
 *   - a rewritten or emitted frame is valid RoCEv2 (I1: lengths, IPv4
 *     checksum, ICRC, UDP checksum absent as it came or right), keeps the
 *     addresses, QPN and PSN, and is what it may be (a request: WRITE_ONLY
 *     from an atomic, or the same opcode with AckReq; emitted: ATOMIC
 *     ACKs to the response's client, in PSN order, none past the
 *     response's PSN, at most emit_cap);
 *   - a frame whose ICRC was bad on arrival is never rewritten, emits
 *     nothing, and changes no state: words, connections, stubs, the
 *     connection table and its maps and every counter but the "seen" and
 *     "bad ICRC" ones are byte-identical afterwards (I7, I8);
 *   - the connection table is bounded and consistent: live slots <=
 *     capacity, every live connection found by its request key and, once
 *     paired, by its response key, no two sharing a key, map sizes right;
 *   - word accounting: each word's busy count equals the holders visible
 *     in the stubs and open writes, and every pending write counted on a
 *     word belongs to the word's one pending owner (ser_word.c S1/S2);
 *   - a request retransmitted at once, with no time passing, gets the same
 *     verdict and the same bytes as its original (I6).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "fuzz_ref.h"
#include "fuzz_script.h"
#include "rc_internal.h"
#include "rdma_model.h"
#include "roce.h"
#include "ser_internal.h"
#include "serializer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCONN FZ_NCONN
#define NSRV FZ_NSRV           /* 0, 1 managed; 2 not */
#define EMIT_MAX 32

struct world {
	/* everything before c is cleared for each input */
	struct ser *s;
	struct ser_params prm;
	struct ser_region regions[2];
	uint64_t now;
	uint32_t cap_slack;        /* room past the frame given to the serializer */
	uint32_t emit_cap;
	struct fz_prev prev;       /* I6: the previous call, if it was a request */
	struct fz_conn c[NCONN][NSRV];
};

static struct world W;

/* Step b's frame into f (fuzz_script.h), answered by the connection's own
 * server QP.  Returns false if it sends nothing. */
static bool
build(const uint8_t *b, struct fz_frame *f, int *ci, int *si, bool *to_server)
{
	struct fz_target t = fz_target(b, W.c, W.prm.ring_size, ci, si);

	return fz_build(b, &t, f, to_server);
}

/* ------------------------------------------------------------------ */
/* state the serializer must not change on a bad frame */

struct snap {
	struct ser_word *words;
	struct ser_conn *conns;
	struct ser_stub *stubs;
	struct fz_rc_snap rc;
	struct ser_counters c;
};

static size_t
n_stubs(void)
{
	return (size_t)W.prm.max_conns * W.prm.ring_size;
}

/* counters a bad frame may move */
FUZZ_ORACLE static void
counters_masked(struct ser_counters *c)
{
	*c = *ser_counters(W.s);
	c->req_seen = c->resp_seen = c->bad_icrc_passed = c->resp_bad_icrc = 0;
}

FUZZ_ORACLE static void
snap_take(struct snap *n)
{
	n->words = fz_dup(W.s->words, W.s->n_words * sizeof(*n->words));
	n->conns = fz_dup(W.s->conns, W.prm.max_conns * sizeof(*n->conns));
	n->stubs = fz_dup(W.s->stubs, n_stubs() * sizeof(*n->stubs));
	fz_rc_snap_take(&n->rc, W.s->rc);
	counters_masked(&n->c);
}

FUZZ_ORACLE static void
snap_same_free(struct snap *n, const uint8_t *f, uint32_t len)
{
	struct ser_counters c;

	counters_masked(&c);
	REF_ASSERT(memcmp(n->words, W.s->words, W.s->n_words * sizeof(*n->words)) == 0,
		   "bad frame changed a word", f, len);
	REF_ASSERT(memcmp(n->conns, W.s->conns, W.prm.max_conns * sizeof(*n->conns)) == 0,
		   "bad frame changed a connection's state", f, len);
	REF_ASSERT(memcmp(n->stubs, W.s->stubs, n_stubs() * sizeof(*n->stubs)) == 0,
		   "bad frame changed a stub", f, len);
	fz_rc_snap_same(&n->rc, W.s->rc, f, len);
	REF_ASSERT(memcmp(&n->c, &c, sizeof(c)) == 0,
		   "bad frame moved a counter", f, len);
	free(n->words);
	free(n->conns);
	free(n->stubs);
	fz_rc_snap_free(&n->rc);
}

/* ------------------------------------------------------------------ */
/* invariants after every call */

FUZZ_ORACLE static void
check_words(void)
{
	struct ser *s = W.s;
	uint32_t busy[2 * FZ_REGION_WORDS] = { 0 }, pend[2 * FZ_REGION_WORDS] = { 0 };

	for (uint32_t i = 0; i < W.prm.max_conns; i++) {
		const struct ser_conn *sc = &s->conns[i];
		const struct rc_conn *c = rc_at(s->rc, i);

		if (c == NULL || sc->inc != c->incarnation)
			continue;
		for (uint32_t w = 0; sc->open_word != SER_NO_WORD && w < sc->open_nwords; w++)
			busy[sc->open_word + w]++;
		for (uint32_t k = 0; k < W.prm.ring_size; k++) {
			const struct ser_stub *st = &sc->ring[k];

			if (st->kind == ST_EMPTY)
				continue;
			if (st->flags & SF_BUSY)
				for (uint32_t w = 0; w < st->nwords; w++)
					busy[st->word + w]++;
			if (st->kind == ST_REAL && !(st->flags & SF_ANSWERED))
				busy[st->word]++;
			if ((st->flags & SF_PENDING) &&
			    st->pend_gen == s->words[st->word].pend_gen) {
				pend[st->word]++;
				/* no remapping here: every request is its own
				 * connection's ordering domain */
				REF_ASSERT(s->words[st->word].pend_owner == sc->inc,
					   "a pending write of a connection that does "
					   "not own the word's pending writes", NULL, 0);
			}
		}
	}
	for (uint32_t w = 0; w < s->n_words; w++) {
		if (busy[w] != s->words[w].busy)
			fprintf(stderr, "word %u: busy %u, holders %u\n", w,
				s->words[w].busy, busy[w]);
		REF_ASSERT(busy[w] == s->words[w].busy,
			   "busy count differs from its holders", NULL, 0);
		REF_ASSERT(pend[w] <= s->words[w].pend_cnt,
			   "more pending writes than the word counts", NULL, 0);
	}
}

/* ------------------------------------------------------------------ */
/* one call and its judgement */

FUZZ_ORACLE static void
check_out(const uint8_t *in, uint32_t in_len, const struct roce_pkt *pin,
	  const uint8_t *out, uint32_t out_len, bool request, bool emitted)
{
	struct roce_pkt p;

	fz_check_frame(in, in_len, out, out_len, true, &p);
	REF_ASSERT(memcmp(out, in, 12) == 0 && p.src_ip4 == pin->src_ip4 &&
		   p.dst_ip4 == pin->dst_ip4 && p.qpn == pin->qpn,
		   "rewrite changed addresses or QPN", out, out_len);
	if (!emitted)
		REF_ASSERT(p.psn == pin->psn, "rewrite changed the PSN", out, out_len);
	if (request) {
		if (pin->oi->flags & ROCE_F_ATOMIC)
			REF_ASSERT(p.opcode == ROCE_RC_WRITE_ONLY &&
				   (p.payload_len == 0 || p.payload_len == 8),
				   "atomic rewritten into something else", out, out_len);
		else
			REF_ASSERT(p.opcode == pin->opcode && roce_get_ackreq(out, &p) &&
				   !roce_get_ackreq(in, pin) && out_len == in_len,
				   "request rewritten other than by AckReq", out, out_len);
	}
}

FUZZ_ORACLE static void
call(const uint8_t *in, uint32_t len, bool to_server, int ci, int si, uint8_t b7,
     bool is_retransmit, uint64_t dt)
{
	static uint8_t buf[FZ_FRAME_MAX + 64];
	static struct ser_emit emit[EMIT_MAX];
	struct roce_pkt p, p0;
	struct ref_frame r;
	struct snap n;
	enum ser_verdict v;
	uint32_t l = len, cap = len + W.cap_slack, n_emit = 0;
	bool as_req = to_server != ((b7 & 0x40) != 0);

	(void)dt;    /* I6 compares the script's time itself (fz_i6) */
	bool good;

	memcpy(buf, in, len);
	if (roce_parse(buf, len, &p) != ROCE_OK)
		return;         /* the worker counts it as malformed */
	p0 = p;
	good = ref_locate(in, len, &r) && ref_icrc_ok(in, &r);
	if (!good)
		snap_take(&n);
	/* bit 6 of b7: hand it to the other direction's entry point */
	if (as_req)
		v = ser_on_request(W.s, buf, &l, cap, &p, W.now);
	else
		v = ser_on_response(W.s, buf, &l, cap, &p, W.now, emit, W.emit_cap,
				    &n_emit);
	if (fz_trace) {
		fprintf(stderr, "t=%llu %s conn %d srv %d opcode 0x%02x psn %u%s -> "
			"verdict %d emit %u conns %u\n", (unsigned long long)W.now,
			as_req ? "req " : "resp", ci, si, p0.opcode, p0.psn,
			good ? "" : " (bad ICRC)", v, n_emit, rc_count(W.s->rc));
		for (uint32_t w = 0; w < W.s->n_words; w++)
			if (W.s->words[w].busy || W.s->words[w].pend_cnt)
				fprintf(stderr, " w%u:s%u/b%u/p%u/f%x", w,
					W.s->words[w].state, W.s->words[w].busy,
					W.s->words[w].pend_cnt, W.s->words[w].flags);
		fprintf(stderr, "\n");
	}
	REF_ASSERT(v == SER_FORWARD || v == SER_FORWARD_REWRITTEN || v == SER_DROP,
		   "verdict", buf, l);
	REF_ASSERT(l <= cap && n_emit <= W.emit_cap, "length or emits beyond capacity",
		   buf, l);
	if (v == SER_FORWARD)
		REF_ASSERT(l == len && memcmp(buf, in, len) == 0,
			   "SER_FORWARD changed the frame", buf, l);
	if (!good) {
		REF_ASSERT(v != SER_FORWARD_REWRITTEN && n_emit == 0,
			   "frame with a bad ICRC rewritten or answered", buf, l);
		snap_same_free(&n, in, len);
	}
	if (v == SER_FORWARD_REWRITTEN)
		check_out(in, len, &p0, buf, l, as_req, false);
	for (uint32_t k = 0; k < n_emit; k++) {
		struct roce_pkt e;

		check_out(in, len, &p0, emit[k].buf, emit[k].len, false, true);
		REF_ASSERT(roce_parse(emit[k].buf, emit[k].len, &e) == ROCE_OK &&
			   e.opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE &&
			   roce_syndrome_kind(roce_get_syndrome(emit[k].buf, &e)) ==
			   ROCE_AETH_ACK, "emitted something but an ATOMIC ACK",
			   emit[k].buf, emit[k].len);
		REF_ASSERT(roce_psn_diff(e.psn, p0.psn) <= 0,
			   "emitted an answer past the response's PSN", emit[k].buf,
			   emit[k].len);
		if (k > 0) {
			struct roce_pkt d;

			roce_parse(emit[k - 1].buf, emit[k - 1].len, &d);
			REF_ASSERT(roce_psn_diff(e.psn, d.psn) > 0,
				   "emitted answers not in PSN order", emit[k].buf,
				   emit[k].len);
		}
	}

	/* I6: an immediate retransmission is answered as the original was */
	fz_i6(&W.prev, ci, si, W.c[ci][si].hn, W.now,
	      is_retransmit && to_server && !(b7 & 0x40) && (b7 & 3) == 0 && good,
	      W.prev.v != SER_DROP, to_server && !(b7 & 0x40) && good && !is_retransmit,
	      in, len, v, buf, l);
	fz_check_table(W.s->rc);
	check_words();
}

/* ------------------------------------------------------------------ */

static void
setup(uint8_t h0, uint8_t h1)
{
	static const uint32_t refusals[4] = { 0, 1, 4, 16 };

	memset(&W, 0, offsetof(struct world, c));
	W.regions[0] = (struct ser_region){ .server_ip4 = fz_srv_ip[0], .rkey = FZ_RKEY,
		.base = fz_region_base[0], .len = 8 * FZ_REGION_WORDS };
	W.regions[1] = (struct ser_region){ .server_ip4 = fz_srv_ip[1], .rkey = FZ_RKEY,
		.any_rkey = (h1 & 0x40) != 0, .base = fz_region_base[1],
		.len = 8 * FZ_REGION_WORDS };
	W.prm = (struct ser_params){
		.regions = W.regions, .n_regions = 2,
		.max_conns = (h1 & 8) ? 4 : 8,
		.ring_size = (h0 & 4) ? 8 : 32,
		.pmtu = (h0 & 0x80) ? 256 : 1024,
		.max_refusals = refusals[h1 >> 4 & 3],
		.gate_tsc = (h0 & 0x20) ? 1000 : 0,
		.pending_expire_tsc = (h0 & 8) ? 100000 : 0,
		.learn_holdoff_tsc = (h0 & 2) ? 10000 : 0,
		.conn_idle_tsc = (h0 & 0x10) ? 1000000 : 0,
		.no_force_ackreq = h0 & 1,
		/* its QPs are set up out of band: decided unless bit 7
		 * keeps swordd's default ([atomic] out_of_band off) */
		.out_of_band = !(h1 & 0x80),
	};
	W.s = ser_create(&W.prm);
	if (W.s == NULL)
		abort();
	W.prm = W.s->prm;       /* with its defaults filled in */
	W.emit_cap = (h0 & 0x40) ? 2 : EMIT_MAX;
	W.cap_slack = (h1 & 4) ? 0 : 64;
	W.now = 1000;
	for (int i = 0; i < NCONN; i++)
		for (int s = 0; s < NSRV; s++)
			fz_conn_init(&W.c[i][s], h1 & 3, i, s, NSRV);
}

static void
reset(uint8_t b7)
{
	if (b7 == 0xff)
		ser_reset(W.s);
	W.prev.valid = false;
}

static void
teardown(void)
{
	ser_destroy(W.s);
	W.s = NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fz_driver d = { .setup = setup, .teardown = teardown,
		.now = &W.now, .reset = reset, .build = build, .call = call };

	return fz_run(&d, data, size);
}
