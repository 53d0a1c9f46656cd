/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_config.h — swordd's configuration: the INI file (rte_cfgfile), the
 * --set overrides, and one validation pass over the result.
 *
 * Why it exists: a daemon that rewrites RDMA traffic must never run
 * half-configured or with a typo silently ignored, so every key is known
 * here, every value is range-checked, and every error names the file,
 * section and key.  None of this needs the EAL, so tests call it directly.
 *
 * Order of application (what main.c does):
 *   sword_config_defaults → sword_config_parse_file → sword_config_set (each
 *   --set) → CLI shortcuts (--mode, --workers, ...) → sword_config_validate.
 * sword_config_load() is defaults + parse + validate in one call.
 *
 * Error strings are "SOURCE: [section] key: what is wrong" (no program name
 * prefix, no newline); SOURCE is the file path or "--set".
 */
#ifndef SWORD_CONFIG_H
#define SWORD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SWORD_MAX_WORKERS 16
#define SWORD_MAX_PORTS 2          /* port slots: client side, server side */
#define SWORD_MAX_SERVERS 64
#define SWORD_MAX_LOCKS 256
#define SWORD_MAX_BURST 128
#define SWORD_NAME_LEN 32          /* server/lock names incl. NUL */
#define SWORD_MAX_CLOVER 16        /* [clover.NAME] layouts */
#define SWORD_CLOVER_READ_WAYS 16  /* [clover] read_ways at most */

enum sword_mode {
	SWORD_MODE_ONE_PORT = 0,   /* hairpin: everything in and out of ports.client */
	SWORD_MODE_TWO_PORT = 1,   /* bump in the wire: ports.client <-> ports.server */
};

struct sword_server_conf {
	char name[SWORD_NAME_LEN];
	uint32_t ip;               /* IPv4, network byte order */
	uint16_t udp_port;         /* host order; RoCEv2 is 4791 */
	int16_t worker;            /* owner worker; -1 = round robin (index % workers) */
};

struct sword_lock_conf {
	char name[SWORD_NAME_LEN];
	char server[SWORD_NAME_LEN];
	int server_idx;            /* resolved by sword_config_validate */
	bool rkey_any;
	uint32_t rkey;
	uint64_t base;
	uint64_t length;
	uint32_t word_size;
	uint8_t seen;              /* bit mask of keys given (for "missing key") */
};

/*
 * [clover.NAME]: how Clover's traffic to one server looks (lib/clover).
 * A value is a node of value_size bytes: the 8-byte next pointer at
 * next_offset, the key (key_width bytes, little-endian) at key_offset.
 */
struct sword_clover_conf {
	char name[SWORD_NAME_LEN];
	char server[SWORD_NAME_LEN];
	int server_idx;            /* resolved by sword_config_validate */
	bool rkey_any;
	uint32_t rkey;
	uint64_t base;             /* data region: [base, base + length) */
	uint64_t length;           /* 0 = up to the end of the address space */
	uint32_t write_min;        /* data WRITE: RETH DMA length >= write_min */
	uint32_t key_offset;       /* key inside the value */
	uint32_t key_width;        /* 1..8 bytes */
	uint32_t next_offset;      /* tail CAS: va = node + next_offset */
	uint32_t read_min;         /* value READ: DMA length >= read_min */
	uint8_t seen;              /* bit mask of keys given (for "missing key") */
};

struct sword_config {
	char source[256];          /* file loaded last, or "built-in defaults" */

	/* [ports] */
	enum sword_mode mode;
	uint16_t client_port;
	uint16_t server_port;
	uint16_t rx_desc;
	uint16_t tx_desc;
	uint32_t mbufs;
	uint16_t burst;

	/* [cores] */
	uint16_t workers;

	/* [server.NAME] */
	unsigned int n_servers;
	struct sword_server_conf servers[SWORD_MAX_SERVERS];
	uint8_t server_seen[SWORD_MAX_SERVERS];   /* keys given, bit mask */

	/* [lock.NAME] */
	unsigned int n_locks;
	struct sword_lock_conf locks[SWORD_MAX_LOCKS];

	/* [features] */
	bool atomic_replacement;
	bool remapping;
	bool clover;

	/* [tables] */
	uint32_t lock_words;
	uint32_t qps;
	uint32_t stub_ring;

	/* [stats] */
	uint32_t stats_interval;   /* seconds, 0 = off */

	/* [atomic] (atomic replacement timing; see lib/serializer/serializer.h) */
	struct {
		uint32_t pmtu;              /* path MTU, for READ PSN spans */
		uint32_t max_refusals;      /* I4 gate: refusals before real atomics */
		uint32_t gate_ms;           /* I4 gate: time bound, 0 = none */
		uint32_t pending_expire_ms; /* un-ACKed modelled write abandoned */
		uint32_t learn_holdoff_ms;  /* no learning this long after start */
		uint32_t conn_idle_ms;      /* a connection this long without a request ages out */
		bool force_ackreq;          /* set AckReq on writes to lock words */
	} atomic;

	/* [clover] (tables per worker, sized at start) */
	uint32_t clover_keys;          /* expected key space (tail cache: 2x slots) */
	uint32_t clover_read_factor;   /* read steering table = factor * keys */
	uint32_t clover_read_ways;     /* read table slots per bucket (1 = direct) */
	uint32_t clover_qps;           /* client QPs remembered (last data WRITE) */
	uint32_t clover_cas;           /* tail CAS remembered until answered */
	bool clover_write_steering;
	bool clover_read_steering;

	/* [clover.NAME] */
	unsigned int n_clover;
	struct sword_clover_conf clover_layouts[SWORD_MAX_CLOVER];
};

/* Built-in defaults: one-port on port 0, 1 worker, no managed servers. */
void sword_config_defaults(struct sword_config *c);

/*
 * Parse an INI file on top of *c (keys it does not mention keep their
 * value).  Rejects syntax errors, unknown sections and keys, duplicate
 * sections and keys, and malformed values.  No cross-checks: call
 * sword_config_validate afterwards.  Returns 0 or -1 with err filled.
 */
int sword_config_parse_file(struct sword_config *c, const char *path,
			    char *err, size_t errlen);

/*
 * Apply one override "SECTION.KEY=VALUE" (SECTION may itself contain a dot:
 * "server.mem0.ip=198.18.0.2", "lock.a.base=0x1000").  A [server.X] or
 * [lock.X] section that does not exist yet is created.  Same value checks
 * and messages as the file.  Returns 0 or -1 with err filled.
 */
int sword_config_set(struct sword_config *c, const char *assignment,
		     char *err, size_t errlen);

/* Cross-field checks (ranges, references, overlaps).  0 or -1 + err. */
int sword_config_validate(struct sword_config *c, char *err, size_t errlen);

/* defaults + parse_file + validate. */
int sword_config_load(const char *path, struct sword_config *c,
		      char *err, size_t errlen);

/* Owner worker of server index i (after validation). */
static inline unsigned int
sword_config_server_worker(const struct sword_config *c, unsigned int i)
{
	return c->servers[i].worker >= 0 ? (unsigned int)c->servers[i].worker
					 : i % c->workers;
}

const char *sword_mode_name(enum sword_mode m);

/* Human-readable summary (used by --check-config). */
void sword_config_print(const struct sword_config *c, FILE *f);

#endif /* SWORD_CONFIG_H */
