/* SPDX-License-Identifier: BSD-3-Clause */
#include "sword_log.h"

RTE_LOG_REGISTER(sword_logtype, sword, INFO);
