/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shorter TSC calibration during rte_eal_init (issue #30: a restart's
 * outage is the process start).
 *
 * DPDK 22.11 takes the TSC frequency from CPUID leaf 0x15 or from
 * MSR_PLATFORM_INFO (through /dev/cpu/0/msr).  Where neither answers (AMD
 * CPUs, most VMs, a kernel without the msr module: the machines here) it
 * measures it: CLOCK_MONOTONIC_RAW and the TSC read back to back, a 100 ms
 * nanosleep, both read again, the ratio rounded to 10 MHz
 * (lib/eal/linux/eal_timer.c get_tsc_freq).  That sleep was 100 ms of a
 * SIGKILLed swordd's 0.24-0.26 s from main to forwarding.
 *
 * While swordd's main is inside rte_eal_init (swordd_tsc_calibration_fast),
 * the first sleep of exactly that length is cut to SWORD_TSC_SLEEP_NS.  The
 * measurement is unchanged: its error is the time between the two reads at
 * each end (tens of ns), over 10 ms a few parts per million, well inside
 * the 10 MHz rounding (about 0.4%), and swordd uses the frequency only for
 * timeouts of a millisecond and more.  Every other sleep, and every sleep
 * after rte_eal_init, is passed on unchanged.
 *
 * How: swordd defines nanosleep itself.  librte_eal.so refers to it, so
 * the linker exports this definition and the dynamic linker binds the EAL's
 * call to it (an executable's symbols come first); it sleeps with
 * clock_nanosleep, as glibc's own nanosleep does.  Measured on the dev
 * machine (net_null ports, --no-huge): main to forwarding 0.24-0.26 s,
 * EAL 0.16-0.18 s before; 0.15-0.17 s and 0.08-0.09 s with it.
 */
#include <errno.h>
#include <stdbool.h>
#include <time.h>

#include "tsc_calibration.h"

#define DPDK_TSC_SLEEP_NS 100000000L  /* get_tsc_freq's NS_PER_SEC / 10 */
#define SWORD_TSC_SLEEP_NS 10000000L

static bool calibration_fast;

void
swordd_tsc_calibration_fast(bool on)
{
	calibration_fast = on;
}

int
nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct timespec t;
	int rc;

	if (req == NULL) {
		errno = EFAULT;
		return -1;
	}
	t = *req;
	if (calibration_fast && t.tv_sec == 0 && t.tv_nsec == DPDK_TSC_SLEEP_NS) {
		/* the first one only: the EAL calibrates before it probes
		 * any device, so a driver's own sleep stays whole */
		calibration_fast = false;
		t.tv_nsec = SWORD_TSC_SLEEP_NS;
	}
	rc = clock_nanosleep(CLOCK_REALTIME, 0, &t, rem);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}
