/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "http_request.h"

START_TEST(test_endpoints)
{
	static const struct {
		const char *path;
		enum http_endpoint want;
	} cases[] = {
		{ "/metrics", HTTP_ENDPOINT_METRICS },
		{ "/healthz", HTTP_ENDPOINT_HEALTHZ },
		{ "/api/v1/windows", HTTP_ENDPOINT_WINDOWS },
		{ "/api/v1/events", HTTP_ENDPOINT_EVENTS },
		{ "/", HTTP_ENDPOINT_STATUS },
		{ "/cgroup", HTTP_ENDPOINT_CGROUP },
		{ "/cgroup/", HTTP_ENDPOINT_UNKNOWN },
		/* exact matches only */
		{ "", HTTP_ENDPOINT_UNKNOWN },
		{ "/metrics/", HTTP_ENDPOINT_UNKNOWN },
		{ "/Metrics", HTTP_ENDPOINT_UNKNOWN },
		{ "/metric", HTTP_ENDPOINT_UNKNOWN },
		{ "//", HTTP_ENDPOINT_UNKNOWN },
		{ "/api/v1/windows?windows=2", HTTP_ENDPOINT_UNKNOWN }, /* libmicrohttpd cuts the query off first */
		{ "metrics", HTTP_ENDPOINT_UNKNOWN },
		{ "/api/v1/", HTTP_ENDPOINT_UNKNOWN },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(http_endpoint_of(cases[i].path) == cases[i].want, "%s", cases[i].path);
	ck_assert(http_endpoint_of(NULL) == HTTP_ENDPOINT_UNKNOWN);
}
END_TEST

START_TEST(test_windows)
{
	static const char *const bad[] = { "", "0", "00", "-1", "+1", " 1", "1 ", "1x", "0x10", "1.5" };
	uint64_t v;
	size_t i;

	ck_assert_int_eq(http_windows_parse("1", &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(http_windows_parse("007", &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(http_windows_parse("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(http_windows_parse("18446744073709551616", &v), -ERANGE);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		ck_assert_msg(http_windows_parse(bad[i], &v) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_uint_eq(v, 42);
	}
}
END_TEST

START_TEST(test_cgroup_path)
{
	static const char *const good[] = { "/", "/a", "/system.slice/x.service", "/kubepods/pod1/c...",
					    "/a b/.c/..d", "/ünï" };
	static const char *const bad[] = { "", "a", "a/b", "//", "/a/", "/a//b", "/.", "/..", "/a/./b",
					   "/a/../b", "/a/..", "/a\tb", "/a\x7f" "b", " /a" };
	char huge[HTTP_CGROUP_PATH_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(http_cgroup_path_check(good[i], strlen(good[i])) == 0, "refused '%s'", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(http_cgroup_path_check(bad[i], strlen(bad[i])) == -EINVAL, "accepted '%s'", bad[i]);
	/* A %00 decoded into the value: the length says it is there. */
	ck_assert_int_eq(http_cgroup_path_check("/a\0b", 4), -EINVAL);
	ck_assert_int_eq(http_cgroup_path_check(NULL, 0), -EINVAL);
	huge[0] = '/';
	memset(huge + 1, 'x', sizeof(huge) - 2);
	huge[sizeof(huge) - 1] = '\0';
	ck_assert_int_eq(http_cgroup_path_check(huge, HTTP_CGROUP_PATH_MAX), 0);
	ck_assert_int_eq(http_cgroup_path_check(huge, HTTP_CGROUP_PATH_MAX + 1), -EINVAL);
}
END_TEST

START_TEST(test_equal)
{
	ck_assert(http_equal_constant_time("", ""));
	ck_assert(http_equal_constant_time("secret", "secret"));
	ck_assert(!http_equal_constant_time("secret", "secreT"));
	ck_assert(!http_equal_constant_time("secret", "secret2"));
	ck_assert(!http_equal_constant_time("secret2", "secret"));
	ck_assert(!http_equal_constant_time("", "x"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("http_request");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_endpoints);
	tcase_add_test(tc, test_windows);
	tcase_add_test(tc, test_cgroup_path);
	tcase_add_test(tc, test_equal);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
