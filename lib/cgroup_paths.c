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
	struct entry *table;
	size_t cap, count;
};

bool cgroup_v2_has_memory(const char *mountpoint)
{
	char path[4096], *text = NULL, *p;
	bool found = false;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mountpoint);
	if (read_full_file(path, 4096, &text, NULL) < 0)
		return false;
	for (p = strtok(text, " \n"); p; p = strtok(NULL, " \n"))
		if (strcmp(p, "memory") == 0)
			found = true;
	free(text);
	return found;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static bool has_option(const char *opts, const char *want)
{
	size_t n = strlen(want);
	const char *p = opts;

	while (p && *p) {
		if (strncmp(p, want, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

enum cgroup_memory_mode cgroup_find_memory_root(const char *mountinfo, char *root, size_t root_len,
						bool (*v2_has_memory)(const char *mountpoint))
{
	enum cgroup_memory_mode mode = CGROUP_MEMORY_NONE;
	const char *line = mountinfo;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096], *fields[12], *sep, *tok, *save = NULL;
		size_t n = 0;

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
			sep = strstr(buf, " - ");
			if (sep) {
				*sep = '\0';
				for (tok = strtok_r(buf, " ", &save); tok && n < 5; tok = strtok_r(NULL, " ", &save))
					fields[n++] = tok;
				/* Fewer than five fields before the separator would shift
				 * the ones after it: the fstype read as the mount point. */
				save = NULL;
				for (tok = strtok_r(sep + 3, " ", &save); tok && n >= 5 && n < 8;
				     tok = strtok_r(NULL, " ", &save))
					fields[n++] = tok;
			}
			if (n == 8) {
				const char *mountpoint = fields[4], *fstype = fields[5], *superopts = fields[7];

				unescape_octal(fields[4]);
				if (strcmp(fstype, "cgroup2") == 0 && v2_has_memory && v2_has_memory(mountpoint)) {
					snprintf(root, root_len, "%s", mountpoint);
					return CGROUP_MEMORY_V2;
				}
				if (strcmp(fstype, "cgroup") == 0 && has_option(superopts, "memory") &&
				    mode == CGROUP_MEMORY_NONE) {
					snprintf(root, root_len, "%s", mountpoint);
					mode = CGROUP_MEMORY_V1;
				}
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return mode;
}

struct cgroup_paths *cgroup_paths_new(const char *root, unsigned max_depth, size_t max_entries,
				      uint64_t min_rescan_usec)
{
	struct cgroup_paths *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->root = strdup(root);
	if (!cp->root) {
		free(cp);
		return NULL;
	}
	cp->max_depth = max_depth;
	/* Bounds the table size computation in cgroup_paths_rescan(). */
	cp->max_entries = max_entries > (1u << 24) ? (1u << 24) : max_entries;
	cp->min_rescan_usec = min_rescan_usec;
	return cp;
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

static int scan_insert(struct scan *s, uint64_t id, const char *path)
{
	size_t i;

	if (s->count >= s->max_entries)
		return -ENOSPC;
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

static int scan_dir(struct scan *s, int dfd, struct strbuf *path, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth >= s->max_depth) {
		close(dfd); /* ours on every path, this one too */
		return 0;
	}
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t saved = path->len;
		int cfd;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* Cgroups vanish mid-walk all the time: that is not an error. */
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd < 0)
			continue;
		if (fstat(cfd, &st) < 0) {
			close(cfd);
			continue;
		}
		strbuf_putc(path, '/');
		strbuf_puts(path, de->d_name);
		if (strbuf_failed(path)) {
			close(cfd);
			r = -ENOMEM;
			break;
		}
		r = scan_insert(s, (uint64_t)st.st_ino, path->data);
		if (r == 0)
			r = scan_dir(s, cfd, path, depth + 1);
		else
			close(cfd);
		path->len = saved;
		path->data[saved] = '\0';
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

int cgroup_paths_rescan(struct cgroup_paths *cp)
{
	struct scan s = { .max_entries = cp->max_entries, .max_depth = cp->max_depth };
	struct strbuf path;
	struct stat st;
	int fd, r;

	s.cap = 64;
	while (s.cap < cp->max_entries * 2)
		s.cap *= 2;
	s.table = calloc(s.cap, sizeof(*s.table));
	if (!s.table)
		return -ENOMEM;
	fd = open(cp->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		free(s.table);
		return r;
	}
	if (fstat(fd, &st) < 0 || scan_insert(&s, (uint64_t)st.st_ino, "/") < 0) {
		close(fd);
		table_clear(s.table, s.cap);
		return -EIO;
	}
	strbuf_init(&path);
	strbuf_reserve(&path, 256);
	path.data[0] = '\0';
	r = scan_dir(&s, fd, &path, 0);
	strbuf_free(&path);
	if (r < 0 && r != -ENOSPC) {
		table_clear(s.table, s.cap);
		return r;
	}
	/* The root's own id maps to "/", so its children's paths start with one slash. */
	table_clear(cp->table, cp->cap);
	cp->table = s.table;
	cp->cap = s.cap;
	cp->count = s.count;
	cp->scanned = true;
	return r == -ENOSPC ? -ENOSPC : 0;
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

const char *cgroup_paths_lookup(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec)
{
	const char *p = table_find(cp, id);
	size_t i;

	if (p || id == 0)
		return p;
	for (i = 0; i < cp->n_negative; i++)
		if (cp->negative[i].id == id && now_usec - cp->negative[i].since_usec < NEGATIVE_TTL_USEC)
			return NULL;
	if (cp->attempted && now_usec - cp->last_rescan_usec < cp->min_rescan_usec)
		return NULL;
	cp->attempted = true;
	cp->last_rescan_usec = now_usec;
	cgroup_paths_rescan(cp);
	p = table_find(cp, id);
	if (!p)
		remember_negative(cp, id, now_usec);
	return p;
}

size_t cgroup_paths_count(const struct cgroup_paths *cp)
{
	return cp->count;
}

const char *cgroup_paths_root(const struct cgroup_paths *cp)
{
	return cp->root;
}
