/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_mounts.h"
#include "fileio.h"
#include "fixture.h"
#include "strbuf.h"

static char *load_fixture(const char *name)
{
	char path[512], *text = NULL;

	snprintf(path, sizeof(path), "%s/mountinfo/%s", FIXTURES_DIR, name);
	ck_assert_msg(read_full_file(path, 1 << 20, &text, NULL) == 0, "cannot read %s", path);
	return text;
}

static void parse_fixture(const char *name, struct cgroup_mounts *m)
{
	_cleanup_free_ char *text = load_fixture(name);

	ck_assert_int_eq(cgroup_mounts_parse(text, m), 0);
}

static bool yes(const char *mountpoint)
{
	return true;
}

static bool no(const char *mountpoint)
{
	return false;
}

static void assert_mount(const struct cgroup_mounts *m, size_t i, const char *path, bool v2, bool whole)
{
	ck_assert_uint_lt(i, m->n);
	ck_assert_str_eq(m->mount[i].path, path);
	ck_assert_int_eq(m->mount[i].v2, v2);
	ck_assert_int_eq(m->mount[i].whole, whole);
}

START_TEST(test_hybrid)
{
	struct cgroup_mounts m;
	enum cgroup_memory_mode mode;

	parse_fixture("hybrid", &m);
	/* Only the memory hierarchy of the v1 ones, and the cgroup2 one. */
	ck_assert_uint_eq(m.n, 2);
	assert_mount(&m, 0, "/sys/fs/cgroup/memory", false, true);
	assert_mount(&m, 1, "/sys/fs/cgroup/unified", true, true);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, no, &mode), "/sys/fs/cgroup/memory");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V1);
	ck_assert_str_eq(cgroup_mounts_unified(&m), "/sys/fs/cgroup/unified");
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, yes, &mode), "/sys/fs/cgroup/unified");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V2);
	cgroup_mounts_done(&m);
	ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(test_v2_and_v1_only)
{
	struct cgroup_mounts m;
	enum cgroup_memory_mode mode;

	parse_fixture("v2", &m);
	ck_assert_uint_eq(m.n, 1);
	assert_mount(&m, 0, "/sys/fs/cgroup", true, true);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, yes, &mode), "/sys/fs/cgroup");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V2);
	/* The cgroup2 tree without memory: nothing has it. */
	ck_assert_ptr_null(cgroup_mounts_memory_root(&m, no, &mode));
	ck_assert_int_eq(mode, CGROUP_MEMORY_NONE);
	cgroup_mounts_done(&m);

	parse_fixture("v1", &m);
	ck_assert_uint_eq(m.n, 2);
	assert_mount(&m, 0, "/sys/fs/cgroup/memory", false, true);
	assert_mount(&m, 1, "/home/memory-bind", false, false); /* root "/memory": a bind mount of a subtree */
	ck_assert_ptr_null(cgroup_mounts_unified(&m));
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, yes, &mode), "/sys/fs/cgroup/memory");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V1);
	cgroup_mounts_done(&m);

	parse_fixture("none", &m);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_ptr_null(cgroup_mounts_memory_root(&m, yes, &mode));
	ck_assert_int_eq(mode, CGROUP_MEMORY_NONE);
	ck_assert_ptr_null(cgroup_mounts_unified(&m));
	cgroup_mounts_done(&m);
}
END_TEST

/* Bind mounts of a subtree come first in the file (a container's view, set
 * up before the host's hierarchies were remounted), and whole hierarchies are
 * mounted twice: the first whole one wins for both versions. */
START_TEST(test_duplicate_mounts)
{
	struct cgroup_mounts m;
	enum cgroup_memory_mode mode;

	parse_fixture("duplicates", &m);
	ck_assert_uint_eq(m.n, 6);
	assert_mount(&m, 0, "/run/app/cgroup", true, false);
	assert_mount(&m, 1, "/run/app/memory", false, false);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, yes, &mode), "/sys/fs/cgroup");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V2);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, no, &mode), "/sys/fs/cgroup/memory-v1");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V1);
	ck_assert_str_eq(cgroup_mounts_unified(&m), "/sys/fs/cgroup");
	cgroup_mounts_done(&m);

	/* With only the bind mounts, they are what there is. */
	ck_assert_int_eq(cgroup_mounts_parse("45 22 0:27 /a /run/app/cgroup rw - cgroup2 cgroup2 rw\n"
					     "46 22 0:31 /docker/abc /run/app/memory rw - cgroup cgroup rw,memory\n",
					     &m),
			 0);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, no, &mode), "/run/app/memory");
	ck_assert_str_eq(cgroup_mounts_unified(&m), "/run/app/cgroup");
	cgroup_mounts_done(&m);
}
END_TEST

/* A cgroup2 tree mounted inside the v1 memory hierarchy. */
START_TEST(test_v2_nested_under_v1)
{
	struct cgroup_mounts m;
	enum cgroup_memory_mode mode;

	parse_fixture("nested", &m);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, no, &mode), "/sys/fs/cgroup/memory");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V1);
	ck_assert_str_eq(cgroup_mounts_unified(&m), "/sys/fs/cgroup/memory/unified");
	cgroup_mounts_done(&m);
}
END_TEST

/* Lines of 20 KiB (an overlay's lowerdir list, a v1 release_agent): read
 * whole. A mount point of PATH_MAX or more cannot be opened: skipped. */
START_TEST(test_long_lines)
{
	struct cgroup_mounts m;
	enum cgroup_memory_mode mode;

	parse_fixture("long-lines", &m);
	ck_assert_uint_eq(m.n, 2);
	assert_mount(&m, 0, "/sys/fs/cgroup/memory", false, true);
	assert_mount(&m, 1, "/sys/fs/cgroup/unified", true, true);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, no, &mode), "/sys/fs/cgroup/memory");
	cgroup_mounts_done(&m);

	parse_fixture("garbage", &m);
	ck_assert_uint_eq(m.n, 1);
	assert_mount(&m, 0, "/sys/fs/cgroup/memory", false, true);
	cgroup_mounts_done(&m);
}
END_TEST

START_TEST(test_escaped)
{
	struct cgroup_mounts m;

	parse_fixture("escaped", &m);
	ck_assert_uint_eq(m.n, 2);
	assert_mount(&m, 0, "/run/my cgroup\tv2\\x", true, true);
	assert_mount(&m, 1, "/srv/legacy memory", false, true);
	cgroup_mounts_done(&m);
}
END_TEST

START_TEST(test_bounded)
{
	struct cgroup_mounts m;
	struct strbuf sb;
	enum cgroup_memory_mode mode;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; i < CGROUP_MOUNTS_MAX + 5; i++)
		strbuf_printf(&sb, "%zu 1 0:%zu / /m/%zu rw - cgroup cgroup rw,memory\n", i + 10, i + 10, i);
	strbuf_puts(&sb, "99 1 0:99 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	ck_assert(!strbuf_failed(&sb));
	ck_assert_int_eq(cgroup_mounts_parse(sb.data, &m), 0);
	ck_assert_uint_eq(m.n, CGROUP_MOUNTS_MAX);
	ck_assert_uint_eq(m.dropped, 6);
	ck_assert_str_eq(cgroup_mounts_memory_root(&m, yes, &mode), "/m/0");
	ck_assert_int_eq(mode, CGROUP_MEMORY_V1);
	cgroup_mounts_done(&m);
	strbuf_free(&sb);

	ck_assert_int_eq(cgroup_mounts_parse("", &m), 0);
	ck_assert_uint_eq(m.n, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup_mounts");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_hybrid);
	tcase_add_test(tc, test_v2_and_v1_only);
	tcase_add_test(tc, test_duplicate_mounts);
	tcase_add_test(tc, test_v2_nested_under_v1);
	tcase_add_test(tc, test_long_lines);
	tcase_add_test(tc, test_escaped);
	tcase_add_test(tc, test_bounded);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
