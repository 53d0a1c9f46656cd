/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_config_table.c — the config key table (lib/sword/sword_config.h)
 * is sound on its own: every default parses as its key, no key twice, the
 * built-in defaults validate, and a value printed by --check-config reads
 * back as the same value (so the hash, telemetry and the printed config
 * describe what runs).
 *
 * Why it exists: the table drives parsing, defaults, --check-config and
 * telemetry; a bad row would otherwise show up only as a daemon that
 * starts with a value nobody wrote.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sword_config.h"

START_TEST(t_table_sound)
{
	char err[256] = "";

	ck_assert_msg(sword_config_check_table(err, sizeof(err)) == 0, "%s", err);
}
END_TEST

START_TEST(t_defaults_validate)
{
	struct sword_config c;
	char err[256] = "";

	sword_config_defaults(&c);
	ck_assert_msg(sword_config_validate(&c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(c.atomic.pmtu, 4096);
}
END_TEST

/* Every global key: set it to its printed value through --set: the hash
 * does not change (print and parse agree). */
START_TEST(t_print_parses_back)
{
	struct sword_config c;
	const struct sword_key *keys;
	unsigned int i, n;
	char err[256], val[64], set[160];
	uint64_t h;

	sword_config_defaults(&c);
	ck_assert_int_eq(sword_config_set(&c, "server.m.ip=10.0.0.1", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_set(&c, "lock.l.server=m", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_set(&c, "lock.l.base=0x1000", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_set(&c, "lock.l.length=64", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_set(&c, "lock.l.rkey=0x42", err, sizeof(err)), 0);
	h = sword_config_hash(&c);
	keys = sword_config_keys(&n);
	for (i = 0; i < n; i++) {
		const void *base = &c;
		const char *sec = keys[i].section;

		if (keys[i].instance && strcmp(sec, "clover") == 0)
			continue;                  /* no layout configured */
		if (keys[i].instance && strcmp(sec, "server") == 0) {
			base = &c.servers[0];
			sec = "server.m";
		} else if (keys[i].instance) {
			base = &c.locks[0];
			sec = "lock.l";
		}
		sword_key_format(&keys[i], base, val, sizeof(val));
		snprintf(set, sizeof(set), "%s.%s=%s", sec, keys[i].name, val);
		ck_assert_msg(sword_config_set(&c, set, err, sizeof(err)) == 0, "%s: %s", set, err);
		ck_assert_msg(sword_config_hash(&c) == h, "%s changed the config", set);
	}
	ck_assert_int_eq(sword_config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

/* A different value gives a different hash (the metric moves on reload). */
START_TEST(t_hash_changes)
{
	struct sword_config c;
	char err[256];
	uint64_t h;

	sword_config_defaults(&c);
	h = sword_config_hash(&c);
	ck_assert_int_eq(sword_config_set(&c, "stats.interval=5", err, sizeof(err)), 0);
	ck_assert(sword_config_hash(&c) != h);
}
END_TEST

/* SIGHUP plan: live keys apply, anything else refuses the whole reload. */
START_TEST(t_reload_plan)
{
	static struct sword_config cur, next;
	char err[256], msg[512];

	sword_config_defaults(&cur);
	next = cur;
	ck_assert_int_eq(sword_config_reload_plan(&cur, &next, msg, sizeof(msg)), 0);

	ck_assert_int_eq(sword_config_set(&next, "stats.interval=5", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_reload_plan(&cur, &next, msg, sizeof(msg)), 1);
	ck_assert_msg(strstr(msg, "[stats] interval: 0 -> 5") != NULL, "%s", msg);

	ck_assert_int_eq(sword_config_set(&next, "atomic.pmtu=1024", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_reload_plan(&cur, &next, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "[atomic] pmtu: 4096 -> 1024") != NULL, "%s", msg);
	ck_assert_msg(strstr(msg, "interval") == NULL, "live key listed as refused: %s", msg);

	/* sections: added and removed live, a kept one's keys fixed */
	next = cur;
	ck_assert_int_eq(sword_config_set(&next, "server.m.ip=10.0.0.1", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&next, err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_reload_plan(&cur, &next, msg, sizeof(msg)), 1);
	ck_assert_msg(strstr(msg, "+[server.m]") != NULL, "%s", msg);
	{
		static struct sword_config run, next2;

		ck_assert_int_eq(sword_config_reload_merge(&cur, &next, 1, &run, err,
							   sizeof(err)), 0);
		ck_assert_uint_eq(run.n_servers, 1);
		ck_assert(sword_config_hash(&run) == sword_config_hash(&next));
		next2 = next;
		ck_assert_int_eq(sword_config_set(&next2, "server.m.ip=10.0.0.2", err,
						  sizeof(err)), 0);
		ck_assert_int_eq(sword_config_reload_plan(&run, &next2, msg, sizeof(msg)), -1);
		ck_assert_msg(strstr(msg, "[server.m] ip: 10.0.0.1 -> 10.0.0.2") != NULL,
			      "%s", msg);
		/* removed: RETIRING, then dropped; its slot stays (FREE) */
		ck_assert_int_eq(sword_config_reload_plan(&run, &cur, msg, sizeof(msg)), 1);
		ck_assert_msg(strstr(msg, "-[server.m]") != NULL, "%s", msg);
		ck_assert_int_eq(sword_config_reload_merge(&run, &cur, 1, &next2, err,
							   sizeof(err)), 0);
		ck_assert_uint_eq(next2.servers[0].state, SWORD_INST_RETIRING);
		/* back before it is gone: refused */
		ck_assert_int_eq(sword_config_reload_plan(&next2, &next, msg, sizeof(msg)), -1);
		ck_assert_msg(strstr(msg, "still draining") != NULL, "%s", msg);
		ck_assert_uint_eq(sword_config_drop_retiring(&next2), 1);
		ck_assert_uint_eq(next2.servers[0].state, SWORD_INST_FREE);
		ck_assert(sword_config_hash(&next2) == sword_config_hash(&cur));
		ck_assert_int_eq(sword_config_find_server(&next2, "m"), -1);
	}
	/* a Clover layout: added, its keys fixed */
	next = cur;
	ck_assert_int_eq(sword_config_set(&next, "server.m.ip=10.0.0.1", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_set(&next, "clover.v.server=m", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_validate(&next, err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_reload_plan(&cur, &next, msg, sizeof(msg)), 2);
	ck_assert_msg(strstr(msg, "+[clover.v]") != NULL, "%s", msg);
	{
		static struct sword_config run, next2;

		ck_assert_int_eq(sword_config_reload_merge(&cur, &next, 1, &run, err,
							   sizeof(err)), 0);
		ck_assert_uint_eq(run.n_clover, 1);
		ck_assert_int_eq(run.clover_layouts[0].server_idx, 0);
		next2 = next;
		ck_assert_int_eq(sword_config_set(&next2, "clover.v.key_offset=16", err,
						  sizeof(err)), 0);
		ck_assert_int_eq(sword_config_reload_plan(&run, &next2, msg, sizeof(msg)), -1);
		ck_assert_msg(strstr(msg, "[clover.v] key_offset: 8 -> 16") != NULL, "%s", msg);
	}
	next = cur;
	ck_assert_int_eq(sword_config_set(&next, "features.remapping=on", err, sizeof(err)), 0);
	cur.remapping = true;
	ck_assert_int_eq(sword_config_set(&next, "server.m.ip=10.0.0.1", err, sizeof(err)), 0);
	ck_assert_int_eq(sword_config_reload_plan(&cur, &next, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "remapping") != NULL, "%s", msg);
	cur.remapping = false;

	next = cur;
	ck_assert_int_eq(sword_config_set(&next, "stats.interval=7", err, sizeof(err)), 0);
	sword_config_apply_live(&cur, &next);
	ck_assert_uint_eq(cur.stats_interval, 7);
	ck_assert(sword_config_hash(&cur) == sword_config_hash(&next));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("config_table");
	TCase *tc = tcase_create("table");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, t_table_sound);
	tcase_add_test(tc, t_defaults_validate);
	tcase_add_test(tc, t_print_parses_back);
	tcase_add_test(tc, t_hash_changes);
	tcase_add_test(tc, t_reload_plan);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
