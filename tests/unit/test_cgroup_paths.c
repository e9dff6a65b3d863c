/* SPDX-License-Identifier: GPL-2.0 */
/* lib/cgroup_paths.c on temporary directory trees: lookups, rescans and
 * their rate limit, removed and missing directories, depth and entry limits,
 * nested mounts. Finding the memory root in mountinfo:
 * test_cgroup_memory_root.c. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_mounts.h"
#include "cgroup_paths.h"
#include "fileio.h"
#include "fixture.h"

#include "suite_main.h"

/* ---- temporary directory trees ---------------------------------------- */

/* One temporary directory per test case, made and removed by the parent
 * process (an unchecked fixture), so it goes away even when a test fails.
 * Each test builds its own tree below it. */
static char tmpdir[256];

static void tmpdir_setup(void)
{
	fixture_tmpdir_make(tmpdir, sizeof(tmpdir), "test_cgroup_paths");
}

static void tmpdir_teardown(void)
{
	fixture_tmpdir_remove(tmpdir);
}

#define tpath(...) fixture_path(tmpdir, __VA_ARGS__)
#define mkdir_ok fixture_mkdir

static void rmdir_ok(const char *path)
{
	ck_assert_msg(rmdir(path) == 0, "rmdir %s: %s", path, strerror(errno));
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	ck_assert_msg(stat(path, &st) == 0, "stat %s: %s", path, strerror(errno));
	return (uint64_t)st.st_ino;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "we");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	fclose(f);
}

static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#define SEC 1000000ULL
#define ODD_NAME "odd name \"q\""

/* tmpdir/name/{a/b, c, ODD_NAME, file, link -> a}; returns tmpdir/name. */
static const char *make_basic_tree(const char *name)
{
	mkdir_ok(tpath("%s", name));
	mkdir_ok(tpath("%s/a", name));
	mkdir_ok(tpath("%s/a/b", name));
	mkdir_ok(tpath("%s/c", name));
	mkdir_ok(tpath("%s/" ODD_NAME, name));
	touch(tpath("%s/file", name));
	ck_assert_int_eq(symlink("a", tpath("%s/link", name)), 0);
	return tpath("%s", name);
}

START_TEST(test_paths_lookup)
{
	char root[1024];
	_cleanup_(cgroup_paths_freep) struct cgroup_paths *cp = NULL;

	snprintf(root, sizeof(root), "%s", make_basic_tree("basic"));
	cp = cgroup_paths_new(root, 16, 100, 10 * SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_str_eq(cgroup_paths_root(cp), root);
	ck_assert_uint_eq(cgroup_paths_count(cp), 0); /* nothing scanned yet */

	/* The first lookup scans. */
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(root), 1), "/");
	ck_assert_uint_eq(cgroup_paths_count(cp), 5); /* root, a, a/b, c, odd name */
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("basic/a")), 2), "/a");
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("basic/a/b")), 3), "/a/b");
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("basic/c")), 4), "/c");
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("basic/" ODD_NAME)), 5), "/" ODD_NAME);
	/* Files and symlinks are not cgroups. */
	ck_assert_ptr_null(cgroup_paths_lookup(cp, ino_of(tpath("basic/file")), 6));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, 0, 7));
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);

	/* An explicit rescan gives the same table. */
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("basic/a/b")), 8), "/a/b");
}
END_TEST

START_TEST(test_paths_root_trailing_slash)
{
	char root[1024];
	struct cgroup_paths *cp;

	snprintf(root, sizeof(root), "%s/", make_basic_tree("slash"));
	cp = cgroup_paths_new(root, 16, 100, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(root), 1), "/");
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("slash/a/b")), 1), "/a/b");
	cgroup_paths_free(cp);
	cgroup_paths_free(NULL);
}
END_TEST

START_TEST(test_paths_rescan_rate_limit)
{
	const uint64_t t0 = 1000 * SEC, min = 5 * SEC;
	char root[1024];
	struct cgroup_paths *cp;
	uint64_t d, e;

	snprintf(root, sizeof(root), "%s", make_basic_tree("rate"));
	cp = cgroup_paths_new(root, 16, 100, min);
	ck_assert_ptr_nonnull(cp);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(root), t0), "/");

	mkdir_ok(tpath("rate/d"));
	d = ino_of(tpath("rate/d"));
	/* A miss within min_rescan_usec of the last scan does not rescan... */
	ck_assert_ptr_null(cgroup_paths_lookup(cp, d, t0 + 1));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, d, t0 + min - 1));
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);
	/* ...nor does a hit, however late. */
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("rate/a")), t0 + 100 * SEC), "/a");
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);
	/* Once it has passed, a miss rescans and finds the new directory. */
	ck_assert_str_eq(cgroup_paths_lookup(cp, d, t0 + min), "/d");
	ck_assert_uint_eq(cgroup_paths_count(cp), 6);

	/* The interval counts from that rescan, not from the first one. */
	mkdir_ok(tpath("rate/a/b/e"));
	e = ino_of(tpath("rate/a/b/e"));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, e, t0 + min + 1));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, e, t0 + 2 * min - 1));
	ck_assert_str_eq(cgroup_paths_lookup(cp, e, t0 + 2 * min), "/a/b/e");
	ck_assert_uint_eq(cgroup_paths_count(cp), 7);

	/* min_rescan_usec 0: every miss rescans. */
	cgroup_paths_free(cp);
	cp = cgroup_paths_new(root, 16, 100, 0);
	ck_assert_ptr_nonnull(cp);
	ck_assert_str_eq(cgroup_paths_lookup(cp, d, t0), "/d");
	mkdir_ok(tpath("rate/f"));
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("rate/f")), t0), "/f");
	cgroup_paths_free(cp);
}
END_TEST

START_TEST(test_paths_removed_dir)
{
	const uint64_t t0 = 50 * SEC, min = SEC;
	char root[1024];
	struct cgroup_paths *cp;
	uint64_t b, c, n;

	snprintf(root, sizeof(root), "%s", make_basic_tree("removed"));
	b = ino_of(tpath("removed/a/b"));
	c = ino_of(tpath("removed/c"));
	cp = cgroup_paths_new(root, 16, 100, min);
	ck_assert_ptr_nonnull(cp);
	ck_assert_str_eq(cgroup_paths_lookup(cp, b, t0), "/a/b");

	rmdir_ok(tpath("removed/a/b"));
	rmdir_ok(tpath("removed/c"));
	/* Still cached until something triggers a rescan. */
	ck_assert_str_eq(cgroup_paths_lookup(cp, b, t0 + 10 * min), "/a/b");
	/* A new directory may get a removed one's inode number: after a rescan
	 * (triggered by a miss) it must have its own path, never the old one. */
	mkdir_ok(tpath("removed/new"));
	n = ino_of(tpath("removed/new"));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, ino_of(tpath("removed/file")), t0 + 10 * min));
	ck_assert_uint_eq(cgroup_paths_count(cp), 4); /* root, a, odd name, new */
	ck_assert_str_eq(cgroup_paths_lookup(cp, n, t0 + 10 * min), "/new");
	if (b != n)
		ck_assert_ptr_null(cgroup_paths_lookup(cp, b, t0 + 20 * min));
	if (c != n)
		ck_assert_ptr_null(cgroup_paths_lookup(cp, c, t0 + 30 * min));
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("removed/a")), t0 + 40 * min), "/a");

	/* Through an explicit rescan too. */
	rmdir_ok(tpath("removed/new"));
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 3);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, n, t0 + 40 * min + 1));
	cgroup_paths_free(cp);
}
END_TEST

/* Two removed cgroups asked for in turn, each window (as reclaim does with
 * its map): one rescan each, not one a window, until the negative entries
 * expire. A rescan shows up as the new directory being counted. */
/* A kill's cgroup: found by a rescan whatever min_rescan_usec and the
 * negative cache say, unless the last rescan is URGENT_MIN_RESCAN_USEC old. */
START_TEST(test_paths_lookup_urgent)
{
	const uint64_t t0 = 1000 * SEC, min = 5 * SEC;
	char root[1024];
	struct cgroup_paths *cp;
	uint64_t d, e;

	snprintf(root, sizeof(root), "%s", make_basic_tree("urgent"));
	cp = cgroup_paths_new(root, 16, 100, min);
	ck_assert_ptr_nonnull(cp);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(root), t0), "/");
	mkdir_ok(tpath("urgent/d"));
	d = ino_of(tpath("urgent/d"));
	/* Missed by an ordinary lookup within min_rescan_usec: now a negative entry too. */
	ck_assert_ptr_null(cgroup_paths_lookup(cp, d, t0 + 1));
	ck_assert_ptr_null(cgroup_paths_lookup_urgent(cp, d, t0 + URGENT_MIN_RESCAN_USEC - 1));
	ck_assert_str_eq(cgroup_paths_lookup_urgent(cp, d, t0 + URGENT_MIN_RESCAN_USEC), "/d");
	ck_assert_uint_eq(cgroup_paths_count(cp), 6);
	/* Missed by a rescan of its own (not there yet), then made: found once the short interval passed. */
	mkdir_ok(tpath("urgent-later"));
	e = ino_of(tpath("urgent-later"));
	ck_assert_ptr_null(cgroup_paths_lookup_urgent(cp, e, t0 + 2 * URGENT_MIN_RESCAN_USEC));
	ck_assert_int_eq(rename(tpath("urgent-later"), tpath("urgent/e")), 0);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, e, t0 + 3 * URGENT_MIN_RESCAN_USEC));
	ck_assert_str_eq(cgroup_paths_lookup_urgent(cp, e, t0 + 3 * URGENT_MIN_RESCAN_USEC), "/e");
	cgroup_paths_free(cp);
}
END_TEST

START_TEST(test_paths_negative_kept)
{
	const uint64_t t0 = 100 * SEC, min = SEC;
	char root[1024];
	struct cgroup_paths *cp;
	uint64_t x, y, t;

	snprintf(root, sizeof(root), "%s", make_basic_tree("negative"));
	mkdir_ok(tpath("negative/x"));
	mkdir_ok(tpath("negative/y"));
	x = ino_of(tpath("negative/x"));
	y = ino_of(tpath("negative/y"));
	/* Moved out rather than removed, so that new directories cannot reuse
	 * their inode numbers (cgroup ids never are). */
	ck_assert_int_eq(rename(tpath("negative/x"), tpath("negative-x")), 0);
	ck_assert_int_eq(rename(tpath("negative/y"), tpath("negative-y")), 0);
	cp = cgroup_paths_new(root, 16, 100, min);
	ck_assert_ptr_nonnull(cp);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, x, t0));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, y, t0 + min));
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);

	mkdir_ok(tpath("negative/new"));
	for (t = t0 + 2 * min; t < t0 + 30 * SEC; t += min) {
		ck_assert_ptr_null(cgroup_paths_lookup(cp, x, t));
		ck_assert_ptr_null(cgroup_paths_lookup(cp, y, t));
	}
	ck_assert_uint_eq(cgroup_paths_count(cp), 5);
	/* A rescan for another reason finds new directories all the same. */
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("negative/new")), t), "/new");
	ck_assert_uint_eq(cgroup_paths_count(cp), 6);
	/* After a minute they are looked for again, once. */
	mkdir_ok(tpath("negative/newer"));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, x, t0 + 61 * SEC));
	ck_assert_uint_eq(cgroup_paths_count(cp), 7);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, x, t0 + 63 * SEC));
	cgroup_paths_free(cp);
}
END_TEST

/* root/d1/d2/d3/d4 */
START_TEST(test_paths_max_depth)
{
	static const char *const want[] = { "/", "/d1", "/d1/d2", "/d1/d2/d3", "/d1/d2/d3/d4" };
	uint64_t ids[5];
	unsigned depth;
	size_t i, fds;

	mkdir_ok(tpath("deep"));
	mkdir_ok(tpath("deep/d1"));
	mkdir_ok(tpath("deep/d1/d2"));
	mkdir_ok(tpath("deep/d1/d2/d3"));
	mkdir_ok(tpath("deep/d1/d2/d3/d4"));
	ids[0] = ino_of(tpath("deep"));
	ids[1] = ino_of(tpath("deep/d1"));
	ids[2] = ino_of(tpath("deep/d1/d2"));
	ids[3] = ino_of(tpath("deep/d1/d2/d3"));
	ids[4] = ino_of(tpath("deep/d1/d2/d3/d4"));

	fds = open_fds();
	/* max_depth N: the root and N levels below it. */
	for (depth = 0; depth <= 6; depth++) {
		struct cgroup_paths *cp = cgroup_paths_new(tpath("deep"), depth, 100, SEC);
		size_t levels = depth < 4 ? depth : 4;
		int round;

		ck_assert_ptr_nonnull(cp);
		/* Rescanning over and over leaks no descriptors where the walk stops. */
		for (round = 0; round < 20; round++)
			ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
		ck_assert_uint_eq(cgroup_paths_count(cp), levels + 1);
		for (i = 0; i < 5; i++) {
			const char *p = cgroup_paths_lookup(cp, ids[i], 1);

			if (i <= levels)
				ck_assert_str_eq(p, want[i]);
			else
				ck_assert_ptr_null(p);
		}
		cgroup_paths_free(cp);
		ck_assert_uint_eq(open_fds(), fds);
	}
}
END_TEST

START_TEST(test_paths_max_entries)
{
	uint64_t ids[10];
	char name[32];
	size_t i, found;
	struct cgroup_paths *cp;

	mkdir_ok(tpath("wide"));
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "wide/c%zu", i);
		mkdir_ok(tpath("%s", name));
		ids[i] = ino_of(tpath("%s", name));
	}

	/* Room for the root and 3 children: the table is partial, and says so. */
	cp = cgroup_paths_new(tpath("wide"), 8, 4, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), -ENOSPC);
	ck_assert_uint_eq(cgroup_paths_count(cp), 4);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("wide")), 1), "/");
	for (i = 0, found = 0; i < 10; i++) {
		const char *p = cgroup_paths_lookup(cp, ids[i], 1);

		if (p) {
			snprintf(name, sizeof(name), "/c%zu", i);
			ck_assert_str_eq(p, name);
			found++;
		}
	}
	ck_assert_uint_eq(found, 3);
	/* A larger bound counts from the next rescan. */
	cgroup_paths_set_max_entries(cp, 6);
	ck_assert_uint_eq(cgroup_paths_count(cp), 4);
	ck_assert_int_eq(cgroup_paths_rescan(cp), -ENOSPC);
	ck_assert_uint_eq(cgroup_paths_count(cp), 6);
	cgroup_paths_set_max_entries(cp, 11);
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 11);
	cgroup_paths_free(cp);

	/* Just enough. */
	cp = cgroup_paths_new(tpath("wide"), 8, 11, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 11);
	for (i = 0; i < 10; i++)
		ck_assert_ptr_nonnull(cgroup_paths_lookup(cp, ids[i], 1));
	cgroup_paths_free(cp);

	/* The root only. */
	cp = cgroup_paths_new(tpath("wide"), 8, 1, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), -ENOSPC);
	ck_assert_uint_eq(cgroup_paths_count(cp), 1);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("wide")), 1), "/");
	cgroup_paths_free(cp);

	/* No room at all: an error, an empty table. */
	cp = cgroup_paths_new(tpath("wide"), 8, 0, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_lt(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 0);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, ino_of(tpath("wide")), 1));
	cgroup_paths_free(cp);

	/* A table larger than the initial 64 slots. */
	mkdir_ok(tpath("many"));
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "many/m%zu", i);
		mkdir_ok(tpath("%s", name));
	}
	cp = cgroup_paths_new(tpath("many"), 8, 1000, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 201);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "many/m%zu", i);
		ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("%s", name)), 1), name + 4);
	}
	cgroup_paths_free(cp);
}
END_TEST

START_TEST(test_paths_missing_root)
{
	const uint64_t min = SEC;
	char root[1024];
	struct cgroup_paths *cp;

	snprintf(root, sizeof(root), "%s", tpath("missing"));
	cp = cgroup_paths_new(root, 8, 100, min);
	ck_assert_ptr_nonnull(cp);
	ck_assert(!cgroup_paths_root_lost(cp)); /* not looked for yet */
	ck_assert_int_eq(cgroup_paths_rescan(cp), -ENOENT);
	ck_assert(cgroup_paths_root_lost(cp));
	ck_assert_uint_eq(cgroup_paths_count(cp), 0);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, 1, 10 * min));
	ck_assert_ptr_null(cgroup_paths_lookup(cp, ino_of(tmpdir), 11 * min));
	ck_assert_uint_eq(cgroup_paths_count(cp), 0);

	/* It appears later: found once a rescan is due. */
	mkdir_ok(root);
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(root), 20 * min), "/");
	ck_assert_uint_eq(cgroup_paths_count(cp), 1);
	ck_assert(!cgroup_paths_root_lost(cp));

	/* Gone again (unmounted): the table keeps what it had, and says so. */
	rmdir_ok(root);
	ck_assert_int_eq(cgroup_paths_rescan(cp), -ENOENT);
	ck_assert(cgroup_paths_root_lost(cp));
	ck_assert_uint_eq(cgroup_paths_count(cp), 1);

	/* A root that is a file. */
	cgroup_paths_free(cp);
	touch(tpath("plain"));
	cp = cgroup_paths_new(tpath("plain"), 8, 100, min);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), -ENOTDIR);
	ck_assert_uint_eq(cgroup_paths_count(cp), 0);
	ck_assert_ptr_null(cgroup_paths_lookup(cp, ino_of(tpath("plain")), 1));
	cgroup_paths_free(cp);
}
END_TEST

START_TEST(test_v2_has_memory_reads_controllers)
{
	mkdir_ok(tpath("cg"));
	ck_assert(!cgroup_v2_has_memory(tpath("cg"))); /* no cgroup.controllers */
	{
		FILE *f = fopen(tpath("cg/cgroup.controllers"), "we");

		ck_assert_ptr_nonnull(f);
		fputs("cpuset cpu io memory hugetlb pids rdma misc\n", f);
		fclose(f);
	}
	ck_assert(cgroup_v2_has_memory(tpath("cg")));
	{
		FILE *f = fopen(tpath("cg/cgroup.controllers"), "we");

		ck_assert_ptr_nonnull(f);
		fputs("cpuset cpu memoryx io\n", f);
		fclose(f);
	}
	ck_assert(!cgroup_v2_has_memory(tpath("cg")));
	ck_assert_int_eq(truncate(tpath("cg/cgroup.controllers"), 0), 0); /* empty: nothing enabled */
	ck_assert(!cgroup_v2_has_memory(tpath("cg")));
	{
		FILE *f = fopen(tpath("cg/cgroup.controllers"), "we");

		ck_assert_ptr_nonnull(f);
		fputs("memory", f); /* no newline */
		fclose(f);
	}
	ck_assert(cgroup_v2_has_memory(tpath("cg")));
}
END_TEST

/* A hierarchy mounted inside this one (a tmpfs here, in a mount namespace of
 * this forked test's own) has ids of its own: none filed under this root.
 * Needs CAP_SYS_ADMIN, which CI's root has. */
START_TEST(test_paths_nested_mount)
{
	struct cgroup_paths *cp;
	uint64_t inner;

	if (unshare(CLONE_NEWNS) < 0) {
		fprintf(stderr, "test_paths_nested_mount: not run, no mount namespace (%m)\n");
		return;
	}
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	mkdir_ok(tpath("nested"));
	mkdir_ok(tpath("nested/a"));
	mkdir_ok(tpath("nested/unified"));
	ck_assert_int_eq(mount("none", tpath("nested/unified"), "tmpfs", 0, NULL), 0);
	mkdir_ok(tpath("nested/unified/inner"));
	inner = ino_of(tpath("nested/unified/inner"));
	cp = cgroup_paths_new(tpath("nested"), 16, 100, SEC);
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cgroup_paths_rescan(cp), 0);
	ck_assert_uint_eq(cgroup_paths_count(cp), 2); /* the root and a */
	ck_assert_str_eq(cgroup_paths_lookup(cp, ino_of(tpath("nested/a")), 1), "/a");
	ck_assert_ptr_null(cgroup_paths_lookup(cp, inner, 1));
	cgroup_paths_free(cp);
	ck_assert_int_eq(umount(tpath("nested/unified")), 0);
}
END_TEST

/* A kill's cgroup gone before its lookup: its parent's path and the name
 * the kernel gave, which comes from outside (a directory's name) and may
 * fill its field without a NUL. */
START_TEST(test_path_child)
{
	char buf[32], full[8] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };

	ck_assert_int_eq(cgroup_path_child("/", "docker-1.scope", 128, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/docker-1.scope");
	ck_assert_int_eq(cgroup_path_child("/system.slice", "x.service", 128, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/system.slice/x.service");
	ck_assert_int_eq(cgroup_path_child("/p", full, sizeof(full), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/p/abcdefgh");
	ck_assert_int_eq(cgroup_path_child("/p", "", 128, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(cgroup_path_child("/p", ".", 128, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(cgroup_path_child("/p", "..", 128, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(cgroup_path_child("/p", "a/b", 128, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(cgroup_path_child("", "a", 128, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(cgroup_path_child("/p", "...", 128, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/p/...");
	/* 31 bytes and the NUL fit; one more does not, and leaves nothing behind. */
	ck_assert_int_eq(cgroup_path_child("/0123456789", "0123456789012345678", 128, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(strlen(buf), 31);
	ck_assert_int_eq(cgroup_path_child("/0123456789", "01234567890123456789", 128, buf, sizeof(buf)),
			 -ENAMETOOLONG);
	ck_assert_str_eq(buf, "");
}
END_TEST

static Suite *cgroup_paths_suite(void)
{
	Suite *s = suite_create("cgroup_paths");
	TCase *tree = tcase_create("tree");

	/* Each test makes its own tree below tmpdir, so one case is enough. */
	tcase_add_unchecked_fixture(tree, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tree, test_paths_lookup);
	tcase_add_test(tree, test_paths_root_trailing_slash);
	tcase_add_test(tree, test_paths_rescan_rate_limit);
	tcase_add_test(tree, test_paths_lookup_urgent);
	tcase_add_test(tree, test_paths_removed_dir);
	tcase_add_test(tree, test_paths_negative_kept);
	tcase_add_test(tree, test_paths_max_depth);
	tcase_add_test(tree, test_paths_max_entries);
	tcase_add_test(tree, test_paths_missing_root);
	tcase_add_test(tree, test_paths_nested_mount);
	tcase_add_test(tree, test_v2_has_memory_reads_controllers);
	tcase_add_test(tree, test_path_child);
	suite_add_tcase(s, tree);
	return s;
}

int main(void)
{
	return suite_main_run(cgroup_paths_suite());
}
