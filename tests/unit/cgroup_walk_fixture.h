/* SPDX-License-Identifier: GPL-2.0 */
/* The fixture trees and the walk's recorder shared by the cgroup walk tests
 * (test_cgroup_walk*.c). */
#ifndef MEMWATCHD_TESTS_UNIT_CGROUP_WALK_FIXTURE_H
#define MEMWATCHD_TESTS_UNIT_CGROUP_WALK_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_walk.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must be defined by the build"
#endif

/* Fixture trees under cgroup/ (see also test_cgroupfs.c):
 *  v1/  the root, "fixture-rec" (64M limit, failcnt 140, one OOM kill), the
 *       idle 'my "odd" cgroup', and "broken" (no memory.usage_in_bytes: as if
 *       removed mid-walk);
 *  v2/  cgroup.controllers with memory; "workload" (64M max, high max),
 *       'my "odd" cgroup' (no max, 512M high), "system.slice" (256M high) with
 *       "app.service" (128M max, no oom_group_kill as before 5.17, more
 *       inactive_file than usage), "broken" (no memory.current), "nomemory"
 *       and its child (no memory controller), and the symlink
 *       "link-to-workload", which must never be followed. */

#define V1 FIXTURES_DIR "/cgroup/v1"
#define V2 FIXTURES_DIR "/cgroup/v2"
#define ODD "my \"odd\" cgroup"

static char buf[CGROUP_READ_BUF_SIZE];

static inline int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "cannot open %s: %m", path);
	return fd;
}

#define MAX_SEEN 64

struct seen {
	char path[MAX_SEEN][256];
	unsigned depth[MAX_SEEN];
	bool shadow[MAX_SEEN];
	size_t n;
	int stop_at; /* return -ECANCELED at this call, or -1 */
	const char *prune; /* return 1 for this path */
};

static inline int record(struct cgroup_dir *d, void *userdata)
{
	struct seen *s = userdata;

	ck_assert_uint_lt(s->n, MAX_SEEN);
	ck_assert_int_ge(cgroup_dir_fd(d), 0);
	ck_assert(d->ino != 0);
	snprintf(s->path[s->n], sizeof(s->path[s->n]), "%s", d->path);
	s->depth[s->n] = d->depth;
	s->shadow[s->n] = cgroup_dir_shadow_fd(d) >= 0;
	s->n++;
	if (s->stop_at >= 0 && (size_t)s->stop_at == s->n - 1)
		return -ECANCELED;
	if (s->prune && strcmp(d->path, s->prune) == 0)
		return 1;
	return 0;
}

static inline int find_seen(const struct seen *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->path[i], path) == 0)
			return (int)i;
	return -1;
}

#endif
