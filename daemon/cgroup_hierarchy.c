// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup_hierarchy.h"
#include "cgroup_paths.h"
#include "fileio.h"

/* Every user so far walks at most this deep (kernels allow more, nobody does). */
#define TABLE_MAX_DEPTH 64
#define TABLE_MIN_RESCAN_USEC USEC_PER_SEC
/* A miss on a table whose hierarchy is gone reads mountinfo again, at most
 * this often: a host with no memory hierarchy at all asks on every event. */
#define REMOUNT_CHECK_USEC (10 * USEC_PER_SEC)
#define MOUNTINFO_MAX (4 << 20)

struct table {
	unsigned users; /* 0: free slot */
	bool automatic; /* on the memory hierarchy, which may move */
	size_t max_entries;
	struct cgroup_paths *paths; /* NULL: automatic, and there is no memory hierarchy */
};

struct cgroup_hierarchy {
	pthread_mutex_t lock;
	char *mountinfo;
	bool (*v2_has_memory)(const char *mountpoint);
	struct cgroup_hierarchy_roots roots;
	uint64_t last_remount_check_usec;
	struct table tables[CGROUP_HIERARCHY_TABLES_MAX];
};

static int read_roots(const char *mountinfo, bool (*v2_has_memory)(const char *), struct cgroup_hierarchy_roots *ret)
{
	_cleanup_free_ char *text = NULL;
	struct cgroup_mounts m;
	const char *memory, *unified;
	int r;

	r = read_full_file(mountinfo, MOUNTINFO_MAX, &text, NULL);
	if (r < 0)
		return r;
	r = cgroup_mounts_parse(text, &m);
	if (r < 0)
		return r;
	*ret = (struct cgroup_hierarchy_roots){ .error = 0 };
	memory = cgroup_mounts_memory_root(&m, v2_has_memory, &ret->mode);
	unified = cgroup_mounts_unified(&m);
	snprintf(ret->memory, sizeof(ret->memory), "%s", memory ? memory : "");
	snprintf(ret->unified, sizeof(ret->unified), "%s", unified ? unified : "");
	cgroup_mounts_done(&m);
	return 0;
}

/* An automatic table onto the memory hierarchy now in h->roots: kept when
 * that did not move, made anew (an empty table, scanned on first use) when
 * it did, none when there is none. */
static int follow_memory_root(struct cgroup_hierarchy *h, struct table *t)
{
	struct cgroup_paths *cp = NULL;

	if (t->paths && strcmp(cgroup_paths_root(t->paths), h->roots.memory) == 0)
		return 0;
	if (h->roots.mode != CGROUP_MEMORY_NONE) {
		cp = cgroup_paths_new(h->roots.memory, TABLE_MAX_DEPTH, t->max_entries, TABLE_MIN_RESCAN_USEC);
		if (!cp)
			return -ENOMEM;
	}
	cgroup_paths_free(t->paths);
	t->paths = cp;
	return 0;
}

static int refresh_locked(struct cgroup_hierarchy *h)
{
	struct cgroup_hierarchy_roots roots;
	int r;

	r = read_roots(h->mountinfo, h->v2_has_memory, &roots);
	h->roots.error = r;
	if (r < 0)
		return r; /* what was there stays */
	h->roots = roots;
	for (size_t i = 0; i < CGROUP_HIERARCHY_TABLES_MAX; i++) {
		struct table *t = &h->tables[i];

		if (t->users && t->automatic) {
			int k = follow_memory_root(h, t);

			if (k < 0)
				r = k;
		}
	}
	return r;
}

int cgroup_hierarchy_new(const char *mountinfo, bool (*v2_has_memory)(const char *mountpoint),
			 struct cgroup_hierarchy **ret)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	h->v2_has_memory = v2_has_memory;
	h->mountinfo = strdup(mountinfo);
	if (!h->mountinfo)
		return -ENOMEM;
	/* Unreadable now, maybe readable at the next refresh: no hierarchy until then. */
	r = read_roots(h->mountinfo, h->v2_has_memory, &h->roots);
	if (r == -ENOMEM)
		return r;
	h->roots.error = r;
	*ret = h;
	h = NULL;
	return 0;
}

void cgroup_hierarchy_free(struct cgroup_hierarchy *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < CGROUP_HIERARCHY_TABLES_MAX; i++)
		cgroup_paths_free(h->tables[i].paths);
	free(h->mountinfo);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int cgroup_hierarchy_refresh(struct cgroup_hierarchy *h)
{
	int r;

	pthread_mutex_lock(&h->lock);
	r = refresh_locked(h);
	pthread_mutex_unlock(&h->lock);
	return r;
}

void cgroup_hierarchy_roots(struct cgroup_hierarchy *h, struct cgroup_hierarchy_roots *ret)
{
	pthread_mutex_lock(&h->lock);
	*ret = h->roots;
	pthread_mutex_unlock(&h->lock);
}

static bool same_root(const struct table *t, const char *root)
{
	return !t->automatic && strcmp(cgroup_paths_root(t->paths), root) == 0;
}

static int table_acquire_locked(struct cgroup_hierarchy *h, const char *root, size_t max_entries)
{
	struct table *t;
	int i, free_slot = -1, r;

	for (i = 0; i < CGROUP_HIERARCHY_TABLES_MAX; i++) {
		t = &h->tables[i];
		if (!t->users) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (root ? same_root(t, root) : t->automatic) {
			t->users++;
			if (max_entries > t->max_entries) {
				t->max_entries = max_entries;
				if (t->paths)
					cgroup_paths_set_max_entries(t->paths, max_entries);
			}
			return i;
		}
	}
	if (free_slot < 0)
		return -ENOSPC;
	t = &h->tables[free_slot];
	*t = (struct table){ .automatic = !root, .max_entries = max_entries };
	if (root) {
		t->paths = cgroup_paths_new(root, TABLE_MAX_DEPTH, max_entries, TABLE_MIN_RESCAN_USEC);
		r = t->paths ? 0 : -ENOMEM;
	} else
		r = follow_memory_root(h, t);
	if (r < 0)
		return r;
	t->users = 1;
	return free_slot;
}

int cgroup_hierarchy_table_acquire(struct cgroup_hierarchy *h, const char *root, size_t max_entries)
{
	int r;

	pthread_mutex_lock(&h->lock);
	r = table_acquire_locked(h, root, max_entries);
	pthread_mutex_unlock(&h->lock);
	return r;
}

void cgroup_hierarchy_table_release(struct cgroup_hierarchy *h, int table)
{
	struct table *t;

	if (!h || table < 0 || table >= CGROUP_HIERARCHY_TABLES_MAX)
		return;
	pthread_mutex_lock(&h->lock);
	t = &h->tables[table];
	if (t->users && --t->users == 0) {
		cgroup_paths_free(t->paths);
		*t = (struct table){ .users = 0 };
	}
	pthread_mutex_unlock(&h->lock);
}

/* A miss that says the hierarchy itself is gone (its root cannot be opened,
 * or there was none): mountinfo may name another one by now. */
static bool remount_suspected(const struct cgroup_hierarchy *h, const struct table *t, uint64_t now_usec)
{
	if (!t->automatic)
		return false;
	if (t->paths && !cgroup_paths_root_lost(t->paths))
		return false;
	return h->last_remount_check_usec == 0 || now_usec - h->last_remount_check_usec >= REMOUNT_CHECK_USEC;
}

static int lookup(struct cgroup_hierarchy *h, int table, uint64_t id, uint64_t now_usec, char *buf, size_t len,
		  bool urgent)
{
	const char *(*find)(struct cgroup_paths *, uint64_t, uint64_t) =
		urgent ? cgroup_paths_lookup_urgent : cgroup_paths_lookup;
	const char *path = NULL;
	struct table *t;

	if (buf && len)
		buf[0] = '\0';
	if (table < 0 || table >= CGROUP_HIERARCHY_TABLES_MAX)
		return -ENOENT;
	pthread_mutex_lock(&h->lock);
	t = &h->tables[table];
	if (t->paths)
		path = find(t->paths, id, now_usec);
	if (!path && t->users && remount_suspected(h, t, now_usec)) {
		h->last_remount_check_usec = now_usec ? now_usec : 1;
		(void)refresh_locked(h);
		if (t->paths)
			path = find(t->paths, id, now_usec);
	}
	if (path && buf && len)
		snprintf(buf, len, "%s", path);
	pthread_mutex_unlock(&h->lock);
	return path ? 0 : -ENOENT;
}

int cgroup_hierarchy_lookup(struct cgroup_hierarchy *h, int table, uint64_t id, uint64_t now_usec, char *buf,
			    size_t len)
{
	return lookup(h, table, id, now_usec, buf, len, false);
}

int cgroup_hierarchy_lookup_urgent(struct cgroup_hierarchy *h, int table, uint64_t id, uint64_t now_usec, char *buf,
				   size_t len)
{
	return lookup(h, table, id, now_usec, buf, len, true);
}
