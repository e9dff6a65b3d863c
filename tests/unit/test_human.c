/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "human.h"

START_TEST(test_bytes)
{
	char buf[HUMAN_MAX];

	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 0, HUMAN_UTF8), "0.0 B");
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 1023, HUMAN_UTF8), "1023.0 B");
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 1024, HUMAN_UTF8), "1.0 KiB");
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 1536, HUMAN_ASCII), "1.5 KiB");
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 3.0 * 1024 * 1024 * 1024, HUMAN_UTF8), "3.0 GiB");
	/* past TiB the number grows, the unit stays */
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 2048.0 * 1024 * 1024 * 1024 * 1024, HUMAN_UTF8), "2048.0 TiB");
	/* a falling slope keeps its sign */
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), -2.5 * 1024 * 1024, HUMAN_ASCII), "-2.5 MiB");
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), NAN, HUMAN_UTF8), "–");
	ck_assert_str_eq(human_bytes(buf, sizeof(buf), NAN, HUMAN_ASCII), "-");
}
END_TEST

START_TEST(test_seconds)
{
	char buf[HUMAN_MAX];

	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 0, HUMAN_UTF8), "0 µs");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 250e-6, HUMAN_UTF8), "250 µs");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 250e-6, HUMAN_ASCII), "250 us");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 1e-3, HUMAN_ASCII), "1.0 ms");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 0.0125, HUMAN_UTF8), "12.5 ms");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 1, HUMAN_UTF8), "1.00 s");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 3600, HUMAN_ASCII), "3600.00 s");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), NAN, HUMAN_UTF8), "–");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), NAN, HUMAN_ASCII), "-");
}
END_TEST

START_TEST(test_count)
{
	char buf[HUMAN_MAX];

	ck_assert_str_eq(human_count(buf, sizeof(buf), 0, HUMAN_UTF8), "0");
	ck_assert_str_eq(human_count(buf, sizeof(buf), 41.6, HUMAN_ASCII), "42");
	ck_assert_str_eq(human_count(buf, sizeof(buf), 1e12, HUMAN_ASCII), "1000000000000");
	ck_assert_str_eq(human_count(buf, sizeof(buf), NAN, HUMAN_UTF8), "–");
	ck_assert_str_eq(human_count(buf, sizeof(buf), NAN, HUMAN_ASCII), "-");
}
END_TEST

START_TEST(test_truncates_to_buffer)
{
	char buf[5];

	ck_assert_str_eq(human_bytes(buf, sizeof(buf), 1536, HUMAN_ASCII), "1.5 ");
	ck_assert_str_eq(human_seconds(buf, sizeof(buf), 0.0125, HUMAN_ASCII), "12.5");
	ck_assert_str_eq(human_count(buf, sizeof(buf), 123456, HUMAN_ASCII), "1234");
}
END_TEST

static Suite *human_suite(void)
{
	Suite *s = suite_create("human");
	TCase *tc = tcase_create("formats");

	tcase_add_test(tc, test_bytes);
	tcase_add_test(tc, test_seconds);
	tcase_add_test(tc, test_count);
	tcase_add_test(tc, test_truncates_to_buffer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(human_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
