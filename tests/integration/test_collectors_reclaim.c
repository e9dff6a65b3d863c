// SPDX-License-Identifier: GPL-2.0
/* memcg reclaim against perf on vmscan:mm_vmscan_memcg_reclaim_*, by
 * tracepoint and by fentry; a cgroup recreated at the same path; top_k and
 * "other" for reclaiming processes. Run by test_collectors.c. */
#include <bpf/bpf.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/magic.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "collectors.h"

/* ---- 1. memcg reclaim ---- */

static void memcg_reclaim_run(const char *attach)
{
	char conf[512], cg[256], cg_label[128], sparse[512], perf_out[512], log[512], script[2048];
	char matcher[256], mode[64], file[512], pid_filter[64], *body;
	unsigned long long perf[2], failcnt;
	double before, after, delta = 0, count, dd_count = 0, v, cg_before = 0;
	struct workload w;
	struct mw_daemon *d;
	int attempt, st, wst;
	bool agree = false;

	memcg_path(cg, sizeof(cg), "");
	snprintf(cg_label, sizeof(cg_label), "/memwatch-itest-%d", (int)getpid());
	/* Before the daemon starts, so that its first walk of the hierarchy knows the cgroup. */
	memcg_create(cg, 64 * MiB);
	/* top_k: our dd must be exported even if other processes stall meanwhile. */
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.reclaim]\ntop_k = 100\n%s%s%s",
		 attach ? "attach = " : "", attach ? attach : "", attach ? "\n" : "");
	d = start_with_config(conf);
	snprintf(perf_out, sizeof(perf_out), "%s/perf-memcg-%s.txt", mw_tmp_root(), attach ? attach : "auto");
	snprintf(log, sizeof(log), "%s/dd-%s.log", mw_tmp_root(), attach ? attach : "auto");
	snprintf(file, sizeof(file), "%s/memory.failcnt", cg);

	for (attempt = 1; !agree; attempt++) {
		unsigned long long failcnt0 = read_ull(file);

		sparse_create(sparse, sizeof(sparse), "memcg", GiB);
		snprintf(script, sizeof(script), "echo $$ > '%s/cgroup.procs' && exec dd if='%s' of=/dev/null bs=1M", cg,
			 sparse);
		body = next_window(d);
		before = metric_or_fail(body, "memwatch_memcg_reclaim_total", NULL);
		snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", cg_label);
		if (!mw_metric(body, "memwatch_cgroup_reclaims_total", matcher, &cg_before, NULL, 0))
			cg_before = 0; /* not exported before its first reclaim */
		free(body);

		/* The shell execs dd: the workload's PID is dd's. */
		w = workload_spawn((const char *const[]){ "/bin/sh", "-c", script, NULL }, log);
		snprintf(pid_filter, sizeof(pid_filter), "common_pid == %d", (int)w.pid);
		st = perf_around((const char *const[]){ "-e", "vmscan:mm_vmscan_memcg_reclaim_begin", "-e",
						       "vmscan:mm_vmscan_memcg_reclaim_begin", "--filter", pid_filter,
						       NULL },
				 &w, perf_out, WORKLOAD_TIMEOUT_MS, &wst);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "perf stat ended with status 0x%x", st);
		ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "sh -c \"%s\" ended with status 0x%x", script,
			      wst);
		perf_counts(perf_out, perf, 2);
		drop_file(sparse);
		failcnt = read_ull(file) - failcnt0;

		body = wait_window_after(d, realtime_now());
		after = metric_or_fail(body, "memwatch_memcg_reclaim_total", NULL);
		delta = after - before;
		count = assert_histogram(body, "memwatch_memcg_reclaim_seconds");
		ck_assert_msg(count == after,
			      "memwatch_memcg_reclaim_seconds_count %.0f != memwatch_memcg_reclaim_total %.0f", count,
			      after);
		snprintf(matcher, sizeof(matcher), "pid=\"%d\",comm=\"dd\"", (int)w.pid);
		dd_count = metric_or_fail(body, "memwatch_process_memcg_reclaims_total", matcher);
		free(body);

		/* dd is the only task of the cgroup (the shell that joined it exec'd
		 * dd) and the host has memory to spare: the cgroup's stalls are dd's
		 * memcg reclaims, exactly as perf counted them. The cgroup's path is
		 * resolved by a walk of the hierarchy, at most once a second. */
		snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", cg_label);
		ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_reclaims_total", matcher, WINDOW_TIMEOUT_MS,
					     mw_pred_eq, cg_before + (double)perf[1], &v),
			      "memwatch_cgroup_reclaims_total{%s} went %g -> %g, perf counted %llu memcg reclaims of dd",
			      matcher, cg_before, v, perf[1]);
		body = next_window(d);
		assert_collector(body, "reclaim", attach, mode, sizeof(mode));
		if (!attach)
			assert_traced_mode("reclaim", mode);
		assert_promtool(body);
		free(body);

		note("memcg reclaim, attach=%s (mode %s), attempt %d: memwatchd +%.0f (dd %.0f); perf %llu (dd %llu); "
		     "memory.failcnt +%llu",
		     attach ? attach : "auto", mode, attempt, delta, dd_count, perf[0], perf[1], failcnt);
		ck_assert_msg(perf[0] > 0 || failcnt == 0 || strcmp(mode, "tracepoint") != 0,
			      "attach=tracepoint: perf counted no vmscan:mm_vmscan_memcg_reclaim_begin although the "
			      "cgroup hit its limit %llu times (memory.failcnt) and memwatchd counted %.0f memcg "
			      "reclaims. The daemon's BPF programs on the classic tracepoints return 0, and a tracepoint "
			      "BPF program that returns 0 makes perf_trace_run_bpf_submit() drop the event for every "
			      "perf user of that tracepoint: with attach = tracepoint, memwatchd blinds perf",
			      failcnt, delta);
		ck_assert_msg(perf[1] > 0,
			      "perf counted no vmscan:mm_vmscan_memcg_reclaim_begin of dd: the 64M cgroup did not reclaim "
			      "(memory.failcnt +%llu, memwatchd counted %.0f)",
			      failcnt, dd_count);
		/* Our own workload, exactly: immune to whatever else runs on the host. */
		ck_assert_msg(dd_count == (double)perf[1],
			      "attach=%s: memwatch_process_memcg_reclaims_total{pid=\"%d\"} is %.0f, perf counted %llu "
			      "memcg reclaims of that dd%s",
			      attach ? attach : "auto", (int)w.pid, dd_count, perf[1],
			      (double)perf[1] < dd_count ? ". perf saw fewer: a BPF program on the classic tracepoint "
							   "that returns 0 (any memwatchd on this host with attach = "
							   "tracepoint) hides events from perf"
							 : "");
		/* The whole system: memwatchd's windows bracket perf's run, so a
		 * memcg reclaim of anything else can fall in between; then try again. */
		agree = fabs(delta - (double)perf[0]) <= 0.02 * (double)perf[0];
		ck_assert_msg(agree || attempt < MAX_ATTEMPTS,
			      "attach=%s: memwatch_memcg_reclaim_total grew by %.0f, perf counted %llu memcg reclaims "
			      "system-wide (more than 2%% apart) in each of %d attempts; dd alone: %.0f and %llu",
			      attach ? attach : "auto", delta, perf[0], attempt, dd_count, perf[1]);
	}

	memcg_remove(cg);
	mw_assert_clean_stop(d);
}

START_TEST(test_memcg_reclaim)
{
	memcg_reclaim_run(NULL);
	memcg_reclaim_run("raw_tp");
	memcg_reclaim_run("tracepoint");
}
END_TEST

/* dd reads a sparse file of `size` through cgroup cg; returns how many memcg
 * reclaims perf counted for that dd. */
static unsigned long long dd_memcg_reclaims(const char *cg, const char *tag, unsigned long long size)
{
	char sparse[512], perf_out[512], log[512], script[2048], pid_filter[64];
	unsigned long long perf[1];
	struct workload w;
	int st, wst;

	sparse_create(sparse, sizeof(sparse), tag, size);
	snprintf(perf_out, sizeof(perf_out), "%s/perf-%s.txt", mw_tmp_root(), tag);
	snprintf(log, sizeof(log), "%s/dd-%s.log", mw_tmp_root(), tag);
	snprintf(script, sizeof(script), "echo $$ > '%s/cgroup.procs' && exec dd if='%s' of=/dev/null bs=1M", cg,
		 sparse);
	w = workload_spawn((const char *const[]){ "/bin/sh", "-c", script, NULL }, log);
	snprintf(pid_filter, sizeof(pid_filter), "common_pid == %d", (int)w.pid);
	st = perf_around((const char *const[]){ "-e", "vmscan:mm_vmscan_memcg_reclaim_begin", "--filter", pid_filter,
					       NULL },
			 &w, perf_out, WORKLOAD_TIMEOUT_MS, &wst);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "perf stat ended with status 0x%x", st);
	ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "sh -c \"%s\" ended with status 0x%x", script, wst);
	perf_counts(perf_out, perf, 1);
	drop_file(sparse);
	ck_assert_msg(perf[0] > 0, "perf counted no memcg reclaim of dd in %s", cg);
	return perf[0];
}

/* A cgroup removed and made again under the same path (a restarted service)
 * is a new cgroup id: within series_ttl the removed one is still exported.
 * The path must stay one series, continuing from the removed cgroup's count:
 * never two series of the same labels, never going back. */
START_TEST(test_cgroup_recreated_same_path)
{
	char cg[256], label[128], matcher[160], prefix[192];
	unsigned long long first, second;
	double v, last = 0;
	struct mw_daemon *d;
	int64_t deadline;
	bool done = false;

	memcg_path(cg, sizeof(cg), "-again");
	snprintf(label, sizeof(label), "/memwatch-itest-%d-again", (int)getpid());
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", label);
	snprintf(prefix, sizeof(prefix), "memwatch_cgroup_reclaims_total{%s", matcher); /* more labels may follow */
	memcg_create(cg, 64 * MiB);
	d = start_with_config("[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.reclaim]\ntop_k = 100\n"
			      "series_ttl = 300s\n");
	first = dd_memcg_reclaims(cg, "again-1", 256 * MiB);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_reclaims_total", matcher, WINDOW_TIMEOUT_MS, mw_pred_eq,
				     (double)first, &v),
		      "memwatch_cgroup_reclaims_total{%s} is %g, perf counted %llu", matcher, v, first);
	memcg_remove(cg);
	memcg_create(cg, 64 * MiB);
	second = dd_memcg_reclaims(cg, "again-2", 256 * MiB);

	deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	while (!done) {
		char *body = next_window(d);

		ck_assert_msg(count_series(body, prefix) <= 1, "%zu series of %s in one answer", count_series(body, prefix),
			      prefix);
		if (mw_metric(body, "memwatch_cgroup_reclaims_total", matcher, &v, NULL, 0)) {
			ck_assert_msg(v >= last, "memwatch_cgroup_reclaims_total{%s} went back from %g to %g", matcher,
				      last, v);
			last = v;
		}
		free(body);
		done = last == (double)(first + second);
		ck_assert_msg(done || mw_mono_ms() < deadline,
			      "memwatch_cgroup_reclaims_total{%s} is %g; perf counted %llu in the removed cgroup and "
			      "%llu in the new one of the same path",
			      matcher, last, first, second);
	}
	note("cgroup made again under its path: %llu + %llu memcg reclaims (perf), exported %.0f", first, second,
	     last);
	memcg_remove(cg);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- 1b. top_k and "other" for reclaiming processes ---- */

struct reader_args {
	const char *cg, *long_file, *short_file;
};

/* Joins its memory cgroup, then reads the long ('l') or the short ('s') file
 * through the page cache on each command, answering 'd' when done. The same
 * process all along: its counters carry on from one read to the next. */
static void reader_child(const void *arg, int cmd, int rep)
{
	const struct reader_args *a = arg;
	char c, *buf;

	child_init();
	if (memcg_join(a->cg) < 0)
		_exit(5);
	buf = malloc(MiB);
	if (!buf)
		_exit(3);
	while (read(cmd, &c, 1) == 1) {
		int fd = open(c == 'l' ? a->long_file : a->short_file, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			_exit(4);
		while ((n = read(fd, buf, MiB)) > 0)
			;
		close(fd);
		if (n < 0 || write(rep, "d", 1) != 1)
			_exit(6);
	}
	_exit(0);
}

/* The largest value a series of `family` with the label pair `key`="value"
 * had in the windows the ring keeps (/api/v1/windows) that ended after
 * `after` (seconds since the epoch). A window published between two scrapes
 * of /metrics (on a busy host its collectors can finish after the scraper's
 * clock passed its end) is read here too, so a series exported in one window
 * only is never missed. NAN when no such window had it. */
static double ring_max(struct mw_daemon *d, const char *family, const char *key, const char *value, double after)
{
	struct mw_http_response resp;
	char array[128], pair[128];
	double max = NAN;
	const char *w;

	ck_assert_int_eq(mw_http_get(d->port, "/api/v1/windows", &resp), 0);
	ck_assert_msg(resp.status == 200, "GET /api/v1/windows: status %d", resp.status);
	snprintf(array, sizeof(array), "\"%s\":[", family);
	snprintf(pair, sizeof(pair), "\"%s\":\"%s\"", key, value);
	for (w = strstr(resp.body, "{\"seq\":"); w; w = strstr(w + 1, "{\"seq\":")) {
		const char *next = strstr(w + 1, "{\"seq\":"), *end = strstr(w, "\"end\":"), *a, *a_end, *m;

		ck_assert_msg(end, "a window without its end in /api/v1/windows");
		if (strtod(end + 6, NULL) <= after)
			continue;
		a = strstr(w, array);
		if (!a || (next && a > next))
			continue;
		a_end = strstr(a, "}]");
		ck_assert_msg(a_end, "%s: no end of its array in /api/v1/windows", family);
		for (m = strstr(a, pair); m && m < a_end; m = strstr(m + 1, pair)) {
			const char *v = strstr(m, "\"value\":");

			ck_assert_msg(v && v < a_end, "%s{%s}: no value in /api/v1/windows", family, pair);
			max = isnan(max) ? strtod(v + 8, NULL) : fmax(max, strtod(v + 8, NULL));
		}
	}
	mw_http_response_free(&resp);
	return max;
}

static bool child_answered(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, 0) == 1 && read(fd, &c, 1) == 1;
}

/* Two processes in two 64 MiB cgroups, top_k = 1, series_ttl = 0. In each
 * phase one reads 8 GiB (stalling all along) while the other reads 96 MiB
 * (a short stall) in the middle of it; then they swap. In every window one
 * process at most is exported; the long reader is, with its whole count as
 * perf has it (both phases); the short one never is, and pid="other" grows
 * by exactly what everything but the long reader did (perf, system-wide).
 * The short read starts once the long one is reclaiming (its cgroup's
 * memory.failcnt rose) and a window has ended since: a fixed delay was not
 * enough on a loaded host, where the long reader could still be filling its
 * cgroup when the short one stalled, and the short one was exported. */
START_TEST(test_reclaim_top_k_other)
{
	char cg[2][256], long_file[512], short_file[512], perf_out[512], filter[2][64], matcher[64];
	struct reader_args args[2];
	unsigned long long counts[3], total[2] = { 0, 0 };
	int cmd[2], rep[2], phase, i, st;
	struct mw_daemon *d;
	pid_t child[2], perf;

	memcg_path(cg[0], sizeof(cg[0]), "-rk0");
	memcg_path(cg[1], sizeof(cg[1]), "-rk1");
	memcg_create(cg[0], 64 * MiB);
	memcg_create(cg[1], 64 * MiB);
	sparse_create(long_file, sizeof(long_file), "rk-long", 8 * GiB);
	sparse_create(short_file, sizeof(short_file), "rk-short", 96 * MiB);
	d = start_with_config("[daemon]\nwindow = 500ms\nsample_interval = 50ms\n[collector.reclaim]\ntop_k = 1\n"
			      "series_ttl = 0\n");
	for (i = 0; i < 2; i++) {
		args[i] = (struct reader_args){ cg[i], long_file, short_file };
		child[i] = spawn_child(reader_child, &args[i], &cmd[i], &rep[i]);
		snprintf(filter[i], sizeof(filter[i]), "common_pid == %d", (int)child[i]);
	}
	snprintf(perf_out, sizeof(perf_out), "%s/perf-topk.txt", mw_tmp_root());

	for (phase = 0; phase < 2; phase++) {
		int lead = phase, tail = 1 - phase;
		bool lead_done = false, tail_done = false, tail_started = false, tail_seen = false;
		double other0, other1, lead_max = 0, v, phase_start, reclaiming_since = NAN, end;
		unsigned long long failcnt0;
		char failcnt_file[300];
		int64_t t0, deadline;
		char *body;

		perf = perf_start((const char *const[]){ "-e", "vmscan:mm_vmscan_memcg_reclaim_begin", "--filter",
							 filter[lead], "-e", "vmscan:mm_vmscan_memcg_reclaim_begin",
							 "--filter", filter[tail], "-e",
							 "vmscan:mm_vmscan_memcg_reclaim_begin", NULL },
				  perf_out);
		body = next_window(d);
		other0 = metric_or_fail(body, "memwatch_process_memcg_reclaims_total", "pid=\"other\"");
		ck_assert(mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &phase_start, NULL, 0));
		free(body);

		snprintf(failcnt_file, sizeof(failcnt_file), "%s/memory.failcnt", cg[lead]);
		failcnt0 = read_ull(failcnt_file);
		write_byte(cmd[lead], 'l');
		t0 = mw_mono_ms();
		deadline = t0 + WORKLOAD_TIMEOUT_MS;
		/* Every window: one process series at most, and who it is. */
		while (!lead_done || !tail_done) {
			ck_assert_msg(mw_mono_ms() < deadline, "the readers did not finish within %d ms (short read %s)",
				      WORKLOAD_TIMEOUT_MS, tail_started ? "started" : "not started");
			if (isnan(reclaiming_since) && read_ull(failcnt_file) > failcnt0)
				reclaiming_since = realtime_now();
			lead_done = lead_done || child_answered(rep[lead]);
			tail_done = tail_done || (tail_started && child_answered(rep[tail]));
			body = mw_scrape(d->port);
			ck_assert_ptr_nonnull(body);
			ck_assert_msg(count_series(body, "memwatch_process_memcg_reclaims_total{pid=\"") <= 2,
				      "top_k = 1, yet more than one process series (plus other):\n%s", body);
			snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child[lead]);
			if (mw_metric(body, "memwatch_process_memcg_reclaims_total", matcher, &v, NULL, 0))
				lead_max = fmax(lead_max, v);
			snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child[tail]);
			tail_seen = tail_seen || mw_metric(body, "memwatch_process_memcg_reclaims_total", matcher, NULL,
							   NULL, 0);
			if (!tail_started && !isnan(reclaiming_since) &&
			    mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
			    end > reclaiming_since) {
				write_byte(cmd[tail], 's');
				tail_started = true;
			}
			free(body);
			mw_sleep_ms(20);
		}
		ck_assert_msg(tail_started, "the short read never started (the long reader's memory.failcnt %s)",
			      isnan(reclaiming_since) ? "never rose" : "rose");
		/* The lead's last window, and one more for everything to settle. */
		for (i = 0; i < 2; i++) {
			body = next_window(d);
			snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child[lead]);
			if (mw_metric(body, "memwatch_process_memcg_reclaims_total", matcher, &v, NULL, 0))
				lead_max = fmax(lead_max, v);
			free(body);
		}
		body = next_window(d);
		other1 = metric_or_fail(body, "memwatch_process_memcg_reclaims_total", "pid=\"other\"");
		free(body);
		snprintf(matcher, sizeof(matcher), "%d", (int)child[lead]);
		v = ring_max(d, "memwatch_process_memcg_reclaims_total", "pid", matcher, phase_start);
		if (!isnan(v))
			lead_max = fmax(lead_max, v);
		snprintf(matcher, sizeof(matcher), "%d", (int)child[tail]);
		tail_seen = tail_seen ||
			    !isnan(ring_max(d, "memwatch_process_memcg_reclaims_total", "pid", matcher, phase_start));
		perf_stop(perf);
		perf_counts(perf_out, counts, 3);
		total[lead] += counts[0];
		total[tail] += counts[1];

		note("top_k = 1, phase %d: long reader %d exported up to %.0f (perf: %llu in all), short reader %d "
		     "(perf: %llu this phase) %s; other +%.0f, perf system-wide %llu",
		     phase, (int)child[lead], lead_max, total[lead], (int)child[tail], counts[1],
		     tail_seen ? "exported" : "never exported", other1 - other0, counts[2]);
		ck_assert_msg(counts[1] > 0 && counts[0] > 10 * counts[1],
			      "phase %d: the long read reclaimed %llu times, the short one %llu: not the intended shapes",
			      phase, counts[0], counts[1]);
		ck_assert_msg(lead_max == (double)total[lead],
			      "phase %d: the long reader (pid %d) was exported with at most %.0f memcg reclaims, perf "
			      "counted %llu",
			      phase, (int)child[lead], lead_max, total[lead]);
		ck_assert_msg(!tail_seen, "phase %d: the short reader (pid %d) was exported although top_k = 1 and the "
			      "long one stalled all along", phase, (int)child[tail]);
		ck_assert_msg(other1 - other0 == (double)(counts[2] - counts[0]),
			      "phase %d: pid=\"other\" grew by %.0f, perf counted %llu memcg reclaims of everything but the "
			      "long reader",
			      phase, other1 - other0, counts[2] - counts[0]);
	}
	/* The second reader holds a copy of the first one's command pipe (forked
	 * later): close both before waiting for either. */
	close(cmd[0]);
	close(cmd[1]);
	for (i = 0; i < 2; i++) {
		st = wait_child(child[i], 10000, "a reader");
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader %d ended with status 0x%x", i, st);
		close(rep[i]);
	}
	drop_file(long_file);
	drop_file(short_file);
	memcg_remove(cg[0]);
	memcg_remove(cg[1]);
	mw_assert_clean_stop(d);
}
END_TEST

void collectors_add_reclaim_tests(Suite *s)
{
	collectors_add_test(s, "memcg_reclaim", test_memcg_reclaim, 120);
	collectors_add_test(s, "cgroup_recreated_same_path", test_cgroup_recreated_same_path, 120);
	collectors_add_test(s, "reclaim_top_k_other", test_reclaim_top_k_other, 180);
}
