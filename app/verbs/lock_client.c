/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_client.c — a Sherman-style lock client that checks its own safety.
 *
 * Why it exists: swordd's lock acceleration turns CAS into WRITE and back;
 * the only convincing judge that locks stay locks is a real RDMA stack
 * running real lock traffic.  Each thread owns one RC QP to the memory
 * server and loops:
 *
 *   acquire   CAS(lock, 0, tag) until it returns 0 (each failure is a retry)
 *   check     READ the record: nobody may be inside (holder == 0)
 *   update    WRITE the record: holder = tag, counter + 1
 *   verify    READ it back: still ours, counter is what we wrote
 *   release   WRITE holder = 0, then WRITE(0) to the lock word (one batch:
 *             RC orders them, as Sherman relies on)
 *
 * Tags are unique per critical section ((thread + 1) << 32 | op + 1).
 * Any overlap (a holder found inside, a record changed under us) counts as
 * a violation; at the end the counters of all records must have grown by
 * exactly the number of critical sections (no lost update) and every lock
 * and holder must be 0.  A work completion error or a timeout is an error.
 * Exit status: 0 only with no violation and no error.
 *
 * -B runs a deliberately broken lock (a failed CAS counts as acquired) to
 * show that the checks above do catch overlapping holders.
 *
 * -P PSN starts every QP at the same send PSN, as Sherman does (3185), so
 * the QPs of this host overlap in PSN exactly.  -R N reconnects each QP
 * after every N critical sections, as a restarted application would: the
 * QP goes to RESET and back to RTS with the same QPN and the same initial
 * PSN, and the memory server is asked over the QP's TCP connection to do
 * the same with its end ('X' + our QP info; it answers 'R').
 *
 * -N N re-creates each QP after every N critical sections, as an
 * application that tears its connections down and builds them again does:
 * the QP is destroyed and a new one made (a new QPN, as the device
 * assigns; the initial PSN of -P again, else a new one), and the memory
 * server is asked to do the same with its end ('N' + our QP info; it
 * answers with its new QP's info and 'R').
 *
 * -C connects every QP through the RDMA CM instead (verbs_cm.h; the memory
 * server runs with -C too and sends its region in the accept's private
 * data), and at the end each thread disconnects its QP the way an
 * application does: rdma_disconnect (a CM DREQ) and the peer's answer
 * (DREP: RDMA_CM_EVENT_DISCONNECTED with status 0) within -w; anything
 * else is an error.  -E N makes thread 0 leave early, after N critical
 * sections, while the others go on: the one disconnect swordd's
 * remapping must survive when thread 0's QP carries the others (a lane's
 * owner: lib/remap/remap_cm.c).  The checks then expect thread 0's N
 * critical sections and the others' full count.
 *
 * -F N makes thread 0 fail on purpose after N critical sections: between
 * two sections (it holds no lock), it WRITEs 8 bytes just past the end of
 * the server's region with the region's rkey.  The server's RC responder
 * must refuse it with a remote access error NAK, which puts the server's
 * QP (and then ours) in error: what an application's stray pointer does,
 * and the fatal NAK swordd's remapping must contain to the one client
 * that caused it (lib/remap/remap_move.c).  Thread 0 expects exactly that
 * work completion (IBV_WC_REM_ACCESS_ERR; anything else, a success
 * included, is an error) and stops; the others go on to their full count
 * and the checks expect thread 0's N sections.  With -C, thread 0 then
 * disconnects at once (a failed QP's connection is torn down; a DREQ is
 * a CM message, not on the failed QP, so it normally still gets its
 * DREP), but a disconnect that fails there is reported, not an error:
 * its QP was meant to fail, and nothing of the run depends on it.
 *
 *   sword-lock-client [-C [-E N]] [-F N] [-d DEV] [-x GID] [-p PORT] [-t THREADS] [-n OPS]
 *                     [-l LOCKS] [-w TIMEOUT_MS] [-T N] [-P PSN] [-R N] [-N N] [-B]
 *                     SERVER_IP
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lock_layout.h"
#include "verbs_cm.h"
#include "verbs_rc.h"

#define MAX_THREADS 32

struct options {
	const char *server;
	const char *dev;
	int gid_index;
	int port;
	unsigned int threads;
	unsigned int ops;            /* critical sections per thread */
	unsigned int locks;
	int timeout_ms;              /* per work request */
	int broken;                  /* -B: ignore failed CAS (checks the checker) */
	int ack_timeout;             /* -T: QP local ACK timeout exponent, 0 = none */
	long initial_psn;            /* -P: every QP's send PSN, -1 = random */
	unsigned int reconnect_every; /* -R: critical sections between reconnects, 0 = never */
	unsigned int recreate_every;  /* -N: ... between re-creations, 0 = never */
	int cm;                      /* -C: connect and disconnect through the RDMA CM */
	unsigned int leave_after;    /* -E: thread 0 disconnects after this many, 0 = at the end */
	unsigned int fail_after;     /* -F: thread 0's refused WRITE after this many, 0 = never */
};

struct thread_ctx {
	unsigned int id;
	const struct options *o;
	struct rc_dev *d;
	struct rc_qp q;
	int fd;
	struct rdma_event_channel *ch;   /* -C: this thread's own CM events */
	struct rdma_cm_id *cm_id;
	int left;                    /* -C: disconnected (tried), its QP gone */
	int refused;                 /* -F: the server refused our stray WRITE as it must */
	double disconnect_ms;        /* how long its DISCONNECTED took, -1 = failed */
	uint64_t raddr;              /* server region */
	uint32_t rkey;
	struct ibv_mr *mr;
	/* local buffers, registered as one MR */
	struct {
		uint64_t cas_old;
		struct lock_record rec;
		struct lock_record out;
		uint64_t zero;
		struct lock_record all[LOCK_MAX];
	} buf;
	/* results */
	struct rc_info peer;         /* the server's QP, as exchanged */
	uint64_t ops, cas, cas_failed, retries, errors, violations, reconnects, recreations;
	uint64_t op_ns, acquire_ns;
	unsigned int seed;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Post one work request at the region's offset remote_off (no wait). */
static int
post_only(struct thread_ctx *t, enum ibv_wr_opcode opcode, void *local, uint32_t len,
	  uint64_t remote_off, uint64_t compare, uint64_t swap, int signaled)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = len, .lkey = t->mr->lkey,
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = opcode;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = t->raddr + remote_off;
		wr.wr.atomic.rkey = t->rkey;
		wr.wr.atomic.compare_add = compare;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = t->raddr + remote_off;
		wr.wr.rdma.rkey = t->rkey;
	}
	if (ibv_post_send(t->q.qp, &wr, &bad) != 0) {
		fprintf(stderr, "thread %u: ibv_post_send: %s\n", t->id, strerror(errno));
		t->errors++;
		return -1;
	}
	return 0;
}

/* Post one work request; wait for its completion if it is signaled. */
static int
post(struct thread_ctx *t, enum ibv_wr_opcode opcode, void *local, uint32_t len,
     uint64_t remote_off, uint64_t compare, uint64_t swap, int signaled)
{
	struct ibv_wc wc;
	int rc;

	if (post_only(t, opcode, local, len, remote_off, compare, swap, signaled) != 0)
		return -1;
	if (!signaled)
		return 0;
	rc = rc_wait(&t->q, &wc, t->o->timeout_ms);
	if (rc == 0) {
		fprintf(stderr, "thread %u: no completion within %d ms (opcode %d)\n",
			t->id, t->o->timeout_ms, opcode);
		t->errors++;
		return -1;
	}
	if (rc < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "thread %u: work completion error: %s (opcode %d, vendor_err 0x%x)\n",
			t->id, rc < 0 ? "CQ poll failed" : ibv_wc_status_str(wc.status),
			opcode, rc < 0 ? 0 : wc.vendor_err);
		t->errors++;
		return -1;
	}
	return 0;
}

static void
violation(struct thread_ctx *t, unsigned int lock, const char *what, uint64_t tag)
{
	t->violations++;
	fprintf(stderr, "VIOLATION thread %u lock %u tag 0x%" PRIx64 ": %s "
		"(holder 0x%" PRIx64 " counter %" PRIu64 " last_tag 0x%" PRIx64 ")\n",
		t->id, lock, tag, what, t->buf.rec.holder, t->buf.rec.counter, t->buf.rec.last_tag);
}

/* One critical section on `lock`.  Returns -1 on a QP error. */
static int
critical_section(struct thread_ctx *t, unsigned int lock, uint64_t tag)
{
	uint64_t t0 = now_ns(), t1, counter;
	unsigned int attempts = 0;

	for (;;) {
		attempts++;
		t->cas++;
		if (post(t, IBV_WR_ATOMIC_CMP_AND_SWP, &t->buf.cas_old, 8,
			 lock_word_offset(lock), 0, tag, 1) != 0)
			return -1;
		if (t->buf.cas_old != 0)
			t->cas_failed++;
		if (t->buf.cas_old == 0 || t->o->broken)
			break;
	}
	if (attempts > 1)
		t->retries++;
	t1 = now_ns();

	if (post(t, IBV_WR_RDMA_READ, &t->buf.rec, sizeof(t->buf.rec),
		 record_offset(lock), 0, 0, 1) != 0)
		return -1;
	if (t->buf.rec.holder != 0)
		violation(t, lock, "record has a holder while we hold the lock", tag);
	counter = t->buf.rec.counter + 1;

	t->buf.out.holder = tag;
	t->buf.out.counter = counter;
	t->buf.out.last_tag = tag;
	if (post(t, IBV_WR_RDMA_WRITE, &t->buf.out, sizeof(t->buf.out),
		 record_offset(lock), 0, 0, 1) != 0)
		return -1;

	if (post(t, IBV_WR_RDMA_READ, &t->buf.rec, sizeof(t->buf.rec),
		 record_offset(lock), 0, 0, 1) != 0)
		return -1;
	if (t->buf.rec.holder != tag || t->buf.rec.counter != counter)
		violation(t, lock, "record changed inside our critical section", tag);

	/* Release: clear the holder, then WRITE(0) the lock word; RC keeps the order. */
	t->buf.zero = 0;
	if (post(t, IBV_WR_RDMA_WRITE, &t->buf.zero, 8, record_offset(lock), 0, 0, 0) != 0 ||
	    post(t, IBV_WR_RDMA_WRITE, &t->buf.zero, 8, lock_word_offset(lock), 0, 0, 1) != 0)
		return -1;

	t->ops++;
	t->acquire_ns += t1 - t0;
	t->op_ns += now_ns() - t0;
	return 0;
}

/*
 * -F: WRITE 8 bytes just past the server's region (its own rkey, so only
 * the range is wrong) and expect the server to refuse it with a remote
 * access error.  Call it between critical sections: no lock is held, and
 * the last release's WRITE completed, so nothing else is in flight on
 * this QP.  Sets t->refused on exactly that outcome; anything else (a
 * success, another status, no completion) is the thread's error.
 */
static void
stray_write(struct thread_ctx *t)
{
	struct ibv_wc wc;
	int rc;

	t->buf.zero = 0;
	if (post_only(t, IBV_WR_RDMA_WRITE, &t->buf.zero, 8, t->peer.length, 0, 0, 1) != 0)
		return;
	rc = rc_wait(&t->q, &wc, t->o->timeout_ms);
	if (rc == 1 && wc.status == IBV_WC_REM_ACCESS_ERR) {
		t->refused = 1;
		printf("lock-client: thread %u stray WRITE after %" PRIu64 " critical sections "
		       "refused: %s (as expected)\n", t->id, t->ops, ibv_wc_status_str(wc.status));
		return;
	}
	fprintf(stderr, "thread %u: stray WRITE to 0x%" PRIx64 " not refused with a remote "
		"access error: %s\n", t->id, (uint64_t)(t->raddr + t->peer.length),
		rc == 0 ? "no completion in time" : rc < 0 ? "CQ poll failed"
		: ibv_wc_status_str(wc.status));
	t->errors++;
}

/*
 * Reconnect an idle QP (the last release was signaled and completed):
 * RESET, tell the server ('X' + our info: same QPN, same initial PSN), wait
 * for its 'R' (its QP went through RESET to RTR at our PSN), then INIT ->
 * RTR -> RTS again.  Returns -1 on failure.
 */
static int
reconnect(struct thread_ctx *t)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct rc_info mine;
	char ready;

	if (ibv_modify_qp(t->q.qp, &a, IBV_QP_STATE) != 0) {
		fprintf(stderr, "thread %u: modify QP to RESET: %s\n", t->id, strerror(errno));
		return -1;
	}
	rc_qp_info(&t->q, t->d, &mine);
	if (write(t->fd, "X", 1) != 1 || rc_send_info(t->fd, &mine) != 0 ||
	    read(t->fd, &ready, 1) != 1 || ready != 'R') {
		fprintf(stderr, "thread %u: server did not confirm the reconnect\n", t->id);
		return -1;
	}
	if (rc_qp_connect(&t->q, t->d, &t->peer) != 0)
		return -1;
	t->reconnects++;
	return 0;
}

/*
 * Re-create an idle QP (the last release was signaled and completed):
 * destroy it, make a new one (a new QPN), send the server 'N' and its info,
 * take the info of the server's new QP and its 'R' (that QP is in RTR at
 * our PSN), then INIT -> RTR -> RTS towards it.  Returns -1 on failure.
 */
static int
recreate(struct thread_ctx *t)
{
	const uint32_t old_qpn = t->q.qp->qp_num;
	struct rc_info mine, peer;
	char ready;

	rc_qp_destroy(&t->q);
	if (rc_qp_create(&t->q, t->d, 1, 16) != 0)
		return -1;
	if (t->o->initial_psn >= 0)
		t->q.psn = (uint32_t)t->o->initial_psn;
	t->q.ack_timeout = (uint8_t)t->o->ack_timeout;
	rc_qp_info(&t->q, t->d, &mine);
	if (write(t->fd, "N", 1) != 1 || rc_exchange(t->fd, &mine, &peer) != 0 ||
	    read(t->fd, &ready, 1) != 1 || ready != 'R') {
		fprintf(stderr, "thread %u: server did not re-create its QP\n", t->id);
		return -1;
	}
	if (rc_qp_connect(&t->q, t->d, &peer) != 0)
		return -1;
	t->peer.qpn = peer.qpn;
	t->peer.psn = peer.psn;
	t->recreations++;
	printf("lock-client: thread %u re-created its QP: 0x%x -> 0x%x (server QP 0x%x)\n",
	       t->id, old_qpn, t->q.qp->qp_num, peer.qpn);
	return 0;
}

static void leave(struct thread_ctx *t);

/* How many critical sections thread t runs. */
static unsigned int
ops_of(const struct options *o, unsigned int id)
{
	if (id == 0 && o->leave_after)
		return o->leave_after;
	if (id == 0 && o->fail_after)
		return o->fail_after;
	return o->ops;
}

/* -F, -C: thread 0's QP failed on purpose; its connection goes now.  A
 * disconnect that fails is reported by leave but is not an error here. */
static void
leave_failed(struct thread_ctx *t)
{
	const uint64_t errors = t->errors;

	leave(t);
	t->errors = errors;
}

static void *
run_thread(void *arg)
{
	struct thread_ctx *t = arg;
	const unsigned int ops = ops_of(t->o, t->id);

	for (unsigned int op = 0; op < ops; op++) {
		unsigned int lock = t->o->locks == 1 ? 0 : (unsigned int)rand_r(&t->seed) % t->o->locks;
		uint64_t tag = ((uint64_t)(t->id + 1) << 32) | (op + 1);

		if (op && t->o->reconnect_every && op % t->o->reconnect_every == 0 &&
		    reconnect(t) != 0) {
			t->errors++;
			break;
		}
		if (op && t->o->recreate_every && op % t->o->recreate_every == 0 &&
		    recreate(t) != 0) {
			t->errors++;
			break;
		}
		if (critical_section(t, lock, tag) != 0)
			break;
	}
	/* -E: the others are still running; the last release completed */
	if (t->id == 0 && t->o->leave_after)
		leave(t);
	/* -F: only after all its sections went well (no lock held) */
	if (t->id == 0 && t->o->fail_after && t->errors == 0 && t->ops == ops) {
		stray_write(t);
		if (t->o->cm)
			leave_failed(t);
	}
	return NULL;
}

static int
connect_thread_tcp(struct thread_ctx *t)
{
	struct rc_info mine, peer;
	char ready;

	if (rc_qp_create(&t->q, t->d, 1, 16) != 0)
		return -1;
	if (t->o->initial_psn >= 0)
		t->q.psn = (uint32_t)t->o->initial_psn;
	t->q.ack_timeout = (uint8_t)t->o->ack_timeout;
	t->fd = tcp_connect(t->o->server, t->o->port);
	if (t->fd < 0)
		return -1;
	rc_qp_info(&t->q, t->d, &mine);
	if (rc_exchange(t->fd, &mine, &peer) != 0) {
		fprintf(stderr, "thread %u: QP info exchange failed\n", t->id);
		return -1;
	}
	if (rc_qp_connect(&t->q, t->d, &peer) != 0)
		return -1;
	/* The server answers 'R' once its QP is ready to receive. */
	if (read(t->fd, &ready, 1) != 1 || ready != 'R') {
		fprintf(stderr, "thread %u: server did not confirm its QP\n", t->id);
		return -1;
	}
	t->peer = peer;
	t->raddr = peer.addr;
	t->rkey = peer.rkey;
	t->peer.length = peer.length;
	return 0;
}

/* rdma_resolve_addr and rdma_resolve_route to the server's CM port. */
static int
cm_resolve(struct thread_ctx *t, const char *who)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	struct rdma_cm_event *ev;
	char service[16];
	int rc;

	snprintf(service, sizeof(service), "%d", t->o->port);
	if (getaddrinfo(t->o->server, service, &hints, &res) != 0) {
		fprintf(stderr, "%s: cannot resolve %s\n", who, t->o->server);
		return -1;
	}
	rc = rdma_resolve_addr(t->cm_id, NULL, res->ai_addr, t->o->timeout_ms);
	freeaddrinfo(res);
	if (rc != 0) {
		fprintf(stderr, "%s: rdma_resolve_addr: %s\n", who, strerror(errno));
		return -1;
	}
	if (cm_expect(t->ch, RDMA_CM_EVENT_ADDR_RESOLVED, t->o->timeout_ms, who, &ev) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(t->cm_id, t->o->timeout_ms) != 0) {
		fprintf(stderr, "%s: rdma_resolve_route: %s\n", who, strerror(errno));
		return -1;
	}
	if (cm_expect(t->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, t->o->timeout_ms, who, &ev) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

/*
 * -C: this thread's QP through the RDMA CM (its own event channel, so
 * that each thread waits for its own events), with the TCP mode's ACK
 * timeout; the server's region comes in its REP's private data.
 */
static int
connect_thread_cm(struct thread_ctx *t)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct cm_region reg;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	char who[32];

	snprintf(who, sizeof(who), "thread %u", t->id);
	t->ch = rdma_create_event_channel();
	if (t->ch == NULL || rdma_create_id(t->ch, &t->cm_id, t, RDMA_PS_TCP) != 0) {
		fprintf(stderr, "%s: rdma_create_id: %s\n", who, strerror(errno));
		return -1;
	}
	if (cm_resolve(t, who) != 0 || cm_qp_create(&t->q, t->d, t->cm_id, 1, 16) != 0 ||
	    cm_set_ack_timeout(t->cm_id, (uint8_t)t->o->ack_timeout) != 0)
		return -1;
	cm_conn_param(&cp, NULL, 0);
	if (rdma_connect(t->cm_id, &cp) != 0) {
		fprintf(stderr, "%s: rdma_connect: %s\n", who, strerror(errno));
		return -1;
	}
	if (cm_expect(t->ch, RDMA_CM_EVENT_ESTABLISHED, t->o->timeout_ms, who, &ev) != 0)
		return -1;
	if (ev->param.conn.private_data == NULL ||
	    ev->param.conn.private_data_len < sizeof(reg)) {
		fprintf(stderr, "%s: the server's accept carries no region\n", who);
		rdma_ack_cm_event(ev);
		return -1;
	}
	memcpy(&reg, ev->param.conn.private_data, sizeof(reg));
	t->peer.qpn = ev->param.conn.qp_num;
	rdma_ack_cm_event(ev);
	t->raddr = be64toh(reg.addr);
	t->rkey = be32toh(reg.rkey);
	t->peer.length = be32toh(reg.length);
	/* the CM chose the initial PSN: printed as the TCP mode's */
	if (ibv_query_qp(t->q.qp, &a, IBV_QP_SQ_PSN, &ia) == 0)
		t->q.psn = a.sq_psn;
	return 0;
}

/* The thread's QP, its local buffers' MR, and the server's region. */
static int
connect_thread(struct thread_ctx *t)
{
	t->mr = ibv_reg_mr(t->d->pd, &t->buf, sizeof(t->buf), IBV_ACCESS_LOCAL_WRITE);
	if (t->mr == NULL) {
		fprintf(stderr, "ibv_reg_mr: %s\n", strerror(errno));
		return -1;
	}
	if ((t->o->cm ? connect_thread_cm(t) : connect_thread_tcp(t)) != 0)
		return -1;
	if (t->peer.length < RECORD_OFFSET + (uint64_t)RECORD_STRIDE * t->o->locks) {
		fprintf(stderr, "server region too small (%u bytes)\n", t->peer.length);
		return -1;
	}
	return 0;
}

/*
 * -C: disconnect t's QP as an application does, and say how it went.  A
 * failure (no DISCONNECTED with status 0 in time) is the thread's error.
 * Its QP and cm_id go either way: nothing may use them any more.
 */
static void
leave(struct thread_ctx *t)
{
	char who[32];

	snprintf(who, sizeof(who), "thread %u disconnect", t->id);
	t->disconnect_ms = cm_disconnect(t->ch, t->cm_id, t->o->timeout_ms, who);
	if (t->disconnect_ms < 0)
		t->errors++;
	printf("lock-client: thread %u disconnected after %" PRIu64 " critical sections: %s "
	       "(%.1f ms)\n", t->id, t->ops, t->disconnect_ms < 0 ? "FAILED" : "ok",
	       t->disconnect_ms < 0 ? 0.0 : t->disconnect_ms);
	cm_qp_destroy(&t->q, t->cm_id);
	t->left = 1;
}

/* Free what connect_thread made (the QP may be gone already: leave). */
static void
close_thread(struct thread_ctx *t)
{
	if (t->cm_id != NULL) {
		cm_qp_destroy(&t->q, t->cm_id);
		rdma_destroy_id(t->cm_id);
	} else {
		rc_qp_destroy(&t->q);
	}
	if (t->ch != NULL)
		rdma_destroy_event_channel(t->ch);
	if (t->fd >= 0)
		close(t->fd);
	if (t->mr)
		ibv_dereg_mr(t->mr);
}

/* READ every record of the used locks (and their lock words) into t->buf.all. */
static int
read_state(struct thread_ctx *t, uint64_t *words)
{
	for (unsigned int l = 0; l < t->o->locks; l++) {
		if (post(t, IBV_WR_RDMA_READ, &t->buf.all[l], sizeof(t->buf.all[l]),
			 record_offset(l), 0, 0, 1) != 0)
			return -1;
		if (words != NULL) {
			if (post(t, IBV_WR_RDMA_READ, &t->buf.cas_old, 8, lock_word_offset(l),
				 0, 0, 1) != 0)
				return -1;
			words[l] = t->buf.cas_old;
		}
	}
	return 0;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: sword-lock-client [-C [-E N]] [-F N] [-d DEV] [-x GID_INDEX] [-p PORT] [-t THREADS]\n"
		"                         [-n OPS] [-l LOCKS] [-w TIMEOUT_MS] [-T N] [-P PSN] [-R N]\n"
		"                         [-N N] [-B] SERVER_IP\n"
		"  -C          connect through the RDMA CM (the memory server runs -C too) and\n"
		"              disconnect every QP at the end (rdma_disconnect, DISCONNECTED\n"
		"              within -w); not with -P or -R\n"
		"  -E N        (-C) thread 0 disconnects after N critical sections while the\n"
		"              others go on (needs 2 threads or more)\n"
		"  -F N        thread 0 WRITEs past the server's region after N critical\n"
		"              sections, expects a remote access error (its QP fails) and\n"
		"              stops while the others go on (needs 2 threads or more)\n"
		"  -t THREADS  threads, one RC QP each (default 4, max %d)\n"
		"  -n OPS      critical sections per thread (default 200)\n"
		"  -l LOCKS    lock words contended for (default 1, max %d)\n"
		"  -w MS       timeout per work request and CM step (default 10000)\n"
		"  -T N        QP ACK timeout 4.096us * 2^N, 0 = none (default 0, see verbs_rc.h)\n"
		"  -P PSN      every QP starts at this send PSN (Sherman: 3185; default random)\n"
		"  -R N        reconnect each QP after every N critical sections: RESET and\n"
		"              back to RTS, same QPN, same initial PSN (default 0 = never)\n"
		"  -N N        re-create each QP after every N critical sections: a new QP\n"
		"              (new QPN), the server's too (default 0 = never)\n"
		"  -B          broken lock: enter even when the CAS failed (self-test:\n"
		"              the run must then report violations)\n",
		MAX_THREADS, LOCK_MAX);
	exit(2);
}

int
main(int argc, char **argv)
{
	struct options o = {
		.gid_index = -1, .port = LOCK_TCP_PORT, .threads = 4, .ops = 200,
		.locks = 1, .timeout_ms = 10000, .initial_psn = -1,
	};
	static struct thread_ctx threads[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	uint64_t before[LOCK_MAX], words[LOCK_MAX];
	uint64_t ops = 0, cas = 0, cas_failed = 0, retries = 0, errors = 0, violations = 0;
	uint64_t reconnects = 0, recreations = 0, expected = 0;
	unsigned int disconnects = 0;
	uint64_t op_ns = 0, acquire_ns = 0, grew = 0, t0, elapsed;
	unsigned int i, l, started = 0;
	struct rc_dev d;
	int opt, ok;

	while ((opt = getopt(argc, argv, "CE:F:d:x:p:t:n:l:w:T:P:R:N:Bh")) != -1) {
		switch (opt) {
		case 'C': o.cm = 1; break;
		case 'E': o.leave_after = (unsigned int)atoi(optarg); break;
		case 'F': o.fail_after = (unsigned int)atoi(optarg); break;
		case 'd': o.dev = optarg; break;
		case 'x': o.gid_index = atoi(optarg); break;
		case 'p': o.port = atoi(optarg); break;
		case 't': o.threads = (unsigned int)atoi(optarg); break;
		case 'n': o.ops = (unsigned int)atoi(optarg); break;
		case 'l': o.locks = (unsigned int)atoi(optarg); break;
		case 'w': o.timeout_ms = atoi(optarg); break;
		case 'B': o.broken = 1; break;
		case 'T': o.ack_timeout = atoi(optarg); break;
		case 'P': o.initial_psn = strtol(optarg, NULL, 0); break;
		case 'R': o.reconnect_every = (unsigned int)atoi(optarg); break;
		case 'N': o.recreate_every = (unsigned int)atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || o.threads < 1 || o.threads > MAX_THREADS ||
	    o.locks < 1 || o.locks > LOCK_MAX || o.timeout_ms < 1 ||
	    o.ack_timeout < 0 || o.ack_timeout > 31 || o.initial_psn > 0xffffff)
		usage();
	if (o.leave_after && (!o.cm || o.threads < 2 || o.leave_after > o.ops)) {
		fprintf(stderr, "-E needs -C, 2 threads or more, and at most -n critical sections\n");
		return 2;
	}
	/* one early end for thread 0: leaving and failing are different tests */
	if (o.fail_after && (o.threads < 2 || o.fail_after > o.ops || o.leave_after ||
			     o.reconnect_every || o.broken)) {
		fprintf(stderr, "-F needs 2 threads or more and at most -n critical sections, "
			"and does not go with -E, -R or -B\n");
		return 2;
	}
	/* the CM picks the PSN and owns the QP's states: no -P, no RESET */
	if (o.cm && (o.initial_psn >= 0 || o.reconnect_every || o.recreate_every)) {
		fprintf(stderr, "-C does not go with -P, -R or -N (the RDMA CM chooses the PSN "
			"and moves the QP through its states)\n");
		return 2;
	}
	if (o.fail_after && o.recreate_every) {
		fprintf(stderr, "-F does not go with -N\n");
		return 2;
	}
	o.server = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand((unsigned int)time(NULL) ^ (unsigned int)getpid());

	if ((o.cm ? cm_dev_open(&d, o.dev, o.gid_index)
	     : rc_dev_open(&d, o.dev, o.gid_index)) != 0)
		return 1;
	for (i = 0; i < o.threads; i++) {
		threads[i].id = i;
		threads[i].o = &o;
		threads[i].d = &d;
		threads[i].fd = -1;
		threads[i].seed = (unsigned int)rand();
		if (connect_thread(&threads[i]) != 0)
			return 1;
	}
	printf("lock-client: %u threads (one QP each), %u ops each, %u locks, server %s "
	       "region 0x%" PRIx64 "\n", o.threads, o.ops, o.locks, o.server, threads[0].raddr);
	for (i = 0; i < o.threads; i++) {
		char desc[128] = "";

		if (o.cm)
			cm_qp_describe(threads[i].q.qp, desc, sizeof(desc));
		printf("lock-client: thread %u QP 0x%x -> server QP 0x%x, initial PSN %u%s%s\n", i,
		       threads[i].q.qp->qp_num, threads[i].peer.qpn, threads[i].q.psn,
		       o.cm ? " (rdma_cm) " : "", desc);
	}

	/* Baseline: the records may hold counts from an earlier run. */
	if (read_state(&threads[0], words) != 0)
		return 1;
	for (l = 0; l < o.locks; l++) {
		before[l] = threads[0].buf.all[l].counter;
		if (words[l] != 0 || threads[0].buf.all[l].holder != 0) {
			fprintf(stderr, "lock %u is not free before the run (word 0x%" PRIx64
				" holder 0x%" PRIx64 ")\n", l, words[l], threads[0].buf.all[l].holder);
			return 1;
		}
	}

	t0 = now_ns();
	for (i = 0; i < o.threads; i++) {
		if (pthread_create(&tids[i], NULL, run_thread, &threads[i]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	elapsed = now_ns() - t0;

	for (i = 0; i < o.threads; i++) {
		struct thread_ctx *t = &threads[i];

		ops += t->ops;
		cas += t->cas;
		cas_failed += t->cas_failed;
		retries += t->retries;
		errors += t->errors;
		violations += t->violations;
		reconnects += t->reconnects;
		recreations += t->recreations;
		op_ns += t->op_ns;
		acquire_ns += t->acquire_ns;
	}
	if (started != o.threads)
		errors++;

	/* Final check from a QP that is still healthy (and connected). */
	for (i = 0; i < o.threads &&
		    (threads[i].errors != 0 || threads[i].left || threads[i].refused); i++)
		;
	if (i == o.threads || read_state(&threads[i], words) != 0) {
		fprintf(stderr, "cannot read the final state\n");
		errors++;
	} else {
		for (l = 0; l < o.locks; l++) {
			struct lock_record *r = &threads[i].buf.all[l];

			grew += r->counter - before[l];
			if (words[l] != 0 || r->holder != 0) {
				fprintf(stderr, "VIOLATION lock %u not free at the end (word 0x%" PRIx64
					" holder 0x%" PRIx64 ")\n", l, words[l], r->holder);
				violations++;
			}
		}
		if (grew != ops) {
			fprintf(stderr, "VIOLATION lost update: %" PRIu64 " critical sections "
				"but the counters grew by %" PRIu64 "\n", ops, grew);
			violations++;
		}
	}

	/* -C: every thread still connected leaves now, one after the other */
	for (i = 0; o.cm && i < o.threads; i++) {
		if (!threads[i].left) {
			uint64_t before_leave = threads[i].errors;

			leave(&threads[i]);
			errors += threads[i].errors - before_leave;
		}
		disconnects += threads[i].disconnect_ms >= 0;
	}

	for (i = 0; i < o.threads; i++)
		expected += ops_of(&o, i);
	/* -F -C: thread 0's disconnect after its failure may fail (leave_failed) */
	ok = errors == 0 && violations == 0 && ops == expected &&
	     (!o.fail_after || threads[0].refused) &&
	     (!o.cm || disconnects + (o.fail_after && threads[0].disconnect_ms < 0) == o.threads);
	printf("lock-client: ops=%" PRIu64 " cas=%" PRIu64 " cas_failed=%" PRIu64
	       " retries=%" PRIu64 " errors=%" PRIu64 " violations=%" PRIu64
	       " counters_grew=%" PRIu64 " reconnects=%" PRIu64 " recreations=%" PRIu64
	       " disconnects=%u refused=%d elapsed_ms=%.1f"
	       " ops_per_s=%.0f avg_op_us=%.1f avg_acquire_us=%.1f result=%s\n",
	       ops, cas, cas_failed, retries, errors, violations, grew, reconnects, recreations,
	       disconnects,
	       threads[0].refused, elapsed / 1e6,
	       elapsed ? ops * 1e9 / elapsed : 0.0, ops ? op_ns / 1e3 / ops : 0.0,
	       ops ? acquire_ns / 1e3 / ops : 0.0, ok ? "PASS" : "FAIL");

	for (i = 0; i < o.threads; i++)
		close_thread(&threads[i]);
	rc_dev_close(&d);
	return ok ? 0 : 1;
}
