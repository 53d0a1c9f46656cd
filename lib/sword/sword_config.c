/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_config.c — INI parsing (rte_cfgfile), --set overrides, validation.
 *
 * The keys themselves are rows of the table in sword_config.h; this file
 * walks it.  One function (config_apply) looks a key up and runs its row's
 * parser; the file loader and --set both go through it, so they accept
 * exactly the same things and produce the same messages.  Defaults are the
 * rows' default texts run through the same parsers; --check-config,
 * --config-keys, the config hash and telemetry print from the same rows.
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
/* The key table (rows in sword_config.h) */

#define ROW(sec, inst, S, prefix, key, type, ct, f, lo, hi, def, flags, doc)   \
	{ sec, inst, #key, SWORD_KEY_##type, offsetof(S, prefix f),           \
	  sizeof(((S *)0)->prefix f), ANY_##type(S, prefix f), lo, hi, def,    \
	  flags, doc },
#define ANY_UINT(S, f) 0
#define ANY_POW2(S, f) 0
#define ANY_BOOL(S, f) 0
#define ANY_MODE(S, f) 0
#define ANY_IP4(S, f) 0
#define ANY_NAME(S, f) 0
#define ANY_RKEY(S, f) offsetof(S, f##_any)
#define ANY_WORKER(S, f) 0

#define ROW_PORTS(...) ROW("ports", false, struct sword_config, , __VA_ARGS__)
#define ROW_CORES(...) ROW("cores", false, struct sword_config, , __VA_ARGS__)
#define ROW_FEATURES(...) ROW("features", false, struct sword_config, , __VA_ARGS__)
#define ROW_TABLES(...) ROW("tables", false, struct sword_config, , __VA_ARGS__)
#define ROW_STATS(...) ROW("stats", false, struct sword_config, , __VA_ARGS__)
#define ROW_ATOMIC(...) ROW("atomic", false, struct sword_config, atomic., __VA_ARGS__)
#define ROW_REMAP(...) ROW("remap", false, struct sword_config, remap., __VA_ARGS__)
#define ROW_CLOVER(...) ROW("clover", false, struct sword_config, , __VA_ARGS__)
#define ROW_SERVER(...) ROW("server", true, struct sword_server_conf, , __VA_ARGS__)
#define ROW_LOCK(...) ROW("lock", true, struct sword_lock_conf, , __VA_ARGS__)
#define ROW_CLOVER_LAYOUT(...) ROW("clover", true, struct sword_clover_conf, , __VA_ARGS__)

static const struct sword_key keys[] = {
	SWORD_KEYS_PORTS(ROW_PORTS)
	SWORD_KEYS_CORES(ROW_CORES)
	SWORD_KEYS_SERVER(ROW_SERVER)
	SWORD_KEYS_LOCK(ROW_LOCK)
	SWORD_KEYS_FEATURES(ROW_FEATURES)
	SWORD_KEYS_TABLES(ROW_TABLES)
	SWORD_KEYS_ATOMIC(ROW_ATOMIC)
	SWORD_KEYS_REMAP(ROW_REMAP)
	SWORD_KEYS_STATS(ROW_STATS)
	SWORD_KEYS_CLOVER(ROW_CLOVER)
	SWORD_KEYS_CLOVER_LAYOUT(ROW_CLOVER_LAYOUT)
};

const struct sword_key *
sword_config_keys(unsigned int *n)
{
	*n = RTE_DIM(keys);
	return keys;
}

static const struct sword_key *
find_key(const char *sec, bool instance, const char *name, unsigned int *bit)
{
	unsigned int i, b = 0;

	for (i = 0; i < RTE_DIM(keys); i++) {
		if (keys[i].instance != instance || strcmp(keys[i].section, sec) != 0)
			continue;
		if (strcmp(keys[i].name, name) == 0) {
			if (bit != NULL)
				*bit = b;
			return &keys[i];
		}
		b++;
	}
	return NULL;
}

static void
store_uint(void *p, size_t size, uint64_t x)
{
	switch (size) {
	case 1: *(uint8_t *)p = (uint8_t)x; break;
	case 2: *(uint16_t *)p = (uint16_t)x; break;
	case 4: *(uint32_t *)p = (uint32_t)x; break;
	default: *(uint64_t *)p = x; break;
	}
}

static uint64_t
load_uint(const void *p, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

/* Parse val as key k's type and store it at base + k->offset. */
static int
key_set(const struct sword_key *k, void *base, const struct where *w,
	const char *val, char *err, size_t errlen)
{
	void *p = (char *)base + k->offset;
	uint64_t x;

	switch (k->type) {
	case SWORD_KEY_UINT:
		if (parse_u64(w, val, k->min, k->max, &x, err, errlen) < 0)
			return -1;
		store_uint(p, k->size, x);
		return 0;
	case SWORD_KEY_POW2:
		if (parse_pow2(w, val, k->min, k->max, &x, err, errlen) < 0)
			return -1;
		store_uint(p, k->size, x);
		return 0;
	case SWORD_KEY_BOOL:
		return parse_bool(w, val, (bool *)p, err, errlen);
	case SWORD_KEY_MODE:
		if (strcmp(val, "one-port") == 0)
			*(enum sword_mode *)p = SWORD_MODE_ONE_PORT;
		else if (strcmp(val, "two-port") == 0)
			*(enum sword_mode *)p = SWORD_MODE_TWO_PORT;
		else
			return fail(err, errlen, WFMT "expected one-port|two-port: \"%s\"",
				    WARGS(w), val);
		return 0;
	case SWORD_KEY_IP4:
		return parse_ip4(w, val, (uint32_t *)p, err, errlen);
	case SWORD_KEY_NAME:
		if (check_name(w->src, w->sec, val, err, errlen) < 0)
			return fail(err, errlen, WFMT "not a server name: \"%s\"", WARGS(w), val);
		snprintf(p, k->size, "%s", val);
		return 0;
	case SWORD_KEY_RKEY:
		if (strcmp(val, "any") == 0) {
			*(bool *)((char *)base + k->any_offset) = true;
			return 0;
		}
		if (parse_u64(w, val, k->min, k->max, &x, err, errlen) < 0)
			return -1;
		*(bool *)((char *)base + k->any_offset) = false;
		store_uint(p, k->size, x);
		return 0;
	case SWORD_KEY_WORKER:
		if (strcmp(val, "auto") == 0) {
			*(int16_t *)p = -1;
			return 0;
		}
		if (parse_u64(w, val, k->min, k->max, &x, err, errlen) < 0)
			return -1;
		*(int16_t *)p = (int16_t)x;
		return 0;
	}
	return fail(err, errlen, WFMT "unknown key type", WARGS(w));
}

void
sword_key_format(const struct sword_key *k, const void *base, char *buf, size_t len)
{
	const void *p = (const char *)base + k->offset;
	uint64_t x;

	switch (k->type) {
	case SWORD_KEY_UINT:
	case SWORD_KEY_POW2:
		x = load_uint(p, k->size);
		/* addresses read better in hex, as the examples write them */
		if (k->size == 8 && x != 0)
			snprintf(buf, len, "0x%" PRIx64, x);
		else
			snprintf(buf, len, "%" PRIu64, x);
		return;
	case SWORD_KEY_BOOL:
		snprintf(buf, len, "%s", *(const bool *)p ? "on" : "off");
		return;
	case SWORD_KEY_MODE:
		snprintf(buf, len, "%s", sword_mode_name(*(const enum sword_mode *)p));
		return;
	case SWORD_KEY_IP4:
		if (inet_ntop(AF_INET, p, buf, (socklen_t)len) == NULL)
			snprintf(buf, len, "?");
		return;
	case SWORD_KEY_NAME:
		snprintf(buf, len, "%s", (const char *)p);
		return;
	case SWORD_KEY_RKEY:
		if (*(const bool *)((const char *)base + k->any_offset))
			snprintf(buf, len, "any");
		else
			snprintf(buf, len, "0x%" PRIx64, load_uint(p, k->size));
		return;
	case SWORD_KEY_WORKER:
		if (*(const int16_t *)p < 0)
			snprintf(buf, len, "auto");
		else
			snprintf(buf, len, "%d", *(const int16_t *)p);
		return;
	}
	snprintf(buf, len, "?");
}

void
sword_key_describe(const struct sword_key *k, char *buf, size_t len)
{
	switch (k->type) {
	case SWORD_KEY_UINT:
		snprintf(buf, len, "uint %" PRIu64 "..%" PRIu64, k->min, k->max);
		return;
	case SWORD_KEY_POW2:
		snprintf(buf, len, "power of two %" PRIu64 "..%" PRIu64, k->min, k->max);
		return;
	case SWORD_KEY_BOOL: snprintf(buf, len, "on|off"); return;
	case SWORD_KEY_MODE: snprintf(buf, len, "one-port|two-port"); return;
	case SWORD_KEY_IP4: snprintf(buf, len, "IPv4 address"); return;
	case SWORD_KEY_NAME: snprintf(buf, len, "server name"); return;
	case SWORD_KEY_RKEY: snprintf(buf, len, "any|0..0xffffffff"); return;
	case SWORD_KEY_WORKER:
		snprintf(buf, len, "auto|%" PRIu64 "..%" PRIu64, k->min, k->max);
		return;
	}
	snprintf(buf, len, "?");
}

/* Every row with a default, of one section, applied to base. */
static void
apply_defaults(const char *sec, bool instance, void *base)
{
	char err[256];
	unsigned int i;

	for (i = 0; i < RTE_DIM(keys); i++) {
		const struct sword_key *k = &keys[i];
		const struct where w = { "built-in defaults", k->section, k->name };

		if (k->instance != instance || strcmp(k->section, sec) != 0 || k->def == NULL)
			continue;
		/* a default the key's own parser refuses is a bug in the table,
		 * and tests/unit checks every default: never at run time */
		if (key_set(k, base, &w, k->def, err, sizeof(err)) < 0)
			RTE_LOG(ERR, USER1, "%s\n", err);
	}
}

int
sword_config_check_table(char *err, size_t errlen)
{
	struct sword_config c;
	union {
		struct sword_server_conf server;
		struct sword_lock_conf lock;
		struct sword_clover_conf clover;
	} inst;
	unsigned int i, j, per_sec;

	for (i = 0; i < RTE_DIM(keys); i++) {
		const struct sword_key *k = &keys[i];
		const struct where w = { "table default", k->section, k->name };

		per_sec = 0;
		for (j = 0; j < RTE_DIM(keys); j++) {
			if (keys[j].instance != k->instance ||
			    strcmp(keys[j].section, k->section) != 0)
				continue;
			per_sec++;
			if (j != i && strcmp(keys[j].name, k->name) == 0)
				return fail(err, errlen, "[%s] %s: two rows", k->section,
					    k->name);
		}
		if (per_sec > 32)
			return fail(err, errlen, "[%s]: more keys than the seen mask holds",
				    k->section);
		if (k->def == NULL)
			continue;
		if (k->min > k->max)
			return fail(err, errlen, "[%s] %s: min > max", k->section, k->name);
		/* any base with room for the field: the parser only writes there */
		memset(&c, 0, sizeof(c));
		memset(&inst, 0, sizeof(inst));
		if (key_set(k, k->instance ? (void *)&inst : (void *)&c, &w, k->def,
			    err, errlen) < 0)
			return -1;
	}
	return 0;
}

void
sword_config_defaults(struct sword_config *c)
{
	static const char *const global[] = {
		"ports", "cores", "features", "tables", "stats", "atomic", "remap",
		"clover",
	};
	unsigned int i;

	memset(c, 0, sizeof(*c));
	snprintf(c->source, sizeof(c->source), "built-in defaults");
	for (i = 0; i < RTE_DIM(global); i++)
		apply_defaults(global[i], false, c);
}

/* ---------------------------------------------------------------------- */
/* Sections */

enum sec_kind { SEC_GLOBAL, SEC_SERVER, SEC_LOCK, SEC_CLOVER_LAYOUT };

/* Instance sections: [server.NAME], [lock.NAME], [clover.NAME]. */
static const struct {
	const char *prefix;        /* section name before the dot */
	const char *what;          /* for "too many" */
	unsigned int max;
} inst_kind[] = {
	[SEC_SERVER] = { "server", "servers", SWORD_MAX_SERVERS },
	[SEC_LOCK] = { "lock", "lock regions", SWORD_MAX_LOCKS },
	[SEC_CLOVER_LAYOUT] = { "clover", "Clover layouts", SWORD_MAX_CLOVER },
};

/* Instance i of a kind: its struct, name and seen mask. */
static void *
inst_at(struct sword_config *c, enum sec_kind kind, unsigned int i,
	char **name, uint32_t **seen, unsigned int **n)
{
	switch (kind) {
	case SEC_SERVER:
		*name = c->servers[i].name;
		*seen = &c->servers[i].seen;
		*n = &c->n_servers;
		return &c->servers[i];
	case SEC_LOCK:
		*name = c->locks[i].name;
		*seen = &c->locks[i].seen;
		*n = &c->n_locks;
		return &c->locks[i];
	case SEC_CLOVER_LAYOUT:
		*name = c->clover_layouts[i].name;
		*seen = &c->clover_layouts[i].seen;
		*n = &c->n_clover;
		return &c->clover_layouts[i];
	default:
		return NULL;
	}
}

static size_t
inst_size(enum sec_kind kind)
{
	return kind == SEC_SERVER ? sizeof(struct sword_server_conf)
	     : kind == SEC_LOCK ? sizeof(struct sword_lock_conf)
	     : sizeof(struct sword_clover_conf);
}

/* Find or create [KIND.NAME]; returns its struct or NULL with err. */
static void *
inst_slot(struct sword_config *c, enum sec_kind kind, const char *src,
	  const char *sec, const char *name, uint32_t **seen, char *err, size_t errlen)
{
	unsigned int i, *n = NULL;
	char *nm = NULL;
	void *p;

	if (inst_at(c, kind, 0, &nm, seen, &n) == NULL || n == NULL)
		return NULL;
	for (i = 0; i < *n; i++) {
		p = inst_at(c, kind, i, &nm, seen, &n);
		if (strcmp(nm, name) == 0)
			return p;
	}
	if (check_name(src, sec, name, err, errlen) < 0)
		return NULL;
	if (*n >= inst_kind[kind].max) {
		fail(err, errlen, "%s: [%s]: too many %s (max %u)", src, sec,
		     inst_kind[kind].what, inst_kind[kind].max);
		return NULL;
	}
	i = (*n)++;
	p = inst_at(c, kind, i, &nm, seen, &n);
	memset(p, 0, inst_size(kind));
	if (kind == SEC_LOCK)
		c->locks[i].server_idx = -1;
	else if (kind == SEC_CLOVER_LAYOUT)
		c->clover_layouts[i].server_idx = -1;
	snprintf(nm, SWORD_NAME_LEN, "%s", name);
	apply_defaults(inst_kind[kind].prefix, true, p);
	return p;
}

/* Classify a section name; *rest points at NAME for server./lock./clover. */
static int
section_kind(const char *sec, const char **rest)
{
	unsigned int i;
	size_t l;

	*rest = NULL;
	for (i = 0; i < RTE_DIM(keys); i++)
		if (!keys[i].instance && strcmp(sec, keys[i].section) == 0)
			return SEC_GLOBAL;
	for (i = SEC_SERVER; i < RTE_DIM(inst_kind); i++) {
		l = strlen(inst_kind[i].prefix);
		if (strncmp(sec, inst_kind[i].prefix, l) == 0 && sec[l] == '.') {
			*rest = sec + l + 1;
			return (int)i;
		}
	}
	return -1;
}

/* The one place that applies a key: table lookup, then the row's parser. */
static int
config_apply(struct sword_config *c, const char *src, const char *sec,
	     const char *key, const char *val, char *err, size_t errlen)
{
	const struct where w = { src, sec, key };
	const struct sword_key *k;
	const char *name;
	int kind = section_kind(sec, &name);
	uint32_t *seen;
	unsigned int bit;
	void *base;

	if (kind < 0)
		return fail(err, errlen, "%s: [%s]: unknown section (expected ports, "
			    "cores, server.NAME, lock.NAME, features, tables, atomic, "
			    "stats, clover, clover.NAME)", src, sec);
	if (kind == SEC_GLOBAL) {
		k = find_key(sec, false, key, NULL);
		if (k == NULL && strcmp(sec, "atomic") == 0 &&
		    strcmp(key, "faa_out_of_band") == 0)
			return fail(err, errlen, WFMT "unknown key: it is [atomic] "
				    "out_of_band now, for CAS and masked CAS too", WARGS(&w));
		if (k == NULL)
			return fail(err, errlen, WFMT "unknown key", WARGS(&w));
		return key_set(k, c, &w, val, err, errlen);
	}
	base = inst_slot(c, kind, src, sec, name, &seen, err, errlen);
	if (base == NULL)
		return -1;
	k = find_key(inst_kind[kind].prefix, true, key, &bit);
	if (k == NULL)
		return fail(err, errlen, WFMT "unknown key", WARGS(&w));
	if (key_set(k, base, &w, val, err, errlen) < 0)
		return -1;
	*seen |= 1u << bit;
	return 0;
}

/* The first required key of an instance that was not given, or NULL. */
static const char *
missing_key(const char *prefix, uint32_t seen)
{
	unsigned int i, b = 0;

	for (i = 0; i < RTE_DIM(keys); i++) {
		if (!keys[i].instance || strcmp(keys[i].section, prefix) != 0)
			continue;
		if (keys[i].def == NULL && !(seen & (1u << b)))
			return keys[i].name;
		b++;
	}
	return NULL;
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
	/* An empty file is more likely truncated or the wrong file than a
	 * wish for the built-in defaults (which running without -c gives). */
	if (!in_section)
		return fail(err, errlen, "%s: no [section] in it: an empty configuration "
			    "(run without -c for the built-in defaults)", path);
	return 0;
}

/* Copy path into an anonymous memory file; *fd_path names it for fopen. */
static int
snapshot_file(const char *path, char *fd_path, size_t fd_path_len, int *fd,
	      char *err, size_t errlen)
{
	char buf[4096];
	size_t n;
	unsigned int lineno = 1;
	bool at_bol = true;
	unsigned char prev = '\n';
	FILE *in = fopen(path, "r");

	if (in == NULL)
		return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	*fd = memfd_create("sword-config", 0);
	if (*fd < 0) {
		fclose(in);
		return fail(err, errlen, "%s: memfd_create: %s", path, strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		size_t i;

		/*
		 * Text only: a binary file would otherwise fail later as a
		 * "line too long" or a bad key.  '#' after blank or at a line's
		 * start begins a comment as ';' does (rte_cfgfile knows only
		 * ';'; our values never contain '#').
		 */
		for (i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)buf[i];

			if ((ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') || ch == 0x7f) {
				fclose(in);
				close(*fd);
				return fail(err, errlen, "%s: line %u: byte 0x%02x: a binary "
					    "file, not an INI configuration", path, lineno, ch);
			}
			if (ch == '#' && (at_bol || prev == ' ' || prev == '\t'))
				buf[i] = ';';
			if (ch == '\n')
				lineno++;
			at_bol = ch == '\n';
			prev = ch;
		}
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
	FILE *logf, *f, *prev_log;
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
	prev_log = rte_log_get_stream();    /* swordd's own stream, on a reload */
	logf = open_memstream(&logbuf, &logsz);
	if (logf != NULL)
		rte_openlog_stream(logf);
	cfg = rte_cfgfile_load(memfd_path, 0);
	close(memfd);
	if (logf != NULL) {
		rte_openlog_stream(prev_log);
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
			if (kind > SEC_GLOBAL) {
				uint32_t *seen;

				if (inst_slot(c, kind, path, secnames[s], name, &seen,
					      err, errlen) == NULL)
					goto out;
			}
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
	/* S7 (lib/serializer/ser_word.c): an op of a connection whose life
	 * ended holds its words undecided for the longer of these two, long
	 * enough to have run or died; pending_expire_ms 0 is "never abandon",
	 * and with no hold-off either the hold was 0: a real op of an ended
	 * life still in flight could land after a decision (issue #29,
	 * finding 9: a CAS answered original 0xa1 while memory held 0) */
	if (c->atomic.pending_expire_ms == 0 && c->atomic.learn_holdoff_ms == 0)
		return fail(err, errlen, "%s: [atomic] pending_expire_ms: 0 (never) with "
			    "learn_holdoff_ms = 0 leaves the ops of an ended connection no "
			    "hold (ser_word.c S7); set one of them above 0", src);

	for (i = 0; i < c->n_servers; i++) {
		struct sword_server_conf *sv = &c->servers[i];
		const char *miss;

		if (sv->state == SWORD_INST_FREE)
			continue;
		miss = missing_key("server", sv->seen);

		if (miss != NULL)
			return fail(err, errlen, "%s: [server.%s] %s: missing", src,
				    sv->name, miss);
		if (sv->worker >= 0 && sv->worker >= c->workers)
			return fail(err, errlen, "%s: [server.%s] worker: %d but only %u "
				    "worker(s) configured", src, sv->name, sv->worker,
				    c->workers);
		sv->owner = (int16_t)(sv->worker >= 0 ? sv->worker : (int)(i % c->workers));
		for (j = 0; j < i; j++)
			if (c->servers[j].state != SWORD_INST_FREE && c->servers[j].ip == sv->ip) {
				char ip[INET_ADDRSTRLEN];

				inet_ntop(AF_INET, &sv->ip, ip, sizeof(ip));
				return fail(err, errlen, "%s: [server.%s] ip: %s is also "
					    "server.%s", src, sv->name, ip, c->servers[j].name);
			}
	}

	for (i = 0; i < c->n_locks; i++) {
		struct sword_lock_conf *l = &c->locks[i];

		const char *miss = missing_key("lock", l->seen);

		if (miss != NULL)
			return fail(err, errlen, "%s: [lock.%s] %s: missing", src, l->name, miss);
		l->server_idx = -1;
		for (j = 0; j < c->n_servers; j++)
			if (c->servers[j].state != SWORD_INST_FREE &&
			    strcmp(c->servers[j].name, l->server) == 0)
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
	/*
	 * A bypass cannot be made safe under remapping: a release a lane ran,
	 * retransmitted after the switch-over onto the rider's own server QP,
	 * runs a second time there, and the lock has two holders.
	 */
	if (c->failover_bypass && c->remapping)
		return fail(err, errlen, "%s: [ports] failover_bypass: on with [features] "
			    "remapping = on: a request a lane ran would run again on the "
			    "client's own QP after a fail-over (two lock holders)", src);
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

		const char *miss = missing_key("clover", l->seen);

		if (miss != NULL)
			return fail(err, errlen, "%s: [clover.%s] %s: missing", src, l->name,
				    miss);
		l->server_idx = -1;
		for (j = 0; j < c->n_servers; j++)
			if (c->servers[j].state != SWORD_INST_FREE &&
			    strcmp(c->servers[j].name, l->server) == 0)
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

/* Walk every key with its current value: global keys, then each instance. */
static void
config_foreach(const struct sword_config *c,
	       void (*fn)(void *arg, const char *sec, const char *inst,
			  const struct sword_key *k, const char *val),
	       void *arg)
{
	char val[64], secname[80];
	unsigned int i, j, n;
	const struct sword_key *k;

	for (i = 0; i < RTE_DIM(keys); i++) {
		k = &keys[i];
		if (k->instance)
			continue;
		sword_key_format(k, c, val, sizeof(val));
		fn(arg, k->section, NULL, k, val);
	}
	for (i = SEC_SERVER; i < RTE_DIM(inst_kind); i++) {
		n = i == SEC_SERVER ? c->n_servers : i == SEC_LOCK ? c->n_locks : c->n_clover;
		for (j = 0; j < n; j++) {
			const void *base;
			const char *name;

			if (i == SEC_SERVER && c->servers[j].state == SWORD_INST_FREE)
				continue;
			if (i == SEC_SERVER) {
				base = &c->servers[j];
				name = c->servers[j].name;
			} else if (i == SEC_LOCK) {
				base = &c->locks[j];
				name = c->locks[j].name;
			} else {
				base = &c->clover_layouts[j];
				name = c->clover_layouts[j].name;
			}
			snprintf(secname, sizeof(secname), "%s.%s", inst_kind[i].prefix, name);
			for (k = keys; k < keys + RTE_DIM(keys); k++) {
				if (!k->instance || strcmp(k->section, inst_kind[i].prefix) != 0)
					continue;
				sword_key_format(k, base, val, sizeof(val));
				fn(arg, secname, name, k, val);
			}
		}
	}
}

static void
print_one(void *arg, const char *sec, const char *inst, const struct sword_key *k,
	  const char *val)
{
	(void)inst;
	fprintf(arg, "  %s.%s %s\n", sec, k->name, val);
}

void
sword_config_print(const struct sword_config *c, FILE *f)
{
	unsigned int i;

	fprintf(f, "config: %s\n", c->source);
	config_foreach(c, print_one, f);
	for (i = 0; i < c->n_servers; i++)
		if (c->servers[i].state != SWORD_INST_FREE)
			fprintf(f, "  server.%s owned by worker %u\n", c->servers[i].name,
				sword_config_server_worker(c, i));
	fprintf(f, "  hash %016" PRIx64 "\n", sword_config_hash(c));
}

void
sword_config_foreach(const struct sword_config *c,
		     void (*fn)(void *arg, const char *sec, const char *inst,
				const struct sword_key *k, const char *val),
		     void *arg)
{
	config_foreach(c, fn, arg);
}

static void
hash_one(void *arg, const char *sec, const char *inst, const struct sword_key *k,
	 const char *val)
{
	const char *parts[] = { sec, ".", k->name, "=", val, "\n" };
	uint64_t *h = arg;
	unsigned int i;
	const char *p;

	(void)inst;
	for (i = 0; i < RTE_DIM(parts); i++)
		for (p = parts[i]; *p != '\0'; p++) {
			*h ^= (unsigned char)*p;
			*h *= 0x100000001b3ULL;
		}
}

uint64_t
sword_config_hash(const struct sword_config *c)
{
	uint64_t h = 0xcbf29ce484222325ULL;     /* FNV-1a 64 */

	config_foreach(c, hash_one, &h);
	return h;
}

void
sword_config_print_keys(FILE *f)
{
	char range[64];
	unsigned int i;

	fprintf(f, "# section\tkey\ttype\tdefault\treload\tdoc\n");
	for (i = 0; i < RTE_DIM(keys); i++) {
		const struct sword_key *k = &keys[i];

		sword_key_describe(k, range, sizeof(range));
		fprintf(f, "%s%s\t%s\t%s\t%s\t%s\t%s\n", k->section,
			k->instance ? ".NAME" : "", k->name, range,
			k->def != NULL ? k->def : "(required)",
			(k->flags & SWORD_KEY_LIVE) ? "live" : "restart", k->doc);
	}
}

/* ---------------------------------------------------------------------- */
/* Reload (SIGHUP) */

static void
append(char *msg, size_t len, const char *fmt, ...)
{
	size_t l = strlen(msg);
	va_list ap;

	if (l >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg + l, len - l, fmt, ap);
	va_end(ap);
}

/* Instance i of kind in c (NULL: FREE slot or out of range), its name. */
static const void *
inst_get(const struct sword_config *c, enum sec_kind kind, unsigned int i,
	 const char **name, uint8_t *state)
{
	switch (kind) {
	case SEC_SERVER:
		if (i >= c->n_servers || c->servers[i].state == SWORD_INST_FREE)
			return NULL;
		*name = c->servers[i].name;
		*state = c->servers[i].state;
		return &c->servers[i];
	case SEC_LOCK:
		if (i >= c->n_locks)
			return NULL;
		*name = c->locks[i].name;
		*state = c->locks[i].state;
		return &c->locks[i];
	case SEC_CLOVER_LAYOUT:
		if (i >= c->n_clover)
			return NULL;
		*name = c->clover_layouts[i].name;
		*state = c->clover_layouts[i].state;
		return &c->clover_layouts[i];
	default:
		return NULL;
	}
}

static unsigned int
inst_count(const struct sword_config *c, enum sec_kind kind)
{
	return kind == SEC_SERVER ? c->n_servers : kind == SEC_LOCK ? c->n_locks
									 : c->n_clover;
}

/* Index of [kind.name] in c (FREE slots skipped), or -1. */
static int
inst_find(const struct sword_config *c, enum sec_kind kind, const char *name)
{
	const char *nm;
	uint8_t st;

	for (unsigned int i = 0; i < inst_count(c, kind); i++)
		if (inst_get(c, kind, i, &nm, &st) != NULL && strcmp(nm, name) == 0)
			return (int)i;
	return -1;
}

/* The first key of two instances of kind that differs, or NULL. */
static const struct sword_key *
inst_diff(enum sec_kind kind, const void *a, const void *b, char *va, char *vb,
	  size_t len)
{
	for (unsigned int i = 0; i < RTE_DIM(keys); i++) {
		const struct sword_key *k = &keys[i];

		if (!k->instance || strcmp(k->section, inst_kind[kind].prefix) != 0)
			continue;
		sword_key_format(k, a, va, len);
		sword_key_format(k, b, vb, len);
		if (strcmp(va, vb) != 0)
			return k;
	}
	return NULL;
}

/* Do two lock regions on one server share memory (sword_config_validate's
 * rule)? */
static bool
locks_overlap(const struct sword_lock_conf *a, const struct sword_lock_conf *b)
{
	if (!a->rkey_any && !b->rkey_any && a->rkey != b->rkey)
		return false;
	return a->base < b->base + b->length && b->base < a->base + a->length;
}

/*
 * The sections of one kind: added, removed, kept (identical or refused).
 * Counts changes into *changes and refusals into *refused.
 */
static void
plan_instances(const struct sword_config *cur, const struct sword_config *next,
	       enum sec_kind kind, char *msg, size_t len, char *why, size_t wlen,
	       unsigned int *changes, unsigned int *refused)
{
	const char *pre = inst_kind[kind].prefix;
	char va[64], vb[64];
	const char *nm;
	uint8_t st;

	for (unsigned int i = 0; i < inst_count(cur, kind); i++) {
		const void *a = inst_get(cur, kind, i, &nm, &st);
		const struct sword_key *k;
		int j;

		if (a == NULL)
			continue;
		j = inst_find(next, kind, nm);
		if (j < 0) {
			if (st == SWORD_INST_RETIRING)
				continue;   /* already on its way out */
			append(msg, len, "%s-[%s.%s]", msg[0] ? "; " : "", pre, nm);
			(*changes)++;
			continue;
		}
		if (st == SWORD_INST_RETIRING) {
			append(why, wlen, "%s[%s.%s]: still draining from an earlier reload; "
			       "add it again once it is gone (swordctl reload --wait)",
			       *refused ? "; " : "", pre, nm);
			(*refused)++;
			continue;
		}
		{
			const char *dn;
			uint8_t dst;
			const void *b = inst_get(next, kind, (unsigned int)j, &dn, &dst);

			k = inst_diff(kind, a, b, va, vb, sizeof(va));
		}
		if (k != NULL) {
			append(why, wlen, "%s[%s.%s] %s: %s -> %s: a section's keys are fixed "
			       "(remove the section and add it under a new name)",
			       *refused ? "; " : "", pre, nm, k->name, va, vb);
			(*refused)++;
		}
	}
	for (unsigned int j = 0; j < inst_count(next, kind); j++) {
		const void *b = inst_get(next, kind, j, &nm, &st);

		if (b == NULL || inst_find(cur, kind, nm) >= 0)
			continue;
		if (kind == SEC_CLOVER_LAYOUT) {
			const struct sword_clover_conf *l = b;

			/* lib/clover matches the first region: a draining one
			 * would shadow the new one */
			for (unsigned int i = 0; i < cur->n_clover; i++) {
				const struct sword_clover_conf *o = &cur->clover_layouts[i];
				uint64_t le = l->length ? l->base + l->length - 1 : UINT64_MAX;
				uint64_t oe = o->length ? o->base + o->length - 1 : UINT64_MAX;

				if (o->state != SWORD_INST_RETIRING || strcmp(o->server, l->server) ||
				    (!o->rkey_any && !l->rkey_any && o->rkey != l->rkey) ||
				    l->base > oe || o->base > le)
					continue;
				append(why, wlen, "%s[clover.%s] base: region overlaps clover.%s, "
				       "still draining from an earlier reload",
				       *refused ? "; " : "", nm, o->name);
				(*refused)++;
			}
		}
		if (kind == SEC_SERVER) {
			const struct sword_server_conf *sv = b;

			/* a retiring server keeps its address until it is gone */
			for (unsigned int i = 0; i < cur->n_servers; i++)
				if (cur->servers[i].state == SWORD_INST_RETIRING &&
				    cur->servers[i].ip == sv->ip) {
					inet_ntop(AF_INET, &sv->ip, va, sizeof(va));
					append(why, wlen, "%s[server.%s] ip: %s is server.%s, "
					       "still draining from an earlier reload",
					       *refused ? "; " : "", nm, va, cur->servers[i].name);
					(*refused)++;
				}
		}
		if (kind == SEC_LOCK) {
			const struct sword_lock_conf *l = b;

			for (unsigned int i = 0; i < cur->n_locks; i++) {
				const struct sword_lock_conf *o = &cur->locks[i];

				if (o->state == SWORD_INST_RETIRING &&
				    strcmp(o->server, l->server) == 0 && locks_overlap(o, l)) {
					append(why, wlen, "%s[lock.%s] base: region overlaps lock.%s, "
					       "still draining from an earlier reload",
					       *refused ? "; " : "", nm, o->name);
					(*refused)++;
				}
			}
		}
		append(msg, len, "%s+[%s.%s]", msg[0] ? "; " : "", pre, nm);
		(*changes)++;
	}
}

int
sword_config_reload_plan(const struct sword_config *cur, const struct sword_config *next,
			 char *msg, size_t len)
{
	char a[64], b[64];
	char *why = calloc(1, len);
	unsigned int i, live = 0, refused = 0, sections = 0;

	msg[0] = '\0';
	if (why == NULL) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	for (i = 0; i < RTE_DIM(keys); i++) {
		const struct sword_key *k = &keys[i];

		if (k->instance)
			continue;
		sword_key_format(k, cur, a, sizeof(a));
		sword_key_format(k, next, b, sizeof(b));
		if (strcmp(a, b) == 0)
			continue;
		if (k->flags & SWORD_KEY_LIVE) {
			append(msg, len, "%s[%s] %s: %s -> %s", msg[0] ? "; " : "",
			       k->section, k->name, a, b);
			live++;
			continue;
		}
		append(why, len, "%s[%s] %s: %s -> %s", refused ? "; " : "", k->section,
		       k->name, a, b);
		refused++;
	}
	plan_instances(cur, next, SEC_SERVER, msg, len, why, len, &sections, &refused);
	plan_instances(cur, next, SEC_LOCK, msg, len, why, len, &sections, &refused);
	plan_instances(cur, next, SEC_CLOVER_LAYOUT, msg, len, why, len, &sections,
		       &refused);
	/* remapping's lanes are per server and sized at start (lib/remap) */
	if (sections > 0 && cur->remapping) {
		append(why, len, "%s%s: servers, lock regions and Clover layouts are fixed "
		       "at start with [features] remapping = on (lanes are sized at start)",
		       refused ? "; " : "", msg);
		refused++;
	}
	if (refused > 0) {
		/* the file (or --set) the refused values come from */
		snprintf(msg, len, "%s: %s", next->source, why);
		free(why);
		return -1;
	}
	free(why);
	return (int)(live + sections);
}

int
sword_config_reload_merge(const struct sword_config *cur, const struct sword_config *next,
			  unsigned int auto_workers, struct sword_config *out,
			  char *err, size_t errlen)
{
	unsigned int i;

	*out = *cur;
	sword_config_apply_live(out, next);
	if (auto_workers == 0 || auto_workers > out->workers)
		auto_workers = out->workers;
	for (i = 0; i < out->n_servers; i++)
		if (out->servers[i].state == SWORD_INST_ACTIVE &&
		    inst_find(next, SEC_SERVER, out->servers[i].name) < 0)
			out->servers[i].state = SWORD_INST_RETIRING;
	for (i = 0; i < out->n_locks; i++)
		if (out->locks[i].state == SWORD_INST_ACTIVE &&
		    inst_find(next, SEC_LOCK, out->locks[i].name) < 0)
			out->locks[i].state = SWORD_INST_RETIRING;
	for (i = 0; i < out->n_clover; i++)
		if (out->clover_layouts[i].state == SWORD_INST_ACTIVE &&
		    inst_find(next, SEC_CLOVER_LAYOUT, out->clover_layouts[i].name) < 0)
			out->clover_layouts[i].state = SWORD_INST_RETIRING;
	for (i = 0; i < next->n_servers; i++) {
		const struct sword_server_conf *sv = &next->servers[i];
		unsigned int slot;

		if (inst_find(out, SEC_SERVER, sv->name) >= 0)
			continue;
		/* a new slot while there is one: a FREE slot's counters are
		 * another server's history */
		if (out->n_servers < SWORD_MAX_SERVERS) {
			slot = out->n_servers++;
		} else {
			for (slot = 0; slot < SWORD_MAX_SERVERS; slot++)
				if (out->servers[slot].state == SWORD_INST_FREE)
					break;
			if (slot == SWORD_MAX_SERVERS)
				return fail(err, errlen, "%s: [server.%s]: no server slot left "
					    "(%d, counting removed ones until a restart)",
					    next->source, sv->name, SWORD_MAX_SERVERS);
		}
		out->servers[slot] = *sv;
		out->servers[slot].state = SWORD_INST_ACTIVE;
		out->servers[slot].owner = (int16_t)(sv->worker >= 0 ? sv->worker
						     : (int)(slot % auto_workers));
	}
	for (i = 0; i < next->n_locks; i++) {
		const struct sword_lock_conf *l = &next->locks[i];
		struct sword_lock_conf *nl;

		if (inst_find(out, SEC_LOCK, l->name) >= 0)
			continue;
		if (out->n_locks >= SWORD_MAX_LOCKS)
			return fail(err, errlen, "%s: [lock.%s]: too many lock regions (max "
				    "%d, counting draining ones)", next->source, l->name,
				    SWORD_MAX_LOCKS);
		nl = &out->locks[out->n_locks];
		*nl = *l;
		nl->state = SWORD_INST_ACTIVE;
		nl->server_idx = inst_find(out, SEC_SERVER, l->server);
		if (nl->server_idx < 0 ||
		    out->servers[nl->server_idx].state != SWORD_INST_ACTIVE)
			return fail(err, errlen, "%s: [lock.%s] server: no [server.%s] section",
				    next->source, l->name, l->server);
		out->n_locks++;
	}
	for (i = 0; i < next->n_clover; i++) {
		const struct sword_clover_conf *l = &next->clover_layouts[i];
		struct sword_clover_conf *nl;

		if (inst_find(out, SEC_CLOVER_LAYOUT, l->name) >= 0)
			continue;
		if (out->n_clover >= SWORD_MAX_CLOVER)
			return fail(err, errlen, "%s: [clover.%s]: too many Clover layouts (max "
				    "%d, counting draining ones)", next->source, l->name,
				    SWORD_MAX_CLOVER);
		nl = &out->clover_layouts[out->n_clover];
		*nl = *l;
		nl->state = SWORD_INST_ACTIVE;
		nl->server_idx = inst_find(out, SEC_SERVER, l->server);
		if (nl->server_idx < 0 ||
		    out->servers[nl->server_idx].state != SWORD_INST_ACTIVE)
			return fail(err, errlen, "%s: [clover.%s] server: no [server.%s] "
				    "section", next->source, l->name, l->server);
		out->n_clover++;
	}
	snprintf(out->source, sizeof(out->source), "%s", next->source);
	return 0;
}

bool
sword_config_sections_change(const struct sword_config *cur,
			     const struct sword_config *next)
{
	const char *nm;
	uint8_t st;

	for (int kind = SEC_SERVER; kind <= SEC_CLOVER_LAYOUT; kind++) {
		for (unsigned int i = 0; i < inst_count(cur, kind); i++)
			if (inst_get(cur, kind, i, &nm, &st) != NULL &&
			    st == SWORD_INST_ACTIVE && inst_find(next, kind, nm) < 0)
				return true;
		for (unsigned int i = 0; i < inst_count(next, kind); i++)
			if (inst_get(next, kind, i, &nm, &st) != NULL &&
			    inst_find(cur, kind, nm) < 0)
				return true;
	}
	return false;
}

unsigned int
sword_config_drop_retiring(struct sword_config *c)
{
	unsigned int i, j = 0, n = 0;

	for (i = 0; i < c->n_locks; i++) {
		if (c->locks[i].state == SWORD_INST_RETIRING) {
			n++;
			continue;
		}
		if (j != i)
			c->locks[j] = c->locks[i];
		j++;
	}
	c->n_locks = j;
	for (i = 0, j = 0; i < c->n_clover; i++) {
		if (c->clover_layouts[i].state == SWORD_INST_RETIRING) {
			n++;
			continue;
		}
		if (j != i)
			c->clover_layouts[j] = c->clover_layouts[i];
		j++;
	}
	c->n_clover = j;
	for (i = 0; i < c->n_servers; i++)
		if (c->servers[i].state == SWORD_INST_RETIRING) {
			memset(&c->servers[i], 0, sizeof(c->servers[i]));
			c->servers[i].state = SWORD_INST_FREE;
			n++;
		}
	return n;
}

void
sword_config_retiring_text(const struct sword_config *c, char *buf, size_t len)
{
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < c->n_locks; i++)
		if (c->locks[i].state == SWORD_INST_RETIRING)
			append(buf, len, "%s[lock.%s]", buf[0] ? " " : "", c->locks[i].name);
	for (i = 0; i < c->n_clover; i++)
		if (c->clover_layouts[i].state == SWORD_INST_RETIRING)
			append(buf, len, "%s[clover.%s]", buf[0] ? " " : "",
			       c->clover_layouts[i].name);
	for (i = 0; i < c->n_servers; i++)
		if (c->servers[i].state == SWORD_INST_RETIRING)
			append(buf, len, "%s[server.%s]", buf[0] ? " " : "",
			       c->servers[i].name);
}

void
sword_config_apply_live(struct sword_config *cur, const struct sword_config *next)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(keys); i++) {
		const struct sword_key *k = &keys[i];

		if (k->instance || !(k->flags & SWORD_KEY_LIVE))
			continue;
		/* one aligned word per key: a reader sees old or new, never torn */
		switch (k->size) {
		case 2:
			__atomic_store_n((uint16_t *)((char *)cur + k->offset),
					 *(const uint16_t *)((const char *)next + k->offset),
					 __ATOMIC_RELAXED);
			break;
		case 4:
			__atomic_store_n((uint32_t *)((char *)cur + k->offset),
					 *(const uint32_t *)((const char *)next + k->offset),
					 __ATOMIC_RELAXED);
			break;
		case 8:
			__atomic_store_n((uint64_t *)((char *)cur + k->offset),
					 *(const uint64_t *)((const char *)next + k->offset),
					 __ATOMIC_RELAXED);
			break;
		default:
			memcpy((char *)cur + k->offset, (const char *)next + k->offset, k->size);
		}
	}
}

int
sword_config_find_server(const struct sword_config *c, const char *s)
{
	struct in_addr a;
	unsigned int i;

	for (i = 0; i < c->n_servers; i++)
		if (c->servers[i].state != SWORD_INST_FREE &&
		    strcmp(c->servers[i].name, s) == 0)
			return (int)i;
	if (inet_pton(AF_INET, s, &a) == 1)
		for (i = 0; i < c->n_servers; i++)
			if (c->servers[i].state != SWORD_INST_FREE &&
			    c->servers[i].ip == a.s_addr)
				return (int)i;
	return -1;
}
