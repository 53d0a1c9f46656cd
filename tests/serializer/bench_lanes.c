/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_lanes.c — what connection remapping costs per frame over atomic
 * replacement alone, through swordd's worker (issue #12's budget):
 * the same traffic through workers with atomic replacement alone, with
 * atomic replacement and remapping (lanes = 1), and (floor, all) with
 * atomic replacement and the floor: a stand-in second function that does
 * only what any remapping of this traffic must do per frame (below,
 * "The floor").  Not a test: prints ns per frame of each and the
 * differences.
 *
 *   bench_lanes [rounds-per-run] [runs] [both|accel|remap|floor|all]
 *               [coalesce] [read|read4k]
 *
 * both: accel and remap; all: accel, remap and floor.  read, read4k: the
 * clients READ 64 or 4096 bytes of data (PMTU 1024: one or four response
 * packets) instead of their CAS, which atomic replacement passes, one per
 * connection per burst.
 *
 * Traffic: 8 client connections (4 hosts x 2 QPs; their PSNs apart, as
 * pairing a connection by its answers needs without the RDMA CM, lib/rc),
 * each toggling its own lock word with
 * CAS(v, v^1), 4 per connection per burst of 32.  A responder model
 * executes what reaches the server (a CAS, or the WRITE it became) and
 * answers each with its ACK (coalesce: one ACK per 8 requests of a server
 * QP, as a ConnectX does, only the last of each 8 answered, and the last
 * of a burst; onto one lane, so a lane ACK covers several clients, which
 * remapping expands; the floor cannot); the answers
 * go back through the same worker as one burst.  Only
 * sword_worker_process is timed, and counted under valgrind
 * --tool=callgrind --collect-atstart=no: run it with accel, then remap
 * (or floor), and divide each total by the frames it reports.  Every
 * frame out is checked (outside the timing): ICRC good, ATOMIC ACKs to
 * the clients; "wrong" counts the others (exit status 1).  BENCH_DUMP=1
 * prints the functions' counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "bench_util.h"

#include "rdma_model.h"
#include "roce.h"
#include "ser_fn.h"
#include "remap_fn.h"
#include "remap_internal.h"
#include "rc.h"
#include "sword_config.h"
#include "sword_worker.h"

#define NCONN 8
#define PER_CONN 4
#define BURST (NCONN * PER_CONN)
#define SRV_IP RTE_BE32(0xc6120001)
#define CL_IP(i) RTE_BE32(0xc6120010 + (uint32_t)(i) / 2)
#define SRV_QPN(i) (0x100u + (uint32_t)(i))
#define CL_QPN(i) (0x200u + (uint32_t)(i))
#define WORD_VA(i) (0x10000ull + 8ull * (uint64_t)(i))
#define FRAME_MAX 1152          /* a READ response of PMTU bytes */
#define PMTU 1024               /* read traffic only (atomic.pmtu) */
#define DATA_VA(i) (0x100000ull + 4096ull * (uint64_t)(i))

/* What the clients ask: CAS on their lock words (the budget's traffic),
 * or READs of data outside the lock region, which atomic replacement
 * passes: 64 bytes (one response packet) or 4096 (four at PMTU). */
static enum traffic { T_CAS, T_READ, T_READ4K } traffic;
static uint32_t read_len;
/* Requests per connection per burst: READs one (8 on the lane, within the
 * server QP's 16 responder resources: a READ beyond them is refused and
 * its client asked to resend, which these clients do not model). */
#define per_conn() (traffic == T_CAS ? PER_CONN : 1)

static struct rte_mempool *pool;

/*
 * The floor: the work any remapping of this traffic must do per frame, as
 * a second function in the same chain, and nothing else.  It is not a
 * remapping: it checks nothing (one lane, learned from the first request;
 * every answer taken for the lane's; no room, turn or order kept), and
 * registers no ordering answer (the serializer decides per connection, as
 * alone, which on this traffic is the same decision).  So remapping can
 * cost no less than this here.  A request: its ICRC checked if no one has
 * yet (before anything is learned from it), a lane PSN, a stub and a
 * reverse entry, both MAC addresses, the source IP (checksum folded), the
 * UDP source port, QPN and PSN.  An answer: the stub at its PSN and its
 * client, the ICRC checked, destination MAC and IP, QPN, PSN, MSN; and the
 * answer's connection noted for atomic replacement, as remapping does.
 * The helpers are lib/remap's own (remap_internal.h).
 */
#define FLOOR_RING 256

struct floor_stub {
	uint32_t conn, inc, cpsn, cmsn;
	uint8_t kind, flags;
};

struct floor_rev {
	uint32_t cpsn, lpsn, cmsn;
	uint8_t valid, kind;
};

struct floor_conn {
	uint32_t inc, msn;
	uint8_t mac[6];
	struct floor_rev rev[FLOOR_RING];
};

struct floor_fn {
	struct rc_table *rc;
	bool active;                   /* after the warm-up, with connections
					* paired (remapping binds them then) */
	bool learned;
	uint8_t eth[12];               /* the lane's: server's MAC, owner's */
	uint32_t ip, qpn, next;
	uint16_t sport;
	struct floor_stub stub[FLOOR_RING];
	struct floor_conn *conn;       /* by rc slot */
};

static void *
floor_create(const struct sword_config *cfg, struct sword_worker *w, int socket_id)
{
	struct floor_fn *f = calloc(1, sizeof(*f));

	(void)cfg;
	(void)socket_id;
	if (f == NULL || (f->rc = sword_worker_rc(w)) == NULL ||
	    (f->conn = calloc(rc_capacity(f->rc), sizeof(*f->conn))) == NULL)
		abort();
	return f;
}

static void
floor_destroy(void *state)
{
	struct floor_fn *f = state;

	free(f->conn);
	free(f);
}

static bool
floor_request(struct floor_fn *f, struct sword_fn_ctx *ctx)
{
	struct rc_table_head *h = (struct rc_table_head *)(void *)f->rc;
	const uint32_t slot = h->last_req;   /* atomic replacement's lookup */
	const struct rc_conn *c = &h->conns[slot];
	struct floor_conn *fc = &f->conn[slot];
	struct roce_pkt *p = ctx->p;
	uint8_t *d = ctx->frame;
	const uint32_t cpsn = p->psn, lpsn = f->next;
	struct floor_stub *st = &f->stub[lpsn % FLOOR_RING];
	struct floor_rev *rv = &fc->rev[cpsn % FLOOR_RING];

	if (!ctx->icrc_ok && !(ctx->icrc_ok = roce_icrc_verify(d, p)))
		return false;
	if (!f->learned) {
		memcpy(f->eth, d, sizeof(f->eth));
		f->ip = p->src_ip4;
		f->qpn = p->qpn;
		f->sport = roce_ld16(d + p->l4_off);
		f->learned = true;
	}
	if (fc->inc != c->incarnation) {
		fc->inc = c->incarnation;
		fc->msn = 0;
		memcpy(fc->mac, d + 6, 6);
	}
	fc->msn = roce_psn_add(fc->msn, 1);
	st->conn = slot;
	st->inc = c->incarnation;
	st->cpsn = cpsn;
	st->cmsn = fc->msn;
	st->kind = RK_ACKABLE;
	st->flags = RS_FIRST | RS_ENDS_MSG;
	rv->cpsn = cpsn;
	rv->lpsn = lpsn;
	rv->cmsn = fc->msn;
	rv->valid = 1;
	rv->kind = RK_ACKABLE;
	f->next = roce_psn_add(lpsn, 1);
	memcpy(d, f->eth, sizeof(f->eth));     /* as remapping's stitch does */
	if (p->src_ip4 != f->ip)
		rmp_set_ip4_addr(d, p, 12, f->ip);
	roce_st16(d + p->l4_off, f->sport);
	p->src_ip4 = f->ip;
	roce_set_qpn_psn(d, p, f->qpn, lpsn);
	p->qpn = f->qpn;
	p->psn = lpsn;
	return true;
}

static bool
floor_answer(struct floor_fn *f, struct sword_fn_ctx *ctx)
{
	struct roce_pkt *p = ctx->p;
	uint8_t *d = ctx->frame, *aeth;
	const struct floor_stub *st = &f->stub[p->psn % FLOOR_RING];
	struct rc_conn *c = rc_at(f->rc, st->conn);

	if (c == NULL || (!ctx->icrc_ok && !(ctx->icrc_ok = roce_icrc_verify(d, p))))
		return false;
	rmp_set_dst(d, p, f->conn[st->conn].mac, c->cl_ip);
	roce_set_qpn_psn(d, p, c->cl_qpn, st->cpsn);
	p->qpn = c->cl_qpn;
	p->psn = st->cpsn;
	aeth = d + p->bth_off + p->oi->off[ROCE_HDR_AETH];
	roce_st32(aeth, ((uint32_t)aeth[0] << 24) | (st->cmsn & ROCE_PSN_MASK));
	rc_note_resp(f->rc, c);
	return true;
}

static enum sword_fn_verdict
floor_process(void *state, struct sword_worker *w, struct sword_fn_ctx *ctx)
{
	struct floor_fn *f = state;

	(void)w;
	if (!f->active)
		return SWORD_FN_PASS;
	if (!(ctx->to_server ? floor_request(f, ctx) : floor_answer(f, ctx)))
		return SWORD_FN_PASS;
	ctx->resign_due = true;
	return SWORD_FN_MODIFIED;
}

static const struct sword_fn_ops floor_fn_ops = {
	.name = "floor",
	.create = floor_create,
	.destroy = floor_destroy,
	.process = floor_process,
};

/* The memory server: its words and each QP's MSN. */
struct server_model {
	uint64_t word[NCONN];
	uint32_t msn[NCONN];
	uint32_t unanswered[NCONN];  /* coalescing: requests since its last ACK */
	uint32_t last_psn[NCONN];    /* the last of them */
};

struct side {
	const char *name;
	struct sword_config cfg;
	struct sword_shard_map shards;
	struct sword_worker w;
	struct server_model srv;
	uint32_t psn[NCONN];
	uint64_t value[NCONN];
	bool coalesce;
	double *req_ns, *ack_ns;     /* per burst, ns per frame */
	size_t n_req, n_ack;
	uint64_t frames_req, frames_ack;  /* timed frames */
	uint64_t wrong;              /* a client got something it did not ask */
};

enum side_kind { SIDE_ACCEL, SIDE_REMAP, SIDE_FLOOR };

static void
config_load(struct side *s, bool remap)
{
	const char *sets[] = {
		"ports.mode=one-port", "server.mem0.ip=198.18.0.1",
		"lock.l0.server=mem0", "lock.l0.rkey=0x2521", "lock.l0.base=0x10000",
		"lock.l0.length=1024", "lock.l0.word_size=8",
		"features.atomic_replacement=on", "atomic.learn_holdoff_ms=0",
		"atomic.out_of_band=on",   /* the frames' QPs are set up out of band */
		"features.remapping=on", "remap.start_holdoff_ms=0", "remap.lanes=1",
		"remap.out_of_band=on",   /* its QPs are set up out of band */
	};
	unsigned int n = remap ? RTE_DIM(sets) : RTE_DIM(sets) - 4;
	char err[256];

	sword_config_defaults(&s->cfg);
	for (unsigned int i = 0; i < n; i++)
		if (sword_config_set(&s->cfg, sets[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: %s\n", sets[i], err);
			exit(1);
		}
	if (traffic != T_CAS && sword_config_set(&s->cfg, "atomic.pmtu=1024", err,
						 sizeof(err)) != 0) {
		fprintf(stderr, "atomic.pmtu: %s\n", err);
		exit(1);
	}
	if (sword_config_validate(&s->cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	sword_shard_map_build(&s->shards, &s->cfg);
}

static struct rte_mbuf *
mbuf_of(const uint8_t *buf, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (m == NULL)
		abort();
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	m->port = 0;
	return m;
}

static struct rm_addr
up_addr(int i)
{
	return (struct rm_addr){ .src_mac = { 2, 0, 0, 0, 1, (uint8_t)(i / 2) },
		.dst_mac = { 2, 0, 0, 0, 0, 0x99 }, .src_ip = CL_IP(i),
		.dst_ip = SRV_IP, .dest_qpn = SRV_QPN(i) };
}

/* CAS(v, v^1) on connection i's word. */
static uint32_t
build_cas(struct side *s, int i, uint8_t *f)
{
	struct rm_addr a = up_addr(i);
	uint8_t ext[28];
	uint64_t v;
	uint32_t len;

	v = rte_cpu_to_be_64(WORD_VA(i));
	memcpy(ext, &v, 8);
	v = rte_cpu_to_be_32(0x2521);
	memcpy(ext + 8, &v, 4);
	v = rte_cpu_to_be_64(s->value[i] ^ 1);
	memcpy(ext + 12, &v, 8);
	v = rte_cpu_to_be_64(s->value[i]);
	memcpy(ext + 20, &v, 8);
	len = rm_build(f, &a, ROCE_RC_COMPARE_SWAP, s->psn[i], true, ext, 28, NULL, 0);
	s->value[i] ^= 1;
	s->psn[i] = (s->psn[i] + 1) & 0xffffff;
	return len;
}

/* Server QP k's ACK at psn (its peer is client connection k). */
static uint32_t
ack_of(struct side *s, uint32_t k, uint32_t psn, uint8_t *ack)
{
	struct rm_addr down = { .src_mac = { 2, 0, 0, 0, 0, 0x99 },
		.dst_mac = { 2, 0, 0, 0, 1, (uint8_t)(k / 2) }, .src_ip = SRV_IP,
		.dst_ip = CL_IP(k), .dest_qpn = CL_QPN(k) };
	uint32_t v32 = rte_cpu_to_be_32((0x1fu << 24) | s->srv.msn[k]);

	s->srv.unanswered[k] = 0;
	return rm_build(ack, &down, ROCE_RC_ACKNOWLEDGE, psn, false, (uint8_t *)&v32, 4,
			NULL, 0);
}

/* A READ of read_len bytes of connection i's data. */
static uint32_t
build_read(struct side *s, int i, uint8_t *f)
{
	struct rm_addr a = up_addr(i);
	uint8_t reth[16];
	uint64_t va = rte_cpu_to_be_64(DATA_VA(i));
	uint32_t v32, len;

	memcpy(reth, &va, 8);
	v32 = rte_cpu_to_be_32(0x2521);
	memcpy(reth + 8, &v32, 4);
	v32 = rte_cpu_to_be_32(read_len);
	memcpy(reth + 12, &v32, 4);
	len = rm_build(f, &a, ROCE_RC_READ_REQUEST, s->psn[i], true, reth, 16, NULL, 0);
	s->psn[i] = (s->psn[i] + (read_len + PMTU - 1) / PMTU) & 0xffffff;
	return len;
}

/* Server QP k answers a READ at psn: its response packets, PMTU each. */
static unsigned int
serve_read(struct side *s, uint32_t k, uint32_t psn, uint32_t len,
	   uint8_t (*out)[FRAME_MAX], uint32_t *out_len, unsigned int cap)
{
	static const uint8_t data[PMTU];
	const unsigned int n = len == 0 ? 1 : (len + PMTU - 1) / PMTU;
	struct rm_addr down = { .src_mac = { 2, 0, 0, 0, 0, 0x99 },
		.dst_mac = { 2, 0, 0, 0, 1, (uint8_t)(k / 2) }, .src_ip = SRV_IP,
		.dst_ip = CL_IP(k), .dest_qpn = CL_QPN(k) };
	uint32_t aeth;

	if (n > cap)
		return 0;
	s->srv.msn[k] = (s->srv.msn[k] + 1) & 0xffffff;
	aeth = rte_cpu_to_be_32((0x1fu << 24) | s->srv.msn[k]);
	for (unsigned int j = 0; j < n; j++) {
		const uint32_t plen = j + 1 < n ? PMTU : len - PMTU * (n - 1);
		const uint8_t op = n == 1 ? ROCE_RC_READ_RESPONSE_ONLY
			: j == 0 ? ROCE_RC_READ_RESPONSE_FIRST
			: j + 1 < n ? ROCE_RC_READ_RESPONSE_MIDDLE : ROCE_RC_READ_RESPONSE_LAST;
		const bool has_aeth = op != ROCE_RC_READ_RESPONSE_MIDDLE;

		out_len[j] = rm_build(out[j], &down, op, (psn + j) & 0xffffff, false,
				      has_aeth ? (const uint8_t *)&aeth : NULL, has_aeth ? 4 : 0,
				      data, plen);
	}
	return n;
}

/* The server executes a request that reached it; its answer (0: none
 * yet, coalesced).  Server QP k's peer is client connection k. */
static unsigned int
serve(struct side *s, const uint8_t *f, uint32_t len, uint8_t (*out)[FRAME_MAX],
      uint32_t *out_len, unsigned int cap)
{
	uint8_t *ack = out[0];
	struct roce_pkt p;
	uint8_t aeth[12];
	uint32_t k, v32;
	uint64_t va, v;
	struct rm_addr down;

	if (cap == 0 || roce_parse(f, len, &p) != ROCE_OK)
		return 0;
	k = p.qpn - SRV_QPN(0);
	if (k >= NCONN)
		return 0;
	if (p.opcode == ROCE_RC_READ_REQUEST)
		return serve_read(s, k, p.psn, roce_ld32(f + p.bth_off + 12 + 12), out,
				  out_len, cap);
	memcpy(&va, f + p.bth_off + 12, 8);
	va = rte_be_to_cpu_64(va);
	down = (struct rm_addr){ .src_mac = { 2, 0, 0, 0, 0, 0x99 },
		.dst_mac = { 2, 0, 0, 0, 1, (uint8_t)(k / 2) }, .src_ip = SRV_IP,
		.dst_ip = CL_IP(k), .dest_qpn = CL_QPN(k) };
	s->srv.msn[k] = (s->srv.msn[k] + 1) & 0xffffff;
	v32 = rte_cpu_to_be_32((0x1fu << 24) | s->srv.msn[k]);
	memcpy(aeth, &v32, 4);
	if (p.opcode == ROCE_RC_COMPARE_SWAP) {
		uint64_t cmp, swap, w = s->srv.word[(va - WORD_VA(0)) / 8 % NCONN];

		memcpy(&swap, f + p.bth_off + 12 + 12, 8);
		memcpy(&cmp, f + p.bth_off + 12 + 20, 8);
		if (rte_be_to_cpu_64(cmp) == w)
			s->srv.word[(va - WORD_VA(0)) / 8 % NCONN] = rte_be_to_cpu_64(swap);
		s->srv.unanswered[k] = 0;
		v = rte_cpu_to_be_64(w);
		memcpy(aeth + 4, &v, 8);
		out_len[0] = rm_build(ack, &down, ROCE_RC_ATOMIC_ACKNOWLEDGE, p.psn, false,
				      aeth, 12, NULL, 0);
		return 1;
	}
	memcpy(&v, f + p.bth_off + 12 + 16, 8);
	s->srv.word[(va - WORD_VA(0)) / 8 % NCONN] = rte_be_to_cpu_64(v);
	if (s->coalesce && ++s->srv.unanswered[k] < 8) {
		s->srv.last_psn[k] = p.psn;
		return 0;
	}
	out_len[0] = ack_of(s, k, p.psn, ack);
	return 1;
}

/* Coalescing, the requests of the burst have all arrived: each server QP
 * answers the last it has not (a responder does not hold an ACK once the
 * requests stop coming). */
static void
flush_acks(struct side *s, uint8_t (*ack)[FRAME_MAX], uint32_t *ack_len,
	   unsigned int *n_ack, unsigned int cap)
{
	for (uint32_t k = 0; k < NCONN && *n_ack < cap; k++)
		if (s->srv.unanswered[k] != 0) {
			ack_len[*n_ack] = ack_of(s, k, s->srv.last_psn[k], ack[*n_ack]);
			(*n_ack)++;
		}
}

/* n frames through the worker as one burst; what came out, in out[]. */
static double
through(struct side *s, uint8_t (*bufs)[FRAME_MAX], const uint32_t *lens,
	unsigned int n, bool counted, struct rte_mbuf **out, unsigned int *n_out)
{
	static struct sword_tx_batch tx;
	struct rte_mbuf *pkts[4 * BURST];
	double t0, t;

	for (unsigned int i = 0; i < n; i++)
		pkts[i] = mbuf_of(bufs[i], lens[i]);
	sword_tx_batch_reset(&tx);
	t0 = now_s();
	if (counted)
		CALLGRIND_TOGGLE_COLLECT;
	sword_worker_process(&s->w, 0, pkts, (uint16_t)n, &tx);
	if (counted)
		CALLGRIND_TOGGLE_COLLECT;
	t = now_s() - t0;
	*n_out = 0;
	for (unsigned int side = 0; side < SWORD_SIDE_NUM; side++)
		for (unsigned int i = 0; i < tx.n[side]; i++)
			out[(*n_out)++] = tx.pkts[side][i];
	return t;
}

/* through(), and if counted its ns per frame and frame count recorded. */
static void
timed(struct side *s, uint8_t (*bufs)[FRAME_MAX], const uint32_t *lens, unsigned int n,
      bool counted, struct rte_mbuf **out, unsigned int *n_out, double *ns, size_t *n_ns,
      uint64_t *frames)
{
	double t = through(s, bufs, lens, n, counted, out, n_out);

	if (counted) {
		ns[(*n_ns)++] = t * 1e9 / n;
		*frames += n;
	}
}

/* One burst of CAS from every connection and the burst of their answers. */
static void
round_trip(struct side *s, int per_conn, bool counted)
{
	static uint8_t req[BURST][FRAME_MAX], ack[4 * BURST][FRAME_MAX];
	uint32_t req_len[BURST], ack_len[4 * BURST];
	struct rte_mbuf *out[4 * BURST];
	unsigned int n_out, n_ack = 0, n_req = 0;

	for (int r = 0; r < per_conn; r++)
		for (int i = 0; i < NCONN; i++) {
			req_len[n_req] = traffic == T_CAS ? build_cas(s, i, req[n_req])
							  : build_read(s, i, req[n_req]);
			n_req++;
		}
	timed(s, req, req_len, n_req, counted, out, &n_out, s->req_ns, &s->n_req,
	      &s->frames_req);
	for (unsigned int i = 0; i < n_out; i++) {
		uint8_t *d = rte_pktmbuf_mtod(out[i], uint8_t *);
		struct roce_pkt p;

		/* what reaches the server is signed (the worker re-signs once) */
		if (roce_parse(d, rte_pktmbuf_data_len(out[i]), &p) != ROCE_OK ||
		    !roce_icrc_verify(d, &p))
			s->wrong++;
		n_ack += serve(s, d, rte_pktmbuf_data_len(out[i]), &ack[n_ack], &ack_len[n_ack],
			       RTE_DIM(ack) - n_ack);
		rte_pktmbuf_free(out[i]);
	}
	flush_acks(s, ack, ack_len, &n_ack, RTE_DIM(ack));
	if (n_ack == 0)
		return;
	timed(s, ack, ack_len, n_ack, counted, out, &n_out, s->ack_ns, &s->n_ack,
	      &s->frames_ack);
	for (unsigned int i = 0; i < n_out; i++) {
		uint8_t *d = rte_pktmbuf_mtod(out[i], uint8_t *);
		struct roce_pkt p;

		/* every client asked a CAS (a READ): it must get ATOMIC ACKs
		 * (READ responses), signed */
		if (roce_parse(d, rte_pktmbuf_data_len(out[i]), &p) != ROCE_OK ||
		    (traffic == T_CAS ? p.opcode != ROCE_RC_ATOMIC_ACKNOWLEDGE
				      : p.opcode < ROCE_RC_READ_RESPONSE_FIRST ||
					p.opcode > ROCE_RC_READ_RESPONSE_ONLY) ||
		    !roce_icrc_verify(d, &p))
			s->wrong++;
		rte_pktmbuf_free(out[i]);
	}
}

static void
side_init(struct side *s, const char *name, enum side_kind kind, bool coalesce, size_t max)
{
	s->name = name;
	s->coalesce = coalesce;
	config_load(s, kind == SIDE_REMAP);
	sword_worker_init(&s->w, &s->cfg, &s->shards, 0);
	s->w.pool = pool;
	if (sword_worker_attach_fn(&s->w, &ser_fn_ops, SOCKET_ID_ANY) != 0 ||
	    (kind == SIDE_REMAP &&
	     sword_worker_attach_fn(&s->w, &remap_fn_ops, SOCKET_ID_ANY) != 0) ||
	    (kind == SIDE_FLOOR &&
	     sword_worker_attach_fn(&s->w, &floor_fn_ops, SOCKET_ID_ANY) != 0)) {
		fprintf(stderr, "bench_lanes: cannot attach the functions\n");
		exit(1);
	}
	for (int i = 0; i < NCONN; i++)
		s->psn[i] = 3185 + 4096 * (uint32_t)i;
	s->req_ns = calloc(max, sizeof(double));
	s->ack_ns = calloc(max, sizeof(double));
	if (s->req_ns == NULL || s->ack_ns == NULL)
		abort();
	/* warm-up, not counted: words learned (one op at a time: a period of
	 * several real ones in flight leaves a word unknown, ser_word.c),
	 * connections paired and bound */
	for (int r = 0; r < 4; r++)
		round_trip(s, 1, false);
	for (int r = 0; r < 64; r++)
		round_trip(s, per_conn(), false);
	if (kind == SIDE_FLOOR)
		((struct floor_fn *)s->w.fn[1].state)->active = true;
	s->wrong = 0;
}

static uint64_t
counter(struct sword_worker *w, const char *name)
{
	for (unsigned int f = 0; f < w->n_fn; f++) {
		const struct sword_fn_ops *ops = w->fn[f].ops;

		if (ops->publish != NULL)
			ops->publish(w->fn[f].state, &w->stats.fn[w->fn[f].counter_base]);
		for (unsigned int i = 0; i < ops->n_counters; i++) {
			if (getenv("BENCH_DUMP") && w->stats.fn[w->fn[f].counter_base + i])
				printf("  %s %llu\n", ops->counter_names[i], (unsigned long long)
				       w->stats.fn[w->fn[f].counter_base + i]);
			if (!strcmp(ops->counter_names[i], name))
				return w->stats.fn[w->fn[f].counter_base + i];
		}
	}
	return 0;
}

static void
report(struct side *s, double *req, double *ack)
{
	*req = median_d(s->req_ns, s->n_req);
	*ack = median_d(s->ack_ns, s->n_ack);
	printf("%-12s %.1f ns per request, %.1f ns per answer (median burst); "
	       "frames counted: %llu requests, %llu answers; granted %llu, stitched %llu, "
	       "wrong answers %llu\n", s->name, *req, *ack,
	       (unsigned long long)s->frames_req, (unsigned long long)s->frames_ack,
	       (unsigned long long)counter(&s->w, "atomic_granted"),
	       (unsigned long long)counter(&s->w, "remap_stitched"),
	       (unsigned long long)s->wrong);
}

/* ns per client op: its request and its share of the answers (with
 * coalesced lane ACKs, fewer answers cross the worker than requests). */
static double
per_op(const struct side *s, double req, double ack)
{
	return (req * (double)s->frames_req + ack * (double)s->frames_ack) /
	       (double)s->frames_req;
}

/* What b costs over a (accel), from the medians of report: per frame
 * where both pass as many frames, and per client op. */
static void
print_over(const char *what, const struct side *a, double ar, double aa,
	   const struct side *b, double br, double ba, bool coalesce)
{
	printf("%s over atomic replacement alone: %+.1f ns per request, ", what, br - ar);
	if (a->frames_ack == b->frames_ack)
		printf("%+.1f ns per answer, %+.1f ns per frame, ", ba - aa,
		       ((br - ar) * a->frames_req + (ba - aa) * a->frames_ack) /
		       (double)(a->frames_req + a->frames_ack));
	printf("%+.1f ns per client op (ICRC %s%s)\n", per_op(b, br, ba) - per_op(a, ar, aa),
	       roce_icrc_impl(), coalesce ? ", 8 requests per ACK" : "");
}

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-pci", "--no-shconf", "--no-huge", "-m", "256",
			"--log-level", "lib.eal:error", "--log-level", "user1:error", NULL };
	long rounds = argc > 1 ? atol(argv[1]) : 2000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *mode = argc > 3 ? argv[3] : "both";
	bool coalesce = false;
	bool all = strcmp(mode, "all") == 0;
	bool do_accel = all || !strcmp(mode, "both") || !strcmp(mode, "accel");
	bool do_remap = all || !strcmp(mode, "both") || !strcmp(mode, "remap");
	bool do_floor = all || !strcmp(mode, "floor");
	static struct side accel, remap, floor_side;
	double ar = 0, aa = 0, rr = 0, ra = 0, fr = 0, fa = 0;
	size_t max;

	for (int a = 4; a < argc; a++) {
		if (!strcmp(argv[a], "coalesce"))
			coalesce = true;
		else if (!strcmp(argv[a], "read"))
			traffic = T_READ, read_len = 64;
		else if (!strcmp(argv[a], "read4k"))
			traffic = T_READ4K, read_len = 4096;
		else
			runs = 0;
	}
	if (runs < 1 || rounds < 1 || !(do_accel || do_remap || do_floor)) {
		fprintf(stderr, "usage: bench_lanes [rounds] [runs] "
			"[both|accel|remap|floor|all] [coalesce] [read|read4k]\n");
		return 2;
	}
	if (do_floor && traffic != T_CAS) {
		fprintf(stderr, "bench_lanes: the floor stands in for CAS traffic only\n");
		return 2;
	}
	if (do_floor && coalesce) {
		fprintf(stderr, "bench_lanes: the floor maps one answer to one client: "
			"not with coalesce\n");
		return 2;
	}
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0)
		return 1;
	roce_crc_init();
	max = (size_t)rounds * (size_t)runs;
	pool = rte_pktmbuf_pool_create("bench", 2047, 0, 0, 2048 + 128, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	if (do_accel)
		side_init(&accel, "accel", SIDE_ACCEL, coalesce, max);
	if (do_remap)
		side_init(&remap, "accel+remap", SIDE_REMAP, coalesce, max);
	if (do_floor)
		side_init(&floor_side, "accel+floor", SIDE_FLOOR, coalesce, max);
	/* interleaved, so all see the machine's same moments */
	for (int r = 0; r < runs; r++)
		for (long k = 0; k < rounds; k++) {
			if (do_accel)
				round_trip(&accel, per_conn(), true);
			if (do_remap)
				round_trip(&remap, per_conn(), true);
			if (do_floor)
				round_trip(&floor_side, per_conn(), true);
		}
	if (do_accel)
		report(&accel, &ar, &aa);
	if (do_remap)
		report(&remap, &rr, &ra);
	if (do_floor)
		report(&floor_side, &fr, &fa);
	if (do_accel && do_remap)
		print_over("remapping", &accel, ar, aa, &remap, rr, ra, coalesce);
	if (do_accel && do_floor)
		print_over("the floor", &accel, ar, aa, &floor_side, fr, fa, coalesce);
	rte_eal_cleanup();
	return accel.wrong || remap.wrong || floor_side.wrong ? 1 : 0;
}
