/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_opcode.c — the one table that says what every RoCEv2 opcode carries.
 *
 * Why it exists: parsing is a lookup.  The parser, the rewriters and the
 * state machines ask this table which extension headers follow the BTH and
 * where, whether a payload is allowed, and whether the packet is a request
 * or a response; nobody else hard-codes header offsets.  Same idea as
 * Linux rxe's rxe_opcode.c, reduced to what RoCEv2 RC/UD and CNP need.
 *
 * Header order after the BTH is fixed by IBTA vol.1 §9.2:
 *   DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
 */
#include "roce.h"

/* Offsets from the BTH start. */
#define B ROCE_BTH_LEN

#define REQ (ROCE_F_VALID | ROCE_F_RC | ROCE_F_REQUEST | ROCE_F_ACKABLE)
#define RSP (ROCE_F_VALID | ROCE_F_RC | ROCE_F_RESPONSE)
#define PL ROCE_F_PAYLOAD
#define FIRST (ROCE_F_FIRST | ROCE_F_START_MSG)
#define ONLY (ROCE_F_ONLY | ROCE_F_START_MSG)

const struct roce_opcode_info roce_opcode_table[256] = {
	[ROCE_RC_SEND_FIRST] = {
		.name = "RC_SEND_FIRST", .flags = REQ | PL | ROCE_F_SEND | FIRST,
		.hdr_len = B, .psns = 1,
	},
	[ROCE_RC_SEND_MIDDLE] = {
		.name = "RC_SEND_MIDDLE",
		.flags = REQ | PL | ROCE_F_SEND | ROCE_F_MIDDLE,
		.hdr_len = B, .psns = 1,
	},
	[ROCE_RC_SEND_LAST] = {
		.name = "RC_SEND_LAST", .flags = REQ | PL | ROCE_F_SEND | ROCE_F_LAST,
		.hdr_len = B, .psns = 1,
	},
	[ROCE_RC_SEND_LAST_IMM] = {
		.name = "RC_SEND_LAST_IMM",
		.flags = REQ | PL | ROCE_F_SEND | ROCE_F_LAST,
		.hdr_len = B + ROCE_IMMDT_LEN, .off[ROCE_HDR_IMMDT] = B, .psns = 1,
	},
	[ROCE_RC_SEND_ONLY] = {
		.name = "RC_SEND_ONLY", .flags = REQ | PL | ROCE_F_SEND | ONLY,
		.hdr_len = B, .psns = 1,
	},
	[ROCE_RC_SEND_ONLY_IMM] = {
		.name = "RC_SEND_ONLY_IMM", .flags = REQ | PL | ROCE_F_SEND | ONLY,
		.hdr_len = B + ROCE_IMMDT_LEN, .off[ROCE_HDR_IMMDT] = B, .psns = 1,
	},
	[ROCE_RC_WRITE_FIRST] = {
		.name = "RC_WRITE_FIRST", .flags = REQ | PL | ROCE_F_WRITE | FIRST,
		.hdr_len = B + ROCE_RETH_LEN, .off[ROCE_HDR_RETH] = B, .psns = 1,
	},
	[ROCE_RC_WRITE_MIDDLE] = {
		.name = "RC_WRITE_MIDDLE",
		.flags = REQ | PL | ROCE_F_WRITE | ROCE_F_MIDDLE,
		.hdr_len = B, .psns = 1,
	},
	[ROCE_RC_WRITE_LAST] = {
		.name = "RC_WRITE_LAST",
		.flags = REQ | PL | ROCE_F_WRITE | ROCE_F_LAST,
		.hdr_len = B, .psns = 1,
	},
	[ROCE_RC_WRITE_LAST_IMM] = {
		.name = "RC_WRITE_LAST_IMM",
		.flags = REQ | PL | ROCE_F_WRITE | ROCE_F_LAST,
		.hdr_len = B + ROCE_IMMDT_LEN, .off[ROCE_HDR_IMMDT] = B, .psns = 1,
	},
	[ROCE_RC_WRITE_ONLY] = {
		.name = "RC_WRITE_ONLY", .flags = REQ | PL | ROCE_F_WRITE | ONLY,
		.hdr_len = B + ROCE_RETH_LEN, .off[ROCE_HDR_RETH] = B, .psns = 1,
	},
	[ROCE_RC_WRITE_ONLY_IMM] = {
		.name = "RC_WRITE_ONLY_IMM",
		.flags = REQ | PL | ROCE_F_WRITE | ONLY,
		.hdr_len = B + ROCE_RETH_LEN + ROCE_IMMDT_LEN,
		.off[ROCE_HDR_RETH] = B,
		.off[ROCE_HDR_IMMDT] = B + ROCE_RETH_LEN, .psns = 1,
	},
	[ROCE_RC_READ_REQUEST] = {
		.name = "RC_READ_REQUEST", .flags = REQ | ROCE_F_READ | ONLY,
		.hdr_len = B + ROCE_RETH_LEN, .off[ROCE_HDR_RETH] = B, .psns = 1,
	},
	[ROCE_RC_READ_RESPONSE_FIRST] = {
		.name = "RC_READ_RESPONSE_FIRST",
		.flags = RSP | PL | ROCE_F_READ | FIRST,
		.hdr_len = B + ROCE_AETH_LEN, .off[ROCE_HDR_AETH] = B,
	},
	[ROCE_RC_READ_RESPONSE_MIDDLE] = {
		.name = "RC_READ_RESPONSE_MIDDLE",
		.flags = RSP | PL | ROCE_F_READ | ROCE_F_MIDDLE,
		.hdr_len = B,
	},
	[ROCE_RC_READ_RESPONSE_LAST] = {
		.name = "RC_READ_RESPONSE_LAST",
		.flags = RSP | PL | ROCE_F_READ | ROCE_F_LAST,
		.hdr_len = B + ROCE_AETH_LEN, .off[ROCE_HDR_AETH] = B,
	},
	[ROCE_RC_READ_RESPONSE_ONLY] = {
		.name = "RC_READ_RESPONSE_ONLY",
		.flags = RSP | PL | ROCE_F_READ | ONLY,
		.hdr_len = B + ROCE_AETH_LEN, .off[ROCE_HDR_AETH] = B,
	},
	[ROCE_RC_ACKNOWLEDGE] = {
		.name = "RC_ACKNOWLEDGE", .flags = RSP | ONLY,
		.hdr_len = B + ROCE_AETH_LEN, .off[ROCE_HDR_AETH] = B,
	},
	[ROCE_RC_ATOMIC_ACKNOWLEDGE] = {
		.name = "RC_ATOMIC_ACKNOWLEDGE",
		.flags = RSP | ROCE_F_ATOMIC | ONLY,
		.hdr_len = B + ROCE_AETH_LEN + ROCE_ATOMIC_ACK_ETH_LEN,
		.off[ROCE_HDR_AETH] = B,
		.off[ROCE_HDR_ATOMIC_ACK_ETH] = B + ROCE_AETH_LEN,
	},
	[ROCE_RC_COMPARE_SWAP] = {
		.name = "RC_COMPARE_SWAP", .flags = REQ | ROCE_F_ATOMIC | ONLY,
		.hdr_len = B + ROCE_ATOMIC_ETH_LEN,
		.off[ROCE_HDR_ATOMIC_ETH] = B, .psns = 1,
	},
	[ROCE_RC_FETCH_ADD] = {
		.name = "RC_FETCH_ADD", .flags = REQ | ROCE_F_ATOMIC | ONLY,
		.hdr_len = B + ROCE_ATOMIC_ETH_LEN,
		.off[ROCE_HDR_ATOMIC_ETH] = B, .psns = 1,
	},
	[ROCE_RC_SEND_LAST_INV] = {
		.name = "RC_SEND_LAST_INV",
		.flags = REQ | PL | ROCE_F_SEND | ROCE_F_LAST,
		.hdr_len = B + ROCE_IETH_LEN, .off[ROCE_HDR_IETH] = B, .psns = 1,
	},
	[ROCE_RC_SEND_ONLY_INV] = {
		.name = "RC_SEND_ONLY_INV", .flags = REQ | PL | ROCE_F_SEND | ONLY,
		.hdr_len = B + ROCE_IETH_LEN, .off[ROCE_HDR_IETH] = B, .psns = 1,
	},
	[ROCE_RC_MASKED_COMPARE_SWAP] = {
		.name = "RC_MASKED_COMPARE_SWAP",
		.flags = REQ | ROCE_F_ATOMIC | ONLY,
		.hdr_len = B + ROCE_MASKED_ATOMIC_ETH_LEN,
		.off[ROCE_HDR_MASKED_ATOMIC_ETH] = B, .psns = 1,
	},
	[ROCE_UD_SEND_ONLY] = {
		.name = "UD_SEND_ONLY",
		.flags = ROCE_F_VALID | ROCE_F_UD | ROCE_F_REQUEST | PL |
			 ROCE_F_SEND | ONLY,
		.hdr_len = B + ROCE_DETH_LEN, .off[ROCE_HDR_DETH] = B, .psns = 1,
	},
	[ROCE_UD_SEND_ONLY_IMM] = {
		.name = "UD_SEND_ONLY_IMM",
		.flags = ROCE_F_VALID | ROCE_F_UD | ROCE_F_REQUEST | PL |
			 ROCE_F_SEND | ONLY,
		.hdr_len = B + ROCE_DETH_LEN + ROCE_IMMDT_LEN,
		.off[ROCE_HDR_DETH] = B,
		.off[ROCE_HDR_IMMDT] = B + ROCE_DETH_LEN, .psns = 1,
	},
	/* Congestion notification: BTH + 16 reserved bytes, no PSN meaning. */
	[ROCE_CNP] = {
		.name = "CNP", .flags = ROCE_F_VALID | ROCE_F_CNP | PL,
		.hdr_len = B, .fixed_payload = ROCE_CNP_PAYLOAD_LEN,
	},
};

/* Indexed by -status for errors, by status for the "not RoCE" kinds. */
static const char *const err_str[ROCE_ERR_NUM] = {
	[0] = "ok",
	[-ROCE_ERR_TRUNC_L2] = "truncated Ethernet header",
	[-ROCE_ERR_TRUNC_L3] = "truncated IP header",
	[-ROCE_ERR_BAD_IP_HDR] = "bad IP header (version or IHL)",
	[-ROCE_ERR_BAD_IP_LEN] = "IP length inconsistent with frame",
	[-ROCE_ERR_IP_FRAGMENT] = "fragmented UDP/4791 datagram",
	[-ROCE_ERR_TRUNC_L4] = "truncated UDP header",
	[-ROCE_ERR_BAD_UDP_LEN] = "UDP length inconsistent with IP length",
	[-ROCE_ERR_TRUNC_BTH] = "truncated BTH",
	[-ROCE_ERR_BAD_TVER] = "BTH transport version not 0",
	[-ROCE_ERR_UNKNOWN_OPCODE] = "unknown BTH opcode",
	[-ROCE_ERR_TRUNC_EXT] = "truncated extension headers",
	[-ROCE_ERR_BAD_PAD] = "pad count exceeds payload",
	[-ROCE_ERR_BAD_PAYLOAD] = "payload not allowed or wrong length",
	[-ROCE_ERR_SEGMENTED] = "frame not contiguous (chained mbuf)",
};

static const char *const err_name[ROCE_ERR_NUM] = {
	[0] = "ok",
	[-ROCE_ERR_TRUNC_L2] = "trunc_l2",
	[-ROCE_ERR_TRUNC_L3] = "trunc_l3",
	[-ROCE_ERR_BAD_IP_HDR] = "bad_ip_hdr",
	[-ROCE_ERR_BAD_IP_LEN] = "bad_ip_len",
	[-ROCE_ERR_IP_FRAGMENT] = "ip_fragment",
	[-ROCE_ERR_TRUNC_L4] = "trunc_l4",
	[-ROCE_ERR_BAD_UDP_LEN] = "bad_udp_len",
	[-ROCE_ERR_TRUNC_BTH] = "trunc_bth",
	[-ROCE_ERR_BAD_TVER] = "bad_tver",
	[-ROCE_ERR_UNKNOWN_OPCODE] = "unknown_opcode",
	[-ROCE_ERR_TRUNC_EXT] = "trunc_ext",
	[-ROCE_ERR_BAD_PAD] = "bad_pad",
	[-ROCE_ERR_BAD_PAYLOAD] = "bad_payload",
	[-ROCE_ERR_SEGMENTED] = "segmented",
};

static const char *const not_str[ROCE_NOT_NUM] = {
	[0] = "ok",
	[ROCE_NOT_IP] = "not IP",
	[ROCE_NOT_UDP] = "not UDP",
	[ROCE_NOT_ROCE_PORT] = "not UDP port 4791",
};

static const char *const not_name[ROCE_NOT_NUM] = {
	[0] = "ok",
	[ROCE_NOT_IP] = "not_ip",
	[ROCE_NOT_UDP] = "not_udp",
	[ROCE_NOT_ROCE_PORT] = "not_roce_port",
};

const char *
roce_status_str(int status)
{
	if (status <= 0 && status > -ROCE_ERR_NUM)
		return err_str[-status];
	if (status > 0 && status < ROCE_NOT_NUM)
		return not_str[status];
	return "unknown status";
}

const char *
roce_status_name(int status)
{
	if (status <= 0 && status > -ROCE_ERR_NUM)
		return err_name[-status];
	if (status > 0 && status < ROCE_NOT_NUM)
		return not_name[status];
	return "unknown";
}
