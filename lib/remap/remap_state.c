/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_state.c — remapping in a block of memory that outlives the
 * process (swordd maps it from a file: lib/sword/sword_state.c), and the
 * adoption of what an earlier process left there.
 *
 * Why: a lane is a server QP whose PSN space only swordd knows.  A
 * restart that forgets it cannot let a connection that rode a lane reach
 * its own server QP again (the server would take its PSNs for duplicates:
 * a WRITE acknowledged and never run), so an empty start holds every
 * such connection off until it has timed out (start_holdoff): every
 * remapped client that was running dies.  With the lanes, their stubs,
 * the bindings and the reverse index kept, a restart is a pause: what
 * was on the wire during it is lost, as any loss, and the rules that
 * cover loss (a lane's go-back-N, a client's retransmission) cover it.
 *
 * Which life owns the block: the swordd process that maps it, one
 * worker's remapping, a shape fixed by remap_state_shape (this build's
 * structures, the sizes, the servers and their lanes).  The connections
 * it refers to by slot and incarnation are those of the connection table
 * it was made with: its own (in the block) or the serializer's (in that
 * one's block); a table that was not adopted along with it makes every
 * record in it another life's, and the block is not adopted.
 *
 * A process killed at an arbitrary instruction can leave one frame's (or
 * a tick's, or a connection end's) changes half made.  rmp_torn_begin
 * marks the server whose lanes and connections what follows may change
 * (a connection ending within it is marked apart, conn_end); a lane is
 * one server's, so everything one frame changes belongs to the servers
 * marked.  The adopter gives those servers up: their lanes close, their
 * connections end (the table's listeners hear it) and the start hold-off
 * covers them, as after an empty start.  So does a record that fails its
 * range checks, and a connection that rode a lane and ended unseen (the
 * serializer gave it up for its own torn frame).  Every other server goes
 * on where it stopped.  Every index read from the block is checked before
 * use: a damaged block costs state, never a crash.
 */
#include <errno.h>
#include <string.h>

#include "remap_internal.h"

/* Bump when a structure in the block changes meaning without changing
 * size (a size change changes the shape by itself). */
#define RMP_STATE_LAYOUT 1

#define RS_ALIGN(x) (((x) + 63) & ~(size_t)63)

struct rstate_layout {
	uint32_t conns, n_lanes;
	size_t servers, lanes, stubs, conns_off, rev, wait, rc, rc_len, len;
};

static int
layout(const struct remap_params *p, struct rstate_layout *l)
{
	size_t off;

	memset(l, 0, sizeof(*l));
	if (p->rc != NULL) {
		l->conns = rc_capacity(p->rc);
	} else {
		struct rc_params rp = p->own_rc;

		l->rc_len = rc_state_size(&rp);
		if (l->rc_len == 0)
			return -EINVAL;
		l->conns = rp.max_conns ? rp.max_conns : 1024;   /* rc's default */
	}
	for (uint32_t i = 0; i < p->n_servers; i++)
		l->n_lanes += p->servers[i].lanes;
	off = RS_ALIGN(sizeof(struct remap));
	l->servers = off;
	off += RS_ALIGN((size_t)p->n_servers * sizeof(struct rmp_server));
	l->lanes = off;
	off += RS_ALIGN((size_t)l->n_lanes * sizeof(struct rmp_lane));
	l->stubs = off;
	off += RS_ALIGN((size_t)l->n_lanes * p->ring * sizeof(struct rmp_stub));
	l->conns_off = off;
	off += RS_ALIGN((size_t)l->conns * sizeof(struct rmp_conn));
	l->rev = off;
	off += RS_ALIGN((size_t)l->conns * p->client_ring * sizeof(struct rmp_rev));
	l->wait = off;
	off += RS_ALIGN((size_t)l->n_lanes * l->conns * sizeof(uint32_t));
	l->rc = off;
	off += RS_ALIGN(l->rc_len);
	l->len = off;
	return 0;
}

size_t
remap_state_size(const struct remap_params *prm)
{
	struct remap_params p;
	struct rstate_layout l;
	struct remap_params in;

	if (prm == NULL)
		return 0;
	in = *prm;
	in.state_mem = (void *)1;   /* rmp_params: a block, not a table, is enough */
	if (rmp_params(&in, &p) != 0 || layout(&p, &l) != 0)
		return 0;
	return l.len;
}

uint64_t
remap_state_shape(const struct remap_params *prm)
{
	struct remap_params p, in;
	struct rstate_layout l;
	uint64_t h = RC_SHAPE_SEED;

	if (prm == NULL)
		return 0;
	in = *prm;
	in.state_mem = (void *)1;
	if (rmp_params(&in, &p) != 0 || layout(&p, &l) != 0)
		return 0;
	h = rc_shape_fold(h, RMP_STATE_LAYOUT);
	h = rc_shape_fold(h, sizeof(struct remap));
	h = rc_shape_fold(h, sizeof(struct rmp_server));
	h = rc_shape_fold(h, sizeof(struct rmp_lane));
	h = rc_shape_fold(h, sizeof(struct rmp_stub));
	h = rc_shape_fold(h, sizeof(struct rmp_conn));
	h = rc_shape_fold(h, sizeof(struct rmp_rev));
	h = rc_shape_fold(h, sizeof(struct rc_conn));
	h = rc_shape_fold(h, p.ring);
	h = rc_shape_fold(h, p.client_ring);
	h = rc_shape_fold(h, l.conns);
	h = rc_shape_fold(h, p.rc == NULL);
	for (uint32_t i = 0; i < p.n_servers; i++) {
		h = rc_shape_fold(h, p.servers[i].ip);
		h = rc_shape_fold(h, p.servers[i].lanes);
		h = rc_shape_fold(h, p.servers[i].keep_conns);
	}
	h = rc_shape_fold(h, l.len);
	return h;
}

struct rc_table *
remap_rc(struct remap *r)
{
	return r->rc;
}

void
remap_adopt_info(const struct remap *r, struct remap_adopt_info *ai)
{
	*ai = r->adopted;
}

/* ---- adoption ---- */

static bool
conn_ok(const struct remap *r, uint32_t slot)
{
	return slot < rc_capacity(r->rc);
}

static bool
lane_ok(struct remap *r, struct rmp_lane *l)
{
	const uint32_t conns = rc_capacity(r->rc);

	if (l->tmpl_len > sizeof(l->tmpl) || l->rtmpl_len > sizeof(l->rtmpl) ||
	    l->dreq_len > sizeof(l->dreq) || l->wait_n > conns || l->wait_head >= conns ||
	    (l->rtmpl_len && (l->rt_l3 >= l->rtmpl_len || l->rt_l4 >= l->rtmpl_len)))
		return false;
	if (l->open && ((l->owner != RMP_NONE && !conn_ok(r, l->owner)) ||
			(l->msg_open && !conn_ok(r, l->msg_conn)) ||
			(l->resv_set && !conn_ok(r, l->resv_conn))))
		return false;
	for (uint32_t k = 0; k < l->wait_n; k++)
		if (!conn_ok(r, l->wait[(l->wait_head + k) % conns]))
			return false;
	for (uint32_t k = 0; k <= r->ring_mask; k++)
		if (l->stubs[k].inc != 0 &&
		    (!conn_ok(r, l->stubs[k].conn) || l->stubs[k].kind > RK_ATOMIC))
			return false;
	/* the parsed copy of the answer template points into the previous
	 * process (its opcode table): parsed again */
	if (l->tmpl_len != 0 && roce_parse(l->tmpl, l->tmpl_len, &l->tmpl_p) != ROCE_OK)
		l->tmpl_len = 0;   /* built again from the next answer */
	return true;
}

/* Server s goes on no further: its lanes close with nothing on them, its
 * connections end (the table's other listeners hear it; remapping is not
 * listening yet), and the start hold-off covers it. */
static void
give_up_server(struct remap *r, uint32_t s, uint64_t now)
{
	struct rmp_server *sv = &r->servers[s];
	const uint32_t conns = rc_capacity(r->rc);

	if (sv->given_up)
		return;
	sv->given_up = true;
	sv->held = true;
	r->adopted.servers_given_up++;
	for (uint32_t k = sv->first_lane; k < (uint32_t)sv->first_lane + sv->n_lanes; k++) {
		struct rmp_lane *l = &r->lanes[k];
		struct rmp_stub *stubs = l->stubs;
		uint32_t *wait = l->wait;

		memset(l, 0, sizeof(*l));
		l->server = (uint16_t)s;
		l->stubs = stubs;
		l->wait = wait;
		l->owner = RMP_NONE;
		memset(stubs, 0, (size_t)(r->ring_mask + 1) * sizeof(*stubs));
	}
	for (uint32_t i = 0; i < conns; i++) {
		struct rc_conn *c = rc_at(r->rc, i);
		struct rmp_conn *rcn = &r->conns[i];
		const bool on_lane = rcn->lane < r->n_lanes && r->lanes[rcn->lane].server == s;

		if (on_lane || (c != NULL && c->srv_ip == sv->ip)) {
			memset(rcn, 0, offsetof(struct rmp_conn, rev));
			rcn->lane = RMP_NONE;
		}
		if (c != NULL && c->srv_ip == sv->ip) {
			rc_close(r->rc, c, now);
			r->adopted.conns_given_up++;
		}
	}
}

static void
give_up_ip(struct remap *r, uint32_t ip, uint64_t now)
{
	int s;

	if (ip == 0)
		return;
	if (ip == RMP_TORN_ALL) {
		for (uint32_t i = 0; i < r->n_servers; i++)
			give_up_server(r, i, now);
		return;
	}
	s = rmp_server_of(r, ip);
	if (s >= 0)
		give_up_server(r, (uint32_t)s, now);
}

/* Starting empty on a table an earlier process left: its connections of
 * these servers may have ridden lanes nobody knows now, and one the RDMA
 * CM set up would pass the start hold-off.  They end (its other
 * listeners hear it) and come back as new ones, which the hold-off
 * covers. */
static void
give_up_adopted_conns(struct remap *r, uint64_t now)
{
	for (uint32_t i = 0; i < rc_capacity(r->rc); i++) {
		struct rc_conn *c = rc_at(r->rc, i);

		if (c != NULL && rmp_server_of(r, c->srv_ip) >= 0) {
			rc_close(r->rc, c, now);
			r->adopted.conns_given_up++;
		}
	}
}

static int
adopt(struct remap *r, uint64_t now)
{
	const uint32_t conns = rc_capacity(r->rc);
	uint32_t torn[2] = { r->torn_ip[0], r->torn_ip[1] };

	memset(&r->adopted, 0, sizeof(r->adopted));
	r->adopted.torn = torn[0] != 0 || torn[1] != 0;
	r->torn_ip[0] = r->torn_ip[1] = 0;
	/* a hold-off the previous process was in goes on as it was (its
	 * held servers' connections may have ridden lanes of the one before) */
	for (uint32_t s = 0; s < r->n_servers; s++) {
		r->servers[s].given_up = false;
		if (r->holdoff_over)
			r->servers[s].held = false;
	}
	for (uint32_t k = 0; k < r->n_lanes; k++)
		if (!lane_ok(r, &r->lanes[k]))
			give_up_server(r, r->lanes[k].server, now);
	give_up_ip(r, torn[0], now);
	give_up_ip(r, torn[1], now);
	for (uint32_t i = 0; i < conns; i++) {
		struct rmp_conn *rcn = &r->conns[i];
		const struct rc_conn *c = rc_at(r->rc, i);
		const bool live = c != NULL && rcn->inc != 0 && rcn->inc == c->incarnation;

		if (rcn->state > RC_LOST || (rcn->lane != RMP_NONE && rcn->lane >= r->n_lanes)) {
			/* damaged: whoever it rode with is in doubt */
			if (c != NULL)
				give_up_ip(r, c->srv_ip, now);
			if (rcn->lane != RMP_NONE && rcn->lane < r->n_lanes)
				give_up_server(r, r->lanes[rcn->lane].server, now);
			memset(rcn, 0, offsetof(struct rmp_conn, rev));
			rcn->lane = RMP_NONE;
			continue;
		}
		if (rcn->inc == 0 || live)
			continue;
		/* it ended while nobody listened: on a lane, the lane's server
		 * QP saw PSNs its own QP never will */
		if (rcn->state != RC_DIRECT && rcn->lane != RMP_NONE)
			give_up_server(r, r->lanes[rcn->lane].server, now);
		memset(rcn, 0, offsetof(struct rmp_conn, rev));
		rcn->lane = RMP_NONE;
	}
	/* a lane whose owner ended unseen: its server QP may be gone */
	for (uint32_t k = 0; k < r->n_lanes; k++) {
		struct rmp_lane *l = &r->lanes[k];
		const struct rc_conn *o;

		if (!l->open || l->owner == RMP_NONE)
			continue;
		o = rc_at(r->rc, l->owner);
		if (o == NULL || o->incarnation != l->owner_inc)
			give_up_server(r, l->server, now);
	}
	/* the hold-off of the servers given up runs from now */
	if (r->adopted.servers_given_up) {
		r->started = true;
		r->start_tsc = now;
	}
	r->holdoff_over = true;
	for (uint32_t s = 0; s < r->n_servers; s++)
		if (r->servers[s].held)
			r->holdoff_over = false;
	for (uint32_t k = 0; k < r->n_lanes; k++)
		if (r->lanes[k].open) {
			r->adopted.lanes_open++;
		}
	for (uint32_t i = 0; i < conns; i++)
		if (r->conns[i].inc != 0 && r->conns[i].state == RC_BOUND)
			r->adopted.conns_bound++;
	return 0;
}

struct remap *
rmp_create_in_state(const struct remap_params *prm)
{
	struct rstate_layout l;
	uint8_t *m = prm->state_mem;
	struct remap *r = prm->state_mem;
	bool adopting = prm->state_adopt;
	int rc = layout(prm, &l);

	if (rc == 0 && (prm->state_len < l.len || ((uintptr_t)m & 63)))
		rc = -ENOSPC;
	if (rc == 0 && adopting && prm->rc != NULL && !prm->rc_adopted)
		rc = -ESTALE;   /* its connections are another table's */
	if (rc == 0 && adopting &&
	    (!r->in_state || r->n_servers != prm->n_servers || r->n_lanes != l.n_lanes ||
	     r->ring_mask != prm->ring - 1 || r->crev_mask != prm->client_ring - 1 ||
	     r->own_rc != (prm->rc == NULL)))
		rc = -EBADMSG;
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	if (!adopting)
		memset(r, 0, sizeof(*r));
	r->servers = (struct rmp_server *)(void *)(m + l.servers);
	r->lanes = (struct rmp_lane *)(void *)(m + l.lanes);
	r->stub_mem = (struct rmp_stub *)(void *)(m + l.stubs);
	r->conns = (struct rmp_conn *)(void *)(m + l.conns_off);
	r->rev_mem = (struct rmp_rev *)(void *)(m + l.rev);
	r->wait_mem = (uint32_t *)(void *)(m + l.wait);
	if (adopting) {
		for (uint32_t i = 0; i < prm->n_servers; i++)
			if (r->servers[i].ip != prm->servers[i].ip ||
			    r->servers[i].n_lanes != prm->servers[i].lanes) {
				errno = EBADMSG;
				return NULL;
			}
	}
	/* this process's parameters; nothing points into the caller's */
	r->prm = *prm;
	r->prm.servers = NULL;
	r->prm.state_mem = NULL;
	r->prm.rc = NULL;
	r->in_state = true;
	r->own_rc = prm->rc == NULL;
	r->ring_mask = prm->ring - 1;
	r->crev_mask = prm->client_ring - 1;
	if (prm->rc != NULL) {
		r->rc = prm->rc;
	} else {
		struct rc_params rp = prm->own_rc;

		r->rc = rc_create_at(&rp, m + l.rc, l.len - l.rc, adopting);
		if (r->rc == NULL)
			return NULL;
	}
	memset(&r->c, 0, sizeof(r->c));   /* counters are the process's */
	r->told.set = false;
	r->no_bind = false;
	if (!adopting) {
		memset(m + l.servers, 0, l.rc - l.servers);
		memset(&r->adopted, 0, sizeof(r->adopted));
		rmp_set_servers(r, prm);
		rmp_wire(r);
		for (uint32_t i = 0; i < l.conns; i++)
			r->conns[i].lane = RMP_NONE;
		if (prm->rc != NULL && prm->rc_adopted)
			give_up_adopted_conns(r, prm->state_now);
	} else {
		/* the servers' own settings are this configuration's */
		for (uint32_t i = 0; i < prm->n_servers; i++)
			r->servers[i].keep_conns = prm->servers[i].keep_conns;
		r->n_lanes = l.n_lanes;
		rmp_wire(r);
		adopt(r, prm->state_now);
	}
	if (rmp_listen(r) != 0) {
		if (r->own_rc)
			rc_destroy(r->rc);
		errno = ENOSPC;
		return NULL;
	}
	return r;
}
