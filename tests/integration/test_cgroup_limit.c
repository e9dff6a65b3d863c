// SPDX-License-Identifier: GPL-2.0
/* A memory cgroup at its limit, live. Refaults: a cgroup with a 64 MiB limit
 * reads a 256 MiB file twice; the second pass reads back what the first
 * evicted, and memwatch_cgroup_memory_refaults_total must show the kernel's
 * own count (memory.stat) once the cgroup is idle.
 * The time to a cgroup's limit (memwatch_cgroup_memory_limit_eta_seconds)
 * against the real thing: a writer grows a memory cgroup with a 256 MiB limit
 * by 8 MiB of page cache a second; the ETA the daemon gives part-way must be
 * within 25 % of the time the kernel then takes to count the first charge
 * at the limit (v1 memory.failcnt, v2 memory.events max). Page cache, not
 * anonymous memory, so that reaching the limit means reclaim, not an OOM
 * kill. Needs root and a writable memory cgroup hierarchy. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define LIMIT_MIB 256
#define RATE_MIB_PER_SEC 8
#define STEP_MSEC 125 /* 1 MiB per step */

static char cg_path[512], data_path[600];
static bool cg_v1;
static pid_t writer = -1;
static int run_id; /* the parent's pid: the tests' cgroups are named after it */

static void cleanup(void)
{
	if (writer > 0) {
		kill(writer, SIGKILL);
		waitpid(writer, NULL, 0);
		writer = -1;
	}
	for (int i = 0; cg_path[0] && i < 50; i++) {
		if (rmdir(cg_path) == 0 || errno == ENOENT)
			break;
		mw_sleep_ms(100);
	}
	if (data_path[0])
		unlink(data_path);
	(void)mw_cleanup_all();
}

/* In the parent, after a test child that failed: its cgroups by name (the
 * child's writer and reader died with it, PR_SET_PDEATHSIG). */
static void parent_cleanup(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup/memory", "/sys/fs/cgroup" };
	static const char *const names[] = { "refault", "eta" };

	for (size_t r = 0; r < 2; r++)
		for (size_t n = 0; n < 2; n++) {
			snprintf(cg_path, sizeof(cg_path), "%s/memwatch-%s-%d", roots[r], names[n], run_id);
			cleanup();
		}
	cg_path[0] = '\0';
}

static int write_cgroup_file(const char *dir, const char *name, const char *text)
{
	char path[700];
	size_t len = strlen(text);
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = -errno;
	close(fd);
	return r;
}

static void make_cgroup(const char *name, int limit_mib)
{
	char limit[32];

	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0) {
		cg_v1 = true;
		snprintf(cg_path, sizeof(cg_path), "/sys/fs/cgroup/memory/memwatch-%s-%d", name, run_id);
	} else {
		char *ctl = mw_read_file("/sys/fs/cgroup/cgroup.subtree_control", NULL);
		bool ok = ctl && strstr(ctl, "memory");

		free(ctl);
		ck_assert_msg(ok, "no writable memory cgroup hierarchy on this host");
		snprintf(cg_path, sizeof(cg_path), "/sys/fs/cgroup/memwatch-%s-%d", name, run_id);
	}
	ck_assert_msg(mkdir(cg_path, 0755) == 0, "mkdir %s: %m", cg_path);
	snprintf(limit, sizeof(limit), "%d\n", limit_mib << 20);
	ck_assert_int_eq(write_cgroup_file(cg_path, cg_v1 ? "memory.limit_in_bytes" : "memory.max", limit), 0);
}

static struct mw_daemon *start_daemon(const char *extra)
{
	char conf[512], *path;
	struct mw_daemon *d;

	snprintf(conf, sizeof(conf), "[daemon]\nwindow = 1s\n\n[collector.cgroup]\ninclude = %s\n%s",
		 strrchr(cg_path, '/'), extra);
	path = mw_write_temp_file("memwatchd.conf", conf);
	ck_assert_ptr_nonnull(path);
	d = mw_start(path, NULL, false);
	free(path);
	ck_assert_msg(d != NULL, "memwatchd did not start (log above)");
	return d;
}

/* The kernel's count of charges that met the limit. */
static double limit_hits(void)
{
	char path[700], *text, *p;
	double v = -1;

	snprintf(path, sizeof(path), "%s/%s", cg_path, cg_v1 ? "memory.failcnt" : "memory.events");
	text = mw_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	if (cg_v1)
		v = strtod(text, NULL);
	else if ((p = strstr(text, "\nmax ")))
		v = strtod(p + 5, NULL);
	free(text);
	ck_assert_msg(v >= 0, "no limit count in %s", path);
	return v;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the cgroup: 1 MiB written every STEP_MSEC on absolute deadlines, so the
 * rate stays steady whatever a write costs. */
static pid_t spawn_writer(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static char chunk[1 << 20];
		struct timespec next;
		char me[32];
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(me, sizeof(me), "%d\n", getpid());
		if (write_cgroup_file(cg_path, "cgroup.procs", me) < 0)
			_exit(3);
		fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(4);
		memset(chunk, 0x5a, sizeof(chunk));
		clock_gettime(CLOCK_MONOTONIC, &next);
		for (int i = 0; i < 4 * LIMIT_MIB; i++) {
			if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
				_exit(5);
			next.tv_nsec += STEP_MSEC * 1000000L;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000L;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
		_exit(0);
	}
	return pid;
}

/* memory.stat's hierarchical file refaults of the cgroup, as the kernel counts them. */
static double kernel_file_refaults(void)
{
	const char *key = cg_v1 ? "\ntotal_workingset_refault_file " : "\nworkingset_refault_file ";
	char path[700], *text, *p;
	double v = -1;

	snprintf(path, sizeof(path), "%s/memory.stat", cg_path);
	text = mw_read_file(path, NULL);
	ck_assert_ptr_nonnull(text);
	p = strstr(text, key);
	if (p)
		v = strtod(p + strlen(key), NULL);
	free(text);
	ck_assert_msg(v >= 0, "no %s in %s", key + 1, path);
	return v;
}

/* In the cgroup: reads data_path through to its end, twice. */
static void run_reader_twice(void)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static char chunk[1 << 20];
		char me[32];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(me, sizeof(me), "%d\n", getpid());
		if (write_cgroup_file(cg_path, "cgroup.procs", me) < 0)
			_exit(3);
		for (int pass = 0; pass < 2; pass++) {
			int fd = open(data_path, O_RDONLY | O_CLOEXEC);
			ssize_t n;

			if (fd < 0)
				_exit(4);
			while ((n = read(fd, chunk, sizeof(chunk))) > 0)
				;
			close(fd);
			if (n < 0)
				_exit(5);
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader failed: status 0x%x", status);
}

START_TEST(test_refaults)
{
	char matcher[300];
	struct mw_daemon *d;
	double want, v = NAN;
	int fd;

	make_cgroup("refault", 64);
	snprintf(data_path, sizeof(data_path), "%s/sparse-256m", mw_tmp_root());
	fd = open(data_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 256 << 20), 0);
	close(fd);
	d = start_daemon("");
	run_reader_twice();
	want = kernel_file_refaults();
	/* The second pass of 65536 pages, less what was still cached. */
	ck_assert_msg(want > 30000, "the kernel counted only %g file refaults", want);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\",type=\"file\"", strrchr(cg_path, '/'));
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_memory_refaults_total", matcher, 15000, mw_pred_eq, want,
				     &v),
		      "memwatch_cgroup_memory_refaults_total{%s} is %g, memory.stat says %g", matcher, v, want);
	fprintf(stderr, "refaults: memory.stat %.0f, memwatchd %.0f\n", want, v);
	mw_assert_clean_stop(d);
	cleanup();
}
END_TEST

START_TEST(test_limit_eta)
{
	char matcher[300], *body;
	struct mw_daemon *d;
	double eta = NAN, t_eta, t_hit, real, usage;

	make_cgroup("eta", LIMIT_MIB);
	snprintf(data_path, sizeof(data_path), "%s/eta-data", mw_tmp_root());
	/* The ETA needs three points in its horizon, one a read of the cgroups:
	 * a 10 s horizon (to keep the test short) at refresh_interval 5 has two
	 * while the cgroup fills below its limit (nothing calls for a read). */
	d = start_daemon("exhaustion_horizon = 10s\nrefresh_interval = 1\n");
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", strrchr(cg_path, '/'));

	/* Flat: no ETA. */
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	ck_assert_msg(!mw_metric(body, "memwatch_cgroup_memory_limit_eta_seconds", matcher, NULL, NULL, 0),
		      "an empty cgroup has an ETA");
	free(body);
	ck_assert_double_eq(limit_hits(), 0);

	writer = spawn_writer();
	/* 12 s in: about 96 MiB, 20 s to go; the 10 s horizon is full of the rise. */
	mw_sleep_ms(12000);
	body = mw_scrape(d->port);
	t_eta = now_mono();
	ck_assert_ptr_nonnull(body);
	ck_assert_msg(mw_metric(body, "memwatch_cgroup_memory_limit_eta_seconds", matcher, &eta, NULL, 0),
		      "no memwatch_cgroup_memory_limit_eta_seconds{%s} while it fills at %d MiB/s", matcher,
		      RATE_MIB_PER_SEC);
	ck_assert(mw_metric(body, "memwatch_cgroup_memory_usage_bytes", matcher, &usage, NULL, 0));
	free(body);
	ck_assert_msg(limit_hits() == 0, "the cgroup met its limit already at %.0f MiB", usage / 1048576);

	while (limit_hits() == 0) {
		ck_assert_msg(now_mono() - t_eta < 120, "the cgroup never reached its limit");
		mw_sleep_ms(50);
	}
	t_hit = now_mono();
	real = t_hit - t_eta;
	fprintf(stderr, "ETA %.1f s at %.0f MiB; the kernel counted the first charge at the limit %.1f s later\n", eta,
		usage / 1048576, real);
	ck_assert_msg(fabs(eta - real) <= 0.25 * real, "ETA %.1f s is not within 25 %% of the real %.1f s", eta, real);
	mw_assert_clean_stop(d);
	cleanup();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup_limit");
	TCase *tc = tcase_create("live");
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "the cgroup limit test needs root: skipping\n");
		return 77;
	}
	if (mw_init_tmp_root() < 0)
		return 99;
	run_id = (int)getpid();
	tcase_add_unchecked_fixture(tc, NULL, parent_cleanup);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_refaults);
	tcase_add_test(tc, test_limit_eta);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	parent_cleanup();
	if (!failed)
		mw_remove_tmp_root();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
