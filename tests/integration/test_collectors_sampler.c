// SPDX-License-Identifier: GPL-2.0
/* The sampling of available memory (daemon/collectors/meminfo.c), in the
 * mode the expectation table gives this kernel: a timer in the kernel
 * (bpf-timer) or the daemon reading /proc/meminfo (procfs). Held to what the
 * test sees itself: a fall the test makes and watches in MemAvailable within
 * a window shows between the window's maximum and its last value, and stays
 * within what the test saw; the daemon's main thread
 * wakes as often as its mode says (the kernel's count of its context
 * switches); a reloaded sample interval changes the samples per window;
 * while memory stands still /proc/meminfo is held (quiet windows).
 * Run by test_collectors.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "collectors.h"

#define DIP_BYTES (256 * MiB)
#define DIP_WINDOW_S 2.0
#define DIP_ATTEMPTS 4
#define WAKE_SPAN_MS 5000

/* The expected mode of the meminfo collector here, checked against body. */
static void expected_sampler(const char *body, char *mode, size_t len)
{
	struct mw_expectation want;

	mw_assert_collector_expected(body, "meminfo", &want);
	assert_collector(body, "meminfo", NULL, mode, len);
	ck_assert_msg(strcmp(mode, "bpf-timer") == 0 || strcmp(mode, "procfs") == 0, "meminfo mode '%s'", mode);
}

/* One fall inside one window: a child takes DIP_BYTES a third of the way into
 * a window and holds them past its end, the test reading MemAvailable every
 * 10 ms all along. The window's end read alone would make its maximum its
 * last value; only samples taken within the window, before the child, can
 * lift its maximum above that. False (after a note) when the timing or the
 * host's own movements left nothing to judge. */
static bool fall_once(struct mw_daemon *d, const char *cg, int attempt)
{
	double end0, end1, t, v, own_max = 0, own_min = INFINITY, before, held, wmin, wmax, wlast, samples;
	int cmd, rep, st;
	char *body, c;
	pid_t child;

	body = next_window(d);
	end0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	free(body);
	while (realtime_now() < end0 + DIP_WINDOW_S / 3)
		mw_sleep_ms(10);
	before = (double)meminfo_bytes("MemAvailable");
	child = spawn_toucher(cg, DIP_BYTES, &cmd, &rep);
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WINDOW_TIMEOUT_MS, "the toucher's report");
	held = (double)meminfo_bytes("MemAvailable");
	/* The test's own view of the window, from its start to past its end. */
	while ((t = realtime_now()) < end0 + DIP_WINDOW_S + 0.3) {
		v = (double)meminfo_bytes("MemAvailable");
		if (t < end0 + DIP_WINDOW_S) {
			own_max = fmax(own_max, v);
			own_min = fmin(own_min, v);
		}
		mw_sleep_ms(10);
	}
	own_max = fmax(own_max, before);
	own_min = fmin(own_min, before);
	body = wait_window_after(d, end0 + DIP_WINDOW_S / 2);
	close(cmd);
	st = wait_child(child, 10000, "the toucher");
	close(rep);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the toucher ended with status 0x%x", st);
	end1 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	wmin = metric_or_fail(body, "memwatch_memory_available_window_min_bytes", NULL);
	wmax = metric_or_fail(body, "memwatch_memory_available_window_max_bytes", NULL);
	wlast = metric_or_fail(body, "memwatch_memory_available_bytes", NULL);
	samples = metric_or_fail(body, "memwatch_memory_window_samples", NULL);
	free(body);
	note("sampler fall %d: MemAvailable %.0f MiB before the child, %.0f MiB once it held %llu MiB; the test saw "
	     "%.0f..%.0f MiB in the window %.3f..%.3f; the daemon: %.0f..%.0f MiB, last %.0f MiB, %g samples",
	     attempt, before / MiB, held / MiB, DIP_BYTES / MiB, own_min / MiB, own_max / MiB, end0, end1, wmin / MiB,
	     wmax / MiB, wlast / MiB, samples);
	if (fabs(end1 - end0 - DIP_WINDOW_S) > 0.25) {
		note("sampler fall %d: not the window the child started in; again", attempt);
		return false;
	}
	/* Free page reporting and lazily grown zones can hide most of a fall
	 * from MemAvailable on some hosts (seen here: 63 of 256 MiB). */
	if (before - held < 32.0 * MiB) {
		note("sampler fall %d: MemAvailable fell only %.0f MiB while the child took %llu MiB; again", attempt,
		     (before - held) / MiB, DIP_BYTES / MiB);
		return false;
	}
	ck_assert_msg(wmax - wlast >= (before - held) / 2,
		      "the window's maximum %.0f MiB is within %.0f MiB of its last value %.0f MiB: the samples taken "
		      "before the child (MemAvailable %.0f MiB, %.0f MiB after it took its memory) are not in it",
		      wmax / MiB, (wmax - wlast) / MiB, wlast / MiB, before / MiB, held / MiB);
	ck_assert_msg(wmax <= own_max + 64.0 * MiB && wmin >= own_min - 64.0 * MiB,
		      "the window's %.0f..%.0f MiB reach more than 64 MiB beyond what the test saw in it (%.0f..%.0f MiB)",
		      wmin / MiB, wmax / MiB, own_min / MiB, own_max / MiB);
	/* 2 s at 100 ms, and the read at the window's end. */
	ck_assert_msg(samples >= 18 && samples <= 23, "%g samples in a 2 s window at 100 ms", samples);
	return true;
}

START_TEST(test_sampler_fall)
{
	bool done = false;
	struct mw_daemon *d;
	char cg[256], mode[32];
	char *body;

	ck_assert_msg(meminfo_bytes("MemAvailable") > DIP_BYTES + 2 * GiB, "MemAvailable is too low for the dip");
	memcg_path(cg, sizeof(cg), "-fall");
	memcg_create(cg, DIP_BYTES + 64 * MiB);
	d = start_with_config("[daemon]\nwindow = 2s\nsample_interval = 100ms\n");
	body = next_window(d);
	expected_sampler(body, mode, sizeof(mode));
	free(body);
	for (int attempt = 1; attempt <= DIP_ATTEMPTS && !done; attempt++)
		done = fall_once(d, cg, attempt);
	ck_assert_msg(done, "in %d attempts no fall of MemAvailable inside one window to judge (notes above)",
		      DIP_ATTEMPTS);
	memcg_remove(cg);
	mw_assert_clean_stop(d);
}
END_TEST

static unsigned long long main_thread_wakeups(pid_t pid)
{
	char path[64], *text, *p;
	unsigned long long n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)pid);
	text = mw_read_file(path, NULL);
	ck_assert_msg(text, "cannot read %s", path);
	p = strstr(text, "\nvoluntary_ctxt_switches:");
	ck_assert_msg(p && sscanf(p, "\nvoluntary_ctxt_switches: %llu", &n) == 1, "no voluntary_ctxt_switches in %s",
		      path);
	free(text);
	return n;
}

/* Wake-ups of the main thread over WAKE_SPAN_MS with nothing scraping. */
static double wakeups_per_second(struct mw_daemon *d)
{
	unsigned long long a = main_thread_wakeups(d->pid), b;
	int64_t t0 = mw_mono_ms(), t1;

	mw_sleep_ms(WAKE_SPAN_MS);
	b = main_thread_wakeups(d->pid);
	t1 = mw_mono_ms();
	return (double)(b - a) * 1000.0 / (double)(t1 - t0);
}

static void assert_wakeups(const char *mode, double per_s, const char *what)
{
	note("sampler: %s, mode %s: the main thread woke %.1f times a second", what, mode, per_s);
	/* The timer's samples are read at the window's end (1 s); reading
	 * /proc/meminfo every 100 ms is ten wake-ups a second. */
	if (strcmp(mode, "bpf-timer") == 0)
		ck_assert_msg(per_s <= 2.0, "%s: in mode bpf-timer the main thread woke %.1f times a second (want one "
			      "a window)", what, per_s);
	else
		ck_assert_msg(per_s >= 8.0, "%s: in mode procfs the main thread woke %.1f times a second (want ten)",
			      what, per_s);
}

START_TEST(test_sampler_wakeups_and_reload)
{
	char *conf = mw_write_temp_file("sampler.conf", "[daemon]\nwindow = 1s\nsample_interval = 100ms\n");
	char mode[32];
	struct mw_daemon *d;
	double samples, cost;
	char *body;

	ck_assert_ptr_nonnull(conf);
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start");
	body = next_window(d);
	expected_sampler(body, mode, sizeof(mode));
	free(body);
	assert_wakeups(mode, wakeups_per_second(d), "default sampler");
	body = next_window(d);
	free(body);
	body = next_window(d);
	samples = metric_or_fail(body, "memwatch_memory_window_samples", NULL);
	ck_assert_msg(samples >= 9 && samples <= 12, "%g samples in a 1 s window at 100 ms", samples);
	ck_assert_msg(!strcmp(mode, "bpf-timer") ==
			      mw_metric(body, "memwatch_memory_sampler_seconds_total", NULL, &cost, NULL, 0),
		      "memwatch_memory_sampler_seconds_total is exported in mode %s only with the timer", mode);
	free(body);

	/* A new interval reaches the running timer (or the daemon's own loop). */
	reload_config(d, conf, "[daemon]\nwindow = 1s\nsample_interval = 250ms\n");
	ck_assert(mw_poll_metric(d->port, "memwatch_sample_interval_seconds", NULL, WINDOW_TIMEOUT_MS, mw_pred_eq,
				 0.25, NULL));
	body = next_window(d);
	free(body);
	body = next_window(d);
	samples = metric_or_fail(body, "memwatch_memory_window_samples", NULL);
	free(body);
	ck_assert_msg(samples >= 4 && samples <= 6, "%g samples in a 1 s window at 250 ms", samples);

	/* sampler = procfs: the daemon samples itself, ten times a second. */
	reload_config(d, conf, "[daemon]\nwindow = 1s\nsample_interval = 100ms\n[collector.meminfo]\nsampler = procfs\n");
	ck_assert(mw_poll_metric(d->port, "memwatch_sample_interval_seconds", NULL, WINDOW_TIMEOUT_MS, mw_pred_eq, 0.1,
				 NULL));
	body = next_window(d);
	free(body);
	body = next_window(d);
	assert_collector(body, "meminfo", "procfs", mode, sizeof(mode));
	free(body);
	assert_wakeups(mode, wakeups_per_second(d), "sampler = procfs");
	free(conf);
	mw_assert_clean_stop(d);
}
END_TEST

/* Quiet windows (daemon/core.c, quiet_window): memory that moved more than
 * a thousandth of the machine (at least 1 MiB) since the last read ends a
 * quiet spell. */
static double quiet_limit_bytes(void)
{
	return fmax((double)meminfo_bytes("MemTotal") / 1024, 1.0 * MiB);
}

struct quiet_view {
	double quiet_total, age, free, available, window_min, window_max;
};

static struct quiet_view quiet_view(const char *body)
{
	return (struct quiet_view){
		.quiet_total = metric_or_fail(body, "memwatch_quiet_windows_total", NULL),
		.age = metric_or_fail(body, "memwatch_meminfo_age_seconds", NULL),
		.free = metric_or_fail(body, "memwatch_memory_free_bytes", NULL),
		.available = metric_or_fail(body, "memwatch_memory_available_bytes", NULL),
		.window_min = metric_or_fail(body, "memwatch_memory_available_window_min_bytes", NULL),
		.window_max = metric_or_fail(body, "memwatch_memory_available_window_max_bytes", NULL),
	};
}

/* A window either read /proc/meminfo (age 0, no quiet window counted) or
 * held it (one counted, younger than the interval allows). */
static void assert_quiet_consistent(const struct quiet_view *before, const struct quiet_view *w, double interval_s)
{
	if (w->quiet_total == before->quiet_total) {
		ck_assert_msg(w->age == 0, "a window that counted no quiet window reports /proc/meminfo %.3f s old", w->age);
		return;
	}
	ck_assert_msg(w->quiet_total == before->quiet_total + 1, "%g quiet windows counted in one window",
		      w->quiet_total - before->quiet_total);
	ck_assert_msg(w->age > 0 && w->age <= interval_s, "a quiet window with /proc/meminfo %.3f s old (interval %.0f s)",
		      w->age, interval_s);
	/* Its available memory is the last sample's, not the held read's. */
	ck_assert_msg(w->window_min <= w->available && w->available <= w->window_max,
		      "a quiet window's available memory %.0f B is outside its samples' %.0f..%.0f B", w->available,
		      w->window_min, w->window_max);
}

#define QUIET_INTERVAL_S 10.0
#define QUIET_WAIT_WINDOWS 40

/* Where the kernel samples, a host whose memory stands still holds
 * /proc/meminfo (the test's own reads of MemFree agree with the held figure within
 * the limit), memory the test takes ends the spell before its interval is
 * up, and quiet_read_interval = 0 reads every window. Where the daemon
 * samples /proc/meminfo itself, no window is quiet. */
START_TEST(test_sampler_quiet)
{
	char *conf = mw_write_temp_file("quiet.conf", "[daemon]\nwindow = 1s\nquiet_read_interval = 10s\n");
	double limit = quiet_limit_bytes(), own_free, own_min = INFINITY, own_max = 0, free0, free1, t_took;
	struct quiet_view prev, w;
	char mode[32], cg[256], c;
	struct mw_daemon *d;
	int i, cmd, rep, st;
	bool quiet = false;
	pid_t child;
	char *body;

	ck_assert_ptr_nonnull(conf);
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start");
	body = next_window(d);
	expected_sampler(body, mode, sizeof(mode));
	prev = quiet_view(body);
	free(body);
	if (strcmp(mode, "procfs") == 0) {
		for (i = 0; i < 5; i++) {
			body = next_window(d);
			w = quiet_view(body);
			free(body);
			ck_assert_msg(w.quiet_total == 0 && w.age == 0,
				      "mode procfs: %g quiet windows, /proc/meminfo %.3f s old (want none: no sampler to say memory stood still)",
				      w.quiet_total, w.age);
		}
		goto out;
	}

	/* 1. A spell: the held free memory stays within the limit of the kernel's. */
	for (i = 0; i < QUIET_WAIT_WINDOWS && !quiet; i++) {
		body = next_window(d);
		own_free = (double)meminfo_bytes("MemFree");
		own_min = fmin(own_min, own_free);
		own_max = fmax(own_max, own_free);
		w = quiet_view(body);
		free(body);
		assert_quiet_consistent(&prev, &w, QUIET_INTERVAL_S);
		if (w.age > 0) {
			quiet = true;
			ck_assert_msg(fabs(w.free - own_free) <= 2 * limit,
				      "a quiet window holds MemFree %.1f MiB, the kernel's is %.1f MiB: more than twice the "
				      "limit (%.1f MiB) apart",
				      w.free / MiB, own_free / MiB, limit / MiB);
		}
		prev = w;
	}
	ck_assert_msg(quiet, "no quiet window in %d windows; MemFree, read by the test at each, moved %.1f MiB "
		      "(limit %.1f MiB between reads)", QUIET_WAIT_WINDOWS, (own_max - own_min) / MiB, limit / MiB);

	/* 2. Taking 4 limits ends it: the first window a sample saw it in reads again. */
	memcg_path(cg, sizeof(cg), "-quiet");
	memcg_create(cg, (unsigned long long)(4 * limit) + 64 * MiB);
	free0 = (double)meminfo_bytes("MemFree");
	child = spawn_toucher(cg, (size_t)(4 * limit), &cmd, &rep);
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WINDOW_TIMEOUT_MS, "the toucher's report");
	t_took = realtime_now();
	free1 = (double)meminfo_bytes("MemFree");
	body = wait_window_after(d, t_took + 0.25);
	w = quiet_view(body);
	free(body);
	close(cmd);
	st = wait_child(child, 10000, "the toucher");
	close(rep);
	memcg_remove(cg);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the toucher ended with status 0x%x", st);
	note("quiet: MemFree %.1f MiB before the child took %.1f MiB, %.1f MiB after; the next window: /proc/meminfo %.3f s "
	     "old, MemFree %.1f MiB",
	     free0 / MiB, 4 * limit / MiB, free1 / MiB, w.age, w.free / MiB);
	ck_assert_msg(free0 - free1 >= 2 * limit, "MemFree fell only %.1f MiB while the child took %.1f MiB",
		      (free0 - free1) / MiB, 4 * limit / MiB);
	ck_assert_msg(w.age == 0, "the window after the child took %.1f MiB held /proc/meminfo %.3f s old", 4 * limit / MiB,
		      w.age);
	ck_assert_msg(w.free <= free0 - (free0 - free1) / 2,
		      "the window after the child took its memory reports MemFree %.1f MiB: not half the fall the test "
		      "saw (%.1f to %.1f MiB)",
		      w.free / MiB, free0 / MiB, free1 / MiB);

	/* 3. Switched off, every window reads. */
	reload_config(d, conf, "[daemon]\nwindow = 1s\nquiet_read_interval = 0\n");
	body = next_window(d);
	prev = quiet_view(body);
	free(body);
	for (i = 0; i < 4; i++) {
		body = next_window(d);
		w = quiet_view(body);
		free(body);
		ck_assert_msg(w.age == 0 && w.quiet_total == prev.quiet_total,
			      "quiet_read_interval = 0: /proc/meminfo %.3f s old, %g quiet windows more", w.age,
			      w.quiet_total - prev.quiet_total);
	}
out:
	free(conf);
	mw_assert_clean_stop(d);
}
END_TEST

void collectors_add_sampler_tests(Suite *s)
{
	collectors_add_test(s, "sampler_fall", test_sampler_fall, 120);
	collectors_add_test(s, "sampler_wakeups_and_reload", test_sampler_wakeups_and_reload, 120);
	collectors_add_test(s, "sampler_quiet", test_sampler_quiet, 180);
}
