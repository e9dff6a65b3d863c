// SPDX-License-Identifier: GPL-2.0
/* Page allocations and faults against /proc/vmstat and /proc/PID/stat, for
 * each walk (kfunc, iter/task, /proc); a process of several threads, one of
 * them gone; a process that exits between walks; a restart reading fresh counters; a burst
 * of exits larger than the exit ring. Run by test_collectors.c. */
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
#include <pthread.h>
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

/* ---- 3. allocations and faults ---- */

struct proc_faults {
	unsigned long long minflt, majflt;
};

static struct proc_faults proc_stat_faults(pid_t pid)
{
	char path[64], *text, *p, *save = NULL, *tok;
	struct proc_faults f = { 0, 0 };
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = mw_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	p = strrchr(text, ')');
	ck_assert_msg(p != NULL, "%s: no ')'", path);
	/* Field 3 (state) follows the comm; minflt is field 10, majflt 12. */
	for (field = 3, tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 10)
			f.minflt = strtoull(tok, NULL, 10);
		if (field == 12) {
			f.majflt = strtoull(tok, NULL, 10);
			break;
		}
	}
	ck_assert_msg(field == 12, "%s has too few fields", path);
	free(text);
	return f;
}

/* A scrape of a window whose process walk (memwatch_fault_process_age_seconds
 * before the window's end) came after t: walks are gated (walk_interval). */
static char *scrape_walked_after(struct mw_daemon *d, double t)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	double end = NAN, age = NAN;

	for (;;) {
		char *body = mw_scrape(d->port);

		if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
		    mw_metric(body, "memwatch_fault_process_age_seconds", NULL, &age, NULL, 0) && end - age > t)
			return body;
		free(body);
		ck_assert_msg(mw_running(d), "memwatchd exited while waiting for a process walk");
		ck_assert_msg(mw_mono_ms() < deadline, "no process walk after %.3f (last window %.3f, walk %.3f s before)",
			      t, end, age);
		mw_sleep_ms(20);
	}
}

/* The first process walk from now: child's exported counts equal what
 * /proc/PID/stat prints (it stands still by now), in the collector mode
 * source asks for, or the expectation table's for auto (NULL). Returns its
 * minor faults. */
static double assert_faults_as_proc(struct mw_daemon *d, pid_t child, const char *source, const char *what)
{
	char matcher[64], mode[64], *body = scrape_walked_after(d, realtime_now());
	struct proc_faults pf = proc_stat_faults(child);
	double minflt, majflt;

	snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child);
	minflt = metric_or_fail(body, "memwatch_process_minor_faults_total", matcher);
	majflt = metric_or_fail(body, "memwatch_process_major_faults_total", matcher);
	assert_collector(body, "faults", source, mode, sizeof(mode));
	if (!source)
		mw_assert_collector_expected(body, "faults", NULL);
	note("%s (faults source=%s, mode %s): memwatchd minor %.0f major %.0f, /proc/%d/stat minor %llu major %llu",
	     what, source ? source : "auto", mode, minflt, majflt, (int)child, pf.minflt, pf.majflt);
	ck_assert_msg(fabs(minflt - (double)pf.minflt) <= 0.01 * (double)pf.minflt,
		      "%s, mode %s: memwatch_process_minor_faults_total{%s} is %.0f, /proc/%d/stat says %llu", what, mode,
		      matcher, minflt, (int)child, pf.minflt);
	ck_assert_msg(majflt == (double)pf.majflt,
		      "%s, mode %s: memwatch_process_major_faults_total{%s} is %.0f, /proc/%d/stat says %llu", what, mode,
		      matcher, majflt, (int)child, pf.majflt);
	free(body);
	return minflt;
}

static void allocs_and_faults_run(const char *source)
{
	const size_t len = 256 * MiB;
	char conf[512], mode[64], *body;
	unsigned long long captured0, captured1;
	double pages0, pages1, dpages, dvm_lo, dvm_hi, captured, minflt;
	struct bracket vm0, vm1;
	struct mw_daemon *d;
	int cmd, rep, st;
	pid_t child;
	char c;

	/* Idle processes stay exported (series_ttl), and none is pushed out by busier ones (top_k).
	 * trace: the pages the BPF program counts, checked against /proc/vmstat (the
	 * default, vmstat mode, is test_alloc_vmstat_default). */
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 200ms\nquiet_read_interval = 0\nsample_interval = 50ms\n[collector.alloc]\ntrace = yes\n"
		 "[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n%s%s%s",
		 source ? "source = " : "", source ? source : "", source ? "\n" : "");
	d = start_with_config(conf);

	child = spawn_toucher(NULL, len, &cmd, &rep);

	/* Both counts are read right after a window is published, before and after. */
	captured0 = vmstat_get("compact_success");
	body = window_bracket(d, realtime_now(), pgalloc_pages, &vm0);
	pages0 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	free(body);
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WORKLOAD_TIMEOUT_MS, "the child to touch 256 MiB");
	body = window_bracket(d, realtime_now(), pgalloc_pages, &vm1);
	captured1 = vmstat_get("compact_success");
	pages1 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	dpages = pages1 - pages0;
	dvm_lo = (double)(vm1.lo[0] - vm0.hi[0]);
	dvm_hi = (double)(vm1.hi[0] - vm0.lo[0]);
	/* A page that direct compaction captures for its allocation is handed
	 * out (mm_page_alloc fires) without going through rmqueue(), so
	 * pgalloc_* leaves it out. Whatever else on the host compacts meanwhile
	 * may add up to 2^MAX_PAGE_ORDER pages per success to our side. */
	captured = (double)(captured1 - captured0) * 1024;
	note("allocations (faults source=%s): memwatchd +%.0f pages, pgalloc_* +%.0f..%.0f, direct compaction "
	     "successes +%llu",
	     source ? source : "auto", dpages, dvm_lo, dvm_hi, captured1 - captured0);
	ck_assert_msg(dpages >= (double)(len / 4096),
		      "memwatch_page_allocated_pages_total grew by %.0f while a child touched %zu pages", dpages,
		      len / 4096);
	ck_assert_msg(dpages >= 0.95 * dvm_lo && dpages <= 1.05 * dvm_hi + captured,
		      "memwatch_page_allocated_pages_total grew by %.0f, /proc/vmstat pgalloc_* by %.0f to %.0f over "
		      "the same windows (more than 5%% apart, %.0f pages allowed for compaction captures)",
		      dpages, dvm_lo, dvm_hi, captured);

	assert_collector(body, "alloc", NULL, mode, sizeof(mode));
	assert_traced_mode("alloc", mode);
	free(body);
	/* The child idles now: its counters cannot move any more, and the
	 * first walk after this sees their final values. */
	minflt = assert_faults_as_proc(d, child, source, "a child that touched 256 MiB");
	ck_assert_msg(minflt >= (double)(len / 4096), "the child's %.0f minor faults are fewer than its %zu pages", minflt,
		      len / 4096);

	close(cmd);
	st = wait_child(child, 10000, "the touching child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the touching child ended with status 0x%x", st);
	close(rep);
	mw_assert_clean_stop(d);
}

START_TEST(test_allocs_and_faults)
{
	allocs_and_faults_run(NULL);
	allocs_and_faults_run("iter");
	allocs_and_faults_run("procfs");
}
END_TEST

/* The faults of a process of several threads, read where each thread
 * faulted: the main thread, one that exited (its counts now in the
 * process's signal_struct) and two that stay, parked. */
#define THREADS_PARKED 2
#define THREAD_BYTES (8 * MiB)

struct threaded_child {
	pthread_barrier_t touched;
	pthread_barrier_t leave;
};

static void *thread_touch(void *arg)
{
	char *p = mmap(NULL, THREAD_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(3);
	touch(p, THREAD_BYTES);
	return p;
}

static void *thread_touch_and_park(void *arg)
{
	struct threaded_child *tc = arg;

	thread_touch(NULL);
	pthread_barrier_wait(&tc->touched);
	pthread_barrier_wait(&tc->leave);
	return NULL;
}

static void threaded_child(const void *arg, int cmd, int rep)
{
	static struct threaded_child tc;
	pthread_t gone, parked[THREADS_PARKED];
	char c;

	child_init();
	if (read(cmd, &c, 1) != 1)
		_exit(2);
	if (pthread_barrier_init(&tc.touched, NULL, THREADS_PARKED + 1) ||
	    pthread_barrier_init(&tc.leave, NULL, THREADS_PARKED + 1))
		_exit(3);
	if (pthread_create(&gone, NULL, thread_touch, NULL) || pthread_join(gone, NULL))
		_exit(3);
	for (int i = 0; i < THREADS_PARKED; i++)
		if (pthread_create(&parked[i], NULL, thread_touch_and_park, &tc))
			_exit(3);
	thread_touch(NULL);
	pthread_barrier_wait(&tc.touched);
	if (write(rep, "d", 1) != 1)
		_exit(4);
	while (read(cmd, &c, 1) > 0)
		;
	pthread_barrier_wait(&tc.leave);
	for (int i = 0; i < THREADS_PARKED; i++)
		pthread_join(parked[i], NULL);
	_exit(0);
}

static void threaded_faults_run(const char *source)
{
	char conf[256];
	struct mw_daemon *d;
	int cmd, rep, st;
	double minflt;
	pid_t child;
	char c;

	snprintf(conf, sizeof(conf), "[daemon]\nwindow = 200ms\nquiet_read_interval = 0\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n%s%s%s",
		 source ? "source = " : "", source ? source : "", source ? "\n" : "");
	d = start_with_config(conf);
	child = spawn_child(threaded_child, NULL, &cmd, &rep);
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WORKLOAD_TIMEOUT_MS, "the threads to touch their memory");
	minflt = assert_faults_as_proc(d, child, source, "four threads, one gone");
	ck_assert_msg(minflt >= (double)((THREADS_PARKED + 2) * THREAD_BYTES / 4096),
		      "%.0f minor faults for the %d threads' %zu pages each", minflt, THREADS_PARKED + 2,
		      (size_t)THREAD_BYTES / 4096);
	close(cmd);
	st = wait_child(child, 10000, "the threaded child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the threaded child ended with status 0x%x", st);
	close(rep);
	mw_assert_clean_stop(d);
}

START_TEST(test_faults_threads)
{
	threaded_faults_run(NULL);
	threaded_faults_run("iter");
}
END_TEST

/* Touches len bytes as soon as it starts, then exits: a life between two
 * process walks, seen only by the exit hook. */
static void short_life_child(const void *arg, int cmd, int rep)
{
	child_init();
	touch_on_go(cmd, *(const size_t *)arg);
	_exit(0);
}

/* Bounded wait4: the child's own fault counts as the kernel reports them
 * to its parent. */
static int wait_child_rusage(pid_t pid, int timeout_ms, struct rusage *ru)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t r = wait4(pid, &st, WNOHANG, ru);

		if (r == pid)
			return st;
		ck_assert_msg(r == 0 || errno == EINTR, "wait4: %s", strerror(errno));
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			ck_abort_msg("the short-lived child (pid %d) did not finish within %d ms: killed", (int)pid,
				     timeout_ms);
		}
		mw_sleep_ms(5);
	}
}

/* A process that faults and exits between two walks keeps its faults: the
 * exit hook's final counts equal what wait4() reports, and the series
 * appears at the next walk. The walks are 5 windows apart and the host's
 * faults do not call one early, so the child's whole life (a few ms)
 * falls between two of them but for a chance of well under 1 %. */
START_TEST(test_faults_exit_between_walks)
{
	const size_t len = 16 * MiB;
	char matcher[64];
	double exits0, exits1, minflt, majflt, dropped;
	struct rusage ru;
	struct mw_daemon *d;
	int cmd, rep, st;
	pid_t child;
	char *body;

	d = start_with_config("[daemon]\nwindow = 200ms\nquiet_read_interval = 0\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n"
			      "walk_interval = 5\nwalk_faults = 1099511627776\n");
	body = scrape_walked_after(d, realtime_now());
	mw_assert_collector_expected(body, "faults", NULL);
	exits0 = metric_or_fail(body, "memwatch_fault_process_exits_total", NULL);
	free(body);
	child = spawn_child(short_life_child, &len, &cmd, &rep);
	write_byte(cmd, 'g');
	st = wait_child_rusage(child, 10000, &ru);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the short-lived child ended with status 0x%x", st);
	close(cmd);
	close(rep);
	body = scrape_walked_after(d, realtime_now());
	snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child);
	minflt = metric_or_fail(body, "memwatch_process_minor_faults_total", matcher);
	majflt = metric_or_fail(body, "memwatch_process_major_faults_total", matcher);
	exits1 = metric_or_fail(body, "memwatch_fault_process_exits_total", NULL);
	dropped = metric_or_fail(body, "memwatch_fault_process_exits_dropped_total", NULL);
	note("exited between walks: memwatchd minor %.0f major %.0f, wait4 minor %ld major %ld; exits +%.0f, dropped %.0f",
	     minflt, majflt, ru.ru_minflt, ru.ru_majflt, exits1 - exits0, dropped);
	ck_assert_msg(minflt == (double)ru.ru_minflt && majflt == (double)ru.ru_majflt,
		      "memwatch_process_{minor,major}_faults_total{%s} are %.0f and %.0f, wait4() says %ld and %ld",
		      matcher, minflt, majflt, ru.ru_minflt, ru.ru_majflt);
	ck_assert_msg(minflt >= (double)(len / 4096), "the child's %.0f minor faults are fewer than its %zu pages",
		      minflt, len / 4096);
	ck_assert_msg(exits1 > exits0, "memwatch_fault_process_exits_total stayed at %.0f", exits0);
	ck_assert_msg(dropped == 0, "%.0f exits dropped", dropped);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

/* A restart of the faults collector (a reload to another source) continues
 * its counters from the old instance's last values, which it reads then, not
 * at its last walk: a process that exited since that walk would otherwise
 * lose its last faults, as the new instance never sees it. The walks are an
 * hour apart and the host's faults call none, so the child's 16 MiB and its
 * exit fall between the start's walk and the restart. */
START_TEST(test_faults_restart_reads_fresh)
{
	static const char base[] = "[daemon]\nwindow = 200ms\nquiet_read_interval = 0\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n"
				   "walk_interval = 3600\nwalk_faults = 1099511627776\n";
	static const char procfs[] = "[daemon]\nwindow = 200ms\nquiet_read_interval = 0\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n"
				     "walk_interval = 3600\nwalk_faults = 1099511627776\nsource = procfs\n";
	const size_t len = 16 * MiB;
	int64_t deadline;
	char matcher[64], mode[64], *conf, *body;
	double minflt0, walks0, reloads0, minflt, majflt;
	struct rusage ru;
	struct mw_daemon *d;
	int cmd, rep, st;
	pid_t child;
	char c;

	child = spawn_toucher(NULL, len, &cmd, &rep);
	snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child);
	conf = mw_write_temp_file("memwatchd.conf", base);
	ck_assert_msg(conf != NULL, "cannot write a temporary config");
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd with config\n%s\ndid not start serving /metrics (log above)", base);
	body = next_window(d);
	assert_collector(body, "faults", NULL, mode, sizeof(mode));
	mw_assert_collector_expected(body, "faults", NULL);
	minflt0 = metric_or_fail(body, "memwatch_process_minor_faults_total", matcher);
	walks0 = metric_or_fail(body, "memwatch_fault_process_walks_total", NULL);
	reloads0 = metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"");
	free(body);

	/* Faults, then exits (the end of its commands ends it). */
	write_byte(cmd, 'g');
	ck_assert_msg(read(rep, &c, 1) == 1 && c == 'd', "the toucher did not report");
	close(cmd);
	st = wait_child_rusage(child, 10000, &ru);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the toucher ended with status 0x%x", st);
	close(rep);
	body = next_window(d);
	ck_assert_msg(metric_or_fail(body, "memwatch_fault_process_walks_total", NULL) == walks0 &&
			      metric_or_fail(body, "memwatch_process_minor_faults_total", matcher) == minflt0,
		      "a process walk came between the child's exit and the reload: the test proves nothing");
	free(body);

	reload_config(d, conf, procfs);
	deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	for (;;) {
		body = next_window(d);
		if (metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"") > reloads0)
			break;
		free(body);
		ck_assert_msg(mw_mono_ms() < deadline, "the reload to source = procfs was not counted");
	}
	assert_collector(body, "faults", "procfs", mode, sizeof(mode));
	/* Held (series_ttl) at what the old instance read last. */
	minflt = metric_or_fail(body, "memwatch_process_minor_faults_total", matcher);
	majflt = metric_or_fail(body, "memwatch_process_major_faults_total", matcher);
	note("restart after an exit: child minor faults %.0f at the start's walk, %.0f after the restart; wait4 says %ld "
	     "(major %.0f, %ld)",
	     minflt0, minflt, ru.ru_minflt, majflt, ru.ru_majflt);
	ck_assert_msg(minflt == (double)ru.ru_minflt && majflt == (double)ru.ru_majflt,
		      "after the restart memwatch_process_{minor,major}_faults_total{%s} are %.0f and %.0f, wait4() says "
		      "%ld and %ld (%.0f at the last walk before it)",
		      matcher, minflt, majflt, ru.ru_minflt, ru.ru_majflt, minflt0);
	ck_assert_msg(minflt >= minflt0 + (double)(len / 4096), "the child's %zu pages are not in %.0f - %.0f",
		      len / 4096, minflt, minflt0);
	free(body);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* More exits within one window than the exit ring holds (FAULTS_EXITS_RINGBUF_BYTES:
 * about 4,700 records) are all read: the ring wakes the daemon when half full
 * rather than at every record or never. The test's own children are counted
 * by the test; the daemon counts the host's other exits too. */
#define EXIT_BURST 8000
#define BURST_WINDOW_MS 10000

START_TEST(test_faults_exit_burst)
{
	double exits0, exits1, dropped0, dropped1, end0, start;
	struct mw_daemon *d;
	int64_t t0, t1;
	char *body;

	d = start_with_config("[daemon]\nwindow = 10s\nquiet_read_interval = 0\nsample_interval = 1s\n");
	/* A window is 10 s: every wait allows two of them. */
	body = wait_window_after_ms(d, realtime_now(), 2 * BURST_WINDOW_MS + WINDOW_TIMEOUT_MS);
	mw_assert_collector_expected(body, "faults", NULL);
	exits0 = metric_or_fail(body, "memwatch_fault_process_exits_total", NULL);
	dropped0 = metric_or_fail(body, "memwatch_fault_process_exits_dropped_total", NULL);
	end0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	free(body);
	start = realtime_now();
	t0 = mw_mono_ms();
	for (int i = 0; i < EXIT_BURST; i++) {
		pid_t pid = vfork();

		if (pid == 0)
			_exit(0);
		ck_assert_msg(pid > 0, "vfork: %s", strerror(errno));
		ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	}
	t1 = mw_mono_ms();
	body = wait_window_after_ms(d, realtime_now(), 2 * BURST_WINDOW_MS + WINDOW_TIMEOUT_MS);
	exits1 = metric_or_fail(body, "memwatch_fault_process_exits_total", NULL);
	dropped1 = metric_or_fail(body, "memwatch_fault_process_exits_dropped_total", NULL);
	free(body);
	note("exit burst: %d exits in %lld ms, %.1f s into a 10 s window; the daemon read %.0f, dropped %.0f",
	     EXIT_BURST, (long long)(t1 - t0), start - end0, exits1 - exits0, dropped1 - dropped0);
	ck_assert_msg(dropped1 == dropped0, "%.0f of a burst of %d exits dropped", dropped1 - dropped0, EXIT_BURST);
	ck_assert_msg(exits1 - exits0 >= EXIT_BURST, "memwatch_fault_process_exits_total rose by %.0f, the test made %d",
		      exits1 - exits0, EXIT_BURST);
	mw_assert_clean_stop(d);
}
END_TEST

void collectors_add_faults_tests(Suite *s)
{
	collectors_add_test(s, "allocs_and_faults", test_allocs_and_faults, 120);
	collectors_add_test(s, "faults_threads", test_faults_threads, 60);
	collectors_add_test(s, "faults_exit_between_walks", test_faults_exit_between_walks, 60);
	collectors_add_test(s, "faults_restart_reads_fresh", test_faults_restart_reads_fresh, 60);
	collectors_add_test(s, "faults_exit_burst", test_faults_exit_burst, 90);
}
