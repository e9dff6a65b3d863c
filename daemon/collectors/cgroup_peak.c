// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector's window peak: each exported cgroup's highest usage
 * within the window, so that a spike between two scrapes still shows (the
 * host's analogue: memwatch_memory_available_min_bytes). Three ways, best
 * first, chosen per cgroup when its file is opened:
 *  - fd_reset: v2 memory.peak opened for writing (6.12+: a write resets the
 *    peak for that file descriptor only, other readers keep theirs). Read at
 *    the window's end, then reset: exactly the window's peak.
 *  - lifetime_rise: v2 memory.peak before 6.12 (or not writable by us), v1
 *    memory.max_usage_in_bytes (its reset is global, it would disturb other
 *    readers: never written). The lifetime peak gives the window's exactly
 *    when it rose during the window; otherwise the window's usage read stands
 *    in, a lower bound. A window whose BPF iterator pass read the cgroup
 *    takes the page counter's watermark from there: what the file prints.
 *  - sampled: no peak file (v2 before 5.19) or no room in the budget of open
 *    files: the window's usage read. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "cgroup_internal.h"
#include "cgroupfs.h"
#include "macro.h"

const char *cgroup_peak_method_name(unsigned method)
{
	static const char *const names[] = {
		[CGROUP_PEAK_SAMPLED] = "sampled",
		[CGROUP_PEAK_LIFETIME_RISE] = "lifetime_rise",
		[CGROUP_PEAK_FD_RESET] = "fd_reset",
	};

	return method < ARRAY_SIZE(names) ? names[method] : "sampled";
}

void cgroup_peak_init(struct cgroup_peak *p)
{
	*p = (struct cgroup_peak){ .fd = -1 };
}

void cgroup_peak_close(struct cgroup_state *s, struct cgroup_peak *p)
{
	if (p->fd >= 0) {
		close(p->fd);
		s->open_files--;
	}
	cgroup_peak_init(p);
}

/* Any non-empty write resets the peak this fd reads to the current usage. */
static int peak_reset(int fd)
{
	return pwrite(fd, "reset\n", 6, 0) == 6 ? 0 : -errno;
}

/* Opens the cgroup's peak file below its root (path: from the root, with a
 * leading '/') and settles the method. Without room or a file: sampled. */
static void peak_open(struct cgroup_state *s, uint64_t key, const char *path, struct cgroup_peak *p)
{
	bool v1 = key & KEY_V1;
	int root = v1 ? s->roots.v1_fd : s->roots.v2_fd, fd;
	char rel[PATH_MAX];
	struct statfs fs;

	p->method = CGROUP_PEAK_SAMPLED;
	p->tried = true;
	if (root < 0 || s->open_files + 1 > s->open_files_max)
		return;
	if (snprintf(rel, sizeof(rel), "%s%smemory.%s", path[1] ? path + 1 : "", path[1] ? "/" : "",
		     v1 ? "max_usage_in_bytes" : "peak") >= (int)sizeof(rel))
		return;
	fd = openat(root, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return;
	p->fd = fd;
	p->method = CGROUP_PEAK_LIFETIME_RISE;
	s->open_files++;
	/* Written only on a real cgroup2 file (never a copy of a tree). Before
	 * 6.12 it is read-only: kernfs refuses the open for writing, root or
	 * not; the shipped unit's user may not write it either. */
	if (!v1 && fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
		int wfd = openat(root, rel, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

		if (wfd >= 0 && peak_reset(wfd) == 0) {
			close(fd);
			p->fd = wfd;
			p->method = CGROUP_PEAK_FD_RESET;
		} else if (wfd >= 0) {
			close(wfd);
		}
	}
}

static int peak_read(struct cgroup_state *s, int fd, uint64_t *value)
{
	ssize_t n = pread(fd, s->buf, CGROUP_READ_BUF_SIZE - 1, 0);

	if (n < 0)
		return -errno;
	return cgroup_parse_u64_or_max(s->buf, (size_t)n, value, NULL);
}

/* What the open peak file says now, reset after for fd_reset. A lifetime
 * peak that this window's iterator pass read is taken from there: the
 * same figure without a read (the fd stays for the windows between passes). */
static int peak_fetch(struct cgroup_state *s, uint64_t key, const struct cgroup_peak *p, uint64_t *value)
{
	int r;

	if (p->method == CGROUP_PEAK_LIFETIME_RISE && cgroup_bpf_watermark(s, key, value))
		return 0;
	r = peak_read(s, p->fd, value);
	if (r < 0 || p->method != CGROUP_PEAK_FD_RESET)
		return r;
	return peak_reset(p->fd);
}

/* This window's figure for one exported cgroup whose usage this window
 * read is usage. "primed": the file was open and read at the previous
 * window's end, so what it says now covers exactly this window. */
static void peak_update(struct cgroup_state *s, uint64_t key, const char *path, uint64_t usage,
			struct cgroup_peak *p)
{
	bool primed = p->fd >= 0 && p->read_at + 1 == s->peak_windows;
	uint64_t v = 0;

	if (!p->tried)
		peak_open(s, key, path, p);
	if (p->fd >= 0 && peak_fetch(s, key, p, &v) < 0)
		cgroup_peak_close(s, p); /* gone, or the kernel refused: the next window opens it again */
	p->value = usage;
	if (p->fd >= 0) {
		if (primed && p->method == CGROUP_PEAK_FD_RESET)
			p->value = v > usage ? v : usage;
		else if (primed && p->method == CGROUP_PEAK_LIFETIME_RISE && v > p->lifetime)
			p->value = v;
		p->lifetime = v;
	}
	p->read_at = s->peak_windows;
}

void cgroup_peak_collect(struct cgroup_state *s)
{
	s->peak_windows++;
	for (size_t i = 0; s->rank && i < s->n_keep; i++) {
		const struct entry *e = &s->entries[s->rank[i].index];
		struct cached *c = file_cache_find(s, e->key);

		if (c)
			peak_update(s, e->key, s->rank[i].path, e->mem.usage, &c->peak);
	}
}
