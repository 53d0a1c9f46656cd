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
 * builds each frame with correct lengths, IPv4 checksum and ICRC (rm_build
 * from tests/serializer) so the fuzzer gets deep.
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
#include "rc_internal.h"
#include "rdma_model.h"
#include "roce.h"
#include "ser_internal.h"
#include "serializer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NIP 3
#define NQP 3
#define NCONN (NIP * NQP)
#define NSRV 3                 /* 0, 1 managed; 2 not */
#define HIST 4
#define FRAME_MAX 1600
#define REGION_WORDS 16
#define HARNESS_PMTU 1024      /* the script's idea of READ spans */
#define EMIT_MAX 32

static const uint32_t srv_ip[NSRV] = {
	RTE_BE32(0xc6120001), RTE_BE32(0xc6120002), RTE_BE32(0xc6120003),
};
static const uint64_t region_base[2] = { 0x10000, 0x20000 };
#define RKEY 0x2521

enum op {
	OP_CAS, OP_FAA, OP_MCAS, OP_WRITE, OP_WRITE_FIRST, OP_WRITE_MIDDLE,
	OP_WRITE_LAST, OP_READ, OP_SEND, OP_WRITE_IMM,
	OP_ACK, OP_NAK, OP_ATOMIC_ACK, OP_RR_FIRST, OP_RR_MIDDLE, OP_RR_LAST,
	OP_RR_ONLY,
	OP_CM_REQ, OP_CM_REP, OP_CM_DREQ, OP_CM_DREP, OP_CM_RTU,
	OP_RETRANSMIT, OP_RESEND_RESP, OP_RESET,
	OP_NUM
};

struct frame {
	uint32_t len;
	uint8_t buf[FRAME_MAX];
};

struct conn {
	uint32_t next;             /* next request PSN */
	uint32_t initial;
	uint32_t msn;
	struct frame hist[HIST];   /* last requests, as built (clean) */
	uint32_t hn;
	struct frame last_resp;
};

struct world {
	/* everything before c is cleared for each input */
	struct ser *s;
	struct ser_params prm;
	struct ser_region regions[2];
	uint64_t now;
	uint32_t cap_slack;        /* room past the frame given to the serializer */
	uint32_t emit_cap;
	/* I6: the previous call, if it was a request */
	struct {
		bool valid;
		int conn, srv;
		enum ser_verdict v;
		uint32_t hn;
		struct frame in, out;
	} prev;
	struct conn c[NCONN][NSRV];
};

static struct world W;
static bool trace;      /* FUZZ_TRACE=1: print every call (for triage) */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	roce_crc_init();
	trace = getenv("FUZZ_TRACE") != NULL;
	return 0;
}

static uint32_t
cl_ip(int i)
{
	return rte_cpu_to_be_32(0xc6120010u + (uint32_t)(i / NQP));
}

static uint32_t
cl_qpn(int i, int srv)
{
	return 0x200u + (uint32_t)i + 0x20u * (uint32_t)srv;
}

static uint32_t
srv_qpn(int i, int srv)
{
	return 0x100u + (uint32_t)i + 0x20u * (uint32_t)srv;
}

static struct rm_addr
addr(int i, int srv, bool to_server)
{
	struct rm_addr a = { 0 };
	uint8_t cm[6] = { 2, 0, 0, 0, 1, (uint8_t)(i / NQP) };
	uint8_t sm[6] = { 2, 0, 0, 0, 2, (uint8_t)srv };

	if (to_server) {
		memcpy(a.src_mac, cm, 6);
		memcpy(a.dst_mac, sm, 6);
		a.src_ip = cl_ip(i);
		a.dst_ip = srv_ip[srv];
		a.dest_qpn = srv_qpn(i, srv);
	} else {
		memcpy(a.src_mac, sm, 6);
		memcpy(a.dst_mac, cm, 6);
		a.src_ip = srv_ip[srv];
		a.dst_ip = cl_ip(i);
		a.dest_qpn = cl_qpn(i, srv);
	}
	return a;
}

static const uint64_t vals[8] = {
	0, 1, 2, 3, UINT64_MAX, 0x8000000000000000ull, 0x100, 0xdeadbeef,
};
static const uint64_t masks[4] = { UINT64_MAX, 1, 0x80, 0xff00 };

/* ------------------------------------------------------------------ */
/* the script */

static uint32_t
pick_psn(uint32_t base, uint32_t initial, uint8_t b)
{
	uint32_t ring = W.prm.ring_size;

	if (b < 0x80)
		return base & ROCE_PSN_MASK;
	if (b < 0xc0)
		return (base + (uint32_t)(b & 0x3f) - 32) & ROCE_PSN_MASK;
	switch (b >> 4) {
	case 0xc:
		return (base + ring + (b & 15u)) & ROCE_PSN_MASK;
	case 0xd:
		return (base - ring - 1 - (b & 15u) * ring) & ROCE_PSN_MASK;
	case 0xe:
		return (initial + (b & 15u) - 8) & ROCE_PSN_MASK;
	default:
		return (base + 0x800000u + (b & 15u) - 8) & ROCE_PSN_MASK;
	}
}

static uint64_t
pick_va(int srv, uint8_t b)
{
	uint64_t base = region_base[srv == 1];
	uint32_t w = b & 15u;

	if (w < 14)
		return base + 8ull * w;
	if (w == 14)
		return base + 8ull * (b >> 4 & 7) + 3;       /* misaligned */
	return base + 8ull * REGION_WORDS + 8ull * (b >> 4 & 7); /* outside */
}

static uint32_t
pick_rkey(uint8_t b3)
{
	return (b3 & 0x10) ? 0x9999 : RKEY;
}

/* A CM MAD (IBTA 12.6) of attribute attr, fields at rc_cm.c's offsets. */
static uint32_t
build_cm(uint8_t *out, int i, int srv, bool from_client, uint16_t attr,
	 uint32_t local_id, uint32_t remote_id, uint32_t qpn, uint32_t psn,
	 uint8_t rr, uint8_t depth)
{
	struct rm_addr a = addr(i, srv, from_client);
	uint8_t deth[8], mad[256] = { 0 };

	a.dest_qpn = 1;
	roce_st32(deth, 0x80010000u);
	roce_st32(deth + 4, 1);
	mad[0] = 1;
	mad[1] = 7;             /* management class: CM */
	mad[2] = 2;
	mad[3] = 3;
	roce_st16(mad + 16, attr);
	roce_st32(mad + 24, local_id);
	roce_st32(mad + 28, remote_id);
	switch (attr) {
	case 0x0010:            /* REQ */
		mad[56] = (uint8_t)(qpn >> 16);
		mad[57] = (uint8_t)(qpn >> 8);
		mad[58] = (uint8_t)qpn;
		mad[59] = rr;
		mad[63] = depth;
		mad[68] = (uint8_t)(psn >> 16);
		mad[69] = (uint8_t)(psn >> 8);
		mad[70] = (uint8_t)psn;
		break;
	case 0x0013:            /* REP */
		mad[36] = (uint8_t)(qpn >> 16);
		mad[37] = (uint8_t)(qpn >> 8);
		mad[38] = (uint8_t)qpn;
		mad[44] = (uint8_t)(psn >> 16);
		mad[45] = (uint8_t)(psn >> 8);
		mad[46] = (uint8_t)psn;
		mad[48] = rr;
		mad[49] = depth;
		break;
	case 0x0015:            /* DREQ */
		mad[32] = (uint8_t)(qpn >> 16);
		mad[33] = (uint8_t)(qpn >> 8);
		mad[34] = (uint8_t)qpn;
		break;
	default:
		break;
	}
	return rm_build(out, &a, ROCE_UD_SEND_ONLY, psn, false, deth, 8, mad, 256);
}

static uint32_t
aeth_of(uint8_t syn, uint32_t msn)
{
	return ((uint32_t)syn << 24) | (msn & ROCE_PSN_MASK);
}

/*
 * Build step b's frame into f.  *to_server says which side sends it.
 * Returns false if the step sends nothing.
 */
static bool
build(const uint8_t *b, struct frame *f, int *ci, int *si, bool *to_server)
{
	int op = b[0] % OP_NUM, i = (b[1] & 15) % NCONN, srv = (b[1] >> 4 & 3) % NSRV;
	struct conn *c = &W.c[i][srv];
	struct rm_addr up = addr(i, srv, true), down = addr(i, srv, false);
	uint8_t ext[64], pl[1100];
	uint32_t psn, plen, dlen, span = 1;
	uint64_t va = pick_va(srv, b[3]);
	bool ackreq = b[4] & 1;

	*ci = i;
	*si = srv;
	*to_server = op < OP_ACK || op == OP_CM_REQ || op == OP_CM_DREQ ||
		     op == OP_CM_RTU;
	memset(pl, 0xa5, sizeof(pl));
	psn = pick_psn(*to_server ? c->next : c->next - 1, c->initial, b[2]);
	switch (op) {
	case OP_CAS:
	case OP_FAA:
	case OP_MCAS:
		roce_st64(ext, va);
		roce_st32(ext + 8, pick_rkey(b[3]));
		roce_st64(ext + 12, vals[b[5] & 7]);
		roce_st64(ext + 20, vals[b[5] >> 3 & 7]);
		if (op == OP_MCAS) {
			roce_st64(ext + 28, masks[b[6] & 3]);
			roce_st64(ext + 36, masks[b[6] >> 2 & 3]);
		}
		f->len = rm_build(f->buf, &up, op == OP_CAS ? ROCE_RC_COMPARE_SWAP :
				  op == OP_FAA ? ROCE_RC_FETCH_ADD :
				  ROCE_RC_MASKED_COMPARE_SWAP, psn, true, ext,
				  op == OP_MCAS ? 44 : 28, NULL, 0);
		break;
	case OP_WRITE:
	case OP_WRITE_FIRST:
	case OP_WRITE_IMM: {
		static const uint32_t sizes[4] = { 8, 16, 4, 0 };

		dlen = sizes[b[3] >> 5 & 3];
		plen = (b[3] & 0x80) && dlen ? dlen / 2 : dlen;  /* mismatched */
		if (op == OP_WRITE_FIRST)
			dlen += HARNESS_PMTU;
		roce_st64(ext, va);
		roce_st32(ext + 8, pick_rkey(b[3]));
		roce_st32(ext + 12, dlen);
		roce_st32(ext + 16, 0x11223344);        /* ImmDt */
		roce_st64(pl, vals[b[5] & 7]);
		f->len = rm_build(f->buf, &up, op == OP_WRITE ? ROCE_RC_WRITE_ONLY :
				  op == OP_WRITE_FIRST ? ROCE_RC_WRITE_FIRST :
				  ROCE_RC_WRITE_ONLY_IMM, psn, ackreq, ext,
				  op == OP_WRITE_IMM ? 20 : 16, pl, plen);
		break;
	}
	case OP_WRITE_MIDDLE:
	case OP_WRITE_LAST:
		f->len = rm_build(f->buf, &up, op == OP_WRITE_MIDDLE ?
				  ROCE_RC_WRITE_MIDDLE : ROCE_RC_WRITE_LAST, psn,
				  ackreq, NULL, 0, pl, 8u * (b[5] & 3));
		break;
	case OP_READ: {
		static const uint32_t sizes[4] = { 8, 64, 3000, 0 };

		dlen = sizes[b[3] >> 5 & 3];
		span = dlen ? (dlen + HARNESS_PMTU - 1) / HARNESS_PMTU : 1;
		roce_st64(ext, va);
		roce_st32(ext + 8, pick_rkey(b[3]));
		roce_st32(ext + 12, dlen);
		f->len = rm_build(f->buf, &up, ROCE_RC_READ_REQUEST, psn, true, ext, 16,
				  NULL, 0);
		break;
	}
	case OP_SEND:
		f->len = rm_build(f->buf, &up, ROCE_RC_SEND_ONLY, psn, ackreq, NULL, 0,
				  pl, 4u * (b[5] & 7));
		break;
	case OP_ACK:
	case OP_NAK: {
		uint8_t syn = roce_syndrome_make(ROCE_AETH_ACK, 31);

		c->msn = (c->msn + (uint32_t)(b[5] & 7) - 2) & ROCE_PSN_MASK;
		if (op == OP_NAK) {
			switch (b[7] & 7) {
			case 5:
				syn = roce_syndrome_make(ROCE_AETH_RNR_NAK, b[7] >> 3);
				break;
			case 6:
				syn = roce_syndrome_make(ROCE_AETH_RESERVED, b[7] >> 3);
				break;
			case 7:
				syn = roce_syndrome_make(ROCE_AETH_ACK, b[7] >> 3);
				break;
			default:
				syn = roce_syndrome_make(ROCE_AETH_NAK, b[7] & 7);
			}
		}
		roce_st32(ext, aeth_of(syn, c->msn));
		f->len = rm_build(f->buf, &down, ROCE_RC_ACKNOWLEDGE, psn, false, ext, 4,
				  NULL, 0);
		break;
	}
	case OP_ATOMIC_ACK:
		c->msn = (c->msn + (uint32_t)(b[5] & 7) - 2) & ROCE_PSN_MASK;
		roce_st32(ext, aeth_of(roce_syndrome_make(ROCE_AETH_ACK, 31), c->msn));
		roce_st64(ext + 4, vals[b[6] & 7]);
		f->len = rm_build(f->buf, &down, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, false,
				  ext, 12, NULL, 0);
		break;
	case OP_RR_FIRST:
	case OP_RR_MIDDLE:
	case OP_RR_LAST:
	case OP_RR_ONLY: {
		static const uint32_t sizes[4] = { 8, 64, 1024, 0 };
		static const uint8_t opc[4] = {
			ROCE_RC_READ_RESPONSE_FIRST, ROCE_RC_READ_RESPONSE_MIDDLE,
			ROCE_RC_READ_RESPONSE_LAST, ROCE_RC_READ_RESPONSE_ONLY,
		};

		if (op != OP_RR_MIDDLE)
			c->msn = (c->msn + (uint32_t)(b[5] & 7) - 2) & ROCE_PSN_MASK;
		roce_st32(ext, aeth_of(roce_syndrome_make(ROCE_AETH_ACK, 31), c->msn));
		roce_st64(pl, vals[b[6] & 7]);
		f->len = rm_build(f->buf, &down, opc[op - OP_RR_FIRST], psn, false, ext,
				  op == OP_RR_MIDDLE ? 0 : 4, pl, sizes[b[3] >> 5 & 3]);
		break;
	}
	case OP_CM_REQ:
	case OP_CM_REP:
	case OP_CM_DREQ:
	case OP_CM_DREP:
	case OP_CM_RTU: {
		/* bit 0 of b7: the server is the active side */
		bool srv_active = b[7] & 1;
		uint32_t cid = 0x1000u + (uint32_t)i, sid = 0x2000u + (uint32_t)srv;
		uint32_t wrong = (b[7] & 2) ? 0x77 : 0;

		if (op == OP_CM_REQ) {
			*to_server = !srv_active;
			f->len = build_cm(f->buf, i, srv, !srv_active, 0x0010,
					  srv_active ? sid : cid, 0,
					  srv_active ? srv_qpn(i, srv) : cl_qpn(i, srv),
					  psn, b[5], b[6]);
		} else if (op == OP_CM_REP) {
			*to_server = srv_active;
			f->len = build_cm(f->buf, i, srv, srv_active, 0x0013,
					  srv_active ? cid : sid,
					  (srv_active ? sid : cid) ^ wrong,
					  srv_active ? cl_qpn(i, srv) : srv_qpn(i, srv),
					  psn, b[5], b[6]);
			/* the client sends from the REP's starting PSN */
			if (!srv_active)
				c->next = psn;
		} else {
			bool from_client = !(b[7] & 4);
			uint16_t attr = op == OP_CM_DREQ ? 0x0015 :
					op == OP_CM_DREP ? 0x0016 : 0x0014;

			/* bit 3 of b7: a REJ or an attribute CM does not use */
			if (b[7] & 8)
				attr = (b[7] & 0x10) ? 0x0012 : 0x0099;

			*to_server = from_client;
			f->len = build_cm(f->buf, i, srv, from_client, attr,
					  from_client ? cid : sid, from_client ? sid : cid,
					  (from_client ? srv_qpn(i, srv) : cl_qpn(i, srv)) ^ wrong,
					  psn, 0, 0);
		}
		return true;
	}
	case OP_RETRANSMIT: {
		const struct frame *h = &c->hist[(c->hn + HIST - 1 - (b[7] & 3)) % HIST];

		if (h->len == 0)
			return false;
		f->len = h->len;
		memcpy(f->buf, h->buf, h->len);
		*to_server = true;
		return true;
	}
	case OP_RESEND_RESP:
		if (c->last_resp.len == 0)
			return false;
		f->len = c->last_resp.len;
		memcpy(f->buf, c->last_resp.buf, f->len);
		*to_server = false;
		return true;
	default:
		return false;
	}
	if (*to_server) {
		c->next = (psn + span) & ROCE_PSN_MASK;
		c->hn = (c->hn + 1) % HIST;
		c->hist[(c->hn + HIST - 1) % HIST].len = f->len;
		memcpy(c->hist[(c->hn + HIST - 1) % HIST].buf, f->buf, f->len);
	} else {
		c->last_resp.len = f->len;
		memcpy(c->last_resp.buf, f->buf, f->len);
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* state the serializer must not change on a bad frame */

struct snap {
	struct ser_word *words;
	struct ser_conn *conns;
	struct ser_stub *stubs;
	struct rc_table rt;
	struct rc_conn *rconns;
	uint32_t *req_map, *resp_map;
	struct ser_counters c;
};

static size_t
n_stubs(void)
{
	return (size_t)W.prm.max_conns * W.prm.ring_size;
}

FUZZ_ORACLE static void
snap_alloc(struct snap *n)
{
	const struct rc_table *t = W.s->rc;

	n->words = malloc(W.s->n_words * sizeof(*n->words));
	n->conns = malloc(W.prm.max_conns * sizeof(*n->conns));
	n->stubs = malloc(n_stubs() * sizeof(*n->stubs));
	n->rconns = malloc(t->prm.max_conns * sizeof(*n->rconns));
	n->req_map = malloc((t->map_mask + 1) * sizeof(uint32_t));
	n->resp_map = malloc((t->map_mask + 1) * sizeof(uint32_t));
	if (!n->words || !n->conns || !n->stubs || !n->rconns || !n->req_map ||
	    !n->resp_map)
		abort();
}

FUZZ_ORACLE static void
snap_free(struct snap *n)
{
	free(n->words);
	free(n->conns);
	free(n->stubs);
	free(n->rconns);
	free(n->req_map);
	free(n->resp_map);
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
	const struct rc_table *t = W.s->rc;

	memcpy(n->words, W.s->words, W.s->n_words * sizeof(*n->words));
	memcpy(n->conns, W.s->conns, W.prm.max_conns * sizeof(*n->conns));
	memcpy(n->stubs, W.s->stubs, n_stubs() * sizeof(*n->stubs));
	n->rt = *t;
	memcpy(n->rconns, t->conns, t->prm.max_conns * sizeof(*n->rconns));
	memcpy(n->req_map, t->req_map, (t->map_mask + 1) * sizeof(uint32_t));
	memcpy(n->resp_map, t->resp_map, (t->map_mask + 1) * sizeof(uint32_t));
	counters_masked(&n->c);
}

FUZZ_ORACLE static void
snap_same(const struct snap *n, const uint8_t *f, uint32_t len)
{
	const struct rc_table *t = W.s->rc;
	struct ser_counters c;

	counters_masked(&c);
	REF_ASSERT(memcmp(n->words, W.s->words, W.s->n_words * sizeof(*n->words)) == 0,
		   "bad frame changed a word", f, len);
	REF_ASSERT(memcmp(n->conns, W.s->conns, W.prm.max_conns * sizeof(*n->conns)) == 0,
		   "bad frame changed a connection's state", f, len);
	REF_ASSERT(memcmp(n->stubs, W.s->stubs, n_stubs() * sizeof(*n->stubs)) == 0,
		   "bad frame changed a stub", f, len);
	REF_ASSERT(memcmp(&n->rt, t, sizeof(*t)) == 0,
		   "bad frame changed the connection table", f, len);
	REF_ASSERT(memcmp(n->rconns, t->conns, t->prm.max_conns * sizeof(*n->rconns)) == 0,
		   "bad frame created, paired or aged a connection", f, len);
	REF_ASSERT(memcmp(n->req_map, t->req_map, (t->map_mask + 1) * 4) == 0 &&
		   memcmp(n->resp_map, t->resp_map, (t->map_mask + 1) * 4) == 0,
		   "bad frame changed a connection map", f, len);
	REF_ASSERT(memcmp(&n->c, &c, sizeof(c)) == 0,
		   "bad frame moved a counter", f, len);
}

/* ------------------------------------------------------------------ */
/* invariants after every call */

FUZZ_ORACLE static void
check_table(void)
{
	struct rc_table *t = W.s->rc;
	uint32_t live = 0, paired = 0, m_req = 0, m_resp = 0;

	REF_ASSERT(rc_count(t) <= rc_capacity(t), "connection table overfull", NULL, 0);
	for (uint32_t i = 0; i < rc_capacity(t); i++) {
		struct rc_conn *c = rc_at(t, i);

		if (c == NULL)
			continue;
		live++;
		REF_ASSERT(rc_find_req(t, c->cl_ip, c->srv_ip, c->srv_qpn) == c,
			   "live connection not found by its request key", NULL, 0);
		if (c->paired) {
			paired++;
			REF_ASSERT(rc_find_resp(t, c->srv_ip, c->cl_ip, c->cl_qpn) == c,
				   "paired connection not found by its response key", NULL, 0);
		}
		for (uint32_t j = 0; j < i; j++) {
			struct rc_conn *d = rc_at(t, j);

			if (d == NULL)
				continue;
			REF_ASSERT(!(d->cl_ip == c->cl_ip && d->srv_ip == c->srv_ip &&
				     d->srv_qpn == c->srv_qpn),
				   "two connections with one request key", NULL, 0);
			REF_ASSERT(!(c->paired && d->paired && d->cl_ip == c->cl_ip &&
				     d->srv_ip == c->srv_ip && d->cl_qpn == c->cl_qpn),
				   "two connections with one response key", NULL, 0);
		}
	}
	for (uint32_t i = 0; i <= t->map_mask; i++) {
		m_req += t->req_map[i] != 0;
		m_resp += t->resp_map[i] != 0;
	}
	REF_ASSERT(live == rc_count(t) && m_req == live && m_resp == paired,
		   "connection maps out of step with the slots", NULL, 0);
}

FUZZ_ORACLE static void
check_words(void)
{
	struct ser *s = W.s;
	uint32_t busy[2 * REGION_WORDS] = { 0 }, pend[2 * REGION_WORDS] = { 0 };

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
	struct ref_frame ri, ro;
	const char *bad = ref_check_frame(out, out_len);

	if (bad != NULL)
		ref_fail(__FILE__, __LINE__, bad, out, out_len);
	REF_ASSERT(roce_parse(out, out_len, &p) == ROCE_OK, "output does not parse",
		   out, out_len);
	REF_ASSERT(ref_locate(in, in_len, &ri) && ref_locate(out, out_len, &ro), "locate",
		   out, out_len);
	REF_ASSERT(ref_udp_cksum_state(out, &ro) == (ref_udp_cksum_state(in, &ri) != 0),
		   "UDP checksum not kept as the sender chose", out, out_len);
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
	static uint8_t buf[FRAME_MAX + 64];
	static struct ser_emit emit[EMIT_MAX];
	struct roce_pkt p, p0;
	struct ref_frame r;
	struct snap n;
	enum ser_verdict v;
	uint32_t l = len, cap = len + W.cap_slack, n_emit = 0;
	bool as_req = to_server != ((b7 & 0x40) != 0);
	bool good;

	memcpy(buf, in, len);
	if (roce_parse(buf, len, &p) != ROCE_OK)
		return;         /* the worker counts it as malformed */
	p0 = p;
	good = ref_locate(in, len, &r) && ref_icrc_ok(in, &r);
	if (!good) {
		snap_alloc(&n);
		snap_take(&n);
	}
	/* bit 6 of b7: hand it to the other direction's entry point */
	if (as_req)
		v = ser_on_request(W.s, buf, &l, cap, &p, W.now);
	else
		v = ser_on_response(W.s, buf, &l, cap, &p, W.now, emit, W.emit_cap,
				    &n_emit);
	if (trace) {
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
		snap_same(&n, in, len);
		snap_free(&n);
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
	if (is_retransmit && dt == 0 && to_server && !(b7 & 0x40) && (b7 & 3) == 0 &&
	    good && W.prev.valid && W.prev.conn == ci && W.prev.srv == si &&
	    W.prev.hn == W.c[ci][si].hn && W.prev.v != SER_DROP &&
	    W.prev.in.len == len && memcmp(W.prev.in.buf, in, len) == 0) {
		REF_ASSERT(v == W.prev.v && l == W.prev.out.len &&
			   memcmp(buf, W.prev.out.buf, l) == 0,
			   "retransmission answered differently", buf, l);
	}
	W.prev.valid = to_server && !(b7 & 0x40) && good && !is_retransmit;
	if (W.prev.valid) {
		W.prev.conn = ci;
		W.prev.srv = si;
		W.prev.v = v;
		W.prev.hn = W.c[ci][si].hn;
		W.prev.out.len = l;
		memcpy(W.prev.out.buf, buf, l);
		W.prev.in.len = len;
		memcpy(W.prev.in.buf, in, len);
	}
	check_table();
	check_words();
}

/* ------------------------------------------------------------------ */

static const uint64_t dts[16] = {
	0, 0, 0, 0, 1, 1, 10, 100, 1000, 1000, 10000, 100000, 1000000, 1000000,
	10000000, 100000000,
};

static int
setup(const uint8_t h0, const uint8_t h1)
{
	static const uint32_t refusals[4] = { 0, 1, 4, 16 };

	memset(&W, 0, offsetof(struct world, c));
	W.regions[0] = (struct ser_region){ .server_ip4 = srv_ip[0], .rkey = RKEY,
		.base = region_base[0], .len = 8 * REGION_WORDS };
	W.regions[1] = (struct ser_region){ .server_ip4 = srv_ip[1], .rkey = RKEY,
		.any_rkey = (h1 & 0x40) != 0, .base = region_base[1],
		.len = 8 * REGION_WORDS };
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
	};
	W.s = ser_create(&W.prm);
	if (W.s == NULL)
		abort();
	W.prm = W.s->prm;       /* with its defaults filled in */
	W.emit_cap = (h0 & 0x40) ? 2 : EMIT_MAX;
	W.cap_slack = (h1 & 4) ? 0 : 64;
	W.now = 1000;
	for (int i = 0; i < NCONN; i++)
		for (int s = 0; s < NSRV; s++) {
			uint32_t start;

			switch (h1 & 3) {
			case 0:
				start = 3185;   /* Sherman: every QP alike */
				break;
			case 1:
				start = 0xfffff0u + (uint32_t)(i * 3 + s);
				break;
			case 2:
				start = (uint32_t)(i * NSRV + s) * 0x9e3779b1u;
				break;
			default:
				start = 0;
			}
			W.c[i][s].next = W.c[i][s].initial = start & ROCE_PSN_MASK;
			W.c[i][s].msn = 0;
			W.c[i][s].hn = 0;
			W.c[i][s].last_resp.len = 0;
			for (int k = 0; k < HIST; k++)
				W.c[i][s].hist[k].len = 0;
		}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct frame f;

	if (size < 2)
		return 0;
	setup(data[0], data[1]);
	for (size_t at = 2; at + 8 <= size; at += 8) {
		const uint8_t *b = data + at;
		uint64_t dt = dts[b[4] >> 4];
		int ci, si;
		bool to_server;

		W.now += dt;
		if (b[0] % OP_NUM == OP_RESET) {
			if (b[7] == 0xff)
				ser_reset(W.s);
			W.prev.valid = false;
			continue;
		}
		if (!build(b, &f, &ci, &si, &to_server))
			continue;
		if (b[4] & 8) {         /* the sender used the UDP checksum */
			struct ref_frame r;

			if (ref_locate(f.buf, f.len, &r))
				ref_udp_cksum_set(f.buf, &r);
		}
		if (b[4] & 2)           /* bad ICRC */
			f.buf[f.len - 1 - (b[6] & 3)] ^= (uint8_t)(1u << (b[7] >> 5));
		if (b[4] & 4) {         /* a corrupted byte under the ICRC */
			uint32_t bth = 14 + 20 + 8, n = f.len - 4 - bth;
			uint32_t off = bth + (b[6] % n);

			if (off != bth + 4)
				f.buf[off] ^= (uint8_t)(1u << (b[7] & 7));
		}
		call(f.buf, f.len, to_server, ci, si, b[7],
		     b[0] % OP_NUM == OP_RETRANSMIT, dt);
	}
	ser_destroy(W.s);
	W.s = NULL;
	return 0;
}
