/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ref.c — an independent judge of RoCEv2 frames (see fuzz_ref.h).
 * Deliberately plain: byte loads, one loop per checksum, a copy for the
 * ICRC; no DPDK, no lib/roce.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz_ref.h"

FUZZ_ORACLE static uint32_t
be16(const uint8_t *p)
{
	return ((uint32_t)p[0] << 8) | p[1];
}

FUZZ_ORACLE bool
ref_locate(const uint8_t *f, uint32_t len, struct ref_frame *r)
{
	uint32_t l3 = 14, type, udp_len;

	if (len < 14)
		return false;
	type = be16(f + 12);
	if (type == 0x8100) {
		if (len < 18)
			return false;
		type = be16(f + 16);
		l3 = 18;
	}
	memset(r, 0, sizeof(*r));
	r->l3 = l3;
	if (type == 0x0800) {
		uint32_t ihl, tot;

		if (len < l3 + 20 || (f[l3] >> 4) != 4)
			return false;
		ihl = (f[l3] & 15u) * 4;
		tot = be16(f + l3 + 2);
		if (ihl < 20 || f[l3 + 9] != 17 || tot < ihl + 8 || l3 + tot > len ||
		    (be16(f + l3 + 6) & 0x3fff) != 0)
			return false;
		r->ipv = 4;
		r->l4 = l3 + ihl;
		r->end = l3 + tot;
	} else if (type == 0x86dd) {
		uint32_t plen;

		if (len < l3 + 40 || (f[l3] >> 4) != 6 || f[l3 + 6] != 17)
			return false;
		plen = be16(f + l3 + 4);
		if (plen < 8 || l3 + 40 + plen > len)
			return false;
		r->ipv = 6;
		r->l4 = l3 + 40;
		r->end = l3 + 40 + plen;
	} else {
		return false;
	}
	udp_len = be16(f + r->l4 + 4);
	if (be16(f + r->l4 + 2) != 4791 || udp_len != r->end - r->l4 ||
	    udp_len < 8 + 12 + 4)
		return false;
	r->bth = r->l4 + 8;
	return true;
}

FUZZ_ORACLE bool
ref_icrc_ok(const uint8_t *f, const struct ref_frame *r)
{
	static uint8_t buf[8 + 65536];
	uint32_t n = r->end - 4 - r->l3, l4 = r->l4 - r->l3, bth = r->bth - r->l3;
	uint32_t stored;
	uint8_t *ip = buf + 8;

	memset(buf, 0xff, 8);
	memcpy(ip, f + r->l3, n);
	if (r->ipv == 4) {
		ip[1] = 0xff;                   /* TOS */
		ip[8] = 0xff;                   /* TTL */
		ip[10] = ip[11] = 0xff;         /* header checksum */
	} else {
		ip[0] |= 0x0f;                  /* traffic class, low nibble of byte 0 */
		ip[1] = ip[2] = ip[3] = 0xff;   /* traffic class, flow label */
		ip[7] = 0xff;                   /* hop limit */
	}
	ip[l4 + 6] = ip[l4 + 7] = 0xff;         /* UDP checksum */
	ip[bth + 4] = 0xff;                     /* FECN, BECN, resv6 */
	stored = (uint32_t)f[r->end - 4] | ((uint32_t)f[r->end - 3] << 8) |
		 ((uint32_t)f[r->end - 2] << 16) | ((uint32_t)f[r->end - 1] << 24);
	return (uint32_t)crc32(0L, buf, 8 + n) == stored;
}

/* Ones' complement sum of n bytes (odd tail padded with a zero byte). */
FUZZ_ORACLE static uint32_t
sum16(uint32_t acc, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		acc += be16(p + i);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return acc;
}

FUZZ_ORACLE static uint16_t
fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

FUZZ_ORACLE bool
ref_ip4_cksum_ok(const uint8_t *f, const struct ref_frame *r)
{
	if (r->ipv != 4)
		return true;
	return fold(sum16(0, f + r->l3, r->l4 - r->l3)) == 0xffff;
}

/* The UDP sum over pseudo-header and datagram, checksum field included. */
FUZZ_ORACLE static uint16_t
udp_sum(const uint8_t *f, const struct ref_frame *r)
{
	uint32_t udp_len = r->end - r->l4, acc = 0;

	if (r->ipv == 4) {
		acc = sum16(acc, f + r->l3 + 12, 8);    /* source, destination */
		acc += 17 + udp_len;
	} else {
		acc = sum16(acc, f + r->l3 + 8, 32);
		acc += (udp_len >> 16) + (udp_len & 0xffff) + 17;
	}
	return fold(sum16(acc, f + r->l4, udp_len));
}

FUZZ_ORACLE int
ref_udp_cksum_state(const uint8_t *f, const struct ref_frame *r)
{
	/* zero: the sender did not use one (IPv4; over IPv6 only a sender
	 * that opted out as RFC 6935 allows, which is its business) */
	if (be16(f + r->l4 + 6) == 0)
		return 0;
	return udp_sum(f, r) == 0xffff ? 1 : -1;
}

FUZZ_ORACLE void
ref_udp_cksum_set(uint8_t *f, const struct ref_frame *r)
{
	uint16_t c;

	f[r->l4 + 6] = f[r->l4 + 7] = 0;
	c = (uint16_t)~udp_sum(f, r);
	if (c == 0)
		c = 0xffff;     /* RFC 768: a computed zero is sent as all ones */
	f[r->l4 + 6] = (uint8_t)(c >> 8);
	f[r->l4 + 7] = (uint8_t)c;
}

FUZZ_ORACLE const char *
ref_check_frame(const uint8_t *f, uint32_t len)
{
	struct ref_frame r;

	if (!ref_locate(f, len, &r))
		return "not a RoCEv2 frame with consistent IP/UDP lengths";
	if (f[r.bth + 1] & 0x0f)
		return "BTH transport version not 0";
	if (!ref_ip4_cksum_ok(f, &r))
		return "IPv4 header checksum wrong";
	if (ref_udp_cksum_state(f, &r) < 0)
		return "UDP checksum wrong";
	if (!ref_icrc_ok(f, &r))
		return "ICRC wrong";
	return NULL;
}

FUZZ_ORACLE void
ref_fail(const char *where, int line, const char *what, const uint8_t *f,
	 uint32_t len)
{
	fprintf(stderr, "ORACLE FAILED at %s:%d: %s\n", where, line, what);
	if (f != NULL) {
		fprintf(stderr, "frame (%u bytes):", len);
		for (uint32_t i = 0; i < len && i < 512; i++)
			fprintf(stderr, "%s%02x", i % 16 ? " " : "\n  ", f[i]);
		fprintf(stderr, "\n");
	}
	abort();
}
