// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector's roots: which trees it walks (v1 memory, cgroup2, or
 * the v1 tree with its cgroup2 twin for pressure), opened once per
 * configuration. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cgroup_internal.h"

void cgroup_roots_close(struct roots *r)
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

/* Both "auto": the memory controller's hierarchy, where the daemon's cgroup
 * hierarchy service found it in mountinfo; on a hybrid host also the cgroup2
 * mount, for pressure. Otherwise each root as given, "auto" meaning none: a
 * configured root never mixes with the host's. */
int cgroup_roots_resolve(const struct cgroup_config *c, struct cgroup_hierarchy *hierarchy, char *buf,
			 struct roots *ret, struct collector_status *st)
{
	struct roots r = { .v1_fd = -1, .v2_fd = -1 };
	struct cgroup_mem probe = { .v1 = false };

	if (strcmp(c->v1_root, "auto") == 0 && strcmp(c->v2_root, "auto") == 0) {
		struct cgroup_hierarchy *h = hierarchy;
		struct cgroup_hierarchy_roots found;

		if (!h)
			return -ENOMEM;
		cgroup_hierarchy_roots(h, &found);
		if (found.error < 0 && found.mode == CGROUP_MEMORY_NONE) {
			collector_status_set_reason(st, "cannot read /proc/self/mountinfo: %s", strerror(-found.error));
			return found.error;
		}
		if (found.mode == CGROUP_MEMORY_V2)
			snprintf(r.v2, sizeof(r.v2), "%s", found.memory);
		else if (found.mode == CGROUP_MEMORY_V1) {
			snprintf(r.v1, sizeof(r.v1), "%s", found.memory);
			snprintf(r.v2, sizeof(r.v2), "%s", found.unified);
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
		cgroup_roots_close(&r);
		return -EOPNOTSUPP;
	}
	*ret = r;
	return 0;
}
