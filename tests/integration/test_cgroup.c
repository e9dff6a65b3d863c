// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of the cgroup collector: the real daemon on the fixture
 * trees (exact values), and on a real memory cgroup with a 64 MiB limit and
 * a workload in it. Needs root. */
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

#define FIX_V1 FIXTURES_DIR "/cgroup/v1"
#define FIX_V2 FIXTURES_DIR "/cgroup/v2"
#define NO_ROOT "/nonexistent/memwatch-cgroup-root"
#define ODD "/my \\\"odd\\\" cgroup" /* as a matcher: escaped like the exposition */

#define TEST_TIMEOUT_SEC 120
#define POLL_TIMEOUT_MS 15000
#define MIB (1024.0 * 1024.0)

static void teardown(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

static char *temp_config(const char *text)
{
	char *path = mw_write_temp_file("memwatchd.conf", text);

	ck_assert_msg(path != NULL, "cannot write a temporary config");
	return path;
}

static struct mw_daemon *start_or_fail(const char *config)
{
	struct mw_daemon *d = mw_start(config, NULL, false);

	ck_assert_msg(d != NULL, "memwatchd with %s did not start serving /metrics (log above)", config);
	return d;
}

static double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

static void expect(const char *body, const char *name, const char *matcher, double want)
{
	double v = metric_or_fail(body, name, matcher);

	ck_assert_msg(v == want, "%s{%s} is %.17g, want %.17g", name, matcher ? matcher : "", v, want);
}

static void expect_absent(const char *body, const char *name, const char *matcher)
{
	ck_assert_msg(!mw_metric(body, name, matcher, NULL, NULL, 0), "%s{%s} present, want absent:\n%s", name,
		      matcher ? matcher : "", body);
}

static void expect_promtool_ok(const char *body)
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
		 "[daemon]\nwindow = 500ms\n\n[collector.cgroup]\nv1_root = %s\nv2_root = %s\ntop_k = %u\n", v1, v2,
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

/* Each walk skips exactly the fixture's broken cgroups: between two windows
 * the counter grows by that many per window in between (their end
 * timestamps are 500 ms apart, give or take scheduling). */
static void expect_skipped_per_window(struct mw_daemon *d, double per_window)
{
	double t0, t1, s0, s1, windows;
	char *body = mw_scrape(d->port), *next;

	ck_assert_ptr_nonnull(body);
	t0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	s0 = metric_or_fail(body, "memwatch_cgroup_walk_skipped_total", NULL);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_window_end_timestamp_seconds", NULL, POLL_TIMEOUT_MS, mw_pred_gt,
				     t0, &t1),
		      "no window after %f", t0);
	next = mw_scrape(d->port);
	ck_assert_ptr_nonnull(next);
	t1 = metric_or_fail(next, "memwatch_window_end_timestamp_seconds", NULL);
	s1 = metric_or_fail(next, "memwatch_cgroup_walk_skipped_total", NULL);
	windows = round((t1 - t0) / 0.5);
	ck_assert_msg(windows >= 1 && fabs(t1 - t0 - windows * 0.5) < 0.2, "window ends %f and %f", t0, t1);
	ck_assert_msg(s1 - s0 == per_window * windows,
		      "memwatch_cgroup_walk_skipped_total grew by %g over %g windows, want %g per window", s1 - s0,
		      windows, per_window);
	expect_walk_times(next);
	free(body);
	free(next);
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

/* ---- a real memory cgroup ---- */

static char live_root[256];   /* where the memory controller is */
static bool live_v1;
static char live_path[512];   /* our cgroup */
static char live_name[64];    /* "/memwatch-cgtest-PID" */
static char sparse_path[512];
static char child_path[600];  /* our cgroup's child, in the sources test */
/* Empty children beside it: more records than a cgroup iterator's seq_file
 * holds in one read (32 KiB, ~580 of them). */
#define BULK_CGROUPS 700

static bool find_live_root(void)
{
	char *ctl;

	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0) {
		snprintf(live_root, sizeof(live_root), "/sys/fs/cgroup/memory");
		live_v1 = true;
		return true;
	}
	ctl = mw_read_file("/sys/fs/cgroup/cgroup.subtree_control", NULL);
	if (ctl && strstr(ctl, "memory")) {
		snprintf(live_root, sizeof(live_root), "/sys/fs/cgroup");
		live_v1 = false;
		free(ctl);
		return true;
	}
	free(ctl);
	return false;
}

/* Kills whatever is left in our cgroup and removes it; also after a failed
 * test (an unchecked fixture runs in the parent process). */
static void live_cleanup(void)
{
	char procs[700], *text;
	int i;

	if (!live_path[0])
		return;
	if (child_path[0]) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", child_path);
		text = mw_read_file(procs, NULL);
		for (char *p = text ? strtok(text, "\n") : NULL; p; p = strtok(NULL, "\n"))
			kill((pid_t)atoi(p), SIGKILL);
		free(text);
		for (i = 0; i < 50 && rmdir(child_path) < 0 && errno != ENOENT; i++)
			mw_sleep_ms(100);
		/* The sources test's empty children, if it stopped half-way. */
		for (i = 0; i < BULK_CGROUPS; i++) {
			snprintf(procs, sizeof(procs), "%s/bulk%d", live_path, i);
			(void)rmdir(procs);
		}
		snprintf(procs, sizeof(procs), "%s/late", live_path);
		(void)rmdir(procs);
		snprintf(procs, sizeof(procs), "%s/renamed", live_path);
		(void)rmdir(procs);
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", live_path);
	for (i = 0; i < 50; i++) {
		text = mw_read_file(procs, NULL);
		if (!text)
			break; /* gone */
		for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
			kill((pid_t)atoi(p), SIGKILL);
		free(text);
		if (rmdir(live_path) == 0 || errno == ENOENT)
			break;
		mw_sleep_ms(100);
	}
	if (sparse_path[0])
		unlink(sparse_path);
}

/* cgroupfs files take one write(2); no temp file and rename as mw_write_file does. */
static int write_cgroup_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = -errno;
	close(fd);
	return r;
}

static void join_cgroup(void)
{
	char procs[600], pid[32];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", live_path);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write_cgroup_file(procs, pid) < 0)
		_exit(3);
}

/* A child in the cgroup holding 48 MiB of touched anonymous memory until killed. */
static pid_t spawn_anon_holder(void)
{
	int fds[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t len = 48u << 20;
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		join_cgroup();
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(4);
		memset(p, 0x5a, len);
		(void)!write(fds[1], "x", 1);
		for (;;)
			pause();
	}
	close(fds[1]);
	ck_assert_msg(read(fds[0], &c, 1) == 1, "the 48 MiB child died before touching its memory");
	close(fds[0]);
	return pid;
}

/* A child in the cgroup reading a 1 GiB sparse file: page cache far over the limit. */
static void run_reader(void)
{
	int status, fd;
	pid_t pid;

	snprintf(sparse_path, sizeof(sparse_path), "%s/sparse-1g", mw_tmp_root());
	fd = open(sparse_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 1LL << 30), 0);
	close(fd);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static char chunk[1 << 20];
		ssize_t n;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		join_cgroup();
		fd = open(sparse_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(5);
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			;
		_exit(n < 0 ? 6 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader failed: status 0x%x", status);
}

/* Wall clock, as memwatch_window_end_timestamp_seconds. */
static double now_real_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(test_live_cgroup)
{
	char text[1024], matcher[256], limit_file[600], *conf, *body;
	const char *event;
	struct mw_daemon *d;
	double v = NAN, window, t0;
	pid_t holder;
	int status;

	if (!find_live_root()) {
		fprintf(stderr, "no writable memory cgroup hierarchy: live test skipped\n");
		return;
	}
	snprintf(live_path, sizeof(live_path), "%s%s", live_root, live_name);
	ck_assert_msg(mkdir(live_path, 0755) == 0, "mkdir %s: %m", live_path);
	snprintf(limit_file, sizeof(limit_file), "%s/%s", live_path, live_v1 ? "memory.limit_in_bytes" : "memory.max");
	ck_assert_int_eq(write_cgroup_file(limit_file, "67108864\n"), 0);

	/* Only ours: other tests may run cgroups of their own meanwhile. */
	snprintf(text, sizeof(text), "[daemon]\nwindow = 1s\n\n[collector.cgroup]\ninclude = %s\n", live_name);
	conf = temp_config(text);
	d = start_or_fail(conf);
	free(conf);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", live_name);

	holder = spawn_anon_holder();
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_memory_usage_bytes", matcher, POLL_TIMEOUT_MS,
				     mw_pred_gt, 46 * MIB, &v),
		      "usage of %s is %g, want > 46 MiB", live_name, v);
	run_reader();

	event = live_v1 ? "failcnt" : "max";
	snprintf(text, sizeof(text), "cgroup=\"%s\",event=\"%s\"", live_name, event);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_memory_events_total", text, POLL_TIMEOUT_MS, mw_pred_gt,
				     0, &v),
		      "memwatch_cgroup_memory_events_total{%s} is %g, want > 0", text, v);
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	expect(body, "memwatch_cgroup_memory_limit_bytes", matcher, 67108864);
	v = metric_or_fail(body, "memwatch_cgroup_memory_usage_bytes", matcher);
	ck_assert_msg(v > 46 * MIB && v <= 64 * MIB, "usage %g not between 46 and 64 MiB", v);
	v = metric_or_fail(body, "memwatch_cgroup_memory_working_set_bytes", matcher);
	ck_assert_msg(v > 40 * MIB && v <= 64 * MIB, "working set %g not between 40 and 64 MiB", v);
	ck_assert(metric_or_fail(body, "memwatch_cgroup_memory_usage_ratio", matcher) > 0.7);
	/* Only our cgroup is included. */
	expect(body, "memwatch_cgroups_discovered", NULL, 1);
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/\"");
	expect_promtool_ok(body);
	window = metric_or_fail(body, "memwatch_window_seconds", NULL);
	if (mw_metric(body, "memwatch_collector_up", "collector=\"reclaim\"", &v, NULL, 0) && v == 1) {
		free(body);
		ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_reclaims_total", matcher, POLL_TIMEOUT_MS,
					     mw_pred_gt, 0, &v),
			      "memwatch_cgroup_reclaims_total{%s} is %g, want > 0", matcher, v);
	} else {
		fprintf(stderr, "reclaim collector not up: memwatch_cgroup_reclaims_total not checked\n");
		free(body);
	}

	/* Remove it: its series go within two windows. */
	kill(holder, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	live_cleanup();
	ck_assert_msg(access(live_path, F_OK) < 0, "cannot remove %s", live_path);
	/* Judged by the windows' own end times, not by when a scrape came
	 * back: on a loaded machine scrapes lag, windows do not move. */
	t0 = now_real_sec();
	for (;;) {
		double end;
		bool present;

		body = mw_scrape(d->port);
		ck_assert_ptr_nonnull(body);
		present = mw_metric(body, "memwatch_cgroup_memory_usage_bytes", matcher, NULL, NULL, 0);
		end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
		if (!present) {
			ck_assert_msg(end - t0 <= 2 * window, "%s was still in the window that ended %.2f s after rmdir",
				      live_name, end - t0);
			expect(body, "memwatch_cgroups_discovered", NULL, 0);
			expect_promtool_ok(body);
		} else {
			ck_assert_msg(end - t0 <= 2 * window, "%s still exported in the window that ended %.2f s after rmdir",
				      live_name, end - t0);
		}
		free(body);
		if (!present)
			break;
		mw_sleep_ms(50);
	}
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- the BPF cgroup iterator and cgroupfs on the same tree ---- */

/* A child of ours with a 16 MiB limit, killed by the memcg OOM killer
 * while touching 32 MiB: failcnt and oom_kill of its own. */
static void run_oom_victim(void)
{
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char procs[700], me[32];
		size_t len = 32u << 20;
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", child_path);
		snprintf(me, sizeof(me), "%d\n", getpid());
		if (write_cgroup_file(procs, me) < 0)
			_exit(3);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(4);
		memset(p, 0x5a, len);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "the 32 MiB child of a 16 MiB cgroup was not OOM-killed: status 0x%x", status);
}

/* One v1 cgroup as its own files say, read by the test: the independent count. */
struct v1_files {
	double usage, limit, failcnt, oom_kill, under_oom;
};

static double file_number(const char *dir, const char *name, const char *key)
{
	char path[700], *text, *p;
	double v;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = mw_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	p = text;
	if (key) {
		p = strstr(text, key);
		ck_assert_msg(p != NULL, "%s has no %s", path, key);
		p += strlen(key);
	}
	v = strtod(p, NULL);
	free(text);
	return v;
}

static struct v1_files read_v1_files(const char *dir)
{
	return (struct v1_files){
		.usage = file_number(dir, "memory.usage_in_bytes", NULL),
		.limit = file_number(dir, "memory.limit_in_bytes", NULL),
		.failcnt = file_number(dir, "memory.failcnt", NULL),
		.oom_kill = file_number(dir, "memory.oom_control", "oom_kill "),
		.under_oom = file_number(dir, "memory.oom_control", "under_oom "),
	};
}

/* The daemon's figures for the cgroup named name equal the files'; else why says which not. */
static bool daemon_matches(const char *body, const char *name, const struct v1_files *f, char *why, size_t len)
{
	char m[256], me[300];
	double usage = NAN, limit = NAN, failcnt = NAN, oom_kill = NAN, under_oom = NAN;

	snprintf(m, sizeof(m), "cgroup=\"%s\"", name);
	mw_metric(body, "memwatch_cgroup_memory_usage_bytes", m, &usage, NULL, 0);
	mw_metric(body, "memwatch_cgroup_memory_limit_bytes", m, &limit, NULL, 0);
	mw_metric(body, "memwatch_cgroup_memory_under_oom", m, &under_oom, NULL, 0);
	snprintf(me, sizeof(me), "%s,event=\"failcnt\"", m);
	mw_metric(body, "memwatch_cgroup_memory_events_total", me, &failcnt, NULL, 0);
	snprintf(me, sizeof(me), "%s,event=\"oom_kill\"", m);
	mw_metric(body, "memwatch_cgroup_memory_events_total", me, &oom_kill, NULL, 0);
	snprintf(why, len, "%s: usage %.0f (file %.0f), limit %.0f (%.0f), failcnt %.0f (%.0f), oom_kill %.0f (%.0f), "
		 "under_oom %.0f (%.0f)", name, usage, f->usage, limit, f->limit, failcnt, f->failcnt, oom_kill,
		 f->oom_kill, under_oom, f->under_oom);
	return usage == f->usage && limit == f->limit && failcnt == f->failcnt && oom_kill == f->oom_kill &&
	       under_oom == f->under_oom;
}

static void expect_cgroup_mode(const char *body, const char *mode)
{
	char matcher[128];
	double v = NAN;

	snprintf(matcher, sizeof(matcher), "collector=\"cgroup\",state=\"active\",mode=\"%s\"", mode);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, &v, NULL, 0) && v == 1,
		      "memwatch_collector_info{%s} is not 1", matcher);
}

static bool exports_cgroup(int port, const char *name)
{
	char matcher[320], *body = mw_scrape(port);
	bool found;

	ck_assert_ptr_nonnull(body);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", name);
	found = mw_metric(body, "memwatch_cgroup_memory_usage_bytes", matcher, NULL, NULL, 0);
	free(body);
	return found;
}

/* Does op on our cgroup's child (mkdir /late, rename /late to /renamed,
 * rmdir /renamed), then waits up to two windows (and a scrape) for child
 * (a path below ours) to be exported, or not, by both daemons. */
static void expect_tree_change(struct mw_daemon *a, struct mw_daemon *b, const char *op, const char *child,
			       bool present)
{
	char path[700], from[700], name[300];
	int64_t t0;
	bool a_ok = false, b_ok = false;

	snprintf(path, sizeof(path), "%s%s", live_path, child);
	snprintf(name, sizeof(name), "%s%s", live_name, child);
	if (strcmp(op, "mkdir") == 0) {
		ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %m", path);
	} else if (strcmp(op, "rename") == 0 && present) {
		snprintf(from, sizeof(from), "%s/late", live_path);
		ck_assert_msg(rename(from, path) == 0, "rename %s %s: %m", from, path);
	} else if (strcmp(op, "rmdir") == 0) {
		ck_assert_msg(rmdir(path) == 0, "rmdir %s: %m", path);
	}
	t0 = mw_mono_ms();
	while (!(a_ok && b_ok) && mw_mono_ms() - t0 < 2500) {
		a_ok = exports_cgroup(a->port, name) == present;
		b_ok = exports_cgroup(b->port, name) == present;
		if (!(a_ok && b_ok))
			mw_sleep_ms(100);
	}
	ck_assert_msg(a_ok && b_ok, "%s: %s %s within 2.5 s: source=bpf %s, source=cgroupfs %s", op, name,
		      present ? "exported" : "gone", a_ok ? "yes" : "no", b_ok ? "yes" : "no");
}

/* A window of d that read every cgroup after its read number *reads (the
 * iterator's side exports an older read for up to refresh_interval windows
 * while nothing moved): memwatch_cgroup_reads_total past it, age 0. */
static char *scrape_fresh_read(struct mw_daemon *d, double *reads)
{
	int64_t t0 = mw_mono_ms();

	for (;;) {
		char *body = mw_scrape(d->port);
		double n, age;

		ck_assert_ptr_nonnull(body);
		n = metric_or_fail(body, "memwatch_cgroup_reads_total", NULL);
		age = metric_or_fail(body, "memwatch_cgroup_age_seconds", NULL);
		if (n > *reads && age == 0) {
			*reads = n;
			return body;
		}
		free(body);
		ck_assert_msg(mw_mono_ms() - t0 < POLL_TIMEOUT_MS, "no read of the cgroups after read %.0f in %d ms",
			      *reads, POLL_TIMEOUT_MS);
		mw_sleep_ms(100);
	}
}

/* source = bpf (the cgroup iterator, on a v1 tree) and source = cgroupfs
 * give every cgroup of the same tree the figures its own files print. */
START_TEST(test_live_sources_agree)
{
	char text[1024], child_name[128], why_bpf[512], why_fs[512], *conf;
	struct mw_daemon *bpf, *fs;
	pid_t holder;
	int status, round;
	double reads_bpf = 0, reads_fs = 0;
	bool ok = false;

	if (!find_live_root() || !live_v1) {
		/* The iterator serves v1 trees only; a cgroup2 host has no second source to compare. */
		fprintf(stderr, "no writable v1 memory hierarchy: sources test skipped\n");
		return;
	}
	snprintf(live_path, sizeof(live_path), "%s%s", live_root, live_name);
	snprintf(child_path, sizeof(child_path), "%s/victim", live_path);
	snprintf(child_name, sizeof(child_name), "%s/victim", live_name);
	ck_assert_msg(mkdir(live_path, 0755) == 0, "mkdir %s: %m", live_path);
	snprintf(text, sizeof(text), "%s/memory.limit_in_bytes", live_path);
	ck_assert_int_eq(write_cgroup_file(text, "67108864\n"), 0);
	ck_assert_msg(mkdir(child_path, 0755) == 0, "mkdir %s: %m", child_path);
	snprintf(text, sizeof(text), "%s/memory.limit_in_bytes", child_path);
	ck_assert_int_eq(write_cgroup_file(text, "16777216\n"), 0);
	for (int i = 0; i < BULK_CGROUPS; i++) {
		snprintf(text, sizeof(text), "%s/bulk%d", live_path, i);
		ck_assert_msg(mkdir(text, 0755) == 0, "mkdir %s: %m", text);
	}
	holder = spawn_anon_holder();
	run_reader();
	run_oom_victim();

	snprintf(text, sizeof(text), "[daemon]\nwindow = 1s\n\n[collector.cgroup]\ninclude = %s %s/*\ntop_k = 1000\nsource = bpf\n",
		 live_name, live_name);
	conf = temp_config(text);
	bpf = start_or_fail(conf);
	free(conf);
	snprintf(text, sizeof(text),
		 "[daemon]\nwindow = 1s\n\n[collector.cgroup]\ninclude = %s %s/*\ntop_k = 1000\nsource = cgroupfs\n", live_name,
		 live_name);
	conf = temp_config(text);
	fs = start_or_fail(conf);
	free(conf);

	/* Both windows are read after the workload settled; a round that saw a
	 * window from before (or a page charged meanwhile) is tried again. */
	for (round = 0; round < 10 && !ok; round++) {
		struct v1_files parent, child;
		char *body_bpf, *body_fs;

		mw_sleep_ms(1100);
		body_bpf = scrape_fresh_read(bpf, &reads_bpf);
		body_fs = scrape_fresh_read(fs, &reads_fs);
		ck_assert_ptr_nonnull(body_bpf);
		ck_assert_ptr_nonnull(body_fs);
		if (round == 0) {
			double n_bpf, n_fs, open_bpf, open_fs;

			expect_cgroup_mode(body_bpf, "iter");
			expect_cgroup_mode(body_fs, "cgroupfs");
			/* The iterator's counters leave memory.stat (and a twin's
			 * memory.pressure) to cgroupfs; without it every cgroup keeps
			 * its five files open. */
			n_bpf = metric_or_fail(body_bpf, "memwatch_cgroups_discovered", NULL);
			n_fs = metric_or_fail(body_fs, "memwatch_cgroups_discovered", NULL);
			ck_assert_msg(n_bpf == BULK_CGROUPS + 2 && n_fs == BULK_CGROUPS + 2,
				      "cgroups discovered: source=bpf %.0f, source=cgroupfs %.0f, want %d", n_bpf, n_fs,
				      BULK_CGROUPS + 2);
			open_bpf = metric_or_fail(body_bpf, "memwatch_cgroup_open_files", NULL);
			open_fs = metric_or_fail(body_fs, "memwatch_cgroup_open_files", NULL);
			ck_assert_msg(open_bpf <= 2 * n_bpf && open_fs >= 5 * n_fs,
				      "files kept open: source=bpf %.0f (want at most 2 per cgroup), source=cgroupfs %.0f "
				      "(want 5 or more per cgroup) for %.0f cgroups", open_bpf, open_fs, n_bpf);
		}
		parent = read_v1_files(live_path);
		child = read_v1_files(child_path);
		ck_assert_msg(child.oom_kill == 1 && child.failcnt > 0, "the victim's cgroup: oom_kill %.0f, failcnt %.0f",
			      child.oom_kill, child.failcnt);
		ok = daemon_matches(body_bpf, live_name, &parent, why_bpf, sizeof(why_bpf)) &&
		     daemon_matches(body_bpf, child_name, &child, why_bpf, sizeof(why_bpf)) &&
		     daemon_matches(body_fs, live_name, &parent, why_fs, sizeof(why_fs)) &&
		     daemon_matches(body_fs, child_name, &child, why_fs, sizeof(why_fs));
		free(body_bpf);
		free(body_fs);
	}
	ck_assert_msg(ok, "after 10 windows the daemons still differ from cgroupfs: bpf: %s; cgroupfs: %s", why_bpf,
		      why_fs);

	/* The tree changes under the daemons: a cgroup made, renamed (v1 allows
	 * it), removed. Each shows within two windows on both, though the BPF
	 * side reads an unchanged tree again without walking it. */
	expect_tree_change(bpf, fs, "mkdir", "/late", true);
	expect_tree_change(bpf, fs, "rename", "/renamed", true);
	expect_tree_change(bpf, fs, "rename", "/late", false);
	expect_tree_change(bpf, fs, "rmdir", "/renamed", false);
	kill(holder, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	mw_assert_clean_stop(bpf);
	mw_assert_clean_stop(fs);
	live_cleanup();
}
END_TEST

static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	return tc;
}

/* ---- top_k and "other" for processes, with values that change ---- */

/* A process in a fake /proc (the faults collector with source = procfs reads
 * PROC_ROOT/PID/stat): pid, comm, start time, minor and major faults. */
struct fake_proc {
	int pid;
	const char *comm;
	unsigned long long start, minflt, majflt;
	bool gone;
};

static void fake_proc_write(const char *root, const struct fake_proc *p)
{
	char dir[512], path[600], text[512];

	snprintf(dir, sizeof(dir), "%s/%d", root, p->pid);
	snprintf(path, sizeof(path), "%s/stat", dir);
	if (p->gone) {
		unlink(path);
		rmdir(dir);
		return;
	}
	ck_assert(mkdir(dir, 0755) == 0 || errno == EEXIST);
	/* Fields 10 minflt, 12 majflt, 22 starttime (the generation). */
	snprintf(text, sizeof(text),
		 "%d (%s) S 1 %d %d 0 -1 4194304 %llu 0 %llu 0 0 0 0 0 20 0 1 0 %llu 3133440 394 "
		 "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 p->pid, p->comm, p->pid, p->pid, p->minflt, p->majflt, p->start);
	ck_assert_int_eq(mw_write_file(path, text), 0);
}

static double real_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The first window collected after `after` (its end timestamp is taken before
 * the collectors run); fails if a later one is all we get to see. */
static char *first_window_after(struct mw_daemon *d, double after, double window)
{
	for (int i = 0; i < 2000; i++) {
		char *body = mw_scrape(d->port);
		double end;

		ck_assert_ptr_nonnull(body);
		end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
		if (end > after) {
			ck_assert_msg(end <= after + window * 1.5,
				      "missed the first window after %.3f (got one ending %.3f): the host is too busy", after,
				      end);
			return body;
		}
		free(body);
		mw_sleep_ms(10);
	}
	ck_abort_msg("no window after %.3f", after);
	return NULL;
}

static void expect_proc(const char *body, const struct fake_proc *p, bool exported)
{
	char m[96];

	snprintf(m, sizeof(m), "pid=\"%d\",comm=\"%s\"", p->pid, p->comm);
	if (!exported) {
		expect_absent(body, "memwatch_process_minor_faults_total", m);
		return;
	}
	expect(body, "memwatch_process_minor_faults_total", m, (double)p->minflt);
	expect(body, "memwatch_process_major_faults_total", m, (double)p->majflt);
}

/* Per window the top_k processes by faults in that window (major first) are
 * exported with their own counters, and the window deltas of the rest add up
 * in pid="other": every step changes the values, and with them who is
 * exported; each expected figure follows from the fake /proc alone. */
/* A daemon whose only collector reads the processes of a fake /proc at
 * root (made here, with procs written into it), top_k of them exported. */
static struct mw_daemon *start_fake_proc_daemon(const char *root, const struct fake_proc *procs, size_t n,
						unsigned top_k, char **conf)
{
	char text[1024];
	size_t i;

	ck_assert(mkdir(root, 0755) == 0 || errno == EEXIST);
	for (i = 0; i < n; i++)
		fake_proc_write(root, &procs[i]);
	snprintf(text, sizeof(text),
		 "[daemon]\nwindow = 1s\n[collector.faults]\nsource = procfs\nproc_root = %s\ntop_k = %u\n"
		 "series_ttl = 0\n"
		 /* No BPF: nothing else matters here. */
		 "[collector.kswapd]\nenabled = no\n[collector.reclaim]\nenabled = no\n[collector.oom]\nenabled = no\n"
		 "[collector.memavail]\nenabled = no\n[collector.cgroup]\nenabled = no\n"
		 "[collector.compaction]\nenabled = no\n",
		 root, top_k);
	*conf = temp_config(text);
	return start_or_fail(*conf);
}

/* A process whose stat cannot be read, though it is there, keeps its row; a
 * /proc that cannot be opened fails the window and leaves every row as it
 * was. Dropped, the rows would come back as new processes and their lifetime
 * counts would be added to pid="other" a second time. */
START_TEST(test_faults_unreadable_kept)
{
	const double window = 1.0;
	struct fake_proc p[3] = {
		{ 201, "aa", 1000, 5000, 0 }, { 202, "bb", 1001, 3000, 0 }, { 203, "cc", 1002, 1000, 0 },
	};
	char root[512], away[600], stat[600], *conf, *body;
	double other_minor = 0, t;
	struct mw_daemon *d;
	size_t i;

	snprintf(root, sizeof(root), "%s/fake-proc-unreadable", mw_tmp_root());
	snprintf(away, sizeof(away), "%s.away", root);
	snprintf(stat, sizeof(stat), "%s/%d/stat", root, p[1].pid);
	t = real_now();
	d = start_fake_proc_daemon(root, p, 3, 1, &conf);

	/* 1. aa leads; bb and cc go to other. */
	body = first_window_after(d, t, window);
	expect_proc(body, &p[0], true);
	other_minor += 3000 + 1000;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 2. bb's stat is a directory (read: EISDIR), cc faults 10: bb is kept,
	 * cc is exported. */
	ck_assert_int_eq(unlink(stat), 0);
	ck_assert_int_eq(mkdir(stat, 0755), 0);
	p[2].minflt += 10;
	t = real_now();
	fake_proc_write(root, &p[2]);
	body = first_window_after(d, t, window);
	expect(body, "memwatch_collector_up", "collector=\"faults\"", 1);
	expect(body, "memwatch_fault_tracked_processes", NULL, 3);
	expect_proc(body, &p[2], true);
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 3. bb readable again with 7 more, aa 100 more: aa leads, bb's 7 (not
	 * its 3007) go to other. */
	ck_assert_int_eq(rmdir(stat), 0);
	p[0].minflt += 100;
	p[1].minflt += 7;
	t = real_now();
	fake_proc_write(root, &p[0]);
	fake_proc_write(root, &p[1]);
	body = first_window_after(d, t, window);
	expect_proc(body, &p[0], true);
	other_minor += 7;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 4. No /proc at all: the window has no faults batch, an error counted. */
	ck_assert_int_eq(rename(root, away), 0);
	t = real_now();
	body = first_window_after(d, t, window);
	expect(body, "memwatch_collector_up", "collector=\"faults\"", 0);
	ck_assert_double_ge(metric_or_fail(body, "memwatch_collector_errors_total", "collector=\"faults\""), 1);
	expect_absent(body, "memwatch_process_minor_faults_total", "pid=\"other\"");
	free(body);

	/* 5. Back, aa 1 more, bb 2, cc 3: cc leads, aa's and bb's 3 go to other. */
	ck_assert_int_eq(rename(away, root), 0);
	p[0].minflt += 1;
	p[1].minflt += 2;
	p[2].minflt += 3;
	t = real_now();
	for (i = 0; i < 3; i++)
		fake_proc_write(root, &p[i]);
	body = first_window_after(d, t, window);
	expect(body, "memwatch_collector_up", "collector=\"faults\"", 1);
	expect(body, "memwatch_fault_tracked_processes", NULL, 3);
	expect_proc(body, &p[2], true);
	other_minor += 3;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

START_TEST(test_faults_top_k_other)
{
	const double window = 1.0;
	struct fake_proc p[5] = {
		{ 101, "aa", 1000, 4000, 0 }, { 102, "bb", 1001, 3000, 0 }, { 103, "cc", 1002, 2000, 0 },
		{ 104, "dd", 1003, 1000, 0 }, { 105, "ee", 1004, 0, 0, true },
	};
	char root[512], *conf, *body;
	double other_minor = 0, other_major = 0, t;
	struct mw_daemon *d;
	size_t i;

	snprintf(root, sizeof(root), "%s/fake-proc", mw_tmp_root());
	t = real_now();
	d = start_fake_proc_daemon(root, p, 5, 2, &conf);

	/* 1. Every process is new: its delta is its whole count. aa and bb lead;
	 * cc and dd go to other. */
	body = first_window_after(d, t, window);
	expect(body, "memwatch_collector_info", "collector=\"faults\",state=\"active\",mode=\"procfs\"", 1);
	expect(body, "memwatch_fault_tracked_processes", NULL, 4);
	expect_proc(body, &p[0], true);
	expect_proc(body, &p[1], true);
	expect_proc(body, &p[2], false);
	expect_proc(body, &p[3], false);
	other_minor += 2000 + 1000;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	expect(body, "memwatch_process_major_faults_total", "pid=\"other\"", other_major);
	free(body);

	/* 2. Only cc and dd fault: they are exported (dd's 700 before cc's 500);
	 * aa and bb did not change (series_ttl = 0) and add nothing to other. */
	p[2].minflt += 500;
	p[3].minflt += 700;
	t = real_now();
	fake_proc_write(root, &p[2]);
	fake_proc_write(root, &p[3]);
	body = first_window_after(d, t, window);
	expect_proc(body, &p[0], false);
	expect_proc(body, &p[1], false);
	expect_proc(body, &p[2], true);
	expect_proc(body, &p[3], true);
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 3. Major faults rank first: aa's 2 major beat bb's 5000 minor, bb beats
	 * cc's 1; cc's delta (1 minor) goes to other. */
	p[0].majflt += 2;
	p[0].minflt += 10;
	p[1].minflt += 5000;
	p[2].minflt += 1;
	t = real_now();
	for (i = 0; i < 3; i++)
		fake_proc_write(root, &p[i]);
	body = first_window_after(d, t, window);
	expect_proc(body, &p[0], true);
	expect_proc(body, &p[1], true);
	expect_proc(body, &p[2], false);
	expect_proc(body, &p[3], false);
	other_minor += 1;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	expect(body, "memwatch_process_major_faults_total", "pid=\"other\"", other_major);
	free(body);

	/* 4. dd exits, ee starts with 50 (counted from zero), aa's pid is reused
	 * by a new process (another start time: its 7 minor and 1 major count
	 * from zero), cc faults 100: cc and aa's successor lead (a major fault),
	 * ee's 50 go to other. */
	p[3].gone = true;
	p[4].gone = false;
	p[4].minflt = 50;
	p[0] = (struct fake_proc){ 101, "aa2", 2000, 7, 1 };
	p[2].minflt += 100;
	t = real_now();
	for (i = 0; i < 5; i++)
		fake_proc_write(root, &p[i]);
	body = first_window_after(d, t, window);
	expect(body, "memwatch_fault_tracked_processes", NULL, 4);
	expect_proc(body, &p[0], true);
	expect_proc(body, &p[2], true);
	expect_proc(body, &p[1], false);
	expect_proc(body, &p[4], false);
	expect_absent(body, "memwatch_process_minor_faults_total", "pid=\"104\"");
	other_minor += 50;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	expect(body, "memwatch_process_major_faults_total", "pid=\"other\"", other_major);
	expect_promtool_ok(body);
	free(body);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

static Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc;

	tc = tcase("fixtures");
	tcase_add_test(tc, test_fixture_v1);
	tcase_add_test(tc, test_fixture_v2);
	tcase_add_test(tc, test_fixture_top_k_other);
	tcase_add_test(tc, test_fixture_hybrid);
	suite_add_tcase(s, tc);

	tc = tcase("faults");
	tcase_add_test(tc, test_faults_top_k_other);
	tcase_add_test(tc, test_faults_unreadable_kept);
	suite_add_tcase(s, tc);

	tc = tcase("live");
	tcase_add_unchecked_fixture(tc, NULL, live_cleanup);
	tcase_add_test(tc, test_live_cgroup);
	tcase_add_test(tc, test_live_sources_agree);
	suite_add_tcase(s, tc);
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
	/* Known to the parent, so that its unchecked teardown can clean up after a failed child. */
	snprintf(live_name, sizeof(live_name), "/memwatch-cgtest-%d", (int)getpid());
	if (find_live_root())
		snprintf(live_path, sizeof(live_path), "%s%s", live_root, live_name);
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
