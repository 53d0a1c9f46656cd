/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_script.c — the script steps of the stateful harnesses and the
 * connection-table oracles they share (see fuzz_script.h).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "fuzz_script.h"
#include "roce.h"

static const uint64_t vals[8] = {
	0, 1, 2, 3, UINT64_MAX, 0x8000000000000000ull, 0x100, 0xdeadbeef,
};
static const uint64_t masks[4] = { UINT64_MAX, 1, 0x80, 0xff00 };

static const uint64_t dts[16] = {
	0, 0, 0, 0, 1, 1, 10, 100, 1000, 1000, 10000, 100000, 1000000, 1000000,
	10000000, 100000000,
};

bool fz_trace;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	roce_crc_init();
	fz_trace = getenv("FUZZ_TRACE") != NULL;
	return 0;
}

const uint32_t fz_srv_ip[FZ_NSRV] = {
	RTE_BE32(0xc6120001), RTE_BE32(0xc6120002), RTE_BE32(0xc6120003),
};
const uint64_t fz_region_base[2] = { 0x10000, 0x20000 };

uint32_t
fz_cl_ip(int i)
{
	return rte_cpu_to_be_32(0xc6120010u + (uint32_t)(i / FZ_NQP));
}

uint32_t
fz_cl_qpn(int i, int srv)
{
	return 0x200u + (uint32_t)i + 0x20u * (uint32_t)srv;
}

uint32_t
fz_srv_qpn(int i, int srv)
{
	return 0x100u + (uint32_t)i + 0x20u * (uint32_t)srv;
}

struct rm_addr
fz_addr(int i, int srv, bool to_server)
{
	struct rm_addr a = { 0 };
	uint8_t cm[6] = { 2, 0, 0, 0, 1, (uint8_t)(i / FZ_NQP) };
	uint8_t sm[6] = { 2, 0, 0, 0, 2, (uint8_t)srv };

	if (to_server) {
		memcpy(a.src_mac, cm, 6);
		memcpy(a.dst_mac, sm, 6);
		a.src_ip = fz_cl_ip(i);
		a.dst_ip = fz_srv_ip[srv];
		a.dest_qpn = fz_srv_qpn(i, srv);
	} else {
		memcpy(a.src_mac, sm, 6);
		memcpy(a.dst_mac, cm, 6);
		a.src_ip = fz_srv_ip[srv];
		a.dst_ip = fz_cl_ip(i);
		a.dest_qpn = fz_cl_qpn(i, srv);
	}
	return a;
}

struct fz_target
fz_target(const uint8_t *b, struct fz_conn (*c)[FZ_NSRV], uint32_t ring, int *ci, int *si)
{
	int i = (b[1] & 15) % FZ_NCONN, srv = (b[1] >> 4 & 3) % FZ_NSRV;
	struct fz_conn *cn = &c[i][srv];

	*ci = i;
	*si = srv;
	return (struct fz_target){
		.c = cn, .srv = &cn->srv, .up = fz_addr(i, srv, true),
		.down = fz_addr(i, srv, false), .cl_qpn = fz_cl_qpn(i, srv),
		.srv_qpn = fz_srv_qpn(i, srv), .cm_cid = 0x1000u + (uint32_t)i,
		.cm_sid = 0x2000u + (uint32_t)srv, .va_base = fz_region_base[srv == 1],
		.ring = ring, .resp_psn = cn->next - 1,
	};
}

uint64_t
fz_dt(const uint8_t *b)
{
	return dts[b[4] >> 4];
}

uint32_t
fz_pick_psn(uint32_t base, uint32_t initial, uint32_t ring, uint8_t b)
{
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
pick_va(uint64_t base, uint8_t b)
{
	uint32_t w = b & 15u;

	if (w < 14)
		return base + 8ull * w;
	if (w == 14)
		return base + 8ull * (b >> 4 & 7) + 3;       /* misaligned */
	return base + 8ull * FZ_REGION_WORDS + 8ull * (b >> 4 & 7); /* outside */
}

static uint32_t
pick_rkey(uint8_t b3)
{
	return (b3 & 0x10) ? 0x9999 : FZ_RKEY;
}

static void
st24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

/* A CM MAD (IBTA 12.6) of attribute attr, fields at rc_cm.c's offsets,
 * from the client (a = t->up) or the server (a = t->down). */
static uint32_t
build_cm(uint8_t *out, const struct rm_addr *dir, uint16_t attr, uint32_t local_id,
	 uint32_t remote_id, uint32_t qpn, uint32_t psn, uint8_t rr, uint8_t depth)
{
	struct rm_addr a = *dir;
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
		st24(mad + 56, qpn);
		mad[59] = rr;
		mad[63] = depth;
		st24(mad + 68, psn);
		break;
	case 0x0013:            /* REP */
		st24(mad + 36, qpn);
		st24(mad + 44, psn);
		mad[48] = rr;
		mad[49] = depth;
		break;
	case 0x0015:            /* DREQ */
		st24(mad + 32, qpn);
		break;
	default:
		break;
	}
	return rm_build(out, &a, ROCE_UD_SEND_ONLY, psn, false, deth, 8, mad, 256);
}

static bool
build_cm_step(const uint8_t *b, int op, const struct fz_target *t, uint32_t psn,
	      struct fz_frame *f, bool *to_server)
{
	/* bit 0 of b7: the server is the active side */
	bool srv_active = b[7] & 1;
	uint32_t cid = t->cm_cid, sid = t->cm_sid;
	uint32_t wrong = (b[7] & 2) ? 0x77 : 0;

	if (op == FZ_CM_REQ) {
		*to_server = !srv_active;
		f->len = build_cm(f->buf, srv_active ? &t->down : &t->up, 0x0010,
				  srv_active ? sid : cid, 0,
				  srv_active ? t->srv_qpn : t->cl_qpn, psn, b[5], b[6]);
	} else if (op == FZ_CM_REP) {
		*to_server = srv_active;
		f->len = build_cm(f->buf, srv_active ? &t->up : &t->down, 0x0013,
				  srv_active ? cid : sid, (srv_active ? sid : cid) ^ wrong,
				  srv_active ? t->cl_qpn : t->srv_qpn, psn, b[5], b[6]);
		/* the client sends from the REP's starting PSN */
		if (!srv_active)
			t->c->next = psn;
	} else {
		bool from_client = !(b[7] & 4);
		uint16_t attr = op == FZ_CM_DREQ ? 0x0015 : op == FZ_CM_DREP ? 0x0016 : 0x0014;

		/* bit 3 of b7: a REJ or an attribute CM does not use */
		if (b[7] & 8)
			attr = (b[7] & 0x10) ? 0x0012 : 0x0099;
		*to_server = from_client;
		f->len = build_cm(f->buf, from_client ? &t->up : &t->down, attr,
				  from_client ? cid : sid, from_client ? sid : cid,
				  (from_client ? t->srv_qpn : t->cl_qpn) ^ wrong, psn, 0, 0);
	}
	return true;
}

static uint32_t
aeth_of(uint8_t syn, uint32_t msn)
{
	return ((uint32_t)syn << 24) | (msn & ROCE_PSN_MASK);
}

/* The next MSN the server QP reports (b5's low bits: -2 .. +5). */
static uint32_t
next_msn(struct fz_side *s, uint8_t b5)
{
	s->msn = (s->msn + (uint32_t)(b5 & 7) - 2) & ROCE_PSN_MASK;
	return s->msn;
}

static uint8_t
nak_syndrome(uint8_t b7)
{
	switch (b7 & 7) {
	case 5:
		return roce_syndrome_make(ROCE_AETH_RNR_NAK, b7 >> 3);
	case 6:
		return roce_syndrome_make(ROCE_AETH_RESERVED, b7 >> 3);
	case 7:
		return roce_syndrome_make(ROCE_AETH_ACK, b7 >> 3);
	default:
		return roce_syndrome_make(ROCE_AETH_NAK, b7 & 7);
	}
}

static void
build_request(const uint8_t *b, int op, const struct fz_target *t, uint32_t psn,
	      struct fz_frame *f, uint32_t *span)
{
	static const uint32_t wsizes[4] = { 8, 16, 4, 0 };
	static const uint32_t rsizes[4] = { 8, 64, 3000, 0 };
	static const uint8_t atomic_opc[3] = {
		ROCE_RC_COMPARE_SWAP, ROCE_RC_FETCH_ADD, ROCE_RC_MASKED_COMPARE_SWAP,
	};
	uint8_t ext[64], pl[1100];
	uint64_t va = pick_va(t->va_base, b[3]);
	bool ackreq = b[4] & 1;
	uint32_t plen, dlen;

	memset(pl, 0xa5, sizeof(pl));
	roce_st64(ext, va);
	roce_st32(ext + 8, pick_rkey(b[3]));
	switch (op) {
	case FZ_CAS:
	case FZ_FAA:
	case FZ_MCAS:
		roce_st64(ext + 12, vals[b[5] & 7]);
		roce_st64(ext + 20, vals[b[5] >> 3 & 7]);
		if (op == FZ_MCAS) {
			roce_st64(ext + 28, masks[b[6] & 3]);
			roce_st64(ext + 36, masks[b[6] >> 2 & 3]);
		}
		f->len = rm_build(f->buf, &t->up, atomic_opc[op - FZ_CAS], psn, true, ext,
				  op == FZ_MCAS ? 44 : 28, NULL, 0);
		break;
	case FZ_WRITE:
	case FZ_WRITE_FIRST:
	case FZ_WRITE_IMM:
		dlen = wsizes[b[3] >> 5 & 3];
		plen = (b[3] & 0x80) && dlen ? dlen / 2 : dlen;  /* mismatched */
		if (op == FZ_WRITE_FIRST)
			dlen += FZ_PMTU;
		roce_st32(ext + 12, dlen);
		roce_st32(ext + 16, 0x11223344);        /* ImmDt */
		roce_st64(pl, vals[b[5] & 7]);
		f->len = rm_build(f->buf, &t->up, op == FZ_WRITE ? ROCE_RC_WRITE_ONLY :
				  op == FZ_WRITE_FIRST ? ROCE_RC_WRITE_FIRST :
				  ROCE_RC_WRITE_ONLY_IMM, psn, ackreq, ext,
				  op == FZ_WRITE_IMM ? 20 : 16, pl, plen);
		break;
	case FZ_WRITE_MIDDLE:
	case FZ_WRITE_LAST:
		f->len = rm_build(f->buf, &t->up, op == FZ_WRITE_MIDDLE ?
				  ROCE_RC_WRITE_MIDDLE : ROCE_RC_WRITE_LAST, psn,
				  ackreq, NULL, 0, pl, 8u * (b[5] & 3));
		break;
	case FZ_READ:
		dlen = rsizes[b[3] >> 5 & 3];
		*span = dlen ? (dlen + FZ_PMTU - 1) / FZ_PMTU : 1;
		roce_st32(ext + 12, dlen);
		f->len = rm_build(f->buf, &t->up, ROCE_RC_READ_REQUEST, psn, true, ext, 16,
				  NULL, 0);
		break;
	default:        /* FZ_SEND */
		f->len = rm_build(f->buf, &t->up, ROCE_RC_SEND_ONLY, psn, ackreq, NULL, 0,
				  pl, 4u * (b[5] & 7));
		break;
	}
}

static void
build_response(const uint8_t *b, int op, const struct fz_target *t, uint32_t psn,
	       struct fz_frame *f)
{
	static const uint32_t sizes[4] = { 8, 64, 1024, 0 };
	static const uint8_t rr_opc[4] = {
		ROCE_RC_READ_RESPONSE_FIRST, ROCE_RC_READ_RESPONSE_MIDDLE,
		ROCE_RC_READ_RESPONSE_LAST, ROCE_RC_READ_RESPONSE_ONLY,
	};
	uint8_t ext[16], pl[1100];

	memset(pl, 0xa5, sizeof(pl));
	switch (op) {
	case FZ_ACK:
	case FZ_NAK:
		roce_st32(ext, aeth_of(op == FZ_NAK ? nak_syndrome(b[7]) :
				       roce_syndrome_make(ROCE_AETH_ACK, 31),
				       next_msn(t->srv, b[5])));
		f->len = rm_build(f->buf, &t->down, ROCE_RC_ACKNOWLEDGE, psn, false, ext, 4,
				  NULL, 0);
		break;
	case FZ_ATOMIC_ACK:
		roce_st32(ext, aeth_of(roce_syndrome_make(ROCE_AETH_ACK, 31),
				       next_msn(t->srv, b[5])));
		roce_st64(ext + 4, vals[b[6] & 7]);
		f->len = rm_build(f->buf, &t->down, ROCE_RC_ATOMIC_ACKNOWLEDGE, psn, false,
				  ext, 12, NULL, 0);
		break;
	default:        /* READ responses */
		if (op != FZ_RR_MIDDLE)
			next_msn(t->srv, b[5]);
		roce_st32(ext, aeth_of(roce_syndrome_make(ROCE_AETH_ACK, 31), t->srv->msn));
		roce_st64(pl, vals[b[6] & 7]);
		f->len = rm_build(f->buf, &t->down, rr_opc[op - FZ_RR_FIRST], psn, false, ext,
				  op == FZ_RR_MIDDLE ? 0 : 4, pl, sizes[b[3] >> 5 & 3]);
		break;
	}
}

static bool
copy_frame(struct fz_frame *dst, const struct fz_frame *src)
{
	if (src->len == 0)
		return false;
	dst->len = src->len;
	memcpy(dst->buf, src->buf, src->len);
	return true;
}

bool
fz_build(const uint8_t *b, const struct fz_target *t, struct fz_frame *f, bool *to_server)
{
	int op = b[0] % FZ_OP_NUM;
	struct fz_conn *c = t->c;
	uint32_t psn, span = 1;

	*to_server = op < FZ_ACK || op == FZ_CM_REQ || op == FZ_CM_DREQ || op == FZ_CM_RTU;
	psn = fz_pick_psn(*to_server ? c->next : t->resp_psn, c->initial, t->ring, b[2]);
	if (op >= FZ_CM_REQ && op <= FZ_CM_RTU)
		return build_cm_step(b, op, t, psn, f, to_server);
	switch (op) {
	case FZ_RETRANSMIT:
		*to_server = true;
		return copy_frame(f, &c->hist[(c->hn + FZ_HIST - 1 - (b[7] & 3)) % FZ_HIST]);
	case FZ_RESEND_RESP:
		*to_server = false;
		return copy_frame(f, &t->srv->last);
	case FZ_RESET:
		return false;
	default:
		break;
	}
	if (*to_server) {
		build_request(b, op, t, psn, f, &span);
		c->next = (psn + span) & ROCE_PSN_MASK;
		c->hn = (c->hn + 1) % FZ_HIST;
		copy_frame(&c->hist[(c->hn + FZ_HIST - 1) % FZ_HIST], f);
	} else {
		build_response(b, op, t, psn, f);
		copy_frame(&t->srv->last, f);
	}
	return true;
}

void
fz_mangle(const uint8_t *b, struct fz_frame *f)
{
	if (b[4] & 8) {         /* the sender used the UDP checksum */
		struct ref_frame r;

		if (ref_locate(f->buf, f->len, &r))
			ref_udp_cksum_set(f->buf, &r);
	}
	if (b[4] & 2)           /* bad ICRC */
		f->buf[f->len - 1 - (b[6] & 3)] ^= (uint8_t)(1u << (b[7] >> 5));
	if (b[4] & 4) {         /* a corrupted byte under the ICRC */
		uint32_t bth = 14 + 20 + 8, n = f->len - 4 - bth;
		uint32_t off = bth + (b[6] % n);

		if (off != bth + 4)
			f->buf[off] ^= (uint8_t)(1u << (b[7] & 7));
	}
}

int
fz_run(const struct fz_driver *d, const uint8_t *data, size_t size)
{
	static struct fz_frame f;

	if (size < 2)
		return 0;
	d->setup(data[0], data[1]);
	for (size_t at = 2; at + FZ_STEP <= size; at += FZ_STEP) {
		const uint8_t *b = data + at;
		uint64_t dt = fz_dt(b);
		int ci, si;
		bool to_server;

		*d->now += dt;
		if (b[0] % FZ_OP_NUM == FZ_RESET) {
			d->reset(b[7]);
			continue;
		}
		if (!d->build(b, &f, &ci, &si, &to_server))
			continue;
		fz_mangle(b, &f);
		d->call(f.buf, f.len, to_server, ci, si, b[7],
			b[0] % FZ_OP_NUM == FZ_RETRANSMIT, dt);
	}
	d->teardown();
	return 0;
}

void
fz_conn_init(struct fz_conn *c, unsigned int mode, int i, int s, int nsrv)
{
	uint32_t start;

	switch (mode & 3) {
	case 0:
		start = 3185;   /* Sherman: every QP alike */
		break;
	case 1:
		start = 0xfffff0u + (uint32_t)(i * 3 + s);
		break;
	case 2:
		start = (uint32_t)(i * nsrv + s) * 0x9e3779b1u;
		break;
	default:
		start = 0;
	}
	c->next = c->initial = start & ROCE_PSN_MASK;
	c->srv.msn = 0;
	c->srv.last.len = 0;
	c->hn = 0;
	for (int k = 0; k < FZ_HIST; k++)
		c->hist[k].len = 0;
}

/* ------------------------------------------------------------------ */
/* oracles */

FUZZ_ORACLE void *
fz_dup(const void *src, size_t n)
{
	void *d = malloc(n);

	if (d == NULL)
		abort();
	memcpy(d, src, n);
	return d;
}

FUZZ_ORACLE void
fz_rc_snap_take(struct fz_rc_snap *n, const struct rc_table *t)
{
	n->rt = *t;
	n->conns = fz_dup(t->head.conns, t->prm.max_conns * sizeof(*t->head.conns));
	n->req_map = fz_dup(t->req_map, (t->map_mask + 1) * sizeof(uint32_t));
	n->resp_map = fz_dup(t->resp_map, (t->map_mask + 1) * sizeof(uint32_t));
}

FUZZ_ORACLE void
fz_rc_snap_free(struct fz_rc_snap *n)
{
	free(n->conns);
	free(n->req_map);
	free(n->resp_map);
}

FUZZ_ORACLE void
fz_rc_snap_same(const struct fz_rc_snap *n, const struct rc_table *t, const uint8_t *f,
		uint32_t len)
{
	struct rc_table cur = *t;

	/* which slot rc_find_req tries first is no state: any frame may move it */
	cur.head.last_req = n->rt.head.last_req;
	cur.head.last_resp = n->rt.head.last_resp;
	REF_ASSERT(memcmp(&n->rt, &cur, sizeof(cur)) == 0,
		   "bad frame changed the connection table", f, len);
	REF_ASSERT(memcmp(n->conns, t->head.conns, t->prm.max_conns * sizeof(*n->conns)) == 0,
		   "bad frame created, paired or aged a connection", f, len);
	REF_ASSERT(memcmp(n->req_map, t->req_map, (t->map_mask + 1) * 4) == 0 &&
		   memcmp(n->resp_map, t->resp_map, (t->map_mask + 1) * 4) == 0,
		   "bad frame changed a connection map", f, len);
}

FUZZ_ORACLE void
fz_check_table(struct rc_table *t)
{
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

FUZZ_ORACLE void
fz_check_frame(const uint8_t *in, uint32_t in_len, const uint8_t *out, uint32_t out_len,
	       bool keep_udp, struct roce_pkt *out_p)
{
	struct ref_frame ri, ro;
	const char *bad = ref_check_frame(out, out_len);

	if (bad != NULL)
		ref_fail(__FILE__, __LINE__, bad, out, out_len);
	REF_ASSERT(roce_parse(out, out_len, out_p) == ROCE_OK, "output does not parse",
		   out, out_len);
	if (!keep_udp)
		return;
	REF_ASSERT(ref_locate(in, in_len, &ri) && ref_locate(out, out_len, &ro), "locate",
		   out, out_len);
	REF_ASSERT(ref_udp_cksum_state(out, &ro) == (ref_udp_cksum_state(in, &ri) != 0),
		   "UDP checksum not kept as the sender chose", out, out_len);
}

FUZZ_ORACLE void
fz_i6(struct fz_prev *pv, int ci, int si, uint32_t hn, uint64_t now, bool repeat,
      bool comparable, bool keep, const uint8_t *in, uint32_t len, int v, const uint8_t *out,
      uint32_t out_len)
{
	if (repeat && comparable && pv->valid && pv->conn == ci && pv->srv == si &&
	    pv->hn == hn && pv->t == now && pv->in.len == len && memcmp(pv->in.buf, in, len) == 0)
		REF_ASSERT(v == pv->v && out_len == pv->out.len &&
			   memcmp(out, pv->out.buf, out_len) == 0,
			   "retransmission answered differently", out, out_len);
	pv->valid = keep;
	if (!keep)
		return;
	pv->conn = ci;
	pv->srv = si;
	pv->v = v;
	pv->hn = hn;
	pv->t = now;
	pv->out.len = out_len;
	memcpy(pv->out.buf, out, out_len);
	pv->in.len = len;
	memcpy(pv->in.buf, in, len);
}
