/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_telemetry.c — /sword/lanes[,SERVER]: the lanes (shared server QPs)
 * remapping keeps for each managed server, on the DPDK telemetry socket.
 *
 * Why it exists: whether clients ride lanes at all, which server QP a
 * lane is, how many clients share it and whether it is recovering is the
 * first thing to look at when remapped traffic stalls.  It reads the
 * owning worker's remap state through remap_lane_info(), which only reads
 * fixed tables and aligned words: as /sword/conns, a snapshot between
 * the worker's bursts that may be a burst old, never a torn field.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "remap.h"
#include "remap_fn.h"
#include "remap_telemetry.h"

static const struct sword_daemon *tel_d;

/* The remapping state of worker w, or NULL. */
static const struct remap *
worker_remap(const struct sword_daemon *d, unsigned int w)
{
	void *st = sword_worker_fn_state(d->workers[w], &remap_fn_ops);

	return st != NULL ? remap_fn_remap(st) : NULL;
}

/* One lane as a line (a telemetry string holds RTE_TEL_MAX_STRING_LEN). */
static void
lane_line(char *buf, size_t n, const char *server, const struct remap_lane_info *li)
{
	char cl[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &li->cl_ip, cl, sizeof(cl));
	if (!li->open) {
		snprintf(buf, n, "server %s closed", server);
		return;
	}
	snprintf(buf, n, "server %s open owner %s qpn %#x srv_qpn %#x next %u una %u "
		 "bound %u%s%s pmtu %u", server, cl, li->cl_qpn, li->srv_qpn,
		 li->next_psn, li->una, li->bound, li->recovering ? " recovering" : "",
		 li->kept ? " kept" : "", li->pmtu);
}

static int
tel_lanes(const char *cmd __rte_unused, const char *params, struct rte_tel_data *dt)
{
	const struct sword_config *c;
	char key[64], line[RTE_TEL_MAX_STRING_LEN];
	uint64_t total = 0, open = 0;
	int sv = -1, shown = 0;

	if (tel_d == NULL)
		return -1;
	c = &tel_d->cfg;
	if (params != NULL && *params != '\0' && (sv = sword_config_find_server(c, params)) < 0) {
		rte_tel_data_start_dict(dt);
		rte_tel_data_add_dict_string(dt, "error", "no managed server of that name");
		return 0;
	}
	rte_tel_data_start_dict(dt);
	for (unsigned int i = 0; i < c->n_servers; i++) {
		unsigned int w = sword_config_server_worker(c, i);
		const struct remap *r;
		struct remap_lane_info li;

		if (sv >= 0 && (int)i != sv)
			continue;
		r = w < tel_d->n_workers ? worker_remap(tel_d, w) : NULL;
		/* remap_lane_info fails past the last lane, and at once for a
		 * server without remapping */
		for (unsigned int k = 0; r != NULL && remap_lane_info(r, c->servers[i].ip,
								      k, &li) == 0; k++) {
			total++;
			open += li.open;
			/* a telemetry dict holds a bounded number of entries */
			if (shown >= RTE_TEL_MAX_DICT_ENTRIES - 3)
				continue;
			snprintf(key, sizeof(key), "%s_%u", c->servers[i].name, k);
			lane_line(line, sizeof(line), c->servers[i].name, &li);
			rte_tel_data_add_dict_string(dt, key, line);
			shown++;
		}
	}
	rte_tel_data_add_dict_u64(dt, "lanes", total);
	rte_tel_data_add_dict_u64(dt, "open", open);
	return 0;
}

int
remap_telemetry_register(const struct sword_daemon *d)
{
	tel_d = d;
	return rte_telemetry_register_cmd("/sword/lanes", tel_lanes,
		/* a help text must stay under RTE_TEL_MAX_STRING_LEN */
		"Parameters: [server]. Remapping lanes: owner client/QPN, server "
		"QPN, PSN window, bound clients, recovering, kept, pmtu");
}
