// SPDX-License-Identifier: GPL-2.0
/* The faults collector's top_k and "other" for processes, on a fake /proc
 * whose values change window by window; each expected figure follows from
 * the fake /proc alone. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup_test.h"

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

#define FAKE_PROC_WINDOW_SECONDS 1.0

/* The newest window's end, once a newer one than the one showing now is in
 * /metrics: a window shows there only when its collectors are done, so a
 * change of the fake /proc made right after is seen whole by the next window
 * and not at all by this one. Scraped, not read from the ring: under TCG a
 * ring fetch takes most of a window, and the change must come early in it. */
static double step_begin(struct mw_daemon *d)
{
	double shown = -1;

	for (int64_t deadline = mw_mono_ms() + WORKLOAD_TIMEOUT_MS; mw_mono_ms() < deadline; mw_sleep_ms(5)) {
		char *body = mw_scrape(d->port);
		double end;

		ck_assert_ptr_nonnull(body);
		end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
		free(body);
		if (shown >= 0 && end != shown)
			return end;
		shown = end;
	}
	ck_abort_msg("no new window within %d ms", WORKLOAD_TIMEOUT_MS);
	return 0;
}

/* The window after `sealed`, the first to see the change made since
 * step_begin, from the daemon's ring: there however late the test asks. Its
 * end is taken before its collectors run, so it must be later than the end
 * of the change; if not, the test was stalled for a whole window and the
 * change may be split between two windows. */
static char *step_window(struct mw_daemon *d, double sealed)
{
	double changed = real_now(), end;
	/* Half a window on: /metrics prints the end rounded, the ring in full. */
	char *body = mw_window_after(d->port, sealed + FAKE_PROC_WINDOW_SECONDS / 2, WORKLOAD_TIMEOUT_MS);

	end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	ck_assert_msg(end > changed,
		      "the window ending %.3f began before the fake /proc's change ended (%.3f; the window before "
		      "it ended %.3f): the test was stalled for a window",
		      end, changed, sealed);
	return body;
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
		 "[daemon]\nwindow = %gs\n[collector.faults]\nsource = procfs\nproc_root = %s\ntop_k = %u\n"
		 "series_ttl = 0\n"
		 /* No BPF: nothing else matters here. */
		 "[collector.kswapd]\nenabled = no\n[collector.reclaim]\nenabled = no\n[collector.oom]\nenabled = no\n"
		 "[collector.memavail]\nenabled = no\n[collector.cgroup]\nenabled = no\n"
		 "[collector.compaction]\nenabled = no\n",
		 FAKE_PROC_WINDOW_SECONDS, root, top_k);
	*conf = temp_config(text);
	return start_or_fail(*conf);
}

/* A process whose stat cannot be read, though it is there, keeps its row; a
 * /proc that cannot be opened fails the window and leaves every row as it
 * was. Dropped, the rows would come back as new processes and their lifetime
 * counts would be added to pid="other" a second time. */
START_TEST(test_faults_unreadable_kept)
{
	struct fake_proc p[3] = {
		{ 201, "aa", 1000, 5000, 0 }, { 202, "bb", 1001, 3000, 0 }, { 203, "cc", 1002, 1000, 0 },
	};
	char root[512], away[600], stat[600], *conf, *body;
	double other_minor = 0, errors, t;
	struct mw_daemon *d;
	size_t i;

	snprintf(root, sizeof(root), "%s/fake-proc-unreadable", mw_tmp_root());
	snprintf(away, sizeof(away), "%s.away", root);
	snprintf(stat, sizeof(stat), "%s/%d/stat", root, p[1].pid);
	t = real_now();
	d = start_fake_proc_daemon(root, p, 3, 1, &conf);

	/* 1. aa leads; bb and cc go to other. */
	body = mw_window_after(d->port, t, WORKLOAD_TIMEOUT_MS);
	expect_proc(body, &p[0], true);
	other_minor += 3000 + 1000;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 2. bb's stat is a directory (read: EISDIR), cc faults 10: bb is kept,
	 * cc is exported. */
	t = step_begin(d);
	ck_assert_int_eq(unlink(stat), 0);
	ck_assert_int_eq(mkdir(stat, 0755), 0);
	p[2].minflt += 10;
	fake_proc_write(root, &p[2]);
	body = step_window(d, t);
	expect(body, "memwatch_collector_up", "collector=\"faults\"", 1);
	expect(body, "memwatch_fault_tracked_processes", NULL, 3);
	expect_proc(body, &p[2], true);
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 3. bb readable again with 7 more, aa 100 more: aa leads, bb's 7 (not
	 * its 3007) go to other. */
	t = step_begin(d);
	ck_assert_int_eq(rmdir(stat), 0);
	p[0].minflt += 100;
	p[1].minflt += 7;
	fake_proc_write(root, &p[0]);
	fake_proc_write(root, &p[1]);
	body = step_window(d, t);
	expect_proc(body, &p[0], true);
	other_minor += 7;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	free(body);

	/* 4. No /proc at all: the window has no faults batch, an error counted. */
	t = step_begin(d);
	ck_assert_int_eq(rename(root, away), 0);
	body = step_window(d, t);
	expect(body, "memwatch_collector_up", "collector=\"faults\"", 0);
	ck_assert_double_ge(metric_or_fail(body, "memwatch_collector_errors_total", "collector=\"faults\""), 1);
	expect_absent(body, "memwatch_process_minor_faults_total", "pid=\"other\"");
	free(body);

	/* 5. Back, aa 1 more, bb 2, cc 3: cc leads, aa's and bb's 3 go to other. */
	t = step_begin(d);
	ck_assert_int_eq(rename(away, root), 0);
	p[0].minflt += 1;
	p[1].minflt += 2;
	p[2].minflt += 3;
	for (i = 0; i < 3; i++)
		fake_proc_write(root, &p[i]);
	/* The failures put the collector in backoff (daemon/core.c), a number
	 * of windows that depends on how many failed before the step began: the
	 * first window in which it ran again is judged; none failed after. */
	body = step_window(d, t);
	errors = metric_or_fail(body, "memwatch_collector_errors_total", "collector=\"faults\"");
	for (i = 0; metric_or_fail(body, "memwatch_collector_up", "collector=\"faults\"") != 1; i++) {
		ck_assert_msg(i < 8, "the faults collector did not run again in 8 windows");
		t = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
		free(body);
		body = mw_window_after(d->port, t + FAKE_PROC_WINDOW_SECONDS / 2, WORKLOAD_TIMEOUT_MS);
	}
	expect(body, "memwatch_collector_errors_total", "collector=\"faults\"", errors);
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
	body = mw_window_after(d->port, t, WORKLOAD_TIMEOUT_MS);
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
	t = step_begin(d);
	p[2].minflt += 500;
	p[3].minflt += 700;
	fake_proc_write(root, &p[2]);
	fake_proc_write(root, &p[3]);
	body = step_window(d, t);
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
	t = step_begin(d);
	for (i = 0; i < 3; i++)
		fake_proc_write(root, &p[i]);
	body = step_window(d, t);
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
	t = step_begin(d);
	for (i = 0; i < 5; i++)
		fake_proc_write(root, &p[i]);
	body = step_window(d, t);
	expect(body, "memwatch_fault_tracked_processes", NULL, 4);
	expect_proc(body, &p[0], true);
	expect_proc(body, &p[2], true);
	expect_proc(body, &p[1], false);
	expect_proc(body, &p[4], false);
	expect_absent(body, "memwatch_process_minor_faults_total", "pid=\"104\"");
	other_minor += 50;
	expect(body, "memwatch_process_minor_faults_total", "pid=\"other\"", other_minor);
	expect(body, "memwatch_process_major_faults_total", "pid=\"other\"", other_major);
	free(body);
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	expect_promtool_ok(body);
	free(body);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

TCase *faults_tcase(void)
{
	TCase *tc = cgroup_tcase("faults");

	tcase_add_test(tc, test_faults_top_k_other);
	tcase_add_test(tc, test_faults_unreadable_kept);
	return tc;
}
