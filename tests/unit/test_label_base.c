/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "fixture.h"
#include "label_base.h"

/* A cgroup made again under its path: the new id is exported on top of the
 * old one's totals, the old id itself gets nothing added. */
START_TEST(test_new_row_on_top_of_old)
{
	struct label_bases b;
	uint64_t old_total[2] = { 83, 37 }, t[2] = { 81, 31 }, own[2] = { 83, 37 };

	label_bases_init(&b, 16);
	ck_assert(!label_bases_add(&b, "/svc", 2, t, 2, 10));
	ck_assert_uint_eq(t[0], 81);
	ck_assert_int_eq(label_bases_retire(&b, 1, "/svc", old_total, 2, 10), 0);
	ck_assert(label_bases_add(&b, "/svc", 2, t, 2, 20));
	ck_assert_uint_eq(t[0], 164);
	ck_assert_uint_eq(t[1], 68);
	ck_assert(!label_bases_add(&b, "/svc", 1, own, 2, 20));
	ck_assert_uint_eq(own[0], 83);
	ck_assert(!label_bases_add(&b, "/other", 2, own, 2, 20));
	label_bases_done(&b);
}
END_TEST

/* Retiring the same row again (its map entry outlived the first retirement)
 * replaces its totals instead of counting them twice. */
START_TEST(test_retire_again_replaces)
{
	struct label_bases b;
	uint64_t first[1] = { 10 }, again[1] = { 12 }, t[1] = { 0 };

	label_bases_init(&b, 16);
	ck_assert_int_eq(label_bases_retire(&b, 1, "/a", first, 1, 1), 0);
	ck_assert_int_eq(label_bases_retire(&b, 1, "/a", again, 1, 2), 0);
	ck_assert(label_bases_add(&b, "/a", 3, t, 1, 3));
	ck_assert_uint_eq(t[0], 12);
	ck_assert_uint_eq(b.n, 1);
	label_bases_done(&b);
}
END_TEST

/* Three incarnations under one path: the third is exported on top of both. */
START_TEST(test_three_incarnations)
{
	struct label_bases b;
	uint64_t one[1] = { 5 }, two[1] = { 7 }, t[1] = { 1 };

	label_bases_init(&b, 16);
	ck_assert_int_eq(label_bases_retire(&b, 1, "/a", one, 1, 1), 0);
	ck_assert_int_eq(label_bases_retire(&b, 2, "/a", two, 1, 2), 0);
	ck_assert(label_bases_add(&b, "/a", 3, t, 1, 3));
	ck_assert_uint_eq(t[0], 13);
	label_bases_done(&b);
}
END_TEST

START_TEST(test_expire_and_bound)
{
	struct label_bases b;
	uint64_t v[1] = { 1 }, t[1] = { 0 };

	label_bases_init(&b, 2);
	ck_assert_int_eq(label_bases_retire(&b, 1, "/a", v, 1, 100), 0);
	ck_assert_int_eq(label_bases_retire(&b, 2, "/b", v, 1, 200), 0);
	/* Full: the least recently used (/a) goes. */
	ck_assert_int_eq(label_bases_retire(&b, 3, "/c", v, 1, 300), 0);
	ck_assert_uint_eq(b.n, 2);
	ck_assert(!label_bases_add(&b, "/a", 9, t, 1, 400));
	ck_assert(label_bases_add(&b, "/c", 9, t, 1, 400));
	/* /b was last used at 200, /c at 400. */
	label_bases_expire(&b, 300);
	ck_assert_uint_eq(b.n, 1);
	ck_assert(!label_bases_add(&b, "/b", 9, t, 1, 500));
	ck_assert(label_bases_add(&b, "/c", 9, t, 1, 500));
	ck_assert_int_eq(label_bases_retire(&b, 4, "/d", v, LABEL_BASE_COUNTERS + 1, 600), -EINVAL);
	label_bases_done(&b);
}
END_TEST

static Suite *label_base_suite(void)
{
	Suite *s = suite_create("label_base");
	TCase *tc = tcase_create("label_base");

	tcase_add_test(tc, test_new_row_on_top_of_old);
	tcase_add_test(tc, test_retire_again_replaces);
	tcase_add_test(tc, test_three_incarnations);
	tcase_add_test(tc, test_expire_and_bound);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fixture_run_suite(label_base_suite());
}
