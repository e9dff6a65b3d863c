/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_MOUNTS_H
#define MEMWATCH_CGROUP_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include "macro.h"

/* The cgroup mounts of /proc/self/mountinfo, parsed once: every cgroup2
 * mount and every v1 mount with the memory controller, in file order. */

/* Where the memory controller lives: the cgroup2 mount if memory is one of
 * its controllers, else the v1 memory hierarchy (hybrid hosts). */
enum cgroup_memory_mode {
	CGROUP_MEMORY_NONE,
	CGROUP_MEMORY_V1,
	CGROUP_MEMORY_V2,
};

/* More is a host bind-mounting its hierarchies over and over: the first
 * ones (the real ones come first) are kept, the rest counted. */
#define CGROUP_MOUNTS_MAX 32

struct cgroup_mount {
	char *path; /* the mount point, unescaped (\040 is a space) */
	bool v2;    /* cgroup2; else a v1 hierarchy with the memory controller */
	/* mountinfo's root field is "/": the whole hierarchy, not a bind mount
	 * of one cgroup below it (whose paths would start at that cgroup). */
	bool whole;
};

struct cgroup_mounts {
	struct cgroup_mount mount[CGROUP_MOUNTS_MAX];
	size_t n;
	size_t dropped; /* cgroup mounts past CGROUP_MOUNTS_MAX */
};

/* Malformed lines, and mount points that no path can name (PATH_MAX or
 * longer), are skipped. Returns 0 or -ENOMEM (then ret is empty). */
int cgroup_mounts_parse(const char *mountinfo, struct cgroup_mounts *ret);
void cgroup_mounts_done(struct cgroup_mounts *m);

/* The memory controller's hierarchy: the first cgroup2 mount that
 * v2_has_memory() confirms (NULL: none can be), else the first v1 memory
 * mount. Whole hierarchies come before bind mounts of a subtree, each in
 * file order. NULL with CGROUP_MEMORY_NONE when there is neither. */
const char *cgroup_mounts_memory_root(const struct cgroup_mounts *m, bool (*v2_has_memory)(const char *mountpoint),
				      enum cgroup_memory_mode *ret_mode);
/* The first cgroup2 mount (whole ones first), with or without memory: on a
 * hybrid host the tree whose memory.pressure goes with the v1 cgroups. */
const char *cgroup_mounts_unified(const struct cgroup_mounts *m);

/* Reads cgroup.controllers of a cgroup2 mount point. */
bool cgroup_v2_has_memory(const char *mountpoint);

/* Parse and choose in one go, the root copied (cut to root_len) into root. */
enum cgroup_memory_mode cgroup_find_memory_root(const char *mountinfo, char *root, size_t root_len,
						bool (*v2_has_memory)(const char *mountpoint));

#endif
