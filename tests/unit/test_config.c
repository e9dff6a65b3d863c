/* SPDX-License-Identifier: GPL-2.0 */
/* lib/config.c: loading a configuration file or string, and the errors it
 * reports. The value parsers and the key table: test_config_parsers.c. */
#include <check.h>
#include <errno.h>
#include <ini.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "fixture.h"

#include "suite_main.h"

#define NAME "test.conf"
#define UNKNOWN_SECTION "unknown section (expected [daemon], [events] or [collector.NAME])"
#define NOT_LISTEN "is not ADDR:PORT (e.g. 127.0.0.1:9577, [::1]:9577, :9577)"

/* One temporary directory per test case, made and removed by the parent
 * process (an unchecked fixture), so it goes away even when a test fails. */
static char tmpdir[256];

static void tmpdir_setup(void)
{
	fixture_tmpdir_make(tmpdir, sizeof(tmpdir), "test_config");
}

static void tmpdir_teardown(void)
{
	fixture_tmpdir_remove(tmpdir);
}

/* Writes text to tmpdir/name; returns the path in a static buffer. */
static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static void assert_defaults(const struct daemon_config *d)
{
	ck_assert_str_eq(d->listen, ":9577");
	ck_assert_uint_eq(d->window_msec, 1000);
	ck_assert_uint_eq(d->sample_msec, 100);
	ck_assert_uint_eq(d->history, 60);
	ck_assert_int_eq(d->log_level, 6);
	ck_assert_uint_eq(d->max_series, 20000);
	ck_assert_uint_eq(d->max_connections, 64);
}

/* Loads text from memory and asserts it fails with exactly msg. */
static void expect_error(const char *text, const char *msg)
{
	struct config *c = NULL;
	struct config_error err;
	int r;

	memset(&err, 'Z', sizeof(err));
	err.message[sizeof(err.message) - 1] = '\0';
	r = config_load_string(text, NAME, &c, &err);
	ck_assert_msg(r == -EINVAL, "got %d for:\n%s", r, text);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(err.message, msg);
}

static struct config *expect_ok(const char *text)
{
	struct config *c = NULL;
	struct config_error err = { { 0 } };
	int r = config_load_string(text, NAME, &c, &err);

	ck_assert_msg(r == 0, "got %d (%s) for:\n%s", r, err.message, text);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->path, NAME);
	return c;
}

START_TEST(test_defaults)
{
	struct daemon_config d;
	struct config *c;

	memset(&d, 0x5a, sizeof(d));
	daemon_config_defaults(&d);
	assert_defaults(&d);
	ck_assert_str_eq(MEMWATCHD_DEFAULT_LISTEN, ":9577");

	c = config_new_defaults();
	ck_assert_ptr_nonnull(c);
	assert_defaults(&c->daemon);
	ck_assert_str_eq(c->path, "(built-in defaults)");
	ck_assert_uint_eq(c->n_entries, 0);
	ck_assert_uint_eq(c->n_collectors, 0);
	ck_assert_ptr_null(c->entries);
	ck_assert_ptr_null(c->collectors);
	ck_assert(c->events.journal);
	config_free(c);
	config_free(NULL);
}
END_TEST

static const char good_file[] =
	"# memwatchd test configuration\n"          /* 1 */
	"[daemon]\n"                                /* 2 */
	"listen = 127.0.0.1:9615\n"                 /* 3 */
	"window = 2s\n"                             /* 4 */
	"sample_interval = 250ms\n"                 /* 5 */
	"history = 120\n"                           /* 6 */
	"log_level = debug\n"                       /* 7 */
	"max_series = 5000\n"                       /* 8 */
	"max_connections = 16 ; inline comment\n"   /* 9 */
	"\n"                                        /* 10 */
	"[collector.meminfo]\n"                     /* 11 */
	"enabled = yes\n"                           /* 12 */
	"[collector.psi]\n"                         /* 13 */
	"; no keys here\n"                          /* 14 */
	"  [collector.kswapd]  \n"                  /* 15 */
	"threshold = 1.5\n"                         /* 16 */
	"interval=3s\n"                             /* 17 */
	"[collector.meminfo]\n"                     /* 18: seen again */
	"fields = MemFree, Cached\n";               /* 19 */

static void assert_good(const struct config *c)
{
	static const struct {
		const char *collector, *key, *value;
		unsigned line;
	} want[] = {
		{ "meminfo", "enabled", "yes", 12 },
		{ "kswapd", "threshold", "1.5", 16 },
		{ "kswapd", "interval", "3s", 17 },
		{ "meminfo", "fields", "MemFree, Cached", 19 },
	};
	size_t i;

	ck_assert_str_eq(c->daemon.listen, "127.0.0.1:9615");
	ck_assert_uint_eq(c->daemon.window_msec, 2000);
	ck_assert_uint_eq(c->daemon.sample_msec, 250);
	ck_assert_uint_eq(c->daemon.history, 120);
	ck_assert_int_eq(c->daemon.log_level, 7);
	ck_assert_uint_eq(c->daemon.max_series, 5000);
	ck_assert_uint_eq(c->daemon.max_connections, 16);

	ck_assert_uint_eq(c->n_collectors, 3);
	ck_assert_str_eq(c->collectors[0], "meminfo");
	ck_assert_uint_eq(c->collector_lines[0], 11);
	ck_assert_str_eq(c->collectors[1], "psi");
	ck_assert_uint_eq(c->collector_lines[1], 13);
	ck_assert_str_eq(c->collectors[2], "kswapd");
	ck_assert_uint_eq(c->collector_lines[2], 15);

	ck_assert_uint_eq(c->n_entries, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < c->n_entries; i++) {
		ck_assert_str_eq(c->entries[i].collector, want[i].collector);
		ck_assert_str_eq(c->entries[i].key, want[i].key);
		ck_assert_str_eq(c->entries[i].value, want[i].value);
		ck_assert_uint_eq(c->entries[i].line, want[i].line);
	}
}

START_TEST(test_good_file)
{
	const char *path = write_file("good.conf", good_file);
	struct config *c = NULL;
	struct config_error err = { { 0 } };

	ck_assert_int_eq(config_load(path, false, &c, &err), 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->path, path);
	assert_good(c);
	config_free(c);

	/* missing_ok changes nothing when the file exists */
	c = NULL;
	ck_assert_int_eq(config_load(path, true, &c, &err), 0);
	assert_good(c);
	config_free(c);
}
END_TEST

START_TEST(test_good_string)
{
	struct config *c = expect_ok(good_file);

	assert_good(c);
	config_free(c);
}
END_TEST

START_TEST(test_crlf_and_no_trailing_newline)
{
	struct config *c;

	c = expect_ok("[daemon]\r\nwindow = 3s\r\n[collector.psi]\r\nk = v\r\n");
	ck_assert_uint_eq(c->daemon.window_msec, 3000);
	ck_assert_uint_eq(c->n_collectors, 1);
	ck_assert_str_eq(c->collectors[0], "psi");
	ck_assert_str_eq(c->entries[0].value, "v");
	ck_assert_uint_eq(c->entries[0].line, 4);
	config_free(c);

	c = expect_ok("[daemon]\nwindow = 4s");
	ck_assert_uint_eq(c->daemon.window_msec, 4000);
	config_free(c);

	/* A UTF-8 byte order mark before the first section is fine. */
	c = expect_ok("\xef\xbb\xbf[daemon]\nwindow = 5s\n");
	ck_assert_uint_eq(c->daemon.window_msec, 5000);
	config_free(c);
}
END_TEST

START_TEST(test_empty_inputs)
{
	struct config *c;

	c = expect_ok("");
	assert_defaults(&c->daemon);
	ck_assert_uint_eq(c->n_collectors, 0);
	config_free(c);

	c = expect_ok("\n\n; only comments\n# and blank lines\n\n");
	assert_defaults(&c->daemon);
	config_free(c);

	c = expect_ok("[daemon]\n");
	assert_defaults(&c->daemon);
	config_free(c);

	c = expect_ok("[collector.empty]\n");
	ck_assert_uint_eq(c->n_collectors, 1);
	ck_assert_str_eq(c->collectors[0], "empty");
	ck_assert_uint_eq(c->collector_lines[0], 1);
	ck_assert_uint_eq(c->n_entries, 0);
	config_free(c);
}
END_TEST

START_TEST(test_boundaries_accepted)
{
	struct config *c;

	c = expect_ok("[daemon]\nwindow = 100ms\nsample_interval = 10ms\nhistory = 1\n"
		      "max_series = 100\nmax_connections = 1\nlisten = [::1]:1\n");
	ck_assert_uint_eq(c->daemon.window_msec, 100);
	ck_assert_uint_eq(c->daemon.sample_msec, 10);
	ck_assert_uint_eq(c->daemon.history, 1);
	ck_assert_uint_eq(c->daemon.max_series, 100);
	ck_assert_uint_eq(c->daemon.max_connections, 1);
	ck_assert_str_eq(c->daemon.listen, "[::1]:1");
	config_free(c);

	c = expect_ok("[daemon]\nwindow = 60s\nsample_interval = 1m\nhistory = 3600\n"
		      "max_series = 1000000\nmax_connections = 1024\nlisten = :65535\n");
	ck_assert_uint_eq(c->daemon.window_msec, 60000);
	ck_assert_uint_eq(c->daemon.sample_msec, 60000);
	ck_assert_uint_eq(c->daemon.history, 3600);
	ck_assert_uint_eq(c->daemon.max_series, 1000000);
	ck_assert_uint_eq(c->daemon.max_connections, 1024);
	ck_assert_str_eq(c->daemon.listen, ":65535");
	config_free(c);

	/* sample_interval equal to the window is allowed */
	c = expect_ok("[daemon]\nwindow = 500ms\nsample_interval = 0.5s\n");
	ck_assert_uint_eq(c->daemon.sample_msec, 500);
	config_free(c);

	/* log level spellings */
	c = expect_ok("[daemon]\nlog_level = WARN\n");
	ck_assert_int_eq(c->daemon.log_level, 4);
	config_free(c);
}
END_TEST

START_TEST(test_unknown_key)
{
	expect_error("[daemon]\nlisten = :9577\nbogus = 1\n", NAME ":3: [daemon] bogus: unknown key");
	expect_error("[daemon]\nWindow = 1s\n", NAME ":2: [daemon] Window: unknown key");
	expect_error("[daemon]\nsample = 1s\n", NAME ":2: [daemon] sample: unknown key");
}
END_TEST

START_TEST(test_unknown_section)
{
	expect_error("[daemon]\nwindow = 1s\n[nope]\nx = 1\n", NAME ":3: [nope]: " UNKNOWN_SECTION);
	expect_error("[nope]\n", NAME ":1: [nope]: " UNKNOWN_SECTION);
	expect_error("[Daemon]\n", NAME ":1: [Daemon]: " UNKNOWN_SECTION);
	expect_error("[collector.]\nk = v\n", NAME ":1: [collector.]: " UNKNOWN_SECTION);
	expect_error("[collectors.psi]\n", NAME ":1: [collectors.psi]: " UNKNOWN_SECTION);
	expect_error("[]\n", NAME ":1: []: " UNKNOWN_SECTION);
	expect_error("\n\n   [ daemon ]\n", NAME ":3: [ daemon ]: " UNKNOWN_SECTION);
	/* The BOM must not hide the first section header from validation. */
	expect_error("\xef\xbb\xbf[bogus]\nkey = 1\n", NAME ":1: [bogus]: " UNKNOWN_SECTION);
	/* Nor any blank inih skips: a header after a vertical tab was taken
	 * unchecked, and its key read the collector name past the end of "i".
	 * Found by fuzz_config (tests/fixtures/fuzz-regressions/config). */
	expect_error("\v[i]\n=M", NAME ":1: [i]: " UNKNOWN_SECTION);
	expect_error("\f[i]\nk = v\n", NAME ":1: [i]: " UNKNOWN_SECTION);
	expect_error("[daemon]\n\r[x]\nk = v\n", NAME ":2: [x]: " UNKNOWN_SECTION);
}
END_TEST

START_TEST(test_long_section_names)
{
	char text[512], name[128];
	struct config *c;

	/* 49 characters fit inih's section buffer: entries and the section list agree. */
	snprintf(name, sizeof(name), "%.39s", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
	snprintf(text, sizeof(text), "[collector.%s]\nk = v\n", name);
	c = expect_ok(text);
	ck_assert_uint_eq(c->n_collectors, 1);
	ck_assert_str_eq(c->collectors[0], name);
	ck_assert_uint_eq(c->n_entries, 1);
	ck_assert_str_eq(c->entries[0].collector, name);
	config_free(c);

	/* 50 would be cut by inih: refused instead of silently renamed. */
	snprintf(text, sizeof(text), "[daemon]\n[collector.%s0]\nk = v\n", name);
	expect_error(text, NAME ":2: section name longer than 49 characters");

	/* Far too long: refused too, never treated as a collector. */
	memset(name, 'x', 127);
	name[127] = '\0';
	snprintf(text, sizeof(text), "[%s]\nk = v\n", name);
	expect_error(text, NAME ":1: section name longer than 49 characters");
	snprintf(text, sizeof(text), "[collector.%s]\n", name);
	expect_error(text, NAME ":1: section name longer than 49 characters");
}
END_TEST

START_TEST(test_duplicate_key)
{
	expect_error("[daemon]\nwindow = 1s\nhistory = 5\nwindow = 2s\n",
		     NAME ":4: [daemon] window: set more than once");
	expect_error("[daemon]\nlisten = :1\n[collector.a]\nk = v\n[daemon]\nlisten = :1\n",
		     NAME ":6: [daemon] listen: set more than once");
	expect_error("[collector.psi]\nenabled = yes\n\nenabled = no\n",
		     NAME ":4: [collector.psi] enabled: set more than once (first on line 2)");
	expect_error("[collector.psi]\nenabled = yes\n[collector.x]\nenabled = yes\n[collector.psi]\nenabled = no\n",
		     NAME ":6: [collector.psi] enabled: set more than once (first on line 2)");
}
END_TEST

START_TEST(test_events_section)
{
	struct config *c;

	c = expect_ok("[events]\njournal = no\n");
	ck_assert(!c->events.journal);
	assert_defaults(&c->daemon);
	ck_assert_uint_eq(c->n_collectors, 0);
	config_free(c);

	c = expect_ok("[daemon]\nwindow = 2s\n[events]\njournal = on\n[collector.psi]\nenabled = yes\n");
	ck_assert(c->events.journal);
	ck_assert_uint_eq(c->daemon.window_msec, 2000);
	ck_assert_uint_eq(c->n_entries, 1);
	config_free(c);

	c = expect_ok("[events]\n");
	ck_assert(c->events.journal);
	config_free(c);

	expect_error("[events]\njournal = maybe\n",
		     NAME ":2: [events] journal: 'maybe' is not a boolean (yes/no, true/false, on/off, 1/0)");
	expect_error("[events]\njournal = no\njournal = yes\n", NAME ":3: [events] journal: set more than once");
	expect_error("[events]\njournal = no\n[daemon]\nwindow = 2s\n[events]\njournal = no\n",
		     NAME ":6: [events] journal: set more than once");
	expect_error("[events]\nevent_history = 5\n", NAME ":2: [events] event_history: unknown key");
	/* It is not a [daemon] key. */
	expect_error("[daemon]\njournal = no\n", NAME ":2: [daemon] journal: unknown key");
	expect_error("[Events]\n", NAME ":1: [Events]: " UNKNOWN_SECTION);
}
END_TEST

START_TEST(test_same_key_different_collectors)
{
	struct config *c = expect_ok("[collector.a]\nenabled = yes\n[collector.b]\nenabled = no\n");

	ck_assert_uint_eq(c->n_entries, 2);
	ck_assert_str_eq(c->entries[0].collector, "a");
	ck_assert_str_eq(c->entries[1].collector, "b");
	ck_assert_str_eq(c->entries[1].value, "no");
	ck_assert_uint_eq(c->entries[1].line, 4);
	config_free(c);
}
END_TEST

START_TEST(test_empty_value)
{
	expect_error("[daemon]\nwindow =\n", NAME ":2: [daemon] window: empty value");
	expect_error("[daemon]\nlisten =    \n", NAME ":2: [daemon] listen: empty value");
	expect_error("[collector.x]\nk = \n", NAME ":2: [collector.x] k: empty value");
}
END_TEST

START_TEST(test_window_range)
{
	expect_error("[daemon]\nwindow = 50ms\n",
		     NAME ":2: [daemon] window: '50ms' is not a duration between 100ms and 60s");
	expect_error("[daemon]\nwindow = 99\n",
		     NAME ":2: [daemon] window: '99' is not a duration between 100ms and 60s");
	expect_error("[daemon]\nwindow = 61s\n",
		     NAME ":2: [daemon] window: '61s' is not a duration between 100ms and 60s");
	expect_error("[daemon]\nwindow = 60001ms\n",
		     NAME ":2: [daemon] window: '60001ms' is not a duration between 100ms and 60s");
	expect_error("[daemon]\nwindow = 0\n",
		     NAME ":2: [daemon] window: '0' is not a duration between 100ms and 60s");
}
END_TEST

START_TEST(test_bad_duration)
{
	static const char *const bad[] = { "1h", "1 s", "1sec", "1.5.s", "s", "ms", "-1s", "1e3", ".5s",
					   "1.s", "1S", "1,5s", "0x10", "99999999999999999999999s" };
	char text[256], msg[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[daemon]\n\nwindow = %s\n", bad[i]);
		snprintf(msg, sizeof(msg), NAME ":3: [daemon] window: '%s' is not a duration between 100ms and 60s",
			 bad[i]);
		expect_error(text, msg);
	}
}
END_TEST

START_TEST(test_sample_interval_range)
{
	expect_error("[daemon]\nsample_interval = 5ms\n",
		     NAME ":2: [daemon] sample_interval: '5ms' is not a duration between 10ms and the window length");
	expect_error("[daemon]\nsample_interval = 9\n",
		     NAME ":2: [daemon] sample_interval: '9' is not a duration between 10ms and the window length");
	expect_error("[daemon]\nsample_interval = 2x\n",
		     NAME ":2: [daemon] sample_interval: '2x' is not a duration between 10ms and the window length");
}
END_TEST

START_TEST(test_sample_interval_longer_than_window)
{
	expect_error("[daemon]\nwindow = 500ms\nsample_interval = 1s\n",
		     NAME ":3: [daemon] sample_interval: 1000ms is longer than the window (500ms)");
	/* against the default window, and before the window is set */
	expect_error("[daemon]\n# c\nsample_interval = 2s\n",
		     NAME ":3: [daemon] sample_interval: 2000ms is longer than the window (1000ms)");
	expect_error("[daemon]\nsample_interval = 30s\nwindow = 20s\n",
		     NAME ":2: [daemon] sample_interval: 30000ms is longer than the window (20000ms)");
}
END_TEST

START_TEST(test_number_ranges)
{
	expect_error("[daemon]\nhistory = 0\n",
		     NAME ":2: [daemon] history: '0' is not a number of windows between 1 and 3600");
	expect_error("[daemon]\nhistory = 3601\n",
		     NAME ":2: [daemon] history: '3601' is not a number of windows between 1 and 3600");
	expect_error("[daemon]\nhistory = -1\n",
		     NAME ":2: [daemon] history: '-1' is not a number of windows between 1 and 3600");
	expect_error("[daemon]\nhistory = 1.5\n",
		     NAME ":2: [daemon] history: '1.5' is not a number of windows between 1 and 3600");
	expect_error("[daemon]\nhistory = 10s\n",
		     NAME ":2: [daemon] history: '10s' is not a number of windows between 1 and 3600");
	expect_error("[daemon]\nmax_series = 1000001\n",
		     NAME ":2: [daemon] max_series: '1000001' is not a number between 100 and 1000000");
	expect_error("[daemon]\nmax_series = 99\n",
		     NAME ":2: [daemon] max_series: '99' is not a number between 100 and 1000000");
	expect_error("[daemon]\nmax_series = 18446744073709551616\n",
		     NAME ":2: [daemon] max_series: '18446744073709551616' is not a number between 100 and 1000000");
	expect_error("[daemon]\nmax_series = 4294967396\n", /* 2^32 + 100: no truncation to 100 */
		     NAME ":2: [daemon] max_series: '4294967396' is not a number between 100 and 1000000");
	expect_error("[daemon]\nmax_connections = 0\n",
		     NAME ":2: [daemon] max_connections: '0' is not a number between 1 and 1024");
	expect_error("[daemon]\nmax_connections = 1025\n",
		     NAME ":2: [daemon] max_connections: '1025' is not a number between 1 and 1024");
}
END_TEST

START_TEST(test_bad_log_level)
{
	expect_error("[daemon]\nlog_level = loud\n",
		     NAME ":2: [daemon] log_level: 'loud' is not one of err, warning, notice, info, debug");
	expect_error("[daemon]\nlog_level = 7\n",
		     NAME ":2: [daemon] log_level: '7' is not one of err, warning, notice, info, debug");
	expect_error("[daemon]\nlog_level = crit\n",
		     NAME ":2: [daemon] log_level: 'crit' is not one of err, warning, notice, info, debug");
}
END_TEST

START_TEST(test_bad_listen)
{
	static const char *const bad[] = {
		"localhost:9577", "::1:9577", "127.0.0.1", "127.0.0.1:0", ":65536", "[::1]9577", "9577",
		"*:9577", "0.0.0.0:http",
	};
	char text[512], msg[512], long_value[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[daemon]\nlisten = %s\n", bad[i]);
		snprintf(msg, sizeof(msg), NAME ":2: [daemon] listen: '%s' " NOT_LISTEN, bad[i]);
		expect_error(text, msg);
	}
	/* Longer than the listen buffer. */
	memset(long_value, '1', 150);
	memcpy(long_value + 150, ":80", 4);
	snprintf(text, sizeof(text), "[daemon]\nlisten = %s\n", long_value);
	snprintf(msg, sizeof(msg), NAME ":2: [daemon] listen: '%s' " NOT_LISTEN, long_value);
	expect_error(text, msg);
}
END_TEST

START_TEST(test_line_too_long)
{
	/* inih hands the reader INI_MAX_LINE bytes: content + '\n' + NUL. */
	int limit = INI_MAX_LINE - 2;
	char text[2048], msg[256], line[1024];
	struct config *c;

	ck_assert_int_lt(INI_MAX_LINE, 900);
	/* exactly at the limit: accepted */
	memset(line, 'x', sizeof(line));
	line[0] = '#';
	line[limit] = '\0';
	snprintf(text, sizeof(text), "[daemon]\n%s\nwindow = 2s\n", line);
	c = expect_ok(text);
	ck_assert_uint_eq(c->daemon.window_msec, 2000);
	config_free(c);

	/* one more: rejected, not split into two lines */
	memset(line, 'x', sizeof(line));
	line[0] = '#';
	line[limit + 1] = '\0';
	snprintf(text, sizeof(text), "[daemon]\nwindow = 2s\n%s\nwindow = 3s\n", line);
	snprintf(msg, sizeof(msg), NAME ":3: line longer than %d characters", limit);
	expect_error(text, msg);

	/* a key whose value would otherwise be cut */
	memset(line, '1', sizeof(line));
	memcpy(line, "window = ", 9);
	line[limit + 50] = '\0';
	snprintf(text, sizeof(text), "[daemon]\n%s\n", line);
	snprintf(msg, sizeof(msg), NAME ":2: line longer than %d characters", limit);
	expect_error(text, msg);
}
END_TEST

START_TEST(test_line_too_long_file)
{
	char text[2048], msg[1024], line[1024];
	struct config *c = NULL;
	struct config_error err;
	const char *path;
	int limit = INI_MAX_LINE - 2;

	memset(line, 'y', sizeof(line));
	line[0] = ';';
	line[limit + 1] = '\0';
	snprintf(text, sizeof(text), "[daemon]\n%s\n", line);
	path = write_file("long.conf", text);
	ck_assert_int_eq(config_load(path, false, &c, &err), -EINVAL);
	ck_assert_ptr_null(c);
	snprintf(msg, sizeof(msg), "%s:2: line longer than %d characters", path, limit);
	ck_assert_str_eq(err.message, msg);
}
END_TEST

START_TEST(test_key_outside_section)
{
	expect_error("window = 1s\n[daemon]\n", NAME ":1: key 'window' outside of any section");
	expect_error("; comment\n\nfoo = bar\n", NAME ":3: key 'foo' outside of any section");
}
END_TEST

START_TEST(test_syntax_error)
{
	expect_error("[daemon]\nwindow 2s\n", NAME ":2: syntax error (expected [section] or key = value)");
	expect_error("[daemon\nwindow = 2s\n", NAME ":1: syntax error (expected [section] or key = value)");
	expect_error("[daemon]\nwindow = 2s\n\njust some words\n",
		     NAME ":4: syntax error (expected [section] or key = value)");
}
END_TEST

START_TEST(test_first_error_wins)
{
	/* inih reads on after a syntax error; the earlier error is the one reported */
	expect_error("[daemon]\nwindow 2s\nbogus = 1\n",
		     NAME ":2: syntax error (expected [section] or key = value)");
	expect_error("[daemon]\nfoo\n[nope]\n", NAME ":2: syntax error (expected [section] or key = value)");
	expect_error("[daemon]\nwindow = 2s\nwindow = 3s\nnot a pair\n",
		     NAME ":3: [daemon] window: set more than once");
	expect_error("[daemon]\nbogus = 1\nwindow = 1ms\n[nope]\n", NAME ":2: [daemon] bogus: unknown key");
	expect_error("[nope]\n[daemon]\nbogus = 1\n", NAME ":1: [nope]: " UNKNOWN_SECTION);
}
END_TEST

START_TEST(test_error_from_file_names_path)
{
	const char *path = write_file("bad.conf", "[daemon]\n# comment\nwindow = 50ms\n");
	char msg[1024];
	struct config *c = NULL;
	struct config_error err;

	ck_assert_int_eq(config_load(path, false, &c, &err), -EINVAL);
	ck_assert_ptr_null(c);
	snprintf(msg, sizeof(msg), "%s:3: [daemon] window: '50ms' is not a duration between 100ms and 60s", path);
	ck_assert_str_eq(err.message, msg);

	/* also when missing_ok: the file exists, so its errors count */
	ck_assert_int_eq(config_load(path, true, &c, &err), -EINVAL);
	ck_assert_str_eq(err.message, msg);

	/* err may be NULL */
	ck_assert_int_eq(config_load(path, false, &c, NULL), -EINVAL);
	ck_assert_int_eq(config_load_string("[x]\n", NAME, &c, NULL), -EINVAL);
	ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_missing_file)
{
	char path[512], msg[1024];
	struct config *c = NULL;
	struct config_error err;

	snprintf(path, sizeof(path), "%s/does-not-exist.conf", tmpdir);
	ck_assert_int_eq(config_load(path, true, &c, &err), 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->path, "(built-in defaults)");
	assert_defaults(&c->daemon);
	ck_assert_uint_eq(c->n_collectors, 0);
	ck_assert_uint_eq(c->n_entries, 0);
	config_free(c);

	c = NULL;
	ck_assert_int_eq(config_load(path, false, &c, &err), -ENOENT);
	ck_assert_ptr_null(c);
	snprintf(msg, sizeof(msg), "%s:0: cannot open: No such file or directory", path);
	ck_assert_str_eq(err.message, msg);

	/* A missing directory on the way is just as missing. */
	snprintf(path, sizeof(path), "%s/no-dir/x.conf", tmpdir);
	ck_assert_int_eq(config_load(path, true, &c, &err), 0);
	config_free(c);
}
END_TEST

START_TEST(test_directory_is_not_a_config)
{
	char path[512], msg[1024];
	struct config *c = NULL;
	struct config_error err;

	snprintf(path, sizeof(path), "%s/conf.d", tmpdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	/* fopen() of a directory succeeds; reading fails with EISDIR. */
	ck_assert_int_eq(config_load(path, false, &c, &err), -EIO);
	ck_assert_ptr_null(c);
	snprintf(msg, sizeof(msg), "%s:0: cannot read: Is a directory", path);
	ck_assert_str_eq(err.message, msg);
	ck_assert_int_eq(config_load(path, true, &c, &err), -EIO);
	ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_error_set)
{
	struct config_error err;
	char big[1000];

	config_error_set(&err, "f.conf", 12, "daemon", "window", "bad %s %d", "value", 7);
	ck_assert_str_eq(err.message, "f.conf:12: [daemon] window: bad value 7");
	config_error_set(&err, "f.conf", 3, "nope", NULL, "unknown");
	ck_assert_str_eq(err.message, "f.conf:3: [nope]: unknown");
	config_error_set(&err, "f.conf", 0, NULL, NULL, "cannot open: %s", "x");
	ck_assert_str_eq(err.message, "f.conf:0: cannot open: x");
	config_error_set(NULL, "f.conf", 1, NULL, NULL, "ignored");

	/* Overlong parts are cut, never overflow. */
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	config_error_set(&err, big, 1, "daemon", "k", "%s", big);
	ck_assert_uint_eq(strlen(err.message), sizeof(err.message) - 1);
	ck_assert_int_eq(err.message[0], 'q');
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *load = tcase_create("load");
	TCase *errs = tcase_create("errors");

	tcase_add_unchecked_fixture(load, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(load, test_defaults);
	tcase_add_test(load, test_good_file);
	tcase_add_test(load, test_good_string);
	tcase_add_test(load, test_crlf_and_no_trailing_newline);
	tcase_add_test(load, test_empty_inputs);
	tcase_add_test(load, test_boundaries_accepted);
	tcase_add_test(load, test_same_key_different_collectors);
	tcase_add_test(load, test_missing_file);
	tcase_add_test(load, test_directory_is_not_a_config);
	suite_add_tcase(s, load);

	tcase_add_unchecked_fixture(errs, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(errs, test_unknown_key);
	tcase_add_test(errs, test_unknown_section);
	tcase_add_test(errs, test_long_section_names);
	tcase_add_test(errs, test_duplicate_key);
	tcase_add_test(errs, test_events_section);
	tcase_add_test(errs, test_empty_value);
	tcase_add_test(errs, test_window_range);
	tcase_add_test(errs, test_bad_duration);
	tcase_add_test(errs, test_sample_interval_range);
	tcase_add_test(errs, test_sample_interval_longer_than_window);
	tcase_add_test(errs, test_number_ranges);
	tcase_add_test(errs, test_bad_log_level);
	tcase_add_test(errs, test_bad_listen);
	tcase_add_test(errs, test_line_too_long);
	tcase_add_test(errs, test_line_too_long_file);
	tcase_add_test(errs, test_key_outside_section);
	tcase_add_test(errs, test_syntax_error);
	tcase_add_test(errs, test_first_error_wins);
	tcase_add_test(errs, test_error_from_file_names_path);
	tcase_add_test(errs, test_error_set);
	suite_add_tcase(s, errs);
	return s;
}

int main(void)
{
	return suite_main_run(config_suite());
}
