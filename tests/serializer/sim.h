/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim.h — a closed loop: client models → swordd's serializer → responder
 * model → serializer → clients, over four frame queues with optional loss,
 * duplication and reordering, every frame swordd sees and emits written to
 * pcap for validate_pcap.py (I1), and the invariant checks (I4, I5, I6).
 *
 * Why it exists: each scenario in test_serializer.c is a workload on top
 * of this loop; keeping the loop separate keeps the scenarios short.
 */
#ifndef SWORD_SER_SIM_H
#define SWORD_SER_SIM_H

#include <pcap/pcap.h>

#include "rdma_model.h"
#include "rc.h"
#include "remap.h"
#include "serializer.h"

#define SIM_MAX_CL 8
#define SIM_ANS 4096
#define SIM_SERVER_IP RTE_BE32(0xc6120001)   /* 198.18.0.1 */
#define SIM_CLIENT_IP(i) RTE_BE32(0xc6120010 + (i))
#define SIM_BASE 0x10000ull
#define SIM_MEM 4096
#define SIM_RKEY 0x2521
#define SIM_LOCKS SIM_BASE            /* lock region: first 1 KiB */
#define SIM_LOCK_LEN 1024
#define SIM_DATA (SIM_BASE + 2048)    /* data, outside the region */

enum { Q_C2S, Q_S2M, Q_M2S, Q_S2C, Q_N };
enum { SIM_MODE_NONE, SIM_MODE_SHERMAN, SIM_MODE_FAA, SIM_MODE_MCAS, SIM_MODE_BATCH };

struct sim;
typedef bool (*sim_filter_fn)(struct sim *s, int q, const struct rm_frame *f);

/* Options of sim_init_ex (zero = sim_init's defaults). */
struct sim_opts {
	int ips;                      /* distinct client IPs; clients share
	                               * them round robin (0: one per client) */
	bool fixed_psn;               /* every QP starts at start_psn (Sherman: 3185) */
	uint32_t start_psn;
	/* remapping onto this many lanes (0: none); with_ser off = remapping
	 * alone (it keeps the connection table itself) */
	uint16_t lanes;
	uint32_t responder_resources; /* remapping's default (0: 16) */
	uint64_t stream_quiet;        /* remap_params.stream_quiet_tsc (0: off) */
	/* remapping binds only connections the RDMA CM set up
	 * (remap_params.out_of_band off, swordd's default); the model's
	 * QPs are set up out of band, so none binds */
	bool cm_only;
	/* frames each queue holds (0: 4096); a push to a full queue is a
	 * loss.  tests/fuzz/fuzz_closed creates a loop per input: clearing
	 * 4 x 4096 frames was most of its time */
	uint32_t queue_cap;
	/* the serializer's tables (0: 64 connections, rings of 256) */
	uint32_t max_conns, ring_size;
	/* [atomic] out_of_band at swordd's default (off: atomics of these
	 * out-of-band QPs pass real); the sim turns it on */
	bool oob_default;
};

/* I2 on a lane: who was sent at each lane PSN, from swordd's output. */
struct sim_lane_log {
	uint32_t qpn;
	bool started;
	uint32_t next;
	struct { uint32_t psn, cpsn; int cl; bool set; } at[SIM_ANS];
};

struct sim {
	struct ser *ser;              /* NULL: no swordd (model sanity) */
	struct rc_table *rc;          /* shared by ser and remap when remapping */
	struct remap *remap;          /* opts.lanes > 0 */
	struct remap_server rsrv;
	struct sim_lane_log lane_log[REMAP_MAX_LANES];
	uint64_t lane_frames;         /* requests swordd sent on lanes */
	struct sim_opts opts;
	uint32_t start[SIM_MAX_CL];   /* each client's initial PSN */
	struct ser_params prm;
	struct ser_region region;
	struct rm_responder srv;
	struct rm_client cl[SIM_MAX_CL];
	int ncl;
	struct rm_queue q[Q_N];
	uint64_t rng;
	uint32_t loss_ppm, dup_ppm, reorder;
	uint32_t emit_cap;            /* 0: 32 */
	sim_filter_fn filter;
	void *filter_ctx;
	uint64_t now;
	uint64_t next_tick;           /* remap_tick, every SIM_TICK_US */
	uint64_t asked_back;          /* the serializer's RNR NAKs for drops */
	/* pcap of everything swordd received (in) and emitted (out) */
	pcap_t *pc;
	pcap_dumper_t *pd_in, *pd_out;
	char pcap_in[256], pcap_out[256];
	uint32_t n_in, n_out;
	char allow_bad[512];          /* out frame numbers allowed a bad ICRC */
	/* I6: every ATOMIC ACK swordd emitted, per client and PSN */
	struct { uint32_t psn; uint64_t orig; bool set; } ans[SIM_MAX_CL][SIM_ANS];
	/* I4: lock holders from the clients' view; tag = id + 1 */
	int holder[SIM_LOCK_LEN / 8];
	int bit_holder[64];
	uint64_t last_data;           /* data the last holder wrote */
	bool data_written;
	/* workload */
	int mode;                     /* SIM_MODE_* */
	int target;                   /* acquisitions per client */
	int acquired[SIM_MAX_CL];
	int faa_left[SIM_MAX_CL];
	int batches_left[SIM_MAX_CL];
	uint64_t bval[SIM_MAX_CL];
	uint64_t tickets[SIM_MAX_CL * 64];
	int n_tickets;
	/* failures */
	uint32_t errors;
	char err[8][200];
	uint64_t steps, timeouts, dropped_link, duplicated_link;
};

int sim_init(struct sim *s, int ncl, bool with_ser, bool coalesce,
	     const char *pcap_name);
int sim_init_ex(struct sim *s, int ncl, bool with_ser, bool coalesce,
		const char *pcap_name, const struct sim_opts *o);
/* Client i's IP (several clients share one with opts.ips), its QPN
 * (responses' dest QP) and its server QP (requests' dest QP). */
uint32_t sim_client_ip(const struct sim *s, int i);
#define SIM_CL_QPN(i) (0x200u + (uint32_t)(i))
#define SIM_SRV_QPN(i) (0x100u + (uint32_t)(i))
/* Scripted delivery: take the idx-th frame of queue qi and deliver it
 * (through swordd where the hop crosses it) or drop it.  false if the
 * queue has no such frame. */
bool sim_deliver(struct sim *s, int qi, uint32_t idx);
bool sim_drop(struct sim *s, int qi, uint32_t idx);
/* Client i re-creates its QP with the same QPN and initial PSN, and the
 * server re-creates its end (an application restart with out-of-band QP
 * exchange).  Outstanding ops are lost. */
void sim_reconnect(struct sim *s, int i);
/* Recreate the serializer with s->prm as modified by the caller. */
int sim_reconfigure(struct sim *s);
void sim_free(struct sim *s);
void sim_error(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Run until nothing is outstanding and every queue is empty, timing out
 * clients (go-back-N) when the network goes idle.  false if max_steps or
 * max_timeouts ran out. */
bool sim_run(struct sim *s, uint64_t max_steps, uint64_t max_timeouts);
/* One delivery; false if all queues are empty. */
bool sim_step(struct sim *s);
bool sim_idle(const struct sim *s);
/* Check I5: every word swordd knows equals memory; nothing in flight. */
void sim_check_shadow(struct sim *s);
/* Close the pcaps and run validate_pcap.py on the out file (and in). */
int sim_validate(struct sim *s);
uint32_t sim_client_errors(struct sim *s, char *buf, size_t len);
uint64_t sim_rand(struct sim *s);

/* workloads */
void sim_sherman_start(struct sim *s, int target, uint64_t lock_va);
/* Sherman mode without posting: the test posts acquires itself. */
void sim_sherman_setup(struct sim *s, int target);
void sim_sherman_acquire(struct sim *s, int i, uint64_t lock_va);
/* Deliver in FIFO order (no loss, no reordering) until quiet. */
void sim_flow(struct sim *s, uint64_t max_steps);
void sim_faa_start(struct sim *s, int per_client, uint64_t va);
void sim_mcas_start(struct sim *s, int target, uint64_t va);
/* Each client owns word va + 8*id and pipelines batches of 4 CAS(v, v+1):
 * every answer is known in advance (coalesced-ACK expansion under load). */
void sim_batch_start(struct sim *s, int batches, uint64_t va);

/* Check assertions on a closed loop: no client or model error (I3/I4/I6),
 * and every frame swordd emitted valid for scapy (I1).  Need <check.h>. */
#define SIM_ERRBUF 8192
#define ASSERT_CLEAN(s) do { \
	static char errbuf_[SIM_ERRBUF]; \
	uint32_t n_ = sim_client_errors((s), errbuf_, sizeof(errbuf_)); \
	ck_assert_msg(n_ == 0, "%u errors:\n%s", n_, errbuf_); \
} while (0)
#define ASSERT_VALID(s) \
	ck_assert_msg(sim_validate(s) == 0, "validate_pcap.py rejected %s", (s)->pcap_out)

#endif /* SWORD_SER_SIM_H */
