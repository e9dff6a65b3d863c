// SPDX-License-Identifier: GPL-2.0
/* Acceptance tests of the BPF and procfs collectors against real memory
 * pressure on the running kernel, each checked against an independent count:
 * perf on the same tracepoints, /proc/vmstat, /proc/PID/stat. Needs root.
 *
 * Every test is bounded and undoes what it creates (cgroups, files, the
 * tracefs mount). A failed assertion ends a test's process at once (check's
 * fork mode), so each resource is written to a journal before it is created,
 * and the runner process replays the journal after every test. Processes a
 * test starts die with it (PR_SET_PDEATHSIG) and are only ever signalled by
 * the PID it got from fork(). */
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
#include "helpers.h"

#define PERF_PATH "/usr/bin/perf"
#define TRACEFS_DIR "/sys/kernel/tracing"
#define MEMCG_ROOT "/sys/fs/cgroup/memory"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define WINDOW_TIMEOUT_MS 10000
#define WORKLOAD_TIMEOUT_MS 60000

/* The helper mode of this binary, run under perf by the allocation failure test. */
#define KMEM_HELPER_FLAG "--kmem-charge-failure-helper"
/* io_uring rings for this many entries need one order-9 (2 MiB) compound page. */
#define KMEM_HELPER_ENTRIES 32768
#define KMEM_HELPER_ATTEMPTS 32

static char journal_path[400];
static pid_t runner_pid;
static bool tracefs_mounted_by_us;

/* ---- small utilities ---- */

static double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Monotonic time: bounds waits and measures the workload's own pace, never asserted on by itself. */
static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* What was measured, for the test log: the numbers behind a pass, too. */
__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("collectors: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static unsigned long long read_ull(const char *path)
{
	char *text = mw_read_file(path, NULL);
	unsigned long long v;

	ck_assert_msg(text != NULL, "cannot read %s: %s", path, strerror(errno));
	v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

/* Sum of the /proc/vmstat fields whose names start with prefix. */
static unsigned long long vmstat_sum(const char *prefix)
{
	char *text = mw_read_file("/proc/vmstat", NULL), *p;
	size_t plen = strlen(prefix);
	unsigned long long sum = 0;
	bool found = false;

	ck_assert_msg(text != NULL, "cannot read /proc/vmstat");
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, plen) == 0) {
			const char *sp = strchr(p, ' ');

			if (sp) {
				sum += strtoull(sp + 1, NULL, 10);
				found = true;
			}
		}
	free(text);
	ck_assert_msg(found, "no %s* field in /proc/vmstat", prefix);
	return sum;
}

/* One /proc/vmstat field, matched exactly. */
static unsigned long long vmstat_get(const char *name)
{
	char *text = mw_read_file("/proc/vmstat", NULL), *p;
	size_t nlen = strlen(name);
	unsigned long long v = 0;
	bool found = false;

	ck_assert_msg(text != NULL, "cannot read /proc/vmstat");
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, nlen) == 0 && p[nlen] == ' ') {
			v = strtoull(p + nlen + 1, NULL, 10);
			found = true;
			break;
		}
	free(text);
	ck_assert_msg(found, "no %s in /proc/vmstat", name);
	return v;
}

static unsigned long long meminfo_bytes(const char *field)
{
	long long kb = mw_proc_meminfo_kb(field);

	ck_assert_msg(kb >= 0, "no %s in /proc/meminfo", field);
	return (unsigned long long)kb * KiB;
}

/* ---- the cleanup journal ---- */

/* Appends "kind path" before the resource is created. */
static void journal_add(const char *kind, const char *path)
{
	int fd = open(journal_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	ck_assert_msg(fd >= 0, "cannot open the cleanup journal %s: %s", journal_path, strerror(errno));
	dprintf(fd, "%s %s\n", kind, path);
	close(fd);
}

static void drop_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	unlink(path);
}

/* rmdir, retried while tasks that were killed are still on their way out. */
static int remove_cgroup(const char *path, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || mw_mono_ms() >= deadline)
			return -errno;
		mw_sleep_ms(50);
	}
}

/* Undoes everything in the journal (whatever a test did not undo itself):
 * files first, then cgroups. No allocation: the runner's SIGTERM handler
 * calls it too (meson's timeout). */
static void journal_replay(void)
{
	static char buf[16384];
	char *line, *next;
	ssize_t n;
	int fd;

	fd = open(journal_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		unlink(journal_path);
		return;
	}
	buf[n] = '\0';
	for (int pass = 0; pass < 2; pass++)
		for (line = buf; line && *line; line = next) {
			char *nl = strchr(line, '\n'), *sp;

			next = nl ? nl + 1 : NULL;
			sp = strchr(line, ' ');
			if (!sp || (nl && sp > nl))
				continue;
			if (nl)
				*nl = '\0';
			if (pass == 0 && strncmp(line, "file ", 5) == 0)
				drop_file(sp + 1);
			else if (pass == 1 && strncmp(line, "cgroup ", 7) == 0 && remove_cgroup(sp + 1, 10000) < 0)
				dprintf(STDERR_FILENO, "cleanup: cannot remove cgroup %s: %s\n", sp + 1, strerror(errno));
			if (nl)
				*nl = '\n';
		}
	unlink(journal_path);
}

/* The runner's teardown: one test per TCase, so this runs after each test,
 * in the runner process, whatever way the test ended. */
static void replay_after_test(void)
{
	journal_replay();
}

static void on_fatal_signal(int sig)
{
	if (getpid() == runner_pid) {
		journal_replay();
		if (tracefs_mounted_by_us)
			umount2(TRACEFS_DIR, MNT_DETACH);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- resources ---- */

static void memcg_path(char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, MEMCG_ROOT "/memwatch-itest-%d%s", (int)getpid(), suffix);
}

static void memcg_create(const char *path, unsigned long long limit)
{
	char file[512], value[32];
	int r;

	ck_assert_msg(access(MEMCG_ROOT "/cgroup.procs", F_OK) == 0,
		      "no cgroup v1 memory hierarchy at " MEMCG_ROOT " (these tests expect a hybrid host)");
	journal_add("cgroup", path);
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	if (limit) {
		snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", path);
		snprintf(value, sizeof(value), "%llu", limit);
		r = mw_write_text(file, value);
		ck_assert_msg(r == 0, "cannot write %s to %s: %s", value, file, strerror(-r));
	}
}

static void memcg_remove(const char *path)
{
	int r = remove_cgroup(path, 10000);

	ck_assert_msg(r == 0, "cannot remove cgroup %s: %s", path, strerror(-r));
}

/* Joins a v1 memory cgroup; for children, before they touch anything. */
static int memcg_join(const char *path)
{
	char file[512], pid[32];

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return mw_write_text(file, pid);
}

/* Directory for sparse files: reading a hole of a disk file fills the page
 * cache with (clean, zeroed) pages, reading a tmpfs hole does not. */
static const char *sparse_dir(void)
{
	struct statfs sf;

	if (statfs(mw_tmp_root(), &sf) == 0 && sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC)
		return mw_tmp_root();
	return "/var/tmp";
}

/* A fresh sparse file, so none of it is in the page cache. */
static void sparse_create(char *path, size_t len, const char *name, unsigned long long size)
{
	int fd;

	snprintf(path, len, "%s/memwatch-itest-%d-%s", sparse_dir(), (int)getpid(), name);
	journal_add("file", path);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	ck_assert_msg(ftruncate(fd, (off_t)size) == 0, "truncate %s to %llu: %s", path, size, strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* ---- the daemon ---- */

static void teardown_daemons(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

static struct mw_daemon *start_with_config(const char *text)
{
	char *conf = mw_write_temp_file("memwatchd.conf", text);
	struct mw_daemon *d;

	ck_assert_msg(conf != NULL, "cannot write a temporary config");
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd with config\n%s\ndid not start serving /metrics (log above)", text);
	free(conf);
	return d;
}

/* Sample lines of body that start with prefix. */
static size_t count_series(const char *body, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);

	for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, len) == 0)
			n++;
	return n;
}

static double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

/* Scrapes until a window that ended after `after` (seconds since the epoch)
 * is published; returns that scrape, so every value in it is from one window. */
static char *wait_window_after(struct mw_daemon *d, double after)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	double end = NAN;

	for (;;) {
		char *body = mw_scrape(d->port);

		if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
		    end > after)
			return body;
		free(body);
		ck_assert_msg(mw_running(d), "memwatchd exited while waiting for a window");
		ck_assert_msg(mw_mono_ms() < deadline, "no window ending after %.3f was published (last: %.3f)", after,
			      end);
		mw_sleep_ms(20);
	}
}

/* The next window, from now on. */
static char *next_window(struct mw_daemon *d)
{
	return wait_window_after(d, realtime_now());
}

/* A /proc counter's value at the moment a window's collectors ran lies in [lo, hi]. */
#define BRACKET_COUNTERS 3

struct bracket {
	unsigned long long lo[BRACKET_COUNTERS], hi[BRACKET_COUNTERS];
};

/* Like wait_window_after(), and brackets the counter `read_counter` around
 * the moment the daemon read its own counters for that window. The daemon
 * takes a window's end timestamp before its collectors run and publishes the
 * window after they ran: so a window that ended after our first read was
 * collected before a second read made once it is published. The first read
 * is timed just before the next window is due, which keeps the bracket
 * narrow; on a busy host it widens instead of the comparison going wrong. */
static char *window_bracket(struct mw_daemon *d, double after,
			    void (*read_counters)(unsigned long long v[BRACKET_COUNTERS]), struct bracket *b)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	double end = NAN, len = NAN;

	for (;;) {
		unsigned long long first[BRACKET_COUNTERS];
		char *body = mw_scrape(d->port);
		double t, due;

		ck_assert_msg(body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
				      mw_metric(body, "memwatch_window_seconds", NULL, &len, NULL, 0),
			      "no window timestamps in /metrics");
		free(body);
		due = end + len - 0.01;
		t = realtime_now();
		if (t < due)
			mw_sleep_ms((int)((due - t) * 1000));
		read_counters(first);
		t = realtime_now();
		for (;;) {
			body = mw_scrape(d->port);
			if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
			    end > t)
				break;
			free(body);
			ck_assert_msg(mw_running(d), "memwatchd exited while waiting for a window");
			ck_assert_msg(mw_mono_ms() < deadline, "no window ending after %.3f was published (last: %.3f)", t,
				      end);
			mw_sleep_ms(2);
		}
		if (end > after) {
			memcpy(b->lo, first, sizeof(first));
			read_counters(b->hi);
			return body;
		}
		free(body);
	}
}

static void pgalloc_pages(unsigned long long v[BRACKET_COUNTERS])
{
	v[0] = vmstat_sum("pgalloc_");
	v[1] = vmstat_get("pgfree");
	v[2] = 0;
}

/* Every direct reclaim entry counts one allocstall (in the zone it reclaims
 * for); every kswapd wake (mm_vmscan_kswapd_wake) is followed by one
 * balance_pgdat() run, which counts one pageoutrun; every direct compaction
 * that did not skip all zones counts one compact_stall. */
static void reclaim_runs(unsigned long long v[BRACKET_COUNTERS])
{
	v[0] = vmstat_sum("allocstall_");
	v[1] = vmstat_get("pageoutrun");
	v[2] = vmstat_get("compact_stall");
}

static void assert_collector(const char *body, const char *collector, const char *want_mode, char *mode,
			     size_t mode_len)
{
	char matcher[128], labels[1024], state[64], reason[512];
	double v;

	snprintf(matcher, sizeof(matcher), "collector=\"%s\"", collector);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, &v, labels, sizeof(labels)),
		      "no memwatch_collector_info{%s} in:\n%s", matcher, body);
	ck_assert(mw_label(labels, "state", state, sizeof(state)));
	ck_assert(mw_label(labels, "mode", mode, mode_len));
	ck_assert(mw_label(labels, "reason", reason, sizeof(reason)));
	ck_assert_msg(strcmp(state, "active") == 0, "collector %s is %s (reason '%s'), not active", collector, state,
		      reason);
	if (want_mode)
		ck_assert_msg(strcmp(mode, want_mode) == 0, "collector %s runs in mode '%s', not '%s'", collector, mode,
			      want_mode);
	ck_assert_msg(metric_or_fail(body, "memwatch_collector_up", matcher) == 1.0, "collector %s is not up",
		      collector);
}

/* With attach = auto, a BPF collector runs in the attach flavour the
 * expectation table gives this kernel for the tracepoint collectors (the
 * reclaim row: every one of them attaches alike). */
static void assert_traced_mode(const char *collector, const char *mode)
{
	struct mw_expectation want;

	if (mw_expectation("host", "reclaim", &want) < 0)
		return;
	ck_assert_msg(strcmp(mode, want.mode) == 0, "collector %s runs in mode '%s', want %s (collectors.tsv line %d)",
		      collector, mode, want.mode, want.line);
}

/* The BPF programs process pid holds, by an fd of the program or of a link
 * to it (the prog_id lines of /proc/PID/fdinfo/FD, as bench/hotpath.sh's
 * holds_alloc_prog reads them): how many distinct ones, and how many of them
 * have a name starting with prefix. */
static void held_progs(pid_t pid, const char *prefix, unsigned *total, unsigned *matching)
{
	char dir[64], path[384];
	__u32 ids[4096];
	size_t n = 0, i;
	struct dirent *de;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	dp = opendir(dir);
	ck_assert_msg(dp != NULL, "opendir %s: %s", dir, strerror(errno));
	while ((de = readdir(dp))) {
		char *text, *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = mw_read_file(path, NULL);
		if (!text)
			continue; /* closed meanwhile */
		for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			__u32 id;

			if (strncmp(p, "prog_id:", 8) != 0)
				continue;
			id = (__u32)strtoul(p + 8, NULL, 10);
			for (i = 0; i < n && ids[i] != id; i++)
				;
			if (i == n) {
				ck_assert_msg(n < sizeof(ids) / sizeof(ids[0]), "pid %d holds more than %zu BPF programs",
					      (int)pid, n);
				ids[n++] = id;
			}
		}
		free(text);
	}
	closedir(dp);

	*total = *matching = 0;
	for (i = 0; i < n; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(ids[i]), r;

		if (fd < 0 && errno == ENOENT)
			continue; /* unloaded meanwhile */
		ck_assert_msg(fd >= 0, "bpf_prog_get_fd_by_id(%u): %s", ids[i], strerror(errno));
		memset(&info, 0, sizeof(info));
		r = bpf_obj_get_info_by_fd(fd, &info, &len);
		close(fd);
		ck_assert_msg(r == 0, "bpf_obj_get_info_by_fd(program %u): %s", ids[i], strerror(errno));
		(*total)++;
		if (strncmp(info.name, prefix, strlen(prefix)) == 0)
			(*matching)++;
	}
}

static void assert_promtool(const char *body)
{
	char *out = NULL;
	int rc = mw_promtool_check(body, strlen(body), &out);

	ck_assert_msg(rc == 0, "promtool check metrics exited %d:\n%s", rc, out ? out : "");
	free(out);
}

/* Checks the _bucket series of histogram `name`: le ascending, counts
 * cumulative (non-decreasing), the +Inf bucket equal to _count. Returns _count. */
static double assert_histogram(const char *body, const char *name)
{
	char prefix[160], count_name[160];
	double prev_le = -INFINITY, prev_v = 0, count;
	size_t plen, n = 0;
	bool saw_inf = false;
	const char *line;

	snprintf(prefix, sizeof(prefix), "%s_bucket{", name);
	snprintf(count_name, sizeof(count_name), "%s_count", name);
	plen = strlen(prefix);
	count = metric_or_fail(body, count_name, NULL);
	for (line = body; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char labels[256], le_text[64], *end;
		const char *rbrace;
		double le, v;
		size_t l;

		if (strncmp(line, prefix, plen) != 0)
			continue;
		rbrace = strchr(line + plen, '}');
		ck_assert_msg(rbrace != NULL, "bad bucket line in %s", name);
		l = (size_t)(rbrace - (line + plen));
		ck_assert(l < sizeof(labels));
		memcpy(labels, line + plen, l);
		labels[l] = '\0';
		ck_assert_msg(mw_label(labels, "le", le_text, sizeof(le_text)), "%s bucket without le: {%s}", name,
			      labels);
		le = strtod(le_text, &end);
		ck_assert_msg(end != le_text && *end == '\0', "%s: le=\"%s\" is not a number", name, le_text);
		v = strtod(rbrace + 1, &end);
		ck_assert_msg(end != rbrace + 1, "%s{%s}: no value", name, labels);
		ck_assert_msg(!saw_inf, "%s: a bucket after le=\"+Inf\"", name);
		ck_assert_msg(le > prev_le, "%s: le=%g after le=%g, bounds not ascending", name, le, prev_le);
		ck_assert_msg(v >= prev_v, "%s: bucket le=%g holds %g, less than the %g of le=%g: not cumulative", name,
			      le, v, prev_v, prev_le);
		if (isinf(le))
			saw_inf = true;
		prev_le = le;
		prev_v = v;
		n++;
	}
	ck_assert_msg(n > 1, "%s has %zu buckets", name, n);
	ck_assert_msg(saw_inf, "%s has no le=\"+Inf\" bucket", name);
	ck_assert_msg(prev_v == count, "%s: +Inf bucket %g != _count %g", name, prev_v, count);
	return count;
}

/* ---- processes we start ---- */

/* In a forked child: die with the test, and do not run the runner's signal handlers. */
static void child_init(void)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(126);
}

/* Bounded waitpid; kills the child by its PID when the bound is hit. */
static int wait_child(pid_t pid, int timeout_ms, const char *what)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		ck_assert_msg(r == 0 || errno == EINTR, "waitpid(%s): %s", what, strerror(errno));
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			ck_abort_msg("%s (pid %d) did not finish within %d ms: killed", what, (int)pid, timeout_ms);
		}
		mw_sleep_ms(10);
	}
}

/* A workload of our own, forked before perf starts so that its PID can go
 * into perf's filters: it waits until perf's workload opens the gate, then
 * execs argv (stdout and stderr to log), holding the write end of `done`
 * until it ends. */
struct workload {
	pid_t pid;
	int gate_w; /* perf's workload writes a byte here to start ours */
	int done_r; /* and reads here until EOF: ours has ended */
};

static struct workload workload_spawn(const char *const *argv, const char *log)
{
	struct workload w;
	int gate[2], done[2];

	ck_assert_int_eq(pipe2(gate, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(done, O_CLOEXEC), 0);
	fflush(NULL);
	w.pid = fork();
	ck_assert_msg(w.pid >= 0, "fork: %s", strerror(errno));
	if (w.pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		char c;

		child_init();
		close(gate[1]);
		close(done[0]);
		if (read(gate[0], &c, 1) != 1)
			_exit(125); /* perf never started its workload */
		/* Kept across exec: the end of the workload closes it. */
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 ||
		    fcntl(done[1], F_SETFD, 0) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	close(gate[0]);
	close(done[1]);
	w.gate_w = gate[1];
	w.done_r = done[0];
	return w;
}

/* perf stat -a -x, EVENTS... -o out, whose own workload starts w and waits
 * for it to end: perf counts from before our workload starts until after it
 * ended. Returns perf's exit status; w is reaped, its status in *w_status. */
static int perf_around(const char *const *events, struct workload *w, const char *out, int timeout_ms,
		       int *w_status)
{
	const char *argv[64];
	char logpath[600];
	int64_t deadline = mw_mono_ms() + timeout_ms;
	int perf_status = 0;
	bool perf_done = false, w_done = false;
	size_t n = 0;
	pid_t pid;

	ck_assert_msg(access(PERF_PATH, X_OK) == 0, PERF_PATH " is missing (Debian package linux-perf): %s",
		      strerror(errno));
	ck_assert_msg(access(TRACEFS_DIR "/events", F_OK) == 0, "tracefs is not mounted at " TRACEFS_DIR);
	argv[n++] = PERF_PATH;
	argv[n++] = "stat";
	argv[n++] = "-a";
	argv[n++] = "-x,";
	for (; *events && n < 56; events++)
		argv[n++] = *events;
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = "printf g >&3 && exec cat <&4 >/dev/null";
	argv[n] = NULL;
	snprintf(logpath, sizeof(logpath), "%s.log", out);

	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		/* Above 3 and 4 first, so that the dup2()s below always clear close-on-exec. */
		int gate = fcntl(w->gate_w, F_DUPFD_CLOEXEC, 10), done = fcntl(w->done_r, F_DUPFD_CLOEXEC, 10);

		child_init();
		if (fd < 0 || gate < 0 || done < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 ||
		    dup2(gate, 3) < 0 || dup2(done, 4) < 0)
			_exit(127);
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	/* From now on only perf's side holds the gate: if perf dies, ours sees EOF and exits. */
	close(w->gate_w);
	close(w->done_r);
	while (!perf_done || !w_done) {
		if (!perf_done && waitpid(pid, &perf_status, WNOHANG) == pid)
			perf_done = true;
		if (!w_done && waitpid(w->pid, w_status, WNOHANG) == w->pid)
			w_done = true;
		if (mw_mono_ms() >= deadline) {
			if (!perf_done) {
				kill(pid, SIGKILL);
				waitpid(pid, &perf_status, 0);
			}
			if (!w_done) {
				kill(w->pid, SIGKILL);
				waitpid(w->pid, w_status, 0);
			}
			ck_abort_msg("perf stat and its workload (pids %d and %d) did not finish within %d ms: killed",
				     (int)pid, (int)w->pid, timeout_ms);
		}
		mw_sleep_ms(5);
	}
	return perf_status;
}

/* perf stat -a -x, EVENTS... -o out with no workload: it counts until
 * perf_stop() interrupts it. */
static pid_t perf_start(const char *const *events, const char *out)
{
	const char *argv[32];
	char logpath[600];
	size_t n = 0;
	pid_t pid;

	ck_assert_msg(access(PERF_PATH, X_OK) == 0, PERF_PATH " is missing (Debian package linux-perf)");
	argv[n++] = PERF_PATH;
	argv[n++] = "stat";
	argv[n++] = "-a";
	argv[n++] = "-x,";
	for (; *events && n < 26; events++)
		argv[n++] = *events;
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n] = NULL;
	snprintf(logpath, sizeof(logpath), "%s.log", out);
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		child_init();
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(127);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	/* perf has opened its counters once it created its output file. */
	for (int i = 0; i < 500 && access(out, F_OK) < 0; i++)
		mw_sleep_ms(10);
	mw_sleep_ms(200);
	return pid;
}

static void perf_stop(pid_t pid)
{
	int st;

	ck_assert(kill(pid, SIGINT) == 0);
	st = wait_child(pid, 10000, "perf stat");
	ck_assert_msg(WIFEXITED(st) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT), "perf stat ended with 0x%x", st);
}

/* The counts of perf stat -x, output, one per event in the order given. */
static void perf_counts(const char *out, unsigned long long *counts, size_t n)
{
	char *text = mw_read_file(out, NULL), *line, *save = NULL, logpath[600];
	size_t i = 0;

	snprintf(logpath, sizeof(logpath), "%s.log", out);
	ck_assert_msg(text != NULL, "perf wrote no %s; its output:\n%s", out, mw_read_file(logpath, NULL));
	for (line = strtok_r(text, "\n", &save); line && i < n; line = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (line[0] == '#' || line[0] == '\0')
			continue;
		errno = 0;
		counts[i] = strtoull(line, &end, 10);
		ck_assert_msg(end != line && *end == ',' && errno == 0, "perf did not count: '%s'", line);
		i++;
	}
	ck_assert_msg(i == n, "perf printed %zu counts, want %zu:\n%s", i, n, mw_read_file(out, NULL));
	free(text);
}

/* Reads exactly len bytes from fd within timeout_ms. */
static void read_exact(int fd, void *buf, size_t len, int timeout_ms, const char *what)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;
	size_t got = 0;

	while (got < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - mw_mono_ms();
		ssize_t n;

		ck_assert_msg(left > 0, "timed out waiting for %s", what);
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_msg(n > 0, "the child closed its pipe while we waited for %s", what);
		got += (size_t)n;
	}
}

static void write_byte(int fd, char c)
{
	ck_assert_msg(write(fd, &c, 1) == 1, "cannot write to the child's pipe: %s", strerror(errno));
}

/* Touches every 4 KiB page of [p, p + len). */
static void touch(volatile char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
}

/* ---- 1. memcg reclaim ---- */

#define MAX_ATTEMPTS 4

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

static pid_t spawn_child(void (*fn)(const void *arg, int cmd, int rep), const void *arg, int *cmd_fd, int *rep_fd);

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
 * by exactly what everything but the long reader did (perf, system-wide). */
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
		double other0, other1, lead_max = 0, v, phase_start;
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

		write_byte(cmd[lead], 'l');
		t0 = mw_mono_ms();
		deadline = t0 + WORKLOAD_TIMEOUT_MS;
		/* Every window: one process series at most, and who it is. */
		while (!lead_done || !tail_done) {
			ck_assert_msg(mw_mono_ms() < deadline, "the readers did not finish within %d ms", WORKLOAD_TIMEOUT_MS);
			if (!tail_started && mw_mono_ms() - t0 >= 400) {
				write_byte(cmd[tail], 's');
				tail_started = true;
			}
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
			free(body);
			mw_sleep_ms(20);
		}
		ck_assert_msg(tail_started, "the short read never started");
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

/* ---- 2. global direct reclaim ---- */

struct hog_result {
	unsigned long long touched; /* of both regions */
	int stopped_by_guard;
};

/* Touches [p, p + len) in 64 MiB steps while MemAvailable stays above
 * min_avail; adds what it touched to res. False when the guard stopped it. */
static bool touch_guarded(char *p, unsigned long long len, unsigned long long min_avail, struct hog_result *res)
{
	for (unsigned long long done = 0; done < len; done += 64 * MiB) {
		unsigned long long chunk = len - done < 64 * MiB ? len - done : 64 * MiB;

		if ((unsigned long long)mw_proc_meminfo_kb("MemAvailable") * KiB < min_avail) {
			res->stopped_by_guard = 1;
			return false;
		}
		touch(p + done, chunk);
		res->touched += chunk;
	}
	return true;
}

/* Inside cgroup cg: touches len bytes of THP-advised anonymous memory (with
 * THP defrag = madvise, those faults reclaim and compact directly), then
 * tail bytes of small pages. THP faults never wake kswapd (GFP_TRANSHUGE has
 * no __GFP_KSWAPD_RECLAIM), small-page allocations below the low watermark
 * do. Stops early when MemAvailable falls under min_avail. Reports on fd. */
static void hog_child(const char *cg, unsigned long long len, unsigned long long tail, unsigned long long min_avail,
		      int fd)
{
	struct hog_result res = { 0, 0 };
	char *p, *q;

	child_init();
	if (memcg_join(cg) < 0)
		_exit(3);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	q = mmap(NULL, tail, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED || q == MAP_FAILED)
		_exit(4);
	if (madvise(p, len, MADV_HUGEPAGE) < 0 || madvise(q, tail, MADV_NOHUGEPAGE) < 0)
		_exit(5);
	if (touch_guarded(p, len, min_avail, &res))
		touch_guarded(q, tail, min_avail, &res);
	if (write(fd, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(6);
	_exit(0);
}

/* The compaction collector's stalls, histogram count, and zone runs (all tasks, direct). */
static void compaction_read(const char *body, double *stalls, double *count, double *runs, double *direct)
{
	*stalls = metric_or_fail(body, "memwatch_compaction_stalls_total", NULL);
	*count = metric_or_fail(body, "memwatch_compaction_stall_seconds_count", NULL);
	*direct = metric_or_fail(body, "memwatch_compaction_runs_total", "task=\"direct\"");
	*runs = *direct + metric_or_fail(body, "memwatch_compaction_runs_total", "task=\"kcompactd\"") +
		metric_or_fail(body, "memwatch_compaction_runs_total", "task=\"manual\"");
}

/* Direct compaction stalls against /proc/vmstat compact_stall, bracketed at
 * the two windows' collect moments: the same events, so within the bracket.
 * With the tracepoint method (this host: no fentry) a stall enters the
 * histogram when its thread is seen leaving; the hog and the cache reader
 * have exited, so only a stall of a thread still alive elsewhere on the
 * machine, whose allocation gave up after compacting, can be missing there. */
#define OPEN_STALLS_MAX 4 /* as tests/vm/run_vm.py allows: seen 0 here (534 stalls, 534 in the histogram) */

static void assert_compaction_stalls(const char *body, unsigned long long lo0, unsigned long long hi0,
				     unsigned long long lo1, unsigned long long hi1, double stalls, double count)
{
	double lo = (double)(lo1 - hi0), hi = (double)(hi1 - lo0);

	note("direct compaction: memwatchd stalls +%.0f (histogram +%.0f), compact_stall +%.0f..%.0f", stalls, count,
	     lo, hi);
	ck_assert_msg(lo > 0, "no direct compaction happened (compact_stall did not move): nothing to compare");
	ck_assert_msg(stalls >= lo && stalls <= hi,
		      "memwatch_compaction_stalls_total grew by %.0f, /proc/vmstat compact_stall by %.0f..%.0f over "
		      "the same windows",
		      stalls, lo, hi);
	ck_assert_msg(count <= stalls && count >= stalls - OPEN_STALLS_MAX,
		      "memwatch_compaction_stall_seconds_count grew by %.0f for %.0f stalls (at most %d may be open)",
		      count, stalls, OPEN_STALLS_MAX);
	(void)assert_histogram(body, "memwatch_compaction_stall_seconds");
}

START_TEST(test_direct_reclaim)
{
	const unsigned long long min_cache_left = 4 * GiB;
	const unsigned long long tail = GiB;
	unsigned long long total, avail, free_mem, cached0, cached1, cache_bytes, anon_bytes;
	unsigned long long fallback0, fallback1, charge0, charge1;
	struct bracket vm0, vm1;
	double stalls_lo, stalls_hi, runs_lo, runs_hi;
	double direct0, direct1, wake0, wake1, fail9_0, fail9_1, awake, count, pages0, pages1, requests0, requests1;
	unsigned long long kswapd_perf[4];
	double cstall0, cstall1, ccount0, ccount1, cruns0, cruns1, cdirect0, cdirect1;
	char perf_out[512], cache_cg[256], path[300];
	double soft0, soft1;
	pid_t perf, reader;
	int r;
	unsigned long long pgalloc0, pgalloc1, compact0, compact1;
	char cg[256], sparse[512], matcher[64], *body, *buf;
	struct hog_result res;
	struct mw_daemon *d;
	int fd, pipefd[2], st;
	pid_t hog;
	ssize_t n;

	total = meminfo_bytes("MemTotal");
	avail = meminfo_bytes("MemAvailable");
	ck_assert_msg(avail > 6 * GiB + min_cache_left + 3 * GiB,
		      "MemAvailable is %llu MiB: too little for a safe global direct reclaim run (the page cache "
		      "would be filled with MemAvailable - 6 GiB, and at least 4 GiB of it must stay)",
		      avail / MiB);
	cache_bytes = avail - 6 * GiB;

	memcg_path(cg, sizeof(cg), "-hog");
	/* The hog can never take the whole machine: no global OOM, whatever happens. */
	memcg_create(cg, total - 3 * GiB);
	/* trace: the order-9 allocation failures are counted only by the opt-in BPF program. */
	d = start_with_config("[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.reclaim]\ntop_k = 100\n"
			      "[collector.alloc]\ntrace = yes\n");

	/* Fill the page cache with clean pages: a sparse file, so no disk is used.
	 * It is read in a v1 memory cgroup with a 1 GiB soft limit, far exceeded:
	 * global reclaim then runs soft-limit reclaim on it first. */
	memcg_path(cache_cg, sizeof(cache_cg), "-cache");
	memcg_create(cache_cg, 0);
	snprintf(path, sizeof(path), "%s/memory.soft_limit_in_bytes", cache_cg);
	r = mw_write_text(path, "1073741824");
	ck_assert_msg(r == 0, "cannot set %s: %s", path, strerror(-r));
	cached0 = meminfo_bytes("Cached");
	sparse_create(sparse, sizeof(sparse), "cache", cache_bytes);
	fflush(NULL);
	reader = fork();
	ck_assert_msg(reader >= 0, "fork: %s", strerror(errno));
	if (reader == 0) {
		child_init();
		if (memcg_join(cache_cg) < 0)
			_exit(3);
		fd = open(sparse, O_RDONLY | O_CLOEXEC);
		buf = malloc(MiB);
		if (fd < 0 || !buf)
			_exit(4);
		while ((n = read(fd, buf, MiB)) > 0)
			;
		_exit(n == 0 ? 0 : 5);
	}
	st = wait_child(reader, 150000, "reading the sparse file into the page cache");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reading %s in %s ended with status 0x%x", sparse,
		      cache_cg, st);
	cached1 = meminfo_bytes("Cached");
	ck_assert_msg(cached1 > cached0 + cache_bytes / 2,
		      "reading the %llu MiB sparse file %s left Cached at %llu MiB (was %llu MiB): no page cache "
		      "to reclaim",
		      cache_bytes / MiB, sparse, cached1 / MiB, cached0 / MiB);

	free_mem = meminfo_bytes("MemFree");
	anon_bytes = free_mem + 2 * GiB;
	ck_assert_msg(cached1 > anon_bytes + tail - free_mem + min_cache_left + GiB,
		      "Cached %llu MiB: touching MemFree + 3 GiB would leave less than 4 GiB of clean cache",
		      cached1 / MiB);

	/* perf counts the kswapd tracepoints from before the first window to
	 * after the last: both ends are quiet (before the hog, after it freed). */
	snprintf(perf_out, sizeof(perf_out), "%s/perf-kswapd.txt", mw_tmp_root());
	perf = perf_start((const char *const[]){ "-e", "vmscan:mm_vmscan_kswapd_wake", "-e",
						 "vmscan:mm_vmscan_wakeup_kswapd", "-e",
						 "vmscan:mm_vmscan_memcg_softlimit_reclaim_begin", "-e",
						 "compaction:mm_compaction_end", NULL },
			  perf_out);
	body = window_bracket(d, realtime_now(), reclaim_runs, &vm0);
	requests0 = metric_or_fail(body, "memwatch_kswapd_wakeup_requests_total", NULL);
	soft0 = metric_or_fail(body, "memwatch_memcg_softlimit_reclaim_total", NULL);
	fallback0 = vmstat_get("thp_fault_fallback");
	charge0 = vmstat_get("thp_fault_fallback_charge");
	direct0 = metric_or_fail(body, "memwatch_direct_reclaim_total", NULL);
	wake0 = metric_or_fail(body, "memwatch_kswapd_wakeups_total", NULL);
	fail9_0 = metric_or_fail(body, "memwatch_page_allocation_failures_total", "order=\"9\"");
	pages0 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	pgalloc0 = vmstat_sum("pgalloc_");
	compact0 = vmstat_get("compact_success");
	compaction_read(body, &cstall0, &ccount0, &cruns0, &cdirect0);
	free(body);

	ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
	fflush(NULL);
	hog = fork();
	ck_assert_msg(hog >= 0, "fork: %s", strerror(errno));
	if (hog == 0) {
		close(pipefd[0]);
		/* The guard keeps MemAvailable (mostly clean cache by then) above the floor. */
		hog_child(cg, anon_bytes, tail, min_cache_left, pipefd[1]);
	}
	close(pipefd[1]);
	st = wait_child(hog, 150000, "the anonymous memory hog");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the hog ended with status 0x%x", st);
	read_exact(pipefd[0], &res, sizeof(res), 1000, "the hog's report");
	close(pipefd[0]);

	body = window_bracket(d, realtime_now(), reclaim_runs, &vm1);
	perf_stop(perf);
	perf_counts(perf_out, kswapd_perf, 4);
	requests1 = metric_or_fail(body, "memwatch_kswapd_wakeup_requests_total", NULL);
	soft1 = metric_or_fail(body, "memwatch_memcg_softlimit_reclaim_total", NULL);
	fallback1 = vmstat_get("thp_fault_fallback");
	charge1 = vmstat_get("thp_fault_fallback_charge");
	direct1 = metric_or_fail(body, "memwatch_direct_reclaim_total", NULL);
	wake1 = metric_or_fail(body, "memwatch_kswapd_wakeups_total", NULL);
	fail9_1 = metric_or_fail(body, "memwatch_page_allocation_failures_total", "order=\"9\"");
	awake = metric_or_fail(body, "memwatch_kswapd_awake_seconds_total", NULL);
	pages1 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	pgalloc1 = vmstat_sum("pgalloc_");
	compact1 = vmstat_get("compact_success");
	compaction_read(body, &cstall1, &ccount1, &cruns1, &cdirect1);

	/* Clean up before judging: nothing of this size may stay behind. */
	drop_file(sparse);
	memcg_remove(cg);
	memcg_remove(cache_cg);

	stalls_lo = (double)(vm1.lo[0] - vm0.hi[0]);
	stalls_hi = (double)(vm1.hi[0] - vm0.lo[0]);
	runs_lo = (double)(vm1.lo[1] - vm0.hi[1]);
	runs_hi = (double)(vm1.hi[1] - vm0.lo[1]);
	note("direct reclaim: cache %llu MiB, anon touched %llu of %llu MiB%s; allocstall +%.0f..%.0f, memwatchd "
	     "direct +%.0f, kswapd wakeups +%.0f (pageoutrun +%.0f..%.0f), awake %.3f s; THP fallbacks +%llu, "
	     "order-9 failures +%.0f",
	     cache_bytes / MiB, res.touched / MiB, (anon_bytes + tail) / MiB, res.stopped_by_guard ? " (guard)" : "",
	     stalls_lo, stalls_hi, direct1 - direct0, wake1 - wake0, runs_lo, runs_hi, awake, fallback1 - fallback0,
	     fail9_1 - fail9_0);
	note("direct reclaim: allocated pages memwatchd +%.0f, pgalloc_* +%llu, compact_success +%llu", pages1 - pages0,
	     pgalloc1 - pgalloc0, compact1 - compact0);
	ck_assert_msg(stalls_lo > 0,
		      "no direct reclaim happened (allocstall_* did not move) after filling %llu MiB of page cache "
		      "and touching %llu of %llu MiB anonymous memory with MADV_HUGEPAGE%s",
		      cache_bytes / MiB, res.touched / MiB, (anon_bytes + tail) / MiB,
		      res.stopped_by_guard ? " (stopped early: MemAvailable reached the 4 GiB floor)" : "");
	ck_assert_msg(direct1 > direct0, "memwatch_direct_reclaim_total stayed at %.0f while allocstall grew by %.0f",
		      direct0, stalls_lo);
	/* One allocstall per direct reclaim entry: the same events. */
	ck_assert_msg(direct1 - direct0 >= 0.98 * stalls_lo && direct1 - direct0 <= 1.02 * stalls_hi,
		      "memwatch_direct_reclaim_total grew by %.0f, allocstall_* by %.0f to %.0f over the same windows "
		      "(more than 2%% apart)",
		      direct1 - direct0, stalls_lo, stalls_hi);
	count = assert_histogram(body, "memwatch_direct_reclaim_seconds");
	ck_assert_msg(count == direct1, "memwatch_direct_reclaim_seconds_count %.0f != memwatch_direct_reclaim_total %.0f",
		      count, direct1);
	snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)hog);
	ck_assert_msg(metric_or_fail(body, "memwatch_process_direct_reclaims_total", matcher) > 0,
		      "memwatch_process_direct_reclaims_total{%s} is 0", matcher);
	ck_assert_msg(wake1 > wake0,
		      "memwatch_kswapd_wakeups_total stayed at %.0f under global pressure (pageoutrun grew by %.0f to "
		      "%.0f)",
		      wake0, runs_lo, runs_hi);
	ck_assert_msg(wake1 - wake0 >= 0.98 * runs_lo && wake1 - wake0 <= 1.02 * runs_hi,
		      "memwatch_kswapd_wakeups_total grew by %.0f, pageoutrun (one per kswapd balance run, each after "
		      "a mm_vmscan_kswapd_wake) by %.0f to %.0f over the same windows",
		      wake1 - wake0, runs_lo, runs_hi);
	/* The kernel's own count of the same tracepoints. */
	note("direct reclaim: kswapd wakeups memwatchd +%.0f, perf mm_vmscan_kswapd_wake %llu; wake-up requests "
	     "memwatchd +%.0f, perf mm_vmscan_wakeup_kswapd %llu",
	     wake1 - wake0, kswapd_perf[0], requests1 - requests0, kswapd_perf[1]);
	ck_assert_msg(wake1 - wake0 == (double)kswapd_perf[0],
		      "memwatch_kswapd_wakeups_total grew by %.0f, perf counted %llu vmscan:mm_vmscan_kswapd_wake",
		      wake1 - wake0, kswapd_perf[0]);
	ck_assert_msg(requests1 - requests0 == (double)kswapd_perf[1],
		      "memwatch_kswapd_wakeup_requests_total grew by %.0f, perf counted %llu vmscan:mm_vmscan_wakeup_kswapd",
		      requests1 - requests0, kswapd_perf[1]);
	note("direct reclaim: soft-limit reclaims memwatchd +%.0f, perf mm_vmscan_memcg_softlimit_reclaim_begin %llu",
	     soft1 - soft0, kswapd_perf[2]);
	ck_assert_msg(kswapd_perf[2] > 0,
		      "no soft-limit reclaim (perf) with %llu MiB of page cache in a cgroup with a 1 GiB soft limit "
		      "under global pressure",
		      cache_bytes / MiB);
	ck_assert_msg(soft1 - soft0 == (double)kswapd_perf[2],
		      "memwatch_memcg_softlimit_reclaim_total grew by %.0f, perf counted %llu "
		      "vmscan:mm_vmscan_memcg_softlimit_reclaim_begin",
		      soft1 - soft0, kswapd_perf[2]);
	ck_assert_msg(awake > 0, "memwatch_kswapd_awake_seconds_total is %g", awake);
	/* A THP fault that falls back to small pages saw its order-9 allocation
	 * fail (mm_page_alloc with no page), unless the memcg charge failed. */
	ck_assert_msg(fail9_1 - fail9_0 >= (double)((fallback1 - fallback0) - (charge1 - charge0)),
		      "memwatch_page_allocation_failures_total{order=\"9\"} grew by %.0f, fewer than the %llu THP "
		      "fault fallbacks",
		      fail9_1 - fail9_0, (fallback1 - fallback0) - (charge1 - charge0));
	assert_compaction_stalls(body, vm0.lo[2], vm0.hi[2], vm1.lo[2], vm1.hi[2], cstall1 - cstall0, ccount1 - ccount0);
	note("direct compaction: zone runs memwatchd +%.0f (direct +%.0f), perf mm_compaction_end %llu", cruns1 - cruns0,
	     cdirect1 - cdirect0, kswapd_perf[3]);
	ck_assert_msg(cruns1 - cruns0 == (double)kswapd_perf[3],
		      "memwatch_compaction_runs_total grew by %.0f, perf counted %llu compaction:mm_compaction_end",
		      cruns1 - cruns0, kswapd_perf[3]);
	ck_assert_msg(cdirect1 > cdirect0, "no direct zone compaction (memwatch_compaction_runs_total{task=\"direct\"}) "
		      "while compact_stall grew");
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

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

/* Joins memory cgroup cg (unless NULL), waits for a byte on cmd, touches len
 * bytes, reports on rep, then idles until cmd closes. */
struct toucher_args {
	const char *cg;
	size_t len;
};

/* A child's start: waits for a byte on cmd, then touches len fresh bytes. */
static void touch_on_go(int cmd, size_t len)
{
	char c, *p;

	if (read(cmd, &c, 1) != 1)
		_exit(2);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	touch(p, len);
}

static void toucher_child(const void *arg, int cmd, int rep)
{
	const struct toucher_args *a = arg;
	const char *cg = a->cg;
	size_t len = a->len;
	char c;

	child_init();
	if (cg && memcg_join(cg) < 0)
		_exit(5);
	touch_on_go(cmd, len);
	if (write(rep, "d", 1) != 1)
		_exit(4);
	while (read(cmd, &c, 1) > 0)
		;
	_exit(0);
}

/* Forks a child that runs fn(arg, cmd, rep) and never returns: it reads
 * commands on cmd and answers on rep; the parent gets the other ends. */
static pid_t spawn_child(void (*fn)(const void *arg, int cmd, int rep), const void *arg, int *cmd_fd, int *rep_fd)
{
	int cmd[2], rep[2];
	pid_t child;

	ck_assert_int_eq(pipe2(cmd, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(rep, O_CLOEXEC), 0);
	fflush(NULL);
	child = fork();
	ck_assert_msg(child >= 0, "fork: %s", strerror(errno));
	if (child == 0) {
		close(cmd[1]);
		close(rep[0]);
		fn(arg, cmd[0], rep[1]);
		_exit(0);
	}
	close(cmd[0]);
	close(rep[1]);
	*cmd_fd = cmd[1];
	*rep_fd = rep[0];
	return child;
}

/* A toucher_child: a byte on *cmd_fd starts it and closing it ends it; it
 * answers on *rep_fd once it has touched its memory. */
static pid_t spawn_toucher(const char *cg, size_t len, int *cmd_fd, int *rep_fd)
{
	const struct toucher_args args = { cg, len };

	return spawn_child(toucher_child, &args, cmd_fd, rep_fd);
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

static void allocs_and_faults_run(const char *source)
{
	const size_t len = 256 * MiB;
	char conf[512], matcher[64], mode[64], *body;
	unsigned long long captured0, captured1;
	double pages0, pages1, dpages, dvm_lo, dvm_hi, captured, minflt, majflt;
	struct bracket vm0, vm1;
	struct proc_faults pf;
	struct mw_daemon *d;
	int cmd, rep, st;
	pid_t child;
	char c;

	/* Idle processes stay exported (series_ttl), and none is pushed out by busier ones (top_k).
	 * trace: the pages the BPF program counts, checked against /proc/vmstat (the
	 * default, vmstat mode, is test_alloc_vmstat_default). */
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.alloc]\ntrace = yes\n"
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

	/* The child idles now: its counters cannot move any more, and the
	 * first walk after this sees their final values. */
	free(body);
	body = scrape_walked_after(d, realtime_now());
	pf = proc_stat_faults(child);
	snprintf(matcher, sizeof(matcher), "pid=\"%d\"", (int)child);
	minflt = metric_or_fail(body, "memwatch_process_minor_faults_total", matcher);
	majflt = metric_or_fail(body, "memwatch_process_major_faults_total", matcher);
	note("faults source=%s: memwatchd minor %.0f major %.0f, /proc/%d/stat minor %llu major %llu",
	     source ? source : "auto", minflt, majflt, (int)child, pf.minflt, pf.majflt);
	ck_assert_msg(fabs(minflt - (double)pf.minflt) <= 0.01 * (double)pf.minflt,
		      "source=%s: memwatch_process_minor_faults_total{%s} is %.0f, /proc/%d/stat says %llu",
		      source ? source : "auto", matcher, minflt, (int)child, pf.minflt);
	ck_assert_msg(minflt >= (double)(len / 4096), "the child's %.0f minor faults are fewer than its %zu pages", minflt,
		      len / 4096);
	ck_assert_msg(majflt == (double)pf.majflt,
		      "source=%s: memwatch_process_major_faults_total{%s} is %.0f, /proc/%d/stat says %llu",
		      source ? source : "auto", matcher, majflt, (int)child, pf.majflt);
	assert_collector(body, "faults", source, mode, sizeof(mode));
	if (!source)
		mw_assert_collector_expected(body, "faults", NULL);
	assert_collector(body, "alloc", NULL, mode, sizeof(mode));
	assert_traced_mode("alloc", mode);
	free(body);

	close(cmd);
	st = wait_child(child, 10000, "the touching child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the touching child ended with status 0x%x", st);
	close(rep);
	mw_assert_clean_stop(d);
}

START_TEST(test_allocs_and_faults)
{
	allocs_and_faults_run(NULL);
	allocs_and_faults_run("procfs");
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

	d = start_with_config("[daemon]\nwindow = 200ms\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n"
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

static void reload_config(struct mw_daemon *d, const char *conf, const char *text)
{
	int r = mw_write_file(conf, text);

	ck_assert_msg(r == 0, "cannot rewrite %s: %s", conf, strerror(-r));
	r = mw_signal(d, SIGHUP);
	ck_assert_msg(r == 0, "SIGHUP to memwatchd: %s", strerror(-r));
}

/* A restart of the faults collector (a reload to another source) continues
 * its counters from the old instance's last values, which it reads then, not
 * at its last walk: a process that exited since that walk would otherwise
 * lose its last faults, as the new instance never sees it. The walks are an
 * hour apart and the host's faults call none, so the child's 16 MiB and its
 * exit fall between the start's walk and the restart. */
START_TEST(test_faults_restart_reads_fresh)
{
	static const char base[] = "[daemon]\nwindow = 200ms\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n"
				   "walk_interval = 3600\nwalk_faults = 1099511627776\n";
	static const char procfs[] = "[daemon]\nwindow = 200ms\n[collector.faults]\ntop_k = 1000\nseries_ttl = 10m\n"
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
	assert_collector(body, "faults", "iter", mode, sizeof(mode));
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

/* ---- 4. allocation failures ---- */

/* Helper mode (run under perf): inside cgroup cg, fill it with unreclaimable
 * anonymous memory, leave 512 KiB of headroom, then ask for io_uring rings
 * that need one order-9 (2 MiB) compound page charged to the cgroup
 * (GFP_KERNEL_ACCOUNT). The charge fails: reclaim finds nothing, and above
 * PAGE_ALLOC_COSTLY_ORDER the memcg OOM killer is not tried. The page
 * allocator then frees the page and fires kmem:mm_page_alloc with no page,
 * order 9, once per attempt; io_uring_setup returns ENOMEM. Prints
 * "enomem=N ok=N errno=N". */
static int kmem_failure_helper(const char *cg, const char *result_path)
{
	const size_t fill = 8 * MiB;
	char file[512], value[32];
	unsigned long long usage;
	int enomem = 0, ok = 0, other = 0, i;
	char *p, *text;
	FILE *f;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (memcg_join(cg) < 0)
		return 3;
	p = mmap(NULL, fill, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return 4;
	memset(p, 1, fill);
	snprintf(file, sizeof(file), "%s/memory.usage_in_bytes", cg);
	text = mw_read_file(file, NULL);
	if (!text)
		return 5;
	usage = strtoull(text, NULL, 10);
	free(text);
	snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", cg);
	snprintf(value, sizeof(value), "%llu", (usage + 512 * KiB + 4095) / 4096 * 4096);
	if (mw_write_text(file, value) < 0)
		return 6;
	for (i = 0; i < KMEM_HELPER_ATTEMPTS; i++) {
		struct io_uring_params params;
		long fd;

		memset(&params, 0, sizeof(params));
		fd = syscall(__NR_io_uring_setup, KMEM_HELPER_ENTRIES, &params);
		if (fd >= 0) {
			ok++;
			close((int)fd);
		} else if (errno == ENOMEM) {
			enomem++;
		} else {
			other = errno;
			break;
		}
	}
	f = fopen(result_path, "we");
	if (!f)
		_exit(7);
	fprintf(f, "enomem=%d ok=%d errno=%d\n", enomem, ok, other);
	/* _exit: no exit-time work (a leak check, say) inside the full cgroup. */
	_exit(fclose(f) == 0 ? 0 : 8);
}

static void alloc_failures_run(const char *attach)
{
	static const char fail_filter[] = "pfn == 0xffffffffffffffff";
	static const char fail9_filter[] = "pfn == 0xffffffffffffffff && order == 9";
	char conf[512], cg[256], exe[PATH_MAX], perf_out[512], result[512], log[512], order[32], mode[64];
	char own_filter[128], own9_filter[128], *body, *text;
	double f0[11], f1[11], a0[11], a1[11], sum = 0;
	unsigned long long perf[4];
	int enomem = -1, ok = -1, other = -1, o, st, wst, attempt;
	struct mw_daemon *d;
	struct workload w;
	bool agree = false;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_msg(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	memcg_path(cg, sizeof(cg), "-kmem");
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.alloc]\ntrace = yes\n%s%s%s",
		 attach ? "attach = " : "", attach ? attach : "", attach ? "\n" : "");
	d = start_with_config(conf);
	snprintf(perf_out, sizeof(perf_out), "%s/perf-kmem-%s.txt", mw_tmp_root(), attach ? attach : "auto");
	snprintf(result, sizeof(result), "%s/kmem-%s.txt", mw_tmp_root(), attach ? attach : "auto");
	snprintf(log, sizeof(log), "%s/kmem-%s.log", mw_tmp_root(), attach ? attach : "auto");

	for (attempt = 1; !agree; attempt++) {
		/* A fresh cgroup each time: the helper sets its limit from what it uses. */
		memcg_create(cg, 0);
		unlink(result);
		body = next_window(d);
		for (o = 0; o <= 10; o++) {
			snprintf(order, sizeof(order), "order=\"%d\"", o);
			f0[o] = metric_or_fail(body, "memwatch_page_allocation_failures_total", order);
			a0[o] = metric_or_fail(body, "memwatch_page_allocations_total", order);
		}
		free(body);

		w = workload_spawn((const char *const[]){ exe, KMEM_HELPER_FLAG, cg, result, NULL }, log);
		snprintf(own_filter, sizeof(own_filter), "%s && common_pid == %d", fail_filter, (int)w.pid);
		snprintf(own9_filter, sizeof(own9_filter), "%s && common_pid == %d", fail9_filter, (int)w.pid);
		st = perf_around((const char *const[]){ "-e", "kmem:mm_page_alloc", "--filter", fail_filter,
						       "-e", "kmem:mm_page_alloc", "--filter", fail9_filter,
						       "-e", "kmem:mm_page_alloc", "--filter", own_filter,
						       "-e", "kmem:mm_page_alloc", "--filter", own9_filter, NULL },
				 &w, perf_out, WORKLOAD_TIMEOUT_MS, &wst);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "perf stat ended with status 0x%x", st);
		ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "%s " KMEM_HELPER_FLAG " ended with status 0x%x",
			      exe, wst);
		perf_counts(perf_out, perf, 4);
		memcg_remove(cg);
		text = mw_read_file(result, NULL);
		ck_assert_msg(text && sscanf(text, "enomem=%d ok=%d errno=%d", &enomem, &ok, &other) == 3,
			      "the helper reported '%s'", text ? text : "nothing");
		free(text);
		ck_assert_msg(other == 0,
			      "io_uring_setup failed with %s, not ENOMEM: cannot provoke kmem charge failures",
			      strerror(other));
		ck_assert_msg(enomem > 0,
			      "io_uring_setup(%d) never failed with ENOMEM in a cgroup with 512 KiB of headroom (%d "
			      "succeeded)",
			      KMEM_HELPER_ENTRIES, ok);

		body = wait_window_after(d, realtime_now());
		sum = 0;
		for (o = 0; o <= 10; o++) {
			snprintf(order, sizeof(order), "order=\"%d\"", o);
			f1[o] = metric_or_fail(body, "memwatch_page_allocation_failures_total", order);
			a1[o] = metric_or_fail(body, "memwatch_page_allocations_total", order);
			ck_assert_msg(f1[o] >= f0[o] && a1[o] >= a0[o] && f0[o] == floor(f0[o]),
				      "order %d: failures %g -> %g, allocations %g -> %g: not counters", o, f0[o], f1[o],
				      a0[o], a1[o]);
			sum += f1[o] - f0[o];
		}
		ck_assert_msg(f1[9] - f0[9] >= (double)enomem,
			      "attach=%s: memwatch_page_allocation_failures_total{order=\"9\"} grew by %.0f for %d failed "
			      "order-9 allocations",
			      attach ? attach : "auto", f1[9] - f0[9], enomem);
		assert_collector(body, "alloc", attach, mode, sizeof(mode));
		assert_promtool(body);
		free(body);

		note("allocation failures, attach=%s (mode %s), attempt %d: %d io_uring_setup ENOMEM; memwatchd order 9 "
		     "+%.0f, all orders +%.0f; perf system-wide order 9 %llu, all %llu; perf helper order 9 %llu, all %llu",
		     attach ? attach : "auto", mode, attempt, enomem, f1[9] - f0[9], sum, perf[1], perf[0], perf[3],
		     perf[2]);
		ck_assert_msg(perf[3] > 0 || strcmp(mode, "tracepoint") != 0,
			      "attach=tracepoint: perf counted no kmem:mm_page_alloc failure although %d io_uring_setup "
			      "calls failed on their order-9 allocation and memwatchd counted %.0f. The daemon's BPF "
			      "program on the classic tracepoint returns 0, and a tracepoint BPF program that returns 0 "
			      "makes perf_trace_run_bpf_submit() drop the event for every perf user of that tracepoint: "
			      "with attach = tracepoint, memwatchd blinds perf",
			      enomem, f1[9] - f0[9]);
		/* The kernel's own account of our workload. */
		ck_assert_msg(perf[3] >= (unsigned long long)enomem,
			      "perf counted %llu order-9 mm_page_alloc failures of the helper for its %d failed "
			      "io_uring_setup calls (a BPF program on the classic tracepoint that returns 0, such as any "
			      "memwatchd on this host with attach = tracepoint, hides events from perf)",
			      perf[3], enomem);
		/* The whole system: memwatchd's windows bracket perf's run, so a
		 * failure of anything else can fall in between; then try again. */
		agree = fabs((f1[9] - f0[9]) - (double)perf[1]) <= fmax(1.0, 0.02 * (double)perf[1]) &&
			fabs(sum - (double)perf[0]) <= fmax(1.0, 0.02 * (double)perf[0]);
		ck_assert_msg(agree || attempt < MAX_ATTEMPTS,
			      "attach=%s: memwatch_page_allocation_failures_total grew by %.0f (order 9: %.0f), perf "
			      "counted %llu mm_page_alloc events with no page (order 9: %llu) system-wide, in each of %d "
			      "attempts",
			      attach ? attach : "auto", sum, f1[9] - f0[9], perf[0], perf[1], attempt);
	}
	mw_assert_clean_stop(d);
}

START_TEST(test_alloc_failures)
{
	alloc_failures_run(NULL);
	alloc_failures_run("raw_tp");
	alloc_failures_run("tracepoint");
}
END_TEST

/* ---- 4b. page allocations without tracing (the default) and switching it ---- */

/* Every page-allocation series only the opt-in BPF program produces is absent:
 * no sample, not even HELP or TYPE. */
static void assert_no_per_order(const char *body, const char *why)
{
	static const char *const traced[] = { "memwatch_page_allocations_total",
					      "memwatch_page_allocation_failures_total" };

	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		ck_assert_msg(strstr(body, traced[i]) == NULL, "%s: /metrics has %s (want it absent):\n%s", why,
			      traced[i], body);
}

/* The page_alloc* programs the daemon holds; fails unless it holds some BPF
 * program, so that a count of 0 means something. */
static unsigned held_alloc_progs(const struct mw_daemon *d)
{
	unsigned total, alloc;

	held_progs(d->pid, "page_alloc", &total, &alloc);
	ck_assert_msg(total > 0,
		      "memwatchd (pid %d) holds no BPF program at all according to /proc/%d/fdinfo: its other BPF "
		      "collectors should, so that listing is not read right",
		      (int)d->pid, (int)d->pid);
	return alloc;
}

/* The window whose collectors ran between the two readings of pgalloc_*: its
 * memwatch_page_allocated_pages_total in vmstat mode is pgalloc_* at that
 * instant, so it lies in the bracket. Returns it; checks bytes = pages times the page size. */
static double vmstat_pages_in_bracket(struct mw_daemon *d, const char *when)
{
	struct bracket b;
	char *body = window_bracket(d, realtime_now(), pgalloc_pages, &b);
	double pages = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	double bytes = metric_or_fail(body, "memwatch_page_allocated_bytes_total", NULL);
	double frees = metric_or_fail(body, "memwatch_page_frees_total", NULL);

	assert_no_per_order(body, when);
	free(body);
	ck_assert_msg(frees >= (double)b.lo[1] && frees <= (double)b.hi[1],
		      "%s: memwatch_page_frees_total is %.0f, but /proc/vmstat's pgfree was %llu before and %llu after "
		      "that window was collected",
		      when, frees, b.lo[1], b.hi[1]);
	note("%s: memwatch_page_allocated_pages_total %.0f, /proc/vmstat pgalloc_* %llu..%llu", when, pages, b.lo[0],
	     b.hi[0]);
	ck_assert_msg(pages >= (double)b.lo[0] && pages <= (double)b.hi[0],
		      "%s: memwatch_page_allocated_pages_total is %.0f, but /proc/vmstat's pgalloc_* summed was %llu "
		      "before and %llu after that window was collected: it is not pgalloc_*",
		      when, pages, b.lo[0], b.hi[0]);
	ck_assert_msg(bytes == pages * (double)sysconf(_SC_PAGESIZE),
		      "%s: memwatch_page_allocated_bytes_total %.0f is not %.0f pages of %ld bytes", when, bytes, pages,
		      sysconf(_SC_PAGESIZE));
	return pages;
}

START_TEST(test_alloc_vmstat_default)
{
	const size_t len = 256 * MiB;
	char cg[256], mode[64], *body;
	double pages0, pages1;
	struct mw_daemon *d;
	int cmd, rep, st;
	unsigned progs;
	pid_t child;
	char c;

	memcg_path(cg, sizeof(cg), "-vmstat");
	memcg_create(cg, 2 * len);
	/* No [collector.alloc] section: its built-in default, trace = no. */
	d = start_with_config("[daemon]\nwindow = 200ms\nsample_interval = 50ms\n");

	body = next_window(d);
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no (built-in default)");
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0,
		      "with the built-in default trace = no, memwatchd holds %u BPF program(s) named page_alloc*", progs);

	child = spawn_toucher(cg, len, &cmd, &rep);

	pages0 = vmstat_pages_in_bracket(d, "trace = no, before the child");
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WORKLOAD_TIMEOUT_MS, "the child to touch 256 MiB");
	pages1 = vmstat_pages_in_bracket(d, "trace = no, after the child touched 256 MiB");
	note("allocations (trace = no): memwatchd +%.0f pages while a child in %s touched %zu pages", pages1 - pages0,
	     cg, len / 4096);
	ck_assert_msg(pages1 - pages0 >= (double)(len / 4096),
		      "memwatch_page_allocated_pages_total grew by %.0f while a child touched %zu pages",
		      pages1 - pages0, len / 4096);

	body = next_window(d);
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no (built-in default)");
	assert_promtool(body);
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0, "with trace = no, memwatchd holds %u BPF program(s) named page_alloc*", progs);

	close(cmd);
	st = wait_child(child, 10000, "the touching child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the touching child ended with status 0x%x", st);
	close(rep);
	memcg_remove(cg);
	mw_assert_clean_stop(d);
}
END_TEST

/* Scrapes windows until one shows the alloc collector traced (or not): its
 * mode and the per-order series both say so. Returns that scrape. */
static char *wait_alloc_trace(struct mw_daemon *d, bool trace, char *mode, size_t mode_len)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;

	mode[0] = '\0';
	for (;;) {
		char *body = next_window(d), labels[1024];
		bool per_order = mw_metric(body, "memwatch_page_allocations_total", "order=\"0\"", NULL, NULL, 0);
		double v;

		if (mw_metric(body, "memwatch_collector_info", "collector=\"alloc\"", &v, labels, sizeof(labels)) &&
		    mw_label(labels, "mode", mode, mode_len) && (strcmp(mode, "vmstat") != 0) == trace &&
		    per_order == trace)
			return body;
		free(body);
		ck_assert_msg(mw_mono_ms() < deadline,
			      "%d ms after the reload to trace = %s, the alloc collector is in mode '%s' and the "
			      "per-order series are %s",
			      WINDOW_TIMEOUT_MS, trace ? "yes" : "no", mode, per_order ? "there" : "absent");
	}
}

START_TEST(test_alloc_trace_reload)
{
	static const char base[] = "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n";
	static const char traced[] =
		"[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.alloc]\ntrace = yes\n";
	const size_t len = 16 * MiB;
	char *conf, mode[64], *body, *p;
	double reloads0, reloads1, pages0, pages1;
	struct mw_daemon *d;
	unsigned progs;

	conf = mw_write_temp_file("memwatchd.conf", base);
	ck_assert_msg(conf != NULL, "cannot write a temporary config");
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd with config\n%s\ndid not start serving /metrics (log above)", base);
	body = next_window(d);
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no, before the reload");
	reloads0 = metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"");
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0, "trace = no: memwatchd holds %u BPF program(s) named page_alloc*", progs);

	/* no -> yes: the program is loaded, the per-order series appear. */
	reload_config(d, conf, traced);
	body = wait_alloc_trace(d, true, mode, sizeof(mode));
	assert_collector(body, "alloc", NULL, mode, sizeof(mode));
	assert_traced_mode("alloc", mode);
	reloads1 = metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"");
	ck_assert_msg(reloads1 == reloads0 + 1, "memwatch_config_reloads_total{result=\"success\"} went from %g to %g",
		      reloads0, reloads1);
	metric_or_fail(body, "memwatch_page_allocation_failures_total", "order=\"0\"");
	metric_or_fail(body, "memwatch_page_allocations_total", "order=\"10\"");
	pages0 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	assert_promtool(body);
	free(body);
	progs = held_alloc_progs(d);
	note("reload to trace = yes: alloc mode %s, %u page_alloc* program(s) held", mode, progs);
	ck_assert_msg(progs > 0, "after the reload to trace = yes, memwatchd holds no BPF program named page_alloc*");

	/* The program counts: pages we allocate show up. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	touch(p, len);
	munmap(p, len);
	body = next_window(d);
	pages1 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	free(body);
	ck_assert_msg(pages1 - pages0 >= (double)(len / 4096),
		      "trace = yes: memwatch_page_allocated_pages_total grew by %.0f while this test touched %zu pages",
		      pages1 - pages0, len / 4096);

	/* yes -> no: the program is unloaded, the series are gone, pages come from /proc/vmstat again. */
	reload_config(d, conf, base);
	body = wait_alloc_trace(d, false, mode, sizeof(mode));
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no, after the reload");
	ck_assert_msg(metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"") == reloads0 + 2,
		      "memwatch_config_reloads_total{result=\"success\"} did not count the second reload");
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0, "after the reload back to trace = no, memwatchd still holds %u BPF program(s) named "
		      "page_alloc*", progs);
	vmstat_pages_in_bracket(d, "trace = no, after the reload");

	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- 5. exhaustion ETA ---- */

#define RAMP_STEP (32 * MiB)
#define RAMP_STEPS 40
#define RAMP_PERIOD_NS 250000000LL
#define RAMP_HORIZON_S 5

struct ramp_report {
	int32_t step; /* steps touched so far; -1 once freed */
	int32_t pad;
	int64_t mono_ns;
};

/* On 'g': touches RAMP_STEP every RAMP_PERIOD_NS, reporting each step; on
 * 'f': frees everything and reports step -1; exits when cmd closes. */
static void ramp_child(const void *unused, int cmd, int rep)
{
	struct ramp_report r = { 0, 0, 0 };
	struct timespec ts;
	int64_t start;
	char c, *p;

	child_init();
	if (read(cmd, &c, 1) != 1)
		_exit(2);
	p = mmap(NULL, RAMP_STEP * RAMP_STEPS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	start = mono_ns();
	for (int i = 0; i < RAMP_STEPS; i++) {
		int64_t next = start + (int64_t)(i + 1) * RAMP_PERIOD_NS;

		touch(p + (size_t)i * RAMP_STEP, RAMP_STEP);
		r.step = i + 1;
		r.mono_ns = mono_ns();
		if (write(rep, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(4);
		ts.tv_sec = next / 1000000000LL;
		ts.tv_nsec = next % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	if (read(cmd, &c, 1) != 1)
		_exit(5);
	munmap(p, RAMP_STEP * RAMP_STEPS);
	r.step = -1;
	r.mono_ns = mono_ns();
	if (write(rep, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(6);
	while (read(cmd, &c, 1) > 0)
		;
	_exit(0);
}

/* Least-squares slope (bytes/s) of MemAvailable read by the test itself,
 * over the samples within [t_end - horizon, t_end] (monotonic ns). */
static double own_slope(const int64_t *t_ns, const double *avail, int n, double t_end, double horizon_s, int *used)
{
	double k = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;

	for (int i = 0; i < n; i++) {
		double x = ((double)t_ns[i] - t_end) / 1e9;

		if (x < -horizon_s || x > 0)
			continue;
		k++;
		sx += x;
		sy += avail[i];
		sxx += x * x;
		sxy += x * avail[i];
	}
	*used = (int)k;
	return k >= 3 ? (k * sxy - sx * sy) / (k * sxx - sx * sx) : NAN;
}

/* Waits (bounded) until MemAvailable holds within 16 MiB for 2 s: the tests
 * before this one leave the host freeing gigabytes of cache and anonymous
 * memory for a while, which a ramp of ~130 MB/s cannot be told apart from
 * (seen in CI: a rising MemAvailable while the child consumed). */
static void wait_memavailable_quiet(void)
{
	const double band = 16.0 * MiB;
	int64_t deadline = mw_mono_ms() + 60000;
	double lo = (double)meminfo_bytes("MemAvailable"), hi = lo;
	int steady = 0;

	while (mw_mono_ms() < deadline) {
		double v;

		mw_sleep_ms(250);
		v = (double)meminfo_bytes("MemAvailable");
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		if (hi - lo > band) {
			lo = hi = v;
			steady = 0;
		} else if (++steady >= 8) {
			note("exhaustion: MemAvailable steady within %.1f MiB for 2 s before the ramp", (hi - lo) / MiB);
			return;
		}
	}
	note("exhaustion: MemAvailable still moving by more than 16 MiB after 60 s; ramping anyway");
}

START_TEST(test_exhaustion_eta)
{
	struct ramp_report reps[RAMP_STEPS], r;
	int64_t own_t[RAMP_STEPS];
	double own_avail[RAMP_STEPS], fit, available;
	int used;
	double slope = NAN, eta = NAN, rate, end, end_mono;
	int n = 0, i0, i1;
	char *body;
	struct mw_daemon *d;
	int cmd, rep, st;
	int64_t deadline;
	pid_t child;
	bool recovered = false;

	ck_assert_msg(meminfo_bytes("MemAvailable") > RAMP_STEP * RAMP_STEPS + 4 * GiB,
		      "MemAvailable is too low for a %llu MiB ramp", RAMP_STEP * RAMP_STEPS / MiB);
	wait_memavailable_quiet();
	d = start_with_config("[daemon]\nwindow = 500ms\n[collector.meminfo]\nexhaustion_horizon = 5s\n");
	child = spawn_child(ramp_child, NULL, &cmd, &rep);

	write_byte(cmd, 'g');
	/* Once the horizon holds nothing but the ramp (plus a window of margin),
	 * read the next window. */
	do {
		read_exact(rep, &reps[n], sizeof(reps[0]), WORKLOAD_TIMEOUT_MS, "a ramp step");
		/* The kernel's MemAvailable, read here too, once per step. */
		own_t[n] = mono_ns();
		own_avail[n++] = (double)meminfo_bytes("MemAvailable");
	} while (n < RAMP_STEPS && reps[n - 1].mono_ns - reps[0].mono_ns < (RAMP_HORIZON_S + 1) * 1000000000LL);
	ck_assert_msg(n <= RAMP_STEPS - 4, "the ramp is too short: %d of %d steps took %.1f s", n, RAMP_STEPS,
		      (double)(reps[n - 1].mono_ns - reps[0].mono_ns) / 1e9);
	body = next_window(d);
	end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	/* The window's end on the monotonic clock the child reports on. */
	end_mono = (double)mono_ns() - (realtime_now() - end) * 1e9;
	slope = metric_or_fail(body, "memwatch_memory_available_slope_bytes_per_second", NULL);
	eta = metric_or_fail(body, "memwatch_memory_exhaustion_eta_seconds", NULL);
	available = metric_or_fail(body, "memwatch_memory_available_bytes", NULL);
	free(body);
	fit = own_slope(own_t, own_avail, n, end_mono, RAMP_HORIZON_S, &used);

	/* The child's actual pace over the horizon that slope was fitted on. */
	while (n < RAMP_STEPS) {
		read_exact(rep, &reps[n], sizeof(reps[0]), WORKLOAD_TIMEOUT_MS, "a ramp step");
		own_t[n] = mono_ns();
		own_avail[n++] = (double)meminfo_bytes("MemAvailable");
	}
	for (i0 = 0; i0 < n - 1 && (double)reps[i0].mono_ns < end_mono - RAMP_HORIZON_S * 1e9; i0++)
		;
	for (i1 = n - 1; i1 > 0 && (double)reps[i1].mono_ns > end_mono; i1--)
		;
	ck_assert_msg(i1 > i0, "no ramp steps within the horizon of the window (%d..%d)", i0, i1);
	rate = (double)(reps[i1].step - reps[i0].step) * (double)RAMP_STEP /
	       ((double)(reps[i1].mono_ns - reps[i0].mono_ns) / 1e9);

	note("exhaustion: slope %.0f B/s, ETA %.1f s; least squares on MemAvailable read here %.0f B/s (%d samples); "
	     "the child consumed %.0f B/s over steps %d..%d of the horizon",
	     slope, eta, fit, used, rate, reps[i0].step, reps[i1].step);
	ck_assert_msg(slope < 0, "memwatch_memory_available_slope_bytes_per_second is %g while a child consumes %.0f "
		      "bytes/s", slope, rate);
	/* The same fit on the kernel's own figure, read at the ramp's steps rather
	 * than at the daemon's 100 ms samples: one step (32 MiB) more or less at
	 * either end of the 5 s horizon moves a fit by about 5%, and the rest of
	 * the host's memory traffic lands in the two sample sets differently
	 * (seen in CI: 21% apart once, within 2% in other runs). */
	ck_assert_msg(used >= 10 && fabs(slope - fit) <= 0.25 * fabs(fit),
		      "memwatch_memory_available_slope_bytes_per_second is %.0f, a least-squares fit of MemAvailable "
		      "read here over the same horizon %.0f B/s (%d samples): more than 25%% apart",
		      slope, fit, used);
	/* The child drives it, but the rest of this shared host moves MemAvailable
	 * too (measured: the host's MemAvailable fell at 74% of the child's pace
	 * while both fits agreed within 2%): its pace only bounds it loosely. */
	ck_assert_msg(-slope >= rate / 2 && -slope <= rate * 2,
		      "memwatch_memory_available_slope_bytes_per_second is %.0f, the child consumed %.0f bytes/s: more "
		      "than a factor of 2 apart",
		      slope, rate);
	/* ETA: exactly the window's available memory at that slope (the slope
	 * itself is held to the test's own fit above). */
	ck_assert_msg(fabs(eta - available / -slope) <= 1e-6 * eta,
		      "memwatch_memory_exhaustion_eta_seconds %.3f, but memwatch_memory_available_bytes %.0f / %.0f B/s "
		      "is %.3f", eta, available, -slope, available / -slope);

	write_byte(cmd, 'f');
	read_exact(rep, &r, sizeof(r), WORKLOAD_TIMEOUT_MS, "the child to free its memory");
	ck_assert_int_eq(r.step, -1);
	/* Bounded: a few windows, at most the horizon and then some. */
	deadline = mw_mono_ms() + (RAMP_HORIZON_S + 5) * 1000;
	while (!recovered && mw_mono_ms() < deadline) {
		body = next_window(d);
		slope = metric_or_fail(body, "memwatch_memory_available_slope_bytes_per_second", NULL);
		eta = metric_or_fail(body, "memwatch_memory_exhaustion_eta_seconds", NULL);
		free(body);
		recovered = slope >= 0 && isinf(eta) && eta > 0;
	}
	ck_assert_msg(recovered, "after the child freed %llu MiB, the slope is %g and the ETA %g (want >= 0 and +Inf)",
		      RAMP_STEP * RAMP_STEPS / MiB, slope, eta);

	close(cmd);
	st = wait_child(child, 10000, "the ramp child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the ramp child ended with status 0x%x", st);
	close(rep);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- runner ---- */

static void add_test(Suite *s, const char *name, const TTest *test, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown_daemons);
	tcase_add_unchecked_fixture(tc, NULL, replay_after_test);
	tcase_set_timeout(tc, timeout);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *collectors_suite(void)
{
	Suite *s = suite_create("collectors");

	add_test(s, "memcg_reclaim", test_memcg_reclaim, 120);
	add_test(s, "cgroup_recreated_same_path", test_cgroup_recreated_same_path, 120);
	add_test(s, "reclaim_top_k_other", test_reclaim_top_k_other, 180);
	add_test(s, "direct_reclaim", test_direct_reclaim, 300);
	add_test(s, "allocs_and_faults", test_allocs_and_faults, 120);
	add_test(s, "faults_exit_between_walks", test_faults_exit_between_walks, 60);
	add_test(s, "faults_restart_reads_fresh", test_faults_restart_reads_fresh, 60);
	add_test(s, "alloc_failures", test_alloc_failures, 120);
	add_test(s, "alloc_vmstat_default", test_alloc_vmstat_default, 120);
	add_test(s, "alloc_trace_reload", test_alloc_trace_reload, 120);
	add_test(s, "exhaustion_eta", test_exhaustion_eta, 120);
	return s;
}

/* perf and attach = tracepoint need tracefs; mounts it when it is not there. */
static int ensure_tracefs(void)
{
	if (access(TRACEFS_DIR "/events", F_OK) == 0)
		return 0;
	if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) < 0)
		return -errno;
	tracefs_mounted_by_us = true;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	SRunner *sr;
	int failed, r;

	if (argc == 4 && strcmp(argv[1], KMEM_HELPER_FLAG) == 0)
		return kmem_failure_helper(argv[2], argv[3]);
	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd collector tests need root (BPF, cgroups, perf): skipping\n");
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
	runner_pid = getpid();
	snprintf(journal_path, sizeof(journal_path), "%s/cleanup.journal", mw_tmp_root());
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	r = ensure_tracefs();
	if (r < 0) {
		fprintf(stderr, "cannot mount tracefs at " TRACEFS_DIR ": %s\n", strerror(-r));
		mw_remove_tmp_root();
		return 99;
	}

	sr = srunner_create(collectors_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	journal_replay();
	if (tracefs_mounted_by_us && umount2(TRACEFS_DIR, 0) < 0)
		fprintf(stderr, "cannot unmount the tracefs we mounted at " TRACEFS_DIR ": %m\n");
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), "*.txt.log");
		fprintf(stderr, "daemon logs and perf output kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
