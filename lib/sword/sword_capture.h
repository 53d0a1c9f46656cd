/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_capture.h — swordd's own pcapng captures of the frames it receives
 * (rx) and transmits (tx), on the main lcore.
 *
 * Why it is careful with files: a capture is started as root, by a command
 * line or a telemetry command, with a path someone typed.  A path that
 * names a file swordd did not write is refused (an existing non-empty
 * regular file must be a pcapng whose section header names swordd as its
 * application), unless forced; a capture is bounded (max_bytes per file)
 * and with files > 1 rotates like dumpcap's ring buffer: FILE is always the
 * newest, FILE.1 the one before, ... FILE.<files-1> the oldest.  With one
 * file the capture stops when the file is full (the first max_bytes kept).
 * Rotation and the limit apply to regular files only (a FIFO or /dev/null
 * is never renamed).
 *
 * Workers copy frames (rte_pcapng_copy) into per-worker rings; the main
 * lcore writes them here.  Live capture by an external tool (dpdk-dumpcap)
 * goes through rte_pdump instead and needs none of this.
 */
#ifndef SWORD_CAPTURE_H
#define SWORD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sword_cap_dir { SWORD_CAP_RX, SWORD_CAP_TX, SWORD_CAP_NUM };

#define SWORD_CAPTURE_MAX_MB_DEFAULT 100
#define SWORD_CAPTURE_MAX_MB_MAX (1024 * 1024)
#define SWORD_CAPTURE_FILES_DEFAULT 1
#define SWORD_CAPTURE_FILES_MAX 1000

struct sword_capture_limits {
	uint64_t max_bytes;         /* per file */
	unsigned int files;         /* FILE and FILE.1 .. FILE.<files-1> */
	bool force;                 /* overwrite files swordd did not write */
};

struct rte_pcapng;

struct sword_capture {
	char path[512];             /* last file started ("" = never) */
	struct rte_pcapng *pcapng;  /* NULL: not writing */
	int fd;
	bool regular;               /* limit and rotation apply */
	bool full;                  /* one file, limit reached: stopped */
	uint64_t bytes;             /* in the current file */
	uint64_t frames;            /* written, all files of this capture */
	uint64_t write_errors;
	uint64_t rotations;
};

extern const char *const sword_cap_dir_name[SWORD_CAP_NUM];

/*
 * May a capture write path (and rotate through path.1 .. path.<files-1>)?
 * Yes when each is absent, empty, not a regular file, or a pcapng swordd
 * wrote; or with lim->force.  No EAL needed (swordd checks its options
 * before rte_eal_init).  0, or -1 with one line in err.
 */
int sword_capture_check_path(const char *path, const struct sword_capture_limits *lim,
			     char *err, size_t errlen);

/* Open path for writing (after sword_capture_check_path) with the
 * interfaces of every port.  0 or -1 with err. */
int sword_capture_file_open(struct sword_capture *c, const char *path,
			    char *err, size_t errlen);

/*
 * Write n pcapng copies (already rte_pcapng_copy'd) to c, rotating or
 * stopping at the limit.  Never frees pkts.  Returns false when the
 * capture just became full (one file) and should stop.
 */
struct rte_mbuf;
bool sword_capture_write(struct sword_capture *c, const struct sword_capture_limits *lim,
			 struct rte_mbuf **pkts, unsigned int n);

void sword_capture_file_close(struct sword_capture *c);

#endif /* SWORD_CAPTURE_H */
