/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover.c — the steering tables and the per-frame decisions (see clover.h
 * for what is recognised and why each table exists).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clover.h"

const char *const clover_counter_names[CLOVER_COUNTER_NUM] = {
	[CLOVER_DATA_WRITES] = "clover_data_writes",
	[CLOVER_TAIL_CAS] = "clover_tail_cas",
	[CLOVER_STEERED_WRITES] = "clover_steered_writes",
	[CLOVER_CAS_AT_TAIL] = "clover_cas_at_tail",
	[CLOVER_CAS_UNSTEERED] = "clover_cas_unsteered",
	[CLOVER_CAS_NO_KEY] = "clover_cas_no_key",
	[CLOVER_CAS_RETRANSMIT] = "clover_cas_retransmit",
	[CLOVER_CAS_OK] = "clover_cas_ok",
	[CLOVER_CAS_FAILED] = "clover_cas_failed",
	[CLOVER_STEERED_FAILED] = "clover_steered_failed",
	[CLOVER_VALUE_READS] = "clover_value_reads",
	[CLOVER_STEERED_READS] = "clover_steered_reads",
	[CLOVER_READ_AT_TAIL] = "clover_read_at_tail",
	[CLOVER_READ_MISSES] = "clover_read_misses",
	[CLOVER_READ_TAIL_UNKNOWN] = "clover_read_tail_unknown",
	[CLOVER_COLLISIONS] = "clover_collisions",
	[CLOVER_KEYS_FULL] = "clover_keys_full",
	[CLOVER_CAS_EVICTED] = "clover_cas_evicted",
	[CLOVER_BAD_ICRC_PASSED] = "clover_bad_icrc_passed",
};

#define KEY_PROBES 16      /* linear probing limit in the tail cache */

/* Tail cache entry: one per (region, key). */
struct key_ent {
	uint64_t key;
	uint64_t tail;         /* node address (not the next-pointer address) */
	uint64_t learn_node;   /* node of the one unsteered CAS that succeeded */
	uint64_t window_seq;   /* cas_seq when the unsure window opened */
	uint16_t region;
	uint8_t used;
	uint8_t valid;         /* tail is known */
	uint16_t unsure;       /* unsteered CAS of this key not yet answered */
	uint16_t learned;      /* unsteered successes in the current window */
};

/* Read table slot: a node address and the key it belongs to. */
struct read_ent {
	uint64_t va;
	uint64_t key;
	uint32_t stamp;        /* learn clock when (re)learned: the oldest goes */
	uint16_t region;
	uint8_t used;
};

/* The last data WRITE of a client QP. */
struct qp_ent {
	uint64_t key;
	uint64_t node;
	uint32_t client_ip;
	uint32_t qpn;
	int16_t server;
	uint16_t region;
	uint8_t used;
};

enum cas_kind {
	CAS_FREE = 0,
	CAS_AIMED,             /* swordd aimed it at the known tail */
	CAS_UNSURE,            /* passed while the tail was unknown: counted in unsure */
	CAS_UNTRACKED,         /* no key: only remembered for retransmissions */
};

struct cas_ent {
	uint64_t orig_va;      /* as the client sent it */
	uint64_t target_va;    /* as swordd forwarded it */
	uint64_t compare;
	uint64_t key;
	uint64_t node;         /* the node this CAS links in */
	uint64_t window;       /* CAS_UNSURE: window_seq of the window it counts in */
	uint32_t client_ip;
	uint32_t qpn;
	uint32_t psn;
	int16_t server;
	uint16_t region;
	uint8_t kind;
	uint8_t answered;
};

struct clover {
	struct clover_params prm;
	struct key_ent *keys;
	struct read_ent *reads;
	struct qp_ent *qps;
	struct cas_ent *cas;
	uint32_t key_mask;
	uint32_t n_buckets;    /* read table: n_buckets buckets of read_ways slots */
	uint32_t ways;
	uint32_t learn_clock;
	uint64_t cas_seq;      /* tail CAS processed: the expiry clock */
	bool icrc_known_good;  /* the frame being handled: its caller verified it */
	/* per region slot (swordd's live reload): CLOVER_REGION_LIVE,
	 * _RETIRED (nothing new learned or steered; a retransmission of a
	 * steered CAS still goes where the original went), _DEAD (matches
	 * nothing; the slot is not reused: table entries may still name it) */
	uint8_t rstate[CLOVER_MAX_REGIONS];
};

/* The frame's ICRC is what its sender sent: the caller's verdict if it
 * has one (clover_process_verified), else checked here. */
static inline bool
icrc_good(const struct clover *cl, uint8_t *frame, const struct roce_pkt *p)
{
	return cl->icrc_known_good || roce_icrc_verify(frame, p);
}

static uint32_t
pow2_at_least(uint64_t x)
{
	uint32_t p = 1;

	while (p < x && p < (1u << 30))
		p <<= 1;
	return p;
}

struct clover *
clover_create(const struct clover_params *prm)
{
	struct clover *cl;
	uint64_t n_reads;

	if (prm == NULL || prm->n_regions > CLOVER_MAX_REGIONS || prm->keys == 0 ||
	    prm->read_factor == 0 || prm->read_ways > CLOVER_MAX_READ_WAYS ||
	    prm->qps == 0 || (prm->qps & (prm->qps - 1)) ||
	    prm->cas == 0 || (prm->cas & (prm->cas - 1))) {
		errno = EINVAL;
		return NULL;
	}
	n_reads = (uint64_t)prm->keys * prm->read_factor;
	if (n_reads > (1u << 28)) {
		errno = EINVAL;
		return NULL;
	}
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return NULL;
	cl->prm = *prm;
	cl->key_mask = pow2_at_least(2 * (uint64_t)prm->keys) - 1;
	cl->ways = prm->read_ways ? prm->read_ways : 1;
	cl->n_buckets = (uint32_t)(n_reads / cl->ways);
	if (cl->n_buckets == 0)
		cl->n_buckets = 1;
	cl->keys = calloc((size_t)cl->key_mask + 1, sizeof(*cl->keys));
	cl->reads = calloc((size_t)cl->n_buckets * cl->ways, sizeof(*cl->reads));
	cl->qps = calloc(prm->qps, sizeof(*cl->qps));
	cl->cas = calloc(prm->cas, sizeof(*cl->cas));
	if (cl->keys == NULL || cl->reads == NULL || cl->qps == NULL || cl->cas == NULL) {
		clover_destroy(cl);
		errno = ENOMEM;
		return NULL;
	}
	return cl;
}

void
clover_destroy(struct clover *cl)
{
	if (cl == NULL)
		return;
	free(cl->keys);
	free(cl->reads);
	free(cl->qps);
	free(cl->cas);
	free(cl);
}

/* ---------------------------------------------------------------------- */
/* Tables */

static struct key_ent *
key_find(const struct clover *cl, unsigned int region, uint64_t key, bool insert,
	 uint64_t *ctr)
{
	uint64_t h = clover_fmix64(key ^ ((uint64_t)region << 56));
	unsigned int i;

	for (i = 0; i < KEY_PROBES; i++) {
		struct key_ent *e = &cl->keys[(h + i) & cl->key_mask];

		if (e->used && e->key == key && e->region == region)
			return e;
		if (!e->used) {
			if (!insert)
				return NULL;
			memset(e, 0, sizeof(*e));
			e->used = 1;
			e->key = key;
			e->region = (uint16_t)region;
			return e;
		}
	}
	if (insert)
		ctr[CLOVER_KEYS_FULL]++;
	return NULL;
}

bool
clover_tail(const struct clover *cl, unsigned int region, uint64_t key, uint64_t *tail)
{
	uint64_t dummy[CLOVER_COUNTER_NUM];
	const struct key_ent *e = key_find(cl, region, key, false, dummy);

	if (e == NULL || !e->valid || e->unsure != 0)
		return false;
	*tail = e->tail;
	return true;
}

/* Map a 64-bit hash onto [0, n) without a division (Lemire's fastrange). */
static inline uint32_t
fastrange(uint64_t h, uint32_t n)
{
	return (uint32_t)(((unsigned __int128)h * n) >> 64);
}

/* The bucket of node va: read_ways slots. */
static inline struct read_ent *
read_bucket(const struct clover *cl, uint64_t va)
{
	return &cl->reads[(size_t)fastrange(clover_fmix64(va), cl->n_buckets) * cl->ways];
}

/* The slot holding node va, or NULL. */
static inline struct read_ent *
read_find(const struct clover *cl, uint64_t va)
{
	struct read_ent *b = read_bucket(cl, va);
	uint32_t i;

	for (i = 0; i < cl->ways; i++)
		if (b[i].used && b[i].va == va)
			return &b[i];
	return NULL;
}

bool
clover_read_key(const struct clover *cl, unsigned int region, uint64_t va, uint64_t *key)
{
	const struct read_ent *s = read_find(cl, va);

	if (s == NULL || s->region != region)
		return false;
	*key = s->key;
	return true;
}

static inline uint32_t
mix3(uint32_t a, uint32_t b, uint32_t c)
{
	return (uint32_t)(clover_fmix64(((uint64_t)a << 32 | b) ^ ((uint64_t)c << 17)) >> 32);
}

static inline struct qp_ent *
qp_slot(const struct clover *cl, uint32_t ip, uint32_t qpn, int server)
{
	return &cl->qps[mix3(ip, qpn, (uint32_t)server) & (cl->prm.qps - 1)];
}

/* Responses carry the client's QPN, requests the server's: the PSN (same in
 * both) and the client IP are what request and answer share. */
static inline struct cas_ent *
cas_slot(const struct clover *cl, uint32_t client_ip, uint32_t psn, int server)
{
	return &cl->cas[mix3(client_ip, psn, (uint32_t)server) & (cl->prm.cas - 1)];
}

/* Remember that node va holds key (collisions overwrite). */
static void
read_learn(struct clover *cl, uint64_t va, uint64_t key, unsigned int region,
	   uint64_t *ctr)
{
	struct read_ent *b = read_bucket(cl, va), *s = NULL;
	uint32_t i;

	/* the same node again, else a free slot, else the oldest (with one
	 * way: the slot, as the paper's table) */
	for (i = 0; i < cl->ways; i++) {
		if (b[i].used && b[i].va == va) {
			s = &b[i];
			break;
		}
		if (s == NULL || (s->used && (!b[i].used || (int32_t)(b[i].stamp - s->stamp) < 0)))
			s = &b[i];
	}
	if (s->used && s->va != va)
		ctr[CLOVER_COLLISIONS]++;
	s->stamp = ++cl->learn_clock;
	s->used = 1;
	s->va = va;
	s->key = key;
	s->region = (uint16_t)region;
}

static inline uint64_t
key_of_value(const struct clover_region *r, const uint8_t *val)
{
	uint64_t key = 0;
	unsigned int i;

	for (i = 0; i < r->key_width; i++)
		key |= (uint64_t)val[r->key_offset + i] << (8 * i);
	return key;
}

/* Which region a (server, rkey, va) falls in; -1 if none. */
static inline int
region_of(const struct clover *cl, int server, uint32_t rkey, uint64_t va)
{
	unsigned int i;

	for (i = 0; i < cl->prm.n_regions; i++) {
		const struct clover_region *r = &cl->prm.regions[i];

		if (cl->rstate[i] == CLOVER_REGION_DEAD)
			continue;
		if (r->server == server && (r->rkey_any || r->rkey == rkey) &&
		    va >= r->base && va <= r->last)
			return (int)i;
	}
	return -1;
}

/* An unsure window closes: the tail is known again only if exactly one of
 * the CAS passed blind succeeded (its node is then the tail). */
static void
unsure_done(struct key_ent *e)
{
	if (e->unsure > 0)
		e->unsure--;
	if (e->unsure == 0) {
		if (e->learned == 1) {
			e->tail = e->learn_node;
			e->valid = 1;
		}
		e->learned = 0;
	}
}

/* A CAS record is overwritten before its answer: assume the worst. */
static void
cas_forget(struct clover *cl, struct cas_ent *c, uint64_t *ctr)
{
	struct key_ent *e;

	if (c->kind == CAS_FREE || c->answered)
		return;
	ctr[CLOVER_CAS_EVICTED]++;
	if (c->kind != CAS_UNSURE)
		return;
	e = key_find(cl, c->region, c->key, false, ctr);
	if (e != NULL && e->window_seq == c->window) {
		e->learned = 2;        /* the outcome is unknown: stay unknown */
		unsure_done(e);
	}
}

/* ---------------------------------------------------------------------- */
/* Rewriting */

static inline void
set_va(void *hdr, uint64_t va)
{
	/* va is the first field of both RETH and AtomicETH */
	rte_be64_t be = rte_cpu_to_be_64(va);

	memcpy(hdr, &be, sizeof(be));
}

/* ---------------------------------------------------------------------- */
/* Requests */

static void
on_data_write(struct clover *cl, uint8_t *frame, const struct roce_pkt *p, int server,
	      uint64_t *ctr)
{
	const struct roce_reth *reth = roce_hdr(frame, p, ROCE_HDR_RETH);
	uint64_t va = roce_ld64(&reth->va);
	const struct clover_region *r;
	const uint8_t *val = frame + p->payload_off;
	struct qp_ent *q;
	uint64_t key;
	int ri;

	ri = region_of(cl, server, roce_ld32(&reth->rkey), va);
	if (ri < 0 || cl->rstate[ri] != CLOVER_REGION_LIVE)
		return;
	r = &cl->prm.regions[ri];
	if (roce_ld32(&reth->dma_len) < r->write_min ||
	    (uint32_t)p->payload_len - p->pad < r->key_offset + r->key_width)
		return;
	/* a corrupted key would mislead the CAS and READs that follow */
	if (!icrc_good(cl, frame, p)) {
		ctr[CLOVER_BAD_ICRC_PASSED]++;
		return;
	}
	key = key_of_value(r, val);
	ctr[CLOVER_DATA_WRITES]++;

	q = qp_slot(cl, p->src_ip4, p->qpn, server);
	q->used = 1;
	q->client_ip = p->src_ip4;
	q->qpn = p->qpn;
	q->server = (int16_t)server;
	q->region = (uint16_t)ri;
	q->key = key;
	q->node = va;

	if (cl->prm.read_steering)
		read_learn(cl, va, key, (unsigned int)ri, ctr);
}

static bool
on_tail_cas(struct clover *cl, uint8_t *frame, const struct roce_pkt *p, int server,
	    uint64_t *ctr)
{
	struct roce_atomic_eth *ae = roce_hdr(frame, p, ROCE_HDR_ATOMIC_ETH);
	uint64_t va = roce_ld64(&ae->va), node, target;
	const struct clover_region *r;
	const struct qp_ent *q;
	const struct read_ent *s;
	struct key_ent *e;
	struct cas_ent *c;
	int ri;

	ri = region_of(cl, server, roce_ld32(&ae->rkey), va);
	if (ri < 0)
		return false;
	r = &cl->prm.regions[ri];
	if (va - r->base < r->next_offset)
		return false;
	node = va - r->next_offset;
	if (!icrc_good(cl, frame, p)) {
		ctr[CLOVER_BAD_ICRC_PASSED]++;
		return false;
	}
	ctr[CLOVER_TAIL_CAS]++;
	cl->cas_seq++;

	c = cas_slot(cl, p->src_ip4, p->psn, server);
	if (c->kind != CAS_FREE && c->client_ip == p->src_ip4 && c->psn == p->psn &&
	    c->server == server && c->qpn == p->qpn && c->orig_va == va) {
		/* a retransmission: the server replays the first execution's
		 * answer, so it must see the same request */
		ctr[CLOVER_CAS_RETRANSMIT]++;
		if (c->target_va == va)
			return false;
		set_va(ae, c->target_va);
		roce_resign(frame, p);
		return true;
	}
	if (cl->rstate[ri] != CLOVER_REGION_LIVE)
		return false;   /* retired: nothing new recorded or steered */
	cas_forget(cl, c, ctr);
	memset(c, 0, sizeof(*c));
	c->client_ip = p->src_ip4;
	c->qpn = p->qpn;
	c->psn = p->psn;
	c->server = (int16_t)server;
	c->orig_va = va;
	c->target_va = va;
	c->compare = roce_ld64(&ae->compare);
	c->kind = CAS_UNTRACKED;

	/* The key: the node this QP just wrote; the target must not be known
	 * as another key's node. */
	q = qp_slot(cl, p->src_ip4, p->qpn, server);
	s = read_find(cl, node);
	if (!q->used || q->client_ip != p->src_ip4 || q->qpn != p->qpn ||
	    q->server != server || q->region != ri ||
	    (s != NULL && (s->key != q->key || s->region != ri))) {
		ctr[CLOVER_CAS_NO_KEY]++;
		return false;
	}
	e = key_find(cl, (unsigned int)ri, q->key, true, ctr);
	if (e == NULL)
		return false;
	c->key = q->key;
	c->node = q->node;
	c->region = (uint16_t)ri;

	if (e->unsure != 0 && cl->cas_seq - e->window_seq > cl->prm.cas) {
		/* answers that never came (client gone): give up on them; if
		 * one comes after all, it belongs to no window (cas_ent.window) */
		e->unsure = 0;
		e->learned = 0;
	}
	/* Never aim a node's CAS at itself (a loop in the chain). */
	if (e->valid && e->unsure == 0 && e->tail != q->node) {
		target = e->tail + r->next_offset;
		if (target == va || cl->prm.write_steering) {
			c->kind = CAS_AIMED;
			c->target_va = target;
			/* The tail being superseded is what every client that
			 * touched the key lately holds as its cursor and will
			 * READ next: relearn it now, so that it is the newest
			 * entry of its bucket (or takes its slot back from a
			 * collision) when those READs come. */
			if (cl->prm.read_steering)
				read_learn(cl, e->tail, e->key, (unsigned int)ri, ctr);
			e->tail = q->node;     /* what the server will hold after it */
			if (target == va) {
				ctr[CLOVER_CAS_AT_TAIL]++;
				return false;
			}
			set_va(ae, target);
			roce_resign(frame, p);
			ctr[CLOVER_STEERED_WRITES]++;
			return true;
		}
	}
	/* Blind: it may or may not move the tail. */
	ctr[CLOVER_CAS_UNSTEERED]++;
	c->kind = CAS_UNSURE;
	if (e->unsure == 0) {
		e->window_seq = cl->cas_seq;
		e->learned = 0;
	}
	c->window = e->window_seq;
	e->unsure++;
	e->valid = 0;
	return false;
}

static bool
on_value_read(struct clover *cl, uint8_t *frame, const struct roce_pkt *p, int server,
	      uint64_t *ctr)
{
	struct roce_reth *reth = roce_hdr(frame, p, ROCE_HDR_RETH);
	uint64_t va = roce_ld64(&reth->va);
	const struct read_ent *s;
	const struct key_ent *e;
	int ri;

	ri = region_of(cl, server, roce_ld32(&reth->rkey), va);
	if (ri < 0 || cl->rstate[ri] != CLOVER_REGION_LIVE ||
	    roce_ld32(&reth->dma_len) < cl->prm.regions[ri].read_min)
		return false;
	ctr[CLOVER_VALUE_READS]++;
	if (!cl->prm.read_steering)
		return false;
	s = read_find(cl, va);
	if (s == NULL || s->region != ri) {
		ctr[CLOVER_READ_MISSES]++;
		return false;
	}
	e = key_find(cl, (unsigned int)ri, s->key, false, ctr);
	if (e == NULL || !e->valid || e->unsure != 0) {
		ctr[CLOVER_READ_TAIL_UNKNOWN]++;
		return false;
	}
	if (e->tail == va) {
		ctr[CLOVER_READ_AT_TAIL]++;
		return false;
	}
	if (!icrc_good(cl, frame, p)) {
		ctr[CLOVER_BAD_ICRC_PASSED]++;
		return false;
	}
	set_va(reth, e->tail);
	roce_resign(frame, p);
	ctr[CLOVER_STEERED_READS]++;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Answers */

static void
on_atomic_ack(struct clover *cl, uint8_t *frame, const struct roce_pkt *p, int server,
	      uint64_t *ctr)
{
	const struct roce_atomic_ack_eth *aa = roce_hdr(frame, p, ROCE_HDR_ATOMIC_ACK_ETH);
	struct cas_ent *c = cas_slot(cl, p->dst_ip4, p->psn, server);
	struct key_ent *e;
	bool ok;

	if (c->kind == CAS_FREE || c->answered || c->client_ip != p->dst_ip4 ||
	    c->psn != p->psn || c->server != server)
		return;
	if (!icrc_good(cl, frame, p)) {
		/* the client drops it and retransmits: learn from the replay */
		ctr[CLOVER_BAD_ICRC_PASSED]++;
		return;
	}
	c->answered = 1;
	if (c->kind == CAS_UNTRACKED)
		return;
	ok = roce_ld64(&aa->orig) == c->compare;
	ctr[ok ? CLOVER_CAS_OK : CLOVER_CAS_FAILED]++;
	e = key_find(cl, c->region, c->key, false, ctr);
	if (e == NULL)
		return;
	if (c->kind == CAS_AIMED) {
		if (!ok) {
			/* memory changed behind our back: forget the tail */
			ctr[CLOVER_STEERED_FAILED]++;
			e->valid = 0;
		}
		return;
	}
	/* CAS_UNSURE.  The answer of a CAS whose window was given up on
	 * (on_tail_cas: answers that never came) is not one of the current
	 * window's: counting it would close that window while its own blind
	 * CAS are still unanswered, and declare a tail they may move. */
	if (e->window_seq != c->window)
		return;
	if (ok) {
		e->learned++;
		e->learn_node = c->node;
	}
	unsure_done(e);
}

/* ---------------------------------------------------------------------- */

static bool
process(struct clover *cl, uint8_t *frame, const struct roce_pkt *p,
	int server, bool to_server, uint64_t *ctr)
{
	if (p->ip_version != 4)
		return false;
	if (!to_server) {
		if (p->opcode == ROCE_RC_ATOMIC_ACKNOWLEDGE)
			on_atomic_ack(cl, frame, p, server, ctr);
		return false;
	}
	switch (p->opcode) {
	case ROCE_RC_WRITE_FIRST:
	case ROCE_RC_WRITE_ONLY:
	case ROCE_RC_WRITE_ONLY_IMM:
		on_data_write(cl, frame, p, server, ctr);
		return false;
	case ROCE_RC_COMPARE_SWAP:
		return on_tail_cas(cl, frame, p, server, ctr);
	case ROCE_RC_READ_REQUEST:
		return on_value_read(cl, frame, p, server, ctr);
	default:
		return false;
	}
}

bool
clover_process(struct clover *cl, uint8_t *frame, const struct roce_pkt *p,
	       int server, bool to_server, uint64_t *ctr)
{
	return clover_process_verified(cl, frame, p, server, to_server, false, ctr);
}

bool
clover_process_verified(struct clover *cl, uint8_t *frame, const struct roce_pkt *p,
			int server, bool to_server, bool icrc_ok, uint64_t *ctr)
{
	bool changed;

	cl->icrc_known_good = icrc_ok;
	changed = process(cl, frame, p, server, to_server, ctr);
	cl->icrc_known_good = false;
	return changed;
}

/* ---------------------------------------------------------------------- */
/* Regions at run time (swordd's live reload; clover.h) */

static bool
same_region(const struct clover_region *a, const struct clover_region *b)
{
	return a->server == b->server && a->rkey_any == b->rkey_any &&
	       (a->rkey_any || a->rkey == b->rkey) && a->base == b->base &&
	       a->last == b->last && a->write_min == b->write_min &&
	       a->key_offset == b->key_offset && a->key_width == b->key_width &&
	       a->next_offset == b->next_offset && a->read_min == b->read_min;
}

int
clover_region_find(const struct clover *cl, const struct clover_region *r)
{
	for (unsigned int i = 0; i < cl->prm.n_regions; i++)
		if (cl->rstate[i] != CLOVER_REGION_DEAD && same_region(&cl->prm.regions[i], r))
			return (int)i;
	return -1;
}

unsigned int
clover_region_room(const struct clover *cl)
{
	return CLOVER_MAX_REGIONS - cl->prm.n_regions;
}

int
clover_region_add(struct clover *cl, const struct clover_region *r)
{
	unsigned int i = cl->prm.n_regions;

	if (r->key_width < 1 || r->key_width > 8)
		return -EINVAL;
	if (i >= CLOVER_MAX_REGIONS)
		return -ENOSPC;
	cl->prm.regions[i] = *r;
	cl->rstate[i] = CLOVER_REGION_LIVE;
	cl->prm.n_regions++;
	return (int)i;
}

int
clover_region_state(const struct clover *cl, unsigned int slot,
		    const struct clover_region **r)
{
	if (slot >= cl->prm.n_regions)
		return -1;
	*r = &cl->prm.regions[slot];
	return cl->rstate[slot];
}

void
clover_region_retire(struct clover *cl, unsigned int slot)
{
	if (slot < cl->prm.n_regions && cl->rstate[slot] == CLOVER_REGION_LIVE)
		cl->rstate[slot] = CLOVER_REGION_RETIRED;
}

void
clover_region_remove(struct clover *cl, unsigned int slot)
{
	if (slot < cl->prm.n_regions)
		cl->rstate[slot] = CLOVER_REGION_DEAD;
}

uint64_t
clover_region_owed(const struct clover *cl, unsigned int slot)
{
	uint64_t owed = 0;

	/* steered tail CAS not answered yet: a retransmission must be
	 * steered where the original went, which only a kept region does */
	for (uint32_t i = 0; i < cl->prm.cas; i++) {
		const struct cas_ent *c = &cl->cas[i];

		if (c->kind == CAS_AIMED && !c->answered && c->region == slot &&
		    c->target_va != c->orig_va)
			owed++;
	}
	return owed;
}
