/* SPDX-License-Identifier: GPL-2.0 */
/* daemon/cgroup_hierarchy.c on temporary trees, with a mountinfo file of the
 * test's own naming them. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_hierarchy.h"
#include "fixture.h"

#define SEC 1000000ULL

static char tmpdir[256];

static void tmpdir_setup(void)
{
	fixture_tmpdir_make(tmpdir, sizeof(tmpdir), "test_cgroup_hierarchy");
}

static void tmpdir_teardown(void)
{
	fixture_tmpdir_remove(tmpdir);
}

#define tpath(...) fixture_path(tmpdir, __VA_ARGS__)
#define mkdir_ok fixture_mkdir

static uint64_t ino_of(const char *path)
{
	struct stat st;

	ck_assert_msg(stat(path, &st) == 0, "stat %s: %s", path, strerror(errno));
	return (uint64_t)st.st_ino;
}

/* Mount points below tmpdir, escaped as the kernel does (space: \040). */
static void write_mountinfo(const char *v1_memory, const char *v2)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/mountinfo", tmpdir);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
	if (v1_memory) {
		fprintf(f, "34 26 0:31 / ");
		for (const char *p = tpath("%s", v1_memory); *p; p++)
			*p == ' ' ? fputs("\\040", f) : fputc(*p, f);
		fprintf(f, " rw,relatime - cgroup cgroup rw,memory\n");
	}
	if (v2) {
		fprintf(f, "40 26 0:37 / ");
		for (const char *p = tpath("%s", v2); *p; p++)
			*p == ' ' ? fputs("\\040", f) : fputc(*p, f);
		fprintf(f, " rw,relatime - cgroup2 cgroup2 rw\n");
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* A cgroup2 mount "has memory" when its name says so. */
static bool named_memory(const char *mountpoint)
{
	return strstr(mountpoint, "memory") != NULL;
}

static struct cgroup_hierarchy *open_hierarchy(void)
{
	struct cgroup_hierarchy *h = NULL;
	char path[1024];

	snprintf(path, sizeof(path), "%s/mountinfo", tmpdir);
	ck_assert_int_eq(cgroup_hierarchy_new(path, named_memory, &h), 0);
	ck_assert_ptr_nonnull(h);
	return h;
}

START_TEST(test_v2_shared_table)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = NULL;
	struct cgroup_hierarchy_roots roots;
	char buf[256];
	int a, b, c;

	mkdir_ok(tpath("v2 memory"));
	mkdir_ok(tpath("v2 memory/system.slice"));
	mkdir_ok(tpath("v2 memory/system.slice/app.service"));
	write_mountinfo(NULL, "v2 memory");
	h = open_hierarchy();
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_int_eq(roots.error, 0);
	ck_assert_int_eq(roots.mode, CGROUP_MEMORY_V2);
	ck_assert_str_eq(roots.memory, tpath("v2 memory"));
	ck_assert_str_eq(roots.unified, tpath("v2 memory"));

	/* The event channel and reclaim: one table, the larger bound. */
	a = cgroup_hierarchy_table_acquire(h, NULL, 4);
	b = cgroup_hierarchy_table_acquire(h, NULL, 100);
	ck_assert_int_ge(a, 0);
	ck_assert_int_eq(b, a);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tpath("v2 memory/system.slice/app.service")), SEC, buf,
						 sizeof(buf)),
			 0);
	ck_assert_str_eq(buf, "/system.slice/app.service");
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tpath("v2 memory")), SEC, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/");
	/* Cut to the buffer, or only asked about. */
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tpath("v2 memory/system.slice")), SEC, buf, 5), 0);
	ck_assert_str_eq(buf, "/sys");
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tpath("v2 memory/system.slice")), SEC, NULL, 0), 0);
	/* Unknown ids and handles. */
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tmpdir), SEC, buf, sizeof(buf)), -ENOENT);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, -1, 1, SEC, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, CGROUP_HIERARCHY_TABLES_MAX, 1, SEC, buf, sizeof(buf)), -ENOENT);

	/* A configured root has a table of its own, paths below it. */
	c = cgroup_hierarchy_table_acquire(h, tpath("v2 memory/system.slice"), 100);
	ck_assert_int_ge(c, 0);
	ck_assert_int_ne(c, a);
	ck_assert_int_eq(cgroup_hierarchy_table_acquire(h, tpath("v2 memory/system.slice"), 10), c);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, c, ino_of(tpath("v2 memory/system.slice/app.service")), SEC, buf,
						 sizeof(buf)),
			 0);
	ck_assert_str_eq(buf, "/app.service");

	/* Released by every user: the slot is free again. */
	cgroup_hierarchy_table_release(h, c);
	cgroup_hierarchy_table_release(h, c);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, c, ino_of(tpath("v2 memory/system.slice/app.service")), SEC, buf,
						 sizeof(buf)),
			 -ENOENT);
	cgroup_hierarchy_table_release(h, a);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tpath("v2 memory")), SEC, buf, sizeof(buf)), 0);
	cgroup_hierarchy_table_release(h, b);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, a, ino_of(tpath("v2 memory")), SEC, buf, sizeof(buf)), -ENOENT);
	cgroup_hierarchy_table_release(NULL, 0);
}
END_TEST

/* This host's layout: memory in v1, an empty cgroup2 tree for pressure. Ids
 * resolve in the memory tree only. */
START_TEST(test_hybrid)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = NULL;
	struct cgroup_hierarchy_roots roots;
	char buf[256];
	int t;

	mkdir_ok(tpath("memory"));
	mkdir_ok(tpath("memory/user.slice"));
	mkdir_ok(tpath("unified"));
	mkdir_ok(tpath("unified/user.slice"));
	write_mountinfo("memory", "unified");
	h = open_hierarchy();
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_int_eq(roots.mode, CGROUP_MEMORY_V1);
	ck_assert_str_eq(roots.memory, tpath("memory"));
	ck_assert_str_eq(roots.unified, tpath("unified"));
	t = cgroup_hierarchy_table_acquire(h, NULL, 100);
	ck_assert_int_ge(t, 0);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("memory/user.slice")), SEC, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/user.slice");
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("unified/user.slice")), 2 * SEC, buf, sizeof(buf)),
			 -ENOENT);
}
END_TEST

/* The memory hierarchy moves (unmounted, mounted elsewhere): the first miss
 * that cannot open the old root reads mountinfo again and follows it. */
START_TEST(test_remount_followed)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = NULL;
	struct cgroup_hierarchy_roots roots;
	char buf[256];
	int t;

	mkdir_ok(tpath("old"));
	mkdir_ok(tpath("old/a"));
	write_mountinfo("old", NULL);
	h = open_hierarchy();
	t = cgroup_hierarchy_table_acquire(h, NULL, 100);
	ck_assert_int_ge(t, 0);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("old/a")), 100 * SEC, buf, sizeof(buf)), 0);

	ck_assert_int_eq(rename(tpath("old"), tpath("gone")), 0);
	mkdir_ok(tpath("new"));
	mkdir_ok(tpath("new/b"));
	write_mountinfo("new", NULL);
	/* Within the rescan interval nothing is read. */
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("new/b")), 100 * SEC + 1, buf, sizeof(buf)),
			 -ENOENT);
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_str_eq(roots.memory, tpath("old"));
	/* Then the rescan finds no root, mountinfo names the new one. */
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("new/b")), 102 * SEC, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/b");
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_str_eq(roots.memory, tpath("new"));
}
END_TEST

/* No memory hierarchy at start (mounted later): misses check mountinfo, at
 * most every 10 s; an explicit refresh (SIGHUP) at once. */
START_TEST(test_mounted_later)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = NULL;
	struct cgroup_hierarchy_roots roots;
	char buf[256];
	int t;

	write_mountinfo(NULL, "unified");
	mkdir_ok(tpath("unified"));
	h = open_hierarchy();
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_int_eq(roots.mode, CGROUP_MEMORY_NONE);
	ck_assert_str_eq(roots.memory, "");
	ck_assert_str_eq(roots.unified, tpath("unified"));
	t = cgroup_hierarchy_table_acquire(h, NULL, 100);
	ck_assert_int_ge(t, 0);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, 12345, 100 * SEC, buf, sizeof(buf)), -ENOENT);

	mkdir_ok(tpath("memory"));
	mkdir_ok(tpath("memory/x"));
	write_mountinfo("memory", "unified");
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("memory/x")), 105 * SEC, buf, sizeof(buf)),
			 -ENOENT);
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("memory/x")), 110 * SEC, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x");

	/* Unmounted, then a reload. */
	write_mountinfo(NULL, NULL);
	ck_assert_int_eq(cgroup_hierarchy_refresh(h), 0);
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_int_eq(roots.mode, CGROUP_MEMORY_NONE);
	ck_assert_str_eq(roots.unified, "");
	ck_assert_int_eq(cgroup_hierarchy_lookup(h, t, ino_of(tpath("memory/x")), 111 * SEC, buf, sizeof(buf)),
			 -ENOENT);

	/* An unreadable mountinfo keeps what was found and says why. */
	write_mountinfo("memory", NULL);
	ck_assert_int_eq(cgroup_hierarchy_refresh(h), 0);
	ck_assert_int_eq(unlink(tpath("mountinfo")), 0);
	ck_assert_int_eq(cgroup_hierarchy_refresh(h), -ENOENT);
	cgroup_hierarchy_roots(h, &roots);
	ck_assert_int_eq(roots.error, -ENOENT);
	ck_assert_int_eq(roots.mode, CGROUP_MEMORY_V1);
	ck_assert_str_eq(roots.memory, tpath("memory"));
}
END_TEST

START_TEST(test_tables_bounded)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = NULL;
	int t[CGROUP_HIERARCHY_TABLES_MAX];
	size_t i;

	write_mountinfo(NULL, NULL);
	h = open_hierarchy();
	for (i = 0; i < CGROUP_HIERARCHY_TABLES_MAX; i++) {
		t[i] = cgroup_hierarchy_table_acquire(h, tpath("root%zu", i), 10);
		ck_assert_int_eq(t[i], (int)i);
	}
	ck_assert_int_eq(cgroup_hierarchy_table_acquire(h, tpath("one-more"), 10), -ENOSPC);
	ck_assert_int_eq(cgroup_hierarchy_table_acquire(h, NULL, 10), -ENOSPC);
	/* An existing root still shares. */
	ck_assert_int_eq(cgroup_hierarchy_table_acquire(h, tpath("root3"), 10), 3);
	cgroup_hierarchy_table_release(h, 5);
	ck_assert_int_eq(cgroup_hierarchy_table_acquire(h, NULL, 10), 5);
}
END_TEST

/* The event consumer thread and the main thread at once: ASan and the
 * answers tell whether a rescan frees a path still being copied. */
struct racer {
	struct cgroup_hierarchy *h;
	int table;
	uint64_t id;
	unsigned wrong;
};

static void *race_lookups(void *p)
{
	struct racer *r = p;
	char buf[256];

	for (uint64_t now = 1; now <= 2000; now++) {
		if (cgroup_hierarchy_lookup(r->h, r->table, r->id, now * SEC, buf, sizeof(buf)) < 0 ||
		    strcmp(buf, "/a") != 0)
			r->wrong++;
		(void)cgroup_hierarchy_lookup(r->h, r->table, UINT64_MAX - now, now * SEC, buf, sizeof(buf)); /* a miss: rescans */
	}
	return NULL;
}

START_TEST(test_two_threads)
{
	_cleanup_(cgroup_hierarchy_freep) struct cgroup_hierarchy *h = NULL;
	struct racer a, b;
	pthread_t ta, tb;

	mkdir_ok(tpath("memory"));
	mkdir_ok(tpath("memory/a"));
	write_mountinfo("memory", NULL);
	h = open_hierarchy();
	a = (struct racer){ .h = h, .table = cgroup_hierarchy_table_acquire(h, NULL, 100), .id = ino_of(tpath("memory/a")) };
	b = a;
	ck_assert_int_ge(a.table, 0);
	ck_assert_int_eq(pthread_create(&ta, NULL, race_lookups, &a), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, race_lookups, &b), 0);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(cgroup_hierarchy_refresh(h), 0);
	ck_assert_int_eq(pthread_join(ta, NULL), 0);
	ck_assert_int_eq(pthread_join(tb, NULL), 0);
	ck_assert_uint_eq(a.wrong, 0);
	ck_assert_uint_eq(b.wrong, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup_hierarchy");
	TCase *tc = tcase_create("hierarchy");

	tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, test_v2_shared_table);
	tcase_add_test(tc, test_hybrid);
	tcase_add_test(tc, test_remount_followed);
	tcase_add_test(tc, test_mounted_later);
	tcase_add_test(tc, test_tables_bounded);
	tcase_add_test(tc, test_two_threads);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
