/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psi.h"
#include "fixture.h"

FIXTURE_PARSE_FILE(parse_fixture, "psi", psi_parse, struct psi_stats)
FIXTURE_PARSE_MEM(parse_mem, psi_parse, struct psi_stats)

#define parse_str(s, st) parse_mem((s), strlen(s), (st))

/* Exact comparison on purpose: the parser must round like strtod(). */
static void assert_line(const struct psi_line *l, double a10, double a60, double a300, uint64_t total)
{
	ck_assert_double_eq(l->avg10, a10);
	ck_assert_double_eq(l->avg60, a60);
	ck_assert_double_eq(l->avg300, a300);
	ck_assert_uint_eq(l->total_usec, total);
}

static void assert_zero_line(const struct psi_line *l)
{
	assert_line(l, 0.0, 0.0, 0.0, 0);
}

/* Parses "some avg10=<v> avg60=0.00 avg300=0.00 total=1\n" and returns avg10,
 * or -1.0 when rejected. */
static double parse_avg10(const char *v)
{
	char buf[256];
	struct psi_stats st;

	snprintf(buf, sizeof(buf), "some avg10=%s avg60=0.00 avg300=0.00 total=1\n", v);
	if (parse_str(buf, &st) < 0)
		return -1.0;
	ck_assert(st.has_some);
	return st.some.avg10;
}

static uint64_t parse_total(const char *v, int *ret)
{
	char buf[256];
	struct psi_stats st = {0};

	snprintf(buf, sizeof(buf), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%s\n", v);
	*ret = parse_str(buf, &st);
	return st.some.total_usec;
}

START_TEST(test_proc_memory_recorded)
{
	struct psi_stats st;

	memset(&st, 0xaa, sizeof(st));
	ck_assert_int_eq(parse_fixture("proc-memory-6.18.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_zero_line(&st.some);
	assert_zero_line(&st.full);
}
END_TEST

START_TEST(test_cgroup_memory_recorded)
{
	struct psi_stats st;

	memset(&st, 0xaa, sizeof(st));
	ck_assert_int_eq(parse_fixture("cgroup-memory-6.18.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_zero_line(&st.some);
	assert_zero_line(&st.full);
}
END_TEST

START_TEST(test_proc_cpu_recorded)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("proc-cpu-6.18.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_line(&st.some, 0.00, 0.20, 0.62, 5305952);
	assert_zero_line(&st.full);
}
END_TEST

START_TEST(test_under_pressure)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("memory-under-pressure.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_line(&st.some, 12.34, 5.67, 1.02, 987654321);
	assert_line(&st.full, 8.90, 3.21, 0.55, 123456789);
}
END_TEST

START_TEST(test_no_full_line)
{
	struct psi_stats st;

	memset(&st, 0xaa, sizeof(st));
	ck_assert_int_eq(parse_fixture("cpu-no-full-5.10.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(!st.has_full);
	assert_line(&st.some, 0.51, 0.20, 0.05, 31415926);
	assert_zero_line(&st.full);
}
END_TEST

START_TEST(test_missing_some)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("missing-some.txt", &st), -EINVAL);
}
END_TEST

START_TEST(test_empty)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("empty.txt", &st), -EINVAL);
	ck_assert_int_eq(psi_parse(NULL, 0, &st), -EINVAL);
	ck_assert_int_eq(parse_str("\n\n  \n", &st), -EINVAL);
}
END_TEST

START_TEST(test_null_args)
{
	struct psi_stats st;

	ck_assert_int_eq(psi_parse(NULL, 3, &st), -EINVAL);
	ck_assert_int_eq(parse_str("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", NULL),
			 -EINVAL);
}
END_TEST

/* Choice: unlike meminfo there is no "drop the key" fallback. A present
 * line cut short misses fields and is malformed. A cut inside the last
 * number cannot be detected and is taken as is. */
START_TEST(test_truncated_midline)
{
	struct psi_stats st;

	memset(&st, 0x5a, sizeof(st));
	ck_assert_int_eq(parse_fixture("truncated-midline.txt", &st), -EINVAL);
	/* out is untouched on failure */
	ck_assert_uint_eq(st.some.total_usec, UINT64_C(0x5a5a5a5a5a5a5a5a));

	ck_assert_int_eq(parse_str("some avg10=0.00 avg60=0.00 avg300=0.00 total=", &st), -EINVAL);
	ck_assert_int_eq(parse_str("some avg10=0.00 avg60=0.00 avg300=0.00 tot", &st), -EINVAL);
	ck_assert_int_eq(parse_str("some avg10=0.00 avg60=0.00 avg300=0.", &st), -EINVAL);
	ck_assert_int_eq(parse_str("some", &st), -EINVAL);

	ck_assert_int_eq(parse_str("some avg10=0.00 avg60=0.00 avg300=0.00 total=53", &st), 0);
	ck_assert(st.has_some);
	ck_assert(!st.has_full);
	assert_line(&st.some, 0.0, 0.0, 0.0, 53);
}
END_TEST

START_TEST(test_garbage_binary)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("garbage.bin", &st), -EINVAL);
}
END_TEST

START_TEST(test_crlf)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("crlf.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_line(&st.some, 1.25, 0.50, 0.10, 4242);
	assert_line(&st.full, 0.75, 0.25, 0.05, 2121);
}
END_TEST

START_TEST(test_huge_values)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("huge-values.txt", &st), 0);
	assert_line(&st.some, 100.0, 99.99, 0.01, UINT64_MAX);
	assert_line(&st.full, 100.0, 100.0, 100.0, UINT64_MAX - 1);
}
END_TEST

START_TEST(test_total_overflow)
{
	static const char *const bad[] = {
		"18446744073709551620", "99999999999999999999999999", "-1", "+1", "1.5", "0x10", "",
	};
	struct psi_stats st;
	int r;

	ck_assert_int_eq(parse_fixture("total-overflow.txt", &st), -EINVAL);

	ck_assert_uint_eq(parse_total("18446744073709551615", &r), UINT64_MAX);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(parse_total("000000000000000000000000000042", &r), 42);
	ck_assert_int_eq(r, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse_total(bad[i], &r);
		ck_assert_msg(r == -EINVAL, "total=\"%s\": r = %d, want -EINVAL", bad[i], r);
	}
}
END_TEST

START_TEST(test_negative)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("negative.txt", &st), -EINVAL);
}
END_TEST

START_TEST(test_reordered_and_unknown_fields)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_fixture("reordered-fields.txt", &st), 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_line(&st.some, 1.50, 0.75, 0.30, 100);
	assert_line(&st.full, 0.01, 0.02, 0.03, 77);
}
END_TEST

START_TEST(test_decimals)
{
	ck_assert_double_eq(parse_avg10("0.00"), 0.0);
	ck_assert_double_eq(parse_avg10("0"), 0.0);
	ck_assert_double_eq(parse_avg10("7"), 7.0);
	ck_assert_double_eq(parse_avg10("12.34"), 12.34);
	ck_assert_double_eq(parse_avg10("2.66"), 2.66);
	ck_assert_double_eq(parse_avg10("0.1"), 0.1);
	ck_assert_double_eq(parse_avg10("33.333"), 33.333);
	ck_assert_double_eq(parse_avg10("099.50"), 99.5);
	/* 1.0 + 0.14 != 1.14 in binary: a naive int + frac sum fails these */
	ck_assert_double_eq(parse_avg10("1.14"), 1.14);
	ck_assert_double_eq(parse_avg10("1.66"), 1.66);
	ck_assert_double_eq(parse_avg10("1.93"), 1.93);
	ck_assert_double_eq(parse_avg10("100"), 100.0);
	ck_assert_double_eq(parse_avg10("100.00"), 100.0);
	/* digits beyond the 9th decimal are accepted and dropped */
	ck_assert_double_eq(parse_avg10("1.1234567891234"), 1.123456789);
	ck_assert_double_eq(parse_avg10("0.0000000009"), 0.0);

	/* Choice: avgs are percentages, anything above 100 is malformed. */
	ck_assert_double_eq(parse_avg10("100.01"), -1.0);
	ck_assert_double_eq(parse_avg10("101"), -1.0);
	ck_assert_double_eq(parse_avg10("99999999999999999999999.0"), -1.0);

	ck_assert_double_eq(parse_avg10(""), -1.0);
	ck_assert_double_eq(parse_avg10("-0.00"), -1.0);
	ck_assert_double_eq(parse_avg10("+1.00"), -1.0);
	ck_assert_double_eq(parse_avg10(".5"), -1.0);
	ck_assert_double_eq(parse_avg10("5."), -1.0);
	ck_assert_double_eq(parse_avg10("1..5"), -1.0);
	ck_assert_double_eq(parse_avg10("1.5.0"), -1.0);
	ck_assert_double_eq(parse_avg10("1,50"), -1.0);
	ck_assert_double_eq(parse_avg10("1e1"), -1.0);
	ck_assert_double_eq(parse_avg10("0x1"), -1.0);
	ck_assert_double_eq(parse_avg10("inf"), -1.0);
	ck_assert_double_eq(parse_avg10("nan"), -1.0);
	ck_assert_double_eq(parse_avg10("1.0%"), -1.0);
}
END_TEST

static const char *set_comma_locale(void)
{
	static const char *const names[] = {
		"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
		"ru_RU.UTF-8", "ru_RU.utf8", "nl_NL.UTF-8", "nl_NL.utf8",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (setlocale(LC_ALL, names[i]) && localeconv()->decimal_point[0] == ',')
			return names[i];
	return NULL;
}

/* Guards against a regression to strtod(): in a ',' locale, which
 * packaging/install-deps.sh --test generates (de_DE.UTF-8). */
START_TEST(test_locale_independent)
{
	struct psi_stats st;
	const char *loc = set_comma_locale();

	ck_assert_msg(loc, "no ',' decimal locale installed (de_DE.UTF-8: packaging/install-deps.sh --test generates it)");

	ck_assert_int_eq(parse_fixture("memory-under-pressure.txt", &st), 0);
	assert_line(&st.some, 12.34, 5.67, 1.02, 987654321);
	assert_line(&st.full, 8.90, 3.21, 0.55, 123456789);

	ck_assert_int_eq(parse_fixture("comma-decimal.txt", &st), -EINVAL);

	setlocale(LC_ALL, "C");
}
END_TEST

START_TEST(test_malformed_lines)
{
	static const char *const bad[] = {
		/* missing field */
		"some avg10=0.00 avg60=0.00 total=0\n",
		"some avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00\n",
		/* repeated field */
		"some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0 total=0\n",
		/* not key=value */
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0 junk\n",
		"some avg10 =0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10= 0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some =1 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00=1 avg60=0.00 avg300=0.00 total=0\n",
		/* malformed full with a good some */
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull\n",
	};
	struct psi_stats st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_str(bad[i], &st) == -EINVAL, "accepted: %s", bad[i]);
}
END_TEST

START_TEST(test_unknown_lines_and_whitespace)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_str("\n"
				   "partial avg10=9.99 avg60=9.99 avg300=9.99 total=9\n"
				   "something avg10=1.00\n"
				   "  \t full\tavg10=0.40  avg60=0.30 avg300=0.20\ttotal=400 \t\n"
				   "\tsome avg10=4.00 avg60=3.00 avg300=2.00 total=1000",
				   &st),
			 0);
	ck_assert(st.has_some);
	ck_assert(st.has_full);
	assert_line(&st.some, 4.0, 3.0, 2.0, 1000);
	assert_line(&st.full, 0.40, 0.30, 0.20, 400);
}
END_TEST

/* Choice: a repeated "some"/"full" line is not an error, the last wins. */
START_TEST(test_duplicate_lines)
{
	struct psi_stats st;

	ck_assert_int_eq(parse_str("some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n"
				   "full avg10=2.00 avg60=2.00 avg300=2.00 total=2\n"
				   "some avg10=3.00 avg60=3.00 avg300=3.00 total=3\n",
				   &st),
			 0);
	assert_line(&st.some, 3.0, 3.0, 3.0, 3);
	assert_line(&st.full, 2.0, 2.0, 2.0, 2);
}
END_TEST

START_TEST(test_embedded_nul)
{
	static const char ok[] = "some avg10=0.50 avg60=0.25 avg300=0.10 total=7\n\0\0garbage\0\n";
	static const char bad_value[] = "some avg10=0.5\0 avg60=0.25 avg300=0.10 total=7\n";
	static const char bad_kw[] = "some\0 avg10=0.50 avg60=0.25 avg300=0.10 total=7\n";
	struct psi_stats st;

	ck_assert_int_eq(parse_mem(ok, sizeof(ok) - 1, &st), 0);
	assert_line(&st.some, 0.50, 0.25, 0.10, 7);
	ck_assert(!st.has_full);

	ck_assert_int_eq(parse_mem(bad_value, sizeof(bad_value) - 1, &st), -EINVAL);
	/* "some\0" is not "some": the line is ignored and "some" is missing */
	ck_assert_int_eq(parse_mem(bad_kw, sizeof(bad_kw) - 1, &st), -EINVAL);
}
END_TEST

START_TEST(test_len_is_respected)
{
	static const char s[] = "some avg10=0.50 avg60=0.25 avg300=0.10 total=7\n"
				"full avg10=0.40 avg60=0.30 avg300=0.20 total=400\n";
	struct psi_stats st;

	/* only the "some" line */
	ck_assert_int_eq(parse_mem(s, (size_t) (strchr(s, '\n') - s + 1), &st), 0);
	ck_assert(!st.has_full);
	assert_line(&st.some, 0.50, 0.25, 0.10, 7);

	/* "total=40" instead of "total=400" */
	ck_assert_int_eq(parse_mem(s, sizeof(s) - 3, &st), 0);
	ck_assert(st.has_full);
	assert_line(&st.full, 0.40, 0.30, 0.20, 40);
}
END_TEST

static Suite *psi_suite(void)
{
	Suite *s = suite_create("psi");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_proc_memory_recorded);
	tcase_add_test(tc, test_cgroup_memory_recorded);
	tcase_add_test(tc, test_proc_cpu_recorded);
	tcase_add_test(tc, test_under_pressure);
	tcase_add_test(tc, test_no_full_line);
	tcase_add_test(tc, test_missing_some);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_null_args);
	tcase_add_test(tc, test_truncated_midline);
	tcase_add_test(tc, test_garbage_binary);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_huge_values);
	tcase_add_test(tc, test_total_overflow);
	tcase_add_test(tc, test_negative);
	tcase_add_test(tc, test_reordered_and_unknown_fields);
	tcase_add_test(tc, test_decimals);
	tcase_add_test(tc, test_locale_independent);
	tcase_add_test(tc, test_malformed_lines);
	tcase_add_test(tc, test_unknown_lines_and_whitespace);
	tcase_add_test(tc, test_duplicate_lines);
	tcase_add_test(tc, test_embedded_nul);
	tcase_add_test(tc, test_len_is_respected);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(psi_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
