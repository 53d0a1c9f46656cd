/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover_sim.c — the closed loop of clover_sim.h: frame builder, responder
 * with real memory, Clover clients, scheduler, end-of-run audit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "clover_sim.h"
#include "roce.h"

#define FRAME_MAX 4200
#define MEM_BASE 0x00007f5a00000000ull
#define SERVER_IP RTE_BE32(0xc6120002)       /* 198.18.0.2 */
#define SERVER_QPN(c) (0x100u + (c))
#define CLIENT_QPN(c) (0x4000u + (c))
#define NULLPTR 0ull

struct frame {
	uint32_t len;
	uint8_t buf[FRAME_MAX];
};

/* A FIFO of frames. */
struct fifo {
	struct frame *f;
	uint32_t cap, head, n;
};

static int
fifo_init(struct fifo *q, uint32_t cap)
{
	q->f = calloc(cap, sizeof(*q->f));
	q->cap = cap;
	q->head = q->n = 0;
	return q->f ? 0 : -1;
}

static struct frame *
fifo_tail(struct fifo *q)
{
	return q->n < q->cap ? &q->f[(q->head + q->n) % q->cap] : NULL;
}

enum cl_state { CL_IDLE, CL_PUT_WRITE, CL_PUT_CAS, CL_PUT_WALK, CL_GET_READ, CL_DONE,
		CL_FINISHED };

struct client {
	unsigned int id;
	uint32_t ip;               /* network order */
	uint32_t psn;
	unsigned int ops_left;
	enum cl_state st;
	unsigned int key;
	uint64_t node;             /* PUT: the new node */
	uint64_t value;            /* PUT: value id */
	unsigned int reads_this_get;
	enum csim_get_class get_class;
	uint64_t *hint;            /* per key */
	struct fifo in;            /* responses */
	unsigned int pending;      /* requests not answered yet */
	unsigned int ignore;       /* answers to discard (shortcut updates) */
	bool have_node;
	uint64_t node_next, node_key, node_vid, shortcut;
};

struct world {
	const struct csim_params *prm;
	struct csim_result *res;
	struct clover *cl;
	uint64_t rng;
	/* responder */
	uint8_t *mem;
	uint64_t mem_len;
	uint64_t next_free;        /* bump allocator (offset) */
	uint64_t sc_off;           /* shortcuts: one 8-byte word per key */
	uint32_t msn;
	struct fifo srv_in;
	/* clients */
	struct client *c;
	/* audit */
	uint64_t n_values;         /* value ids issued */
	uint8_t *committed;        /* per value id */
	uint32_t *value_key;       /* per value id */
	uint64_t *value_node;      /* per value id */
	uint64_t *get_key, *get_val;
	uint64_t n_get_log;
	double *zipf_cdf;
	FILE *pcap;
	/* diagnostics */
	uint8_t *learned;          /* per node: lib/clover learned its data WRITE */
	uint64_t *tail;            /* per key: the tail in memory */
	uint64_t *snap;            /* clients * keys scratch */
	uint64_t *snap_cnt;        /* clients * keys scratch */
};

/* ---------------------------------------------------------------------- */

static uint64_t
rnd(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
rnd01(struct world *w)
{
	return (double)(rnd(w) >> 11) / (double)(1ull << 53);
}

static unsigned int
pick_key(struct world *w)
{
	unsigned int lo = 0, hi = w->prm->keys - 1;
	double u;

	if (w->zipf_cdf == NULL)
		return (unsigned int)(rnd(w) % w->prm->keys);
	u = rnd01(w);
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (w->zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	put_le64(p, __builtin_bswap64(v));
}

static uint64_t
get_be64(const uint8_t *p)
{
	return __builtin_bswap64(get_le64(p));
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Ethernet/IPv4/UDP/BTH + ext + payload + ICRC, checksums computed by lib/roce. */
uint32_t
csim_build(uint8_t *out, uint32_t src_ip, uint32_t dst_ip, uint32_t dqpn, uint8_t opcode,
      uint32_t psn, const uint8_t *ext, uint32_t ext_len, const uint8_t *pl, uint32_t plen)
{
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
	static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };
	uint32_t pad = (4 - (plen & 3)) & 3;
	uint32_t ip_len = 20 + 8 + 12 + ext_len + plen + pad + 4;
	uint8_t *ip = out + 14, *udp = ip + 20, *bth = udp + 8;
	struct roce_pkt p;

	memcpy(out, mac_b, 6);
	memcpy(out + 6, mac_a, 6);
	out[12] = 0x08;
	out[13] = 0x00;
	ip[0] = 0x45;
	ip[1] = 0x02;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[4] = 0x12;
	ip[5] = 0x34;
	ip[6] = 0x40;                  /* DF */
	ip[7] = 0;
	ip[8] = 64;
	ip[9] = 17;
	ip[10] = ip[11] = 0;
	memcpy(ip + 12, &src_ip, 4);
	memcpy(ip + 16, &dst_ip, 4);
	udp[0] = 0xc0;
	udp[1] = 0x00;
	udp[2] = 4791 >> 8;
	udp[3] = 4791 & 0xff;
	udp[4] = (uint8_t)((ip_len - 20) >> 8);
	udp[5] = (uint8_t)(ip_len - 20);
	udp[6] = udp[7] = 0;
	bth[0] = opcode;
	bth[1] = (uint8_t)(0x40 | pad << 4);
	bth[2] = bth[3] = 0xff;
	put_be32(bth + 4, dqpn & 0xffffff);
	put_be32(bth + 8, (psn & 0xffffff) | 0x80000000u);
	if (ext_len > 0)
		memcpy(bth + 12, ext, ext_len);
	if (plen > 0)
		memcpy(bth + 12 + ext_len, pl, plen);
	memset(bth + 12 + ext_len + plen, 0, pad + 4);
	if (roce_parse(out, 14 + ip_len, &p) != ROCE_OK)
		return 0;
	roce_ip_cksum_update(out, &p);
	roce_icrc_update(out, &p);
	return 14 + ip_len;
}

static void
pcap_open(struct world *w, const char *path)
{
	static const uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

	w->pcap = fopen(path, "wb");
	if (w->pcap != NULL)
		fwrite(hdr, sizeof(hdr), 1, w->pcap);
}

static void
pcap_write(struct world *w, const uint8_t *f, uint32_t len)
{
	uint32_t rec[4] = { 1700000000, (uint32_t)(w->res->rewritten % 1000000), len, len };

	if (w->pcap == NULL)
		return;
	fwrite(rec, sizeof(rec), 1, w->pcap);
	fwrite(f, len, 1, w->pcap);
}

/* The middle: every frame crosses lib/clover (if enabled). */
static void
wire(struct world *w, struct frame *f, bool to_server)
{
	struct roce_pkt p;

	w->res->frames++;
	if (roce_parse(f->buf, f->len, &p) != ROCE_OK) {
		w->res->bad_frames++;
		return;
	}
	uint64_t learned = w->res->ctr[CLOVER_DATA_WRITES];
	bool rw = w->cl != NULL &&
		  clover_process(w->cl, f->buf, &p, 0, to_server, w->res->ctr);

	if (w->res->ctr[CLOVER_DATA_WRITES] != learned) {
		uint64_t va = get_be64(f->buf + p.bth_off + 12);

		w->learned[(va - MEM_BASE) / w->prm->value_size] = 1;
	}
	if (rw) {
		w->res->rewritten++;
		pcap_write(w, f->buf, f->len);
		if (!roce_icrc_verify(f->buf, &p))
			w->res->bad_frames++;
	}
}

/* ---------------------------------------------------------------------- */
/* Responder */

static uint8_t *
mem_at(struct world *w, uint64_t va, uint32_t len)
{
	if (va < MEM_BASE || va - MEM_BASE + len > w->mem_len)
		return NULL;
	return w->mem + (va - MEM_BASE);
}

static void
server_step(struct world *w)
{
	struct frame *req = &w->srv_in.f[w->srv_in.head];
	uint8_t ext[8], *bth, *m;
	struct roce_pkt p;
	unsigned int cid;
	struct client *c;
	struct frame *resp;
	uint64_t va;
	uint32_t len;

	w->srv_in.head = (w->srv_in.head + 1) % w->srv_in.cap;
	w->srv_in.n--;
	if (roce_parse(req->buf, req->len, &p) != ROCE_OK || !roce_icrc_verify(req->buf, &p)) {
		w->res->bad_frames++;
		return;
	}
	cid = p.qpn - SERVER_QPN(0);
	if (cid >= w->prm->clients) {
		w->res->bad_frames++;
		return;
	}
	c = &w->c[cid];
	resp = fifo_tail(&c->in);
	if (resp == NULL) {
		w->res->bad_frames++;
		return;
	}
	bth = req->buf + p.bth_off;
	va = get_be64(bth + 12);
	w->msn++;
	put_be32(ext, (0x1fu << 24) | (w->msn & 0xffffff));   /* AETH: ACK */
	switch (p.opcode) {
	case ROCE_RC_WRITE_ONLY:
		len = get_be32(bth + 12 + 12);
		m = mem_at(w, va, len);
		if (m == NULL) {
			w->res->bad_frames++;
			return;
		}
		memcpy(m, req->buf + p.payload_off, len);
		resp->len = csim_build(resp->buf, SERVER_IP, c->ip, CLIENT_QPN(cid),
				  ROCE_RC_ACKNOWLEDGE, p.psn, ext, 4, NULL, 0);
		break;
	case ROCE_RC_READ_REQUEST:
		len = get_be32(bth + 12 + 12);
		m = mem_at(w, va, len);
		if (m == NULL) {
			w->res->bad_frames++;
			return;
		}
		resp->len = csim_build(resp->buf, SERVER_IP, c->ip, CLIENT_QPN(cid),
				  ROCE_RC_READ_RESPONSE_ONLY, p.psn, ext, 4, m, len);
		break;
	case ROCE_RC_COMPARE_SWAP: {
		uint64_t swap = get_be64(bth + 12 + 12), cmp = get_be64(bth + 12 + 20), old;
		uint8_t ae[12];

		m = mem_at(w, va, 8);
		if (m == NULL) {
			w->res->bad_frames++;
			return;
		}
		old = get_le64(m);
		if (old == cmp) {
			put_le64(m, swap);
			w->tail[get_le64(m + 8)] = swap;
		}
		memcpy(ae, ext, 4);
		put_be64(ae + 4, old);
		resp->len = csim_build(resp->buf, SERVER_IP, c->ip, CLIENT_QPN(cid),
				  ROCE_RC_ATOMIC_ACKNOWLEDGE, p.psn, ae, 12, NULL, 0);
		break;
	}
	default:
		w->res->bad_frames++;
		return;
	}
	c->in.n++;
	wire(w, resp, false);
}

/* ---------------------------------------------------------------------- */
/* Clients */

/* round: this request starts a new round trip (pipelined ones do not). */
static void
send_req(struct world *w, struct client *c, bool round, uint8_t opcode,
	 const uint8_t *ext, uint32_t ext_len, const uint8_t *pl, uint32_t plen)
{
	struct frame *f = fifo_tail(&w->srv_in);

	if (f == NULL) {
		snprintf(w->res->err, sizeof(w->res->err), "server queue full");
		w->res->bad_frames++;
		return;
	}
	f->len = csim_build(f->buf, c->ip, SERVER_IP, SERVER_QPN(c->id), opcode, c->psn, ext,
		       ext_len, pl, plen);
	c->psn = (c->psn + 1) & 0xffffff;
	w->srv_in.n++;
	c->pending++;
	if (round)
		w->res->round_trips++;
	wire(w, f, true);
}

static void
send_read(struct world *w, struct client *c, bool round, uint64_t va, uint32_t len)
{
	uint8_t reth[16];

	put_be64(reth, va);
	put_be32(reth + 8, 0x1234);
	put_be32(reth + 12, len);
	if (len == w->prm->value_size)
		w->res->reads_sent++;
	send_req(w, c, round, ROCE_RC_READ_REQUEST, reth, 16, NULL, 0);
}

static void
send_write(struct world *w, struct client *c, bool round, uint64_t va,
	   const uint8_t *val, uint32_t len)
{
	uint8_t reth[16];

	put_be64(reth, va);
	put_be32(reth + 8, 0x1234);
	put_be32(reth + 12, len);
	send_req(w, c, round, ROCE_RC_WRITE_ONLY, reth, 16, val, len);
}

static void
send_cas(struct world *w, struct client *c, uint64_t node_va)
{
	uint8_t ae[28];

	put_be64(ae, node_va);             /* next pointer at offset 0 */
	put_be32(ae + 8, 0x1234);
	put_be64(ae + 12, c->node);        /* swap: the new node */
	put_be64(ae + 20, NULLPTR);        /* compare: NULL */
	w->res->cas_sent++;
	send_req(w, c, true, ROCE_RC_COMPARE_SWAP, ae, 28, NULL, 0);
}

static uint64_t
shortcut_va(const struct world *w, unsigned int key)
{
	return MEM_BASE + w->sc_off + 8ull * key;
}

/* The first READ of a GET, classified by what lib/clover did with it. */
static void
cursor_read(struct world *w, struct client *c)
{
	uint64_t *ctr = w->res->ctr, va = c->hint[c->key];
	uint64_t st = ctr[CLOVER_STEERED_READS], at = ctr[CLOVER_READ_AT_TAIL];
	uint64_t unk = ctr[CLOVER_READ_TAIL_UNKNOWN], miss = ctr[CLOVER_READ_MISSES];

	if (va != w->tail[c->key])
		w->res->cursor_stale++;
	send_read(w, c, true, va, w->prm->value_size);
	if (w->cl == NULL || !w->prm->read_steering)
		c->get_class = CSIM_GET_UNSTEERED;
	else if (ctr[CLOVER_STEERED_READS] != st)
		c->get_class = CSIM_GET_STEERED;
	else if (ctr[CLOVER_READ_AT_TAIL] != at)
		c->get_class = CSIM_GET_AT_TAIL;
	else if (ctr[CLOVER_READ_TAIL_UNKNOWN] != unk)
		c->get_class = CSIM_GET_TAIL_UNKNOWN;
	else if (ctr[CLOVER_READ_MISSES] != miss)
		c->get_class = w->learned[(va - MEM_BASE) / w->prm->value_size] ?
			       CSIM_GET_MISS_EVICTED : CSIM_GET_MISS_NEVER;
	else
		c->get_class = CSIM_GET_UNSTEERED;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* How many distinct cursors the clients hold, and how many are stale: what
 * a read table would have to remember for every cursor READ to hit.  Also
 * the best any table of `slots` entries could do: the share of stale
 * (client, key) cursors covered by the `slots` most-held stale addresses. */
static void
snapshot_hints(struct world *w, uint64_t slots)
{
	const struct csim_params *prm = w->prm;
	uint64_t n = 0, i, distinct = 0, stale = 0, stale_pairs = 0, run = 0, covered = 0;
	uint64_t *cnt = w->snap_cnt;
	unsigned int ci, k;

	for (ci = 0; ci < prm->clients; ci++)
		for (k = 0; k < prm->keys; k++)
			w->snap[n++] = w->c[ci].hint[k];
	qsort(w->snap, n, sizeof(*w->snap), cmp_u64);
	for (i = 0; i < n; i++) {
		uint8_t *m = mem_at(w, w->snap[i], 24);
		bool is_stale = m != NULL && w->tail[get_le64(m + 8)] != w->snap[i];

		if (is_stale)
			stale_pairs++;
		if (i > 0 && w->snap[i] == w->snap[i - 1]) {
			if (is_stale)
				cnt[stale - 1]++;
			continue;
		}
		distinct++;
		if (is_stale)
			cnt[stale++] = 1;
	}
	/* most-held first */
	qsort(cnt, stale, sizeof(*cnt), cmp_u64);
	for (i = 0; i < stale && run < slots; i++, run++)
		covered += cnt[stale - 1 - i];
	if (stale_pairs > 0)
		w->res->hint_oracle_sum += (double)covered / (double)stale_pairs;
	w->res->hint_samples++;
	w->res->hint_distinct_sum += distinct;
	w->res->hint_stale_sum += stale;
}

static void
start_op(struct world *w, struct client *c)
{
	uint8_t *val;

	if (c->ops_left == 0) {
		c->st = CL_DONE;
		return;
	}
	c->ops_left--;
	c->key = pick_key(w);
	if (rnd(w) % 100 < w->prm->write_pct) {
		w->res->puts++;
		c->st = CL_PUT_WRITE;
		c->node = MEM_BASE + w->next_free;
		w->next_free += w->prm->value_size;
		c->value = w->n_values++;
		w->value_key[c->value] = c->key;
		w->value_node[c->value] = c->node;
		val = calloc(1, w->prm->value_size);
		if (val == NULL) {
			w->res->bad_frames++;
			return;
		}
		put_le64(val, NULLPTR);
		put_le64(val + 8, c->key);
		put_le64(val + 16, c->value);
		memset(val + 24, 'a' + (int)(c->value % 26), w->prm->value_size - 24);
		send_write(w, c, true, c->node, val, w->prm->value_size);
		free(val);
	} else {
		/* Clover's GET: the cached cursor and the key's shortcut, pipelined */
		w->res->gets++;
		c->st = CL_GET_READ;
		c->reads_this_get = 1;
		c->have_node = false;
		cursor_read(w, c);
		send_read(w, c, false, shortcut_va(w, c->key), 8);
	}
}

static void
client_rx(struct world *w, struct client *c)
{
	struct frame *f = &c->in.f[c->in.head];
	struct roce_pkt p;
	const uint8_t *node;
	uint64_t next;

	c->in.head = (c->in.head + 1) % c->in.cap;
	c->in.n--;
	c->pending--;
	if (roce_parse(f->buf, f->len, &p) != ROCE_OK || !roce_icrc_verify(f->buf, &p)) {
		w->res->bad_frames++;
		return;
	}
	if (c->ignore > 0) {
		/* ACK of a shortcut update sent without waiting */
		c->ignore--;
		return;
	}
	switch (c->st) {
	case CL_PUT_WRITE:
		c->st = CL_PUT_CAS;
		send_cas(w, c, c->hint[c->key]);
		return;
	case CL_PUT_CAS: {
		uint64_t orig = get_be64(f->buf + p.bth_off + 12 + 4);
		uint8_t sc[8];

		if (orig == NULLPTR) {
			w->committed[c->value] = 1;
			c->hint[c->key] = c->node;
			/* update the shortcut, do not wait for it */
			put_le64(sc, c->node);
			send_write(w, c, false, shortcut_va(w, c->key), sc, 8);
			c->ignore++;
			start_op(w, c);
			return;
		}
		w->res->cas_failed++;
		c->st = CL_PUT_WALK;
		c->hint[c->key] = orig;
		send_read(w, c, true, orig, w->prm->value_size);
		return;
	}
	case CL_PUT_WALK:
	case CL_GET_READ:
		if (c->st == CL_GET_READ && p.payload_len - p.pad == 8) {
			/* the shortcut: the cursor for next time */
			c->shortcut = get_le64(f->buf + p.payload_off);
			if (c->pending > 0 || !c->have_node)
				return;
		} else {
			node = f->buf + p.payload_off;
			c->node_next = get_le64(node);
			c->node_key = get_le64(node + 8);
			c->node_vid = get_le64(node + 16);
			c->have_node = true;
			if (c->pending > 0)
				return;
		}
		next = c->node_next;
		/* Clover: a cursor that is not the tail is abandoned for the
		 * shortcut read alongside it (fresher), then the chain is walked */
		if (next != NULLPTR && c->st == CL_GET_READ && c->reads_this_get == 1 &&
		    c->shortcut != c->hint[c->key])
			next = c->shortcut;
		if (next != NULLPTR) {
			c->hint[c->key] = next;
			if (c->st == CL_GET_READ)
				c->reads_this_get++;
			send_read(w, c, true, next, w->prm->value_size);
			return;
		}
		if (c->st == CL_PUT_WALK) {
			/* the node whose next is NULL is at the hint (or was
			 * steered: CAS where we believe the tail is) */
			c->st = CL_PUT_CAS;
			send_cas(w, c, c->hint[c->key]);
			return;
		}
		if (c->reads_this_get > 1)
			w->res->gets_multi_rt++;
		w->res->get_class[c->get_class][0]++;
		w->res->get_class[c->get_class][1] += c->reads_this_get > 1;
		w->get_key[w->n_get_log] = c->key;
		w->get_val[w->n_get_log] = c->node_vid;
		if (c->node_key != c->key)
			w->res->bad_reads++;
		w->n_get_log++;
		c->hint[c->key] = c->shortcut;
		start_op(w, c);
		return;
	default:
		w->res->bad_frames++;
		return;
	}
}

/* ---------------------------------------------------------------------- */
/* Audit: every committed value is in its key's chain exactly once, the
 * chains hold nothing else, every GET returned a committed value of its key. */

static void
audit(struct world *w)
{
	const struct csim_params *prm = w->prm;
	uint64_t n_nodes = w->next_free / prm->value_size, i, steps;
	uint8_t *seen = calloc(n_nodes + 1, 1);
	unsigned int k;

	for (k = 0; k < prm->keys; k++) {
		uint64_t va = MEM_BASE + (uint64_t)k * prm->value_size;

		for (steps = 0; va != NULLPTR; steps++) {
			uint8_t *m = mem_at(w, va, prm->value_size);
			uint64_t idx, vid;

			if (m == NULL || steps > n_nodes || (va - MEM_BASE) % prm->value_size) {
				w->res->chain_errors++;
				break;
			}
			idx = (va - MEM_BASE) / prm->value_size;
			vid = get_le64(m + 16);
			if (seen[idx]++ || get_le64(m + 8) != k || vid >= w->n_values ||
			    !w->committed[vid] || w->value_key[vid] != k) {
				w->res->chain_errors++;
				break;
			}
			va = get_le64(m);
		}
	}
	for (i = 0; i < w->n_values; i++)
		if (w->committed[i] &&
		    !seen[(w->value_node[i] - MEM_BASE) / prm->value_size])
			w->res->lost_writes++;
	for (i = 0; i < w->n_get_log; i++)
		if (w->get_val[i] >= w->n_values || !w->committed[w->get_val[i]] ||
		    w->value_key[w->get_val[i]] != w->get_key[i])
			w->res->bad_reads++;
	free(seen);
}

/* ---------------------------------------------------------------------- */

int
csim_run(const struct csim_params *prm, struct csim_result *res)
{
	struct world w;
	uint64_t total_ops = (uint64_t)prm->clients * prm->ops, max_values;
	unsigned int i, k, active;
	uint64_t step;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	if (prm->clients == 0 || prm->clients > 1000 || prm->keys == 0 ||
	    prm->value_size < 24 || prm->value_size > 4096) {
		snprintf(res->err, sizeof(res->err), "bad parameters");
		return -1;
	}
	roce_crc_init();
	w.prm = prm;
	w.res = res;
	w.rng = prm->seed;
	max_values = prm->keys + total_ops;
	w.sc_off = max_values * prm->value_size;
	w.mem_len = w.sc_off + 8ull * prm->keys;
	w.mem = calloc(1, w.mem_len);
	w.committed = calloc(max_values, 1);
	w.value_key = calloc(max_values, sizeof(*w.value_key));
	w.value_node = calloc(max_values, sizeof(*w.value_node));
	w.get_key = calloc(total_ops + 1, sizeof(uint64_t));
	w.get_val = calloc(total_ops + 1, sizeof(uint64_t));
	w.c = calloc(prm->clients, sizeof(*w.c));
	w.learned = calloc(max_values, 1);
	w.tail = calloc(prm->keys, sizeof(*w.tail));
	w.snap = calloc((size_t)prm->clients * prm->keys, sizeof(*w.snap));
	w.snap_cnt = calloc((size_t)prm->clients * prm->keys, sizeof(*w.snap_cnt));
	if (!w.learned || !w.tail || !w.snap || !w.snap_cnt ||
	    !w.mem || !w.committed || !w.value_key || !w.value_node || !w.get_key ||
	    !w.get_val || !w.c || fifo_init(&w.srv_in, 4 * prm->clients + 4) < 0) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		goto out;
	}
	if (prm->zipf > 0) {
		double sum = 0;

		w.zipf_cdf = calloc(prm->keys, sizeof(double));
		if (w.zipf_cdf == NULL)
			goto out;
		for (k = 0; k < prm->keys; k++)
			sum += 1.0 / pow(k + 1, prm->zipf);
		for (k = 0; k < prm->keys; k++)
			w.zipf_cdf[k] = (k ? w.zipf_cdf[k - 1] : 0) + 1.0 / pow(k + 1, prm->zipf) / sum;
		w.zipf_cdf[prm->keys - 1] = 1.0;
	}
	if (prm->clover) {
		struct clover_params cp;

		memset(&cp, 0, sizeof(cp));
		cp.n_regions = 1;
		cp.regions[0] = (struct clover_region){
			.server = 0, .rkey_any = true, .base = 0, .last = UINT64_MAX,
			.write_min = prm->value_size, .key_offset = 8, .key_width = 8,
			.next_offset = 0, .read_min = prm->value_size,
		};
		cp.keys = prm->table_keys ? prm->table_keys : prm->keys;
		cp.read_factor = prm->read_factor ? prm->read_factor : 3;
		cp.read_ways = prm->read_ways;
		cp.qps = prm->tiny_tables ? 2 : 4096;
		cp.cas = prm->tiny_tables ? 2 : 4096;
		cp.write_steering = prm->write_steering;
		cp.read_steering = prm->read_steering;
		w.cl = clover_create(&cp);
		if (w.cl == NULL) {
			snprintf(res->err, sizeof(res->err), "clover_create failed");
			goto out;
		}
	}
	if (prm->steered_pcap != NULL)
		pcap_open(&w, prm->steered_pcap);

	for (i = 0; i < prm->clients; i++) {
		struct client *c = &w.c[i];

		c->id = i;
		c->ip = rte_cpu_to_be_32(0xc6120100u + (i / 250) * 256 + i % 250 + 1);
		c->psn = (uint32_t)(rnd(&w) & 0xffffff);
		c->ops_left = prm->ops;
		c->hint = calloc(prm->keys, sizeof(uint64_t));
		if (c->hint == NULL || fifo_init(&c->in, 4) < 0)
			goto out;
		for (k = 0; k < prm->keys; k++)
			c->hint[k] = MEM_BASE + (uint64_t)k * prm->value_size;
		c->st = CL_IDLE;
	}

	/* Initial version of every key: node k, inserted through the wire
	 * (a data WRITE without a commit CAS, as Clover's inserts look). */
	for (k = 0; k < prm->keys; k++) {
		uint8_t reth[16], *val = calloc(1, prm->value_size);

		if (val == NULL)
			goto out;
		put_le64(val, NULLPTR);
		put_le64(val + 8, k);
		put_le64(val + 16, k);
		put_be64(reth, MEM_BASE + (uint64_t)k * prm->value_size);
		put_be32(reth + 8, 0x1234);
		put_be32(reth + 12, prm->value_size);
		send_req(&w, &w.c[k % prm->clients], false, ROCE_RC_WRITE_ONLY, reth, 16,
			 val, prm->value_size);
		free(val);
		server_step(&w);
		w.c[k % prm->clients].in.n = 0;          /* the ACK: not needed */
		w.c[k % prm->clients].pending = 0;
		put_le64(w.mem + w.sc_off + 8ull * k, MEM_BASE + (uint64_t)k * prm->value_size);
		w.committed[k] = 1;
		w.value_key[k] = k;
		w.value_node[k] = MEM_BASE + (uint64_t)k * prm->value_size;
		w.tail[k] = w.value_node[k];
	}
	w.n_values = prm->keys;
	w.next_free = (uint64_t)prm->keys * prm->value_size;

	/* Each step one party acts, chosen at random among those that can: the
	 * server (if it has requests) or a client (response to take, or idle
	 * with ops left).  The server is one of N+1: queues build up. */
	active = prm->clients;
	for (step = 0; active > 0 || w.srv_in.n > 0; step++) {
		unsigned int pick = (unsigned int)(rnd(&w) % (prm->clients + 1));

		if (step % 4096 == 4095)
			snapshot_hints(&w, (uint64_t)(prm->table_keys ? prm->table_keys :
						prm->keys) * (prm->read_factor ? prm->read_factor : 3));

		if (res->bad_frames > 0)
			break;
		if (pick == prm->clients) {
			if (w.srv_in.n > 0)
				server_step(&w);
			continue;
		}
		{
			struct client *c = &w.c[pick];

			if (c->in.n > 0) {
				client_rx(&w, c);
			} else if (c->st == CL_IDLE) {
				start_op(&w, c);
			}
			if (c->st == CL_DONE && c->pending == 0) {
				c->st = CL_FINISHED;
				active--;
			}
		}
	}
	audit(&w);
	rc = 0;
out:
	if (w.pcap != NULL)
		fclose(w.pcap);
	if (w.c != NULL)
		for (i = 0; i < prm->clients; i++) {
			free(w.c[i].hint);
			free(w.c[i].in.f);
		}
	free(w.c);
	free(w.srv_in.f);
	free(w.mem);
	free(w.committed);
	free(w.value_key);
	free(w.value_node);
	free(w.get_key);
	free(w.get_val);
	free(w.zipf_cdf);
	free(w.learned);
	free(w.tail);
	free(w.snap);
	free(w.snap_cnt);
	clover_destroy(w.cl);
	return rc;
}
