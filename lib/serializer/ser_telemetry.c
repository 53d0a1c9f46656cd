/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_telemetry.c — /sword/lock,SERVER,VA[,RKEY]: one lock word as atomic
 * replacement sees it, and /sword/conns[,SERVER]: the RC connections
 * (lib/rc) the workers track, on the DPDK telemetry socket.
 *
 * Why it exists: when a lock looks stuck, an operator needs the shadow
 * swordd answers CAS from (known or not, its value, writes still in
 * flight) without stopping the daemon.  It reads the owning worker's
 * serializer through ser_word_get(), which only reads the region table
 * (fixed after start) and one word: a snapshot that may be a burst old,
 * never a torn one (each field is one aligned word).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "rc.h"
#include "ser_fn.h"
#include "ser_telemetry.h"
#include "serializer.h"

static const struct sword_daemon *tel_d;

/* The atomic replacement state of worker w, or NULL. */
static const struct ser *
worker_ser(const struct sword_daemon *d, unsigned int w)
{
	void *st = sword_worker_fn_state(d->workers[w], &ser_fn_ops);

	return st != NULL ? ser_fn_ser(st) : NULL;
}

/* A -1 reaches the client as a bare null: say what was wrong instead. */
static int
lock_error(struct rte_tel_data *dt, const char *msg)
{
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "error", msg);
	return 0;
}

static int
lock_locked(const char *params, struct rte_tel_data *dt)
{
	const struct sword_config *c;
	char buf[128], *server, *va_s, *rkey_s, *end;
	const struct sword_lock_conf *region = NULL;
	const struct ser *s;
	enum ser_word_state st;
	uint64_t va, value = 0;
	uint32_t rkey = 0, inflight = 0;
	unsigned int i, w;
	int sv;

	if (tel_d == NULL)
		return -1;
	if (params == NULL)
		return lock_error(dt, "usage: /sword/lock,SERVER,VA[,RKEY]");
	c = &tel_d->cfg;
	snprintf(buf, sizeof(buf), "%s", params);
	server = strtok(buf, ",");
	va_s = strtok(NULL, ",");
	rkey_s = strtok(NULL, ",");
	if (server == NULL || va_s == NULL)
		return lock_error(dt, "usage: /sword/lock,SERVER,VA[,RKEY]");
	sv = sword_config_find_server(c, server);
	if (sv < 0)
		return lock_error(dt, "no managed server of that name");
	va = strtoull(va_s, &end, 0);
	if (*end != '\0')
		return lock_error(dt, "VA: expected a number");
	for (i = 0; i < c->n_locks; i++) {
		const struct sword_lock_conf *l = &c->locks[i];

		if (l->server_idx == sv && va >= l->base && va - l->base < l->length) {
			region = l;
			break;
		}
	}
	if (rkey_s != NULL) {
		rkey = (uint32_t)strtoul(rkey_s, &end, 0);
		if (*end != '\0')
			return lock_error(dt, "RKEY: expected a number");
	} else if (region != NULL && !region->rkey_any) {
		rkey = region->rkey;
	}
	w = sword_config_server_worker(c, (unsigned int)sv);
	s = w < tel_d->n_workers ? worker_ser(tel_d, w) : NULL;
	st = s != NULL ? ser_word_get(s, c->servers[sv].ip, rkey, va, &value, &inflight)
		       : SER_WORD_NONE;

	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "server", c->servers[sv].name);
	snprintf(buf, sizeof(buf), "0x%" PRIx64, va);
	rte_tel_data_add_dict_string(dt, "va", buf);
	rte_tel_data_add_dict_string(dt, "region", region != NULL ? region->name : "");
	rte_tel_data_add_dict_int(dt, "worker", (int)w);
	rte_tel_data_add_dict_string(dt, "atomic_replacement",
				     c->atomic_replacement ? "on" : "off");
	/* none: not a managed lock word; unknown: not learned yet (CAS pass
	 * as real atomics); known: answered from the shadow */
	rte_tel_data_add_dict_string(dt, "state", st == SER_WORD_KNOWN ? "known"
				     : st == SER_WORD_UNKNOWN ? "unknown" : "none");
	if (st == SER_WORD_KNOWN) {
		snprintf(buf, sizeof(buf), "0x%016" PRIx64, value);
		rte_tel_data_add_dict_string(dt, "shadow", buf);
	}
	/* modelled writes not yet ACKed + unmodelled operations in flight */
	rte_tel_data_add_dict_u64(dt, "in_flight", inflight);
	return 0;
}

/* Under the daemon's cfg_lock: a live reload may be changing the
 * sections (sword_daemon_apply_reload). */
static int
tel_lock(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	int rc;

	if (tel_d == NULL)
		return -1;
	/* tel_d is const here for the readers; the lock is the one thing
	 * this handler writes */
	pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)&tel_d->cfg_lock);
	rc = lock_locked(params, dt);
	pthread_mutex_unlock((pthread_mutex_t *)(uintptr_t)&tel_d->cfg_lock);
	return rc;
}

/* One connection as a line: identity, how it was paired, life, window,
 * age.  A snapshot read from the worker's table between its bursts may be
 * a burst old. */
static void
conn_line(char *buf, size_t n, const struct rc_conn *c, uint64_t now)
{
	char cl[INET_ADDRSTRLEN], srv[INET_ADDRSTRLEN];
	uint64_t age_ms = (now - c->last_seen) * 1000 / rte_get_tsc_hz();

	inet_ntop(AF_INET, &c->cl_ip, cl, sizeof(cl));
	inet_ntop(AF_INET, &c->srv_ip, srv, sizeof(srv));
	/* a telemetry string holds RTE_TEL_MAX_STRING_LEN (128) bytes */
	if (c->paired)
		snprintf(buf, n, "client %s qpn %#x server %s qpn %#x paired by %s "
			 "inc %u next %u una %u idle %" PRIu64 "ms", cl, c->cl_qpn, srv,
			 c->srv_qpn, c->by_cm ? "cm" : "evidence", c->incarnation,
			 c->next_psn, c->una, age_ms);
	else
		snprintf(buf, n, "client %s server %s qpn %#x unpaired inc %u next %u "
			 "una %u idle %" PRIu64 "ms", cl, srv, c->srv_qpn, c->incarnation,
			 c->next_psn, c->una, age_ms);
}

static int
tel_conns(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	const struct sword_config *c;
	uint64_t now = rte_rdtsc(), total = 0;
	int sv = -1, shown = 0;
	char key[48], line[RTE_TEL_MAX_STRING_LEN];

	if (tel_d == NULL)
		return -1;
	c = &tel_d->cfg;
	if (params != NULL && *params != '\0' && (sv = sword_config_find_server(c, params)) < 0)
		return -1;
	rte_tel_data_start_dict(dt);
	for (unsigned int w = 0; w < tel_d->n_workers; w++) {
		struct ser *s = (struct ser *)(uintptr_t)worker_ser(tel_d, w);
		struct rc_table *t = s != NULL ? ser_rc(s) : NULL;

		for (uint32_t i = 0; t != NULL && i < rc_capacity(t); i++) {
			const struct rc_conn *cn = rc_at(t, i);

			if (cn == NULL || (sv >= 0 && cn->srv_ip != c->servers[sv].ip))
				continue;
			total++;
			/* a telemetry dict holds a bounded number of entries */
			if (shown >= RTE_TEL_MAX_DICT_ENTRIES - 2)
				continue;
			snprintf(key, sizeof(key), "w%u_%u", w, i);
			conn_line(line, sizeof(line), cn, now);
			rte_tel_data_add_dict_string(dt, key, line);
			shown++;
		}
	}
	rte_tel_data_add_dict_u64(dt, "connections", total);
	return 0;
}

/*
 * /sword/drain starts the upgrade drain (issue #30), /sword/drain,status
 * only reports.  Starting is an atomic store the workers pick up at their
 * next burst (sword_worker.h); it is never turned off but by a restart,
 * which is what it prepares.  The counts are read from each worker's
 * serializer between its bursts, like /sword/lock: a snapshot that may be
 * a burst old.  drained needs the flag set, every polling worker to
 * have begun a poll round since (drain_seen_by_all: a burst that began
 * before may still rewrite) and then a count of 0.
 */
/* Each worker's poll rounds when the drain flag was first set. */
static uint64_t drain_loops[SWORD_MAX_WORKERS];

/*
 * Has every polling worker begun a poll round after the flag was set?
 * A round that was running when it was set may have loaded the flag
 * before (and may still rewrite); the one after it cannot: two rounds
 * later than the count read after the store.  Until then nothing counted
 * proves anything, so drained stays false.
 */
static bool
drain_seen_by_all(void)
{
	for (unsigned int w = 0; w < tel_d->n_workers; w++)
		if (sword_daemon_worker_polling(tel_d, w) &&
		    sword_daemon_worker_loops(tel_d, w) < drain_loops[w] + 2)
			return false;
	return true;
}

static int
tel_drain(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	uint64_t stubs = 0, pending = 0;
	bool start, seen;

	if (tel_d == NULL)
		return -1;
	if (params == NULL || *params == '\0' || strcmp(params, "start") == 0)
		start = true;
	else if (strcmp(params, "status") == 0)
		start = false;
	else
		return lock_error(dt, "usage: /sword/drain[,start|status]");
	if (start && !sword_drain_is_requested()) {
		/* the store first, then the counts: see drain_seen_by_all */
		sword_drain_request();
		for (unsigned int w = 0; w < tel_d->n_workers; w++)
			drain_loops[w] = sword_daemon_worker_loops(tel_d, w);
	}
	for (unsigned int w = 0; w < tel_d->n_workers; w++) {
		const struct ser *s = worker_ser(tel_d, w);
		uint64_t a = 0, b = 0;

		if (s == NULL)
			continue;
		ser_unanswered(s, &a, &b);
		stubs += a;
		pending += b;
	}
	seen = sword_drain_is_requested() && drain_seen_by_all();
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_int(dt, "draining", sword_drain_is_requested());
	/* every worker has begun a burst since: nothing new is rewritten */
	rte_tel_data_add_dict_int(dt, "workers_draining", seen);
	rte_tel_data_add_dict_u64(dt, "unanswered", stubs + pending);
	rte_tel_data_add_dict_u64(dt, "unanswered_stubs", stubs);
	rte_tel_data_add_dict_u64(dt, "pending_writes", pending);
	rte_tel_data_add_dict_string(dt, "drained",
		seen && stubs + pending == 0 ? "true" : "false");
	return 0;
}

int
ser_telemetry_register(const struct sword_daemon *d)
{
	tel_d = d;
	if (rte_telemetry_register_cmd("/sword/drain", tel_drain,
		/* a help text must stay under RTE_TEL_MAX_STRING_LEN */
		"Parameters: [start|status]. Upgrade drain: start (default) stops "
		"rewrites and lane binds; status: unanswered, drained") != 0)
		return -1;
	if (rte_telemetry_register_cmd("/sword/conns", tel_conns,
		"Parameters: [server]. RC connections tracked: QPNs, pairing, "
		"incarnation, PSN window, idle time") != 0)
		return -1;
	return rte_telemetry_register_cmd("/sword/lock", tel_lock,
		"Parameters: server (name or IPv4), va[, rkey]. A lock word's "
		"atomic replacement state: none|unknown|known, shadow, in_flight");
}
