// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup_walk.h"
#include "cgroupfs.h"
#include "fileio.h"
#include "psi.h"

/* ---- patterns ---- */

static bool is_separator(char c)
{
	return c == ' ' || c == '\t' || c == ',' || c == '\n';
}

int cgroup_globs_parse(const char *text, struct cgroup_globs *ret)
{
	/* Without ret, patterns are counted, never copied: nothing to free. */
	_cleanup_(cgroup_globs_free) struct cgroup_globs g = { .n = 0 };
	const char *p = text;

	while (*p) {
		const char *start;
		size_t len;

		while (is_separator(*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !is_separator(*p))
			p++;
		len = (size_t)(p - start);
		if (len > CGROUP_GLOB_LEN_MAX || !strchr("/*?[", start[0]))
			return -EINVAL;
		if (g.n == CGROUP_GLOBS_MAX)
			return -E2BIG;
		if (ret) {
			g.pattern[g.n] = strndup(start, len);
			if (!g.pattern[g.n])
				return -ENOMEM;
		}
		g.n++;
	}
	if (ret) {
		*ret = g;
		g = (struct cgroup_globs){ .n = 0 }; /* now ret's */
	}
	return 0;
}

void cgroup_globs_free(struct cgroup_globs *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->pattern[i]);
	*g = (struct cgroup_globs){ .n = 0 };
}

bool cgroup_globs_match(const struct cgroup_globs *g, const char *path)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->pattern[i] && fnmatch(g->pattern[i], path, 0) == 0)
			return true;
	return false;
}

bool cgroup_path_selected(const struct cgroup_globs *include, const struct cgroup_globs *exclude,
			  const char *path)
{
	if (include && include->n > 0 && !cgroup_globs_match(include, path))
		return false;
	return !(exclude && cgroup_globs_match(exclude, path));
}

/* ---- the walk ---- */

struct walker {
	dev_t dev; /* the root's: a hierarchy mounted inside this one is not walked */
	const struct cgroup_walk_opts *opts;
	cgroup_walk_fn fn;
	void *userdata;
	struct cgroup_walk_stats *stats;
	char path[PATH_MAX];
	size_t path_len;
};

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)

static bool fatal_error(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM;
}

int cgroup_dir_fd(struct cgroup_dir *d)
{
	struct stat st;
	int fd;

	if (d->fd >= 0)
		return d->fd;
	fd = openat(d->parent_fd, d->name, DIR_FLAGS);
	if (fd < 0)
		return -errno;
	/* Removed and created again under the same name since the walk looked:
	 * not the cgroup the caller keys its data by. */
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_ino != d->ino) {
		close(fd);
		return -ENOENT;
	}
	d->fd = fd;
	return fd;
}

int cgroup_dir_shadow_fd(struct cgroup_dir *d)
{
	if (!d->shadow_tried) {
		d->shadow_tried = true;
		if (d->parent_shadow_fd >= 0)
			d->shadow_fd = openat(d->parent_shadow_fd, d->name, DIR_FLAGS);
		if (d->shadow_fd < 0 && fatal_error(errno))
			return -errno;
	}
	return d->shadow_fd >= 0 ? d->shadow_fd : -ENOENT;
}

static int walk_children(struct walker *w, struct cgroup_dir *d, unsigned depth);

static int walk_one(struct walker *w, int parent_fd, int parent_shadow_fd, const char *name, unsigned depth)
{
	struct cgroup_dir d = {
		.path = w->path_len ? w->path : "/",
		.depth = depth,
		.parent_fd = parent_fd,
		.parent_shadow_fd = parent_shadow_fd,
		.name = name,
		.fd = -1,
		.shadow_fd = -1,
	};
	struct stat st;
	int r;

	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (fatal_error(errno))
			return -errno;
		if (errno == ENOENT)
			w->stats->vanished++; /* removed since readdir listed it: normal churn */
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* a file or a symlink that DT_UNKNOWN hid */
	if (depth > 0 && st.st_dev != w->dev)
		return 0; /* a cgroup2 tree mounted in the v1 one: not cgroups of this hierarchy */
	if (w->stats->visited >= w->opts->max_cgroups) {
		w->stats->truncated = true;
		return 0;
	}
	d.ino = (uint64_t)st.st_ino;
	w->stats->visited++;
	r = w->fn(&d, w->userdata);
	if (r == 0 && depth < w->opts->max_depth && st.st_nlink != 2)
		r = walk_children(w, &d, depth);
	if (d.fd >= 0)
		close(d.fd);
	if (d.shadow_fd >= 0)
		close(d.shadow_fd);
	return r > 0 ? 0 : r;
}

static int walk_children(struct walker *w, struct cgroup_dir *d, unsigned depth)
{
	struct dirent *de;
	DIR *dir;
	int fd, sfd, r = 0;

	fd = cgroup_dir_fd(d);
	if (fd < 0)
		return fatal_error(-fd) ? fd : 0;
	sfd = cgroup_dir_shadow_fd(d);
	if (sfd < 0 && sfd != -ENOENT)
		return sfd;
	/* The callback is done with d->fd, which has not been read from: readdir may have it. */
	dir = fdopendir(fd);
	if (!dir)
		return fatal_error(errno) ? -errno : 0;
	d->fd = -1;
	w->stats->listed++;
	while ((de = readdir(dir))) {
		size_t saved = w->path_len, name_len;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue; /* files, and symlinks, which are never followed */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (w->stats->visited >= w->opts->max_cgroups) {
			w->stats->truncated = true;
			break;
		}
		name_len = strlen(de->d_name);
		if (saved + 1 + name_len >= sizeof(w->path))
			continue; /* deeper than PATH_MAX: cannot be named in a label anyway */
		w->path[saved] = '/';
		memcpy(w->path + saved + 1, de->d_name, name_len + 1);
		w->path_len = saved + 1 + name_len;
		r = walk_one(w, dirfd(dir), sfd >= 0 ? sfd : -1, de->d_name, depth + 1);
		w->path_len = saved;
		w->path[saved] = '\0';
		if (r < 0)
			break;
	}
	closedir(dir);
	return r;
}

int cgroup_walk(int root_fd, int shadow_root_fd, const struct cgroup_walk_opts *opts, cgroup_walk_fn fn,
		void *userdata, struct cgroup_walk_stats *stats)
{
	struct walker w = { .opts = opts, .fn = fn, .userdata = userdata, .stats = stats };
	struct stat st;

	*stats = (struct cgroup_walk_stats){ .visited = 0 };
	/* As walk_one() will look at it: a root that is gone has nothing to walk. */
	if (fstatat(root_fd, ".", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fatal_error(errno) ? -errno : 0;
	w.dev = st.st_dev;
	w.path[0] = '\0';
	/* The root is "." of root_fd; its twin is "." of shadow_root_fd. */
	return walk_one(&w, root_fd, shadow_root_fd, ".", 0);
}

/* ---- reading ---- */

void cgroup_files_init(struct cgroup_files *f)
{
	for (size_t i = 0; i < CGROUP_FILES; i++)
		f->fd[i] = -1;
}

unsigned cgroup_files_close(struct cgroup_files *f)
{
	unsigned n = 0;

	for (size_t i = 0; i < CGROUP_FILES; i++)
		if (f->fd[i] >= 0) {
			close(f->fd[i]);
			f->fd[i] = -1;
			n++;
		}
	return n;
}

unsigned cgroup_files_count(const struct cgroup_files *f)
{
	unsigned n = 0;

	for (size_t i = 0; i < CGROUP_FILES; i++)
		n += f->fd[i] >= 0;
	return n;
}

bool cgroup_files_complete(const struct cgroup_files *f)
{
	for (size_t i = 0; i < CGROUP_FILE_PRESSURE; i++)
		if (f->fd[i] < 0)
			return false;
	return true;
}

/* Reads from offset 0 with pread, so that a kept-open fd needs no lseek. */
static int read_fd(int fd, char *buf, size_t cap, size_t *len)
{
	size_t got = 0;

	if (cap < 2)
		return -EINVAL;
	for (;;) {
		ssize_t n = pread_retrying(fd, buf + got, cap - 1 - got, (off_t)got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == cap - 1) {
			char extra;

			/* Full: it fits only if nothing follows. */
			n = pread_retrying(fd, &extra, 1, (off_t)got);
			if (n < 0)
				return (int)n;
			if (n > 0)
				return -EFBIG;
			break;
		}
		/* cgroup files are one seq_file record: a read that stopped short
		 * at a line end had all of it, and skipping the read that would
		 * return 0 saves a syscall per file. */
		if (buf[got - 1] == '\n')
			break;
	}
	buf[got] = '\0';
	*len = got;
	return 0;
}

int cgroup_read_at(int dfd, const char *name, char *buf, size_t cap, size_t *len)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return read_fd(fd, buf, cap, len);
}

/* One file, through f's slot when there is an f. */
static int read_file(int dfd, struct cgroup_files *f, unsigned slot, const char *name, char *buf, size_t *len)
{
	int fd;

	if (!f)
		return dfd >= 0 ? cgroup_read_at(dfd, name, buf, CGROUP_READ_BUF_SIZE, len) : -EBADF;
	if (f->fd[slot] < 0) {
		if (dfd < 0)
			return -EBADF;
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
		if (fd < 0)
			return -errno;
		f->fd[slot] = fd;
	}
	return read_fd(f->fd[slot], buf, CGROUP_READ_BUF_SIZE, len);
}

static int read_value(int dfd, struct cgroup_files *f, unsigned slot, const char *name, char *buf,
		      uint64_t *v, bool *is_max)
{
	size_t len;
	int r;

	r = read_file(dfd, f, slot, name, buf, &len);
	if (r < 0)
		return r;
	return cgroup_parse_u64_or_max(buf, len, v, is_max);
}

#define KV_MAX 32

static int read_kv(int dfd, struct cgroup_files *f, unsigned slot, const char *name, char *buf,
		   struct cgroup_kv *kv, size_t *n)
{
	size_t len;
	int r;

	r = read_file(dfd, f, slot, name, buf, &len);
	if (r < 0)
		return r;
	return cgroup_parse_flat_keyed(buf, len, kv, KV_MAX, n);
}

static int read_memstat(int dfd, struct cgroup_files *f, unsigned slot, char *buf, struct cgroup_memstat *ms)
{
	size_t len;
	int r;

	r = read_file(dfd, f, slot, "memory.stat", buf, &len);
	if (r < 0)
		return r;
	return cgroup_parse_memstat(buf, len, ms);
}

static const char *const event_names[_CGROUP_EVENT_MAX] = {
	[CGROUP_EVENT_LOW] = "low",
	[CGROUP_EVENT_HIGH] = "high",
	[CGROUP_EVENT_MAX] = "max",
	[CGROUP_EVENT_OOM] = "oom",
	[CGROUP_EVENT_OOM_KILL] = "oom_kill",
	[CGROUP_EVENT_OOM_GROUP_KILL] = "oom_group_kill",
	[CGROUP_EVENT_FAILCNT] = "failcnt",
};

const char *cgroup_event_name(enum cgroup_event e)
{
	return (unsigned)e < _CGROUP_EVENT_MAX ? event_names[e] : NULL;
}

static void set_event(struct cgroup_mem *m, enum cgroup_event e, uint64_t v)
{
	m->events[e] = v;
	m->events_present |= 1u << e;
}

static void set_workingset(struct cgroup_mem *m, const struct cgroup_memstat *ms)
{
	for (unsigned k = 0; k < _VMSTAT_WS_MAX; k++) {
		bool has[2];

		cgroup_memstat_workingset(ms, k, m->workingset[k], has);
		for (unsigned t = 0; t < 2; t++)
			if (has[t])
				m->workingset_present |= 1u << (2 * k + t);
	}
}

void cgroup_mem_set_v1_counters(struct cgroup_mem *m, const struct cgroup_v1_counters *c)
{
	*m = (struct cgroup_mem){ .v1 = true, .usage = c->usage, .limit = c->limit };
	m->has_limit = !cgroup_v1_limit_is_unlimited(c->limit);
	set_event(m, CGROUP_EVENT_FAILCNT, c->failcnt);
	if (c->has_oom_kill)
		set_event(m, CGROUP_EVENT_OOM_KILL, c->oom_kill);
	m->has_under_oom = c->has_under_oom;
	m->under_oom = c->under_oom;
}

static int read_memory_stat(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *m)
{
	struct cgroup_memstat ms;
	int r;

	r = read_memstat(dfd, f, 4, buf, &ms);
	if (r < 0)
		return r;
	/* v1's total_ includes the children, as usage_in_bytes does with
	 * use_hierarchy; cgroup2 prints hierarchical keys without the prefix. */
	if (ms.present & CGROUP_MEMSTAT_HAS_TOTAL_INACTIVE_FILE) {
		m->inactive_file = ms.total_inactive_file;
		m->has_inactive_file = true;
	} else if (ms.present & CGROUP_MEMSTAT_HAS_INACTIVE_FILE) {
		m->inactive_file = ms.inactive_file;
		m->has_inactive_file = true;
	}
	set_workingset(m, &ms);
	return 0;
}

int cgroup_read_stat(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *m)
{
	struct cgroup_mem copy = *m;
	int r;

	r = read_memory_stat(dfd, f, buf, &copy);
	if (r < 0)
		return r;
	*m = copy;
	return 0;
}

static int read_v1(int dfd, struct cgroup_files *f, unsigned flags, char *buf, struct cgroup_mem *out)
{
	struct cgroup_v1_counters c = { 0 };
	struct cgroup_kv kv[KV_MAX];
	const struct cgroup_kv *k;
	struct cgroup_mem m;
	bool is_max;
	size_t n;
	int r;

	r = read_value(dfd, f, 0, "memory.usage_in_bytes", buf, &c.usage, &is_max);
	if (r < 0)
		return r;
	if (is_max)
		return -EINVAL; /* v1 prints numbers only */
	r = read_value(dfd, f, 1, "memory.limit_in_bytes", buf, &c.limit, &is_max);
	if (r < 0)
		return r;
	if (is_max)
		c.limit = UINT64_MAX; /* never printed by v1; no limit */
	r = read_value(dfd, f, 2, "memory.failcnt", buf, &c.failcnt, &is_max);
	if (r < 0)
		return r;
	if (is_max)
		return -EINVAL;
	r = read_kv(dfd, f, 3, "memory.oom_control", buf, kv, &n);
	if (r < 0)
		return r;
	k = cgroup_kv_find(kv, n, "oom_kill");
	if (k) {
		c.has_oom_kill = true;
		c.oom_kill = k->value;
	}
	k = cgroup_kv_find(kv, n, "under_oom");
	if (k) {
		c.has_under_oom = true;
		c.under_oom = k->value != 0;
	}
	cgroup_mem_set_v1_counters(&m, &c);
	if (!(flags & CGROUP_READ_SKIP_STAT)) {
		r = read_memory_stat(dfd, f, buf, &m);
		if (r < 0)
			return r;
	}
	*out = m;
	return 0;
}

void cgroup_mem_set_v2_counters(struct cgroup_mem *m, const struct cgroup_v2_counters *c)
{
	*m = (struct cgroup_mem){ .v1 = false, .usage = c->usage, .limit = c->max, .high = c->high };
	m->has_limit = !c->max_is_max;
	m->has_high = !c->high_is_max;
	for (unsigned e = CGROUP_EVENT_LOW; e <= CGROUP_EVENT_OOM_GROUP_KILL; e++)
		if (c->events_present & (1u << e))
			set_event(m, e, c->events[e]);
}

static int read_v2(int dfd, struct cgroup_files *f, unsigned flags, char *buf, struct cgroup_mem *out)
{
	struct cgroup_v2_counters c = { 0 };
	struct cgroup_kv kv[KV_MAX];
	struct cgroup_mem m;
	bool is_max;
	size_t n;
	int r;

	r = read_value(dfd, f, 0, "memory.current", buf, &c.usage, &is_max);
	if (r < 0)
		return r;
	if (is_max)
		return -EINVAL;
	r = read_value(dfd, f, 1, "memory.max", buf, &c.max, &c.max_is_max);
	if (r < 0)
		return r;
	r = read_value(dfd, f, 2, "memory.high", buf, &c.high, &c.high_is_max);
	if (r < 0)
		return r;
	r = read_kv(dfd, f, 3, "memory.events", buf, kv, &n);
	if (r < 0)
		return r;
	for (unsigned e = CGROUP_EVENT_LOW; e <= CGROUP_EVENT_OOM_GROUP_KILL; e++) {
		const struct cgroup_kv *k = cgroup_kv_find(kv, n, event_names[e]);

		if (k) {
			c.events[e] = k->value;
			c.events_present |= 1u << e;
		}
	}
	cgroup_mem_set_v2_counters(&m, &c);
	if (!(flags & CGROUP_READ_SKIP_STAT)) {
		r = read_memory_stat(dfd, f, buf, &m);
		if (r < 0)
			return r;
	}
	*out = m;
	return 0;
}

int cgroup_read_v1(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *out)
{
	return read_v1(dfd, f, 0, buf, out);
}

int cgroup_read_v2(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *out)
{
	return read_v2(dfd, f, 0, buf, out);
}

int cgroup_read_memory(int dfd, struct cgroup_files *f, bool v1, unsigned flags, char *buf, struct cgroup_mem *out)
{
	return v1 ? read_v1(dfd, f, flags, buf, out) : read_v2(dfd, f, flags, buf, out);
}

int cgroup_read_pressure(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *out)
{
	struct psi_stats ps;
	size_t len;
	int r;

	r = read_file(dfd, f, CGROUP_FILE_PRESSURE, "memory.pressure", buf, &len);
	if (r < 0)
		return r;
	r = psi_parse(buf, len, &ps);
	if (r < 0)
		return r;
	if (!ps.has_some)
		return -EINVAL;
	out->has_pressure = true;
	out->pressure_some_usec = ps.some.total_usec;
	out->has_pressure_full = ps.has_full;
	out->pressure_full_usec = ps.has_full ? ps.full.total_usec : 0;
	return 0;
}

bool cgroup_dir_has_memory_controller(int dfd, char *buf)
{
	size_t len;
	char *p, *save = NULL;

	if (cgroup_read_at(dfd, "cgroup.controllers", buf, CGROUP_READ_BUF_SIZE, &len) < 0)
		return false;
	for (p = strtok_r(buf, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save))
		if (strcmp(p, "memory") == 0)
			return true;
	return false;
}

uint64_t cgroup_working_set(uint64_t usage, uint64_t inactive_file)
{
	return usage > inactive_file ? usage - inactive_file : 0;
}

/* ---- ranking ---- */

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_rank(const void *x, const void *y)
{
	const struct cgroup_rank *a = x, *b = y;
	int c;

	if (a->has_limit != b->has_limit)
		return a->has_limit ? -1 : 1;
	if (a->has_limit) {
		/* usage_a / limit_a vs usage_b / limit_b, in exact 128-bit arithmetic. */
		unsigned __int128 l = (unsigned __int128)a->usage * (b->limit ? b->limit : 1);
		unsigned __int128 rr = (unsigned __int128)b->usage * (a->limit ? a->limit : 1);

		if (l != rr)
			return l > rr ? -1 : 1;
	}
	c = cmp_u64_desc(a->pressure_some_delta, b->pressure_some_delta);
	if (c)
		return c;
	c = cmp_u64_desc(a->usage, b->usage);
	if (c)
		return c;
	return strcmp(a->path, b->path);
}

void cgroup_rank_sort(struct cgroup_rank *r, size_t n)
{
	if (n > 1)
		qsort(r, n, sizeof(*r), cmp_rank);
}
