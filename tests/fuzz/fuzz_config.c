/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_config.c — libFuzzer harness: swordd's configuration parser
 * (lib/sword/sword_config.c) on arbitrary INI text and --set overrides.
 *
 * Why it exists: the config is the one input of swordd that comes from a
 * file an operator edits (and a reload reads it again under a running
 * daemon), so no text may crash it, and whatever it accepts must mean
 * exactly what it says.  Input: INI text, then optionally a line "--" and
 * one --set assignment per line, applied as swordd applies them (stop at
 * the first error).  Oracles:
 *   - every refusal comes with a one-line message;
 *   - a configuration that validates survives a round trip through its
 *     own printed values, both as an INI file and as --set overrides:
 *     the result validates, has the same sword_config_hash, and a reload
 *     from one to the other changes nothing (sword_config_reload_plan 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_ref.h"
#include "sword_config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];

static void
fail_text(const char *what, const char *text)
{
	fprintf(stderr, "%s\n---\n%s\n---\n", what, text ? text : "");
	ref_fail(__FILE__, __LINE__, what, NULL, 0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz-config", 0);
	if (memfd < 0)
		abort();
	snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void
put_file(const char *text, size_t n)
{
	if (ftruncate(memfd, 0) != 0 || pwrite(memfd, text, n, 0) != (ssize_t)n)
		abort();
}

FUZZ_ORACLE static void
check_err(int rc, const char *err, const char *text)
{
	if (rc != 0 && rc != -1)
		fail_text("return value not 0/-1", text);
	if (rc == -1 && (err[0] == '\0' || strchr(err, '\n') != NULL))
		fail_text("refusal without a one-line message", err);
}

/* The printed configuration as an INI file / as --set lines. */
struct printed {
	char *buf;
	size_t len, cap;
	const char *last_sec;
	char last[96];
	bool as_set;
};

static void
add(struct printed *o, const char *s)
{
	size_t n = strlen(s);

	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		if (o->buf == NULL)
			abort();
	}
	memcpy(o->buf + o->len, s, n + 1);
	o->len += n;
}

static void
print_one(void *arg, const char *sec, const char *inst, const struct sword_key *k,
	  const char *val)
{
	struct printed *o = arg;
	char line[256];

	(void)inst;
	if (o->as_set) {
		snprintf(line, sizeof(line), "%s.%s=%s\n", sec, k->name, val);
	} else {
		if (strcmp(o->last, sec) != 0) {
			snprintf(o->last, sizeof(o->last), "%s", sec);
			snprintf(line, sizeof(line), "[%s]\n", sec);
			add(o, line);
		}
		snprintf(line, sizeof(line), "%s = %s\n", k->name, val);
	}
	add(o, line);
}

/* c2 (rebuilt from c's printed values) must be c. */
FUZZ_ORACLE static void
same_config(struct sword_config *c, struct sword_config *c2, const char *how,
	    const char *text)
{
	char err[512], msg[1024];

	if (sword_config_validate(c2, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", how, err);
		fail_text("printed configuration does not validate", text);
	}
	if (sword_config_hash(c) != sword_config_hash(c2)) {
		fprintf(stderr, "%s\n", how);
		fail_text("printed configuration means something else", text);
	}
	if (sword_config_reload_plan(c, c2, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "%s: reload plan: %s\n", how, msg);
		fail_text("reload to the same configuration changes something", text);
	}
}

static void
round_trip(struct sword_config *c)
{
	static struct sword_config c2;
	struct printed o = { 0 };
	char err[512], *line, *save = NULL;
	int rc;

	/* as an INI file */
	sword_config_foreach(c, print_one, &o);
	put_file(o.buf, o.len);
	sword_config_defaults(&c2);
	rc = sword_config_parse_file(&c2, memfd_path, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "%s\n", err);
		fail_text("printed configuration does not parse", o.buf);
	}
	same_config(c, &c2, "as INI", o.buf);

	/* as --set overrides */
	o.len = 0;
	o.last[0] = '\0';
	o.as_set = true;
	sword_config_foreach(c, print_one, &o);
	sword_config_defaults(&c2);
	for (line = strtok_r(o.buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		if (sword_config_set(&c2, line, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			fail_text("printed value refused by --set", line);
		}
	same_config(c, &c2, "as --set", "(--set lines)");
	free(o.buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sword_config c;
	char err[512], *text, *sets, *line, *save = NULL;
	char *pbuf = NULL;
	size_t plen = 0;
	FILE *pf;
	int rc;

	if (size > 16384)
		return -1;
	text = malloc(size + 1);
	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	sets = strstr(text, "\n--\n");
	if (sets != NULL) {
		sets[1] = '\0';
		sets += 4;
	}

	sword_config_defaults(&c);
	put_file(text, strlen(text));
	err[0] = '\0';
	rc = sword_config_parse_file(&c, memfd_path, err, sizeof(err));
	check_err(rc, err, text);
	for (line = sets ? strtok_r(sets, "\n", &save) : NULL; rc == 0 && line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		err[0] = '\0';
		rc = sword_config_set(&c, line, err, sizeof(err));
		check_err(rc, err, line);
	}
	if (rc == 0) {
		err[0] = '\0';
		rc = sword_config_validate(&c, err, sizeof(err));
		check_err(rc, err, text);
	}
	if (rc == 0) {
		pf = open_memstream(&pbuf, &plen);
		if (pf != NULL) {
			sword_config_print(&c, pf);
			fclose(pf);
			free(pbuf);
		}
		round_trip(&c);
	}
	free(text);
	return 0;
}
