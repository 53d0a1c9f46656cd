/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ser_fn.h — atomic replacement plugged into swordd's function chain.
 */
#ifndef SWORD_SER_FN_H
#define SWORD_SER_FN_H

#include "serializer.h"
#include "sword_config.h"
#include "sword_worker.h"

/* features.atomic_replacement: register with sword_feature_register(). */
extern const struct sword_fn_ops ser_fn_ops;

/*
 * Serializer parameters from a config: the lock regions of the servers
 * worker_id owns (all of them if worker_id < 0) into regions[], tables and
 * timing from [tables] and [atomic].  0, or -ENOSPC if regions[] is short.
 */
int ser_fn_params(struct ser_params *prm, struct ser_region *regions,
		  unsigned int max_regions, const struct sword_config *cfg,
		  int worker_id);

/* A worker's serializer from its ser_fn_ops state (NULL if it owns no lock
 * region), for read-only introspection such as ser_word_get(). */
const struct ser *ser_fn_ser(const void *state);

#endif /* SWORD_SER_FN_H */
