/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SWORDD_TSC_CALIBRATION_H
#define SWORDD_TSC_CALIBRATION_H

#include <stdbool.h>

/* On around rte_eal_init only: DPDK's 100 ms TSC measurement sleeps 10 ms
 * (tsc_calibration.c says why that is as exact). */
void swordd_tsc_calibration_fast(bool on);

#endif
