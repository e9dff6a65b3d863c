/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_PATHS_H
#define MEMWATCH_CGROUP_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "macro.h"

/* Cgroup id (the kernfs node id, which is the directory's inode number) to
 * the path below the hierarchy root, for the directories on the root's own
 * file system (a hierarchy mounted inside it has ids of its own). A miss
 * triggers a rescan, at most once per min_rescan_usec; every rescan rebuilds
 * the table from scratch, so an id reused by a new cgroup never keeps its
 * old path. */
struct cgroup_paths;

struct cgroup_paths *cgroup_paths_new(const char *root, unsigned max_depth, size_t max_entries,
				      uint64_t min_rescan_usec);
void cgroup_paths_free(struct cgroup_paths *cp);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgroup_paths *, cgroup_paths_free)

/* "/" for the root, "/a/b" below it; NULL when the id is not (or no longer) there. */
const char *cgroup_paths_lookup(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec);
/* The same for what must be named (a kill's cgroup, made a moment ago and
 * soon removed): a miss rescans unless the last rescan was within
 * URGENT_MIN_RESCAN_USEC, whatever min_rescan_usec and earlier misses say. */
#define URGENT_MIN_RESCAN_USEC 10000
const char *cgroup_paths_lookup_urgent(struct cgroup_paths *cp, uint64_t id, uint64_t now_usec);
int cgroup_paths_rescan(struct cgroup_paths *cp);
size_t cgroup_paths_count(const struct cgroup_paths *cp);
const char *cgroup_paths_root(const struct cgroup_paths *cp);
/* The path of the directory name below parent ("/" for the root): how a
 * kill names a cgroup removed before it was looked up, from its parent's
 * path and the name the kernel gave at the kill. name is read up to
 * name_max bytes (it may lack a NUL there). -EINVAL for what no cgroup
 * directory is named ("", ".", "..", with a '/'), or a parent that is no
 * path; -ENAMETOOLONG when the result does not fit in len. */
int cgroup_path_child(const char *parent, const char *name, size_t name_max, char *buf, size_t len);
/* Applies from the next rescan on. */
void cgroup_paths_set_max_entries(struct cgroup_paths *cp, size_t max_entries);
/* The last rescan could not open the root: unmounted, or mounted elsewhere. */
bool cgroup_paths_root_lost(const struct cgroup_paths *cp);

#endif
