/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_state.c — state segments (sword_state.h).  EAL-free: plain files,
 * mmap and flock, so tests drive it directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sword_state.h"

#define STATE_MAGIC "SWORDSEG"
/* Bump when the header changes. */
#define STATE_VERSION 1u

struct state_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_len;
	uint64_t shape;
	uint64_t data_len;
	uint64_t generation;
	char boot_id[40];
	int32_t pid;         /* the process that holds it last */
	uint32_t ready;      /* 1 once the header is whole */
	uint64_t run;        /* ... and its run number (sword_state_run) */
};

static void
boot_id(char out[40])
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	memset(out, 0, 40);
	if (f == NULL)
		return;
	if (fgets(out, 40, f) == NULL)
		memset(out, 0, 40);
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* Why the file found at open is not adopted, or NULL if it is. */
static const char *
refusal(const struct state_hdr *h, off_t size, uint64_t shape, size_t data_len,
	const char *boot, uint64_t prev_run, char *buf, size_t len)
{
	if ((size_t)size < sizeof(*h))
		return "truncated (shorter than its header)";
	if (memcmp(h->magic, STATE_MAGIC, 8) != 0)
		return "not a swordd state segment";
	if (h->ready != 1)
		return "its header was never completed";
	if (h->version != STATE_VERSION || h->hdr_len != SWORD_STATE_HDR) {
		snprintf(buf, len, "segment format %u, this swordd writes %u", h->version,
			 STATE_VERSION);
		return buf;
	}
	if (h->shape != shape || h->data_len != data_len) {
		snprintf(buf, len, "made for another build or configuration (shape %016llx, "
			 "%llu bytes; this swordd: %016llx, %zu bytes)",
			 (unsigned long long)h->shape, (unsigned long long)h->data_len,
			 (unsigned long long)shape, data_len);
		return buf;
	}
	if ((uint64_t)size < SWORD_STATE_HDR + data_len)
		return "truncated";
	if (strncmp(h->boot_id, boot, 40) != 0)
		return "from another boot";
	if (prev_run != 0 && h->run != prev_run)
		return "left by an older process than the last one (which ran without it)";
	return NULL;
}

int
sword_state_open(struct sword_state *st, const char *path, uint64_t shape,
		 size_t data_len, bool adopt_ok, char *why, size_t whylen)
{
	return sword_state_open_run(st, path, shape, data_len, adopt_ok, 0, 0, why, whylen);
}

static uint64_t run_prev, run_mine;
static bool run_written;

int
sword_state_run(const char *base, uint64_t *prev_run, uint64_t *this_run, char *why,
		size_t whylen)
{
	char path[300];
	FILE *f;

	(void)why;
	(void)whylen;
	if (run_mine == 0) {
		struct timespec ts;

		snprintf(path, sizeof(path), "%s.run", base);
		f = fopen(path, "r");
		if (f != NULL) {
			unsigned long long v = 0;

			if (fscanf(f, "%llu", &v) == 1)
				run_prev = v;
			fclose(f);
		}
		/* unique per process: its start time in ns and its pid */
		clock_gettime(CLOCK_REALTIME, &ts);
		run_mine = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^
			   ((uint64_t)getpid() << 40);
		if (run_mine == 0 || run_mine == run_prev)
			run_mine++;
	}
	*prev_run = run_prev;
	*this_run = run_mine;
	return 0;
}

int
sword_state_run_commit(const char *base, char *why, size_t whylen)
{
	char path[300];
	FILE *f;

	if (run_written)
		return 0;
	if (run_mine == 0) {
		uint64_t p, m;

		sword_state_run(base, &p, &m, why, whylen);
	}
	snprintf(path, sizeof(path), "%s.run", base);
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "%llu\n", (unsigned long long)run_mine) < 0) {
		snprintf(why, whylen, "%s: cannot write: %s", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	if (fclose(f) != 0) {
		snprintf(why, whylen, "%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	run_written = true;
	return 0;
}

int
sword_state_open_run(struct sword_state *st, const char *path, uint64_t shape,
		     size_t data_len, bool adopt_ok, uint64_t prev_run, uint64_t this_run,
		     char *why, size_t whylen)
{
	struct state_hdr h, *hp;
	struct stat sb;
	char boot[40], buf[256];
	const char *no = NULL;
	bool fresh;
	size_t total = SWORD_STATE_HDR + ((data_len + 4095) & ~(size_t)4095);

	memset(st, 0, sizeof(*st));
	st->fd = -1;
	snprintf(st->path, sizeof(st->path), "%s", path);
	/* its directories (systemd's RuntimeDirectory= makes /run/sword) */
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *sl = strchr(buf + 1, '/'); sl != NULL; sl = strchr(sl + 1, '/')) {
		*sl = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
			snprintf(why, whylen, "%s: cannot make %s: %s", path, buf,
				 strerror(errno));
			return -1;
		}
		*sl = '/';
	}
	st->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (st->fd < 0) {
		snprintf(why, whylen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (flock(st->fd, LOCK_EX | LOCK_NB) != 0) {
		int32_t pid = 0;

		if (pread(st->fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h))
			pid = h.pid;
		snprintf(why, whylen, "%s: in use by another swordd (pid %d): two processes "
			 "must never share one state", path, (int)pid);
		close(st->fd);
		st->fd = -1;
		return -1;
	}
	if (fstat(st->fd, &sb) != 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	boot_id(boot);
	memset(&h, 0, sizeof(h));
	if (sb.st_size == 0) {
		fresh = true;
		no = "none yet";
	} else {
		if (pread(st->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
			memset(&h, 0, sizeof(h));
		no = refusal(&h, sb.st_size, shape, data_len, boot, prev_run, buf, sizeof(buf));
		if (no == NULL && !adopt_ok)
			no = "not adopted (this configuration does not keep state across a restart)";
		fresh = no != NULL;
	}
	if (fresh) {
		/* start over: every byte zero, the header last */
		if (ftruncate(st->fd, 0) != 0 || ftruncate(st->fd, (off_t)total) != 0) {
			snprintf(why, whylen, "%s: cannot size to %zu bytes: %s", path, total,
				 strerror(errno));
			goto fail;
		}
	} else if ((size_t)sb.st_size != total && ftruncate(st->fd, (off_t)total) != 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/*
	 * MAP_POPULATE: every page is mapped here, in one call, rather than
	 * one fault at a time as the tables are zeroed or walked (8,000+
	 * faults for the default 32 MB touched, ~80 ms of a restart's outage
	 * in a VM) or, later, as a worker first touches a stub.
	 */
	st->map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       st->fd, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		snprintf(why, whylen, "%s: cannot map %zu bytes: %s", path, total, strerror(errno));
		goto fail;
	}
	st->map_len = total;
	st->data = (uint8_t *)st->map + SWORD_STATE_HDR;
	st->data_len = data_len;
	hp = st->map;
	if (fresh) {
		memcpy(hp->magic, STATE_MAGIC, 8);
		hp->version = STATE_VERSION;
		hp->hdr_len = SWORD_STATE_HDR;
		hp->shape = shape;
		hp->data_len = data_len;
		memcpy(hp->boot_id, boot, sizeof(hp->boot_id));
		hp->generation = 0;
	}
	hp->generation++;
	hp->pid = (int32_t)getpid();
	hp->run = this_run;
	__atomic_store_n(&hp->ready, 1, __ATOMIC_RELEASE);
	st->generation = hp->generation;
	st->adopted = !fresh;
	if (st->adopted)
		snprintf(why, whylen, "%s: adopted (generation %llu)", path,
			 (unsigned long long)st->generation);
	else
		snprintf(why, whylen, "%s: new, %zu bytes (previous: %s)", path, total, no);
	return 0;
fail:
	sword_state_close(st);
	return -1;
}

int
sword_state_open_chain(struct sword_state *st, const char *base, const char *path,
		       uint64_t shape, size_t data_len, bool adopt_ok, uint64_t *prev_run,
		       char *why, size_t whylen)
{
	uint64_t this_run;

	if (sword_state_run(base, prev_run, &this_run, why, whylen) != 0 ||
	    sword_state_open_run(st, path, shape, data_len, adopt_ok, *prev_run, this_run,
				 why, whylen) != 0 ||
	    sword_state_run_commit(base, why, whylen) != 0) {
		if (st->map != NULL)
			sword_state_close(st);
		return -1;
	}
	return 0;
}

void
sword_state_close(struct sword_state *st)
{
	if (st->map != NULL)
		munmap(st->map, st->map_len);
	if (st->fd >= 0)
		close(st->fd);   /* the lock goes with it */
	st->map = NULL;
	st->fd = -1;
}
