// SPDX-License-Identifier: GPL-2.0
/* Memory cgroups: usage, limits, events, working set and pressure of every
 * memory cgroup, walked each window under the cgroup2 root, the v1 memory
 * hierarchy, or both on hybrid hosts (v1 memory files, the cgroup2 twin's
 * memory.pressure). The top_k cgroups are exported; the rest are folded into
 * cgroup="other". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "cgroup_paths.h"
#include "cgroup_walk.h"
#include "collector.h"
#include "config.h"
#include "core.h"
#include "fileio.h"
#include "log.h"
#include "strbuf.h"
#include "tracker.h"

/* Counters kept per cgroup: stall times, then one per event kind. */
enum { C_SOME, C_FULL, C_EVENT0, N_COUNTERS = C_EVENT0 + _CGROUP_EVENT_MAX };
#define N_TRACKERS ((N_COUNTERS + TRACKER_MAX_COUNTERS - 1) / TRACKER_MAX_COUNTERS)

/* v1 and v2 inode numbers come from different kernfs roots and can collide. */
#define KEY_V1 (UINT64_C(1) << 63)

struct cgroup_config {
	char v1_root[256]; /* "auto", "none" or a path */
	char v2_root[256];
	char include[1024];
	char exclude[1024];
	uint64_t max_depth;
	uint64_t max_cgroups;
	uint64_t top_k;
	uint64_t stat_interval; /* windows between memory.stat reads of a cgroup not exported */
};

struct roots {
	int v1_fd, v2_fd;   /* -1 when absent */
	bool v2_memory;     /* the cgroup2 tree has the memory controller */
	bool pressure;      /* the cgroup2 tree has memory.pressure */
	char v1[256], v2[256];
};

struct entry {
	uint64_t key;
	size_t path_off; /* into paths */
	struct cgroup_mem mem;
};

/* A cgroup's files kept open between windows, by key, and what its
 * memory.stat said last time it was read. */
struct cached {
	uint64_t key; /* 0: empty slot */
	uint64_t seen; /* the window it was last walked in */
	struct cgroup_files files;
	uint64_t inactive_file;
	bool stat_read, has_inactive_file;
	bool exported; /* in the last window's top_k */
};

struct cgroup_state {
	bool initialized;
	struct cgroup_config cfg;
	struct roots roots;
	struct cgroup_globs include, exclude;
	char *buf; /* CGROUP_READ_BUF_SIZE */

	/* This window's walk. */
	struct entry *entries;
	size_t n_entries, cap_entries;
	struct strbuf paths;
	uint64_t *failed; /* keys of cgroups skipped in this window */
	size_t n_failed, cap_failed;
	size_t skipped;

	struct tracker trackers[N_TRACKERS];
	unsigned seen; /* bit per counter: some cgroup had it, so "other" exports it */
	uint64_t skipped_total;

	/* Open-addressing table of kept-open files, rebuilt when cgroups go. */
	struct cached *cache;
	size_t cache_cap, cache_n, cache_seen;
	uint64_t window;
	size_t open_files, open_files_max;
};

static const struct metric_desc desc_usage = {
	"memwatch_cgroup_memory_usage_bytes",
	"Memory charged to the cgroup and its descendants (memory.current, v1 memory.usage_in_bytes).",
	METRIC_GAUGE, 1, { "cgroup" },
};
static const struct metric_desc desc_limit = {
	"memwatch_cgroup_memory_limit_bytes",
	"Hard memory limit (memory.max, v1 memory.limit_in_bytes); absent when unlimited.",
	METRIC_GAUGE, 1, { "cgroup" },
};
static const struct metric_desc desc_ratio = {
	"memwatch_cgroup_memory_usage_ratio", "Usage / limit; absent when unlimited.",
	METRIC_GAUGE, 1, { "cgroup" },
};
static const struct metric_desc desc_high = {
	"memwatch_cgroup_memory_high_bytes", "Throttling threshold memory.high (v2); absent when max.",
	METRIC_GAUGE, 1, { "cgroup" },
};
static const struct metric_desc desc_working_set = {
	"memwatch_cgroup_memory_working_set_bytes",
	"Usage minus inactive file pages, clamped at 0 (as cAdvisor computes it).", METRIC_GAUGE, 1, { "cgroup" },
};
static const struct metric_desc desc_events = {
	"memwatch_cgroup_memory_events_total",
	"Memory events of the cgroup (v2 memory.events; v1 memory.failcnt as failcnt, memory.oom_control oom_kill).",
	METRIC_COUNTER, 2, { "cgroup", "event" },
};
static const struct metric_desc desc_under_oom = {
	"memwatch_cgroup_memory_under_oom", "1 while the cgroup is under OOM (v1 memory.oom_control under_oom).",
	METRIC_GAUGE, 1, { "cgroup" },
};
static const struct metric_desc desc_some = {
	"memwatch_cgroup_pressure_memory_some_seconds_total",
	"Time in which at least one task of the cgroup stalled on memory (memory.pressure some).",
	METRIC_COUNTER, 1, { "cgroup" },
};
static const struct metric_desc desc_full = {
	"memwatch_cgroup_pressure_memory_full_seconds_total",
	"Time in which all non-idle tasks of the cgroup stalled on memory at once (memory.pressure full).",
	METRIC_COUNTER, 1, { "cgroup" },
};
static const struct metric_desc desc_discovered = {
	"memwatch_cgroups_discovered", "Memory cgroups read in the last walk (after include/exclude).",
	METRIC_GAUGE,
};
static const struct metric_desc desc_walk_seconds = {
	"memwatch_cgroup_walk_seconds", "Time the last walk over the cgroup trees took.", METRIC_GAUGE,
};
static const struct metric_desc desc_skipped = {
	"memwatch_cgroup_walk_skipped_total",
	"Cgroups left out of a window because they vanished or a file could not be read during the walk.",
	METRIC_COUNTER,
};
static const struct metric_desc desc_truncated = {
	"memwatch_cgroup_walk_truncated", "1 when the last walk stopped at max_cgroups.", METRIC_GAUGE,
};

static const struct metric_desc desc_walk_cpu = {
	"memwatch_cgroup_walk_cpu_seconds",
	"CPU time (user and system) the last walk took; the rest of memwatch_cgroup_walk_seconds was waiting for a CPU.",
	METRIC_GAUGE,
};
static const struct metric_desc desc_open_files = {
	"memwatch_cgroup_open_files", "cgroup files the collector keeps open between windows.", METRIC_GAUGE,
};

static void cgroup_config_defaults(void *cfg)
{
	struct cgroup_config *c = cfg;

	snprintf(c->v1_root, sizeof(c->v1_root), "auto");
	snprintf(c->v2_root, sizeof(c->v2_root), "auto");
	c->max_depth = 8;
	c->max_cgroups = 10000;
	c->top_k = 50;
	c->stat_interval = 10;
}

static int parse_root(const char *value, char *dst, size_t len, char *errmsg, size_t errlen)
{
	if (strcmp(value, "auto") != 0 && strcmp(value, "none") != 0 && (value[0] != '/' || strlen(value) >= len)) {
		snprintf(errmsg, errlen, "'%s' is not auto, none or an absolute path shorter than %zu bytes", value,
			 len);
		return -EINVAL;
	}
	snprintf(dst, len, "%s", value);
	return 0;
}

static int parse_globs(const char *value, char *dst, size_t len, char *errmsg, size_t errlen)
{
	int r;

	if (strlen(value) >= len) {
		snprintf(errmsg, errlen, "longer than %zu bytes", len - 1);
		return -EINVAL;
	}
	r = cgroup_globs_parse(value, NULL);
	if (r < 0) {
		snprintf(errmsg, errlen,
			 "'%s' is not a list of at most %d glob patterns separated by blanks or commas, each "
			 "starting with '/', '*', '?' or '[' (paths look like /system.slice/app.service)",
			 value, CGROUP_GLOBS_MAX);
		return -EINVAL;
	}
	snprintf(dst, len, "%s", value);
	return 0;
}

static int parse_bounded(const char *value, uint64_t min, uint64_t max, uint64_t *ret, char *errmsg,
			 size_t errlen)
{
	int r = config_parse_uint(value, min, max, ret);

	if (r < 0)
		snprintf(errmsg, errlen, "'%s' is not a number between %llu and %llu", value,
			 (unsigned long long)min, (unsigned long long)max);
	return r;
}

static int cgroup_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	struct cgroup_config *c = cfg;

	if (strcmp(key, "v1_root") == 0)
		return parse_root(value, c->v1_root, sizeof(c->v1_root), errmsg, errlen);
	if (strcmp(key, "v2_root") == 0)
		return parse_root(value, c->v2_root, sizeof(c->v2_root), errmsg, errlen);
	if (strcmp(key, "include") == 0)
		return parse_globs(value, c->include, sizeof(c->include), errmsg, errlen);
	if (strcmp(key, "exclude") == 0)
		return parse_globs(value, c->exclude, sizeof(c->exclude), errmsg, errlen);
	if (strcmp(key, "max_depth") == 0)
		return parse_bounded(value, 0, 64, &c->max_depth, errmsg, errlen);
	if (strcmp(key, "max_cgroups") == 0)
		return parse_bounded(value, 1, 1000000, &c->max_cgroups, errmsg, errlen);
	if (strcmp(key, "top_k") == 0)
		return parse_bounded(value, 1, 10000, &c->top_k, errmsg, errlen);
	if (strcmp(key, "stat_interval") == 0)
		return parse_bounded(value, 1, 3600, &c->stat_interval, errmsg, errlen);
	return -ENOENT;
}

/* ---- roots ---- */

static bool any_cgroup2(const char *mountpoint)
{
	return true;
}

static void roots_close(struct roots *r)
{
	if (r->v1_fd >= 0)
		close(r->v1_fd);
	if (r->v2_fd >= 0)
		close(r->v2_fd);
	r->v1_fd = r->v2_fd = -1;
}

static int open_root(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Both "auto": the memory controller's hierarchy from mountinfo; on a hybrid
 * host also the cgroup2 mount, for pressure. Otherwise each root as given,
 * "auto" meaning none: a configured root never mixes with the host's. */
static int roots_resolve(const struct cgroup_config *c, char *buf, struct roots *ret, struct collector_status *st)
{
	struct roots r = { .v1_fd = -1, .v2_fd = -1 };
	struct cgroup_mem probe = { .v1 = false };

	if (strcmp(c->v1_root, "auto") == 0 && strcmp(c->v2_root, "auto") == 0) {
		_cleanup_free_ char *mountinfo = NULL;
		enum cgroup_memory_mode mode;
		char root[256];
		int k;

		k = read_full_file("/proc/self/mountinfo", 4 << 20, &mountinfo, NULL);
		if (k < 0) {
			collector_status_set_reason(st, "cannot read /proc/self/mountinfo: %s", strerror(-k));
			return k;
		}
		mode = cgroup_find_memory_root(mountinfo, root, sizeof(root), cgroup_v2_has_memory);
		if (mode == CGROUP_MEMORY_V2)
			snprintf(r.v2, sizeof(r.v2), "%s", root);
		else if (mode == CGROUP_MEMORY_V1) {
			snprintf(r.v1, sizeof(r.v1), "%s", root);
			if (cgroup_find_memory_root(mountinfo, root, sizeof(root), any_cgroup2) == CGROUP_MEMORY_V2)
				snprintf(r.v2, sizeof(r.v2), "%s", root);
		}
	} else {
		if (c->v1_root[0] == '/')
			snprintf(r.v1, sizeof(r.v1), "%s", c->v1_root);
		if (c->v2_root[0] == '/')
			snprintf(r.v2, sizeof(r.v2), "%s", c->v2_root);
	}
	/* A configured root that does not exist is no root: the other one may do. */
	if (r.v1[0]) {
		r.v1_fd = open_root(r.v1);
		/* Not a v1 memory hierarchy (a typo, the cgroup2 tree): every read would fail. */
		if (r.v1_fd >= 0 && faccessat(r.v1_fd, "memory.usage_in_bytes", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
			close(r.v1_fd);
			r.v1_fd = -1;
		}
		if (r.v1_fd < 0)
			r.v1[0] = '\0';
	}
	if (r.v2[0]) {
		r.v2_fd = open_root(r.v2);
		if (r.v2_fd < 0)
			r.v2[0] = '\0';
	}
	if (r.v2_fd >= 0) {
		r.v2_memory = cgroup_dir_has_memory_controller(r.v2_fd, buf);
		r.pressure = cgroup_read_pressure(r.v2_fd, NULL, buf, &probe) == 0;
		if (!r.v2_memory && !r.pressure) {
			close(r.v2_fd);
			r.v2_fd = -1;
			r.v2[0] = '\0';
		}
	}
	if (r.v1_fd < 0 && !r.v2_memory) {
		collector_status_set_reason(st, "no memory cgroup hierarchy found (v1_root=%s, v2_root=%s)", c->v1_root,
					    c->v2_root);
		roots_close(&r);
		return -EOPNOTSUPP;
	}
	*ret = r;
	return 0;
}

static int cgroup_probe(const void *cfg, struct collector_status *st)
{
	_cleanup_free_ char *buf = malloc(CGROUP_READ_BUF_SIZE);
	struct roots r;
	int k;

	snprintf(st->mode, sizeof(st->mode), "cgroupfs");
	if (!buf)
		return -ENOMEM;
	k = roots_resolve(cfg, buf, &r, st);
	if (k < 0)
		return k;
	roots_close(&r);
	return 0;
}

/* ---- one window's walk ---- */

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

/* ---- kept-open files ---- */

static uint64_t mix(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)(mix(key) & (cap - 1));
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
	*added = true;
	return &table[i];
}

static struct cached *cache_find(struct cgroup_state *s, uint64_t key)
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
static struct cached *cache_get(struct cgroup_state *s, uint64_t key)
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

static void cache_sweep(struct cgroup_state *s)
{
	if (s->cache_seen < s->cache_n)
		(void)cache_rebuild(s, s->cache_cap, true); /* without memory, the closing waits */
}

static void cache_free(struct cgroup_state *s)
{
	size_t i;

	for (i = 0; i < s->cache_cap; i++)
		if (s->cache[i].key)
			cgroup_files_close(&s->cache[i].files);
	free(s->cache);
	s->cache = NULL;
	s->cache_cap = s->cache_n = s->cache_seen = 0;
	s->open_files = 0;
}

/* The files to read through: the entry's, unless that would open more than
 * open_files_max; NULL then (opened and closed each window). */
static struct cgroup_files *files_for(struct cgroup_state *s, struct cached *c)
{
	if (!c)
		return NULL;
	if (cgroup_files_count(&c->files) == 0 && s->open_files + CGROUP_FILES > s->open_files_max)
		return NULL;
	return &c->files;
}

static void count_opened(struct cgroup_state *s, const struct cgroup_files *f, unsigned before)
{
	if (f)
		s->open_files += cgroup_files_count(f) - before;
}

/* ---- reading one cgroup ---- */

/* memory.pressure is required where the cgroup2 tree has it, except that
 * writing 0 to cgroup.pressure hides it in a cgroup that still exists. */
static int read_pressure(struct cgroup_state *s, int dfd, struct cgroup_files *f, struct cgroup_mem *m)
{
	unsigned before = f ? cgroup_files_count(f) : 0;
	int r;

	r = cgroup_read_pressure(f && f->fd[CGROUP_FILE_PRESSURE] >= 0 ? -1 : dfd, f, s->buf, m);
	count_opened(s, f, before);
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
		c->stat_read = false;
	}
	if (fatal(r))
		return r;
	return remember_failed(s, key);
}

/* memory.stat only feeds the working set gauge, no counter, and is the file
 * that costs: read it for the cgroups exported last window, for new ones, and
 * for the rest every stat_interval windows, spread over the windows by key;
 * in between they keep the inactive_file last read. */
static bool stat_due(const struct cgroup_state *s, const struct cached *c)
{
	if (!c || !c->stat_read || c->exported || s->cfg.stat_interval <= 1)
		return true;
	return (s->window + mix(c->key)) % s->cfg.stat_interval == 0;
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
	count_opened(s, f, before);
	if (r < 0 || !c)
		return r;
	if (stat) {
		c->stat_read = true;
		c->inactive_file = m->inactive_file;
		c->has_inactive_file = m->has_inactive_file;
	} else {
		m->inactive_file = c->inactive_file;
		m->has_inactive_file = c->has_inactive_file;
	}
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
	c = cache_get(s, key);
	f = files_for(s, c);
	/* Everything first, then one entry: a cgroup removed half-way is skipped whole. */
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
	c = cache_get(s, d->ino);
	f = files_for(s, c);
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

static int walk(struct cgroup_state *s, bool *truncated)
{
	const struct cgroup_walk_opts opts = {
		.max_depth = (unsigned)s->cfg.max_depth,
		.max_cgroups = (size_t)s->cfg.max_cgroups,
	};
	struct cgroup_walk_stats st1 = { 0 }, st2 = { 0 };
	int r = 0;

	s->n_entries = s->n_failed = s->skipped = 0;
	s->window++;
	s->cache_seen = 0;
	strbuf_reset(&s->paths);
	if (s->roots.v1_fd >= 0)
		r = cgroup_walk(s->roots.v1_fd, s->roots.pressure ? s->roots.v2_fd : -1, &opts, on_v1, s, &st1);
	/* Only when both trees have memory (not a real host: a configured pair)
	 * does the v2 walk need the v1 tree beside it, to leave out duplicates. */
	if (r >= 0 && s->roots.v2_memory)
		r = cgroup_walk(s->roots.v2_fd, s->roots.v1_fd, &opts, on_v2, s, &st2);
	s->skipped += st1.vanished + st2.vanished;
	*truncated = st1.truncated || st2.truncated;
	if (r >= 0)
		cache_sweep(s);
	return r;
}

/* ---- counters, ranking, output ---- */

static uint64_t counter_value(const struct cgroup_mem *m, unsigned c, bool *present)
{
	if (c == C_SOME) {
		*present = m->has_pressure;
		return m->pressure_some_usec;
	}
	if (c == C_FULL) {
		*present = m->has_pressure_full;
		return m->pressure_full_usec;
	}
	*present = m->events_present & (1u << (c - C_EVENT0));
	return m->events[c - C_EVENT0];
}

static int cmp_row_key(const void *k, const void *row)
{
	uint64_t a = *(const uint64_t *)k, b = ((const struct tracked_row *)row)->key;

	return a < b ? -1 : a > b;
}

static const struct tracked_row *find_row(const struct tracker *t, uint64_t key)
{
	if (t->n_rows == 0)
		return NULL;
	return bsearch(&key, t->rows, t->n_rows, sizeof(*t->rows), cmp_row_key);
}

/* Window deltas through lib/tracker. A cgroup skipped in this window keeps
 * its previous row: dropping it would count its whole history again into
 * "other" when it comes back. */
static int update_trackers(struct cgroup_state *s, uint64_t now)
{
	struct tracked_row *rows[N_TRACKERS] = { NULL };
	size_t i, n, k;

	/* The trackers' own buffers, reused from window to window; on failure the
	 * ones already taken stay with their trackers. */
	for (k = 0; k < N_TRACKERS; k++) {
		rows[k] = tracker_next(&s->trackers[k], s->n_entries + s->n_failed);
		if (!rows[k])
			return -ENOMEM;
	}
	for (i = 0; i < s->n_entries; i++) {
		const struct cgroup_mem *m = &s->entries[i].mem;
		unsigned c;

		for (c = 0; c < N_COUNTERS; c++) {
			bool present;
			uint64_t v = counter_value(m, c, &present);

			rows[c / TRACKER_MAX_COUNTERS][i].value[c % TRACKER_MAX_COUNTERS] = v;
			if (present)
				s->seen |= 1u << c;
		}
		for (k = 0; k < N_TRACKERS; k++)
			rows[k][i].key = s->entries[i].key;
	}
	n = s->n_entries;
	for (i = 0; i < s->n_failed; i++) {
		const struct tracked_row *old[N_TRACKERS];
		bool all = true;

		for (k = 0; k < N_TRACKERS; k++)
			all = (old[k] = find_row(&s->trackers[k], s->failed[i])) && all;
		if (!all)
			continue;
		for (k = 0; k < N_TRACKERS; k++) {
			rows[k][n] = *old[k];
			rows[k][n].label_long = NULL; /* the old table's (these rows have no labels) */
		}
		n++;
	}
	for (k = 0; k < N_TRACKERS; k++)
		tracker_update(&s->trackers[k], rows[k], n, now);
	return 0;
}

static uint64_t row_delta(const struct cgroup_state *s, uint64_t key, unsigned c)
{
	const struct tracked_row *r = find_row(&s->trackers[c / TRACKER_MAX_COUNTERS], key);

	return r ? r->delta[c % TRACKER_MAX_COUNTERS] : 0;
}

static void put_counter(struct snapshot *snap, const char *path, unsigned c, double v)
{
	if (c == C_SOME)
		snapshot_add(snap, &desc_some, (const char *const[]){ path }, v / 1e6);
	else if (c == C_FULL)
		snapshot_add(snap, &desc_full, (const char *const[]){ path }, v / 1e6);
	else
		snapshot_add(snap, &desc_events, (const char *const[]){ path, cgroup_event_name(c - C_EVENT0) }, v);
}

static void put_cgroup(struct snapshot *snap, const char *path, const struct cgroup_mem *m)
{
	const char *const labels[] = { path };
	unsigned c;

	snapshot_add(snap, &desc_usage, labels, (double)m->usage);
	if (m->has_limit) {
		snapshot_add(snap, &desc_limit, labels, (double)m->limit);
		if (m->limit > 0)
			snapshot_add(snap, &desc_ratio, labels, (double)m->usage / (double)m->limit);
	}
	if (m->has_high)
		snapshot_add(snap, &desc_high, labels, (double)m->high);
	if (m->has_inactive_file)
		snapshot_add(snap, &desc_working_set, labels, (double)cgroup_working_set(m->usage, m->inactive_file));
	if (m->has_under_oom)
		snapshot_add(snap, &desc_under_oom, labels, m->under_oom ? 1 : 0);
	for (c = 0; c < N_COUNTERS; c++) {
		bool present;
		uint64_t v = counter_value(m, c, &present);

		if (present)
			put_counter(snap, path, c, (double)v);
	}
}

static int emit(struct cgroup_state *s, struct snapshot *snap)
{
	_cleanup_free_ struct cgroup_rank *rank = calloc(s->n_entries + 1, sizeof(*rank));
	uint64_t other_usage = 0, other_ws = 0;
	size_t i, keep;
	unsigned c;

	if (!rank)
		return -ENOMEM;
	for (i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[i];

		rank[i] = (struct cgroup_rank){
			.index = i,
			.path = s->paths.data + e->path_off,
			.usage = e->mem.usage,
			.limit = e->mem.limit,
			.has_limit = e->mem.has_limit,
			.pressure_some_delta = row_delta(s, e->key, C_SOME),
		};
	}
	cgroup_rank_sort(rank, s->n_entries);
	keep = s->n_entries < s->cfg.top_k ? s->n_entries : (size_t)s->cfg.top_k;
	for (i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[rank[i].index];
		struct cached *cached = cache_find(s, e->key);

		if (cached)
			cached->exported = i < keep;
		if (i < keep) {
			put_cgroup(snap, rank[i].path, &e->mem);
			continue;
		}
		other_usage += e->mem.usage;
		if (e->mem.has_inactive_file)
			other_ws += cgroup_working_set(e->mem.usage, e->mem.inactive_file);
		for (c = 0; c < N_COUNTERS; c++)
			s->trackers[c / TRACKER_MAX_COUNTERS].other[c % TRACKER_MAX_COUNTERS] += row_delta(s, e->key, c);
	}
	snapshot_add(snap, &desc_usage, (const char *const[]){ "other" }, (double)other_usage);
	snapshot_add(snap, &desc_working_set, (const char *const[]){ "other" }, (double)other_ws);
	for (c = 0; c < N_COUNTERS; c++)
		if (s->seen & (1u << c))
			put_counter(snap, "other", c,
				    (double)s->trackers[c / TRACKER_MAX_COUNTERS].other[c % TRACKER_MAX_COUNTERS]);
	return 0;
}

static uint64_t thread_cpu_usec(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static int cgroup_collect(void *priv, struct snapshot *snap)
{
	struct cgroup_state *s = priv;
	uint64_t t0 = now_mono_usec(), cpu0 = thread_cpu_usec(), now, cpu;
	bool truncated = false;
	int r;

	r = walk(s, &truncated);
	now = now_mono_usec();
	cpu = thread_cpu_usec();
	if (r < 0)
		return r;
	s->skipped_total += s->skipped;
	r = update_trackers(s, now);
	if (r < 0)
		return r;
	r = emit(s, snap);
	if (r < 0)
		return r;
	snapshot_add(snap, &desc_discovered, NULL, (double)s->n_entries);
	snapshot_add(snap, &desc_walk_seconds, NULL, (double)(now - t0) / 1e6);
	snapshot_add(snap, &desc_walk_cpu, NULL, (double)(cpu - cpu0) / 1e6);
	snapshot_add(snap, &desc_skipped, NULL, (double)s->skipped_total);
	snapshot_add(snap, &desc_truncated, NULL, truncated ? 1 : 0);
	snapshot_add(snap, &desc_open_files, NULL, (double)s->open_files);
	return 0;
}

/* ---- life cycle ---- */

static int apply_config(struct cgroup_state *s, const struct cgroup_config *c, struct collector_status *st)
{
	struct cgroup_globs inc = { .n = 0 }, exc = { .n = 0 };
	struct roots r;
	int k;

	k = roots_resolve(c, s->buf, &r, st);
	if (k < 0)
		return k;
	k = cgroup_globs_parse(c->include, &inc);
	if (k >= 0)
		k = cgroup_globs_parse(c->exclude, &exc);
	if (k < 0) {
		cgroup_globs_free(&inc);
		roots_close(&r);
		collector_status_set_reason(st, "bad include/exclude patterns");
		return k;
	}
	roots_close(&s->roots);
	cgroup_globs_free(&s->include);
	cgroup_globs_free(&s->exclude);
	s->roots = r;
	s->include = inc;
	s->exclude = exc;
	s->cfg = *c;
	log_info("Collector cgroup: %s%s%s%s%s", r.v1_fd >= 0 ? "v1 memory hierarchy at " : "", r.v1,
		 r.v1_fd >= 0 && r.v2_fd >= 0 ? ", " : "",
		 r.v2_fd < 0 ? "" : r.v2_memory ? "cgroup2 memory hierarchy at " : "cgroup2 pressure from ",
		 r.v2_fd >= 0 ? r.v2 : "");
	return 0;
}

/* How many files may stay open. systemd leaves the soft RLIMIT_NOFILE at
 * 1024 and advises programs that need more (and do not use select(), which
 * this one does not) to raise it to the hard limit themselves. */
static size_t open_files_budget(void)
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

static int cgroup_start(void *priv, const void *cfg, const struct collector_context *ctx,
			struct collector_status *st)
{
	struct cgroup_state *s = priv;
	size_t k;

	s->roots = (struct roots){ .v1_fd = -1, .v2_fd = -1 };
	strbuf_init(&s->paths);
	for (k = 0; k < N_TRACKERS; k++)
		tracker_init(&s->trackers[k], TRACKER_MAX_COUNTERS, 0, 0);
	s->initialized = true;
	s->open_files_max = open_files_budget();
	snprintf(st->mode, sizeof(st->mode), "cgroupfs");
	s->buf = malloc(CGROUP_READ_BUF_SIZE);
	if (!s->buf)
		return -ENOMEM;
	return apply_config(s, cfg, st);
}

static int cgroup_reload(void *priv, const void *cfg)
{
	struct cgroup_state *s = priv;
	struct collector_status st = { .state = COLLECTOR_ACTIVE };

	return apply_config(s, cfg, &st);
}

static void cgroup_stop(void *priv)
{
	struct cgroup_state *s = priv;
	size_t k;

	if (!s->initialized)
		return;
	cache_free(s);
	roots_close(&s->roots);
	cgroup_globs_free(&s->include);
	cgroup_globs_free(&s->exclude);
	for (k = 0; k < N_TRACKERS; k++)
		tracker_done(&s->trackers[k]);
	strbuf_free(&s->paths);
	free(s->entries);
	free(s->failed);
	free(s->buf);
	*s = (struct cgroup_state){ .initialized = false };
}

const struct collector_ops cgroup_collector = {
	.name = "cgroup",
	.summary = "memory cgroups (v1, v2, hybrid): usage, limits, working set, events and pressure; top_k plus other",
	.default_enabled = true,
	.config_size = sizeof(struct cgroup_config),
	.config_defaults = cgroup_config_defaults,
	.configure = cgroup_configure,
	.priv_size = sizeof(struct cgroup_state),
	.probe = cgroup_probe,
	.start = cgroup_start,
	.collect = cgroup_collect,
	.reload = cgroup_reload,
	.stop = cgroup_stop,
};
