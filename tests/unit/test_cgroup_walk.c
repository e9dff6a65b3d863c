/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "cannot open %s: %m", path);
	return fd;
}

/* ---- patterns ---- */

START_TEST(test_globs_parse)
{
	struct cgroup_globs g;

	ck_assert_int_eq(cgroup_globs_parse("/system.slice/*, /user.slice\t*.scope,,", &g), 0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_str_eq(g.pattern[0], "/system.slice/*");
	ck_assert_str_eq(g.pattern[1], "/user.slice");
	ck_assert_str_eq(g.pattern[2], "*.scope");
	ck_assert(cgroup_globs_match(&g, "/system.slice/a.service"));
	ck_assert(cgroup_globs_match(&g, "/system.slice/a.service/deeper")); /* no FNM_PATHNAME */
	ck_assert(cgroup_globs_match(&g, "/user.slice"));
	ck_assert(!cgroup_globs_match(&g, "/user.slice/user-0.slice"));
	ck_assert(cgroup_globs_match(&g, "/user.slice/session-1.scope"));
	ck_assert(!cgroup_globs_match(&g, "/"));
	cgroup_globs_free(&g);
	ck_assert_uint_eq(g.n, 0);

	ck_assert_int_eq(cgroup_globs_parse("", &g), 0);
	ck_assert_uint_eq(g.n, 0);
	ck_assert_int_eq(cgroup_globs_parse(" , ", NULL), 0);
	ck_assert_int_eq(cgroup_globs_parse("system.slice", NULL), -EINVAL);
	ck_assert_int_eq(cgroup_globs_parse("/ok nope", &g), -EINVAL);
	ck_assert_int_eq(cgroup_globs_parse("[ab]*", NULL), 0);
	ck_assert_int_eq(cgroup_globs_parse("?x", NULL), 0);
}
END_TEST

START_TEST(test_globs_limits)
{
	char text[CGROUP_GLOBS_MAX * 4 + 16] = "", longp[CGROUP_GLOB_LEN_MAX + 2];
	struct cgroup_globs g;
	size_t i;

	for (i = 0; i < CGROUP_GLOBS_MAX; i++)
		strcat(text, "/a ");
	ck_assert_int_eq(cgroup_globs_parse(text, &g), 0);
	ck_assert_uint_eq(g.n, CGROUP_GLOBS_MAX);
	cgroup_globs_free(&g);
	strcat(text, "/b");
	ck_assert_int_eq(cgroup_globs_parse(text, &g), -E2BIG);

	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	ck_assert_int_eq(cgroup_globs_parse(longp, NULL), -EINVAL);
	longp[sizeof(longp) - 2] = '\0';
	ck_assert_int_eq(cgroup_globs_parse(longp, NULL), 0);
}
END_TEST

START_TEST(test_selected)
{
	struct cgroup_globs inc, exc, none = { .n = 0 };

	ck_assert_int_eq(cgroup_globs_parse("/system.slice*", &inc), 0);
	ck_assert_int_eq(cgroup_globs_parse("*/systemd-*", &exc), 0);
	ck_assert(cgroup_path_selected(&none, &none, "/anything"));
	ck_assert(cgroup_path_selected(NULL, NULL, "/"));
	ck_assert(cgroup_path_selected(&inc, &exc, "/system.slice"));
	ck_assert(cgroup_path_selected(&inc, &exc, "/system.slice/cron.service"));
	ck_assert(!cgroup_path_selected(&inc, &exc, "/system.slice/systemd-journald.service"));
	ck_assert(!cgroup_path_selected(&inc, &exc, "/user.slice"));
	ck_assert(!cgroup_path_selected(&none, &exc, "/x/systemd-udevd.service"));
	cgroup_globs_free(&inc);
	cgroup_globs_free(&exc);
}
END_TEST

/* ---- the walk ---- */

#define MAX_SEEN 64

struct seen {
	char path[MAX_SEEN][256];
	unsigned depth[MAX_SEEN];
	bool shadow[MAX_SEEN];
	size_t n;
	int stop_at; /* return -ECANCELED at this call, or -1 */
	const char *prune; /* return 1 for this path */
};

static int record(struct cgroup_dir *d, void *userdata)
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

static int find_seen(const struct seen *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->path[i], path) == 0)
			return (int)i;
	return -1;
}

static void walk_fixture(const char *root, const char *shadow, unsigned max_depth, size_t max_cgroups,
			 struct seen *s, struct cgroup_walk_stats *st)
{
	const struct cgroup_walk_opts opts = { .max_depth = max_depth, .max_cgroups = max_cgroups };
	int fd = open_dir(root), sfd = shadow ? open_dir(shadow) : -1;

	ck_assert_int_eq(cgroup_walk(fd, sfd, &opts, record, s, st), 0);
	/* The caller's fd is not consumed and its offset not moved: walk again. */
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
	if (sfd >= 0)
		close(sfd);
}

START_TEST(test_walk_v2_tree)
{
	static const struct {
		const char *path;
		unsigned depth;
	} want[] = {
		{ "/", 0 },
		{ "/workload", 1 },
		{ "/" ODD, 1 },
		{ "/system.slice", 1 },
		{ "/system.slice/app.service", 2 },
		{ "/broken", 1 },
		{ "/nomemory", 1 },
		{ "/nomemory/child", 2 },
	};
	struct seen s = { .stop_at = -1 };
	struct cgroup_walk_stats st;
	size_t i;

	walk_fixture(V2, NULL, 8, 10000, &s, &st);
	ck_assert_uint_eq(s.n, sizeof(want) / sizeof(want[0]));
	ck_assert_uint_eq(st.visited, s.n);
	ck_assert_uint_eq(st.vanished, 0);
	ck_assert(!st.truncated);
	ck_assert_str_eq(s.path[0], "/"); /* pre-order: the root first */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int k = find_seen(&s, want[i].path);

		ck_assert_msg(k >= 0, "%s not visited", want[i].path);
		ck_assert_uint_eq(s.depth[k], want[i].depth);
		ck_assert(!s.shadow[k]);
	}
	ck_assert_int_lt(find_seen(&s, "/link-to-workload"), 0);
	/* A parent comes before its children. */
	ck_assert_int_lt(find_seen(&s, "/system.slice"), find_seen(&s, "/system.slice/app.service"));
}
END_TEST

START_TEST(test_walk_bounds)
{
	struct seen s = { .stop_at = -1 };
	struct cgroup_walk_stats st;

	walk_fixture(V2, NULL, 1, 10000, &s, &st);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_int_lt(find_seen(&s, "/system.slice/app.service"), 0);
	ck_assert_int_lt(find_seen(&s, "/nomemory/child"), 0);

	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	walk_fixture(V2, NULL, 0, 10000, &s, &st);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.path[0], "/");

	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	walk_fixture(V2, NULL, 8, 3, &s, &st);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(st.visited, 3);
	ck_assert(st.truncated);

	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	walk_fixture(V2, NULL, 8, 8, &s, &st);
	ck_assert_uint_eq(s.n, 8);
	ck_assert(!st.truncated); /* exactly enough */
}
END_TEST

START_TEST(test_walk_prune_and_stop)
{
	const struct cgroup_walk_opts opts = { .max_depth = 8, .max_cgroups = 100 };
	struct seen s = { .stop_at = -1, .prune = "/system.slice" };
	struct cgroup_walk_stats st;
	int fd;

	walk_fixture(V2, NULL, 8, 10000, &s, &st);
	ck_assert_int_ge(find_seen(&s, "/system.slice"), 0);
	ck_assert_int_lt(find_seen(&s, "/system.slice/app.service"), 0);
	ck_assert_uint_eq(s.n, 7);

	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	fd = open_dir(V2);
	ck_assert_int_eq(cgroup_walk(fd, -1, &opts, record, &s, &st), -ECANCELED);
	ck_assert_uint_eq(s.n, 3);
	close(fd);
}
END_TEST

START_TEST(test_walk_shadow)
{
	struct seen s = { .stop_at = -1 };
	struct cgroup_walk_stats st;

	/* v1 memory tree with the v2 tree beside it, as on a hybrid host. */
	walk_fixture(V1, V2, 8, 10000, &s, &st);
	ck_assert_uint_eq(s.n, 4);
	ck_assert(s.shadow[find_seen(&s, "/")]);
	ck_assert(s.shadow[find_seen(&s, "/" ODD)]);
	ck_assert(s.shadow[find_seen(&s, "/broken")]);
	ck_assert(!s.shadow[find_seen(&s, "/fixture-rec")]);
}
END_TEST

/* ---- reading ---- */

static void read_v1_fixture(const char *sub, struct cgroup_mem *m)
{
	char path[512];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", V1, sub);
	fd = open_dir(path);
	r = cgroup_read_v1(fd, NULL, buf, m);
	close(fd);
	ck_assert_msg(r == 0, "cgroup_read_v1(%s): %d", sub, r);
}

static void read_v2_fixture(const char *sub, struct cgroup_mem *m)
{
	char path[512];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", V2, sub);
	fd = open_dir(path);
	r = cgroup_read_v2(fd, NULL, buf, m);
	if (r == 0)
		r = cgroup_read_pressure(fd, NULL, buf, m);
	close(fd);
	ck_assert_msg(r == 0, "cgroup_read_v2(%s): %d", sub, r);
}

#define EV(e) (1u << CGROUP_EVENT_##e)

START_TEST(test_read_v1)
{
	struct cgroup_mem m;

	read_v1_fixture(".", &m);
	ck_assert(m.v1);
	ck_assert_uint_eq(m.usage, 361836544);
	ck_assert(!m.has_limit); /* 9223372036854771712 */
	ck_assert(!m.has_high);
	ck_assert(m.has_inactive_file);
	ck_assert_uint_eq(m.inactive_file, 122859520); /* total_inactive_file, not inactive_file */
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 238977024);
	ck_assert_uint_eq(m.events_present, EV(FAILCNT) | EV(OOM_KILL));
	ck_assert_uint_eq(m.events[CGROUP_EVENT_FAILCNT], 0);
	ck_assert(m.has_under_oom && !m.under_oom);
	ck_assert(!m.has_pressure);

	read_v1_fixture("fixture-rec", &m);
	ck_assert_uint_eq(m.usage, 28344320);
	ck_assert(m.has_limit);
	ck_assert_uint_eq(m.limit, 64 << 20);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_FAILCNT], 140);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM_KILL], 1);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 28344320);

	read_v1_fixture(ODD, &m);
	ck_assert_uint_eq(m.usage, 0);
	ck_assert(!m.has_limit);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 0);
}
END_TEST

START_TEST(test_read_v2)
{
	struct cgroup_mem m;

	read_v2_fixture("workload", &m);
	ck_assert(!m.v1);
	ck_assert_uint_eq(m.usage, 66891776);
	ck_assert(m.has_limit);
	ck_assert_uint_eq(m.limit, 64 << 20);
	ck_assert(!m.has_high); /* "max" */
	ck_assert_uint_eq(m.inactive_file, 8654848);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 58236928);
	ck_assert_uint_eq(m.events_present, EV(LOW) | EV(HIGH) | EV(MAX) | EV(OOM) | EV(OOM_KILL) | EV(OOM_GROUP_KILL));
	ck_assert_uint_eq(m.events[CGROUP_EVENT_MAX], 12);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM], 1);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM_KILL], 1);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM_GROUP_KILL], 0);
	ck_assert(!m.has_under_oom);
	ck_assert(m.has_pressure && m.has_pressure_full);
	ck_assert_uint_eq(m.pressure_some_usec, 1843212);
	ck_assert_uint_eq(m.pressure_full_usec, 1620931);

	read_v2_fixture(ODD, &m);
	ck_assert_uint_eq(m.usage, 8716288);
	ck_assert(!m.has_limit);
	ck_assert(m.has_high);
	ck_assert_uint_eq(m.high, 512 << 20);

	read_v2_fixture("system.slice/app.service", &m);
	ck_assert_uint_eq(m.usage, 100 << 20);
	ck_assert_uint_eq(m.limit, 128 << 20);
	ck_assert_uint_eq(m.events_present, EV(LOW) | EV(HIGH) | EV(MAX) | EV(OOM) | EV(OOM_KILL));
	ck_assert_uint_eq(m.events[CGROUP_EVENT_MAX], 2);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 0); /* clamped */
	ck_assert_uint_eq(m.pressure_some_usec, 750000);
}
END_TEST

START_TEST(test_read_missing_file)
{
	struct cgroup_mem m, before, root = { .v1 = false };
	int fd;

	/* Bytes, not values: a failed read must not write any of them. */
	memset(&m, 0xa5, sizeof(m));
	memcpy(&before, &m, sizeof(m));
	fd = open_dir(V2 "/broken");
	ck_assert_int_eq(cgroup_read_v2(fd, NULL, buf, &m), -ENOENT);
	close(fd);
	fd = open_dir(V1 "/broken");
	ck_assert_int_eq(cgroup_read_v1(fd, NULL, buf, &m), -ENOENT);
	close(fd);
	fd = open_dir(V1);
	ck_assert_int_eq(cgroup_read_pressure(fd, NULL, buf, &m), -ENOENT);
	close(fd);
	fd = open_dir(V2); /* the root has no memory.current, but memory.pressure */
	ck_assert_int_eq(cgroup_read_v2(fd, NULL, buf, &m), -ENOENT);
	ck_assert_msg(memcmp(&m, &before, sizeof(m)) == 0, "a failed read wrote its output");
	ck_assert_int_eq(cgroup_read_pressure(fd, NULL, buf, &root), 0);
	close(fd);
	ck_assert(root.has_pressure && root.has_pressure_full);
	ck_assert_uint_eq(root.pressure_some_usec, 19187712);
	ck_assert_uint_eq(root.pressure_full_usec, 15441023);
}
END_TEST

START_TEST(test_memory_controller)
{
	int fd = open_dir(V2);

	ck_assert(cgroup_dir_has_memory_controller(fd, buf));
	close(fd);
	fd = open_dir(V2 "/nomemory");
	ck_assert(!cgroup_dir_has_memory_controller(fd, buf));
	close(fd);
	fd = open_dir(V2 "/workload");
	ck_assert(!cgroup_dir_has_memory_controller(fd, buf)); /* no such file */
	close(fd);
}
END_TEST

START_TEST(test_working_set)
{
	ck_assert_uint_eq(cgroup_working_set(100, 30), 70);
	ck_assert_uint_eq(cgroup_working_set(100, 100), 0);
	ck_assert_uint_eq(cgroup_working_set(100, 200), 0);
	ck_assert_uint_eq(cgroup_working_set(UINT64_MAX, 0), UINT64_MAX);
}
END_TEST

/* ---- a temporary tree we can break ---- */

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s: %m", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void make_v2_cgroup(const char *dir, unsigned i)
{
	char v[64];

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(v, sizeof(v), "%u\n", 1000 + i);
	put(dir, "memory.current", v);
	put(dir, "memory.max", "max\n");
	put(dir, "memory.high", "max\n");
	put(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
	put(dir, "memory.stat", "anon 0\nfile 0\ninactive_file 10\nactive_file 0\n");
}

#define N_TEMP 40

struct churn {
	char root[256];
	bool remove_dirs; /* else only the memory.stat files of the others */
	char victim[256]; /* the first cgroup visited below the root */
	unsigned ok, failed;
};

/* At the first child, break every other cgroup, then read like the collector does. */
static int churn_cb(struct cgroup_dir *d, void *userdata)
{
	struct churn *c = userdata;
	struct cgroup_mem m;
	unsigned i;
	int r;

	if (d->depth == 0)
		return 0;
	if (!c->victim[0]) {
		snprintf(c->victim, sizeof(c->victim), "%s", d->path);
		for (i = 0; i < N_TEMP; i++) {
			char path[512];

			snprintf(path, sizeof(path), "%s/cg%u", c->root, i);
			if (strcmp(path + strlen(c->root), d->path) == 0)
				continue;
			if (c->remove_dirs) {
				rm_rf(path);
			} else {
				strcat(path, "/memory.stat");
				ck_assert_int_eq(unlink(path), 0);
			}
		}
	}
	memset(&m, 0x5a, sizeof(m));
	r = cgroup_read_v2(cgroup_dir_fd(d), NULL, buf, &m);
	if (r == 0) {
		unsigned n;

		ck_assert_int_eq(sscanf(d->path, "/cg%u", &n), 1);
		ck_assert_uint_eq(m.usage, 1000 + n);
		ck_assert(!m.has_limit);
		ck_assert_uint_eq(m.inactive_file, 10);
		c->ok++;
	} else {
		ck_assert_int_eq(r, -ENOENT);
		c->failed++;
	}
	return 0;
}

static void churn_run(bool remove_dirs)
{
	const struct cgroup_walk_opts opts = { .max_depth = 8, .max_cgroups = 1000 };
	struct churn c = { .remove_dirs = remove_dirs };
	struct cgroup_walk_stats st;
	unsigned i;
	int fd;

	snprintf(c.root, sizeof(c.root), "/tmp/test_cgroup_walk.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(c.root));
	for (i = 0; i < N_TEMP; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/cg%u", c.root, i);
		make_v2_cgroup(path, i);
	}
	fd = open_dir(c.root);
	ck_assert_int_eq(cgroup_walk(fd, -1, &opts, churn_cb, &c, &st), 0);
	close(fd);
	rm_rf(c.root);

	ck_assert_uint_eq(c.ok, 1);
	if (remove_dirs) {
		/* Gone before readdir got to them, or between readdir and open. */
		ck_assert_uint_eq(c.failed, 0);
		ck_assert_uint_le(st.vanished, N_TEMP - 1);
		ck_assert_uint_eq(st.visited, 2);
	} else {
		ck_assert_uint_eq(c.failed, N_TEMP - 1);
		ck_assert_uint_eq(st.vanished, 0);
		ck_assert_uint_eq(st.visited, N_TEMP + 1);
	}
}

START_TEST(test_deleted_mid_walk)
{
	churn_run(true);
}
END_TEST

START_TEST(test_file_vanished_mid_walk)
{
	churn_run(false);
}
END_TEST

START_TEST(test_read_at)
{
	char dir[] = "/tmp/test_cgroup_walk.XXXXXX", small[8], target[512];
	size_t len;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "value", "12345\n");
	put(dir, "long", "0123456789abcdef\n");
	put(dir, "exact", "123456\n"); /* 7 bytes: fits an 8-byte buffer with its NUL */
	snprintf(target, sizeof(target), "%s/value", dir);
	fd = open_dir(dir);
	ck_assert_int_eq(symlinkat(target, fd, "link"), 0);

	ck_assert_int_eq(cgroup_read_at(fd, "value", small, sizeof(small), &len), 0);
	ck_assert_uint_eq(len, 6);
	ck_assert_str_eq(small, "12345\n");
	ck_assert_int_eq(cgroup_read_at(fd, "exact", small, sizeof(small), &len), 0);
	ck_assert_str_eq(small, "123456\n");
	ck_assert_int_eq(cgroup_read_at(fd, "long", small, sizeof(small), &len), -EFBIG);
	ck_assert_int_eq(cgroup_read_at(fd, "link", small, sizeof(small), &len), -ELOOP);
	ck_assert_int_eq(cgroup_read_at(fd, "nope", small, sizeof(small), &len), -ENOENT);
	close(fd);
	rm_rf(dir);
}
END_TEST

/* Kept-open files are re-read from offset 0 and see new contents. */
START_TEST(test_files_kept_open)
{
	char dir[] = "/tmp/test_cgroup_walk.XXXXXX", cg[300];
	struct cgroup_files f;
	struct cgroup_mem m;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cg, sizeof(cg), "%s/cg", dir);
	make_v2_cgroup(cg, 7);
	put(cg, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
				   "full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
	cgroup_files_init(&f);
	ck_assert_uint_eq(cgroup_files_count(&f), 0);
	ck_assert(!cgroup_files_complete(&f));
	/* Without a directory and nothing open: nothing to read from. */
	ck_assert_int_eq(cgroup_read_v2(-1, &f, buf, &m), -EBADF);

	fd = open_dir(cg);
	ck_assert_int_eq(cgroup_read_v2(fd, &f, buf, &m), 0);
	ck_assert_int_eq(cgroup_read_pressure(fd, &f, buf, &m), 0);
	close(fd);
	ck_assert_uint_eq(cgroup_files_count(&f), CGROUP_FILES);
	ck_assert(cgroup_files_complete(&f));
	ck_assert_uint_eq(m.usage, 1007);
	ck_assert_uint_eq(m.pressure_some_usec, 5);

	/* Same inodes, new contents (as seq_file regenerates them). */
	{
		FILE *w = fopen(strcat(strcpy((char[512]){ 0 }, cg), "/memory.current"), "r+");

		ck_assert_ptr_nonnull(w);
		fputs("2048\n", w);
		fclose(w);
	}
	ck_assert_int_eq(cgroup_read_v2(-1, &f, buf, &m), 0);
	ck_assert_int_eq(cgroup_read_pressure(-1, &f, buf, &m), 0);
	ck_assert_uint_eq(m.usage, 2048);
	ck_assert_uint_eq(cgroup_files_close(&f), CGROUP_FILES);
	ck_assert_uint_eq(cgroup_files_count(&f), 0);
	rm_rf(dir);
}
END_TEST

/* memory.stat left out: everything else as read in full, no inactive_file,
 * and the file is neither read nor opened (so it may as well be missing). */
START_TEST(test_read_skip_stat)
{
	char dir[] = "/tmp/test_cgroup_walk.XXXXXX", cg[300], path[320];
	struct cgroup_mem full, part;
	struct cgroup_files f;
	int fd;

	fd = open_dir(V1 "/fixture-rec");
	ck_assert_int_eq(cgroup_read_memory(fd, NULL, true, 0, buf, &full), 0);
	ck_assert_int_eq(cgroup_read_memory(fd, NULL, true, CGROUP_READ_SKIP_STAT, buf, &part), 0);
	close(fd);
	ck_assert(full.has_inactive_file && !part.has_inactive_file);
	ck_assert(part.v1);
	ck_assert_uint_eq(part.usage, full.usage);
	ck_assert_uint_eq(part.limit, full.limit);
	ck_assert_uint_eq(part.events_present, full.events_present);
	ck_assert_uint_eq(part.events[CGROUP_EVENT_FAILCNT], 140);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cg, sizeof(cg), "%s/cg", dir);
	make_v2_cgroup(cg, 3);
	fd = open_dir(cg);
	ck_assert_int_eq(cgroup_read_memory(fd, NULL, false, 0, buf, &full), 0);
	ck_assert(full.has_inactive_file);
	ck_assert_uint_eq(full.inactive_file, 10);
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(cgroup_read_memory(fd, NULL, false, 0, buf, &part), -ENOENT);
	cgroup_files_init(&f);
	ck_assert_int_eq(cgroup_read_memory(fd, &f, false, CGROUP_READ_SKIP_STAT, buf, &part), 0);
	ck_assert(!part.has_inactive_file);
	ck_assert_uint_eq(part.usage, 1003);
	ck_assert_uint_eq(cgroup_files_count(&f), 4);
	ck_assert(!cgroup_files_complete(&f));
	ck_assert_uint_eq(cgroup_files_close(&f), 4);
	close(fd);
	rm_rf(dir);
}
END_TEST

/* A cgroup replaced under the same name between the walk's look and the open. */
static int replace_cb(struct cgroup_dir *d, void *userdata)
{
	const char *root = userdata;
	char path[512], old[512];

	if (d->depth == 0 || strcmp(d->path, "/cg") != 0)
		return 0;
	snprintf(path, sizeof(path), "%s%s", root, d->path);
	snprintf(old, sizeof(old), "%s/old", root);
	/* Moved away rather than removed, so its inode number cannot be reused. */
	ck_assert_int_eq(rename(path, old), 0);
	make_v2_cgroup(path, 1);
	ck_assert_int_eq(cgroup_dir_fd(d), -ENOENT);
	return 0;
}

START_TEST(test_replaced_mid_walk)
{
	const struct cgroup_walk_opts opts = { .max_depth = 8, .max_cgroups = 100 };
	char root[] = "/tmp/test_cgroup_walk.XXXXXX", cg[300];
	struct cgroup_walk_stats st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(cg, sizeof(cg), "%s/cg", root);
	make_v2_cgroup(cg, 0);
	fd = open_dir(root);
	ck_assert_int_eq(cgroup_walk(fd, -1, &opts, replace_cb, root, &st), 0);
	close(fd);
	rm_rf(root);
}
END_TEST

/* ---- ranking ---- */

/* A cgroup2 tree mounted inside the v1 one (here: a tmpfs on a directory of
 * the tree, in a mount namespace of this forked test's own) is another
 * hierarchy: not walked. Needs CAP_SYS_ADMIN, which CI's root has. */
START_TEST(test_nested_mount_not_walked)
{
	const struct cgroup_walk_opts opts = { .max_depth = 8, .max_cgroups = 100 };
	char root[] = "/tmp/test_cgroup_walk_nested.XXXXXX", path[256];
	struct seen s = { .n = 0, .stop_at = -1 };
	struct cgroup_walk_stats st;
	int fd;

	if (unshare(CLONE_NEWNS) < 0) {
		fprintf(stderr, "test_nested_mount_not_walked: not run, no mount namespace (%m)\n");
		return;
	}
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/a", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a/unified", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(mount("none", path, "tmpfs", 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/a/unified/inner", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	fd = open_dir(root);
	ck_assert_int_eq(cgroup_walk(fd, -1, &opts, record, &s, &st), 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/a/unified", root);
	ck_assert_int_eq(umount(path), 0);
	rm_rf(root);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_str_eq(s.path[0], "/");
	ck_assert_str_eq(s.path[1], "/a");
	ck_assert_int_eq(find_seen(&s, "/a/unified"), -1);
	ck_assert_int_eq(find_seen(&s, "/a/unified/inner"), -1);
}
END_TEST

START_TEST(test_rank)
{
	struct cgroup_rank r[] = {
		{ .index = 0, .path = "/idle", .usage = 10 },
		{ .index = 1, .path = "/half", .usage = 50, .limit = 100, .has_limit = true },
		{ .index = 2, .path = "/big", .usage = 900 },
		{ .index = 3, .path = "/full", .usage = 99, .limit = 100, .has_limit = true },
		{ .index = 4, .path = "/stalled", .usage = 5, .pressure_some_delta = 1000 },
		{ .index = 5, .path = "/half2", .usage = 500, .limit = 1000, .has_limit = true, .pressure_some_delta = 7 },
		{ .index = 6, .path = "/half3", .usage = 500, .limit = 1000, .has_limit = true, .pressure_some_delta = 7 },
		{ .index = 7, .path = "/huge", .usage = UINT64_MAX - 1, .limit = UINT64_MAX, .has_limit = true },
	};
	static const size_t want[] = { 7, 3, 5, 6, 1, 4, 2, 0 };
	size_t i;

	cgroup_rank_sort(r, sizeof(r) / sizeof(r[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(r[i].index == want[i], "position %zu: %s, want index %zu", i, r[i].path, want[i]);
	cgroup_rank_sort(r, 0);
}
END_TEST

START_TEST(test_event_names)
{
	ck_assert_str_eq(cgroup_event_name(CGROUP_EVENT_LOW), "low");
	ck_assert_str_eq(cgroup_event_name(CGROUP_EVENT_OOM_GROUP_KILL), "oom_group_kill");
	ck_assert_str_eq(cgroup_event_name(CGROUP_EVENT_FAILCNT), "failcnt");
	ck_assert_ptr_null(cgroup_event_name(_CGROUP_EVENT_MAX));
}
END_TEST

static Suite *cgroup_walk_suite(void)
{
	Suite *s = suite_create("cgroup_walk");
	TCase *globs = tcase_create("globs"), *w = tcase_create("walk"), *rd = tcase_create("read"),
	      *churn = tcase_create("churn"), *rank = tcase_create("rank");

	tcase_add_test(globs, test_globs_parse);
	tcase_add_test(globs, test_globs_limits);
	tcase_add_test(globs, test_selected);
	suite_add_tcase(s, globs);
	tcase_add_test(w, test_walk_v2_tree);
	tcase_add_test(w, test_walk_bounds);
	tcase_add_test(w, test_walk_prune_and_stop);
	tcase_add_test(w, test_walk_shadow);
	suite_add_tcase(s, w);
	tcase_add_test(rd, test_read_v1);
	tcase_add_test(rd, test_read_v2);
	tcase_add_test(rd, test_read_missing_file);
	tcase_add_test(rd, test_memory_controller);
	tcase_add_test(rd, test_working_set);
	tcase_add_test(rd, test_read_at);
	suite_add_tcase(s, rd);
	tcase_add_test(churn, test_deleted_mid_walk);
	tcase_add_test(churn, test_file_vanished_mid_walk);
	tcase_add_test(churn, test_files_kept_open);
	tcase_add_test(churn, test_read_skip_stat);
	tcase_add_test(churn, test_replaced_mid_walk);
	tcase_add_test(churn, test_nested_mount_not_walked);
	suite_add_tcase(s, churn);
	tcase_add_test(rank, test_rank);
	tcase_add_test(rank, test_event_names);
	suite_add_tcase(s, rank);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cgroup_walk_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
