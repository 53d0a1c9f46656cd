/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remap_fn.h — connection remapping plugged into swordd's function chain.
 */
#ifndef SWORD_REMAP_FN_H
#define SWORD_REMAP_FN_H

#include "remap.h"
#include "sword_config.h"
#include "sword_worker.h"

/* features.remapping: register with sword_feature_register(). */
extern const struct sword_fn_ops remap_fn_ops;

/* A worker's remapping state from its remap_fn_ops state (NULL if it owns
 * no server), for read-only introspection. */
const struct remap *remap_fn_remap(const void *state);

#endif /* SWORD_REMAP_FN_H */
