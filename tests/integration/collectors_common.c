// SPDX-License-Identifier: GPL-2.0
/* The collector tests' shared steps: small readers of /proc and /sys, the
 * cleanup journal, memory cgroups and sparse files, the daemon and its windows
 * bracketed by /proc counters. See collectors.h. */
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

char journal_path[400];
pid_t runner_pid;
bool tracefs_mounted_by_us;

/* ---- small utilities ---- */

double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Monotonic time: bounds waits and measures the workload's own pace, never asserted on by itself. */
int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* What was measured, for the test log: the numbers behind a pass, too. */
__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("collectors: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

unsigned long long read_ull(const char *path)
{
	char *text = mw_read_file(path, NULL);
	unsigned long long v;

	ck_assert_msg(text != NULL, "cannot read %s: %s", path, strerror(errno));
	v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

unsigned long long meminfo_bytes(const char *field)
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

void drop_file(const char *path)
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
void journal_replay(void)
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
void replay_after_test(void)
{
	journal_replay();
}

void on_fatal_signal(int sig)
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

void memcg_path(char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, MEMCG_ROOT "/memwatch-itest-%d%s", (int)getpid(), suffix);
}

void memcg_create(const char *path, unsigned long long limit)
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

void memcg_remove(const char *path)
{
	int r = remove_cgroup(path, 10000);

	ck_assert_msg(r == 0, "cannot remove cgroup %s: %s", path, strerror(-r));
}

/* Joins a v1 memory cgroup; for children, before they touch anything. */
int memcg_join(const char *path)
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
void sparse_create(char *path, size_t len, const char *name, unsigned long long size)
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

void teardown_daemons(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

struct mw_daemon *start_with_config(const char *text)
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
size_t count_series(const char *body, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);

	for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, len) == 0)
			n++;
	return n;
}

double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

/* Scrapes until a window that ended after `after` (seconds since the epoch)
 * is published, for up to timeout_ms (more than a window); returns that
 * scrape, so every value in it is from one window. */
char *wait_window_after_ms(struct mw_daemon *d, double after, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;
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

char *wait_window_after(struct mw_daemon *d, double after)
{
	return wait_window_after_ms(d, after, WINDOW_TIMEOUT_MS);
}

/* The next window, from now on. */
char *next_window(struct mw_daemon *d)
{
	return wait_window_after(d, realtime_now());
}

/* Like wait_window_after(), and brackets the counter `read_counter` around
 * the moment the daemon read its own counters for that window. The daemon
 * takes a window's end timestamp before its collectors run and publishes the
 * window after they ran: so a window that ended after our first read was
 * collected before a second read made once it is published. The first read
 * is timed just before the next window is due, which keeps the bracket
 * narrow; on a busy host it widens instead of the comparison going wrong. */
char *window_bracket(struct mw_daemon *d, double after,
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

void pgalloc_pages(unsigned long long v[BRACKET_COUNTERS])
{
	v[0] = vmstat_sum("pgalloc_");
	v[1] = vmstat_get("pgfree");
	v[2] = 0;
}

/* Every direct reclaim entry counts one allocstall (in the zone it reclaims
 * for); every kswapd wake (mm_vmscan_kswapd_wake) is followed by one
 * balance_pgdat() run, which counts one pageoutrun; every direct compaction
 * that did not skip all zones counts one compact_stall. */
void reclaim_runs(unsigned long long v[BRACKET_COUNTERS])
{
	v[0] = vmstat_sum("allocstall_");
	v[1] = vmstat_get("pageoutrun");
	v[2] = vmstat_get("compact_stall");
}

void assert_collector(const char *body, const char *collector, const char *want_mode, char *mode,
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
void assert_traced_mode(const char *collector, const char *mode)
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
void held_progs(pid_t pid, const char *prefix, unsigned *total, unsigned *matching)
{
	unsigned ids[4096];
	size_t n = mw_held_prog_ids(pid, ids, sizeof(ids) / sizeof(ids[0])), i;

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

void assert_promtool(const char *body)
{
	char *out = NULL;
	int rc = mw_promtool_check(body, strlen(body), &out);

	ck_assert_msg(rc == 0, "promtool check metrics exited %d:\n%s", rc, out ? out : "");
	free(out);
}

/* Checks the _bucket series of histogram `name`: le ascending, counts
 * cumulative (non-decreasing), the +Inf bucket equal to _count. Returns _count. */
double assert_histogram(const char *body, const char *name)
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

void reload_config(struct mw_daemon *d, const char *conf, const char *text)
{
	int r = mw_write_file(conf, text);

	ck_assert_msg(r == 0, "cannot rewrite %s: %s", conf, strerror(-r));
	r = mw_signal(d, SIGHUP);
	ck_assert_msg(r == 0, "SIGHUP to memwatchd: %s", strerror(-r));
}
