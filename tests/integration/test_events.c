// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of the event channel and the collectors that feed it (oom,
 * memavail, reclaim's pressure instants), and of the JSON API, against real
 * memory pressure in v1 memory cgroups on the running kernel. Needs root.
 *
 * Every wait is bounded (polling, never a fixed sleep asserted on). Each test
 * removes what it created: its memory cgroups (named memwatch-ev-<runner
 * pid>-N), its sparse files and the processes it started. A failed assertion
 * ends a test's process at once (check's fork mode): its children die with it
 * (PR_SET_PDEATHSIG), and the runner process sweeps the cgroups and files of
 * its own name prefix after every test case. Processes are only ever
 * signalled by a PID we got from fork(), or listed in a cgroup of our own. */
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
#include "events.h"
#include "helpers.h"

#define MEMCG_ROOT "/sys/fs/cgroup/memory"
#define CG_PREFIX "memwatch-ev-"

#define MiB (1024UL * 1024UL)
#define SPARSE_BYTES (1024UL * MiB)
#define OOM_TOUCH_BYTES (200UL * MiB)
#define CG_LIMIT "64M"

#define TEST_TIMEOUT_SEC 120
#define POLL_TIMEOUT_MS 15000
#define WORKLOAD_TIMEOUT_MS 60000
#define PYTHON_TIMEOUT_MS 30000

/* One event in the ring buffer: struct memwatch_event plus the 8-byte record
 * header (BPF_RINGBUF_HDR_SZ), rounded up to 8 bytes. */
#define RINGBUF_HDR_BYTES 8
#define EVENT_RECORD_BYTES ((sizeof(struct memwatch_event) + RINGBUF_HDR_BYTES + 7) / 8 * 8)
#define SMALL_BUFFER_BYTES 4096

#define OOM_COMM "mwev-oomvictim"
/* A double quote, a backslash, a control character and two bytes that are not UTF-8. */
#define HOSTILE_COMM "mw\"q\\b\x01\xff\xfe"
/* What it must come back as after JSON decoding, as hex of its UTF-8: the
 * invalid bytes become U+FFFD (ef bf bd) each, the rest is unchanged. */
#define HOSTILE_COMM_HEX "6d772271" "5c62" "01" "efbfbd" "efbfbd"

#define PRESSURE "memwatch_pressure_events_total"
#define RECEIVED "memwatch_events_received_total"
#define GATED "memwatch_events_gated_total"
#define DROPPED "memwatch_events_dropped_total"
#define MEMCG_RECLAIMS "memwatch_memcg_reclaim_total"
#define K_MEMCG "kind=\"memcg_reclaim\""
#define CH_RINGBUF "channel=\"ringbuf\""
#define CH_PERFBUF "channel=\"perfbuf\""

/* Loop tests run through both event channels: 0 the ring buffer (what this
 * kernel has), 1 the perf buffer older kernels fall back to (forced with
 * debug_perf_buffer). Each test runs in its own process (check's fork mode). */
static int channel_i;

static const char *kernel_channel(void)
{
	return channel_i ? CH_PERFBUF : CH_RINGBUF;
}
#define CH_CONSUMER "channel=\"consumer\""

static pid_t runner_pid; /* the process that runs main(): names our cgroups and files */

/* ---- small utilities ---- */

static double real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_str(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	close(fd);
	return r;
}

/* ---- what a test creates, undone by teardown (or by the runner's sweep) ---- */

#define MAX_TRACKED 16

struct cg {
	char name[64];
	char path[256];
	char label[80]; /* the cgroup label the daemon gives it: "/name" */
};

static struct cg *tracked_cgs[MAX_TRACKED];
static size_t n_tracked_cgs;
static pid_t tracked_children[MAX_TRACKED];
static size_t n_tracked_children;
static char *tracked_files[MAX_TRACKED];
static size_t n_tracked_files;

static void cg_create(struct cg *cg, const char *limit)
{
	char file[320];
	int n, r;

	ck_assert_msg(n_tracked_cgs < MAX_TRACKED, "too many cgroups");
	for (n = 1; n < 1000; n++) {
		snprintf(cg->name, sizeof(cg->name), CG_PREFIX "%d-%d", (int)runner_pid, n);
		snprintf(cg->path, sizeof(cg->path), MEMCG_ROOT "/%s", cg->name);
		if (mkdir(cg->path, 0755) == 0)
			break;
		ck_assert_msg(errno == EEXIST, "mkdir %s: %s", cg->path, strerror(errno));
	}
	ck_assert_msg(n < 1000, "no free cgroup name");
	tracked_cgs[n_tracked_cgs++] = cg;
	snprintf(cg->label, sizeof(cg->label), "/%s", cg->name);
	snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", cg->path);
	r = write_str(file, limit);
	ck_assert_msg(r == 0, "cannot write %s to %s: %s", limit, file, strerror(-r));
}

static void cg_destroy(struct cg *cg)
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
static char *sparse_file(void)
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

/* ---- workloads in a memory cgroup ---- */

enum workload_kind {
	WL_OOM,  /* touch 200 MiB of anonymous memory */
	WL_DD,   /* dd the sparse file to /dev/null */
	WL_READ, /* read the sparse file ourselves (so that comm is ours), passes times or for min_ms */
};

struct workload {
	enum workload_kind kind;
	const char *file;
	const char *comm;
	int passes;
	int min_ms;
};

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
static pid_t spawn_workload(const struct cg *cg, const struct workload *w)
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
		if (write_str(procs, buf) < 0)
			_exit(125);
		workload_main(w);
	}
	tracked_children[n_tracked_children++] = pid;
	return pid;
}

/* waitpid(WNOHANG): true once the child exited (status stored). */
static bool child_done(pid_t pid, int *status)
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
static int wait_child(pid_t pid, const char *what)
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

static void assert_exited_ok(int st, const char *what)
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
static void teardown(void)
{
	int killed;

	cleanup_test_resources();
	killed = mw_cleanup_all();
	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

/* Runner process, after each test case and at exit: whatever a failed test
 * left behind under our own name prefix. */
static void sweep(void)
{
	char prefix[64], pattern[300];
	struct dirent *de;
	glob_t g;
	DIR *dir;
	size_t i;

	snprintf(prefix, sizeof(prefix), CG_PREFIX "%d-", (int)runner_pid);
	dir = opendir(MEMCG_ROOT);
	if (dir) {
		while ((de = readdir(dir))) {
			char path[320];

			if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), MEMCG_ROOT "/%s", de->d_name);
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

/* As the memavail method: the collector switched off. */
#define MEMAVAIL_OFF "off"

/* The text of a config: window, history and extra [daemon] keys; the memavail
 * method (NULL: auto; MEMAVAIL_OFF: enabled = no). */
static char *config_text(const char *window, int history, const char *daemon_extra, const char *memavail_method)
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

static char *temp_config_full(const char *window, int history, const char *daemon_extra,
			      const char *memavail_method)
{
	char *text = config_text(window, history, daemon_extra, memavail_method), *path;

	path = mw_write_temp_file("memwatchd.conf", text);
	ck_assert_msg(path != NULL, "cannot write a temporary config");
	free(text);
	return path;
}

static char *temp_config(const char *daemon_extra, const char *memavail_method)
{
	return temp_config_full("500ms", 20, daemon_extra, memavail_method);
}

struct series {
	const char *name, *matcher;
};

static struct series memcg_series[] = {
	{ PRESSURE, K_MEMCG }, { RECEIVED, K_MEMCG }, { GATED, K_MEMCG },
	{ DROPPED, CH_RINGBUF }, { MEMCG_RECLAIMS, NULL },
};

/* Starts a loop test on channel i; the daemon logs which one it opened. */
static void use_channel(int i)
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

static struct mw_daemon *start_or_fail(const char *config)
{
	struct mw_daemon *d = mw_start(config, NULL, false);

	ck_assert_msg(d != NULL, "memwatchd with %s did not start serving /metrics (log above)", config);
	assert_channel(d);
	return d;
}

static char *scrape_or_fail(struct mw_daemon *d)
{
	char *body = mw_scrape(d->port);

	ck_assert_msg(body != NULL, "GET /metrics on port %d did not answer 200 (daemon %s)", d->port,
		      mw_running(d) ? "running" : "exited");
	return body;
}

static double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

static void expect_status(struct mw_daemon *d, const char *path, int want)
{
	struct mw_http_response resp;
	int r = mw_http_get(d->port, path, &resp);

	ck_assert_msg(r == 0 && resp.status == want, "GET %s: r=%d status %d, want %d", path, r, resp.status, want);
	mw_http_response_free(&resp);
}

/* GET /metrics 200 with a normal body, /healthz 200, and the process runs. */
static void assert_serving(struct mw_daemon *d, const char *when)
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
static void assert_promtool(struct mw_daemon *d, const char *when)
{
	char *body = scrape_or_fail(d), *out = NULL;
	int rc = mw_promtool_check(body, strlen(body), &out);

	ck_assert_msg(rc == 0, "promtool check metrics %s exited %d:\n%s\non:\n%s", when, rc, out ? out : "", body);
	free(out);
	free(body);
}

/* Scrapes until the window end timestamp moves past what body showed:
 * the next scrape shows a window that ended after body's. */
static char *next_window(struct mw_daemon *d, const char *body)
{
	double t0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL), t = t0;

	ck_assert_msg(mw_poll_metric(d->port, "memwatch_window_end_timestamp_seconds", NULL, POLL_TIMEOUT_MS,
				     mw_pred_gt, t0, &t),
		      "no new window after %f", t0);
	return scrape_or_fail(d);
}


/* Scrapes window after window until every series holds the same value in two
 * consecutive windows (the workload and the consumer are done). */
static char *scrape_settled(struct mw_daemon *d, const struct series *s, size_t n)
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

/* ---- JSON, checked by a real parser: python3's json module ---- */

/* Strict: the body must be UTF-8, JSON without NaN/Infinity, and with no raw
 * control characters in strings (json's default strict mode). */
#define PY_LOAD                                                                   \
	"import json, sys\n"                                                      \
	"def bad(c):\n"                                                           \
	"    raise ValueError('non-standard JSON constant ' + c)\n"               \
	"d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'), parse_constant=bad)\n"

/* argv: file kind pid. The events of that kind and pid, fields of the first. */
static const char py_events[] = PY_LOAD
	"ev = d['events']\n"
	"assert isinstance(ev, list)\n"
	"for e in ev:\n"
	"    assert isinstance(e['kind'], str) and isinstance(e['pid'], int) and isinstance(e['comm'], str)\n"
	"m = [e for e in ev if e['kind'] == sys.argv[2] and e['pid'] == int(sys.argv[3])]\n"
	"print('total=%d' % len(ev))\n"
	"print('n=%d' % len(m))\n"
	"if m:\n"
	"    e = m[0]\n"
	"    print('pid=%d' % e['pid'])\n"
	"    print('comm_hex=%s' % e['comm'].encode('utf-8').hex())\n"
	"    print('cgroup_hex=%s' % e['cgroup'].encode('utf-8').hex())\n"
	"    print('timestamp=%.6f' % e['timestamp'])\n"
	"    a = e['available_bytes']\n"
	"    print('available=%s' % ('null' if a is None else '%.0f' % a))\n"
	"    print('source=%s' % e['available_source'])\n";

/* argv: file metric. Per window: has all keys, seq, start, end, value and delta of the metric's first sample. */
static const char py_windows[] = PY_LOAD
	"ws = d['windows']\n"
	"assert isinstance(ws, list)\n"
	"print('n=%d' % len(ws))\n"
	"nan = float('nan')\n"
	"for i, w in enumerate(ws):\n"
	"    keys = all(k in w for k in ('seq', 'start', 'end', 'available_bytes', 'metrics')) and \\\n"
	"        isinstance(w['available_bytes'], dict) and isinstance(w['metrics'], dict)\n"
	"    s = w.get('metrics', {}).get(sys.argv[2], [])\n"
	"    v = s[0].get('value') if s else None\n"
	"    dl = s[0].get('delta') if s else None\n"
	"    print('w%d=%d %d %.6f %.6f %.17g %.17g' % (i, keys, w.get('seq', -1), w.get('start', 0), w.get('end', 0),\n"
	"          nan if v is None else v, nan if dl is None else dl))\n";

/* Runs python3 -c script file args... on body; its stdout+stderr in *out. Returns the exit status. */
static int run_python(const char *script, const char *body, size_t len, const char *const *args, char **out)
{
	static unsigned seq;
	char in_path[300], out_path[300];
	const char *argv[16];
	int64_t deadline = mw_mono_ms() + PYTHON_TIMEOUT_MS;
	int fd, ofd, st = -1;
	size_t n = 0;
	pid_t pid;

	*out = NULL;
	snprintf(in_path, sizeof(in_path), "%s/json.%d.%u", mw_tmp_root(), (int)getpid(), seq);
	snprintf(out_path, sizeof(out_path), "%s/python.%d.%u", mw_tmp_root(), (int)getpid(), seq++);
	fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "cannot create %s", in_path);
	ck_assert(write(fd, body, len) == (ssize_t)len);
	close(fd);
	ofd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(ofd >= 0, "cannot create %s", out_path);

	argv[n++] = "python3";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n++] = in_path;
	for (; args && *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (dup2(ofd, STDOUT_FILENO) < 0 || dup2(ofd, STDERR_FILENO) < 0)
			_exit(127);
		setenv("PYTHONIOENCODING", "utf-8", 1);
		execvp("python3", (char *const *)argv);
		dprintf(STDERR_FILENO, "exec python3: %m\n");
		_exit(127);
	}
	close(ofd);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		mw_sleep_ms(10);
	}
	*out = mw_read_file(out_path, NULL);
	if (!*out)
		*out = strdup("");
	unlink(in_path);
	unlink(out_path);
	return st;
}

/* GETs path (200 expected) and runs script on the body; fails unless it parses. */
static char *json_fields(struct mw_daemon *d, const char *path, const char *script, const char *const *args)
{
	struct mw_http_response resp;
	char ctype[128], *out;
	int r = mw_http_get(d->port, path, &resp), st;

	ck_assert_msg(r == 0 && resp.status == 200, "GET %s: r=%d status %d", path, r, resp.status);
	ck_assert_msg(mw_http_header(&resp, "Content-Type", ctype, sizeof(ctype)) &&
			      strncmp(ctype, "application/json", 16) == 0,
		      "GET %s: Content-Type is not application/json", path);
	st = run_python(script, resp.body, resp.body_len, args, &out);
	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "python3's json does not accept GET %s (status 0x%x):\n%s\nbody (%zu bytes):\n%.4000s", path, st, out,
		      resp.body_len, resp.body);
	mw_http_response_free(&resp);
	return out;
}

/* The value of a "key=value" line of the script's output. */
static bool field(const char *out, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(buf, len, "%.*s", (int)strcspn(p + klen + 1, "\n"), p + klen + 1);
			return true;
		}
	return false;
}

static long long field_int(const char *out, const char *key)
{
	char buf[64], *end;
	long long v;

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "no %s= in python's output:\n%s", key, out);
	v = strtoll(buf, &end, 10);
	ck_assert_msg(end != buf && *end == '\0', "%s=%s is not a number", key, buf);
	return v;
}

static void hex_of(const char *s, char *buf, size_t len)
{
	size_t i, o = 0;

	for (i = 0; s[i] && o + 3 <= len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", (unsigned char)s[i]);
	buf[o] = '\0';
}

struct window_row {
	int keys;
	long long seq;
	double start, end, value, delta;
};

/* Parses the rows py_windows printed; returns how many windows there were. */
static size_t window_rows(const char *out, struct window_row *rows, size_t max)
{
	size_t n = (size_t)field_int(out, "n"), i;

	ck_assert_msg(n <= max, "%zu windows, more than %zu", n, max);
	for (i = 0; i < n; i++) {
		char key[16], line[512];

		snprintf(key, sizeof(key), "w%zu", i);
		ck_assert_msg(field(out, key, line, sizeof(line)), "no %s= in:\n%s", key, out);
		ck_assert_msg(sscanf(line, "%d %lld %lf %lf %lf %lf", &rows[i].keys, &rows[i].seq, &rows[i].start,
				     &rows[i].end, &rows[i].value, &rows[i].delta) == 6,
			      "cannot parse %s=%s", key, line);
	}
	return n;
}

/* Windows oldest first, consecutive, each complete; every counter delta is the
 * change since the previous window, so the deltas after the first add up to
 * the counter's growth from the first to the last returned window. Returns
 * the growth over all returned windows (including the first one's delta). */
static double check_window_rows(const struct window_row *w, size_t n, const char *out)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		ck_assert_msg(w[i].keys == 1, "window %zu lacks seq, start, end, available_bytes or metrics:\n%s", i,
			      out);
		ck_assert_msg(w[i].start < w[i].end, "window %zu: start %f is not before end %f", i, w[i].start,
			      w[i].end);
		ck_assert_msg(!isnan(w[i].value), "window %zu has no " MEMCG_RECLAIMS ":\n%s", i, out);
		ck_assert_msg(!isnan(w[i].delta), "window %zu has no delta for " MEMCG_RECLAIMS ":\n%s", i, out);
		if (i > 0) {
			ck_assert_msg(w[i].seq == w[i - 1].seq + 1, "window seqs %lld, %lld are not consecutive",
				      w[i - 1].seq, w[i].seq);
			ck_assert_msg(w[i].start >= w[i - 1].start, "windows out of order:\n%s", out);
			ck_assert_msg(w[i].delta == w[i].value - w[i - 1].value,
				      "window %lld: delta %.0f but the counter went %.0f -> %.0f", w[i].seq, w[i].delta,
				      w[i - 1].value, w[i].value);
			sum += w[i].delta;
		}
	}
	ck_assert_msg(n == 0 || sum == w[n - 1].value - w[0].value,
		      "deltas after the first window sum to %.0f, the counter grew by %.0f", sum,
		      w[n - 1].value - w[0].value);
	return n ? sum + w[0].delta : 0;
}

/* ---- the kernel's own count of BPF program runs (BPF_ENABLE_STATS) ---- */

/* Turns run counting on for as long as the returned fd stays open (no sysctl
 * to restore afterwards). */
static int bpf_stats_on(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	ck_assert_msg(fd >= 0, "BPF_ENABLE_STATS: %s", strerror(errno));
	return fd;
}

/* run_cnt of the BPF program named name (the kernel keeps 15 characters)
 * that process pid holds, through an fd of the program or of a link to it. */
static unsigned long long prog_run_cnt(pid_t pid, const char *name)
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

/* The program on vmscan:mm_vmscan_memcg_reclaim_begin: each of its runs is one
 * memcg reclaim pressure instant (tp_btf, the mode this host attaches). */
#define MEMCG_BEGIN_PROG "memcg_begin_btf"
/* The same for direct reclaim and OOM kills (oom:mark_victim). */
#define DIRECT_BEGIN_PROG "direct_begin_btf"
#define MARK_VICTIM_PROG "mark_victim_btf"

/* ---- 1. memcg OOM kill ---- */

static void oom_kill_run(void)
{
	char *conf = temp_config(NULL, "procfs"), *body, *out, matcher[160], buf[256], want_hex[64], pidstr[16];
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_OOM, .comm = OOM_COMM };
	double k0, k1, last = NAN, cg_kills = NAN, t_before, t_after, ts, avail_before, avail_after;
	struct cg cg;
	pid_t pid;
	int st;

	body = scrape_or_fail(d);
	k0 = metric_or_fail(body, "memwatch_oom_kills_total", "scope=\"memcg\"");
	if (k0 == 0)
		ck_assert_msg(!mw_metric(body, "memwatch_last_oom_kill_timestamp_seconds", NULL, NULL, NULL, 0),
			      "memwatch_last_oom_kill_timestamp_seconds present before any OOM kill");
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"oom\",state=\"active\"", NULL, NULL, 0),
		      "oom collector not active:\n%s", body);
	free(body);

	cg_create(&cg, CG_LIMIT);
	avail_before = (double)mw_proc_meminfo_kb("MemAvailable") * 1024;
	t_before = real_now();
	pid = spawn_workload(&cg, &w);
	st = wait_child(pid, "the OOM workload");
	t_after = real_now();
	avail_after = (double)mw_proc_meminfo_kb("MemAvailable") * 1024;
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		      "the workload touching 200 MiB in a 64 MiB cgroup was not SIGKILLed: status 0x%x", st);

	ck_assert_msg(mw_poll_metric(d->port, "memwatch_oom_kills_total", "scope=\"memcg\"", POLL_TIMEOUT_MS, mw_pred_gt, k0, &k1),
		      "memwatch_oom_kills_total stayed at %g after the kill", k0);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", cg.label);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_oom_kills_total", matcher, POLL_TIMEOUT_MS, mw_pred_eq,
				     1.0, &cg_kills),
		      "memwatch_cgroup_oom_kills_total{%s} is %g, want 1", matcher, cg_kills);
	/* Exactly one: still one a couple of windows later. */
	body = scrape_or_fail(d);
	free(next_window(d, body));
	free(body);
	body = scrape_or_fail(d);
	k1 = metric_or_fail(body, "memwatch_oom_kills_total", "scope=\"memcg\"");
	ck_assert_msg(k1 == k0 + 1, "memwatch_oom_kills_total went %g -> %g, want exactly one more", k0, k1);
	ck_assert(metric_or_fail(body, "memwatch_cgroup_oom_kills_total", matcher) == 1.0);
	last = metric_or_fail(body, "memwatch_last_oom_kill_timestamp_seconds", NULL);
	ck_assert_msg(last >= t_before - 2 && last <= t_after + 2,
		      "memwatch_last_oom_kill_timestamp_seconds %.3f is not within 2 s of the kill (%.3f .. %.3f)", last,
		      t_before, t_after);
	free(body);

	/* The event, with the victim's pid, comm and cgroup. */
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = json_fields(d, "/api/v1/events", py_events, (const char *const[]){ "oom_kill", pidstr, NULL });
	ck_assert_msg(field_int(out, "n") == 1, "want exactly one oom_kill event with pid %d:\n%s", (int)pid, out);
	ck_assert(field_int(out, "pid") == pid);
	hex_of(OOM_COMM, want_hex, sizeof(want_hex));
	ck_assert(field(out, "comm_hex", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, want_hex) == 0, "oom_kill comm is hex %s, want %s (" OOM_COMM ")", buf, want_hex);
	hex_of(cg.label, want_hex, sizeof(want_hex));
	ck_assert(field(out, "cgroup_hex", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, want_hex) == 0, "oom_kill cgroup is hex %s, want %s (%s)", buf, want_hex, cg.label);
	ck_assert(field(out, "timestamp", buf, sizeof(buf)));
	ts = strtod(buf, NULL);
	ck_assert_msg(ts >= t_before - 2 && ts <= t_after + 2, "oom_kill event at %.6f, the kill was %.3f .. %.3f", ts,
		      t_before, t_after);
	ck_assert(field(out, "source", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, "procfs") == 0, "oom_kill available_source '%s', want procfs", buf);
	ck_assert(field(out, "available", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, "null") != 0, "oom_kill event without available_bytes");
	{
		/* procfs: the daemon's last 100 ms sample of MemAvailable before the
		 * kill. Between the test's reads around the workload, the victim
		 * held at most its cgroup's limit (64 MiB, plus its page tables);
		 * 16 MiB more for the rest of an otherwise idle machine. */
		double got = strtod(buf, NULL), lo = fmin(avail_before, avail_after) - (64 + 16) * (double)MiB,
		       hi = fmax(avail_before, avail_after) + 16 * (double)MiB;

		ck_assert_msg(got >= lo && got <= hi,
			      "oom_kill available_bytes %.0f, MemAvailable was %.0f before and %.0f after the workload", got,
			      avail_before, avail_after);
	}
	free(out);

	assert_promtool(d, "after an OOM kill");
	cg_destroy(&cg);
	assert_serving(d, "after an OOM kill");
	mw_assert_clean_stop(d);
	free(conf);
}
START_TEST(test_oom_kill)
{
	use_channel(_i);
	oom_kill_run();
}
END_TEST

/* ---- 2. paused consumer, flooded buffer ---- */



START_TEST(test_pause_and_flood)
{
	const double fits = (double)(SMALL_BUFFER_BYTES / EVENT_RECORD_BYTES);
	char *conf = temp_config("event_gate = 0\nevent_buffer_bytes = 4096\ndebug_pause_events = yes\n", "procfs");
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_DD };
	double drop0, drop1, drop2, recv1, recv2, press0, press1, press2, v = NAN;
	bool promtool_done = false;
	int st, scrapes = 0;
	char *body;
	struct cg cg;
	pid_t pid;

	body = scrape_or_fail(d);
	drop0 = metric_or_fail(body, DROPPED, kernel_channel());
	press0 = metric_or_fail(body, PRESSURE, K_MEMCG);
	free(body);
	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();

	/* Storm 1, nobody draining: the 4 KiB buffer fills and the kernel counts drops. */
	pid = spawn_workload(&cg, &w);
	while (!child_done(pid, &st)) {
		ck_assert_msg(scrapes < 100000, "storm never ended");
		body = scrape_or_fail(d);
		v = metric_or_fail(body, RECEIVED, K_MEMCG);
		ck_assert_msg(v <= fits, "received %g memcg_reclaim events while paused, more than fit in 4 KiB (%g)", v,
			      fits);
		free(body);
		assert_serving(d, "during a storm with the consumer paused");
		if (!promtool_done) {
			assert_promtool(d, "during a storm with the consumer paused");
			promtool_done = true;
		}
		scrapes++;
		mw_sleep_ms(20);
	}
	assert_exited_ok(st, "dd in the 64 MiB cgroup");
	ck_assert_msg(mw_poll_metric(d->port, DROPPED, kernel_channel(), POLL_TIMEOUT_MS, mw_pred_gt, drop0, &v),
		      "memwatch_events_dropped_total{channel=\"ringbuf\"} stayed at %g with the consumer paused", v);
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	drop1 = metric_or_fail(body, DROPPED, kernel_channel());
	recv1 = metric_or_fail(body, RECEIVED, K_MEMCG);
	press1 = metric_or_fail(body, PRESSURE, K_MEMCG);
	ck_assert_msg(recv1 <= fits, "received %g memcg_reclaim events while paused (at most %g fit)", recv1, fits);
	ck_assert_msg(press1 - press0 > fits, "only %g memcg reclaim instants in the storm: not a flood",
		      press1 - press0);
	ck_assert_msg(drop1 - drop0 >= press1 - press0 - fits,
		      "%g instants, at most %g buffered, but only %g dropped", press1 - press0, fits, drop1 - drop0);
	ck_assert_msg(metric_or_fail(body, DROPPED, CH_CONSUMER) == 0, "consumer drops with a ring buffer:\n%s", body);
	free(body);
	assert_serving(d, "after a storm with the consumer paused");
	assert_promtool(d, "after a storm with the consumer paused");

	/* Resume draining. */
	body = config_text("500ms", 20, "event_gate = 0\nevent_buffer_bytes = 4096\ndebug_pause_events = no\n",
			   "procfs");
	ck_assert_int_eq(mw_write_file(conf, body), 0);
	free(body);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_config_reloads_total", "result=\"success\"", POLL_TIMEOUT_MS,
				     mw_pred_eq, 1.0, &v),
		      "memwatch_config_reloads_total{result=\"success\"} is %g after SIGHUP", v);
	/* The events that waited in the buffer are taken now. */
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	recv1 = metric_or_fail(body, RECEIVED, K_MEMCG);
	drop1 = metric_or_fail(body, DROPPED, kernel_channel());
	press1 = metric_or_fail(body, PRESSURE, K_MEMCG);
	free(body);

	/* Storm 2, drained: most events arrive, drops (possible with 4 KiB) stay few. */
	pid = spawn_workload(&cg, &w);
	st = wait_child(pid, "dd in the 64 MiB cgroup (second storm)");
	assert_exited_ok(st, "dd in the 64 MiB cgroup (second storm)");
	ck_assert_msg(mw_poll_metric(d->port, RECEIVED, K_MEMCG, POLL_TIMEOUT_MS, mw_pred_gt, recv1 + 49, &v),
		      "memwatch_events_received_total{kind=\"memcg_reclaim\"} went %g -> %g in a drained storm, want +50",
		      recv1, v);
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	recv2 = metric_or_fail(body, RECEIVED, K_MEMCG);
	drop2 = metric_or_fail(body, DROPPED, kernel_channel());
	press2 = metric_or_fail(body, PRESSURE, K_MEMCG);
	ck_assert_msg(recv2 - recv1 >= 50, "received grew by %g, want at least 50", recv2 - recv1);
	ck_assert_msg(drop2 - drop1 < recv2 - recv1,
		      "draining, yet more dropped (%g) than received (%g) in the second storm", drop2 - drop1,
		      recv2 - recv1);
	ck_assert_msg(drop2 - drop1 <= (drop1 - drop0) / 2,
		      "draining, yet %g dropped in the second storm (%g in the paused one)", drop2 - drop1,
		      drop1 - drop0);
	fprintf(stderr, "pause and flood: paused storm %g instants, %g dropped; drained storm %g instants, %g received, %g dropped\n",
		press1 - press0, drop1 - drop0, press2 - press1, recv2 - recv1, drop2 - drop1);
	/* Every instant is accounted for: received, or dropped (no gate). */
	ck_assert_msg(press2 - press1 == (recv2 - recv1) + (drop2 - drop1),
		      "second storm: %g instants != %g received + %g dropped", press2 - press1, recv2 - recv1,
		      drop2 - drop1);
	free(body);
	assert_serving(d, "after a drained storm");
	assert_promtool(d, "after a drained storm");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- 3. available memory at pressure ---- */

static void collector_info(const char *body, const char *collector, char *state, char *mode, char *reason,
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

/* The figure carried by pressure instants, computed in BPF (the counters
 * method, allowed to run however far it is from /proc/meminfo), against the
 * same arithmetic done here on /proc/zoneinfo and /proc/vmstat; and against
 * MemAvailable too while the two agree on this kernel (zone-counters-agree). */
static void memavail_at_pressure_run(void)
{
	char *conf = temp_config(NULL, "counters\ncounters_tolerance = 100%"), *body, state[512], mode[512],
	     reason[512];
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_DD };
	double press0, press = NAN, at = NAN, by_hand = NAN, meminfo = NAN;
	double hand_min = INFINITY, hand_max = 0, info_min = INFINITY, info_max = 0;
	int n_hand = 0;
	unsigned long long runs0, runs = 0;
	bool found = false, equal = false, agree = false;
	int attempt, st, stats_fd;
	int64_t deadline;
	struct cg cg;

	body = scrape_or_fail(d);
	collector_info(body, "memavail", state, mode, reason, sizeof(state));
	ck_assert_msg(strcmp(state, "active") == 0 && strcmp(mode, "counters") == 0,
		      "memavail with method = counters, counters_tolerance = 100%%: state %s, mode %s, reason '%s'",
		      state, mode, reason);
	free(body);
	stats_fd = bpf_stats_on();
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	runs0 = prog_run_cnt(d->pid, MEMCG_BEGIN_PROG);
	press0 = metric_or_fail(body, PRESSURE, K_MEMCG);
	free(body);
	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();

	/* Some window of a storm carries the lowest available memory at a pressure instant. */
	for (attempt = 0; attempt < 3 && !found; attempt++) {
		pid_t pid = spawn_workload(&cg, &w);
		int64_t stop_at = INT64_MAX;

		deadline = mw_mono_ms() + WORKLOAD_TIMEOUT_MS;
		while (!found && mw_mono_ms() < stop_at && mw_mono_ms() < deadline) {
			/* The rest of the host moves memory meanwhile: the same figure,
			 * worked out here all through the storm, brackets it. */
			by_hand = mw_memavail_by_hand();
			agree = mw_zone_counters_agree(NULL, &meminfo) && (n_hand == 0 || agree);
			hand_min = fmin(hand_min, by_hand);
			hand_max = fmax(hand_max, by_hand);
			info_min = fmin(info_min, meminfo);
			info_max = fmax(info_max, meminfo);
			n_hand++;
			body = scrape_or_fail(d);
			if (mw_metric(body, "memwatch_memory_available_at_pressure_bytes", NULL, &at, NULL, 0))
				found = true;
			free(body);
			if (stop_at == INT64_MAX && child_done(pid, &st)) {
				assert_exited_ok(st, "dd in the 64 MiB cgroup");
				stop_at = mw_mono_ms() + 3000; /* a few more windows for the last one to show */
			}
			mw_sleep_ms(20);
		}
		if (stop_at == INT64_MAX)
			assert_exited_ok(wait_child(pid, "dd in the 64 MiB cgroup"), "dd in the 64 MiB cgroup");
	}
	ck_assert_msg(found, "no window with memwatch_memory_available_at_pressure_bytes in 3 storms");
	fprintf(stderr, "memavail: at pressure %.0f (counters, in BPF); during the storm, by hand from "
			"/proc/zoneinfo %.0f .. %.0f, MemAvailable %.0f .. %.0f (%d reads; zone-counters-agree: %s)\n",
		at, hand_min, hand_max, info_min, info_max, n_hand, agree ? "yes" : "no");
	/* 1%: the page counters move between one read of /proc and the next. */
	ck_assert_msg(at >= 0.99 * hand_min && at <= 1.01 * hand_max,
		      "memwatch_memory_available_at_pressure_bytes %.0f is outside si_mem_available worked out from "
		      "/proc/zoneinfo and /proc/vmstat all through the storm (%.0f .. %.0f)",
		      at, hand_min, hand_max);
	if (agree)
		ck_assert_msg(at >= 0.99 * info_min && at <= 1.01 * info_max,
			      "memwatch_memory_available_at_pressure_bytes %.0f is outside MemAvailable during the storm "
			      "(%.0f .. %.0f)",
			      at, info_min, info_max);

	/* Each run of the memcg reclaim begin program is one pressure instant. */
	deadline = mw_mono_ms() + POLL_TIMEOUT_MS;
	while (!equal && mw_mono_ms() < deadline) {
		body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
		runs = prog_run_cnt(d->pid, MEMCG_BEGIN_PROG) - runs0;
		press = metric_or_fail(body, PRESSURE, K_MEMCG) - press0;
		free(body);
		equal = press == (double)runs;
	}
	close(stats_fd);
	ck_assert_msg(equal, "pressure_events_total{memcg_reclaim} grew by %g, the kernel ran " MEMCG_BEGIN_PROG
		      " %llu times", press, runs);
	ck_assert_msg(runs >= 100, "only %llu memcg reclaims in the storm(s)", runs);
	assert_promtool(d, "after a storm");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
START_TEST(test_memavail_at_pressure)
{
	use_channel(_i);
	memavail_at_pressure_run();
}
END_TEST

START_TEST(test_memavail_methods)
{
	char *conf_fexit = temp_config(NULL, "fexit"), *conf_auto = temp_config(NULL, NULL), *body;
	char state[512], mode[512], reason[512];
	struct mw_daemon *d;

	/* This host has no fentry: fexit alone cannot work, the daemon runs on without it. */
	d = start_or_fail(conf_fexit);
	body = scrape_or_fail(d);
	collector_info(body, "memavail", state, mode, reason, sizeof(state));
	ck_assert_msg(strcmp(state, "degraded") == 0, "memavail with method = fexit: state %s (reason '%s')", state,
		      reason);
	ck_assert_msg(strstr(reason, "si_mem_available") != NULL, "memavail degraded, reason '%s'", reason);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"oom\",state=\"active\"", NULL, NULL, 0),
		      "oom collector not active next to a degraded memavail:\n%s", body);
	free(body);
	assert_serving(d, "with memavail method = fexit");
	assert_promtool(d, "with memavail method = fexit");
	mw_assert_clean_stop(d);

	/* auto goes on to the counters method, which is used only when it agreed
	 * with /proc/meminfo at start-up; otherwise procfs, saying why. */
	d = start_or_fail(conf_auto);
	body = scrape_or_fail(d);
	/* Which, on this kernel, the expectation table says (condition zone-counters-agree). */
	mw_assert_collector_expected(body, "memavail", NULL);
	collector_info(body, "memavail", state, mode, reason, sizeof(state));
	if (strcmp(mode, "procfs") == 0)
		ck_assert_msg(strstr(reason, "apart (over 2%)") != NULL, "memavail degraded, reason '%s'", reason);
	fprintf(stderr, "memavail: method = auto on this host: %s, %s\n", mode, state);
	free(body);
	assert_serving(d, "with memavail method = auto");
	mw_assert_clean_stop(d);
	free(conf_fexit);
	free(conf_auto);
}
END_TEST

/* The counters method: its figure against the same arithmetic done here, and
 * against /proc/meminfo; whether it is used follows from the second; pressure
 * events carry its figure when it is. */
START_TEST(test_memavail_counters)
{
	char *conf = temp_config(NULL, "counters"), *body, *out = NULL, state[512], mode[512], reason[512], pid[32], src[64];
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_DD };
	double computed, by_hand, meminfo, reserve, ratio, best_hand = INFINITY, best_meminfo = INFINITY;
	bool in_use;
	int i;
	pid_t child;
	struct cg cg;

	body = scrape_or_fail(d);
	collector_info(body, "memavail", state, mode, reason, sizeof(state));
	/* In use exactly when the figure agrees with MemAvailable on this kernel
	 * now, which the test works out itself (the daemon decided at start-up). */
	in_use = mw_zone_counters_agree(NULL, NULL);
	ck_assert_msg(in_use == (strcmp(mode, "counters") == 0),
		      "memavail method = counters: mode %s (reason '%s'), yet the zone counters %s MemAvailable here",
		      mode, reason, in_use ? "agree with" : "disagree with");
	if (in_use)
		ck_assert_msg(strcmp(state, "active") == 0, "memavail counters: %s (reason '%s')", state, reason);
	else
		ck_assert_msg(strcmp(state, "degraded") == 0 && strcmp(mode, "procfs") == 0 &&
				      strstr(reason, "method = counters: computed from zone and node counters") &&
				      strstr(reason, "apart (over 2%)"),
			      "memavail counters not used: state %s, mode %s, reason '%s'", state, mode, reason);
	reserve = metric_or_fail(body, "memwatch_memavail_total_reserve_bytes", NULL);
	ck_assert_msg(reserve > 0, "total reserve %.0f", reserve);
	metric_or_fail(body, "memwatch_memavail_reserve_refreshes_total", NULL);
	free(body);

	/* Memory moves while we read: the closest of ten windows. */
	body = scrape_or_fail(d);
	for (i = 0; i < 10; i++) {
		char *next = next_window(d, body);

		free(body);
		body = next;
		by_hand = mw_memavail_by_hand();
		meminfo = (double)mw_proc_meminfo_kb("MemAvailable") * 1024.0;
		computed = metric_or_fail(body, "memwatch_memory_available_computed_bytes", NULL);
		ratio = metric_or_fail(body, "memwatch_memavail_counters_error_ratio", NULL);
		/* The daemon read MemAvailable at the window's end, the test just
		 * after the window was published: on an idle machine it moves by
		 * less than 0.5 % of itself in between. */
		ck_assert_msg(fabs(ratio - fabs(computed - meminfo) / meminfo) <= 0.005,
			      "memwatch_memavail_counters_error_ratio %.5f, but |computed - MemAvailable| / MemAvailable "
			      "is %.5f (computed %.0f, MemAvailable %.0f)",
			      ratio, fabs(computed - meminfo) / meminfo, computed, meminfo);
		best_hand = fmin(best_hand, fabs(computed - by_hand) / by_hand);
		best_meminfo = fmin(best_meminfo, fabs(computed - meminfo) / meminfo);
	}
	free(body);
	fprintf(stderr, "memavail counters: %s; closest to the zoneinfo/vmstat arithmetic %.3f%%, to MemAvailable %.3f%%\n",
		mode, best_hand * 100, best_meminfo * 100);
	ck_assert_msg(best_hand <= 0.01, "computed in BPF is %.2f%% off the same arithmetic on /proc/zoneinfo and /proc/vmstat",
		      best_hand * 100);
	if (in_use)
		ck_assert_msg(best_meminfo <= 0.02, "counters in use, but %.2f%% off MemAvailable", best_meminfo * 100);

	/* Writing min_free_kbytes sets the watermarks up again, even with the same
	 * value (which changes nothing on the host): the reserve is re-read. */
	if (strcmp(state, "active") == 0) {
		char *text = mw_read_file("/proc/sys/vm/min_free_kbytes", NULL);
		double refreshes0, refreshes = 0;

		ck_assert(text != NULL);
		body = scrape_or_fail(d);
		refreshes0 = metric_or_fail(body, "memwatch_memavail_reserve_refreshes_total", NULL);
		free(body);
		ck_assert_int_eq(write_str("/proc/sys/vm/min_free_kbytes", text), 0);
		ck_assert_msg(mw_poll_metric(d->port, "memwatch_memavail_reserve_refreshes_total", NULL, POLL_TIMEOUT_MS,
					     mw_pred_gt, refreshes0, &refreshes),
			      "min_free_kbytes written (%s): reserve_refreshes_total stayed %g", text, refreshes0);
		body = scrape_or_fail(d);
		ck_assert(metric_or_fail(body, "memwatch_memavail_total_reserve_bytes", NULL) == reserve);
		free(body);
		free(text);
	}

	/* Memcg reclaim in a 64 MiB cgroup: its pressure instants carry the computed figure. */
	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();
	child = spawn_workload(&cg, &w);
	assert_exited_ok(wait_child(child, "dd in the 64 MiB cgroup"), "dd in the 64 MiB cgroup");
	snprintf(pid, sizeof(pid), "%d", (int)child);
	for (i = 0; i < 50; i++) {
		out = json_fields(d, "/api/v1/events", py_events, (const char *const[]){ "memcg_reclaim", pid, NULL });
		if (field_int(out, "n") > 0)
			break;
		free(out);
		out = NULL;
		mw_sleep_ms(100);
	}
	ck_assert_msg(out != NULL, "no memcg_reclaim event of dd (pid %s)", pid);
	ck_assert(field(out, "source", src, sizeof(src)));
	ck_assert_msg(strcmp(src, in_use ? "counters" : "procfs") == 0, "memcg_reclaim event: available_source %s, mode %s",
		      src, mode);
	ck_assert_msg(field_int(out, "available") > 0, "memcg_reclaim event: no available memory:\n%s", out);
	free(out);
	cg_destroy(&cg);
	assert_promtool(d, "with memavail method = counters");
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* A computation that does not agree is not used: with counters_tolerance = 0
 * any difference refuses it, and the collector falls back to procfs, saying
 * why, while the figure stays visible. A bad tolerance is a config error. */
START_TEST(test_memavail_counters_refused)
{
	char *conf = temp_config(NULL, "counters\ncounters_tolerance = 0"), *body, *out = NULL, *err = NULL, *log;
	char *bad = temp_config_full("500ms", 20, NULL, "counters\ncounters_tolerance = 120%");
	char state[512], mode[512], reason[512];
	struct mw_daemon *d;
	int st;

	st = mw_run((const char *const[]){ "--check", "-c", bad, NULL }, &out, &err);
	ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2, "counters_tolerance = 120%%: status 0x%x", st);
	ck_assert_msg(strstr(err, bad) && strstr(err, "counters_tolerance") && strstr(err, "120%"),
		      "counters_tolerance = 120%% not reported with file and key: %s", err);
	free(out);
	free(err);

	d = start_or_fail(conf);
	body = scrape_or_fail(d);
	collector_info(body, "memavail", state, mode, reason, sizeof(state));
	if (strcmp(mode, "counters") == 0) {
		/* Exactly equal at start-up: possible on a still machine, and then right. */
		log = mw_log(d);
		ck_assert_msg(log && strstr(log, "(0% apart"), "counters in use with tolerance 0:\n%s", log);
		fprintf(stderr, "memavail: counters agreed exactly at start-up; fallback not exercised\n");
		free(log);
	} else {
		ck_assert_msg(strcmp(mode, "procfs") == 0 && strcmp(state, "degraded") == 0 &&
				      strstr(reason, "method = counters: computed from zone and node counters") &&
				      strstr(reason, "apart (over 0%)") && strstr(reason, "reading /proc/meminfo"),
			      "memavail with counters_tolerance = 0: state %s, mode %s, reason '%s'", state, mode, reason);
		metric_or_fail(body, "memwatch_memory_available_computed_bytes", NULL);
		metric_or_fail(body, "memwatch_memavail_counters_error_ratio", NULL);
		fprintf(stderr, "memavail: refused: %s\n", reason);
	}
	free(body);
	assert_serving(d, "with the counters method refused");
	mw_assert_clean_stop(d);
	free(conf);
	free(bad);
}
END_TEST

/* ---- 3b. pressure instants without memavail ---- */

/* The pressure instants are the event channel's: with memavail switched off
 * they are still exported for every kind, each the kernel's count of the runs
 * of the program that reports it (bpf_stats), and events carry no figure of
 * available memory. */
START_TEST(test_pressure_without_memavail)
{
	static const struct {
		const char *kind, *prog; /* prog NULL: no program reports it (alloc trace = no) */
	} kinds[] = {
		{ "direct_reclaim", DIRECT_BEGIN_PROG },
		{ "memcg_reclaim", MEMCG_BEGIN_PROG },
		{ "oom_kill", MARK_VICTIM_PROG },
		{ "alloc_failure", NULL },
	};
	struct series settled[] = {
		{ PRESSURE, "kind=\"direct_reclaim\"" }, { PRESSURE, K_MEMCG }, { PRESSURE, "kind=\"oom_kill\"" },
		{ "memwatch_oom_kills_total", "scope=\"memcg\"" },
	};
	char *conf = temp_config("event_gate = 1s\n", MEMAVAIL_OFF), *body, *out, matcher[64], pidstr[16], buf[64];
	struct mw_daemon *d = start_or_fail(conf);
	struct workload reader = { .kind = WL_READ, .passes = 4 }, hog = { .kind = WL_OOM, .comm = OOM_COMM };
	unsigned long long runs0[4] = { 0 }, runs;
	double press0[4], press, kills0 = NAN;
	char state[64], mode[64], reason[256];
	size_t k;
	int stats_fd, st;
	struct cg cg;
	pid_t pid;

	body = scrape_or_fail(d);
	collector_info(body, "memavail", state, mode, reason, sizeof(state));
	ck_assert_msg(strcmp(state, "disabled") == 0, "memavail with enabled = no: state %s", state);
	ck_assert_msg(metric_or_fail(body, "memwatch_collector_up", "collector=\"memavail\"") == 0,
		      "memavail switched off, yet up:\n%s", body);
	free(body);

	stats_fd = bpf_stats_on();
	body = scrape_settled(d, settled, sizeof(settled) / sizeof(settled[0]));
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		snprintf(matcher, sizeof(matcher), "kind=\"%s\"", kinds[k].kind);
		press0[k] = metric_or_fail(body, PRESSURE, matcher);
		if (kinds[k].prog)
			runs0[k] = prog_run_cnt(d->pid, kinds[k].prog);
	}
	kills0 = metric_or_fail(body, "memwatch_oom_kills_total", "scope=\"memcg\"");
	free(body);

	/* Memory cgroup reclaim, then one OOM kill, in a 64 MiB cgroup. */
	cg_create(&cg, CG_LIMIT);
	reader.file = sparse_file();
	pid = spawn_workload(&cg, &reader);
	st = wait_child(pid, "the reading workload");
	assert_exited_ok(st, "the reading workload");
	pid = spawn_workload(&cg, &hog);
	st = wait_child(pid, "the OOM workload");
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		      "the workload touching 200 MiB in a 64 MiB cgroup was not SIGKILLed: status 0x%x", st);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_oom_kills_total", "scope=\"memcg\"", POLL_TIMEOUT_MS, mw_pred_gt, kills0,
				     NULL),
		      "memwatch_oom_kills_total stayed at %g after the kill", kills0);

	body = scrape_settled(d, settled, sizeof(settled) / sizeof(settled[0]));
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		snprintf(matcher, sizeof(matcher), "kind=\"%s\"", kinds[k].kind);
		press = metric_or_fail(body, PRESSURE, matcher) - press0[k];
		runs = kinds[k].prog ? prog_run_cnt(d->pid, kinds[k].prog) - runs0[k] : 0;
		fprintf(stderr, "without memavail: %s grew by %g, %s ran %llu times\n", kinds[k].kind, press,
			kinds[k].prog ? kinds[k].prog : "no program", runs);
		ck_assert_msg(press == (double)runs, "memavail off: " PRESSURE "{%s} grew by %g, the kernel ran %s %llu times",
			      kinds[k].kind, press, kinds[k].prog ? kinds[k].prog : "no program", runs);
	}
	close(stats_fd);
	ck_assert_msg(press0[1] + 1 <= metric_or_fail(body, PRESSURE, K_MEMCG),
		      "no memcg reclaim instant in the storm: the test proves nothing");
	ck_assert_msg(!mw_metric(body, "memwatch_memory_available_at_pressure_bytes", NULL, NULL, NULL, 0),
		      "memavail off, yet memwatch_memory_available_at_pressure_bytes:\n%s", body);
	free(body);

	/* The kill's event is there, without a figure of available memory. */
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = json_fields(d, "/api/v1/events", py_events, (const char *const[]){ "oom_kill", pidstr, NULL });
	ck_assert_msg(field_int(out, "n") == 1, "want exactly one oom_kill event with pid %d:\n%s", (int)pid, out);
	ck_assert(field(out, "source", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, "none") == 0, "memavail off: oom_kill available_source '%s', want none", buf);
	ck_assert(field(out, "available", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, "null") == 0, "memavail off: oom_kill available_bytes %s, want null", buf);
	free(out);

	assert_promtool(d, "with memavail switched off");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- 4. the rate gate ---- */

static void rate_gate_run(void)
{
	char *conf = temp_config("event_gate = 1s\n", "procfs"), *body;
	struct mw_daemon *d = start_or_fail(conf);
	struct workload w = { .kind = WL_READ, .passes = 40, .min_ms = 3000 };
	double recv0, gated0, press0, dropped0, consumer0, recv, gated, press, dropped, consumer, storm_s;
	unsigned long long runs0, runs;
	int stats_fd;
	bool promtool_done = false;
	int64_t t0, t1;
	struct cg cg;
	pid_t pid;
	int st;

	stats_fd = bpf_stats_on();
	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	runs0 = prog_run_cnt(d->pid, MEMCG_BEGIN_PROG);
	recv0 = metric_or_fail(body, RECEIVED, K_MEMCG);
	gated0 = metric_or_fail(body, GATED, K_MEMCG);
	press0 = metric_or_fail(body, PRESSURE, K_MEMCG);
	dropped0 = metric_or_fail(body, DROPPED, kernel_channel());
	consumer0 = metric_or_fail(body, DROPPED, CH_CONSUMER);
	free(body);
	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();

	/* A storm of a few seconds (passes over the file until 3 s have gone by). */
	t0 = mw_mono_ms();
	pid = spawn_workload(&cg, &w);
	while (!child_done(pid, &st)) {
		ck_assert_msg(mw_mono_ms() - t0 < WORKLOAD_TIMEOUT_MS, "storm did not end");
		if (!promtool_done && mw_mono_ms() - t0 > 500) {
			assert_promtool(d, "during a gated storm");
			promtool_done = true;
		}
		mw_sleep_ms(20);
	}
	t1 = mw_mono_ms();
	assert_exited_ok(st, "the reading workload");
	storm_s = ceil((double)(t1 - t0) / 1000.0);

	body = scrape_settled(d, memcg_series, sizeof(memcg_series) / sizeof(memcg_series[0]));
	runs = prog_run_cnt(d->pid, MEMCG_BEGIN_PROG) - runs0;
	close(stats_fd);
	recv = metric_or_fail(body, RECEIVED, K_MEMCG);
	gated = metric_or_fail(body, GATED, K_MEMCG);
	press = metric_or_fail(body, PRESSURE, K_MEMCG) - press0;
	dropped = metric_or_fail(body, DROPPED, kernel_channel()) - dropped0;
	consumer = metric_or_fail(body, DROPPED, CH_CONSUMER) - consumer0;
	fprintf(stderr, "rate gate: %g s storm, %g received, %g gated, %g dropped, %g instants; the kernel ran "
			MEMCG_BEGIN_PROG " %llu times\n",
		storm_s, recv - recv0, gated - gated0, dropped, press, runs);
	ck_assert_msg(recv - recv0 <= storm_s + 2,
		      "event_gate = 1s, yet %g memcg_reclaim events passed in a %g s storm (at most %g)", recv - recv0,
		      storm_s, storm_s + 2);
	ck_assert_msg(recv - recv0 >= 1, "no memcg_reclaim event passed the gate at all");
	ck_assert_msg(gated - gated0 >= 100, "only %g events gated in a %g s storm", gated - gated0, storm_s);
	/* The kernel's count of the program's runs (bpf_stats), not the daemon's
	 * own sum: every run is one instant, which passed, was gated or dropped. */
	ck_assert_msg(press == (double)runs,
		      "pressure_events_total{memcg_reclaim} grew by %g, the kernel ran " MEMCG_BEGIN_PROG " %llu times",
		      press, runs);
	ck_assert_msg((recv - recv0) + (gated - gated0) + dropped + consumer == (double)runs,
		      "received %g + gated %g + dropped %g + %g != %llu runs of " MEMCG_BEGIN_PROG, recv - recv0,
		      gated - gated0, dropped, consumer, runs);
	free(body);
	assert_promtool(d, "after a gated storm");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
START_TEST(test_rate_gate)
{
	use_channel(_i);
	rate_gate_run();
}
END_TEST

/* ---- 5. JSON under hostile input ---- */

#define HOSTILE_HISTORY 12

START_TEST(test_json_hostile)
{
	char *conf = temp_config_full("250ms", HOSTILE_HISTORY, "event_gate = 0\n", "procfs");
	struct mw_daemon *d;
	struct workload w = { .kind = WL_READ, .passes = 1, .comm = HOSTILE_COMM };
	struct window_row rows[HOSTILE_HISTORY + 2];
	char *body, *out, pidstr[16], buf[256];
	double growth;
	size_t n;
	struct cg cg;
	pid_t pid;
	int st;

	d = start_or_fail(conf);

	/* Without arguments: every window kept, which is at most history. Wait
	 * until more windows have passed than are kept, so the ring is full. */
	body = scrape_or_fail(d);
	for (;;) {
		char *next;

		out = json_fields(d, "/api/v1/windows", py_windows, (const char *const[]){ MEMCG_RECLAIMS, NULL });
		n = window_rows(out, rows, HOSTILE_HISTORY + 2);
		ck_assert_msg(n >= 1 && n <= HOSTILE_HISTORY, "/api/v1/windows gave %zu windows, history = %d", n,
			      HOSTILE_HISTORY);
		free(out);
		if (rows[n - 1].seq > HOSTILE_HISTORY + 1)
			break;
		next = next_window(d, body);
		free(body);
		body = next;
	}
	free(body);
	ck_assert_msg(n == HOSTILE_HISTORY, "/api/v1/windows gave %zu windows after more than %d, want %d", n,
		      HOSTILE_HISTORY, HOSTILE_HISTORY);

	cg_create(&cg, CG_LIMIT);
	w.file = sparse_file();
	pid = spawn_workload(&cg, &w);
	st = wait_child(pid, "the hostile-comm workload");
	assert_exited_ok(st, "the hostile-comm workload");
	body = scrape_or_fail(d);
	free(next_window(d, body));
	free(body);

	/* Windows covering the storm: oldest first, consecutive, deltas consistent. */
	{
		char path[64];

		snprintf(path, sizeof(path), "/api/v1/windows?windows=%d", HOSTILE_HISTORY - 1);
		out = json_fields(d, path, py_windows, (const char *const[]){ MEMCG_RECLAIMS, NULL });
		n = window_rows(out, rows, HOSTILE_HISTORY + 2);
		ck_assert_msg(n == HOSTILE_HISTORY - 1, "?windows=%d gave %zu windows", HOSTILE_HISTORY - 1, n);
		growth = check_window_rows(rows, n, out);
		ck_assert_msg(growth > 0, "no memcg reclaim in the %zu windows after a storm:\n%s", n, out);
		free(out);
	}
	out = json_fields(d, "/api/v1/windows?windows=2", py_windows, (const char *const[]){ MEMCG_RECLAIMS, NULL });
	n = window_rows(out, rows, HOSTILE_HISTORY + 2);
	ck_assert_msg(n == 2, "?windows=2 gave %zu windows:\n%s", n, out);
	check_window_rows(rows, n, out);
	free(out);
	expect_status(d, "/api/v1/windows?windows=0", 400);
	expect_status(d, "/api/v1/windows?windows=abc", 400);

	/* The hostile comm round-trips, invalid bytes as U+FFFD. */
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = json_fields(d, "/api/v1/events", py_events, (const char *const[]){ "memcg_reclaim", pidstr, NULL });
	ck_assert_msg(field_int(out, "n") >= 1, "no memcg_reclaim event of pid %d:\n%s", (int)pid, out);
	ck_assert(field(out, "comm_hex", buf, sizeof(buf)));
	ck_assert_msg(strcmp(buf, HOSTILE_COMM_HEX) == 0, "comm came back as hex %s, want %s", buf, HOSTILE_COMM_HEX);
	ck_assert(field(out, "cgroup_hex", buf, sizeof(buf)));
	{
		char want[128];

		hex_of(cg.label, want, sizeof(want));
		ck_assert_msg(strcmp(buf, want) == 0, "memcg_reclaim cgroup hex %s, want %s (%s)", buf, want, cg.label);
	}
	free(out);
	/* The same comm is a label of the per-process reclaim series. */
	assert_promtool(d, "with a hostile comm in the labels");

	assert_serving(d, "after the JSON checks");
	cg_destroy(&cg);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_unchecked_fixture(tc, NULL, sweep);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	return tc;
}

static Suite *events_suite(void)
{
	Suite *s = suite_create("memwatchd-events");
	TCase *tc;

	tc = tcase("oom");
	tcase_add_loop_test(tc, test_oom_kill, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase("channel");
	tcase_add_test(tc, test_pause_and_flood);
	tcase_add_loop_test(tc, test_rate_gate, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase("memavail");
	tcase_add_loop_test(tc, test_memavail_at_pressure, 0, 2);
	tcase_add_test(tc, test_memavail_methods);
	tcase_add_test(tc, test_memavail_counters);
	tcase_add_test(tc, test_memavail_counters_refused);
	tcase_add_test(tc, test_pressure_without_memavail);
	suite_add_tcase(s, tc);

	tc = tcase("json");
	tcase_add_test(tc, test_json_hostile);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd event tests need root (BPF, memory cgroups): skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (access(MEMCG_ROOT "/memory.limit_in_bytes", F_OK) < 0) {
		fprintf(stderr, "no v1 memory controller at %s: skipping\n", MEMCG_ROOT);
		return 77;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	sr = srunner_create(events_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	sweep();
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
