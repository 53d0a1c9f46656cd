/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsword-cm-timeout.so: LD_PRELOAD shim for rdma_cm programs in the rig
 * guests.  It sets the QP's local ACK timeout through rdma_cm
 * (RDMA_OPTION_ID_ACK_TIMEOUT) just before rdma_connect() and rdma_accept(),
 * which is where librdmacm moves the QP to RTR/RTS.
 *
 * Why: the rig runs every case with no ACK timeout (perftest -u 0; see
 * tests/rig/realpeer.py, QP_TIMEOUT): Linux 6.1 rxe arms its retransmit
 * timer once and does not restart it per request, so with any finite
 * timeout it retransmits now and then on a healthy link, and under TCG
 * such spurious retries sometimes ended in completer_retry_err and a
 * wedged guest.  perftest passes -u to rdma_cm only from 4.5-0.20 on;
 * Debian 12 ships 4.5-0.17, whose -R connections therefore ran with the
 * CM's default timeout (packet lifetime + 1, ~0.5 s).  This restores
 * what -u asks for.
 *
 * SWORD_CM_ACK_TIMEOUT: the IBTA exponent (4.096 us * 2^N; 0 = none,
 * the default here).  The shim writes one line to stderr per connection
 * so the case log shows it was applied.
 *
 * It also waits before a client's first data connection.  perftest -R
 * (4.5-0.17) connects its control channel first; the server accepts it,
 * destroys that listener, meets the client in a handshake over it, and
 * only then creates the data listener.  The client connects right after
 * the same handshake, so under TCG its REQ often reaches the server's CM
 * before the listen: REJ reason 8 (invalid service ID), and 0.17's retry
 * of that connect crashes (SIGSEGV; fixed upstream in 2025).  Waiting
 * SWORD_CM_DATA_DELAY_MS (default 1000; 0 = no wait) before the second
 * rdma_connect() of the process gives the server its listen first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/rdma_cma.h>

static void
set_timeout(struct rdma_cm_id *id, const char *where)
{
	const char *env = getenv("SWORD_CM_ACK_TIMEOUT");
	uint8_t t = env != NULL ? (uint8_t)strtoul(env, NULL, 0) : 0;

	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)) != 0)
		fprintf(stderr, "cm-timeout: %s: rdma_set_option(ACK_TIMEOUT=%u) failed\n",
			where, t);
	else
		fprintf(stderr, "cm-timeout: %s: ACK timeout %u\n", where, t);
}

static void
wait_for_data_listener(void)
{
	const char *env = getenv("SWORD_CM_DATA_DELAY_MS");
	unsigned long ms = env != NULL ? strtoul(env, NULL, 0) : 1000;
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	if (ms == 0)
		return;
	fprintf(stderr, "cm-timeout: rdma_connect: data connection after %lu ms\n", ms);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	static int (*real)(struct rdma_cm_id *, struct rdma_conn_param *);
	static int n_connects;

	if (real == NULL)
		real = (int (*)(struct rdma_cm_id *, struct rdma_conn_param *))
			dlsym(RTLD_NEXT, "rdma_connect");
	set_timeout(id, "rdma_connect");
	if (++n_connects == 2)
		wait_for_data_listener();
	return real(id, conn_param);
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	static int (*real)(struct rdma_cm_id *, struct rdma_conn_param *);

	if (real == NULL)
		real = (int (*)(struct rdma_cm_id *, struct rdma_conn_param *))
			dlsym(RTLD_NEXT, "rdma_accept");
	set_timeout(id, "rdma_accept");
	return real(id, conn_param);
}
