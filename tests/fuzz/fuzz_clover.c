/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_clover.c — libFuzzer harness: one Clover steering instance
 * (lib/clover) driven by a script of well-formed frames.
 *
 * Why it exists: Clover steering rewrites the va of CAS and READ requests
 * in flight from tables learned from other frames; a wrong table entry or
 * a rewrite of a frame that should pass is invisible in normal tests
 * because the server still decides.  The input is a script (8 bytes a
 * step) of data WRITEs (ONLY, FIRST, ONLY_IMM; keys, node addresses in and
 * out of the regions, short ones), tail CAS, value READs, ATOMIC ACKs with
 * the compare value or another, other opcodes, retransmissions; 3 client
 * IPs x 2 QPs against two Clover servers and one other; real UDP
 * checksums, bad ICRCs and corrupted bytes.  Table sizes and the layout
 * come from the first two bytes, small so that every table fills.
 *
 * This file includes clover.c itself: the oracles compare its private
 * tables before and after a frame with a bad ICRC.
 *
 * Oracles after every call (frames judged by fuzz_ref.c):
 *   - an unchanged verdict leaves the frame byte for byte as it came;
 *   - a rewrite happens only to a CAS or READ going to the server whose
 *     ICRC was good on arrival, keeps the length, changes nothing but the
 *     va, the ICRC and a used UDP checksum, and leaves a valid frame;
 *   - a READ is steered to a node of the region it was in, a CAS to the
 *     next pointer of a node of its region;
 *   - a frame with a bad ICRC is never rewritten and changes no table;
 *   - every known tail is a node inside its region;
 *   - clover.h's rule for blind CAS: a key's tail is not known while a CAS
 *     passed blind in its current unsure window is unanswered.  The
 *     harness notes each blind CAS it sees with the window its record
 *     counts in (a window given up for answers that never came starts a
 *     new one; the CAS of an abandoned window no longer count).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "fuzz_ref.h"
#include "rdma_model.h"
#include "roce.h"

#include "clover.c"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NIP 3
#define NQP 2
#define NCONN (NIP * NQP)
#define NSRV 3                  /* servers 0 and 1 have Clover regions */
#define NODES 16
#define NODE_SIZE 64
#define FRAME_MAX 1600

static const uint32_t srv_ip[NSRV] = {
	RTE_BE32(0xc6120001), RTE_BE32(0xc6120002), RTE_BE32(0xc6120003),
};
static const uint64_t base[2] = { 0x100000, 0x200000 };
static const uint32_t rkeys[2] = { 0x77, 0x88 };

struct frame {
	uint32_t len;
	uint8_t buf[FRAME_MAX];
};

struct conn {
	uint32_t next;
	uint32_t cas_psn;       /* last tail CAS */
	uint64_t cas_cmp;
	struct frame last;      /* last request, as built */
};

static struct {
	struct clover *cl;
	struct clover_params prm;
	uint64_t ctr[CLOVER_COUNTER_NUM];
	struct conn c[NCONN][NSRV];
} W;

/* The blind CAS the harness saw, with their window (see the top comment). */
#define BLIND_MAX 64
static struct blind {
	uint32_t client_ip, psn;
	int server;
	uint16_t region;
	uint64_t key, window;
	bool live;
} blind[BLIND_MAX];
static unsigned int n_blind;
static bool trace;      /* FUZZ_TRACE=1: print every call (for triage) */

static const uint64_t vals[8] = {
	0, 1, 2, 3, UINT64_MAX, 0x8000000000000000ull, 0x100, 0xdeadbeef,
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	roce_crc_init();
	trace = getenv("FUZZ_TRACE") != NULL;
	return 0;
}

static struct rm_addr
addr(int i, int srv, bool to_server)
{
	struct rm_addr a = { 0 };
	uint8_t cm[6] = { 2, 0, 0, 0, 1, (uint8_t)(i / NQP) };
	uint8_t sm[6] = { 2, 0, 0, 0, 2, (uint8_t)srv };
	uint32_t cip = rte_cpu_to_be_32(0xc6120010u + (uint32_t)(i / NQP));

	memcpy(to_server ? a.src_mac : a.dst_mac, cm, 6);
	memcpy(to_server ? a.dst_mac : a.src_mac, sm, 6);
	a.src_ip = to_server ? cip : srv_ip[srv];
	a.dst_ip = to_server ? srv_ip[srv] : cip;
	a.dest_qpn = to_server ? 0x100u + (uint32_t)i : 0x200u + (uint32_t)i;
	return a;
}

/* Node n of server srv's region (srv 2 has none: it borrows region 0's
 * addresses); bit 4 of b puts it 8 bytes off a node boundary, bit 6 past
 * the region's end. */
static uint64_t
node_va(int srv, uint8_t b)
{
	uint64_t va = base[srv == 1] + (uint64_t)NODE_SIZE * (b & 15);

	if (b & 0x10)
		va += 8;
	if (b & 0x40)
		va += (uint64_t)NODE_SIZE * NODES;
	return va;
}

static uint32_t
pick_psn(struct conn *c, uint8_t b)
{
	if (b < 0x80)
		return c->next;
	return (c->next + (uint32_t)(b & 0x3f) - 32) & ROCE_PSN_MASK;
}

/* Build step b; false if it sends nothing. */
static bool
build(const uint8_t *b, struct frame *f, int *ci, int *si, bool *to_server)
{
	int op = b[0] % 8, i = (b[1] & 15) % NCONN, srv = (b[1] >> 4 & 3) % NSRV;
	struct conn *c = &W.c[i][srv];
	struct rm_addr up = addr(i, srv, true), down = addr(i, srv, false);
	uint32_t rkey = (b[3] & 0x80) ? 0x99 : rkeys[srv == 1];
	uint32_t psn = pick_psn(c, b[2]);
	const struct clover_region *r = &W.prm.regions[0];
	uint8_t ext[28], pl[NODE_SIZE] = { 0 };
	uint64_t key = (uint64_t)b[5] * 0x0101010101010101ull;

	*ci = i;
	*si = srv;
	*to_server = true;
	switch (op) {
	case 0:         /* data WRITE_ONLY / WRITE_FIRST / WRITE_ONLY_IMM */
	case 1: {
		static const uint8_t opc[4] = { ROCE_RC_WRITE_ONLY, ROCE_RC_WRITE_FIRST,
			ROCE_RC_WRITE_ONLY_IMM, ROCE_RC_WRITE_ONLY };
		uint8_t o = opc[(b[6] >> 4) & 3];
		uint32_t dlen = (b[3] & 0x20) ? NODE_SIZE / 2 : NODE_SIZE;
		uint32_t plen = (b[6] & 8) ? NODE_SIZE / 4 : dlen;

		if (o == ROCE_RC_WRITE_FIRST)
			dlen += 1024;
		for (uint32_t k = 0; k < r->key_width; k++)
			pl[r->key_offset + k] = (uint8_t)(key >> (8 * k));
		roce_st64(ext, node_va(srv, b[3]));
		roce_st32(ext + 8, rkey);
		roce_st32(ext + 12, dlen);
		roce_st32(ext + 16, 0x11223344);
		f->len = rm_build(f->buf, &up, o, psn, true, ext,
				  o == ROCE_RC_WRITE_ONLY_IMM ? 20 : 16, pl, plen);
		break;
	}
	case 2:         /* tail CAS: link node b6 after node b3 */
		roce_st64(ext, node_va(srv, b[3]) + ((b[6] & 0x80) ? 0 : r->next_offset));
		roce_st32(ext + 8, rkey);
		roce_st64(ext + 12, node_va(srv, b[6] & 15));
		c->cas_cmp = (b[5] & 0x80) ? vals[b[5] & 7] : 0;
		roce_st64(ext + 20, c->cas_cmp);
		c->cas_psn = psn;
		f->len = rm_build(f->buf, &up, ROCE_RC_COMPARE_SWAP, psn, true, ext, 28,
				  NULL, 0);
		break;
	case 3:         /* value READ */
		roce_st64(ext, node_va(srv, b[3]));
		roce_st32(ext + 8, rkey);
		roce_st32(ext + 12, (b[3] & 0x20) ? 8 : NODE_SIZE);
		f->len = rm_build(f->buf, &up, ROCE_RC_READ_REQUEST, psn, true, ext, 16,
				  NULL, 0);
		break;
	case 4:         /* the answer to this QP's last tail CAS */
	case 5:
		*to_server = false;
		roce_st32(ext, ((uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24) | 1);
		roce_st64(ext + 4, (b[6] & 1) ? vals[b[6] >> 1 & 7] : c->cas_cmp);
		f->len = rm_build(f->buf, &down, ROCE_RC_ATOMIC_ACKNOWLEDGE,
				  (b[2] < 0x80 ? c->cas_psn : psn), false, ext, 12, NULL, 0);
		return true;
	case 6:         /* anything else, either way */
		switch (b[7] & 7) {
		case 0:
			roce_st64(ext, node_va(srv, b[3]));
			roce_st32(ext + 8, rkey);
			roce_st64(ext + 12, 1);
			roce_st64(ext + 20, 0);
			f->len = rm_build(f->buf, &up, ROCE_RC_FETCH_ADD, psn, true, ext, 28,
					  NULL, 0);
			break;
		case 1:
			f->len = rm_build(f->buf, &up, ROCE_RC_WRITE_MIDDLE, psn, false, NULL,
					  0, pl, NODE_SIZE);
			break;
		case 2:
			f->len = rm_build(f->buf, &up, ROCE_RC_SEND_ONLY, psn, false, NULL, 0,
					  pl, 16);
			break;
		case 3:
			*to_server = false;
			roce_st32(ext, (uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24);
			f->len = rm_build(f->buf, &down, ROCE_RC_READ_RESPONSE_ONLY, psn,
					  false, ext, 4, pl, NODE_SIZE);
			return true;
		default:
			*to_server = false;
			roce_st32(ext, (uint32_t)roce_syndrome_make(ROCE_AETH_ACK, 31) << 24);
			f->len = rm_build(f->buf, &down, ROCE_RC_ACKNOWLEDGE, psn, false, ext,
					  4, NULL, 0);
			return true;
		}
		break;
	default:        /* retransmit the last request */
		if (c->last.len == 0)
			return false;
		f->len = c->last.len;
		memcpy(f->buf, c->last.buf, f->len);
		return true;
	}
	c->next = (psn + 1) & ROCE_PSN_MASK;
	c->last.len = f->len;
	memcpy(c->last.buf, f->buf, f->len);
	return true;
}

/* ------------------------------------------------------------------ */

struct snap {
	struct key_ent *keys;
	struct read_ent *reads;
	struct qp_ent *qps;
	struct cas_ent *cas;
	uint32_t learn_clock;
	uint64_t cas_seq;
};

static size_t n_keys(void) { return (size_t)W.cl->key_mask + 1; }
static size_t n_reads(void) { return (size_t)W.cl->n_buckets * W.cl->ways; }

FUZZ_ORACLE static void
snap_take(struct snap *n)
{
	const struct clover *cl = W.cl;

	n->keys = malloc(n_keys() * sizeof(*n->keys));
	n->reads = malloc(n_reads() * sizeof(*n->reads));
	n->qps = malloc(cl->prm.qps * sizeof(*n->qps));
	n->cas = malloc(cl->prm.cas * sizeof(*n->cas));
	if (!n->keys || !n->reads || !n->qps || !n->cas)
		abort();
	memcpy(n->keys, cl->keys, n_keys() * sizeof(*n->keys));
	memcpy(n->reads, cl->reads, n_reads() * sizeof(*n->reads));
	memcpy(n->qps, cl->qps, cl->prm.qps * sizeof(*n->qps));
	memcpy(n->cas, cl->cas, cl->prm.cas * sizeof(*n->cas));
	n->learn_clock = cl->learn_clock;
	n->cas_seq = cl->cas_seq;
}

FUZZ_ORACLE static void
snap_same_free(struct snap *n, const uint8_t *f, uint32_t len)
{
	const struct clover *cl = W.cl;

	REF_ASSERT(memcmp(n->keys, cl->keys, n_keys() * sizeof(*n->keys)) == 0 &&
		   memcmp(n->reads, cl->reads, n_reads() * sizeof(*n->reads)) == 0 &&
		   memcmp(n->qps, cl->qps, cl->prm.qps * sizeof(*n->qps)) == 0 &&
		   memcmp(n->cas, cl->cas, cl->prm.cas * sizeof(*n->cas)) == 0 &&
		   n->learn_clock == cl->learn_clock && n->cas_seq == cl->cas_seq,
		   "a frame with a bad ICRC changed Clover's tables", f, len);
	free(n->keys);
	free(n->reads);
	free(n->qps);
	free(n->cas);
}

/* Is va inside region ri (by the harness's own reading of the params)? */
FUZZ_ORACLE static bool
in_region(unsigned int ri, uint64_t va)
{
	const struct clover_region *r = &W.prm.regions[ri];

	return va >= r->base && va <= r->last;
}

/* The region a request names, by the harness's reading; -1 if none. */
FUZZ_ORACLE static int
region_named(int server, uint32_t rkey, uint64_t va)
{
	for (unsigned int i = 0; i < W.prm.n_regions; i++) {
		const struct clover_region *r = &W.prm.regions[i];

		if (r->server == server && (r->rkey_any || r->rkey == rkey) &&
		    in_region(i, va))
			return (int)i;
	}
	return -1;
}

/* Is the CAS record of b still in its slot, unanswered? */
FUZZ_ORACLE static const struct cas_ent *
blind_entry(const struct blind *b)
{
	const struct cas_ent *c = cas_slot(W.cl, b->client_ip, b->psn, b->server);

	if (!b->live || c->kind != CAS_UNSURE || c->answered ||
	    c->client_ip != b->client_ip || c->psn != b->psn || c->server != b->server)
		return NULL;
	return c;
}

/* After a CAS request: note it if Clover passed it blind. */
FUZZ_ORACLE static void
note_blind(const struct roce_pkt *p, int srv)
{
	struct blind b = { .client_ip = p->src_ip4, .psn = p->psn, .server = srv,
			   .live = true };
	const struct cas_ent *c = blind_entry(&b);
	uint64_t dummy[CLOVER_COUNTER_NUM];
	const struct key_ent *e;

	if (c == NULL)
		return;
	e = key_find(W.cl, c->region, c->key, false, dummy);
	if (e == NULL)
		return;
	b.region = c->region;
	b.key = c->key;
	/* the window it counts in (a retransmission keeps its original's) */
	b.window = c->window;
	blind[n_blind++ % BLIND_MAX] = b;
}

FUZZ_ORACLE static void
check_blind(void)
{
	uint64_t dummy[CLOVER_COUNTER_NUM];

	for (unsigned int i = 0; i < BLIND_MAX && i < n_blind; i++) {
		const struct key_ent *e;

		if (blind_entry(&blind[i]) == NULL) {
			blind[i].live = false;
			continue;
		}
		e = key_find(W.cl, blind[i].region, blind[i].key, false, dummy);
		REF_ASSERT(e == NULL || !(e->valid && e->unsure == 0 &&
					  e->window_seq == blind[i].window),
			   "a key's tail is known while a blind CAS of its window is "
			   "unanswered", NULL, 0);
	}
}

FUZZ_ORACLE static void
check_tables(void)
{
	const struct clover *cl = W.cl;

	for (size_t i = 0; i < n_keys(); i++) {
		const struct key_ent *e = &cl->keys[i];

		if (!e->used)
			continue;
		REF_ASSERT(e->region < W.prm.n_regions, "key of no region", NULL, 0);
		if (e->valid)
			REF_ASSERT(in_region(e->region, e->tail),
				   "a known tail outside its region", NULL, 0);
	}
	check_blind();
}

FUZZ_ORACLE static void
call(const uint8_t *in, uint32_t len, bool to_server, int srv)
{
	static uint8_t buf[FRAME_MAX];
	struct roce_pkt p, q;
	struct ref_frame r, ro;
	struct snap n;
	bool good, rw;

	memcpy(buf, in, len);
	if (roce_parse(buf, len, &p) != ROCE_OK)
		return;
	good = ref_locate(in, len, &r) && ref_icrc_ok(in, &r);
	if (!good)
		snap_take(&n);
	rw = clover_process(W.cl, buf, &p, srv, to_server, W.ctr);
	if (!good)
		snap_same_free(&n, in, len);
	if (good && to_server && p.opcode == ROCE_RC_COMPARE_SWAP)
		note_blind(&p, srv);
	if (trace) {
		fprintf(stderr, "%s srv %d src %08x psn %u opcode 0x%02x va 0x%llx%s -> %d "
			"cas_seq %llu |", to_server ? "req " : "resp", srv,
			rte_be_to_cpu_32(p.src_ip4), p.psn, p.opcode,
			(unsigned long long)(roce_has(p.oi, ROCE_HDR_RETH) ||
					     (p.oi->flags & ROCE_F_ATOMIC) ?
					     roce_ld64(in + p.bth_off + 12) : 0),
			good ? "" : " (bad ICRC)", rw,
			(unsigned long long)W.cl->cas_seq);
		for (size_t i = 0; i < n_keys(); i++)
			if (W.cl->keys[i].used)
				fprintf(stderr, " k%llx:v%u/u%u/l%u/w%llu/t%llx",
					(unsigned long long)W.cl->keys[i].key,
					W.cl->keys[i].valid, W.cl->keys[i].unsure,
					W.cl->keys[i].learned,
					(unsigned long long)W.cl->keys[i].window_seq,
					(unsigned long long)W.cl->keys[i].tail);
		fprintf(stderr, "\n");
	}
	if (!rw) {
		REF_ASSERT(memcmp(buf, in, len) == 0, "unchanged verdict, changed frame",
			   buf, len);
		check_tables();
		return;
	}
	REF_ASSERT(good, "a frame with a bad ICRC was rewritten", buf, len);
	REF_ASSERT(to_server && (p.opcode == ROCE_RC_COMPARE_SWAP ||
				 p.opcode == ROCE_RC_READ_REQUEST),
		   "rewrote something but a CAS or READ to the server", buf, len);
	{
		const char *bad = ref_check_frame(buf, len);

		if (bad != NULL)
			ref_fail(__FILE__, __LINE__, bad, buf, len);
	}
	REF_ASSERT(roce_parse(buf, len, &q) == ROCE_OK && q.frame_len == p.frame_len,
		   "steered frame does not parse to the same shape", buf, len);
	REF_ASSERT(ref_locate(buf, len, &ro) &&
		   ref_udp_cksum_state(buf, &ro) == (ref_udp_cksum_state(in, &r) != 0),
		   "UDP checksum not kept as the sender chose", buf, len);
	for (uint32_t k = 0; k < len; k++) {
		bool may = (k >= p.bth_off + 12 && k < p.bth_off + 20) ||
			   k >= p.icrc_off || k == p.l4_off + 6 || k == p.l4_off + 7;

		REF_ASSERT(may || buf[k] == in[k], "steering changed more than the va",
			   buf, len);
	}
	{
		uint64_t ova = roce_ld64(in + p.bth_off + 12);
		uint64_t nva = roce_ld64(buf + p.bth_off + 12);
		uint32_t rkey = roce_ld32(in + p.bth_off + 20);
		int ri = region_named(srv, rkey, p.opcode == ROCE_RC_READ_REQUEST ? ova :
				      ova - W.prm.regions[0].next_offset);

		REF_ASSERT(ri >= 0, "steered a request outside every region", buf, len);
		if (p.opcode == ROCE_RC_READ_REQUEST)
			REF_ASSERT(in_region((unsigned int)ri, nva),
				   "READ steered out of its region", buf, len);
		else
			REF_ASSERT(in_region((unsigned int)ri,
					     nva - W.prm.regions[ri].next_offset),
				   "CAS steered to a node out of its region", buf, len);
	}
	check_tables();
}

static void
setup(uint8_t h0, uint8_t h1)
{
	static const uint32_t widths[4] = { 1, 2, 4, 8 };
	static const uint32_t keys[4] = { 1, 2, 4, 16 };
	static const uint32_t ways[4] = { 0, 1, 2, 4 };

	memset(&W.prm, 0, sizeof(W.prm));
	n_blind = 0;
	memset(W.ctr, 0, sizeof(W.ctr));
	W.prm.n_regions = 2;
	for (int i = 0; i < 2; i++)
		W.prm.regions[i] = (struct clover_region){
			.server = i, .rkey = rkeys[i],
			.rkey_any = i == 1 && (h0 & 0x80),
			.base = base[i], .last = base[i] + NODES * NODE_SIZE - 1,
			.write_min = NODE_SIZE, .key_offset = 8,
			.key_width = widths[h0 & 3],
			.next_offset = (h0 & 4) ? 56 : 0, .read_min = NODE_SIZE,
		};
	W.prm.keys = keys[h1 & 3];
	W.prm.read_factor = (h1 & 0x40) ? 3 : 1;
	W.prm.read_ways = ways[h0 >> 5 & 3];
	W.prm.qps = 1u << (h1 >> 2 & 3);
	W.prm.cas = 1u << (h1 >> 4 & 3);
	W.prm.write_steering = h0 & 8;
	W.prm.read_steering = h0 & 0x10;
	W.cl = clover_create(&W.prm);
	if (W.cl == NULL)
		abort();
	for (int i = 0; i < NCONN; i++)
		for (int s = 0; s < NSRV; s++)
			W.c[i][s] = (struct conn){ .next = (h1 & 0x80) ?
				0xfffffeu + (uint32_t)i : 3185, .cas_psn = 3185 };
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
		int ci, si;
		bool to_server;

		if (!build(b, &f, &ci, &si, &to_server))
			continue;
		if (b[4] & 8) {
			struct ref_frame r;

			if (ref_locate(f.buf, f.len, &r))
				ref_udp_cksum_set(f.buf, &r);
		}
		if (b[4] & 2)
			f.buf[f.len - 1 - (b[6] & 3)] ^= (uint8_t)(1u << (b[7] >> 5));
		if (b[4] & 4) {
			uint32_t bth = 14 + 20 + 8, n = f.len - 4 - bth;
			uint32_t off = bth + (b[7] % n);

			if (off != bth + 4)
				f.buf[off] ^= (uint8_t)(1u << (b[6] & 7));
		}
		/* bit 0 of b4: the wrong direction flag (the caller's bug
		 * would be ours to survive too) */
		call(f.buf, f.len, (b[4] & 1) ? !to_server : to_server, si);
	}
	clover_destroy(W.cl);
	W.cl = NULL;
	return 0;
}
