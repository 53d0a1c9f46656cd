/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c — the client role: N requester QPs, each running one workload
 * instance, with the checks that make a run pass or fail.
 *
 * Why it exists: a lock service is only tested when contending clients use
 * it and something notices a broken lock.  Every lock workload keeps, in
 * server memory, a record per lock {holder, counter, last_tag}:
 *
 *   acquire   CAS(lock, 0, tag)  | masked CAS on bit b (rcuckoo-lock)
 *   enter     READ record, then WRITE record.holder = tag      (one batch)
 *             the READ must show holder == 0 and a counter no smaller than
 *             any this client has written (else: overlap / lost update)
 *   leave     WRITE record = {0, counter+1, tag}, then the release:
 *             WRITE(lock, 0) (sherman-lock, batched with the node write as
 *             in Sherman) | masked CAS clearing bit b (rcuckoo-lock)
 *
 * At the end the per-lock critical-section counts of all clients must add
 * up to the counters in memory (the server prints them): any lost update
 * shows there.  cas-bench runs perftest-like CAS/FAA/WRITE/READ loops with
 * their own checks (private CAS always succeeds, FAA results increase,
 * READ returns what was written).
 *
 * --reconnect-every N: after every N ops a QP, once idle, is re-created as a
 * restarted application would (same QPNs, same initial PSN; Sherman starts
 * every QP at 3185) and the server is told out of band to do the same with
 * its end (RECONNECT / RECONNECTED, lib/peer/peer_ctl.c); the QP resumes
 * its workload once the server answered.  --reconnect-qps limits that to
 * some global QP indexes (e.g. the first client's QPs, the ones a
 * remapping middlebox makes lane owners, or all others).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roce_peer.h"

int rp_udp_guard(void);

enum qstate { ST_ACQ, ST_READ, ST_REL, ST_WAIT, ST_BENCH, ST_RECONN, ST_DONE };

/* resend an unanswered RECONNECT after this long (the datagram may be lost) */
#define RECONN_RESEND_NS 200000000ull

enum op_kind {
	OP_ACQ = 1, OP_READ_REC, OP_AUX, OP_REL,
	OP_B_INIT, OP_B_CAS, OP_B_FAA, OP_B_WRITE, OP_B_READ,
	OP_CL_CAS, OP_CL_READ,
};

struct qpw {
	enum qstate state;
	uint32_t g;
	uint64_t tag;
	uint32_t lock;
	uint64_t t_start;
	uint64_t not_before;
	uint64_t consecutive_fail;
	uint64_t counter;
	uint64_t ops;
	uint64_t rng;
	uint8_t rd[64];
	uint8_t pre[24];           /* --read-before-acquire: the READ's destination */
	uint8_t node[24];
	uint8_t holder[8];
	uint8_t zero[8];
	/* cas-bench */
	uint64_t expect, last_faa, seq;
	uint32_t step;
	uint8_t pattern[64];
	/* clover */
	uint32_t slots_used;
	uint64_t new_node, cas_at;
	/* reconnects */
	uint32_t incarnation;      /* 1 = the QP as created at start */
	uint64_t reconnected_at;   /* q->ops when the last reconnect was done */
	uint64_t reconn_sent;      /* when RECONNECT was last sent (0: not yet) */
};

#define MAX_MSGS 16

struct client {
	const struct rp_opts *o;
	struct peer_req *req;
	struct qpw *q;
	uint64_t *my_last;     /* per lock: highest counter this client wrote */
	uint64_t *cs;          /* per lock: critical sections completed (clover: commits per key) */
	uint64_t *cs_doubt;    /* per lock: critical sections whose QP failed with the record
				* write and the release posted: the server may have run them */
	uint64_t *hint;        /* clover: per key, the tail this client believes in */
	uint64_t walks;
	uint64_t ops, retries, violations, faa_total, ops_at_last_progress;
	uint64_t *faa_origs;   /* every FAA original this client got, in completion order */
	uint64_t n_faa_origs, cap_faa_origs;
	uint64_t reconnects, ctl_resent;
	int ctl_fd;
	uint16_t ctl_port;
	bool storm, stopping;
	uint64_t last_completion;
	char msgs[MAX_MSGS][200];
	uint32_t n_msgs;
	char err_msgs[MAX_MSGS][200];
	uint32_t n_err;
	struct rp_lat lat, rdma_lat;
};

static void
violation(struct client *c, const char *fmt, ...)
{
	va_list ap;

	c->violations++;
	if (c->n_msgs == MAX_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(c->msgs[c->n_msgs++], sizeof(c->msgs[0]), fmt, ap);
	va_end(ap);
	fprintf(stderr, "roce-peer client %u: VIOLATION: %s\n", c->o->client_id,
		c->msgs[c->n_msgs - 1]);
}

static uint64_t lock_va(const struct client *c, uint32_t i)
{
	if (c->o->workload == WL_RCUCKOO)
		return c->o->base + RP_LOCK_OFF + 8ull * (i / 64);
	return c->o->base + RP_LOCK_OFF + 8ull * i;
}

static uint64_t lock_bit(uint32_t i) { return 1ull << (i % 64); }

static uint64_t record_va(const struct client *c, uint32_t i)
{
	return c->o->base + RP_RECORD_OFF + (uint64_t)RP_RECORD_STRIDE * i;
}

static uint64_t bench_cas_va(const struct client *c, const struct qpw *w)
{
	return c->o->base + RP_BENCH_CAS_OFF + 8ull * w->g;
}

static uint64_t priv_va(const struct client *c, const struct qpw *w)
{
	return c->o->base + RP_BENCH_PRIV_OFF + (uint64_t)RP_BENCH_PRIV_STRIDE * w->g;
}

static uint64_t clover_node(const struct client *c, uint64_t idx)
{
	return c->o->base + RP_CLOVER_OFF + idx * RP_CLOVER_NODE;
}

static bool clover_valid(const struct client *c, uint64_t va)
{
	uint64_t lo = clover_node(c, 0), hi = c->o->base + RP_DEFAULT_LEN;

	return va >= lo && va < hi && (va - lo) % RP_CLOVER_NODE == 0;
}

static void
post(struct client *c, uint32_t qi, struct peer_wqe *w, enum op_kind k)
{
	struct qpw *q = &c->q[qi];
	int rc;

	w->rkey = c->o->rkey;
	w->user = k;
	rc = peer_req_post(c->req, qi, w);
	if (rc) {
		if (c->n_err < MAX_MSGS)
			snprintf(c->err_msgs[c->n_err++], sizeof(c->err_msgs[0]),
				 "qp %u: post failed: %s", q->g, strerror(-rc));
		q->state = ST_DONE;
	}
}

static void
post_acquire(struct client *c, uint32_t qi)
{
	struct qpw *q = &c->q[qi];
	struct peer_wqe w = { 0 };

	w.va = lock_va(c, q->lock);
	w.ackreq = true;
	if (c->o->workload == WL_RCUCKOO) {
		w.opcode = ROCE_RC_MASKED_COMPARE_SWAP;
		w.compare = 0;
		w.compare_mask = lock_bit(q->lock);
		w.swap_add = lock_bit(q->lock);
		w.swap_mask = lock_bit(q->lock);
	} else {
		w.opcode = ROCE_RC_COMPARE_SWAP;
		w.compare = 0;
		w.swap_add = q->tag;
	}
	q->state = ST_ACQ;
	if (c->o->read_before_acquire) {
		/* READ the record and CAS the lock in one batch (the READ's
		 * result is not used): every acquire is two pipelined requests */
		struct peer_wqe rd = { .opcode = ROCE_RC_READ_REQUEST, .len = 24,
				       .buf = q->pre, .ackreq = true };

		rd.va = record_va(c, q->lock);
		post(c, qi, &rd, OP_AUX);
	}
	post(c, qi, &w, OP_ACQ);
}

static void
bench_step(struct client *c, uint32_t qi)
{
	struct qpw *q = &c->q[qi];
	struct peer_wqe w = { 0 };

	w.ackreq = true;
	q->t_start = peer_now_ns();
	switch (q->step % 4) {
	case 0:
		w.opcode = ROCE_RC_COMPARE_SWAP;
		w.va = bench_cas_va(c, q);
		w.compare = q->expect;
		w.swap_add = q->expect + 1;
		post(c, qi, &w, OP_B_CAS);
		break;
	case 1:
		w.opcode = ROCE_RC_FETCH_ADD;
		w.va = c->o->base + RP_BENCH_OFF;
		w.swap_add = 1;
		post(c, qi, &w, OP_B_FAA);
		break;
	case 2:
		q->seq++;
		for (int i = 0; i < 64; i++)
			q->pattern[i] = (uint8_t)(q->seq * 131 + (uint64_t)i * 7 + q->g);
		w.opcode = ROCE_RC_WRITE_ONLY;
		w.va = priv_va(c, q) + 64;
		w.len = 64;
		w.buf = q->pattern;
		post(c, qi, &w, OP_B_WRITE);
		break;
	default:
		memset(q->rd, 0, sizeof(q->rd));
		w.opcode = ROCE_RC_READ_REQUEST;
		w.va = priv_va(c, q) + 64;
		w.len = 64;
		w.buf = q->rd;
		post(c, qi, &w, OP_B_READ);
	}
}

static void post_clover_cas(struct client *c, uint32_t qi)
{
	struct qpw *q = &c->q[qi];
	struct peer_wqe w = { .opcode = ROCE_RC_COMPARE_SWAP, .ackreq = true };

	q->cas_at = c->hint[q->lock];
	w.va = q->cas_at;   /* the next pointer is the node's first word */
	w.compare = 0;
	w.swap_add = q->new_node;
	post(c, qi, &w, OP_CL_CAS);
}

static void post_clover_read(struct client *c, uint32_t qi)
{
	struct qpw *q = &c->q[qi];
	struct peer_wqe w = { .opcode = ROCE_RC_READ_REQUEST, .ackreq = true };

	memset(q->rd, 0xee, sizeof(q->rd));
	q->cas_at = c->hint[q->lock];
	w.va = q->cas_at;
	w.len = RP_CLOVER_NODE;
	w.buf = q->rd;
	post(c, qi, &w, OP_CL_READ);
}

/* Clover: half the ops append a version (WRITE node, CAS tail.next; both
 * on one QP so the node is written before it is linked), half read the
 * latest version by walking from the cached tail. */
static void
clover_start(struct client *c, uint32_t qi)
{
	struct qpw *q = &c->q[qi];
	struct peer_wqe w = { .opcode = ROCE_RC_WRITE_ONLY, .len = RP_CLOVER_NODE };

	q->state = ST_BENCH;
	if (peer_rand(&q->rng) & 1) {
		post_clover_read(c, qi);
		return;
	}
	if (q->slots_used == RP_CLOVER_SLOTS_PER_QP) {
		q->state = ST_DONE;    /* node area of this QP used up */
		return;
	}
	q->new_node = clover_node(c, RP_CLOVER_MAX_KEYS +
				  (uint64_t)q->g * RP_CLOVER_SLOTS_PER_QP + q->slots_used++);
	memset(q->pattern, 0, sizeof(q->pattern));
	for (int i = 0; i < 8; i++)
		q->pattern[8 + i] = (uint8_t)((uint64_t)q->lock >> (8 * i)); /* key, LE */
	roce_st64(q->pattern + 16, q->tag);
	roce_st64(q->pattern + 24, ++q->seq);
	w.va = q->new_node;
	w.buf = q->pattern;
	w.ackreq = c->o->ackreq_all;
	post(c, qi, &w, OP_AUX);
	post_clover_cas(c, qi);
}

/* does QP g re-create (--reconnect-every, --reconnect-qps)? */
static bool
reconnects_qp(const struct rp_opts *o, uint32_t g)
{
	if (!o->reconnect_every)
		return false;
	if (!o->n_reconnect_ranges)
		return true;
	for (uint32_t i = 0; i < o->n_reconnect_ranges; i++)
		if (g >= o->reconnect_lo[i] && g <= o->reconnect_hi[i])
			return true;
	return false;
}

static bool
want_more(struct client *c, const struct qpw *q)
{
	if (c->stopping || rp_stop)
		return false;
	return c->o->ops_per_qp == 0 || q->ops < c->o->ops_per_qp;
}

static void
start_op(struct client *c, uint32_t qi, uint64_t now)
{
	struct qpw *q = &c->q[qi];

	if (!want_more(c, q)) {
		q->state = ST_DONE;
		return;
	}
	if (reconnects_qp(c->o, q->g) && q->ops && q->ops % c->o->reconnect_every == 0 &&
	    q->reconnected_at != q->ops) {
		q->state = ST_RECONN;    /* driven by reconnect_step from the main loop */
		q->reconn_sent = 0;
		return;
	}
	if (c->o->workload == WL_CASBENCH) {
		q->state = ST_BENCH;
		bench_step(c, qi);
		return;
	}
	q->lock = (uint32_t)(peer_rand(&q->rng) % c->o->locks);
	if (c->o->workload == WL_CLOVER) {
		q->t_start = now;
		q->consecutive_fail = 0;
		clover_start(c, qi);
		return;
	}
	q->t_start = now;
	q->consecutive_fail = 0;
	post_acquire(c, qi);
}

static void
op_done(struct client *c, struct qpw *q, uint64_t now)
{
	lat_add(&c->lat, now - q->t_start);
	q->ops++;
	c->ops++;
}

static void
on_complete(void *ctx, uint32_t qi, struct peer_wqe *w)
{
	struct client *c = ctx;
	struct qpw *q = &c->q[qi];
	uint64_t now = w->t_done;

	c->last_completion = now;
	lat_add(&c->rdma_lat, w->t_done - w->t_post);
	switch ((enum op_kind)w->user) {
	case OP_ACQ: {
		bool ok = c->o->workload == WL_RCUCKOO ? !(w->orig & lock_bit(q->lock))
						       : w->orig == 0;
		struct peer_wqe rd = { 0 }, hw = { 0 };

		if (!ok) {
			if (c->o->workload == WL_SHERMAN && w->orig == q->tag)
				violation(c, "qp %u: lock %u already holds our tag %#llx",
					  q->g, q->lock, (unsigned long long)q->tag);
			c->retries++;
			if (++q->consecutive_fail >= c->o->retry_storm) {
				if (!c->storm && c->n_err < MAX_MSGS)
					snprintf(c->err_msgs[c->n_err++], sizeof(c->err_msgs[0]),
						 "qp %u: retry storm on lock %u (%llu failed acquires)",
						 q->g, q->lock,
						 (unsigned long long)q->consecutive_fail);
				c->storm = true;
				q->state = ST_DONE;
				return;
			}
			if (c->stopping || rp_stop) {
				q->state = ST_DONE;
				return;
			}
			if (c->o->backoff_us) {
				q->state = ST_WAIT;
				q->not_before = now + (uint64_t)c->o->backoff_us * 1000;
				return;
			}
			post_acquire(c, qi);
			return;
		}
		q->state = ST_READ;
		memset(q->rd, 0xee, sizeof(q->rd));
		rd.opcode = ROCE_RC_READ_REQUEST;
		rd.va = record_va(c, q->lock);
		rd.len = 24;
		rd.buf = q->rd;
		rd.ackreq = true;
		post(c, qi, &rd, OP_READ_REC);
		roce_st64(q->holder, q->tag);
		hw.opcode = ROCE_RC_WRITE_ONLY;
		hw.va = record_va(c, q->lock);
		hw.len = 8;
		hw.buf = q->holder;
		hw.ackreq = c->o->ackreq_all;
		post(c, qi, &hw, OP_AUX);
		return;
	}
	case OP_READ_REC: {
		uint64_t holder = roce_ld64(q->rd), counter = roce_ld64(q->rd + 8);
		uint64_t last = roce_ld64(q->rd + 16);
		struct peer_wqe nw = { 0 }, rel = { 0 };

		/* our own tag: the READ was retransmitted and replayed after our
		 * holder WRITE had executed (IBTA: a duplicate READ reads memory
		 * again) */
		if (holder != 0 && holder != q->tag)
			violation(c, "qp %u (tag %#llx): lock %u: record holder %#llx inside our "
				  "critical section (overlap)", q->g, (unsigned long long)q->tag,
				  q->lock, (unsigned long long)holder);
		if (counter < c->my_last[q->lock])
			violation(c, "qp %u: lock %u: counter %llu < %llu already written by us "
				  "(lost update; last writer %#llx)", q->g, q->lock,
				  (unsigned long long)counter,
				  (unsigned long long)c->my_last[q->lock], (unsigned long long)last);
		q->counter = counter;
		roce_st64(q->node, 0);
		roce_st64(q->node + 8, counter + 1);
		roce_st64(q->node + 16, q->tag);
		nw.opcode = ROCE_RC_WRITE_ONLY;
		nw.va = record_va(c, q->lock);
		nw.len = 24;
		nw.buf = q->node;
		nw.ackreq = c->o->ackreq_all;
		post(c, qi, &nw, OP_AUX);
		rel.va = lock_va(c, q->lock);
		rel.ackreq = true;
		if (c->o->workload == WL_RCUCKOO) {
			rel.opcode = ROCE_RC_MASKED_COMPARE_SWAP;
			rel.compare = lock_bit(q->lock);
			rel.compare_mask = lock_bit(q->lock);
			rel.swap_add = 0;
			rel.swap_mask = lock_bit(q->lock);
		} else {
			rel.opcode = ROCE_RC_WRITE_ONLY;
			rel.len = 8;
			rel.buf = q->zero;
		}
		q->state = ST_REL;
		post(c, qi, &rel, OP_REL);
		return;
	}
	case OP_AUX:
		return;
	case OP_REL:
		if (c->o->workload == WL_RCUCKOO && !(w->orig & lock_bit(q->lock)))
			violation(c, "qp %u: lock %u: bit was clear at release (word %#llx)",
				  q->g, q->lock, (unsigned long long)w->orig);
		c->cs[q->lock]++;
		if (q->counter + 1 > c->my_last[q->lock])
			c->my_last[q->lock] = q->counter + 1;
		op_done(c, q, now);
		start_op(c, qi, now);
		return;
	case OP_CL_CAS:
		if (w->orig == 0) {
			c->hint[q->lock] = q->new_node;
			c->cs[q->lock]++;
			op_done(c, q, now);
			start_op(c, qi, now);
			return;
		}
		/* someone appended first: walk on to what they linked */
		if (!clover_valid(c, w->orig)) {
			violation(c, "qp %u: key %u: next pointer %#llx of %#llx is not a node",
				  q->g, q->lock, (unsigned long long)w->orig,
				  (unsigned long long)q->cas_at);
			q->state = ST_DONE;
			return;
		}
		c->retries++;
		c->hint[q->lock] = w->orig;
		if (++q->consecutive_fail >= c->o->retry_storm) {
			c->storm = true;
			q->state = ST_DONE;
			return;
		}
		post_clover_cas(c, qi);
		return;
	case OP_CL_READ: {
		uint64_t next = roce_ld64(q->rd), key = 0;

		for (int i = 7; i >= 0; i--)
			key = key << 8 | q->rd[8 + i];
		if (q->cas_at != clover_node(c, q->lock) && key != q->lock)
			violation(c, "qp %u: node %#llx in the chain of key %u holds key %llu",
				  q->g, (unsigned long long)q->cas_at, q->lock,
				  (unsigned long long)key);
		if (next) {
			if (!clover_valid(c, next)) {
				violation(c, "qp %u: key %u: bad next pointer %#llx", q->g,
					  q->lock, (unsigned long long)next);
				q->state = ST_DONE;
				return;
			}
			c->walks++;
			c->hint[q->lock] = next;
			post_clover_read(c, qi);
			return;
		}
		op_done(c, q, now);
		start_op(c, qi, now);
		return;
	}
	case OP_B_INIT:
		q->expect = roce_ld64(q->rd);
		start_op(c, qi, now);
		return;
	case OP_B_CAS:
		if (w->orig != q->expect)
			violation(c, "qp %u: private CAS expected %llu, memory had %llu", q->g,
				  (unsigned long long)q->expect, (unsigned long long)w->orig);
		q->expect = w->orig == q->expect ? q->expect + 1 : w->orig;
		break;
	case OP_B_FAA:
		if (q->last_faa && w->orig < q->last_faa)
			violation(c, "qp %u: FAA returned %llu after %llu", q->g,
				  (unsigned long long)w->orig, (unsigned long long)q->last_faa);
		q->last_faa = w->orig + 1;
		c->faa_total++;
		if (c->n_faa_origs == c->cap_faa_origs) {
			uint64_t n = c->cap_faa_origs ? 2 * c->cap_faa_origs : 1024;
			uint64_t *a = realloc(c->faa_origs, n * sizeof(*a));

			if (a) {
				c->faa_origs = a;
				c->cap_faa_origs = n;
			}
		}
		if (c->n_faa_origs < c->cap_faa_origs)
			c->faa_origs[c->n_faa_origs++] = w->orig;
		break;
	case OP_B_WRITE:
		break;
	case OP_B_READ:
		if (memcmp(q->rd, q->pattern, 64))
			violation(c, "qp %u: READ after WRITE returned other data", q->g);
		break;
	}
	/* cas-bench step done */
	q->step++;
	op_done(c, q, now);
	start_op(c, qi, now);
}

/*
 * A QP waiting to be re-created: once nothing is outstanding, reset it
 * (same QPN, initial PSN), let every frame of the old incarnation that the
 * link still holds back (fault delay) leave first, and ask the server to
 * reset its end; resend until answered.
 */
static void
reconnect_step(struct client *c, uint32_t qi, struct peer_link *link, uint64_t now)
{
	struct qpw *q = &c->q[qi];
	struct peer_ctl_msg m = { .type = PEER_CTL_RECONNECT };

	if (q->reconn_sent && now - q->reconn_sent < RECONN_RESEND_NS)
		return;
	if (!q->reconn_sent) {
		if (peer_req_outstanding(c->req, qi))
			return;
		if (peer_req_reset_qp(c->req, qi))
			return;
		peer_link_flush(link, UINT64_MAX);
		q->incarnation++;
	} else {
		c->ctl_resent++;
	}
	m.incarnation = q->incarnation;
	m.client_qpn = (c->o->client_qpn_base + q->g) & ROCE_QPN_MASK;
	m.server_qpn = (c->o->server_qpn_base + q->g) & ROCE_QPN_MASK;
	m.psn = peer_req_first_psn(c->req, qi);
	if (c->ctl_fd < 0 || rp_ctl_send(c->ctl_fd, c->o->server_ip, PEER_CTL_PORT, &m)) {
		if (c->n_err < MAX_MSGS)
			snprintf(c->err_msgs[c->n_err++], sizeof(c->err_msgs[0]),
				 "qp %u: cannot send RECONNECT: %s", q->g, strerror(errno));
		q->state = ST_DONE;
		return;
	}
	q->reconn_sent = now;
}

/* RECONNECTED from the server: the QP it names resumes its workload. */
static void
on_ctl(struct client *c, const struct peer_ctl_msg *m, uint64_t now)
{
	for (uint32_t i = 0; i < c->o->n_qps; i++) {
		struct qpw *q = &c->q[i];

		if (m->client_qpn != ((c->o->client_qpn_base + q->g) & ROCE_QPN_MASK))
			continue;
		if (q->state != ST_RECONN || !q->reconn_sent || m->incarnation != q->incarnation)
			return;  /* an answer to a resent request already answered */
		c->reconnects++;
		c->last_completion = now;
		q->reconnected_at = q->ops;
		start_op(c, i, now);
		return;
	}
}

static void
print_json(struct client *c, FILE *f, double secs, struct peer_link *link)
{
	const struct peer_req_stats *s = peer_req_stats(c->req);
	const struct peer_link_stats *ls = peer_link_stats(link);
	static const char *wl[] = { "sherman-lock", "rcuckoo-lock", "cas-bench", "clover" };

	fprintf(f, "{\"role\": \"client\", \"client_id\": %u, \"workload\": \"%s\", "
		"\"qps\": %u, \"seconds\": %.3f, \"ops\": %llu, \"ops_per_s\": %.1f, "
		"\"lat_p50_us\": %.1f, \"lat_p99_us\": %.1f, \"rdma_ops\": %llu, "
		"\"rdma_p50_us\": %.1f, \"rdma_p99_us\": %.1f, \"retries\": %llu, "
		"\"violations\": %llu, \"retry_storm\": %s, \"qp_errors\": %llu, "
		"\"faa_total\": %llu, \"clover_walks\": %llu, \"reconnects\": %llu, "
		"\"ctl_resent\": %llu, ",
		c->o->client_id, wl[c->o->workload], c->o->n_qps, secs,
		(unsigned long long)c->ops, secs > 0 ? c->ops / secs : 0.0,
		lat_pct_us(&c->lat, 50), lat_pct_us(&c->lat, 99),
		(unsigned long long)c->rdma_lat.n, lat_pct_us(&c->rdma_lat, 50),
		lat_pct_us(&c->rdma_lat, 99), (unsigned long long)c->retries,
		(unsigned long long)c->violations, c->storm ? "true" : "false",
		(unsigned long long)s->qp_errors, (unsigned long long)c->faa_total,
		(unsigned long long)c->walks, (unsigned long long)c->reconnects,
		(unsigned long long)c->ctl_resent);
#define S(x) fprintf(f, "\"%s\": %llu, ", #x, (unsigned long long)s->x)
	S(rx_frames); S(rx_not_mine); S(rx_bad_icrc); S(rx_malformed); S(tx_pkts);
	S(retx_pkts); S(timeouts); S(naks_seq); S(implied_naks); S(rnr_naks);
	S(stale_responses); S(completions); S(msn_mismatch); S(qp_resets);
#undef S
#define L(x) fprintf(f, "\"link_%s\": %llu, ", #x, (unsigned long long)ls->x)
	L(tx); L(rx); L(tx_err); L(fault_lost); L(fault_dup); L(fault_reordered);
	L(fault_delayed); L(rx_dropped);
#undef L
	fprintf(f, "\"errors\": [");
	for (uint32_t i = 0; i < c->n_err; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", c->err_msgs[i]);
	fprintf(f, "], \"violation_msgs\": [");
	for (uint32_t i = 0; i < c->n_msgs; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", c->msgs[i]);
	fprintf(f, "], \"cs_per_lock\": [");
	for (uint32_t i = 0; c->o->workload != WL_CASBENCH && i < c->o->locks; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)c->cs[i]);
	/* every FAA original, so that a judge can check that all clients
	 * together saw 0..n-1 exactly once (faa_origs_complete: none dropped
	 * for want of memory) */
	fprintf(f, "], \"faa_origs_complete\": %s, \"faa_origs\": [",
		c->n_faa_origs == c->faa_total ? "true" : "false");
	for (uint64_t i = 0; i < c->n_faa_origs; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)c->faa_origs[i]);
	fprintf(f, "], \"cs_in_doubt_per_lock\": [");
	for (uint32_t i = 0; c->o->workload != WL_CASBENCH && i < c->o->locks; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)c->cs_doubt[i]);
	fprintf(f, "]}\n");
}

int
rp_client(const struct rp_opts *o)
{
	struct peer_req_cfg cfg = { 0 };
	struct client c = { .o = o, .ctl_fd = -1 };
	struct peer_link *link;
	static uint8_t buf[65536];
	char err[256];
	uint64_t t0, now, end, next_progress, stall_ns = 30ull * 1000000000ull;
	uint32_t done;
	int rc = 0, guard;
	double secs;

	link = peer_link_open(o->iface, &o->faults, cfg.self.mac, err, sizeof(err));
	if (!link) {
		fprintf(stderr, "roce-peer client: %s\n", err);
		return 2;
	}
	cfg.self.ip = o->ip;
	cfg.self.udp_sport = (uint16_t)(0xc000 | ((o->client_id * 131 + 7) & 0x3fff));
	memcpy(cfg.server.mac, o->server_mac, 6);
	cfg.server.ip = o->server_ip;
	cfg.qpn_base = o->client_qpn_base;
	cfg.server_qpn_base = o->server_qpn_base;
	cfg.first_qp = o->client_id * o->n_qps;
	cfg.n_qps = o->n_qps;
	cfg.psn_seed = o->psn_seed;
	cfg.fixed_psn = o->fixed_psn;
	cfg.initial_psn = o->initial_psn;
	cfg.pmtu = o->pmtu;
	cfg.window = o->window;
	cfg.rto_ns = o->rto_us * 1000;
	cfg.max_retries = o->max_retries;
	c.req = peer_req_create(&cfg, link, on_complete, &c, err, sizeof(err));
	c.q = calloc(o->n_qps, sizeof(*c.q));
	c.my_last = calloc(o->locks, sizeof(uint64_t));
	c.cs = calloc(o->locks, sizeof(uint64_t));
	c.cs_doubt = calloc(o->locks, sizeof(uint64_t));
	c.hint = calloc(o->locks, sizeof(uint64_t));
	if (!c.req || !c.q || !c.my_last || !c.cs || !c.cs_doubt || !c.hint) {
		fprintf(stderr, "roce-peer client: %s\n", c.req ? "out of memory" : err);
		return 2;
	}
	lat_init(&c.lat);
	lat_init(&c.rdma_lat);
	guard = rp_udp_guard();
	if (o->reconnect_every) {
		c.ctl_fd = rp_ctl_socket(o->ip, 0, &c.ctl_port);
		if (c.ctl_fd < 0) {
			fprintf(stderr, "roce-peer client: control socket: %s\n", strerror(errno));
			return 2;
		}
	}

	t0 = now = peer_now_ns();
	c.last_completion = t0;
	end = o->duration_s > 0 ? t0 + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	next_progress = o->progress_s > 0 ? t0 + (uint64_t)(o->progress_s * 1e9) : UINT64_MAX;
	for (uint32_t k = 0; k < o->locks; k++)
		c.hint[k] = clover_node(&c, k);
	for (uint32_t i = 0; i < o->n_qps; i++) {
		struct qpw *q = &c.q[i];

		q->g = cfg.first_qp + i;
		q->tag = q->g + 1;
		q->rng = 0x243f6a8885a308d3ull ^ ((uint64_t)q->g * 0x9e3779b97f4a7c15ull);
		q->incarnation = 1;
		if (o->workload == WL_CASBENCH) {
			struct peer_wqe w = { .opcode = ROCE_RC_READ_REQUEST, .len = 8,
					      .buf = q->rd, .ackreq = true };

			q->state = ST_BENCH;
			w.va = bench_cas_va(&c, q);
			post(&c, i, &w, OP_B_INIT);
		} else {
			start_op(&c, i, now);
		}
	}

	for (;;) {
		int n = peer_link_recv(link, buf, sizeof(buf), 500000);

		for (int burst = 0; n > 0 && burst < 64; burst++) {
			struct peer_ctl_msg m;
			uint32_t sip, dip;
			uint16_t sport, dport;

			/* the server's answer, in wire order after its last frame
			 * of the old incarnation */
			if (c.ctl_fd >= 0 &&
			    peer_ctl_from_frame(buf, (uint32_t)n, PEER_CTL_PORT, &m, &sip, &dip,
						&sport, &dport)) {
				if (dip == o->ip && dport == c.ctl_port && sip == o->server_ip &&
				    m.type == PEER_CTL_RECONNECTED)
					on_ctl(&c, &m, peer_now_ns());
			} else {
				peer_req_input(c.req, buf, (uint32_t)n);
			}
			n = peer_link_recv(link, buf, sizeof(buf), 0);
		}
		if (n < 0) {
			fprintf(stderr, "roce-peer client: receive: %s\n", strerror(-n));
			rc = 1;
			break;
		}
		now = peer_now_ns();
		peer_req_poll(c.req, now);
		if (now >= end || rp_stop)
			c.stopping = true;
		done = 0;
		for (uint32_t i = 0; i < o->n_qps; i++) {
			struct qpw *q = &c.q[i];
			const char *why;

			if (q->state != ST_DONE && peer_req_qp_error(c.req, i, &why)) {
				if (c.n_err < MAX_MSGS)
					snprintf(c.err_msgs[c.n_err++], sizeof(c.err_msgs[0]),
						 "qp %u: QP error: %s", q->g, why);
				if (q->state == ST_REL)
					c.cs_doubt[q->lock]++;
				q->state = ST_DONE;
			}
			if (q->state == ST_WAIT) {
				if (c.stopping)
					q->state = ST_DONE;
				else if (now >= q->not_before)
					post_acquire(&c, i);
			}
			if (q->state == ST_RECONN) {
				if (c.stopping)
					q->state = ST_DONE;
				else
					reconnect_step(&c, i, link, now);
			}
			done += q->state == ST_DONE;
		}
		if (done == o->n_qps)
			break;
		if (now - c.last_completion > stall_ns) {
			if (c.n_err < MAX_MSGS)
				snprintf(c.err_msgs[c.n_err++], sizeof(c.err_msgs[0]),
					 "stalled: no completion for 30 s");
			rc = 1;
			break;
		}
		if (now >= next_progress) {
			next_progress += (uint64_t)(o->progress_s * 1e9);
			printf("client %u t=%.1fs ops=%llu ops/s=%.0f retries=%llu retx=%llu "
			       "violations=%llu qp_errors=%llu\n", o->client_id, (now - t0) / 1e9,
			       (unsigned long long)c.ops,
			       (c.ops - c.ops_at_last_progress) / o->progress_s,
			       (unsigned long long)c.retries,
			       (unsigned long long)peer_req_stats(c.req)->retx_pkts,
			       (unsigned long long)c.violations,
			       (unsigned long long)peer_req_stats(c.req)->qp_errors);
			fflush(stdout);
			c.ops_at_last_progress = c.ops;
		}
	}
	/* let ACKs for the last writes of other processes' frames settle */
	peer_link_flush(link, UINT64_MAX);
	secs = (peer_now_ns() - t0) / 1e9;
	if (peer_req_stats(c.req)->msn_mismatch && c.n_err < MAX_MSGS)
		snprintf(c.err_msgs[c.n_err++], sizeof(c.err_msgs[0]),
			 "%llu responses with an MSN that is not the message's",
			 (unsigned long long)peer_req_stats(c.req)->msn_mismatch);
	if (c.violations || c.storm || peer_req_stats(c.req)->qp_errors || c.n_err)
		rc = 1;
	if (o->ops_per_qp && !rp_stop)
		for (uint32_t i = 0; i < o->n_qps; i++)
			if (c.q[i].ops < o->ops_per_qp && !c.storm) {
				rc = 1;
				if (c.n_err < MAX_MSGS)
					snprintf(c.err_msgs[c.n_err++], sizeof(c.err_msgs[0]),
						 "qp %u: finished %llu of %llu ops", c.q[i].g,
						 (unsigned long long)c.q[i].ops,
						 (unsigned long long)o->ops_per_qp);
			}
	if (!o->quiet) {
		printf("client %u done: %s ops=%llu in %.2fs = %.0f ops/s, p50=%.1fus p99=%.1fus "
		       "retries=%llu retx=%llu violations=%llu qp_errors=%llu reconnects=%llu%s\n",
		       o->client_id, rc ? "FAIL" : "ok", (unsigned long long)c.ops, secs,
		       c.ops / secs, lat_pct_us(&c.lat, 50), lat_pct_us(&c.lat, 99),
		       (unsigned long long)c.retries,
		       (unsigned long long)peer_req_stats(c.req)->retx_pkts,
		       (unsigned long long)c.violations,
		       (unsigned long long)peer_req_stats(c.req)->qp_errors,
		       (unsigned long long)c.reconnects, c.storm ? " RETRY-STORM" : "");
		for (uint32_t i = 0; i < c.n_err; i++)
			printf("client %u error: %s\n", o->client_id, c.err_msgs[i]);
	}
	if (o->json) {
		FILE *f = strcmp(o->json, "-") ? fopen(o->json, "w") : stdout;

		if (f) {
			print_json(&c, f, secs, link);
			if (f != stdout)
				fclose(f);
		} else {
			fprintf(stderr, "roce-peer client: %s: %s\n", o->json, strerror(errno));
			rc = 1;
		}
	}
	if (guard >= 0)
		close(guard);
	if (c.ctl_fd >= 0)
		close(c.ctl_fd);
	lat_free(&c.lat);
	lat_free(&c.rdma_lat);
	free(c.q);
	free(c.my_last);
	free(c.cs);
	free(c.cs_doubt);
	free(c.hint);
	free(c.faa_origs);
	peer_req_destroy(c.req);
	peer_link_close(link);
	return rc;
}
