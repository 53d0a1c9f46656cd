/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sword_capture.c — capture files: the overwrite guard, the size limit and
 * the ring of files (sword_capture.h says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>

#include "sword_capture.h"
#include "sword_log.h"

const char *const sword_cap_dir_name[SWORD_CAP_NUM] = { "rx", "tx" };

/* The application name in the Section Header Block of every file we write
 * (option shb_userappl); the guard looks for it. */
#define CAPTURE_APP "swordd"

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_BOM 0x1A2B3C4Du
#define PCAPNG_OPT_USERAPPL 4
#define SHB_FIXED 24                /* type, length, BOM, version, section length */

static int
fail(char *err, size_t errlen, const char *fmt, ...) __rte_format_printf(3, 4);

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t
rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint16_t
rd16(const uint8_t *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

/* Is buf (the start of a file) a pcapng section header naming swordd? */
static bool
is_swordd_pcapng(const uint8_t *buf, size_t len)
{
	uint32_t blen, off;
	bool swap;

	if (len < SHB_FIXED + 4 || rd32(buf, false) != PCAPNG_SHB)
		return false;
	if (rd32(buf + 8, false) == PCAPNG_BOM)
		swap = false;
	else if (rd32(buf + 8, true) == PCAPNG_BOM)
		swap = true;
	else
		return false;
	blen = rd32(buf + 4, swap);
	if (blen < SHB_FIXED + 4 || blen > len || blen % 4 != 0)
		return false;
	for (off = SHB_FIXED; off + 4 <= blen - 4; ) {
		uint16_t code = rd16(buf + off, swap), olen = rd16(buf + off + 2, swap);

		if (code == 0)                                  /* opt_endofopt */
			break;
		if (off + 4 + olen > blen - 4)
			return false;
		if (code == PCAPNG_OPT_USERAPPL && olen >= strlen(CAPTURE_APP) &&
		    memcmp(buf + off + 4, CAPTURE_APP, strlen(CAPTURE_APP)) == 0)
			return true;
		off += 4 + ((olen + 3u) & ~3u);
	}
	return false;
}

/* One file of a capture: may we truncate or replace it? */
static int
check_one(const char *path, char *err, size_t errlen)
{
	uint8_t buf[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 :
			fail(err, errlen, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(err, errlen, "%s: is a directory", path);
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0 && is_swordd_pcapng(buf, (size_t)n))
		return 0;
	return fail(err, errlen, "%s exists and is not a pcapng capture swordd wrote: "
		    "refusing to overwrite it (remove it, choose another name, or "
		    "--capture-force)", path);
}

static void
numbered(char *out, size_t len, const char *path, unsigned int i)
{
	if (i == 0)
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s.%u", path, i);
}

int
sword_capture_check_path(const char *path, const struct sword_capture_limits *lim,
			 char *err, size_t errlen)
{
	char name[600];
	unsigned int i;

	if (path == NULL || *path == '\0')
		return fail(err, errlen, "capture: empty file name");
	if (strlen(path) >= sizeof(((struct sword_capture *)0)->path))
		return fail(err, errlen, "capture: file name too long: %.64s...", path);
	if (lim->force)
		return 0;
	for (i = 0; i < lim->files; i++) {
		numbered(name, sizeof(name), path, i);
		if (check_one(name, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int
sword_capture_file_open(struct sword_capture *c, const char *path,
			char *err, size_t errlen)
{
	struct stat st;
	off_t hdr;

	c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->fd < 0)
		return fail(err, errlen, "%s: cannot create: %s", path, strerror(errno));
	c->regular = fstat(c->fd, &st) == 0 && S_ISREG(st.st_mode);
	c->pcapng = rte_pcapng_fdopen(c->fd, NULL, NULL, CAPTURE_APP, NULL);
	if (c->pcapng == NULL) {
		fail(err, errlen, "%s: rte_pcapng_fdopen: %s", path, rte_strerror(rte_errno));
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	hdr = c->regular ? lseek(c->fd, 0, SEEK_CUR) : 0;
	c->bytes = hdr > 0 ? (uint64_t)hdr : 0;
	if (c->path != path)
		snprintf(c->path, sizeof(c->path), "%s", path);
	c->full = false;
	return 0;
}

void
sword_capture_file_close(struct sword_capture *c)
{
	if (c->pcapng != NULL) {
		rte_pcapng_close(c->pcapng);   /* closes the fd */
		c->pcapng = NULL;
		c->fd = -1;
	} else if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
}

/* FILE -> FILE.1 -> ... -> FILE.<files-1> (dropped), then a new FILE. */
static int
rotate(struct sword_capture *c, const struct sword_capture_limits *lim)
{
	char from[600], to[600], err[256];
	unsigned int i;

	sword_capture_file_close(c);
	for (i = lim->files - 1; i > 0; i--) {
		numbered(from, sizeof(from), c->path, i - 1);
		numbered(to, sizeof(to), c->path, i);
		if (rename(from, to) < 0 && errno != ENOENT)
			SWORD_LOG(WARNING, "capture: rename %s to %s: %s", from, to,
				  strerror(errno));
	}
	c->rotations++;
	if (sword_capture_file_open(c, c->path, err, sizeof(err)) < 0) {
		SWORD_LOG(ERR, "capture: rotation: %s: capture stopped", err);
		return -1;
	}
	return 0;
}

bool
sword_capture_write(struct sword_capture *c, const struct sword_capture_limits *lim,
		    struct rte_mbuf **pkts, unsigned int n)
{
	uint64_t size = 0;
	ssize_t w;
	unsigned int i;

	if (c->pcapng == NULL)
		return true;
	for (i = 0; i < n; i++)
		size += rte_pktmbuf_pkt_len(pkts[i]);
	if (c->regular && c->bytes + size > lim->max_bytes) {
		if (lim->files <= 1) {
			SWORD_LOG(WARNING, "capture %s: reached %" PRIu64 " MB: capture "
				  "stopped (--capture-files K > 1 keeps a ring of files)",
				  c->path, lim->max_bytes >> 20);
			sword_capture_file_close(c);
			c->full = true;
			return false;
		}
		if (rotate(c, lim) < 0)
			return false;
	}
	w = rte_pcapng_write_packets(c->pcapng, pkts, (uint16_t)n);
	if (w < 0) {
		c->write_errors += n;
	} else {
		c->frames += n;
		c->bytes += (uint64_t)w;
	}
	return true;
}
