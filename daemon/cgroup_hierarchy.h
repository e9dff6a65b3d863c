/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_HIERARCHY_H
#define MEMWATCH_CGROUP_HIERARCHY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup_mounts.h"
#include "macro.h"

/* The daemon's one view of the cgroup hierarchies: /proc/self/mountinfo read
 * once (at start, on reload, and when a lookup misses because the hierarchy
 * it used is gone), and one cgroup id -> path table per root, shared by every
 * user. Lookups come from the event consumer thread and the main thread: one
 * mutex guards the mounts and the tables, and a lookup copies the path out
 * before it lets go (a rescan on the other thread frees the old table). A
 * rescan, at most one a second per table, holds the mutex while it walks.
 * The core makes the one instance before the event channel, hands it to the
 * channel and to the collectors (collector_context), refreshes it on reload
 * and frees it after the channel and the last collector. */
struct cgroup_hierarchy;

struct cgroup_hierarchy_roots {
	int error; /* of the last read of mountinfo (0 or -errno): what was found before stays */
	enum cgroup_memory_mode mode;
	char memory[PATH_MAX];  /* the memory controller's hierarchy; "" without one */
	char unified[PATH_MAX]; /* the first cgroup2 mount, memory or not; "" without one */
};

/* mountinfo: the file to read (tests give their own); v2_has_memory answers
 * for each cgroup2 mount point (cgroup_v2_has_memory reads cgroup.controllers). */
int cgroup_hierarchy_new(const char *mountinfo, bool (*v2_has_memory)(const char *mountpoint),
			 struct cgroup_hierarchy **ret);
void cgroup_hierarchy_free(struct cgroup_hierarchy *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgroup_hierarchy *, cgroup_hierarchy_free)

/* Reads mountinfo again; tables on the memory hierarchy follow it if it moved. */
int cgroup_hierarchy_refresh(struct cgroup_hierarchy *h);
void cgroup_hierarchy_roots(struct cgroup_hierarchy *h, struct cgroup_hierarchy_roots *ret);

/* An id -> path table. root NULL: the memory hierarchy, wherever mountinfo
 * says it is; else that directory (a configured root). Users of the same root
 * share one table, sized for the largest max_entries asked for. Returns a
 * handle >= 0, or -ENOSPC when CGROUP_HIERARCHY_TABLES_MAX are in use, -ENOMEM. */
#define CGROUP_HIERARCHY_TABLES_MAX 8
int cgroup_hierarchy_table_acquire(struct cgroup_hierarchy *h, const char *root, size_t max_entries);
void cgroup_hierarchy_table_release(struct cgroup_hierarchy *h, int table);

/* The path of cgroup id below the table's root ("/" for the root itself),
 * copied into buf (cut to len; buf may be NULL to ask whether it is known).
 * Returns 0, or -ENOENT (buf then holds ""). now_usec: CLOCK_MONOTONIC. */
int cgroup_hierarchy_lookup(struct cgroup_hierarchy *h, int table, uint64_t id, uint64_t now_usec, char *buf,
			    size_t len);
/* The same for a cgroup that must be named (a kill's): a miss rescans
 * at once (lib/cgroup_paths.h, cgroup_paths_lookup_urgent). */
int cgroup_hierarchy_lookup_urgent(struct cgroup_hierarchy *h, int table, uint64_t id, uint64_t now_usec, char *buf,
				   size_t len);

#endif
