/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * links.c — fail-open: swordd's ports go down whenever swordd stops
 * forwarding (links.h says why).
 *
 * Why a guardian process.  A clean exit can take the links down itself
 * (main.c does, after the drain), but a SIGKILLed or crashed swordd runs no
 * code, and a stopped (SIGSTOP) or wedged one runs none that helps: on
 * net_af_packet / net_af_xdp the kernel interface then stays up and the
 * switch keeps redirecting the servers' RoCE into it.  Something outside
 * the process must act, and it must notice a hang, not only a death
 * (PR_SET_PDEATHSIG fires on death only).  So swordd forks a small
 * guardian early, before rte_eal_init: the child of a process without
 * DPDK threads, hugepages or devices is a plain process with nothing to
 * release.  The two share one page (MAP_SHARED|MAP_ANONYMOUS):
 *
 *   - swordd writes the interfaces to watch and arms the guardian once its
 *     ports are started and every worker forwards;
 *   - the main lcore bumps `beat` only while every polling worker's loop
 *     counter advances (sword_daemon_workers_progressed), so a wedged
 *     worker stops the beat as surely as a stopped process;
 *   - the guardian sets the interfaces down when the beat is older than
 *     [ports] guard_ms, up again when it resumes (SIGCONT), and down for
 *     good when swordd is gone: the pipe whose write end only swordd holds
 *     reads EOF the moment swordd exits, however it exits;
 *   - a hang's links-down opens a new bypass epoch: the switch then
 *     carries the servers' traffic around swordd, and what swordd knew of
 *     lock words and connections may have changed unseen (a lock released
 *     and taken again behind its back: granting on that shadow made two
 *     holders, tor-failover-stop-accel).  The links come up again only
 *     once swordd says every worker forgot it all for that epoch
 *     (`forgot`, written by the main lcore: sword_daemon_bypass_forgotten),
 *     so the first frame it sees again meets an empty start.
 *
 * The guardian ignores SIGINT, SIGTERM and SIGHUP: a terminal's Ctrl-C and
 * systemd's stop reach the whole group, and the guardian must outlive the
 * daemon it guards; it leaves right after it.  A real NIC bound to vfio-pci
 * needs none of this after a death (the device is reset and loses link
 * when the process's file descriptors close), but a hang still needs it:
 * the guardian only knows kernel interfaces, so a vfio port of a hung
 * swordd stays up (doc/deploying.md, Fail-open).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "links.h"

extern int swordd_logtype_port;
RTE_LOG_REGISTER(swordd_logtype_guard, swordd.guard, INFO);
#define PORT_LOG(level, port, fmt, ...) \
	rte_log(RTE_LOG_ ## level, swordd_logtype_port, "swordd: port %u: " fmt "\n", \
		(unsigned int)(port), ##__VA_ARGS__)
#define GUARD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, swordd_logtype_guard, "swordd guardian: " fmt "\n", \
		##__VA_ARGS__)

/* The page swordd and its guardian share. */
struct guard_page {
	uint64_t beat;                 /* main lcore: every worker progressed */
	uint32_t bypass;               /* guardian: hangs that set the links down */
	uint32_t forgot;               /* main lcore: bypass epoch every worker forgot */
	uint32_t up;                   /* guardian: bypass epoch the links are up again after */
	uint32_t armed;                /* names[] are valid, watch them */
	uint32_t n_ifs;
	char names[SWORDD_GUARD_MAX_IFS][IF_NAMESIZE];
};

static struct guard_page *guard;       /* NULL: no guardian */

int
swordd_if_set(const char *ifname, bool up, bool *was_up, char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd, rc = -1;

	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifname) >= sizeof(ifr.ifr_name)) {
		snprintf(err, errlen, "interface name too long: \"%s\"", ifname);
		return -1;
	}
	strcpy(ifr.ifr_name, ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		snprintf(err, errlen, "%s: SIOCGIFFLAGS: %s", ifname, strerror(errno));
		goto out;
	}
	if (was_up != NULL)
		*was_up = (ifr.ifr_flags & IFF_UP) != 0;
	if (((ifr.ifr_flags & IFF_UP) != 0) != up) {
		if (up)
			ifr.ifr_flags |= IFF_UP;
		else
			ifr.ifr_flags &= ~IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
			snprintf(err, errlen, "%s: SIOCSIFFLAGS: %s", ifname, strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int
swordd_port_ifname(uint16_t port, char name[IF_NAMESIZE])
{
	struct rte_eth_dev_info info;

	name[0] = '\0';
	if (rte_eth_dev_info_get(port, &info) != 0 || info.if_index == 0 ||
	    if_indextoname(info.if_index, name) == NULL) {
		name[0] = '\0';
		return 0;
	}
	return 1;
}

int
swordd_port_link_set(uint16_t port, bool up)
{
	const char *dir = up ? "up" : "down";
	char ifname[IF_NAMESIZE], err[160], pmd[96];
	bool was_up = false;
	int rc;

	rc = up ? rte_eth_dev_set_link_up(port) : rte_eth_dev_set_link_down(port);
	if (rc == 0)
		snprintf(pmd, sizeof(pmd), "PMD set it %s", dir);
	else if (rc == -ENOTSUP)
		snprintf(pmd, sizeof(pmd), "PMD cannot");
	else
		snprintf(pmd, sizeof(pmd), "PMD failed: %s", rte_strerror(-rc));
	if (rc == -ENOTSUP)
		rc = 0;
	if (!swordd_port_ifname(port, ifname)) {
		if (up)
			return 0;       /* the usual start: nothing to say */
		PORT_LOG(INFO, port, "link down: %s, no kernel interface", pmd);
		return rc == 0 ? 0 : -1;
	}
	if (swordd_if_set(ifname, up, &was_up, err, sizeof(err)) < 0) {
		PORT_LOG(ERR, port, "link %s: %s, %s", dir, pmd, err);
		return -1;
	}
	if (up && was_up)
		return 0;               /* as it should be: nothing to say */
	PORT_LOG(INFO, port, "link %s: %s, interface %s %s %s", dir, pmd, ifname,
		 was_up == up ? "was already" : "set", dir);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The guardian */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Set every watched interface up or down; log those that changed. */
static void
guard_set_all(const struct guard_page *g, bool up, const char *why)
{
	char err[160];
	unsigned int i;
	bool was_up;

	for (i = 0; i < g->n_ifs && i < SWORDD_GUARD_MAX_IFS; i++) {
		if (swordd_if_set(g->names[i], up, &was_up, err, sizeof(err)) < 0)
			GUARD_LOG(ERR, "%s", err);
		else if (was_up != up)
			GUARD_LOG(WARNING, "interface %s set %s: %s", g->names[i],
				  up ? "up" : "down", why);
	}
}

static void __rte_noreturn
guard_run(struct guard_page *g, int fd, pid_t parent, uint32_t stale_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	/* wake often enough to act within ~10% of stale_ms */
	const int period = (int)RTE_MAX(stale_ms / 10, 5u);
	uint64_t last_beat = 0, last_change = 0;
	bool armed = false, down = false;
	char why[96], c;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "swordd-guard", 0, 0, 0);
	for (;;) {
		int n = poll(&pfd, 1, period);
		uint64_t beat, t = now_ms();

		if (n > 0 && read(fd, &c, 1) <= 0) {
			/* EOF: swordd is gone (exit, crash, SIGKILL) */
			if (armed) {
				snprintf(why, sizeof(why), "swordd (pid %d) is gone", (int)parent);
				guard_set_all(g, false, why);
			}
			_exit(0);
		}
		if (!armed) {
			if (!__atomic_load_n(&g->armed, __ATOMIC_ACQUIRE))
				continue;
			if (g->n_ifs == 0)
				_exit(0);       /* no kernel interface to guard */
			armed = true;
			last_beat = __atomic_load_n(&g->beat, __ATOMIC_RELAXED);
			last_change = t;
			continue;
		}
		beat = __atomic_load_n(&g->beat, __ATOMIC_RELAXED);
		if (beat != last_beat) {
			last_beat = beat;
			last_change = t;
			/* up only once the workers forgot what the bypass may
			 * have changed (the top comment) */
			if (down && __atomic_load_n(&g->forgot, __ATOMIC_ACQUIRE) ==
				    __atomic_load_n(&g->bypass, __ATOMIC_RELAXED)) {
				guard_set_all(g, true, "swordd's workers progress again and "
					      "forgot what the bypass may have changed");
				/* the answers they kept for this moment may go */
				__atomic_store_n(&g->up, __atomic_load_n(&g->bypass, __ATOMIC_RELAXED),
						 __ATOMIC_RELEASE);
				down = false;
			}
		} else if (!down && t - last_change >= stale_ms) {
			snprintf(why, sizeof(why), "swordd (pid %d) made no progress for %u ms",
				 (int)parent, (unsigned int)(t - last_change));
			/* before the links go down: a worker that resumes
			 * sees the new epoch before any frame of the bypass */
			__atomic_fetch_add(&g->bypass, 1, __ATOMIC_RELEASE);
			guard_set_all(g, false, why);
			down = true;
		}
	}
}

int
swordd_guard_start(uint32_t stale_ms)
{
	struct guard_page *g;
	int fds[2];
	pid_t parent = getpid(), pid;

	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	if (g == MAP_FAILED) {
		fprintf(stderr, "swordd: guardian: mmap: %s\n", strerror(errno));
		return -1;
	}
	memset(g, 0, sizeof(*g));
	if (pipe2(fds, O_CLOEXEC) < 0) {
		fprintf(stderr, "swordd: guardian: pipe: %s\n", strerror(errno));
		munmap(g, sizeof(*g));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "swordd: guardian: fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		munmap(g, sizeof(*g));
		return -1;
	}
	if (pid == 0) {
		close(fds[1]);
		guard_run(g, fds[0], parent, stale_ms);
	}
	/* the write end stays open, unwritten, for as long as swordd lives */
	close(fds[0]);
	guard = g;
	return 0;
}

void
swordd_guard_arm(char names[][IF_NAMESIZE], unsigned int n)
{
	unsigned int i;

	if (guard == NULL)
		return;
	n = RTE_MIN(n, (unsigned int)SWORDD_GUARD_MAX_IFS);
	for (i = 0; i < n; i++)
		memcpy(guard->names[i], names[i], IF_NAMESIZE);
	guard->n_ifs = n;
	__atomic_store_n(&guard->armed, 1, __ATOMIC_RELEASE);
}

void
swordd_guard_beat(void)
{
	if (guard != NULL)
		__atomic_fetch_add(&guard->beat, 1, __ATOMIC_RELAXED);
}

const uint32_t *
swordd_guard_bypass_epoch(void)
{
	return guard != NULL ? &guard->bypass : NULL;
}

const uint32_t *
swordd_guard_up_epoch(void)
{
	return guard != NULL ? &guard->up : NULL;
}

void
swordd_guard_forgot(uint32_t epoch)
{
	if (guard != NULL && __atomic_load_n(&guard->forgot, __ATOMIC_RELAXED) != epoch)
		__atomic_store_n(&guard->forgot, epoch, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------- */
/* --links-down: the interfaces of the EAL arguments */

unsigned int
swordd_eal_ifaces(int argc, char **argv, char names[][IF_NAMESIZE], unsigned int max)
{
	static const char *const drivers[] = {
		"net_af_packet", "eth_af_packet", "net_af_xdp", "eth_af_xdp",
	};
	unsigned int n = 0, d;
	int i;

	for (i = 1; i < argc && n < max; i++) {
		const char *v = NULL, *p, *end;
		size_t len;

		if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			v = argv[++i];
		else if (strncmp(argv[i], "--vdev=", 7) == 0)
			v = argv[i] + 7;
		if (v == NULL)
			continue;
		for (d = 0; d < RTE_DIM(drivers); d++)
			if (strncmp(v, drivers[d], strlen(drivers[d])) == 0)
				break;
		if (d == RTE_DIM(drivers))
			continue;
		/* devargs: NAME,key=value,... */
		for (p = strchr(v, ','); p != NULL; p = strchr(p, ',')) {
			p++;
			if (strncmp(p, "iface=", 6) != 0)
				continue;
			p += 6;
			end = strchr(p, ',');
			len = end ? (size_t)(end - p) : strlen(p);
			if (len == 0 || len >= IF_NAMESIZE)
				break;
			memcpy(names[n], p, len);
			names[n][len] = '\0';
			n++;
			break;
		}
	}
	return n;
}
