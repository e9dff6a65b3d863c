// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector on a real memory cgroup of this run with a 64 MiB
 * limit and workloads in it, and its two sources (the BPF cgroup iterator
 * and cgroupfs) on the same tree, against the cgroup's own files. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup_test.h"
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
void live_cleanup(void)
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
	t0 = real_now();
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

void live_init(void)
{
	/* Known to the parent, so that its unchecked teardown can clean up after a failed child. */
	snprintf(live_name, sizeof(live_name), "/memwatch-cgtest-%d", (int)getpid());
	if (find_live_root())
		snprintf(live_path, sizeof(live_path), "%s%s", live_root, live_name);
}

TCase *live_tcase(void)
{
	TCase *tc = cgroup_tcase("live");

	tcase_add_unchecked_fixture(tc, NULL, live_cleanup);
	tcase_add_test(tc, test_live_cgroup);
	tcase_add_test(tc, test_live_sources_agree);
	return tc;
}
