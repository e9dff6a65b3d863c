// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector's kept-open files: an open-addressing table by cgroup
 * key of each cgroup's memory files, re-read with pread() window after
 * window, within a budget of open files. */
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include "cgroup_internal.h"

uint64_t cgroup_key_mix(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)(cgroup_key_mix(key) & (cap - 1));
}

static struct cached *cache_insert(struct cached *table, size_t cap, uint64_t key, bool *added)
{
	size_t i;

	for (i = slot_of(key, cap); table[i].key; i = (i + 1) & (cap - 1))
		if (table[i].key == key) {
			*added = false;
			return &table[i];
		}
	table[i].key = key;
	cgroup_files_init(&table[i].files);
	cgroup_peak_init(&table[i].peak);
	*added = true;
	return &table[i];
}

struct cached *file_cache_find(struct cgroup_state *s, uint64_t key)
{
	size_t i;

	if (!s->cache_cap)
		return NULL;
	for (i = slot_of(key, s->cache_cap); s->cache[i].key; i = (i + 1) & (s->cache_cap - 1))
		if (s->cache[i].key == key)
			return &s->cache[i];
	return NULL;
}

/* Moves the entries seen in the current window (all, when !only_seen) to a
 * table of new_cap slots; the others' files are closed. */
static int cache_rebuild(struct cgroup_state *s, size_t new_cap, bool only_seen)
{
	struct cached *t = calloc(new_cap, sizeof(*t));
	size_t i, n = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->cache_cap; i++) {
		struct cached *c = &s->cache[i], *to;
		bool added;

		if (!c->key)
			continue;
		if (only_seen && c->seen != s->window) {
			s->open_files -= cgroup_files_close(&c->files);
			cgroup_peak_close(s, &c->peak);
			free(c->usage_trend.points);
			continue;
		}
		to = cache_insert(t, new_cap, c->key, &added);
		*to = *c;
		n++;
	}
	free(s->cache);
	s->cache = t;
	s->cache_cap = new_cap;
	s->cache_n = n;
	return 0;
}

/* The entry of key, created if needed; NULL without memory (then the
 * cgroup is read without keeping files). */
struct cached *file_cache_get(struct cgroup_state *s, uint64_t key)
{
	struct cached *c;
	bool added;

	if ((s->cache_n + 1) * 2 > s->cache_cap && cache_rebuild(s, s->cache_cap ? s->cache_cap * 2 : 256, false) < 0)
		return NULL;
	c = cache_insert(s->cache, s->cache_cap, key, &added);
	if (added)
		s->cache_n++;
	if (c->seen != s->window) {
		c->seen = s->window;
		s->cache_seen++;
	}
	return c;
}

void file_cache_sweep(struct cgroup_state *s)
{
	if (s->cache_seen < s->cache_n)
		(void)cache_rebuild(s, s->cache_cap, true); /* without memory, the closing waits */
}

void file_cache_free(struct cgroup_state *s)
{
	size_t i;

	for (i = 0; i < s->cache_cap; i++)
		if (s->cache[i].key) {
			cgroup_files_close(&s->cache[i].files);
			cgroup_peak_close(s, &s->cache[i].peak);
			free(s->cache[i].usage_trend.points);
		}
	free(s->cache);
	s->cache = NULL;
	s->cache_cap = s->cache_n = s->cache_seen = 0;
	s->open_files = 0;
}

/* The files to read through: the entry's, unless that would open more than
 * open_files_max; NULL then (opened and closed each window). */
struct cgroup_files *file_cache_files(struct cgroup_state *s, struct cached *c)
{
	if (!c)
		return NULL;
	if (cgroup_files_count(&c->files) == 0 && s->open_files + CGROUP_FILES > s->open_files_max)
		return NULL;
	return &c->files;
}

void file_cache_count_opened(struct cgroup_state *s, const struct cgroup_files *f, unsigned before)
{
	if (f)
		s->open_files += cgroup_files_count(f) - before;
}

/* How many files may stay open. systemd leaves the soft RLIMIT_NOFILE at
 * 1024 and advises programs that need more (and do not use select(), which
 * this one does not) to raise it to the hard limit themselves. */
size_t file_cache_budget(void)
{
	const rlim_t want = 65536;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < want && rl.rlim_max > rl.rlim_cur) {
		struct rlimit raised = { rl.rlim_max < want ? rl.rlim_max : want, rl.rlim_max };

		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			rl = raised;
	}
	/* Half for us, the rest for HTTP connections, BPF and the other collectors. */
	return rl.rlim_cur > 2048 ? (size_t)(rl.rlim_cur / 2) : (size_t)(rl.rlim_cur / 4);
}
