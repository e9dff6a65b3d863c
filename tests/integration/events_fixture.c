// SPDX-License-Identifier: GPL-2.0
/* The event tests' fixture: the memory cgroups, sparse files and workloads a
 * test creates (and teardown or the runner's sweep removes), the daemon's
 * config and scrapes, and the kernel's count of BPF program runs. */
#include <bpf/bpf.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include "events_test.h"

int channel_i;

const char *kernel_channel(void)
{
	return channel_i ? CH_PERFBUF : CH_RINGBUF;
}

pid_t runner_pid; /* the process that runs main(): names our cgroups and files */
const char *memcg_root;
bool memcg_v2;

/* ---- small utilities ---- */

double real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- what a test creates, undone by teardown (or by the runner's sweep) ---- */

static struct cg *tracked_cgs[MAX_TRACKED];
static size_t n_tracked_cgs;
static pid_t tracked_children[MAX_TRACKED];
static size_t n_tracked_children;
static char *tracked_files[MAX_TRACKED];
static size_t n_tracked_files;

/* A memory cgroup of this run with a hard limit: v1 memory.limit_in_bytes or
 * v2 memory.max (mw_memcg_make). */
void cg_create(struct cg *cg, const char *limit)
{
	struct mw_memcg made;
	int n;

	ck_assert_msg(n_tracked_cgs < MAX_TRACKED, "too many cgroups");
	for (n = 1; n < 1000; n++) {
		snprintf(cg->name, sizeof(cg->name), CG_PREFIX "%d-%d", (int)runner_pid, n);
		snprintf(cg->path, sizeof(cg->path), "%s/%s", memcg_root, cg->name);
		if (access(cg->path, F_OK) < 0 && errno == ENOENT)
			break;
	}
	ck_assert_msg(n < 1000, "no free cgroup name");
	tracked_cgs[n_tracked_cgs++] = cg;
	ck_assert_msg(mw_memcg_make(&made, NULL, cg->name, limit), "cannot make %s with a limit of %s: %s", cg->path,
		      limit, strerror(errno));
	snprintf(cg->label, sizeof(cg->label), "/%s", cg->name);
	ck_assert_str_eq(cg->label, made.label);
}

void cg_destroy(struct cg *cg)
{
	size_t i;

	ck_assert_msg(mw_memcg_remove(cg->path), "cannot remove %s: %s", cg->path, strerror(errno));
	for (i = 0; i < n_tracked_cgs; i++)
		if (tracked_cgs[i] == cg) {
			tracked_cgs[i] = tracked_cgs[--n_tracked_cgs];
			break;
		}
}

/* A 1 GiB sparse file on a disk file system (reading it fills the page
 * cache with zero pages: memcg reclaim at the cgroup's limit, no disk I/O). */
char *sparse_file(void)
{
	char *path;
	int fd;

	ck_assert_msg(n_tracked_files < MAX_TRACKED, "too many files");
	ck_assert(asprintf(&path, "%s/sparse.%d", mw_tmp_root(), (int)getpid()) > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	tracked_files[n_tracked_files++] = path;
	ck_assert_msg(ftruncate(fd, (off_t)SPARSE_BYTES) == 0, "ftruncate %s: %s", path, strerror(errno));
	close(fd);
	return path;
}

static void untrack_child(pid_t pid)
{
	size_t i;

	for (i = 0; i < n_tracked_children; i++)
		if (tracked_children[i] == pid) {
			tracked_children[i] = tracked_children[--n_tracked_children];
			return;
		}
}


static void __attribute__((noreturn)) workload_main(const struct workload *w)
{
	switch (w->kind) {
	case WL_OOM: {
		volatile char *p;
		size_t off;

		if (prctl(PR_SET_NAME, w->comm) < 0)
			_exit(121);
		p = mmap(NULL, OOM_TOUCH_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(122);
		for (off = 0; off < OOM_TOUCH_BYTES; off += 4096)
			p[off] = 1;
		_exit(0); /* survived: the test fails on the exit status */
	}
	case WL_DD: {
		char arg[512];
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
			_exit(123);
		snprintf(arg, sizeof(arg), "if=%s", w->file);
		execlp("dd", "dd", arg, "of=/dev/null", "bs=1M", (char *)NULL);
		_exit(124);
	}
	case WL_READ: {
		int64_t start = mw_mono_ms();
		char *buf = malloc(MiB);
		int pass;

		if (!buf || (w->comm && prctl(PR_SET_NAME, w->comm) < 0))
			_exit(121);
		for (pass = 0; pass < w->passes; pass++) {
			int fd = open(w->file, O_RDONLY | O_CLOEXEC);
			ssize_t n;

			if (fd < 0)
				_exit(122);
			while ((n = read(fd, buf, MiB)) > 0)
				;
			close(fd);
			if (n < 0)
				_exit(123);
			if (w->min_ms && mw_mono_ms() - start >= w->min_ms)
				break;
		}
		_exit(0);
	}
	}
	_exit(127);
}

/* Forks a workload that moves itself into cg first. It dies with the test
 * (PR_SET_PDEATHSIG), and is only ever signalled by this PID. */
pid_t spawn_workload(const struct cg *cg, const struct workload *w)
{
	pid_t parent = getpid(), pid;

	ck_assert_msg(n_tracked_children < MAX_TRACKED, "too many children");
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char procs[320], buf[32];

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg->path);
		snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
		if (mw_write_text(procs, buf) < 0)
			_exit(125);
		workload_main(w);
	}
	tracked_children[n_tracked_children++] = pid;
	return pid;
}

/* waitpid(WNOHANG): true once the child exited (status stored). */
bool child_done(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == pid) {
		untrack_child(pid);
		return true;
	}
	if (r < 0) {
		*status = -1; /* not our child (any more): nothing to wait for, and no success */
		return true;
	}
	return false;
}

/* Bounded wait; a child that overstays is killed (by its PID) and the test fails. */
int wait_child(pid_t pid, const char *what)
{
	int64_t deadline = mw_mono_ms() + WORKLOAD_TIMEOUT_MS;
	int st = 0;

	while (!child_done(pid, &st)) {
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			untrack_child(pid);
			ck_abort_msg("%s (pid %d) did not finish within %d ms", what, (int)pid, WORKLOAD_TIMEOUT_MS);
		}
		mw_sleep_ms(10);
	}
	return st;
}

void assert_exited_ok(int st, const char *what)
{
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: exit status 0x%x (exit %d, signal %d)", what, st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* ---- cleanup ---- */

static void cleanup_test_resources(void)
{
	size_t i;

	while (n_tracked_children > 0) {
		pid_t pid = tracked_children[--n_tracked_children];
		int st;

		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	while (n_tracked_cgs > 0) {
		struct cg *cg = tracked_cgs[--n_tracked_cgs];

		if (!mw_memcg_remove(cg->path))
			fprintf(stderr, "could not remove %s: %m\n", cg->path);
	}
	for (i = 0; i < n_tracked_files; i++) {
		unlink(tracked_files[i]);
		free(tracked_files[i]);
	}
	n_tracked_files = 0;
}

/* Checked teardown: runs in the test's process after it passed. */
void teardown(void)
{
	int killed;

	cleanup_test_resources();
	killed = mw_cleanup_all();
	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

/* Runner process, after each test case and at exit: whatever a failed test
 * left behind under our own name prefix. */
void sweep(void)
{
	char prefix[64], pattern[300];
	struct dirent *de;
	glob_t g;
	DIR *dir;
	size_t i;

	snprintf(prefix, sizeof(prefix), CG_PREFIX "%d-", (int)runner_pid);
	dir = opendir(memcg_root);
	if (dir) {
		while ((de = readdir(dir))) {
			char path[320];

			if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", memcg_root, de->d_name);
			if (!mw_memcg_remove(path))
				fprintf(stderr, "could not remove %s: %m\n", path);
		}
		closedir(dir);
	}
	if (mw_tmp_root()[0]) {
		snprintf(pattern, sizeof(pattern), "%s/sparse.*", mw_tmp_root());
		if (glob(pattern, 0, NULL, &g) == 0) {
			for (i = 0; i < g.gl_pathc; i++)
				unlink(g.gl_pathv[i]);
			globfree(&g);
		}
	}
}

/* ---- the daemon ---- */


/* The text of a config: window, history and extra [daemon] keys; the memavail
 * method (NULL: auto; MEMAVAIL_OFF: enabled = no). */
char *config_text(const char *window, int history, const char *daemon_extra, const char *memavail_method)
{
	bool off = memavail_method && strcmp(memavail_method, MEMAVAIL_OFF) == 0;
	char *text;

	ck_assert(asprintf(&text,
			   "[daemon]\nwindow = %s\nsample_interval = 50ms\nhistory = %d\nlog_level = info\n%s\n%s"
			   "[collector.memavail]\n%s%s%s\n",
			   window, history, daemon_extra ? daemon_extra : "",
			   channel_i ? "debug_perf_buffer = yes\n" : "", off ? "enabled = no" : "",
			   memavail_method && !off ? "method = " : "", memavail_method && !off ? memavail_method : "") > 0);
	return text;
}

char *temp_config_full(const char *window, int history, const char *daemon_extra,
			      const char *memavail_method)
{
	char *text = config_text(window, history, daemon_extra, memavail_method), *path;

	path = mw_write_temp_file("memwatchd.conf", text);
	ck_assert_msg(path != NULL, "cannot write a temporary config");
	free(text);
	return path;
}

char *temp_config(const char *daemon_extra, const char *memavail_method)
{
	return temp_config_full("500ms", 20, daemon_extra, memavail_method);
}

struct series memcg_series[N_MEMCG_SERIES] = {
	{ PRESSURE, K_MEMCG }, { RECEIVED, K_MEMCG }, { GATED, K_MEMCG },
	{ DROPPED, CH_RINGBUF }, { MEMCG_RECLAIMS, NULL },
};

/* Starts a loop test on channel i; the daemon logs which one it opened. */
void use_channel(int i)
{
	channel_i = i;
	memcg_series[3].matcher = kernel_channel();
}

static void assert_channel(struct mw_daemon *d)
{
	const char *want = channel_i ? "Event channel: perf buffer" : "Event channel: ring buffer";

	ck_assert_msg(mw_log_wait(d, POLL_TIMEOUT_MS, (const char *const[]){ want, NULL }), "no '%s' in the log:\n%s",
		      want, mw_log(d));
}

struct mw_daemon *start_or_fail(const char *config)
{
	struct mw_daemon *d = mw_start(config, NULL, false);

	ck_assert_msg(d != NULL, "memwatchd with %s did not start serving /metrics (log above)", config);
	assert_channel(d);
	return d;
}

char *scrape_or_fail(struct mw_daemon *d)
{
	char *body = mw_scrape(d->port);

	ck_assert_msg(body != NULL, "GET /metrics on port %d did not answer 200 (daemon %s)", d->port,
		      mw_running(d) ? "running" : "exited");
	return body;
}

double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

void expect_status(struct mw_daemon *d, const char *path, int want)
{
	struct mw_http_response resp;
	int r = mw_http_get(d->port, path, &resp);

	ck_assert_msg(r == 0 && resp.status == want, "GET %s: r=%d status %d, want %d", path, r, resp.status, want);
	mw_http_response_free(&resp);
}

/* GET /metrics 200 with a normal body, /healthz 200, and the process runs. */
void assert_serving(struct mw_daemon *d, const char *when)
{
	struct mw_http_response resp;
	int r;

	ck_assert_msg(mw_running(d), "memwatchd exited %s", when);
	r = mw_http_get(d->port, "/metrics", &resp);
	ck_assert_msg(r == 0 && resp.status == 200, "GET /metrics %s: r=%d status %d", when, r, resp.status);
	ck_assert_msg(mw_metric(resp.body, "memwatch_build_info", NULL, NULL, NULL, 0),
		      "/metrics %s has no memwatch_build_info", when);
	mw_http_response_free(&resp);
	r = mw_http_get(d->port, "/healthz", &resp);
	ck_assert_msg(r == 0 && resp.status == 200, "GET /healthz %s: r=%d status %d (%s)", when, r, resp.status,
		      resp.body ? resp.body : "");
	mw_http_response_free(&resp);
}

/* `promtool check metrics` must accept the exposition as served right now. */
void assert_promtool(struct mw_daemon *d, const char *when)
{
	char *body = scrape_or_fail(d), *out = NULL;
	int rc = mw_promtool_check(body, strlen(body), &out);

	ck_assert_msg(rc == 0, "promtool check metrics %s exited %d:\n%s\non:\n%s", when, rc, out ? out : "", body);
	free(out);
	free(body);
}

/* Scrapes until the window end timestamp moves past what body showed:
 * the next scrape shows a window that ended after body's. */
char *next_window(struct mw_daemon *d, const char *body)
{
	double t0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL), t = t0;

	ck_assert_msg(mw_poll_metric(d->port, "memwatch_window_end_timestamp_seconds", NULL, POLL_TIMEOUT_MS,
				     mw_pred_gt, t0, &t),
		      "no new window after %f", t0);
	return scrape_or_fail(d);
}


/* Scrapes window after window until every series holds the same value in two
 * consecutive windows (the workload and the consumer are done). */
char *scrape_settled(struct mw_daemon *d, const struct series *s, size_t n)
{
	int64_t deadline = mw_mono_ms() + POLL_TIMEOUT_MS;
	char *prev = scrape_or_fail(d);

	for (;;) {
		char *cur = next_window(d, prev);
		bool same = true;
		size_t i;

		for (i = 0; i < n && same; i++)
			same = metric_or_fail(prev, s[i].name, s[i].matcher) == metric_or_fail(cur, s[i].name, s[i].matcher);
		free(prev);
		if (same)
			return cur;
		ck_assert_msg(mw_mono_ms() < deadline, "counters still moving after %d ms:\n%s", POLL_TIMEOUT_MS, cur);
		prev = cur;
	}
}
void collector_info(const char *body, const char *collector, char *state, char *mode, char *reason,
			   size_t len)
{
	char matcher[64], labels[1024];
	double v;

	snprintf(matcher, sizeof(matcher), "collector=\"%s\"", collector);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, &v, labels, sizeof(labels)),
		      "no memwatch_collector_info{%s}:\n%s", matcher, body);
	ck_assert(v == 1.0);
	ck_assert(mw_label(labels, "state", state, len));
	ck_assert(mw_label(labels, "mode", mode, len));
	ck_assert(mw_label(labels, "reason", reason, len));
}

/* ---- the kernel's own count of BPF program runs (BPF_ENABLE_STATS) ---- */

/* Turns run counting on for as long as the returned fd stays open (no sysctl
 * to restore afterwards). */
int bpf_stats_on(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	ck_assert_msg(fd >= 0, "BPF_ENABLE_STATS: %s", strerror(errno));
	return fd;
}

/* run_cnt of the BPF program named name (the kernel keeps 15 characters)
 * that process pid holds, through an fd of the program or of a link to it. */
unsigned long long prog_run_cnt(pid_t pid, const char *name)
{
	char dir[64], path[384];
	struct dirent *de;
	unsigned long long cnt = 0;
	int found = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	dp = opendir(dir);
	ck_assert_msg(dp != NULL, "opendir %s: %s", dir, strerror(errno));
	while (!found && (de = readdir(dp))) {
		char *text, *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = mw_read_file(path, NULL);
		p = text ? strstr(text, "prog_id:") : NULL;
		if (p) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id((__u32)strtoul(p + 8, NULL, 10));

			memset(&info, 0, sizeof(info));
			if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
			    strncmp(info.name, name, sizeof(info.name) - 1) == 0) {
				cnt = info.run_cnt;
				found = 1;
			}
			if (fd >= 0)
				close(fd);
		}
		free(text);
	}
	closedir(dp);
	ck_assert_msg(found, "memwatchd (pid %d) holds no BPF program named %s", (int)pid, name);
	return cnt;
}
