/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_config.c — INI parsing (rte_cfgfile), --set overrides, validation.
 *
 * One function (config_apply) knows every key; the file loader and --set
 * both go through it, so they accept exactly the same things and produce
 * the same messages.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_log.h>

#include "sword_config.h"

#define LOCK_SEEN_SERVER 0x01
#define LOCK_SEEN_BASE 0x02
#define LOCK_SEEN_LENGTH 0x04
#define SERVER_SEEN_IP 0x01
#define CLOVER_SEEN_SERVER 0x01

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *
sword_mode_name(enum sword_mode m)
{
	return m == SWORD_MODE_TWO_PORT ? "two-port" : "one-port";
}

void
sword_config_defaults(struct sword_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->source, sizeof(c->source), "built-in defaults");
	c->mode = SWORD_MODE_ONE_PORT;
	c->client_port = 0;
	c->server_port = 1;
	c->rx_desc = 1024;
	c->tx_desc = 1024;
	c->mbufs = 16383;
	c->burst = 32;
	c->workers = 1;
	c->lock_words = 65536;
	c->qps = 1024;
	c->stub_ring = 256;
	c->stats_interval = 0;
	c->atomic.pmtu = 4096;
	c->atomic.max_refusals = 64;
	c->atomic.gate_ms = 0;
	c->atomic.pending_expire_ms = 2000;
	c->atomic.learn_holdoff_ms = 1000;
	c->atomic.conn_idle_ms = 10000;
	c->atomic.force_ackreq = true;
	c->clover_keys = 65536;
	c->clover_read_factor = 3;
	c->clover_read_ways = 1;
	c->clover_qps = 4096;
	c->clover_cas = 4096;
	c->clover_write_steering = true;
	c->clover_read_steering = true;
}

/* ---------------------------------------------------------------------- */
/* Value parsers: each returns 0 or fills err with "SRC: [SEC] KEY: ..." */

struct where {
	const char *src;
	const char *sec;
	const char *key;
};

#define WFMT "%s: [%s] %s: "
#define WARGS(w) (w)->src, (w)->sec, (w)->key

/* Decimal or 0x-hex, unsigned, whole string. */
static int
parse_u64(const struct where *w, const char *v, uint64_t lo, uint64_t hi,
	  uint64_t *out, char *err, size_t errlen)
{
	const char *s = v;
	char *end;
	int base = 10;
	unsigned long long x;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s) || (base == 10 && !isdigit((unsigned char)*s)))
		return fail(err, errlen, WFMT "not a number: \"%s\"", WARGS(w), v);
	errno = 0;
	x = strtoull(s, &end, base);
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0')
		return fail(err, errlen, WFMT "not a number: \"%s\"", WARGS(w), v);
	if (errno == ERANGE || x < lo || x > hi)
		return fail(err, errlen, WFMT "out of range: %s (allowed %" PRIu64
			    "..%" PRIu64 ")", WARGS(w), v, lo, hi);
	*out = x;
	return 0;
}

static bool
is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static int
parse_pow2(const struct where *w, const char *v, uint64_t lo, uint64_t hi,
	   uint64_t *out, char *err, size_t errlen)
{
	if (parse_u64(w, v, lo, hi, out, err, errlen) < 0)
		return -1;
	if (!is_pow2(*out))
		return fail(err, errlen, WFMT "must be a power of two: %s", WARGS(w), v);
	return 0;
}

static int
parse_bool(const struct where *w, const char *v, bool *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "on", "yes", "true", "1" };
	static const char *const no[] = { "off", "no", "false", "0" };
	unsigned int i;

	for (i = 0; i < RTE_DIM(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return fail(err, errlen, WFMT "expected on|off: \"%s\"", WARGS(w), v);
}

static int
parse_ip4(const struct where *w, const char *v, uint32_t *out, char *err, size_t errlen)
{
	struct in_addr a;

	if (inet_pton(AF_INET, v, &a) != 1)
		return fail(err, errlen, WFMT "not an IPv4 address: \"%s\"", WARGS(w), v);
	*out = a.s_addr;
	return 0;
}

static int
check_name(const char *src, const char *sec, const char *name, char *err, size_t errlen)
{
	size_t i, n = strlen(name);

	if (n == 0 || n >= SWORD_NAME_LEN)
		return fail(err, errlen, "%s: [%s]: name must be 1..%d characters",
			    src, sec, SWORD_NAME_LEN - 1);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
			return fail(err, errlen, "%s: [%s]: name may only contain "
				    "letters, digits, '_' and '-'", src, sec);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Sections */

enum sec_kind { SEC_PORTS, SEC_CORES, SEC_SERVER, SEC_LOCK, SEC_FEATURES,
		SEC_TABLES, SEC_STATS, SEC_CLOVER, SEC_CLOVER_LAYOUT, SEC_ATOMIC };

/* Find or create [server.NAME] / [lock.NAME]; returns index or -1. */
static int
server_slot(struct sword_config *c, const char *src, const char *sec,
	    const char *name, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < c->n_servers; i++)
		if (strcmp(c->servers[i].name, name) == 0)
			return (int)i;
	if (check_name(src, sec, name, err, errlen) < 0)
		return -1;
	if (c->n_servers >= SWORD_MAX_SERVERS)
		return fail(err, errlen, "%s: [%s]: too many servers (max %d)",
			    src, sec, SWORD_MAX_SERVERS);
	i = c->n_servers++;
	memset(&c->servers[i], 0, sizeof(c->servers[i]));
	snprintf(c->servers[i].name, SWORD_NAME_LEN, "%s", name);
	c->servers[i].udp_port = 4791;
	c->servers[i].worker = -1;
	c->server_seen[i] = 0;
	return (int)i;
}

static int
lock_slot(struct sword_config *c, const char *src, const char *sec,
	  const char *name, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < c->n_locks; i++)
		if (strcmp(c->locks[i].name, name) == 0)
			return (int)i;
	if (check_name(src, sec, name, err, errlen) < 0)
		return -1;
	if (c->n_locks >= SWORD_MAX_LOCKS)
		return fail(err, errlen, "%s: [%s]: too many lock regions (max %d)",
			    src, sec, SWORD_MAX_LOCKS);
	i = c->n_locks++;
	memset(&c->locks[i], 0, sizeof(c->locks[i]));
	snprintf(c->locks[i].name, SWORD_NAME_LEN, "%s", name);
	c->locks[i].rkey_any = true;
	c->locks[i].word_size = 8;
	c->locks[i].server_idx = -1;
	return (int)i;
}

/* Clover layout defaults: Clover as published (see conf/clover.conf). */
static int
clover_slot(struct sword_config *c, const char *src, const char *sec,
	    const char *name, char *err, size_t errlen)
{
	struct sword_clover_conf *l;
	unsigned int i;

	for (i = 0; i < c->n_clover; i++)
		if (strcmp(c->clover_layouts[i].name, name) == 0)
			return (int)i;
	if (check_name(src, sec, name, err, errlen) < 0)
		return -1;
	if (c->n_clover >= SWORD_MAX_CLOVER)
		return fail(err, errlen, "%s: [%s]: too many Clover layouts (max %d)",
			    src, sec, SWORD_MAX_CLOVER);
	i = c->n_clover++;
	l = &c->clover_layouts[i];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, SWORD_NAME_LEN, "%s", name);
	l->server_idx = -1;
	l->rkey_any = true;
	l->write_min = 1024;
	l->key_offset = 8;
	l->key_width = 8;
	l->next_offset = 0;
	l->read_min = 1024;
	return (int)i;
}

/* Classify a section name; *rest points at NAME for server./lock./clover. */
static int
section_kind(const char *sec, const char **rest)
{
	static const struct { const char *name; enum sec_kind kind; } fixed[] = {
		{ "ports", SEC_PORTS }, { "cores", SEC_CORES },
		{ "features", SEC_FEATURES }, { "tables", SEC_TABLES },
		{ "stats", SEC_STATS }, { "clover", SEC_CLOVER },
		{ "atomic", SEC_ATOMIC },
	};
	unsigned int i;

	*rest = NULL;
	for (i = 0; i < RTE_DIM(fixed); i++)
		if (strcmp(sec, fixed[i].name) == 0)
			return fixed[i].kind;
	if (strncmp(sec, "server.", 7) == 0) {
		*rest = sec + 7;
		return SEC_SERVER;
	}
	if (strncmp(sec, "lock.", 5) == 0) {
		*rest = sec + 5;
		return SEC_LOCK;
	}
	if (strncmp(sec, "clover.", 7) == 0) {
		*rest = sec + 7;
		return SEC_CLOVER_LAYOUT;
	}
	return -1;
}

static int
unknown_key(const struct where *w, char *err, size_t errlen)
{
	return fail(err, errlen, WFMT "unknown key", WARGS(w));
}

/* The one place that knows every key. */
static int
config_apply(struct sword_config *c, const char *src, const char *sec,
	     const char *key, const char *val, char *err, size_t errlen)
{
	const struct where w = { src, sec, key };
	const char *name;
	uint64_t x;
	int kind = section_kind(sec, &name);
	int i;

	switch (kind) {
	case SEC_PORTS:
		if (strcmp(key, "mode") == 0) {
			if (strcmp(val, "one-port") == 0)
				c->mode = SWORD_MODE_ONE_PORT;
			else if (strcmp(val, "two-port") == 0)
				c->mode = SWORD_MODE_TWO_PORT;
			else
				return fail(err, errlen, WFMT "expected one-port|two-port: \"%s\"",
					    WARGS(&w), val);
			return 0;
		}
		if (strcmp(key, "client") == 0 || strcmp(key, "server") == 0) {
			if (parse_u64(&w, val, 0, RTE_MAX_ETHPORTS - 1, &x, err, errlen) < 0)
				return -1;
			if (key[0] == 'c')
				c->client_port = (uint16_t)x;
			else
				c->server_port = (uint16_t)x;
			return 0;
		}
		if (strcmp(key, "rx_desc") == 0 || strcmp(key, "tx_desc") == 0) {
			if (parse_pow2(&w, val, 64, 32768, &x, err, errlen) < 0)
				return -1;
			if (key[0] == 'r')
				c->rx_desc = (uint16_t)x;
			else
				c->tx_desc = (uint16_t)x;
			return 0;
		}
		if (strcmp(key, "mbufs") == 0) {
			if (parse_u64(&w, val, 1023, 1u << 24, &x, err, errlen) < 0)
				return -1;
			c->mbufs = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "burst") == 0) {
			if (parse_u64(&w, val, 1, SWORD_MAX_BURST, &x, err, errlen) < 0)
				return -1;
			c->burst = (uint16_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);

	case SEC_CORES:
		if (strcmp(key, "workers") == 0) {
			if (parse_u64(&w, val, 1, SWORD_MAX_WORKERS, &x, err, errlen) < 0)
				return -1;
			c->workers = (uint16_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);

	case SEC_SERVER:
		i = server_slot(c, src, sec, name, err, errlen);
		if (i < 0)
			return -1;
		if (strcmp(key, "ip") == 0) {
			if (parse_ip4(&w, val, &c->servers[i].ip, err, errlen) < 0)
				return -1;
			c->server_seen[i] |= SERVER_SEEN_IP;
			return 0;
		}
		if (strcmp(key, "udp_port") == 0) {
			if (parse_u64(&w, val, 1, 65535, &x, err, errlen) < 0)
				return -1;
			/* lib/roce recognises RoCEv2 by UDP destination 4791 only. */
			if (x != 4791)
				return fail(err, errlen, WFMT "only 4791 (RoCEv2) is supported: %s",
					    WARGS(&w), val);
			c->servers[i].udp_port = (uint16_t)x;
			return 0;
		}
		if (strcmp(key, "worker") == 0) {
			if (strcmp(val, "auto") == 0) {
				c->servers[i].worker = -1;
				return 0;
			}
			if (parse_u64(&w, val, 0, SWORD_MAX_WORKERS - 1, &x, err, errlen) < 0)
				return -1;
			c->servers[i].worker = (int16_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);

	case SEC_LOCK:
		i = lock_slot(c, src, sec, name, err, errlen);
		if (i < 0)
			return -1;
		if (strcmp(key, "server") == 0) {
			if (check_name(src, sec, val, err, errlen) < 0)
				return fail(err, errlen, WFMT "not a server name: \"%s\"",
					    WARGS(&w), val);
			snprintf(c->locks[i].server, SWORD_NAME_LEN, "%s", val);
			c->locks[i].seen |= LOCK_SEEN_SERVER;
			return 0;
		}
		if (strcmp(key, "rkey") == 0) {
			if (strcmp(val, "any") == 0) {
				c->locks[i].rkey_any = true;
				return 0;
			}
			if (parse_u64(&w, val, 0, UINT32_MAX, &x, err, errlen) < 0)
				return -1;
			c->locks[i].rkey_any = false;
			c->locks[i].rkey = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "base") == 0) {
			if (parse_u64(&w, val, 0, UINT64_MAX, &x, err, errlen) < 0)
				return -1;
			c->locks[i].base = x;
			c->locks[i].seen |= LOCK_SEEN_BASE;
			return 0;
		}
		if (strcmp(key, "length") == 0) {
			if (parse_u64(&w, val, 1, UINT64_MAX, &x, err, errlen) < 0)
				return -1;
			c->locks[i].length = x;
			c->locks[i].seen |= LOCK_SEEN_LENGTH;
			return 0;
		}
		if (strcmp(key, "word_size") == 0) {
			if (parse_u64(&w, val, 1, 64, &x, err, errlen) < 0)
				return -1;
			if (x != 8)
				return fail(err, errlen, WFMT "must be 8 (RDMA atomics are "
					    "64-bit): %s", WARGS(&w), val);
			c->locks[i].word_size = (uint32_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);

	case SEC_FEATURES:
		if (strcmp(key, "atomic_replacement") == 0)
			return parse_bool(&w, val, &c->atomic_replacement, err, errlen);
		if (strcmp(key, "remapping") == 0)
			return parse_bool(&w, val, &c->remapping, err, errlen);
		if (strcmp(key, "clover") == 0)
			return parse_bool(&w, val, &c->clover, err, errlen);
		return unknown_key(&w, err, errlen);

	case SEC_TABLES:
		if (strcmp(key, "lock_words") == 0) {
			if (parse_pow2(&w, val, 1, 1u << 24, &x, err, errlen) < 0)
				return -1;
			c->lock_words = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "qps") == 0) {
			if (parse_pow2(&w, val, 1, 1u << 20, &x, err, errlen) < 0)
				return -1;
			c->qps = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "stub_ring") == 0) {
			if (parse_pow2(&w, val, 2, 1u << 16, &x, err, errlen) < 0)
				return -1;
			c->stub_ring = (uint32_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);

	case SEC_STATS:
		if (strcmp(key, "interval") == 0) {
			if (parse_u64(&w, val, 0, 86400, &x, err, errlen) < 0)
				return -1;
			c->stats_interval = (uint32_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);

	case SEC_ATOMIC:
		if (strcmp(key, "pmtu") == 0) {
			if (parse_pow2(&w, val, 256, 4096, &x, err, errlen) < 0)
				return -1;
			c->atomic.pmtu = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "max_refusals") == 0) {
			if (parse_u64(&w, val, 0, 1u << 20, &x, err, errlen) < 0)
				return -1;
			c->atomic.max_refusals = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "gate_ms") == 0) {
			if (parse_u64(&w, val, 0, 60000, &x, err, errlen) < 0)
				return -1;
			c->atomic.gate_ms = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "pending_expire_ms") == 0) {
			if (parse_u64(&w, val, 0, 600000, &x, err, errlen) < 0)
				return -1;
			c->atomic.pending_expire_ms = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "learn_holdoff_ms") == 0) {
			if (parse_u64(&w, val, 0, 600000, &x, err, errlen) < 0)
				return -1;
			c->atomic.learn_holdoff_ms = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "conn_idle_ms") == 0) {
			if (parse_u64(&w, val, 1, 3600000, &x, err, errlen) < 0)
				return -1;
			c->atomic.conn_idle_ms = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "force_ackreq") == 0)
			return parse_bool(&w, val, &c->atomic.force_ackreq, err, errlen);
		return unknown_key(&w, err, errlen);

	case SEC_CLOVER:
		if (strcmp(key, "keys") == 0) {
			if (parse_u64(&w, val, 1, 1u << 26, &x, err, errlen) < 0)
				return -1;
			c->clover_keys = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "read_factor") == 0) {
			if (parse_u64(&w, val, 1, 256, &x, err, errlen) < 0)
				return -1;
			c->clover_read_factor = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "read_ways") == 0) {
			if (parse_u64(&w, val, 1, SWORD_CLOVER_READ_WAYS, &x, err, errlen) < 0)
				return -1;
			c->clover_read_ways = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "qps") == 0) {
			if (parse_pow2(&w, val, 1, 1u << 20, &x, err, errlen) < 0)
				return -1;
			c->clover_qps = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "cas") == 0) {
			if (parse_pow2(&w, val, 1, 1u << 20, &x, err, errlen) < 0)
				return -1;
			c->clover_cas = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "write_steering") == 0)
			return parse_bool(&w, val, &c->clover_write_steering, err, errlen);
		if (strcmp(key, "read_steering") == 0)
			return parse_bool(&w, val, &c->clover_read_steering, err, errlen);
		return unknown_key(&w, err, errlen);

	case SEC_CLOVER_LAYOUT: {
		struct sword_clover_conf *l;

		i = clover_slot(c, src, sec, name, err, errlen);
		if (i < 0)
			return -1;
		l = &c->clover_layouts[i];
		if (strcmp(key, "server") == 0) {
			if (check_name(src, sec, val, err, errlen) < 0)
				return fail(err, errlen, WFMT "not a server name: \"%s\"",
					    WARGS(&w), val);
			snprintf(l->server, SWORD_NAME_LEN, "%s", val);
			l->seen |= CLOVER_SEEN_SERVER;
			return 0;
		}
		if (strcmp(key, "rkey") == 0) {
			if (strcmp(val, "any") == 0) {
				l->rkey_any = true;
				return 0;
			}
			if (parse_u64(&w, val, 0, UINT32_MAX, &x, err, errlen) < 0)
				return -1;
			l->rkey_any = false;
			l->rkey = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "base") == 0)
			return parse_u64(&w, val, 0, UINT64_MAX, &l->base, err, errlen);
		if (strcmp(key, "length") == 0)
			return parse_u64(&w, val, 0, UINT64_MAX, &l->length, err, errlen);
		if (strcmp(key, "write_min") == 0 || strcmp(key, "read_min") == 0) {
			/* one RDMA message: 2^31 is the IBTA maximum */
			if (parse_u64(&w, val, 1, 1u << 31, &x, err, errlen) < 0)
				return -1;
			if (key[0] == 'w')
				l->write_min = (uint32_t)x;
			else
				l->read_min = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "key_offset") == 0 || strcmp(key, "next_offset") == 0) {
			/* must fall in the first packet of a WRITE (4096-byte MTU) */
			if (parse_u64(&w, val, 0, 4088, &x, err, errlen) < 0)
				return -1;
			if (key[0] == 'k')
				l->key_offset = (uint32_t)x;
			else
				l->next_offset = (uint32_t)x;
			return 0;
		}
		if (strcmp(key, "key_width") == 0) {
			if (parse_u64(&w, val, 1, 8, &x, err, errlen) < 0)
				return -1;
			l->key_width = (uint32_t)x;
			return 0;
		}
		return unknown_key(&w, err, errlen);
	}

	default:
		return fail(err, errlen, "%s: [%s]: unknown section (expected ports, "
			    "cores, server.NAME, lock.NAME, features, tables, atomic, "
			    "stats, clover, clover.NAME)", src, sec);
	}
}

/* ---------------------------------------------------------------------- */
/* File */

/*
 * rte_cfgfile quietly accepts some broken lines (text without '=' before
 * the first section, for one): check the line structure first, so every
 * syntax error gets a line number.
 */
static int
lint_file(FILE *f, const char *path, char *err, size_t errlen)
{
	char line[1024];
	bool in_section = false;
	unsigned int lineno = 0;

	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *e;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f))
			return fail(err, errlen, "%s: line %u: line too long", path, lineno);
		e = strchr(p, ';');
		if (e != NULL)
			*e = '\0';
		while (isspace((unsigned char)*p))
			p++;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (*p == '\0')
			continue;
		if (*p == '[') {
			if (e[-1] != ']' || e - p < 3)
				return fail(err, errlen, "%s: line %u: bad section header: %s",
					    path, lineno, p);
			in_section = true;
			continue;
		}
		if (strchr(p, '=') == NULL || *p == '=')
			return fail(err, errlen, "%s: line %u: expected \"key = value\" or "
				    "\"[section]\": %s", path, lineno, p);
		if (!in_section)
			return fail(err, errlen, "%s: line %u: key outside any [section]: %s",
				    path, lineno, p);
	}
	return 0;
}

/* Copy path into an anonymous memory file; *fd_path names it for fopen. */
static int
snapshot_file(const char *path, char *fd_path, size_t fd_path_len, int *fd,
	      char *err, size_t errlen)
{
	char buf[4096];
	size_t n;
	FILE *in = fopen(path, "r");

	if (in == NULL)
		return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	*fd = memfd_create("sword-config", 0);
	if (*fd < 0) {
		fclose(in);
		return fail(err, errlen, "%s: memfd_create: %s", path, strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (write(*fd, buf, n) != (ssize_t)n) {
			fclose(in);
			close(*fd);
			return fail(err, errlen, "%s: cannot copy: %s", path, strerror(errno));
		}
	}
	if (ferror(in)) {
		fclose(in);
		close(*fd);
		return fail(err, errlen, "%s: cannot read: %s", path, strerror(errno));
	}
	fclose(in);
	snprintf(fd_path, fd_path_len, "/proc/self/fd/%d", *fd);
	return 0;
}

int
sword_config_parse_file(struct sword_config *c, const char *path,
			char *err, size_t errlen)
{
	struct rte_cfgfile *cfg;
	struct rte_cfgfile_entry *ent = NULL;
	char (*secnames)[CFG_NAME_LEN] = NULL;
	char *logbuf = NULL;
	size_t logsz = 0;
	FILE *logf, *f;
	char memfd_path[64];
	int nsec, s, j, k, n, rc = -1, memfd;

	/*
	 * The file is read twice (our lint, then rte_cfgfile), so a pipe or a
	 * process substitution (-c <(...)) would reach rte_cfgfile empty.
	 * Read it once into a memfd and let both read that.
	 */
	if (snapshot_file(path, memfd_path, sizeof(memfd_path), &memfd,
			  err, errlen) < 0)
		return -1;
	f = fopen(memfd_path, "r");
	if (f == NULL) {
		close(memfd);
		return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	}
	n = lint_file(f, path, err, errlen);
	fclose(f);
	if (n < 0) {
		close(memfd);
		return -1;
	}

	/*
	 * rte_cfgfile reports syntax errors (with the line number) only
	 * through rte_log: catch that text and make it part of our single
	 * message instead of letting a second line reach stderr.
	 */
	logf = open_memstream(&logbuf, &logsz);
	if (logf != NULL)
		rte_openlog_stream(logf);
	cfg = rte_cfgfile_load(memfd_path, 0);
	close(memfd);
	if (logf != NULL) {
		rte_openlog_stream(NULL);
		fclose(logf);
	}
	if (cfg == NULL) {
		char *msg = logbuf ? logbuf : "";
		char *colon;
		size_t l;

		/* "rte_cfgfile_load_with_params(): error line 3 - ..." → tail */
		colon = strstr(msg, "(): ");
		if (colon != NULL)
			msg = colon + 4;
		l = strlen(msg);
		while (l > 0 && (msg[l - 1] == '\n' || msg[l - 1] == ' '))
			msg[--l] = '\0';
		fail(err, errlen, "%s: syntax error%s%s", path, l ? ": " : "", msg);
		free(logbuf);
		return -1;
	}
	free(logbuf);

	snprintf(c->source, sizeof(c->source), "%s", path);
	nsec = rte_cfgfile_num_sections(cfg, "", 0);
	if (nsec < 0) {
		fail(err, errlen, "%s: cannot read sections", path);
		goto out;
	}
	secnames = calloc(nsec > 0 ? nsec : 1, sizeof(*secnames));
	if (secnames == NULL) {
		fail(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (s = 0; s < nsec; s++) {
		n = rte_cfgfile_section_num_entries_by_index(cfg, secnames[s], s);
		if (n < 0) {
			fail(err, errlen, "%s: cannot read section %d", path, s);
			goto out;
		}
		for (k = 0; k < s; k++)
			if (strcmp(secnames[k], secnames[s]) == 0) {
				fail(err, errlen, "%s: [%s]: duplicate section", path, secnames[s]);
				goto out;
			}
		free(ent);
		ent = calloc(n > 0 ? n : 1, sizeof(*ent));
		if (ent == NULL) {
			fail(err, errlen, "%s: out of memory", path);
			goto out;
		}
		n = rte_cfgfile_section_entries_by_index(cfg, s, secnames[s], ent, n);
		if (n == 0) {
			/* An empty [server.X]/[lock.X] still has to be complete. */
			const char *name;
			int kind = section_kind(secnames[s], &name);

			if (kind < 0) {
				config_apply(c, path, secnames[s], "", "", err, errlen);
				goto out;
			}
			if (kind == SEC_SERVER &&
			    server_slot(c, path, secnames[s], name, err, errlen) < 0)
				goto out;
			if (kind == SEC_LOCK &&
			    lock_slot(c, path, secnames[s], name, err, errlen) < 0)
				goto out;
			if (kind == SEC_CLOVER_LAYOUT &&
			    clover_slot(c, path, secnames[s], name, err, errlen) < 0)
				goto out;
		}
		for (j = 0; j < n; j++) {
			for (k = 0; k < j; k++)
				if (strcmp(ent[k].name, ent[j].name) == 0) {
					fail(err, errlen, "%s: [%s] %s: duplicate key",
					     path, secnames[s], ent[j].name);
					goto out;
				}
			if (config_apply(c, path, secnames[s], ent[j].name,
					 ent[j].value, err, errlen) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(ent);
	free(secnames);
	rte_cfgfile_close(cfg);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* --set SECTION.KEY=VALUE */

int
sword_config_set(struct sword_config *c, const char *assignment,
		 char *err, size_t errlen)
{
	char buf[512];
	char *eq, *dot, *val;

	if (strlen(assignment) >= sizeof(buf))
		return fail(err, errlen, "--set: too long: \"%s\"", assignment);
	snprintf(buf, sizeof(buf), "%s", assignment);
	eq = strchr(buf, '=');
	if (eq == NULL)
		return fail(err, errlen, "--set: expected SECTION.KEY=VALUE: \"%s\"",
			    assignment);
	*eq = '\0';
	val = eq + 1;
	dot = strrchr(buf, '.');
	if (dot == NULL || dot == buf || dot[1] == '\0')
		return fail(err, errlen, "--set: expected SECTION.KEY=VALUE: \"%s\"",
			    assignment);
	*dot = '\0';
	/* trim blanks around the value, as the INI loader does */
	while (isspace((unsigned char)*val))
		val++;
	for (eq = val + strlen(val); eq > val && isspace((unsigned char)eq[-1]); )
		*--eq = '\0';
	return config_apply(c, "--set", buf, dot + 1, val, err, errlen);
}

/* ---------------------------------------------------------------------- */
/* Cross checks */

int
sword_config_validate(struct sword_config *c, char *err, size_t errlen)
{
	const char *src = c->source;
	unsigned int i, j;

	if (c->mode == SWORD_MODE_TWO_PORT && c->client_port == c->server_port)
		return fail(err, errlen, "%s: [ports] server: two-port mode needs two "
			    "different ports (client = server = %u)", src, c->client_port);
	if (c->workers < 1 || c->workers > SWORD_MAX_WORKERS)
		return fail(err, errlen, "%s: [cores] workers: out of range: %u "
			    "(allowed 1..%d)", src, c->workers, SWORD_MAX_WORKERS);
	if (c->burst > c->rx_desc)
		return fail(err, errlen, "%s: [ports] burst: %u exceeds rx_desc %u",
			    src, c->burst, c->rx_desc);

	for (i = 0; i < c->n_servers; i++) {
		struct sword_server_conf *sv = &c->servers[i];

		if (!(c->server_seen[i] & SERVER_SEEN_IP))
			return fail(err, errlen, "%s: [server.%s] ip: missing", src, sv->name);
		if (sv->worker >= 0 && sv->worker >= c->workers)
			return fail(err, errlen, "%s: [server.%s] worker: %d but only %u "
				    "worker(s) configured", src, sv->name, sv->worker,
				    c->workers);
		for (j = 0; j < i; j++)
			if (c->servers[j].ip == sv->ip) {
				char ip[INET_ADDRSTRLEN];

				inet_ntop(AF_INET, &sv->ip, ip, sizeof(ip));
				return fail(err, errlen, "%s: [server.%s] ip: %s is also "
					    "server.%s", src, sv->name, ip, c->servers[j].name);
			}
	}

	for (i = 0; i < c->n_locks; i++) {
		struct sword_lock_conf *l = &c->locks[i];

		if (!(l->seen & LOCK_SEEN_SERVER))
			return fail(err, errlen, "%s: [lock.%s] server: missing", src, l->name);
		if (!(l->seen & LOCK_SEEN_BASE))
			return fail(err, errlen, "%s: [lock.%s] base: missing", src, l->name);
		if (!(l->seen & LOCK_SEEN_LENGTH))
			return fail(err, errlen, "%s: [lock.%s] length: missing", src, l->name);
		l->server_idx = -1;
		for (j = 0; j < c->n_servers; j++)
			if (strcmp(c->servers[j].name, l->server) == 0)
				l->server_idx = (int)j;
		if (l->server_idx < 0)
			return fail(err, errlen, "%s: [lock.%s] server: no [server.%s] section",
				    src, l->name, l->server);
		if (l->base % l->word_size != 0)
			return fail(err, errlen, "%s: [lock.%s] base: 0x%" PRIx64 " is not "
				    "%u-byte aligned", src, l->name, l->base, l->word_size);
		if (l->length % l->word_size != 0)
			return fail(err, errlen, "%s: [lock.%s] length: %" PRIu64 " is not a "
				    "multiple of word_size %u", src, l->name, l->length,
				    l->word_size);
		if (l->base + l->length < l->base)
			return fail(err, errlen, "%s: [lock.%s] length: base + length "
				    "overflows 64 bits", src, l->name);
		for (j = 0; j < i; j++) {
			const struct sword_lock_conf *o = &c->locks[j];

			if (o->server_idx != l->server_idx)
				continue;
			/* different explicit rkeys are different memory regions */
			if (!o->rkey_any && !l->rkey_any && o->rkey != l->rkey)
				continue;
			if (l->base < o->base + o->length && o->base < l->base + l->length)
				return fail(err, errlen, "%s: [lock.%s] base: region "
					    "[0x%" PRIx64 ", 0x%" PRIx64 ") overlaps lock.%s",
					    src, l->name, l->base, l->base + l->length, o->name);
		}
	}
	if (c->atomic_replacement && c->n_locks == 0)
		return fail(err, errlen, "%s: [features] atomic_replacement: on, but no "
			    "[lock.NAME] region is configured", src);
	{
		/* The shadow is a fixed array with one slot per lock word. */
		uint64_t words = 0;

		for (i = 0; i < c->n_locks; i++) {
			words += c->locks[i].length / c->locks[i].word_size;
			if (words > c->lock_words)
				return fail(err, errlen, "%s: [lock.%s] length: the lock "
					    "regions hold %" PRIu64 "+ words, more than "
					    "[tables] lock_words = %u", src,
					    c->locks[i].name, words, c->lock_words);
		}
	}

	for (i = 0; i < c->n_clover; i++) {
		struct sword_clover_conf *l = &c->clover_layouts[i];

		if (!(l->seen & CLOVER_SEEN_SERVER))
			return fail(err, errlen, "%s: [clover.%s] server: missing", src, l->name);
		l->server_idx = -1;
		for (j = 0; j < c->n_servers; j++)
			if (strcmp(c->servers[j].name, l->server) == 0)
				l->server_idx = (int)j;
		if (l->server_idx < 0)
			return fail(err, errlen, "%s: [clover.%s] server: no [server.%s] "
				    "section", src, l->name, l->server);
		if (l->length != 0 && l->base + l->length - 1 < l->base)
			return fail(err, errlen, "%s: [clover.%s] length: base + length "
				    "overflows 64 bits", src, l->name);
		if (l->key_offset + l->key_width > l->write_min)
			return fail(err, errlen, "%s: [clover.%s] key_offset: key bytes "
				    "[%u, %u) lie beyond write_min %u", src, l->name,
				    l->key_offset, l->key_offset + l->key_width, l->write_min);
		if (l->next_offset + 8 > l->write_min)
			return fail(err, errlen, "%s: [clover.%s] next_offset: pointer bytes "
				    "[%u, %u) lie beyond write_min %u", src, l->name,
				    l->next_offset, l->next_offset + 8, l->write_min);
		if (l->next_offset % 8 != 0)
			return fail(err, errlen, "%s: [clover.%s] next_offset: %u is not a "
				    "multiple of 8 (RDMA atomics are 8-byte aligned)", src,
				    l->name, l->next_offset);
		for (j = 0; j < i; j++) {
			const struct sword_clover_conf *o = &c->clover_layouts[j];
			uint64_t le = l->length ? l->base + l->length - 1 : UINT64_MAX;
			uint64_t oe = o->length ? o->base + o->length - 1 : UINT64_MAX;

			if (o->server_idx != l->server_idx)
				continue;
			if (!o->rkey_any && !l->rkey_any && o->rkey != l->rkey)
				continue;
			if (l->base <= oe && o->base <= le)
				return fail(err, errlen, "%s: [clover.%s] base: region overlaps "
					    "clover.%s on server %s", src, l->name, o->name,
					    l->server);
		}
	}
	if (c->clover && c->n_clover == 0)
		return fail(err, errlen, "%s: [features] clover: on, but no "
			    "[clover.NAME] layout is configured", src);
	if ((uint64_t)c->clover_keys * c->clover_read_factor > (1u << 28))
		return fail(err, errlen, "%s: [clover] read_factor: keys * read_factor = "
			    "%" PRIu64 " exceeds 2^28 slots", src,
			    (uint64_t)c->clover_keys * c->clover_read_factor);
	return 0;
}

int
sword_config_load(const char *path, struct sword_config *c, char *err, size_t errlen)
{
	sword_config_defaults(c);
	if (path != NULL && sword_config_parse_file(c, path, err, errlen) < 0)
		return -1;
	return sword_config_validate(c, err, errlen);
}

void
sword_config_print(const struct sword_config *c, FILE *f)
{
	char ip[INET_ADDRSTRLEN];
	unsigned int i;

	fprintf(f, "config: %s\n", c->source);
	if (c->mode == SWORD_MODE_ONE_PORT)
		fprintf(f, "  mode one-port: port %u (hairpin)\n", c->client_port);
	else
		fprintf(f, "  mode two-port: client port %u, server port %u\n",
			c->client_port, c->server_port);
	fprintf(f, "  rx_desc %u, tx_desc %u, mbufs %u, burst %u\n",
		c->rx_desc, c->tx_desc, c->mbufs, c->burst);
	fprintf(f, "  workers %u\n", c->workers);
	fprintf(f, "  servers %u\n", c->n_servers);
	for (i = 0; i < c->n_servers; i++) {
		inet_ntop(AF_INET, &c->servers[i].ip, ip, sizeof(ip));
		fprintf(f, "    server.%s ip %s udp_port %u worker %u\n", c->servers[i].name,
			ip, c->servers[i].udp_port, sword_config_server_worker(c, i));
	}
	fprintf(f, "  lock regions %u\n", c->n_locks);
	for (i = 0; i < c->n_locks; i++) {
		const struct sword_lock_conf *l = &c->locks[i];

		if (l->rkey_any)
			fprintf(f, "    lock.%s server %s rkey any base 0x%" PRIx64
				" length %" PRIu64 " word_size %u\n", l->name, l->server,
				l->base, l->length, l->word_size);
		else
			fprintf(f, "    lock.%s server %s rkey 0x%x base 0x%" PRIx64
				" length %" PRIu64 " word_size %u\n", l->name, l->server,
				l->rkey, l->base, l->length, l->word_size);
	}
	fprintf(f, "  features atomic_replacement %s, remapping %s, clover %s\n",
		c->atomic_replacement ? "on" : "off", c->remapping ? "on" : "off",
		c->clover ? "on" : "off");
	fprintf(f, "  tables lock_words %u, qps %u, stub_ring %u\n",
		c->lock_words, c->qps, c->stub_ring);
	fprintf(f, "  stats interval %u s\n", c->stats_interval);
	fprintf(f, "  atomic pmtu %u, max_refusals %u, gate_ms %u, pending_expire_ms %u, "
		"learn_holdoff_ms %u, conn_idle_ms %u, force_ackreq %s\n", c->atomic.pmtu,
		c->atomic.max_refusals, c->atomic.gate_ms, c->atomic.pending_expire_ms,
		c->atomic.learn_holdoff_ms, c->atomic.conn_idle_ms,
		c->atomic.force_ackreq ? "on" : "off");
	fprintf(f, "  clover keys %u, read_factor %u, read_ways %u, qps %u, cas %u, "
		"write_steering %s, read_steering %s\n", c->clover_keys,
		c->clover_read_factor, c->clover_read_ways, c->clover_qps,
		c->clover_cas, c->clover_write_steering ? "on" : "off",
		c->clover_read_steering ? "on" : "off");
	fprintf(f, "  clover layouts %u\n", c->n_clover);
	for (i = 0; i < c->n_clover; i++) {
		const struct sword_clover_conf *l = &c->clover_layouts[i];
		char rk[16];

		if (l->rkey_any)
			snprintf(rk, sizeof(rk), "any");
		else
			snprintf(rk, sizeof(rk), "0x%x", l->rkey);
		fprintf(f, "    clover.%s server %s rkey %s base 0x%" PRIx64 " length %"
			PRIu64 "%s write_min %u key_offset %u key_width %u next_offset %u "
			"read_min %u\n", l->name, l->server, rk, l->base, l->length,
			l->length ? "" : " (to the end)", l->write_min, l->key_offset,
			l->key_width, l->next_offset, l->read_min);
	}
}
