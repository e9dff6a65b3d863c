// SPDX-License-Identifier: GPL-2.0
/* A cgroup's window peak (memwatch_cgroup_memory_window_peak_bytes) against a
 * spike between two window ends: a process in a fresh memory cgroup with a
 * limit holds a small base, then allocates and touches 40 MiB, holds them
 * 300 ms and frees them, all after one window was published and before the
 * next one ended. That window's peak must be the kernel's own peak, read by
 * this test on a file descriptor of its own (v2 memory.peak, v1
 * memory.max_usage_in_bytes: lifetime figures, which in a fresh cgroup are
 * the spike's), and the windows before and after must not show it. The way
 * the daemon knows the peak (its label method) must be the one
 * tests/expectations/cgroup_peak.tsv gives for this kernel. Run twice: as
 * configured by default, where most windows read the peak file, and with
 * every window read by the BPF cgroup iterator (refresh_interval = 1), whose
 * pass gives the lifetime peak without the file. Needs root and a
 * memory hierarchy, v1 or cgroup2 (tests/system's system-v2 runs it on v2). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define MiB (1024UL * 1024UL)
#define BASE_BYTES (4 * MiB)
#define SPIKE_BYTES (40 * MiB)
#define SPIKE_HOLD_MS 300
#define CG_LIMIT "128M"
#define WINDOW_SEC 3 /* room for the spike where page faults are slow (TCG guests) */
#define WINDOW_TIMEOUT_MS 30000
#define ATTEMPTS 6
/* The kernel charges a memory cgroup in batches of MEMCG_CHARGE_BATCH pages
 * (include/linux/memcontrol.h), kept per CPU as a stock. */
#define MEMCG_CHARGE_BATCH 64

static struct mw_memcg cg;
static pid_t runner_pid; /* the cgroup is named after it */
static bool memcg_v2;
static pid_t child = -1;
static int to_child = -1, from_child = -1;

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void touch(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
}

/* In the cgroup: the base, then one spike per byte read from in; writes
 * the spike's start and end (wall clock) to out. */
static void child_main(int in, int out)
{
	char procs[300], me[32], c;
	char *base;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg.path);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	snprintf(me, sizeof(me), "%d\n", getpid());
	if (fd < 0 || write(fd, me, strlen(me)) < 0)
		_exit(3);
	close(fd);
	base = mmap(NULL, BASE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		_exit(4);
	touch(base, BASE_BYTES);
	c = 'r';
	if (write(out, &c, 1) != 1)
		_exit(5);
	while (read(in, &c, 1) == 1) {
		double t[2];
		char *spike;

		t[0] = realtime();
		spike = mmap(NULL, SPIKE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (spike == MAP_FAILED)
			_exit(6);
		touch(spike, SPIKE_BYTES);
		mw_sleep_ms(SPIKE_HOLD_MS);
		munmap(spike, SPIKE_BYTES);
		t[1] = realtime();
		if (write(out, t, sizeof(t)) != sizeof(t))
			_exit(7);
	}
	_exit(0);
}

static void spawn_child(void)
{
	int down[2], up[2];
	char c;

	ck_assert(pipe2(down, O_CLOEXEC) == 0 && pipe2(up, O_CLOEXEC) == 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		child_main(down[0], up[1]);
	close(down[0]);
	close(up[1]);
	to_child = down[1];
	from_child = up[0];
	ck_assert_msg(read(from_child, &c, 1) == 1 && c == 'r', "the workload did not start in %s", cg.path);
}

/* The kernel's peak on the test's own file descriptor. */
static double kernel_peak(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	ck_assert_msg(n > 0, "reading the peak of %s: %m", cg.path);
	buf[n] = '\0';
	return strtod(buf, NULL);
}

/* The first scrape of a window that ended after `after`, its end in *end. */
static char *window_after(struct mw_daemon *d, double after, double *end)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;

	for (;;) {
		char *body = mw_scrape(d->port);

		if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, end, NULL, 0) && *end > after)
			return body;
		free(body);
		ck_assert_msg(mw_running(d), "memwatchd exited while waiting for a window");
		ck_assert_msg(mw_mono_ms() < deadline, "no window ending after %.3f was published", after);
		mw_sleep_ms(10);
	}
}

/* This cgroup's window peak in a scrape; its method in method. */
static double window_peak(const char *body, char *method, size_t len)
{
	char matcher[300], labels[1024];
	double v = -1;

	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", cg.label);
	ck_assert_msg(mw_metric(body, "memwatch_cgroup_memory_window_peak_bytes", matcher, &v, labels, sizeof(labels)),
		      "no memwatch_cgroup_memory_window_peak_bytes{%s} in:\n%s", matcher, body);
	ck_assert(mw_label(labels, "method", method, len));
	return v;
}

static const char *const refresh_configs[] = { "", "refresh_interval = 1\n" };

START_TEST(test_spike_between_scrapes)
{
	char name[64], conf[512], method[32], want[32], *path, *body;
	double end0 = 0, end1 = 0, end2 = 0, peak0 = -1, peak1 = -1, peak2 = -1, kernel = -1, t[2];
	double tolerance = (double)MEMCG_CHARGE_BATCH * (double)sysconf(_SC_PAGESIZE) * (double)sysconf(_SC_NPROCESSORS_CONF);
	struct mw_daemon *d;
	int kfd, attempt;
	char file[320];

	snprintf(name, sizeof(name), "memwatch-peak-%d-%d", (int)runner_pid, _i);
	ck_assert_msg(mw_memcg_make(&cg, NULL, name, CG_LIMIT), "making the memory cgroup %s: %m", name);
	/* Fresh, so its lifetime peak will be the spike's. */
	snprintf(file, sizeof(file), "%s/%s", cg.path, memcg_v2 ? "memory.peak" : "memory.max_usage_in_bytes");
	kfd = open(file, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(kfd >= 0, "open %s: %m", file);
	spawn_child();

	snprintf(conf, sizeof(conf), "[daemon]\nwindow = %ds\n\n[collector.cgroup]\ninclude = %s\n%s", WINDOW_SEC,
		 cg.label, refresh_configs[_i]);
	path = mw_write_temp_file("memwatchd.conf", conf);
	ck_assert_ptr_nonnull(path);
	d = mw_start(path, NULL, false);
	free(path);
	ck_assert_msg(d != NULL, "memwatchd did not start (log above)");

	/* Two windows exported first: the first one a cgroup is exported in
	 * opens its file, and only the next reads a whole window through it. */
	body = window_after(d, 0, &end0);
	for (int i = 0; !strstr(body, cg.label); i++) {
		ck_assert_msg(i < 10, "%s not exported in 10 windows:\n%s", cg.label, body);
		free(body);
		body = window_after(d, end0, &end0);
	}
	free(body);
	body = window_after(d, end0, &end0);
	free(body);
	body = window_after(d, end0, &end0);
	(void)window_peak(body, method, sizeof(method));
	if (mw_expected_value("cgroup_peak.tsv", "host", "method", want, sizeof(want)) == 0)
		ck_assert_msg(strcmp(method, want) == 0, "window peak method %s, want %s (tests/expectations/cgroup_peak.tsv)",
			      method, want);
	fprintf(stderr, "window peak method: %s (%s), %s\n", method, memcg_v2 ? "cgroup2" : "v1",
		_i ? "every window read by the iterator where there is one" : "default refresh");
	free(body);

	/* The spike must fall between the reads of two consecutive windows: it
	 * starts once a window is published (its collectors have read) and must
	 * end before the next window's end time (taken before its reads). A
	 * spike that straddled a window end is tried again. */
	for (attempt = 0; attempt < ATTEMPTS; attempt++) {
		char c = 's';

		body = window_after(d, end0, &end0);
		peak0 = window_peak(body, method, sizeof(method));
		free(body);
		if (realtime() > end0 + WINDOW_SEC / 2.0)
			continue; /* too late in this window: the next one */
		ck_assert(write(to_child, &c, 1) == 1);
		ck_assert_msg(read(from_child, t, sizeof(t)) == sizeof(t), "the workload died during its spike");
		body = window_after(d, t[1], &end1);
		peak1 = window_peak(body, method, sizeof(method));
		free(body);
		kernel = kernel_peak(kfd);
		fprintf(stderr, "attempt %d: windows end %.3f and %.3f, spike %.3f..%.3f\n", attempt, end0, end1, t[0],
			t[1]);
		if (end1 - end0 < 1.5 * WINDOW_SEC && t[0] > end0)
			break;
	}
	ck_assert_msg(attempt < ATTEMPTS, "no spike fell within one window in %d attempts", ATTEMPTS);
	body = window_after(d, end1, &end2);
	peak2 = window_peak(body, method, sizeof(method));
	free(body);
	fprintf(stderr, "window peaks: before %.0f, spike %.0f, after %.0f; kernel %.0f; tolerance %.0f\n", peak0, peak1,
		peak2, kernel, tolerance);

	/* The kernel counted the spike at all: base and spike were touched. */
	ck_assert_msg(kernel >= (double)(BASE_BYTES + SPIKE_BYTES), "kernel peak %.0f below base + spike", kernel);
	/* Both are the same page counter's high-water mark: equal, unless usage
	 * passed the spike's level between the daemon's read and ours. After the
	 * spike the workload only sleeps; what can still be charged at once is
	 * the per-CPU stock, up to MEMCG_CHARGE_BATCH pages per CPU. */
	ck_assert_msg(peak1 >= kernel - tolerance && peak1 <= kernel + tolerance,
		      "window peak %.0f, kernel's %s %.0f (method %s)", peak1, file, kernel, method);
	ck_assert_msg(peak0 < kernel - SPIKE_BYTES / 2, "the window before the spike shows it: %.0f", peak0);
	ck_assert_msg(peak2 < kernel - SPIKE_BYTES / 2, "the window after the spike shows it: %.0f", peak2);

	close(kfd);
	mw_assert_clean_stop(d);
}
END_TEST

static void cleanup(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	if (cg.path[0])
		(void)mw_memcg_remove(cg.path);
	(void)mw_cleanup_all();
}

static Suite *peak_suite(void)
{
	Suite *s = suite_create("cgroup_peak");
	TCase *tc = tcase_create("spike");

	tcase_add_checked_fixture(tc, NULL, cleanup);
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, test_spike_between_scrapes, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *root;
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "the window peak test needs root (memory cgroups, BPF): skipping\n");
		return 77;
	}
	if (!mw_memcg_root(&root, &memcg_v2)) {
		fprintf(stderr, "no memory cgroup hierarchy (v1 memory, or cgroup2 with memory): %s\n",
			mw_under_ci() ? "failing (CI=true)" : "skipping");
		return mw_under_ci() ? EXIT_FAILURE : 77;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	sr = srunner_create(peak_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	/* After a test process that died: its workload died with it (PR_SET_PDEATHSIG). */
	snprintf(cg.path, sizeof(cg.path), "%s/memwatch-peak-%d", root, (int)runner_pid);
	(void)mw_memcg_remove(cg.path);
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
