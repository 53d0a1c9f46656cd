/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_roce.c — Check tests of lib/roce against peers we did not write.
 *
 * Truth comes from: the ConnectX captures (valid ICRCs written by real
 * NICs), tshark's InfiniBand dissector (field values, run at test time on
 * the same files), and scapy (tests/helpers/roce_scapy.py: frames for every
 * opcode, and the judge of our rewrites via validate_pcap.py and
 * check_rewrites.py).
 *
 * Environment (set by tests/unit/meson.build): CAPTURES_DIR,
 * TEST_HELPERS_DIR, UNIT_DIR (this directory), SYSTEM_PYTHON, TSHARK.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <pcap/pcap.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_net_crc.h>

#include "roce.h"
#include "roce_internal.h"

#define MAX_FRAMES 4096
#define MAX_FRAME_LEN 2048

struct frame {
	uint8_t *data;
	uint32_t len;
	int frameno;         /* 1-based, as tshark numbers them */
	char file[128];
};

static const char *captures_dir, *helpers_dir, *unit_dir, *python, *tshark;
static struct frame cap[MAX_FRAMES];
static int ncap;

/* Frames built by scapy (roce_scapy_frames.py) and what scapy says of them. */
struct sframe {
	uint8_t data[MAX_FRAME_LEN];
	uint32_t len;
	char fields[512];
};
static struct sframe *sfr;
static int nsfr;

/* ---------------------------------------------------------------------- */
/* helpers */

static void same_pkt(const struct roce_pkt *p, const struct roce_pkt *q);

static uint64_t
be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (s[0] && s[1] && hexval(s[0]) >= 0 && hexval(s[1]) >= 0) {
		if (n == max)
			return -1;
		out[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s += 2;
	}
	return (int)n;
}

static uint64_t
xs_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
load_captures(void)
{
	char *names[64];
	int nnames = 0;
	struct dirent *de;
	DIR *d = opendir(captures_dir);

	if (d == NULL) {
		fprintf(stderr, "cannot open CAPTURES_DIR %s\n", captures_dir);
		exit(2);
	}
	while ((de = readdir(d)) != NULL && nnames < 64) {
		size_t l = strlen(de->d_name);

		if ((l > 5 && !strcmp(de->d_name + l - 5, ".pcap")) ||
		    (l > 7 && !strcmp(de->d_name + l - 7, ".pcapng")))
			names[nnames++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, nnames, sizeof(names[0]), cmp_str);
	for (int i = 0; i < nnames; i++) {
		char path[512], err[PCAP_ERRBUF_SIZE];
		struct pcap_pkthdr *h;
		const u_char *data;
		pcap_t *pc;
		int n = 0;

		snprintf(path, sizeof(path), "%s/%s", captures_dir, names[i]);
		pc = pcap_open_offline(path, err);
		if (pc == NULL) {
			fprintf(stderr, "%s: %s\n", path, err);
			exit(2);
		}
		while (pcap_next_ex(pc, &h, &data) == 1 && ncap < MAX_FRAMES) {
			struct frame *f = &cap[ncap++];

			f->len = h->caplen;
			f->data = malloc(f->len ? f->len : 1);
			memcpy(f->data, data, f->len);
			f->frameno = ++n;
			snprintf(f->file, sizeof(f->file), "%s", names[i]);
		}
		pcap_close(pc);
		free(names[i]);
	}
	if (ncap == 0) {
		fprintf(stderr, "no frames under %s\n", captures_dir);
		exit(2);
	}
}

static void
load_scapy_frames(void)
{
	char cmd[1024], *line = NULL;
	size_t cap_ = 0;
	FILE *fp;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' '%s/roce_scapy_frames.py'", python,
		 unit_dir);
	fp = popen(cmd, "r");
	if (fp == NULL) {
		perror("popen");
		exit(2);
	}
	sfr = calloc(1024, sizeof(*sfr));
	while (getline(&line, &cap_, fp) > 0 && nsfr < 1024) {
		char *sp = strchr(line, ' ');
		int n;

		if (sp == NULL)
			continue;
		*sp = 0;
		n = unhex(line, sfr[nsfr].data, MAX_FRAME_LEN);
		if (n <= 0)
			continue;
		sfr[nsfr].len = n;
		snprintf(sfr[nsfr].fields, sizeof(sfr[nsfr].fields), " %s", sp + 1);
		nsfr++;
	}
	free(line);
	st = pclose(fp);
	if (st != 0 || nsfr == 0) {
		fprintf(stderr, "%s failed (status %d, %d frames)\n", cmd, st, nsfr);
		exit(2);
	}
}

/* " key=value" lookup in a scapy fields line; false if absent. */
static bool
sfield(const struct sframe *s, const char *key, int64_t *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(s->fields, pat);
	if (p == NULL)
		return false;
	*v = strtoll(p + strlen(pat), NULL, 10);
	return true;
}

static uint64_t
sfield_u(const struct sframe *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(s->fields, pat);
	ck_assert_msg(p != NULL, "scapy gave no %s", key);
	return strtoull(p + strlen(pat), NULL, 10);
}

/* Copy into an exactly sized heap buffer so ASan sees any over-read. */
static uint8_t *
exact_copy(const uint8_t *src, uint32_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	memcpy(b, src, len);
	return b;
}

static int
run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static bool
roce_frame_of(const uint8_t *f, uint32_t len)
{
	struct roce_pkt p;

	return roce_parse(f, len, &p) == ROCE_OK;
}

/* ---------------------------------------------------------------------- */
/* Captures vs tshark */

enum tf {
	TF_FRAME, TF_VLAN, TF_IPLEN, TF_IP6PLEN, TF_UDPLEN, TF_OPCODE, TF_SE,
	TF_M, TF_PAD, TF_TVER, TF_PKEY, TF_QPN, TF_ACKREQ, TF_PSN, TF_VA,
	TF_RKEY, TF_DMALEN, TF_SWAP, TF_CMP, TF_SYN, TF_MSN, TF_ORIG, TF_QKEY,
	TF_SRCQP, TF_ICRC, TF_VENDOR, TF_DATALEN, TF_NUM
};

static const char *const tf_names[TF_NUM] = {
	"frame.number", "vlan.id", "ip.len", "ipv6.plen", "udp.length",
	"infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m",
	"infiniband.bth.padcnt", "infiniband.bth.tver", "infiniband.bth.p_key",
	"infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
	"infiniband.reth.va", "infiniband.reth.r_key",
	"infiniband.reth.dmalen", "infiniband.atomiceth.swapdt",
	"infiniband.atomiceth.cmpdt", "infiniband.aeth.syndrome",
	"infiniband.aeth.msn", "infiniband.atomicacketh.origremdt",
	"infiniband.deth.q_key", "infiniband.deth.srcqp",
	"infiniband.invariant.crc", "infiniband.vendor", "data.len",
};

static struct frame *
find_frame(const char *file, int frameno)
{
	for (int i = 0; i < ncap; i++)
		if (cap[i].frameno == frameno && !strcmp(cap[i].file, file))
			return &cap[i];
	return NULL;
}

#define HAS(i) (tv[i] != NULL && tv[i][0] != 0)
#define NUM(i) strtoull(tv[i], NULL, 0)

static void
check_against_tshark(const struct frame *fr, char **tv)
{
	uint8_t *f = exact_copy(fr->data, fr->len);
	const struct roce_opcode_info *oi;
	const uint8_t *bth;
	struct roce_pkt p;
	int rc = roce_parse(f, fr->len, &p);
	char where[200];

	snprintf(where, sizeof(where), "%s frame %d", fr->file, fr->frameno);
	ck_assert_msg(rc == ROCE_OK, "%s: parse %d (%s)", where, rc,
		      roce_status_str(rc));
	oi = p.oi;
	bth = f + p.bth_off;
	ck_assert_msg(p.opcode == NUM(TF_OPCODE), "%s: opcode", where);
	ck_assert_uint_eq(roce_get_opcode(f, &p), NUM(TF_OPCODE));
	ck_assert_msg(p.qpn == NUM(TF_QPN) && roce_get_qpn(f, &p) == p.qpn,
		      "%s: qpn", where);
	ck_assert_msg(p.psn == NUM(TF_PSN) && roce_get_psn(f, &p) == p.psn,
		      "%s: psn", where);
	ck_assert_msg(roce_get_ackreq(f, &p) == (NUM(TF_ACKREQ) != 0),
		      "%s: ackreq", where);
	ck_assert_msg(p.pad == NUM(TF_PAD), "%s: pad", where);
	ck_assert_uint_eq(!!(bth[1] & ROCE_BTH_SE), NUM(TF_SE));
	ck_assert_uint_eq(!!(bth[1] & ROCE_BTH_MIG), NUM(TF_M));
	ck_assert_uint_eq(bth[1] & ROCE_BTH_TVER_MASK, NUM(TF_TVER));
	ck_assert_uint_eq(be(bth + 2, 2), NUM(TF_PKEY));
	if (HAS(TF_VLAN)) {
		ck_assert(p.has_vlan);
		ck_assert_uint_eq(p.vlan_tci & 0xfff, NUM(TF_VLAN));
	} else {
		ck_assert(!p.has_vlan);
	}
	if (HAS(TF_IPLEN)) {
		ck_assert_uint_eq(p.ip_version, 4);
		ck_assert_uint_eq(p.frame_len, p.l3_off + NUM(TF_IPLEN));
		{
			uint32_t src;

			memcpy(&src, fr->data + p.l3_off + 12, 4);
			ck_assert_uint_eq(p.src_ip4, src);
		}
	} else {
		ck_assert_uint_eq(p.ip_version, 6);
		ck_assert_uint_eq(p.frame_len, p.l3_off + 40 + NUM(TF_IP6PLEN));
	}
	ck_assert_uint_eq(p.frame_len - p.l4_off, NUM(TF_UDPLEN));
	ck_assert_uint_eq(p.icrc_off + 4, p.frame_len);
	ck_assert_uint_eq(p.payload_off, p.bth_off + oi->hdr_len);
	ck_assert_uint_eq(p.payload_off + p.payload_len, p.icrc_off);
	/* tshark shows the ICRC bytes as a big-endian number (for an
	 * opcode it does not know, they end its vendor bytes: see below) */
	if (HAS(TF_ICRC))
		ck_assert_msg(be(f + p.icrc_off, 4) == NUM(TF_ICRC),
			      "%s: icrc pos", where);
	else
		ck_assert_msg(HAS(TF_VENDOR), "%s: tshark has no ICRC", where);

	/* RETH (tshark also reports an AtomicETH's va/rkey under reth.*) */
	if (HAS(TF_VA)) {
		const uint8_t *h = roce_has(oi, ROCE_HDR_RETH) ?
			roce_hdr(f, &p, ROCE_HDR_RETH) :
			roce_hdr(f, &p, ROCE_HDR_ATOMIC_ETH);

		ck_assert_msg(h != NULL, "%s: tshark sees va, we see none",
			      where);
		ck_assert_uint_eq(be(h, 8), NUM(TF_VA));
		ck_assert_uint_eq(be(h + 8, 4), NUM(TF_RKEY));
	} else {
		ck_assert_msg(!roce_has(oi, ROCE_HDR_RETH) &&
			      !roce_has(oi, ROCE_HDR_ATOMIC_ETH),
			      "%s: we see a RETH/AtomicETH, tshark none", where);
	}
	if (HAS(TF_DMALEN)) {
		ck_assert(roce_has(oi, ROCE_HDR_RETH));
		ck_assert_uint_eq(be((uint8_t *)roce_hdr(f, &p, ROCE_HDR_RETH) +
				     12, 4), NUM(TF_DMALEN));
	}
	if (HAS(TF_SWAP)) {
		const uint8_t *h = roce_hdr(f, &p, ROCE_HDR_ATOMIC_ETH);

		ck_assert(h != NULL);
		ck_assert_uint_eq(be(h + 12, 8), NUM(TF_SWAP));
		ck_assert_uint_eq(be(h + 20, 8), NUM(TF_CMP));
	}
	if (HAS(TF_SYN)) {
		ck_assert_msg(roce_has(oi, ROCE_HDR_AETH), "%s: AETH", where);
		ck_assert_uint_eq(roce_get_syndrome(f, &p), NUM(TF_SYN));
		ck_assert_uint_eq(roce_get_msn(f, &p), NUM(TF_MSN));
	} else {
		ck_assert(!roce_has(oi, ROCE_HDR_AETH));
	}
	if (HAS(TF_ORIG)) {
		ck_assert(roce_has(oi, ROCE_HDR_ATOMIC_ACK_ETH));
		ck_assert_uint_eq(be(roce_hdr(f, &p, ROCE_HDR_ATOMIC_ACK_ETH), 8),
				  NUM(TF_ORIG));
	} else {
		ck_assert(!roce_has(oi, ROCE_HDR_ATOMIC_ACK_ETH));
	}
	if (HAS(TF_QKEY)) {
		const uint8_t *h = roce_hdr(f, &p, ROCE_HDR_DETH);

		ck_assert(h != NULL);
		ck_assert_uint_eq(be(h, 4), NUM(TF_QKEY));
		ck_assert_uint_eq(be(h + 5, 3), NUM(TF_SRCQP));
	} else {
		ck_assert(!roce_has(oi, ROCE_HDR_DETH));
	}
	if (HAS(TF_VENDOR)) {
		/* tshark does not know 0x18: it shows the bytes after the BTH
		 * (AtomicETH + ICRC) raw; the field order is ours to check. */
		uint8_t v[64];
		const uint8_t *h = roce_hdr(f, &p, ROCE_HDR_MASKED_ATOMIC_ETH);

		ck_assert_int_eq(unhex(tv[TF_VENDOR], v, sizeof(v)),
				 ROCE_MASKED_ATOMIC_ETH_LEN + ROCE_ICRC_LEN);
		ck_assert(h != NULL);
		ck_assert_mem_eq(h, v, ROCE_MASKED_ATOMIC_ETH_LEN);
		ck_assert_mem_eq(f + p.icrc_off, v + ROCE_MASKED_ATOMIC_ETH_LEN,
				 4);
	}
	if (HAS(TF_DATALEN))
		ck_assert_uint_eq(p.payload_len - p.pad, NUM(TF_DATALEN));
	else if (!(oi->flags & ROCE_F_UD))
		ck_assert_msg(p.payload_len == 0, "%s: payload %u, tshark none",
			      where, p.payload_len);
	ck_assert_msg(roce_icrc_verify(f, &p), "%s: ICRC", where);
	ck_assert_mem_eq(f, fr->data, fr->len);   /* verify restores bytes */
	free(f);
}

START_TEST(captures_match_tshark)
{
	const char *files[64];
	int nfiles = 0, checked = 0, ours = 0;

	for (int i = 0; i < ncap; i++) {
		if (nfiles == 0 || strcmp(files[nfiles - 1], cap[i].file))
			files[nfiles++] = cap[i].file;
		ours += roce_frame_of(cap[i].data, cap[i].len);
	}
	for (int fi = 0; fi < nfiles; fi++) {
		char cmd[4096], *line = NULL;
		size_t lcap = 0;
		int n = 0;
		FILE *fp;

		n = snprintf(cmd, sizeof(cmd),
			     "'%s' -r '%s/%s' -Y 'udp.dstport==4791' -T fields "
			     "-E occurrence=l -E separator=/t", tshark,
			     captures_dir, files[fi]);
		for (int k = 0; k < TF_NUM; k++)
			n += snprintf(cmd + n, sizeof(cmd) - n, " -e %s",
				      tf_names[k]);
		snprintf(cmd + n, sizeof(cmd) - n, " 2>/dev/null");
		fp = popen(cmd, "r");
		ck_assert(fp != NULL);
		while (getline(&line, &lcap, fp) > 0) {
			char *tv[TF_NUM] = {0}, *s = line, *tok;
			struct frame *fr;
			int k = 0;

			line[strcspn(line, "\n")] = 0;
			while ((tok = strsep(&s, "\t")) != NULL && k < TF_NUM)
				tv[k++] = tok;
			ck_assert_msg(k == TF_NUM, "tshark gave %d fields", k);
			fr = find_frame(files[fi], atoi(tv[TF_FRAME]));
			ck_assert(fr != NULL);
			check_against_tshark(fr, tv);
			checked++;
		}
		free(line);
		ck_assert_int_eq(pclose(fp), 0);
	}
	/* tshark and we agree on which frames are RoCEv2 at all */
	ck_assert_int_gt(checked, 0);
	ck_assert_int_eq(checked, ours);
	printf("captures: %d RoCEv2 frames match tshark, ICRC ok\n", checked);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* ICRC coverage: every bit outside the masked fields is protected */

static bool
masked_byte(const struct roce_pkt *p, uint32_t off, uint8_t bit)
{
	uint32_t l3 = p->l3_off, l4 = p->l4_off;

	if (off < l3)
		return true;                       /* L2: not covered at all */
	if (p->ip_version == 4) {
		if (off == l3 + 1 || off == l3 + 8 || off == l3 + 10 ||
		    off == l3 + 11)
			return true;               /* TOS, TTL, checksum */
	} else {
		if (off == l3 && bit < 4)
			return true;               /* traffic class high nibble */
		if (off == l3 + 1 || off == l3 + 2 || off == l3 + 3 ||
		    off == l3 + 7)
			return true;               /* TC, flow label, hop limit */
	}
	if (off == l4 + 6 || off == l4 + 7)
		return true;                       /* UDP checksum */
	if (off == (uint32_t)p->bth_off + 4)
		return true;                       /* FECN, BECN, resv6 */
	return false;
}

static int
bitflip_frame(const uint8_t *data, uint32_t len, const char *what)
{
	uint8_t *f = exact_copy(data, len);
	struct roce_pkt p;
	int flips = 0;

	ck_assert_int_eq(roce_parse(f, len, &p), ROCE_OK);
	ck_assert_msg(roce_icrc_verify(f, &p), "%s: ICRC", what);
	for (uint32_t off = 0; off < p.frame_len; off++) {
		for (uint8_t bit = 0; bit < 8; bit++) {
			bool ok;

			f[off] ^= (uint8_t)(1u << bit);
			ok = roce_icrc_verify(f, &p);
			ck_assert_msg(ok == masked_byte(&p, off, bit),
				      "%s: flip byte %u bit %u: verify %d", what,
				      off, bit, ok);
			f[off] ^= (uint8_t)(1u << bit);
			flips++;
		}
	}
	ck_assert_mem_eq(f, data, len);
	free(f);
	return flips;
}

START_TEST(icrc_bitflips_captures)
{
	int frames = 0;

	for (int i = 0; i < ncap; i++) {
		char what[200];

		if (!roce_frame_of(cap[i].data, cap[i].len))
			continue;
		snprintf(what, sizeof(what), "%s frame %d", cap[i].file,
			 cap[i].frameno);
		bitflip_frame(cap[i].data, cap[i].len, what);
		frames++;
	}
	ck_assert_int_gt(frames, 0);
}
END_TEST

START_TEST(icrc_bitflips_scapy_ipv6_vlan)
{
	int frames = 0;

	/* IPv6 masking (TC, flow label, hop limit) and VLAN offsets */
	for (int i = 0; i < nsfr; i++) {
		int64_t ver, vlan;
		char what[64];

		ck_assert(sfield(&sfr[i], "ver", &ver));
		ck_assert(sfield(&sfr[i], "vlan", &vlan));
		if (ver != 6 && vlan < 0)
			continue;
		snprintf(what, sizeof(what), "scapy frame %d", i);
		bitflip_frame(sfr[i].data, sfr[i].len, what);
		frames++;
	}
	ck_assert_int_gt(frames, 100);
}
END_TEST

START_TEST(icrc_scalar_and_simd_agree)
{
	/* Both rte_net_crc implementations must give the NIC's ICRC. */
	static const enum rte_net_crc_alg algs[] = {
		RTE_NET_CRC_SCALAR, RTE_NET_CRC_SSE42, RTE_NET_CRC_AVX512,
	};

	for (unsigned int a = 0; a < RTE_DIM(algs); a++) {
		int n = 0;

		rte_net_crc_set_alg(algs[a]);
		for (int i = 0; i < ncap; i++) {
			uint8_t *f = exact_copy(cap[i].data, cap[i].len);
			struct roce_pkt p;

			if (roce_parse(f, cap[i].len, &p) == ROCE_OK) {
				ck_assert_msg(roce_icrc_verify(f, &p),
					      "alg %d %s frame %d", algs[a],
					      cap[i].file, cap[i].frameno);
				n++;
			}
			free(f);
		}
		ck_assert_int_gt(n, 0);
	}
	roce_crc_init();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* scapy-built frames: every opcode, IPv4/IPv6, with and without VLAN */

START_TEST(scapy_frames_parse)
{
	bool seen[256][2][2] = {{{0}}};

	for (int i = 0; i < nsfr; i++) {
		const struct sframe *s = &sfr[i];
		uint8_t *f = exact_copy(s->data, s->len);
		struct roce_pkt p;
		int64_t v;
		int rc = roce_parse(f, s->len, &p);
		const uint8_t *h;

		ck_assert_msg(rc == ROCE_OK, "scapy frame %d:%s: %s", i,
			      s->fields, roce_status_str(rc));
		{
			struct roce_pkt q;

			ck_assert_int_eq(roce_parse_full(f, s->len, &q), ROCE_OK);
			same_pkt(&p, &q);
		}
		ck_assert_uint_eq(p.opcode, sfield_u(s, "op"));
		ck_assert_uint_eq(p.ip_version, sfield_u(s, "ver"));
		ck_assert(sfield(s, "vlan", &v));
		ck_assert_int_eq(p.has_vlan, v >= 0);
		if (v >= 0)
			ck_assert_uint_eq(p.vlan_tci & 0xfff, v);
		ck_assert_uint_eq(p.qpn, sfield_u(s, "qpn"));
		ck_assert_uint_eq(p.psn, sfield_u(s, "psn"));
		ck_assert_uint_eq(roce_get_ackreq(f, &p), sfield_u(s, "ackreq"));
		ck_assert_uint_eq(p.pad, sfield_u(s, "pad"));
		ck_assert_msg(p.payload_len == sfield_u(s, "paylen"),
			      "frame %d:%s: payload %u", i, s->fields,
			      p.payload_len);
		ck_assert_uint_eq(p.frame_len - p.l4_off, sfield_u(s, "udplen"));
		if (sfield(s, "dmalen", &v)) {
			h = roce_hdr(f, &p, ROCE_HDR_RETH);
			ck_assert(h != NULL);
			ck_assert_uint_eq(be(h, 8), sfield_u(s, "va"));
			ck_assert_uint_eq(be(h + 8, 4), sfield_u(s, "rkey"));
			ck_assert_uint_eq(be(h + 12, 4), (uint64_t)v);
		} else {
			ck_assert(!roce_has(p.oi, ROCE_HDR_RETH));
		}
		if (sfield(s, "swap_mask", &v)) {
			h = roce_hdr(f, &p, ROCE_HDR_MASKED_ATOMIC_ETH);
			ck_assert(h != NULL);
			ck_assert_uint_eq(be(h, 8), sfield_u(s, "va"));
			ck_assert_uint_eq(be(h + 8, 4), sfield_u(s, "rkey"));
			ck_assert_uint_eq(be(h + 12, 8), sfield_u(s, "swap"));
			ck_assert_uint_eq(be(h + 20, 8), sfield_u(s, "compare"));
			ck_assert_uint_eq(be(h + 28, 8), sfield_u(s, "swap_mask"));
			ck_assert_uint_eq(be(h + 36, 8),
					  sfield_u(s, "compare_mask"));
		} else if (sfield(s, "swap", &v)) {
			h = roce_hdr(f, &p, ROCE_HDR_ATOMIC_ETH);
			ck_assert(h != NULL);
			ck_assert_uint_eq(be(h, 8), sfield_u(s, "va"));
			ck_assert_uint_eq(be(h + 8, 4), sfield_u(s, "rkey"));
			ck_assert_uint_eq(be(h + 12, 8), sfield_u(s, "swap"));
			ck_assert_uint_eq(be(h + 20, 8), sfield_u(s, "compare"));
		}
		if (sfield(s, "syn", &v)) {
			ck_assert(roce_has(p.oi, ROCE_HDR_AETH));
			ck_assert_uint_eq(roce_get_syndrome(f, &p), v);
			ck_assert_uint_eq(roce_get_msn(f, &p), sfield_u(s, "msn"));
		} else {
			ck_assert(!roce_has(p.oi, ROCE_HDR_AETH));
		}
		if (sfield(s, "orig", &v)) {
			h = roce_hdr(f, &p, ROCE_HDR_ATOMIC_ACK_ETH);
			ck_assert(h != NULL);
			ck_assert_uint_eq(be(h, 8), sfield_u(s, "orig"));
		}
		if (sfield(s, "qkey", &v)) {
			h = roce_hdr(f, &p, ROCE_HDR_DETH);
			ck_assert(h != NULL);
			ck_assert_uint_eq(be(h, 4), (uint64_t)v);
			ck_assert_uint_eq(be(h + 5, 3), sfield_u(s, "srcqp"));
		} else {
			ck_assert(!roce_has(p.oi, ROCE_HDR_DETH));
		}
		if (sfield(s, "imm", &v)) {
			h = roce_hdr(f, &p, ROCE_HDR_IMMDT);
			ck_assert(h != NULL);
			ck_assert_uint_eq(be(h, 4), (uint64_t)v);
		} else {
			ck_assert(!roce_has(p.oi, ROCE_HDR_IMMDT));
		}
		/* our ICRC equals scapy's, and it verifies */
		ck_assert_msg(roce_icrc_compute(f, &p) == sfield_u(s, "icrc"),
			      "frame %d:%s: ICRC %08x", i, s->fields,
			      roce_icrc_compute(f, &p));
		ck_assert(roce_icrc_verify(f, &p));
		ck_assert_mem_eq(f, s->data, s->len);
		seen[p.opcode][p.ip_version == 6][p.has_vlan] = true;
		free(f);
	}
	/* every opcode of our table came from scapy in all four shapes */
	for (int op = 0; op < 256; op++) {
		if (!(roce_opcode(op)->flags & ROCE_F_VALID))
			continue;
		for (int v6 = 0; v6 < 2; v6++)
			for (int vl = 0; vl < 2; vl++)
				ck_assert_msg(seen[op][v6][vl],
					      "opcode 0x%x v6=%d vlan=%d not "
					      "covered", op, v6, vl);
	}
}
END_TEST

START_TEST(unknown_opcodes_rejected)
{
	/* scapy's ACK frame with every opcode not in the table */
	const struct sframe *s = NULL;

	for (int i = 0; i < nsfr && s == NULL; i++)
		if (sfield_u(&sfr[i], "op") == ROCE_RC_ACKNOWLEDGE)
			s = &sfr[i];
	ck_assert(s != NULL);
	for (int op = 0; op < 256; op++) {
		uint8_t *f = exact_copy(s->data, s->len);
		struct roce_pkt p;

		ck_assert_int_eq(roce_parse(f, s->len, &p), ROCE_OK);
		f[p.bth_off] = (uint8_t)op;
		if (!(roce_opcode(op)->flags & ROCE_F_VALID))
			ck_assert_int_eq(roce_parse(f, s->len, &p),
					 ROCE_ERR_UNKNOWN_OPCODE);
		free(f);
	}
	/* 0x15 (RESYNC) and UC/RD/XRC are not ours */
	ck_assert(!(roce_opcode(0x15)->flags & ROCE_F_VALID));
	ck_assert(!(roce_opcode(0x20)->flags & ROCE_F_VALID));
	ck_assert(!(roce_opcode(0x66)->flags & ROCE_F_VALID));
}
END_TEST

START_TEST(opcode_table_consistent)
{
	static const uint8_t len[ROCE_HDR_NUM] = {
		[ROCE_HDR_RETH] = ROCE_RETH_LEN,
		[ROCE_HDR_AETH] = ROCE_AETH_LEN,
		[ROCE_HDR_ATOMIC_ETH] = ROCE_ATOMIC_ETH_LEN,
		[ROCE_HDR_MASKED_ATOMIC_ETH] = ROCE_MASKED_ATOMIC_ETH_LEN,
		[ROCE_HDR_ATOMIC_ACK_ETH] = ROCE_ATOMIC_ACK_ETH_LEN,
		[ROCE_HDR_IMMDT] = ROCE_IMMDT_LEN,
		[ROCE_HDR_IETH] = ROCE_IETH_LEN,
		[ROCE_HDR_DETH] = ROCE_DETH_LEN,
	};
	int valid = 0;

	ck_assert_uint_eq(sizeof(struct roce_bth), ROCE_BTH_LEN);
	ck_assert_uint_eq(sizeof(struct roce_reth), ROCE_RETH_LEN);
	ck_assert_uint_eq(sizeof(struct roce_atomic_eth), ROCE_ATOMIC_ETH_LEN);
	ck_assert_uint_eq(sizeof(struct roce_masked_atomic_eth),
			  ROCE_MASKED_ATOMIC_ETH_LEN);
	ck_assert_uint_eq(sizeof(struct roce_deth), ROCE_DETH_LEN);
	for (int op = 0; op < 256; op++) {
		const struct roce_opcode_info *oi = roce_opcode(op);
		uint32_t sum = ROCE_BTH_LEN;

		if (!(oi->flags & ROCE_F_VALID)) {
			ck_assert_uint_eq(oi->hdr_len, 0);
			continue;
		}
		valid++;
		ck_assert_ptr_nonnull(oi->name);
		for (int h = 0; h < ROCE_HDR_NUM; h++)
			if (oi->off[h]) {
				ck_assert_uint_le(oi->off[h] + len[h], oi->hdr_len);
				sum += len[h];
			}
		ck_assert_msg(sum == oi->hdr_len, "0x%x hdr_len", op);
		ck_assert(!!(oi->flags & ROCE_F_REQUEST) +
			  !!(oi->flags & ROCE_F_RESPONSE) <= 1);
		if (oi->flags & ROCE_F_ACKABLE)
			ck_assert(oi->flags & ROCE_F_REQUEST);
		if (oi->flags & ROCE_F_REQUEST)
			ck_assert_uint_eq(oi->psns, 1);
	}
	ck_assert_int_eq(valid, 21 + 2 + 1 + 2 + 1);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Rewrites, judged by scapy */

struct rw_out {
	pcap_dumper_t *in, *out;
	FILE *spec;
	int n;
};

static void
dump(pcap_dumper_t *d, const uint8_t *f, uint32_t len)
{
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	pcap_dump((u_char *)d, &h, f);
}

static void
same_pkt(const struct roce_pkt *p, const struct roce_pkt *q)
{
	ck_assert_ptr_eq(p->oi, q->oi);
	ck_assert_uint_eq(p->opcode, q->opcode);
	ck_assert_uint_eq(p->l3_off, q->l3_off);
	ck_assert_uint_eq(p->l4_off, q->l4_off);
	ck_assert_uint_eq(p->bth_off, q->bth_off);
	ck_assert_uint_eq(p->payload_off, q->payload_off);
	ck_assert_uint_eq(p->payload_len, q->payload_len);
	ck_assert_uint_eq(p->icrc_off, q->icrc_off);
	ck_assert_uint_eq(p->frame_len, q->frame_len);
	ck_assert_uint_eq(p->pad, q->pad);
	ck_assert_uint_eq(p->qpn, q->qpn);
	ck_assert_uint_eq(p->psn, q->psn);
	ck_assert_uint_eq(p->ip_version, q->ip_version);
	ck_assert_uint_eq(p->has_vlan, q->has_vlan);
	ck_assert_uint_eq(p->src_ip4, q->src_ip4);
	ck_assert_uint_eq(p->dst_ip4, q->dst_ip4);
	ck_assert_uint_eq(p->vlan_tci, q->vlan_tci);
}

/* After a rewrite, *p must equal a fresh parse of the result. */
static void
check_p_updated(const uint8_t *f, uint32_t len, const struct roce_pkt *p)
{
	struct roce_pkt q;

	ck_assert_int_eq(roce_parse(f, len, &q), ROCE_OK);
	same_pkt(p, &q);
}

static void
rewrite_one(struct rw_out *o, const uint8_t *src, uint32_t len,
	    uint32_t trailer)
{
	uint8_t buf[MAX_FRAME_LEN + 64], in[MAX_FRAME_LEN + 64];
	struct roce_pkt p, p0;
	uint32_t l;
	int rc;

	/* the input with `trailer` extra Ethernet bytes after it */
	memcpy(in, src, len);
	for (uint32_t i = 0; i < trailer; i++)
		in[len + i] = (uint8_t)(0xa0 + i);
	len += trailer;
	ck_assert_int_eq(roce_parse(in, len, &p0), ROCE_OK);
	ck_assert(roce_icrc_verify(in, &p0));

	if ((p0.oi->flags & ROCE_F_ATOMIC) && (p0.oi->flags & ROCE_F_REQUEST)) {
		for (int zero = 0; zero < 2; zero++) {
			uint64_t v = rnd();

			memcpy(buf, in, len);
			p = p0;
			l = len;
			rc = roce_atomic_to_write(buf, &l, sizeof(buf), &p,
						  zero ? NULL : &v);
			ck_assert_int_eq(rc, 0);
			check_p_updated(buf, l, &p);
			ck_assert(roce_icrc_verify(buf, &p));
			ck_assert_uint_eq(l, len - (p0.oi->hdr_len - 12) + 16 +
					  (zero ? 0 : 8));
			dump(o->in, in, len);
			dump(o->out, buf, l);
			if (zero)
				fprintf(o->spec, "z\n");
			else
				fprintf(o->spec, "w 0x%016" PRIx64 "\n", v);
			o->n++;
		}
		/* an ACK rewrite of a request is refused, frame untouched */
		memcpy(buf, in, len);
		p = p0;
		l = len;
		ck_assert_int_eq(roce_ack_to_atomic_ack(buf, &l, sizeof(buf), &p,
							1), -EINVAL);
		ck_assert_mem_eq(buf, in, len);
	} else if (p0.opcode == ROCE_RC_ACKNOWLEDGE) {
		uint8_t syn = roce_get_syndrome(in, &p0);
		uint64_t orig = rnd();

		memcpy(buf, in, len);
		p = p0;
		l = len;
		rc = roce_ack_to_atomic_ack(buf, &l, sizeof(buf), &p, orig);
		if (roce_syndrome_kind(syn) != ROCE_AETH_ACK) {
			ck_assert_int_eq(rc, -EINVAL);   /* a NAK stays a NAK */
			ck_assert_mem_eq(buf, in, len);
		} else {
			ck_assert_int_eq(rc, 0);
			check_p_updated(buf, l, &p);
			ck_assert_uint_eq(l, len + 8);
			dump(o->in, in, len);
			dump(o->out, buf, l);
			fprintf(o->spec, "a 0x%016" PRIx64 "\n", orig);
			o->n++;
			/* no room: refused, untouched */
			memcpy(buf, in, len);
			p = p0;
			l = len;
			ck_assert_int_eq(roce_ack_to_atomic_ack(buf, &l, len + 7,
								&p, orig),
					 -ENOSPC);
			ck_assert_uint_eq(l, len);
			ck_assert_mem_eq(buf, in, len);
		}
		memcpy(buf, in, len);
		p = p0;
		l = len;
		ck_assert_int_eq(roce_atomic_to_write(buf, &l, sizeof(buf), &p,
						      NULL), -EINVAL);
	}
	if (p0.oi->flags & ROCE_F_RESPONSE) {
		for (int with_orig = 0; with_orig < 2; with_orig++) {
			uint32_t psn = rnd() & ROCE_PSN_MASK;
			uint32_t msn = rnd() & ROCE_PSN_MASK;
			uint8_t syn = with_orig ? (rnd() & 0x1f) : (uint8_t)rnd() & 0x7f;
			uint64_t orig = rnd();
			uint8_t out[128];
			int n;

			if (roce_syndrome_kind(syn) == ROCE_AETH_RESERVED)
				syn &= 0x1f;
			n = roce_build_ack(out, sizeof(out), in, &p0, psn, syn,
					   msn, with_orig, orig, &p);
			ck_assert_int_gt(n, 0);
			check_p_updated(out, n, &p);
			ck_assert(roce_icrc_verify(out, &p));
			{
				/* unsigned, then signed once: the same frame */
				uint8_t un[128];
				struct roce_pkt up;

				ck_assert_int_eq(roce_build_ack_unsigned(un, sizeof(un), in, &p0,
									 psn, syn, msn, with_orig,
									 orig, &up), n);
				roce_resign(un, &up);
				ck_assert_mem_eq(un, out, (size_t)n);
			}
			ck_assert_int_eq(roce_build_ack(out, p0.bth_off + 12,
							in, &p0, psn, syn, msn,
							with_orig, orig, &p),
					 -ENOSPC);
			n = roce_build_ack(out, sizeof(out), in, &p0, psn, syn,
					   msn, with_orig, orig, &p);
			dump(o->in, in, len);
			dump(o->out, out, n);
			if (with_orig)
				fprintf(o->spec, "B %u %u %u 0x%016" PRIx64 "\n",
					psn, syn, msn, orig);
			else
				fprintf(o->spec, "b %u %u %u\n", psn, syn, msn);
			o->n++;
		}
	}
}

START_TEST(rewrites_checked_by_scapy)
{
	char dir[] = "/tmp/test_roce_XXXXXX", path[3][300], cmd[2048];
	struct rw_out o = {0};
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	int rc;

	ck_assert(mkdtemp(dir) != NULL);
	snprintf(path[0], sizeof(path[0]), "%s/in.pcap", dir);
	snprintf(path[1], sizeof(path[1]), "%s/out.pcap", dir);
	snprintf(path[2], sizeof(path[2]), "%s/spec.txt", dir);
	o.in = pcap_dump_open(dead, path[0]);
	o.out = pcap_dump_open(dead, path[1]);
	o.spec = fopen(path[2], "w");
	ck_assert(o.in && o.out && o.spec);

	for (int i = 0; i < ncap; i++)
		if (roce_frame_of(cap[i].data, cap[i].len))
			rewrite_one(&o, cap[i].data, cap[i].len, i % 3 == 0 ? 6 : 0);
	for (int i = 0; i < nsfr; i++) {
		struct roce_pkt p;

		ck_assert_int_eq(roce_parse(sfr[i].data, sfr[i].len, &p),
				 ROCE_OK);
		/* scapy frames may already carry Ethernet padding */
		rewrite_one(&o, sfr[i].data, sfr[i].len, i % 2 ? 3 : 0);
	}
	pcap_dump_close(o.in);
	pcap_dump_close(o.out);
	fclose(o.spec);
	pcap_close(dead);
	ck_assert_int_gt(o.n, 100);

	snprintf(cmd, sizeof(cmd), "'%s' '%s/validate_pcap.py' --allow-trailer "
		 "--expect %d '%s'", python, helpers_dir, o.n, path[1]);
	rc = run(cmd);
	ck_assert_msg(rc == 0, "validate_pcap.py failed (%d); files in %s", rc,
		      dir);
	snprintf(cmd, sizeof(cmd), "'%s' '%s/check_rewrites.py' '%s' '%s' '%s'",
		 python, unit_dir, path[0], path[1], path[2]);
	rc = run(cmd);
	ck_assert_msg(rc == 0, "check_rewrites.py failed (%d); files in %s", rc,
		      dir);
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
	rmdir(dir);
}
END_TEST

/* The harness itself must fail on a bad rewrite (else it proves nothing). */
START_TEST(rewrite_checker_catches_errors)
{
	char dir[] = "/tmp/test_roce_XXXXXX", path[3][300], cmd[2048];
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	const struct frame *cas = NULL;
	uint8_t buf[256];
	struct roce_pkt p;
	uint64_t v = 0x1122334455667788ull;
	pcap_dumper_t *din, *dout;
	uint32_t l;
	FILE *spec;

	for (int i = 0; i < ncap && cas == NULL; i++)
		if (roce_parse(cap[i].data, cap[i].len, &p) == ROCE_OK &&
		    p.opcode == ROCE_RC_COMPARE_SWAP)
			cas = &cap[i];
	ck_assert(cas != NULL);
	ck_assert(mkdtemp(dir) != NULL);
	for (int bad = 0; bad < 3; bad++) {
		snprintf(path[0], sizeof(path[0]), "%s/in.pcap", dir);
		snprintf(path[1], sizeof(path[1]), "%s/out.pcap", dir);
		snprintf(path[2], sizeof(path[2]), "%s/spec.txt", dir);
		din = pcap_dump_open(dead, path[0]);
		dout = pcap_dump_open(dead, path[1]);
		spec = fopen(path[2], "w");
		memcpy(buf, cas->data, cas->len);
		l = cas->len;
		ck_assert_int_eq(roce_parse(buf, l, &p), ROCE_OK);
		ck_assert_int_eq(roce_atomic_to_write(buf, &l, sizeof(buf), &p,
						      &v), 0);
		if (bad == 0)
			buf[p.payload_off + 7] ^= 1;   /* value, ICRC redone */
		else if (bad == 1)
			buf[p.l3_off + 4] ^= 1;        /* IP id, ICRC redone */
		else
			buf[0] ^= 1;                   /* dst MAC */
		roce_icrc_update(buf, &p);
		roce_ip_cksum_update(buf, &p);
		dump(din, cas->data, cas->len);
		dump(dout, buf, l);
		fprintf(spec, "w 0x%016" PRIx64 "\n", v);
		pcap_dump_close(din);
		pcap_dump_close(dout);
		fclose(spec);
		snprintf(cmd, sizeof(cmd),
			 "'%s' '%s/check_rewrites.py' '%s' '%s' '%s' >/dev/null",
			 python, unit_dir, path[0], path[1], path[2]);
		ck_assert_int_eq(run(cmd), 1);
	}
	/* and validate_pcap.py catches a bad ICRC */
	buf[p.icrc_off] ^= 1;
	din = pcap_dump_open(dead, path[0]);
	dump(din, buf, l);
	pcap_dump_close(din);
	snprintf(cmd, sizeof(cmd), "'%s' '%s/validate_pcap.py' '%s' >/dev/null",
		 python, helpers_dir, path[0]);
	ck_assert_int_eq(run(cmd), 1);
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
	rmdir(dir);
	pcap_close(dead);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Malformed input */

static void
truncations(const uint8_t *data, uint32_t full, const char *what)
{
	struct roce_pkt p0;
	uint32_t ip_hlen;

	ck_assert_int_eq(roce_parse(data, full, &p0), ROCE_OK);
	ip_hlen = p0.ip_version == 4 ? (data[p0.l3_off] & 0xf) * 4u : 40u;
	for (uint32_t len = 0; len < p0.frame_len; len++) {
		uint8_t *f = exact_copy(data, len);
		struct roce_pkt p;
		int rc = roce_parse(f, len, &p), want;
		struct roce_pkt q;

		ck_assert_int_eq(roce_parse_full(f, len, &q), rc);

		if (len < p0.l3_off)
			want = ROCE_ERR_TRUNC_L2;
		else if (len < p0.l3_off + ip_hlen)
			want = ROCE_ERR_TRUNC_L3;
		else
			want = ROCE_ERR_BAD_IP_LEN;
		/* a VLAN frame cut inside the tag is too short for Ethernet */
		if (p0.has_vlan && len >= 14 && len < 18)
			want = ROCE_ERR_TRUNC_L2;
		if (!p0.has_vlan && len < 14)
			want = ROCE_ERR_TRUNC_L2;
		ck_assert_msg(rc == want, "%s cut at %u: %d (%s), want %d", what,
			      len, rc, roce_status_name(rc), want);
		free(f);
	}
}

START_TEST(truncation_every_offset)
{
	int n = 0;

	for (int i = 0; i < ncap; i++) {
		char what[200];

		if (!roce_frame_of(cap[i].data, cap[i].len)) {
			/* non-RoCE frames: any cut, never a crash, never OK */
			for (uint32_t len = 0; len < cap[i].len; len++) {
				uint8_t *f = exact_copy(cap[i].data, len);
				struct roce_pkt p;

				ck_assert_int_ne(roce_parse(f, len, &p), ROCE_OK);
				free(f);
			}
			continue;
		}
		snprintf(what, sizeof(what), "%s frame %d", cap[i].file,
			 cap[i].frameno);
		truncations(cap[i].data, cap[i].len, what);
		n++;
	}
	for (int i = 0; i < nsfr; i++) {
		char what[64];

		snprintf(what, sizeof(what), "scapy frame %d", i);
		truncations(sfr[i].data, sfr[i].len, what);
	}
	ck_assert_int_gt(n, 0);
}
END_TEST

static const struct sframe *
scapy_find(int op, int ver, bool vlan)
{
	for (int i = 0; i < nsfr; i++) {
		int64_t v;

		sfield(&sfr[i], "vlan", &v);
		if ((int)sfield_u(&sfr[i], "op") == op &&
		    (int)sfield_u(&sfr[i], "ver") == ver && (v >= 0) == vlan)
			return &sfr[i];
	}
	ck_abort_msg("no scapy frame op 0x%x v%d", op, ver);
	return NULL;
}

/* Parse f (len bytes) after mutate() and expect status want. */
#define EXPECT_STATUS(src, srclen, extra, want, ...)                          \
	do {                                                                  \
		uint32_t len_ = (srclen) + (extra);                           \
		uint8_t *f = calloc(1, len_ + 1);                             \
		struct roce_pkt p_, q_;                                       \
		int rc_;                                                      \
		memcpy(f, (src), (srclen));                                   \
		ck_assert_int_eq(roce_parse(f, (srclen), &q_), ROCE_OK);      \
		{ __VA_ARGS__; }                                              \
		rc_ = roce_parse(f, len_, &p_);                               \
		ck_assert_int_eq(roce_parse_full(f, len_, &q_), rc_);         \
		ck_assert_msg(rc_ == (want), "line %d: got %s want %s",       \
			      __LINE__, roce_status_name(rc_),                \
			      roce_status_name(want));                        \
		free(f);                                                      \
	} while (0)

START_TEST(length_corruptions_specific_codes)
{
	for (int ver = 4; ver <= 6; ver += 2) {
		const struct sframe *cas = scapy_find(0x13, ver, false);
		const struct sframe *ack = scapy_find(0x11, ver, false);
		const struct sframe *wr = scapy_find(0x0a, ver, true);
		const struct sframe *cnp = scapy_find(0x81, ver, false);
		const uint8_t *d = cas->data;
		uint32_t n = cas->len;
		/* offsets of the IP length field and UDP length field */
		uint32_t iplen = ver == 4 ? 16 : 18, udplen = ver == 4 ? 38 : 58;

#define Q q_
#define ADD16(off, delta) put_be16(f + (off), (uint16_t)(be(f + (off), 2) + (delta)))
		/* IP length beyond the buffer */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_IP_LEN, ADD16(iplen, 1));
		/* IP length shorter than UDP says */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_UDP_LEN, ADD16(iplen, -1));
		/* UDP length off by one either way */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_UDP_LEN, ADD16(udplen, 1));
		EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_UDP_LEN, ADD16(udplen, -1));
		/* both shortened by 4 (trailer allowed): AtomicETH cut */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_TRUNC_EXT, ADD16(iplen, -4);
			      ADD16(udplen, -4));
		/* both shortened to BTH+ICRC-1 */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_TRUNC_BTH,
			      ADD16(iplen, -(int)(be(f + udplen, 2) - 8 - 15));
			      ADD16(udplen, -(int)(be(f + udplen, 2) - 8 - 15)));
		/* IP payload shorter than a UDP header */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_TRUNC_L4,
			      put_be16(f + iplen, ver == 4 ? 20 + 7 : 7));
		/* ports, protocol, ethertype: not ours */
		EXPECT_STATUS(d, n, 0, ROCE_NOT_ROCE_PORT, ADD16(Q.l4_off + 2, 1));
		EXPECT_STATUS(d, n, 0, ROCE_OK, ADD16(Q.l4_off, 1)); /* sport */
		EXPECT_STATUS(d, n, 0, ROCE_NOT_UDP,
			      f[Q.l3_off + (ver == 4 ? 9 : 6)] = 6);
		EXPECT_STATUS(d, n, 0, ROCE_NOT_IP, put_be16(f + 12, 0x0806));
		/* version mismatch */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_IP_HDR,
			      f[Q.l3_off] ^= 0x20);
		/* BTH */
		EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_TVER, f[Q.bth_off + 1] |= 1);
		EXPECT_STATUS(d, n, 0, ROCE_ERR_UNKNOWN_OPCODE,
			      f[Q.bth_off] = 0x15);
		/* trailing Ethernet bytes are fine and ignored */
		EXPECT_STATUS(d, n, 10, ROCE_OK, (void)0);
		/* ACK with a pad count but no payload */
		EXPECT_STATUS(ack->data, ack->len, 0, ROCE_ERR_BAD_PAD,
			      f[Q.bth_off + 1] |= 0x10);
		/* ACK grown by 4 payload bytes: not allowed */
		EXPECT_STATUS(ack->data, ack->len, 4, ROCE_ERR_BAD_PAYLOAD,
			      ADD16(iplen, 4); ADD16(udplen, 4));
		/* WRITE payload not a multiple of 4 */
		EXPECT_STATUS(wr->data, wr->len, 2, ROCE_ERR_BAD_PAYLOAD,
			      ADD16(iplen + 4, 2); ADD16(udplen + 4, 2));
		/* CNP must carry exactly 16 bytes */
		EXPECT_STATUS(cnp->data, cnp->len, 4, ROCE_ERR_BAD_PAYLOAD,
			      ADD16(iplen, 4); ADD16(udplen, 4));
		EXPECT_STATUS(cnp->data, cnp->len, 0, ROCE_ERR_BAD_PAYLOAD,
			      ADD16(iplen, -4); ADD16(udplen, -4));
		if (ver == 4) {
			EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_IP_HDR,
				      f[Q.l3_off] = 0x44);          /* IHL 4 */
			EXPECT_STATUS(d, n, 0, ROCE_ERR_BAD_IP_LEN,
				      put_be16(f + iplen, 19));     /* < IHL */
			EXPECT_STATUS(d, n, 0, ROCE_ERR_IP_FRAGMENT,
				      f[Q.l3_off + 6] |= 0x20);     /* MF */
			EXPECT_STATUS(d, n, 0, ROCE_NOT_ROCE_PORT,
				      f[Q.l3_off + 7] |= 0x01);     /* offset */
			/* IHL beyond the buffer */
			{
				uint8_t *f = exact_copy(d, 14 + 24);
				struct roce_pkt p;

				f[14] = 0x4f;
				ck_assert_int_eq(roce_parse(f, 14 + 24, &p),
						 ROCE_ERR_TRUNC_L3);
				free(f);
			}
			/* non-UDP: lengths are not judged */
			EXPECT_STATUS(d, n, 0, ROCE_NOT_UDP,
				      f[Q.l3_off + 9] = 1; ADD16(iplen, 100));
		} else {
			/* extension header (hop-by-hop): not RoCE for us */
			EXPECT_STATUS(d, n, 0, ROCE_NOT_UDP, f[Q.l3_off + 6] = 0);
		}
	}
	/* a VLAN frame cut inside the tag */
	{
		const struct sframe *v = scapy_find(0x13, 4, true);
		struct roce_pkt p;

		ck_assert_int_eq(roce_parse(v->data, 16, &p), ROCE_ERR_TRUNC_L2);
		ck_assert_int_eq(roce_parse(v->data, 0, &p), ROCE_ERR_TRUNC_L2);
	}
#undef ADD16
#undef Q
}
END_TEST

/* Buffers beyond 64 KiB: offsets in struct roce_pkt are 16 bit. */
START_TEST(huge_buffers)
{
	const struct sframe *w = scapy_find(ROCE_RC_WRITE_ONLY, 4, false);
	const uint32_t big = 70000;
	uint8_t *f = calloc(1, big);
	struct roce_pkt p, q;
	static const struct { uint16_t tot; int want; } cases[] = {
		{ 65528, ROCE_ERR_BAD_IP_LEN },  /* ends past 65535 */
		{ 65520, ROCE_OK },              /* ends at 65534 */
	};

	memcpy(f, w->data, w->len);
	ck_assert_int_eq(roce_parse(f, big, &p), ROCE_OK);
	ck_assert_uint_eq(p.frame_len, 14 + be(f + 16, 2));
	for (unsigned int i = 0; i < RTE_DIM(cases); i++) {
		put_be16(f + 16, cases[i].tot);
		put_be16(f + 38, cases[i].tot - 20);
		ck_assert_int_eq(roce_parse(f, big, &p), cases[i].want);
		ck_assert_int_eq(roce_parse_full(f, big, &q), cases[i].want);
		if (cases[i].want == ROCE_OK) {
			ck_assert_uint_eq(p.frame_len, 14 + cases[i].tot);
			same_pkt(&p, &q);
		}
	}
	free(f);
}
END_TEST

START_TEST(ip_options_frames)
{
	int n = 0;

	for (int i = 0; i < nsfr; i++) {
		struct roce_pkt p;

		if (sfr[i].data[12] != 0x08 || sfr[i].data[13] != 0 ||
		    sfr[i].data[14] == 0x45)
			continue;
		ck_assert_int_eq(roce_parse(sfr[i].data, sfr[i].len, &p),
				 ROCE_OK);
		ck_assert_uint_eq(p.l4_off, 14 + (sfr[i].data[14] & 0xf) * 4);
		n++;
	}
	ck_assert_int_gt(n, 0);
}
END_TEST

START_TEST(fuzz_random_mutations)
{
	static uint8_t big[MAX_FRAME_LEN + 256];
	unsigned long ok = 0, iters = 0, rewrites = 0;
	int npool = ncap + nsfr;

	xs_state = 0x5eed5eed12345678ull;
	for (iters = 0; iters < 300000; iters++) {
		const uint8_t *src;
		uint32_t srclen, len;
		struct roce_pkt p;
		uint8_t *f;
		int k = (int)(rnd() % npool), nmut, rc;

		if (k < ncap) {
			src = cap[k].data;
			srclen = cap[k].len;
		} else {
			src = sfr[k - ncap].data;
			srclen = sfr[k - ncap].len;
		}
		len = (uint32_t)(rnd() % 8 == 0 ? rnd() % (srclen + 9) : srclen);
		f = malloc(len ? len : 1);
		for (uint32_t i = 0; i < len; i++)
			f[i] = i < srclen ? src[i] : (uint8_t)rnd();
		nmut = (int)(rnd() % 5);
		for (int m = 0; m < nmut && len; m++) {
			/* mostly headers: that is where the decisions are */
			uint32_t at = (uint32_t)(rnd() % (rnd() % 2 ?
							  RTE_MIN(len, 100u) : len));
			f[at] = rnd() % 3 ? (uint8_t)rnd() : f[at] ^ (1u << (rnd() % 8));
		}
		rc = roce_parse(f, len, &p);
		ck_assert(rc > -ROCE_ERR_NUM && rc < ROCE_NOT_NUM);
		/* the fast path agrees with the general parser */
		{
			struct roce_pkt q;

			ck_assert_int_eq(roce_parse_full(f, len, &q), rc);
			if (rc == ROCE_OK)
				same_pkt(&p, &q);
		}
		ck_assert_ptr_nonnull(roce_status_str(rc));
		if (rc == ROCE_OK) {
			ok++;
			ck_assert_uint_le(p.frame_len, len);
			ck_assert_uint_eq(p.icrc_off + 4, p.frame_len);
			ck_assert_uint_eq(p.payload_off + p.payload_len, p.icrc_off);
			ck_assert_uint_eq(p.bth_off + p.oi->hdr_len, p.payload_off);
			ck_assert_uint_le(p.pad, p.payload_len);
			(void)roce_icrc_verify(f, &p);
			(void)roce_req_psns(f, &p, 1024);
			if (roce_has(p.oi, ROCE_HDR_AETH))
				(void)roce_get_msn(f, &p);
			/* rewriters on whatever parsed: must stay well-formed */
			memcpy(big, f, len);
			if ((p.oi->flags & ROCE_F_ATOMIC) &&
			    (p.oi->flags & ROCE_F_REQUEST)) {
				uint64_t v = rnd();
				uint32_t l = len;

				ck_assert_int_eq(roce_atomic_to_write(big, &l,
					sizeof(big), &p, rnd() % 2 ? &v : NULL), 0);
				check_p_updated(big, l, &p);
				ck_assert(roce_icrc_verify(big, &p));
				rewrites++;
			} else if (p.opcode == ROCE_RC_ACKNOWLEDGE) {
				uint32_t l = len;

				rc = roce_ack_to_atomic_ack(big, &l, sizeof(big),
							    &p, rnd());
				if (rc == 0) {
					check_p_updated(big, l, &p);
					rewrites++;
				}
			}
		}
		free(f);
	}
	printf("fuzz: %lu iterations, %lu parsed OK, %lu rewritten\n", iters,
	       ok, rewrites);
	ck_assert_uint_gt(ok, 1000);
	ck_assert_uint_gt(rewrites, 100);
}
END_TEST

START_TEST(status_strings)
{
	const char *names[ROCE_ERR_NUM + ROCE_NOT_NUM];
	int n = 0;

	for (int s = -(ROCE_ERR_NUM - 1); s < ROCE_NOT_NUM; s++) {
		const char *nm = roce_status_name(s);

		ck_assert_ptr_nonnull(nm);
		ck_assert_ptr_nonnull(roce_status_str(s));
		ck_assert_str_ne(nm, "unknown");
		ck_assert_str_ne(roce_status_str(s), "unknown status");
		for (int j = 0; j < n; j++)
			ck_assert_str_ne(names[j], nm);
		names[n++] = nm;
	}
	ck_assert_str_eq(roce_status_name(ROCE_ERR_TRUNC_BTH), "trunc_bth");
	ck_assert_str_eq(roce_status_name(-ROCE_ERR_NUM), "unknown");
	ck_assert_str_eq(roce_status_name(ROCE_NOT_NUM), "unknown");
	ck_assert_str_eq(roce_status_name(1000), "unknown");
}
END_TEST

START_TEST(psn_helpers)
{
	const struct frame *rd = NULL;
	uint8_t buf[MAX_FRAME_LEN];
	struct roce_pkt p;

	ck_assert_int_eq(roce_psn_diff(0, ROCE_PSN_MASK), 1);
	ck_assert_int_eq(roce_psn_diff(ROCE_PSN_MASK, 0), -1);
	ck_assert_int_eq(roce_psn_diff(5, 3), 2);
	ck_assert_int_eq(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	ck_assert_uint_eq(roce_psn_add(ROCE_PSN_MASK, 1), 0);
	ck_assert_uint_eq(roce_psn_add(10, 5), 15);

	for (int i = 0; i < ncap && rd == NULL; i++)
		if (roce_parse(cap[i].data, cap[i].len, &p) == ROCE_OK &&
		    p.opcode == ROCE_RC_READ_REQUEST)
			rd = &cap[i];
	ck_assert(rd != NULL);
	memcpy(buf, rd->data, rd->len);
	ck_assert_int_eq(roce_parse(buf, rd->len, &p), ROCE_OK);
	ck_assert_uint_eq(roce_req_psns(buf, &p, 1024), 1);  /* 64 or 8 B */
	put_be16(buf + p.bth_off + 12 + 12, 0);
	put_be16(buf + p.bth_off + 12 + 14, 4097);
	ck_assert_uint_eq(roce_req_psns(buf, &p, 1024), 5);
	put_be16(buf + p.bth_off + 12 + 14, 4096);
	ck_assert_uint_eq(roce_req_psns(buf, &p, 1024), 4);
	put_be16(buf + p.bth_off + 12 + 14, 0);
	ck_assert_uint_eq(roce_req_psns(buf, &p, 1024), 1);
	put_be16(buf + p.bth_off + 12 + 12, 0xffff);
	put_be16(buf + p.bth_off + 12 + 14, 0xffff);
	ck_assert_uint_eq(roce_req_psns(buf, &p, 256), 1u << 24);

	for (int i = 0; i < ncap; i++)
		if (roce_parse(cap[i].data, cap[i].len, &p) == ROCE_OK) {
			uint32_t n = roce_req_psns(cap[i].data, &p, 4096);

			if (p.oi->flags & ROCE_F_RESPONSE)
				ck_assert_uint_eq(n, 0);
			else
				ck_assert_uint_eq(n, 1);
		}
}
END_TEST

START_TEST(accessors_set)
{
	const struct sframe *s = scapy_find(0x11, 6, true);
	uint8_t f[MAX_FRAME_LEN];
	struct roce_pkt p, q;

	memcpy(f, s->data, s->len);
	ck_assert_int_eq(roce_parse(f, s->len, &p), ROCE_OK);
	roce_set_psn(f, &p, 0x123456);
	roce_set_qpn(f, &p, 0xabcdef);
	roce_set_aeth(f, &p, 0x61, 0x654321);
	ck_assert_int_eq(roce_parse(f, s->len, &q), ROCE_OK);
	ck_assert_uint_eq(q.psn, 0x123456);
	ck_assert_uint_eq(q.qpn, 0xabcdef);
	ck_assert_uint_eq(roce_get_syndrome(f, &q), 0x61);
	ck_assert_uint_eq(roce_get_msn(f, &q), 0x654321);
	/* AckReq bit and the FECN/BECN byte survive PSN/QPN writes */
	ck_assert_uint_eq(roce_get_ackreq(f, &q), sfield_u(s, "ackreq"));
	ck_assert_mem_eq(f + p.bth_off + 4, s->data + p.bth_off + 4, 1);
	/* not valid any more (fields changed, ICRC not redone) */
	ck_assert(!roce_icrc_verify(f, &q));
	roce_icrc_update(f, &q);
	ck_assert(roce_icrc_verify(f, &q));
	ck_assert_int_eq(roce_syndrome_kind(0x61), ROCE_AETH_NAK);
	ck_assert_int_eq(roce_syndrome_value(0x61), ROCE_NAK_INVALID_REQ);
	ck_assert_uint_eq(roce_syndrome_make(ROCE_AETH_RNR_NAK, 7), 0x27);
}
END_TEST

/* roce_set_qpn_psn writes what roce_set_qpn then roce_set_psn write, and
 * nothing else, on every scapy frame (AckReq set and not, every
 * reserved and FECN/BECN byte scapy gives), QPNs and PSNs wider than
 * 24 bits masked alike. */
START_TEST(set_qpn_psn_is_both)
{
	static const uint32_t vals[][2] = {
		{ 0xabcdef, 0x123456 }, { 0, 0 }, { 0xffffff, 0xffffff },
		{ 0x1abcdef, 0xff000001 }, { 0x000102, 0x800000 },
	};

	ck_assert_int_gt(nsfr, 0);
	for (int i = 0; i < nsfr; i++) {
		const struct sframe *s = &sfr[i];
		struct roce_pkt p;

		if (roce_parse(s->data, s->len, &p) != ROCE_OK)
			continue;
		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			uint8_t a[MAX_FRAME_LEN], b[MAX_FRAME_LEN];

			memcpy(a, s->data, s->len);
			memcpy(b, s->data, s->len);
			roce_set_qpn(a, &p, vals[k][0]);
			roce_set_psn(a, &p, vals[k][1]);
			roce_set_qpn_psn(b, &p, vals[k][0], vals[k][1]);
			ck_assert_mem_eq(a, b, s->len);
		}
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* mbuf wrappers (needs the EAL; runs in its own forked process) */

START_TEST(mbuf_wrappers)
{
	/* --in-memory is refused together with --no-huge by DPDK 22.11
	 * (it implies legacy memory); --no-shconf leaves no runtime files. */
	char *argv[] = { "test_roce", "--no-pci", "--no-huge", "--no-shconf",
			 "-m", "64", "--log-level", "error", "--no-telemetry",
			 NULL };
	const struct sframe *cas = scapy_find(0x13, 4, true);
	const struct sframe *ack = scapy_find(0x11, 6, false);
	struct rte_mempool *mp;
	struct rte_mbuf *m, *m2;
	struct roce_pkt p;
	uint64_t v = 42;
	uint8_t *d;

	ck_assert_int_ge(rte_eal_init(RTE_DIM(argv) - 1, argv), 0);
	roce_crc_init();
	mp = rte_pktmbuf_pool_create("t", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(mp);

	/* CAS -> WRITE: data_len and pkt_len shrink by 4 */
	m = rte_pktmbuf_alloc(mp);
	d = (uint8_t *)rte_pktmbuf_append(m, cas->len);
	memcpy(d, cas->data, cas->len);
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_OK);
	ck_assert_int_eq(roce_mbuf_atomic_to_write(m, &p, &v), 0);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), cas->len - 4);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), cas->len - 4);
	check_p_updated(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
			&p);
	ck_assert(roce_icrc_verify(rte_pktmbuf_mtod(m, uint8_t *), &p));

	/* ACK -> ATOMIC ACK: grows by 8 */
	rte_pktmbuf_reset(m);
	d = (uint8_t *)rte_pktmbuf_append(m, ack->len);
	memcpy(d, ack->data, ack->len);
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_OK);
	roce_set_aeth(d, &p, 0x1f, 1);   /* make sure it is a positive ACK */
	roce_icrc_update(d, &p);
	ck_assert_int_eq(roce_mbuf_ack_to_atomic_ack(m, &p, 7), 0);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), ack->len + 8);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), ack->len + 8);
	check_p_updated(d, rte_pktmbuf_data_len(m), &p);
	ck_assert(roce_icrc_verify(d, &p));

	/* no tailroom: refused, mbuf untouched */
	rte_pktmbuf_reset(m);
	m->data_off = (uint16_t)(m->buf_len - ack->len - 4);
	d = (uint8_t *)rte_pktmbuf_append(m, ack->len);
	memcpy(d, ack->data, ack->len);
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_OK);
	roce_set_aeth(d, &p, 0x1f, 1);
	roce_icrc_update(d, &p);
	ck_assert_int_eq(roce_mbuf_ack_to_atomic_ack(m, &p, 7), -ENOSPC);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), ack->len);
	ck_assert(roce_icrc_verify(d, &p));

	/* chained: RoCE in two segments is refused */
	rte_pktmbuf_reset(m);
	d = (uint8_t *)rte_pktmbuf_append(m, 40);
	memcpy(d, cas->data, 40);
	m2 = rte_pktmbuf_alloc(mp);
	memcpy(rte_pktmbuf_append(m2, cas->len - 40), cas->data + 40,
	       cas->len - 40);
	ck_assert_int_eq(rte_pktmbuf_chain(m, m2), 0);
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_ERR_SEGMENTED);
	ck_assert_int_eq(roce_mbuf_atomic_to_write(m, &p, &v), -EINVAL);

	/* chained but not RoCE (UDP to another port): still "not RoCE", so it
	 * passes as such instead of being counted malformed.  This frame has
	 * a VLAN tag: IP at 18, UDP at 38. */
	d = rte_pktmbuf_mtod(m, uint8_t *);
	ck_assert_uint_eq(d[12], 0x81);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), 40);   /* port is in m2 */
	rte_pktmbuf_mtod(m2, uint8_t *)[38 + 2 - 40] = 0x00;
	rte_pktmbuf_mtod(m2, uint8_t *)[38 + 3 - 40] = 0x35; /* UDP port 53 */
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_NOT_ROCE_PORT);
	d[18 + 9] = 6;                  /* TCP */
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_NOT_UDP);
	d[16] = 0x08;
	d[17] = 0x06;                   /* ARP */
	ck_assert_int_eq(roce_parse_mbuf(m, &p), ROCE_NOT_IP);
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
	rte_eal_cleanup();
}
END_TEST

/* ---------------------------------------------------------------------- */

static Suite *
roce_suite(void)
{
	Suite *s = suite_create("roce");
	TCase *tc;

	tc = tcase_create("peers");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, captures_match_tshark);
	tcase_add_test(tc, scapy_frames_parse);
	tcase_add_test(tc, unknown_opcodes_rejected);
	tcase_add_test(tc, opcode_table_consistent);
	tcase_add_test(tc, ip_options_frames);
	tcase_add_test(tc, huge_buffers);
	suite_add_tcase(s, tc);

	tc = tcase_create("icrc");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, icrc_bitflips_captures);
	tcase_add_test(tc, icrc_bitflips_scapy_ipv6_vlan);
	tcase_add_test(tc, icrc_scalar_and_simd_agree);
	suite_add_tcase(s, tc);

	tc = tcase_create("rewrite");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, rewrites_checked_by_scapy);
	tcase_add_test(tc, rewrite_checker_catches_errors);
	tcase_add_test(tc, accessors_set);
	tcase_add_test(tc, set_qpn_psn_is_both);
	tcase_add_test(tc, mbuf_wrappers);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, truncation_every_offset);
	tcase_add_test(tc, length_corruptions_specific_codes);
	tcase_add_test(tc, fuzz_random_mutations);
	tcase_add_test(tc, status_strings);
	tcase_add_test(tc, psn_helpers);
	suite_add_tcase(s, tc);
	return s;
}

static const char *
env_or_die(const char *k)
{
	const char *v = getenv(k);

	if (v == NULL || !*v) {
		fprintf(stderr, "%s not set (run through meson test)\n", k);
		exit(2);
	}
	return v;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	captures_dir = env_or_die("CAPTURES_DIR");
	helpers_dir = env_or_die("TEST_HELPERS_DIR");
	unit_dir = env_or_die("UNIT_DIR");
	python = env_or_die("SYSTEM_PYTHON");
	tshark = env_or_die("TSHARK");
	setvbuf(stdout, NULL, _IONBF, 0);
	roce_crc_init();
	load_captures();
	load_scapy_frames();
	printf("%d capture frames, %d scapy frames\n", ncap, nsfr);

	sr = srunner_create(roce_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
