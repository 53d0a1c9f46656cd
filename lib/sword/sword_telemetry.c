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
 *   /sword/config           the running configuration
 *
 * Counters are read without locks while workers write them (each is one
 * aligned 64-bit word, so a read sees an old or new value, never a torn one).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "sword_daemon.h"

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
	sword_stats_foreach(&snap, add_u64, dt);
	return 0;
}

static int
tel_ports(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	unsigned long p;
	unsigned int s, w;
	struct rte_eth_stats es;
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
	return 0;
}

static int
tel_config(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *dt)
{
	const struct sword_config *c;
	struct rte_tel_data *servers, *locks;
	char ip[INET_ADDRSTRLEN], buf[RTE_TEL_MAX_STRING_LEN];
	unsigned int i;

	if (tel_d == NULL)
		return -1;
	c = &tel_d->cfg;
	rte_tel_data_start_dict(dt);
	rte_tel_data_add_dict_string(dt, "source", c->source);
	rte_tel_data_add_dict_string(dt, "mode", sword_mode_name(c->mode));
	rte_tel_data_add_dict_int(dt, "client_port", c->client_port);
	rte_tel_data_add_dict_int(dt, "server_port", c->server_port);
	rte_tel_data_add_dict_int(dt, "rx_desc", c->rx_desc);
	rte_tel_data_add_dict_int(dt, "tx_desc", c->tx_desc);
	rte_tel_data_add_dict_u64(dt, "mbufs", c->mbufs);
	rte_tel_data_add_dict_int(dt, "burst", c->burst);
	rte_tel_data_add_dict_int(dt, "workers", c->workers);
	rte_tel_data_add_dict_string(dt, "atomic_replacement", c->atomic_replacement ? "on" : "off");
	rte_tel_data_add_dict_string(dt, "remapping", c->remapping ? "on" : "off");
	rte_tel_data_add_dict_string(dt, "clover", c->clover ? "on" : "off");
	rte_tel_data_add_dict_u64(dt, "lock_words", c->lock_words);
	rte_tel_data_add_dict_u64(dt, "qps", c->qps);
	rte_tel_data_add_dict_u64(dt, "stub_ring", c->stub_ring);
	rte_tel_data_add_dict_u64(dt, "stats_interval", c->stats_interval);

	/* Servers and locks as "name=..." strings: the telemetry format has
	 * one level of nesting per container and a bounded string size. */
	servers = rte_tel_data_alloc();
	locks = rte_tel_data_alloc();
	if (servers == NULL || locks == NULL) {
		rte_tel_data_free(servers);
		rte_tel_data_free(locks);
		return 0;
	}
	rte_tel_data_start_array(servers, RTE_TEL_STRING_VAL);
	for (i = 0; i < c->n_servers; i++) {
		inet_ntop(AF_INET, &c->servers[i].ip, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s ip=%s udp_port=%u worker=%u",
			 c->servers[i].name, ip, c->servers[i].udp_port,
			 sword_config_server_worker(c, i));
		rte_tel_data_add_array_string(servers, buf);
	}
	rte_tel_data_start_array(locks, RTE_TEL_STRING_VAL);
	for (i = 0; i < c->n_locks; i++) {
		const struct sword_lock_conf *l = &c->locks[i];
		char rkey[16];

		if (l->rkey_any)
			snprintf(rkey, sizeof(rkey), "any");
		else
			snprintf(rkey, sizeof(rkey), "0x%x", l->rkey);
		snprintf(buf, sizeof(buf), "%s server=%s rkey=%s base=0x%" PRIx64
			 " length=%" PRIu64 " word_size=%u", l->name, l->server, rkey,
			 l->base, l->length, l->word_size);
		rte_tel_data_add_array_string(locks, buf);
	}
	rte_tel_data_add_dict_container(dt, "servers", servers, 0);
	rte_tel_data_add_dict_container(dt, "locks", locks, 0);
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
	return rc;
}
