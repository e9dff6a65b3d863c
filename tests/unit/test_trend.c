/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "trend.h"

#define SEC UINT64_C(1000000)

/* 8 MiB/s from 10 MiB, one point a second for 20 s: the slope is the rate,
 * the ETA to 256 MiB the arithmetic of the line. */
START_TEST(test_steady_rise)
{
	struct trend_point pts[64];
	struct trend t;
	double slope, eta;

	trend_init(&t, pts, 64);
	for (uint64_t i = 0; i <= 20; i++)
		trend_add(&t, 60 * SEC, 1000 * SEC + i * SEC, (10.0 + 8.0 * (double)i) * 1048576);
	ck_assert(trend_slope(&t, 60 * SEC, 1020 * SEC, &slope));
	ck_assert_double_eq_tol(slope, 8.0 * 1048576, 1e-3);
	ck_assert(trend_eta(170.0 * 1048576, 256.0 * 1048576, slope, &eta));
	ck_assert_double_eq_tol(eta, 86.0 / 8.0, 1e-6);
	/* at or over the limit: 0 */
	ck_assert(trend_eta(256.0 * 1048576, 256.0 * 1048576, slope, &eta));
	ck_assert_double_eq(eta, 0);
}
END_TEST

/* Only the horizon counts: a fall long ago does not hide the rise now. */
START_TEST(test_horizon)
{
	struct trend_point pts[64];
	struct trend t;
	double slope;

	trend_init(&t, pts, 64);
	for (uint64_t i = 0; i < 30; i++)
		trend_add(&t, 10 * SEC, i * SEC, 1000.0 - 10.0 * (double)i);
	for (uint64_t i = 30; i < 50; i++)
		trend_add(&t, 10 * SEC, i * SEC, 5.0 * (double)i);
	ck_assert(trend_slope(&t, 10 * SEC, 49 * SEC, &slope));
	ck_assert_double_eq_tol(slope, 5.0, 1e-9);
}
END_TEST

/* Falling or flat: no ETA; fewer than three points: no slope. */
START_TEST(test_not_rising)
{
	struct trend_point pts[8];
	struct trend t;
	double slope, eta = -1;

	trend_init(&t, pts, 8);
	trend_add(&t, 60 * SEC, 1 * SEC, 5);
	trend_add(&t, 60 * SEC, 9 * SEC, 5);
	ck_assert(!trend_slope(&t, 60 * SEC, 9 * SEC, &slope));
	trend_add(&t, 60 * SEC, 17 * SEC, 5);
	ck_assert(trend_slope(&t, 60 * SEC, 17 * SEC, &slope));
	ck_assert_double_eq_tol(slope, 0, 1e-12);
	ck_assert(!trend_eta(5, 10, slope, &eta));
	ck_assert(!trend_eta(5, 10, -1, &eta));
	ck_assert(!trend_eta(5, 10, NAN, &eta));
	ck_assert_double_eq(eta, -1);
}
END_TEST

/* A ring smaller than the samples in the horizon thins them: 8 points still
 * span the 60 s, one every 7.5 s or more, not the last 8 s. */
START_TEST(test_thinning)
{
	struct trend_point pts[8];
	struct trend t;
	double slope;

	trend_init(&t, pts, 8);
	for (uint64_t i = 0; i <= 60; i++)
		trend_add(&t, 60 * SEC, i * SEC, 2.0 * (double)i);
	ck_assert_uint_eq(t.count, 8);
	ck_assert_uint_le(60 * SEC - pts[t.head].t_usec, 60 * SEC);
	ck_assert_uint_ge(60 * SEC - pts[t.head].t_usec, 50 * SEC);
	ck_assert(trend_slope(&t, 60 * SEC, 60 * SEC, &slope));
	ck_assert_double_eq_tol(slope, 2.0, 1e-9);
}
END_TEST

static Suite *trend_suite(void)
{
	Suite *s = suite_create("trend");
	TCase *tc = tcase_create("trend");

	tcase_add_test(tc, test_steady_rise);
	tcase_add_test(tc, test_horizon);
	tcase_add_test(tc, test_not_rising);
	tcase_add_test(tc, test_thinning);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(trend_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
