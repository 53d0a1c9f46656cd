/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_core.c — lanes and bindings: which client connection rides which
 * server-side connection, and when that may start.
 *
 * Why a connection binds only at a request with nothing outstanding
 * before it: until then answers to its earlier requests come from its own
 * server QP; if later requests already rode a lane, the lane's answers
 * could overtake them and the client would see its responses out of PSN
 * order (I3).  When nothing is outstanding the MSN the client expects is
 * also known: the last one its server sent (or 0 for a connection the
 * RDMA CM just set up).  Retransmissions of PSNs before the binding still
 * go to the client's own server QP, which answers them as duplicates.
 *
 * Why a lane starts at its owner's next PSN: the owner's server QP has
 * answered everything before it, so that is exactly the PSN it expects.
 *
 * Why a lane dies with its owner: when the owner's incarnation ends (a
 * new life of its QPN, idle eviction, the server disconnecting) its
 * server QP is, or may be, gone or reset; its PSN space cannot be
 * trusted any more.  The clients bound to it lose what was outstanding
 * there (each is told: rmp_tell_dead) and reconnect: never a request
 * executed twice.  Connections that bind later pick another lane.  The
 * exception is a disconnect the owner's client asks for (its CM DREQ):
 * the server has not heard of it, so the lane is kept for the others
 * and the DREQ held until they are gone (remap_cm.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "remap_internal.h"

bool
remap_is_server(const struct remap *r, uint32_t ip4)
{
	return rmp_server_of(r, ip4) >= 0;
}

struct rmp_conn *
rmp_conn_of(struct remap *r, const struct rc_conn *c)
{
	uint32_t i = rc_index(r->rc, c);
	struct rmp_conn *rcn = &r->conns[i];

	if (rcn->inc == c->incarnation)
		return rcn;
	memset(rcn, 0, offsetof(struct rmp_conn, rev));
	rcn->inc = c->incarnation;
	rcn->lane = RMP_NONE;
	memset(rcn->rev, 0, (r->crev_mask + 1) * sizeof(*rcn->rev));
	/* a connection the RDMA CM just set up has completed nothing */
	if (c->by_cm && c->next_psn == c->first_psn) {
		rcn->msn = 0;
		rcn->msn_psn = roce_psn_add(c->first_psn, ROCE_PSN_MASK);
		rcn->msn_known = 1;
	}
	return rcn;
}

void
rmp_lane_close(struct remap *r, struct rmp_lane *l)
{
	if (!l->open)
		return;
	l->open = 0;
	l->recovering = 0;
	/* a kept lane's server QP is the held DREQ's to end (remap_cm.c) */
	if (l->dreq_len) {
		l->dreq_due = 1;
		r->dreq_pending = true;
	}
	/* its clients stay bound to a closed lane: their requests are
	 * dropped until they reconnect (a new incarnation binds afresh),
	 * and each is told (rmp_tell_dead) */
	r->dead_pending = true;
	r->c.lanes_closed++;
}

/*
 * A FIRST or MIDDLE packet carries exactly the path MTU (IBTA 9.7.7: every
 * packet of a message but its last is full): a multi-packet WRITE or SEND
 * to the server (the requester's QP and the server's agree on it, or the
 * server refuses it) or READ response from it.  READ spans on its lanes
 * are counted in it from then on: [atomic] pmtu is only the first guess,
 * and a guess above the path MTU made the server take the requests after
 * a READ for duplicates (read_span_broken).
 */
void
rmp_learn_pmtu(struct remap *r, uint32_t server, uint8_t *f, const struct roce_pkt *p,
	       bool *icrc_ok)
{
	const uint32_t m = p->payload_len;

	if (!(p->oi->flags & (ROCE_F_FIRST | ROCE_F_MIDDLE)) || (p->oi->flags & ROCE_F_LAST) ||
	    !(p->oi->flags & ROCE_F_PAYLOAD) || p->pad != 0 || m < 256 || m > 4096 ||
	    (m & (m - 1)) || r->servers[server].pmtu == m)
		return;
	/* only what its sender sent teaches (I8) */
	if (!*icrc_ok && !(*icrc_ok = roce_icrc_verify(f, p)))
		return;
	rmp_set_pmtu(r, server, m);
}

void
rmp_set_pmtu(struct remap *r, uint32_t server, uint32_t pmtu)
{
	if (r->servers[server].pmtu == pmtu)
		return;
	r->servers[server].pmtu = pmtu;
	r->c.pmtu_learned++;
}

/*
 * A READ answered in fewer packets than its span: the path MTU is above
 * the one spans are counted in (a READ of at most the path MTU is one
 * ONLY packet, so the packets do not say which): the next power of two,
 * up to 4096.  A FIRST or MIDDLE packet later says it exactly.
 */
void
rmp_pmtu_too_small(struct remap *r, uint32_t server)
{
	if (r->servers[server].pmtu >= 4096)
		return;
	r->servers[server].pmtu *= 2;
	r->c.pmtu_learned++;
}

/* The MSN its client has seen once PSNs before psn completed: the reverse
 * entry of psn - 1 if it still describes it, else what it will see once
 * all it sent completes. */
static uint32_t
msn_before(const struct remap *r, const struct rmp_conn *rcn, uint32_t psn)
{
	const uint32_t prev = roce_psn_add(psn, ROCE_PSN_MASK);
	const struct rmp_rev *rv = &rcn->rev[prev & r->crev_mask];

	return rv->valid && rv->cpsn == prev ? rv->cmsn : rcn->msn;
}

/*
 * A client of a closed lane: what it sent on the lane from its oldest
 * unanswered PSN on will never be answered (the server's QP is gone or in
 * error), and its PSN space is the lane's, so it cannot move to another.
 * Unasked, a client with no retransmit timer (rxe over the RDMA CM) would
 * wait for ever, one with a timer for its retries.  It is told once, at
 * that PSN, with a remote operational error NAK: its QP goes to error and
 * its application sees the failure and reconnects.  The NAK acknowledges
 * only what was answered to it already.
 */
void
rmp_tell_dead(struct remap *r, struct rmp_lane *l, struct rc_conn *c, struct rmp_conn *rcn,
	      struct remap_emit *emit, uint32_t emit_cap, uint32_t *n_emit)
{
	if (rcn->dead_told || *n_emit >= emit_cap)
		return;
	if (rmp_build_aeth(r, l, c, rcn, rcn->acked,
			   roce_syndrome_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_OP),
			   msn_before(r, rcn, rcn->acked), NULL, &emit[*n_emit]) != 0)
		return;
	(*n_emit)++;
	rcn->dead_told = 1;
	r->c.dead_lane_told++;
}

void
rmp_tell_dead_all(struct remap *r, struct remap_emit *emit, uint32_t emit_cap,
		  uint32_t *n_emit)
{
	for (uint32_t i = 0; i < rc_capacity(r->rc); i++) {
		struct rmp_conn *rcn = &r->conns[i];
		struct rc_conn *c = rc_at(r->rc, i);

		if (c == NULL || rcn->inc != c->incarnation || rcn->dead_told ||
		    rcn->acked == rcn->next ||
		    !(rcn->state == RC_LOST ||
		      (rcn->state == RC_BOUND && !r->lanes[rcn->lane].open)))
			continue;
		if (*n_emit >= emit_cap)
			return;           /* the rest at the next tick */
		rmp_tell_dead(r, &r->lanes[rcn->lane], c, rcn, emit, emit_cap, n_emit);
	}
	r->dead_pending = false;
}

/* Open lane l on connection c at its request p (nothing outstanding). */
static void
lane_open(struct remap *r, struct rmp_lane *l, struct rc_conn *c, const uint8_t *f,
	  const struct roce_pkt *p)
{
	uint16_t server = l->server;
	const uint32_t k = (uint32_t)(l - r->lanes);

	/* a closed lane's clients stay off its next life: their requests
	 * are dropped until they reconnect (rmp_lane_close).  Moved onto
	 * the new owner's QP, a client's later request would be executed
	 * and ACKed while the one lost with the old lane never was: the
	 * client takes that ACK for both (fuzz_remap, regress-lane-reopened) */
	for (uint32_t i = 0; i < rc_capacity(r->rc); i++)
		if (r->conns[i].state == RC_BOUND && r->conns[i].lane == k) {
			r->conns[i].state = RC_LOST;
			r->dead_pending = true;
		}
	memset(l, 0, offsetof(struct rmp_lane, stubs));
	memset(l->stubs, 0, (r->ring_mask + 1) * sizeof(*l->stubs));
	l->server = server;
	l->open = 1;
	l->owner = rc_index(r->rc, c);
	l->owner_inc = c->incarnation;
	l->dom = rc_new_domain(r->rc);
	l->cl_ip = c->cl_ip;
	l->cl_qpn = c->cl_qpn;
	l->srv_qpn = c->srv_qpn;
	memcpy(l->eth, f, 12);
	l->sport = roce_ld16(f + p->l4_off);
	l->start = l->next = l->una = p->psn;
	if (p->ip_version == 4 && (uint32_t)p->bth_off + ROCE_BTH_LEN <= sizeof(l->rtmpl)) {
		l->rtmpl_len = p->bth_off + ROCE_BTH_LEN;
		memcpy(l->rtmpl, f, l->rtmpl_len);
		l->rt_l3 = p->l3_off;
		l->rt_l4 = p->l4_off;
	}
	l->rd_max = rmp_rd_max(r, c);
	r->c.lanes_opened++;
}

/* The lane a new binding to server goes to: an unopened one becomes
 * c's own; otherwise the open lane with the fewest clients. */
static struct rmp_lane *
lane_pick(struct remap *r, int server, bool *opens)
{
	const struct rmp_server *sv = &r->servers[server];
	struct rmp_lane *best = NULL;

	*opens = false;
	for (uint32_t i = 0; i < sv->n_lanes; i++) {
		struct rmp_lane *l = &r->lanes[sv->first_lane + i];

		if (!l->open) {
			if (l->dreq_len)
				continue;   /* its held DREQ is not sent yet */
			*opens = true;
			return l;
		}
		if (best == NULL || l->bound < best->bound)
			best = l;
	}
	return best;
}

bool
rmp_bind(struct remap *r, struct rc_conn *c, struct rmp_conn *rcn, int server,
	 const uint8_t *f, const struct roce_pkt *p, uint64_t now)
{
	struct rmp_lane *l;
	bool opens;

	(void)now;
	if (r->no_bind)
		return false;   /* upgrade drain: the connection stays on its own QP */
	/* a request never sent before (its copy cannot have run on the own
	 * QP), nothing outstanding before it, and the MSN is the answer's to
	 * the PSN just before: what the client expects next */
	if (!c->paired || !rcn->msn_known || roce_psn_diff(p->psn, c->una) != 0 ||
	    roce_psn_add(rcn->msn_psn, 1) != p->psn)
		return false;
	l = lane_pick(r, server, &opens);
	if (l == NULL)
		return false;
	if (opens)
		lane_open(r, l, c, f, p);
	rcn->state = RC_BOUND;
	rcn->lane = (uint32_t)(l - r->lanes);
	rcn->bind_psn = rcn->next = rcn->acked = p->psn;
	memcpy(rcn->mac, f + 6, 6);
	rcn->sport = roce_ld16(f + p->l4_off);
	l->bound++;
	r->c.bound++;
	return true;
}

/*
 * Why drain: a connection binds at a fresh request with nothing
 * outstanding before it (rmp_bind), and a busy one (perftest streaming
 * WRITEs on 4 QPs, a window always open) may never have such a moment:
 * on the rig, with streams keeping their turn on the lane, one of four
 * connections stayed on its own server QP for a whole run.  So such a
 * request is dropped, with every later one, until the server has answered
 * everything before it on the connection's own QP; the connection then
 * binds there and queues on the lane, which asks it (RNR NAK, as any
 * refused client) to resend from that PSN.  Only onto a lane already
 * open (its answers give the template of that NAK), at the start of a
 * message, and once per connection life: it costs the client one window
 * sent again.
 */
bool
rmp_drain_start(struct remap *r, const struct rc_conn *c, struct rmp_conn *rcn,
		int server, const uint8_t *f, const struct roce_pkt *p)
{
	bool opens;
	const struct rmp_lane *l;

	if (r->no_bind || !c->paired || rcn->two_sided || !(p->oi->flags & ROCE_F_START_MSG))
		return false;
	l = lane_pick(r, server, &opens);
	if (l == NULL || opens || l->tmpl_len == 0)
		return false;
	rcn->draining = 1;
	rcn->drain_psn = p->psn;
	rcn->drain_kind = (p->oi->flags & ROCE_F_READ) ? RK_READ :
			  (p->oi->flags & ROCE_F_ATOMIC) ? RK_ATOMIC : RK_ACKABLE;
	memcpy(rcn->mac, f + 6, 6);
	rcn->sport = roce_ld16(f + p->l4_off);
	r->c.drains++;
	return true;
}

struct rmp_lane *
rmp_bind_drained(struct remap *r, struct rc_conn *c, struct rmp_conn *rcn, int server)
{
	struct rmp_lane *l;
	bool opens;

	rcn->draining = 0;
	/* upgrade drain: as if the lane had closed, the client is asked back
	 * to its own QP (the path every abandoned bind already takes) */
	l = r->no_bind ? NULL : lane_pick(r, server, &opens);
	if (l == NULL || opens || l->tmpl_len == 0) {
		/* the lane closed meanwhile: the caller asks the client
		 * to resend to its own QP (remap_resp.c, ask_drained_back) */
		r->c.drain_abandoned++;
		return NULL;
	}
	rcn->state = RC_BOUND;
	rcn->lane = (uint32_t)(l - r->lanes);
	rcn->bind_psn = rcn->next = rcn->acked = rcn->drain_psn;
	l->bound++;
	r->c.bound++;
	rmp_wait(r, l, c, rcn, rcn->drain_kind);
	return l;
}

static void conn_ends(struct remap *r, struct rc_conn *c, uint32_t i, struct rmp_conn *rcn,
		      enum rc_end_why why, uint64_t now);

/* lib/rc ends a life: whatever lane it owned closes, its place on a lane
 * is given back.  Its stubs stay until overwritten; answers to them are
 * dropped (rmp_stub_client finds no live client). */
static void
conn_end(void *ctx, struct rc_conn *c, enum rc_end_why why, uint64_t now)
{
	struct remap *r = ctx;
	uint32_t i = rc_index(r->rc, c);
	struct rmp_conn *rcn = &r->conns[i];
	const uint32_t torn_outer = r->torn_ip[1];

	rmp_forget_told(r);
	/* may end within another server's frame (an eviction): marked apart */
	r->torn_ip[1] = c->srv_ip;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	conn_ends(r, c, i, rcn, why, now);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->torn_ip[1] = torn_outer;
}

static void
conn_ends(struct remap *r, struct rc_conn *c, uint32_t i, struct rmp_conn *rcn,
	  enum rc_end_why why, uint64_t now)
{
	for (uint32_t k = 0; k < r->n_lanes; k++) {
		struct rmp_lane *l = &r->lanes[k];

		if (!l->open || l->owner != i || l->owner_inc != c->incarnation ||
		    rmp_lane_keep(r, l, c, why))
			continue;
		/* its riders go on on one of their own QPs where they can */
		if (rmp_lane_rescue(r, l, now))
			continue;
		rmp_lane_close(r, l);
		if (why == RC_END_NEW_LIFE) {
			l->owner_reborn = 1;
			l->reborn_tsc = now;
		}
	}
	if (rcn->inc != c->incarnation)
		return;
	if (rcn->state == RC_BOUND && rcn->lane != RMP_NONE) {
		struct rmp_lane *l = &r->lanes[rcn->lane];

		if (l->bound)
			l->bound--;
		/* a kept lane's last rider: the server QP may go (remap_cm.c) */
		if (l->kept && l->bound == 0)
			rmp_lane_close(r, l);
		if (l->resv_set && l->resv_conn == i && l->resv_inc == c->incarnation)
			l->resv_set = 0;
		/* its message left half sent: the server QP would take the
		 * next client's packet for an invalid request and fail */
		if (l->msg_open && l->msg_conn == i && l->msg_inc == c->incarnation)
			rmp_lane_close(r, l);
		/* atomics whose answers it never got no longer hold places */
		for (uint32_t k = 0; k <= r->ring_mask; k++)
			if (l->stubs[k].conn == i && l->stubs[k].inc == c->incarnation)
				rmp_release(l, &l->stubs[k]);
		rcn->inc = 0;   /* its stubs are no client's now */
		if (l->unans_set)
			rmp_unans_rescan(r, l, l->unans_first, l->una);
	}
	rcn->inc = 0;
	rcn->state = RC_DIRECT;
}

static void
defaults(struct remap_params *p)
{
	if (p->ring == 0)
		p->ring = 4096;
	if (p->client_ring == 0)
		p->client_ring = 256;
	if (p->pmtu == 0)
		p->pmtu = 4096;
	if (p->responder_resources == 0)
		p->responder_resources = 16;
	if (p->resend_timeout_tsc == 0)
		p->resend_timeout_tsc = 100000;
}

static bool
pow2(uint32_t v)
{
	return v >= 2 && (v & (v - 1)) == 0;
}

int
rmp_params(const struct remap_params *in, struct remap_params *p)
{
	if (in == NULL || in->n_servers == 0 || in->servers == NULL ||
	    (in->rc == NULL && in->state_mem == NULL))
		return -EINVAL;
	*p = *in;
	defaults(p);
	if (!pow2(p->ring) || p->ring > (1u << 22) || !pow2(p->client_ring) ||
	    p->client_ring > (1u << 16) || p->pmtu < 256)
		return -EINVAL;
	for (uint32_t i = 0; i < p->n_servers; i++)
		if (p->servers[i].lanes == 0 || p->servers[i].lanes > REMAP_MAX_LANES)
			return -EINVAL;
	return 0;
}

/* The servers and their lanes from prm, every one held at start. */
void
rmp_set_servers(struct remap *r, const struct remap_params *prm)
{
	r->n_lanes = 0;
	r->n_servers = prm->n_servers;
	for (uint32_t i = 0; i < prm->n_servers; i++) {
		r->servers[i].ip = prm->servers[i].ip;
		r->servers[i].n_lanes = prm->servers[i].lanes;
		r->servers[i].first_lane = (uint16_t)r->n_lanes;
		r->servers[i].keep_conns = prm->servers[i].keep_conns;
		r->servers[i].pmtu = prm->pmtu;
		r->servers[i].held = true;
		r->n_lanes += prm->servers[i].lanes;
	}
}

/* Each lane's stubs and queue, each connection's reverse index, in the
 * arrays r points to. */
void
rmp_wire(struct remap *r)
{
	const uint32_t conns = rc_capacity(r->rc);
	uint32_t k = 0;

	for (uint32_t s = 0; s < r->n_servers; s++)
		for (uint32_t i = 0; i < r->servers[s].n_lanes; i++, k++) {
			r->lanes[k].server = (uint16_t)s;
			r->lanes[k].stubs = &r->stub_mem[(size_t)k * r->prm.ring];
			r->lanes[k].wait = &r->wait_mem[(size_t)k * conns];
		}
	for (uint32_t i = 0; i < conns; i++)
		r->conns[i].rev = &r->rev_mem[(size_t)i * r->prm.client_ring];
}

int
rmp_listen(struct remap *r)
{
	if (rc_listen(r->rc, conn_end, r) != 0)
		return -ENOSPC;
	rc_set_order(r->rc, rmp_order_domains, r);
	return 0;
}

struct remap *
remap_create(const struct remap_params *prm)
{
	struct remap_params p;
	struct remap *r;
	uint32_t conns, n_lanes = 0;
	int rc = rmp_params(prm, &p);

	if (rc == 0 && prm->state_mem != NULL)
		return rmp_create_in_state(&p);
	if (rc != 0 || prm->rc == NULL) {
		errno = rc != 0 ? -rc : EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		goto nomem;
	r->prm = p;
	r->rc = prm->rc;
	r->ring_mask = r->prm.ring - 1;
	r->crev_mask = r->prm.client_ring - 1;
	r->servers = calloc(prm->n_servers, sizeof(*r->servers));
	if (r->servers == NULL)
		goto nomem;
	rmp_set_servers(r, &p);
	n_lanes = r->n_lanes;
	conns = rc_capacity(r->rc);
	r->lanes = calloc(n_lanes, sizeof(*r->lanes));
	r->stub_mem = calloc((size_t)n_lanes * r->prm.ring, sizeof(*r->stub_mem));
	r->conns = calloc(conns, sizeof(*r->conns));
	r->rev_mem = calloc((size_t)conns * r->prm.client_ring, sizeof(*r->rev_mem));
	r->wait_mem = calloc((size_t)n_lanes * conns, sizeof(*r->wait_mem));
	if (!r->lanes || !r->stub_mem || !r->conns || !r->rev_mem || !r->wait_mem)
		goto nomem;
	rmp_wire(r);
	for (uint32_t i = 0; i < conns; i++)
		r->conns[i].lane = RMP_NONE;
	if (rmp_listen(r) != 0) {
		remap_destroy(r);
		errno = ENOSPC;
		return NULL;
	}
	return r;
nomem:
	remap_destroy(r);
	errno = ENOMEM;
	return NULL;
}

void
remap_destroy(struct remap *r)
{
	if (r == NULL)
		return;
	if (r->rc != NULL)
		rc_unlisten(r->rc, r);
	if (r->in_state) {
		/* the block stays for the next process */
		if (r->own_rc)
			rc_destroy(r->rc);
		return;
	}
	free(r->servers);
	free(r->lanes);
	free(r->stub_mem);
	free(r->conns);
	free(r->rev_mem);
	free(r->wait_mem);
	free(r);
}

const struct remap_counters *
remap_counters(const struct remap *r)
{
	return &r->c;
}

void
remap_set_drain(struct remap *r, bool on)
{
	r->no_bind = on;
}

int
remap_lane_info(const struct remap *r, uint32_t server_ip4, unsigned int lane,
		struct remap_lane_info *out)
{
	int s = rmp_server_of(r, server_ip4);
	const struct rmp_lane *l;

	if (s < 0 || lane >= r->servers[s].n_lanes)
		return -1;
	l = &r->lanes[r->servers[s].first_lane + lane];
	memset(out, 0, sizeof(*out));
	out->open = l->open;
	out->cl_ip = l->cl_ip;
	out->cl_qpn = l->cl_qpn;
	out->srv_qpn = l->srv_qpn;
	out->next_psn = l->next;
	out->una = l->una;
	out->bound = l->bound;
	out->rd_outstanding = l->rd_out;
	out->recovering = l->recovering;
	out->kept = l->kept && l->open;
	out->dreq_held = l->dreq_len != 0;
	out->pmtu = r->servers[s].pmtu;
	return 0;
}
