/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.h — what the benches of tests/serializer share: a monotonic
 * clock, sorting doubles for medians, and the callgrind toggle (a no-op
 * where valgrind's header is not installed), so each bench counts only
 * the code it measures under --collect-atstart=no.
 */
#ifndef SWORD_BENCH_UTIL_H
#define SWORD_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)
#endif

/* Seconds, CLOCK_MONOTONIC. */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* qsort comparator for doubles, ascending. */
static inline int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (v is sorted in place); 0 if empty. */
static inline double
median_d(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_d);
	return n ? v[n / 2] : 0;
}

#endif /* SWORD_BENCH_UTIL_H */
