/* SPDX-License-Identifier: BSD-3-Clause */
/* The pipeline's rte_log types (see sword_log.h). */
#include "sword_log.h"

RTE_LOG_REGISTER(sword_logtype, sword, INFO);
RTE_LOG_REGISTER(sword_logtype_worker, sword.worker, INFO);
RTE_LOG_REGISTER(sword_logtype_flow, sword.flow, INFO);
RTE_LOG_REGISTER(sword_logtype_stats, sword.stats, INFO);
RTE_LOG_REGISTER(sword_logtype_config, sword.config, INFO);
