/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_telemetry.c — /sword/... commands for DPDK telemetry
 * (dpdk-telemetry.py, or any client of the telemetry socket).
 *
 *   /sword/stats            totals over all workers (same keys as --stats-json)
 *   /sword/workers          list of worker ids
 *   /sword/workers,N        counters of worker N
 *   /sword/ports            list of port ids
 *   /sword/ports,P          counters of port P (ours + rte_eth_stats)
 *   /sword/config           the running configuration (every key) and its hash
 *   /sword/servers          per managed server: owner, managed_rx, rewritten
 *   /sword/version          swordd's and DPDK's versions
 *   /sword/capture          both captures' state; ",rx,/PATH" or ",tx,/PATH"
 *                           starts one, ",stop" stops both, ",stop,rx" one
 *   /sword/log_level        every log type's level ("TYPE:LEVEL"); ",GLOB,LEVEL"
 *                           sets the types matching GLOB ("sword.*", "pmd.net.tap")
 *
 * A command that cannot do what it was asked answers {"error": "..."}
 * (a callback's -1 reaches the client as a bare null).
 *
 * Counters are read without locks while workers write them (each is one
 * aligned 64-bit word, so a read sees an old or new value, never a torn one).
 */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "sword_daemon.h"
#include "sword_log.h"
#include "sword_version.h"

static struct sword_daemon *tel_d;

static void
add_u64(void *arg, const char *key, uint64_t v)
{
	rte_tel_data_add_dict_u64(arg, key, v);
}

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *dt)
{
	struct sword_worker_stats sum;

	if (tel_d == NULL || tel_d->n_workers == 0)
		return -1;
	sword_daemon_totals(tel_d, &sum);
	rte_tel_data_start_dict(dt);
	sword_stats_foreach(&sum, add_u64, dt);
	return 0;
}

static int
parse_index(const char *params, unsigned long max, unsigned long *out)
{
	char *end;

	if (params == NULL || *params == '\0')
		return 1;
	*out = strtoul(params, &end, 10);
	if (*end != '\0' || *out >= max)
		return -1;
	return 0;
}

/*
 * fn_latency_ns_<function>: mean time in a function's process() over the
 * sampled frames (<function> is the prefix of its counter names, as in
 * fn_<function>_<counter>: "atomic", "clover").
 */
static void
add_fn_latency(struct rte_tel_data *dt, const struct sword_worker *wk,
	       const struct sword_worker_stats *st)
{
	const uint64_t hz = rte_get_tsc_hz();
	char key[64];
	unsigned int i;

	for (i = 0; i < wk->n_fn; i++) {
		const struct sword_fn_ops *ops = wk->fn[i].ops;
		const char *name = ops->n_counters ? ops->counter_names[0] : ops->name;
		size_t len = strcspn(name, "_");

		snprintf(key, sizeof(key), "fn_latency_ns_%.*s", (int)len, name);
		rte_tel_data_add_dict_u64(dt, key, st->fn_samples[i] && hz
			? (uint64_t)((double)st->fn_sample_cycles[i] * 1e9 / (double)hz /
				     (double)st->fn_samples[i]) : 0);
	}
}

static int
tel_workers(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	struct sword_worker_stats snap;
	unsigned long w;
	int rc;

	if (tel_d == NULL)
		return -1;
	rc = parse_index(params, tel_d->n_workers, &w);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		rte_tel_data_start_array(dt, RTE_TEL_INT_VAL);
		for (w = 0; w < tel_d->n_workers; w++)
			rte_tel_data_add_array_int(dt, (int)w);
		return 0;
	}
	{
		const struct sword_worker_stats *one = &tel_d->workers[w]->stats;

		sword_stats_sum(&snap, &one, 1);
	}
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_int(dt, "worker", (int)w);
	rte_tel_data_add_dict_int(dt, "lcore", (int)tel_d->worker_lcore[w]);
	rte_tel_data_add_dict_int(dt, "socket",
				  (int)rte_lcore_to_socket_id(tel_d->worker_lcore[w]));
	sword_stats_foreach(&snap, add_u64, dt);
	add_fn_latency(dt, tel_d->workers[w], &snap);
	return 0;
}

static int
tel_ports(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	unsigned long p;
	unsigned int s, w;
	struct rte_eth_stats es;
	struct sword_kstats ks;
	uint64_t rx = 0, tx = 0, txd = 0;
	int rc;

	if (tel_d == NULL)
		return -1;
	rc = parse_index(params, RTE_MAX_ETHPORTS, &p);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		rte_tel_data_start_array(dt, RTE_TEL_INT_VAL);
		for (s = 0; s < tel_d->n_slots; s++)
			rte_tel_data_add_array_int(dt, tel_d->slots[s].port_id);
		return 0;
	}
	for (s = 0; s < tel_d->n_slots; s++)
		if (tel_d->slots[s].port_id == p)
			break;
	if (s == tel_d->n_slots)
		return -1;
	for (w = 0; w < tel_d->n_workers; w++) {
		const struct sword_worker_stats *st = &tel_d->workers[w]->stats;

		rx += __atomic_load_n(&st->port_rx[s], __ATOMIC_RELAXED);
		tx += __atomic_load_n(&st->port_tx[s], __ATOMIC_RELAXED);
		txd += __atomic_load_n(&st->port_tx_dropped[s], __ATOMIC_RELAXED);
	}
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_int(dt, "port", (int)p);
	rte_tel_data_add_dict_string(dt, "role", tel_d->slots[s].role);
	rte_tel_data_add_dict_int(dt, "queues", tel_d->slots[s].n_queues);
	rte_tel_data_add_dict_int(dt, "flow_steering", tel_d->slots[s].flow_steering);
	rte_tel_data_add_dict_u64(dt, "rx", rx);
	rte_tel_data_add_dict_u64(dt, "tx", tx);
	rte_tel_data_add_dict_u64(dt, "tx_dropped", txd);
	if (rte_eth_stats_get((uint16_t)p, &es) == 0) {
		rte_tel_data_add_dict_u64(dt, "eth_ipackets", es.ipackets);
		rte_tel_data_add_dict_u64(dt, "eth_opackets", es.opackets);
		rte_tel_data_add_dict_u64(dt, "eth_ibytes", es.ibytes);
		rte_tel_data_add_dict_u64(dt, "eth_obytes", es.obytes);
		rte_tel_data_add_dict_u64(dt, "eth_imissed", es.imissed);
		rte_tel_data_add_dict_u64(dt, "eth_ierrors", es.ierrors);
		rte_tel_data_add_dict_u64(dt, "eth_oerrors", es.oerrors);
		rte_tel_data_add_dict_u64(dt, "eth_rx_nombuf", es.rx_nombuf);
	}
	sword_kstats_read((uint16_t)p, &ks);
	if (ks.valid) {
		rte_tel_data_add_dict_string(dt, "kernel_iface", ks.ifname);
		rte_tel_data_add_dict_u64(dt, "kernel_rx_packets", ks.if_rx_packets);
		rte_tel_data_add_dict_u64(dt, "kernel_tx_packets", ks.if_tx_packets);
		rte_tel_data_add_dict_u64(dt, "kernel_rx_dropped", ks.if_rx_dropped);
		rte_tel_data_add_dict_u64(dt, "kernel_tx_dropped", ks.if_tx_dropped);
		if (ks.sock_count > 0) {
			rte_tel_data_add_dict_int(dt, "kernel_sockets", ks.sock_count);
			rte_tel_data_add_dict_u64(dt, "kernel_sock_packets", ks.sock_packets);
			rte_tel_data_add_dict_u64(dt, "kernel_sock_drops", ks.sock_drops);
		}
	}
	return 0;
}

/*
 * /sword/config: every key of the table, and the config hash.  Telemetry
 * names allow no '.', and containers nest one level: each global section
 * is a dict ("atomic": {"pmtu": "4096", ...}); [server.NAME], [lock.NAME]
 * and [clover.NAME] are arrays "servers", "locks", "clover_layouts" of
 * "NAME key=value ..." strings.
 */
struct tel_cfg_walk {
	struct rte_tel_data *dt;
	struct rte_tel_data *sec_dict;     /* current global section */
	char sec[80];
	struct rte_tel_data *inst[3];      /* servers, locks, clover_layouts */
	char line[RTE_TEL_MAX_STRING_LEN];
	int line_kind;                     /* inst[] index of line, -1 none */
};

static const char *const tel_inst_names[] = { "servers", "locks", "clover_layouts" };

static void
tel_cfg_flush(struct tel_cfg_walk *w)
{
	if (w->sec_dict != NULL)
		rte_tel_data_add_dict_container(w->dt, w->sec, w->sec_dict, 0);
	w->sec_dict = NULL;
	if (w->line_kind >= 0 && w->inst[w->line_kind] != NULL)
		rte_tel_data_add_array_string(w->inst[w->line_kind], w->line);
	w->line_kind = -1;
	w->line[0] = '\0';
}

static void
tel_cfg_one(void *arg, const char *sec, const char *inst, const struct sword_key *k,
	    const char *val)
{
	struct tel_cfg_walk *w = arg;
	int kind;
	size_t l;

	if (strcmp(w->sec, sec) != 0) {
		tel_cfg_flush(w);
		snprintf(w->sec, sizeof(w->sec), "%s", sec);
		if (inst == NULL) {
			w->sec_dict = rte_tel_data_alloc();
			if (w->sec_dict != NULL)
				rte_tel_data_start_dict(w->sec_dict);
		} else {
			kind = strcmp(k->section, "server") == 0 ? 0
			     : strcmp(k->section, "lock") == 0 ? 1 : 2;
			w->line_kind = kind;
			snprintf(w->line, sizeof(w->line), "%s", inst);
		}
	}
	if (inst == NULL) {
		if (w->sec_dict != NULL)
			rte_tel_data_add_dict_string(w->sec_dict, k->name, val);
		return;
	}
	l = strlen(w->line);
	snprintf(w->line + l, sizeof(w->line) - l, " %s=%s", k->name, val);
}

static int
tel_config(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *dt)
{
	struct tel_cfg_walk w = { .dt = dt, .line_kind = -1 };
	char hash[24];
	unsigned int i;

	if (tel_d == NULL)
		return -1;
	/* a live reload changes the sections under cfg_lock */
	pthread_mutex_lock(&tel_d->cfg_lock);
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "source", tel_d->cfg.source);
	rte_tel_data_add_dict_string(dt, "version", SWORD_VERSION);
	snprintf(hash, sizeof(hash), "%016" PRIx64, sword_config_hash(&tel_d->cfg));
	rte_tel_data_add_dict_string(dt, "hash", hash);
	rte_tel_data_add_dict_u64(dt, "reloads", tel_d->reloads);
	rte_tel_data_add_dict_u64(dt, "reloads_refused", tel_d->reloads_refused);
	for (i = 0; i < RTE_DIM(w.inst); i++) {
		w.inst[i] = rte_tel_data_alloc();
		if (w.inst[i] != NULL)
			rte_tel_data_start_array(w.inst[i], RTE_TEL_STRING_VAL);
	}
	sword_config_foreach(&tel_d->cfg, tel_cfg_one, &w);
	tel_cfg_flush(&w);
	for (i = 0; i < RTE_DIM(w.inst); i++)
		if (w.inst[i] != NULL)
			rte_tel_data_add_dict_container(dt, tel_inst_names[i], w.inst[i], 0);
	{
		char retiring[512];

		/* sections a reload removed, draining until dropped */
		sword_config_retiring_text(&tel_d->cfg, retiring, sizeof(retiring));
		rte_tel_data_add_dict_string(dt, "retiring", retiring);
	}
	pthread_mutex_unlock(&tel_d->cfg_lock);
	return 0;
}

/*
 * /sword/reload: what SIGHUP does (re-read the file with the start's
 * --set and options, apply what may change live), asked for from here:
 * the main lcore does it; this thread waits for its outcome (at most
 * RELOAD_WAIT_S) and answers result (applied, unchanged, refused), the
 * changes or the refusal, the hash and what is still draining.
 * /sword/reload,status answers the last outcome and what is draining
 * without reloading.
 */
#define RELOAD_WAIT_S 30

static int
tel_reload(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	uint64_t seq, t0, hz = rte_get_tsc_hz();
	char hash[24], retiring[512];
	bool status_only = params != NULL && strcmp(params, "status") == 0;

	if (tel_d == NULL)
		return -1;
	rte_tel_data_start_dict(dt);
	if (params != NULL && *params != '\0' && !status_only) {
		rte_tel_data_add_dict_string(dt, "error", "usage: /sword/reload[,status]");
		return 0;
	}
	seq = __atomic_load_n(&tel_d->reload_seq, __ATOMIC_ACQUIRE);
	if (!status_only) {
		if (tel_d->on_reload == NULL) {
			rte_tel_data_add_dict_string(dt, "error", "this swordd takes no reload");
			return 0;
		}
		__atomic_store_n(&tel_d->reload, 1, __ATOMIC_RELEASE);
		t0 = rte_get_tsc_cycles();
		while (__atomic_load_n(&tel_d->reload_seq, __ATOMIC_ACQUIRE) == seq) {
			if (rte_get_tsc_cycles() - t0 > RELOAD_WAIT_S * hz) {
				rte_tel_data_add_dict_string(dt, "error", "no answer from the "
							     "main lcore in 30 s");
				return 0;
			}
			sword_sleep_us(1000);
		}
	}
	if (__atomic_load_n(&tel_d->reload_seq, __ATOMIC_ACQUIRE) > 0)
		rte_tel_data_add_dict_string(dt, "result", tel_d->reload_status > 0 ? "applied"
			: tel_d->reload_status == 0 ? "unchanged" : "refused");
	{
		/* telemetry strings hold 127 characters: the text in pieces,
		 * which a client joins (scripts/swordctl does) */
		struct rte_tel_data *a = rte_tel_data_alloc();
		const char *m = tel_d->reload_msg;
		char piece[RTE_TEL_MAX_STRING_LEN];

		if (a != NULL) {
			rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
			for (size_t off = 0; m[off] != '\0'; off += sizeof(piece) - 1) {
				snprintf(piece, sizeof(piece), "%.*s", (int)sizeof(piece) - 1, m + off);
				rte_tel_data_add_array_string(a, piece);
			}
			rte_tel_data_add_dict_container(dt, tel_d->reload_status < 0 ?
							"refused" : "changes", a, 0);
		}
	}
	pthread_mutex_lock(&tel_d->cfg_lock);
	snprintf(hash, sizeof(hash), "%016" PRIx64, sword_config_hash(&tel_d->cfg));
	sword_config_retiring_text(&tel_d->cfg, retiring, sizeof(retiring));
	pthread_mutex_unlock(&tel_d->cfg_lock);
	rte_tel_data_add_dict_string(dt, "hash", hash);
	rte_tel_data_add_dict_string(dt, "retiring", retiring);
	rte_tel_data_add_dict_u64(dt, "reloads", tel_d->reloads);
	rte_tel_data_add_dict_u64(dt, "reloads_refused", tel_d->reloads_refused);
	return 0;
}

/*
 * /sword/servers: per managed server, its owner and its frame counters, as
 * {"server0": {"name": ..., ...}, ...} (telemetry keys allow no '-', which
 * server names may contain, and arrays may not hold dicts).
 */
static int
tel_servers(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *dt)
{
	const struct sword_config *c;
	char ip[INET_ADDRSTRLEN];
	unsigned int i, w;

	if (tel_d == NULL)
		return -1;
	c = &tel_d->cfg;
	rte_tel_data_start_dict(dt);
	pthread_mutex_lock(&tel_d->cfg_lock);
	for (i = 0; i < c->n_servers; i++) {
		char key[24];
		struct rte_tel_data *sv;
		uint64_t managed = 0, rewritten = 0;

		if (c->servers[i].state == SWORD_INST_FREE)
			continue;      /* removed by a reload */
		sv = rte_tel_data_alloc();
		if (sv == NULL) {
			pthread_mutex_unlock(&tel_d->cfg_lock);
			return -1;
		}
		for (w = 0; w < tel_d->n_workers; w++) {
			const struct sword_worker_stats *st = &tel_d->workers[w]->stats;

			managed += __atomic_load_n(&st->server_managed_rx[i], __ATOMIC_RELAXED);
			rewritten += __atomic_load_n(&st->server_rewritten[i], __ATOMIC_RELAXED);
		}
		inet_ntop(AF_INET, &c->servers[i].ip, ip, sizeof(ip));
		rte_tel_data_start_dict(sv);
		rte_tel_data_add_dict_string(sv, "name", c->servers[i].name);
		rte_tel_data_add_dict_string(sv, "ip", ip);
		rte_tel_data_add_dict_int(sv, "worker", (int)sword_config_server_worker(c, i));
		rte_tel_data_add_dict_u64(sv, "managed_rx", managed);
		rte_tel_data_add_dict_u64(sv, "rewritten", rewritten);
		if (c->servers[i].state == SWORD_INST_RETIRING)
			rte_tel_data_add_dict_int(sv, "retiring", 1);
		snprintf(key, sizeof(key), "server%u", i);
		rte_tel_data_add_dict_container(dt, key, sv, 0);
	}
	pthread_mutex_unlock(&tel_d->cfg_lock);
	return 0;
}

static int
tel_version(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *dt)
{
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "version", SWORD_VERSION);
	rte_tel_data_add_dict_string(dt, "dpdk", rte_version());
	return 0;
}

static int
tel_error(struct rte_tel_data *dt, const char *msg)
{
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "error", msg);
	return 0;
}

static int
cap_dir_of(const char *s, size_t len, enum sword_cap_dir *dir)
{
	enum sword_cap_dir d;

	for (d = 0; d < SWORD_CAP_NUM; d++)
		if (strlen(sword_cap_dir_name[d]) == len &&
		    strncmp(s, sword_cap_dir_name[d], len) == 0) {
			*dir = d;
			return 0;
		}
	return -1;
}

static int
tel_capture(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	char err[512];
	const char *comma;
	enum sword_cap_dir dir;
	size_t len;

	if (tel_d == NULL || tel_d->n_workers == 0)
		return tel_error(dt, "swordd is not running");
	if (params != NULL && *params != '\0') {
		comma = strchr(params, ',');
		len = comma ? (size_t)(comma - params) : strlen(params);
		if (len == 4 && strncmp(params, "stop", 4) == 0) {
			int stopped = 0;

			if (comma != NULL && cap_dir_of(comma + 1, strlen(comma + 1), &dir) < 0)
				return tel_error(dt, "usage: /sword/capture,stop[,rx|tx]");
			for (enum sword_cap_dir d = 0; d < SWORD_CAP_NUM; d++)
				if ((comma == NULL || d == dir) &&
				    sword_daemon_capture_stop(tel_d, d) == 0)
					stopped++;
			if (stopped == 0)
				return tel_error(dt, "no capture to stop");
		} else if (cap_dir_of(params, len, &dir) == 0 && comma != NULL) {
			/* a relative path would be relative to swordd's cwd (/
			 * under systemd): say where instead */
			if (comma[1] != '/')
				return tel_error(dt, "the capture file must be an absolute path");
			if (sword_daemon_capture_start(tel_d, dir, comma + 1, err,
						       sizeof(err)) < 0)
				return tel_error(dt, err);
		} else {
			return tel_error(dt, "usage: /sword/capture[,rx|tx,/ABSOLUTE/PATH]"
					 " or /sword/capture,stop[,rx|tx]");
		}
	}
	rte_tel_data_start_dict(dt);
	pthread_mutex_lock(&tel_d->cap_lock);
	for (dir = 0; dir < SWORD_CAP_NUM; dir++) {
		const struct sword_capture *c = &tel_d->cap[dir];
		struct rte_tel_data *x = rte_tel_data_alloc();

		if (x == NULL)
			break;
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "state", c->pcapng != NULL ? "writing" :
					     c->full ? "full" : "off");
		rte_tel_data_add_dict_string(x, "file", c->path);
		rte_tel_data_add_dict_u64(x, "frames", c->frames);
		rte_tel_data_add_dict_u64(x, "bytes", c->bytes);
		rte_tel_data_add_dict_u64(x, "rotations", c->rotations);
		rte_tel_data_add_dict_u64(x, "write_errors", c->write_errors);
		rte_tel_data_add_dict_container(dt, sword_cap_dir_name[dir], x, 0);
	}
	rte_tel_data_add_dict_u64(dt, "max_mb", tel_d->cap_lim.max_bytes >> 20);
	rte_tel_data_add_dict_u64(dt, "files", tel_d->cap_lim.files);
	pthread_mutex_unlock(&tel_d->cap_lock);
	return 0;
}

static const char *const log_level_names[] = {
	[RTE_LOG_EMERG] = "emerg", [RTE_LOG_ALERT] = "alert", [RTE_LOG_CRIT] = "crit",
	[RTE_LOG_ERR] = "err", [RTE_LOG_WARNING] = "warning", [RTE_LOG_NOTICE] = "notice",
	[RTE_LOG_INFO] = "info", [RTE_LOG_DEBUG] = "debug",
};

/* "info", "INFO", "7" or "warn"/"error" (as syslog spells them). */
static int
parse_log_level(const char *s)
{
	char *end;
	unsigned long v;
	int l;

	for (l = (int)RTE_LOG_EMERG; l <= (int)RTE_LOG_DEBUG; l++)
		if (strcasecmp(s, log_level_names[l]) == 0)
			return l;
	if (strcasecmp(s, "warn") == 0)
		return RTE_LOG_WARNING;
	if (strcasecmp(s, "error") == 0)
		return RTE_LOG_ERR;
	v = strtoul(s, &end, 10);
	if (*s != '\0' && *end == '\0' && v >= RTE_LOG_EMERG && v <= RTE_LOG_DEBUG)
		return (int)v;
	return -1;
}

/*
 * rte_log_dump's "id N: NAME, level is LEVEL" lines, as strings
 * "NAME:LEVEL" (EAL's --log-level syntax) in array dt: telemetry keys allow
 * no '.', which most type names have.  Returns how many.
 */
static unsigned int
log_levels_array(struct rte_tel_data *dt, const char *only)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned int n = 0;

	if (f == NULL)
		return 0;
	rte_log_dump(f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[RTE_TEL_MAX_STRING_LEN], level[16], both[RTE_TEL_MAX_STRING_LEN];

		if (sscanf(line, " id %*d: %63[^,], level is %15s", name, level) != 2)
			continue;
		if (only != NULL && fnmatch(only, name, 0) != 0)
			continue;
		snprintf(both, sizeof(both), "%.40s:%s", name, level);
		if (rte_tel_data_add_array_string(dt, both) == 0)
			n++;
	}
	free(text);
	return n;
}

static int
tel_log_level(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	char pattern[128], msg[192];
	struct rte_tel_data *matched;
	const char *comma;
	int level;

	if (params == NULL || *params == '\0') {
		rte_tel_data_start_array(dt, RTE_TEL_STRING_VAL);
		log_levels_array(dt, NULL);
		return 0;
	}
	comma = strrchr(params, ',');
	if (comma == NULL || comma == params || (size_t)(comma - params) >= sizeof(pattern))
		return tel_error(dt, "usage: /sword/log_level[,TYPE_OR_GLOB,LEVEL] "
				 "(LEVEL: emerg..debug or 1..8)");
	snprintf(pattern, sizeof(pattern), "%.*s", (int)(comma - params), params);
	level = parse_log_level(comma + 1);
	if (level < 0) {
		snprintf(msg, sizeof(msg), "unknown log level \"%.32s\" (emerg, alert, "
			 "crit, err, warning, notice, info, debug or 1..8)", comma + 1);
		return tel_error(dt, msg);
	}
	if (rte_log_set_level_pattern(pattern, (uint32_t)level) < 0)
		return tel_error(dt, "cannot set the log level");
	SWORD_LOG_TO(config, INFO, "log level of %s set to %s (telemetry)", pattern,
		     log_level_names[level]);
	matched = rte_tel_data_alloc();
	if (matched == NULL)
		return -1;
	rte_tel_data_start_array(matched, RTE_TEL_STRING_VAL);
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "pattern", pattern);
	rte_tel_data_add_dict_string(dt, "level", log_level_names[level]);
	/* none yet is fine: the pattern also applies to types registered later */
	rte_tel_data_add_dict_int(dt, "types_matched", (int)log_levels_array(matched, pattern));
	rte_tel_data_add_dict_container(dt, "types", matched, 0);
	return 0;
}

int
sword_telemetry_register(struct sword_daemon *d)
{
	int rc = 0;

	tel_d = d;
	rc |= rte_telemetry_register_cmd("/sword/stats", tel_stats,
		"swordd counters summed over all workers. No parameters");
	rc |= rte_telemetry_register_cmd("/sword/workers", tel_workers,
		"No parameter: list of worker ids. Parameter: worker id, its counters");
	rc |= rte_telemetry_register_cmd("/sword/ports", tel_ports,
		"No parameter: list of port ids. Parameter: port id, its counters");
	rc |= rte_telemetry_register_cmd("/sword/config", tel_config,
		"swordd running configuration. No parameters");
	rc |= rte_telemetry_register_cmd("/sword/servers", tel_servers,
		"Per managed server: name, ip, owner worker, managed_rx, rewritten. "
		"No parameters");
	rc |= rte_telemetry_register_cmd("/sword/reload", tel_reload,
		"Reload the configuration as SIGHUP does; answers result, changes "
		"or refused, hash, retiring. Parameter: status (no reload)");
	rc |= rte_telemetry_register_cmd("/sword/version", tel_version,
		"swordd and DPDK versions. No parameters");
	rc |= rte_telemetry_register_cmd("/sword/capture", tel_capture,
		"Captures' state. Parameters: rx,/PATH or tx,/PATH starts one; "
		"stop[,rx|tx] stops");
	rc |= rte_telemetry_register_cmd("/sword/log_level", tel_log_level,
		"Log types' levels. Parameters: TYPE_OR_GLOB,LEVEL sets them");
	return rc;
}
