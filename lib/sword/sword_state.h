/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_state.h — a state segment: one file (under /run, a tmpfs) mapped
 * shared, that outlives the swordd process which fills it (swordd
 * --state PATH; one segment per worker, PATH.wN).
 *
 * Why: a restarted swordd that starts empty cannot answer what the old one
 * decided (doc/operating.md, "Restart").  As Katran keeps its state in BPF
 * maps and Envoy's hot restart shares memory between generations, the
 * next swordd maps the same file and goes on.
 *
 * Which life owns a segment: the boot (boot_id: /run does not outlive it),
 * the shape of what it holds (a hash the caller computes from its build's
 * structures and configured sizes), and the one process that holds its
 * lock (flock: released when that process dies, also by SIGKILL).
 * Anything else (not a segment, truncated, another layout version or
 * shape, another boot) is refused with a line that says why, and the
 * file starts over empty: a segment is never half trusted.
 */
#ifndef SWORD_STATE_H
#define SWORD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWORD_STATE_HDR 4096   /* the data starts a page in */

struct sword_state {
	int fd;
	void *map;
	size_t map_len;
	void *data;          /* 64-byte aligned, data_len bytes */
	size_t data_len;
	bool adopted;        /* the data is an earlier process's */
	uint64_t generation; /* processes that have held it, this one included */
	char path[256];
};

/*
 * Open (or create) the segment at path for data_len bytes of shape.
 * adopt_ok false: an existing segment is not adopted (why says so) and
 * starts over.  0: st->adopted tells whether the data is an earlier
 * process's; why (always filled) says what was found.  -1: the file
 * cannot be used at all (another swordd holds it, no such directory, ...):
 * why says why; nothing is mapped.
 */
int sword_state_open(struct sword_state *st, const char *path, uint64_t shape,
		     size_t data_len, bool adopt_ok, char *why, size_t whylen);
/*
 * The chain of processes.  A segment names the process that held it last
 * (a run number); prev_run is the run of the process before this one (0:
 * none), this_run this one's.  Only a segment the previous process held is
 * adopted: one an older process left while the previous one ran without
 * it (fewer workers) is refused, its words may have moved since.
 * sword_state_run() reads prev_run from the run file base.run (once per
 * process) and makes this_run; sword_state_run_commit() writes this_run
 * there once the process holds its segments (or has none: every process
 * that ran with base is a link of the chain, also one that kept no
 * segment).  -1 + why if the run file cannot be written.
 */
int sword_state_run(const char *base, uint64_t *prev_run, uint64_t *this_run, char *why,
		    size_t whylen);
int sword_state_run_commit(const char *base, char *why, size_t whylen);
int sword_state_open_run(struct sword_state *st, const char *path, uint64_t shape,
			 size_t data_len, bool adopt_ok, uint64_t prev_run, uint64_t this_run,
			 char *why, size_t whylen);
/*
 * sword_state_run, sword_state_open_run and sword_state_run_commit in one
 * step, for a function's segment path under the chain base: 0 with
 * *prev_run the previous process's run (0: none); -1 + why, nothing
 * mapped.
 */
int sword_state_open_chain(struct sword_state *st, const char *base, const char *path,
			   uint64_t shape, size_t data_len, bool adopt_ok, uint64_t *prev_run,
			   char *why, size_t whylen);
/* Unmap and close; the file stays for the next process. */
void sword_state_close(struct sword_state *st);

#endif
