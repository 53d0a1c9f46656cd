/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_state.c — state segments (lib/sword/sword_state.h) on real files:
 * a segment is adopted only by a process of the same boot, shape and
 * format, never by two processes at once; anything else (not a segment,
 * truncated, another format, shape or boot, a header never completed) is
 * refused with a reason and starts over with every byte zero.
 *
 * Why it exists: an adopted segment answers clients from what it holds;
 * half trusting a foreign one would answer them from another life's
 * records.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sword_state.h"

#define SHAPE 0x1234abcdull
#define LEN 10000u

static char dir[] = "/tmp/sword-state-test-XXXXXX";
static char path[512];

static void
setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* a directory swordd makes itself */
	snprintf(path, sizeof(path), "%s/sub/seg.w0", dir);
}

static void
teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/sword-state-test-XXXXXX");
}

/* A segment with byte pattern v, closed as a killed process leaves it. */
static void
make(uint8_t v)
{
	struct sword_state st;
	char why[512];

	ck_assert_int_eq(sword_state_open(&st, path, SHAPE, LEN, true, why, sizeof(why)), 0);
	memset(st.data, v, LEN);
	sword_state_close(&st);
}

static bool
opens_adopted(uint64_t shape, size_t len, bool ok, char *why, size_t wl, uint8_t *first)
{
	struct sword_state st;
	bool adopted;

	ck_assert_int_eq(sword_state_open(&st, path, shape, len, ok, why, wl), 0);
	adopted = st.adopted;
	*first = ((uint8_t *)st.data)[0];
	for (size_t i = 0; !adopted && i < len; i++)
		ck_assert_msg(((uint8_t *)st.data)[i] == 0, "a refused segment not zero at %zu", i);
	sword_state_close(&st);
	return adopted;
}

static void
patch(off_t off, const void *b, size_t n)
{
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, b, n, off), (ssize_t)n);
	close(fd);
}

START_TEST(t_adopt_same)
{
	char why[512];
	uint8_t first;

	make(0xa5);
	ck_assert(opens_adopted(SHAPE, LEN, true, why, sizeof(why), &first));
	ck_assert_uint_eq(first, 0xa5);
	ck_assert_msg(strstr(why, "adopted (generation 2)") != NULL, "%s", why);
}
END_TEST

/* _i: what is wrong with the file */
START_TEST(t_refused)
{
	static const char *const want[] = {
		"not a swordd state segment", "another build or configuration",
		"another build or configuration", "segment format", "from another boot",
		"truncated", "never completed", "does not keep state",
	};
	char why[512];
	uint8_t first;
	uint64_t shape = SHAPE;
	size_t len = LEN;
	bool ok = true;

	make(0xa5);
	switch (_i) {
	case 0: patch(0, "XXXXXXXX", 8); break;                 /* magic */
	case 1: shape = SHAPE + 1; break;                        /* another shape */
	case 2: len = LEN + 64; break;                           /* another size */
	case 3: patch(8, "\x07\0\0\0", 4); break;                /* another format */
	case 4: patch(40, "0000", 4); break;                     /* boot id */
	case 5: ck_assert_int_eq(truncate(path, 4096 + 100), 0); break;
	case 6: patch(84, "\0\0\0\0", 4); break;                 /* ready */
	case 7: ok = false; break;                               /* caller says no */
	}
	ck_assert(!opens_adopted(shape, len, ok, why, sizeof(why), &first));
	ck_assert_msg(strstr(why, want[_i]) != NULL, "case %d: %s", _i, why);
	/* and it starts over as a segment of its own: adopted next time */
	ck_assert(opens_adopted(shape, len, true, why, sizeof(why), &first));
}
END_TEST

START_TEST(t_two_processes_never)
{
	struct sword_state st, st2;
	char why[512];
	int status;
	pid_t pid;

	ck_assert_int_eq(sword_state_open(&st, path, SHAPE, LEN, true, why, sizeof(why)), 0);
	pid = fork();
	if (pid == 0)
		_exit(sword_state_open(&st2, path, SHAPE, LEN, true, why, sizeof(why)) == -1 &&
		      strstr(why, "in use by another swordd") ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	sword_state_close(&st);
	/* the holder gone (as a killed process's lock goes), it opens */
	ck_assert_int_eq(sword_state_open(&st, path, SHAPE, LEN, true, why, sizeof(why)), 0);
	ck_assert(st.adopted);
	sword_state_close(&st);
}
END_TEST

/* Runs 1, 2, 3: the segment of run 1, not held by run 2 (fewer workers),
 * is refused by run 3; the one run 2 held is adopted. */
START_TEST(t_chain_of_processes)
{
	struct sword_state st;
	char why[512];

	ck_assert_int_eq(sword_state_open_run(&st, path, SHAPE, LEN, true, 0, 1, why,
					      sizeof(why)), 0);
	sword_state_close(&st);
	ck_assert_int_eq(sword_state_open_run(&st, path, SHAPE, LEN, true, 2, 3, why,
					      sizeof(why)), 0);
	ck_assert_msg(!st.adopted && strstr(why, "older process") != NULL, "%s", why);
	sword_state_close(&st);
	ck_assert_int_eq(sword_state_open_run(&st, path, SHAPE, LEN, true, 3, 4, why,
					      sizeof(why)), 0);
	ck_assert_msg(st.adopted, "%s", why);
	sword_state_close(&st);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("state");
	TCase *tc = tcase_create("segment");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_adopt_same);
	tcase_add_loop_test(tc, t_refused, 0, 8);
	tcase_add_test(tc, t_two_processes_never);
	tcase_add_test(tc, t_chain_of_processes);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
