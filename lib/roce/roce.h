/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce.h — the RoCEv2 wire format: opcode table, header layouts, parser,
 * ICRC, and in-place rewriters.
 *
 * Why it exists: every function of swordd (pass-through, atomic replacement,
 * remapping, steering) starts by finding the BTH and its extension headers
 * and ends by emitting a frame a real RNIC accepts.  Keeping all wire
 * knowledge here, table-driven like Linux rxe's rxe_opcode.c, means the
 * state machines in lib/sword never touch byte offsets themselves.
 *
 * Usable with no ports and no EAL: everything works on a plain byte buffer;
 * the rte_mbuf wrappers only add length bookkeeping.
 *
 * Conventions: header structs are in network byte order (rte_be*_t), packed,
 * and may be unaligned; use the accessors.  "frame" is the Ethernet frame
 * starting at the destination MAC.
 */
#ifndef SWORD_ROCE_H
#define SWORD_ROCE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

struct rte_mbuf;

#define ROCE_UDP_PORT 4791

/* ---------------------------------------------------------------------- */
/* Unaligned big-endian loads and stores, for every layer that reads wire
 * fields.  16-bit ones are spelled out byte by byte: compilers turn them
 * into one move and a byte swap, where rte_be_to_cpu_16 of a non-constant
 * is an inline-asm xchg the optimizer cannot see through. */

static inline uint16_t
roce_ld16(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint16_t)((b[0] << 8) | b[1]);
}

static inline uint32_t
roce_ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_32(v);
}

static inline uint64_t
roce_ld64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_64(v);
}

static inline void
roce_st16(void *p, uint16_t v)
{
	uint8_t *b = (uint8_t *)p;

	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void
roce_st32(void *p, uint32_t host)
{
	uint32_t v = rte_cpu_to_be_32(host);

	memcpy(p, &v, sizeof(v));
}

static inline void
roce_st64(void *p, uint64_t host)
{
	uint64_t v = rte_cpu_to_be_64(host);

	memcpy(p, &v, sizeof(v));
}

/* ---------------------------------------------------------------------- */
/* Opcodes (IBTA vol.1 §9.2; 0x18 is the ConnectX masked compare-and-swap) */

enum roce_opcode {
	ROCE_RC_SEND_FIRST = 0x00,
	ROCE_RC_SEND_MIDDLE = 0x01,
	ROCE_RC_SEND_LAST = 0x02,
	ROCE_RC_SEND_LAST_IMM = 0x03,
	ROCE_RC_SEND_ONLY = 0x04,
	ROCE_RC_SEND_ONLY_IMM = 0x05,
	ROCE_RC_WRITE_FIRST = 0x06,
	ROCE_RC_WRITE_MIDDLE = 0x07,
	ROCE_RC_WRITE_LAST = 0x08,
	ROCE_RC_WRITE_LAST_IMM = 0x09,
	ROCE_RC_WRITE_ONLY = 0x0a,
	ROCE_RC_WRITE_ONLY_IMM = 0x0b,
	ROCE_RC_READ_REQUEST = 0x0c,
	ROCE_RC_READ_RESPONSE_FIRST = 0x0d,
	ROCE_RC_READ_RESPONSE_MIDDLE = 0x0e,
	ROCE_RC_READ_RESPONSE_LAST = 0x0f,
	ROCE_RC_READ_RESPONSE_ONLY = 0x10,
	ROCE_RC_ACKNOWLEDGE = 0x11,
	ROCE_RC_ATOMIC_ACKNOWLEDGE = 0x12,
	ROCE_RC_COMPARE_SWAP = 0x13,
	ROCE_RC_FETCH_ADD = 0x14,
	ROCE_RC_SEND_LAST_INV = 0x16,
	ROCE_RC_SEND_ONLY_INV = 0x17,
	ROCE_RC_MASKED_COMPARE_SWAP = 0x18, /* vendor: 44-byte AtomicETH */
	ROCE_UD_SEND_ONLY = 0x64,
	ROCE_UD_SEND_ONLY_IMM = 0x65,
	ROCE_CNP = 0x81,
};

/* ---------------------------------------------------------------------- */
/* Header layouts (network byte order, packed) */

#define ROCE_BTH_LEN 12
#define ROCE_RETH_LEN 16
#define ROCE_AETH_LEN 4
#define ROCE_ATOMIC_ETH_LEN 28
#define ROCE_MASKED_ATOMIC_ETH_LEN 44
#define ROCE_ATOMIC_ACK_ETH_LEN 8
#define ROCE_IMMDT_LEN 4
#define ROCE_IETH_LEN 4
#define ROCE_DETH_LEN 8
#define ROCE_CNP_PAYLOAD_LEN 16
#define ROCE_ICRC_LEN 4

struct roce_bth {
	uint8_t opcode;
	uint8_t flags;     /* SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	rte_be32_t fb_qpn; /* FECN:1 BECN:1 resv:6 | DestQP:24 */
	rte_be32_t ack_psn; /* AckReq:1 resv:7 | PSN:24 */
} __rte_packed;

#define ROCE_BTH_SE 0x80
#define ROCE_BTH_MIG 0x40
#define ROCE_BTH_PAD_SHIFT 4
#define ROCE_BTH_PAD_MASK 0x30
#define ROCE_BTH_TVER_MASK 0x0f
#define ROCE_BTH_FECN 0x80000000u
#define ROCE_BTH_BECN 0x40000000u
#define ROCE_BTH_ACKREQ 0x80000000u
#define ROCE_QPN_MASK 0x00ffffffu
#define ROCE_PSN_MASK 0x00ffffffu

struct roce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t dma_len;
} __rte_packed;

struct roce_atomic_eth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;

/* ConnectX extended (masked) atomic, opcode 0x18. */
struct roce_masked_atomic_eth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap;
	rte_be64_t compare;
	rte_be64_t swap_mask;
	rte_be64_t compare_mask;
} __rte_packed;

struct roce_aeth {
	rte_be32_t syn_msn; /* Syndrome:8 | MSN:24 */
} __rte_packed;

struct roce_atomic_ack_eth {
	rte_be64_t orig;
} __rte_packed;

struct roce_deth {
	rte_be32_t qkey;
	rte_be32_t src_qp; /* resv:8 | SrcQP:24 */
} __rte_packed;

/* AETH syndrome (IBTA 9.7.5.1): bits 6..5 say ACK/RNR/NAK. */
enum roce_aeth_kind {
	ROCE_AETH_ACK = 0,
	ROCE_AETH_RNR_NAK = 1,
	ROCE_AETH_RESERVED = 2,
	ROCE_AETH_NAK = 3,
};

enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

#define ROCE_AETH_CREDIT_INVALID 0x1f

static inline uint8_t roce_aeth_syndrome(uint32_t syn_msn_host) { return syn_msn_host >> 24; }
static inline enum roce_aeth_kind roce_syndrome_kind(uint8_t syn) { return (syn >> 5) & 3; }
/* ACK: credit count; RNR NAK: timer; NAK: enum roce_nak_code. */
static inline uint8_t roce_syndrome_value(uint8_t syn) { return syn & 0x1f; }
static inline uint8_t roce_syndrome_make(enum roce_aeth_kind k, uint8_t v) { return (uint8_t)((k << 5) | (v & 0x1f)); }

/* ---------------------------------------------------------------------- */
/* The opcode table */

enum roce_hdr {
	ROCE_HDR_RETH,
	ROCE_HDR_AETH,
	ROCE_HDR_ATOMIC_ETH,
	ROCE_HDR_MASKED_ATOMIC_ETH,
	ROCE_HDR_ATOMIC_ACK_ETH,
	ROCE_HDR_IMMDT,
	ROCE_HDR_IETH,
	ROCE_HDR_DETH,
	ROCE_HDR_NUM
};

/* roce_opcode_info.flags */
#define ROCE_F_VALID       (1u << 0)
#define ROCE_F_REQUEST     (1u << 1)  /* requester → responder */
#define ROCE_F_RESPONSE    (1u << 2)  /* responder → requester */
#define ROCE_F_PAYLOAD     (1u << 3)  /* may carry payload */
#define ROCE_F_ACKABLE     (1u << 4)  /* a response acknowledges it (RC requests) */
#define ROCE_F_SEND        (1u << 5)
#define ROCE_F_WRITE       (1u << 6)
#define ROCE_F_READ        (1u << 7)  /* READ request: PSNs = ceil(len/PMTU) */
#define ROCE_F_ATOMIC      (1u << 8)  /* CAS, FAA, masked CAS */
#define ROCE_F_FIRST       (1u << 9)
#define ROCE_F_MIDDLE      (1u << 10)
#define ROCE_F_LAST        (1u << 11)
#define ROCE_F_ONLY        (ROCE_F_FIRST | ROCE_F_LAST)
#define ROCE_F_RC          (1u << 12)
#define ROCE_F_UD          (1u << 13)
#define ROCE_F_CNP         (1u << 14)
#define ROCE_F_START_MSG   (1u << 15) /* FIRST or ONLY: starts a message */

struct roce_opcode_info {
	const char *name;
	uint32_t flags;
	uint8_t hdr_len;               /* BTH + all extension headers */
	uint8_t off[ROCE_HDR_NUM];     /* from BTH start; 0 = absent */
	uint8_t fixed_payload;         /* exact payload length if nonzero (CNP: 16) */
	uint8_t psns;                  /* PSNs a request consumes (READ: see roce_req_psns) */
};

extern const struct roce_opcode_info roce_opcode_table[256];

static inline const struct roce_opcode_info *
roce_opcode(uint8_t opcode)
{
	return &roce_opcode_table[opcode];
}

static inline bool
roce_has(const struct roce_opcode_info *oi, enum roce_hdr h)
{
	return oi->off[h] != 0;
}

/* ---------------------------------------------------------------------- */
/* Parser */

/*
 * Classification of a frame.  Values < 0 are "RoCE but malformed" (counted
 * by reason, passed unchanged); ROCE_OK is a well-formed RoCEv2 frame;
 * values > 0 are "not RoCEv2" (plain pass-through, nothing wrong with it).
 */
enum roce_status {
	/* malformed RoCEv2 (or an IP/UDP header too broken to tell) */
	ROCE_ERR_TRUNC_L2 = -1,       /* shorter than Ethernet (+VLAN) */
	ROCE_ERR_TRUNC_L3 = -2,       /* IP header cut off by the buffer */
	ROCE_ERR_BAD_IP_HDR = -3,     /* IHL < 5, version mismatch */
	ROCE_ERR_BAD_IP_LEN = -4,     /* IP total/payload length vs buffer */
	ROCE_ERR_IP_FRAGMENT = -5,    /* fragmented UDP/4791: cannot be RoCE */
	ROCE_ERR_TRUNC_L4 = -6,       /* UDP header cut off */
	ROCE_ERR_BAD_UDP_LEN = -7,    /* UDP length vs IP length */
	ROCE_ERR_TRUNC_BTH = -8,      /* less than BTH + ICRC */
	ROCE_ERR_BAD_TVER = -9,       /* BTH transport version != 0 */
	ROCE_ERR_UNKNOWN_OPCODE = -10,
	ROCE_ERR_TRUNC_EXT = -11,     /* extension headers cut off */
	ROCE_ERR_BAD_PAD = -12,       /* pad count exceeds payload */
	ROCE_ERR_BAD_PAYLOAD = -13,   /* payload where none allowed, wrong fixed length */
	ROCE_ERR_SEGMENTED = -14,     /* mbuf chain: frame not contiguous */
	ROCE_ERR_NUM = 15,            /* number of error reasons incl. 0 slot */

	ROCE_OK = 0,

	/* not RoCEv2: pass through untouched */
	ROCE_NOT_IP = 1,              /* non-IP ethertype (ARP, LLDP, …) */
	ROCE_NOT_UDP = 2,             /* IP but not UDP */
	ROCE_NOT_ROCE_PORT = 3,       /* UDP to another port */
	ROCE_NOT_NUM = 4,
};

const char *roce_status_str(int status);   /* "truncated BTH", … */
const char *roce_status_name(int status);  /* "trunc_bth", … (counter keys) */

/* The parsed view of one frame.  Offsets are from the frame start. */
struct roce_pkt {
	const struct roce_opcode_info *oi;
	uint16_t l3_off;        /* IP header */
	uint16_t l4_off;        /* UDP header */
	uint16_t bth_off;
	uint16_t payload_off;   /* after the extension headers */
	uint16_t payload_len;   /* including pad bytes */
	uint16_t icrc_off;
	uint16_t frame_len;     /* end of the ICRC = end of IP datagram */
	uint16_t vlan_tci;      /* host order; valid if has_vlan */
	uint8_t has_vlan;
	uint8_t ip_version;     /* 4 or 6 */
	uint8_t opcode;
	uint8_t pad;
	uint32_t qpn;           /* host order, 24 bit */
	uint32_t psn;           /* host order, 24 bit */
	uint32_t src_ip4;       /* network order; IPv4 only */
	uint32_t dst_ip4;       /* network order; IPv4 only */
};

/*
 * Parse a frame of len bytes (len may exceed the IP datagram: Ethernet
 * padding/FCS bytes after it are ignored).  Never reads outside
 * frame[0..len).  On ROCE_OK all of *p is valid; on other results only the
 * offsets reached so far are.
 */
int roce_parse(const uint8_t *frame, uint32_t len, struct roce_pkt *p);

/* Same, on the first segment of an mbuf (ROCE_ERR_SEGMENTED if chained). */
int roce_parse_mbuf(const struct rte_mbuf *m, struct roce_pkt *p);

/* Header pointers for a parsed frame (NULL if the opcode has no such header). */
static inline void *
roce_hdr(uint8_t *frame, const struct roce_pkt *p, enum roce_hdr h)
{
	return p->oi->off[h] ? frame + p->bth_off + p->oi->off[h] : NULL;
}

static inline struct roce_bth *
roce_bth(uint8_t *frame, const struct roce_pkt *p)
{
	return (struct roce_bth *)(frame + p->bth_off);
}

/* PSNs a request consumes: ceil(dma_len / pmtu) for READ (at least 1). */
uint32_t roce_req_psns(const uint8_t *frame, const struct roce_pkt *p, uint32_t pmtu);

/* 24-bit PSN arithmetic: a - b as a signed distance in [-2^23, 2^23). */
static inline int32_t
roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t
roce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* ---------------------------------------------------------------------- */
/* Field accessors on a parsed frame (host order in and out) */

/* (inline: they sit on every packet's path; AETH ones require an AETH) */
static inline uint8_t
roce_get_opcode(const uint8_t *frame, const struct roce_pkt *p)
{
	return frame[p->bth_off];
}

static inline uint32_t
roce_get_psn(const uint8_t *frame, const struct roce_pkt *p)
{
	return roce_ld32(frame + p->bth_off + 8) & ROCE_PSN_MASK;
}

static inline void
roce_set_psn(uint8_t *frame, const struct roce_pkt *p, uint32_t psn)
{
	uint8_t *w = frame + p->bth_off + 8;

	roce_st32(w, (roce_ld32(w) & ~ROCE_PSN_MASK) | (psn & ROCE_PSN_MASK));
}

static inline uint32_t
roce_get_qpn(const uint8_t *frame, const struct roce_pkt *p)
{
	return roce_ld32(frame + p->bth_off + 4) & ROCE_QPN_MASK;
}

static inline void
roce_set_qpn(uint8_t *frame, const struct roce_pkt *p, uint32_t qpn)
{
	uint8_t *w = frame + p->bth_off + 4;

	roce_st32(w, (roce_ld32(w) & ~ROCE_QPN_MASK) | (qpn & ROCE_QPN_MASK));
}

/* Both at once (a remapped frame gets a new QPN and PSN): BTH bytes 4..11
 * as one word, keeping the reserved byte and the AckReq byte. */
static __rte_always_inline void
roce_set_qpn_psn(uint8_t *frame, const struct roce_pkt *p, uint32_t qpn, uint32_t psn)
{
	uint8_t *w = frame + p->bth_off + 4;
	uint64_t v;

	memcpy(&v, w, sizeof(v));
	v = (rte_be_to_cpu_64(v) & UINT64_C(0xff000000ff000000)) |
	    ((uint64_t)(qpn & ROCE_QPN_MASK) << 32) | (psn & ROCE_PSN_MASK);
	v = rte_cpu_to_be_64(v);
	memcpy(w, &v, sizeof(v));
}

static inline bool
roce_get_ackreq(const uint8_t *frame, const struct roce_pkt *p)
{
	return (frame[p->bth_off + 8] & 0x80) != 0;
}

static inline uint8_t
roce_get_syndrome(const uint8_t *frame, const struct roce_pkt *p)
{
	return frame[p->bth_off + p->oi->off[ROCE_HDR_AETH]];
}

static inline uint32_t
roce_get_msn(const uint8_t *frame, const struct roce_pkt *p)
{
	return roce_ld32(frame + p->bth_off + p->oi->off[ROCE_HDR_AETH]) &
	       ROCE_PSN_MASK;
}

static inline void
roce_set_aeth(uint8_t *frame, const struct roce_pkt *p, uint8_t syndrome,
	      uint32_t msn)
{
	roce_st32(frame + p->bth_off + p->oi->off[ROCE_HDR_AETH],
	     ((uint32_t)syndrome << 24) | (msn & ROCE_PSN_MASK));
}


/* ---------------------------------------------------------------------- */
/* ICRC (RoCEv2 Annex A17.3.3): CRC-32 (Ethernet polynomial) */

/*
 * ICRC over the masked pseudo-frame: 8 bytes 0xFF, IP header with
 * (v4) TOS, TTL, checksum / (v6) traffic class, flow label, hop limit set to
 * ones, UDP checksum set to ones, BTH byte 4 (FECN/BECN/resv6) set to ones,
 * and everything up to the ICRC.  Returns the value as stored on the wire
 * interpreted little-endian (i.e. compare with rte_le_to_cpu_32 of the
 * trailing 4 bytes).
 *
 * On x86 with PCLMULQDQ the masks are applied while folding (no copy, the
 * frame is not touched); elsewhere the masked bytes and the 8 bytes before
 * the IP header are overwritten for one rte_net_crc_calc and restored, so
 * callers must own the buffer.  See roce_icrc.c for why and the numbers.
 */
uint32_t roce_icrc_compute(uint8_t *frame, const struct roce_pkt *p);
bool roce_icrc_verify(uint8_t *frame, const struct roce_pkt *p);
void roce_icrc_update(uint8_t *frame, const struct roce_pkt *p);

/*
 * The same for a burst: n frames (any n), frames[i] parsed as pkts[i].
 * Several frames at once take fewer instructions per frame (with AVX-512)
 * or overlap their chains of carry-less multiplies, and a frame's re-sign
 * no longer waits on its rewrite's stores (roce_icrc_burst.c has the
 * numbers), so a worker stages its burst: parse all,
 * roce_icrc_verify_burst, decide, rewrite the good ones with the *_defer
 * rewriters below, and roce_icrc_sign_burst what it rewrote.
 *
 * roce_icrc_verify_burst: ok_out[i] = roce_icrc_verify(frames[i], pkts[i]);
 *   returns how many are good.
 * roce_icrc_sign_burst: for each i with sign[i], roce_icrc_update and, if
 *   the sender used a UDP checksum (it covers the ICRC), that too, as the
 *   rewriters do; returns how many it signed.  sign[] is required: pass
 *   verify_burst's ok_out with the frames you did not change cleared.  A
 *   frame whose ICRC was wrong on arrival must never be re-signed (it
 *   would turn corruption into a valid packet), and carrying its verdict
 *   to this call is how a burst that mixes good and bad frames keeps that.
 * roce_icrc_compute_burst: icrc_out[i] = roce_icrc_compute(frames[i], pkts[i]).
 */
uint32_t roce_icrc_verify_burst(uint8_t *const frames[],
				const struct roce_pkt *const pkts[], uint32_t n,
				bool ok_out[]);
uint32_t roce_icrc_sign_burst(uint8_t *const frames[],
			      const struct roce_pkt *const pkts[], uint32_t n,
			      const bool sign[]);
void roce_icrc_compute_burst(uint8_t *const frames[],
			     const struct roce_pkt *const pkts[], uint32_t n,
			     uint32_t icrc_out[]);

/*
 * Re-sign a frame whose ICRC was valid after a change that lies within
 * the 8 bytes at off (l3_off <= off, off + 8 <= icrc_off), the frame's
 * length unchanged: delta is the XOR of those 8 bytes before and after
 * the change, as memcpy loads them (memory order).  The new ICRC is
 * derived from the stored one (CRC linearity), without reading the
 * frame: cheaper than roce_icrc_update, and a frame whose ICRC was wrong
 * stays wrong by the same error.  (Without PCLMULQDQ, or with the
 * rte_net_crc path forced, it is roce_icrc_update, which recomputes it
 * from the frame.)  0, or -EINVAL for a window outside those bounds.
 */
int roce_icrc_patch(uint8_t *frame, const struct roce_pkt *p, uint32_t off,
		    uint64_t delta);

/*
 * Re-signing a frame whose addressing was rewritten (connection
 * remapping: IPv4 addresses, UDP header, BTH, the AETH after it) by
 * patching its ICRC instead of computing it over the whole frame, which
 * for a READ response of 1 KB is most of what forwarding it costs.
 * roce_hdr_words_take keeps those words of a frame whose ICRC is good;
 * after changes within them only (its length unchanged),
 * roce_resign_headers patches the ICRC for each word that changed (a
 * frame that was bad stays bad by the same error) and redoes a UDP
 * checksum.  roce_hdr_words_patchable: the frame has them (IPv4, 16
 * bytes from the BTH on before the ICRC) and patching is cheaper than
 * computing (PCLMULQDQ); else take nothing and re-sign with roce_resign.
 */
struct roce_hdr_words {
	uint64_t w[4];   /* IPv4 addresses, UDP header, BTH 0-7, BTH 8-15 */
};

bool roce_hdr_words_patchable(const struct roce_pkt *p);

static inline void
roce_hdr_words_take(const uint8_t *frame, const struct roce_pkt *p,
		    struct roce_hdr_words *h)
{
	memcpy(&h->w[0], frame + p->l3_off + 12, 8);
	memcpy(&h->w[1], frame + p->l4_off, 8);
	memcpy(&h->w[2], frame + p->bth_off, 8);
	memcpy(&h->w[3], frame + p->bth_off + 8, 8);
}

void roce_resign_headers(uint8_t *frame, const struct roce_pkt *p,
			 const struct roce_hdr_words *before);

/* The ICRC implementation in use, e.g. "mb4-avx" (for the start-up log). */
const char *roce_icrc_impl(void);

/*
 * Re-sign a frame edited in place without a length change (a PSN, AckReq,
 * a va): recompute the ICRC and, if the sender used one, the UDP checksum,
 * which covers the edited bytes and the ICRC.  Every in-place edit of a
 * frame that is forwarded ends with this, never with roce_icrc_update()
 * alone: a UDP checksum left from before the edit no longer matches, and a
 * receiver that checks it (the Linux UDP stack under rxe) drops the frame.
 * A zero UDP checksum (what RoCEv2 senders send over IPv4) stays zero.
 * Only for frames whose arriving ICRC verified (I7): the ICRC covers every
 * byte the UDP checksum does except the checksum itself and BTH byte 4, so
 * recomputing it cannot pass off a corrupted header or payload as good.
 */
void roce_resign(uint8_t *frame, const struct roce_pkt *p);

/* Select the fastest rte_net_crc implementation this CPU allows (idempotent). */
void roce_crc_init(void);

/* IPv4 header checksum recompute (rte_ipv4_cksum). No-op for IPv6. */
void roce_ip_cksum_update(uint8_t *frame, const struct roce_pkt *p);

/* ---------------------------------------------------------------------- */
/* In-place rewriters.  Each works on a parsed, well-formed frame, keeps
 * every byte it does not have to change, fixes IP/UDP lengths, the IPv4
 * checksum and the ICRC, and updates *p (re-parse not needed).  The
 * buffer must have room for growth (cap = bytes available from frame
 * start).  Return 0 or a negative errno (-EINVAL wrong opcode, -ENOSPC).
 * Bytes after the IP datagram (Ethernet padding) are moved along.
 * *frame_len_io is the buffer's data length, updated. */

/*
 * CAS / FAA / masked CAS → RDMA WRITE_ONLY to the same va/rkey.
 * write_value != NULL: 8-byte payload (DMA length 8), frame −4 bytes
 *   (−20 for masked CAS).
 * write_value == NULL: zero-length WRITE (DMA length 0, no payload): a WRITE
 *   that cannot change memory, for failed CAS.
 * BTH (PSN, QPN, AckReq, pkey, flags) is kept.
 */
int roce_atomic_to_write(uint8_t *frame, uint32_t *frame_len_io, uint32_t cap,
			 struct roce_pkt *p, const uint64_t *write_value);

/* ACKNOWLEDGE → ATOMIC_ACKNOWLEDGE carrying orig (frame +8 bytes).
 * The AETH (syndrome incl. credits, MSN) is kept. */
int roce_ack_to_atomic_ack(uint8_t *frame, uint32_t *frame_len_io, uint32_t cap,
			   struct roce_pkt *p, uint64_t orig);

/* The same two rewrites leaving the ICRC (and a UDP checksum, which
 * covers it) stale, for a caller that re-signs the burst afterwards with
 * roce_icrc_sign_burst. */
int roce_atomic_to_write_defer(uint8_t *frame, uint32_t *frame_len_io,
			       uint32_t cap, struct roce_pkt *p,
			       const uint64_t *write_value);
int roce_ack_to_atomic_ack_defer(uint8_t *frame, uint32_t *frame_len_io,
				 uint32_t cap, struct roce_pkt *p,
				 uint64_t orig);

/*
 * Synthesize an ACK (with_orig == false) or ATOMIC ACK from a template
 * frame (typically the server's ACK being expanded): L2/L3/L4 headers and
 * BTH copied from the template; opcode, PSN, AETH syndrome+MSN and orig
 * set; lengths, checksum and ICRC computed.  out must hold 128 bytes.
 * Returns the frame length written, or negative errno.  *out_p is filled.
 */
int roce_build_ack(uint8_t *out, uint32_t cap, const uint8_t *tmpl,
		   const struct roce_pkt *tmpl_p, uint32_t psn, uint8_t syndrome,
		   uint32_t msn, bool with_orig, uint64_t orig,
		   struct roce_pkt *out_p);
/* The same, its ICRC (and a non-zero UDP checksum) not computed: for a
 * caller that changes it further and signs it once (roce_resign). */
int roce_build_ack_unsigned(uint8_t *out, uint32_t cap, const uint8_t *tmpl,
			    const struct roce_pkt *tmpl_p, uint32_t psn, uint8_t syndrome,
			    uint32_t msn, bool with_orig, uint64_t orig,
			    struct roce_pkt *out_p);

/*
 * Synthesize a zero-length RDMA WRITE_ONLY (AckReq set) from the headers of
 * a request (tmpl[0..hdrs): L2 to the BTH of an IPv4 frame, IP and UDP
 * headers at l3_off, l4_off), to qpn at psn: lengths, IPv4 checksum and
 * ICRC computed, no UDP checksum.  It executes nothing (IBTA C9-88 allows
 * a zero-length WRITE of any address and key).  Returns the frame length,
 * or negative errno; *out_p is filled.
 */
int roce_build_zero_write(uint8_t *out, uint32_t cap, const uint8_t *tmpl,
			  uint32_t hdrs, uint32_t l3_off, uint32_t l4_off,
			  uint32_t qpn, uint32_t psn, struct roce_pkt *out_p);

/* mbuf conveniences over the above (single-segment mbufs). */
int roce_mbuf_atomic_to_write(struct rte_mbuf *m, struct roce_pkt *p,
			      const uint64_t *write_value);
int roce_mbuf_ack_to_atomic_ack(struct rte_mbuf *m, struct roce_pkt *p,
				uint64_t orig);

#endif /* SWORD_ROCE_H */
