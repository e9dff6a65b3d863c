// SPDX-License-Identifier: GPL-2.0
/* The two human interfaces of memwatchd, end to end: the status page at GET /
 * rendered by a real browser (headless Chromium: screenshot and DOM), with a
 * process whose name is markup; and `memwatchd --top` in a real terminal
 * (a private tmux server), against a live daemon and an unreachable one, with
 * a process whose name is a terminal escape sequence. Needs root (the daemon
 * loads BPF; the cgroup test writes /sys/fs/cgroup); without it, exits 77.
 * Chromium and tmux are required, not optional: without them the tests fail
 * and say which Debian package is missing.
 *
 * Every test is bounded and undoes what it creates. A failed assertion ends
 * a test's process at once (check's fork mode), so each resource (cgroup,
 * file, tmux server) is written to a journal before it is created, and the
 * runner process replays the journal after every test. Processes a test
 * starts die with it (PR_SET_PDEATHSIG) and are only ever signalled by the
 * PID (or process group) it got from fork(). */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "helpers.h"

#ifndef CHROMIUM_PATH
#define CHROMIUM_PATH "/usr/bin/chromium"
#endif
#ifndef TMUX_PATH
#define TMUX_PATH "/usr/bin/tmux"
#endif

#define MEMCG_V1_ROOT "/sys/fs/cgroup/memory"
#define CGROUP_V2_ROOT "/sys/fs/cgroup"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define TEST_TIMEOUT_SEC 150
#define CHROMIUM_TIMEOUT_MS 90000
#define TMUX_TIMEOUT_MS 10000
#define SCREEN_TIMEOUT_MS 20000
#define EXIT_TIMEOUT_MS 5000
#define PAGE_TIMEOUT_MS 30000

#define SCREEN_COLS 80
#define SCREEN_LINES 24

/* 15 bytes: all of it fits in a task's comm. */
#define MARKUP_NAME "<script>alert(1"
#define MARKUP_ESCAPED "&lt;script&gt;alert(1"
/* ESC [ 2 J (erase the screen), then a marker. */
#define ESCAPE_NAME "\x1b[2Jmwpwn"
#define ESCAPE_SHOWN "?[2Jmwpwn"

/* 500 ms windows; every series of the faults collector, so that the test's own
 * processes are exported whatever else runs on the host. */
static const char ui_config[] = "# memwatchd UI tests\n"
				"[daemon]\n"
				"window = 500ms\n"
				"\n"
				"[collector.memavail]\n"
				"method = procfs\n"
				"\n"
				"[collector.faults]\n"
				"top_k = 1000\n";

static char journal_path[400];
static pid_t runner_pid;

/* ---- small utilities ---- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	close(fd);
	return (size_t)n == strlen(text) ? 0 : -EIO;
}

/* A required program: the UI tests never skip for want of one. */
static void require_program(const char *path, const char *package)
{
	ck_assert_msg(access(path, X_OK) == 0,
		      "%s is missing (%s): install the Debian package '%s'; the UI tests need it and do not skip without "
		      "it",
		      path, strerror(errno), package);
}

static char *strcasestr_n(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return (char *)hay;
	return NULL;
}

/* ---- the journal of what a test created ---- */

static void journal_add(const char *kind, const char *what)
{
	FILE *f = fopen(journal_path, "ae");

	ck_assert_msg(f != NULL, "cannot open the journal %s: %s", journal_path, strerror(errno));
	fprintf(f, "%s %s\n", kind, what);
	ck_assert_msg(fclose(f) == 0, "cannot write the journal %s", journal_path);
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
	int64_t deadline = mono_ms() + timeout_ms;

	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || mono_ms() >= deadline)
			return -errno;
		mw_sleep_ms(50);
	}
}

/* `tmux -L name kill-server`, bounded; the server's panes get SIGHUP from it. */
static void tmux_kill_server(const char *name)
{
	pid_t pid = fork();
	int64_t deadline = mono_ms() + TMUX_TIMEOUT_MS;
	int st;

	if (pid < 0)
		return;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(TMUX_PATH, TMUX_PATH, "-L", name, "kill-server", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		mw_sleep_ms(20);
	}
}

/* Undoes everything in the journal that a test did not undo itself: tmux
 * servers first (their panes may be reading), then files, then cgroups. */
static void journal_replay(void)
{
	static char buf[16384];
	static const char *const kinds[] = { "tmux ", "file ", "cgroup " };
	size_t k;
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
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char *line, *next;

		for (line = buf; line && *line; line = next) {
			char *nl = strchr(line, '\n');
			size_t kl = strlen(kinds[k]);

			next = nl ? nl + 1 : NULL;
			if (nl)
				*nl = '\0';
			if (strncmp(line, kinds[k], kl) == 0) {
				const char *what = line + kl;

				if (k == 0)
					tmux_kill_server(what);
				else if (k == 1)
					drop_file(what);
				else if (remove_cgroup(what, 10000) < 0)
					fprintf(stderr, "cleanup: cannot remove cgroup %s: %s\n", what, strerror(errno));
			}
			if (nl)
				*nl = '\n';
		}
	}
	unlink(journal_path);
}

static void replay_after_test(void)
{
	journal_replay();
}

static void on_fatal_signal(int sig)
{
	if (getpid() == runner_pid)
		journal_replay();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the daemon ---- */

static void teardown_daemons(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

static struct mw_daemon *start_ui_daemon(void)
{
	char *conf = mw_write_temp_file("memwatchd.conf", ui_config);
	struct mw_daemon *d;

	ck_assert_msg(conf != NULL, "cannot write a temporary config");
	d = mw_start(conf, NULL, false);
	free(conf);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics (log above)");
	return d;
}

static char *get_page(struct mw_daemon *d)
{
	struct mw_http_response resp;
	char *body;
	int r = mw_http_get(d->port, "/", &resp);

	ck_assert_msg(r == 0 && resp.status == 200, "GET / on port %d: r=%d status %d", d->port, r, resp.status);
	body = resp.body;
	resp.body = NULL;
	mw_http_response_free(&resp);
	return body;
}

/* "Window 0.5 s, N windows shown" on the status page. */
static size_t windows_shown(const char *html)
{
	const char *p = strstr(html, "<p>Window ");
	double w;
	size_t n;

	if (!p || sscanf(p, "<p>Window %lf s, %zu windows shown", &w, &n) != 2)
		return 0;
	return n;
}

/* Polls GET / until it holds at least min_windows windows and every needle. */
static char *wait_page(struct mw_daemon *d, size_t min_windows, const char *const *needles, int timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;

	for (;;) {
		char *html = get_page(d);
		bool ok = windows_shown(html) >= min_windows;
		const char *const *n;

		for (n = needles; ok && n && *n; n++)
			ok = strstr(html, *n) != NULL;
		if (ok)
			return html;
		if (mono_ms() >= deadline) {
			fprintf(stderr, "---- GET / at the time limit ----\n%s\n----\n", html);
			free(html);
			return NULL;
		}
		free(html);
		mw_sleep_ms(250);
	}
}

/* Every collector the daemon reports, from memwatch_collector_info in /metrics. */
static size_t collectors_of(struct mw_daemon *d, char names[][64], size_t max)
{
	char *body = mw_scrape(d->port), *line, *save = NULL;
	size_t n = 0;

	ck_assert_msg(body != NULL, "GET /metrics failed");
	for (line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char labels[1024];
		const char *open = line + strlen("memwatch_collector_info{"), *close;

		if (strncmp(line, "memwatch_collector_info{", strlen("memwatch_collector_info{")) != 0)
			continue;
		close = strrchr(line, '}');
		if (!close || close < open || (size_t)(close - open) >= sizeof(labels) || n == max)
			continue;
		memcpy(labels, open, (size_t)(close - open));
		labels[close - open] = '\0';
		if (mw_label(labels, "collector", names[n], sizeof(names[n])))
			n++;
	}
	free(body);
	return n;
}

/* ---- processes the tests start ---- */

enum work { WORK_TOUCH, WORK_READ };

static void touch_forever(void)
{
	const size_t len = 32 * MiB;
	const struct timespec pause = { .tv_nsec = 20 * 1000000L };

	for (;;) {
		volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t i;

		if (m == MAP_FAILED)
			_exit(4);
		/* Small pages: one minor fault per 4 KiB touched. */
		madvise((void *)m, len, MADV_NOHUGEPAGE);
		for (i = 0; i < len; i += 4096)
			m[i] = 1;
		munmap((void *)m, len);
		nanosleep(&pause, NULL);
	}
}

/* Reads a sparse file (bigger than the cgroup's limit) round and round: every
 * read fills the page cache, so the cgroup reclaims all the time. */
static void read_forever(const char *path)
{
	const size_t chunk = MiB;
	const struct timespec pause = { .tv_nsec = 2 * 1000000L };
	char *buf = malloc(chunk);
	off_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0)
		_exit(5);
	for (;;) {
		ssize_t n = pread(fd, buf, chunk, off);

		if (n < 0)
			_exit(6);
		off = n == 0 ? 0 : off + n;
		if (off % (16 * MiB) == 0)
			nanosleep(&pause, NULL);
	}
}

/* Forks a worker called name (its comm), in cgroup procs_file if given, and
 * waits until it has its name and cgroup. It dies with the test. */
static pid_t spawn_worker(const char *name, enum work work, const char *procs_file, const char *file)
{
	pid_t parent = getpid(), pid;
	struct pollfd pfd;
	char ok = 0, comm_path[64], *comm;
	int p[2];

	ck_assert_msg(pipe2(p, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char self[32];

		close(p[0]);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		if (prctl(PR_SET_NAME, name) < 0)
			_exit(2);
		snprintf(self, sizeof(self), "%d", (int)getpid());
		if (procs_file && write_text(procs_file, self) < 0)
			_exit(3);
		if (write(p[1], "r", 1) != 1)
			_exit(7);
		close(p[1]);
		if (work == WORK_TOUCH)
			touch_forever();
		read_forever(file);
		_exit(0);
	}
	close(p[1]);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (poll(&pfd, 1, 10000) == 1 && read(p[0], &ok, 1) != 1)
		ok = 0;
	close(p[0]);
	if (ok != 'r') {
		int st = 0;

		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ck_abort_msg("worker '%s' did not start (status 0x%x: 2 = PR_SET_NAME, 3 = joining %s)", name, st,
			     procs_file ? procs_file : "-");
	}
	snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)pid);
	comm = mw_read_file(comm_path, NULL);
	ck_assert_msg(comm && strncmp(comm, name, strlen(name)) == 0 && comm[strlen(name)] == '\n',
		      "worker %d is called '%s', not '%s'", (int)pid, comm ? comm : "?", name);
	free(comm);
	return pid;
}

static void stop_worker(pid_t pid)
{
	int st;

	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "worker %d ended by itself (status 0x%x)", (int)pid,
		      st);
}

/* ---- running Chromium ---- */

/* Runs argv in a process group of its own, stdout and stderr to files, at
 * most timeout_ms; whatever is left of the group afterwards (browser helper
 * processes) is killed by its group id. Returns the wait status, or -1 when
 * the bound was hit. */
static int run_bounded(const char *const *argv, const char *out_path, const char *err_path, const char *home,
		       int timeout_ms)
{
	pid_t parent = getpid(), pid;
	int64_t deadline = mono_ms() + timeout_ms;
	int st = -1;

	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		sigset_t none;

		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		if (in < 0 || out < 0 || err < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
		    dup2(err, STDERR_FILENO) < 0)
			_exit(126);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (home) {
			/* Nothing of the browser's lands in root's real home. */
			setenv("HOME", home, 1);
			setenv("XDG_CONFIG_HOME", home, 1);
			setenv("XDG_CACHE_HOME", home, 1);
			setenv("XDG_DATA_HOME", home, 1);
		}
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			st = -1;
			break;
		}
		if (mono_ms() >= deadline) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			st = -1;
			break;
		}
		mw_sleep_ms(50);
	}
	kill(-pid, SIGKILL);
	return st;
}

/* chromium --headless ... <what> URL with a fresh profile; returns the path of
 * its stdout (malloc'd); asserts it exited 0. */
static char *chromium(int port, const char *what, const char *tag)
{
	char profile[400], out[450], err[450], url[64], *tail;
	char user_data[450];
	const char *argv[32];
	size_t n = 0;
	int st;

	snprintf(profile, sizeof(profile), "%s/chromium-%s.XXXXXX", mw_tmp_root(), tag);
	ck_assert_msg(mkdtemp(profile) != NULL, "mkdtemp %s: %s", profile, strerror(errno));
	snprintf(user_data, sizeof(user_data), "--user-data-dir=%s", profile);
	snprintf(out, sizeof(out), "%s.stdout", profile);
	snprintf(err, sizeof(err), "%s.stderr", profile);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	argv[n++] = CHROMIUM_PATH;
	argv[n++] = "--headless";
	argv[n++] = "--no-sandbox";
	argv[n++] = "--disable-gpu";
	argv[n++] = "--disable-background-networking";
	argv[n++] = "--disable-component-update";
	argv[n++] = "--disable-sync";
	argv[n++] = "--no-first-run";
	argv[n++] = user_data;
	argv[n++] = what;
	argv[n++] = "--window-size=900,1600";
	argv[n++] = url;
	argv[n] = NULL;

	st = run_bounded(argv, out, err, profile, CHROMIUM_TIMEOUT_MS);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		tail = mw_read_file(err, NULL);
		fprintf(stderr, "---- chromium %s stderr ----\n%s\n----\n", what, tail ? tail : "");
		free(tail);
	}
	ck_assert_msg(st != -1, "chromium %s %s did not finish within %d ms (killed)", what, url, CHROMIUM_TIMEOUT_MS);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "chromium %s %s ended with status 0x%x (stderr above)", what,
		      url, st);
	return strdup(out);
}

/* ---- PNG ---- */

struct png_info {
	uint32_t width, height;
	size_t idat_bytes;
	unsigned idat_byte_values; /* distinct byte values in the compressed image data */
	size_t colors;             /* distinct RGB colours */
	double top_share;          /* share of the most frequent colour (the background) */
	size_t near[2];            /* pixels close to the two series colours asked for */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static bool near_color(const unsigned char *px, uint32_t rgb)
{
	int i;

	for (i = 0; i < 3; i++)
		if (abs((int)px[i] - (int)((rgb >> (16 - 8 * i)) & 0xff)) > 24)
			return false;
	return true;
}

/* Walks the chunks (CRCs checked), inflates and unfilters the image (8-bit
 * RGB or RGBA, not interlaced) and counts its colours. NULL or the reason. */
static const char *png_analyze(const unsigned char *buf, size_t len, const uint32_t want[2], struct png_info *info)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char *idat = NULL, *raw = NULL, *prev, *cur, *bitmap = NULL;
	bool seen[256] = { false }, ihdr = false, iend = false;
	unsigned bpp = 0, *counts = NULL, top = 0;
	size_t pos = 8, stride = 0, y, x;
	uLongf raw_len;
	const char *why = NULL;

	memset(info, 0, sizeof(*info));
	if (len < 8 || memcmp(buf, sig, 8) != 0)
		return "no PNG signature";
	while (!iend) {
		uint32_t clen, crc;
		const unsigned char *type, *data;

		if (len - pos < 12)
			return "truncated chunk";
		clen = be32(buf + pos);
		if (clen > len - pos - 12)
			return "chunk longer than the file";
		type = buf + pos + 4;
		data = type + 4;
		crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), type, clen + 4);
		if (crc != be32(data + clen)) {
			why = "chunk CRC mismatch";
			goto out;
		}
		if (!ihdr && memcmp(type, "IHDR", 4) != 0) {
			why = "first chunk is not IHDR";
			goto out;
		}
		if (memcmp(type, "IHDR", 4) == 0) {
			if (clen != 13 || ihdr) {
				why = "bad IHDR";
				goto out;
			}
			ihdr = true;
			info->width = be32(data);
			info->height = be32(data + 4);
			if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[10] || data[11] || data[12]) {
				why = "not 8-bit RGB/RGBA, non-interlaced";
				goto out;
			}
			bpp = data[9] == 6 ? 4 : 3;
			if (!info->width || !info->height || info->width > 10000 || info->height > 10000) {
				why = "implausible size";
				goto out;
			}
			stride = (size_t)info->width * bpp;
		} else if (memcmp(type, "IDAT", 4) == 0) {
			unsigned char *more = realloc(idat, info->idat_bytes + clen + 1);

			if (!more) {
				why = "out of memory";
				goto out;
			}
			idat = more;
			memcpy(idat + info->idat_bytes, data, clen);
			info->idat_bytes += clen;
			for (x = 0; x < clen; x++)
				seen[data[x]] = true;
		} else if (memcmp(type, "IEND", 4) == 0) {
			iend = true;
		}
		pos += 12 + clen;
	}
	if (pos != len) {
		why = "bytes after IEND";
		goto out;
	}
	for (x = 0; x < 256; x++)
		info->idat_byte_values += seen[x];
	if (!info->idat_bytes) {
		why = "no image data";
		goto out;
	}
	raw_len = (uLongf)((stride + 1) * info->height);
	raw = malloc(raw_len + 1);
	bitmap = calloc(1, 1u << 21); /* one bit per 24-bit colour */
	counts = calloc(1u << 18, sizeof(*counts)); /* 6 bits a channel: #fafafa is not #ffffff */
	if (!raw || !bitmap || !counts) {
		why = "out of memory";
		goto out;
	}
	if (uncompress(raw, &raw_len, idat, info->idat_bytes) != Z_OK || raw_len != (stride + 1) * info->height) {
		why = "image data does not inflate to width x height";
		goto out;
	}
	prev = NULL;
	for (y = 0; y < info->height; y++) {
		unsigned char filter = raw[y * (stride + 1)];

		cur = raw + y * (stride + 1) + 1;
		if (filter > 4) {
			why = "bad scanline filter";
			goto out;
		}
		for (x = 0; x < stride; x++) {
			int a = x >= bpp ? cur[x - bpp] : 0, b = prev ? prev[x] : 0;
			int c = prev && x >= bpp ? prev[x - bpp] : 0, v = cur[x];

			switch (filter) {
			case 1: v += a; break;
			case 2: v += b; break;
			case 3: v += (a + b) / 2; break;
			case 4: v += paeth(a, b, c); break;
			default: break;
			}
			cur[x] = (unsigned char)v;
		}
		for (x = 0; x < stride; x += bpp) {
			uint32_t rgb = (uint32_t)cur[x] << 16 | (uint32_t)cur[x + 1] << 8 | cur[x + 2];
			unsigned q = (cur[x] >> 2) << 12 | (cur[x + 1] >> 2) << 6 | cur[x + 2] >> 2;

			if (!(bitmap[rgb >> 3] & (1u << (rgb & 7)))) {
				bitmap[rgb >> 3] |= (unsigned char)(1u << (rgb & 7));
				info->colors++;
			}
			counts[q]++;
			info->near[0] += near_color(cur + x, want[0]);
			info->near[1] += near_color(cur + x, want[1]);
		}
		prev = cur;
	}
	for (x = 0; x < 1u << 18; x++)
		if (counts[x] > top)
			top = counts[x];
	info->top_share = (double)top / ((double)info->width * info->height);
out:
	free(idat);
	free(raw);
	free(bitmap);
	free(counts);
	if (!why && !ihdr)
		why = "no IHDR";
	return why;
}

/* ---- the rendered DOM ---- */

/* The tag starting at p ("<name ..."), copied without the brackets. */
static bool tag_text(const char *p, char *buf, size_t len)
{
	const char *end = strchr(p, '>');

	if (!end || (size_t)(end - p) >= len)
		return false;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return true;
}

static bool attr(const char *tag, const char *name, char *buf, size_t len)
{
	char key[64];
	const char *p, *end;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(tag, key);
	if (!p)
		return false;
	p += strlen(key);
	end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= len)
		return false;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return true;
}

/* Coordinate pairs "x,y x,y ..." inside the chart's viewBox; -1 if malformed. */
static int point_pairs(const char *points)
{
	const char *p = points;
	int n = 0;

	for (;;) {
		char *end;
		double x, y;

		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		x = strtod(p, &end);
		if (end == p || *end != ',')
			return -1;
		p = end + 1;
		y = strtod(p, &end);
		if (end == p || (*end && *end != ' '))
			return -1;
		p = end;
		if (!isfinite(x) || !isfinite(y) || x < 0 || x > 720 || y < 0 || y > 150)
			return -1;
		n++;
	}
}

struct dom_info {
	int chart_svgs;
	int polylines;       /* class="series" */
	int drawn_polylines; /* ... with at least two points */
	bool available_drawn, allocated_drawn;
};

static void analyze_dom(const char *dom, struct dom_info *info)
{
	static char tag[1 << 16], value[1 << 16];
	const char *p;

	memset(info, 0, sizeof(*info));
	for (p = strstr(dom, "<svg"); p; p = strstr(p + 1, "<svg"))
		if (tag_text(p, tag, sizeof(tag)) && attr(tag, "class", value, sizeof(value)) &&
		    strcmp(value, "chart") == 0)
			info->chart_svgs++;
	for (p = strstr(dom, "<polyline"); p; p = strstr(p + 1, "<polyline")) {
		char series[64] = "";
		int pairs;

		ck_assert_msg(tag_text(p, tag, sizeof(tag)), "unterminated <polyline in the DOM");
		if (!attr(tag, "class", value, sizeof(value)) || strcmp(value, "series") != 0)
			continue;
		info->polylines++;
		attr(tag, "data-series", series, sizeof(series));
		ck_assert_msg(attr(tag, "points", value, sizeof(value)), "polyline %s without points: <%s>", series, tag);
		pairs = point_pairs(value);
		ck_assert_msg(pairs >= 0, "polyline %s: malformed or out-of-chart points \"%s\"", series, value);
		if (pairs >= 2) {
			info->drawn_polylines++;
			info->available_drawn |= strcmp(series, "available") == 0;
			info->allocated_drawn |= strcmp(series, "allocated") == 0;
		}
	}
}

/* The markup of the table with this caption, malloc'd, or NULL. */
static char *table_section(const char *html, const char *caption)
{
	char needle[128];
	const char *start, *end;

	snprintf(needle, sizeof(needle), "<caption>%s</caption>", caption);
	start = strstr(html, needle);
	if (!start)
		return NULL;
	end = strstr(start, "</table>");
	if (!end)
		return NULL;
	return strndup(start, (size_t)(end - start));
}

/* ---- tmux ---- */

struct term {
	char name[64];      /* tmux -L socket name, private to this test */
	char status[400];   /* where the pane's command writes its exit status */
	char err[400];      /* the pane command's stderr */
};

/* tmux -u -L name ARGS..., bounded; returns the wait status, stdout in *out if asked. */
static int tmux(const struct term *t, const char *const *args, char **out)
{
	const char *argv[32];
	char out_path[450], err_path[450];
	size_t n = 0;
	int st;

	argv[n++] = TMUX_PATH;
	argv[n++] = "-u";
	argv[n++] = "-L";
	argv[n++] = t->name;
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	snprintf(out_path, sizeof(out_path), "%s/tmux-%s.out", mw_tmp_root(), t->name);
	snprintf(err_path, sizeof(err_path), "%s/tmux-%s.err", mw_tmp_root(), t->name);
	st = run_bounded(argv, out_path, err_path, NULL, TMUX_TIMEOUT_MS);
	if (out)
		*out = mw_read_file(out_path, NULL);
	return st;
}

/* A private tmux server with one 80x24 session "top" running memwatchd --top
 * --url url. The pane's shell only waits for memwatchd (it ignores nothing:
 * its INT trap is a no-op, which exec resets) and writes its exit status. */
static void term_start(struct term *t, const char *url, const char *tag)
{
	const char *script = "trap : INT; \"$0\" --top --url \"$1\" 2>\"$2\"; echo $? >\"$3\"";
	char *err = NULL;
	int st;

	snprintf(t->name, sizeof(t->name), "memwatch-itest-%d-%s", (int)getpid(), tag);
	snprintf(t->status, sizeof(t->status), "%s/top-%s.status", mw_tmp_root(), tag);
	snprintf(t->err, sizeof(t->err), "%s/top-%s.stderr", mw_tmp_root(), tag);
	unlink(t->status);
	journal_add("tmux", t->name);
	st = tmux(t,
		  (const char *const[]){ "-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", "80", "-y", "24",
					 "/bin/sh", "-c", script, MEMWATCHD_PATH, url, t->err, t->status, NULL },
		  NULL);
	if (st != 0) {
		char path[450];

		snprintf(path, sizeof(path), "%s/tmux-%s.err", mw_tmp_root(), t->name);
		err = mw_read_file(path, NULL);
	}
	ck_assert_msg(st == 0, "tmux new-session failed (status 0x%x): %s", st, err ? err : "");
	free(err);
}

/* The screen, lines joined where tmux wrapped them, trailing blanks dropped. */
static char *term_capture(const struct term *t)
{
	char *out = NULL, *p, *w;
	int st = tmux(t, (const char *const[]){ "capture-pane", "-p", "-J", "-t", "top", NULL }, &out);

	if (st != 0 || !out) {
		free(out);
		return NULL;
	}
	/* Drop the blanks at the end of every line. */
	for (p = w = out; *p; p++) {
		if (*p == '\n')
			while (w > out && w[-1] == ' ')
				w--;
		*w++ = *p;
	}
	*w = '\0';
	return out;
}

/* Captures until every needle is on the screen; the last screen is returned either way. */
static char *term_wait(const struct term *t, const char *const *needles, int timeout_ms, bool *found)
{
	int64_t deadline = mono_ms() + timeout_ms;

	for (;;) {
		char *screen = term_capture(t);
		const char *const *n;
		bool all = screen != NULL;

		for (n = needles; all && *n; n++)
			all = strstr(screen, *n) != NULL;
		if (all || mono_ms() >= deadline) {
			*found = all;
			return screen ? screen : strdup("(no screen: capture-pane failed)");
		}
		free(screen);
		mw_sleep_ms(200);
	}
}

/* Sends a key; the session must end (the command exited) within the bound, with status 0. */
static void term_key_exits(const struct term *t, const char *key)
{
	int64_t deadline;
	char *status, *report_text;
	const char *report;
	int st;

	st = tmux(t, (const char *const[]){ "send-keys", "-t", "top", key, NULL }, NULL);
	ck_assert_msg(st == 0, "tmux send-keys %s failed (0x%x)", key, st);
	deadline = mono_ms() + EXIT_TIMEOUT_MS;
	while (tmux(t, (const char *const[]){ "has-session", "-t", "top", NULL }, NULL) == 0) {
		ck_assert_msg(mono_ms() < deadline, "memwatchd --top still runs %d ms after %s", EXIT_TIMEOUT_MS, key);
		mw_sleep_ms(100);
	}
	status = mw_read_file(t->status, NULL);
	report_text = mw_read_file(t->err, NULL);
	report = report_text ? mw_sanitizer_report(report_text) : NULL;
	ck_assert_msg(status != NULL, "the session ended but the pane's shell wrote no exit status");
	ck_assert_msg(atoi(status) == 0 && status[0] == '0', "memwatchd --top exited %d after %s; stderr: %s",
		      atoi(status), key, report_text ? report_text : "");
	ck_assert_msg(!report, "sanitizer report from memwatchd --top: %.300s", report);
	free(status);
	free(report_text);
	/* The server ends with its last session; make sure. */
	tmux_kill_server(t->name);
}

/* Display columns of one line of UTF-8 (every character one column: the screen has no wide ones). */
static size_t columns(const char *line, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)line[i] & 0xc0) != 0x80)
			n++;
	return n;
}

static void assert_fits(const char *screen)
{
	const char *line = screen;
	int lines = 0;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		ck_assert_msg(columns(line, len) <= SCREEN_COLS, "line %d is %zu columns wide (> %d): \"%.*s\"\nscreen:\n%s",
			      lines + 1, columns(line, len), SCREEN_COLS, (int)len, line, screen);
		lines++;
		if (!nl)
			break;
		line = nl + 1;
	}
	ck_assert_msg(lines <= SCREEN_LINES, "%d lines on a %d-line screen:\n%s", lines, SCREEN_LINES, screen);
}

/* The line starting with prefix, copied (with its continuation lines, which start with two blanks). */
static bool screen_line(const char *screen, const char *prefix, char *buf, size_t len)
{
	const char *p = screen;
	size_t o = 0;

	while (p && *p) {
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			for (;;) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);

				if (o + n + 2 >= len)
					return false;
				memcpy(buf + o, p, n);
				o += n;
				buf[o++] = ' ';
				if (!nl || strncmp(nl + 1, "  ", 2) != 0)
					break;
				p = nl + 1;
			}
			buf[o] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static double parse_bytes(const char *text)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	char unit[16];
	double v, scale = 1;
	size_t i;

	if (sscanf(text, "%lf %15s", &v, unit) != 2)
		return NAN;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++, scale *= 1024)
		if (strcmp(unit, units[i]) == 0)
			return v * scale;
	return NAN;
}

/* ---- memory cgroup for a reclaiming worker ---- */

struct memcg {
	char path[256];
	char procs[300];
};

/* A 64 MiB memory cgroup: v1 (hybrid hosts) or v2. */
static void memcg_create(struct memcg *cg, const char *tag)
{
	char file[350];
	bool v1 = access(MEMCG_V1_ROOT "/cgroup.procs", F_OK) == 0;
	char *controllers = v1 ? NULL : mw_read_file(CGROUP_V2_ROOT "/cgroup.subtree_control", NULL);
	int r;

	ck_assert_msg(v1 || (controllers && strstr(controllers, "memory")),
		      "no memory cgroup: neither " MEMCG_V1_ROOT " (v1) nor the memory controller in " CGROUP_V2_ROOT
		      "/cgroup.subtree_control (v2)");
	free(controllers);
	snprintf(cg->path, sizeof(cg->path), "%s/memwatch-itest-%d-%s", v1 ? MEMCG_V1_ROOT : CGROUP_V2_ROOT,
		 (int)getpid(), tag);
	snprintf(cg->procs, sizeof(cg->procs), "%s/cgroup.procs", cg->path);
	journal_add("cgroup", cg->path);
	ck_assert_msg(mkdir(cg->path, 0755) == 0, "mkdir %s: %s", cg->path, strerror(errno));
	snprintf(file, sizeof(file), "%s/%s", cg->path, v1 ? "memory.limit_in_bytes" : "memory.max");
	r = write_text(file, "67108864");
	ck_assert_msg(r == 0, "cannot write 64 MiB to %s: %s", file, strerror(-r));
}

static void memcg_remove(const struct memcg *cg)
{
	int r = remove_cgroup(cg->path, 10000);

	ck_assert_msg(r == 0, "cannot remove cgroup %s: %s", cg->path, strerror(-r));
}

/* A fresh 1 GiB sparse file on a disk file system (holes of a tmpfs file fill no page cache). */
static void sparse_create(char *path, size_t len, const char *tag)
{
	struct statfs sf;
	const char *dir = statfs(mw_tmp_root(), &sf) == 0 && sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC ?
				  mw_tmp_root() :
				  "/var/tmp";
	int fd;

	snprintf(path, len, "%s/memwatch-itest-%d-%s", dir, (int)getpid(), tag);
	journal_add("file", path);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	ck_assert_msg(ftruncate(fd, (off_t)GiB) == 0, "truncate %s: %s", path, strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* ==== a. the status page in Chromium ==== */

START_TEST(test_status_page_chromium)
{
	static const char *const known[] = { "meminfo", "psi", "kswapd", "reclaim", "alloc", "faults", "memavail", "oom" };
	static const uint32_t series_colors[2] = { 0x1f77b4, 0x2ca02c }; /* available, allocated */
	char names[64][64], png_path[450], *html, *out_path, *dom, *table;
	struct mw_daemon *d;
	struct dom_info di;
	struct png_info pi;
	unsigned char *png;
	size_t n_collectors, png_len, i, k;
	const char *why;
	pid_t worker;

	require_program(CHROMIUM_PATH, "chromium");
	d = start_ui_daemon();
	/* Some activity: page allocations and faults for the charts and tables. */
	worker = spawn_worker("mw-ui-activity", WORK_TOUCH, NULL, NULL);
	html = wait_page(d, 8, (const char *const[]){ "mw-ui-activity (", NULL }, PAGE_TIMEOUT_MS);
	ck_assert_msg(html != NULL, "GET / did not show 8 windows and the activity worker within %d ms", PAGE_TIMEOUT_MS);
	free(html);

	/* The screenshot: a real PNG of the requested size, with the charts drawn in it. */
	snprintf(png_path, sizeof(png_path), "%s/page.png", mw_tmp_root());
	{
		char arg[500];

		snprintf(arg, sizeof(arg), "--screenshot=%s", png_path);
		unlink(png_path);
		out_path = chromium(d->port, arg, "shot");
		free(out_path);
	}
	png = (unsigned char *)mw_read_file(png_path, &png_len);
	ck_assert_msg(png != NULL, "chromium wrote no screenshot at %s", png_path);
	ck_assert_msg(png_len > 20 * 1024, "the screenshot is only %zu bytes: a blank page?", png_len);
	why = png_analyze(png, png_len, series_colors, &pi);
	ck_assert_msg(why == NULL, "%s is not a valid PNG: %s", png_path, why);
	fprintf(stderr, "screenshot: %ux%u, %zu bytes, %zu of image data (%u byte values), %zu colours, top colour %.1f%%, "
		"%zu + %zu pixels in the series colours\n",
		pi.width, pi.height, png_len, pi.idat_bytes, pi.idat_byte_values, pi.colors, pi.top_share * 100, pi.near[0],
		pi.near[1]);
	ck_assert_msg(pi.width == 900 && pi.height == 1600, "screenshot is %ux%u, not 900x1600", pi.width, pi.height);
	ck_assert_msg(pi.idat_bytes > 16 * 1024 && pi.idat_byte_values >= 250,
		      "the screenshot's image data is %zu bytes with %u distinct byte values: too uniform to be the page",
		      pi.idat_bytes, pi.idat_byte_values);
	ck_assert_msg(pi.colors >= 64, "the screenshot has %zu distinct colours: blank or nearly", pi.colors);
	ck_assert_msg(pi.top_share < 0.9, "%.1f%% of the screenshot is one colour: blank or nearly", pi.top_share * 100);
	ck_assert_msg(pi.near[0] >= 100, "only %zu pixels in the colour of the available-memory line (#1f77b4)",
		      pi.near[0]);
	ck_assert_msg(pi.near[1] >= 100, "only %zu pixels in the colour of the allocation-rate line (#2ca02c)",
		      pi.near[1]);
	free(png);

	/* The DOM as the browser built it. */
	out_path = chromium(d->port, "--dump-dom", "dom");
	dom = mw_read_file(out_path, NULL);
	free(out_path);
	ck_assert_msg(dom && strstr(dom, "</html>"), "chromium --dump-dom gave no document");
	analyze_dom(dom, &di);
	ck_assert_msg(di.chart_svgs >= 4, "%d <svg class=\"chart\"> in the DOM, expected at least 4", di.chart_svgs);
	ck_assert_msg(di.drawn_polylines >= 4,
		      "%d of %d <polyline class=\"series\"> have two or more points, expected at least 4",
		      di.drawn_polylines, di.polylines);
	ck_assert_msg(di.available_drawn, "the available-memory series has fewer than two points");
	ck_assert_msg(di.allocated_drawn, "the allocation-rate series has fewer than two points");

	/* Every collector the daemon runs is in the collectors table. */
	n_collectors = collectors_of(d, names, 64);
	for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		for (i = 0; i < n_collectors && strcmp(names[i], known[k]) != 0; i++)
			;
		ck_assert_msg(i < n_collectors, "collector %s not in memwatch_collector_info", known[k]);
	}
	table = table_section(dom, "Collectors");
	ck_assert_msg(table != NULL, "no Collectors table in the DOM");
	for (i = 0; i < n_collectors; i++) {
		char cell[100];

		snprintf(cell, sizeof(cell), "<td>%s</td>", names[i]);
		ck_assert_msg(strstr(table, cell), "collector %s missing from the Collectors table:\n%s", names[i], table);
	}
	free(table);
	free(dom);

	stop_worker(worker);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== b. markup in a process name is text ==== */

START_TEST(test_markup_in_comm)
{
	char label[64], *html, *out_path, *dom, *table;
	struct mw_daemon *d;
	pid_t worker;

	require_program(CHROMIUM_PATH, "chromium");
	d = start_ui_daemon();
	/* A process that faults a lot, so that it tops the minor-faults table. */
	worker = spawn_worker(MARKUP_NAME, WORK_TOUCH, NULL, NULL);
	snprintf(label, sizeof(label), "<td>%s (%d)</td>", MARKUP_ESCAPED, (int)worker);
	html = wait_page(d, 2, (const char *const[]){ label, NULL }, PAGE_TIMEOUT_MS);
	if (!html) {
		html = get_page(d);
		ck_assert_msg(!strstr(html, MARKUP_NAME), "GET / has the process name as raw markup (page above)");
		ck_abort_msg("GET / did not list the worker as %s within %d ms (page above)", label, PAGE_TIMEOUT_MS);
	}
	table = table_section(html, "Minor faults");
	ck_assert_msg(table && strstr(table, label), "the worker is not in the Minor faults table");
	free(table);
	ck_assert_msg(!strstr(html, "<script>alert(1"), "GET / has the process name as raw markup");
	ck_assert_msg(!strcasestr_n(html, "<script"), "GET / has a <script> element");
	free(html);

	/* In the browser: text in a cell, no script element. */
	out_path = chromium(d->port, "--dump-dom", "markup");
	dom = mw_read_file(out_path, NULL);
	free(out_path);
	ck_assert_msg(dom && strstr(dom, "</html>"), "chromium --dump-dom gave no document");
	ck_assert_msg(strstr(dom, MARKUP_ESCAPED), "the rendered DOM does not show the process name as text");
	ck_assert_msg(!strcasestr_n(dom, "<script"), "the rendered DOM has a <script> element");
	free(dom);

	stop_worker(worker);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== c. memwatchd --top in tmux ==== */

static void top_live_run(struct mw_daemon *d, const char *key, const char *tag)
{
	char url[64], line[1024], *screen;
	struct term t;
	bool found;
	double avail, total = (double)mw_proc_meminfo_kb("MemTotal") * 1024;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", d->port);
	term_start(&t, url, tag);
	screen = term_wait(&t, (const char *const[]){ "Available ", "Collectors ", NULL }, SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatchd --top did not show the daemon within %d ms; screen:\n%s", SCREEN_TIMEOUT_MS,
		      screen);
	ck_assert_msg(strncmp(screen, "memwatchd top  ", 15) == 0 && strstr(screen, url) && strstr(screen, "q: quit"),
		      "no title line with the URL:\n%s", screen);

	ck_assert_msg(screen_line(screen, "Available ", line, sizeof(line)), "no Available line:\n%s", screen);
	avail = parse_bytes(line + strlen("Available "));
	ck_assert_msg(avail > 0 && avail <= total, "Available line \"%s\" has no byte value in (0, MemTotal %.0f]", line,
		      total);

	ck_assert_msg(screen_line(screen, "Collectors ", line, sizeof(line)), "no Collectors line:\n%s", screen);
	ck_assert_msg(strstr(line, "meminfo:") && strstr(line, "reclaim:"),
		      "the Collectors line does not name meminfo and reclaim: \"%s\"", line);
	assert_fits(screen);
	free(screen);

	term_key_exits(&t, key);
}

START_TEST(test_top_live)
{
	struct mw_daemon *d;

	require_program(TMUX_PATH, "tmux");
	d = start_ui_daemon();
	free(wait_page(d, 2, NULL, PAGE_TIMEOUT_MS));
	top_live_run(d, "q", "q");
	top_live_run(d, "C-c", "ctrlc");
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_top_unreachable)
{
	char url[64], needle[64], *screen;
	struct term t;
	bool found;
	int port;

	require_program(TMUX_PATH, "tmux");
	port = mw_free_port();
	ck_assert_msg(port > 0, "no free port");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(needle, sizeof(needle), "(127.0.0.1:%d)", port);
	term_start(&t, url, "unreachable");
	screen = term_wait(&t, (const char *const[]){ "Cannot reach the daemon", needle, NULL }, SCREEN_TIMEOUT_MS,
			   &found);
	ck_assert_msg(found, "memwatchd --top against %s did not say it cannot reach the daemon; screen:\n%s", url,
		      screen);
	ck_assert_msg(strstr(screen, "Connection refused"), "no reason given:\n%s", screen);
	assert_fits(screen);
	free(screen);
	term_key_exits(&t, "q");
}
END_TEST

/* A process named with a terminal escape sequence, stalled in memcg reclaim,
 * so that --top lists it: the screen shows the name, the terminal obeys nothing. */
START_TEST(test_top_escape_in_comm)
{
	char url[64], sparse[512], *screen;
	struct mw_daemon *d;
	struct memcg cg;
	struct term t;
	pid_t worker;
	bool found;

	require_program(TMUX_PATH, "tmux");
	memcg_create(&cg, "top");
	sparse_create(sparse, sizeof(sparse), "top");
	d = start_ui_daemon();
	worker = spawn_worker(ESCAPE_NAME, WORK_READ, cg.procs, sparse);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", d->port);
	term_start(&t, url, "escape");
	screen = term_wait(&t, (const char *const[]){ ESCAPE_SHOWN, NULL }, 3 * SCREEN_TIMEOUT_MS / 2, &found);
	ck_assert_msg(found, "memwatchd --top did not list the worker as %s within %d ms; screen:\n%s", ESCAPE_SHOWN,
		      3 * SCREEN_TIMEOUT_MS / 2, screen);
	/* Had the terminal obeyed ESC [ 2 J, everything drawn before the name would be gone. */
	ck_assert_msg(strncmp(screen, "memwatchd top  ", 15) == 0 && strstr(screen, "Available "),
		      "the screen lost what was drawn before the process name:\n%s", screen);
	assert_fits(screen);
	free(screen);
	term_key_exits(&t, "q");

	stop_worker(worker);
	drop_file(sparse);
	memcg_remove(&cg);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== d. command line errors ==== */

static void assert_usage_error(const char *const *args, const char *want)
{
	char *out = NULL, *err = NULL;
	int st = mw_run(args, &out, &err);

	ck_assert_msg(st != -1, "memwatchd %s %s did not exit (killed)", args[0], args[1] ? args[1] : "");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "memwatchd %s %s %s: status 0x%x, expected exit 2; stderr: %s",
		      args[0], args[1] ? args[1] : "", args[1] && args[2] ? args[2] : "", st, err ? err : "");
	ck_assert_msg(err && strstr(err, want), "stderr \"%s\" does not say \"%s\"", err ? err : "", want);
	ck_assert_msg(!mw_sanitizer_report(err), "sanitizer report: %.300s", mw_sanitizer_report(err));
	free(out);
	free(err);
}

START_TEST(test_top_cli_errors)
{
	assert_usage_error((const char *const[]){ "--top", "--url", "nonsense url with spaces", NULL },
			   "--url: 'nonsense url with spaces' is not http://HOST:PORT");
	assert_usage_error((const char *const[]){ "--top", "--url", "http://127.0.0.1:99999", NULL },
			   "is not http://HOST:PORT");
	assert_usage_error((const char *const[]){ "--top", "--url", "http://127.0.0.1:port", NULL },
			   "is not http://HOST:PORT");
	assert_usage_error((const char *const[]){ "--top", "--url", "ftp://127.0.0.1:21", NULL },
			   "is not http://HOST:PORT");
	assert_usage_error((const char *const[]){ "--top", "--url", "", NULL }, "is not http://HOST:PORT");
	assert_usage_error((const char *const[]){ "--url", "http://127.0.0.1:9577", NULL }, "--url goes with --top");
	assert_usage_error((const char *const[]){ "--top", "--url", NULL }, "needs a value");
}
END_TEST

static TCase *tcase(const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	/* One test per TCase: the runner replays the journal after each. */
	tcase_add_unchecked_fixture(tc, NULL, replay_after_test);
	tcase_add_checked_fixture(tc, NULL, teardown_daemons);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	tcase_add_test(tc, test);
	return tc;
}

static Suite *ui_suite(void)
{
	Suite *s = suite_create("ui");

	suite_add_tcase(s, tcase("status_page", test_status_page_chromium));
	suite_add_tcase(s, tcase("markup", test_markup_in_comm));
	suite_add_tcase(s, tcase("top_live", test_top_live));
	suite_add_tcase(s, tcase("top_unreachable", test_top_unreachable));
	suite_add_tcase(s, tcase("top_escape", test_top_escape_in_comm));
	suite_add_tcase(s, tcase("cli", test_top_cli_errors));
	return s;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	char tmux_dir[300];
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd UI tests need root (BPF, cgroups): skipping\n");
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
	snprintf(journal_path, sizeof(journal_path), "%s/journal", mw_tmp_root());
	/* The tmux servers' sockets live in our temp tree; never in someone's tmux. */
	snprintf(tmux_dir, sizeof(tmux_dir), "%s/tmux", mw_tmp_root());
	if (mkdir(tmux_dir, 0700) < 0) {
		fprintf(stderr, "mkdir %s: %m\n", tmux_dir);
		return 99;
	}
	setenv("TMUX_TMPDIR", tmux_dir, 1);
	unsetenv("TMUX");
	unsetenv("TMUX_PANE");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	sr = srunner_create(ui_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	journal_replay();
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs, screenshots and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
