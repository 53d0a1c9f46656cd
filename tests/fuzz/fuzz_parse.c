/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_parse.c — libFuzzer harness: raw bytes → roce_parse, and when it
 * parses, the ICRC and every rewriter that applies, on copies.
 *
 * Why it exists: roce_parse is the first thing every frame from the wire
 * meets, and the rewriters are what swordd sends on; both must be safe on
 * any bytes (ASan: never a read or write outside the frame or the room
 * the caller gave) and right on every frame they accept.  Oracles:
 *   - roce_parse (fast path) and roce_parse_full agree on every input;
 *   - the input is never written to;
 *   - a frame that parses is located the same way by fuzz_ref.c, and its
 *     offsets are self-consistent;
 *   - roce_icrc_verify agrees with zlib's crc32 over the masked frame,
 *     and the PCLMUL and rte_net_crc paths agree;
 *   - every rewrite leaves a frame that parses to the *p the rewriter
 *     updated, whose ICRC zlib accepts, whose IPv4 checksum is right
 *     exactly when it was right before, whose UDP checksum is absent if
 *     it was absent and right otherwise, with the Ethernet trailer moved
 *     along and nothing else changed; refused rewrites leave the frame
 *     untouched;
 *   - the RDMA CM parser (lib/rc) reads only inside the frame;
 *   - in an mbuf chain (two segments, split where the first input byte
 *     says; no mempool needed to read one) a frame that parses whole is
 *     always "segmented", never taken for something that is not RoCE
 *     (which would pass a managed atomic by the serializer), never OK;
 *   - the mbuf rewriters do exactly what the buffer ones do.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fuzz_ref.h"
#include "rc.h"
#include "roce.h"
#include "roce_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLACK 64        /* room past the frame the rewriters may grow into */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	roce_crc_init();
	return 0;
}

FUZZ_ORACLE static void
same_pkt(const struct roce_pkt *a, const struct roce_pkt *b, const uint8_t *f,
	 uint32_t len)
{
	REF_ASSERT(a->oi == b->oi && a->l3_off == b->l3_off &&
		   a->l4_off == b->l4_off && a->bth_off == b->bth_off &&
		   a->payload_off == b->payload_off &&
		   a->payload_len == b->payload_len && a->icrc_off == b->icrc_off &&
		   a->frame_len == b->frame_len && a->has_vlan == b->has_vlan &&
		   a->vlan_tci == b->vlan_tci && a->ip_version == b->ip_version &&
		   a->opcode == b->opcode && a->pad == b->pad && a->qpn == b->qpn &&
		   a->psn == b->psn && a->src_ip4 == b->src_ip4 &&
		   a->dst_ip4 == b->dst_ip4, "two parses of one frame differ", f, len);
}

/* *p as a rewriter left it must be what a fresh parse says. */
FUZZ_ORACLE static void
reparse_agrees(const uint8_t *f, uint32_t len, const struct roce_pkt *p)
{
	struct roce_pkt q;

	REF_ASSERT(roce_parse(f, len, &q) == ROCE_OK, "rewritten frame does not parse",
		   f, len);
	same_pkt(p, &q, f, len);
}

static uint32_t
ld16(const uint8_t *b)
{
	return ((uint32_t)b[0] << 8) | b[1];
}

/*
 * Judge a rewrite of in (len_in bytes, parsed as *pin) into out (len_out,
 * *pout): valid frame, checksums as promised, trailer carried, and no byte
 * changed outside [from, pout->icrc_off) except the IP/UDP length and
 * checksum fields and the BTH pad bits.
 */
FUZZ_ORACLE static void
judge_rewrite(const uint8_t *in, uint32_t len_in, const struct roce_pkt *pin,
	      const uint8_t *out, uint32_t len_out, const struct roce_pkt *pout,
	      uint32_t from)
{
	struct ref_frame ri, ro;
	uint32_t l3 = pin->l3_off, l4 = pin->l4_off;

	reparse_agrees(out, len_out, pout);
	REF_ASSERT(ref_locate(in, len_in, &ri) && ref_locate(out, len_out, &ro),
		   "reference cannot locate the headers", out, len_out);
	REF_ASSERT(ref_icrc_ok(out, &ro), "rewritten frame's ICRC is wrong", out, len_out);
	REF_ASSERT(ref_ip4_cksum_ok(out, &ro) == ref_ip4_cksum_ok(in, &ri),
		   "IPv4 checksum repaired or broken by a rewrite", out, len_out);
	if (ref_udp_cksum_state(in, &ri) == 0)
		REF_ASSERT(ref_udp_cksum_state(out, &ro) == 0,
			   "UDP checksum appeared", out, len_out);
	else
		REF_ASSERT(ref_udp_cksum_state(out, &ro) == 1,
			   "UDP checksum does not match the rewritten frame", out, len_out);
	/* trailer (Ethernet padding) moved along */
	REF_ASSERT(len_out - pout->frame_len == len_in - pin->frame_len &&
		   memcmp(out + pout->frame_len, in + pin->frame_len,
			  len_in - pin->frame_len) == 0, "trailer lost", out, len_out);
	for (uint32_t i = 0; i < from && i < pin->frame_len; i++) {
		bool may = (pin->ip_version == 4 && (i == l3 + 2 || i == l3 + 3 ||
						    i == l3 + 10 || i == l3 + 11)) ||
			   (pin->ip_version == 6 && (i == l3 + 4 || i == l3 + 5)) ||
			   (i >= l4 + 4 && i < l4 + 8) || i == pin->bth_off;

		if (i == pin->bth_off + 1)
			REF_ASSERT((in[i] & ~0x30) == (out[i] & ~0x30),
				   "BTH flags changed", out, len_out);
		else if (!may)
			REF_ASSERT(in[i] == out[i], "byte changed outside the rewrite",
				   out, len_out);
	}
	/* the IP and UDP lengths still agree with each other */
	REF_ASSERT(ld16(out + pout->l4_off + 4) == pout->frame_len - pout->l4_off,
		   "UDP length", out, len_out);
}

static uint8_t *
copy_with_room(const uint8_t *data, uint32_t size, uint32_t cap)
{
	uint8_t *b = malloc(cap);

	if (b == NULL)
		abort();
	memcpy(b, data, size);
	return b;
}

static void
try_atomic_to_write(const uint8_t *in, uint32_t len, const struct roce_pkt *p0,
		    bool zero)
{
	uint32_t cap = len + SLACK, l = len;
	uint8_t *b = copy_with_room(in, len, cap);
	struct roce_pkt p = *p0;
	uint64_t v = 0x0123456789abcdefull ^ len;
	int rc = roce_atomic_to_write(b, &l, cap, &p, zero ? NULL : &v);
	bool ok = (p0->oi->flags & ROCE_F_ATOMIC) && (p0->oi->flags & ROCE_F_REQUEST);

	if (!ok) {
		REF_ASSERT(rc == -EINVAL && l == len && memcmp(b, in, len) == 0,
			   "refused atomic_to_write touched the frame", b, l);
		free(b);
		return;
	}
	REF_ASSERT(rc == 0, "atomic_to_write failed on an atomic", b, l);
	REF_ASSERT(p.opcode == ROCE_RC_WRITE_ONLY && b[p.bth_off] == ROCE_RC_WRITE_ONLY,
		   "not a WRITE_ONLY", b, l);
	REF_ASSERT(p.payload_len == (zero ? 0 : 8), "WRITE payload length", b, l);
	/* va and rkey kept (the AtomicETH starts like a RETH), DMA length */
	REF_ASSERT(memcmp(b + p.bth_off + 12, in + p0->bth_off + 12, 12) == 0,
		   "va/rkey changed", b, l);
	REF_ASSERT(roce_ld32(b + p.bth_off + 24) == (zero ? 0u : 8u), "DMA length", b, l);
	if (!zero)
		REF_ASSERT(roce_ld64(b + p.payload_off) == v, "written value", b, l);
	judge_rewrite(in, len, p0, b, l, &p, p0->bth_off + 12);
	free(b);
}

static void
try_ack_to_atomic_ack(const uint8_t *in, uint32_t len, const struct roce_pkt *p0)
{
	uint32_t cap = len + SLACK, l = len;
	uint8_t *b = copy_with_room(in, len, cap);
	struct roce_pkt p = *p0;
	bool ok = p0->opcode == ROCE_RC_ACKNOWLEDGE &&
		  roce_syndrome_kind(roce_get_syndrome(in, p0)) == ROCE_AETH_ACK;
	int rc;

	/* no room for the 8 bytes: refused, untouched */
	rc = roce_ack_to_atomic_ack(b, &l, len + 7, &p, 42);
	REF_ASSERT(rc != 0 && l == len && memcmp(b, in, len) == 0,
		   "ack_to_atomic_ack without room touched the frame", b, l);
	p = *p0;
	rc = roce_ack_to_atomic_ack(b, &l, cap, &p, 0xfeedfacecafebeefull);
	if (!ok) {
		REF_ASSERT(rc == -EINVAL && l == len && memcmp(b, in, len) == 0,
			   "refused ack_to_atomic_ack touched the frame", b, l);
		free(b);
		return;
	}
	REF_ASSERT(rc == 0 && l == len + 8, "ack_to_atomic_ack", b, l);
	REF_ASSERT(p.opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE, "opcode", b, l);
	REF_ASSERT(memcmp(b + p.bth_off + 12, in + p0->bth_off + 12, 4) == 0,
		   "AETH changed", b, l);
	REF_ASSERT(roce_ld64(b + p.bth_off + 16) == 0xfeedfacecafebeefull, "orig", b, l);
	judge_rewrite(in, len, p0, b, l, &p, p0->bth_off + 16);
	free(b);
}

static void
try_build_ack(const uint8_t *in, uint32_t len, const struct roce_pkt *p0,
	      bool with_orig, uint8_t syn)
{
	uint8_t *out = malloc(128);
	struct roce_pkt p;
	struct ref_frame r;
	int n;

	if (out == NULL)
		abort();
	n = roce_build_ack(out, 128, in, p0, 0xabcdef, syn, 0x123456, with_orig,
			   0x1122334455667788ull, &p);
	if (with_orig && roce_syndrome_kind(syn) != ROCE_AETH_ACK) {
		REF_ASSERT(n == -EINVAL, "ATOMIC ACK built with a NAK syndrome", out, 0);
		free(out);
		return;
	}
	REF_ASSERT(n > 0 && n <= 128, "build_ack failed", in, len);
	reparse_agrees(out, (uint32_t)n, &p);
	REF_ASSERT(ref_locate(out, (uint32_t)n, &r) && ref_icrc_ok(out, &r) &&
		   ref_ip4_cksum_ok(out, &r) && ref_udp_cksum_state(out, &r) >= 0,
		   "built ACK is not a valid frame", out, (uint32_t)n);
	REF_ASSERT(p.psn == 0xabcdef && roce_get_syndrome(out, &p) == syn &&
		   roce_get_msn(out, &p) == 0x123456, "built ACK fields", out, (uint32_t)n);
	REF_ASSERT(memcmp(out, in, p0->l3_off) == 0, "Ethernet header not kept",
		   out, (uint32_t)n);
	free(out);
}

static void
try_resign(const uint8_t *in, uint32_t len, const struct roce_pkt *p0)
{
	uint8_t *b = copy_with_room(in, len, len);
	struct roce_pkt p = *p0;

	/* an in-place edit (here: the PSN) and a re-sign */
	p.psn = p0->psn ^ 0x5a5a5a;
	roce_set_psn(b, &p, p.psn);
	roce_resign(b, &p);
	judge_rewrite(in, len, p0, b, len, &p, p0->bth_off + 8);
	free(b);
}

/* An mbuf over buf (no pool: only the wrappers' own fields are used). */
static void
fake_mbuf(struct rte_mbuf *m, uint8_t *buf, uint32_t data_len, uint32_t buf_len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = buf;
	m->buf_len = (uint16_t)buf_len;
	m->data_len = (uint16_t)data_len;
	m->pkt_len = data_len;
	m->nb_segs = 1;
}

static void
try_chained(const uint8_t *data, uint32_t len, int whole)
{
	struct rte_mbuf m[2];
	struct roce_pkt p;
	uint32_t k;
	uint8_t *a, *b;
	int st;

	if (len < 2)
		return;
	k = 1 + data[0] % (len - 1);
	a = copy_with_room(data, k, k);
	b = copy_with_room(data + k, len - k, len - k);
	fake_mbuf(&m[0], a, k, k);
	fake_mbuf(&m[1], b, len - k, len - k);
	m[0].pkt_len = len;
	m[0].nb_segs = 2;
	m[0].next = &m[1];
	st = roce_parse_mbuf(&m[0], &p);
	REF_ASSERT(st != ROCE_OK, "a chained frame parsed as contiguous", data, len);
	if (whole == ROCE_OK)
		REF_ASSERT(st == ROCE_ERR_SEGMENTED,
			   "a RoCE frame split in two segments taken for something else",
			   data, len);
	free(a);
	free(b);
}

static void
try_mbuf_rewrites(const uint8_t *in, uint32_t len, const struct roce_pkt *p0)
{
	uint32_t cap = len + SLACK, l = len;
	uint8_t *ref = copy_with_room(in, len, cap), *mb = copy_with_room(in, len, cap);
	struct roce_pkt p = *p0, q = *p0;
	struct rte_mbuf m;
	uint64_t v = 7;
	int rc, rm;

	if (cap > UINT16_MAX) {
		free(ref);
		free(mb);
		return;
	}
	fake_mbuf(&m, mb, len, cap);
	if (p0->oi->flags & ROCE_F_ATOMIC) {
		rc = roce_atomic_to_write(ref, &l, cap, &p, &v);
		rm = roce_mbuf_atomic_to_write(&m, &q, &v);
	} else {
		rc = roce_ack_to_atomic_ack(ref, &l, cap, &p, v);
		rm = roce_mbuf_ack_to_atomic_ack(&m, &q, v);
	}
	REF_ASSERT(rc == rm && (rc != 0 || (m.data_len == l && m.pkt_len == l &&
					   memcmp(mb, ref, l) == 0)),
		   "mbuf rewriter differs from the buffer one", mb, m.data_len);
	free(ref);
	free(mb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len = (uint32_t)size;
	struct roce_pkt p, q;
	struct ref_frame r;
	uint8_t *b;
	int st, st2;

	if (size > 65535)
		return -1;
	b = copy_with_room(data, len, len ? len : 1);
	st = roce_parse(b, len, &p);
	st2 = roce_parse_full(b, len, &q);
	REF_ASSERT(st == st2, "fast and full parser disagree", b, len);
	REF_ASSERT(memcmp(b, data, len) == 0, "parse wrote to the frame", b, len);
	roce_status_str(st);
	roce_status_name(st);
	try_chained(data, len, st);
	if (st != ROCE_OK) {
		free(b);
		return 0;
	}
	same_pkt(&p, &q, b, len);

	/* the offsets agree with an independent look and with each other */
	REF_ASSERT(ref_locate(b, len, &r), "parsed, but the reference cannot locate it",
		   b, len);
	REF_ASSERT(r.l3 == p.l3_off && r.l4 == p.l4_off && r.bth == p.bth_off &&
		   r.end == p.frame_len && r.ipv == p.ip_version, "offsets", b, len);
	REF_ASSERT(p.payload_off == p.bth_off + p.oi->hdr_len &&
		   p.payload_off + p.payload_len + 4u == p.frame_len &&
		   p.icrc_off + 4u == p.frame_len && p.pad <= p.payload_len &&
		   p.frame_len <= len, "parsed lengths", b, len);
	REF_ASSERT(p.opcode == b[p.bth_off] && p.qpn == roce_get_qpn(b, &p) &&
		   p.psn == roce_get_psn(b, &p), "parsed BTH fields", b, len);

	/* the ICRC: lib/roce's two paths and zlib agree; verify restores */
	REF_ASSERT(roce_icrc_verify(b, &p) == ref_icrc_ok(b, &r),
		   "ICRC verdict differs from zlib", b, len);
	REF_ASSERT(roce_icrc_compute(b, &p) == roce_icrc_compute_generic(b, &p),
		   "ICRC paths differ", b, len);
	REF_ASSERT(memcmp(b, data, len) == 0, "ICRC left the frame changed", b, len);

	for (uint32_t pmtu = 256; pmtu <= 4096; pmtu *= 4)
		REF_ASSERT(roce_req_psns(b, &p, pmtu) >= ((p.oi->flags & ROCE_F_REQUEST) != 0),
			   "request spans no PSN", b, len);
	if (rc_cm_is_cm(b, &p)) {
		struct rc_cm_msg m;

		REF_ASSERT(rc_cm_parse(b, &p, &m) == 0, "CM MAD not parsed", b, len);
	}

	try_atomic_to_write(b, len, &p, false);
	try_atomic_to_write(b, len, &p, true);
	if (p.oi->flags & ROCE_F_RESPONSE || p.opcode == ROCE_RC_ACKNOWLEDGE)
		try_ack_to_atomic_ack(b, len, &p);
	if (roce_has(p.oi, ROCE_HDR_AETH) || (p.oi->flags & ROCE_F_RESPONSE)) {
		uint8_t syn = data[size - 1] & 0x7f;

		try_build_ack(b, len, &p, false, syn);
		try_build_ack(b, len, &p, true, syn);
	}
	try_resign(b, len, &p);
	if ((p.oi->flags & ROCE_F_ATOMIC) || p.opcode == ROCE_RC_ACKNOWLEDGE)
		try_mbuf_rewrites(b, len, &p);
	free(b);
	return 0;
}
