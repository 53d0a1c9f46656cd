/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_remap.c — libFuzzer harness: one connection remapping instance
 * (lib/remap over lib/rc's connection table), alone or with a serializer
 * stacked as in swordd's pipeline (requests serializer → remapping,
 * responses remapping → serializer, remapping's emitted client frames
 * through the serializer too, as tests/serializer/sim.c does), driven by
 * a script of well-formed frames.
 *
 * Why it exists (issue #16): remapping rewrites requests onto borrowed
 * server QPs and maps the answers back; its state (lanes, stub rings,
 * per-client reverse index, wait queues, recovery) is reached only by
 * long well-formed exchanges, which the closed-loop tests drive with
 * well-behaved endpoints only.
 *
 * The input: two header bytes, then 8-byte steps (fuzz_script.h: the
 * operation, connection, PSN, sizes, values, AckReq, UDP checksum, bad
 * ICRC or corrupted byte, time passing).  3 client hosts x 3 QPs against
 * servers 0 and 1 (remapped) and 2 (not); all QPs of a run may start at
 * one PSN (Sherman's 3185).  A response goes, unless bit 6 of b[1] says
 * "the connection's own QP", to a lane of the server: the step's
 * connection's lane if it is bound, else lane (b[1] bit 7), addressed to
 * the lane's owner, at a PSN from the lane's state (b[5] bits 3-5: una + 0..2,
 * the resend point, next - 1..3, before the lane started) plus b[2]'s
 * delta, so the answers hit the PSNs the lanes carry.
 *
 *   h0 bit 0     serializer stacked (server 0 has a lock region; its
 *                connections are kept by the serializer)
 *   h0 bit 1     server 0 has 2 lanes (else 1); server 1 has 1
 *   h0 bit 2     stub ring 8 (else 256)
 *   h0 bit 3     client reverse index 4 (else 64)
 *   h0 bits 4-5  responder resources 16, 1, 2, 4
 *   h0 bit 6     path MTU 256 (else 1024)
 *   h0 bit 7     emit array of 2 (else 32)
 *   h1 bits 0-1  starting PSNs (fz_conn_init)
 *   h1 bit 2     start hold-off 10000
 *   h1 bit 3     connection table of 4 (else 16)
 *   h1 bit 4     connections idle after 1000000
 *   h1 bit 5     evidence hold-off 10000
 *   h1 bit 6     resend timeout 1000 (else the default)
 *   h1 bit 7     a streaming client keeps its turn unless quiet for 1000
 *                (stream_quiet_tsc; else off)
 * FZ_RESET with b[7] == 0xff restarts everything (state gone, script on).
 *
 * Oracles after every call (fuzz_ref.c judges frames; the rest is what
 * remap.h and lib/remap/README.md promise, read from the state):
 *   - the verdict is one of the three, the emits within emit_cap, the
 *     length within cap; REMAP_PASS leaves the frame byte for byte;
 *   - every rewritten or emitted frame is valid RoCEv2 (I1: lengths, IPv4
 *     checksum, ICRC, UDP checksum zero or right; a rewritten one keeps
 *     the sender's choice of UDP checksum);
 *   - a frame whose ICRC was bad on arrival is not rewritten, emits
 *     nothing and changes no state: lanes, stubs, connections, reverse
 *     index, wait queues, the connection table and every counter but the
 *     ones that count such frames are byte-identical afterwards (I7, I8);
 *   - a rewritten request goes to an open lane of its server: the lane's
 *     server QPN, its client's address as source; a response mapped back
 *     goes to a connection bound to the lane it came on, at a PSN that
 *     connection sent; every frame for a client goes to a live
 *     connection; a frame for a server is a zero-length WRITE on a lane;
 *   - I2 per lane, from what left swordd: a lane's first request is at
 *     its start (the owner's next PSN), every new lane PSN follows the
 *     last (READs by their span), and a lane PSN is sent again only for
 *     the same client's same PSN, never after swordd filled it (I6) —
 *     unless the script's server answered a PSN never sent on that lane
 *     (no real server does) or a client resent a READ with a span other
 *     than what is left of its original's (no real client does): the
 *     lane's log is then not judged;
 *   - bounded tables: per lane next - una <= ring, outstanding READs and
 *     atomics <= the responder resources and equal to the stubs holding
 *     one, the wait queue within the table, bound clients counted right;
 *     stub and reverse-index slots hold their own PSNs; lib/rc's table
 *     consistent (fz_check_table);
 *   - a request retransmitted at once, with no time passing, gets the
 *     same verdict and bytes as its original (I6);
 *   - lib/remap's common-case paths (remap_request_fast,
 *     remap_response_fast) do what its general steps do: every input
 *     runs twice, the second time with
 *     remap_params.general_only, and every verdict, frame, emitted frame
 *     and the final counters of the two runs must be the same;
 *   - remapping adopted from its state block (remap_state.c) goes on as
 *     if nothing happened: a third run adopts the block before every
 *     frame and must let out the same verdicts and frames (the counters
 *     are the process's: with the block, none are compared).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_ref.h"
#include "fuzz_script.h"
#include "rc_internal.h"
#include "remap_internal.h"
#include "roce.h"
#include "serializer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NRSRV 2                /* servers 0 and 1 are remapped */
#define MAX_LANES 3
#define EMIT_MAX 32
#define LOG_RING 512           /* I2: lane PSNs remembered per lane */

/* I2: what left swordd on one lane life. */
struct lane_log {
	uint32_t epoch;            /* its entries are this epoch's */
	uint32_t owner, owner_inc; /* the lane life it follows */
	bool started, tainted;
	uint32_t next;             /* next new lane PSN */
};

struct log_ent {
	uint32_t epoch, psn;
	uint32_t cl_ip, cl_qpn, cpsn;   /* whose request; cl_qpn 0: swordd's filler */
};

struct world {
	/* everything before c is cleared for each input */
	struct remap *r;
	struct rc_table *rc;
	struct ser *s;             /* NULL: remapping alone */
	struct rc_params cprm;
	struct remap_params rprm;
	struct remap_server rsrv[NRSRV];
	struct ser_params sprm;
	struct ser_region region;
	uint64_t now;
	uint32_t emit_cap;
	struct fz_prev prev;       /* I6: the previous call, a request */
	struct fz_side lane_side[MAX_LANES];   /* what each lane's server QP sent */
	struct lane_log log[MAX_LANES];
	struct fz_conn c[FZ_NCONN][FZ_NSRV];
};

static struct world W;
static bool general_only;       /* this run: lib/remap's general steps only */
static uint64_t out_hash;       /* what this run let out, and its counters */
/*
 * Remapping in a state block (remap_state.c), and a third run of each
 * input that adopts the block before every frame (a swordd restarted
 * between any two frames, none lost): it must let out exactly what the
 * first run did (counters are the process's: not compared then).
 * FUZZ_REMAP_STATE=0: on the heap, two runs, counters compared.
 */
static bool state_mode, adopt_each;
static void *state_mem;
static size_t state_len;

/* FNV-1a over what leaves: the two runs of an input must agree */
static void
fold(const void *b, size_t n)
{
	const uint8_t *q = b;

	for (size_t i = 0; i < n; i++)
		out_hash = (out_hash ^ q[i]) * 0x100000001b3ull;
}
static uint32_t epoch;          /* never reset: log entries of older runs are stale */
static struct log_ent logent[MAX_LANES][LOG_RING];

/* ------------------------------------------------------------------ */
/* the instance */

static void
create(void)
{
	W.rc = rc_create(&W.cprm);
	if (W.rc == NULL)
		abort();
	W.rprm.rc = W.rc;
	if (W.rsrv[0].keep_conns == false) {
		W.sprm.rc = W.rc;
		W.s = ser_create(&W.sprm);
		if (W.s == NULL)
			abort();
	}
	if (state_mode) {
		struct remap_params sp = W.rprm;

		sp.state_mem = NULL;
		sp.state_len = remap_state_size(&sp);
		if (sp.state_len > state_len) {
			free(state_mem);
			state_len = sp.state_len;
			state_mem = aligned_alloc(64, (state_len + 63) & ~(size_t)63);
			if (state_mem == NULL)
				abort();
		}
		sp.state_mem = state_mem;
		sp.rc_adopted = true;
		W.r = remap_create(&sp);
	} else {
		W.r = remap_create(&W.rprm);
	}
	if (W.r == NULL)
		abort();
	for (int k = 0; k < MAX_LANES; k++) {
		W.log[k].epoch = ++epoch;
		W.log[k].started = W.log[k].tainted = false;
		W.lane_side[k].msn = 0;
		W.lane_side[k].last.len = 0;
	}
}

static void
destroy(void)
{
	if (W.r != NULL && !state_mode)
		fold(remap_counters(W.r), sizeof(struct remap_counters));
	remap_destroy(W.r);
	ser_destroy(W.s);
	rc_destroy(W.rc);
	W.r = NULL;
	W.s = NULL;
	W.rc = NULL;
}

static void
setup(uint8_t h0, uint8_t h1)
{
	static const uint32_t rr[4] = { 16, 1, 2, 4 };

	memset(&W, 0, offsetof(struct world, c));
	W.cprm = (struct rc_params){
		.max_conns = (h1 & 8) ? 4 : 16,
		.idle_tsc = (h1 & 0x10) ? 1000000 : 0,
		.holdoff_tsc = (h1 & 0x20) ? 10000 : 0,
	};
	W.rsrv[0] = (struct remap_server){ .ip = fz_srv_ip[0],
		.lanes = (h0 & 2) ? 2 : 1, .keep_conns = !(h0 & 1) };
	W.rsrv[1] = (struct remap_server){ .ip = fz_srv_ip[1], .lanes = 1,
		.keep_conns = true };
	W.rprm = (struct remap_params){
		.servers = W.rsrv, .n_servers = NRSRV,
		.ring = (h0 & 4) ? 8 : 256,
		.client_ring = (h0 & 8) ? 4 : 64,
		.responder_resources = rr[h0 >> 4 & 3],
		.pmtu = (h0 & 0x40) ? 256 : 1024,
		.start_holdoff_tsc = (h1 & 4) ? 10000 : 0,
		.resend_timeout_tsc = (h1 & 0x40) ? 1000 : 0,
		.stream_quiet_tsc = (h1 & 0x80) ? 1000 : 0,
		.general_only = general_only,
		/* the scripts' QPs are set up out of band (a few by CM) */
		.out_of_band = true,
	};
	W.region = (struct ser_region){ .server_ip4 = fz_srv_ip[0], .rkey = FZ_RKEY,
		.base = fz_region_base[0], .len = 8 * FZ_REGION_WORDS };
	W.sprm = (struct ser_params){ .regions = &W.region, .n_regions = 1,
		.ring_size = 32, .pmtu = W.rprm.pmtu, .max_refusals = 16,
		/* its QPs are set up out of band: decided as with swordd's
		 * [atomic] out_of_band = on */
		.out_of_band = true };
	W.emit_cap = (h0 & 0x80) ? 2 : EMIT_MAX;
	W.now = 1000;
	create();
	W.rprm = W.r->prm;      /* with its defaults filled in */
	W.rprm.servers = W.rsrv;
	W.rprm.rc = NULL;       /* create()'s own */
	W.rprm.state_mem = NULL;
	for (int i = 0; i < FZ_NCONN; i++)
		for (int s = 0; s < FZ_NSRV; s++)
			fz_conn_init(&W.c[i][s], h1 & 3, i, s, FZ_NSRV);
}

/* ------------------------------------------------------------------ */
/* reading remapping's state */

static struct rmp_lane *
lane_at(int k)
{
	return k >= 0 && (uint32_t)k < W.r->n_lanes ? &W.r->lanes[k] : NULL;
}

/* The open lane of server srv_ip4 whose server QP is qpn, or -1. */
static int
lane_by_srv_qpn(uint32_t srv_ip4, uint32_t qpn)
{
	int s = rmp_server_of(W.r, srv_ip4);

	for (uint32_t k = 0; s >= 0 && k < W.r->servers[s].n_lanes; k++) {
		uint32_t g = W.r->servers[s].first_lane + k;

		if (W.r->lanes[g].open && W.r->lanes[g].srv_qpn == qpn)
			return (int)g;
	}
	return -1;
}

/* A response from server srv_ip4 to (cl_ip, cl_qpn): the lane it addresses
 * (an open one before a closed one of an earlier life). */
static int
lane_by_client(uint32_t srv_ip4, uint32_t cl_ip, uint32_t cl_qpn)
{
	int s = rmp_server_of(W.r, srv_ip4), found = -1;

	for (uint32_t k = 0; s >= 0 && k < W.r->servers[s].n_lanes; k++) {
		uint32_t g = W.r->servers[s].first_lane + k;

		if (W.r->lanes[g].srv_qpn != 0 && W.r->lanes[g].cl_ip == cl_ip &&
		    W.r->lanes[g].cl_qpn == cl_qpn &&
		    (found < 0 || W.r->lanes[g].open))
			found = (int)g;
	}
	return found;
}

/* Remapping's view of the live connection c, or NULL. */
static struct rmp_conn *
view_of(const struct rc_conn *c)
{
	struct rmp_conn *rcn;

	if (c == NULL)
		return NULL;
	rcn = &W.r->conns[rc_index(W.rc, c)];
	return rcn->inc == c->incarnation ? rcn : NULL;
}

/* The lane client connection (i, srv) rides, or -1. */
static int
bound_lane(int i, int srv)
{
	struct rc_conn *c = rc_find_req(W.rc, fz_cl_ip(i), fz_srv_ip[srv], fz_srv_qpn(i, srv));
	struct rmp_conn *rcn = view_of(c);

	return rcn != NULL && rcn->state == RC_BOUND ? (int)rcn->lane : -1;
}

/* ------------------------------------------------------------------ */
/* the script: responses aimed at the lanes */

static bool
is_response_op(int op)
{
	return (op >= FZ_ACK && op <= FZ_RR_ONLY) || op == FZ_RESEND_RESP;
}

/* A lane PSN from the lane's state: b5 bits 3-5. */
static uint32_t
lane_psn(const struct rmp_lane *l, uint8_t b5)
{
	uint32_t k = b5 >> 3 & 7;

	switch (k) {
	case 0:
	case 1:
	case 2:
		return roce_psn_add(l->una, k);
	case 3:
		return l->recovering ? l->resend : l->una;
	case 7:
		return roce_psn_add(l->start, ROCE_PSN_MASK);
	default:
		return roce_psn_add(l->next, ROCE_PSN_MASK - (k - 4));
	}
}

static bool
build(const uint8_t *b, struct fz_frame *f, int *ci, int *si, bool *to_server)
{
	struct fz_target t = fz_target(b, W.c, W.rprm.ring, ci, si);
	int op = b[0] % FZ_OP_NUM;
	const struct rmp_lane *l;
	int k;

	if (is_response_op(op) && !(b[1] & 0x40) && *si < NRSRV) {
		k = bound_lane(*ci, *si);
		if (k < 0)
			k = W.r->servers[*si].first_lane +
			    (b[1] >> 7) % W.r->servers[*si].n_lanes;
		l = lane_at(k);
		if (l != NULL && l->srv_qpn != 0) {
			t.down.dst_ip = l->cl_ip;
			t.down.dest_qpn = l->cl_qpn;
			t.srv = &W.lane_side[k];
			t.resp_psn = lane_psn(l, b[5]);
		}
	}
	return fz_build(b, &t, f, to_server);
}

/* ------------------------------------------------------------------ */
/* state a bad frame must not change */

struct snap {
	struct rmp_lane *lanes;
	struct rmp_stub *stubs;
	struct rmp_conn *conns;
	struct rmp_rev *rev;
	uint32_t *wait;
	struct remap_counters c;
	struct fz_rc_snap rc;
};

static size_t
n_stubs(void)
{
	return (size_t)W.r->n_lanes * W.rprm.ring;
}

/* counters that count the frames a bad one may be */
FUZZ_ORACLE static void
counters_masked(struct remap_counters *c)
{
	*c = *remap_counters(W.r);
	c->req_seen = c->resp_seen = c->bad_icrc_dropped = c->resp_bad_icrc = 0;
	c->unbound_direct = c->before_binding = c->dead_lane_dropped = 0;
	c->start_held = c->resp_orphan = 0;
}

FUZZ_ORACLE static void
snap_take(struct snap *n)
{
	uint32_t cap = rc_capacity(W.rc);

	n->lanes = fz_dup(W.r->lanes, W.r->n_lanes * sizeof(*n->lanes));
	n->stubs = fz_dup(W.r->stub_mem, n_stubs() * sizeof(*n->stubs));
	n->conns = fz_dup(W.r->conns, cap * sizeof(*n->conns));
	n->rev = fz_dup(W.r->rev_mem, (size_t)cap * W.rprm.client_ring * sizeof(*n->rev));
	n->wait = fz_dup(W.r->wait_mem, (size_t)W.r->n_lanes * cap * sizeof(*n->wait));
	counters_masked(&n->c);
	fz_rc_snap_take(&n->rc, W.rc);
}

FUZZ_ORACLE static void
snap_same_free(struct snap *n, const uint8_t *f, uint32_t len)
{
	uint32_t cap = rc_capacity(W.rc);
	struct remap_counters c;

	counters_masked(&c);
	REF_ASSERT(memcmp(n->lanes, W.r->lanes, W.r->n_lanes * sizeof(*n->lanes)) == 0,
		   "bad frame changed a lane", f, len);
	REF_ASSERT(memcmp(n->stubs, W.r->stub_mem, n_stubs() * sizeof(*n->stubs)) == 0,
		   "bad frame changed a stub", f, len);
	REF_ASSERT(memcmp(n->conns, W.r->conns, cap * sizeof(*n->conns)) == 0,
		   "bad frame changed remapping's view of a connection", f, len);
	REF_ASSERT(memcmp(n->rev, W.r->rev_mem,
			  (size_t)cap * W.rprm.client_ring * sizeof(*n->rev)) == 0,
		   "bad frame changed a reverse-index entry", f, len);
	REF_ASSERT(memcmp(n->wait, W.r->wait_mem,
			  (size_t)W.r->n_lanes * cap * sizeof(*n->wait)) == 0,
		   "bad frame changed a wait queue", f, len);
	REF_ASSERT(memcmp(&n->c, &c, sizeof(c)) == 0, "bad frame moved a counter", f, len);
	fz_rc_snap_same(&n->rc, W.rc, f, len);
	free(n->lanes);
	free(n->stubs);
	free(n->conns);
	free(n->rev);
	free(n->wait);
	fz_rc_snap_free(&n->rc);
}

/* ------------------------------------------------------------------ */
/* I2 on a lane, from what left swordd */

/* A READ's lane PSNs, in the path MTU remapping counts that server's
 * spans in at the moment (it learns it from frames: lib/remap README; its
 * tests judge the learning, this judges the lane's PSNs given it). */
static uint32_t
span_of(const uint8_t *f, const struct roce_pkt *p)
{
	int s = rmp_server_of(W.r, p->dst_ip4);
	uint32_t dlen, pmtu = s >= 0 ? W.r->servers[s].pmtu : W.rprm.pmtu;

	if (p->opcode != ROCE_RC_READ_REQUEST)
		return 1;
	dlen = roce_ld32(f + p->bth_off + ROCE_BTH_LEN + 12);
	return dlen ? (dlen + pmtu - 1) / pmtu : 1;
}

/* The log of lane k, started afresh when the lane has a new life. */
static struct lane_log *
log_of(int k)
{
	const struct rmp_lane *l = &W.r->lanes[k];
	struct lane_log *g = &W.log[k];

	if (g->owner != l->owner || g->owner_inc != l->owner_inc) {
		/* kept for its riders after its owner left (remap_cm.c): the
		 * same server QP, the same life */
		if (!(l->kept && l->owner == RMP_NONE)) {
			g->epoch = ++epoch;
			g->started = g->tainted = false;
		}
		g->owner = l->owner;
		g->owner_inc = l->owner_inc;
	}
	return g;
}

/*
 * A client's request sent again on lane k: does the rest of its span
 * match its original's?  A READ resent with a span other than what is
 * left of its original's (the script's READs need not keep their length)
 * breaks the client's own PSN space, and swordd follows the frame (its
 * recovery too, and the fillers that go before it): the lane is not
 * judged on.
 */
FUZZ_ORACLE static void
resend_span(int k, const uint8_t *out, const struct roce_pkt *p, uint32_t cl_ip,
	    uint32_t cl_qpn, uint32_t cpsn)
{
	struct lane_log *g = log_of(k);
	uint32_t span = span_of(out, p);

	if (!g->started || roce_psn_diff(p->psn, g->next) >= 0)
		return;
	for (uint32_t q = 1; q < span; q++) {
		const struct log_ent *e = &logent[k][roce_psn_add(p->psn, q) % LOG_RING];

		if (e->epoch != g->epoch || e->psn != roce_psn_add(p->psn, q) ||
		    e->cl_ip != cl_ip || e->cl_qpn != cl_qpn ||
		    e->cpsn != roce_psn_add(cpsn, q))
			g->tainted = true;
	}
}

/* Lane k carried a frame at lane PSN psn: a client's (cl_ip, cl_qpn: its
 * own server QPN, cpsn) or, cl_qpn 0, swordd's filler. */
FUZZ_ORACLE static void
lane_sent(int k, const uint8_t *out, const struct roce_pkt *p, uint32_t cl_ip,
	  uint32_t cl_qpn, uint32_t cpsn)
{
	struct lane_log *g = log_of(k);
	uint32_t span = span_of(out, p);
	struct log_ent *e;

	if (g->tainted)
		return;
	if (!g->started) {
		/* a moved lane may start with a filler: the NAKed PSN */
		REF_ASSERT(p->psn == W.r->lanes[k].start && (cl_qpn != 0 || W.r->lanes[k].moved),
			   "I2: a lane's first request is not at its start", out, p->frame_len);
		g->started = true;
		g->next = p->psn;
	}
	/* a new lane PSN (a filler too: for a request held back and never
	 * sent, whose client is gone) */
	if (roce_psn_diff(p->psn, g->next) >= 0) {
		REF_ASSERT(p->psn == g->next, "I2: a gap in a lane's PSNs", out, p->frame_len);
		for (uint32_t q = 0; q < span; q++) {
			e = &logent[k][roce_psn_add(p->psn, q) % LOG_RING];
			*e = (struct log_ent){ .epoch = g->epoch, .psn = roce_psn_add(p->psn, q),
				.cl_ip = cl_ip, .cl_qpn = cl_qpn, .cpsn = roce_psn_add(cpsn, q) };
		}
		g->next = roce_psn_add(p->psn, span);
		return;
	}
	/* sent again: its first PSN must be the same request's */
	e = &logent[k][p->psn % LOG_RING];
	if (e->epoch != g->epoch || e->psn != p->psn)
		return;
	if (cl_qpn == 0) {          /* filled: nobody sends it again */
		e->cl_qpn = 0;
		return;
	}
	REF_ASSERT(e->cl_qpn != 0, "I2: a client request at a lane PSN swordd filled",
		   out, p->frame_len);
	REF_ASSERT(e->cl_ip == cl_ip && e->cl_qpn == cl_qpn && e->cpsn == cpsn,
		   "I2: a lane PSN sent again for another request", out, p->frame_len);
}

/* A response at lane PSN psn of lane k: no real server answers a PSN the
 * lane never carried; if the script's does, the lane's I2 is not judged. */
static void
lane_answered(int k, uint32_t psn)
{
	struct lane_log *g = log_of(k);

	if (!g->started || roce_psn_diff(psn, g->next) >= 0)
		g->tainted = true;
}

/* ------------------------------------------------------------------ */
/* invariants after every call */

FUZZ_ORACLE static void
check_lanes(void)
{
	struct remap *r = W.r;
	uint32_t cap = rc_capacity(W.rc);

	for (uint32_t k = 0; k < r->n_lanes; k++) {
		const struct rmp_lane *l = &r->lanes[k];
		uint32_t bound = 0, holding = 0, reack = 0;

		for (uint32_t i = 0; i < cap; i++) {
			const struct rmp_conn *rcn = view_of(rc_at(W.rc, i));

			bound += rcn != NULL && rcn->state == RC_BOUND && rcn->lane == k;
		}
		for (uint32_t q = 0; q <= r->ring_mask; q++) {
			const struct rmp_stub *st = &l->stubs[q];

			if (st->kind == RK_EMPTY)
				continue;
			REF_ASSERT((st->lpsn & r->ring_mask) == q, "stub slot holds another PSN",
				   NULL, 0);
			holding += st->kind != RK_ACKABLE && (st->flags & RS_ENDS_MSG) &&
				   !(st->flags & RS_RELEASED);
			reack += (st->flags & RS_REACK) != 0;
		}
		REF_ASSERT(l->wait_n <= cap, "wait queue beyond the connection table", NULL, 0);
		REF_ASSERT(l->bound == bound, "clients on a lane counted wrong", NULL, 0);
		if (!l->open)
			continue;
		REF_ASSERT(roce_psn_diff(l->next, l->una) >= 0 &&
			   (uint32_t)roce_psn_diff(l->next, l->una) <= W.rprm.ring,
			   "lane PSNs outstanding beyond the stub ring", NULL, 0);
		REF_ASSERT(l->rd_out <= l->rd_max,
			   "READs/atomics outstanding beyond the responder resources", NULL, 0);
		REF_ASSERT(l->rd_out == holding,
			   "outstanding READs/atomics differ from the stubs holding one", NULL, 0);
		REF_ASSERT(l->reack >= reack, "re-ACKs due not counted", NULL, 0);
	}
	for (uint32_t i = 0; i < cap; i++) {
		const struct rmp_conn *rcn = view_of(rc_at(W.rc, i));

		for (uint32_t q = 0; rcn != NULL && q <= r->crev_mask; q++)
			REF_ASSERT(!rcn->rev[q].valid || (rcn->rev[q].cpsn & r->crev_mask) == q,
				   "reverse-index slot holds another PSN", NULL, 0);
	}
}

/* ------------------------------------------------------------------ */
/* one frame through the pipeline and its judgement */

/* A frame for a client: to a live connection, at a PSN it sent (a NAK
 * asking it to resend: at most its next); lane >= 0: one bound to it. */
FUZZ_ORACLE static void
check_to_client(const uint8_t *out, const struct roce_pkt *p, int lane)
{
	struct rc_conn *c = rc_find_resp(W.rc, p->src_ip4, p->dst_ip4, p->qpn);
	struct rmp_conn *rcn = view_of(c);
	const uint8_t syn = roce_has(p->oi, ROCE_HDR_AETH) ? roce_get_syndrome(out, p) : 0;
	bool nak = roce_has(p->oi, ROCE_HDR_AETH) && roce_syndrome_kind(syn) != ROCE_AETH_ACK;
	/* the server's fatal NAK, and the ACKs it implies before it: that
	 * client's QP fails, and the lane moved on without it (remap_move.c) */
	bool moved_off = rcn != NULL && rcn->state == RC_LOST && rcn->lane < W.r->n_lanes &&
			 W.r->lanes[rcn->lane].moved &&
			 (!nak || (roce_syndrome_kind(syn) == ROCE_AETH_NAK &&
				   roce_syndrome_value(syn) != ROCE_NAK_PSN_SEQ_ERR));

	REF_ASSERT(rcn != NULL && (rcn->state == RC_BOUND || moved_off),
		   "a lane's answer for no bound connection", out, p->frame_len);
	REF_ASSERT(lane < 0 || rcn->lane == (uint32_t)lane,
		   "a lane's answer for a client of another lane", out, p->frame_len);
	REF_ASSERT(roce_psn_diff(p->psn, rcn->bind_psn) >= 0 &&
		   roce_psn_diff(p->psn, rcn->next) < (nak ? 1 : 0),
		   "an answer at a PSN its client never sent on the lane", out, p->frame_len);
}

/* A frame to leave after the one of the call: only the ask to a drained
 * connection that found no lane (an RNR NAK at its drain point, on its
 * own QP: it is direct again, drained no more). */
FUZZ_ORACLE static void
check_drained_ask(const uint8_t *out, const struct roce_pkt *p)
{
	struct rc_conn *c = rc_find_resp(W.rc, p->src_ip4, p->dst_ip4, p->qpn);
	struct rmp_conn *rcn = view_of(c);

	REF_ASSERT(p->opcode == ROCE_RC_ACKNOWLEDGE &&
		   roce_syndrome_kind(roce_get_syndrome(out, p)) == ROCE_AETH_RNR_NAK,
		   "a frame to leave after is not an RNR NAK", out, p->frame_len);
	REF_ASSERT(rcn != NULL && rcn->state == RC_DIRECT && !rcn->draining &&
		   p->psn == rcn->drain_psn,
		   "an ask to resend for no drained direct connection", out, p->frame_len);
}

/* swordd's own failure NAK (remote operational error; a request or a
 * tick emits it, a response only maps the server's): only to a client of
 * a closed lane (or one it lost), at its oldest unanswered PSN, once. */
FUZZ_ORACLE static bool
check_dead_tell(const uint8_t *out, const struct roce_pkt *p)
{
	struct rc_conn *c;
	struct rmp_conn *rcn;

	if (p->opcode != ROCE_RC_ACKNOWLEDGE ||
	    roce_get_syndrome(out, p) != roce_syndrome_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_OP))
		return false;
	c = rc_find_resp(W.rc, p->src_ip4, p->dst_ip4, p->qpn);
	rcn = view_of(c);
	REF_ASSERT(rcn != NULL && rcn->dead_told && p->psn == rcn->acked &&
		   (rcn->state == RC_LOST ||
		    (rcn->state == RC_BOUND && !W.r->lanes[rcn->lane].open)),
		   "a failure NAK to a client whose lane lives", out, p->frame_len);
	return true;
}

/*
 * The RDMA CM messages remapping creates (remap_cm.c): to a server, only
 * a DREQ a client sent (held, now released); to a client, only the DREP
 * answering the DREQ of this very call (its sender, its communication IDs
 * swapped).
 */
FUZZ_ORACLE static void
check_cm_emit(const uint8_t *in, uint32_t len, const struct remap_emit *e,
	      const struct roce_pkt *p)
{
	struct rc_cm_msg m, mi;
	struct roce_pkt pi;
	uint8_t buf[FZ_FRAME_MAX];

	REF_ASSERT(rc_cm_parse(e->buf, p, &m) == 0 && !e->after,
		   "swordd sent a malformed CM message", e->buf, e->len);
	if (e->to_server) {
		REF_ASSERT(m.kind == RC_CM_DREQ && remap_is_server(W.r, p->dst_ip4),
			   "swordd sent a server a CM message other than a held DREQ",
			   e->buf, e->len);
		return;
	}
	REF_ASSERT(m.kind == RC_CM_DREP && in != NULL && len <= sizeof(buf),
		   "swordd sent a client a CM message other than a DREP", e->buf, e->len);
	memcpy(buf, in, len);
	REF_ASSERT(roce_parse(buf, len, &pi) == ROCE_OK && rc_cm_parse(buf, &pi, &mi) == 0 &&
		   mi.kind == RC_CM_DREQ && pi.src_ip4 == p->dst_ip4 &&
		   pi.dst_ip4 == p->src_ip4 && mi.local_comm_id == m.remote_comm_id &&
		   mi.remote_comm_id == m.local_comm_id,
		   "a DREP that does not answer the call's DREQ", e->buf, e->len);
}

/* Remapping's emitted frames, judged against the state remapping left
 * (before the serializer stacked behind it sees anything: it may age a
 * connection meanwhile). */
FUZZ_ORACLE static void
check_emitted(const uint8_t *in, uint32_t len, const struct remap_emit *e, uint32_t n,
	      int lane, bool response)
{
	struct roce_pkt p;
	uint32_t n_after = 0;

	fold(&n, sizeof(n));
	for (uint32_t k = 0; k < n; k++) {
		fold(&e[k].len, sizeof(e[k].len));
		fold(&e[k].to_server, sizeof(e[k].to_server));
		fold(&e[k].after, sizeof(e[k].after));
		fold(e[k].buf, e[k].len);
	}
	for (uint32_t k = 0; k < n; k++) {
		fz_check_frame(in, len, e[k].buf, e[k].len, false, &p);
		if (e[k].after) {
			REF_ASSERT(++n_after == 1 && !e[k].to_server,
				   "more than one frame to leave after", e[k].buf, e[k].len);
			check_drained_ask(e[k].buf, &p);
			continue;
		}
		if (rc_cm_is_cm(e[k].buf, &p)) {
			check_cm_emit(in, len, &e[k], &p);
			continue;
		}
		if (e[k].to_server) {
			int lk = lane_by_srv_qpn(p.dst_ip4, p.qpn);

			REF_ASSERT(p.opcode == ROCE_RC_WRITE_ONLY &&
				   roce_ld32(e[k].buf + p.bth_off + ROCE_BTH_LEN + 12) == 0 &&
				   lk >= 0, "swordd's request is not a zero-length WRITE on a lane",
				   e[k].buf, e[k].len);
			lane_sent(lk, e[k].buf, &p, 0, 0, 0);
			continue;
		}
		REF_ASSERT(p.oi->flags & ROCE_F_RESPONSE, "swordd sent a client a request",
			   e[k].buf, e[k].len);
		if (response || !check_dead_tell(e[k].buf, &p))
			check_to_client(e[k].buf, &p, lane);
	}
}

/* Stacked: remapping's client frames through the serializer, as swordd's
 * pipeline sends them. */
FUZZ_ORACLE static void
ser_emitted(const struct remap_emit *e, uint32_t n)
{
	static struct ser_emit sem[EMIT_MAX];
	static uint8_t buf[FZ_FRAME_MAX + 64];
	struct roce_pkt p;

	for (uint32_t k = 0; k < n && W.s != NULL; k++) {
		uint32_t l = e[k].len, n_sem = 0;
		enum ser_verdict v;

		if (e[k].to_server)
			continue;
		memcpy(buf, e[k].buf, l);
		if (roce_parse(buf, l, &p) != ROCE_OK)
			continue;
		v = ser_on_response(W.s, buf, &l, sizeof(buf), &p, W.now, sem, W.emit_cap,
				    &n_sem);
		if (v == SER_FORWARD_REWRITTEN)
			fz_check_frame(e[k].buf, e[k].len, buf, l, true, &p);
		for (uint32_t j = 0; j < n_sem; j++)
			fz_check_frame(e[k].buf, e[k].len, sem[j].buf, sem[j].len, false, &p);
	}
}

FUZZ_ORACLE static void
check_request_out(const uint8_t *in, uint32_t len, const struct roce_pkt *pin,
		  const uint8_t *out, uint32_t out_len)
{
	struct roce_pkt p;
	int k;

	fz_check_frame(in, len, out, out_len, true, &p);
	k = lane_by_srv_qpn(p.dst_ip4, p.qpn);
	REF_ASSERT(k >= 0 && p.dst_ip4 == pin->dst_ip4,
		   "a stitched request not on an open lane of its server", out, out_len);
	REF_ASSERT(p.src_ip4 == W.r->lanes[k].cl_ip && p.opcode == pin->opcode,
		   "a stitched request not from the lane's client address", out, out_len);
	lane_sent(k, out, &p, pin->src_ip4, pin->qpn, pin->psn);
}

static void
trace_call(const char *what, int ci, int si, const struct roce_pkt *p, bool good, int v,
	   uint32_t n_emit)
{
	fprintf(stderr, "t=%llu %s conn %d srv %d opcode 0x%02x qpn %#x psn %u%s -> "
		"verdict %d emit %u conns %u", (unsigned long long)W.now, what, ci, si,
		p->opcode, p->qpn, p->psn, good ? "" : " (bad ICRC)", v, n_emit,
		rc_count(W.rc));
	for (uint32_t k = 0; k < W.r->n_lanes; k++) {
		const struct rmp_lane *l = &W.r->lanes[k];

		if (l->srv_qpn)
			fprintf(stderr, " | L%u%s q%#x %u..%u rd%u/%u b%u w%u%s", k,
				l->open ? "" : "(closed)", l->srv_qpn, l->una, l->next,
				l->rd_out, l->rd_max, l->bound, l->wait_n,
				l->recovering ? " rec" : "");
	}
	fprintf(stderr, "\n");
}

FUZZ_ORACLE /* swordd killed between two frames and started again on its block */
static void
adopt_again(void)
{
	struct remap_params sp = W.rprm;
	struct remap_adopt_info ai;

	remap_destroy(W.r);
	sp.rc = W.rc;
	sp.state_mem = state_mem;
	sp.state_len = state_len;
	sp.state_adopt = true;
	sp.state_now = W.now;
	sp.rc_adopted = true;
	W.r = remap_create(&sp);
	if (W.r == NULL) {
		fprintf(stderr, "fuzz_remap: the block was not adopted: %s\n", strerror(errno));
		abort();
	}
	remap_adopt_info(W.r, &ai);
	if (ai.torn || ai.servers_given_up || ai.conns_given_up) {
		fprintf(stderr, "fuzz_remap: a block left between frames gave something up\n");
		abort();
	}
}

static void
call(const uint8_t *in, uint32_t len, bool to_server, int ci, int si, uint8_t b7,
     bool is_retransmit, uint64_t dt)
{
	static uint8_t buf[FZ_FRAME_MAX + 64], mid[FZ_FRAME_MAX + 64];
	static struct remap_emit emit[EMIT_MAX];
	static struct ser_emit sem[EMIT_MAX];
	struct roce_pkt p, p0, pm;
	struct ref_frame rf;
	struct snap n;
	enum remap_verdict v = REMAP_PASS;
	enum ser_verdict sv = SER_FORWARD;
	uint32_t l = len, cap = sizeof(buf), n_emit = 0, n_sem = 0, ml;
	bool as_req = to_server != ((b7 & 0x40) != 0);
	bool good;
	int lane = -1;

	if (adopt_each)
		adopt_again();
	/* time passed: the worker's tick runs before the frame comes */
	if (dt > 0) {
		remap_tick(W.r, W.now, emit, W.emit_cap, &n_emit);
		REF_ASSERT(n_emit <= W.emit_cap, "tick emits beyond capacity", in, len);
		check_emitted(in, len, emit, n_emit, -1, false);
		ser_emitted(emit, n_emit);
		n_emit = 0;
	}
	memcpy(buf, in, len);
	if (roce_parse(buf, len, &p) != ROCE_OK)
		return;         /* the worker counts it as malformed */
	p0 = p;
	good = ref_locate(in, len, &rf) && ref_icrc_ok(in, &rf);
	if (as_req && W.s != NULL)
		sv = ser_on_request(W.s, buf, &l, cap, &p, W.now);
	/* what remapping gets */
	ml = l;
	memcpy(mid, buf, l);
	pm = p;
	if (!good)
		snap_take(&n);
	if (as_req && sv != SER_DROP)
		v = remap_on_request(W.r, buf, &l, cap, &p, sv == SER_FORWARD_REWRITTEN,
				     W.now, emit, W.emit_cap, &n_emit);
	else if (!as_req) {
		lane = lane_by_client(p.src_ip4, p.dst_ip4, p.qpn);
		v = remap_on_response(W.r, buf, &l, cap, &p, false, W.now, emit, W.emit_cap,
				      &n_emit);
	}
	if (fz_trace)
		trace_call(as_req ? "req " : "resp", ci, si, &p0, good,
			   sv == SER_DROP ? -1 : (int)v, n_emit);
	REF_ASSERT(v == REMAP_PASS || v == REMAP_MODIFIED || v == REMAP_DROP, "verdict",
		   buf, l);
	fold(&v, sizeof(v));
	fold(&l, sizeof(l));
	fold(buf, l);
	REF_ASSERT(l <= cap && n_emit <= W.emit_cap, "length or emits beyond capacity",
		   buf, l);
	if (v == REMAP_PASS)
		REF_ASSERT(l == ml && memcmp(buf, mid, ml) == 0, "REMAP_PASS changed the frame",
			   buf, l);
	if (!good) {
		REF_ASSERT(v != REMAP_MODIFIED && n_emit == 0,
			   "frame with a bad ICRC rewritten or answered", buf, l);
		snap_same_free(&n, in, len);
	}
	if (!as_req && lane >= 0 && W.r->lanes[lane].open)
		lane_answered(lane, p0.psn);
	if (v == REMAP_MODIFIED && as_req) {
		struct roce_pkt q;
		int k;

		if (roce_parse(buf, l, &q) == ROCE_OK &&
		    (k = lane_by_srv_qpn(q.dst_ip4, q.qpn)) >= 0)
			resend_span(k, buf, &q, pm.src_ip4, pm.qpn, pm.psn);
	}
	check_emitted(mid, ml, emit, n_emit, lane, !as_req);
	if (v == REMAP_MODIFIED && as_req) {
		check_request_out(mid, ml, &pm, buf, l);
	} else if (v == REMAP_MODIFIED) {
		struct roce_pkt q;

		fz_check_frame(mid, ml, buf, l, true, &q);
		REF_ASSERT(q.src_ip4 == pm.src_ip4 && q.opcode == pm.opcode,
			   "a mapped response changed its source or opcode", buf, l);
		check_to_client(buf, &q, lane);
	}
	ser_emitted(emit, n_emit);
	/* the rest of the response path */
	if (!as_req && v != REMAP_DROP && W.s != NULL) {
		sv = ser_on_response(W.s, buf, &l, cap, &p, W.now, sem, W.emit_cap, &n_sem);
		for (uint32_t k = 0; k < n_sem; k++)
			fz_check_frame(in, len, sem[k].buf, sem[k].len, false, &pm);
		if (sv == SER_FORWARD_REWRITTEN)
			fz_check_frame(in, len, buf, l, false, &pm);
	}

	/* I6: an immediate retransmission is answered as the original was */
	fz_i6(&W.prev, ci, si, W.c[ci][si].hn, W.now,
	      is_retransmit && to_server && !(b7 & 0x40) && (b7 & 3) == 0 && good,
	      W.prev.v == REMAP_MODIFIED,
	      to_server && !(b7 & 0x40) && good && !is_retransmit && sv != SER_DROP,
	      in, len, v, buf, l);
	fz_check_table(W.rc);
	check_lanes();
}

static void
reset(uint8_t b7)
{
	if (b7 == 0xff) {       /* swordd restarts */
		destroy();
		create();
	}
	W.prev.valid = false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fz_driver d = { .setup = setup, .teardown = destroy,
		.now = &W.now, .reset = reset, .build = build, .call = call };

	uint64_t h;

	state_mode = getenv("FUZZ_REMAP_STATE") == NULL || getenv("FUZZ_REMAP_STATE")[0] != '0';
	adopt_each = false;
	general_only = false;
	out_hash = 0xcbf29ce484222325ull;
	fz_run(&d, data, size);
	h = out_hash;
	general_only = true;
	out_hash = 0xcbf29ce484222325ull;
	fz_run(&d, data, size);
	if (h != out_hash) {
		fprintf(stderr, "fuzz_remap: the common-case paths and the general "
			"steps let out different frames or counters\n");
		abort();
	}
	if (state_mode) {
		general_only = false;
		adopt_each = true;
		out_hash = 0xcbf29ce484222325ull;
		fz_run(&d, data, size);
		adopt_each = false;
		if (h != out_hash) {
			fprintf(stderr, "fuzz_remap: adopting the state block between frames "
				"changed what left\n");
			abort();
		}
	}
	return 0;
}
