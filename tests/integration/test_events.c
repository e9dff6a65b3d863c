// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of the event channel and the collectors that feed it (oom,
 * memavail, reclaim's pressure instants), and of the JSON API, against real
 * memory pressure in memory cgroups of the host's hierarchy, v1 or cgroup2
 * (a limit in memory.limit_in_bytes or memory.max), on the running kernel.
 * Needs root.
 *
 * Every wait is bounded (polling, never a fixed sleep asserted on). Each test
 * removes what it created: its memory cgroups (named memwatch-ev-<runner
 * pid>-N), its sparse files and the processes it started. A failed assertion
 * ends a test's process at once (check's fork mode): its children die with it
 * (PR_SET_PDEATHSIG), and the runner process sweeps the cgroups and files of
 * its own name prefix after every test case. Processes are only ever
 * signalled by a PID we got from fork(), or listed in a cgroup of our own. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "events_test.h"

/* ---- 1. memcg OOM kill ---- */

static void oom_kill_run(void)
{
	char *conf = temp_config(NULL, "procfs"), *body, *out, matcher[160], buf[256], want_hex[64], pidstr[16];
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_OOM, .comm = OOM_COMM };
	double k0, k1, last = NAN, cg_kills = NAN, t_before, t_after, ts, avail_before, avail_after;
	long long kernel_kills;
	struct cg cg;
	pid_t pid;
	int st;

	body = scrape_or_fail(d);
	k0 = metric_or_fail(body, "memwatch_oom_kills_total", "scope=\"memcg\"");
	if (k0 == 0)
		ck_assert_msg(!mw_metric(body, "memwatch_last_oom_kill_timestamp_seconds", NULL, NULL, NULL, 0),
			      "memwatch_last_oom_kill_timestamp_seconds present before any OOM kill");
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"oom\",state=\"active\"", NULL, NULL, 0),
		      "oom collector not active:\n%s", body);
	free(body);

	cg_create(&cg, CG_LIMIT);
	avail_before = (double)mw_proc_meminfo_kb("MemAvailable") * 1024;
	t_before = real_now();
	pid = spawn_workload(&cg, &w);
	st = wait_child(pid, "the OOM workload");
	t_after = real_now();
	avail_after = (double)mw_proc_meminfo_kb("MemAvailable") * 1024;
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		      "the workload touching 200 MiB in a 64 MiB cgroup was not SIGKILLed: status 0x%x", st);

	ck_assert_msg(mw_poll_metric(d->port, "memwatch_oom_kills_total", "scope=\"memcg\"", POLL_TIMEOUT_MS, mw_pred_gt, k0, &k1),
		      "memwatch_oom_kills_total stayed at %g after the kill", k0);
	/* The kernel's own count: v1 memory.oom_control, v2 memory.events oom_kill. */
	kernel_kills = mw_memcg_oom_kills(cg.path);
	ck_assert_msg(kernel_kills == 1, "the kernel counts %lld OOM kills in %s, want 1", kernel_kills, cg.path);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", cg.label);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_oom_kills_total", matcher, POLL_TIMEOUT_MS, mw_pred_eq,
				     (double)kernel_kills, &cg_kills),
		      "memwatch_cgroup_oom_kills_total{%s} is %g, the kernel counts %lld", matcher, cg_kills, kernel_kills);
	/* Exactly one: still one a couple of windows later. */
	body = scrape_or_fail(d);
	free(next_window(d, body));
	free(body);
	body = scrape_or_fail(d);
	k1 = metric_or_fail(body, "memwatch_oom_kills_total", "scope=\"memcg\"");
	ck_assert_msg(k1 == k0 + 1, "memwatch_oom_kills_total went %g -> %g, want exactly one more", k0, k1);
	ck_assert(metric_or_fail(body, "memwatch_cgroup_oom_kills_total", matcher) == 1.0);
	last = metric_or_fail(body, "memwatch_last_oom_kill_timestamp_seconds", NULL);
	ck_assert_msg(last >= t_before - 2 && last <= t_after + 2,
		      "memwatch_last_oom_kill_timestamp_seconds %.3f is not within 2 s of the kill (%.3f .. %.3f)", last,
		      t_before, t_after);
	free(body);

	/* The event, with the victim's pid, comm and cgroup. */
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = json_fields(d, "/api/v1/events", py_events, (const char *const[]){ "oom_kill", pidstr, NULL });
	ck_assert_msg(field_int(out, "n") == 1, "want exactly one oom_kill event with pid %d:\n%s", (int)pid, out);
	ck_assert(field_int(out, "pid") == pid);
	hex_of(OOM_COMM, want_hex, sizeof(want_hex));
	ck_assert(field(out, "comm_hex", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, want_hex) == 0, "oom_kill comm is hex %s, want %s (" OOM_COMM ")", buf, want_hex);
	hex_of(cg.label, want_hex, sizeof(want_hex));
	ck_assert(field(out, "cgroup_hex", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, want_hex) == 0, "oom_kill cgroup is hex %s, want %s (%s)", buf, want_hex, cg.label);
	ck_assert(field(out, "timestamp", buf, sizeof(buf)));
	ts = strtod(buf, NULL);
	ck_assert_msg(ts >= t_before - 2 && ts <= t_after + 2, "oom_kill event at %.6f, the kill was %.3f .. %.3f", ts,
		      t_before, t_after);
	ck_assert(field(out, "source", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, "procfs") == 0, "oom_kill available_source '%s', want procfs", buf);
	ck_assert(field(out, "available", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, "null") != 0, "oom_kill event without available_bytes");
	{
		/* procfs: the daemon's last 100 ms sample of MemAvailable before the
		 * kill. Between the test's reads around the workload, the victim
		 * held at most its cgroup's limit (64 MiB, plus its page tables);
		 * 16 MiB more for the rest of an otherwise idle machine. */
		double got = strtod(buf, NULL), lo = fmin(avail_before, avail_after) - (64 + 16) * (double)MiB,
		       hi = fmax(avail_before, avail_after) + 16 * (double)MiB;

		ck_assert_msg(got >= lo && got <= hi,
			      "oom_kill available_bytes %.0f, MemAvailable was %.0f before and %.0f after the workload", got,
			      avail_before, avail_after);
	}
	free(out);

	assert_promtool(d, "after an OOM kill");
	cg_destroy(&cg);
	assert_serving(d, "after an OOM kill");
	mw_assert_clean_stop(d);
	free(conf);
}
START_TEST(test_oom_kill)
{
	use_channel(_i);
	oom_kill_run();
}
END_TEST

/* ---- 2. paused consumer, flooded buffer ---- */



START_TEST(test_pause_and_flood)
{
	const double fits = (double)(SMALL_BUFFER_BYTES / EVENT_RECORD_BYTES);
	char *conf = temp_config("event_gate = 0\nevent_buffer_bytes = 4096\ndebug_pause_events = yes\n", "procfs");
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_DD };
	double drop0, drop1, drop2, recv1, recv2, press0, press1, press2, v = NAN;
	bool promtool_done = false;
	int st, scrapes = 0;
	char *body;
	struct cg cg;
	pid_t pid;

	body = scrape_or_fail(d);
	drop0 = metric_or_fail(body, DROPPED, kernel_channel());
	press0 = metric_or_fail(body, PRESSURE, K_MEMCG);
	free(body);
	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();

	/* Storm 1, nobody draining: the 4 KiB buffer fills and the kernel counts drops. */
	pid = spawn_workload(&cg, &w);
	while (!child_done(pid, &st)) {
		ck_assert_msg(scrapes < 100000, "storm never ended");
		body = scrape_or_fail(d);
		v = metric_or_fail(body, RECEIVED, K_MEMCG);
		ck_assert_msg(v <= fits, "received %g memcg_reclaim events while paused, more than fit in 4 KiB (%g)", v,
			      fits);
		free(body);
		assert_serving(d, "during a storm with the consumer paused");
		if (!promtool_done) {
			assert_promtool(d, "during a storm with the consumer paused");
			promtool_done = true;
		}
		scrapes++;
		mw_sleep_ms(20);
	}
	assert_exited_ok(st, "dd in the 64 MiB cgroup");
	ck_assert_msg(mw_poll_metric(d->port, DROPPED, kernel_channel(), POLL_TIMEOUT_MS, mw_pred_gt, drop0, &v),
		      "memwatch_events_dropped_total{channel=\"ringbuf\"} stayed at %g with the consumer paused", v);
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	drop1 = metric_or_fail(body, DROPPED, kernel_channel());
	recv1 = metric_or_fail(body, RECEIVED, K_MEMCG);
	press1 = metric_or_fail(body, PRESSURE, K_MEMCG);
	ck_assert_msg(recv1 <= fits, "received %g memcg_reclaim events while paused (at most %g fit)", recv1, fits);
	ck_assert_msg(press1 - press0 > fits, "only %g memcg reclaim instants in the storm: not a flood",
		      press1 - press0);
	ck_assert_msg(drop1 - drop0 >= press1 - press0 - fits,
		      "%g instants, at most %g buffered, but only %g dropped", press1 - press0, fits, drop1 - drop0);
	ck_assert_msg(metric_or_fail(body, DROPPED, CH_CONSUMER) == 0, "consumer drops with a ring buffer:\n%s", body);
	free(body);
	assert_serving(d, "after a storm with the consumer paused");
	assert_promtool(d, "after a storm with the consumer paused");

	/* Resume draining. */
	body = config_text("500ms", 20, "event_gate = 0\nevent_buffer_bytes = 4096\ndebug_pause_events = no\n",
			   "procfs");
	ck_assert_int_eq(mw_write_file(conf, body), 0);
	free(body);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_config_reloads_total", "result=\"success\"", POLL_TIMEOUT_MS,
				     mw_pred_eq, 1.0, &v),
		      "memwatch_config_reloads_total{result=\"success\"} is %g after SIGHUP", v);
	/* The events that waited in the buffer are taken now. */
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	recv1 = metric_or_fail(body, RECEIVED, K_MEMCG);
	drop1 = metric_or_fail(body, DROPPED, kernel_channel());
	press1 = metric_or_fail(body, PRESSURE, K_MEMCG);
	free(body);

	/* Storm 2, drained: most events arrive, drops (possible with 4 KiB) stay few. */
	pid = spawn_workload(&cg, &w);
	st = wait_child(pid, "dd in the 64 MiB cgroup (second storm)");
	assert_exited_ok(st, "dd in the 64 MiB cgroup (second storm)");
	ck_assert_msg(mw_poll_metric(d->port, RECEIVED, K_MEMCG, POLL_TIMEOUT_MS, mw_pred_gt, recv1 + 49, &v),
		      "memwatch_events_received_total{kind=\"memcg_reclaim\"} went %g -> %g in a drained storm, want +50",
		      recv1, v);
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	recv2 = metric_or_fail(body, RECEIVED, K_MEMCG);
	drop2 = metric_or_fail(body, DROPPED, kernel_channel());
	press2 = metric_or_fail(body, PRESSURE, K_MEMCG);
	ck_assert_msg(recv2 - recv1 >= 50, "received grew by %g, want at least 50", recv2 - recv1);
	ck_assert_msg(drop2 - drop1 < recv2 - recv1,
		      "draining, yet more dropped (%g) than received (%g) in the second storm", drop2 - drop1,
		      recv2 - recv1);
	ck_assert_msg(drop2 - drop1 <= (drop1 - drop0) / 2,
		      "draining, yet %g dropped in the second storm (%g in the paused one)", drop2 - drop1,
		      drop1 - drop0);
	fprintf(stderr, "pause and flood: paused storm %g instants, %g dropped; drained storm %g instants, %g received, %g dropped\n",
		press1 - press0, drop1 - drop0, press2 - press1, recv2 - recv1, drop2 - drop1);
	/* Every instant is accounted for: received, or dropped (no gate). */
	ck_assert_msg(press2 - press1 == (recv2 - recv1) + (drop2 - drop1),
		      "second storm: %g instants != %g received + %g dropped", press2 - press1, recv2 - recv1,
		      drop2 - drop1);
	free(body);
	assert_serving(d, "after a drained storm");
	assert_promtool(d, "after a drained storm");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- 4. the rate gate ---- */

static void rate_gate_run(void)
{
	char *conf = temp_config("event_gate = 1s\n", "procfs"), *body;
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_READ, .passes = 40, .min_ms = 3000 };
	double recv0, gated0, press0, dropped0, consumer0, recv, gated, press, dropped, consumer, storm_s;
	unsigned long long runs0, runs;
	int stats_fd;
	bool promtool_done = false;
	int64_t t0, t1;
	struct cg cg;
	pid_t pid;
	int st;

	stats_fd = bpf_stats_on();
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	runs0 = prog_run_cnt(d->pid, MEMCG_BEGIN_PROG);
	recv0 = metric_or_fail(body, RECEIVED, K_MEMCG);
	gated0 = metric_or_fail(body, GATED, K_MEMCG);
	press0 = metric_or_fail(body, PRESSURE, K_MEMCG);
	dropped0 = metric_or_fail(body, DROPPED, kernel_channel());
	consumer0 = metric_or_fail(body, DROPPED, CH_CONSUMER);
	free(body);
	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();

	/* A storm of a few seconds (passes over the file until 3 s have gone by). */
	t0 = mw_mono_ms();
	pid = spawn_workload(&cg, &w);
	while (!child_done(pid, &st)) {
		ck_assert_msg(mw_mono_ms() - t0 < WORKLOAD_TIMEOUT_MS, "storm did not end");
		if (!promtool_done && mw_mono_ms() - t0 > 500) {
			assert_promtool(d, "during a gated storm");
			promtool_done = true;
		}
		mw_sleep_ms(20);
	}
	t1 = mw_mono_ms();
	assert_exited_ok(st, "the reading workload");
	storm_s = ceil((double)(t1 - t0) / 1000.0);

	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	runs = prog_run_cnt(d->pid, MEMCG_BEGIN_PROG) - runs0;
	close(stats_fd);
	recv = metric_or_fail(body, RECEIVED, K_MEMCG);
	gated = metric_or_fail(body, GATED, K_MEMCG);
	press = metric_or_fail(body, PRESSURE, K_MEMCG) - press0;
	dropped = metric_or_fail(body, DROPPED, kernel_channel()) - dropped0;
	consumer = metric_or_fail(body, DROPPED, CH_CONSUMER) - consumer0;
	fprintf(stderr, "rate gate: %g s storm, %g received, %g gated, %g dropped, %g instants; the kernel ran "
			MEMCG_BEGIN_PROG " %llu times\n",
		storm_s, recv - recv0, gated - gated0, dropped, press, runs);
	ck_assert_msg(recv - recv0 <= storm_s + 2,
		      "event_gate = 1s, yet %g memcg_reclaim events passed in a %g s storm (at most %g)", recv - recv0,
		      storm_s, storm_s + 2);
	ck_assert_msg(recv - recv0 >= 1, "no memcg_reclaim event passed the gate at all");
	ck_assert_msg(gated - gated0 >= 100, "only %g events gated in a %g s storm", gated - gated0, storm_s);
	/* The kernel's count of the program's runs (bpf_stats), not the daemon's
	 * own sum: every run is one instant, which passed, was gated or dropped. */
	ck_assert_msg(press == (double)runs,
		      "pressure_events_total{memcg_reclaim} grew by %g, the kernel ran " MEMCG_BEGIN_PROG " %llu times",
		      press, runs);
	ck_assert_msg((recv - recv0) + (gated - gated0) + dropped + consumer == (double)runs,
		      "received %g + gated %g + dropped %g + %g != %llu runs of " MEMCG_BEGIN_PROG, recv - recv0,
		      gated - gated0, dropped, consumer, runs);
	free(body);
	assert_promtool(d, "after a gated storm");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
START_TEST(test_rate_gate)
{
	use_channel(_i);
	rate_gate_run();
}
END_TEST

/* ---- 5. JSON under hostile input ---- */

#define HOSTILE_HISTORY 12

START_TEST(test_json_hostile)
{
	char *conf = temp_config_full("250ms", HOSTILE_HISTORY, "event_gate = 0\n", "procfs");
	struct mw_daemon *d;
	struct workload w = { .kind = WL_READ, .passes = 1, .comm = HOSTILE_COMM };
	struct window_row rows[HOSTILE_HISTORY + 2];
	char *body, *out, pidstr[16], buf[256];
	double growth;
	size_t n;
	struct cg cg;
	pid_t pid;
	int st;

	d = start_or_fail(conf);

	/* Without arguments: every window kept, which is at most history. Wait
	 * until more windows have passed than are kept, so the ring is full. */
	body = scrape_or_fail(d);
	for (;;) {
		char *next;

		out = json_fields(d, "/api/v1/windows", py_windows, (const char *const[]){ MEMCG_RECLAIMS, NULL });
		n = window_rows(out, rows, HOSTILE_HISTORY + 2);
		ck_assert_msg(n >= 1 && n <= HOSTILE_HISTORY, "/api/v1/windows gave %zu windows, history = %d", n,
			      HOSTILE_HISTORY);
		free(out);
		if (rows[n - 1].seq > HOSTILE_HISTORY + 1)
			break;
		next = next_window(d, body);
		free(body);
		body = next;
	}
	free(body);
	ck_assert_msg(n == HOSTILE_HISTORY, "/api/v1/windows gave %zu windows after more than %d, want %d", n,
		      HOSTILE_HISTORY, HOSTILE_HISTORY);

	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();
	pid = spawn_workload(&cg, &w);
	st = wait_child(pid, "the hostile-comm workload");
	assert_exited_ok(st, "the hostile-comm workload");
	body = scrape_or_fail(d);
	free(next_window(d, body));
	free(body);

	/* Windows covering the storm: oldest first, consecutive, deltas consistent. */
	{
		char path[64];

		snprintf(path, sizeof(path), "/api/v1/windows?windows=%d", HOSTILE_HISTORY - 1);
		out = json_fields(d, path, py_windows, (const char *const[]){ MEMCG_RECLAIMS, NULL });
		n = window_rows(out, rows, HOSTILE_HISTORY + 2);
		ck_assert_msg(n == HOSTILE_HISTORY - 1, "?windows=%d gave %zu windows", HOSTILE_HISTORY - 1, n);
		growth = check_window_rows(rows, n, out);
		ck_assert_msg(growth > 0, "no memcg reclaim in the %zu windows after a storm:\n%s", n, out);
		free(out);
	}
	out = json_fields(d, "/api/v1/windows?windows=2", py_windows, (const char *const[]){ MEMCG_RECLAIMS, NULL });
	n = window_rows(out, rows, HOSTILE_HISTORY + 2);
	ck_assert_msg(n == 2, "?windows=2 gave %zu windows:\n%s", n, out);
	check_window_rows(rows, n, out);
	free(out);
	expect_status(d, "/api/v1/windows?windows=0", 400);
	expect_status(d, "/api/v1/windows?windows=abc", 400);

	/* The hostile comm round-trips, invalid bytes as U+FFFD. */
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = json_fields(d, "/api/v1/events", py_events, (const char *const[]){ "memcg_reclaim", pidstr, NULL });
	ck_assert_msg(field_int(out, "n") >= 1, "no memcg_reclaim event of pid %d:\n%s", (int)pid, out);
	ck_assert(field(out, "comm_hex", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, HOSTILE_COMM_HEX) == 0, "comm came back as hex %s, want %s", buf, HOSTILE_COMM_HEX);
	ck_assert(field(out, "cgroup_hex", buf, sizeof(buf)));
	{
		char want[128];

		hex_of(cg.label, want, sizeof(want));
		ck_assert_msg(strcmp(buf, want) == 0, "memcg_reclaim cgroup hex %s, want %s (%s)", buf, want, cg.label);
	}
	free(out);
	/* The same comm is a label of the per-process reclaim series. */
	assert_promtool(d, "with a hostile comm in the labels");

	assert_serving(d, "after the JSON checks");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_unchecked_fixture(tc, NULL, sweep);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	return tc;
}

static Suite *events_suite(void)
{
	Suite *s = suite_create("memwatchd-events");
	TCase *tc;

	tc = tcase("oom");
	tcase_add_loop_test(tc, test_oom_kill, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase("channel");
	tcase_add_test(tc, test_pause_and_flood);
	tcase_add_loop_test(tc, test_rate_gate, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase("memavail");
	add_memavail_tests(tc); /* test_events_memavail.c */
	suite_add_tcase(s, tc);

	tc = tcase("json");
	tcase_add_test(tc, test_json_hostile);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd event tests need root (BPF, memory cgroups): skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (!mw_memcg_root(&memcg_root, &memcg_v2)) {
		fprintf(stderr, "no memory cgroup hierarchy (v1 memory, or cgroup2 with memory): %s\n",
			mw_under_ci() ? "failing (CI=true)" : "skipping");
		return mw_under_ci() ? EXIT_FAILURE : 77;
	}
	fprintf(stderr, "memory cgroups: %s (%s)\n", memcg_root, memcg_v2 ? "cgroup2" : "v1");
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	sr = srunner_create(events_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	sweep();
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}