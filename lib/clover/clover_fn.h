/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clover_fn.h — Clover steering as a swordd function.  main.c registers it:
 *   sword_feature_register(SWORD_FEATURE_CLOVER, &clover_fn_ops);
 * and the daemon attaches it to every worker when [features] clover = on.
 */
#ifndef SWORD_CLOVER_FN_H
#define SWORD_CLOVER_FN_H

#include <string.h>

#include "clover.h"
#include "sword_config.h"
#include "sword_worker.h"

extern const struct sword_fn_ops clover_fn_ops;

/* The [clover] / [clover.NAME] part of a validated config as clover_params. */
void clover_params_from_config(struct clover_params *prm, const struct sword_config *cfg);

#endif /* SWORD_CLOVER_FN_H */
