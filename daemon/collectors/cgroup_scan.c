// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector's walk: each window, every selected memory cgroup of
 * the v1 tree (with its cgroup2 twin's pressure) and of the cgroup2 tree is
 * read whole or skipped whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cgroup_internal.h"

static int remember_failed(struct cgroup_state *s, uint64_t key)
{
	if (s->n_failed == s->cap_failed) {
		size_t cap = s->cap_failed ? s->cap_failed * 2 : 64;
		uint64_t *p = realloc(s->failed, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->failed = p;
		s->cap_failed = cap;
	}
	s->failed[s->n_failed++] = key;
	s->skipped++;
	return 0;
}

static int add_entry(struct cgroup_state *s, uint64_t key, const char *path, const struct cgroup_mem *m)
{
	struct entry *e;

	if (s->n_entries == s->cap_entries) {
		size_t cap = s->cap_entries ? s->cap_entries * 2 : 256;

		e = realloc(s->entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->entries = e;
		s->cap_entries = cap;
	}
	e = &s->entries[s->n_entries];
	e->key = key;
	e->path_off = s->paths.len;
	e->mem = *m;
	strbuf_append(&s->paths, path, strlen(path) + 1);
	if (strbuf_failed(&s->paths))
		return -ENOMEM;
	s->n_entries++;
	return 0;
}

/* ---- reading one cgroup ---- */

/* memory.pressure is required where the cgroup2 tree has it, except that
 * writing 0 to cgroup.pressure hides it in a cgroup that still exists. */
static int read_pressure(struct cgroup_state *s, int dfd, struct cgroup_files *f, struct cgroup_mem *m)
{
	unsigned before = f ? cgroup_files_count(f) : 0;
	int r;

	r = cgroup_read_pressure(f && f->fd[CGROUP_FILE_PRESSURE] >= 0 ? -1 : dfd, f, s->buf, m);
	file_cache_count_opened(s, f, before);
	if (r == -ENOENT && dfd >= 0 && faccessat(dfd, "cgroup.procs", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	return r;
}

static bool fatal(int r)
{
	return r == -ENOMEM || r == -EMFILE || r == -ENFILE;
}

/* A cgroup that failed this window: its kept files may be stale. */
static int skip_cgroup(struct cgroup_state *s, struct cached *c, uint64_t key, int r)
{
	if (c) {
		s->open_files -= cgroup_files_close(&c->files);
		cgroup_peak_close(s, &c->peak);
		c->stat_read = false;
	}
	if (fatal(r))
		return r;
	return remember_failed(s, key);
}

/* memory.stat feeds the working set gauge and the refault counters, and is
 * the file that costs: read it for the cgroups exported last window, for new
 * ones, and for the rest every stat_interval windows, spread over the windows
 * by key; in between they keep the inactive_file and refaults last read (a
 * counter of a cgroup in other steps once every stat_interval windows). */
static bool stat_due(const struct cgroup_state *s, const struct cached *c)
{
	if (!c || !c->stat_read || c->exported || s->cfg.stat_interval <= 1 || s->read_fresh)
		return true;
	return (s->window + cgroup_key_mix(c->key)) % s->cfg.stat_interval == 0;
}

static int read_memory(struct cgroup_state *s, struct cgroup_dir *d, struct cached *c, struct cgroup_files *f,
		       bool v1, struct cgroup_mem *m)
{
	unsigned before = f ? cgroup_files_count(f) : 0;
	bool stat = stat_due(s, c);
	int dfd = -1, r;

	if (!f || !cgroup_files_complete(f)) {
		dfd = cgroup_dir_fd(d);
		if (dfd < 0)
			return dfd;
	}
	r = cgroup_read_memory(dfd, f, v1, stat ? 0 : CGROUP_READ_SKIP_STAT, s->buf, m);
	file_cache_count_opened(s, f, before);
	if (r < 0 || !c)
		return r;
	if (stat) {
		c->stat_read = true;
		c->inactive_file = m->inactive_file;
		c->has_inactive_file = m->has_inactive_file;
		memcpy(c->workingset, m->workingset, sizeof(c->workingset));
		c->workingset_present = m->workingset_present;
	} else {
		m->inactive_file = c->inactive_file;
		m->has_inactive_file = c->has_inactive_file;
		memcpy(m->workingset, c->workingset, sizeof(m->workingset));
		m->workingset_present = c->workingset_present;
	}
	return 0;
}

static uint64_t events_sum(const struct cgroup_mem *m)
{
	uint64_t sum = 0;

	for (unsigned e = 0; e < _CGROUP_EVENT_MAX; e++)
		sum += m->events[e];
	return sum;
}

/* A cgroup's memory.stat changes with its usage: one not exported whose
 * usage and events (from the iterator, known before memory.stat is read)
 * are what they were at its last memory.stat read is read only every
 * STAT_UNCHANGED_FACTOR * stat_interval windows (10,000 empty cgroups: 1,000
 * memory.stat reads a window otherwise, 30 ms of the kernel formatting them). */
#define STAT_UNCHANGED_FACTOR 6

static bool stat_due_moved(const struct cgroup_state *s, const struct cached *c, const struct cgroup_mem *m)
{
	if (!stat_due(s, c))
		return false;
	if (!c || !c->stat_read || c->exported || s->cfg.stat_interval <= 1 || s->read_fresh)
		return true;
	if (m->usage != c->stat_usage || events_sum(m) != c->stat_events)
		return true;
	return (s->window + cgroup_key_mix(c->key)) % (s->cfg.stat_interval * STAT_UNCHANGED_FACTOR) == 0;
}

/* The counter files came from the cgroup iterator: only memory.stat, when
 * due, is read here, through the kept-open file, the directory, or (rel:
 * its path below the iterator's root) opened for this read when no file
 * may stay open. */
static int read_memory_stat_only(struct cgroup_state *s, struct cgroup_dir *d, const char *rel,
				 struct cached *c, struct cgroup_files *f, struct cgroup_mem *m)
{
	unsigned before = f ? cgroup_files_count(f) : 0;
	bool own_dfd = false;
	int dfd = -1, r;

	if (!stat_due_moved(s, c, m)) {
		m->inactive_file = c->inactive_file;
		m->has_inactive_file = c->has_inactive_file;
		memcpy(m->workingset, c->workingset, sizeof(m->workingset));
		m->workingset_present = c->workingset_present;
		return 0;
	}
	if ((!f || f->fd[4] < 0) && d) {
		dfd = cgroup_dir_fd(d);
		if (dfd < 0)
			return dfd;
	} else if (!f || f->fd[4] < 0) {
		bool v2;

		dfd = openat(cgroup_bpf_root_fd(&s->roots, &v2), rel[1] ? rel + 1 : ".",
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dfd < 0)
			return -errno;
		own_dfd = true;
	}
	r = cgroup_read_stat(dfd, f, s->buf, m);
	if (own_dfd)
		close(dfd);
	file_cache_count_opened(s, f, before);
	if (r < 0 || !c)
		return r;
	c->stat_read = true;
	c->stat_usage = m->usage;
	c->stat_events = events_sum(m);
	c->inactive_file = m->inactive_file;
	c->has_inactive_file = m->has_inactive_file;
	memcpy(c->workingset, m->workingset, sizeof(c->workingset));
	c->workingset_present = m->workingset_present;
	return 0;
}

static int on_v1(struct cgroup_dir *d, void *userdata)
{
	struct cgroup_state *s = userdata;
	uint64_t key = d->ino | KEY_V1;
	struct cgroup_files *f;
	struct cgroup_mem m;
	struct cached *c;
	int r;

	if (!cgroup_path_selected(&s->include, &s->exclude, d->path))
		return 0;
	c = file_cache_get(s, key);
	f = file_cache_files(s, c);
	/* Everything first, then one entry: a cgroup removed half-way is skipped whole. */
	if (cgroup_bpf_lookup(s, d->ino, true, &m))
		r = read_memory_stat_only(s, d, d->path, c, f, &m);
	else
		r = read_memory(s, d, c, f, true, &m);
	if (r == 0 && s->roots.pressure) {
		if (f && f->fd[CGROUP_FILE_PRESSURE] >= 0) {
			r = read_pressure(s, -1, f, &m);
		} else {
			int sfd = cgroup_dir_shadow_fd(d);

			if (sfd >= 0)
				r = read_pressure(s, sfd, f, &m);
			else if (sfd != -ENOENT)
				r = sfd;
			/* else no cgroup2 twin: no pressure for this one */
		}
	}
	if (r < 0)
		return skip_cgroup(s, c, key, r);
	return add_entry(s, key, d->path, &m);
}

static int on_v2(struct cgroup_dir *d, void *userdata)
{
	struct cgroup_state *s = userdata;
	struct cgroup_files *f;
	struct cgroup_mem m;
	struct cached *c;
	int r;

	/* The root has no memory.current; its numbers are the host's (meminfo, psi). */
	if (d->depth == 0)
		return 0;
	/* Also in the v1 tree: read there already, v1 wins. */
	if (cgroup_dir_shadow_fd(d) >= 0)
		return 0;
	if (!cgroup_path_selected(&s->include, &s->exclude, d->path))
		return 0;
	c = file_cache_get(s, d->ino);
	f = file_cache_files(s, c);
	if (cgroup_bpf_lookup(s, d->ino, false, &m))
		r = read_memory_stat_only(s, d, d->path, c, f, &m);
	else
		r = read_memory(s, d, c, f, false, &m);
	if (r == -ENOENT) {
		int dfd = cgroup_dir_fd(d);

		if (dfd >= 0 && faccessat(dfd, "cgroup.controllers", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !cgroup_dir_has_memory_controller(dfd, s->buf))
			return 1; /* memory not enabled here, so not below either */
	}
	if (r == 0 && s->roots.pressure)
		r = read_pressure(s, f && f->fd[CGROUP_FILE_PRESSURE] >= 0 ? -1 : cgroup_dir_fd(d), f, &m);
	if (r < 0)
		return skip_cgroup(s, c, d->ino, r);
	return add_entry(s, d->ino, d->path, &m);
}

/* Windows between full walks while the tree looks unchanged: a cgroup2
 * twin made after its v1 cgroup (its pressure) is found by the next full
 * walk. */
#define FULL_WALK_EVERY 30

/* The iterator listed the same cgroups under the same names as when the
 * last full walk ran, and that walk read every cgroup it found. */
static bool tree_unchanged(const struct cgroup_state *s)
{
	return cgroup_bpf_covers_tree(s) && s->layout_valid && s->memcg_signature == s->layout_signature &&
	       s->window % FULL_WALK_EVERY != 0;
}

/* One entry of the last walk read again through its kept-open files:
 * -EAGAIN when a file it needs is not open (the walk opens it). */
static int reread_entry(struct cgroup_state *s, struct entry *e)
{
	struct cached *c = file_cache_get(s, e->key);
	struct cgroup_files *f = file_cache_files(s, c);
	struct cgroup_mem m;
	int r;

	/* Through the iterator a cgroup needs no file kept open: past the
	 * budget of open files its memory.stat is opened when due. */
	if (c && cgroup_bpf_lookup(s, e->key & ~KEY_V1, (e->key & KEY_V1) != 0, &m)) {
		r = read_memory_stat_only(s, NULL, s->paths.data + e->path_off, c, f, &m);
	} else if (!f) {
		return -EAGAIN;
	} else {
		if (!cgroup_files_complete(f))
			return -EAGAIN;
		r = read_memory(s, NULL, c, f, true, &m);
	}
	if (r == 0 && e->mem.has_pressure) {
		if (!f || f->fd[CGROUP_FILE_PRESSURE] < 0)
			return -EAGAIN;
		r = read_pressure(s, -1, f, &m);
	}
	if (r < 0)
		return r;
	e->mem = m;
	return 0;
}

static int reread_entries(struct cgroup_state *s)
{
	for (size_t i = 0; i < s->n_entries; i++) {
		int r = reread_entry(s, &s->entries[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

static int cmp_entry_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

int cgroup_scan(struct cgroup_state *s, bool *truncated)
{
	const struct cgroup_walk_opts opts = {
		.max_depth = (unsigned)s->cfg.max_depth,
		.max_cgroups = (size_t)s->cfg.max_cgroups,
	};
	struct cgroup_walk_stats st1 = { 0 }, st2 = { 0 };
	int r = 0;

	s->n_failed = s->skipped = 0;
	s->window++;
	s->cache_seen = 0;
	*truncated = false;
	/* Without this window's records every cgroup is read from cgroupfs. */
	if (cgroup_bpf_refresh(s) < 0)
		s->n_memcg = 0;
	/* No directory listed, no fstatat: the entries and paths stay the last walk's.
	 * Anything amiss (a file not open, a cgroup gone since) walks after all. */
	if (tree_unchanged(s)) {
		r = reread_entries(s);
		if (r == 0) {
			file_cache_sweep(s);
			*truncated = s->layout_truncated; /* the same tree cut at the same place */
			return 0;
		}
		if (r == -ENOMEM)
			return r;
	}
	s->layout_valid = false;
	s->n_entries = 0;
	strbuf_reset(&s->paths);
	if (s->roots.v1_fd >= 0)
		r = cgroup_walk(s->roots.v1_fd, s->roots.pressure ? s->roots.v2_fd : -1, &opts, on_v1, s, &st1);
	/* Only when both trees have memory (not a real host: a configured pair)
	 * does the v2 walk need the v1 tree beside it, to leave out duplicates. */
	if (r >= 0 && s->roots.v2_memory)
		r = cgroup_walk(s->roots.v2_fd, s->roots.v1_fd, &opts, on_v2, s, &st2);
	s->skipped += st1.vanished + st2.vanished;
	*truncated = st1.truncated || st2.truncated;
	if (r >= 0) {
		/* In key order, the trackers take the rows as they come (no sort of
		 * 10,000 rows of 200 bytes each window), and the windows that read
		 * the entries again keep it. */
		/* A walk that found nothing may have no array: qsort(NULL) is undefined. */
		if (s->n_entries > 1)
			qsort(s->entries, s->n_entries, sizeof(*s->entries), cmp_entry_key);
		file_cache_sweep(s);
		/* A walk cut at max_cgroups visits the same cgroups of the same tree again. */
		s->layout_valid = s->skipped == 0 && s->memcg_signature != 0;
		s->layout_signature = s->memcg_signature;
		s->layout_truncated = *truncated;
	}
	return r;
}
