/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim.c — the closed loop of sim.h and its workloads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "roce.h"
#include "sim.h"
#include "ser_internal.h"

#define TAG(id) ((uint64_t)(id) + 1)

uint64_t
sim_rand(struct sim *s)
{
	/* splitmix64: deterministic per seed */
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
sim_error(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->errors < 8) {
		va_start(ap, fmt);
		vsnprintf(s->err[s->errors], sizeof(s->err[0]), fmt, ap);
		va_end(ap);
	}
	s->errors++;
}

uint32_t
sim_client_ip(const struct sim *s, int i)
{
	return s->opts.ips ? SIM_CLIENT_IP(i % s->opts.ips) : SIM_CLIENT_IP(i);
}

/* The client a response is for: its IP and its QPN. */
static int
client_of(const struct sim *s, uint32_t ip, uint32_t qpn)
{
	for (int i = 0; i < s->ncl; i++)
		if (sim_client_ip(s, i) == ip && SIM_CL_QPN(i) == qpn)
			return i;
	return -1;
}

/* The client a server QP belongs to. */
static int
client_of_srv_qp(const struct sim *s, uint32_t srv_qpn)
{
	int i = (int)srv_qpn - (int)SIM_SRV_QPN(0);

	return i >= 0 && i < s->ncl ? i : -1;
}

/* With remapping, the client whose request a lane carried at psn. */
static int
sim_lane_client(const struct sim *s, uint32_t qpn, uint32_t psn)
{
	for (int k = 0; s->remap && k < REMAP_MAX_LANES; k++) {
		const struct sim_lane_log *ll = &s->lane_log[k];

		if (ll->started && ll->qpn == qpn && ll->at[psn % SIM_ANS].set &&
		    ll->at[psn % SIM_ANS].psn == psn)
			return ll->at[psn % SIM_ANS].cl;
	}
	return -1;
}

/* I4 at the memory: what lands on a lock word must fit the protocol. */
static void
on_exec(void *ctx, struct rm_responder *r, uint32_t client_ip, uint32_t qpn,
	uint8_t opcode, uint64_t va, uint64_t old, uint64_t nv)
{
	struct sim *s = ctx;
	int id = sim_lane_client(s, qpn, r->cur_psn);

	(void)client_ip;
	if (id < 0)
		id = client_of_srv_qp(s, qpn);
	if (va < SIM_LOCKS || va >= SIM_LOCKS + SIM_LOCK_LEN)
		return;
	if (s->mode == SIM_MODE_SHERMAN && opcode == ROCE_RC_WRITE_ONLY) {
		if (nv == 0 && old != TAG(id))
			sim_error(s, "I4: release by client %d landed on %#llx",
				  id, (unsigned long long)old);
		else if (nv != 0 && (nv != TAG(id) || old != 0))
			sim_error(s, "I4: write %#llx by client %d landed on %#llx",
				  (unsigned long long)nv, id,
				  (unsigned long long)old);
	}
	if (s->mode == SIM_MODE_MCAS && opcode == ROCE_RC_WRITE_ONLY) {
		uint64_t bit = 1ull << ((id % 2) * 7);

		if ((old & ~bit) != (nv & ~bit))
			sim_error(s, "I4: client %d bit-lock write %#llx over %#llx "
				  "changed other bits", id, (unsigned long long)nv,
				  (unsigned long long)old);
		if ((nv & bit) && (old & bit))
			sim_error(s, "I4: client %d bit grant landed on a set bit",
				  id);
		if (!(nv & bit) && !(old & bit))
			sim_error(s, "I4: client %d bit release landed on a clear bit",
				  id);
	}
}

int
sim_init(struct sim *s, int ncl, bool with_ser, bool coalesce,
	 const char *pcap_name)
{
	return sim_init_ex(s, ncl, with_ser, coalesce, pcap_name, NULL);
}

int
sim_init_ex(struct sim *s, int ncl, bool with_ser, bool coalesce,
	    const char *pcap_name, const struct sim_opts *o)
{
	const char *dir = getenv("SER_OUT_DIR");

	memset(s, 0, sizeof(*s));
	if (o)
		s->opts = *o;
	s->ncl = ncl;
	s->rng = 1;
	for (int i = 0; i < (int)RTE_DIM(s->holder); i++)
		s->holder[i] = -1;
	for (int i = 0; i < 64; i++)
		s->bit_holder[i] = -1;
	if (rm_responder_init(&s->srv, SIM_SERVER_IP, SIM_BASE, SIM_MEM, SIM_RKEY,
			      coalesce))
		return -1;
	s->srv.on_exec = on_exec;
	s->srv.ctx = s;
	for (int i = 0; i < Q_N; i++)
		if (rm_queue_init(&s->q[i], s->opts.queue_cap ? s->opts.queue_cap : 4096))
			return -1;
	for (int i = 0; i < ncl; i++) {
		/* start near the top of the PSN space: wraparound is tested */
		uint32_t start = s->opts.fixed_psn ? s->opts.start_psn & ROCE_PSN_MASK :
				 (0xfffff0u + (uint32_t)i * 3000u) & ROCE_PSN_MASK;
		uint32_t ip = sim_client_ip(s, i);
		uint8_t mac_lo = (uint8_t)(0x10 + (s->opts.ips ? i % s->opts.ips : i));
		struct rm_addr up = {
			.src_mac = { 0x02, 0, 0, 0, 0, mac_lo },
			.src_ip = ip, .dst_ip = SIM_SERVER_IP,
			.dest_qpn = SIM_SRV_QPN(i),
		};
		struct rm_addr down = {
			.dst_mac = { 0x02, 0, 0, 0, 0, mac_lo },
			.src_ip = SIM_SERVER_IP, .dst_ip = ip,
			.dest_qpn = SIM_CL_QPN(i),
		};

		s->start[i] = start;

		memcpy(up.dst_mac, s->srv.mac, 6);
		memcpy(down.src_mac, s->srv.mac, 6);
		rm_client_init(&s->cl[i], i, &up, 0x200u + (uint32_t)i, SIM_RKEY, start);
		s->cl[i].ctx = s;
		if (!rm_responder_add_qp(&s->srv, 0x100u + (uint32_t)i, &down, start))
			return -1;
	}
	if (s->opts.lanes) {
		s->rc = rc_create(&(struct rc_params){ .max_conns = 64, .history = 256 });
		if (s->rc == NULL)
			return -1;
	}
	if (with_ser) {
		s->region = (struct ser_region){ .server_ip4 = SIM_SERVER_IP,
			.rkey = SIM_RKEY, .base = SIM_LOCKS, .len = SIM_LOCK_LEN };
		s->prm = (struct ser_params){ .regions = &s->region, .n_regions = 1,
			.max_conns = s->opts.max_conns ? s->opts.max_conns : 64,
			.ring_size = s->opts.ring_size ? s->opts.ring_size : 256,
			.max_refusals = 16, .rc = s->rc,
			/* the model's QPs are set up out of band: their
			 * atomics decided here too (swordd's [atomic]
			 * out_of_band = on); a test that re-creates a QP
			 * with its QPN says which (test_conn
			 * t_oob_new_life_runs) */
			.out_of_band = !s->opts.oob_default,
			/* as swordd sets it with remapping on (ser_fn.c) */
			.no_poke = s->opts.lanes != 0 };
		s->ser = ser_create(&s->prm);
		if (s->ser == NULL)
			return -1;
	}
	if (s->opts.lanes) {
		s->rsrv = (struct remap_server){ .ip = SIM_SERVER_IP,
			.lanes = s->opts.lanes, .keep_conns = !with_ser };
		s->remap = remap_create(&(struct remap_params){ .servers = &s->rsrv,
			.n_servers = 1, .rc = s->rc, .ring = 1024, .client_ring = 256,
			.responder_resources = s->opts.responder_resources,
			.stream_quiet_tsc = s->opts.stream_quiet,
			.out_of_band = !s->opts.cm_only });
		if (s->remap == NULL)
			return -1;
	}
	if (pcap_name) {
		snprintf(s->pcap_in, sizeof(s->pcap_in), "%s/%s-in.pcap",
			 dir ? dir : ".", pcap_name);
		snprintf(s->pcap_out, sizeof(s->pcap_out), "%s/%s-out.pcap",
			 dir ? dir : ".", pcap_name);
		s->pc = pcap_open_dead(DLT_EN10MB, 65535);
		s->pd_in = pcap_dump_open(s->pc, s->pcap_in);
		s->pd_out = pcap_dump_open(s->pc, s->pcap_out);
		if (!s->pc || !s->pd_in || !s->pd_out)
			return -1;
	}
	return 0;
}

int
sim_reconfigure(struct sim *s)
{
	ser_destroy(s->ser);
	s->prm.regions = &s->region;
	s->ser = ser_create(&s->prm);
	return s->ser ? 0 : -1;
}

void
sim_free(struct sim *s)
{
	if (s->pd_in)
		pcap_dump_close(s->pd_in);
	if (s->pd_out)
		pcap_dump_close(s->pd_out);
	if (s->pc)
		pcap_close(s->pc);
	s->pd_in = s->pd_out = NULL;
	s->pc = NULL;
	ser_destroy(s->ser);
	s->ser = NULL;
	remap_destroy(s->remap);
	s->remap = NULL;
	rc_destroy(s->rc);
	s->rc = NULL;
	rm_responder_free(&s->srv);
	for (int i = 0; i < Q_N; i++)
		rm_queue_free(&s->q[i]);
}

static void
dump(struct sim *s, pcap_dumper_t *d, const uint8_t *buf, uint32_t len)
{
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	if (d == NULL)
		return;
	h.ts.tv_sec = (time_t)(s->now / 1000000);
	h.ts.tv_usec = (suseconds_t)(s->now % 1000000);
	pcap_dump((u_char *)d, &h, buf);
}

static void
out_frame(struct sim *s, int q, const uint8_t *buf, uint32_t len, bool bad_ok)
{
	if (s->pd_out) {
		dump(s, s->pd_out, buf, len);
		s->n_out++;
		if (bad_ok) {
			size_t l = strlen(s->allow_bad);

			if (l + 16 < sizeof(s->allow_bad))
				snprintf(s->allow_bad + l, sizeof(s->allow_bad) - l,
					 "%s%u", l ? "," : "", s->n_out);
		}
	}
	rm_queue_push(&s->q[q], buf, len);
}

/* I6: a client waiting on a PSN always gets the same ATOMIC ACK value
 * for it.  (An answer to a PSN the client has completed is a duplicate
 * response it discards: a stale copy of an old request, which swordd may
 * answer afresh, ser_word.c S8.) */
static void
record_answer(struct sim *s, const uint8_t *buf, uint32_t len)
{
	uint8_t f[RM_FRAME_MAX];
	struct roce_pkt p;
	uint64_t orig;
	int id;

	memcpy(f, buf, len);
	if (roce_parse(f, len, &p) != ROCE_OK ||
	    p.opcode != ROCE_RC_ATOMIC_ACKNOWLEDGE)
		return;
	id = client_of(s, p.dst_ip4, p.qpn);
	if (id < 0 || s->cl[id].ops[p.psn % RM_WIN].psn != p.psn ||
	    s->cl[id].ops[p.psn % RM_WIN].state != 1)
		return;
	memcpy(&orig, f + p.bth_off + 16, 8);
	orig = rte_be_to_cpu_64(orig);
	if (s->ans[id][p.psn % SIM_ANS].set && s->ans[id][p.psn % SIM_ANS].psn == p.psn) {
		if (s->ans[id][p.psn % SIM_ANS].orig != orig)
			sim_error(s, "I6: client %d PSN %u answered %#llx then %#llx",
				  id, p.psn,
				  (unsigned long long)s->ans[id][p.psn % SIM_ANS].orig,
				  (unsigned long long)orig);
		return;
	}
	s->ans[id][p.psn % SIM_ANS].set = true;
	s->ans[id][p.psn % SIM_ANS].psn = p.psn;
	s->ans[id][p.psn % SIM_ANS].orig = orig;
}

/* A client-view response leaves swordd: through the serializer (when it
 * runs), then to the clients. */
static void
to_clients(struct sim *s, uint8_t *buf, uint32_t *len)
{
	struct roce_pkt p;
	enum ser_verdict v = SER_FORWARD;
	struct ser_emit emit[32];
	const struct ser_emit *after = NULL;
	uint32_t n_emit = 0;

	if (s->ser && roce_parse(buf, *len, &p) == ROCE_OK) {
		v = ser_on_response(s->ser, buf, len, RM_FRAME_MAX, &p, s->now, emit,
				    s->emit_cap ? s->emit_cap : RTE_DIM(emit), &n_emit);
		after = ser_after(s->ser);
	}
	for (uint32_t i = 0; i < n_emit; i++) {
		record_answer(s, emit[i].buf, emit[i].len);
		out_frame(s, Q_S2C, emit[i].buf, emit[i].len, false);
	}
	if (v != SER_DROP) {
		record_answer(s, buf, *len);
		out_frame(s, Q_S2C, buf, *len, false);
	}
	/* a client asked to resend what the serializer dropped, behind the
	 * answer to the PSN before it */
	if (after != NULL) {
		s->asked_back++;
		out_frame(s, Q_S2C, after->buf, after->len, false);
	}
}

static void check_lane(struct sim *s, const uint8_t *buf, const struct roce_pkt *p,
		       int cl, uint32_t cpsn);

/* Remapping's created frames: those to leave before the frame of the
 * call (after: those to leave after it). */
static void
remap_emitted(struct sim *s, struct remap_emit *e, uint32_t n, bool after)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t buf[RM_FRAME_MAX];
		uint32_t len = e[i].len;
		struct roce_pkt p;

		if (e[i].after != after)
			continue;
		memcpy(buf, e[i].buf, len);
		if (!e[i].to_server) {
			to_clients(s, buf, &len);
			continue;
		}
		/* swordd's own no-op WRITE filling a lane PSN */
		if (roce_parse(buf, len, &p) != ROCE_OK || p.opcode != ROCE_RC_WRITE_ONLY ||
		    roce_ld32(buf + p.bth_off + ROCE_BTH_LEN + 12) != 0)
			sim_error(s, "remap emitted a request that is not a zero-length WRITE");
		else
			check_lane(s, buf, &p, -1, 0);
		out_frame(s, Q_S2M, buf, len, false);
	}
}

/* I2 on a lane, from what swordd sent: contiguous lane PSNs, and a PSN
 * sent again only for the same client's same PSN (a retransmission). */
static void
check_lane(struct sim *s, const uint8_t *buf, const struct roce_pkt *p, int cl,
	   uint32_t cpsn)
{
	struct remap_lane_info li;
	struct sim_lane_log *ll = NULL;
	uint32_t span;

	for (unsigned k = 0; k < s->opts.lanes; k++)
		if (remap_lane_info(s->remap, SIM_SERVER_IP, k, &li) == 0 && li.open &&
		    li.srv_qpn == p->qpn)
			ll = &s->lane_log[k];
	if (ll == NULL) {
		sim_error(s, "I2: a remapped request to QP %#x, not a lane", p->qpn);
		return;
	}
	s->lane_frames++;
	if (!ll->started || ll->qpn != p->qpn) {
		memset(ll, 0, sizeof(*ll));
		ll->started = true;
		ll->qpn = p->qpn;
		ll->next = p->psn;
	}
	span = roce_req_psns(buf, p, 4096);
	if (ll->at[p->psn % SIM_ANS].set && ll->at[p->psn % SIM_ANS].psn == p->psn) {
		/* a filler replaces a request the server discarded (the lane
		 * recovers from it, nobody will send it again) */
		if (cl < 0) {
			ll->at[p->psn % SIM_ANS].cl = -1;
			return;
		}
		if (ll->at[p->psn % SIM_ANS].cl != cl || ll->at[p->psn % SIM_ANS].cpsn != cpsn)
			sim_error(s, "I2: lane %#x PSN %u sent for client %d PSN %u, "
				  "then for client %d PSN %u", p->qpn, p->psn,
				  ll->at[p->psn % SIM_ANS].cl, ll->at[p->psn % SIM_ANS].cpsn,
				  cl, cpsn);
		return;
	}
	if (p->psn != ll->next)
		sim_error(s, "I2: lane %#x PSN %u sent, %u expected (gap)", p->qpn, p->psn,
			  ll->next);
	for (uint32_t k = 0; k < span; k++) {
		uint32_t q = roce_psn_add(p->psn, k);

		ll->at[q % SIM_ANS].set = true;
		ll->at[q % SIM_ANS].psn = q;
		ll->at[q % SIM_ANS].cl = cl;
		ll->at[q % SIM_ANS].cpsn = roce_psn_add(cpsn, k);
	}
	ll->next = roce_psn_add(p->psn, span);
}

static void
deliver(struct sim *s, int qi, struct rm_frame *f)
{
	struct roce_pkt p;
	enum ser_verdict v = SER_FORWARD;
	struct remap_emit remit[32];
	uint32_t n_remit = 0;
	const struct ser_emit *ask = NULL;
	bool bad_in = false;
	int id;

	switch (qi) {
	case Q_C2S:
		dump(s, s->pd_in, f->buf, f->len);
		if ((s->ser || s->remap) && roce_parse(f->buf, f->len, &p) == ROCE_OK) {
			int cl = client_of_srv_qp(s, p.qpn);
			uint32_t cpsn = p.psn;

			bad_in = !roce_icrc_verify(f->buf, &p);
			if (s->ser) {
				v = ser_on_request(s->ser, f->buf, &f->len, RM_FRAME_MAX, &p,
						   s->now);
				ask = ser_after(s->ser);
			}
			if (bad_in && v != SER_FORWARD)
				sim_error(s, "I7: bad-ICRC request was %s",
					  v == SER_DROP ? "dropped" : "rewritten");
			if (s->remap && v != SER_DROP) {
				enum remap_verdict rv = remap_on_request(s->remap, f->buf,
					&f->len, RM_FRAME_MAX, &p, v == SER_FORWARD_REWRITTEN,
					s->now, remit, RTE_DIM(remit), &n_remit);

				if (bad_in && rv == REMAP_MODIFIED)
					sim_error(s, "I7: bad-ICRC request was remapped");
				if (rv == REMAP_DROP)
					v = SER_DROP;
				else if (rv == REMAP_MODIFIED)
					check_lane(s, f->buf, &p, cl, cpsn);
				remap_emitted(s, remit, n_remit, false);
			}
		}
		if (v != SER_DROP) {
			out_frame(s, Q_S2M, f->buf, f->len, bad_in);
			/* a forwarded request's follower (the duplicate WRITE
			 * behind a probed copy, ser_req.c replay_probe) */
			if (ask != NULL)
				out_frame(s, ask->to_server ? Q_S2M : Q_S2C, ask->buf,
					  ask->len, false);
		} else if (ask != NULL) {
			s->asked_back++;
			out_frame(s, ask->to_server ? Q_S2M : Q_S2C, ask->buf, ask->len,
				  false);
		}
		remap_emitted(s, remit, n_remit, true);
		break;
	case Q_S2M:
		rm_responder_rx(&s->srv, f->buf, f->len, &s->q[Q_M2S]);
		break;
	case Q_M2S:
		dump(s, s->pd_in, f->buf, f->len);
		if (s->remap && roce_parse(f->buf, f->len, &p) == ROCE_OK) {
			enum remap_verdict rv = remap_on_response(s->remap, f->buf, &f->len,
				RM_FRAME_MAX, &p, false, s->now, remit, RTE_DIM(remit), &n_remit);

			remap_emitted(s, remit, n_remit, false);
			if (rv != REMAP_DROP)
				to_clients(s, f->buf, &f->len);
			remap_emitted(s, remit, n_remit, true);
			break;
		}
		to_clients(s, f->buf, &f->len);
		break;
	case Q_S2C:
		if (roce_parse(f->buf, f->len, &p) != ROCE_OK)
			break;
		id = client_of(s, p.dst_ip4, p.qpn);
		if (id >= 0)
			rm_client_rx(&s->cl[id], f->buf, f->len, &s->q[Q_C2S]);
		break;
	}
}

/*
 * The worker calls each function's tick every millisecond (swordd's
 * sword_worker_tick): remapping asks a waiting client back from there
 * when its lane has no frame to do it on (a connection drained to bind
 * whose lane fell quiet).  Without it a closed-loop run waited on an ask
 * swordd would have sent (fuzz finding both-state-cas-answered-before-post).
 */
#define SIM_TICK_US 1000

static void
sim_tick(struct sim *s)
{
	struct remap_emit remit[32];
	uint32_t n_remit = 0;

	if (s->remap == NULL || s->now < s->next_tick)
		return;
	s->next_tick = s->now + SIM_TICK_US;
	remap_tick(s->remap, s->now, remit, RTE_DIM(remit), &n_remit);
	remap_emitted(s, remit, n_remit, false);
	remap_emitted(s, remit, n_remit, true);
}

bool
sim_deliver(struct sim *s, int qi, uint32_t idx)
{
	struct rm_frame f;

	if (!rm_queue_take(&s->q[qi], idx, &f))
		return false;
	s->now += 10;
	s->steps++;
	sim_tick(s);
	if (s->filter && s->filter(s, qi, &f)) {
		s->dropped_link++;
		return true;
	}
	deliver(s, qi, &f);
	return true;
}

bool
sim_drop(struct sim *s, int qi, uint32_t idx)
{
	struct rm_frame f;

	if (!rm_queue_take(&s->q[qi], idx, &f))
		return false;
	s->dropped_link++;
	return true;
}

void
sim_reconnect(struct sim *s, int i)
{
	struct rm_client *c = &s->cl[i];
	struct rm_addr up = c->to_server;
	rm_done_cb done = c->done;
	void *ctx = c->ctx;

	rm_client_init(c, i, &up, SIM_CL_QPN(i), SIM_RKEY, s->start[i]);
	c->done = done;
	c->ctx = ctx;
	for (uint32_t k = 0; k < s->srv.n_qps; k++)
		if (s->srv.qps[k].qpn == SIM_SRV_QPN(i))
			rm_responder_reset_qp(&s->srv.qps[k], s->start[i]);
	/* I6 is per incarnation: forget the answers the old one got */
	for (uint32_t k = 0; k < SIM_ANS; k++)
		s->ans[i][k].set = false;
}

bool
sim_step(struct sim *s)
{
	struct rm_frame f;
	uint32_t start = (uint32_t)(sim_rand(s) % Q_N), idx = 0;
	int qi = -1;

	for (uint32_t k = 0; k < Q_N; k++) {
		uint32_t i = (start + k) % Q_N;

		if (s->q[i].n) {
			qi = (int)i;
			break;
		}
	}
	if (qi < 0)
		return false;
	if (s->reorder && s->q[qi].n > 1)
		idx = (uint32_t)(sim_rand(s) % RTE_MIN(s->q[qi].n, s->reorder + 1));
	rm_queue_take(&s->q[qi], idx, &f);
	s->now += 10;
	s->steps++;
	sim_tick(s);
	if (s->filter && s->filter(s, qi, &f)) {
		s->dropped_link++;
		return true;
	}
	if (s->loss_ppm && sim_rand(s) % 1000000 < s->loss_ppm) {
		s->dropped_link++;
		return true;
	}
	if (s->dup_ppm && sim_rand(s) % 1000000 < s->dup_ppm) {
		rm_queue_push(&s->q[qi], f.buf, f.len);
		s->duplicated_link++;
	}
	deliver(s, qi, &f);
	return true;
}

bool
sim_idle(const struct sim *s)
{
	for (int i = 0; i < Q_N; i++)
		if (s->q[i].n)
			return false;
	return true;
}

bool
sim_run(struct sim *s, uint64_t max_steps, uint64_t max_timeouts)
{
	uint64_t steps = 0;

	uint64_t progress_at[SIM_MAX_CL] = { 0 }, completed[SIM_MAX_CL] = { 0 };

	while (steps < max_steps) {
		uint32_t outstanding = 0;

		if (sim_step(s)) {
			steps++;
			/* a client's own retransmit timer: it fires when that
			 * client made no progress for a while, even if others
			 * keep the network busy */
			for (int i = 0; i < s->ncl; i++) {
				if (s->cl[i].completed != completed[i] ||
				    !rm_client_outstanding(&s->cl[i])) {
					completed[i] = s->cl[i].completed;
					progress_at[i] = steps;
				} else if (steps - progress_at[i] > 20000) {
					if (s->timeouts >= max_timeouts)
						return false;
					s->timeouts++;
					rm_client_timeout(&s->cl[i], &s->q[Q_C2S]);
					progress_at[i] = steps;
				}
			}
			continue;
		}
		if (rm_responder_flush(&s->srv, &s->q[Q_M2S]))
			continue;
		for (int i = 0; i < s->ncl; i++)
			outstanding += rm_client_outstanding(&s->cl[i]);
		if (outstanding == 0)
			return true;
		if (s->timeouts >= max_timeouts)
			return false;
		s->timeouts++;
		s->now += 100000;
		sim_tick(s);
		for (int i = 0; i < s->ncl; i++)
			rm_client_timeout(&s->cl[i], &s->q[Q_C2S]);
	}
	return false;
}

/*
 * The copies word wi is still held busy for that are awaiting the server:
 * a copy of a request the server had answered, sent on (ser_req.c
 * replay_unmodelled: it may be a new life's, which runs), holds its word
 * until a response after it covers it.  When that copy is lost on its
 * way, its client, answered before, never sends it again: the hold stays
 * until the connection ends or its stub is reused (lib/serializer
 * README), which a run that goes quiet never reaches.  Such a copy is
 * told by its stub: busy again after it was retired (behind una), and
 * no response since it left (at or past walk_from).  A hold anywhere
 * else, or once a response covered it, is a leak.
 */
static uint32_t
copies_awaited(struct sim *s, uint32_t wi)
{
	struct rc_table *rc = ser_rc(s->ser);
	uint32_t n = 0;

	for (uint32_t i = 0; i < rc_capacity(rc) && i < s->ser->prm.max_conns; i++) {
		struct rc_conn *c = rc_at(rc, i);
		struct ser_conn *sc;

		if (c == NULL || s->ser->conns[i].inc != c->incarnation)
			continue;
		sc = &s->ser->conns[i];
		for (uint32_t k = 0; k < s->ser->prm.ring_size; k++) {
			const struct ser_stub *st = &s->ser->stubs[(size_t)i * s->ser->prm.ring_size + k];

			if ((st->kind == ST_REAL || st->kind == ST_WRITE) &&
			    (st->flags & SF_BUSY) && st->word != SER_NO_WORD &&
			    wi - st->word < (st->nwords ? st->nwords : 1) &&
			    roce_psn_diff(st->psn, c->una) < 0 &&
			    roce_psn_diff(st->psn, sc->walk_from) >= 0)
				n++;
		}
	}
	return n;
}

void
sim_check_shadow(struct sim *s)
{
	if (s->ser == NULL)
		return;
	for (uint64_t va = SIM_LOCKS; va < SIM_LOCKS + SIM_LOCK_LEN; va += 8) {
		uint64_t v;
		uint32_t inflight;
		enum ser_word_state st = ser_word_get(s->ser, SIM_SERVER_IP, SIM_RKEY,
						      va, &v, &inflight);
		const struct ser_region_rt *r = ser_region_find(s->ser, SIM_SERVER_IP,
								SIM_RKEY, va, 8);

		if (inflight && r != NULL)
			inflight -= RTE_MIN(inflight, copies_awaited(s, r->first_word +
							   (uint32_t)((va - r->r.base) / 8)));
		if (inflight)
			sim_error(s, "I5: word %#llx has %u ops in flight at quiescence",
				  (unsigned long long)va, inflight);
		if (st == SER_WORD_KNOWN && v != rm_mem_get(&s->srv, va))
			sim_error(s, "I5: word %#llx shadow %#llx memory %#llx",
				  (unsigned long long)va, (unsigned long long)v,
				  (unsigned long long)rm_mem_get(&s->srv, va));
	}
}

int
sim_validate(struct sim *s)
{
	const char *py = getenv("SYSTEM_PYTHON"), *dir = getenv("TEST_HELPERS_DIR");
	char cmd[2048];
	int rc;

	if (s->pd_in)
		pcap_dump_close(s->pd_in);
	if (s->pd_out)
		pcap_dump_close(s->pd_out);
	s->pd_in = s->pd_out = NULL;
	if (!py || !dir)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s %s/validate_pcap.py --quiet --min %u %s%s %s",
		 py, dir, s->n_out ? 1u : 0u, s->allow_bad[0] ? "--allow-bad-icrc " : "",
		 s->allow_bad, s->pcap_out);
	rc = system(cmd);
	return rc;
}

uint32_t
sim_client_errors(struct sim *s, char *buf, size_t len)
{
	uint32_t n = 0;
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < s->ncl; i++) {
		n += s->cl[i].errors;
		for (uint32_t k = 0; k < s->cl[i].errors && k < RM_ERRS; k++)
			off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
						"%s\n", s->cl[i].err[k]);
		if (off >= len)
			off = len - 1;
	}
	for (uint32_t k = 0; k < s->errors && k < 8; k++) {
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s\n",
					s->err[k]);
		if (off >= len)
			off = len - 1;
	}
	return n + s->errors;
}

/* ---------------------------------------------------------------- */
/* workloads */

enum { U_ACQ = 1, U_READ, U_DATA, U_REL, U_FAA, U_MACQ, U_MREL, U_MREAD, U_BATCH };

static void
post(struct sim *s, struct rm_client *c, struct rm_op *op)
{
	if (!rm_client_post(c, op, &s->q[Q_C2S]))
		sim_error(s, "client %d: window full", c->id);
}

static void
sherman_acquire(struct sim *s, struct rm_client *c, uint64_t va)
{
	struct rm_op op = { .type = RM_CAS, .va = va, .a = { TAG(c->id), 0 },
			    .user = U_ACQ };

	post(s, c, &op);
}

static void
sherman_done(void *ctx, struct rm_client *c, struct rm_op *op)
{
	struct sim *s = ctx;
	uint64_t lock = op->va;
	int w;

	switch (op->user) {
	case U_ACQ:
		w = (int)((lock - SIM_LOCKS) / 8);
		if (op->result != 0) { /* held by someone: spin */
			sherman_acquire(s, c, lock);
			break;
		}
		if (s->holder[w] != -1)
			sim_error(s, "I4: client %d granted lock %d held by %d",
				  c->id, w, s->holder[w]);
		s->holder[w] = c->id;
		post(s, c, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA + 8 * (uint64_t)w,
					    .len = 8, .user = U_READ | ((uint64_t)lock << 8) });
		break;
	default:
		lock = op->user >> 8;
		w = (int)((lock - SIM_LOCKS) / 8);
		switch (op->user & 0xff) {
		case U_READ: {
			struct rm_op d = { .type = RM_WRITE, .va = SIM_DATA + 8 * (uint64_t)w,
					   .len = 8, .user = U_DATA };
			struct rm_op r = { .type = RM_WRITE, .va = lock, .len = 8,
					   .ackreq = true, .user = U_REL | ((uint64_t)lock << 8) };
			uint64_t v;

			if (s->data_written && op->result != s->last_data)
				sim_error(s, "I4: client %d read data %#llx, last holder "
					  "wrote %#llx", c->id,
					  (unsigned long long)op->result,
					  (unsigned long long)s->last_data);
			v = ((uint64_t)TAG(c->id) << 32) | (uint64_t)++s->acquired[c->id];
			v = rte_cpu_to_be_64(v);
			memcpy(d.data, &v, 8);
			s->last_data = rte_be_to_cpu_64(v);
			s->data_written = true;
			/* Sherman: data write and release WRITE(0) in one batch,
			 * the data write unsignaled */
			post(s, c, &d);
			if (s->holder[w] != c->id)
				sim_error(s, "I4: client %d releases lock %d held by %d",
					  c->id, w, s->holder[w]);
			s->holder[w] = -1;
			post(s, c, &r);
			break;
		}
		case U_REL:
			if (s->acquired[c->id] < s->target)
				sherman_acquire(s, c, lock);
			break;
		default:
			break;
		}
	}
}

void
sim_sherman_setup(struct sim *s, int target)
{
	s->mode = SIM_MODE_SHERMAN;
	s->target = target;
	for (int i = 0; i < s->ncl; i++)
		s->cl[i].done = sherman_done;
}

void
sim_sherman_acquire(struct sim *s, int i, uint64_t lock_va)
{
	sherman_acquire(s, &s->cl[i], lock_va);
}

void
sim_flow(struct sim *s, uint64_t max_steps)
{
	/* every queue in order, oldest frame first, until nothing moves */
	for (uint64_t n = 0; n < max_steps; n++) {
		bool moved = false;

		for (int q = 0; q < Q_N; q++)
			moved |= sim_deliver(s, q, 0);
		if (!moved && !rm_responder_flush(&s->srv, &s->q[Q_M2S]))
			return;
	}
}

void
sim_sherman_start(struct sim *s, int target, uint64_t lock_va)
{
	s->mode = SIM_MODE_SHERMAN;
	s->target = target;
	for (int i = 0; i < s->ncl; i++) {
		s->cl[i].done = sherman_done;
		sherman_acquire(s, &s->cl[i], lock_va);
	}
}

static void
faa_done(void *ctx, struct rm_client *c, struct rm_op *op)
{
	struct sim *s = ctx;

	if (op->user != U_FAA)
		return;
	if (s->n_tickets < (int)RTE_DIM(s->tickets))
		s->tickets[s->n_tickets++] = op->result;
	if (s->faa_left[c->id]-- > 0)
		post(s, c, &(struct rm_op){ .type = RM_FAA, .va = op->va, .a = { 1 },
					    .user = U_FAA });
}

void
sim_faa_start(struct sim *s, int per_client, uint64_t va)
{
	s->mode = SIM_MODE_FAA;
	for (int i = 0; i < s->ncl; i++) {
		s->cl[i].done = faa_done;
		s->faa_left[i] = per_client - 1;
		post(s, &s->cl[i], &(struct rm_op){ .type = RM_FAA, .va = va,
						    .a = { 1 }, .user = U_FAA });
	}
}

static void
mcas_acquire(struct sim *s, struct rm_client *c, uint64_t va)
{
	uint64_t bit = 1ull << ((c->id % 2) * 7);

	post(s, c, &(struct rm_op){ .type = RM_MCAS, .va = va,
				    .a = { bit, 0, bit, bit }, .user = U_MACQ });
}

static void
mcas_done(void *ctx, struct rm_client *c, struct rm_op *op)
{
	struct sim *s = ctx;
	int b = c->id % 2;
	uint64_t bit = 1ull << (b * 7);

	if (op->user == U_MACQ) {
		if (op->result & bit) {
			mcas_acquire(s, c, op->va);
			return;
		}
		if (s->bit_holder[b] != -1)
			sim_error(s, "I4: client %d got bit %d held by %d", c->id, b,
				  s->bit_holder[b]);
		s->acquired[c->id]++;
		s->bit_holder[b] = c->id;
		/* hold it across one round trip */
		post(s, c, &(struct rm_op){ .type = RM_READ, .va = SIM_DATA, .len = 8,
					    .user = U_MREAD | (op->va << 8) });
	} else if ((op->user & 0xff) == U_MREAD) {
		if (s->bit_holder[b] != c->id)
			sim_error(s, "I4: client %d releases bit %d held by %d",
				  c->id, b, s->bit_holder[b]);
		s->bit_holder[b] = -1;
		post(s, c, &(struct rm_op){ .type = RM_MCAS, .va = op->user >> 8,
					    .a = { 0, bit, bit, bit }, .user = U_MREL });
	} else if (op->user == U_MREL) {
		if (!(op->result & bit))
			sim_error(s, "client %d released bit %d it did not hold (%#llx)",
				  c->id, b, (unsigned long long)op->result);
		if (s->acquired[c->id] < s->target)
			mcas_acquire(s, c, op->va);
	}
}

void
sim_mcas_start(struct sim *s, int target, uint64_t va)
{
	s->mode = SIM_MODE_MCAS;
	s->target = target;
	for (int i = 0; i < s->ncl; i++) {
		s->cl[i].done = mcas_done;
		mcas_acquire(s, &s->cl[i], va);
	}
}

static void
batch_post(struct sim *s, struct rm_client *c, uint64_t va)
{
	for (uint64_t k = 0; k < 4; k++) {
		uint64_t v = s->bval[c->id]++;

		post(s, c, &(struct rm_op){ .type = RM_CAS, .va = va,
					    .a = { v + 1, v }, .user = U_BATCH | (k << 8) });
	}
}

static void
batch_done(void *ctx, struct rm_client *c, struct rm_op *op)
{
	struct sim *s = ctx;

	if ((op->user & 0xff) != U_BATCH)
		return;
	if (op->result != op->a[1])
		sim_error(s, "client %d: CAS(%llu,%llu) on its own word read %#llx",
			  c->id, (unsigned long long)op->a[1],
			  (unsigned long long)op->a[0], (unsigned long long)op->result);
	if ((op->user >> 8) == 3 && --s->batches_left[c->id] > 0)
		batch_post(s, c, op->va);
}

void
sim_batch_start(struct sim *s, int batches, uint64_t va)
{
	s->mode = SIM_MODE_BATCH;
	for (int i = 0; i < s->ncl; i++) {
		s->cl[i].done = batch_done;
		s->batches_left[i] = batches;
		batch_post(s, &s->cl[i], va + 8 * (uint64_t)i);
	}
}
