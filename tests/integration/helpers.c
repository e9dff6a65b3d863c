// SPDX-License-Identifier: GPL-2.0
/* Running the daemon for the integration tests: temp files, the processes
 * (spawn, stop, logs, sd_notify) and promtool. HTTP is in helpers_http.c,
 * what they read from the host in helpers_host.c. */
#include <arpa/inet.h>
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define MW_MAX_DAEMONS 32

static char tmp_root[128];
static struct mw_daemon *registry[MW_MAX_DAEMONS];
static size_t n_registry;

void mw_sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Monotonic milliseconds: only ever used to bound waits, never asserted on. */
int64_t mw_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mw_init_tmp_root(void)
{
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/memwatchd-itest.XXXXXX");
	if (!mkdtemp(tmp_root)) {
		tmp_root[0] = '\0';
		return -errno;
	}
	return 0;
}

const char *mw_tmp_root(void)
{
	return tmp_root;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void mw_remove_tmp_root(void)
{
	if (tmp_root[0])
		nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_dir(char *buf, size_t len, const char *prefix)
{
	if (!tmp_root[0] && mw_init_tmp_root() < 0)
		return -errno;
	snprintf(buf, len, "%s/%s.XXXXXX", tmp_root, prefix);
	if (!mkdtemp(buf))
		return -errno;
	return 0;
}

int mw_free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd, port = -1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

int mw_write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int mw_write_file(const char *path, const char *text)
{
	char tmp[512];
	size_t len = strlen(text);
	FILE *f;

	/* Write then rename, so the daemon never reads half a file. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	if (fclose(f) != 0)
		return -errno;
	if (rename(tmp, path) < 0)
		return -errno;
	return 0;
}

char *mw_write_temp_file(const char *name, const char *text)
{
	char dir[256], *path;

	if (make_dir(dir, sizeof(dir), "conf") < 0)
		return NULL;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	if (mw_write_file(path, text) < 0) {
		free(path);
		return NULL;
	}
	return path;
}

char *mw_read_file(const char *path, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 2048) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* ---- daemon processes ---- */

static void registry_add(struct mw_daemon *d)
{
	if (n_registry < MW_MAX_DAEMONS)
		registry[n_registry++] = d;
}

static void daemon_free(struct mw_daemon *d)
{
	size_t i;

	if (!d)
		return;
	if (d->notify_fd >= 0)
		close(d->notify_fd);
	for (i = 0; i < d->n_notify_msgs; i++)
		free(d->notify_msgs[i]);
	free(d);
}

struct mw_daemon *mw_spawn(const char *const *args, bool notify)
{
	const char *argv[64];
	struct mw_daemon *d;
	int in_fd = -1, out_fd = -1, err_fd = -1;
	pid_t parent = getpid(), pid;
	size_t n = 0;

	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->notify_fd = -1;
	if (make_dir(d->dir, sizeof(d->dir), "daemon") < 0)
		goto fail;
	snprintf(d->log_path, sizeof(d->log_path), "%s/stderr.log", d->dir);
	snprintf(d->out_path, sizeof(d->out_path), "%s/stdout.log", d->dir);

	if (notify) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(d->notify_path, sizeof(d->notify_path), "%s/notify", d->dir);
		if (strlen(d->notify_path) >= sizeof(sun.sun_path)) {
			fprintf(stderr, "notify socket path too long: %s\n", d->notify_path);
			goto fail;
		}
		memcpy(sun.sun_path, d->notify_path, strlen(d->notify_path) + 1);
		d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (d->notify_fd < 0 || bind(d->notify_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			fprintf(stderr, "cannot bind notify socket %s: %m\n", d->notify_path);
			goto fail;
		}
	}

	argv[n++] = MEMWATCHD_PATH;
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;

	in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	out_fd = open(d->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	err_fd = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (in_fd < 0 || out_fd < 0 || err_fd < 0) {
		fprintf(stderr, "cannot open the daemon's stdio files in %s: %m\n", d->dir);
		goto fail;
	}

	mw_note_zones_at_spawn();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fork: %m\n");
		goto fail;
	}
	if (pid == 0) {
		sigset_t none;

		/* If the test dies (a failed assertion in check's fork mode
		 * exits at once), the daemon must not outlive it. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(127);
		if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
		    dup2(err_fd, STDERR_FILENO) < 0)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		unsetenv("NOTIFY_SOCKET");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDNAMES");
		unsetenv("WATCHDOG_USEC");
		unsetenv("WATCHDOG_PID");
		if (notify)
			setenv("NOTIFY_SOCKET", d->notify_path, 1);
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	close(in_fd);
	close(out_fd);
	close(err_fd);
	d->pid = pid;
	registry_add(d);
	return d;
fail:
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	daemon_free(d);
	return NULL;
}

bool mw_running(struct mw_daemon *d)
{
	int st;
	pid_t r;

	if (!d || d->pid <= 0 || d->exited)
		return false;
	do
		r = waitpid(d->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == d->pid) {
		d->exited = true;
		d->wait_status = st;
		return false;
	}
	return r == 0;
}

int mw_wait_exit(struct mw_daemon *d, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	while (mw_running(d)) {
		if (mw_mono_ms() >= deadline)
			return -ETIMEDOUT;
		mw_sleep_ms(20);
	}
	return d->exited ? 0 : -ECHILD;
}

int mw_signal(struct mw_daemon *d, int sig)
{
	/* Only while not reaped: until then the PID is still ours. */
	if (!d || d->pid <= 0 || d->exited)
		return -ESRCH;
	if (kill(d->pid, sig) < 0)
		return -errno;
	return 0;
}

int mw_stop(struct mw_daemon *d)
{
	if (!d || d->pid <= 0)
		return -1;
	if (d->exited)
		return d->wait_status;
	if (mw_running(d)) {
		mw_signal(d, SIGTERM);
		if (mw_wait_exit(d, MW_STOP_TIMEOUT_MS) < 0 && !d->exited) {
			int st;

			fprintf(stderr, "memwatchd (pid %d) ignored SIGTERM for %d ms, killing it\n", (int)d->pid,
				MW_STOP_TIMEOUT_MS);
			mw_signal(d, SIGKILL);
			while (waitpid(d->pid, &st, 0) < 0 && errno == EINTR)
				;
			d->exited = true;
			d->wait_status = st;
			d->killed = true;
		}
	}
	return d->wait_status;
}

int mw_cleanup_all(void)
{
	int killed = 0;
	size_t i;

	for (i = 0; i < n_registry; i++) {
		mw_stop(registry[i]);
		if (registry[i]->killed)
			killed++;
		daemon_free(registry[i]);
		registry[i] = NULL;
	}
	n_registry = 0;
	return killed;
}

int mw_run(const char *const *args, char **out, char **err)
{
	struct mw_daemon *d = mw_spawn(args, false);
	int st;

	if (out)
		*out = NULL;
	if (err)
		*err = NULL;
	if (!d)
		return -1;
	if (mw_wait_exit(d, 30000) < 0) {
		fprintf(stderr, "memwatchd did not exit within 30 s\n");
		mw_stop(d);
		return -1;
	}
	st = d->wait_status;
	if (out)
		*out = mw_read_file(d->out_path, NULL);
	if (err)
		*err = mw_read_file(d->log_path, NULL);
	return st;
}

char *mw_log(const struct mw_daemon *d)
{
	char *s = mw_read_file(d->log_path, NULL);

	return s ? s : strdup("");
}

void mw_dump_log(const struct mw_daemon *d, const char *why)
{
	char *log = mw_log(d);

	fprintf(stderr, "---- memwatchd (pid %d) log, %s ----\n%s---- end of log ----\n", (int)d->pid, why,
		log ? log : "");
	free(log);
}

bool mw_log_wait(const struct mw_daemon *d, int timeout_ms, const char *const *needles)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		char *log = mw_log(d), *line, *save = NULL;
		bool found = false;

		for (line = strtok_r(log, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
			const char *const *n;

			found = true;
			for (n = needles; *n; n++)
				if (!strstr(line, *n)) {
					found = false;
					break;
				}
		}
		free(log);
		if (found)
			return true;
		if (mw_mono_ms() >= deadline)
			return false;
		mw_sleep_ms(50);
	}
}

const char *mw_sanitizer_report(const char *log)
{
	static const char *const markers[] = {
		"runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "ThreadSanitizer",
		"SUMMARY: UndefinedBehaviorSanitizer",
	};
	size_t i;

	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		const char *p = strstr(log, markers[i]);

		if (p)
			return p;
	}
	return NULL;
}

int mw_wait_ready(struct mw_daemon *d, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		struct mw_http_response resp;
		int status = 0;

		if (mw_http_get(d->port, "/metrics", &resp) == 0) {
			status = resp.status;
			mw_http_response_free(&resp);
		}
		if (status == 200)
			return 0;
		if (!mw_running(d))
			return -ECHILD;
		if (mw_mono_ms() >= deadline)
			return -ETIMEDOUT;
		mw_sleep_ms(50);
	}
}

struct mw_daemon *mw_start(const char *config, const char *const *extra, bool notify)
{
	int attempt;

	for (attempt = 0; attempt < 5; attempt++) {
		const char *args[48];
		char listen[64];
		struct mw_daemon *d;
		size_t n = 0;
		int port = mw_free_port(), r;
		bool port_taken;
		char *log;

		if (port <= 0)
			return NULL;
		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
		if (config) {
			args[n++] = "--config";
			args[n++] = config;
		}
		args[n++] = "--listen";
		args[n++] = listen;
		for (; extra && *extra && n < 47; extra++)
			args[n++] = *extra;
		args[n] = NULL;

		d = mw_spawn(args, notify);
		if (!d)
			return NULL;
		d->port = port;
		r = mw_wait_ready(d, mw_start_timeout_ms());
		if (r == 0)
			return d;
		/* Someone else may have taken the port between our probe and the daemon's bind. */
		mw_stop(d);
		log = mw_log(d);
		port_taken = strstr(log, "Address already in use") != NULL;
		free(log);
		if (!port_taken) {
			mw_dump_log(d, r == -ETIMEDOUT ? "/metrics never answered 200" : "exited before serving");
			return NULL;
		}
	}
	return NULL;
}

/* ---- sd_notify ---- */

static void notify_drain(struct mw_daemon *d)
{
	char buf[4096];
	ssize_t n;

	if (d->notify_fd < 0)
		return;
	for (;;) {
		n = recv(d->notify_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		buf[n] = '\0';
		if (d->n_notify_msgs < MW_MAX_NOTIFY_MSGS)
			d->notify_msgs[d->n_notify_msgs++] = strdup(buf);
	}
}

static bool msg_has_line(const char *msg, const char *key)
{
	size_t klen = strlen(key);
	const char *p = msg;

	if (!msg)
		return false;
	while (*p) {
		if (strncmp(p, key, klen) == 0)
			return true;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return false;
}

const char *mw_notify_wait(struct mw_daemon *d, const char *key, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	if (d->notify_fd < 0)
		return NULL;
	for (;;) {
		struct pollfd pfd = { .fd = d->notify_fd, .events = POLLIN };
		int64_t left;

		notify_drain(d);
		while (d->notify_cursor < d->n_notify_msgs) {
			const char *m = d->notify_msgs[d->notify_cursor++];

			if (msg_has_line(m, key))
				return m;
		}
		left = deadline - mw_mono_ms();
		if (left <= 0)
			return NULL;
		poll(&pfd, 1, left > 100 ? 100 : (int)left);
	}
}

bool mw_notify_field(const char *msg, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *p = msg;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t vlen = strcspn(v, "\n");

			if (vlen >= len)
				vlen = len - 1;
			memcpy(buf, v, vlen);
			buf[vlen] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}


/* ---- promtool ---- */

int mw_promtool_check(const char *text, size_t len, char **output)
{
	char dir[256], in_path[300], out_path[300];
	int in_fd, out_fd, st = -1;
	int64_t deadline;
	pid_t pid;

	if (output)
		*output = NULL;
	if (make_dir(dir, sizeof(dir), "promtool") < 0)
		return -1;
	snprintf(in_path, sizeof(in_path), "%s/metrics.txt", dir);
	snprintf(out_path, sizeof(out_path), "%s/output.txt", dir);
	in_fd = open(in_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in_fd < 0)
		return -1;
	if (write(in_fd, text, len) != (ssize_t)len || lseek(in_fd, 0, SEEK_SET) != 0) {
		close(in_fd);
		return -1;
	}
	out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		close(in_fd);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
		    dup2(out_fd, STDERR_FILENO) < 0)
			_exit(127);
		execl(PROMTOOL_PATH, "promtool", "check", "metrics", (char *)NULL);
		dprintf(STDERR_FILENO, "exec %s: %m\n", PROMTOOL_PATH);
		_exit(127);
	}
	close(in_fd);
	close(out_fd);
	if (pid < 0)
		return -1;
	deadline = mw_mono_ms() + 30000;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		mw_sleep_ms(20);
	}
	if (output)
		*output = mw_read_file(out_path, NULL);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}


void mw_assert_clean_stop(struct mw_daemon *d)
{
	int st = mw_stop(d);
	char *log = mw_log(d);
	const char *report = mw_sanitizer_report(log);

	if (d->killed || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || report)
		mw_dump_log(d, "after SIGTERM");
	ck_assert_msg(!d->killed, "memwatchd did not stop on SIGTERM and had to be killed");
	ck_assert_msg(WIFEXITED(st), "memwatchd died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	ck_assert_msg(WEXITSTATUS(st) == 0, "memwatchd exited %d after SIGTERM", WEXITSTATUS(st));
	ck_assert_msg(!report, "sanitizer report in the daemon's log: %.300s", report);
	free(log);
}

static char *kept_failures;

void mw_keep_failures(SRunner *sr)
{
	int n = srunner_ntests_failed(sr);
	TestResult **results = srunner_failures(sr);
	size_t size = 0;
	FILE *f;

	if (!results)
		return;
	free(kept_failures);
	kept_failures = NULL;
	f = open_memstream(&kept_failures, &size);
	if (f) {
		for (int i = 0; i < n; i++)
			fprintf(f, "%s:%d: %s: %s\n", tr_lfile(results[i]), tr_lno(results[i]),
				tr_tcname(results[i]), tr_msg(results[i]));
		fclose(f);
	}
	free(results);
}

/* The check summary comes before these logs, which can push it out of a
 * truncated CI log: say again, last, which checks failed. */
void mw_dump_daemon_logs(const char *dir, const char *extra_glob)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "for f in '%s'/daemon.*/stderr.log %s%s%s%s; do [ -s \"$f\" ] && { echo \"==== $f\"; cat \"$f\"; }; done 1>&2",
		 dir, extra_glob ? "'" : "", extra_glob ? dir : "", extra_glob ? "'/" : "", extra_glob ? extra_glob : "");
	(void)!system(cmd);
	if (kept_failures && *kept_failures)
		fprintf(stderr, "==== failed checks, again\n%s", kept_failures);
}

/* ---- bounds under emulation ---- */

int mw_hang_bound_ms(int ms)
{
	const char *s = getenv("MW_TEST_SLOWDOWN");
	long k = s ? strtol(s, NULL, 10) : 1;

	return ms * (int)(k >= 1 && k <= 100 ? k : 1);
}

int mw_start_timeout_ms(void)
{
	return mw_hang_bound_ms(MW_START_TIMEOUT_MS);
}
