// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup_paths.h"
#include "fileio.h"
#include "strbuf.h"

struct entry {
	uint64_t id; /* 0 = empty slot */
	char *path;
};

#define NEGATIVE_IDS 64
/* Kept across rescans: with two removed cgroups in a BPF map, each one's miss
 * used to clear the other's entry, and every window walked the whole tree
 * (tens of milliseconds at 1,000 cgroups) until the map let go of them. */
#define NEGATIVE_TTL_USEC (60 * USEC_PER_SEC)

struct negative {
	uint64_t id, since_usec;
};

struct cgroup_paths {
	char *root;
	/* Ids a rescan did not find (removed cgroups still in a BPF map): asking
	 * for them again must not walk the tree every window. */
	struct negative negative[NEGATIVE_IDS];
	size_t n_negative;
	unsigned max_depth;
	size_t max_entries;
	uint64_t min_rescan_usec;
	uint64_t last_rescan_usec;
	bool scanned;
	bool attempted; /* a rescan was tried, even one that failed */
	bool root_lost; /* the last rescan could not open the root */
	struct entry *table;
	size_t cap, count;
};

struct cgroup_paths *cgroup_paths_new(const char *root, unsigned max_depth, size_t max_entries,
				      uint64_t min_rescan_usec)
{
	_cleanup_(cgroup_paths_freep) struct cgroup_paths *cp = calloc(1, sizeof(*cp));
	struct cgroup_paths *ret;

	if (!cp)
		return NULL;
	cp->root = strdup(root);
	if (!cp->root)
		return NULL;
	cp->max_depth = max_depth;
	cgroup_paths_set_max_entries(cp, max_entries);
	cp->min_rescan_usec = min_rescan_usec;
	ret = cp;
	cp = NULL;
	return ret;
}

void cgroup_paths_set_max_entries(struct cgroup_paths *cp, size_t max_entries)
{
	/* Bounds the table size computation in cgroup_paths_rescan(). */
	cp->max_entries = max_entries > (1u << 24) ? (1u << 24) : max_entries;
}

static void table_clear(struct entry *table, size_t cap)
{
	size_t i;

	for (i = 0; i < cap; i++)
		free(table[i].path);
	free(table);
}

void cgroup_paths_free(struct cgroup_paths *cp)
{
	if (!cp)
		return;
	table_clear(cp->table, cp->cap);
	free(cp->root);
	free(cp);
}

static size_t slot_of(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)(id & (cap - 1));
}

struct scan {
	struct entry *table;
	size_t cap, count, max_entries;
	unsigned max_depth;
};

/* Doubles the table: sized by what the tree holds, not by max_entries (a
 * table for 65,536 entries is 2 MiB, zeroed and faulted in on every rescan). */
static int scan_grow(struct scan *s)
{
	size_t cap = s->cap * 2, i, j;
	struct entry *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++) {
		if (!s->table[i].id)
			continue;
		for (j = slot_of(s->table[i].id, cap); t[j].id; j = (j + 1) & (cap - 1))
			;
		t[j] = s->table[i];
	}
	free(s->table);
	s->table = t;
	s->cap = cap;
	return 0;
}

static int scan_insert(struct scan *s, uint64_t id, const char *path)
{
	size_t i;

	if (s->count >= s->max_entries)
		return -ENOSPC;
	/* At most half full, as before. */
	if ((s->count + 1) * 2 > s->cap && scan_grow(s) < 0)
		return -ENOMEM;
	for (i = slot_of(id, s->cap); s->table[i].id; i = (i + 1) & (s->cap - 1))
		if (s->table[i].id == id)
			return 0;
	s->table[i].path = strdup(path);
	if (!s->table[i].path)
		return -ENOMEM;
	s->table[i].id = id;
	s->count++;
	return 0;
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* Every directory below the root on the root's device: a hierarchy mounted
 * inside another one (a cgroup2 tree below the v1 memory mount) has ids of
 * its own, which must not be filed under this one's paths. dfd is consumed. */
static int scan_dir(struct scan *s, int dfd, dev_t dev, struct strbuf *path, unsigned depth)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	if (depth >= s->max_depth) {
		close(dfd);
		return 0;
	}
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int cfd = -1;
		struct stat st;
		size_t saved = path->len;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* Cgroups vanish mid-walk all the time: that is not an error. */
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd < 0 || fstat(cfd, &st) < 0 || st.st_dev != dev)
			continue;
		strbuf_putc(path, '/');
		strbuf_puts(path, de->d_name);
		if (strbuf_failed(path))
			return -ENOMEM;
		r = scan_insert(s, (uint64_t)st.st_ino, path->data);
		if (r == 0) {
			r = scan_dir(s, cfd, dev, path, depth + 1);
			cfd = -1; /* consumed */
		}
		path->len = saved;
		path->data[saved] = '\0';
		if (r < 0)
			break;
	}
	return r;
}

static void scan_table_free(struct scan *s)
{
	if (s->table)
		table_clear(s->table, s->cap);
}

int cgroup_paths_rescan(struct cgroup_paths *cp)
{
	_cleanup_(scan_table_free) struct scan s = { .max_entries = cp->max_entries, .max_depth = cp->max_depth };
	_cleanup_(strbuf_free) struct strbuf path;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	strbuf_init(&path);
	/* Room for the last scan's count; grown while scanning if the tree grew. */
	s.cap = 64;
	while (s.cap < cp->count * 2 + 2 && s.cap < cp->max_entries * 2)
		s.cap *= 2;
	s.table = calloc(s.cap, sizeof(*s.table));
	if (!s.table)
		return -ENOMEM;
	fd = open(cp->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cp->root_lost = fd < 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || scan_insert(&s, (uint64_t)st.st_ino, "/") < 0)
		return -EIO;
	strbuf_reserve(&path, 256);
	if (strbuf_failed(&path))
		return -ENOMEM;
	path.data[0] = '\0';
	r = scan_dir(&s, fd, st.st_dev, &path, 0);
	fd = -1; /* consumed */
	if (r < 0 && r != -ENOSPC)
		return r;
	/* The root's own id maps to "/", so its children's paths start with one slash. */
	table_clear(cp->table, cp->cap);
	cp->table = s.table;
	cp->cap = s.cap;
	cp->count = s.count;
	cp->scanned = true;
	s.table = NULL;
	return r;
}

static const char *table_find(const struct cgroup_paths *cp, uint64_t id)
{
	size_t i;

	if (!cp->table || id == 0)
		return NULL;
	for (i = slot_of(id, cp->cap); cp->table[i].id; i = (i + 1) & (cp->cap - 1))
		if (cp->table[i].id == id)
			return cp->table[i].path;
	return NULL;
}

/* In the slot of the same id, a free one, or the oldest. */
static void remember_negative(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec)
{
	size_t i, slot = 0;

	for (i = 0; i < cp->n_negative; i++) {
		if (cp->negative[i].id == id) {
			slot = i;
			break;
		}
		if (cp->negative[i].since_usec < cp->negative[slot].since_usec)
			slot = i;
	}
	if (i == cp->n_negative && cp->n_negative < NEGATIVE_IDS)
		slot = cp->n_negative++;
	cp->negative[slot] = (struct negative){ id, now_usec };
}

static const char *lookup(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec, uint64_t min_rescan_usec,
			  bool negative)
{
	const char *p = table_find(cp, id);
	size_t i;

	if (p || id == 0)
		return p;
	for (i = 0; negative && i < cp->n_negative; i++)
		if (cp->negative[i].id == id && now_usec - cp->negative[i].since_usec < NEGATIVE_TTL_USEC)
			return NULL;
	if (cp->attempted && now_usec - cp->last_rescan_usec < min_rescan_usec)
		return NULL;
	cp->attempted = true;
	cp->last_rescan_usec = now_usec;
	cgroup_paths_rescan(cp);
	p = table_find(cp, id);
	if (!p)
		remember_negative(cp, id, now_usec);
	return p;
}

const char *cgroup_paths_lookup(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec)
{
	return lookup(cp, id, now_usec, cp->min_rescan_usec, true);
}

const char *cgroup_paths_lookup_urgent(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec)
{
	return lookup(cp, id, now_usec, cp->min_rescan_usec < URGENT_MIN_RESCAN_USEC ? cp->min_rescan_usec : URGENT_MIN_RESCAN_USEC, false);
}

size_t cgroup_paths_count(const struct cgroup_paths *cp)
{
	return cp->count;
}

const char *cgroup_paths_root(const struct cgroup_paths *cp)
{
	return cp->root;
}

bool cgroup_paths_root_lost(const struct cgroup_paths *cp)
{
	return cp->root_lost;
}

int cgroup_path_child(const char *parent, const char *name, size_t name_max, char *buf, size_t len)
{
	size_t n = strnlen(name, name_max);
	int w;

	if (n == 0 || memchr(name, '/', n) || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
		return -EINVAL;
	if (parent[0] != '/')
		return -EINVAL;
	w = snprintf(buf, len, "%s/%.*s", parent[1] ? parent : "", (int)n, name);
	if (w < 0 || (size_t)w >= len) {
		if (len)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
