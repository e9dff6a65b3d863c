/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup_find_memory_root() on mountinfo fixtures: v2, hybrid and v1 hosts,
 * none, escaped mount points, garbage and truncated input. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_mounts.h"
#include "cgroup_paths.h"
#include "fileio.h"
#include "fixture.h"

#include "suite_main.h"

/* ---- cgroup_find_memory_root ---------------------------------------- */

/* The test's answer to "does this cgroup2 mount have the memory controller":
 * the mount points listed in memory_mounts (NULL-terminated) do. Every
 * question is logged. */
static const char *const *memory_mounts;
static char asked[16][512];
static size_t n_asked;

static void log_question(const char *mountpoint)
{
	ck_assert_uint_lt(n_asked, 16);
	snprintf(asked[n_asked++], sizeof(asked[0]), "%s", mountpoint);
}

static bool listed_have_memory(const char *mountpoint)
{
	const char *const *m;

	log_question(mountpoint);
	for (m = memory_mounts; m && *m; m++)
		if (strcmp(*m, mountpoint) == 0)
			return true;
	return false;
}

static bool all_have_memory(const char *mountpoint)
{
	log_question(mountpoint);
	return true;
}

static void reset_questions(const char *const *mounts)
{
	memory_mounts = mounts;
	n_asked = 0;
	memset(asked, 0, sizeof(asked));
}

/* Not inlined: gcc -O3 then mistakes the result for a pointer into its local (-Wdangling-pointer). */
__attribute__((noinline)) static char *load_fixture(const char *name)
{
	char path[512], *text = NULL;

	snprintf(path, sizeof(path), "%s/mountinfo/%s", FIXTURES_DIR, name);
	ck_assert_msg(read_full_file(path, 1 << 20, &text, NULL) == 0, "cannot read %s", path);
	return text;
}

/* Runs the parser on a fixture; returns the mode, root in a static buffer. */
static enum cgroup_memory_mode find_in(const char *fixture, bool (*cb)(const char *), const char **root)
{
	static char buf[4096];
	char *text = load_fixture(fixture);
	enum cgroup_memory_mode mode;

	memset(buf, 0, sizeof(buf));
	mode = cgroup_find_memory_root(text, buf, sizeof(buf), cb);
	free(text);
	*root = buf;
	return mode;
}

START_TEST(test_v2_host)
{
	static const char *const yes[] = { "/sys/fs/cgroup", NULL };
	static const char *const no[] = { NULL };
	const char *root;

	reset_questions(yes);
	ck_assert_int_eq(find_in("v2", listed_have_memory, &root), CGROUP_MEMORY_V2);
	ck_assert_str_eq(root, "/sys/fs/cgroup");
	ck_assert_uint_eq(n_asked, 1);
	ck_assert_str_eq(asked[0], "/sys/fs/cgroup");

	/* memory not enabled on the only hierarchy, no v1 one: nothing. */
	reset_questions(no);
	ck_assert_int_eq(find_in("v2", listed_have_memory, &root), CGROUP_MEMORY_NONE);
	ck_assert_uint_eq(n_asked, 1);
	ck_assert_str_eq(asked[0], "/sys/fs/cgroup");

	/* No callback: cgroup2 mounts cannot be confirmed. */
	ck_assert_int_eq(find_in("v2", NULL, &root), CGROUP_MEMORY_NONE);
}
END_TEST

/* Recorded from a real hybrid host: v1 controllers under /sys/fs/cgroup/X,
 * an empty cgroup2 at /sys/fs/cgroup/unified. */
START_TEST(test_hybrid_host)
{
	static const char *const none[] = { NULL };
	static const char *const unified[] = { "/sys/fs/cgroup/unified", NULL };
	const char *root;

	reset_questions(none);
	ck_assert_int_eq(find_in("hybrid", listed_have_memory, &root), CGROUP_MEMORY_V1);
	ck_assert_str_eq(root, "/sys/fs/cgroup/memory");
	/* Only cgroup2 mounts are asked about, and the tmpfs at /sys/fs/cgroup is not one. */
	ck_assert_uint_eq(n_asked, 1);
	ck_assert_str_eq(asked[0], "/sys/fs/cgroup/unified");

	/* If the unified hierarchy had memory, it would win over v1, although
	 * it comes later in the file. */
	reset_questions(unified);
	ck_assert_int_eq(find_in("hybrid", listed_have_memory, &root), CGROUP_MEMORY_V2);
	ck_assert_str_eq(root, "/sys/fs/cgroup/unified");

	ck_assert_int_eq(find_in("hybrid", NULL, &root), CGROUP_MEMORY_V1);
	ck_assert_str_eq(root, "/sys/fs/cgroup/memory");
}
END_TEST

START_TEST(test_v1_host)
{
	const char *root;

	reset_questions(NULL);
	ck_assert_int_eq(find_in("v1", all_have_memory, &root), CGROUP_MEMORY_V1);
	/* The first memory hierarchy, not the later bind mount of it; commas in
	 * other mount points ("cpu,cpuacct") do not confuse the option match. */
	ck_assert_str_eq(root, "/sys/fs/cgroup/memory");
	ck_assert_uint_eq(n_asked, 0);
}
END_TEST

START_TEST(test_no_cgroups)
{
	const char *root;

	/* tmpfs mounts at /memory with source "memory" and option "memory", or
	 * with source "cgroup2", are not cgroups. */
	reset_questions(NULL);
	ck_assert_int_eq(find_in("none", all_have_memory, &root), CGROUP_MEMORY_NONE);
	ck_assert_uint_eq(n_asked, 0);
}
END_TEST

START_TEST(test_escaped_mountpoint)
{
	static const char *const none[] = { NULL };
	const char *root;

	/* \040 space, \011 tab, \134 backslash: unescaped before the callback
	 * is asked and in the root returned. */
	reset_questions(NULL);
	ck_assert_int_eq(find_in("escaped", all_have_memory, &root), CGROUP_MEMORY_V2);
	ck_assert_str_eq(root, "/run/my cgroup\tv2\\x");
	ck_assert_uint_eq(n_asked, 1);
	ck_assert_str_eq(asked[0], "/run/my cgroup\tv2\\x");

	reset_questions(none);
	ck_assert_int_eq(find_in("escaped", listed_have_memory, &root), CGROUP_MEMORY_V1);
	ck_assert_str_eq(root, "/srv/legacy memory");
}
END_TEST

START_TEST(test_garbage_lines)
{
	const char *root;

	/* Empty, truncated, binary and malformed lines, and a mount point too
	 * long for open() (5 KiB), are skipped; the valid last line (no trailing
	 * newline) still counts. None of the broken cgroup2 lines reaches the
	 * callback. */
	reset_questions(NULL);
	ck_assert_int_eq(find_in("garbage", all_have_memory, &root), CGROUP_MEMORY_V1);
	ck_assert_str_eq(root, "/sys/fs/cgroup/memory");
	ck_assert_uint_eq(n_asked, 0);
}
END_TEST

/* Feeds every prefix of a fixture (as a read cut short would): the answer
 * must flip from NONE to mode exactly once the needle is complete. */
static void check_prefixes(const char *fixture, const char *needle, bool (*cb)(const char *),
			   enum cgroup_memory_mode mode, const char *want_root)
{
	char *text = load_fixture(fixture);
	const char *at = strstr(text, needle);
	/* An offset, not a pointer, so nothing points into text once it is freed. */
	size_t len, total = strlen(text), boundary = at ? (size_t)(at - text) + strlen(needle) : 0;

	ck_assert_msg(at != NULL, "%s not in %s", needle, fixture);
	for (len = 0; len <= total; len++) {
		char *prefix = strndup(text, len), root[256] = "";
		enum cgroup_memory_mode got;

		ck_assert_ptr_nonnull(prefix);
		reset_questions(memory_mounts);
		got = cgroup_find_memory_root(prefix, root, sizeof(root), cb);
		free(prefix);
		ck_assert_msg(got == (len >= boundary ? mode : CGROUP_MEMORY_NONE), "%s cut at %zu/%zu: mode %d",
			      fixture, len, total, (int)got);
		if (got != CGROUP_MEMORY_NONE)
			ck_assert_str_eq(root, want_root);
	}
	free(text);
}

START_TEST(test_truncated_input)
{
	static const char *const none[] = { NULL };
	static const char *const v2[] = { "/sys/fs/cgroup", NULL };

	/* v1: "rw,memor" is not the memory controller. */
	reset_questions(none);
	check_prefixes("hybrid", "cgroup cgroup rw,memory", listed_have_memory, CGROUP_MEMORY_V1, "/sys/fs/cgroup/memory");
	/* v2: the line counts once all of its fields are there. */
	reset_questions(v2);
	check_prefixes("v2", "- cgroup2 cgroup2 r", listed_have_memory, CGROUP_MEMORY_V2, "/sys/fs/cgroup");
}
END_TEST

START_TEST(test_inline_cases)
{
	static const char *const second[] = { "/sys/fs/cgroup/nested", NULL };
	enum { SMALL = 8 };
	char root[64];

	reset_questions(NULL);
	ck_assert_int_eq(cgroup_find_memory_root("", root, sizeof(root), all_have_memory), CGROUP_MEMORY_NONE);
	ck_assert_int_eq(cgroup_find_memory_root("\n\n\n", root, sizeof(root), all_have_memory),
			 CGROUP_MEMORY_NONE);
	ck_assert_uint_eq(n_asked, 0);

	/* Two cgroup2 mounts: the one with memory wins, in any position. */
	reset_questions(second);
	ck_assert_int_eq(cgroup_find_memory_root("1 0 0:1 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
						 "2 1 0:2 / /sys/fs/cgroup/nested rw - cgroup2 cgroup2 rw\n",
						 root, sizeof(root), listed_have_memory),
			 CGROUP_MEMORY_V2);
	ck_assert_str_eq(root, "/sys/fs/cgroup/nested");
	ck_assert_uint_eq(n_asked, 2);

	/* A v2 mount without memory before a v1 memory one. */
	reset_questions(NULL);
	ck_assert_int_eq(cgroup_find_memory_root("1 0 0:1 / /a rw - cgroup2 cgroup2 rw\n"
						 "2 0 0:2 / /b rw shared:3 master:4 - cgroup cgroup rw,memory\n",
						 root, sizeof(root), listed_have_memory),
			 CGROUP_MEMORY_V1);
	ck_assert_str_eq(root, "/b");

	/* Option matching is by whole option. */
	ck_assert_int_eq(cgroup_find_memory_root("2 0 0:2 / /b rw - cgroup cgroup memory\n", root, sizeof(root),
						 NULL),
			 CGROUP_MEMORY_V1);
	ck_assert_int_eq(cgroup_find_memory_root("2 0 0:2 / /b rw - cgroup cgroup memory,rw\n", root,
						 sizeof(root), NULL),
			 CGROUP_MEMORY_V1);
	ck_assert_int_eq(cgroup_find_memory_root("2 0 0:2 / /b rw - cgroup cgroup rw,memory2,xmemory,memor\n",
						 root, sizeof(root), NULL),
			 CGROUP_MEMORY_NONE);
	ck_assert_int_eq(cgroup_find_memory_root("2 0 0:2 / /b rw - cgroup cgroup ,,\n", root, sizeof(root), NULL),
			 CGROUP_MEMORY_NONE);

	/* Fewer than five fields before " - ": the line is malformed, not read
	 * with its fields shifted (the fstype taken for the mount point). Found
	 * by fuzz_mountinfo (tests/fixtures/fuzz-regressions/mountinfo). */
	ck_assert_int_eq(cgroup_find_memory_root("1 - 1 , - m cgroup2 / m\n", root, sizeof(root), all_have_memory),
			 CGROUP_MEMORY_NONE);
	ck_assert_int_eq(cgroup_find_memory_root("2 0 / /b - x cgroup cgroup memory\n", root, sizeof(root), NULL),
			 CGROUP_MEMORY_NONE);

	/* A root buffer too small: cut, NUL-terminated, nothing written past it. */
	{
		char guard[SMALL + 8];

		memset(guard, 'G', sizeof(guard));
		ck_assert_int_eq(cgroup_find_memory_root("1 0 0:1 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory",
							 guard, SMALL, NULL),
				 CGROUP_MEMORY_V1);
		ck_assert_str_eq(guard, "/sys/fs");
		ck_assert_int_eq(guard[SMALL], 'G');
	}
}
END_TEST

static Suite *cgroup_memory_root_suite(void)
{
	Suite *s = suite_create("cgroup_memory_root");
	TCase *mi = tcase_create("mountinfo");

	tcase_add_test(mi, test_v2_host);
	tcase_add_test(mi, test_hybrid_host);
	tcase_add_test(mi, test_v1_host);
	tcase_add_test(mi, test_no_cgroups);
	tcase_add_test(mi, test_escaped_mountpoint);
	tcase_add_test(mi, test_garbage_lines);
	tcase_add_test(mi, test_truncated_input);
	tcase_add_test(mi, test_inline_cases);
	suite_add_tcase(s, mi);
	return s;
}

int main(void)
{
	return suite_main_run(cgroup_memory_root_suite());
}
