// SPDX-License-Identifier: GPL-2.0
/* The processes the collector tests start: workloads under perf, perf
 * itself, children driven over a pair of pipes. See collectors.h. */
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

/* ---- processes we start ---- */

/* In a forked child: die with the test, and do not run the runner's signal handlers. */
void child_init(void)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(126);
}

/* Bounded waitpid; kills the child by its PID when the bound is hit. */
int wait_child(pid_t pid, int timeout_ms, const char *what)
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

struct workload workload_spawn(const char *const *argv, const char *log)
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
int perf_around(const char *const *events, struct workload *w, const char *out, int timeout_ms,
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
pid_t perf_start(const char *const *events, const char *out)
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

void perf_stop(pid_t pid)
{
	int st;

	ck_assert(kill(pid, SIGINT) == 0);
	st = wait_child(pid, 10000, "perf stat");
	ck_assert_msg(WIFEXITED(st) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT), "perf stat ended with 0x%x", st);
}

/* The counts of perf stat -x, output, one per event in the order given. */
void perf_counts(const char *out, unsigned long long *counts, size_t n)
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
void read_exact(int fd, void *buf, size_t len, int timeout_ms, const char *what)
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

void write_byte(int fd, char c)
{
	ck_assert_msg(write(fd, &c, 1) == 1, "cannot write to the child's pipe: %s", strerror(errno));
}

/* Touches every 4 KiB page of [p, p + len). */
void touch(volatile char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
}

/* Joins memory cgroup cg (unless NULL), waits for a byte on cmd, touches len
 * bytes, reports on rep, then idles until cmd closes. */

/* A child's start: waits for a byte on cmd, then touches len fresh bytes. */
void touch_on_go(int cmd, size_t len)
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
pid_t spawn_child(void (*fn)(const void *arg, int cmd, int rep), const void *arg, int *cmd_fd, int *rep_fd)
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
pid_t spawn_toucher(const char *cg, size_t len, int *cmd_fd, int *rep_fd)
{
	const struct toucher_args args = { cg, len };

	return spawn_child(toucher_child, &args, cmd_fd, rep_fd);
}
