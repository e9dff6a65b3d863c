// SPDX-License-Identifier: GPL-2.0
/* The sampling of available memory (daemon/collectors/meminfo.c), in the
 * mode the expectation table gives this kernel: in the kernel, run by a
 * cpu-clock perf event (bpf-cpu-clock) or a bpf_timer (bpf-timer), or the
 * daemon reading /proc/meminfo (procfs). Held to what the
 * test sees itself: a fall the test makes and watches in MemAvailable within
 * a window shows between the window's maximum and its last value, and stays
 * within what the test saw; the daemon's main thread
 * wakes as often as its mode says (the kernel's count of its context
 * switches); a reloaded sample interval changes the samples per window;
 * while memory stands still a window goes on past its length.
 * Run by test_collectors.c. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "collectors.h"

#define DIP_BYTES (256 * MiB)
#define DIP_WINDOW_S 2.0
#define DIP_ATTEMPTS 4
#define WAKE_SPAN_MS 5000

static bool sampled_in_kernel(const char *mode)
{
	return strcmp(mode, "bpf-cpu-clock") == 0 || strcmp(mode, "bpf-timer") == 0;
}

/* The expected mode of the meminfo collector here, checked against body. */
static void expected_sampler(const char *body, char *mode, size_t len)
{
	struct mw_expectation want;

	mw_assert_collector_expected(body, "meminfo", &want);
	assert_collector(body, "meminfo", NULL, mode, len);
	ck_assert_msg(sampled_in_kernel(mode) || strcmp(mode, "procfs") == 0, "meminfo mode '%s'", mode);
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
	d = start_with_config("[daemon]\nwindow = 2s\nquiet_read_interval = 0\nsample_interval = 100ms\n");
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
	if (sampled_in_kernel(mode))
		ck_assert_msg(per_s <= 2.0, "%s: in mode %s the main thread woke %.1f times a second (want one "
			      "a window)", what, mode, per_s);
	else
		ck_assert_msg(per_s >= 8.0, "%s: in mode procfs the main thread woke %.1f times a second (want ten)",
			      what, per_s);
}

START_TEST(test_sampler_wakeups_and_reload)
{
	char *conf = mw_write_temp_file("sampler.conf", "[daemon]\nwindow = 1s\nquiet_read_interval = 0\nsample_interval = 100ms\n");
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
	ck_assert_msg(sampled_in_kernel(mode) ==
			      mw_metric(body, "memwatch_memory_sampler_seconds_total", NULL, &cost, NULL, 0),
		      "memwatch_memory_sampler_seconds_total is exported in mode %s only when sampled in the kernel", mode);
	free(body);

	/* A new interval reaches the running timer (or the daemon's own loop). */
	reload_config(d, conf, "[daemon]\nwindow = 1s\nquiet_read_interval = 0\nsample_interval = 250ms\n");
	ck_assert(mw_poll_metric(d->port, "memwatch_sample_interval_seconds", NULL, WINDOW_TIMEOUT_MS, mw_pred_eq,
				 0.25, NULL));
	body = next_window(d);
	free(body);
	body = next_window(d);
	samples = metric_or_fail(body, "memwatch_memory_window_samples", NULL);
	free(body);
	ck_assert_msg(samples >= 4 && samples <= 6, "%g samples in a 1 s window at 250 ms", samples);

	/* sampler = procfs: the daemon samples itself, ten times a second. */
	reload_config(d, conf, "[daemon]\nwindow = 1s\nquiet_read_interval = 0\nsample_interval = 100ms\n[collector.meminfo]\nsampler = procfs\n");
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

/* Windows that go on while memory stands still (daemon/core.c,
 * core_window_goes_on): memory that moved more than a thousandth of the
 * machine (at least 1 MiB) since the window started ends it at its length. */
static double quiet_limit_bytes(void)
{
	return fmax((double)meminfo_bytes("MemTotal") / 1024, 1.0 * MiB);
}

struct quiet_view {
	double quiet_total, length, end, free, available, window_min, window_max, samples;
};

static struct quiet_view quiet_view(const char *body)
{
	return (struct quiet_view){
		.quiet_total = metric_or_fail(body, "memwatch_quiet_windows_total", NULL),
		.length = metric_or_fail(body, "memwatch_window_length_seconds", NULL),
		.end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL),
		.free = metric_or_fail(body, "memwatch_memory_free_bytes", NULL),
		.available = metric_or_fail(body, "memwatch_memory_available_bytes", NULL),
		.window_min = metric_or_fail(body, "memwatch_memory_available_window_min_bytes", NULL),
		.window_max = metric_or_fail(body, "memwatch_memory_available_window_max_bytes", NULL),
		.samples = metric_or_fail(body, "memwatch_memory_window_samples", NULL),
	};
}

#define QUIET_INTERVAL_S 10.0
#define QUIET_WAIT_S 90
/* A window's end is a wake-up of the main thread: late by scheduling only. */
#define WAKE_SLACK_S 0.4

/* Each window end passed over (one counted) adds a window's length (1 s) to
 * it, up to the interval; a window that went on holds the samples of its
 * whole length, not of its last second. */
static void assert_quiet_consistent(const struct quiet_view *before, const struct quiet_view *w)
{
	double passed = w->quiet_total - before->quiet_total;

	ck_assert_msg(w->length >= 1.0 - WAKE_SLACK_S && w->length <= QUIET_INTERVAL_S + WAKE_SLACK_S,
		      "a window %.3f s long (window 1 s, quiet_read_interval %.0f s)", w->length, QUIET_INTERVAL_S);
	ck_assert_msg(fabs(w->length - (passed + 1)) <= WAKE_SLACK_S,
		      "a window %.3f s long passed over %g window ends (want its length in seconds less one)", w->length,
		      passed);
	ck_assert_msg(w->window_min <= w->available && w->available <= w->window_max,
		      "available memory %.0f B is outside the window's samples' %.0f..%.0f B", w->available, w->window_min,
		      w->window_max);
	/* 100 ms samples: at least half of them, however long the window. */
	ck_assert_msg(w->samples >= w->length / 0.1 / 2, "a window %.3f s long holds only %g samples", w->length,
		      w->samples);
}

/* Starts the daemon on conf; mode is the sampler's (as the expectation
 * table says), first the first window. */
static struct mw_daemon *start_quiet(const char *conf, char *mode, size_t len, struct quiet_view *first)
{
	struct mw_daemon *d;
	char *body;

	ck_assert_ptr_nonnull(conf);
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start");
	body = next_window(d);
	expected_sampler(body, mode, len);
	*first = quiet_view(body);
	free(body);
	return d;
}

static void sleeper_child(const void *arg, int cmd, int rep)
{
	for (;;)
		pause();
}

/* A child named as one of the default userspace_killers SIGKILLs a sleeper
 * of ours: a pressure instant (userspace_kill) that moves no memory. */
static void kill_as_earlyoom(void)
{
	int cmd, rep, st;
	pid_t victim = spawn_child(sleeper_child, NULL, &cmd, &rep), killer;

	fflush(NULL);
	killer = fork();
	ck_assert_msg(killer >= 0, "fork: %s", strerror(errno));
	if (killer == 0) {
		if (prctl(PR_SET_NAME, "earlyoom") < 0 || kill(victim, SIGKILL) < 0)
			_exit(1);
		_exit(0);
	}
	st = wait_child(killer, 10000, "the killer");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the killer ended with status 0x%x", st);
	st = wait_child(victim, 10000, "the victim");
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the victim ended with status 0x%x", st);
	close(cmd);
	close(rep);
}

static double userspace_kills_received(struct mw_daemon *d)
{
	char *body = mw_scrape(d->port);
	double n;

	ck_assert_msg(body, "scrape failed");
	n = metric_or_fail(body, "memwatch_events_received_total", "kind=\"userspace_kill\"");
	free(body);
	return n;
}

/* Waits up to QUIET_WAIT_S for a window that went on at least min_lengths;
 * with wakes, asserts the main thread slept through it. Returns it. */
static struct quiet_view wait_window_gone_on(struct mw_daemon *d, struct quiet_view *prev, double min_length,
					     bool wakes)
{
	int64_t deadline = mw_mono_ms() + QUIET_WAIT_S * 1000;
	double own_free, own_min = INFINITY, own_max = 0, limit = quiet_limit_bytes();
	unsigned long long woke_before = main_thread_wakeups(d->pid), woke;
	struct quiet_view w;
	char *body;

	while (mw_mono_ms() < deadline) {
		body = wait_window_after_ms(d, prev->end, (int)(QUIET_INTERVAL_S + 5) * 1000);
		woke = main_thread_wakeups(d->pid);
		own_free = (double)meminfo_bytes("MemFree");
		own_min = fmin(own_min, own_free);
		own_max = fmax(own_max, own_free);
		w = quiet_view(body);
		free(body);
		assert_quiet_consistent(prev, &w);
		if (w.quiet_total > prev->quiet_total && w.length >= min_length) {
			ck_assert_msg(fabs(w.free - own_free) <= 2 * limit,
				      "a window that went on %.3f s reports MemFree %.1f MiB, the kernel's is %.1f MiB: more "
				      "than twice the limit (%.1f MiB) apart",
				      w.length, w.free / MiB, own_free / MiB, limit / MiB);
			/* Its end, and a check at its length where the window
			 * could not sleep through from its start; one to spare.
			 * Asking at each length would be one per length. */
			note("quiet: a window went on %.3f s; the main thread woke %llu times", w.length,
			     woke - woke_before);
			if (wakes)
				ck_assert_msg(woke - woke_before <= 3,
					      "the main thread woke %llu times in a window that went on %.3f s (want it "
					      "to sleep through: at most 3)",
					      woke - woke_before, w.length);
			*prev = w;
			return w;
		}
		*prev = w;
		woke_before = woke;
	}
	ck_abort_msg("no window went on %.0f s in %d s; MemFree, read by the test after each, moved %.1f MiB (limit "
		     "%.1f MiB)",
		     min_length, QUIET_WAIT_S, (own_max - own_min) / MiB, limit / MiB);
}

/* Where the kernel samples, a host whose memory stands still gets windows
 * that go on (the test's own read of MemFree agrees with the window's within
 * the limit), memory the test takes ends one within a window's length, and
 * quiet_read_interval = 0 gives every window its length. Where the daemon
 * samples /proc/meminfo itself, no window goes on. */
START_TEST(test_sampler_quiet)
{
	char *conf = mw_write_temp_file("quiet.conf", "[daemon]\nwindow = 1s\nquiet_read_interval = 10s\n");
	double limit = quiet_limit_bytes(), free0, free1, t_took, kills0;
	struct quiet_view prev, w;
	char mode[32], cg[256], c;
	struct mw_daemon *d;
	int i, cmd, rep, st;
	pid_t child;
	char *body;

	d = start_quiet(conf, mode, sizeof(mode), &prev);
	if (strcmp(mode, "procfs") == 0) {
		for (i = 0; i < 5; i++) {
			body = next_window(d);
			w = quiet_view(body);
			free(body);
			ck_assert_msg(w.quiet_total == 0 && fabs(w.length - 1.0) <= WAKE_SLACK_S,
				      "mode procfs: %g window ends passed over, a window %.3f s long (want none: no sampler to "
				      "say memory stood still)",
				      w.quiet_total, w.length);
		}
		goto out;
	}

	/* 1. Memory stands still: a window goes on, sleeping through, and its
	 * MemFree is the kernel's within the limit. */
	(void)wait_window_gone_on(d, &prev, 4.0, true);

	/* 2. Taking 4 limits ends the window within a window's length, not the interval. */
	memcg_path(cg, sizeof(cg), "-quiet");
	memcg_create(cg, (unsigned long long)(4 * limit) + 64 * MiB);
	free0 = (double)meminfo_bytes("MemFree");
	child = spawn_toucher(cg, (size_t)(4 * limit), &cmd, &rep);
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WINDOW_TIMEOUT_MS, "the toucher's report");
	t_took = realtime_now();
	free1 = (double)meminfo_bytes("MemFree");
	body = wait_window_after_ms(d, t_took, (int)(QUIET_INTERVAL_S + 5) * 1000);
	w = quiet_view(body);
	free(body);
	close(cmd);
	st = wait_child(child, 10000, "the toucher");
	close(rep);
	memcg_remove(cg);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the toucher ended with status 0x%x", st);
	note("quiet: MemFree %.1f MiB before the child took %.1f MiB, %.1f MiB after; the next window ended %.3f s later, "
	     "%.3f s long, MemFree %.1f MiB",
	     free0 / MiB, 4 * limit / MiB, free1 / MiB, w.end - t_took, w.length, w.free / MiB);
	ck_assert_msg(free0 - free1 >= 2 * limit, "MemFree fell only %.1f MiB while the child took %.1f MiB",
		      (free0 - free1) / MiB, 4 * limit / MiB);
	/* The sample that sees the fall (100 ms apart) can come after the next
	 * window end: that one goes on, the one after ends. */
	ck_assert_msg(w.end - t_took <= 2 * 1.0 + 0.1 + WAKE_SLACK_S,
		      "the window after the child took %.1f MiB ended %.3f s later (window 1 s, interval %.0f s)",
		      4 * limit / MiB, w.end - t_took, QUIET_INTERVAL_S);
	ck_assert_msg(w.free <= free0 - (free0 - free1) / 2,
		      "the window after the child took its memory reports MemFree %.1f MiB: not half the fall the test "
		      "saw (%.1f to %.1f MiB)",
		      w.free / MiB, free0 / MiB, free1 / MiB);

	/* 3. A pressure instant that moves no memory (a user-space kill) ends
	 * a window that sleeps through, at its next length. */
	w = wait_window_gone_on(d, &prev, 2.0, false);
	kills0 = userspace_kills_received(d);
	mw_sleep_ms(1500);
	t_took = realtime_now();
	kill_as_earlyoom();
	body = wait_window_after_ms(d, t_took, (int)(QUIET_INTERVAL_S + 5) * 1000);
	w = quiet_view(body);
	free(body);
	note("quiet: a user-space kill %.3f s into a window that went on; it ended %.3f s later, %.3f s long",
	     t_took - (w.end - w.length), w.end - t_took, w.length);
	ck_assert_msg(w.end - t_took <= 1.0 + 0.1 + WAKE_SLACK_S,
		      "the window a user-space kill came in ended %.3f s after it (window 1 s, interval %.0f s)",
		      w.end - t_took, QUIET_INTERVAL_S);
	ck_assert_msg(userspace_kills_received(d) > kills0,
		      "the daemon received no userspace_kill event for the test's kill as earlyoom");

	/* 4. Switched off, every window has its length. */
	reload_config(d, conf, "[daemon]\nwindow = 1s\nquiet_read_interval = 0\n");
	body = next_window(d);
	prev = quiet_view(body);
	free(body);
	for (i = 0; i < 4; i++) {
		body = next_window(d);
		w = quiet_view(body);
		free(body);
		ck_assert_msg(fabs(w.length - 1.0) <= WAKE_SLACK_S && w.quiet_total == prev.quiet_total,
			      "quiet_read_interval = 0: a window %.3f s long, %g window ends passed over", w.length,
			      w.quiet_total - prev.quiet_total);
	}
out:
	free(conf);
	mw_assert_clean_stop(d);
}
END_TEST

/* Scrapes every FOLLOW_PERIOD_MS; quiet_read_interval 2 s lets a window at
 * rest follow them up to four intervals (8 s). */
#define FOLLOW_PERIOD_MS 6000
#define FOLLOW_QUIET_S 2.0
#define FOLLOW_LONGEST_S (4 * FOLLOW_QUIET_S)
#define FOLLOW_MARGIN_S 0.25

static const char py_rest_windows[] =
	"import json, sys\n"
	"since = float(sys.argv[2])\n"
	"ws = [w for w in json.load(open(sys.argv[1]))['windows'] if w['start'] >= since]\n"
	"print(len(ws), max([w['end'] - w['start'] for w in ws] or [0]))\n";

/* Where /metrics is scraped at a steady rhythm, a window at rest goes on past
 * quiet_read_interval to just before the next scrape, which reads it fresh;
 * once the scrapes stop, windows at rest end at the interval again. */
START_TEST(test_sampler_quiet_follows_scrapes)
{
	char *conf = mw_write_temp_file("follow.conf", "[daemon]\nwindow = 1s\nquiet_read_interval = 2s\n");
	struct quiet_view prev, w;
	double t = 0, longest;
	struct mw_http_response resp;
	char mode[32], since[64], *body, *out;
	struct mw_daemon *d;
	int64_t t0;
	bool followed = false;
	unsigned k, n;
	int st;

	d = start_quiet(conf, mode, sizeof(mode), &prev);
	if (strcmp(mode, "procfs") == 0)
		goto out; /* no window goes on: test_sampler_quiet says so */

	t0 = mw_mono_ms();
	for (k = 0; k < 24 && !followed; k++) {
		int64_t wait = t0 + (int64_t)k * FOLLOW_PERIOD_MS - mw_mono_ms();

		if (wait > 0)
			mw_sleep_ms((int)wait);
		t = realtime_now();
		body = mw_scrape(d->port);
		ck_assert_msg(body, "scrape failed");
		w = quiet_view(body);
		free(body);
		ck_assert_msg(w.length <= FOLLOW_LONGEST_S + WAKE_SLACK_S,
			      "a window %.3f s long (quiet_read_interval %.0f s: at most %.0f s following scrapes)",
			      w.length, FOLLOW_QUIET_S, FOLLOW_LONGEST_S);
		/* Three scrapes make a rhythm; the window after the fourth starts knowing it. */
		if (k >= 4 && w.quiet_total > prev.quiet_total && w.length >= FOLLOW_QUIET_S + 2.5) {
			note("follow: scrape %u every %d ms read a window %.3f s long that ended %.3f s before it", k,
			     FOLLOW_PERIOD_MS, w.length, t - w.end);
			ck_assert_msg(t - w.end >= 0 && t - w.end <= 1.0 + FOLLOW_MARGIN_S + WAKE_SLACK_S,
				      "a window that followed the scrapes ended %.3f s before the scrape (want within a "
				      "window's length and the margin)",
				      t - w.end);
			followed = true;
		}
		prev = w;
	}
	ck_assert_msg(followed,
		      "in %u scrapes every %d ms no window at rest went on past quiet_read_interval (%.0f s) to the "
		      "next scrape",
		      k, FOLLOW_PERIOD_MS, FOLLOW_QUIET_S);

	/* The scrapes stop. A window that started within 1.5 periods of the
	 * last may still go on to where the next would have come (2 periods);
	 * those that start after end at quiet_read_interval. /api/v1/windows is
	 * no scrape of /metrics. */
	mw_sleep_ms(2 * FOLLOW_PERIOD_MS + 10000);
	ck_assert_int_eq(mw_http_get(d->port, "/api/v1/windows", &resp), 0);
	ck_assert_msg(resp.status == 200, "GET /api/v1/windows: status %d", resp.status);
	snprintf(since, sizeof(since), "%.6f", t + 2.0 * FOLLOW_PERIOD_MS / 1000 + 1.0);
	st = mw_run_python(py_rest_windows, resp.body, resp.body_len, (const char *const[]){ since, NULL }, &out);
	mw_http_response_free(&resp);
	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "python3 on /api/v1/windows (0x%x): %s", st,
		      out);
	ck_assert_msg(sscanf(out, "%u %lf", &n, &longest) == 2, "python3 printed %s", out);
	free(out);
	note("follow: after the scrapes stopped, %u windows, the longest %.3f s", n, longest);
	ck_assert_msg(n >= 2, "only %u windows started 13 s after the last scrape, in 9 s", n);
	ck_assert_msg(longest <= FOLLOW_QUIET_S + WAKE_SLACK_S,
		      "a window %.3f s long with no scrape expected (quiet_read_interval %.0f s)", longest,
		      FOLLOW_QUIET_S);
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
	collectors_add_test(s, "sampler_quiet_follows_scrapes", test_sampler_quiet_follows_scrapes, 240);
}
