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

#include <rte_config.h>

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

/*
 * The key table.  Every key swordd knows is one row below, grouped by the
 * feature that owns it; the row is the whole definition of the key: the
 * struct field it lands in (declared from the row), its type and range, its
 * default, whether SIGHUP may change it on a running daemon, and its one-line
 * documentation.  Parsing, --set, defaults, range checks, --check-config,
 * --config-keys, telemetry's /sword/config and the test that conf/ documents
 * every key all walk this table: adding a key is adding a row.
 *
 *   X(key, TYPE, ctype, field, min, max, default, flags, doc)
 *
 * TYPE: UINT (unsigned, min..max), POW2 (same, power of two), BOOL (on|off),
 * MODE (one-port|two-port), IP4 (dotted quad, network order), NAME (a
 * [server.NAME] reference), RKEY ("any" or a 32-bit rkey; also declares
 * bool field_any), WORKER ("auto" = -1, or a worker index).
 * default: text parsed like a config value; NULL = the key is required.
 * flags: SWORD_KEY_LIVE = SIGHUP may change it on a running daemon.
 */
#define SWORD_KEY_LIVE 0x1u

/* [ports] */
#define SWORD_KEYS_PORTS(X) \
	X(mode, MODE, enum sword_mode, mode, 0, 1, "one-port", 0, \
	  "one-port: hairpin out of the port a frame came in on; two-port: client <-> server port") \
	X(client, UINT, uint16_t, client_port, 0, RTE_MAX_ETHPORTS - 1, "0", 0, \
	  "DPDK port id of the client side (the one port in one-port mode)") \
	X(server, UINT, uint16_t, server_port, 0, RTE_MAX_ETHPORTS - 1, "1", 0, \
	  "DPDK port id of the server side (two-port mode)") \
	X(rx_desc, POW2, uint16_t, rx_desc, 64, 32768, "1024", 0, "RX descriptors per queue") \
	X(tx_desc, POW2, uint16_t, tx_desc, 64, 32768, "1024", 0, "TX descriptors per queue") \
	X(mbufs, UINT, uint32_t, mbufs, 1023, 1u << 24, "16383", 0, "mbufs in the packet pool") \
	X(burst, UINT, uint16_t, burst, 1, SWORD_MAX_BURST, "32", 0, "frames per RX burst, at most rx_desc") \
	X(link_wait_ms, UINT, uint32_t, link_wait_ms, 0, 60000, "9000", 0, \
	  "at start, wait up to this long for every port's link (as l3fwd does), then start anyway") \
	X(guard_ms, UINT, uint32_t, guard_ms, 0, 60000, "300", 0, \
	  "with failover_bypass: a guardian process sets the kernel interfaces of the ports down when swordd is gone or its workers made no progress for this long; 0 = no guardian") \
	X(failover_bypass, BOOL, bool, failover_bypass, 0, 1, "off", 0, \
	  "the switch bypasses swordd when its ports go down (sword-openflow --failover): every exit, crash or hang takes them down; refused with remapping")

/* [cores] */
#define SWORD_KEYS_CORES(X) \
	X(workers, UINT, uint16_t, workers, 1, SWORD_MAX_WORKERS, "1", 0, \
	  "forwarding workers, one lcore each besides the main lcore") \
	X(staged_bursts, BOOL, bool, staged_bursts, 0, 1, "off", 0, \
	  "classify a whole burst, then verify the ICRCs the functions check together, then run them (issue #13)")

/* [features] */
#define SWORD_KEYS_FEATURES(X) \
	X(atomic_replacement, BOOL, bool, atomic_replacement, 0, 1, "off", 0, \
	  "F2: CAS -> WRITE lock acceleration for the [lock.NAME] regions") \
	X(remapping, BOOL, bool, remapping, 0, 1, "off", 0, \
	  "F3: connection remapping: the managed servers' client connections ride [remap] lanes") \
	X(clover, BOOL, bool, clover, 0, 1, "off", 0, "F4: Clover write/read steering")

/* [tables] (lib/serializer's per-worker sizes) */
#define SWORD_KEYS_TABLES(X) \
	X(lock_words, POW2, uint32_t, lock_words, 1, 1u << 24, "65536", 0, \
	  "shadow lock words per worker, sized at start: also the room for lock regions a reload adds") \
	X(qps, POW2, uint32_t, qps, 1, 1u << 20, "1024", 0, "client connections tracked per worker") \
	X(stub_ring, POW2, uint32_t, stub_ring, 2, 1u << 16, "256", 0, \
	  "stub entries per connection (PSN mod n); must exceed a client's outstanding PSNs")

/* [stats] */
#define SWORD_KEYS_STATS(X) \
	X(interval, UINT, uint32_t, stats_interval, 0, 86400, "0", SWORD_KEY_LIVE, \
	  "seconds between stats lines, 0 = off")

/*
 * [atomic] (lib/serializer's timing; safety argument in ser_word.c).  pmtu's
 * default is the library's (ser_params.pmtu = 0 means 4096): it must not be
 * below the path MTU; tests/serializer/test_ser_sword.c fails if they drift.
 */
#define SWORD_KEYS_ATOMIC(X) \
	X(pmtu, POW2, uint32_t, pmtu, 256, 4096, "4096", 0, \
	  "path MTU of the RDMA connections (READ PSN spans); never below the real path MTU") \
	X(max_refusals, UINT, uint32_t, max_refusals, 1, 1u << 20, "64", SWORD_KEY_LIVE, \
	  "I4 gate: refusals of an un-ACKed word before real atomics pass") \
	X(gate_ms, UINT, uint32_t, gate_ms, 0, 60000, "0", SWORD_KEY_LIVE, \
	  "I4 gate: the same bound in milliseconds, 0 = count only") \
	X(pending_expire_ms, UINT, uint32_t, pending_expire_ms, 0, 600000, "2000", SWORD_KEY_LIVE, \
	  "an un-ACKed modelled write is abandoned after this long, 0 = never") \
	X(learn_holdoff_ms, UINT, uint32_t, learn_holdoff_ms, 0, 600000, "1000", 0, \
	  "no learning from real atomics this long after start") \
	X(start_quiet_ms, UINT, uint32_t, start_quiet_ms, 0, 10000, "0", 0, \
	  "after swordd starts, no op on a lock word passes for this long: a write the previous instance decided may still be on its way") \
	X(conn_idle_ms, UINT, uint32_t, conn_idle_ms, 1, 3600000, "10000", 0, \
	  "a client connection with no request this long ages out (lib/rc); above the clients' RC retry budget") \
	X(force_ackreq, BOOL, bool, force_ackreq, 0, 1, "on", 0, \
	  "set AckReq on writes forwarded to lock words") \
	X(out_of_band, BOOL, bool, out_of_band, 0, 1, "off", 0, \
	  "also decide atomics of connections set up without the RDMA CM: only where no QP is re-created with a QPN swordd may still know")

/* [remap] (lib/remap: connection remapping, features.remapping) */
#define SWORD_KEYS_REMAP(X) \
	X(lanes, UINT, uint16_t, lanes, 1, 16, "1", 0, \
	  "server-side connections per managed server that client connections are remapped onto") \
	X(responder_resources, UINT, uint32_t, responder_resources, 1, 255, "16", 0, \
	  "outstanding READs/atomics a lane carries when the RDMA CM did not say (server max_dest_rd_atomic)") \
	X(ring, POW2, uint32_t, ring, 64, 1u << 20, "4096", 0, \
	  "stubs per lane (lane PSN mod n): lane PSNs in flight or still needed for a client") \
	X(client_ring, POW2, uint32_t, client_ring, 16, 1u << 16, "256", 0, \
	  "client PSNs remembered per connection for retransmissions; above a client's outstanding PSNs") \
	X(start_holdoff_ms, UINT, uint32_t, start_holdoff_ms, 0, 3600000, "10000", 0, \
	  "after a start, frames of connections not set up by the RDMA CM since are dropped this long") \
	X(stream_quiet_us, UINT, uint32_t, stream_quiet_us, 0, 1000000, "1000", 0, \
	  "a client streaming multi-packet messages keeps its turn on a lane until quiet this long (0 = off)") \
	X(out_of_band, BOOL, bool, out_of_band, 0, 1, "off", 0, \
	  "also remap connections set up without the RDMA CM: only where no QP is re-created with a QPN swordd may still know")

/* [clover] (lib/clover's per-worker tables) */
#define SWORD_KEYS_CLOVER(X) \
	X(keys, UINT, uint32_t, clover_keys, 1, 1u << 26, "65536", 0, "expected key space") \
	X(read_factor, UINT, uint32_t, clover_read_factor, 1, 256, "3", 0, \
	  "read steering table = read_factor x keys slots") \
	X(read_ways, UINT, uint32_t, clover_read_ways, 1, SWORD_CLOVER_READ_WAYS, "1", 0, \
	  "read table slots per bucket (1 = direct mapped)") \
	X(qps, POW2, uint32_t, clover_qps, 1, 1u << 20, "4096", 0, "client QPs remembered") \
	X(cas, POW2, uint32_t, clover_cas, 1, 1u << 20, "4096", 0, "tail CAS remembered until answered") \
	X(write_steering, BOOL, bool, clover_write_steering, 0, 1, "on", 0, "steer stale tail CAS") \
	X(read_steering, BOOL, bool, clover_read_steering, 0, 1, "on", 0, "steer stale value READs")

/* [server.NAME] */
#define SWORD_KEYS_SERVER(X) \
	X(ip, IP4, uint32_t, ip, 0, 0, NULL, 0, "IPv4 address of the memory server") \
	X(udp_port, UINT, uint16_t, udp_port, 4791, 4791, "4791", 0, \
	  "RoCEv2 UDP destination port (only 4791)") \
	X(worker, WORKER, int16_t, worker, 0, SWORD_MAX_WORKERS - 1, "auto", 0, \
	  "owner worker, or auto (server index modulo workers)") \
	X(lanes, UINT, uint16_t, lanes, 0, 16, "0", 0, \
	  "remapping lanes for this server, 0 = [remap] lanes")

/* [lock.NAME] (lib/serializer) */
#define SWORD_KEYS_LOCK(X) \
	X(server, NAME, sword_name_t, server, 0, 0, NULL, 0, "the [server.NAME] the region lives on") \
	X(rkey, RKEY, uint32_t, rkey, 0, UINT32_MAX, "any", 0, "rkey of the memory region, or any") \
	X(base, UINT, uint64_t, base, 0, UINT64_MAX, NULL, 0, "first byte (client VA), word_size-aligned") \
	X(length, UINT, uint64_t, length, 1, UINT64_MAX, NULL, 0, "bytes, a multiple of word_size") \
	X(word_size, UINT, uint32_t, word_size, 8, 8, "8", 0, "lock word size (RDMA atomics: 8)")

/* [clover.NAME] (lib/clover) */
#define SWORD_KEYS_CLOVER_LAYOUT(X) \
	X(server, NAME, sword_name_t, server, 0, 0, NULL, 0, "the [server.NAME] holding the values") \
	X(rkey, RKEY, uint32_t, rkey, 0, UINT32_MAX, "any", 0, "rkey of the data region, or any") \
	X(base, UINT, uint64_t, base, 0, UINT64_MAX, "0", 0, "data region start") \
	X(length, UINT, uint64_t, length, 0, UINT64_MAX, "0", 0, "data region bytes, 0 = to the end") \
	X(write_min, UINT, uint32_t, write_min, 1, 1u << 31, "1024", 0, "data WRITE: DMA length >= this") \
	X(key_offset, UINT, uint32_t, key_offset, 0, 4088, "8", 0, "key offset inside a value") \
	X(key_width, UINT, uint32_t, key_width, 1, 8, "8", 0, "key bytes, little-endian") \
	X(next_offset, UINT, uint32_t, next_offset, 0, 4088, "0", 0, "next pointer offset (tail CAS va)") \
	X(read_min, UINT, uint32_t, read_min, 1, 1u << 31, "1024", 0, "value READ: DMA length >= this")

typedef char sword_name_t[SWORD_NAME_LEN];

/* Field declarations from the rows (RKEY also declares FIELD_any). */
#define SWORD_DECL_UINT(ct, f) ct f;
#define SWORD_DECL_POW2(ct, f) ct f;
#define SWORD_DECL_BOOL(ct, f) ct f;
#define SWORD_DECL_MODE(ct, f) ct f;
#define SWORD_DECL_IP4(ct, f) ct f;
#define SWORD_DECL_NAME(ct, f) ct f;
#define SWORD_DECL_RKEY(ct, f) bool f##_any; ct f;
#define SWORD_DECL_WORKER(ct, f) ct f;
#define SWORD_KEY_FIELD(key, type, ct, f, lo, hi, def, flags, doc) SWORD_DECL_##type(ct, f)

/*
 * A section's life in the running config (live reload, issue #32): a file
 * only ever gives ACTIVE sections.  A server or lock region removed by a
 * reload is RETIRING (still managed, nothing new decided on it) until
 * what it decided is answered, then dropped: a lock region leaves the
 * array, a server's slot becomes FREE (server indices are what workers,
 * counters and functions name servers by, so they never move).
 */
enum sword_inst_state {
	SWORD_INST_ACTIVE = 0,
	SWORD_INST_RETIRING,
	SWORD_INST_FREE,
};

struct sword_server_conf {
	char name[SWORD_NAME_LEN];
	SWORD_KEYS_SERVER(SWORD_KEY_FIELD)    /* ip: network order; worker -1 = auto */
	uint32_t seen;             /* keys given, bit i = row i (for "missing") */
	int16_t owner;             /* owner worker (validate; swordd may move an
				    * auto one onto a worker that receives) */
	uint8_t state;             /* enum sword_inst_state */
};

struct sword_lock_conf {
	char name[SWORD_NAME_LEN];
	SWORD_KEYS_LOCK(SWORD_KEY_FIELD)
	int server_idx;            /* resolved by sword_config_validate */
	uint32_t seen;
	uint8_t state;             /* enum sword_inst_state (never FREE) */
};

/*
 * [clover.NAME]: how Clover's traffic to one server looks (lib/clover).
 * A value is a node of value_size bytes: the 8-byte next pointer at
 * next_offset, the key (key_width bytes, little-endian) at key_offset.
 */
struct sword_clover_conf {
	char name[SWORD_NAME_LEN];
	SWORD_KEYS_CLOVER_LAYOUT(SWORD_KEY_FIELD)
	int server_idx;            /* resolved by sword_config_validate */
	uint32_t seen;
	uint8_t state;             /* enum sword_inst_state (never FREE) */
};

struct sword_config {
	char source[256];          /* file loaded last, or "built-in defaults" */
	/* swordd --state PATH: atomic replacement's tables live in PATH.wN
	 * (lib/sword/sword_state.h) and a restart adopts them; "" = none */
	char state_path[200];

	SWORD_KEYS_PORTS(SWORD_KEY_FIELD)
	SWORD_KEYS_CORES(SWORD_KEY_FIELD)
	SWORD_KEYS_FEATURES(SWORD_KEY_FIELD)
	SWORD_KEYS_TABLES(SWORD_KEY_FIELD)
	SWORD_KEYS_STATS(SWORD_KEY_FIELD)
	struct {
		SWORD_KEYS_ATOMIC(SWORD_KEY_FIELD)
	} atomic;
	struct {
		SWORD_KEYS_REMAP(SWORD_KEY_FIELD)
	} remap;
	SWORD_KEYS_CLOVER(SWORD_KEY_FIELD)

	unsigned int n_servers;
	struct sword_server_conf servers[SWORD_MAX_SERVERS];
	unsigned int n_locks;
	struct sword_lock_conf locks[SWORD_MAX_LOCKS];
	unsigned int n_clover;
	struct sword_clover_conf clover_layouts[SWORD_MAX_CLOVER];
};

enum sword_key_type {
	SWORD_KEY_UINT, SWORD_KEY_POW2, SWORD_KEY_BOOL, SWORD_KEY_MODE,
	SWORD_KEY_IP4, SWORD_KEY_NAME, SWORD_KEY_RKEY, SWORD_KEY_WORKER,
};

/* One row of the table, as the code walks it. */
struct sword_key {
	const char *section;       /* "ports"; "server" for [server.NAME] */
	bool instance;             /* a [SECTION.NAME] key */
	const char *name;
	enum sword_key_type type;
	size_t offset;             /* in struct sword_config, or the instance */
	size_t size;
	size_t any_offset;         /* RKEY: the bool FIELD_any */
	uint64_t min, max;
	const char *def;           /* NULL = required */
	unsigned int flags;        /* SWORD_KEY_LIVE */
	const char *doc;
};

/* The table (every key, in documentation order); *n = its length. */
const struct sword_key *sword_config_keys(unsigned int *n);

/* Checks the table itself: every default parses as its own key, no key
 * twice in a section, min <= max.  0 or -1 + err (tests/unit). */
int sword_config_check_table(char *err, size_t errlen);

/* "uint 64..32768, power of two" and the like, for --config-keys. */
void sword_key_describe(const struct sword_key *k, char *buf, size_t len);

/* A key's current value as config text (what the file would say). */
void sword_key_format(const struct sword_key *k, const void *base,
		      char *buf, size_t len);

/* --config-keys: the table, one key a line (section, key, type, default,
 * live, doc), tab separated. */
void sword_config_print_keys(FILE *f);

/* Every key's current value as text: global keys (inst NULL, sec
 * "ports"), then each instance (sec "server.mem0", inst "mem0"). */
void sword_config_foreach(const struct sword_config *c,
			  void (*fn)(void *arg, const char *sec, const char *inst,
				     const struct sword_key *k, const char *val),
			  void *arg);

/*
 * SIGHUP: may the running config cur become next?  Every global key that
 * differs must be SWORD_KEY_LIVE.  [server.NAME], [lock.NAME] and
 * [clover.NAME] sections may be added and removed (not with [features]
 * remapping = on: lanes are sized at start); a section kept must be
 * identical (change one by removing it and adding it under a new name),
 * and one still RETIRING from an earlier reload may not come back yet nor
 * be overlapped by a new one.  Returns the number of changes (live keys, sections added or
 * removed; 0: nothing to do) with msg listing them ("+[lock.b]",
 * "-[server.m1]"), or -1 with msg listing every refusal (then nothing may
 * be applied).
 */
int sword_config_reload_plan(const struct sword_config *cur,
			     const struct sword_config *next, char *msg, size_t len);

/* Copy every live key of next into cur (after a successful plan). */
void sword_config_apply_live(struct sword_config *cur, const struct sword_config *next);

/*
 * The running config after a planned reload: *out = cur with next's live
 * keys, sections next no longer has RETIRING, sections next adds appended
 * (a server in a new slot, else a FREE one; owner: its worker, or auto =
 * slot modulo auto_workers, the workers that receive).  0, or -1 with err
 * (no slot left).
 */
int sword_config_reload_merge(const struct sword_config *cur,
			      const struct sword_config *next, unsigned int auto_workers,
			      struct sword_config *out, char *err, size_t errlen);

/* Does next add or remove a [server/lock/clover.NAME] section? */
bool sword_config_sections_change(const struct sword_config *cur,
				  const struct sword_config *next);

/* Drop what is RETIRING: lock regions and Clover layouts leave their
 * arrays, servers' slots become FREE.  Returns how many were dropped. */
unsigned int sword_config_drop_retiring(struct sword_config *c);

/* Sections RETIRING, as "[lock.b] [server.m1]" (empty: none). */
void sword_config_retiring_text(const struct sword_config *c, char *buf, size_t len);

/* A 64-bit FNV-1a hash of the effective configuration (every key's value). */
uint64_t sword_config_hash(const struct sword_config *c);

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
	return (unsigned int)c->servers[i].owner;
}

/* The [server.NAME] named s, by name or IPv4 address: its index, -1 if
 * none (telemetry commands take either). */
int sword_config_find_server(const struct sword_config *c, const char *s);

const char *sword_mode_name(enum sword_mode m);

/* Human-readable summary (used by --check-config). */
void sword_config_print(const struct sword_config *c, FILE *f);

#endif /* SWORD_CONFIG_H */
