/* SPDX-License-Identifier: GPL-2.0 */
/* lib/cgroup_walk.c on a temporary tree changed under it: cgroups and files
 * removed or replaced mid-walk, files kept open, a nested mount. */
#include <check.h>
#include <errno.h>
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

#include "cgroup_walk_fixture.h"
#include "suite_main.h"

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

static Suite *cgroup_walk_churn_suite(void)
{
	Suite *s = suite_create("cgroup_walk_churn");
	TCase *rd = tcase_create("read");
	TCase *churn = tcase_create("churn");

	tcase_add_test(rd, test_read_at);
	suite_add_tcase(s, rd);
	tcase_add_test(churn, test_deleted_mid_walk);
	tcase_add_test(churn, test_file_vanished_mid_walk);
	tcase_add_test(churn, test_files_kept_open);
	tcase_add_test(churn, test_read_skip_stat);
	tcase_add_test(churn, test_replaced_mid_walk);
	tcase_add_test(churn, test_nested_mount_not_walked);
	suite_add_tcase(s, churn);
	return s;
}

int main(void)
{
	return suite_main_run(cgroup_walk_churn_suite());
}
