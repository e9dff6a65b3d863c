/* SPDX-License-Identifier: GPL-2.0 */
/* lib/config.c: the value parsers (booleans, numbers, durations, log levels,
 * percentages, basic-auth users) and the table-driven keys. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixture.h"

#include "suite_main.h"

START_TEST(test_parse_bool)
{
	static const char *const yes[] = { "1", "yes", "true", "on", "YES", "True", "oN" };
	static const char *const no[] = { "0", "no", "false", "off", "NO", "False", "OFF" };
	static const char *const bad[] = { "", "2", "y", "n", "t", "enable", "yes ", " no", "truee", "01", "-1" };
	size_t i;
	bool b;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		ck_assert_msg(config_parse_bool(yes[i], &b) == 0 && b, "%s", yes[i]);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		b = true;
		ck_assert_msg(config_parse_bool(no[i], &b) == 0 && !b, "%s", no[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = true;
		ck_assert_msg(config_parse_bool(bad[i], &b) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert(b); /* untouched */
	}
}
END_TEST

START_TEST(test_parse_uint)
{
	uint64_t v;

	ck_assert_int_eq(config_parse_uint("0", 0, 10, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(config_parse_uint("10", 0, 10, &v), 0);
	ck_assert_uint_eq(v, 10);
	ck_assert_int_eq(config_parse_uint("007", 0, 10, &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(config_parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);

	v = 42;
	ck_assert_int_eq(config_parse_uint("11", 0, 10, &v), -ERANGE);
	ck_assert_int_eq(config_parse_uint("4", 5, 10, &v), -ERANGE);
	ck_assert_int_eq(config_parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(config_parse_uint("18446744073709551620", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(config_parse_uint("99999999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(config_parse_uint("", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint("-1", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint("+1", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint(" 1", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint("1 ", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint("1x", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint("0x1", 0, 10, &v), -EINVAL);
	ck_assert_int_eq(config_parse_uint("1.0", 0, 10, &v), -EINVAL);
	ck_assert_uint_eq(v, 42); /* untouched on error */
}
END_TEST

START_TEST(test_parse_duration)
{
	static const struct {
		const char *s;
		uint64_t want;
	} good[] = {
		{ "250ms", 250 }, { "1s", 1000 }, { "1.5s", 1500 }, { "2m", 120000 }, { "2min", 120000 },
		{ "750", 750 },   { "0", 0 },     { "0ms", 0 },     { "0.25s", 250 }, { "1.001s", 1001 },
		{ "0.5m", 30000 }, { "1.0001s", 1000 }, /* below a millisecond: truncated */
		{ "1.9999999999999s", 1999 },           /* many fraction digits: no overflow */
		{ "1.5ms", 1 },
		{ "1h", 3600000 },
		{ "1.5h", 5400000 },
	};
	static const char *const bad[] = {
		"", "s", "ms", "h", "1H", "1d", "1 s", " 1s", "1s ", "1S", "1Ms", "1sec", "1mins", ".5s", "1.s",
		"1..5s", "1.5.5s", "-1s", "+1s", "1e3", "1,5s", "abc", "1.x", "0x10", "3.",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int r;

		v = 12345;
		r = config_parse_duration_msec(good[i].s, 0, UINT64_MAX, &v);
		ck_assert_msg(r == 0, "'%s': %d", good[i].s, r);
		ck_assert_msg(v == good[i].want, "'%s': got %llu, want %llu", good[i].s,
			      (unsigned long long)v, (unsigned long long)good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		ck_assert_msg(config_parse_duration_msec(bad[i], 0, UINT64_MAX, &v) == -EINVAL, "accepted '%s'",
			      bad[i]);
		ck_assert_uint_eq(v, 12345);
	}

	/* bounds */
	ck_assert_int_eq(config_parse_duration_msec("99ms", 100, 1000, &v), -ERANGE);
	ck_assert_int_eq(config_parse_duration_msec("100ms", 100, 1000, &v), 0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(config_parse_duration_msec("1s", 100, 1000, &v), 0);
	ck_assert_uint_eq(v, 1000);
	ck_assert_int_eq(config_parse_duration_msec("1.001s", 100, 1000, &v), -ERANGE);
	ck_assert_int_eq(config_parse_duration_msec("0.05s", 100, 1000, &v), -ERANGE);

	/* overflow is a range error, not a wrapped value */
	ck_assert_int_eq(config_parse_duration_msec("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(config_parse_duration_msec("18446744073709551s", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(config_parse_duration_msec("307445734561825861m", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(config_parse_duration_msec("9223372036854775s", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 9223372036854775000ULL);
}
END_TEST

START_TEST(test_log_levels)
{
	static const struct {
		const char *s;
		int level;
	} good[] = {
		{ "err", 3 },  { "error", 3 },   { "ERR", 3 },    { "warning", 4 }, { "warn", 4 },
		{ "Warning", 4 }, { "notice", 5 }, { "info", 6 }, { "INFO", 6 },    { "debug", 7 },
	};
	static const char *const bad[] = { "", "3", "7", "crit", "emerg", "alert", "trace", "verbose",
					   "errors", "info ", "deb" };
	size_t i;
	int l;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		l = -1;
		ck_assert_msg(config_parse_log_level(good[i].s, &l) == 0, "'%s'", good[i].s);
		ck_assert_int_eq(l, good[i].level);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		l = -1;
		ck_assert_msg(config_parse_log_level(bad[i], &l) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_int_eq(l, -1);
	}

	ck_assert_str_eq(log_level_name(3), "err");
	ck_assert_str_eq(log_level_name(4), "warning");
	ck_assert_str_eq(log_level_name(5), "notice");
	ck_assert_str_eq(log_level_name(6), "info");
	ck_assert_str_eq(log_level_name(7), "debug");
	ck_assert_str_eq(log_level_name(2), "unknown");
	ck_assert_str_eq(log_level_name(0), "unknown");
	ck_assert_str_eq(log_level_name(-1), "unknown");
	ck_assert_str_eq(log_level_name(8), "unknown");
	/* name and parse agree */
	for (l = 3; l <= 7; l++) {
		int back = -1;

		ck_assert_int_eq(config_parse_log_level(log_level_name(l), &back), 0);
		ck_assert_int_eq(back, l);
	}
}
END_TEST

START_TEST(test_parse_percent)
{
	static const char *const bad[] = { "", "%", "-1", "100.1", "101%", "2%%", "2 %", " 2", "x", "nan", "inf", "1e400",
					   "1e1", "0x10", "+2", ".5", "1..2", "1.2.3",
					   /* strtod() took these; lib/parse.h's decimal form does not */
					   "1.", "1.%" };
	double r;
	size_t i;

	ck_assert_int_eq(config_parse_percent("2%", &r), 0);
	ck_assert_double_eq_tol(r, 0.02, 1e-12);
	ck_assert_int_eq(config_parse_percent("0.5", &r), 0);
	ck_assert_double_eq_tol(r, 0.005, 1e-12);
	ck_assert_int_eq(config_parse_percent("100%", &r), 0);
	ck_assert_double_eq(r, 1.0);
	ck_assert_int_eq(config_parse_percent("0", &r), 0);
	ck_assert_double_eq(r, 0.0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = -1;
		ck_assert_msg(config_parse_percent(bad[i], &r) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_double_eq(r, -1);
	}
}
END_TEST

START_TEST(test_basic_auth_users)
{
	static const char *const bad[] = { "", " \t ", "alice", "alice:", "alice:secret", ":$y$abc", "alice:$y$a:b",
					   "alice:$y$abc junk", "alice::$y$abc" };
	static struct basic_auth_users u, v;
	char list[64 * 40], name[80];
	size_t i;

	/* blanks around and between */
	ck_assert_int_eq(basic_auth_users_parse("\talice:$y$abc  bob:$6$x\t", &u), 0);
	ck_assert_uint_eq(u.n, 2);
	ck_assert_str_eq(u.user[0].name, "alice");
	ck_assert_str_eq(u.user[0].hash, "$y$abc");
	ck_assert_str_eq(u.user[1].name, "bob");
	ck_assert_str_eq(u.user[1].hash, "$6$x");
	ck_assert_int_eq(basic_auth_users_parse("alice:$y$abc bob:$6$x", &v), 0);
	ck_assert(basic_auth_users_equal(&u, &v));
	ck_assert_int_eq(basic_auth_users_parse("alice:$y$abc bob:$6$y", &v), 0);
	ck_assert(!basic_auth_users_equal(&u, &v));
	ck_assert_int_eq(basic_auth_users_parse("alice:$y$abc", &v), 0);
	ck_assert(!basic_auth_users_equal(&u, &v));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		u.n = 7;
		ck_assert_msg(basic_auth_users_parse(bad[i], &u) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_uint_eq(u.n, 0);
	}

	/* 32 users fit, 33 are refused rather than cut */
	list[0] = '\0';
	for (i = 0; i < BASIC_AUTH_USERS_MAX; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "u%zu:$1$h ", i);
	ck_assert_int_eq(basic_auth_users_parse(list, &u), 0);
	ck_assert_uint_eq(u.n, BASIC_AUTH_USERS_MAX);
	ck_assert_str_eq(u.user[BASIC_AUTH_USERS_MAX - 1].name, "u31");
	strcat(list, "u32:$1$h");
	ck_assert_int_eq(basic_auth_users_parse(list, &u), -E2BIG);
	ck_assert_uint_eq(u.n, 0);

	memset(name, 'n', BASIC_AUTH_NAME_SIZE - 1);
	snprintf(name + BASIC_AUTH_NAME_SIZE - 1, sizeof(name) - (BASIC_AUTH_NAME_SIZE - 1), ":$1$h");
	ck_assert_int_eq(basic_auth_users_parse(name, &u), 0);
	ck_assert_uint_eq(strlen(u.user[0].name), BASIC_AUTH_NAME_SIZE - 1);
	memset(name, 'n', BASIC_AUTH_NAME_SIZE);
	snprintf(name + BASIC_AUTH_NAME_SIZE, sizeof(name) - BASIC_AUTH_NAME_SIZE, ":$1$h");
	ck_assert_int_eq(basic_auth_users_parse(name, &u), -ENAMETOOLONG);
}
END_TEST

/* Parsed at load, with the file, line and key of a bad value. */
START_TEST(test_basic_auth_users_load)
{
	struct config_error err = { 0 };
	struct config *c = NULL;

	ck_assert_int_eq(config_load_string("[daemon]\nbasic_auth_users = a:$1$x b:$6$y\n", "t.conf", &c, &err), 0);
	ck_assert_uint_eq(c->daemon.basic_auth.n, 2);
	ck_assert_str_eq(c->daemon.basic_auth.user[1].name, "b");
	ck_assert_str_eq(c->daemon.basic_auth.user[1].hash, "$6$y");
	config_free(c);

	c = config_new_defaults();
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->daemon.basic_auth.n, 0); /* no authentication */
	config_free(c);
	c = NULL;

	ck_assert_int_eq(config_load_string("[daemon]\n\nbasic_auth_users = a:secret\n", "t.conf", &c, &err), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.message, "t.conf:3: [daemon] basic_auth_users: expected") == err.message, "%s",
		      err.message);
}
END_TEST

struct table_cfg {
	bool on;
	uint32_t small;
	uint64_t big, msec;
	double ratio;
	char path[16];
	int pick;
};

static const struct config_choice picks[] = { { "auto", -1 }, { "one", 1 }, { NULL, 0 } };

static const struct config_key table[] = {
	CONFIG_KEY_BOOL("on", struct table_cfg, on),
	{ .name = "small", .kind = CONFIG_KEY_UINT, CONFIG_FIELD(struct table_cfg, small), .min = 1, .max = 10,
	  .what = "a number of things" },
	CONFIG_KEY_UINT("big", struct table_cfg, big, 0, UINT64_MAX),
	{ .name = "msec", .kind = CONFIG_KEY_DURATION, CONFIG_FIELD(struct table_cfg, msec), .min = 250,
	  .max = 7200000, .max_text = "two hours" },
	CONFIG_KEY_DURATION("ttl", struct table_cfg, msec, 0, 86400000),
	CONFIG_KEY_PERCENT("ratio", struct table_cfg, ratio),
	CONFIG_KEY_PATH("path", struct table_cfg, path),
	CONFIG_KEY_CHOICE("pick", struct table_cfg, pick, picks),
};

static void expect_key_error(const char *key, const char *value, int want, const char *msg)
{
	struct table_cfg c = { 0 }, zero = { 0 };
	char err[256] = "";

	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, key, value, err, sizeof(err)), want);
	ck_assert_str_eq(err, msg);
	ck_assert_int_eq(memcmp(&c, &zero, sizeof(c)), 0); /* nothing written */
}

START_TEST(test_key_table)
{
	struct table_cfg c = { 0 };
	char err[256] = "";

	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "on", "yes", err, sizeof(err)), 0);
	ck_assert(c.on);
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "small", "10", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.small, 10);
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "big", "18446744073709551615", err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(c.big, UINT64_MAX);
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "msec", "1.5s", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.msec, 1500);
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "ratio", "50%", err, sizeof(err)), 0);
	ck_assert_double_eq(c.ratio, 0.5);
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "path", "/a/b", err, sizeof(err)), 0);
	ck_assert_str_eq(c.path, "/a/b");
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "pick", "auto", err, sizeof(err)), 0);
	ck_assert_int_eq(c.pick, -1);
	ck_assert_int_eq(config_key_apply(table, ARRAY_SIZE(table), &c, "nope", "1", err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "");

	expect_key_error("on", "maybe", -EINVAL, "'maybe' is not a boolean (yes/no, true/false, on/off, 1/0)");
	expect_key_error("small", "11", -ERANGE, "'11' is not a number of things between 1 and 10");
	expect_key_error("small", "x", -EINVAL, "'x' is not a number of things between 1 and 10");
	expect_key_error("big", "18446744073709551616", -ERANGE,
			 "'18446744073709551616' is not a number between 0 and 18446744073709551615");
	expect_key_error("msec", "100ms", -ERANGE, "'100ms' is not a duration between 250ms and two hours");
	expect_key_error("ttl", "25h", -ERANGE, "'25h' is not a duration between 0 and 24h");
	expect_key_error("ttl", "1d", -EINVAL, "'1d' is not a duration between 0 and 24h");
	expect_key_error("ttl", "1441m", -ERANGE, "'1441m' is not a duration between 0 and 24h");
	expect_key_error("ratio", "101%", -EINVAL, "'101%' is not a percentage from 0 to 100 (e.g. 2%)");
	expect_key_error("path", "/a/very/long/path", -EINVAL,
			 "'/a/very/long/path' is not an absolute path shorter than 16 bytes");
	expect_key_error("pick", "two", -EINVAL, "'two' is not one of auto, one");
}
END_TEST

static Suite *config_parsers_suite(void)
{
	Suite *s = suite_create("config_parsers");
	TCase *parse = tcase_create("parsers");

	tcase_add_test(parse, test_parse_bool);
	tcase_add_test(parse, test_parse_uint);
	tcase_add_test(parse, test_parse_duration);
	tcase_add_test(parse, test_log_levels);
	tcase_add_test(parse, test_parse_percent);
	tcase_add_test(parse, test_basic_auth_users);
	tcase_add_test(parse, test_key_table);
	tcase_add_test(parse, test_basic_auth_users_load);
	suite_add_tcase(s, parse);
	return s;
}

int main(void)
{
	return suite_main_run(config_parsers_suite());
}
