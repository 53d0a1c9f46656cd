/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ref.h — the fuzz harnesses' judge of a frame, written apart from
 * lib/roce.
 *
 * Why it exists: a harness that checked lib/roce's output with lib/roce
 * (roce_parse, roce_icrc_verify) would accept any bug the two share.  So
 * the oracles here locate the headers on their own, compute the ICRC with
 * zlib's crc32 over a masked copy built byte by byte (RoCEv2 Annex A17.3.3,
 * as tests/captures/README.md spells it), and add up the IPv4 and UDP
 * checksums in plain ones' complement arithmetic (RFC 1071).  They share
 * nothing with the code under test but the struct-free byte offsets of the
 * standards.
 */
#ifndef SWORD_FUZZ_REF_H
#define SWORD_FUZZ_REF_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The oracles themselves are not what the fuzzer should explore: their
 * comparisons would fill its feedback with features of the judge, not of
 * the code under test, and cost most of the time (table walks after every
 * call).  clang builds them without coverage instrumentation.
 */
#if defined(__clang__)
#define FUZZ_ORACLE __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_ORACLE
#endif

/* Where the headers of an Ethernet / [802.1Q] / IPv4|IPv6 / UDP frame are. */
struct ref_frame {
	uint32_t l3, l4, bth;   /* offsets of IP, UDP, BTH */
	uint32_t end;           /* end of the IP datagram (after the ICRC) */
	int ipv;                /* 4 or 6 */
};

/* Locate the headers; false unless it is IPv4 (no fragment) or IPv6 UDP to
 * 4791 whose IP and UDP lengths agree, fit len and leave room for a BTH
 * and an ICRC. */
FUZZ_ORACLE bool ref_locate(const uint8_t *f, uint32_t len, struct ref_frame *r);

/* The ICRC stored in the frame is zlib's crc32 of the masked datagram. */
FUZZ_ORACLE bool ref_icrc_ok(const uint8_t *f, const struct ref_frame *r);

/* IPv4 header checksum verifies (true for IPv6: it has none). */
FUZZ_ORACLE bool ref_ip4_cksum_ok(const uint8_t *f, const struct ref_frame *r);

/* UDP checksum: 0 = absent (zero field), 1 = verifies, -1 = wrong. */
FUZZ_ORACLE int ref_udp_cksum_state(const uint8_t *f, const struct ref_frame *r);

/* Compute and store a real UDP checksum (to build inputs that carry one). */
FUZZ_ORACLE void ref_udp_cksum_set(uint8_t *f, const struct ref_frame *r);

/*
 * Everything an emitted frame must be (I1): locatable, known BTH opcode
 * layout is not judged here (the caller re-parses), IPv4 checksum, ICRC,
 * UDP checksum absent or right.  NULL if valid, else what is wrong.
 */
const char *ref_check_frame(const uint8_t *f, uint32_t len);

/* Print what went wrong with a hex dump of the frame and abort(): the
 * fuzzer records the input as a crash. */
FUZZ_ORACLE void ref_fail(const char *where, int line, const char *what,
	      const uint8_t *f, uint32_t len) __attribute__((noreturn));

#define REF_ASSERT(cond, what, f, len) do { \
	if (!(cond)) \
		ref_fail(__FILE__, __LINE__, what " [" #cond "]", (f), (len)); \
} while (0)

#endif /* SWORD_FUZZ_REF_H */
