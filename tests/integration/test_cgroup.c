// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of the cgroup collector: the real daemon on the fixture
 * trees (exact values); on a real memory cgroup, v1 or cgroup2, with a 64 MiB
 * limit and workloads in it (test_cgroup_live.c); and the faults collector's
 * top_k on a fake /proc (test_cgroup_faults.c). Needs root. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must point at tests/fixtures"
#endif

#include "cgroup_test.h"

#define FIX_V1 FIXTURES_DIR "/cgroup/v1"
#define FIX_V2 FIXTURES_DIR "/cgroup/v2"
#define NO_ROOT "/nonexistent/memwatch-cgroup-root"
#define ODD "/my \\\"odd\\\" cgroup" /* as a matcher: escaped like the exposition */


void teardown(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

char *temp_config(const char *text)
{
	char *path = mw_write_temp_file("memwatchd.conf", text);

	ck_assert_msg(path != NULL, "cannot write a temporary config");
	return path;
}

struct mw_daemon *start_or_fail(const char *config)
{
	struct mw_daemon *d = mw_start(config, NULL, false);

	ck_assert_msg(d != NULL, "memwatchd with %s did not start serving /metrics (log above)", config);
	return d;
}

double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

void expect(const char *body, const char *name, const char *matcher, double want)
{
	double v = metric_or_fail(body, name, matcher);

	ck_assert_msg(v == want, "%s{%s} is %.17g, want %.17g", name, matcher ? matcher : "", v, want);
}

void expect_absent(const char *body, const char *name, const char *matcher)
{
	ck_assert_msg(!mw_metric(body, name, matcher, NULL, NULL, 0), "%s{%s} present, want absent:\n%s", name,
		      matcher ? matcher : "", body);
}

void expect_promtool_ok(const char *body)
{
	char *out = NULL;
	int rc = mw_promtool_check(body, strlen(body), &out);

	ck_assert_msg(rc == 0, "promtool check metrics exited %d:\n%s\non:\n%s", rc, out ? out : "", body);
	free(out);
}

static size_t count_lines_starting(const char *body, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);
	const char *p;

	for (p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, len) == 0)
			n++;
	return n;
}

/* Starts on a config for the fixture trees and waits until a window has walked them. */
static struct mw_daemon *start_fixtures(const char *v1, const char *v2, unsigned top_k, double discovered,
					char **body)
{
	char text[1024], *conf;
	struct mw_daemon *d;
	double v = NAN;

	snprintf(text, sizeof(text),
		 "[daemon]\nwindow = 500ms\nquiet_read_interval = 0\n\n[collector.cgroup]\nv1_root = %s\nv2_root = %s\ntop_k = %u\n", v1, v2,
		 top_k);
	conf = temp_config(text);
	d = start_or_fail(conf);
	free(conf);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroups_discovered", NULL, POLL_TIMEOUT_MS, mw_pred_eq,
				     discovered, &v),
		      "memwatch_cgroups_discovered is %g, want %g", v, discovered);
	*body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(*body);
	expect(*body, "memwatch_collector_info", "collector=\"cgroup\",state=\"active\",mode=\"cgroupfs\"", 1);
	expect(*body, "memwatch_collector_up", "collector=\"cgroup\"", 1);
	expect_promtool_ok(*body);
	return d;
}

/* A fixture walk is a few hundred microseconds: the walk's wall-clock time is
 * above zero and well inside the 500 ms window, and its CPU time is no more
 * than its wall-clock time (both clocks count in nanoseconds; 1 ms of slack
 * for where each is read). */
static void expect_walk_times(const char *body)
{
	double wall = metric_or_fail(body, "memwatch_cgroup_walk_seconds", NULL);
	double cpu = metric_or_fail(body, "memwatch_cgroup_walk_cpu_seconds", NULL);

	ck_assert_msg(wall > 0 && wall < 0.5, "memwatch_cgroup_walk_seconds %g for a fixture tree", wall);
	ck_assert_msg(cpu > 0 && cpu <= wall + 0.001, "memwatch_cgroup_walk_cpu_seconds %g, walk_seconds %g", cpu, wall);
}

/* "seq value" of memwatch_cgroup_walk_skipped_total, one line per window kept. */
static const char py_skipped[] =
	"import json, sys\n"
	"d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))\n"
	"for w in d['windows']:\n"
	"    s = w['metrics'].get('memwatch_cgroup_walk_skipped_total')\n"
	"    if s:\n"
	"        print('%d %.17g' % (w['seq'], s[0]['value']))\n";

/* Each walk skips exactly the fixture's broken cgroups: the counter grows by
 * that many from each window the ring keeps to the next (by sequence number,
 * so no timing is involved). At least three windows are compared. */
static void expect_skipped_per_window(struct mw_daemon *d, double per_window)
{
	const int pairs_floor = 3;
	int64_t deadline = mw_mono_ms() + POLL_TIMEOUT_MS;
	int pairs;

	do {
		struct mw_http_response resp;
		long long seq, prev_seq = -1;
		double v, prev_v = 0;
		char *out, *line;
		int st;

		ck_assert_int_eq(mw_http_get(d->port, "/api/v1/windows", &resp), 0);
		ck_assert_int_eq(resp.status, 200);
		st = mw_run_python(py_skipped, resp.body, resp.body_len, NULL, &out);
		mw_http_response_free(&resp);
		ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "python3 on /api/v1/windows:\n%s", out);
		pairs = 0;
		for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
			ck_assert_int_eq(sscanf(line, "%lld %lf", &seq, &v), 2);
			if (prev_seq >= 0) {
				ck_assert_msg(seq == prev_seq + 1, "window %lld follows window %lld in the ring", seq, prev_seq);
				ck_assert_msg(v - prev_v == per_window,
					      "memwatch_cgroup_walk_skipped_total grew by %g from window %lld to %lld, want %g",
					      v - prev_v, prev_seq, seq, per_window);
				pairs++;
			}
			prev_seq = seq;
			prev_v = v;
		}
		free(out);
		if (pairs < pairs_floor)
			mw_sleep_ms(200);
	} while (pairs < pairs_floor && mw_mono_ms() < deadline);
	ck_assert_msg(pairs >= pairs_floor, "only %d pairs of windows to compare", pairs);
}

START_TEST(test_fixture_v1)
{
	char *body;
	struct mw_daemon *d = start_fixtures(FIX_V1, NO_ROOT, 50, 3, &body);

	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/\"", 361836544);
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/fixture-rec\"", 28344320);
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"" ODD "\"", 0);
	/* The v1 "no limit" sentinel: no limit series. */
	expect_absent(body, "memwatch_cgroup_memory_limit_bytes", "cgroup=\"/\"");
	expect_absent(body, "memwatch_cgroup_memory_limit_bytes", "cgroup=\"" ODD "\"");
	expect(body, "memwatch_cgroup_memory_limit_bytes", "cgroup=\"/fixture-rec\"", 67108864);
	expect(body, "memwatch_cgroup_memory_usage_ratio", "cgroup=\"/fixture-rec\"", 28344320.0 / 67108864.0);
	expect_absent(body, "memwatch_cgroup_memory_high_bytes", NULL);
	/* usage - total_inactive_file */
	expect(body, "memwatch_cgroup_memory_working_set_bytes", "cgroup=\"/\"", 361836544 - 122859520);
	expect(body, "memwatch_cgroup_memory_working_set_bytes", "cgroup=\"/fixture-rec\"", 28344320);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/fixture-rec\",event=\"failcnt\"", 140);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/fixture-rec\",event=\"oom_kill\"", 1);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/\",event=\"failcnt\"", 0);
	expect_absent(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/fixture-rec\",event=\"max\"");
	expect(body, "memwatch_cgroup_memory_under_oom", "cgroup=\"/fixture-rec\"", 0);
	/* total_workingset_refault_*; v1 has no activations or restores */
	expect(body, "memwatch_cgroup_memory_refaults_total", "cgroup=\"/\",type=\"file\"", 294332);
	expect(body, "memwatch_cgroup_memory_refaults_total", "cgroup=\"/\",type=\"anon\"", 0);
	expect_absent(body, "memwatch_cgroup_memory_refault_activations_total", NULL);
	/* No cgroup2 tree: no pressure. */
	expect_absent(body, "memwatch_cgroup_pressure_memory_some_seconds_total", NULL);
	/* Missing memory.usage_in_bytes: skipped whole, every window. */
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/broken\"");
	expect_absent(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/broken\"");
	/* /broken, every walk. */
	expect_skipped_per_window(d, 1);
	expect(body, "memwatch_cgroup_walk_truncated", NULL, 0);
	expect_walk_times(body);
	/* Nothing folded. */
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"other\"", 0);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"other\",event=\"failcnt\"", 0);
	/* The label as written: quotes escaped. */
	ck_assert_msg(strstr(body, "memwatch_cgroup_memory_usage_bytes{cgroup=\"/my \\\"odd\\\" cgroup\",unit=\"\",namespace=\"\",pod=\"\",container=\"\",container_id=\"\"} 0\n"),
		      "odd cgroup name not escaped as expected:\n%s", body);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_fixture_v2)
{
	char *body;
	struct mw_daemon *d = start_fixtures(NO_ROOT, FIX_V2, 50, 4, &body);

	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/workload\"", 66891776);
	expect(body, "memwatch_cgroup_memory_limit_bytes", "cgroup=\"/workload\"", 67108864);
	expect_absent(body, "memwatch_cgroup_memory_high_bytes", "cgroup=\"/workload\""); /* "max" */
	expect(body, "memwatch_cgroup_memory_working_set_bytes", "cgroup=\"/workload\"", 66891776 - 8654848);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/workload\",event=\"low\"", 0);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/workload\",event=\"max\"", 12);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/workload\",event=\"oom\"", 1);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/workload\",event=\"oom_kill\"", 1);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/workload\",event=\"oom_group_kill\"", 0);
	expect_absent(body, "memwatch_cgroup_memory_events_total", "cgroup=\"/workload\",event=\"failcnt\"");
	expect_absent(body, "memwatch_cgroup_memory_under_oom", NULL);
	expect(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"/workload\"", 1.843212);
	expect(body, "memwatch_cgroup_pressure_memory_full_seconds_total", "cgroup=\"/workload\"", 1.620931);
	expect(body, "memwatch_cgroup_memory_refaults_total", "cgroup=\"/workload\",type=\"file\"", 3412);
	expect(body, "memwatch_cgroup_memory_refaults_total", "cgroup=\"/workload\",type=\"anon\"", 0);
	expect(body, "memwatch_cgroup_memory_refault_activations_total", "cgroup=\"/workload\",type=\"file\"", 1201);
	expect(body, "memwatch_cgroup_memory_refault_restores_total", "cgroup=\"/workload\",type=\"file\"", 610);

	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"" ODD "\"", 8716288);
	expect_absent(body, "memwatch_cgroup_memory_limit_bytes", "cgroup=\"" ODD "\"");
	expect_absent(body, "memwatch_cgroup_memory_usage_ratio", "cgroup=\"" ODD "\"");
	expect(body, "memwatch_cgroup_memory_high_bytes", "cgroup=\"" ODD "\"", 536870912);

	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/system.slice\"", 209715200);
	expect(body, "memwatch_cgroup_memory_high_bytes", "cgroup=\"/system.slice\"", 268435456);
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/system.slice/app.service\"", 104857600);
	expect(body, "memwatch_cgroup_memory_usage_ratio", "cgroup=\"/system.slice/app.service\"", 0.78125);
	expect(body, "memwatch_cgroup_memory_working_set_bytes", "cgroup=\"/system.slice/app.service\"", 0);
	expect_absent(body, "memwatch_cgroup_memory_events_total",
		      "cgroup=\"/system.slice/app.service\",event=\"oom_group_kill\"");

	/* The root has no memory.current; the rest are broken, not memory
	 * cgroups, or a symlink. */
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/\"");
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/broken\"");
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/nomemory\"");
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/link-to-workload\"");
	/* Only /broken is skipped: /nomemory is no memory cgroup, the symlink is not followed. */
	expect_skipped_per_window(d, 1);
	expect_walk_times(body);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_fixture_top_k_other)
{
	char *body;
	struct mw_daemon *d = start_fixtures(NO_ROOT, FIX_V2, 2, 4, &body);

	/* With a limit, by usage/limit: workload (0.997), app.service (0.78). */
	ck_assert(mw_metric(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/workload\"", NULL, NULL, 0));
	ck_assert(mw_metric(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/system.slice/app.service\"", NULL,
			    NULL, 0));
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/system.slice\"");
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"" ODD "\"");
	expect_absent(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"/system.slice\"");
	/* Folded: system.slice and the odd one. */
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"other\"", 209715200 + 8716288);
	expect(body, "memwatch_cgroup_memory_working_set_bytes", "cgroup=\"other\"",
	       (209715200 - 52428800) + (8716288 - 1576960));
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"other\",event=\"high\"", 3);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"other\",event=\"max\"", 0);
	expect_absent(body, "memwatch_cgroup_memory_events_total", "cgroup=\"other\",event=\"failcnt\"");
	expect(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"other\"", 5);
	expect(body, "memwatch_cgroup_pressure_memory_full_seconds_total", "cgroup=\"other\"", 2.5);
	expect_absent(body, "memwatch_cgroup_memory_limit_bytes", "cgroup=\"other\"");
	free(body);
	/* Counters of "other" add window deltas: unchanged files, same values. */
	mw_sleep_ms(1200);
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	expect(body, "memwatch_cgroup_memory_events_total", "cgroup=\"other\",event=\"high\"", 3);
	expect(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"other\"", 5);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_fixture_hybrid)
{
	char *body;
	/* v1: /, fixture-rec, odd (broken skipped); v2: workload, system.slice, app.service. */
	struct mw_daemon *d = start_fixtures(FIX_V1, FIX_V2, 50, 6, &body);

	/* v1 memory data wins, pressure comes from the cgroup2 twin. */
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/\"", 361836544);
	expect(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"/\"", 19.187712);
	expect(body, "memwatch_cgroup_pressure_memory_full_seconds_total", "cgroup=\"/\"", 15.441023);
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"" ODD "\"", 0);
	expect_absent(body, "memwatch_cgroup_memory_high_bytes", "cgroup=\"" ODD "\"");
	expect(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"" ODD "\"", 0);
	expect_absent(body, "memwatch_cgroup_pressure_memory_some_seconds_total", "cgroup=\"/fixture-rec\"");
	expect(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/workload\"", 66891776);
	ck_assert_uint_eq(count_lines_starting(body, "memwatch_cgroup_memory_usage_bytes{cgroup=\"/my \\\"odd\\\""), 1);
	ck_assert_uint_eq(count_lines_starting(body, "memwatch_cgroup_memory_usage_bytes{cgroup=\"/\",unit=\"\",namespace=\"\",pod=\"\",container=\"\",container_id=\"\"}"), 1);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

double real_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

TCase *cgroup_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	return tc;
}

static Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc;

	tc = cgroup_tcase("fixtures");
	tcase_add_test(tc, test_fixture_v1);
	tcase_add_test(tc, test_fixture_v2);
	tcase_add_test(tc, test_fixture_top_k_other);
	tcase_add_test(tc, test_fixture_hybrid);
	suite_add_tcase(s, tc);

	suite_add_tcase(s, faults_tcase()); /* test_cgroup_faults.c */
	suite_add_tcase(s, live_tcase());   /* test_cgroup_live.c */
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "the cgroup integration tests need root: skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	live_init();
	sr = srunner_create(cgroup_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	live_cleanup();
	if (failed)
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	else
		mw_remove_tmp_root();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}